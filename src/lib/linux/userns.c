/* User namespace: which host ids the sandbox's single uid/gid map onto,
 * writing the maps from the parent, and switching the child to them. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "linux/launch.h"

/* The kernel's default overflow ids; a root caller's sandbox runs as this
 * host id so it never acts as host root and per-user limits still hold. */
#define OVERFLOW_ID 65534u

static int
resolve_host_id (int64_t want, uint32_t caller, const char *what, uint32_t *out, securer_err_t *err)
{
  if (want == -1)
    {
      *out = caller == 0 ? OVERFLOW_ID : caller;
      return 0;
    }
  if (want < 0 || want >= (int64_t) UINT32_MAX)
    return securer_error_set (err, EINVAL, "host %s %lld is not a valid id", what, (long long) want);
  if (want == 0)
    return securer_error_set (err, EPERM, "host %s 0 would make the sandbox host root; refused", what);
  *out = (uint32_t) want;
  return 0;
}

int
securer_userns_plan (const struct securer_policy *p, struct id_plan *plan, securer_err_t *err)
{
  memset (plan, 0, sizeof *plan);
  plan->uid = p->uid;
  plan->gid = p->gid;
  if (p->uid == UINT32_MAX || p->gid == UINT32_MAX)
    return securer_error_set (err, EINVAL, "inside uid/gid %u/%u is not a valid id", p->uid, p->gid);
  uid_t euid = geteuid ();
  gid_t egid = getegid ();
  if (resolve_host_id (p->host_uid, euid, "uid", &plan->host_uid, err) < 0)
    return -1;
  /* A root caller's gid is 0 too; map it away like the uid. */
  if (resolve_host_id (p->host_gid, euid == 0 ? 0 : egid, "gid", &plan->host_gid, err) < 0)
    return -1;
  plan->privileged = euid == 0;
  return 0;
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

int
securer_userns_become (const struct id_plan *plan, securer_err_t *err)
{
  if (plan->privileged && setgroups (0, NULL) < 0)
    return securer_error_set (err, errno, "drop supplementary groups");
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "keep capabilities across setuid");
  if (setresgid (plan->gid, plan->gid, plan->gid) < 0)
    return securer_error_set (err, errno, "setresgid %u", plan->gid);
  if (setresuid (plan->uid, plan->uid, plan->uid) < 0)
    return securer_error_set (err, errno, "setresuid %u", plan->uid);
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "reset keep-capabilities");
  return securer_linux_raise_effective (err);
}
