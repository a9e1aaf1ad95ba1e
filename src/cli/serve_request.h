/* The part of a `securer serve` request that needs no server state: the
 * line parsed and its envelope checked, and the tool declarations of
 * "open"/"pool_open" turned into a registry.  Kept apart from the server
 * so that it can be exercised on arbitrary input (tests/fuzz). */
#ifndef SECURER_SERVE_REQUEST_H
#define SECURER_SERVE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "securer/error.h"
#include "securer/policy.h"
#include "securer/session.h"

struct serve_request {
  json_t *req;        /* the request object (NULL when the line is not one); owns the rest */
  json_t *id;         /* "id", echoed in the reply; NULL when absent */
  const char *op;     /* "op"; NULL when the request has none */
};

/* Parses one request line (duplicate keys rejected).  On failure *err
 * holds the message the client is answered with, and r->id the id to
 * answer it with (NULL when the line is not a JSON object).  Either way
 * serve_request_clear() releases r. */
int serve_request_parse (const char *line, size_t len, struct serve_request *r,
                         securer_err_t *err);
void serve_request_clear (struct serve_request *r);

/* The inline "limits" of an open request ({"cpu": s, "memory": bytes,
 * "fsize": bytes, "nproc": n, "nofile": n, "stack": bytes}) set on p, each
 * replacing the policy's soft and hard limit.  A value above the policy's
 * hard limit is refused (EPERM).  Absent or null: nothing. */
int serve_limits_apply (struct securer_policy *p, const json_t *limits, securer_err_t *err);
/* The "network" of an open request: an array of `network allow` words
 * (HOST[:PORT], *.DOMAIN, addresses), refused unless allowed (the
 * operator's --allow-network). */
int serve_network_apply (struct securer_policy *p, const json_t *network, bool allowed, securer_err_t *err);

/* The "sandbox" member of an open or pool_open request: absent or true,
 * the OS sandbox (*sandboxed true); false, the shipped r-unsandboxed
 * policy, which then may not be combined with "policy". */
int serve_sandbox_flag (const json_t *req, bool *sandboxed, securer_err_t *err);

/* The "timeout" of an execute request (seconds) in milliseconds; 0, the
 * session's default, when it is absent or not positive; UINT64_MAX (no
 * timeout) when it is null or too long to count. */
uint64_t serve_timeout_ms (const json_t *timeout);

/* The "plots" member of an execute request into xo: absent or true, PNG
 * pages of the defaults; false, none; an object of "format" ("png",
 * "svg"), "width", "height" (pixels) and "res" (pixels per inch), each
 * optional. */
int serve_plots_parse (const json_t *plots, struct securer_exec_opts *xo, securer_err_t *err);

/* A registry for the "tools" member of an open request (absent or null:
 * no tools); NULL with *err set when a declaration is malformed. */
struct securer_tools *serve_tools_from_json (const json_t *arr, securer_err_t *err);

#endif
