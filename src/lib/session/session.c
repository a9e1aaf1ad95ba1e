/* A session: one sandboxed R process at a time, driven over the private
 * channel by the event loop.  Everything is event-driven: the channel, R's
 * stdout and stderr, the sandbox's pollfd (R exited) and a timerfd (start-up
 * and execution timeouts) are watched by one epoll loop; nothing polls.
 *
 * States: DEAD (no R) -> STARTING (spawned, "ready" not yet seen) -> IDLE.
 * An execution may be sent while STARTING (the request waits in the pipe),
 * which is how a cold start overlaps R's own start-up.  Any message R sends
 * that does not fit the current state is a protocol violation: R is killed
 * and the session is DEAD until the next execution restarts it. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "securer/paths.h"
#include "securer/sandbox.h"
#include "session/internal.h"

#define RUNTIME_PATH "runtime/r/runtime.R"
#define MAX_LINE 65536
#define DEFAULT_START_TIMEOUT_MS 30000u

/* The channel is R's fd 0: one end of a socketpair.  R can only reach a
 * descriptor without open() through file("stdin") (a dup of fd 0; reopening
 * /proc/self/fd/N is refused by Landlock for pipes and sockets), and a
 * socket lets the same descriptor carry both directions.  The bootstrap
 * reads the runtime's text from it and calls it with the connection; the
 * runtime keeps reading requests from the same buffered connection. */
static const char bootstrap[] =
  "local({i<-file(\"stdin\",\"r\");n<-as.integer(readLines(i,1L));"
  "eval(parse(text=readLines(i,n,encoding=\"UTF-8\"),keep.source=FALSE))(i)})";

enum state { S_DEAD = 0, S_STARTING, S_IDLE };
enum job { JOB_NONE = 0, JOB_EXEC, JOB_PARSE };

struct linebuf {
  char *buf;
  size_t len, cap;
};

struct securer_session {
  char id[40];
  const struct securer_policy *policy;  /* of pol */
  struct session_policy *pol;      /* the shared copy: timeout cleared */
  struct securer_tools *tools;
  struct securer_audit *audit;
  json_t *audit_fields;            /* added to every audit line; may be NULL */
  json_t *net_denied;              /* network allow: this execution's refusals (on_net) */
  unsigned max_executions;
  bool sanitize;
  securer_pre_execute_fn pre_execute;
  void *pre_execute_data;
  size_t max_message;
  uint64_t start_timeout_ms;
  void (*on_tool_call) (void *, struct securer_session *, const struct securer_tool_call *);
  void *on_tool_call_data;
  void (*on_start) (void *, struct securer_session *, const char *);
  void *on_start_data;
  bool verbose;
  struct securer_loop *loop;
  bool own_loop;
  char *runtime;                   /* "<nlines>\n<text>\n" */
  size_t runtime_len;
  bool want_template;              /* R starts from the policy's template */
  bool template_required;          /* and may not fall back to a cold start */
  struct session_template *tpl;    /* referenced while R may be its fork */

  /* the running R */
  enum state state;
  struct securer_sandbox *sb;
  bool from_template;
  pid_t pid;
  struct securer_channel ch;
  bool ch_watch_out;
  int out_fd, err_fd, poll_fd;
  struct linebuf lb_out, lb_err;
  int timer_fd;
  char *start_error;               /* why the last start failed */
  char *start_stderr;              /* what R printed on stderr while starting */

  /* the current job */
  enum job job;
  uint64_t next_id, cur_id;
  struct securer_exec_opts xo;
  struct securer_result res;
  bool finished;
  enum securer_exec_status halt;   /* set when the job must fail whatever R says */
  char *halt_msg;
  bool tool_pending;
  uint64_t tool_call_id;
  char *tool_name;
  struct securer_toolcmd *tool_cmd; /* the command answering the pending call */
  uint64_t tool_t0;
  uint64_t t0;
  unsigned lines;                  /* output lines kept by the current execution */
  size_t out_bytes;                /* and their bytes */
  size_t out_cap;                  /* slots allocated in res.output */
  unsigned tools_refused;          /* calls past max_tool_calls */
  bool tool_refused;               /* the pending call is one of them: its reply is not logged */
  securer_done_fn done;
  void *done_data;
  unsigned executions;
  bool opened;                     /* session_start was logged */
};

static void child_stop (struct securer_session *s);
static int child_start (struct securer_session *s, securer_err_t *err);
static void finish (struct securer_session *s, enum securer_exec_status st, const char *msg);

static const char *
start_kind (const struct securer_session *s)
{
  return s->from_template ? "template" : "cold";
}

const char *
securer_exec_status_name (enum securer_exec_status s)
{
  static const char *const names[] = { "ok", "error", "syntax", "timeout", "tool_limit",
                                       "rejected", "crashed", "too_large" };
  return (unsigned) s < sizeof names / sizeof names[0] ? names[s] : "?";
}

void
securer_result_clear (struct securer_result *r)
{
  if (r == NULL)
    return;
  json_decref (r->value);
  free (r->error);
  free (r->error_call);
  for (size_t i = 0; i < r->n_output; i++)
    free (r->output[i].text);
  free (r->output);
  for (size_t i = 0; i < r->n_warnings; i++)
    free (r->warnings[i]);
  free (r->warnings);
  for (size_t i = 0; i < r->n_plots; i++)
    free (r->plots[i].data);
  free (r->plots);
  json_decref (r->network_denied);
  memset (r, 0, sizeof *r);
}

/* ---- policy ------------------------------------------------------------- */

/* The session's copy of its policy (policies.c); NULL means the shipped
 * "r" policy. */
static int
copy_policy (const struct securer_policy *p, struct session_policy **out, securer_err_t *err)
{
  struct securer_policy *loaded = NULL;
  if (p == NULL)
    {
      char *path = NULL;
      if (securer_policy_find ("r", &path, err) < 0)
        return securer_error_prefix (err, "session policy");
      int rc = securer_policy_load_file (path, &loaded, NULL, err);
      free (path);
      if (rc < 0)
        return securer_error_prefix (err, "session policy");
      p = loaded;
    }
  int rc = securer_session_policy_get (p, out, err);
  securer_policy_free (loaded);
  return rc;
}

static bool
policy_sets_env (const struct securer_policy *p, const char *name)
{
  for (size_t i = 0; i < p->n_env_set; i++)
    if (strcmp (p->env_set[i].name, name) == 0)
      return true;
  return false;
}

static int
load_runtime (struct securer_session *s, securer_err_t *err)
{
  /* Installed as $(pkgdatadir)/runtime/r/; in the source tree (found when
   * running from the build tree) it lives under src/. */
  char *path = securer_data_find (RUNTIME_PATH, err);
  if (path == NULL)
    {
      securer_err_t e2 = NULL;
      path = securer_data_find ("src/" RUNTIME_PATH, &e2);
      securer_error_free (&e2);
      if (path == NULL)
        return securer_error_prefix (err, "R runtime");
      securer_error_free (err);
    }
  FILE *f = fopen (path, "re");
  if (f == NULL)
    {
      int e = errno;
      securer_error_set (err, e, "R runtime %s", path);
      free (path);
      return -1;
    }
  char *text = NULL;
  size_t len = 0;
  FILE *m = open_memstream (&text, &len);
  char buf[8192];
  size_t n, lines = 0;
  while (m != NULL && (n = fread (buf, 1, sizeof buf, f)) > 0)
    {
      fwrite (buf, 1, n, m);
      for (size_t i = 0; i < n; i++)
        lines += buf[i] == '\n';
    }
  bool bad = m == NULL || ferror (f);
  fclose (f);
  if (m != NULL)
    fclose (m);
  if (bad || text == NULL)
    {
      free (text);
      securer_error_set (err, EIO, "R runtime %s: read", path);
      free (path);
      return -1;
    }
  free (path);
  if (len == 0 || text[len - 1] != '\n')
    lines++;
  if (asprintf (&s->runtime, "%zu\n%s%s", lines, text, (len && text[len - 1] == '\n') ? "" : "\n") < 0)
    {
      free (text);
      return securer_error_set (err, ENOMEM, "R runtime");
    }
  free (text);
  s->runtime_len = strlen (s->runtime);
  return 0;
}

/* ---- output lines ----------------------------------------------------------- */

static bool
grow_output (struct securer_session *s)
{
  size_t cap = s->out_cap ? s->out_cap * 2 : 64;
  struct securer_output_line *o = realloc (s->res.output, cap * sizeof *o);
  if (o == NULL)
    return false;
  s->res.output = o;
  s->out_cap = cap;
  return true;
}

