/* The sandbox's first process (pid 1 of its pid namespace): takes the
 * sandbox's ids and cgroup, forks the payload (which builds the sandbox's
 * view: securer_init_build_view), makes the network and IPC namespaces,
 * then executes securer-init (src/init/), the small init that reaps
 * orphans, forwards signals and reports how the payload ended.  When it
 * exits the kernel kills everything left inside. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch.h"
#include "raw-syscall.h"

static __attribute__ ((noreturn)) void
fail (struct launch_plan *lp, securer_err_t *err)
{
  sync_send_error (lp->setup_sock, SECURER_EXIT_SETUP, *err);
  _exit (SECURER_EXIT_SETUP);
}

/* PR_SET_PDEATHSIG is cleared by uid changes, so it is (re)armed after
 * them; then the parent must still be there, or the signal came too late.
 * getppid() says nothing across a pid namespace, so ask the socket. */
static bool
parent_alive (int sock)
{
  /* Data may be waiting (the seccomp program, sent right after GO), so
   * the peer's hang-up is asked for, not the absence of data. */
  struct pollfd pfd = { sock, POLLRDHUP, 0 };
  int n;
  do
    n = poll (&pfd, 1, 0);
  while (n < 0 && errno == EINTR);
  return n == 0 || (n == 1 && !(pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)));
}

static pid_t fork_payload (struct launch_plan *lp, int gate[2]);
static pid_t fork_payload_sharing (struct launch_plan *lp, int gate[2], pid_t self);

static void
step (struct launch_plan *lp, const char *what)
{
  if (lp->verbose)
    securer_linux_child_log ("%s", what);
}

/* Replaces this process, a copy of the caller, by securer-init: from here on
 * pid 1 holds a fixed argv, an empty environment, the status socket on fd 3,
 * the payload's gate on fd 4 and, with a leased host id, the lease's lock on
 * fd 5, and nothing else of the caller.  Its system calls leave errno alone
 * (raw-syscall.h): the payload may share this process's memory. */
