/* securer — sessions: a long-lived sandboxed R interpreter with host tools.
 *
 * A session starts R inside the sandbox a policy describes and keeps it
 * running across executions, so state (variables, loaded packages) persists
 * from one securer_session_execute() to the next.  The code being run can
 * call tools: host functions registered in a securer_tools registry, which
 * appear inside R as ordinary functions with typed arguments.  When R calls
 * a tool, execution pauses; the host runs the tool and R resumes with its
 * value.
 *
 * The host talks to R over a private channel: one end of an anonymous
 * socketpair handed to the sandboxed process at spawn as its fd 0, so no
 * other process can connect to it.  Messages are newline-delimited JSON; every
 * message from R is size-capped while it is read and validated (shape, types,
 * tool name, argument names and types, call counts) before it is used.
 *
 * Values cross the boundary in the tagged encoding documented in
 * docs/protocol.md ("Values"): {"t":"dbl","v":[0.1,null,"NaN"]} and so on.
 * It is lossless for NULL, logical/integer/double/character vectors
 * (including NA of each type, NaN, ±Inf, names, dim), lists, data frames,
 * factors, Dates and POSIXct, with their classes and other attributes
 * (dimnames, ordered factors, difftime units, classed lists such as lm).  securer_value_to_plain() and
 * securer_value_from_plain() convert to and from ordinary JSON (lossy).
 *
 * Threading: a session is used by one thread at a time.  Different sessions
 * may be used from different threads; a securer_pool is thread-safe.
 */
#ifndef SECURER_SESSION_H
#define SECURER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "securer/error.h"
#include "securer/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- values --------------------------------------------------------------- */

/* Checks that v is a well-formed tagged value (depth at most 64).  NULL and
 * JSON null both mean R's NULL. */
int securer_value_validate (const json_t *v, securer_err_t *err);

/* Ordinary JSON for a tagged value: length-1 unnamed vectors become scalars,
 * NA becomes null, NaN/Inf/-Inf become the strings "NaN", "Inf", "-Inf",
 * named vectors and lists become objects, data frames become arrays of row
 * objects (of the columns that carry values: an "other" column only in a
 * one-row data frame; none left: []), factors their labels, Dates
 * "YYYY-MM-DD" strings.  New reference. */
json_t *securer_value_to_plain (const json_t *v);

/* The same, refused (NULL, E2BIG) when the plain form would exceed
 * max_bytes of compact JSON: it can be far larger than the tagged value
 * (a data frame repeats its column names on every row, a factor its level
 * text for every element), so a value that came from the sandbox is
 * converted with this one. */
json_t *securer_value_to_plain_max (const json_t *v, size_t max_bytes, securer_err_t *err);

/* The tagged value for ordinary JSON: null -> NULL, true/false -> logical,
 * integral numbers in int32 range -> integer, other numbers -> double,
 * strings -> character, arrays of scalars of one kind (null allowed as NA)
 * -> vectors, other arrays -> lists, objects -> named lists.  New reference
 * or NULL with *err set. */
json_t *securer_value_from_plain (const json_t *plain, securer_err_t *err);

/* ---- tools ------------------------------------------------------------------ */

enum securer_arg_type {
  SECURER_ARG_ANY = 0,
  SECURER_ARG_NUMERIC,     /* integer or double */
  SECURER_ARG_INTEGER,     /* integer (whole doubles are converted in R) */
  SECURER_ARG_CHARACTER,
  SECURER_ARG_LOGICAL,
  SECURER_ARG_LIST,        /* list or data frame */
  SECURER_ARG_DATA_FRAME,
};

/* "numeric", "integer", ...; and back (-1 when unknown). */
const char *securer_arg_type_name (enum securer_arg_type t);
int securer_arg_type_parse (const char *name);

struct securer_tool_arg {
  const char *name;             /* an R identifier */
  enum securer_arg_type type;
};

/* What a tool callback returns. */
enum securer_tool_status {
  SECURER_TOOL_OK = 0,          /* *result holds the value (new reference; NULL = R NULL) */
  SECURER_TOOL_ERROR = 1,       /* *error holds a malloc'd message; R sees it as stop(message) */
  SECURER_TOOL_DEFERRED = 2,    /* the answer comes later via securer_session_tool_reply() */
};

struct securer_tool_call {
  const char *session_id;
  uint64_t call_id;             /* pass to securer_session_tool_reply() when deferring */
  const char *tool;
  const json_t *args;           /* object: argument name -> tagged value, validated */
};

