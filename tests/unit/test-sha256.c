/* SHA-256: FIPS 180-4's examples, and the processor's SHA extensions
 * (where this machine has them) giving the portable code's digest for
 * every length across several blocks and every way of splitting the input
 * into updates. */
#include <config.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"

static void
hex_of (const void *data, size_t len, size_t chunk, char out[65])
{
  struct securer_sha256 s;
  unsigned char d[SECURER_SHA256_LEN];
  securer_sha256_init (&s);
  const unsigned char *p = data;
  for (size_t off = 0; off < len; off += chunk)
    securer_sha256_update (&s, p + off, len - off < chunk ? len - off : chunk);
  securer_sha256_final (&s, d);
  for (int i = 0; i < SECURER_SHA256_LEN; i++)
    snprintf (out + 2 * i, 3, "%02x", d[i]);
}

static void
check_fips_examples (void)
{
  char hex[65];
  hex_of ("abc", 3, 3, hex);
  cr_assert_str_eq (hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  hex_of ("", 0, 1, hex);
  cr_assert_str_eq (hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  hex_of (two, strlen (two), 7, hex);
  cr_assert_str_eq (hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  size_t n = 1000000;
  char *a = malloc (n);
  cr_assert_not_null (a);
  memset (a, 'a', n);
  hex_of (a, n, 4093, hex);
  cr_assert_str_eq (hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free (a);
}

Test (sha256, fips_examples_portable)
{
  securer_sha256_use_portable (true);
  check_fips_examples ();
}

Test (sha256, fips_examples_with_the_fastest_code_here)
{
  securer_sha256_use_portable (false);
  check_fips_examples ();
}

Test (sha256, both_implementations_agree_for_every_length_and_split)
{
  unsigned char buf[700];
  unsigned seed = 12345;
  for (size_t i = 0; i < sizeof buf; i++)
    buf[i] = (unsigned char) (rand_r (&seed) >> 7);
  if (!securer_sha256_use_portable (false))
    cr_log_warn ("no SHA extensions on this processor: only the portable code was checked");
  for (size_t len = 0; len <= sizeof buf; len++)
    for (size_t chunk = 1; chunk <= 130; chunk += len % 7 + 1)
      {
        char fast[65], slow[65];
        securer_sha256_use_portable (false);
        hex_of (buf, len, chunk, fast);
        securer_sha256_use_portable (true);
        hex_of (buf, len, chunk, slow);
        cr_assert_str_eq (fast, slow, "length %zu in pieces of %zu", len, chunk);
      }
}
