/* How a sandbox ended: exit-code mapping and the JSON status record. */
#include <config.h>

#include <sched.h>

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/launch.h"
#include "linux/netproxy.h"
#include "seccomp/prog.h"
#include "sha256.h"

/* The resolved policy's digest: SHA-256 of its JSON form, which names every
 * rule, so two runs under the same digest ran under the same policy. */
static json_t *
policy_digest (const struct securer_policy *p)
{
  char *text = securer_policy_to_json_text (p, 0);
  if (text == NULL)
    return json_null ();
  struct securer_sha256 h;
  unsigned char d[SECURER_SHA256_LEN];
  securer_sha256_init (&h);
  securer_sha256_update (&h, text, strlen (text));
  securer_sha256_final (&h, d);
  free (text);
  char hex[2 * SECURER_SHA256_LEN + 1];
  for (size_t i = 0; i < SECURER_SHA256_LEN; i++)
    snprintf (hex + 2 * i, 3, "%02x", d[i]);
  return json_string (hex);
}

/* The rest of what the sandbox was held to: the policy by name and digest,
 * its rlimits, the network, the host uid, and the seccomp filter's default
 * action and rule count. */
static void
enforced_more (const struct securer_sandbox *sb, json_t *enf)
{
  const struct securer_policy *p = sb->p;
  json_object_set_new (enf, "policy", json_pack ("{s:s?, s:s?, s:o}", "name", p->name, "path", p->path,
                                                  "digest", policy_digest (p)));
  json_t *rl = json_object ();
  for (int i = 0; i < SECURER_RLIMIT_COUNT; i++)
    if (p->limits.rlimit[i].set)
      {
        const struct securer_rlimit *r = &p->limits.rlimit[i];
        json_object_set_new (rl, securer_rlimit_name ((enum securer_rlimit_id) i),
                             json_pack ("{s:o, s:o}", "soft",
                                        r->soft == UINT64_MAX ? json_null () : json_integer ((json_int_t) r->soft),
                                        "hard",
                                        r->hard == UINT64_MAX ? json_null () : json_integer ((json_int_t) r->hard)));
      }
  json_object_set_new (enf, "rlimits", rl);
  static const char *const nets[] = { [SECURER_NET_NONE] = "none", [SECURER_NET_LOOPBACK] = "loopback",
                                      [SECURER_NET_HOST] = "host", [SECURER_NET_ALLOW] = "allow" };
  json_object_set_new (enf, "network", json_string (p->network <= SECURER_NET_ALLOW ? nets[p->network] : "?"));
  if (p->network == SECURER_NET_ALLOW)
    {
      json_t *allow = json_array (), *deny = json_array ();
      for (size_t i = 0; i < p->n_net_rules; i++)
        {
          char *w = securer_net_rule_format (&p->net_rules[i]);
          if (w != NULL)
            json_array_append_new (p->net_rules[i].deny ? deny : allow, json_string (w));
          free (w);
        }
      const struct securer_net_limits *nl = &p->net_limits;
      uint64_t bytes = nl->bytes ? nl->bytes : SECURER_NET_DEFAULT_BYTES;
      json_object_set_new (enf, "network_rules",
                           json_pack ("{s:o, s:o, s:i, s:{s:I, s:o, s:I}}", "allow", allow, "deny", deny, "proxy_port",
                                      SECURER_NET_PROXY_PORT, "limits", "connections",
                                      (json_int_t) (nl->connections ? nl->connections : SECURER_NET_DEFAULT_CONNECTIONS),
                                      "bytes", bytes == UINT64_MAX ? json_null () : json_integer ((json_int_t) bytes),
                                      "idle_ms", (json_int_t) (nl->idle_ms ? nl->idle_ms : SECURER_NET_DEFAULT_IDLE_MS)));
    }
  json_object_set_new (enf, "host_uid", json_integer ((json_int_t) sb->host_uid));
  if (sb->prog != NULL)
    {
      /* The loaded program's own: a filter from the cache leaves the
       * policy's rule list unresolved. */
      struct securer_action a = sb->prog->def;
      char act[48];
      if (a.type == SECURER_ACT_ERRNO)
        snprintf (act, sizeof act, "errno %s", strerrorname_np (a.errnum) ? strerrorname_np (a.errnum) : "?");
      else
        snprintf (act, sizeof act, "%s", securer_action_name (a.type));
      json_object_set_new (enf, "seccomp_filter",
                           json_pack ("{s:s, s:I, s:I}", "default", act, "rules", (json_int_t) sb->prog->n_rules,
                                      "instructions", (json_int_t) sb->prog->bpf.len));
    }
}

