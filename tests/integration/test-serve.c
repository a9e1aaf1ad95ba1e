/* `securer exec` and `securer serve` from the outside, as a host would use
 * them: real processes, real sandboxed R. */
#include <config.h>

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host-util.h"

static const char *
bin (void)
{
  const char *b = getenv ("SECURER_BIN");
  return b ? b : SECURER_ABS_BUILDDIR "/securer";
}

/* Runs securer with argv; returns exit status, stdout in *out. */
static int
run (char *const *argv, const char *input, char **out)
{
  int in[2], o[2];
  cr_assert_eq (pipe (in), 0);
  cr_assert_eq (pipe (o), 0);
  pid_t pid = fork ();
  if (pid == 0)
    {
      /* A failing test must not leave a server behind (--listen never
       * sees EOF on stdin). */
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      dup2 (in[0], 0);
      dup2 (o[1], 1);
      close (in[0]);
      close (in[1]);
      close (o[0]);
      close (o[1]);
      execv (bin (), argv);
      _exit (127);
    }
  close (in[0]);
  close (o[1]);
  if (input && write (in[1], input, strlen (input)) < 0)
    cr_assert_fail ("write");
  close (in[1]);
  size_t len = 0;
  FILE *m = open_memstream (out, &len);
  char buf[4096];
  ssize_t r;
  while ((r = read (o[0], buf, sizeof buf)) > 0)
    fwrite (buf, 1, (size_t) r, m);
  fclose (m);
  close (o[0]);
  int st;
  waitpid (pid, &st, 0);
  return WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
}

Test (exec, prints_like_the_console_and_reports_errors)
{
  char *out = NULL;
  char *a1[] = { "securer", "exec", "-e", "x <- c(a = 1.5); x; invisible(2); cat('done\\n')", NULL };
  cr_assert_eq (run (a1, NULL, &out), 0);
  cr_assert_str_eq (out, "  a \n1.5 \ndone\n");
  free (out);
  char *a2[] = { "securer", "exec", "-e", "stop('boom')", NULL };
  cr_assert_eq (run (a2, NULL, &out), 1);
  free (out);
  char *a3[] = { "securer", "exec", "--timeout", "0.3", "-e", "Sys.sleep(20)", NULL };
  cr_assert_eq (run (a3, NULL, &out), 124);
  free (out);
  char *a4[] = { "securer", "exec", "--json", "-", NULL };
  cr_assert_eq (run (a4, "c(0.1 + 0.2, NA)", &out), 0);
  json_t *j = json_loads (out, 0, NULL);
  cr_assert_not_null (j, "%s", out);
  cr_assert_str_eq (json_string_value (json_object_get (j, "status")), "ok");
  json_t *v = json_object_get (json_object_get (j, "value"), "v");
  cr_assert_eq (json_real_value (json_array_get (v, 0)), 0.1 + 0.2);
  cr_assert (json_is_null (json_array_get (v, 1)));
  json_decref (j);
  free (out);
  char *a5[] = { "securer", "exec", "--bogus", NULL };
  cr_assert_eq (run (a5, NULL, &out), 2);
  free (out);
}

Test (exec, host_command_tools)
{
  char dir[] = "/tmp/securer-tool-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char tool[128];
  snprintf (tool, sizeof tool, "%s/double.sh", dir);
  FILE *f = fopen (tool, "w");
  /* Reads {"x": N} and prints 2N; fails for 13. */
  fputs ("#!/bin/sh\nread line\nn=${line#*:}\nn=${n%\\}}\n"
         "if [ \"$n\" = 13 ]; then echo 'unlucky number' >&2; exit 3; fi\necho $((n * 2))\n", f);
  fclose (f);
  chmod (tool, 0700);
  char spec[256];
  snprintf (spec, sizeof spec, "twice(x:integer)=%s", tool);
  char *out = NULL;
  char *a1[] = { "securer", "exec", "--tool", spec, "-e", "s <- 0L; for (i in 1:4) s <- s + twice(i); s", NULL };
  cr_assert_eq (run (a1, NULL, &out), 0);
  cr_assert_str_eq (out, "[1] 20\n");
  free (out);
  char *a2[] = { "securer", "exec", "--json", "--tool", spec, "-e", "twice(13)", NULL };
  cr_assert_eq (run (a2, NULL, &out), 1);
  cr_assert (strstr (out, "unlucky number") != NULL, "%s", out);
  free (out);
  unlink (tool);

  /* A tool that never answers is bounded by --timeout. */
  snprintf (tool, sizeof tool, "%s/hang.sh", dir);
  f = fopen (tool, "w");
  fputs ("#!/bin/sh\nexec sleep 1000\n", f);
  fclose (f);
  chmod (tool, 0700);
  snprintf (spec, sizeof spec, "hang=%s", tool);
  char *a3[] = { "securer", "exec", "--json", "--timeout", "1", "--tool", spec, "-e", "hang()", NULL };
  cr_assert_eq (run (a3, NULL, &out), 124);
  cr_assert (strstr (out, "\"status\":\"timeout\"") != NULL, "%s", out);
  free (out);
  unlink (tool);
  /* One that floods its stdout is stopped and refused. */
  snprintf (tool, sizeof tool, "%s/flood.sh", dir);
  f = fopen (tool, "w");
  fputs ("#!/bin/sh\nexec head -c 10000000 /dev/zero\n", f);
  fclose (f);
  chmod (tool, 0700);
  snprintf (spec, sizeof spec, "flood=%s", tool);
  char *a4[] = { "securer", "exec", "--json", "--tool", spec, "-e", "flood()", NULL };
  cr_assert_eq (run (a4, NULL, &out), 1);
  cr_assert (strstr (out, "printed more than 1048576 bytes") != NULL, "%s", out);
  free (out);
  unlink (tool);
  rmdir (dir);
}

/* ---- serve over stdin/stdout --------------------------------------------------- */

struct conn {
  FILE *in, *out;
  pid_t pid;
};

static void
start_serve (struct conn *c, char *const *argv)
{
  int in[2], o[2];
  cr_assert_eq (pipe (in), 0);
  cr_assert_eq (pipe (o), 0);
  c->pid = fork ();
  if (c->pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      dup2 (in[0], 0);
      dup2 (o[1], 1);
      close (in[1]);
      close (o[0]);
      execv (bin (), argv);
      _exit (127);
    }
  close (in[0]);
  close (o[1]);
  c->in = fdopen (in[1], "w");
  c->out = fdopen (o[0], "r");
}

static void
send_line (struct conn *c, const char *line)
{
  fputs (line, c->in);
  fputc ('\n', c->in);
  fflush (c->in);
}

static json_t *
recv_json (struct conn *c)
{
  char *line = NULL;
  size_t cap = 0;
  cr_assert_gt (getline (&line, &cap, c->out), 0, "serve closed its output");
  json_t *j = json_loads (line, 0, NULL);
  cr_assert_not_null (j, "not JSON: %s", line);
  free (line);
  return j;
}

Test (serve, sessions_tools_and_errors_over_stdio)
{
  struct conn c;
  char *argv[] = { "securer", "serve", NULL };
  start_serve (&c, argv);
  send_line (&c, "{\"op\":\"open\",\"id\":1,\"tools\":[{\"name\":\"add\",\"args\":{\"a\":\"numeric\",\"b\":\"numeric\"}}]}");
  json_t *r = recv_json (&c);
  cr_assert (json_is_true (json_object_get (r, "ok")));
  char sid[64];
  snprintf (sid, sizeof sid, "%s", json_string_value (json_object_get (r, "session")));
  json_decref (r);
  char req[512];
  snprintf (req, sizeof req,
            "{\"op\":\"execute\",\"id\":2,\"session\":\"%s\",\"plain\":true,\"stream\":true,"
            "\"code\":\"s <- 0; for (i in 1:3) s <- add(s, i); cat('ok\\\\n'); s\"}", sid);
  send_line (&c, req);
  int calls = 0, lines = 0;
  for (;;)
    {
      r = recv_json (&c);
      const char *ev = json_string_value (json_object_get (r, "event"));
      if (ev && strcmp (ev, "tool_call") == 0)
        {
          calls++;
          json_t *args = json_object_get (r, "args");
          double sum = json_number_value (json_object_get (args, "a"))
                       + json_number_value (json_object_get (args, "b"));
          snprintf (req, sizeof req, "{\"op\":\"tool_result\",\"session\":\"%s\",\"call_id\":%lld,\"value\":%g}",
                    sid, (long long) json_integer_value (json_object_get (r, "call_id")), sum);
          send_line (&c, req);
        }
      else if (ev)
        lines++;
      else
        break;
      json_decref (r);
    }
  cr_assert_eq (calls, 3);
  cr_assert_eq (lines, 1);
  cr_assert_eq (json_integer_value (json_object_get (r, "id")), 2);
  json_t *res = json_object_get (r, "result");
  cr_assert_str_eq (json_string_value (json_object_get (res, "status")), "ok");
  cr_assert_eq (json_number_value (json_object_get (res, "value")), 6.0);
  json_decref (r);

  /* A tool error reaches R as an error; the execution reports it. */
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":3,\"session\":\"%s\",\"code\":\"add(1, 2)\"}", sid);
  send_line (&c, req);
  r = recv_json (&c);
  snprintf (req, sizeof req, "{\"op\":\"tool_result\",\"session\":\"%s\",\"call_id\":%lld,\"error\":\"no adding today\"}",
            sid, (long long) json_integer_value (json_object_get (r, "call_id")));
  json_decref (r);
  send_line (&c, req);
  r = recv_json (&c);
  res = json_object_get (r, "result");
  cr_assert_str_eq (json_string_value (json_object_get (res, "status")), "error");
  cr_assert_str_eq (json_string_value (json_object_get (res, "error")), "no adding today");
  json_decref (r);

  send_line (&c, "not json");
  r = recv_json (&c);
  cr_assert (json_is_false (json_object_get (r, "ok")));
  json_decref (r);
  send_line (&c, "{\"op\":\"execute\",\"id\":4,\"session\":\"sess_nope\",\"code\":\"1\"}");
  r = recv_json (&c);
  cr_assert (json_is_false (json_object_get (r, "ok")));
  json_decref (r);

  send_line (&c, "{\"op\":\"pool_open\",\"id\":5,\"size\":2,\"reset_between_uses\":true}");
  r = recv_json (&c);
  char pool[64];
  snprintf (pool, sizeof pool, "%s", json_string_value (json_object_get (r, "pool")));
  json_decref (r);
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":6,\"pool\":\"%s\",\"code\":\"x <- 99\"}", pool);
  send_line (&c, req);
  json_decref (recv_json (&c));
  snprintf (req, sizeof req, "{\"op\":\"pool_status\",\"id\":7,\"pool\":\"%s\"}", pool);
  send_line (&c, req);
  r = recv_json (&c);
  cr_assert_eq (json_integer_value (json_object_get (r, "total")), 2);
  cr_assert_eq (json_integer_value (json_object_get (r, "busy")), 0);
  json_decref (r);

  /* EOF on stdin ends the server and every session with it. */
  fclose (c.in);
  int st;
  waitpid (c.pid, &st, 0);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0);
  fclose (c.out);
}

/* ---- serve --listen ---------------------------------------------------------------- */

static int
connect_to (const char *path)
{
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s", path);
  cr_assert_eq (connect (fd, (struct sockaddr *) &sa, sizeof sa), 0, "connect: %s", strerror (errno));
  return fd;
}

/* The token of a listening server, from the file its first line names:
 * never from stdout, which under a service manager is the journal. */
