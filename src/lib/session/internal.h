/* Internal interfaces between the modules of the session area. */
#ifndef SECURER_SESSION_INTERNAL_H
#define SECURER_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "securer/error.h"
#include "securer/sandbox.h"
#include "securer/session.h"

#define SECURER_DEFAULT_MAX_MESSAGE (1024u * 1024u)
#define SECURER_DEFAULT_TIMEOUT_MS 30000u
#define SECURER_DEFAULT_MAX_CODE 100000u
#define SECURER_VALUE_MAX_DEPTH 64
/* Attributes (and classes) one value may carry. */
#define SECURER_VALUE_MAX_ATTRS 64
/* Largest result object `securer exec --json` prints and `securer serve`
 * sends, unless told otherwise. */
#define SECURER_DEFAULT_MAX_REPLY (16u * 1024u * 1024u)
/* The largest side of a plot, in pixels (R's cairo devices allocate the
 * whole bitmap: 10000 x 10000 is 400 MB, past the sandbox's memory). */
#define SECURER_PLOT_MAX_PIXELS 10000

/* ---- channel.c: newline-delimited framing over a pair of descriptors ---- */
struct securer_channel {
  int rfd, wfd;               /* non-blocking; -1 once closed */
  size_t max_message;         /* a line longer than this is an error */
  char *in;                   /* bytes read, not yet consumed */
  size_t in_len, in_cap;
  size_t scanned;             /* bytes of `in` known to hold no newline */
  size_t taken;               /* bytes of the line last handed out */
  char *out;                  /* bytes waiting to be written */
  size_t out_len, out_cap, out_off;
  size_t max_pending;         /* cap on `out`; a peer that never reads is cut off */
  bool eof;
};

enum channel_read_status {
  CHANNEL_AGAIN = 0,          /* no complete line yet */
  CHANNEL_LINE = 1,           /* *line, *len: one message without its newline */
  CHANNEL_EOF = 2,
  CHANNEL_TOO_LARGE = 3,      /* a line exceeded max_message before its '\n' */
  CHANNEL_ERROR = -1,
};

void securer_channel_init (struct securer_channel *c, int rfd, int wfd, size_t max_message);
/* Returns the next complete line, reading only as much as needed and never
 * buffering more than max_message+1 bytes of one line.  The line stays valid
 * until the next call. */
enum channel_read_status securer_channel_read (struct securer_channel *c, const char **line,
                                               size_t *len, securer_err_t *err);
/* Queues one message (a '\n' is appended) and writes what the pipe takes.
 * Fails with EMSGSIZE when len > max_message, ENOBUFS when the peer has left
 * more than max_pending bytes unread. */
int securer_channel_send (struct securer_channel *c, const char *msg, size_t len,
                          securer_err_t *err);
/* Queues bytes as they are (no cap, no newline): the runtime bootstrap. */
int securer_channel_send_raw (struct securer_channel *c, const char *data, size_t len,
                              securer_err_t *err);
/* Writes queued bytes; returns 1 when everything is out, 0 when some remain. */
int securer_channel_flush (struct securer_channel *c, securer_err_t *err);
bool securer_channel_pending (const struct securer_channel *c);
/* write() that neither dies of SIGPIPE nor leaves one pending when the
 * reader is gone (EPIPE), without touching the process's disposition. */
ssize_t securer_write_nosigpipe (int fd, const void *buf, size_t n);
void securer_channel_close (struct securer_channel *c);

/* ---- protocol.c: messages between the host and the R runtime ---- */
enum proto_type {
  PROTO_READY = 1,
  PROTO_TOOL_CALL,
  PROTO_RESULT,
  PROTO_ERROR,
  PROTO_PARSED,
  PROTO_PLOT,
};

