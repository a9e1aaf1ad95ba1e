/* securer — where shipped data (policies, seccomp groups, the R runtime) is found. */
#ifndef SECURER_PATHS_H
#define SECURER_PATHS_H

#include "securer/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Finds `relpath` (e.g. "seccomp/default.syscalls", "policies/r.policy")
 * in the data search path and returns a malloc'd absolute path, or NULL
 * with *err set (ENOENT, listing the directories searched).
 *
 * The search path is, in order: $SECURER_DATADIR (when set), the source
 * tree when the running program lives in the build tree (so `make check`
 * and ./securer use the in-tree files), then $(pkgdatadir). */
char *securer_data_find (const char *relpath, securer_err_t *err);

/* The directories searched, NULL-terminated; static storage. */
const char *const *securer_data_dirs (void);

/* Where the helper programs are (securer-init, the sandbox's pid 1): the
 * build directory when the running program lives in the build tree,
 * otherwise $(pkglibexecdir).  Static storage. */
const char *securer_libexec_dir (void);

#ifdef __cplusplus
}
#endif
#endif
