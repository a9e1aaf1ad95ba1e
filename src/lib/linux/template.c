/* Session templates, host side (template.h; docs/architecture.md,
 * "Sessions from a template").
 *
 * A session forked from a template goes through the same setup messages
 * as a cold sandbox, on a setup socket the host makes for it and passes
 * with the request: the fork (C) says hello and is placed in the session's
 * cgroup by its credentials before GO; the session's pid 1 (G) says who it
 * is (a pidfd is taken on it: it is not our child); the payload reports
 * READY with its Landlock report, receives the seccomp program, offers its
 * listener, and closes the socket when it is back in R.  From there the
 * handle is a cold sandbox's, with the exit status from securer-init's
 * status socket instead of wait4. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/launch.h"
#include "linux/template.h"
#include "linux/zygote.h"
#include "seccomp/seccomp.h"
#include "securer/paths.h"

/* Setup of one session (fork to READY) without a policy timeout: a
 * template that stopped reading requests must not hang the caller. */
#define SESSION_SETUP_MS 30000u
/* From the template's start to its module's first request read. */
#define TEMPLATE_READY_MS 60000u

struct securer_template {
  const struct securer_policy *p;       /* the sessions' policy (borrowed) */
  struct securer_policy *tp;            /* the template's own: no Landlock, seccomp or rlimits */
  struct securer_sandbox *sb;
  int ctl;
  uint32_t first, count;
  struct securer_seccomp_prog *prog;    /* the sessions' filter, generated once */
  int sock_at;
  bool verbose;
};

int
securer_template_supported (const struct securer_policy *p, securer_err_t *err)
{
  uint32_t first, count;
  if (p == NULL || (p->namespaces & (SECURER_NS_USER | SECURER_NS_PID | SECURER_NS_MOUNT))
                       != (SECURER_NS_USER | SECURER_NS_PID | SECURER_NS_MOUNT))
    return securer_error_set (err, EINVAL, "session templates need user, pid and mount namespaces");
  /* Root's sessions each get a leased host id, so the lease range is
   * mapped into the template; another caller's sessions all run as its
   * uid, as its cold sandboxes do (and host=pool is refused for it, as
   * it is cold). */
  if (geteuid () == 0 && securer_hostids_range (&first, &count, err) < 0)
    return -1;
  if (geteuid () != 0 && (p->host_uid == SECURER_HOST_POOL || p->host_gid == SECURER_HOST_POOL))
    return securer_error_set (err, EPERM, "host=pool needs a root caller (a leased host id per sandbox)");
  if (p->host_uid >= 0 || p->host_gid >= 0)
    return securer_error_set (err, EINVAL, "a session from a template runs as %s, not as the fixed host id "
                                           "the policy names", geteuid () == 0 ? "a leased host id" : "the caller");
  /* The template's sessions share its network namespace, and the proxy's
   * listener is made by a cold launch only: each network allow session
   * starts cold, in a namespace of its own. */
  if (p->network == SECURER_NET_ALLOW)
    return securer_error_set (err, EINVAL, "a session of a 'network allow' policy starts cold: the proxy's "
                                           "listener belongs to a network namespace of its own");
  return 0;
}

/* The template's own policy: the sessions' with Landlock and seccomp off
 * (each session applies them after its own mounts, which a Landlock
 * domain would forbid) and without rlimits (each session sets its own; the
 * template's CPU time grows with every fork). */
static int
template_policy (const struct securer_policy *p, struct securer_policy **out, securer_err_t *err)
{
  char *json = securer_policy_to_json_text (p, 0);
  if (json == NULL)
    return securer_error_set (err, ENOMEM, "copy the policy");
  int rc = securer_policy_from_json_text ("template", json, strlen (json), out, err);
  free (json);
  if (rc < 0)
    return -1;
  struct securer_policy *tp = *out;
  tp->landlock.mode = SECURER_ENFORCE_OFF;
  tp->seccomp.enabled = false;
  for (int i = 0; i < SECURER_RLIMIT_COUNT; i++)
    tp->limits.rlimit[i].set = false;
  tp->limits.timeout_ms = 0;
  return 0;
}

