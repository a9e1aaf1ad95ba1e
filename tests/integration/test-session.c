/* Sessions against a real sandboxed R: state, tools, limits, failures,
 * recovery, the audit log and exact value round trips. */
#include <config.h>

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "securer/session.h"
#include "host-util.h"
#include "ident.h"

/* ---- helpers ------------------------------------------------------------------ */

static int add_calls;

static enum securer_tool_status
tool_add (void *u, const struct securer_tool_call *c, json_t **result, char **error)
{
  add_calls++;
  double sum = 0;
  const char *key;
  json_t *v;
  json_object_foreach ((json_t *) c->args, key, v)
    sum += json_number_value (json_array_get (json_object_get (v, "v"), 0));
  *result = json_pack ("{s:s, s:[f]}", "t", "dbl", "v", sum);
  return SECURER_TOOL_OK;
}

static enum securer_tool_status
tool_echo (void *u, const struct securer_tool_call *c, json_t **result, char **error)
{
  *result = json_incref (json_object_get (c->args, "x"));
  return SECURER_TOOL_OK;
}

static enum securer_tool_status
tool_fail (void *u, const struct securer_tool_call *c, json_t **result, char **error)
{
  *error = strdup ("the database is on fire");
  return SECURER_TOOL_ERROR;
}

static enum securer_tool_status
tool_kill (void *u, const struct securer_tool_call *c, json_t **result, char **error)
{
  struct securer_session **sp = u;
  kill (securer_session_pid (*sp), SIGKILL);
  *result = json_null ();
  return SECURER_TOOL_OK;
}

static struct securer_session *current;

static struct securer_tools *
make_tools (void)
{
  struct securer_tools *t = securer_tools_new ();
  securer_err_t err = NULL;
  struct securer_tool_arg ab[] = { { "a", SECURER_ARG_NUMERIC }, { "b", SECURER_ARG_NUMERIC } };
  struct securer_tool_arg x[] = { { "x", SECURER_ARG_ANY } };
  cr_assert_eq (securer_tools_add (t, "add", "Add two numbers", ab, 2, tool_add, NULL, &err), 0);
  cr_assert_eq (securer_tools_add (t, "echo", "Return x", x, 1, tool_echo, NULL, &err), 0);
  cr_assert_eq (securer_tools_add (t, "fail", "Always fails", NULL, 0, tool_fail, NULL, &err), 0);
  cr_assert_eq (securer_tools_add (t, "die", "Kills R", NULL, 0, tool_kill, &current, &err), 0);
  return t;
}

static struct securer_session *
open_session (const char *audit)
{
  struct securer_tools *t = make_tools ();
  struct securer_session_opts o = { .tools = t, .audit_log = audit };
  securer_err_t err = NULL;
  struct securer_session *s = NULL;
  int rc = securer_session_open (&o, &s, &err);
  cr_assert_eq (rc, 0, "open: %s", err ? securer_error_message (err) : "");
  securer_tools_unref (t);
  current = s;
  return s;
}

/* Runs code, expects success, returns the value as compact JSON. */
static char *
run_ok (struct securer_session *s, const char *code)
{
  struct securer_result r;
  securer_err_t err = NULL;
  int rc = securer_session_execute (s, code, NULL, &r, &err);
  cr_assert_eq (rc, 0, "%.60s: %s", code, r.error ? r.error : "");
  cr_assert_eq (r.status, SECURER_EXEC_OK);
  char *j = json_dumps (r.value, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION (17));
  securer_result_clear (&r);
  return j;
}

static void
expect_value (struct securer_session *s, const char *code, const char *json)
{
  char *j = run_ok (s, code);
  cr_assert_str_eq (j, json, "%s: got %s", code, j);
  free (j);
}

static void
expect_fail (struct securer_session *s, const char *code, enum securer_exec_status st,
             const char *fragment)
{
  struct securer_result r;
  securer_err_t err = NULL;
  struct securer_exec_opts xo = { .timeout_ms = 20000 };
  cr_assert_eq (securer_session_execute (s, code, &xo, &r, &err), -1, "%s succeeded", code);
  cr_assert_eq (r.status, st, "%s: status %s (%s)", code, securer_exec_status_name (r.status),
                r.error ? r.error : "");
  cr_assert (r.error && strstr (r.error, fragment), "%s: error '%s' lacks '%s'", code,
             r.error ? r.error : "", fragment);
  cr_assert (strstr (securer_error_message (err), r.error) != NULL);
  securer_error_free (&err);
  securer_result_clear (&r);
}

/* ---- state and tools ------------------------------------------------------------ */

Test (session, state_persists_across_executions)
{
  struct securer_session *s = open_session (NULL);
  expect_value (s, "x <- add(10, 20)", "{\"t\":\"dbl\",\"v\":[30]}");
  expect_value (s, "x * 2", "{\"t\":\"dbl\",\"v\":[60]}");
  cr_assert_eq (securer_session_executions (s), 2);
  securer_session_close (s);
}

