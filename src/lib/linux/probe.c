/* `securer probe`: asks the kernel what it offers, by trying each feature
 * rather than reading version numbers or sysctls. */
#include <config.h>

#include <errno.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch.h"
#include "securer/probe.h"

static long
sys_seccomp (unsigned op, unsigned flags, void *arg)
{
  return syscall (SYS_seccomp, op, flags, arg);
}

static bool
action_avail (uint32_t action)
{
  return sys_seccomp (SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* Runs fn in a forked child (optionally as the unprivileged user 65534);
 * true when it exits 0.  Keeps this process's namespaces and ids intact. */
static bool
in_child (bool drop_to_nobody, int (*fn) (void))
{
  pid_t c = fork ();
  if (c < 0)
    return false;
  if (c == 0)
    {
      if (drop_to_nobody && geteuid () == 0
          && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
              || setresuid (65534, 65534, 65534) < 0))
        _exit (2);
      _exit (fn () == 0 ? 0 : 1);
    }
  int st;
  while (waitpid (c, &st, 0) < 0)
    if (errno != EINTR)
      return false;
  return WIFEXITED (st) && WEXITSTATUS (st) == 0;
}

static int
try_userns (void)
{
  return unshare (CLONE_NEWUSER);
}

static int
try_clone3 (void)
{
  /* A zero-sized argument is rejected with EINVAL by a kernel that has clone3. */
  long r = syscall (SYS_clone3, NULL, 0);
  return r < 0 && errno == EINVAL ? 0 : -1;
}

/* The caller's group in a hierarchy: the line of /proc/self/cgroup whose
 * controller list is `ctrl` ("" for v2). */
static bool
own_group_writable (const char *mount, const char *ctrl)
{
  FILE *f = fopen ("/proc/self/cgroup", "re");
  if (f == NULL)
    return false;
  char line[4096];
  bool ok = false;
  while (fgets (line, sizeof line, f) != NULL)
    {
      char *c1 = strchr (line, ':');
      char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL)
        continue;
      *c2 = '\0';
      const char *list = c1 + 1;
      char *path = c2 + 1;
      path[strcspn (path, "\n")] = '\0';
      bool match = ctrl[0] == '\0' ? list[0] == '\0' : strstr (list, ctrl) != NULL;
      if (!match)
        continue;
      char dir[4200];
      snprintf (dir, sizeof dir, "%s%s", mount, path);
      ok = access (dir, W_OK) == 0;
      break;
    }
  fclose (f);
  return ok;
}

static void
probe_host_ids (struct securer_probe *pr)
{
  securer_err_t e = NULL;
  if (securer_hostids_range (&pr->host_ids_first, &pr->host_ids_count, &e) < 0)
    goto no;
  if (geteuid () != 0)
    {
      snprintf (pr->host_ids_why, sizeof pr->host_ids_why,
                "the caller is not root: its sandboxes run as its own uid, host=pool is refused");
      return;
    }
  struct host_id_lease l = { -1, 0 };
  if (securer_hostids_acquire (&l, &e) < 0)
    goto no;
  securer_hostids_release (&l);
  pr->host_ids = true;
  return;
no:
  snprintf (pr->host_ids_why, sizeof pr->host_ids_why, "%s", securer_error_message (e));
  securer_error_free (&e);
}

/* What a launch would get: the same code makes a group with all three
 * limits (best effort, so that it says what failed) and removes it. */
static void
probe_cgroup_limits (struct securer_probe *pr)
{
  struct securer_policy p;
  memset (&p, 0, sizeof p);
  p.limits.cgroup = SECURER_ENFORCE_BEST_EFFORT;
  p.limits.cgroup_memory = 64u << 20;
  p.limits.cgroup_pids = 16;
  p.limits.cgroup_cpu_millis = 1000;
  struct securer_cgroup *cg = NULL;
  char *report = NULL;
  if (securer_cgroup_create (&p, &cg, &report, NULL) == 0)
    pr->cgroup_limits = securer_cgroup_version (cg, "memory") != 0
                        && securer_cgroup_version (cg, "pids") != 0
                        && securer_cgroup_version (cg, "cpu") != 0;
  snprintf (pr->cgroup_limits_report, sizeof pr->cgroup_limits_report, "%s",
            report ? report : "no report");
  free (report);
  securer_cgroup_destroy (cg);
}

int
securer_probe_kernel (struct securer_probe *pr, securer_err_t *err)
{
  memset (pr, 0, sizeof *pr);
  pr->userns = in_child (false, try_userns);
  pr->userns_unprivileged = in_child (true, try_userns);
  pr->landlock_abi = securer_landlock_abi ();

  pr->seccomp = prctl (PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  pr->act_kill_process = action_avail (SECCOMP_RET_KILL_PROCESS);
  pr->act_kill_thread = action_avail (SECCOMP_RET_KILL_THREAD);
  pr->act_trap = action_avail (SECCOMP_RET_TRAP);
  pr->act_errno = action_avail (SECCOMP_RET_ERRNO);
  pr->act_trace = action_avail (SECCOMP_RET_TRACE);
  pr->act_log = action_avail (SECCOMP_RET_LOG);
  pr->act_user_notif = action_avail (SECCOMP_RET_USER_NOTIF);
  pr->act_allow = action_avail (SECCOMP_RET_ALLOW);
  struct seccomp_notif_sizes sizes;
  pr->seccomp_notify = pr->act_user_notif && sys_seccomp (SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0;

  struct statfs sf;
  if (statfs ("/sys/fs/cgroup", &sf) == 0)
    {
      if (sf.f_type == CGROUP2_SUPER_MAGIC)
        {
          pr->cgroup_version = 2;
          pr->cgroup_v2_writable = own_group_writable ("/sys/fs/cgroup", "");
        }
      else
        {
          struct statfs u;
          bool hybrid = statfs ("/sys/fs/cgroup/unified", &u) == 0 && u.f_type == CGROUP2_SUPER_MAGIC;
          pr->cgroup_version = hybrid ? 3 : 1;
          if (hybrid)
            pr->cgroup_v2_writable = own_group_writable ("/sys/fs/cgroup/unified", "");
          pr->cgroup_v1_writable = own_group_writable ("/sys/fs/cgroup/memory", "memory")
                                   && own_group_writable ("/sys/fs/cgroup/pids", "pids");
        }
    }

  probe_cgroup_limits (pr);
  pr->clone3 = try_clone3 () == 0;
  int pfd = pidfd_open (getpid (), 0);
  pr->pidfd = pfd >= 0;
  if (pfd >= 0)
    {
      /* Our own fd 0..2 may be closed; pfd itself is always there. */
      int dup = (int) syscall (SYS_pidfd_getfd, pfd, pfd, 0);
      pr->pidfd_getfd = dup >= 0;
      if (dup >= 0)
        close (dup);
      close (pfd);
    }
  probe_host_ids (pr);
  /* An empty range far above any open fd: supported kernels return 0. */
  pr->close_range = syscall (SYS_close_range, 1u << 30, 1u << 30, 0) == 0;
  (void) err;
  return 0;
}
