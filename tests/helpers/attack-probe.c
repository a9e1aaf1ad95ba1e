/* attack-probe: tries one attack from inside a sandbox and prints what the
 * kernel answered, so that a test can assert the exact denial.
 *
 * Output is one line per probe: "<name> = ok <value>" on success, or
 * "<name> = <ERRNAME>" when the call failed.  A probe the seccomp filter
 * kills prints nothing (the test sees SIGSYS in the exit status), which is
 * why each run tries one thing.
 *
 *   attack-probe SYSCALL        ptrace mount unshare-user bpf perf_event_open keyctl
 *                               userfaultfd io_uring_setup open_by_handle_at personality
 *   attack-probe tiocsti        TIOCSTI on fd 0
 *   attack-probe tiocsti-ctty   makes fd 0 the controlling terminal first
 *                               (so only a filter can still refuse TIOCSTI)
 *   attack-probe kill PID       kill(PID, SIGTERM)
 *   attack-probe pids           the pids visible in /proc
 *   attack-probe ids            real, effective and saved uid/gid
 *   attack-probe setuid0        setuid(0)
 *   attack-probe write PATH     open(PATH, O_WRONLY) and write one byte
 *   attack-probe read PATH      open(PATH, O_RDONLY) and read
 *   attack-probe exec PATH...   execv(PATH, ...) (prints only on failure)
 *   attack-probe getenv NAME    the variable's value, or "unset"
 *   attack-probe connect IP PORT       TCP connect
 *   attack-probe connect-abstract NAME connect to the abstract unix socket NAME
 *   attack-probe openmany N     opens /dev/null N times: "openmany = EMFILE after K"
 *   attack-probe fill KIND MIB [DIR]  uses MIB MiB of memory in 1 MiB steps, held until
 *                               the end: KIND heap (anonymous pages), memfd (8 MiB memfds),
 *                               shm (8 MiB SysV segments, attached), file (8 MiB files in
 *                               DIR); "fill = ok MIB" or "fill = ERRNO after K" (MiB)
 *   attack-probe forks N        forks N children that wait: "forks = ok N" or
 *                               "forks = ERRNO after K"
 *
 * Calls that reach past the sandbox (other tenants' page cache, KSM, the
 * host's writeback, line disciplines), each next to a harmless form of the
 * same call that must keep working; all of them are raw syscalls, so the
 * errno is the filter's or the kernel's, never libc's:
 *   attack-probe pagecache FILE  fadvise64 (NORMAL, WILLNEED, DONTNEED, NOREUSE,
 *                               DONTNEED with garbage above bit 31) and preadv2
 *                               (no flags, RWF_NOWAIT) on FILE opened read-only
 *   attack-probe nowait-write PATH  pwritev2 on PATH (created), no flags and RWF_NOWAIT
 *   attack-probe ksm            madvise MADV_MERGEABLE/UNMERGEABLE/DONTNEED,
 *                               process_madvise MADV_MERGEABLE on itself, prctl
 *                               PR_SET_MEMORY_MERGE, PR_SET_NAME and PR_GET_NAME
 *   attack-probe ldisc          TIOCGETD and TIOCSETD (N_TTY) on a new pty
 *   attack-probe sync PATH      sync, syncfs, fsync and fdatasync of PATH (created)
 *   attack-probe prctl OPTION [ARG2]  prctl(OPTION, ARG2, 0, 0, 0), numbers in any base
 */
#include <config.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/uio.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

/* Linux 6.4; older headers lack it. */
#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif

static int
report (const char *name, long r)
{
  if (r < 0)
    {
      const char *e = strerrorname_np (errno);
      printf ("%s = %s\n", name, e ? e : "E?");
    }
  else
    printf ("%s = ok %ld\n", name, r);
  fflush (stdout);
  return 0;
}