static char *
token_of (json_t *hello)
{
  cr_assert_null (json_object_get (hello, "token"), "the token was printed");
  const char *path = json_string_value (json_object_get (hello, "token_file"));
  cr_assert_not_null (path);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f, "%s: %s", path, strerror (errno));
  char buf[64] = "";
  cr_assert_not_null (fgets (buf, sizeof buf, f));
  fclose (f);
  buf[strcspn (buf, "\n")] = '\0';
  return strdup (buf);
}

static json_t *
ask (int fd, const char *line)
{
  /* A refused client may already be cut off: writing then fails with
   * EPIPE (MSG_NOSIGNAL, not a SIGPIPE crash), which reads as "no answer". */
  if (send (fd, line, strlen (line), MSG_NOSIGNAL) < 0 || send (fd, "\n", 1, MSG_NOSIGNAL) != 1)
    {
      cr_assert_eq (errno, EPIPE, "send: %s", strerror (errno));
      return NULL;
    }
  char buf[8192];
  size_t n = 0;
  while (n < sizeof buf - 1)
    {
      ssize_t r = read (fd, buf + n, 1);
      if (r <= 0)
        return NULL;
      if (buf[n] == '\n')
        break;
      n++;
    }
  buf[n] = '\0';
  return json_loads (buf, 0, NULL);
}

Test (serve, listen_needs_the_token)
{
  char dir[] = "/tmp/securer-serve-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char sock[128];
  snprintf (sock, sizeof sock, "%s/s/serve.sock", dir);
  struct conn c;
  char *argv[] = { "securer", "serve", "--listen", sock, NULL };
  start_serve (&c, argv);
  json_t *hello = recv_json (&c);
  char *token = token_of (hello);
  cr_assert_eq (strlen (token), 32, "128-bit token in hex");
  char sdir[128];
  snprintf (sdir, sizeof sdir, "%s/s", dir);
  struct stat st;
  cr_assert_eq (stat (sdir, &st), 0);
  cr_assert_eq (st.st_mode & 0777, 0700);
  char tokpath[160];
  snprintf (tokpath, sizeof tokpath, "%s.token", sock);
  cr_assert_eq (stat (tokpath, &st), 0);
  cr_assert_eq (st.st_mode & 0777, 0600);

  /* Wrong token: refused, connection closed, nothing else is served. */
  int fd = connect_to (sock);
  json_t *r = ask (fd, "{\"op\":\"auth\",\"token\":\"00000000000000000000000000000000\"}");
  cr_assert (json_is_false (json_object_get (r, "ok")));
  json_decref (r);
  cr_assert_null (ask (fd, "{\"op\":\"open\",\"id\":1}"), "a refused client must be cut off");
  close (fd);
  /* No token at all. */
  fd = connect_to (sock);
  r = ask (fd, "{\"op\":\"open\",\"id\":1}");
  cr_assert (json_is_false (json_object_get (r, "ok")));
  json_decref (r);
  close (fd);

  fd = connect_to (sock);
  char req[128];
  snprintf (req, sizeof req, "{\"op\":\"auth\",\"token\":\"%s\"}", token);
  r = ask (fd, req);
  cr_assert (json_is_true (json_object_get (r, "ok")));
  json_decref (r);
  r = ask (fd, "{\"op\":\"open\",\"id\":1}");
  cr_assert (json_is_true (json_object_get (r, "ok")));
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":2,\"session\":\"%s\",\"code\":\"6 * 7\"}",
            json_string_value (json_object_get (r, "session")));
  json_decref (r);
  r = ask (fd, req);
  json_t *v = json_object_get (json_object_get (r, "result"), "value");
  cr_assert_eq (json_number_value (json_array_get (json_object_get (v, "v"), 0)), 42.0);
  json_decref (r);
  r = ask (fd, "{\"op\":\"shutdown\"}");
  json_decref (r);
  close (fd);
  json_decref (hello);
  free (token);
  int status;
  waitpid (c.pid, &status, 0);
  cr_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0);
  cr_assert_eq (access (sock, F_OK), -1, "socket removed at exit");
  cr_assert_eq (access (tokpath, F_OK), -1, "token removed at exit");
  fclose (c.in);
  fclose (c.out);
  rmdir (sdir);
  rmdir (dir);
}

/* ---- start failures and pool queueing ------------------------------------------- */

/* Replies by request id (small integers); the last tool_call event seen. */
struct replies {
  json_t *by_id[32];
  json_t *tool_call;
};

static json_t *
reply_to (struct conn *c, struct replies *rs, int id)
{
  while (rs->by_id[id] == NULL)
    {
      json_t *r = recv_json (c);
      json_t *rid = json_object_get (r, "id");
      if (json_is_integer (rid) && json_integer_value (rid) >= 0 && json_integer_value (rid) < 32)
        {
          cr_assert_null (rs->by_id[json_integer_value (rid)], "two replies to one request");
          rs->by_id[json_integer_value (rid)] = r;
        }
      else if (json_object_get (r, "event") != NULL)
        {
          json_decref (rs->tool_call);
          rs->tool_call = r;
        }
      else
        json_decref (r);
    }
  return rs->by_id[id];
}

static void
replies_clear (struct replies *rs)
{
  for (int i = 0; i < 32; i++)
    json_decref (rs->by_id[i]);
  json_decref (rs->tool_call);
  memset (rs, 0, sizeof *rs);
}

/* The shipped r policy with `edit` applied (its includes made absolute). */
static void
write_policy (const char *path, const char *from, const char *to)
{
  FILE *in = fopen (SECURER_ABS_SRCDIR "/policies/r.policy", "r");
  cr_assert_not_null (in);
  FILE *out = fopen (path, "w");
  cr_assert_not_null (out);
  char line[1024];
  bool edited = false;
  while (fgets (line, sizeof line, in) != NULL)
    {
      if (strncmp (line, from, strlen (from)) == 0)
        {
          fputs (to, out);
          edited = true;
        }
      else if (strncmp (line, "include \"", 9) == 0)
        fprintf (out, "include \"%s/policies/%s", SECURER_ABS_SRCDIR, line + 9);
      else
        fputs (line, out);
    }
  fclose (in);
  fclose (out);
  cr_assert (edited, "r.policy has no line starting with '%s'", from);
}

Test (serve, open_replies_once_r_is_ready_or_says_why_it_could_not_start)
{
  char dir[] = "/tmp/securer-serve-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char small[128], nor[128], req[512];
  /* R's loader cannot map its libraries in 20 MiB: R is spawned, then dies.
   * Cold: a fork of a template has its libraries mapped before the limit
   * applies (docs/sessions.md). */
  snprintf (small, sizeof small, "%s/small.policy", dir);
  write_policy (small, "limit as ", "limit as 20M\nsession template off\n");
  /* No R in the sandbox at all: the spawn itself fails. */
  snprintf (nor, sizeof nor, "%s/no-r.policy", dir);
  write_policy (nor, "mount ro   /usr/lib/R\n", "# R left out\n");

  /* Requests name policies of the --policy-dir. */
  struct conn c;
  char *argv[] = { "securer", "serve", "--policy-dir", dir, NULL };
  start_serve (&c, argv);
  struct replies rs = { 0 };
  send_line (&c, "{\"op\":\"open\",\"id\":1,\"policy\":\"small\"}");
  send_line (&c, "{\"op\":\"open\",\"id\":2,\"policy\":\"no-r.policy\"}");
  send_line (&c, "{\"op\":\"open\",\"id\":3}");
  send_line (&c, "{\"op\":\"pool_open\",\"id\":4,\"size\":2,\"policy\":\"small\"}");

  json_t *r = reply_to (&c, &rs, 1);
  cr_assert (json_is_false (json_object_get (r, "ok")));
  const char *e = json_string_value (json_object_get (r, "error"));
  cr_assert (strstr (e, "R failed to start: R exited unexpectedly with status 127") != NULL, "%s", e);
  cr_assert (strstr (e, "error while loading shared libraries") != NULL, "R's own words: %s", e);
  r = reply_to (&c, &rs, 2);
  cr_assert (json_is_false (json_object_get (r, "ok")));
  e = json_string_value (json_object_get (r, "error"));
  cr_assert (strstr (e, "/usr/lib/R/bin/exec/R") && strstr (e, "ENOENT"), "%s", e);
  r = reply_to (&c, &rs, 4);
  cr_assert (json_is_false (json_object_get (r, "ok")));
  e = json_string_value (json_object_get (r, "error"));
  cr_assert (strstr (e, "pool_open: R failed to start") != NULL, "%s", e);

  /* A good open replies when R is ready: it runs code at once. */
  r = reply_to (&c, &rs, 3);
  cr_assert (json_is_true (json_object_get (r, "ok")));
  snprintf (req, sizeof req, "{\"op\":\"status\",\"id\":5,\"session\":\"%s\"}",
            json_string_value (json_object_get (r, "session")));
  send_line (&c, req);
  r = reply_to (&c, &rs, 5);
  cr_assert (json_is_true (json_object_get (r, "alive")));
  snprintf (req, sizeof req, "{\"op\":\"restart\",\"id\":6,\"session\":\"%s\"}",
            json_string_value (json_object_get (rs.by_id[3], "session")));
  send_line (&c, req);
  cr_assert (json_is_true (json_object_get (reply_to (&c, &rs, 6), "ok")));
  replies_clear (&rs);
  fclose (c.in);
  int st;
  waitpid (c.pid, &st, 0);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0);
  fclose (c.out);
  unlink (small);
  unlink (nor);
  rmdir (dir);
}

static void
answer_tool (struct conn *c, struct replies *rs, const char *value)
{
  cr_assert_not_null (rs->tool_call);
  char req[256];
  snprintf (req, sizeof req, "{\"op\":\"tool_result\",\"session\":\"%s\",\"call_id\":%lld,\"value\":%s}",
            json_string_value (json_object_get (rs->tool_call, "session")),
            (long long) json_integer_value (json_object_get (rs->tool_call, "call_id")), value);
  json_decref (rs->tool_call);
  rs->tool_call = NULL;
  send_line (c, req);
}

static void
wait_tool_call (struct conn *c, struct replies *rs)
{
  while (rs->tool_call == NULL)
    {
      json_t *r = recv_json (c);
      cr_assert_str_eq (json_string_value (json_object_get (r, "event")), "tool_call", "unexpected line");
      rs->tool_call = r;
    }
}

static const char *
result_value (json_t *reply)
{
  json_t *res = json_object_get (reply, "result");
  cr_assert_str_eq (json_string_value (json_object_get (res, "status")), "ok");
  return json_string_value (json_object_get (res, "value"));
}

