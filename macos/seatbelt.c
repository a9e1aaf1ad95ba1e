/* The macOS port, plan layer: policy IR → Seatbelt profile (SBPL) plus the
 * report of what macOS cannot enforce.  Portable C, so it is unit-tested on
 * Linux; the launcher is launch-macos.c.
 *
 * macOS has no mount namespace: the payload sees the host's tree, and the
 * profile decides which of it may be read, written or executed.  A bind
 * mount is therefore granted at its *source* path; a tmpfs becomes a
 * directory below the per-sandbox private directory, passed to the profile
 * as the parameter SECURER_PRIVATE_DIR so the text never embeds it.
 * Seatbelt rules are last-match-wins, so allows come first and the policy's
 * masks are denials at the end. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "securer/ports.h"
#include "ports/ports-internal.h"

#define host_path securer_host_path

/* What any dynamically linked macOS program reads before main(): dyld and
 * its shared cache, libSystem and the system frameworks, time zone data.
 * A policy written for Linux names /usr or /lib instead; these are the
 * macOS equivalent and hold no user data. */
static const char *const platform_read_subpaths[] = {
  "/usr/lib",
  "/System/Library/Frameworks",
  "/System/Library/PrivateFrameworks",
  "/System/Volumes/Preboot/Cryptexes/OS",
  "/System/Cryptexes/OS",
  "/private/var/db/dyld",
  "/private/var/db/timezone",
  "/usr/share/zoneinfo",
};
static const char *const platform_read_literals[] = {
  "/private/etc/localtime",
};

/* sysctls libSystem and R read (CPU count, page size, OS release for
 * Sys.info(), stack base).  Not kern.proc.*: that enumerates every process
 * on the host. */
static const char *const sysctl_names[] = {
  "hw.activecpu", "hw.availcpu", "hw.ncpu", "hw.logicalcpu", "hw.logicalcpu_max",
  "hw.physicalcpu", "hw.physicalcpu_max", "hw.memsize", "hw.pagesize", "hw.pagesize_compat",
  "hw.cachelinesize", "hw.l1dcachesize", "hw.l2cachesize", "hw.l3cachesize", "hw.cputype",
  "hw.cpusubtype", "hw.byteorder", "hw.machine", "hw.model", "kern.argmax", "kern.hostname",
  "kern.maxfilesperproc", "kern.osproductversion", "kern.osrelease", "kern.ostype",
  "kern.osversion", "kern.usrstack64", "kern.version", "sysctl.proc_cputype",
  "sysctl.proc_translated",
};
static const char *const sysctl_prefixes[] = { "hw.optional.", "machdep.cpu." };

/* Mach services: logging, notifyd (time zone changes), user/group lookups
 * for getpwuid(), and preferences for CoreFoundation.  Nothing that talks
 * to the window server, the keychain or the network stack. */
static const char *const mach_services[] = {
  "com.apple.system.logger",
  "com.apple.logd",
  "com.apple.diagnosticd",
  "com.apple.system.notification_center",
  "com.apple.system.opendirectoryd.libinfo",
  "com.apple.system.opendirectoryd.membership",
  "com.apple.cfprefsd.daemon",
  "com.apple.cfprefsd.agent",
};

static const char *const dev_rw[] = { "/dev/null", "/dev/zero", "/dev/tty" };
static const char *const dev_ro[] = { "/dev/random", "/dev/urandom" };

#define N_ELEMS(a) (sizeof (a) / sizeof (a)[0])

/* ---- strings ------------------------------------------------------------ */

/* A path the profile can carry: absolute and free of control bytes
 * (SBPL strings could escape them, but no legitimate path has them, and a
 * newline in a rule is how a confused generator gets injected). */
static int
check_path (const char *what, const char *path, securer_err_t *err)
{
  if (path == NULL || path[0] != '/')
    return securer_error_set (err, EINVAL, "%s '%s': Seatbelt rules need an absolute path", what,
                              path ? path : "(null)");
  for (const unsigned char *c = (const unsigned char *) path; *c; c++)
    if (*c < 0x20 || *c == 0x7f)
      return securer_error_set (err, EINVAL,
                                "%s: path contains control character 0x%02x, refused in a "
                                "Seatbelt profile",
                                what, *c);
  return 0;
}

/* SBPL string literal: only '"' and '\\' are special inside "..." (the
 * TinyScheme reader), so escaping those two keeps any path one token. */
