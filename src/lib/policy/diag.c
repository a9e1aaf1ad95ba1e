/* Diagnostics: collected while reading a policy so that one run of
 * `securer policy check` shows every problem, not only the first. */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suggest.h"

static const char *const sev_names[] = { "error", "warning", "note" };

void
diag_add (struct securer_diags *d, enum securer_diag_severity sev, const char *file,
          unsigned line, unsigned col, const char *hint, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  diag_addv (d, sev, file, line, col, hint, fmt, ap);
  va_end (ap);
}

void
diag_addv (struct securer_diags *d, enum securer_diag_severity sev, const char *file,
           unsigned line, unsigned col, const char *hint, const char *fmt, va_list ap)
{
  if (d == NULL)
    return;
  if (sev == SECURER_DIAG_ERROR)
    d->n_errors++;
  /* Past the cap only the count grows: a file of garbage must not produce
   * a million lines of output or allocations. */
  if (d->n >= POLICY_MAX_DIAGS)
    return;
  struct securer_diag *items = realloc (d->items, (d->n + 1) * sizeof *items);
  if (items == NULL)
    return;
  d->items = items;
  struct securer_diag *x = &items[d->n];
  memset (x, 0, sizeof *x);
  if (vasprintf (&x->message, fmt, ap) < 0)
    x->message = NULL;
  if (x->message == NULL)
    return;
  x->severity = sev;
  x->file = strdup (file ? file : "<policy>");
  x->line = line;
  x->col = col;
  x->hint = hint ? strdup (hint) : NULL;
  if (x->file == NULL)
    {
      free (x->message);
      free (x->hint);
      return;
    }
  d->n++;
}

bool
diag_full (const struct securer_diags *d)
{
  return d != NULL && d->n >= POLICY_MAX_DIAGS;
}

char *
diag_suggest (const char *word, const char *const *cands, size_t n)
{
  /* securer_suggest accepts at most three edits, so a candidate whose
   * length differs by more cannot win; skipping those keeps a file full of
   * misspelled words from costing an edit-distance table per candidate. */
  size_t wl = strlen (word);
  if (wl == 0 || wl >= 64 || n == 0)
    return NULL;
  const char **near = malloc (n * sizeof *near);
  if (near == NULL)
    return NULL;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (cands[i] == NULL)
        continue;
      size_t cl = strlen (cands[i]);
      if (cl + 3 >= wl && wl + 3 >= cl)
        near[k++] = cands[i];
    }
  const char *s = securer_suggest (word, near, k);
  free (near);
  if (s == NULL)
    return NULL;
  char *h = NULL;
  if (asprintf (&h, "did you mean '%s'?", s) < 0)
    return NULL;
  return h;
}

char *
securer_diag_format (const struct securer_diag *d)
{
  if (d == NULL)
    return NULL;
  const char *sev = (unsigned) d->severity < 3 ? sev_names[d->severity] : "error";
  char pos[64] = "";
  if (d->line > 0 && d->col > 0)
    snprintf (pos, sizeof pos, ":%u:%u", d->line, d->col);
  else if (d->line > 0)
    snprintf (pos, sizeof pos, ":%u", d->line);
  char *s = NULL;
  int r;
  if (d->hint != NULL)
    r = asprintf (&s, "%s%s: %s: %s (%s)", d->file ? d->file : "<policy>", pos, sev,
                  d->message ? d->message : "", d->hint);
  else
    r = asprintf (&s, "%s%s: %s: %s", d->file ? d->file : "<policy>", pos, sev,
                  d->message ? d->message : "");
  return r < 0 ? NULL : s;
}

void
securer_diags_free (struct securer_diags *d)
{
  if (d == NULL)
    return;
  for (size_t i = 0; i < d->n; i++)
    {
      free (d->items[i].file);
      free (d->items[i].message);
      free (d->items[i].hint);
    }
  free (d->items);
  d->items = NULL;
  d->n = 0;
  d->n_errors = 0;
}

int
diag_to_error (const struct securer_diags *d, securer_err_t *err)
{
  for (size_t i = 0; i < d->n; i++)
    {
      const struct securer_diag *x = &d->items[i];
      if (x->severity != SECURER_DIAG_ERROR)
        continue;
      char pos[64] = "";
      if (x->line > 0 && x->col > 0)
        snprintf (pos, sizeof pos, ":%u:%u", x->line, x->col);
      else if (x->line > 0)
        snprintf (pos, sizeof pos, ":%u", x->line);
      if (x->hint)
        securer_error_set (err, 0, "%s%s: %s (%s)", x->file, pos, x->message, x->hint);
      else
        securer_error_set (err, 0, "%s%s: %s", x->file, pos, x->message);
      securer_error_set_status (err, 1);
      return -1;
    }
  securer_error_set (err, EINVAL, "invalid policy");
  return -1;
}
