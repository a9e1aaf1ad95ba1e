/* Starting a container's first process (create/run) and a further
 * process inside a running container (exec).
 *
 * The runtime clones the first process into the new namespaces, writes its
 * id maps and places it in its cgroup, runs the createRuntime/prestart
 * hooks, then lets it build its root.  The process says "ready" over a
 * pipe once only the wait on the exec fifo and the exec remain; the
 * runtime then exits, and the engine's subreaper (conmon, the shim)
 * inherits it: no securer supervisor stays behind in this mode. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/linux.h"
#include "oci/oci.h"

static const int ns_flags[OCI_NS_COUNT] = { CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS,
                                            CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWCGROUP };

/* ---- child -> parent report: int status, then the message ---- */
static void
report_error (int fd, securer_err_t e)
{
  int status = 125;
  if (e && e->status)
    status = e->status;
  char buf[2048];
  memcpy (buf, &status, sizeof status);
  int n = snprintf (buf + sizeof status, sizeof buf - sizeof status, "%s",
                    e ? securer_error_message (e) : "failed");
  if (n < 0)
    n = 0;
  size_t len = sizeof status + ((size_t) n < sizeof buf - sizeof status ? (size_t) n : sizeof buf - sizeof status - 1);
  ssize_t w = write (fd, buf, len);
  (void) w;
}

static int
read_report (int fd, const char *what, securer_err_t *err)
{
  char buf[2048];
  ssize_t n;
  do
    n = read (fd, buf, sizeof buf - 1);
  while (n < 0 && errno == EINTR);
  if (n < (ssize_t) sizeof (int))
    {
      securer_error_set (err, n < 0 ? errno : 0, "%s: the container process died during setup", what);
      securer_error_set_status (err, 125);
      return -1;
    }
  int status;
  memcpy (&status, buf, sizeof status);
  if (status == 0)
    return 0;
  buf[n] = '\0';
  securer_error_set (err, 0, "%s", buf + sizeof status);
  securer_error_set_status (err, status);
  return -1;
}

static void
ready_cb (void *ctx)
{
  int fd = *(int *) ctx;
  int ok = 0;
  ssize_t w = write (fd, &ok, sizeof ok);
  (void) w;
}

static int
write_map (pid_t pid, const char *file, const struct oci_idmap *m, size_t n, securer_err_t *err)
{
  char path[64], buf[4096];
  size_t len = 0;
  for (size_t i = 0; i < n && len < sizeof buf - 64; i++)
    len += (size_t) snprintf (buf + len, sizeof buf - len, "%u %u %u\n", m[i].inside, m[i].outside,
                              m[i].size);
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return securer_error_set (err, errno, "open %s", path);
  ssize_t w = write (fd, buf, len);
  int e = errno;
  close (fd);
  if (w != (ssize_t) len)
    return securer_error_set (err, w < 0 ? e : EIO, "write %s", path);
  return 0;
}

static int
open_ns_paths (const struct oci_spec *s, int fds[OCI_NS_COUNT], securer_err_t *err)
{
  for (int k = 0; k < OCI_NS_COUNT; k++)
    {
      fds[k] = -1;
      if (s->ns_path[k] == NULL)
        continue;
      fds[k] = open (s->ns_path[k], O_RDONLY | O_CLOEXEC);
      if (fds[k] < 0)
        {
          securer_error_set (err, errno, "linux.namespaces: %s namespace %s", oci_ns_name (k),
                             s->ns_path[k]);
          securer_error_set_status (err, 125);
          for (int j = 0; j < k; j++)
            if (fds[j] >= 0)
              close (fds[j]);
          return -1;
        }
    }
  return 0;
}

/* setns(CLONE_NEWPID) moves where this process's next children go, not
 * the process itself.  Joined for one child, it is taken back right after:
 * whatever this process starts later (a hook, a sanitizer run-time's
 * thread at exit, which must see this process) stays in its own pid
 * namespace.  *own: a descriptor of that namespace, or -1. */
