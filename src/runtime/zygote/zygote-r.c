/* The fork loop of a session template's R, loaded with
 * dyn.load("/proc/self/fd/4") (docs/architecture.md, "Sessions from a
 * template").  R calls securer_zygote_r_serve in a loop: it returns with
 * result 1 in each new session's payload — fds 0-2 are then the session's
 * channel, stdout and stderr, and the session is confined as the policy
 * says — and with result 0 in the template only when the control socket
 * ends or carries a malformed request.  Requests are parsed here, never
 * evaluated.
 *
 * Descriptors the host gives the template (src/lib/linux/template.c):
 * 3 the control socket, 4 this module, 5 the sessions' policy (JSON),
 * 6 securer-init (O_PATH). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/launch.h"
#include "linux/template.h"
#include "linux/zygote.h"

#define POLICY_FD 5
#define INIT_FD 6

static struct securer_zygote_program program;
static int prepared;

/* One request with exactly its descriptors; anything else ends the
 * template (the host is the only writer). */
static int
next_request (struct securer_zygote_request *rq, int fds[SECURER_ZYGOTE_REQUEST_FDS])
{
  union { char b[CMSG_SPACE (SECURER_ZYGOTE_REQUEST_FDS * sizeof (int))]; struct cmsghdr a; } u;
  struct iovec iov = { rq, sizeof *rq };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
  ssize_t n;
  do
    n = recvmsg (SECURER_TEMPLATE_CTL_FD, &mh, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  struct cmsghdr *h = n > 0 ? CMSG_FIRSTHDR (&mh) : NULL;
  if (h == NULL || h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS
      || h->cmsg_len != CMSG_LEN (SECURER_ZYGOTE_REQUEST_FDS * sizeof (int)))
    return -1;
  memcpy (fds, CMSG_DATA (h), SECURER_ZYGOTE_REQUEST_FDS * sizeof (int));
  if (n != sizeof *rq || (mh.msg_flags & MSG_CTRUNC) || rq->magic != SECURER_ZYGOTE_MAGIC)
    {
      for (int i = 0; i < SECURER_ZYGOTE_REQUEST_FDS; i++)
        close (fds[i]);
      return -1;
    }
  return 0;
}

static int
prepare (void)
{
  securer_err_t err = NULL;
  if (securer_zygote_program_init (&program, POLICY_FD, INIT_FD, &err) < 0)
    {
      fprintf (stderr, "securer template: %s\n", securer_error_message (err));
      securer_error_free (&err);
      return -1;
    }
  close (POLICY_FD);
  close (SECURER_TEMPLATE_MODULE_FD);
  uint32_t ready = SECURER_ZYGOTE_MAGIC;
  if (send (SECURER_TEMPLATE_CTL_FD, &ready, sizeof ready, MSG_NOSIGNAL) != sizeof ready)
    return -1;
  prepared = 1;
  return 0;
}

/* .C entry point. */
void securer_zygote_r_serve (int *result);
void
securer_zygote_r_serve (int *result)
{
  *result = 0;
  if (!prepared && prepare () < 0)
    return;
  struct securer_zygote_request rq;
  int fds[SECURER_ZYGOTE_REQUEST_FDS];
  while (next_request (&rq, fds) == 0)
    {
      /* The forks of earlier sessions, which exit once their session's
       * pid 1 exists. */
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
      securer_err_t err = NULL;
      int r = securer_zygote_fork_session (&program, &rq, fds, &err);
      if (r == 1)
        {
          *result = 1;
          return;
        }
      if (r < 0)
        {
          sync_send_error (fds[3], SECURER_EXIT_SETUP, err);
          securer_error_free (&err);
        }
      for (int i = 0; i < SECURER_ZYGOTE_REQUEST_FDS; i++)
        close (fds[i]);
    }
}
