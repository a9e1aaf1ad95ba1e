/* tenant-probe: uses up a per-user kernel counter from inside a sandbox and
 * holds it, so that a test can check that another sandbox, or the host, is
 * not affected.
 *
 *   tenant-probe inotify N     creates up to N inotify instances
 *   tenant-probe inflight N    puts up to N descriptors in flight on a unix
 *                              socket (sent, never received)
 *   tenant-probe sigqueue N    queues up to N real-time signals to itself
 *   tenant-probe pipes N       makes up to N pipes of 1 MiB each, then reports
 *                              the size of a fresh pipe ("pipe_size=")
 *   tenant-probe ptys N        opens /dev/ptmx up to N times, keeping each
 *                              pty, then lists /dev/pts ("pts=" names)
 *   tenant-probe ids           prints its real uid and gid as seen inside
 *
 * Prints "NAME=K" (how many succeeded), "NAME_err=ERRNAME" when one failed,
 * then "ready", and waits until its stdin reaches end-of-file (or is
 * killed).  A test reads up to "ready", does its checks, then ends it. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>

static void
result (const char *name, long ok, int err)
{
  printf ("%s=%ld\n", name, ok);
  if (err != 0)
    {
      const char *e = strerrorname_np (err);
      printf ("%s_err=%s\n", name, e ? e : "E?");
    }
}

static long
do_inotify (long n, int *err)
{
  long k = 0;
  for (; k < n; k++)
    if (inotify_init1 (IN_CLOEXEC) < 0)
      {
        *err = errno;
        break;
      }
  return k;
}

/* One fd sent many times per message: each copy counts as one in flight. */
static long
do_inflight (long n, int *err)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
    {
      *err = errno;
      return 0;
    }
  enum { PER_MSG = 250 };
  int fds[PER_MSG];
  for (int i = 0; i < PER_MSG; i++)
    fds[i] = sv[1];
  long k = 0;
  while (k < n)
    {
      int m = n - k < PER_MSG ? (int) (n - k) : PER_MSG;
      char byte = 'x';
      struct iovec iov = { &byte, 1 };
      union {
        char buf[CMSG_SPACE (sizeof fds)];
        struct cmsghdr align;
      } u;
      memset (&u, 0, sizeof u);
      struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                           .msg_controllen = CMSG_SPACE (sizeof (int) * (size_t) m) };
      struct cmsghdr *c = CMSG_FIRSTHDR (&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int) * (size_t) m);
      memcpy (CMSG_DATA (c), fds, sizeof (int) * (size_t) m);
      if (sendmsg (sv[0], &mh, MSG_DONTWAIT) < 0)
        {
          *err = errno;
          break;
        }
      k += m;
    }
  return k;
}

static long
do_sigqueue (long n, int *err)
{
  sigset_t s;
  sigemptyset (&s);
  sigaddset (&s, SIGRTMIN);
  sigprocmask (SIG_BLOCK, &s, NULL);
  long k = 0;
  union sigval v = { 0 };
  for (; k < n; k++)
    if (sigqueue (getpid (), SIGRTMIN, v) < 0)
      {
        *err = errno;
        break;
      }
  return k;
}

/* Pipe buffers are counted per user: past pipe-user-pages-soft, every new
 * pipe of that user gets two pages instead of sixteen. */
static long
do_pipes (long n, int *err)
{
  long k = 0;
  for (; k < n; k++)
    {
      int p[2];
      if (pipe2 (p, O_CLOEXEC) < 0 || fcntl (p[0], F_SETPIPE_SZ, 1 << 20) < 0)
        {
          *err = errno;
          break;
        }
    }
  int p[2];
  if (pipe2 (p, O_CLOEXEC) == 0)
    printf ("pipe_size=%d\n", fcntl (p[0], F_GETPIPE_SZ));
  return k;
}

static long
do_ptys (long n, int *err)
{
  long k = 0;
  for (; k < n; k++)
    if (open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC) < 0)
      {
        *err = errno;
        break;
      }
  /* "pts=none" without a /dev/pts; ptmx is listed wherever there is one. */
  DIR *d = opendir ("/dev/pts");
  printf ("pts=%s", d == NULL ? "none" : "");
  struct dirent *e;
  while (d != NULL && (e = readdir (d)) != NULL)
    if (e->d_name[0] != '.')
      printf ("%s ", e->d_name);
  printf ("\n");
  if (d != NULL)
    closedir (d);
  return k;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    return 2;
  const char *what = argv[1];
  long n = argc > 2 ? strtol (argv[2], NULL, 10) : 0;
  static const struct {
    const char *name;
    long (*fn) (long, int *);
  } probes[] = { { "inotify", do_inotify }, { "inflight", do_inflight }, { "sigqueue", do_sigqueue },
                 { "pipes", do_pipes }, { "ptys", do_ptys } };
  bool known = strcmp (what, "ids") == 0;
  if (known)
    printf ("uid=%u\ngid=%u\n", (unsigned) getuid (), (unsigned) getgid ());
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
    if (strcmp (what, probes[i].name) == 0)
      {
        int err = 0;
        long k = probes[i].fn (n, &err);
        result (what, k, err);
        known = true;
      }
  if (!known)
    return 2;
  printf ("ready\n");
  fflush (stdout);
  char buf[64];
  while (read (0, buf, sizeof buf) > 0)
    ;
  return 0;
}
