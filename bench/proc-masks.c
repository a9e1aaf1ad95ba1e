/* What hiding /proc entries by mounts costs, without the rest of a launch:
 * each round forks a child that makes a mount namespace, a tmpfs with an
 * empty read-only file and a new procfs, and binds the file over up to 27
 * host-wide entries of the procfs, as mount.c does for `mount proc`.
 *
 *   bench/proc-masks MODE ROUNDS
 *
 * MODE 0: a clone of the first mask (open_tree) attached with move_mount,
 * as the launcher did; 1: classic mount(MS_BIND) through /proc/self/fd
 * paths; 2: no masks (the namespace, tmpfs and procfs alone); 3: a bind of
 * the first mask by name with mount(MS_BIND), the working directory at the
 * procfs's root, as the launcher does now.  Prints the
 * mean time of the masks, and of the whole round including the child's
 * exit, when the kernel tears the namespace and its mounts down.  Needs
 * root (or CAP_SYS_ADMIN) and Linux 5.12 (mount_setattr). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const names[] = {
  "keys", "timer_list", "kallsyms", "kmsg", "kpagecount", "kpageflags", "kpagecgroup",
  "cmdline", "loadavg", "stat", "uptime", "interrupts", "softirqs", "diskstats", "vmstat",
  "zoneinfo", "buddyinfo", "swaps", "sys/fs/file-nr", "sys/fs/inode-nr", "sys/fs/inode-state",
  "sys/fs/dentry-state", "sys/fs/aio-nr", "sys/kernel/pty/nr", "locks", "cgroups", "key-users",
};
#define N_NAMES (sizeof names / sizeof *names)

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec * 1e3 + (double) t.tv_nsec / 1e6;
}

static void
die (const char *what)
{
  fprintf (stderr, "proc-masks: %s: %s\n", what, strerror (errno));
  _exit (1);
}

/* A new detached filesystem of `type`. */
static int
new_fs (const char *type)
{
  int fs = (int) syscall (SYS_fsopen, type, FSOPEN_CLOEXEC);
  if (fs < 0 || syscall (SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    die (type);
  int mnt = (int) syscall (SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
  if (mnt < 0)
    die ("fsmount");
  close (fs);
  return mnt;
}

static void
mask (int mode, int first, int proc, const char *name)
{
  if (mode == 3)
    {
      if (mount (names[0], name, NULL, MS_BIND, NULL) < 0 && errno != ENOENT)
        die (name);
      return;
    }
  if (mode == 0)
    {
      int t = (int) syscall (SYS_open_tree, first, "",
                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
      if (t < 0)
        die ("open_tree");
      if (syscall (SYS_move_mount, t, "", proc, name, MOVE_MOUNT_F_EMPTY_PATH) < 0 && errno != ENOENT)
        die (name);
      close (t);
      return;
    }
  int target = openat (proc, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0)
    return;
  char src[64], dst[64];
  snprintf (src, sizeof src, "/proc/self/fd/%d", first);
  snprintf (dst, sizeof dst, "/proc/self/fd/%d", target);
  if (mount (src, dst, NULL, MS_BIND, NULL) < 0)
    die (name);
  close (target);
}

/* The child of one round: returns the time its masks took. */
static double
round_child (int mode)
{
  if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    die ("mount namespace");
  int root = new_fs ("tmpfs");
  if (syscall (SYS_move_mount, root, "", AT_FDCWD, "/mnt", MOVE_MOUNT_F_EMPTY_PATH) < 0)
    die ("attach the tmpfs on /mnt");
  int empty = openat (root, "empty", O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
  if (empty < 0 || mkdirat (root, "proc", 0755) < 0)
    die ("tmpfs contents");
  close (empty);
  int proc = new_fs ("proc");
  if (syscall (SYS_move_mount, proc, "", root, "proc", MOVE_MOUNT_F_EMPTY_PATH) < 0)
    die ("attach proc");
  int first = (int) syscall (SYS_open_tree, root, "empty", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
  if (first < 0 || syscall (SYS_mount_setattr, first, "", AT_EMPTY_PATH, &a, sizeof a) < 0
      || syscall (SYS_move_mount, first, "", proc, names[0], MOVE_MOUNT_F_EMPTY_PATH) < 0)
    die ("first mask");
  if (mode == 3 && fchdir (proc) < 0)
    die ("chdir to the procfs");
  double t0 = now_ms ();
  for (size_t i = 1; mode != 2 && i < N_NAMES; i++)
    mask (mode, first, proc, names[i]);
  return now_ms () - t0;
}

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr, "usage: proc-masks MODE(0|1|2|3) ROUNDS\n");
      return 2;
    }
  int mode = atoi (argv[1]), rounds = atoi (argv[2]);
  double whole = 0, masks = 0;
  for (int r = 0; r < rounds; r++)
    {
      int p[2];
      if (pipe (p) < 0)
        die ("pipe");
      double t0 = now_ms ();
      pid_t pid = fork ();
      if (pid < 0)
        die ("fork");
      if (pid == 0)
        {
          double t = round_child (mode);
          _exit (write (p[1], &t, sizeof t) == (ssize_t) sizeof t ? 0 : 1);
        }
      close (p[1]);
      double t = 0;
      ssize_t n = read (p[0], &t, sizeof t);
      close (p[0]);
      int st;
      if (waitpid (pid, &st, 0) < 0 || !WIFEXITED (st) || WEXITSTATUS (st) != 0 || n != sizeof t)
        {
          fprintf (stderr, "proc-masks: round %d failed\n", r);
          return 1;
        }
      whole += now_ms () - t0;
      masks += t;
    }
  printf ("mode %d, %zu entries: masks %.3f ms, whole round with teardown %.3f ms (mean of %d)\n",
          mode, mode != 2 ? N_NAMES - 1 : (size_t) 0, masks / rounds, whole / rounds, rounds);
  return 0;
}
