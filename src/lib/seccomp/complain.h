/* Complain mode of `securer run`: a filter that lets the calls the policy
 * would refuse go ahead through user notification (kill rules excepted),
 * and the record of each distinct one, written as the launcher's
 * on_syscall callback.  docs/seccomp.md, "Complain mode", has the rules. */
#ifndef SECURER_SECCOMP_COMPLAIN_H
#define SECURER_SECCOMP_COMPLAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "securer/error.h"
#include "securer/policy.h"
#include "securer/sandbox.h"

enum securer_complain_mode {
  SECURER_COMPLAIN_OFF = 0,
  /* The policy itself has `log` or `notify` actions: those calls go ahead
   * and are reported; every other verdict is enforced as written. */
  SECURER_COMPLAIN_POLICY,
  /* --complain: errno, trap, log and notify verdicts and a non-allow
   * default go ahead and are reported; kill rules and foreign-abi stay. */
  SECURER_COMPLAIN_RUN,
};

/* The mode a run of p gets (option: --complain was given).  p's seccomp
 * rules must be resolved. */
enum securer_complain_mode securer_complain_mode_of (const struct securer_policy *p, bool option);
/* "run", "policy" or NULL. */
const char *securer_complain_mode_name (enum securer_complain_mode m);

/* Fails (ENOSYS) when this kernel cannot let a call go ahead from user
 * notification (SECCOMP_USER_NOTIF_FLAG_CONTINUE): complain mode is then
 * refused rather than run without its reports. */
int securer_complain_available (securer_err_t *err);

struct securer_complain;

/* Compiles p's seccomp section as written, so that each reported call is
 * named with the verdict the policy gives it.  Call before
 * securer_complain_prepare() changes p. */
int securer_complain_new (const struct securer_policy *p, struct securer_complain **out, securer_err_t *err);
void securer_complain_free (struct securer_complain *c);

/* Turns p's seccomp section into the complain filter of mode m: every
 * verdict m relaxes becomes `notify`, the rest is left as it is. */
int securer_complain_prepare (struct securer_policy *p, enum securer_complain_mode m, securer_err_t *err);

/* on_syscall callback for securer_spawn_opts (ctx is the complain state). */
void securer_complain_record (void *ctx, const struct securer_syscall_event *ev);

/* Calls reported, and distinct ones (syscall and the verdict it would get). */
unsigned long long securer_complain_calls (const struct securer_complain *c);
size_t securer_complain_distinct (const struct securer_complain *c);
/* Calls beyond the distinct ones kept (more than 1024 of them). */
unsigned long long securer_complain_unlisted (const struct securer_complain *c);

/* The `complain` array of the status record, one object per distinct call
 * in the order first seen. */
json_t *securer_complain_json (const struct securer_complain *c);
/* One line per distinct call, each starting with prefix. */
void securer_complain_print (const struct securer_complain *c, FILE *f, const char *prefix);

#endif
