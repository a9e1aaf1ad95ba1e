/* Running the securer CLI from a test as a user runs it: its exit status
 * and everything it wrote to standard output and standard error. */
#ifndef SECURER_TEST_CLI_UTIL_H
#define SECURER_TEST_CLI_UTIL_H

#include "run-util.h"

struct cli_run {
  int status;      /* exit status, or 1000 + signal */
  char *out, *err;
};

UTIL const char *
cli_securer_bin (void)
{
  const char *b = getenv ("SECURER_BIN");
  return b ? b : SECURER_ABS_BUILDDIR "/securer";
}

UTIL const char *
cli_srcdir (void)
{
  const char *s = getenv ("SECURER_SRCDIR");
  return s ? s : SECURER_ABS_SRCDIR;
}

/* dir/NAME.policy: the shipped minimal policy with tests/helpers mounted
 * (so the probe runs), then extra on the lines from 3 on.  malloc'd. */
UTIL char *
cli_probe_policy (const char *dir, const char *name, const char *extra)
{
  char *path = NULL, *h = helpers_dir ();
  cr_assert (asprintf (&path, "%s/%s.policy", dir, name) > 0);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fprintf (f, "include \"%s/policies/minimal.policy\"\nmount ro %s\n%s\n", cli_srcdir (), h, extra ? extra : "");
  fclose (f);
  free (h);
  return path;
}

/* Removes the files a test wrote into dir (no subdirectories), then dir. */
UTIL void
cli_remove_dir (const char *dir)
{
  DIR *d = opendir (dir);
  struct dirent *e;
  while (d && (e = readdir (d)) != NULL)
    if (e->d_name[0] != '.')
      {
        char p[512];
        snprintf (p, sizeof p, "%s/%s", dir, e->d_name);
        unlink (p);
      }
  if (d)
    closedir (d);
  rmdir (dir);
}

/* securer's argv: its path, then args (NULL-terminated, without argv[0]). */
UTIL char **
cli_argv (char **args)
{
  size_t n = 0;
  while (args[n])
    n++;
  char **argv = calloc (n + 2, sizeof *argv);
  cr_assert_not_null (argv);
  argv[0] = (char *) cli_securer_bin ();
  memcpy (argv + 1, args, n * sizeof *argv);
  return argv;
}

/* Runs securer with args; extra_fd, when >= 0, becomes its fd 3, and
 * ignore_sig (when not 0) starts ignored, as a caller may leave it. */
UTIL void
cli_run_with (char **args, int extra_fd, int ignore_sig, struct cli_run *r)
{
  int o[2], e[2];
  cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (e, O_CLOEXEC), 0);
  char **argv = cli_argv (args);
  pid_t c = fork ();
  cr_assert_geq (c, 0);
  if (c == 0)
    {
      dup2 (o[1], 1);
      dup2 (e[1], 2);
      if (extra_fd >= 0)
        dup2 (extra_fd, 3);
      if (ignore_sig != 0)
        signal (ignore_sig, SIG_IGN);
      execv (argv[0], argv);
      _exit (99);
    }
  free (argv);
  close (o[1]);
  close (e[1]);
  r->out = read_all (o[0]);
  r->err = read_all (e[0]);
  close (o[0]);
  close (e[0]);
  int st;
  cr_assert_eq (waitpid (c, &st, 0), c);
  r->status = WIFEXITED (st) ? WEXITSTATUS (st) : 1000 + WTERMSIG (st);
}

UTIL void
cli_run (char **args, struct cli_run *r)
{
  cli_run_with (args, -1, 0, r);
}

UTIL void
cli_run_clear (struct cli_run *r)
{
  free (r->out);
  free (r->err);
}

#endif