Test (session, tool_in_a_loop_pauses_and_resumes)
{
  struct securer_session *s = open_session (NULL);
  add_calls = 0;
  struct securer_result r;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_execute (s, "s <- 0; for (i in 1:25) s <- add(s, i); s", NULL, &r, &err), 0);
  cr_assert_eq (json_number_value (json_array_get (json_object_get (r.value, "v"), 0)), 325.0);
  cr_assert_eq (r.tool_calls, 25);
  cr_assert_eq (add_calls, 25);
  securer_result_clear (&r);
  securer_session_close (s);
}

Test (session, wrong_argument_types_are_refused_on_both_sides)
{
  struct securer_session *s = open_session (NULL);
  add_calls = 0;
  /* The generated R wrapper checks first ... */
  expect_fail (s, "add('a', 1)", SECURER_EXEC_ERROR, "argument 'a' must be numeric, got character");
  /* ... and the host checks again when the wrapper is bypassed. */
  expect_fail (s, ".securer_call_tool('add', a = 'a', b = 1)", SECURER_EXEC_ERROR,
               "argument 'a' must be numeric, got chr");
  expect_fail (s, ".securer_call_tool('add', a = 1, c = 1)", SECURER_EXEC_ERROR,
               "unexpected argument 'c'");
  cr_assert_eq (add_calls, 0, "the host tool must never run with bad arguments");
  securer_session_close (s);
}

Test (session, unknown_tools_and_tool_errors_come_back_as_errors)
{
  struct securer_session *s = open_session (NULL);
  expect_fail (s, ".securer_call_tool('nonexistent_tool')", SECURER_EXEC_ERROR,
               "Unknown tool: nonexistent_tool");
  expect_fail (s, "fail()", SECURER_EXEC_ERROR, "the database is on fire");
  /* A tool error is an ordinary R condition: the code can handle it. */
  expect_value (s, "tryCatch(fail(), error = function(e) conditionMessage(e))",
                "{\"t\":\"chr\",\"v\":[\"the database is on fire\"]}");
  expect_fail (s, "stop('something went wrong')", SECURER_EXEC_ERROR, "something went wrong");
  securer_session_close (s);
}

Test (session, syntax_errors_run_nothing)
{
  struct securer_session *s = open_session (NULL);
  expect_fail (s, "y <- 5\nif (TRUE {", SECURER_EXEC_SYNTAX, "unexpected");
  expect_value (s, "exists('y')", "{\"t\":\"lgl\",\"v\":[false]}");
  char **w = NULL;
  size_t nw = 0;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_validate (s, "system('ls'); x <- 'system(1)'; base::dyn.load('x')", &w, &nw, &err), 0);
  cr_assert_eq (nw, 2, "system and dyn.load, not the string");
  cr_assert (strstr (w[0], "system()") || strstr (w[1], "system()"));
  for (size_t i = 0; i < nw; i++)
    free (w[i]);
  free (w);
  cr_assert_eq (securer_session_validate (s, "f(", NULL, NULL, &err), -1);
  securer_error_free (&err);
  /* validate never evaluates */
  cr_assert_eq (securer_session_validate (s, "z <- 1", NULL, NULL, &err), 0);
  expect_value (s, "exists('z')", "{\"t\":\"lgl\",\"v\":[false]}");
  securer_session_close (s);
}

Test (session, runtime_bindings_cannot_be_rebound)
{
  struct securer_session *s = open_session (NULL);
  expect_fail (s, "add <- function(a, b) 0", SECURER_EXEC_ERROR, "locked binding");
  expect_fail (s, ".securer_call_tool <- function(...) 0", SECURER_EXEC_ERROR, "locked binding");
  /* Removing the global copy leaves the tool on the search path. */
  expect_value (s, "suppressWarnings(rm(add)); add(1, 2)", "{\"t\":\"dbl\",\"v\":[3]}");
  securer_session_close (s);
}

/* ---- limits and hostile behaviour --------------------------------------------------- */

Test (session, timeout_kills_and_the_session_stays_usable)
{
  struct securer_session *s = open_session (NULL);
  free (run_ok (s, "x <- 1"));
  struct proc_ident before = proc_ident_of (securer_session_pid (s));
  struct securer_result r;
  securer_err_t err = NULL;
  struct securer_exec_opts xo = { .timeout_ms = 300 };
  cr_assert_eq (securer_session_execute (s, "Sys.sleep(30)", &xo, &r, &err), -1);
  cr_assert_eq (r.status, SECURER_EXEC_TIMEOUT);
  cr_assert_eq (securer_error_errno (err), ETIMEDOUT);
  cr_assert (strstr (r.error, "timed out") != NULL);
  securer_error_free (&err);
  securer_result_clear (&r);
  cr_assert (securer_session_is_alive (s));
  cr_assert (!proc_ident_same (proc_ident_of (securer_session_pid (s)), before), "the timed-out R still serves");
  cr_assert (!proc_ident_exists (before), "the timed-out R must be gone");
  expect_value (s, "exists('x')", "{\"t\":\"lgl\",\"v\":[false]}");
  expect_value (s, "1 + 1", "{\"t\":\"dbl\",\"v\":[2]}");
  securer_session_close (s);
}

