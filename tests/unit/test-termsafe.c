/* The terminal sanitiser shared by `securer run` and `securer exec`: what
 * reaches a terminal keeps text and UTF-8, loses every escape sequence,
 * and shows other controls and invalid bytes. */
#include <config.h>

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cli/termsafe.h"

/* Filters len bytes fed in chunks of `chunk` bytes (0: all at once). */
static char *
filter (const char *in, size_t len, size_t chunk)
{
  char *out = malloc (TERMSAFE_MAX_OUT (len) + TERMSAFE_MAX_OUT (0) + 1);
  struct termsafe t;
  termsafe_init (&t);
  size_t n = 0;
  if (chunk == 0)
    chunk = len ? len : 1;
  for (size_t i = 0; i < len; i += chunk)
    {
      size_t k = len - i < chunk ? len - i : chunk;
      size_t w = termsafe_feed (&t, in + i, k, out + n);
      cr_assert_leq (w, TERMSAFE_MAX_OUT (k));
      n += w;
    }
  n += termsafe_finish (&t, out + n);
  out[n] = '\0';
  return out;
}

/* in → want, fed whole and then one byte at a time. */
static void
check (const char *in, size_t len, const char *want)
{
  for (size_t chunk = 0; chunk <= 1; chunk++)
    {
      char *got = filter (in, len, chunk);
      cr_assert_str_eq (got, want, "chunk %zu", chunk);
      free (got);
    }
}

#define CHECK(in, want) check (in, sizeof in - 1, want)

Test (termsafe, text_tabs_newlines_and_utf8_pass)
{
  CHECK ("plain text\tand a tab\n", "plain text\tand a tab\n");
  CHECK ("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9d\x84\x9e \xef\xbf\xbd",
         "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9d\x84\x9e \xef\xbf\xbd");
  CHECK ("\xc2\xa0nbsp \xf4\x8f\xbf\xbf", "\xc2\xa0nbsp \xf4\x8f\xbf\xbf");
}

