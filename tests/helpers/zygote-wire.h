/* The messages between tests/integration/test-zygote and its template
 * (tests/helpers/zygote-template): a request per session, with the
 * session's socket passed along, and what the session reports. */
#ifndef SECURER_TEST_ZYGOTE_WIRE_H
#define SECURER_TEST_ZYGOTE_WIRE_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#define ZYGOTE_INSIDE 1000u
/* Set in the test's environment before a template starts. */
#define ZYGOTE_CALLER_ENV "SECURER_TEST_CALLER_SECRET"
#define ZYGOTE_MARKER_NAME "zygote-session-marker-"
#define ZYGOTE_MARKER "/tmp/" ZYGOTE_MARKER_NAME

struct request {
  uint32_t index;
  int confine;    /* the session's payload confines itself (the template's --confine policy) */
};

/* What a session's pid 1 saw (kind 'S'), or why it could not start ('E'). */
struct report {
  char kind;
  int errnum;
  int is_pid1;
  int procs;            /* numeric entries in its /proc */
  int keys_masked;      /* /proc/keys is /dev/null */
  int version_masked;   /* /proc/version is /dev/null (the policy's own mask) */
  int caller_env;       /* ZYGOTE_CALLER_ENV is in its environment */
  unsigned uid, gid;
  int own_marker;       /* its marker file is in /tmp */
  int foreign_markers;  /* markers of other sessions in /tmp */
  char hostname[65];
  /* kind 'P': the payload after securer_zygote_confine */
  int memfd_before;     /* errno of memfd_create before confinement (0: it worked) */
  int memfd_after, mmap_wx, open_passwd, tmp_write;
  int mount_after;      /* the signal that ended a child trying mount(2) */
  unsigned long long as_limit;
  char text[512];
};

/* One datagram of len bytes with n (0-3) descriptors. */
static inline void
send_fds (int sock, const void *buf, size_t len, const int *fds, unsigned n)
{
  union { char b[CMSG_SPACE (3 * sizeof (int))]; struct cmsghdr a; } u;
  struct iovec iov = { (void *) buf, len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (n > 0)
    {
      mh.msg_control = u.b;
      mh.msg_controllen = CMSG_SPACE (n * sizeof (int));
      struct cmsghdr *h = CMSG_FIRSTHDR (&mh);
      h->cmsg_level = SOL_SOCKET;
      h->cmsg_type = SCM_RIGHTS;
      h->cmsg_len = CMSG_LEN (n * sizeof (int));
      memcpy (CMSG_DATA (h), fds, n * sizeof (int));
    }
  if (sendmsg (sock, &mh, MSG_NOSIGNAL) != (ssize_t) len)
    _exit (90);
}

static inline void
send_fd (int sock, const void *buf, size_t len, int fd)
{
  send_fds (sock, buf, len, &fd, fd >= 0 ? 1 : 0);
}

/* One datagram of exactly len bytes; *fd a passed descriptor (or -1),
 * *pid the sender's pid as seen here (SO_PASSCRED). */
static inline int
recv_msg (int sock, void *buf, size_t len, int *fd, pid_t *pid)
{
  union { char b[CMSG_SPACE (sizeof (int)) + CMSG_SPACE (sizeof (struct ucred))]; struct cmsghdr a; } u;
  struct iovec iov = { buf, len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
  if (fd)
    *fd = -1;
  if (recvmsg (sock, &mh, MSG_CMSG_CLOEXEC) != (ssize_t) len)
    return -1;
  for (struct cmsghdr *h = CMSG_FIRSTHDR (&mh); h; h = CMSG_NXTHDR (&mh, h))
    if (h->cmsg_type == SCM_RIGHTS && fd)
      memcpy (fd, CMSG_DATA (h), sizeof *fd);
    else if (h->cmsg_type == SCM_CREDENTIALS && pid)
      {
        struct ucred cr;
        memcpy (&cr, CMSG_DATA (h), sizeof cr);
        *pid = cr.pid;
      }
  return 0;
}

#endif