static void
add_string (struct securer_strbuf *sb, const char *s)
{
  securer_strbuf_add (sb, "\"");
  char one[2] = { 0, 0 };
  for (const char *c = s; *c; c++)
    {
      if (*c == '"' || *c == '\\')
        securer_strbuf_add (sb, "\\");
      one[0] = *c;
      securer_strbuf_add (sb, one);
    }
  securer_strbuf_add (sb, "\"");
}

/* Drops trailing slashes and doubled slashes: Seatbelt compares the
 * resolved path textually, so "/usr/" would match nothing. */
char *
securer_port_normalize (const char *path)
{
  size_t n = strlen (path);
  char *out = malloc (n + 1);
  if (out == NULL)
    return NULL;
  size_t j = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (path[i] == '/' && j > 0 && out[j - 1] == '/')
        continue;
      out[j++] = path[i];
    }
  while (j > 1 && out[j - 1] == '/')
    j--;
  out[j] = '\0';
  return out;
}

/* True when `path` is `dir` or lies below it. */
bool
securer_port_path_under (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  if (n == 1 && dir[0] == '/')
    return true;
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* macOS keeps /tmp, /var and /etc under /private behind symlinks, and
 * Seatbelt matches the resolved path, so a rule for "/tmp/x" alone would
 * never match.  Returns the /private alias or NULL. */
static const char *const private_aliases[] = { "/tmp", "/var", "/etc" };

static char *
private_alias (const char *path)
{
  for (size_t i = 0; i < N_ELEMS (private_aliases); i++)
    if (securer_port_path_under (path, private_aliases[i]))
      return securer_port_printf ("/private%s", path);
  return NULL;
}

/* Emits one filter for a host path: (FILTER "path") and its /private alias,
 * or (FILTER (string-append (param ...) "/suffix")). */
static void
add_filter (struct securer_strbuf *sb, const char *filter, const struct host_path *hp)
{
  if (hp->in_private)
    {
      securer_strbuf_printf (sb, " (%s (string-append (param ", filter);
      add_string (sb, SECURER_SEATBELT_PARAM_PRIVATE);
      securer_strbuf_add (sb, ") ");
      add_string (sb, hp->path);
      securer_strbuf_add (sb, "))");
      return;
    }
  securer_strbuf_printf (sb, " (%s ", filter);
  add_string (sb, hp->path);
  securer_strbuf_add (sb, ")");
  char *alias = private_alias (hp->path);
  if (alias != NULL)
    {
      securer_strbuf_printf (sb, " (%s ", filter);
      add_string (sb, alias);
      securer_strbuf_add (sb, ")");
      free (alias);
    }
}

/* ---- mapping sandbox paths to host paths -------------------------------- */

/* Finds the mount that provides `inside` (the last one wins, as on Linux
 * where later mounts cover earlier ones). */
static const struct securer_mount *
provider (const struct securer_policy *p, const char *inside)
{
  const struct securer_mount *best = NULL;
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct securer_mount *m = &p->mounts[i];
      if (m->type != SECURER_MOUNT_RO && m->type != SECURER_MOUNT_RW
          && m->type != SECURER_MOUNT_TMPFS)
        continue;
      if (m->dest == NULL || !securer_port_path_under (inside, m->dest))
        continue;
      if (best == NULL || strlen (m->dest) >= strlen (best->dest))
        best = m;
    }
  return best;
}

/* Follows the policy's symlink mounts (/bin -> usr/bin, /usr/bin/sh ->
 * dash), as the kernel would inside the sandbox, so an exec entry such as
 * /bin/sh is granted where the file really comes from.  Bounded like
 * the kernel's own limit on nested links. */
static char *
resolve_symlinks (const struct securer_policy *p, const char *inside)
{
  char *path = securer_port_normalize (inside);
  for (int depth = 0; path != NULL && depth < 40; depth++)
    {
      const struct securer_mount *link = NULL;
      for (size_t i = 0; i < p->n_mounts; i++)
        {
          const struct securer_mount *m = &p->mounts[i];
          if (m->type == SECURER_MOUNT_SYMLINK && m->dest && m->source && m->source[0]
              && strcmp (m->dest, "/") != 0 && securer_port_path_under (path, m->dest)
              && (link == NULL || strlen (m->dest) >= strlen (link->dest)))
            link = m;
        }
      if (link == NULL)
        return path;
      const char *rest = path + strlen (link->dest);
      char *target;
      if (link->source[0] == '/')
        target = securer_port_printf ("%s%s", link->source, rest);
      else
        {
          const char *slash = strrchr (link->dest, '/');
          int dirlen = (int) (slash - link->dest);
          target = securer_port_printf ("%.*s/%s%s", dirlen, link->dest, link->source, rest);
        }
      free (path);
      path = target ? securer_port_normalize (target) : NULL;
      free (target);
    }
  return path;
}

