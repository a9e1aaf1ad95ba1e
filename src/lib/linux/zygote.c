/* The namespace steps of one session forked from a template: the part of
 * docs/architecture.md ("Sessions from a template") between the template's
 * fork and the session's pid 1 having its own /proc and /tmp.  Everything
 * here runs in forks of a single-threaded template, so raw id syscalls
 * (no nptl setxid broadcast) and stack buffers only. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/landlock-internal.h"
#include "linux/launch.h"
#include "linux/linux.h"
#include "linux/zygote.h"
#include "securer/sandbox.h"

static int
write_at (const char *path, const char *text, securer_err_t *err)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return securer_error_set (err, errno, "open %s", path);
  size_t len = strlen (text);
  ssize_t w = write (fd, text, len);
  int saved = errno;
  close (fd);
  if (w != (ssize_t) len)
    return securer_error_set (err, w < 0 ? saved : EIO, "write '%.*s' to %s", (int) strcspn (text, "\n"), text,
                              path);
  return 0;
}

int
securer_zygote_template_maps (pid_t template_pid, uint32_t own, uint32_t first, uint32_t count,
                              securer_err_t *err)
{
  if (count == 0 || (uint64_t) first + count > 4294967295ull || own == 0)
    return securer_error_set (err, EINVAL, "template map: own id %u, range %u+%u", own, first, count);
  /* Inside 0 is the template itself and inside host-first+1 each id of the
   * range.  The template's own id is usually leased from that range too:
   * the kernel refuses two inside ids for one host id, so the range is
   * split around it and its index stays unmapped (a session asking for it
   * fails to become it). */
  char map[160], path[64];
  int len = snprintf (map, sizeof map, "0 %u 1\n", own);
  if (own >= first && own - first < count)
    {
      uint32_t below = own - first, above = count - below - 1;
      if (below)
        len += snprintf (map + len, sizeof map - (size_t) len, "1 %u %u\n", first, below);
      if (above)
        len += snprintf (map + len, sizeof map - (size_t) len, "%u %u %u\n", below + 2, own + 1, above);
    }
  else
    snprintf (map + len, sizeof map - (size_t) len, "1 %u %u\n", first, count);
  static const char *const files[] = { "uid_map", "gid_map" };
  for (size_t i = 0; i < 2; i++)
    {
      snprintf (path, sizeof path, "/proc/%d/%s", (int) template_pid, files[i]);
      if (write_at (path, map, err) < 0)
        return securer_error_prefix (err, "template of pid %d", (int) template_pid);
    }
  return 0;
}

int
securer_zygote_index (uint32_t host, uint32_t first, uint32_t count, uint32_t *index, securer_err_t *err)
{
  if (host < first || host - first >= count)
    return securer_error_set (err, ERANGE, "host id %u is not in the template's range %u-%u", host, first,
                              first + count - 1);
  *index = host - first + 1;
  return 0;
}

/* The policy's masks and read-only entries over this session's own proc: a file gets /dev/null,
 * a directory an empty read-only tmpfs (as mount.c does for a cold
 * sandbox).  The template's proc cannot carry them: its mounts would be
 * locked here and this proc mount refused (not "fully visible"). */
static int
mask_one (const char *path, securer_err_t *err)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0 : securer_error_set (err, errno, "mask %s", path);
  int rc = S_ISDIR (st.st_mode)
    ? mount ("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=1,mode=0555")
    : mount ("/dev/null", path, NULL, MS_BIND, NULL);
  return rc < 0 ? securer_error_set (err, errno, "mask %s", path) : 0;
}

