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
      uint64_t dropped_lines, uint64_t dropped_bytes, uint64_t dropped_plots)
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
  json_object_set_new (o, "plots", json_array ());
  json_object_set_new (o, "plots_dropped", json_integer ((json_int_t) dropped_plots));
  if (r->network_denied != NULL)
    json_object_set_new (o, "network_denied", json_deep_copy (r->network_denied));
  return o;
}

/* Appends x (stolen; NULL is a failure) to arr when the object, *size
 * bytes so far, stays within max_bytes with it. */
static bool
append_fitting (json_t *arr, json_t *x, size_t *size, size_t max_bytes)
{
  size_t add = x ? dumped_size (x) + (json_array_size (arr) > 0) : SIZE_MAX;
  if (x == NULL || *size + add > max_bytes)
    {
      json_decref (x);
      return false;
    }
  json_array_append_new (arr, x);
  *size += add;
  return true;
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
  uint64_t all_plots = r->plots_dropped + r->n_plots;
  json_t *o = base (r, st, error, all_lines, all_bytes, all_plots);
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
      o = base (r, st, too_large, all_lines, all_bytes, all_plots);
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
      if (!append_fitting (lines, x, &size, max_bytes))
        break;
      kept_bytes += strlen (l->text);
    }
  /* The counts were reserved as if every line were dropped: now the real
   * ones (never longer). */
  uint64_t dropped_lines = r->output_dropped_lines + (r->n_output - kept);
  json_object_set_new (o, "output_truncated", json_boolean (r->output_truncated || kept < r->n_output));
  json_object_set_new (o, "output_dropped_lines", json_integer ((json_int_t) dropped_lines));
  json_object_set_new (o, "output_dropped_bytes", json_integer ((json_int_t) (all_bytes - kept_bytes)));
  /* Pages after the text: what the code printed matters more to whoever
   * reads the reply than an image does.  A page that does not fit is
   * left out with those after it, and counted. */
  json_t *plots = json_object_get (o, "plots");
  size_t kept_plots = 0;
  for (; kept_plots < r->n_plots; kept_plots++)
    {
      const struct securer_plot *pl = &r->plots[kept_plots];
      json_t *x = json_pack ("{s:s, s:I, s:I, s:I, s:s}", "format", securer_plot_format_name (pl->format),
                             "width", (json_int_t) pl->width, "height", (json_int_t) pl->height, "bytes",
                             (json_int_t) pl->bytes, "data", pl->data);
      if (!append_fitting (plots, x, &size, max_bytes))
        break;
    }
  json_object_set_new (o, "plots_dropped",
                       json_integer ((json_int_t) (r->plots_dropped + (r->n_plots - kept_plots))));
  return o;
}
