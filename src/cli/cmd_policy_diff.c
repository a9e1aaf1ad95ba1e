/* securer policy diff — what changes between two policies: the resolved
 * settings (mounts, exec list, Landlock, network, limits, environment, ...)
 * line by line, and the seccomp filter by verdict: every syscall either
 * policy has a rule for is judged by both generated programs, in the BPF
 * interpreter, on the argument values that can decide in either. */
#include <config.h>

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "policy/expect.h"
#include "seccomp/seccomp.h"

void
cmd_policy_diff_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy diff [OPTIONS] A B\n"
           "\n"
           "Show what changes from policy A to policy B (files or NAMEs of shipped policies):\n"
           "  - the resolved settings, as 'securer policy show' prints them: lines only in A\n"
           "    ('-') and only in B ('+'): mounts, masks, exec list, Landlock, network,\n"
           "    namespaces, identity, limits, cgroup, environment, seccomp defaults;\n"
           "  - the seccomp filter by verdict: for each syscall either policy has a rule\n"
           "    for, every verdict that changes, with a call that shows it, e.g.\n"
           "    'mmap: allow -> errno EPERM for mmap(0x0, 0x0, 0x6, 0x0, 0x0, 0x0)'.\n"
           "Verdicts come from the generated BPF programs, run in the seccomp-BPF interpreter.\n"
           "\n"
           "Options:\n"
           "  --json      print the differences as one JSON object\n"
           "  -h, --help  show this help\n"
           "\n"
           "Exit status: 0 when the policies mean the same, 1 when they differ or one is\n"
           "invalid, 2 for usage errors.\n");
}

struct side {
  struct securer_policy *p;
  struct securer_seccomp_prog *prog;
  char **lines;     /* the settings lines of `policy show`, sorted */
  size_t n_lines;
};

/* Settings lines: what `policy show` prints, without comments (file
 * names differ between any two policies) and without the seccomp rules,
 * which are compared by verdict instead. */