/* Runs on the host with the host's privileges.  Arguments have been checked
 * against the declaration (names and types) before the call. */
typedef enum securer_tool_status (*securer_tool_fn) (void *userdata,
                                                     const struct securer_tool_call *call,
                                                     json_t **result, char **error);

struct securer_tools;

struct securer_tools *securer_tools_new (void);
/* Registers a tool.  The name and every argument name must be R
 * identifiers (^[A-Za-z.][A-Za-z0-9._]*$, not starting with a dot followed by
 * a digit, not a reserved word); duplicate tool or argument names are
 * rejected.  fn may be NULL: every call is then deferred to the session's
 * on_tool_call handler (used by `securer serve`). */
int securer_tools_add (struct securer_tools *t, const char *name, const char *description,
                       const struct securer_tool_arg *args, size_t n_args,
                       securer_tool_fn fn, void *userdata, securer_err_t *err);

/* A tool implemented by a host command, run without a shell each time R
 * calls it.  The command gets the arguments as one ordinary-JSON object on
 * stdin (securer_value_to_plain: NA is null, length-1 vectors are scalars)
 * and must print the value as JSON on stdout (read back with
 * securer_value_from_plain) and exit 0; otherwise the call fails in R with
 * the first line of its stderr.  It runs inside the session's event loop:
 * in its own process group, with stdin/stdout/stderr on pipes and no other
 * descriptor, a clean environment (PATH=/usr/local/bin:/usr/bin:/bin,
 * LANG=C.UTF-8, HOME, USER, LOGNAME, TZ and TMPDIR when set, SECURER_TOOL
 * and SECURER_SESSION_ID, then `env`), the host's working directory and
 * privileges.  Its stdout is capped at the session's message size (1 MiB by
 * default): a command printing more is killed and the call fails.  The
 * execution's timeout covers it: on expiry (or when the session stops R
 * for any reason) its whole process group is killed and it is reaped; so
 * is anything it leaves running in its group when it exits. */
struct securer_tool_command {
  /* NULL-terminated.  argv[0] is a path, or a name looked up in the
   * caller's PATH now; a command that cannot be executed is refused here. */
  const char *const *argv;
  /* NULL-terminated extra entries, may be NULL: "NAME=VALUE", or a bare
   * "NAME" to pass the caller's current value on (nothing when unset). */
  const char *const *env;
};
int securer_tools_add_command (struct securer_tools *t, const char *name, const char *description,
                               const struct securer_tool_arg *args, size_t n_args,
                               const struct securer_tool_command *command, securer_err_t *err);
size_t securer_tools_count (const struct securer_tools *t);
/* Reference counted: sessions and pools keep a reference. */
struct securer_tools *securer_tools_ref (struct securer_tools *t);
void securer_tools_unref (struct securer_tools *t);

/* ---- sessions ------------------------------------------------------------------ */

struct securer_session;
struct securer_loop;

/* How a session's R starts (docs/sessions.md, "How a session starts"). */
enum securer_session_start {
  /* As the policy's `session template` says (auto by default), or the
   * environment variable SECURER_SESSION_TEMPLATE=auto|on|off when set. */
  SECURER_SESSION_START_POLICY = 0,
  SECURER_SESSION_START_COLD,      /* a new sandbox that executes R */
  /* Forked from the policy's template, a pre-initialised R kept by the
   * library per policy and process; refused (status 125) when this caller
   * or policy cannot have one. */
  SECURER_SESSION_START_TEMPLATE,
};

/* Returns true to allow the execution, false to veto it. */
typedef bool (*securer_pre_execute_fn) (void *userdata, const char *code);