int
securer_port_map_path (const struct securer_policy *p, const char *inside,
                       struct securer_host_path *out, securer_err_t *err)
{
  out->in_private = false;
  out->path = NULL;
  char *norm = resolve_symlinks (p, inside);
  if (norm == NULL)
    return securer_error_set (err, ENOMEM, "map %s", inside);
  const struct securer_mount *m = provider (p, norm);
  if (m == NULL)
    {
      free (norm);
      return 0;
    }
  char *dest = securer_port_normalize (m->dest);
  if (dest == NULL)
    {
      free (norm);
      return securer_error_set (err, ENOMEM, "map %s", inside);
    }
  const char *rest = norm + (strcmp (dest, "/") == 0 ? 0 : strlen (dest));
  if (strcmp (dest, "/") == 0 && strcmp (norm, "/") == 0)
    rest = "";
  if (m->type == SECURER_MOUNT_TMPFS)
    {
      out->in_private = true;
      out->path = securer_port_printf ("/tmpfs%s%s", strcmp (dest, "/") == 0 ? "" : dest, rest);
    }
  else
    {
      char *src = securer_port_normalize (m->source ? m->source : "");
      if (src != NULL)
        out->path = securer_port_printf ("%s%s", strcmp (src, "/") == 0 && *rest ? "" : src, rest);
      free (src);
    }
  free (dest);
  free (norm);
  if (out->path == NULL)
    return securer_error_set (err, ENOMEM, "map %s", inside);
  return 1;
}

char *
securer_seatbelt_host_path (const struct securer_policy *p, const char *inside,
                            const char *private_dir)
{
  struct host_path hp;
  securer_err_t err = NULL;
  if (inside == NULL || securer_port_map_path (p, inside, &hp, &err) <= 0)
    {
      securer_error_free (&err);
      return NULL;
    }
  if (!hp.in_private)
    return hp.path;
  char *s = securer_port_printf ("%s%s", private_dir ? private_dir : "<" SECURER_SEATBELT_PARAM_PRIVATE ">",
                                 hp.path);
  free (hp.path);
  return s;
}

/* ---- metadata of ancestors ---------------------------------------------- */

struct strset {
  char **v;
  size_t n;
};

static int
strset_add (struct strset *s, const char *str)
{
  for (size_t i = 0; i < s->n; i++)
    if (strcmp (s->v[i], str) == 0)
      return 0;
  char *dup = strdup (str);
  char **v = dup ? realloc (s->v, (s->n + 1) * sizeof *v) : NULL;
  if (v == NULL)
    {
      free (dup);
      return -1;
    }
  s->v = v;
  s->v[s->n++] = dup;
  return 0;
}

static void
strset_free (struct strset *s)
{
  for (size_t i = 0; i < s->n; i++)
    free (s->v[i]);
  free (s->v);
  s->v = NULL;
  s->n = 0;
}

/* stat() of "/", "/usr", ... lets getcwd(), realpath() and R's
 * normalizePath() walk up from a granted path without listing or reading
 * anything in those directories. */
static int
add_ancestors (struct strset *s, const char *path)
{
  char *copy = strdup (path);
  if (copy == NULL)
    return -1;
  int r = strset_add (s, "/");
  for (char *slash = strchr (copy + 1, '/'); r == 0 && slash != NULL; slash = strchr (slash + 1, '/'))
    {
      *slash = '\0';
      r = strset_add (s, copy);
      *slash = '/';
    }
  free (copy);
  return r;
}

/* ---- the profile ---------------------------------------------------------- */

struct gen {
  const struct securer_policy *p;
  struct securer_port_report *rep;
  struct securer_strbuf sb;
  struct strset ancestors;
};

static const char *
mount_type_name (enum securer_mount_type t)
{
  switch (t)
    {
    case SECURER_MOUNT_RO: return "ro";
    case SECURER_MOUNT_RW: return "rw";
    case SECURER_MOUNT_TMPFS: return "tmpfs";
    case SECURER_MOUNT_PROC: return "proc";
    case SECURER_MOUNT_DEV: return "dev";
    case SECURER_MOUNT_DIR: return "dir";
    case SECURER_MOUNT_SYMLINK: return "symlink";
    }
  return "?";
}

