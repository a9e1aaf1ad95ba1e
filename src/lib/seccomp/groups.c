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
#include "suggest.h"

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
bool
securer_group_name_valid (const char *name)
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

struct loader {
  const char *stack[MAX_DEPTH + 1];  /* the groups being expanded, outermost first */
  securer_group_report_fn report;
  void *ctx;
  char **syscalls;                   /* for suggestions, loaded on first need */
  char **groups;
  const char *find;                  /* a syscall whose first entry is wanted */
  char *found_path;
  unsigned found_line;
};

/* Adds a member; notes where the syscall looked for first appears. */
static int
add_member (struct loader *ld, struct strv *out, const char *name, const char *path, unsigned line)
{
  if (ld->find != NULL && ld->found_path == NULL && strcmp (name, ld->find) == 0)
    {
      ld->found_path = strdup (path);
      ld->found_line = line;
    }
  return strv_push (out, name);
}

/* Checks that group `name` may be expanded here: 0, or an errno with the
 * reason in why. */
static int
check_entry (const struct loader *ld, const char *name, unsigned depth, char *why, size_t size)
{
  if (!securer_group_name_valid (name))
    {
      snprintf (why, size, "invalid group name '@%.64s' (expected lower-case letters, digits, '-')", name);
      return EINVAL;
    }
  for (unsigned i = 0; i < depth; i++)
    if (strcmp (ld->stack[i], name) == 0)
      {
        size_t used = (size_t) snprintf (why, size, "group cycle: ");
        for (unsigned j = i; j < depth && used < size; j++)
          used += (size_t) snprintf (why + used, size - used, "@%s -> ", ld->stack[j]);
        if (used < size)
          snprintf (why + used, size - used, "@%s", name);
        return ELOOP;
      }
  if (depth >= MAX_DEPTH)
    {
      snprintf (why, size, "group @%s: nested more than %d deep", name, MAX_DEPTH);
      return ELOOP;
    }
  return 0;
}

static char *
suggest_in (char ***cache, char **(*load) (void), const char *word, const char *prefix)
{
  if (*cache == NULL)
    *cache = load ();
  size_t n = 0;
  while (*cache != NULL && (*cache)[n] != NULL)
    n++;
  const char *best = securer_suggest (word, (const char *const *) *cache, n);
  char *hint = NULL;
  if (best != NULL && asprintf (&hint, "did you mean '%s%s'?", prefix, best) < 0)
    hint = NULL;
  return hint;
}

/* A problem on one line of a group file: handed to the reporter with its
 * place and hint, and kept in *err when it is the first. */
static void
problem (struct loader *ld, securer_err_t *err, int errnum, const char *path, unsigned line,
         unsigned col, const char *hint, const char *msg)
{
  if (ld->report != NULL)
    ld->report (ld->ctx, path, line, col, hint, msg);
  if (*err == NULL)
    {
      if (hint != NULL)
        securer_error_set (err, errnum, "%s:%u:%u: %s (%s)", path, line, col, msg, hint);
      else
        securer_error_set (err, errnum, "%s:%u:%u: %s", path, line, col, msg);
    }
}

static char **
group_names_for_suggest (void)
{
  return securer_group_names ();
}

static int load_file (struct loader *ld, const char *name, const char *path, unsigned depth,
                      struct strv *out, securer_err_t *err);

/* Returns 0; -1 when `name` could not be entered, with the reason in why
 * (nothing reported yet: the caller names the line that asked for it); -2
 * when a problem inside was already reported. */
static int
load_into (struct loader *ld, const char *name, unsigned depth, struct strv *out, char *why,
           size_t size, securer_err_t *err)
{
  int e = check_entry (ld, name, depth, why, size);
  if (e != 0)
    return securer_error_set (err, e, "%s", why);
  if (strcmp (name, KNOWN_GROUP) == 0)
    return load_known (out, err) < 0 ? -2 : 0;
  char rel[128];
  snprintf (rel, sizeof rel, "seccomp/%s.syscalls", name);
  char *path = securer_data_find (rel, err);
  if (path == NULL)
    {
      snprintf (why, size, "unknown group '@%s'", name);
      securer_error_prefix (err, "%s", why);
      return -1;
    }
  int rc = load_file (ld, name, path, depth, out, err);
  free (path);
  return rc;
}

