/* securer policy check|show: output and exit status, run as a user would. */
#include <config.h>

#include <jansson.h>
#include <sys/wait.h>

#include "policy-test.h"
#include "seccomp/seccomp.h"

struct run {
  int status;
  char *out;
  char *err;
};

static char *
slurp (FILE *f)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream (&buf, &len);
  int c;
  while ((c = fgetc (f)) != EOF)
    fputc (c, m);
  fclose (m);
  return buf;
}

/* Runs `securer ARGS` with stdout and stderr captured. */
static struct run
securer (const char *args)
{
  const char *bin = getenv ("SECURER_BIN");
  cr_assert_not_null (bin);
  char *cmd = NULL;
  char errfile[] = "/tmp/securer-cli-XXXXXX";
  int fd = mkstemp (errfile);
  cr_assert_geq (fd, 0);
  close (fd);
  cr_assert_geq (asprintf (&cmd, "cd '%s' && '%s' %s 2>'%s'", getenv ("SECURER_SRCDIR"), bin, args, errfile), 0);
  FILE *p = popen (cmd, "r");
  cr_assert_not_null (p);
  struct run r;
  r.out = slurp (p);
  int st = pclose (p);
  r.status = WIFEXITED (st) ? WEXITSTATUS (st) : -1;
  FILE *e = fopen (errfile, "r");
  r.err = slurp (e);
  fclose (e);
  unlink (errfile);
  free (cmd);
  return r;
}

static void
run_free (struct run *r)
{
  free (r->out);
  free (r->err);
}

Test (policy_cli, check_ok_and_errors)
{
  struct run r = securer ("policy check r minimal policies/r.policy");
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_str_eq (r.out, "r: ok\nminimal: ok\npolicies/r.policy: ok\n");
  cr_assert_str_eq (r.err, "");
  run_free (&r);

  r = securer ("policy check tests/unit/data/policy/include-bad.policy");
  cr_assert_eq (r.status, 1);
  cr_assert_str_eq (r.out, "");
  cr_assert (strstr (r.err, "tests/unit/data/policy/include-bad.policy:3:9: error: cannot include 'resolved.json'") != NULL, "%s", r.err);
  cr_assert (strstr (r.err, "tests/unit/data/policy/include-bad.policy: invalid policy\n") != NULL, "%s", r.err);
  run_free (&r);

  r = securer ("policy check no-such-policy");
  cr_assert_eq (r.status, 1);
  cr_assert (strstr (r.err, "securer: policy 'no-such-policy': policies/no-such-policy.policy not found") != NULL, "%s", r.err);
  run_free (&r);
}

Test (policy_cli, usage_errors_exit_2)
{
  static const char *const bad[] = { "policy", "policy check", "policy show", "policy show r minimal",
                                     "policy frobnicate", "policy check --bogus r",
                                     "policy show --json --oci r" };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    {
      struct run r = securer (bad[i]);
      cr_expect_eq (r.status, 2, "%s", bad[i]);
      run_free (&r);
    }
}

Test (policy_cli, help_for_each_command)
{
  static const struct { const char *args; const char *first; } h[] = {
    { "policy --help", "Usage: securer policy COMMAND" },
    { "policy check --help", "Usage: securer policy check" },
    { "policy show -h", "Usage: securer policy show" },
    { "help policy", "Usage: securer policy COMMAND" },
    { "help policy check", "Usage: securer policy check" },
    { "help policy show", "Usage: securer policy show" },
    { "help policy compile", "Usage: securer policy compile" },
    { "help policy import", "Usage: securer policy import" },
    { "policy compile --help", "Usage: securer policy compile" },
    { "policy import --help", "Usage: securer policy import" },
  };
  for (size_t i = 0; i < sizeof h / sizeof *h; i++)
    {
      struct run r = securer (h[i].args);
      cr_expect_eq (r.status, 0, "%s", h[i].args);
      cr_expect (strncmp (r.out, h[i].first, strlen (h[i].first)) == 0, "%s: %s", h[i].args, r.out);
      run_free (&r);
    }
}

Test (policy_cli, show_json_reads_back)
{
  struct run r = securer ("policy show r --json > /tmp/securer-cli-r.json && \"$SECURER_BIN\" policy show /tmp/securer-cli-r.json --json");
  cr_assert_eq (r.status, 0, "%s", r.err);
  FILE *f = fopen ("/tmp/securer-cli-r.json", "r");
  cr_assert_not_null (f);
  char *first = slurp (f);
  fclose (f);
  unlink ("/tmp/securer-cli-r.json");
  cr_assert_str_eq (r.out, first);
  cr_assert_eq (first[0], '{');
  free (first);
  run_free (&r);

  r = securer ("policy show minimal");
  cr_assert_eq (r.status, 0);
  cr_assert (strstr (r.out, "\nnetwork none\n") != NULL);
  cr_assert (strstr (r.out, "\nseccomp kill-process ptrace\n") != NULL);
  cr_assert (strstr (r.out, "\nseccomp errno EPERM ioctl if arg1 & 0xffffffff == 0x5412\n") != NULL, "%s", r.out);
  run_free (&r);
}

