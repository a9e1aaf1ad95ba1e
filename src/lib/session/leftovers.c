/* Ending what an execution left running in the sandbox.  R stays (it holds
 * the session's state); everything else in its pid namespace (children of
 * R, orphans adopted by the sandbox's init, their descendants) is killed
 * once the execution has ended, so a background loop or a re-forking chain
 * cannot keep burning CPU after its execution returned.
 *
 * Where the sandbox has a pid namespace and its own proc, the host lists
 * that procfs (reached through init's root), which holds exactly the
 * sandbox's processes.  Otherwise the host sees the sandbox's processes as
 * the descendants of its init (a process cannot leave its pid namespace,
 * and orphans are re-parented to that init), so the host's /proc is
 * scanned for them.  Nothing inside the sandbox is trusted to do the job.  Each victim is signalled through a pidfd opened
 * before its parentage is checked again, so a pid recycled by an unrelated
 * host process between the scan and the kill is never hit.  Scans repeat
 * until one finds nothing: what forked while the previous round was killed
 * is found by the next. */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "session/internal.h"

#define MAX_ROUNDS 64
#define CLEANUP_MS 3000

struct proc {
  pid_t pid, ppid;
  char state;
  signed char in;            /* -1 unknown, 0 outside the sandbox, 1 inside */
};

/* State and parent from the stat file `name` under dirfd (AT_FDCWD for an
 * absolute path); the name field may hold anything, including ") ", so
 * parsing starts after its last ')'. */
/* Reads a small /proc file whole into buf (NUL-terminated); -1 when it
 * cannot be read or is empty (the process is gone). */
static int
read_small (int dirfd, const char *name, char *buf, size_t size)
{
  int fd = openat (dirfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, size - 1);
  close (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  return 0;
}

static int
stat_at (int dirfd, const char *name, pid_t *ppid, char *state)
{
  char buf[512];
  if (read_small (dirfd, name, buf, sizeof buf) < 0)
    return -1;
  char *rp = strrchr (buf, ')');
  int pp;
  char st;
  if (rp == NULL || sscanf (rp + 1, " %c %d", &st, &pp) != 2)
    return -1;
  *ppid = pp;
  *state = st;
  return 0;
}

static int
read_stat (pid_t pid, pid_t *ppid, char *state)
{
  char path[40];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  return stat_at (AT_FDCWD, path, ppid, state);
}

static int
cmp_pid (const void *a, const void *b)
{
  pid_t x = ((const struct proc *) a)->pid, y = ((const struct proc *) b)->pid;
  return (x > y) - (x < y);
}

static struct proc *
lookup (struct proc *v, size_t n, pid_t pid)
{
  struct proc key = { .pid = pid };
  return bsearch (&key, v, n, sizeof *v, cmp_pid);
}

/* Every process of the host, sorted by pid. */
static int
scan (struct proc **out, size_t *n_out, securer_err_t *err)
{
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return securer_error_set (err, errno, "leftover processes: /proc");
  struct proc *v = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (!isdigit ((unsigned char) de->d_name[0]))
        continue;
      struct proc p = { .pid = (pid_t) atoi (de->d_name), .in = -1 };
      if (read_stat (p.pid, &p.ppid, &p.state) < 0)
        continue;  /* gone meanwhile */
      if (n == cap)
        {
          size_t c = cap ? cap * 2 : 512;
          struct proc *q = realloc (v, c * sizeof *q);
          if (q == NULL)
            {
              free (v);
              closedir (d);
              return securer_error_set (err, ENOMEM, "leftover processes");
            }
          v = q;
          cap = c;
        }
      v[n++] = p;
    }
  closedir (d);
  qsort (v, n, sizeof *v, cmp_pid);
  *out = v;
  *n_out = n;
  return 0;
}

/* Whether p descends from init; memoised along the way.  The scan is not
 * atomic, so a recycled pid could make a loop: the walk is bounded. */
static bool
inside (struct proc *v, size_t n, struct proc *p, pid_t init)
{
  signed char in = 0;
  struct proc *q = p;
  for (int steps = 0; q != NULL && steps < 4096; steps++)
    {
      if (q->in >= 0)
        {
          in = q->in;
          break;
        }
      if (q->ppid == init)
        {
          in = 1;
          break;
        }
      if (q->ppid <= 1)
        break;
      q = lookup (v, n, q->ppid);
    }
  struct proc *r = p;
  for (int steps = 0; r != NULL && r != q && steps < 4096; steps++)
    {
      r->in = in;
      r = lookup (v, n, r->ppid);
    }
  if (q != NULL && q->in < 0)
    q->in = in;
  return in == 1;
}

