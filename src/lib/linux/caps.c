/* Capabilities with libcap-ng: re-raising the effective set in the child
 * after its uid change, and dropping every set in the payload. */
#include <config.h>

#include <cap-ng.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>

#include "linux/launch.h"

int
securer_linux_raise_effective (securer_err_t *err)
{
  capng_clear (CAPNG_SELECT_BOTH);
  if (capng_get_caps_process () != 0)
    return securer_error_set (err, errno ? errno : EPERM, "read capabilities");
  for (int c = 0; c <= CAP_LAST_CAP; c++)
    if (capng_have_capability (CAPNG_PERMITTED, c)
        && capng_update (CAPNG_ADD, CAPNG_EFFECTIVE, c) != 0)
      return securer_error_set (err, EINVAL, "raise capability %d", c);
  if (capng_apply (CAPNG_SELECT_CAPS) != 0)
    return securer_error_set (err, errno ? errno : EPERM, "raise effective capabilities");
  return 0;
}

int
securer_linux_drop_caps (securer_err_t *err)
{
  /* The root-is-special rules would hand a uid-0 payload a full permitted
   * set again at execve; lock them off first (needs CAP_SETPCAP, which we
   * still hold).  The empty bounding set below covers the same ground, so
   * this is defence in depth. */
  unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED
                       | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (prctl (PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "set securebits");
  capng_clear (CAPNG_SELECT_ALL);
  if (capng_apply (CAPNG_SELECT_ALL) != 0)
    return securer_error_set (err, errno ? errno : EPERM, "drop capabilities");
  /* Verify rather than trust: a set that is still non-empty is a failure. */
  if (capng_get_caps_process () != 0)
    return securer_error_set (err, errno ? errno : EPERM, "read capabilities");
  if (capng_have_capabilities (CAPNG_SELECT_CAPS) != CAPNG_NONE)
    return securer_error_set (err, EPERM, "capabilities still present after dropping them");
  return 0;
}