static long
try_syscall (const char *name)
{
  if (strcmp (name, "ptrace") == 0)
    return syscall (SYS_ptrace, PTRACE_ATTACH, 1, NULL, NULL);
  if (strcmp (name, "mount") == 0)
    return syscall (SYS_mount, "none", "/tmp", "tmpfs", 0UL, NULL);
  if (strcmp (name, "unshare-user") == 0)
    return syscall (SYS_unshare, CLONE_NEWUSER);
  if (strcmp (name, "bpf") == 0)
    {
      union bpf_attr a;
      memset (&a, 0, sizeof a);
      a.map_type = BPF_MAP_TYPE_ARRAY;
      a.key_size = 4;
      a.value_size = 4;
      a.max_entries = 1;
      return syscall (SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
    }
  if (strcmp (name, "perf_event_open") == 0)
    {
      struct perf_event_attr a;
      memset (&a, 0, sizeof a);
      a.size = sizeof a;
      a.type = PERF_TYPE_SOFTWARE;
      a.config = PERF_COUNT_SW_CPU_CLOCK;
      a.exclude_kernel = 1;
      a.exclude_hv = 1;
      return syscall (SYS_perf_event_open, &a, 0, -1, -1, 0UL);
    }
  if (strcmp (name, "keyctl") == 0)
    return syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1);
  if (strcmp (name, "userfaultfd") == 0)
    return syscall (SYS_userfaultfd, O_CLOEXEC);
  if (strcmp (name, "io_uring_setup") == 0)
    {
      struct io_uring_params prm;
      memset (&prm, 0, sizeof prm);
      return syscall (SYS_io_uring_setup, 1, &prm);
    }
  if (strcmp (name, "open_by_handle_at") == 0)
    {
      /* A handle for the root inode of most filesystems; the point is
       * whether the call is reachable, not whether the handle resolves. */
      struct {
        struct file_handle h;
        unsigned char bytes[8];
      } fh;
      memset (&fh, 0, sizeof fh);
      fh.h.handle_bytes = 8;
      fh.h.handle_type = 1;
      fh.bytes[0] = 2;
      return syscall (SYS_open_by_handle_at, AT_FDCWD, &fh.h, O_RDONLY);
    }
  if (strcmp (name, "personality") == 0)
    /* READ_IMPLIES_EXEC makes every readable mapping executable. */
    return syscall (SYS_personality, (unsigned long) (PER_LINUX | READ_IMPLIES_EXEC));
  errno = EINVAL;
  return -2;
}

/* One MiB more of `kind`; -1 with errno when refused. */
static int
fill_step (const char *kind, const char *dir, int i)
{
  enum { MIB = 1 << 20, PER = 8 };   /* MiB per memfd, segment or file */
  static int fd = -1;
  static char *seg;
  static char buf[MIB];
  memset (buf, 'x', sizeof buf);
  if (strcmp (kind, "heap") == 0)
    {
      char *p = mmap (NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED)
        return -1;
      memset (p, 'x', MIB);
      return 0;
    }
  if (strcmp (kind, "shm") == 0)
    {
      if (i % PER == 0)
        {
          int id = shmget (IPC_PRIVATE, (size_t) PER * MIB, IPC_CREAT | 0600);
          if (id < 0)
            return -1;
          seg = shmat (id, NULL, 0);
          if (seg == (void *) -1)
            return -1;
        }
      memset (seg + (size_t) (i % PER) * MIB, 'x', MIB);
      return 0;
    }
  if (i % PER == 0)
    {
      char name[4096];
      if (strcmp (kind, "memfd") == 0)
        fd = (int) syscall (SYS_memfd_create, "fill", 0x0001U | 0x0008U /* CLOEXEC|NOEXEC_SEAL */);
      else if (strcmp (kind, "file") == 0 && dir != NULL)
        {
          snprintf (name, sizeof name, "%s/fill-%d", dir, i / PER);
          fd = open (name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        }
      else
        {
          errno = EINVAL;
          return -1;
        }
      if (fd < 0)
        return -1;
    }
  return write (fd, buf, sizeof buf) == (ssize_t) sizeof buf ? 0 : -1;
}

/* "NAME = ERRNO after K": a repeated step failed on its K+1th try. */
static int
report_after (const char *name, int k)
{
  const char *e = strerrorname_np (errno);
  printf ("%s = %s after %d\n", name, e ? e : "E?", k);
  return 0;
}

static int
fill (const char *kind, int mib, const char *dir)
{
  for (int i = 0; i < mib; i++)
    if (fill_step (kind, dir, i) < 0)
      return report_after ("fill", i);
  printf ("fill = ok %d\n", mib);
  return 0;
}

static int
forks (int n)
{
  for (int k = 0; k < n; k++)
    {
      pid_t c = fork ();
      if (c == 0)
        {
          pause ();
          _exit (0);
        }
      if (c < 0)
        return report_after ("forks", k);
    }
  printf ("forks = ok %d\n", n);
  return 0;
}

/* posix_fadvise() and friends report through their return value, and
 * glibc's preadv2() falls back to preadv() on ENOSYS: the raw calls show
 * what the filter answered.  The advice values are x86_64's (s390x differs). */
static long
fadvise (int fd, long advice)
{
  return syscall (SYS_fadvise64, fd, 0L, 0L, advice);
}

static int
pagecache (const char *path)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return report ("open", -1);
  report ("fadvise-normal", fadvise (fd, POSIX_FADV_NORMAL));
  report ("fadvise-willneed", fadvise (fd, POSIX_FADV_WILLNEED));
  report ("fadvise-dontneed", fadvise (fd, POSIX_FADV_DONTNEED));
  report ("fadvise-noreuse", fadvise (fd, POSIX_FADV_NOREUSE));
  /* The kernel reads the advice as an int and ignores the upper half. */
  report ("fadvise-dontneed-hi", fadvise (fd, (long) (POSIX_FADV_DONTNEED | 1UL << 32)));
  char buf[64];
  struct iovec iov = { buf, sizeof buf };
  /* Through glibc's wrapper, so the flags sit where real callers put them;
   * it only falls back to preadv() on ENOSYS, which no rule here gives. */
  report ("preadv2", preadv2 (fd, &iov, 1, 0, 0));
  report ("preadv2-nowait", preadv2 (fd, &iov, 1, 0, RWF_NOWAIT));
  report ("preadv2-nowait-hipri", preadv2 (fd, &iov, 1, 0, RWF_NOWAIT | RWF_HIPRI));
  close (fd);
  return 0;
}