static int
join_pid_ns_for_child (int fd, int *own, const char *what, securer_err_t *err)
{
  *own = -1;
  if (fd < 0)
    return 0;
  *own = open ("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
  if (*own < 0)
    return securer_error_set (err, errno, "open this process's pid namespace");
  if (setns (fd, CLONE_NEWPID) < 0)
    {
      int e = errno;
      close (*own);
      *own = -1;
      return securer_error_set (err, e, "join %s", what);
    }
  return 0;
}

static void
leave_pid_ns_for_child (int *own)
{
  if (*own < 0)
    return;
  (void) setns (*own, CLONE_NEWPID);
  close (*own);
  *own = -1;
}

/* setns into every fd of fds except pid (done by the parent: it applies to
 * children only); user first, so the others are entered with its rights. */
static int
join_namespaces (int fds[OCI_NS_COUNT], securer_err_t *err)
{
  static const int order[] = { OCI_NS_USER, OCI_NS_IPC, OCI_NS_UTS, OCI_NS_NET, OCI_NS_CGROUP,
                               OCI_NS_MNT };
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    {
      int k = order[i];
      if (fds[k] < 0)
        continue;
      if (setns (fds[k], ns_flags[k]) < 0)
        return securer_error_set (err, errno, "join the %s namespace", oci_ns_name (k));
      close (fds[k]);
      fds[k] = -1;
    }
  return 0;
}

static void
child_signals (void)
{
  sigset_t all;
  sigemptyset (&all);
  sigprocmask (SIG_SETMASK, &all, NULL);
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal (sig, SIG_DFL);
}

static void __attribute__ ((noreturn))
container_child (const struct oci_launch *l, int fds[OCI_NS_COUNT], int go, int report)
{
  securer_err_t err = NULL;
  const struct oci_spec *s = l->spec;
  char c;
  child_signals ();
  if (read (go, &c, 1) != 1)
    _exit (125);
  close (go);
  if (join_namespaces (fds, &err) < 0)
    goto fail;
  if (s->ns_wanted[OCI_NS_USER] && !s->ns_path[OCI_NS_USER]
      && (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0))
    {
      securer_error_set (&err, errno, "become root in the new user namespace");
      goto fail;
    }
  if (!l->keep_keyring && oci_new_session_keyring (&err) < 0)
    goto fail;
  /* After the cgroup was joined, so that it is the namespace's root. */
  if (s->ns_wanted[OCI_NS_CGROUP] && !s->ns_path[OCI_NS_CGROUP] && unshare (CLONE_NEWCGROUP) < 0)
    {
      securer_error_set (&err, errno, "new cgroup namespace");
      goto fail;
    }
  if (s->ns_wanted[OCI_NS_NET] && !s->ns_path[OCI_NS_NET])
    {
      struct securer_policy lo = { .network = SECURER_NET_LOOPBACK };
      if (securer_linux_setup_network (&lo, &err) < 0)
        goto fail;
      /* run.securer.network-allow: the proxy's port, in this namespace,
       * served by the runtime's proxy process from outside. */
      if (l->proxy_fd >= 0 && oci_netproxy_listen (l->proxy_fd, &err) < 0)
        goto fail;
    }
  if (l->proxy_fd >= 0)
    close (l->proxy_fd);
  oci_container_init (l, ready_cb, &report, &err);
fail:
  if (err == NULL)
    securer_error_set (&err, 0, "container setup failed");
  /* Before ready the runtime reports it; after, the engine reads stderr. */
  report_error (report, err);
  fprintf (stderr, "securer-runc: %s\n", securer_error_message (err));
  _exit (err->status ? err->status : 125);
}

int
oci_launch_container (const struct oci_launch *l, struct oci_cgroup *cg, const char *id,
                      pid_t *pid_out, uint64_t *start_time, securer_err_t *err)
{
  const struct oci_spec *s = l->spec;
  int fds[OCI_NS_COUNT];
  int go[2] = { -1, -1 }, rep[2] = { -1, -1 };
  *pid_out = -1;
  if (open_ns_paths (s, fds, err) < 0)
    return -1;
  int rc = -1;
  pid_t pid = -1;
  if (pipe2 (go, O_CLOEXEC) < 0 || pipe2 (rep, O_CLOEXEC) < 0)
    {
      securer_error_set (err, errno, "pipe");
      goto out;
    }
  char what[PATH_MAX + 32];
  snprintf (what, sizeof what, "the pid namespace %s", s->ns_path[OCI_NS_PID] ? s->ns_path[OCI_NS_PID] : "");
  int own_pid_ns;
  if (join_pid_ns_for_child (fds[OCI_NS_PID], &own_pid_ns, what, err) < 0)
    goto out;
  unsigned long flags = SIGCHLD;
  for (int k = 0; k < OCI_NS_COUNT; k++)
    if (s->ns_wanted[k] && s->ns_path[k] == NULL && k != OCI_NS_CGROUP)
      flags |= (unsigned long) ns_flags[k];
  pid = (pid_t) syscall (SYS_clone, flags, NULL, NULL, NULL, NULL);
  int clone_errno = errno;
  if (pid != 0)
    leave_pid_ns_for_child (&own_pid_ns);
  if (pid < 0)
    {
      securer_error_set (err, clone_errno, "clone the container process");
      goto out;
    }
  if (pid == 0)
    {
      close (go[1]);
      close (rep[0]);
      container_child (l, fds, go[0], rep[1]);
    }
  close (go[0]);
  go[0] = -1;
  close (rep[1]);
  rep[1] = -1;
  *start_time = oci_proc_start_time_any (pid);
  if (s->n_uid_maps
      && (write_map (pid, "uid_map", s->uid_maps, s->n_uid_maps, err) < 0
          || write_map (pid, "gid_map", s->gid_maps, s->n_gid_maps, err) < 0))
    goto kill;
  if (cg && oci_cgroup_add_pid (cg, pid, err) < 0)
    goto kill;
  if (oci_oom_score_adj (pid, &s->proc, err) < 0)
    goto kill;
  if (id)
    {
      char *state = NULL;
      if (asprintf (&state,
                    "{\"ociVersion\":\"1.0.2\",\"id\":\"%s\",\"status\":\"creating\",\"pid\":%d,"
                    "\"bundle\":\"%s\"}",
                    id, (int) pid, s->bundle)
          < 0)
        goto kill;
      int hr = oci_hooks_run (s, OCI_HOOK_PRESTART, state, err);
      if (hr == 0)
        hr = oci_hooks_run (s, OCI_HOOK_CREATE_RUNTIME, state, err);
      free (state);
      if (hr < 0)
        goto kill;
    }
  if (write (go[1], "g", 1) != 1)
    {
      securer_error_set (err, errno, "release the container process");
      goto kill;
    }
  if (read_report (rep[0], "create", err) < 0)
    goto kill;
  *pid_out = pid;
  rc = 0;
  goto out;
kill:
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
out:
  for (int i = 0; i < 2; i++)
    {
      if (go[i] >= 0)
        close (go[i]);
      if (rep[i] >= 0)
        close (rep[i]);
    }
  for (int k = 0; k < OCI_NS_COUNT; k++)
    if (fds[k] >= 0)
      close (fds[k]);
  return rc;
}

/* ---- exec ---- */
static int
open_container_ns (pid_t pid, int fds[OCI_NS_COUNT], securer_err_t *err)
{
  static const char *const files[OCI_NS_COUNT] = { "pid", "net", "ipc", "uts", "mnt", "user",
                                                   "cgroup" };
  for (int k = 0; k < OCI_NS_COUNT; k++)
    {
      char mine[64], theirs[64];
      struct stat a, b;
      snprintf (mine, sizeof mine, "/proc/self/ns/%s", files[k]);
      snprintf (theirs, sizeof theirs, "/proc/%d/ns/%s", (int) pid, files[k]);
      fds[k] = -1;
      if (stat (mine, &a) < 0 || stat (theirs, &b) < 0)
        return securer_error_set (err, errno, "namespaces of process %d", (int) pid);
      /* Entering one's own user namespace is refused: skip what is shared. */
      if (a.st_ino == b.st_ino && a.st_dev == b.st_dev)
        continue;
      fds[k] = open (theirs, O_RDONLY | O_CLOEXEC);
      if (fds[k] < 0)
        return securer_error_set (err, errno, "open %s", theirs);
    }
  return 0;
}

int
oci_launch_exec (const struct oci_exec_opts *o, pid_t *pid_out, securer_err_t *err)
{
  int fds[OCI_NS_COUNT];
  int rep[2] = { -1, -1 };
  *pid_out = -1;
  for (int k = 0; k < OCI_NS_COUNT; k++)
    fds[k] = -1;
  if (open_container_ns (o->container_pid, fds, err) < 0)
    goto fail;
  /* The pid may have been reused since the state was checked: the
   * namespaces opened are the container's only if its process is still
   * the one that was started (else they could be a host process's). */
  if (oci_proc_start_time (o->container_pid) != o->start_time)
    {
      securer_error_set (err, ESRCH, "the container's process %d has exited", (int) o->container_pid);
      goto fail;
    }
  if (pipe2 (rep, O_CLOEXEC) < 0)
    {
      securer_error_set (err, errno, "pipe");
      goto fail;
    }
  int own_pid_ns;
  if (join_pid_ns_for_child (fds[OCI_NS_PID], &own_pid_ns, "the container's pid namespace", err) < 0)
    goto fail;
  pid_t pid = fork ();
  int fork_errno = errno;
  if (pid != 0)
    leave_pid_ns_for_child (&own_pid_ns);
  if (pid < 0)
    {
      securer_error_set (err, fork_errno, "fork");
      goto fail;
    }
  if (pid == 0)
    {
      securer_err_t e = NULL;
      close (rep[0]);
      child_signals ();
      /* Still in the host's namespaces: see oci_oom_score_adj. */
      if (oci_oom_score_adj (0, o->proc, &e) == 0 && oci_cgroup_join_self (o->cg, &e) == 0
          && join_namespaces (fds, &e) == 0 && oci_new_session_keyring (&e) == 0)
        {
          if (!o->proc->terminal && setsid () < 0)
            securer_error_set (&e, errno, "setsid");
          else
            oci_process_exec (o->proc, o->seccomp, o->seccomp_last_syscall, o->layer, o->console_fd, &e);
        }
      report_error (rep[1], e);
      _exit (e && e->status ? e->status : 125);
    }
  close (rep[1]);
  rep[1] = -1;
  /* EOF: the exec happened (the pipe is close-on-exec). */
  char buf[2048];
  ssize_t n;
  do
    n = read (rep[0], buf, sizeof buf - 1);
  while (n < 0 && errno == EINTR);
  if (n >= (ssize_t) sizeof (int))
    {
      int status;
      memcpy (&status, buf, sizeof status);
      buf[n] = '\0';
      securer_error_set (err, 0, "%s", buf + sizeof status);
      securer_error_set_status (err, status ? status : 125);
      waitpid (pid, NULL, 0);
      goto fail;
    }
  close (rep[0]);
  for (int k = 0; k < OCI_NS_COUNT; k++)
    if (fds[k] >= 0)
      close (fds[k]);
  *pid_out = pid;
  return 0;
fail:
  for (int i = 0; i < 2; i++)
    if (rep[i] >= 0)
      close (rep[i]);
  for (int k = 0; k < OCI_NS_COUNT; k++)
    if (fds[k] >= 0)
      close (fds[k]);
  return -1;
}
