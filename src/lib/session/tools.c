/* The tool registry: host callbacks with typed, named arguments. */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "session/internal.h"

struct tool_def {
  char *name;
  char *description;
  struct securer_tool_arg *args;   /* names owned */
  size_t n_args;
  securer_tool_fn fn;
  void *userdata;
  struct tool_command *cmd;        /* or a host command */
};

struct securer_tools {
  atomic_int refs;
  struct tool_def *defs;
  size_t n;
};

static void
free_strv (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

static void
command_free (struct tool_command *c)
{
  if (c == NULL)
    return;
  free (c->path);
  free_strv (c->argv);
  free_strv (c->env);
  free (c);
}

static const char *const type_names[] = {
  [SECURER_ARG_ANY] = "any",
  [SECURER_ARG_NUMERIC] = "numeric",
  [SECURER_ARG_INTEGER] = "integer",
  [SECURER_ARG_CHARACTER] = "character",
  [SECURER_ARG_LOGICAL] = "logical",
  [SECURER_ARG_LIST] = "list",
  [SECURER_ARG_DATA_FRAME] = "data.frame",
};

const char *
securer_arg_type_name (enum securer_arg_type t)
{
  if ((unsigned) t < sizeof type_names / sizeof type_names[0])
    return type_names[t];
  return "?";
}

int
securer_arg_type_parse (const char *name)
{
  for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
    if (strcmp (name, type_names[i]) == 0)
      return (int) i;
  return -1;
}

struct securer_tools *
securer_tools_new (void)
{
  struct securer_tools *t = calloc (1, sizeof *t);
  if (t != NULL)
    atomic_init (&t->refs, 1);
  return t;
}

struct securer_tools *
securer_tools_ref (struct securer_tools *t)
{
  if (t != NULL)
    atomic_fetch_add (&t->refs, 1);
  return t;
}

void
securer_tools_unref (struct securer_tools *t)
{
  if (t == NULL || atomic_fetch_sub (&t->refs, 1) != 1)
    return;
  for (size_t i = 0; i < t->n; i++)
    {
      struct tool_def *d = &t->defs[i];
      free (d->name);
      free (d->description);
      for (size_t j = 0; j < d->n_args; j++)
        free ((char *) d->args[j].name);
      free (d->args);
      command_free (d->cmd);
    }
  free (t->defs);
  free (t);
}

size_t
securer_tools_count (const struct securer_tools *t)
{
  return t ? t->n : 0;
}

static int
tools_add (struct securer_tools *t, const char *name, const char *description,
           const struct securer_tool_arg *args, size_t n_args, securer_tool_fn fn,
           void *userdata, struct tool_command *cmd, securer_err_t *err);

int
securer_tools_add (struct securer_tools *t, const char *name, const char *description,
                   const struct securer_tool_arg *args, size_t n_args, securer_tool_fn fn,
                   void *userdata, securer_err_t *err)
{
  return tools_add (t, name, description, args, n_args, fn, userdata, NULL, err);
}

static bool
env_name_ok (const char *s, size_t n)
{
  if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')
          || (s[i] >= '0' && s[i] <= '9')))
      return false;
  return true;
}

int
securer_tools_add_command (struct securer_tools *t, const char *name, const char *description,
                           const struct securer_tool_arg *args, size_t n_args,
                           const struct securer_tool_command *command, securer_err_t *err)
{
  if (t == NULL || name == NULL)
    return securer_error_set (err, EINVAL, "add tool: no registry or name");
  if (command == NULL || command->argv == NULL || command->argv[0] == NULL)
    return securer_error_set (err, EINVAL, "tool '%s': no command", name);
  struct tool_command *c = calloc (1, sizeof *c);
  if (c == NULL)
    return securer_error_set (err, ENOMEM, "tool '%s'", name);
  size_t n = 0, ne = 0;
  while (command->argv[n])
    n++;
  while (command->env && command->env[ne])
    ne++;
  c->argv = calloc (n + 1, sizeof *c->argv);
  c->env = calloc (ne + 1, sizeof *c->env);
  bool oom = c->argv == NULL || c->env == NULL;
  for (size_t i = 0; !oom && i < n; i++)
    oom = (c->argv[i] = strdup (command->argv[i])) == NULL;
  for (size_t i = 0, j = 0; !oom && i < ne; i++)
    {
      const char *e = command->env[i];
      size_t nl = strcspn (e, "=");
      if (!env_name_ok (e, nl))
        {
          command_free (c);
          return securer_error_set (err, EINVAL, "tool '%s': bad environment entry '%s'", name, e);
        }
      /* A bare NAME passes the caller's value on (nothing when unset). */
      const char *v = e[nl] == '=' ? NULL : getenv (e);
      if (e[nl] == '=')
        oom = (c->env[j++] = strdup (e)) == NULL;
      else if (v != NULL && asprintf (&c->env[j++], "%s=%s", e, v) < 0)
        {
          c->env[--j] = NULL;
          oom = true;
        }
    }
  if (oom)
    {
      command_free (c);
      return securer_error_set (err, ENOMEM, "tool '%s'", name);
    }
  c->path = securer_toolcmd_resolve (command->argv[0], err);
  if (c->path == NULL)
    {
      command_free (c);
      return securer_error_prefix (err, "tool '%s'", name);
    }
  int rc = tools_add (t, name, description, args, n_args, NULL, NULL, c, err);
  if (rc < 0)
    command_free (c);
  return rc;
}

