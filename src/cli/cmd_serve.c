/* securer serve — drive sandboxed R sessions over a JSON-lines protocol on
 * stdin/stdout or a unix socket (docs/protocol.md).  One epoll loop runs
 * every session, every client connection and the listening socket. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "serve_files.h"
#include "serve_host.h"
#include "serve_request.h"
#include "securer/session.h"
#include "session/internal.h"

void
cmd_serve_help (FILE *out)
{
  fprintf (out,
           "Usage: securer serve [OPTIONS]\n"
           "\n"
           "Speak the securer JSON-lines protocol (docs/protocol.md): a host in any\n"
           "language opens sandboxed R sessions or pools, executes code, answers tool\n"
           "calls and closes them.  One request per line, one reply per request, plus\n"
           "events (output lines, tool calls) as they happen.  \"open\" replies once R\n"
           "is ready, or with the reason it could not start; an execute on a busy pool\n"
           "waits for a free session up to its \"acquire_timeout\" (default 30 s; 0\n"
           "fails at once); a pool has 1 to 100 sessions.\n"
           "\n"
           "Options:\n"
           "      --listen PATH      serve on a unix socket at PATH instead of stdin/stdout;\n"
           "                         PATH's directory is created 0700 (or must already be\n"
           "                         0700 and ours; 0750 of --socket-group).  A random\n"
           "                         token (128 bits) is written to PATH.token (0600;\n"
           "                         0640 of --socket-group), and stdout gets one line\n"
           "                         naming both files; every client must send\n"
           "                         {\"op\":\"auth\",\"token\":...} first and run as our uid\n"
           "                         or in --socket-group (SO_PEERCRED).  A socket passed\n"
           "                         by systemd (LISTEN_FDS, securer.socket) is served the\n"
           "                         same way, without --listen\n"
           "      --socket-group G   members of group G may connect (socket 0660)\n"
           "      --socket-mode M    the socket's mode: 0600 (default) or 0660\n"
           "      --token-file PATH  write the token there instead of next to the socket\n"
           "      --log LEVEL        error, warning, info or debug: one line per event on\n"
           "                         stderr (level=, event=, client=, session=, ...);\n"
           "                         default info with a socket, warning on stdio\n"
           "  -p, --policy P         default policy for sessions (default: r)\n"
           "      --allow-policy NAME[,NAME...]  shipped policies a request may name\n"
           "                         besides the default (repeatable; \"any\": all of\n"
           "                         them); without it a request may name only the default\n"
           "      --policy-dir DIR   requests may name policies in DIR (\"policy\": a path\n"
           "                         relative to DIR, or NAME for DIR/NAME.policy), every\n"
           "                         one of which is allowed\n"
           "      --max-sessions N   sessions open at once in all, pool members included\n"
           "                         (default 256); an open past it is refused\n"
           "      --max-client-sessions N  the same for each client (default 128:\n"
           "                         a pool of 100 fits, half the server does not)\n"
           "      --audit-log FILE   every session's audit lines in FILE (JSON lines:\n"
           "                         open, executions, tool calls, close, with the client's\n"
           "                         uid and pid, the policy and its digest, the limits\n"
           "                         and the session's host uid)\n"
           "      --audit-dir DIR    the same, in a file per client that the server names\n"
           "                         (RUN-clientN-uidU.jsonl); a request cannot choose one\n"
           "                         (no \"..\", absolute path or symbolic link may lead\n"
           "                         out of --policy-dir)\n"
           "      --sanitize-errors  strip paths, pids, host names and IPs from every\n"
           "                         session's errors and from the server's own\n"
           "      --allow-unsandboxed  accept \"sandbox\": false, and policies that turn off\n"
           "                         a layer of the sandbox (user, mount or pid namespace,\n"
           "                         Landlock, seccomp), such as r-unsandboxed: R in a\n"
           "                         process of its own under resource limits, WITHOUT the\n"
           "                         sandbox (trusted code only); without this option such\n"
           "                         a request, or such a --policy, is refused\n"
           "      --allow-network    accept \"network\": [HOST[:PORT], ...] in open requests:\n"
           "                         the session reaches those hosts (and nothing else)\n"
           "                         through the server's filtering proxy, as with the\n"
           "                         policy line 'network allow'; without this option\n"
           "                         such a request is refused\n"
           "      --max-message N    per-line limit in bytes, both ways (default 1048576)\n"
           "      --max-reply N      largest execute reply in bytes (default 16777216):\n"
           "                         output lines are left out first, then a value that\n"
           "                         does not fit makes the status too_large\n"
           "      --max-output-lines N, --max-output-bytes N, --max-tool-calls N\n"
           "                         per-execution defaults and ceilings (10000 lines,\n"
           "                         1048576 bytes, 1000 calls); a request may ask for\n"
           "                         less, never more\n"
           "      --max-plots N, --max-plot-bytes N\n"
           "                         the same for the pages drawn in an execution that\n"
           "                         come back as images (50 pages, 8388608 bytes)\n"
           "      --allow-workdir    accept \"workdir\": DIR in open and pool_open, a directory\n"
           "                         of the server's user mounted read-write at /work, R's\n"
           "                         working directory, and upload/download of files in it;\n"
           "                         as root the sandbox then writes as DIR's owner (never\n"
           "                         root), so that its files belong to that user\n"
           "      --max-file-bytes N largest file an upload or download moves (8388608)\n"
           "      --cold             start every sandboxed session cold, in a new sandbox,\n"
           "                         whatever its policy's 'session template' says\n"
           "      --template         start every sandboxed session from its policy's\n"
           "                         template (a pre-initialised R kept by the server per\n"
           "                         policy, which forks each session: opens, pool members,\n"
           "                         restarts); an open that cannot have one is refused.\n"
           "                         Without either, the policy decides (default: from a\n"
           "                         template when possible; see docs/sessions.md)\n"
           "  -v, --verbose          report the sandbox set-up steps on stderr\n"
           "  -h, --help             show this help\n");
}

struct client;

struct entry {
  struct client *c;
  char *id;                        /* session id as the client knows it */
  struct securer_session *s;
  json_t *req_id;                  /* id of the pending execute/validate request */
  json_t *start_id;                /* id of an open/restart waiting for R to be ready */
  bool opening;                    /* start_id belongs to the open */
  bool plain;                      /* values as ordinary JSON for this execution */
  bool doomed;                     /* its start failed: freed from the main loop */
  bool closing;                    /* being closed: no restart between pool uses */
  bool unsandboxed;                /* its policy is not a sandbox (securer_policy_is_sandboxed) */
  uint64_t call_id;                /* the last tool call sent to the client */
  struct pool *pool;               /* member of this pool, or NULL */
  struct serve_workdir wd;         /* its work directory (fd -1: none) */
  struct entry *next;
};

/* An execute waiting for an idle member of a pool. */
struct queued {
  json_t *id;
  json_t *req;
  double wait_s;
  uint64_t deadline_ns;
  struct queued *next;
};

#define POOL_QUEUE_MAX 1024
#define SERVE_POOL_MAX 100               /* sessions in one pool */
#define DEFAULT_ACQUIRE_TIMEOUT_S 30.0

struct pool {
  struct client *c;
  char *id;
  bool reset;
  bool unsandboxed;                /* its policy is not a sandbox (securer_policy_is_sandboxed) */
  unsigned size;
  json_t *open_id;                 /* pool_open waiting for every member */
  unsigned starting;               /* members not yet ready while opening */
  char *open_error;                /* the first member's start failure */
  bool doomed;                     /* its opening failed: freed from the main loop */
  struct queued *queue, **tail;    /* FIFO */
  unsigned n_queued;
  int timer_fd;                    /* fires at the earliest queued deadline */
  struct pool *next;
};

struct client {
  struct securer_channel ch;
  unsigned num;                    /* for the log and the audit: client=N */
  uid_t uid;                       /* the peer's (stdio: ours) */
  pid_t pid;                       /* the peer's (stdio: our parent) */
  json_t *audit_fields;            /* {"client", "client_uid", "client_pid"} on its audit lines */
  unsigned n_sessions;             /* its sessions open now, pool members included */
  bool draining;                   /* stdin ended: answer what was asked, then stop */
  bool authed;
  bool is_stdio;
  bool dead;                       /* to be freed once the current request is done */
  struct entry *entries;
  struct pool *pools;
  struct client *next;
};

struct server {
  struct securer_loop *loop;
  struct securer_policy *policy;
  const char *policy_dir, *audit_dir;
  bool sanitize;
  bool allow_unsandboxed;          /* --allow-unsandboxed: policies that are no sandbox are served */
  bool allow_network;              /* --allow-network: open requests may name hosts to reach */
  const char *default_name;        /* --policy, or "r" */
  char **allowed;                  /* --allow-policy names (NULL-terminated), or NULL */
  bool allow_any;                  /* --allow-policy any */
  unsigned max_sessions, max_client_sessions;
  unsigned n_sessions;             /* open now, pool members included */
  size_t max_reply, max_output_bytes;
  unsigned max_output_lines, max_tool_calls, max_plots;
  size_t max_plot_bytes, max_file_bytes;
  bool allow_workdir;
  size_t max_message;
  bool verbose;
  enum securer_session_start start;  /* --cold / --template, for sandboxed sessions */
  int listen_fd;
  bool activated;                  /* listen_fd came from systemd (LISTEN_FDS) */
  bool have_group;                 /* --socket-group: its members may connect too */
  gid_t group;
  const char *audit_log;           /* --audit-log: every session's lines, in one file */
  char run_id[40];                 /* start time and pid: --audit-dir names of this run */
  unsigned clients_seen;
  char token[33];
  struct client *clients;
  bool stop;
  bool reap;                       /* some entry or pool is doomed */
  unsigned counter;
};