static int
mask_proc (const struct securer_policy *p, bool unmasked, securer_err_t *err)
{
  size_t n;
  const char *const *masks = securer_linux_proc_masks (&n);
  for (size_t i = 0; !unmasked && i < n; i++)
    {
      char path[128];
      snprintf (path, sizeof path, "/proc/%s", masks[i]);
      if (mask_one (path, err) < 0)
        return -1;
    }
  /* The policy's own masks there: the template could not apply them. */
  for (size_t i = 0; p && i < p->n_masks; i++)
    if (securer_linux_under_proc (p, p->masks[i]) && mask_one (p->masks[i], err) < 0)
      return -1;
  const char *const *ro = securer_linux_proc_readonly (&n);
  for (size_t i = 0; i < n; i++)
    {
      /* Masked above: a read-only copy under the mask would be one mount
       * more that nothing can reach. */
      if (!unmasked && securer_linux_proc_masked (ro[i]))
        continue;
      char path[128];
      snprintf (path, sizeof path, "/proc/%s", ro[i]);
      if (mount (path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
        {
          if (errno == ENOENT)
            continue;
          return securer_error_set (err, errno, "bind %s", path);
        }
      if (mount (NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        return securer_error_set (err, errno, "make %s read-only", path);
    }
  return 0;
}

/* pid 1 of the session: its own proc, tmpfs mounts and hostname. */
static int
session_pid1 (const struct securer_zygote_session *s, securer_err_t *err)
{
  if (getpid () != 1)
    return securer_error_set (err, EPROTO, "session init is pid %d, not 1", (int) getpid ());
  /* The policy's proc, as a cold sandbox gets it: only the processes'
   * directories with subset=pid, else masked (unless `unmasked`), with a
   * boot id and meminfo of its own. */
  const struct securer_mount *pm = NULL;
  for (size_t i = 0; s->policy != NULL && i < s->policy->n_mounts; i++)
    if (s->policy->mounts[i].type == SECURER_MOUNT_PROC && strcmp (s->policy->mounts[i].dest, "/proc") == 0)
      pm = &s->policy->mounts[i];
  bool pid_only = pm != NULL && pm->pid_only;
  if (mount ("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, pid_only ? "subset=pid" : NULL) < 0)
    return securer_error_set (err, errno, "mount the session's /proc");
  bool unmasked = pm != NULL && pm->unmasked;
  unsigned own = s->no_memory_limit ? SECURER_ROOTFS_NO_MEMORY_LIMIT : 0;
  if (!pid_only && !unmasked && s->policy_tmpfs
      && securer_linux_proc_own_entries (s->policy, "/proc", own, err) < 0)
    return -1;
  if (!pid_only && mask_proc (s->policy, unmasked, err) < 0)
    return -1;
  /* A `mount dev`'s own /dev/shm and devpts, fresh, as mount.c makes
   * them: the template's would be shared by every session (one session
   * would see the others' ptys, and take from their cap).  Without ptys
   * the template has no pts to mount on. */
  uint32_t ptys = s->policy != NULL ? securer_policy_ptys (s->policy) : 0;
  for (size_t i = 0; s->policy_tmpfs && s->policy != NULL && i < s->policy->n_mounts; i++)
    {
      const struct securer_mount *m = &s->policy->mounts[i];
      if (m->type != SECURER_MOUNT_DEV)
        continue;
      char path[4096], opts[64];
      const char *dir = strcmp (m->dest, "/") == 0 ? "" : m->dest;
      snprintf (path, sizeof path, "%s/shm", dir);
      snprintf (opts, sizeof opts, "mode=1777,size=%u", SECURER_DEV_SHM_SIZE);
      if (mount ("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
        return securer_error_set (err, errno, "mount a fresh tmpfs on %s", path);
      if (ptys == 0)
        continue;
      snprintf (path, sizeof path, "%s/pts", dir);
      snprintf (opts, sizeof opts, "newinstance,ptmxmode=0666,mode=0620,max=%u", (unsigned) ptys);
      if (mount ("devpts", path, "devpts", MS_NOSUID | MS_NOEXEC, opts) < 0)
        return securer_error_set (err, errno, "mount a devpts instance of its own on %s", path);
    }
  /* The policy's tmpfs mounts again, with their sizes and modes: the
   * template's are shared by every session. */
  for (size_t i = 0; s->policy_tmpfs && s->policy != NULL && i < s->policy->n_mounts; i++)
    {
      const struct securer_mount *m = &s->policy->mounts[i];
      if (m->type != SECURER_MOUNT_TMPFS)
        continue;
      char opts[64];
      if (m->size)
        snprintf (opts, sizeof opts, "mode=%o,size=%llu", (unsigned) m->mode, (unsigned long long) m->size);
      else
        snprintf (opts, sizeof opts, "mode=%o", (unsigned) m->mode);
      if (mount ("tmpfs", m->dest, "tmpfs", MS_NOSUID | MS_NODEV | (m->noexec ? MS_NOEXEC : 0), opts) < 0)
        return securer_error_set (err, errno, "mount a fresh tmpfs on %s", m->dest);
    }
  for (const char *const *t = s->tmpfs; t && *t; t++)
    {
      char opts[64] = "mode=1777";
      if (s->tmpfs_size)
        snprintf (opts, sizeof opts, "mode=1777,size=%llu", (unsigned long long) s->tmpfs_size);
      if (mount ("tmpfs", *t, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return securer_error_set (err, errno, "mount a fresh tmpfs on %s", *t);
    }
  if (s->hostname && sethostname (s->hostname, strlen (s->hostname)) < 0)
    return securer_error_set (err, errno, "set hostname '%s'", s->hostname);
  return 0;
}

pid_t
securer_zygote_enter (const struct securer_zygote_session *s, securer_err_t *err)
{
  /* Index 0: an unprivileged caller's template, whose sessions keep its
   * one id (as that caller's cold sandboxes all run as its uid). */
  if (s->index != 0 && !s->own_id)
    {
      /* Becoming the leased id before unshare makes the session's user
       * namespace owned by that host id, so the kernel charges its
       * counters to it, not to the template's id. */
      if (syscall (SYS_setresgid, s->index, s->index, s->index) < 0)
        return securer_error_set (err, errno, "setresgid %u in the template", s->index);
      if (syscall (SYS_setresuid, s->index, s->index, s->index) < 0)
        return securer_error_set (err, errno, "setresuid %u in the template", s->index);
      /* The id change made the process undumpable: /proc/self/uid_map
       * would be root's and the map below could not be written. */
      if (prctl (PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
        return securer_error_set (err, errno, "set dumpable");
    }
  else if (!s->own_id)
    return securer_error_set (err, EINVAL, "session index 0 is the template's own id");
  /* An unprivileged template's id there is the policy's (never 0: mapping
   * the parent's root needs CAP_SETFCAP at the unshare). */
  uint32_t lower_uid = s->own_id ? (uint32_t) getuid () : s->index;
  uint32_t lower_gid = s->own_id ? (uint32_t) getgid () : s->index;
  /* The policy's namespaces (user, mount and pid are required); for the
   * namespace-level tests, all of them. */
  unsigned ns = s->policy != NULL && s->policy_ns ? s->policy->namespaces : ~0u;
  int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | ((ns & SECURER_NS_NET) ? CLONE_NEWNET : 0)
              | ((ns & SECURER_NS_IPC) ? CLONE_NEWIPC : 0) | ((ns & SECURER_NS_UTS) ? CLONE_NEWUTS : 0);
  if (unshare (flags) < 0)
    return securer_error_set (err, errno, "unshare the session's namespaces");
  /* Only the namespace or its parent may write these maps, and the host is
   * two levels up: the session maps its own single id, which needs no
   * privilege. */
  uint32_t gid = s->inside_gid ? s->inside_gid : s->inside;
  char map[48], gmap[48];
  snprintf (map, sizeof map, "%u %u 1\n", s->inside, lower_uid);
  snprintf (gmap, sizeof gmap, "%u %u 1\n", gid, lower_gid);
  if (write_at ("/proc/self/uid_map", map, err) < 0 || write_at ("/proc/self/setgroups", "deny", err) < 0
      || write_at ("/proc/self/gid_map", gmap, err) < 0)
    return securer_error_prefix (err, "map the session's id");
  if (syscall (SYS_setresgid, gid, gid, gid) < 0 || syscall (SYS_setresuid, s->inside, s->inside, s->inside) < 0)
    return securer_error_set (err, errno, "become %u:%u in the session", s->inside, gid);
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return securer_error_set (err, errno, "make the session's mounts private");
  /* A process cannot enter the pid namespace it unshared; its next child
   * is pid 1 there. */
  pid_t g = fork ();
  if (g < 0)
    return securer_error_set (err, errno, "fork the session's pid 1");
  if (g > 0)
    return g;
  if (session_pid1 (s, err) < 0)
    return securer_error_prefix (err, "session %u", s->index);
  return 0;
}

int
securer_zygote_template_start (const struct securer_spawn_opts *opts, struct securer_sandbox **out,
                               securer_err_t *err)
{
  const struct securer_policy *p = opts->policy;
  struct launch_template tpl;
  int rc = -1;
  if (geteuid () != 0)
    securer_error_set (err, EPERM, "only root may map the host-id lease range into a template");
  else if (p == NULL || !(p->namespaces & SECURER_NS_USER) || !(p->namespaces & SECURER_NS_PID)
           || !(p->namespaces & SECURER_NS_MOUNT))
    securer_error_set (err, EINVAL, "a template needs user, pid and mount namespaces");
  else if (p->landlock.mode != SECURER_ENFORCE_OFF || p->seccomp.enabled)
    securer_error_set (err, EINVAL, "a template has no Landlock domain and no seccomp filter "
                                    "(each session applies its own)");
  else if (securer_hostids_range (&tpl.first, &tpl.count, err) == 0)
    rc = securer_launch_spawn (opts, &tpl, out, err);
  if (rc < 0)
    {
      securer_error_prefix (err, "session template");
      securer_error_set_status (err, SECURER_EXIT_SETUP);
    }
  return rc;
}

/* ---- a template's program: one session per request ----------------------- */

int
securer_zygote_program_init (struct securer_zygote_program *z, int policy_fd, int init_fd, securer_err_t *err)
{
  memset (z, 0, sizeof *z);
  z->init_fd = init_fd;
  struct stat st;
  if (fstat (policy_fd, &st) < 0)
    return securer_error_set (err, errno, "stat the template's policy");
  if (st.st_size <= 0 || st.st_size > (64 << 20))
    return securer_error_set (err, EINVAL, "the template's policy has %lld bytes", (long long) st.st_size);
  char *text = malloc ((size_t) st.st_size);
  if (text == NULL)
    return securer_error_set (err, ENOMEM, "the template's policy");
  ssize_t n = pread (policy_fd, text, (size_t) st.st_size, 0);
  int rc = -1;
  if (n != st.st_size)
    securer_error_set (err, n < 0 ? errno : EIO, "read the template's policy");
  else if (securer_policy_from_json_text ("template", text, (size_t) n, &z->p, err) == 0)
    rc = 0;
  free (text);
  if (rc < 0)
    return -1;
  if (z->p->landlock.mode != SECURER_ENFORCE_OFF)
    {
      z->landlock = calloc (1, sizeof *z->landlock);
      if (z->landlock == NULL)
        return securer_error_set (err, ENOMEM, "landlock plan");
      if (securer_landlock_plan_build (z->p, z->landlock, err) < 0)
        return securer_error_prefix (err, "landlock");
    }
  return 0;
}

/* Only the first failure of a session's setup is told (the host reports
 * it and kills the rest). */
static __attribute__ ((noreturn)) void
session_fail (int sock, securer_err_t *err)
{
  sync_send_error (sock, SECURER_EXIT_SETUP, *err);
  _exit (SECURER_EXIT_SETUP);
}

static int
session_hello (int sock, enum sync_msg_type type)
{
  struct sync_msg m;
  memset (&m, 0, offsetof (struct sync_msg, text) + 1);
  m.type = type;
  return sync_send (sock, &m, -1);
}

int
securer_zygote_fork_session (const struct securer_zygote_program *z, const struct securer_zygote_request *rq,
                             const int fds[SECURER_ZYGOTE_REQUEST_FDS], securer_err_t *err)
{
  const struct securer_policy *p = z->p;
  int setup = fds[3], status = fds[4];
  pid_t c = fork ();
  if (c < 0)
    return securer_error_set (err, errno, "fork a session");
  if (c > 0)
    return 0;

  /* C: told to the host by its credentials, which places it in the
   * session's cgroup before anything of the session exists. */
  securer_err_t e = NULL;
  struct sync_msg m;
  if (session_hello (setup, SYNC_SESSION_HELLO) < 0)
    _exit (SECURER_EXIT_SETUP);
  for (;;)
    {
      int fd = -1;
      int r = sync_recv (setup, &m, &fd, NULL, false);
      if (r <= 0)
        _exit (SECURER_EXIT_SETUP);
      if (m.type == SYNC_GO)
        break;
      if (m.type != SYNC_JOIN || fd < 0)
        _exit (SECURER_EXIT_SETUP);
      /* Into one of the session's v1 groups: this process alone, before it
       * makes any other (see template.c). */
      ssize_t w = write (fd, "0", 1);
      int saved = errno;
      close (fd);
      if (w != 1)
        {
          securer_error_set (&e, w < 0 ? saved : EIO, "join the session's cgroup");
          session_fail (setup, &e);
        }
    }
  struct securer_zygote_session s = { .index = rq->index, .own_id = rq->index == 0,
                                      .inside = p->uid, .inside_gid = p->gid,
                                      .hostname = (p->namespaces & SECURER_NS_UTS) ? p->hostname : NULL,
                                      .policy = p, .policy_tmpfs = true, .policy_ns = true,
                                      .no_memory_limit = rq->no_memory_limit != 0 };
  pid_t g = securer_zygote_enter (&s, &e);
  if (g > 0)
    _exit (0);   /* G is now the template's init's to reap */
  if (g < 0)
    session_fail (setup, &e);

  /* G: pid 1 of the session. */
  if ((p->namespaces & SECURER_NS_NET) && securer_linux_setup_network (p, &e) < 0)
    session_fail (setup, &e);
  if ((p->namespaces & SECURER_NS_CGROUP) && unshare (CLONE_NEWCGROUP) < 0)
    {
      securer_error_set (&e, errno, "unshare cgroup namespace");
      session_fail (setup, &e);
    }
  if (session_hello (setup, SYNC_SESSION_INIT) < 0)
    _exit (SECURER_EXIT_SETUP);

  static int scratch[1];
  struct launch_plan lp;
  memset (&lp, 0, sizeof lp);
  lp.p = p;
  lp.setup_sock = setup;
  lp.status_sock = status;
  lp.parent_setup_sock = lp.parent_status_sock = -1;
  lp.stdin_fd = fds[0];
  lp.stdout_fd = fds[1];
  lp.stderr_fd = fds[2];
  lp.pass_scratch = scratch;
  lp.landlock = z->landlock;
  lp.setup_sock_at = rq->sock_at;
  lp.want_filter = p->seccomp.enabled;
  lp.resume = true;
  lp.verbose = rq->verbose != 0;
  lp.init_fd = z->init_fd;
  lp.gate_fd = -1;
  lp.lease_fd = rq->lease ? fds[5] : -1;
  if (securer_linux_plan_rlimits (p, rq->sock_at, &lp.rlimits, &e) < 0)
    session_fail (setup, &e);
  pid_t init_pid;
  securer_init_fork_payload (&lp, &init_pid);
  /* The session's payload: confined as a cold one, then back into the
   * template's program instead of an exec. */
  securer_payload_confine (&lp, init_pid);
  close (lp.setup_sock);
  return 1;
}
