/* Every Seatbelt profile generated for the shipped policies is read by an
 * SBPL reader written for this test: balanced forms, (version 1) then
 * (deny default) first, only operations and filters Seatbelt knows (and the
 * generator is meant to use), filters with arguments of the right kind, no
 * rule twice, and no allow and deny of the same operation with the same
 * filter.  A malformed profile cannot ship unnoticed; the reader is itself
 * tested on broken profiles, so it can fail. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "securer/policy.h"
#include "securer/ports.h"

/* ---- reading --------------------------------------------------------------- */

enum kind { LIST, SYMBOL, STRING };

struct node {
  enum kind kind;
  char *text;               /* SYMBOL, STRING */
  struct node **kids;       /* LIST */
  size_t n;
};

struct reader {
  const char *s;
  char error[256];
};

static void
node_free (struct node *n)
{
  if (n == NULL)
    return;
  for (size_t i = 0; i < n->n; i++)
    node_free (n->kids[i]);
  free (n->kids);
  free (n->text);
  free (n);
}

static void
skip_space (struct reader *r)
{
  for (;;)
    {
      while (*r->s == ' ' || *r->s == '\n' || *r->s == '\t')
        r->s++;
      if (*r->s != ';')
        return;
      while (*r->s && *r->s != '\n')
        r->s++;
    }
}

static struct node *
read_node (struct reader *r)
{
  skip_space (r);
  struct node *n = calloc (1, sizeof *n);
  if (*r->s == '(')
    {
      r->s++;
      n->kind = LIST;
      for (;;)
        {
          skip_space (r);
          if (*r->s == ')')
            {
              r->s++;
              return n;
            }
          if (*r->s == '\0')
            {
              snprintf (r->error, sizeof r->error, "unbalanced '(': end of profile inside a form");
              node_free (n);
              return NULL;
            }
          struct node *k = read_node (r);
          if (k == NULL)
            {
              node_free (n);
              return NULL;
            }
          n->kids = realloc (n->kids, (n->n + 1) * sizeof *n->kids);
          n->kids[n->n++] = k;
        }
    }
  if (*r->s == '"')
    {
      n->kind = STRING;
      size_t cap = 64, len = 0;
      n->text = malloc (cap);
      for (r->s++; *r->s != '"'; r->s++)
        {
          if (*r->s == '\\')
            r->s++;
          if (*r->s == '\0' || *r->s == '\n')
            {
              snprintf (r->error, sizeof r->error, "unterminated string");
              node_free (n);
              return NULL;
            }
          if (len + 2 >= cap)
            n->text = realloc (n->text, cap *= 2);
          n->text[len++] = *r->s;
        }
      r->s++;
      n->text[len] = '\0';
      return n;
    }
  if (*r->s == ')')
    {
      snprintf (r->error, sizeof r->error, "unbalanced ')'");
      free (n);
      return NULL;
    }
  n->kind = SYMBOL;
  size_t len = strcspn (r->s, " \n\t()\";");
  n->text = strndup (r->s, len);
  r->s += len;
  return n;
}

/* ---- checking ----------------------------------------------------------------- */

static const char *const operations[] = {
  "default", "file-read*", "file-write*", "file-write-data", "file-read-metadata", "process-exec",
  "process-fork", "process-info*", "signal", "sysctl-read", "mach-lookup", "ipc-posix*",
  "ipc-sysv*", "ipc-posix-shm-read-data", "ipc-posix-shm-read-metadata", "network*",
  "network-bind", "network-inbound", "network-outbound",
};
/* filter name and what its arguments are: "p" a path (string or
 * string-append of the private-directory parameter and a string), "s" a
 * string, "t" the symbol same-sandbox, "n" a protocol symbol and a string. */
static const struct {
  const char *name;
  const char *args;
} filters[] = {
  { "subpath", "p" }, { "literal", "p" }, { "sysctl-name", "s" }, { "sysctl-name-prefix", "s" },
  { "global-name", "s" }, { "ipc-posix-name", "s" }, { "target", "t" }, { "local", "n" },
  { "remote", "n" },
};

static bool
known_op (const char *s)
{
  for (size_t i = 0; i < sizeof operations / sizeof *operations; i++)
    if (strcmp (s, operations[i]) == 0)
      return true;
  return false;
}

static bool
is_path (const struct node *n)
{
  if (n->kind == STRING)
    return n->text[0] == '/';
  /* (string-append (param "SECURER_PRIVATE_DIR") "/suffix") */
  return n->kind == LIST && n->n == 3 && n->kids[0]->kind == SYMBOL
         && strcmp (n->kids[0]->text, "string-append") == 0 && n->kids[1]->kind == LIST
         && n->kids[1]->n == 2 && strcmp (n->kids[1]->kids[0]->text, "param") == 0
         && n->kids[1]->kids[1]->kind == STRING
         && strcmp (n->kids[1]->kids[1]->text, SECURER_SEATBELT_PARAM_PRIVATE) == 0
         && n->kids[2]->kind == STRING && n->kids[2]->text[0] == '/';
}

