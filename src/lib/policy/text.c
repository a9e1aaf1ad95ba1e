/* The resolved policy printed in the policy language itself, every default
 * spelled out and every @group expanded, for `securer policy show`.  The
 * output reads back into the same policy. */
#include <config.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "seccomp/ruletext.h"
#include "seccomp/seccomp.h"

struct out {
  char *buf;
  size_t len;
  FILE *f;
};

static bool
needs_quotes (const char *s)
{
  if (*s == '\0' || *s == '#')
    return true;
  for (const char *c = s; *c; c++)
    if (*c == ' ' || *c == '\t' || *c == '"' || *c == '\\' || *c == '\n' || *c == '\r'
        || *c == '\f' || *c == '\v')
      return true;
  return false;
}

static void
print_host (FILE *f, int64_t host)
{
  if (host >= 0)
    fprintf (f, " host=%" PRId64 "\n", host);
  else
    fputs (host == SECURER_HOST_POOL ? " host=pool\n" : " host=caller\n", f);
}

void
policy_put_word (FILE *f, const char *s, bool quoted)
{
  if (!quoted && !needs_quotes (s))
    {
      fputs (s, f);
      return;
    }
  fputc ('"', f);
  for (const char *c = s; *c; c++)
    switch (*c)
      {
      case '"': fputs ("\\\"", f); break;
      case '\\': fputs ("\\\\", f); break;
      case '\n': fputs ("\\n", f); break;
      case '\t': fputs ("\\t", f); break;
      default: fputc (*c, f);
      }
  fputc ('"', f);
}

static void
size_str (char *buf, size_t n, uint64_t v)
{
  static const char *const units[] = { "T", "G", "M", "K" };
  static const unsigned shifts[] = { 40, 30, 20, 10 };
  for (int i = 0; i < 4; i++)
    if (v != 0 && v % ((uint64_t) 1 << shifts[i]) == 0)
      {
        snprintf (buf, n, "%" PRIu64 "%s", v >> shifts[i], units[i]);
        return;
      }
  snprintf (buf, n, "%" PRIu64, v);
}

static void
duration_str (char *buf, size_t n, uint64_t ms)
{
  if (ms % 1000 == 0)
    snprintf (buf, n, "%" PRIu64 "s", ms / 1000);
  else
    snprintf (buf, n, "%" PRIu64 "ms", ms);
}

static void
limit_value (char *buf, size_t n, unsigned id, uint64_t v)
{
  if (v == UINT64_MAX)
    snprintf (buf, n, "unlimited");
  else if (id == SECURER_RLIMIT_CPU)
    snprintf (buf, n, "%" PRIu64 "s", v);
  else if (policy_rlimit_is_count (id))
    snprintf (buf, n, "%" PRIu64, v);
  else
    size_str (buf, n, v);
}