Test (policy_cli, shipped_policies_compile_to_a_filter)
{
  static const char *const names[] = { "r", "minimal" };
  for (size_t i = 0; i < 2; i++)
    {
      char *path = NULL;
      securer_err_t err = NULL;
      cr_assert_eq (securer_policy_find (names[i], &path, &err), 0);
      char *diags = NULL;
      struct securer_policy *p = load_path (path, &diags);
      cr_assert_not_null (p, "%s", diags);
      struct securer_seccomp_prog *prog = NULL;
      cr_expect_eq (securer_seccomp_compile (p, 0, -1, &prog, &err), 0, "%s: %s", names[i],
                    securer_error_message (err));
      securer_error_free (&err);
      securer_seccomp_free (prog);
      securer_policy_free (p);
      free (diags);
      free (path);
    }
}

/* ---- policy test ------------------------------------------------------------ */

/* The shipped expectation files: they double as the check that this
 * libseccomp compiled every conditional rule of the shipped policies right
 * (the verdicts come from the generated BPF program). */
Test (policy_test, shipped_expectations_hold)
{
  struct run r = securer ("policy test r tests/policies/common.expect tests/policies/r.expect");
  cr_assert_eq (r.status, 0, "%s%s", r.out, r.err);
  cr_assert (strstr (r.out, "expectations, 0 failed\n") != NULL, "%s", r.out);
  cr_assert (strstr (r.out, "tests/policies/r.expect:7: ok: mmap * * PROT_WRITE|PROT_EXEC -> errno EPERM\n") != NULL,
             "%s", r.out);
  run_free (&r);
  r = securer ("policy test -q minimal tests/policies/common.expect tests/policies/minimal.expect");
  cr_assert_eq (r.status, 0, "%s%s", r.out, r.err);
  cr_assert_str_eq (r.out, "");
  run_free (&r);
}

/* Runs `securer policy test OPTS POLICY FILE` on text written to a
 * temporary FILE; *expected gets fmt with every %s replaced by FILE. */
static struct run
run_expect (const char *opts, const char *policy, const char *text, const char *fmt, char **expected)
{
  char path[] = "/tmp/securer-expect-XXXXXX";
  int fd = mkstemp (path);
  cr_assert_geq (fd, 0);
  cr_assert_eq (write (fd, text, strlen (text)), (ssize_t) strlen (text));
  close (fd);
  char *args = NULL;
  cr_assert_geq (asprintf (&args, "policy test %s %s %s", opts, policy, path), 0);
  struct run r = securer (args);
  unlink (path);
  free (args);
  /* Every %s of fmt is the file name. */
  size_t n = 0;
  for (const char *q = fmt; (q = strstr (q, "%s")) != NULL; q += 2)
    n++;
  char *e = malloc (strlen (fmt) + n * strlen (path) + 1), *w = e;
  for (const char *q = fmt; *q;)
    if (q[0] == '%' && q[1] == 's')
      {
        w = stpcpy (w, path);
        q += 2;
      }
    else
      *w++ = *q++;
  *w = '\0';
  *expected = e;
  return r;
}

Test (policy_test, a_wrong_expectation_fails_with_its_place_and_a_witness)
{
  /* minimal has no W^X rules: the expectation of r is wrong for it. */
  char *expected = NULL;
  struct run r = run_expect ("", "minimal",
                             "# W^X\nopenat -> allow\n  mmap * * PROT_WRITE|PROT_EXEC -> errno EPERM\n",
                             "%s:2: ok: openat -> allow\n"
                             "%s:3:3: error: expected errno EPERM, got allow for mmap(0x0, 0x0, 0x6, 0x0, 0x0, 0x0)\n"
                             "minimal: 2 expectations, 1 failed\n", &expected);
  cr_assert_eq (r.status, 1);
  cr_assert_str_eq (r.out, expected);
  run_free (&r);
  free (expected);
}

Test (policy_test, malformed_lines_are_placed_and_suggested)
{
  char *expected = NULL;
  struct run r = run_expect ("", "r",
                             "socket AF_INETT -> allow\nptrac -> kill\nioctl * TIOCSTI -> errno EPRM\n"
                             "read\nopenat -> allow extra\ni386 open -> kill\n",
                             "%s:1:8: error: unknown constant 'AF_INETT' (did you mean 'AF_INET'?)\n"
                             "%s:2:1: error: unknown syscall 'ptrac' (did you mean 'ptrace'?)\n"
                             "%s:3:26: error: unknown errno name 'EPRM' (did you mean 'EPERM'?)\n"
                             "%s:4:1: error: expected 'CALL -> VERDICT' such as 'openat -> allow'\n"
                             "%s:5:17: error: unexpected 'extra' after the verdict\n", &expected);
  cr_assert_eq (r.status, 1);
  cr_assert_str_eq (r.err, expected);
  /* The well-formed line is still checked. */
  cr_assert (strstr (r.out, ": ok: i386 open -> kill\n") != NULL, "%s", r.out);
  run_free (&r);
  free (expected);
}

