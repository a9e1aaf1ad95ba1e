/* securer-init: the sandbox's pid 1 once setup is done.
 *
 * The launcher's child builds the sandbox, forks the payload and then
 * executes this program, so that nothing of the caller — its argv, its
 * environment, its heap, its open files — exists inside the sandbox: this
 * process image holds a fixed argv ("securer-init PAYLOAD_PID"), an empty
 * environment and two descriptors.  It is linked statically because it is
 * started from a descriptor opened before pivot_root, in a root that may
 * have no dynamic loader; on x86_64 and aarch64 it has no C library at all
 * (sys.h says why).
 *
 *   fd 3  the status socket: one SYNC_EXIT message when the payload ends
 *   fd 4  the payload's gate: a byte once this process is undumpable, which
 *         lets the payload go on to execute the command
 *   fd 5  with a leased host id: the lease's lock, never used, held until
 *         this process's exit has let go of the sandbox
 *
 * It reaps orphans and forwards every signal it receives to the payload.
 * When the payload ends, it kills and reaps everything else in its pid
 * namespace before it reports: once the supervisor has the status, no
 * process of the sandbox can run any more, so the supervisor may return it
 * without waiting for the namespaces' teardown that follows this
 * process's exit. */
#include <config.h>

#include <errno.h>
#include <linux/prctl.h>
#include <linux/wait.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "linux/launch.h"
#include "sys.h"

#define STATUS_FD 3
#define GATE_FD 4

/* PR_SET_PDEATHSIG survives this exec, but is armed again in case it did
 * not; then the supervisor must still be there, or the signal came too
 * late.  The supervisor never writes on the status socket, so a peek tells
 * an open socket (EAGAIN) from a closed one (0). */
static INIT_FN bool
supervisor_alive (void)
{
  char c;
  long n = SYS6 (SYS_recvfrom, STATUS_FD, &c, 1, MSG_PEEK | MSG_DONTWAIT, NULL, NULL);
  return n == -EAGAIN || n == -EWOULDBLOCK;
}

static INIT_FN bool
parse_pid (const char *s, long *out)
{
  long v = 0;
  if (*s == '\0')
    return false;
  for (; *s; s++)
    {
      if (*s < '0' || *s > '9' || v > 0x3fffffff / 10)
        return false;
      v = v * 10 + (*s - '0');
    }
  *out = v;
  return v > 0;
}

static INIT_FN bool
streq (const char *a, const char *b)
{
  while (*a && *a == *b)
    a++, b++;
  return *a == *b;
}

static INIT_FN __attribute__ ((noreturn)) void
finish (long status)
{
  for (;;)
    SYS1 (SYS_exit_group, status);
}

/* How the payload ended, with the CPU time and peak memory of everything
 * that ran in the sandbox after this program started (every process of it
 * is reaped here first: the payload, then what it left behind). */
static INIT_FN __attribute__ ((noreturn)) void
report_exit (int wstatus)
{
  /* Pid 1 of the sandbox's own pid namespace: the rest of it goes now.
   * Without one, this is not everything's reaper, and the cgroup (when the
   * policy has one) catches what is left. */
  if (SYS0 (SYS_getpid) == 1)
    {
      /* Every process the sandbox started descends from pid 1: an orphan is
       * reparented here, or to a subreaper that is itself still a child
       * here.  With no child left there is nothing to kill, and kill(-1)
       * would walk every process of the host to find that out. */
      if (SYS4 (SYS_wait4, -1, NULL, __WALL | WNOHANG, NULL) != -ECHILD)
        {
          SYS2 (SYS_kill, -1, SIGKILL);
          while (SYS4 (SYS_wait4, -1, NULL, __WALL, NULL) > 0)
            ;
        }
    }
  static struct sync_msg out;   /* zero-filled: no memset without a C library */
  out.type = SYNC_EXIT;
  if ((wstatus & 0x7f) != 0)
    {
      out.signal = wstatus & 0x7f;
      out.status = 128 + out.signal;
    }
  else
    out.status = (wstatus >> 8) & 0xff;
  struct rusage ru;
  if (SYS2 (SYS_getrusage, RUSAGE_CHILDREN, &ru) == 0)
    {
      out.ru_user_us = (uint64_t) ru.ru_utime.tv_sec * 1000000u + (uint64_t) ru.ru_utime.tv_usec;
      out.ru_sys_us = (uint64_t) ru.ru_stime.tv_sec * 1000000u + (uint64_t) ru.ru_stime.tv_usec;
      out.ru_maxrss_kb = (uint64_t) ru.ru_maxrss;
      out.has_rusage = 1;
    }
  (void) SYS6 (SYS_sendto, STATUS_FD, &out, offsetof (struct sync_msg, text) + 1, MSG_NOSIGNAL, NULL, 0);
  finish (out.status);
}

