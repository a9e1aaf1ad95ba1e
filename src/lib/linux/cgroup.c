/* Cgroup limits of one sandbox (memory, pids, cpu), set up by the parent.
 *
 * Each controller is placed where the host has it: in the unified (v2)
 * hierarchy when the controller is available there, otherwise in its v1
 * hierarchy (hybrid hosts have most controllers in v1 and an almost empty
 * v2).  The sandbox gets its own group, "securer-<pid>-<n>", under the
 * caller's own group of that hierarchy; on v2, when the caller's group
 * cannot delegate the controllers (it holds processes, so the kernel
 * forbids enabling controllers for its children), the group is created
 * next to it instead, under a parent that already delegates them.
 *
 * Whatever could not be applied is either an error (policy says the
 * cgroup is required: the sandbox must not start without it) or a line in
 * a report (best effort).  Groups are always removed again: on the error
 * paths of create, and in destroy after killing what is left inside. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "linux/linux.h"
#include "securer/sandbox.h"

enum ctrl { CG_MEMORY = 0, CG_PIDS, CG_CPU, CG_N };
static const char *const ctrl_names[CG_N] = { "memory", "pids", "cpu" };

/* A cpu.max/cfs period of 100 ms is the kernel default; quotas below 1 ms
 * are refused by the kernel. */
#define CPU_PERIOD_US 100000u
#define CPU_MIN_QUOTA_US 1000u

struct securer_cgroup {
  char *v2_dir;           /* the sandbox's v2 group, or NULL */
  char *v1_dir[CG_N];     /* its v1 group per controller, or NULL */
  int v2_lock;            /* the group's directory, flock'ed while it is ours; or -1 */
  int v1_lock[CG_N];
  int version[CG_N];      /* 0 = not applied, 1 or 2 */
  uint64_t oom_base;      /* oom_kill count at creation (inherited counters on v1) */
  int oom_fd;             /* v1: eventfd signalled on an OOM in the group; or -1 */
  int join_fd[CG_N];      /* v1: the group's "tasks", for the sandbox to join itself; or -1 */
};

/* ---- small file helpers -------------------------------------------------- */

static int
write_file (const char *dir, const char *name, const char *text)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t len = strlen (text);
  ssize_t n = write (fd, text, len);
  int e = errno;
  close (fd);
  if (n != (ssize_t) len)
    {
      errno = n < 0 ? e : EIO;
      return -1;
    }
  return 0;
}

static char *
read_file (const char *dir, const char *name)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return NULL;
  char *buf = NULL;
  size_t cap = 0;
  ssize_t n = getdelim (&buf, &cap, '\0', f);
  fclose (f);
  if (n < 0)
    {
      free (buf);
      return NULL;
    }
  return buf;
}

static bool
file_exists (const char *dir, const char *name)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  return access (path, F_OK) == 0;
}

/* Value of "key N" in a flat-keyed file such as memory.events. */
static bool
keyed_value (const char *text, const char *key, uint64_t *out)
{
  size_t klen = strlen (key);
  for (const char *l = text; l && *l;)
    {
      if (strncmp (l, key, klen) == 0 && l[klen] == ' ')
        {
          *out = strtoull (l + klen + 1, NULL, 10);
          return true;
        }
      l = strchr (l, '\n');
      if (l)
        l++;
    }
  return false;
}

/* Does a space-separated list (cgroup.controllers) contain word? */
static bool
has_word (const char *list, const char *word)
{
  size_t wl = strlen (word);
  for (const char *s = list; s && *s;)
    {
      while (*s == ' ' || *s == '\n')
        s++;
      size_t n = strcspn (s, " \n");
      if (n == wl && strncmp (s, word, wl) == 0)
        return true;
      s += n;
    }
  return false;
}

static bool
dir_has_controller (const char *dir, const char *file, const char *ctrl)
{
  char *list = read_file (dir, file);
  bool ok = list != NULL && has_word (list, ctrl);
  free (list);
  return ok;
}

