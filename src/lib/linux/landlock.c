/* Landlock: the second, independent layer of filesystem, network and IPC
 * confinement.  The mount namespace decides what exists inside the
 * sandbox; Landlock decides what may be done with it, so a mistake in one
 * (a writable bind, a leaked directory fd, an executable tmpfs) is still
 * caught by the other.
 *
 * Rights are derived from the policy's mounts and exec list, with paths as
 * the payload sees them after pivot_root:
 *   ro bind          read_file, read_dir            (+execute, see below)
 *   rw bind, tmpfs   read + write + create/remove + truncate + refer
 *   proc             read_file, read_dir
 *   dev              read; write+truncate on null/zero/full/tty/ptmx/pts,
 *                    ioctl_dev only on tty/ptmx/pts; shm like a tmpfs
 *   dir              read_dir
 *   exec entries     execute, read_file (+read_dir for directories)
 * With an exec list, execute is granted on nothing else; without one it
 * follows the mounts' exec flag (never on noexec mounts). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "securer/sandbox.h"
#include "linux/landlock-internal.h"
#include "linux/landlock-uapi.h"

#define LL_READ (SECURER_LL_ACCESS_FS_READ_FILE | SECURER_LL_ACCESS_FS_READ_DIR)
#define LL_WRITE                                                                          \
  (SECURER_LL_ACCESS_FS_WRITE_FILE | SECURER_LL_ACCESS_FS_REMOVE_DIR                      \
   | SECURER_LL_ACCESS_FS_REMOVE_FILE | SECURER_LL_ACCESS_FS_MAKE_DIR                     \
   | SECURER_LL_ACCESS_FS_MAKE_REG | SECURER_LL_ACCESS_FS_MAKE_SOCK                       \
   | SECURER_LL_ACCESS_FS_MAKE_FIFO | SECURER_LL_ACCESS_FS_MAKE_SYM                       \
   | SECURER_LL_ACCESS_FS_REFER | SECURER_LL_ACCESS_FS_TRUNCATE)
/* The only rights the kernel accepts in a rule on a non-directory. */
#define LL_FILE_RIGHTS                                                                    \
  (SECURER_LL_ACCESS_FS_EXECUTE | SECURER_LL_ACCESS_FS_WRITE_FILE                         \
   | SECURER_LL_ACCESS_FS_READ_FILE | SECURER_LL_ACCESS_FS_TRUNCATE                       \
   | SECURER_LL_ACCESS_FS_IOCTL_DEV)

/* ---- names ----------------------------------------------------------- */

static const char *const fs_names[] = {
  "execute",   "write_file", "read_file", "read_dir",  "remove_dir", "remove_file",
  "make_char", "make_dir",   "make_reg",  "make_sock", "make_fifo",  "make_block",
  "make_sym",  "refer",      "truncate",  "ioctl_dev",
};

/* The ABI that introduced each fs right (index = bit). */
static int
fs_right_abi (unsigned bit)
{
  switch (bit)
    {
    case 13: return 2;
    case 14: return 3;
    case 15: return 5;
    default: return 1;
    }
}

static const char *const net_names[] = { "bind_tcp", "connect_tcp" };
static const char *const scope_names[] = { "abstract_unix_socket", "signal" };

/* "a,b,c" into s (cap bytes; truncated when it does not fit): the
 * sandbox's child calls this and allocates nothing. */
static char *
bit_names (char *s, size_t cap, uint64_t bits, const char *const *names, size_t n)
{
  size_t len = 0;
  s[0] = '\0';
  for (size_t i = 0; i < n; i++)
    if (bits & (1ULL << i))
      {
        int k = snprintf (s + len, cap - len, "%s%s", len ? "," : "", names[i]);
        if (k < 0 || (size_t) k >= cap - len)
          break;
        len += (size_t) k;
      }
  return s;
}

#define NAMES_MAX 512

char *
securer_landlock_fs_names (uint64_t bits)
{
  char buf[NAMES_MAX];
  return strdup (bit_names (buf, sizeof buf, bits, fs_names, sizeof fs_names / sizeof fs_names[0]));
}

