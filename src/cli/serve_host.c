/* securer serve and its host: systemd's socket activation and readiness
 * protocol, peer credentials, structured log lines. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "serve_host.h"

#define SD_LISTEN_FDS_START 3

int
serve_listen_fds (int *fd, securer_err_t *err)
{
  const char *pid = getenv ("LISTEN_PID");
  const char *n = getenv ("LISTEN_FDS");
  char *end = NULL;
  long want = pid ? strtol (pid, &end, 10) : 0;
  bool ours = pid != NULL && end != pid && *end == '\0' && want == (long) getpid ();
  long count = n ? strtol (n, &end, 10) : 0;
  bool counted = n != NULL && end != n && *end == '\0';
  /* Meant for this process or not, they must not reach a sandbox. */
  unsetenv ("LISTEN_PID");
  unsetenv ("LISTEN_FDS");
  unsetenv ("LISTEN_FDNAMES");
  if (!ours)
    return 0;
  if (!counted || count != 1)
    return securer_error_set (err, EINVAL, "socket activation: LISTEN_FDS=%s, securer serve takes exactly one "
                              "socket", n ? n : "");
  int s = SD_LISTEN_FDS_START;
  int type = 0, listening = 0;
  socklen_t len = sizeof type;
  struct sockaddr_un sa;
  socklen_t salen = sizeof sa;
  if (getsockopt (s, SOL_SOCKET, SO_TYPE, &type, &len) < 0
      || getsockopt (s, SOL_SOCKET, SO_ACCEPTCONN, &listening, &(socklen_t){ sizeof listening }) < 0
      || getsockname (s, (struct sockaddr *) &sa, &salen) < 0)
    return securer_error_set (err, errno, "socket activation: descriptor 3");
  if (sa.sun_family != AF_UNIX || type != SOCK_STREAM || !listening)
    return securer_error_set (err, EINVAL, "socket activation: descriptor 3 is not a listening unix stream "
                              "socket (ListenStream= a path)");
  /* Accepted connections are handled from the event loop. */
  int fl = fcntl (s, F_GETFL);
  if (fl < 0 || fcntl (s, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl (s, F_SETFD, FD_CLOEXEC) < 0)
    return securer_error_set (err, errno, "socket activation: descriptor 3");
  *fd = s;
  return 1;
}

void
serve_notify (const char *state)
{
  const char *path = getenv ("NOTIFY_SOCKET");
  if (path == NULL || (path[0] != '/' && path[0] != '@'))
    return;
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  size_t len = strlen (path);
  if (len >= sizeof sa.sun_path)
    return;
  memcpy (sa.sun_path, path, len);
  if (path[0] == '@')
    sa.sun_path[0] = '\0';
  int fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return;
  /* Best effort, as sd_notify: a manager that is gone cannot be told. */
  if (sendto (fd, state, strlen (state), MSG_NOSIGNAL, (struct sockaddr *) &sa,
              (socklen_t) (offsetof (struct sockaddr_un, sun_path) + len))
      < 0)
    {
    }
  close (fd);
}

bool
serve_peer_allowed (int fd, bool have_group, gid_t group, struct ucred *cred)
{
  socklen_t len = sizeof *cred;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, cred, &len) < 0)
    return false;
  if (cred->uid == getuid ())
    return true;
  if (!have_group)
    return false;
  if (cred->gid == group)
    return true;
  gid_t groups[256];
  len = sizeof groups;
  if (getsockopt (fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
    return false;  /* more than 256 groups (ERANGE): refused rather than guessed */
  for (size_t i = 0; i < len / sizeof *groups; i++)
    if (groups[i] == group)
      return true;
  return false;
}

static enum serve_log_level threshold = SERVE_LOG_WARNING;
static const char *const level_names[] = { "error", "warning", "info", "debug" };

int
serve_log_level_parse (const char *s)
{
  for (size_t i = 0; i < sizeof level_names / sizeof *level_names; i++)
    if (strcmp (s, level_names[i]) == 0)
      return (int) i;
  return -1;
}

void
serve_log_set_level (enum serve_log_level level)
{
  threshold = level;
}

void
serve_log (enum serve_log_level level, const char *event, const char *fmt, ...)
{
  if (level > threshold)
    return;
  char line[2048];
  int n = snprintf (line, sizeof line, "securer serve: level=%s event=%s", level_names[level], event);
  if (n > 0 && (size_t) n < sizeof line - 2 && fmt != NULL && fmt[0] != '\0')
    {
      line[n++] = ' ';
      va_list ap;
      va_start (ap, fmt);
      int m = vsnprintf (line + n, sizeof line - (size_t) n - 1, fmt, ap);
      va_end (ap);
      if (m > 0)
        n += m;
      if ((size_t) n > sizeof line - 2)
        n = (int) sizeof line - 2;  /* cut: the line still ends */
    }
  if (n < 0)
    return;
  line[n++] = '\n';
  /* One write per line: lines of a busy server never interleave. */
  if (write (2, line, (size_t) n) < 0)
    {
    }
}

const char *
serve_log_quote (const char *s, char *buf, size_t cap)
{
  if (s == NULL)
    s = "";
  bool plain = s[0] != '\0';
  for (const unsigned char *p = (const unsigned char *) s; *p && plain; p++)
    plain = *p > ' ' && *p != '"' && *p != '\\' && *p != 0x7f;
  if (plain)
    {
      snprintf (buf, cap, "%s", s);
      return buf;
    }
  size_t o = 0;
  if (cap < 3)
    return "\"\"";
  buf[o++] = '"';
  for (const unsigned char *p = (const unsigned char *) s; *p && o + 6 < cap; p++)
    {
      if (*p == '"' || *p == '\\')
        {
          buf[o++] = '\\';
          buf[o++] = (char) *p;
        }
      else if (*p == '\n')
        o += (size_t) snprintf (buf + o, cap - o, "\\n");
      else if (*p == '\t')
        o += (size_t) snprintf (buf + o, cap - o, "\\t");
      else if (*p < ' ' || *p == 0x7f)
        o += (size_t) snprintf (buf + o, cap - o, "\\x%02x", *p);
      else
        buf[o++] = (char) *p;
    }
  buf[o++] = '"';
  buf[o] = '\0';
  return buf;
}