char *
securer_policy_to_text (const struct securer_policy *p)
{
  if (p == NULL)
    return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    return NULL;

  fprintf (f, "# Resolved policy '%s'", p->name ? p->name : "");
  if (p->path)
    fprintf (f, " from %s", p->path);
  fputc ('\n', f);
  for (size_t i = 0; i < p->n_includes; i++)
    fprintf (f, "# read: %s\n", p->includes[i]);

  fputs ("\nnamespaces", f);
  if (p->namespaces == 0)
    fputs (" none", f);
  for (unsigned i = 0; i < 7; i++)
    if (p->namespaces & (1u << i))
      fprintf (f, " %s", policy_ns_names[i]);
  fputc ('\n', f);
  if (p->hostname)
    {
      fputs ("hostname ", f);
      policy_put_word (f, p->hostname, false);
      fputc ('\n', f);
    }
  fprintf (f, "uid %" PRIu32, p->uid);
  print_host (f, p->host_uid);
  fprintf (f, "gid %" PRIu32, p->gid);
  print_host (f, p->host_gid);
  fputs ("cwd ", f);
  policy_put_word (f, p->cwd ? p->cwd : "/", false);
  fputc ('\n', f);
  if (p->network != SECURER_NET_ALLOW)
    fprintf (f, "network %s\n", policy_net_name (p->network) ? policy_net_name (p->network) : "?");
  for (int deny = 0; deny <= 1; deny++)
    for (size_t i = 0; i < p->n_net_rules; i++)
      if (p->net_rules[i].deny == (deny != 0))
        {
          char *w = securer_net_rule_format (&p->net_rules[i]);
          fprintf (f, "network %s %s\n", deny ? "deny" : "allow", w ? w : "?");
          free (w);
        }
  if (p->net_limits.connections)
    fprintf (f, "network limit connections %" PRIu32 "\n", p->net_limits.connections);
  if (p->net_limits.bytes == UINT64_MAX)
    fputs ("network limit bytes unlimited\n", f);
  else if (p->net_limits.bytes)
    fprintf (f, "network limit bytes %" PRIu64 "\n", p->net_limits.bytes);
  if (p->net_limits.idle_ms)
    fprintf (f, "network limit idle %" PRIu64 "ms\n", p->net_limits.idle_ms);
  fprintf (f, "session template %s\n\n",
           securer_session_template_name (p->session_template) ? securer_session_template_name (p->session_template) : "?");

  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct securer_mount *m = &p->mounts[i];
      fprintf (f, "mount %s%s ", policy_mount_type_name (m->type), m->optional ? "?" : "");
      switch (m->type)
        {
        case SECURER_MOUNT_RO:
        case SECURER_MOUNT_RW:
          policy_put_word (f, m->source ? m->source : "", false);
          if (m->source == NULL || strcmp (m->source, m->dest) != 0)
            {
              fputc (' ', f);
              policy_put_word (f, m->dest, false);
            }
          fputs (m->noexec ? " noexec" : " exec", f);
          break;
        case SECURER_MOUNT_TMPFS:
          {
            char sz[32];
            policy_put_word (f, m->dest, false);
            if (m->size)
              {
                size_str (sz, sizeof sz, m->size);
                fprintf (f, " size=%s", sz);
              }
            fprintf (f, " mode=%04o%s", m->mode, m->noexec ? " noexec" : " exec");
            break;
          }
        case SECURER_MOUNT_DIR:
          policy_put_word (f, m->dest, false);
          fprintf (f, " mode=%04o", m->mode);
          break;
        case SECURER_MOUNT_PROC:
          policy_put_word (f, m->dest, false);
          if (m->pid_only)
            fputs (" subset=pid", f);
          if (m->unmasked)
            fputs (" unmasked", f);
          break;
        case SECURER_MOUNT_SYMLINK:
          policy_put_word (f, m->dest, false);
          fputs (" -> ", f);
          policy_put_word (f, m->source ? m->source : "", false);
          break;
        default:
          policy_put_word (f, m->dest, false);
          break;
        }
      fputc ('\n', f);
    }
  for (size_t i = 0; i < p->n_masks; i++)
    {
      fputs ("mask ", f);
      policy_put_word (f, p->masks[i], false);
      fputc ('\n', f);
    }

  fputc ('\n', f);
  for (unsigned i = 0; i < SECURER_RLIMIT_COUNT; i++)
    {
      const struct securer_rlimit *r = &p->limits.rlimit[i];
      if (!r->set)
        {
          fprintf (f, "# limit %s: inherited\n", securer_rlimit_name (i));
          continue;
        }
      char a[32], b[32];
      limit_value (a, sizeof a, i, r->soft);
      limit_value (b, sizeof b, i, r->hard);
      if (r->soft == r->hard)
        fprintf (f, "limit %s %s\n", securer_rlimit_name (i), a);
      else
        fprintf (f, "limit %s %s:%s\n", securer_rlimit_name (i), a, b);
    }
  if (p->limits.timeout_ms)
    {
      char d[32];
      duration_str (d, sizeof d, p->limits.timeout_ms);
      fprintf (f, "limit timeout %s\n", d);
    }
  else
    fputs ("limit timeout unlimited\n", f);
  fprintf (f, "limit ptys %" PRIu32 "\n", securer_policy_ptys (p));
  fprintf (f, "cgroup %s\n", policy_enforce_name (p->limits.cgroup) ? policy_enforce_name (p->limits.cgroup) : "?");
  if (p->limits.cgroup_memory)
    {
      char sz[32];
      size_str (sz, sizeof sz, p->limits.cgroup_memory);
      fprintf (f, "cgroup memory %s\n", sz);
    }
  if (p->limits.cgroup_pids)
    fprintf (f, "cgroup pids %" PRIu64 "\n", p->limits.cgroup_pids);
  if (p->limits.cgroup_cpu_millis)
    fprintf (f, "cgroup cpu %" PRIu32 ".%03" PRIu32 "\n", p->limits.cgroup_cpu_millis / 1000,
             p->limits.cgroup_cpu_millis % 1000);

  fputc ('\n', f);
  if (p->n_env_keep)
    {
      fputs ("env keep", f);
      for (size_t i = 0; i < p->n_env_keep; i++)
        fprintf (f, " %s", p->env_keep[i]);
      fputc ('\n', f);
    }
  for (size_t i = 0; i < p->n_env_set; i++)
    {
      fputs ("env set ", f);
      char *kv = NULL;
      if (asprintf (&kv, "%s=%s", p->env_set[i].name, p->env_set[i].value) >= 0)
        policy_put_word (f, kv, false);
      free (kv);
      fputc ('\n', f);
    }
  if (p->exec_restricted)
    {
      fputs ("exec", f);
      for (size_t i = 0; i < p->n_exec; i++)
        {
          fputc (' ', f);
          policy_put_word (f, p->exec[i], false);
        }
      if (p->n_exec == 0)
        fputs ("  # (nothing may be executed)", f);
      fputc ('\n', f);
    }
  else
    fputs ("# exec: any file the filesystem view allows\n", f);

  fprintf (f, "\nlandlock %s\n", policy_enforce_name (p->landlock.mode) ? policy_enforce_name (p->landlock.mode) : "?");
  fprintf (f, "landlock scope%s%s%s\n", p->landlock.scope_abstract_unix ? " abstract-unix" : "",
           p->landlock.scope_signal ? " signal" : "",
           !p->landlock.scope_abstract_unix && !p->landlock.scope_signal ? " none" : "");
  if (p->landlock.n_tcp_bind)
    {
      fputs ("landlock tcp-bind", f);
      for (size_t i = 0; i < p->landlock.n_tcp_bind; i++)
        fprintf (f, " %u", p->landlock.tcp_bind[i]);
      fputc ('\n', f);
    }
  if (p->landlock.n_tcp_connect)
    {
      fputs ("landlock tcp-connect", f);
      for (size_t i = 0; i < p->landlock.n_tcp_connect; i++)
        fprintf (f, " %u", p->landlock.tcp_connect[i]);
      fputc ('\n', f);
    }

  fprintf (f, "\nseccomp %s\nseccomp default ", p->seccomp.enabled ? "on" : "off");
  securer_rule_put_action (f, p->seccomp.default_action);
  fputs ("\nseccomp foreign-abi ", f);
  securer_rule_put_action (f, p->seccomp.foreign_arch);
  fputc ('\n', f);
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    {
      const struct securer_syscall_rule *r = &p->seccomp.rules[i];
      securer_rule_put (f, r->name, r->action, r->conds, r->n_conds, NULL);
      if (r->group)
        fprintf (f, "  # %s", r->group);
      fputc ('\n', f);
    }
  if (fclose (f) != 0)
    {
      free (buf);
      return NULL;
    }
  return buf;
}
