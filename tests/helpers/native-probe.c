/* native-probe: what native code inside a sandbox can and cannot do with
 * memory and programs (W^X), plus the per-user kernel counters a sandbox
 * must not drain.  Each probe prints one line, "<name> = ok [detail]" or
 * "<name> = <ERRNAME> [detail]", so a test can assert the exact denial.
 *
 *   native-probe PROBE...      runs the probes in order
 *
 * Refused when W^X holds (the errno depends on the layer that refuses):
 *   mmap-wx            anonymous PROT_READ|PROT_WRITE|PROT_EXEC
 *   mmap-wx-high       the same with bit 32 of prot set (the kernel ignores it)
 *   mmap-anon-x        anonymous private PROT_READ|PROT_EXEC
 *   mmap-shared-anon-x anonymous shared PROT_READ|PROT_EXEC
 *   mmap-file-wx       this program's own file, private, PROT_WRITE|PROT_EXEC
 *   mmap-devzero-x     /dev/zero, PROT_READ|PROT_EXEC
 *   mmap-tmp-x         a file written to $DIR (default /tmp), PROT_READ|PROT_EXEC:
 *                      mmap-tmp-x:/dev/shm for another directory
 *   mprotect-x         an anonymous page made PROT_READ|PROT_EXEC
 *   mprotect-rwx       an anonymous page made PROT_READ|PROT_WRITE|PROT_EXEC
 *   pkey_mprotect-x    the same through pkey_mprotect (pkey -1)
 *   shmat-x            a SysV segment attached with SHM_EXEC
 *   shmat-mprotect-x   a SysV segment attached read-write, then made executable
 *   memfd              memfd_create(MFD_CLOEXEC)
 *   memfd-noexec       memfd_create(MFD_NOEXEC_SEAL)
 *   execveat-empty     execveat(fd of this program, "", AT_EMPTY_PATH)
 *   exec-tmp           this program copied to /tmp, then execv
 *   proc-self-mem      open("/proc/self/mem", O_RDWR)
 *   inotify_init, inotify_init1
 * Allowed (positive controls):
 *   mmap-file-rx       this program's own file, private, PROT_READ|PROT_EXEC
 *   mmap-anon-rw       anonymous PROT_READ|PROT_WRITE
 *   mprotect-r         an anonymous read-write page made PROT_READ
 *   mprotect-drop-x    mmap-file-rx, then made PROT_READ
 *   shmat-rw           a SysV segment attached read-write
 *   dlopen:LIB         dlopen(LIB) and dlsym("pcre2_config_8"), called;
 *                      "dlopen = ok <value>" or "dlopen = EFAIL <dlerror>"
 * Counters:
 *   sigqueue           queues SIGRTMIN to itself until refused:
 *                      "sigqueue = EAGAIN after N"
 */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U
#endif
#ifndef SHM_EXEC
#define SHM_EXEC 0100000
#endif

static const char *self_path;

static void
report (const char *name, long r, const char *detail)
{
  if (r < 0)
    {
      const char *e = strerrorname_np (errno);
      printf ("%s = %s%s%s\n", name, e ? e : "E?", detail ? " " : "", detail ? detail : "");
    }
  else
    printf ("%s = ok%s%s\n", name, detail ? " " : "", detail ? detail : "");
  fflush (stdout);
}

/* mmap through the raw syscall, so that every bit of prot and flags
 * reaches the filter as given. */
static long
raw_mmap (unsigned long prot, unsigned long flags, int fd)
{
  long r = syscall (SYS_mmap, 0UL, 4096UL, prot, flags, (long) fd, 0L);
  if (r < 0)
    return -1;
  munmap ((void *) r, 4096);
  return 0;
}

static long
map_file (const char *path, unsigned long prot, int oflags)
{
  int fd = open (path, oflags | O_CLOEXEC);
  if (fd < 0)
    return -1;
  long r = raw_mmap (prot, MAP_PRIVATE, fd);
  int e = errno;
  close (fd);
  errno = e;
  return r;
}

