/* The filtering proxy of `network allow` (docs/security.md, "Network by
 * allowlist").  The sandbox has its own network namespace with loopback
 * only; its pid 1 side listens on 127.0.0.1:SECURER_NET_PROXY_PORT there
 * and hands the listening socket to the supervisor, which runs this proxy
 * outside: HTTP CONNECT, plain HTTP forwarding and SOCKS5 on that one
 * port, every destination decided by the policy's net rules
 * (policy/netrule.c), names resolved outside.
 *
 * One proxy per sandbox, driven by the supervisor's own event loop: its
 * descriptors sit behind one epoll fd (securer_netproxy_fd), which the
 * sandbox's epoll watches; securer_netproxy_dispatch handles whatever is
 * ready without blocking.  No thread per connection: name resolution runs
 * on one resolver thread of the process. */
#ifndef SECURER_NETPROXY_H
#define SECURER_NETPROXY_H

#include <stdint.h>

#include "securer/error.h"
#include "securer/policy.h"
#include "securer/sandbox.h"

/* What one sandbox's proxy may use is the policy's `network limit`
 * (struct securer_net_limits, defaults in securer/policy.h). */
#define SECURER_NETPROXY_MAX_DENIED 64           /* distinct denials kept for the report */

struct securer_netproxy;

/* Inside the sandbox's network namespace: a listening socket on
 * 127.0.0.1:SECURER_NET_PROXY_PORT (non-blocking, close-on-exec), or -1
 * with *err set. */
int securer_netproxy_listen (securer_err_t *err);

/* Takes listen_fd (a listening TCP socket in the sandbox's namespace).
 * on_net/ctx (may be NULL) hear of every decision. */
int securer_netproxy_new (const struct securer_policy *p, int listen_fd,
                          void (*on_net) (void *ctx, const struct securer_net_event *ev), void *ctx,
                          struct securer_netproxy **out, securer_err_t *err);
/* A descriptor readable whenever dispatch has work. */
int securer_netproxy_fd (const struct securer_netproxy *px);
/* Handles everything ready now; never blocks. */
void securer_netproxy_dispatch (struct securer_netproxy *px);
/* {"connections": N, "denied": [{"host","port","reason","count"}…],
 *  "bytes": N, "refused_over_limit": N} as a jansson object (json_t *). */
void *securer_netproxy_report (const struct securer_netproxy *px);
/* Closes every connection and frees. */
void securer_netproxy_free (struct securer_netproxy *px);

#endif
