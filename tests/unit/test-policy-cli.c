/* securer policy check|show: output and exit status, run as a user would. */
#include <config.h>

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
