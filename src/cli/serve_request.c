/* Decoding of `securer serve` requests that needs no server state. */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "serve_request.h"

int
serve_request_parse (const char *line, size_t len, struct serve_request *r, securer_err_t *err)
{
  memset (r, 0, sizeof *r);
  json_error_t je;
  json_t *req = json_loadb (line, len, JSON_REJECT_DUPLICATES, &je);
  if (!json_is_object (req))
    {
      json_decref (req);
      return securer_error_set (err, 0, "malformed request: %s", je.text);
    }
  r->req = req;
  r->id = json_object_get (req, "id");
  r->op = json_string_value (json_object_get (req, "op"));
  if (r->op == NULL)
    return securer_error_set (err, 0, "request needs an \"op\" string");
  return 0;
}

void
serve_request_clear (struct serve_request *r)
{
  json_decref (r->req);
  memset (r, 0, sizeof *r);
}

int
serve_sandbox_flag (const json_t *req, bool *sandboxed, securer_err_t *err)
{
  const json_t *sb = json_object_get (req, "sandbox");
  *sandboxed = true;
  if (sb == NULL || json_is_true (sb))
    return 0;
  if (!json_is_false (sb))
    return securer_error_set (err, EINVAL, "\"sandbox\" must be true or false");
  if (json_object_get (req, "policy") != NULL && !json_is_null (json_object_get (req, "policy")))
    return securer_error_set (err, EINVAL, "\"sandbox\": false runs the shipped r-unsandboxed policy "
                              "and takes no \"policy\" (\"limits\" apply)");
  *sandboxed = false;
  return 0;
}

struct securer_tools *
serve_tools_from_json (const json_t *arr, securer_err_t *err)
{
  struct securer_tools *t = securer_tools_new ();
  if (t == NULL)
    {
      securer_error_set (err, ENOMEM, "tools");
      return NULL;
    }
  if (arr == NULL || json_is_null (arr))
    return t;
  if (!json_is_array (arr))
    {
      securer_tools_unref (t);
      securer_error_set (err, EINVAL, "\"tools\" must be an array");
      return NULL;
    }
  size_t i;
  json_t *tj;
  json_array_foreach (arr, i, tj)
  {
    const char *name = json_string_value (json_object_get (tj, "name"));
    const char *desc = json_string_value (json_object_get (tj, "description"));
    json_t *args = json_object_get (tj, "args");
    struct securer_tool_arg a[64];
    size_t n = 0;
    if (args != NULL && !json_is_object (args))
      {
        securer_tools_unref (t);
        securer_error_set (err, EINVAL, "tool %zu: \"args\" must be an object of NAME: TYPE", i + 1);
        return NULL;
      }
    const char *k;
    json_t *v;
    json_object_foreach (args, k, v)
    {
      int ty = json_is_string (v) ? securer_arg_type_parse (json_string_value (v)) : -1;
      if (ty < 0 || n == 64)
        {
          securer_tools_unref (t);
          securer_error_set (err, EINVAL, "tool %zu: argument '%s' needs a type (numeric, integer, "
                                          "character, logical, list, data.frame, any)", i + 1, k);
          return NULL;
        }
      a[n].name = k;
      a[n].type = (enum securer_arg_type) ty;
      n++;
    }
    if (securer_tools_add (t, name ? name : "", desc, a, n, NULL, NULL, err) < 0)
      {
        securer_tools_unref (t);
        return NULL;
      }
  }
  return t;
}

uint64_t
serve_timeout_ms (const json_t *timeout)
{
  if (json_is_null (timeout))
    return UINT64_MAX;
  double ms = json_number_value (timeout) * 1000.0;
  if (!(ms > 0))
    return 0;
  /* Converting a double beyond the range of uint64_t is undefined; such a
   * timeout (over 500 million years) is as good as none. */
  return ms < 18446744073709551616.0 ? (uint64_t) ms : UINT64_MAX;
}