struct proto_msg {
  enum proto_type type;
  json_t *root;               /* owns everything below */
  uint64_t id;
  const char *tool;           /* TOOL_CALL */
  json_t *args;               /* TOOL_CALL: object (never NULL) */
  json_t *value;              /* RESULT */
  bool visible;               /* RESULT */
  json_t *warnings;           /* RESULT, PARSED, ERROR: array of strings */
  const char *message;        /* ERROR */
  const char *kind;           /* ERROR: "error", "syntax", "too_large" */
  const char *call;           /* ERROR: the call the error names (optional) */
  const char *r_version;      /* READY */
  int64_t pid;                /* READY: pid inside the sandbox */
  uint64_t plots_dropped;     /* RESULT, ERROR: pages R did not send (over a cap) */
  /* PLOT: one page; data is base64 of an image of the format, checked. */
  enum securer_plot_format plot_format;
  unsigned plot_width, plot_height;
  const char *plot_data;
  size_t plot_data_len, plot_bytes;
};

/* Parses and validates one message from R (shape and types; the session
 * checks tool names and arguments against its registry, so that an unknown
 * tool is answered with an error rather than treated as a violation). */
int securer_proto_parse (const char *line, size_t len, struct proto_msg *m, securer_err_t *err);
void securer_proto_msg_clear (struct proto_msg *m);

/* Host -> R messages, as malloc'd JSON text without the newline. */
/* cpus: what parallel::detectCores() says inside (securer_sandbox_cpus). */
char *securer_proto_hello (const struct securer_tools *tools, size_t max_message, unsigned cpus);
/* xo: print and the plot options (already defaulted). */
char *securer_proto_execute (uint64_t id, const char *code, const struct securer_exec_opts *xo);
char *securer_proto_parse_req (uint64_t id, const char *code);
char *securer_proto_tool_result (uint64_t id, const json_t *value, const char *error);
/* True when s is an R identifier that may name a tool or an argument. */
bool securer_proto_valid_name (const char *s);

/* ---- tools.c ---- */
struct tool_def;
const struct tool_def *securer_tools_find (const struct securer_tools *t, const char *name);
size_t securer_tool_n_args (const struct tool_def *d);
const char *securer_tool_arg_name (const struct tool_def *d, size_t i);
enum securer_arg_type securer_tool_arg_type (const struct tool_def *d, size_t i);
securer_tool_fn securer_tool_callback (const struct tool_def *d, void **userdata);
const char *securer_tool_name (const struct tool_def *d);
const char *securer_tool_description (const struct tool_def *d);
const struct tool_def *securer_tools_at (const struct securer_tools *t, size_t i);
/* Checks args (object) against the declaration: known names, types. */
int securer_tool_check_args (const struct tool_def *d, const json_t *args, securer_err_t *err);
/* Tag of a tagged value ("dbl", ...), "NULL" for null. */
const char *securer_value_tag (const json_t *v);

/* A tool implemented by a host command (securer_tools_add_command). */
struct tool_command {
  char *path;                 /* resolved at registration */
  char **argv;                /* NULL-terminated */
  char **env;                 /* NULL-terminated NAME=VALUE entries added to the clean env */
};
/* NULL for a callback tool. */
const struct tool_command *securer_tool_command (const struct tool_def *d);

/* ---- toolcmd.c: running a tool command in the event loop ---- */
#define SECURER_TOOL_PATH "/usr/local/bin:/usr/bin:/bin"
struct securer_toolcmd;
struct toolcmd_outcome {
  bool exited;                /* else killed by `signal` */
  int code, signal;
  bool too_large;             /* stdout exceeded max_output; the command was killed */
  const char *out;            /* stdout (NUL-terminated), out_len bytes */
  size_t out_len;
  const char *err;            /* the first 4 KiB of stderr */
};
typedef void (*toolcmd_done_fn) (void *data, const struct toolcmd_outcome *o);
/* Starts path/argv/envp in its own process group with `input` on stdin, and
 * watches it on loop; done is called once when it has exited and been
 * reaped, after which the handle is gone.  Fails (ENOENT, ...) when the
 * command cannot be executed. */
