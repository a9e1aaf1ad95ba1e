/* Terminal-safe text (see termsafe.h).  The escape-sequence states follow
 * ECMA-48 as terminals parse it, so that whatever a terminal would take
 * as part of a sequence is removed with it: ending a sequence later than a
 * terminal would only hides text, never lets a sequence through. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "termsafe.h"

enum {
  GROUND = 0,
  ESCAPE,       /* after ESC */
  ESCAPE_INTER, /* ESC and intermediate bytes (0x20-0x2f), e.g. ESC ( */
  CSI,          /* ESC [ and parameter/intermediate bytes */
  STRING,       /* OSC, DCS, SOS, PM, APC: up to BEL or ST */
  STRING_ESC,   /* ESC inside a string: ST if '\' follows */
};

#define BEL 0x07
#define CAN 0x18
#define SUB 0x1a
#define ESC 0x1b

void
termsafe_init (struct termsafe *t)
{
  memset (t, 0, sizeof *t);
}

/* prefix and the byte in two hex digits */
static size_t
put_hex_as (char *o, const char *prefix, unsigned char c)
{
  static const char digits[] = "0123456789abcdef";
  size_t n = strlen (prefix);
  memcpy (o, prefix, n);
  o[n++] = digits[c >> 4];
  o[n++] = digits[c & 15];
  return n;
}

static size_t
put_hex (char *o, unsigned char c)
{
  return put_hex_as (o, "\\x", c);
}

static size_t
put_held_as_hex (struct termsafe *t, char *o)
{
  size_t n = 0;
  for (unsigned i = 0; i < t->n_held; i++)
    n += put_hex (o + n, t->held[i]);
  t->n_held = 0;
  return n;
}

/* The second byte's range narrows for some leads: no overlong forms, no
 * surrogates, nothing above U+10FFFF. */
static int
continues (const struct termsafe *t, unsigned char c)
{
  if (c < 0x80 || c > 0xbf)
    return 0;
  if (t->n_held != 1)
    return 1;
  switch (t->held[0])
    {
    case 0xe0: return c >= 0xa0;
    case 0xed: return c <= 0x9f;
    case 0xf0: return c >= 0x90;
    case 0xf4: return c <= 0x8f;
    default: return 1;
    }
}

static size_t byte (struct termsafe *t, unsigned char c, char *o);

static size_t
ground (struct termsafe *t, unsigned char c, char *o)
{
  size_t n = 0;
  if (t->pending_cr)
    {
      t->pending_cr = 0;
      o[n++] = '\n';
      if (c == '\n')
        return n;
    }
  if (t->n_held > 0)
    {
      if (continues (t, c))
        {
          t->held[t->n_held++] = c;
          if (t->n_held < t->need)
            return n;
          if (t->held[0] == 0xc2 && t->held[1] < 0xa0)
            {
              /* A C1 control: some terminals act on it even as UTF-8. */
              n += put_hex_as (o + n, "\\u00", t->held[1]);
            }
          else
            {
              memcpy (o + n, t->held, t->n_held);
              n += t->n_held;
            }
          t->n_held = 0;
          return n;
        }
      n += put_held_as_hex (t, o + n);
    }
  if (c < 0x20)
    {
      switch (c)
        {
        case '\n':
        case '\t':
          o[n++] = (char) c;
          break;
        case '\r':
          t->pending_cr = 1;
          break;
        case ESC:
          t->state = ESCAPE;
          break;
        default:
          o[n++] = '^';
          o[n++] = (char) (c ^ 0x40);
        }
      return n;
    }
  if (c == 0x7f)
    {
      o[n++] = '^';
      o[n++] = '?';
      return n;
    }
  if (c < 0x80)
    {
      o[n++] = (char) c;
      return n;
    }
  unsigned need = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (need == 0)
    return n + put_hex (o + n, c);
  t->held[0] = c;
  t->n_held = 1;
  t->need = need;
  return n;
}

static size_t
byte (struct termsafe *t, unsigned char c, char *o)
{
  switch (t->state)
    {
    case GROUND:
      return ground (t, c, o);
    case ESCAPE:
      if (c == '[')
        t->state = CSI;
      else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_')
        t->state = STRING;
      else if (c >= 0x20 && c <= 0x2f)
        t->state = ESCAPE_INTER;
      else if (c >= 0x30 && c <= 0x7e)
        t->state = GROUND;
      else if (c != ESC)
        {
          /* Not a sequence after all: the ESC alone is dropped. */
          t->state = GROUND;
          return ground (t, c, o);
        }
      return 0;
    case ESCAPE_INTER:
    case CSI:
      {
        unsigned char last = t->state == CSI ? 0x3f : 0x2f;
        if (c >= 0x20 && c <= last)
          return 0;
        if (c == ESC)
          t->state = ESCAPE;
        else
          {
            t->state = GROUND;
            /* A final byte ends the sequence; anything else aborts it and
             * is shown as itself. */
            if (c < 0x30 || c > 0x7e)
              return ground (t, c, o);
          }
        return 0;
      }
    case STRING:
      if (c == BEL)
        t->state = GROUND;
      else if (c == ESC)
        t->state = STRING_ESC;
      else if (c == CAN || c == SUB)
        {
          t->state = GROUND;
          return ground (t, c, o);
        }
      return 0;
    case STRING_ESC:
      if (c == '\\')
        {
          t->state = GROUND;
          return 0;
        }
      /* A new sequence starts, ending the string as terminals do. */
      t->state = ESCAPE;
      return byte (t, c, o);
    }
  return 0;
}

size_t
termsafe_feed (struct termsafe *t, const void *in, size_t len, char *out)
{
  const unsigned char *p = in;
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    n += byte (t, p[i], out + n);
  return n;
}

size_t
termsafe_finish (struct termsafe *t, char *out)
{
  size_t n = put_held_as_hex (t, out);
  if (t->pending_cr)
    out[n++] = '\n';
  termsafe_init (t);
  return n;
}

char *
termsafe_string (const char *s)
{
  size_t len = strlen (s);
  char *out = malloc (TERMSAFE_MAX_OUT (len) + 1);
  if (out == NULL)
    return NULL;
  struct termsafe t;
  termsafe_init (&t);
  size_t n = termsafe_feed (&t, s, len, out);
  n += termsafe_finish (&t, out + n);
  out[n] = '\0';
  return out;
}

void
termsafe_fputs (const char *s, FILE *f, bool terminal)
{
  if (!terminal)
    {
      fputs (s, f);
      return;
    }
  char *safe = termsafe_string (s);
  if (safe != NULL)
    fputs (safe, f);
  free (safe);
}
