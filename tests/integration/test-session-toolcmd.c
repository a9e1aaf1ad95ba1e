/* Tools implemented by host commands: run in the session's event loop,
 * bounded by the execution's timeout and the message size cap, started with
 * a clean environment and no stray descriptors, and never left behind. */
#include <config.h>

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "securer/session.h"

#include "ident.h"

static char dir[] = "/tmp/securer-toolcmd-XXXXXX";

static void
setup (void)
{
  cr_assert_not_null (mkdtemp (dir));
}

static void
teardown (void)
{
  char cmd[128];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    cr_log_warn ("could not remove %s", dir);
}

TestSuite (toolcmd, .init = setup, .fini = teardown);

/* Writes an executable /bin/sh script; returns its path (static buffer). */
static const char *
script (const char *name, const char *body)
{
  static char path[256];
  snprintf (path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fprintf (f, "#!/bin/sh\n%s\n", body);
  fclose (f);
  chmod (path, 0700);
  return path;
}

static void
add_command (struct securer_tools *t, const char *name, const char *path,
             const struct securer_tool_arg *args, size_t n, const char *const *env)
{
  const char *argv[] = { path, NULL };
  struct securer_tool_command c = { .argv = argv, .env = env };
  securer_err_t err = NULL;
  cr_assert_eq (securer_tools_add_command (t, name, "", args, n, &c, &err), 0, "%s",
                err ? securer_error_message (err) : "");
}

static struct securer_session *
open_with (struct securer_tools *t)
{
  struct securer_session_opts o = { .tools = t };
  struct securer_session *s = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_open (&o, &s, &err), 0, "open: %s",
                err ? securer_error_message (err) : "");
  securer_tools_unref (t);
  return s;
}

static char *
value_json (struct securer_session *s, const char *code)
{
  struct securer_result r;
  securer_err_t err = NULL;
  struct securer_exec_opts xo = { .timeout_ms = 20000 };
  cr_assert_eq (securer_session_execute (s, code, &xo, &r, &err), 0, "%s: %s", code,
                r.error ? r.error : "");
  char *j = json_dumps (r.value, JSON_COMPACT | JSON_ENCODE_ANY);
  securer_result_clear (&r);
  return j;
}

/* Shell that writes "PID START" of process $var (START: field 22 of its
 * /proc/PID/stat, read while it runs), to tell it from a later process
 * given the same pid. */
#define IDENT_OF(var) "\"" var " $(sed 's/.*) //' /proc/" var "/stat | cut -d' ' -f20)\""

/* The identity written at index `which` (each is "PID START") in path. */
static struct proc_ident
read_ident (const char *path, int which)
{
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f, "%s was not written", path);
  long pid = 0;
  unsigned long long start = 0;
  for (int i = 0; i <= which; i++)
    cr_assert_eq (fscanf (f, "%ld %llu", &pid, &start), 2, "%s: entry %d", path, i + 1);
  fclose (f);
  return (struct proc_ident){ .pid = (pid_t) pid, .start = start };
}

/* Gone, or a zombie some other parent has yet to reap (killed either way). */
static bool
dead (struct proc_ident id)
{
  return !proc_ident_running (id);
}

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

static bool
is_our_child (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/task/%d/children", (int) getpid ());
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f);
  long c;
  bool found = false;
  while (fscanf (f, "%ld", &c) == 1)
    found |= c == pid;
  fclose (f);
  return found;
}

Test (toolcmd, a_hanging_tool_is_killed_at_the_timeout_and_the_session_goes_on)
{
  char pids[300], body[1200];
  snprintf (pids, sizeof pids, "%s/pids", dir);
  /* The command and a child it started in its group, both waiting forever. */
  snprintf (body, sizeof body, "sleep 1000 &\necho " IDENT_OF ("$$") " " IDENT_OF ("$!") " > %s.tmp && mv %s.tmp %s\nwait",
            pids, pids, pids);
  struct securer_tools *t = securer_tools_new ();
  add_command (t, "hang", script ("hang.sh", body), NULL, 0, NULL);
  struct securer_session *s = open_with (t);
  free (value_json (s, "x <- 41"));
  int fds = count_fds ();

  struct securer_result r;
  securer_err_t err = NULL;
  struct securer_exec_opts xo = { .timeout_ms = 2000 };
  cr_assert_eq (securer_session_execute (s, "hang()", &xo, &r, &err), -1);
  cr_assert_eq (r.status, SECURER_EXEC_TIMEOUT, "%s: %s", securer_exec_status_name (r.status),
                r.error ? r.error : "");
  cr_assert_eq (securer_error_errno (err), ETIMEDOUT);
  cr_assert (strstr (r.error, "timed out") != NULL, "%s", r.error);
  securer_error_free (&err);
  securer_result_clear (&r);

  struct proc_ident tool = read_ident (pids, 0), grandchild = read_ident (pids, 1);
  cr_assert (!is_our_child (tool.pid), "the tool command was not reaped");
  cr_assert (dead (tool), "the tool command still runs");
  /* Reparented on its parent's death; it may not be reaped yet, but it must
   * have been killed with its group. */
  for (int i = 0; i < 500 && !dead (grandchild); i++)
    usleep (10000);
  cr_assert (dead (grandchild), "a process the tool started survived the timeout");

  /* The session stays usable (a fresh R: the timeout killed the old one). */
  char *v = value_json (s, "exists('x'); 6 * 7");
  cr_assert_str_eq (v, "{\"t\":\"dbl\",\"v\":[42]}");
  free (v);
  cr_assert_eq (count_fds (), fds, "descriptors of the tool command leaked");
  securer_session_close (s);
}