Test (termsafe, invalid_utf8_is_shown_as_hex)
{
  CHECK ("a\xff" "b", "a\\xffb");
  CHECK ("\xc3(", "\\xc3(");
  CHECK ("\xc0\xaf", "\\xc0\\xaf");                 /* overlong '/' */
  CHECK ("\xe0\x80\xaf", "\\xe0\\x80\\xaf");        /* overlong */
  CHECK ("\xed\xa0\x80", "\\xed\\xa0\\x80");        /* surrogate */
  CHECK ("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* above U+10FFFF */
  CHECK ("\xf8\x88\x80\x80\x80", "\\xf8\\x88\\x80\\x80\\x80");
  CHECK ("\x80", "\\x80");
  CHECK ("ends in \xe2\x82", "ends in \\xe2\\x82");  /* cut at the end */
  CHECK ("\xe2\x82\n", "\\xe2\\x82\n");
}

Test (termsafe, csi_sequences_are_removed)
{
  CHECK ("a\x1b[2Jb", "ab");
  CHECK ("\x1b[1;31mred\x1b[0m", "red");
  CHECK ("\x1b[?1049h\x1b[H\x1b[3J", "");
  CHECK ("x\x1b[>4;2m\x1b[ q", "x");
  /* a control aborts the sequence and is shown */
  CHECK ("\x1b[12\x07z", "^Gz");
}

Test (termsafe, osc_strings_are_removed)
{
  /* OSC 52: write to the clipboard; OSC 0: window title */
  CHECK ("before\x1b]52;c;cm0gLXJmIH4=\x07" "after", "beforeafter");
  CHECK ("\x1b]0;pwned\x1b\\after", "after");
  CHECK ("\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\", "link");
  /* ESC that is not ST ends the string and starts a new sequence */
  CHECK ("\x1b]0;t\x1b[31mz", "z");
  /* CAN and SUB cancel it, and are shown */
  CHECK ("\x1b]52;c;xx\x18shown", "^Xshown");
  /* an unterminated string hides the rest, as on a terminal */
  CHECK ("seen\x1b]52;c;never", "seen");
}

Test (termsafe, dcs_sos_pm_apc_strings_are_removed)
{
  CHECK ("\x1bP+q544e\x1b\\a", "a");
  CHECK ("\x1bXsos\x1b\\b", "b");
  CHECK ("\x1b^pm\x1b\\c", "c");
  CHECK ("\x1b_apc\x1b\\d", "d");
  CHECK ("\x1bPq\xc3\xa9\n\x1b\\e", "e");
}

Test (termsafe, short_escape_sequences_are_removed)
{
  CHECK ("\x1b" "c", "");        /* full reset */
  CHECK ("\x1b" "7x\x1b" "8", "x");
  CHECK ("\x1b(0q\x1b(B", "q");
  CHECK ("\x1b#8", "");          /* fill the screen with E */
  CHECK ("\x1b\x1b[2J", "");
  /* ESC before a control or non-ASCII byte is dropped alone */
  CHECK ("\x1b\x07", "^G");
  CHECK ("\x1b\xc3\xa9", "\xc3\xa9");
}

Test (termsafe, c0_controls_and_del_are_shown)
{
  check ("a\0b", 3, "a^@b");
  CHECK ("\x07\x08\x0b\x0c\x0e\x7f", "^G^H^K^L^N^?");
  CHECK ("\x18\x1a", "^X^Z");
}

Test (termsafe, carriage_returns_cannot_overwrite)
{
  CHECK ("line\r\n", "line\n");
  CHECK ("rm -rf /\rls      \n", "rm -rf /\nls      \n");
  CHECK ("ends\r", "ends\n");
  CHECK ("\r\r\n", "\n\n");
  CHECK ("\r\x1b[2K", "\n");
}

Test (termsafe, c1_controls_are_shown)
{
  /* 8-bit CSI and OSC as raw bytes are not UTF-8 */
  CHECK ("\x9b" "2J\x9d" "0;t\x9c", "\\x9b2J\\x9d0;t\\x9c");
  /* the same written as UTF-8 */
  CHECK ("\xc2\x9b" "2J\xc2\x85", "\\u009b2J\\u0085");
}

Test (termsafe, string_helper)
{
  char *s = termsafe_string ("[1] \x1b[32m\"ok\"\x1b[0m\xff");
  cr_assert_str_eq (s, "[1] \"ok\"\\xff");
  free (s);
}

/* Whatever the input, the output holds no control but '\t' and '\n', no
 * DEL, and is well-formed UTF-8 without C1; chunking changes nothing. */
Test (termsafe, random_input_gives_safe_output)
{
  unsigned seed = 12345;
  static const unsigned char alphabet[] = { 0x1b, '[', ']', 'P', '\\', 0x07, 0x18, '\r', '\n', 'a', '2', ';',
                                            0x9b, 0xc2, 0xe2, 0xf0, 0x80, 0xbf, 0xff, 0x00, 0x7f };
  for (int round = 0; round < 2000; round++)
    {
      unsigned char in[64];
      size_t len = (size_t) (rand_r (&seed) % sizeof in);
      for (size_t i = 0; i < len; i++)
        in[i] = rand_r (&seed) % 3 == 0 ? (unsigned char) rand_r (&seed)
                                         : alphabet[rand_r (&seed) % sizeof alphabet];
      char *whole = filter ((const char *) in, len, 0);
      char *bytewise = filter ((const char *) in, len, 1);
      cr_assert_str_eq (whole, bytewise);
      const unsigned char *p = (const unsigned char *) whole;
      size_t n = strlen (whole);
      for (size_t i = 0; i < n; i++)
        {
          unsigned char c = p[i];
          cr_assert (c >= 0x20 || c == '\t' || c == '\n', "control 0x%02x at %zu", c, i);
          cr_assert (c != 0x7f);
          if (c < 0x80)
            continue;
          /* a well-formed multibyte character, and not U+0080-U+009F */
          cr_assert (c >= 0xc2 && c <= 0xf4, "lead 0x%02x", c);
          cr_assert (!(c == 0xc2 && p[i + 1] < 0xa0), "C1 in output");
          size_t k = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
          for (size_t j = 1; j < k; j++)
            cr_assert (i + j < n && (p[i + j] & 0xc0) == 0x80);
          i += k - 1;
        }
      free (whole);
      free (bytewise);
    }
}