static long
write_file (const char *path, const char *from)
{
  int in = open (from, O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return -1;
  int out = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (out < 0)
    {
      close (in);
      return -1;
    }
  char buf[65536];
  ssize_t n;
  long r = 0;
  while ((n = read (in, buf, sizeof buf)) > 0)
    if (write (out, buf, (size_t) n) != n)
      {
        r = -1;
        break;
      }
  int e = errno;
  close (in);
  close (out);
  errno = e;
  return n < 0 ? -1 : r;
}

/* An anonymous read-write page whose protection is then changed. */
static long
reprotect (unsigned long prot, int pkey)
{
  void *p = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return -1;
  long r = pkey == -2 ? mprotect (p, 4096, (int) prot)
                      : syscall (SYS_pkey_mprotect, p, 4096UL, prot, (long) pkey);
  int e = errno;
  munmap (p, 4096);
  errno = e;
  return r;
}

static long
shm_attach (int shmflg, unsigned long then_prot)
{
  int id = shmget (IPC_PRIVATE, 4096, IPC_CREAT | 0700);
  if (id < 0)
    return -1;
  void *p = shmat (id, NULL, shmflg);
  int e = errno;
  long r = p == (void *) -1 ? -1 : 0;
  if (r == 0 && then_prot)
    {
      r = mprotect (p, 4096, (int) then_prot);
      e = errno;
    }
  if (p != (void *) -1)
    shmdt (p);
  shmctl (id, IPC_RMID, NULL);
  errno = e;
  return r;
}

static void
probe_sigqueue (void)
{
  sigset_t set;
  sigemptyset (&set);
  sigaddset (&set, SIGRTMIN);
  sigprocmask (SIG_BLOCK, &set, NULL);
  union sigval v = { 0 };
  for (int n = 0; n < 1000000; n++)
    if (sigqueue (getpid (), SIGRTMIN, v) < 0)
      {
        const char *e = strerrorname_np (errno);
        printf ("sigqueue = %s after %d\n", e ? e : "E?", n);
        fflush (stdout);
        return;
      }
  printf ("sigqueue = ok 1000000\n");
  fflush (stdout);
}

static void
probe_dlopen (const char *lib)
{
  void *h = dlopen (lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    {
      const char *m = dlerror ();
      printf ("dlopen = EFAIL %s\n", m ? m : "?");
      fflush (stdout);
      return;
    }
  int (*config) (uint32_t, void *) = (int (*) (uint32_t, void *)) dlsym (h, "pcre2_config_8");
  if (config == NULL)
    {
      printf ("dlopen = EFAIL no pcre2_config_8\n");
      fflush (stdout);
      return;
    }
  uint32_t jit = 0;
  /* PCRE2_CONFIG_JIT (1): runs code mapped by the loader from the file. */
  int r = config (1, &jit);
  printf ("dlopen = ok %d\n", r);
  fflush (stdout);
}

static int
one (const char *p)
{
  if (strcmp (p, "mmap-wx") == 0)
    report (p, raw_mmap (PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1), NULL);
  else if (strcmp (p, "mmap-wx-high") == 0)
    report (p, raw_mmap ((1UL << 32) | PROT_READ | PROT_WRITE | PROT_EXEC,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1), NULL);
  else if (strcmp (p, "mmap-anon-x") == 0)
    report (p, raw_mmap (PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1), NULL);
  else if (strcmp (p, "mmap-shared-anon-x") == 0)
    report (p, raw_mmap (PROT_READ | PROT_EXEC, MAP_SHARED | MAP_ANONYMOUS, -1), NULL);
  else if (strcmp (p, "mmap-anon-rw") == 0)
    report (p, raw_mmap (PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1), NULL);
  else if (strcmp (p, "mmap-file-wx") == 0)
    report (p, map_file (self_path, PROT_READ | PROT_WRITE | PROT_EXEC, O_RDONLY), NULL);
  else if (strcmp (p, "mmap-file-rx") == 0)
    report (p, map_file (self_path, PROT_READ | PROT_EXEC, O_RDONLY), NULL);
  else if (strcmp (p, "mmap-devzero-x") == 0)
    report (p, map_file ("/dev/zero", PROT_READ | PROT_EXEC, O_RDWR), NULL);
  else if (strncmp (p, "mmap-tmp-x", 10) == 0)
    {
      char path[256];
      snprintf (path, sizeof path, "%s/native-probe-copy", p[10] == ':' ? p + 11 : "/tmp");
      if (write_file (path, self_path) < 0)
        report ("write", -1, path);
      else
        report ("mmap-tmp-x", map_file (path, PROT_READ | PROT_EXEC, O_RDONLY), path);
      unlink (path);
    }
  else if (strcmp (p, "mprotect-x") == 0)
    report (p, reprotect (PROT_READ | PROT_EXEC, -2), NULL);
  else if (strcmp (p, "mprotect-rwx") == 0)
    report (p, reprotect (PROT_READ | PROT_WRITE | PROT_EXEC, -2), NULL);
  else if (strcmp (p, "mprotect-r") == 0)
    report (p, reprotect (PROT_READ, -2), NULL);
  else if (strcmp (p, "pkey_mprotect-x") == 0)
    report (p, reprotect (PROT_READ | PROT_EXEC, -1), NULL);
  else if (strcmp (p, "mprotect-drop-x") == 0)
    {
      int fd = open (self_path, O_RDONLY | O_CLOEXEC);
      void *m = fd < 0 ? MAP_FAILED : mmap (NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
      if (m == MAP_FAILED)
        report ("mmap-file-rx", -1, NULL);
      else
        {
          report (p, mprotect (m, 4096, PROT_READ), NULL);
          munmap (m, 4096);
        }
      if (fd >= 0)
        close (fd);
    }
  else if (strcmp (p, "shmat-x") == 0)
    report (p, shm_attach (SHM_EXEC, 0), NULL);
  else if (strcmp (p, "shmat-rw") == 0)
    report (p, shm_attach (0, 0), NULL);
  else if (strcmp (p, "shmat-mprotect-x") == 0)
    report (p, shm_attach (0, PROT_READ | PROT_EXEC), NULL);
  else if (strcmp (p, "memfd") == 0)
    report (p, syscall (SYS_memfd_create, "probe", MFD_CLOEXEC), NULL);
  else if (strcmp (p, "memfd-noexec") == 0)
    report (p, syscall (SYS_memfd_create, "probe", MFD_CLOEXEC | MFD_NOEXEC_SEAL), NULL);
  else if (strcmp (p, "execveat-empty") == 0)
    {
      int fd = open (self_path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        report (p, -1, self_path);
      else
        {
          char *const argv[] = { (char *) "native-probe", (char *) "executed", NULL };
          char *const envp[] = { NULL };
          fflush (stdout);
          syscall (SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
          report (p, -1, NULL);
          close (fd);
        }
    }
  else if (strcmp (p, "exec-tmp") == 0)
    {
      const char *path = "/tmp/native-probe-exec";
      if (write_file (path, self_path) < 0)
        report ("write", -1, path);
      else
        {
          char *const argv[] = { (char *) "native-probe", (char *) "executed", NULL };
          fflush (stdout);
          execv (path, argv);
          report (p, -1, NULL);
          unlink (path);
        }
    }
  else if (strcmp (p, "executed") == 0)
    report (p, 0, NULL);
  else if (strcmp (p, "proc-self-mem") == 0)
    {
      int fd = open ("/proc/self/mem", O_RDWR | O_CLOEXEC);
      report (p, fd, NULL);
      if (fd >= 0)
        close (fd);
    }
  else if (strcmp (p, "inotify_init") == 0)
    report (p, syscall (SYS_inotify_init), NULL);
  else if (strcmp (p, "inotify_init1") == 0)
    report (p, syscall (SYS_inotify_init1, IN_CLOEXEC), NULL);
  else if (strcmp (p, "sigqueue") == 0)
    probe_sigqueue ();
  else if (strncmp (p, "dlopen:", 7) == 0)
    probe_dlopen (p + 7);
  else
    {
      fprintf (stderr, "native-probe: unknown probe '%s'\n", p);
      return 2;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      fprintf (stderr, "usage: native-probe PROBE...\n");
      return 2;
    }
  /* The path this program was started from: its own file on a read-only,
   * executable mount. */
  static char self[4096];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    {
      perror ("native-probe: /proc/self/exe");
      return 2;
    }
  self[n] = '\0';
  self_path = self;
  for (int i = 1; i < argc; i++)
    if (one (argv[i]) != 0)
      return 2;
  return 0;
}
