/* The audit log: one JSON object per line, appended with a single write()
 * so that lines from several sessions sharing a file never interleave. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "session/internal.h"

struct securer_audit {
  int fd;
  bool failed;
};

int
securer_audit_open (const char *dir, const char *path, struct securer_audit **out,
                    securer_err_t *err)
{
  *out = NULL;
  if (path == NULL || path[0] == '\0')
    return securer_error_set (err, EINVAL, "audit log: empty path");
  /* O_NOFOLLOW: a symlink planted at the path is refused (ELOOP) instead of
   * followed; O_NONBLOCK: a FIFO planted there cannot block the open; the
   * file type is checked on the opened descriptor, not the name. */
  int flags = O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  int fd;
  if (dir != NULL)
    {
      fd = securer_open_beneath (dir, path, flags, 0600, "audit log", err);
      if (fd < 0)
        return -1;
    }
  else
    fd = open (path, flags, 0600);
  if (fd < 0)
    {
      if (errno == ELOOP)
        return securer_error_set (err, ELOOP, "audit log %s: is a symbolic link, refusing", path);
      if (errno == ENXIO)  /* a FIFO without a reader */
        return securer_error_set (err, ENXIO, "audit log %s: not a regular file, refusing", path);
      return securer_error_set (err, errno, "audit log %s: open", path);
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    {
      int e = errno;
      close (fd);
      return securer_error_set (err, e, "audit log %s: stat", path);
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      return securer_error_set (err, EINVAL, "audit log %s: not a regular file, refusing", path);
    }
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    {
      close (fd);
      return securer_error_set (err, EPERM, "audit log %s: writable by group or others (mode %04o), refusing",
                                path, (unsigned) (st.st_mode & 07777));
    }
  int fl = fcntl (fd, F_GETFL);
  if (fl >= 0)
    fcntl (fd, F_SETFL, fl & ~O_NONBLOCK);
  struct securer_audit *a = calloc (1, sizeof *a);
  if (a == NULL)
    {
      close (fd);
      return securer_error_set (err, ENOMEM, "audit log");
    }
  a->fd = fd;
  *out = a;
  return 0;
}

void
securer_audit_timestamp (char *buf, size_t n)
{
  struct timespec ts;
  struct tm tm;
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  char base[24];
  strftime (base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (buf, n, "%s.%03ldZ", base, ts.tv_nsec / 1000000L);
}

void
securer_audit_log (struct securer_audit *a, const char *session_id, const char *event,
                   json_t *fields)
{
  if (a == NULL)
    {
      json_decref (fields);
      return;
    }
  char ts[40];
  securer_audit_timestamp (ts, sizeof ts);
  json_t *o = json_pack ("{s:s, s:s, s:s}", "timestamp", ts, "event", event, "session_id",
                         session_id ? session_id : "");
  if (o == NULL)
    {
      a->failed = true;
      json_decref (fields);
      return;
    }
  if (fields != NULL)
    {
      json_object_update_missing (o, fields);
      json_decref (fields);
    }
  char *line = json_dumps (o, JSON_COMPACT | JSON_REAL_PRECISION (17) | JSON_PRESERVE_ORDER);
  json_decref (o);
  if (line == NULL)
    {
      a->failed = true;
      return;
    }
  size_t len = strlen (line);
  line[len] = '\n';  /* json_dumps leaves room only for the NUL: reuse it */
  ssize_t w;
  do
    w = write (a->fd, line, len + 1);
  while (w < 0 && errno == EINTR);
  if (w != (ssize_t) (len + 1))
    a->failed = true;
  free (line);
}

json_t *
securer_audit_text (const char *s, size_t max, bool *cut)
{
  size_t n = strlen (s);
  size_t keep = securer_utf8_cut (s, n, max);
  *cut = keep < n;
  return json_stringn (s, keep);
}

bool
securer_audit_failed (const struct securer_audit *a)
{
  return a != NULL && a->failed;
}

void
securer_audit_close (struct securer_audit *a)
{
  if (a == NULL)
    return;
  close (a->fd);
  free (a);
}
