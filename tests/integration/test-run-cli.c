/* `securer run` and `securer probe` as a user runs them: exit statuses,
 * one-line setup errors, --timeout, --json-status, signal forwarding, and
 * R started in the shipped r policy. */
#include <config.h>

#include <sched.h>

#include <criterion/criterion.h>
#include <jansson.h>
#include <sys/stat.h>

#include "cli-util.h"

static char tmpdir[] = "/tmp/securer-run-cli-XXXXXX";
static char *policy_file;

static char *
write_policy (const char *name, const char *extra)
{
  return cli_probe_policy (tmpdir, name, extra);
}

static void
setup (void)
{
  cr_assert_not_null (mkdtemp (tmpdir));
  policy_file = write_policy ("probe", NULL);
}

static void
teardown (void)
{
  /* only files we wrote: *.policy and status files */
  cli_remove_dir (tmpdir);
  free (policy_file);
}

TestSuite (run_cli, .init = setup, .fini = teardown, .timeout = 60);

/* A signal securer starts with ignored (0: none), as a caller may leave it. */
static int ignored_at_start;

static void
run_cli (char **args, int extra_fd, struct cli_run *r)
{
  cli_run_with (args, extra_fd, ignored_at_start, r);
}

static size_t
count_lines (const char *s)
{
  size_t n = 0;
  for (; *s; s++)
    n += *s == '\n';
  return n;
}

Test (run_cli, exit_code_of_the_command)
{
  char *probe = probe_path ();
  char *args[] = { "run", "--policy", policy_file, "--", probe, "echo", "hi", "exit", "7", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 7, "stderr: %s", r.err);
  cr_assert_str_eq (r.out, "hi\n");
  cr_assert_str_eq (r.err, "");
  cli_run_clear (&r);
  free (probe);
}

Test (run_cli, signal_death_is_128_plus_n)
{
  char *probe = probe_path ();
  char *args[] = { "run", "--policy", policy_file, "--", probe, "raise", "6", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 128 + SIGABRT, "stderr: %s", r.err);
  cli_run_clear (&r);
  free (probe);
}

Test (run_cli, not_found_is_127_with_one_line)
{
  char *args[] = { "run", "--policy", policy_file, "--", "no-such-program-anywhere", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 127);
  cr_assert_eq (count_lines (r.err), 1, "%s", r.err);
  cr_assert (strstr (r.err, "no-such-program-anywhere") && strstr (r.err, "ENOENT"), "%s", r.err);
  cli_run_clear (&r);
}

Test (run_cli, not_executable_is_126)
{
  char *args[] = { "run", "--policy", policy_file, "--", "/tmp", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 126, "%s", r.err);
  cr_assert (strstr (r.err, "EACCES") != NULL, "%s", r.err);
  cli_run_clear (&r);
}

Test (run_cli, missing_required_mount_is_125_with_the_reason)
{
  char *bad = write_policy ("bad-mount", "mount ro /securer-no-such-dir/x");
  char *probe = probe_path ();
  char *args[] = { "run", "--policy", bad, "--", probe, "exit", "0", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 125);
  cr_assert_eq (count_lines (r.err), 1, "%s", r.err);
  cr_assert (strstr (r.err, "/securer-no-such-dir/x") && strstr (r.err, "ENOENT"), "%s", r.err);
  cr_assert_str_eq (r.out, "");
  cli_run_clear (&r);
  free (bad);
  free (probe);
}

/* The payload builds the mounts while pid 1 becomes securer-init: when a
 * mount fails, the command must not run at all, in any part of the sandbox. */
Test (run_cli, a_failed_mount_never_lets_the_command_run)
{
  char extra[600], *out = NULL;
  cr_assert (asprintf (&out, "%s/ran", tmpdir) > 0);
  /* Neither seccomp nor Landlock: nothing else would hold the payload back. */
  snprintf (extra, sizeof extra, "seccomp off\nlandlock off\nmount rw %s\nmount ro /securer-no-such-dir/y", tmpdir);
  char *bad = write_policy ("bad-late-mount", extra);
  for (int i = 0; i < 20; i++)
    {
      char *args[] = { "run", "--policy", bad, "--", "/bin/sh", "-c", "echo ran > \"$0\"", out, NULL };
      struct cli_run r;
      run_cli (args, -1, &r);
      cr_assert_eq (r.status, 125, "%s", r.err);
      cr_assert (strstr (r.err, "/securer-no-such-dir/y") != NULL, "%s", r.err);
      cli_run_clear (&r);
    }
  struct timespec ts = { 0, 100 * 1000 * 1000 };
  nanosleep (&ts, NULL);
  cr_assert_eq (access (out, F_OK), -1, "the command ran in a sandbox whose setup failed");
  free (bad);
  free (out);
}

/* The loopback is brought up during the launch (after clone3, in the
 * network namespace made then): reachable under `network loopback`,
 * absent under `network none`. */
Test (run_cli, loopback_is_up_only_when_the_policy_asks)
{
  /* minimal's filter refuses AF_INET sockets and its Landlock rules TCP
   * connections: both off, to reach the network itself. */
  char *lo = write_policy ("loopback", "seccomp off\nlandlock off\nnetwork loopback");
  char *none = write_policy ("no-network", "seccomp off\nlandlock off\nnetwork none");
  char *probe = probe_path ();
  const struct {
    const char *policy, *connect;
  } cases[] = { { lo, "ECONNREFUSED" }, { none, "ENETUNREACH" } };
  for (size_t i = 0; i < 2; i++)
    {
      char *args[] = { "run", "--policy", (char *) cases[i].policy, "--", probe, "connect", "127.0.0.1", "9", NULL };
      struct cli_run r;
      run_cli (args, -1, &r);
      cr_assert_eq (r.status, 0, "%s", r.err);
      char *v = kv (r.out, "connect");
      cr_assert_not_null (v, "%s", r.out);
      cr_assert_str_eq (v, cases[i].connect, "case %zu", i);
      free (v);
      cli_run_clear (&r);
    }
  free (lo);
  free (none);
  free (probe);
}

