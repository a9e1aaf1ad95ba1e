/* The launcher, checked from inside real sandboxes with tests/helpers/probe. */
#include <config.h>

#include <criterion/criterion.h>
#include <grp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "run-util.h"

static struct securer_policy *pol;
static char *probe;

static void
setup (void)
{
  pol = test_policy ();
  probe = probe_path ();
}

static void
teardown (void)
{
  test_policy_free (pol);
  free (probe);
}

TestSuite (run, .init = setup, .fini = teardown, .timeout = 60);

/* Runs the probe with args and asserts it exited 0; returns its output. */
static char *
probe_ok (char **args)
{
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "spawn failed: %s", r.spawn_msg);
  cr_assert (r.st.exited && r.st.exit_code == 0, "probe ended with exited=%d code=%d signal=%d",
             r.st.exited, r.st.exit_code, r.st.signal);
  char *out = r.out;
  r.out = NULL;
  run_result_clear (&r);
  return out;
}

static void
assert_kv (const char *out, const char *key, const char *want)
{
  char *v = kv (out, key);
  cr_assert_not_null (v, "no %s in probe output:\n%s", key, out);
  cr_assert_str_eq (v, want, "%s", key);
  free (v);
}

Test (run, uid_gid_maps_and_ids)
{
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "uid", "1000");
  assert_kv (out, "euid", "1000");
  assert_kv (out, "gid", "1000");
  char want[64];
  if (geteuid () == 0)
    {
      /* A root caller's sandbox gets a host id of its own from the
       * default range, the same number for uid and gid. */
      char *um = kv (out, "uid_map"), *gm = kv (out, "gid_map");
      unsigned inside = 0, host = 0, count = 0;
      cr_assert_not_null (um);
      cr_assert_eq (sscanf (um, "%u %u %u", &inside, &host, &count), 3, "%s", um);
      cr_assert_eq (inside, 1000);
      cr_assert_eq (count, 1);
      cr_assert (host >= 0x7e000000u && host < 0x7e000000u + 65536u, "host uid %u outside the pool", host);
      snprintf (want, sizeof want, "1000 %u 1", host);
      cr_assert_str_eq (gm, want);
      free (um);
      free (gm);
    }
  else
    {
      snprintf (want, sizeof want, "1000 %u 1", geteuid ());
      assert_kv (out, "uid_map", want);
      snprintf (want, sizeof want, "1000 %u 1", getegid ());
      assert_kv (out, "gid_map", want);
    }
  /* Root's supplementary groups (gid 0 among them) are gone; an
   * unprivileged caller's sandbox cannot change its groups at all. */
  if (geteuid () == 0)
    assert_kv (out, "Groups", "");
  else
    assert_kv (out, "setgroups", "deny");
  free (out);
}

Test (run, init_memory_is_out_of_the_payloads_reach)
{
  /* Same uid and user namespace as init, and here no Landlock and no
   * seccomp either: what keeps the payload out is that init holds
   * capabilities the payload lacks (the kernel refuses ptrace access then,
   * dumpable or not).  An init that dropped its capabilities would need
   * PR_SET_DUMPABLE 0 instead. */
  char *args[] = { probe, "open", "/proc/1/mem", "open", "/proc/1/environ", NULL };
  char *out = probe_ok (args);
  char *v = kv (out, "open");
  cr_assert_not_null (v, "%s", out);
  cr_assert_str_eq (v, "EACCES", "%s", out);
  cr_assert (strstr (out, "open=OK") == NULL, "%s", out);
  cr_assert (strstr (out, "open=EACCES\nopen=EACCES\n") != NULL, "%s", out);
  free (v);
  free (out);
}

Test (run, ids_outside_the_map_do_not_exist)
{
  /* Host root (or anyone else) has no name inside: only 1000 is mapped. */
  char *args[] = { probe, "setuid", "0", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "setuid", "EINVAL");
  free (out);
}