Test (policy_test, settings_expectations)
{
  char *expected = NULL;
  struct run r = run_expect ("-q", "r", "network none\nlimit cpu 1m\nlimit timeout 60s\nnetwork loopbak\n"
                             "  limit cpux 1\nnetwork host\n",
                             "%s:3:1: error: expected `limit timeout 60s`, the policy has `limit timeout unlimited`\n"
                             "%s:6:1: error: expected `network host`, the policy has `network none`\n"
                             "r: 4 expectations, 2 failed\n", &expected);
  cr_assert_eq (r.status, 1);
  cr_assert_str_eq (r.out, expected);
  free (expected);
  /* Malformed settings lines are reported where they are, as in a policy. */
  cr_assert (strstr (r.err, ":4:9: error: unknown network mode 'loopbak': expected none, loopback or host (did you mean 'loopback'?)\n") != NULL,
             "%s", r.err);
  cr_assert (strstr (r.err, ":5:9: error: unknown limit 'cpux': ") != NULL, "%s", r.err);
  run_free (&r);
}

Test (policy_test, tap_output)
{
  char *expected = NULL;
  struct run r = run_expect ("--tap", "r", "ptrace -> kill-process\nptrace -> allow\nread -> alow\n",
                             "TAP version 13\n1..3\n"
                             "ok 1 - ptrace -> kill-process\n"
                             "not ok 2 - ptrace -> allow\n"
                             "  ---\n  message: \"expected allow, got kill-process for ptrace(0x0, 0x0, 0x0, 0x0, 0x0, 0x0)\"\n"
                             "  at: \"%s:2:1\"\n  ...\n"
                             "not ok 3 - unknown verdict 'alow': expected allow, errno NAME, deny, kill-process, kill-thread, trap, log or notify\n",
                             &expected);
  cr_assert_eq (r.status, 1);
  cr_assert_str_eq (r.out, expected);
  run_free (&r);
  free (expected);
}

static char *place_of (const char *rel, const char *prefix);

Test (policy_test, path_exec_and_env_expectations)
{
  char *expected = NULL;
  struct run r = run_expect ("", "r",
                             "path /tmp -> writable\npath /tmp -> read-only\nexec /usr/bin/Rscript -> allowed\n"
                             "exec /bin/sh -> allowed\nexec /usr/bin/which -> allowed\npath /proc/kcore -> absent\n"
                             "env HOME=/root\nenv TERM -> set\nenv HOME -> set\n",
                             "%s:1: ok: path /tmp -> writable\n"
                             "%s:2:1: error: expected `path /tmp -> read-only`, got writable: a private tmpfs: "
                             "`mount tmpfs /tmp` at @1@:1\n"
                             "%s:3:1: error: expected `exec /usr/bin/Rscript -> allowed`, got denied: "
                             "no mount puts it there\n"
                             "%s:4: ok: exec /bin/sh -> allowed\n"
                             "%s:5:1: error: expected `exec /usr/bin/which -> allowed`, got denied: not in the "
                             "`exec` list (Landlock): `mount ro /usr/bin/which` at @2@:1\n"
                             "%s:6:1: error: expected `path /proc/kcore -> absent`, got masked: hidden by a `mask`: "
                             "`mount proc /proc` at @3@:1\n"
                             "%s:7:1: error: expected `env HOME=/root`, got HOME=/tmp: `env set` gives it this value\n"
                             "%s:8:1: error: expected `env TERM -> set`, got kept: `env keep` passes the caller's "
                             "value through\n"
                             "%s:9: ok: env HOME -> set\n"
                             "r: 9 expectations, 6 failed\n", &expected);
  cr_assert_eq (r.status, 1, "%s", r.err);
  /* The places name the lines of the shipped policy, wherever the tree is. */
  char *places[] = { place_of ("policies/r.policy", "mount tmpfs /tmp"),
                     place_of ("policies/r.policy", "mount ro   /usr/bin/which"),
                     place_of ("policies/r.policy", "mount proc /proc") };
  char *want = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&want, &len);
  for (const char *q = expected; *q; q++)
    if (q[0] == '@' && q[1] >= '1' && q[1] <= '3' && q[2] == '@')
      {
        fputs (places[q[1] - '1'], f);
        q += 2;
      }
    else
      fputc (*q, f);
  fclose (f);
  cr_assert_str_eq (r.out, want);
  free (want);
  for (size_t i = 0; i < 3; i++)
    free (places[i]);
  run_free (&r);
  free (expected);
}

