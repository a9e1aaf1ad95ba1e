/* `securer policy learn` on real commands in real sandboxes: the fragment
 * names what the command used and nothing it did not, it is valid policy
 * text, it lets the same command run under a kill-by-default filter, and
 * every line of it is needed (without one, the run dies of SIGSYS at that
 * syscall). */
#include <config.h>

#include <criterion/criterion.h>
#include <jansson.h>
#include <sys/stat.h>

#include "cli-util.h"

static char tmpdir[] = "/tmp/securer-learn-XXXXXX";

static void
setup (void)
{
  cr_assert_not_null (mkdtemp (tmpdir));
}

static void
teardown (void)
{
  cli_remove_dir (tmpdir);
}

TestSuite (learn, .init = setup, .fini = teardown, .timeout = 120);

static char *
path_in_tmp (const char *name)
{
  char *p = NULL;
  cr_assert (asprintf (&p, "%s/%s", tmpdir, name) > 0);
  return p;
}

static void
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fputs (text, f);
  cr_assert_eq (fclose (f), 0);
}

static char *
read_file (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "open %s: %s", path, strerror (errno));
  char *s = read_all (fd);
  close (fd);
  return s;
}

/* Runs `securer policy learn [extra] -- cmd...` with the fragment in a file;
 * returns the fragment's text. */
static char *
learn (const char *out_name, char **extra, char **cmd, struct cli_run *r)
{
  char *out = path_in_tmp (out_name);
  char *args[32];
  size_t n = 0;
  args[n++] = "policy";
  args[n++] = "learn";
  args[n++] = "-o";
  args[n++] = out;
  for (; extra && *extra; extra++)
    args[n++] = *extra;
  args[n++] = "--";
  for (; *cmd; cmd++)
    args[n++] = *cmd;
  args[n] = NULL;
  cli_run (args, r);
  cr_assert_eq (r->status, 0, "learn exited %d: %s", r->status, r->err);
  char *text = read_file (out);
  free (out);
  return text;
}

/* The syscalls the fragment allows (every `seccomp allow NAME` line; for
 * groups, "@name"), in order, NULL-terminated. */
static char **
allowed (const char *fragment, size_t *n_out)
{
  char **v = calloc (512, sizeof *v);
  size_t n = 0;
  const char *line = fragment;
  while (*line)
    {
      const char *end = strchr (line, '\n');
      if (end == NULL)
        end = line + strlen (line);
      if (strncmp (line, "seccomp allow ", 14) == 0)
        {
          const char *s = line + 14;
          size_t len = strcspn (s, " \n");
          char *name = strndup (s, len);
          bool dup = false;
          for (size_t i = 0; i < n; i++)
            dup |= strcmp (v[i], name) == 0;
          if (dup)
            free (name);
          else if (n < 511)
            v[n++] = name;
        }
      line = *end ? end + 1 : end;
    }
  *n_out = n;
  return v;
}

static bool
has (char **v, const char *name)
{
  for (; *v; v++)
    if (strcmp (*v, name) == 0)
      return true;
  return false;
}

static size_t
count (const char *hay, const char *needle)
{
  size_t n = 0;
  for (const char *s = hay; (s = strstr (s, needle)) != NULL; s++)
    n++;
  return n;
}

static void
strv_free_all (char **v)
{
  for (char **p = v; *p; p++)
    free (*p);
  free (v);
}

/* A deny-by-default policy: the base sandbox pieces without their
 * allowlist, plus the fragment (copied next to it) and optionally one
 * syscall's lines taken out. */
static char *
kill_policy (const char *fragment, const char *without)
{
  char *frag_path = path_in_tmp ("learned.policy");
  FILE *f = fopen (frag_path, "w");
  cr_assert_not_null (f);
  const char *line = fragment;
  while (*line)
    {
      const char *end = strchr (line, '\n');
      size_t len = end ? (size_t) (end - line + 1) : strlen (line);
      bool skip = false;
      if (without != NULL && strncmp (line, "seccomp allow ", 14) == 0)
        {
          size_t wl = strlen (without);
          skip = strncmp (line + 14, without, wl) == 0 && (line[14 + wl] == ' ' || line[14 + wl] == '\n');
        }
      if (!skip)
        fwrite (line, 1, len, f);
      line += len;
    }
  cr_assert_eq (fclose (f), 0);
  char *pol = path_in_tmp ("run.policy");
  char *text = NULL;
  cr_assert (asprintf (&text,
                       "include \"%s/policies/base/isolation.policy\"\n"
                       "include \"%s/policies/base/fs-system.policy\"\n"
                       "include \"%s/policies/base/env.policy\"\n"
                       "limit timeout 60s\n"
                       "seccomp default kill-process\n"
                       "include \"learned.policy\"\n",
                       cli_srcdir (), cli_srcdir (), cli_srcdir ()) > 0);
  write_file (pol, text);
  free (text);
  free (frag_path);
  return pol;
}

