/* SHA-256 as FIPS 180-4 specifies it; see sha256.h.
 *
 * Launches hash their cache keys and entries (some 30 KB each time), so
 * on x86_64 processors with the SHA extensions the compression runs on
 * them; the portable code is the reference and the fallback, and the unit
 * test checks the two against each other. */
#include <config.h>

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SHA256_X86 1
#if __has_include(<sys/platform/x86.h>)
/* glibc 2.33+: the features its start-up already read, without a CPUID of
 * our own (each one traps to the hypervisor on a virtual machine). */
#include <sys/platform/x86.h>
#define HAS_GLIBC_CPU_FEATURES 1
#else
#include <cpuid.h>
#endif
#endif

#include "sha256.h"

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t
ror (uint32_t x, unsigned n)
{
  return (x >> n) | (x << (32 - n));
}

static void
blocks_portable (uint32_t h[8], const unsigned char *p, size_t n)
{
  for (; n > 0; n--, p += 64)
    {
      uint32_t w[64];
      for (int i = 0; i < 16; i++)
        w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 | (uint32_t) p[4 * i + 2] << 8
               | (uint32_t) p[4 * i + 3];
      for (int i = 16; i < 64; i++)
        {
          uint32_t s0 = ror (w[i - 15], 7) ^ ror (w[i - 15], 18) ^ (w[i - 15] >> 3);
          uint32_t s1 = ror (w[i - 2], 17) ^ ror (w[i - 2], 19) ^ (w[i - 2] >> 10);
          w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
      uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
      for (int i = 0; i < 64; i++)
        {
          uint32_t t1 = hh + (ror (e, 6) ^ ror (e, 11) ^ ror (e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
          uint32_t t2 = (ror (a, 2) ^ ror (a, 13) ^ ror (a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
          hh = g;
          g = f;
          f = e;
          e = d + t1;
          d = c;
          c = b;
          b = a;
          a = t1 + t2;
        }
      h[0] += a;
      h[1] += b;
      h[2] += c;
      h[3] += d;
      h[4] += e;
      h[5] += f;
      h[6] += g;
      h[7] += hh;
    }
}

#ifdef SHA256_X86
/* The SHA extensions keep the state as ABEF and CDGH and do two rounds per
 * sha256rnds2; the message schedule is sha256msg1/msg2 over four words at a
 * time (Intel's "SHA extensions" paper, section 4). */
__attribute__ ((target ("sha,sse4.1"))) static void
blocks_shani (uint32_t h[8], const unsigned char *p, size_t n)
{
  const __m128i bswap = _mm_set_epi64x (0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i t = _mm_shuffle_epi32 (_mm_loadu_si128 ((const __m128i *) &h[0]), 0xB1);  /* CDAB */
  __m128i s1 = _mm_shuffle_epi32 (_mm_loadu_si128 ((const __m128i *) &h[4]), 0x1B); /* EFGH */
  __m128i s0 = _mm_alignr_epi8 (t, s1, 8);                                           /* ABEF */
  s1 = _mm_blend_epi16 (s1, t, 0xF0);                                                /* CDGH */
  for (; n > 0; n--, p += 64)
    {
      __m128i abef = s0, cdgh = s1, m[4];
      for (int i = 0; i < 16; i++)
        {
          __m128i w;
          if (i < 4)
            w = _mm_shuffle_epi8 (_mm_loadu_si128 ((const __m128i *) (p + 16 * i)), bswap);
          else
            w = _mm_sha256msg2_epu32 (_mm_add_epi32 (_mm_sha256msg1_epu32 (m[i & 3], m[(i + 1) & 3]),
                                                     _mm_alignr_epi8 (m[(i + 3) & 3], m[(i + 2) & 3], 4)),
                                      m[(i + 3) & 3]);
          m[i & 3] = w;
          __m128i k = _mm_add_epi32 (w, _mm_loadu_si128 ((const __m128i *) &K[4 * i]));
          s1 = _mm_sha256rnds2_epu32 (s1, s0, k);
          s0 = _mm_sha256rnds2_epu32 (s0, s1, _mm_shuffle_epi32 (k, 0x0E));
        }
      s0 = _mm_add_epi32 (s0, abef);
      s1 = _mm_add_epi32 (s1, cdgh);
    }
  t = _mm_shuffle_epi32 (s0, 0x1B);  /* FEBA */
  s1 = _mm_shuffle_epi32 (s1, 0xB1); /* DCHG */
  _mm_storeu_si128 ((__m128i *) &h[0], _mm_blend_epi16 (t, s1, 0xF0)); /* DCBA */
  _mm_storeu_si128 ((__m128i *) &h[4], _mm_alignr_epi8 (s1, t, 8));    /* HGFE */
}

/* The code above needs SSSE3 and SSE4.1 besides SHA. */
static bool
cpu_has_sha (void)
{
#ifdef HAS_GLIBC_CPU_FEATURES
  return CPU_FEATURE_ACTIVE (SHA) && CPU_FEATURE_ACTIVE (SSSE3) && CPU_FEATURE_ACTIVE (SSE4_1);
#else
  unsigned a, b, c, d;
  /* Leaf 7: EBX bit 29 is SHA; leaf 1: ECX bits 9 and 19 are SSSE3 and
   * SSE4.1. */
  if (!__get_cpuid_count (7, 0, &a, &b, &c, &d) || !(b & (1u << 29)))
    return false;
  return __get_cpuid (1, &a, &b, &c, &d) && (c & (1u << 9)) && (c & (1u << 19));
#endif
}
#endif

typedef void (*blocks_fn) (uint32_t h[8], const unsigned char *p, size_t n);
static blocks_fn chosen;

static blocks_fn
best (void)
{
#ifdef SHA256_X86
  if (cpu_has_sha ())
    return blocks_shani;
#endif
  return blocks_portable;
}

bool
securer_sha256_use_portable (bool portable)
{
  blocks_fn f = portable ? blocks_portable : best ();
  __atomic_store_n (&chosen, f, __ATOMIC_RELEASE);
  return f != blocks_portable;
}

void
securer_sha256_init (struct securer_sha256 *s)
{
  static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  if (__atomic_load_n (&chosen, __ATOMIC_ACQUIRE) == NULL)
    __atomic_store_n (&chosen, best (), __ATOMIC_RELEASE);
  memcpy (s->h, iv, sizeof iv);
  s->len = 0;
  s->fill = 0;
}

void
securer_sha256_update (struct securer_sha256 *s, const void *data, size_t n)
{
  const unsigned char *p = data;
  blocks_fn blocks = __atomic_load_n (&chosen, __ATOMIC_ACQUIRE);
  s->len += n;
  if (s->fill > 0)
    {
      size_t take = 64 - s->fill < n ? 64 - s->fill : n;
      memcpy (s->buf + s->fill, p, take);
      s->fill += take;
      p += take;
      n -= take;
      if (s->fill < 64)
        return;
      blocks (s->h, s->buf, 1);
      s->fill = 0;
    }
  if (n >= 64)
    {
      blocks (s->h, p, n / 64);
      p += n / 64 * 64;
      n %= 64;
    }
  memcpy (s->buf, p, n);
  s->fill = n;
}

void
securer_sha256_final (struct securer_sha256 *s, unsigned char out[SECURER_SHA256_LEN])
{
  uint64_t bits = s->len * 8;
  static const unsigned char pad[64] = { 0x80 };
  securer_sha256_update (s, pad, s->fill < 56 ? 56 - s->fill : 120 - s->fill);
  unsigned char len[8];
  for (int i = 0; i < 8; i++)
    len[i] = (unsigned char) (bits >> (56 - 8 * i));
  securer_sha256_update (s, len, 8);
  for (int i = 0; i < 8; i++)
    {
      out[4 * i] = (unsigned char) (s->h[i] >> 24);
      out[4 * i + 1] = (unsigned char) (s->h[i] >> 16);
      out[4 * i + 2] = (unsigned char) (s->h[i] >> 8);
      out[4 * i + 3] = (unsigned char) s->h[i];
    }
}
