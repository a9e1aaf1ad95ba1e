/* Seccomp rule lines resolved after the load (SECURER_POLICY_DEFER_SECCOMP).
 *
 * Resolving the rules is most of a policy's load: every @group is a file
 * under seccomp/ to read and expand, and each syscall becomes a rule.  A
 * launcher needs none of it before clone (the payload only has to know
 * that a filter will come), so `securer run` loads the policy with its
 * rule lines kept as the lexer read them and resolves them while the
 * sandbox is being set up.
 *
 * The lines are kept as tokens, never as file names: completing reads no
 * policy file again, so a file changed in between cannot give the sandbox
 * two versions of the policy.  Group files are read during completion
 * only, once each (the builder caches them).  The builder of the load is
 * kept too, so the rules meet the same override rules, marks and limits as
 * in a full load, and the diagnostics are the same ones. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct securer_policy_deferred *
policy_deferred_new (const char *top)
{
  struct securer_policy_deferred *df = calloc (1, sizeof *df);
  if (df == NULL)
    return NULL;
  df->top = strdup (top);
  if (df->top == NULL)
    {
      free (df);
      return NULL;
    }
  return df;
}

void
policy_deferred_free (struct securer_policy_deferred *df)
{
  if (df == NULL)
    return;
  for (size_t i = 0; i < df->n; i++)
    line_clear (&df->lines[i].ln);
  free (df->lines);
  for (size_t i = 0; i < df->n_files; i++)
    free (df->files[i]);
  free (df->files);
  free (df->top);
  builder_free (df->b);
  free (df);
}

int
policy_defer_line (struct securer_policy_deferred *df, const char *file, struct line *ln, size_t diag_at)
{
  /* Lines come file by file, so one name is kept per run of lines. */
  if (df->n_files == 0 || strcmp (df->files[df->n_files - 1], file) != 0)
    {
      if (grow ((void **) &df->files, &df->cap_files, df->n_files, sizeof *df->files) < 0)
        return -1;
      char *f = strdup (file);
      if (f == NULL)
        return -1;
      df->files[df->n_files++] = f;
    }
  if (grow ((void **) &df->lines, &df->cap, df->n, sizeof *df->lines) < 0)
    return -1;
  struct deferred_line *d = &df->lines[df->n++];
  d->file = df->files[df->n_files - 1];
  d->ln = *ln;
  d->diag_at = diag_at;
  memset (ln, 0, sizeof *ln);
  return 0;
}

/* Puts the diagnostics of the rule lines (add, line k's from starts[k]) into
 * dst: where each line was read when `in_place`, else after dst's own.  The
 * first POLICY_MAX_DIAGS are kept, as diag_add keeps them. */
static void
merge_diags (struct securer_diags *dst, struct securer_diags *add, const size_t *starts,
             const struct securer_policy_deferred *df, bool in_place)
{
  size_t total = dst->n + add->n;
  struct securer_diag *items = xcalloc_array (total, sizeof *items);
  if (items == NULL)
    {
      securer_diags_free (add);
      diag_add (dst, SECURER_DIAG_ERROR, df->top, 0, 0, NULL, "out of memory");
      return;
    }
  size_t i = 0, w = 0;
  for (size_t k = 0; k < df->n; k++)
    {
      size_t at = in_place ? df->lines[k].diag_at : dst->n;
      while (i < at && i < dst->n)
        items[w++] = dst->items[i++];
      size_t end = k + 1 < df->n ? starts[k + 1] : add->n;
      for (size_t j = starts[k]; j < end; j++)
        items[w++] = add->items[j];
    }
  while (i < dst->n)
    items[w++] = dst->items[i++];
  for (size_t j = POLICY_MAX_DIAGS; j < w; j++)
    {
      free (items[j].file);
      free (items[j].message);
      free (items[j].hint);
    }
  free (dst->items);
  free (add->items);
  dst->items = items;
  dst->n = w < POLICY_MAX_DIAGS ? w : POLICY_MAX_DIAGS;
  dst->n_errors += add->n_errors;
  memset (add, 0, sizeof *add);
}

/* Applies the kept lines to b and finishes the rules into its policy. */
static int
resolve (struct securer_policy_deferred *df, struct builder *b, struct securer_diags *dst, bool in_place)
{
  struct securer_policy *p = builder_policy (b);
  size_t *starts = xcalloc_array (df->n, sizeof *starts);
  if (starts == NULL)
    {
      diag_add (dst, SECURER_DIAG_ERROR, df->top, 0, 0, NULL, "out of memory");
      return -1;
    }
  /* The lines report into a list of their own, so that none of them finds
   * the list fuller than it would be in a full load. */
  struct securer_diags add = { NULL, 0, 0 };
  builder_attach (b, p, &add);
  policy_apply_deferred (df, b, &add, starts);
  builder_attach (b, p, dst);
  merge_diags (dst, &add, starts, df, in_place);
  free (starts);
  return builder_finish_rules (b, df->top);
}

int
policy_defer_finish (struct securer_policy_deferred *df, struct builder *b, struct securer_diags *diags,
                     size_t errors_before)
{
  builder_finish_defaults (b, df->top);
  /* A policy that fails is reported exactly as a full load reports it; one
   * with seccomp off loads no filter, so nothing waits for the rules and
   * the launcher could not stop the command before it runs. */
  if (df->n > 0 && builder_policy (b)->seccomp.enabled && diags->n_errors == errors_before
      && builder_consistent (b))
    return 1;
  if (resolve (df, b, diags, true) == 0)
    builder_check (b, df->top);
  return 0;
}

bool
securer_policy_seccomp_pending (const struct securer_policy *p)
{
  return p != NULL && p->deferred != NULL;
}

size_t
securer_policy_pending_words (const struct securer_policy *p,
                              void (*fn) (void *ctx, size_t line, const char *word, bool quoted), void *ctx)
{
  if (p == NULL || p->deferred == NULL)
    return 0;
  const struct securer_policy_deferred *df = p->deferred;
  for (size_t k = 0; k < df->n; k++)
    for (size_t i = 0; i < df->lines[k].ln.n; i++)
      fn (ctx, k, df->lines[k].ln.tok[i].text, df->lines[k].ln.tok[i].quoted);
  return df->n;
}

int
securer_policy_complete (struct securer_policy *p, struct securer_diags *diags, securer_err_t *err)
{
  if (p == NULL || p->deferred == NULL)
    return 0;
  struct securer_policy_deferred *df = p->deferred;
  p->deferred = NULL;
  struct securer_diags local = { NULL, 0, 0 };
  struct securer_diags *d = diags ? diags : &local;
  size_t n_before = d->n, errors_before = d->n_errors;
  builder_attach (df->b, p, d);
  resolve (df, df->b, d, false);
  /* The builder frees the policy it points at. */
  builder_attach (df->b, NULL, NULL);
  policy_deferred_free (df);
  int rc = 0;
  if (d->n_errors > errors_before)
    {
      struct securer_diags view = { d->items + n_before, d->n - n_before, 0 };
      rc = diag_to_error (&view, err);
    }
  securer_diags_free (&local);
  return rc;
}
