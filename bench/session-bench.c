/* Session benchmarks: cold start to first result (next to bare R), warm
 * execute round trip, tool-call round trip, pool throughput.  Prints a
 * Markdown table; results go to docs/benchmarks.md. */
#include <config.h>

#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "securer/session.h"

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
die (securer_err_t *err, const char *what)
{
  fprintf (stderr, "bench: %s: %s\n", what, *err ? securer_error_message (*err) : "failed");
  exit (1);
}

static enum securer_tool_status
noop (void *u, const struct securer_tool_call *c, json_t **result, char **error)
{
  *result = json_null ();
  return SECURER_TOOL_OK;
}

static void
exec_ok (struct securer_session *s, const char *code)
{
  struct securer_result r;
  securer_err_t err = NULL;
  if (securer_session_execute (s, code, NULL, &r, &err) < 0)
    die (&err, code);
  securer_result_clear (&r);
}

static double
bare_r (void)
{
  extern char **environ;
  char *argv[] = { "R", "--vanilla", "--slave", "-e", "1", NULL };
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", 1, 0);
  pid_t pid;
  double t0 = now ();
  if (posix_spawnp (&pid, "R", &fa, NULL, argv, environ) != 0)
    return -1;
  int st;
  waitpid (pid, &st, 0);
  posix_spawn_file_actions_destroy (&fa);
  return now () - t0;
}

struct worker {
  struct securer_pool *pool;
  double until;
  long done;
};

static void *
work (void *arg)
{
  struct worker *w = arg;
  while (now () < w->until)
    {
      struct securer_result r;
      securer_err_t err = NULL;
      if (securer_pool_execute (w->pool, "1 + 1", NULL, UINT64_MAX, &r, &err) < 0)
        die (&err, "pool execute");
      securer_result_clear (&r);
      w->done++;
    }
  return NULL;
}

int
main (void)
{
  enum { COLD = 15, WARM = 1000, TOOLREP = 20, TOOLN = 200 };
  securer_err_t err = NULL;
  struct securer_tools *tools = securer_tools_new ();
  securer_tools_add (tools, "noop", "does nothing", NULL, 0, noop, NULL, &err);
  /* A host command per call (fork + exec + pipes + pidfd), and one that
   * never answers, to see how soon a timeout frees the session. */
  const char *echo_argv[] = { "echo", "null", NULL }, *hang_argv[] = { "sleep", "1000", NULL };
  struct securer_tool_command echo_cmd = { .argv = echo_argv }, hang_cmd = { .argv = hang_argv };
  if (securer_tools_add_command (tools, "cmd_noop", "", NULL, 0, &echo_cmd, &err) < 0
      || securer_tools_add_command (tools, "cmd_hang", "", NULL, 0, &hang_cmd, &err) < 0)
    die (&err, "tool commands");
  struct securer_session_opts so = { .tools = tools };

  double bare[COLD], cold[COLD];
  bare_r ();
  for (int i = 0; i < COLD; i++)
    {
      bare[i] = bare_r ();
      double t0 = now ();
      struct securer_session *s;
      if (securer_session_open (&so, &s, &err) < 0)
        die (&err, "open");
      exec_ok (s, "1");
      cold[i] = now () - t0;
      securer_session_close (s);
    }

  struct securer_session *s;
  if (securer_session_open (&so, &s, &err) < 0)
    die (&err, "open");
  for (int i = 0; i < 50; i++)
    exec_ok (s, "1 + 1");
  static double warm[WARM];
  for (int i = 0; i < WARM; i++)
    {
      double t0 = now ();
      exec_ok (s, "1 + 1");
      warm[i] = now () - t0;
    }
  double tool[TOOLREP];
  char code[64];
  snprintf (code, sizeof code, "for (i in 1:%d) noop()", TOOLN);
  exec_ok (s, code);
  for (int i = 0; i < TOOLREP; i++)
    {
      double t0 = now ();
      exec_ok (s, code);
      tool[i] = (now () - t0) / TOOLN;
    }
  enum { CMDN = 50, HANGREP = 10 };
  double cmd[TOOLREP];
  snprintf (code, sizeof code, "for (i in 1:%d) cmd_noop()", CMDN);
  exec_ok (s, code);
  for (int i = 0; i < TOOLREP; i++)
    {
      double t0 = now ();
      exec_ok (s, code);
      cmd[i] = (now () - t0) / CMDN;
    }
  /* Past the 200 ms timeout: until the result is back (tool group killed
   * and reaped, R killed), then until the fresh R answers again. */
  double over[HANGREP], usable[HANGREP];
  for (int i = 0; i < HANGREP; i++)
    {
      struct securer_exec_opts xo = { .timeout_ms = 200 };
      struct securer_result r;
      double t0 = now ();
      if (securer_session_execute (s, "cmd_hang()", &xo, &r, &err) == 0
          || r.status != SECURER_EXEC_TIMEOUT)
        die (&err, "cmd_hang did not time out");
      securer_error_free (&err);
      securer_result_clear (&r);
      over[i] = now () - t0 - 0.2;
      exec_ok (s, "1");
      usable[i] = now () - t0 - 0.2;
    }
  securer_session_close (s);

  struct securer_pool_opts po = { .size = 2, .session = so };
  struct securer_pool *pool;
  if (securer_pool_new (&po, &pool, &err) < 0)
    die (&err, "pool");
  struct worker w[2] = { { pool, now () + 3.0, 0 }, { pool, now () + 3.0, 0 } };
  pthread_t th[2];
  double t0 = now ();
  for (int i = 0; i < 2; i++)
    pthread_create (&th[i], NULL, work, &w[i]);
  for (int i = 0; i < 2; i++)
    pthread_join (th[i], NULL);
  double el = now () - t0;
  securer_pool_close (pool);
  securer_tools_unref (tools);

  double mb = median (bare, COLD), mc = median (cold, COLD);
  printf ("| measurement | median | notes |\n|---|---|---|\n");
  printf ("| bare `R --vanilla --slave -e 1` | %.1f ms | %d runs |\n", mb * 1e3, COLD);
  printf ("| cold session: open + first `1` result | %.1f ms | %.2f x bare R |\n", mc * 1e3, mc / mb);
  printf ("| warm `execute(\"1+1\")` round trip | %.3f ms | %d runs |\n", median (warm, WARM) * 1e3, WARM);
  printf ("| one tool-call round trip | %.3f ms | %d x %d calls |\n", median (tool, TOOLREP) * 1e3, TOOLREP, TOOLN);
  printf ("| one tool-command call (`echo null`) | %.3f ms | %d x %d calls |\n", median (cmd, TOOLREP) * 1e3, TOOLREP, CMDN);
  printf ("| hanging tool command: timeout result after the 200 ms timeout | +%.1f ms | %d runs |\n", median (over, HANGREP) * 1e3, HANGREP);
  printf ("| ... and next result from the fresh R | +%.1f ms | %d runs |\n", median (usable, HANGREP) * 1e3, HANGREP);
  printf ("| pool of 2, 2 threads, `1+1` | %.0f executions/s | %.1f s |\n",
          (double) (w[0].done + w[1].done) / el, el);
  return 0;
}