Test (toolcmd, output_over_the_message_cap_is_refused)
{
  char pidf[300], body[600];
  snprintf (pidf, sizeof pidf, "%s/pid", dir);
  snprintf (body, sizeof body, "echo " IDENT_OF ("$$") " > %s\nhead -c 10000000 /dev/zero | tr '\\0' 1", pidf);
  struct securer_tools *t = securer_tools_new ();
  add_command (t, "big", script ("big.sh", body), NULL, 0, NULL);
  struct securer_session *s = open_with (t);
  free (value_json (s, "x <- 1"));
  struct securer_result r;
  securer_err_t err = NULL;
  struct securer_exec_opts xo = { .timeout_ms = 20000 };
  cr_assert_eq (securer_session_execute (s, "big()", &xo, &r, &err), -1);
  cr_assert_eq (r.status, SECURER_EXEC_ERROR, "%s: %s", securer_exec_status_name (r.status), r.error);
  cr_assert (strstr (r.error, "tool 'big' printed more than 1048576 bytes") != NULL, "%s", r.error);
  securer_error_free (&err);
  securer_result_clear (&r);
  struct proc_ident tool = read_ident (pidf, 0);
  cr_assert (!is_our_child (tool.pid) && dead (tool), "the tool command was left behind");
  /* Only the call failed: R and its state are intact. */
  char *v = value_json (s, "tryCatch(big(), error = function(e) 'caught'); x + 1");
  cr_assert_str_eq (v, "{\"t\":\"dbl\",\"v\":[2]}");
  free (v);
  securer_session_close (s);
}

Test (toolcmd, arguments_values_errors_environment_and_descriptors)
{
  /* A descriptor the host opened without O_CLOEXEC must not reach the tool. */
  int leak = open ("/dev/null", O_RDONLY);
  cr_assert_geq (leak, 0);
  cr_assert_eq (dup2 (leak, 57), 57);
  close (leak);
  setenv ("SECURER_TEST_SECRET", "hunter2", 1);
  setenv ("SECURER_TEST_PASSED", "yes", 1);
  char echo_body[300];
  snprintf (echo_body, sizeof echo_body, "cat > %s/in.json\necho '{\"ok\": [1, 2.5, null]}'", dir);
  char env_body[] =
    "fd=no; [ -e /dev/fd/57 ] && fd=yes\n"
    "printf '{\"secret\":\"%s\",\"passed\":\"%s\",\"extra\":\"%s\",\"tool\":\"%s\",\"fd57\":\"%s\",\"path\":\"%s\"}'"
    " \"${SECURER_TEST_SECRET-unset}\" \"${SECURER_TEST_PASSED-unset}\" \"$EXTRA\" \"$SECURER_TOOL\" $fd \"$PATH\"";
  struct securer_tools *t = securer_tools_new ();
  struct securer_tool_arg ab[] = { { "a", SECURER_ARG_NUMERIC }, { "b", SECURER_ARG_ANY } };
  add_command (t, "echo_args", script ("echo.sh", echo_body), ab, 2, NULL);
  const char *env[] = { "SECURER_TEST_PASSED", "EXTRA=x=y", NULL };
  add_command (t, "env_probe", script ("env.sh", env_body), NULL, 0, env);
  add_command (t, "fails", script ("fails.sh", "echo 'the service is down' >&2\necho more >&2\nexit 3"),
               NULL, 0, NULL);
  add_command (t, "silent_fail", script ("silent.sh", "exit 4"), NULL, 0, NULL);
  add_command (t, "not_json", script ("notjson.sh", "echo 'hello'"), NULL, 0, NULL);
  add_command (t, "killed", script ("killed.sh", "kill -9 $$"), NULL, 0, NULL);
  struct securer_session *s = open_with (t);

  char *v = value_json (s, "echo_args(1.5, list(x = NA, y = 'z'))");
  cr_assert_str_eq (v, "{\"t\":\"list\",\"v\":[{\"t\":\"dbl\",\"v\":[1,2.5,null]}],\"n\":[\"ok\"]}", "%s", v);
  free (v);
  char in[300];
  snprintf (in, sizeof in, "%s/in.json", dir);
  FILE *f = fopen (in, "r");
  char line[256] = "";
  cr_assert_not_null (fgets (line, sizeof line, f));
  fclose (f);
  cr_assert_str_eq (line, "{\"a\":1.5,\"b\":{\"x\":null,\"y\":\"z\"}}");

  v = value_json (s, "unlist(env_probe())");
  cr_assert (strstr (v, "\"unset\",\"yes\",\"x=y\",\"env_probe\",\"no\",\"/usr/local/bin:/usr/bin:/bin\"") != NULL,
             "secret unset, passed on, extra set, tool name, no fd 57, clean PATH: %s", v);
  free (v);

  v = value_json (s, "tryCatch(fails(), error = function(e) conditionMessage(e))");
  cr_assert_str_eq (v, "{\"t\":\"chr\",\"v\":[\"the service is down\"]}");
  free (v);
  v = value_json (s, "tryCatch(silent_fail(), error = function(e) conditionMessage(e))");
  cr_assert_str_eq (v, "{\"t\":\"chr\",\"v\":[\"tool 'silent_fail' failed (exit status 4)\"]}");
  free (v);
  v = value_json (s, "tryCatch(not_json(), error = function(e) conditionMessage(e))");
  cr_assert (strstr (v, "tool 'not_json' printed invalid JSON") != NULL, "%s", v);
  free (v);
  v = value_json (s, "tryCatch(killed(), error = function(e) conditionMessage(e))");
  cr_assert_str_eq (v, "{\"t\":\"chr\",\"v\":[\"tool 'killed' was killed by signal 9\"]}");
  free (v);
  securer_session_close (s);
  close (57);
}

