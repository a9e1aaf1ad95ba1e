/* Entry points of the policy area: loading (text or JSON), finding a policy
 * by name, freeing, and the names of enum values every printer shares. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "securer/paths.h"

/* ---- names -------------------------------------------------------------- */

const char *const policy_ns_names[7] = { "user", "pid", "mount", "net", "uts", "ipc", "cgroup" };

const char *
securer_ns_name (enum securer_ns ns)
{
  for (unsigned i = 0; i < 7; i++)
    if ((unsigned) ns == (1u << i))
      return policy_ns_names[i];
  return NULL;
}

const char *const policy_session_template_names[3] = { "auto", "on", "off" };

const char *
securer_session_template_name (enum securer_session_template t)
{
  return (unsigned) t < 3 ? policy_session_template_names[t] : NULL;
}

int
securer_session_template_parse (const char *s)
{
  for (int i = 0; s != NULL && i < 3; i++)
    if (strcmp (s, policy_session_template_names[i]) == 0)
      return i;
  return -1;
}

static const char *const rlimit_names[SECURER_RLIMIT_COUNT] = {
  "cpu", "as", "fsize", "nproc", "nofile", "stack", "core", "memlock", "sigpending",
};

const char *
securer_rlimit_name (enum securer_rlimit_id id)
{
  return (unsigned) id < SECURER_RLIMIT_COUNT ? rlimit_names[id] : NULL;
}

uint32_t
securer_policy_ptys (const struct securer_policy *p)
{
  return p->limits.ptys_set ? p->limits.ptys : SECURER_PTYS_DEFAULT;
}

bool
policy_rlimit_is_count (enum securer_rlimit_id id)
{
  return id == SECURER_RLIMIT_NPROC || id == SECURER_RLIMIT_NOFILE || id == SECURER_RLIMIT_SIGPENDING;
}

int
policy_rlimit_lookup (const char *s, enum securer_rlimit_id *id)
{
  for (unsigned i = 0; i < SECURER_RLIMIT_COUNT; i++)
    if (strcmp (s, rlimit_names[i]) == 0)
      {
        *id = i;
        return 0;
      }
  return -1;
}

static const char *const action_names[] = {
  "allow", "errno", "kill-process", "kill-thread", "trap", "log", "notify",
};

const char *
securer_action_name (enum securer_action_type t)
{
  return (unsigned) t < sizeof action_names / sizeof *action_names ? action_names[t] : NULL;
}

bool
securer_action_equal (struct securer_action a, struct securer_action b)
{
  return a.type == b.type && (a.type != SECURER_ACT_ERRNO || a.errnum == b.errnum);
}

int
policy_action_lookup (const char *s, enum securer_action_type *t)
{
  if (strcmp (s, "kill") == 0)
    {
      *t = SECURER_ACT_KILL_PROCESS;
      return 0;
    }
  for (unsigned i = 0; i < sizeof action_names / sizeof *action_names; i++)
    if (strcmp (s, action_names[i]) == 0)
      {
        *t = i;
        return 0;
      }
  return -1;
}

static const char *const mount_names[] = { "ro", "rw", "tmpfs", "proc", "dev", "dir", "symlink" };

const char *
policy_mount_type_name (enum securer_mount_type t)
{
  return (unsigned) t < sizeof mount_names / sizeof *mount_names ? mount_names[t] : NULL;
}

int
policy_mount_type_lookup (const char *s, enum securer_mount_type *t)
{
  for (unsigned i = 0; i < sizeof mount_names / sizeof *mount_names; i++)
    if (strcmp (s, mount_names[i]) == 0)
      {
        *t = i;
        return 0;
      }
  return -1;
}

static const char *const enforce_names[] = { "off", "best-effort", "required" };

const char *
policy_enforce_name (enum securer_enforce e)
{
  return (unsigned) e < 3 ? enforce_names[e] : NULL;
}

int
policy_enforce_lookup (const char *s, enum securer_enforce *e)
{
  for (unsigned i = 0; i < 3; i++)
    if (strcmp (s, enforce_names[i]) == 0)
      {
        *e = i;
        return 0;
      }
  return -1;
}

static const char *const net_names[] = { "none", "loopback", "host", "allow" };

const char *
policy_net_name (enum securer_net_mode m)
{
  return (unsigned) m < 4 ? net_names[m] : NULL;
}

int
policy_net_lookup (const char *s, enum securer_net_mode *m)
{
  for (unsigned i = 0; i < 4; i++)
    if (strcmp (s, net_names[i]) == 0)
      {
        *m = i;
        return 0;
      }
  return -1;
}

static const char *const cmp_names[] = { "==", "!=", "<", "<=", ">", ">=", "&==" };

const char *
policy_cmp_name (enum securer_cmp c)
{
  return (unsigned) c < sizeof cmp_names / sizeof *cmp_names ? cmp_names[c] : NULL;
}

/* ---- small helpers ------------------------------------------------------ */

void *
xcalloc_array (size_t n, size_t size)
{
  return calloc (n ? n : 1, size);
}