void
securer_status_clear (struct securer_status *st)
{
  if (st == NULL)
    return;
  free (st->detail);
  memset (st, 0, sizeof *st);
}

int
securer_status_exit_code (const struct securer_status *st)
{
  if (st->reason == SECURER_KILL_TIMEOUT)
    return SECURER_EXIT_TIMEOUT;
  if (st->exited)
    return st->exit_code;
  return 128 + st->signal;
}

static const char *
reason_name (const struct securer_status *st)
{
  switch (st->reason)
    {
    case SECURER_KILL_TIMEOUT: return "timeout";
    case SECURER_KILL_LIMIT:
      return st->limit == SECURER_LIMIT_CPU      ? "cpu-limit"
             : st->limit == SECURER_LIMIT_MEMORY ? "memory"
             : st->limit == SECURER_LIMIT_FSIZE  ? "file-size-limit"
                                                 : "limit";
    case SECURER_KILL_SIGNAL: return "signal";
    case SECURER_KILL_SECCOMP: return "seccomp";
    case SECURER_KILL_CALLER: return "caller";
    case SECURER_KILL_NONE: break;
    }
  return NULL;
}

static json_t *
str_or_null (const char *s)
{
  return s != NULL ? json_string (s) : json_null ();
}

char *
securer_sandbox_status_json (const struct securer_sandbox *sb, const struct securer_status *st,
                             securer_err_t *err)
{
  json_t *o = json_object ();
  if (o == NULL)
    goto oom;
  json_object_set_new (o, "pid", json_integer (st->pid));
  json_object_set_new (o, "exit_status", json_integer (securer_status_exit_code (st)));
  if (st->exited)
    json_object_set_new (o, "exit_code", json_integer (st->exit_code));
  else
    {
      json_object_set_new (o, "signal", json_integer (st->signal));
      const char *sn = sigabbrev_np (st->signal);
      if (sn != NULL)
        {
          char name[32];
          snprintf (name, sizeof name, "SIG%s", sn);
          json_object_set_new (o, "signal_name", json_string (name));
        }
    }
  json_object_set_new (o, "wall_us", json_integer ((json_int_t) st->wall_us));
  json_object_set_new (o, "user_us", json_integer ((json_int_t) st->user_us));
  json_object_set_new (o, "sys_us", json_integer ((json_int_t) st->sys_us));
  json_object_set_new (o, "max_rss_kb", json_integer ((json_int_t) st->max_rss_kb));
  json_object_set_new (o, "kill_reason", str_or_null (reason_name (st)));
  if (sb->proxy != NULL)
    json_object_set_new (o, "network", securer_netproxy_report (sb->proxy));
  json_object_set_new (o, "detail", str_or_null (st->detail));

  if (sb != NULL)
    {
      const struct securer_policy *p = sb->p;
      json_t *enf = json_object ();
      json_t *ns = json_array ();
      for (unsigned bit = 1; bit <= SECURER_NS_CGROUP; bit <<= 1)
        if ((p->namespaces & bit) && securer_ns_name (bit) != NULL)
          json_array_append_new (ns, json_string (securer_ns_name (bit)));
      json_object_set_new (enf, "namespaces", ns);
      json_t *ll = json_object ();
      json_object_set_new (ll, "abi", json_integer (sb->ll.abi));
      json_object_set_new (ll, "enforced", json_boolean (sb->ll.enforced));
      json_object_set_new (ll, "handled_fs", json_integer ((json_int_t) sb->ll.handled_fs));
      json_object_set_new (ll, "handled_net", json_integer ((json_int_t) sb->ll.handled_net));
      json_object_set_new (ll, "scoped", json_integer ((json_int_t) sb->ll.scoped));
      json_object_set_new (ll, "summary", str_or_null (sb->ll.summary));
      json_object_set_new (enf, "landlock", ll);
      json_t *cg = json_object ();
      json_object_set_new (cg, "used", json_boolean (sb->cg != NULL));
      /* Per controller: the hierarchy that enforces it (1 or 2), null
       * when the limit is not enforced (not set, or best effort failed). */
      static const char *const ctrls[] = { "memory", "pids", "cpu" };
      for (size_t i = 0; i < sizeof ctrls / sizeof *ctrls; i++)
        {
          int v = securer_cgroup_version (sb->cg, ctrls[i]);
          json_object_set_new (cg, ctrls[i], v ? json_integer (v) : json_null ());
        }
      json_object_set_new (cg, "report", str_or_null (sb->cg_report));
      /* The values the policy (and the command line) asked for. */
      const struct securer_limits *l = &p->limits;
      json_object_set_new (cg, "limits",
                           json_pack ("{s:o, s:o, s:o}", "memory",
                                      l->cgroup_memory ? json_integer ((json_int_t) l->cgroup_memory) : json_null (),
                                      "pids", l->cgroup_pids ? json_integer ((json_int_t) l->cgroup_pids) : json_null (),
                                      "cpu", l->cgroup_cpu_millis ? json_real (l->cgroup_cpu_millis / 1000.0) : json_null ()));
      json_object_set_new (enf, "cgroup", cg);
      json_object_set_new (enf, "seccomp", json_boolean (sb->prog != NULL));
      enforced_more (sb, enf);
      json_object_set_new (o, "enforced", enf);
      char *degraded = securer_sandbox_degraded (sb);
      json_object_set_new (o, "degraded", str_or_null (degraded));
      free (degraded);
    }
  char *s = json_dumps (o, JSON_COMPACT);
  json_decref (o);
  if (s == NULL)
    goto oom;
  return s;
oom:
  securer_error_set (err, ENOMEM, "status record");
  return NULL;
}