/* ---- where are the hierarchies? ----------------------------------------- */

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void
unescape (char *s)
{
  char *w = s;
  for (char *r = s; *r; r++)
    {
      if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] && r[3])
        {
          *w++ = (char) (((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
          r += 3;
        }
      else
        *w++ = *r;
    }
  *w = '\0';
}

/* The directory of the caller's own group in a hierarchy: the mount of
 * `fstype` (with `ctrl` among its options for v1) joined with the group
 * path from /proc/self/cgroup.  malloc'd, NULL when not found. */
static char *
own_group_dir (const char *fstype, const char *ctrl)
{
  /* The caller's group path in that hierarchy. */
  FILE *f = fopen ("/proc/self/cgroup", "re");
  if (f == NULL)
    return NULL;
  char *line = NULL, *group = NULL;
  size_t cap = 0;
  while (group == NULL && getline (&line, &cap, f) > 0)
    {
      line[strcspn (line, "\n")] = '\0';
      char *c1 = strchr (line, ':');
      char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL)
        continue;
      *c2 = '\0';
      const char *ctrls = c1 + 1;
      bool match;
      if (ctrl == NULL)
        match = strncmp (line, "0:", 2) == 0 && *ctrls == '\0';
      else
        {
          char *copy = strdup (ctrls), *save = NULL;
          match = false;
          for (char *t = copy ? strtok_r (copy, ",", &save) : NULL; t;
               t = strtok_r (NULL, ",", &save))
            if (strcmp (t, ctrl) == 0)
              match = true;
          free (copy);
        }
      if (match)
        group = strdup (c2 + 1);
    }
  fclose (f);
  if (group == NULL)
    {
      free (line);
      return NULL;
    }

  f = fopen ("/proc/self/mountinfo", "re");
  char *dir = NULL;
  while (f && dir == NULL && getline (&line, &cap, f) > 0)
    {
      /* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
      char *fields[5] = { 0 };
      char *save = NULL, *t = strtok_r (line, " \n", &save);
      for (int i = 0; t && i < 5; i++, t = strtok_r (NULL, " \n", &save))
        fields[i] = t;
      while (t && strcmp (t, "-") != 0)
        t = strtok_r (NULL, " \n", &save);
      char *type = t ? strtok_r (NULL, " \n", &save) : NULL;
      char *source = type ? strtok_r (NULL, " \n", &save) : NULL;
      char *super = source ? strtok_r (NULL, " \n", &save) : NULL;
      if (fields[4] == NULL || type == NULL || strcmp (type, fstype) != 0)
        continue;
      if (ctrl != NULL)
        {
          bool match = false;
          char *s2 = NULL;
          for (char *o = super ? strtok_r (super, ",", &s2) : NULL; o; o = strtok_r (NULL, ",", &s2))
            if (strcmp (o, ctrl) == 0)
              match = true;
          if (!match)
            continue;
        }
      char *root = fields[3], *mp = fields[4];
      unescape (root);
      unescape (mp);
      /* Only usable when our group lies inside the part that is mounted. */
      size_t rl = strcmp (root, "/") == 0 ? 0 : strlen (root);
      if (strncmp (group, root, rl) != 0 || (group[rl] != '/' && group[rl] != '\0'))
        continue;
      const char *rest = group + rl;
      if (asprintf (&dir, "%s%s", mp, strcmp (rest, "/") == 0 ? "" : rest) < 0)
        dir = NULL;
    }
  if (f)
    fclose (f);
  free (line);
  free (group);
  return dir;
}

static char *
parent_dir (const char *dir)
{
  char *p = strdup (dir);
  if (p == NULL)
    return NULL;
  char *slash = strrchr (p, '/');
  if (slash == NULL || slash == p)
    {
      free (p);
      return NULL;
    }
  *slash = '\0';
  return p;
}