/* Interface names listed in a /proc/PID/net/dev text, space-separated. */
static void
interfaces (const char *dev, char *out, size_t len)
{
  out[0] = '\0';
  for (const char *l = dev; l != NULL && *l; )
    {
      const char *colon = strchr (l, ':'), *nl = strchr (l, '\n');
      if (colon != NULL && (nl == NULL || colon < nl))
        {
          while (*l == ' ')
            l++;
          size_t n = strlen (out);
          snprintf (out + n, len - n, "%s%.*s", n ? " " : "", (int) (colon - l), l);
        }
      l = nl ? nl + 1 : NULL;
    }
}

/* The network namespace is made after clone3 (by pid 1, beside the
 * payload's mounts) and the payload joins it: every process of the
 * sandbox, pid 1 included, sees the sandbox's loopback alone, never the
 * host's interfaces. */
Test (run_cli, pid_1_is_in_the_sandbox_network_namespace)
{
  FILE *f = fopen ("/proc/self/net/dev", "r");
  cr_assert_not_null (f);
  char host[4096], buf[1024];
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  interfaces (buf, host, sizeof host);
  if (strcmp (host, "lo") == 0)
    cr_skip_test ("the host has no interface but lo to tell its namespace from the sandbox's");
  char *args[] = { "run", "--policy", policy_file, "--", "/bin/sh", "-c", "cat /proc/1/net/dev; echo; cat /proc/self/net/dev",
                   NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  char *second = strstr (r.out, "\n\n");
  cr_assert_not_null (second, "%s", r.out);
  *second = '\0';
  char inside1[512], inside_self[512];
  interfaces (r.out, inside1, sizeof inside1);
  interfaces (second + 2, inside_self, sizeof inside_self);
  cr_assert_str_eq (inside1, "lo", "pid 1 sees interfaces '%s' (host: '%s')", inside1, host);
  cr_assert_str_eq (inside_self, "lo", "the command sees '%s'", inside_self);
  cli_run_clear (&r);
}

/* This process's "Cpus_allowed_list:" line of /proc/self/status, as a
 * command in a sandbox prints its own. */
static void
own_cpus_line (char *want, size_t size)
{
  char line[256];
  want[0] = '\0';
  FILE *f = fopen ("/proc/self/status", "r");
  cr_assert_not_null (f);
  while (fgets (line, sizeof line, f))
    if (strncmp (line, "Cpus_allowed_list:", 18) == 0)
      snprintf (want, size, "%s", line);
  fclose (f);
  cr_assert_neq (want[0], '\0');
}

/* pid 1 is moved off the launcher's CPU, the payload off pid 1's, while
 * the sandbox is built; the command still gets the caller's CPU affinity,
 * whatever it is. */
Test (run_cli, the_command_has_the_callers_cpu_affinity)
{
  cpu_set_t all, one;
  cr_assert_eq (sched_getaffinity (0, sizeof all, &all), 0);
  CPU_ZERO (&one);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET (c, &all))
      {
        CPU_SET (c, &one);
        break;
      }
  const cpu_set_t *masks[] = { &all, &one };
  for (int i = 0; i < 2; i++)
    {
      cr_assert_eq (sched_setaffinity (0, sizeof *masks[i], masks[i]), 0);
      char want[256];
      own_cpus_line (want, sizeof want);
      char *args[] = { "run", "--policy", policy_file, "--", "/bin/sh", "-c",
                       "grep Cpus_allowed_list /proc/self/status", NULL };
      struct cli_run r;
      run_cli (args, -1, &r);
      cr_assert_eq (sched_setaffinity (0, sizeof all, &all), 0);
      cr_assert_eq (r.status, 0, "%s", r.err);
      cr_assert_str_eq (r.out, want, "case %d", i);
      cli_run_clear (&r);
    }
}

/* The launcher moves pid 1 off its CPU right after clone, and pid 1 the
 * payload right after the fork; each takes its mask back once it runs: a
 * process that starts on an idle CPU at once can take it back before the
 * move, which then stuck to the command.  Launches side by side make that
 * order common; in every one of them the command must have the caller's
 * mask. */
Test (run_cli, the_callers_cpu_affinity_survives_launches_side_by_side)
{
  cpu_set_t all;
  cr_assert_eq (sched_getaffinity (0, sizeof all, &all), 0);
  if (CPU_COUNT (&all) < 2)
    cr_skip_test ("one CPU: the payload is never moved");
  char want[256];
  own_cpus_line (want, sizeof want);
  char *args[] = { "run", "--policy", policy_file, "--", "/bin/grep", "Cpus_allowed_list", "/proc/self/status",
                   NULL };
  char **argv = cli_argv (args);
  enum { ROUNDS = 100, SIDE = 4 };
  for (int round = 0; round < ROUNDS; round++)
    {
      pid_t pid[SIDE];
      int out[SIDE];
      for (int k = 0; k < SIDE; k++)
        {
          int p[2];
          cr_assert_eq (pipe2 (p, O_CLOEXEC), 0);
          pid[k] = fork ();
          cr_assert_geq (pid[k], 0);
          if (pid[k] == 0)
            {
              dup2 (p[1], 1);
              execv (argv[0], argv);
              _exit (99);
            }
          close (p[1]);
          out[k] = p[0];
        }
      for (int k = 0; k < SIDE; k++)
        {
          char *got = read_all (out[k]);
          close (out[k]);
          int st;
          cr_assert_eq (waitpid (pid[k], &st, 0), pid[k]);
          cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "launch %d: status %d", round * SIDE + k, st);
          cr_assert_str_eq (got, want, "launch %d of %d", round * SIDE + k, ROUNDS * SIDE);
          free (got);
        }
    }
  free (argv);
}

