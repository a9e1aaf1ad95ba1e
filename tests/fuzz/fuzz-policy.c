/* libFuzzer target: any bytes given to the policy loader (text or JSON)
 * must produce a policy or diagnostics, never a crash, a leak or undefined
 * behaviour; the same bytes read as an expectation file must give
 * expectations or diagnostics, and its path, exec and env expectations
 * are checked against a fixed policy (linux/view.c).  Loaded with the
 * seccomp rules resolved afterwards, the bytes must give the same policy
 * and diagnostics as a full load.  Includes are
 * answered "not found" without touching the disk, so runs are
 * reproducible. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/view.h"
#include "policy/expect.h"
#include "policy/internal.h"
#include "securer/policy.h"

static int
no_files (const char *path, char **buf, size_t *len, securer_err_t *err)
{
  (void) buf;
  (void) len;
  return securer_error_set (err, ENOENT, "open %s", path);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Every diagnostic, formatted, one after the other. */
static char *
diags_joined (const struct securer_diags *d)
{
  char *all = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&all, &len);
  if (f == NULL)
    abort ();
  for (size_t i = 0; i < d->n; i++)
    {
      char *s = securer_diag_format (&d->items[i]);
      fprintf (f, "%s\n", s ? s : "");
      free (s);
    }
  fprintf (f, "%zu errors\n", d->n_errors);
  fclose (f);
  return all;
}

/* The same bytes loaded with the seccomp rules resolved afterwards must
 * give the same policy (as JSON) and the same diagnostics; json is the
 * full load's, NULL when it failed. */
static void
check_deferred (const uint8_t *data, size_t size, const char *json, const char *diags)
{
  struct securer_diags d = { NULL, 0, 0 };
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  int r = securer_policy_load_string_opts ("/fuzz/input.policy", (const char *) data, size,
                                           SECURER_POLICY_DEFER_SECCOMP, &p, &d, &err);
  if (r == 0)
    r = securer_policy_complete (p, &d, &err);
  char *j = r == 0 ? securer_policy_to_json_text (p, 0) : NULL;
  char *all = diags_joined (&d);
  /* Out of memory is the one difference allowed. */
  if ((r == 0) != (json != NULL) || (j != NULL && strcmp (j, json) != 0) || strcmp (all, diags) != 0)
    if (securer_error_errno (err) != ENOMEM)
      abort ();
  free (all);
  free (j);
  securer_policy_free (p);
  securer_diags_free (&d);
  securer_error_free (&err);
}

/* What `path`, `exec` and `env` lines are checked against: every kind of
 * mount, symlinks (a loop among them), masks and an exec list. */
static const char view_policy[] = "namespaces all\nnetwork none\nlandlock required\nseccomp off\n"
                                  "mount ro /usr\nmount tmpfs /usr/local exec\nmount ro /opt/a\n"
                                  "mount tmpfs /opt\nmount rw /srv/data\nmount dir /empty\n"
                                  "mount symlink /bin -> usr/bin\nmount symlink /abs -> /usr/lib\n"
                                  "mount symlink /l1 -> l2\nmount symlink /l2 -> ../l1\n"
                                  "mount proc /proc\nmount dev /dev\nmount tmpfs /tmp\n"
                                  "mask /proc/kcore /usr/secret /nowhere\nexec /bin/sh /usr/libexec\n"
                                  "env keep TERM\nenv set HOME=/tmp\n";
static struct securer_policy *viewed;

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static int init;
  if (!init)
    {
      policy_set_reader (no_files);
      securer_err_t verr = NULL;
      if (securer_policy_load_string ("/fuzz/view.policy", view_policy, sizeof view_policy - 1, &viewed, NULL,
                                      &verr)
          < 0)
        abort ();
      init = 1;
    }
  /* The same bytes as an expectation file (`securer policy test`). */
  struct securer_expectations ex;
  struct securer_diags ediags = { NULL, 0, 0 };
  securer_expect_parse ("/fuzz/input.expect", (const char *) data, size, &ex, &ediags);
  for (size_t i = 0; i < ex.n; i++)
    {
      const struct securer_expectation *x = &ex.items[i];
      if (x->kind != SECURER_EXPECT_PATH && x->kind != SECURER_EXPECT_EXEC && x->kind != SECURER_EXPECT_ENV)
        continue;
      char *actual = NULL, *why = NULL;
      securer_err_t verr = NULL;
      /* Every well-formed line gets an answer: only memory can fail. */
      if (securer_expect_check_view (x, viewed, &actual, &why, &verr) < 0 && securer_error_errno (verr) != ENOMEM)
        abort ();
      free (actual);
      free (why);
      securer_error_free (&verr);
    }
  for (size_t i = 0; i < ediags.n; i++)
    free (securer_diag_format (&ediags.items[i]));
  securer_expectations_clear (&ex);
  securer_diags_free (&ediags);

  struct securer_diags diags = { NULL, 0, 0 };
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  char *full_json = NULL;
  bool loaded = false;
  if (securer_policy_load_string ("/fuzz/input.policy", (const char *) data, size, &p, &diags, &err) == 0)
    {
      loaded = true;
      full_json = securer_policy_to_json_text (p, 0);
      /* Whatever loads must print, and its JSON must load back to the
       * same JSON. */
      char *text = securer_policy_to_text (p);
      char *json = securer_policy_to_json_text (p, 0);
      if (json != NULL)
        {
          struct securer_policy *q = NULL;
          securer_err_t jerr = NULL;
          if (securer_policy_from_json_text ("/fuzz/input.json", json, strlen (json), &q, &jerr) < 0)
            abort ();
          char *json2 = securer_policy_to_json_text (q, 0);
          if (json2 == NULL || strcmp (json, json2) != 0)
            abort ();
          free (json2);
          securer_policy_free (q);
        }
      free (text);
      free (json);
      securer_policy_free (p);
    }
  char *full_diags = diags_joined (&diags);
  if (loaded == (full_json != NULL))
    check_deferred (data, size, full_json, full_diags);
  free (full_diags);
  free (full_json);
  securer_diags_free (&diags);
  securer_error_free (&err);
  return 0;
}
