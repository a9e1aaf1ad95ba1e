/* Text from a sandbox made safe to show on a terminal: escape sequences
 * removed, other controls and invalid UTF-8 made visible.
 *
 * What passes: printable ASCII, '\t', '\n' and well-formed UTF-8 other than
 * the C1 controls (U+0080-U+009F).  What changes:
 *   - ESC sequences are removed whole: CSI (ESC [ ... final), OSC, DCS,
 *     SOS, PM and APC strings (up to BEL, ST, CAN or SUB) and the short
 *     ESC sequences (ESC c, ESC 7, ESC ( B, ESC # 8, ...);
 *   - "\r\n" becomes "\n" and a lone '\r' becomes '\n', so nothing shown
 *     can be overwritten from the start of its line;
 *   - other C0 controls and DEL are shown in caret notation (^G, ^H, ^?);
 *   - C1 controls written as UTF-8 are shown as \u0080 ... \u009f;
 *   - every byte that is not part of well-formed UTF-8 (raw 8-bit C1
 *     controls included) is shown as \xHH.
 * The filter is a stream: a sequence or character split across two
 * chunks is handled as if it had come in one. */
#ifndef SECURER_CLI_TERMSAFE_H
#define SECURER_CLI_TERMSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct termsafe {
  int state;                 /* where in an escape sequence the stream is */
  unsigned char held[4];     /* an incomplete UTF-8 character */
  unsigned n_held, need;     /* bytes held, bytes the character has in all */
  int pending_cr;            /* a '\r' whose successor is not known yet */
};

/* Bytes termsafe_feed may write for len input bytes (termsafe_finish
 * writes at most TERMSAFE_MAX_OUT (0)). */
#define TERMSAFE_MAX_OUT(len) (4 * (size_t) (len) + 16)

void termsafe_init (struct termsafe *t);

/* Filters len bytes into out (room for TERMSAFE_MAX_OUT (len)); returns
 * the number of bytes written. */
size_t termsafe_feed (struct termsafe *t, const void *in, size_t len, char *out);

/* End of the stream: writes what was held back (an incomplete character
 * as \xHH, a pending '\r' as '\n') and resets t. */
size_t termsafe_finish (struct termsafe *t, char *out);

/* One whole string filtered (a new stream), malloc'd; NULL without memory. */
char *termsafe_string (const char *s);

/* fputs, with s filtered when terminal is true (the caller knows whether f
 * is one).  Without memory for the filtered copy, nothing is written. */
void termsafe_fputs (const char *s, FILE *f, bool terminal);

#endif
