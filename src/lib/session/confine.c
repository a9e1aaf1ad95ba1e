/* Opening a file named by a less trusted party (a `securer serve` client)
 * inside a directory the operator chose, and nowhere else: the kernel
 * resolves the name (openat2 RESOLVE_BENEATH), so "..", absolute paths and
 * symbolic links cannot lead out of it, whatever is renamed meanwhile. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session/internal.h"

int
securer_open_beneath (const char *dir, const char *name, int flags, mode_t mode,
                      const char *what, securer_err_t *err)
{
  int dfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return securer_error_set (err, errno, "%s: directory", what);
  int fd = securer_openat_beneath (dfd, name, flags, mode, what, err);
  close (dfd);
  return fd;
}

int
securer_openat_beneath (int dfd, const char *name, int flags, mode_t mode, const char *what,
                        securer_err_t *err)
{
  if (name == NULL || name[0] == '\0')
    return securer_error_set (err, EINVAL, "%s: empty name", what);
  if (name[0] == '/')
    return securer_error_set (err, EXDEV, "%s '%s': must be a name relative to its directory, "
                              "refusing an absolute path", what, name);
  /* No symbolic link at all, not even one that stays inside: a link the
   * directory's writers could retarget later is not worth the doubt. */
  struct open_how how = {
    /* openat2 refuses O_PATH with any flag it ignores. */
    .flags = (uint64_t) (flags | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOCTTY)),
    .mode = (flags & O_CREAT) ? mode : 0,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  int fd = (int) syscall (SYS_openat2, dfd, name, &how, sizeof how);
  int e = errno;
  if (fd >= 0)
    return fd;
  switch (e)
    {
    case EXDEV:
      return securer_error_set (err, EXDEV, "%s '%s': leads outside its directory, refusing", what,
                                name);
    case ELOOP:
      return securer_error_set (err, ELOOP, "%s '%s': is or goes through a symbolic link, refusing",
                                what, name);
    case ENOENT:
      return securer_error_set (err, ENOENT, "%s '%s' does not exist", what, name);
    case ENOSYS:
      return securer_error_set (err, ENOSYS, "%s '%s': confining it needs openat2 (Linux 5.6), "
                                "refusing", what, name);
    default:
      return securer_error_set (err, e, "%s '%s'", what, name);
    }
}