static int streamed;

static void
count_lines (void *u, enum securer_stream st, const char *line)
{
  streamed++;
}

Test (session, output_is_streamed_and_capped)
{
  struct securer_session *s = open_session (NULL);
  struct securer_result r;
  securer_err_t err = NULL;
  streamed = 0;
  struct securer_exec_opts xo = { .max_output_lines = 10, .on_output = count_lines };
  cr_assert_eq (securer_session_execute (s, "for (i in 1:5000) cat('line', i, '\\n'); message('done'); 42L",
                                         &xo, &r, &err), 0);
  cr_assert_eq (r.n_output, 10);
  cr_assert_eq (streamed, 10);
  cr_assert (r.output_truncated);
  cr_assert_str_eq (r.output[0].text, "line 1 ");
  cr_assert_eq (r.output[0].stream, SECURER_STDOUT);
  cr_assert_eq (json_integer_value (json_array_get (json_object_get (r.value, "v"), 0)), 42);
  securer_result_clear (&r);
  /* Unlimited: every line, both streams, partial last line included. */
  cr_assert_eq (securer_session_execute (s, "cat('a\\nb\\n'); message('err'); cat('tail')", NULL, &r, &err), 0);
  cr_assert_eq (r.n_output, 4);
  cr_assert_str_eq (r.output[2].text, "err");
  cr_assert_eq (r.output[2].stream, SECURER_STDERR);
  cr_assert_str_eq (r.output[3].text, "tail");
  securer_result_clear (&r);
  securer_session_close (s);
}

Test (session, tool_call_cap_halts_the_execution)
{
  struct securer_session *s = open_session (NULL);
  struct securer_result r;
  securer_err_t err = NULL;
  struct securer_exec_opts xo = { .max_tool_calls = 5 };
  /* Even when the code swallows the error, the execution fails. */
  cr_assert_eq (securer_session_execute (s, "for (i in 1:10) try(add(i, i), silent = TRUE); 'done'", &xo, &r, &err), -1);
  cr_assert_eq (r.status, SECURER_EXEC_TOOL_LIMIT);
  cr_assert_str_eq (r.error, "Maximum tool calls (5) exceeded");
  securer_error_free (&err);
  securer_result_clear (&r);
  expect_value (s, "add(1, 1)", "{\"t\":\"dbl\",\"v\":[2]}");
  securer_session_close (s);
}

Test (session, garbage_and_floods_on_the_channel_stop_r_and_recover)
{
  struct securer_session *s = open_session (NULL);
  free (run_ok (s, "kept <- 1"));
  expect_fail (s, "con <- file('stdin', 'w'); for (i in 1:100000) writeLines('garbage {', con); Sys.sleep(10)",
               SECURER_EXEC_CRASHED, "malformed JSON");
  /* A flood of well-formed tool calls R never waits for. */
  expect_fail (s, "con <- file('stdin', 'w'); for (i in 1:200000) writeLines('{\"type\":\"tool_call\",\"id\":0,\"tool\":\"add\",\"args\":{}}', con); Sys.sleep(10)",
               SECURER_EXEC_CRASHED, "protocol violation");
  cr_assert_not (securer_session_is_alive (s));
  /* The next execution starts a fresh R. */
  expect_value (s, "exists('kept')", "{\"t\":\"lgl\",\"v\":[false]}");
  securer_session_close (s);
}

Test (session, oversized_messages)
{
  struct securer_session *s = open_session (NULL);
  /* A legitimate but too large result is refused by the runtime itself:
   * R survives with its state. */
  expect_fail (s, "big <- 1:1e6; big", SECURER_EXEC_TOO_LARGE, "too large");
  expect_value (s, "length(big)", "{\"t\":\"int\",\"v\":[1000000]}");
  /* A raw line over 1 MiB is cut off while it is read: R is stopped. */
  expect_fail (s, "con <- file('stdin', 'w'); writeLines(strrep('x', 2 * 1024 * 1024), con); Sys.sleep(10)",
               SECURER_EXEC_CRASHED, "exceeds the limit of 1048576 bytes");
  expect_value (s, "exists('big')", "{\"t\":\"lgl\",\"v\":[false]}");
  securer_session_close (s);
}

Test (session, r_killed_during_a_tool_call)
{
  struct securer_session *s = open_session (NULL);
  free (run_ok (s, "kept <- 1"));
  struct securer_result r;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_execute (s, "die(); 'unreachable'", NULL, &r, &err), -1);
  cr_assert_eq (r.status, SECURER_EXEC_CRASHED, "%s", r.error);
  securer_error_free (&err);
  securer_result_clear (&r);
  cr_assert_not (securer_session_is_alive (s));
  expect_value (s, "exists('kept')", "{\"t\":\"lgl\",\"v\":[false]}");
  cr_assert (securer_session_is_alive (s));
  securer_session_close (s);
}

