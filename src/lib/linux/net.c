/* Network of the sandbox: with SECURER_NET_LOOPBACK the new network
 * namespace gets its loopback interface up, over rtnetlink — no ioctl, no
 * external `ip`, and no netlink library: one fixed request and its ACK are
 * all there is, and without a library that exists only as a shared object
 * the CLI can be linked statically (docs/architecture.md, "Build").  SECURER_NET_NONE leaves the namespace as the
 * kernel made it (lo down: every address is unreachable);
 * SECURER_NET_HOST means the launcher did not unshare the network. */
#include <config.h>

#include <errno.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "linux/linux.h"

/* RTM_NEWLINK for "lo" with IFF_UP, as the kernel reads it. */
struct up_request {
  struct nlmsghdr h;
  struct ifinfomsg ifm;
  struct rtattr name_attr;
  char name[NLMSG_ALIGN (sizeof "lo")];
};

/* 1: the ACK for seq arrived; 0: not yet; -1 with errno: refused, or an
 * answer that is not ours. */
static int
read_answer (const char *buf, size_t len, unsigned seq, unsigned portid)
{
  const struct nlmsghdr *h;
  for (size_t off = 0; off < len && len - off >= sizeof *h; off += NLMSG_ALIGN (h->nlmsg_len))
    {
      h = (const struct nlmsghdr *) (const void *) (buf + off);
      if (h->nlmsg_len < sizeof *h || h->nlmsg_len > len - off)
        {
          errno = EBADMSG;
          return -1;
        }
      if (h->nlmsg_seq != seq || (h->nlmsg_pid != 0 && h->nlmsg_pid != portid))
        {
          errno = EPROTO;
          return -1;
        }
      if (h->nlmsg_type == NLMSG_ERROR)
        {
          if (h->nlmsg_len < NLMSG_LENGTH (sizeof (struct nlmsgerr)))
            {
              errno = EBADMSG;
              return -1;
            }
          const struct nlmsgerr *e = NLMSG_DATA (h);
          if (e->error != 0)
            {
              errno = -e->error;
              return -1;
            }
          return 1;
        }
      if (h->nlmsg_type == NLMSG_DONE)
        return 1;
    }
  return 0;
}

int
securer_linux_setup_network (const struct securer_policy *p, securer_err_t *err)
{
  if (p->network != SECURER_NET_LOOPBACK)
    return 0;

  /* On the stack: this runs in the sandbox's child, which allocates
   * nothing. */
  _Alignas (struct nlmsghdr) char buf[8192];
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
  struct up_request req;
  memset (&req, 0, sizeof req);
  req.h.nlmsg_len = sizeof req;
  req.h.nlmsg_type = RTM_NEWLINK;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  req.h.nlmsg_seq = seq;
  req.ifm.ifi_family = AF_UNSPEC;
  /* Index 0 plus IFLA_IFNAME makes the kernel look the device up by name
   * (no RTM_GETLINK round trip, no ioctl); without NLM_F_CREATE a missing
   * "lo" is ENODEV rather than a new device. */
  req.ifm.ifi_index = 0;
  req.ifm.ifi_flags = IFF_UP;
  req.ifm.ifi_change = IFF_UP;
  req.name_attr.rta_type = IFLA_IFNAME;
  req.name_attr.rta_len = RTA_LENGTH (sizeof "lo");
  memcpy (req.name, "lo", sizeof "lo");

  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  if (sendto (nl, &req, sizeof req, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0)
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
      int r = read_answer (buf, (size_t) n, seq, portid);
      if (r < 0)
        {
          securer_error_set (err, errno, "bring up lo: RTM_NEWLINK refused");
          goto out;
        }
      if (r > 0)
        break;
    }
  rc = 0;
out:
  close (nl);
  return rc;
}
