/* An execution's result as one JSON object of bounded size, shared by
 * `securer exec --json` and `securer serve`, so that neither can be made
 * to build or send a reply larger than its limit whatever R printed or
 * returned. */
#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "session/internal.h"

#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION (17))

static size_t
dumped_size (const json_t *o)
{
  return json_dumpb (o, NULL, 0, DUMP_FLAGS);
}

static json_t *
base (const struct securer_result *r, enum securer_exec_status st, const char *error,
      uint64_t dropped_lines, uint64_t dropped_bytes)
{
  json_t *o = json_object ();
  json_object_set_new (o, "status", json_string (securer_exec_status_name (st)));
  if (st != SECURER_EXEC_OK)
    json_object_set_new (o, "error", json_string (error ? error : ""));
  if (st == SECURER_EXEC_ERROR && r->error_call != NULL)
    json_object_set_new (o, "error_call", json_string (r->error_call));
  json_object_set_new (o, "output", json_array ());
  json_object_set_new (o, "output_truncated", json_false ());  /* the longer of the two */
  json_object_set_new (o, "output_dropped_lines", json_integer ((json_int_t) dropped_lines));
  json_object_set_new (o, "output_dropped_bytes", json_integer ((json_int_t) dropped_bytes));
  json_t *w = json_array ();
  for (size_t i = 0; i < r->n_warnings; i++)
    json_array_append_new (w, json_string (r->warnings[i]));
  json_object_set_new (o, "warnings", w);
  json_object_set_new (o, "tool_calls", json_integer (r->tool_calls));
  json_object_set_new (o, "processes_ended", json_integer (r->processes_ended));
  json_object_set_new (o, "elapsed", json_real (r->elapsed));
  if (r->network_denied != NULL)
    json_object_set_new (o, "network_denied", json_deep_copy (r->network_denied));
  return o;
}

json_t *
securer_result_json (const struct securer_result *r, const char *line_key, bool plain,
                     size_t max_bytes)
{
  json_t *value = NULL;
  const char *error = r->error;
  enum securer_exec_status st = r->status;
  char too_large[160];
  snprintf (too_large, sizeof too_large, "the result does not fit in a reply of %zu bytes",
            max_bytes);
  if (st == SECURER_EXEC_OK)
    {
      securer_err_t e = NULL;
      if (plain)
        value = securer_value_to_plain_max (r->value, max_bytes, &e);
      else
        value = r->value ? json_incref (r->value) : json_null ();
      securer_error_free (&e);
      if (value == NULL)
        {
          st = SECURER_EXEC_TOO_LARGE;
          error = too_large;
        }
    }
  /* The dropped counts only grow as lines are left out, so their final
   * digits are reserved up front: the size check below stays exact. */
  uint64_t all_lines = r->output_dropped_lines + r->n_output;
  uint64_t all_bytes = r->output_dropped_bytes;
  for (size_t i = 0; i < r->n_output; i++)
    all_bytes += strlen (r->output[i].text);
  json_t *o = base (r, st, error, all_lines, all_bytes);
  if (value != NULL)
    {
      json_object_set_new (o, "value", value);
      json_object_set_new (o, "visible", json_boolean (r->visible));
    }
  size_t size = dumped_size (o);
  if (size > max_bytes && value != NULL)
    {
      json_decref (o);
      st = SECURER_EXEC_TOO_LARGE;
      o = base (r, st, too_large, all_lines, all_bytes);
      size = dumped_size (o);
    }
  json_t *lines = json_object_get (o, "output");
  size_t kept = 0;
  uint64_t kept_bytes = 0;
  for (; kept < r->n_output; kept++)
    {
      const struct securer_output_line *l = &r->output[kept];
      json_t *x = json_pack ("{s:s, s:s}", "stream", l->stream == SECURER_STDERR ? "stderr" : "stdout",
                             line_key, l->text);
      size_t add = x ? dumped_size (x) + (kept > 0) : SIZE_MAX;
      if (x == NULL || size + add > max_bytes)
        {
          json_decref (x);
          break;
        }
      json_array_append_new (lines, x);
      size += add;
      kept_bytes += strlen (l->text);
    }
  /* The counts were reserved as if every line were dropped: now the real
   * ones (never longer). */
  uint64_t dropped_lines = r->output_dropped_lines + (r->n_output - kept);
  json_object_set_new (o, "output_truncated", json_boolean (r->output_truncated || kept < r->n_output));
  json_object_set_new (o, "output_dropped_lines", json_integer ((json_int_t) dropped_lines));
  json_object_set_new (o, "output_dropped_bytes", json_integer ((json_int_t) (all_bytes - kept_bytes)));
  return o;
}
