/* Capabilities: re-raising the effective set in the child after its uid
 * change, and dropping every set in the payload. */
#include <config.h>

#include <errno.h>
#include <string.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/launch.h"
#include "linux/zygote.h"

/* Raw capget/capset: libcap-ng's reader also parses /proc/PID/status
 * (twice), which is most of this step's cost on the launch path. */
static int
caps_get (struct __user_cap_data_struct d[2])
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  return (int) syscall (SYS_capget, &h, d);
}

int
securer_linux_raise_effective (securer_err_t *err)
{
  struct __user_cap_data_struct d[2];
  if (caps_get (d) < 0)
    return securer_error_set (err, errno, "read capabilities");
  d[0].effective = d[0].permitted;
  d[1].effective = d[1].permitted;
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  if (syscall (SYS_capset, &h, d) < 0)
    return securer_error_set (err, errno, "raise effective capabilities");
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
  /* Raw prctl/capset rather than libcap-ng, whose state set-up may read
   * /proc through stdio (an allocation): the payload allocates nothing.
   * Bounding set first (needs CAP_SETPCAP), then ambient, then the rest;
   * EINVAL marks a number past this kernel's last capability. */
  for (int c = 0; prctl (PR_CAPBSET_DROP, c, 0, 0, 0) == 0; c++)
    ;
  if (errno != EINVAL)
    return securer_error_set (err, errno, "drop capabilities from the bounding set");
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return securer_error_set (err, errno, "clear the ambient capabilities");
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct none[2];
  memset (none, 0, sizeof none);
  if (syscall (SYS_capset, &h, none) < 0)
    return securer_error_set (err, errno, "drop capabilities");
  /* Verify rather than trust: a set that is still non-empty is a failure. */
  struct __user_cap_data_struct d[2];
  if (caps_get (d) < 0)
    return securer_error_set (err, errno, "read capabilities");
  for (int i = 0; i < 2; i++)
    if (d[i].effective || d[i].permitted || d[i].inheritable)
      return securer_error_set (err, EPERM, "capabilities still present after dropping them");
  /* No capability is ever ambient unless it is both permitted and
   * inheritable (a kernel invariant), so the empty sets just read say the
   * ambient set is empty too; the bounding set is read back one by one. */
  for (int c = 0; c <= CAP_LAST_CAP; c++)
    if (prctl (PR_CAPBSET_READ, c, 0, 0, 0) == 1)
      return securer_error_set (err, EPERM, "capability %d still in the bounding set", c);
  return 0;
}

int
securer_zygote_keep_setid_caps (securer_err_t *err)
{
  /* A template's payload runs as inside 0 and execs: without SECBIT_NOROOT
   * the exec gives it back its bounding set, so the bounding set is what it
   * keeps.  CAP_SETUID and CAP_SETGID let it become a session's leased id
   * (docs/security.md, "Session templates"); nothing else survives. */
  const uint64_t keep = (1ull << CAP_SETUID) | (1ull << CAP_SETGID);
  if (prctl (PR_SET_SECUREBITS, SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "set securebits");
  for (int c = 0;; c++)
    if (!(keep & (1ull << c)) && prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
      {
        if (errno == EINVAL)
          break;
        return securer_error_set (err, errno, "drop capability %d from the bounding set", c);
      }
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return securer_error_set (err, errno, "clear the ambient capabilities");
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  memset (d, 0, sizeof d);
  d[0].effective = d[0].permitted = (uint32_t) keep;
  if (syscall (SYS_capset, &h, d) < 0)
    return securer_error_set (err, errno, "keep CAP_SETUID and CAP_SETGID only");
  if (caps_get (d) < 0)
    return securer_error_set (err, errno, "read capabilities");
  if (d[0].permitted != keep || d[1].permitted || d[0].inheritable || d[1].inheritable)
    return securer_error_set (err, EPERM, "capabilities other than CAP_SETUID and CAP_SETGID remain");
  for (int c = 0; c <= CAP_LAST_CAP; c++)
    if (prctl (PR_CAPBSET_READ, c, 0, 0, 0) == 1 && !(keep & (1ull << c)))
      return securer_error_set (err, EPERM, "capability %d still in the bounding set", c);
  return 0;
}
