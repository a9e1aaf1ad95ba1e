/* `securer exec` and `securer serve` from the outside, as a host would use
 * them: real processes, real sandboxed R. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

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
  const char *token = json_string_value (json_object_get (hello, "token"));
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