Test (policy_test, malformed_path_exec_and_env_lines)
{
  char *expected = NULL;
  struct run r = run_expect ("", "r",
                             "path tmp -> writable\npath /tmp writable\npath /tmp -> writeable\n"
                             "path /tmp -> writable extra\nexec /bin/sh -> alowed\nenv 1X -> set\n"
                             "env HOME=/tmp extra\nenv HOME -> sett\npath\nexec /bin/sh -> allowed\n",
                             "%s:1:6: error: expected an absolute path inside the sandbox, got 'tmp'\n"
                             "%s:2:11: error: expected 'path PATH -> writable|read-only|masked|absent'\n"
                             "%s:3:14: error: expected 'path PATH -> writable|read-only|masked|absent', got "
                             "'writeable' (did you mean 'writable'?)\n"
                             "%s:4:23: error: unexpected 'extra' after 'writable'\n"
                             "%s:5:17: error: expected 'exec PATH -> allowed|denied', got 'alowed' (did you mean "
                             "'allowed'?)\n"
                             "%s:6:5: error: expected a variable name (letters, digits and '_', not starting with a "
                             "digit), got '1X'\n"
                             "%s:7:15: error: unexpected 'extra' after 'HOME=/tmp'\n"
                             "%s:8:13: error: expected 'env NAME=VALUE' or 'env NAME -> set|kept|absent', got 'sett' "
                             "(did you mean 'set'?)\n"
                             "%s:9:1: error: expected 'path PATH -> writable|read-only|masked|absent'\n",
                             &expected);
  cr_assert_eq (r.status, 1);
  cr_assert_str_eq (r.err, expected);
  /* The well-formed line is still checked. */
  cr_assert (strstr (r.out, ":10: ok: exec /bin/sh -> allowed\n") != NULL, "%s", r.out);
  run_free (&r);
  free (expected);
}

Test (policy_test, json_output)
{
  char *expected = NULL;
  struct run r = run_expect ("--json", "r", "ptrace -> kill-process\nptrace -> allow\npath /home -> absent\n"
                             "exec /tmp/x -> allowed\nread -> alow\n", "", &expected);
  free (expected);
  cr_assert_eq (r.status, 1);
  json_error_t je;
  json_t *doc = json_loads (r.out, 0, &je);
  cr_assert_not_null (doc, "%s: %s", je.text, r.out);
  cr_assert_str_eq (json_string_value (json_object_get (doc, "policy")), "r");
  cr_assert (json_is_false (json_object_get (doc, "passed")));
  json_t *t = json_object_get (doc, "totals");
  cr_assert_eq (json_integer_value (json_object_get (t, "expectations")), 4);
  cr_assert_eq (json_integer_value (json_object_get (t, "passed")), 2);
  cr_assert_eq (json_integer_value (json_object_get (t, "failed")), 2);
  cr_assert_eq (json_integer_value (json_object_get (t, "malformed")), 1);
  json_t *res = json_object_get (doc, "results");
  cr_assert_eq (json_array_size (res), 4);
  static const struct {
    unsigned line;
    const char *kind, *expected, *actual;
    bool passed;
  } want[] = {
    { 1, "call", "kill-process", "kill-process", true },
    { 2, "call", "allow", "kill-process", false },
    { 3, "path", "absent", "absent", true },
    { 4, "exec", "allowed", "denied", false },
  };
  for (size_t i = 0; i < 4; i++)
    {
      json_t *o = json_array_get (res, i);
      cr_assert_eq (json_integer_value (json_object_get (o, "line")), want[i].line);
      cr_assert_eq (json_integer_value (json_object_get (o, "col")), 1);
      cr_assert_str_eq (json_string_value (json_object_get (o, "kind")), want[i].kind);
      cr_assert_str_eq (json_string_value (json_object_get (o, "expected")), want[i].expected);
      cr_assert_str_eq (json_string_value (json_object_get (o, "actual")), want[i].actual);
      cr_assert_eq (json_is_true (json_object_get (o, "passed")), want[i].passed);
      cr_assert_eq (json_object_get (o, "message") != NULL, !want[i].passed);
      cr_assert (strstr (json_string_value (json_object_get (o, "file")), "/tmp/securer-expect-") != NULL);
    }
  cr_assert_str_eq (json_string_value (json_object_get (json_array_get (res, 1), "call")),
                    "ptrace(0x0, 0x0, 0x0, 0x0, 0x0, 0x0)");
  json_t *bad = json_array_get (json_object_get (doc, "malformed"), 0);
  cr_assert_eq (json_integer_value (json_object_get (bad, "line")), 5);
  cr_assert_eq (json_integer_value (json_object_get (bad, "col")), 9);
  cr_assert_str_eq (json_string_value (json_object_get (bad, "hint")), "did you mean 'allow'?");
  json_decref (doc);
  run_free (&r);

  /* Every expectation holding: passed, and exit 0. */
  r = securer ("policy test --json minimal tests/policies/common.expect tests/policies/minimal.expect");
  cr_assert_eq (r.status, 0, "%s", r.err);
  doc = json_loads (r.out, 0, &je);
  cr_assert_not_null (doc, "%s", je.text);
  cr_assert (json_is_true (json_object_get (doc, "passed")));
  cr_assert_eq (json_integer_value (json_object_get (json_object_get (doc, "totals"), "failed")), 0);
  json_decref (doc);
  run_free (&r);
}