static void
upper_into (char *dst, size_t cap, const char *src)
{
  size_t i = 0;
  for (; src[i] != '\0' && i + 1 < cap; i++)
    dst[i] = (src[i] >= 'a' && src[i] <= 'z') ? (char) (src[i] - 'a' + 'A') : src[i];
  dst[i] = '\0';
}

/* ---- the kernel ------------------------------------------------------ */

int
securer_landlock_abi (void)
{
  long v = syscall (__NR_landlock_create_ruleset, NULL, (size_t) 0,
                    (unsigned) SECURER_LL_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : (int) v;
}

static uint64_t
fs_known (int abi)
{
  if (abi >= 5)
    return SECURER_LL_FS_ABI5;
  if (abi >= 3)
    return SECURER_LL_FS_ABI3;
  if (abi >= 2)
    return SECURER_LL_FS_ABI2;
  if (abi >= 1)
    return SECURER_LL_FS_ABI1;
  return 0;
}

static uint64_t
net_known (int abi)
{
  return abi >= 4 ? SECURER_LL_NET_ABI4 : 0;
}

static uint64_t
scope_known (int abi)
{
  return abi >= 6 ? SECURER_LL_SCOPE_ABI6 : 0;
}

/* ---- the plan -------------------------------------------------------- */

static int
plan_add_path (struct securer_landlock_plan *plan, const char *path, uint64_t access,
               securer_err_t *err)
{
  for (size_t i = 0; i < plan->n_paths; i++)
    if (strcmp (plan->paths[i].path, path) == 0)
      {
        plan->paths[i].access |= access;
        return 0;
      }
  struct securer_landlock_path_rule *n
    = realloc (plan->paths, (plan->n_paths + 1) * sizeof *plan->paths);
  if (n == NULL)
    return securer_error_set (err, ENOMEM, "rule for %s", path);
  plan->paths = n;
  char *dup = strdup (path);
  if (dup == NULL)
    return securer_error_set (err, ENOMEM, "rule for %s", path);
  plan->paths[plan->n_paths].path = dup;
  plan->paths[plan->n_paths].access = access;
  plan->n_paths++;
  return 0;
}

static int
plan_add_port (struct securer_landlock_plan *plan, uint16_t port, uint64_t access,
               securer_err_t *err)
{
  for (size_t i = 0; i < plan->n_ports; i++)
    if (plan->ports[i].port == port)
      {
        plan->ports[i].access |= access;
        return 0;
      }
  struct securer_landlock_port_rule *n
    = realloc (plan->ports, (plan->n_ports + 1) * sizeof *plan->ports);
  if (n == NULL)
    return securer_error_set (err, ENOMEM, "rule for port %u", port);
  plan->ports = n;
  plan->ports[plan->n_ports].port = port;
  plan->ports[plan->n_ports].access = access;
  plan->n_ports++;
  return 0;
}

static int
plan_add_child (struct securer_landlock_plan *plan, const char *dir, const char *name,
                uint64_t access, securer_err_t *err)
{
  char *path = NULL;
  bool root = strcmp (dir, "/") == 0;
  if (asprintf (&path, "%s/%s", root ? "" : dir, name) < 0)
    return securer_error_set (err, ENOMEM, "rule under %s", dir);
  int r = plan_add_path (plan, path, access, err);
  free (path);
  return r;
}

/* What /dev holds is fixed by the rootfs step (null zero full random
 * urandom tty, pts, shm, fd links); a node that is absent is skipped when
 * the plan is applied. */
static int
plan_add_dev (struct securer_landlock_plan *plan, const char *dev, securer_err_t *err)
{
  static const char *const writable[] = { "null", "zero", "full" };
  static const char *const ttys[] = { "tty", "ptmx", "pts" };
  const uint64_t rw_file = SECURER_LL_ACCESS_FS_WRITE_FILE | SECURER_LL_ACCESS_FS_TRUNCATE;

  if (plan_add_path (plan, dev, LL_READ, err) < 0)
    return -1;
  for (size_t i = 0; i < sizeof writable / sizeof writable[0]; i++)
    if (plan_add_child (plan, dev, writable[i], rw_file, err) < 0)
      return -1;
  for (size_t i = 0; i < sizeof ttys / sizeof ttys[0]; i++)
    if (plan_add_child (plan, dev, ttys[i], rw_file | SECURER_LL_ACCESS_FS_IOCTL_DEV, err) < 0)
      return -1;
  return plan_add_child (plan, dev, "shm", LL_READ | LL_WRITE, err);
}

int
securer_landlock_plan_build (const struct securer_policy *p, struct securer_landlock_plan *plan,
                             securer_err_t *err)
{
  memset (plan, 0, sizeof *plan);

  /* Handle every right this code knows: a right that is not handled is
   * allowed everywhere, whatever the rules say. */
  plan->want_fs = SECURER_LL_FS_ABI5;
  /* REFER is the exception among the needed ones: an ABI 1 kernel that
   * cannot handle it refuses every cross-directory rename or link, which
   * is stricter, not weaker. */
  plan->need_fs = SECURER_LL_FS_ABI3 & ~SECURER_LL_ACCESS_FS_REFER;

  /* Listing the root is allowed (and, Landlock rights being inherited,
   * listing any directory): the root is a tmpfs holding only the policy's
   * mount points, so a listing reveals nothing the policy did not put
   * there, and ordinary programs (ls /, find, R's list.files) expect it. */
  if (plan_add_path (plan, "/", SECURER_LL_ACCESS_FS_READ_DIR, err) < 0)
    {
      securer_landlock_plan_clear (plan);
      return -1;
    }

  bool has_dev = false;
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct securer_mount *m = &p->mounts[i];
      uint64_t exec = (!p->exec_restricted && !m->noexec) ? SECURER_LL_ACCESS_FS_EXECUTE : 0;
      int r = 0;
      if (m->dest == NULL || m->dest[0] != '/')
        {
          securer_landlock_plan_clear (plan);
          return securer_error_set (err, EINVAL, "mount #%zu: destination is not absolute",
                                    i + 1);
        }
      switch (m->type)
        {
        case SECURER_MOUNT_RO:
          r = plan_add_path (plan, m->dest, LL_READ | exec, err);
          break;
        case SECURER_MOUNT_RW:
        case SECURER_MOUNT_TMPFS:
          r = plan_add_path (plan, m->dest, LL_READ | LL_WRITE | exec, err);
          break;
        case SECURER_MOUNT_PROC:
          r = plan_add_path (plan, m->dest, LL_READ, err);
          break;
        case SECURER_MOUNT_DEV:
          has_dev = true;
          r = plan_add_dev (plan, m->dest, err);
          break;
        case SECURER_MOUNT_DIR:
          r = plan_add_path (plan, m->dest, SECURER_LL_ACCESS_FS_READ_DIR, err);
          break;
        case SECURER_MOUNT_SYMLINK:
          /* Landlock checks the object a path resolves to; the target
           * carries its own rule. */
          break;
        }
      if (r < 0)
        {
          securer_landlock_plan_clear (plan);
          return -1;
        }
    }
  /* Without a device mount no device node is reachable (every bind is
   * nodev), so device ioctls need no second guard there. */
  if (has_dev)
    plan->need_fs |= SECURER_LL_ACCESS_FS_IOCTL_DEV;

  if (p->exec_restricted)
    for (size_t i = 0; i < p->n_exec; i++)
      if (plan_add_path (plan, p->exec[i],
                         SECURER_LL_ACCESS_FS_EXECUTE | SECURER_LL_ACCESS_FS_READ_FILE
                           | SECURER_LL_ACCESS_FS_READ_DIR, err)
          < 0)
        {
          securer_landlock_plan_clear (plan);
          return -1;
        }

  /* TCP: listed ports are an explicit allowlist the policy relies on, so
   * they are needed.  Without a list, a private network namespace already
   * has nothing to reach; handling TCP there anyway means a later policy
   * mistake (network host) cannot silently open it, but an older kernel
   * is not refused for lacking it. */
  bool ports = p->landlock.n_tcp_bind > 0 || p->landlock.n_tcp_connect > 0;
  if (ports || p->network != SECURER_NET_HOST)
    plan->want_net = SECURER_LL_NET_ABI4;
  if (ports)
    plan->need_net = SECURER_LL_NET_ABI4;
  for (size_t i = 0; i < p->landlock.n_tcp_bind; i++)
    if (plan_add_port (plan, p->landlock.tcp_bind[i], SECURER_LL_ACCESS_NET_BIND_TCP, err) < 0)
      {
        securer_landlock_plan_clear (plan);
        return -1;
      }
  for (size_t i = 0; i < p->landlock.n_tcp_connect; i++)
    if (plan_add_port (plan, p->landlock.tcp_connect[i], SECURER_LL_ACCESS_NET_CONNECT_TCP, err)
        < 0)
      {
        securer_landlock_plan_clear (plan);
        return -1;
      }

  /* network allow: the proxy's port is the one way out; any other TCP
   * connect, to loopback services the command starts included, stays
   * what it is without a list (denied where TCP is handled). */
  if (p->network == SECURER_NET_ALLOW
      && plan_add_port (plan, SECURER_NET_PROXY_PORT, SECURER_LL_ACCESS_NET_CONNECT_TCP, err) < 0)
    {
      securer_landlock_plan_clear (plan);
      return -1;
    }

  if (p->landlock.scope_abstract_unix)
    plan->want_scoped |= SECURER_LL_SCOPE_ABSTRACT_UNIX_SOCKET;
  if (p->landlock.scope_signal)
    plan->want_scoped |= SECURER_LL_SCOPE_SIGNAL;
  return 0;
}