Test (serve, pool_executes_wait_for_a_free_session)
{
  struct conn c;
  char *argv[] = { "securer", "serve", NULL };
  start_serve (&c, argv);
  struct replies rs = { 0 };
  send_line (&c, "{\"op\":\"pool_open\",\"id\":1,\"size\":1,\"tools\":[{\"name\":\"hold\"}]}");
  cr_assert (json_is_true (json_object_get (reply_to (&c, &rs, 1), "ok")));
  const char *pool = json_string_value (json_object_get (rs.by_id[1], "pool"));
  char req[512];
  /* The only session is busy until the tool call is answered. */
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":2,\"pool\":\"%s\",\"plain\":true,\"code\":\"hold(); 'first'\"}", pool);
  send_line (&c, req);
  wait_tool_call (&c, &rs);
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":3,\"pool\":\"%s\",\"plain\":true,\"code\":\"'second'\"}", pool);
  send_line (&c, req);
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":4,\"pool\":\"%s\",\"code\":\"1\",\"acquire_timeout\":0.2}", pool);
  send_line (&c, req);
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":5,\"pool\":\"%s\",\"code\":\"1\",\"acquire_timeout\":0}", pool);
  send_line (&c, req);
  json_t *r = reply_to (&c, &rs, 4);
  cr_assert (json_is_false (json_object_get (r, "ok")));
  cr_assert (strstr (json_string_value (json_object_get (r, "error")),
                     "no session of pool 'pool_1' became free within 0.2 s (all 1 busy") != NULL,
             "%s", json_string_value (json_object_get (r, "error")));
  r = reply_to (&c, &rs, 5);
  cr_assert (strstr (json_string_value (json_object_get (r, "error")), "within 0 s") != NULL);
  snprintf (req, sizeof req, "{\"op\":\"pool_status\",\"id\":6,\"pool\":\"%s\"}", pool);
  send_line (&c, req);
  r = reply_to (&c, &rs, 6);
  cr_assert_eq (json_integer_value (json_object_get (r, "queued")), 1, "the default wait keeps #3 queued");
  cr_assert_eq (json_integer_value (json_object_get (r, "busy")), 1);

  /* Freeing the session runs the queued request on it. */
  answer_tool (&c, &rs, "null");
  cr_assert_str_eq (result_value (reply_to (&c, &rs, 2)), "first");
  cr_assert_str_eq (result_value (reply_to (&c, &rs, 3)), "second");
  cr_assert_str_eq (json_string_value (json_object_get (rs.by_id[2], "session")),
                    json_string_value (json_object_get (rs.by_id[3], "session")));

  /* Closing the pool answers what still waits. */
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":7,\"pool\":\"%s\",\"code\":\"hold()\"}", pool);
  send_line (&c, req);
  wait_tool_call (&c, &rs);
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":8,\"pool\":\"%s\",\"code\":\"2\"}", pool);
  send_line (&c, req);
  snprintf (req, sizeof req, "{\"op\":\"pool_close\",\"id\":9,\"pool\":\"%s\"}", pool);
  send_line (&c, req);
  r = reply_to (&c, &rs, 8);
  cr_assert (strstr (json_string_value (json_object_get (r, "error")), "was closed while the request waited") != NULL);
  r = reply_to (&c, &rs, 7);
  cr_assert_str_eq (json_string_value (json_object_get (json_object_get (r, "result"), "status")), "crashed");
  cr_assert (json_is_true (json_object_get (reply_to (&c, &rs, 9), "ok")));
  replies_clear (&rs);
  fclose (c.in);
  int st;
  waitpid (c.pid, &st, 0);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0);
  fclose (c.out);
}

Test (serve, sigterm_ends_the_server_cleanly)
{
  char dir[] = "/tmp/securer-serve-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char sock[200], tokpath[220], sdir[128];
  snprintf (sdir, sizeof sdir, "%s/s", dir);
  snprintf (sock, sizeof sock, "%s/serve.sock", sdir);
  snprintf (tokpath, sizeof tokpath, "%s.token", sock);
  struct conn c;
  char *argv[] = { "securer", "serve", "--listen", sock, NULL };
  start_serve (&c, argv);
  json_decref (recv_json (&c));  /* listening */
  cr_assert_eq (access (tokpath, F_OK), 0);
  kill (c.pid, SIGTERM);
  int status;
  waitpid (c.pid, &status, 0);
  cr_assert (WIFEXITED (status) && WEXITSTATUS (status) == 0, "status %d", status);
  cr_assert_eq (access (sock, F_OK), -1, "socket removed");
  cr_assert_eq (access (tokpath, F_OK), -1, "token removed");
  fclose (c.in);
  fclose (c.out);
  rmdir (sdir);
  rmdir (dir);
}

/* ---- the server stays bounded and confined ----------------------------------------- */


static char *
open_session_id (struct conn *c, struct replies *rs, int id, const char *extra)
{
  char req[512];
  snprintf (req, sizeof req, "{\"op\":\"open\",\"id\":%d%s}", id, extra ? extra : "");
  send_line (c, req);
  json_t *r = reply_to (c, rs, id);
  cr_assert (json_is_true (json_object_get (r, "ok")), "open: %s",
             json_string_value (json_object_get (r, "error")));
  return strdup (json_string_value (json_object_get (r, "session")));
}

Test (serve, a_flooding_session_neither_bloats_the_server_nor_stops_another, .timeout = 180)
{
  small_asan_quarantine ();
  struct conn c;
  char *argv[] = { "securer", "serve", NULL };
  start_serve (&c, argv);
  struct replies rs = { 0 };
  char *a = open_session_id (&c, &rs, 1, NULL);
  char *b = open_session_id (&c, &rs, 2, NULL);
  char req[512];
  /* Three million lines: the reply keeps 10000 and counts the rest. */
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":3,\"session\":\"%s\",\"timeout\":100,"
            "\"code\":\"writeLines(rep('x', 3e6)); 'done'\"}", a);
  send_line (&c, req);
  json_t *res = json_object_get (reply_to (&c, &rs, 3), "result");
  cr_assert_str_eq (json_string_value (json_object_get (res, "status")), "ok");
  cr_assert (json_is_true (json_object_get (res, "output_truncated")));
  cr_assert_eq (json_array_size (json_object_get (res, "output")), 10000);
  cr_assert_eq (json_integer_value (json_object_get (res, "output_dropped_lines")), 3000000 - 10000);
  /* Three million lines kept would be hundreds of MiB (the bound leaves
   * room for a sanitizer build's own overhead). */
  char pidstr[16];
  snprintf (pidstr, sizeof pidstr, "%d", (int) c.pid);
  long peak = vm_hwm_kb (pidstr);
  cr_assert_lt (peak, 128 * 1024, "serve's peak resident size: %ld KiB", peak);

  /* a floods until its timeout; once its output is seen, b answers. */
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":4,\"session\":\"%s\",\"timeout\":10,"
            "\"stream\":true,\"code\":\"repeat writeLines(strrep('y', 100))\"}", a);
  send_line (&c, req);
  json_t *ev = recv_json (&c);
  cr_assert_str_eq (json_string_value (json_object_get (ev, "event")), "output");
  json_decref (ev);
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":5,\"session\":\"%s\",\"code\":\"1L + 1L\"}", b);
  send_line (&c, req);
  res = json_object_get (reply_to (&c, &rs, 5), "result");
  cr_assert_str_eq (json_string_value (json_object_get (res, "status")), "ok");
  cr_assert_null (rs.by_id[4], "b answered while a was flooding");
  res = json_object_get (reply_to (&c, &rs, 4), "result");
  cr_assert_str_eq (json_string_value (json_object_get (res, "status")), "timeout");
  cr_assert (json_is_true (json_object_get (res, "output_truncated")));
  cr_assert_lt (vm_hwm_kb (pidstr), 128 * 1024);
  fclose (c.in);
  int st;
  waitpid (c.pid, &st, 0);
  fclose (c.out);
  replies_clear (&rs);
  free (a);
  free (b);
}

Test (serve, request_paths_stay_in_the_operators_directories, .timeout = 120)
{
  char dir[] = "/tmp/securer-confine-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char pdir[160], adir[160], path[256], req[512];
  snprintf (pdir, sizeof pdir, "%s/policies", dir);
  snprintf (adir, sizeof adir, "%s/audit", dir);
  cr_assert_eq (mkdir (pdir, 0700), 0);
  cr_assert_eq (mkdir (adir, 0700), 0);
  /* A secret next to the directories, a policy that is not one, links out. */
  snprintf (path, sizeof path, "%s/secret.policy", dir);
  FILE *f = fopen (path, "w");
  fputs ("TOPSECRET-1234\n", f);
  fclose (f);
  snprintf (path, sizeof path, "%s/bad.policy", pdir);
  f = fopen (path, "w");
  fputs ("TOPSECRET-5678 is not a directive\n", f);
  fclose (f);
  snprintf (path, sizeof path, "%s/good.policy", pdir);
  write_policy (path, "limit nofile", "limit nofile 200\n");
  snprintf (path, sizeof path, "%s/link.policy", pdir);
  cr_assert_eq (symlink ("../secret.policy", path), 0);

  /* Without the options, no request may name a file at all. */
  struct conn c;
  struct replies rs = { 0 };
  char *plain[] = { "securer", "serve", NULL };
  start_serve (&c, plain);
  snprintf (req, sizeof req, "{\"op\":\"open\",\"id\":1,\"policy\":\"%s/secret.policy\"}", dir);
  send_line (&c, req);
  send_line (&c, "{\"op\":\"open\",\"id\":2,\"audit_log\":\"x.log\"}");
  const char *e = json_string_value (json_object_get (reply_to (&c, &rs, 1), "error"));
  cr_assert (strstr (e, "--policy-dir") != NULL && strstr (e, "TOPSECRET") == NULL, "%s", e);
  e = json_string_value (json_object_get (reply_to (&c, &rs, 2), "error"));
  cr_assert (strstr (e, "the server chooses its audit files") != NULL, "%s", e);
  fclose (c.in);
  waitpid (c.pid, NULL, 0);
  fclose (c.out);
  replies_clear (&rs);

  char *argv[] = { "securer", "serve", "--policy-dir", pdir, "--audit-dir", adir, NULL };
  start_serve (&c, argv);
  send_line (&c, "{\"op\":\"open\",\"id\":1,\"policy\":\"../secret.policy\"}");
  snprintf (req, sizeof req, "{\"op\":\"open\",\"id\":2,\"policy\":\"%s/secret.policy\"}", dir);
  send_line (&c, req);
  send_line (&c, "{\"op\":\"open\",\"id\":3,\"policy\":\"link\"}");
  send_line (&c, "{\"op\":\"open\",\"id\":4,\"policy\":\"bad\"}");
  /* A client cannot choose an audit file, not even inside --audit-dir:
   * it could write into another client's. */
  send_line (&c, "{\"op\":\"open\",\"id\":5,\"audit_log\":\"../escape.log\"}");
  send_line (&c, "{\"op\":\"open\",\"id\":6,\"audit_log\":\"other-client.jsonl\"}");
  send_line (&c, "{\"op\":\"open\",\"id\":7,\"audit_log\":\"/tmp/securer-confine-abs.log\"}");
  static const char *const expect[] = { NULL, "leads outside its directory", "absolute path",
                                        "symbolic link", "is not valid (first error at line 1",
                                        "the server chooses its audit files", "the server chooses its audit files",
                                        "the server chooses its audit files" };
  for (int id = 1; id <= 7; id++)
    {
      json_t *r = reply_to (&c, &rs, id);
      e = json_string_value (json_object_get (r, "error"));
      cr_assert (json_is_false (json_object_get (r, "ok")), "request %d accepted", id);
      cr_assert (strstr (e, expect[id]) != NULL, "request %d: %s", id, e);
      cr_assert (strstr (e, "TOPSECRET") == NULL, "request %d quotes the file: %s", id, e);
    }
  /* Inside the directory, a policy works; the audit file is the server's. */
  char *sid = open_session_id (&c, &rs, 8, ",\"policy\":\"good\"");
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":9,\"session\":\"%s\",\"code\":\"1\"}", sid);
  send_line (&c, req);
  cr_assert (json_is_true (json_object_get (reply_to (&c, &rs, 9), "ok")));
  fclose (c.in);
  waitpid (c.pid, NULL, 0);
  fclose (c.out);
  replies_clear (&rs);
  free (sid);
  DIR *d = opendir (adir);
  struct dirent *de;
  int logs = 0;
  char suffix[64];
  snprintf (suffix, sizeof suffix, "-client1-uid%u.jsonl", (unsigned) getuid ());
  while ((de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      {
        logs++;
        size_t n = strlen (de->d_name);
        cr_assert (n > strlen (suffix) && strcmp (de->d_name + n - strlen (suffix), suffix) == 0, "%s",
                   de->d_name);
        snprintf (path, sizeof path, "%s/%s", adir, de->d_name);
      }
  closedir (d);
  cr_assert_eq (logs, 1, "one audit file for the one client");
  struct stat st;
  cr_assert_eq (stat (path, &st), 0);
  cr_assert_gt (st.st_size, 0);
  cr_assert_eq (st.st_mode & 077, 0, "mode %o", st.st_mode);
  cr_assert_eq (access ("/tmp/securer-confine-elsewhere.log", F_OK), -1);
  cr_assert_eq (access ("/tmp/securer-confine-abs.log", F_OK), -1);
  snprintf (path, sizeof path, "%s/escape.log", dir);
  cr_assert_eq (access (path, F_OK), -1);
  char cmd[256];
  snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
  cr_assert_eq (system (cmd), 0);
}

Test (serve, invalid_utf8_and_host_names_in_replies, .timeout = 120)
{
  char host[256] = "";
  cr_assert_eq (gethostname (host, sizeof host - 1), 0);
  struct conn c;
  char *argv[] = { "securer", "serve", "--sanitize-errors", NULL };
  start_serve (&c, argv);
  struct replies rs = { 0 };
  char *sid = open_session_id (&c, &rs, 1, NULL);
  char req[768];
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":2,\"session\":\"%s\",\"code\":"
            "\"cat('a\\\\xffb\\\\n'); stop('cannot reach ', '%s', ' via /srv/data')\"}", sid, host);
  send_line (&c, req);
  json_t *res = json_object_get (reply_to (&c, &rs, 2), "result");
  json_t *line = json_array_get (json_object_get (res, "output"), 0);
  cr_assert_str_eq (json_string_value (json_object_get (line, "line")), "a\\xffb");
  const char *e = json_string_value (json_object_get (res, "error"));
  cr_assert (strstr (e, "<hostname>") != NULL && strstr (e, "<path>") != NULL, "%s", e);
  if (strcmp (host, "localhost") != 0)
    cr_assert (strstr (e, host) == NULL, "%s", e);
  fclose (c.in);
  waitpid (c.pid, NULL, 0);
  fclose (c.out);
  replies_clear (&rs);
  free (sid);

  /* `securer exec --json` keeps the line too, and says what it dropped. */
  char *out = NULL;
  char *a1[] = { "securer", "exec", "--json", "--max-output-lines", "2", "-e",
                 "cat('\\xfe\\n'); for (i in 1:5) cat(i, '\\n'); 1", NULL };
  cr_assert_eq (run (a1, NULL, &out), 0);
  json_t *j = json_loads (out, 0, NULL);
  cr_assert_not_null (j, "%s", out);
  cr_assert_str_eq (json_string_value (json_object_get (json_array_get (json_object_get (j, "output"), 0),
                                                        "text")), "\\xfe");
  cr_assert_eq (json_integer_value (json_object_get (j, "output_dropped_lines")), 4);
  cr_assert (json_is_true (json_object_get (j, "output_truncated")));
  json_decref (j);
  free (out);
}

