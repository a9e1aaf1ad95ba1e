/* Syscall groups: seccomp/<name>.syscalls in the data search path.
 *
 * A group file holds one entry per line: a syscall name, "@other" to
 * include another group, or "?name" for a syscall that newer kernels have
 * but this libseccomp may not know (kept when libseccomp resolves it,
 * dropped otherwise, so the filter's default action applies to it — the
 * same thing a program sees on a kernel that lacks the syscall).  A plain
 * name libseccomp does not know is an error: it is a typo until proven
 * otherwise.  '#' starts a comment.
 *
 * "known" is built in rather than a file: every syscall this libseccomp can
 * name, so `@known` cannot go stale. */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "securer/paths.h"
#include "seccomp/seccomp.h"

#define MAX_DEPTH 32
#define KNOWN_GROUP "known"

void
securer_strv_free (char **v)
{
  if (v == NULL)
    return;
  for (char **p = v; *p != NULL; p++)
    free (*p);
  free (v);
}

struct strv {
  char **v;
  size_t n, cap;
};

static int
strv_push (struct strv *s, const char *str)
{
  if (s->n + 2 > s->cap)
    {
      size_t cap = s->cap ? s->cap * 2 : 64;
      char **nv = realloc (s->v, cap * sizeof *nv);
      if (nv == NULL)
        return -1;
      s->v = nv;
      s->cap = cap;
    }
  char *d = strdup (str);
  if (d == NULL)
    return -1;
  s->v[s->n++] = d;
  s->v[s->n] = NULL;
  return 0;
}