int
serve_plots_parse (const json_t *plots, struct securer_exec_opts *xo, securer_err_t *err)
{
  if (plots == NULL || json_is_true (plots))
    return 0;
  if (json_is_false (plots))
    {
      xo->plot_format = SECURER_PLOT_NONE;
      return 0;
    }
  if (!json_is_object (plots))
    return securer_error_set (err, EINVAL, "\"plots\" must be true, false or an object of format, width, "
                              "height, res");
  const char *k;
  json_t *v;
  json_object_foreach ((json_t *) plots, k, v)
  {
    if (strcmp (k, "format") == 0)
      {
        int f = securer_plot_format_parse (json_string_value (v));
        if (f < 0)
          return securer_error_set (err, EINVAL, "plots: \"format\" must be \"png\", \"svg\" or \"none\"");
        xo->plot_format = (enum securer_plot_format) f;
        continue;
      }
    unsigned *field = strcmp (k, "width") == 0 ? &xo->plot_width
                      : strcmp (k, "height") == 0 ? &xo->plot_height
                      : strcmp (k, "res") == 0 ? &xo->plot_res : NULL;
    if (field == NULL)
      return securer_error_set (err, EINVAL, "plots: unknown key '%s' (known: format, width, height, res)", k);
    /* The session's bounds: a side of 10000 pixels is a 400 MB bitmap. */
    if (!json_is_integer (v) || json_integer_value (v) < 1 || json_integer_value (v) > 10000)
      return securer_error_set (err, EINVAL, "plots: \"%s\" must be a whole number 1..10000", k);
    *field = (unsigned) json_integer_value (v);
  }
  return 0;
}

/* The names a host uses (those of the R package's limits), and the
 * resource each sets. */
static const struct {
  const char *name;
  enum securer_rlimit_id id;
} limit_names[] = {
  { "cpu", SECURER_RLIMIT_CPU }, { "memory", SECURER_RLIMIT_AS }, { "fsize", SECURER_RLIMIT_FSIZE },
  { "nproc", SECURER_RLIMIT_NPROC }, { "nofile", SECURER_RLIMIT_NOFILE },
  { "stack", SECURER_RLIMIT_STACK },
};

int
serve_limits_apply (struct securer_policy *p, const json_t *limits, securer_err_t *err)
{
  if (limits == NULL || json_is_null (limits))
    return 0;
  if (!json_is_object (limits))
    return securer_error_set (err, EINVAL, "\"limits\" must be an object of NAME: NUMBER");
  const char *k;
  json_t *v;
  json_object_foreach ((json_t *) limits, k, v)
  {
    size_t i = 0;
    size_t n = sizeof limit_names / sizeof limit_names[0];
    while (i < n && strcmp (k, limit_names[i].name) != 0)
      i++;
    if (i == n)
      return securer_error_set (err, EINVAL, "unknown limit '%s' (known: cpu, memory, fsize, nproc, "
                                "nofile, stack)", k);
    /* Whole units, rounded up as R's ceiling() would (a fraction of a
     * second of CPU is a second); 2^62 is beyond any resource. */
    double x = json_number_value (v);
    if (!json_is_number (v) || !(x >= 0) || x > 4611686018427387904.0)
      return securer_error_set (err, EINVAL, "limit '%s' must be a number >= 0", k);
    struct securer_rlimit *r = &p->limits.rlimit[limit_names[i].id];
    uint64_t whole = (uint64_t) x;
    whole += (double) whole < x;
    /* The operator's policy is the most a client gets: a request may
     * tighten a limit, never loosen one. */
    if (r->set && whole > r->hard)
      return securer_error_set (err, EPERM, "limit '%s' %llu is above the policy's %llu: a request may "
                                "only lower the policy's limits", k, (unsigned long long) whole,
                                (unsigned long long) r->hard);
    r->set = true;
    r->soft = r->hard = whole;
  }
  return 0;
}

int
serve_network_apply (struct securer_policy *p, const json_t *network, bool allowed, securer_err_t *err)
{
  if (network == NULL || json_is_null (network))
    return 0;
  /* Checked before the operator's permission: a malformed request says
   * what is wrong with it whoever serves it. */
  if (!json_is_array (network) || json_array_size (network) == 0 || json_array_size (network) > 256)
    return securer_error_set (err, EINVAL, "\"network\" must be an array of 1 to 256 host names "
                              "(HOST, HOST:PORT, *.DOMAIN or an address)");
  size_t n = json_array_size (network);
  const char **words = calloc (n, sizeof *words);
  if (words == NULL)
    return securer_error_set (err, ENOMEM, "\"network\"");
  for (size_t i = 0; i < n; i++)
    {
      const json_t *w = json_array_get (network, i);
      if (!json_is_string (w) || strlen (json_string_value (w)) != json_string_length (w))
        {
          free (words);
          return securer_error_set (err, EINVAL, "\"network\"[%zu] must be a string", i);
        }
      words[i] = json_string_value (w);
    }
  int rc;
  if (!allowed)
    rc = securer_error_set (err, EPERM, "\"network\" needs the server to be started with --allow-network");
  else
    rc = securer_policy_add_net_rules (p, words, n, false, err);
  free (words);
  if (rc < 0)
    securer_error_prefix (err, "\"network\"");
  return rc;
}
