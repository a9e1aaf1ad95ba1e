/* The launch sequence: parent side (prepare, clone, map ids, place in the
 * cgroup, release, wait for exec), the payload's last steps before exec,
 * and supervision (pidfd + timerfd + seccomp listener in one epoll set).
 * See docs/design-launch.md. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "linux/landlock-internal.h"
#include "linux/launch.h"
#include "linux/netproxy.h"
#include "raw-syscall.h"
#include "linux/zygote.h"
#include "seccomp/seccomp.h"
#include "securer/paths.h"

extern char **environ;

uint64_t
launch_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* ======================================================================
 * Payload: runs in the sandbox, forked by init, ends in execve.
 * ====================================================================== */

static __attribute__ ((noreturn)) void
payload_fail (struct launch_plan *lp, int status, securer_err_t *err)
{
  sync_send_error (lp->setup_sock, status, *err);
  _exit (status);
}

/* Whether used_us of CPU time reaches a limit of limit_s seconds, give
 * or take what the usage reported at exit lacks of the kernel's own
 * figure: measured 0.06-0.15 s short at 1 and 2 s. */
static bool
cpu_limit_reached (uint64_t used_us, uint64_t limit_s)
{
  uint64_t slack = used_us / 16 > 250000u ? used_us / 16 : 250000u;
  return limit_s > 0 && limit_s < UINT64_MAX / 2000000u && used_us + slack >= limit_s * 1000000u;
}

/* Failure report for the steps after the rlimits, which must not allocate:
 * the message is formatted on the stack as securer_error_set would. */
static __attribute__ ((noreturn, format (printf, 4, 5))) void
payload_fail_noalloc (struct launch_plan *lp, int status, int errnum, const char *fmt, ...)
{
  struct sync_msg m;
  memset (&m, 0, offsetof (struct sync_msg, text));
  m.type = SYNC_ERROR;
  m.status = status;
  m.errnum = errnum;
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (m.text, sizeof m.text, fmt, ap);
  va_end (ap);
  if (n < 0)
    n = 0;
  if (errnum != 0 && (size_t) n < sizeof m.text)
    {
      const char *name = strerrorname_np (errnum), *desc = strerrordesc_np (errnum);
      snprintf (m.text + n, sizeof m.text - (size_t) n, ": %s (%s)", name ? name : "E?",
                desc ? desc : "unknown error");
    }
  (void) sync_send (lp->setup_sock, &m, -1);
  _exit (status);
}

/* A gate opens with one byte; EOF alone means its writer died first. */
bool
launch_wait_byte (int fd)
{
  char c;
  ssize_t n;
  do
    n = read (fd, &c, 1);
  while (n < 0 && errno == EINTR);
  return n == 1 && c == LAUNCH_GATE_BYTE;
}

/* Until securer-init's byte: without it pid 1 failed a step and said so. */
static void
wait_gate (struct launch_plan *lp)
{
  if (!launch_wait_byte (lp->gate_fd))
    _exit (SECURER_EXIT_SETUP);
  close (lp->gate_fd);
}

static void
reset_signals (void)
{
  /* The caller may have blocked or ignored signals (the CLI blocks the ones
   * it forwards); the command starts from the defaults. */
  struct sigaction dfl;
  memset (&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP)
      (void) sigaction (s, &dfl, NULL);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
}

void
launch_move_off_this_cpu (pid_t pid, const cpu_set_t *mask)
{
  cpu_set_t others = *mask;
  unsigned here = ~0u;
  if (SECURER_SYS3 (SYS_getcpu, &here, NULL, NULL) == 0 && here < CPU_SETSIZE)
    CPU_CLR (here, &others);
  if (CPU_COUNT (&others) > 0)
    (void) SECURER_SYS3 (SYS_sched_setaffinity, pid, sizeof others, &others);
}

/* The caller's CPU mask, which pid 1 narrowed to move this process off
 * its CPU (init.c). */
static void
restore_cpus (struct launch_plan *lp)
{
  securer_err_t err = NULL;
  if (lp->restore_cpus && sched_setaffinity (0, sizeof lp->cpus, &lp->cpus) < 0)
    {
      securer_error_set (&err, errno, "restore the CPU affinity");
      payload_fail (lp, SECURER_EXIT_SETUP, &err);
    }
}

/* network allow: the proxy's port on the sandbox's loopback, listened on
 * here (inside the namespace: a socket belongs to the namespace it was
 * made in, wherever it is used from) and handed to the supervisor, which
 * serves it from outside.  Before Landlock, which forbids binding; the
 * payload's own copy is closed with every other descriptor before exec. */
static void
offer_proxy_listener (struct launch_plan *lp)
{
  securer_err_t err = NULL;
  int fd = securer_netproxy_listen (&err);
  if (fd < 0)
    payload_fail (lp, SECURER_EXIT_SETUP, &err);
  struct sync_msg m;
  memset (&m, 0, sizeof m);
  m.type = SYNC_PROXY_FD;
  if (sync_send (lp->setup_sock, &m, fd) < 0)
    {
      /* ETOOMANYREFS: descriptors in flight are counted per host user;
       * without the proxy there is no network the policy allows. */
      securer_error_set (&err, errno, "network allow: hand the proxy's socket to the supervisor");
      payload_fail (lp, SECURER_EXIT_SETUP, &err);
    }
  close (fd);
}

