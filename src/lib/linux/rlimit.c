/* Resource limits of the payload.  The parent works out every value before
 * clone (the child inherits the caller's limits, so the clamping reads the
 * same numbers there); the payload then only makes the setrlimit calls,
 * as its last step before seccomp, without allocating: under a low
 * RLIMIT_AS a new mapping may fail, and a sanitizer runtime's reservations
 * alone already exceed any such limit. */
#include <config.h>

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "linux/launch.h"

static const int resource_of[SECURER_RLIMIT_COUNT] = {
  [SECURER_RLIMIT_CPU] = RLIMIT_CPU,
  [SECURER_RLIMIT_AS] = RLIMIT_AS,
  [SECURER_RLIMIT_FSIZE] = RLIMIT_FSIZE,
  [SECURER_RLIMIT_NPROC] = RLIMIT_NPROC,
  [SECURER_RLIMIT_NOFILE] = RLIMIT_NOFILE,
  [SECURER_RLIMIT_STACK] = RLIMIT_STACK,
  [SECURER_RLIMIT_CORE] = RLIMIT_CORE,
  [SECURER_RLIMIT_MEMLOCK] = RLIMIT_MEMLOCK,
  [SECURER_RLIMIT_SIGPENDING] = RLIMIT_SIGPENDING,
};

static rlim_t
to_rlim (uint64_t v)
{
  return v == UINT64_MAX ? RLIM_INFINITY : (rlim_t) v;
}

/* hard := min(hard, max); soft := min(soft, hard) (RLIM_INFINITY is the largest value). */
static void
cap_at (struct rlimit *r, rlim_t max)
{
  if (max != RLIM_INFINITY && (r->rlim_max == RLIM_INFINITY || r->rlim_max > max))
    r->rlim_max = max;
  if (r->rlim_max != RLIM_INFINITY && (r->rlim_cur == RLIM_INFINITY || r->rlim_cur > r->rlim_max))
    r->rlim_cur = r->rlim_max;
}

int
securer_linux_plan_rlimits (const struct securer_policy *p, int nofile_max, struct rlimit_plan *plan,
                            securer_err_t *err)
{
  memset (plan, 0, sizeof *plan);
  for (int i = 0; i < SECURER_RLIMIT_COUNT; i++)
    {
      const struct securer_rlimit *r = &p->limits.rlimit[i];
      struct rlimit cur;
      if (getrlimit (resource_of[i], &cur) < 0)
        return securer_error_set (err, errno, "get rlimit %s", securer_rlimit_name (i));
      struct rlimit want = cur;
      if (r->set)
        {
          /* Raising a hard limit needs CAP_SYS_RESOURCE in the host
           * namespace, which no sandbox has.  A request above the caller's
           * hard limit is met with the caller's limit: stricter than asked,
           * never looser. */
          want.rlim_cur = to_rlim (r->soft);
          want.rlim_max = to_rlim (r->hard);
          cap_at (&want, cur.rlim_max);
        }
      /* The sync socket sits at fd nofile_max: the command must never be
       * able to own that number (see spawn.c). */
      if (i == SECURER_RLIMIT_NOFILE)
        cap_at (&want, (rlim_t) nofile_max);
      if (!r->set && want.rlim_cur == cur.rlim_cur && want.rlim_max == cur.rlim_max)
        continue;
      plan->step[plan->n].resource = resource_of[i];
      plan->step[plan->n].id = i;
      plan->step[plan->n].lim = want;
      plan->n++;
    }
  return 0;
}

int
securer_linux_apply_rlimits (const struct rlimit_plan *plan, unsigned *failed)
{
  for (unsigned i = 0; i < plan->n; i++)
    if (setrlimit (plan->step[i].resource, &plan->step[i].lim) < 0)
      {
        *failed = i;
        return -errno;
      }
  return 0;
}