static int
emit_rule (struct gen *g, const char *action, const char *ops, const char *filter,
           const struct host_path *hp, const char *comment)
{
  if (comment != NULL)
    securer_strbuf_printf (&g->sb, ";; %s\n", comment);
  securer_strbuf_printf (&g->sb, "(%s %s", action, ops);
  add_filter (&g->sb, filter, hp);
  securer_strbuf_add (&g->sb, ")\n");
  if (!hp->in_private && strcmp (action, "allow") == 0 && add_ancestors (&g->ancestors, hp->path) < 0)
    g->sb.failed = true;
  return 0;
}

static int
gen_mounts (struct gen *g, securer_err_t *err)
{
  const struct securer_policy *p = g->p;
  bool any_dev = false;
  securer_strbuf_add (&g->sb, "\n;; filesystem: the policy's mounts, at their host paths\n");
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct securer_mount *m = &p->mounts[i];
      char rule[64];
      snprintf (rule, sizeof rule, "mount %s", mount_type_name (m->type));
      char *rule_full = securer_port_printf ("%s %s", rule, m->dest ? m->dest : "?");
      if (rule_full == NULL)
        return securer_error_set (err, ENOMEM, "seatbelt profile");
      int r = 0;
      switch (m->type)
        {
        case SECURER_MOUNT_RO:
        case SECURER_MOUNT_RW:
          {
            if (check_path ("mount source", m->source, err) < 0
                || check_path ("mount destination", m->dest, err) < 0)
              {
                free (rule_full);
                return -1;
              }
            struct host_path hp = { false, securer_port_normalize (m->source) };
            char *dest = securer_port_normalize (m->dest);
            if (hp.path == NULL || dest == NULL)
              {
                free (hp.path);
                free (dest);
                free (rule_full);
                return securer_error_set (err, ENOMEM, "seatbelt profile");
              }
            bool rw = m->type == SECURER_MOUNT_RW;
            char comment[64];
            snprintf (comment, sizeof comment, "%s bind%s", rw ? "rw" : "ro",
                      m->optional ? " (optional)" : "");
            /* A read-only bind of a directory the platform rules already
             * grant would repeat their rule word for word. */
            bool granted = false;
            for (size_t k = 0; !rw && k < N_ELEMS (platform_read_subpaths); k++)
              granted |= strcmp (hp.path, platform_read_subpaths[k]) == 0;
            if (!granted)
              emit_rule (g, "allow", rw ? "file-read* file-write*" : "file-read*", "subpath", &hp,
                         comment);
            if (strcmp (hp.path, dest) != 0)
              r = securer_port_gap (g->rep, SECURER_ENFORCE_BEST_EFFORT, "filesystem", rule_full,
                                    err,
                                    "macOS has no mount namespace: the payload finds this "
                                    "mount at its host path %s, not at %s",
                                    hp.path, dest);
            free (hp.path);
            free (dest);
            break;
          }
        case SECURER_MOUNT_TMPFS:
          {
            if (check_path ("tmpfs destination", m->dest, err) < 0)
              {
                free (rule_full);
                return -1;
              }
            char *dest = securer_port_normalize (m->dest);
            struct host_path hp = { true, dest ? securer_port_printf ("/tmpfs%s", strcmp (dest, "/") == 0 ? "" : dest) : NULL };
            free (dest);
            if (hp.path == NULL)
              {
                free (rule_full);
                return securer_error_set (err, ENOMEM, "seatbelt profile");
              }
            emit_rule (g, "allow", "file-read* file-write*", "subpath", &hp,
                       "tmpfs, as a directory below the private directory");
            r = securer_port_gap (g->rep, SECURER_ENFORCE_BEST_EFFORT, "filesystem", rule_full, err,
                                  "provided as $%s%s (environment paths are rewritten to it); "
                                  "%s itself is not writable%s",
                                  SECURER_SEATBELT_PARAM_PRIVATE, hp.path, m->dest,
                                  m->size ? "; its size limit is not enforced (rlimit fsize "
                                            "bounds each file)"
                                          : "");
            free (hp.path);
            break;
          }
        case SECURER_MOUNT_DEV:
          any_dev = true;
          break;
        case SECURER_MOUNT_PROC:
          /* No procfs on macOS: there is nothing to show or to hide. */
          break;
        case SECURER_MOUNT_DIR:
        case SECURER_MOUNT_SYMLINK:
          r = securer_port_gap (g->rep, SECURER_ENFORCE_BEST_EFFORT, "filesystem", rule_full, err,
                                "cannot be created in the host tree without a mount namespace; "
                                "the path keeps whatever the host has there (and stays unreadable "
                                "unless a mount grants it)");
          break;
        }
      free (rule_full);
      if (r < 0)
        return -1;
    }

  if (any_dev)
    {
      securer_strbuf_add (&g->sb, "\n;; devices: the minimal /dev of the policy\n(allow file-read* file-write-data");
      for (size_t i = 0; i < N_ELEMS (dev_rw); i++)
        {
          securer_strbuf_add (&g->sb, " (literal ");
          add_string (&g->sb, dev_rw[i]);
          securer_strbuf_add (&g->sb, ")");
        }
      securer_strbuf_add (&g->sb, ")\n(allow file-read*");
      for (size_t i = 0; i < N_ELEMS (dev_ro); i++)
        {
          securer_strbuf_add (&g->sb, " (literal ");
          add_string (&g->sb, dev_ro[i]);
          securer_strbuf_add (&g->sb, ")");
        }
      securer_strbuf_add (&g->sb, " (subpath \"/dev/fd\"))\n");
      if (securer_port_enforced (g->rep, err,
                                 "devices: null, zero, tty, random, urandom and /dev/fd only") < 0)
        return -1;
    }
  return securer_port_enforced (g->rep, err,
                                "filesystem: read/write only where a mount grants it "
                                "(deny-default Seatbelt file rules)");
}