static void
strv_clear (struct strv *s)
{
  for (size_t i = 0; i < s->n; i++)
    free (s->v[i]);
  free (s->v);
  s->v = NULL;
  s->n = s->cap = 0;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
sort_unique (struct strv *s)
{
  if (s->n == 0)
    return;
  qsort (s->v, s->n, sizeof *s->v, cmp_str);
  size_t w = 0;
  for (size_t r = 0; r < s->n; r++)
    {
      if (w > 0 && strcmp (s->v[w - 1], s->v[r]) == 0)
        free (s->v[r]);
      else
        s->v[w++] = s->v[r];
    }
  s->n = w;
  s->v[w] = NULL;
}

/* Group names become file names: keep them to a safe alphabet so that
 * "@../../etc/x" cannot read outside the data directory. */
static bool
valid_group_name (const char *name)
{
  if (name == NULL || name[0] == '\0' || strlen (name) > 64)
    return false;
  for (const char *c = name; *c; c++)
    if (!(islower ((unsigned char) *c) || isdigit ((unsigned char) *c) || *c == '-' || *c == '_'))
      return false;
  return true;
}

static int
load_known (struct strv *out, securer_err_t *err)
{
  char **all = securer_syscall_names ();
  if (all == NULL)
    return securer_error_set (err, ENOMEM, "group @known");
  for (char **p = all; *p != NULL; p++)
    if (strv_push (out, *p) < 0)
      {
        securer_strv_free (all);
        return securer_error_set (err, ENOMEM, "group @known");
      }
  securer_strv_free (all);
  return 0;
}

/* stack[0..depth) are the groups being expanded, outermost first. */
static int
load_into (const char *name, const char **stack, unsigned depth, struct strv *out,
           securer_err_t *err)
{
  if (!valid_group_name (name))
    return securer_error_set (err, EINVAL, "invalid group name '@%s' (expected lower-case letters, digits, '-')", name);

  for (unsigned i = 0; i < depth; i++)
    if (strcmp (stack[i], name) == 0)
      {
        char chain[1024] = "";
        size_t used = 0;
        for (unsigned j = i; j < depth && used < sizeof chain; j++)
          used += snprintf (chain + used, sizeof chain - used, "@%s -> ", stack[j]);
        return securer_error_set (err, ELOOP, "group cycle: %s@%s", chain, name);
      }
  if (depth >= MAX_DEPTH)
    return securer_error_set (err, ELOOP, "group @%s: nested more than %d deep", name, MAX_DEPTH);

  if (strcmp (name, KNOWN_GROUP) == 0)
    return load_known (out, err);

  char rel[128];
  snprintf (rel, sizeof rel, "seccomp/%s.syscalls", name);
  char *path = securer_data_find (rel, err);
  if (path == NULL)
    return securer_error_prefix (err, "unknown group '@%s'", name);

  FILE *f = fopen (path, "re");
  if (f == NULL)
    {
      securer_error_set (err, errno, "open %s", path);
      free (path);
      return -1;
    }

  stack[depth] = name;
  char *line = NULL;
  size_t cap = 0;
  unsigned lineno = 0;
  int rc = 0;
  while (getline (&line, &cap, f) >= 0)
    {
      lineno++;
      char *hash = strchr (line, '#');
      if (hash != NULL)
        *hash = '\0';
      char *s = line;
      while (isspace ((unsigned char) *s))
        s++;
      char *e = s + strlen (s);
      while (e > s && isspace ((unsigned char) e[-1]))
        *--e = '\0';
      if (*s == '\0')
        continue;
      for (char *c = s; *c; c++)
        if (isspace ((unsigned char) *c))
          {
            rc = securer_error_set (err, EINVAL, "%s:%u: one entry per line expected, got '%s'", path, lineno, s);
            goto out;
          }

      if (s[0] == '@')
        {
          if (load_into (s + 1, stack, depth + 1, out, err) < 0)
            {
              rc = securer_error_prefix (err, "%s:%u", path, lineno);
              goto out;
            }
        }
      else if (s[0] == '?')
        {
          if (securer_syscall_known (s + 1) && strv_push (out, s + 1) < 0)
            {
              rc = securer_error_set (err, ENOMEM, "%s:%u", path, lineno);
              goto out;
            }
        }
      else if (!securer_syscall_known (s))
        {
          rc = securer_error_set (err, EINVAL, "%s:%u: unknown syscall '%s' (not known to libseccomp %u.%u.%u; prefix it with '?' if it is newer than this libseccomp)",
                                  path, lineno, s, seccomp_version ()->major,
                                  seccomp_version ()->minor, seccomp_version ()->micro);
          goto out;
        }
      else if (strv_push (out, s) < 0)
        {
          rc = securer_error_set (err, ENOMEM, "%s:%u", path, lineno);
          goto out;
        }
    }
  if (ferror (f))
    rc = securer_error_set (err, EIO, "read %s", path);
out:
  free (line);
  fclose (f);
  free (path);
  return rc;
}

int
securer_group_load (const char *name, char ***members, size_t *n_members, securer_err_t *err)
{
  if (name != NULL && name[0] == '@')
    name++;
  const char *stack[MAX_DEPTH + 1];
  struct strv out = { 0 };
  if (load_into (name, stack, 0, &out, err) < 0)
    {
      strv_clear (&out);
      return -1;
    }
  /* An empty group is valid: hand back an empty, NULL-terminated array. */
  if (out.v == NULL && (out.v = calloc (1, sizeof *out.v)) == NULL)
    return securer_error_set (err, ENOMEM, "group @%s", name);
  sort_unique (&out);
  *members = out.v;
  *n_members = out.n;
  return 0;
}

char **
securer_group_names (void)
{
  struct strv out = { 0 };
  if (strv_push (&out, KNOWN_GROUP) < 0)
    return NULL;
  for (const char *const *d = securer_data_dirs (); *d != NULL; d++)
    {
      char *dir = NULL;
      if (asprintf (&dir, "%s/seccomp", *d) < 0)
        goto fail;
      DIR *dh = opendir (dir);
      free (dir);
      if (dh == NULL)
        continue;
      struct dirent *de;
      while ((de = readdir (dh)) != NULL)
        {
          size_t len = strlen (de->d_name);
          const char *suffix = ".syscalls";
          size_t sl = strlen (suffix);
          if (len <= sl || strcmp (de->d_name + len - sl, suffix) != 0)
            continue;
          char name[256];
          snprintf (name, sizeof name, "%.*s", (int) (len - sl), de->d_name);
          if (!valid_group_name (name))
            continue;
          if (strv_push (&out, name) < 0)
            {
              closedir (dh);
              goto fail;
            }
        }
      closedir (dh);
    }
  sort_unique (&out);
  return out.v;
fail:
  strv_clear (&out);
  return NULL;
}
