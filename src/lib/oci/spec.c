/* config.json of an OCI bundle, read into struct oci_spec.  Each object is
 * checked key by key: a key this runtime does not know how to honour is an
 * error naming it, so a spec is never run with part of it ignored. */
#include <config.h>

#include <cap-ng.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "oci/oci.h"
#include "seccomp/seccomp.h"

#define SETUP 125

static int
refuse (securer_err_t *err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static int
refuse (securer_err_t *err, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (buf, sizeof buf, fmt, ap);
  va_end (ap);
  securer_error_set (err, 0, "%s", buf);
  securer_error_set_status (err, SETUP);
  return -1;
}

/* Every key of obj must be in allowed (NULL-terminated). */
static int
known_keys (json_t *obj, const char *where, const char *const *allowed, securer_err_t *err)
{
  if (!json_is_object (obj))
    return refuse (err, "%s: not an object", where);
  const char *k;
  json_t *v;
  json_object_foreach (obj, k, v)
    {
      bool ok = false;
      for (size_t i = 0; allowed[i]; i++)
        ok = ok || strcmp (k, allowed[i]) == 0;
      if (!ok)
        return refuse (err, "%s%s%s: not supported by securer-runc (see docs/oci.md)", where,
                       *where ? "." : "", k);
    }
  return 0;
}

static int
get_str (json_t *obj, const char *key, const char *where, bool required, char **out,
         securer_err_t *err)
{
  json_t *v = json_object_get (obj, key);
  *out = NULL;
  if (v == NULL || json_is_null (v))
    return required ? refuse (err, "%s.%s: missing", where, key) : 0;
  if (!json_is_string (v))
    return refuse (err, "%s.%s: not a string", where, key);
  *out = strdup (json_string_value (v));
  return 0;
}

static int
get_u32 (json_t *obj, const char *key, const char *where, uint32_t *out, securer_err_t *err)
{
  json_t *v = json_object_get (obj, key);
  if (v == NULL)
    return 0;
  if (!json_is_integer (v) || json_integer_value (v) < 0 || json_integer_value (v) > UINT32_MAX)
    return refuse (err, "%s.%s: not an unsigned 32-bit integer", where, key);
  *out = (uint32_t) json_integer_value (v);
  return 0;
}

/* A JSON array of strings as a NULL-terminated vector (NULL for absent). */
static int
get_strv (json_t *obj, const char *key, const char *where, char ***out, size_t *n,
          securer_err_t *err)
{
  json_t *a = json_object_get (obj, key);
  *out = NULL;
  if (n)
    *n = 0;
  if (a == NULL || json_is_null (a))
    return 0;
  if (!json_is_array (a))
    return refuse (err, "%s.%s: not an array", where, key);
  char **v = calloc (json_array_size (a) + 1, sizeof *v);
  size_t i;
  json_t *e;
  json_array_foreach (a, i, e)
    {
      if (!json_is_string (e))
        {
          for (size_t j = 0; j < i; j++)
            free (v[j]);
          free (v);
          return refuse (err, "%s.%s[%zu]: not a string", where, key, i);
        }
      v[i] = strdup (json_string_value (e));
    }
  *out = v;
  if (n)
    *n = json_array_size (a);
  return 0;
}

static void
strv_free (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

static void
warn (struct oci_spec *s, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
warn (struct oci_spec *s, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (buf, sizeof buf, fmt, ap);
  va_end (ap);
  char **v = realloc (s->warnings, (s->n_warnings + 2) * sizeof *v);
  if (v == NULL)
    return;
  s->warnings = v;
  v[s->n_warnings++] = strdup (buf);
  v[s->n_warnings] = NULL;
}

/* ---- process ------------------------------------------------------------ */
static int
cap_set (json_t *caps, const char *set, const char *where, uint64_t *out, securer_err_t *err)
{
  json_t *a = json_object_get (caps, set);
  *out = 0;
  if (a == NULL)
    return 0;
  if (!json_is_array (a))
    return refuse (err, "%s.%s: not an array", where, set);
  size_t i;
  json_t *e;
  json_array_foreach (a, i, e)
    {
      const char *name = json_string_value (e);
      if (name == NULL)
        return refuse (err, "%s.%s[%zu]: not a string", where, set, i);
      int c = strncasecmp (name, "CAP_", 4) == 0 ? capng_name_to_capability (name + 4) : -1;
      if (c < 0 || c > 63)
        return refuse (err, "%s.%s[%zu]: unknown capability \"%s\"", where, set, i, name);
      *out |= 1ull << c;
    }
  return 0;
}

static const struct { const char *name; int res; } rlimit_names[] = {
  { "RLIMIT_AS", RLIMIT_AS }, { "RLIMIT_CORE", RLIMIT_CORE }, { "RLIMIT_CPU", RLIMIT_CPU },
  { "RLIMIT_DATA", RLIMIT_DATA }, { "RLIMIT_FSIZE", RLIMIT_FSIZE }, { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE }, { "RLIMIT_NOFILE", RLIMIT_NOFILE }, { "RLIMIT_NPROC", RLIMIT_NPROC },
  { "RLIMIT_RSS", RLIMIT_RSS }, { "RLIMIT_RTPRIO", RLIMIT_RTPRIO }, { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING }, { "RLIMIT_STACK", RLIMIT_STACK },
};

static int
json_rlim (json_t *v, rlim_t *out)
{
  if (!json_is_integer (v))
    return -1;
  json_int_t x = json_integer_value (v);
  /* Engines write RLIM_INFINITY as the unsigned 2^64-1, which jansson
   * reads as -1 (or refuses); both mean unlimited. */
  *out = x < 0 ? RLIM_INFINITY : (rlim_t) x;
  return 0;
}

int
oci_process_parse (json_t *j, const char *where, struct oci_process *p, securer_err_t *err)
{
  static const char *const keys[] = { "terminal", "consoleSize", "args", "env", "cwd", "user",
                                      "capabilities", "noNewPrivileges", "rlimits", "oomScoreAdj",
                                      "apparmorProfile", "selinuxLabel", NULL };
  char w[128];
  memset (p, 0, sizeof *p);
  if (known_keys (j, where, keys, err) < 0)
    return -1;
  /* Labels of LSMs securer does not drive: empty is fine, a label is not. */
  static const char *const labels[] = { "apparmorProfile", "selinuxLabel", NULL };
  for (size_t i = 0; labels[i]; i++)
    {
      json_t *v = json_object_get (j, labels[i]);
      if (v && !(json_is_string (v) && *json_string_value (v) == '\0'))
        return refuse (err, "%s.%s: securer-runc does not apply LSM labels", where, labels[i]);
    }
  p->terminal = json_is_true (json_object_get (j, "terminal"));
  json_t *cs = json_object_get (j, "consoleSize");
  if (cs)
    {
      static const char *const cskeys[] = { "height", "width", NULL };
      uint32_t h = 0, w2 = 0;
      snprintf (w, sizeof w, "%s.consoleSize", where);
      if (known_keys (cs, w, cskeys, err) < 0 || get_u32 (cs, "height", w, &h, err) < 0
          || get_u32 (cs, "width", w, &w2, err) < 0)
        return -1;
      if (h > 65535 || w2 > 65535)
        return refuse (err, "%s: larger than a terminal can be", w);
      p->rows = (unsigned short) h;
      p->cols = (unsigned short) w2;
    }
  p->no_new_privs = json_is_true (json_object_get (j, "noNewPrivileges"));
  if (get_strv (j, "args", where, &p->args, NULL, err) < 0
      || get_strv (j, "env", where, &p->env, NULL, err) < 0
      || get_str (j, "cwd", where, true, &p->cwd, err) < 0)
    return -1;
  if (p->args == NULL || p->args[0] == NULL)
    return refuse (err, "%s.args: missing or empty", where);
  if (p->cwd[0] != '/')
    return refuse (err, "%s.cwd: not an absolute path", where);
  if (p->env == NULL)
    p->env = calloc (1, sizeof *p->env);

  json_t *u = json_object_get (j, "user");
  if (u)
    {
      static const char *const ukeys[] = { "uid", "gid", "umask", "additionalGids", "username", NULL };
      snprintf (w, sizeof w, "%s.user", where);
      if (known_keys (u, w, ukeys, err) < 0 || get_u32 (u, "uid", w, &p->uid, err) < 0
          || get_u32 (u, "gid", w, &p->gid, err) < 0)
        return -1;
      const char *un = json_string_value (json_object_get (u, "username"));
      if (json_object_get (u, "username") && (un == NULL || *un))
        return refuse (err, "%s.username: a Windows field; give uid and gid", w);
      json_t *um = json_object_get (u, "umask");
      if (um)
        {
          uint32_t m = 0;
          if (get_u32 (u, "umask", w, &m, err) < 0)
            return -1;
          p->has_umask = true;
          p->umask = (mode_t) (m & 0777);
        }
      json_t *g = json_object_get (u, "additionalGids");
      if (g && !json_is_array (g) && !json_is_null (g))
        return refuse (err, "%s.additionalGids: not an array", w);
      if (g && json_is_array (g))
        {
          p->groups = calloc (json_array_size (g) + 1, sizeof *p->groups);
          size_t i;
          json_t *e;
          json_array_foreach (g, i, e)
            {
              if (!json_is_integer (e) || json_integer_value (e) < 0)
                return refuse (err, "%s.additionalGids[%zu]: not a gid", w, i);
              p->groups[p->n_groups++] = (gid_t) json_integer_value (e);
            }
        }
    }

  json_t *c = json_object_get (j, "capabilities");
  if (c)
    {
      static const char *const ckeys[] = { "bounding", "effective", "permitted", "inheritable",
                                           "ambient", NULL };
      snprintf (w, sizeof w, "%s.capabilities", where);
      if (known_keys (c, w, ckeys, err) < 0 || cap_set (c, "bounding", w, &p->cap_bounding, err) < 0
          || cap_set (c, "effective", w, &p->cap_effective, err) < 0
          || cap_set (c, "permitted", w, &p->cap_permitted, err) < 0
          || cap_set (c, "inheritable", w, &p->cap_inheritable, err) < 0
          || cap_set (c, "ambient", w, &p->cap_ambient, err) < 0)
        return -1;
      /* PR_CAP_AMBIENT_RAISE fails unless the capability is permitted and
       * inheritable.  runc's own default spec lists ambient capabilities
       * with no inheritable set, and runc runs it without them; so do we,
       * telling the caller which were left out. */
      p->cap_ambient_unraisable = p->cap_ambient & ~(p->cap_permitted & p->cap_inheritable);
      p->cap_ambient &= p->cap_permitted & p->cap_inheritable;
    }

  json_t *rl = json_object_get (j, "rlimits");
  if (rl)
    {
      if (!json_is_array (rl))
        return refuse (err, "%s.rlimits: not an array", where);
      p->rlimits = calloc (json_array_size (rl) + 1, sizeof *p->rlimits);
      size_t i;
      json_t *e;
      json_array_foreach (rl, i, e)
        {
          const char *t = json_string_value (json_object_get (e, "type"));
          int res = -1;
          for (size_t k = 0; t && k < sizeof rlimit_names / sizeof rlimit_names[0]; k++)
            if (strcmp (t, rlimit_names[k].name) == 0)
              res = rlimit_names[k].res;
          if (res < 0)
            return refuse (err, "%s.rlimits[%zu].type: unknown rlimit \"%s\"", where, i, t ? t : "");
          struct oci_rlimit *r = &p->rlimits[p->n_rlimits++];
          r->resource = res;
          if (json_rlim (json_object_get (e, "soft"), &r->soft) < 0
              || json_rlim (json_object_get (e, "hard"), &r->hard) < 0)
            return refuse (err, "%s.rlimits[%zu]: soft and hard must be integers", where, i);
        }
    }
  json_t *oom = json_object_get (j, "oomScoreAdj");
  if (oom)
    {
      if (!json_is_integer (oom) || json_integer_value (oom) < -1000 || json_integer_value (oom) > 1000)
        return refuse (err, "%s.oomScoreAdj: not an integer in -1000..1000", where);
      p->has_oom_score_adj = true;
      p->oom_score_adj = (int) json_integer_value (oom);
    }
  return 0;
}

char *
oci_process_warning (const struct oci_process *p, const char *where)
{
  if (p->cap_ambient_unraisable == 0)
    return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    return NULL;
  fprintf (f, "%s.capabilities.ambient:", where);
  for (int c = 0; c < 64; c++)
    if ((p->cap_ambient_unraisable >> c) & 1)
      {
        const char *n = capng_capability_to_name ((unsigned) c);
        fputs (" CAP_", f);
        for (; n && *n; n++)
          fputc (toupper ((unsigned char) *n), f);
        if (n == NULL)
          fprintf (f, "%d", c);
      }
  fputs (" not raised: an ambient capability must be permitted and inheritable too", f);
  fclose (f);
  return buf;
}

void
oci_process_clear (struct oci_process *p)
{
  strv_free (p->args);
  strv_free (p->env);
  free (p->cwd);
  free (p->groups);
  free (p->rlimits);
  memset (p, 0, sizeof *p);
}

/* ---- mounts ------------------------------------------------------------- */
static const struct { const char *name; unsigned long set, clear; } mount_opts[] = {
  { "ro", MS_RDONLY, 0 }, { "rw", 0, MS_RDONLY },
  { "nosuid", MS_NOSUID, 0 }, { "suid", 0, MS_NOSUID },
  { "nodev", MS_NODEV, 0 }, { "dev", 0, MS_NODEV },
  { "noexec", MS_NOEXEC, 0 }, { "exec", 0, MS_NOEXEC },
  { "sync", MS_SYNCHRONOUS, 0 }, { "async", 0, MS_SYNCHRONOUS },
  { "dirsync", MS_DIRSYNC, 0 }, { "remount", MS_REMOUNT, 0 },
  { "mand", MS_MANDLOCK, 0 }, { "nomand", 0, MS_MANDLOCK },
  { "atime", 0, MS_NOATIME }, { "noatime", MS_NOATIME, 0 },
  { "diratime", 0, MS_NODIRATIME }, { "nodiratime", MS_NODIRATIME, 0 },
  { "relatime", MS_RELATIME, 0 }, { "norelatime", 0, MS_RELATIME },
  { "strictatime", MS_STRICTATIME, 0 }, { "nostrictatime", 0, MS_STRICTATIME },
  { "defaults", 0, 0 },
};

static const struct { const char *name; unsigned long flags; } propagations[] = {
  { "private", MS_PRIVATE }, { "rprivate", MS_PRIVATE | MS_REC },
  { "shared", MS_SHARED }, { "rshared", MS_SHARED | MS_REC },
  { "slave", MS_SLAVE }, { "rslave", MS_SLAVE | MS_REC },
  { "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
};

static unsigned long
propagation_flags (const char *s)
{
  for (size_t i = 0; i < sizeof propagations / sizeof propagations[0]; i++)
    if (strcmp (s, propagations[i].name) == 0)
      return propagations[i].flags;
  return 0;
}

static const char *const mount_types[] = { "bind", "rbind", "tmpfs", "proc", "sysfs", "devpts",
                                           "mqueue", "cgroup", "cgroup2", "none", NULL };

static int
parse_mount (json_t *j, size_t idx, struct oci_mount *m, securer_err_t *err)
{
  static const char *const keys[] = { "destination", "type", "source", "options", NULL };
  char where[64];
  snprintf (where, sizeof where, "mounts[%zu]", idx);
  if (known_keys (j, where, keys, err) < 0 || get_str (j, "destination", where, true, &m->dest, err) < 0
      || get_str (j, "type", where, false, &m->type, err) < 0
      || get_str (j, "source", where, false, &m->source, err) < 0)
    return -1;
  if (m->dest[0] != '/')
    return refuse (err, "%s.destination: \"%s\" is not an absolute path", where, m->dest);
  char **opts = NULL;
  size_t n = 0;
  if (get_strv (j, "options", where, &opts, &n, err) < 0)
    return -1;
  size_t dlen = 0;
  char *data = calloc (1, 1);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    {
      const char *o = opts[i];
      bool done = false;
      for (size_t k = 0; k < sizeof mount_opts / sizeof mount_opts[0] && !done; k++)
        if (strcmp (o, mount_opts[k].name) == 0)
          {
            m->flags = (m->flags & ~mount_opts[k].clear) | mount_opts[k].set;
            m->clear = (m->clear & ~mount_opts[k].set) | mount_opts[k].clear;
            done = true;
          }
      if (done)
        continue;
      if (strcmp (o, "bind") == 0 || strcmp (o, "rbind") == 0)
        {
          m->bind = true;
          m->recursive = m->recursive || o[0] == 'r';
        }
      else if (propagation_flags (o))
        m->propagation = propagation_flags (o);
      else if (strcmp (o, "tmpcopyup") == 0)
        m->copyup = true;
      else if (strcmp (o, "idmap") == 0 || strcmp (o, "ridmap") == 0
               || strncmp (o, "x-", 2) == 0 || strcmp (o, "copy-symlink") == 0)
        rc = refuse (err, "%s.options: \"%s\" is not supported by securer-runc", where, o);
      else
        {
          /* Filesystem-specific (mode=, size=, newinstance, gid=, ...):
           * handed to the filesystem, which refuses what it does not know. */
          size_t l = strlen (o);
          data = realloc (data, dlen + l + 2);
          if (dlen)
            data[dlen++] = ',';
          memcpy (data + dlen, o, l + 1);
          dlen += l;
        }
    }
  strv_free (opts);
  if (rc < 0)
    {
      free (data);
      return -1;
    }
  if (dlen)
    m->data = data;
  else
    free (data);
  if (m->type == NULL || strcmp (m->type, "none") == 0)
    {
      free (m->type);
      m->type = strdup ("bind");
      if (!m->bind)
        return refuse (err, "%s: no type and no bind option", where);
    }
  bool typed = false;
  for (size_t k = 0; mount_types[k]; k++)
    typed = typed || strcmp (m->type, mount_types[k]) == 0;
  if (!typed)
    return refuse (err, "%s.type: \"%s\" is not supported by securer-runc", where, m->type);
  if (strcmp (m->type, "rbind") == 0)
    m->bind = m->recursive = true;
  if (strcmp (m->type, "bind") == 0)
    m->bind = true;
  if (m->copyup && strcmp (m->type, "tmpfs") != 0)
    return refuse (err, "%s.options: tmpcopyup is for tmpfs mounts only", where);
  if (m->bind && (m->source == NULL || m->source[0] != '/'))
    return refuse (err, "%s.source: a bind mount needs an absolute source", where);
  /* A bind mount takes no filesystem options: the kernel would drop them
   * unread, and "rro", "rnoexec" and the like would silently not hold. */
  if (m->bind && m->data)
    return refuse (err, "%s.options: \"%s\" is not supported for a bind mount", where, m->data);
  return 0;
}

/* ---- linux ------------------------------------------------------------- */
static const char *const ns_names[OCI_NS_COUNT] = { "pid", "network", "ipc", "uts", "mount", "user",
                                                   "cgroup" };

const char *
oci_ns_name (enum oci_ns_type t)
{
  return ns_names[t];
}

static int
parse_idmaps (json_t *a, const char *where, struct oci_idmap **out, size_t *n, securer_err_t *err)
{
  if (a == NULL)
    return 0;
  if (!json_is_array (a))
    return refuse (err, "%s: not an array", where);
  *out = calloc (json_array_size (a) + 1, sizeof **out);
  size_t i;
  json_t *e;
  json_array_foreach (a, i, e)
    {
      static const char *const keys[] = { "containerID", "hostID", "size", NULL };
      char w[64];
      snprintf (w, sizeof w, "%s[%zu]", where, i);
      struct oci_idmap *m = &(*out)[(*n)++];
      if (known_keys (e, w, keys, err) < 0 || get_u32 (e, "containerID", w, &m->inside, err) < 0
          || get_u32 (e, "hostID", w, &m->outside, err) < 0 || get_u32 (e, "size", w, &m->size, err) < 0)
        return -1;
    }
  return 0;
}

static int
get_i64 (json_t *obj, const char *key, const char *where, int64_t *out, securer_err_t *err)
{
  json_t *v = json_object_get (obj, key);
  if (v == NULL || json_is_null (v))
    return 0;
  if (!json_is_integer (v))
    return refuse (err, "%s.%s: not an integer", where, key);
  *out = json_integer_value (v);
  return 0;
}

static int
parse_resources (struct oci_spec *s, json_t *r, securer_err_t *err)
{
  static const char *const keys[] = { "devices", "memory", "pids", "cpu", "blockIO",
                                      "hugepageLimits", "network", "rdma", "unified", NULL };
  if (known_keys (r, "linux.resources", keys, err) < 0)
    return -1;
  /* Sections securer does not implement are refused unless empty. */
  static const char *const unsupported[] = { "blockIO", "hugepageLimits", "network", "rdma",
                                             "unified", NULL };
  for (size_t i = 0; unsupported[i]; i++)
    {
      json_t *v = json_object_get (r, unsupported[i]);
      if (v && json_is_object (v) && json_object_size (v) == 0)
        continue;
      if (v && json_is_array (v) && json_array_size (v) == 0)
        continue;
      if (v && !json_is_null (v))
        return refuse (err, "linux.resources.%s: not supported by securer-runc", unsupported[i]);
    }
  json_t *mem = json_object_get (r, "memory");
  if (mem)
    {
      static const char *const mkeys[] = { "limit", "reservation", "swap", "kernel", "kernelTCP",
                                           "swappiness", "disableOOMKiller", "useHierarchy",
                                           "checkBeforeUpdate", NULL };
      if (known_keys (mem, "linux.resources.memory", mkeys, err) < 0
          || get_i64 (mem, "limit", "linux.resources.memory", &s->mem_limit, err) < 0
          || get_i64 (mem, "reservation", "linux.resources.memory", &s->mem_reservation, err) < 0
          || get_i64 (mem, "swap", "linux.resources.memory", &s->mem_swap, err) < 0)
        return -1;
      /* Kernel memory limits are gone from the kernel (cgroup v2 never had
       * them, v1 ignores kmem.limit_in_bytes since 5.16): runc accepts and
       * ignores them, and engines still write them. */
      static const char *const kmem[] = { "kernel", "kernelTCP", NULL };
      for (size_t i = 0; kmem[i]; i++)
        {
          json_t *v = json_object_get (mem, kmem[i]);
          if (v && !json_is_null (v) && !json_is_integer (v))
            return refuse (err, "linux.resources.memory.%s: not an integer", kmem[i]);
          if (v && json_is_integer (v))
            warn (s, "linux.resources.memory.%s: kernel memory limits are not supported by the "
                     "kernel; ignored", kmem[i]);
        }
      if (get_i64 (mem, "swappiness", "linux.resources.memory", &s->mem_swappiness, err) < 0)
        return -1;
      /* Engines write the unsigned -1 for "unset", which jansson reads as -1. */
      if (s->mem_swappiness > 100)
        return refuse (err, "linux.resources.memory.swappiness: %lld is not in 0..100",
                       (long long) s->mem_swappiness);
      json_t *oom = json_object_get (mem, "disableOOMKiller");
      if (oom && !json_is_null (oom) && !json_is_boolean (oom))
        return refuse (err, "linux.resources.memory.disableOOMKiller: not a boolean");
      s->mem_disable_oom_killer = json_is_true (oom);
    }
  json_t *pids = json_object_get (r, "pids");
  if (pids)
    {
      static const char *const pkeys[] = { "limit", NULL };
      if (known_keys (pids, "linux.resources.pids", pkeys, err) < 0
          || get_i64 (pids, "limit", "linux.resources.pids", &s->pids_limit, err) < 0)
        return -1;
    }
  json_t *cpu = json_object_get (r, "cpu");
  if (cpu)
    {
      static const char *const ckeys[] = { "shares", "quota", "period", "cpus", "mems",
                                           "realtimeRuntime", "realtimePeriod", "idle", NULL };
      const char *w = "linux.resources.cpu";
      int64_t shares = 0, period = 0;
      if (known_keys (cpu, w, ckeys, err) < 0 || get_i64 (cpu, "shares", w, &shares, err) < 0
          || get_i64 (cpu, "quota", w, &s->cpu_quota, err) < 0
          || get_i64 (cpu, "period", w, &period, err) < 0
          || get_str (cpu, "cpus", w, false, &s->cpuset_cpus, err) < 0
          || get_str (cpu, "mems", w, false, &s->cpuset_mems, err) < 0)
        return -1;
      /* Unsigned in the spec: a negative value is a mistake, not "unset". */
      if (shares < 0)
        return refuse (err, "%s.shares: %lld is negative", w, (long long) shares);
      if (period < 0)
        return refuse (err, "%s.period: %lld is negative", w, (long long) period);
      s->cpu_shares = (uint64_t) shares;
      s->cpu_period = (uint64_t) period;
      static const char *const cnot[] = { "realtimeRuntime", "realtimePeriod", "idle", NULL };
      for (size_t i = 0; cnot[i]; i++)
        {
          json_t *v = json_object_get (cpu, cnot[i]);
          if (v && !json_is_null (v) && !(json_is_integer (v) && json_integer_value (v) == 0))
            return refuse (err, "%s.%s: not supported by securer-runc", w, cnot[i]);
        }
    }
  json_t *dev = json_object_get (r, "devices");
  if (dev)
    {
      if (!json_is_array (dev))
        return refuse (err, "linux.resources.devices: not an array");
      s->devrules = calloc (json_array_size (dev) + 1, sizeof *s->devrules);
      size_t i;
      json_t *e;
      json_array_foreach (dev, i, e)
        {
          static const char *const dkeys[] = { "allow", "type", "major", "minor", "access", NULL };
          char w[64];
          snprintf (w, sizeof w, "linux.resources.devices[%zu]", i);
          if (known_keys (e, w, dkeys, err) < 0)
            return -1;
          struct oci_devrule *d = &s->devrules[s->n_devrules++];
          d->allow = json_is_true (json_object_get (e, "allow"));
          const char *t = json_string_value (json_object_get (e, "type"));
          d->type = t && *t ? t[0] : 'a';
          if (strchr ("acb", d->type) == NULL)
            return refuse (err, "%s.type: \"%s\" is not a, c or b", w, t);
          d->major = d->minor = -1;
          if (get_i64 (e, "major", w, &d->major, err) < 0 || get_i64 (e, "minor", w, &d->minor, err) < 0)
            return -1;
          const char *acc = json_string_value (json_object_get (e, "access"));
          snprintf (d->access, sizeof d->access, "%s", acc && *acc ? acc : "rwm");
          if (strspn (d->access, "rwm") != strlen (d->access))
            return refuse (err, "%s.access: \"%s\" is not made of r, w and m", w, d->access);
        }
    }
  return 0;
}

/* Sysctls that belong to a namespace the container has its own of; any
 * other would change the host. */
static bool
sysctl_namespaced (const struct oci_spec *s, const char *k)
{
  static const char *const ipc[] = { "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
                                     "kernel.shmall", "kernel.shmmax", "kernel.shmmni",
                                     "kernel.shm_rmid_forced", NULL };
  for (size_t i = 0; ipc[i]; i++)
    if (strcmp (k, ipc[i]) == 0)
      return s->ns_wanted[OCI_NS_IPC];
  if (strncmp (k, "fs.mqueue.", 10) == 0)
    return s->ns_wanted[OCI_NS_IPC];
  if (strncmp (k, "net.", 4) == 0)
    return s->ns_wanted[OCI_NS_NET];
  if (strcmp (k, "kernel.hostname") == 0 || strcmp (k, "kernel.domainname") == 0)
    return s->ns_wanted[OCI_NS_UTS];
  return false;
}

/* The highest native syscall number a profile names, or -1 when calls
 * past it need no ENOSYS: a default that lets them through (or already
 * says ENOSYS), or no syscall named at all (nothing tells the profile's
 * age).  As runc's, an unknown name counts for nothing. */
static int
last_syscall (json_t *sc)
{
  const char *def = json_string_value (json_object_get (sc, "defaultAction"));
  if (def == NULL || strcmp (def, "SCMP_ACT_ALLOW") == 0 || strcmp (def, "SCMP_ACT_LOG") == 0)
    return -1;
  json_t *ret = json_object_get (sc, "defaultErrnoRet");
  if ((strcmp (def, "SCMP_ACT_ERRNO") == 0 && json_is_integer (ret) && json_integer_value (ret) == ENOSYS))
    return -1;
  int last = -1;
  size_t i, k;
  json_t *r, *n;
  json_array_foreach (json_object_get (sc, "syscalls"), i, r)
    {
      json_t *names = json_object_get (r, "names");
      if (names == NULL && json_is_string (json_object_get (r, "name")))
        names = json_pack ("[O]", json_object_get (r, "name"));
      else
        json_incref (names);
      json_array_foreach (names, k, n)
        {
          const char *name = json_string_value (n);
          int nr = name ? seccomp_syscall_resolve_name (name) : __NR_SCMP_ERROR;
          if (nr > last)
            last = nr;
        }
      json_decref (names);
    }
  return last;
}

static int
parse_seccomp (struct oci_spec *s, json_t *sc, securer_err_t *err)
{
  if (json_object_get (sc, "listenerPath") || json_object_get (sc, "listenerMetadata"))
    return refuse (err, "linux.seccomp.listenerPath: handing the listener to an agent is not "
                        "supported by securer-runc");
  json_t *flags = json_object_get (sc, "flags");
  size_t i;
  json_t *e;
  json_array_foreach (flags, i, e)
    {
      const char *f = json_string_value (e);
      /* TSYNC is what securer always does; the others change what the filter
       * means or logs and are not implemented. */
      if (f == NULL || strcmp (f, "SECCOMP_FILTER_FLAG_TSYNC") != 0)
        return refuse (err, "linux.seccomp.flags[%zu]: \"%s\" is not supported by securer-runc", i,
                       f ? f : "");
    }
  const char *def = json_string_value (json_object_get (sc, "defaultAction"));
  if (def && strcmp (def, "SCMP_ACT_NOTIFY") == 0)
    return refuse (err, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY needs a listener agent "
                        "(listenerPath), which securer-runc does not support");
  json_array_foreach (json_object_get (sc, "syscalls"), i, e)
    {
      const char *act = json_string_value (json_object_get (e, "action"));
      if (act && strcmp (act, "SCMP_ACT_NOTIFY") == 0)
        return refuse (err, "linux.seccomp.syscalls[%zu].action: SCMP_ACT_NOTIFY needs a listener "
                            "agent (listenerPath), which securer-runc does not support", i);
    }
  json_array_foreach (json_object_get (sc, "syscalls"), i, e)
    if (json_object_get (e, "includes") || json_object_get (e, "excludes"))
      return refuse (err, "linux.seccomp.syscalls[%zu]: includes/excludes are Docker profile keys, "
                          "not part of the OCI spec (the engine resolves them)", i);
  s->seccomp_last_syscall = last_syscall (sc);
  json_t *copy = json_deep_copy (sc);
  json_object_del (copy, "flags");
  char *text = json_dumps (copy, JSON_COMPACT);
  json_decref (copy);
  s->seccomp_text = securer_seccomp_import_oci ("linux.seccomp", text, strlen (text), err);
  free (text);
  if (s->seccomp_text == NULL)
    {
      securer_error_set_status (err, SETUP);
      return -1;
    }
  return 0;
}

static int
parse_linux (struct oci_spec *s, json_t *l, securer_err_t *err)
{
  static const char *const keys[] = { "namespaces", "uidMappings", "gidMappings", "devices",
                                      "resources", "cgroupsPath", "maskedPaths", "readonlyPaths",
                                      "sysctl", "seccomp", "rootfsPropagation", "mountLabel",
                                      "personality", "intelRdt", "timeOffsets", NULL };
  if (known_keys (l, "linux", keys, err) < 0)
    return -1;
  const char *ml = json_string_value (json_object_get (l, "mountLabel"));
  if (json_object_get (l, "mountLabel") && (ml == NULL || *ml))
    return refuse (err, "linux.mountLabel: securer-runc does not apply SELinux labels");
  static const char *const never[] = { "personality", "intelRdt", "timeOffsets", NULL };
  for (size_t i = 0; never[i]; i++)
    if (json_object_get (l, never[i]))
      return refuse (err, "linux.%s: not supported by securer-runc", never[i]);

  json_t *ns = json_object_get (l, "namespaces");
  size_t i;
  json_t *e;
  json_array_foreach (ns, i, e)
    {
      static const char *const nkeys[] = { "type", "path", NULL };
      char w[64];
      snprintf (w, sizeof w, "linux.namespaces[%zu]", i);
      if (known_keys (e, w, nkeys, err) < 0)
        return -1;
      const char *t = json_string_value (json_object_get (e, "type"));
      int k = -1;
      for (int n = 0; n < OCI_NS_COUNT && t; n++)
        if (strcmp (t, ns_names[n]) == 0)
          k = n;
      if (k < 0)
        return refuse (err, "%s.type: \"%s\" is not supported by securer-runc", w, t ? t : "");
      if (s->ns_wanted[k])
        return refuse (err, "%s.type: \"%s\" given twice", w, t);
      s->ns_wanted[k] = true;
      char *path = NULL;
      if (get_str (e, "path", w, false, &path, err) < 0)
        return -1;
      if (path && *path)
        s->ns_path[k] = path;
      else
        free (path);
    }
  if (!s->ns_wanted[OCI_NS_MNT])
    return refuse (err, "linux.namespaces: a mount namespace is required (the container's root is "
                        "pivoted to)");
  if (s->ns_wanted[OCI_NS_USER] && !s->ns_path[OCI_NS_USER])
    for (int k = 0; k < OCI_NS_COUNT; k++)
      if (s->ns_path[k] && k != OCI_NS_PID)
        return refuse (err, "linux.namespaces: joining the %s namespace by path together with a new "
                            "user namespace is not supported", ns_names[k]);
  if (parse_idmaps (json_object_get (l, "uidMappings"), "linux.uidMappings", &s->uid_maps,
                    &s->n_uid_maps, err) < 0
      || parse_idmaps (json_object_get (l, "gidMappings"), "linux.gidMappings", &s->gid_maps,
                       &s->n_gid_maps, err) < 0)
    return -1;
  if ((s->n_uid_maps || s->n_gid_maps) && !(s->ns_wanted[OCI_NS_USER] && !s->ns_path[OCI_NS_USER]))
    return refuse (err, "linux.uidMappings: mappings need a new user namespace");
  if (s->ns_wanted[OCI_NS_USER] && !s->ns_path[OCI_NS_USER] && (!s->n_uid_maps || !s->n_gid_maps))
    return refuse (err, "linux.uidMappings: a new user namespace needs uid and gid mappings");

  if (get_strv (l, "maskedPaths", "linux", &s->masked, &s->n_masked, err) < 0
      || get_strv (l, "readonlyPaths", "linux", &s->readonly, &s->n_readonly, err) < 0
      || get_str (l, "cgroupsPath", "linux", false, &s->cgroups_path, err) < 0)
    return -1;

  json_t *prop = json_object_get (l, "rootfsPropagation");
  if (prop)
    {
      const char *p = json_string_value (prop);
      s->rootfs_propagation = p ? propagation_flags (p) : 0;
      if (s->rootfs_propagation == 0)
        return refuse (err, "linux.rootfsPropagation: \"%s\" is not a propagation type", p ? p : "");
    }

  json_t *devs = json_object_get (l, "devices");
  if (devs)
    {
      if (!json_is_array (devs))
        return refuse (err, "linux.devices: not an array");
      s->devices = calloc (json_array_size (devs) + 1, sizeof *s->devices);
      json_array_foreach (devs, i, e)
        {
          static const char *const dkeys[] = { "path", "type", "major", "minor", "fileMode", "uid",
                                               "gid", NULL };
          char w[64];
          snprintf (w, sizeof w, "linux.devices[%zu]", i);
          struct oci_device *d = &s->devices[s->n_devices++];
          char *type = NULL;
          d->mode = 0666;
          if (known_keys (e, w, dkeys, err) < 0 || get_str (e, "path", w, true, &d->path, err) < 0
              || get_str (e, "type", w, true, &type, err) < 0 || get_i64 (e, "major", w, &d->major, err) < 0
              || get_i64 (e, "minor", w, &d->minor, err) < 0 || get_u32 (e, "fileMode", w, &d->mode, err) < 0
              || get_u32 (e, "uid", w, &d->uid, err) < 0 || get_u32 (e, "gid", w, &d->gid, err) < 0)
            {
              free (type);
              return -1;
            }
          d->type = type[0] == 'u' ? 'c' : type[0];
          bool bad = strchr ("cbp", type[0] == 'u' ? 'c' : type[0]) == NULL || type[1] != '\0';
          free (type);
          if (bad)
            return refuse (err, "%s.type: not c, b, u or p", w);
          if (d->path[0] != '/')
            return refuse (err, "%s.path: not an absolute path", w);
        }
    }

  json_t *sys = json_object_get (l, "sysctl");
  if (sys)
    {
      if (!json_is_object (sys))
        return refuse (err, "linux.sysctl: not an object");
      size_t n = json_object_size (sys);
      s->sysctl_keys = calloc (n + 1, sizeof (char *));
      s->sysctl_values = calloc (n + 1, sizeof (char *));
      const char *k;
      json_t *v;
      json_object_foreach (sys, k, v)
        {
          if (!json_is_string (v))
            return refuse (err, "linux.sysctl.%s: not a string", k);
          if (!sysctl_namespaced (s, k) || strstr (k, "..") || strchr (k, '/'))
            return refuse (err, "linux.sysctl.%s: not a sysctl of a namespace the container has its "
                                "own of; setting it would change the host", k);
          s->sysctl_keys[s->n_sysctl] = strdup (k);
          s->sysctl_values[s->n_sysctl++] = strdup (json_string_value (v));
        }
    }
  json_t *res = json_object_get (l, "resources");
  if (res && parse_resources (s, res, err) < 0)
    return -1;
  json_t *sc = json_object_get (l, "seccomp");
  if (sc && parse_seccomp (s, sc, err) < 0)
    return -1;
  return 0;
}

static int
parse_hooks (struct oci_spec *s, json_t *h, securer_err_t *err)
{
  static const char *const keys[] = { "prestart", "createRuntime", "createContainer",
                                      "startContainer", "poststart", "poststop", NULL };
  if (known_keys (h, "hooks", keys, err) < 0)
    return -1;
  for (int k = 0; k < OCI_HOOK_COUNT; k++)
    {
      json_t *a = json_object_get (h, keys[k]);
      if (a == NULL)
        continue;
      if (!json_is_array (a))
        return refuse (err, "hooks.%s: not an array", keys[k]);
      s->hooks[k] = calloc (json_array_size (a) + 1, sizeof (struct oci_hook));
      size_t i;
      json_t *e;
      json_array_foreach (a, i, e)
        {
          static const char *const hkeys[] = { "path", "args", "env", "timeout", NULL };
          char w[64];
          snprintf (w, sizeof w, "hooks.%s[%zu]", keys[k], i);
          struct oci_hook *hk = &s->hooks[k][s->n_hooks[k]++];
          int64_t t = 0;
          if (known_keys (e, w, hkeys, err) < 0 || get_str (e, "path", w, true, &hk->path, err) < 0
              || get_strv (e, "args", w, &hk->args, NULL, err) < 0
              || get_strv (e, "env", w, &hk->env, NULL, err) < 0 || get_i64 (e, "timeout", w, &t, err) < 0)
            return -1;
          if (t < 0 || t > INT_MAX)
            return refuse (err, "%s.timeout: not a positive number of seconds", w);
          hk->timeout = (int) t;
        }
    }
  return 0;
}

static int
parse_annotations (struct oci_spec *s, json_t *a, securer_err_t *err)
{
  const char *k;
  json_t *v;
  json_object_foreach (a, k, v)
    {
      if (strncmp (k, "run.securer.", 12) != 0)
        continue;
      const char *val = json_string_value (v);
      if (val == NULL)
        return refuse (err, "annotations.%s: not a string", k);
      if (strcmp (k, "run.securer.policy") == 0)
        s->securer_policy = strdup (val);
      else if (strcmp (k, "run.securer.report-denials") == 0)
        {
          if (val[0] != '/')
            return refuse (err, "annotations.%s: not an absolute path", k);
          if (json_object_get (json_object_get (s->json, "linux"), "seccomp") == NULL)
            return refuse (err, "annotations.%s: the spec has no linux.seccomp to report from", k);
          s->report_denials = strdup (val);
        }
      else if (strcmp (k, "run.securer.network-allow") == 0)
        {
          if (val[strspn (val, " \t,")] == '\0')
            return refuse (err, "annotations.%s: no destination (HOST[:PORT] words, as in 'network allow')", k);
          s->network_allow = strdup (val);
        }
      else
        return refuse (err, "annotations.%s: unknown securer annotation (see docs/oci.md)", k);
    }
  return 0;
}

static int
parse_spec (struct oci_spec *s, securer_err_t *err)
{
  static const char *const keys[] = { "ociVersion", "process", "root", "hostname", "domainname",
                                      "mounts", "hooks", "annotations", "linux", NULL };
  json_t *j = s->json;
  if (known_keys (j, "", keys, err) < 0)
    return -1;
  const char *ver = json_string_value (json_object_get (j, "ociVersion"));
  if (ver == NULL || strncmp (ver, "1.", 2) != 0)
    return refuse (err, "ociVersion: \"%s\" is not a 1.x version", ver ? ver : "");
  if (json_object_get (j, "domainname"))
    return refuse (err, "domainname: not supported by securer-runc");
  json_t *root = json_object_get (j, "root");
  char *rpath = NULL;
  static const char *const rkeys[] = { "path", "readonly", NULL };
  if (root == NULL)
    return refuse (err, "root: missing");
  if (known_keys (root, "root", rkeys, err) < 0 || get_str (root, "path", "root", true, &rpath, err) < 0)
    return -1;
  s->root_readonly = json_is_true (json_object_get (root, "readonly"));
  if (rpath[0] == '/')
    s->rootfs = realpath (rpath, NULL);
  else
    {
      char *p = malloc (strlen (s->bundle) + strlen (rpath) + 2);
      sprintf (p, "%s/%s", s->bundle, rpath);
      s->rootfs = realpath (p, NULL);
      free (p);
    }
  if (s->rootfs == NULL)
    {
      securer_error_set (err, errno, "root.path: %s", rpath);
      free (rpath);
      securer_error_set_status (err, SETUP);
      return -1;
    }
  free (rpath);
  json_t *proc = json_object_get (j, "process");
  if (proc == NULL)
    return refuse (err, "process: missing");
  if (oci_process_parse (proc, "process", &s->proc, err) < 0
      || get_str (j, "hostname", "", false, &s->hostname, err) < 0)
    return -1;
  json_t *mounts = json_object_get (j, "mounts");
  if (mounts)
    {
      if (!json_is_array (mounts))
        return refuse (err, "mounts: not an array");
      s->mounts = calloc (json_array_size (mounts) + 1, sizeof *s->mounts);
      size_t i;
      json_t *e;
      json_array_foreach (mounts, i, e)
        if (parse_mount (e, i, &s->mounts[s->n_mounts++], err) < 0)
          return -1;
    }
  json_t *lx = json_object_get (j, "linux");
  if (lx == NULL)
    return refuse (err, "linux: missing (only Linux containers are supported)");
  if (parse_linux (s, lx, err) < 0)
    return -1;
  if (s->hostname && *s->hostname && !s->ns_wanted[OCI_NS_UTS])
    return refuse (err, "hostname: setting it needs a uts namespace");
  json_t *hooks = json_object_get (j, "hooks");
  if (hooks && parse_hooks (s, hooks, err) < 0)
    return -1;
  json_t *ann = json_object_get (j, "annotations");
  if (ann && parse_annotations (s, ann, err) < 0)
    return -1;
  return 0;
}

/* config_path read into *out; bundle NULL: config_path's directory. */
static struct oci_spec *
spec_new (json_t *j)
{
  struct oci_spec *s = calloc (1, sizeof *s);
  s->json = j;
  s->seccomp_last_syscall = -1;
  s->mem_limit = s->mem_reservation = s->mem_swap = -2;
  s->mem_swappiness = -1;
  return s;
}

int
oci_resources_parse (json_t *r, struct oci_spec **out, securer_err_t *err)
{
  *out = NULL;
  if (!json_is_object (r))
    return refuse (err, "linux.resources: not an object");
  struct oci_spec *s = spec_new (json_incref (r));
  if (parse_resources (s, r, err) < 0)
    {
      oci_spec_free (s);
      return -1;
    }
  *out = s;
  return 0;
}

bool
oci_devrules_equal (const struct oci_spec *a, const struct oci_spec *b)
{
  if (a->n_devrules != b->n_devrules)
    return false;
  for (size_t i = 0; i < a->n_devrules; i++)
    {
      const struct oci_devrule *x = &a->devrules[i], *y = &b->devrules[i];
      if (x->allow != y->allow || x->type != y->type || x->major != y->major
          || x->minor != y->minor || strcmp (x->access, y->access) != 0)
        return false;
    }
  return true;
}

static int
load_spec (const char *config_path, const char *bundle, struct oci_spec **out, securer_err_t *err)
{
  json_error_t je;
  json_t *j = json_load_file (config_path, 0, &je);
  *out = NULL;
  if (j == NULL)
    {
      securer_error_set (err, 0, "%s:%d: %s", config_path, je.line, je.text);
      securer_error_set_status (err, SETUP);
      return -1;
    }
  struct oci_spec *s = spec_new (j);
  char *dir = strdup (config_path);
  char *slash = strrchr (dir, '/');
  if (slash)
    *slash = '\0';
  if (bundle == NULL)
    bundle = slash ? (*dir ? dir : "/") : ".";
  s->bundle = realpath (bundle, NULL);
  free (dir);
  if (s->bundle == NULL)
    {
      securer_error_set (err, errno, "bundle directory of %s", config_path);
      oci_spec_free (s);
      return -1;
    }
  if (parse_spec (s, err) < 0)
    {
      securer_error_prefix (err, "%s", config_path);
      oci_spec_free (s);
      return -1;
    }
  *out = s;
  return 0;
}

int
oci_spec_load_file (const char *config_path, struct oci_spec **out, securer_err_t *err)
{
  return load_spec (config_path, NULL, out, err);
}

int
oci_spec_load_saved (const char *config_path, const char *bundle, struct oci_spec **out,
                     securer_err_t *err)
{
  return load_spec (config_path, bundle, out, err);
}

int
oci_spec_load (const char *bundle, struct oci_spec **out, securer_err_t *err)
{
  char *path = malloc (strlen (bundle) + sizeof "/config.json");
  sprintf (path, "%s/config.json", bundle);
  int rc = oci_spec_load_file (path, out, err);
  free (path);
  return rc;
}

static bool
cond_equal (const struct securer_arg_cond *a, const struct securer_arg_cond *b)
{
  return a->arg == b->arg && a->value == b->value && a->mask == b->mask;
}

/* Engines write "deny when C, allow otherwise" as one rule for C plus one
 * allow rule per negated condition of C (Docker's socket rule:
 * errno if arg0 == AF_VSOCK ... and allow if arg0 != ..., allow if arg2 !=
 * ...).  The allow rules together are exactly "not C", which with
 * first-match order is an unconditional allow after the rule for C; in that
 * form the compiler does not have to split the != conditions into regions. */
static void
fold_complement_allows (struct securer_seccomp *sc)
{
  for (size_t i = 0; i < sc->n_rules; i++)
    {
      struct securer_syscall_rule *r = &sc->rules[i];
      if (r->action.type == SECURER_ACT_ALLOW || r->n_conds == 0)
        continue;
      bool pattern = true, covered[SECURER_MAX_ARG_CONDS] = { false };
      size_t n_same = 0, n_allow = 0;
      for (unsigned c = 0; c < r->n_conds; c++)
        pattern = pattern && r->conds[c].op == SECURER_CMP_EQ;
      for (size_t j = 0; j < sc->n_rules && pattern; j++)
        {
          struct securer_syscall_rule *o = &sc->rules[j];
          if (j == i || strcmp (o->name, r->name) != 0)
            continue;
          n_same++;
          if (o->action.type != SECURER_ACT_ALLOW || o->n_conds != 1 || o->conds[0].op != SECURER_CMP_NE)
            {
              pattern = false;
              break;
            }
          bool found = false;
          for (unsigned c = 0; c < r->n_conds; c++)
            if (cond_equal (&o->conds[0], &r->conds[c]))
              found = covered[c] = true;
          pattern = pattern && found;
          n_allow++;
        }
      for (unsigned c = 0; c < r->n_conds; c++)
        pattern = pattern && covered[c];
      if (!pattern || n_allow == 0 || n_same != n_allow)
        continue;
      /* Keep the first allow rule, unconditional; drop the others. */
      bool kept = false;
      size_t w = 0;
      for (size_t j = 0; j < sc->n_rules; j++)
        {
          struct securer_syscall_rule *o = &sc->rules[j];
          if (j != i && strcmp (o->name, r->name) == 0 && o->action.type == SECURER_ACT_ALLOW
              && o->n_conds == 1)
            {
              if (kept)
                {
                  free (o->name);
                  free (o->group);
                  free (o->loc.file);
                  continue;
                }
              o->n_conds = 0;
              kept = true;
            }
          sc->rules[w++] = *o;
        }
      sc->n_rules = w;
      r = NULL;
    }
}

int
oci_spec_seccomp_policy (const struct oci_spec *s, struct securer_policy **out, securer_err_t *err)
{
  *out = NULL;
  if (s->seccomp_text == NULL)
    return 0;
  if (securer_policy_load_string ("linux.seccomp", s->seccomp_text, strlen (s->seccomp_text), out,
                                  NULL, err)
      < 0)
    {
      securer_error_set_status (err, SETUP);
      return -1;
    }
  fold_complement_allows (&(*out)->seccomp);
  return 0;
}

static int
prepare (const struct securer_policy *p, unsigned flags, int notify_fd,
         struct securer_seccomp_prog **out, securer_err_t *err)
{
  *out = NULL;
  if (p == NULL)
    return 0;
  if (securer_seccomp_compile (p, flags, notify_fd, out, err) < 0 || securer_seccomp_generate (*out, p, err) < 0)
    {
      securer_seccomp_free (*out);
      *out = NULL;
      securer_error_prefix (err, "linux.seccomp");
      securer_error_set_status (err, SETUP);
      return -1;
    }
  return 0;
}

int
oci_seccomp_prepare (const struct securer_policy *p, struct securer_seccomp_prog **out,
                     securer_err_t *err)
{
  return prepare (p, 0, -1, out, err);
}

int
oci_seccomp_prepare_reporting (const struct securer_policy *p, int notify_fd,
                               struct securer_seccomp_prog **out, securer_err_t *err)
{
  return prepare (p, SECURER_SECCOMP_REPORT_DENIALS, notify_fd, out, err);
}

void
oci_spec_free (struct oci_spec *s)
{
  if (s == NULL)
    return;
  json_decref (s->json);
  free (s->bundle);
  free (s->rootfs);
  free (s->hostname);
  oci_process_clear (&s->proc);
  strv_free (s->warnings);
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      free (s->mounts[i].dest);
      free (s->mounts[i].type);
      free (s->mounts[i].source);
      free (s->mounts[i].data);
    }
  free (s->mounts);
  for (int k = 0; k < OCI_NS_COUNT; k++)
    free (s->ns_path[k]);
  free (s->uid_maps);
  free (s->gid_maps);
  strv_free (s->masked);
  strv_free (s->readonly);
  for (size_t i = 0; i < s->n_devices; i++)
    free (s->devices[i].path);
  free (s->devices);
  strv_free (s->sysctl_keys);
  strv_free (s->sysctl_values);
  free (s->cgroups_path);
  free (s->devrules);
  free (s->cpuset_cpus);
  free (s->cpuset_mems);
  free (s->seccomp_text);
  for (int k = 0; k < OCI_HOOK_COUNT; k++)
    {
      for (size_t i = 0; i < s->n_hooks[k]; i++)
        {
          free (s->hooks[k][i].path);
          strv_free (s->hooks[k][i].args);
          strv_free (s->hooks[k][i].env);
        }
      free (s->hooks[k]);
    }
  free (s->securer_policy);
  free (s->report_denials);
  free (s->network_allow);
  free (s);
}
