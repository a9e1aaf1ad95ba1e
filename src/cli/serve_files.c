/* Work directories and the files of `upload` and `download`
 * (docs/protocol.md, "Files"). */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "serve_files.h"
#include "session/internal.h"

int
serve_file_name_check (const char *name, securer_err_t *err)
{
  if (name == NULL || name[0] == '\0')
    return securer_error_set (err, EINVAL, "a file name is needed");
  if (strlen (name) > 4096)
    return securer_error_set (err, ENAMETOOLONG, "file name longer than 4096 bytes");
  if (name[0] == '/')
    return securer_error_set (err, EINVAL, "'%s': a file name relative to the work directory is needed, "
                              "not an absolute path", name);
  for (const char *c = name; *c;)
    {
      size_t n = strcspn (c, "/");
      if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
        return securer_error_set (err, EINVAL, "'%s': no component of a file name may be empty, '.' or '..'",
                                  name);
      c += n;
      if (*c == '/' && *++c == '\0')
        return securer_error_set (err, EINVAL, "'%s': a file name may not end with '/'", name);
    }
  return 0;
}

int
serve_workdir_apply (struct securer_policy *p, const char *dir, struct serve_workdir *w, securer_err_t *err)
{
  w->fd = -1;
  if (dir == NULL || dir[0] != '/')
    return securer_error_set (err, EINVAL, "\"workdir\" must be an absolute path");
  /* A link on the way could be retargeted between this check and the
   * mount; the kernel refuses every one. */
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  int fd = (int) syscall (SYS_openat2, AT_FDCWD, dir, &how, sizeof how);
  if (fd < 0)
    return securer_error_set (err, errno, errno == ELOOP ? "work directory '%s' is or goes through a symbolic "
                              "link, refusing" : "work directory '%s' cannot be opened", dir);
  struct stat st;
  if (fstat (fd, &st) < 0)
    {
      int e = errno;
      close (fd);
      return securer_error_set (err, e, "work directory '%s'", dir);
    }
  const char *why = NULL;
  uid_t me = geteuid ();
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    why = "group or others may write it (a directory of one owner is needed: anyone who may write in it "
          "could plant names the sandbox follows)";
  else if (me == 0 && st.st_uid == 0)
    why = "it is owned by root: the sandbox writes as the directory's owner and is never host root "
          "(give it to the user the sandbox's files should belong to)";
  else if (me != 0 && st.st_uid != me)
    why = "it is not ours: the sandbox runs as this server's user and could not write in it";
  if (why != NULL)
    {
      close (fd);
      return securer_error_set (err, EPERM, "work directory '%s': %s", dir, why);
    }
  struct securer_mount m = { .type = SECURER_MOUNT_RW, .source = strdup (dir), .dest = strdup (SERVE_WORKDIR),
                             .noexec = true };
  struct securer_mount *grown = realloc (p->mounts, (p->n_mounts + 1) * sizeof *grown);
  char *cwd = strdup (SERVE_WORKDIR);
  if (m.source == NULL || m.dest == NULL || grown == NULL || cwd == NULL)
    {
      if (grown != NULL)
        p->mounts = grown;
      free (m.source);
      free (m.dest);
      free (cwd);
      close (fd);
      return securer_error_set (err, ENOMEM, "work directory");
    }
  p->mounts = grown;
  p->mounts[p->n_mounts++] = m;
  free (p->cwd);
  p->cwd = cwd;
  /* As root the sandbox writes as the directory's owner instead of a
   * leased id, so that what one session wrote belongs to the host user
   * and the next session, of another lease, may replace it.  Root's own
   * group is not given. */
  if (me == 0)
    {
      p->host_uid = st.st_uid;
      p->host_gid = st.st_gid != 0 ? (int64_t) st.st_gid : SECURER_HOST_POOL;
      /* A fork of a template runs as a leased id: such a session starts
       * cold (unless the operator demands templates, which then refuses
       * it, saying why). */
      p->session_template = SECURER_SESSION_TEMPLATE_OFF;
    }
  w->fd = fd;
  w->uid = st.st_uid;
  w->gid = st.st_gid;
  return 0;
}