struct securer_session_opts {
  /* Policy for the sandbox; NULL loads the shipped "r" policy.  The session
   * keeps its own copy. */
  const struct securer_policy *policy;
  struct securer_tools *tools;          /* may be NULL; a reference is taken */
  const char *audit_log;                /* JSON-lines audit file, or NULL */
  /* When set, audit_log is a name relative to this directory and may not
   * lead out of it: no absolute path, no "..", no symbolic link on the way
   * (resolved by the kernel, openat2 RESOLVE_BENEATH). */
  const char *audit_dir;
  /* Fields added to every line of this session's audit log (a server's
   * client uid and pid, say); a reference is taken.  May be NULL. */
  json_t *audit_fields;
  unsigned max_executions;              /* 0: unlimited */
  bool sanitize_errors;                 /* strip paths, pids, host names, IPs from errors */
  securer_pre_execute_fn pre_execute;
  void *pre_execute_data;
  size_t max_message_size;              /* per message, both ways; 0: 1 MiB */
  uint64_t start_timeout_ms;            /* R start-up; 0: 30 s */
  /* Event loop to run in; NULL: the session makes its own (the normal case
   * for the blocking API).  With a shared loop use the async API below. */
  struct securer_loop *loop;
  /* Deferred tool calls (tool fn NULL or returning SECURER_TOOL_DEFERRED)
   * are announced here; answer with securer_session_tool_reply(). */
  void (*on_tool_call) (void *userdata, struct securer_session *s,
                        const struct securer_tool_call *call);
  void *on_tool_call_data;
  bool verbose;                         /* passed to the sandbox */
  /* Called each time a start of R ends: error is NULL once R reported
   * ready, else why the start failed (the sandbox or R refused, R died, the
   * start timeout passed).  With a shared loop, securer_session_open()
   * returns as soon as R is spawned; this is how such a host learns the
   * outcome without blocking (`securer serve` replies to "open" from it).
   * Do not close the session from inside the callback. */
  void (*on_start) (void *userdata, struct securer_session *s, const char *error);
  void *on_start_data;
  enum securer_session_start start;
};

enum securer_exec_status {
  SECURER_EXEC_OK = 0,
  SECURER_EXEC_ERROR,        /* the R code (or a tool it called) raised an error */
  SECURER_EXEC_SYNTAX,       /* the code does not parse; nothing was run */
  SECURER_EXEC_TIMEOUT,      /* killed after the timeout; a fresh R was started */
  SECURER_EXEC_TOOL_LIMIT,   /* more than max_tool_calls */
  SECURER_EXEC_REJECTED,     /* too long, max_executions reached, or vetoed by the hook */
  SECURER_EXEC_CRASHED,      /* R died (signal, limit, seccomp) or broke the protocol */
  SECURER_EXEC_TOO_LARGE,    /* the result exceeded the message size limit */
};
const char *securer_exec_status_name (enum securer_exec_status s);

enum securer_stream { SECURER_STDOUT = 1, SECURER_STDERR = 2 };

enum securer_plot_format {
  SECURER_PLOT_PNG = 0,
  SECURER_PLOT_SVG,
  SECURER_PLOT_NONE,            /* no plots are captured */
};
const char *securer_plot_format_name (enum securer_plot_format f);
/* -1 for a name that is no format ("png", "svg", "none"). */
int securer_plot_format_parse (const char *name);

#define SECURER_DEFAULT_MAX_PLOTS 50u
#define SECURER_DEFAULT_MAX_PLOT_BYTES (8u * 1024u * 1024u)

typedef void (*securer_output_fn) (void *userdata, enum securer_stream stream, const char *line);

/* What the host keeps of one execution unless told otherwise.  Output past
 * either cap is still read (R never blocks on it) and counted, not kept. */
#define SECURER_DEFAULT_MAX_OUTPUT_LINES 10000u
#define SECURER_DEFAULT_MAX_OUTPUT_BYTES (1024u * 1024u)
#define SECURER_DEFAULT_MAX_TOOL_CALLS 1000u

struct securer_exec_opts {
  uint64_t timeout_ms;          /* 0: 30 s; UINT64_MAX: none */
  /* 0: SECURER_DEFAULT_MAX_TOOL_CALLS; UINT_MAX: no limit. */
  unsigned max_tool_calls;
  /* Output lines kept: 0: SECURER_DEFAULT_MAX_OUTPUT_LINES; UINT_MAX: no
   * limit.  A line longer than 64 KiB counts as several. */
  unsigned max_output_lines;
  size_t max_code_length;       /* 0: 100000 characters (bytes of UTF-8) */
  bool print;                   /* print visible values as the R console would */
  securer_output_fn on_output;  /* called for each kept line as it arrives; may be NULL */
  void *output_data;
  /* Bytes of output text kept (newlines not counted, after escaping):
   * 0: SECURER_DEFAULT_MAX_OUTPUT_BYTES; SIZE_MAX: no limit. */
  size_t max_output_bytes;
  /* Pages drawn on R's default graphics device come back as images
   * (struct securer_result's plots), without the code asking. */
  enum securer_plot_format plot_format;  /* 0: PNG */
  unsigned plot_width, plot_height;      /* pixels; 0: 480 each */
  unsigned plot_res;                     /* pixels per inch; 0: 72 */
  /* Pages kept per execution: 0: SECURER_DEFAULT_MAX_PLOTS; UINT_MAX: no
   * limit.  Image bytes kept per execution (all pages together):
   * 0: SECURER_DEFAULT_MAX_PLOT_BYTES; SIZE_MAX: no limit.  Pages past
   * either, or larger than one message, are counted in plots_dropped. */
  unsigned max_plots;
  size_t max_plot_bytes;
};

