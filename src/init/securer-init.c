/* securer-init: the sandbox's pid 1 once setup is done.
 *
 * The launcher's child builds the sandbox, forks the payload and then
 * executes this program, so that nothing of the caller — its argv, its
 * environment, its heap, its open files — exists inside the sandbox: this
 * process image holds a fixed argv ("securer-init PAYLOAD_PID"), an empty
 * environment and two descriptors.  It is linked statically because it is
 * started from a descriptor opened before pivot_root, in a root that may
 * have no dynamic loader.
 *
 *   fd 3  the status socket: one SYNC_EXIT message when the payload ends
 *   fd 4  the payload's gate: closed once this process is undumpable, which
 *         lets the payload go on to execute the command
 *
 * It reaps orphans, forwards every signal it receives to the payload and
 * exits with the payload's status; the kernel then kills what is left in
 * the pid namespace. */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch.h"

#define STATUS_FD 3
#define GATE_FD 4

/* PR_SET_PDEATHSIG survives this exec, but is armed again in case it did
 * not; then the supervisor must still be there, or the signal came too
 * late.  The supervisor never writes on the status socket, so a peek tells
 * an open socket (EAGAIN) from a closed one (0). */
static bool
supervisor_alive (void)
{
  char c;
  ssize_t n = recv (STATUS_FD, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

int
main (int argc, char **argv)
{
  /* First of all: the payload runs as the same uid in the same user
   * namespace, and must never be able to ptrace or read the memory of a
   * process that has neither its Landlock domain nor its seccomp filter. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return SECURER_EXIT_SETUP;
  /* In a session forked from a template, pid 1's parent is a fork of the
   * template that exits once this process exists: a death signal armed
   * while that fork is still exiting would kill the session.  Its
   * lifetime is bound instead by the template's pid namespace, which
   * contains it and ends with the template (whose own pid 1 has the death
   * signal of the supervisor). */
  bool in_template = argc == 3 && strcmp (argv[2], "--in-template") == 0;
  if (argc != 2 && !in_template)
    return SECURER_EXIT_SETUP;
  char *end;
  long payload = strtol (argv[1], &end, 10);
  if (*end != '\0' || payload <= 0)
    return SECURER_EXIT_SETUP;
  if ((!in_template && prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) || !supervisor_alive ())
    return SECURER_EXIT_SETUP;
  close (GATE_FD);

  /* Every signal was blocked before the fork that made the payload and
   * stays blocked across exec: pid 1 gets no default actions, and nothing
   * sent meanwhile is lost. */
  sigset_t all;
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, NULL);
  for (;;)
    {
      siginfo_t si;
      int sig = sigwaitinfo (&all, &si);
      if (sig < 0)
        continue;
      if (sig != SIGCHLD)
        {
          /* Sent to the sandbox as a whole (SIGTERM from the caller,
           * SIGHUP, ...): pass it on to the payload. */
          kill ((pid_t) payload, sig);
          continue;
        }
      int st;
      pid_t w;
      while ((w = waitpid (-1, &st, WNOHANG)) > 0)
        if (w == (pid_t) payload)
          {
            struct sync_msg out;
            memset (&out, 0, sizeof out);
            out.type = SYNC_EXIT;
            if (WIFSIGNALED (st))
              {
                out.signal = WTERMSIG (st);
                out.status = 128 + out.signal;
              }
            else
              out.status = WEXITSTATUS (st);
            (void) send (STATUS_FD, &out, offsetof (struct sync_msg, text) + 1, MSG_NOSIGNAL);
            _exit (out.status);
          }
    }
}
