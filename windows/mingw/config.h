/* config.h for the mingw-w64 cross-build of the Windows port
 * (`make check-windows-build`): src/lib/error.c includes <config.h> and
 * uses glibc's strerrorname_np, which Windows lacks; without a name the
 * message still carries strerror()'s text. */
#ifndef SECURER_MINGW_CONFIG_H
#define SECURER_MINGW_CONFIG_H
#define _GNU_SOURCE 1
#define strerrorname_np(e) ((const char *) 0)
#endif
