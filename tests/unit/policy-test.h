/* Helpers shared by the policy tests. */
#ifndef POLICY_TEST_H
#define POLICY_TEST_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "securer/policy.h"

/* Absolute path of a file in the source tree. */
static inline char *
src_path (const char *rel)
{
  const char *top = getenv ("SECURER_SRCDIR");
  cr_assert_not_null (top, "SECURER_SRCDIR must be set (run through make check)");
  char *p = NULL;
  cr_assert_geq (asprintf (&p, "%s/%s", top, rel), 0);
  return p;
}

/* All diagnostics, formatted, one per line. */
static inline char *
diags_text (const struct securer_diags *d)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  for (size_t i = 0; i < d->n; i++)
    {
      char *s = securer_diag_format (&d->items[i]);
      fprintf (f, "%s\n", s);
      free (s);
    }
  fclose (f);
  return buf;
}

/* Loads text under `name`; returns the policy (NULL on error) and the
 * diagnostics in *diag_out. */
static inline struct securer_policy *
load_text (const char *name, const char *text, char **diag_out)
{
  struct securer_diags d = { NULL, 0, 0 };
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  int r = securer_policy_load_string (name, text, strlen (text), &p, &d, &err);
  if (r < 0)
    {
      cr_assert_null (p);
      cr_assert_not_null (err);
    }
  else
    cr_assert_not_null (p);
  *diag_out = diags_text (&d);
  securer_diags_free (&d);
  securer_error_free (&err);
  return p;
}

static inline struct securer_policy *
load_path (const char *path, char **diag_out)
{
  struct securer_diags d = { NULL, 0, 0 };
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  securer_policy_load_file (path, &p, &d, &err);
  *diag_out = diags_text (&d);
  securer_diags_free (&d);
  securer_error_free (&err);
  return p;
}

#endif
