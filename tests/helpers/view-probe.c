/* view-probe — runs inside a sandbox and prints, for each PATH argument,
 * what the sandbox made of it, in the words of `securer policy test`:
 *
 *   PATH KIND EXEC
 *
 * KIND is absent (stat fails with ENOENT/ENOTDIR), masked (an empty file
 * or directory on a read-only tmpfs where something else was: what a
 * mask binds), writable (a file opens for writing; a directory takes a
 * new file, removed again) or read-only.  EXEC is, for a regular file,
 * allowed when execve gets past the permission checks (the child runs
 * with a 4 MiB address space and no stdio, so nothing it starts gets
 * far) or denied when it fails with EACCES; '-' otherwise.  Linked
 * statically so that any sandbox view can run it. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

static bool
empty_dir (const char *path)
{
  DIR *d = opendir (path);
  if (d == NULL)
    return false;
  struct dirent *e;
  bool empty = true;
  while (empty && (e = readdir (d)) != NULL)
    empty = strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0;
  closedir (d);
  return empty;
}

static bool
masked (const char *path, const struct stat *st)
{
  struct statfs sf;
  struct statvfs sv;
  if (statfs (path, &sf) < 0 || sf.f_type != TMPFS_MAGIC || statvfs (path, &sv) < 0 || !(sv.f_flag & ST_RDONLY))
    return false;
  if (S_ISDIR (st->st_mode))
    {
      /* An empty directory of the read-only root is no mask: a mask is
       * a mount of its own. */
      char parent[4096];
      snprintf (parent, sizeof parent, "%s/..", path);
      struct stat ps;
      return empty_dir (path) && stat (parent, &ps) == 0 && ps.st_dev != st->st_dev;
    }
  if (!S_ISREG (st->st_mode))
    return false;
  /* Empty when read: the size of a file bound over a proc entry is not
   * telling. */
  char c;
  int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  bool empty = fd >= 0 && read (fd, &c, 1) == 0;
  if (fd >= 0)
    close (fd);
  return empty;
}

static bool
writable (const char *path, const struct stat *st)
{
  if (!S_ISDIR (st->st_mode))
    {
      int fd = open (path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0)
        return false;
      close (fd);
      return true;
    }
  char probe[4096];
  snprintf (probe, sizeof probe, "%s/.view-probe-%d", path, (int) getpid ());
  int fd = open (probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  close (fd);
  unlink (probe);
  return true;
}

static const char *
exec_verdict (const char *path, const struct stat *st)
{
  /* Without an execute bit the file permissions refuse it, whatever the
   * policy says. */
  if (!S_ISREG (st->st_mode) || !(st->st_mode & 0111))
    return "-";
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return "?";
  pid_t pid = fork ();
  if (pid < 0)
    return "?";
  if (pid == 0)
    {
      int null = open ("/dev/null", O_RDWR);
      for (int fd = 0; fd < 3; fd++)
        dup2 (null >= 0 ? null : p[1], fd);
      struct rlimit as = { 4 << 20, 4 << 20 };
      setrlimit (RLIMIT_AS, &as);
      char *argv[] = { (char *) path, NULL };
      execv (path, argv);
      int e = errno;
      if (write (p[1], &e, sizeof e) < 0)
        _exit (126);
      _exit (127);
    }
  close (p[1]);
  int e = 0;
  ssize_t n = read (p[0], &e, sizeof e);
  close (p[0]);
  waitpid (pid, NULL, 0);
  /* Nothing read: the exec happened (the pipe closed on exec). */
  return n == (ssize_t) sizeof e && e == EACCES ? "denied" : "allowed";
}

int
main (int argc, char **argv)
{
  signal (SIGPIPE, SIG_IGN);
  for (int i = 1; i < argc; i++)
    {
      struct stat st;
      const char *kind, *exec = "-";
      if (stat (argv[i], &st) < 0)
        kind = errno == ENOENT || errno == ENOTDIR ? "absent" : "error";
      else
        {
          kind = masked (argv[i], &st) ? "masked" : writable (argv[i], &st) ? "writable" : "read-only";
          exec = exec_verdict (argv[i], &st);
        }
      printf ("%s %s %s\n", argv[i], kind, exec);
    }
  return 0;
}