/* Kills pid if it is still a child of one of the sandbox's processes. */
static int
kill_checked (struct proc *v, size_t n, pid_t pid, pid_t init, int *pidfd_out)
{
  int fd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (fd < 0)
    return errno == ESRCH ? 0 : -1;
  pid_t ppid;
  char st;
  struct proc *pp;
  if (read_stat (pid, &ppid, &st) < 0
      || (ppid != init && ((pp = lookup (v, n, ppid)) == NULL || pp->in != 1)))
    {
      close (fd);
      return 0;  /* exited, or the pid now names someone else */
    }
  if (syscall (SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) < 0)
    {
      int e = errno;
      close (fd);
      errno = e;
      return e == ESRCH ? 0 : -1;
    }
  *pidfd_out = fd;
  return 1;
}

/* Waits (bounded) until the killed processes have exited, so the next scan
 * does not find them still running. */
static void
wait_exits (int *fds, size_t n, uint64_t deadline)
{
  struct pollfd *p = calloc (n, sizeof *p);
  if (p == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    p[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
  size_t left = n;
  while (left > 0)
    {
      uint64_t now = securer_now_ns ();
      if (now >= deadline)
        break;
      int r = poll (p, n, (int) ((deadline - now) / 1000000u) + 1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      for (size_t i = 0; i < n; i++)
        if (p[i].fd >= 0 && p[i].revents)
          {
            p[i].fd = -1;  /* poll skips negative descriptors */
            left--;
          }
    }
  free (p);
}

/* ---- fast path: the sandbox's own procfs --------------------------------
 * With a pid namespace and proc mounted in the sandbox, that procfs lists
 * exactly the sandbox's processes: a few entries to read instead of every
 * process of the host.  /proc/PID directories of it are signalled directly
 * (pidfd_send_signal takes them like pidfds), so no pid is looked up twice. */

/* The last pid of the NSpid line: the pid as the sandbox itself sees it. */
static pid_t
inside_pid (pid_t host_pid)
{
  char path[40], buf[2048];
  snprintf (path, sizeof path, "/proc/%d/status", (int) host_pid);
  if (read_small (AT_FDCWD, path, buf, sizeof buf) < 0)
    return -1;
  char *l = strstr (buf, "\nNSpid:");
  if (l == NULL)
    return -1;
  l += 7;
  char *eol = strchr (l, '\n');
  if (eol != NULL)
    *eol = '\0';
  char *last = strrchr (l, '\t');
  return last != NULL ? (pid_t) atoi (last + 1) : -1;
}

/* The sandbox's procfs, only when it is a procfs of the sandbox's own pid
 * namespace: a policy may bind anything on /proc, the host's proc among
 * them, and killing by that list would hit host processes.  Its pid 1 must
 * be in the same pid namespace as init is. */
static int
open_sandbox_proc (pid_t init)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/root/proc", (int) init);
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct statfs sf;
  struct stat mine, theirs;
  snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) init);
  if (fstatfs (fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC || stat (path, &mine) < 0
      || fstatat (fd, "1/ns/pid", &theirs, 0) < 0 || mine.st_ino != theirs.st_ino
      || mine.st_dev != theirs.st_dev)
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* State letter of the process whose /proc directory is dirfd; 0 when it
 * is gone (a reaped process's directory reads nothing). */
static char
state_at (int dirfd)
{
  pid_t ppid;
  char state;
  return stat_at (dirfd, "stat", &ppid, &state) == 0 ? state : 0;
}

static bool
dead (char state)
{
  return state == 0 || state == 'Z' || state == 'X';
}

/* SIGKILL takes effect when a process next leaves the kernel: wait (bounded)
 * until each one killed is a zombie or gone, so the next round neither
 * counts it twice nor mistakes it for a new one. */
static void
wait_dead (const int *fds, size_t n, uint64_t deadline)
{
  long ns = 50 * 1000;
  for (size_t i = 0; i < n; i++)
    while (!dead (state_at (fds[i])) && securer_now_ns () < deadline)
      {
        struct timespec ts = { 0, ns };
        nanosleep (&ts, NULL);
        if (ns < 5 * 1000 * 1000)
          ns *= 2;
      }
}

/* 1: ended what was there (or nothing was); 0: this path cannot be used
 * here, try the host scan; -1: error. */
static int
end_via_sandbox_proc (pid_t payload, pid_t init, uint64_t deadline, unsigned *ended, securer_err_t *err)
{
  pid_t r_inside = inside_pid (payload);
  if (r_inside <= 1)
    return 0;
  int pfd = open_sandbox_proc (init);
  if (pfd < 0)
    return 0;
  DIR *d = fdopendir (pfd);
  if (d == NULL)
    {
      close (pfd);
      return 0;
    }
  int rc = -1;
  int *fds = NULL;
  size_t n_fds = 0, cap = 0;
  while (securer_now_ns () < deadline)
    {
      rewinddir (d);
      struct dirent *de;
      while ((de = readdir (d)) != NULL)
        {
          if (!isdigit ((unsigned char) de->d_name[0]))
            continue;
          pid_t pid = (pid_t) atoi (de->d_name);
          if (pid == 1 || pid == r_inside)
            continue;
          int fd = openat (pfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          if (fd < 0)
            continue;   /* gone meanwhile */
          /* A zombie waits for its parent; it uses no CPU. */
          if (dead (state_at (fd)))
            {
              close (fd);
              continue;
            }
          int e = syscall (SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) < 0 ? errno : 0;
          if (e == 0 && n_fds == cap)
            {
              size_t c = cap ? cap * 2 : 16;
              int *q = realloc (fds, c * sizeof *q);
              if (q == NULL)
                e = ENOMEM;
              else
                {
                  fds = q;
                  cap = c;
                }
            }
          if (e != 0)
            {
              close (fd);
              if (e == ESRCH)
                continue;
              securer_error_set (err, e, "leftover processes: kill pid %d (inside)", (int) pid);
              goto out;
            }
          fds[n_fds++] = fd;
        }
      if (n_fds == 0)
        {
          rc = 1;
          goto out;
        }
      wait_dead (fds, n_fds, deadline);
      *ended += (unsigned) n_fds;
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
      n_fds = 0;
    }
  securer_error_set (err, EAGAIN, "leftover processes: some were still running after %d ms of killing",
                     CLEANUP_MS);
out:
  for (size_t i = 0; i < n_fds; i++)
    close (fds[i]);
  free (fds);
  closedir (d);
  return rc;
}

int
securer_end_leftovers (pid_t payload, unsigned *ended, securer_err_t *err)
{
  *ended = 0;
  pid_t init;
  char st;
  if (read_stat (payload, &init, &st) < 0)
    return securer_error_set (err, ESRCH, "leftover processes: R (pid %d) is gone", (int) payload);
  uint64_t start = securer_now_ns ();
  int fast = end_via_sandbox_proc (payload, init, start + (uint64_t) CLEANUP_MS * 1000000u, ended, err);
  if (fast != 0)
    return fast < 0 ? -1 : 0;
  /* A process stuck in the kernel (D state) dies only when it leaves it:
   * the whole clean-up is bounded in time, and a failure is the caller's
   * cue to stop the sandbox. */
  uint64_t deadline = start + (uint64_t) CLEANUP_MS * 1000000u;
  for (int round = 0; round < MAX_ROUNDS && securer_now_ns () < deadline; round++)
    {
      struct proc *v = NULL;
      size_t n = 0;
      if (scan (&v, &n, err) < 0)
        return -1;
      int *fds = NULL;
      size_t n_fds = 0;
      int rc = 0;
      for (size_t i = 0; i < n && rc == 0; i++)
        {
          struct proc *p = &v[i];
          if (p->pid == payload || p->pid == init || p->state == 'Z' || p->state == 'X'
              || !inside (v, n, p, init))
            continue;
          if (fds == NULL && (fds = calloc (n, sizeof *fds)) == NULL)
            {
              rc = securer_error_set (err, ENOMEM, "leftover processes");
              break;
            }
          int r = kill_checked (v, n, p->pid, init, &fds[n_fds]);
          if (r < 0)
            rc = securer_error_set (err, errno, "leftover processes: kill pid %d", (int) p->pid);
          else if (r > 0)
            n_fds++;
        }
      free (v);
      if (n_fds > 0)
        wait_exits (fds, n_fds, deadline);
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
      free (fds);
      *ended += (unsigned) n_fds;
      if (rc < 0)
        return -1;
      if (n_fds == 0)
        return 0;
    }
  return securer_error_set (err, EAGAIN, "leftover processes: some were still running after %d ms "
                            "of killing", CLEANUP_MS);
}