/* Keeps one line of output within the execution's caps.  Past a cap the
 * rest of the execution's output is still read (so R never blocks on a
 * full pipe) but only counted: the host keeps a bounded amount whatever R
 * prints. */
static void
emit_line (struct securer_session *s, enum securer_stream stream, const char *text, size_t len)
{
  if (s->job == JOB_NONE && s->state == S_STARTING && stream == SECURER_STDERR)
    {
      /* Keep what R says while starting: it explains a failed start. */
      size_t have = s->start_stderr ? strlen (s->start_stderr) : 0;
      size_t n;
      char *esc = have < 2048 ? securer_utf8_escape (text, len, &n) : NULL;
      char *p = esc ? realloc (s->start_stderr, have + n + 2) : NULL;
      if (p != NULL)
        {
          if (have)
            p[have++] = ' ';
          memcpy (p + have, esc, n + 1);
          s->start_stderr = p;
        }
      free (esc);
    }
  if (s->job != JOB_EXEC || s->finished)
    return;  /* output outside an execution (or after it ended) is dropped */
  size_t n = 0;
  char *copy = NULL;
  if (!s->res.output_truncated && s->lines < s->xo.max_output_lines)
    copy = securer_utf8_escape (text, len, &n);
  if (copy == NULL || n > s->xo.max_output_bytes - s->out_bytes
      || (s->res.n_output == s->out_cap && !grow_output (s)))
    {
      free (copy);
      s->res.output_truncated = true;
      s->res.output_dropped_lines++;
      s->res.output_dropped_bytes += len;
      return;
    }
  s->lines++;
  s->out_bytes += n;
  struct securer_output_line *o = &s->res.output[s->res.n_output++];
  o->stream = stream;
  o->text = copy;
  if (s->xo.on_output)
    s->xo.on_output (s->xo.output_data, stream, copy);
}

static void
linebuf_flush_partial (struct securer_session *s, struct linebuf *lb, enum securer_stream st)
{
  if (lb->len > 0)
    emit_line (s, st, lb->buf, lb->len);
  lb->len = 0;
}