/* Makes room for element n (0-based) in *v, doubling the capacity. */
int
grow (void **v, size_t *cap, size_t n, size_t size)
{
  if (n < *cap)
    return 0;
  size_t nc = *cap ? *cap * 2 : 8;
  while (nc <= n)
    nc *= 2;
  void *p = realloc (*v, nc * size);
  if (p == NULL)
    return -1;
  *v = p;
  *cap = nc;
  return 0;
}

char *
loc_file_dup (const char *file)
{
  return file ? strdup (file) : NULL;
}

/* ---- freeing ------------------------------------------------------------ */

static void
strv_free_n (char **v, size_t n)
{
  if (v == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    free (v[i]);
  free (v);
}

void
securer_policy_free (struct securer_policy *p)
{
  if (p == NULL)
    return;
  free (p->name);
  free (p->path);
  free (p->hostname);
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      free (p->mounts[i].source);
      free (p->mounts[i].dest);
      free (p->mounts[i].loc.file);
    }
  free (p->mounts);
  strv_free_n (p->masks, p->n_masks);
  free (p->cwd);
  for (size_t i = 0; i < p->n_net_rules; i++)
    securer_net_rule_clear (&p->net_rules[i]);
  free (p->net_rules);
  strv_free_n (p->env_keep, p->n_env_keep);
  for (size_t i = 0; i < p->n_env_set; i++)
    {
      free (p->env_set[i].name);
      free (p->env_set[i].value);
    }
  free (p->env_set);
  strv_free_n (p->exec, p->n_exec);
  free (p->landlock.tcp_bind);
  free (p->landlock.tcp_connect);
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    {
      free (p->seccomp.rules[i].name);
      free (p->seccomp.rules[i].group);
      free (p->seccomp.rules[i].loc.file);
    }
  free (p->seccomp.rules);
  strv_free_n (p->includes, p->n_includes);
  policy_deferred_free (p->deferred);
  free (p);
}

/* ---- reading files ------------------------------------------------------ */

static int
default_reader (const char *path, char **buf, size_t *len, securer_err_t *err)
{
  /* O_NONBLOCK and the regular-file check keep `include "/dev/stdin"` or a
   * FIFO from blocking the loader. */
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return securer_error_set (err, errno, "open %s", path);
  struct stat st;
  if (fstat (fd, &st) < 0)
    {
      int e = errno;
      close (fd);
      return securer_error_set (err, e, "stat %s", path);
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      return securer_error_set (err, 0, "%s: not a regular file", path);
    }
  size_t cap = (size_t) st.st_size + 1;
  if (cap > POLICY_MAX_FILE_SIZE + 1)
    cap = POLICY_MAX_FILE_SIZE + 1;
  char *b = malloc (cap + 1);
  if (b == NULL)
    {
      close (fd);
      return securer_error_set (err, ENOMEM, "read %s", path);
    }
  size_t n = 0;
  for (;;)
    {
      if (n == cap)
        {
          if (cap > POLICY_MAX_FILE_SIZE)
            break;
          size_t nc = cap * 2 > POLICY_MAX_FILE_SIZE + 1 ? POLICY_MAX_FILE_SIZE + 1 : cap * 2;
          char *nb = realloc (b, nc + 1);
          if (nb == NULL)
            {
              free (b);
              close (fd);
              return securer_error_set (err, ENOMEM, "read %s", path);
            }
          b = nb;
          cap = nc;
        }
      ssize_t r = read (fd, b + n, cap - n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int e = errno;
          free (b);
          close (fd);
          return securer_error_set (err, e, "read %s", path);
        }
      if (r == 0)
        break;
      n += (size_t) r;
    }
  close (fd);
  if (n > POLICY_MAX_FILE_SIZE)
    {
      free (b);
      return securer_error_set (err, EFBIG, "%s: larger than %u bytes", path, POLICY_MAX_FILE_SIZE);
    }
  b[n] = '\0';
  *buf = b;
  *len = n;
  return 0;
}

static policy_reader_fn reader = default_reader;

void
policy_set_reader (policy_reader_fn fn)
{
  reader = fn ? fn : default_reader;
}

int
policy_read_file (const char *path, char **buf, size_t *len, securer_err_t *err)
{
  return reader (path, buf, len, err);
}

/* ---- loading ------------------------------------------------------------ */

static bool
looks_like_json (const char *text, size_t len)
{
  for (size_t i = 0; i < len; i++)
    {
      char c = text[i];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        continue;
      return c == '{';
    }
  return false;
}