/* An ignored SIGCHLD survives exec.  Before, pid 1 inherited it from the
 * caller: the payload was reaped by the kernel, securer-init never saw it
 * end, never killed what it left behind nor reported, and the command's
 * background process ran on until the timeout, after which securer could
 * not wait for pid 1 either (ECHILD, exit 125). */
Test (run_cli, a_caller_that_ignores_sigchld_gets_the_status_at_once)
{
  char *args[] = { "run", "--timeout", "10", "--policy", policy_file, "--", "/bin/sh", "-c",
                   "sleep 100 & echo started", NULL };
  struct cli_run r;
  ignored_at_start = SIGCHLD;
  run_cli (args, -1, &r);
  ignored_at_start = 0;
  cr_assert_eq (r.status, 0, "status %d: %s", r.status, r.err);
  cr_assert_str_eq (r.out, "started\n");
  cli_run_clear (&r);
}

/* Runs securer with fd `null_fd` (0, 1 or 2) on /dev/null and the other
 * two on a pipe read here; returns what came through the pipe. */
static char *
run_with_null (char **args, int null_fd)
{
  int p[2];
  cr_assert_eq (pipe2 (p, O_CLOEXEC), 0);
  char **argv = cli_argv (args);
  pid_t c = fork ();
  cr_assert_geq (c, 0);
  if (c == 0)
    {
      int null = open ("/dev/null", O_RDWR);
      for (int fd = 0; fd < 3; fd++)
        dup2 (fd == null_fd ? null : (fd == 0 ? null : p[1]), fd);
      execv (argv[0], argv);
      _exit (99);
    }
  free (argv);
  close (p[1]);
  char *out = read_all (p[0]);
  close (p[0]);
  int st;
  waitpid (c, &st, 0);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "status %d: %s", st, out);
  return out;
}

/* A caller's /dev/null needs no relay: CMD gets a /dev/null of its own
 * there, and a pipe wherever the caller has anything else. */
Test (run_cli, a_callers_dev_null_is_cmds_own_dev_null)
{
  const char *script = "for f in 0 1 2; do echo \"$f $(stat -L -c %F:%t:%T /proc/$$/fd/$f)\" >&$1; done";
  char *out_args[] = { "run", "--policy", policy_file, "--", "/bin/sh", "-c", (char *) script, "sh", "2", NULL };
  char *out = run_with_null (out_args, 1);
  cr_assert (strstr (out, "0 character special file:1:3") != NULL, "%s", out);
  cr_assert (strstr (out, "1 character special file:1:3") != NULL, "%s", out);
  cr_assert (strstr (out, "2 fifo:") != NULL, "%s", out);
  free (out);
  char *err_args[] = { "run", "--policy", policy_file, "--", "/bin/sh", "-c", (char *) script, "sh", "1", NULL };
  out = run_with_null (err_args, 2);
  cr_assert (strstr (out, "1 fifo:") != NULL, "%s", out);
  cr_assert (strstr (out, "2 character special file:1:3") != NULL, "%s", out);
  free (out);
}

Test (run_cli, bad_policy_is_125)
{
  char *args[] = { "run", "--policy", "/securer-no-such.policy", "--", "/bin/true", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 125);
  cr_assert (strstr (r.err, "securer-no-such.policy") != NULL, "%s", r.err);
  cli_run_clear (&r);
}

/* `run` resolves the seccomp rules while the sandbox is being set up: a
 * bad rule is still reported as `policy check` reports it, with 125, and
 * the command never starts.  The first case is found by the load; in the
 * second, everything else of the policy is fine, so the launch has
 * started when the rule is found. */
Test (run_cli, bad_seccomp_rule_is_125_and_nothing_runs)
{
  static const char *const extras[] = {
    "network lopback\nseccomp allow opne",
    "seccomp allow opne\nseccomp kill ptrace if arg0 == PTRACE_NOPE",
  };
  char *probe = probe_path ();
  for (size_t i = 0; i < sizeof extras / sizeof *extras; i++)
    {
      char *extra = NULL, *witness = NULL, marker[96];
      unique_marker (marker, sizeof marker, "cli-bad-rule");
      cr_assert (asprintf (&witness, "%s/ran-%zu", tmpdir, i) > 0);
      cr_assert (asprintf (&extra, "mount rw %s\n%s", tmpdir, extras[i]) > 0);
      char *bad = write_policy ("bad-rule", extra);

      char *check_args[] = { "policy", "check", bad, NULL };
      struct cli_run c;
      run_cli (check_args, -1, &c);
      cr_assert_neq (c.status, 0);
      /* check's first error, in run's one-line form. */
      char *at = strstr (c.err, ": error: ");
      cr_assert_not_null (at, "%s", c.err);
      char *want = NULL;
      cr_assert (asprintf (&want, "securer: %.*s: %.*s\n", (int) (at - c.err), c.err,
                           (int) strcspn (at + 9, "\n"), at + 9) > 0);

      char *args[] = { "run", "--policy", bad, "--", probe, "marker", marker, "write", witness,
                       "sleep", "60", NULL };
      struct cli_run r;
      run_cli (args, -1, &r);
      cr_assert_eq (r.status, 125, "case %zu: %s", i, r.err);
      cr_assert_str_eq (r.err, want, "case %zu", i);
      cr_assert_str_eq (r.out, "");
      cr_assert_eq (wait_marked_gone (marker), 0, "case %zu: a process of the sandbox is left", i);
      cr_assert_neq (access (witness, F_OK), 0, "case %zu: the command ran", i);
      cli_run_clear (&r);
      cli_run_clear (&c);
      free (want);
      free (bad);
      free (witness);
      free (extra);
    }
  free (probe);
}