Test (run, new_pid_namespace_with_init_as_pid_1)
{
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "pid", "2");
  assert_kv (out, "ppid", "1");
  free (out);
}

Test (run, new_session_without_terminal)
{
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "sid", "2");
  assert_kv (out, "pgid", "2");
  free (out);
}

Test (run, hostname_from_policy)
{
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "hostname", "sandbox");
  free (out);
}

Test (run, every_capability_set_is_empty)
{
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "CapInh", "0000000000000000");
  assert_kv (out, "CapPrm", "0000000000000000");
  assert_kv (out, "CapEff", "0000000000000000");
  assert_kv (out, "CapBnd", "0000000000000000");
  assert_kv (out, "CapAmb", "0000000000000000");
  free (out);
}

Test (run, no_new_privs_is_set)
{
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "NoNewPrivs", "1");
  free (out);
}

Test (run, rlimits_from_policy)
{
  pol->limits.rlimit[SECURER_RLIMIT_NOFILE] = (struct securer_rlimit) { true, 64, 128 };
  pol->limits.rlimit[SECURER_RLIMIT_FSIZE] = (struct securer_rlimit) { true, 1 << 20, 1 << 20 };
  pol->limits.rlimit[SECURER_RLIMIT_CORE] = (struct securer_rlimit) { true, 0, 0 };
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "rlimit.nofile", "64:128");
  assert_kv (out, "rlimit.fsize", "1048576:1048576");
  assert_kv (out, "rlimit.core", "0:0");
  free (out);
}

Test (run, nofile_without_policy_limit_keeps_the_callers_soft_limit)
{
  /* No nofile limit in the policy: the command keeps the caller's soft
   * limit, and the hard limit drops to the sync socket's number (the
   * caller's hard limit - 1) so the command can never own that fd. */
  struct rlimit rl;
  cr_assert_eq (getrlimit (RLIMIT_NOFILE, &rl), 0);
  cr_assert (rl.rlim_max != RLIM_INFINITY && rl.rlim_max > 200);
  rl.rlim_cur = 100;
  cr_assert_eq (setrlimit (RLIMIT_NOFILE, &rl), 0);
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  char want[64];
  snprintf (want, sizeof want, "100:%llu", (unsigned long long) rl.rlim_max - 1);
  assert_kv (out, "rlimit.nofile", want);
  free (out);
}

Test (run, exec_failure_is_reported_under_a_small_address_space_limit)
{
  /* The rlimits are set last and nothing is allocated after them, so even
   * a limit far below what the launcher itself maps leaves the setup able
   * to report what went wrong. */
  pol->limits.rlimit[SECURER_RLIMIT_AS] = (struct securer_rlimit) { true, 1 << 20, 1 << 20 };
  char *args[] = { "securer-no-such-command", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, -1);
  cr_assert_eq (r.spawn_status, 127, "status %d: %s", r.spawn_status, r.spawn_msg);
  cr_assert_eq (r.spawn_errno, ENOENT);
  cr_assert (strstr (r.spawn_msg, "execute securer-no-such-command: ENOENT") != NULL, "%s", r.spawn_msg);
  run_result_clear (&r);
}