/* Process execution.  With an exec list only its entries run; without one,
 * whatever a mount without noexec provides (the Linux rule too). */
static int
gen_exec (struct gen *g, securer_err_t *err)
{
  const struct securer_policy *p = g->p;
  securer_strbuf_add (&g->sb, "\n;; process execution\n");
  size_t n = 0;
  if (p->exec_restricted)
    {
      for (size_t i = 0; i < p->n_exec; i++)
        {
          if (check_path ("exec", p->exec[i], err) < 0)
            return -1;
          struct host_path hp;
          int r = securer_port_map_path (p, p->exec[i], &hp, err);
          if (r < 0)
            return -1;
          if (r == 0)
            continue; /* under no mount: nothing there to run */
          /* Reading it is the mount's grant (and a mask's denial): the
           * rule adds the right to execute only. */
          emit_rule (g, "allow", "process-exec", "subpath", &hp, NULL);
          free (hp.path);
          n++;
        }
      return securer_port_enforced (g->rep, err,
                                    "exec: only the policy's %zu exec entr%s under a mount", n,
                                    n == 1 ? "y" : "ies");
    }
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct securer_mount *m = &p->mounts[i];
      if ((m->type != SECURER_MOUNT_RO && m->type != SECURER_MOUNT_RW) || m->noexec)
        continue;
      struct host_path hp = { false, securer_port_normalize (m->source) };
      if (hp.path == NULL)
        return securer_error_set (err, ENOMEM, "seatbelt profile");
      emit_rule (g, "allow", "process-exec", "subpath", &hp, NULL);
      free (hp.path);
      n++;
    }
  return securer_port_enforced (g->rep, err,
                                "exec: only from the %zu mount%s without noexec", n,
                                n == 1 ? "" : "s");
}

static int
gen_masks (struct gen *g, securer_err_t *err)
{
  const struct securer_policy *p = g->p;
  if (p->n_masks == 0)
    return 0;
  size_t n = 0;
  for (size_t i = 0; i < p->n_masks; i++)
    {
      if (check_path ("mask", p->masks[i], err) < 0)
        return -1;
      struct host_path hp;
      int r = securer_port_map_path (p, p->masks[i], &hp, err);
      if (r < 0)
        return -1;
      if (r == 0)
        continue; /* outside every mount: already unreachable */
      if (n == 0)
        securer_strbuf_add (&g->sb, "\n;; masks: denied last, so they win over the grants above\n");
      emit_rule (g, "deny", "file-read* file-write* process-exec", "subpath", &hp, NULL);
      free (hp.path);
      n++;
    }
  return securer_port_enforced (g->rep, err,
                                "masks: %zu inside a mount denied; the other %zu are outside "
                                "every mount and unreachable anyway",
                                n, p->n_masks - n);
}

static void
add_port_list (struct securer_strbuf *sb, const char *op, const char *where, const uint16_t *ports,
               size_t n)
{
  securer_strbuf_printf (sb, "(deny %s (%s tcp \"*:*\"))\n", op, where);
  if (n == 0)
    return;
  securer_strbuf_printf (sb, "(allow %s", op);
  for (size_t i = 0; i < n; i++)
    securer_strbuf_printf (sb, " (%s tcp \"*:%u\")", where, (unsigned) ports[i]);
  securer_strbuf_add (sb, ")\n");
}

