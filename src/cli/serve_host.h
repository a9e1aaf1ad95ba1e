/* What `securer serve` needs of the host it runs on: a listening socket
 * passed by systemd, readiness notification, who a peer is, and one log
 * line per event.  No server state: cmd_serve.c decides what to do. */
#ifndef SECURER_SERVE_HOST_H
#define SECURER_SERVE_HOST_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "securer/error.h"

/* Socket activation (sd_listen_fds(3)): when LISTEN_PID is this process
 * and LISTEN_FDS is 1, *fd gets descriptor 3, checked to be a listening
 * unix stream socket, and 1 is returned; 0 when nothing was passed; -1 with
 * *err when what was passed cannot be served.  The variables are removed
 * either way, so that no child inherits them. */
int serve_listen_fds (int *fd, securer_err_t *err);

/* sd_notify(3) without libsystemd: state ("READY=1", "STOPPING=1") as one
 * datagram to $NOTIFY_SOCKET (a path, or '@' for the abstract namespace).
 * Does nothing when the variable is not set. */
void serve_notify (const char *state);

/* Whether the peer of a connected unix socket may talk to the server: our
 * own uid, or, when have_group, a member of `group` (its primary gid or one
 * of its supplementary groups, SO_PEERGROUPS).  *cred gets the peer's
 * credentials. */
bool serve_peer_allowed (int fd, bool have_group, gid_t group, struct ucred *cred);

enum serve_log_level {
  SERVE_LOG_ERROR = 0,
  SERVE_LOG_WARNING,
  SERVE_LOG_INFO,
  SERVE_LOG_DEBUG,
};
/* "error", "warning", "info", "debug" -> level; -1 when unknown. */
int serve_log_level_parse (const char *s);
/* Lines below this level are not written (default: warning). */
void serve_log_set_level (enum serve_log_level level);
/* One line on stderr, journald-friendly key=value pairs after the level and
 * the event: `securer serve: level=info event=open client=3 uid=1000 ...`.
 * fmt gives the pairs; values that may hold spaces must be quoted by the
 * caller with serve_log_quote. */
void serve_log (enum serve_log_level level, const char *event, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
/* s as a logfmt value: as it is when it has no space, quote, backslash or
 * control character, else in double quotes with those escaped (\n, \t,
 * \xHH).  Written into buf (cap bytes, cut to fit); returns buf. */
const char *serve_log_quote (const char *s, char *buf, size_t cap);

#endif