static void
run_under (const char *policy, char **cmd, struct cli_run *r)
{
  char *args[32];
  size_t n = 0;
  args[n++] = "run";
  args[n++] = "--policy";
  args[n++] = (char *) policy;
  args[n++] = "--";
  for (; *cmd; cmd++)
    args[n++] = *cmd;
  args[n] = NULL;
  cli_run (args, r);
}

Test (learn, true_uses_exec_and_exit_and_nothing_else)
{
  struct cli_run r;
  char *cmd[] = { "/bin/true", NULL };
  char *frag = learn ("true.policy", NULL, cmd, &r);
  size_t n;
  char **names = allowed (frag, &n);
  cr_assert (has (names, "execve"), "%s", frag);
  cr_assert (has (names, "exit_group"), "%s", frag);
  /* Nothing /bin/true never does. */
  cr_assert (!has (names, "ptrace"), "%s", frag);
  cr_assert (!has (names, "getdents64"), "%s", frag);
  cr_assert (!has (names, "socket"), "%s", frag);
  cr_assert (!has (names, "write"), "%s", frag);
  cr_assert_null (strstr (frag, "seccomp allow @"), "no group is used whole by /bin/true:\n%s", frag);
  cr_assert_not_null (strstr (r.err, "/bin/true exited with status 0"), "%s", r.err);
  cr_assert_str_empty (r.out);
  strv_free_all (names);
  free (frag);
  cli_run_clear (&r);
}

Test (learn, ls_uses_openat_getdents64)
{
  struct cli_run r;
  char *cmd[] = { "/bin/ls", "/tmp", NULL };
  char *frag = learn ("ls.policy", NULL, cmd, &r);
  size_t n;
  char **names = allowed (frag, &n);
  cr_assert (has (names, "execve"), "%s", frag);
  cr_assert (has (names, "exit_group"), "%s", frag);
  cr_assert (has (names, "openat"), "%s", frag);
  cr_assert (has (names, "getdents64"), "%s", frag);
  cr_assert (!has (names, "ptrace"), "%s", frag);
  cr_assert (!has (names, "bpf"), "%s", frag);
  cr_assert (!has (names, "mount"), "%s", frag);
  /* Counts are comments on each line. */
  cr_assert_not_null (strstr (frag, "seccomp allow getdents64"), "%s", frag);
  cr_assert_not_null (strstr (frag, "# @file-system: "), "%s", frag);
  strv_free_all (names);
  free (frag);
  cli_run_clear (&r);
}

Test (learn, fragment_is_valid_policy_text)
{
  struct cli_run r;
  char *cmd[] = { "/bin/ls", "/tmp", NULL };
  char *frag = learn ("ls.policy", NULL, cmd, &r);
  cli_run_clear (&r);
  char *pol = kill_policy (frag, NULL);
  char *args[] = { "policy", "check", pol, NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 0, "check: %s%s", r.out, r.err);
  cr_assert_str_empty (r.err);
  free (pol);
  free (frag);
  cli_run_clear (&r);
}

Test (learn, same_output_twice)
{
  /* Sorted and deterministic: two runs of /bin/true give the same text. */
  struct cli_run r1, r2;
  char *cmd[] = { "/bin/true", NULL };
  char *a = learn ("a.policy", NULL, cmd, &r1);
  char *b = learn ("b.policy", NULL, cmd, &r2);
  cr_assert_str_eq (a, b);
  free (a);
  free (b);
  cli_run_clear (&r1);
  cli_run_clear (&r2);
}

/* The fragment lets the command run under kill-process by default, and
 * without any one of its syscalls the command dies at exactly that one. */