static bool
veto_system (void *u, const char *code)
{
  return strstr (code, "system(") == NULL;
}

Test (session, rejections_hook_length_and_execution_cap)
{
  struct securer_session_opts o = { .max_executions = 2, .pre_execute = veto_system,
                                    .sanitize_errors = true };
  securer_err_t err = NULL;
  struct securer_session *s = NULL;
  cr_assert_eq (securer_session_open (&o, &s, &err), 0);
  expect_fail (s, "system('id')", SECURER_EXEC_REJECTED, "pre_execute_hook");
  struct securer_result r;
  struct securer_exec_opts xo = { .max_code_length = 10 };
  cr_assert_eq (securer_session_execute (s, "x <- 'this is too long'", &xo, &r, &err), -1);
  cr_assert_eq (r.status, SECURER_EXEC_REJECTED);
  securer_error_free (&err);
  securer_result_clear (&r);
  expect_fail (s, "stop('cannot read /home/alice/.ssh/id_rsa from 10.1.2.3')", SECURER_EXEC_ERROR,
               "cannot read <path> from <ip>");
  free (run_ok (s, "1"));
  expect_fail (s, "2", SECURER_EXEC_REJECTED, "Maximum executions (2)");
  securer_session_close (s);
}

Test (session, restart_clears_state)
{
  struct securer_session *s = open_session (NULL);
  free (run_ok (s, "x <- 42"));
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_restart (s, &err), 0);
  expect_value (s, "exists('x')", "{\"t\":\"lgl\",\"v\":[false]}");
  cr_assert (securer_session_is_alive (s));
  securer_session_close (s);
}

/* ---- values ---------------------------------------------------------------------- */

Test (session, values_from_r_are_exact)
{
  struct securer_session *s = open_session (NULL);
  expect_value (s, "c(0.1 + 0.2, 1e-300, .Machine$double.xmax, NA, NaN, Inf, -Inf, -0)",
                "{\"t\":\"dbl\",\"v\":[0.30000000000000004,1e-300,"
                "1.7976931348623157e308,null,\"NaN\",\"Inf\",\"-Inf\",-0.0]}");
  expect_value (s, "c(NA_integer_, 7L)", "{\"t\":\"int\",\"v\":[null,7]}");
  expect_value (s, "c(NA_character_, 'a')", "{\"t\":\"chr\",\"v\":[null,\"a\"]}");
  expect_value (s, "NA", "{\"t\":\"lgl\",\"v\":[null]}");
  expect_value (s, "NULL", "null");
  expect_value (s, "list(a = 1L, b = list(NULL, 'x'))",
                "{\"t\":\"list\",\"v\":[{\"t\":\"int\",\"v\":[1]},{\"t\":\"list\",\"v\":[null,"
                "{\"t\":\"chr\",\"v\":[\"x\"]}]}],\"n\":[\"a\",\"b\"]}");
  expect_value (s, "data.frame(n = c(1.5, NA), s = c('u', NA), stringsAsFactors = FALSE)",
                "{\"t\":\"df\",\"n\":[\"n\",\"s\"],\"nrow\":2,\"v\":[{\"t\":\"dbl\",\"v\":[1.5,null]},"
                "{\"t\":\"chr\",\"v\":[\"u\",null]}]}");
  expect_value (s, "factor(c('b', 'a', NA))",
                "{\"t\":\"fct\",\"v\":[2,1,null],\"levels\":[\"a\",\"b\"]}");
  expect_value (s, "as.Date('2024-01-15')", "{\"t\":\"date\",\"v\":[19737]}");
  expect_value (s, "matrix(1:2, 1, dimnames = list('r', c('a', 'b')))",
                "{\"t\":\"int\",\"v\":[1,2],\"dim\":[1,2],\"attr\":{\"dimnames\":{\"t\":\"list\","
                "\"v\":[{\"t\":\"chr\",\"v\":[\"r\"]},{\"t\":\"chr\",\"v\":[\"a\",\"b\"]}]}}}");
  expect_value (s, "factor('lo', ordered = TRUE)",
                "{\"t\":\"fct\",\"v\":[1],\"levels\":[\"lo\"],\"class\":[\"ordered\",\"factor\"]}");
  expect_value (s, "as.difftime(2, units = 'hours')",
                "{\"t\":\"dbl\",\"v\":[2],\"class\":[\"difftime\"],\"attr\":{\"units\":{\"t\":\"chr\","
                "\"v\":[\"hours\"]}}}");
  expect_value (s, "structure(list(), class = 'lm')", "{\"t\":\"list\",\"v\":[],\"class\":[\"lm\"]}");
  expect_value (s, "structure(1, env = globalenv())",
                "{\"t\":\"dbl\",\"v\":[1],\"attr\":{\"env\":{\"t\":\"other\",\"class\":[\"environment\"],"
                "\"text\":\"<environment: R_GlobalEnv>\"}}}");
  expect_value (s, "'caf\\u00e9'", "{\"t\":\"chr\",\"v\":[\"caf\xc3\xa9\"]}");
  securer_session_close (s);
}

