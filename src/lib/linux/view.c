/* A path inside the sandbox, as the policy will make it; see view.h.
 *
 * Paths are compared as text after normalisation ("//", "." and ".."
 * folded): the launcher refuses mount destinations and masks that pass
 * through a symlink, so the only symlinks a path can meet before reaching
 * a mount are the policy's own `mount symlink` entries, which are
 * followed here as the kernel would. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/landlock-internal.h"
#include "linux/landlock-uapi.h"
#include "linux/linux.h"
#include "linux/view.h"

/* As the kernel's path walk allows. */
#define MAX_LINKS 40

/* Entries of the minimal /dev (mount.c, do_dev): the nodes Landlock lets
 * the sandbox write, and the rest, which it may only read. */
static const char *const dev_written[] = { "null", "zero", "full", "tty", "ptmx", "pts", "shm" };
static const char *const dev_read[] = { "random", "urandom", "fd", "stdin", "stdout", "stderr" };
/* The entries of dev_written that only a policy with ptys has. */
static const char *const dev_ptys[] = { "ptmx", "pts" };

/* True when `entry` (a path below a procfs root) lies in what a procfs
 * mounted with subset=pid shows: the pid directories, self, thread-self. */
static bool
proc_pid_entry (const char *entry)
{
  size_t n = strcspn (entry, "/");
  if ((n == 4 && strncmp (entry, "self", 4) == 0)
      || (n == 11 && strncmp (entry, "thread-self", 11) == 0))
    return true;
  if (n == 0)
    return false;
  for (size_t i = 0; i < n; i++)
    if (entry[i] < '0' || entry[i] > '9')
      return false;
  return true;
}

struct view_ctx {
  const struct securer_policy *p;
  char **dest;     /* per mount: normalised destination */
  bool *visible;   /* per mount: not hidden by a later mount at or above it */
  struct securer_landlock_plan plan;
  char **rule;     /* per plan path: resolved */
};

/* "/a//b/./c/../d" -> "/a/b/d"; malloc'd. */
static char *
norm (const char *path)
{
  size_t n = strlen (path);
  char *out = malloc (n + 2);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (const char *s = path; *s;)
    {
      while (*s == '/')
        s++;
      if (*s == '\0')
        break;
      const char *e = strchrnul (s, '/');
      size_t len = (size_t) (e - s);
      if (len == 2 && s[0] == '.' && s[1] == '.')
        {
          while (o > 0 && out[o - 1] != '/')
            o--;
          if (o > 0)
            o--;
        }
      else if (!(len == 1 && s[0] == '.'))
        {
          out[o++] = '/';
          memcpy (out + o, s, len);
          o += len;
        }
      s = e;
    }
  if (o == 0)
    out[o++] = '/';
  out[o] = '\0';
  return out;
}

