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

/* One run of a learning merged with others into one record. */
struct securer_learn_run {
  char *const *argv;
  const struct securer_status *status;  /* how it ended, NULL if unknown */
};

struct securer_learn_info {
  char *const *argv;                    /* the command, named in the header */
  const char *base;                     /* BASE as the user wrote it */
  bool keep_denials;
  const struct securer_status *status;  /* how the command ended, NULL if unknown */
  unsigned collapse_pct;                /* 1..100: write @group once this share of it was used */
  /* More than one: the record holds all these runs (argv and status are
   * the first's), and the header, JSON and expectations name each. */
  const struct securer_learn_run *runs;
  size_t n_runs;
};

/* The fragment: sorted, deterministic policy text of `seccomp allow` lines
 * with counts and groups as comments.  malloc'd. */
char *securer_learn_fragment (const struct securer_learn *l, const struct securer_learn_info *info,
                              securer_err_t *err);
/* The same as JSON (syscalls, groups, status and the fragment text). */
json_t *securer_learn_json (const struct securer_learn *l, const struct securer_learn_info *info,
                            securer_err_t *err);

/* The syscalls the command made that went ahead, by name, as rules of
 * this policy can name them (other ABIs and unnamed numbers left out). */
struct securer_learned_call {
  const char *name;
  bool conditioned;         /* learned as `if argN == V` conditions */
  unsigned arg;             /* conditioned: N */
  const uint64_t *values;   /* conditioned: each V, in the order first seen */
  const char *const *names; /* conditioned: the constant naming each V, or NULL */
  size_t n_values;
  uint64_t args[6];         /* the first call of it */
};
typedef int (*securer_learn_each_cb) (void *ctx, const struct securer_learned_call *c);
/* Calls cb for each; stops when it returns non-zero and returns that. */
int securer_learn_each (const struct securer_learn *l, securer_learn_each_cb cb, void *ctx);

/* An expectation file (`securer policy test`) for `written`, the policy
 * made of base's pieces and the rules learned: what the filter gives each
 * call the command made, what it gives the calls base allowed that the
 * command did not make, and base's network, limits, mounts, exec of the
 * command and environment, each as the policy has them now, so that a
 * later edit that changes one of them is caught.  malloc'd. */
char *securer_learn_expect (const struct securer_learn *l, const struct securer_policy *written,
                            const struct securer_policy *base, const struct securer_learn_info *info,
                            securer_err_t *err);

#endif
