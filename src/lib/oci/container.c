/* The container's first process: builds its filesystem from the bundle's
 * rootfs and mounts, pivots into it, then sets up the process the spec
 * describes and waits on the exec fifo until `start`.
 *
 * Every destination is resolved inside the rootfs with openat2
 * (RESOLVE_IN_ROOT) and mounted through its /proc/self/fd link, so a
 * symlink planted in an image cannot send a mount out of the rootfs. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <seccomp.h>
#include <stddef.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include "linux/linux.h"
#include "oci/oci.h"
#include "seccomp/seccomp.h"

static int
sys_openat2 (int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
  struct open_how how = { .flags = flags, .mode = 0, .resolve = resolve };
  /* EAGAIN: a mount or rename anywhere on the host raced a scoped ".."
   * (a relative symlink's); openat2(2) asks the caller to try again.
   * Bounded, so that a process renaming without pause cannot hold the
   * runtime here. */
  int fd = -1;
  for (int tries = 0; tries < 1000; tries++)
    if ((fd = (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how)) >= 0 || errno != EAGAIN)
      break;
  return fd;
}

enum want { WANT_DIR, WANT_FILE };

/* O_PATH descriptor of path inside rootfd, creating what is missing (the
 * last component as a directory or an empty file). */
static int
open_in_root (int rootfd, const char *path, enum want want, securer_err_t *err)
{
  const uint64_t res = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  int fd = sys_openat2 (rootfd, path, O_PATH | O_CLOEXEC, res);
  if (fd >= 0 || errno != ENOENT)
    return fd >= 0 ? fd : securer_error_set (err, errno, "open %s in the rootfs", path);
  char *p = strdup (path);
  size_t len = strlen (p);
  /* Walk the components, creating each missing one. */
  for (size_t i = 1; i <= len; i++)
    {
      if (p[i] != '/' && p[i] != '\0')
        continue;
      char save = p[i];
      p[i] = '\0';
      int cfd = sys_openat2 (rootfd, p, O_PATH | O_CLOEXEC, res);
      if (cfd < 0 && errno == ENOENT)
        {
          char *slash = strrchr (p, '/');
          *slash = '\0';
          int pfd = sys_openat2 (rootfd, *p ? p : "/", O_PATH | O_DIRECTORY | O_CLOEXEC, res);
          *slash = '/';
          if (pfd < 0)
            {
              securer_error_set (err, errno, "open parent of %s in the rootfs", p);
              free (p);
              return -1;
            }
          int rc;
          if (save == '\0' && want == WANT_FILE)
            {
              rc = openat (pfd, slash + 1, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
              if (rc >= 0)
                close (rc);
            }
          else
            rc = mkdirat (pfd, slash + 1, 0755);
          close (pfd);
          if (rc < 0 && errno != EEXIST)
            {
              securer_error_set (err, errno, "create %s in the rootfs", p);
              free (p);
              return -1;
            }
          cfd = sys_openat2 (rootfd, p, O_PATH | O_CLOEXEC, res);
        }
      if (cfd < 0)
        {
          securer_error_set (err, errno, "open %s in the rootfs", p);
          free (p);
          return -1;
        }
      p[i] = save;
      if (save == '\0')
        {
          free (p);
          return cfd;
        }
      close (cfd);
    }
  free (p);
  return securer_error_set (err, EINVAL, "empty path");
}

static void
fd_path (int fd, char buf[64])
{
  snprintf (buf, 64, "/proc/self/fd/%d", fd);
}

/* Flags a remount must keep: the kernel refuses to clear locked ones. */
static unsigned long
kept_flags (const char *path)
{
  static const struct { unsigned long st, ms; } map[] = {
    { ST_NOSUID, MS_NOSUID }, { ST_NODEV, MS_NODEV }, { ST_NOEXEC, MS_NOEXEC },
    { ST_RDONLY, MS_RDONLY }, { ST_NOATIME, MS_NOATIME }, { ST_NODIRATIME, MS_NODIRATIME },
    { ST_RELATIME, MS_RELATIME },
  };
  struct statvfs sv;
  unsigned long f = 0;
  if (statvfs (path, &sv) < 0)
    return 0;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (sv.f_flag & map[i].st)
      f |= map[i].ms;
  return f;
}

/* A bind mount takes its per-mount flags only from a remount. */
static int
bind_remount (const char *target, unsigned long flags, unsigned long clear, securer_err_t *err)
{
  unsigned long keep = kept_flags (target) & ~clear & ~(MS_RDONLY);
  const unsigned long per_mount = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME
                                  | MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME;
  if (mount (NULL, target, NULL, MS_BIND | MS_REMOUNT | (flags & per_mount) | keep, NULL) == 0)
    return 0;
  /* In a user namespace flags set by the owner are locked: keep them all. */
  if (errno == EPERM
      && mount (NULL, target, NULL, MS_BIND | MS_REMOUNT | (flags & per_mount) | kept_flags (target),
                NULL) == 0)
    return 0;
  return securer_error_set (err, errno, "remount %s", target);
}

static int cgroup_binds (const struct oci_launch *l, const struct oci_mount *m, const char *target,
                         securer_err_t *err);

static int
cgroup_mount (const struct oci_launch *l, int rootfd, const struct oci_mount *m, const char *tmpfs_at,
              securer_err_t *err)
{
  size_t n = oci_cgroup_count (l->cg);
  if (n == 0)
    return securer_error_set (err, ENOENT, "mount cgroup on %s: the container has no cgroup", m->dest);
  struct statfs sf;
  if (statfs ("/sys/fs/cgroup", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
    {
      /* Unified host: the container's own directory is the mount. */
      if (mount (oci_cgroup_dir (l->cg, 0), tmpfs_at, NULL, MS_BIND | MS_REC, NULL) < 0)
        return securer_error_set (err, errno, "bind cgroup on %s", m->dest);
      int fd = open_in_root (rootfd, m->dest, WANT_DIR, err);
      if (fd < 0)
        return -1;
      char target[64];
      fd_path (fd, target);
      int rc = bind_remount (target, m->flags | MS_NOSUID | MS_NODEV | MS_NOEXEC, m->clear, err);
      close (fd);
      return rc;
    }
  if (mount ("cgroup", tmpfs_at, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755") < 0)
    return securer_error_set (err, errno, "mount tmpfs for cgroups on %s", m->dest);
  /* The descriptor still points below the new tmpfs: reopen. */
  int fd = open_in_root (rootfd, m->dest, WANT_DIR, err);
  if (fd < 0)
    return -1;
  char target[64];
  fd_path (fd, target);
  int rc = cgroup_binds (l, m, target, err);
  close (fd);
  return rc;
}

static int
cgroup_binds (const struct oci_launch *l, const struct oci_mount *m, const char *target,
              securer_err_t *err)
{
  size_t n = oci_cgroup_count (l->cg);
  for (size_t i = 0; i < n; i++)
    {
      const char *dir = oci_cgroup_dir (l->cg, i);
      /* dir is MOUNTPOINT/PATH; the hierarchy's name is the mount point's
       * last component (cpu, memory, unified, systemd, ...). */
      const char *rel = dir + strlen ("/sys/fs/cgroup/");
      char name[64];
      size_t k = strcspn (rel, "/");
      if (strncmp (dir, "/sys/fs/cgroup/", 15) != 0 || k == 0 || k >= sizeof name)
        return securer_error_set (err, EINVAL, "cgroup mount: unexpected hierarchy %s", dir);
      memcpy (name, rel, k);
      name[k] = '\0';
      char *sub = malloc (strlen (target) + k + 2);
      sprintf (sub, "%s/%s", target, name);
      int rc = mkdir (sub, 0755);
      if ((rc < 0 && errno != EEXIST) || mount (dir, sub, NULL, MS_BIND | MS_REC, NULL) < 0
          || bind_remount (sub, m->flags | MS_NOSUID | MS_NODEV | MS_NOEXEC, m->clear, err) < 0)
        {
          if (err && *err == NULL)
            securer_error_set (err, errno, "bind cgroup %s on %s", dir, sub);
          free (sub);
          return -1;
        }
      free (sub);
    }
  if ((m->flags & MS_RDONLY) && bind_remount (target, m->flags, m->clear, err) < 0)
    return -1;
  return 0;
}

/* tmpcopyup: copies the tree below from (the directory the tmpfs now
 * covers) into to (the new tmpfs), keeping modes and owners.  Nothing is
 * followed: symlinks are copied as links, other special files skipped. */
static int
copy_tree (int from, int to, const char *where, securer_err_t *err)
{
  int dup_from = dup (from);
  DIR *d = dup_from >= 0 ? fdopendir (dup_from) : NULL;
  if (d == NULL)
    {
      if (dup_from >= 0)
        close (dup_from);
      return securer_error_set (err, errno, "tmpcopyup: read %s", where);
    }
  int rc = 0;
  for (struct dirent *e; rc == 0 && (e = readdir (d));)
    {
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      struct stat st;
      if (fstatat (from, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          rc = securer_error_set (err, errno, "tmpcopyup: stat %s/%s", where, e->d_name);
          break;
        }
      int sf = -1, df = -1;
      if (S_ISDIR (st.st_mode))
        {
          if (mkdirat (to, e->d_name, st.st_mode & 07777) < 0
              || (sf = openat (from, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0
              || (df = openat (to, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
            rc = securer_error_set (err, errno, "tmpcopyup: directory %s/%s", where, e->d_name);
          else
            rc = copy_tree (sf, df, e->d_name, err);
        }
      else if (S_ISREG (st.st_mode))
        {
          sf = openat (from, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
          df = openat (to, e->d_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 07777);
          char buf[65536];
          ssize_t n = 0;
          while (sf >= 0 && df >= 0 && (n = read (sf, buf, sizeof buf)) > 0)
            if (write (df, buf, (size_t) n) != n)
              {
                n = -1;
                break;
              }
          if (sf < 0 || df < 0 || n < 0)
            rc = securer_error_set (err, errno, "tmpcopyup: file %s/%s", where, e->d_name);
        }
      else if (S_ISLNK (st.st_mode))
        {
          char target[4096];
          ssize_t n = readlinkat (from, e->d_name, target, sizeof target - 1);
          if (n < 0)
            rc = securer_error_set (err, errno, "tmpcopyup: link %s/%s", where, e->d_name);
          else
            {
              target[n] = '\0';
              if (symlinkat (target, to, e->d_name) < 0)
                rc = securer_error_set (err, errno, "tmpcopyup: link %s/%s", where, e->d_name);
            }
        }
      else
        continue;
      if (rc == 0 && fchownat (to, e->d_name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
        rc = securer_error_set (err, errno, "tmpcopyup: owner of %s/%s", where, e->d_name);
      if (rc == 0 && S_ISDIR (st.st_mode) && fchmod (df, st.st_mode & 07777) < 0)
        rc = securer_error_set (err, errno, "tmpcopyup: mode of %s/%s", where, e->d_name);
      if (sf >= 0)
        close (sf);
      if (df >= 0)
        close (df);
    }
  closedir (d);
  return rc;
}

static int
do_mount (const struct oci_launch *l, int rootfd, const struct oci_mount *m, securer_err_t *err)
{
  enum want want = WANT_DIR;
  if (m->bind)
    {
      struct stat st;
      if (stat (m->source, &st) < 0)
        return securer_error_set (err, errno, "bind source %s", m->source);
      if (!S_ISDIR (st.st_mode))
        want = WANT_FILE;
    }
  int fd = open_in_root (rootfd, m->dest, want, err);
  if (fd < 0)
    return -1;
  char target[64];
  fd_path (fd, target);
  int rc = 0;
  if (m->bind)
    {
      if (mount (m->source, target, NULL, MS_BIND | (m->recursive ? MS_REC : 0), NULL) < 0)
        rc = securer_error_set (err, errno, "bind %s on %s", m->source, m->dest);
    }
  else if (strcmp (m->type, "cgroup") == 0 || strcmp (m->type, "cgroup2") == 0)
    rc = cgroup_mount (l, rootfd, m, target, err);
  else
    {
      unsigned long f = m->flags & ~MS_REMOUNT;
      /* What the tmpfs will cover, opened before it does. */
      int under = m->copyup ? open (target, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
      if (m->copyup && under < 0)
        rc = securer_error_set (err, errno, "tmpcopyup: open %s", m->dest);
      else if (mount (m->source ? m->source : m->type, target, m->type,
                      m->copyup ? f & ~MS_RDONLY : f, m->data) < 0)
        rc = securer_error_set (err, errno, "mount %s on %s", m->type, m->dest);
      else if (m->copyup)
        {
          int top = open_in_root (rootfd, m->dest, WANT_DIR, err);
          int topd = top >= 0 ? openat (top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
          if (topd < 0 || copy_tree (under, topd, m->dest, err) < 0)
            rc = err && *err ? -1 : securer_error_set (err, errno, "tmpcopyup: %s", m->dest);
          if (top >= 0)
            close (top);
          if (topd >= 0)
            close (topd);
        }
      if (under >= 0)
        close (under);
      /* Read-only after the copy (the mount was made writable for it). */
      if (rc == 0 && m->copyup && (f & MS_RDONLY))
        {
          int top = open_in_root (rootfd, m->dest, WANT_DIR, err);
          char t2[64];
          fd_path (top, t2);
          if (top < 0 || mount (NULL, t2, NULL, MS_REMOUNT | f, m->data) < 0)
            rc = err && *err ? -1 : securer_error_set (err, errno, "remount %s read-only", m->dest);
          if (top >= 0)
            close (top);
        }
    }
  close (fd);
  if (rc < 0)
    return -1;
  /* The new mount is on top of what fd pointed at: reopen to reach it. */
  if ((m->bind && (m->flags & ~MS_REMOUNT)) || m->propagation)
    {
      fd = open_in_root (rootfd, m->dest, want, err);
      if (fd < 0)
        return -1;
      fd_path (fd, target);
      if (m->bind && (m->flags & ~MS_REMOUNT) && bind_remount (target, m->flags, m->clear, err) < 0)
        rc = -1;
      else if (m->propagation && mount (NULL, target, NULL, m->propagation, NULL) < 0)
        rc = securer_error_set (err, errno, "propagation of %s", m->dest);
      close (fd);
    }
  return rc;
}

/* The devices every container gets (as runc gives them). */
static const struct { const char *path; unsigned maj, min; } default_devices[] = {
  { "/dev/null", 1, 3 }, { "/dev/zero", 1, 5 }, { "/dev/full", 1, 7 },
  { "/dev/random", 1, 8 }, { "/dev/urandom", 1, 9 }, { "/dev/tty", 5, 0 },
};

static int
make_device (int rootfd, const char *path, char type, unsigned maj, unsigned min, mode_t mode,
             uid_t uid, gid_t gid, bool bind, securer_err_t *err)
{
  /* The parent directory, resolved in the rootfs; the node made in it. */
  char *dir = strdup (path);
  char *slash = strrchr (dir, '/');
  *slash = '\0';
  int dfd = open_in_root (rootfd, *dir ? dir : "/", WANT_DIR, err);
  const char *name = path + (slash - dir) + 1;
  free (dir);
  if (dfd < 0)
    return -1;
  unlinkat (dfd, name, 0);
  int rc = 0;
  if (bind)
    {
      /* In a user namespace mknod is not allowed: bind the host's node. */
      int f = openat (dfd, name, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (f < 0)
        rc = securer_error_set (err, errno, "create %s", path);
      else
        {
          char target[64];
          fd_path (f, target);
          char host[64];
          snprintf (host, sizeof host, "/dev/char/%u:%u", maj, min);
          if (mount (type == 'b' ? path : host, target, NULL, MS_BIND, NULL) < 0
              && mount (path, target, NULL, MS_BIND, NULL) < 0)
            rc = securer_error_set (err, errno, "bind device %s", path);
          close (f);
        }
    }
  else
    {
      mode_t t = type == 'b' ? S_IFBLK : type == 'p' ? S_IFIFO : S_IFCHR;
      if (mknodat (dfd, name, t | (mode & 07777), makedev (maj, min)) < 0)
        rc = securer_error_set (err, errno, "mknod %s", path);
      else if (fchmodat (dfd, name, mode & 07777, 0) < 0
               || fchownat (dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
        rc = securer_error_set (err, errno, "set mode and owner of %s", path);
    }
  close (dfd);
  return rc;
}

static int
make_devices (const struct oci_launch *l, int rootfd, securer_err_t *err)
{
  const struct oci_spec *s = l->spec;
  bool userns = s->ns_wanted[OCI_NS_USER];
  for (size_t i = 0; i < sizeof default_devices / sizeof default_devices[0]; i++)
    if (make_device (rootfd, default_devices[i].path, 'c', default_devices[i].maj,
                     default_devices[i].min, 0666, 0, 0, userns, err) < 0)
      return -1;
  for (size_t i = 0; i < s->n_devices; i++)
    {
      const struct oci_device *d = &s->devices[i];
      if (make_device (rootfd, d->path, d->type, (unsigned) d->major, (unsigned) d->minor, d->mode,
                       d->uid, d->gid, userns, err) < 0)
        return -1;
    }
  static const char *const links[][2] = {
    { "/proc/self/fd", "/dev/fd" }, { "/proc/self/fd/0", "/dev/stdin" },
    { "/proc/self/fd/1", "/dev/stdout" }, { "/proc/self/fd/2", "/dev/stderr" },
    { "pts/ptmx", "/dev/ptmx" },
  };
  int dfd = open_in_root (rootfd, "/dev", WANT_DIR, err);
  if (dfd < 0)
    return -1;
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    {
      const char *name = links[i][1] + 5;
      if (strcmp (name, "ptmx") == 0)
        unlinkat (dfd, name, 0);
      if (symlinkat (links[i][0], dfd, name) < 0 && errno != EEXIST)
        {
          close (dfd);
          return securer_error_set (err, errno, "symlink %s", links[i][1]);
        }
    }
  close (dfd);
  return 0;
}

static int
pivot (const char *rootfs, securer_err_t *err)
{
  if (chdir (rootfs) < 0)
    return securer_error_set (err, errno, "chdir %s", rootfs);
  /* pivot_root(".", ".") stacks the old root under the new one; detaching
   * it then leaves only the container's root (no put_old directory needed,
   * so a read-only rootfs works). */
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return securer_error_set (err, errno, "pivot_root to %s", rootfs);
  if (mount (NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    return securer_error_set (err, errno, "make the old root a slave");
  if (umount2 (".", MNT_DETACH) < 0)
    return securer_error_set (err, errno, "detach the old root");
  if (chdir ("/") < 0)
    return securer_error_set (err, errno, "chdir /");
  return 0;
}

/* After pivot_root, /proc is the container's: it must be a real procfs
 * (not a directory or links of the image) before a mount goes through
 * /proc/self/fd or a sysctl is written under /proc/sys. */
static int
check_proc (const char *what, securer_err_t *err)
{
  int fd = sys_openat2 (AT_FDCWD, "/proc", O_PATH | O_DIRECTORY | O_CLOEXEC,
                        RESOLVE_NO_SYMLINKS);
  struct statfs sf;
  bool ok = fd >= 0 && fstatfs (fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
  if (fd >= 0)
    close (fd);
  if (!ok)
    return securer_error_set (err, EINVAL, "%s: needs a proc mount on /proc", what);
  return 0;
}

static int
apply_sysctls (const struct oci_spec *s, securer_err_t *err)
{
  if (s->n_sysctl && check_proc ("linux.sysctl", err) < 0)
    return -1;
  for (size_t i = 0; i < s->n_sysctl; i++)
    {
      char path[256];
      snprintf (path, sizeof path, "/proc/sys/%s", s->sysctl_keys[i]);
      for (char *c = path + 10; *c; c++)
        if (*c == '.')
          *c = '/';
      if (oci_write_file (path, s->sysctl_values[i], err) < 0)
        return securer_error_prefix (err, "linux.sysctl.%s", s->sysctl_keys[i]);
    }
  return 0;
}

/* A masked or read-only path, after pivot_root: resolved without magic
 * links and kept open, so that what is checked is what gets mounted on
 * (through /proc/self/fd; nothing can be swapped in between).  -1 with
 * errno ENOENT: not there, nothing to do. */
static int
open_target (const char *what, const char *p, struct stat *st, securer_err_t *err)
{
  int fd = sys_openat2 (AT_FDCWD, p, O_PATH | O_CLOEXEC, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  if (fd < 0)
    {
      if (errno != ENOENT)
        securer_error_set (err, errno, "%s: %s", what, p);
      return -1;
    }
  if (fstat (fd, st) < 0)
    {
      securer_error_set (err, errno, "%s: %s", what, p);
      close (fd);
      return -1;
    }
  return fd;
}

/* The container's /dev/null, which masks files: it must be the null
 * device (runc's CVE-2025-31133: a /dev/null replaced by anything else
 * would be bound over the masked files, or a link to what it names). */
static int
open_null (securer_err_t *err)
{
  int fd = open ("/dev/null", O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      securer_error_set (err, errno, "maskedPaths: open /dev/null");
      if (fd >= 0)
        close (fd);
      return -1;
    }
  if (!S_ISCHR (st.st_mode) || st.st_rdev != makedev (1, 3))
    {
      close (fd);
      return securer_error_set (err, EPERM, "maskedPaths: /dev/null is not the null device (1:3)");
    }
  return fd;
}

static int
mask_paths (const struct oci_spec *s, securer_err_t *err)
{
  if ((s->n_masked || s->n_readonly)
      && check_proc (s->n_masked ? "maskedPaths" : "readonlyPaths", err) < 0)
    return -1;
  int null = s->n_masked ? open_null (err) : -1;
  if (s->n_masked && null < 0)
    return -1;
  char src[64], target[64];
  fd_path (null, src);
  for (size_t i = 0; i < s->n_masked; i++)
    {
      const char *p = s->masked[i];
      struct stat st;
      int fd = open_target ("maskedPaths", p, &st, err);
      if (fd < 0)
        {
          if (err && *err)
            {
              close (null);
              return -1;
            }
          continue;
        }
      fd_path (fd, target);
      int rc = S_ISDIR (st.st_mode)
                 ? mount ("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0")
                 : mount (src, target, NULL, MS_BIND, NULL);
      int e = errno;
      close (fd);
      if (rc < 0)
        {
          close (null);
          return securer_error_set (err, e, "maskedPaths: %s", p);
        }
    }
  if (null >= 0)
    close (null);
  for (size_t i = 0; i < s->n_readonly; i++)
    {
      const char *p = s->readonly[i];
      struct stat st;
      int fd = open_target ("readonlyPaths", p, &st, err);
      if (fd < 0)
        {
          if (err && *err)
            return -1;
          continue;
        }
      fd_path (fd, target);
      int rc = mount (target, target, NULL, MS_BIND | MS_REC, NULL);
      int e = errno;
      close (fd);
      if (rc < 0)
        return securer_error_set (err, e, "readonlyPaths: %s", p);
      /* The new mount is on top of what fd pointed at: reopen to reach it. */
      fd = open_target ("readonlyPaths", p, &st, err);
      if (fd < 0)
        return err && *err ? -1 : securer_error_set (err, ENOENT, "readonlyPaths: %s", p);
      fd_path (fd, target);
      rc = bind_remount (target, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, 0, err);
      close (fd);
      if (rc < 0)
        return securer_error_prefix (err, "readonlyPaths: %s", p);
    }
  return 0;
}

/* The pty of a `terminal` process: its master goes to the engine over the
 * console socket, its slave becomes stdin/stdout/stderr. */
static int
setup_console (int sock, const struct oci_process *p, securer_err_t *err)
{
  int master = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return securer_error_set (err, errno, "open /dev/ptmx");
  int unlock = 0;
  char name[64];
  struct statfs sf;
  if (fstatfs (master, &sf) < 0 || sf.f_type != DEVPTS_SUPER_MAGIC)
    {
      close (master);
      return securer_error_set (err, EINVAL, "process.terminal: /dev/ptmx is not a devpts ptmx");
    }
  if (ioctl (master, TIOCSPTLCK, &unlock) < 0 || ptsname_r (master, name, sizeof name) != 0)
    {
      close (master);
      return securer_error_set (err, errno, "unlock the pty");
    }
  /* The peer of this master, not whatever the container's /dev/pts/N
   * names. */
  int slave = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY);
  if (slave < 0)
    {
      close (master);
      return securer_error_set (err, errno, "open the pty's peer (%s)", name);
    }
  struct winsize ws = { .ws_row = p->rows, .ws_col = p->cols };
  if ((p->rows || p->cols) && ioctl (slave, TIOCSWINSZ, &ws) < 0)
    {
      close (master);
      close (slave);
      return securer_error_set (err, errno, "process.consoleSize");
    }
  char data[] = "/dev/ptmx";
  struct iovec iov = { data, sizeof data - 1 };
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  memset (&u, 0, sizeof u);
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = sizeof u.buf };
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &master, sizeof (int));
  ssize_t n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  int e = errno;
  close (master);
  if (n < 0)
    {
      close (slave);
      return securer_error_set (err, e, "send the pty to the console socket");
    }
  if (setsid () < 0 && errno != EPERM)
    return securer_error_set (err, errno, "setsid");
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return securer_error_set (err, errno, "make %s the controlling terminal", name);
  for (int fd = 0; fd < 3; fd++)
    if (dup2 (slave, fd) < 0)
      return securer_error_set (err, errno, "dup the pty to fd %d", fd);
  if (slave > 2)
    close (slave);
  return 0;
}

/* process.args[0] looked up in the PATH of process.env (not ours). */
static char *
lookup (char *const *env, const char *cmd)
{
  if (strchr (cmd, '/'))
    return strdup (cmd);
  const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (size_t i = 0; env && env[i]; i++)
    if (strncmp (env[i], "PATH=", 5) == 0)
      path = env[i] + 5;
  char buf[4096];
  for (const char *p = path; p;)
    {
      const char *colon = strchr (p, ':');
      size_t n = colon ? (size_t) (colon - p) : strlen (p);
      snprintf (buf, sizeof buf, "%.*s/%s", (int) n, n ? p : ".", cmd);
      struct stat st;
      if (stat (buf, &st) == 0 && S_ISREG (st.st_mode) && access (buf, X_OK) == 0)
        return strdup (buf);
      p = colon ? colon + 1 : NULL;
    }
  return NULL;
}

static int
set_caps (const struct oci_process *p, securer_err_t *err)
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2] = {
    { (uint32_t) p->cap_effective, (uint32_t) p->cap_permitted, (uint32_t) p->cap_inheritable },
    { (uint32_t) (p->cap_effective >> 32), (uint32_t) (p->cap_permitted >> 32),
      (uint32_t) (p->cap_inheritable >> 32) },
  };
  if (syscall (SYS_capset, &h, d) < 0)
    return securer_error_set (err, errno, "process.capabilities: set effective/permitted/inheritable");
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "process.capabilities.ambient: clear");
  /* Only what is permitted and inheritable is left (oci_process_parse);
   * EINVAL is a capability this kernel does not have, which runc skips as
   * it does in the other sets. */
  for (int c = 0; c < 64; c++)
    if ((p->cap_ambient >> c) & 1)
      if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0 && errno != EINVAL)
        return securer_error_set (err, errno, "process.capabilities.ambient: raise %d", c);
  return 0;
}

static int
drop_bounding (const struct oci_process *p, securer_err_t *err)
{
  for (int c = 0; c < 64; c++)
    {
      if ((p->cap_bounding >> c) & 1)
        continue;
      if (prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0)
        {
          if (errno == EINVAL)
            break;  /* past the kernel's last capability */
          return securer_error_set (err, errno, "process.capabilities.bounding: drop %d", c);
        }
    }
  return 0;
}

static int
set_identity (const struct oci_process *p, securer_err_t *err)
{
  if (setgroups (p->n_groups, p->groups) < 0)
    return securer_error_set (err, errno, "process.user.additionalGids");
  if (setresgid (p->gid, p->gid, p->gid) < 0)
    return securer_error_set (err, errno, "process.user.gid %u", p->gid);
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "keep capabilities across setuid");
  if (setresuid (p->uid, p->uid, p->uid) < 0)
    return securer_error_set (err, errno, "process.user.uid %u", p->uid);
  if (prctl (PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "reset keepcaps");
  return 0;
}

/* A filter of the profile, with runc's ENOSYS stub in front when last >= 0:
 * a native call numbered past the profile's last one fails with ENOSYS
 * and never reaches the profile's default.  The stub starts afresh (it
 * loads what it tests) and falls through to the profile's program, whose
 * relative jumps are untouched by what comes before. */
static int
load_filter (const struct securer_seccomp_prog *prog, int last, int notify_fd, securer_err_t *err)
{
  if (prog == NULL)
    return 0;
  const struct sock_filter *insns;
  unsigned n;
  unsigned long flags;
  if (securer_seccomp_bpf (prog, &insns, &n, &flags) < 0)
    return 0;  /* the profile loads no filter */
  struct sock_filter *patched = NULL;
  if (last >= 0)
    {
      const struct sock_filter stub[] = {
        BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
        BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native (), 0, 4),
        BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
        /* x32 calls share x86_64's arch and are the profile's to judge. */
        BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 2, 0),
        BPF_JUMP (BPF_JMP | BPF_JGT | BPF_K, (uint32_t) last, 0, 1),
        BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      };
      size_t ns = sizeof stub / sizeof stub[0];
      if (n + ns > BPF_MAXINSNS)
        return securer_error_set (err, E2BIG, "linux.seccomp: the filter (%u instructions) and the "
                                  "ENOSYS stub for newer syscalls exceed %d", n, BPF_MAXINSNS);
      patched = malloc ((n + ns) * sizeof *patched);
      if (patched == NULL)
        return securer_error_set (err, ENOMEM, "linux.seccomp: the filter");
      memcpy (patched, stub, sizeof stub);
      memcpy (patched + ns, insns, n * sizeof *insns);
      insns = patched;
      n += (unsigned) ns;
    }
  /* Not securer_seccomp_install: that one insists on no_new_privs, while
   * the OCI spec lets a process without it load the filter with
   * CAP_SYS_ADMIN (and engines use that: podman leaves no_new_privs off). */
  struct sock_fprog fp = { .len = (unsigned short) n, .filter = (struct sock_filter *) insns };
  long rc = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp);
  int e = errno;
  free (patched);
  if (rc < 0)
    return securer_error_set (err, e, "linux.seccomp: load the filter");
  if (rc > 0 && (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER))
    {
      /* To the reporter; without one nothing would answer, which
       * oci_spec refuses before we get here. */
      int listener = (int) rc;
      int sent = notify_fd >= 0 ? securer_seccomp_send_listener (notify_fd, listener, err) : -1;
      close (listener);
      if (notify_fd >= 0)
        close (notify_fd);
      if (sent < 0)
        return notify_fd >= 0 ? securer_error_prefix (err, "report-denials")
                              : securer_error_set (err, EINVAL, "linux.seccomp: a listener nobody takes");
    }
  return 0;
}

/* Everything of the process after the wait: identity, capabilities,
 * no_new_privs and the filter, in the only order that works: the filter
 * needs CAP_SYS_ADMIN without no_new_privs, so then it comes first. */
static int
finish_process (const struct oci_process *p, const struct securer_seccomp_prog *seccomp, int last,
                const struct oci_layer *layer, int notify_fd, const char *exe, securer_err_t *err)
{
  /* Nothing of the runtime or the engine leaks in, beyond what
   * --preserve-fds hands over.  Close-on-exec rather than closed: the
   * report pipe must stay open until the exec has succeeded.  Before any
   * filter: a profile older than close_range would refuse it. */
  if (syscall (SYS_close_range, 3 + p->preserve_fds, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
    return securer_error_set (err, errno, "close inherited descriptors");
  /* A layered securer policy brings no_new_privs with it (its filter may
   * deny what the identity change needs, so it loads last, and Landlock
   * needs either no_new_privs or CAP_SYS_ADMIN). */
  bool nnp = p->no_new_privs || layer != NULL;
  if (!nnp && load_filter (seccomp, last, notify_fd, err) < 0)
    return -1;
  if (layer && (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || oci_layer_landlock (layer, err) < 0))
    {
      if (err && *err == NULL)
        securer_error_set (err, errno, "no_new_privs for run.securer.policy");
      return -1;
    }
  if (drop_bounding (p, err) < 0 || set_identity (p, err) < 0 || set_caps (p, err) < 0)
    return -1;
  if (nnp && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return securer_error_set (err, errno, "process.noNewPrivileges");
  if (nnp && load_filter (seccomp, last, notify_fd, err) < 0)
    return -1;
  if (layer && load_filter (layer->seccomp, -1, -1, err) < 0)
    return securer_error_prefix (err, "annotations.run.securer.policy");
  execve (exe, p->args, p->env);
  securer_error_set (err, errno, "exec %s", exe);
  securer_error_set_status (err, errno == ENOENT ? 127 : 126);
  return -1;
}

static int
process_limits (const struct oci_process *p, securer_err_t *err)
{
  for (size_t i = 0; i < p->n_rlimits; i++)
    {
      struct rlimit r = { p->rlimits[i].soft, p->rlimits[i].hard };
      if (setrlimit (p->rlimits[i].resource, &r) < 0)
        return securer_error_set (err, errno, "process.rlimits[%zu]", i);
    }
  if (p->has_umask)
    umask (p->umask);
  return 0;
}

int
oci_new_session_keyring (securer_err_t *err)
{
  if (syscall (SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0)
    return securer_error_set (err, errno, "join a new session keyring");
  return 0;
}

int
oci_oom_score_adj (pid_t pid, const struct oci_process *p, securer_err_t *err)
{
  if (!p->has_oom_score_adj)
    return 0;
  char path[64], v[16];
  if (pid == 0)
    snprintf (path, sizeof path, "/proc/self/oom_score_adj");
  else
    snprintf (path, sizeof path, "/proc/%d/oom_score_adj", (int) pid);
  snprintf (v, sizeof v, "%d", p->oom_score_adj);
  if (oci_write_file (path, v, err) < 0)
    return securer_error_prefix (err, "process.oomScoreAdj");
  return 0;
}

static char *
resolve_exe (const struct oci_process *p, securer_err_t *err)
{
  char *exe = lookup (p->env, p->args[0]);
  if (exe == NULL)
    {
      securer_error_set (err, ENOENT, "exec %s: not found in the PATH of process.env", p->args[0]);
      securer_error_set_status (err, 127);
    }
  return exe;
}

int
oci_process_exec (const struct oci_process *p, const struct securer_seccomp_prog *seccomp,
                  int seccomp_last_syscall, const struct oci_layer *layer, int console_fd,
                  securer_err_t *err)
{
  if (p->terminal && console_fd >= 0 && setup_console (console_fd, p, err) < 0)
    return -1;
  if (console_fd >= 0)
    close (console_fd);
  if (chdir (p->cwd) < 0)
    return securer_error_set (err, errno, "process.cwd %s", p->cwd);
  if (process_limits (p, err) < 0)
    return -1;
  char *exe = resolve_exe (p, err);
  if (exe == NULL)
    return -1;
  finish_process (p, seccomp, seccomp_last_syscall, layer, -1, exe, err);
  free (exe);
  return -1;
}

/* createContainer and startContainer hooks, run from the container's
 * process in its namespaces.  Its pid in the state is the host's, read
 * from the host's /proc before pivot_root (after it, / is the container's
 * and /proc its own). */
static int
hooks_inside (const struct oci_launch *l, enum oci_hook_kind k, pid_t host_pid, securer_err_t *err)
{
  if (l->spec->n_hooks[k] == 0)
    return 0;
  json_t *j = json_pack ("{s:s, s:s, s:s, s:i, s:s, s:O}", "ociVersion", "1.0.2", "id",
                         l->id ? l->id : "", "status", "created", "pid", (int) host_pid, "bundle",
                         l->spec->bundle, "annotations",
                         json_object_get (l->spec->json, "annotations") ?: json_null ());
  char *text = json_dumps (j, JSON_COMPACT);
  json_decref (j);
  int rc = oci_hooks_run (l->spec, k, text, err);
  free (text);
  return rc;
}

static pid_t
host_pid (void)
{
  char buf[32];
  ssize_t n = readlink ("/proc/self", buf, sizeof buf - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  return (pid_t) atoi (buf);
}

int
oci_container_init (const struct oci_launch *l, void (*ready) (void *ctx), void *ctx,
                    securer_err_t *err)
{
  const struct oci_spec *s = l->spec;
  const struct oci_process *p = &s->proc;
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return securer_error_set (err, errno, "make / private");
  if (mount (s->rootfs, s->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return securer_error_set (err, errno, "bind the rootfs %s", s->rootfs);
  int rootfd = open (s->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return securer_error_set (err, errno, "open the rootfs %s", s->rootfs);
  for (size_t i = 0; i < s->n_mounts; i++)
    if (do_mount (l, rootfd, &s->mounts[i], err) < 0)
      {
        close (rootfd);
        return securer_error_prefix (err, "mounts[%zu]", i);
      }
  if (make_devices (l, rootfd, err) < 0)
    {
      close (rootfd);
      return securer_error_prefix (err, "devices");
    }
  close (rootfd);
  if (s->hostname && sethostname (s->hostname, strlen (s->hostname)) < 0)
    return securer_error_set (err, errno, "hostname");
  pid_t hpid = host_pid ();
  if (hooks_inside (l, OCI_HOOK_CREATE_CONTAINER, hpid, err) < 0)
    return -1;
  if (pivot (s->rootfs, err) < 0)
    return -1;
  unsigned long prop = s->rootfs_propagation ? s->rootfs_propagation : MS_PRIVATE | MS_REC;
  if (mount (NULL, "/", NULL, prop, NULL) < 0)
    return securer_error_set (err, errno, "linux.rootfsPropagation");
  if (apply_sysctls (s, err) < 0 || mask_paths (s, err) < 0)
    return -1;
  if (s->root_readonly && bind_remount ("/", MS_RDONLY, 0, err) < 0)
    return securer_error_prefix (err, "root.readonly");
  if (p->terminal)
    {
      if (l->console_fd < 0)
        return securer_error_set (err, EINVAL, "process.terminal: needs --console-socket");
      if (setup_console (l->console_fd, p, err) < 0)
        return -1;
    }
  else if (setsid () < 0)
    return securer_error_set (err, errno, "setsid");
  if (l->console_fd >= 0)
    close (l->console_fd);
  if (chdir (p->cwd) < 0)
    return securer_error_set (err, errno, "process.cwd %s", p->cwd);
  if (process_limits (p, err) < 0)
    return -1;
  char *exe = resolve_exe (p, err);
  if (exe == NULL)
    return -1;
  ready (ctx);
  if (l->fifo_fd >= 0)
    {
      /* Blocks until `start` writes; an exit of the engine in between
       * leaves this process waiting, to be removed by `delete`. */
      char c;
      ssize_t n;
      do
        n = read (l->fifo_fd, &c, 1);
      while (n < 0 && errno == EINTR);
      if (n != 1)
        {
          free (exe);
          return securer_error_set (err, n < 0 ? errno : EPIPE, "wait for start");
        }
      close (l->fifo_fd);
    }
  if (hooks_inside (l, OCI_HOOK_START_CONTAINER, hpid, err) < 0)
    {
      free (exe);
      return -1;
    }
  finish_process (p, l->seccomp, l->seccomp_last_syscall, l->layer, l->notify_fd, exe, err);
  free (exe);
  return -1;
}
