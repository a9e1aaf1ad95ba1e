/* libFuzzer target: whatever bytes R writes on the session channel, the
 * host's framing, message decoder and value validator must refuse or
 * accept them without a crash, a leak or undefined behaviour, and what
 * they accept must be safe to use the way the host uses it: tool
 * arguments checked against a registry and converted to plain JSON for a
 * tool command, results converted to plain JSON for a client.  A value
 * converted to plain JSON and back must again be a valid tagged value. */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz-lines.h"
#include "session/internal.h"

/* Small, so that the fuzzer also meets lines that are too long. */
#define FUZZ_MAX_MESSAGE 4096

static struct securer_tools *tools;

static void
build_tools (void)
{
  static const struct securer_tool_arg search_args[] = {
    { "query", SECURER_ARG_CHARACTER }, { "n", SECURER_ARG_INTEGER },
  };
  static const struct securer_tool_arg calc_args[] = {
    { "x", SECURER_ARG_NUMERIC }, { "flag", SECURER_ARG_LOGICAL },
    { "rows", SECURER_ARG_DATA_FRAME }, { "items", SECURER_ARG_LIST },
    { "anything", SECURER_ARG_ANY },
  };
  tools = securer_tools_new ();
  if (tools == NULL
      || securer_tools_add (tools, "search", NULL, search_args, 2, NULL, NULL, NULL) < 0
      || securer_tools_add (tools, "calc", NULL, calc_args, 5, NULL, NULL, NULL) < 0)
    abort ();
}

static void
use_value (const json_t *v)
{
  /* Bounded as the host converts what came from the sandbox: a small
   * tagged value can have a huge plain form (a factor's label repeated for
   * every element), and refusing it is the answer. */
  securer_err_t err = NULL;
  json_t *plain = securer_value_to_plain_max (v, 1 << 20, &err);
  if (plain == NULL)
    {
      if (securer_error_errno (err) != E2BIG)
        abort ();
      securer_error_free (&err);
      return;
    }
  free (json_dumps (plain, JSON_COMPACT | JSON_REAL_PRECISION (17) | JSON_ENCODE_ANY));
  json_t *back = securer_value_from_plain (plain, &err);
  if (back != NULL && securer_value_validate (back, &err) < 0)
    abort ();
  free (securer_proto_tool_result (1, back, NULL));
  json_decref (back);
  json_decref (plain);
  securer_error_free (&err);
}

static void
on_line (const char *line, size_t len)
{
  struct proto_msg m;
  securer_err_t err = NULL;
  if (securer_proto_parse (line, len, &m, &err) < 0)
    {
      securer_error_free (&err);
      return;
    }
  if (m.type == PROTO_TOOL_CALL)
    {
      const struct tool_def *d = securer_tools_find (tools, m.tool);
      if (d != NULL && securer_tool_check_args (d, m.args, &err) == 0)
        {
          const char *key;
          json_t *v;
          json_object_foreach (m.args, key, v)
            use_value (v);
        }
    }
  else if (m.type == PROTO_RESULT)
    use_value (m.value);
  securer_error_free (&err);
  securer_proto_msg_clear (&m);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (tools == NULL)
    build_tools ();
  fuzz_feed_lines (data, size, FUZZ_MAX_MESSAGE, on_line);
  return 0;
}