Test (session, values_round_trip_through_a_tool)
{
  struct securer_session *s = open_session (NULL);
  const char *values[] = {
    "0.1 + 0.2", "1e-300", ".Machine$double.xmax", ".Machine$double.xmin", "5e-324", "-0",
    "NA_integer_", "NA_real_", "NA_character_", "NA", "NaN", "Inf", "-Inf", "NULL",
    "c(a = 1, b = NA)", "1:3", "integer(0)", "character(0)", "list()", "c(TRUE, NA, FALSE)",
    "list(1, list(2L, list('deep', NULL)), x = NA)", "matrix(1:6, 2)",
    "data.frame(a = 1:3, b = c('x', NA, 'z'), c = c(0.1, NaN, -Inf))",
    "data.frame()", "factor(c('lo', 'hi', NA), levels = c('lo', 'hi'))",
    "as.Date(c('2024-02-29', NA))", "'\\u00e9\\u4e2d\\n\"quoted\"\\\\'", "pi * 1e200",
    /* Classes and attributes. */
    "matrix(1:4, 2, dimnames = list(c('a', 'b'), NULL))", "factor('lo', ordered = TRUE)",
    "as.difftime(90, units = 'mins')", ".POSIXct(0, tz = 'Europe/Paris')", "as.POSIXlt(.POSIXct(0, tz = 'UTC'))",
    "structure(list(a = 1), class = 'lm')", "data.frame(a = 1:4)[c(2, 4), , drop = FALSE]",
    "data.frame(a = 1, row.names = 'r')", "table(c(1, 1, 2))", "structure(1:2, note = list(x = 'y'))",
    NULL,
  };
  for (const char **v = values; *v; v++)
    {
      char code[512];
      snprintf (code, sizeof code, "x <- %s; y <- echo(x); identical(x, y)", *v);
      char *j = run_ok (s, code);
      cr_assert_str_eq (j, "{\"t\":\"lgl\",\"v\":[true]}", "round trip of %s", *v);
      free (j);
    }
  securer_session_close (s);
}

/* ---- audit -------------------------------------------------------------------------- */

static json_t *
read_events (const char *path)
{
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f);
  json_t *all = json_array ();
  char line[65536];
  while (fgets (line, sizeof line, f))
    {
      json_t *j = json_loads (line, 0, NULL);
      cr_assert_not_null (j, "audit line is not JSON: %s", line);
      json_array_append_new (all, j);
    }
  fclose (f);
  return all;
}

static json_t *
find_event (json_t *all, const char *event)
{
  size_t i;
  json_t *e;
  json_array_foreach (all, i, e)
    if (strcmp (json_string_value (json_object_get (e, "event")), event) == 0)
      return e;
  return NULL;
}

Test (session, audit_log_records_every_event)
{
  char dir[] = "/tmp/securer-audit-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char path[128];
  snprintf (path, sizeof path, "%s/audit.jsonl", dir);
  struct securer_session *s = open_session (path);
  const char *sid = securer_session_id (s);
  free (run_ok (s, "add(1, 2)"));
  expect_fail (s, "fail()", SECURER_EXEC_ERROR, "fire");
  struct securer_result r;
  securer_err_t err = NULL;
  struct securer_exec_opts xo = { .timeout_ms = 200 };
  securer_session_execute (s, "Sys.sleep(10)", &xo, &r, &err);
  securer_error_free (&err);
  securer_result_clear (&r);
  char *big = malloc (12001);
  for (int i = 0; i < 12000; i += 8)
    memcpy (big + i, "x <- 1; ", 8);
  big[12000] = '\0';
  free (run_ok (s, big));
  free (big);
  cr_assert_eq (securer_session_restart (s, &err), 0);
  char sid_copy[64];
  snprintf (sid_copy, sizeof sid_copy, "%s", sid);
  securer_session_close (s);

  json_t *all = read_events (path);
  const char *events[] = { "session_start", "execute_start", "execute_complete", "tool_call",
                           "tool_result", "execute_error", "execute_timeout", "session_restart",
                           "session_close", NULL };
  for (const char **e = events; *e; e++)
    cr_assert_not_null (find_event (all, *e), "no %s event", *e);
  size_t i;
  json_t *e;
  json_array_foreach (all, i, e)
    cr_assert_str_eq (json_string_value (json_object_get (e, "session_id")), sid_copy);
  cr_assert (json_integer_value (json_object_get (find_event (all, "session_start"), "pid")) > 0);
  json_t *tc = find_event (all, "tool_call");
  cr_assert_str_eq (json_string_value (json_object_get (tc, "tool")), "add");
  cr_assert_not_null (json_object_get (json_object_get (tc, "args"), "a"));
  cr_assert (json_is_real (json_object_get (find_event (all, "tool_result"), "elapsed")));
  cr_assert (json_is_real (json_object_get (find_event (all, "execute_complete"), "elapsed")));
  cr_assert_str_eq (json_string_value (json_object_get (find_event (all, "execute_start"), "code")), "add(1, 2)");
  json_t *err_ev = find_event (all, "execute_error");
  cr_assert (strstr (json_string_value (json_object_get (err_ev, "error")), "fire") != NULL);
  cr_assert_eq (json_number_value (json_object_get (find_event (all, "execute_timeout"), "timeout_secs")), 0.2);
  /* The long code was cut at 10000 characters. */
  size_t longest = 0;
  json_array_foreach (all, i, e)
    if (strcmp (json_string_value (json_object_get (e, "event")), "execute_start") == 0)
      if (json_string_length (json_object_get (e, "code")) > longest)
        longest = json_string_length (json_object_get (e, "code"));
  cr_assert_eq (longest, 10000);
  json_decref (all);
  unlink (path);
  rmdir (dir);
}