static int
gen_network (struct gen *g, securer_err_t *err)
{
  const struct securer_policy *p = g->p;
  securer_strbuf_add (&g->sb, "\n;; network\n");
  switch (p->network)
    {
    case SECURER_NET_NONE:
      securer_strbuf_add (&g->sb, "(deny network*)\n");
      return securer_port_enforced (g->rep, err,
                                    "network none: every socket operation denied, Unix sockets "
                                    "included");
    case SECURER_NET_LOOPBACK:
      securer_strbuf_add (&g->sb,
                          "(allow network-bind network-inbound (local ip \"localhost:*\"))\n"
                          "(allow network-outbound (remote ip \"localhost:*\"))\n");
      return securer_port_gap (g->rep, SECURER_ENFORCE_REQUIRED, "network", "network loopback", err,
                               "macOS has no private loopback: the payload would share the "
                               "host's and reach every service listening on localhost");
    case SECURER_NET_ALLOW:
      return securer_port_gap (g->rep, SECURER_ENFORCE_REQUIRED, "network", "network allow", err,
                               "the filtering proxy runs in the Linux supervisor only: this port "
                               "cannot limit the payload to the listed hosts");
    case SECURER_NET_HOST:
      securer_strbuf_add (&g->sb, "(allow network*)\n");
      /* Name resolution goes through mDNSResponder on macOS. */
      securer_strbuf_add (&g->sb, "(allow mach-lookup (global-name \"com.apple.dnssd.service\"))\n");
      if (p->landlock.mode != SECURER_ENFORCE_OFF
          && (p->landlock.n_tcp_bind > 0 || p->landlock.n_tcp_connect > 0))
        {
          /* Landlock's TCP port lists, as Seatbelt rules: TCP outside the
           * lists is denied, UDP untouched (as Landlock does). */
          add_port_list (&g->sb, "network-bind", "local", p->landlock.tcp_bind,
                         p->landlock.n_tcp_bind);
          add_port_list (&g->sb, "network-outbound", "remote", p->landlock.tcp_connect,
                         p->landlock.n_tcp_connect);
          if (securer_port_enforced (g->rep, err,
                                     "landlock tcp ports: %zu bind and %zu connect port(s) as "
                                     "Seatbelt network rules",
                                     p->landlock.n_tcp_bind, p->landlock.n_tcp_connect)
              < 0)
            return -1;
        }
      return securer_port_enforced (g->rep, err, "network host: shared with the caller");
    }
  return securer_error_set (err, EINVAL, "unknown network mode %d", (int) p->network);
}

/* The policy module's printers are the reference for these names; the
 * ports keep their own copy so the plan layer links without the parser
 * (the Windows cross-build has none). */
const char *
securer_port_rlimit_name (int id)
{
  static const char *const names[SECURER_RLIMIT_COUNT] = {
    "cpu", "as", "fsize", "nproc", "nofile", "stack", "core", "memlock", "sigpending",
  };
  return id >= 0 && id < SECURER_RLIMIT_COUNT ? names[id] : "?";
}

const char *
securer_port_action_name (enum securer_action_type t)
{
  switch (t)
    {
    case SECURER_ACT_ALLOW: return "allow";
    case SECURER_ACT_ERRNO: return "errno";
    case SECURER_ACT_KILL_PROCESS: return "kill-process";
    case SECURER_ACT_KILL_THREAD: return "kill-thread";
    case SECURER_ACT_TRAP: return "trap";
    case SECURER_ACT_LOG: return "log";
    case SECURER_ACT_NOTIFY: return "notify";
    }
  return "?";
}

