/* JSON form of the resolved policy (jansson).
 *
 * Output has a fixed key order and every field present, so that
 * text -> JSON -> IR -> JSON is byte-identical.  Input is the same schema
 * and is read as strictly as the text: unknown or missing keys, wrong
 * types and invalid values are errors naming the JSON path ($.mounts[2].dest),
 * and all of them are reported, not just the first. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "seccomp/seccomp.h"

#define FORMAT_VERSION 1

/* ---- writing -------------------------------------------------------------- */

static json_t *
jstr (const char *s)
{
  return s ? json_string (s) : json_null ();
}

static json_t *
jstrv (char *const *v, size_t n)
{
  json_t *a = json_array ();
  for (size_t i = 0; a && i < n; i++)
    json_array_append_new (a, jstr (v[i]));
  return a;
}

/* 64-bit unsigned values beyond JSON integers' signed range become hex. */
static json_t *
ju64 (uint64_t v)
{
  if (v <= INT64_MAX)
    return json_integer ((json_int_t) v);
  char buf[32];
  snprintf (buf, sizeof buf, "0x%" PRIx64, v);
  return json_string (buf);
}

static json_t *
jlimit (uint64_t v)
{
  return v == UINT64_MAX ? json_string ("unlimited") : ju64 (v);
}

static json_t *
jloc (const struct securer_loc *l)
{
  return json_pack ("{s:o, s:I, s:I}", "file", jstr (l->file), "line", (json_int_t) l->line,
                    "col", (json_int_t) l->col);
}

static json_t *
jaction (const struct securer_action *a)
{
  json_t *o = json_object ();
  const char *n = securer_action_name (a->type);
  json_object_set_new (o, "type", jstr (n ? n : "?"));
  if (a->type == SECURER_ACT_ERRNO)
    {
      const char *en = securer_errno_name (a->errnum);
      json_object_set_new (o, "errno", en ? json_string (en) : json_integer (a->errnum));
    }
  return o;
}

static json_t *
jhost (int64_t id)
{
  if (id >= 0)
    return json_integer (id);
  return json_string (id == SECURER_HOST_POOL ? "pool" : "caller");
}

static json_t *
jmode (uint32_t m)
{
  char buf[16];
  snprintf (buf, sizeof buf, "%04o", m);
  return json_string (buf);
}