/* The policy as the template's program reads it, in a sealed memfd. */
static int
policy_memfd (const struct securer_policy *p, int *out, securer_err_t *err)
{
  char *json = securer_policy_to_json_text (p, 0);
  if (json == NULL)
    return securer_error_set (err, ENOMEM, "serialise the policy");
  int fd = memfd_create ("securer-policy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  size_t len = strlen (json), off = 0;
  int e = fd < 0 ? errno : 0;
  while (e == 0 && off < len)
    {
      ssize_t n = write (fd, json + off, len - off);
      if (n < 0 && errno != EINTR)
        e = errno;
      else if (n > 0)
        off += (size_t) n;
    }
  free (json);
  if (e == 0 && fcntl (fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK) < 0)
    e = errno;
  if (e != 0)
    {
      if (fd >= 0)
        close (fd);
      return securer_error_set (err, e, "the template's policy");
    }
  *out = fd;
  return 0;
}

/* The module the template's R loads: code that runs, before any Landlock
 * domain or filter, in every session, so as trusted as the caller. */
static int
open_module (int *out, securer_err_t *err)
{
  char path[4096];
  /* Next to securer-init in the build tree (libtool keeps it in .libs). */
  if (strcmp (securer_libexec_dir (), SECURER_LIBEXECDIR) != 0)
    snprintf (path, sizeof path, "%s/.libs/securer-zygote.so", securer_libexec_dir ());
  else
    snprintf (path, sizeof path, "%s/securer-zygote.so", SECURER_PKGLIBDIR);
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return securer_error_set (err, errno, "open the session template module %s", path);
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid ())
      || (st.st_mode & 022) != 0)
    {
      close (fd);
      return securer_error_set (err, EPERM, "%s must be a regular file owned by root or the caller and "
                                            "writable by its owner alone", path);
    }
  *out = fd;
  return 0;
}

static void
close_fds (int *fds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (fds[i] >= 0)
      {
        close (fds[i]);
        fds[i] = -1;
      }
}

/* Waits until the template's program has loaded the module and reads
 * requests (its one "ready" datagram), or has ended. */
static int
await_ready (struct securer_template *t, securer_err_t *err)
{
  uint64_t deadline = launch_now_ns () + TEMPLATE_READY_MS * 1000000ull;
  for (;;)
    {
      struct pollfd pfd[2] = { { t->ctl, POLLIN, 0 }, { securer_sandbox_pollfd (t->sb), POLLIN, 0 } };
      uint64_t now = launch_now_ns ();
      if (now >= deadline)
        return securer_error_set (err, ETIMEDOUT, "the template's program was not ready after %u s",
                                  TEMPLATE_READY_MS / 1000);
      int r = poll (pfd, 2, (int) ((deadline - now) / 1000000u) + 1);
      if (r < 0 && errno != EINTR)
        return securer_error_set (err, errno, "wait for the template");
      if (pfd[0].revents & POLLIN)
        {
          uint32_t magic = 0;
          ssize_t n = recv (t->ctl, &magic, sizeof magic, MSG_DONTWAIT);
          if (n == sizeof magic && magic == SECURER_ZYGOTE_MAGIC)
            return 0;
          if (n > 0)
            return securer_error_set (err, EPROTO, "the template's program sent something else than ready");
        }
      if (pfd[1].revents || (pfd[0].revents & (POLLHUP | POLLERR)))
        {
          struct securer_status st;
          securer_err_t e = NULL;
          int code = -1;
          if (securer_sandbox_wait (t->sb, &st, &e) == 1)
            {
              code = securer_status_exit_code (&st);
              securer_status_clear (&st);
            }
          securer_error_free (&e);
          return securer_error_set (err, ECHILD, "the template's program ended before it was ready "
                                                 "(exit status %d)", code);
        }
    }
}