static struct server srv;

/* SIGTERM, SIGINT and SIGHUP end the server as "shutdown" does (sessions
 * closed, socket and token file removed): the handler only writes to a
 * pipe the loop watches.  A handler, unlike a blocked signal for signalfd,
 * is not inherited by the processes the server starts. */
static int sig_pipe[2] = { -1, -1 };

static void
on_signal (int sig)
{
  int saved = errno;
  char c = (char) sig;
  if (write (sig_pipe[1], &c, 1) < 0)
    {
    }
  errno = saved;
}

static void
on_sig_pipe (void *data, uint32_t ev)
{
  char buf[16];
  while (read (sig_pipe[0], buf, sizeof buf) > 0)
    ;
  srv.stop = true;
}

static int
setup_signals (securer_err_t *err)
{
  if (pipe2 (sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return securer_error_set (err, errno, "pipe");
  if (securer_loop_add (srv.loop, sig_pipe[0], EPOLLIN, on_sig_pipe, NULL, err) < 0)
    return -1;
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset (&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
  return 0;
}

/* ---- output to a client ---------------------------------------------------- */

static void
client_send (struct client *c, json_t *o)
{
  char *line = json_dumps (o, JSON_COMPACT | JSON_REAL_PRECISION (17));
  json_decref (o);
  if (line == NULL || c->ch.wfd < 0)
    {
      free (line);
      return;
    }
  securer_err_t e = NULL;
  /* Replies may exceed the per-message limit for requests (a result of
   * 1 MiB plus its output): send raw, with the newline. */
  size_t n = strlen (line);
  line[n] = '\n';
  if (securer_channel_send_raw (&c->ch, line, n + 1, &e) < 0)
    securer_error_free (&e);
  free (line);
  /* stdout is blocking (it may be a file, which epoll cannot watch): the
   * write above completed.  A socket client gets EPOLLOUT until drained. */
  if (securer_channel_pending (&c->ch) && !c->is_stdio)
    securer_loop_mod (srv.loop, c->ch.rfd, EPOLLIN | EPOLLOUT, &e);
  securer_error_free (&e);
}

static void reply_error (struct client *c, json_t *id, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* The message is cut between two characters and escaped where it is not
 * UTF-8 (R's start-up errors can quote anything), so that the reply is
 * always sent: jansson refuses invalid UTF-8 and the client would wait
 * for an answer forever. */
static void
reply_error (struct client *c, json_t *id, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  size_t len = n < 0 ? 0 : (size_t) n < sizeof msg ? (size_t) n : sizeof msg - 1;
  len = securer_utf8_cut (msg, len, len);
  char *esc = securer_utf8_escape (msg, len, NULL);
  char *clean = esc && srv.sanitize ? securer_sanitize_error (esc) : NULL;
  const char *text = clean ? clean : esc ? esc : "error (out of memory)";
  client_send (c, json_pack ("{s:O?, s:b, s:s}", "id", id, "ok", 0, "error", text));
  free (clean);
  free (esc);
}

static void
reply_ok (struct client *c, json_t *id, json_t *fields)
{
  json_t *o = json_pack ("{s:O?, s:b}", "id", id, "ok", 1);
  if (fields)
    {
      json_object_update (o, fields);
      json_decref (fields);
    }
  client_send (c, o);
}

/* ---- sessions -------------------------------------------------------------- */

static struct entry *
find_entry (struct client *c, const char *id)
{
  for (struct entry *e = c->entries; e && id; e = e->next)
    if (strcmp (e->id, id) == 0)
      return e;
  return NULL;
}

/* Values from R as the client asked for them; the plain form is bounded
 * by the reply limit (it may be far larger than the tagged value). */
static json_t *
value_out (const json_t *v, bool plain, securer_err_t *err)
{
  return plain ? securer_value_to_plain_max (v, srv.max_reply, err) : json_incref ((json_t *) v);
}

static void
on_output (void *data, enum securer_stream st, const char *line)
{
  struct entry *e = data;
  client_send (e->c, json_pack ("{s:s, s:s, s:s, s:s}", "event", "output", "session", e->id,
                                "stream", st == SECURER_STDERR ? "stderr" : "stdout", "line", line));
}

static void
on_tool_call (void *data, struct securer_session *s, const struct securer_tool_call *call)
{
  struct entry *e = data;
  json_t *args = json_object ();
  const char *k;
  json_t *v;
  securer_err_t err = NULL;
  json_object_foreach ((json_t *) call->args, k, v)
    {
      json_t *x = value_out (v, e->plain, &err);
      if (x == NULL)
        {
          /* R hears why; the client never sees the call. */
          json_decref (args);
          securer_error_prefix (&err, "tool '%s': argument '%s'", call->tool, k);
          securer_session_tool_reply (s, call->call_id, NULL, securer_error_text (err), NULL);
          securer_error_free (&err);
          return;
        }
      json_object_set_new (args, k, x);
    }
  e->call_id = call->call_id;
  if (e->c->draining)
    {
      /* Nobody is left to answer; the execution goes on without it. */
      json_decref (args);
      securer_session_tool_reply (s, call->call_id, NULL, "the client closed its input", NULL);
      return;
    }
  char tool[160];
  serve_log (SERVE_LOG_INFO, "tool_call", "client=%u session=%s tool=%s call=%llu", e->c->num, e->id,
             serve_log_quote (call->tool, tool, sizeof tool), (unsigned long long) call->call_id);
  client_send (e->c, json_pack ("{s:s, s:s, s:I, s:s, s:o}", "event", "tool_call", "session", e->id,
                                "call_id", (json_int_t) call->call_id, "tool", call->tool, "args", args));
}

static void
on_done (void *data, struct securer_session *s, const struct securer_result *r)
{
  struct entry *e = data;
  json_t *id = e->req_id;
  e->req_id = NULL;
  json_t *res = securer_result_json (r, "line", e->plain, srv.max_reply);
  serve_log (SERVE_LOG_INFO, "execute", "client=%u session=%s status=%s elapsed=%.3f tool_calls=%u", e->c->num,
             e->id, json_string_value (json_object_get (res, "status")), r->elapsed, r->tool_calls);
  reply_ok (e->c, id, json_pack ("{s:s, s:o}", "session", e->id, "result", res));
  json_decref (id);
  if (e->pool && e->pool->reset && !e->closing)
    {
      securer_err_t err = NULL;
      /* Between callers: a fresh R (its start-up overlaps the wait). */
      if (securer_session_restart (s, &err) < 0)
        securer_error_free (&err);
    }
}

/* The outcome of a validate: the parse runs in R like an execution, so
 * the request is answered from the loop, never by running the loop
 * re-entrantly (a close arriving meanwhile would free the session). */
static void
on_validated (void *data, struct securer_session *s, const struct securer_result *r)
{
  struct entry *e = data;
  json_t *id = e->req_id;
  e->req_id = NULL;
  if (r->status == SECURER_EXEC_OK)
    {
      json_t *arr = json_array ();
      for (size_t i = 0; i < r->n_warnings; i++)
        json_array_append_new (arr, json_string (r->warnings[i]));
      reply_ok (e->c, id, json_pack ("{s:b, s:o}", "valid", 1, "warnings", arr));
    }
  else if (r->status == SECURER_EXEC_SYNTAX)
    reply_ok (e->c, id, json_pack ("{s:b, s:s}", "valid", 0, "error", r->error ? r->error : "syntax error"));
  else
    reply_error (e->c, id, "validate: %s", r->error ? r->error : securer_exec_status_name (r->status));
  json_decref (id);
}

static void on_pool_member_start (struct entry *e, const char *error);

/* What a session's sandbox lacks of its policy's best-effort protections,
 * for its open reply; the server's log says it the first time only, as
 * every session of the host lacks the same. */
static char *
session_degraded (const struct securer_session *s)
{
  static bool said;
  char *d = securer_session_degraded (s);
  if (d != NULL && !said)
    {
      char text[1024];
      serve_log (SERVE_LOG_WARNING, "degraded", "what=%s", serve_log_quote (d, text, sizeof text));
      said = true;
    }
  return d;
}

/* How a start of R ended: answers the open, restart or pool_open waiting
 * for it.  A session that failed to open is freed later, from the main
 * loop: the session is still on the stack here. */
static void
on_start (void *data, struct securer_session *s, const char *error)
{
  struct entry *e = data;
  if (e->pool != NULL && e->pool->open_id != NULL)
    return on_pool_member_start (e, error);
  json_t *id = e->start_id;
  if (id == NULL)
    return;  /* a restart nobody waits for (after a timeout, between pool uses) */
  e->start_id = NULL;
  bool opening = e->opening;
  e->opening = false;
  char *degraded = error == NULL && opening ? session_degraded (s) : NULL;
  if (error == NULL)
    reply_ok (e->c, id, opening ? json_pack ("{s:s, s:b, s:s?, s:s*}", "session", e->id, "sandboxed",
                                             !e->unsandboxed, "start", securer_session_start_kind (s),
                                             "degraded", degraded)
                                : NULL);
  else
    {
      reply_error (e->c, id, "%s", error);
      if (opening)
        {
          e->doomed = true;  /* the client never got its id */
          srv.reap = true;
        }
      /* A failed restart leaves the session dead; the next execute tries again. */
    }
  free (degraded);
  json_decref (id);
}

static void
on_pool_member_start (struct entry *e, const char *error)
{
  struct pool *p = e->pool;
  if (error != NULL && p->open_error == NULL)
    p->open_error = strdup (error);
  if (p->starting > 0 && --p->starting > 0)
    return;
  json_t *id = p->open_id;
  p->open_id = NULL;
  char *degraded = p->open_error == NULL ? session_degraded (e->s) : NULL;
  if (p->open_error == NULL)
    reply_ok (e->c, id, json_pack ("{s:s, s:b, s:s*}", "pool", p->id, "sandboxed", !p->unsandboxed,
                                   "degraded", degraded));
  else
    {
      reply_error (e->c, id, "pool_open: %s", p->open_error);
      p->doomed = true;
      srv.reap = true;
    }
  free (degraded);
  json_decref (id);
}

/* Reads a policy from a descriptor (a regular file of at most 1 MiB). */
static int
load_policy_fd (int fd, const char *name, const char *shown, struct securer_policy **out,
                struct securer_diags *diags, securer_err_t *err)
{
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size > (1 << 20))
    return securer_error_set (err, EINVAL, "policy '%s': not a regular file of at most 1 MiB", name);
  char *text = malloc ((size_t) st.st_size + 1);
  if (text == NULL)
    return securer_error_set (err, ENOMEM, "policy '%s'", name);
  size_t len = 0;
  ssize_t r;
  while (len < (size_t) st.st_size
         && ((r = read (fd, text + len, (size_t) st.st_size - len)) > 0 || (r < 0 && errno == EINTR)))
    if (r > 0)
      len += (size_t) r;
  int rc = securer_policy_load_string (shown, text, len, out, diags, err);
  free (text);
  return rc;
}

/* --allow-policy NAME[,NAME...], repeatable. */
static int
add_allowed (const char *list)
{
  char *copy = strdup (list);
  if (copy == NULL)
    return -1;
  size_t n = 0;
  while (srv.allowed != NULL && srv.allowed[n] != NULL)
    n++;
  char *save = NULL;
  for (char *w = strtok_r (copy, ",", &save); w != NULL; w = strtok_r (NULL, ",", &save))
    {
      if (strcmp (w, "any") == 0)
        {
          srv.allow_any = true;
          continue;
        }
      char **grown = realloc (srv.allowed, (n + 2) * sizeof *grown);
      if (grown == NULL || (grown[n] = strdup (w)) == NULL)
        {
          srv.allowed = grown ? grown : srv.allowed;
          free (copy);
          return -1;
        }
      grown[++n] = NULL;
      srv.allowed = grown;
    }
  free (copy);
  return 0;
}

/* Whether a request may name the shipped policy `name`: the server's
 * default, and what --allow-policy lists.  The operator's directory
 * (--policy-dir) holds only what the operator put there: all allowed. */
static bool
shipped_allowed (const char *name)
{
  if (srv.allow_any || strcmp (name, srv.default_name) == 0)
    return true;
  for (char **a = srv.allowed; a != NULL && *a != NULL; a++)
    if (strcmp (*a, name) == 0)
      return true;
  return false;
}

/* The policy a request names: the name of a shipped policy, or a file in
 * --policy-dir.  An error says where the policy is wrong, never what the
 * file holds: the client need not be allowed to read it. */
static int
request_policy (const char *name, struct securer_policy **out, securer_err_t *err)
{
  bool is_path = strchr (name, '/') != NULL || strstr (name, ".policy") != NULL
                 || strstr (name, ".json") != NULL;
  struct securer_diags diags = { 0 };
  int rc = -1;
  int fd = -1;
  char *rel = NULL, *shown = NULL;
  if (srv.policy_dir != NULL)
    {
      if (asprintf (&rel, is_path ? "%s" : "%s.policy", name) < 0
          || asprintf (&shown, "%s/%s", srv.policy_dir, rel) < 0)
        {
          rc = securer_error_set (err, ENOMEM, "policy");
          goto out;
        }
      securer_err_t e = NULL;
      fd = securer_open_beneath (srv.policy_dir, rel, O_RDONLY | O_NONBLOCK, 0, "policy", &e);
      if (fd < 0 && (is_path || securer_error_errno (e) != ENOENT))
        {
          *err = e;
          goto out;
        }
      securer_error_free (&e);
    }
  else if (is_path)
    {
      rc = securer_error_set (err, EPERM, "policy '%s': a policy file needs the server to be "
                              "started with --policy-dir", name);
      goto out;
    }
  if (fd >= 0)
    rc = load_policy_fd (fd, name, shown, out, &diags, err);
  else if (!shipped_allowed (name))
    rc = securer_error_set (err, EPERM, "policy '%s' is not one this server allows (the operator "
                            "allows it with --allow-policy)", name);
  else
    {
      char *path = NULL;
      rc = securer_policy_find (name, &path, err);
      if (rc == 0)
        rc = securer_policy_load_file (path, out, &diags, err);
      free (path);
    }
  if (rc < 0 && diags.n_errors > 0)
    {
      unsigned line = 0;
      for (size_t i = 0; i < diags.n && line == 0; i++)
        if (diags.items[i].severity == SECURER_DIAG_ERROR)
          line = diags.items[i].line;
      securer_error_free (err);
      securer_error_set (err, EINVAL, "policy '%s' is not valid (first error at line %u; "
                         "`securer policy check` on the server says why)", name, line);
    }
out:
  if (fd >= 0)
    close (fd);
  securer_diags_free (&diags);
  free (rel);
  free (shown);
  return rc;
}

/* A shipped policy by name, never one of --policy-dir. */
static int
shipped_policy (const char *name, struct securer_policy **out, securer_err_t *err)
{
  char *path = NULL;
  int rc = securer_policy_find (name, &path, err);
  if (rc == 0)
    rc = securer_policy_load_file (path, out, NULL, err);
  free (path);
  return rc;
}

/* A copy of the server's default policy (the shipped "r" unless --policy
 * named another), for a session that changes it. */
static int
default_policy_copy (struct securer_policy **out, securer_err_t *err)
{
  if (srv.policy == NULL)
    return shipped_policy ("r", out, err);
  char *text = securer_policy_to_json_text (srv.policy, 0);
  if (text == NULL)
    return securer_error_set (err, ENOMEM, "policy");
  int rc = securer_policy_from_json_text (srv.policy->name ? srv.policy->name : "policy", text,
                                          strlen (text), out, err);
  free (text);
  return rc;
}

static struct entry *
open_entry (struct client *c, const json_t *req, struct pool *pool, securer_err_t *err)
{
  struct securer_tools *tools = serve_tools_from_json (json_object_get (req, "tools"), err);
  if (tools == NULL)
    return NULL;
  struct securer_policy *policy = NULL;
  const char *pname = json_string_value (json_object_get (req, "policy"));
  /* The operator decides what is audited and where: a client can neither
   * turn it off nor write into another client's file. */
  if (json_object_get (req, "audit_log") != NULL && !json_is_null (json_object_get (req, "audit_log")))
    {
      securer_tools_unref (tools);
      securer_error_set (err, EPERM, "\"audit_log\": the server chooses its audit files (--audit-log FILE, or "
                         "--audit-dir DIR for a file per client)");
      return NULL;
    }
  char audit_name[96];
  const char *audit_log = srv.audit_log;
  if (audit_log == NULL && srv.audit_dir != NULL)
    {
      snprintf (audit_name, sizeof audit_name, "%s-client%u-uid%u.jsonl", srv.run_id, c->num, (unsigned) c->uid);
      audit_log = audit_name;
    }
  json_t *limits = json_object_get (req, "limits");
  json_t *network = json_object_get (req, "network");
  bool own_net = network != NULL && !json_is_null (network);
  bool own_limits = (limits != NULL && !json_is_null (limits)) || own_net;
  const json_t *workdir = json_object_get (req, "workdir");
  bool own_workdir = workdir != NULL && !json_is_null (workdir);
  struct serve_workdir wd = { .fd = -1 };
  bool sandboxed = true;
  /* Inline limits are set on a policy of this session's own. */
  if (serve_sandbox_flag (req, &sandboxed, err) < 0
      || (!sandboxed && !srv.allow_unsandboxed
          && securer_error_set (err, EPERM, "\"sandbox\": false needs the server to be started with "
                                "--allow-unsandboxed") < 0)
      || (!sandboxed && shipped_policy ("r-unsandboxed", &policy, err) < 0)
      || (pname != NULL && request_policy (pname, &policy, err) < 0)
      || (own_workdir && !srv.allow_workdir
          && securer_error_set (err, EPERM, "\"workdir\" needs the server to be started with --allow-workdir "
                                "(a request may then mount a directory of the server's user in the "
                                "sandbox)") < 0)
      || (own_workdir && !sandboxed
          && securer_error_set (err, EINVAL, "\"workdir\" is mounted in the sandbox: \"sandbox\": false has "
                                "none") < 0)
      || (own_workdir && !json_is_string (workdir)
          && securer_error_set (err, EINVAL, "\"workdir\" must be a path") < 0)
      || (sandboxed && pname == NULL && (own_limits || own_workdir) && default_policy_copy (&policy, err) < 0)
      || (own_limits && serve_limits_apply (policy, limits, err) < 0)
      || (own_net && serve_network_apply (policy, network, srv.allow_network, err) < 0)
      || (own_workdir && serve_workdir_apply (policy, json_string_value (workdir), &wd, err) < 0))
    {
      if (wd.fd >= 0)
        close (wd.fd);
      securer_policy_free (policy);
      securer_tools_unref (tools);
      return NULL;
    }
  /* What the policy does decides, not what the request called it: a
   * policy named in "policy" (shipped or of --policy-dir) that turns off a
   * layer of the sandbox is as unsandboxed as "sandbox": false. */
  const struct securer_policy *used = policy ? policy : srv.policy;
  const char *missing = NULL;
  sandboxed = used == NULL || securer_policy_is_sandboxed (used, &missing);
  if (!sandboxed && !srv.allow_unsandboxed)
    {
      securer_error_set (err, EPERM, "policy '%s' does not sandbox the code (%s): opening it needs the "
                         "server to be started with --allow-unsandboxed",
                         used->name ? used->name : "policy", missing);
      if (wd.fd >= 0)
        close (wd.fd);
      securer_policy_free (policy);
      securer_tools_unref (tools);
      return NULL;
    }
  /* Each session is a process tree with memory of its own: the operator
   * bounds how many there are, and no client can take them all.  Checked
   * after the request itself, so that one it may never make says so. */
  if (srv.n_sessions >= srv.max_sessions || c->n_sessions >= srv.max_client_sessions)
    {
      if (srv.n_sessions >= srv.max_sessions)
        securer_error_set (err, EAGAIN, "the server has %u sessions open, its most (--max-sessions)",
                           srv.n_sessions);
      else
        securer_error_set (err, EAGAIN, "this client has %u sessions open, the most one client may "
                           "(--max-client-sessions)", c->n_sessions);
      if (wd.fd >= 0)
        close (wd.fd);
      securer_policy_free (policy);
      securer_tools_unref (tools);
      return NULL;
    }
  struct entry *e = calloc (1, sizeof *e);
  struct securer_session_opts o = {
    .policy = policy ? policy : srv.policy, .tools = tools,
    .audit_log = audit_log, .audit_dir = srv.audit_log ? NULL : srv.audit_dir,
    .audit_fields = c->audit_fields,
    .max_executions = (unsigned) json_integer_value (json_object_get (req, "max_executions")),
    .sanitize_errors = srv.sanitize || json_is_true (json_object_get (req, "sanitize_errors")),
    .max_message_size = srv.max_message, .loop = srv.loop, .on_tool_call = on_tool_call,
    .on_tool_call_data = e, .on_start = on_start, .on_start_data = e, .verbose = srv.verbose,
    /* An unsandboxed session has no sandbox to fork from: its policy says. */
    .start = sandboxed ? srv.start : SECURER_SESSION_START_POLICY,
  };
  char used_name[128];
  snprintf (used_name, sizeof used_name, "%s", used && used->name ? used->name : "r");
  int rc = e ? securer_session_open (&o, &e->s, err) : securer_error_set (err, ENOMEM, "open");
  securer_tools_unref (tools);
  securer_policy_free (policy);
  if (rc < 0)
    {
      if (wd.fd >= 0)
        close (wd.fd);
      free (e);
      return NULL;
    }
  e->wd = wd;
  e->c = c;
  e->pool = pool;
  e->unsandboxed = !sandboxed;
  c->n_sessions++;
  srv.n_sessions++;
  e->id = strdup (securer_session_id (e->s));
  serve_log (SERVE_LOG_INFO, "open", "client=%u session=%s policy=%s%s%s sandboxed=%s", c->num, e->id,
             used_name, pool ? " pool=" : "", pool ? pool->id : "",
             sandboxed ? "true" : "false");
  if (!sandboxed)
    serve_log (SERVE_LOG_WARNING, "unsandboxed", "client=%u session=%s missing=\"%s\" "
               "what=\"a separate process under resource limits, WITHOUT the sandbox\"", c->num, e->id, missing);
  e->next = c->entries;
  c->entries = e;
  return e;
}

static void
close_entry (struct client *c, struct entry *e)
{
  for (struct entry **pp = &c->entries; *pp; pp = &(*pp)->next)
    if (*pp == e)
      {
        *pp = e->next;
        break;
      }
  e->closing = true;
  serve_log (SERVE_LOG_INFO, "close", "client=%u session=%s executions=%u", c->num, e->id ? e->id : "",
             securer_session_executions (e->s));
  c->n_sessions--;
  srv.n_sessions--;
  securer_session_close (e->s);
  if (e->wd.fd >= 0)
    close (e->wd.fd);
  json_decref (e->req_id);
  json_decref (e->start_id);
  free (e->id);
  free (e);
}

static struct pool *
find_pool (struct client *c, const char *id)
{
  for (struct pool *p = c->pools; p && id; p = p->next)
    if (strcmp (p->id, id) == 0)
      return p;
  return NULL;
}

static void
close_pool (struct client *c, struct pool *p)
{
  /* Every request gets its reply, also those still waiting. */
  while (p->queue != NULL)
    {
      struct queued *q = p->queue;
      p->queue = q->next;
      reply_error (c, q->id, "pool '%s' was closed while the request waited", p->id);
      json_decref (q->id);
      json_decref (q->req);
      free (q);
    }
  if (p->timer_fd >= 0)
    {
      securer_loop_del (srv.loop, p->timer_fd);
      close (p->timer_fd);
    }
  json_decref (p->open_id);
  free (p->open_error);
  for (struct entry *e = c->entries, *next; e; e = next)
    {
      next = e->next;
      if (e->pool == p)
        close_entry (c, e);
    }
  for (struct pool **pp = &c->pools; *pp; pp = &(*pp)->next)
    if (*pp == p)
      {
        *pp = p->next;
        break;
      }
  free (p->id);
  free (p);
}

/* ---- requests --------------------------------------------------------------- */

/* Starts req (an execute) on e; every outcome is answered. */
/* A per-execution cap from the request: absent or 0 means the server's,
 * more than the server's is refused. */
static bool
request_cap (struct client *c, json_t *id, const json_t *req, const char *key, size_t ceiling,
             const char *option, size_t *out)
{
  json_t *v = json_object_get (req, key);
  *out = ceiling;
  if (v == NULL || (json_is_integer (v) && json_integer_value (v) == 0))
    return true;
  if (!json_is_integer (v) || json_integer_value (v) < 0)
    {
      reply_error (c, id, "execute: \"%s\" must be a positive integer", key);
      return false;
    }
  if ((uint64_t) json_integer_value (v) > ceiling)
    {
      reply_error (c, id, "execute: \"%s\" %lld exceeds the server's limit of %zu (%s)", key,
                   (long long) json_integer_value (v), ceiling, option);
      return false;
    }
  *out = (size_t) json_integer_value (v);
  return true;
}

/* A request the session refuses (busy, code too long, max_executions
 * reached) is an execution that did not run: a result with status
 * "rejected", not a request error. */
static void
reply_rejected (struct client *c, json_t *id, struct entry *e, const char *why)
{
  struct securer_result r = { .status = SECURER_EXEC_REJECTED, .error = (char *) why };
  json_t *res = securer_result_json (&r, "line", false, srv.max_reply);
  reply_ok (c, id, json_pack ("{s:s, s:o}", "session", e->id, "result", res));
}

static void
run_execute (struct client *c, struct entry *e, json_t *id, const json_t *req)
{
  const char *code = json_string_value (json_object_get (req, "code"));
  size_t lines, bytes, calls, plots, plot_bytes;
  if (!request_cap (c, id, req, "max_output_lines", srv.max_output_lines, "--max-output-lines", &lines)
      || !request_cap (c, id, req, "max_output_bytes", srv.max_output_bytes, "--max-output-bytes",
                       &bytes)
      || !request_cap (c, id, req, "max_tool_calls", srv.max_tool_calls, "--max-tool-calls", &calls)
      || !request_cap (c, id, req, "max_plots", srv.max_plots, "--max-plots", &plots)
      || !request_cap (c, id, req, "max_plot_bytes", srv.max_plot_bytes, "--max-plot-bytes", &plot_bytes))
    return;
  struct securer_exec_opts xo = {
    .timeout_ms = serve_timeout_ms (json_object_get (req, "timeout")),
    .max_tool_calls = (unsigned) calls,
    .max_output_lines = (unsigned) lines,
    .max_output_bytes = bytes,
    .max_code_length = (size_t) json_integer_value (json_object_get (req, "max_code_length")),
    .print = json_is_true (json_object_get (req, "print")),
    .on_output = json_is_true (json_object_get (req, "stream")) ? on_output : NULL,
    .output_data = e,
    .max_plots = (unsigned) plots,
    .max_plot_bytes = plot_bytes,
  };
  securer_err_t perr = NULL;
  if (serve_plots_parse (json_object_get (req, "plots"), &xo, &perr) < 0)
    {
      reply_error (c, id, "execute: %s", securer_error_text (perr));
      securer_error_free (&perr);
      return;
    }
  /* The pending request keeps its id and its value form: this one is
   * refused, with a result of its own. */
  if (e->req_id != NULL || securer_session_busy (e->s))
    return reply_rejected (c, id, e, "session is busy with another execution (it runs one at a time)");
  e->plain = json_is_true (json_object_get (req, "plain"));
  e->req_id = json_incref (id ? id : json_null ());
  securer_err_t err = NULL;
  if (securer_session_execute_async (e->s, code, &xo, on_done, e, &err) < 0)
    {
      json_decref (e->req_id);
      e->req_id = NULL;
      if (err != NULL && err->status == SECURER_EXEC_REJECTED_STATUS)
        reply_rejected (c, id, e, securer_error_text (err));
      else
        reply_error (c, id, "%s", securer_error_text (err));
      securer_error_free (&err);
    }
}

static bool
member_idle (const struct entry *x)
{
  return !x->doomed && x->req_id == NULL && !securer_session_busy (x->s);
}

static void
arm_pool_timer (struct pool *p)
{
  uint64_t first = UINT64_MAX;
  for (struct queued *q = p->queue; q; q = q->next)
    if (q->deadline_ns < first)
      first = q->deadline_ns;
  struct itimerspec its = { { 0, 0 }, { 0, 0 } };
  if (first != UINT64_MAX)
    {
      its.it_value.tv_sec = (time_t) (first / 1000000000u);
      its.it_value.tv_nsec = (long) (first % 1000000000u);
      if (first == 0)
        its.it_value.tv_nsec = 1;
    }
  timerfd_settime (p->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Hands queued executes, oldest first, to idle members: a ready one first,
 * so that no request waits for a start-up while another session could run
 * it now. */
static void
dispatch_pool (struct client *c, struct pool *p)
{
  while (p->queue != NULL && p->open_id == NULL && !p->doomed)
    {
      struct entry *e = NULL;
      for (int pass = 0; pass < 2 && e == NULL; pass++)
        for (struct entry *x = c->entries; x && e == NULL; x = x->next)
          if (x->pool == p && member_idle (x) && (pass == 1 || securer_session_ready (x->s)))
            e = x;
      if (e == NULL)
        break;
      struct queued *q = p->queue;
      p->queue = q->next;
      if (p->queue == NULL)
        p->tail = &p->queue;
      p->n_queued--;
      run_execute (c, e, q->id, q->req);
      json_decref (q->id);
      json_decref (q->req);
      free (q);
    }
  arm_pool_timer (p);
}

static void
dispatch_all (void)
{
  for (struct client *c = srv.clients; c; c = c->next)
    for (struct pool *p = c->pools; p; p = p->next)
      if (p->queue != NULL)
        dispatch_pool (c, p);
}

/* Answers the queued executes whose acquire timeout has passed. */
static void
expire_queue (struct pool *p)
{
  uint64_t now = securer_now_ns ();
  for (struct queued **qq = &p->queue; *qq;)
    {
      struct queued *q = *qq;
      if (q->deadline_ns > now)
        {
          qq = &q->next;
          continue;
        }
      *qq = q->next;
      p->n_queued--;
      reply_error (p->c, q->id, "no session of pool '%s' became free within %g s (all %u busy; "
                   "raise \"acquire_timeout\" or the pool's size)", p->id, q->wait_s, p->size);
      json_decref (q->id);
      json_decref (q->req);
      free (q);
    }
  p->tail = &p->queue;
  while (*p->tail)
    p->tail = &(*p->tail)->next;
  arm_pool_timer (p);
}

static void
on_pool_timer (void *data, uint32_t ev)
{
  struct pool *p = data;
  uint64_t ticks;
  if (read (p->timer_fd, &ticks, sizeof ticks) == sizeof ticks)
    expire_queue (p);
}

static void
do_execute (struct client *c, json_t *id, const json_t *req)
{
  const char *sid = json_string_value (json_object_get (req, "session"));
  const char *pid = json_string_value (json_object_get (req, "pool"));
  if (!json_is_string (json_object_get (req, "code")))
    return reply_error (c, id, "execute: \"code\" must be a string");
  if (pid == NULL)
    {
      struct entry *e = find_entry (c, sid);
      if (e == NULL)
        return reply_error (c, id, "no session '%s'", sid ? sid : "(missing \"session\")");
      return run_execute (c, e, id, req);
    }
  struct pool *p = find_pool (c, pid);
  if (p == NULL)
    return reply_error (c, id, "no pool '%s'", pid);
  json_t *at = json_object_get (req, "acquire_timeout");
  double wait_s = at == NULL ? DEFAULT_ACQUIRE_TIMEOUT_S : json_number_value (at);
  if ((at != NULL && !json_is_number (at)) || !(wait_s >= 0) || wait_s > 1e7)
    return reply_error (c, id, "execute: \"acquire_timeout\" must be a number of seconds >= 0");
  if (p->n_queued >= POOL_QUEUE_MAX)
    return reply_error (c, id, "pool '%s' already has %d requests waiting", pid, POOL_QUEUE_MAX);
  /* Every pool execute queues, so that requests are served in order; the
   * dispatch below starts it at once when a member is idle. */
  struct queued *q = calloc (1, sizeof *q);
  if (q == NULL)
    return reply_error (c, id, "out of memory");
  q->id = json_incref (id ? id : json_null ());
  q->req = json_incref ((json_t *) req);
  q->wait_s = wait_s;
  q->deadline_ns = securer_now_ns () + (uint64_t) (wait_s * 1e9);
  *p->tail = q;
  p->tail = &q->next;
  p->n_queued++;
  dispatch_pool (c, p);
  if (p->queue != NULL && wait_s == 0)
    expire_queue (p);  /* no wait asked for: the reply comes now */
}

/* A tool_result that cannot be used is answered with an error (carrying
 * its own id, the session and the call id), and the call it was meant for
 * fails in R with the same message: R would otherwise wait for an answer
 * until the execution's timeout. */
static void
tool_result_refused (struct client *c, json_t *id, struct entry *e, uint64_t call_id,
                     const char *why)
{
  char msg[600];
  snprintf (msg, sizeof msg, "tool_result: %s", why);
  securer_err_t err = NULL;
  if (securer_session_tool_reply (e->s, call_id, NULL, msg, &err) < 0)
    securer_error_free (&err);  /* no such call pending: only the client hears */
  client_send (c, json_pack ("{s:O?, s:b, s:s, s:s, s:I}", "id", id, "ok", 0, "error", msg,
                             "session", e->id, "call_id", (json_int_t) call_id));
}

static void
do_tool_result (struct client *c, json_t *id, const json_t *req)
{
  struct entry *e = find_entry (c, json_string_value (json_object_get (req, "session")));
  if (e == NULL)
    return reply_error (c, id, "tool_result: no such session");
  json_t *cid = json_object_get (req, "call_id");
  json_t *jerr = json_object_get (req, "error");
  json_t *value = json_object_get (req, "value");
  if (value == NULL)
    value = json_null ();  /* R NULL */
  if (!json_is_integer (cid))
    return tool_result_refused (c, id, e, e->call_id, "\"call_id\" must be an integer");
  uint64_t call_id = (uint64_t) json_integer_value (cid);
  if (jerr != NULL && !json_is_string (jerr))
    return tool_result_refused (c, id, e, call_id, "\"error\" must be a string");
  const char *error = json_string_value (jerr);
  securer_err_t err = NULL;
  json_t *tagged = NULL;
  if (error == NULL && e->plain)
    {
      tagged = securer_value_from_plain (value, &err);
      value = tagged;
    }
  else if (error == NULL && securer_value_validate (value, &err) < 0)
    value = NULL;
  if (err != NULL)
    tool_result_refused (c, id, e, call_id, securer_error_text (err));
  else if (securer_session_tool_reply (e->s, call_id, value, error, &err) < 0)
    reply_error (c, id, "tool_result: %s", securer_error_text (err));
  /* No reply on success: the execution's own reply follows. */
  securer_error_free (&err);
  json_decref (tagged);
}

/* upload and download: files in the work directory of a session or of a
 * pool (its members share it), never anywhere else. */
static void
do_file (struct client *c, json_t *id, const json_t *req, bool upload)
{
  const char *what = upload ? "upload" : "download";
  const char *sid = json_string_value (json_object_get (req, "session"));
  const char *pid = json_string_value (json_object_get (req, "pool"));
  struct entry *e = sid ? find_entry (c, sid) : NULL;
  struct pool *p = pid ? find_pool (c, pid) : NULL;
  for (struct entry *x = c->entries; p && x && e == NULL; x = x->next)
    if (x->pool == p)
      e = x;
  const char *name = json_string_value (json_object_get (req, "path"));
  if (e == NULL || name == NULL)
    return reply_error (c, id, "%s needs \"path\" and the \"session\" or \"pool\" of this client", what);
  if (e->wd.fd < 0)
    return reply_error (c, id, "%s: %s has no work directory (it is given by \"workdir\" when it opens)", what,
                        sid ? "the session" : "the pool");
  securer_err_t err = NULL;
  if (upload)
    {
      const json_t *data = json_object_get (req, "data");
      size_t n = 0;
      if (!json_is_string (data)
          || securer_base64_check (json_string_value (data), json_string_length (data), &n, NULL, 0) < 0)
        return reply_error (c, id, "upload: \"data\" must be the file's bytes in base64");
      if (n > srv.max_file_bytes)
        return reply_error (c, id, "upload: the file is %zu bytes, more than the %zu a file may be "
                            "(--max-file-bytes)", n, srv.max_file_bytes);
      unsigned char *buf = malloc (n + 1);
      if (buf == NULL)
        return reply_error (c, id, "upload: out of memory");
      securer_base64_check (json_string_value (data), json_string_length (data), &n, buf, n);
      int rc = serve_file_write (&e->wd, name, buf, n, json_is_true (json_object_get (req, "append")),
                                 srv.max_file_bytes, &err);
      free (buf);
      if (rc < 0)
        reply_error (c, id, "upload: %s%s", securer_error_text (err),
                     securer_error_errno (err) == EFBIG ? " (--max-file-bytes)" : "");
      else
        reply_ok (c, id, json_pack ("{s:s, s:I}", "path", name, "bytes", (json_int_t) n));
      securer_error_free (&err);
      return;
    }
  /* A reply holds a part of the file in base64 (4 bytes for 3), within
   * --max-reply; "offset" asks for the next. */
  size_t chunk = srv.max_reply > 4096 ? (srv.max_reply - 4096) / 4 * 3 : 0;
  const json_t *off = json_object_get (req, "offset");
  if (off != NULL && (!json_is_integer (off) || json_integer_value (off) < 0))
    return reply_error (c, id, "download: \"offset\" must be a whole number of bytes");
  char *data;
  size_t n;
  uint64_t size;
  if (serve_file_read (&e->wd, name, off ? (uint64_t) json_integer_value (off) : 0, chunk, srv.max_file_bytes,
                       &data, &n, &size, &err) < 0)
    {
      reply_error (c, id, "download: %s%s", securer_error_text (err),
                   securer_error_errno (err) == EFBIG ? " (--max-file-bytes)" : "");
      securer_error_free (&err);
      return;
    }
  size_t blen;
  char *b64 = securer_base64_encode (data, n, &blen);
  free (data);
  if (b64 == NULL)
    return reply_error (c, id, "download: out of memory");
  reply_ok (c, id, json_pack ("{s:s, s:I, s:I, s:s%}", "path", name, "bytes", (json_int_t) n, "size",
                              (json_int_t) size, "data", b64, blen));
  free (b64);
}

static void
handle_request (struct client *c, const char *line, size_t len)
{
  struct serve_request r;
  securer_err_t err = NULL;
  int parsed = serve_request_parse (line, len, &r, &err);
  json_t *req = r.req, *id = r.id;
  const char *op = r.op;
  if (parsed < 0)
    reply_error (c, id, "%s", securer_error_text (err));
  else if (!c->authed)
    {
      const char *tok = json_string_value (json_object_get (req, "token"));
      /* Constant-time compare: the token is a secret. */
      unsigned diff = tok == NULL || strlen (tok) != strlen (srv.token);
      for (size_t i = 0; !diff && i < strlen (srv.token); i++)
        diff |= (unsigned) (tok[i] ^ srv.token[i]);
      if (strcmp (op, "auth") != 0 || diff)
        {
          reply_error (c, id, "authentication failed");
          c->dead = true;
        }
      else
        {
          c->authed = true;
          reply_ok (c, id, NULL);
        }
    }
  else if (strcmp (op, "open") == 0)
    {
      /* The reply waits for R's "ready" (see on_start), so that a session
       * that cannot start fails here, with the reason, not at its first
       * execute. */
      struct entry *e = open_entry (c, req, NULL, &err);
      if (e == NULL)
        {
          char why[512];
          serve_log (SERVE_LOG_WARNING, "open_refused", "client=%u why=%s", c->num,
                     serve_log_quote (securer_error_text (err), why, sizeof why));
          reply_error (c, id, "%s", securer_error_text (err));
        }
      else
        {
          e->start_id = json_incref (id ? id : json_null ());
          e->opening = true;
        }
    }
  else if (strcmp (op, "execute") == 0)
    do_execute (c, id, req);
  else if (strcmp (op, "tool_result") == 0)
    do_tool_result (c, id, req);
  else if (strcmp (op, "upload") == 0 || strcmp (op, "download") == 0)
    do_file (c, id, req, op[0] == 'u');
  else if (strcmp (op, "validate") == 0)
    {
      struct entry *e = find_entry (c, json_string_value (json_object_get (req, "session")));
      const char *code = json_string_value (json_object_get (req, "code"));
      if (e == NULL || code == NULL)
        reply_error (c, id, "validate needs \"session\" and \"code\"");
      else if (e->req_id != NULL)
        reply_error (c, id, "validate: session is busy with another execution (it runs one at a time)");
      else
        {
          e->req_id = json_incref (id ? id : json_null ());
          if (securer_session_validate_async (e->s, code, on_validated, e, &err) < 0)
            {
              json_decref (e->req_id);
              e->req_id = NULL;
              reply_error (c, id, "validate: %s", securer_error_text (err));
            }
        }
    }
  else if (strcmp (op, "restart") == 0 || strcmp (op, "close") == 0 || strcmp (op, "status") == 0)
    {
      struct entry *e = find_entry (c, json_string_value (json_object_get (req, "session")));
      if (e == NULL)
        reply_error (c, id, "no such session");
      else if (op[0] == 'r' && e->start_id != NULL)
        reply_error (c, id, "restart: the session is already starting");
      else if (op[0] == 'r' && securer_session_restart (e->s, &err) < 0)
        reply_error (c, id, "%s", securer_error_text (err));
      else if (op[0] == 'r')
        e->start_id = json_incref (id ? id : json_null ());  /* answered by on_start */
      else if (op[0] == 'c')
        {
          close_entry (c, e);
          reply_ok (c, id, NULL);
        }
      else
        reply_ok (c, id, json_pack ("{s:b, s:b, s:I, s:b, s:s?}", "alive", securer_session_is_alive (e->s),
                                    "busy", securer_session_busy (e->s), "executions",
                                    (json_int_t) securer_session_executions (e->s), "sandboxed",
                                    !e->unsandboxed, "start", securer_session_start_kind (e->s)));
    }
  else if (strcmp (op, "pool_open") == 0)
    {
      json_int_t size = json_integer_value (json_object_get (req, "size"));
      if (size < 1 || size > SERVE_POOL_MAX)
        reply_error (c, id, "pool_open: \"size\" must be 1..%d", SERVE_POOL_MAX);
      else
        {
          struct pool *p = calloc (1, sizeof *p);
          char pid[32];
          snprintf (pid, sizeof pid, "pool_%u", ++srv.counter);
          if (p == NULL || (p->id = strdup (pid)) == NULL)
            {
              free (p);
              reply_error (c, id, "pool_open: out of memory");
              goto done;
            }
          p->c = c;
          p->reset = json_is_true (json_object_get (req, "reset_between_uses"));
          p->size = (unsigned) size;
          p->tail = &p->queue;
          p->next = c->pools;
          c->pools = p;
          p->timer_fd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
          bool ok = p->timer_fd >= 0;
          if (!ok)
            securer_error_set (&err, errno, "timerfd_create");
          else if (securer_loop_add (srv.loop, p->timer_fd, EPOLLIN, on_pool_timer, p, &err) < 0)
            {
              close (p->timer_fd);
              p->timer_fd = -1;
              ok = false;
            }
          /* Every member starts now (their start-ups overlap); the reply
           * waits until all are ready, or says why one could not start. */
          for (json_int_t i = 0; i < size && ok; i++)
            {
              struct entry *m = open_entry (c, req, p, &err);
              ok = m != NULL;
              /* Every member runs the same policy: the first says. */
              if (ok)
                p->unsandboxed = m->unsandboxed;
            }
          if (!ok)
            {
              reply_error (c, id, "pool_open: %s", securer_error_text (err));
              close_pool (c, p);
            }
          else
            {
              p->open_id = json_incref (id ? id : json_null ());
              p->starting = p->size;
            }
        }
    }
  else if (strcmp (op, "pool_status") == 0 || strcmp (op, "pool_close") == 0)
    {
      struct pool *p = find_pool (c, json_string_value (json_object_get (req, "pool")));
      if (p == NULL)
        reply_error (c, id, "no such pool");
      else if (op[5] == 'c')
        {
          close_pool (c, p);
          reply_ok (c, id, NULL);
        }
      else
        {
          json_int_t total = 0, busy = 0, idle = 0, dead = 0;
          for (struct entry *e = c->entries; e; e = e->next)
            if (e->pool == p)
              {
                total++;
                if (securer_session_busy (e->s))
                  busy++;
                else if (!securer_session_is_alive (e->s))
                  dead++;
                else
                  idle++;
              }
          reply_ok (c, id, json_pack ("{s:I, s:I, s:I, s:I, s:I}", "total", total, "busy", busy,
                                      "idle", idle, "dead", dead, "queued", (json_int_t) p->n_queued));
        }
    }
  else if (strcmp (op, "shutdown") == 0)
    {
      reply_ok (c, id, NULL);
      srv.stop = true;
    }
  else
    reply_error (c, id, "unknown op '%s'", op);
done:
  securer_error_free (&err);
  json_decref (req);
}

/* ---- clients ------------------------------------------------------------------ */

static void
reap_doomed (void)
{
  srv.reap = false;
  for (struct client *c = srv.clients; c; c = c->next)
    {
      for (struct entry *e = c->entries, *next; e; e = next)
        {
          next = e->next;
          if (e->doomed)
            close_entry (c, e);
        }
      for (struct pool *p = c->pools, *next; p; p = next)
        {
          next = p->next;
          if (p->doomed)
            close_pool (c, p);
        }
    }
}

static void
client_free (struct client *c)
{
  for (struct client **pp = &srv.clients; *pp; pp = &(*pp)->next)
    if (*pp == c)
      {
        *pp = c->next;
        break;
      }
  while (c->entries)
    close_entry (c, c->entries);
  while (c->pools)
    close_pool (c, c->pools);
  if (c->ch.rfd >= 0)
    securer_loop_del (srv.loop, c->ch.rfd);
  if (c->is_stdio)
    {
      /* Not ours to close; just forget them. */
      c->ch.rfd = c->ch.wfd = -1;
      srv.stop = true;
    }
  securer_channel_close (&c->ch);
  serve_log (SERVE_LOG_INFO, "disconnect", "client=%u", c->num);
  json_decref (c->audit_fields);
  free (c);
}

/* Whether a request of c still waits for its reply: an open or restart
 * for R to be ready, an execute or validate, a pool's opening or queue. */
static bool
client_awaits (const struct client *c)
{
  for (const struct entry *e = c->entries; e; e = e->next)
    if (!e->doomed && (e->req_id != NULL || e->start_id != NULL))
      return true;
  for (const struct pool *p = c->pools; p; p = p->next)
    if (!p->doomed && (p->open_id != NULL || p->queue != NULL))
      return true;
  return false;
}

/* End of stdin with requests in flight (`echo '{"op":"open"}' | securer
 * serve`): nothing more is read, every request read is answered, and the
 * server ends once none waits (checked by the main loop).  A tool call
 * now has nobody to answer it: it fails in R rather than hanging. */
static void
client_drain (struct client *c)
{
  c->draining = true;
  securer_loop_del (srv.loop, c->ch.rfd);
  for (struct entry *e = c->entries; e; e = e->next)
    if (e->req_id != NULL && e->call_id != 0)
      securer_session_tool_reply (e->s, e->call_id, NULL, "the client closed its input", NULL);
}

static void
on_client (void *data, uint32_t ev)
{
  struct client *c = data;
  if (ev & EPOLLOUT)
    {
      securer_err_t e = NULL;
      int rc = securer_channel_flush (&c->ch, &e);
      securer_error_free (&e);
      if (rc < 0)
        return client_free (c);
      if (rc == 1)
        securer_loop_mod (srv.loop, c->ch.rfd, EPOLLIN, &e);
      securer_error_free (&e);
    }
  if (!(ev & (EPOLLIN | EPOLLHUP | EPOLLERR)))
    return;
  for (;;)
    {
      const char *line;
      size_t len;
      securer_err_t e = NULL;
      if (c->ch.rfd < 0)
        return client_free (c);
      enum channel_read_status st = securer_channel_read (&c->ch, &line, &len, &e);
      securer_error_free (&e);
      if (st == CHANNEL_AGAIN)
        return;
      if (st == CHANNEL_LINE)
        {
          if (len > 0)
            handle_request (c, line, len);
          if (c->dead)
            {
              securer_channel_flush (&c->ch, &e);
              securer_error_free (&e);
              return client_free (c);
            }
          continue;
        }
      if (st == CHANNEL_EOF && c->is_stdio && client_awaits (c))
        return client_drain (c);
      if (st == CHANNEL_TOO_LARGE)
        reply_error (c, NULL, "request exceeds the message size limit; closing");
      /* EOF, error or oversize: the client is gone. */
      securer_channel_flush (&c->ch, &e);
      securer_error_free (&e);
      return client_free (c);
    }
}

static int
add_client (int rfd, int wfd, bool authed, bool stdio, const struct ucred *peer, securer_err_t *err)
{
  struct client *c = calloc (1, sizeof *c);
  if (c == NULL)
    return securer_error_set (err, ENOMEM, "client");
  c->num = ++srv.clients_seen;
  c->uid = peer ? peer->uid : getuid ();
  c->pid = peer ? peer->pid : getppid ();
  c->audit_fields = json_pack ("{s:I, s:I, s:I}", "client", (json_int_t) c->num, "client_uid",
                               (json_int_t) c->uid, "client_pid", (json_int_t) c->pid);
  securer_channel_init (&c->ch, rfd, wfd, srv.max_message);
  c->ch.max_pending = SIZE_MAX / 4;  /* the host is trusted to read its replies */
  c->authed = authed;
  c->is_stdio = stdio;
  if (securer_loop_add (srv.loop, rfd, EPOLLIN, on_client, c, err) < 0)
    {
      json_decref (c->audit_fields);
      free (c);
      return -1;
    }
  c->next = srv.clients;
  srv.clients = c;
  serve_log (SERVE_LOG_INFO, "connect", "client=%u uid=%u pid=%d via=%s", c->num, (unsigned) c->uid,
             (int) c->pid, stdio ? "stdio" : "socket");
  return 0;
}

static void
on_listen (void *data, uint32_t ev)
{
  int fd = accept4 (srv.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0)
    return;
  struct ucred cred = { 0 };
  /* Only our own uid (and --socket-group) may even try a token. */
  if (!serve_peer_allowed (fd, srv.have_group, srv.group, &cred))
    {
      const char msg[] = "{\"id\":null,\"ok\":false,\"error\":\"peer uid refused\"}\n";
      if (write (fd, msg, sizeof msg - 1) < 0)
        {
        }
      serve_log (SERVE_LOG_WARNING, "refused", "uid=%u gid=%u pid=%d why=\"not our uid nor of --socket-group\"",
                 (unsigned) cred.uid, (unsigned) cred.gid, (int) cred.pid);
      close (fd);
      return;
    }
  securer_err_t e = NULL;
  if (add_client (fd, fd, false, false, &cred, &e) < 0)
    {
      close (fd);
      securer_error_free (&e);
    }
}

/* The token that every client must send first, in a file only the
 * server's uid (and --socket-group) can read: never on stdout, which under
 * a service manager is the journal. */
static int
write_token (const char *tokpath, securer_err_t *err)
{
  if (securer_random_hex (srv.token, 16, err) < 0)
    return -1;
  unlink (tokpath);
  int fd = open (tokpath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return securer_error_set (err, errno, "write the token file %s", tokpath);
  bool ok = (!srv.have_group || (fchown (fd, (uid_t) -1, srv.group) == 0 && fchmod (fd, 0640) == 0))
            && write (fd, srv.token, 32) == 32 && write (fd, "\n", 1) == 1;
  int e = errno;
  close (fd);
  if (!ok)
    return securer_error_set (err, e ? e : EIO, "write the token file %s", tokpath);
  return 0;
}

/* --listen PATH: PATH's directory is ours, 0700 (0750 with group
 * --socket-group, so that its members reach the socket), and the socket
 * itself --socket-mode (0600, or 0660 with a group). */
static int
setup_listen (const char *path, unsigned mode, securer_err_t *err)
{
  char *dir = strdup (path);
  char *slash = dir ? strrchr (dir, '/') : NULL;
  if (slash == NULL)
    {
      free (dir);
      return securer_error_set (err, EINVAL, "--listen needs a path with a directory");
    }
  *slash = '\0';
  mode_t dmode = srv.have_group ? 0750 : 0700;
  if (dir[0] != '\0' && mkdir (dir, dmode) == 0 && srv.have_group && chown (dir, (uid_t) -1, srv.group) < 0)
    {
      int e = errno;
      securer_error_set (err, e, "--listen: give %s to --socket-group", dir);
      free (dir);
      return -1;
    }
  struct stat st;
  if (lstat (dir[0] ? dir : "/", &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != getuid ()
      || (st.st_mode & 07) != 0 || ((st.st_mode & 070) != 0 && !(srv.have_group && st.st_gid == srv.group)))
    {
      securer_error_set (err, EPERM, "--listen: %s must be a directory of ours with mode 0700%s", dir,
                         srv.have_group ? " (or 0750 of the --socket-group)" : "");
      free (dir);
      return -1;
    }
  free (dir);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof sa.sun_path)
    return securer_error_set (err, ENAMETOOLONG, "--listen: path too long");
  strcpy (sa.sun_path, path);
  srv.listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (srv.listen_fd < 0)
    return securer_error_set (err, errno, "socket");
  unlink (path);
  if (bind (srv.listen_fd, (struct sockaddr *) &sa, sizeof sa) < 0
      || (srv.have_group && chown (path, (uid_t) -1, srv.group) < 0) || chmod (path, mode) < 0
      || listen (srv.listen_fd, 64) < 0)
    return securer_error_set (err, errno, "--listen %s", path);
  return 0;
}

static int serve_main (int argc, char **argv);

int
cmd_serve (int argc, char **argv)
{
  int status = serve_main (argc, argv);
  for (char **a = srv.allowed; a != NULL && *a != NULL; a++)
    free (*a);
  free (srv.allowed);
  srv.allowed = NULL;
  return status;
}

static int
serve_main (int argc, char **argv)
{
  const char *listen_path = NULL, *policy_name = NULL, *token_file = NULL;
  char tokpath[PATH_MAX] = "";
  int log_level = -1;
  unsigned socket_mode = 0;
  memset (&srv, 0, sizeof srv);
  srv.listen_fd = -1;
  srv.max_sessions = 256;
  srv.max_client_sessions = 128;
  srv.max_message = SECURER_DEFAULT_MAX_MESSAGE;
  srv.max_reply = SECURER_DEFAULT_MAX_REPLY;
  srv.max_output_lines = SECURER_DEFAULT_MAX_OUTPUT_LINES;
  srv.max_output_bytes = SECURER_DEFAULT_MAX_OUTPUT_BYTES;
  srv.max_tool_calls = SECURER_DEFAULT_MAX_TOOL_CALLS;
  srv.max_plots = SECURER_DEFAULT_MAX_PLOTS;
  srv.max_plot_bytes = SECURER_DEFAULT_MAX_PLOT_BYTES;
  srv.max_file_bytes = 8u * 1024u * 1024u;
  static const char *const with_value[] = { "--listen", "-p", "--policy", "--max-message",
                                            "--policy-dir", "--audit-dir", "--max-reply",
                                            "--max-output-lines", "--max-output-bytes",
                                            "--max-tool-calls", "--max-plots", "--max-plot-bytes",
                                            "--max-file-bytes",
                                            "--allow-policy", "--max-sessions",
                                            "--max-client-sessions", "--log", "--socket-group",
                                            "--socket-mode", "--audit-log", "--token-file", NULL };
  int rc;
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      const char *val = i + 1 < argc ? argv[i + 1] : NULL;
      bool needs = false;
      for (const char *const *w = with_value; *w; w++)
        needs |= strcmp (a, *w) == 0;
      if (needs && val == NULL)
        {
          fprintf (stderr, "securer serve: %s needs a value\n", a);
          return 2;
        }
      if (strcmp (a, "--listen") == 0)
        listen_path = argv[++i];
      else if (strcmp (a, "--policy-dir") == 0 || strcmp (a, "--audit-dir") == 0)
        {
          struct stat st;
          if (stat (val, &st) < 0 || !S_ISDIR (st.st_mode))
            {
              fprintf (stderr, "securer serve: %s %s: not a directory\n", a, val);
              return 2;
            }
          *(a[2] == 'p' ? &srv.policy_dir : &srv.audit_dir) = argv[++i];
        }
      else if (strcmp (a, "--sanitize-errors") == 0)
        srv.sanitize = true;
      else if (strcmp (a, "--allow-unsandboxed") == 0)
        srv.allow_unsandboxed = true;
      else if (strcmp (a, "--allow-workdir") == 0)
        srv.allow_workdir = true;
      else if (strcmp (a, "--allow-network") == 0)
        srv.allow_network = true;
      else if (strcmp (a, "--log") == 0)
        {
          if ((log_level = serve_log_level_parse (argv[++i])) < 0)
            {
              fprintf (stderr, "securer serve: --log must be error, warning, info or debug\n");
              return 2;
            }
        }
      else if (strcmp (a, "--socket-group") == 0)
        {
          struct group *g = getgrnam (argv[++i]);
          char *end;
          unsigned long n = strtoul (val, &end, 10);
          if (g == NULL && (val[0] == '\0' || *end || n > UINT_MAX - 1))
            {
              fprintf (stderr, "securer serve: --socket-group %s: no such group\n", val);
              return 2;
            }
          srv.have_group = true;
          srv.group = g ? g->gr_gid : (gid_t) n;
        }
      else if (strcmp (a, "--socket-mode") == 0)
        {
          char *end;
          unsigned long m = strtoul (argv[++i], &end, 8);
          /* Never the world's: a token is a weak second gate. */
          if (*end || (m != 0600 && m != 0660))
            {
              fprintf (stderr, "securer serve: --socket-mode must be 0600 or 0660\n");
              return 2;
            }
          socket_mode = (unsigned) m;
        }
      else if (strcmp (a, "--audit-log") == 0)
        srv.audit_log = argv[++i];
      else if (strcmp (a, "--token-file") == 0)
        token_file = argv[++i];
      else if (strcmp (a, "--allow-policy") == 0)
        {
          if (add_allowed (argv[++i]) < 0)
            return 2;
        }
      else if (strcmp (a, "--max-sessions") == 0 || strcmp (a, "--max-client-sessions") == 0)
        {
          char *end;
          unsigned long n = strtoul (argv[++i], &end, 10);
          if (val[0] == '-' || *end || n < 1 || n > 65536)
            {
              fprintf (stderr, "securer serve: %s must be 1..65536\n", a);
              return 2;
            }
          *(a[6] == 's' ? &srv.max_sessions : &srv.max_client_sessions) = (unsigned) n;
        }
      else if (strcmp (a, "--max-reply") == 0 || strcmp (a, "--max-output-lines") == 0
               || strcmp (a, "--max-output-bytes") == 0 || strcmp (a, "--max-tool-calls") == 0
               || strcmp (a, "--max-plots") == 0 || strcmp (a, "--max-plot-bytes") == 0
               || strcmp (a, "--max-file-bytes") == 0)
        {
          char *end;
          unsigned long long n = strtoull (argv[++i], &end, 10);
          unsigned long long lo = strcmp (a, "--max-reply") == 0 ? 65536 : 1;
          unsigned long long hi = strcmp (a, "--max-output-lines") == 0 || strcmp (a, "--max-tool-calls") == 0
                                      || strcmp (a, "--max-plots") == 0 ? UINT_MAX : 1ull << 40;
          if (val[0] == '-' || *end || n < lo || n > hi)
            {
              fprintf (stderr, "securer serve: %s must be %llu..%llu\n", a, lo, hi);
              return 2;
            }
          if (strcmp (a, "--max-reply") == 0)
            srv.max_reply = (size_t) n;
          else if (strcmp (a, "--max-output-bytes") == 0)
            srv.max_output_bytes = (size_t) n;
          else if (strcmp (a, "--max-output-lines") == 0)
            srv.max_output_lines = (unsigned) n;
          else if (strcmp (a, "--max-plots") == 0)
            srv.max_plots = (unsigned) n;
          else if (strcmp (a, "--max-plot-bytes") == 0)
            srv.max_plot_bytes = (size_t) n;
          else if (strcmp (a, "--max-file-bytes") == 0)
            srv.max_file_bytes = (size_t) n;
          else
            srv.max_tool_calls = (unsigned) n;
        }
      else if (strcmp (a, "-p") == 0 || strcmp (a, "--policy") == 0)
        policy_name = argv[++i];
      else if (strcmp (a, "--max-message") == 0)
        {
          char *end;
          unsigned long n = strtoul (argv[++i], &end, 10);
          if (*end || n < 1024 || n > (1ul << 30))
            {
              fprintf (stderr, "securer serve: --max-message must be 1024..1073741824\n");
              return 2;
            }
          srv.max_message = n;
        }
      else if ((rc = cli_start_option ("serve", a, &srv.start)) != 0)
        {
          if (rc < 0)
            return 2;
        }
      else if (strcmp (a, "-v") == 0 || strcmp (a, "--verbose") == 0)
        srv.verbose = true;
      else
        {
          fprintf (stderr, "securer serve: unknown option '%s'; see 'securer serve --help'\n", a);
          return 2;
        }
    }
  if (socket_mode == 0)
    socket_mode = srv.have_group ? 0660 : 0600;
  if (socket_mode == 0660 && !srv.have_group)
    {
      fprintf (stderr, "securer serve: --socket-mode 0660 needs --socket-group\n");
      return 2;
    }
  if (srv.audit_log != NULL && srv.audit_dir != NULL)
    {
      fprintf (stderr, "securer serve: --audit-log and --audit-dir: choose one\n");
      return 2;
    }
  {
    char ts[32];
    time_t now = time (NULL);
    struct tm tm;
    strftime (ts, sizeof ts, "%Y%m%dT%H%M%SZ", gmtime_r (&now, &tm));
    snprintf (srv.run_id, sizeof srv.run_id, "%s-%d", ts, (int) getpid ());
  }
  signal (SIGPIPE, SIG_IGN);
  securer_err_t err = NULL;
  srv.default_name = policy_name != NULL ? policy_name : "r";
  if (policy_name != NULL)
    {
      char *path = NULL;
      if (securer_policy_find (policy_name, &path, &err) < 0
          || securer_policy_load_file (path, &srv.policy, NULL, &err) < 0)
        {
          free (path);
          cli_report (&err);
          return 125;
        }
      free (path);
      const char *missing = NULL;
      if (!srv.allow_unsandboxed && !securer_policy_is_sandboxed (srv.policy, &missing))
        {
          fprintf (stderr, "securer serve: policy '%s' does not sandbox the code (%s); start the "
                   "server with --allow-unsandboxed to serve it anyway\n", policy_name, missing);
          return 125;
        }
    }
  int status = 0;
  if (securer_loop_new (&srv.loop, &err) < 0 || setup_signals (&err) < 0)
    goto fail;
  /* A socket from systemd (securer.socket) is served as --listen would
   * serve its own. */
  struct sockaddr_un activated = { 0 };
  int act = serve_listen_fds (&srv.listen_fd, &err);
  if (act < 0)
    goto fail;
  if (act == 1)
    {
      socklen_t alen = sizeof activated;
      srv.activated = true;
      if (getsockname (srv.listen_fd, (struct sockaddr *) &activated, &alen) < 0 || activated.sun_path[0] == '\0')
        {
          securer_error_set (&err, EINVAL, "socket activation: the socket has no path (ListenStream= a path)");
          goto fail;
        }
      listen_path = activated.sun_path;
    }
  serve_log_set_level (log_level >= 0 ? (enum serve_log_level) log_level
                       : listen_path != NULL ? SERVE_LOG_INFO : SERVE_LOG_WARNING);
  if (listen_path != NULL)
    {
      if (token_file == NULL)
        snprintf (tokpath, sizeof tokpath, "%s.token", listen_path);
      else
        snprintf (tokpath, sizeof tokpath, "%s", token_file);
      if ((!srv.activated && setup_listen (listen_path, socket_mode, &err) < 0)
          || write_token (tokpath, &err) < 0
          || securer_loop_add (srv.loop, srv.listen_fd, EPOLLIN, on_listen, NULL, &err) < 0)
        goto fail;
      /* Through jansson: the paths may hold characters JSON must escape. */
      json_t *hello = json_pack ("{s:s, s:s}", "listen", listen_path, "token_file", tokpath);
      char *line = hello ? json_dumps (hello, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
      if (line != NULL)
        printf ("%s\n", line);
      free (line);
      json_decref (hello);
      fflush (stdout);
      char where[PATH_MAX + 8];
      serve_log (SERVE_LOG_INFO, "listen", "socket=%s activated=%s", serve_log_quote (listen_path, where, sizeof where),
                 srv.activated ? "true" : "false");
    }
  else
    {
      fcntl (0, F_SETFL, fcntl (0, F_GETFL) | O_NONBLOCK);
      if (add_client (0, 1, true, true, NULL, &err) < 0)
        goto fail;
    }
  serve_notify ("READY=1");
  while (!srv.stop)
    {
      if (securer_loop_run_once (srv.loop, -1, &err) < 0)
        goto fail;
      /* Out here, no session's callback is on the stack. */
      if (srv.reap)
        reap_doomed ();
      dispatch_all ();
      for (struct client *c = srv.clients, *next; c; c = next)
        {
          next = c->next;
          if (c->draining && !client_awaits (c))
            client_free (c);
        }
    }
  /* Let the last replies out before closing. */
  for (struct client *c = srv.clients; c; c = c->next)
    while (securer_channel_pending (&c->ch))
      {
        int fl = fcntl (c->ch.wfd, F_GETFL);
        fcntl (c->ch.wfd, F_SETFL, fl & ~O_NONBLOCK);
        if (securer_channel_flush (&c->ch, &err) < 0)
          {
            securer_error_free (&err);
            break;
          }
      }
  goto out;
fail:
  cli_report (&err);
  status = 125;
out:
  serve_notify ("STOPPING=1");
  while (srv.clients)
    client_free (srv.clients);
  if (srv.listen_fd >= 0)
    {
      close (srv.listen_fd);
      /* systemd's socket is systemd's to remove. */
      if (!srv.activated)
        unlink (listen_path);
    }
  if (tokpath[0] != '\0' && srv.token[0] != '\0')
    unlink (tokpath);
  signal (SIGTERM, SIG_DFL);
  signal (SIGINT, SIG_DFL);
  signal (SIGHUP, SIG_DFL);
  for (int i = 0; i < 2; i++)
    if (sig_pipe[i] >= 0)
      {
        close (sig_pipe[i]);
        sig_pipe[i] = -1;
      }
  securer_loop_free (srv.loop);
  securer_policy_free (srv.policy);
  return status;
}
