/* template-prog: a session template's program without R, for tests.  It
 * loads the template module from fd 4 and forks a session per request,
 * as the R template does; each session reads command lines from its
 * channel (fd 0) and answers each on it, until EOF (exit 0):
 *
 *   id           "uid=U gid=G pid=P init=<pid 1's argv[0]> procs=N"
 *   exit N       exits with status N
 *   sleep        waits until killed
 *   mount        mount(2), which the r policy kills (a named denial)
 *   tmp NAME     creates /tmp/NAME, answers what /tmp holds
 *   touch PATH   creates PATH ("touched" or the error)
 *   ls DIR       DIR's entries, "." and ".." left out
 *   cat FILE     FILE's first line
 *   pty          opens /dev/ptmx and keeps it: "opened" or the errno's name
 *
 * `template-prog fail` exits with status 3 before it loads the module.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void
answer (const char *text)
{
  dprintf (0, "%s\n", text);
}

static int
count_procs (void)
{
  DIR *d = opendir ("/proc");
  int n = 0;
  struct dirent *e;
  while (d != NULL && (e = readdir (d)) != NULL)
    n += e->d_name[0] >= '1' && e->d_name[0] <= '9';
  if (d != NULL)
    closedir (d);
  return n;
}

/* One line from the channel, without its newline; false at EOF. */
static int
read_line (char *line, size_t cap)
{
  size_t len = 0;
  while (len + 1 < cap)
    {
      ssize_t n = read (0, line + len, 1);
      if (n <= 0)
        return 0;
      if (line[len] == '\n')
        break;
      len++;
    }
  line[len] = '\0';
  return 1;
}

static void
command (const char *line)
{
  char buf[512];
  if (strcmp (line, "id") == 0)
    {
      char init[64] = "";
      int fd = open ("/proc/1/cmdline", O_RDONLY);
      if (fd >= 0)
        {
          ssize_t m = read (fd, init, sizeof init - 1);
          init[m > 0 ? m : 0] = '\0';
          close (fd);
        }
      snprintf (buf, sizeof buf, "uid=%u gid=%u pid=%d init=%s procs=%d", (unsigned) getuid (), (unsigned) getgid (),
                (int) getpid (), init, count_procs ());
      answer (buf);
    }
  else if (strncmp (line, "exit ", 5) == 0)
    _exit (atoi (line + 5));
  else if (strcmp (line, "sleep") == 0)
    {
      answer ("sleeping");
      for (;;)
        pause ();
    }
  else if (strcmp (line, "mount") == 0)
    {
      answer ("mounting");
      syscall (SYS_mount, "none", "/tmp", "tmpfs", 0L, NULL);
      answer ("mount returned");
    }
  else if (strncmp (line, "tmp ", 4) == 0)
    {
      char path[300];
      snprintf (path, sizeof path, "/tmp/%s", line + 4);
      int fd = open (path, O_WRONLY | O_CREAT | O_EXCL, 0600);
      if (fd >= 0)
        close (fd);
      size_t len = 0;
      DIR *d = opendir ("/tmp");
      struct dirent *e;
      buf[0] = '\0';
      while (d != NULL && (e = readdir (d)) != NULL)
        if (e->d_name[0] != '.')
          len += (size_t) snprintf (buf + len, len < sizeof buf ? sizeof buf - len : 0, "%s ", e->d_name);
      if (d != NULL)
        closedir (d);
      answer (buf);
    }
  else if (strncmp (line, "touch ", 6) == 0)
    {
      int fd = open (line + 6, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      answer (fd >= 0 ? "touched" : strerror (errno));
      if (fd >= 0)
        close (fd);
    }
  else if (strncmp (line, "ls ", 3) == 0)
    {
      /* Entries of a directory, "." and ".." left out, in readdir order. */
      size_t len = 0;
      DIR *d = opendir (line + 3);
      struct dirent *e;
      buf[0] = '\0';
      while (d != NULL && (e = readdir (d)) != NULL)
        if (strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0 && len < sizeof buf)
          len += (size_t) snprintf (buf + len, sizeof buf - len, "%s ", e->d_name);
      if (d != NULL)
        closedir (d);
      answer (d != NULL ? buf : strerror (errno));
    }
  else if (strncmp (line, "cat ", 4) == 0)
    {
      int fd = open (line + 4, O_RDONLY | O_CLOEXEC);
      ssize_t m = fd >= 0 ? read (fd, buf, 200) : -1;
      buf[m > 0 ? m : 0] = '\0';
      buf[strcspn (buf, "\n")] = '\0';
      answer (fd >= 0 ? buf : strerror (errno));
      if (fd >= 0)
        close (fd);
    }
  else if (strcmp (line, "pty") == 0)
    {
      int fd = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
      const char *e = fd < 0 ? strerrorname_np (errno) : NULL;
      answer (fd >= 0 ? "opened" : e != NULL ? e : "E?");
    }
  else
    answer ("unknown command");
}

static void
session (void)
{
  char line[256];
  while (read_line (line, sizeof line))
    command (line);
  _exit (0);
}

int
main (int argc, char **argv)
{
  /* A template that fails before it is ready. */
  if (argc > 1 && strcmp (argv[1], "fail") == 0)
    return 3;
  void *h = dlopen ("/proc/self/fd/4", RTLD_NOW);
  void (*serve) (int *) = h ? (void (*) (int *)) dlsym (h, "securer_zygote_r_serve") : NULL;
  if (serve == NULL)
    {
      fprintf (stderr, "template-prog: %s\n", dlerror ());
      return 2;
    }
  for (;;)
    {
      int r = 0;
      serve (&r);
      if (r != 1)
        return 0;
      session ();
    }
}