static int
load_file (struct loader *ld, const char *name, const char *path, unsigned depth,
           struct strv *out, securer_err_t *err)
{
  FILE *f = fopen (path, "re");
  if (f == NULL)
    {
      securer_error_set (err, errno, "open %s", path);
      return -2;
    }
  ld->stack[depth] = name;
  char *line = NULL;
  size_t cap = 0;
  unsigned lineno = 0;
  int rc = 0;
  /* Every problem of the file is reported, as for a policy file; only
   * running out of memory stops early. */
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
      unsigned col = (unsigned) (s - line) + 1;
      char *blank = s;
      while (*blank && !isspace ((unsigned char) *blank))
        blank++;
      if (*blank != '\0')
        {
          char msg[256];
          snprintf (msg, sizeof msg, "one entry per line expected, got '%.200s'", s);
          problem (ld, err, EINVAL, path, lineno, col, NULL, msg);
          rc = -2;
          continue;
        }

      if (s[0] == '@')
        {
          securer_err_t sub = NULL;
          char why[1200];
          int r = load_into (ld, s + 1, depth + 1, out, why, sizeof why, &sub);
          if (r == -1)
            {
              char *hint = NULL;
              if (securer_error_errno (sub) == ENOENT)
                hint = suggest_in (&ld->groups, group_names_for_suggest, s + 1, "@");
              problem (ld, err, securer_error_errno (sub), path, lineno, col, hint, why);
              free (hint);
            }
          else if (r == -2 && *err == NULL)
            {
              *err = sub;
              sub = NULL;
              securer_error_prefix (err, "%s:%u:%u", path, lineno, col);
            }
          securer_error_free (&sub);
          if (r < 0)
            rc = -2;
        }
      else if (s[0] == '?')
        {
          if (securer_syscall_known (s + 1) && add_member (ld, out, s + 1, path, lineno) < 0)
            {
              securer_error_set (err, ENOMEM, "%s:%u", path, lineno);
              rc = -2;
              break;
            }
        }
      else if (!securer_syscall_known (s))
        {
          char *hint = suggest_in (&ld->syscalls, securer_syscall_names, s, "");
          char msg[384];
          if (hint != NULL)
            snprintf (msg, sizeof msg, "unknown syscall '%.200s'", s);
          else
            snprintf (msg, sizeof msg, "unknown syscall '%.200s' (not known to libseccomp %u.%u.%u; prefix it with '?' if it is newer than this libseccomp)",
                      s, seccomp_version ()->major, seccomp_version ()->minor,
                      seccomp_version ()->micro);
          problem (ld, err, EINVAL, path, lineno, col, hint, msg);
          free (hint);
          rc = -2;
        }
      else if (add_member (ld, out, s, path, lineno) < 0)
        {
          securer_error_set (err, ENOMEM, "%s:%u", path, lineno);
          rc = -2;
          break;
        }
    }
  if (ferror (f) && rc == 0)
    {
      securer_error_set (err, EIO, "read %s", path);
      rc = -2;
    }
  free (line);
  fclose (f);
  return rc;
}

int
securer_group_load_report (const char *name, char ***members, size_t *n_members,
                           securer_group_report_fn report, void *ctx, securer_err_t *err)
{
  if (name != NULL && name[0] == '@')
    name++;
  struct loader ld = { .report = report, .ctx = ctx };
  struct strv out = { 0 };
  char why[1200];
  int rc = load_into (&ld, name, 0, &out, why, sizeof why, err);
  securer_strv_free (ld.syscalls);
  securer_strv_free (ld.groups);
  if (rc < 0)
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

int
securer_group_locate (const char *group, const char *syscall, char **path, unsigned *line,
                      securer_err_t *err)
{
  if (group != NULL && group[0] == '@')
    group++;
  *path = NULL;
  *line = 0;
  struct loader ld = { .find = syscall };
  struct strv out = { 0 };
  char why[1200];
  int rc = load_into (&ld, group, 0, &out, why, sizeof why, err);
  securer_strv_free (ld.syscalls);
  securer_strv_free (ld.groups);
  strv_clear (&out);
  if (rc < 0)
    {
      free (ld.found_path);
      return -1;
    }
  *path = ld.found_path;
  *line = ld.found_line;
  return 0;
}

int
securer_group_load (const char *name, char ***members, size_t *n_members, securer_err_t *err)
{
  return securer_group_load_report (name, members, n_members, NULL, NULL, err);
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
          if (!securer_group_name_valid (name))
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