/* ---- one session, requests that overlap ------------------------------------------------ */

/* Opens a session with the tool hold(x = any) on a fresh server; its id
 * goes to sid. */
/* Starts serve and opens a session (id 1) with a tool hold(x) and the
 * extra fields of "open" given in more (e.g. ",\"max_executions\":1"). */
static void
open_session_with (struct conn *c, struct replies *rs, char *sid, size_t n, const char *more)
{
  char *argv[] = { "securer", "serve", NULL };
  char req[1024];
  start_serve (c, argv);
  snprintf (req, sizeof req, "{\"op\":\"open\",\"id\":1,\"tools\":[{\"name\":\"hold\",\"args\":"
            "{\"x\":\"any\"}}]%s}", more);
  send_line (c, req);
  json_t *r = reply_to (c, rs, 1);
  cr_assert (json_is_true (json_object_get (r, "ok")), "%s", json_string_value (json_object_get (r, "error")));
  snprintf (sid, n, "%s", json_string_value (json_object_get (r, "session")));
}

static void
open_hold_session (struct conn *c, struct replies *rs, char *sid, size_t n)
{
  open_session_with (c, rs, sid, n, "");
}

static void
end_serve (struct conn *c, struct replies *rs)
{
  replies_clear (rs);
  fclose (c->in);
  int st;
  waitpid (c->pid, &st, 0);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "serve ended with status %d", st);
  fclose (c->out);
}

static const char *
result_status (json_t *reply)
{
  return json_string_value (json_object_get (json_object_get (reply, "result"), "status"));
}

Test (serve, a_second_execute_on_a_busy_session_is_rejected_and_the_first_keeps_its_id, .timeout = 60)
{
  struct conn c;
  struct replies rs = { 0 };
  char sid[64], req[512];
  open_hold_session (&c, &rs, sid, sizeof sid);
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":2,\"session\":\"%s\",\"plain\":true,\"code\":\"hold(1) + 1\"}", sid);
  send_line (&c, req);
  wait_tool_call (&c, &rs);
  /* Not plain: had it replaced the first request's form, the plain answer
   * below would be refused as a tagged value. */
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":3,\"session\":\"%s\",\"code\":\"2\"}", sid);
  send_line (&c, req);
  json_t *r = reply_to (&c, &rs, 3);
  cr_assert (json_is_true (json_object_get (r, "ok")));
  cr_assert_str_eq (result_status (r), "rejected");
  cr_assert (strstr (json_string_value (json_object_get (json_object_get (r, "result"), "error")),
                     "busy") != NULL);
  answer_tool (&c, &rs, "41");
  r = reply_to (&c, &rs, 2);
  cr_assert_str_eq (result_status (r), "ok", "%s",
                    json_string_value (json_object_get (json_object_get (r, "result"), "error")));
  cr_assert_eq (json_number_value (json_object_get (json_object_get (r, "result"), "value")), 42.0);
  end_serve (&c, &rs);
}

Test (serve, close_while_a_validate_waits_for_r_answers_both, .timeout = 60)
{
  struct conn c;
  struct replies rs = { 0 };
  char sid[64], req[512];
  open_hold_session (&c, &rs, sid, sizeof sid);
  /* The validate waits for a restarting R; the close arrives meanwhile.
   * The three requests go in one write, so that serve has them all before
   * R can be ready (from a template a restart takes milliseconds). */
  snprintf (req, sizeof req,
            "{\"op\":\"restart\",\"id\":2,\"session\":\"%s\"}\n"
            "{\"op\":\"validate\",\"id\":3,\"session\":\"%s\",\"code\":\"1 +\"}\n"
            "{\"op\":\"close\",\"id\":4,\"session\":\"%s\"}",
            sid, sid, sid);
  send_line (&c, req);
  cr_assert (json_is_true (json_object_get (reply_to (&c, &rs, 4), "ok")));
  /* The validate is answered, and the server goes on serving. */
  json_t *r = reply_to (&c, &rs, 3);
  cr_assert (json_is_false (json_object_get (r, "ok")));
  cr_assert (strstr (json_string_value (json_object_get (r, "error")), "session closed") != NULL, "%s",
             json_string_value (json_object_get (r, "error")));
  snprintf (req, sizeof req, "{\"op\":\"status\",\"id\":5,\"session\":\"%s\"}", sid);
  send_line (&c, req);
  cr_assert (json_is_false (json_object_get (reply_to (&c, &rs, 5), "ok")));

  /* On a live session a validate answers from the loop, and says why
   * code does not parse. */
  send_line (&c, "{\"op\":\"open\",\"id\":6}");
  r = reply_to (&c, &rs, 6);
  snprintf (req, sizeof req, "{\"op\":\"validate\",\"id\":7,\"session\":\"%s\",\"code\":\"if (TRUE {\"}",
            json_string_value (json_object_get (r, "session")));
  send_line (&c, req);
  cr_assert (json_is_false (json_object_get (reply_to (&c, &rs, 7), "valid")));
  snprintf (req, sizeof req, "{\"op\":\"validate\",\"id\":8,\"session\":\"%s\",\"code\":\"system('ls')\"}",
            json_string_value (json_object_get (r, "session")));
  send_line (&c, req);
  r = reply_to (&c, &rs, 8);
  cr_assert (json_is_true (json_object_get (r, "valid")));
  cr_assert_gt (json_array_size (json_object_get (r, "warnings")), 0);
  end_serve (&c, &rs);
}

Test (serve, a_malformed_tool_result_is_answered_and_fails_the_call_in_r, .timeout = 60)
{
  struct conn c;
  struct replies rs = { 0 };
  char sid[64], req[512];
  open_hold_session (&c, &rs, sid, sizeof sid);
  const char *bad[] = {
    "\"value\":{\"t\":\"dbl\",\"v\":[\"x\"]}",   /* not a valid tagged value */
    "\"error\":42",                              /* error must be a string */
  };
  for (int i = 0; i < 2; i++)
    {
      int xid = 2 + 2 * i;
      snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":%d,\"session\":\"%s\",\"code\":"
                "\"tryCatch(hold(1), error = function(e) conditionMessage(e))\"}", xid, sid);
      send_line (&c, req);
      wait_tool_call (&c, &rs);
      long long call = (long long) json_integer_value (json_object_get (rs.tool_call, "call_id"));
      snprintf (req, sizeof req, "{\"op\":\"tool_result\",\"id\":%d,\"session\":\"%s\",\"call_id\":%lld,%s}",
                xid + 1, sid, call, bad[i]);
      json_decref (rs.tool_call);
      rs.tool_call = NULL;
      send_line (&c, req);
      json_t *r = reply_to (&c, &rs, xid + 1);
      cr_assert (json_is_false (json_object_get (r, "ok")));
      cr_assert_eq (json_integer_value (json_object_get (r, "call_id")), call);
      cr_assert_str_eq (json_string_value (json_object_get (r, "session")), sid);
      /* R heard it at once (no timeout) and the session goes on. */
      r = reply_to (&c, &rs, xid);
      cr_assert_str_eq (result_status (r), "ok");
      json_t *v = json_object_get (json_object_get (r, "result"), "value");
      const char *msg = json_string_value (json_array_get (json_object_get (v, "v"), 0));
      cr_assert (msg && strstr (msg, "tool_result:") != NULL, "%s", msg ? msg : "(no message)");
    }
  /* A call_id that is not an integer still ends the pending call. */
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":6,\"session\":\"%s\",\"code\":\"hold(1)\"}", sid);
  send_line (&c, req);
  wait_tool_call (&c, &rs);
  snprintf (req, sizeof req, "{\"op\":\"tool_result\",\"id\":7,\"session\":\"%s\",\"call_id\":\"x\",\"value\":null}", sid);
  send_line (&c, req);
  cr_assert (json_is_false (json_object_get (reply_to (&c, &rs, 7), "ok")));
  cr_assert_str_eq (result_status (reply_to (&c, &rs, 6)), "error");
  end_serve (&c, &rs);
}

/* Sends an execute (id, on session sid, with the fields in more) and
 * returns its reply. */
static json_t *
execute_with (struct conn *c, struct replies *rs, int id, const char *sid, const char *more)
{
  char req[1024];
  snprintf (req, sizeof req, "{\"op\":\"execute\",\"id\":%d,\"session\":\"%s\",%s}", id, sid, more);
  send_line (c, req);
  return reply_to (c, rs, id);
}

static const char *
result_error (json_t *reply)
{
  return json_string_value (json_object_get (json_object_get (reply, "result"), "error"));
}

/* What a session refuses is an execution that did not run (status
 * "rejected", the request itself succeeded), and its message is the one
 * users and models read: no errno name after it. */
