/* The confinement a session forked from a template applies to itself,
 * after its namespaces and mounts (zygote.c) and before any user code: the
 * same steps, in the same order, as a cold sandbox's payload (spawn.c). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "linux/landlock-internal.h"
#include "linux/launch.h"
#include "linux/zygote.h"
#include "seccomp/seccomp.h"

int
securer_zygote_confine (const struct securer_zygote_confinement *c, struct securer_landlock_report *rep,
                        securer_err_t *err)
{
  const struct securer_policy *p = c->p;
  /* Checked first, so a refusal leaves nothing half applied. */
  if (p->seccomp.enabled && (c->filter == NULL || c->n_insns == 0))
    return securer_error_set (err, EINVAL, "seccomp: the policy has a filter and none was given");
  if (c->filter_flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
    return securer_error_set (err, ENOTSUP,
                              "seccomp: the filter reports to a supervisor (user notification), "
                              "which a session from a template does not have");
  if (setsid () < 0)
    return securer_error_set (err, errno, "setsid");
  const char *cwd = p->cwd != NULL ? p->cwd : "/";
  if (chdir (cwd) < 0)
    return securer_error_set (err, errno, "chdir %s", cwd);
  if (securer_linux_drop_caps (err) < 0)
    return -1;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "set no_new_privs");
  char summary[SECURER_LANDLOCK_SUMMARY_MAX];
  if (securer_landlock_apply_plan (p->landlock.mode, c->landlock, securer_landlock_abi (), rep, summary,
                                   sizeof summary, err) < 0)
    return securer_error_prefix (err, "landlock");
  unsigned failed = 0;
  int rc = securer_linux_apply_rlimits (c->rlimits, &failed);
  if (rc < 0)
    return securer_error_set (err, -rc, "set rlimit %s", securer_rlimit_name (c->rlimits->step[failed].id));
  if (p->seccomp.enabled)
    {
      int listener = -1;
      rc = securer_seccomp_install_bpf (c->filter, c->n_insns, c->filter_flags, &listener);
      if (rc < 0)
        return securer_error_set (err, -rc, "seccomp: load the filter");
      if (listener >= 0)
        close (listener);
    }
  return 0;
}

int
securer_zygote_plan (const struct securer_policy *p, struct securer_zygote_plans *out, securer_err_t *err)
{
  const struct sock_filter *insns = NULL;
  unsigned n = 0;
  unsigned long flags = 0;
  *out = (struct securer_zygote_plans){ 0 };
  out->landlock = calloc (1, sizeof *out->landlock);
  out->rlimits = calloc (1, sizeof *out->rlimits);
  if (out->landlock == NULL || out->rlimits == NULL)
    return securer_error_set (err, ENOMEM, "session plans");
  if (p->landlock.mode != SECURER_ENFORCE_OFF && securer_landlock_plan_build (p, out->landlock, err) < 0)
    return securer_error_prefix (err, "landlock");
  if (securer_linux_plan_rlimits (p, 1024, out->rlimits, err) < 0)
    return -1;
  if (p->seccomp.enabled)
    {
      if (securer_seccomp_compile (p, 0, -1, &out->prog, err) < 0 || securer_seccomp_generate (out->prog, p, err) < 0)
        return securer_error_prefix (err, "seccomp");
      if (securer_seccomp_bpf (out->prog, &insns, &n, &flags) < 0)
        return securer_error_set (err, EINVAL, "seccomp: no program was generated");
    }
  out->confinement = (struct securer_zygote_confinement){
    .p = p, .landlock = p->landlock.mode != SECURER_ENFORCE_OFF ? out->landlock : NULL,
    .rlimits = out->rlimits, .filter = insns, .n_insns = n, .filter_flags = flags };
  return 0;
}