char *
securer_policy_to_json_text (const struct securer_policy *p, unsigned flags)
{
  (void) flags;
  if (p == NULL)
    return NULL;
  json_t *root = json_object ();
  if (root == NULL)
    return NULL;
  json_object_set_new (root, "securer_policy", json_integer (FORMAT_VERSION));
  json_object_set_new (root, "name", jstr (p->name));
  json_object_set_new (root, "path", jstr (p->path));
  json_object_set_new (root, "includes", jstrv (p->includes, p->n_includes));

  json_t *ns = json_array ();
  for (unsigned i = 0; i < 7; i++)
    if (p->namespaces & (1u << i))
      json_array_append_new (ns, json_string (policy_ns_names[i]));
  json_object_set_new (root, "namespaces", ns);
  json_object_set_new (root, "hostname", jstr (p->hostname));
  json_object_set_new (root, "uid", json_integer (p->uid));
  json_object_set_new (root, "gid", json_integer (p->gid));
  json_object_set_new (root, "host_uid", jhost (p->host_uid));
  json_object_set_new (root, "host_gid", jhost (p->host_gid));
  json_object_set_new (root, "cwd", jstr (p->cwd));
  json_object_set_new (root, "network", jstr (policy_net_name (p->network)));
  json_t *nrules = json_array ();
  for (size_t i = 0; nrules && i < p->n_net_rules; i++)
    {
      char *w = securer_net_rule_format (&p->net_rules[i]);
      json_t *o = w ? json_pack ("{s:s,s:s}", "action", p->net_rules[i].deny ? "deny" : "allow", "dest", w) : NULL;
      free (w);
      if (o != NULL)
        json_array_append_new (nrules, o);
    }
  json_object_set_new (root, "net_rules", nrules);
  const struct securer_net_limits *nl = &p->net_limits;
  if (nl->connections || nl->bytes || nl->idle_ms)
    json_object_set_new (root, "net_limits",
                         json_pack ("{s:I, s:o, s:I}", "connections", (json_int_t) nl->connections, "bytes",
                                    nl->bytes == UINT64_MAX ? json_string ("unlimited") : ju64 (nl->bytes),
                                    "idle_ms", (json_int_t) nl->idle_ms));

  json_t *mounts = json_array ();
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct securer_mount *m = &p->mounts[i];
      json_t *o = json_object ();
      json_object_set_new (o, "type", jstr (policy_mount_type_name (m->type)));
      json_object_set_new (o, "source", jstr (m->source));
      json_object_set_new (o, "dest", jstr (m->dest));
      json_object_set_new (o, "optional", json_boolean (m->optional));
      json_object_set_new (o, "noexec", json_boolean (m->noexec));
      json_object_set_new (o, "size", ju64 (m->size));
      json_object_set_new (o, "mode", jmode (m->mode));
      if (m->type == SECURER_MOUNT_PROC)
        {
          json_object_set_new (o, "pid_only", json_boolean (m->pid_only));
          json_object_set_new (o, "unmasked", json_boolean (m->unmasked));
        }
      json_object_set_new (o, "loc", jloc (&m->loc));
      json_array_append_new (mounts, o);
    }
  json_object_set_new (root, "mounts", mounts);
  json_object_set_new (root, "masks", jstrv (p->masks, p->n_masks));

  json_t *lim = json_object ();
  for (unsigned i = 0; i < SECURER_RLIMIT_COUNT; i++)
    {
      const struct securer_rlimit *r = &p->limits.rlimit[i];
      json_object_set_new (lim, securer_rlimit_name (i),
                           r->set ? json_pack ("{s:o, s:o}", "soft", jlimit (r->soft), "hard",
                                               jlimit (r->hard))
                                  : json_null ());
    }
  json_object_set_new (lim, "timeout_ms", ju64 (p->limits.timeout_ms));
  /* The value in force, the default included: a reader of the resolved
   * form need not know securer's default. */
  json_object_set_new (lim, "ptys", json_integer (securer_policy_ptys (p)));
  json_object_set_new (root, "limits", lim);
  json_object_set_new (root, "cgroup",
                       json_pack ("{s:o, s:o, s:o, s:I}", "mode",
                                  jstr (policy_enforce_name (p->limits.cgroup)), "memory",
                                  ju64 (p->limits.cgroup_memory), "pids", ju64 (p->limits.cgroup_pids),
                                  "cpu_millis", (json_int_t) p->limits.cgroup_cpu_millis));

  json_t *set = json_array ();
  for (size_t i = 0; i < p->n_env_set; i++)
    json_array_append_new (set, json_pack ("{s:o, s:o}", "name", jstr (p->env_set[i].name), "value",
                                           jstr (p->env_set[i].value)));
  json_object_set_new (root, "env",
                       json_pack ("{s:o, s:o}", "keep", jstrv (p->env_keep, p->n_env_keep), "set", set));
  json_object_set_new (root, "exec", p->exec_restricted ? jstrv (p->exec, p->n_exec) : json_null ());

  json_t *tb = json_array (), *tc = json_array ();
  for (size_t i = 0; i < p->landlock.n_tcp_bind; i++)
    json_array_append_new (tb, json_integer (p->landlock.tcp_bind[i]));
  for (size_t i = 0; i < p->landlock.n_tcp_connect; i++)
    json_array_append_new (tc, json_integer (p->landlock.tcp_connect[i]));
  json_object_set_new (root, "landlock",
                       json_pack ("{s:o, s:b, s:b, s:o, s:o}", "mode",
                                  jstr (policy_enforce_name (p->landlock.mode)), "scope_abstract_unix",
                                  p->landlock.scope_abstract_unix, "scope_signal",
                                  p->landlock.scope_signal, "tcp_bind", tb, "tcp_connect", tc));

  json_t *rules = json_array ();
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    {
      const struct securer_syscall_rule *r = &p->seccomp.rules[i];
      json_t *o = json_object ();
      json_object_set_new (o, "syscall", jstr (r->name));
      json_object_set_new (o, "action", jaction (&r->action));
      json_t *conds = json_array ();
      for (unsigned k = 0; k < r->n_conds && k < SECURER_MAX_ARG_CONDS; k++)
        {
          const struct securer_arg_cond *c = &r->conds[k];
          json_t *co = json_object ();
          json_object_set_new (co, "arg", json_integer (c->arg));
          if (c->op == SECURER_CMP_MASKED_EQ)
            json_object_set_new (co, "mask", ju64 (c->mask));
          json_object_set_new (co, "op", jstr (c->op == SECURER_CMP_MASKED_EQ ? "==" : policy_cmp_name (c->op)));
          json_object_set_new (co, "value", ju64 (c->value));
          json_array_append_new (conds, co);
        }
      json_object_set_new (o, "conditions", conds);
      json_object_set_new (o, "group", jstr (r->group));
      json_object_set_new (o, "loc", jloc (&r->loc));
      json_array_append_new (rules, o);
    }
  json_object_set_new (root, "seccomp",
                       json_pack ("{s:b, s:o, s:o, s:o}", "enabled", p->seccomp.enabled,
                                  "default_action", jaction (&p->seccomp.default_action),
                                  "foreign_abi", jaction (&p->seccomp.foreign_arch), "rules", rules));

  json_object_set_new (root, "session",
                       json_pack ("{s:o}", "template",
                                  jstr (securer_session_template_name (p->session_template))));

  char *s = json_dumps (root, JSON_INDENT (2) | JSON_PRESERVE_ORDER);
  json_decref (root);
  if (s == NULL)
    return NULL;
  /* A trailing newline makes the text a proper file. */
  size_t len = strlen (s);
  char *r = realloc (s, len + 2);
  if (r == NULL)
    {
      free (s);
      return NULL;
    }
  r[len] = '\n';
  r[len + 1] = '\0';
  return r;
}

/* ---- reading ------------------------------------------------------------- */

struct jr {
  struct securer_diags *d;
  const char *file;
};

