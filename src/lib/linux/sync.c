/* Parent/child channel: typed messages over SOCK_SEQPACKET.  Each message
 * is one datagram, so a message is never split or merged, and EOF (every
 * child-side copy closed) is itself a signal: exec happened. */
#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <stdint.h>
#include <unistd.h>

#include "linux/launch.h"

int
sync_send (int sock, const struct sync_msg *m, int fd)
{
  size_t len = offsetof (struct sync_msg, text) + strnlen (m->text, SYNC_TEXT_MAX - 1) + 1;
  struct iovec iov = { .iov_base = (void *) m, .iov_len = len };
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (fd >= 0)
    {
      memset (&u, 0, sizeof u);
      mh.msg_control = u.buf;
      mh.msg_controllen = sizeof u.buf;
      struct cmsghdr *c = CMSG_FIRSTHDR (&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (c), &fd, sizeof fd);
    }
  ssize_t n;
  do
    n = sendmsg (sock, &mh, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n < 0 ? -1 : 0;
}

int
sync_recv (int sock, struct sync_msg *m, int *fd_out, pid_t *pid_out, bool nonblock)
{
  union {
    char buf[CMSG_SPACE (sizeof (int)) + CMSG_SPACE (sizeof (struct ucred))];
    struct cmsghdr align;
  } u;
  memset (m, 0, offsetof (struct sync_msg, text) + 1);
  struct iovec iov = { .iov_base = m, .iov_len = sizeof *m };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                       .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  if (fd_out != NULL)
    *fd_out = -1;
  if (pid_out != NULL)
    *pid_out = 0;
  ssize_t n;
  bool reset_seen = false;
  for (;;)
    {
      n = recvmsg (sock, &mh, MSG_CMSG_CLOEXEC | (nonblock ? MSG_DONTWAIT : 0));
      if (n >= 0 || errno == EINTR)
        {
          if (n >= 0)
            break;
          continue;
        }
      /* A child that fails before reading the seccomp program we already
       * sent closes its end with that program unread, and the kernel then
       * reports ECONNRESET ahead of the datagrams still queued for us — its
       * error message among them.  The error is cleared by being reported,
       * so one more receive reads what the child said. */
      if (errno == ECONNRESET && !reset_seen)
        {
          reset_seen = true;
          continue;
        }
      return -1;
    }
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&mh); c != NULL; c = CMSG_NXTHDR (&mh, c))
    {
      if (c->cmsg_level != SOL_SOCKET)
        continue;
      if (c->cmsg_type == SCM_RIGHTS)
        {
          int fd;
          memcpy (&fd, CMSG_DATA (c), sizeof fd);
          if (fd_out != NULL && *fd_out < 0)
            *fd_out = fd;
          else
            close (fd);
        }
      else if (c->cmsg_type == SCM_CREDENTIALS && pid_out != NULL)
        {
          struct ucred cr;
          memcpy (&cr, CMSG_DATA (c), sizeof cr);
          *pid_out = cr.pid;
        }
    }
  if (n == 0)
    return 0;
  /* The seccomp area's listener hand-over: an offer ('O' and the fd
   * number), or one byte 'L' with the listener attached. */
  if (n == 1 + (ssize_t) sizeof (int) && ((char *) m)[0] == 'O')
    {
      int fdnum;
      memcpy (&fdnum, (char *) m + 1, sizeof fdnum);
      memset (m, 0, offsetof (struct sync_msg, text) + 1);
      m->type = SYNC_NOTIFY_OFFER;
      m->status = fdnum;
      return 1;
    }
  if (n == 1 && ((char *) m)[0] == 'L')
    {
      m->type = SYNC_NOTIFY_FD;
      m->text[0] = '\0';
      return 1;
    }
  if ((size_t) n <= offsetof (struct sync_msg, text) || (mh.msg_flags & MSG_TRUNC))
    {
      /* A short or oversized datagram cannot come from our own child. */
      if (fd_out != NULL && *fd_out >= 0)
        {
          close (*fd_out);
          *fd_out = -1;
        }
      errno = EPROTO;
      return -1;
    }
  m->text[SYNC_TEXT_MAX - 1] = '\0';
  if ((size_t) n < sizeof *m)
    ((char *) m)[n] = '\0';
  return 1;
}

void
sync_send_error (int sock, int status, const securer_err_t e)
{
  struct sync_msg m;
  memset (&m, 0, offsetof (struct sync_msg, text));
  m.type = SYNC_ERROR;
  m.status = status;
  m.errnum = securer_error_errno (e);
  const char *s = securer_error_message (e);
  size_t l = strnlen (s, SYNC_TEXT_MAX - 1);
  memcpy (m.text, s, l);
  m.text[l] = '\0';
  (void) sync_send (sock, &m, -1);
}

struct filter_hdr {
  uint32_t type;
  uint32_t n;
  uint64_t flags;
};

int
sync_send_filter (int sock, const struct sock_filter *insns, unsigned n, unsigned long flags)
{
  if (n == 0 || n > BPF_MAXINSNS)
    {
      errno = EINVAL;
      return -1;
    }
  struct filter_hdr h = { SYNC_FILTER, n, flags };
  struct iovec iov[2] = { { &h, sizeof h }, { (void *) insns, n * sizeof *insns } };
  struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
  ssize_t r;
  do
    r = sendmsg (sock, &mh, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  return r < 0 ? -1 : 0;
}

int
sync_recv_filter (int sock, struct sock_filter *insns, unsigned *n, unsigned long *flags)
{
  struct filter_hdr h;
  struct iovec iov[2] = { { &h, sizeof h }, { insns, BPF_MAXINSNS * sizeof *insns } };
  struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
  ssize_t r;
  do
    r = recvmsg (sock, &mh, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r <= 0)
    return (int) r;
  if ((size_t) r < sizeof h || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || h.type != SYNC_FILTER
      || h.n == 0 || h.n > BPF_MAXINSNS || (size_t) r != sizeof h + h.n * sizeof *insns)
    {
      errno = EPROTO;
      return -1;
    }
  *n = h.n;
  *flags = (unsigned long) h.flags;
  return 1;
}