/* path is dir or below it. */
static bool
under (const char *path, const char *dir)
{
  if (strcmp (dir, "/") == 0)
    return true;
  size_t len = strlen (dir);
  return strncmp (path, dir, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

/* Follows the visible `mount symlink` entries met along path; NULL with
 * errno ELOOP or ENOMEM. */
static char *
resolve (const struct view_ctx *c, const char *path)
{
  char *cur = norm (path);
  for (unsigned links = 0; cur != NULL;)
    {
      bool followed = false;
      for (size_t end = 1; !followed && end <= strlen (cur); end++)
        {
          if (cur[end] != '/' && cur[end] != '\0')
            continue;
          for (size_t i = 0; i < c->p->n_mounts && !followed; i++)
            {
              const struct securer_mount *m = &c->p->mounts[i];
              if (m->type != SECURER_MOUNT_SYMLINK || !c->visible[i] || m->source == NULL
                  || strlen (c->dest[i]) != end || strncmp (c->dest[i], cur, end) != 0)
                continue;
              if (++links > MAX_LINKS)
                {
                  free (cur);
                  errno = ELOOP;
                  return NULL;
                }
              /* A relative target is read from the link's directory. */
              size_t dir = end;
              while (dir > 0 && cur[dir - 1] != '/')
                dir--;
              char *next = NULL;
              if (asprintf (&next, "%.*s/%s%s", m->source[0] == '/' ? 0 : (int) dir, cur, m->source,
                            cur + end)
                  < 0)
                next = NULL;
              free (cur);
              cur = next ? norm (next) : NULL;
              free (next);
              followed = true;
            }
        }
      if (!followed)
        return cur;
    }
  errno = ENOMEM;
  return NULL;
}

static bool
in_list (const char *name, size_t len, const char *const *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (strlen (list[i]) == len && strncmp (list[i], name, len) == 0)
      return true;
  return false;
}

/* What the mounts alone make of the resolved path r. */
static enum securer_view_kind
mount_kind (const struct view_ctx *c, const char *r, const struct securer_mount **mount, const char **why)
{
  const struct securer_policy *p = c->p;
  ssize_t cover = -1;
  bool leads = false;  /* a directory on the way to a mount point */
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      if (!c->visible[i])
        continue;
      if (under (c->dest[i], r) && strcmp (c->dest[i], r) != 0)
        leads = true;
      if (p->mounts[i].type != SECURER_MOUNT_SYMLINK && under (r, c->dest[i])
          && (cover < 0 || strlen (c->dest[i]) > strlen (c->dest[cover])))
        cover = (ssize_t) i;
    }
  *mount = cover >= 0 ? &p->mounts[cover] : NULL;
  if (cover < 0 || p->mounts[cover].type == SECURER_MOUNT_DIR)
    {
      bool self = cover >= 0 && strcmp (r, c->dest[cover]) == 0;
      if (self || leads || strcmp (r, "/") == 0)
        {
          *why = cover >= 0 ? "an empty directory of `mount dir`"
                            : "a directory of the root, which is read-only";
          return SECURER_VIEW_READ_ONLY;
        }
      *why = cover >= 0 ? "`mount dir` makes an empty directory" : "no mount puts it there";
      return SECURER_VIEW_ABSENT;
    }
  const struct securer_mount *m = &p->mounts[cover];
  switch (m->type)
    {
    case SECURER_MOUNT_RO:
      *why = "a read-only bind";
      return SECURER_VIEW_READ_ONLY;
    case SECURER_MOUNT_RW:
      *why = "a writable bind";
      return SECURER_VIEW_WRITABLE;
    case SECURER_MOUNT_TMPFS:
      *why = "a private tmpfs";
      return SECURER_VIEW_WRITABLE;
    case SECURER_MOUNT_PROC:
      {
        const char *rest = r + strlen (c->dest[cover]);
        while (*rest == '/')
          rest++;
        if (m->pid_only && *rest != '\0' && !proc_pid_entry (rest))
          {
            *why = "proc subset=pid, which has the processes' directories only";
            return SECURER_VIEW_ABSENT;
          }
        if (*rest != '\0' && !m->unmasked && securer_linux_proc_masked (rest))
          {
            *why = securer_linux_proc_root_only (rest)
                     ? "an entry every proc mount hides: masked, or left as it is (EACCES) where only "
                       "host root may open it (docs/security.md)"
                     : "an entry every proc mount hides (docs/security.md)";
            return SECURER_VIEW_MASKED;
          }
        /* mount.c gives meminfo the sandbox's cgroup memory, and leaves
         * it empty when the policy sets none. */
        if (strcmp (rest, "meminfo") == 0 && p->limits.cgroup_memory == 0 && !m->unmasked)
          {
            *why = "meminfo, empty without a `cgroup memory` limit";
            return SECURER_VIEW_MASKED;
          }
        *why = "proc, which Landlock lets the sandbox only read";
        return SECURER_VIEW_READ_ONLY;
      }
    case SECURER_MOUNT_DEV:
      {
        const char *rest = r + strlen (c->dest[cover]);
        while (*rest == '/')
          rest++;
        size_t len = strcspn (rest, "/");
        if (len == 0)
          {
            *why = "the minimal /dev, itself read-only";
            return SECURER_VIEW_READ_ONLY;
          }
        /* `limit ptys 0`: mount.c makes neither (a devpts max=0 has no cap). */
        if (securer_policy_ptys (p) == 0 && in_list (rest, len, dev_ptys, sizeof dev_ptys / sizeof *dev_ptys))
          {
            *why = "`limit ptys 0`: the minimal /dev has no devpts and no ptmx";
            return SECURER_VIEW_ABSENT;
          }
        if (in_list (rest, len, dev_written, sizeof dev_written / sizeof *dev_written))
          {
            *why = "a device of the minimal /dev that may be written";
            return SECURER_VIEW_WRITABLE;
          }
        if (in_list (rest, len, dev_read, sizeof dev_read / sizeof *dev_read) || leads)
          {
            *why = "a read-only entry of the minimal /dev";
            return SECURER_VIEW_READ_ONLY;
          }
        *why = "not one of the entries of the minimal /dev";
        return SECURER_VIEW_ABSENT;
      }
    default:
      *why = "no mount puts it there";
      return SECURER_VIEW_ABSENT;
    }
}

/* The Landlock rights every rule at or above r grants (rights are
 * inherited down the tree). */
static uint64_t
landlock_rights (const struct view_ctx *c, const char *r)
{
  uint64_t access = 0;
  for (size_t i = 0; i < c->plan.n_paths; i++)
    if (c->rule[i] != NULL && under (r, c->rule[i]))
      access |= c->plan.paths[i].access;
  return access;
}

static void
ctx_clear (struct view_ctx *c)
{
  for (size_t i = 0; c->dest != NULL && i < c->p->n_mounts; i++)
    free (c->dest[i]);
  for (size_t i = 0; c->rule != NULL && i < c->plan.n_paths; i++)
    free (c->rule[i]);
  free (c->dest);
  free (c->visible);
  free (c->rule);
  securer_landlock_plan_clear (&c->plan);
}

static int
ctx_init (struct view_ctx *c, const struct securer_policy *p, securer_err_t *err)
{
  memset (c, 0, sizeof *c);
  c->p = p;
  c->dest = calloc (p->n_mounts + 1, sizeof *c->dest);
  c->visible = calloc (p->n_mounts + 1, sizeof *c->visible);
  if (c->dest == NULL || c->visible == NULL)
    return securer_error_set (err, ENOMEM, "view of the policy");
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      if (p->mounts[i].dest == NULL || (c->dest[i] = norm (p->mounts[i].dest)) == NULL)
        return securer_error_set (err, ENOMEM, "view of the policy");
      /* Attached later at or above an earlier destination, a mount hides it. */
      for (size_t j = 0; j < i; j++)
        if (c->visible[j] && under (c->dest[j], c->dest[i]))
          c->visible[j] = false;
      c->visible[i] = true;
    }
  if (p->landlock.mode == SECURER_ENFORCE_OFF)
    return 0;
  if (securer_landlock_plan_build (p, &c->plan, err) < 0)
    return -1;
  c->rule = calloc (c->plan.n_paths + 1, sizeof *c->rule);
  if (c->rule == NULL)
    return securer_error_set (err, ENOMEM, "view of the policy");
  /* The payload opens each rule's path, following symlinks. */
  for (size_t i = 0; i < c->plan.n_paths; i++)
    c->rule[i] = resolve (c, c->plan.paths[i].path);
  return 0;
}