/* Reads what is available; returns false at EOF or on error. */
static bool
pump_output (struct securer_session *s, int fd, struct linebuf *lb, enum securer_stream st)
{
  char buf[16384];
  for (;;)
    {
      ssize_t r = read (fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return errno == EAGAIN;
      if (r == 0)
        return false;
      for (ssize_t i = 0; i < r;)
        {
          char *nl = memchr (buf + i, '\n', (size_t) (r - i));
          size_t take = nl ? (size_t) (nl - (buf + i)) : (size_t) (r - i);
          if (lb->len + take > MAX_LINE)
            take = MAX_LINE - lb->len;
          if (lb->cap < lb->len + take + 1)
            {
              size_t cap = lb->cap ? lb->cap : 256;
              while (cap < lb->len + take + 1)
                cap *= 2;
              char *p = realloc (lb->buf, cap);
              if (p == NULL)
                return false;
              lb->buf = p;
              lb->cap = cap;
            }
          memcpy (lb->buf + lb->len, buf + i, take);
          lb->len += take;
          i += (ssize_t) take;
          if (lb->len >= MAX_LINE || (nl && buf + i == nl))
            {
              emit_line (s, st, lb->buf, lb->len);
              lb->len = 0;
              if (nl && buf + i == nl)
                i++;
            }
        }
    }
}

static void
on_out (void *data, uint32_t ev)
{
  struct securer_session *s = data;
  if (!pump_output (s, s->out_fd, &s->lb_out, SECURER_STDOUT))
    {
      securer_loop_del (s->loop, s->out_fd);
      close (s->out_fd);
      s->out_fd = -1;
    }
}

static void
on_err (void *data, uint32_t ev)
{
  struct securer_session *s = data;
  if (!pump_output (s, s->err_fd, &s->lb_err, SECURER_STDERR))
    {
      securer_loop_del (s->loop, s->err_fd);
      close (s->err_fd);
      s->err_fd = -1;
    }
}

/* ---- audit helpers ---------------------------------------------------------- */

static void
audit (struct securer_session *s, const char *event, json_t *fields)
{
  if (s->audit != NULL && s->audit_fields != NULL)
    {
      if (fields == NULL)
        fields = json_object ();
      json_object_update_missing (fields, s->audit_fields);
    }
  securer_audit_log (s->audit, s->id, event, fields);
}

/* What a session_start line records: which policy (by digest, so that an
 * edited file shows), what it holds the session to, and as which host uid
 * it runs: enough to tell afterwards what ran where under what. */
static json_t *
start_fields (const struct securer_session *s)
{
  const struct securer_limits *l = &s->policy->limits;
  json_t *rl = json_object ();
  for (int i = 0; i < SECURER_RLIMIT_COUNT; i++)
    if (l->rlimit[i].set)
      json_object_set_new (rl, securer_rlimit_name ((enum securer_rlimit_id) i),
                           l->rlimit[i].hard == UINT64_MAX ? json_null ()
                                                           : json_integer ((json_int_t) l->rlimit[i].hard));
  json_t *cg = json_pack ("{s:I, s:I, s:f}", "memory", (json_int_t) l->cgroup_memory, "pids",
                          (json_int_t) l->cgroup_pids, "cpu", l->cgroup_cpu_millis / 1000.0);
  char *degraded = s->sb != NULL ? securer_sandbox_degraded (s->sb) : NULL;
  json_t *o = json_pack ("{s:i, s:s, s:s?, s:s?, s:o, s:o, s:s?}", "pid", (int) s->pid, "start", start_kind (s),
                         "policy", s->policy->name, "policy_digest", securer_session_policy_digest (s->pol),
                         "rlimits", rl, "cgroup", cg, "degraded", degraded);
  free (degraded);
  if (o != NULL && s->sb != NULL)
    json_object_set_new (o, "host_uid", json_integer ((json_int_t) securer_sandbox_host_uid (s->sb)));
  return o;
}

static double
secs_since (uint64_t t0)
{
  return (double) (securer_now_ns () - t0) / 1e9;
}

/* ---- the channel ---------------------------------------------------------------- */

/* "R failed to start: why: what R printed" (malloc'd). */
static char *
start_failure (const struct securer_session *s)
{
  char *m = NULL;
  if (asprintf (&m, "R failed to start: %s%s%s",
                s->start_error ? s->start_error : "it closed the channel",
                s->start_stderr ? ": " : "", s->start_stderr ? s->start_stderr : "") < 0)
    return NULL;
  return m;
}

/* Tells an on_start listener how the start of R ended. */
static void
start_done (struct securer_session *s, bool ok)
{
  if (s->on_start == NULL)
    return;
  char *m = ok ? NULL : start_failure (s);
  s->on_start (s->on_start_data, s, ok ? NULL : m ? m : "R failed to start");
  free (m);
}

static void
kill_and_fail (struct securer_session *s, enum securer_exec_status st, const char *why)
{
  bool starting = s->state == S_STARTING;
  child_stop (s);
  if (starting)
    {
      if (s->start_error == NULL)
        s->start_error = strdup (why);
      start_done (s, false);
    }
  if (s->job != JOB_NONE && !s->finished)
    finish (s, st, why);
}

/* R is exiting before it was ready (a loader error, a limit): its exit
 * status, seen on the pollfd, says more than the closed channel, so only the
 * channel goes now.  The start timer still bounds the wait. */
static void
channel_lost_while_starting (struct securer_session *s)
{
  s->ch_watch_out = false;
  if (s->ch.rfd >= 0)
    securer_loop_del (s->loop, s->ch.rfd);
  securer_channel_close (&s->ch);
}

static bool
peer_gone (const securer_err_t e)
{
  int n = securer_error_errno (e);
  return n == EPIPE || n == ECONNRESET;
}

/* Asks the loop for EPOLLOUT on the channel while bytes wait to be sent. */
static int
watch_out (struct securer_session *s, securer_err_t *err)
{
  bool want = securer_channel_pending (&s->ch);
  if (want == s->ch_watch_out || s->ch.rfd < 0)
    return 0;
  if (securer_loop_mod (s->loop, s->ch.rfd, EPOLLIN | (want ? EPOLLOUT : 0), err) < 0)
    return -1;
  s->ch_watch_out = want;
  return 0;
}

static int
send_msg (struct securer_session *s, char *msg, securer_err_t *err)
{
  if (msg == NULL)
    return securer_error_set (err, EINVAL, "cannot encode the message (invalid UTF-8?)");
  int rc = securer_channel_send (&s->ch, msg, strlen (msg), err);
  free (msg);
  if (rc < 0)
    return -1;
  return watch_out (s, err);
}

static void on_channel (void *data, uint32_t ev);

static void
on_sock (void *data, uint32_t ev)
{
  struct securer_session *s = data;
  if (ev & EPOLLOUT)
    {
      securer_err_t e = NULL;
      if (securer_channel_flush (&s->ch, &e) < 0 || watch_out (s, &e) < 0)
        {
          if (s->state == S_STARTING && s->poll_fd >= 0 && peer_gone (e))
            {
              securer_error_free (&e);
              return channel_lost_while_starting (s);
            }
          char *m = NULL;
          if (asprintf (&m, "R is not reading its requests: %s", securer_error_text (e)) < 0)
            m = NULL;
          kill_and_fail (s, SECURER_EXEC_CRASHED, m ? m : "R is not reading its requests");
          free (m);
          securer_error_free (&e);
          return;
        }
    }
  if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
    on_channel (s, ev);
}

static void
reply_tool (struct securer_session *s, uint64_t id, const json_t *value, const char *error)
{
  if (!s->tool_refused)
    audit (s, "tool_result", json_pack ("{s:s, s:f, s:s?}", "tool", s->tool_name ? s->tool_name : "",
                                        "elapsed", secs_since (s->tool_t0), "error", error));
  s->tool_refused = false;
  s->tool_pending = false;
  free (s->tool_name);
  s->tool_name = NULL;
  securer_err_t e = NULL;
  char *msg = securer_proto_tool_result (id, value, error);
  if (msg != NULL && strlen (msg) > s->max_message)
    {
      free (msg);
      char *m = NULL;
      if (asprintf (&m, "tool result too large to send (limit %zu bytes)", s->max_message) >= 0)
        {
          msg = securer_proto_tool_result (id, NULL, m);
          free (m);
        }
      else
        msg = NULL;
    }
  if (send_msg (s, msg, &e) < 0)
    kill_and_fail (s, SECURER_EXEC_CRASHED, securer_error_text (e));
  securer_error_free (&e);
}

static void
violation (struct securer_session *s, const char *what)
{
  char *m = NULL;
  if (asprintf (&m, "protocol violation by R, session stopped: %s", what) < 0)
    m = NULL;
  audit (s, "protocol_violation", json_pack ("{s:s}", "detail", what));
  kill_and_fail (s, SECURER_EXEC_CRASHED, m ? m : what);
  free (m);
}

/* ---- tools run as host commands ------------------------------------------ */

static void
on_tool_cmd_done (void *data, const struct toolcmd_outcome *o)
{
  struct securer_session *s = data;
  s->tool_cmd = NULL;
  if (s->state == S_DEAD || !s->tool_pending)
    return;
  const char *tool = s->tool_name ? s->tool_name : "?";
  char *msg = NULL;
  json_t *value = NULL;
  if (o->too_large)
    {
      if (asprintf (&msg, "tool '%s' printed more than %zu bytes (the message size limit); "
                          "it was stopped and its output refused", tool, s->max_message) < 0)
        msg = NULL;
    }
  else if (!o->exited)
    {
      if (asprintf (&msg, "tool '%s' was killed by signal %d", tool, o->signal) < 0)
        msg = NULL;
    }
  else if (o->code != 0)
    {
      size_t n = strcspn (o->err, "\n");
      if (n > 0)
        msg = securer_utf8_escape (o->err, n, NULL);
      else if (asprintf (&msg, "tool '%s' failed (exit status %d)", tool, o->code) < 0)
        msg = NULL;
    }
  else
    {
      json_error_t je;
      json_t *p = json_loadb (o->out, o->out_len, JSON_DECODE_ANY, &je);
      securer_err_t e = NULL;
      if (p == NULL)
        {
          if (asprintf (&msg, "tool '%s' printed invalid JSON: %s", tool, je.text) < 0)
            msg = NULL;
        }
      else if ((value = securer_value_from_plain (p, &e)) == NULL)
        {
          if (asprintf (&msg, "tool '%s' printed an unusable value: %s", tool,
                        securer_error_text (e)) < 0)
            msg = NULL;
          securer_error_free (&e);
        }
      json_decref (p);
    }
  if (value != NULL)
    reply_tool (s, s->tool_call_id, value, NULL);
  else
    reply_tool (s, s->tool_call_id, NULL, msg ? msg : "tool failed");
  json_decref (value);
  free (msg);
}

static bool
env_has (char *const *env, const char *name)
{
  size_t n = strlen (name);
  for (size_t i = 0; env && env[i]; i++)
    if (strncmp (env[i], name, n) == 0 && env[i][n] == '=')
      return true;
  return false;
}

static void
free_strv (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

/* A clean environment for a tool command: it runs with the host's
 * privileges, but the host's secrets in its environment are not the tool's
 * business.  Entries the tool declares win over the defaults. */
static char **
tool_env (const struct securer_session *s, const struct tool_command *cmd)
{
  static const char *const pass[] = { "HOME", "USER", "LOGNAME", "TZ", "TMPDIR" };
  size_t n_extra = 0;
  while (cmd->env[n_extra])
    n_extra++;
  char **env = calloc (n_extra + 16, sizeof *env);
  if (env == NULL)
    return NULL;
  size_t n = 0;
  bool oom = false;
#define ADD(...)                                                      \
  do {                                                                \
    if (asprintf (&env[n], __VA_ARGS__) < 0)                          \
      {                                                               \
        env[n] = NULL;                                                \
        oom = true;                                                   \
      }                                                               \
    else                                                              \
      n++;                                                            \
  } while (0)
  if (!env_has (cmd->env, "PATH"))
    ADD ("PATH=%s", SECURER_TOOL_PATH);
  if (!env_has (cmd->env, "LANG"))
    ADD ("LANG=C.UTF-8");
  for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++)
    {
      const char *val = getenv (pass[i]);
      if (val != NULL && !env_has (cmd->env, pass[i]))
        ADD ("%s=%s", pass[i], val);
    }
  ADD ("SECURER_TOOL=%s", s->tool_name ? s->tool_name : "");
  ADD ("SECURER_SESSION_ID=%s", s->id);
  for (size_t i = 0; i < n_extra; i++)
    ADD ("%s", cmd->env[i]);
#undef ADD
  if (oom)
    {
      free_strv (env);
      return NULL;
    }
  return env;
}

static void
start_tool_command (struct securer_session *s, const struct tool_command *cmd,
                    const struct proto_msg *m)
{
  /* The plain form may be much larger than what R sent: bounded. */
  securer_err_t e = NULL;
  json_t *vals = json_array (), *names = json_array ();
  const char *key;
  json_t *v;
  json_object_foreach (m->args, key, v)
    {
      json_array_append (vals, v);
      json_array_append_new (names, json_string (key));
    }
  json_t *tagged = json_pack ("{s:s, s:o, s:o}", "t", "list", "v", vals, "n", names);
  json_t *plain = securer_value_to_plain_max (tagged, 4 * s->max_message, &e);
  json_decref (tagged);
  char *input = plain ? json_dumps (plain, JSON_COMPACT | JSON_REAL_PRECISION (17)) : NULL;
  json_decref (plain);
  char **env = tool_env (s, cmd);
  if (e != NULL)
    securer_error_prefix (&e, "arguments");
  else if (input == NULL || env == NULL)
    securer_error_set (&e, ENOMEM, "cannot encode the arguments");
  else
    securer_toolcmd_start (s->loop, cmd->path, cmd->argv, env, input, strlen (input),
                           s->max_message, on_tool_cmd_done, s, &s->tool_cmd, &e);
  free_strv (env);
  free (input);
  if (e != NULL)
    {
      char *msg = NULL;
      if (asprintf (&msg, "tool '%s': %s", m->tool, securer_error_text (e)) < 0)
        msg = NULL;
      reply_tool (s, m->id, NULL, msg ? msg : "tool command failed");
      free (msg);
      securer_error_free (&e);
    }
}

/* Arguments up to SECURER_AUDIT_ARGS_MAX bytes of JSON are logged as they
 * are; larger ones only by their size. */
static void
audit_tool_call (struct securer_session *s, const struct proto_msg *m)
{
  if (s->audit == NULL)
    return;
  size_t size = json_dumpb (m->args, NULL, 0, JSON_COMPACT | JSON_REAL_PRECISION (17));
  if (size <= SECURER_AUDIT_ARGS_MAX)
    audit (s, "tool_call", json_pack ("{s:s, s:O}", "tool", m->tool, "args", m->args));
  else
    audit (s, "tool_call", json_pack ("{s:s, s:b, s:I}", "tool", m->tool, "args_truncated", 1,
                                      "args_bytes", (json_int_t) size));
}

static void
handle_tool_call (struct securer_session *s, struct proto_msg *m)
{
  if (s->job != JOB_EXEC || s->tool_pending)
    return violation (s, s->tool_pending ? "tool call while another is pending"
                                        : "tool call outside an execution");
  s->res.tool_calls++;
  s->tool_t0 = securer_now_ns ();
  s->tool_call_id = m->id;
  s->tool_pending = true;
  free (s->tool_name);
  s->tool_name = strdup (m->tool);
  if (s->res.tool_calls > s->xo.max_tool_calls)
    {
      /* Only the first refused call is logged, and never with its
       * arguments: code that keeps calling cannot grow the log; the
       * execution's end records how many were refused. */
      if (s->tools_refused++ == 0)
        audit (s, "tool_call", json_pack ("{s:s, s:s}", "tool", m->tool, "refused", "max_tool_calls"));
      char msg[96];
      snprintf (msg, sizeof msg, "Maximum tool calls (%u) exceeded", s->xo.max_tool_calls);
      if (s->halt == SECURER_EXEC_OK)
        {
          s->halt = SECURER_EXEC_TOOL_LIMIT;
          s->halt_msg = strdup (msg);
        }
      s->tool_refused = true;
      return reply_tool (s, m->id, NULL, msg);
    }
  /* A name that is no R identifier is never a tool; it is neither
   * logged nor quoted back (it may be anything R's code made up). */
  if (!securer_proto_valid_name (m->tool))
    return reply_tool (s, m->id, NULL, "Unknown tool (its name is not an R identifier)");
  audit_tool_call (s, m);
  const struct tool_def *d = securer_tools_find (s->tools, m->tool);
  if (d == NULL)
    {
      char msg[300];
      snprintf (msg, sizeof msg, "Unknown tool: %s", m->tool);
      return reply_tool (s, m->id, NULL, msg);
    }
  securer_err_t e = NULL;
  if (securer_tool_check_args (d, m->args, &e) < 0)
    {
      reply_tool (s, m->id, NULL, securer_error_text (e));
      securer_error_free (&e);
      return;
    }
  const struct tool_command *cmd = securer_tool_command (d);
  if (cmd != NULL)
    return start_tool_command (s, cmd, m);
  void *ud = NULL;
  securer_tool_fn fn = securer_tool_callback (d, &ud);
  struct securer_tool_call call = { .session_id = s->id, .call_id = m->id, .tool = m->tool,
                                    .args = m->args };
  if (fn == NULL)
    {
      if (s->on_tool_call == NULL)
        return reply_tool (s, m->id, NULL, "tool has no implementation on the host");
      s->on_tool_call (s->on_tool_call_data, s, &call);
      return;
    }
  json_t *result = NULL;
  char *error = NULL;
  enum securer_tool_status ts = fn (ud, &call, &result, &error);
  if (ts == SECURER_TOOL_DEFERRED)
    {
      if (s->on_tool_call)
        s->on_tool_call (s->on_tool_call_data, s, &call);
      return;
    }
  if (s->state == S_DEAD || !s->tool_pending)
    {
      /* R died (or was stopped) while the tool ran. */
      json_decref (result);
      free (error);
      return;
    }
  if (ts == SECURER_TOOL_ERROR)
    reply_tool (s, m->id, NULL, error ? error : "tool failed");
  else if (securer_value_validate (result, &e) < 0)
    {
      char *msg = NULL;
      if (asprintf (&msg, "tool returned an invalid value: %s", securer_error_text (e)) < 0)
        msg = NULL;
      reply_tool (s, m->id, NULL, msg ? msg : "tool returned an invalid value");
      free (msg);
      securer_error_free (&e);
    }
  else
    reply_tool (s, m->id, result ? result : json_null (), NULL);
  json_decref (result);
  free (error);
}

int
securer_session_tool_reply (struct securer_session *s, uint64_t call_id, const json_t *value,
                            const char *error, securer_err_t *err)
{
  if (!s->tool_pending || s->tool_call_id != call_id || s->job != JOB_EXEC || s->finished)
    return securer_error_set (err, ENOENT, "no pending tool call %llu", (unsigned long long) call_id);
  if (error == NULL && securer_value_validate (value, err) < 0)
    return securer_error_prefix (err, "tool reply");
  reply_tool (s, call_id, value, error);
  return 0;
}

/* stdout/stderr may still hold output written before the reply; pipes are
 * synchronous, so reading until EAGAIN collects all of it. */
static void
drain_output (struct securer_session *s)
{
  if (s->out_fd >= 0)
    on_out (s, EPOLLIN);
  if (s->err_fd >= 0)
    on_err (s, EPOLLIN);
}

static char **
copy_strings (const json_t *arr, size_t *n)
{
  *n = 0;
  size_t k = json_array_size (arr);
  if (k == 0)
    return NULL;
  char **v = calloc (k, sizeof *v);
  if (v == NULL)
    return NULL;
  for (size_t i = 0; i < k; i++)
    {
      v[i] = strdup (json_string_value (json_array_get (arr, i)));
      if (v[i] == NULL)
        break;
      *n = i + 1;
    }
  return v;
}

/* A page R sent: kept while the execution's caps allow (R keeps to them
 * too, but it is not trusted to), else counted. */
static void
keep_plot (struct securer_session *s, const struct proto_msg *m)
{
  struct securer_result *r = &s->res;
  size_t used = 0;
  for (size_t i = 0; i < r->n_plots; i++)
    used += r->plots[i].bytes;
  if (r->n_plots >= s->xo.max_plots || m->plot_bytes > s->xo.max_plot_bytes - used
      || m->plot_format != s->xo.plot_format)
    {
      r->plots_dropped++;
      return;
    }
  struct securer_plot *grown = realloc (r->plots, (r->n_plots + 1) * sizeof *grown);
  char *data = strndup (m->plot_data, m->plot_data_len);
  if (grown == NULL || data == NULL)
    {
      if (grown != NULL)
        r->plots = grown;
      free (data);
      r->plots_dropped++;
      return;
    }
  r->plots = grown;
  r->plots[r->n_plots++] = (struct securer_plot) { .format = m->plot_format, .width = m->plot_width,
                                                   .height = m->plot_height, .data = data,
                                                   .bytes = m->plot_bytes };
}

static void
handle_line (struct securer_session *s, const char *line, size_t len)
{
  struct proto_msg m;
  securer_err_t e = NULL;
  if (securer_proto_parse (line, len, &m, &e) < 0)
    {
      violation (s, securer_error_text (e));
      securer_error_free (&e);
      return;
    }
  if (m.type == PROTO_READY)
    {
      securer_proto_msg_clear (&m);
      if (s->state != S_STARTING)
        return violation (s, "unexpected ready");
      s->state = S_IDLE;
      if (s->job == JOB_NONE)
        {
          struct itimerspec off = { { 0, 0 }, { 0, 0 } };
          timerfd_settime (s->timer_fd, 0, &off, NULL);
        }
      start_done (s, true);
      return;
    }
  if (s->job == JOB_NONE || s->finished || m.id != s->cur_id)
    {
      violation (s, "message for no current request");
      securer_proto_msg_clear (&m);
      return;
    }
  switch (m.type)
    {
    case PROTO_TOOL_CALL:
      handle_tool_call (s, &m);
      break;
    case PROTO_RESULT:
      if (s->job != JOB_EXEC || s->tool_pending)
        {
          violation (s, "unexpected result");
          break;
        }
      drain_output (s);
      s->res.plots_dropped += m.plots_dropped;
      s->res.value = json_incref (m.value);
      s->res.visible = m.visible;
      s->res.warnings = copy_strings (m.warnings, &s->res.n_warnings);
      finish (s, SECURER_EXEC_OK, NULL);
      break;
    case PROTO_ERROR:
      if (s->tool_pending)
        {
          violation (s, "error while a tool call is pending");
          break;
        }
      if (s->job == JOB_EXEC)
        {
          drain_output (s);
          s->res.plots_dropped += m.plots_dropped;
          /* The warnings raised before the error, and its call. */
          s->res.warnings = copy_strings (m.warnings, &s->res.n_warnings);
          if (m.call != NULL && strcmp (m.kind, "error") == 0)
            s->res.error_call = s->sanitize ? securer_sanitize_error (m.call) : strdup (m.call);
        }
      finish (s, strcmp (m.kind, "syntax") == 0      ? SECURER_EXEC_SYNTAX
                 : strcmp (m.kind, "too_large") == 0 ? SECURER_EXEC_TOO_LARGE
                                                     : SECURER_EXEC_ERROR,
              m.message);
      break;
    case PROTO_PLOT:
      if (s->job != JOB_EXEC || s->tool_pending)
        {
          violation (s, "unexpected plot");
          break;
        }
      keep_plot (s, &m);
      break;
    case PROTO_PARSED:
      if (s->job != JOB_PARSE)
        {
          violation (s, "unexpected parse reply");
          break;
        }
      s->res.warnings = copy_strings (m.warnings, &s->res.n_warnings);
      finish (s, SECURER_EXEC_OK, NULL);
      break;
    default:
      violation (s, "unexpected message");
    }
  securer_proto_msg_clear (&m);
}

static void
on_channel (void *data, uint32_t ev)
{
  struct securer_session *s = data;
  for (;;)
    {
      if (s->ch.rfd < 0)
        return;
      const char *line;
      size_t len;
      securer_err_t e = NULL;
      enum channel_read_status st = securer_channel_read (&s->ch, &line, &len, &e);
      switch (st)
        {
        case CHANNEL_AGAIN:
          return;
        case CHANNEL_LINE:
          handle_line (s, line, len);
          break;
        case CHANNEL_TOO_LARGE:
          {
            char m[128];
            snprintf (m, sizeof m, "message exceeds the limit of %zu bytes", s->max_message);
            violation (s, m);
            return;
          }
        case CHANNEL_EOF:
        case CHANNEL_ERROR:
          if (s->state == S_STARTING && s->poll_fd >= 0)
            {
              securer_error_free (&e);
              channel_lost_while_starting (s);
              return;
            }
          drain_output (s);
          kill_and_fail (s, SECURER_EXEC_CRASHED,
                         st == CHANNEL_EOF ? "R closed the channel (it exited)" : securer_error_text (e));
          securer_error_free (&e);
          return;
        }
    }
}

/* network allow: every decision of the proxy goes to the audit log; the
 * refusals of this execution to its result as well, one entry per
 * destination and reason with a count. */
#define NET_DENIED_MAX 64

static void
on_net (void *ctx, const struct securer_net_event *ev)
{
  struct securer_session *s = ctx;
  bool allowed = ev->verdict == SECURER_NET_ALLOWED;
  audit (s, "network", json_pack ("{s:s, s:i, s:s, s:b, s:s?, s:s}", "host", ev->host, "port", (int) ev->port,
                                  "via", ev->via, "allowed", allowed && ev->addr != NULL, "addr", ev->addr,
                                  "reason", ev->reason));
  if (allowed)
    return;
  static const char *const reasons[] = {
    [SECURER_NET_DENIED_NO_RULE] = "no-rule", [SECURER_NET_DENIED_RULE] = "deny-rule",
    [SECURER_NET_DENIED_PRIVATE] = "private-address", [SECURER_NET_ALLOWED] = "allowed",
  };
  if (s->net_denied == NULL && (s->net_denied = json_array ()) == NULL)
    return;
  size_t i;
  json_t *e;
  json_array_foreach (s->net_denied, i, e)
    if (json_integer_value (json_object_get (e, "port")) == ev->port
        && strcmp (json_string_value (json_object_get (e, "host")), ev->host) == 0
        && strcmp (json_string_value (json_object_get (e, "reason")), reasons[ev->verdict]) == 0)
      {
        json_object_set_new (e, "count", json_integer (json_integer_value (json_object_get (e, "count")) + 1));
        return;
      }
  if (json_array_size (s->net_denied) < NET_DENIED_MAX)
    json_array_append_new (s->net_denied, json_pack ("{s:s, s:i, s:s, s:i}", "host", ev->host, "port",
                                                     (int) ev->port, "reason", reasons[ev->verdict], "count", 1));
}

/* "MESSAGE (the sandbox's network policy refused: a.example:443, b:80)" */
static char *
net_denied_suffix (const char *msg, json_t *denied)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    return NULL;
  fprintf (f, "%s (the sandbox's network policy refused: ", msg);
  size_t i;
  json_t *e;
  json_array_foreach (denied, i, e)
    {
      if (i == 8)
        {
          fprintf (f, ", …");
          break;
        }
      fprintf (f, "%s%s:%d", i ? ", " : "", json_string_value (json_object_get (e, "host")),
               (int) json_integer_value (json_object_get (e, "port")));
    }
  fputc (')', f);
  fclose (f);
  return buf;
}

