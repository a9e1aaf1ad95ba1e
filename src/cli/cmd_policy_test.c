/* securer policy test — expectation files checked against the compiled
 * filter, run in the userspace seccomp-BPF interpreter: no kernel filter
 * and no sandbox are needed, so it runs in any CI. */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "policy/expect.h"
#include "seccomp/seccomp.h"

void
cmd_policy_test_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy test [OPTIONS] POLICY FILE...\n"
           "\n"
           "Check the expectations in each FILE against POLICY: verdicts of calls against\n"
           "its seccomp filter run in a userspace seccomp-BPF interpreter, the rest against\n"
           "the policy itself (no sandbox and no kernel filter needed).\n"
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
           "  path /tmp -> writable\n"
           "  path /usr/lib/R -> read-only\n"
           "  path /home -> absent\n"
           "  exec /usr/bin/Rscript -> denied\n"
           "  env HOME=/tmp\n"
           "  env TERM -> kept\n"
           "  net cran.r-project.org:443 -> allowed\n"
           "  net 169.254.169.254:80 -> denied\n"
           "\n"
           "'network MODE' and 'limit NAME VALUE' lines, written as in a policy, expect\n"
           "that setting of POLICY.  'path PATH -> writable|read-only|masked|absent' and\n"
           "'exec PATH -> allowed|denied' expect what the sandbox will make of PATH, read\n"
           "from POLICY's mounts, symlinks, masks, exec list and Landlock rules (the host\n"
           "is not looked at); 'env NAME=VALUE' and 'env NAME -> set|kept|absent' expect\n"
           "the sandbox's environment.  'net HOST[:PORT] -> allowed|denied' expects what\n"
           "POLICY's 'network allow'/'deny' lines make of a connection the command asks\n"
           "for by that name or address (port 443 when none is given).\n"
           "\n"
           "A call is [ABI] SYSCALL [ARG...]: ABI is x86_64 (default), i386 or x32; an ARG\n"
           "is a number, a constant, A|B, A<<N, or '*' for every value; arguments not\n"
           "given are '*'.  An expectation holds when every call it stands for gets the\n"
           "verdict (allow, errno NAME, deny, kill-process, kill-thread, trap, log, notify).\n"
           "\n"
           "Options:\n"
           "  --tap        print the results as TAP (Test Anything Protocol)\n"
           "  --json       print one JSON document: per expectation file, line, col,\n"
           "               kind, expected, actual, passed (and message, call); totals\n"
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

/* The outcome of one expectation, for every output format. */
struct result {
  bool passed;
  char *expected, *actual;  /* in the words of the expectation */
  char *message;            /* why it failed, NULL when it holds */
  char *call;               /* CALL: a call that gets `actual` */
};

static void
result_clear (struct result *res)
{
  free (res->expected);
  free (res->actual);
  free (res->message);
  free (res->call);
}

static char *
dup_or_null (const char *s)
{
  return s != NULL ? strdup (s) : NULL;
}

static void
judge_call (const struct securer_seccomp_prog *prog, const struct securer_policy *p,
            const struct securer_expectation *x, struct result *res)
{
  struct judge j = { prog, &x->call, x->verdict, { 0, 0 }, { 0 }, NULL };
  char wbuf[64], gbuf[64];
  int r = securer_call_samples (prog, p, &x->call, judge_one, &j);
  res->passed = r == 0;
  const char *want = securer_verdict_text (x->verdict, wbuf, sizeof wbuf);
  res->expected = dup_or_null (want);
  if (r < 0)
    {
      res->message = dup_or_null (j.err ? securer_error_message (j.err) : "cannot run the filter");
      securer_error_free (&j.err);
      return;
    }
  res->actual = dup_or_null (r == 0 ? want : securer_verdict_text (j.got, gbuf, sizeof gbuf));
  if (r == 0)
    return;
  res->call = securer_call_text (&x->call, j.args);
  if (asprintf (&res->message, "expected %s, got %s for %s", want, res->actual ? res->actual : "?",
                res->call ? res->call : x->call.name) < 0)
    res->message = NULL;
}

static void
judge_setting (const struct securer_policy *p, const struct securer_expectation *x, struct result *res)
{
  res->passed = securer_expect_setting_holds (x, p);
  res->expected = dup_or_null (x->text);
  char *shown = res->passed ? dup_or_null (x->text) : shown_setting (p, x);
  res->actual = dup_or_null (shown ? shown : "nothing of it");
  free (shown);
  if (!res->passed && asprintf (&res->message, "expected `%s`, the policy has `%s`", x->text,
                                res->actual ? res->actual : "?") < 0)
    res->message = NULL;
}

static void
judge_view (const struct securer_policy *p, const struct securer_expectation *x, struct result *res)
{
  const char *arrow = strstr (x->text, " -> ");
  res->expected = dup_or_null (arrow ? arrow + 4 : strchr (x->text, ' ') ? strchr (x->text, ' ') + 1 : x->text);
  char *why = NULL;
  securer_err_t err = NULL;
  int r = securer_expect_check_view (x, p, &res->actual, &why, &err);
  res->passed = r == 1;
  if (r < 0)
    res->message = dup_or_null (securer_error_message (err));
  else if (r == 0 && asprintf (&res->message, "expected `%s`, got %s: %s", x->text,
                               res->actual ? res->actual : "?", why ? why : "?") < 0)
    res->message = NULL;
  securer_error_free (&err);
  free (why);
}