static char *
new_group_name (void)
{
  static atomic_uint counter;
  char *name = NULL;
  if (asprintf (&name, "securer-%d-%u", (int) getpid (), atomic_fetch_add (&counter, 1)) < 0)
    return NULL;
  return name;
}

/* Is `name` one of ours: "securer-<pid>-<n>"? */
static bool
is_sandbox_group_name (const char *name)
{
  if (strncmp (name, "securer-", 8) != 0)
    return false;
  const char *s = name + 8;
  size_t d1 = strspn (s, "0123456789");
  if (d1 == 0 || s[d1] != '-')
    return false;
  s += d1 + 1;
  size_t d2 = strspn (s, "0123456789");
  return d2 > 0 && s[d2] == '\0';
}

static bool
procs_empty (int dirfd)
{
  int fd = openat (dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char c;
  ssize_t n = read (fd, &c, 1);
  close (fd);
  return n == 0;
}

/* Removes the groups of sandboxes whose supervisor died without removing
 * them (SIGKILL, a crash, power loss of a container): a group of ours
 * whose lock nobody holds and that holds no process.  A group whose lock
 * is free but that still holds processes is left alone: they are not
 * known to be the sandbox's.  Called with `parent_fd` locked exclusively,
 * so no group can be between its mkdir and its lock. */
static void
sweep_stale_groups (int parent_fd)
{
  int dup = fcntl (parent_fd, F_DUPFD_CLOEXEC, 3);
  DIR *d = dup >= 0 ? fdopendir (dup) : NULL;
  if (d == NULL)
    {
      if (dup >= 0)
        close (dup);
      return;
    }
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (e->d_type != DT_DIR || !is_sandbox_group_name (e->d_name))
        continue;
      int g = openat (parent_fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (g < 0)
        continue;
      if (flock (g, LOCK_EX | LOCK_NB) == 0 && procs_empty (g))
        unlinkat (parent_fd, e->d_name, AT_REMOVEDIR);
      close (g);
    }
  closedir (d);
}

/* Creates the group `name` under `parent` and returns it in *out, with
 * *lock an open descriptor of it holding an exclusive flock for as long
 * as the sandbox lives: the lock is how a later run tells a live group
 * from one a killed supervisor left behind.  Only the supervisor keeps the
 * descriptor (close-on-exec: securer-init and the payload drop it), so a
 * group whose supervisor died can be swept while its last processes are
 * still exiting; the sweep therefore also requires it to hold none.
 *
 * `parent` is locked shared around mkdir + flock so that the sweep of
 * stale groups, which needs it exclusively, never sees a group between
 * the two; whoever gets it exclusively first sweeps. */
static int
make_group (const char *parent, const char *name, char **out, int *lock)
{
  int pfd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0)
    return -1;
  if (flock (pfd, LOCK_EX | LOCK_NB) == 0)
    sweep_stale_groups (pfd);
  int rc = -1, e = 0, g = -1;
  char *dir = NULL;
  if (flock (pfd, LOCK_SH) < 0 || asprintf (&dir, "%s/%s", parent, name) < 0)
    {
      e = errno;
      dir = NULL;
      goto out;
    }
  if (mkdirat (pfd, name, 0755) < 0)
    {
      e = errno;
      goto out;
    }
  g = openat (pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (g < 0 || flock (g, LOCK_EX | LOCK_NB) < 0)
    {
      e = errno;
      unlinkat (pfd, name, AT_REMOVEDIR);
      goto out;
    }
  *out = dir;
  *lock = g;
  dir = NULL;
  g = -1;
  rc = 0;
out:
  if (g >= 0)
    close (g);
  free (dir);
  close (pfd);   /* drops the shared lock */
  errno = e;
  return rc;
}

/* rmdir, retrying while the kernel still lists exiting tasks; then the
 * lock is let go. */
static void
remove_group (char **dir, int *lock)
{
  if (*dir == NULL)
    return;
  for (int i = 0; i < 200; i++)
    {
      if (rmdir (*dir) == 0 || errno == ENOENT)
        break;
      if (errno != EBUSY)
        break;
      struct timespec ts = { 0, 5 * 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
  free (*dir);
  *dir = NULL;
  if (*lock >= 0)
    close (*lock);
  *lock = -1;
}

/* ---- report --------------------------------------------------------------- */

struct report {
  char *text;
  bool failed;
};

static void note (struct report *r, bool failure, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

static void
note (struct report *r, bool failure, const char *fmt, ...)
{
  char *line = NULL;
  va_list ap;
  va_start (ap, fmt);
  int n = vasprintf (&line, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  char *joined = NULL;
  if (asprintf (&joined, "%s%s%s", r->text ? r->text : "", r->text ? "; " : "", line) >= 0)
    {
      free (r->text);
      r->text = joined;
    }
  free (line);
  if (failure)
    r->failed = true;
}

/* ---- v2 ------------------------------------------------------------------- */

/* Enables the wanted controllers for the children of `dir`; true if they
 * all are (already or now). */
static bool
v2_delegate (const char *dir, const bool want[CG_N])
{
  for (int c = 0; c < CG_N; c++)
    {
      if (!want[c] || dir_has_controller (dir, "cgroup.subtree_control", ctrl_names[c]))
        continue;
      if (!dir_has_controller (dir, "cgroup.controllers", ctrl_names[c]))
        return false;
      char op[32];
      snprintf (op, sizeof op, "+%s", ctrl_names[c]);
      if (write_file (dir, "cgroup.subtree_control", op) < 0)
        return false;
    }
  return true;
}

/* Creates the v2 group for the controllers in want[] that v2 offers;
 * clears want[c] for each controller it takes. */
static void
v2_setup (struct securer_cgroup *cg, const char *name, bool want[CG_N], struct report *rep)
{
  char *own = own_group_dir ("cgroup2", NULL);
  if (own == NULL)
    return;
  bool v2want[CG_N] = { false };
  bool any = false;
  for (int c = 0; c < CG_N; c++)
    if (want[c] && dir_has_controller (own, "cgroup.controllers", ctrl_names[c]))
      v2want[c] = any = true;
  if (!any)
    {
      free (own);
      return;
    }

  /* Our own group first; if it cannot delegate (it holds processes), a
   * sibling under our parent. */
  char *parent = NULL;
  if (v2_delegate (own, v2want))
    parent = own, own = NULL;
  else
    {
      /* A parent that has children but no processes of its own (a
       * systemd slice, say) may enable them. */
      char *up = parent_dir (own);
      if (up && v2_delegate (up, v2want))
        parent = up;
      else
        free (up);
    }
  if (parent == NULL || make_group (parent, name, &cg->v2_dir, &cg->v2_lock) < 0)
    {
      note (rep, false, "cgroup v2 at %s cannot delegate %s%s%s (%s)", own ? own : parent,
            v2want[CG_MEMORY] ? "memory " : "", v2want[CG_PIDS] ? "pids " : "",
            v2want[CG_CPU] ? "cpu" : "", parent ? strerror (errno) : "controllers not delegated");
      free (own);
      free (parent);
      return;
    }
  free (own);
  free (parent);
  for (int c = 0; c < CG_N; c++)
    if (v2want[c])
      {
        cg->version[c] = 2;
        want[c] = false;
      }
}

static int
v2_apply (struct securer_cgroup *cg, const struct securer_limits *l, struct report *rep)
{
  char buf[64];
  if (cg->version[CG_MEMORY] == 2)
    {
      snprintf (buf, sizeof buf, "%llu", (unsigned long long) l->cgroup_memory);
      if (write_file (cg->v2_dir, "memory.max", buf) < 0)
        {
          note (rep, true, "memory.max not set: %s", strerror (errno));
          cg->version[CG_MEMORY] = 0;
        }
      else
        {
          /* Swap would let the sandbox exceed its memory limit, so a
           * swap limit the kernel offers but refuses fails the memory limit
           * (a refusal in required mode). */
          if (file_exists (cg->v2_dir, "memory.swap.max")
              && write_file (cg->v2_dir, "memory.swap.max", "0") < 0)
            note (rep, true, "memory.swap.max not set: %s", strerror (errno));
          /* Kill the whole group on OOM, not one process of it. */
          if (file_exists (cg->v2_dir, "memory.oom.group")
              && write_file (cg->v2_dir, "memory.oom.group", "1") < 0)
            note (rep, false, "memory.oom.group not set (an OOM kills one process, not the "
                  "sandbox): %s", strerror (errno));
        }
    }
  if (cg->version[CG_PIDS] == 2)
    {
      snprintf (buf, sizeof buf, "%llu", (unsigned long long) l->cgroup_pids);
      if (write_file (cg->v2_dir, "pids.max", buf) < 0)
        {
          note (rep, true, "pids.max not set: %s", strerror (errno));
          cg->version[CG_PIDS] = 0;
        }
    }
  if (cg->version[CG_CPU] == 2)
    {
      uint64_t quota = (uint64_t) l->cgroup_cpu_millis * CPU_PERIOD_US / 1000;
      if (quota < CPU_MIN_QUOTA_US)
        quota = CPU_MIN_QUOTA_US;
      snprintf (buf, sizeof buf, "%llu %u", (unsigned long long) quota, CPU_PERIOD_US);
      if (write_file (cg->v2_dir, "cpu.max", buf) < 0)
        {
          note (rep, true, "cpu.max not set: %s", strerror (errno));
          cg->version[CG_CPU] = 0;
        }
    }
  return 0;
}

/* ---- v1 ------------------------------------------------------------------- */

static void
v1_setup_one (struct securer_cgroup *cg, int c, const char *name, const struct securer_limits *l,
              struct report *rep)
{
  const char *cn = ctrl_names[c];
  char *own = own_group_dir ("cgroup", cn);
  if (own == NULL)
    {
      note (rep, true, "%s controller not available (no cgroup v2 or v1 hierarchy has it)", cn);
      return;
    }
  char *dir = NULL;
  int lock = -1;
  if (make_group (own, name, &dir, &lock) < 0)
    {
      note (rep, true, "cannot create a %s cgroup under %s: %s", cn, own, strerror (errno));
      free (own);
      return;
    }
  free (own);
  cg->v1_dir[c] = dir;
  cg->v1_lock[c] = lock;

  char buf[64];
  int rc = 0;
  const char *what = "";
  switch (c)
    {
    case CG_MEMORY:
      snprintf (buf, sizeof buf, "%llu", (unsigned long long) l->cgroup_memory);
      what = "memory.limit_in_bytes";
      rc = write_file (dir, what, buf);
      if (rc == 0 && file_exists (dir, "memory.memsw.limit_in_bytes")
          && write_file (dir, "memory.memsw.limit_in_bytes", buf) < 0)
        note (rep, true, "memory.memsw.limit_in_bytes not set (swap not limited): %s",
              strerror (errno));
      break;
    case CG_PIDS:
      snprintf (buf, sizeof buf, "%llu", (unsigned long long) l->cgroup_pids);
      what = "pids.max";
      rc = write_file (dir, what, buf);
      break;
    case CG_CPU:
      {
        uint64_t quota = (uint64_t) l->cgroup_cpu_millis * CPU_PERIOD_US / 1000;
        if (quota < CPU_MIN_QUOTA_US)
          quota = CPU_MIN_QUOTA_US;
        snprintf (buf, sizeof buf, "%u", CPU_PERIOD_US);
        what = "cpu.cfs_period_us";
        rc = write_file (dir, what, buf);
        if (rc == 0)
          {
            snprintf (buf, sizeof buf, "%llu", (unsigned long long) quota);
            what = "cpu.cfs_quota_us";
            rc = write_file (dir, what, buf);
          }
        break;
      }
    }
  if (rc < 0)
    {
      note (rep, true, "%s not set: %s", what, strerror (errno));
      remove_group (&cg->v1_dir[c], &cg->v1_lock[c]);
      return;
    }
  cg->version[c] = 1;
}

/* v1 has no memory.oom.group: the OOM killer ends one process and the
 * rest of the sandbox goes on (an R whose mclapply child was killed just
 * warns).  An OOM notification (cgroup.event_control on
 * memory.oom_control) lets the supervisor end the whole sandbox instead,
 * as v2 does by itself. */
static void
v1_watch_oom (struct securer_cgroup *cg, struct report *rep)
{
  const char *dir = cg->v1_dir[CG_MEMORY];
  char path[4096];
  snprintf (path, sizeof path, "%s/memory.oom_control", dir);
  int efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  int ofd = open (path, O_RDONLY | O_CLOEXEC);
  char line[64];
  snprintf (line, sizeof line, "%d %d", efd, ofd);
  if (efd < 0 || ofd < 0 || write_file (dir, "cgroup.event_control", line) < 0)
    {
      note (rep, false, "no OOM notification (an OOM kills one process, not the sandbox): %s",
            strerror (errno));
      if (efd >= 0)
        close (efd);
    }
  else
    cg->oom_fd = efd;
  if (ofd >= 0)
    close (ofd);
}

/* ---- public --------------------------------------------------------------- */

static uint64_t
oom_kills (struct securer_cgroup *cg)
{
  uint64_t n = 0;
  char *text = NULL;
  if (cg->version[CG_MEMORY] == 2)
    text = read_file (cg->v2_dir, "memory.events");
  else if (cg->version[CG_MEMORY] == 1)
    text = read_file (cg->v1_dir[CG_MEMORY], "memory.oom_control");
  if (text != NULL)
    keyed_value (text, "oom_kill", &n);
  free (text);
  return n;
}

int
securer_cgroup_create (const struct securer_policy *p, struct securer_cgroup **out,
                       char **report, securer_err_t *err)
{
  const struct securer_limits *l = &p->limits;
  *out = NULL;
  if (report)
    *report = NULL;
  bool want[CG_N] = { l->cgroup_memory > 0, l->cgroup_pids > 0, l->cgroup_cpu_millis > 0 };
  bool requested[CG_N] = { want[0], want[1], want[2] };
  if (!want[CG_MEMORY] && !want[CG_PIDS] && !want[CG_CPU])
    return 0;
  if (l->cgroup == SECURER_ENFORCE_OFF)
    {
      if (report)
        *report = strdup ("cgroup limits not applied: cgroup enforcement is off in the policy");
      return 0;
    }

  struct securer_cgroup *cg = calloc (1, sizeof *cg);
  char *name = new_group_name ();
  struct report rep = { NULL, false };
  if (cg == NULL || name == NULL)
    {
      free (cg);
      free (name);
      return securer_error_set (err, ENOMEM, "create cgroup");
    }
  cg->v2_lock = cg->oom_fd = -1;
  for (int c = 0; c < CG_N; c++)
    cg->v1_lock[c] = cg->join_fd[c] = -1;

  v2_setup (cg, name, want, &rep);
  if (cg->v2_dir != NULL)
    v2_apply (cg, l, &rep);
  for (int c = 0; c < CG_N; c++)
    if (want[c])
      v1_setup_one (cg, c, name, l, &rep);
  free (name);
  if (cg->version[CG_MEMORY] == 1)
    v1_watch_oom (cg, &rep);

  bool any = false;
  char applied[256] = "";
  for (int c = 0; c < CG_N; c++)
    if (cg->version[c] != 0)
      {
        any = true;
        char value[48], one[80];
        if (c == CG_MEMORY)
          snprintf (value, sizeof value, "%llu bytes", (unsigned long long) l->cgroup_memory);
        else if (c == CG_PIDS)
          snprintf (value, sizeof value, "%llu", (unsigned long long) l->cgroup_pids);
        else
          snprintf (value, sizeof value, "%u.%03u CPUs", l->cgroup_cpu_millis / 1000,
                    l->cgroup_cpu_millis % 1000);
        snprintf (one, sizeof one, "%s%s %s (v%d)", applied[0] ? ", " : "", ctrl_names[c], value,
                  cg->version[c]);
        strncat (applied, one, sizeof applied - strlen (applied) - 1);
      }
    else if (requested[c])
      rep.failed = true;

  if (rep.failed && l->cgroup == SECURER_ENFORCE_REQUIRED)
    {
      securer_cgroup_destroy (cg);
      securer_error_set (err, 0, "cgroup limits are required by the policy but could not be applied: %s",
                         rep.text ? rep.text : "no usable cgroup hierarchy");
      securer_error_set_status (err, SECURER_EXIT_SETUP);
      free (rep.text);
      return -1;
    }
  /* Always said, not only on trouble: in best-effort mode this line is
   * how the caller learns what the sandbox is actually held to. */
  if (report != NULL)
    {
      char *full = NULL;
      if (asprintf (&full, "cgroup limits applied: %s%s%s", applied[0] ? applied : "none",
                    rep.text ? "; " : "", rep.text ? rep.text : "") < 0)
        full = NULL;
      if (report)
        *report = full;
      else
        free (full);
    }
  free (rep.text);
  if (!any)
    {
      securer_cgroup_destroy (cg);
      return 0;
    }
  cg->oom_base = oom_kills (cg);
  *out = cg;
  return 0;
}

/* Moving another process into a group takes the kernel's global
 * threadgroup lock for writing, which waits for an RCU grace period: about
 * 15 ms on an idle 2-CPU machine, most of a launch.  A single thread that
 * moves itself through "tasks" skips that lock (v1).  So the sandbox's
 * init joins its v1 groups itself, through descriptors the parent opened
 * (write permission is checked against the opener). */
int
securer_cgroup_prepare_join (struct securer_cgroup *cg, securer_err_t *err)
{
  for (int c = 0; cg != NULL && c < CG_N; c++)
    {
      if (cg->v1_dir[c] == NULL || cg->join_fd[c] >= 0)
        continue;
      char path[4096];
      snprintf (path, sizeof path, "%s/tasks", cg->v1_dir[c]);
      cg->join_fd[c] = open (path, O_WRONLY | O_CLOEXEC);
      if (cg->join_fd[c] < 0)
        return securer_error_set (err, errno, "open %s", path);
    }
  return 0;
}

int
securer_cgroup_join_self (struct securer_cgroup *cg, securer_err_t *err)
{
  for (int c = 0; cg != NULL && c < CG_N; c++)
    {
      if (cg->join_fd[c] < 0)
        continue;
      ssize_t n = write (cg->join_fd[c], "0", 1);
      int e = errno;
      close (cg->join_fd[c]);
      cg->join_fd[c] = -1;
      if (n != 1)
        return securer_error_set (err, n < 0 ? e : EIO, "join cgroup %s", cg->v1_dir[c]);
    }
  return 0;
}

int
securer_cgroup_add_pid (struct securer_cgroup *cg, pid_t pid, securer_err_t *err)
{
  if (cg == NULL)
    return 0;
  char buf[32];
  snprintf (buf, sizeof buf, "%d", (int) pid);
  if (cg->v2_dir && write_file (cg->v2_dir, "cgroup.procs", buf) < 0)
    return securer_error_set (err, errno, "add pid %d to cgroup %s", (int) pid, cg->v2_dir);
  for (int c = 0; c < CG_N; c++)
    if (cg->join_fd[c] >= 0)
      {
        /* pid joins this one itself; the parent's copy is not needed. */
        close (cg->join_fd[c]);
        cg->join_fd[c] = -1;
      }
    else if (cg->v1_dir[c] && write_file (cg->v1_dir[c], "cgroup.procs", buf) < 0)
      return securer_error_set (err, errno, "add pid %d to cgroup %s", (int) pid, cg->v1_dir[c]);
  return 0;
}

int
securer_cgroup_hand_over (struct securer_cgroup *cg, pid_t pid, int fds[3], unsigned *n, securer_err_t *err)
{
  *n = 0;
  if (cg == NULL)
    return 0;
  if (securer_cgroup_prepare_join (cg, err) < 0)
    return -1;
  char buf[32];
  snprintf (buf, sizeof buf, "%d", (int) pid);
  if (cg->v2_dir && write_file (cg->v2_dir, "cgroup.procs", buf) < 0)
    return securer_error_set (err, errno, "add pid %d to cgroup %s", (int) pid, cg->v2_dir);
  for (int c = 0; c < CG_N; c++)
    if (cg->join_fd[c] >= 0)
      {
        fds[(*n)++] = cg->join_fd[c];
        cg->join_fd[c] = -1;
      }
  return 0;
}

/* Sends SIGKILL to every process listed in dir/cgroup.procs; returns how
 * many were listed. */
static int
kill_listed (const char *dir)
{
  char *procs = read_file (dir, "cgroup.procs");
  if (procs == NULL)
    return 0;
  int n = 0;
  for (char *s = procs; *s;)
    {
      char *end;
      long pid = strtol (s, &end, 10);
      if (end == s)
        break;
      if (pid > 0)
        {
          kill ((pid_t) pid, SIGKILL);
          n++;
        }
      s = end;
      while (*s == '\n')
        s++;
    }
  free (procs);
  return n;
}

int
securer_cgroup_kill_all (struct securer_cgroup *cg)
{
  if (cg == NULL)
    return 0;
  if (cg->v2_dir && file_exists (cg->v2_dir, "cgroup.kill")
      && write_file (cg->v2_dir, "cgroup.kill", "1") == 0)
    return 0;
  /* No cgroup.kill: kill what is listed until nothing is (a process may
   * fork between the read and the kill, hence the loop). */
  for (int round = 0; round < 1000; round++)
    {
      int listed = 0;
      if (cg->v2_dir)
        listed += kill_listed (cg->v2_dir);
      for (int c = 0; c < CG_N; c++)
        if (cg->v1_dir[c])
          listed += kill_listed (cg->v1_dir[c]);
      if (listed == 0)
        return 0;
      struct timespec ts = { 0, 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
  return -1;
}

int
securer_cgroup_oom_fd (const struct securer_cgroup *cg)
{
  return cg != NULL ? cg->oom_fd : -1;
}

int
securer_cgroup_version (const struct securer_cgroup *cg, const char *controller)
{
  for (int c = 0; cg != NULL && c < CG_N; c++)
    if (strcmp (ctrl_names[c], controller) == 0)
      return cg->version[c];
  return 0;
}

bool
securer_cgroup_hit_limit (struct securer_cgroup *cg)
{
  if (cg == NULL || cg->version[CG_MEMORY] == 0)
    return false;
  return oom_kills (cg) > cg->oom_base;
}

void
securer_cgroup_destroy (struct securer_cgroup *cg)
{
  if (cg == NULL)
    return;
  securer_cgroup_kill_all (cg);
  if (cg->oom_fd >= 0)
    close (cg->oom_fd);
  for (int c = 0; c < CG_N; c++)
    if (cg->join_fd[c] >= 0)
      close (cg->join_fd[c]);
  remove_group (&cg->v2_dir, &cg->v2_lock);
  for (int c = 0; c < CG_N; c++)
    remove_group (&cg->v1_dir[c], &cg->v1_lock[c]);
  free (cg);
}
