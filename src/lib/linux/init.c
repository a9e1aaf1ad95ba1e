/* The sandbox's first process (pid 1 of its pid namespace): finishes the
 * setup that needs the new namespaces, forks the payload, then stays as a
 * small init that reaps orphans, forwards signals and reports how the
 * payload ended.  When it exits the kernel kills everything left inside. */
#include <config.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch.h"

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
  char c;
  ssize_t n = recv (sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static void
step (struct launch_plan *lp, const char *what)
{
  if (lp->verbose)
    dprintf (2, "securer: [%d] %s\n", (int) getpid (), what);
}

void
securer_init_main (struct launch_plan *lp)
{
  securer_err_t err = NULL;
  close (lp->parent_setup_sock);
  close (lp->parent_status_sock);
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    _exit (SECURER_EXIT_SETUP);

  struct sync_msg m;
  int r = sync_recv (lp->setup_sock, &m, NULL, NULL, false);
  if (r <= 0 || m.type != SYNC_GO)
    _exit (SECURER_EXIT_SETUP);   /* parent gone or gave up: nobody to tell */

  step (lp, "switch to the sandbox's uid/gid");
  if (securer_userns_become (&lp->ids, &err) < 0)
    fail (lp, &err);
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || !parent_alive (lp->setup_sock))
    _exit (SECURER_EXIT_SETUP);

  /* Unshared only now, after the parent moved us into the sandbox's
   * cgroup, so that cgroup becomes the root of the view inside. */
  if (lp->unshare_cgroup && unshare (CLONE_NEWCGROUP) < 0)
    {
      securer_error_set (&err, errno, "unshare cgroup namespace");
      fail (lp, &err);
    }

  const struct securer_policy *p = lp->p;
  if (p->namespaces & SECURER_NS_MOUNT)
    {
      step (lp, "set up the filesystem");
      if (securer_linux_setup_rootfs (p, lp->verbose, &err) < 0)
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
  if (p->namespaces & SECURER_NS_NET)
    {
      step (lp, "set up the network");
      if (securer_linux_setup_network (p, &err) < 0)
        fail (lp, &err);
    }

  /* Every signal we care about is blocked before the fork and taken with
   * sigwaitinfo: pid 1 gets no default actions, and nothing is lost
   * between the fork and the loop. */
  sigset_t all;
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, NULL);

  pid_t self = getpid ();
  pid_t payload = fork ();
  if (payload < 0)
    {
      securer_error_set (&err, errno, "fork the payload");
      fail (lp, &err);
    }
  if (payload == 0)
    securer_payload_main (lp, self);

  /* From here on only the payload may hold the setup socket, so EOF tells
   * the parent that exec happened. */
  close (lp->setup_sock);
  /* Nor does pid 1 keep any other descriptor it was born with (the
   * caller's stdio, the supervisor's ends of the payload's pipes): a pipe
   * end held here would keep the payload from ever seeing EOF on its stdin
   * or EPIPE on its stdout. */
  for (int fd = 0; fd < lp->status_sock; fd++)
    close (fd);
  (void) securer_linux_close_fds_above (lp->status_sock, NULL);

  for (;;)
    {
      siginfo_t si;
      int sig = sigwaitinfo (&all, &si);
      if (sig < 0)
        continue;
      if (sig == SIGCHLD)
        {
          int st;
          pid_t w;
          while ((w = waitpid (-1, &st, WNOHANG)) > 0)
            if (w == payload)
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
                (void) sync_send (lp->status_sock, &out, -1);
                _exit (out.status);
              }
          continue;
        }
      /* Anything else was sent to the sandbox as a whole (SIGTERM from
       * the caller, SIGHUP, ...): pass it on to the payload. */
      kill (payload, sig);
    }
}