static int
nowait_write (const char *path)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return report ("open", -1);
  char buf[] = "x";
  struct iovec iov = { buf, 1 };
  report ("pwritev2", pwritev2 (fd, &iov, 1, 0, 0));
  report ("pwritev2-nowait", pwritev2 (fd, &iov, 1, 0, RWF_NOWAIT));
  close (fd);
  return 0;
}

static int
ksm (void)
{
  size_t len = 4 * (size_t) sysconf (_SC_PAGESIZE);
  char *p = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return report ("mmap", -1);
  memset (p, 'x', len);
  report ("madvise-mergeable", syscall (SYS_madvise, p, len, MADV_MERGEABLE));
  report ("madvise-unmergeable", syscall (SYS_madvise, p, len, MADV_UNMERGEABLE));
  report ("madvise-dontneed", syscall (SYS_madvise, p, len, MADV_DONTNEED));
  /* Since Linux 6.13 a process may give itself any advice this way. */
  int pfd = (int) syscall (SYS_pidfd_open, getpid (), 0);
  if (pfd < 0)
    report ("pidfd_open", -1);
  else
    {
      struct iovec iov = { p, len };
      report ("process_madvise-mergeable", syscall (SYS_process_madvise, pfd, &iov, 1UL, MADV_MERGEABLE, 0U));
      close (pfd);
    }
  report ("prctl-memory-merge", syscall (SYS_prctl, PR_SET_MEMORY_MERGE, 1L, 0L, 0L, 0L));
  report ("prctl-set-name", syscall (SYS_prctl, PR_SET_NAME, "probe", 0L, 0L, 0L));
  char name[16] = "";
  report ("prctl-get-name", syscall (SYS_prctl, PR_GET_NAME, name, 0L, 0L, 0L));
  printf ("name = %s\n", name);
  return 0;
}

static int
ldisc (void)
{
  int fd = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return report ("open", -1);
  int d = -1;
  report ("tiocgetd", syscall (SYS_ioctl, fd, TIOCGETD, &d));
  /* N_TTY, which the pty already has: the kernel changes nothing, so only a
   * filter can make this fail; any other number could load a module. */
  int n_tty = 0;
  report ("tiocsetd", syscall (SYS_ioctl, fd, TIOCSETD, &n_tty));
  close (fd);
  return 0;
}

static int
sync_probe (const char *path)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return report ("open", -1);
  if (write (fd, "x", 1) != 1)
    return report ("write", -1);
  report ("fsync", syscall (SYS_fsync, fd));
  report ("fdatasync", syscall (SYS_fdatasync, fd));
  report ("syncfs", syscall (SYS_syncfs, fd));
  report ("sync", syscall (SYS_sync));
  close (fd);
  return 0;
}

/* The probes are real attacks (mount over /tmp, ptrace pid 1): run on the
 * host as root they would succeed.  Refuse unless this process is in a
 * user namespace other than the initial one, whose uid map is the
 * identity over the whole range. */
static bool
inside_sandbox (void)
{
  FILE *f = fopen ("/proc/self/uid_map", "re");
  if (f == NULL)
    return errno == ENOENT || errno == EACCES;  /* no /proc here: not the host's view */
  unsigned long inner, outer, count;
  int n = fscanf (f, "%lu %lu %lu", &inner, &outer, &count);
  fclose (f);
  return !(n == 3 && inner == 0 && outer == 0 && count == 4294967295UL);
}

