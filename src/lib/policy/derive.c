/* A policy derived from a base policy file; see derive.h. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive.h"
#include "internal.h"
#include "securer/paths.h"

static bool
is_word (const struct token *t, const char *w)
{
  return !t->quoted && strcmp (t->text, w) == 0;
}

/* A `seccomp` line that lets calls through, and so belongs to the
 * allowlist being replaced. */
static bool
allow_line (const struct line *ln)
{
  return ln->n >= 2 && is_word (&ln->tok[0], "seccomp")
         && (is_word (&ln->tok[1], "allow") || is_word (&ln->tok[1], "log") || is_word (&ln->tok[1], "notify"));
}

/* Whether the file (or one it includes) has such a line. */
static bool
brings_allow_rules (const char *path, const char *text, size_t len, unsigned depth)
{
  struct lexer lx;
  struct securer_diags quiet = { NULL, 0, 0 };
  lexer_init (&lx, path, text, len, &quiet);
  struct line ln;
  bool found = false;
  while (!found && lexer_next (&lx, &ln) == 1)
    {
      found = allow_line (&ln);
      if (!found && ln.n == 2 && is_word (&ln.tok[0], "include") && depth < POLICY_MAX_INCLUDE_DEPTH)
        {
          char *sub = NULL, *buf = NULL;
          size_t blen = 0;
          securer_err_t err = NULL;
          if (policy_read_include (path, ln.tok[1].text, &sub, &buf, &blen, &err) == 0)
            found = brings_allow_rules (sub, buf, blen, depth + 1);
          securer_error_free (&err);
          free (sub);
          free (buf);
        }
      line_clear (&ln);
    }
  securer_diags_free (&quiet);
  return found;
}

static void
put_token (FILE *f, const struct token *t)
{
  policy_put_word (f, t->text, t->quoted);
}

static void
put_line (FILE *f, const char *lead, const struct line *ln)
{
  fputs (lead, f);
  for (size_t i = 0; i < ln->n; i++)
    {
      if (i)
        fputc (' ', f);
      put_token (f, &ln->tok[i]);
    }
  fputc ('\n', f);
}

static bool
same_file (const char *a, const char *b)
{
  char *ra = realpath (a, NULL), *rb = realpath (b, NULL);
  bool same = ra != NULL && rb != NULL && strcmp (ra, rb) == 0;
  free (ra);
  free (rb);
  return same;
}

/* The name to include `found` (what `name` resolved to from base) by, in
 * a file kept anywhere. */
static void
put_include (FILE *f, const char *name, const char *found)
{
  struct token t = { (char *) name, 0, 0, true };
  char *rel = NULL, *shipped = NULL;
  securer_err_t err = NULL;
  if (name[0] != '/' && asprintf (&rel, "policies/%s", name) >= 0)
    shipped = securer_data_find (rel, &err);
  securer_error_free (&err);
  char *abs = NULL;
  if (name[0] != '/' && (shipped == NULL || !same_file (shipped, found)))
    abs = realpath (found, NULL);
  if (abs != NULL)
    t.text = abs;
  fputs ("include ", f);
  put_token (f, &t);
  fputc ('\n', f);
  free (abs);
  free (rel);
  free (shipped);
}

char *
securer_policy_derive (const char *base_path, const char *header, const char *rules, securer_err_t *err)
{
  char *text = NULL;
  size_t len = 0;
  if (policy_read_file (base_path, &text, &len, err) < 0)
    return NULL;
  size_t lead = 0;
  while (lead < len && (text[lead] == ' ' || text[lead] == '\t' || text[lead] == '\n' || text[lead] == '\r'))
    lead++;
  if (lead < len && text[lead] == '{')
    {
      free (text);
      securer_error_set (err, EINVAL, "%s is a JSON policy: its lines cannot be kept; give a policy in text", base_path);
      return NULL;
    }
  char *out = NULL;
  size_t out_len = 0;
  FILE *f = open_memstream (&out, &out_len);
  if (f == NULL)
    {
      free (text);
      securer_error_set (err, errno, "derive a policy from %s", base_path);
      return NULL;
    }
  fputs (header ? header : "", f);
  struct securer_diags diags = { NULL, 0, 0 };
  struct lexer lx;
  lexer_init (&lx, base_path, text, len, &diags);
  struct line ln;
  bool placed = false;
  while (lexer_next (&lx, &ln) == 1)
    {
      bool replaced = allow_line (&ln);
      if (ln.n == 2 && is_word (&ln.tok[0], "include"))
        {
          char *found = NULL, *buf = NULL;
          size_t blen = 0;
          securer_err_t e = NULL;
          if (policy_read_include (base_path, ln.tok[1].text, &found, &buf, &blen, &e) < 0)
            put_line (f, "", &ln);   /* loading the result reports it */
          else if (!(replaced = brings_allow_rules (found, buf, blen, 1)))
            put_include (f, ln.tok[1].text, found);
          securer_error_free (&e);
          free (found);
          free (buf);
        }
      else if (ln.n >= 2 && is_word (&ln.tok[0], "seccomp")
               && (is_word (&ln.tok[1], "on") || is_word (&ln.tok[1], "off") || is_word (&ln.tok[1], "default")
                   || is_word (&ln.tok[1], "foreign-abi")))
        ;  /* the rules say these */
      else if (!replaced)
        put_line (f, "", &ln);
      if (replaced)
        {
          if (!placed)
            fprintf (f, "\n%s\n", rules);
          placed = true;
          put_line (f, "# replaced by the rules above: ", &ln);
        }
      line_clear (&ln);
    }
  if (!placed)
    fprintf (f, "\n%s", rules);
  int lexed = diags.n_errors == 0;
  securer_diags_free (&diags);
  free (text);
  if (fclose (f) != 0 || !lexed)
    {
      free (out);
      securer_error_set (err, lexed ? ENOMEM : EINVAL, "derive a policy from %s%s", base_path,
                         lexed ? "" : ": it does not parse");
      return NULL;
    }
  return out;
}
