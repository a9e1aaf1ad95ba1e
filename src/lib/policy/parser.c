/* Parser: one directive per logical line, applied to the builder as it is
 * read.  Every problem is reported with file:line:column and what was
 * expected; parsing goes on with the next line so that one run shows all
 * the errors of a file.  The grammar is documented in docs/policy.md. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "securer/paths.h"
#include "seccomp/seccomp.h"

struct incl {
  char *path;   /* as opened, for messages */
  char *id;     /* canonical path, for cycle detection */
};

struct parser {
  struct builder *b;
  struct securer_diags *diags;
  struct incl stack[POLICY_MAX_INCLUDE_DEPTH + 1];
  size_t depth;
  size_t files;
  char **syscall_names;   /* loaded on first need, for suggestions */
  char **group_names;
  bool names_loaded;
  bool group_names_loaded;
  struct securer_policy_deferred *defer;  /* rule lines are kept here, not resolved */
};

/* One directive being parsed. */
struct ctx {
  struct parser *ps;
  const char *file;
  struct line *ln;
  size_t i;       /* next token */
};

/* ---- reporting ------------------------------------------------------------ */

static void
error_at (struct ctx *c, const struct token *t, const char *hint, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

static void
error_at (struct ctx *c, const struct token *t, const char *hint, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  diag_addv (c->ps->diags, SECURER_DIAG_ERROR, c->file, t->line, t->col, hint, fmt, ap);
  va_end (ap);
}

/* Suggestion against a fixed list; the hint is malloc'd. */
static void
error_suggest (struct ctx *c, const struct token *t, const char *const *cands, size_t n,
               const char *fmt, ...) __attribute__ ((format (printf, 5, 6)));

static void
error_suggest (struct ctx *c, const struct token *t, const char *const *cands, size_t n,
               const char *fmt, ...)
{
  char *hint = diag_full (c->ps->diags) ? NULL : diag_suggest (t->text, cands, n);
  va_list ap;
  va_start (ap, fmt);
  diag_addv (c->ps->diags, SECURER_DIAG_ERROR, c->file, t->line, t->col, hint, fmt, ap);
  va_end (ap);
  free (hint);
}


/* The token after the last one, for "expected X" at the end of a line. */
static struct token
end_token (struct ctx *c)
{
  const struct token *last = &c->ln->tok[c->ln->n - 1];
  size_t len = strlen (last->text) + (last->quoted ? 2 : 0);
  struct token t = { (char *) "", last->line, last->col + (unsigned) (len > 0xffff ? 0xffff : len), false };
  return t;
}

static const struct token *
peek (struct ctx *c)
{
  return c->i < c->ln->n ? &c->ln->tok[c->i] : NULL;
}

static bool
is_kw (const struct token *t, const char *kw)
{
  return t != NULL && !t->quoted && strcmp (t->text, kw) == 0;
}

/* Next token, or an "expected WHAT after 'PREV'" error. */
static const struct token *
expect (struct ctx *c, const char *what)
{
  const struct token *t = peek (c);
  if (t != NULL)
    {
      c->i++;
      return t;
    }
  struct token e = end_token (c);
  error_at (c, &e, NULL, "expected %s after '%s'", what, c->ln->tok[c->ln->n - 1].text);
  return NULL;
}

/* Reports a word left over at the end of a directive.  Returns false when
 * there was one. */
static bool
expect_end (struct ctx *c)
{
  const struct token *t = peek (c);
  if (t == NULL)
    return true;
  error_at (c, t, NULL, "unexpected '%s': expected the end of the %s directive", t->text,
            c->ln->tok[0].text);
  return false;
}

static struct securer_loc
loc_of (struct ctx *c, const struct token *t)
{
  struct securer_loc l = { (char *) c->file, t->line, t->col };
  return l;
}

/* ---- numbers ---------------------------------------------------------------- */

int
parse_uint (const char *s, uint64_t *out)
{
  unsigned base = 10;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    {
      base = 16;
      s += 2;
    }
  else if (s[0] == '0' && s[1] != '\0')
    {
      base = 8;
      s += 1;
    }
  if (*s == '\0')
    return -1;
  uint64_t v = 0;
  for (; *s; s++)
    {
      unsigned d;
      if (*s >= '0' && *s <= '9')
        d = (unsigned) (*s - '0');
      else if (*s >= 'a' && *s <= 'f')
        d = (unsigned) (*s - 'a' + 10);
      else if (*s >= 'A' && *s <= 'F')
        d = (unsigned) (*s - 'A' + 10);
      else
        return -1;
      if (d >= base)
        return -1;
      if (v > (UINT64_MAX - d) / base)
        return -2;
      v = v * base + d;
    }
  *out = v;
  return 0;
}

/* Decimal digits followed by a unit; returns the unit in *unit. */
static int
split_number (const char *s, uint64_t *num, const char **unit)
{
  uint64_t v = 0;
  const char *p = s;
  if (!(*p >= '0' && *p <= '9'))
    return -1;
  for (; *p >= '0' && *p <= '9'; p++)
    {
      unsigned d = (unsigned) (*p - '0');
      if (v > (UINT64_MAX - d) / 10)
        return -2;
      v = v * 10 + d;
    }
  *num = v;
  *unit = p;
  return 0;
}

static int
mul_overflow (uint64_t a, uint64_t b, uint64_t *r)
{
  if (b != 0 && a > UINT64_MAX / b)
    return -1;
  *r = a * b;
  return 0;
}

struct unit {
  const char *name;
  uint64_t factor;
};

/* Decimal digits and one of `units`: 0 with *out = number * factor, -1
 * when s does not start with a digit, -2 when the result does not fit in
 * 64 bits, -3 when the unit is not in the table. */
static int
scaled_number (const char *s, const struct unit *units, size_t n_units, uint64_t *out,
               const char **unit)
{
  uint64_t n;
  int r = split_number (s, &n, unit);
  if (r < 0)
    return r;
  for (size_t i = 0; i < n_units; i++)
    if (strcmp (*unit, units[i].name) == 0)
      return mul_overflow (n, units[i].factor, out) < 0 ? -2 : 0;
  return -3;
}

/* Sizes: bytes, or K M G T (powers of 1024), also written KiB MiB GiB TiB. */
static bool
parse_size (struct ctx *c, const struct token *t, uint64_t *out)
{
  static const struct unit units[] = {
    { "", 1 }, { "B", 1 }, { "K", 1ULL << 10 }, { "KiB", 1ULL << 10 }, { "M", 1ULL << 20 },
    { "MiB", 1ULL << 20 }, { "G", 1ULL << 30 }, { "GiB", 1ULL << 30 }, { "T", 1ULL << 40 },
    { "TiB", 1ULL << 40 },
  };
  const char *unit = "";
  switch (scaled_number (t->text, units, sizeof units / sizeof *units, out, &unit))
    {
    case 0:
      return true;
    case -1:
      error_at (c, t, NULL, "expected a size such as 64M or 512KiB, got '%s'", t->text);
      return false;
    case -2:
      error_at (c, t, NULL, "size '%s' is too large", t->text);
      return false;
    default:
      error_at (c, t, "sizes take K, M, G or T (powers of 1024), or KiB, MiB, GiB, TiB",
                "unknown size unit '%s' in '%s'", unit, t->text);
      return false;
    }
}

/* Durations in milliseconds: ms, s, m, h; a bare number is seconds. */
static bool
parse_duration (struct ctx *c, const struct token *t, uint64_t *ms)
{
  static const struct unit units[] = {
    { "", 1000 }, { "s", 1000 }, { "ms", 1 }, { "m", 60000 }, { "h", 3600000 },
  };
  const char *unit = "";
  switch (scaled_number (t->text, units, sizeof units / sizeof *units, ms, &unit))
    {
    case 0:
      return true;
    case -1:
      error_at (c, t, NULL, "expected a duration such as 60s, 500ms or 5m, got '%s'", t->text);
      return false;
    case -2:
      error_at (c, t, NULL, "duration '%s' is too large", t->text);
      return false;
    default:
      error_at (c, t, "durations take ms, s, m or h", "unknown duration unit '%s' in '%s'", unit,
                t->text);
      return false;
    }
}

static bool
parse_count (struct ctx *c, const struct token *t, uint64_t max, uint64_t *out)
{
  uint64_t v;
  const char *unit;
  int r = split_number (t->text, &v, &unit);
  if (r == 0 && *unit == '\0' && v <= max)
    {
      *out = v;
      return true;
    }
  if ((r == 0 && *unit == '\0') || r == -2)
    error_at (c, t, NULL, "number '%s' is too large (at most %llu)", t->text,
              (unsigned long long) max);
  else
    error_at (c, t, NULL, "expected a number, got '%s'", t->text);
  return false;
}

static bool
parse_mode (struct ctx *c, const struct token *t, const char *v, uint32_t *mode)
{
  uint32_t m = 0;
  const char *p = v;
  if (*p == '\0')
    goto bad;
  for (; *p; p++)
    {
      if (*p < '0' || *p > '7')
        goto bad;
      m = m * 8 + (uint32_t) (*p - '0');
      if (m > 07777)
        goto bad;
    }
  *mode = m;
  return true;
bad:
  error_at (c, t, NULL, "expected an octal mode from 0 to 7777 such as 1777 or 0755, got '%s'", v);
  return false;
}

/* ---- directives --------------------------------------------------------------- */

static void parse_text (struct parser *ps, const char *file, const char *text, size_t len);

static char *
join_relative (const char *base_file, const char *rel)
{
  if (rel[0] == '/')
    return strdup (rel);
  const char *slash = strrchr (base_file, '/');
  char *r = NULL;
  if (slash == NULL)
    return strdup (rel);
  if (asprintf (&r, "%.*s/%s", (int) (slash - base_file), base_file, rel) < 0)
    return NULL;
  return r;
}

/* Finds and reads an included file.  An absolute name is read as is.  A
 * relative one is looked up next to the including file, then as
 * policies/NAME in each data directory (securer_data_dirs()), so a policy
 * kept anywhere can build on the shipped base/ pieces.  Only a missing
 * file moves the search on: a file that exists but cannot be read is an
 * error, never silently replaced by a shipped one.  On failure *err lists
 * every place searched. */
static int
read_include (const char *base_file, const char *name, char **path_out, char **buf, size_t *len,
              securer_err_t *err)
{
  char *path = join_relative (base_file, name);
  if (path == NULL)
    return securer_error_set (err, ENOMEM, "include %s", name);
  securer_err_t e = NULL;
  if (policy_read_file (path, buf, len, &e) == 0 || name[0] == '/'
      || securer_error_errno (e) != ENOENT)
    {
      if (e != NULL)
        {
          *err = e;
          free (path);
          return -1;
        }
      *path_out = path;
      return 0;
    }
  securer_error_free (&e);
  char *searched = path;
  /* A bare name ("r", "minimal") also names a shipped policy, as it does
   * for --policy: policies/NAME.policy, after policies/NAME. */
  bool bare = strchr (name, '/') == NULL && strchr (name, '.') == NULL;
  const char *const *d = securer_data_dirs ();
  /* Each directory in turn: NAME, then (bare names) NAME.policy. */
  for (int shipped = 0; *d != NULL; shipped = bare && !shipped, d += !shipped)
    {
      char *cand = NULL;
      if (asprintf (&cand, shipped ? "%s/policies/%s.policy" : "%s/policies/%s", *d, name) < 0)
        break;
      if (policy_read_file (cand, buf, len, &e) == 0)
        {
          free (searched);
          *path_out = cand;
          return 0;
        }
      if (securer_error_errno (e) != ENOENT)
        {
          free (searched);
          free (cand);
          *err = e;
          return -1;
        }
      securer_error_free (&e);
      char *more = NULL;
      if (asprintf (&more, "%s, %s", searched, cand) < 0)
        more = NULL;
      free (cand);
      if (more == NULL)
        break;
      free (searched);
      searched = more;
    }
  securer_error_set (err, 0, "not found (searched %s)", searched);
  free (searched);
  return -1;
}

/* Who a file is, for include cycles: its device and inode, one stat where
 * realpath reads a link per component of the path (six files of a shipped
 * policy cost thirty of them), and hard links count as the same file; the
 * path when there is nothing to stat (a reader serving files from memory). */
static char *
canonical (const char *path)
{
  struct stat st;
  char *id = NULL;
  if (stat (path, &st) == 0)
    return asprintf (&id, "@%ju:%ju", (uintmax_t) st.st_dev, (uintmax_t) st.st_ino) < 0 ? NULL : id;
  char *r = realpath (path, NULL);
  return r ? r : strdup (path);
}

static void
d_include (struct ctx *c)
{
  const struct token *t = expect (c, "a file name in quotes");
  if (t == NULL || !expect_end (c))
    return;
  struct parser *ps = c->ps;
  if (t->text[0] == '\0')
    {
      error_at (c, t, NULL, "expected a file name to include, got an empty string");
      return;
    }
  if (ps->depth >= POLICY_MAX_INCLUDE_DEPTH)
    {
      error_at (c, t, NULL, "includes nested too deeply (more than %d levels)",
                POLICY_MAX_INCLUDE_DEPTH);
      return;
    }
  if (ps->files >= POLICY_MAX_FILES)
    {
      error_at (c, t, NULL, "too many included files (more than %d)", POLICY_MAX_FILES);
      return;
    }
  char *path = NULL, *buf = NULL;
  size_t len = 0;
  securer_err_t err = NULL;
  if (read_include (c->file, t->text, &path, &buf, &len, &err) < 0)
    {
      error_at (c, t, NULL, "cannot include '%s': %s", t->text, securer_error_message (err));
      securer_error_free (&err);
      return;
    }
  char *id = canonical (path);
  if (id == NULL)
    {
      free (path);
      free (buf);
      error_at (c, t, NULL, "out of memory");
      return;
    }
  for (size_t k = 0; k < ps->depth; k++)
    if (strcmp (ps->stack[k].id, id) == 0)
      {
        /* Name the whole cycle so the user sees which include closes it. */
        size_t clen = 0;
        for (size_t j = k; j < ps->depth; j++)
          clen += strlen (ps->stack[j].path) + 4;
        clen += strlen (path) + 1;
        char *chain = malloc (clen);
        if (chain != NULL)
          {
            chain[0] = '\0';
            for (size_t j = k; j < ps->depth; j++)
              {
                strcat (chain, ps->stack[j].path);
                strcat (chain, " -> ");
              }
            strcat (chain, path);
          }
        error_at (c, t, NULL, "include cycle: %s", chain ? chain : path);
        free (chain);
        free (path);
        free (id);
        free (buf);
        return;
      }
  size_t k = 0;
  while (k < len && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\n' || buf[k] == '\r'))
    k++;
  if (k < len && buf[k] == '{')
    {
      error_at (c, t, NULL, "cannot include '%s': it is a JSON policy; only policy text can be included",
                t->text);
      free (buf);
      free (path);
      free (id);
      return;
    }
  ps->files++;
  builder_note_include (ps->b, path);
  ps->stack[ps->depth].path = path;
  ps->stack[ps->depth].id = id;
  ps->depth++;
  parse_text (ps, path, buf, len);
  ps->depth--;
  free (buf);
  free (path);
  free (id);
}

static void
d_namespaces (struct ctx *c)
{
  static const char *const cands[] = { "user", "pid", "mount", "net", "uts", "ipc", "cgroup", "all", "none" };
  unsigned ns = 0;
  bool ok = true, any = false;
  const struct token *t;
  while ((t = peek (c)) != NULL)
    {
      c->i++;
      any = true;
      if (is_kw (t, "all"))
        {
          ns |= SECURER_NS_ALL;
          continue;
        }
      if (is_kw (t, "none"))
        continue;
      unsigned k;
      for (k = 0; k < 7; k++)
        if (is_kw (t, policy_ns_names[k]))
          break;
      if (k == 7)
        {
          error_suggest (c, t, cands, 9,
                         "unknown namespace '%s': expected user, pid, mount, net, uts, ipc, cgroup, all or none",
                         t->text);
          ok = false;
          continue;
        }
      ns |= 1u << k;
    }
  if (!any)
    {
      struct token e = end_token (c);
      error_at (c, &e, NULL, "expected namespace names (user pid mount net uts ipc cgroup), 'all' or 'none' after 'namespaces'");
      return;
    }
  if (!ok)
    return;
  builder_policy (c->ps->b)->namespaces = ns;
  builder_mark (c->ps->b, SET_NAMESPACES, c->file, c->ln->line, c->ln->col);
}

static void
d_hostname (struct ctx *c)
{
  const struct token *t = expect (c, "a host name");
  if (t == NULL || !expect_end (c))
    return;
  const char *why = check_hostname (t->text);
  if (why)
    {
      error_at (c, t, NULL, "invalid host name '%s': expected %s", t->text, why);
      return;
    }
  struct securer_policy *p = builder_policy (c->ps->b);
  char *h = strdup (t->text);
  if (h == NULL)
    return;
  free (p->hostname);
  p->hostname = h;
  builder_mark (c->ps->b, SET_HOSTNAME, c->file, c->ln->line, c->ln->col);
}

/* uid N [host=N|caller|pool] and gid likewise. */
static void
d_id (struct ctx *c)
{
  bool is_uid = strcmp (c->ln->tok[0].text, "uid") == 0;
  const struct token *t = expect (c, is_uid ? "a user id" : "a group id");
  if (t == NULL)
    return;
  uint64_t v;
  if (!parse_count (c, t, 4294967294u, &v))
    return;
  int64_t host = SECURER_HOST_CALLER;
  const struct token *o = peek (c);
  if (o != NULL)
    {
      c->i++;
      if (o->quoted || strncmp (o->text, "host=", 5) != 0)
        {
          error_at (c, o, NULL, "unexpected '%s': expected host=ID, host=caller or host=pool", o->text);
          return;
        }
      const char *hv = o->text + 5;
      uint64_t h;
      if (strcmp (hv, "pool") == 0)
        host = SECURER_HOST_POOL;
      else if (strcmp (hv, "caller") != 0)
        {
          const char *unit;
          if (split_number (hv, &h, &unit) != 0 || *unit != '\0' || h > 4294967294u)
            {
              error_at (c, o, NULL, "expected host=ID (a number below 4294967295), host=caller or host=pool, got '%s'",
                        o->text);
              return;
            }
          if (h == 0)
            {
              /* The launcher refuses it too; say so where it is written. */
              error_at (c, o, NULL, "host=0 would make the sandbox host root: expected another id, "
                        "host=caller or host=pool");
              return;
            }
          host = (int64_t) h;
        }
    }
  if (!expect_end (c))
    return;
  struct securer_policy *p = builder_policy (c->ps->b);
  if (is_uid)
    {
      p->uid = (uint32_t) v;
      p->host_uid = host;
    }
  else
    {
      p->gid = (uint32_t) v;
      p->host_gid = host;
    }
}

static bool
abs_path_ok (struct ctx *c, const struct token *t, const char *what)
{
  const char *why = check_abs_path (t->text);
  if (why == NULL)
    return true;
  error_at (c, t, NULL, "invalid %s '%s': expected %s", what, t->text, why);
  return false;
}

static void
d_cwd (struct ctx *c)
{
  const struct token *t = expect (c, "a directory");
  if (t == NULL || !expect_end (c) || !abs_path_ok (c, t, "directory"))
    return;
  struct securer_policy *p = builder_policy (c->ps->b);
  char *s = strdup (t->text);
  if (s == NULL)
    return;
  free (p->cwd);
  p->cwd = s;
}

/* The mode line's location, and a warning when this file said another. */
static void
set_network_mode (struct ctx *c, enum securer_net_mode m)
{
  const char *pf;
  unsigned pl, pc;
  struct securer_policy *p = builder_policy (c->ps->b);
  enum securer_net_mode old = p->network;
  /* Two lines of one file that disagree are a mistake (an include
   * overridden is layering); only the second one is applied. */
  if (builder_marked (c->ps->b, SET_NETWORK, &pf, &pl, &pc) && pf && c->file && strcmp (pf, c->file) == 0
      && old != m)
    diag_add (c->ps->diags, SECURER_DIAG_WARNING, c->file, c->ln->line, c->ln->col, NULL,
              "network %s replaces network %s at %s:%u:%u", policy_net_name (m), policy_net_name (old), pf, pl, pc);
  if (m != SECURER_NET_ALLOW)
    {
      /* A mode replaces an allowlist; deny rules stay (they only narrow). */
      size_t k = 0;
      for (size_t i = 0; i < p->n_net_rules; i++)
        if (p->net_rules[i].deny)
          p->net_rules[k++] = p->net_rules[i];
        else
          securer_net_rule_clear (&p->net_rules[i]);
      p->n_net_rules = k;
    }
  p->network = m;
  builder_mark (c->ps->b, SET_NETWORK, c->file, c->ln->line, c->ln->col);
}

/* network allow|deny WORD… */
static void
d_network_rules (struct ctx *c, bool deny)
{
  struct securer_policy *p = builder_policy (c->ps->b);
  if (peek (c) == NULL)
    {
      expect (c, "host names, *.DOMAIN wildcards or addresses, each with an optional :PORT");
      return;
    }
  const struct token *t;
  bool ok = true;
  while ((t = peek (c)) != NULL)
    {
      c->i++;
      struct securer_net_rule r;
      const char *why;
      if (securer_net_rule_parse (t->text, deny, &r, &why) < 0)
        {
          error_at (c, t, NULL, "invalid network %s entry '%s': %s", deny ? "deny" : "allow", t->text, why);
          ok = false;
          continue;
        }
      bool dup = false;
      for (size_t i = 0; i < p->n_net_rules && !dup; i++)
        {
          const struct securer_net_rule *o = &p->net_rules[i];
          dup = o->deny == r.deny && o->kind == r.kind && o->port_lo == r.port_lo && o->port_hi == r.port_hi
                && (r.kind == SECURER_NET_RULE_ADDR
                      ? o->family == r.family && o->prefix == r.prefix && memcmp (o->addr, r.addr, 16) == 0
                      : strcmp (o->host, r.host) == 0);
        }
      if (dup)
        {
          securer_net_rule_clear (&r);
          continue;
        }
      if (p->n_net_rules >= POLICY_MAX_ITEMS)
        {
          securer_net_rule_clear (&r);
          error_at (c, t, NULL, "too many network rules (at most %d)", POLICY_MAX_ITEMS);
          return;
        }
      struct securer_net_rule *n = realloc (p->net_rules, (p->n_net_rules + 1) * sizeof *n);
      if (n == NULL)
        {
          securer_net_rule_clear (&r);
          return;
        }
      p->net_rules = n;
      p->net_rules[p->n_net_rules++] = r;
    }
  if (ok && !deny && p->network != SECURER_NET_ALLOW)
    set_network_mode (c, SECURER_NET_ALLOW);
}

/* network limit connections N | bytes SIZE|unlimited | idle DURATION */
static void
d_network_limit (struct ctx *c)
{
  static const char *const names[] = { "connections", "bytes", "idle" };
  const struct token *n = expect (c, "connections, bytes or idle");
  if (n == NULL)
    return;
  int k = -1;
  for (int i = 0; i < 3; i++)
    if (is_kw (n, names[i]))
      k = i;
  if (k < 0)
    {
      error_suggest (c, n, names, 3, "unknown network limit '%s': expected connections, bytes or idle", n->text);
      return;
    }
  const struct token *v = expect (c, k == 0 ? "a number of connections" : k == 1 ? "a size" : "a duration");
  if (v == NULL || !expect_end (c))
    return;
  struct securer_net_limits *l = &builder_policy (c->ps->b)->net_limits;
  uint64_t x;
  if (k == 0)
    {
      if (!parse_count (c, v, SECURER_NET_MAX_CONNECTIONS, &x))
        return;
      if (x == 0)
        {
          error_at (c, v, NULL, "the proxy needs at least 1 connection (say 'network none' for none)");
          return;
        }
      l->connections = (uint32_t) x;
    }
  else if (k == 1)
    {
      if (is_kw (v, "unlimited"))
        x = UINT64_MAX;
      else if (!parse_size (c, v, &x))
        return;
      else if (x < 1024)
        {
          error_at (c, v, NULL, "a byte budget below 1K leaves nothing to send: got '%s'", v->text);
          return;
        }
      l->bytes = x;
    }
  else
    {
      if (!parse_duration (c, v, &x))
        return;
      if (x < 1000)
        {
          error_at (c, v, NULL, "an idle time below 1s closes connections while they wait for an answer: got "
                    "'%s'", v->text);
          return;
        }
      l->idle_ms = x;
    }
}

static void
d_network (struct ctx *c)
{
  static const char *const cands[] = { "none", "loopback", "host", "allow", "deny", "limit" };
  const struct token *t = expect (c, "none, loopback, host, allow, deny or limit");
  if (t == NULL)
    return;
  if (is_kw (t, "allow") || is_kw (t, "deny"))
    {
      d_network_rules (c, is_kw (t, "deny"));
      return;
    }
  if (is_kw (t, "limit"))
    {
      d_network_limit (c);
      return;
    }
  enum securer_net_mode m;
  if (t->quoted || policy_net_lookup (t->text, &m) < 0 || m == SECURER_NET_ALLOW)
    {
      error_suggest (c, t, cands, 6, "unknown network mode '%s': expected none, loopback, host, allow, deny or limit",
                     t->text);
      return;
    }
  if (!expect_end (c))
    return;
  set_network_mode (c, m);
}

/* session template auto|on|off */
static void
d_session (struct ctx *c)
{
  static const char *const settings[] = { "template" };
  const struct token *t = expect (c, "template");
  if (t == NULL)
    return;
  if (!is_kw (t, "template"))
    {
      error_suggest (c, t, settings, 1, "unknown session setting '%s': expected template", t->text);
      return;
    }
  const struct token *v = expect (c, "auto, on or off");
  if (v == NULL)
    return;
  int m = v->quoted ? -1 : securer_session_template_parse (v->text);
  if (m < 0)
    {
      error_suggest (c, v, policy_session_template_names, 3,
                     "unknown session template mode '%s': expected auto, on or off", v->text);
      return;
    }
  if (!expect_end (c))
    return;
  builder_policy (c->ps->b)->session_template = (enum securer_session_template) m;
}

static bool
is_tmp_like (const char *dest)
{
  return strcmp (dest, "/tmp") == 0 || strcmp (dest, "/var/tmp") == 0
         || strcmp (dest, "/dev/shm") == 0;
}

static void
d_mount (struct ctx *c)
{
  static const char *const kinds[] = { "ro", "rw", "tmpfs", "proc", "dev", "dir", "symlink" };
  const struct token *kt = expect (c, "a mount type (ro, rw, tmpfs, proc, dev, dir or symlink)");
  if (kt == NULL)
    return;
  char kind[16];
  bool optional = false;
  size_t kl = strlen (kt->text);
  if (kl > 0 && kt->text[kl - 1] == '?')
    {
      optional = true;
      kl--;
    }
  snprintf (kind, sizeof kind, "%.*s", (int) (kl < sizeof kind ? kl : sizeof kind - 1), kt->text);
  enum securer_mount_type type;
  if (kt->quoted || kl >= sizeof kind || policy_mount_type_lookup (kind, &type) < 0)
    {
      struct token tk = *kt;
      tk.text = kind;
      error_suggest (c, &tk, kinds, 7,
                     "unknown mount type '%s': expected ro, rw, tmpfs, proc, dev, dir or symlink",
                     kt->text);
      return;
    }
  if (optional && type != SECURER_MOUNT_RO && type != SECURER_MOUNT_RW)
    {
      error_at (c, kt, NULL, "'?' (skip when the source is missing) applies to ro and rw mounts only");
      return;
    }

  struct securer_mount m;
  memset (&m, 0, sizeof m);
  m.type = type;
  m.optional = optional;
  m.mode = 0755;
  m.noexec = type == SECURER_MOUNT_RW || type == SECURER_MOUNT_TMPFS || type == SECURER_MOUNT_PROC
             || type == SECURER_MOUNT_DEV;
  const char *src = NULL, *dest = NULL;
  const struct token *dest_tok = NULL;

  switch (type)
    {
    case SECURER_MOUNT_RO:
    case SECURER_MOUNT_RW:
      {
        const struct token *s = expect (c, "a host path");
        if (s == NULL || !abs_path_ok (c, s, "source path"))
          return;
        src = s->text;
        dest = s->text;
        dest_tok = s;
        const struct token *d = peek (c);
        if (d != NULL && (d->quoted || d->text[0] == '/'))
          {
            c->i++;
            dest = d->text;
            dest_tok = d;
          }
        break;
      }
    case SECURER_MOUNT_PROC:
    case SECURER_MOUNT_DEV:
      {
        const struct token *d = peek (c);
        dest = type == SECURER_MOUNT_PROC ? "/proc" : "/dev";
        dest_tok = kt;
        if (d != NULL && (d->quoted || (strncmp (d->text, "subset=", 7) != 0 && strcmp (d->text, "unmasked") != 0)))
          {
            c->i++;
            dest = d->text;
            dest_tok = d;
          }
        break;
      }
    case SECURER_MOUNT_SYMLINK:
      {
        const struct token *d = expect (c, "the link's path");
        if (d == NULL)
          return;
        dest = d->text;
        dest_tok = d;
        const struct token *arrow = expect (c, "'->'");
        if (arrow == NULL)
          return;
        if (!is_kw (arrow, "->"))
          {
            error_at (c, arrow, NULL, "expected '->' between the link and its target, got '%s'",
                      arrow->text);
            return;
          }
        const struct token *tt = expect (c, "the link's target");
        if (tt == NULL)
          return;
        const char *bad = check_link_target (tt->text);
        if (bad != NULL)
          {
            error_at (c, tt, NULL, "invalid link target '%s': expected %s", tt->text, bad);
            return;
          }
        src = tt->text;
        break;
      }
    default:
      {
        const struct token *d = expect (c, "a path inside the sandbox");
        if (d == NULL)
          return;
        dest = d->text;
        dest_tok = d;
        break;
      }
    }
  const char *why = check_abs_path (dest);
  if (why != NULL)
    {
      error_at (c, dest_tok, NULL, "invalid mount point '%s': expected %s", dest, why);
      return;
    }
  if (type == SECURER_MOUNT_TMPFS && is_tmp_like (dest))
    m.mode = 01777;

  /* Options. */
  bool seen_size = false, seen_mode = false, seen_exec = false, seen_subset = false, seen_unmasked = false;
  const struct token *o;
  while ((o = peek (c)) != NULL)
    {
      c->i++;
      bool exec_opt = is_kw (o, "exec") || is_kw (o, "noexec");
      if (exec_opt && (type == SECURER_MOUNT_RO || type == SECURER_MOUNT_RW || type == SECURER_MOUNT_TMPFS))
        {
          if (seen_exec)
            {
              error_at (c, o, NULL, "exec/noexec given twice");
              return;
            }
          seen_exec = true;
          m.noexec = is_kw (o, "noexec");
          continue;
        }
      if (!o->quoted && strncmp (o->text, "size=", 5) == 0 && type == SECURER_MOUNT_TMPFS)
        {
          if (seen_size)
            {
              error_at (c, o, NULL, "size given twice");
              return;
            }
          seen_size = true;
          struct token v = *o;
          v.text = o->text + 5;
          v.col += 5;
          if (!parse_size (c, &v, &m.size))
            return;
          continue;
        }
      if (!o->quoted && strncmp (o->text, "mode=", 5) == 0
          && (type == SECURER_MOUNT_TMPFS || type == SECURER_MOUNT_DIR))
        {
          if (seen_mode)
            {
              error_at (c, o, NULL, "mode given twice");
              return;
            }
          seen_mode = true;
          struct token v = *o;
          v.col += 5;
          if (!parse_mode (c, &v, o->text + 5, &m.mode))
            return;
          continue;
        }
      if (!o->quoted && strncmp (o->text, "subset=", 7) == 0 && type == SECURER_MOUNT_PROC)
        {
          if (seen_subset)
            {
              error_at (c, o, NULL, "subset given twice");
              return;
            }
          seen_subset = true;
          if (strcmp (o->text + 7, "pid") != 0)
            {
              error_at (c, o, NULL, "unknown proc subset '%s': expected subset=pid", o->text + 7);
              return;
            }
          m.pid_only = true;
          continue;
        }
      if (is_kw (o, "unmasked") && type == SECURER_MOUNT_PROC)
        {
          if (seen_unmasked)
            {
              error_at (c, o, NULL, "unmasked given twice");
              return;
            }
          seen_unmasked = true;
          m.unmasked = true;
          continue;
        }
      const char *allowed;
      switch (type)
        {
        case SECURER_MOUNT_RO:
        case SECURER_MOUNT_RW: allowed = "a mount point, exec or noexec"; break;
        case SECURER_MOUNT_TMPFS: allowed = "size=SIZE, mode=MODE, exec or noexec"; break;
        case SECURER_MOUNT_DIR: allowed = "mode=MODE"; break;
        case SECURER_MOUNT_PROC: allowed = "subset=pid or unmasked"; break;
        default: allowed = "the end of the line"; break;
        }
      error_at (c, o, NULL, "unexpected '%s' in mount %s: expected %s", o->text, kind, allowed);
      return;
    }

  if (m.pid_only && m.unmasked)
    {
      error_at (c, dest_tok, "a subset=pid procfs has no host-wide entry to show or hide",
                "subset=pid and unmasked cannot go together");
      return;
    }
  m.dest = strdup (dest);
  m.source = src ? strdup (src) : NULL;
  m.loc.file = loc_file_dup (c->file);
  m.loc.line = c->ln->line;
  m.loc.col = c->ln->col;
  if (m.dest == NULL || (src && m.source == NULL) || m.loc.file == NULL)
    {
      free (m.dest);
      free (m.source);
      free (m.loc.file);
      return;
    }
  builder_add_mount (c->ps->b, &m);
}

/* The rest of the line: absolute paths added to the list *v (mask, exec).
 * Returns false when there was none. */
static bool
path_list (struct ctx *c, const char *expected, const char *what, const char *too_many, char ***v,
           size_t *n)
{
  if (peek (c) == NULL)
    {
      expect (c, expected);
      return false;
    }
  const struct token *t;
  while ((t = peek (c)) != NULL)
    {
      c->i++;
      if (!abs_path_ok (c, t, what))
        continue;
      if (builder_add_str (c->ps->b, v, n, t->text) < 0)
        error_at (c, t, NULL, "too many %s (more than %d)", too_many, POLICY_MAX_ITEMS);
    }
  return true;
}

static void
d_mask (struct ctx *c)
{
  struct securer_policy *p = builder_policy (c->ps->b);
  path_list (c, "a path to hide", "path", "masked paths", &p->masks, &p->n_masks);
}

static bool
parse_limit_value (struct ctx *c, const struct token *t, const char *text, int kind, uint64_t *v)
{
  struct token x = *t;
  x.text = (char *) text;
  if (strcmp (text, "unlimited") == 0 && !t->quoted)
    {
      *v = UINT64_MAX;
      return true;
    }
  if (kind == 'd')
    {
      uint64_t ms;
      if (!parse_duration (c, &x, &ms))
        return false;
      if (ms % 1000 != 0)
        {
          error_at (c, &x, NULL, "the cpu limit counts whole seconds, got '%s'", text);
          return false;
        }
      *v = ms / 1000;
      return true;
    }
  if (kind == 's')
    return parse_size (c, &x, v);
  return parse_count (c, &x, UINT64_MAX - 1, v);
}

static void
d_limit (struct ctx *c)
{
  static const char *const names[] = { "cpu", "as", "fsize", "nproc", "nofile", "stack", "core",
                                       "memlock", "sigpending", "timeout", "ptys" };
  const struct token *nt = expect (c, "a limit name (cpu, as, fsize, nproc, nofile, stack, core, memlock, sigpending, timeout or ptys)");
  if (nt == NULL)
    return;
  enum securer_rlimit_id id = SECURER_RLIMIT_COUNT;
  bool timeout = is_kw (nt, "timeout"), ptys = is_kw (nt, "ptys");
  if (!timeout && !ptys && (nt->quoted || policy_rlimit_lookup (nt->text, &id) < 0))
    {
      error_suggest (c, nt, names, 11,
                     "unknown limit '%s': expected cpu, as, fsize, nproc, nofile, stack, core, memlock, "
                     "sigpending, timeout or ptys",
                     nt->text);
      return;
    }
  const struct token *vt = expect (c, timeout ? "a duration" : ptys ? "a number of ptys" : "a value");
  if (vt == NULL || !expect_end (c))
    return;
  struct securer_limits *l = &builder_policy (c->ps->b)->limits;
  if (ptys)
    {
      /* No `unlimited`: the kernel's pool is shared by every sandbox, and a
       * devpts max= of 0 would mean no cap at all, not none. */
      uint64_t n;
      if (is_kw (vt, "unlimited"))
        error_at (c, vt, NULL, "limit ptys takes a number, 0 to %u (0: no pty at all)", SECURER_PTYS_MAX);
      else if (parse_count (c, vt, SECURER_PTYS_MAX, &n))
        {
          l->ptys_set = true;
          l->ptys = (uint32_t) n;
        }
      return;
    }
  if (timeout)
    {
      uint64_t ms;
      if (is_kw (vt, "unlimited"))
        ms = 0;
      else if (!parse_duration (c, vt, &ms))
        return;
      l->timeout_ms = ms;
      return;
    }
  int kind = id == SECURER_RLIMIT_CPU ? 'd'
             : policy_rlimit_is_count (id) ? 'n' : 's';
  /* SOFT:HARD, or one value for both. */
  char *colon = strchr (vt->text, ':');
  uint64_t soft, hard;
  if (colon == NULL)
    {
      if (!parse_limit_value (c, vt, vt->text, kind, &soft))
        return;
      hard = soft;
    }
  else
    {
      char *s = strndup (vt->text, (size_t) (colon - vt->text));
      if (s == NULL)
        return;
      bool ok = parse_limit_value (c, vt, s, kind, &soft);
      free (s);
      if (!ok)
        return;
      struct token h = *vt;
      h.col += (unsigned) (colon - vt->text) + 1;
      if (!parse_limit_value (c, &h, colon + 1, kind, &hard))
        return;
      if (soft > hard)
        {
          error_at (c, vt, NULL, "soft limit '%s' is above the hard limit", vt->text);
          return;
        }
    }
  /* ld.so maps libc in one go: /bin/true needs some 2M of address space,
   * and a program below 4M fails before main (only a static one runs). */
  if (id == SECURER_RLIMIT_AS && soft < POLICY_MIN_AS)
    diag_add (c->ps->diags, SECURER_DIAG_WARNING, c->file, vt->line, vt->col,
              NULL,
              "limit as %s is too small to start a dynamically linked program: the minimum is 4M", vt->text);
  l->rlimit[id].set = true;
  l->rlimit[id].soft = soft;
  l->rlimit[id].hard = hard;
}

/* CPUs as a decimal (1.5) or a percentage (150%) → thousandths. */
static bool
parse_cpus (struct ctx *c, const struct token *t, uint32_t *millis)
{
  const char *s = t->text;
  uint64_t whole = 0, frac = 0;
  unsigned nfrac = 0;
  const char *p = s;
  if (!(*p >= '0' && *p <= '9'))
    goto bad;
  for (; *p >= '0' && *p <= '9'; p++)
    {
      whole = whole * 10 + (uint64_t) (*p - '0');
      if (whole > 100000)
        goto big;
    }
  if (*p == '%')
    {
      if (p[1] != '\0')
        goto bad;
      if (whole == 0)
        goto zero;
      *millis = (uint32_t) (whole * 10);
      return true;
    }
  if (*p == '.')
    {
      p++;
      if (!(*p >= '0' && *p <= '9'))
        goto bad;
      for (; *p >= '0' && *p <= '9'; p++)
        {
          if (nfrac == 3)
            {
              error_at (c, t, NULL, "cpu share '%s' is finer than 0.001 CPU", s);
              return false;
            }
          frac = frac * 10 + (uint64_t) (*p - '0');
          nfrac++;
        }
    }
  if (*p != '\0')
    goto bad;
  while (nfrac < 3)
    {
      frac *= 10;
      nfrac++;
    }
  if (whole > 4096)
    goto big;
  if (whole == 0 && frac == 0)
    goto zero;
  *millis = (uint32_t) (whole * 1000 + frac);
  return true;
bad:
  error_at (c, t, NULL, "expected CPUs such as 0.5, 2 or 150%%, got '%s'", s);
  return false;
big:
  error_at (c, t, NULL, "cpu share '%s' is too large (at most 4096 CPUs)", s);
  return false;
zero:
  error_at (c, t, NULL, "cpu share must be above 0 (leave it out for no limit)");
  return false;
}

static void
d_cgroup (struct ctx *c)
{
  static const char *const words[] = { "memory", "pids", "cpu", "required", "best-effort", "off" };
  const struct token *t = expect (c, "memory, pids, cpu, required, best-effort or off");
  if (t == NULL)
    return;
  struct securer_limits *l = &builder_policy (c->ps->b)->limits;
  enum securer_enforce e;
  if (!t->quoted && policy_enforce_lookup (t->text, &e) == 0)
    {
      if (!expect_end (c))
        return;
      l->cgroup = e;
      builder_mark (c->ps->b, SET_CGROUP_MODE, c->file, c->ln->line, c->ln->col);
      return;
    }
  bool mem = is_kw (t, "memory"), pids = is_kw (t, "pids"), cpu = is_kw (t, "cpu");
  if (!mem && !pids && !cpu)
    {
      error_suggest (c, t, words, 6,
                     "unknown cgroup setting '%s': expected memory, pids, cpu, required, best-effort or off",
                     t->text);
      return;
    }
  const struct token *v = expect (c, mem ? "a size" : pids ? "a number of processes" : "a number of CPUs");
  if (v == NULL || !expect_end (c))
    return;
  if (is_kw (v, "unlimited"))
    {
      if (mem)
        l->cgroup_memory = 0;
      else if (pids)
        l->cgroup_pids = 0;
      else
        l->cgroup_cpu_millis = 0;
      return;
    }
  uint64_t x;
  if (mem)
    {
      if (!parse_size (c, v, &x))
        return;
      if (x == 0)
        {
          error_at (c, v, NULL, "cgroup memory must be above 0 (say 'unlimited' for no limit)");
          return;
        }
      /* The sandbox's own setup is charged to the cgroup: below this it is
       * killed before the command starts (measured: 64K fails, 1M runs
       * /bin/true). */
      if (x < POLICY_MIN_CGROUP_MEMORY)
        {
          error_at (c, v, NULL,
                    "cgroup memory %s is too small to start the sandbox: the minimum is 1M", v->text);
          return;
        }
      l->cgroup_memory = x;
    }
  else if (pids)
    {
      if (!parse_count (c, v, UINT32_MAX, &x))
        return;
      if (x == 0)
        {
          error_at (c, v, NULL, "cgroup pids must be above 0 (say 'unlimited' for no limit)");
          return;
        }
      l->cgroup_pids = x;
    }
  else
    parse_cpus (c, v, &l->cgroup_cpu_millis);
}

static void
d_env (struct ctx *c)
{
  static const char *const words[] = { "keep", "set", "unset" };
  const struct token *t = expect (c, "keep, set or unset");
  if (t == NULL)
    return;
  bool keep = is_kw (t, "keep"), set = is_kw (t, "set"), unset = is_kw (t, "unset");
  if (!keep && !set && !unset)
    {
      error_suggest (c, t, words, 3, "unknown env action '%s': expected keep, set or unset", t->text);
      return;
    }
  if (peek (c) == NULL)
    {
      expect (c, set ? "NAME=VALUE" : "variable names");
      return;
    }
  struct builder *b = c->ps->b;
  struct securer_policy *p = builder_policy (b);
  const struct token *v;
  while ((v = peek (c)) != NULL)
    {
      c->i++;
      char *name = NULL;
      const char *value = NULL;
      if (set)
        {
          const char *eq = strchr (v->text, '=');
          if (eq == NULL)
            {
              error_at (c, v, NULL, "expected NAME=VALUE, got '%s'", v->text);
              continue;
            }
          name = strndup (v->text, (size_t) (eq - v->text));
          value = eq + 1;
        }
      else
        name = strdup (v->text);
      if (name == NULL)
        return;
      const char *why = check_env_name (name);
      if (why)
        error_at (c, v, NULL, "invalid variable name '%s': expected %s", name, why);
      else if (set && check_env_value (value) != NULL)
        error_at (c, v, NULL, "value of %s is too long: expected %s", name, check_env_value (value));
      else if (set)
        {
          if (builder_env_set (b, name, value) < 0)
            error_at (c, v, NULL, "too many environment variables (more than %d)", POLICY_MAX_ITEMS);
        }
      else if (keep)
        {
          if (builder_add_str (b, &p->env_keep, &p->n_env_keep, name) < 0)
            error_at (c, v, NULL, "too many environment variables (more than %d)", POLICY_MAX_ITEMS);
        }
      else
        builder_env_unset (b, name);
      free (name);
    }
}

static void
d_exec (struct ctx *c)
{
  struct securer_policy *p = builder_policy (c->ps->b);
  if (path_list (c, "paths that may be executed", "executable path", "exec paths", &p->exec,
                 &p->n_exec))
    p->exec_restricted = true;
}

static void
d_landlock (struct ctx *c)
{
  static const char *const words[] = { "off", "best-effort", "required", "scope", "tcp-bind",
                                       "tcp-connect" };
  const struct token *t = expect (c, "off, best-effort, required, scope, tcp-bind or tcp-connect");
  if (t == NULL)
    return;
  struct securer_policy *p = builder_policy (c->ps->b);
  enum securer_enforce e;
  if (!t->quoted && policy_enforce_lookup (t->text, &e) == 0)
    {
      if (!expect_end (c))
        return;
      p->landlock.mode = e;
      builder_mark (c->ps->b, SET_LANDLOCK, c->file, c->ln->line, c->ln->col);
      return;
    }
  if (is_kw (t, "scope"))
    {
      static const char *const scopes[] = { "abstract-unix", "signal", "none" };
      bool au = false, sig = false, ok = true;
      if (peek (c) == NULL)
        {
          expect (c, "abstract-unix, signal or none");
          return;
        }
      const struct token *s;
      while ((s = peek (c)) != NULL)
        {
          c->i++;
          if (is_kw (s, "abstract-unix"))
            au = true;
          else if (is_kw (s, "signal"))
            sig = true;
          else if (!is_kw (s, "none"))
            {
              error_suggest (c, s, scopes, 3,
                             "unknown landlock scope '%s': expected abstract-unix, signal or none", s->text);
              ok = false;
            }
        }
      if (ok)
        {
          p->landlock.scope_abstract_unix = au;
          p->landlock.scope_signal = sig;
        }
      return;
    }
  bool bind = is_kw (t, "tcp-bind"), conn = is_kw (t, "tcp-connect");
  if (!bind && !conn)
    {
      error_suggest (c, t, words, 6,
                     "unknown landlock setting '%s': expected off, best-effort, required, scope, tcp-bind or tcp-connect",
                     t->text);
      return;
    }
  if (peek (c) == NULL)
    {
      expect (c, "port numbers");
      return;
    }
  const struct token *pt;
  while ((pt = peek (c)) != NULL)
    {
      c->i++;
      uint64_t port;
      if (!parse_count (c, pt, 65535, &port))
        continue;
      int r = bind ? builder_add_port (c->ps->b, &p->landlock.tcp_bind, &p->landlock.n_tcp_bind, (uint16_t) port)
                   : builder_add_port (c->ps->b, &p->landlock.tcp_connect, &p->landlock.n_tcp_connect,
                                       (uint16_t) port);
      if (r < 0)
        error_at (c, pt, NULL, "too many ports (more than %d)", POLICY_MAX_ITEMS);
    }
}

/* ---- seccomp ------------------------------------------------------------------ */

static const char *const action_words[] = { "allow", "errno", "deny", "kill", "kill-process",
                                            "kill-thread", "trap", "log", "notify" };

/* ACTION, where errno takes a name or number.  `deny` means errno EPERM. */
static bool
parse_action (struct ctx *c, struct securer_action *a, const char *const *extra, size_t n_extra)
{
  const struct token *t = expect (c, "an action");
  if (t == NULL)
    return false;
  a->errnum = 0;
  if (is_kw (t, "deny"))
    {
      a->type = SECURER_ACT_ERRNO;
      a->errnum = EPERM;
      return true;
    }
  if (t->quoted || policy_action_lookup (t->text, &a->type) < 0)
    {
      const char *cands[16];
      size_t n = 0;
      for (size_t k = 0; k < sizeof action_words / sizeof *action_words; k++)
        cands[n++] = action_words[k];
      for (size_t k = 0; k < n_extra && n < 16; k++)
        cands[n++] = extra[k];
      error_suggest (c, t, cands, n,
                     "unknown seccomp action '%s': expected allow, errno, deny, kill, kill-process, "
                     "kill-thread, trap, log or notify%s",
                     t->text, n_extra ? ", or default, foreign-abi, on or off" : "");
      return false;
    }
  if (a->type != SECURER_ACT_ERRNO)
    return true;
  const struct token *e = expect (c, "an errno name or number");
  if (e == NULL)
    return false;
  uint64_t v;
  const char *unit;
  if (e->text[0] >= '0' && e->text[0] <= '9')
    {
      if (split_number (e->text, &v, &unit) != 0 || *unit != '\0' || v > 4095)
        {
          error_at (c, e, NULL, "expected an errno number from 0 to 4095, got '%s'", e->text);
          return false;
        }
      a->errnum = (int) v;
      return true;
    }
  int en;
  if (e->quoted || securer_errno_lookup (e->text, &en) < 0)
    {
      const char *const *names = securer_errno_names ();
      error_suggest (c, e, names, strv_len (names), "unknown errno name '%s': expected a name such as EPERM or ENOSYS",
                     e->text);
      return false;
    }
  a->errnum = en;
  return true;
}

/* Condition tokens, split out of the words after `if`. */
enum ctok_kind { CT_WORD, CT_OP, CT_END };

struct ctok {
  enum ctok_kind kind;
  bool quoted;
  char text[128];
  unsigned line, col;
};

struct cond_lexer {
  struct ctx *c;
  size_t wi;        /* word index */
  size_t off;       /* offset in the word */
  bool bad;
};

static void
cl_next (struct cond_lexer *cl, struct ctok *out)
{
  struct ctx *c = cl->c;
  for (;;)
    {
      if (cl->wi >= c->ln->n)
        {
          struct token e = end_token (c);
          out->kind = CT_END;
          out->text[0] = '\0';
          out->line = e.line;
          out->col = e.col;
          return;
        }
      const struct token *w = &c->ln->tok[cl->wi];
      const char *s = w->text + cl->off;
      if (*s == '\0')
        {
          cl->wi++;
          cl->off = 0;
          continue;
        }
      out->line = w->line;
      out->col = w->col + (unsigned) cl->off;
      out->quoted = false;
      if (w->quoted)
        {
          /* Conditions are numbers, names and operators: nothing to quote. */
          out->kind = CT_WORD;
          out->quoted = true;
          snprintf (out->text, sizeof out->text, "\"%s\"", w->text);
          cl->wi++;
          cl->off = 0;
          return;
        }
      static const char *const ops[] = { "==", "!=", "<=", ">=", "&&", "<", ">", "&", "|", "=" };
      for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        {
          size_t ol = strlen (ops[k]);
          if (strncmp (s, ops[k], ol) == 0)
            {
              out->kind = CT_OP;
              memcpy (out->text, ops[k], ol + 1);
              cl->off += ol;
              return;
            }
        }
      size_t n = 0;
      while (s[n] && !strchr ("=!<>&|", s[n]))
        n++;
      if (n == 0)
        {
          /* A lone '!' */
          n = 1;
        }
      out->kind = CT_WORD;
      snprintf (out->text, sizeof out->text, "%.*s", (int) (n < sizeof out->text ? n : sizeof out->text - 1), s);
      if (n >= sizeof out->text)
        out->text[sizeof out->text - 1] = '\0';
      cl->off += n;
      return;
    }
}

static void
cerr (struct cond_lexer *cl, const struct ctok *t, const char *hint, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

static void
cerr (struct cond_lexer *cl, const struct ctok *t, const char *hint, const char *fmt, ...)
{
  if (cl->bad)
    return;
  cl->bad = true;
  va_list ap;
  va_start (ap, fmt);
  diag_addv (cl->c->ps->diags, SECURER_DIAG_ERROR, cl->c->file, t->line, t->col, hint, fmt, ap);
  va_end (ap);
}

static const char *
ctok_desc (const struct ctok *t)
{
  return t->kind == CT_END ? "the end of the line" : t->text;
}

/* VALUE := TERM ('|' TERM)*, TERM := number | -number | CONSTANT */
static bool
parse_value (struct cond_lexer *cl, struct ctok *t, uint64_t *out)
{
  uint64_t v = 0;
  for (int terms = 0;; terms++)
    {
      if (terms >= POLICY_MAX_VALUE_TERMS)
        {
          cerr (cl, t, NULL, "too many terms in one value (more than %d)", POLICY_MAX_VALUE_TERMS);
          return false;
        }
      if (t->kind != CT_WORD || t->quoted)
        {
          cerr (cl, t, NULL, "expected a number or a constant such as AF_UNIX, got '%s'", ctok_desc (t));
          return false;
        }
      uint64_t x;
      const char *s = t->text;
      bool neg = s[0] == '-';
      if (neg)
        s++;
      if (s[0] >= '0' && s[0] <= '9')
        {
          int r = parse_uint (s, &x);
          if (r == -2)
            {
              cerr (cl, t, NULL, "number '%s' does not fit in 64 bits", t->text);
              return false;
            }
          if (r < 0)
            {
              cerr (cl, t, NULL, "invalid number '%s'", t->text);
              return false;
            }
          if (neg)
            x = (uint64_t) 0 - x;
        }
      else if (neg || securer_const_lookup (s, &x) < 0)
        {
          const char *const *names = securer_const_names ();
          struct token tk = { t->text, t->line, t->col, false };
          char *hint = diag_full (cl->c->ps->diags) ? NULL : diag_suggest (tk.text, names, strv_len (names));
          cerr (cl, t, hint, "unknown constant '%s'", t->text);
          free (hint);
          return false;
        }
      v |= x;
      cl_next (cl, t);
      if (!(t->kind == CT_OP && strcmp (t->text, "|") == 0))
        break;
      cl_next (cl, t);
    }
  *out = v;
  return true;
}

static bool
parse_conditions (struct ctx *c, struct securer_arg_cond *conds, unsigned *n_conds)
{
  struct cond_lexer cl = { c, c->i, 0, false };
  struct ctok t;
  cl_next (&cl, &t);
  if (t.kind == CT_END)
    {
      cerr (&cl, &t, NULL, "expected a condition such as 'arg0 == AF_UNIX' after 'if'");
      return false;
    }
  unsigned n = 0;
  for (;;)
    {
      if (t.kind != CT_WORD || strncmp (t.text, "arg", 3) != 0 || t.text[3] < '0' || t.text[3] > '5'
          || t.text[4] != '\0')
        {
          cerr (&cl, &t, NULL, "expected an argument arg0 to arg5, got '%s'", ctok_desc (&t));
          return false;
        }
      if (n == SECURER_MAX_ARG_CONDS)
        {
          cerr (&cl, &t, NULL, "too many conditions (at most %d)", SECURER_MAX_ARG_CONDS);
          return false;
        }
      struct securer_arg_cond *cd = &conds[n];
      memset (cd, 0, sizeof *cd);
      cd->arg = (unsigned) (t.text[3] - '0');
      cl_next (&cl, &t);
      bool masked = false;
      if (t.kind == CT_OP && strcmp (t.text, "&") == 0)
        {
          cl_next (&cl, &t);
          if (!parse_value (&cl, &t, &cd->mask))
            return false;
          masked = true;
        }
      struct ctok op = t;
      static const struct { const char *s; enum securer_cmp c; } cmps[] = {
        { "==", SECURER_CMP_EQ }, { "!=", SECURER_CMP_NE }, { "<", SECURER_CMP_LT },
        { "<=", SECURER_CMP_LE }, { ">", SECURER_CMP_GT }, { ">=", SECURER_CMP_GE },
      };
      size_t k;
      for (k = 0; k < sizeof cmps / sizeof *cmps; k++)
        if (op.kind == CT_OP && strcmp (op.text, cmps[k].s) == 0)
          break;
      if (k == sizeof cmps / sizeof *cmps)
        {
          cerr (&cl, &op, strcmp (op.text, "=") == 0 ? "write '==' to compare" : NULL,
                "expected a comparison (==, !=, <, <=, >, >=)%s, got '%s'",
                masked ? "" : " or '&'", ctok_desc (&op));
          return false;
        }
      if (masked && cmps[k].c != SECURER_CMP_EQ)
        {
          cerr (&cl, &op, NULL, "a masked comparison 'argN & MASK' takes '==' only, got '%s'", op.text);
          return false;
        }
      cd->op = masked ? SECURER_CMP_MASKED_EQ : cmps[k].c;
      cl_next (&cl, &t);
      struct ctok vt = t;
      if (!parse_value (&cl, &t, &cd->value))
        return false;
      if (masked && (cd->value & ~cd->mask) != 0)
        {
          cerr (&cl, &vt, NULL, "value has bits outside the mask, so the condition can never hold");
          return false;
        }
      n++;
      if (t.kind == CT_END)
        break;
      if (!((t.kind == CT_WORD && strcmp (t.text, "and") == 0)
            || (t.kind == CT_OP && strcmp (t.text, "&&") == 0)))
        {
          cerr (&cl, &t, NULL, "expected 'and' or the end of the line after a condition, got '%s'", t.text);
          return false;
        }
      cl_next (&cl, &t);
    }
  *n_conds = n;
  c->i = c->ln->n;
  return true;
}

/* Group names are needed for every @group reference; the syscall names
 * (thousands of libseccomp look-ups) only to suggest a fix for a typo. */
static void
load_group_names (struct parser *ps)
{
  if (ps->group_names_loaded)
    return;
  ps->group_names_loaded = true;
  ps->group_names = securer_group_names ();
}

static void
load_names (struct parser *ps)
{
  load_group_names (ps);
  if (ps->names_loaded)
    return;
  ps->names_loaded = true;
  ps->syscall_names = securer_syscall_names ();
}

static bool
group_exists (struct parser *ps, const char *name)
{
  load_group_names (ps);
  for (size_t i = 0; ps->group_names && ps->group_names[i]; i++)
    if (strcmp (ps->group_names[i], name) == 0)
      return true;
  return false;
}

static void seccomp_rules (struct ctx *c);

static void
d_seccomp (struct ctx *c)
{
  struct builder *b = c->ps->b;
  struct securer_policy *p = builder_policy (b);
  const struct token *t = peek (c);
  builder_mark (b, SET_SECCOMP, c->file, c->ln->line, c->ln->col);
  if (t == NULL)
    {
      expect (c, "an action, default, foreign-abi, on or off");
      return;
    }
  if (is_kw (t, "off") || is_kw (t, "on"))
    {
      c->i++;
      if (expect_end (c))
        p->seccomp.enabled = is_kw (t, "on");
      return;
    }
  if (is_kw (t, "default") || is_kw (t, "foreign-abi"))
    {
      c->i++;
      struct securer_action a;
      if (!parse_action (c, &a, NULL, 0) || !expect_end (c))
        return;
      if (is_kw (t, "default"))
        {
          p->seccomp.default_action = a;
          builder_mark (b, SET_SECCOMP_DEFAULT, c->file, c->ln->line, c->ln->col);
        }
      else
        p->seccomp.foreign_arch = a;
      return;
    }
  if (c->ps->defer != NULL)
    {
      if (policy_defer_line (c->ps->defer, c->file, c->ln, c->ps->diags->n) < 0)
        error_at (c, t, NULL, "out of memory");
      return;
    }
  seccomp_rules (c);
}

/* `seccomp ACTION NAMES... [if CONDITIONS]`, the words after `seccomp`. */
static void
seccomp_rules (struct ctx *c)
{
  static const char *const extra[] = { "default", "foreign-abi", "on", "off" };
  struct builder *b = c->ps->b;
  struct securer_action a;
  if (!parse_action (c, &a, extra, 4))
    return;
  size_t first = c->i, last = c->i;
  while (last < c->ln->n && !is_kw (&c->ln->tok[last], "if"))
    last++;
  if (first == last)
    {
      struct token e = last < c->ln->n ? c->ln->tok[last] : end_token (c);
      error_at (c, &e, NULL, "expected syscall names or @groups after '%s'", c->ln->tok[first - 1].text);
      return;
    }
  struct securer_arg_cond conds[SECURER_MAX_ARG_CONDS];
  unsigned n_conds = 0;
  if (last < c->ln->n)
    {
      c->i = last + 1;
      if (!parse_conditions (c, conds, &n_conds))
        return;
    }
  for (size_t k = first; k < last; k++)
    {
      const struct token *tt = &c->ln->tok[k];
      struct securer_loc loc = loc_of (c, tt);
      if (tt->text[0] == '@')
        {
          const char *g = tt->text + 1;
          char **members = NULL;
          size_t n = 0;
          char *why = NULL;
          if (tt->quoted || !group_exists (c->ps, g))
            {
              char *hint = NULL;
              if (c->ps->group_names && !diag_full (c->ps->diags))
                {
                  struct token x = *tt;
                  x.text = (char *) g;
                  char *h = diag_suggest (x.text, (const char *const *) c->ps->group_names,
                                          strv_len ((const char *const *) c->ps->group_names));
                  if (h != NULL)
                    {
                      /* Suggest with the '@' the user has to write. */
                      const char *q = strchr (h, '\'');
                      if (q && asprintf (&hint, "did you mean '@%s", q + 1) < 0)
                        hint = NULL;
                      free (h);
                    }
                }
              error_at (c, tt, hint, "unknown syscall group '%s'", tt->text);
              free (hint);
              continue;
            }
          if (builder_group (b, g, &members, &n, &why) < 0)
            {
              error_at (c, tt, NULL, "cannot load syscall group '%s': %s", tt->text,
                        why ? why : "out of memory");
              continue;
            }
          for (size_t m = 0; m < n; m++)
            if (builder_add_rule (b, members[m], tt->text, &a, conds, n_conds, &loc) < 0)
              return;
          continue;
        }
      if (tt->quoted || !securer_syscall_known (tt->text))
        {
          if (!diag_full (c->ps->diags))
            load_names (c->ps);
          const char *const *names = (const char *const *) c->ps->syscall_names;
          error_suggest (c, tt, names, strv_len (names), "unknown syscall '%s'", tt->text);
          continue;
        }
      if (builder_add_rule (b, tt->text, NULL, &a, conds, n_conds, &loc) < 0)
        return;
    }
}

/* ---- driver --------------------------------------------------------------------- */

struct directive {
  const char *name;
  void (*fn) (struct ctx *c);
};

static const struct directive directives[] = {
  { "include", d_include }, { "namespaces", d_namespaces }, { "hostname", d_hostname },
  { "uid", d_id }, { "gid", d_id }, { "cwd", d_cwd }, { "network", d_network },
  { "mount", d_mount }, { "mask", d_mask }, { "limit", d_limit }, { "cgroup", d_cgroup },
  { "env", d_env }, { "exec", d_exec }, { "landlock", d_landlock }, { "seccomp", d_seccomp },
  { "session", d_session },
};
#define N_DIRECTIVES (sizeof directives / sizeof *directives)

static void
parse_text (struct parser *ps, const char *file, const char *text, size_t len)
{
  struct lexer lx;
  lexer_init (&lx, file, text, len, ps->diags);
  struct line ln;
  while (lexer_next (&lx, &ln) > 0)
    {
      struct ctx c = { ps, file, &ln, 1 };
      const struct token *t = &ln.tok[0];
      const struct directive *d = NULL;
      for (size_t k = 0; k < N_DIRECTIVES && !t->quoted; k++)
        if (strcmp (directives[k].name, t->text) == 0)
          d = &directives[k];
      if (d == NULL)
        {
          const char *names[N_DIRECTIVES];
          for (size_t k = 0; k < N_DIRECTIVES; k++)
            names[k] = directives[k].name;
          error_suggest (&c, t, names, N_DIRECTIVES, "unknown directive '%s'", t->text);
        }
      else
        d->fn (&c);
      line_clear (&ln);
    }
}

int
policy_parse (const char *name, const char *text, size_t len, unsigned flags,
              struct securer_policy **out, struct securer_diags *diags)
{
  struct parser ps;
  memset (&ps, 0, sizeof ps);
  ps.diags = diags;
  ps.b = builder_new (diags);
  if ((flags & SECURER_POLICY_DEFER_SECCOMP) && ps.b != NULL
      && (ps.defer = policy_deferred_new (name)) == NULL)
    {
      builder_free (ps.b);
      ps.b = NULL;
    }
  if (ps.b == NULL)
    {
      diag_add (diags, SECURER_DIAG_ERROR, name, 0, 0, NULL, "out of memory");
      return -1;
    }
  size_t errors = diags->n_errors;
  ps.stack[0].path = strdup (name);
  ps.stack[0].id = canonical (name);
  ps.depth = 1;
  ps.files = 1;
  struct securer_policy *p = builder_policy (ps.b);
  p->path = strdup (name);
  builder_note_include (ps.b, name);
  if (ps.stack[0].path && ps.stack[0].id && p->path)
    parse_text (&ps, name, text, len);
  else
    diag_add (diags, SECURER_DIAG_ERROR, name, 0, 0, NULL, "out of memory");
  bool pending = false;
  if (ps.defer != NULL)
    pending = policy_defer_finish (ps.defer, ps.b, diags, errors) == 1;
  else
    builder_finish (ps.b, name);
  free (ps.stack[0].path);
  free (ps.stack[0].id);
  securer_strv_free (ps.syscall_names);
  securer_strv_free (ps.group_names);
  if (diags->n_errors > errors)
    {
      builder_free (ps.b);
      policy_deferred_free (ps.defer);
      return -1;
    }
  *out = builder_take (ps.b);
  if (pending)
    {
      ps.defer->b = ps.b;
      (*out)->deferred = ps.defer;
    }
  else
    {
      builder_free (ps.b);
      policy_deferred_free (ps.defer);
    }
  return 0;
}

void
policy_apply_deferred (struct securer_policy_deferred *df, struct builder *b,
                       struct securer_diags *diags, size_t *starts)
{
  struct parser ps;
  memset (&ps, 0, sizeof ps);
  ps.b = b;
  ps.diags = diags;
  for (size_t k = 0; k < df->n; k++)
    {
      starts[k] = diags->n;
      struct ctx c = { &ps, df->lines[k].file, &df->lines[k].ln, 1 };
      seccomp_rules (&c);
    }
  securer_strv_free (ps.syscall_names);
  securer_strv_free (ps.group_names);
}

int
policy_read_include (const char *base_file, const char *name, char **path_out, char **buf, size_t *len,
                     securer_err_t *err)
{
  return read_include (base_file, name, path_out, buf, len, err);
}