static int
tools_add (struct securer_tools *t, const char *name, const char *description,
           const struct securer_tool_arg *args, size_t n_args, securer_tool_fn fn,
           void *userdata, struct tool_command *cmd, securer_err_t *err)
{
  if (t == NULL || name == NULL)
    return securer_error_set (err, EINVAL, "add tool: no registry or name");
  if (!securer_proto_valid_name (name))
    return securer_error_set (err, EINVAL, "tool name '%s' is not a valid R identifier", name);
  if (strcmp (name, ".securer_call_tool") == 0)
    return securer_error_set (err, EINVAL, "tool name '%s' is reserved", name);
  if (securer_tools_find (t, name) != NULL)
    return securer_error_set (err, EEXIST, "tool '%s' is already registered", name);
  for (size_t i = 0; i < n_args; i++)
    {
      if (args[i].name == NULL || !securer_proto_valid_name (args[i].name))
        return securer_error_set (err, EINVAL, "tool '%s': argument name '%s' is not a valid R identifier",
                                  name, args[i].name ? args[i].name : "(null)");
      if ((unsigned) args[i].type >= sizeof type_names / sizeof type_names[0])
        return securer_error_set (err, EINVAL, "tool '%s': argument '%s' has an unknown type",
                                  name, args[i].name);
      for (size_t j = 0; j < i; j++)
        if (strcmp (args[i].name, args[j].name) == 0)
          return securer_error_set (err, EEXIST, "tool '%s': duplicate argument '%s'", name,
                                    args[i].name);
    }
  struct tool_def *defs = realloc (t->defs, (t->n + 1) * sizeof *defs);
  if (defs == NULL)
    return securer_error_set (err, ENOMEM, "add tool '%s'", name);
  t->defs = defs;
  struct tool_def *d = &defs[t->n];
  memset (d, 0, sizeof *d);
  d->name = strdup (name);
  d->description = strdup (description ? description : "");
  d->args = calloc (n_args ? n_args : 1, sizeof *d->args);
  bool oom = d->name == NULL || d->description == NULL || d->args == NULL;
  for (size_t i = 0; !oom && i < n_args; i++)
    {
      d->args[i].type = args[i].type;
      d->args[i].name = strdup (args[i].name);
      if (d->args[i].name == NULL)
        oom = true;
      else
        d->n_args = i + 1;
    }
  if (oom)
    {
      for (size_t i = 0; i < d->n_args; i++)
        free ((char *) d->args[i].name);
      free (d->args);
      free (d->name);
      free (d->description);
      return securer_error_set (err, ENOMEM, "add tool '%s'", name);
    }
  d->fn = fn;
  d->userdata = userdata;
  d->cmd = cmd;
  t->n++;
  return 0;
}

const struct tool_def *
securer_tools_find (const struct securer_tools *t, const char *name)
{
  if (t == NULL || name == NULL)
    return NULL;
  for (size_t i = 0; i < t->n; i++)
    if (strcmp (t->defs[i].name, name) == 0)
      return &t->defs[i];
  return NULL;
}

const struct tool_def *
securer_tools_at (const struct securer_tools *t, size_t i)
{
  return t != NULL && i < t->n ? &t->defs[i] : NULL;
}

size_t securer_tool_n_args (const struct tool_def *d) { return d->n_args; }
const char *securer_tool_arg_name (const struct tool_def *d, size_t i) { return d->args[i].name; }
enum securer_arg_type securer_tool_arg_type (const struct tool_def *d, size_t i) { return d->args[i].type; }
const char *securer_tool_name (const struct tool_def *d) { return d->name; }
const char *securer_tool_description (const struct tool_def *d) { return d->description; }

const struct tool_command *
securer_tool_command (const struct tool_def *d)
{
  return d->cmd;
}

securer_tool_fn
securer_tool_callback (const struct tool_def *d, void **userdata)
{
  *userdata = d->userdata;
  return d->fn;
}

static bool
type_matches (enum securer_arg_type ty, const char *tag)
{
  switch (ty)
    {
    case SECURER_ARG_ANY: return true;
    case SECURER_ARG_NUMERIC: return strcmp (tag, "dbl") == 0 || strcmp (tag, "int") == 0;
    case SECURER_ARG_INTEGER: return strcmp (tag, "int") == 0;
    case SECURER_ARG_CHARACTER: return strcmp (tag, "chr") == 0;
    case SECURER_ARG_LOGICAL: return strcmp (tag, "lgl") == 0;
    case SECURER_ARG_LIST: return strcmp (tag, "list") == 0 || strcmp (tag, "df") == 0;
    case SECURER_ARG_DATA_FRAME: return strcmp (tag, "df") == 0;
    }
  return false;
}

int
securer_tool_check_args (const struct tool_def *d, const json_t *args, securer_err_t *err)
{
  const char *key;
  const json_t *v;
  json_object_foreach ((json_t *) args, key, v)
  {
    size_t i;
    for (i = 0; i < d->n_args; i++)
      if (strcmp (d->args[i].name, key) == 0)
        break;
    if (i == d->n_args)
      return securer_error_set (err, EINVAL, "Tool '%s': unexpected argument '%s'", d->name, key);
    if (securer_value_validate (v, err) < 0)
      return securer_error_prefix (err, "Tool '%s': argument '%s'", d->name, key);
    const char *tag = securer_value_tag (v);
    if (!type_matches (d->args[i].type, tag))
      return securer_error_set (err, EINVAL, "Tool '%s': argument '%s' must be %s, got %s", d->name,
                                key, securer_arg_type_name (d->args[i].type), tag);
  }
  return 0;
}