unsigned
securer_sandbox_cpus (const struct securer_sandbox *sb)
{
  cpu_set_t set;
  unsigned n = sched_getaffinity (0, sizeof set, &set) == 0 ? (unsigned) CPU_COUNT (&set) : 1;
  unsigned millis = sb->p->limits.cgroup_cpu_millis;
  if (millis > 0 && securer_cgroup_version (sb->cg, "cpu") != 0)
    {
      unsigned quota = (millis + 999) / 1000;
      if (quota < n)
        n = quota;
    }
  return n > 0 ? n : 1;
}

char *
securer_sandbox_degraded (const struct securer_sandbox *sb)
{
  const struct securer_policy *p = sb->p;
  const struct securer_limits *l = &p->limits;
  char cg[160] = "";
  static const char *const ctrls[] = { "memory", "pids", "cpu" };
  bool wanted[] = { l->cgroup_memory > 0, l->cgroup_pids > 0, l->cgroup_cpu_millis > 0 };
  for (size_t i = 0; l->cgroup == SECURER_ENFORCE_BEST_EFFORT && i < sizeof ctrls / sizeof *ctrls; i++)
    if (wanted[i] && securer_cgroup_version (sb->cg, ctrls[i]) == 0)
      snprintf (cg + strlen (cg), sizeof cg - strlen (cg), "%s%s", cg[0] ? ", " : "", ctrls[i]);
  /* The landlock summary says "not enforced" for whatever the ABI lacked. */
  const char *ll = NULL;
  if (p->landlock.mode == SECURER_ENFORCE_BEST_EFFORT
      && (!sb->ll.enforced || (sb->ll.summary && strstr (sb->ll.summary, "not enforced"))))
    ll = sb->ll.summary ? sb->ll.summary : "landlock not enforced";
  if (cg[0] == '\0' && ll == NULL)
    return NULL;
  /* cg_report reads "cgroup limits applied: ...; why the others were not". */
  char *out = NULL;
  int n = asprintf (&out, "best-effort protections not applied:%s%s%s%s%s%s",
                    cg[0] ? " cgroup " : "", cg, cg[0] ? " limits (" : "",
                    cg[0] ? (sb->cg_report ? sb->cg_report : "no usable cgroup") : "",
                    cg[0] ? ")" : "", ll ? (cg[0] ? "; " : " ") : "");
  if (n < 0)
    return NULL;
  if (ll != NULL)
    {
      char *all = NULL;
      n = asprintf (&all, "%s%s", out, ll);
      free (out);
      out = n < 0 ? NULL : all;
    }
  return out;
}