/* R exited (or the sandbox stopped it). */
static void
on_poll (void *data, uint32_t ev)
{
  struct securer_session *s = data;
  struct securer_status st;
  memset (&st, 0, sizeof st);
  securer_err_t e = NULL;
  int rc = securer_sandbox_dispatch (s->sb, &st, &e);
  if (rc == 0)
    {
      securer_error_free (&e);
      return;
    }
  char why[256];
  if (rc < 0)
    snprintf (why, sizeof why, "R process lost: %s", securer_error_text (e));
  else if (st.exited)
    snprintf (why, sizeof why, "R exited unexpectedly with status %d", st.exit_code);
  else
    {
      static const char *const limit_names[] = {
        [SECURER_LIMIT_NONE] = "resource limit", [SECURER_LIMIT_CPU] = "CPU time limit",
        [SECURER_LIMIT_MEMORY] = "memory limit", [SECURER_LIMIT_FSIZE] = "file size limit",
      };
      snprintf (why, sizeof why, "R was killed by signal %d%s%s%s", st.signal,
                st.reason == SECURER_KILL_SECCOMP ? " (seccomp"
                : st.reason == SECURER_KILL_LIMIT ? (st.limit == SECURER_LIMIT_NONE ? " (" : " (the ")
                                                  : "",
                st.reason == SECURER_KILL_LIMIT ? limit_names[st.limit]
                : st.detail && st.reason == SECURER_KILL_SECCOMP ? ": " : "",
                st.reason == SECURER_KILL_SECCOMP ? (st.detail ? st.detail : "") : "");
      if (st.reason == SECURER_KILL_SECCOMP || st.reason == SECURER_KILL_LIMIT)
        strncat (why, st.reason == SECURER_KILL_LIMIT ? " was reached)" : ")", sizeof why - strlen (why) - 1);
    }
  securer_status_clear (&st);
  securer_error_free (&e);
  if (s->state == S_STARTING && s->start_error == NULL)
    s->start_error = strdup (why);
  /* Collect whatever R printed on its way out (an R start-up error). */
  drain_output (s);
  kill_and_fail (s, SECURER_EXEC_CRASHED, why);
}