Test (serve, refused_executions_are_rejected_results_without_errno_names, .timeout = 60)
{
  struct conn c;
  struct replies rs = { 0 };
  char sid[64];
  open_session_with (&c, &rs, sid, sizeof sid, ",\"max_executions\":1");
  json_t *r = execute_with (&c, &rs, 2, sid, "\"code\":\"12345\",\"max_code_length\":3");
  cr_assert (json_is_true (json_object_get (r, "ok")));
  cr_assert_str_eq (result_status (r), "rejected");
  cr_assert_str_eq (result_error (r), "Code exceeds maximum length (5 > 3 characters)");
  /* The refused one did not count: this is the first execution (with no
   * timeout at all, which a null one means: it once fired after 0.615 s,
   * UINT64_MAX % 1000 ms left in the timer's nanoseconds). */
  r = execute_with (&c, &rs, 3, sid, "\"timeout\":null,\"code\":\"Sys.sleep(1.5); 1\"");
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  r = execute_with (&c, &rs, 4, sid, "\"code\":\"1\"");
  cr_assert (json_is_true (json_object_get (r, "ok")));
  cr_assert_str_eq (result_status (r), "rejected");
  cr_assert_str_eq (result_error (r), "Maximum executions (1) reached for this session");
  end_serve (&c, &rs);
}

/* R's code may ask for any tool name; one that is no R identifier is an
 * unknown tool (an error R's code can catch), not a protocol violation
 * that would kill R and lose the session's workspace. */
Test (serve, a_tool_name_that_is_no_identifier_is_an_unknown_tool, .timeout = 60)
{
  struct conn c;
  struct replies rs = { 0 };
  char sid[64];
  open_hold_session (&c, &rs, sid, sizeof sid);
  cr_assert_str_eq (result_status (execute_with (&c, &rs, 2, sid, "\"code\":\"keep <- 7\"")), "ok");
  json_t *r = execute_with (&c, &rs, 3, sid, "\"plain\":true,\"code\":\"tryCatch(.securer_call_tool("
                            "'rm -rf', x = 1), error = function(e) conditionMessage(e))\"");
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  const char *msg = json_string_value (json_object_get (json_object_get (r, "result"), "value"));
  cr_assert (msg && strncmp (msg, "Unknown tool", 12) == 0, "%s", msg ? msg : "(no message)");
  /* R was not killed: its workspace is still there. */
  r = execute_with (&c, &rs, 4, sid, "\"plain\":true,\"code\":\"keep\"");
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  cr_assert_eq (json_number_value (json_object_get (json_object_get (r, "result"), "value")), 7.0);
  end_serve (&c, &rs);
}

/* A pool has 1 to 100 sessions; a size outside is refused before any
 * session starts. */
Test (serve, pool_sizes_are_1_to_100)
{
  struct conn c;
  struct replies rs = { 0 };
  char *argv[] = { "securer", "serve", NULL };
  start_serve (&c, argv);
  send_line (&c, "{\"op\":\"pool_open\",\"id\":1,\"size\":101}");
  send_line (&c, "{\"op\":\"pool_open\",\"id\":2,\"size\":0}");
  for (int id = 1; id <= 2; id++)
    {
      json_t *r = reply_to (&c, &rs, id);
      cr_assert (json_is_false (json_object_get (r, "ok")));
      cr_assert_str_eq (json_string_value (json_object_get (r, "error")), "pool_open: \"size\" must be 1..100");
    }
  end_serve (&c, &rs);
}

/* Limits in the open request are set on the session's policy (here the
 * shipped r), as R sees them from inside; a wrong one is refused. */
Test (serve, open_takes_inline_limits_on_its_policy, .timeout = 60)
{
  struct conn c;
  struct replies rs = { 0 };
  char sid[64];
  open_session_with (&c, &rs, sid, sizeof sid, ",\"limits\":{\"cpu\":7.2,\"nofile\":200}");
  json_t *r = execute_with (&c, &rs, 2, sid, "\"plain\":true,\"code\":\"l <- readLines('/proc/self/limits'); "
                            "paste(gsub(' +', ' ', grep('^(Max cpu time|Max open files)', l, value = TRUE)), "
                            "collapse = '|')\"");
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  const char *lim = json_string_value (json_object_get (json_object_get (r, "result"), "value"));
  cr_assert_str_eq (lim, "Max cpu time 8 8 seconds |Max open files 200 200 files ");
  send_line (&c, "{\"op\":\"open\",\"id\":3,\"limits\":{\"ram\":1}}");
  send_line (&c, "{\"op\":\"open\",\"id\":4,\"policy\":\"r\",\"limits\":{\"cpu\":-1}}");
  r = reply_to (&c, &rs, 3);
  cr_assert (json_is_false (json_object_get (r, "ok")));
  cr_assert (strstr (json_string_value (json_object_get (r, "error")), "unknown limit 'ram'") != NULL);
  r = reply_to (&c, &rs, 4);
  cr_assert_str_eq (json_string_value (json_object_get (r, "error")), "limit 'cpu' must be a number >= 0");
  end_serve (&c, &rs);
}

/* "sandbox": false is no sandbox, and says so: from inside, R shares the
 * host's pid and network namespaces (where a sandboxed session has its
 * own), yet the resource limits hold and a root server's session does not
 * run as root. */
Test (serve, sandbox_false_is_a_limited_process_without_the_sandbox, .timeout = 60)
{
  struct conn c;
  struct replies rs = { 0 };
  char sid[64], sandboxed_sid[64];
  char host_pid_ns[64] = "", host_net_ns[64] = "";
  cr_assert_gt (readlink ("/proc/self/ns/pid", host_pid_ns, sizeof host_pid_ns - 1), 0);
  cr_assert_gt (readlink ("/proc/self/ns/net", host_net_ns, sizeof host_net_ns - 1), 0);
  /* Refused by a server not started with --allow-unsandboxed. */
  char *plain_argv[] = { "securer", "serve", NULL };
  start_serve (&c, plain_argv);
  send_line (&c, "{\"op\":\"open\",\"id\":9,\"sandbox\":false}");
  json_t *refused = reply_to (&c, &rs, 9);
  cr_assert_str_eq (json_string_value (json_object_get (refused, "error")),
                    "\"sandbox\": false needs the server to be started with --allow-unsandboxed");
  end_serve (&c, &rs);

  char *argv[] = { "securer", "serve", "--allow-unsandboxed", NULL };
  start_serve (&c, argv);
  send_line (&c, "{\"op\":\"open\",\"id\":1,\"sandbox\":false,\"limits\":{\"nofile\":200}}");
  json_t *opened = reply_to (&c, &rs, 1);
  cr_assert (json_is_true (json_object_get (opened, "ok")), "%s", json_string_value (json_object_get (opened, "error")));
  snprintf (sid, sizeof sid, "%s", json_string_value (json_object_get (opened, "session")));
  cr_assert (json_is_false (json_object_get (reply_to (&c, &rs, 1), "sandboxed")));
  send_line (&c, "{\"op\":\"open\",\"id\":2}");
  json_t *r = reply_to (&c, &rs, 2);
  cr_assert (json_is_true (json_object_get (r, "sandboxed")), "%s", json_string_value (json_object_get (r, "error")));
  snprintf (sandboxed_sid, sizeof sandboxed_sid, "%s", json_string_value (json_object_get (r, "session")));

  const char *probe = "\"plain\":true,\"code\":\"l <- readLines('/proc/self/limits'); "
                      "c(Sys.readlink('/proc/self/ns/pid'), Sys.readlink('/proc/self/ns/net'), "
                      "sub('^Uid:\\\\\\\\s+([0-9]+).*', '\\\\\\\\1', grep('^Uid:', readLines('/proc/self/status'), value = TRUE)), "
                      "gsub(' +', ' ', grep('^Max open files', l, value = TRUE)))\"";
  r = execute_with (&c, &rs, 3, sid, probe);
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  json_t *v = json_object_get (json_object_get (r, "result"), "value");
  cr_assert_str_eq (json_string_value (json_array_get (v, 0)), host_pid_ns);
  cr_assert_str_eq (json_string_value (json_array_get (v, 1)), host_net_ns);
  const char *uid = json_string_value (json_array_get (v, 2));
  cr_assert (uid[0] != '\0' && strspn (uid, "0123456789") == strlen (uid), "uid: %s", uid);
  if (geteuid () == 0)
    cr_assert_str_neq (uid, "0", "an unsandboxed session ran as root");
  cr_assert_str_eq (json_string_value (json_array_get (v, 3)), "Max open files 200 200 files ");

  r = execute_with (&c, &rs, 4, sandboxed_sid, probe);
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  v = json_object_get (json_object_get (r, "result"), "value");
  cr_assert_str_neq (json_string_value (json_array_get (v, 0)), host_pid_ns);
  cr_assert_str_neq (json_string_value (json_array_get (v, 1)), host_net_ns);

  char req[128];
  snprintf (req, sizeof req, "{\"op\":\"status\",\"id\":5,\"session\":\"%s\"}", sid);
  send_line (&c, req);
  cr_assert (json_is_false (json_object_get (reply_to (&c, &rs, 5), "sandboxed")));
  send_line (&c, "{\"op\":\"open\",\"id\":6,\"sandbox\":false,\"policy\":\"r\"}");
  r = reply_to (&c, &rs, 6);
  cr_assert (strstr (json_string_value (json_object_get (r, "error")), "takes no \"policy\"") != NULL);
  send_line (&c, "{\"op\":\"open\",\"id\":7,\"sandbox\":\"no\"}");
  r = reply_to (&c, &rs, 7);
  cr_assert_str_eq (json_string_value (json_object_get (r, "error")), "\"sandbox\" must be true or false");
  end_serve (&c, &rs);
}

/* A session whose best-effort limits the host does not give says so in
 * its open reply and the server's log, and its meminfo shows no limit that
 * nothing enforces: serve as an unprivileged user without a delegated
 * cgroup, from a template and cold; as root, where they hold, neither. */
Test (serve, a_session_without_its_cgroup_limits_says_so, .timeout = 90)
{
  if (geteuid () != 0)
    cr_skip_test ("needs root, to become an unprivileged user and to compare with root's sessions");
  const char *probe = "\"plain\":true,\"code\":\"m <- readLines('/proc/meminfo'); paste(length(m), paste(grep('^MemTotal', m, value = TRUE), collapse = ''))\"";
  bool nobody_limited = nobody_gets_cgroups (bin ());
  for (int unprivileged = 1; unprivileged >= 0; unprivileged--)
    {
      int in[2], o[2], e[2];
      cr_assert_eq (pipe (in), 0);
      cr_assert_eq (pipe (o), 0);
      cr_assert_eq (pipe (e), 0);
      struct conn c;
      c.pid = fork ();
      if (c.pid == 0)
        {
          dup2 (in[0], 0);
          dup2 (o[1], 1);
          dup2 (e[1], 2);
          close (in[1]);
          close (o[0]);
          close (e[0]);
          if (unprivileged && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
                               || setresuid (65534, 65534, 65534) < 0))
            _exit (99);
          /* After the change of ids, which clears it. */
          prctl (PR_SET_PDEATHSIG, SIGKILL);
          execl (bin (), "securer", "serve", (char *) NULL);
          _exit (127);
        }
      close (in[0]);
      close (o[1]);
      close (e[1]);
      c.in = fdopen (in[1], "w");
      c.out = fdopen (o[0], "r");
      struct replies rs = { 0 };
      char sid[2][64];
      send_line (&c, "{\"op\":\"open\",\"id\":1}");
      send_line (&c, "{\"op\":\"open\",\"id\":2,\"limits\":{\"nofile\":200}}");
      bool degraded = unprivileged && !nobody_limited;
      for (int k = 0; k < 2; k++)
        {
          json_t *r = reply_to (&c, &rs, 1 + k);
          cr_assert (json_is_true (json_object_get (r, "ok")), "%s", json_string_value (json_object_get (r, "error")));
          snprintf (sid[k], sizeof sid[k], "%s", json_string_value (json_object_get (r, "session")));
          const char *d = json_string_value (json_object_get (r, "degraded"));
          if (!degraded)
            cr_assert_null (d, "the session lacks: %s", d);
          else
            cr_assert (d && strstr (d, "cgroup memory, pids, cpu limits") != NULL, "degraded: %s", d);
        }
      for (int k = 0; k < 2; k++)
        {
          json_t *r = execute_with (&c, &rs, 3 + k, sid[k], probe);
          cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
          const char *v = json_string_value (json_object_get (json_object_get (r, "result"), "value"));
          cr_assert_not_null (v);
          if (degraded)
            cr_assert_str_eq (v, "0 ", "meminfo shows a limit");
          else
            cr_assert (strstr (v, "MemTotal:        1048576 kB") != NULL, "meminfo: %s", v);
        }
      end_serve (&c, &rs);
      /* What serve wrote is in the pipe; a template may still hold it open. */
      char log[8192];
      fcntl (e[0], F_SETFL, O_NONBLOCK);
      ssize_t n = read (e[0], log, sizeof log - 1);
      log[n > 0 ? n : 0] = '\0';
      close (e[0]);
      const char *w = strstr (log, "level=warning event=degraded what=\"best-effort protections not applied");
      if (degraded)
        cr_assert (w != NULL && strchr (w, '\n') && strstr (strchr (w, '\n'), "event=degraded") == NULL,
                   "the log should say it once:\n%s", log);
      else
        cr_assert_null (w, "%s", log);
    }
}

