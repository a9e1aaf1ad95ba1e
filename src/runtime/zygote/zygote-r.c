/* The fork loop of a session template's R, as .C entry points for
 * dyn.load() (docs/architecture.md, "Sessions from a template").  R calls
 * securer_zygote_r_prepare once with a policy file, then
 * securer_zygote_r_serve, which returns in each session's payload (result
 * 1: fds 0-2 are now the session's channel, stdout and stderr, the session
 * confined as the policy says) and in the template only when its control
 * socket (fd 3) ends or carries a malformed request (result 0).  Requests
 * are parsed here, never evaluated. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux.h"
#include "linux/zygote.h"

#define CTL_FD 3

static struct securer_zygote_plans plans;

/* .C: prepares the session's confinement once, from the policy file. */
void securer_zygote_r_prepare (char **path, int *ok);
void
securer_zygote_r_prepare (char **path, int *ok)
{
  securer_err_t err = NULL;
  struct securer_policy *p;
  *ok = 0;
  if (securer_policy_load_file (path[0], &p, NULL, &err) < 0 || securer_zygote_plan (p, &plans, &err) < 0)
    {
      fprintf (stderr, "securer zygote: %s\n", securer_error_message (err));
      return;
    }
  *ok = 1;
}

/* One request: the session's index in the template's id range, with its
 * channel, stdout and stderr (exactly three descriptors; anything else
 * ends the template). */
static int
next_request (uint32_t *index, int fds[3])
{
  union { char b[CMSG_SPACE (3 * sizeof (int))]; struct cmsghdr a; } u;
  struct iovec iov = { index, sizeof *index };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
  if (recvmsg (CTL_FD, &mh, MSG_CMSG_CLOEXEC) != sizeof *index || (mh.msg_flags & MSG_CTRUNC))
    return -1;
  struct cmsghdr *h = CMSG_FIRSTHDR (&mh);
  if (h == NULL || h->cmsg_type != SCM_RIGHTS || h->cmsg_len != CMSG_LEN (3 * sizeof (int)))
    return -1;
  memcpy (fds, CMSG_DATA (h), 3 * sizeof (int));
  return 0;
}

static void
close_all (const int fds[3])
{
  for (int i = 0; i < 3; i++)
    close (fds[i]);
}

/* A session's failure goes to its channel, which the host reads. */
__attribute__ ((noreturn)) static void
session_fail (int chan, securer_err_t err)
{
  dprintf (chan, "securer zygote: %s\n", securer_error_message (err));
  _exit (125);
}

/* .C: the fork loop. */
void securer_zygote_r_serve (int *result);
void
securer_zygote_r_serve (int *result)
{
  static const char *const tmpfs[] = { "/tmp", "/dev/shm", NULL };
  uint32_t index;
  int fds[3];
  *result = 0;
  if (plans.confinement.p == NULL)
    return;
  while (next_request (&index, fds) == 0)
    {
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
      pid_t c = fork ();
      if (c != 0)
        {
          close_all (fds);
          if (c < 0)
            return;
          continue;
        }
      close (CTL_FD);
      securer_err_t err = NULL;
      struct securer_zygote_session s = { .index = index, .inside = 1000, .hostname = plans.confinement.p->hostname,
                                          .tmpfs = tmpfs, .policy = plans.confinement.p };
      pid_t g = securer_zygote_enter (&s, &err);
      if (g > 0)
        _exit (0);
      if (g < 0)
        session_fail (fds[0], err);
      /* pid 1 of the session: forks the payload and ends with it. */
      pid_t pl = fork ();
      if (pl < 0)
        _exit (125);
      if (pl > 0)
        {
          close_all (fds);
          int st;
          while (waitpid (pl, &st, 0) < 0 && errno == EINTR)
            ;
          _exit (WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st));
        }
      struct securer_landlock_report rep;
      /* Its own channel, stdout and stderr on 0-2, and nothing else of
       * the template's. */
      for (int i = 0; i < 3; i++)
        if (dup2 (fds[i], i) < 0)
          _exit (125);
      if (syscall (SYS_close_range, 3, ~0u, 0) < 0)
        _exit (125);
      if (securer_zygote_confine (&plans.confinement, &rep, &err) < 0)
        session_fail (0, err);
      *result = 1;
      return;
    }
}
