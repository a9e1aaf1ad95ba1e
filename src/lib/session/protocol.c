/* The message schema between the host and the R runtime.  Every message
 * from R is untrusted: it is parsed with duplicate keys rejected and must
 * match its type's schema exactly (no unknown keys, right JSON types)
 * before any field is used. */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "session/internal.h"

static const char *const reserved[] = {
  "if", "else", "repeat", "while", "function", "for", "in", "next", "break", "TRUE", "FALSE",
  "NULL", "Inf", "NaN", "NA", "NA_integer_", "NA_real_", "NA_character_", "NA_complex_",
  "...", NULL,
};

bool
securer_proto_valid_name (const char *s)
{
  if (s == NULL || s[0] == '\0' || strlen (s) > 256)
    return false;
  const unsigned char *p = (const unsigned char *) s;
  bool alpha0 = (p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z');
  if (!alpha0 && p[0] != '.')
    return false;
  if (p[0] == '.' && p[1] >= '0' && p[1] <= '9')
    return false;
  for (p++; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')
          || *p == '.' || *p == '_'))
      return false;
  for (const char *const *r = reserved; *r; r++)
    if (strcmp (s, *r) == 0)
      return false;
  /* ..1, ..2 are reserved too */
  if (s[0] == '.' && s[1] == '.' && s[2] >= '0' && s[2] <= '9')
    return false;
  return true;
}

static bool
only_keys (const json_t *o, const char *const *keys, const char **bad)
{
  const char *key;
  json_t *v;
  json_object_foreach ((json_t *) o, key, v)
  {
    const char *const *k;
    for (k = keys; *k; k++)
      if (strcmp (*k, key) == 0)
        break;
    if (*k == NULL)
      {
        *bad = key;
        return false;
      }
  }
  return true;
}

/* An optional count R reports; absent is 0. */
static int
get_count (const json_t *root, const char *key, uint64_t *out, securer_err_t *err)
{
  const json_t *v = json_object_get (root, key);
  *out = 0;
  if (v == NULL)
    return 0;
  if (!json_is_integer (v) || json_integer_value (v) < 0)
    return securer_error_set (err, EPROTO, "\"%s\" must be a non-negative integer", key);
  *out = (uint64_t) json_integer_value (v);
  return 0;
}

/* A page as R rendered it: base64 of an image whose first bytes are
 * those of its format, so that what the host hands on as a PNG is one. */
