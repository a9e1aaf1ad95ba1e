/* R under the Landlock rules of an exec allowlist, applied alone by
 * tests/helpers/ll-exec (no namespaces): what R needs to start (its binary,
 * the loader, a shell for utils) and what it can no longer run. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define R_BIN "/usr/lib/R/bin/exec/R"

static char tmp[64];

static void
setup (void)
{
  if (access (R_BIN, X_OK) != 0)
    cr_skip_test ("R is not installed (%s)", R_BIN);
  strcpy (tmp, "/tmp/securer-llr-XXXXXX");
  cr_assert_not_null (mkdtemp (tmp));
}

static void
teardown (void)
{
  if (tmp[0] == '\0')
    return;
  /* R's session temp dir is left behind when rm cannot run: remove it. */
  pid_t pid = fork ();
  if (pid == 0)
    {
      execl ("/bin/rm", "rm", "-rf", tmp, (char *) NULL);
      _exit (127);
    }
  waitpid (pid, NULL, 0);
}

struct result {
  int status;   /* exit code, or 128+signal */
  char out[16384];
  char err[16384];
};

static void
drain (int fd, char *buf, size_t cap, size_t *len)
{
  ssize_t n = read (fd, buf + *len, cap - 1 - *len);
  if (n > 0)
    *len += (size_t) n;
  buf[*len] = '\0';
}

/* Runs ll-exec with the R allowlist, `shell` deciding whether /bin/sh is in it. */
static void
run_r (bool shell, const char *code, struct result *res)
{
  char ll[512];
  snprintf (ll, sizeof ll, "%s/tests/helpers/ll-exec",
            getenv ("SECURER_BUILDDIR") ? getenv ("SECURER_BUILDDIR") : SECURER_ABS_BUILDDIR);
  const char *argv[32];
  int n = 0;
  argv[n++] = ll;
  argv[n++] = "-r"; argv[n++] = "/usr";
  argv[n++] = "-r"; argv[n++] = "/etc";
  argv[n++] = "-p"; argv[n++] = "/proc";
  argv[n++] = "-d"; argv[n++] = "/dev";
  argv[n++] = "-w"; argv[n++] = tmp;
  argv[n++] = "-x"; argv[n++] = R_BIN;
  argv[n++] = "-x"; argv[n++] = "/lib64/ld-linux-x86-64.so.2";
  if (shell)
    {
      argv[n++] = "-x";
      argv[n++] = "/bin/sh";
    }
  argv[n++] = "--";
  argv[n++] = R_BIN;
  argv[n++] = "--vanilla";
  argv[n++] = "--slave";
  argv[n++] = "-e";
  argv[n++] = code;
  argv[n] = NULL;

  int po[2], pe[2];
  cr_assert_eq (pipe (po), 0);
  cr_assert_eq (pipe (pe), 0);
  fflush (NULL);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      dup2 (po[1], 1);
      dup2 (pe[1], 2);
      close (po[0]);
      close (pe[0]);
      close (po[1]);
      close (pe[1]);
      int devnull = open ("/dev/null", O_RDONLY);
      dup2 (devnull, 0);
      char tmpdir[128];
      snprintf (tmpdir, sizeof tmpdir, "TMPDIR=%s", tmp);
      char *envp[] = { "R_HOME=/usr/lib/R", "LANG=C.UTF-8", "PATH=/usr/bin:/bin", tmpdir, NULL };
      execve (ll, (char **) argv, envp);
      _exit (127);
    }
  close (po[1]);
  close (pe[1]);
  size_t lo = 0, le = 0;
  res->out[0] = res->err[0] = '\0';
  struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
  int open_fds = 2;
  while (open_fds > 0)
    {
      if (poll (fds, 2, -1) < 0)
        break;
      for (int i = 0; i < 2; i++)
        if (fds[i].revents)
          {
            size_t before = i == 0 ? lo : le;
            if (i == 0)
              drain (po[0], res->out, sizeof res->out, &lo);
            else
              drain (pe[0], res->err, sizeof res->err, &le);
            if ((i == 0 ? lo : le) == before)
              {
                fds[i].fd = -1;
                open_fds--;
              }
          }
    }
  close (po[0]);
  close (pe[0]);
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  res->status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
}

TestSuite (landlock_r, .init = setup, .fini = teardown, .timeout = 120);

Test (landlock_r, utils_loads_with_the_shell_allowed)
{
  static struct result r;
  run_r (true, "cat(\"loaded:\", \"package:utils\" %in% search(), \"\\n\")", &r);
  cr_assert_eq (r.status, 0, "R failed: %s", r.err);
  cr_assert (strstr (r.out, "loaded: TRUE") != NULL, "out: %s err: %s", r.out, r.err);
}

Test (landlock_r, utils_fails_without_a_shell)
{
  static struct result r;
  run_r (false, "cat(\"loaded:\", \"package:utils\" %in% search(), \"\\n\")", &r);
  cr_assert (strstr (r.out, "loaded: FALSE") != NULL, "out: %s err: %s", r.out, r.err);
  cr_assert (strstr (r.err, "package \xe2\x80\x98utils\xe2\x80\x99 in options(\"defaultPackages\") "
                            "was not found")
               != NULL
               || strstr (r.err, "package 'utils' in options(\"defaultPackages\") was not found")
                    != NULL,
             "err: %s", r.err);
}

Test (landlock_r, programs_outside_the_list_cannot_run)
{
  static struct result r;
  run_r (true,
         "cat(\"id:\", system(\"id\"), \"\\n\");"
         "cat(\"python3:\", suppressWarnings(system2(\"python3\", \"-V\")), \"\\n\");"
         "cat(\"perl:\", system(\"perl -e 1\"), \"\\n\");"
         "cat(\"which:\", system(\"/usr/bin/which sh\"), \"\\n\");"
         "cat(\"builtin:\", system(\"echo hi >/dev/null\"), \"\\n\")",
         &r);
  cr_assert_eq (r.status, 0, "R failed: %s", r.err);
  cr_assert (strstr (r.out, "id: 126") != NULL, "out: %s", r.out);
  cr_assert (strstr (r.out, "python3: 126") != NULL, "out: %s", r.out);
  cr_assert (strstr (r.out, "perl: 126") != NULL, "out: %s", r.out);
  cr_assert (strstr (r.out, "which: 126") != NULL, "out: %s", r.out);
  cr_assert (strstr (r.out, "builtin: 0") != NULL, "out: %s", r.out);
  cr_assert (strstr (r.err, "sh: 1: id: Permission denied") != NULL, "err: %s", r.err);
  cr_assert (strstr (r.err, "sh: 1: python3: Permission denied") != NULL, "err: %s", r.err);
  cr_assert (strstr (r.err, "sh: 1: perl: Permission denied") != NULL, "err: %s", r.err);
}
