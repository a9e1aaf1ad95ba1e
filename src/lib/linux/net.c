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
#include <time.h>
#include <unistd.h>

#include "linux/linux.h"

static int
ack_cb (const struct nlmsghdr *nlh, void *data)
{
  (void) nlh;
  (void) data;
  return MNL_CB_OK;
}

int
securer_linux_setup_network (const struct securer_policy *p, securer_err_t *err)
{
  if (p->network != SECURER_NET_LOOPBACK)
    return 0;

  char buf[8192]; /* MNL_SOCKET_BUFFER_SIZE upper bound, without a VLA */
  /* A plain socket, not libmnl's, which allocates its handle: this runs in
   * the sandbox's child, which allocates nothing.  libmnl still builds and
   * parses the messages, in buf. */
  int nl = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (nl < 0)
    return securer_error_set (err, errno, "bring up lo: open rtnetlink socket");
  int rc = -1;
  struct sockaddr_nl local = { .nl_family = AF_NETLINK };
  socklen_t alen = sizeof local;
  if (bind (nl, (struct sockaddr *) &local, sizeof local) < 0
      || getsockname (nl, (struct sockaddr *) &local, &alen) < 0)
    {
      securer_error_set (err, errno, "bring up lo: bind rtnetlink socket");
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
  if (sendto (nl, nlh, nlh->nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0)
    {
      securer_error_set (err, errno, "bring up lo: send RTM_NEWLINK");
      goto out;
    }
  unsigned portid = local.nl_pid;
  for (;;)
    {
      ssize_t n = recv (nl, buf, sizeof buf, 0);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          securer_error_set (err, errno, "bring up lo: receive the answer");
          goto out;
        }
      /* mnl_cb_run turns an NLMSG_ERROR with a non-zero code into -1 with
       * errno set to it, and stops at the ACK (error code 0). */
      int cb = mnl_cb_run (buf, (size_t) n, seq, portid, ack_cb, NULL);
      if (cb < 0)
        {
          securer_error_set (err, errno, "bring up lo: RTM_NEWLINK refused");
          goto out;
        }
      if (cb == MNL_CB_STOP)
        break;
    }
  rc = 0;
out:
  close (nl);
  return rc;
}