static void
on_timer (void *data, uint32_t ev)
{
  struct securer_session *s = data;
  uint64_t ticks;
  if (read (s->timer_fd, &ticks, sizeof ticks) != sizeof ticks)
    return;
  if (s->job != JOB_NONE && !s->finished)
    {
      char msg[96];
      snprintf (msg, sizeof msg, "Execution timed out after %.3g seconds",
                (double) s->xo.timeout_ms / 1000.0);
      audit (s, "execute_timeout", json_pack ("{s:f}", "timeout_secs", (double) s->xo.timeout_ms / 1000.0));
      child_stop (s);
      finish (s, SECURER_EXEC_TIMEOUT, msg);
      /* The session stays usable: a fresh R starts now, in the background. */
      securer_err_t e = NULL;
      if (s->state == S_DEAD && child_start (s, &e) == 0)
        audit (s, "session_restart", json_pack ("{s:s, s:i, s:s}", "reason", "timeout", "pid", (int) s->pid,
                                                "start", start_kind (s)));
      securer_error_free (&e);
      return;
    }
  if (s->state == S_STARTING)
    kill_and_fail (s, SECURER_EXEC_CRASHED, "R did not start in time");
}

static void
arm_timer (struct securer_session *s, uint64_t ms)
{
  struct itimerspec its = { { 0, 0 }, { (time_t) (ms / 1000), (long) (ms % 1000) * 1000000L } };
  if (ms == UINT64_MAX)
    its.it_value = (struct timespec){ 0, 0 };  /* no timeout: disarmed (both fields zero) */
  else if (ms == 0)
    its.it_value.tv_nsec = 1;
  timerfd_settime (s->timer_fd, 0, &its, NULL);
}

/* ---- R's lifetime ----------------------------------------------------------- */

static void
close_fd (struct securer_session *s, int *fd)
{
  if (*fd >= 0)
    {
      securer_loop_del (s->loop, *fd);
      close (*fd);
      *fd = -1;
    }
}