static int
load (const char *name, const char *text, size_t len, unsigned flags, struct securer_policy **out,
      struct securer_diags *diags, securer_err_t *err)
{
  struct securer_diags local = { NULL, 0, 0 };
  struct securer_diags *d = diags ? diags : &local;
  size_t errors_before = d->n_errors, n_before = d->n;
  struct securer_policy *p = NULL;
  int r;
  if (looks_like_json (text, len))
    r = policy_from_json (name, text, len, &p, d);
  else
    r = policy_parse (name, text, len, flags, &p, d);
  if (r < 0 || d->n_errors > errors_before)
    {
      securer_policy_free (p);
      /* Report the first error of this load, not one the caller had
       * collected before. */
      struct securer_diags view = { d->items + n_before, d->n - n_before, 0 };
      diag_to_error (&view, err);
      securer_diags_free (&local);
      return -1;
    }
  securer_diags_free (&local);
  *out = p;
  return 0;
}

int
securer_policy_load_string (const char *name, const char *text, size_t len,
                            struct securer_policy **out, struct securer_diags *diags,
                            securer_err_t *err)
{
  return securer_policy_load_string_opts (name, text, len, 0, out, diags, err);
}

int
securer_policy_load_string_opts (const char *name, const char *text, size_t len, unsigned flags,
                                 struct securer_policy **out, struct securer_diags *diags,
                                 securer_err_t *err)
{
  if (out == NULL || (text == NULL && len > 0))
    return securer_error_set (err, EINVAL, "load policy: invalid arguments");
  *out = NULL;
  if (name == NULL)
    name = "<policy>";
  if (len > POLICY_MAX_FILE_SIZE)
    {
      diag_add (diags, SECURER_DIAG_ERROR, name, 0, 0, NULL, "larger than %u bytes",
                POLICY_MAX_FILE_SIZE);
      return securer_error_set (err, EFBIG, "%s: larger than %u bytes", name, POLICY_MAX_FILE_SIZE);
    }
  return load (name, text ? text : "", len, flags, out, diags, err);
}

int
securer_policy_load_file (const char *path, struct securer_policy **out,
                          struct securer_diags *diags, securer_err_t *err)
{
  return securer_policy_load_file_opts (path, 0, out, diags, err);
}

int
securer_policy_load_file_opts (const char *path, unsigned flags, struct securer_policy **out,
                               struct securer_diags *diags, securer_err_t *err)
{
  if (path == NULL || out == NULL)
    return securer_error_set (err, EINVAL, "load policy: invalid arguments");
  *out = NULL;
  char *buf = NULL;
  size_t len = 0;
  if (policy_read_file (path, &buf, &len, err) < 0)
    {
      diag_add (diags, SECURER_DIAG_ERROR, path, 0, 0, NULL, "%s", securer_error_message (*err));
      return securer_error_prefix (err, "load policy");
    }
  int r = load (path, buf, len, flags, out, diags, err);
  free (buf);
  return r;
}

static bool
valid_policy_name (const char *s)
{
  if (*s == '\0' || *s == '.' || strlen (s) > 128)
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
          || *s == '-' || *s == '_' || *s == '.'))
      return false;
  return true;
}

static bool
ends_with (const char *s, const char *suffix)
{
  size_t a = strlen (s), b = strlen (suffix);
  return a >= b && strcmp (s + a - b, suffix) == 0;
}

int
securer_policy_find (const char *name_or_path, char **path_out, securer_err_t *err)
{
  if (name_or_path == NULL || path_out == NULL || *name_or_path == '\0')
    return securer_error_set (err, EINVAL, "find policy: empty name");
  *path_out = NULL;
  const char *s = name_or_path;
  if (strchr (s, '/') != NULL || ends_with (s, ".policy") || ends_with (s, ".json"))
    {
      if (access (s, R_OK) < 0)
        return securer_error_set (err, errno, "policy %s", s);
      *path_out = strdup (s);
      if (*path_out == NULL)
        return securer_error_set (err, ENOMEM, "find policy %s", s);
      return 0;
    }
  if (!valid_policy_name (s))
    return securer_error_set (err, EINVAL,
                              "policy name '%s': expected letters, digits, '-', '_' or '.', or a path",
                              s);
  char *rel = NULL;
  if (asprintf (&rel, "policies/%s.policy", s) < 0)
    return securer_error_set (err, ENOMEM, "find policy %s", s);
  char *p = securer_data_find (rel, err);
  free (rel);
  if (p == NULL)
    return securer_error_prefix (err, "policy '%s'", s);
  *path_out = p;
  return 0;
}

bool
securer_policy_is_sandboxed (const struct securer_policy *p, const char **why)
{
  static const struct {
    unsigned ns;
    const char *missing;
  } needed[] = {
    { SECURER_NS_USER, "no user namespace" },
    { SECURER_NS_MOUNT, "no mount namespace" },
    { SECURER_NS_PID, "no pid namespace" },
  };
  const char *w = NULL;
  for (size_t i = 0; w == NULL && i < sizeof needed / sizeof *needed; i++)
    if ((p->namespaces & needed[i].ns) == 0)
      w = needed[i].missing;
  if (w == NULL && !p->seccomp.enabled)
    w = "seccomp off";
  if (w == NULL && p->landlock.mode == SECURER_ENFORCE_OFF)
    w = "landlock off";
  if (why != NULL)
    *why = w;
  return w == NULL;
}
