/* Helpers shared by the Seatbelt and Job Object plan layers.  Kept free of
 * glibc-only calls (asprintf, open_memstream) so the Windows side also
 * builds with mingw-w64. */
#ifndef SECURER_PORTS_INTERNAL_H
#define SECURER_PORTS_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "securer/ports.h"

/* mingw-w64 checks "printf" formats against msvcrt; the strbuf uses the
 * C99 vsnprintf there (__USE_MINGW_ANSI_STDIO), so check as GNU. */
#ifdef __MINGW32__
#define SECURER_PORT_PRINTF(f, a) __attribute__ ((format (gnu_printf, f, a)))
#else
#define SECURER_PORT_PRINTF(f, a) __attribute__ ((format (printf, f, a)))
#endif

/* A growing string; after an allocation failure every call is a no-op and
 * securer_strbuf_take() returns NULL, so builders check once at the end. */
struct securer_strbuf {
  char *buf;
  size_t len, cap;
  bool failed;
};

void securer_strbuf_add (struct securer_strbuf *sb, const char *s);
void securer_strbuf_printf (struct securer_strbuf *sb, const char *fmt, ...)
  SECURER_PORT_PRINTF (2, 3);
void securer_strbuf_vprintf (struct securer_strbuf *sb, const char *fmt, va_list ap)
  SECURER_PORT_PRINTF (2, 0);
/* Returns the text (caller frees) and resets sb; NULL if anything failed. */
char *securer_strbuf_take (struct securer_strbuf *sb);
void securer_strbuf_clear (struct securer_strbuf *sb);

char *securer_port_printf (const char *fmt, ...) SECURER_PORT_PRINTF (1, 2);

/* Appends a gap; reason is printf-formatted.  -1 with ENOMEM in *err. */
int securer_port_gap (struct securer_port_report *rep, enum securer_enforce level,
                      const char *section, const char *rule, securer_err_t *err,
                      const char *reason_fmt, ...) SECURER_PORT_PRINTF (6, 7);
int securer_port_enforced (struct securer_port_report *rep, securer_err_t *err,
                           const char *fmt, ...) SECURER_PORT_PRINTF (3, 4);


/* ---- paths ---------------------------------------------------------------- */

/* Where a path inside the sandbox lives on a host without a mount
 * namespace: below a bind's source, or (in_private) below the per-sandbox
 * private directory, `path` then being the suffix ("/tmpfs/tmp/x"). */
struct securer_host_path {
  bool in_private;
  char *path;
};

/* 1 and *out filled when a RO/RW/tmpfs mount provides `inside` (the last,
 * most specific one), 0 when none does, -1 with *err on ENOMEM. */
int securer_port_map_path (const struct securer_policy *p, const char *inside,
                           struct securer_host_path *out, securer_err_t *err);
/* Drops doubled and trailing slashes; malloc'd. */
char *securer_port_normalize (const char *path);
/* True when path is dir or lies below it. */
bool securer_port_path_under (const char *path, const char *dir);

const char *securer_port_rlimit_name (int id);
const char *securer_port_action_name (enum securer_action_type t);

#endif