static void
child_stop (struct securer_session *s)
{
  s->ch_watch_out = false;
  if (s->ch.rfd >= 0)
    securer_loop_del (s->loop, s->ch.rfd);
  securer_channel_close (&s->ch);
  if (s->poll_fd >= 0)
    securer_loop_del (s->loop, s->poll_fd);
  s->poll_fd = -1;
  if (s->sb != NULL)
    {
      securer_err_t e = NULL;
      securer_sandbox_kill (s->sb, &e);
      securer_error_free (&e);
      securer_sandbox_free (s->sb);
      s->sb = NULL;
    }
  close_fd (s, &s->out_fd);
  close_fd (s, &s->err_fd);
  s->lb_out.len = s->lb_err.len = 0;
  s->pid = 0;
  s->state = S_DEAD;
  s->tool_pending = false;
  /* A tool command answering R's call is of no use once R is gone. */
  securer_toolcmd_cancel (s->tool_cmd);
  s->tool_cmd = NULL;
}

static int
make_pipe (int p[2], bool host_reads, securer_err_t *err)
{
  if (pipe2 (p, O_CLOEXEC) < 0)
    return securer_error_set (err, errno, "pipe");
  /* Only the host's end is non-blocking: R reads and writes blocking. */
  int host = host_reads ? p[0] : p[1];
  fcntl (host, F_SETFL, fcntl (host, F_GETFL) | O_NONBLOCK);
  return 0;
}

/* R's front-end script normally sets these; we exec the binary directly.
 * A policy that sets them wins.  env has room for 6 entries. */
static void
r_env (const struct securer_policy *p, char *env[6])
{
  static const char *const r_vars[] = { "R_HOME=/usr/lib/R", "R_SHARE_DIR=/usr/share/R/share",
                                        "R_INCLUDE_DIR=/usr/share/R/include",
                                        "R_DOC_DIR=/usr/share/R/doc", "LANG=C.UTF-8", NULL };
  size_t ne = 0;
  for (const char *const *v = r_vars; *v; v++)
    {
      char name[32];
      size_t nl = strcspn (*v, "=");
      snprintf (name, sizeof name, "%.*s", (int) nl, *v);
      if (!policy_sets_env (p, name))
        env[ne++] = (char *) *v;
    }
  env[ne] = NULL;
}

/* R forked from the policy's template.  Falls back to a cold start only
 * when the template was not asked for explicitly (policy 'auto'), saying
 * why in the audit log. */
static int
spawn_from_template (struct session_template_prog *prog, struct securer_spawn_opts *so,
                     struct securer_session *s, securer_err_t *err)
{
  securer_err_t e = NULL;
  if (securer_session_template_spawn (&s->tpl, s->policy, securer_session_policy_digest (s->pol), prog, so,
                                      &s->sb, &e) == 0)
    {
      s->from_template = true;
      return 0;
    }
  if (!s->template_required)
    {
      /* The template could not even be started: cold from now on. */
      s->want_template = false;
      audit (s, "template_unavailable", json_pack ("{s:s}", "error", securer_error_text (e)));
      if (s->verbose)
        fprintf (stderr, "securer: session %s starts cold: %s\n", s->id, securer_error_text (e));
      securer_error_free (&e);
      return 1;
    }
  *err = e;
  return securer_error_prefix (err, "start R from the template");
}

static int
child_start (struct securer_session *s, securer_err_t *err)
{
  int sp[2] = { -1, -1 }, out[2] = { -1, -1 }, er[2] = { -1, -1 };
  char *env[6];
  free (s->start_error);
  s->start_error = NULL;
  free (s->start_stderr);
  s->start_stderr = NULL;
  s->from_template = false;
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
    {
      securer_error_set (err, errno, "socketpair");
      goto fail;
    }
  fcntl (sp[0], F_SETFL, fcntl (sp[0], F_GETFL) | O_NONBLOCK);
  if (make_pipe (out, true, err) < 0 || make_pipe (er, true, err) < 0)
    goto fail;
  r_env (s->policy, env);
  char *argv[] = { (char *) SECURER_R_BINARY, (char *) "--vanilla", (char *) "--no-echo",
                   (char *) "--no-restore", (char *) "-e", (char *) bootstrap, NULL };
  struct securer_spawn_opts so = {
    .policy = s->policy, .argv = argv, .extra_env = env, .stdin_fd = sp[1],
    .stdout_fd = out[1], .stderr_fd = er[1], .timeout_ms = 0, .verbose = s->verbose,
    .on_net = on_net, .on_net_ctx = s,
  };
  int rc = 1;
  if (s->want_template)
    {
      struct session_template_prog prog = { env, s->runtime, s->runtime_len, s->verbose };
      rc = spawn_from_template (&prog, &so, s, err);
      if (rc < 0)
        goto fail;
    }
  if (rc > 0 && securer_sandbox_spawn (&so, &s->sb, err) < 0)
    {
      securer_error_prefix (err, "start R");
      goto fail;
    }
  const char *what = s->from_template ? "start R from the template" : "start R";
  close (sp[1]);
  close (out[1]);
  close (er[1]);
  s->pid = securer_sandbox_pid (s->sb);
  securer_channel_init (&s->ch, sp[0], sp[0], s->max_message);
  s->out_fd = out[0];
  s->err_fd = er[0];
  s->poll_fd = securer_sandbox_pollfd (s->sb);
  s->state = S_STARTING;
  if (securer_loop_add (s->loop, s->ch.rfd, EPOLLIN, on_sock, s, err) < 0
      || securer_loop_add (s->loop, s->out_fd, EPOLLIN, on_out, s, err) < 0
      || securer_loop_add (s->loop, s->err_fd, EPOLLIN, on_err, s, err) < 0
      || securer_loop_add (s->loop, s->poll_fd, EPOLLIN, on_poll, s, err) < 0)
    {
      child_stop (s);
      return securer_error_prefix (err, "%s", what);
    }
  arm_timer (s, s->start_timeout_ms);
  char *hello = securer_proto_hello (s->tools, s->max_message, securer_sandbox_cpus (s->sb));
  /* A fork of the template has the runtime already: it waits for the hello. */
  rc = s->from_template ? 0 : securer_channel_send_raw (&s->ch, s->runtime, s->runtime_len, err);
  if (rc == 0)
    rc = send_msg (s, hello, err);  /* frees hello */
  else
    free (hello);
  if (rc == 0)
    rc = watch_out (s, err);
  if (rc < 0)
    {
      if (peer_gone (*err))
        {
          securer_error_free (err);
          channel_lost_while_starting (s);
          return 0;
        }
      child_stop (s);
      return securer_error_prefix (err, "%s", what);
    }
  return 0;
fail:
  for (int *fd = (int[]){ sp[0], sp[1], out[0], out[1], er[0], er[1], -2 };
       *fd != -2; fd++)
    if (*fd >= 0)
      close (*fd);
  return -1;
}

/* Runs the loop until R is ready, or died. */
static int
wait_ready (struct securer_session *s, securer_err_t *err)
{
  while (s->state == S_STARTING)
    if (securer_loop_run_once (s->loop, -1, err) < 0)
      return -1;
  if (s->state != S_IDLE)
    {
      char *m = start_failure (s);
      securer_error_set (err, 0, "%s", m ? m : "R failed to start");
      free (m);
      return -1;
    }
  return 0;
}

/* ---- open / close ---------------------------------------------------------------- */

int
securer_session_open (const struct securer_session_opts *opts, struct securer_session **out,
                      securer_err_t *err)
{
  return securer_session_open_ex (opts, true, out, err);
}

int
securer_session_wait_ready (struct securer_session *s, securer_err_t *err)
{
  if (wait_ready (s, err) < 0)
    return securer_error_prefix (err, "open session");
  return 0;
}

