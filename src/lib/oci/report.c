/* run.securer.report-denials: securer's notify-based denial reports for a
 * container.  In OCI mode nothing of securer supervises the container, so
 * this annotation starts the one piece that must: a small reporter that
 * owns the seccomp listener.  It is detached from the runtime (double
 * fork, own session, stdio on /dev/null) so that neither the runtime's
 * caller nor the engine waits for it, and it ends with the container. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/oci.h"
#include "seccomp/seccomp.h"

static void
log_event (int fd, const char *id, const struct securer_seccomp_event *ev)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  json_t *args = json_array ();
  for (int i = 0; i < 6; i++)
    json_array_append_new (args, json_integer ((json_int_t) ev->args[i]));
  json_t *j = json_pack ("{s:s, s:I, s:I, s:s, s:s, s:i, s:o, s:b}", "id", id, "time",
                         (json_int_t) ts.tv_sec, "pid", (json_int_t) ev->pid, "syscall", ev->name,
                         "action", securer_action_name (ev->action.type), "errno",
                         ev->action.type == SECURER_ACT_ERRNO ? ev->action.errnum : 0, "args", args,
                         "killed", ev->kill);
  char *s = json_dumps (j, JSON_COMPACT);
  json_decref (j);
  if (s == NULL)
    return;
  size_t n = strlen (s);
  s[n] = '\n';
  /* O_APPEND: one write per line keeps lines whole. */
  ssize_t w = write (fd, s, n + 1);
  (void) w;
  free (s);
}

static void __attribute__ ((noreturn))
reporter (const struct securer_seccomp_prog *prog, int sock, int logfd, const char *id)
{
  int listener = -1;
  securer_err_t err = NULL;
  /* Blocks until the container loads its filter (after start), or ends at
   * EOF when it dies before. */
  if (securer_seccomp_recv_listener (sock, &listener, &err) < 0)
    _exit (0);
  close (sock);
  for (;;)
    {
      struct pollfd p = { .fd = listener, .events = POLLIN };
      int r = poll (&p, 1, -1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 || (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
        _exit (0);  /* no process uses the filter any more */
      struct securer_seccomp_event ev;
      int h = securer_seccomp_notify_handle (prog, listener, &ev, &err);
      if (h < 0)
        {
          securer_error_free (&err);
          continue;
        }
      if (h == 0)
        continue;
      log_event (logfd, id, &ev);
      /* A kill verdict: the call stays blocked (never answered), so the
       * caller's pid cannot have been reused; SIGKILL ends its whole
       * process, as SCMP_ACT_KILL_PROCESS would (for KILL_THREAD that is
       * stricter than the kernel's verdict). */
      if (ev.kill)
        kill (ev.pid, SIGKILL);
    }
}

int
oci_reporter_start (const struct securer_seccomp_prog *prog, int sock, const char *log_path,
                    const char *id, securer_err_t *err)
{
  /* Written by root on the host, maybe in a directory a container can
   * write to: a symlink planted there is not followed, and only a regular
   * file takes the reports. */
  int logfd = open (log_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  struct stat st;
  if (logfd < 0 || fstat (logfd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      int e = logfd < 0 ? errno : EINVAL;
      if (logfd >= 0)
        close (logfd);
      return securer_error_set (err, e,
                                "annotations.run.securer.report-denials: open %s (a regular file, "
                                "not a symlink)",
                                log_path);
    }
  int r = oci_detach (sock, logfd, err);
  if (r == 0)
    reporter (prog, sock, logfd, id);
  close (logfd);
  return r < 0 ? securer_error_prefix (err, "start the denial reporter") : 0;
}

int
oci_detach (int keep_a, int keep_b, securer_err_t *err)
{
  pid_t pid = fork ();
  if (pid < 0)
    return securer_error_set (err, errno, "fork");
  if (pid == 0)
    {
      setsid ();
      if (fork () != 0)
        _exit (0);
      int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
      for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2 (null, fd);
      /* Only what it needs: the two descriptors and stdio. */
      int lo = keep_a < keep_b ? keep_a : keep_b, hi = keep_a < keep_b ? keep_b : keep_a;
      syscall (SYS_close_range, 3, lo - 1, 0);
      syscall (SYS_close_range, lo + 1, hi - 1, 0);
      syscall (SYS_close_range, hi + 1, ~0u, 0);
      return 0;
    }
  waitpid (pid, NULL, 0);
  return 1;
}