int
main (int argc, char **argv)
{
  if (!inside_sandbox ())
    {
      fprintf (stderr, "attack-probe: refusing to run outside a user namespace\n");
      return 3;
    }
  if (argc < 2)
    {
      fprintf (stderr, "usage: attack-probe PROBE [ARG]\n");
      return 2;
    }
  const char *p = argv[1];
  const char *arg = argc > 2 ? argv[2] : NULL;

  if (strcmp (p, "tiocsti") == 0)
    {
      char c = 'x';
      return report (p, ioctl (0, TIOCSTI, &c));
    }
  if (strcmp (p, "tiocsti-ctty") == 0)
    {
      report ("tiocsctty", ioctl (0, TIOCSCTTY, 0));
      char c = 'x';
      return report ("tiocsti", ioctl (0, TIOCSTI, &c));
    }
  if (strcmp (p, "kill") == 0 && arg)
    return report (p, kill ((pid_t) atoi (arg), SIGTERM));
  if (strcmp (p, "setuid0") == 0)
    return report (p, setuid (0));
  if (strcmp (p, "ids") == 0)
    {
      uid_t r, e, s;
      gid_t gr, ge, gs;
      getresuid (&r, &e, &s);
      getresgid (&gr, &ge, &gs);
      printf ("ids = uid %u %u %u gid %u %u %u\n", r, e, s, gr, ge, gs);
      return 0;
    }
  if (strcmp (p, "pids") == 0)
    {
      DIR *d = opendir ("/proc");
      if (d == NULL)
        return report (p, -1);
      printf ("pids =");
      struct dirent *de;
      while ((de = readdir (d)) != NULL)
        if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
          printf (" %s", de->d_name);
      printf ("\n");
      closedir (d);
      return 0;
    }
  if ((strcmp (p, "write") == 0 || strcmp (p, "read") == 0) && arg)
    {
      bool w = p[0] == 'w';
      int fd = open (arg, (w ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
      if (fd < 0)
        return report (p, -1);
      char c = '1';
      long r = w ? write (fd, &c, 1) : read (fd, &c, 1);
      close (fd);
      return report (p, r);
    }
  if (strcmp (p, "exec") == 0 && arg)
    {
      execv (arg, argv + 2);
      return report (p, -1);
    }
  if (strcmp (p, "connect") == 0 && arg && argc > 3)
    {
      int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (s < 0)
        return report ("socket", -1);
      struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (argv[3])) };
      if (inet_pton (AF_INET, arg, &a.sin_addr) != 1)
        return 2;
      return report (p, connect (s, (struct sockaddr *) &a, sizeof a));
    }
  if (strcmp (p, "connect-abstract") == 0 && arg)
    {
      int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (s < 0)
        return report ("socket", -1);
      struct sockaddr_un a = { .sun_family = AF_UNIX };
      size_t len = strlen (arg);
      if (len + 1 >= sizeof a.sun_path)
        return 2;
      memcpy (a.sun_path + 1, arg, len);
      return report (p, connect (s, (struct sockaddr *) &a,
                                 (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + len)));
    }
  if (strcmp (p, "openmany") == 0 && arg)
    {
      int n = atoi (arg), k = 0;
      for (; k < n; k++)
        if (open ("/dev/null", O_RDONLY) < 0)
          {
            const char *e = strerrorname_np (errno);
            printf ("openmany = %s after %d\n", e ? e : "E?", k);
            return 0;
          }
      printf ("openmany = ok %d\n", k);
      return 0;
    }
  if (strcmp (p, "fill") == 0 && arg && argc > 3)
    return fill (arg, atoi (argv[3]), argc > 4 ? argv[4] : NULL);
  if (strcmp (p, "forks") == 0 && arg)
    return forks (atoi (arg));
  if (strcmp (p, "pagecache") == 0 && arg)
    return pagecache (arg);
  if (strcmp (p, "nowait-write") == 0 && arg)
    return nowait_write (arg);
  if (strcmp (p, "ksm") == 0)
    return ksm ();
  if (strcmp (p, "ldisc") == 0)
    return ldisc ();
  if (strcmp (p, "sync") == 0 && arg)
    return sync_probe (arg);
  if (strcmp (p, "prctl") == 0 && arg)
    return report (p, syscall (SYS_prctl, strtol (arg, NULL, 0), argc > 3 ? strtol (argv[3], NULL, 0) : 0L,
                               0L, 0L, 0L));
  if (strcmp (p, "getenv") == 0 && arg)
    {
      const char *v = getenv (arg);
      printf ("getenv = %s\n", v ? v : "unset");
      return 0;
    }
  long r = try_syscall (p);
  if (r == -2)
    {
      fprintf (stderr, "attack-probe: unknown probe '%s'\n", p);
      return 2;
    }
  return report (p, r);
}