Test (run_cli, usage_errors_are_125)
{
  char *a1[] = { "run", "--", "/bin/true", NULL };
  char *a2[] = { "run", "--policy", policy_file, NULL };
  char *a3[] = { "run", "--policy", policy_file, "--timeout", "soon", "--", "/bin/true", NULL };
  char *a4[] = { "run", "--policy", policy_file, "--frobnicate", "--", "/bin/true", NULL };
  char **all[] = { a1, a2, a3, a4 };
  for (size_t i = 0; i < 4; i++)
    {
      struct cli_run r;
      run_cli (all[i], -1, &r);
      cr_assert_eq (r.status, 125, "case %zu: %s", i, r.err);
      cr_assert (strstr (r.err, "securer run:") != NULL, "case %zu: %s", i, r.err);
      cli_run_clear (&r);
    }
}

Test (run_cli, timeout_is_124_and_kills_everything)
{
  char marker[96];
  unique_marker (marker, sizeof marker, "cli-timeout");
  char *probe = probe_path ();
  char *args[] = { "run", "--policy", policy_file, "--timeout", "0.3", "--", probe, "marker", marker,
                   "orphan", "60", "sleep", "60", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 124, "%s", r.err);
  cr_assert (strstr (r.err, "timeout") != NULL, "%s", r.err);
  cr_assert_eq (wait_marked_gone (marker), 0);
  cli_run_clear (&r);
  free (probe);
}

/* securer run returns as soon as the sandbox's pid 1 has reported, before
 * its namespaces are torn down: by then nothing the command left behind
 * may still run. */
Test (run_cli, nothing_of_the_sandbox_runs_once_run_returns)
{
  char *probe = probe_path ();
  for (int i = 0; i < 20; i++)
    {
      char marker[96];
      unique_marker (marker, sizeof marker, "cli-orphans");
      char *args[] = { "run", "--policy", policy_file, "--", probe, "marker", marker, "orphan", "60", "orphan", "60",
                       "exit", "7", NULL };
      struct cli_run r;
      run_cli (args, -1, &r);
      cr_assert_eq (r.status, 7, "%s", r.err);
      cr_assert_eq (count_marked (marker), 0, "round %d: a process of the sandbox outlived securer run", i);
      cli_run_clear (&r);
    }
  free (probe);
}

Test (run_cli, json_status_to_a_file)
{
  char *probe = probe_path ();
  char *status = NULL;
  cr_assert (asprintf (&status, "%s/status.json", tmpdir) > 0);
  char *args[] = { "run", "--policy", policy_file, "--json-status", status, "--", probe, "raise", "15", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 143, "%s", r.err);
  json_error_t je;
  json_t *o = json_load_file (status, 0, &je);
  cr_assert_not_null (o, "%s", je.text);
  cr_assert_eq (json_integer_value (json_object_get (o, "exit_status")), 143);
  cr_assert_eq (json_integer_value (json_object_get (o, "signal")), 15);
  cr_assert_str_eq (json_string_value (json_object_get (o, "signal_name")), "SIGTERM");
  cr_assert (json_is_integer (json_object_get (o, "wall_us")));
  cr_assert (json_is_integer (json_object_get (o, "user_us")));
  cr_assert (json_is_integer (json_object_get (o, "max_rss_kb")));
  json_t *enf = json_object_get (o, "enforced");
  cr_assert (json_is_true (json_object_get (enf, "seccomp")));
  cr_assert (json_is_object (json_object_get (enf, "landlock")));
  cr_assert (json_is_object (json_object_get (enf, "cgroup")));
  json_decref (o);
  cli_run_clear (&r);
  free (status);
  free (probe);
}

Test (run_cli, json_status_to_an_fd_for_a_setup_failure)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  char *args[] = { "run", "--policy", policy_file, "--json-status", "fd:3", "--", "no-such-program", NULL };
  struct cli_run r;
  run_cli (args, p[1], &r);
  close (p[1]);
  char *js = read_all (p[0]);
  close (p[0]);
  cr_assert_eq (r.status, 127);
  json_error_t je;
  json_t *o = json_loads (js, 0, &je);
  cr_assert_not_null (o, "%s: %s", je.text, js);
  cr_assert_eq (json_integer_value (json_object_get (o, "exit_status")), 127);
  cr_assert (strstr (json_string_value (json_object_get (o, "error")), "no-such-program") != NULL);
  json_decref (o);
  free (js);
  cli_run_clear (&r);
}

Test (run_cli, sigterm_to_securer_reaches_the_command)
{
  char *probe = probe_path ();
  int o[2];
  cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
  pid_t c = fork ();
  if (c == 0)
    {
      dup2 (o[1], 1);
      execl (cli_securer_bin (), cli_securer_bin (), "run", "--policy", policy_file, "--", probe, "echo", "up",
             "sleep", "60", (char *) NULL);
      _exit (99);
    }
  close (o[1]);
  char buf[8] = "";
  cr_assert_eq (read (o[0], buf, 3), 3);
  cr_assert_str_eq (buf, "up\n");
  kill (c, SIGTERM);
  int st;
  waitpid (c, &st, 0);
  cr_assert (WIFEXITED (st));
  cr_assert_eq (WEXITSTATUS (st), 128 + SIGTERM);
  close (o[0]);
  free (probe);
}