/* The filter as text, for comparing rules; NULL (and *why) when malformed. */
static char *
check_filter (const struct node *f, char *why, size_t len)
{
  if (f->kind != LIST || f->n == 0 || f->kids[0]->kind != SYMBOL)
    {
      snprintf (why, len, "a rule's filter is not a (FILTER ARG…) form");
      return NULL;
    }
  const char *name = f->kids[0]->text;
  for (size_t i = 0; i < sizeof filters / sizeof *filters; i++)
    {
      if (strcmp (name, filters[i].name) != 0)
        continue;
      const char *a = filters[i].args;
      bool ok;
      if (a[0] == 'p')
        ok = f->n == 2 && is_path (f->kids[1]);
      else if (a[0] == 's')
        ok = f->n == 2 && f->kids[1]->kind == STRING && f->kids[1]->text[0] != '\0';
      else if (a[0] == 't')
        ok = f->n == 2 && f->kids[1]->kind == SYMBOL && strcmp (f->kids[1]->text, "same-sandbox") == 0;
      else
        ok = f->n == 3 && f->kids[1]->kind == SYMBOL
             && (strcmp (f->kids[1]->text, "ip") == 0 || strcmp (f->kids[1]->text, "tcp") == 0)
             && f->kids[2]->kind == STRING;
      if (!ok)
        {
          snprintf (why, len, "filter (%s …) has arguments of the wrong kind", name);
          return NULL;
        }
      char *text = NULL;
      const struct node *arg = f->kids[f->n - 1];
      const char *v = arg->kind == LIST ? arg->kids[2]->text : arg->text;
      if (asprintf (&text, "(%s%s %s%s)", name, arg->kind == LIST ? " <private>" : "",
                    f->n == 3 ? f->kids[1]->text : "", v) < 0)
        abort ();
      return text;
    }
  snprintf (why, len, "unknown filter '%s'", name);
  return NULL;
}

struct rule {
  bool allow;
  char *op;
  char *filter;    /* "" for none */
};

/* Checks a whole profile; returns NULL when it is well formed, otherwise a
 * malloc'd description of the first problem. */
static char *
sbpl_check (const char *text)
{
  struct reader r = { text, "" };
  struct node *top[4096];
  size_t n_top = 0;
  char why[512] = "";
  for (;;)
    {
      skip_space (&r);
      if (*r.s == '\0')
        break;
      struct node *n = read_node (&r);
      if (n == NULL)
        {
          snprintf (why, sizeof why, "%s", r.error);
          goto out;
        }
      if (n_top == 4096)
        abort ();
      top[n_top++] = n;
    }
  struct rule *rules = NULL;
  size_t n_rules = 0;
  for (size_t i = 0; i < n_top && why[0] == '\0'; i++)
    {
      const struct node *f = top[i];
      if (f->kind != LIST || f->n == 0 || f->kids[0]->kind != SYMBOL)
        {
          snprintf (why, sizeof why, "top-level form %zu is not a (WORD …) form", i + 1);
          break;
        }
      const char *head = f->kids[0]->text;
      if (i == 0)
        {
          if (strcmp (head, "version") != 0 || f->n != 2 || strcmp (f->kids[1]->text, "1") != 0)
            snprintf (why, sizeof why, "the first form is not (version 1)");
          continue;
        }
      if (i == 1 && (strcmp (head, "deny") != 0 || f->n != 2 || strcmp (f->kids[1]->text, "default") != 0))
        {
          snprintf (why, sizeof why, "the second form is not (deny default)");
          break;
        }
      bool allow = strcmp (head, "allow") == 0;
      if (!allow && strcmp (head, "deny") != 0)
        {
          snprintf (why, sizeof why, "unknown top-level form '%s'", head);
          break;
        }
      if (i > 1 && f->n >= 2 && strcmp (f->kids[1]->text ? f->kids[1]->text : "", "default") == 0)
        {
          snprintf (why, sizeof why, "a second default rule");
          break;
        }
      size_t k = 1;
      size_t first_op = rules ? n_rules : 0;
      (void) first_op;
      char *ops[32];
      size_t n_ops = 0;
      for (; k < f->n && f->kids[k]->kind == SYMBOL; k++)
        {
          if (!known_op (f->kids[k]->text))
            {
              snprintf (why, sizeof why, "unknown operation '%s'", f->kids[k]->text);
              break;
            }
          if (n_ops < 32)
            ops[n_ops++] = f->kids[k]->text;
        }
      if (why[0] != '\0')
        break;
      if (n_ops == 0)
        {
          snprintf (why, sizeof why, "(%s) without an operation", head);
          break;
        }
      char *flt[256];
      size_t n_flt = 0;
      for (; k < f->n && why[0] == '\0'; k++)
        {
          char *t = check_filter (f->kids[k], why, sizeof why);
          if (t != NULL && n_flt < 256)
            flt[n_flt++] = t;
          else
            free (t);
        }
      if (n_flt == 0 && why[0] == '\0')
        flt[n_flt++] = strdup ("");
      for (size_t o = 0; o < n_ops && why[0] == '\0'; o++)
        for (size_t x = 0; x < n_flt && why[0] == '\0'; x++)
          {
            for (size_t j = 0; j < n_rules; j++)
              if (strcmp (rules[j].op, ops[o]) == 0 && strcmp (rules[j].filter, flt[x]) == 0)
                {
                  snprintf (why, sizeof why, "%s: (%s %s %s) %s", rules[j].allow == allow ? "duplicate rule"
                                                                                            : "contradictory rules",
                            allow ? "allow" : "deny", ops[o], flt[x],
                            rules[j].allow == allow ? "twice" : "allowed and denied alike");
                  break;
                }
            rules = realloc (rules, (n_rules + 1) * sizeof *rules);
            rules[n_rules++] = (struct rule) { allow, strdup (ops[o]), strdup (flt[x]) };
          }
      for (size_t x = 0; x < n_flt; x++)
        free (flt[x]);
    }
  if (why[0] == '\0' && n_top < 2)
    snprintf (why, sizeof why, "the profile has no (deny default)");
  for (size_t j = 0; j < n_rules; j++)
    {
      free (rules[j].op);
      free (rules[j].filter);
    }
  free (rules);
out:
  for (size_t i = 0; i < n_top; i++)
    node_free (top[i]);
  return why[0] ? strdup (why) : NULL;
}

