/* Tools implemented by host commands, run as child processes driven by the
 * session's event loop.  The command must never be able to stall the host:
 * its stdin is fed, and its stdout and stderr are read, only when epoll says
 * the pipe is ready; its exit is seen through a pidfd; stdout is capped; and
 * the session cancels it (SIGKILL to its whole process group, then reaps it)
 * whenever the execution ends early, e.g. on its timeout.
 *
 * fork() rather than posix_spawn(): the child must become the leader of a
 * new process group (so that a cancel reaches what it started), ask for
 * SIGKILL when we die (PR_SET_PDEATHSIG), reset the signal dispositions and
 * mask it inherited (securer ignores SIGPIPE) and close every descriptor but
 * its three pipes, whoever opened them without O_CLOEXEC.  Between fork and
 * exec it only makes async-signal-safe system calls. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/internal.h"

#define STDERR_KEEP 4096

struct securer_toolcmd {
  struct securer_loop *loop;
  pid_t pid;
  int pidfd, in_fd, out_fd, err_fd;
  char *input;
  size_t in_len, in_off;
  char *out;
  size_t out_len, out_cap, max_output;
  char err[STDERR_KEEP + 1];
  size_t err_len;
  bool too_large;
  toolcmd_done_fn done;
  void *data;
};

static int
sys_pidfd_open (pid_t pid)
{
  return (int) syscall (SYS_pidfd_open, pid, 0);
}

static void
close_watched (struct securer_toolcmd *c, int *fd)
{
  if (*fd >= 0)
    {
      securer_loop_del (c->loop, *fd);
      close (*fd);
      *fd = -1;
    }
}

/* Kills what is left of the command's process group, reaps the command and
 * releases everything but the struct.  The leader is still unreaped (a
 * zombie at worst) when the group is signalled, so its id cannot have been
 * reused by an unrelated group. */
static void
stop_and_reap (struct securer_toolcmd *c, struct toolcmd_outcome *o)
{
  if (c->pid > 0)
    {
      kill (-c->pid, SIGKILL);
      kill (c->pid, SIGKILL);  /* in case it never got its own group */
      siginfo_t si;
      memset (&si, 0, sizeof si);
      while (waitid (P_PID, (id_t) c->pid, &si, WEXITED) < 0 && errno == EINTR)
        ;
      if (o != NULL)
        {
          o->exited = si.si_code == CLD_EXITED;
          o->code = o->exited ? si.si_status : 0;
          o->signal = o->exited ? 0 : si.si_status;
        }
      c->pid = 0;
    }
  close_watched (c, &c->pidfd);
  close_watched (c, &c->in_fd);
  close_watched (c, &c->out_fd);
  close_watched (c, &c->err_fd);
}

static void
toolcmd_free (struct securer_toolcmd *c)
{
  free (c->input);
  free (c->out);
  free (c);
}

void
securer_toolcmd_cancel (struct securer_toolcmd *c)
{
  if (c == NULL)
    return;
  stop_and_reap (c, NULL);
  toolcmd_free (c);
}

/* Reads what is available; false at EOF or on a read error. */
static bool
read_out (struct securer_toolcmd *c)
{
  for (;;)
    {
      /* Never more than one byte past the cap: enough to know it was
       * exceeded. */
      size_t want = c->max_output + 1 - c->out_len;
      if (want > 65536)
        want = 65536;
      if (c->out_cap < c->out_len + want + 1)
        {
          size_t cap = c->out_cap ? c->out_cap : 4096;
          while (cap < c->out_len + want + 1)
            cap *= 2;
          char *p = realloc (c->out, cap);
          if (p == NULL)
            return false;
          c->out = p;
          c->out_cap = cap;
        }
      ssize_t r = read (c->out_fd, c->out + c->out_len, want);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return errno == EAGAIN;
      if (r == 0)
        return false;
      c->out_len += (size_t) r;
      c->out[c->out_len] = '\0';
      if (c->out_len > c->max_output)
        {
          /* The answer could never be sent to R: stop the command now rather
           * than read what it keeps printing. */
          c->too_large = true;
          kill (-c->pid, SIGKILL);
          kill (c->pid, SIGKILL);
          return false;
        }
    }
}

