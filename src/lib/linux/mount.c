/* The sandbox's filesystem view: a fresh tmpfs root assembled from the
 * policy's mounts, then pivot_root into it.
 *
 * Runs in the child that is pid 1 of the new user+mount+pid namespaces,
 * with full capabilities in its user namespace.  Everything is done with
 * the file-descriptor based mount API (open_tree, fsopen/fsmount,
 * move_mount, mount_setattr) because it closes two holes that the classic
 * mount(2) sequence leaves open:
 *
 *  - a bind mount is made read-only/nosuid/nodev/noexec *before* it is
 *    attached (mount_setattr on the detached clone), recursively, so no
 *    submount of a read-only bind is ever left writable and there is never
 *    a moment where the writable bind is reachable;
 *  - mount_setattr only sets bits, it never clears the ones the kernel
 *    locked when the mount was copied into our user namespace, so there is
 *    no statvfs()/remount dance that can go wrong with EPERM.
 *
 * Destinations are opened one component at a time with openat2()
 * (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) relative to the new root, and
 * mounts are attached to the resulting file descriptor rather than to a
 * path, so a symlink planted in a writable bind cannot redirect a later
 * mount outside the new root.
 *
 * The only output of this module is the optional step log (verbose),
 * written to stderr by log_step(); it is how `securer run --verbose`
 * shows the setup and is off by default.
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/linux.h"

/* Directories the new root's tmpfs is attached to before the pivot, tried
 * in order.  The tmpfs only covers it inside our own mount namespace, and
 * bind sources are cloned before it is attached, so nothing is hidden from
 * the policy's binds. */
static const char *const base_candidates[] = { "/tmp", "/run", "/mnt", "/var/tmp", "/proc" };

/* Host device nodes bound into the minimal /dev (device nodes cannot be
 * created with mknod in a user namespace). */
static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

/* Entries of a new procfs that leak host information or give control over
 * the host kernel; hidden whenever they exist (files: an empty read-only
 * file bound over them, directories: an empty read-only tmpfs).  Each one
 * is explained in docs/security.md ("/proc inside the sandbox"). */
static const char *const proc_masked[] = {
  /* kernel memory, keys, timers, symbols, the kernel log and config */
  "kcore", "keys", "timer_list", "timer_stats", "sched_debug", "latency_stats",
  "kallsyms", "kmsg", "kpagecount", "kpageflags", "kpagecgroup", "config.gz",
  /* the boot command line (may hold tokens or disk keys) */
  "cmdline",
  /* host-wide activity: every tenant's load, CPU time, interrupts, paging,
   * disk traffic, memory and pressure show up here, so one sandbox could
   * watch another (a side channel on what it computes and when) */
  "loadavg", "stat", "uptime", "interrupts", "softirqs", "diskstats", "vmstat", "zoneinfo",
  "buddyinfo", "schedstat", "swaps", "pressure",
  "sys/fs/file-nr", "sys/fs/inode-nr", "sys/fs/inode-state", "sys/fs/dentry-state",
  "sys/fs/aio-nr", "sys/kernel/pty/nr",
  /* the same by other names: per-interrupt counts (irq/N/spurious, what
   * interrupts gives, per network queue), every ext4 disk's free blocks
   * and extent cache (fs/ext4/DISK/mb_groups, es_shrinker_info), the
   * host-wide count of quota syncs */
  "irq", "fs", "sys/fs/quota",
  /* every file lock on the host with its pid and inode; the number of
   * cgroups per hierarchy (one more per running sandbox); per-uid key
   * quotas */
  "locks", "cgroups", "key-users",
  /* host devices and drivers */
  "acpi", "scsi", "asound", "driver", "firmware",
};
/* The entries of proc_masked that are directories: the others are files.
 * Only a hint that saves a stat per entry: an entry of the other kind is
 * refused by the kernel (ENOTDIR) and then looked at. */
static const char *const proc_masked_dirs[] = { "pressure", "irq", "fs", "sys/fs/quota", "acpi",
                                                "scsi", "asound", "driver", "firmware" };
/* Not here, to save a mount each: entries only host root can read (0400:
 * pagetypeinfo, slabinfo, vmallocinfo; the sandbox never maps host root),
 * and static descriptions of the hardware (iomem and ioports, addresses
 * zeroed for anyone but host root; mtrr; partitions). */
/* Entries of proc_masked that some kernels make readable by host root
 * alone (mode 0400: kmsg and the kpage files always, timer_list since
 * Linux 5.x).  Where no id of the sandbox is host root nothing inside can
 * open them, whatever its capabilities (they count only for files whose
 * owner the sandbox's user namespace maps), so they are left as they are
 * when this kernel makes them so: a mount saved each. */
static const char *const proc_root_only[] = { "kcore", "kmsg", "kpagecount", "kpageflags", "kpagecgroup",
                                              "timer_list" };
/* Entries kept visible but bound read-only over themselves: bubblewrap's
 * set and fs.  Where one is masked as well (not with `unmasked`) the
 * mask alone is mounted. */
static const char *const proc_readonly[] = { "sys", "sysrq-trigger", "bus", "fs", "irq" };

struct rootfs {
  const struct securer_policy *p;
  bool verbose;
  const char *base;  /* where the new root is attached until the pivot */
  int rootfd;        /* O_PATH fd of the new root's tmpfs */
  int *trees;        /* per policy mount: pre-cloned bind source, or -1 */
  int empty_file;    /* the first attached empty-file mask, cloned for the others; or -1 */
  int empty_dir;     /* the same for directories */
  char scratch_name[32]; /* prefix of content_tree's files; "" until the first */
  struct stat empty_st[2]; /* of empty_file [0] and empty_dir [1] once looked at; st_ino 0: not yet */
  bool bare_proc;    /* a template's proc: nothing mounted over it (zygote.c) */
  bool no_host_root; /* SECURER_ROOTFS_NO_HOST_ROOT */
  bool no_memory_limit; /* SECURER_ROOTFS_NO_MEMORY_LIMIT */
  /* The proc entries (names in proc_masked) the first file and directory
   * masks were attached on; the others are bound from there by name. */
  const char *proc_first_file;
  const char *proc_first_dir;
};