Test (policy_test, usage)
{
  struct run r = securer ("policy test r");
  cr_assert_eq (r.status, 2);
  run_free (&r);
  r = securer ("help policy test");
  cr_assert_eq (r.status, 0);
  cr_assert (strncmp (r.out, "Usage: securer policy test [OPTIONS] POLICY FILE...\n", 52) == 0, "%s", r.out);
  run_free (&r);
}

/* ---- policy explain --------------------------------------------------------- */

/* "FILE:N" for the first line of FILE (in the source tree) that starts
 * with prefix once blanks are skipped. */
static char *
place_of (const char *rel, const char *prefix)
{
  char *path = src_path (rel);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f, "%s", path);
  char *line = NULL, *place = NULL;
  size_t cap = 0;
  for (unsigned n = 1; place == NULL && getline (&line, &cap, f) >= 0; n++)
    if (strncmp (line + strspn (line, " \t"), prefix, strlen (prefix)) == 0)
      cr_assert_geq (asprintf (&place, "%s:%u", path, n), 0);
  fclose (f);
  free (line);
  free (path);
  cr_assert_not_null (place, "'%s' not in %s", prefix, rel);
  return place;
}

Test (policy_explain, a_group_rule_is_traced_to_the_policy_and_the_group_file)
{
  struct run r = securer ("policy explain r openat");
  cr_assert_eq (r.status, 0, "%s", r.err);
  char *rule = place_of ("policies/base/seccomp-common.policy", "seccomp allow @default @basic-io @file-system");
  char *member = place_of ("seccomp/file-system.syscalls", "openat");
  char *expected = NULL;
  cr_assert_geq (asprintf (&expected,
                           "openat(0x0, 0x0, 0x0, 0x0, 0x0, 0x0): allow\n"
                           "  by `seccomp allow @default @basic-io @file-system @io-event @memlock @process`\n"
                           "  at %s:34\n"
                           "  @file-system names openat at %s\n"
                           "  (the same for every value of the arguments given as '*')\n",
                           rule, member), 0);
  cr_assert_str_eq (r.out, expected);
  run_free (&r);
  free (expected);
  free (member);
  free (rule);
}

Test (policy_explain, a_conditional_rule_decides_with_the_arguments_given)
{
  struct run r = securer ("policy explain r mmap 0 4096 'PROT_READ|PROT_WRITE|PROT_EXEC'");
  cr_assert_eq (r.status, 0, "%s", r.err);
  char *rule = place_of ("policies/base/seccomp-wx.policy", "seccomp errno EPERM mmap  if arg2 & PROT_WRITE|PROT_EXEC");
  char *expected = NULL;
  cr_assert_geq (asprintf (&expected,
                           "mmap(0x0, 0x1000, 0x7, 0x0, 0x0, 0x0): errno EPERM\n"
                           "  by `seccomp errno EPERM mmap  if arg2 & PROT_WRITE|PROT_EXEC == PROT_WRITE|PROT_EXEC`\n"
                           "  at %s:21\n", rule), 0);
  cr_assert (strncmp (r.out, expected, strlen (expected)) == 0, "%s", r.out);
  run_free (&r);
  free (expected);
  free (rule);

  /* With the protection left open, every rule that can decide is shown. */
  r = securer ("policy explain r mmap");
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert (strncmp (r.out, "mmap: the verdict depends on the arguments given as '*':\n\n"
                             "mmap(0x0, 0x0, 0x0, 0x0, 0x0, 0x0): allow\n", 99) == 0, "%s", r.out);
  cr_assert (strstr (r.out, "  by `seccomp errno EPERM mmap  if arg2 & PROT_EXEC == PROT_EXEC and arg3 & MAP_ANONYMOUS == MAP_ANONYMOUS`\n") != NULL,
             "%s", r.out);
  run_free (&r);
}