void
securer_landlock_plan_clear (struct securer_landlock_plan *plan)
{
  if (plan == NULL)
    return;
  for (size_t i = 0; i < plan->n_paths; i++)
    free (plan->paths[i].path);
  free (plan->paths);
  free (plan->ports);
  memset (plan, 0, sizeof *plan);
}

/* ---- the report ------------------------------------------------------ */

void
securer_landlock_report_clear (struct securer_landlock_report *rep)
{
  if (rep == NULL)
    return;
  free (rep->summary);
  memset (rep, 0, sizeof *rep);
}

/* One line for --verbose and --json-status, e.g.
 * "landlock required, ABI 7: fs 16 rights, 14 rules (2 absent); net
 *  bind_tcp,connect_tcp, 0 ports; scoped abstract_unix_socket,signal"
 * followed, in best-effort mode, by "; not enforced (ABI 3): ioctl_dev,...". */
static void
summarize (char *out, size_t cap, const char *mode, int abi, const struct securer_landlock_plan *plan,
           const struct securer_landlock_report *rep, size_t n_rules, size_t n_absent)
{
  char net[64], scoped[64], mfs[NAMES_MAX], mnet[64], msc[64];
  bit_names (net, sizeof net, rep->handled_net, net_names, 2);
  bit_names (scoped, sizeof scoped, rep->scoped, scope_names, 2);
  uint64_t miss_fs = plan->want_fs & ~rep->handled_fs;
  uint64_t miss_net = plan->want_net & ~rep->handled_net;
  uint64_t miss_sc = plan->want_scoped & ~rep->scoped;
  bit_names (mfs, sizeof mfs, miss_fs, fs_names, sizeof fs_names / sizeof fs_names[0]);
  bit_names (mnet, sizeof mnet, miss_net, net_names, 2);
  bit_names (msc, sizeof msc, miss_sc, scope_names, 2);

  char missing[NAMES_MAX + 256] = "";
  if (miss_fs || miss_net || miss_sc)
    snprintf (missing, sizeof missing, "; not enforced (ABI %d): %s%s%s%s%s", abi, mfs,
              (mfs[0] && (mnet[0] || msc[0])) ? "," : "", mnet,
              (mnet[0] && msc[0]) ? "," : "", msc);
  char absent[64] = "";
  if (n_absent > 0)
    snprintf (absent, sizeof absent, " (%zu absent)", n_absent);
  int nfs = __builtin_popcountll (rep->handled_fs);
  snprintf (out, cap, "landlock %s, ABI %d: fs %d rights, %zu rules%s; net %s, %zu ports; scoped %s%s",
            mode, abi, nfs, n_rules, absent, net[0] ? net : "none",
            rep->handled_net ? plan->n_ports : (size_t) 0, scoped[0] ? scoped : "none", missing);
}

