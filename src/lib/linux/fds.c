/* File descriptors of the payload: the std fds and pass_fds in place,
 * everything else closed, so nothing of the caller leaks in. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "linux/launch.h"

int
securer_linux_close_fds_above (int keep_max, securer_err_t *err)
{
  if (close_range ((unsigned) keep_max + 1, ~0u, 0) == 0)
    return 0;
  if (errno != ENOSYS && errno != EINVAL)
    return securer_error_set (err, errno, "close_range");
  /* Old kernels: walk the descriptor table up to the limit. */
  struct rlimit rl;
  long max = getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long) rl.rlim_cur : 65536;
  for (long fd = keep_max + 1; fd < max; fd++)
    close ((int) fd);
  return 0;
}

/* Moves fd to a number above `floor` so placing others cannot clobber it. */
static int
lift (int fd, int floor, securer_err_t *err)
{
  int n = fcntl (fd, F_DUPFD_CLOEXEC, floor);
  if (n < 0)
    return securer_error_set (err, errno, "duplicate fd %d", fd);
  return n;
}

int
securer_linux_arrange_fds (int in, int out, int errfd, const int *pass, unsigned n_pass,
                           int *lifted, int keep, int keep_at, securer_err_t *err)
{
  /* First lift every source above all targets, then put each in place: no
   * source can be overwritten before it is used. */
  int floor = 3 + (int) n_pass;
  if (keep_at < floor)
    return securer_error_set (err, EMFILE, "no room for %u passed fds below fd %d", n_pass, keep_at);
  int std[3] = { in, out, errfd };
  int lifted_std[3] = { -1, -1, -1 };
  for (int i = 0; i < 3; i++)
    if (std[i] >= 0 && (lifted_std[i] = lift (std[i], floor, err)) < 0)
      return -1;
  for (unsigned i = 0; i < n_pass; i++)
    if ((lifted[i] = lift (pass[i], floor, err)) < 0)
      return securer_error_prefix (err, "pass fd %d", pass[i]);
  int k = keep;
  if (keep != keep_at && (k = lift (keep, floor, err)) < 0)
    return -1;
  for (int i = 0; i < 3; i++)
    if (lifted_std[i] >= 0 && dup2 (lifted_std[i], i) < 0)
      return securer_error_set (err, errno, "dup2 onto fd %d", i);
  for (unsigned i = 0; i < n_pass; i++)
    if (dup2 (lifted[i], 3 + (int) i) < 0)
      return securer_error_set (err, errno, "dup2 onto fd %u", 3 + i);
  /* 0..2 and the passed fds must survive exec even if the caller marked them CLOEXEC. */
  for (int fd = 0; fd < floor; fd++)
    {
      int fl = fcntl (fd, F_GETFD);
      if (fl >= 0 && (fl & FD_CLOEXEC))
        fcntl (fd, F_SETFD, fl & ~FD_CLOEXEC);
    }
  /* Close everything else while the descriptor table is still small, and
   * only then move the sync socket up to keep_at: close_range visits every
   * slot of the table up to its end, and a table grown to keep_at (the
   * NOFILE hard limit, often 2^20) would make that a loop over a million
   * slots. */
  if (k > floor && close_range ((unsigned) floor, (unsigned) k - 1, 0) < 0)
    for (int fd = floor; fd < k; fd++)
      close (fd);
  if (securer_linux_close_fds_above (k, err) < 0)
    return -1;
  if (k != keep_at)
    {
      if (dup3 (k, keep_at, O_CLOEXEC) < 0)
        return securer_error_set (err, errno, "move the sync socket to fd %d", keep_at);
      close (k);
    }
  return 0;
}