/* Reports the IR rules macOS has no mechanism for. */
static int
gen_gaps (struct gen *g, securer_err_t *err)
{
  const struct securer_policy *p = g->p;
  struct securer_port_report *rep = g->rep;
  const enum securer_enforce BE = SECURER_ENFORCE_BEST_EFFORT;

  if (p->namespaces & SECURER_NS_USER)
    {
      char rule[64];
      snprintf (rule, sizeof rule, "uid %u gid %u", (unsigned) p->uid, (unsigned) p->gid);
      if (securer_port_gap (rep, BE, "identity", rule, err,
                            "no user namespace: the payload keeps the caller's uid "
                            "(nobody when the caller is root)")
          < 0)
        return -1;
    }
  if ((p->namespaces & SECURER_NS_PID)
      && securer_port_gap (rep, BE, "namespaces", "namespace pid", err,
                           "no pid namespace: signals and process inspection are limited to "
                           "the sandbox (target same-sandbox), but pids are the host's and "
                           "there is no init; descendants are killed by process group (one that "
                           "calls setsid() leaves it)")
           < 0)
    return -1;
  if (p->namespaces & SECURER_NS_UTS)
    {
      char *rule = securer_port_printf ("namespace uts%s%s", p->hostname ? ", hostname " : "",
                                        p->hostname ? p->hostname : "");
      int r = rule ? securer_port_gap (rep, BE, "namespaces", rule, err,
                                       "no uts namespace: the host's name stays visible "
                                       "(uname) and cannot be replaced")
                   : securer_error_set (err, ENOMEM, "seatbelt report");
      free (rule);
      if (r < 0)
        return -1;
    }
  if (p->namespaces & SECURER_NS_IPC)
    {
      if (securer_port_enforced (rep, err,
                                 "namespace ipc: System V IPC and POSIX shared memory/semaphores "
                                 "denied (notifyd's read-only page excepted)")
          < 0)
        return -1;
    }

  /* Limits.  Each rlimit is set with setrlimit() in the forked child. */
  const struct securer_limits *l = &p->limits;
  if (l->rlimit[SECURER_RLIMIT_AS].set
      && securer_port_gap (rep, BE, "limits", "rlimit as", err,
                           "set, but XNU does not bound mmap() by RLIMIT_AS (it is RLIMIT_RSS "
                           "there): memory is not limited on macOS")
           < 0)
    return -1;
  if (l->rlimit[SECURER_RLIMIT_NPROC].set
      && securer_port_gap (rep, BE, "limits", "rlimit nproc", err,
                           "set, but counts every process of the user, not of the sandbox")
           < 0)
    return -1;
  if (l->rlimit[SECURER_RLIMIT_SIGPENDING].set
      && securer_port_gap (rep, BE, "limits", "rlimit sigpending", err,
                           "set, but XNU has no limit on queued signals")
           < 0)
    return -1;
  for (int i = 0; i < SECURER_RLIMIT_COUNT; i++)
    if (l->rlimit[i].set && i != SECURER_RLIMIT_AS && i != SECURER_RLIMIT_NPROC
        && i != SECURER_RLIMIT_SIGPENDING)
      if (securer_port_enforced (rep, err, "rlimit %s: setrlimit in the child before exec",
                                 securer_port_rlimit_name (i))
          < 0)
        return -1;
  if (l->timeout_ms
      && securer_port_enforced (rep, err, "timeout %llu ms: the launcher kills the process group",
                                (unsigned long long) l->timeout_ms)
           < 0)
    return -1;
  if (l->cgroup_memory || l->cgroup_pids || l->cgroup_cpu_millis)
    {
      enum securer_enforce lvl = l->cgroup == SECURER_ENFORCE_REQUIRED ? SECURER_ENFORCE_REQUIRED : BE;
      const char *names[3] = { l->cgroup_memory ? "cgroup memory" : NULL,
                               l->cgroup_pids ? "cgroup pids" : NULL,
                               l->cgroup_cpu_millis ? "cgroup cpu" : NULL };
      for (int i = 0; i < 3; i++)
        if (names[i] && securer_port_gap (rep, lvl, "limits", names[i], err,
                                          "macOS has no cgroups: nothing bounds the sandbox as "
                                          "a whole")
                          < 0)
          return -1;
    }

  if (p->seccomp.enabled)
    {
      char rule[64];
      snprintf (rule, sizeof rule, "seccomp (%zu rules, default %s)", p->seccomp.n_rules,
                securer_port_action_name (p->seccomp.default_action.type));
      if (securer_port_gap (rep, BE, "seccomp", rule, err,
                            "macOS has no syscall filter: Seatbelt's deny-default covers file, "
                            "network, process, IPC, Mach and sysctl operations, not individual "
                            "system calls")
          < 0)
        return -1;
    }
  if (securer_port_gap (rep, BE, "privileges", "no_new_privs", err,
                        "macOS has no no_new_privs: a setuid program the profile lets run "
                        "still changes identity (under the same profile)")
      < 0)
    return -1;
  if (p->landlock.mode != SECURER_ENFORCE_OFF
      && securer_port_enforced (rep, err,
                                "landlock: file rules given by Seatbelt%s%s",
                                p->landlock.scope_signal ? "; signal scope as (target same-sandbox)" : "",
                                p->landlock.scope_abstract_unix
                                  ? "; no abstract Unix sockets exist on macOS"
                                  : "")
           < 0)
    return -1;
  if (p->landlock.mode != SECURER_ENFORCE_OFF && p->network != SECURER_NET_HOST
      && (p->landlock.n_tcp_bind > 0 || p->landlock.n_tcp_connect > 0)
      && securer_port_enforced (rep, err, "landlock tcp ports: moot, the network is denied") < 0)
    return -1;
  return 0;
}