int
securer_template_start (const struct securer_template_opts *o, struct securer_template **out,
                        securer_err_t *err)
{
  *out = NULL;
  const struct securer_policy *p = o->policy;
  if (securer_template_supported (p, err) < 0)
    return securer_error_prefix (err, "session template");
  struct securer_template *t = calloc (1, sizeof *t);
  if (t == NULL)
    return securer_error_set (err, ENOMEM, "session template");
  t->p = p;
  t->ctl = -1;
  t->verbose = o->verbose;
  int ctl[2] = { -1, -1 };
  int fds[4] = { -1, -1, -1, -1 };   /* module, policy, init, /dev/null */
  int tpl_sock;
  if ((geteuid () == 0 && securer_hostids_range (&t->first, &t->count, err) < 0) || template_policy (p, &t->tp, err) < 0
      || launch_sync_fd_number (p, 0, &t->sock_at, err) < 0 || launch_sync_fd_number (t->tp, 4, &tpl_sock, err) < 0)
    goto fail;
  /* The template's own launch sets its NOFILE hard limit at its setup
   * socket's number; a session's must be placed below that, where its
   * payload can still put it. */
  if (t->sock_at >= tpl_sock)
    t->sock_at = tpl_sock - 1;
  if (p->seccomp.enabled)
    {
      unsigned flags = launch_policy_can_kill (&p->seccomp) ? SECURER_SECCOMP_REPORT_DENIALS : 0;
      if (securer_seccomp_compile (p, flags | SECURER_SECCOMP_CACHE, t->sock_at, &t->prog, err) < 0
          || securer_seccomp_generate (t->prog, p, err) < 0)
        {
          securer_error_prefix (err, "seccomp");
          goto fail;
        }
    }
  if (open_module (&fds[0], err) < 0 || policy_memfd (p, &fds[1], err) < 0 || launch_open_init (&fds[2], err) < 0)
    goto fail;
  fds[3] = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fds[3] < 0)
    {
      securer_error_set (err, errno, "open /dev/null");
      goto fail;
    }
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0)
    {
      securer_error_set (err, errno, "socketpair");
      goto fail;
    }
  /* fds 3-6 of the program: SECURER_TEMPLATE_CTL_FD, _MODULE_FD, then the
   * policy and securer-init for the module. */
  int pass[4] = { ctl[1], fds[0], fds[1], fds[2] };
  struct securer_spawn_opts so = {
    .policy = t->tp, .argv = o->argv, .extra_env = o->extra_env, .stdin_fd = o->stdin_fd,
    .stdout_fd = fds[3], .stderr_fd = o->stderr_fd, .pass_fds = pass, .n_pass_fds = 4, .verbose = o->verbose,
  };
  int started;
  if (t->count)
    started = securer_zygote_template_start (&so, &t->sb, err);   /* prefixes its errors itself */
  else if ((started = securer_launch_spawn (&so, &(struct launch_template){ 0, 0 }, &t->sb, err)) < 0)
    securer_error_prefix (err, "session template");
  if (started < 0)
    {
      /* Said by the launch already, with its own prefix. */
      close_fds (fds, 4);
      close_fds (ctl, 2);
      securer_template_free (t);
      return -1;
    }
  close_fds (fds, 4);
  close (ctl[1]);
  t->ctl = ctl[0];
  if (await_ready (t, err) < 0)
    {
      securer_template_free (t);
      return securer_error_prefix (err, "session template");
    }
  *out = t;
  return 0;
fail:
  close_fds (fds, 4);
  close_fds (ctl, 2);
  securer_template_free (t);
  return securer_error_prefix (err, "session template");
}

bool
securer_template_alive (const struct securer_template *t)
{
  if (t == NULL || t->sb == NULL || t->ctl < 0)
    return false;
  /* The control socket says it first: its peer is gone as soon as the
   * template's program is, before its pid 1's end is seen. */
  struct pollfd pfd = { t->ctl, 0, 0 };
  if (poll (&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR)))
    return false;
  securer_err_t e = NULL;
  int r = securer_sandbox_dispatch (t->sb, NULL, &e);
  securer_error_free (&e);
  return r == 0;
}

/* One setup message from the session, before the deadline. */
static int
recv_setup (int sock, uint64_t deadline, struct sync_msg *m, pid_t *from, securer_err_t *err)
{
  for (;;)
    {
      uint64_t now = launch_now_ns ();
      if (now >= deadline)
        {
          securer_error_set (err, ETIMEDOUT, "the session was still being set up when the timeout expired");
          securer_error_set_status (err, SECURER_EXIT_TIMEOUT);
          return -1;
        }
      struct pollfd pfd = { sock, POLLIN, 0 };
      int r = poll (&pfd, 1, (int) ((deadline - now) / 1000000u) + 1);
      if (r < 0 && errno != EINTR)
        return securer_error_set (err, errno, "wait for the session");
      if (r <= 0)
        continue;
      int fd = -1;
      r = sync_recv (sock, m, &fd, from, false);
      if (fd >= 0)
        close (fd);
      if (r < 0)
        return securer_error_set (err, errno, "read from the session");
      if (r == 0)
        return securer_error_set (err, EPIPE, "the session ended during setup (the template is gone?)");
      if (m->type == SYNC_ERROR)
        {
          securer_error_set (err, 0, "%s", m->text);
          (*err)->errnum = m->errnum;
          securer_error_set_status (err, m->status > 0 ? m->status : SECURER_EXIT_SETUP);
          return -1;
        }
      return 0;
    }
}