static __attribute__ ((noreturn)) void
exec_init (struct launch_plan *lp, pid_t payload, int gate_w)
{
  securer_err_t err = NULL;
  step (lp, "become securer-init");
  /* Lifted above 4 first, so placing fds 3 and 4 cannot clobber them. */
  long status = SECURER_SYS3 (SYS_fcntl, lp->status_sock, F_DUPFD_CLOEXEC, 10);
  long gate = SECURER_SYS3 (SYS_fcntl, gate_w, F_DUPFD_CLOEXEC, 10);
  long setup = SECURER_SYS3 (SYS_fcntl, lp->setup_sock, F_DUPFD_CLOEXEC, 10);
  long prog = SECURER_SYS3 (SYS_fcntl, lp->init_fd, F_DUPFD_CLOEXEC, 10);
  long lease = lp->lease_fd >= 0 ? SECURER_SYS3 (SYS_fcntl, lp->lease_fd, F_DUPFD_CLOEXEC, 10) : 0;
  long bad = status < 0 ? status : gate < 0 ? gate : setup < 0 ? setup : prog < 0 ? prog : lease;
  if (bad < 0)
    {
      securer_error_set (&err, (int) -bad, "securer-init: move descriptors");
      fail (lp, &err);
    }
  lp->setup_sock = (int) setup;
  /* The lease is one open file description, locked by the launcher; its
   * lock goes with its last descriptor.  Held here, it outlasts whatever
   * the launcher does after the report (securer run returns then): the
   * last close happens in pid 1's exit, and the kernel finishes that close
   * (task work) only after the exit has let go of the sandbox's root and
   * namespaces, so no sandbox given the same id meanwhile can reach them
   * (docs/security.md, "Host ids and the sandbox's last moments").
   * dup3 rather than dup2, which aarch64 lacks: the sources were lifted
   * above 9, so they never equal their targets. */
  bad = SECURER_SYS3 (SYS_dup3, status, 3, 0);
  if (bad >= 0)
    bad = SECURER_SYS3 (SYS_dup3, gate, 4, 0);
  if (bad >= 0 && lp->lease_fd >= 0)
    bad = SECURER_SYS3 (SYS_dup3, lease, 5, 0);
  if (bad < 0)
    {
      securer_error_set (&err, (int) -bad, "securer-init: place descriptors");
      fail (lp, &err);
    }
  /* The caller's stdio and every other inherited descriptor: closed by the
   * exec (the setup socket too: EOF then tells the parent that only the
   * payload's copy is left). */
  for (int fd = 0; fd < 3; fd++)
    (void) SECURER_SYS1 (SYS_close, fd);
  int first = lp->lease_fd >= 0 ? 6 : 5;
  if (SECURER_SYS3 (SYS_close_range, first, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
    for (int fd = first; fd < 65536; fd++)
      if (fd != setup && fd != prog)
        (void) SECURER_SYS1 (SYS_close, fd);
  char pid[24];
  snprintf (pid, sizeof pid, "%d", (int) payload);
  char *argv[] = { (char *) "securer-init", pid, lp->resume ? (char *) "--in-template" : NULL, NULL };
  char *envp[] = { NULL };
  long e = SECURER_SYS5 (SYS_execveat, prog, "", argv, envp, AT_EMPTY_PATH);
  securer_error_set (&err, (int) -e, "execute securer-init");
  fail (lp, &err);
}

void
securer_init_main (struct launch_plan *lp)
{
  securer_err_t err = NULL;
  securer_error_use_fixed_storage ();
  close (lp->parent_setup_sock);
  close (lp->parent_status_sock);
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    _exit (SECURER_EXIT_SETUP);

  struct sync_msg m;
  int r = sync_recv (lp->setup_sock, &m, NULL, NULL, false);
  if (r <= 0 || m.type != SYNC_GO)
    _exit (SECURER_EXIT_SETUP);   /* parent gone or gave up: nobody to tell */
  /* The launcher moved this process off its CPU right after clone
   * (spawn.c), so before GO: back to the caller's mask, which the payload
   * and the command inherit. */
  if (lp->restore_cpus && sched_setaffinity (0, sizeof lp->cpus, &lp->cpus) < 0)
    {
      securer_error_set (&err, errno, "restore the CPU affinity");
      fail (lp, &err);
    }

  step (lp, "switch to the sandbox's uid/gid");
  if (securer_userns_become (&lp->ids, &err) < 0)
    fail (lp, &err);
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || !parent_alive (lp->setup_sock))
    _exit (SECURER_EXIT_SETUP);

  /* Into the sandbox's v1 groups (the parent moved us into a v2 one);
   * the cgroup namespace is unshared only after that, so that the
   * sandbox's cgroup becomes the root of the view inside. */
  if (securer_cgroup_join_self (lp->cg, &err) < 0)
    fail (lp, &err);
  if (lp->unshare_cgroup && unshare (CLONE_NEWCGROUP) < 0)
    {
      securer_error_set (&err, errno, "unshare cgroup namespace");
      fail (lp, &err);
    }

  /* The payload is forked now, and it builds the sandbox's view itself
   * (mounts, pivot_root, hostname: init.c's securer_init_build_view) while
   * this process makes the network and IPC namespaces and becomes
   * securer-init: steps that pid 1 had to take one after the other before
   * the command could start now run side by side, and pid 1 holds nothing
   * of the caller long before the view is ready.  The payload joins those
   * namespaces once securer-init has opened its gate (pivot_root moves
   * pid 1's root along with the payload's). */
  int gate[2];
  pid_t self = getpid ();
  lp->builds_view = true;
  /* A new task starts on its parent's CPU and waits there while this
   * process keeps it: the payload is moved off it (the mask without this
   * CPU), so that its steps run beside this process's on an idle CPU; it
   * takes its mask back as soon as it runs there. */
  bool spread = sched_getaffinity (0, sizeof lp->cpus, &lp->cpus) == 0 && CPU_COUNT (&lp->cpus) > 1;
  lp->restore_cpus = spread;
  pid_t payload = fork_payload_sharing (lp, gate, self);
  if (payload == 0)
    securer_payload_main (lp, self);
  /* From here to the exec of securer-init the payload may share this
   * process's memory, errno included: every system call below is made
   * without touching errno (raw-syscall.h), and lp is this process's alone
   * (the payload has its own copy). */
  if (spread)
    launch_move_off_this_cpu (payload, &lp->cpus);

  /* The network and IPC namespaces cost about 0.6 ms of kernel CPU to
   * make (every pernet subsystem, the loopback device, an mqueue mount,
   * sysctl tables): made here, beside the payload's mounts, not in clone3
   * (spawn.c). */
  int late = launch_late_namespaces (lp->p);
  long ur = late != 0 ? SECURER_SYS1 (SYS_unshare, late) : 0;
  if (ur < 0)
    {
      securer_error_set (&err, (int) -ur, "unshare the network and IPC namespaces");
      fail (lp, &err);
    }
  if (late & CLONE_NEWNET)
    {
      step (lp, "set up the network");
      if (securer_linux_setup_network (lp->p, &err) < 0)
        fail (lp, &err);
    }
  exec_init (lp, payload, gate[1]);
}

void
securer_init_build_view (struct launch_plan *lp)
{
  securer_err_t err = NULL;
  const struct securer_policy *p = lp->p;
  if (p->namespaces & SECURER_NS_MOUNT)
    {
      step (lp, "set up the filesystem");
      unsigned flags = (lp->tpl != NULL ? SECURER_ROOTFS_BARE_PROC : 0)
                       | (lp->no_host_root ? SECURER_ROOTFS_NO_HOST_ROOT : 0)
                       | (lp->no_memory_limit ? SECURER_ROOTFS_NO_MEMORY_LIMIT : 0);
      if (securer_linux_setup_rootfs_ex (p, lp->verbose, flags, &err) < 0)
        fail (lp, &err);
    }
  if (p->hostname != NULL && (p->namespaces & SECURER_NS_UTS))
    {
      step (lp, "set the hostname");
      if (sethostname (p->hostname, strlen (p->hostname)) < 0)
        {
          securer_error_set (&err, errno, "sethostname '%s'", p->hostname);
          fail (lp, &err);
        }
    }
}

/* Blocks every signal and forks the payload.  Every signal stays blocked
 * across the exec of securer-init, which takes them with sigwaitinfo: pid 1
 * gets no default actions, and nothing is lost in between.  The gate goes
 * to lp in the payload. */
static void
prepare_payload (struct launch_plan *lp, int gate[2])
{
  securer_err_t err = NULL;
  sigset_t all;
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, NULL);
  /* A SIGCHLD the caller ignores would survive the exec of securer-init,
   * and the kernel would then reap the payload and every orphan itself:
   * securer-init would never see the payload end, so it would neither kill
   * what is left nor report. */
  signal (SIGCHLD, SIG_DFL);

  /* The payload waits at this gate until securer-init has made itself
   * undumpable: before that it could be ptraced by the command. */
  if (pipe2 (gate, O_CLOEXEC) < 0)
    {
      securer_error_set (&err, errno, "pipe for the payload's gate");
      fail (lp, &err);
    }
}

