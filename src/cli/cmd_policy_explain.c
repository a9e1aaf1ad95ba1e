/* securer policy explain — the verdict the filter gives a call, and the
 * rule that decides it, traced back through includes and groups to the
 * lines that wrote it. */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "policy/expect.h"
#include "seccomp/seccomp.h"

void
cmd_policy_explain_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy explain POLICY [ABI] SYSCALL [ARG...]\n"
           "\n"
           "Print the verdict POLICY's seccomp filter gives the call, and the rule that\n"
           "decides it: the line that wrote it (FILE:LINE:COL, through includes) and, for\n"
           "a rule given by @group, the line of the group file that names the syscall.\n"
           "The verdict is the one of the BPF program the compiler generates, run in a\n"
           "userspace seccomp-BPF interpreter.\n"
           "\n"
           "The call is written as in 'securer policy test' files: ABI is x86_64 (default),\n"
           "i386 or x32; an ARG is a number, a constant, A|B, A<<N, or '*' for every value;\n"
           "arguments not given are '*'.  When the verdict depends on a '*' argument, each\n"
           "verdict is shown with a call that gets it.\n"
           "\n"
           "  securer policy explain r openat\n"
           "  securer policy explain r socket AF_INET\n"
           "  securer policy explain r mmap 0 4096 PROT_READ|PROT_WRITE|PROT_EXEC\n"
           "\n"
           "Options:\n"
           "  -h, --help  show this help\n"
           "\n"
           "Exit status: 0 when the call was explained, 1 when the POLICY or the call is\n"
           "invalid, 2 for usage errors.\n");
}

#define MAX_OUTCOMES 16

struct outcome {
  struct securer_action action;   /* of the BPF program */
  struct securer_action rules;    /* of the first-match reading of the rules */
  enum securer_decided_by by;
  size_t rule;
  uint64_t args[6];               /* the first call that got it */
};

struct survey {
  const struct securer_seccomp_prog *prog;
  const struct securer_call *call;
  struct outcome o[MAX_OUTCOMES];
  size_t n;
  bool more;                      /* outcomes beyond MAX_OUTCOMES were seen */
  securer_err_t err;
};

static int
outcome_of (struct survey *s, const uint64_t args[6], struct outcome *o)
{
  if (securer_seccomp_emulate (s->prog, s->call->arch, s->call->nr, args, &o->action, &s->err) < 0)
    return -1;
  o->rules = securer_seccomp_decide (s->prog, s->call->arch, s->call->nr, args, &o->by, &o->rule);
  return 0;
}

static bool
same_outcome (const struct outcome *a, const struct outcome *b)
{
  return securer_action_equal (a->action, b->action) && securer_action_equal (a->rules, b->rules)
         && a->by == b->by && a->rule == b->rule;
}

/* The call still gets the outcome last recorded. */
static bool
still_same (void *ctx, const uint64_t args[6])
{
  struct survey *s = ctx;
  struct outcome o;
  if (outcome_of (s, args, &o) < 0)
    {
      securer_error_free (&s->err);
      return false;
    }
  return same_outcome (&o, &s->o[s->n - 1]);
}

static int
survey_one (void *ctx, const uint64_t args[6])
{
  struct survey *s = ctx;
  struct outcome o;
  if (outcome_of (s, args, &o) < 0)
    return -1;
  for (size_t i = 0; i < s->n; i++)
    if (same_outcome (&s->o[i], &o))
      return 0;
  if (s->n == MAX_OUTCOMES)
    {
      s->more = true;
      return 0;
    }
  memcpy (o.args, args, sizeof o.args);
  s->o[s->n++] = o;
  securer_call_simplify (s->o[s->n - 1].args, s->call->wild, still_same, s);
  return 0;
}

/* The source line of a rule, trimmed; NULL when it cannot be read. */
static char *
source_line (const char *file, unsigned line)
{
  FILE *f = file ? fopen (file, "re") : NULL;
  if (f == NULL)
    return NULL;
  char *buf = NULL;
  size_t cap = 0;
  unsigned n = 0;
  char *found = NULL;
  while (getline (&buf, &cap, f) >= 0)
    if (++n == line)
      {
        char *s = buf + strspn (buf, " \t");
        s[strcspn (s, "\r\n")] = '\0';
        found = strdup (s);
        break;
      }
  free (buf);
  fclose (f);
  return found;
}