int
securer_session_open_ex (const struct securer_session_opts *opts, bool wait,
                         struct securer_session **out, securer_err_t *err)
{
  *out = NULL;
  struct securer_session *s = calloc (1, sizeof *s);
  if (s == NULL)
    return securer_error_set (err, ENOMEM, "session");
  s->out_fd = s->err_fd = s->poll_fd = s->timer_fd = -1;
  s->ch.rfd = s->ch.wfd = -1;
  char hex[33];
  if (securer_random_hex (hex, 8, err) < 0)
    goto fail;
  snprintf (s->id, sizeof s->id, "sess_%s", hex);
  s->tools = securer_tools_ref (opts->tools);
  s->max_executions = opts->max_executions;
  s->sanitize = opts->sanitize_errors;
  s->audit_fields = opts->audit_fields ? json_incref (opts->audit_fields) : NULL;
  s->pre_execute = opts->pre_execute;
  s->pre_execute_data = opts->pre_execute_data;
  s->max_message = opts->max_message_size ? opts->max_message_size : SECURER_DEFAULT_MAX_MESSAGE;
  s->start_timeout_ms = opts->start_timeout_ms ? opts->start_timeout_ms : DEFAULT_START_TIMEOUT_MS;
  s->on_tool_call = opts->on_tool_call;
  s->on_tool_call_data = opts->on_tool_call_data;
  s->on_start = opts->on_start;
  s->on_start_data = opts->on_start_data;
  s->verbose = opts->verbose;
  if (opts->loop != NULL)
    s->loop = opts->loop;
  else
    {
      if (securer_loop_new (&s->loop, err) < 0)
        goto fail;
      s->own_loop = true;
    }
  if (copy_policy (opts->policy, &s->pol, err) < 0)
    goto fail;
  s->policy = securer_session_policy (s->pol);
  if (load_runtime (s, err) < 0
      || securer_session_template_wanted (s->policy, opts->start, &s->want_template,
                                          &s->template_required, err) < 0)
    goto fail;
  if (opts->audit_log != NULL
      && securer_audit_open (opts->audit_dir, opts->audit_log, &s->audit, err) < 0)
    goto fail;
  s->timer_fd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (s->timer_fd < 0)
    {
      securer_error_set (err, errno, "timerfd_create");
      goto fail;
    }
  if (securer_loop_add (s->loop, s->timer_fd, EPOLLIN, on_timer, s, err) < 0)
    goto fail;
  if (child_start (s, err) < 0)
    goto fail;
  if (wait && s->own_loop && wait_ready (s, err) < 0)
    goto fail;
  audit (s, "session_start", start_fields (s));
  s->opened = true;
  *out = s;
  return 0;
fail:
  securer_error_prefix (err, "open session");
  securer_session_close (s);
  return -1;
}

void
securer_session_close (struct securer_session *s)
{
  if (s == NULL)
    return;
  s->on_start = NULL;  /* a start cut short by closing is no news */
  if (s->job != JOB_NONE && !s->finished)
    kill_and_fail (s, SECURER_EXEC_CRASHED, "session closed");
  child_stop (s);
  if (s->opened)
    audit (s, "session_close", json_pack ("{s:i}", "executions", (int) s->executions));
  if (s->timer_fd >= 0)
    {
      securer_loop_del (s->loop, s->timer_fd);
      close (s->timer_fd);
    }
  if (s->own_loop)
    securer_loop_free (s->loop);
  securer_audit_close (s->audit);
  json_decref (s->audit_fields);
  json_decref (s->net_denied);
  /* After R is gone: the template's pid namespace holds it. */
  securer_session_template_release (s->tpl);
  securer_session_policy_put (s->pol);
  securer_tools_unref (s->tools);
  securer_result_clear (&s->res);
  free (s->lb_out.buf);
  free (s->lb_err.buf);
  free (s->runtime);
  free (s->start_error);
  free (s->start_stderr);
  free (s->halt_msg);
  free (s->tool_name);
  free (s);
}

int
securer_session_restart (struct securer_session *s, securer_err_t *err)
{
  if (securer_session_busy (s))
    return securer_error_set (err, EBUSY, "restart: an execution is in progress");
  child_stop (s);
  if (child_start (s, err) < 0)
    return securer_error_prefix (err, "restart session");
  audit (s, "session_restart", json_pack ("{s:s, s:i, s:s}", "reason", "requested", "pid", (int) s->pid,
                                          "start", start_kind (s)));
  if (s->own_loop && wait_ready (s, err) < 0)
    return securer_error_prefix (err, "restart session");
  return 0;
}

bool
securer_session_is_alive (const struct securer_session *s)
{
  if (s == NULL)
    return false;
  /* An idle session on its own loop has nobody watching its descriptors:
   * look (without waiting) so that an R that died meanwhile is seen. */
  if (s->own_loop && !securer_session_busy (s) && s->state != S_DEAD)
    {
      securer_err_t e = NULL;
      securer_loop_run_once (((struct securer_session *) s)->loop, 0, &e);
      securer_error_free (&e);
    }
  return s->state != S_DEAD;
}

bool
securer_session_ready (const struct securer_session *s)
{
  return s != NULL && s->state == S_IDLE;
}

bool
securer_session_busy (const struct securer_session *s)
{
  return s != NULL && s->job != JOB_NONE && !s->finished;
}

const char *
securer_session_id (const struct securer_session *s)
{
  return s->id;
}

pid_t
securer_session_pid (const struct securer_session *s)
{
  return s->state == S_DEAD ? 0 : s->pid;
}

unsigned
securer_session_executions (const struct securer_session *s)
{
  return s->executions;
}

const char *
securer_session_start_kind (const struct securer_session *s)
{
  return s == NULL || s->state == S_DEAD ? NULL : start_kind (s);
}

char *
securer_session_degraded (const struct securer_session *s)
{
  return s == NULL || s->sb == NULL ? NULL : securer_sandbox_degraded (s->sb);
}

/* ---- executions ------------------------------------------------------------------- */

/* Nothing an execution started may outlive it but R.  When the clean-up
 * cannot be done the whole sandbox goes (fail closed): the next execution
 * starts a fresh R, and the audit log says why. */
static void
end_leftovers (struct securer_session *s)
{
  securer_err_t e = NULL;
  unsigned ended = 0;
  int rc = securer_end_leftovers (s->pid, &ended, &e);
  s->res.processes_ended = ended;
  if (ended > 0 || rc < 0)
    audit (s, "processes_ended", json_pack ("{s:i, s:s?}", "count", (int) ended, "error",
                                            rc < 0 ? securer_error_message (e) : NULL));
  if (rc < 0)
    child_stop (s);
  securer_error_free (&e);
}

static void
finish (struct securer_session *s, enum securer_exec_status st, const char *msg)
{
  if (s->finished || s->job == JOB_NONE)
    return;
  /* Partial last lines belong to this execution. */
  if (s->job == JOB_EXEC)
    {
      linebuf_flush_partial (s, &s->lb_out, SECURER_STDOUT);
      linebuf_flush_partial (s, &s->lb_err, SECURER_STDERR);
    }
  s->finished = true;
  struct itimerspec off = { { 0, 0 }, { 0, 0 } };
  timerfd_settime (s->timer_fd, 0, &off, NULL);
  if (s->job == JOB_EXEC && s->state != S_DEAD && st != SECURER_EXEC_TIMEOUT
      && st != SECURER_EXEC_CRASHED)
    end_leftovers (s);
  if (s->halt != SECURER_EXEC_OK && st != SECURER_EXEC_TIMEOUT && st != SECURER_EXEC_CRASHED)
    {
      st = s->halt;
      msg = s->halt_msg;
    }
  s->res.status = st;
  s->res.elapsed = secs_since (s->t0);
  json_decref (s->res.network_denied);
  s->res.network_denied = s->net_denied;
  s->net_denied = NULL;
  if (st != SECURER_EXEC_OK)
    {
      json_decref (s->res.value);
      s->res.value = NULL;
      const char *m = msg ? msg : securer_exec_status_name (st);
      char *with_net = NULL;
      /* "cannot open the connection" says nothing of why: the refused
       * destinations do. */
      if (st == SECURER_EXEC_ERROR && s->res.network_denied != NULL)
        with_net = net_denied_suffix (m, s->res.network_denied);
      s->res.error = s->sanitize ? securer_sanitize_error (with_net ? with_net : m) : strdup (with_net ? with_net : m);
      free (with_net);
    }
  else if (s->job == JOB_EXEC && s->res.value == NULL)
    s->res.value = json_null ();
  if (s->job == JOB_EXEC)
    {
      if (st == SECURER_EXEC_OK)
        audit (s, "execute_complete", json_pack ("{s:f, s:i}", "elapsed", s->res.elapsed,
                                                 "tool_calls", (int) s->res.tool_calls));
      else if (st != SECURER_EXEC_TIMEOUT)
        {
          bool cut;
          json_t *m = securer_audit_text (s->res.error, SECURER_AUDIT_CODE_MAX, &cut);
          audit (s, "execute_error", json_pack ("{s:o?, s:s, s:f, s:i}", "error", m, "status",
                                                securer_exec_status_name (st), "elapsed",
                                                s->res.elapsed, "tool_calls_refused",
                                                (int) s->tools_refused));
        }
    }
  if (s->done)
    {
      securer_done_fn done = s->done;
      s->done = NULL;
      done (s->done_data, s, &s->res);
    }
}

/* Resets the job; the result must have been taken or is cleared. */
static void
job_reset (struct securer_session *s)
{
  securer_result_clear (&s->res);
  s->job = JOB_NONE;
  s->finished = false;
  s->halt = SECURER_EXEC_OK;
  free (s->halt_msg);
  s->halt_msg = NULL;
  s->lines = 0;
  s->out_bytes = 0;
  s->out_cap = 0;
  s->tools_refused = 0;
  s->done = NULL;
  s->done_data = NULL;
}

