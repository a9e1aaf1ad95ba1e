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
 *   tenant-probe proc-watch    reads every file of /proc but the processes'
 *                              directories, prints "ready", reads again once
 *                              a byte arrives on stdin, and prints
 *                              "changed=PATH" for each file whose content
 *                              differs, "files=N" (read both times), "done"
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* ---- proc-watch ------------------------------------------------------------ */

struct seen {
  char *path;        /* below /proc */
  uint64_t hash;     /* FNV-1a of the content; 0 with ok false */
  bool ok;           /* read to the end (or to the cap) without an error */
};

static struct seen *snap;
static size_t n_snap, cap_snap;

static void
on_alarm (int sig)
{
  (void) sig;
}

static uint64_t
fnv (uint64_t h, const char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char) p[i]) * 1099511628211ull;
  return h;
}

/* The content of /proc/PATH, hashed; cpuinfo without its "cpu MHz"
 * lines, which follow the host's frequency scaling and are kept on
 * purpose (docs/security.md).  Non-blocking, at most 1 MiB, and an alarm
 * in case a read blocks all the same: such a file is not compared. */
static bool
hash_file (int dir, const char *name, const char *path, uint64_t *out)
{
  static char buf[1 << 20];
  int fd = openat (dir, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;
  size_t len = 0;
  bool ok = true;
  alarm (2);
  while (len < sizeof buf)
    {
      ssize_t k = read (fd, buf + len, sizeof buf - len);
      if (k < 0)
        ok = false;
      if (k <= 0)
        break;
      len += (size_t) k;
    }
  alarm (0);
  close (fd);
  if (!ok)
    return false;
  uint64_t h = 14695981039346656037ull;
  bool cpuinfo = strcmp (path, "cpuinfo") == 0;
  for (size_t at = 0; at < len;)
    {
      const char *nl = memchr (buf + at, '\n', len - at);
      size_t n = nl != NULL ? (size_t) (nl - (buf + at)) + 1 : len - at;
      if (!(cpuinfo && n >= 7 && memcmp (buf + at, "cpu MHz", 7) == 0))
        h = fnv (h, buf + at, n);
      at += n;
    }
  *out = h;
  return true;
}

static bool
pid_entry (const char *name)
{
  if (strcmp (name, "self") == 0 || strcmp (name, "thread-self") == 0)
    return true;
  for (const char *c = name; *c; c++)
    if (*c < '0' || *c > '9')
      return false;
  return true;
}

/* Every regular file below dir (PATH below /proc), symlinks not followed:
 * net, mounts and the rest of the links lead into the processes' own. */
static void
walk (int dir, const char *path, int depth, struct seen **v, size_t *n, size_t *cap)
{
  DIR *d = fdopendir (dir);
  if (d == NULL)
    {
      close (dir);
      return;
    }
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0 || (depth == 0 && pid_entry (e->d_name)))
        continue;
      char sub[4096];
      snprintf (sub, sizeof sub, "%s%s%s", path, *path ? "/" : "", e->d_name);
      struct stat st;
      if (fstatat (dirfd (d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISDIR (st.st_mode) && depth < 16)
        {
          int fd = openat (dirfd (d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (fd >= 0)
            walk (fd, sub, depth + 1, v, n, cap);
          continue;
        }
      if (!S_ISREG (st.st_mode))
        continue;
      if (*n == *cap)
        {
          *cap = *cap ? *cap * 2 : 1024;
          *v = realloc (*v, *cap * sizeof **v);
          if (*v == NULL)
            exit (3);
        }
      struct seen *s = &(*v)[(*n)++];
      s->path = strdup (sub);
      s->ok = hash_file (dirfd (d), e->d_name, sub, &s->hash);
    }
  closedir (d);
}

static void
take (struct seen **v, size_t *n, size_t *cap)
{
  *n = 0;
  int fd = open ("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0)
    walk (fd, "", 0, v, n, cap);
}

static void
proc_watch (void)
{
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;   /* no SA_RESTART: a blocked read ends with EINTR */
  sigaction (SIGALRM, &sa, NULL);
  take (&snap, &n_snap, &cap_snap);
  printf ("ready\n");
  fflush (stdout);
  char b;
  if (read (0, &b, 1) != 1)
    exit (4);
  struct seen *again = NULL;
  size_t n_again = 0, cap_again = 0;
  take (&again, &n_again, &cap_again);
  long both = 0;
  /* Both walks mostly meet the files in the same order: the same index
   * first, then a search. */
  for (size_t i = 0; i < n_snap; i++)
    for (size_t j = 0; j < n_again; j++)
      {
        size_t k = (i + j) % n_again;
        if (strcmp (snap[i].path, again[k].path) != 0)
          continue;
        if (snap[i].ok && again[k].ok)
          {
            both++;
            if (snap[i].hash != again[k].hash)
              printf ("changed=%s\n", snap[i].path);
          }
        break;
      }
  printf ("files=%ld\ndone\n", both);
  fflush (stdout);
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
  if (strcmp (what, "proc-watch") == 0)
    {
      proc_watch ();
      char buf[64];
      while (read (0, buf, sizeof buf) > 0)
        ;
      return 0;
    }
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