/* ---- applying -------------------------------------------------------- */

static const char *
mode_name (enum securer_enforce m)
{
  switch (m)
    {
    case SECURER_ENFORCE_REQUIRED: return "required";
    case SECURER_ENFORCE_BEST_EFFORT: return "best-effort";
    default: return "off";
    }
}

/* REQUIRED mode: names the first thing the kernel cannot do. */
static int
check_required (const struct securer_landlock_plan *plan, int abi, securer_err_t *err)
{
  if (abi <= 0)
    return securer_error_set (err, 0, "the kernel does not support Landlock "
                                      "(policy requires it)");
  uint64_t miss = plan->need_fs & ~fs_known (abi);
  for (unsigned b = 0; b < 64; b++)
    if (miss & (1ULL << b))
      {
        char up[32];
        upper_into (up, sizeof up, fs_names[b]);
        return securer_error_set (err, 0, "kernel ABI %d cannot enforce %s (needs %d)",
                                  abi, up, fs_right_abi (b));
      }
  miss = plan->need_net & ~net_known (abi);
  for (unsigned b = 0; b < 2; b++)
    if (miss & (1ULL << b))
      {
        char up[32];
        upper_into (up, sizeof up, net_names[b]);
        return securer_error_set (err, 0, "kernel ABI %d cannot enforce %s (needs 4)",
                                  abi, up);
      }
  miss = plan->want_scoped & ~scope_known (abi);
  for (unsigned b = 0; b < 2; b++)
    if (miss & (1ULL << b))
      {
        char up[32];
        upper_into (up, sizeof up, scope_names[b]);
        return securer_error_set (err, 0,
                                  "kernel ABI %d cannot enforce scope %s (needs 6)",
                                  abi, up);
      }
  return 0;
}

