/* Lexer: splits a policy into logical lines of words.
 *
 * A word is a run of non-blank bytes; parts of it may be written in double
 * quotes ("a b", with \" \\ \n \t escapes), so FOO="a b" is one word.  '#'
 * at the start of a word begins a comment.  A backslash at the very end of
 * a line continues the directive on the next line.  Positions are 1-based
 * byte columns of the physical line. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "internal.h"

void
lexer_init (struct lexer *lx, const char *file, const char *buf, size_t len,
            struct securer_diags *diags)
{
  memset (lx, 0, sizeof *lx);
  lx->buf = buf;
  lx->len = len;
  lx->line = 1;
  lx->file = file;
  lx->diags = diags;
}

void
line_clear (struct line *l)
{
  for (size_t i = 0; i < l->n; i++)
    free (l->tok[i].text);
  free (l->tok);
  memset (l, 0, sizeof *l);
}

static unsigned
col_of (const struct lexer *lx, size_t pos)
{
  size_t c = pos - lx->line_start + 1;
  return c > 0xffffffu ? 0xffffffu : (unsigned) c;
}

static void
newline (struct lexer *lx)
{
  /* lx->pos is just past the '\n' */
  lx->line++;
  lx->line_start = lx->pos;
}

/* True when a backslash-newline (or backslash-CR-LF) starts at pos. */
static size_t
continuation_len (const struct lexer *lx, size_t pos)
{
  if (lx->buf[pos] != '\\')
    return 0;
  if (pos + 1 < lx->len && lx->buf[pos + 1] == '\n')
    return 2;
  if (pos + 2 < lx->len && lx->buf[pos + 1] == '\r' && lx->buf[pos + 2] == '\n')
    return 3;
  return 0;
}

struct sbuf {
  char *s;
  size_t n, cap;
};

static int
sbuf_put (struct sbuf *b, char c)
{
  if (b->n + 2 > b->cap)
    {
      size_t nc = b->cap ? b->cap * 2 : 32;
      char *s = realloc (b->s, nc);
      if (s == NULL)
        return -1;
      b->s = s;
      b->cap = nc;
    }
  b->s[b->n++] = c;
  b->s[b->n] = '\0';
  return 0;
}

/* Policies become JSON, which holds only UTF-8; reject anything else
 * where the author can see it. */
static bool
utf8_valid (const char *s)
{
  const unsigned char *p = (const unsigned char *) s;
  while (*p)
    {
      unsigned n;
      uint32_t cp;
      if (*p < 0x80)
        {
          p++;
          continue;
        }
      else if ((*p & 0xe0) == 0xc0)
        n = 1, cp = *p & 0x1f;
      else if ((*p & 0xf0) == 0xe0)
        n = 2, cp = *p & 0x0f;
      else if ((*p & 0xf8) == 0xf0)
        n = 3, cp = *p & 0x07;
      else
        return false;
      p++;
      for (unsigned i = 0; i < n; i++, p++)
        {
          if ((*p & 0xc0) != 0x80)
            return false;
          cp = (cp << 6) | (*p & 0x3f);
        }
      if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000)
          || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return false;
    }
  return true;
}

/* Skips to the end of the current logical line after an error. */
static void
skip_rest (struct lexer *lx)
{
  while (lx->pos < lx->len)
    {
      size_t cl = continuation_len (lx, lx->pos);
      if (cl)
        {
          lx->pos += cl;
          newline (lx);
          continue;
        }
      char c = lx->buf[lx->pos++];
      if (c == '\n')
        {
          newline (lx);
          return;
        }
    }
}