static bool
read_err (struct securer_toolcmd *c)
{
  char buf[8192];
  for (;;)
    {
      ssize_t r = read (c->err_fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return errno == EAGAIN;
      if (r == 0)
        return false;
      /* Keep the start (the message); read and drop the rest so that the
       * command never blocks on a full stderr pipe. */
      size_t take = (size_t) r;
      if (take > STDERR_KEEP - c->err_len)
        take = STDERR_KEEP - c->err_len;
      memcpy (c->err + c->err_len, buf, take);
      c->err_len += take;
      c->err[c->err_len] = '\0';
    }
}

static void
on_out (void *data, uint32_t ev)
{
  struct securer_toolcmd *c = data;
  if (!read_out (c))
    close_watched (c, &c->out_fd);
}

static void
on_errpipe (void *data, uint32_t ev)
{
  struct securer_toolcmd *c = data;
  if (!read_err (c))
    close_watched (c, &c->err_fd);
}

static void
on_in (void *data, uint32_t ev)
{
  struct securer_toolcmd *c = data;
  while (c->in_off < c->in_len)
    {
      ssize_t w = securer_write_nosigpipe (c->in_fd, c->input + c->in_off, c->in_len - c->in_off);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0 && errno == EAGAIN)
        return;
      if (w < 0)
        break;  /* EPIPE: the command does not read its input; its business */
      c->in_off += (size_t) w;
    }
  close_watched (c, &c->in_fd);
}

/* The command exited: collect what it wrote before exiting, stop anything
 * it left behind in its group, reap it and report. */
static void
on_exit_ev (void *data, uint32_t ev)
{
  struct securer_toolcmd *c = data;
  kill (-c->pid, SIGKILL);
  kill (c->pid, SIGKILL);
  if (c->out_fd >= 0 && !read_out (c))
    close_watched (c, &c->out_fd);
  if (c->err_fd >= 0 && !read_err (c))
    close_watched (c, &c->err_fd);
  struct toolcmd_outcome o = { .too_large = c->too_large };
  stop_and_reap (c, &o);
  o.out = c->out ? c->out : "";
  o.out_len = c->out_len;
  o.err = c->err;
  toolcmd_done_fn done = c->done;
  void *d = c->data;
  done (d, &o);
  toolcmd_free (c);
}

