/* Text from the sandbox as valid UTF-8: JSON (and so every result, reply
 * and audit record) cannot carry anything else, and a string jansson
 * refuses would otherwise vanish from the reply without a trace.  Every
 * byte that does not belong to a well-formed sequence becomes the four
 * characters \xNN, so nothing is lost and the original bytes can be told. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session/internal.h"

/* Length of the well-formed sequence at p (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF, no NUL), or 0. */
static size_t
seq_len (const unsigned char *p, size_t avail)
{
  unsigned char c = p[0];
  if (c >= 0x01 && c < 0x80)
    return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    {
      n = 3;
      if (c == 0xE0)
        lo = 0xA0;
      else if (c == 0xED)
        hi = 0x9F;
    }
  else if (c >= 0xF0 && c <= 0xF4)
    {
      n = 4;
      if (c == 0xF0)
        lo = 0x90;
      else if (c == 0xF4)
        hi = 0x8F;
    }
  else
    return 0;
  if (avail < n || p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xBF)
      return 0;
  return n;
}

char *
securer_utf8_escape (const char *s, size_t len, size_t *out_len)
{
  const unsigned char *p = (const unsigned char *) s;
  size_t bad = 0;
  for (size_t i = 0; i < len;)
    {
      size_t n = seq_len (p + i, len - i);
      if (n == 0)
        {
          bad++;
          n = 1;
        }
      i += n;
    }
  size_t total = len + 3 * bad;
  char *out = malloc (total + 1);
  if (out == NULL)
    return NULL;
  static const char hex[] = "0123456789abcdef";
  size_t o = 0;
  for (size_t i = 0; i < len;)
    {
      size_t n = seq_len (p + i, len - i);
      if (n == 0)
        {
          out[o++] = '\\';
          out[o++] = 'x';
          out[o++] = hex[p[i] >> 4];
          out[o++] = hex[p[i] & 15];
          i++;
          continue;
        }
      memcpy (out + o, p + i, n);
      o += n;
      i += n;
    }
  out[o] = '\0';
  if (out_len)
    *out_len = o;
  return out;
}

size_t
securer_utf8_cut (const char *s, size_t len, size_t max)
{
  if (len <= max)
    return len;
  /* Back off continuation bytes so the cut falls between characters. */
  size_t n = max;
  while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80)
    n--;
  return n;
}
