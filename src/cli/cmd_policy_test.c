/* securer policy test — expectation files checked against the compiled
 * filter, run in the userspace seccomp-BPF interpreter: no kernel filter
 * and no sandbox are needed, so it runs in any CI. */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "policy/expect.h"
#include "seccomp/seccomp.h"

void
cmd_policy_test_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy test [OPTIONS] POLICY FILE...\n"
           "\n"
           "Check the expectations in each FILE against POLICY's seccomp filter, run in a\n"
           "userspace seccomp-BPF interpreter (no sandbox and no kernel filter needed).\n"
           "One expectation per line, '#' starts a comment:\n"
           "\n"
           "  openat -> allow\n"
           "  ptrace -> kill-process\n"
           "  socket AF_INET * * -> errno EAFNOSUPPORT\n"
           "  ioctl * TIOCSTI|1<<32 -> errno EPERM\n"
           "  mmap * * PROT_WRITE|PROT_EXEC -> errno EPERM\n"
           "  i386 open -> kill-process\n"
           "  network none\n"
           "  limit nofile 256\n"
           "\n"
           "'network MODE' and 'limit NAME VALUE' lines, written as in a policy, expect\n"
           "that setting of POLICY.  A call is [ABI] SYSCALL [ARG...]: ABI is x86_64 (default), i386 or x32; an ARG\n"
           "is a number, a constant, A|B, A<<N, or '*' for every value; arguments not\n"
           "given are '*'.  An expectation holds when every call it stands for gets the\n"
           "verdict (allow, errno NAME, deny, kill-process, kill-thread, trap, log, notify).\n"
           "\n"
           "Options:\n"
           "  --tap        print the results as TAP (Test Anything Protocol)\n"
           "  -q, --quiet  print only failures\n"
           "  -h, --help   show this help\n"
           "\n"
           "Exit status: 0 when every expectation holds, 1 when one does not or a FILE or\n"
           "the POLICY is invalid, 2 for usage errors.\n");
}

struct judge {
  const struct securer_seccomp_prog *prog;
  const struct securer_call *call;
  struct securer_action want, got;
  uint64_t args[6];
  securer_err_t err;
};

/* The witness still gets the verdict first seen instead of the one wanted. */
static bool
same_miss (void *ctx, const uint64_t args[6])
{
  struct judge *j = ctx;
  struct securer_action got;
  securer_err_t err = NULL;
  if (securer_seccomp_emulate (j->prog, j->call->arch, j->call->nr, args, &got, &err) < 0)
    {
      securer_error_free (&err);
      return false;
    }
  return securer_action_equal (got, j->got);
}

static int
judge_one (void *ctx, const uint64_t args[6])
{
  struct judge *j = ctx;
  if (securer_seccomp_emulate (j->prog, j->call->arch, j->call->nr, args, &j->got, &j->err) < 0)
    return -1;
  if (securer_action_equal (j->got, j->want))
    return 0;
  memcpy (j->args, args, sizeof j->args);
  struct securer_action first = j->got;
  securer_call_simplify (j->args, j->call->wild, same_miss, j);
  j->got = first;
  return 1;
}

/* What `policy show` says about the setting an expectation names: the
 * line that starts with its first two words (or a comment about them). */
static char *
shown_setting (const struct securer_policy *p, const struct securer_expectation *x)
{
  char key[96];
  snprintf (key, sizeof key, "%s", x->text);
  char *sp = strchr (key, ' ');
  if (sp != NULL && x->kind == SECURER_EXPECT_LIMIT && (sp = strchr (sp + 1, ' ')) != NULL)
    *sp = '\0';
  else if (sp != NULL && x->kind == SECURER_EXPECT_NETWORK)
    sp[1] = '\0';
  char *text = securer_policy_to_text (p), *found = NULL;
  for (char *line = text ? strtok (text, "\n") : NULL; line != NULL && found == NULL; line = strtok (NULL, "\n"))
    {
      const char *l = strncmp (line, "# ", 2) == 0 ? line + 2 : line;
      if (strncmp (l, key, strlen (key)) == 0)
        found = strdup (line);
    }
  free (text);
  return found;
}

