/* Network of the sandbox: with SECURER_NET_LOOPBACK the new network
 * namespace gets its loopback interface up, over rtnetlink (libmnl) — no
 * ioctl, no external `ip`.  SECURER_NET_NONE leaves the namespace as the
 * kernel made it (lo down: every address is unreachable);
 * SECURER_NET_HOST means the launcher did not unshare the network. */
#include <config.h>

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "linux/linux.h"
#include "raw-syscall.h"

/* The kernel's answer to our one request: 0 for its ACK, a negative errno
 * for its refusal or a malformed answer, 1 when the buffer held no answer
 * to this request yet.  Read with libmnl's accessors, not mnl_cb_run,
 * which sets errno (to 0 on an ACK): this runs in pid 1 while it shares
 * its memory, errno included, with the payload (init.c). */
static int
read_ack (const void *buf, size_t len, unsigned seq, unsigned portid)
{
  const struct nlmsghdr *nlh = buf;
  int left = (int) len;
  for (; mnl_nlmsg_ok (nlh, left); nlh = mnl_nlmsg_next (nlh, &left))
    {
      if (!mnl_nlmsg_seq_ok (nlh, seq) || !mnl_nlmsg_portid_ok (nlh, portid))
        return -ESRCH;
      if (nlh->nlmsg_type != NLMSG_ERROR)
        continue;
      if (nlh->nlmsg_len < mnl_nlmsg_size (sizeof (struct nlmsgerr)))
        return -EBADMSG;
      const struct nlmsgerr *e = mnl_nlmsg_get_payload (nlh);
      /* rtnetlink answers with a negative errno; some subsystems with a
       * positive one. */
      return e->error < 0 ? e->error : -e->error;
    }
  return left == 0 ? 1 : -EBADMSG;
}

int
securer_linux_setup_network (const struct securer_policy *p, securer_err_t *err)
{
  if (p->network != SECURER_NET_LOOPBACK && p->network != SECURER_NET_ALLOW)
    return 0;

  char buf[8192]; /* MNL_SOCKET_BUFFER_SIZE upper bound, without a VLA */
  /* A plain socket, not libmnl's, which allocates its handle: this runs in
   * the sandbox's child, which allocates nothing.  libmnl still builds and
   * parses the messages, in buf.  The system calls are raw-syscall.h's,
   * errno left alone (read_ack says why). */
  long nl = SECURER_SYS3 (SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (nl < 0)
    return securer_error_set (err, (int) -nl, "bring up lo: open rtnetlink socket");
  int rc = -1;
  struct sockaddr_nl local = { .nl_family = AF_NETLINK };
  socklen_t alen = sizeof local;
  long r = SECURER_SYS3 (SYS_bind, nl, &local, sizeof local);
  if (r == 0)
    r = SECURER_SYS3 (SYS_getsockname, nl, &local, &alen);
  if (r < 0)
    {
      securer_error_set (err, (int) -r, "bring up lo: bind rtnetlink socket");
      goto out;
    }

  unsigned seq = (unsigned) time (NULL);
  struct nlmsghdr *nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = RTM_NEWLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = seq;
  struct ifinfomsg *ifm = mnl_nlmsg_put_extra_header (nlh, sizeof *ifm);
  ifm->ifi_family = AF_UNSPEC;
  /* Index 0 plus IFLA_IFNAME makes the kernel look the device up by name
   * (no RTM_GETLINK round trip, no ioctl); without NLM_F_CREATE a missing
   * "lo" is ENODEV rather than a new device. */
  ifm->ifi_index = 0;
  ifm->ifi_flags = IFF_UP;
  ifm->ifi_change = IFF_UP;
  mnl_attr_put_strz (nlh, IFLA_IFNAME, "lo");

  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  r = SECURER_SYS6 (SYS_sendto, nl, nlh, nlh->nlmsg_len, 0, &kernel, sizeof kernel);
  if (r < 0)
    {
      securer_error_set (err, (int) -r, "bring up lo: send RTM_NEWLINK");
      goto out;
    }
  for (;;)
    {
      long n = SECURER_SYS6 (SYS_recvfrom, nl, buf, sizeof buf, 0, NULL, NULL);
      if (n == -EINTR)
        continue;
      if (n < 0)
        {
          securer_error_set (err, (int) -n, "bring up lo: receive the answer");
          goto out;
        }
      int a = read_ack (buf, (size_t) n, seq, local.nl_pid);
      if (a < 0)
        {
          securer_error_set (err, -a, "bring up lo: RTM_NEWLINK refused");
          goto out;
        }
      if (a == 0)
        break;
    }
  rc = 0;
out:
  (void) SECURER_SYS1 (SYS_close, nl);
  return rc;
}