/* One page drawn during an execution, as the image the sandboxed R
 * rendered.  Data from the sandbox: the host checks that it is base64 of
 * an image of its format, nothing more (an SVG is text R wrote: show it
 * as an image, never inline it into a page as markup). */
struct securer_plot {
  enum securer_plot_format format;
  unsigned width, height;       /* pixels (SVG: points at the resolution asked for) */
  char *data;                   /* base64, NUL-terminated */
  size_t bytes;                 /* the image's size, decoded */
};

struct securer_output_line {
  enum securer_stream stream;
  /* Without the newline; valid UTF-8: a byte that is not part of a
   * well-formed UTF-8 sequence (and NUL) is written as the four
   * characters \xNN. */
  char *text;
};

struct securer_result {
  enum securer_exec_status status;
  json_t *value;                /* tagged value (OK only); JSON null for R NULL */
  bool visible;
  char *error;                  /* message for every status but OK */
  char *error_call;             /* ERROR: the call R's error names, deparsed (or NULL) */
  struct securer_output_line *output;
  size_t n_output;
  bool output_truncated;        /* a cap was reached: some output was dropped */
  uint64_t output_dropped_lines;  /* lines read after the cap and not kept */
  uint64_t output_dropped_bytes;  /* their bytes (as read, newlines not counted) */
  char **warnings;              /* R warnings raised by the code */
  size_t n_warnings;
  unsigned tool_calls;
  double elapsed;               /* seconds */
  /* Processes the execution left running in the sandbox (everything but
   * R itself), killed when it ended. */
  unsigned processes_ended;
  struct securer_plot *plots;   /* the pages drawn, in drawing order */
  size_t n_plots;
  /* Pages not kept: over max_plots or max_plot_bytes, or too large to
   * send in one message. */
  uint64_t plots_dropped;
  /* network allow: destinations the proxy refused during the execution,
   * [{"host", "port", "reason", "count"}…] (json_t array), or NULL. */
  json_t *network_denied;
};
void securer_result_clear (struct securer_result *r);

/* Starts R in the sandbox and waits until it is ready (blocking API; with a
 * shared loop it returns once R is spawned, see securer_session_ready()). */
int securer_session_open (const struct securer_session_opts *opts, struct securer_session **out,
                          securer_err_t *err);

/* Runs code in the global environment and waits for the outcome.  Returns 0
 * when the code ran to completion (res->status OK).  Returns -1 with *err
 * set otherwise: res->status says why (R error, timeout, ...) and res->error
 * repeats the message; output captured so far is in res either way.  A host
 * failure (cannot restart R, ...) leaves res->status CRASHED.  A dead R is
 * restarted before running (state is lost, the audit log says so). */
int securer_session_execute (struct securer_session *s, const char *code,
                             const struct securer_exec_opts *opts, struct securer_result *res,
                             securer_err_t *err);

/* Parse-only check inside the sandboxed R (the code is never evaluated).
 * Returns 0 when it parses; fills *warnings (malloc'd array of malloc'd
 * strings, may be NULL) with advisory notes about risky calls (system,
 * .Call, dyn.load, pipe, url, do.call, ...).  -1 on a syntax error. */
int securer_session_validate (struct securer_session *s, const char *code, char ***warnings,
                              size_t *n_warnings, securer_err_t *err);

/* Kills R and starts a fresh one: all state is gone. */
int securer_session_restart (struct securer_session *s, securer_err_t *err);
/* Also notices (without blocking) an R that died while the session was idle. */
bool securer_session_is_alive (const struct securer_session *s);
const char *securer_session_id (const struct securer_session *s);
pid_t securer_session_pid (const struct securer_session *s);  /* host pid, 0 when dead */
unsigned securer_session_executions (const struct securer_session *s);
/* How the running R started: "template" or "cold"; NULL while there is none. */
const char *securer_session_start_kind (const struct securer_session *s);
/* What the running R's sandbox lacks of its policy's best-effort
 * protections (securer_sandbox_degraded); NULL when nothing, or while no R
 * runs.  malloc'd. */