static void
jerr (struct jr *j, const char *path, const char *hint, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

static void
jerr (struct jr *j, const char *path, const char *hint, const char *fmt, ...)
{
  char *msg = NULL;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  diag_add (j->d, SECURER_DIAG_ERROR, j->file, 0, 0, hint, "%s: %s", path, msg ? msg : "out of memory");
  free (msg);
}

/* Child path "P.key" or "P[i]", truncated safely. */
struct jpath {
  char s[256];
};

static struct jpath
jp_key (const char *parent, const char *key)
{
  struct jpath p;
  if (snprintf (p.s, sizeof p.s, "%s.%s", parent, key) >= (int) sizeof p.s)
    memcpy (p.s + sizeof p.s - 4, "...", 4);
  return p;
}

static struct jpath
jp_idx (const char *parent, size_t i)
{
  struct jpath p;
  if (snprintf (p.s, sizeof p.s, "%s[%zu]", parent, i) >= (int) sizeof p.s)
    memcpy (p.s + sizeof p.s - 4, "...", 4);
  return p;
}

static const char *
jtype (const json_t *v)
{
  switch (json_typeof (v))
    {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* True when `word` is one of the space-separated words of `list` (NULL: none). */
static bool
in_word_list (const char *list, const char *word)
{
  size_t len = strlen (word);
  for (const char *w = list; w != NULL && *w != '\0';)
    {
      size_t n = strcspn (w, " ");
      if (n == len && strncmp (w, word, n) == 0)
        return true;
      w += n + (w[n] == ' ');
    }
  return false;
}

/* Checks that obj is an object holding exactly `keys` (all required) and
 * perhaps some of `optional` (names separated by spaces, or NULL).
 * Returns false when it is not an object at all. */
static bool
jkeys (struct jr *j, const char *path, json_t *obj, const char *const *keys, size_t n,
       const char *optional)
{
  if (!json_is_object (obj))
    {
      jerr (j, path, NULL, "expected an object, got %s", obj ? jtype (obj) : "nothing");
      return false;
    }
  const char *k;
  json_t *v;
  json_object_foreach (obj, k, v)
    {
      bool known = in_word_list (optional, k);
      for (size_t i = 0; i < n && !known; i++)
        known = strcmp (k, keys[i]) == 0;
      if (!known)
        {
          char *hint = diag_suggest (k, keys, n);
          struct jpath p = jp_key (path, k);
          jerr (j, p.s, hint, "unknown key");
          free (hint);
        }
    }
  for (size_t i = 0; i < n; i++)
    if (json_object_get (obj, keys[i]) == NULL)
      {
        struct jpath p = jp_key (path, keys[i]);
        jerr (j, p.s, NULL, "missing key");
      }
  return true;
}

/* Field getters: report and return false when absent or ill-typed; an
 * absent key was already reported by jkeys. */
static bool
get_str (struct jr *j, const char *path, json_t *obj, const char *key, bool nullable, char **out)
{
  json_t *v = json_object_get (obj, key);
  *out = NULL;
  if (v == NULL)
    return false;
  struct jpath p = jp_key (path, key);
  if (nullable && json_is_null (v))
    return true;
  if (!json_is_string (v))
    {
      jerr (j, p.s, NULL, "expected %s, got %s", nullable ? "a string or null" : "a string", jtype (v));
      return false;
    }
  if (strlen (json_string_value (v)) != json_string_length (v))
    {
      jerr (j, p.s, NULL, "string contains a NUL byte");
      return false;
    }
  *out = strdup (json_string_value (v));
  return *out != NULL;
}

static bool
get_bool (struct jr *j, const char *path, json_t *obj, const char *key, bool *out)
{
  json_t *v = json_object_get (obj, key);
  if (v == NULL)
    return false;
  if (!json_is_boolean (v))
    {
      struct jpath p = jp_key (path, key);
      jerr (j, p.s, NULL, "expected true or false, got %s", jtype (v));
      return false;
    }
  *out = json_is_true (v);
  return true;
}

/* Unsigned: a non-negative integer, or a "0x…" string for values past
 * 2^63 (as written by ju64). */
static bool
val_u64 (struct jr *j, const char *path, json_t *v, uint64_t max, uint64_t *out)
{
  if (json_is_integer (v) && json_integer_value (v) >= 0
      && (uint64_t) json_integer_value (v) <= max)
    {
      *out = (uint64_t) json_integer_value (v);
      return true;
    }
  if (json_is_string (v))
    {
      const char *s = json_string_value (v);
      uint64_t x;
      if (s[0] == '0' && s[1] == 'x' && parse_uint (s, &x) == 0 && x <= max)
        {
          *out = x;
          return true;
        }
    }
  jerr (j, path, NULL, "expected an integer from 0 to %" PRIu64 ", got %s", max,
        json_is_string (v) ? "a string" : jtype (v));
  return false;
}

static bool
get_u64 (struct jr *j, const char *path, json_t *obj, const char *key, uint64_t max, uint64_t *out)
{
  json_t *v = json_object_get (obj, key);
  if (v == NULL)
    return false;
  struct jpath p = jp_key (path, key);
  return val_u64 (j, p.s, v, max, out);
}

static bool
val_enum (struct jr *j, const char *path, json_t *v, const char *const *names, size_t n, int *out)
{
  if (json_is_string (v))
    for (size_t i = 0; i < n; i++)
      if (strcmp (json_string_value (v), names[i]) == 0)
        {
          *out = (int) i;
          return true;
        }
  char expected[256] = "";
  for (size_t i = 0; i < n; i++)
    {
      size_t l = strlen (expected);
      snprintf (expected + l, sizeof expected - l, "%s'%s'", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                names[i]);
    }
  char *hint = json_is_string (v) ? diag_suggest (json_string_value (v), names, n) : NULL;
  jerr (j, path, hint, "expected %s", expected);
  free (hint);
  return false;
}

static bool
get_enum (struct jr *j, const char *path, json_t *obj, const char *key, const char *const *names,
          size_t n, int *out)
{
  json_t *v = json_object_get (obj, key);
  if (v == NULL)
    return false;
  struct jpath p = jp_key (path, key);
  return val_enum (j, p.s, v, names, n, out);
}

static bool
get_strv (struct jr *j, const char *path, json_t *obj, const char *key,
          const char *(*check) (const char *), char ***out, size_t *n)
{
  json_t *v = json_object_get (obj, key);
  *out = NULL;
  *n = 0;
  if (v == NULL)
    return false;
  struct jpath p = jp_key (path, key);
  if (!json_is_array (v))
    {
      jerr (j, p.s, NULL, "expected an array of strings, got %s", jtype (v));
      return false;
    }
  size_t len = json_array_size (v);
  if (len > POLICY_MAX_ITEMS)
    {
      jerr (j, p.s, NULL, "too many entries (more than %d)", POLICY_MAX_ITEMS);
      return false;
    }
  char **a = xcalloc_array (len, sizeof *a);
  if (a == NULL)
    return false;
  bool ok = true;
  for (size_t i = 0; i < len; i++)
    {
      json_t *e = json_array_get (v, i);
      struct jpath ep = jp_idx (p.s, i);
      if (!json_is_string (e) || strlen (json_string_value (e)) != json_string_length (e))
        {
          jerr (j, ep.s, NULL, "expected a string, got %s", jtype (e));
          ok = false;
          continue;
        }
      const char *why = check ? check (json_string_value (e)) : NULL;
      if (why)
        {
          jerr (j, ep.s, NULL, "invalid value '%s': expected %s", json_string_value (e), why);
          ok = false;
          continue;
        }
      for (size_t k = 0; k < i; k++)
        if (a[k] && strcmp (a[k], json_string_value (e)) == 0)
          {
            jerr (j, ep.s, NULL, "'%s' listed twice", json_string_value (e));
            ok = false;
          }
      a[i] = strdup (json_string_value (e));
      if (a[i] == NULL)
        ok = false;
    }
  *out = a;
  *n = len;
  return ok;
}

static const char *const action_names[] = { "allow", "errno", "kill-process", "kill-thread",
                                            "trap", "log", "notify" };

static bool
get_action (struct jr *j, const char *path, json_t *obj, const char *key, struct securer_action *a)
{
  json_t *v = json_object_get (obj, key);
  if (v == NULL)
    return false;
  struct jpath p = jp_key (path, key);
  static const char *const keys[] = { "type", "errno" };
  if (!json_is_object (v))
    {
      jerr (j, p.s, NULL, "expected an object, got %s", jtype (v));
      return false;
    }
  int t;
  bool ok = jkeys (j, p.s, v, keys, 1, "errno");
  if (!get_enum (j, p.s, v, "type", action_names, 7, &t))
    return false;
  a->type = t;
  a->errnum = 0;
  json_t *e = json_object_get (v, "errno");
  struct jpath ep = jp_key (p.s, "errno");
  if (t != SECURER_ACT_ERRNO)
    {
      if (e != NULL)
        {
          jerr (j, ep.s, NULL, "only an errno action takes an errno");
          return false;
        }
      return ok;
    }
  if (e == NULL)
    {
      jerr (j, ep.s, NULL, "missing key");
      return false;
    }
  if (json_is_string (e))
    {
      int en;
      if (securer_errno_lookup (json_string_value (e), &en) < 0)
        {
          const char *const *names = securer_errno_names ();
          size_t n = 0;
          while (names && names[n])
            n++;
          char *hint = diag_suggest (json_string_value (e), names, n);
          jerr (j, ep.s, hint, "unknown errno name '%s'", json_string_value (e));
          free (hint);
          return false;
        }
      a->errnum = en;
      return ok;
    }
  uint64_t n;
  if (!val_u64 (j, ep.s, e, 4095, &n))
    return false;
  a->errnum = (int) n;
  return ok;
}

static bool
get_loc (struct jr *j, const char *path, json_t *obj, struct securer_loc *loc)
{
  memset (loc, 0, sizeof *loc);
  json_t *v = json_object_get (obj, "loc");
  if (v == NULL)
    return true;
  struct jpath p = jp_key (path, "loc");
  static const char *const keys[] = { "file", "line", "col" };
  if (!jkeys (j, p.s, v, keys, 3, NULL))
    return false;
  uint64_t line = 0, col = 0;
  bool ok = get_str (j, p.s, v, "file", true, &loc->file);
  ok &= get_u64 (j, p.s, v, "line", UINT32_MAX, &line);
  ok &= get_u64 (j, p.s, v, "col", UINT32_MAX, &col);
  loc->line = (unsigned) line;
  loc->col = (unsigned) col;
  return ok;
}

static bool
get_host (struct jr *j, const char *path, json_t *obj, const char *key, int64_t *out)
{
  json_t *v = json_object_get (obj, key);
  if (v == NULL)
    return false;
  if (json_is_string (v) && strcmp (json_string_value (v), "caller") == 0)
    {
      *out = SECURER_HOST_CALLER;
      return true;
    }
  if (json_is_string (v) && strcmp (json_string_value (v), "pool") == 0)
    {
      *out = SECURER_HOST_POOL;
      return true;
    }
  if (json_is_integer (v) && json_integer_value (v) >= 1 && json_integer_value (v) <= 4294967294LL)
    {
      *out = json_integer_value (v);
      return true;
    }
  struct jpath p = jp_key (path, key);
  /* 0 would make the sandbox host root, which the launcher refuses. */
  jerr (j, p.s, NULL, "expected an id from 1 to 4294967294, \"caller\" or \"pool\"");
  return false;
}

static bool
read_mount (struct jr *j, const char *path, json_t *o, struct securer_mount *m)
{
  static const char *const keys[] = { "type", "source", "dest", "optional", "noexec", "size", "mode" };
  static const char *const types[] = { "ro", "rw", "tmpfs", "proc", "dev", "dir", "symlink" };
  if (!jkeys (j, path, o, keys, 7, "loc pid_only unmasked"))
    return false;
  int t = 0;
  bool ok = get_enum (j, path, o, "type", types, 7, &t);
  m->type = t;
  ok &= get_str (j, path, o, "source", true, &m->source);
  ok &= get_str (j, path, o, "dest", false, &m->dest);
  ok &= get_bool (j, path, o, "optional", &m->optional);
  ok &= get_bool (j, path, o, "noexec", &m->noexec);
  ok &= get_u64 (j, path, o, "size", UINT64_MAX, &m->size);
  ok &= get_loc (j, path, o, &m->loc);
  if (json_object_get (o, "pid_only") != NULL)
    ok &= get_bool (j, path, o, "pid_only", &m->pid_only);
  if (json_object_get (o, "unmasked") != NULL)
    ok &= get_bool (j, path, o, "unmasked", &m->unmasked);
  json_t *mv = json_object_get (o, "mode");
  if (mv != NULL)
    {
      struct jpath p = jp_key (path, "mode");
      const char *s = json_is_string (mv) ? json_string_value (mv) : "";
      uint32_t mode = 0;
      bool good = *s != '\0' && strlen (s) <= 5;
      for (const char *c = s; good && *c; c++)
        {
          if (*c < '0' || *c > '7')
            good = false;
          else
            mode = mode * 8 + (uint32_t) (*c - '0');
        }
      if (!good || mode > 07777)
        {
          jerr (j, p.s, NULL, "expected an octal mode string such as \"0755\"");
          ok = false;
        }
      m->mode = mode;
    }
  if (!ok)
    return false;
  const char *why;
  if (m->dest && (why = check_abs_path (m->dest)) != NULL)
    {
      struct jpath p = jp_key (path, "dest");
      jerr (j, p.s, NULL, "expected %s", why);
      ok = false;
    }
  bool needs_source = m->type == SECURER_MOUNT_RO || m->type == SECURER_MOUNT_RW
                      || m->type == SECURER_MOUNT_SYMLINK;
  struct jpath sp = jp_key (path, "source");
  if (needs_source && m->source == NULL)
    {
      jerr (j, sp.s, NULL, "a %s mount needs a source", types[t]);
      ok = false;
    }
  else if (!needs_source && m->source != NULL)
    {
      jerr (j, sp.s, NULL, "a %s mount takes no source (expected null)", types[t]);
      ok = false;
    }
  else if (m->source && m->type != SECURER_MOUNT_SYMLINK && (why = check_abs_path (m->source)) != NULL)
    {
      jerr (j, sp.s, NULL, "expected %s", why);
      ok = false;
    }
  else if (m->source && m->type == SECURER_MOUNT_SYMLINK && (why = check_link_target (m->source)) != NULL)
    {
      jerr (j, sp.s, NULL, "expected %s as the link target", why);
      ok = false;
    }
  if (m->optional && m->type != SECURER_MOUNT_RO && m->type != SECURER_MOUNT_RW)
    {
      struct jpath p = jp_key (path, "optional");
      jerr (j, p.s, NULL, "only ro and rw mounts can be optional");
      ok = false;
    }
  if (m->pid_only && m->type != SECURER_MOUNT_PROC)
    {
      struct jpath p = jp_key (path, "pid_only");
      jerr (j, p.s, NULL, "only a proc mount can be pid_only");
      ok = false;
    }
  if (m->unmasked && (m->type != SECURER_MOUNT_PROC || m->pid_only))
    {
      struct jpath p = jp_key (path, "unmasked");
      jerr (j, p.s, NULL, m->pid_only ? "a pid_only proc mount has nothing to unmask"
                                       : "only a proc mount can be unmasked");
      ok = false;
    }
  if (m->size != 0 && m->type != SECURER_MOUNT_TMPFS)
    {
      struct jpath p = jp_key (path, "size");
      jerr (j, p.s, NULL, "only a tmpfs mount has a size (expected 0)");
      ok = false;
    }
  return ok;
}

static bool
read_limits (struct jr *j, json_t *root, struct securer_limits *l)
{
  json_t *o = json_object_get (root, "limits");
  if (o == NULL)
    return false;
  const char *keys[SECURER_RLIMIT_COUNT + 1];
  for (unsigned i = 0; i < SECURER_RLIMIT_COUNT; i++)
    keys[i] = securer_rlimit_name (i);
  keys[SECURER_RLIMIT_COUNT] = "timeout_ms";
  /* ptys is optional on input: a resolved policy written before it
   * existed gets the default. */
  if (!jkeys (j, "$.limits", o, keys, SECURER_RLIMIT_COUNT + 1, "ptys"))
    return false;
  bool ok = true;
  for (unsigned i = 0; i < SECURER_RLIMIT_COUNT; i++)
    {
      json_t *v = json_object_get (o, keys[i]);
      if (v == NULL || json_is_null (v))
        continue;
      struct jpath p = jp_key ("$.limits", keys[i]);
      static const char *const rk[] = { "soft", "hard" };
      if (!jkeys (j, p.s, v, rk, 2, NULL))
        {
          ok = false;
          continue;
        }
      uint64_t x[2] = { 0, 0 };
      for (int k = 0; k < 2; k++)
        {
          json_t *e = json_object_get (v, rk[k]);
          if (e == NULL)
            {
              ok = false;
              continue;
            }
          struct jpath ep = jp_key (p.s, rk[k]);
          if (json_is_string (e) && strcmp (json_string_value (e), "unlimited") == 0)
            x[k] = UINT64_MAX;
          else if (!val_u64 (j, ep.s, e, UINT64_MAX - 1, &x[k]))
            ok = false;
        }
      if (x[0] > x[1])
        {
          jerr (j, p.s, NULL, "soft limit is above the hard limit");
          ok = false;
        }
      l->rlimit[i].set = true;
      l->rlimit[i].soft = x[0];
      l->rlimit[i].hard = x[1];
    }
  ok &= get_u64 (j, "$.limits", o, "timeout_ms", UINT64_MAX, &l->timeout_ms);
  if (json_object_get (o, "ptys") != NULL)
    {
      uint64_t n = 0;
      bool got = get_u64 (j, "$.limits", o, "ptys", SECURER_PTYS_MAX, &n);
      ok &= got;
      l->ptys_set = got;
      l->ptys = (uint32_t) n;
    }

  json_t *cg = json_object_get (root, "cgroup");
  if (cg == NULL)
    return false;
  static const char *const ck[] = { "mode", "memory", "pids", "cpu_millis" };
  static const char *const modes[] = { "off", "best-effort", "required" };
  if (!jkeys (j, "$.cgroup", cg, ck, 4, NULL))
    return false;
  int mode = 0;
  uint64_t cpu = 0;
  ok &= get_enum (j, "$.cgroup", cg, "mode", modes, 3, &mode);
  l->cgroup = mode;
  ok &= get_u64 (j, "$.cgroup", cg, "memory", UINT64_MAX, &l->cgroup_memory);
  ok &= get_u64 (j, "$.cgroup", cg, "pids", UINT32_MAX, &l->cgroup_pids);
  ok &= get_u64 (j, "$.cgroup", cg, "cpu_millis", 4096000, &cpu);
  l->cgroup_cpu_millis = (uint32_t) cpu;
  return ok;
}

static bool
read_env (struct jr *j, json_t *root, struct securer_policy *p)
{
  json_t *o = json_object_get (root, "env");
  static const char *const keys[] = { "keep", "set" };
  if (o == NULL || !jkeys (j, "$.env", o, keys, 2, NULL))
    return false;
  bool ok = get_strv (j, "$.env", o, "keep", check_env_name, &p->env_keep, &p->n_env_keep);
  json_t *set = json_object_get (o, "set");
  if (set == NULL)
    return false;
  if (!json_is_array (set) || json_array_size (set) > POLICY_MAX_ITEMS)
    {
      jerr (j, "$.env.set", NULL, "expected an array of at most %d {\"name\", \"value\"} objects",
            POLICY_MAX_ITEMS);
      return false;
    }
  size_t n = json_array_size (set);
  p->env_set = xcalloc_array (n, sizeof *p->env_set);
  if (p->env_set == NULL)
    return false;
  p->n_env_set = n;
  for (size_t i = 0; i < n; i++)
    {
      struct jpath ep = jp_idx ("$.env.set", i);
      json_t *e = json_array_get (set, i);
      static const char *const ek[] = { "name", "value" };
      if (!jkeys (j, ep.s, e, ek, 2, NULL))
        {
          ok = false;
          continue;
        }
      ok &= get_str (j, ep.s, e, "name", false, &p->env_set[i].name);
      ok &= get_str (j, ep.s, e, "value", false, &p->env_set[i].value);
      const char *why;
      if (p->env_set[i].name && (why = check_env_name (p->env_set[i].name)) != NULL)
        {
          struct jpath np = jp_key (ep.s, "name");
          jerr (j, np.s, NULL, "expected %s", why);
          ok = false;
        }
      if (p->env_set[i].value && (why = check_env_value (p->env_set[i].value)) != NULL)
        {
          struct jpath vp = jp_key (ep.s, "value");
          jerr (j, vp.s, NULL, "expected %s", why);
          ok = false;
        }
      for (size_t k = 0; k < i && p->env_set[i].name; k++)
        if (p->env_set[k].name && strcmp (p->env_set[k].name, p->env_set[i].name) == 0)
          {
            struct jpath np = jp_key (ep.s, "name");
            jerr (j, np.s, NULL, "'%s' set twice", p->env_set[i].name);
            ok = false;
          }
    }
  return ok;
}

static bool
read_ports (struct jr *j, const char *path, json_t *o, const char *key, uint16_t **out, size_t *n)
{
  json_t *v = json_object_get (o, key);
  if (v == NULL)
    return false;
  struct jpath p = jp_key (path, key);
  if (!json_is_array (v) || json_array_size (v) > POLICY_MAX_ITEMS)
    {
      jerr (j, p.s, NULL, "expected an array of port numbers");
      return false;
    }
  size_t len = json_array_size (v);
  *out = xcalloc_array (len, sizeof **out);
  if (*out == NULL)
    return false;
  bool ok = true;
  for (size_t i = 0; i < len; i++)
    {
      struct jpath ep = jp_idx (p.s, i);
      uint64_t port = 0;
      if (!val_u64 (j, ep.s, json_array_get (v, i), 65535, &port))
        ok = false;
      for (size_t k = 0; k < i && ok; k++)
        if ((*out)[k] == port)
          {
            jerr (j, ep.s, NULL, "port %u listed twice", (unsigned) port);
            ok = false;
          }
      (*out)[i] = (uint16_t) port;
    }
  *n = len;
  return ok;
}

static bool
read_landlock (struct jr *j, json_t *root, struct securer_landlock *l)
{
  json_t *o = json_object_get (root, "landlock");
  static const char *const keys[] = { "mode", "scope_abstract_unix", "scope_signal", "tcp_bind",
                                      "tcp_connect" };
  static const char *const modes[] = { "off", "best-effort", "required" };
  if (o == NULL || !jkeys (j, "$.landlock", o, keys, 5, NULL))
    return false;
  int mode = 0;
  bool ok = get_enum (j, "$.landlock", o, "mode", modes, 3, &mode);
  l->mode = mode;
  ok &= get_bool (j, "$.landlock", o, "scope_abstract_unix", &l->scope_abstract_unix);
  ok &= get_bool (j, "$.landlock", o, "scope_signal", &l->scope_signal);
  ok &= read_ports (j, "$.landlock", o, "tcp_bind", &l->tcp_bind, &l->n_tcp_bind);
  ok &= read_ports (j, "$.landlock", o, "tcp_connect", &l->tcp_connect, &l->n_tcp_connect);
  return ok;
}

static bool
read_cond (struct jr *j, const char *path, json_t *o, struct securer_arg_cond *c)
{
  static const char *const keys[] = { "arg", "op", "value" };
  static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=" };
  if (!jkeys (j, path, o, keys, 3, "mask"))
    return false;
  uint64_t arg = 0;
  int op = 0;
  bool ok = get_u64 (j, path, o, "arg", 5, &arg);
  ok &= get_enum (j, path, o, "op", ops, 6, &op);
  ok &= get_u64 (j, path, o, "value", UINT64_MAX, &c->value);
  c->arg = (unsigned) arg;
  c->op = op;
  if (json_object_get (o, "mask") != NULL)
    {
      ok &= get_u64 (j, path, o, "mask", UINT64_MAX, &c->mask);
      if (ok && op != SECURER_CMP_EQ)
        {
          struct jpath p = jp_key (path, "op");
          jerr (j, p.s, NULL, "a masked comparison takes \"==\" only");
          return false;
        }
      if (ok && (c->value & ~c->mask) != 0)
        {
          struct jpath p = jp_key (path, "value");
          jerr (j, p.s, NULL, "value has bits outside the mask, so the condition can never hold");
          return false;
        }
      c->op = SECURER_CMP_MASKED_EQ;
    }
  return ok;
}

static bool
read_seccomp (struct jr *j, json_t *root, struct securer_seccomp *s)
{
  json_t *o = json_object_get (root, "seccomp");
  static const char *const keys[] = { "enabled", "default_action", "foreign_abi", "rules" };
  if (o == NULL || !jkeys (j, "$.seccomp", o, keys, 4, NULL))
    return false;
  bool ok = get_bool (j, "$.seccomp", o, "enabled", &s->enabled);
  ok &= get_action (j, "$.seccomp", o, "default_action", &s->default_action);
  ok &= get_action (j, "$.seccomp", o, "foreign_abi", &s->foreign_arch);
  json_t *rules = json_object_get (o, "rules");
  if (rules == NULL)
    return false;
  if (!json_is_array (rules) || json_array_size (rules) > POLICY_MAX_RULES)
    {
      jerr (j, "$.seccomp.rules", NULL, "expected an array of at most %d rules", POLICY_MAX_RULES);
      return false;
    }
  size_t n = json_array_size (rules);
  s->rules = xcalloc_array (n, sizeof *s->rules);
  if (s->rules == NULL)
    return false;
  s->n_rules = n;
  for (size_t i = 0; i < n; i++)
    {
      struct securer_syscall_rule *r = &s->rules[i];
      struct jpath rp = jp_idx ("$.seccomp.rules", i);
      json_t *ro = json_array_get (rules, i);
      static const char *const rk[] = { "syscall", "action", "conditions", "group" };
      if (!jkeys (j, rp.s, ro, rk, 4, "loc"))
        {
          ok = false;
          continue;
        }
      bool rok = get_str (j, rp.s, ro, "syscall", false, &r->name);
      rok &= get_action (j, rp.s, ro, "action", &r->action);
      rok &= get_str (j, rp.s, ro, "group", true, &r->group);
      rok &= get_loc (j, rp.s, ro, &r->loc);
      if (r->name && !securer_syscall_known (r->name))
        {
          struct jpath p = jp_key (rp.s, "syscall");
          jerr (j, p.s, NULL, "unknown syscall '%s'", r->name);
          rok = false;
        }
      if (r->group && (r->group[0] != '@' || r->group[1] == '\0'))
        {
          struct jpath p = jp_key (rp.s, "group");
          jerr (j, p.s, NULL, "expected a group name starting with '@', or null");
          rok = false;
        }
      json_t *conds = json_object_get (ro, "conditions");
      struct jpath cp = jp_key (rp.s, "conditions");
      if (conds != NULL && (!json_is_array (conds) || json_array_size (conds) > SECURER_MAX_ARG_CONDS))
        {
          jerr (j, cp.s, NULL, "expected an array of at most %d conditions", SECURER_MAX_ARG_CONDS);
          rok = false;
        }
      else if (conds != NULL)
        {
          r->n_conds = (unsigned) json_array_size (conds);
          for (unsigned k = 0; k < r->n_conds; k++)
            {
              struct jpath kp = jp_idx (cp.s, k);
              rok &= read_cond (j, kp.s, json_array_get (conds, k), &r->conds[k]);
            }
        }
      /* The resolved form holds at most one unconditional rule per
       * syscall: a second one would have replaced the first. */
      if (rok && r->n_conds == 0)
        for (size_t k = 0; k < i; k++)
          if (s->rules[k].name && s->rules[k].n_conds == 0 && strcmp (s->rules[k].name, r->name) == 0)
            {
              jerr (j, rp.s, NULL, "second unconditional rule for '%s' (see $.seccomp.rules[%zu])",
                    r->name, k);
              rok = false;
              break;
            }
      ok &= rok;
    }
  return ok;
}

struct jcons {
  struct jr *j;
};

static void
report_json (void *ctx, int what, const char *msg)
{
  struct jr *j = ctx;
  static const char *const where[SET_COUNT] = {
    [SET_NAMESPACES] = "$.namespaces", [SET_NETWORK] = "$.network", [SET_HOSTNAME] = "$.hostname",
    [SET_CGROUP_MODE] = "$.cgroup.mode", [SET_SECCOMP] = "$.seccomp",
    [SET_SECCOMP_DEFAULT] = "$.seccomp.default_action", [SET_LANDLOCK] = "$.landlock.mode",
  };
  jerr (j, where[what] ? where[what] : "$", NULL, "%s", msg);
}

static void
read_net_limits (struct jr *j, json_t *root, struct securer_policy *p)
{
  json_t *o = json_object_get (root, "net_limits");
  if (o == NULL)
    return;
  static const char *const keys[] = { "connections", "bytes", "idle_ms" };
  if (!jkeys (j, "$.net_limits", o, keys, 3, NULL))
    return;
  uint64_t v;
  if (get_u64 (j, "$.net_limits", o, "connections", SECURER_NET_MAX_CONNECTIONS, &v))
    p->net_limits.connections = (uint32_t) v;
  json_t *b = json_object_get (o, "bytes");
  if (json_is_string (b) && strcmp (json_string_value (b), "unlimited") == 0)
    p->net_limits.bytes = UINT64_MAX;
  else if (get_u64 (j, "$.net_limits", o, "bytes", UINT64_MAX - 1, &v))
    p->net_limits.bytes = v;
  if (get_u64 (j, "$.net_limits", o, "idle_ms", UINT64_MAX / 2, &v))
    p->net_limits.idle_ms = v;
}

static void
read_net_rules (struct jr *j, json_t *root, struct securer_policy *p)
{
  json_t *rules = json_object_get (root, "net_rules");
  if (rules == NULL)
    return;
  if (!json_is_array (rules) || json_array_size (rules) > POLICY_MAX_ITEMS)
    {
      jerr (j, "$.net_rules", NULL, "expected an array of at most %d network rules", POLICY_MAX_ITEMS);
      return;
    }
  size_t n = json_array_size (rules);
  p->net_rules = xcalloc_array (n, sizeof *p->net_rules);
  if (p->net_rules == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    {
      struct jpath rp = jp_idx ("$.net_rules", i);
      json_t *o = json_array_get (rules, i);
      static const char *const keys[] = { "action", "dest" };
      static const char *const actions[] = { "allow", "deny" };
      int action = 0;
      char *dest = NULL;
      if (!json_is_object (o))
        {
          jerr (j, rp.s, NULL, "expected an object with action and dest, got %s", jtype (o));
          continue;
        }
      if (!jkeys (j, rp.s, o, keys, 2, NULL) || !get_enum (j, rp.s, o, "action", actions, 2, &action)
          || !get_str (j, rp.s, o, "dest", false, &dest))
        {
          free (dest);
          continue;
        }
      const char *why;
      struct jpath dp = jp_key (rp.s, "dest");
      if (securer_net_rule_parse (dest, action == 1, &p->net_rules[p->n_net_rules], &why) < 0)
        jerr (j, dp.s, NULL, "invalid network rule '%s': %s", dest, why);
      else
        p->n_net_rules++;
      free (dest);
    }
}

int
policy_from_json (const char *name, const char *text, size_t len, struct securer_policy **out,
                  struct securer_diags *diags)
{
  struct jr j = { diags, name };
  size_t errors = diags->n_errors;
  json_error_t jerror;
  json_t *root = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerror);
  if (root == NULL)
    {
      diag_add (diags, SECURER_DIAG_ERROR, name, jerror.line > 0 ? (unsigned) jerror.line : 0,
                jerror.column > 0 ? (unsigned) jerror.column : 0, NULL, "invalid JSON: %s", jerror.text);
      return -1;
    }
  static const char *const keys[] = {
    "securer_policy", "name", "path", "includes", "namespaces", "hostname", "uid", "gid",
    "host_uid", "host_gid", "cwd", "network", "mounts", "masks", "limits", "cgroup", "env",
    "exec", "landlock", "seccomp", "session",
  };
  struct securer_policy *p = calloc (1, sizeof *p);
  if (p == NULL || !jkeys (&j, "$", root, keys, sizeof keys / sizeof *keys, "net_rules net_limits"))
    goto done;

  uint64_t version = 0;
  if (get_u64 (&j, "$", root, "securer_policy", UINT32_MAX, &version) && version != FORMAT_VERSION)
    jerr (&j, "$.securer_policy", NULL, "unsupported format version %" PRIu64 " (expected %d)", version,
          FORMAT_VERSION);
  get_str (&j, "$", root, "name", false, &p->name);
  get_str (&j, "$", root, "path", true, &p->path);
  get_strv (&j, "$", root, "includes", NULL, &p->includes, &p->n_includes);

  json_t *ns = json_object_get (root, "namespaces");
  if (ns != NULL && !json_is_array (ns))
    jerr (&j, "$.namespaces", NULL, "expected an array of namespace names, got %s", jtype (ns));
  else if (ns != NULL)
    for (size_t i = 0; i < json_array_size (ns); i++)
      {
        struct jpath ep = jp_idx ("$.namespaces", i);
        int k;
        if (val_enum (&j, ep.s, json_array_get (ns, i), policy_ns_names, 7, &k))
          p->namespaces |= 1u << k;
      }

  get_str (&j, "$", root, "hostname", true, &p->hostname);
  const char *why;
  if (p->hostname && (why = check_hostname (p->hostname)) != NULL)
    jerr (&j, "$.hostname", NULL, "expected %s", why);
  uint64_t id;
  if (get_u64 (&j, "$", root, "uid", 4294967294u, &id))
    p->uid = (uint32_t) id;
  if (get_u64 (&j, "$", root, "gid", 4294967294u, &id))
    p->gid = (uint32_t) id;
  get_host (&j, "$", root, "host_uid", &p->host_uid);
  get_host (&j, "$", root, "host_gid", &p->host_gid);
  if (get_str (&j, "$", root, "cwd", false, &p->cwd) && (why = check_abs_path (p->cwd)) != NULL)
    jerr (&j, "$.cwd", NULL, "expected %s", why);
  int net = 0;
  static const char *const nets[] = { "none", "loopback", "host", "allow" };
  get_enum (&j, "$", root, "network", nets, 4, &net);
  p->network = net;
  read_net_rules (&j, root, p);
  read_net_limits (&j, root, p);

  json_t *mounts = json_object_get (root, "mounts");
  if (mounts != NULL && (!json_is_array (mounts) || json_array_size (mounts) > POLICY_MAX_ITEMS))
    jerr (&j, "$.mounts", NULL, "expected an array of at most %d mounts", POLICY_MAX_ITEMS);
  else if (mounts != NULL)
    {
      size_t n = json_array_size (mounts);
      p->mounts = xcalloc_array (n, sizeof *p->mounts);
      if (p->mounts == NULL)
        goto done;
      p->n_mounts = n;
      for (size_t i = 0; i < n; i++)
        {
          struct jpath mp = jp_idx ("$.mounts", i);
          if (read_mount (&j, mp.s, json_array_get (mounts, i), &p->mounts[i]))
            for (size_t k = 0; k < i; k++)
              if (p->mounts[k].dest && strcmp (p->mounts[k].dest, p->mounts[i].dest) == 0)
                {
                  struct jpath dp = jp_key (mp.s, "dest");
                  jerr (&j, dp.s, NULL, "'%s' is mounted twice", p->mounts[i].dest);
                  break;
                }
        }
    }
  get_strv (&j, "$", root, "masks", check_abs_path, &p->masks, &p->n_masks);
  read_limits (&j, root, &p->limits);
  read_env (&j, root, p);
  json_t *ex = json_object_get (root, "exec");
  if (ex != NULL && !json_is_null (ex))
    {
      p->exec_restricted = true;
      get_strv (&j, "$", root, "exec", check_abs_path, &p->exec, &p->n_exec);
    }
  read_landlock (&j, root, &p->landlock);
  read_seccomp (&j, root, &p->seccomp);
  json_t *sess = json_object_get (root, "session");
  static const char *const sess_keys[] = { "template" };
  int tm = SECURER_SESSION_TEMPLATE_AUTO;
  if (sess != NULL && jkeys (&j, "$.session", sess, sess_keys, 1, NULL))
    get_enum (&j, "$.session", sess, "template", policy_session_template_names, 3, &tm);
  p->session_template = (enum securer_session_template) tm;

  if (diags->n_errors == errors)
    policy_check_consistency (p, report_json, &j);

done:
  json_decref (root);
  if (p == NULL || diags->n_errors > errors)
    {
      if (p == NULL)
        diag_add (diags, SECURER_DIAG_ERROR, name, 0, 0, NULL, "out of memory");
      securer_policy_free (p);
      return -1;
    }
  *out = p;
  return 0;
}

int
securer_policy_from_json_text (const char *name, const char *text, size_t len,
                               struct securer_policy **out, securer_err_t *err)
{
  if (out == NULL || (text == NULL && len > 0))
    return securer_error_set (err, EINVAL, "read JSON policy: invalid arguments");
  *out = NULL;
  if (name == NULL)
    name = "<json>";
  struct securer_diags d = { NULL, 0, 0 };
  int r = policy_from_json (name, text ? text : "", len, out, &d);
  if (r < 0)
    diag_to_error (&d, err);
  securer_diags_free (&d);
  return r;
}