static void
child_exec (const char *path, char *const argv[], char *const envp[], int fds[3], int status_fd,
            pid_t parent)
{
  /* Own process group: a cancel kills everything the command started in it. */
  setpgid (0, 0);
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (getppid () != parent)
    _exit (127);  /* the host died before the death signal was armed */
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  struct sigaction dfl;
  memset (&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    sigaction (sig, &dfl, NULL);  /* fails harmlessly for KILL, STOP and glibc's own */
  /* Out of the way of 0..2 first: a pipe end may itself be 0, 1 or 2. */
  int hi[3];
  for (int i = 0; i < 3; i++)
    if ((hi[i] = fcntl (fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
      goto fail;
  for (int i = 0; i < 3; i++)
    if (dup2 (hi[i], i) < 0)
      goto fail;
  /* Every other descriptor goes, O_CLOEXEC or not; the status pipe stays
   * (it is O_CLOEXEC) to report a failing execve. */
  if (status_fd > 3)
    syscall (SYS_close_range, 3u, (unsigned) status_fd - 1, 0u);
  if (syscall (SYS_close_range, (unsigned) status_fd + 1, ~0u, 0u) < 0)
    {
      struct rlimit rl;
      int max = getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int) rl.rlim_cur : 65536;
      for (int fd = 3; fd < max; fd++)
        if (fd != status_fd)
          close (fd);
    }
  execve (path, argv, envp);
fail:;
  int e = errno;
  if (write (status_fd, &e, sizeof e) < 0)
    {
    }
  _exit (127);
}

int
securer_toolcmd_start (struct securer_loop *loop, const char *path, char *const argv[],
                       char *const envp[], const char *input, size_t input_len,
                       size_t max_output, toolcmd_done_fn done, void *data,
                       struct securer_toolcmd **out, securer_err_t *err)
{
  *out = NULL;
  struct securer_toolcmd *c = calloc (1, sizeof *c);
  if (c == NULL)
    return securer_error_set (err, ENOMEM, "tool command");
  c->loop = loop;
  c->pidfd = c->in_fd = c->out_fd = c->err_fd = -1;
  c->max_output = max_output;
  c->done = done;
  c->data = data;
  c->in_len = input_len;
  c->input = malloc (input_len ? input_len : 1);
  if (c->input == NULL)
    {
      free (c);
      return securer_error_set (err, ENOMEM, "tool command");
    }
  memcpy (c->input, input, input_len);
  int in[2] = { -1, -1 }, o[2] = { -1, -1 }, e[2] = { -1, -1 }, st[2] = { -1, -1 };
  if (pipe2 (in, O_CLOEXEC) < 0 || pipe2 (o, O_CLOEXEC) < 0 || pipe2 (e, O_CLOEXEC) < 0
      || pipe2 (st, O_CLOEXEC) < 0)
    {
      securer_error_set (err, errno, "tool command: pipe");
      goto fail;
    }
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    {
      securer_error_set (err, errno, "tool command: fork");
      goto fail;
    }
  if (pid == 0)
    child_exec (path, argv, envp, (int[]){ in[0], o[1], e[1] }, st[1], parent);
  c->pid = pid;
  /* Also set from here: a cancel may come before the child ran setpgid. */
  setpgid (pid, pid);
  close (in[0]);
  close (o[1]);
  close (e[1]);
  close (st[1]);
  in[0] = o[1] = e[1] = st[1] = -1;
  /* execve either succeeds (the O_CLOEXEC status pipe closes: EOF) or the
   * child reports its errno; this waits only for the exec itself. */
  int child_errno = 0;
  ssize_t r;
  while ((r = read (st[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR)
    ;
  close (st[0]);
  st[0] = -1;
  c->in_fd = in[1];
  c->out_fd = o[0];
  c->err_fd = e[0];
  in[1] = o[0] = e[0] = -1;
  if (r == (ssize_t) sizeof child_errno)
    {
      securer_error_set (err, child_errno, "cannot run %s", path);
      goto fail;
    }
  c->pidfd = sys_pidfd_open (pid);
  if (c->pidfd < 0)
    {
      securer_error_set (err, errno, "tool command: pidfd_open");
      goto fail;
    }
  for (int *fd = (int[]){ c->in_fd, c->out_fd, c->err_fd, -2 }; *fd != -2; fd++)
    fcntl (*fd, F_SETFL, fcntl (*fd, F_GETFL) | O_NONBLOCK);
  if (securer_loop_add (loop, c->pidfd, EPOLLIN, on_exit_ev, c, err) < 0
      || securer_loop_add (loop, c->out_fd, EPOLLIN, on_out, c, err) < 0
      || securer_loop_add (loop, c->err_fd, EPOLLIN, on_errpipe, c, err) < 0)
    goto fail;
  if (c->in_len == 0)
    {
      close (c->in_fd);
      c->in_fd = -1;
    }
  else if (securer_loop_add (loop, c->in_fd, EPOLLOUT, on_in, c, err) < 0)
    goto fail;
  *out = c;
  return 0;
fail:
  for (int *fd = (int[]){ in[0], in[1], o[0], o[1], e[0], e[1], st[0], st[1], -2 }; *fd != -2; fd++)
    if (*fd >= 0)
      close (*fd);
  /* Descriptors already handed to c are unwatched (securer_loop_del
   * ignores those it does not know) and closed here. */
  stop_and_reap (c, NULL);
  toolcmd_free (c);
  return securer_error_prefix (err, "tool command");
}

/* ---- resolving the command at registration ------------------------------- */

static bool
executable_file (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISREG (st.st_mode) && access (path, X_OK) == 0;
}

char *
securer_toolcmd_resolve (const char *name, securer_err_t *err)
{
  if (name == NULL || name[0] == '\0')
    {
      securer_error_set (err, EINVAL, "empty command");
      return NULL;
    }
  if (strchr (name, '/') != NULL)
    {
      if (!executable_file (name))
        {
          securer_error_set (err, access (name, F_OK) == 0 ? EACCES : ENOENT,
                             "%s is not an executable file", name);
          return NULL;
        }
      char *abs = realpath (name, NULL);
      if (abs == NULL)
        securer_error_set (err, errno, "%s", name);
      return abs;
    }
  const char *path = getenv ("PATH");
  if (path == NULL || path[0] == '\0')
    path = SECURER_TOOL_PATH;
  for (const char *p = path; *p;)
    {
      size_t n = strcspn (p, ":");
      char *cand = NULL;
      if (n > 0 && p[0] == '/' && asprintf (&cand, "%.*s/%s", (int) n, p, name) >= 0)
        {
          if (executable_file (cand))
            return cand;
          free (cand);
        }
      p += n;
      if (*p == ':')
        p++;
    }
  securer_error_set (err, ENOENT, "%s: command not found in PATH", name);
  return NULL;
}