static int
parse_plot (json_t *root, struct proto_msg *m, securer_err_t *err)
{
  int f = securer_plot_format_parse (json_string_value (json_object_get (root, "format")));
  if (f < 0 || f == SECURER_PLOT_NONE)
    return securer_error_set (err, EPROTO, "plot: \"format\" must be \"png\" or \"svg\"");
  m->plot_format = (enum securer_plot_format) f;
  static const char *const dims[] = { "width", "height" };
  unsigned *out[] = { &m->plot_width, &m->plot_height };
  for (int i = 0; i < 2; i++)
    {
      json_t *d = json_object_get (root, dims[i]);
      if (!json_is_integer (d) || json_integer_value (d) < 1 || json_integer_value (d) > SECURER_PLOT_MAX_PIXELS)
        return securer_error_set (err, EPROTO, "plot: \"%s\" must be 1..%d", dims[i], SECURER_PLOT_MAX_PIXELS);
      *out[i] = (unsigned) json_integer_value (d);
    }
  json_t *data = json_object_get (root, "data");
  unsigned char head[64];
  size_t n;
  if (!json_is_string (data)
      || securer_base64_check (json_string_value (data), json_string_length (data), &n, head, sizeof head) < 0)
    return securer_error_set (err, EPROTO, "plot: \"data\" must be a base64 string");
  static const unsigned char png_magic[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  bool ok;
  if (m->plot_format == SECURER_PLOT_PNG)
    ok = n >= sizeof png_magic && memcmp (head, png_magic, sizeof png_magic) == 0;
  else
    ok = (n >= 5 && memcmp (head, "<?xml", 5) == 0) || (n >= 4 && memcmp (head, "<svg", 4) == 0);
  if (!ok)
    return securer_error_set (err, EPROTO, "plot: \"data\" is no %s image",
                              securer_plot_format_name (m->plot_format));
  m->plot_data = json_string_value (data);
  m->plot_data_len = json_string_length (data);
  m->plot_bytes = n;
  return 0;
}

static int
get_id (const json_t *root, uint64_t *id, securer_err_t *err)
{
  const json_t *v = json_object_get (root, "id");
  if (!json_is_integer (v) || json_integer_value (v) < 0)
    return securer_error_set (err, EPROTO, "\"id\" must be a non-negative integer");
  *id = (uint64_t) json_integer_value (v);
  return 0;
}

static int
string_array (const json_t *a, const char *what, securer_err_t *err)
{
  if (!json_is_array (a))
    return securer_error_set (err, EPROTO, "\"%s\" must be an array of strings", what);
  size_t i;
  json_t *e;
  json_array_foreach (a, i, e)
    if (!json_is_string (e))
      return securer_error_set (err, EPROTO, "\"%s\" must be an array of strings", what);
  return 0;
}

void
securer_proto_msg_clear (struct proto_msg *m)
{
  json_decref (m->root);
  memset (m, 0, sizeof *m);
}

static int
parse_fields (struct proto_msg *m, securer_err_t *err)
{
  json_t *root = m->root;
  const char *type = json_string_value (json_object_get (root, "type"));
  const char *bad = NULL;
  if (type == NULL)
    return securer_error_set (err, EPROTO, "\"type\" must be a string");
  if (strcmp (type, "ready") == 0)
    {
      static const char *const keys[] = { "type", "r_version", "pid", NULL };
      m->type = PROTO_READY;
      if (!only_keys (root, keys, &bad))
        goto unknown_key;
      m->r_version = json_string_value (json_object_get (root, "r_version"));
      json_t *pid = json_object_get (root, "pid");
      if (m->r_version == NULL || !json_is_integer (pid))
        return securer_error_set (err, EPROTO, "ready: needs \"r_version\" and \"pid\"");
      m->pid = json_integer_value (pid);
      return 0;
    }
  if (strcmp (type, "tool_call") == 0)
    {
      static const char *const keys[] = { "type", "id", "tool", "args", NULL };
      m->type = PROTO_TOOL_CALL;
      if (!only_keys (root, keys, &bad))
        goto unknown_key;
      if (get_id (root, &m->id, err) < 0)
        return -1;
      m->tool = json_string_value (json_object_get (root, "tool"));
      /* Any name R's code asks for is a call (to an unknown tool when it
       * is no identifier: R's code gets the error, R is not killed). */
      if (m->tool == NULL)
        return securer_error_set (err, EPROTO, "tool_call: \"tool\" must be a string");
      json_t *args = json_object_get (root, "args");
      if (args == NULL || json_is_null (args))
        {
          args = json_object ();
          json_object_set_new (root, "args", args);
        }
      if (!json_is_object (args))
        return securer_error_set (err, EPROTO, "tool_call: \"args\" must be an object");
      m->args = args;
      return 0;
    }
  if (strcmp (type, "result") == 0)
    {
      static const char *const keys[] = { "type", "id", "visible", "warnings", "value", "plots_dropped",
                                          NULL };
      m->type = PROTO_RESULT;
      if (!only_keys (root, keys, &bad))
        goto unknown_key;
      if (get_id (root, &m->id, err) < 0 || get_count (root, "plots_dropped", &m->plots_dropped, err) < 0)
        return -1;
      json_t *vis = json_object_get (root, "visible");
      if (!json_is_boolean (vis))
        return securer_error_set (err, EPROTO, "result: \"visible\" must be a boolean");
      m->visible = json_is_true (vis);
      m->warnings = json_object_get (root, "warnings");
      if (m->warnings != NULL && string_array (m->warnings, "warnings", err) < 0)
        return -1;
      m->value = json_object_get (root, "value");
      if (m->value == NULL)
        return securer_error_set (err, EPROTO, "result: \"value\" is missing");
      securer_err_t verr = NULL;
      if (securer_value_validate (m->value, &verr) < 0)
        {
          securer_error_set (err, EPROTO, "result value: %s", securer_error_text (verr));
          securer_error_free (&verr);
          return -1;
        }
      return 0;
    }
  if (strcmp (type, "error") == 0)
    {
      static const char *const keys[] = { "type", "id", "kind", "message", "warnings", "call",
                                          "plots_dropped", NULL };
      m->type = PROTO_ERROR;
      if (!only_keys (root, keys, &bad))
        goto unknown_key;
      if (get_id (root, &m->id, err) < 0 || get_count (root, "plots_dropped", &m->plots_dropped, err) < 0)
        return -1;
      m->warnings = json_object_get (root, "warnings");
      if (m->warnings != NULL && string_array (m->warnings, "warnings", err) < 0)
        return -1;
      json_t *call = json_object_get (root, "call");
      if (call != NULL && !json_is_string (call))
        return securer_error_set (err, EPROTO, "error: \"call\" must be a string");
      m->call = json_string_value (call);
      m->message = json_string_value (json_object_get (root, "message"));
      m->kind = json_string_value (json_object_get (root, "kind"));
      if (m->message == NULL || m->kind == NULL)
        return securer_error_set (err, EPROTO, "error: needs \"kind\" and \"message\" strings");
      if (strcmp (m->kind, "error") != 0 && strcmp (m->kind, "syntax") != 0
          && strcmp (m->kind, "too_large") != 0)
        return securer_error_set (err, EPROTO, "error: unknown kind \"%s\"", m->kind);
      return 0;
    }
  if (strcmp (type, "parsed") == 0)
    {
      static const char *const keys[] = { "type", "id", "warnings", NULL };
      m->type = PROTO_PARSED;
      if (!only_keys (root, keys, &bad))
        goto unknown_key;
      if (get_id (root, &m->id, err) < 0)
        return -1;
      m->warnings = json_object_get (root, "warnings");
      if (string_array (m->warnings, "warnings", err) < 0)
        return -1;
      return 0;
    }
  if (strcmp (type, "plot") == 0)
    {
      static const char *const keys[] = { "type", "id", "format", "width", "height", "data", NULL };
      m->type = PROTO_PLOT;
      if (!only_keys (root, keys, &bad))
        goto unknown_key;
      if (get_id (root, &m->id, err) < 0)
        return -1;
      return parse_plot (root, m, err);
    }
  return securer_error_set (err, EPROTO, "unknown message type \"%.40s\"", type);
unknown_key:
  return securer_error_set (err, EPROTO, "%s: unexpected key \"%.40s\"", type, bad);
}

int
securer_proto_parse (const char *line, size_t len, struct proto_msg *m, securer_err_t *err)
{
  memset (m, 0, sizeof *m);
  json_error_t je;
  m->root = json_loadb (line, len, JSON_REJECT_DUPLICATES, &je);
  if (m->root == NULL)
    return securer_error_set (err, EPROTO, "malformed JSON from R: %s (column %d)", je.text,
                              je.column);
  if (!json_is_object (m->root))
    {
      securer_proto_msg_clear (m);
      return securer_error_set (err, EPROTO, "message from R is not a JSON object");
    }
  if (parse_fields (m, err) < 0)
    {
      securer_proto_msg_clear (m);
      return securer_error_prefix (err, "invalid message from R");
    }
  return 0;
}

/* ---- host -> R -------------------------------------------------------------- */

static char *
dump (json_t *o)
{
  if (o == NULL)
    return NULL;
  char *s = json_dumps (o, JSON_COMPACT | JSON_REAL_PRECISION (17));
  json_decref (o);
  return s;
}

char *
securer_proto_hello (const struct securer_tools *tools, size_t max_message, unsigned cpus)
{
  json_t *arr = json_array ();
  for (size_t i = 0; i < securer_tools_count (tools); i++)
    {
      const struct tool_def *d = securer_tools_at (tools, i);
      json_t *args = json_array ();
      for (size_t j = 0; j < securer_tool_n_args (d); j++)
        json_array_append_new (args, json_pack ("{s:s, s:s}", "name", securer_tool_arg_name (d, j),
                                                "type", securer_arg_type_name (securer_tool_arg_type (d, j))));
      json_array_append_new (arr, json_pack ("{s:s, s:o}", "name", securer_tool_name (d), "args", args));
    }
  json_t *risky = json_array ();
  for (const char *const *r = securer_risky_calls (); *r; r++)
    json_array_append_new (risky, json_string (*r));
  return dump (json_pack ("{s:s, s:o, s:I, s:o, s:I}", "type", "hello", "tools", arr, "max_message",
                          (json_int_t) max_message, "risky", risky, "cpus", (json_int_t) cpus));
}

char *
securer_proto_execute (uint64_t id, const char *code, const struct securer_exec_opts *xo)
{
  json_t *plots = json_null ();
  /* The caps go to R too, so that it renders no page the host would drop. */
  if (xo->plot_format != SECURER_PLOT_NONE)
    plots = json_pack ("{s:s, s:I, s:I, s:I, s:I, s:I}", "format", securer_plot_format_name (xo->plot_format),
                       "width", (json_int_t) xo->plot_width, "height", (json_int_t) xo->plot_height, "res",
                       (json_int_t) xo->plot_res, "max", (json_int_t) xo->max_plots, "max_bytes",
                       (json_int_t) (xo->max_plot_bytes > INT64_MAX ? INT64_MAX : xo->max_plot_bytes));
  return dump (json_pack ("{s:s, s:I, s:s, s:b, s:o}", "type", "execute", "id", (json_int_t) id, "code",
                          code, "print", xo->print, "plots", plots));
}

const char *
securer_plot_format_name (enum securer_plot_format f)
{
  static const char *const names[] = { "png", "svg", "none" };
  return (unsigned) f < sizeof names / sizeof names[0] ? names[f] : "?";
}

int
securer_plot_format_parse (const char *name)
{
  for (int f = SECURER_PLOT_PNG; name != NULL && f <= SECURER_PLOT_NONE; f++)
    if (strcmp (name, securer_plot_format_name ((enum securer_plot_format) f)) == 0)
      return f;
  return -1;
}

char *
securer_proto_parse_req (uint64_t id, const char *code)
{
  return dump (json_pack ("{s:s, s:I, s:s}", "type", "parse", "id", (json_int_t) id, "code", code));
}

char *
securer_proto_tool_result (uint64_t id, const json_t *value, const char *error)
{
  if (error != NULL)
    return dump (json_pack ("{s:s, s:I, s:s}", "type", "tool_result", "id", (json_int_t) id,
                            "error", error));
  return dump (json_pack ("{s:s, s:I, s:O}", "type", "tool_result", "id", (json_int_t) id, "value",
                          value ? value : json_null ()));
}
