/* Cgroup limits (cgroup.c): a real process is put into the sandbox's
 * group and runs into the limits; the host side checks what the kernel
 * did and that nothing is left behind. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux.h"
#include "securer/sandbox.h"

#define MAX_DIRS 4

/* The cgroup directories a process is in that belong to a sandbox (from
 * /proc/PID/cgroup and the cgroup mounts). */
static int
sandbox_dirs (pid_t pid, char dirs[MAX_DIRS][512], char ctrls[MAX_DIRS][64])
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/cgroup", (int) pid);
  FILE *f = fopen (path, "re");
  cr_assert_not_null (f);
  char line[512];
  int n = 0;
  while (fgets (line, sizeof line, f) && n < MAX_DIRS)
    {
      line[strcspn (line, "\n")] = '\0';
      char *c1 = strchr (line, ':'), *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL || strstr (c2, "/securer-") == NULL)
        continue;
      *c2 = '\0';
      const char *list = c1 + 1, *group = c2 + 1;
      /* Find the mount of that hierarchy. */
      FILE *mi = fopen ("/proc/self/mountinfo", "re");
      char ml[1024];
      while (mi && fgets (ml, sizeof ml, mi))
        {
          char mp[512], type[64], super[256];
          char *dash = strstr (ml, " - ");
          if (dash == NULL || sscanf (ml, "%*s %*s %*s %*s %511s", mp) != 1
              || sscanf (dash + 3, "%63s %*s %255s", type, super) != 2)
            continue;
          bool v2 = *list == '\0' && strcmp (type, "cgroup2") == 0;
          char needle[80];
          snprintf (needle, sizeof needle, ",%s", strtok (strdupa (list), ","));
          bool v1 = *list != '\0' && strcmp (type, "cgroup") == 0 && strstr (super, needle) != NULL;
          if (v1 || v2)
            {
              snprintf (dirs[n], sizeof dirs[n], "%s%s", mp, group);
              snprintf (ctrls[n], sizeof ctrls[n], "%s", v2 ? "v2" : list);
              n++;
              break;
            }
        }
      if (mi)
        fclose (mi);
    }
  fclose (f);
  return n;
}

static char *
slurp (const char *dir, const char *name)
{
  char path[600];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return NULL;
  static char buf[256];
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  return buf;
}

struct child {
  pid_t pid;
  int go;      /* write end: releases the child */
  int report;  /* read end: what the child saw */
};