char *securer_session_degraded (const struct securer_session *s);
/* Templates (docs/sessions.md, "How a session starts") outlive their last
 * session, idle, for the next session of their policy: at most 4, for at
 * most 5 minutes.  This frees every idle one now (thread-safe); templates
 * still used by a session stay. */
void securer_session_templates_trim (void);
/* Closes the channel, kills R, writes session_close, frees.  Safe on NULL. */
void securer_session_close (struct securer_session *s);

/* ---- async API (for hosts with their own loop, e.g. `securer serve`) --------- */

/* Called once per execution, with the result (owned by the session; valid
 * only during the call). */
typedef void (*securer_done_fn) (void *userdata, struct securer_session *s,
                                 const struct securer_result *res);

/* Starts an execution without waiting; the outcome arrives through done.
 * Fails at once (-1) when the session is busy or the request is rejected.
 * A refused request (busy, code too long or not UTF-8, max_executions
 * reached, vetoed by the hook: a "rejected" result) has the error status
 * SECURER_EXEC_REJECTED_STATUS, unlike a session that could not run it. */
#define SECURER_EXEC_REJECTED_STATUS 2
int securer_session_execute_async (struct securer_session *s, const char *code,
                                   const struct securer_exec_opts *opts, securer_done_fn done,
                                   void *done_data, securer_err_t *err);
/* Starts a parse-only check (see securer_session_validate) without
 * waiting: done gets status OK with the advisory notes as res->warnings,
 * or SYNTAX with the message. */
int securer_session_validate_async (struct securer_session *s, const char *code,
                                    securer_done_fn done, void *done_data, securer_err_t *err);
/* Answers a deferred tool call: exactly one of value (tagged, may be JSON
 * null) or error (message) is used; error != NULL wins. */
int securer_session_tool_reply (struct securer_session *s, uint64_t call_id, const json_t *value,
                                const char *error, securer_err_t *err);
bool securer_session_busy (const struct securer_session *s);
bool securer_session_ready (const struct securer_session *s);

/* The event loop (epoll).  One loop can drive many sessions plus the
 * caller's own descriptors. */
typedef void (*securer_loop_fn) (void *userdata, uint32_t events);
int securer_loop_new (struct securer_loop **out, securer_err_t *err);
int securer_loop_add (struct securer_loop *l, int fd, uint32_t events, securer_loop_fn fn,
                      void *userdata, securer_err_t *err);
int securer_loop_mod (struct securer_loop *l, int fd, uint32_t events, securer_err_t *err);
void securer_loop_del (struct securer_loop *l, int fd);
/* Waits up to timeout_ms (-1: forever) and dispatches what is ready. */
int securer_loop_run_once (struct securer_loop *l, int timeout_ms, securer_err_t *err);
void securer_loop_free (struct securer_loop *l);

/* ---- pools -------------------------------------------------------------------- */

struct securer_pool;

struct securer_pool_opts {
  unsigned size;                        /* number of pre-warmed sessions (>= 1) */
  struct securer_session_opts session;  /* template; loop must be NULL */
  bool reset_between_uses;              /* restart a session when it is released */
};

struct securer_pool_status {
  unsigned total, busy, idle, dead;
  unsigned waiting;                     /* callers blocked in securer_pool_acquire() */
};

/* Starts `size` sessions (their R start-ups overlap). */
int securer_pool_new (const struct securer_pool_opts *opts, struct securer_pool **out,
                      securer_err_t *err);
/* Waits up to timeout_ms (0: do not wait; UINT64_MAX: forever) for an idle
 * session, blocked on a condition variable that securer_pool_release()
 * signals (no polling; the deadline is on the monotonic clock).  A dead
 * session is restarted before it is handed out.  ETIMEDOUT when none became
 * free in time, ESHUTDOWN when the pool is being closed. */
int securer_pool_acquire (struct securer_pool *p, uint64_t timeout_ms,
                          struct securer_session **out, securer_err_t *err);
void securer_pool_release (struct securer_pool *p, struct securer_session *s);
/* acquire + execute + release. */
int securer_pool_execute (struct securer_pool *p, const char *code,
                          const struct securer_exec_opts *opts, uint64_t acquire_timeout_ms,
                          struct securer_result *res, securer_err_t *err);
void securer_pool_status (struct securer_pool *p, struct securer_pool_status *st);
/* Closes every session; sessions still acquired are closed too. */
void securer_pool_close (struct securer_pool *p);

#ifdef __cplusplus
}
#endif
#endif