static int
send_request (struct securer_template *t, const struct securer_zygote_request *rq,
              const int fds[SECURER_ZYGOTE_REQUEST_FDS],
              securer_err_t *err)
{
  union { char b[CMSG_SPACE (SECURER_ZYGOTE_REQUEST_FDS * sizeof (int))]; struct cmsghdr a; } u;
  memset (&u, 0, sizeof u);
  struct iovec iov = { (void *) rq, sizeof *rq };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
  struct cmsghdr *h = CMSG_FIRSTHDR (&mh);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN (SECURER_ZYGOTE_REQUEST_FDS * sizeof (int));
  memcpy (CMSG_DATA (h), fds, SECURER_ZYGOTE_REQUEST_FDS * sizeof (int));
  ssize_t n;
  /* Never blocking: a template that stopped reading its requests must not
   * hang the caller. */
  do
    n = sendmsg (t->ctl, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return securer_error_set (err, EAGAIN, "the template is not reading its requests");
  if (n != (ssize_t) sizeof *rq)
    return securer_error_set (err, n < 0 ? errno : EIO, "send the request to the template");
  return 0;
}

int
securer_template_spawn (struct securer_template *t, const struct securer_spawn_opts *so,
                        struct securer_sandbox **out, securer_err_t *err)
{
  *out = NULL;
  if (!securer_template_alive (t))
    {
      securer_error_set (err, ECHILD, "the session template has ended");
      securer_error_set_status (err, SECURER_EXIT_SETUP);
      return -1;
    }
  const struct securer_policy *p = t->p;
  struct securer_sandbox *sb = calloc (1, sizeof *sb);
  if (sb == NULL)
    {
      securer_error_set (err, ENOMEM, "session");
      securer_error_set_status (err, SECURER_EXIT_SETUP);
      return -1;
    }
  sb->p = p;
  sb->foreign = true;
  sb->prog = t->prog;
  sb->prog_borrowed = true;
  sb->on_syscall = so->on_syscall;
  sb->on_syscall_ctx = so->on_syscall_ctx;
  sb->pidfd = sb->epfd = sb->timerfd = sb->notify_fd = sb->status_sock = -1;
  sb->host_ids.fd = -1;
  int setup[2] = { -1, -1 }, status[2] = { -1, -1 };
  pid_t fork_pid = 0;
  uint64_t timeout_ms = so->timeout_ms ? so->timeout_ms : p->limits.timeout_ms;
  struct securer_zygote_request rq = { .magic = SECURER_ZYGOTE_MAGIC, .sock_at = t->sock_at,
                                       .verbose = so->verbose };

  if (t->count > 0
      && (securer_hostids_acquire (&sb->host_ids, err) < 0
          || securer_zygote_index (sb->host_ids.id, t->first, t->count, &rq.index, err) < 0))
    goto fail;
  /* Root's sessions run as their leased id; another caller's as the
   * template does, as the caller. */
  sb->host_uid = t->count > 0 ? sb->host_ids.id : t->sb->host_uid;
  if (securer_cgroup_create (p, &sb->cg, &sb->cg_report, err) < 0)
    {
      securer_error_prefix (err, "cgroup");
      goto fail;
    }
  if (so->verbose && sb->cg_report != NULL)
    fprintf (stderr, "securer: %s\n", sb->cg_report);
  rq.no_memory_limit = p->limits.cgroup_memory > 0 && securer_cgroup_version (sb->cg, "memory") == 0;
  int one = 1;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, setup) < 0
      || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, status) < 0
      || setsockopt (setup[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0)
    {
      securer_error_set (err, errno, "socketpair");
      goto fail;
    }
  /* The session's pid 1 holds the lease too, so that the id stays leased
   * until its exit has let go of the session, however long that takes
   * (docs/security.md, "Host ids and the sandbox's last moments"). */
  rq.lease = sb->host_ids.fd >= 0;
  const int fds[SECURER_ZYGOTE_REQUEST_FDS] = { so->stdin_fd >= 0 ? so->stdin_fd : 0,
                                                so->stdout_fd >= 0 ? so->stdout_fd : 1,
                                                so->stderr_fd >= 0 ? so->stderr_fd : 2, setup[1], status[1],
                                                rq.lease ? sb->host_ids.fd : status[1] };
  sb->start_ns = launch_now_ns ();
  if (send_request (t, &rq, fds, err) < 0)
    goto fail;
  close_fds (&setup[1], 1);
  close_fds (&status[1], 1);
  sb->status_sock = status[0];
  status[0] = -1;

  uint64_t setup_ms = timeout_ms && timeout_ms < SESSION_SETUP_MS ? timeout_ms : SESSION_SETUP_MS;
  uint64_t deadline = sb->start_ns + setup_ms * 1000000ull;
  struct sync_msg m;
  if (recv_setup (setup[0], deadline, &m, &fork_pid, err) < 0)
    goto fail;
  if (m.type != SYNC_SESSION_HELLO || fork_pid <= 0)
    {
      securer_error_set (err, EPROTO, "the template's fork did not say hello (message %u)", m.type);
      goto fail;
    }
  /* Everything the session makes from here is counted in its own cgroup.
   * The fork joins its v1 groups itself: moving another process takes the
   * kernel's global threadgroup lock and waits for an RCU grace period
   * (~8 ms here), a thread moving itself does not. */
  int join[3];
  unsigned n_join = 0;
  if (securer_cgroup_hand_over (sb->cg, fork_pid, join, &n_join, err) < 0)
    {
      securer_error_prefix (err, "cgroup");
      goto fail;
    }
  struct sync_msg go;
  memset (&go, 0, offsetof (struct sync_msg, text) + 1);
  int sent = 0;
  for (unsigned i = 0; i < n_join; i++)
    {
      go.type = SYNC_JOIN;
      if (sent == 0)
        sent = sync_send (setup[0], &go, join[i]);
      close (join[i]);
    }
  go.type = SYNC_GO;
  if (sent < 0 || sync_send (setup[0], &go, -1) < 0)
    {
      securer_error_set (err, errno, "release the session");
      goto fail;
    }
  if (sb->prog != NULL)
    {
      const struct sock_filter *insns;
      unsigned n;
      unsigned long flags;
      int e = EINVAL;
      if (securer_seccomp_bpf (sb->prog, &insns, &n, &flags) == 0)
        e = sync_send_filter (setup[0], insns, n, flags) == 0 ? 0 : errno;
      if (e == EPIPE || e == ECONNRESET)
        e = 0;   /* the session failed a step and says why below */
      if (e != 0)
        {
          securer_error_set (err, e, "send the seccomp filter");
          goto fail;
        }
    }
  pid_t init_pid = 0;
  if (recv_setup (setup[0], deadline, &m, &init_pid, err) < 0)
    goto fail;
  if (m.type != SYNC_SESSION_INIT || init_pid <= 0)
    {
      securer_error_set (err, EPROTO, "the session's pid 1 did not say who it is (message %u)", m.type);
      goto fail;
    }
  /* Only with a pidfd: a pid alone could be reused once it is gone. */
  sb->pidfd = pidfd_open (init_pid, 0);
  if (sb->pidfd < 0)
    {
      securer_error_set (err, errno, "pidfd for the session's pid 1");
      goto fail;
    }
  sb->init_pid = init_pid;
  if (launch_await_exec (sb, setup[0], setup_ms, err) < 0 || launch_start_supervision (sb, timeout_ms, err) < 0)
    goto fail;
  close_fds (setup, 2);
  *out = sb;
  return 0;

fail:
  launch_abort_child (sb);
  /* The fork, before it made the session's pid 1, is in the cgroup (or,
   * when placing it failed, alone with nothing to leave behind). */
  if (sb->cg == NULL && fork_pid > 0 && sb->init_pid == 0)
    kill (fork_pid, SIGKILL);
  close_fds (setup, 2);
  close_fds (status, 2);
  if (*err != NULL && (*err)->status == 0)
    securer_error_set_status (err, SECURER_EXIT_SETUP);
  securer_error_prefix (err, "session from the template");
  launch_sandbox_destroy (sb);
  return -1;
}

void
securer_template_free (struct securer_template *t)
{
  if (t == NULL)
    return;
  if (t->sb != NULL)
    {
      securer_err_t e = NULL;
      securer_sandbox_kill (t->sb, &e);
      securer_error_free (&e);
      securer_sandbox_free (t->sb);
    }
  if (t->ctl >= 0)
    close (t->ctl);
  if (t->prog != NULL)
    securer_seccomp_free (t->prog);
  securer_policy_free (t->tp);
  free (t);
}
