/* Decoding of `securer serve` requests that needs no server state. */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "serve_request.h"

int
serve_request_parse (const char *line, size_t len, struct serve_request *r, securer_err_t *err)
{
  memset (r, 0, sizeof *r);
  json_error_t je;
  json_t *req = json_loadb (line, len, JSON_REJECT_DUPLICATES, &je);
  if (!json_is_object (req))
    {
      json_decref (req);
      return securer_error_set (err, 0, "malformed request: %s", je.text);
    }
  r->req = req;
  r->id = json_object_get (req, "id");
  r->op = json_string_value (json_object_get (req, "op"));
  if (r->op == NULL)
    return securer_error_set (err, 0, "request needs an \"op\" string");
  return 0;
}

void
serve_request_clear (struct serve_request *r)
{
  json_decref (r->req);
  memset (r, 0, sizeof *r);
}

struct securer_tools *
serve_tools_from_json (const json_t *arr, securer_err_t *err)
{
  struct securer_tools *t = securer_tools_new ();
  if (t == NULL)
    {
      securer_error_set (err, ENOMEM, "tools");
      return NULL;
    }
  if (arr == NULL || json_is_null (arr))
    return t;
  if (!json_is_array (arr))
    {
      securer_tools_unref (t);
      securer_error_set (err, EINVAL, "\"tools\" must be an array");
      return NULL;
    }
  size_t i;
  json_t *tj;
  json_array_foreach (arr, i, tj)
  {
    const char *name = json_string_value (json_object_get (tj, "name"));
    const char *desc = json_string_value (json_object_get (tj, "description"));
    json_t *args = json_object_get (tj, "args");
    struct securer_tool_arg a[64];
    size_t n = 0;
    if (args != NULL && !json_is_object (args))
      {
        securer_tools_unref (t);
        securer_error_set (err, EINVAL, "tool %zu: \"args\" must be an object of NAME: TYPE", i + 1);
        return NULL;
      }
    const char *k;
    json_t *v;
    json_object_foreach (args, k, v)
    {
      int ty = json_is_string (v) ? securer_arg_type_parse (json_string_value (v)) : -1;
      if (ty < 0 || n == 64)
        {
          securer_tools_unref (t);
          securer_error_set (err, EINVAL, "tool %zu: argument '%s' needs a type (numeric, integer, "
                                          "character, logical, list, data.frame, any)", i + 1, k);
          return NULL;
        }
      a[n].name = k;
      a[n].type = (enum securer_arg_type) ty;
      n++;
    }
    if (securer_tools_add (t, name ? name : "", desc, a, n, NULL, NULL, err) < 0)
      {
        securer_tools_unref (t);
        return NULL;
      }
  }
  return t;
}

uint64_t
serve_timeout_ms (const json_t *timeout)
{
  if (json_is_null (timeout))
    return UINT64_MAX;
  double ms = json_number_value (timeout) * 1000.0;
  if (!(ms > 0))
    return 0;
  /* Converting a double beyond the range of uint64_t is undefined; such a
   * timeout (over 500 million years) is as good as none. */
  return ms < 18446744073709551616.0 ? (uint64_t) ms : UINT64_MAX;
}
