/* The part of `securer serve` requests decoded without a server
 * (src/cli/serve_request.c). */
#include <config.h>

#include <criterion/criterion.h>
#include <string.h>

#include "serve_request.h"

static void
expect_refused (const char *line, const char *message, bool has_id)
{
  struct serve_request r;
  securer_err_t err = NULL;
  cr_assert_eq (serve_request_parse (line, strlen (line), &r, &err), -1, "accepted %s", line);
  cr_assert (strstr (securer_error_message (err), message) != NULL, "%s: %s", line,
             securer_error_message (err));
  cr_assert_eq (r.id != NULL, has_id, "%s", line);
  securer_error_free (&err);
  serve_request_clear (&r);
}

Test (serve_request, envelope)
{
  struct serve_request r;
  securer_err_t err = NULL;
  const char *ok = "{\"op\":\"status\",\"id\":[1],\"session\":\"s\"}";
  cr_assert_eq (serve_request_parse (ok, strlen (ok), &r, &err), 0);
  cr_assert_str_eq (r.op, "status");
  cr_assert (json_is_array (r.id));
  serve_request_clear (&r);
  expect_refused ("{\"op\":", "malformed request: ", false);
  expect_refused ("[\"op\"]", "malformed request: ", false);
  expect_refused ("{\"op\":\"a\",\"op\":\"b\"}", "malformed request: duplicate", false);
  expect_refused ("{\"id\":7,\"op\":3}", "request needs an \"op\" string", true);
}

Test (serve_request, tools)
{
  securer_err_t err = NULL;
  json_t *good = json_loads ("[{\"name\":\"add\",\"args\":{\"a\":\"numeric\",\"b\":\"data.frame\"}}]", 0, NULL);
  struct securer_tools *t = serve_tools_from_json (good, &err);
  cr_assert_not_null (t, "%s", securer_error_message (err));
  cr_assert_eq (securer_tools_count (t), 1);
  securer_tools_unref (t);
  json_decref (good);
  const char *bad[] = { "{}", "[{\"name\":\"if\"}]", "[{\"name\":\"f\",\"args\":[]}]",
                        "[{\"name\":\"f\",\"args\":{\"a\":\"complex\"}}]", NULL };
  for (const char **b = bad; *b; b++)
    {
      json_t *j = json_loads (*b, 0, NULL);
      cr_assert_null (serve_tools_from_json (j, &err), "accepted %s", *b);
      cr_assert_not_null (err);
      securer_error_free (&err);
      json_decref (j);
    }
}

/* A timeout too long for a 64-bit count of milliseconds converted out of
 * range, which is undefined behaviour (found by tests/fuzz/fuzz-serve). */
Test (serve_request, timeout)
{
  struct { const char *json; uint64_t ms; } cases[] = {
    { "2.5", 2500 }, { "1", 1000 }, { "0", 0 }, { "-3", 0 }, { "\"10\"", 0 }, { "null", UINT64_MAX },
    { "1e16", 10000000000000000000u }, { "1e300", UINT64_MAX }, { "1.7e308", UINT64_MAX },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      json_t *j = json_loads (cases[i].json, JSON_DECODE_ANY, NULL);
      cr_assert_eq (serve_timeout_ms (j), cases[i].ms, "%s", cases[i].json);
      json_decref (j);
    }
  cr_assert_eq (serve_timeout_ms (NULL), 0);
}

/* "sandbox": absent or true is the sandbox; false is the unsandboxed
 * mode, which takes no policy; anything else is refused. */
Test (serve_request, sandbox_flag)
{
  struct { const char *req; int rc; bool sandboxed; const char *message; } cases[] = {
    { "{}", 0, true, NULL },
    { "{\"sandbox\":true,\"policy\":\"r\"}", 0, true, NULL },
    { "{\"sandbox\":false}", 0, false, NULL },
    { "{\"sandbox\":false,\"policy\":null,\"limits\":{\"cpu\":1}}", 0, false, NULL },
    { "{\"sandbox\":false,\"policy\":\"r\"}", -1, true, "takes no \"policy\"" },
    { "{\"sandbox\":0}", -1, true, "must be true or false" },
    { "{\"sandbox\":\"false\"}", -1, true, "must be true or false" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      json_t *req = json_loads (cases[i].req, 0, NULL);
      cr_assert_not_null (req);
      securer_err_t err = NULL;
      bool sandboxed = !cases[i].sandboxed;
      cr_assert_eq (serve_sandbox_flag (req, &sandboxed, &err), cases[i].rc, "%s", cases[i].req);
      if (cases[i].rc == 0)
        cr_assert_eq (sandboxed, cases[i].sandboxed, "%s", cases[i].req);
      else
        cr_assert (strstr (securer_error_message (err), cases[i].message) != NULL, "%s: %s", cases[i].req,
                   securer_error_message (err));
      securer_error_free (&err);
      json_decref (req);
    }
}

static int
plots_of (const char *text, struct securer_exec_opts *xo, securer_err_t *err)
{
  json_t *j = text ? json_loads (text, JSON_DECODE_ANY, NULL) : NULL;
  memset (xo, 0, sizeof *xo);
  int rc = serve_plots_parse (j, xo, err);
  json_decref (j);
  return rc;
}

Test (serve_request, plots)
{
  struct securer_exec_opts xo;
  securer_err_t err = NULL;
  /* Absent or true: PNG of the session's defaults (zeros). */
  cr_assert_eq (plots_of (NULL, &xo, &err), 0);
  cr_assert_eq (xo.plot_format, SECURER_PLOT_PNG);
  cr_assert_eq (plots_of ("true", &xo, &err), 0);
  cr_assert_eq (xo.plot_width, 0);
  cr_assert_eq (plots_of ("false", &xo, &err), 0);
  cr_assert_eq (xo.plot_format, SECURER_PLOT_NONE);
  cr_assert_eq (plots_of ("{\"format\":\"svg\",\"width\":640,\"height\":360,\"res\":144}", &xo, &err), 0);
  cr_assert_eq (xo.plot_format, SECURER_PLOT_SVG);
  cr_assert_eq (xo.plot_width, 640);
  cr_assert_eq (xo.plot_height, 360);
  cr_assert_eq (xo.plot_res, 144);
  static const struct {
    const char *req, *msg;
  } bad[] = {
    { "\"png\"", "must be true, false or an object" },
    { "{\"format\":\"pdf\"}", "\"format\" must be" },
    { "{\"width\":0}", "\"width\" must be a whole number 1..10000" },
    { "{\"height\":10001}", "\"height\" must be a whole number 1..10000" },
    { "{\"res\":1.5}", "\"res\" must be a whole number" },
    { "{\"dpi\":72}", "unknown key 'dpi'" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      cr_assert_eq (plots_of (bad[i].req, &xo, &err), -1, "accepted %s", bad[i].req);
      cr_assert (strstr (securer_error_message (err), bad[i].msg) != NULL, "%s: %s", bad[i].req,
                 securer_error_message (err));
      securer_error_free (&err);
    }
}