/* Forks a child that waits until it has been placed in the cgroup. */
static struct child
start_child (void (*body) (int out))
{
  int go[2], rep[2];
  cr_assert_eq (pipe2 (go, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (rep, O_CLOEXEC), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      close (go[1]);
      close (rep[0]);
      char c;
      if (read (go[0], &c, 1) != 1)
        _exit (2);
      body (rep[1]);
      _exit (0);
    }
  close (go[0]);
  close (rep[1]);
  return (struct child) { pid, go[1], rep[0] };
}

static void
release (struct child *ch)
{
  cr_assert_eq (write (ch->go, "g", 1), 1);
  close (ch->go);
}

/* The group of the running test, destroyed by the fixture even when an
 * assertion ends the test early, so a failing run leaves nothing behind. */
static struct securer_cgroup *test_cg;

static void
destroy_test_cg (void)
{
  securer_cgroup_destroy (test_cg);
  test_cg = NULL;
}

static struct securer_cgroup *
create_or_skip (struct securer_policy *p)
{
  struct securer_cgroup *cg = NULL;
  char *report = NULL;
  securer_err_t err = NULL;
  int rc = securer_cgroup_create (p, &cg, &report, &err);
  if (rc < 0 && geteuid () != 0)
    cr_skip_test ("no writable cgroup for this user: %s", securer_error_message (err));
  cr_assert_eq (rc, 0, "%s", err ? securer_error_message (err) : "");
  cr_assert_not_null (cg);
  test_cg = cg;
  if (report)
    cr_log_info ("%s", report);
  free (report);
  return cg;
}

/* start_child, placed in `cg`, with the group directories it is in. */
static struct child
start_child_in (struct securer_cgroup *cg, void (*body) (int out), char dirs[MAX_DIRS][512],
                char ctrls[MAX_DIRS][64], int *n)
{
  struct child ch = start_child (body);
  securer_err_t err = NULL;
  cr_assert_eq (securer_cgroup_add_pid (cg, ch.pid, &err), 0, "%s",
                err ? securer_error_message (err) : "");
  *n = sandbox_dirs (ch.pid, dirs, ctrls);
  cr_assert_geq (*n, 1);
  return ch;
}

static void
allocate_forever (int out)
{
  (void) out;
  /* Kept reachable and written through volatile so that no compiler can
   * drop the allocations as dead. */
  static char *volatile keep[4096];
  for (size_t i = 0; i < 4096; i++)
    {
      char *b = malloc (1 << 20);
      if (b == NULL)
        _exit (3);
      for (size_t j = 0; j < (1 << 20); j += 4096)
        ((volatile char *) b)[j] = 1;
      keep[i] = b;
    }
  _exit (keep[0] != NULL ? 4 : 5);
}

Test (cgroup, memory_limit_oom_kills_and_is_reported, .fini = destroy_test_cg)
{
  struct securer_policy p = { .name = (char *) "t" };
  p.limits.cgroup_memory = 32 << 20;
  p.limits.cgroup = SECURER_ENFORCE_REQUIRED;
  struct securer_cgroup *cg = create_or_skip (&p);
  cr_assert_not (securer_cgroup_hit_limit (cg));

  char dirs[MAX_DIRS][512], ctrls[MAX_DIRS][64];
  int n;
  struct child ch = start_child_in (cg, allocate_forever, dirs, ctrls, &n);
  for (int i = 0; i < n; i++)
    {
      const char *v = strcmp (ctrls[i], "v2") == 0 ? slurp (dirs[i], "memory.max")
                                                   : slurp (dirs[i], "memory.limit_in_bytes");
      if (strcmp (ctrls[i], "v2") == 0 || strstr (ctrls[i], "memory"))
        cr_assert_str_eq (v, "33554432");
    }
  release (&ch);
  int st;
  cr_assert_eq (waitpid (ch.pid, &st, 0), ch.pid);
  cr_assert (WIFSIGNALED (st), "status %#x", st);
  cr_assert_eq (WTERMSIG (st), SIGKILL);
  cr_assert (securer_cgroup_hit_limit (cg));
  close (ch.report);
  destroy_test_cg ();
  for (int i = 0; i < n; i++)
    cr_assert_neq (access (dirs[i], F_OK), 0, "%s left behind", dirs[i]);
}

static void
fork_until_refused (int out)
{
  int made = 0, e = 0;
  for (; made < 64; made++)
    {
      pid_t p = fork ();
      if (p < 0)
        {
          e = errno;
          break;
        }
      if (p == 0)
        {
          pause ();
          _exit (0);
        }
    }
  dprintf (out, "%d %s", made, strerrorname_np (e) ? strerrorname_np (e) : "none");
  close (out);
  pause ();
}

Test (cgroup, pids_limit_makes_fork_fail_and_kill_all_empties_the_group, .fini = destroy_test_cg)
{
  struct securer_policy p = { .name = (char *) "t" };
  p.limits.cgroup_pids = 8;
  p.limits.cgroup_cpu_millis = 500;
  p.limits.cgroup = SECURER_ENFORCE_REQUIRED;
  struct securer_cgroup *cg = create_or_skip (&p);
  char dirs[MAX_DIRS][512], ctrls[MAX_DIRS][64];
  int n;
  struct child ch = start_child_in (cg, fork_until_refused, dirs, ctrls, &n);
  bool saw_cpu = false;
  for (int i = 0; i < n; i++)
    {
      if (strcmp (ctrls[i], "v2") == 0)
        {
          cr_assert_str_eq (slurp (dirs[i], "pids.max"), "8");
          cr_assert_str_eq (slurp (dirs[i], "cpu.max"), "50000 100000");
          saw_cpu = true;
        }
      else if (strstr (ctrls[i], "pids"))
        cr_assert_str_eq (slurp (dirs[i], "pids.max"), "8");
      else if (strstr (ctrls[i], "cpu"))
        {
          cr_assert_str_eq (slurp (dirs[i], "cpu.cfs_quota_us"), "50000");
          cr_assert_str_eq (slurp (dirs[i], "cpu.cfs_period_us"), "100000");
          saw_cpu = true;
        }
    }
  cr_assert (saw_cpu);

  release (&ch);
  char buf[64] = "";
  ssize_t r = read (ch.report, buf, sizeof buf - 1);
  buf[r > 0 ? r : 0] = '\0';
  close (ch.report);
  /* The child itself counts: 7 more processes fit under pids.max = 8. */
  cr_assert_str_eq (buf, "7 EAGAIN");

  cr_assert_eq (securer_cgroup_kill_all (cg), 0);
  int st;
  cr_assert_eq (waitpid (ch.pid, &st, 0), ch.pid);
  cr_assert (WIFSIGNALED (st) && WTERMSIG (st) == SIGKILL);
  cr_assert_not (securer_cgroup_hit_limit (cg));
  destroy_test_cg ();
  for (int i = 0; i < n; i++)
    cr_assert_neq (access (dirs[i], F_OK), 0, "%s left behind", dirs[i]);
}

static void
do_nothing (int out)
{
  (void) out;
}

/* A group whose process is gone but whose sandbox still holds it (between
 * create and add_pid, or after the payload exited) is not a leftover:
 * another launch's sweep of stale groups must not remove it. */
Test (cgroup, live_empty_group_survives_the_sweep_of_another_launch, .fini = destroy_test_cg)
{
  struct securer_policy p = { .name = (char *) "t" };
  p.limits.cgroup_pids = 8;
  p.limits.cgroup = SECURER_ENFORCE_REQUIRED;
  struct securer_cgroup *cg = create_or_skip (&p);
  char dirs[MAX_DIRS][512], ctrls[MAX_DIRS][64];
  int n;
  struct child ch = start_child_in (cg, do_nothing, dirs, ctrls, &n);
  release (&ch);
  close (ch.report);
  cr_assert_eq (waitpid (ch.pid, NULL, 0), ch.pid);

  /* The next launch sweeps the same parents. */
  securer_err_t err = NULL;
  struct securer_cgroup *other = NULL;
  cr_assert_eq (securer_cgroup_create (&p, &other, NULL, &err), 0, "%s",
                err ? securer_error_message (err) : "");
  securer_cgroup_destroy (other);
  for (int i = 0; i < n; i++)
    cr_assert_eq (access (dirs[i], F_OK), 0, "%s was taken for a leftover", dirs[i]);
  destroy_test_cg ();
  for (int i = 0; i < n; i++)
    cr_assert_neq (access (dirs[i], F_OK), 0, "%s left behind", dirs[i]);
}

Test (cgroup, no_limits_means_no_cgroup)
{
  struct securer_policy p = { .name = (char *) "t" };
  p.limits.cgroup = SECURER_ENFORCE_REQUIRED;
  struct securer_cgroup *cg = (struct securer_cgroup *) 1;
  char *report = (char *) 1;
  cr_assert_eq (securer_cgroup_create (&p, &cg, &report, NULL), 0);
  cr_assert_null (cg);
  cr_assert_null (report);
}

/* Without write access to any cgroup (host uid nobody): required fails
 * with the setup exit status, best effort reports what was not applied. */
Test (cgroup, unavailable_cgroup_required_fails_best_effort_reports)
{
  int pfd[2];
  cr_assert_eq (pipe (pfd), 0);
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (pfd[0]);
      if (geteuid () == 0 && (setgroups (0, NULL) < 0 || setgid (65534) < 0 || setuid (65534) < 0))
        _exit (1);
      struct securer_policy p = { .name = (char *) "t" };
      p.limits.cgroup_memory = 64 << 20;
      p.limits.cgroup_pids = 10;
      p.limits.cgroup = SECURER_ENFORCE_REQUIRED;
      struct securer_cgroup *cg = NULL;
      char *report = NULL;
      securer_err_t err = NULL;
      int rc = securer_cgroup_create (&p, &cg, &report, &err);
      dprintf (pfd[1], "required=%d|%d|%s\n", rc, err ? err->status : -1,
               err ? securer_error_message (err) : "");
      securer_error_free (&err);
      securer_cgroup_destroy (cg);
      free (report);
      p.limits.cgroup = SECURER_ENFORCE_BEST_EFFORT;
      rc = securer_cgroup_create (&p, &cg, &report, &err);
      dprintf (pfd[1], "best=%d|%s|%s\n", rc, cg ? "cg" : "nocg", report ? report : "");
      securer_cgroup_destroy (cg);
      free (report);
      _exit (0);
    }
  close (pfd[1]);
  char buf[4096] = "";
  size_t len = 0;
  ssize_t r;
  while ((r = read (pfd[0], buf + len, sizeof buf - 1 - len)) > 0)
    len += (size_t) r;
  buf[len] = '\0';
  close (pfd[0]);
  int st;
  waitpid (pid, &st, 0);
  cr_log_info ("%s", buf);
  if (strstr (buf, "required=0"))
    cr_skip_test ("this host lets unprivileged users create cgroups");
  char expect[64];
  snprintf (expect, sizeof expect, "required=-1|%d|", SECURER_EXIT_SETUP);
  cr_assert_not_null (strstr (buf, expect), "%s", buf);
  cr_assert_not_null (strstr (buf, "cgroup limits are required by the policy"), "%s", buf);
  cr_assert_not_null (strstr (buf, "best=0|nocg|cgroup limits applied: none"), "%s", buf);
  cr_assert_not_null (strstr (buf, "memory"), "%s", buf);
}