Test (run_cli, r_prints_two)
{
  if (access ("/usr/lib/R/bin/exec/R", X_OK) != 0)
    cr_skip_test ("R is not installed");
  char *args[] = { "run", "--policy", "r", "--", "/usr/lib/R/bin/exec/R", "--vanilla", "--slave", "-e",
                   "cat(1+1)", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_str_eq (r.out, "2");
  cli_run_clear (&r);
}

/* R exits without noise: its temp-dir clean-up (sh -c "rm -Rf ...") works
 * under the exec allowlist. */
Test (run_cli, r_exits_cleanly_with_nothing_on_stderr)
{
  if (access ("/usr/lib/R/bin/exec/R", X_OK) != 0)
    cr_skip_test ("R is not installed");
  char *args[] = { "run", "--policy", "r", "--", "/usr/lib/R/bin/exec/R", "--vanilla", "--slave", "-e",
                   "cat(file.exists(tempdir()))", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_str_eq (r.out, "TRUE");
  cr_assert_str_eq (r.err, "");
  cli_run_clear (&r);
}

/* Under minimal.policy an ordinary command can list the sandbox's root and
 * sees only the policy's view. */
Test (run_cli, minimal_lists_root_and_sees_only_the_view)
{
  char *args[] = { "run", "--policy", "minimal", "--", "/bin/ls", "/", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_not_null (strstr (r.out, "usr\n"), "%s", r.out);
  cr_assert_not_null (strstr (r.out, "tmp\n"), "%s", r.out);
  cr_assert_null (strstr (r.out, "root\n"), "%s", r.out);
  cr_assert_null (strstr (r.out, "home\n"), "%s", r.out);
  cli_run_clear (&r);
}

/* The dev step's shm is sized, so files there cannot take the host's
 * memory (RLIMIT_FSIZE caps each file, not their number). */
Test (run_cli, dev_shm_is_64_mib)
{
  char *args[] = { "run", "--policy", "minimal", "--", "/usr/bin/stat", "-f", "-c", "%b %S",
                   "/dev/shm", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  unsigned long blocks = 0, bsize = 0;
  cr_assert_eq (sscanf (r.out, "%lu %lu", &blocks, &bsize), 2, "%s", r.out);
  cr_assert_eq (blocks * bsize, 64ul << 20);
  cli_run_clear (&r);
}

Test (run_cli, probe_json_reports_every_feature)
{
  char *args[] = { "probe", "--json", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  json_error_t je;
  json_t *o = json_loads (r.out, 0, &je);
  cr_assert_not_null (o, "%s", je.text);
  const char *keys[] = { "user_namespaces", "landlock_abi", "seccomp", "cgroup", "clone3", "pidfd", "close_range",
                         "pidfd_getfd", "host_ids" };
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    cr_assert_not_null (json_object_get (o, keys[i]), "%s missing", keys[i]);
  /* The sandboxes above ran, so this kernel has what they used. */
  cr_assert (json_is_true (json_object_get (json_object_get (o, "user_namespaces"), "available")));
  cr_assert (json_is_true (json_object_get (json_object_get (json_object_get (o, "seccomp"), "actions"),
                                            "kill_process")));
  cr_assert (json_is_true (json_object_get (o, "pidfd")));
  /* A root caller's sandboxes ran with host ids of their own; anyone else
   * is told why not. */
  json_t *ids = json_object_get (o, "host_ids");
  cr_assert_eq (json_is_true (json_object_get (ids, "available")), geteuid () == 0);
  if (geteuid () != 0)
    cr_assert (json_is_string (json_object_get (ids, "why")));
  json_decref (o);
  cli_run_clear (&r);
}

/* ---- the compiled filter kept by rule text ------------------------------------ */

/* A private cache and data directory: group tcgrp reaches tcinner, which
 * holds `inner`. */
static void
text_cache_dirs (char **cache, char **data, const char *inner)
{
  cr_assert (asprintf (cache, "%s/cache", tmpdir) > 0);
  cr_assert (asprintf (data, "%s/data", tmpdir) > 0);
  cr_assert_eq (mkdir (*cache, 0700), 0);
  char *seccomp = NULL, *f = NULL;
  cr_assert (asprintf (&seccomp, "%s/seccomp", *data) > 0);
  cr_assert_eq (mkdir (*data, 0755), 0);
  cr_assert_eq (mkdir (seccomp, 0755), 0);
  cr_assert (asprintf (&f, "%s/tcgrp.syscalls", seccomp) > 0);
  FILE *fp = fopen (f, "w");
  cr_assert_not_null (fp);
  fputs ("# reaches the inner group\n  @tcinner   # nested\n", fp);
  fclose (fp);
  free (f);
  cr_assert (asprintf (&f, "%s/tcinner.syscalls", seccomp) > 0);
  fp = fopen (f, "w");
  cr_assert_not_null (fp);
  fprintf (fp, "%s\n", inner);
  fclose (fp);
  free (f);
  free (seccomp);
  cr_assert_eq (setenv ("SECURER_SECCOMP_CACHE", *cache, 1), 0);
  cr_assert_eq (setenv ("SECURER_DATADIR", *data, 1), 0);
}

static void
text_cache_remove (char *cache, char *data)
{
  char *cmd = NULL;
  cr_assert (asprintf (&cmd, "rm -rf '%s' '%s'", cache, data) > 0);
  cr_assert_eq (system (cmd), 0);
  free (cmd);
  free (cache);
  free (data);
}

/* The one entry of the kind `suffix` in dir, or NULL when there is none;
 * fails when there are several. */
static char *
cache_entry (const char *dir, const char *suffix)
{
  DIR *d = opendir (dir);
  cr_assert_not_null (d);
  char *found = NULL;
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      size_t n = strlen (e->d_name), s = strlen (suffix);
      if (n > s && strcmp (e->d_name + n - s, suffix) == 0)
        {
          cr_assert_null (found, "more than one %s entry", suffix);
          cr_assert (asprintf (&found, "%s/%s", dir, e->d_name) > 0);
        }
    }
  closedir (d);
  return found;
}

/* Runs the probe's `setuid 1000` under policy with --verbose; returns
 * whether the filter came from the cache by rule text, and checks what
 * setuid gave. */
static bool
setuid_verdict_is (const char *policy, const char *want)
{
  char *probe = probe_path ();
  char *args[] = { "run", "--verbose", "--policy", (char *) policy, "--", probe, "setuid", "1000", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  char *line = NULL;
  cr_assert (asprintf (&line, "setuid=%s\n", want) > 0);
  cr_assert_not_null (strstr (r.out, line), "wanted %s, got: %s", line, r.out);
  bool cached = strstr (r.err, "seccomp filter from the cache") != NULL;
  cr_assert (cached != (strstr (r.err, "resolve the seccomp rules") != NULL), "%s", r.err);
  free (line);
  free (probe);
  cli_run_clear (&r);
  return cached;
}

/* `network allow` adds socket rules to the policy's rule lines: a filter
 * kept for the same lines without it must not be taken for it. */
Test (run_cli, a_filter_kept_without_network_allow_is_not_taken_for_it)
{
  char *cache = NULL;
  cr_assert (asprintf (&cache, "%s/netcache", tmpdir) > 0);
  cr_assert_eq (mkdir (cache, 0700), 0);
  cr_assert_eq (setenv ("SECURER_SECCOMP_CACHE", cache, 1), 0);
  char *probe = probe_path ();
  char *plain = write_policy ("net-plain", NULL), *allow = write_policy ("net-allow", "network allow 127.0.0.1:9");
  struct cli_run r;
  char *first[] = { "run", "--policy", plain, "--", probe, "connect", "127.0.0.1", "3128", NULL };
  run_cli (first, -1, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_not_null (strstr (r.out, "connect=EAFNOSUPPORT\n"), "%s", r.out);
  cli_run_clear (&r);
  char *entry = cache_entry (cache, ".rules");
  cr_assert_not_null (entry, "nothing was kept");
  char *second[] = { "run", "--verbose", "--policy", allow, "--", probe, "connect", "127.0.0.1", "3128", NULL };
  run_cli (second, -1, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_not_null (strstr (r.out, "connect=OK\n"), "%s\n%s", r.out, r.err);
  cr_assert_null (strstr (r.err, "seccomp filter from the cache"), "%s", r.err);
  cli_run_clear (&r);
  char *cmd = NULL;
  cr_assert (asprintf (&cmd, "rm -rf '%s'", cache) > 0);
  cr_assert_eq (system (cmd), 0);
  free (cmd);
  free (entry);
  free (allow);
  free (plain);
  free (probe);
  free (cache);
}

Test (run_cli, unchanged_rule_text_reuses_the_filter_and_a_changed_nested_group_does_not)
{
  char *cache, *data;
  text_cache_dirs (&cache, &data, "setuid");
  char *policy = write_policy ("text-cache", "seccomp errno EXDEV @tcgrp");
  cr_assert (!setuid_verdict_is (policy, "EXDEV"), "an empty cache gave a filter");
  char *entry = cache_entry (cache, ".rules");
  cr_assert_not_null (entry, "nothing was kept");
  cr_assert (setuid_verdict_is (policy, "EXDEV"), "the unchanged policy was resolved again");

  /* The nested group no longer names setuid: minimal's default decides. */
  char *inner = NULL;
  cr_assert (asprintf (&inner, "%s/seccomp/tcinner.syscalls", data) > 0);
  FILE *f = fopen (inner, "w");
  cr_assert_not_null (f);
  fputs ("getpid\n", f);
  fclose (f);
  cr_assert (!setuid_verdict_is (policy, "ENOSYS"), "a filter of the old group file was used");
  cr_assert (setuid_verdict_is (policy, "ENOSYS"));

  /* A group file of the same name earlier in the search path is another
   * file, even with the same words. */
  cr_assert_eq (setenv ("SECURER_DATADIR", tmpdir, 1), 0);
  char *cmd = NULL;
  cr_assert (asprintf (&cmd, "cp -r '%s/seccomp' '%s/'", data, tmpdir) > 0);
  cr_assert_eq (system (cmd), 0);
  cr_assert (!setuid_verdict_is (policy, "ENOSYS"), "a group found elsewhere reused the filter");
  free (cmd);
  cr_assert (asprintf (&cmd, "rm -rf '%s/seccomp'", tmpdir) > 0);
  cr_assert_eq (system (cmd), 0);
  free (cmd);
  free (inner);
  free (entry);
  free (policy);
  text_cache_remove (cache, data);
}

static void
flip_byte_at (const char *file, long at)
{
  FILE *f = fopen (file, "r+b");
  cr_assert_not_null (f);
  cr_assert_eq (fseek (f, at, SEEK_SET), 0);
  int c = fgetc (f);
  cr_assert_neq (c, EOF);
  cr_assert_eq (fseek (f, at, SEEK_SET), 0);
  fputc (c ^ 0x10, f);
  fclose (f);
}

Test (run_cli, a_damaged_or_foreign_filter_entry_is_never_used)
{
  char *cache, *data;
  text_cache_dirs (&cache, &data, "setuid");
  char *policy = write_policy ("text-cache-damaged", "seccomp errno EXDEV @tcgrp");
  cr_assert (!setuid_verdict_is (policy, "EXDEV"));
  char *entry = cache_entry (cache, ".rules");
  cr_assert_not_null (entry);
  struct stat st;
  cr_assert_eq (stat (entry, &st), 0);

  /* One bit anywhere (the middle of the rules, the program's last
   * instruction) and the entry's digest no longer matches. */
  long places[] = { (long) st.st_size / 2, (long) st.st_size - 32 - 3 };
  for (size_t i = 0; i < sizeof places / sizeof *places; i++)
    {
      flip_byte_at (entry, places[i]);
      cr_assert (!setuid_verdict_is (policy, "EXDEV"), "a damaged entry (byte %ld) was used", places[i]);
      cr_assert (setuid_verdict_is (policy, "EXDEV"), "the damaged entry was not replaced");
    }

  cr_assert_eq (chmod (entry, 0620), 0);
  cr_assert (!setuid_verdict_is (policy, "EXDEV"), "an entry others can write was used");
  cr_assert_eq (chown (entry, 12345, 0), 0);
  cr_assert (!setuid_verdict_is (policy, "EXDEV"), "an entry of another user was used");
  cr_assert (setuid_verdict_is (policy, "EXDEV"));
  free (entry);
  free (policy);
  text_cache_remove (cache, data);
}

Test (run_cli, a_policy_with_a_bad_rule_keeps_nothing)
{
  char *cache, *data;
  text_cache_dirs (&cache, &data, "setuidd");
  char *policy = write_policy ("text-cache-bad", "seccomp errno EXDEV @tcgrp");
  char *probe = probe_path ();
  char *args[] = { "run", "--policy", policy, "--", probe, "setuid", "1000", NULL };
  for (int i = 0; i < 2; i++)
    {
      struct cli_run r;
      run_cli (args, -1, &r);
      cr_assert_eq (r.status, 125, "%s", r.err);
      cr_assert_not_null (strstr (r.err, "unknown syscall 'setuidd'"), "%s", r.err);
      cr_assert_str_eq (r.out, "");
      cli_run_clear (&r);
    }
  char *entry = cache_entry (cache, ".rules");
  cr_assert_null (entry, "a policy that does not resolve left %s", entry);
  free (probe);
  free (policy);
  text_cache_remove (cache, data);
}

/* Another build of securer with the same version (a patched compiler, as a
 * distribution's security update ships it) never takes this build's
 * compiled filters: the linker's build id is part of the key. */
Test (run_cli, another_build_with_the_same_version_does_not_take_the_filter)
{
  char *cache, *data;
  text_cache_dirs (&cache, &data, "setuid");
  char *policy = write_policy ("text-cache-build", "seccomp errno EXDEV @tcgrp");
  cr_assert (!setuid_verdict_is (policy, "EXDEV"));
  cr_assert (setuid_verdict_is (policy, "EXDEV"));

  /* A copy with one bit of its build id changed, in the build tree so that
   * it finds the same securer-init and data. */
  char *cmd = NULL, *copy = NULL, hex[129] = "";
  cr_assert (asprintf (&cmd, "readelf -n '%s' | awk '/Build ID/ {print $3; exit}'", cli_securer_bin ()) > 0);
  FILE *f = popen (cmd, "r");
  cr_assert_not_null (f);
  cr_assert_not_null (fgets (hex, sizeof hex, f), "no build id in %s", cli_securer_bin ());
  pclose (f);
  hex[strcspn (hex, "\n")] = '\0';
  size_t n = strlen (hex) / 2;
  cr_assert_gt (n, 0);
  unsigned char id[64];
  for (size_t i = 0; i < n; i++)
    cr_assert_eq (sscanf (hex + 2 * i, "%2hhx", &id[i]), 1);
  size_t len = 0;
  int fd = open (cli_securer_bin (), O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0);
  char *bin = read_all (fd);
  struct stat st;
  cr_assert_eq (fstat (fd, &st), 0);
  close (fd);
  len = (size_t) st.st_size;
  unsigned char *at = memmem (bin, len, id, n);
  cr_assert_not_null (at, "the build id is not in the file");
  at[0] ^= 1;
  cr_assert (asprintf (&copy, "%s/tests/securer-rebuilt", builddir ()) > 0);
  fd = open (copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  cr_assert_geq (fd, 0);
  cr_assert_eq (write (fd, bin, len), (ssize_t) len);
  close (fd);
  free (bin);

  cr_assert_eq (setenv ("SECURER_BIN", copy, 1), 0);
  cr_assert (!setuid_verdict_is (policy, "EXDEV"), "another build took this build's filter");
  cr_assert (setuid_verdict_is (policy, "EXDEV"), "the other build did not keep its own");
  cr_assert_eq (unsetenv ("SECURER_BIN"), 0);
  cr_assert (setuid_verdict_is (policy, "EXDEV"), "this build lost its own filter");
  unlink (copy);
  free (copy);
  free (cmd);
  free (policy);
  text_cache_remove (cache, data);
}

/* Launches at once with an empty cache all resolve, all run under the same
 * filter, and leave one entry and no half-written file behind. */
Test (run_cli, launches_at_once_share_one_filter_entry)
{
  char *cache, *data;
  text_cache_dirs (&cache, &data, "setuid");
  char *policy = write_policy ("text-cache-at-once", "seccomp errno EXDEV @tcgrp");
  char *probe = probe_path ();
  enum { N = 8 };
  pid_t pids[N];
  int outs[N];
  for (int i = 0; i < N; i++)
    {
      int o[2];
      cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
      char *args[] = { "run", "--policy", policy, "--", probe, "setuid", "1000", NULL };
      char **argv = cli_argv (args);
      pids[i] = fork ();
      cr_assert_geq (pids[i], 0);
      if (pids[i] == 0)
        {
          dup2 (o[1], 1);
          execv (argv[0], argv);
          _exit (99);
        }
      free (argv);
      close (o[1]);
      outs[i] = o[0];
    }
  for (int i = 0; i < N; i++)
    {
      char *out = read_all (outs[i]);
      close (outs[i]);
      int st;
      cr_assert_eq (waitpid (pids[i], &st, 0), pids[i]);
      cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "launch %d: status %#x", i, st);
      cr_assert_not_null (strstr (out, "setuid=EXDEV\n"), "launch %d: %s", i, out);
      free (out);
    }
  char *entry = cache_entry (cache, ".rules");
  cr_assert_not_null (entry, "no entry after %d launches", N);
  free (entry);
  char *tmp = cache_entry (cache, ".bpf");
  free (tmp);
  DIR *d = opendir (cache);
  cr_assert_not_null (d);
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    cr_assert (strncmp (e->d_name, ".tmp-", 5) != 0, "a half-written file is left: %s", e->d_name);
  closedir (d);
  cr_assert (setuid_verdict_is (policy, "EXDEV"), "the entry written at once is not used");
  free (probe);
  free (policy);
  text_cache_remove (cache, data);
}

/* --memory, --pids, --cpus and --network narrow the policy, and the
 * status record lists them with the rest of what was enforced; asking for
 * more than the policy allows is refused before anything runs. */
Test (run_cli, overrides_only_narrow_and_the_status_lists_everything_enforced)
{
  char *probe = probe_path ();
  char *status = NULL;
  cr_assert (asprintf (&status, "%s/overrides.json", tmpdir) > 0);
  char *args[] = { "run", "--policy", policy_file, "--memory", "64M", "--pids", "16", "--cpus", "0.5",
                   "--network", "none", "--json-status", status, "--", probe, "exit", "0", NULL };
  struct cli_run r;
  run_cli (args, -1, &r);
  json_error_t je;
  json_t *o = json_load_file (status, 0, &je);
  cr_assert_not_null (o, "%s\n%s", je.text, r.err);
  json_t *enf = json_object_get (o, "enforced");
  json_t *cg = json_object_get (enf, "cgroup");
  if (geteuid () == 0)
    {
      cr_assert_eq (r.status, 0, "%s", r.err);
      cr_assert (json_is_integer (json_object_get (cg, "memory")), "memory not enforced: %s",
                 json_string_value (json_object_get (cg, "report")));
      cr_assert (json_is_integer (json_object_get (cg, "pids")));
    }
  else
    {
      /* Added limits are required: without a cgroup the run is refused. */
      cr_assert_eq (r.status, 125, "%s", r.err);
    }
  json_t *lim = json_object_get (cg, "limits");
  cr_assert_eq (json_integer_value (json_object_get (lim, "memory")), 64 << 20);
  cr_assert_eq (json_integer_value (json_object_get (lim, "pids")), 16);
  cr_assert_float_eq (json_real_value (json_object_get (lim, "cpu")), 0.5, 1e-9);
  cr_assert_str_eq (json_string_value (json_object_get (enf, "network")), "none");
  json_t *pol = json_object_get (enf, "policy");
  cr_assert_str_eq (json_string_value (json_object_get (pol, "name")), "probe");
  cr_assert_eq (strlen (json_string_value (json_object_get (pol, "digest"))), 64);
  cr_assert (json_is_object (json_object_get (enf, "rlimits")));
  cr_assert (json_is_integer (json_object_get (enf, "host_uid")));
  if (geteuid () == 0)
    cr_assert_neq (json_integer_value (json_object_get (enf, "host_uid")), 0, "the command ran as host root");
  json_t *sf = json_object_get (enf, "seccomp_filter");
  cr_assert (json_is_string (json_object_get (sf, "default")));
  cr_assert_gt (json_integer_value (json_object_get (sf, "rules")), 0);
  json_decref (o);
  cli_run_clear (&r);

  /* Wider than the shipped r: refused, naming the limit; nothing ran. */
  char rpol[PATH_MAX];
  snprintf (rpol, sizeof rpol, "%s/policies/r.policy", cli_srcdir ());
  static const char *const wider[][3] = {
    { "--memory", "2G", "--memory 2G is above the policy's cgroup memory" },
    { "--pids", "1000", "--pids 1000 is above the policy's cgroup pids 64" },
    { "--cpus", "2", "--cpus 2 is above the policy's cgroup cpu 1.000" },
    { "--network", "loopback", "--network loopback is wider than the policy's network" },
    { "--memory", "lots", "--memory wants a size" },
  };
  for (size_t i = 0; i < sizeof wider / sizeof *wider; i++)
    {
      char *w[] = { "run", "--policy", rpol, (char *) wider[i][0], (char *) wider[i][1], "--", probe, "exit", "0", NULL };
      run_cli (w, -1, &r);
      cr_assert_eq (r.status, 125, "%s %s: %d %s", wider[i][0], wider[i][1], r.status, r.err);
      cr_assert (strstr (r.err, wider[i][2]) != NULL, "%s", r.err);
      cli_run_clear (&r);
    }
  free (status);
  free (probe);
}