static INIT_FN int
init_main (int argc, char **argv)
{
  /* First of all: the payload runs as the same uid in the same user
   * namespace, and must never be able to ptrace or read the memory of a
   * process that has neither its Landlock domain nor its seccomp filter. */
  if (SYS5 (SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return SECURER_EXIT_SETUP;
  /* In a session forked from a template, pid 1's parent is a fork of the
   * template that exits once this process exists: a death signal armed
   * while that fork is still exiting would kill the session.  Its
   * lifetime is bound instead by the template's pid namespace, which
   * contains it and ends with the template (whose own pid 1 has the death
   * signal of the supervisor). */
  bool in_template = argc == 3 && streq (argv[2], "--in-template");
  long payload;
  if ((argc != 2 && !in_template) || !parse_pid (argv[1], &payload))
    return SECURER_EXIT_SETUP;
  if ((!in_template && SYS5 (SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) || !supervisor_alive ())
    return SECURER_EXIT_SETUP;
  /* A byte, not just EOF: the payload tells this from pid 1 dying before
   * it got here. */
  static const char go = LAUNCH_GATE_BYTE;
  if (SYS3 (SYS_write, GATE_FD, &go, 1) != 1)
    return SECURER_EXIT_SETUP;
  SYS1 (SYS_close, GATE_FD);

  /* Every signal was blocked before the fork that made the payload and
   * stays blocked across exec: pid 1 gets no default actions, and nothing
   * sent meanwhile is lost. */
  ksigset_t all = ~(ksigset_t) 0;
  SYS4 (SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof all);
  for (;;)
    {
      struct ksiginfo si;
      long sig = SYS4 (SYS_rt_sigtimedwait, &all, &si, NULL, sizeof all);
      if (sig < 0)
        continue;
      if (sig != SIGCHLD)
        {
          /* Sent to the sandbox as a whole (SIGTERM from the caller,
           * SIGHUP, ...): pass it on to the payload. */
          SYS2 (SYS_kill, payload, sig);
          continue;
        }
      int st;
      long w;
      while ((w = SYS4 (SYS_wait4, -1, &st, WNOHANG | __WALL, NULL)) > 0)
        if (w == payload)
          report_exit (st);
    }
}

#ifdef INIT_LIBC
int
main (int argc, char **argv)
{
  return init_main (argc, argv);
}
#else
/* The kernel starts the program here with argc, argv[] and envp[] on the
 * stack; there is no C library to set anything else up. */
void securer_init_start (long *sp) __attribute__ ((used, noreturn));

INIT_FN void
securer_init_start (long *sp)
{
  finish (init_main ((int) sp[0], (char **) (sp + 1)));
}

#if defined(__x86_64__)
__asm__ (".text\n"
         ".global _start\n"
         ".type _start, @function\n"
         "_start:\n"
         "  xor %ebp, %ebp\n"
         "  mov %rsp, %rdi\n"
         "  and $-16, %rsp\n"
         "  call securer_init_start\n"
         "  hlt\n");
#elif defined(__aarch64__)
__asm__ (".text\n"
         ".global _start\n"
         ".type _start, %function\n"
         "_start:\n"
         "  mov x29, #0\n"
         "  mov x30, #0\n"
         "  mov x0, sp\n"
         "  bl securer_init_start\n");
#endif
#endif
