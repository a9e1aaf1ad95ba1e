/* libFuzzer target: any bytes given to the policy loader (text or JSON)
 * must produce a policy or diagnostics, never a crash, a leak or undefined
 * behaviour.  Includes are answered "not found" without touching the disk,
 * so runs are reproducible. */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static int init;
  if (!init)
    {
      policy_set_reader (no_files);
      init = 1;
    }
  /* The same bytes as an expectation file (`securer policy test`). */
  struct securer_expectations ex;
  struct securer_diags ediags = { NULL, 0, 0 };
  securer_expect_parse ("/fuzz/input.expect", (const char *) data, size, &ex, &ediags);
  for (size_t i = 0; i < ediags.n; i++)
    free (securer_diag_format (&ediags.items[i]));
  securer_expectations_clear (&ex);
  securer_diags_free (&ediags);

  struct securer_diags diags = { NULL, 0, 0 };
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  if (securer_policy_load_string ("/fuzz/input.policy", (const char *) data, size, &p, &diags, &err) == 0)
    {
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
  for (size_t i = 0; i < diags.n; i++)
    free (securer_diag_format (&diags.items[i]));
  securer_diags_free (&diags);
  securer_error_free (&err);
  return 0;
}
