/* The runtime's own executable, kept out of the container's reach.
 *
 * A container's first process, and every process `exec` starts, is this
 * binary until its final execve; through /proc/PID/exe (or a process.args
 * script whose interpreter is "#!/proc/self/exe") a container process can
 * hold the file open and, once no securer-runc runs any more, reopen it
 * for writing: the host's runtime overwritten from inside (runc's
 * CVE-2019-5736).  So the commands that start container processes first
 * re-execute from a sealed memfd copy: /proc/self/exe is then a file no
 * write can change, and the host's binary is never mapped by a process in
 * a container.  Every setup step also runs non-dumpable, so that container
 * processes cannot open /proc/PID/{fd,cwd,root,exe} of a runtime process
 * that still holds host resources (CVE-2016-9962). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/oci.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif

static const int required_seals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;

bool
oci_self_is_sealed (void)
{
  int fd = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  int seals = fcntl (fd, F_GET_SEALS);
  close (fd);
  return seals >= 0 && (seals & required_seals) == required_seals;
}

static int
sealed_copy (securer_err_t *err)
{
  int src = open ("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (src < 0)
    return securer_error_set (err, errno, "open /proc/self/exe");
  /* MFD_EXEC: executable even where vm.memfd_noexec makes memfds
   * non-executable by default; older kernels do not know the flag. */
  int mfd = memfd_create ("securer-runc", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (mfd < 0 && errno == EINVAL)
    mfd = memfd_create ("securer-runc", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  struct stat st;
  if (mfd < 0 || fstat (src, &st) < 0)
    {
      int e = errno;
      close (src);
      if (mfd >= 0)
        close (mfd);
      return securer_error_set (err, e, "memfd copy of the runtime");
    }
  off_t off = 0;
  while (off < st.st_size)
    {
      ssize_t n = sendfile (mfd, src, &off, (size_t) (st.st_size - off));
      if (n <= 0)
        {
          int e = n < 0 ? errno : EIO;
          close (src);
          close (mfd);
          return securer_error_set (err, e, "copy the runtime into a memfd");
        }
    }
  close (src);
  if (fcntl (mfd, F_ADD_SEALS, required_seals) < 0)
    {
      int e = errno;
      close (mfd);
      return securer_error_set (err, e, "seal the memfd copy of the runtime");
    }
  /* Not required: older kernels have no exec seal (it only stops chmod). */
  fcntl (mfd, F_ADD_SEALS, F_SEAL_EXEC);
  return mfd;
}

/* Run from the build tree, the data search (src/lib/paths.c) also looks
 * in the source tree, which it tells from /proc/self/exe; from the memfd
 * it no longer can, so the source tree is named the way it reads. */
static void
keep_build_tree_data (void)
{
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  size_t bl = strlen (SECURER_ABS_BUILDDIR);
  if (n <= 0 || getenv ("SECURER_DATADIR") != NULL)
    return;
  exe[n] = '\0';
  if (strncmp (exe, SECURER_ABS_BUILDDIR, bl) == 0 && exe[bl] == '/')
    setenv ("SECURER_DATADIR", SECURER_ABS_SRCDIR, 0);
}

int
oci_self_protect (char **argv, securer_err_t *err)
{
  if (!oci_self_is_sealed ())
    {
      int mfd = sealed_copy (err);
      if (mfd < 0)
        return securer_error_prefix (err, "protect the runtime binary");
      keep_build_tree_data ();
      extern char **environ;
      fexecve (mfd, argv, environ);
      int e = errno;
      close (mfd);
      return securer_error_set (err, e, "protect the runtime binary: execute the sealed copy");
    }
  /* execveat() named the process after the descriptor ("3"): the name
   * ps and tests expect is the program's. */
  const char *slash = argv[0] ? strrchr (argv[0], '/') : NULL;
  prctl (PR_SET_NAME, slash ? slash + 1 : argv[0] ? argv[0] : "securer-runc", 0, 0, 0);
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "make the runtime non-dumpable");
  return 0;
}