void
securer_payload_confine (struct launch_plan *lp, pid_t init_pid)
{
  securer_err_t err = NULL;
  const struct securer_policy *p = lp->p;

  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid () != init_pid)
    _exit (SECURER_EXIT_SETUP);
  /* pid 1 moved this process off its CPU (init.c); running elsewhere now,
   * it takes back its mask at once, free to move again when a CPU idles
   * (pid 1's part ends first, while the launcher may still be busy). */
  restore_cpus (lp);
  close (lp->status_sock);
  if (lp->resume)
    {
      /* A session forked from a template keeps R's own handlers (R set
       * them up in the template); only the mask init blocked is undone. */
      sigset_t none;
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
    }
  else
    reset_signals ();

  /* A new session has no controlling terminal, so TIOCSTI cannot push
   * input into the caller's terminal. */
  if (setsid () < 0)
    {
      securer_error_set (&err, errno, "setsid");
      payload_fail (lp, SECURER_EXIT_SETUP, &err);
    }
  if (lp->builds_view)
    {
      securer_init_build_view (lp);
      /* securer-init's byte: pid 1 holds nothing of the caller, cannot be
       * ptraced, and has made the network namespace, which this process
       * joins (through pid 1's pidfd: that takes ptrace access, which the
       * capabilities still held here give). */
      wait_gate (lp);
      /* The mask taken back above may have come before pid 1's move: a
       * new task can start on an idle CPU at once and get there first,
       * and the move then sticks.  pid 1 moves nothing once it executes
       * securer-init, so taken back again here, the mask is the caller's
       * for good. */
      restore_cpus (lp);
      int late = launch_late_namespaces (p);
      if (late != 0)
        {
          int pfd = (int) syscall (SYS_pidfd_open, init_pid, 0);
          if (pfd < 0 || setns (pfd, late) < 0)
            {
              securer_error_set (&err, errno, "join the sandbox's network and IPC namespaces");
              payload_fail (lp, SECURER_EXIT_SETUP, &err);
            }
          close (pfd);
        }
      if (p->network == SECURER_NET_ALLOW)
        offer_proxy_listener (lp);
    }
  if ((lp->tpl && lp->tpl->count ? securer_zygote_keep_setid_caps (&err) : securer_linux_drop_caps (&err)) < 0)
    payload_fail (lp, SECURER_EXIT_SETUP, &err);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    {
      securer_error_set (&err, errno, "set no_new_privs");
      payload_fail (lp, SECURER_EXIT_SETUP, &err);
    }
  const char *cwd = p->cwd != NULL ? p->cwd : "/";
  if (chdir (cwd) < 0)
    {
      securer_error_set (&err, errno, "chdir %s", cwd);
      payload_fail (lp, SECURER_EXIT_SETUP, &err);
    }

  struct securer_landlock_report rep;
  char ll_summary[SECURER_LANDLOCK_SUMMARY_MAX];
  if (securer_landlock_apply_plan (p->landlock.mode, lp->landlock, securer_landlock_abi (), &rep, ll_summary,
                                   sizeof ll_summary, &err) < 0)
    {
      securer_error_prefix (&err, "landlock");
      payload_fail (lp, SECURER_EXIT_SETUP, &err);
    }
  /* Wait until pid 1 has become securer-init and undumpable: from the
   * moment the command runs, pid 1 must hold nothing of the caller and be
   * out of the command's reach.  The steps above (capabilities,
   * no_new_privs, Landlock) need no particular descriptors, so they run
   * while pid 1 is still executing securer-init. */
  if (!lp->builds_view)
    wait_gate (lp);
  /* The sync socket goes to a fixed number at the payload's NOFILE hard
   * limit: the seccomp filter allows sendmsg on exactly that fd number, and
   * after exec (CLOEXEC) the command can never own an fd that high.  The
   * soft limit is raised just enough to place it; the rlimit step below
   * sets the final values. */
  int sock = lp->setup_sock_at;
  struct rlimit nofile;
  if (getrlimit (RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur <= (rlim_t) sock)
    {
      nofile.rlim_cur = (rlim_t) sock + 1;
      (void) setrlimit (RLIMIT_NOFILE, &nofile);
    }
  if (securer_linux_arrange_fds (lp->stdin_fd, lp->stdout_fd, lp->stderr_fd, lp->pass_fds,
                                 lp->n_pass_fds, lp->pass_scratch, lp->setup_sock, sock, &err) < 0)
    payload_fail (lp, SECURER_EXIT_SETUP, &err);
  lp->setup_sock = sock;
  struct sync_msg m;
  memset (&m, 0, sizeof m);
  m.type = SYNC_READY;
  m.ll_abi = rep.abi;
  m.ll_enforced = rep.enforced;
  m.ll_fs = rep.handled_fs;
  m.ll_net = rep.handled_net;
  m.ll_scoped = rep.scoped;
  snprintf (m.text, sizeof m.text, "%s", ll_summary);
  if (sync_send (sock, &m, -1) < 0)
    _exit (SECURER_EXIT_SETUP);

  /* The parent generated the filter while we were being set up and sent
   * it right after GO; it is waiting in the socket. */
  static struct sock_filter filter[BPF_MAXINSNS];
  unsigned n_insns = 0;
  unsigned long filter_flags = 0;
  if (lp->want_filter)
    {
      int r = sync_recv_filter (sock, filter, &n_insns, &filter_flags);
      if (r == 0)
        _exit (SECURER_EXIT_SETUP);   /* the parent gave up */
      if (r < 0)
        payload_fail_noalloc (lp, SECURER_EXIT_SETUP, errno, "seccomp: receive the filter");
    }

  /* From here to execve nothing allocates (docs/design-launch.md): the
   * rlimits (RLIMIT_AS above all) apply to this process already, and every
   * value, the filter and the exec paths were prepared before clone. */
  unsigned failed = 0;
  int rc = securer_linux_apply_rlimits (&lp->rlimits, &failed);
  if (rc < 0)
    payload_fail_noalloc (lp, SECURER_EXIT_SETUP, -rc, "set rlimit %s",
                          securer_rlimit_name (lp->rlimits.step[failed].id));

  /* seccomp last: after it, only what the filter allows can run, and the
   * steps above need syscalls the command should not have. */
  if (lp->want_filter)
    {
      int nfd = -1;
      rc = securer_seccomp_install_bpf (filter, n_insns, filter_flags, &nfd);
      if (rc == -EPERM)
        payload_fail_noalloc (lp, SECURER_EXIT_SETUP, EPERM,
                              "seccomp: load seccomp filter: no_new_privs is not set");
      if (rc < 0)
        payload_fail_noalloc (lp, SECURER_EXIT_SETUP, -rc, "seccomp: load seccomp filter");
      if (nfd >= 0)
        {
          /* Sent along and not waited for: it waits in the socket ahead of
           * the end of file the exec makes, and the parent reads it before
           * anything else the sandbox does (a call the filter denies
           * meanwhile only waits for its answer).  A descriptor in flight
           * is charged to a count per host user, which other processes of
           * the same uid can have used up (ETOOMANYREFS): then it is
           * offered by number and the parent takes it with pidfd_getfd,
           * which depends on nobody else. */
          rc = securer_seccomp_give_listener (sock, nfd);
          if (rc == -ETOOMANYREFS)
            rc = securer_seccomp_offer_listener (sock, nfd);
          if (rc < 0)
            payload_fail_noalloc (lp, SECURER_EXIT_SETUP, -rc, "seccomp: hand the listener to the supervisor");
          close (nfd);
        }
    }
}

void
securer_payload_main (struct launch_plan *lp, pid_t init_pid)
{
  securer_payload_confine (lp, init_pid);
  int e = ENOENT;
  bool denied = false;
  for (char **c = lp->exec_paths; *c != NULL; c++)
    {
      execve (*c, lp->argv, lp->envp);
      e = errno;
      if (e == EACCES)
        denied = true;
      else if (e != ENOENT && e != ENOTDIR)
        break;
    }
  if (denied && (e == ENOENT || e == ENOTDIR))
    e = EACCES;
  int status = (e == ENOENT || e == ENOTDIR) ? SECURER_EXIT_NOT_FOUND : SECURER_EXIT_CANNOT_EXEC;
  payload_fail_noalloc (lp, status, e, "execute %s", lp->argv[0]);
}

/* ======================================================================
 * Parent side.
 * ====================================================================== */

static char **
exec_candidates (const char *cmd, char **envp, securer_err_t *err)
{
  if (strchr (cmd, '/') != NULL)
    {
      char **v = calloc (2, sizeof *v);
      if (v == NULL || (v[0] = strdup (cmd)) == NULL)
        {
          free (v);
          securer_error_set (err, ENOMEM, "exec path");
          return NULL;
        }
      return v;
    }
  /* The command is looked up with the PATH the sandbox will have, not ours. */
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  for (char **e = envp; *e != NULL; e++)
    if (strncmp (*e, "PATH=", 5) == 0)
      path = *e + 5;
  size_t n = 1;
  for (const char *s = path; *s; s++)
    n += *s == ':';
  char **v = calloc (n + 1, sizeof *v);
  if (v == NULL)
    goto oom;
  size_t k = 0;
  for (const char *s = path;; )
    {
      size_t len = strcspn (s, ":");
      if (asprintf (&v[k], "%.*s%s%s", (int) len, len ? s : ".", "/", cmd) < 0)
        {
          v[k] = NULL;
          goto oom;
        }
      k++;
      if (s[len] == '\0')
        break;
      s += len + 1;
    }
  return v;
oom:
  if (v != NULL)
    for (size_t i = 0; v[i] != NULL; i++)
      free (v[i]);
  free (v);
  securer_error_set (err, ENOMEM, "exec path");
  return NULL;
}

