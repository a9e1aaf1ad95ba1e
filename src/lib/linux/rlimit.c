/* Resource limits of the payload, set with setrlimit before exec. */
#include <config.h>

#include <errno.h>
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
};

static rlim_t
to_rlim (uint64_t v)
{
  return v == UINT64_MAX ? RLIM_INFINITY : (rlim_t) v;
}

int
securer_linux_set_rlimits (const struct securer_policy *p, securer_err_t *err)
{
  for (int i = 0; i < SECURER_RLIMIT_COUNT; i++)
    {
      const struct securer_rlimit *r = &p->limits.rlimit[i];
      if (!r->set)
        continue;
      struct rlimit cur, want = { to_rlim (r->soft), to_rlim (r->hard) };
      if (getrlimit (resource_of[i], &cur) < 0)
        return securer_error_set (err, errno, "get rlimit %s", securer_rlimit_name (i));
      /* Raising a hard limit needs CAP_SYS_RESOURCE in the host namespace,
       * which no sandbox has.  A request above the caller's hard limit is
       * met with the caller's limit: stricter than asked, never looser. */
      if (cur.rlim_max != RLIM_INFINITY && (want.rlim_max == RLIM_INFINITY || want.rlim_max > cur.rlim_max))
        want.rlim_max = cur.rlim_max;
      if (want.rlim_max != RLIM_INFINITY && (want.rlim_cur == RLIM_INFINITY || want.rlim_cur > want.rlim_max))
        want.rlim_cur = want.rlim_max;
      if (setrlimit (resource_of[i], &want) < 0)
        return securer_error_set (err, errno, "set rlimit %s", securer_rlimit_name (i));
    }
  return 0;
}
