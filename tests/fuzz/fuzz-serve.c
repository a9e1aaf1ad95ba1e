/* libFuzzer target: whatever a client of `securer serve` sends, the
 * request decoding that needs no session (src/cli/serve_request.c) must
 * answer or accept it without a crash, a leak or undefined behaviour; tool
 * declarations it accepts must make a valid hello for R, and a plain tool
 * result it converts must be a valid tagged value. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-lines.h"
#include "serve_request.h"
#include "session/internal.h"

/* Small, so that the fuzzer also meets lines that are too long. */
#define FUZZ_MAX_MESSAGE 4096

static void
on_line (const char *line, size_t len)
{
  struct serve_request r;
  securer_err_t err = NULL;
  if (serve_request_parse (line, len, &r, &err) == 0)
    {
      if (strcmp (r.op, "open") == 0 || strcmp (r.op, "pool_open") == 0)
        {
          struct securer_tools *t = serve_tools_from_json (json_object_get (r.req, "tools"), &err);
          if (t != NULL)
            {
              char *hello = securer_proto_hello (t, FUZZ_MAX_MESSAGE, 1);
              if (hello == NULL)
                abort ();
              free (hello);
              securer_tools_unref (t);
            }
        }
      else if (strcmp (r.op, "execute") == 0)
        {
          serve_timeout_ms (json_object_get (r.req, "timeout"));
          struct securer_exec_opts xo = { 0 };
          if (serve_plots_parse (json_object_get (r.req, "plots"), &xo, &err) == 0
              && (xo.plot_width > 10000 || xo.plot_height > 10000 || xo.plot_res > 10000))
            abort ();
        }
      else if (strcmp (r.op, "tool_result") == 0)
        {
          json_t *tagged = securer_value_from_plain (json_object_get (r.req, "value"), &err);
          if (tagged != NULL && securer_value_validate (tagged, &err) < 0)
            abort ();
          json_decref (tagged);
        }
    }
  securer_error_free (&err);
  serve_request_clear (&r);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_feed_lines (data, size, FUZZ_MAX_MESSAGE, on_line);
  return 0;
}
