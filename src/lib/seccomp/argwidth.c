/* Which syscall arguments the kernel reads as 32-bit values.
 *
 * seccomp hands the filter every argument as a 64-bit register, but for an
 * argument declared int / unsigned int / pid_t / uid_t / umode_t ... the
 * kernel only looks at the low 32 bits.  A condition on such an argument
 * must therefore ignore the high bits, or "deny ioctl TIOCSTI" is bypassed
 * by TIOCSTI | 1ul << 32 (CVE-2019-10063 in flatpak).  The list follows the
 * kernel's SYSCALL_DEFINEn() signatures; an argument not listed is compared
 * on all 64 bits, which is exact for pointers, sizes and unsigned longs. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "seccomp/argwidth.h"

#define A(n) (1u << (n))

struct argwidth {
  const char *name;
  unsigned mask;
};

/* Sorted by name for bsearch. */
static const struct argwidth table[] = {
  { "accept", A (0) },
  { "accept4", A (0) | A (3) },
  { "access", A (1) },
  { "add_key", A (4) },
  { "bind", A (0) | A (2) },
  { "bpf", A (0) | A (2) },
  { "chmod", A (1) },
  { "chown", A (1) | A (2) },
  { "clock_getres", A (0) },
  { "clock_gettime", A (0) },
  { "clock_nanosleep", A (0) | A (1) },
  { "clock_settime", A (0) },
  { "close", A (0) },
  { "close_range", A (0) | A (1) | A (2) },
  { "connect", A (0) | A (2) },
  { "copy_file_range", A (0) | A (2) | A (5) },
  { "creat", A (1) },
  { "delete_module", A (1) },
  { "dup", A (0) },
  { "dup2", A (0) | A (1) },
  { "dup3", A (0) | A (1) | A (2) },
  { "epoll_create", A (0) },
  { "epoll_create1", A (0) },
  { "epoll_ctl", A (0) | A (1) | A (2) },
  { "epoll_pwait", A (0) | A (2) | A (3) },
  { "epoll_wait", A (0) | A (2) | A (3) },
  { "eventfd", A (0) },
  { "eventfd2", A (0) | A (1) },
  { "execveat", A (0) | A (4) },
  { "faccessat", A (0) | A (2) },
  { "faccessat2", A (0) | A (2) | A (3) },
  { "fallocate", A (0) | A (1) },
  { "fchdir", A (0) },
  { "fchmod", A (0) | A (1) },
  { "fchmodat", A (0) | A (2) },
  { "fchmodat2", A (0) | A (2) | A (3) },
  { "fchown", A (0) | A (1) | A (2) },
  { "fchownat", A (0) | A (2) | A (3) | A (4) },
  { "fcntl", A (0) | A (1) },
  { "fdatasync", A (0) },
  { "fgetxattr", A (0) },
  { "finit_module", A (0) | A (2) },
  { "flock", A (0) | A (1) },
  { "fsconfig", A (0) | A (1) | A (4) },
  { "fsetxattr", A (0) | A (4) },
  { "fsmount", A (0) | A (1) | A (2) },
  { "fsopen", A (1) },
  { "fspick", A (0) | A (2) },
  { "fstat", A (0) },
  { "fstatfs", A (0) },
  { "fsync", A (0) },
  { "ftruncate", A (0) },
  { "getdents", A (0) | A (2) },
  { "getdents64", A (0) | A (2) },
  { "getpeername", A (0) },
  { "getpgid", A (0) },
  { "getpriority", A (0) | A (1) },
  { "getrandom", A (2) },
  { "getrlimit", A (0) },
  { "getsid", A (0) },
  { "getsockname", A (0) },
  { "getsockopt", A (0) | A (1) | A (2) },
  { "inotify_add_watch", A (0) | A (2) },
  { "inotify_init1", A (0) },
  { "inotify_rm_watch", A (0) | A (1) },
  { "io_uring_enter", A (0) | A (1) | A (2) | A (3) },
  { "io_uring_register", A (0) | A (1) | A (3) },
  { "io_uring_setup", A (0) },
  { "ioctl", A (0) | A (1) },
  { "ioprio_get", A (0) | A (1) },
  { "ioprio_set", A (0) | A (1) | A (2) },
  { "kcmp", A (0) | A (1) | A (2) },
  { "keyctl", A (0) },
  { "kill", A (0) | A (1) },
  { "landlock_add_rule", A (0) | A (1) | A (3) },
  { "landlock_create_ruleset", A (2) },
  { "landlock_restrict_self", A (0) | A (1) },
  { "lchown", A (1) | A (2) },
  { "linkat", A (0) | A (2) | A (4) },
  { "listen", A (0) | A (1) },
  { "lseek", A (0) | A (2) },
  { "lsetxattr", A (4) },
  { "madvise", A (2) },
  { "memfd_create", A (1) },
  { "mkdir", A (1) },
  { "mkdirat", A (0) | A (2) },
  { "mknod", A (1) | A (2) },
  { "mknodat", A (0) | A (2) | A (3) },
  { "mlock2", A (2) },
  { "mlockall", A (0) },
  { "mount_setattr", A (0) | A (2) },
  { "move_mount", A (0) | A (2) | A (4) },
  { "msgget", A (0) | A (1) },
  { "msgrcv", A (0) | A (4) },
  { "msgsnd", A (0) | A (3) },
  { "msync", A (2) },
  { "newfstatat", A (0) | A (3) },
  { "open", A (1) | A (2) },
  { "open_tree", A (0) | A (2) },
  { "openat", A (0) | A (2) | A (3) },
  { "openat2", A (0) },
  { "perf_event_open", A (1) | A (2) | A (3) },
  { "personality", A (0) },
  { "pidfd_getfd", A (0) | A (1) | A (2) },
  { "pidfd_open", A (0) | A (1) },
  { "pidfd_send_signal", A (0) | A (1) | A (3) },
  { "pipe2", A (1) },
  { "pkey_alloc", A (0) | A (1) },
  { "pkey_free", A (0) },
  { "pkey_mprotect", A (3) },
  { "prctl", A (0) },
  { "pread64", A (0) },
  { "prlimit64", A (0) | A (1) },
  { "pwrite64", A (0) },
  { "quotactl", A (0) },
  { "read", A (0) },
  { "readlinkat", A (0) | A (3) },
  { "reboot", A (0) | A (1) | A (2) },
  { "recvfrom", A (0) | A (3) },
  { "recvmmsg", A (0) | A (2) | A (3) },
  { "recvmsg", A (0) | A (2) },
  { "renameat", A (0) | A (2) },
  { "renameat2", A (0) | A (2) | A (4) },
  { "rt_sigaction", A (0) },
  { "rt_sigprocmask", A (0) },
  { "rt_sigqueueinfo", A (0) | A (1) },
  { "rt_tgsigqueueinfo", A (0) | A (1) | A (2) },
  { "sched_getaffinity", A (0) | A (1) },
  { "sched_getscheduler", A (0) },
  { "sched_setaffinity", A (0) | A (1) },
  { "sched_setscheduler", A (0) | A (1) },
  { "seccomp", A (0) | A (1) },
  { "semctl", A (0) | A (1) | A (2) },
  { "semget", A (0) | A (1) | A (2) },
  { "sendfile", A (0) | A (1) },
  { "sendmmsg", A (0) | A (2) | A (3) },
  { "sendmsg", A (0) | A (2) },
  { "sendto", A (0) | A (3) | A (5) },
  { "setfsgid", A (0) },
  { "setfsuid", A (0) },
  { "setgid", A (0) },
  { "setgroups", A (0) },
  { "setns", A (0) | A (1) },
  { "setpgid", A (0) | A (1) },
  { "setpriority", A (0) | A (1) | A (2) },
  { "setregid", A (0) | A (1) },
  { "setresgid", A (0) | A (1) | A (2) },
  { "setresuid", A (0) | A (1) | A (2) },
  { "setreuid", A (0) | A (1) },
  { "setrlimit", A (0) },
  { "setsockopt", A (0) | A (1) | A (2) | A (4) },
  { "setuid", A (0) },
  { "setxattr", A (4) },
  { "shmat", A (0) | A (2) },
  { "shmctl", A (0) | A (1) },
  { "shmget", A (0) | A (2) },
  { "shutdown", A (0) | A (1) },
  { "signalfd4", A (0) | A (3) },
  { "socket", A (0) | A (1) | A (2) },
  { "socketpair", A (0) | A (1) | A (2) },
  { "splice", A (0) | A (2) | A (5) },
  { "statx", A (0) | A (2) | A (3) },
  { "symlinkat", A (1) },
  { "sync_file_range", A (0) | A (3) },
  { "syncfs", A (0) },
  { "tee", A (0) | A (1) | A (3) },
  { "tgkill", A (0) | A (1) | A (2) },
  { "timer_create", A (0) },
  { "timerfd_create", A (0) | A (1) },
  { "timerfd_settime", A (0) | A (1) },
  { "tkill", A (0) | A (1) },
  { "umount2", A (1) },
  { "unlinkat", A (0) | A (2) },
  { "utimensat", A (0) | A (3) },
  { "vmsplice", A (0) | A (3) },
  { "wait4", A (0) | A (2) },
  { "waitid", A (0) | A (1) | A (3) },
  { "write", A (0) },
};

static int
cmp (const void *key, const void *elem)
{
  return strcmp (key, ((const struct argwidth *) elem)->name);
}

unsigned
securer_syscall_args32 (const char *name)
{
  const struct argwidth *e = bsearch (name, table, sizeof table / sizeof table[0], sizeof table[0], cmp);
  return e ? e->mask : 0;
}

const char *
securer_syscall_args32_name (size_t i)
{
  return i < sizeof table / sizeof table[0] ? table[i].name : NULL;
}