Test (toolcmd, a_command_that_does_not_read_its_input_does_not_kill_the_host)
{
  /* echo exits without reading: writing the rest of a big argument gets
   * EPIPE, which must not become a SIGPIPE for the host (default
   * disposition here). */
  cr_assert_eq (signal (SIGPIPE, SIG_DFL), SIG_DFL);
  struct securer_tools *t = securer_tools_new ();
  struct securer_tool_arg x[] = { { "x", SECURER_ARG_CHARACTER } };
  const char *argv[] = { "echo", "1", NULL };
  struct securer_tool_command c = { .argv = argv };
  securer_err_t err = NULL;
  cr_assert_eq (securer_tools_add_command (t, "ignore", "", x, 1, &c, &err), 0);
  struct securer_session *s = open_with (t);
  char *v = value_json (s, "big <- strrep('a', 300000); s <- 0L; for (i in 1:20) s <- s + ignore(big); s");
  cr_assert_str_eq (v, "{\"t\":\"int\",\"v\":[20]}");
  free (v);
  sigset_t pending;
  sigpending (&pending);
  cr_assert (!sigismember (&pending, SIGPIPE), "no SIGPIPE left pending");
  securer_session_close (s);
}

Test (toolcmd, commands_are_checked_at_registration)
{
  struct securer_tools *t = securer_tools_new ();
  securer_err_t err = NULL;
  const char *missing[] = { "securer-no-such-command", NULL };
  struct securer_tool_command c = { .argv = missing };
  cr_assert_eq (securer_tools_add_command (t, "x", "", NULL, 0, &c, &err), -1);
  cr_assert_eq (securer_error_errno (err), ENOENT);
  cr_assert (strstr (securer_error_message (err), "not found in PATH") != NULL);
  securer_error_free (&err);
  const char *notexec[] = { "/etc/passwd", NULL };
  c.argv = notexec;
  cr_assert_eq (securer_tools_add_command (t, "x", "", NULL, 0, &c, &err), -1);
  cr_assert_eq (securer_error_errno (err), EACCES);
  securer_error_free (&err);
  const char *sh[] = { "sh", "-c", "true", NULL };
  const char *bad_env[] = { "1BAD=x", NULL };
  c.argv = sh;
  c.env = bad_env;
  cr_assert_eq (securer_tools_add_command (t, "x", "", NULL, 0, &c, &err), -1);
  cr_assert_eq (securer_error_errno (err), EINVAL);
  securer_error_free (&err);
  c.env = NULL;
  cr_assert_eq (securer_tools_add_command (t, "x", "", NULL, 0, &c, &err), 0, "sh is found in PATH");
  cr_assert_eq (securer_tools_count (t), 1);
  securer_tools_unref (t);
}