Test (policy_explain, defaults_foreign_abis_and_mistakes)
{
  struct run r = securer ("policy explain r i386 open");
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_str_eq (r.out, "i386 open(0x0, 0x0, 0x0, 0x0, 0x0, 0x0): kill-process\n"
                           "  by the action for other ABIs (`seccomp foreign-abi`): i386 calls never reach the rules\n");
  run_free (&r);
  r = securer ("policy explain minimal 1000 1 2");
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_str_eq (r.out, "1000(0x1, 0x2, 0x0, 0x0, 0x0, 0x0): errno ENOSYS\n"
                           "  by the default action (`seccomp default`): no rule for 1000 matches\n"
                           "  (the same for every value of the arguments given as '*')\n");
  run_free (&r);
  r = securer ("policy explain r socket AF_INETT");
  cr_assert_eq (r.status, 1);
  cr_assert_str_eq (r.err, "securer: policy explain: unknown constant 'AF_INETT' (did you mean 'AF_INET'?)\n");
  run_free (&r);
  r = securer ("help policy explain");
  cr_assert_eq (r.status, 0);
  cr_assert (strncmp (r.out, "Usage: securer policy explain POLICY [ABI] SYSCALL [ARG...]\n", 60) == 0, "%s", r.out);
  run_free (&r);
}

/* ---- policy diff ------------------------------------------------------------ */

static char *
temp_policy (const char *text)
{
  char *path = strdup ("/tmp/securer-diff-XXXXXX.policy");
  int fd = mkstemps (path, 7);
  cr_assert_geq (fd, 0);
  cr_assert_eq (write (fd, text, strlen (text)), (ssize_t) strlen (text));
  close (fd);
  return path;
}

Test (policy_diff, settings_and_verdicts_that_change)
{
  char *a = temp_policy ("seccomp default errno ENOSYS\nseccomp allow read write\nnetwork none\n");
  char *b = temp_policy ("seccomp default errno ENOSYS\nseccomp allow read write\n"
                         "seccomp errno EPERM write if arg0 == 2\nnetwork loopback\n");
  char *args = NULL;
  cr_assert_geq (asprintf (&args, "policy diff %s %s", a, b), 0);
  struct run r = securer (args);
  cr_assert_eq (r.status, 1, "%s", r.err);
  cr_assert_str_eq (r.out, "- network none\n+ network loopback\n"
                           "seccomp write: allow -> errno EPERM for write(0x2, 0x0, 0x0, 0x0, 0x0, 0x0)\n");
  run_free (&r);
  free (args);
  cr_assert_geq (asprintf (&args, "policy diff --json %s %s", a, b), 0);
  r = securer (args);
  cr_assert_eq (r.status, 1, "%s", r.err);
  json_error_t je;
  json_t *j = json_loads (r.out, 0, &je);
  cr_assert_not_null (j, "%s", r.out);
  cr_assert (json_is_true (json_object_get (j, "differ")));
  cr_assert_str_eq (json_string_value (json_array_get (json_object_get (json_object_get (j, "settings"), "added"), 0)),
                    "network loopback");
  json_t *s0 = json_array_get (json_object_get (j, "seccomp"), 0);
  cr_assert_str_eq (json_string_value (json_object_get (s0, "syscall")), "write");
  cr_assert_str_eq (json_string_value (json_object_get (s0, "a")), "allow");
  cr_assert_str_eq (json_string_value (json_object_get (s0, "b")), "errno EPERM");
  json_decref (j);
  run_free (&r);
  free (args);
  unlink (a);
  unlink (b);
  free (a);
  free (b);
}

Test (policy_diff, the_same_policy_and_the_shipped_ones)
{
  struct run r = securer ("policy diff r r");
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_str_eq (r.out, "r and r mean the same\n");
  run_free (&r);
  /* minimal has no W^X rules and keeps inotify. */
  r = securer ("policy diff r minimal");
  cr_assert_eq (r.status, 1, "%s", r.err);
  cr_assert (strstr (r.out, "\nseccomp mprotect: errno EACCES -> allow for mprotect(0x0, 0x0, 0x4, 0x0, 0x0, 0x0)\n") != NULL,
             "%s", r.out);
  cr_assert (strstr (r.out, "\nseccomp inotify_init1: errno ENOSYS -> allow for ") != NULL, "%s", r.out);
  cr_assert (strstr (r.out, "\n- limit cpu 60s\n") != NULL, "%s", r.out);
  cr_assert (strstr (r.out, "\n+ limit cpu 10s\n") != NULL, "%s", r.out);
  cr_assert (strstr (r.out, "ptrace") == NULL, "%s", r.out);
  run_free (&r);
  r = securer ("policy diff r");
  cr_assert_eq (r.status, 2);
  run_free (&r);
}

/* ---- import: profiles in the wild become policies that run ----------------- */

/* Imports `profile`, checks the policy, and runs a shell under it (with the
 * shipped view of the system and its environment) in a real sandbox. */