/* The policy's own properties decide whether a session is a sandbox, not
 * the words of the request: a shipped or --policy-dir policy that turns a
 * layer off is refused like "sandbox": false on a server without
 * --allow-unsandboxed, and reported "sandboxed": false on one with it. */
Test (serve, a_policy_that_turns_a_layer_off_is_unsandboxed_whatever_its_name, .timeout = 90)
{
  char dir[] = "/tmp/securer-layers-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char path[256], req[256];
  static const char *const off[][2] = {
    { "no_landlock", "limit cpu 60s\nlandlock off\n" },
    { "no_seccomp", "limit cpu 60s\nseccomp off\n" },
    { "no_pidns", "limit cpu 60s\nnamespaces user mount net uts ipc cgroup\n" },
  };
  for (size_t i = 0; i < sizeof off / sizeof *off; i++)
    {
      snprintf (path, sizeof path, "%s/%s.policy", dir, off[i][0]);
      write_policy (path, "limit cpu 60s", off[i][1]);
    }
  snprintf (path, sizeof path, "%s/bare.policy", dir);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fputs ("namespaces none\nnetwork host\nlandlock off\nseccomp off\n", f);
  fclose (f);

  struct conn c;
  struct replies rs = { 0 };
  /* Allowed by name, yet no sandbox: the layers decide. */
  char *plain[] = { "securer", "serve", "--policy-dir", dir, "--allow-policy", "r-unsandboxed", NULL };
  start_serve (&c, plain);
  static const char *const refused[][2] = {
    { "r-unsandboxed", "(no user namespace)" }, { "no_landlock", "(landlock off)" },
    { "no_seccomp", "(seccomp off)" },         { "no_pidns", "(no pid namespace)" },
    { "bare", "(no user namespace)" },
  };
  int id = 1;
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++, id += 2)
    {
      snprintf (req, sizeof req, "{\"op\":\"open\",\"id\":%d,\"policy\":\"%s\"}", id, refused[i][0]);
      send_line (&c, req);
      snprintf (req, sizeof req, "{\"op\":\"pool_open\",\"id\":%d,\"size\":1,\"policy\":\"%s\"}", id + 1,
                refused[i][0]);
      send_line (&c, req);
      for (int k = 0; k < 2; k++)
        {
          json_t *r = reply_to (&c, &rs, id + k);
          const char *e = json_string_value (json_object_get (r, "error"));
          cr_assert (json_is_false (json_object_get (r, "ok")), "%s accepted", refused[i][0]);
          cr_assert (e && strstr (e, "does not sandbox the code") && strstr (e, refused[i][1])
                       && strstr (e, "--allow-unsandboxed"),
                     "%s: %s", refused[i][0], e);
        }
    }
  end_serve (&c, &rs);

  char *allowing[] = { "securer", "serve", "--allow-unsandboxed", "--policy-dir", dir, NULL };
  start_serve (&c, allowing);
  char *sid = open_session_id (&c, &rs, 1, ",\"policy\":\"no_landlock\"");
  cr_assert (json_is_false (json_object_get (reply_to (&c, &rs, 1), "sandboxed")));
  snprintf (req, sizeof req, "{\"op\":\"status\",\"id\":2,\"session\":\"%s\"}", sid);
  send_line (&c, req);
  cr_assert (json_is_false (json_object_get (reply_to (&c, &rs, 2), "sandboxed")));
  send_line (&c, "{\"op\":\"pool_open\",\"id\":3,\"size\":1,\"policy\":\"no_seccomp\"}");
  json_t *r = reply_to (&c, &rs, 3);
  cr_assert (json_is_true (json_object_get (r, "ok")), "%s", json_string_value (json_object_get (r, "error")));
  cr_assert (json_is_false (json_object_get (r, "sandboxed")));
  /* The shipped r beside them is still a sandbox. */
  free (open_session_id (&c, &rs, 4, ",\"policy\":\"r\""));
  cr_assert (json_is_true (json_object_get (reply_to (&c, &rs, 4), "sandboxed")));
  end_serve (&c, &rs);
  free (sid);

  /* The operator's own --policy is held to the same rule. */
  char *server_policy[] = { "securer", "serve", "--policy", "r-unsandboxed", NULL };
  start_serve (&c, server_policy);
  char *line = NULL;
  size_t cap = 0;
  cr_assert_eq (getline (&line, &cap, c.out), -1, "serve answered with %s", line);
  free (line);
  int st;
  cr_assert_eq (waitpid (c.pid, &st, 0), c.pid);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 125, "status %#x", st);
  fclose (c.in);
  fclose (c.out);
  snprintf (path, sizeof path, "rm -rf %s", dir);
  cr_assert_eq (system (path), 0);
}

/* A request never gets more than the operator allowed: only the default
 * policy, --allow-policy names and --policy-dir files may be named; limits
 * may only go down; sessions are capped per client and in all.  Over
 * stdio, and over the socket for the cap that spans clients. */
Test (serve, requests_get_no_more_than_the_operator_allowed, .timeout = 120)
{
  struct conn c;
  struct replies rs = { 0 };
  char *plain[] = { "securer", "serve", "--max-client-sessions", "2", NULL };
  start_serve (&c, plain);
  send_line (&c, "{\"op\":\"open\",\"id\":1,\"policy\":\"minimal\"}");
  send_line (&c, "{\"op\":\"pool_open\",\"id\":2,\"size\":1,\"policy\":\"r-server\"}");
  send_line (&c, "{\"op\":\"open\",\"id\":3,\"limits\":{\"cpu\":100000}}");
  send_line (&c, "{\"op\":\"open\",\"id\":4,\"limits\":{\"nofile\":1000000}}");
  static const char *const refused[] = { NULL, "policy 'minimal' is not one this server allows",
                                         "policy 'r-server' is not one this server allows",
                                         "limit 'cpu' 100000 is above the policy's 60",
                                         "limit 'nofile' 1000000 is above the policy's 256" };
  for (int id = 1; id <= 4; id++)
    {
      const char *e = json_string_value (json_object_get (reply_to (&c, &rs, id), "error"));
      cr_assert (e && strstr (e, refused[id]), "request %d: %s", id, e);
    }
  /* Lower is fine, and the default by name too; the third session is one too many. */
  char *a = open_session_id (&c, &rs, 5, ",\"policy\":\"r\",\"limits\":{\"cpu\":10,\"nofile\":200}");
  char *b = open_session_id (&c, &rs, 6, NULL);
  send_line (&c, "{\"op\":\"open\",\"id\":7}");
  const char *e = json_string_value (json_object_get (reply_to (&c, &rs, 7), "error"));
  cr_assert (e && strstr (e, "this client has 2 sessions open") && strstr (e, "--max-client-sessions"), "%s", e);
  send_line (&c, "{\"op\":\"pool_open\",\"id\":8,\"size\":1}");
  e = json_string_value (json_object_get (reply_to (&c, &rs, 8), "error"));
  cr_assert (e && strstr (e, "--max-client-sessions"), "%s", e);
  char req[256];
  snprintf (req, sizeof req, "{\"op\":\"close\",\"id\":9,\"session\":\"%s\"}", b);
  send_line (&c, req);
  cr_assert (json_is_true (json_object_get (reply_to (&c, &rs, 9), "ok")));
  free (open_session_id (&c, &rs, 10, NULL));
  json_t *r = execute_with (&c, &rs, 11, a, "\"plain\":true,\"code\":\"grep('^Max (cpu|open)', readLines('/proc/self/limits'), value = TRUE)\"");
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  json_t *v = json_object_get (json_object_get (r, "result"), "value");
  cr_assert (strstr (json_string_value (json_array_get (v, 0)), "10                   10") != NULL, "%s",
             json_string_value (json_array_get (v, 0)));
  end_serve (&c, &rs);
  free (a);
  free (b);

  char *allowing[] = { "securer", "serve", "--allow-policy", "minimal", NULL };
  start_serve (&c, allowing);
  /* minimal has no R in its view: let through, it fails to start R. */
  send_line (&c, "{\"op\":\"open\",\"id\":1,\"policy\":\"minimal\"}");
  e = json_string_value (json_object_get (reply_to (&c, &rs, 1), "error"));
  cr_assert (e && strstr (e, "libblas") && !strstr (e, "not one this server allows"), "%s", e);
  send_line (&c, "{\"op\":\"open\",\"id\":2,\"policy\":\"r-server\"}");
  cr_assert (strstr (json_string_value (json_object_get (reply_to (&c, &rs, 2), "error")), "not one this server allows"));
  end_serve (&c, &rs);

  /* The total spans clients: with room for one session, the second
   * client is refused while the first holds it. */
  char dir[] = "/tmp/securer-caps-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char sock[128];
  snprintf (sock, sizeof sock, "%s/s/serve.sock", dir);
  char *listening[] = { "securer", "serve", "--listen", sock, "--max-sessions", "1", NULL };
  start_serve (&c, listening);
  json_t *hello = recv_json (&c);
  char *token = token_of (hello);
  snprintf (req, sizeof req, "{\"op\":\"auth\",\"token\":\"%s\"}", token);
  free (token);
  int fd[2];
  for (int k = 0; k < 2; k++)
    {
      fd[k] = connect_to (sock);
      json_decref (ask (fd[k], req));
    }
  r = ask (fd[0], "{\"op\":\"open\",\"id\":1}");
  cr_assert (json_is_true (json_object_get (r, "ok")), "%s", json_string_value (json_object_get (r, "error")));
  json_decref (r);
  r = ask (fd[1], "{\"op\":\"open\",\"id\":1}");
  e = json_string_value (json_object_get (r, "error"));
  cr_assert (e && strstr (e, "the server has 1 sessions open, its most (--max-sessions)"), "%s", e);
  json_decref (r);
  /* The other refusals hold on the socket as on stdio. */
  static const char *const on_socket[][2] = {
    { "{\"op\":\"open\",\"id\":3,\"policy\":\"minimal\"}", "not one this server allows" },
    { "{\"op\":\"open\",\"id\":4,\"policy\":\"r-unsandboxed\"}", "not one this server allows" },
    { "{\"op\":\"open\",\"id\":5,\"sandbox\":false}", "--allow-unsandboxed" },
    { "{\"op\":\"open\",\"id\":6,\"limits\":{\"memory\":1e12}}", "a request may only lower" },
  };
  for (size_t k = 0; k < sizeof on_socket / sizeof *on_socket; k++)
    {
      r = ask (fd[0], on_socket[k][0]);
      e = json_string_value (json_object_get (r, "error"));
      cr_assert (e && strstr (e, on_socket[k][1]), "%s: %s", on_socket[k][0], e);
      json_decref (r);
    }
  close (fd[0]);  /* its sessions go with it */
  for (int tries = 0;; tries++)
    {
      r = ask (fd[1], "{\"op\":\"open\",\"id\":2}");
      bool ok = json_is_true (json_object_get (r, "ok"));
      json_decref (r);
      if (ok)
        break;
      cr_assert_lt (tries, 100, "the first client's session is never given back");
      usleep (20000);
    }
  json_decref (ask (fd[1], "{\"op\":\"shutdown\"}"));
  close (fd[1]);
  json_decref (hello);
  int st;
  waitpid (c.pid, &st, 0);
  fclose (c.in);
  fclose (c.out);
  snprintf (req, sizeof req, "rm -rf %s", dir);
  cr_assert_eq (system (req), 0);
}

