/* SHA-256 (FIPS 180-4), for content addresses and integrity checks of
 * cached data.  Not installed. */
#ifndef SECURER_SHA256_H
#define SECURER_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECURER_SHA256_LEN 32

struct securer_sha256 {
  uint32_t h[8];
  uint64_t len;          /* bytes hashed so far */
  unsigned char buf[64];
  size_t fill;
};

void securer_sha256_init (struct securer_sha256 *s);
void securer_sha256_update (struct securer_sha256 *s, const void *data, size_t n);
void securer_sha256_final (struct securer_sha256 *s, unsigned char out[SECURER_SHA256_LEN]);

/* For tests: use the portable code (true) or the fastest this processor
 * runs (false) from now on, in every thread; returns whether that is the
 * processor's SHA extensions. */
bool securer_sha256_use_portable (bool portable);

#endif