static void
strv_free (char **v)
{
  if (v == NULL)
    return;
  for (char **s = v; *s != NULL; s++)
    free (*s);
  free (v);
}

int
launch_late_namespaces (const struct securer_policy *p)
{
  return ((p->namespaces & SECURER_NS_NET) ? CLONE_NEWNET : 0) | ((p->namespaces & SECURER_NS_IPC) ? CLONE_NEWIPC : 0);
}

static unsigned long
clone_flags (const struct securer_policy *p)
{
  unsigned long f = 0;
  if (p->namespaces & SECURER_NS_USER)
    f |= CLONE_NEWUSER;
  if (p->namespaces & SECURER_NS_PID)
    f |= CLONE_NEWPID;
  if (p->namespaces & SECURER_NS_MOUNT)
    f |= CLONE_NEWNS;
  /* Neither CLONE_NEWNET nor CLONE_NEWIPC: a network namespace costs
   * about 0.5 ms of CPU to create (every pernet subsystem, the loopback
   * device, sysctl tables), an IPC one 0.07 ms (its mqueue mount, sysctl
   * tables), and here they would hold up everything.  pid 1 makes them
   * while the payload builds the mounts, and the payload joins them
   * (init.c). */
  if (p->namespaces & SECURER_NS_UTS)
    f |= CLONE_NEWUTS;
  return f;
}

