/* The byte stream `stdio-probe pattern N` writes and the tests check: every
 * byte value occurs, escape sequences and invalid UTF-8 included. */
#ifndef SECURER_TEST_STDIO_PATTERN_H
#define SECURER_TEST_STDIO_PATTERN_H

static inline unsigned char
pattern_byte (unsigned long long i)
{
  unsigned long long x = i * 0x9e3779b97f4a7c15ull;
  return (unsigned char) ((x >> 32) ^ (x >> 56) ^ i);
}

#endif