int securer_toolcmd_start (struct securer_loop *loop, const char *path, char *const argv[],
                           char *const envp[], const char *input, size_t input_len,
                           size_t max_output, toolcmd_done_fn done, void *data,
                           struct securer_toolcmd **out, securer_err_t *err);
/* SIGKILL to the command's process group, reap, free; done is not called. */
void securer_toolcmd_cancel (struct securer_toolcmd *c);
/* An absolute path for a command name (PATH is searched when it has no
 * '/'); malloc'd, or NULL with *err set. */
char *securer_toolcmd_resolve (const char *name, securer_err_t *err);

/* ---- audit.c ---- */
struct securer_audit;
/* Opens (creating 0600) an append-only JSON-lines log; refuses symlinks,
 * non-regular files and files others may write.  With dir, path is a name
 * confined to dir (securer_open_beneath). */
int securer_audit_open (const char *dir, const char *path, struct securer_audit **out,
                        securer_err_t *err);
/* Writes {"timestamp":..., "event":..., "session_id":..., <fields>}; steals
 * `fields` (may be NULL).  Errors are remembered, not returned: auditing
 * must not change what the session does, see securer_audit_failed(). */
void securer_audit_log (struct securer_audit *a, const char *session_id, const char *event,
                        json_t *fields);
bool securer_audit_failed (const struct securer_audit *a);
void securer_audit_close (struct securer_audit *a);
/* "2024-01-15T10:30:00.123Z" into buf (>= 25 bytes). */
void securer_audit_timestamp (char *buf, size_t n);
#define SECURER_AUDIT_CODE_MAX 10000
/* Tool arguments are logged when their JSON is at most this long; larger
 * ones are summarised by their size. */
#define SECURER_AUDIT_ARGS_MAX 10000
/* A string for an audit field: s cut to at most max bytes, between two
 * characters; *cut says whether anything was left out. */
json_t *securer_audit_text (const char *s, size_t max, bool *cut);

/* ---- value.c ---- */
/* 0 when s[0..len) is padded base64 in its one canonical spelling (no
 * line breaks, unused bits zero); *decoded gets its size, head the first
 * head_len bytes (fewer when shorter). */
int securer_base64_check (const char *s, size_t len, size_t *decoded, unsigned char *head,
                          size_t head_len);
/* data in that spelling, malloc'd and NUL-terminated (*out_len without
 * the NUL); NULL when out of memory. */
char *securer_base64_encode (const void *data, size_t len, size_t *out_len);

/* ---- utf8.c ---- */
/* A malloc'd, NUL-terminated copy of s[0..len) that is valid UTF-8: each
 * byte outside a well-formed sequence, and NUL, becomes \xNN. */
char *securer_utf8_escape (const char *s, size_t len, size_t *out_len);
/* The largest length <= max that does not split a UTF-8 sequence of s. */
size_t securer_utf8_cut (const char *s, size_t len, size_t max);

/* ---- confine.c ---- */
/* Opens name inside dir and nowhere else (openat2 RESOLVE_BENEATH, no
 * symbolic links); "what" names the file in errors. */
int securer_open_beneath (const char *dir, const char *name, int flags, mode_t mode,
                          const char *what, securer_err_t *err);
/* The same beneath an open directory. */
int securer_openat_beneath (int dfd, const char *name, int flags, mode_t mode, const char *what,
                            securer_err_t *err);

/* ---- leftovers.c ---- */
/* Kills every process of the sandbox whose payload (R) has host pid
 * `payload`, except R and the sandbox's init; *ended counts them.  Fails
 * when some could not be killed or kept appearing (bounded in time). */
int securer_end_leftovers (pid_t payload, unsigned *ended, securer_err_t *err);

/* ---- result.c ---- */
/* An execution's result as the JSON object `securer exec --json` prints
 * and `securer serve` replies with (docs/protocol.md); each output line is
 * {"stream":..., line_key: text}.  Values are tagged, or plain when asked.
 * The dumped object stays within max_bytes: output lines are dropped from
 * the end first (counted as dropped), then a value that still does not fit
 * turns the result into status "too_large". */