/* fork-like clone with the namespace flags; the parent gets a pidfd. */
static pid_t
clone_child (unsigned long flags, int *pidfd)
{
  struct clone_args ca;
  memset (&ca, 0, sizeof ca);
  ca.flags = flags | CLONE_PIDFD;
  ca.pidfd = (uint64_t) (uintptr_t) pidfd;
  ca.exit_signal = SIGCHLD;
  long r = syscall (SYS_clone3, &ca, sizeof ca);
  if (r >= 0 || errno != ENOSYS)
    return (pid_t) r;
  /* Kernels before 5.3: plain clone, then a pidfd if that exists. */
  r = syscall (SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (r > 0)
    *pidfd = pidfd_open ((pid_t) r, 0);
  return (pid_t) r;
}

static void
sandbox_release (struct securer_sandbox *sb)
{
  if (sb->pidfd >= 0)
    close (sb->pidfd);
  if (sb->epfd >= 0)
    close (sb->epfd);
  if (sb->timerfd >= 0)
    close (sb->timerfd);
  if (sb->notify_fd >= 0)
    close (sb->notify_fd);
  if (sb->status_sock >= 0)
    close (sb->status_sock);
  sb->pidfd = sb->epfd = sb->timerfd = sb->notify_fd = sb->status_sock = -1;
}

static void
kill_everything (struct securer_sandbox *sb)
{
  /* Killing the pid namespace's init tears the namespace down; the cgroup
   * catches whatever lives outside it (no pid namespace in the policy). */
  if (sb->pidfd >= 0)
    pidfd_send_signal (sb->pidfd, SIGKILL, NULL, 0);
  else if (sb->init_pid > 0)
    kill (sb->init_pid, SIGKILL);
  if (sb->cg != NULL)
    securer_cgroup_kill_all (sb->cg);
}

/* A session forked from a template is reaped by the template's init, not
 * by us: wait (bounded) for its pid 1 to be gone, which the kernel says
 * only once everything in its pid namespace is, so that its host id is
 * not leased again while any of it runs. */
static void
await_foreign_end (struct securer_sandbox *sb)
{
  struct pollfd pfd = { sb->pidfd, POLLIN, 0 };
  if (sb->pidfd >= 0)
    while (poll (&pfd, 1, 2000) < 0 && errno == EINTR)
      ;
}

/* Kills and reaps a child that never got to exec. */
void
launch_abort_child (struct securer_sandbox *sb)
{
  kill_everything (sb);
  if (sb->init_pid > 0 && sb->foreign)
    await_foreign_end (sb);
  else if (sb->init_pid > 0)
    while (waitpid (sb->init_pid, NULL, __WALL) < 0 && errno == EINTR)
      ;
  sb->init_pid = 0;
}

void
launch_sandbox_destroy (struct securer_sandbox *sb)
{
  sandbox_release (sb);
  if (sb->cg != NULL)
    securer_cgroup_destroy (sb->cg);
  /* Only now, with every process of the sandbox gone, may another sandbox
   * get its host ids. */
  securer_hostids_release (&sb->host_ids);
  free (sb->cg_report);
  if (sb->prog != NULL && !sb->prog_borrowed)
    securer_seccomp_free (sb->prog);
  securer_landlock_report_clear (&sb->ll);
  securer_netproxy_free (sb->proxy);
  free (sb->detail);
  securer_status_clear (&sb->final);
  free (sb);
}

/* The seccomp listener: a denied syscall waits here until answered.  The
 * answer (and the syscall's name for the status) comes from the seccomp
 * area's supervisor helper. */
static void
handle_notify (struct securer_sandbox *sb)
{
  struct securer_seccomp_event ev;
  securer_err_t err = NULL;
  int r = securer_seccomp_notify_handle (sb->prog, sb->notify_fd, &ev, &err);
  if (r < 0)
    {
      /* A listener we cannot read leaves calls hanging: fail closed. */
      securer_error_free (&err);
      if (sb->reason == SECURER_KILL_NONE)
        sb->reason = SECURER_KILL_SECCOMP;
      kill_everything (sb);
      return;
    }
  if (r == 1 && sb->on_syscall != NULL)
    {
      struct securer_syscall_event se = { ev.pid, ev.arch, ev.nr, ev.name, { 0 }, ev.action };
      memcpy (se.args, ev.args, sizeof se.args);
      sb->on_syscall (sb->on_syscall_ctx, &se);
    }
  if (r == 1 && ev.kill)
    {
      if (sb->reason == SECURER_KILL_NONE)
        {
          sb->reason = SECURER_KILL_SECCOMP;
          free (sb->detail);
          sb->detail = strdup (ev.name);
        }
      kill_everything (sb);
    }
}

/* The payload offered its seccomp listener by number: take a copy with
 * pidfd_getfd, or, where the kernel has none (before 5.6) or refuses, ask
 * for it over the socket (it then arrives as SYNC_NOTIFY_FD). */
static int
answer_listener_offer (struct securer_sandbox *sb, int sock, int fdnum)
{
  char answer = SECURER_LISTENER_SEND;
  if (sb->notify_fd < 0 && sb->payload_pid > 0)
    {
      int pfd = (int) syscall (SYS_pidfd_open, sb->payload_pid, 0);
      if (pfd >= 0)
        {
          int fd = (int) syscall (SYS_pidfd_getfd, pfd, fdnum, 0);
          close (pfd);
          if (fd >= 0)
            {
              sb->notify_fd = fd;
              answer = SECURER_LISTENER_TAKEN;
            }
        }
    }
  ssize_t n;
  do
    n = send (sock, &answer, 1, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == 1 ? 0 : -1;
}

/* Blocks until the payload has exec'd (EOF on the setup socket) or a step
 * failed (an ERROR message).  Seccomp notifications are answered meanwhile:
 * a denial between loading the filter and exec would otherwise deadlock. */
int
launch_await_exec (struct securer_sandbox *sb, int sock, uint64_t timeout_ms, securer_err_t *err)
{
  /* The timeout counts from clone: a setup step that hangs (a bind of a
   * path on a dead network filesystem) must not hang the caller. */
  uint64_t deadline = timeout_ms ? sb->start_ns + timeout_ms * 1000000u : 0;
  for (;;)
    {
      struct pollfd pfd[2] = { { sock, POLLIN, 0 }, { sb->notify_fd, POLLIN, 0 } };
      int wait_ms = -1;
      if (deadline)
        {
          uint64_t now = launch_now_ns ();
          if (now >= deadline)
            {
              securer_error_set (err, ETIMEDOUT, "the sandbox was still being set up when the timeout expired");
              securer_error_set_status (err, SECURER_EXIT_TIMEOUT);
              return -1;
            }
          wait_ms = (int) ((deadline - now + 999999u) / 1000000u);
        }
      int r = poll (pfd, sb->notify_fd >= 0 ? 2 : 1, wait_ms);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return securer_error_set (err, errno, "wait for the sandbox");
        }
      if (sb->notify_fd >= 0 && (pfd[1].revents & POLLIN))
        handle_notify (sb);
      else if (sb->notify_fd >= 0 && (pfd[1].revents & (POLLHUP | POLLERR)))
        {
          close (sb->notify_fd);
          sb->notify_fd = -1;
        }
      if (pfd[0].revents == 0)
        continue;
      struct sync_msg m;
      int fd = -1;
      pid_t from = 0;
      r = sync_recv (sock, &m, &fd, &from, false);
      if (r < 0)
        return securer_error_set (err, errno, "read from the sandbox");
      if (r == 0 && !sb->ll_known)
        {
          /* Every setup step reports its failure; only a process killed
           * from outside (or by the OOM killer) ends without a word. */
          securer_error_set (err, EPIPE, "the sandbox ended during setup, before its payload was ready "
                             "(killed from outside or out of memory?)");
          return -1;
        }
      if (r == 0)
        return 0;
      switch (m.type)
        {
        case SYNC_ERROR:
          if (fd >= 0)
            close (fd);
          securer_error_set (err, 0, "%s", m.text);
          (*err)->errnum = m.errnum;
          securer_error_set_status (err, m.status > 0 ? m.status : SECURER_EXIT_SETUP);
          return -1;
        case SYNC_READY:
          if (sb->p->network == SECURER_NET_ALLOW && sb->proxy == NULL)
            {
              /* Fail closed: the policy's network is the proxy. */
              if (fd >= 0)
                close (fd);
              return securer_error_set (err, EPROTO, "network allow: the sandbox did not hand over the proxy's "
                                        "socket");
            }
          sb->payload_pid = from;
          sb->ll_known = true;
          sb->ll.abi = m.ll_abi;
          sb->ll.enforced = m.ll_enforced != 0;
          sb->ll.handled_fs = m.ll_fs;
          sb->ll.handled_net = m.ll_net;
          sb->ll.scoped = m.ll_scoped;
          free (sb->ll.summary);
          sb->ll.summary = m.text[0] ? strdup (m.text) : NULL;
          break;
        case SYNC_NOTIFY_OFFER:
          if (answer_listener_offer (sb, sock, m.status) < 0)
            return securer_error_set (err, errno, "answer the payload's seccomp listener offer");
          break;
        case SYNC_PROXY_FD:
          if (fd >= 0 && sb->proxy == NULL && sb->p->network == SECURER_NET_ALLOW)
            {
              int lfd = fd;
              fd = -1;
              if (securer_netproxy_new (sb->p, lfd, sb->on_net, sb->on_net_ctx, &sb->proxy, err) < 0)
                return -1;
            }
          break;
        case SYNC_NOTIFY_FD:
          if (fd >= 0 && sb->notify_fd < 0)
            {
              sb->notify_fd = fd;
              fd = -1;
            }
          break;
        default:
          break;
        }
      if (fd >= 0)
        close (fd);
    }
}

static int
epoll_add (int epfd, int fd, securer_err_t *err)
{
  struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
  if (epoll_ctl (epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
    return securer_error_set (err, errno, "epoll_ctl");
  return 0;
}

int
launch_start_supervision (struct securer_sandbox *sb, uint64_t timeout_ms, securer_err_t *err)
{
  sb->epfd = epoll_create1 (EPOLL_CLOEXEC);
  if (sb->epfd < 0)
    return securer_error_set (err, errno, "epoll_create1");
  if (epoll_add (sb->epfd, sb->pidfd, err) < 0)
    return -1;
  if (timeout_ms > 0)
    {
      sb->timerfd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
      if (sb->timerfd < 0)
        return securer_error_set (err, errno, "timerfd_create");
      /* The clock started before clone: setup time counts against it. */
      uint64_t deadline = sb->start_ns + timeout_ms * 1000000u;
      struct itimerspec its;
      memset (&its, 0, sizeof its);
      its.it_value.tv_sec = (time_t) (deadline / 1000000000u);
      its.it_value.tv_nsec = (long) (deadline % 1000000000u);
      if (timerfd_settime (sb->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        return securer_error_set (err, errno, "timerfd_settime");
      if (epoll_add (sb->epfd, sb->timerfd, err) < 0)
        return -1;
    }
  if (sb->notify_fd >= 0 && epoll_add (sb->epfd, sb->notify_fd, err) < 0)
    return -1;
  if (sb->status_early && epoll_add (sb->epfd, sb->status_sock, err) < 0)
    return -1;
  int oom = securer_cgroup_oom_fd (sb->cg);
  if (oom >= 0 && epoll_add (sb->epfd, oom, err) < 0)
    return -1;
  if (sb->proxy != NULL && epoll_add (sb->epfd, securer_netproxy_fd (sb->proxy), err) < 0)
    return -1;
  return 0;
}

static bool
is_kill (const struct securer_action *a)
{
  return a->type == SECURER_ACT_KILL_PROCESS || a->type == SECURER_ACT_KILL_THREAD;
}

/* Reporting is only asked for when a rule (or the default) kills or
 * notifies: the other actions need no supervisor, and a filter without any
 * notify action has no listener to hand over.  A notify default needs it
 * too: without the sendmsg exception it brings, handing the listener over
 * would itself wait for an answer from the supervisor that has no listener
 * yet. */
bool
launch_policy_can_kill (const struct securer_seccomp *sc)
{
  if (is_kill (&sc->default_action) || sc->default_action.type == SECURER_ACT_NOTIFY)
    return true;
  for (size_t i = 0; i < sc->n_rules; i++)
    if (is_kill (&sc->rules[i].action) || sc->rules[i].action.type == SECURER_ACT_NOTIFY)
      return true;
  return false;
}

/* Where the payload keeps its sync socket: at its final NOFILE hard limit
 * (the policy's, or one below the caller's so it can be placed at all). */
int
launch_sync_fd_number (const struct securer_policy *p, unsigned n_pass, int *out, securer_err_t *err)
{
  struct rlimit cur;
  if (getrlimit (RLIMIT_NOFILE, &cur) < 0)
    return securer_error_set (err, errno, "get rlimit nofile");
  uint64_t hard = cur.rlim_max == RLIM_INFINITY ? (uint64_t) INT_MAX : (uint64_t) cur.rlim_max;
  uint64_t n = hard - 1;
  const struct securer_rlimit *r = &p->limits.rlimit[SECURER_RLIMIT_NOFILE];
  if (r->set && r->hard < n)
    n = r->hard;
  if (n > INT_MAX - 1)
    n = INT_MAX - 1;
  if (n < 3 + (uint64_t) n_pass)
    return securer_error_set (err, EMFILE, "rlimit nofile %llu leaves no room for %u passed fds",
                              (unsigned long long) n, n_pass);
  *out = (int) n;
  return 0;
}

/* securer-init, opened before clone: after pivot_root its path may not
 * exist in the sandbox's root, and the descriptor cannot be redirected.
 * Whoever could write it would run code as the sandbox's pid 1, outside
 * its Landlock domain and filter, so it must be as trusted as the caller. */
int
launch_open_init (int *out, securer_err_t *err)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/securer-init", securer_libexec_dir ());
  int fd = open (path, O_PATH | O_CLOEXEC);
  if (fd < 0)
    return securer_error_set (err, errno, "open the sandbox's init program %s", path);
  struct stat st;
  if (fstat (fd, &st) < 0)
    {
      int e = errno;
      close (fd);
      return securer_error_set (err, e, "stat %s", path);
    }
  if (!S_ISREG (st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid ()) || (st.st_mode & 022) != 0)
    {
      close (fd);
      return securer_error_set (err, EPERM, "%s must be a regular file owned by root or the caller and "
                                "writable by its owner alone", path);
    }
  *out = fd;
  return 0;
}

static int
check_policy (const struct securer_policy *p, securer_err_t *err)
{
  /* Refuse a policy whose isolation the launch below could not give. */
  if (p->network != SECURER_NET_HOST && !(p->namespaces & SECURER_NS_NET))
    return securer_error_set (err, EINVAL, "network %s needs a network namespace",
                              p->network == SECURER_NET_NONE ? "none" : "loopback");
  if (p->n_mounts > 0 && !(p->namespaces & SECURER_NS_MOUNT))
    return securer_error_set (err, EINVAL, "mounts need a mount namespace");
  if (p->hostname != NULL && !(p->namespaces & SECURER_NS_UTS))
    return securer_error_set (err, EINVAL, "a hostname needs a uts namespace");
  return 0;
}

/* Checks the rules and decides the filter's shape; the libseccomp work is
 * left to securer_seccomp_generate.  Denials go through user notification
 * (when the kernel has it) so the status can name the call. */
static int
compile_filter (struct securer_sandbox *sb, const struct securer_spawn_opts *opts, struct launch_plan *lp,
                securer_err_t *err)
{
  if (opts->verbose)
    fprintf (stderr, "securer: compile the seccomp filter\n");
  lp->seccomp_flags = launch_policy_can_kill (&sb->p->seccomp) ? SECURER_SECCOMP_REPORT_DENIALS : 0;
  unsigned cache = opts->no_seccomp_cache ? 0 : SECURER_SECCOMP_CACHE;
  if (securer_seccomp_compile (sb->p, lp->seccomp_flags | SECURER_SECCOMP_DEFER_BPF | cache, lp->setup_sock_at,
                               &sb->prog, err) < 0)
    return securer_error_prefix (err, "seccomp");
  lp->seccomp = sb->prog;
  return 0;
}

static int
generate_filter (struct securer_sandbox *sb, securer_err_t *err)
{
  if (securer_seccomp_generate (sb->prog, sb->p, err) < 0)
    return securer_error_prefix (err, "seccomp");
  return 0;
}

/* The rule lines of a policy loaded with SECURER_POLICY_DEFER_SECCOMP,
 * after GO: the whole compiled program from the cache when the rule text,
 * the group files it reaches and the rest of the key are unchanged
 * (textcache.c), else resolved, compiled and generated here, and kept for
 * the next launch. */
static int
resolve_pending_filter (struct securer_sandbox *sb, const struct securer_spawn_opts *opts, struct launch_plan *lp,
                        securer_err_t *err)
{
  /* The policy is this launch's alone (the load option says so), so
   * completing it in place is completing it for its only user. */
  struct securer_policy *p = (struct securer_policy *) sb->p;
  struct securer_seccomp_textkey tk;
  memset (&tk, 0, sizeof tk);
  int dirfd = -1, rc = -1;
  if (!opts->no_seccomp_cache && p->seccomp.enabled && (dirfd = securer_seccomp_cache_open ()) >= 0
      && securer_seccomp_textkey_make (p, lp->setup_sock_at, &tk) == 0
      && securer_seccomp_text_get (dirfd, &tk, p, lp->setup_sock_at, &sb->prog) == 1)
    {
      if (opts->verbose)
        fprintf (stderr, "securer: seccomp filter from the cache (rule text and groups unchanged)\n");
      lp->seccomp = sb->prog;
      rc = 0;
      goto out;
    }
  if (opts->verbose)
    fprintf (stderr, "securer: resolve the seccomp rules\n");
  if (securer_policy_complete (p, NULL, err) < 0)
    {
      securer_error_set_status (err, SECURER_EXIT_SETUP);
      goto out;
    }
  if (p->seccomp.enabled && (compile_filter (sb, opts, lp, err) < 0 || generate_filter (sb, err) < 0))
    goto out;
  if (dirfd >= 0)
    securer_seccomp_text_put (dirfd, &tk, p, lp->setup_sock_at, sb->prog);
  rc = 0;
out:
  securer_seccomp_textkey_clear (&tk);
  if (dirfd >= 0)
    close (dirfd);
  return rc;
}

int
securer_sandbox_spawn (const struct securer_spawn_opts *opts, struct securer_sandbox **out,
                       securer_err_t *err)
{
  return securer_launch_spawn (opts, NULL, out, err);
}

int
securer_launch_spawn (const struct securer_spawn_opts *opts, const struct launch_template *tpl,
                      struct securer_sandbox **out, securer_err_t *err)
{
  *out = NULL;
  if (opts == NULL || opts->policy == NULL || opts->argv == NULL || opts->argv[0] == NULL
      || opts->argv[0][0] == '\0')
    {
      securer_error_set (err, EINVAL, "spawn: a policy and a command are required");
      securer_error_set_status (err, SECURER_EXIT_SETUP);
      return -1;
    }
  const struct securer_policy *p = opts->policy;
  struct securer_sandbox *sb = calloc (1, sizeof *sb);
  if (sb == NULL)
    {
      securer_error_set (err, ENOMEM, "spawn");
      securer_error_set_status (err, SECURER_EXIT_SETUP);
      return -1;
    }
  sb->p = p;
  sb->on_syscall = opts->on_syscall;
  sb->on_syscall_ctx = opts->on_syscall_ctx;
  sb->on_net = opts->on_net;
  sb->on_net_ctx = opts->on_net_ctx;
  sb->pidfd = sb->epfd = sb->timerfd = sb->notify_fd = sb->status_sock = -1;
  sb->host_ids.fd = -1;

  struct launch_plan lp;
  memset (&lp, 0, sizeof lp);
  struct securer_landlock_plan ll_plan;
  memset (&ll_plan, 0, sizeof ll_plan);
  lp.init_fd = lp.gate_fd = lp.lease_fd = -1;
  lp.p = p;
  lp.argv = opts->argv;
  lp.stdin_fd = opts->stdin_fd;
  lp.stdout_fd = opts->stdout_fd;
  lp.stderr_fd = opts->stderr_fd;
  lp.pass_fds = opts->pass_fds;
  lp.n_pass_fds = opts->n_pass_fds;
  lp.verbose = opts->verbose;
  lp.unshare_cgroup = (p->namespaces & SECURER_NS_CGROUP) != 0;
  int socks_setup[2] = { -1, -1 }, socks_status[2] = { -1, -1 };

  if (check_policy (p, err) < 0 || securer_userns_plan (p, &lp.ids, &sb->host_ids, err) < 0)
    goto fail;
  lp.tpl = tpl;
  if (tpl == NULL)
    lp.lease_fd = sb->host_ids.fd;
  if (tpl != NULL && tpl->count)
    lp.ids.uid = lp.ids.gid = 0;   /* setresuid over the lease range needs inside 0's CAP_SETUID */
  if (!(p->namespaces & SECURER_NS_USER))
    {
      /* Without a user namespace there is no map: the ids are host ids. */
      lp.ids.uid = lp.ids.host_uid;
      lp.ids.gid = lp.ids.host_gid;
    }
  sb->host_uid = lp.ids.host_uid;
  /* A template's map holds its lease range as well. */
  lp.no_host_root = lp.ids.host_uid != 0 && (tpl == NULL || tpl->count == 0 || tpl->first != 0);
  lp.envp = securer_linux_build_env (p, environ, opts->extra_env, err);
  if (lp.envp == NULL)
    goto fail;
  lp.exec_paths = exec_candidates (opts->argv[0], lp.envp, err);
  if (lp.exec_paths == NULL)
    goto fail;
  /* What the child needs that takes memory is made here: after clone it
   * runs in a copy of a possibly multi-threaded caller and allocates
   * nothing (docs/design-launch.md). */
  lp.pass_scratch = calloc (opts->n_pass_fds ? opts->n_pass_fds : 1, sizeof *lp.pass_scratch);
  if (lp.pass_scratch == NULL)
    {
      securer_error_set (err, ENOMEM, "spawn");
      goto fail;
    }
  if (p->landlock.mode != SECURER_ENFORCE_OFF)
    {
      if (securer_landlock_plan_build (p, &ll_plan, err) < 0)
        {
          securer_error_prefix (err, "landlock");
          goto fail;
        }
      lp.landlock = &ll_plan;
    }

  if (launch_sync_fd_number (p, opts->n_pass_fds, &lp.setup_sock_at, err) < 0
      || securer_linux_plan_rlimits (p, lp.setup_sock_at, &lp.rlimits, err) < 0)
    goto fail;
  /* Checked here, before clone, so a bad rule is reported before anything
   * runs; the libseccomp work (most of the cost) is done after clone, while
   * the child sets up the sandbox, and the program is sent to the payload.
   * Rules a policy left unresolved (SECURER_POLICY_DEFER_SECCOMP) are
   * resolved and checked after clone as well: the payload waits for its
   * filter whatever the rules turn out to be, so a bad rule still stops
   * the launch before the command runs. */
  if (p->seccomp.enabled)
    {
      if (!securer_policy_seccomp_pending (p) && compile_filter (sb, opts, &lp, err) < 0)
        goto fail;
      lp.want_filter = true;
    }
  if (securer_cgroup_create (p, &sb->cg, &sb->cg_report, err) < 0)
    {
      securer_error_prefix (err, "cgroup");
      goto fail;
    }
  if (opts->verbose && sb->cg_report != NULL)
    fprintf (stderr, "securer: %s\n", sb->cg_report);
  if (securer_cgroup_prepare_join (sb->cg, err) < 0)
    {
      securer_error_prefix (err, "cgroup");
      goto fail;
    }
  lp.cg = sb->cg;
  lp.no_memory_limit = p->limits.cgroup_memory > 0 && securer_cgroup_version (sb->cg, "memory") == 0;

  if (launch_open_init (&lp.init_fd, err) < 0)
    goto fail;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, socks_setup) < 0
      || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, socks_status) < 0)
    {
      securer_error_set (err, errno, "socketpair");
      goto fail;
    }
  int one = 1;
  /* The payload's first message then carries its pid as seen from here. */
  if (setsockopt (socks_setup[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0)
    {
      securer_error_set (err, errno, "SO_PASSCRED");
      goto fail;
    }
  lp.parent_setup_sock = socks_setup[0];
  lp.parent_status_sock = socks_status[0];
  lp.setup_sock = socks_setup[1];
  lp.status_sock = socks_status[1];

  /* pid 1 would wait on this CPU while this thread goes on (the maps, then
   * the seccomp filter's resolution, a quarter of a millisecond): it is
   * moved off it right after clone, and restores this mask first thing. */
  lp.restore_cpus = sched_getaffinity (0, sizeof lp.cpus, &lp.cpus) == 0 && CPU_COUNT (&lp.cpus) > 1;
  if (opts->verbose)
    fprintf (stderr, "securer: clone the sandbox\n");
  sb->start_ns = launch_now_ns ();
  struct owner_switch owner;
  if ((p->namespaces & SECURER_NS_USER) && securer_userns_owner_enter (&lp.ids, &owner, err) < 0)
    goto fail;
  pid_t pid = clone_child (clone_flags (p), &sb->pidfd);
  if (pid == 0)
    securer_init_main (&lp);
  int clone_errno = errno;
  if (p->namespaces & SECURER_NS_USER)
    securer_userns_owner_leave (&owner);
  if (pid < 0)
    {
      securer_error_set (err, clone_errno, "clone the sandbox's namespaces");
      goto fail;
    }

  sb->init_pid = pid;
  if (lp.restore_cpus)
    launch_move_off_this_cpu (pid, &lp.cpus);
  close (lp.init_fd);
  lp.init_fd = -1;
  close (socks_setup[1]);
  close (socks_status[1]);
  socks_setup[1] = socks_status[1] = -1;
  sb->status_sock = socks_status[0];
  socks_status[0] = -1;
  if (sb->pidfd < 0)
    {
      securer_error_set (err, errno, "pidfd for the sandbox");
      goto fail_child;
    }

  if ((p->namespaces & SECURER_NS_USER)
      && (tpl && tpl->count ? securer_zygote_template_maps (pid, lp.ids.host_uid, tpl->first, tpl->count, err)
              : securer_userns_write_maps (pid, &lp.ids, err)) < 0)
    goto fail_child;
  if (sb->cg != NULL && securer_cgroup_add_pid (sb->cg, pid, err) < 0)
    {
      securer_error_prefix (err, "cgroup");
      goto fail_child;
    }
  struct sync_msg go;
  memset (&go, 0, offsetof (struct sync_msg, text) + 1);
  go.type = SYNC_GO;
  if (sync_send (socks_setup[0], &go, -1) < 0)
    {
      securer_error_set (err, errno, "release the sandbox");
      goto fail_child;
    }
  if (securer_policy_seccomp_pending (p) ? resolve_pending_filter (sb, opts, &lp, err) < 0
                                         : sb->prog != NULL && generate_filter (sb, err) < 0)
    goto fail_child;
  /* Sent at once rather than in answer to READY: it waits in the socket
   * behind GO (which init has taken or takes first) until the payload
   * reads it, so the payload never waits for the parent to be scheduled. */
  if (sb->prog != NULL)
    {
      const struct sock_filter *insns;
      unsigned n;
      unsigned long flags;
      int e = EINVAL;
      if (securer_seccomp_bpf (sb->prog, &insns, &n, &flags) == 0)
        e = sync_send_filter (socks_setup[0], insns, n, flags) == 0 ? 0 : errno;
      /* A child that failed a step has closed its end and said why: what
       * it said (read by await_exec) is the error to report, not ours. */
      if (e == EPIPE || e == ECONNRESET)
        e = 0;
      if (e != 0)
        {
          securer_error_set (err, e, "send the seccomp filter");
          goto fail_child;
        }
    }
  uint64_t timeout_ms = opts->timeout_ms ? opts->timeout_ms : p->limits.timeout_ms;
  if (launch_await_exec (sb, socks_setup[0], timeout_ms, err) < 0)
    goto fail_child;
  close (socks_setup[0]);
  socks_setup[0] = -1;

  /* Only pid 1 of the sandbox's own pid namespace can say that nothing of
   * it runs any more, and a cgroup can be removed only once pid 1 is gone.
   * A host-id lease must outlive pid 1 too: until its exit is done, pid 1
   * still has the sandbox's root, mounts and namespaces, which the owner of
   * its user namespace reaches.  securer-init holds the lease's lock itself
   * (fd 5, init.c) and lets it go only after that, so the status may come
   * first (docs/security.md, "Host ids and the sandbox's last moments"). */
  sb->status_early = opts->return_before_teardown && tpl == NULL && (p->namespaces & SECURER_NS_PID)
                     && sb->cg == NULL;
  if (launch_start_supervision (sb, timeout_ms, err) < 0)
    goto fail_child;

  strv_free (lp.envp);
  strv_free (lp.exec_paths);
  free (lp.pass_scratch);
  securer_landlock_plan_clear (&ll_plan);
  *out = sb;
  return 0;

fail_child:
  launch_abort_child (sb);
fail:
  if (lp.init_fd >= 0)
    close (lp.init_fd);
  for (int i = 0; i < 2; i++)
    {
      if (socks_setup[i] >= 0)
        close (socks_setup[i]);
      if (socks_status[i] >= 0)
        close (socks_status[i]);
    }
  if (err != NULL && *err != NULL && (*err)->status == 0)
    securer_error_set_status (err, SECURER_EXIT_SETUP);
  strv_free (lp.envp);
  strv_free (lp.exec_paths);
  free (lp.pass_scratch);
  securer_landlock_plan_clear (&ll_plan);
  launch_sandbox_destroy (sb);
  return -1;
}

uint32_t
securer_sandbox_host_uid (const struct securer_sandbox *sb)
{
  return sb->host_uid;
}

pid_t
securer_sandbox_pid (const struct securer_sandbox *sb)
{
  return sb->payload_pid > 0 ? sb->payload_pid : sb->init_pid;
}

int
securer_sandbox_pollfd (const struct securer_sandbox *sb)
{
  return sb->epfd;
}

static int
status_dup (const struct securer_status *from, struct securer_status *to, securer_err_t *err)
{
  *to = *from;
  to->detail = NULL;
  if (from->detail != NULL && (to->detail = strdup (from->detail)) == NULL)
    return securer_error_set (err, ENOMEM, "status");
  return 0;
}

/* The sandbox's final status, from how pid 1 ended (ws, ru: when it was
 * reaped here) and securer-init's report (m, or NULL when none came). */
static void
finish_status (struct securer_sandbox *sb, int ws, const struct rusage *ru, const struct sync_msg *m)
{
  uint64_t end = launch_now_ns ();
  struct securer_status *st = &sb->final;
  memset (st, 0, sizeof *st);
  st->pid = securer_sandbox_pid (sb);
  st->wall_us = (end - sb->start_ns) / 1000u;
  /* securer-init's figures cover everything it reaped (the command and
   * what it left behind); wait4's on pid 1 are the fallback. */
  if (m != NULL && m->has_rusage)
    {
      st->user_us = m->ru_user_us;
      st->sys_us = m->ru_sys_us;
      st->max_rss_kb = m->ru_maxrss_kb;
    }
  else if (ru != NULL)
    {
      st->user_us = (uint64_t) ru->ru_utime.tv_sec * 1000000u + (uint64_t) ru->ru_utime.tv_usec;
      st->sys_us = (uint64_t) ru->ru_stime.tv_sec * 1000000u + (uint64_t) ru->ru_stime.tv_usec;
      st->max_rss_kb = (uint64_t) ru->ru_maxrss;
    }

  /* init exits with the payload's code; a signal death is told by message
   * because pid 1 cannot die of the payload's signal itself. */
  if ((sb->foreign || ru == NULL) && m != NULL)
    {
      st->exited = m->signal == 0;
      st->signal = m->signal;
      st->exit_code = m->status;
    }
  else if (WIFSIGNALED (ws))
    {
      st->exited = false;
      st->signal = WTERMSIG (ws);
    }
  else if (m != NULL && m->signal > 0)
    {
      st->exited = false;
      st->signal = m->signal;
    }
  else
    {
      st->exited = true;
      st->exit_code = WEXITSTATUS (ws);
    }

  st->reason = sb->reason;
  st->limit = sb->limit;
  if (st->reason == SECURER_KILL_SECCOMP)
    {
      /* Killed by us on the filter's behalf: report it as the in-kernel
       * kill would be, so the exit status does not depend on the kernel. */
      st->exited = false;
      st->signal = SIGSYS;
    }
  if (st->reason == SECURER_KILL_SIGNAL && st->exited)
    st->reason = SECURER_KILL_NONE;  /* it took the signal and exited on its own */
  if ((st->reason == SECURER_KILL_NONE || st->reason == SECURER_KILL_SIGNAL) && !st->exited)
    {
      const struct securer_rlimit *cpu = &sb->p->limits.rlimit[SECURER_RLIMIT_CPU];
      enum securer_kill_reason r = st->reason;
      if (st->signal == SIGSYS)
        r = SECURER_KILL_SECCOMP;
      else if (st->signal == SIGXCPU)
        r = SECURER_KILL_LIMIT, st->limit = SECURER_LIMIT_CPU;
      else if (st->signal == SIGXFSZ)
        r = SECURER_KILL_LIMIT, st->limit = SECURER_LIMIT_FSIZE;
      else if (st->signal == SIGKILL && sb->cg != NULL && securer_cgroup_hit_limit (sb->cg))
        r = SECURER_KILL_LIMIT, st->limit = SECURER_LIMIT_MEMORY;
      /* The kernel's SIGKILL at RLIMIT_CPU's hard limit (reached first
       * when soft == hard, as in the shipped policies, or when a program
       * ignores SIGXCPU) leaves no mark but the time used, which the usage
       * reported at exit understates a little (cpu_limit_reached).  The
       * limit is per process, so for a sandbox of several this is a guess. */
      else if (st->signal == SIGKILL && r == SECURER_KILL_NONE && cpu->set && cpu->hard != UINT64_MAX
               && cpu_limit_reached (st->user_us + st->sys_us, cpu->hard))
        r = SECURER_KILL_LIMIT, st->limit = SECURER_LIMIT_CPU;
      st->reason = r;
    }
  if (sb->detail != NULL)
    st->detail = strdup (sb->detail);
  sb->finished = true;
}

/* securer-init's report arrived before pid 1 is gone (status_early): it
 * killed and reaped everything else first, so the sandbox has finished;
 * the teardown of its namespaces is left to pid 1's exit.  Returns 1 when
 * finished, 0 when the socket had nothing (pid 1 died without a report:
 * the pidfd tells). */
static int
take_early_report (struct securer_sandbox *sb)
{
  struct sync_msg m;
  int r = sync_recv (sb->status_sock, &m, NULL, NULL, true);
  if (r == 1 && m.type == SYNC_EXIT)
    {
      finish_status (sb, 0, NULL, &m);
      sb->teardown_pending = true;
      return 1;
    }
  if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || r == 1)
    {
      epoll_ctl (sb->epfd, EPOLL_CTL_DEL, sb->status_sock, NULL);
      sb->status_early = false;
    }
  return 0;
}

/* The init has exited (pidfd readable): collect its status and usage. */
static int
reap (struct securer_sandbox *sb, securer_err_t *err)
{
  int ws;
  struct rusage ru;
  pid_t r;
  if (sb->foreign)
    {
      /* Not our child (the template's init reaps it): the pidfd said it
       * ended; how is in securer-init's message, or it was killed. */
      memset (&ru, 0, sizeof ru);
      ws = SIGKILL;
    }
  else
    {
      do
        r = wait4 (sb->init_pid, &ws, __WALL | WNOHANG, &ru);
      while (r < 0 && errno == EINTR);
      if (r < 0)
        return securer_error_set (err, errno, "wait for the sandbox");
      if (r == 0)
        return 0;
    }
  struct sync_msg m;
  bool have_exit = sb->status_sock >= 0 && sync_recv (sb->status_sock, &m, NULL, NULL, true) == 1
                   && m.type == SYNC_EXIT;
  finish_status (sb, ws, &ru, have_exit ? &m : NULL);
  sb->init_pid = 0;
  /* Leftovers outside the pid namespace (if the policy has none). */
  if (sb->cg != NULL)
    securer_cgroup_kill_all (sb->cg);
  return 1;
}

int
securer_sandbox_dispatch (struct securer_sandbox *sb, struct securer_status *st, securer_err_t *err)
{
  if (!sb->finished)
    {
      struct epoll_event ev[4];
      int n = epoll_wait (sb->epfd, ev, 4, 0);
      if (n < 0 && errno != EINTR)
        return securer_error_set (err, errno, "epoll_wait");
      bool exited = false;
      for (int i = 0; i < n; i++)
        {
          int fd = ev[i].data.fd;
          if (fd == sb->timerfd)
            {
              uint64_t ticks;
              if (read (sb->timerfd, &ticks, sizeof ticks) > 0 && sb->reason == SECURER_KILL_NONE)
                sb->reason = SECURER_KILL_TIMEOUT;
              kill_everything (sb);
            }
          else if (fd == sb->notify_fd)
            {
              if (ev[i].events & EPOLLIN)
                handle_notify (sb);
              else if (ev[i].events & (EPOLLHUP | EPOLLERR))
                {
                  /* No task uses the filter any more (the command exited):
                   * nothing can arrive, and the fd would stay ready forever. */
                  epoll_ctl (sb->epfd, EPOLL_CTL_DEL, sb->notify_fd, NULL);
                  close (sb->notify_fd);
                  sb->notify_fd = -1;
                }
            }
          else if (fd == sb->pidfd)
            exited = true;
          else if (sb->proxy != NULL && fd == securer_netproxy_fd (sb->proxy))
            securer_netproxy_dispatch (sb->proxy);
          else if (fd == sb->status_sock && sb->status_early && take_early_report (sb) == 1)
            break;
          else if (fd == securer_cgroup_oom_fd (sb->cg))
            {
              /* The memory limit was hit: the whole sandbox ends, as with
               * memory.oom.group on v2. */
              uint64_t events;
              if (read (fd, &events, sizeof events) > 0 && sb->reason == SECURER_KILL_NONE)
                {
                  sb->reason = SECURER_KILL_LIMIT;
                  sb->limit = SECURER_LIMIT_MEMORY;
                }
              kill_everything (sb);
            }
        }
      if (!sb->finished)
        {
          if (!exited)
            return 0;
          int r = reap (sb, err);
          if (r <= 0)
            return r;
        }
    }
  if (st != NULL && status_dup (&sb->final, st, err) < 0)
    return -1;
  return 1;
}

int
securer_sandbox_wait (struct securer_sandbox *sb, struct securer_status *st, securer_err_t *err)
{
  for (;;)
    {
      int r = securer_sandbox_dispatch (sb, st, err);
      if (r != 0)
        return r;
      struct pollfd pfd = { sb->epfd, POLLIN, 0 };
      if (poll (&pfd, 1, -1) < 0 && errno != EINTR)
        return securer_error_set (err, errno, "poll");
    }
}

int
securer_sandbox_kill (struct securer_sandbox *sb, securer_err_t *err)
{
  if (sb->finished)
    return 0;
  if (sb->reason == SECURER_KILL_NONE)
    sb->reason = SECURER_KILL_CALLER;
  kill_everything (sb);
  return 0;
}

int
securer_sandbox_signal (struct securer_sandbox *sb, int sig, securer_err_t *err)
{
  if (sb->finished)
    return 0;
  if (pidfd_send_signal (sb->pidfd, sig, NULL, 0) < 0 && errno != ESRCH)
    return securer_error_set (err, errno, "send signal %d to the sandbox", sig);
  if (sb->reason == SECURER_KILL_NONE)
    sb->reason = SECURER_KILL_SIGNAL;
  return 0;
}

void
securer_sandbox_free (struct securer_sandbox *sb)
{
  if (sb == NULL)
    return;
  if (sb->teardown_pending)
    {
      /* Nothing of the sandbox runs any more; pid 1 is tearing its
       * namespaces down.  Reaped if it is done, else left to whoever
       * inherits it when the caller exits. */
      while (waitpid (sb->init_pid, NULL, __WALL | WNOHANG) < 0 && errno == EINTR)
        ;
      sb->init_pid = 0;
    }
  if (!sb->finished && sb->init_pid > 0)
    {
      kill_everything (sb);
      if (sb->foreign)
        await_foreign_end (sb);
      else
        while (waitpid (sb->init_pid, NULL, __WALL) < 0 && errno == EINTR)
          ;
    }
  launch_sandbox_destroy (sb);
}