Test (run, file_size_limit_kills_with_sigxfsz)
{
  pol->limits.rlimit[SECURER_RLIMIT_FSIZE] = (struct securer_rlimit) { true, 0, 0 };
  char *args[] = { probe, "write", "/tmp/x", "raise", "25", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  /* raise(SIGXFSZ) stands in for a write over the limit: same signal, same report. */
  cr_assert (!r.st.exited);
  cr_assert_eq (r.st.signal, SIGXFSZ);
  cr_assert_eq (r.st.reason, SECURER_KILL_LIMIT);
  run_result_clear (&r);
}

Test (run, environment_is_exactly_the_allowlist)
{
  setenv ("SECURER_TEST_KEEP", "kept", 1);
  setenv ("SECURER_TEST_DROP", "dropped", 1);
  add_env_keep (pol, "SECURER_TEST_KEEP");
  add_env_keep (pol, "SECURER_TEST_ABSENT");
  add_env_set (pol, "FOO", "bar");
  char *extra[] = { "EXTRA=1", NULL };
  char *args[] = { probe, "info", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  o.extra_env = extra;
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  assert_kv (r.out, "env_count", "4");
  assert_kv (r.out, "env.SECURER_TEST_KEEP", "kept");
  assert_kv (r.out, "env.FOO", "bar");
  assert_kv (r.out, "env.EXTRA", "1");
  assert_kv (r.out, "env.PATH", "/usr/bin:/bin");
  cr_assert_null (kv (r.out, "env.SECURER_TEST_DROP"));
  run_result_clear (&r);
}

Test (run, only_std_fds_are_open)
{
  /* Descriptors the caller leaked without CLOEXEC must not reach the sandbox. */
  int leak = open ("/dev/null", O_RDONLY);
  int leak2 = dup2 (leak, 100);
  cr_assert (leak >= 0 && leak2 == 100);
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "fds", "0,1,2");
  free (out);
  close (leak);
  close (leak2);
}

Test (run, passed_fds_become_3_and_4)
{
  int a = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int b = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  int pass[] = { b, a };
  char *args[] = { probe, "info", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  o.pass_fds = pass;
  o.n_pass_fds = 2;
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  assert_kv (r.out, "fds", "0,1,2,3,4");
  run_result_clear (&r);
  close (a);
  close (b);
}

Test (run, exit_code_is_propagated)
{
  char *args[] = { probe, "exit", "42", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  cr_assert (r.st.exited);
  cr_assert_eq (r.st.exit_code, 42);
  cr_assert_eq (securer_status_exit_code (&r.st), 42);
  cr_assert_eq (r.st.reason, SECURER_KILL_NONE);
  run_result_clear (&r);
}

Test (run, signal_death_is_128_plus_n)
{
  int sigs[] = { SIGTERM, SIGSEGV, SIGABRT };
  for (size_t i = 0; i < 3; i++)
    {
      char num[8];
      snprintf (num, sizeof num, "%d", sigs[i]);
      char *args[] = { probe, "raise", num, NULL };
      struct securer_spawn_opts o = opts_for (pol, args);
      struct run_result r;
      run_in_sandbox (&o, &r);
      cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
      cr_assert (!r.st.exited, "signal %d reported as exit %d", sigs[i], r.st.exit_code);
      cr_assert_eq (r.st.signal, sigs[i]);
      cr_assert_eq (securer_status_exit_code (&r.st), 128 + sigs[i]);
      run_result_clear (&r);
    }
}

Test (run, exit_code_above_128_is_not_a_signal)
{
  char *args[] = { probe, "exit", "137", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert (r.st.exited);
  cr_assert_eq (r.st.exit_code, 137);
  run_result_clear (&r);
}

Test (run, missing_command_is_127)
{
  char *args[] = { "securer-no-such-command", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, -1);
  cr_assert_eq (r.spawn_status, 127, "status %d: %s", r.spawn_status, r.spawn_msg);
  cr_assert_eq (r.spawn_errno, ENOENT);
  cr_assert (strstr (r.spawn_msg, "securer-no-such-command") != NULL, "%s", r.spawn_msg);
  run_result_clear (&r);
}

Test (run, command_found_in_sandbox_path)
{
  char *h = helpers_dir ();
  for (size_t i = 0; i < pol->n_env_set; i++)
    if (strcmp (pol->env_set[i].name, "PATH") == 0)
      {
        free (pol->env_set[i].value);
        cr_assert (asprintf (&pol->env_set[i].value, "/nonexistent:%s", h) > 0);
      }
  free (h);
  char *args[] = { "probe", "exit", "3", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  cr_assert_eq (r.st.exit_code, 3);
  run_result_clear (&r);
}

Test (run, non_executable_is_126)
{
  /* A directory cannot be executed: EACCES. */
  char *h = helpers_dir ();
  char *args[] = { h, NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, -1);
  cr_assert_eq (r.spawn_status, 126, "status %d: %s", r.spawn_status, r.spawn_msg);
  cr_assert_eq (r.spawn_errno, EACCES);
  run_result_clear (&r);
  free (h);
}

Test (run, invalid_hostname_fails_setup_with_reason)
{
  free (pol->hostname);
  pol->hostname = xstrdup ("a-hostname-that-is-much-longer-than-the-sixty-four-bytes-linux-allows");
  char *args[] = { probe, "exit", "0", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, -1);
  cr_assert_eq (r.spawn_status, 125);
  cr_assert_eq (r.spawn_errno, EINVAL);
  cr_assert (strstr (r.spawn_msg, "sethostname") != NULL, "%s", r.spawn_msg);
  run_result_clear (&r);
}

Test (run, bogus_uid_fails_setup)
{
  pol->uid = UINT32_MAX;
  char *args[] = { probe, "exit", "0", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, -1);
  cr_assert_eq (r.spawn_status, 125);
  cr_assert (strstr (r.spawn_msg, "uid") != NULL, "%s", r.spawn_msg);
  run_result_clear (&r);
}

Test (run, host_root_mapping_is_refused)
{
  pol->host_uid = 0;
  char *args[] = { probe, "exit", "0", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, -1);
  cr_assert_eq (r.spawn_status, 125);
  cr_assert_eq (r.spawn_errno, EPERM);
  run_result_clear (&r);
}

/* Runs body in a forked child that has become the unprivileged user 65534
 * (when we are root) and returns its exit status. */
static int
as_nobody (int (*body) (void))
{
  pid_t c = fork ();
  if (c == 0)
    {
      if (geteuid () == 0 && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
                              || setresuid (65534, 65534, 65534) < 0))
        _exit (90);
      /* setresuid made us non-dumpable, which a login user is not: /proc/PID
       * of our children would belong to root and their maps be unwritable. */
      prctl (PR_SET_DUMPABLE, 1, 0, 0, 0);
      _exit (body ());
    }
  int st = 0;
  waitpid (c, &st, 0);
  return WIFEXITED (st) ? WEXITSTATUS (st) : 100 + WTERMSIG (st);
}

static int
unmappable_body (void)
{
  /* An unprivileged caller may only map its own uid. */
  pol->host_uid = geteuid () + 1;
  char *args[] = { probe, "exit", "0", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  if (r.spawn_rc != -1)
    return 1;
  if (r.spawn_status != 125)
    return 2;
  if (strstr (r.spawn_msg, "map uid") == NULL || r.spawn_errno != EPERM)
    return 3;
  return 0;
}

Test (run, unmappable_host_uid_fails_setup)
{
  cr_assert_eq (as_nobody (unmappable_body), 0);
}

static int
unprivileged_body (void)
{
  char *args[] = { probe, "info", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  if (r.spawn_rc != 0)
    {
      fprintf (stderr, "spawn: %s\n", r.spawn_msg);
      return 1;
    }
  char want[64];
  snprintf (want, sizeof want, "1000 %u 1", (unsigned) geteuid ());
  char *m = kv (r.out, "uid_map"), *sg = kv (r.out, "setgroups"), *eff = kv (r.out, "CapEff");
  int rc = 0;
  if (m == NULL || strcmp (m, want) != 0)
    rc = 2;
  else if (sg == NULL || strcmp (sg, "deny") != 0)
    rc = 3;
  else if (eff == NULL || strcmp (eff, "0000000000000000") != 0)
    rc = 4;
  else if (!r.st.exited || r.st.exit_code != 0)
    rc = 5;
  free (m);
  free (sg);
  free (eff);
  return rc;
}

Test (run, works_for_an_unprivileged_caller)
{
  cr_assert_eq (as_nobody (unprivileged_body), 0);
}

Test (run, timeout_kills_everything_and_reports_124)
{
  char marker[96];
  unique_marker (marker, sizeof marker, "timeout");
  char *args[] = { probe, "marker", marker, "orphan", "60", "sleep", "60", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  o.timeout_ms = 200;
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  cr_assert_eq (r.st.reason, SECURER_KILL_TIMEOUT);
  cr_assert_eq (securer_status_exit_code (&r.st), SECURER_EXIT_TIMEOUT);
  cr_assert_eq (wait_marked_gone (marker), 0, "processes left behind");
  run_result_clear (&r);
}

Test (run, orphans_do_not_outlive_the_command)
{
  char marker[96];
  unique_marker (marker, sizeof marker, "orphan");
  char *args[] = { probe, "marker", marker, "orphan", "60", "exit", "5", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  cr_assert_eq (r.st.exit_code, 5);
  cr_assert_eq (wait_marked_gone (marker), 0, "processes left behind");
  run_result_clear (&r);
}

Test (run, forwarded_signal_reaches_the_command)
{
  char *args[] = { probe, "sleep", "60", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct securer_sandbox *sb = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_spawn (&o, &sb, &err), 0, "%s", securer_error_message (err));
  cr_assert_eq (securer_sandbox_signal (sb, SIGTERM, &err), 0);
  struct securer_status st;
  cr_assert_eq (securer_sandbox_wait (sb, &st, &err), 1);
  cr_assert (!st.exited);
  cr_assert_eq (st.signal, SIGTERM);
  cr_assert_eq (st.reason, SECURER_KILL_SIGNAL);
  securer_status_clear (&st);
  securer_sandbox_free (sb);
}

/* Namespace link of a host pid, as the host sees it. */
static void
ns_link (pid_t pid, const char *ns, char *buf, size_t len)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) pid, ns);
  ssize_t n = readlink (path, buf, len - 1);
  cr_assert_gt (n, 0, "readlink %s: %s", path, strerror (errno));
  buf[n] = '\0';
}

/* The network and IPC namespaces are made after clone3 (by pid 1, while
 * the payload builds the mounts) and joined by the payload: seen from the
 * host, the command and the sandbox's pid 1 share every namespace, and
 * none of them is the caller's. */
Test (run, pid_1_and_the_command_share_every_namespace)
{
  char *args[] = { probe, "sleep", "60", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct securer_sandbox *sb = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_spawn (&o, &sb, &err), 0, "%s", securer_error_message (err));
  pid_t cmd = securer_sandbox_pid (sb);
  char path[64], stat[512];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) cmd);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f);
  cr_assert_not_null (fgets (stat, sizeof stat, f));
  fclose (f);
  int init = 0;
  cr_assert_eq (sscanf (strrchr (stat, ')') + 2, "%*c %d", &init), 1);
  cr_assert_gt (init, 0);
  const char *kinds[] = { "net", "ipc", "uts", "mnt", "user", "cgroup", "pid" };
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    {
      char a[128], b[128], host[128];
      ns_link (init, kinds[i], a, sizeof a);
      ns_link (cmd, kinds[i], b, sizeof b);
      ns_link (getpid (), kinds[i], host, sizeof host);
      cr_assert_str_eq (a, b, "%s: pid 1 in %s, the command in %s", kinds[i], a, b);
      cr_assert_str_neq (b, host, "%s: the command is in the caller's namespace", kinds[i]);
    }
  cr_assert_eq (securer_sandbox_kill (sb, &err), 0);
  struct securer_status st;
  cr_assert_eq (securer_sandbox_wait (sb, &st, &err), 1);
  securer_status_clear (&st);
  securer_sandbox_free (sb);
}

Test (run, kill_from_an_external_event_loop)
{
  /* The session layer's way: watch pollfd in its own epoll set. */
  char marker[96];
  unique_marker (marker, sizeof marker, "kill");
  char *args[] = { probe, "marker", marker, "sleep", "60", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct securer_sandbox *sb = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_spawn (&o, &sb, &err), 0, "%s", securer_error_message (err));
  cr_assert_gt (securer_sandbox_pid (sb), 0);
  int ep = epoll_create1 (EPOLL_CLOEXEC);
  struct epoll_event ev = { .events = EPOLLIN, .data.ptr = sb };
  cr_assert_eq (epoll_ctl (ep, EPOLL_CTL_ADD, securer_sandbox_pollfd (sb), &ev), 0);
  struct securer_status st;
  memset (&st, 0, sizeof st);
  cr_assert_eq (securer_sandbox_dispatch (sb, &st, &err), 0);
  cr_assert_eq (securer_sandbox_kill (sb, &err), 0);
  int done = 0;
  while (!done)
    {
      struct epoll_event got;
      cr_assert_eq (epoll_wait (ep, &got, 1, -1), 1);
      done = securer_sandbox_dispatch (got.data.ptr, &st, &err);
      cr_assert_geq (done, 0);
    }
  cr_assert_eq (st.reason, SECURER_KILL_CALLER);
  cr_assert (!st.exited);
  cr_assert_eq (st.signal, SIGKILL);
  char *js = securer_sandbox_status_json (sb, &st, &err);
  cr_assert_not_null (js);
  cr_assert (strstr (js, "\"kill_reason\":\"caller\"") != NULL, "%s", js);
  free (js);
  close (ep);
  securer_status_clear (&st);
  securer_sandbox_free (sb);
  cr_assert_eq (wait_marked_gone (marker), 0);
}

Test (run, sandbox_dies_with_its_caller)
{
  char marker[96];
  unique_marker (marker, sizeof marker, "caller");
  int ready[2];
  cr_assert_eq (pipe2 (ready, O_CLOEXEC), 0);
  pid_t caller = fork ();
  cr_assert_geq (caller, 0);
  if (caller == 0)
    {
      char *args[] = { probe, "marker", marker, "orphan", "60", "sleep", "60", NULL };
      struct securer_spawn_opts o = opts_for (pol, args);
      struct securer_sandbox *sb = NULL;
      securer_err_t err = NULL;
      if (securer_sandbox_spawn (&o, &sb, &err) < 0)
        _exit (1);
      (void) !write (ready[1], "x", 1);
      pause ();
      _exit (0);
    }
  close (ready[1]);
  char c;
  cr_assert_eq (read (ready[0], &c, 1), 1, "the caller could not start its sandbox");
  close (ready[0]);
  cr_assert_gt (count_marked (marker), 0);
  kill (caller, SIGKILL);
  waitpid (caller, NULL, 0);
  cr_assert_eq (wait_marked_gone (marker), 0, "processes outlived their caller");
}

Test (run, json_status_describes_the_end)
{
  char *args[] = { probe, "exit", "9", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct securer_sandbox *sb = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_spawn (&o, &sb, &err), 0, "%s", securer_error_message (err));
  struct securer_status st;
  cr_assert_eq (securer_sandbox_wait (sb, &st, &err), 1);
  char *js = securer_sandbox_status_json (sb, &st, &err);
  cr_assert_not_null (js);
  cr_assert (strstr (js, "\"exit_status\":9") != NULL, "%s", js);
  cr_assert (strstr (js, "\"exit_code\":9") != NULL, "%s", js);
  cr_assert (strstr (js, "\"kill_reason\":null") != NULL, "%s", js);
  cr_assert (strstr (js, "\"namespaces\":[\"user\",\"pid\",\"mount\",\"net\",\"uts\",\"ipc\",\"cgroup\"]") != NULL,
             "%s", js);
  cr_assert_gt (st.max_rss_kb, 0);
  free (js);
  securer_status_clear (&st);
  securer_sandbox_free (sb);
}

Test (run, seccomp_errno_rule_and_filter_mode)
{
  pol->seccomp.enabled = true;
  add_syscall_rule (pol, "socket", SECURER_ACT_ERRNO, EACCES);
  char *args[] = { probe, "info", "connect", "127.0.0.1", "9", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "Seccomp", "2");
  assert_kv (out, "connect", "EACCES");
  free (out);
}

Test (run, seccomp_kill_is_reported_with_the_syscall)
{
  pol->seccomp.enabled = true;
  add_syscall_rule (pol, "kill", SECURER_ACT_KILL_PROCESS, 0);
  char *args[] = { probe, "kill", "1", "0", "exit", "0", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct securer_sandbox *sb = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_spawn (&o, &sb, &err), 0, "%s", securer_error_message (err));
  struct securer_status st;
  cr_assert_eq (securer_sandbox_wait (sb, &st, &err), 1);
  cr_assert (!st.exited);
  cr_assert_eq (st.signal, SIGSYS);
  cr_assert_eq (st.reason, SECURER_KILL_SECCOMP);
  cr_assert_eq (securer_status_exit_code (&st), 128 + SIGSYS);
  /* Named when the kernel has user notification (it does on every kernel
   * CI runs on); the in-kernel kill cannot name it. */
  cr_assert_not_null (st.detail);
  cr_assert_str_eq (st.detail, "kill");
  char *js = securer_sandbox_status_json (sb, &st, &err);
  cr_assert (strstr (js, "\"kill_reason\":\"seccomp\"") && strstr (js, "\"detail\":\"kill\""), "%s", js);
  free (js);
  securer_status_clear (&st);
  securer_sandbox_free (sb);
}

Test (run, seccomp_compile_error_fails_before_clone)
{
  pol->seccomp.enabled = true;
  add_syscall_rule (pol, "no_such_syscall_at_all", SECURER_ACT_KILL_PROCESS, 0);
  char *args[] = { probe, "exit", "0", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, -1);
  cr_assert_eq (r.spawn_status, 125);
  cr_assert (strstr (r.spawn_msg, "seccomp") != NULL, "%s", r.spawn_msg);
  run_result_clear (&r);
}

Test (run, seccomp_generation_error_after_clone_is_reported)
{
  /* The rules are checked before clone; libseccomp's work is done while
   * the child sets up.  A filter that only turns out too large then must
   * still fail the launch (125, naming seccomp) before the command runs. */
  pol->seccomp.enabled = true;
  add_syscall_rule (pol, "ioctl", SECURER_ACT_ERRNO, EPERM);
  struct securer_syscall_rule *r = &pol->seccomp.rules[pol->seccomp.n_rules - 1];
  r->n_conds = 2;
  r->conds[0] = (struct securer_arg_cond) { .arg = 1, .op = SECURER_CMP_NE, .value = 0x5412 };
  r->conds[1] = (struct securer_arg_cond) { .arg = 2, .op = SECURER_CMP_NE, .value = 7 };
  char *args[] = { probe, "exit", "0", NULL };
  struct securer_spawn_opts o = opts_for (pol, args);
  struct run_result r2;
  run_in_sandbox (&o, &r2);
  cr_assert_eq (r2.spawn_rc, -1);
  cr_assert_eq (r2.spawn_status, 125);
  cr_assert_eq (r2.spawn_errno, E2BIG, "%s", r2.spawn_msg);
  cr_assert (strncmp (r2.spawn_msg, "seccomp: ", 9) == 0, "%s", r2.spawn_msg);
  run_result_clear (&r2);
}

Test (run, sync_socket_sits_above_the_nofile_limit)
{
  /* The filter lets the payload sendmsg on its sync socket's number; after
   * exec no fd may ever get that number. */
  pol->seccomp.enabled = true;
  pol->limits.rlimit[SECURER_RLIMIT_NOFILE] = (struct securer_rlimit) { true, 32, 64 };
  char *args[] = { probe, "info", NULL };
  char *out = probe_ok (args);
  assert_kv (out, "rlimit.nofile", "32:64");
  assert_kv (out, "fds", "0,1,2");
  free (out);
}