static void
import_and_run (const char *profile, const char *tag)
{
  char *cmd = NULL;
  cr_assert_geq (asprintf (&cmd,
                           "policy import '%s' > /tmp/securer-import-%s.policy"
                           " && printf 'include \"%%s/policies/base/isolation.policy\"\\n"
                           "include \"%%s/policies/base/fs-system.policy\"\\n"
                           "include \"%%s/policies/base/env.policy\"\\n"
                           "include \"/tmp/securer-import-%s.policy\"\\n' \"$PWD\" \"$PWD\" \"$PWD\""
                           " > /tmp/securer-import-run-%s.policy"
                           " && \"$SECURER_BIN\" policy check -q /tmp/securer-import-%s.policy"
                           " && \"$SECURER_BIN\" policy compile /tmp/securer-import-%s.policy --bpf /dev/null"
                           " && \"$SECURER_BIN\" run --policy /tmp/securer-import-run-%s.policy --"
                           " /bin/sh -c 'ls / > /dev/null && /bin/true && echo ran'",
                           profile, tag, tag, tag, tag, tag, tag),
                 0);
  struct run r = securer (cmd);
  free (cmd);
  cr_assert_eq (r.status, 0, "status %d: %s", r.status, r.err);
  cr_assert_str_eq (r.out, "ran\n", "stdout: %s, stderr: %s", r.out, r.err);
  /* nothing the check would warn about is left in the imported policy */
  cr_assert_null (strstr (r.err, "warning"), "%s", r.err);
  run_free (&r);

  char *path = NULL;
  cr_assert_geq (asprintf (&path, "/tmp/securer-import-%s.policy", tag), 0);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f);
  char *text = slurp (f);
  fclose (f);
  /* calls x86_64 does not have are left out, and said */
  cr_assert_null (strstr (text, "seccomp allow _llseek\n"), "%s", text);
  cr_assert_null (strstr (text, "seccomp allow socketcall\n"), "%s", text);
  cr_assert_not_null (strstr (text, "# left out (not a system call on "), "%s", text);
  cr_assert_not_null (strstr (text, " _llseek _newselect "), "%s", text);
  unlink (path);
  free (path);
  cr_assert_geq (asprintf (&path, "/tmp/securer-import-run-%s.policy", tag), 0);
  unlink (path);
  free (path);
  free (text);
}

#define CONTAINERS_PROFILE "/usr/share/containers/seccomp.json"

Test (policy_import, the_containers_profile_compiles_and_runs)
{
  if (access (CONTAINERS_PROFILE, R_OK) != 0)
    cr_skip_test ("%s is absent (podman's containers-common ships it)", CONTAINERS_PROFILE);
  import_and_run (CONTAINERS_PROFILE, "containers");
  /* its socket rules, once each */
  struct run r = securer ("policy import " CONTAINERS_PROFILE);
  cr_assert_eq (r.status, 0);
  const char *rule = "\nseccomp allow socket if arg2 != 9\n";
  const char *first = strstr (r.out, rule);
  cr_assert_not_null (first, "%s", r.out);
  cr_assert_null (strstr (first + 1, rule), "%s", r.out);
  cr_assert_not_null (strstr (r.out, "# repeated rule left out: seccomp allow socket if arg2 != 9\n"), "%s", r.out);
  run_free (&r);
}

Test (policy_import, a_docker_default_profile_of_2020_compiles_and_runs)
{
  import_and_run ("tests/unit/data/seccomp/moby-default-2020.json", "moby");
}

Test (policy_check, rules_for_calls_this_architecture_lacks_are_warned_about)
{
  FILE *f = fopen ("/tmp/securer-check-arch.policy", "w");
  cr_assert_not_null (f);
  fputs ("seccomp on\nseccomp default errno ENOSYS\nseccomp allow read write\nseccomp allow  chown32\n", f);
  fclose (f);
  struct run r = securer ("policy check /tmp/securer-check-arch.policy");
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_not_null (strstr (r.err, "/tmp/securer-check-arch.policy:4:16: warning: 'chown32' is not a system call on "),
                      "%s", r.err);
  run_free (&r);
  unlink ("/tmp/securer-check-arch.policy");
}

/* What `run` would only answer with EACCES or ENOENT: a loader no exec
 * entry covers, a link through a path the sandbox does not show, an entry
 * nothing mounts.  Each warning checked against a real launch. */