/* ---- no leaks ---------------------------------------------------------------------------- */

static int
count_fds (void)
{
  int n = 0;
  DIR *d = opendir ("/proc/self/fd");
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    n += de->d_name[0] != '.';
  closedir (d);
  return n;
}

static int
count_children (void)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d/children", (int) getpid ());
  FILE *f = fopen (path, "r");
  if (f == NULL)
    return -1;
  int n = 0, c, prev = ' ';
  while ((c = fgetc (f)) != EOF)
    {
      if (c != ' ' && prev == ' ')
        n++;
      prev = c;
    }
  fclose (f);
  return n;
}

/* R's per-process temporary directories: inside the sandbox they live on
 * its private tmpfs, so none may appear in the host's /tmp.  Only entries
 * owned by the sandbox's host uid count (65534 for a root caller), so R
 * processes that other tests run at the same time do not disturb this. */
static int
count_tmp (void)
{
  uid_t sandbox_uid = getuid () == 0 ? 65534 : getuid ();
  int n = 0;
  DIR *d = opendir ("/tmp");
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      struct stat st;
      if (strncmp (de->d_name, "Rtmp", 4) == 0
          && fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
          && st.st_uid == sandbox_uid)
        n++;
    }
  closedir (d);
  return n;
}

/* 200 sessions (25 batches of 8) opened and closed leave nothing behind. */
Test (session, two_hundred_sessions_leave_nothing_behind, .timeout = 300)
{
  /* Warm up anything lazily opened once per process.  A template outlives
   * its sessions, idle, by design: trimmed before each count. */
  securer_session_close (open_session (NULL));
  securer_session_templates_trim ();
  int fds = count_fds (), tmp = count_tmp ();
  cr_assert_eq (count_children (), 0);
  struct securer_loop *loop = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_loop_new (&loop, &err), 0);
  /* Batches on a shared loop so that R start-ups overlap. */
  for (int b = 0; b < 25; b++)
    {
      struct securer_session *ss[8];
      struct securer_session_opts o = { .loop = loop };
      for (int i = 0; i < 8; i++)
        cr_assert_eq (securer_session_open (&o, &ss[i], &err), 0, "%s",
                      err ? securer_error_message (err) : "");
      for (int i = 0; i < 8; i++)
        while (!securer_session_ready (ss[i]))
          {
            cr_assert (securer_session_is_alive (ss[i]), "R died while starting");
            cr_assert_geq (securer_loop_run_once (loop, -1, &err), 0);
          }
      for (int i = 0; i < 8; i++)
        securer_session_close (ss[i]);
    }
  securer_loop_free (loop);
  securer_session_templates_trim ();
  cr_assert_eq (count_fds (), fds, "descriptors leaked");
  cr_assert_eq (count_children (), 0, "processes left behind");
  cr_assert_eq (count_tmp (), tmp, "files left in /tmp");
}

/* ---- the host stays bounded ------------------------------------------------------- */


Test (session, an_output_flood_is_counted_not_kept, .timeout = 120)
{
  struct securer_session *s = open_session (NULL);
  long before = vm_hwm_kb ("self");
  struct securer_result r;
  securer_err_t err = NULL;
  /* Three million lines with the default caps: 10000 lines kept. */
  struct securer_exec_opts xo = { .timeout_ms = 60000 };
  cr_assert_eq (securer_session_execute (s, "writeLines(rep('x', 3e6)); 'done'", &xo, &r, &err), 0,
                "%s", r.error ? r.error : "");
  cr_assert_eq (r.n_output, SECURER_DEFAULT_MAX_OUTPUT_LINES);
  cr_assert (r.output_truncated);
  cr_assert_eq (r.output_dropped_lines, 3000000 - SECURER_DEFAULT_MAX_OUTPUT_LINES);
  cr_assert_eq (r.output_dropped_bytes, 3000000 - SECURER_DEFAULT_MAX_OUTPUT_LINES);
  securer_result_clear (&r);
  long after = vm_hwm_kb ("self");
  /* Kept, the lines alone would take well over 100 MiB. */
  cr_assert_lt (after - before, 32 * 1024, "peak grew by %ld KiB", after - before);

  /* The byte cap: lines of 100 characters, 1000 bytes kept. */
  xo.max_output_bytes = 1000;
  cr_assert_eq (securer_session_execute (s, "writeLines(strrep('y', 100), con = stdout()); "
                                            "for (i in 1:50) writeLines(strrep('y', 100)); 1",
                                         &xo, &r, &err), 0);
  cr_assert_eq (r.n_output, 10);
  cr_assert_eq (r.output_dropped_lines, 41);
  cr_assert_eq (r.output_dropped_bytes, 4100);
  securer_result_clear (&r);
  securer_session_close (s);
}