static bool
valid_utf8 (const char *s)
{
  json_t *j = json_string (s);
  bool ok = j != NULL;
  json_decref (j);
  return ok;
}

/* Checks that hold before anything is sent.  Sets *reject when the request
 * itself is refused (as opposed to the session being unusable). */
static int
precheck (struct securer_session *s, const char *code, const struct securer_exec_opts *xo,
          bool count, bool *reject, securer_err_t *err)
{
  *reject = false;
  if (securer_session_busy (s))
    return securer_error_set (err, EBUSY, "session is busy with another execution");
  if (code == NULL)
    code = "";
  size_t max_code = xo && xo->max_code_length ? xo->max_code_length : SECURER_DEFAULT_MAX_CODE;
  *reject = true;
  if (strlen (code) > max_code)
    return securer_error_set (err, E2BIG, "Code exceeds maximum length (%zu > %zu characters)",
                              strlen (code), max_code);
  if (!valid_utf8 (code))
    return securer_error_set (err, EILSEQ, "code is not valid UTF-8");
  if (xo && (xo->plot_width > SECURER_PLOT_MAX_PIXELS || xo->plot_height > SECURER_PLOT_MAX_PIXELS
             || xo->plot_res > 10000 || (unsigned) xo->plot_format > SECURER_PLOT_NONE))
    return securer_error_set (err, EINVAL, "plots: width and height must be 1..%d pixels, the resolution "
                              "1..10000 pixels per inch", SECURER_PLOT_MAX_PIXELS);
  if (count && s->max_executions && s->executions >= s->max_executions)
    return securer_error_set (err, EPERM, "Maximum executions (%u) reached for this session",
                              s->max_executions);
  if (count && s->pre_execute && !s->pre_execute (s->pre_execute_data, code))
    return securer_error_set (err, EPERM, "Execution blocked by pre_execute_hook");
  *reject = false;
  if (s->state == S_DEAD)
    {
      if (child_start (s, err) < 0)
        return securer_error_prefix (err, "restart R");
      audit (s, "session_restart", json_pack ("{s:s, s:i, s:s}", "reason", "dead", "pid", (int) s->pid,
                                              "start", start_kind (s)));
    }
  return 0;
}

static int
begin (struct securer_session *s, enum job job, const char *code,
       const struct securer_exec_opts *xo, securer_done_fn done, void *done_data, bool *reject,
       securer_err_t *err)
{
  if (precheck (s, code, xo, job == JOB_EXEC, reject, err) < 0)
    return -1;
  if (code == NULL)
    code = "";
  job_reset (s);
  memset (&s->xo, 0, sizeof s->xo);
  if (xo)
    s->xo = *xo;
  if (s->xo.timeout_ms == 0)
    s->xo.timeout_ms = SECURER_DEFAULT_TIMEOUT_MS;
  if (s->xo.max_tool_calls == 0)
    s->xo.max_tool_calls = SECURER_DEFAULT_MAX_TOOL_CALLS;
  if (s->xo.max_output_lines == 0)
    s->xo.max_output_lines = SECURER_DEFAULT_MAX_OUTPUT_LINES;
  if (s->xo.max_output_bytes == 0)
    s->xo.max_output_bytes = SECURER_DEFAULT_MAX_OUTPUT_BYTES;
  if (s->xo.plot_width == 0)
    s->xo.plot_width = 480;
  if (s->xo.plot_height == 0)
    s->xo.plot_height = 480;
  if (s->xo.plot_res == 0)
    s->xo.plot_res = 72;
  if (s->xo.max_plots == 0)
    s->xo.max_plots = SECURER_DEFAULT_MAX_PLOTS;
  if (s->xo.max_plot_bytes == 0)
    s->xo.max_plot_bytes = SECURER_DEFAULT_MAX_PLOT_BYTES;
  s->job = job;
  s->cur_id = ++s->next_id;
  s->t0 = securer_now_ns ();
  json_decref (s->net_denied);
  s->net_denied = NULL;
  s->done = done;
  s->done_data = done_data;
  char *msg = job == JOB_EXEC ? securer_proto_execute (s->cur_id, code, &s->xo)
                              : securer_proto_parse_req (s->cur_id, code);
  if (job == JOB_EXEC)
    {
      s->executions++;
      bool cut;
      json_t *c = securer_audit_text (code, SECURER_AUDIT_CODE_MAX, &cut);
      audit (s, "execute_start", json_pack ("{s:o?, s:b}", "code", c, "truncated", cut));
    }
  arm_timer (s, s->xo.timeout_ms);
  if (send_msg (s, msg, err) < 0)
    {
      kill_and_fail (s, SECURER_EXEC_CRASHED, securer_error_text (*err));
      securer_error_free (err);
      /* The failure is reported through the result. */
    }
  return 0;
}

int
securer_session_execute_async (struct securer_session *s, const char *code,
                               const struct securer_exec_opts *opts, securer_done_fn done,
                               void *done_data, securer_err_t *err)
{
  bool reject;
  if (s->job != JOB_NONE && s->finished)
    job_reset (s);
  if (begin (s, JOB_EXEC, code, opts, done, done_data, &reject, err) < 0)
    {
      if (reject || securer_session_busy (s))
        securer_error_set_status (err, SECURER_EXEC_REJECTED_STATUS);
      if (reject)
        audit (s, "execute_error", json_pack ("{s:s, s:s}", "error", securer_error_message (*err),
                                              "status", "rejected"));
      return -1;
    }
  return 0;
}

static int
run_until_finished (struct securer_session *s, securer_err_t *err)
{
  while (!s->finished)
    if (securer_loop_run_once (s->loop, -1, err) < 0)
      return -1;
  return 0;
}

int
securer_session_execute (struct securer_session *s, const char *code,
                         const struct securer_exec_opts *opts, struct securer_result *res,
                         securer_err_t *err)
{
  memset (res, 0, sizeof *res);
  bool reject;
  if (s->job != JOB_NONE && s->finished)
    job_reset (s);
  if (begin (s, JOB_EXEC, code, opts, NULL, NULL, &reject, err) < 0)
    {
      res->status = reject ? SECURER_EXEC_REJECTED : SECURER_EXEC_CRASHED;
      res->error = strdup (securer_error_text (*err));
      if (reject)
        audit (s, "execute_error", json_pack ("{s:s, s:s}", "error", res->error, "status", "rejected"));
      return -1;
    }
  if (run_until_finished (s, err) < 0)
    {
      kill_and_fail (s, SECURER_EXEC_CRASHED, securer_error_text (*err));
      securer_error_free (err);
    }
  *res = s->res;
  memset (&s->res, 0, sizeof s->res);
  job_reset (s);
  if (res->status != SECURER_EXEC_OK)
    {
      int e = res->status == SECURER_EXEC_TIMEOUT ? ETIMEDOUT
              : res->status == SECURER_EXEC_CRASHED ? ECHILD : 0;
      securer_error_set (err, e, "%s", res->error ? res->error : "execution failed");
      return -1;
    }
  return 0;
}

/* The parse reply's advisory warnings are the result's warnings. */
int
securer_session_validate_async (struct securer_session *s, const char *code, securer_done_fn done,
                                void *done_data, securer_err_t *err)
{
  bool reject;
  if (s->job != JOB_NONE && s->finished)
    job_reset (s);
  struct securer_exec_opts xo = { .timeout_ms = 10000 };
  return begin (s, JOB_PARSE, code, &xo, done, done_data, &reject, err);
}

int
securer_session_validate (struct securer_session *s, const char *code, char ***warnings,
                          size_t *n_warnings, securer_err_t *err)
{
  if (warnings)
    *warnings = NULL;
  if (n_warnings)
    *n_warnings = 0;
  if (securer_session_validate_async (s, code, NULL, NULL, err) < 0)
    return -1;
  if (run_until_finished (s, err) < 0)
    kill_and_fail (s, SECURER_EXEC_CRASHED, "event loop failed");
  int rc = 0;
  if (s->res.status != SECURER_EXEC_OK)
    rc = securer_error_set (err, s->res.status == SECURER_EXEC_SYNTAX ? EINVAL : ECHILD, "%s",
                            s->res.error ? s->res.error : "validation failed");
  if (rc == 0 && warnings)
    {
      *warnings = s->res.warnings;
      *n_warnings = s->res.n_warnings;
      s->res.warnings = NULL;
      s->res.n_warnings = 0;
    }
  job_reset (s);
  return rc;
}