static int
lex_one (struct lexer *lx, struct line *out)
{
  memset (out, 0, sizeof *out);
  size_t cap = 0;
  size_t logical_start = lx->pos;
  bool bad = false;

  while (lx->pos < lx->len)
    {
      char c = lx->buf[lx->pos];
      size_t cl = continuation_len (lx, lx->pos);
      if (cl)
        {
          lx->pos += cl;
          newline (lx);
          continue;
        }
      if (c == '\n')
        {
          lx->pos++;
          newline (lx);
          if (out->n > 0)
            {
              out->line = out->tok[0].line;
              out->col = out->tok[0].col;
              return 1;
            }
          logical_start = lx->pos;
          continue;
        }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v')
        {
          lx->pos++;
          continue;
        }
      if (c == '#')
        {
          while (lx->pos < lx->len && lx->buf[lx->pos] != '\n')
            lx->pos++;
          continue;
        }
      if (lx->pos - logical_start > POLICY_MAX_LINE)
        {
          diag_add (lx->diags, SECURER_DIAG_ERROR, lx->file, lx->line, col_of (lx, lx->pos), NULL,
                    "line too long (more than %u bytes)", POLICY_MAX_LINE);
          bad = true;
          break;
        }
      if (out->n >= POLICY_MAX_TOKENS)
        {
          diag_add (lx->diags, SECURER_DIAG_ERROR, lx->file, lx->line, col_of (lx, lx->pos), NULL,
                    "too many words on one line (more than %d)", POLICY_MAX_TOKENS);
          bad = true;
          break;
        }

      /* A word. */
      struct token t = { NULL, lx->line, col_of (lx, lx->pos), false };
      struct sbuf sb = { NULL, 0, 0 };
      bool ok = true;
      while (ok && lx->pos < lx->len)
        {
          c = lx->buf[lx->pos];
          if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
              || continuation_len (lx, lx->pos))
            break;
          if (c == '\0')
            {
              diag_add (lx->diags, SECURER_DIAG_ERROR, lx->file, lx->line, col_of (lx, lx->pos),
                        NULL, "NUL byte in policy text");
              ok = false;
              break;
            }
          if (sb.n > POLICY_MAX_LINE)
            {
              diag_add (lx->diags, SECURER_DIAG_ERROR, lx->file, lx->line, t.col, NULL,
                        "word too long (more than %u bytes)", POLICY_MAX_LINE);
              ok = false;
              break;
            }
          if (c != '"')
            {
              if (sbuf_put (&sb, c) < 0)
                ok = false;
              lx->pos++;
              continue;
            }
          /* Quoted part. */
          t.quoted = true;
          size_t qpos = lx->pos++;
          bool closed = false;
          while (ok && lx->pos < lx->len)
            {
              c = lx->buf[lx->pos];
              if (c == '"')
                {
                  lx->pos++;
                  closed = true;
                  break;
                }
              if (c == '\n' || c == '\0')
                break;
              if (sb.n > POLICY_MAX_LINE)
                {
                  diag_add (lx->diags, SECURER_DIAG_ERROR, lx->file, lx->line, t.col, NULL,
                            "word too long (more than %u bytes)", POLICY_MAX_LINE);
                  ok = false;
                  break;
                }
              if (c == '\\')
                {
                  char e = lx->pos + 1 < lx->len ? lx->buf[lx->pos + 1] : '\0';
                  char v;
                  switch (e)
                    {
                    case '"': v = '"'; break;
                    case '\\': v = '\\'; break;
                    case 'n': v = '\n'; break;
                    case 't': v = '\t'; break;
                    default:
                      diag_add (lx->diags, SECURER_DIAG_ERROR, lx->file, lx->line,
                                col_of (lx, lx->pos), "write \\\\ for a backslash",
                                "unknown escape sequence in string");
                      ok = false;
                      continue;
                    }
                  if (sbuf_put (&sb, v) < 0)
                    ok = false;
                  lx->pos += 2;
                  continue;
                }
              if (sbuf_put (&sb, c) < 0)
                ok = false;
              lx->pos++;
            }
          if (ok && !closed)
            {
              diag_add (lx->diags, SECURER_DIAG_ERROR, lx->file, lx->line, col_of (lx, qpos), NULL,
                        "unterminated string: expected '\"' before the end of the line");
              ok = false;
            }
        }
      if (!ok)
        {
          free (sb.s);
          bad = true;
          break;
        }
      if (sb.s == NULL)
        {
          sb.s = strdup ("");
          if (sb.s == NULL)
            {
              bad = true;
              break;
            }
        }
      if (!utf8_valid (sb.s))
        {
          diag_add (lx->diags, SECURER_DIAG_ERROR, lx->file, t.line, t.col, NULL,
                    "invalid UTF-8: policy text must be UTF-8");
          free (sb.s);
          bad = true;
          break;
        }
      t.text = sb.s;
      if (out->n >= cap)
        {
          size_t nc = cap ? cap * 2 : 8;
          struct token *nt = realloc (out->tok, nc * sizeof *nt);
          if (nt == NULL)
            {
              free (t.text);
              bad = true;
              break;
            }
          out->tok = nt;
          cap = nc;
        }
      out->tok[out->n++] = t;
    }

  if (bad)
    {
      skip_rest (lx);
      line_clear (out);
      return -1;
    }
  if (out->n > 0)
    {
      out->line = out->tok[0].line;
      out->col = out->tok[0].col;
      return 1;
    }
  return 0;
}

int
lexer_next (struct lexer *lx, struct line *out)
{
  int r;
  while ((r = lex_one (lx, out)) < 0)
    ;
  return r;
}
