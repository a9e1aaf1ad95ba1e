/* Both ends of SECURER_SECCOMP_REPORT_DENIALS: handing the listener from
 * the payload to its supervisor, and answering notifications as the policy
 * meant them. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "seccomp/seccomp.h"

#define X32_SYSCALL_BIT 0x40000000

int
securer_seccomp_give_listener (int sock, int listener)
{
  char byte = 'L';
  struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  memset (&u, 0, sizeof u);
  struct msghdr msg = {
    .msg_iov = &iov, .msg_iovlen = 1,
    .msg_control = u.buf, .msg_controllen = sizeof u.buf,
  };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &listener, sizeof (int));
  ssize_t n;
  do
    n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != 1)
    return n < 0 ? -errno : -EIO;
  return 0;
}

int
securer_seccomp_send_listener (int sock, int listener, securer_err_t *err)
{
  int rc = securer_seccomp_give_listener (sock, listener);
  if (rc < 0)
    return securer_error_set (err, -rc, "send seccomp listener");
  return 0;
}

int
securer_seccomp_offer_listener (int sock, int listener)
{
  /* By number, not by SCM_RIGHTS: a descriptor in flight is charged to a
   * per-user counter that another process of the same user could have used
   * up, and taking the listener must not depend on anyone else. */
  unsigned char offer[1 + sizeof (int)] = { 'O' };
  memcpy (offer + 1, &listener, sizeof listener);
  struct iovec iov = { .iov_base = offer, .iov_len = sizeof offer };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  ssize_t n;
  do
    n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != (ssize_t) sizeof offer)
    return n < 0 ? -errno : -EIO;
  char answer = 0;
  iov.iov_base = &answer;
  iov.iov_len = 1;
  do
    n = recvmsg (sock, &msg, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  if (n == 0)
    return -EPIPE;
  if (answer == SECURER_LISTENER_TAKEN)
    return 0;
  if (answer == SECURER_LISTENER_SEND)
    return securer_seccomp_give_listener (sock, listener);
  return -EPROTO;
}

int
securer_seccomp_recv_listener (int sock, int *listener, securer_err_t *err)
{
  char byte;
  struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {
    .msg_iov = &iov, .msg_iovlen = 1,
    .msg_control = u.buf, .msg_controllen = sizeof u.buf,
  };
  ssize_t n;
  do
    n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return securer_error_set (err, errno, "receive seccomp listener");
  if (n == 0)
    return securer_error_set (err, EPIPE, "receive seccomp listener: peer closed the socket");
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  if (byte != 'L' || c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS
      || c->cmsg_len != CMSG_LEN (sizeof (int)) || (msg.msg_flags & MSG_CTRUNC))
    {
      /* Close whatever did arrive, so a malformed message leaks nothing. */
      if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN (0)) / sizeof (int); i++)
          {
            int fd;
            memcpy (&fd, CMSG_DATA (c) + i * sizeof fd, sizeof fd);
            close (fd);
          }
      return securer_error_set (err, EPROTO, "receive seccomp listener: unexpected message");
    }
  memcpy (listener, CMSG_DATA (c), sizeof (int));
  return 0;
}

static void
name_syscall (struct securer_seccomp_event *ev)
{
  uint32_t arch = ev->arch;
  int nr = ev->nr;
  const char *prefix = "";
  if (arch == AUDIT_ARCH_X86_64 && (uint32_t) nr >= X32_SYSCALL_BIT && nr != -1)
    {
      arch = SCMP_ARCH_X32;
      prefix = "x32:";
    }
  else if (arch == AUDIT_ARCH_I386)
    prefix = "i386:";
  else if (arch != seccomp_arch_native ())
    prefix = "foreign:";
  char *s = seccomp_syscall_resolve_num_arch (arch, nr);
  if (s)
    snprintf (ev->name, sizeof ev->name, "%s%s", prefix, s);
  else
    snprintf (ev->name, sizeof ev->name, "%snr %d", prefix, ev->nr);
  free (s);
}

int
securer_seccomp_notify_handle (const struct securer_seccomp_prog *prog, int listener,
                               struct securer_seccomp_event *ev, securer_err_t *err)
{
  struct seccomp_notif *req = NULL;
  struct seccomp_notif_resp *resp = NULL;
  int rc = seccomp_notify_alloc (&req, &resp);
  if (rc < 0)
    return securer_error_set (err, -rc, "seccomp notification: allocate");

  memset (ev, 0, sizeof *ev);
  rc = seccomp_notify_receive (listener, req);
  if (rc < 0)
    {
      seccomp_notify_free (req, resp);
      /* ENOENT: the caller went away (killed, or its syscall interrupted)
       * between the wake-up and our read. */
      if (rc == -ENOENT)
        return 0;
      return securer_error_set (err, -rc, "seccomp notification: receive");
    }

  ev->pid = (pid_t) req->pid;
  ev->arch = req->data.arch;
  ev->nr = req->data.nr;
  memcpy (ev->args, req->data.args, sizeof ev->args);
  name_syscall (ev);
  ev->action = securer_seccomp_eval (prog, ev->arch, ev->nr, ev->args);

  switch (ev->action.type)
    {
    case SECURER_ACT_KILL_PROCESS:
    case SECURER_ACT_KILL_THREAD:
      /* No answer: the thread stays blocked, so the denied syscall neither
       * runs nor returns, until the caller kills the sandbox. */
      ev->kill = true;
      seccomp_notify_free (req, resp);
      return 1;
    case SECURER_ACT_ERRNO:
      resp->error = -ev->action.errnum;
      break;
    case SECURER_ACT_ALLOW:
    case SECURER_ACT_LOG:
    case SECURER_ACT_NOTIFY:
      /* Safe here: the decision does not depend on memory the caller could
       * change after we looked (we never read it), and CONTINUE lets the
       * kernel run the syscall as if no filter had stopped it. */
      resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      break;
    case SECURER_ACT_TRAP:
      /* Traps are never routed here; refuse rather than guess. */
      resp->error = -ENOSYS;
      break;
    }
  resp->id = req->id;
  rc = seccomp_notify_respond (listener, resp);
  seccomp_notify_free (req, resp);
  if (rc == -ENOENT)
    return 0;
  if (rc < 0)
    return securer_error_set (err, -rc, "seccomp notification: respond to %s", ev->name);
  return 1;
}
