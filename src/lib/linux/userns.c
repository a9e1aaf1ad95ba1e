/* User namespace: which host ids the sandbox's single uid/gid map onto,
 * writing the maps from the parent, and switching the child to them. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/launch.h"

/* host=caller from a root caller, or host=pool: the id leased for this
 * sandbox.  Root's own ids would make the sandbox host root, and one shared
 * id (such as the overflow id) would let one sandbox use up per-user kernel
 * counters of all the others. */
static int
resolve_host_id (int64_t want, uint32_t caller, const char *what, uint32_t pool_id, uint32_t *out,
                 securer_err_t *err)
{
  if (want == SECURER_HOST_POOL || (want == SECURER_HOST_CALLER && caller == 0))
    {
      *out = pool_id;
      return 0;
    }
  if (want == SECURER_HOST_CALLER)
    {
      *out = caller;
      return 0;
    }
  if (want < 0 || want >= (int64_t) UINT32_MAX)
    return securer_error_set (err, EINVAL, "host %s %lld is not a valid id", what, (long long) want);
  if (want == 0)
    return securer_error_set (err, EPERM, "host %s 0 would make the sandbox host root; refused", what);
  *out = (uint32_t) want;
  return 0;
}

static bool
needs_pool (int64_t want, uid_t euid)
{
  return want == SECURER_HOST_POOL || (want == SECURER_HOST_CALLER && euid == 0);
}

int
securer_userns_plan (const struct securer_policy *p, struct id_plan *plan, struct host_id_lease *lease,
                     securer_err_t *err)
{
  memset (plan, 0, sizeof *plan);
  plan->uid = p->uid;
  plan->gid = p->gid;
  if (p->uid == UINT32_MAX || p->gid == UINT32_MAX)
    return securer_error_set (err, EINVAL, "inside uid/gid %u/%u is not a valid id", p->uid, p->gid);
  uid_t euid = geteuid ();
  gid_t egid = getegid ();
  plan->privileged = euid == 0;
  /* Without a user namespace too: its ids are then the host ids the
   * payload runs as, so a root caller's payload is still never host root. */
  if (needs_pool (p->host_uid, euid) || needs_pool (p->host_gid, euid))
    {
      if (euid != 0)
        return securer_error_set (err, EPERM, "host=pool: only a root caller can give each sandbox a "
                                  "host uid of its own (this caller is uid %u)", (unsigned) euid);
      if (securer_hostids_acquire (lease, err) < 0)
        return -1;
    }
  if (resolve_host_id (p->host_uid, euid, "uid", lease->id, &plan->host_uid, err) < 0)
    return -1;
  /* A root caller's gid is 0 too; map it away like the uid. */
  if (resolve_host_id (p->host_gid, euid == 0 ? 0 : egid, "gid", lease->id, &plan->host_gid, err) < 0)
    return -1;
  return 0;
}

/* Only the calling thread's credentials change (the raw syscall, not libc's
 * wrapper, which would change every thread of a multi-threaded caller):
 * the clone in between creates the user namespace, and so charges every
 * per-user counter inside it, to the sandbox's host ids instead of root.
 * The real and saved ids stay root's, so the switch back is allowed and
 * brings the capabilities back. */
int
securer_userns_owner_enter (const struct id_plan *plan, struct owner_switch *sw, securer_err_t *err)
{
  sw->active = false;
  if (!plan->privileged || plan->host_uid == 0)
    return 0;
  sw->egid = getegid ();
  sw->dumpable = prctl (PR_GET_DUMPABLE, 0, 0, 0, 0);
  if (syscall (SYS_setresgid, -1, plan->host_gid, -1) < 0)
    return securer_error_set (err, errno, "become host gid %u to create the user namespace", plan->host_gid);
  if (syscall (SYS_setresuid, -1, plan->host_uid, -1) < 0)
    {
      int e = errno;
      (void) syscall (SYS_setresgid, -1, sw->egid, -1);
      return securer_error_set (err, e, "become host uid %u to create the user namespace", plan->host_uid);
    }
  sw->active = true;
  return 0;
}

void
securer_userns_owner_leave (struct owner_switch *sw)
{
  if (!sw->active)
    return;
  /* Cannot fail: the real uid is 0.  Should it ever, the process must not
   * go on with another identity than the one its caller gave it. */
  if (syscall (SYS_setresuid, -1, 0, -1) < 0 || syscall (SYS_setresgid, -1, sw->egid, -1) < 0)
    abort ();
  /* An effective-id change made the process undumpable; put back what the
   * caller had. */
  if (sw->dumpable > 0)
    (void) prctl (PR_SET_DUMPABLE, sw->dumpable, 0, 0, 0);
  sw->active = false;
}

static int
write_proc (pid_t pid, const char *file, const char *text, securer_err_t *err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return securer_error_set (err, errno, "open %s", path);
  size_t len = strlen (text);
  ssize_t n = write (fd, text, len);
  int e = errno;
  close (fd);
  if (n != (ssize_t) len)
    return securer_error_set (err, n < 0 ? e : EIO, "write '%.*s' to %s", (int) strcspn (text, "\n"),
                              text, path);
  return 0;
}

int
securer_userns_write_maps (pid_t pid, const struct id_plan *plan, securer_err_t *err)
{
  char line[64];
  snprintf (line, sizeof line, "%u %u 1\n", plan->uid, plan->host_uid);
  if (write_proc (pid, "uid_map", line, err) < 0)
    return securer_error_prefix (err, "map uid");
  /* An unprivileged caller must deny setgroups before it may write a gid
   * map.  A root caller leaves it allowed only so that init can drop the
   * caller's supplementary groups (host gid 0 among them); the map holds a
   * single gid, so nothing else can ever be set. */
  if (!plan->privileged && write_proc (pid, "setgroups", "deny", err) < 0)
    return securer_error_prefix (err, "map gid");
  snprintf (line, sizeof line, "%u %u 1\n", plan->gid, plan->host_gid);
  if (write_proc (pid, "gid_map", line, err) < 0)
    return securer_error_prefix (err, "map gid");
  return 0;
}

/* Raw syscalls, not glibc's wrappers: in a clone of a multi-threaded caller
 * glibc still counts the caller's threads and would signal each of them to
 * change ids too (nptl setxid), waiting forever for threads that do not
 * exist in the child.  The child has one thread; the raw call covers it. */
int
securer_userns_become (const struct id_plan *plan, securer_err_t *err)
{
  if (plan->privileged && syscall (SYS_setgroups, 0, NULL) < 0)
    return securer_error_set (err, errno, "drop supplementary groups");
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "keep capabilities across setuid");
  if (syscall (SYS_setresgid, plan->gid, plan->gid, plan->gid) < 0)
    return securer_error_set (err, errno, "setresgid %u", plan->gid);
  if (syscall (SYS_setresuid, plan->uid, plan->uid, plan->uid) < 0)
    return securer_error_set (err, errno, "setresuid %u", plan->uid);
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "reset keep-capabilities");
  return securer_linux_raise_effective (err);
}
