/* `securer policy learn`: turning a policy into a learning one, collecting
 * the syscalls a command makes (as the launcher's on_syscall callback), and
 * writing them out as a policy fragment or JSON.  docs/seccomp.md has the
 * rules the fragment follows. */
#ifndef SECURER_SECCOMP_LEARN_H
#define SECURER_SECCOMP_LEARN_H

#include <jansson.h>
#include <stdbool.h>

#include "securer/error.h"
#include "securer/policy.h"
#include "securer/sandbox.h"

struct securer_learn;

/* Fails (ENOSYS) when this kernel cannot report and continue syscalls
 * (seccomp user notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE). */
int securer_learn_available (securer_err_t *err);

/* Compiles base's seccomp section, so that each recorded call can be
 * annotated with what base would have done with it.  Call before
 * securer_learn_prepare() changes the policy. */
int securer_learn_new (const struct securer_policy *base, struct securer_learn **out,
                       securer_err_t *err);
void securer_learn_free (struct securer_learn *l);

/* Replaces p's seccomp section by the learning one: default `notify`
 * (reported, then continued), foreign-abi unchanged.  keep_denials false:
 * every rule is dropped, so the command meets no seccomp denial at all.
 * true: allow/log/notify rules become notify, errno/kill/trap rules stay,
 * so the command sees exactly what base gives it. */
int securer_learn_prepare (struct securer_policy *p, bool keep_denials, securer_err_t *err);

/* on_syscall callback for securer_spawn_opts (ctx is the learn state). */
void securer_learn_record (void *ctx, const struct securer_syscall_event *ev);

struct securer_learn_info {
  char *const *argv;                    /* the command, named in the header */
  const char *base;                     /* BASE as the user wrote it */
  bool keep_denials;
  const struct securer_status *status;  /* how the command ended, NULL if unknown */
  unsigned collapse_pct;                /* 1..100: write @group once this share of it was used */
};

/* The fragment: sorted, deterministic policy text of `seccomp allow` lines
 * with counts and groups as comments.  malloc'd. */
char *securer_learn_fragment (const struct securer_learn *l, const struct securer_learn_info *info,
                              securer_err_t *err);
/* The same as JSON (syscalls, groups, status and the fragment text). */
json_t *securer_learn_json (const struct securer_learn *l, const struct securer_learn_info *info,
                            securer_err_t *err);

#endif