int
securer_view_path (const struct securer_policy *p, const char *path, struct securer_view *out,
                   securer_err_t *err)
{
  memset (out, 0, sizeof *out);
  if (path == NULL || path[0] != '/')
    return securer_error_set (err, EINVAL, "'%s' is not an absolute path", path ? path : "");
  struct view_ctx c;
  if (ctx_init (&c, p, err) < 0)
    {
      ctx_clear (&c);
      return -1;
    }
  out->resolved = resolve (&c, path);
  if (out->resolved == NULL)
    {
      int e = errno;
      ctx_clear (&c);
      if (e == ELOOP)
        {
          out->why = out->why_exec = "too many symlinks of the policy on the way";
          return 0;
        }
      return securer_error_set (err, ENOMEM, "view of %s", path);
    }
  const char *r = out->resolved;
  out->kind = mount_kind (&c, r, &out->mount, &out->why);

  /* A mask hides what is there, if anything is: masks are bound after
   * every mount, never through a symlink. */
  for (size_t i = 0; out->kind != SECURER_VIEW_ABSENT && i < p->n_masks; i++)
    {
      char *mask = norm (p->masks[i]);
      const struct securer_mount *mm;
      const char *mwhy;
      if (mask != NULL && under (r, mask) && mount_kind (&c, mask, &mm, &mwhy) != SECURER_VIEW_ABSENT)
        {
          out->kind = SECURER_VIEW_MASKED;
          out->why = "hidden by a `mask`";
        }
      free (mask);
    }

  bool landlock = p->landlock.mode != SECURER_ENFORCE_OFF;
  uint64_t rights = landlock ? landlock_rights (&c, r) : 0;
  if (out->kind == SECURER_VIEW_WRITABLE && landlock && !(rights & SECURER_LL_ACCESS_FS_WRITE_FILE))
    {
      out->kind = SECURER_VIEW_READ_ONLY;
      out->why = "Landlock lets the sandbox only read it";
    }

  const struct securer_mount *m = out->mount;
  bool mount_exec = m != NULL && !m->noexec
                    && (m->type == SECURER_MOUNT_RO || m->type == SECURER_MOUNT_RW
                        || m->type == SECURER_MOUNT_TMPFS);
  if (out->kind == SECURER_VIEW_ABSENT || out->kind == SECURER_VIEW_MASKED)
    out->why_exec = out->why;
  else if (!mount_exec)
    out->why_exec = m == NULL ? "the root is mounted noexec" : "its mount is noexec";
  else if (landlock && !(rights & SECURER_LL_ACCESS_FS_EXECUTE))
    out->why_exec = p->exec_restricted ? "not in the `exec` list (Landlock)"
                                       : "Landlock does not let it be executed";
  else
    {
      out->exec = true;
      out->why_exec = p->exec_restricted && landlock ? "in the `exec` list" : "its mount may be executed from";
    }
  ctx_clear (&c);
  return 0;
}

void
securer_view_clear (struct securer_view *v)
{
  free (v->resolved);
  memset (v, 0, sizeof *v);
}

const char *
securer_view_kind_name (enum securer_view_kind k)
{
  switch (k)
    {
    case SECURER_VIEW_MASKED: return "masked";
    case SECURER_VIEW_READ_ONLY: return "read-only";
    case SECURER_VIEW_WRITABLE: return "writable";
    default: return "absent";
    }
}
