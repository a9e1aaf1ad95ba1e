/* The filesystem view, network and cgroup limits through the whole
 * launcher (securer_sandbox_spawn): tests/helpers/fsprobe runs in a real
 * sandbox and reports what it could do. */
#include <config.h>

#include <criterion/criterion.h>
#include <sys/stat.h>

/* The shared helpers are static; this file does not use all of them. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "run-util.h"

static char *
fsprobe_path (void)
{
  char *p = NULL;
  if (asprintf (&p, "%s/tests/helpers/fsprobe", builddir ()) < 0)
    abort ();
  return p;
}

/* Runs fsprobe with the given commands under p; returns its report. */
static void
run_fsprobe (struct securer_policy *p, const char *const *cmds, struct run_result *r)
{
  char *argv[32];
  size_t n = 0;
  argv[n++] = fsprobe_path ();
  for (; cmds[n - 1] != NULL && n < 31; n++)
    argv[n] = (char *) cmds[n - 1];
  argv[n] = NULL;
  struct securer_spawn_opts o = opts_for (p, argv);
  run_in_sandbox (&o, r);
  free (argv[0]);
}

static void
assert_kv (const char *out, const char *key, const char *want)
{
  char *v = kv (out, key);
  cr_assert_not_null (v, "no %s in:\n%s", key, out);
  cr_assert_str_eq (v, want, "%s", key);
  free (v);
}

static char *
host_dir (void)
{
  char *d = xstrdup ("/tmp/securer-fs-XXXXXX");
  cr_assert_not_null (mkdtemp (d));
  /* The sandbox user is the caller, or nobody when the caller is root. */
  cr_assert_eq (chmod (d, 0777), 0);
  return d;
}