static int
write_all (int fd, const void *data, size_t len, const char *name, securer_err_t *err)
{
  for (size_t off = 0; off < len;)
    {
      ssize_t n = write (fd, (const char *) data + off, len - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return securer_error_set (err, n < 0 ? errno : EIO, "'%s': writing", name);
      off += (size_t) n;
    }
  return 0;
}

/* The directory name's parent is in (opened beneath w), and its last
 * component. */
static int
open_parent (const struct serve_workdir *w, const char *name, const char **base, securer_err_t *err)
{
  if (serve_file_name_check (name, err) < 0)
    return -1;
  const char *slash = strrchr (name, '/');
  *base = slash ? slash + 1 : name;
  if (slash == NULL)
    {
      int fd = fcntl (w->fd, F_DUPFD_CLOEXEC, 0);
      return fd < 0 ? securer_error_set (err, errno, "work directory") : fd;
    }
  char *dir = strndup (name, (size_t) (slash - name));
  if (dir == NULL)
    return securer_error_set (err, ENOMEM, "file name");
  int fd = securer_openat_beneath (w->fd, dir, O_PATH | O_DIRECTORY, 0, "directory", err);
  free (dir);
  return fd;
}

/* name, a regular file beneath the directory (no link on the way), open
 * with flags; adding more bytes to it must leave it within max.  A FIFO
 * the sandbox made does not hang the server: O_NONBLOCK until fstat
 * says what it is. */
static int
open_regular (const struct serve_workdir *w, const char *name, int flags, size_t more, size_t max, struct stat *st,
              securer_err_t *err)
{
  int fd = securer_openat_beneath (w->fd, name, flags | O_NOFOLLOW | O_NONBLOCK, 0, "file", err);
  if (fd < 0)
    return -1;
  int rc = 0;
  if (fstat (fd, st) < 0)
    rc = securer_error_set (err, errno, "'%s'", name);
  else if (!S_ISREG (st->st_mode))
    rc = securer_error_set (err, EINVAL, "'%s' is not a regular file", name);
  else if ((uint64_t) st->st_size + more > max)
    rc = securer_error_set (err, EFBIG, "'%s' %s %llu bytes, more than the %zu a file may be", name,
                            more ? "would be" : "is", (unsigned long long) st->st_size + more, max);
  if (rc < 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* More bytes at the end of name, within max in all. */
static int
file_append (const struct serve_workdir *w, const char *name, const void *data, size_t len, size_t max,
             securer_err_t *err)
{
  struct stat st;
  int fd = open_regular (w, name, O_WRONLY | O_APPEND, len, max, &st, err);
  if (fd < 0)
    return -1;
  int rc = write_all (fd, data, len, name, err);
  if (close (fd) < 0 && rc == 0)
    rc = securer_error_set (err, errno, "'%s': writing", name);
  return rc;
}

int
serve_file_write (const struct serve_workdir *w, const char *name, const void *data, size_t len, bool append,
                  size_t max, securer_err_t *err)
{
  if (len > max)
    return securer_error_set (err, EFBIG, "the file is %zu bytes, more than the %zu a file may be", len, max);
  if (append)
    return serve_file_name_check (name, err) < 0 ? -1 : file_append (w, name, data, len, max, err);
  const char *base;
  int dfd = open_parent (w, name, &base, err);
  if (dfd < 0)
    return -1;
  char tmp[64], hex[17];
  if (securer_random_hex (hex, 8, err) < 0)
    {
      close (dfd);
      return -1;
    }
  snprintf (tmp, sizeof tmp, ".securer-upload-%s", hex);
  /* A new file beside the old name, renamed over it: whatever the
   * sandbox left there (a link to elsewhere included) is replaced, never
   * written through. */
  int fd = openat (dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int e = errno;
      close (dfd);
      return securer_error_set (err, e, "'%s': cannot create the file", name);
    }
  int rc = write_all (fd, data, len, name, err);
  if (rc == 0 && geteuid () == 0 && fchown (fd, w->uid, w->gid) < 0)
    rc = securer_error_set (err, errno, "'%s': giving it to the directory's owner", name);
  if (close (fd) < 0 && rc == 0)
    rc = securer_error_set (err, errno, "'%s': writing", name);
  if (rc == 0 && renameat (dfd, tmp, dfd, base) < 0)
    rc = securer_error_set (err, errno, errno == EISDIR ? "'%s' is a directory" : "'%s': cannot be replaced",
                            name);
  if (rc < 0)
    unlinkat (dfd, tmp, 0);
  close (dfd);
  return rc;
}

int
serve_file_read (const struct serve_workdir *w, const char *name, uint64_t offset, size_t chunk, size_t max,
                 char **data, size_t *len, uint64_t *size, securer_err_t *err)
{
  *data = NULL;
  *len = 0;
  if (serve_file_name_check (name, err) < 0)
    return -1;
  struct stat st;
  int fd = open_regular (w, name, O_RDONLY, 0, max, &st, err);
  if (fd < 0)
    return -1;
  int rc = 0;
  if (offset > (uint64_t) st.st_size)
    rc = securer_error_set (err, EINVAL, "'%s': offset %llu is past its end (%lld bytes)", name,
                            (unsigned long long) offset, (long long) st.st_size);
  size_t want = rc == 0 ? (size_t) ((uint64_t) st.st_size - offset) : 0;
  if (want > chunk)
    want = chunk;
  char *buf = rc == 0 ? malloc (want + 1) : NULL;
  if (rc == 0 && buf == NULL)
    rc = securer_error_set (err, ENOMEM, "'%s'", name);
  size_t got = 0;
  while (rc == 0 && got < want)
    {
      ssize_t n = pread (fd, buf + got, want - got, (off_t) (offset + got));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        rc = securer_error_set (err, errno, "'%s': reading", name);
      else if (n == 0)
        break;  /* cut short meanwhile: what there was */
      else
        got += (size_t) n;
    }
  close (fd);
  if (rc < 0)
    {
      free (buf);
      return -1;
    }
  *data = buf;
  *len = got;
  *size = (uint64_t) st.st_size;
  return 0;
}