static pid_t
fork_payload (struct launch_plan *lp, int gate[2])
{
  securer_err_t err = NULL;
  prepare_payload (lp, gate);
  /* A raw clone, not fork(): glibc's fork takes the allocator's and stdio's
   * locks and runs the caller's atfork handlers, any of which a thread of
   * the caller (absent from this copy) may have held at clone time. */
  pid_t payload = (pid_t) syscall (SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
  if (payload < 0)
    {
      securer_error_set (&err, errno, "fork the payload");
      fail (lp, &err);
    }
  if (payload == 0)
    {
      close (gate[1]);
      lp->gate_fd = gate[0];
      return 0;
    }
  close (gate[0]);
  return payload;
}

/* The payload may share pid 1's memory (CLONE_VM) where pid 1's system
 * calls can leave errno alone (raw-syscall.h), and not under a sanitizer,
 * whose run-time keeps per-thread state of its own. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LAUNCH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define LAUNCH_SANITIZED 1
#endif
#endif
#if defined(SECURER_RAW_SYSCALL) && !defined(LAUNCH_SANITIZED)
#define LAUNCH_SHARE_MEMORY 1
#endif
/* valgrind runs clones of threads and of processes, not a process sharing
 * memory: it ends the program ("Unsupported clone() flags") rather than
 * failing the call, so it is asked first (configure.ac). */
#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#define LAUNCH_UNDER_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#else
#define LAUNCH_UNDER_VALGRIND() false
#endif

#ifdef LAUNCH_SHARE_MEMORY
/* Room for the payload's own stack: its deepest path (the mount steps and
 * their path buffers) takes a few dozen KiB.  Pages never touched cost
 * nothing; a page below stays inaccessible, so an overflow faults. */
#define PAYLOAD_STACK (1u << 20)

/* What the payload starts from: its own copy of the plan (pid 1 keeps
 * changing lp), its gate and pid 1's pid.  Written before the clone and
 * never again by pid 1. */
static struct payload_start {
  struct launch_plan lp;
  pid_t init_pid;
  int gate_w;
} payload_start;

static int
payload_entry (void *arg)
{
  struct payload_start *ps = arg;
  close (ps->gate_w);
  securer_payload_main (&ps->lp, ps->init_pid);
}
#endif

/* fork_payload, with the payload sharing this process's memory until this
 * process executes securer-init: no page tables to copy and no page to
 * copy on the first write on either side, which on a small process is
 * most of what a fork costs (docs/benchmarks.md).  The price is that the
 * two processes share every global and thread-local variable meanwhile;
 * pid 1's side of that window (securer_init_main, exec_init, net.c) makes
 * its system calls without errno and writes nothing the payload reads
 * (docs/design-launch.md).  Falls back to a fork where the clone is
 * refused (a kernel without CLONE_VM for processes) or
 * the code for it is missing, and under valgrind.  Returns only in pid 1,
 * or in a forked payload (0). */
static pid_t
fork_payload_sharing (struct launch_plan *lp, int gate[2], pid_t self)
{
#ifdef LAUNCH_SHARE_MEMORY
  long page = sysconf (_SC_PAGESIZE);
  if (page <= 0)
    page = 4096;
  char *base = LAUNCH_UNDER_VALGRIND () ? MAP_FAILED
             : mmap (NULL, PAYLOAD_STACK + (size_t) page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (base != MAP_FAILED && mprotect (base, (size_t) page, PROT_NONE) == 0)
    {
      prepare_payload (lp, gate);
      payload_start.lp = *lp;
      payload_start.lp.gate_fd = gate[0];
      payload_start.init_pid = self;
      payload_start.gate_w = gate[1];
      /* glibc's clone() is a system call on a new stack: no atfork
       * handlers, no locks, nothing allocated. */
      pid_t payload = clone (payload_entry, base + page + PAYLOAD_STACK, CLONE_VM | SIGCHLD, &payload_start);
      if (payload > 0)
        {
          (void) SECURER_SYS1 (SYS_close, gate[0]);
          return payload;
        }
      close (gate[0]);
      close (gate[1]);
    }
  if (base != MAP_FAILED)
    munmap (base, PAYLOAD_STACK + (size_t) page);
#else
  (void) self;
#endif
  return fork_payload (lp, gate);
}

void
securer_init_fork_payload (struct launch_plan *lp, pid_t *init_pid)
{
  int gate[2];
  pid_t self = getpid ();
  pid_t payload = fork_payload (lp, gate);
  if (payload == 0)
    {
      *init_pid = self;
      return;
    }
  exec_init (lp, payload, gate[1]);
}
