/* Scrubbing error messages before they reach a caller who should not learn
 * about the host: absolute paths, process ids, the host name, IP addresses. */
#include <config.h>

#include <regex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "session/internal.h"

struct rule {
  const char *pattern;
  const char *replacement;
  regex_t re;
  bool ok;
};

/* Order matters: IPv6 before paths (both may contain ':' and '/'), IPv4
 * before pids. */
static struct rule rules[] = {
  { "([0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(%[A-Za-z0-9]+)?", "<ip>", { 0 }, false },
  { "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}", "<ip>", { 0 }, false },
  { "(~|[A-Za-z]:)?(/[^/[:space:]'\"`,;:()<>]+)+/?", "<path>", { 0 }, false },
  { "([Pp][Ii][Dd][ =:#]*)[0-9]+", "\\1<pid>", { 0 }, false },
  { "([Pp]rocess[ ]+)[0-9]+", "\\1<pid>", { 0 }, false },
};
#define N_RULES (sizeof rules / sizeof rules[0])
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char hostname[256];

static void
compile_rules (void)
{
  for (size_t i = 0; i < N_RULES; i++)
    rules[i].ok = regcomp (&rules[i].re, rules[i].pattern, REG_EXTENDED) == 0;
  if (gethostname (hostname, sizeof hostname - 1) != 0)
    hostname[0] = '\0';
}

/* Appends src[0..n) to the growing buffer. */
static bool
append (char **buf, size_t *len, size_t *cap, const char *src, size_t n)
{
  if (*len + n + 1 > *cap)
    {
      size_t c = *cap ? *cap : 64;
      while (c < *len + n + 1)
        c *= 2;
      char *p = realloc (*buf, c);
      if (p == NULL)
        return false;
      *buf = p;
      *cap = c;
    }
  memcpy (*buf + *len, src, n);
  *len += n;
  (*buf)[*len] = '\0';
  return true;
}

static char *
apply (const struct rule *r, const char *in)
{
  char *out = NULL;
  size_t len = 0, cap = 0;
  const char *p = in;
  regmatch_t m[3];
  int flags = 0;
  while (*p && regexec (&r->re, p, 3, m, flags) == 0)
    {
      if (m[0].rm_eo == m[0].rm_so)
        {
          /* Empty match: copy one byte and move on. */
          if (!append (&out, &len, &cap, p, 1))
            goto oom;
          p++;
          flags = REG_NOTBOL;
          continue;
        }
      if (!append (&out, &len, &cap, p, (size_t) m[0].rm_so))
        goto oom;
      for (const char *q = r->replacement; *q; q++)
        {
          if (q[0] == '\\' && q[1] == '1')
            {
              if (m[1].rm_so >= 0 && !append (&out, &len, &cap, p + m[1].rm_so,
                                              (size_t) (m[1].rm_eo - m[1].rm_so)))
                goto oom;
              q++;
            }
          else if (!append (&out, &len, &cap, q, 1))
            goto oom;
        }
      p += m[0].rm_eo;
      flags = REG_NOTBOL;
    }
  if (!append (&out, &len, &cap, p, strlen (p)))
    goto oom;
  return out;
oom:
  free (out);
  return NULL;
}

static bool
label_char (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* The host's name as a word of its own, in any case, with the domain that
 * may follow it ("vm", "VM.example.org"), but not inside another word: a
 * host called "vm" leaves "vmax" alone. */
static char *
strip_hostname (const char *in)
{
  char *out = NULL;
  size_t len = 0, cap = 0, hl = strlen (hostname);
  const char *p = in, *from = in;
  while (*p)
    {
      if ((p == in || !label_char (p[-1])) && strncasecmp (p, hostname, hl) == 0
          && !label_char (p[hl]))
        {
          const char *end = p + hl;
          while (end[0] == '.' && label_char (end[1]))
            for (end++; label_char (*end); end++)
              ;
          if (!append (&out, &len, &cap, from, (size_t) (p - from))
              || !append (&out, &len, &cap, "<hostname>", 10))
            goto oom;
          p = from = end;
          continue;
        }
      p++;
    }
  if (!append (&out, &len, &cap, from, strlen (from)))
    goto oom;
  return out;
oom:
  free (out);
  return NULL;
}

/* An IPv6-looking match must hold at least two ':' and a hex digit, so
 * that "12:30" times or "a::b" R code survive; checked by the pattern's
 * {2,7} repetition, and here we also avoid plain "::". */
char *
securer_sanitize_error (const char *msg)
{
  pthread_once (&once, compile_rules);
  if (msg == NULL)
    return NULL;
  char *cur = strdup (msg);
  if (cur == NULL)
    return NULL;
  if (hostname[0] != '\0' && strcmp (hostname, "localhost") != 0)
    {
      char *out = strip_hostname (cur);
      if (out != NULL)
        {
          free (cur);
          cur = out;
        }
    }
  for (size_t i = 0; i < N_RULES; i++)
    {
      if (!rules[i].ok)
        continue;
      char *next = apply (&rules[i], cur);
      if (next == NULL)
        continue;
      free (cur);
      cur = next;
    }
  return cur;
}