static void
judge_net (const struct securer_policy *p, const struct securer_expectation *x, struct result *res)
{
  const char *why = NULL;
  bool allowed = securer_expect_net_allowed (p, x, &why);
  res->passed = allowed == (x->want == 1);
  res->expected = dup_or_null (x->want == 1 ? "allowed" : "denied");
  res->actual = dup_or_null (allowed ? "allowed" : "denied");
  if (why != NULL && strncmp (why, "denied: ", 8) == 0)
    why += 8;
  if (!res->passed && asprintf (&res->message, "expected `%s`, got %s (%s)", x->text, res->actual ? res->actual : "?",
                                why ? why : "?") < 0)
    res->message = NULL;
}

static void
judge (const struct securer_seccomp_prog *prog, const struct securer_policy *p,
       const struct securer_expectation *x, struct result *res)
{
  memset (res, 0, sizeof *res);
  switch (x->kind)
    {
    case SECURER_EXPECT_CALL: judge_call (prog, p, x, res); break;
    case SECURER_EXPECT_NETWORK:
    case SECURER_EXPECT_LIMIT: judge_setting (p, x, res); break;
    case SECURER_EXPECT_NET: judge_net (p, x, res); break;
    default: judge_view (p, x, res); break;
    }
  if (!res->passed && res->message == NULL)
    res->message = dup_or_null ("out of memory");
}

static const char *const kind_names[] = { "call", "network", "limit", "path", "exec", "env", "net" };

static json_t *
result_json (const char *file, const struct securer_expectation *x, const struct result *res)
{
  json_t *o = json_pack ("{s:s, s:I, s:I, s:s, s:s, s:s?, s:s?, s:b}", "file", file, "line", (json_int_t) x->line,
                         "col", (json_int_t) x->col, "kind", kind_names[x->kind], "expectation", x->text,
                         "expected", res->expected, "actual", res->actual, "passed", res->passed);
  if (o != NULL && res->call != NULL)
    json_object_set_new (o, "call", json_string (res->call));
  if (o != NULL && res->message != NULL)
    json_object_set_new (o, "message", json_string (res->message));
  return o;
}

enum format { FORMAT_TEXT, FORMAT_TAP, FORMAT_JSON };

/* Prints (or, for JSON, collects) one result; returns true when it holds. */
static bool
check (const struct securer_seccomp_prog *prog, const struct securer_policy *p, const char *file,
       const struct securer_expectation *x, enum format fmt, bool quiet, unsigned *number, json_t *results)
{
  struct result res;
  judge (prog, p, x, &res);
  ++*number;
  const char *msg = res.message ? res.message : "";
  if (fmt == FORMAT_JSON)
    json_array_append_new (results, result_json (file, x, &res));
  else if (fmt == FORMAT_TAP)
    {
      printf ("%s %u - %s\n", res.passed ? "ok" : "not ok", *number, x->text);
      if (!res.passed)
        printf ("  ---\n  message: \"%s\"\n  at: \"%s:%u:%u\"\n  ...\n", msg, file, x->line, x->col);
    }
  else if (!res.passed)
    printf ("%s:%u:%u: error: %s\n", file, x->line, x->col, msg);
  else if (!quiet)
    printf ("%s:%u: ok: %s\n", file, x->line, x->text);
  bool passed = res.passed;
  result_clear (&res);
  return passed;
}

int
cmd_policy_test (int argc, char **argv)
{
  static const struct option opts[] = {
    { "tap", no_argument, NULL, 't' },
    { "json", no_argument, NULL, 'j' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  enum format fmt = FORMAT_TEXT;
  bool quiet = false;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "qh", opts, NULL)) != -1)
    switch (c)
      {
      case 't': fmt = FORMAT_TAP; break;
      case 'j': fmt = FORMAT_JSON; break;
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
  if (fmt == FORMAT_TAP)
    printf ("TAP version 13\n1..%zu\n", planned + diags.n_errors);
  unsigned number = 0, failed = 0;
  json_t *results = fmt == FORMAT_JSON ? json_array () : NULL;
  for (int f = 0; ex != NULL && f < n_files; f++)
    for (size_t i = 0; i < ex[f].n; i++)
      if (!check (prog, p, ex[f].file, &ex[f].items[i], fmt, quiet, &number, results))
        failed++;
  if (fmt == FORMAT_JSON)
    {
      /* Malformed lines are failures too: a CI reading only "passed"
       * must not take a broken file for a good one. */
      json_t *malformed = json_array ();
      for (size_t i = 0; i < diags.n; i++)
        if (diags.items[i].severity == SECURER_DIAG_ERROR)
          json_array_append_new (malformed, json_pack ("{s:s?, s:I, s:I, s:s, s:s?}", "file", diags.items[i].file,
                                                       "line", (json_int_t) diags.items[i].line, "col",
                                                       (json_int_t) diags.items[i].col, "message",
                                                       diags.items[i].message, "hint", diags.items[i].hint));
      json_t *doc = json_pack ("{s:s, s:b, s:{s:I, s:I, s:I, s:I}, s:o, s:o}", "policy", argv[optind], "passed",
                               failed == 0 && diags.n_errors == 0, "totals", "expectations", (json_int_t) number,
                               "passed", (json_int_t) (number - failed), "failed", (json_int_t) failed,
                               "malformed", (json_int_t) diags.n_errors, "results", results, "malformed", malformed);
      if (doc == NULL || json_dumpf (doc, stdout, JSON_INDENT (2) | JSON_PRESERVE_ORDER) < 0)
        result = 1;
      else
        putchar ('\n');
      json_decref (doc);
    }
  else if (fmt == FORMAT_TAP)
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
