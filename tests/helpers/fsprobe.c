/* fsprobe — runs inside a sandbox and reports, one "key=value" line per
 * command, what the filesystem, network and cgroup limits let it do.
 * Linked statically so that any sandbox view can run it.
 *
 *   statvfs PATH   mount flags of PATH: "ro,nosuid,nodev,noexec" (subset)
 *   mounts         every mount point in /proc/self/mountinfo
 *   write PATH     create PATH and write a byte: OK or the errno name
 *   fill PATH KIB  write KIB KiB into PATH: OK or the errno name
 *   exec PATH      run PATH: exit:N, signal:N or the execve errno name
 *   read PATH      bytes read from PATH ("0" or "data"), or the errno name
 *   cat PATH       the first line of PATH, or the errno name
 *   connect-lo     listen on 127.0.0.1 and connect to it: OK or errno name
 *   alloc MIB      allocate and touch MIB MiB ("alloc=done" if it survives)
 *   forks N        fork up to N sleeping children: "<made> <errno name>"
 */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *
ename (int e)
{
  const char *n = strerrorname_np (e);
  return n ? n : "E?";
}

static void
cmd_statvfs (const char *path)
{
  struct statvfs sv;
  if (statvfs (path, &sv) < 0)
    {
      printf ("statvfs:%s=%s\n", path, ename (errno));
      return;
    }
  printf ("statvfs:%s=%s%s%s%s\n", path, (sv.f_flag & ST_RDONLY) ? "ro," : "rw,",
          (sv.f_flag & ST_NOSUID) ? "nosuid," : "", (sv.f_flag & ST_NODEV) ? "nodev," : "",
          (sv.f_flag & ST_NOEXEC) ? "noexec," : "");
}

static void
cmd_mounts (void)
{
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  char line[2048], mp[1024];
  printf ("mounts=");
  while (f && fgets (line, sizeof line, f))
    if (sscanf (line, "%*s %*s %*s %*s %1023s", mp) == 1)
      printf ("%s ", mp);
  printf ("\n");
  if (f)
    fclose (f);
}

static int
fill (const char *path, long kib)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (fd < 0)
    return errno;
  char block[1024];
  memset (block, 'x', sizeof block);
  for (long i = 0; i < kib; i++)
    if (write (fd, block, sizeof block) != (ssize_t) sizeof block)
      {
        int e = errno;
        close (fd);
        return e;
      }
  close (fd);
  return 0;
}

static void
cmd_exec (const char *path)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return;
  pid_t pid = fork ();
  if (pid == 0)
    {
      char *argv[] = { (char *) path, NULL };
      char *envp[] = { NULL };
      execve (path, argv, envp);
      int e = errno;
      if (write (p[1], &e, sizeof e) < 0)
        _exit (126);
      _exit (127);
    }
  close (p[1]);
  int e = 0, st = 0;
  ssize_t n = read (p[0], &e, sizeof e);
  close (p[0]);
  waitpid (pid, &st, 0);
  if (n == (ssize_t) sizeof e)
    printf ("exec:%s=%s\n", path, ename (e));
  else if (WIFEXITED (st))
    printf ("exec:%s=exit:%d\n", path, WEXITSTATUS (st));
  else
    printf ("exec:%s=signal:%d\n", path, WTERMSIG (st));
}

static void
cmd_read (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      printf ("read:%s=%s\n", path, ename (errno));
      return;
    }
  char buf[4096];
  ssize_t n = read (fd, buf, sizeof buf);
  printf ("read:%s=%s\n", path, n < 0 ? ename (errno) : (n == 0 ? "0" : "data"));
  close (fd);
}

/* The first line of a file, as it reads (a short file: an id, a count). */
static void
cmd_cat (const char *path)
{
  FILE *f = fopen (path, "re");
  char line[256] = "";
  if (f == NULL)
    {
      printf ("cat:%s=%s\n", path, ename (errno));
      return;
    }
  if (fgets (line, sizeof line, f) == NULL)
    line[0] = '\0';
  fclose (f);
  line[strcspn (line, "\n")] = '\0';
  printf ("cat:%s=%s\n", path, line);
}

static void
cmd_connect_lo (void)
{
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = { .sin_family = AF_INET };
  inet_pton (AF_INET, "127.0.0.1", &a.sin_addr);
  socklen_t len = sizeof a;
  if (l < 0 || bind (l, (struct sockaddr *) &a, sizeof a) < 0 || listen (l, 1) < 0
      || getsockname (l, (struct sockaddr *) &a, &len) < 0)
    {
      printf ("connect-lo=%s\n", ename (errno));
      return;
    }
  int c = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int rc = connect (c, (struct sockaddr *) &a, sizeof a);
  printf ("connect-lo=%s\n", rc == 0 ? "OK" : ename (errno));
  close (c);
  close (l);
}

/* Kept reachable so that no compiler can drop the allocations as dead. */
char *volatile fsprobe_keep[1 << 16];

static void
cmd_alloc (long mib)
{
  fflush (stdout);
  char *volatile *keep = fsprobe_keep;
  for (long i = 0; i < mib && i < (1 << 16); i++)
    {
      char *b = malloc (1 << 20);
      if (b == NULL)
        {
          printf ("alloc=ENOMEM\n");
          return;
        }
      for (size_t j = 0; j < (1 << 20); j += 4096)
        ((volatile char *) b)[j] = 1;
      keep[i] = b;
    }
  printf ("alloc=done\n");
}

static void
cmd_forks (long n)
{
  long made = 0;
  int e = 0;
  fflush (stdout);
  for (; made < n; made++)
    {
      pid_t p = fork ();
      if (p < 0)
        {
          e = errno;
          break;
        }
      if (p == 0)
        {
          pause ();
          _exit (0);
        }
    }
  printf ("forks=%ld %s\n", made, e ? ename (e) : "none");
}

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++)
    {
      const char *c = argv[i];
      const char *a1 = i + 1 < argc ? argv[i + 1] : NULL;
      const char *a2 = i + 2 < argc ? argv[i + 2] : NULL;
      if (strcmp (c, "statvfs") == 0 && a1)
        cmd_statvfs (a1), i++;
      else if (strcmp (c, "mounts") == 0)
        cmd_mounts ();
      else if (strcmp (c, "write") == 0 && a1)
        {
          int e = fill (a1, 0);
          if (e == 0)
            {
              int fd = open (a1, O_WRONLY | O_CLOEXEC);
              e = fd < 0 ? errno : (write (fd, "x", 1) == 1 ? 0 : errno);
              if (fd >= 0)
                close (fd);
            }
          printf ("write:%s=%s\n", a1, e ? ename (e) : "OK");
          i++;
        }
      else if (strcmp (c, "fill") == 0 && a1 && a2)
        {
          int e = fill (a1, atol (a2));
          printf ("fill:%s=%s\n", a1, e ? ename (e) : "OK");
          i += 2;
        }
      else if (strcmp (c, "exec") == 0 && a1)
        cmd_exec (a1), i++;
      else if (strcmp (c, "read") == 0 && a1)
        cmd_read (a1), i++;
      else if (strcmp (c, "cat") == 0 && a1)
        cmd_cat (a1), i++;
      else if (strcmp (c, "connect-lo") == 0)
        cmd_connect_lo ();
      else if (strcmp (c, "alloc") == 0 && a1)
        cmd_alloc (atol (a1)), i++;
      else if (strcmp (c, "forks") == 0 && a1)
        cmd_forks (atol (a1)), i++;
      else
        {
          fprintf (stderr, "fsprobe: unknown command %s\n", c);
          return 2;
        }
    }
  return 0;
}