static void
add_list (struct securer_strbuf *sb, const char *filter, const char *const *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      securer_strbuf_printf (sb, "\n  (%s ", filter);
      add_string (sb, v[i]);
      securer_strbuf_add (sb, ")");
    }
}

char *
securer_seatbelt_profile (const struct securer_policy *p, struct securer_port_report *rep,
                          securer_err_t *err)
{
  if (p == NULL || rep == NULL)
    {
      securer_error_set (err, EINVAL, "seatbelt profile: no policy");
      return NULL;
    }
  rep->port = "seatbelt";
  struct gen g = { .p = p, .rep = rep };

  /* The name lands in a comment, which ends at a newline: a control
   * character in it could start a rule of its own. */
  if (p->name != NULL)
    for (const unsigned char *c = (const unsigned char *) p->name; *c; c++)
      if (*c < 0x20 || *c == 0x7f)
        {
          securer_error_set (err, EINVAL, "policy name contains control character 0x%02x", *c);
          goto fail;
        }
  securer_strbuf_add (&g.sb, "(version 1)\n(deny default)\n;; securer policy ");
  add_string (&g.sb, p->name ? p->name : "(unnamed)");
  securer_strbuf_printf (&g.sb, "; parameter %s = the sandbox's private directory\n",
                         SECURER_SEATBELT_PARAM_PRIVATE);

  securer_strbuf_add (&g.sb,
                      "\n;; processes: fork freely (rlimits bound it); signal and inspect only\n"
                      ";; this sandbox\n"
                      "(allow process-fork)\n"
                      "(allow signal (target same-sandbox))\n"
                      "(allow process-info* (target same-sandbox))\n");
  securer_strbuf_add (&g.sb, "\n;; system information libSystem and R ask for\n(allow sysctl-read");
  add_list (&g.sb, "sysctl-name", sysctl_names, N_ELEMS (sysctl_names));
  add_list (&g.sb, "sysctl-name-prefix", sysctl_prefixes, N_ELEMS (sysctl_prefixes));
  securer_strbuf_add (&g.sb, ")\n(allow mach-lookup");
  add_list (&g.sb, "global-name", mach_services, N_ELEMS (mach_services));
  securer_strbuf_add (&g.sb,
                      ")\n(allow ipc-posix-shm-read-data ipc-posix-shm-read-metadata\n"
                      "  (ipc-posix-name \"apple.shm.notification_center\"))\n");
  if (!(p->namespaces & SECURER_NS_IPC))
    securer_strbuf_add (&g.sb, ";; no ipc namespace in the policy: host IPC is shared, as on Linux\n"
                               "(allow ipc-posix* ipc-sysv*)\n");

  securer_strbuf_add (&g.sb, "\n;; platform runtime: dyld, libSystem, frameworks, time zones\n(allow file-read*");
  add_list (&g.sb, "subpath", platform_read_subpaths, N_ELEMS (platform_read_subpaths));
  add_list (&g.sb, "literal", platform_read_literals, N_ELEMS (platform_read_literals));
  securer_strbuf_add (&g.sb, ")\n");
  if (securer_port_gap (rep, SECURER_ENFORCE_BEST_EFFORT, "filesystem", "reads outside mounts", err,
                        "the macOS runtime is readable whatever the mounts say: /usr/lib, the "
                        "system frameworks, the dyld cache, time zone data (libraries and data, "
                        "no user files)")
      < 0)
    goto fail;

  if (gen_mounts (&g, err) < 0 || gen_exec (&g, err) < 0)
    goto fail;

  if (g.ancestors.n > 0)
    {
      securer_strbuf_add (&g.sb, "\n;; stat() of the directories above each grant\n(allow file-read-metadata");
      add_list (&g.sb, "literal", (const char *const *) g.ancestors.v, g.ancestors.n);
      securer_strbuf_add (&g.sb, ")\n");
    }

  if (gen_masks (&g, err) < 0 || gen_network (&g, err) < 0 || gen_gaps (&g, err) < 0)
    goto fail;

  strset_free (&g.ancestors);
  char *text = securer_strbuf_take (&g.sb);
  if (text == NULL)
    securer_error_set (err, ENOMEM, "seatbelt profile");
  return text;

fail:
  strset_free (&g.ancestors);
  securer_strbuf_clear (&g.sb);
  return NULL;
}