static void
check_minimal_and_sufficient (char **cmd, const char *const *only)
{
  struct cli_run r;
  char *frag = learn ("learned-src.policy", NULL, cmd, &r);
  cli_run_clear (&r);
  char *pol = kill_policy (frag, NULL);
  run_under (pol, cmd, &r);
  cr_assert_eq (r.status, 0, "with the fragment: status %d: %s\n%s", r.status, r.err, frag);
  cli_run_clear (&r);
  free (pol);

  size_t n;
  char **names = allowed (frag, &n);
  cr_assert_gt (n, 5);
  for (size_t i = 0; i < n; i++)
    {
      if (only != NULL)
        {
          bool pick = false;
          for (const char *const *o = only; *o; o++)
            pick |= strcmp (*o, names[i]) == 0;
          if (!pick)
            continue;
        }
      pol = kill_policy (frag, names[i]);
      run_under (pol, cmd, &r);
      cr_assert_eq (r.status, 128 + SIGSYS, "without %s: status %d: %s", names[i], r.status, r.err);
      char *want = NULL;
      cr_assert (asprintf (&want, "at syscall %s\n", names[i]) > 0);
      cr_assert_not_null (strstr (r.err, want), "without %s: %s", names[i], r.err);
      free (want);
      cli_run_clear (&r);
      free (pol);
    }
  strv_free_all (names);
  free (frag);
}

Test (learn, true_fragment_is_minimal_and_sufficient)
{
  /* Every line, one at a time: each is needed. */
  char *cmd[] = { "/bin/true", NULL };
  check_minimal_and_sufficient (cmd, NULL);
}

Test (learn, ls_fragment_is_minimal_and_sufficient)
{
  char *cmd[] = { "/bin/ls", "/tmp", NULL };
  static const char *const some[] = { "getdents64", "openat", "execve", "exit_group", NULL };
  check_minimal_and_sufficient (cmd, some);
}

Test (learn, children_are_covered_and_status_reported)
{
  /* The shell forks ls: ls's getdents64 can only have been seen in the child. */
  struct cli_run r;
  char *cmd[] = { "/bin/sh", "-c", "/bin/ls /tmp; exit 3", NULL };
  char *frag = learn ("sh.policy", NULL, cmd, &r);
  size_t n;
  char **names = allowed (frag, &n);
  cr_assert (has (names, "getdents64"), "%s", frag);
  cr_assert (has (names, "wait4"), "%s", frag);
  cr_assert (has (names, "clone") || has (names, "clone3") || has (names, "vfork") || has (names, "fork"),
             "%s", frag);
  cr_assert_not_null (strstr (r.err, "exited with status 3"), "%s", r.err);
  cr_assert_not_null (strstr (frag, "exited with status 3"), "%s", frag);
  strv_free_all (names);
  free (frag);
  cli_run_clear (&r);
}

Test (learn, socket_family_becomes_a_condition)
{
  /* ls -l names file owners: glibc first asks nscd over an AF_UNIX socket. */
  struct cli_run r;
  char *cmd[] = { "/bin/ls", "-l", "/", NULL };
  char *frag = learn ("sock.policy", NULL, cmd, &r);
  cr_assert_not_null (strstr (frag, "seccomp allow socket if arg0 == AF_UNIX "), "%s", frag);
  cr_assert_eq (count (frag, "seccomp allow socket "), count (frag, "seccomp allow socket if "),
                "socket is only allowed with a condition:\n%s", frag);
  /* /dev/null is no terminal: isatty's TCGETS shows up as a condition. */
  char *cmd2[] = { "/bin/sh", "-c", "test -t 0", NULL };
  cli_run_clear (&r);
  free (frag);
  frag = learn ("tty.policy", NULL, cmd2, &r);
  cr_assert_not_null (strstr (frag, "seccomp allow ioctl if arg1 == TCGETS"), "%s", frag);
  free (frag);
  cli_run_clear (&r);
}