static bool
is_setting (const char *line)
{
  if (line[0] == '\0' || line[0] == '#')
    return false;
  if (strncmp (line, "seccomp ", 8) != 0)
    return true;
  const char *w = line + 8;
  return strcmp (w, "on") == 0 || strcmp (w, "off") == 0 || strncmp (w, "default ", 8) == 0
         || strncmp (w, "foreign-abi ", 12) == 0;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static int
side_load (struct side *s, const char *arg)
{
  memset (s, 0, sizeof *s);
  s->p = cli_load_policy (arg);
  if (s->p == NULL)
    return -1;
  securer_err_t err = NULL;
  if (securer_seccomp_compile (s->p, 0, -1, &s->prog, &err) < 0)
    {
      cli_report (&err);
      return -1;
    }
  char *text = securer_policy_to_text (s->p);
  if (text == NULL)
    return -1;
  size_t cap = 0;
  for (char *line = strtok (text, "\n"); line != NULL; line = strtok (NULL, "\n"))
    {
      /* A trailing comment (the group of a rule, a note) is not a setting. */
      char *hash = strstr (line, "  #");
      if (hash != NULL)
        *hash = '\0';
      if (!is_setting (line))
        continue;
      if (s->n_lines == cap)
        {
          cap = cap ? cap * 2 : 64;
          char **nv = realloc (s->lines, cap * sizeof *nv);
          if (nv == NULL)
            break;
          s->lines = nv;
        }
      s->lines[s->n_lines++] = strdup (line);
    }
  free (text);
  qsort (s->lines, s->n_lines, sizeof *s->lines, cmp_str);
  return 0;
}

static void
side_free (struct side *s)
{
  for (size_t i = 0; i < s->n_lines; i++)
    free (s->lines[i]);
  free (s->lines);
  securer_seccomp_free (s->prog);
  securer_policy_free (s->p);
}

static bool
has_line (const struct side *s, const char *line)
{
  return bsearch (&line, s->lines, s->n_lines, sizeof *s->lines, cmp_str) != NULL;
}

/* Settings lines of x that y lacks, printed with sign or added to out. */
static size_t
only_in (const struct side *x, const struct side *y, char sign, json_t *out)
{
  size_t n = 0;
  for (size_t i = 0; i < x->n_lines; i++)
    if (!has_line (y, x->lines[i]))
      {
        n++;
        if (out != NULL)
          json_array_append_new (out, json_string (x->lines[i]));
        else
          printf ("%c %s\n", sign, x->lines[i]);
      }
  return n;
}

/* ---- seccomp verdicts --------------------------------------------------- */

#define MAX_CHANGES 4   /* per syscall */

struct change {
  struct securer_action a, b;
  uint64_t args[6];
};

struct compare {
  const struct side *a, *b;
  const struct securer_call *call;
  struct change ch[MAX_CHANGES];
  size_t n;
};

static int
verdicts (const struct compare *c, const uint64_t args[6], struct change *x)
{
  securer_err_t err = NULL;
  if (securer_seccomp_emulate (c->a->prog, c->call->arch, c->call->nr, args, &x->a, &err) < 0
      || securer_seccomp_emulate (c->b->prog, c->call->arch, c->call->nr, args, &x->b, &err) < 0)
    {
      cli_report (&err);
      return -1;
    }
  return 0;
}

/* The witness still shows the same change. */
static bool
same_change (void *ctx, const uint64_t args[6])
{
  const struct compare *c = ctx;
  struct change x;
  const struct change *want = &c->ch[c->n - 1];
  return verdicts (c, args, &x) == 0 && securer_action_equal (x.a, want->a) && securer_action_equal (x.b, want->b);
}

static int
compare_one (void *ctx, const uint64_t args[6])
{
  struct compare *c = ctx;
  struct change x;
  if (verdicts (c, args, &x) < 0)
    return -1;
  if (securer_action_equal (x.a, x.b))
    return 0;
  for (size_t i = 0; i < c->n; i++)
    if (securer_action_equal (c->ch[i].a, x.a) && securer_action_equal (c->ch[i].b, x.b))
      return 0;
  memcpy (x.args, args, sizeof x.args);
  c->ch[c->n++] = x;
  securer_call_simplify (c->ch[c->n - 1].args, c->call->wild, same_change, c);
  return c->n == MAX_CHANGES;
}

/* Every syscall either policy has a rule for, sorted, each once. */
static char **
rule_names (const struct side *a, const struct side *b, size_t *n)
{
  size_t total = a->p->seccomp.n_rules + b->p->seccomp.n_rules, k = 0;
  char **v = calloc (total + 1, sizeof *v);
  if (v == NULL)
    return NULL;
  for (size_t i = 0; i < a->p->seccomp.n_rules; i++)
    v[k++] = a->p->seccomp.rules[i].name;
  for (size_t i = 0; i < b->p->seccomp.n_rules; i++)
    v[k++] = b->p->seccomp.rules[i].name;
  qsort (v, k, sizeof *v, cmp_str);
  size_t w = 0;
  for (size_t i = 0; i < k; i++)
    if (w == 0 || strcmp (v[w - 1], v[i]) != 0)
      v[w++] = v[i];
  *n = w;
  return v;
}

int
cmd_policy_diff (int argc, char **argv)
{
  static const struct option opts[] = {
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool json = false;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 'j': json = true; break;
      case 'h': cmd_policy_diff_help (stdout); return 0;
      default: cmd_policy_diff_help (stderr); return 2;
      }
  if (argc - optind != 2)
    return cli_usage ("policy diff", 2, "expected two policies, A and B");

  struct side a, b;
  int ra = side_load (&a, argv[optind]);
  int rb = side_load (&b, argv[optind + 1]);
  if (ra < 0 || rb < 0)
    {
      side_free (&a);
      side_free (&b);
      return 1;
    }
  json_t *j_removed = json_array (), *j_added = json_array (), *j_seccomp = json_array ();
  size_t differences = only_in (&a, &b, '-', json ? j_removed : NULL) + only_in (&b, &a, '+', json ? j_added : NULL);

  size_t n_names = 0;
  char **names = rule_names (&a, &b, &n_names);
  int result = names == NULL ? -1 : 0;
  for (size_t i = 0; i < n_names && result == 0; i++)
    {
      char *words[] = { names[i] };
      struct securer_call call;
      securer_err_t err = NULL;
      /* Names of other arches (chown32 on x86_64) have no effect here. */
      if (securer_call_parse_words (words, 1, &call, &err) < 0)
        {
          securer_error_free (&err);
          continue;
        }
      struct compare cmp = { &a, &b, &call, { { { 0, 0 }, { 0, 0 }, { 0 } } }, 0 };
      /* The values that can decide in either policy. */
      int r = securer_call_samples (a.prog, a.p, &call, compare_one, &cmp);
      if (r == 0)
        r = securer_call_samples (b.prog, b.p, &call, compare_one, &cmp);
      if (r < 0)
        result = -1;
      for (size_t k = 0; k < cmp.n; k++)
        {
          char va[64], vb[64];
          char *text = securer_call_text (&call, cmp.ch[k].args);
          const char *sa = securer_verdict_text (cmp.ch[k].a, va, sizeof va);
          const char *sb = securer_verdict_text (cmp.ch[k].b, vb, sizeof vb);
          differences++;
          if (json)
            json_array_append_new (j_seccomp, json_pack ("{s:s, s:s, s:s, s:s}", "syscall", call.name,
                                                          "call", text ? text : "", "a", sa, "b", sb));
          else
            printf ("seccomp %s: %s -> %s for %s\n", call.name, sa, sb, text ? text : call.name);
          free (text);
        }
      securer_call_clear (&call);
    }
  free (names);
  if (json)
    {
      json_t *o = json_pack ("{s:b, s:{s:o, s:o}, s:o}", "differ", differences > 0, "settings", "removed",
                             j_removed, "added", j_added, "seccomp", j_seccomp);
      json_dumpf (o, stdout, JSON_INDENT (2) | JSON_PRESERVE_ORDER);
      fputc ('\n', stdout);
      json_decref (o);
    }
  else
    {
      json_decref (j_removed);
      json_decref (j_added);
      json_decref (j_seccomp);
      if (differences == 0)
        printf ("%s and %s mean the same\n", argv[optind], argv[optind + 1]);
    }
  side_free (&a);
  side_free (&b);
  if (result < 0)
    return 1;
  return differences > 0 ? 1 : 0;
}