json_t *securer_result_json (const struct securer_result *r, const char *line_key, bool plain,
                             size_t max_bytes);

/* ---- sanitize.c ---- */
/* Returns a malloc'd copy of msg with absolute paths, pids, the host name,
 * IPv4 and IPv6 addresses replaced by placeholders. */
char *securer_sanitize_error (const char *msg);

/* ---- prevalidate.c ---- */
/* Function names whose calls draw an advisory warning. */
const char *const *securer_risky_calls (void);

/* ---- loop.c ---- */
int securer_loop_fd (const struct securer_loop *l);

/* ---- session.c ---- */
/* securer_session_open, optionally without waiting for R to be ready (so
 * that several start-ups overlap); then securer_session_wait_ready(). */
int securer_session_open_ex (const struct securer_session_opts *opts, bool wait,
                             struct securer_session **out, securer_err_t *err);
int securer_session_wait_ready (struct securer_session *s, securer_err_t *err);

/* ---- policies.c: the sessions' read-only copies of their policies ---- */
struct session_policy;
/* A copy of p with its timeout cleared, shared with the sessions whose
 * policies have the same JSON text; released with _put. */
int securer_session_policy_get (const struct securer_policy *p, struct session_policy **out, securer_err_t *err);
const struct securer_policy *securer_session_policy (const struct session_policy *c);
/* securer_policy_text_digest of p's JSON text. */
const char *securer_session_policy_digest (const struct session_policy *c);
void securer_session_policy_put (struct session_policy *c);

/* ---- templates.c: the templates sessions start from ---- */
#define SECURER_R_BINARY "/usr/lib/R/bin/exec/R"

/* Whether a session of p starts from a template (*use), given the
 * session's own choice, then the policy's setting, where
 * SECURER_SESSION_TEMPLATE replaces the default (auto); and
 * whether it must (*required: no cold start when the template fails).  -1
 * (status 125, with the reason) when it must and this caller or policy
 * cannot have one. */
int securer_session_template_wanted (const struct securer_policy *p, enum securer_session_start choice,
                                     bool *use, bool *required, securer_err_t *err);

/* What starting a template takes besides the policy: the environment of a
 * cold R of the policy, and the runtime's text ("<nlines>\n<text>"). */
struct session_template_prog {
  char *const *env;
  const char *runtime;
  size_t runtime_len;
  bool verbose;
};

/* A template shared by every session of one policy (by its digest) in this
 * process, reference counted: the template's pid namespace holds its
 * sessions, so it lives as long as a session uses it.  Thread-safe. */
struct session_template;

/* SHA-256 (hex) of a policy's JSON text as securer_policy_to_json_text
 * wrote it: how a session names its policy to the template cache, which
 * maps it to the canonical digest once per distinct text. */
#define SECURER_POLICY_DIGEST_HEX 65
void securer_policy_text_digest (const char *json_text, char out[SECURER_POLICY_DIGEST_HEX]);

/* Spawns a session's R from the template of p (*t, started and referenced
 * here when NULL, or replaced when it has died: the reference moves);
 * text_digest is p's securer_policy_text_digest.  p must stay valid while
 * *t is held: a new template keeps a copy. */
int securer_session_template_spawn (struct session_template **t, const struct securer_policy *p,
                                    const char *text_digest, const struct session_template_prog *prog,
                                    const struct securer_spawn_opts *so, struct securer_sandbox **out,
                                    securer_err_t *err);
/* Drops a reference (NULL is fine); the last one kills the template. */
void securer_session_template_release (struct session_template *t);

/* ---- misc ---- */
/* Fills buf with 2*n hex digits of getrandom() output and a NUL. */
int securer_random_hex (char *buf, size_t n, securer_err_t *err);
uint64_t securer_now_ns (void);

#endif