/* ---- the tests ------------------------------------------------------------------ */

static char *
profile_of (const char *name)
{
  char path[4096];
  const char *src = getenv ("SECURER_SRCDIR");
  snprintf (path, sizeof path, "%s/policies/%s.policy", src ? src : SECURER_ABS_SRCDIR, name);
  struct securer_policy *p = NULL;
  struct securer_diags d = { 0 };
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_file (path, &p, &d, &err), 0, "%s: %s", path, securer_error_message (err));
  securer_diags_free (&d);
  struct securer_port_report rep = { 0 };
  char *text = securer_seatbelt_profile (p, &rep, &err);
  cr_assert_not_null (text, "%s", securer_error_message (err));
  securer_port_report_clear (&rep);
  securer_policy_free (p);
  return text;
}

Test (sbpl, every_shipped_policys_profile_reads_clean)
{
  static const char *const shipped[] = { "r", "minimal", "r-server" };
  for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++)
    {
      char *text = profile_of (shipped[i]);
      char *why = sbpl_check (text);
      cr_assert_null (why, "policy %s: %s", shipped[i], why);
      free (text);
    }
}

Test (sbpl, the_reader_refuses_broken_profiles)
{
  static const struct {
    const char *text, *want;
  } cases[] = {
    { "(version 1)\n(deny default)\n(allow file-read* (subpath \"/usr\")", "unbalanced '('" },
    { "(version 1)\n(deny default))\n", "unbalanced ')'" },
    { "(version 1)\n(allow file-read* (subpath \"/usr\"))\n(deny default)\n", "second form is not (deny default)" },
    { "(deny default)\n", "first form is not (version 1)" },
    { "(version 1)\n(deny default)\n(allow file-reed* (subpath \"/usr\"))\n", "unknown operation 'file-reed*'" },
    { "(version 1)\n(deny default)\n(allow file-read* (subpat \"/usr\"))\n", "unknown filter 'subpat'" },
    { "(version 1)\n(deny default)\n(allow file-read* (subpath usr))\n", "arguments of the wrong kind" },
    { "(version 1)\n(deny default)\n(allow file-read* (subpath \"/usr\"))\n(allow file-read* (subpath \"/usr\"))\n",
      "duplicate rule" },
    { "(version 1)\n(deny default)\n(allow file-read* (literal \"/x\"))\n(deny file-read* (literal \"/x\"))\n",
      "contradictory rules" },
    { "(version 1)\n(deny default)\n(allow network* (remote ip \"localhost:*\")\n", "unbalanced '('" },
    { "(version 1)\n(deny default)\n(allow file-read* (subpath \"/usr\"))\n(deny default)\n", "second default" },
    { "(version 1)\n(deny default)\n(allow (subpath \"/usr\"))\n", "without an operation" },
    { "(version 1)\n(deny default)\n(allow file-read* (literal \"/a\n", "unterminated string" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      char *why = sbpl_check (cases[i].text);
      cr_assert_not_null (why, "case %zu passed the reader", i);
      cr_assert_not_null (strstr (why, cases[i].want), "case %zu: %s", i, why);
      free (why);
    }
  char *why = sbpl_check ("(version 1)\n(deny default)\n(allow file-read* (subpath \"/usr\") (literal \"/etc/x\"))\n"
                          "(deny file-read* (subpath \"/usr/secret\"))\n(allow signal (target same-sandbox))\n");
  cr_assert_null (why, "%s", why);
}
