/* The payload's environment: only what the policy names. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/launch.h"

#define STR_(x) #x
#define STR(x) STR_ (x)
#define PROXY_PORT_TEXT STR (SECURER_NET_PROXY_PORT)

static const char *
lookup (char *const *env, const char *name, size_t nlen)
{
  for (; env != NULL && *env != NULL; env++)
    if (strncmp (*env, name, nlen) == 0 && (*env)[nlen] == '=')
      return *env + nlen + 1;
  return NULL;
}

/* Replaces an existing NAME= entry or appends; env has room for it. */
static int
put (char **env, size_t *n, char *entry)
{
  size_t nlen = strcspn (entry, "=");
  for (size_t i = 0; i < *n; i++)
    if (strncmp (env[i], entry, nlen) == 0 && env[i][nlen] == '=')
      {
        free (env[i]);
        env[i] = entry;
        return 0;
      }
  env[(*n)++] = entry;
  return 0;
}

static void
free_env (char **env, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (env[i]);
  free (env);
}

char **
securer_linux_build_env (const struct securer_policy *p, char *const *caller_env,
                         char *const *extra, securer_err_t *err)
{
  size_t n_extra = 0;
  for (; extra != NULL && extra[n_extra] != NULL; n_extra++)
    ;
  /* The proxy of `network allow`, in the names programs look for; last,
   * so that a caller's own proxy settings (unreachable inside) do not
   * win.  HTTP_PROXY in capitals is left out: CGI programs take it from a
   * request header ("httpoxy"), so curl ignores it and so does this. */
  static const char *const proxy_env[] = {
    "http_proxy=http://127.0.0.1:" PROXY_PORT_TEXT, "https_proxy=http://127.0.0.1:" PROXY_PORT_TEXT,
    "HTTPS_PROXY=http://127.0.0.1:" PROXY_PORT_TEXT, "all_proxy=socks5h://127.0.0.1:" PROXY_PORT_TEXT,
    "ALL_PROXY=socks5h://127.0.0.1:" PROXY_PORT_TEXT, "no_proxy=localhost,127.0.0.1,::1",
    "NO_PROXY=localhost,127.0.0.1,::1",
  };
  size_t n_proxy = p->network == SECURER_NET_ALLOW ? sizeof proxy_env / sizeof *proxy_env : 0;
  size_t cap = p->n_env_keep + p->n_env_set + n_extra + n_proxy + 1, n = 0;
  char **env = calloc (cap, sizeof *env);
  if (env == NULL)
    goto oom;
  for (size_t i = 0; i < p->n_env_keep; i++)
    {
      const char *name = p->env_keep[i];
      const char *v = lookup (caller_env, name, strlen (name));
      if (v == NULL)
        continue;
      char *e = NULL;
      if (asprintf (&e, "%s=%s", name, v) < 0)
        goto oom;
      put (env, &n, e);
    }
  for (size_t i = 0; i < p->n_env_set; i++)
    {
      char *e = NULL;
      if (asprintf (&e, "%s=%s", p->env_set[i].name, p->env_set[i].value ? p->env_set[i].value : "") < 0)
        goto oom;
      put (env, &n, e);
    }
  for (size_t i = 0; i < n_extra; i++)
    {
      if (strchr (extra[i], '=') == NULL || extra[i][0] == '=')
        {
          free_env (env, n);
          securer_error_set (err, EINVAL, "environment entry '%s' is not NAME=value", extra[i]);
          return NULL;
        }
      char *e = strdup (extra[i]);
      if (e == NULL)
        goto oom;
      put (env, &n, e);
    }
  for (size_t i = 0; i < n_proxy; i++)
    {
      char *e = strdup (proxy_env[i]);
      if (e == NULL)
        goto oom;
      put (env, &n, e);
    }
  env[n] = NULL;
  return env;
oom:
  if (env != NULL)
    free_env (env, n);
  securer_error_set (err, ENOMEM, "build environment");
  return NULL;
}
