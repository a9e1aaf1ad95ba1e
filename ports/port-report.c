/* The gap report both ports fill, and the decision a caller takes on it.
 * See include/securer/ports.h. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "securer/sandbox.h"
#include "ports/ports-internal.h"

static bool
strbuf_reserve (struct securer_strbuf *sb, size_t more)
{
  if (sb->failed)
    return false;
  if (sb->len + more + 1 <= sb->cap)
    return true;
  size_t cap = sb->cap ? sb->cap : 256;
  while (cap < sb->len + more + 1)
    {
      if (cap > SIZE_MAX / 2)
        {
          sb->failed = true;
          return false;
        }
      cap *= 2;
    }
  char *nb = realloc (sb->buf, cap);
  if (nb == NULL)
    {
      sb->failed = true;
      return false;
    }
  sb->buf = nb;
  sb->cap = cap;
  return true;
}

void
securer_strbuf_add (struct securer_strbuf *sb, const char *s)
{
  size_t n = strlen (s);
  if (!strbuf_reserve (sb, n))
    return;
  memcpy (sb->buf + sb->len, s, n + 1);
  sb->len += n;
}

void
securer_strbuf_vprintf (struct securer_strbuf *sb, const char *fmt, va_list ap)
{
  va_list aq;
  va_copy (aq, ap);
  int n = vsnprintf (NULL, 0, fmt, aq);
  va_end (aq);
  if (n < 0)
    {
      sb->failed = true;
      return;
    }
  if (!strbuf_reserve (sb, (size_t) n))
    return;
  vsnprintf (sb->buf + sb->len, (size_t) n + 1, fmt, ap);
  sb->len += (size_t) n;
}

void
securer_strbuf_printf (struct securer_strbuf *sb, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  securer_strbuf_vprintf (sb, fmt, ap);
  va_end (ap);
}

char *
securer_strbuf_take (struct securer_strbuf *sb)
{
  /* An empty buffer still yields "" so callers can tell it from failure. */
  if (!strbuf_reserve (sb, 0))
    {
      securer_strbuf_clear (sb);
      return NULL;
    }
  sb->buf[sb->len] = '\0';
  char *s = sb->buf;
  sb->buf = NULL;
  sb->len = sb->cap = 0;
  return s;
}

void
securer_strbuf_clear (struct securer_strbuf *sb)
{
  free (sb->buf);
  sb->buf = NULL;
  sb->len = sb->cap = 0;
  sb->failed = false;
}

char *
securer_port_printf (const char *fmt, ...)
{
  struct securer_strbuf sb = { 0 };
  va_list ap;
  va_start (ap, fmt);
  securer_strbuf_vprintf (&sb, fmt, ap);
  va_end (ap);
  return securer_strbuf_take (&sb);
}

int
securer_port_gap (struct securer_port_report *rep, enum securer_enforce level,
                  const char *section, const char *rule, securer_err_t *err,
                  const char *reason_fmt, ...)
{
  struct securer_strbuf sb = { 0 };
  va_list ap;
  va_start (ap, reason_fmt);
  securer_strbuf_vprintf (&sb, reason_fmt, ap);
  va_end (ap);
  char *reason = securer_strbuf_take (&sb);
  char *sec = strdup (section);
  char *r = strdup (rule);
  struct securer_port_gap *gaps = NULL;
  if (reason != NULL && sec != NULL && r != NULL)
    gaps = realloc (rep->gaps, (rep->n_gaps + 1) * sizeof *gaps);
  if (gaps == NULL)
    {
      free (reason);
      free (sec);
      free (r);
      return securer_error_set (err, ENOMEM, "port report: %s %s", section, rule);
    }
  rep->gaps = gaps;
  gaps[rep->n_gaps++] = (struct securer_port_gap) {
    .section = sec, .rule = r, .reason = reason,
    .level = level == SECURER_ENFORCE_REQUIRED ? SECURER_ENFORCE_REQUIRED
                                                : SECURER_ENFORCE_BEST_EFFORT,
  };
  return 0;
}

