/* Per-sandbox host ids: a root caller gives every live sandbox a host uid
 * (and the gid of the same number) of its own, so per-user kernel counters
 * (processes, in-flight fds, inotify, pending signals, pipe buffers, mqueue
 * bytes) are charged to that sandbox alone.
 *
 * Ids are leased with open-file-description locks on one byte each of a
 * lock file, the byte whose offset is the id: the kernel arbitrates
 * between processes without races, and a lease ends when its descriptor is
 * closed, including when the holder dies, so a crashed supervisor never
 * strands an id and nothing needs cleaning. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/launch.h"

/* Above systemd's container range (0x00080000-0x6fffffff) and below its
 * foreign-id range (0x7ffe0000-), where no distribution allocates users. */
#define DEFAULT_FIRST 0x7e000000u
#define DEFAULT_COUNT 65536u

#ifndef SECURER_RUNDIR
#define SECURER_RUNDIR "/run/securer"
#endif
#define LOCK_NAME "host-ids.lock"

int
securer_hostids_range (uint32_t *first, uint32_t *count, securer_err_t *err)
{
  *first = DEFAULT_FIRST;
  *count = DEFAULT_COUNT;
  const char *e = secure_getenv ("SECURER_HOST_IDS");
  if (e == NULL || *e == '\0')
    return 0;
  char *end;
  errno = 0;
  unsigned long long a = strtoull (e, &end, 10);
  if (errno != 0 || end == e || *end != '-')
    goto bad;
  const char *s = end + 1;
  unsigned long long b = strtoull (s, &end, 10);
  if (errno != 0 || end == s || *end != '\0')
    goto bad;
  /* Ids up to 65535 are ordinary users and groups on every distribution;
   * 4294967295 is (uid_t) -1. */
  if (a < 65536 || b < a || b >= 4294967295ull)
    goto bad;
  *first = (uint32_t) a;
  *count = (uint32_t) (b - a + 1);
  return 0;
bad:
  return securer_error_set (err, EINVAL,
                            "SECURER_HOST_IDS='%s': expected FIRST-LAST, ids from 65536 to 4294967294", e);
}

/* The lock directory and file must be root's and writable by root alone:
 * anyone who could replace them could hand two sandboxes the same id. */
static int
check_owned (const struct stat *st, const char *path, securer_err_t *err)
{
  if (st->st_uid != 0 || (st->st_mode & 022) != 0)
    return securer_error_set (err, EPERM, "%s is not root's alone (owner %u, mode %04o)", path,
                              (unsigned) st->st_uid, (unsigned) (st->st_mode & 07777));
  return 0;
}

static int
open_lock_file (securer_err_t *err)
{
  if (mkdir (SECURER_RUNDIR, 0755) < 0 && errno != EEXIST)
    return securer_error_set (err, errno, "create %s", SECURER_RUNDIR);
  int dfd = open (SECURER_RUNDIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return securer_error_set (err, errno, "open %s", SECURER_RUNDIR);
  struct stat st;
  if (fstat (dfd, &st) < 0)
    {
      int e = errno;
      close (dfd);
      return securer_error_set (err, e, "stat %s", SECURER_RUNDIR);
    }
  if (check_owned (&st, SECURER_RUNDIR, err) < 0)
    {
      close (dfd);
      return -1;
    }
  int fd = openat (dfd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  int e = errno;
  close (dfd);
  if (fd < 0)
    return securer_error_set (err, e, "open %s/%s", SECURER_RUNDIR, LOCK_NAME);
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode)
      || check_owned (&st, SECURER_RUNDIR "/" LOCK_NAME, err) < 0)
    {
      if (err != NULL && *err == NULL)
        securer_error_set (err, EINVAL, "%s/%s is not a regular file", SECURER_RUNDIR, LOCK_NAME);
      close (fd);
      return -1;
    }
  return fd;
}

int
securer_hostids_acquire (struct host_id_lease *lease, securer_err_t *err)
{
  lease->fd = -1;
  lease->id = 0;
  uint32_t first, count;
  if (securer_hostids_range (&first, &count, err) < 0)
    return -1;
  int fd = open_lock_file (err);
  if (fd < 0)
    return securer_error_prefix (err, "lease a host id");
  /* A random start spreads concurrent launches over the range, so each
   * usually takes the first byte it tries. */
  uint32_t start = 0;
  if (getrandom (&start, sizeof start, GRND_NONBLOCK) != sizeof start)
    start = (uint32_t) getpid ();
  start %= count;
  for (uint32_t k = 0; k < count; k++)
    {
      uint32_t i = (start + k) % count;
      /* The byte of the id itself, not of its place in this range: a
       * launcher given another range (SECURER_HOST_IDS) that overlaps
       * this one must meet the same lock for the same id. */
      struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = (off_t) first + i, .l_len = 1 };
      if (fcntl (fd, F_OFD_SETLK, &fl) == 0)
        {
          lease->fd = fd;
          lease->id = first + i;
          return 0;
        }
      if (errno != EAGAIN && errno != EACCES)
        {
          int e = errno;
          close (fd);
          return securer_error_set (err, e, "lease a host id: lock %s/%s", SECURER_RUNDIR, LOCK_NAME);
        }
    }
  close (fd);
  return securer_error_set (err, EAGAIN, "lease a host id: all %" PRIu32 " ids from %" PRIu32
                            " are in use by running sandboxes (SECURER_HOST_IDS sets the range)",
                            count, first);
}

void
securer_hostids_release (struct host_id_lease *lease)
{
  if (lease->fd >= 0)
    close (lease->fd);
  lease->fd = -1;
  lease->id = 0;
}