/* slots: [0] how many times done was called. */
static void
on_flood_done (void *data, struct securer_session *s, const struct securer_result *r)
{
  int *slots = data;
  slots[0]++;
  cr_assert_eq (r->status, SECURER_EXEC_TIMEOUT, "the flood ends by its timeout");
  cr_assert (r->output_truncated);
}

static void
on_quiet_done (void *data, struct securer_session *s, const struct securer_result *r)
{
  int *slots = data;
  slots[0]++;
  cr_assert_eq (r->status, SECURER_EXEC_OK, "%s", r->error ? r->error : "");
  cr_assert_eq (json_integer_value (json_array_get (json_object_get (r->value, "v"), 0)), 2);
}

Test (session, one_session_flooding_does_not_stop_another, .timeout = 120)
{
  struct securer_loop *loop;
  securer_err_t err = NULL;
  cr_assert_eq (securer_loop_new (&loop, &err), 0);
  struct securer_session *a, *b;
  struct securer_session_opts o = { .loop = loop };
  cr_assert_eq (securer_session_open (&o, &a, &err), 0);
  cr_assert_eq (securer_session_open (&o, &b, &err), 0);
  while (!securer_session_ready (a) || !securer_session_ready (b))
    cr_assert_geq (securer_loop_run_once (loop, -1, &err), 0);
  struct securer_exec_opts flood = { .timeout_ms = 8000 };
  struct securer_exec_opts quick = { .timeout_ms = 20000 };
  int slots_a[2] = { 0, 0 }, slots_b[2] = { 0, 0 };
  cr_assert_eq (securer_session_execute_async (a, "repeat writeLines(strrep('f', 1000))", &flood,
                                               on_flood_done, slots_a, &err), 0);
  /* b starts once a is well into its flood, and answers while a floods. */
  for (int i = 0; i < 50; i++)
    cr_assert_geq (securer_loop_run_once (loop, 10, &err), 0);
  cr_assert (securer_session_busy (a));
  cr_assert_eq (securer_session_execute_async (b, "1L + 1L", &quick, on_quiet_done, slots_b, &err), 0);
  while (securer_session_busy (b))
    cr_assert_geq (securer_loop_run_once (loop, -1, &err), 0);
  cr_assert (securer_session_busy (a), "b answered while a was still flooding");
  while (securer_session_busy (a))
    cr_assert_geq (securer_loop_run_once (loop, -1, &err), 0);
  cr_assert_eq (slots_a[0], 1);
  cr_assert_eq (slots_b[0], 1);
  securer_session_close (a);
  securer_session_close (b);
  securer_loop_free (loop);
}

/* Processes of the sandbox still running (not zombies), R and its init
 * aside, seen from the host: descendants of R's parent. */
static int
sandbox_leftovers (pid_t r_pid)
{
  char path[64], buf[512];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) r_pid);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f);
  cr_assert_not_null (fgets (buf, sizeof buf, f));
  fclose (f);
  int init = 0;
  char st;
  cr_assert_eq (sscanf (strrchr (buf, ')') + 1, " %c %d", &st, &init), 2);
  int found = 0;
  DIR *d = opendir ("/proc");
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      int pid = atoi (de->d_name);
      if (pid <= 1 || pid == r_pid || pid == init)
        continue;
      /* Walk up to the host's init; count it when the sandbox's is met. */
      int p = pid;
      char state = '?';
      for (int depth = 0; p > 1 && depth < 64; depth++)
        {
          snprintf (path, sizeof path, "/proc/%d/stat", p);
          f = fopen (path, "r");
          if (f == NULL || fgets (buf, sizeof buf, f) == NULL)
            {
              if (f)
                fclose (f);
              break;
            }
          fclose (f);
          char s2;
          int pp;
          if (sscanf (strrchr (buf, ')') + 1, " %c %d", &s2, &pp) != 2)
            break;
          if (p == pid)
            state = s2;
          if (pp == init)
            {
              found += state != 'Z';
              break;
            }
          p = pp;
        }
    }
  closedir (d);
  return found;
}