/* Prints one result; returns true when the expectation holds. */
static bool
check (const struct securer_seccomp_prog *prog, const struct securer_policy *p, const char *file,
       const struct securer_expectation *x, bool tap, bool quiet, unsigned *number)
{
  struct judge j = { prog, &x->call, x->verdict, { 0, 0 }, { 0 }, NULL };
  int r = 0;
  char want[64], got[64];
  char *msg = NULL;
  if (x->kind != SECURER_EXPECT_CALL)
    {
      r = securer_expect_setting_holds (x, p) ? 0 : 1;
      char *shown = r ? shown_setting (p, x) : NULL;
      if (r && asprintf (&msg, "expected `%s`, the policy has `%s`", x->text, shown ? shown : "nothing of it") < 0)
        msg = NULL;
      free (shown);
    }
  else
    r = securer_call_samples (prog, p, &x->call, judge_one, &j);
  if (x->kind != SECURER_EXPECT_CALL)
    ;
  else if (r < 0)
    {
      if (asprintf (&msg, "%s", j.err ? securer_error_message (j.err) : "cannot run the filter") < 0)
        msg = NULL;
      securer_error_free (&j.err);
    }
  else if (r > 0)
    {
      char *call = securer_call_text (&x->call, j.args);
      if (asprintf (&msg, "expected %s, got %s for %s", securer_verdict_text (x->verdict, want, sizeof want),
                    securer_verdict_text (j.got, got, sizeof got), call ? call : x->call.name) < 0)
        msg = NULL;
      free (call);
    }
  ++*number;
  if (tap)
    {
      printf ("%s %u - %s\n", r == 0 ? "ok" : "not ok", *number, x->text);
      if (r != 0)
        printf ("  ---\n  message: \"%s\"\n  at: \"%s:%u:%u\"\n  ...\n", msg ? msg : "", file, x->line, x->col);
    }
  else if (r != 0)
    printf ("%s:%u:%u: error: %s\n", file, x->line, x->col, msg ? msg : "out of memory");
  else if (!quiet)
    printf ("%s:%u: ok: %s\n", file, x->line, x->text);
  free (msg);
  return r == 0;
}

int
cmd_policy_test (int argc, char **argv)
{
  static const struct option opts[] = {
    { "tap", no_argument, NULL, 't' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool tap = false, quiet = false;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "qh", opts, NULL)) != -1)
    switch (c)
      {
      case 't': tap = true; break;
      case 'q': quiet = true; break;
      case 'h': cmd_policy_test_help (stdout); return 0;
      default: cmd_policy_test_help (stderr); return 2;
      }
  if (argc - optind < 2)
    return cli_usage ("policy test", 2, "expected a POLICY and at least one FILE");

  struct securer_policy *p = cli_load_policy (argv[optind]);
  if (p == NULL)
    return 1;
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  if (securer_seccomp_compile (p, 0, -1, &prog, &err) < 0)
    {
      cli_report (&err);
      securer_policy_free (p);
      return 1;
    }

  /* Every file is read first: TAP announces the number of tests. */
  int n_files = argc - optind - 1;
  struct securer_expectations *ex = calloc ((size_t) n_files, sizeof *ex);
  struct securer_diags diags = { NULL, 0, 0 };
  int result = 0;
  size_t planned = 0;
  for (int f = 0; ex != NULL && f < n_files; f++)
    {
      if (securer_expect_load_file (argv[optind + 1 + f], &ex[f], &diags) < 0)
        result = 1;
      planned += ex[f].n;
    }
  if (ex == NULL)
    {
      fprintf (stderr, "securer policy test: out of memory\n");
      result = 1;
    }
  for (size_t i = 0; i < diags.n; i++)
    {
      char *s = securer_diag_format (&diags.items[i]);
      fprintf (stderr, "%s\n", s ? s : "out of memory");
      free (s);
    }
  if (tap)
    printf ("TAP version 13\n1..%zu\n", planned + diags.n_errors);
  unsigned number = 0, failed = 0;
  for (int f = 0; ex != NULL && f < n_files; f++)
    for (size_t i = 0; i < ex[f].n; i++)
      if (!check (prog, p, ex[f].file, &ex[f].items[i], tap, quiet, &number))
        failed++;
  if (tap)
    /* A malformed line is a failed test too, so CI cannot miss it. */
    for (size_t i = 0; i < diags.n_errors; i++)
      printf ("not ok %u - %s\n", ++number,
              i < diags.n ? diags.items[i].message : "malformed expectation");
  else if (!quiet || failed > 0)
    printf ("%s: %u expectation%s, %u failed\n", argv[optind], number, number == 1 ? "" : "s", failed);
  if (failed > 0)
    result = 1;
  for (int f = 0; ex != NULL && f < n_files; f++)
    securer_expectations_clear (&ex[f]);
  free (ex);
  securer_diags_free (&diags);
  securer_seccomp_free (prog);
  securer_policy_free (p);
  return result;
}
