/* Internal interface of the seccomp area: syscall groups, symbolic
 * constants and syscall names (used by the policy resolver), and the
 * compiler from a resolved policy to a libseccomp filter (used by the
 * launcher and `securer policy compile`). */
#ifndef SECURER_SECCOMP_H
#define SECURER_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "securer/error.h"
#include "securer/policy.h"

/* ---- names: groups, constants, syscalls (names.c / groups.c / constants.c) ---- */

/* Loads group `name` (without '@') from seccomp/<name>.syscalls in the data
 * path, expanding nested @groups (cycles are errors).  *members is a
 * malloc'd array of malloc'd syscall names, sorted and de-duplicated, and
 * NULL-terminated (free with securer_strv_free).  Entries marked "?name" in
 * a group file are included only when this libseccomp knows them; "known"
 * is built in: every syscall libseccomp can name.  Errors carry file:line. */
int securer_group_load (const char *name, char ***members, size_t *n_members, securer_err_t *err);
/* NULL-terminated malloc'd list of every group name available (without '@'). */
char **securer_group_names (void);
void securer_strv_free (char **v);

/* Symbolic constants for argument conditions (AF_UNIX, TIOCSTI,
 * CLONE_NEWUSER, O_WRONLY, PROT_EXEC, ...).  Returns 0 and sets *value, or
 * -1 when unknown. */
int securer_const_lookup (const char *name, uint64_t *value);
/* Every constant name, NULL-terminated, static storage (for suggestions). */
const char *const *securer_const_names (void);

/* errno names (EPERM, ENOSYS, ...) <-> numbers. */
int securer_errno_lookup (const char *name, int *value);
const char *securer_errno_name (int value);
/* Every errno name, NULL-terminated, static storage (for suggestions). */
const char *const *securer_errno_names (void);

/* True when libseccomp knows `name` as a syscall on the native arch
 * (pseudo-syscalls that exist only on other arches also count). */
bool securer_syscall_known (const char *name);
/* Every syscall name libseccomp knows for the native arch, NULL-terminated,
 * malloc'd (for suggestions). */
char **securer_syscall_names (void);

/* ---- compile.c ---- */
struct securer_seccomp_prog;

enum {
  /* Route kill-process/kill-thread denials through seccomp user notification
   * so the supervisor can name the syscall; needs `sync_fd` below. */
  SECURER_SECCOMP_REPORT_DENIALS = 1u << 0,
};

/* Compiles the policy's seccomp section.  Errors name the rule (file:line). */
int securer_seccomp_compile (const struct securer_policy *p, unsigned flags,
                             struct securer_seccomp_prog **out, securer_err_t *err);
int securer_seccomp_export_bpf (const struct securer_seccomp_prog *prog, int fd, securer_err_t *err);
int securer_seccomp_export_pfc (const struct securer_seccomp_prog *prog, int fd, securer_err_t *err);
/* Loads the filter into the calling thread (tsync).  NO_NEW_PRIVS must be
 * set already.  With REPORT_DENIALS, *notify_fd receives the listener. */
int securer_seccomp_load (struct securer_seccomp_prog *prog, int *notify_fd, securer_err_t *err);
void securer_seccomp_free (struct securer_seccomp_prog *prog);

#endif