Test (fs, view_through_the_launcher)
{
  struct securer_policy *p = test_policy ();
  char *d = host_dir ();
  add_mount (p, SECURER_MOUNT_RW, d, "/data");
  struct run_result r;
  const char *cmds[] = {
    "statvfs", "/", "statvfs", "/usr", "statvfs", "/tmp", "statvfs", "/data",
    "write", "/usr/x", "write", "/x", "write", "/tmp/x", "exec", "/tmp/x",
    "write", "/data/x", "exec", "/data/x", "exec", "/usr/bin/true",
    "read", "/proc/keys", "write", "/dev/x", "connect-lo", "mounts", NULL,
  };
  run_fsprobe (p, cmds, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  cr_log_info ("%s", r.out);
  assert_kv (r.out, "statvfs:/", "ro,nosuid,nodev,");
  assert_kv (r.out, "statvfs:/usr", "ro,nosuid,nodev,");
  assert_kv (r.out, "statvfs:/tmp", "rw,nosuid,nodev,noexec,");
  assert_kv (r.out, "statvfs:/data", "rw,nosuid,nodev,noexec,");
  assert_kv (r.out, "write:/usr/x", "EROFS");
  assert_kv (r.out, "write:/x", "EROFS");
  assert_kv (r.out, "write:/tmp/x", "OK");
  assert_kv (r.out, "exec:/tmp/x", "EACCES");
  assert_kv (r.out, "write:/data/x", "OK");
  assert_kv (r.out, "exec:/data/x", "EACCES");
  assert_kv (r.out, "exec:/usr/bin/true", "exit:0");
  assert_kv (r.out, "read:/proc/keys", "0");
  assert_kv (r.out, "write:/dev/x", "EROFS");
  assert_kv (r.out, "connect-lo", "OK");
  char *mounts = kv (r.out, "mounts");
  cr_assert_not_null (mounts);
  char *save = NULL;
  for (char *mp = strtok_r (mounts, " ", &save); mp; mp = strtok_r (NULL, " ", &save))
    {
      char *h = helpers_dir ();
      bool ours = strcmp (mp, "/") == 0 || strcmp (mp, "/usr") == 0 || strcmp (mp, "/tmp") == 0
                  || strcmp (mp, "/data") == 0 || strcmp (mp, h) == 0
                  || strncmp (mp, "/proc", 5) == 0 || strncmp (mp, "/dev", 4) == 0;
      free (h);
      cr_expect (ours, "unexpected mount %s in the sandbox", mp);
    }
  free (mounts);

  /* The rw bind wrote to the host. */
  char path[256];
  snprintf (path, sizeof path, "%s/x", d);
  cr_assert_eq (access (path, F_OK), 0);
  unlink (path);
  rmdir (d);
  free (d);
  run_result_clear (&r);
  test_policy_free (p);
}

Test (fs, network_none_has_nothing_reachable)
{
  struct securer_policy *p = test_policy ();
  p->network = SECURER_NET_NONE;
  struct run_result r;
  const char *cmds[] = { "connect-lo", NULL };
  run_fsprobe (p, cmds, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  assert_kv (r.out, "connect-lo", "ENETUNREACH");
  run_result_clear (&r);
  test_policy_free (p);
}

Test (fs, missing_source_fails_setup_with_the_mount_named)
{
  struct securer_policy *p = test_policy ();
  add_mount (p, SECURER_MOUNT_RO, "/nonexistent-securer-source", "/opt/x");
  struct run_result r;
  const char *cmds[] = { "mounts", NULL };
  run_fsprobe (p, cmds, &r);
  cr_assert_eq (r.spawn_rc == 0 ? r.st.exit_code : r.spawn_status, SECURER_EXIT_SETUP,
                "rc %d status %d exit %d", r.spawn_rc, r.spawn_status, r.st.exit_code);
  if (r.spawn_rc < 0)
    {
      cr_assert_not_null (strstr (r.spawn_msg, "bind /nonexistent-securer-source on /opt/x"),
                          "%s", r.spawn_msg);
      cr_assert_not_null (strstr (r.spawn_msg, "ENOENT"), "%s", r.spawn_msg);
    }
  run_result_clear (&r);
  test_policy_free (p);
}

/* With a filter to send, the parent may still be sending it while the
 * child, already failed, closes its end: the child's own error must be what
 * is reported every time (never "send the seccomp filter: EPIPE" or "read
 * from the sandbox: ECONNRESET").  The race is lost often enough that a few
 * hundred launches find it. */
Test (fs, setup_error_survives_the_filter_in_flight, .timeout = 300)
{
  struct securer_policy *p = test_policy ();
  p->seccomp.enabled = true;
  add_mount (p, SECURER_MOUNT_RO, "/nonexistent-securer-source", "/opt/x");
  const char *cmds[] = { "mounts", NULL };
  for (int i = 0; i < 300; i++)
    {
      struct run_result r;
      run_fsprobe (p, cmds, &r);
      cr_assert_eq (r.spawn_rc, -1, "launch %d ran", i);
      cr_assert_eq (r.spawn_status, SECURER_EXIT_SETUP, "launch %d: %s", i, r.spawn_msg);
      cr_assert_not_null (strstr (r.spawn_msg, "bind /nonexistent-securer-source on /opt/x"),
                          "launch %d: %s", i, r.spawn_msg);
      run_result_clear (&r);
    }
  test_policy_free (p);
}

static bool
can_use_cgroups (void)
{
  return geteuid () == 0;
}

Test (fs, cgroup_memory_limit_kills_and_reports_limit)
{
  if (!can_use_cgroups ())
    cr_skip_test ("cgroups need root or a delegated cgroup");
  struct securer_policy *p = test_policy ();
  p->limits.cgroup_memory = 32 << 20;
  p->limits.cgroup = SECURER_ENFORCE_REQUIRED;
  struct run_result r;
  const char *cmds[] = { "alloc", "512", NULL };
  run_fsprobe (p, cmds, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  cr_assert_null (strstr (r.out, "alloc=done"), "%s", r.out);
  cr_assert_not (r.st.exited);
  cr_assert_eq (r.st.signal, SIGKILL);
  cr_assert_eq (r.st.reason, SECURER_KILL_LIMIT);
  run_result_clear (&r);
  test_policy_free (p);
}

Test (fs, cgroup_pids_limit_refuses_fork)
{
  if (!can_use_cgroups ())
    cr_skip_test ("cgroups need root or a delegated cgroup");
  struct securer_policy *p = test_policy ();
  p->limits.cgroup_pids = 10;
  p->limits.cgroup = SECURER_ENFORCE_REQUIRED;
  struct run_result r;
  const char *cmds[] = { "forks", "50", NULL };
  run_fsprobe (p, cmds, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  char *v = kv (r.out, "forks");
  cr_assert_not_null (v, "%s", r.out);
  long made = strtol (v, NULL, 10);
  /* pid 1 and fsprobe count as well. */
  cr_assert_eq (made, 8, "%s", v);
  cr_assert_not_null (strstr (v, "EAGAIN"), "%s", v);
  free (v);
  run_result_clear (&r);
  test_policy_free (p);
}

/* `mount proc subset=pid`: the processes' own entries are there, every
 * host-wide one is gone (not merely emptied), and nothing was mounted on
 * the procfs to hide them. */
Test (fs, proc_subset_pid_shows_processes_only)
{
  struct securer_policy *p = test_policy ();
  for (size_t i = 0; i < p->n_mounts; i++)
    if (p->mounts[i].type == SECURER_MOUNT_PROC)
      p->mounts[i].pid_only = true;
  struct run_result r;
  const char *cmds[] = {
    "read", "/proc/self/status", "read", "/proc/1/status", "read", "/proc/meminfo",
    "read", "/proc/keys", "read", "/proc/loadavg", "read", "/proc/sys/kernel/hostname",
    "read", "/proc/sysrq-trigger", "mounts", NULL,
  };
  run_fsprobe (p, cmds, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  cr_log_info ("%s", r.out);
  assert_kv (r.out, "read:/proc/self/status", "data");
  assert_kv (r.out, "read:/proc/1/status", "data");
  assert_kv (r.out, "read:/proc/meminfo", "ENOENT");
  assert_kv (r.out, "read:/proc/keys", "ENOENT");
  assert_kv (r.out, "read:/proc/loadavg", "ENOENT");
  assert_kv (r.out, "read:/proc/sys/kernel/hostname", "ENOENT");
  assert_kv (r.out, "read:/proc/sysrq-trigger", "ENOENT");
  char *mounts = kv (r.out, "mounts");
  cr_assert_not_null (mounts);
  char *save = NULL;
  for (char *mp = strtok_r (mounts, " ", &save); mp; mp = strtok_r (NULL, " ", &save))
    cr_expect (strncmp (mp, "/proc/", 6) != 0, "mount %s below a subset=pid procfs", mp);
  free (mounts);
  run_result_clear (&r);
  test_policy_free (p);
}

/* The entries only host root may open (mode 0400 on this kernel) are left
 * as they are, since the sandbox never has host root's uid: opening them
 * fails with EACCES, and nothing is mounted on them.  Those the kernel
 * lets others read are masked (an empty file). */
Test (fs, proc_entries_only_host_root_may_open)
{
  static const char *const names[] = { "kcore", "kmsg", "kpagecount", "kpageflags", "kpagecgroup",
                                       "timer_list" };
  struct securer_policy *p = test_policy ();
  const char *cmds[2 * 6 + 2];
  char paths[6][32];
  size_t n = 0;
  for (size_t i = 0; i < 6; i++)
    {
      snprintf (paths[i], sizeof paths[i], "/proc/%s", names[i]);
      cmds[n++] = "read";
      cmds[n++] = paths[i];
    }
  cmds[n++] = "mounts";
  cmds[n] = NULL;
  struct run_result r;
  run_fsprobe (p, cmds, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  cr_log_info ("%s", r.out);
  char *mounts = kv (r.out, "mounts");
  cr_assert_not_null (mounts);
  size_t closed = 0;
  for (size_t i = 0; i < 6; i++)
    {
      struct stat st;
      if (stat (paths[i], &st) < 0)
        continue;
      char key[256], padded[256];
      snprintf (key, sizeof key, "read:%s", paths[i]);
      snprintf (padded, sizeof padded, " %s ", paths[i]);
      char *spaced = NULL;
      cr_assert_geq (asprintf (&spaced, " %s ", mounts), 0);
      bool mounted = strstr (spaced, padded) != NULL;
      free (spaced);
      if ((st.st_mode & 077) == 0)
        {
          assert_kv (r.out, key, "EACCES");
          cr_expect (!mounted, "%s is mounted over", paths[i]);
          closed++;
        }
      else
        {
          assert_kv (r.out, key, "0");
          cr_expect (mounted, "%s is not masked", paths[i]);
        }
    }
  cr_log_info ("%zu entries only host root may open", closed);
  free (mounts);
  run_result_clear (&r);
  test_policy_free (p);
}

/* `mount proc unmasked`: the host-wide entries as the kernel shows them
 * (data, the host's own boot id), nothing mounted below the procfs but
 * its read-only entries, which stay read-only. */
Test (fs, proc_unmasked_shows_the_host_wide_entries)
{
  struct securer_policy *p = test_policy ();
  for (size_t i = 0; i < p->n_mounts; i++)
    if (p->mounts[i].type == SECURER_MOUNT_PROC)
      p->mounts[i].unmasked = true;
  struct run_result r;
  const char *cmds[] = {
    "read", "/proc/loadavg", "read", "/proc/cmdline", "read", "/proc/keys",
    "write", "/proc/sys/kernel/hostname", "cat", "/proc/sys/kernel/random/boot_id", "mounts", NULL,
  };
  run_fsprobe (p, cmds, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  cr_log_info ("%s", r.out);
  assert_kv (r.out, "read:/proc/loadavg", "data");
  assert_kv (r.out, "read:/proc/cmdline", "data");
  assert_kv (r.out, "write:/proc/sys/kernel/hostname", "EROFS");
  char host[64] = "";
  FILE *f = fopen ("/proc/sys/kernel/random/boot_id", "r");
  cr_assert_not_null (f);
  cr_assert_not_null (fgets (host, sizeof host, f));
  fclose (f);
  host[strcspn (host, "\n")] = '\0';
  assert_kv (r.out, "cat:/proc/sys/kernel/random/boot_id", host);
  static const char *const readonly[] = { "/proc/sys", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sysrq-trigger" };
  char *mounts = kv (r.out, "mounts");
  cr_assert_not_null (mounts);
  char *save = NULL;
  for (char *mp = strtok_r (mounts, " ", &save); mp; mp = strtok_r (NULL, " ", &save))
    {
      if (strncmp (mp, "/proc/", 6) != 0)
        continue;
      bool ro = false;
      for (size_t i = 0; i < sizeof readonly / sizeof *readonly; i++)
        ro = ro || strcmp (mp, readonly[i]) == 0;
      cr_expect (ro, "%s is mounted over in an unmasked procfs", mp);
    }
  free (mounts);
  run_result_clear (&r);
  test_policy_free (p);
}