Test (policy_check, exec_entries_that_cannot_run_are_warned_about)
{
  char *min = src_path ("policies/minimal.policy");
  FILE *f = fopen ("/tmp/securer-check-exec.policy", "w");
  cr_assert_not_null (f);
  fprintf (f, "include \"%s\"\nexec /bin/sh /nonexistent/bin/x\n", min);
  fclose (f);
  struct run r = securer ("policy check /tmp/securer-check-exec.policy");
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_not_null (strstr (r.err, "warning: exec /bin/sh: its program loader /lib64/ld-linux-x86-64.so.2 is not "
                                     "in the exec list: execve fails with EACCES"), "%s", r.err);
  cr_assert_not_null (strstr (r.err, "warning: exec /nonexistent/bin/x: not there in the sandbox"), "%s", r.err);
  run_free (&r);
  r = securer ("run --policy /tmp/securer-check-exec.policy -- /bin/sh -c true");
  cr_assert_eq (r.status, 126, "%s", r.err);
  cr_assert_not_null (strstr (r.err, "EACCES"), "%s", r.err);
  run_free (&r);

  /* With the loader listed: no warning, and it runs. */
  f = fopen ("/tmp/securer-check-exec.policy", "w");
  fprintf (f, "include \"%s\"\nexec /bin/sh /lib64/ld-linux-x86-64.so.2\n", min);
  fclose (f);
  r = securer ("policy check /tmp/securer-check-exec.policy");
  cr_assert_null (strstr (r.err, "warning"), "%s", r.err);
  run_free (&r);
  r = securer ("run --policy /tmp/securer-check-exec.policy -- /bin/sh -c 'echo ran'");
  cr_assert_str_eq (r.out, "ran\n", "%s", r.err);
  run_free (&r);

  /* awk is Debian's alternative: a link through /etc/alternatives. */
  char target[4096];
  ssize_t n = readlink ("/usr/bin/awk", target, sizeof target - 1);
  if (n > 0 && strncmp (target, "/etc/alternatives/", 18) == 0)
    {
      f = fopen ("/tmp/securer-check-exec.policy", "w");
      fprintf (f, "include \"%s\"\nexec /usr/bin/awk /lib64/ld-linux-x86-64.so.2\n", min);
      fclose (f);
      r = securer ("policy check /tmp/securer-check-exec.policy");
      cr_assert_not_null (strstr (r.err, "warning: exec /usr/bin/awk is a symbolic link through /etc/alternatives/awk, "
                                         "which is not in the sandbox"), "%s", r.err);
      run_free (&r);
      r = securer ("run --policy /tmp/securer-check-exec.policy -- /usr/bin/awk 'BEGIN { print 1 }'");
      cr_assert_eq (r.status, 127, "%s", r.err);
      run_free (&r);
    }
  unlink ("/tmp/securer-check-exec.policy");
  free (min);
}

Test (policy_check, a_filter_that_does_not_compile_fails_the_check)
{
  /* ranges and exclusions on four arguments of 40 rules: far past the kernel's size */
  char *text = strdup ("seccomp on\nseccomp default errno ENOSYS\n");
  for (int i = 0; i < 40; i++)
    {
      char *more = NULL;
      cr_assert_geq (asprintf (&more, "%sseccomp errno EPERM mmap if arg1 > %d and arg2 < %d and arg3 != %d and arg4 != %d\n",
                               text, 4096 * (i + 1), i + 3, i, i * 7 + 1), 0);
      free (text);
      text = more;
    }
  FILE *f = fopen ("/tmp/securer-check-big.policy", "w");
  cr_assert_not_null (f);
  fputs (text, f);
  fclose (f);
  free (text);
  struct run r = securer ("policy check /tmp/securer-check-big.policy");
  cr_assert_eq (r.status, 1, "%s", r.err);
  cr_assert_not_null (strstr (r.err, "/tmp/securer-check-big.policy: error: the seccomp filter does not compile: "), "%s", r.err);
  cr_assert_null (strstr (r.out, ": ok"), "%s", r.out);
  run_free (&r);
  unlink ("/tmp/securer-check-big.policy");
}

/* ---- the worked example of docs/policy.md ---------------------------------- */

#define R_BIN "/usr/lib/R/bin/exec/R"

Test (policy_docs, the_worked_example_runs_r_with_utils_and_stats)
{
  /* securer () runs the binary first: --version is a harmless start */
  struct run r = securer ("--version >/dev/null;"
                          " awk '/^## A worked example/ { f = 1 } f && /^```$/ { if (++n == 2) exit; next } f && n == 1'"
                          " docs/policy.md > /tmp/securer-docs-example.policy"
                          " && \"$SECURER_BIN\" policy check /tmp/securer-docs-example.policy");
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_str_eq (r.out, "/tmp/securer-docs-example.policy: ok\n");
  cr_assert_str_eq (r.err, "");
  run_free (&r);
  if (access (R_BIN, X_OK) != 0)
    {
      unlink ("/tmp/securer-docs-example.policy");
      cr_skip_test ("%s is absent: the example was only checked", R_BIN);
    }
  r = securer ("--version >/dev/null;"
               " echo 'cat(\"packages:\", search(), \"\\n\"); cat(\"sd:\", sd(c(1, 2, 3)), \"\\n\")'"
               " | \"$SECURER_BIN\" run --policy /tmp/securer-docs-example.policy -- " R_BIN " --vanilla --no-echo");
  unlink ("/tmp/securer-docs-example.policy");
  cr_assert_eq (r.status, 0, "status %d: %s", r.status, r.err);
  cr_assert_not_null (strstr (r.out, " package:stats "), "%s%s", r.out, r.err);
  cr_assert_not_null (strstr (r.out, " package:utils "), "%s%s", r.out, r.err);
  cr_assert_not_null (strstr (r.out, "sd: 1 \n"), "%s%s", r.out, r.err);
  run_free (&r);
}
