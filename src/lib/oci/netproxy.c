/* run.securer.network-allow: a container reaches the hosts the annotation
 * names, and nothing else, through the same proxy `network allow` gives a
 * sandbox (linux/netproxy.c, docs/security.md "Network by allowlist").
 * In OCI mode nothing of securer supervises the container, so, as with
 * run.securer.report-denials, create starts the one piece that must run
 * beside it: a small detached process that serves the proxy and ends
 * with the container's init. */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/netproxy.h"
#include "oci/oci.h"
#include "seccomp/seccomp.h"

#define ANNOTATION "annotations.run.securer.network-allow"

int
oci_network_policy (const struct oci_spec *s, struct securer_policy **out, securer_err_t *err)
{
  *out = NULL;
  if (s->network_allow == NULL)
    return 0;
  if (!s->ns_wanted[OCI_NS_NET] || s->ns_path[OCI_NS_NET] != NULL)
    return securer_error_set (err, EINVAL, "%s: the container needs a network namespace of its own "
                              "(linux.namespaces: network, without a path)", ANNOTATION);
  struct securer_policy *p = calloc (1, sizeof *p);
  char *words = strdup (s->network_allow);
  if (p == NULL || words == NULL)
    {
      free (p);
      free (words);
      return securer_error_set (err, ENOMEM, "%s", ANNOTATION);
    }
  p->namespaces = SECURER_NS_NET;
  /* Words separated by spaces or commas, as an operator writes a list. */
  int rc = 0;
  char *save = NULL;
  for (char *w = strtok_r (words, " \t,", &save); w != NULL && rc == 0; w = strtok_r (NULL, " \t,", &save))
    {
      const char *one[] = { w };
      rc = securer_policy_add_net_rules (p, one, 1, false, err);
    }
  free (words);
  if (rc < 0)
    {
      securer_policy_free (p);
      return securer_error_prefix (err, "%s", ANNOTATION);
    }
  *out = p;
  return 0;
}

int
oci_network_env (struct oci_spec *s, securer_err_t *err)
{
  if (s->network_allow == NULL)
    return 0;
  /* As linux/env.c gives a sandbox; HTTP_PROXY in capitals left out for
   * the same reason ("httpoxy"). */
  static const char *const add[] = {
    "http_proxy=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
    "HTTPS_PROXY=http://127.0.0.1:3128", "all_proxy=socks5h://127.0.0.1:3128",
    "ALL_PROXY=socks5h://127.0.0.1:3128", "no_proxy=localhost,127.0.0.1,::1",
    "NO_PROXY=localhost,127.0.0.1,::1",
  };
  size_t n = 0;
  while (s->proc.env != NULL && s->proc.env[n] != NULL)
    n++;
  size_t na = sizeof add / sizeof *add;
  char **env = realloc (s->proc.env, (n + na + 1) * sizeof *env);
  if (env == NULL)
    return securer_error_set (err, ENOMEM, "%s: environment", ANNOTATION);
  s->proc.env = env;
  for (size_t i = 0; i < na; i++)
    {
      size_t nl = strcspn (add[i], "=") + 1;
      /* The spec's own setting of a name is replaced: the container can
       * reach no other proxy. */
      size_t k = 0;
      while (k < n && strncmp (env[k], add[i], nl) != 0)
        k++;
      char *e = strdup (add[i]);
      if (e == NULL)
        return securer_error_set (err, ENOMEM, "%s: environment", ANNOTATION);
      if (k < n)
        free (env[k]);
      else
        n++;
      env[k] = e;
    }
  env[n] = NULL;
  return 0;
}

int
oci_netproxy_listen (int sock, securer_err_t *err)
{
  int fd = securer_netproxy_listen (err);
  if (fd < 0)
    return securer_error_prefix (err, "%s", ANNOTATION);
  int rc = securer_seccomp_give_listener (sock, fd);
  close (fd);
  if (rc < 0)
    return securer_error_set (err, -rc, "%s: hand the proxy's socket to the runtime", ANNOTATION);
  return 0;
}

static void __attribute__ ((noreturn))
serve (const struct securer_policy *p, int sock, int pidfd)
{
  int lfd = -1;
  securer_err_t err = NULL;
  if (securer_seccomp_recv_listener (sock, &lfd, &err) < 0)
    _exit (0);
  close (sock);
  struct securer_netproxy *px = NULL;
  if (securer_netproxy_new (p, lfd, NULL, NULL, &px, &err) < 0)
    _exit (1);
  for (;;)
    {
      struct pollfd pf[2] = { { pidfd, POLLIN, 0 }, { securer_netproxy_fd (px), POLLIN, 0 } };
      int r = poll (pf, 2, -1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 || pf[0].revents)
        break;  /* the container's init is gone */
      securer_netproxy_dispatch (px);
    }
  securer_netproxy_free (px);
  _exit (0);
}

int
oci_netproxy_start (const struct securer_policy *p, int sock, int pidfd, securer_err_t *err)
{
  int r = oci_detach (sock, pidfd, err);
  if (r == 0)
    serve (p, sock, pidfd);
  return r < 0 ? securer_error_prefix (err, "%s: start the proxy", ANNOTATION) : 0;
}