Test (session, processes_left_running_end_with_their_execution, .timeout = 120)
{
  struct securer_session *s = open_session (NULL);
  struct securer_result r;
  securer_err_t err = NULL;
  /* A shell loop detached with '&' that keeps forking subshells, and a
   * forked R child that forks again: all still burning CPU when the code
   * returns. */
  const char *code =
    "kept <- 7; system('while :; do ( : ); done &');"
    "p <- parallel::mcparallel({ parallel::mcparallel(repeat {}); repeat {} });"
    "Sys.sleep(0.5); 'returned'";
  cr_assert_eq (securer_session_execute (s, code, NULL, &r, &err), 0, "%s", r.error ? r.error : "");
  cr_assert_geq (r.processes_ended, 3, "ended %u", r.processes_ended);
  securer_result_clear (&r);
  cr_assert_eq (sandbox_leftovers (securer_session_pid (s)), 0);
  /* Inside, only init and R run; R kept its state. */
  expect_value (s, "st <- sapply(list.files('/proc', pattern = '^[0-9]+$'), function(p) "
                   "tryCatch(strsplit(sub('.*\\\\) ', '', readLines(file.path('/proc', p, 'stat'))), "
                   "' ')[[1]][1], error = function(e) 'gone')); sum(!st %in% c('Z', 'gone'))",
                "{\"t\":\"int\",\"v\":[2]}");
  expect_value (s, "kept", "{\"t\":\"dbl\",\"v\":[7]}");
  /* Nothing to end: the count says so. */
  cr_assert_eq (securer_session_execute (s, "1", NULL, &r, &err), 0);
  cr_assert_eq (r.processes_ended, 0);
  securer_result_clear (&r);
  securer_session_close (s);
}

Test (session, invalid_utf8_in_output_is_escaped_not_dropped)
{
  struct securer_session *s = open_session (NULL);
  struct securer_result r;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_execute (s, "cat('a\\xffb\\n'); message('caf\\xe9'); "
                                            "cat('\\xc0\\xaf', '\\u00e9t\\u00e9\\n'); 1",
                                         NULL, &r, &err), 0, "%s", r.error ? r.error : "");
  cr_assert_eq (r.n_output, 3);
  /* The two streams are read separately: order within each. */
  const char *out[2] = { NULL, NULL }, *errl = NULL;
  for (size_t i = 0, n = 0; i < r.n_output; i++)
    if (r.output[i].stream == SECURER_STDERR)
      errl = r.output[i].text;
    else if (n < 2)
      out[n++] = r.output[i].text;
  cr_assert_str_eq (out[0], "a\\xffb");
  cr_assert_str_eq (errl, "caf\\xe9");
  /* An overlong form is two bad bytes; well-formed text stays as it is. */
  cr_assert_str_eq (out[1], "\\xc0\\xaf \xc3\xa9t\xc3\xa9");
  for (size_t i = 0; i < r.n_output; i++)
    {
      json_t *j = json_string (r.output[i].text);
      cr_assert_not_null (j, "line %zu is not UTF-8", i);
      json_decref (j);
    }
  securer_result_clear (&r);
  securer_session_close (s);
}

Test (session, refused_tool_calls_do_not_grow_the_audit_log)
{
  char path[] = "/tmp/securer-audit-XXXXXX";
  int fd = mkstemp (path);
  cr_assert_geq (fd, 0);
  close (fd);
  struct securer_session *s = open_session (path);
  struct securer_result r;
  securer_err_t err = NULL;
  struct securer_exec_opts xo = { .max_tool_calls = 2 };
  /* 300 calls of 20 KB each: two accepted, the rest refused. */
  cr_assert_eq (securer_session_execute (s, "big <- strrep('z', 20000); "
                                            "for (i in 1:300) try(echo(big), silent = TRUE); 1",
                                         &xo, &r, &err), -1);
  cr_assert_eq (r.status, SECURER_EXEC_TOOL_LIMIT);
  cr_assert_eq (r.tool_calls, 300);
  securer_error_free (&err);
  securer_result_clear (&r);
  securer_session_close (s);
  struct stat st;
  cr_assert_eq (stat (path, &st), 0);
  cr_assert_lt (st.st_size, 8192, "audit log of %lld bytes", (long long) st.st_size);
  FILE *f = fopen (path, "r");
  char line[4096];
  int calls = 0, refused = 0, truncated = 0, refused_count = -1;
  while (fgets (line, sizeof line, f) != NULL)
    {
      json_t *j = json_loads (line, 0, NULL);
      cr_assert_not_null (j, "%s", line);
      const char *ev = json_string_value (json_object_get (j, "event"));
      if (strcmp (ev, "tool_call") == 0)
        {
          calls++;
          refused += json_object_get (j, "refused") != NULL;
          truncated += json_is_true (json_object_get (j, "args_truncated"));
          cr_assert_null (json_object_get (j, "args"), "20 KB of arguments are not logged");
        }
      if (strcmp (ev, "execute_error") == 0)
        refused_count = (int) json_integer_value (json_object_get (j, "tool_calls_refused"));
      json_decref (j);
    }
  fclose (f);
  cr_assert_eq (calls, 3);
  cr_assert_eq (truncated, 2);
  cr_assert_eq (refused, 1);
  cr_assert_eq (refused_count, 298);
  unlink (path);
}
