/* The sandbox's network (net.c): loopback mode brings lo up over
 * rtnetlink, none mode leaves every address unreachable.  Checked from a
 * real process in a real new network namespace. */
#include <config.h>

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "rootfs-harness.h"

static int
tcp_connect (const char *ip, int port)
{
  int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return -1;
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
  inet_pton (AF_INET, ip, &a.sin_addr);
  int rc = connect (s, (struct sockaddr *) &a, sizeof a);
  int e = errno;
  close (s);
  errno = e;
  return rc;
}

static void
inside_net (void *arg)
{
  (void) arg;
  int s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr = { 0 };
  strcpy (ifr.ifr_name, "lo");
  if (s >= 0 && ioctl (s, SIOCGIFFLAGS, &ifr) == 0)
    fact ("lo_up", "%d", (ifr.ifr_flags & IFF_UP) != 0);
  if (s >= 0)
    close (s);

  /* A listener inside, and a client connecting to it. */
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = { .sin_family = AF_INET };
  inet_pton (AF_INET, "127.0.0.1", &a.sin_addr);
  int rc = bind (l, (struct sockaddr *) &a, sizeof a);
  fact_rc ("bind_127", rc);
  if (rc == 0 && listen (l, 1) == 0)
    {
      socklen_t len = sizeof a;
      getsockname (l, (struct sockaddr *) &a, &len);
      fact_rc ("connect_listener", tcp_connect ("127.0.0.1", ntohs (a.sin_port)));
    }
  close (l);
  fact_rc ("connect_127_closed_port", tcp_connect ("127.0.0.1", 9));
  fact_rc ("connect_outside", tcp_connect ("192.0.2.1", 80));
}

static char *
run_net (enum securer_net_mode mode)
{
  struct securer_policy p = { .name = (char *) "test", .network = mode };
  struct harness_steps s = { .policy = &p, .network = true, .inside = inside_net };
  char *f = harness_run (&s);
  cr_assert_not_null (f, "could not create the namespaces");
  cr_log_info ("%s", f);
  cr_assert_str_eq (get_fact (f, "setup"), "ok", "%s", f);
  return f;
}

Test (net, loopback_brings_lo_up)
{
  char *f = run_net (SECURER_NET_LOOPBACK);
  cr_assert_str_eq (get_fact (f, "lo_up"), "1");
  cr_assert_str_eq (get_fact (f, "bind_127"), "OK");
  cr_assert_str_eq (get_fact (f, "connect_listener"), "OK");
  cr_assert_str_eq (get_fact (f, "connect_127_closed_port"), "ECONNREFUSED");
  cr_assert_str_eq (get_fact (f, "connect_outside"), "ENETUNREACH");
  free (f);
}

Test (net, none_leaves_everything_unreachable)
{
  char *f = run_net (SECURER_NET_NONE);
  cr_assert_str_eq (get_fact (f, "lo_up"), "0");
  cr_assert_str_eq (get_fact (f, "connect_listener"), "ENETUNREACH");
  cr_assert_str_eq (get_fact (f, "connect_127_closed_port"), "ENETUNREACH");
  cr_assert_str_eq (get_fact (f, "connect_outside"), "ENETUNREACH");
  free (f);
}

/* Brings lo up in a child that unshared `flags` (a user namespace, and
 * the network or not), errno set to ENOTRECOVERABLE first, and returns
 * "rc|errno name of the error|its message|errno afterwards". */
static void
loopback_in_child (int flags, char *buf, size_t size)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (p[0]);
      if (unshare (flags) < 0)
        _exit (1);
      struct securer_policy pol = { .name = (char *) "test", .network = SECURER_NET_LOOPBACK };
      securer_err_t err = NULL;
      errno = ENOTRECOVERABLE;
      int rc = securer_linux_setup_network (&pol, &err);
      int after = errno;
      dprintf (p[1], "%d|%s|%s|%s", rc, err ? errname (-1, securer_error_errno (err)) : "OK",
               err ? securer_error_message (err) : "", errname (-1, after));
      _exit (0);
    }
  close (p[1]);
  ssize_t n = read (p[0], buf, size - 1);
  buf[n > 0 ? n : 0] = '\0';
  close (p[0]);
  waitpid (pid, NULL, 0);
}

Test (net, refusal_is_reported_with_errno)
{
  /* A user namespace of its own but the host's network: no CAP_NET_ADMIN
   * over that network, so the kernel refuses and the error says so. */
  char buf[512];
  loopback_in_child (CLONE_NEWUSER, buf, sizeof buf);
  cr_assert_eq (strncmp (buf, "-1|EPERM|bring up lo: RTM_NEWLINK refused", 41), 0, "%s", buf);
  /* errno untouched: pid 1 makes this step while the payload shares its
   * memory (init.c). */
  cr_assert (strstr (buf, "|ENOTRECOVERABLE") != NULL, "%s", buf);
}

Test (net, loopback_leaves_errno_alone)
{
  char buf[512];
  loopback_in_child (CLONE_NEWUSER | CLONE_NEWNET, buf, sizeof buf);
  cr_assert_str_eq (buf, "0|OK||ENOTRECOVERABLE");
}