static void
print_rule (const struct securer_policy *p, const struct securer_call *c, size_t idx)
{
  if (idx >= p->seccomp.n_rules)
    {
      printf ("  by an exception the compiler adds for the sandbox's own hand-over\n");
      return;
    }
  const struct securer_syscall_rule *r = &p->seccomp.rules[idx];
  char *text = source_line (r->loc.file, r->loc.line);
  if (text != NULL)
    printf ("  by `%s`\n", text);
  if (r->loc.file != NULL)
    printf ("  at %s:%u:%u\n", r->loc.file, r->loc.line, r->loc.col);
  free (text);
  if (r->group == NULL)
    return;
  char *gpath = NULL;
  unsigned gline = 0;
  securer_err_t err = NULL;
  if (securer_group_locate (r->group, c->name, &gpath, &gline, &err) == 0 && gpath != NULL)
    printf ("  %s names %s at %s:%u\n", r->group, c->name, gpath, gline);
  else
    printf ("  as a member of %s\n", r->group);
  securer_error_free (&err);
  free (gpath);
}

static void
print_outcome (const struct securer_policy *p, const struct securer_call *c, const struct outcome *o)
{
  char buf[64], buf2[64];
  char *call = securer_call_text (c, o->args);
  printf ("%s: %s\n", call ? call : c->name, securer_verdict_text (o->action, buf, sizeof buf));
  free (call);
  if (!securer_action_equal (o->action, o->rules))
    /* A compiler or libseccomp mistake: say so rather than explain it. */
    printf ("  warning: the rules say %s, but the generated filter gives %s\n",
            securer_verdict_text (o->rules, buf2, sizeof buf2), securer_verdict_text (o->action, buf, sizeof buf));
  switch (o->by)
    {
    case SECURER_BY_RULE:
      print_rule (p, c, o->rule);
      break;
    case SECURER_BY_DEFAULT:
      printf ("  by the default action (`seccomp default`): no rule for %s matches\n", c->name);
      break;
    case SECURER_BY_FOREIGN_ABI:
      printf ("  by the action for other ABIs (`seccomp foreign-abi`): %s calls never reach the rules\n", c->abi);
      break;
    case SECURER_BY_NO_FILTER:
      printf ("  the policy loads no seccomp filter (`seccomp off`)\n");
      break;
    }
}

int
cmd_policy_explain (int argc, char **argv)
{
  static const struct option opts[] = {
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  optind = 1;
  /* '+': stop at the first operand, so that an argument such as -1 is one. */
  while ((c = getopt_long (argc, argv, "+h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h': cmd_policy_explain_help (stdout); return 0;
      default: cmd_policy_explain_help (stderr); return 2;
      }
  if (argc - optind < 2)
    return cli_usage ("policy explain", 2, "expected a POLICY and a call");

  securer_err_t err = NULL;
  struct securer_call call;
  if (securer_call_parse_words (argv + optind + 1, (size_t) (argc - optind - 1), &call, &err) < 0)
    {
      securer_error_prefix (&err, "policy explain");
      cli_report (&err);
      return 1;
    }
  struct securer_policy *p = cli_load_policy (argv[optind]);
  struct securer_seccomp_prog *prog = NULL;
  if (p == NULL || securer_seccomp_compile (p, 0, -1, &prog, &err) < 0)
    {
      if (err != NULL)
        cli_report (&err);
      securer_policy_free (p);
      securer_call_clear (&call);
      return 1;
    }
  struct survey s = { .prog = prog, .call = &call };
  int rc = securer_call_samples (prog, p, &call, survey_one, &s);
  if (rc < 0)
    cli_report (&s.err);
  else
    {
      if (s.n > 1)
        printf ("%s: the verdict depends on the arguments given as '*':\n\n", call.name);
      for (size_t i = 0; i < s.n; i++)
        {
          if (i > 0)
            putchar ('\n');
          print_outcome (p, &call, &s.o[i]);
        }
      if (s.n == 1 && call.wild != 0 && s.o[0].by != SECURER_BY_FOREIGN_ABI)
        printf ("  (the same for every value of the arguments given as '*')\n");
      if (s.more)
        printf ("\n(more rules decide for other arguments; give more of them)\n");
    }
  securer_seccomp_free (prog);
  securer_policy_free (p);
  securer_call_clear (&call);
  return rc < 0 ? 1 : 0;
}