static int
fail_setup (securer_err_t *err)
{
  securer_error_set_status (err, SECURER_EXIT_SETUP);
  return -1;
}

int
securer_landlock_apply_plan (enum securer_enforce mode, const struct securer_landlock_plan *planp, int abi,
                             struct securer_landlock_report *rep, char *summary, size_t cap,
                             securer_err_t *err)
{
  memset (rep, 0, sizeof *rep);
  rep->abi = abi;
  if (mode == SECURER_ENFORCE_OFF)
    {
      snprintf (summary, cap, "landlock off (policy)");
      return 0;
    }
  const struct securer_landlock_plan plan = *planp;

  if (mode == SECURER_ENFORCE_REQUIRED && check_required (&plan, abi, err) < 0)
    return fail_setup (err);

  if (abi <= 0)
    {
      snprintf (summary, cap, "landlock best-effort, not enforced: the kernel does not support Landlock");
      return 0;
    }

  struct securer_ll_ruleset_attr attr = {
    .handled_access_fs = plan.want_fs & fs_known (abi),
    .handled_access_net = plan.want_net & net_known (abi),
    .scoped = plan.want_scoped & scope_known (abi),
  };
  /* An older kernel rejects a larger struct whose extra fields are not
   * zero, and some reject any size they do not know: pass exactly the
   * prefix this ABI reads. */
  size_t attr_size = abi >= 6   ? sizeof attr
                     : abi >= 4 ? offsetof (struct securer_ll_ruleset_attr, scoped)
                                : offsetof (struct securer_ll_ruleset_attr, handled_access_net);

  int rfd = (int) syscall (__NR_landlock_create_ruleset, &attr, attr_size, 0U);
  if (rfd < 0)
    {
      securer_error_set (err, errno, "create ruleset (ABI %d)", abi);
      return fail_setup (err);
    }

  size_t n_rules = 0, n_absent = 0;
  for (size_t i = 0; i < plan.n_paths; i++)
    {
      const struct securer_landlock_path_rule *r = &plan.paths[i];
      int fd = open (r->path, O_PATH | O_CLOEXEC);
      if (fd < 0)
        {
          /* Optional mounts and exec entries for programs a machine does
           * not have: less is allowed, nothing more. */
          if (errno == ENOENT || errno == ENOTDIR)
            {
              n_absent++;
              continue;
            }
          securer_error_set (err, errno, "open %s", r->path);
          goto fail;
        }
      struct stat st;
      if (fstat (fd, &st) < 0)
        {
          securer_error_set (err, errno, "stat %s", r->path);
          close (fd);
          goto fail;
        }
      struct securer_ll_path_beneath_attr pb = {
        .allowed_access = r->access & attr.handled_access_fs,
        .parent_fd = fd,
      };
      if (!S_ISDIR (st.st_mode))
        pb.allowed_access &= LL_FILE_RIGHTS;
      if (pb.allowed_access == 0)
        {
          close (fd);
          continue;
        }
      if (syscall (__NR_landlock_add_rule, rfd, SECURER_LL_RULE_PATH_BENEATH, &pb, 0U) < 0)
        {
          securer_error_set (err, errno, "rule for %s", r->path);
          close (fd);
          goto fail;
        }
      close (fd);
      n_rules++;
    }

  if (attr.handled_access_net != 0)
    for (size_t i = 0; i < plan.n_ports; i++)
      {
        struct securer_ll_net_port_attr np = {
          .allowed_access = plan.ports[i].access & attr.handled_access_net,
          .port = plan.ports[i].port,
        };
        if (syscall (__NR_landlock_add_rule, rfd, SECURER_LL_RULE_NET_PORT, &np, 0U) < 0)
          {
            securer_error_set (err, errno, "rule for TCP port %u", plan.ports[i].port);
            goto fail;
          }
      }

  /* restrict_self insists on it (or CAP_SYS_ADMIN); the launcher has set
   * it already, but the step must not depend on being called in order. */
  if (prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1
      && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    {
      securer_error_set (err, errno, "set no_new_privs");
      goto fail;
    }
  /* No log flags: with ABI 7 defaults, denials after the payload's execve
   * are not audited, which keeps the host's audit log free of the denials
   * a sandbox is expected to produce. */
  if (syscall (__NR_landlock_restrict_self, rfd, 0U) < 0)
    {
      securer_error_set (err, errno, "restrict self");
      goto fail;
    }
  close (rfd);

  rep->enforced = true;
  rep->handled_fs = attr.handled_access_fs;
  rep->handled_net = attr.handled_access_net;
  rep->scoped = attr.scoped;
  summarize (summary, cap, mode_name (mode), abi, &plan, rep, n_rules, n_absent);
  return 0;

fail:
  close (rfd);
  return fail_setup (err);
}

int
securer_landlock_apply_abi (const struct securer_policy *p, int abi,
                            struct securer_landlock_report *rep, securer_err_t *err)
{
  struct securer_landlock_report local = { 0 };
  if (rep == NULL)
    rep = &local;
  securer_landlock_report_clear (rep);
  rep->abi = abi;

  enum securer_enforce mode = p->landlock.mode;
  struct securer_landlock_plan plan;
  memset (&plan, 0, sizeof plan);
  if (mode != SECURER_ENFORCE_OFF)
    {
      int real = securer_landlock_abi ();
      if (abi > real)
        return securer_error_set (err, EINVAL, "ABI %d asked for, kernel has %d", abi, real);
      if (securer_landlock_plan_build (p, &plan, err) < 0)
        return fail_setup (err);
    }
  char summary[SECURER_LANDLOCK_SUMMARY_MAX];
  int rc = securer_landlock_apply_plan (mode, &plan, abi, rep, summary, sizeof summary, err);
  securer_landlock_plan_clear (&plan);
  if (rc == 0)
    rep->summary = strdup (summary);
  securer_landlock_report_clear (&local);
  return rc;
}

int
securer_landlock_apply (const struct securer_policy *p, struct securer_landlock_report *rep,
                        securer_err_t *err)
{
  return securer_landlock_apply_abi (p, securer_landlock_abi (), rep, err);
}