int
securer_port_enforced (struct securer_port_report *rep, securer_err_t *err, const char *fmt, ...)
{
  struct securer_strbuf sb = { 0 };
  va_list ap;
  va_start (ap, fmt);
  securer_strbuf_vprintf (&sb, fmt, ap);
  va_end (ap);
  char *line = securer_strbuf_take (&sb);
  char **v = line ? realloc (rep->enforced, (rep->n_enforced + 1) * sizeof *v) : NULL;
  if (v == NULL)
    {
      free (line);
      return securer_error_set (err, ENOMEM, "port report");
    }
  rep->enforced = v;
  v[rep->n_enforced++] = line;
  return 0;
}

size_t
securer_port_report_count (const struct securer_port_report *rep, enum securer_enforce level)
{
  size_t n = 0;
  for (size_t i = 0; i < rep->n_gaps; i++)
    if (rep->gaps[i].level == level)
      n++;
  return n;
}

const struct securer_port_gap *
securer_port_report_find (const struct securer_port_report *rep, const char *section,
                          const char *rule)
{
  for (size_t i = 0; i < rep->n_gaps; i++)
    if (strcmp (rep->gaps[i].section, section) == 0
        && (rule == NULL || strcmp (rep->gaps[i].rule, rule) == 0))
      return &rep->gaps[i];
  return NULL;
}

static const char *
level_name (enum securer_enforce level)
{
  return level == SECURER_ENFORCE_REQUIRED ? "required" : "best-effort";
}

int
securer_port_check (const struct securer_port_report *rep, unsigned flags, securer_err_t *err)
{
  struct securer_strbuf sb = { 0 };
  size_t refused = 0;
  for (size_t i = 0; i < rep->n_gaps; i++)
    {
      const struct securer_port_gap *g = &rep->gaps[i];
      bool refuse = (flags & SECURER_PORT_STRICT)
                    || (g->level == SECURER_ENFORCE_REQUIRED
                        && !(flags & SECURER_PORT_ACCEPT_WEAKER));
      if (!refuse)
        continue;
      securer_strbuf_printf (&sb, "%s%s %s (%s): %s", refused ? "; " : "", g->section, g->rule,
                             level_name (g->level), g->reason);
      refused++;
    }
  if (refused == 0)
    {
      securer_strbuf_clear (&sb);
      return 0;
    }
  char *why = securer_strbuf_take (&sb);
  securer_error_set (err, 0, "the %s backend cannot enforce %lu rule%s this policy needs%s: %s",
                     rep->port ? rep->port : "platform", (unsigned long) refused, refused == 1 ? "" : "s",
                     (flags & SECURER_PORT_STRICT) ? " (strict)" : "",
                     why ? why : "(out of memory while listing them)");
  free (why);
  securer_error_set_status (err, SECURER_EXIT_SETUP);
  return -1;
}

char *
securer_port_report_format (const struct securer_port_report *rep)
{
  struct securer_strbuf sb = { 0 };
  securer_strbuf_printf (&sb, "backend: %s\n", rep->port ? rep->port : "?");
  for (size_t i = 0; i < rep->n_enforced; i++)
    securer_strbuf_printf (&sb, "enforced: %s\n", rep->enforced[i]);
  for (size_t i = 0; i < rep->n_gaps; i++)
    securer_strbuf_printf (&sb, "%s: %s %s: %s\n", level_name (rep->gaps[i].level),
                           rep->gaps[i].section, rep->gaps[i].rule, rep->gaps[i].reason);
  return securer_strbuf_take (&sb);
}

void
securer_port_report_clear (struct securer_port_report *rep)
{
  if (rep == NULL)
    return;
  for (size_t i = 0; i < rep->n_gaps; i++)
    {
      free (rep->gaps[i].section);
      free (rep->gaps[i].rule);
      free (rep->gaps[i].reason);
    }
  free (rep->gaps);
  for (size_t i = 0; i < rep->n_enforced; i++)
    free (rep->enforced[i]);
  free (rep->enforced);
  memset (rep, 0, sizeof *rep);
}