Test (learn, json_form)
{
  struct cli_run r;
  char *args[] = { "policy", "learn", "--json", "--", "/bin/true", NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  json_error_t je;
  json_t *j = json_loads (r.out, 0, &je);
  cr_assert_not_null (j, "%s: %s", je.text, r.out);
  cr_assert_eq (json_integer_value (json_object_get (json_object_get (j, "status"), "exit_code")), 0);
  json_t *sys = json_object_get (j, "syscalls");
  bool execve = false;
  size_t i;
  json_t *s;
  json_array_foreach (sys, i, s)
    {
      execve |= strcmp (json_string_value (json_object_get (s, "name")), "execve") == 0;
      cr_assert_gt (json_integer_value (json_object_get (s, "calls")), 0);
    }
  cr_assert (execve);
  cr_assert_not_null (strstr (json_string_value (json_object_get (j, "fragment")), "seccomp allow execve"));
  json_decref (j);
  cli_run_clear (&r);
}

Test (learn, command_output_does_not_mix_with_the_fragment)
{
  struct cli_run r;
  /* The header names the command line, which must not contain the output. */
  char *args[] = { "policy", "learn", "--", "/bin/sh", "-c", "echo from-the-\"\"command", NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_null (strstr (r.out, "from-the-command"), "%s", r.out);
  cr_assert_not_null (strstr (r.err, "from-the-command\n"), "%s", r.err);
  cr_assert_not_null (strstr (r.out, "seccomp allow write"), "%s", r.out);
  cli_run_clear (&r);
}

Test (learn, base_with_a_missing_mount_is_a_setup_failure)
{
  char *base = path_in_tmp ("broken.policy");
  char *text = NULL;
  cr_assert (asprintf (&text, "include \"%s/policies/minimal.policy\"\nmount ro /nonexistent-securer-learn /x\n",
                       cli_srcdir ()) > 0);
  write_file (base, text);
  free (text);
  struct cli_run r;
  char *out = path_in_tmp ("never.policy");
  char *args[] = { "policy", "learn", "--policy", base, "-o", out, "--", "/bin/true", NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 125, "%d: %s", r.status, r.err);
  cr_assert_not_null (strstr (r.err, "/nonexistent-securer-learn"), "%s", r.err);
  struct stat st;
  cr_assert_eq (stat (out, &st), -1, "no fragment is written when nothing ran");
  free (out);
  free (base);
  cli_run_clear (&r);
}

Test (learn, usage_errors)
{
  struct cli_run r;
  char *none[] = { "policy", "learn", NULL };
  cli_run (none, &r);
  cr_assert_eq (r.status, 2);
  cr_assert_not_null (strstr (r.err, "no command"), "%s", r.err);
  cli_run_clear (&r);
  char *bad[] = { "policy", "learn", "--collapse", "0", "--", "/bin/true", NULL };
  cli_run (bad, &r);
  cr_assert_eq (r.status, 2);
  cli_run_clear (&r);
  char *missing[] = { "policy", "learn", "--policy", "no-such-policy", "--", "/bin/true", NULL };
  cli_run (missing, &r);
  cr_assert_eq (r.status, 125);
  cli_run_clear (&r);
  char *help[] = { "policy", "learn", "--help", NULL };
  cli_run (help, &r);
  cr_assert_eq (r.status, 0);
  cr_assert_not_null (strstr (r.out, "--policy BASE"), "%s", r.out);
  cli_run_clear (&r);
}

Test (learn, base_denials_dropped_or_kept)
{
  /* minimal's seccomp-common answers unshare with EPERM. */
  struct cli_run r;
  char *cmd[] = { "/usr/bin/unshare", "-U", "/bin/true", NULL };
  char *frag = learn ("dropped.policy", NULL, cmd, &r);
  cr_assert_not_null (strstr (frag, "seccomp allow unshare "), "%s", frag);
  cr_assert_not_null (strstr (frag, "base: errno EPERM"), "%s", frag);
  cli_run_clear (&r);
  free (frag);

  char *keep[] = { "--keep-denials", NULL };
  frag = learn ("kept.policy", keep, cmd, &r);
  cr_assert_null (strstr (frag, "seccomp allow unshare"), "%s", frag);
  cr_assert_not_null (strstr (r.err, "Operation not permitted"), "%s", r.err);
  cr_assert_not_null (strstr (r.err, "exited with status 1"), "%s", r.err);
  cli_run_clear (&r);
  free (frag);
}

/* --write-policy and --write-expect: from one real recorded run, a whole
 * policy (the base's pieces with the learned rules in place of its
 * allowlist) that loads, runs the command, and passes its own
 * expectations; and expectations that catch an edit taking away a call
 * the command needs. */
static void
learn_policy_and_expectations (const char *base, char **cmd, const char *needed)
{
  char *pol = path_in_tmp ("whole.policy"), *exp = path_in_tmp ("whole.expect");
  char *extra[] = { "--policy", (char *) base, "--write-policy", pol, "--write-expect", exp, NULL };
  struct cli_run r;
  char *frag = learn ("fragment.policy", extra, cmd, &r);
  cli_run_clear (&r);
  char *text = read_file (pol), *expect = read_file (exp);

  /* The shipped pieces are included by the names that resolve anywhere;
   * the allowlist is not, the learned rules are. */
  cr_assert_not_null (strstr (text, "\ninclude \"base/isolation.policy\"\n"), "%s", text);
  cr_assert_not_null (strstr (text, "\ninclude \"base/seccomp-hardening.policy\"\n"), "%s", text);
  cr_assert_null (strstr (text, "\ninclude \"base/seccomp-common.policy\""), "%s", text);
  char *rule = NULL;
  cr_assert (asprintf (&rule, "\nseccomp allow %s ", needed) > 0);
  cr_assert_not_null (strstr (text, rule), "%s", text);
  cr_assert_not_null (strstr (text, "\nseccomp default errno ENOSYS\n"), "%s", text);

  char *check[] = { "policy", "check", pol, NULL };
  cli_run (check, &r);
  cr_assert_eq (r.status, 0, "check: %s%s", r.out, r.err);
  cli_run_clear (&r);

  char *test[] = { "policy", "test", "-q", pol, exp, NULL };
  cli_run (test, &r);
  cr_assert_eq (r.status, 0, "test: %s%s\n%s", r.out, r.err, expect);
  cr_assert_str_empty (r.out);
  cli_run_clear (&r);
  char *line = NULL;
  cr_assert (asprintf (&line, "\n%s -> allow\n", needed) > 0);
  cr_assert_not_null (strstr (expect, line), "%s", expect);
  cr_assert_not_null (strstr (expect, "\npath /tmp -> writable\n"), "%s", expect);
  cr_assert_not_null (strstr (expect, "\nnetwork none\n"), "%s", expect);

  /* The policy runs the command, in a real sandbox. */
  run_under (pol, cmd, &r);
  cr_assert_eq (r.status, 0, "run: %s", r.err);
  cli_run_clear (&r);

  /* Taking the needed call away fails its expectation, at its line. */
  char *cut = strstr (text, rule) + 1;
  memset (cut, ' ', strcspn (cut, "\n"));
  char *edited = path_in_tmp ("edited.policy");
  write_file (edited, text);
  char *retest[] = { "policy", "test", "-q", edited, exp, NULL };
  cli_run (retest, &r);
  cr_assert_eq (r.status, 1, "%s%s", r.out, r.err);
  char *failure = NULL;
  cr_assert (asprintf (&failure, ": error: expected allow, got errno ENOSYS for %s(", needed) > 0);
  cr_assert_not_null (strstr (r.out, failure), "%s", r.out);
  cli_run_clear (&r);

  free (failure);
  free (edited);
  free (line);
  free (rule);
  free (text);
  free (expect);
  free (frag);
  free (pol);
  free (exp);
}

Test (learn, writes_a_policy_and_expectations_that_pass)
{
  char *ls[] = { "/bin/ls", "/tmp", NULL };
  learn_policy_and_expectations ("minimal", ls, "getdents64");
}

Test (learn, writes_a_policy_and_expectations_from_the_r_policy)
{
  /* r keeps its own lines (mounts, exec list, W^X rules) around the
   * learned ones; its shell is one of the few programs it may run. */
  char *sh[] = { "/bin/sh", "-c", "echo hi > /tmp/x && read l < /tmp/x", NULL };
  learn_policy_and_expectations ("r", sh, "openat");
}

Test (learn, write_expect_needs_write_policy)
{
  struct cli_run r;
  char *args[] = { "policy", "learn", "--write-expect", "/tmp/x.expect", "--", "/bin/true", NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 2);
  cr_assert_not_null (strstr (r.err, "--write-expect"), "%s", r.err);
  cli_run_clear (&r);
}

Test (learn, write_policy_needs_a_base_in_text)
{
  /* A JSON policy has no lines to keep. */
  struct cli_run r;
  char *json = path_in_tmp ("base.json"), *pol = path_in_tmp ("out.policy");
  char *show[] = { "policy", "show", "--json", "minimal", NULL };
  cli_run (show, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  write_file (json, r.out);
  cli_run_clear (&r);
  char *args[] = { "policy", "learn", "--policy", json, "--write-policy", pol, "--", "/bin/true", NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 1, "%s", r.err);
  cr_assert_not_null (strstr (r.err, "is a JSON policy"), "%s", r.err);
  cli_run_clear (&r);
  free (json);
  free (pol);
}

/* Several commands after their own '--' are learned into one record: the
 * fragment and the written policy hold what either run used, and the
 * policy learned from one run alone does not. */
Test (learn, runs_after_each_double_dash_are_merged)
{
  char *base = cli_probe_policy (tmpdir, "probe-base", NULL);
  char *probe = probe_path ();
  char *merged = path_in_tmp ("merged.policy"), *exp = path_in_tmp ("merged.expect");
  char *one = path_in_tmp ("one.policy");
  struct cli_run r;

  char *both[] = { "policy", "learn", "--policy", base, "-o", "-", "--write-policy", merged, "--write-expect", exp,
                   "--", probe, "setuid", "1000", "--", probe, "setuid", "1000", "setuid", "1000", "kill", "1", "0",
                   NULL };
  cli_run (both, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_eq (count (r.err, "probe exited with status 0"), 2, "%s", r.err);
  cr_assert_not_null (strstr (r.out, "# Syscalls used by 2 runs, merged:\n#   1: "), "%s", r.out);
  cr_assert_not_null (strstr (r.out, "# Run 2 exited with status 0.\n"), "%s", r.out);
  /* Three calls in all: one in the first run, two in the second. */
  cr_assert_not_null (strstr (r.out, "\nseccomp allow setuid                        # 3 calls"), "%s", r.out);
  cr_assert_not_null (strstr (r.out, "\nseccomp allow kill "), "%s", r.out);
  cli_run_clear (&r);

  char *test[] = { "policy", "test", "-q", merged, exp, NULL };
  cli_run (test, &r);
  cr_assert_eq (r.status, 0, "%s%s", r.out, r.err);
  cli_run_clear (&r);

  char *second[] = { "policy", "learn", "--policy", base, "-o", "/dev/null", "--write-policy", one, "--", probe, "kill",
                     "1", "0", NULL };
  cli_run (second, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cli_run_clear (&r);

  char *cmd[] = { probe, "setuid", "1000", NULL };
  run_under (merged, cmd, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_not_null (strstr (r.out, "setuid=OK\n"), "%s", r.out);
  cli_run_clear (&r);
  run_under (one, cmd, &r);
  cr_assert_not_null (strstr (r.out, "setuid=ENOSYS\n"), "%s", r.out);
  cli_run_clear (&r);

  char *empty[] = { "policy", "learn", "--policy", base, "--", probe, "setuid", "1000", "--", NULL };
  cli_run (empty, &r);
  cr_assert_eq (r.status, 2, "%s", r.err);
  cr_assert_not_null (strstr (r.err, "empty command"), "%s", r.err);
  cli_run_clear (&r);

  free (one);
  free (exp);
  free (merged);
  free (probe);
  free (base);
}

/* The exec list the fragment proposes names the programs that ran (seen
 * inside the sandbox) and their loader, not the launcher: under it the
 * command runs, and without one of its programs that one is refused. */
Test (learn, proposes_the_exec_list_of_the_programs_that_ran)
{
  struct cli_run r;
  char *cmd[] = { "/bin/sh", "-c", "ls /; echo done", NULL };
  char *frag = learn ("sh.policy", NULL, cmd, &r);
  cli_run_clear (&r);
  const char *at = strstr (frag, "\n#   exec ");
  cr_assert_not_null (at, "%s", frag);
  char *list = strndup (at + 5, strcspn (at + 5, "\n"));
  cr_assert_not_null (strstr (list, " /usr/bin/dash"), "%s", list);
  cr_assert_not_null (strstr (list, " /usr/bin/ls"), "%s", list);
  cr_assert_not_null (strstr (list, " /lib64/ld-linux-x86-64.so.2"), "%s", list);
  cr_assert_null (strstr (list, "securer"), "%s", list);

  char *text = NULL, *pol = path_in_tmp ("exec.policy");
  cr_assert (asprintf (&text, "include \"%s/policies/minimal.policy\"\n%s\n", cli_srcdir (), list) > 0);
  write_file (pol, text);
  run_under (pol, cmd, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_not_null (strstr (r.out, "\nusr\n"), "%s", r.out);
  cr_assert_str_empty (r.err);
  cli_run_clear (&r);

  /* The same list without ls. */
  char *ls = strstr (text, " /usr/bin/ls");
  memset (ls, ' ', strlen (" /usr/bin/ls"));
  write_file (pol, text);
  run_under (pol, cmd, &r);
  cr_assert_null (strstr (r.out, "\nusr\n"), "%s", r.out);
  cr_assert_not_null (strstr (r.err, "ls: Permission denied"), "%s", r.err);
  cli_run_clear (&r);
  free (pol);
  free (text);
  free (list);
  free (frag);
}

/* The read-only mounts the fragment proposes are the directories of what
 * the command read (and a file the base binds alone), under the base's
 * read-only binds only: a view made of them, the base's symlinks and
 * Debian's /usr/lib64 (a symlink on the way, not seen) runs the command,
 * shows nothing it did not read, and without the libraries' directory
 * the command cannot start. */
Test (learn, proposes_read_only_mounts_of_the_directories_read)
{
  struct cli_run r;
  char *cmd[] = { "/bin/sh", "-c", "ls /usr/share/doc >/dev/null; cat /etc/ld.so.cache >/dev/null; echo ran",
                  NULL };
  char *frag = learn ("ro.policy", NULL, cmd, &r);
  cli_run_clear (&r);
  cr_assert_not_null (strstr (frag, "\n#   mount ro /usr/share/doc\n"), "%s", frag);
  cr_assert_not_null (strstr (frag, "\n#   mount ro /usr/lib/x86_64-linux-gnu\n"), "%s", frag);
  cr_assert_not_null (strstr (frag, "\n#   mount ro /usr/bin\n"), "%s", frag);
  cr_assert_not_null (strstr (frag, "\n#   mount ro /etc/ld.so.cache\n"), "%s", frag);
  /* Not the base's whole /usr, nothing of its proc, dev or tmpfs. */
  cr_assert_null (strstr (frag, "\n#   mount ro /usr\n"), "%s", frag);
  cr_assert_null (strstr (frag, "\n#   mount ro /proc"), "%s", frag);
  cr_assert_null (strstr (frag, "\n#   mount ro /dev"), "%s", frag);
  cr_assert_null (strstr (frag, "\n#   mount ro /tmp"), "%s", frag);

  char *text = NULL, *pol = path_in_tmp ("narrow.policy");
  FILE *f = open_memstream (&text, &(size_t) { 0 });
  cr_assert_not_null (f);
  fprintf (f, "include \"%s/policies/base/isolation.policy\"\n", cli_srcdir ());
  fprintf (f, "include \"%s/policies/base/env.policy\"\n", cli_srcdir ());
  fprintf (f, "include \"%s/policies/base/seccomp-common.policy\"\n", cli_srcdir ());
  fputs ("mount symlink /bin -> usr/bin\nmount symlink /lib -> usr/lib\nmount symlink /lib64 -> usr/lib64\n"
         "mount ro? /usr/lib64\nmount proc /proc\nmount dev /dev\nmount tmpfs /tmp\n", f);
  for (const char *l = strstr (frag, "\n#   mount ro "); l != NULL; l = strstr (l + 1, "\n#   mount ro "))
    fprintf (f, "%.*s\n", (int) strcspn (l + 5, "\n"), l + 5);
  cr_assert_eq (fclose (f), 0);
  write_file (pol, text);
  run_under (pol, cmd, &r);
  cr_assert_eq (r.status, 0, "%s\n%s", r.err, text);
  cr_assert_str_eq (r.out, "ran\n");
  cli_run_clear (&r);
  char *man[] = { "/bin/ls", "/usr/share/man", NULL };
  run_under (pol, man, &r);
  cr_assert_eq (r.status, 2, "%s", r.err);
  cr_assert_not_null (strstr (r.err, "No such file or directory"), "%s", r.err);
  cli_run_clear (&r);

  char *libs = strstr (text, "mount ro /usr/lib/x86_64-linux-gnu\n");
  memset (libs, ' ', strlen ("mount ro /usr/lib/x86_64-linux-gnu"));
  write_file (pol, text);
  run_under (pol, cmd, &r);
  cr_assert_eq (r.status, 127, "%s", r.err);
  cli_run_clear (&r);
  free (pol);
  free (text);
  free (frag);
}