static void log_step (const struct rootfs *r, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

static void
log_step (const struct rootfs *r, const char *fmt, ...)
{
  if (!r->verbose)
    return;
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  if (n < 0)
    return;
  securer_linux_child_log ("rootfs: %s", msg);
}

static int
sys_openat2 (int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
  struct open_how how = { .flags = flags, .mode = 0, .resolve = resolve };
  return (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
}

static int
sys_pivot_root (const char *new_root, const char *put_old)
{
  return (int) syscall (SYS_pivot_root, new_root, put_old);
}

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* "file:line: " for a mount that came from a policy file, "" otherwise. */
static const char *
loc_prefix (const struct securer_loc *loc, char *buf, size_t cap)
{
  buf[0] = '\0';
  if (loc->file != NULL && loc->line > 0)
    snprintf (buf, cap, "%s:%u: ", loc->file, loc->line);
  else if (loc->file != NULL)
    snprintf (buf, cap, "%s: ", loc->file);
  return buf;
}

/* ---- resolving destinations inside the new root ------------------------- */

/* The policy's own limit on mounts (POLICY_MAX_ITEMS): bounds the array
 * of mount points the child keeps on its stack (16 KiB). */
#define SECURER_MAX_MOUNTS 4096

#define RESOLVE_STRICT (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* Opens one name below dirfd as O_PATH.  With O_PATH|O_NOFOLLOW openat2
 * hands back a trailing symlink itself instead of failing, so that case is
 * turned into ELOOP here: nothing is ever mounted on or through a link. */
static int
open_name (int dirfd, const char *name, struct stat *st)
{
  int fd = sys_openat2 (dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC, RESOLVE_STRICT);
  if (fd < 0)
    return -1;
  if (fstat (fd, st) < 0)
    {
      int e = errno;
      close (fd);
      errno = e;
      return -1;
    }
  if (S_ISLNK (st->st_mode))
    {
      close (fd);
      errno = ELOOP;
      return -1;
    }
  return fd;
}

/* open_name for a directory that is about to be walked through.
 * O_DIRECTORY stands in for the stat: anything that is not a directory,
 * a symlink included, fails with ENOTDIR, and only then is open_name
 * asked which it was (ELOOP for a link, as before). */
static int
open_dir_name (int dirfd, const char *name)
{
  int fd = sys_openat2 (dirfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC,
                        RESOLVE_STRICT);
  if (fd >= 0 || errno != ENOTDIR)
    return fd;
  struct stat st;
  fd = open_name (dirfd, name, &st);
  if (fd < 0)
    return -1;
  close (fd);
  errno = ENOTDIR;
  return -1;
}

/* Splits an absolute sandbox path into components; refuses "." and "..",
 * which a resolved policy never contains and which would only serve to
 * confuse the beneath-the-root resolution. */
static int
check_dest (const char *dest, securer_err_t *err)
{
  if (dest == NULL || dest[0] != '/')
    return securer_error_set (err, EINVAL, "destination %s is not an absolute path",
                              dest ? dest : "(null)");
  const char *s = dest;
  bool any = false;
  while (*s)
    {
      while (*s == '/')
        s++;
      if (*s == '\0')
        break;
      size_t len = strcspn (s, "/");
      if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
        return securer_error_set (err, EINVAL, "destination %s contains '.' or '..'", dest);
      any = true;
      s += len;
    }
  if (!any)
    return securer_error_set (err, EINVAL,
                              "destination / is not allowed (the root is always a fresh tmpfs)");
  return 0;
}

/* Opens the directory that will contain `dest`'s last component, creating
 * missing intermediate directories (0755).  Never follows a symlink and
 * never leaves the new root.  *last points into buf (PATH_MAX bytes: this
 * runs in the sandbox's child, which allocates nothing).  The result may
 * be r->rootfd itself (a destination directly below the root): release it
 * with put_parent.  *fresh (may be NULL) tells whether the directory is one
 * where the last component is most likely missing: the root tmpfs, or a
 * directory this call created. */
static int
open_parent (struct rootfs *r, const char *dest, bool create, char *buf, char **last,
             bool *fresh, securer_err_t *err)
{
  *last = NULL;
  if (fresh != NULL)
    *fresh = false;
  if (check_dest (dest, err) < 0)
    return -1;
  if (strlen (dest) >= PATH_MAX)
    return securer_error_set (err, ENAMETOOLONG, "destination %s", dest);
  strcpy (buf, dest);

  /* Strip trailing slashes so the last component is a name. */
  size_t n = strlen (buf);
  while (n > 1 && buf[n - 1] == '/')
    buf[--n] = '\0';
  char *slash = strrchr (buf, '/');
  *last = slash + 1;
  *slash = '\0';

  /* Fast path: the whole parent in one resolution, which refuses exactly
   * what the walk below refuses (any symlink, anything not a directory,
   * leaving the root).  The walk remains for creating what is missing and
   * for saying which component was wrong. */
  const char *rel = buf;
  while (*rel == '/')
    rel++;
  if (*rel == '\0')
    {
      if (fresh != NULL)
        *fresh = true;
      return r->rootfd;
    }
  int fd = sys_openat2 (r->rootfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_STRICT);
  if (fd >= 0)
    return fd;
  int cur = r->rootfd;
  bool made = false;
  char *save = NULL;
  for (char *comp = strtok_r (buf, "/", &save); comp != NULL; comp = strtok_r (NULL, "/", &save))
    {
      /* Below a directory made here nothing exists yet: no lookup first. */
      int next = made ? -1 : open_dir_name (cur, comp);
      if (made || (next < 0 && errno == ENOENT && create))
        {
          if (mkdirat (cur, comp, 0755) < 0 && errno != EEXIST)
            {
              int e = errno;
              if (cur != r->rootfd)
                close (cur);
              return securer_error_set (err, e, "create directory %s in %s", comp, dest);
            }
          made = true;
          next = open_dir_name (cur, comp);
        }
      if (next < 0)
        {
          int e = errno;
          if (cur != r->rootfd)
            close (cur);
          if (e == ELOOP)
            securer_error_set (err, e, "refusing to follow symlink %s in %s", comp, dest);
          else
            securer_error_set (err, e, "open %s in %s", comp, dest);
          return -1;
        }
      if (cur != r->rootfd)
        close (cur);
      cur = next;
    }
  if (fresh != NULL)
    *fresh = made;
  return cur;
}

/* Releases what open_parent returned. */
static void
put_parent (struct rootfs *r, int fd)
{
  if (fd >= 0 && fd != r->rootfd)
    close (fd);
}

enum target_kind { TARGET_DIR, TARGET_FILE };

/* Opens (creating when missing) the mount point for dest as an O_PATH fd.
 * In a fresh directory (open_parent) the mount point is made first and
 * looked up after: one failed lookup less, and a directory needs no stat
 * (O_DIRECTORY checks the type).  Anything unexpected on that path (the
 * name exists, a race, an error) falls through to the general one, which
 * says what was wrong. */
static int
open_target (struct rootfs *r, const char *dest, enum target_kind kind, uint32_t mode,
             securer_err_t *err)
{
  char copy[PATH_MAX], *last;
  bool fresh;
  int parent = open_parent (r, dest, true, copy, &last, &fresh, err);
  if (parent < 0)
    return -1;
  struct stat st;
  int fd = -1;
  if (fresh && kind == TARGET_DIR && mkdirat (parent, last, mode) == 0)
    {
      fd = sys_openat2 (parent, last, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC,
                        RESOLVE_STRICT);
      if (fd >= 0)
        goto out;
    }
  else if (fresh && kind == TARGET_FILE && mknodat (parent, last, S_IFREG | 0644, 0) == 0)
    fd = open_name (parent, last, &st);
  if (fd < 0)
    fd = open_name (parent, last, &st);
  if (fd < 0 && errno == ENOENT)
    {
      int rc = kind == TARGET_DIR ? mkdirat (parent, last, mode)
                                  : mknodat (parent, last, S_IFREG | 0644, 0);
      if (rc < 0 && errno != EEXIST)
        {
          securer_error_set (err, errno, "create mount point %s", dest);
          goto out;
        }
      fd = open_name (parent, last, &st);
    }
  if (fd < 0)
    {
      if (errno == ELOOP)
        securer_error_set (err, errno, "refusing to mount on symlink %s", dest);
      else
        securer_error_set (err, errno, "open mount point %s", dest);
      goto out;
    }
  if (kind == TARGET_DIR && !S_ISDIR (st.st_mode))
    {
      securer_error_set (err, ENOTDIR, "mount point %s exists and is not a directory", dest);
      close_fd (&fd);
    }
  else if (kind == TARGET_FILE && S_ISDIR (st.st_mode))
    {
      securer_error_set (err, EISDIR, "mount point %s is a directory but the source is a file",
                         dest);
      close_fd (&fd);
    }
out:
  put_parent (r, parent);
  return fd;
}

/* ---- mount primitives ---------------------------------------------------- */

static int
set_attr (int tree, unsigned flags, uint64_t attr, const char *what, securer_err_t *err)
{
  struct mount_attr a = { .attr_set = attr };
  if (mount_setattr (tree, "", AT_EMPTY_PATH | flags, &a, sizeof a) < 0)
    return securer_error_set (err, errno, "set mount flags on %s", what);
  return 0;
}

static int
attach (int tree, int target, const char *dest, securer_err_t *err)
{
  if (move_mount (tree, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return securer_error_set (err, errno, "attach mount on %s", dest);
  return 0;
}

/* A detached copy of the host tree at `path` (relative to dirfd). */
static int
clone_tree (int dirfd, const char *path, unsigned extra, securer_err_t *err)
{
  int fd = open_tree (dirfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | extra);
  if (fd < 0)
    return securer_error_set (err, errno, "clone %s", *path ? path : "mount");
  return fd;
}

struct fsopt {
  const char *key;
  const char *value;  /* NULL: flag */
};

/* A new, detached superblock of `fstype` with the given options. */
static int
new_fs (const char *fstype, const char *source, const struct fsopt *opts, size_t n_opts,
        uint64_t attr, securer_err_t *err)
{
  int fs = fsopen (fstype, FSOPEN_CLOEXEC);
  if (fs < 0)
    return securer_error_set (err, errno, "open %s filesystem", fstype);
  if (source != NULL && fsconfig (fs, FSCONFIG_SET_STRING, "source", source, 0) < 0)
    goto fail;
  for (size_t i = 0; i < n_opts; i++)
    {
      int rc = opts[i].value != NULL
                 ? fsconfig (fs, FSCONFIG_SET_STRING, opts[i].key, opts[i].value, 0)
                 : fsconfig (fs, FSCONFIG_SET_FLAG, opts[i].key, NULL, 0);
      if (rc < 0)
        {
          int e = errno;
          close (fs);
          return securer_error_set (err, e, "%s option %s%s%s", fstype, opts[i].key,
                                    opts[i].value ? "=" : "", opts[i].value ? opts[i].value : "");
        }
    }
  if (fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    goto fail;
  int mnt = fsmount (fs, FSMOUNT_CLOEXEC, (unsigned) attr);
  if (mnt < 0)
    goto fail;
  close (fs);
  return mnt;
fail:;
  int e = errno;
  close (fs);
  return securer_error_set (err, e, "create %s filesystem", fstype);
}

static int
new_tmpfs (uint64_t size, uint32_t mode, uint64_t attr, securer_err_t *err)
{
  char sz[32], md[16];
  struct fsopt opts[2];
  size_t n = 0;
  snprintf (md, sizeof md, "%o", (unsigned) (mode & 07777));
  opts[n++] = (struct fsopt) { "mode", md };
  if (size > 0)
    {
      snprintf (sz, sizeof sz, "%llu", (unsigned long long) size);
      opts[n++] = (struct fsopt) { "size", sz };
    }
  return new_fs ("tmpfs", "tmpfs", opts, n, attr, err);
}

/* Mounts a new tmpfs at dest (a directory created when missing) and
 * returns its mount's fd, which is the root of the tmpfs. */
static int
attach_tmpfs_at (struct rootfs *r, const char *dest, uint64_t size, uint32_t mode, uint64_t attr,
                 securer_err_t *err)
{
  int target = open_target (r, dest, TARGET_DIR, 0755, err);
  if (target < 0)
    return -1;
  int mnt = new_tmpfs (size, mode, attr, err);
  if (mnt >= 0 && attach (mnt, target, dest, err) < 0)
    close_fd (&mnt);
  close (target);
  return mnt;
}

static int
mount_tmpfs_at (struct rootfs *r, const char *dest, uint64_t size, uint32_t mode, uint64_t attr,
                securer_err_t *err)
{
  int mnt = attach_tmpfs_at (r, dest, size, mode, attr, err);
  if (mnt < 0)
    return -1;
  close (mnt);
  return 0;
}

/* Files made for the sandbox's /proc (content_tree), named
 * "<scratch_name>-<file>" in the root of r->rootfd. */
static const char *const scratch_files[] = { "empty", "boot_id", "meminfo" };

/* The name of content_tree's file `name` into buf (64 bytes). */
static const char *
scratch_path (const struct rootfs *r, const char *name, char *buf)
{
  snprintf (buf, 64, "%s-%s", r->scratch_name, name);
  return buf;
}

/* A detached, read-only mount of a new file `name` (one of scratch_files)
 * holding `text`.  The file lives in the root tmpfs under a random name
 * and is removed again before the pivot (remove_scratch): from then on
 * only the mounts it is attached to show it.  (The kernel refuses to
 * attach a mount of an unlinked file, so the names have to exist while
 * the masks are attached.)  No directory of their own: nothing but this
 * code writes to the root tmpfs, and O_EXCL refuses a name in use. */
static int
content_tree (struct rootfs *r, const char *name, const char *text, securer_err_t *err)
{
  if (r->scratch_name[0] == '\0')
    {
      unsigned char rnd[8];
      if (getrandom (rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t) sizeof rnd)
        return securer_error_set (err, errno, "getrandom for a file name");
      snprintf (r->scratch_name, sizeof r->scratch_name,
                ".securer-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3],
                rnd[4], rnd[5], rnd[6], rnd[7]);
    }
  char file[64];
  int fd = openat (r->rootfd, scratch_path (r, name, file),
                   O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0)
    return securer_error_set (err, errno, "create %s in the new root", name);
  size_t len = strlen (text), done = 0;
  int tree = -1;
  while (done < len)
    {
      ssize_t n = write (fd, text + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          securer_error_set (err, n < 0 ? errno : EIO, "write %s in the new root", name);
          goto out;
        }
      done += (size_t) n;
    }
  tree = clone_tree (fd, "", AT_EMPTY_PATH, err);
  if (tree >= 0
      && set_attr (tree, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                   | MOUNT_ATTR_NOEXEC, name, err) < 0)
    close_fd (&tree);
out:
  close (fd);
  return tree;
}

/* Removes content_tree's files; the mounts of them stay. */
static int
remove_scratch (struct rootfs *r, securer_err_t *err)
{
  if (r->scratch_name[0] == '\0')
    return 0;
  for (size_t i = 0; i < sizeof scratch_files / sizeof *scratch_files; i++)
    {
      char file[64];
      if (unlinkat (r->rootfd, scratch_path (r, scratch_files[i], file), 0) < 0 && errno != ENOENT)
        return securer_error_set (err, errno, "remove %s from the new root", scratch_files[i]);
    }
  return 0;
}

/* A detached, read-only empty file (dir false) or directory (an empty
 * tmpfs) to bind over something hidden.  The first of each kind is made
 * once; every later one is a clone of it, which already carries its
 * flags: one open_tree per mask. */
static int
mask_source (struct rootfs *r, bool dir, securer_err_t *err)
{
  int first = dir ? r->empty_dir : r->empty_file;
  if (first >= 0)
    return clone_tree (first, "", AT_EMPTY_PATH, err);
  if (dir)
    return new_tmpfs (4096, 0555,
                      MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                      err);
  return content_tree (r, "empty", "", err);
}

/* After mask_source's tree was attached (rc 0) or not: the first attached
 * one of each kind is kept as the source of the clones. */
static int
mask_done (struct rootfs *r, bool dir, int tree, int rc, const char *path)
{
  int *first = dir ? &r->empty_dir : &r->empty_file;
  if (rc == 0 && *first < 0)
    *first = tree;
  else
    close (tree);
  if (rc == 0)
    log_step (r, "mask %s", path);
  return rc;
}

/* Hides what is at `path` (already opened as `fd`, `st` its stat): a file
 * gets an empty read-only file bound over it (reads see end of file, writes
 * EROFS), a directory an empty read-only tmpfs. */
static int
mask_fd (struct rootfs *r, int fd, const struct stat *st, const char *path, securer_err_t *err)
{
  bool dir = S_ISDIR (st->st_mode);
  int first = dir ? r->empty_dir : r->empty_file;
  struct stat *fst = &r->empty_st[dir];
  if (first >= 0 && fst->st_ino == 0 && fstat (first, fst) < 0)
    memset (fst, 0, sizeof *fst);
  if (first >= 0 && fst->st_ino != 0 && fst->st_dev == st->st_dev && fst->st_ino == st->st_ino)
    return 0;   /* masked already (a policy mask of a /proc entry hidden anyway) */
  int tree = mask_source (r, dir, err);
  if (tree < 0)
    return -1;
  return mask_done (r, dir, tree, attach (tree, fd, path, err), path);
}

/* Opens an existing path inside the new root without following symlinks,
 * and stats it into *st.  Returns -1 with errno ENOENT (and no error set)
 * when it does not exist. */
static int
open_existing (struct rootfs *r, const char *path, struct stat *st, securer_err_t *err)
{
  char copy[PATH_MAX], *last;
  int parent = open_parent (r, path, false, copy, &last, NULL, err);
  if (parent < 0)
    {
      if (securer_error_errno (*err) == ENOENT || securer_error_errno (*err) == ENOTDIR)
        {
          securer_error_free (err);
          errno = ENOENT;
        }
      return -1;
    }
  int fd = open_name (parent, last, st);
  int e = errno;
  put_parent (r, parent);
  if (fd < 0)
    {
      if (e == ENOENT)
        errno = ENOENT;
      else if (e == ELOOP)
        securer_error_set (err, e, "refusing to follow symlink %s", path);
      else
        securer_error_set (err, e, "open %s", path);
    }
  return fd;
}

/* Masks `path` if it exists; a missing path has nothing to hide. */
static int
mask_path (struct rootfs *r, const char *path, securer_err_t *err)
{
  struct stat st;
  int fd = open_existing (r, path, &st, err);
  if (fd < 0)
    return *err != NULL ? -1 : 0;
  int rc = mask_fd (r, fd, &st, path, err);
  close (fd);
  return rc;
}

/* ---- the mount types ----------------------------------------------------- */

static int
do_bind (struct rootfs *r, const struct securer_mount *m, int tree, securer_err_t *err)
{
  struct stat st;
  if (fstat (tree, &st) < 0)
    return securer_error_set (err, errno, "stat source %s", m->source);
  int target = open_target (r, m->dest, S_ISDIR (st.st_mode) ? TARGET_DIR : TARGET_FILE, 0755,
                            err);
  if (target < 0)
    return -1;
  int rc = attach (tree, target, m->dest, err);
  close (target);
  return rc;
}

/* Entries of a filesystem made here (the procfs mounted at `proc`, an fd
 * of its root; the tmpfs of a `mount dev`) are reached by name relative to
 * it, without opening them first: the filesystem is new, nothing of the
 * sandbox runs yet, nothing but our own mounts is mounted on it, and none
 * of the names below crosses a symlink (move_mount does not follow a final
 * one).  That saves an open, a stat and a close per entry. */

/* "dest/name" into buf (256 bytes), for messages. */
static const char *
entry_path (char *buf, const char *dest, const char *name)
{
  snprintf (buf, 256, "%s/%s", dest, name);
  return buf;
}

/* Attaches `tree` over the entry `name` of `dir`; closes nothing. */
static int
attach_name (int tree, int dir, const char *dest, const char *name, securer_err_t *err)
{
  if (move_mount (tree, "", dir, name, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    {
      char path[256];
      return securer_error_set (err, errno, "attach mount on %s", entry_path (path, dest, name));
    }
  return 0;
}

/* attach_name for a new tree (-1: making it failed, err set); its fd is
 * closed either way. */
static int
attach_name_close (int tree, int dir, const char *dest, const char *name, securer_err_t *err)
{
  if (tree < 0)
    return -1;
  int rc = attach_name (tree, dir, dest, name, err);
  close (tree);
  return rc;
}

/* Makes the mount point `name` (a directory, or an empty file) in `dir`,
 * a filesystem made here. */
static int
make_point (int dir, const char *dest, const char *name, bool is_dir, securer_err_t *err)
{
  if ((is_dir ? mkdirat (dir, name, 0755) : mknodat (dir, name, S_IFREG | 0644, 0)) == 0)
    return 0;
  char path[256];
  return securer_error_set (err, errno, "create mount point %s", entry_path (path, dest, name));
}

static bool
proc_masked_dir (const char *name)
{
  for (size_t i = 0; i < sizeof proc_masked_dirs / sizeof *proc_masked_dirs; i++)
    if (strcmp (name, proc_masked_dirs[i]) == 0)
      return true;
  return false;
}

/* Hides the proc entry `name` when this kernel has it.  The first mask of
 * each kind is a detached mount attached by fd; every later one is a bind
 * of that first one by name (the caller has made the procfs's root the
 * working directory).  One mount(2) per present entry: no stat, no
 * detached copy and no descriptor, and the bind carries the first mask's
 * flags (read-only, nosuid, nodev, noexec).  The names are fixed procfs
 * entries of a procfs nothing else has touched, so the path mount(2)
 * resolves cannot lead anywhere else.  A missing entry fails with ENOENT,
 * confirmed by a stat. */
/* Whether `name`, an entry of proc_root_only, is one nothing in this
 * sandbox can open: a regular file with no permission for anyone but its
 * owner, who is not one of the sandbox's ids (host root, shown as the
 * overflow id), in a sandbox without host root. */
static bool
proc_closed_to_sandbox (struct rootfs *r, int proc, const char *name)
{
  if (!r->no_host_root)
    return false;
  struct stat st;
  return securer_linux_proc_root_only (name) && fstatat (proc, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode)
         && (st.st_mode & 077) == 0 && st.st_uid != getuid ();
}

static int
proc_mask (struct rootfs *r, int proc, const char *dest, const char *name, securer_err_t *err)
{
  char path[256];
  if (proc_closed_to_sandbox (r, proc, name))
    {
      log_step (r, "left %s: host root alone may open it", entry_path (path, dest, name));
      return 0;
    }
  bool dir = proc_masked_dir (name);
  const char *first = dir ? r->proc_first_dir : r->proc_first_file;
  if (first != NULL)
    {
      if (mount (first, name, NULL, MS_BIND, NULL) == 0)
        {
          log_step (r, "mask %s", entry_path (path, dest, name));
          return 0;
        }
      /* ENOENT would also be a missing source: only a missing entry may
       * pass for "nothing to hide" (the stat below tells). */
      if (errno != ENOTDIR && errno != ENOENT)
        return securer_error_set (err, errno, "mask %s", entry_path (path, dest, name));
      /* Missing, or not of the kind the table says: look. */
    }
  struct stat st;
  if (fstatat (proc, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : securer_error_set (err, errno, "stat %s",
                                                    entry_path (path, dest, name));
  dir = S_ISDIR (st.st_mode);
  first = dir ? r->proc_first_dir : r->proc_first_file;
  if (first != NULL)
    {
      if (mount (first, name, NULL, MS_BIND, NULL) < 0)
        return securer_error_set (err, errno, "mask %s", entry_path (path, dest, name));
      log_step (r, "mask %s", entry_path (path, dest, name));
      return 0;
    }
  int tree = mask_source (r, dir, err);
  if (tree < 0)
    return -1;
  int rc = mask_done (r, dir, tree, attach_name (tree, proc, dest, name, err),
                      entry_path (path, dest, name));
  if (rc == 0)
    *(dir ? &r->proc_first_dir : &r->proc_first_file) = name;
  return rc;
}

/* Binds the proc entry `name` read-only over itself, with what is mounted
 * below it, when this kernel has it. */
static int
proc_readonly_entry (struct rootfs *r, int proc, const char *dest, const char *name,
                     securer_err_t *err)
{
  char path[256];
  int tree = open_tree (proc, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE
                        | AT_SYMLINK_NOFOLLOW);
  if (tree < 0)
    return errno == ENOENT ? 0 : securer_error_set (err, errno, "clone %s",
                                                    entry_path (path, dest, name));
  int rc = -1;
  if (set_attr (tree, AT_RECURSIVE,
                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                entry_path (path, dest, name), err) == 0
      && attach_name (tree, proc, dest, name, err) == 0)
    {
      rc = 0;
      log_step (r, "read-only %s", path);
    }
  close (tree);
  return rc;
}

/* Binds a file holding `text` over the proc entry `name`, when it exists. */
static int
proc_replace (struct rootfs *r, int proc, const char *dest, const char *name,
              const char *name_in_scratch, const char *text, securer_err_t *err)
{
  char path[256];
  struct stat st;
  if (fstatat (proc, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : securer_error_set (err, errno, "stat %s",
                                                    entry_path (path, dest, name));
  int tree = content_tree (r, name_in_scratch, text, err);
  int rc = tree < 0 ? -1 : attach_name (tree, proc, dest, name, err);
  close_fd (&tree);
  if (rc == 0)
    log_step (r, "per-sandbox %s", entry_path (path, dest, name));
  return rc;
}

/* A boot id of this sandbox alone (random, in the kernel's format), so
 * that sandboxes cannot tell they run on the same boot of one host. */
static int
proc_boot_id (struct rootfs *r, int proc, const char *dest, securer_err_t *err)
{
  unsigned char b[16];
  size_t got = 0;
  while (got < sizeof b)
    {
      ssize_t n = getrandom (b + got, sizeof b - got, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return securer_error_set (err, errno, "getrandom for the boot id");
      got += (size_t) n;
    }
  b[6] = (unsigned char) ((b[6] & 0x0f) | 0x40);   /* version 4, as the kernel makes it */
  b[8] = (unsigned char) ((b[8] & 0x3f) | 0x80);
  char text[64];
  snprintf (text, sizeof text,
            "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n", b[0], b[1],
            b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
            b[15]);
  return proc_replace (r, proc, dest, "sys/kernel/random/boot_id", "boot_id", text, err);
}

/* meminfo with the sandbox's own memory: its cgroup limit as total, free
 * and available (what a program sizing its caches should go by), nothing
 * of the host's use.  Without a cgroup memory limit, or with one the host
 * could not apply, there is no figure of the sandbox's own to show, and
 * the file is empty. */
static int
proc_meminfo (struct rootfs *r, int proc, const char *dest, securer_err_t *err)
{
  uint64_t kb = r->no_memory_limit ? 0 : r->p->limits.cgroup_memory / 1024;
  char text[512] = "";
  if (kb > 0)
    snprintf (text, sizeof text,
              "MemTotal:       %8llu kB\nMemFree:        %8llu kB\nMemAvailable:   %8llu kB\n"
              "Buffers:               0 kB\nCached:                0 kB\n"
              "SwapCached:            0 kB\nSwapTotal:             0 kB\n"
              "SwapFree:              0 kB\nShmem:                 0 kB\n",
              (unsigned long long) kb, (unsigned long long) kb, (unsigned long long) kb);
  return proc_replace (r, proc, dest, "meminfo", "meminfo", text, err);
}

int
securer_linux_proc_own_entries (const struct securer_policy *p, const char *dest, unsigned flags,
                                securer_err_t *err)
{
  /* The entries' files live in a detached tmpfs: nothing of them is
   * reachable but through the mounts attached over the proc entries. */
  struct rootfs r = { .p = p, .rootfd = -1, .empty_file = -1, .empty_dir = -1,
                      .no_memory_limit = (flags & SECURER_ROOTFS_NO_MEMORY_LIMIT) != 0 };
  r.rootfd = new_tmpfs (1 << 16, 0700, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
  if (r.rootfd < 0)
    return securer_error_prefix (err, "a scratch tmpfs for %s", dest);
  int proc = open (dest, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int rc = proc < 0 ? securer_error_set (err, errno, "open %s", dest) : 0;
  if (rc == 0)
    rc = proc_boot_id (&r, proc, dest, err);
  if (rc == 0)
    rc = proc_meminfo (&r, proc, dest, err);
  close_fd (&proc);
  close_fd (&r.rootfd);
  return rc;
}

static int
do_proc (struct rootfs *r, const struct securer_mount *m, securer_err_t *err)
{
  int target = open_target (r, m->dest, TARGET_DIR, 0755, err);
  if (target < 0)
    return -1;
  /* subset=pid (Linux 5.8) leaves out every host-wide entry, so there
   * is nothing to hide: no masks, no read-only entries.  An older kernel
   * refuses the option and with it the launch. */
  static const struct fsopt pid_only[] = { { "subset", "pid" } };
  int mnt = new_fs ("proc", "proc", pid_only, m->pid_only ? 1 : 0,
                    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
  int rc = mnt < 0 ? -1 : attach (mnt, target, m->dest, err);
  close (target);
  if (rc < 0)
    {
      close_fd (&mnt);
      return -1;
    }
  log_step (r, "proc on %s%s", m->dest, m->pid_only ? " (subset=pid)" : m->unmasked ? " (unmasked)" : "");
  /* subset=pid has nothing to hide.  A template's sessions mount their own
   * proc, which the kernel refuses while any mount covers a file of this
   * one; each session masks its own. */
  if (m->pid_only || r->bare_proc)
    {
      close (mnt);
      return 0;
    }

  /* First: the masks and files below sys then go on its read-only copy
   * (a copy made after them would duplicate each of them, one more mount
   * to make and to tear down, hidden under the copy). */
  for (size_t i = 0; rc == 0 && i < sizeof proc_readonly / sizeof *proc_readonly; i++)
    if (m->unmasked || !securer_linux_proc_masked (proc_readonly[i]))
      rc = proc_readonly_entry (r, mnt, m->dest, proc_readonly[i], err);
  /* `unmasked`: the host-wide entries as the kernel shows them, the host's
   * boot_id and meminfo included (docs/policy.md). */
  if (m->unmasked)
    {
      close (mnt);
      return rc;
    }
  /* The masks after the first are bound by name from the procfs's root
   * (proc_mask).  The working directory stays there until pivot()
   * changes it: nothing in between uses a relative path. */
  if (rc == 0 && fchdir (mnt) < 0)
    rc = securer_error_set (err, errno, "chdir to %s", m->dest);
  r->proc_first_file = r->proc_first_dir = NULL;
  for (size_t i = 0; rc == 0 && i < sizeof proc_masked / sizeof *proc_masked; i++)
    rc = proc_mask (r, mnt, m->dest, proc_masked[i], err);
  if (rc == 0)
    rc = proc_boot_id (r, mnt, m->dest, err);
  if (rc == 0)
    rc = proc_meminfo (r, mnt, m->dest, err);
  close (mnt);
  return rc;
}

static int
make_symlink (struct rootfs *r, const char *target, const char *dest, securer_err_t *err)
{
  char copy[PATH_MAX], *last;
  int parent = open_parent (r, dest, true, copy, &last, NULL, err);
  if (parent < 0)
    return -1;
  int rc = symlinkat (target, parent, last);
  int e = errno;
  put_parent (r, parent);
  if (rc < 0)
    return securer_error_set (err, e, "create symlink %s -> %s", dest, target);
  return 0;
}

/* The minimal /dev.  Its entries are made by name in the new tmpfs
 * itself, through the fd of its mount: nothing but this function has
 * written there, so no name can be a link or exist already, and nothing
 * needs to be looked up or reopened. */
static int
do_dev (struct rootfs *r, const struct securer_mount *m, securer_err_t *err)
{
  /* The tmpfs itself holds no device nodes: the bound host nodes are
   * separate mounts that keep their own (dev-allowing) flags. */
  int dev = attach_tmpfs_at (r, m->dest, 1 << 20, 0755,
                             MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
  if (dev < 0)
    return -1;
  char path[256];
  int rc = -1;
  for (size_t i = 0; i < sizeof dev_nodes / sizeof *dev_nodes; i++)
    {
      char host[64];
      snprintf (host, sizeof host, "/dev/%s", dev_nodes[i]);
      /* The mount point first: a clone closed without being attached
       * would cost an RCU grace period. */
      if (make_point (dev, m->dest, dev_nodes[i], false, err) < 0
          || attach_name_close (clone_tree (AT_FDCWD, host, 0, err), dev, m->dest, dev_nodes[i],
                                err) < 0)
        goto out;
    }

  /* A private devpts instance: the sandbox sees only its own ptys.  The
   * kernel counts the ptys of every such instance against one pool
   * (kernel.pty.max less kernel.pty.reserve), so it is capped with max=;
   * `limit ptys 0` gets no instance and no ptmx at all, because max=0
   * means no cap to the kernel. */
  uint32_t ptys = securer_policy_ptys (r->p);
  char pts_max[16];
  snprintf (pts_max, sizeof pts_max, "%u", (unsigned) ptys);
  const struct fsopt pts_opts[] = {
    { "newinstance", NULL }, { "ptmxmode", "0666" }, { "mode", "0620" }, { "max", pts_max },
  };
  /* Sized: RLIMIT_FSIZE caps each file, not how many there are, and an
   * unsized tmpfs may take half the host's memory.  A policy that needs
   * more mounts its own tmpfs on /dev/shm after the dev entry. */
  static const char *const dirs[] = { "pts", "shm" };
  for (size_t i = ptys == 0 ? 1 : 0; i < sizeof dirs / sizeof *dirs; i++)
    if (make_point (dev, m->dest, dirs[i], true, err) < 0
        || attach_name_close (i == 0 ? new_fs ("devpts", "devpts", pts_opts,
                                               sizeof pts_opts / sizeof *pts_opts,
                                               MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err)
                                     : new_tmpfs (SECURER_DEV_SHM_SIZE, 01777,
                                                  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                                                    | MOUNT_ATTR_NOEXEC, err),
                              dev, m->dest, dirs[i], err) < 0)
      goto out;

  static const char *const links[][2] = {
    { "ptmx", "pts/ptmx" },         { "fd", "/proc/self/fd" },
    { "stdin", "/proc/self/fd/0" }, { "stdout", "/proc/self/fd/1" },
    { "stderr", "/proc/self/fd/2" },
  };
  for (size_t i = ptys == 0 ? 1 : 0; i < sizeof links / sizeof *links; i++)
    if (symlinkat (links[i][1], dev, links[i][0]) < 0)
      {
        securer_error_set (err, errno, "create symlink %s -> %s",
                           entry_path (path, m->dest, links[i][0]), links[i][1]);
        goto out;
      }

  /* The host's nodes were cloned with the host's flags; one call gives
   * them nosuid and noexec (no process of the sandbox exists yet, and
   * pts, shm and the tmpfs have both already).  Then, populated: nothing
   * may be added to /dev itself any more (the shm and pts mounts below
   * it keep their own flags). */
  if (set_attr (dev, AT_RECURSIVE, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, m->dest, err) == 0)
    rc = set_attr (dev, 0, MOUNT_ATTR_RDONLY, m->dest, err);
out:
  close (dev);
  return rc;
}

static int
do_dir (struct rootfs *r, const struct securer_mount *m, securer_err_t *err)
{
  int fd = open_target (r, m->dest, TARGET_DIR, m->mode ? m->mode : 0755, err);
  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

static const char *
type_name (enum securer_mount_type t)
{
  switch (t)
    {
    case SECURER_MOUNT_RO: return "bind (ro)";
    case SECURER_MOUNT_RW: return "bind (rw)";
    case SECURER_MOUNT_TMPFS: return "tmpfs";
    case SECURER_MOUNT_PROC: return "proc";
    case SECURER_MOUNT_DEV: return "dev";
    case SECURER_MOUNT_DIR: return "dir";
    case SECURER_MOUNT_SYMLINK: return "symlink";
    }
  return "mount";
}

/* "bind /usr on /usr", "tmpfs on /tmp", "symlink /lib64 -> usr/lib64". */
static int
describe_error (const struct securer_mount *m, securer_err_t *err)
{
  char loc[PATH_MAX + 16];
  const char *l = loc_prefix (&m->loc, loc, sizeof loc);
  switch (m->type)
    {
    case SECURER_MOUNT_RO:
    case SECURER_MOUNT_RW:
      securer_error_prefix (err, "%sbind %s on %s%s", l, m->source, m->dest,
                            m->type == SECURER_MOUNT_RO ? " (ro)" : "");
      break;
    case SECURER_MOUNT_SYMLINK:
      securer_error_prefix (err, "%ssymlink %s -> %s", l, m->dest, m->source);
      break;
    default:
      securer_error_prefix (err, "%s%s on %s", l, type_name (m->type), m->dest);
      break;
    }
  return -1;
}

/* Clones every bind source before the new root's tmpfs is attached, so a
 * source under the attachment directory is not hidden by it, and applies
 * the flags while the copy is still detached. */
static int
clone_sources (struct rootfs *r, securer_err_t *err)
{
  const struct securer_policy *p = r->p;
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct securer_mount *m = &p->mounts[i];
      if (m->type != SECURER_MOUNT_RO && m->type != SECURER_MOUNT_RW)
        continue;
      if (m->source == NULL || m->source[0] != '/')
        {
          securer_error_set (err, EINVAL, "source %s is not an absolute path",
                             m->source ? m->source : "(null)");
          return describe_error (m, err);
        }
      int tree = open_tree (AT_FDCWD, m->source,
                            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      if (tree < 0)
        {
          int e = errno;
          if (m->optional && (e == ENOENT || e == ENOTDIR))
            {
              log_step (r, "skip optional %s (missing)", m->source);
              continue;
            }
          securer_error_set (err, e, "source %s", m->source);
          return describe_error (m, err);
        }
      uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
      if (m->type == SECURER_MOUNT_RO)
        attr |= MOUNT_ATTR_RDONLY;
      if (m->noexec)
        attr |= MOUNT_ATTR_NOEXEC;
      r->trees[i] = tree;
      if (set_attr (tree, AT_RECURSIVE, attr, m->source, err) < 0)
        return describe_error (m, err);
    }
  return 0;
}

/* Attaches a fresh tmpfs (the future root) to the first usable base dir. */
static int
attach_new_root (struct rootfs *r, securer_err_t *err)
{
  int mnt = new_tmpfs (0, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
  if (mnt < 0)
    return securer_error_prefix (err, "new root");
  int last_errno = ENOENT;
  for (size_t i = 0; i < sizeof base_candidates / sizeof *base_candidates; i++)
    {
      struct stat st;
      if (stat (base_candidates[i], &st) < 0 || !S_ISDIR (st.st_mode))
        continue;
      if (move_mount (mnt, "", AT_FDCWD, base_candidates[i], MOVE_MOUNT_F_EMPTY_PATH) == 0)
        {
          r->base = base_candidates[i];
          r->rootfd = mnt;
          log_step (r, "new root tmpfs attached at %s", r->base);
          return 0;
        }
      last_errno = errno;
    }
  close (mnt);
  return securer_error_set (err, last_errno, "attach the new root (tried /tmp, /run, /mnt, ...)");
}

static int
apply_mount (struct rootfs *r, size_t i, securer_err_t *err)
{
  const struct securer_mount *m = &r->p->mounts[i];
  int rc = 0;
  switch (m->type)
    {
    case SECURER_MOUNT_RO:
    case SECURER_MOUNT_RW:
      if (r->trees[i] < 0)
        return 0; /* optional and missing */
      rc = do_bind (r, m, r->trees[i], err);
      if (rc == 0)
        log_step (r, "bind %s on %s (%s%s)", m->source, m->dest,
                  m->type == SECURER_MOUNT_RO ? "ro" : "rw", m->noexec ? ",noexec" : "");
      break;
    case SECURER_MOUNT_TMPFS:
      rc = mount_tmpfs_at (r, m->dest, m->size, m->mode ? m->mode : 0755,
                           MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
                             | (m->noexec ? MOUNT_ATTR_NOEXEC : 0),
                           err);
      if (rc == 0)
        log_step (r, "tmpfs on %s (size %llu, mode %o%s)", m->dest,
                  (unsigned long long) m->size, (unsigned) (m->mode ? m->mode : 0755),
                  m->noexec ? ", noexec" : "");
      break;
    case SECURER_MOUNT_PROC:
      rc = do_proc (r, m, err);
      break;
    case SECURER_MOUNT_DEV:
      rc = do_dev (r, m, err);
      if (rc == 0)
        log_step (r, "minimal dev on %s (%u ptys at most)", m->dest,
                  (unsigned) securer_policy_ptys (r->p));
      break;
    case SECURER_MOUNT_DIR:
      rc = do_dir (r, m, err);
      if (rc == 0)
        log_step (r, "dir %s", m->dest);
      break;
    case SECURER_MOUNT_SYMLINK:
      if (m->source == NULL)
        rc = securer_error_set (err, EINVAL, "symlink without a target");
      else
        rc = make_symlink (r, m->source, m->dest, err);
      if (rc == 0)
        log_step (r, "symlink %s -> %s", m->dest, m->source);
      break;
    default:
      rc = securer_error_set (err, EINVAL, "unknown mount type %d", (int) m->type);
      break;
    }
  if (rc < 0)
    return describe_error (m, err);
  return 0;
}

/* Switches to the new root and drops every reference to the host's. */
static int
pivot (struct rootfs *r, securer_err_t *err)
{
  if (fchdir (r->rootfd) < 0)
    return securer_error_set (err, errno, "chdir to the new root");
  /* pivot_root(".", ".") stacks the old root on top of the new one at "/";
   * detaching "." then removes it without needing a put_old directory
   * inside the sandbox. */
  if (sys_pivot_root (".", ".") < 0)
    return securer_error_set (err, errno, "pivot_root");
  if (umount2 (".", MNT_DETACH) < 0)
    return securer_error_set (err, errno, "detach the old root");
  if (chdir ("/") < 0)
    return securer_error_set (err, errno, "chdir /");
  log_step (r, "pivoted into the new root, old root detached");

  /* Nothing outside the policy's writable mounts may be written. */
  struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
  if (mount_setattr (AT_FDCWD, "/", 0, &a, sizeof a) < 0)
    return securer_error_set (err, errno, "make the root read-only");
  struct statfs sfs;
  if (statfs ("/", &sfs) < 0 || sfs.f_type != TMPFS_MAGIC)
    return securer_error_set (err, EINVAL, "the new root is not the expected tmpfs");
  return 0;
}

int
securer_linux_setup_rootfs (const struct securer_policy *p, bool verbose, securer_err_t *errp)
{
  return securer_linux_setup_rootfs_ex (p, verbose, 0, errp);
}

int
securer_linux_setup_rootfs_ex (const struct securer_policy *p, bool verbose, unsigned flags, securer_err_t *errp)
{
  /* The helpers look at *err to tell "missing" from "failed". */
  securer_err_t local = NULL;
  securer_err_t *err = errp != NULL ? errp : &local;
  bool bare_proc = (flags & SECURER_ROOTFS_BARE_PROC) != 0;
  struct rootfs r = { .p = p, .verbose = verbose, .rootfd = -1, .empty_file = -1,
                      .empty_dir = -1, .bare_proc = bare_proc,
                      .no_host_root = (flags & SECURER_ROOTFS_NO_HOST_ROOT) != 0,
                      .no_memory_limit = (flags & SECURER_ROOTFS_NO_MEMORY_LIMIT) != 0 };
  int rc = -1;
  if (p->n_mounts > SECURER_MAX_MOUNTS)
    {
      securer_error_set (err, E2BIG, "set up the filesystem: %zu mounts, at most %d", p->n_mounts,
                         SECURER_MAX_MOUNTS);
      return -1;
    }
  mode_t old_umask = umask (0);

  /* On the stack: the child that runs this allocates nothing. */
  int trees[SECURER_MAX_MOUNTS];
  r.trees = trees;
  for (size_t i = 0; i < p->n_mounts; i++)
    r.trees[i] = -1;

  /* No mount event may propagate between the host and the sandbox. */
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    {
      securer_error_set (err, errno, "make / private");
      goto out;
    }
  if (clone_sources (&r, err) < 0 || attach_new_root (&r, err) < 0)
    goto out;
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      if (apply_mount (&r, i, err) < 0)
        goto out;
      close_fd (&r.trees[i]);
    }
  for (size_t i = 0; i < p->n_masks; i++)
    if (!(bare_proc && securer_linux_under_proc (p, p->masks[i])) && mask_path (&r, p->masks[i], err) < 0)
      {
        securer_error_prefix (err, "mask %s", p->masks[i]);
        goto out;
      }
  if (remove_scratch (&r, err) < 0 || pivot (&r, err) < 0)
    goto out;
  rc = 0;
out:
  for (size_t i = 0; i < p->n_mounts; i++)
    close_fd (&r.trees[i]);
  close_fd (&r.empty_file);
  close_fd (&r.empty_dir);
  close_fd (&r.rootfd);
  umask (old_umask);
  if (rc < 0)
    securer_error_prefix (err, "set up the filesystem");
  securer_error_free (&local);
  return rc;
}

/* Whether entry is one of list's n entries or below one of them. */
static bool
entry_in (const char *entry, const char *const *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      size_t len = strlen (list[i]);
      if (strncmp (entry, list[i], len) == 0 && (entry[len] == '\0' || entry[len] == '/'))
        return true;
    }
  return false;
}

bool
securer_linux_proc_root_only (const char *entry)
{
  return entry_in (entry, proc_root_only, sizeof proc_root_only / sizeof *proc_root_only);
}

bool
securer_linux_proc_masked (const char *entry)
{
  return entry_in (entry, proc_masked, sizeof proc_masked / sizeof *proc_masked);
}

const char *const *
securer_linux_proc_masks (size_t *n)
{
  *n = sizeof proc_masked / sizeof *proc_masked;
  return proc_masked;
}

const char *const *
securer_linux_proc_readonly (size_t *n)
{
  *n = sizeof proc_readonly / sizeof *proc_readonly;
  return proc_readonly;
}

bool
securer_linux_under_proc (const struct securer_policy *p, const char *path)
{
  for (size_t i = 0; i < p->n_mounts; i++)
    if (p->mounts[i].type == SECURER_MOUNT_PROC)
      {
        size_t len = strlen (p->mounts[i].dest);
        if (strncmp (path, p->mounts[i].dest, len) == 0 && (path[len] == '/' || path[len] == '\0'))
          return true;
      }
  return false;
}