/* End of stdin is not the end of what was asked: every request read
 * before it is answered, then serve exits 0.  A tool call made after it
 * has nobody to answer and fails in R instead of hanging. */
Test (serve, requests_read_before_the_end_of_stdin_are_answered, .timeout = 90)
{
  struct conn c;
  char *argv[] = { "securer", "serve", NULL };
  start_serve (&c, argv);
  send_line (&c, "{\"op\":\"open\",\"id\":1}");
  fclose (c.in);
  json_t *r = recv_json (&c);
  cr_assert (json_is_true (json_object_get (r, "ok")), "%s", json_string_value (json_object_get (r, "error")));
  json_decref (r);
  int st;
  cr_assert_eq (waitpid (c.pid, &st, 0), c.pid);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "status %#x", st);
  fclose (c.out);

  struct replies rs = { 0 };
  start_serve (&c, argv);
  char *sid = open_session_id (&c, &rs, 1, ",\"tools\":[{\"name\":\"ask\",\"args\":{}}]");
  char req[512];
  snprintf (req, sizeof req,
            "{\"op\":\"execute\",\"id\":2,\"session\":\"%s\",\"plain\":true,\"code\":\"Sys.sleep(0.3); "
            "paste(6 * 7, tryCatch(ask(), error = function(e) conditionMessage(e)))\"}", sid);
  send_line (&c, req);
  fclose (c.in);
  r = reply_to (&c, &rs, 2);
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  const char *v = json_string_value (json_object_get (json_object_get (r, "result"), "value"));
  cr_assert (v && strncmp (v, "42 ", 3) == 0 && strstr (v, "the client closed its input"), "%s", v);
  cr_assert_eq (waitpid (c.pid, &st, 0), c.pid);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "status %#x", st);
  fclose (c.out);
  replies_clear (&rs);
  free (sid);
}

/* A socket passed as systemd passes it (fd 3, LISTEN_FDS=1, LISTEN_PID)
 * is served like --listen's own, the token is in a file and never on
 * stdout, readiness and stopping go to NOTIFY_SOCKET, and every session of
 * every client is in the one --audit-log with the client's uid and pid,
 * the policy's digest, its limits and the session's host uid. */
Test (serve, socket_activation_notify_and_the_servers_audit_log, .timeout = 120)
{
  char dir[] = "/tmp/securer-sd-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char sock[96], notify[96], audit[128], req[256];
  snprintf (sock, sizeof sock, "%s/serve.sock", dir);
  snprintf (notify, sizeof notify, "%s/notify", dir);
  snprintf (audit, sizeof audit, "%s/audit.jsonl", dir);
  int ls = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s", sock);
  cr_assert_eq (bind (ls, (struct sockaddr *) &sa, sizeof sa), 0);
  cr_assert_eq (listen (ls, 8), 0);
  int ns = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un na = { .sun_family = AF_UNIX };
  snprintf (na.sun_path, sizeof na.sun_path, "%s", notify);
  cr_assert_eq (bind (ns, (struct sockaddr *) &na, sizeof na), 0);

  int o[2];
  cr_assert_eq (pipe (o), 0);
  pid_t pid = fork ();
  if (pid == 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      dup2 (o[1], 1);
      dup2 (ls, 3);  /* dup2 clears close-on-exec */
      char p[32];
      snprintf (p, sizeof p, "%d", (int) getpid ());
      setenv ("LISTEN_PID", p, 1);
      setenv ("LISTEN_FDS", "1", 1);
      setenv ("NOTIFY_SOCKET", notify, 1);
      execl (bin (), "securer", "serve", "--audit-log", audit, (char *) NULL);
      _exit (127);
    }
  close (o[1]);
  close (ls);
  FILE *out = fdopen (o[0], "r");
  struct conn c = { .out = out, .pid = pid };
  json_t *hello = recv_json (&c);
  cr_assert_str_eq (json_string_value (json_object_get (hello, "listen")), sock);
  char *token = token_of (hello);
  char state[64] = "";
  ssize_t n = recv (ns, state, sizeof state - 1, 0);
  cr_assert_gt (n, 0);
  state[n] = '\0';
  cr_assert_str_eq (state, "READY=1");

  snprintf (req, sizeof req, "{\"op\":\"auth\",\"token\":\"%s\"}", token);
  int fd[2];
  for (int k = 0; k < 2; k++)
    {
      fd[k] = connect_to (sock);
      json_decref (ask (fd[k], req));
      json_t *r = ask (fd[k], k ? "{\"op\":\"open\",\"id\":1,\"limits\":{\"cpu\":7}}" : "{\"op\":\"open\",\"id\":1}");
      cr_assert (json_is_true (json_object_get (r, "ok")), "%s", json_string_value (json_object_get (r, "error")));
      snprintf (req + 128, 128, "{\"op\":\"execute\",\"id\":2,\"session\":\"%s\",\"code\":\"1\"}",
                json_string_value (json_object_get (r, "session")));
      json_decref (r);
      json_decref (ask (fd[k], req + 128));
      r = ask (fd[k], "{\"op\":\"open\",\"id\":3,\"audit_log\":\"mine.jsonl\"}");
      cr_assert (strstr (json_string_value (json_object_get (r, "error")), "the server chooses its audit files"));
      json_decref (r);
    }
  json_decref (ask (fd[0], "{\"op\":\"shutdown\"}"));
  close (fd[0]);
  close (fd[1]);
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "status %#x", st);
  n = recv (ns, state, sizeof state - 1, MSG_DONTWAIT);
  cr_assert_gt (n, 0, "no STOPPING=1");
  state[n] = '\0';
  cr_assert_str_eq (state, "STOPPING=1");
  cr_assert_eq (access (sock, F_OK), 0, "systemd's socket is left to systemd");
  fclose (out);
  close (ns);
  free (token);
  json_decref (hello);

  /* Both clients' sessions, told apart, with what ran under what. */
  FILE *f = fopen (audit, "r");
  cr_assert_not_null (f);
  char line[8192];
  int starts = 0, executes = 0;
  json_int_t clients[2] = { 0, 0 };
  while (fgets (line, sizeof line, f) != NULL)
    {
      json_t *j = json_loads (line, 0, NULL);
      cr_assert_not_null (j, "%s", line);
      cr_assert_eq (json_integer_value (json_object_get (j, "client_uid")), (json_int_t) getuid (), "%s", line);
      cr_assert_eq (json_integer_value (json_object_get (j, "client_pid")), (json_int_t) getpid (), "%s", line);
      const char *ev = json_string_value (json_object_get (j, "event"));
      if (strcmp (ev, "session_start") == 0)
        {
          cr_assert_str_eq (json_string_value (json_object_get (j, "policy")), "r");
          cr_assert_eq (strlen (json_string_value (json_object_get (j, "policy_digest"))), 64, "%s", line);
          json_int_t cpu = json_integer_value (json_object_get (json_object_get (j, "rlimits"), "cpu"));
          cr_assert (cpu == 60 || cpu == 7, "%s", line);
          cr_assert (json_is_integer (json_object_get (j, "host_uid")), "%s", line);
          if (geteuid () == 0)
            cr_assert_neq (json_integer_value (json_object_get (j, "host_uid")), 0, "a session ran as host root");
          cr_assert_lt (starts, 2);
          clients[starts++] = json_integer_value (json_object_get (j, "client"));
        }
      executes += strcmp (ev, "execute_complete") == 0;
      json_decref (j);
    }
  fclose (f);
  cr_assert_eq (starts, 2);
  cr_assert_eq (executes, 2);
  cr_assert_neq (clients[0], clients[1], "two clients, one number");
  snprintf (req, sizeof req, "rm -rf %s", dir);
  cr_assert_eq (system (req), 0);
}

/* --socket-group: a member of the group (not our uid), by its primary or
 * a supplementary group, connects and reads the token; a stranger cannot
 * reach the socket at all. */
Test (serve, socket_group_members_connect_and_strangers_do_not, .timeout = 90)
{
  if (geteuid () != 0)
    cr_skip_test ("needs root, to connect as other users");
  char dir[] = "/tmp/securer-grp-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  cr_assert_eq (chmod (dir, 0755), 0);
  char sock[96];
  snprintf (sock, sizeof sock, "%s/s/serve.sock", dir);
  struct conn c;
  char *argv[] = { "securer", "serve", "--listen", sock, "--socket-group", "65534", NULL };
  start_serve (&c, argv);
  json_t *hello = recv_json (&c);
  struct stat st;
  cr_assert_eq (stat (sock, &st), 0);
  cr_assert_eq (st.st_mode & 0777, 0660);
  cr_assert_eq (st.st_gid, 65534);
  const char *tokfile = json_string_value (json_object_get (hello, "token_file"));
  cr_assert_eq (stat (tokfile, &st), 0);
  cr_assert_eq (st.st_mode & 0777, 0640);
  /* 0: primary group; 1: supplementary (SO_PEERGROUPS); 2: neither. */
  static const char *const expect[] = { "ok", "ok", "connect: Permission denied" };
  for (int how = 0; how < 3; how++)
    {
      int p[2];
      cr_assert_eq (pipe (p), 0);
      pid_t pid = fork ();
      if (pid == 0)
        {
          /* No cr_assert here: a forked child cannot report to the runner. */
          close (p[0]);
          gid_t primary = how == 0 ? 65534 : 65533, extra = 65534;
          if (setgroups (how == 1 ? 1 : 0, &extra) < 0 || setresgid (primary, primary, primary) < 0
              || setresuid (65534, 65534, 65534) < 0)
            _exit (99);
          char tok[64] = "none", req[128];
          const char *answer = "no answer";
          FILE *f = fopen (tokfile, "r");
          if (f != NULL && fgets (tok, sizeof tok, f) != NULL)
            tok[strcspn (tok, "\n")] = '\0';
          if (f != NULL)
            fclose (f);
          int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
          struct sockaddr_un sa = { .sun_family = AF_UNIX };
          snprintf (sa.sun_path, sizeof sa.sun_path, "%s", sock);
          char buf[512] = "";
          if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
            snprintf (buf, sizeof buf, "connect: %s", strerror (errno)), answer = buf;
          else
            {
              snprintf (req, sizeof req, "{\"op\":\"auth\",\"token\":\"%s\"}\n", tok);
              ssize_t n = 0;
              if (write (fd, req, strlen (req)) > 0 && (n = read (fd, buf, sizeof buf - 1)) > 0)
                {
                  buf[n] = '\0';
                  json_t *r = json_loads (buf, 0, NULL);
                  answer = json_is_true (json_object_get (r, "ok")) ? "ok" : buf;
                }
            }
          if (write (p[1], answer, strlen (answer)) < 0)
            _exit (98);
          _exit (0);
        }
      close (p[1]);
      char got[512] = "";
      ssize_t n = read (p[0], got, sizeof got - 1);
      got[n > 0 ? n : 0] = '\0';
      close (p[0]);
      waitpid (pid, NULL, 0);
      cr_assert_str_eq (got, expect[how], "case %d", how);
    }
  int fd = connect_to (sock);
  char *token = NULL;
  {
    FILE *f = fopen (tokfile, "r");
    char tok[64];
    cr_assert_not_null (fgets (tok, sizeof tok, f));
    fclose (f);
    tok[strcspn (tok, "\n")] = '\0';
    token = strdup (tok);
  }
  char req[128];
  snprintf (req, sizeof req, "{\"op\":\"auth\",\"token\":\"%s\"}", token);
  json_decref (ask (fd, req));
  json_decref (ask (fd, "{\"op\":\"shutdown\"}"));
  close (fd);
  free (token);
  json_decref (hello);
  waitpid (c.pid, NULL, 0);
  fclose (c.in);
  fclose (c.out);
  snprintf (req, sizeof req, "rm -rf %s", dir);
  cr_assert_eq (system (req), 0);
}

