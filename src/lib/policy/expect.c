/* Calls written by hand and expectations about them; see expect.h.
 *
 * Expectation files use the policy lexer (same comments, quotes and line
 * continuations) and the policy's diagnostics, so a malformed line is
 * reported as file:line:col with a suggestion, as in a policy. */
#include <config.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "internal.h"
#include "linux/view.h"
#include "seccomp/seccomp.h"

#ifndef AUDIT_ARCH_I386
#define AUDIT_ARCH_I386 0x40000003u
#endif
#ifndef AUDIT_ARCH_X86_64
#define AUDIT_ARCH_X86_64 0xc000003eu
#endif

/* Problems go to diags (a file) or, for command-line words, to the first
 * one only, in *err. */
struct sink {
  const char *file;
  struct securer_diags *diags;
  securer_err_t *err;
  bool failed;
};

static void report (struct sink *s, const struct token *t, const char *hint, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

static void
report (struct sink *s, const struct token *t, const char *hint, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  s->failed = true;
  if (s->diags != NULL)
    diag_addv (s->diags, SECURER_DIAG_ERROR, s->file, t->line, t->col, hint, fmt, ap);
  else if (s->err != NULL && *s->err == NULL)
    {
      char *msg = NULL;
      if (vasprintf (&msg, fmt, ap) < 0)
        msg = NULL;
      if (hint != NULL)
        securer_error_set (s->err, 0, "%s (%s)", msg ? msg : "out of memory", hint);
      else
        securer_error_set (s->err, 0, "%s", msg ? msg : "out of memory");
      free (msg);
    }
  va_end (ap);
}


/* TERM := number | -number | CONSTANT | TERM<<number */
static bool
parse_term (struct sink *s, const struct token *t, const char *text, uint64_t *out)
{
  char buf[256];
  snprintf (buf, sizeof buf, "%s", text);
  char *shift = strstr (buf, "<<");
  uint64_t by = 0;
  if (shift != NULL)
    {
      *shift = '\0';
      if (parse_uint (shift + 2, &by) < 0 || by > 63)
        {
          report (s, t, NULL, "expected a shift from 0 to 63 after '<<', got '%s'", shift + 2);
          return false;
        }
    }
  const char *v = buf;
  bool neg = v[0] == '-';
  if (neg)
    v++;
  uint64_t x;
  if (v[0] >= '0' && v[0] <= '9')
    {
      if (parse_uint (v, &x) < 0)
        {
          report (s, t, NULL, "invalid number '%s'", buf);
          return false;
        }
      if (neg)
        x = (uint64_t) 0 - x;
    }
  else if (neg || v[0] == '\0' || securer_const_lookup (v, &x) < 0)
    {
      const char *const *names = securer_const_names ();
      char *hint = v[0] ? diag_suggest (v, names, strv_len (names)) : NULL;
      report (s, t, hint, "unknown constant '%s'", buf);
      free (hint);
      return false;
    }
  *out = x << by;
  return true;
}

/* VALUE := '*' | TERM ('|' TERM)* */
static bool
parse_arg (struct sink *s, const struct token *t, uint64_t *out, bool *wild)
{
  *wild = false;
  *out = 0;
  if (!t->quoted && strcmp (t->text, "*") == 0)
    {
      *wild = true;
      return true;
    }
  const char *p = t->text;
  for (;;)
    {
      const char *bar = strchr (p, '|');
      size_t len = bar ? (size_t) (bar - p) : strlen (p);
      if (len == 0 || len > 200)
        {
          report (s, t, NULL, "expected a number, a constant such as AF_UNIX or '*', got '%s'", t->text);
          return false;
        }
      char term[256];
      snprintf (term, sizeof term, "%.*s", (int) len, p);
      uint64_t x;
      if (!parse_term (s, t, term, &x))
        return false;
      *out |= x;
      if (bar == NULL)
        return true;
      p = bar + 1;
    }
}

struct abi {
  const char *name;
  uint32_t scmp_arch;
  uint32_t audit_arch;
  bool foreign;   /* the filter gives it the foreign-ABI action */
};

/* The ABIs the filter sees: the native one first (the default), then those
 * it refuses as foreign; on x86_64, i386 through int 0x80 and x32. */
static const struct abi abis[] = {
#if defined(__x86_64__)
  { "x86_64", SCMP_ARCH_X86_64, AUDIT_ARCH_X86_64, false },
  { "i386", SCMP_ARCH_X86, AUDIT_ARCH_I386, true },
  { "x32", SCMP_ARCH_X32, AUDIT_ARCH_X86_64, true },
#else
  { "native", SCMP_ARCH_NATIVE, 0, false },
#endif
};

static bool
parse_call (struct sink *s, const struct token *tok, size_t n, struct securer_call *c)
{
  memset (c, 0, sizeof *c);
  const struct abi *abi = &abis[0];
  size_t i = 0;
  for (size_t k = 0; k < sizeof abis / sizeof abis[0]; k++)
    if (n > 1 && !tok[0].quoted && strcmp (tok[0].text, abis[k].name) == 0)
      {
        abi = &abis[k];
        i = 1;
      }
  if (i >= n)
    {
      report (s, &tok[n - 1], NULL, "expected a syscall name after '%s'", tok[n - 1].text);
      return false;
    }
  const struct token *st = &tok[i++];
  c->abi = strdup (abi->name);
  c->name = strdup (st->text);
  if (c->abi == NULL || c->name == NULL)
    {
      report (s, st, NULL, "out of memory");
      return false;
    }
  c->arch = abi->audit_arch;
  c->foreign = abi->foreign;
  uint64_t num;
  if (st->text[0] >= '0' && st->text[0] <= '9')
    {
      /* A bare number: a call no name stands for (an unknown syscall). */
      if (parse_uint (st->text, &num) < 0 || num > 0x7fffffff)
        {
          report (s, st, NULL, "invalid syscall number '%s'", st->text);
          return false;
        }
      c->nr = (int) num | (abi->scmp_arch == SCMP_ARCH_X32 && num < 0x40000000u ? 0x40000000 : 0);
    }
  else
    {
      c->nr = seccomp_syscall_resolve_name_arch (abi->scmp_arch, st->text);
      if (c->nr == __NR_SCMP_ERROR || c->nr < 0)
        {
          char **names = securer_syscall_names ();
          char *hint = c->nr == __NR_SCMP_ERROR ? diag_suggest (st->text, (const char *const *) names,
                                                                strv_len ((const char *const *) names))
                                                : NULL;
          if (c->nr == __NR_SCMP_ERROR)
            report (s, st, hint, "unknown syscall '%s'", st->text);
          else
            report (s, st, NULL, "syscall '%s' does not exist on %s", st->text, abi->name);
          free (hint);
          securer_strv_free (names);
          return false;
        }
    }
  if (n - i > 6)
    {
      report (s, &tok[i + 6], NULL, "a syscall has at most six arguments, got '%s' as a seventh", tok[i + 6].text);
      return false;
    }
  c->wild = 0x3f;
  for (unsigned k = 0; i < n; i++, k++)
    {
      bool wild;
      if (!parse_arg (s, &tok[i], &c->args[k], &wild))
        return false;
      if (!wild)
        c->wild &= ~(1u << k);
    }
  return true;
}

void
securer_call_clear (struct securer_call *c)
{
  free (c->name);
  free (c->abi);
  memset (c, 0, sizeof *c);
}

int
securer_call_parse_words (char *const *words, size_t n, struct securer_call *out, securer_err_t *err)
{
  if (n == 0)
    return securer_error_set (err, EINVAL, "expected a syscall");
  struct token *tok = calloc (n, sizeof *tok);
  if (tok == NULL)
    return securer_error_set (err, ENOMEM, "parse the call");
  for (size_t i = 0; i < n; i++)
    tok[i] = (struct token) { words[i], 0, (unsigned) i + 1, false };
  struct sink s = { NULL, NULL, err, false };
  bool ok = parse_call (&s, tok, n, out);
  free (tok);
  if (!ok)
    {
      securer_call_clear (out);
      if (*err == NULL)
        securer_error_set (err, EINVAL, "invalid call");
      return -1;
    }
  return 0;
}

/* ---- verdicts ----------------------------------------------------------- */

static const char *const verdict_words[] = { "allow", "errno", "deny", "kill", "kill-process",
                                             "kill-thread", "trap", "log", "notify" };

static bool
parse_verdict (struct sink *s, const struct token *tok, size_t n, struct securer_action *a)
{
  const struct token *t = &tok[0];
  a->errnum = 0;
  if (!t->quoted && strcmp (t->text, "deny") == 0)
    {
      a->type = SECURER_ACT_ERRNO;
      a->errnum = EPERM;
    }
  else if (t->quoted || policy_action_lookup (t->text, &a->type) < 0)
    {
      char *hint = diag_suggest (t->text, verdict_words, sizeof verdict_words / sizeof *verdict_words);
      report (s, t, hint, "unknown verdict '%s': expected allow, errno NAME, deny, kill-process, "
              "kill-thread, trap, log or notify", t->text);
      free (hint);
      return false;
    }
  size_t want = a->type == SECURER_ACT_ERRNO && a->errnum == 0 ? 2 : 1;
  if (want == 2 && n < 2)
    {
      report (s, t, NULL, "expected an errno name or number after 'errno'");
      return false;
    }
  if (want == 2)
    {
      const struct token *e = &tok[1];
      uint64_t v;
      if (e->text[0] >= '0' && e->text[0] <= '9')
        {
          if (parse_uint (e->text, &v) < 0 || v > 4095)
            {
              report (s, e, NULL, "expected an errno number from 0 to 4095, got '%s'", e->text);
              return false;
            }
          a->errnum = (int) v;
        }
      else if (securer_errno_lookup (e->text, &a->errnum) < 0)
        {
          const char *const *names = securer_errno_names ();
          char *hint = diag_suggest (e->text, names, strv_len (names));
          report (s, e, hint, "unknown errno name '%s'", e->text);
          free (hint);
          return false;
        }
    }
  if (n > want)
    {
      report (s, &tok[want], NULL, "unexpected '%s' after the verdict", tok[want].text);
      return false;
    }
  return true;
}

const char *
securer_verdict_text (struct securer_action a, char *buf, size_t size)
{
  if (a.type != SECURER_ACT_ERRNO)
    return securer_action_name (a.type);
  const char *name = securer_errno_name (a.errnum);
  if (name != NULL)
    snprintf (buf, size, "errno %s", name);
  else
    snprintf (buf, size, "errno %d", a.errnum);
  return buf;
}

char *
securer_call_text (const struct securer_call *c, const uint64_t args[6])
{
  char *s = NULL;
  bool native = !c->foreign;
  if (asprintf (&s, "%s%s%s(0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx)", native ? "" : c->abi,
                native ? "" : " ", c->name, (unsigned long long) args[0], (unsigned long long) args[1],
                (unsigned long long) args[2], (unsigned long long) args[3], (unsigned long long) args[4],
                (unsigned long long) args[5]) < 0)
    return NULL;
  return s;
}

/* ---- files -------------------------------------------------------------- */

static void
expectation_clear (struct securer_expectation *x)
{
  securer_call_clear (&x->call);
  free (x->text);
  free (x->path);
  free (x->value);
}

void
securer_expectations_clear (struct securer_expectations *e)
{
  for (size_t i = 0; i < e->n; i++)
    expectation_clear (&e->items[i]);
  free (e->items);
  free (e->file);
  memset (e, 0, sizeof *e);
}

static char *
join (const struct line *ln)
{
  size_t len = 1;
  for (size_t i = 0; i < ln->n; i++)
    len += strlen (ln->tok[i].text) + 1;
  char *s = malloc (len);
  if (s == NULL)
    return NULL;
  s[0] = '\0';
  for (size_t i = 0; i < ln->n; i++)
    {
      if (i)
        strcat (s, " ");
      strcat (s, ln->tok[i].text);
    }
  return s;
}

static const char *const net_words[] = { "none", "loopback", "host" };

static bool
parse_network (struct sink *s, const struct line *ln, struct securer_expectation *x)
{
  if (ln->n != 2)
    {
      report (s, &ln->tok[ln->n > 2 ? 2 : 0], NULL, "expected 'network none', 'network loopback' or 'network host'");
      return false;
    }
  for (unsigned k = 0; k < 3; k++)
    if (strcmp (ln->tok[1].text, net_words[k]) == 0)
      {
        x->network = (enum securer_net_mode) k;
        return true;
      }
  char *hint = diag_suggest (ln->tok[1].text, net_words, 3);
  report (s, &ln->tok[1], hint, "unknown network mode '%s': expected none, loopback or host", ln->tok[1].text);
  free (hint);
  return false;
}

/* `limit NAME VALUE` is read by the policy parser itself, so it means
 * exactly what it would in a policy; its diagnostics are moved to the
 * line and column of the expectation file. */
static bool
parse_limit (struct sink *s, const char *text, size_t text_len, const struct line *ln,
             struct securer_expectation *x)
{
  /* The text is not NUL-terminated: every search stays inside it. */
  const char *start = text, *end = text + text_len;
  for (unsigned l = 1; l < ln->line && start != NULL; l++)
    {
      start = memchr (start, '\n', (size_t) (end - start));
      if (start != NULL)
        start++;
    }
  if (start == NULL || ln->n < 2)
    {
      report (s, &ln->tok[0], NULL, "expected 'limit NAME VALUE' as in a policy");
      return false;
    }
  const char *nl = memchr (start, '\n', (size_t) (end - start));
  size_t len = nl ? (size_t) (nl - start) : (size_t) (end - start);
  char *mini = NULL;
  if (asprintf (&mini, "seccomp off\n%.*s\n", (int) len, start) < 0)
    return false;
  struct securer_diags d = { NULL, 0, 0 };
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  int r = securer_policy_load_string (s->file, mini, strlen (mini), &p, &d, &err);
  free (mini);
  for (size_t i = 0; i < d.n; i++)
    if (d.items[i].severity == SECURER_DIAG_ERROR)
      {
        struct token t = { NULL, ln->line, d.items[i].col, false };
        report (s, &t, d.items[i].hint, "%s", d.items[i].message);
      }
  if (r == 0)
    {
      x->limits = p->limits;
      x->limit = strcmp (ln->tok[1].text, "ptys") == 0 ? -2 : -1;
      for (int k = 0; k < SECURER_RLIMIT_COUNT; k++)
        if (strcmp (ln->tok[1].text, securer_rlimit_name ((enum securer_rlimit_id) k)) == 0)
          x->limit = k;
    }
  else if (d.n_errors == 0)
    report (s, &ln->tok[0], NULL, "%s", securer_error_message (err));
  securer_error_free (&err);
  securer_diags_free (&d);
  securer_policy_free (p);
  return r == 0;
}

/* Indexed by enum securer_view_kind, 0/1 and enum securer_env_state. */
static const char *const path_words[] = { "absent", "masked", "read-only", "writable" };
static const char *const exec_words[] = { "denied", "allowed" };
static const char *const env_words[] = { "absent", "kept", "set" };

/* WORD of `KEYWORD ARG -> WORD`, one of words (the index goes to *out). */
static bool
parse_outcome (struct sink *s, const struct line *ln, const char *shape, const char *const *words, size_t n_words,
               int *out)
{
  if (ln->n < 3 || ln->tok[2].quoted || strcmp (ln->tok[2].text, "->") != 0)
    {
      report (s, &ln->tok[ln->n < 3 ? ln->n - 1 : 2], NULL, "expected '%s'", shape);
      return false;
    }
  if (ln->n < 4)
    {
      report (s, &ln->tok[2], NULL, "expected '%s': a word after '->'", shape);
      return false;
    }
  if (ln->n > 4)
    {
      report (s, &ln->tok[4], NULL, "unexpected '%s' after '%s'", ln->tok[4].text, ln->tok[3].text);
      return false;
    }
  for (size_t k = 0; k < n_words; k++)
    if (!ln->tok[3].quoted && strcmp (ln->tok[3].text, words[k]) == 0)
      {
        *out = (int) k;
        return true;
      }
  char *hint = diag_suggest (ln->tok[3].text, words, n_words);
  report (s, &ln->tok[3], hint, "expected '%s', got '%s'", shape, ln->tok[3].text);
  free (hint);
  return false;
}

/* path PATH -> KIND | exec PATH -> allowed|denied */
static bool
parse_path (struct sink *s, const struct line *ln, struct securer_expectation *x)
{
  bool exec = x->kind == SECURER_EXPECT_EXEC;
  const char *shape = exec ? "exec PATH -> allowed|denied" : "path PATH -> writable|read-only|masked|absent";
  if (ln->n < 2)
    {
      report (s, &ln->tok[0], NULL, "expected '%s'", shape);
      return false;
    }
  const char *bad = check_abs_path (ln->tok[1].text);
  if (bad != NULL)
    {
      report (s, &ln->tok[1], NULL, "expected %s inside the sandbox, got '%s'", bad, ln->tok[1].text);
      return false;
    }
  if (!parse_outcome (s, ln, shape, exec ? exec_words : path_words, exec ? 2 : 4, &x->want))
    return false;
  x->path = strdup (ln->tok[1].text);
  return x->path != NULL;
}

/* net HOST[:PORT] -> allowed|denied: a destination, decided as the proxy
 * decides one the command asks for by that name or address. */
static bool
parse_net (struct sink *s, const struct line *ln, struct securer_expectation *x)
{
  static const char shape[] = "net HOST:PORT -> allowed|denied";
  if (ln->n < 2)
    {
      report (s, &ln->tok[0], NULL, "expected '%s'", shape);
      return false;
    }
  struct securer_net_rule r;
  const char *why = NULL;
  bool ok = securer_net_rule_parse (ln->tok[1].text, false, &r, &why) == 0;
  if (ok && (r.kind == SECURER_NET_RULE_SUFFIX || r.port_lo != r.port_hi
             || (r.kind == SECURER_NET_RULE_ADDR && r.prefix != (r.family == AF_INET ? 32 : 128))))
    why = "one host name or address and at most one port";
  if (!ok || why != NULL)
    {
      report (s, &ln->tok[1], NULL, "expected a destination (%s), got '%s'",
              why ? why : "a host name or address", ln->tok[1].text);
      if (ok)
        securer_net_rule_clear (&r);
      return false;
    }
  if (!parse_outcome (s, ln, shape, exec_words, 2, &x->want))
    {
      securer_net_rule_clear (&r);
      return false;
    }
  x->limit = r.port_lo != 0 ? r.port_lo : 443;
  if (r.kind == SECURER_NET_RULE_ADDR)
    {
      char a[INET6_ADDRSTRLEN] = "";
      inet_ntop (r.family, r.addr, a, sizeof a);
      x->path = strdup (a);
    }
  else
    {
      x->path = r.host;
      r.host = NULL;
    }
  securer_net_rule_clear (&r);
  return x->path != NULL;
}

/* env NAME=VALUE | env NAME -> set|kept|absent */
static bool
parse_env (struct sink *s, const struct line *ln, struct securer_expectation *x)
{
  static const char shape[] = "env NAME=VALUE' or 'env NAME -> set|kept|absent";
  if (ln->n < 2)
    {
      report (s, &ln->tok[0], NULL, "expected '%s'", shape);
      return false;
    }
  const char *eq = strchr (ln->tok[1].text, '=');
  size_t len = eq ? (size_t) (eq - ln->tok[1].text) : strlen (ln->tok[1].text);
  x->path = strndup (ln->tok[1].text, len);
  if (x->path == NULL)
    return false;
  const char *bad = check_env_name (x->path);
  if (bad != NULL)
    {
      report (s, &ln->tok[1], NULL, "expected %s, got '%s'", bad, x->path);
      return false;
    }
  if (eq == NULL)
    return parse_outcome (s, ln, shape, env_words, 3, &x->want);
  if (ln->n > 2)
    {
      report (s, &ln->tok[2], NULL, "unexpected '%s' after '%s'", ln->tok[2].text, ln->tok[1].text);
      return false;
    }
  x->want = SECURER_ENV_SET;
  x->value = strdup (eq + 1);
  return x->value != NULL;
}

static char *
mount_text (const struct securer_mount *m)
{
  char *s = NULL;
  const char *type = policy_mount_type_name (m->type);
  int r;
  if (m->loc.file != NULL)
    r = asprintf (&s, "`mount %s %s` at %s:%u:%u", type ? type : "?", m->dest, m->loc.file, m->loc.line,
                  m->loc.col);
  else
    r = asprintf (&s, "`mount %s %s`", type ? type : "?", m->dest);
  return r < 0 ? NULL : s;
}

static int
check_env (const struct securer_expectation *x, const struct securer_policy *p, char **actual, char **why)
{
  enum securer_env_state st = SECURER_ENV_ABSENT;
  const char *value = NULL;
  for (size_t i = 0; i < p->n_env_set; i++)
    if (strcmp (p->env_set[i].name, x->path) == 0)
      {
        st = SECURER_ENV_SET;
        value = p->env_set[i].value;
      }
  for (size_t i = 0; st == SECURER_ENV_ABSENT && i < p->n_env_keep; i++)
    if (strcmp (p->env_keep[i], x->path) == 0)
      st = SECURER_ENV_KEPT;
  int r;
  if (x->value != NULL && st == SECURER_ENV_SET)
    r = asprintf (actual, "%s=%s", x->path, value);
  else
    r = asprintf (actual, "%s", env_words[st]);
  if (r < 0)
    *actual = NULL;
  *why = strdup (st == SECURER_ENV_SET    ? "`env set` gives it this value"
                 : st == SECURER_ENV_KEPT ? "`env keep` passes the caller's value through"
                                          : "neither `env set` nor `env keep` names it");
  if (*actual == NULL || *why == NULL)
    return -1;
  return (int) st == x->want && (x->value == NULL || strcmp (x->value, value) == 0);
}

int
securer_expect_check_view (const struct securer_expectation *x, const struct securer_policy *p, char **actual,
                           char **why, securer_err_t *err)
{
  *actual = *why = NULL;
  if (x->kind == SECURER_EXPECT_ENV)
    {
      int r = check_env (x, p, actual, why);
      if (r < 0)
        securer_error_set (err, ENOMEM, "check %s", x->text);
      return r;
    }
  if (x->kind != SECURER_EXPECT_PATH && x->kind != SECURER_EXPECT_EXEC)
    return securer_error_set (err, EINVAL, "not a path, exec or env expectation");
  struct securer_view v;
  if (securer_view_path (p, x->path, &v, err) < 0)
    return -1;
  bool exec = x->kind == SECURER_EXPECT_EXEC;
  int got = exec ? (int) v.exec : (int) v.kind;
  char *mount = v.mount != NULL ? mount_text (v.mount) : NULL;
  bool moved = strcmp (v.resolved ? v.resolved : x->path, x->path) != 0;
  *actual = strdup (exec ? exec_words[got] : path_words[got]);
  if (asprintf (why, "%s%s%s%s%s%s", exec ? v.why_exec : v.why, mount ? ": " : "", mount ? mount : "",
                moved ? " (the policy's symlinks lead to " : "", moved ? v.resolved : "", moved ? ")" : "")
      < 0)
    *why = NULL;
  free (mount);
  securer_view_clear (&v);
  if (*actual == NULL || *why == NULL)
    return securer_error_set (err, ENOMEM, "check %s", x->text);
  return got == x->want;
}

bool
securer_expect_net_allowed (const struct securer_policy *p, const struct securer_expectation *x,
                            const char **why)
{
  if (p->network == SECURER_NET_HOST)
    {
      if (why)
        *why = "network host: the command has the host's network";
      return true;
    }
  if (p->network != SECURER_NET_ALLOW)
    {
      if (why)
        *why = p->network == SECURER_NET_NONE ? "network none" : "network loopback";
      return false;
    }
  enum securer_net_verdict v = securer_net_decide_name (p, x->path, (uint16_t) x->limit, NULL);
  if (why)
    *why = securer_net_verdict_text (v);
  return v == SECURER_NET_ALLOWED;
}

bool
securer_expect_setting_holds (const struct securer_expectation *x, const struct securer_policy *p)
{
  if (x->kind == SECURER_EXPECT_NETWORK)
    return p->network == x->network;
  if (x->kind == SECURER_EXPECT_NET)
    return securer_expect_net_allowed (p, x, NULL) == (x->want == 1);
  if (x->kind != SECURER_EXPECT_LIMIT)
    return false;
  if (x->limit == -2)
    return securer_policy_ptys (p) == (x->limits.ptys_set ? x->limits.ptys : SECURER_PTYS_DEFAULT);
  if (x->limit < 0)
    return p->limits.timeout_ms == x->limits.timeout_ms;
  const struct securer_rlimit *a = &p->limits.rlimit[x->limit], *b = &x->limits.rlimit[x->limit];
  return a->set == b->set && (!a->set || (a->soft == b->soft && a->hard == b->hard));
}

int
securer_expect_parse (const char *name, const char *text, size_t len,
                      struct securer_expectations *out, struct securer_diags *diags)
{
  memset (out, 0, sizeof *out);
  out->file = strdup (name);
  struct securer_diags local = { NULL, 0, 0 };
  struct sink s = { name, diags ? diags : &local, NULL, false };
  size_t errors_before = s.diags->n_errors;
  if (out->file == NULL)
    diag_add (s.diags, SECURER_DIAG_ERROR, name, 0, 0, NULL, "out of memory");
  struct lexer lx;
  lexer_init (&lx, name, text, len, s.diags);
  struct line ln;
  size_t cap = 0;
  while (lexer_next (&lx, &ln) == 1)
    {
      const char *first = ln.tok[0].quoted ? "" : ln.tok[0].text;
      static const struct { const char *word; enum securer_expect_kind kind; } settings[] = {
        { "network", SECURER_EXPECT_NETWORK }, { "limit", SECURER_EXPECT_LIMIT },
        { "path", SECURER_EXPECT_PATH },       { "exec", SECURER_EXPECT_EXEC },
        { "env", SECURER_EXPECT_ENV },         { "net", SECURER_EXPECT_NET },
      };
      size_t k = 0;
      while (k < sizeof settings / sizeof *settings && strcmp (first, settings[k].word) != 0)
        k++;
      if (k < sizeof settings / sizeof *settings)
        {
          struct securer_expectation x;
          memset (&x, 0, sizeof x);
          x.line = ln.line;
          x.col = ln.col;
          x.kind = settings[k].kind;
          bool ok = x.kind == SECURER_EXPECT_NETWORK ? parse_network (&s, &ln, &x)
                    : x.kind == SECURER_EXPECT_LIMIT ? parse_limit (&s, text, len, &ln, &x)
                    : x.kind == SECURER_EXPECT_ENV   ? parse_env (&s, &ln, &x)
                    : x.kind == SECURER_EXPECT_NET   ? parse_net (&s, &ln, &x)
                                                     : parse_path (&s, &ln, &x);
          if (ok && (x.text = join (&ln)) != NULL
              && grow ((void **) &out->items, &cap, out->n, sizeof *out->items) == 0)
            out->items[out->n++] = x;
          else
            expectation_clear (&x);
          line_clear (&ln);
          continue;
        }
      size_t arrow = 0;
      while (arrow < ln.n && (ln.tok[arrow].quoted || strcmp (ln.tok[arrow].text, "->") != 0))
        arrow++;
      if (arrow == ln.n || arrow == 0 || arrow + 1 == ln.n)
        {
          const struct token *t = arrow == ln.n ? &ln.tok[0] : &ln.tok[arrow];
          report (&s, t, NULL, arrow == ln.n ? "expected 'CALL -> VERDICT' such as 'openat -> allow'"
                                : arrow == 0 ? "expected a syscall before '->'"
                                             : "expected a verdict after '->'");
          line_clear (&ln);
          continue;
        }
      struct securer_expectation x;
      memset (&x, 0, sizeof x);
      x.line = ln.line;
      x.col = ln.col;
      if (!parse_call (&s, ln.tok, arrow, &x.call)
          || !parse_verdict (&s, ln.tok + arrow + 1, ln.n - arrow - 1, &x.verdict)
          || (x.text = join (&ln)) == NULL
          || grow ((void **) &out->items, &cap, out->n, sizeof *out->items) < 0)
        {
          expectation_clear (&x);
          line_clear (&ln);
          continue;
        }
      out->items[out->n++] = x;
      line_clear (&ln);
    }
  bool bad = s.diags->n_errors > errors_before;
  securer_diags_free (&local);
  return bad ? -1 : 0;
}

int
securer_expect_load_file (const char *path, struct securer_expectations *out, struct securer_diags *diags)
{
  char *buf = NULL;
  size_t len = 0;
  securer_err_t err = NULL;
  if (policy_read_file (path, &buf, &len, &err) < 0)
    {
      memset (out, 0, sizeof *out);
      diag_add (diags, SECURER_DIAG_ERROR, path, 0, 0, NULL, "%s", securer_error_message (err));
      securer_error_free (&err);
      return -1;
    }
  int r = securer_expect_parse (path, buf, len, out, diags);
  free (buf);
  return r;
}

/* ---- samples ------------------------------------------------------------ */

#define MAX_VALUES 48
#define MAX_PRODUCT 20000

struct values {
  uint64_t v[MAX_VALUES];
  unsigned n;
};

static void
values_add (struct values *vs, uint64_t v)
{
  for (unsigned i = 0; i < vs->n; i++)
    if (vs->v[i] == v)
      return;
  if (vs->n < MAX_VALUES)
    vs->v[vs->n++] = v;
}

struct region_ctx {
  const struct securer_call *c;
  securer_call_sample_cb cb;
  void *ctx;
  int stop;
};

static int
region_point (void *ctx, struct securer_action act, const uint64_t mask[6], const uint64_t value[6])
{
  (void) act;
  struct region_ctx *rc = ctx;
  if (rc->stop)
    return 0;
  uint64_t args[6];
  for (unsigned k = 0; k < 6; k++)
    {
      if (rc->c->wild & (1u << k))
        args[k] = value[k];
      else if ((rc->c->args[k] & mask[k]) != value[k])
        return 0;  /* the region does not hold the call's fixed arguments */
      else
        args[k] = rc->c->args[k];
    }
  rc->stop = rc->cb (rc->ctx, args);
  return 0;
}

int
securer_call_samples (const struct securer_seccomp_prog *prog, const struct securer_policy *p,
                      const struct securer_call *c, securer_call_sample_cb cb, void *ctx)
{
  bool native = !c->foreign;
  /* The plain call first, with 0 for every '*': the witness a report
   * shows when it is enough.  A foreign ABI is refused on the arch alone,
   * so its arguments never matter. */
  uint64_t plain[6];
  for (unsigned k = 0; k < 6; k++)
    plain[k] = c->wild & (1u << k) ? 0 : c->args[k];
  int first = cb (ctx, plain);
  if (first != 0 || !native || c->wild == 0)
    return first;
  static const uint64_t base[] = { 0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
                                   0xffffffff00000000ull, ~0ull };
  struct values vals[6];
  memset (vals, 0, sizeof vals);
  for (unsigned k = 0; k < 6; k++)
    {
      if (!(c->wild & (1u << k)))
        {
          values_add (&vals[k], c->args[k]);
          continue;
        }
      for (size_t b = 0; b < sizeof base / sizeof base[0]; b++)
        values_add (&vals[k], base[b]);
      for (size_t i = 0; i < p->seccomp.n_rules; i++)
        {
          const struct securer_syscall_rule *r = &p->seccomp.rules[i];
          if (strcmp (r->name, c->name) != 0)
            continue;
          for (unsigned j = 0; j < r->n_conds; j++)
            {
              const struct securer_arg_cond *cd = &r->conds[j];
              if (cd->arg != k)
                continue;
              uint64_t v = cd->value, m = cd->op == SECURER_CMP_MASKED_EQ ? cd->mask : ~0ull;
              values_add (&vals[k], v);
              values_add (&vals[k], v - 1);
              values_add (&vals[k], v + 1);
              values_add (&vals[k], v | (1ull << 32));
              values_add (&vals[k], v | ~m);
              values_add (&vals[k], m);
              values_add (&vals[k], v ^ (m & -m));  /* the lowest bit the mask looks at */
            }
        }
    }
  int r = 0;
  /* Every combination when there are few, else a fixed pseudo-random
   * choice of them (the same on every run). */
  uint64_t product = 1;
  for (unsigned k = 0; k < 6; k++)
    product = product * vals[k].n > MAX_PRODUCT ? MAX_PRODUCT + 1 : product * vals[k].n;
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (uint64_t i = 0; i < (product > MAX_PRODUCT ? MAX_PRODUCT : product) && r == 0; i++)
    {
      uint64_t args[6], rest = i;
      for (unsigned k = 0; k < 6; k++)
        {
          unsigned pick;
          if (product > MAX_PRODUCT)
            {
              state = state * 6364136223846793005ull + 1442695040888963407ull;
              pick = (unsigned) ((state >> 33) % vals[k].n);
            }
          else
            {
              pick = (unsigned) (rest % vals[k].n);
              rest /= vals[k].n;
            }
          args[k] = vals[k].v[pick];
        }
      r = cb (ctx, args);
    }
  if (r != 0 || securer_seccomp_enabled (prog) == false)
    return r;
  /* One point of each region the compiler derived, so a verdict that only
   * a narrow region gives is never missed. */
  struct region_ctx rc = { c, cb, ctx, 0 };
  securer_err_t err = NULL;
  if (securer_seccomp_regions (prog, c->name, region_point, &rc, &err) < 0)
    securer_error_free (&err);
  return rc.stop;
}

void
securer_call_simplify (uint64_t args[6], unsigned wild, securer_call_pred still_holds, void *ctx)
{
  static const uint64_t keep[] = { 0xffffffffull, 0 };
  for (size_t step = 0; step < sizeof keep / sizeof keep[0]; step++)
    for (unsigned k = 0; k < 6; k++)
      {
        if (!(wild & (1u << k)) || (args[k] & ~keep[step]) == 0)
          continue;
        uint64_t old = args[k];
        args[k] &= keep[step];
        if (!still_holds (ctx, args))
          args[k] = old;
      }
}