/* Pages drawn come back in the reply after the text, within the
 * server's caps, which a request may lower and not raise; a reply too
 * small for them counts them instead. */
Test (serve, plots_come_back_within_the_servers_caps, .timeout = 90)
{
  struct conn c;
  struct replies rs = { 0 };
  char *argv[] = { "securer", "serve", "--max-plots", "2", "--max-reply", "65536", NULL };
  start_serve (&c, argv);
  char *sid = open_session_id (&c, &rs, 1, NULL);
  json_t *r = execute_with (&c, &rs, 2, sid, "\"code\":\"cat('drawn\\\\n'); for (i in 1:3) plot(i)\"");
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  json_t *res = json_object_get (r, "result");
  json_t *plots = json_object_get (res, "plots");
  cr_assert_eq (json_array_size (plots), 2);
  cr_assert_eq (json_integer_value (json_object_get (res, "plots_dropped")), 1);
  cr_assert_str_eq (json_string_value (json_object_get (json_array_get (plots, 0), "format")), "png");
  cr_assert_eq (json_integer_value (json_object_get (json_array_get (plots, 0), "width")), 480);
  cr_assert (strncmp (json_string_value (json_object_get (json_array_get (plots, 0), "data")), "iVBORw0KGgo", 11) == 0);
  cr_assert_eq (json_array_size (json_object_get (res, "output")), 1);
  r = execute_with (&c, &rs, 3, sid, "\"code\":\"plot(1)\",\"max_plots\":3");
  const char *e = json_string_value (json_object_get (r, "error"));
  cr_assert (e && strstr (e, "\"max_plots\" 3 exceeds the server's limit of 2 (--max-plots)"), "%s", e);
  r = execute_with (&c, &rs, 4, sid, "\"code\":\"plot(1)\",\"plots\":{\"format\":\"svg\",\"width\":200,\"height\":150}");
  plots = json_object_get (json_object_get (r, "result"), "plots");
  cr_assert_eq (json_array_size (plots), 1);
  cr_assert_str_eq (json_string_value (json_object_get (json_array_get (plots, 0), "format")), "svg");
  cr_assert_eq (json_integer_value (json_object_get (json_array_get (plots, 0), "height")), 150);
  r = execute_with (&c, &rs, 5, sid, "\"code\":\"plot(1)\",\"plots\":{\"format\":\"gif\"}");
  e = json_string_value (json_object_get (r, "error"));
  cr_assert (e && strstr (e, "execute: plots: \"format\" must be"), "%s", e);
  /* Two large pages do not fit a reply of 64 KiB: counted, the text kept. */
  r = execute_with (&c, &rs, 6, sid, "\"code\":\"cat('still here\\\\n'); for (i in 1:2) image(matrix(runif(250000), 500))\","
                                     "\"plots\":{\"width\":1000,\"height\":1000}");
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  res = json_object_get (r, "result");
  cr_assert_lt (json_array_size (json_object_get (res, "plots")), 2);
  cr_assert_eq (json_array_size (json_object_get (res, "plots")) + json_integer_value (json_object_get (res, "plots_dropped")), 2);
  cr_assert_str_eq (json_string_value (json_object_get (json_array_get (json_object_get (res, "output"), 0), "line")),
                    "still here");
  r = execute_with (&c, &rs, 7, sid, "\"code\":\"1 + 1\"");
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  end_serve (&c, &rs);
  free (sid);
}

/* A work directory: mounted at /work, R's working directory, shared by
 * two sessions at once; upload and download stay beneath it and never
 * follow a link the sandbox planted; as root the sandbox writes as the
 * directory's owner. */
Test (serve, work_directories_and_their_files, .timeout = 120)
{
  char base[] = "/tmp/securer-serve-wd-XXXXXX", dir[64], victim[80], path[128];
  cr_assert_not_null (mkdtemp (base));
  chmod (base, 0711);
  snprintf (dir, sizeof dir, "%s/w", base);
  cr_assert_eq (mkdir (dir, 0755), 0);
  uid_t owner = geteuid () == 0 ? 65534 : geteuid ();
  if (geteuid () == 0)
    cr_assert_eq (chown (dir, owner, owner), 0);
  snprintf (victim, sizeof victim, "%s/victim", base);
  FILE *f = fopen (victim, "w");
  fputs ("host secret", f);
  fclose (f);
  struct conn c;
  struct replies rs = { 0 };
  char req[512];
  char *plain[] = { "securer", "serve", NULL };
  start_serve (&c, plain);
  snprintf (req, sizeof req, "{\"op\":\"open\",\"id\":1,\"workdir\":\"%s\"}", dir);
  send_line (&c, req);
  const char *e = json_string_value (json_object_get (reply_to (&c, &rs, 1), "error"));
  cr_assert (e && strstr (e, "--allow-workdir"), "%s", e);
  end_serve (&c, &rs);

  char *allowing[] = { "securer", "serve", "--allow-workdir", "--max-file-bytes", "100000", NULL };
  start_serve (&c, allowing);
  snprintf (req, sizeof req, ",\"workdir\":\"%s\"", dir);
  char *a = open_session_id (&c, &rs, 1, req);
  char *b = open_session_id (&c, &rs, 2, req);
  /* "hello\n" */
  snprintf (req, sizeof req, "{\"op\":\"upload\",\"id\":3,\"session\":\"%s\",\"path\":\"in.txt\",\"data\":\"aGVsbG8K\"}", a);
  send_line (&c, req);
  cr_assert (json_is_true (json_object_get (reply_to (&c, &rs, 3), "ok")));
  json_t *r = execute_with (&c, &rs, 4, b, "\"plain\":true,\"code\":\"writeLines(toupper(readLines('in.txt')), 'out.txt'); "
                                            "file.symlink('/etc/passwd', 'pw'); getwd()\"");
  cr_assert_str_eq (json_string_value (json_object_get (json_object_get (r, "result"), "value")), "/work", "%s",
                    result_error (r));
  snprintf (req, sizeof req, "{\"op\":\"download\",\"id\":5,\"session\":\"%s\",\"path\":\"out.txt\"}", a);
  send_line (&c, req);
  r = reply_to (&c, &rs, 5);
  cr_assert_str_eq (json_string_value (json_object_get (r, "data")), "SEVMTE8K", "%s",
                    json_string_value (json_object_get (r, "error")));  /* "HELLO\n" */
  cr_assert_eq (json_integer_value (json_object_get (r, "size")), 6);
  /* Written by the sandbox, owned by the directory's owner. */
  struct stat st;
  snprintf (path, sizeof path, "%s/out.txt", dir);
  cr_assert_eq (stat (path, &st), 0);
  cr_assert_eq (st.st_uid, owner);
  static const struct {
    const char *op, *path, *msg;
  } bad[] = {
    { "download", "pw", "symbolic link" },
    { "download", "../victim", "'..'" },
    { "download", "/etc/passwd", "not an absolute path" },
    { "upload", "../victim", "'..'" },
    { "download", "none", "does not exist" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      snprintf (req, sizeof req, "{\"op\":\"%s\",\"id\":%zu,\"session\":\"%s\",\"path\":\"%s\",\"data\":\"eA==\"}",
                bad[i].op, 10 + i, a, bad[i].path);
      send_line (&c, req);
      e = json_string_value (json_object_get (reply_to (&c, &rs, (int) (10 + i)), "error"));
      cr_assert (e && strstr (e, bad[i].msg), "%s %s: %s", bad[i].op, bad[i].path, e);
    }
  /* An upload onto the planted link replaces the link, not its target. */
  /* Relative: inside the sandbox it leads nowhere, on the host to victim. */
  r = execute_with (&c, &rs, 20, a, "\"code\":\"invisible(file.symlink('../victim', 'planted'))\"");
  cr_assert_str_eq (result_status (r), "ok", "%s", result_error (r));
  snprintf (req, sizeof req, "{\"op\":\"upload\",\"id\":21,\"session\":\"%s\",\"path\":\"planted\",\"data\":\"eA==\"}", a);
  send_line (&c, req);
  cr_assert (json_is_true (json_object_get (reply_to (&c, &rs, 21), "ok")));
  f = fopen (victim, "r");
  char got[32] = "";
  cr_assert_not_null (fgets (got, sizeof got, f));
  fclose (f);
  cr_assert_str_eq (got, "host secret");
  snprintf (path, sizeof path, "%s/planted", dir);
  cr_assert_eq (lstat (path, &st), 0);
  cr_assert (S_ISREG (st.st_mode) && st.st_size == 1);
  /* Bounded: a file over --max-file-bytes neither goes in nor comes out. */
  r = execute_with (&c, &rs, 22, b, "\"code\":\"writeBin(raw(200000), 'big')\"");
  snprintf (req, sizeof req, "{\"op\":\"download\",\"id\":23,\"session\":\"%s\",\"path\":\"big\"}", a);
  send_line (&c, req);
  e = json_string_value (json_object_get (reply_to (&c, &rs, 23), "error"));
  cr_assert (e && strstr (e, "200000 bytes, more than the 100000") && strstr (e, "--max-file-bytes"), "%s", e);
  /* Files need a work directory; one others may write is refused. */
  char *none = open_session_id (&c, &rs, 24, NULL);
  snprintf (req, sizeof req, "{\"op\":\"download\",\"id\":25,\"session\":\"%s\",\"path\":\"out.txt\"}", none);
  send_line (&c, req);
  e = json_string_value (json_object_get (reply_to (&c, &rs, 25), "error"));
  cr_assert (e && strstr (e, "has no work directory"), "%s", e);
  chmod (dir, 0777);
  snprintf (req, sizeof req, "{\"op\":\"open\",\"id\":26,\"workdir\":\"%s\"}", dir);
  send_line (&c, req);
  e = json_string_value (json_object_get (reply_to (&c, &rs, 26), "error"));
  cr_assert (e && strstr (e, "group or others may write it"), "%s", e);
  end_serve (&c, &rs);
  free (a);
  free (b);
  free (none);
  snprintf (req, sizeof req, "rm -rf '%s'", base);
  cr_assert_eq (system (req), 0);
}
