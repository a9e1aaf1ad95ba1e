/* The macOS launcher: runs one command under the Seatbelt profile of
 * seatbelt.c, with the policy's rlimits set by setrlimit() in the forked
 * child — not by a shell script of ulimit lines, so no shell runs and a
 * limit that cannot be set is an error, not a warning on stderr.
 *
 *   parent: profile + report → refuse what the caller does not accept →
 *           private directory layout, environment, argv prepared (no
 *           allocation after fork) → fork
 *   child:  setsid → rlimits (soft and hard) → drop root → chdir →
 *           close fds → execve /usr/bin/sandbox-exec -D PRIVATE=… -p PROFILE
 *           -- CMD (sandbox-exec applies the profile, then execs CMD)
 *   parent: a CLOEXEC pipe tells exec success (EOF) from failure (errno).
 *
 * Compiled only on macOS; elsewhere this file is empty, except in the
 * Linux test of the launch logic (SECURER_MACOS_LAUNCH_TEST), which points
 * the sandbox-exec path at a stand-in that checks the arguments and runs
 * the command: the code uses POSIX calls only. */
#if defined(__APPLE__) || defined(SECURER_MACOS_LAUNCH_TEST)

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "securer/ports.h"
#include "securer/sandbox.h"

#ifdef SECURER_MACOS_LAUNCH_TEST
/* The Linux test of this file points this at its stand-in. */
const char *securer_macos_sandbox_exec = "/usr/bin/sandbox-exec";
#define SANDBOX_EXEC securer_macos_sandbox_exec
#else
#define SANDBOX_EXEC "/usr/bin/sandbox-exec"
#endif

/* nobody on macOS: the payload is never root, as on Linux where root maps
 * to the overflow uid. */
#define NOBODY_ID ((uid_t) -2)

static const int rlimit_resource[SECURER_RLIMIT_COUNT] = {
  [SECURER_RLIMIT_CPU] = RLIMIT_CPU,         [SECURER_RLIMIT_AS] = RLIMIT_AS,
  [SECURER_RLIMIT_FSIZE] = RLIMIT_FSIZE,     [SECURER_RLIMIT_NPROC] = RLIMIT_NPROC,
  [SECURER_RLIMIT_NOFILE] = RLIMIT_NOFILE,   [SECURER_RLIMIT_STACK] = RLIMIT_STACK,
  [SECURER_RLIMIT_CORE] = RLIMIT_CORE,       [SECURER_RLIMIT_MEMLOCK] = RLIMIT_MEMLOCK,
};

static rlim_t
to_rlim (uint64_t v)
{
  return v == UINT64_MAX || v > (uint64_t) RLIM_INFINITY ? RLIM_INFINITY : (rlim_t) v;
}

static void
free_strv (char **v)
{
  for (char **s = v; s && *s; s++)
    free (*s);
  free (v);
}

/* Creates path and its missing parents; when the payload will run as
 * nobody, what is created becomes nobody's so it can use it. */
static int
mkdir_p (const char *path, mode_t mode, bool chown_nobody, securer_err_t *err)
{
  char *copy = strdup (path);
  if (copy == NULL)
    return securer_error_set (err, ENOMEM, "mkdir %s", path);
  for (char *s = strchr (copy + 1, '/');; s = strchr (s + 1, '/'))
    {
      if (s)
        *s = '\0';
      if (mkdir (copy, s ? 0700 : mode) == 0)
        {
          /* The umask must not narrow a tmpfs mode such as 01777. */
          if ((!s && chmod (copy, mode) < 0)
              || (chown_nobody && lchown (copy, NOBODY_ID, NOBODY_ID) < 0))
            {
              int e = errno;
              free (copy);
              return securer_error_set (err, e, "chmod/chown %s", path);
            }
        }
      else if (errno != EEXIST)
        {
          int e = errno;
          free (copy);
          return securer_error_set (err, e, "mkdir %s", path);
        }
      if (!s)
        break;
      *s = '/';
    }
  free (copy);
  return 0;
}

/* A value naming sandbox paths ("/tmp", "/usr/bin:/bin") is rewritten to
 * where those paths are on the host; anything else passes unchanged. */
static char *
map_value (const struct securer_policy *p, const char *value, const char *private_dir)
{
  if (value[0] != '/')
    return strdup (value);
  size_t cap = strlen (value) + 1;
  char *out = malloc (cap);
  if (out == NULL)
    return NULL;
  out[0] = '\0';
  size_t len = 0;
  const char *start = value;
  for (;;)
    {
      size_t n = strcspn (start, ":");
      char *part = strndup (start, n);
      if (part == NULL)
        {
          free (out);
          return NULL;
        }
      char *mapped = securer_seatbelt_host_path (p, part, private_dir);
      const char *use = mapped ? mapped : part;
      size_t ul = strlen (use);
      if (len + ul + 2 > cap)
        {
          cap = (len + ul + 2) * 2;
          char *nb = realloc (out, cap);
          if (nb == NULL)
            {
              free (part);
              free (mapped);
              free (out);
              return NULL;
            }
          out = nb;
        }
      memcpy (out + len, use, ul);
      len += ul;
      free (part);
      free (mapped);
      if (start[n] != ':')
        break;
      out[len++] = ':';
      start += n + 1;
    }
  out[len] = '\0';
  return out;
}

static int
env_add (char ***env, size_t *n, const char *name, const char *value)
{
  size_t nl = strlen (name);
  for (size_t i = 0; i < *n; i++)
    if (strncmp ((*env)[i], name, nl) == 0 && (*env)[i][nl] == '=')
      {
        free ((*env)[i]);
        memmove (&(*env)[i], &(*env)[i + 1], (*n - i) * sizeof **env);
        (*n)--;
        break;
      }
  char *entry = malloc (nl + strlen (value) + 2);
  char **v = entry ? realloc (*env, (*n + 2) * sizeof *v) : NULL;
  if (v == NULL)
    {
      free (entry);
      return -1;
    }
  sprintf (entry, "%s=%s", name, value);
  *env = v;
  v[(*n)++] = entry;
  v[*n] = NULL;
  return 0;
}

static char **
build_env (const struct securer_policy *p, char *const *caller_env, const char *private_dir,
           securer_err_t *err)
{
  char **env = calloc (1, sizeof *env);
  size_t n = 0;
  if (env == NULL)
    goto oom;
  for (size_t i = 0; i < p->n_env_keep; i++)
    {
      size_t nl = strlen (p->env_keep[i]);
      for (char *const *e = caller_env; e && *e; e++)
        if (strncmp (*e, p->env_keep[i], nl) == 0 && (*e)[nl] == '=')
          {
            char *v = map_value (p, *e + nl + 1, private_dir);
            int r = v ? env_add (&env, &n, p->env_keep[i], v) : -1;
            free (v);
            if (r < 0)
              goto oom;
          }
    }
  for (size_t i = 0; i < p->n_env_set; i++)
    {
      char *v = map_value (p, p->env_set[i].value ? p->env_set[i].value : "", private_dir);
      int r = v ? env_add (&env, &n, p->env_set[i].name, v) : -1;
      free (v);
      if (r < 0)
        goto oom;
    }
  /* TMPDIR is where R and libSystem put scratch files: the sandbox's
   * /tmp when the policy has one, else the private directory. */
  bool has_tmpdir = false;
  for (size_t i = 0; i < n; i++)
    has_tmpdir |= strncmp (env[i], "TMPDIR=", 7) == 0;
  if (!has_tmpdir)
    {
      char *tmp = securer_seatbelt_host_path (p, "/tmp", private_dir);
      int r = env_add (&env, &n, "TMPDIR", tmp && strncmp (tmp, private_dir, strlen (private_dir)) == 0 ? tmp : private_dir);
      free (tmp);
      if (r < 0)
        goto oom;
    }
  return env;
oom:
  free_strv (env);
  securer_error_set (err, ENOMEM, "environment");
  return NULL;
}

int
securer_macos_spawn (const struct securer_policy *p, char *const *argv, char *const *caller_env,
                     const char *private_dir, unsigned flags, int *pid_out,
                     struct securer_port_report *rep, securer_err_t *err)
{
  if (argv == NULL || argv[0] == NULL)
    return securer_error_set (err, EINVAL, "no command");
  char *profile = securer_seatbelt_profile (p, rep, err);
  if (profile == NULL)
    return securer_error_prefix (err, "seatbelt");
  if (securer_port_check (rep, flags, err) < 0)
    {
      free (profile);
      return -1;
    }

  int ret = -1;
  char real[PATH_MAX];
  char **env = NULL, **args = NULL;
  char *param = NULL, *cwd = NULL, *cmd = NULL;
  int pipefd[2] = { -1, -1 };
  if (realpath (private_dir, real) == NULL)
    {
      securer_error_set (err, errno, "private directory %s", private_dir);
      goto out;
    }
  bool drop_root = geteuid () == 0;
  if (drop_root && lchown (real, NOBODY_ID, NOBODY_ID) < 0)
    {
      securer_error_set (err, errno, "chown %s", real);
      goto out;
    }
  for (size_t i = 0; i < p->n_mounts; i++)
    if (p->mounts[i].type == SECURER_MOUNT_TMPFS)
      {
        char *dir = securer_seatbelt_host_path (p, p->mounts[i].dest, real);
        int r = dir ? mkdir_p (dir, p->mounts[i].mode ? p->mounts[i].mode & 07777 : 0700, drop_root, err)
                    : securer_error_set (err, ENOMEM, "tmpfs %s", p->mounts[i].dest);
        free (dir);
        if (r < 0)
          goto out;
      }
  if ((env = build_env (p, caller_env, real, err)) == NULL)
    goto out;
  cwd = p->cwd ? securer_seatbelt_host_path (p, p->cwd, real) : NULL;
  if (cwd == NULL && (cwd = strdup (real)) == NULL)
    {
      securer_error_set (err, ENOMEM, "cwd");
      goto out;
    }
  size_t argc = 0;
  while (argv[argc])
    argc++;
  args = calloc (argc + 8, sizeof *args);
  param = malloc (strlen (SECURER_SEATBELT_PARAM_PRIVATE) + strlen (real) + 2);
  if (args == NULL || param == NULL)
    {
      securer_error_set (err, ENOMEM, "arguments");
      goto out;
    }
  sprintf (param, "%s=%s", SECURER_SEATBELT_PARAM_PRIVATE, real);
  size_t k = 0;
  args[k++] = (char *) SANDBOX_EXEC;
  args[k++] = (char *) "-D";
  args[k++] = param;
  args[k++] = (char *) "-p";
  args[k++] = profile;
  args[k++] = (char *) "--";
  /* The command names a sandbox path; on the host it lives where the
   * mount's source is. */
  cmd = argv[0][0] == '/' ? securer_seatbelt_host_path (p, argv[0], real) : NULL;
  if (cmd == NULL && (cmd = strdup (argv[0])) == NULL)
    {
      securer_error_set (err, ENOMEM, "arguments");
      goto out;
    }
  args[k++] = cmd;
  for (size_t i = 1; i < argc; i++)
    args[k++] = argv[i];

  struct rlimit lim[SECURER_RLIMIT_COUNT];
  for (int i = 0; i < SECURER_RLIMIT_COUNT; i++)
    {
      lim[i].rlim_cur = to_rlim (p->limits.rlimit[i].soft);
      lim[i].rlim_max = to_rlim (p->limits.rlimit[i].hard);
    }
  if (pipe (pipefd) < 0 || fcntl (pipefd[0], F_SETFD, FD_CLOEXEC) < 0
      || fcntl (pipefd[1], F_SETFD, FD_CLOEXEC) < 0)
    {
      securer_error_set (err, errno, "pipe");
      goto out;
    }
  pid_t pid = fork ();
  if (pid < 0)
    {
      securer_error_set (err, errno, "fork");
      goto out;
    }
  if (pid == 0)
    {
      /* Child: async-signal-safe calls only from here on. */
      int e = 0;
      int step = 0;
      if (setsid () < 0)
        e = errno, step = 1;
      for (int i = 0; e == 0 && i < SECURER_RLIMIT_COUNT; i++)
        if (p->limits.rlimit[i].set && i != SECURER_RLIMIT_SIGPENDING /* none in XNU: reported */
            && setrlimit (rlimit_resource[i], &lim[i]) < 0
            && i != SECURER_RLIMIT_AS) /* reported as unenforced; XNU may refuse it */
          e = errno, step = 2;
      if (e == 0 && drop_root
          && (setgroups (0, NULL) < 0 || setgid (NOBODY_ID) < 0 || setuid (NOBODY_ID) < 0))
        e = errno, step = 3;
      if (e == 0 && chdir (cwd) < 0)
        e = errno, step = 4;
      if (e == 0)
        {
          int maxfd = (int) sysconf (_SC_OPEN_MAX);
          for (int fd = 3; fd < maxfd && fd < 65536; fd++)
            if (fd != pipefd[1])
              close (fd);
          execve (SANDBOX_EXEC, args, env);
          e = errno, step = 5;
        }
      int msg[2] = { step, e };
      ssize_t unused = write (pipefd[1], msg, sizeof msg);
      (void) unused;
      _exit (step == 5 ? SECURER_EXIT_CANNOT_EXEC : SECURER_EXIT_SETUP);
    }
  close (pipefd[1]);
  pipefd[1] = -1;
  int msg[2];
  ssize_t n;
  do
    n = read (pipefd[0], msg, sizeof msg);
  while (n < 0 && errno == EINTR);
  if (n == (ssize_t) sizeof msg)
    {
      static const char *const steps[] = { "?", "setsid", "setrlimit", "drop root", "chdir", "exec sandbox-exec" };
      waitpid (pid, NULL, 0);
      securer_error_set (err, msg[1], "%s", steps[msg[0] >= 1 && msg[0] <= 5 ? msg[0] : 0]);
      securer_error_set_status (err, msg[0] == 5 ? SECURER_EXIT_CANNOT_EXEC : SECURER_EXIT_SETUP);
      goto out;
    }
  *pid_out = pid;
  ret = 0;

out:
  if (pipefd[0] >= 0)
    close (pipefd[0]);
  if (pipefd[1] >= 0)
    close (pipefd[1]);
  free (cmd);
  free (args);
  free (param);
  free (cwd);
  free_strv (env);
  free (profile);
  return ret;
}

int
securer_macos_wait (const struct securer_policy *p, int pid, securer_err_t *err)
{
  struct timespec start, now;
  clock_gettime (CLOCK_MONOTONIC, &start);
  uint64_t limit = p->limits.timeout_ms;
  int status = 0;
  for (;;)
    {
      pid_t r = waitpid (pid, &status, limit ? WNOHANG : 0);
      if (r == pid)
        break;
      if (r < 0 && errno != EINTR)
        return securer_error_set (err, errno, "waitpid %d", pid);
      clock_gettime (CLOCK_MONOTONIC, &now);
      uint64_t ms = (uint64_t) (now.tv_sec - start.tv_sec) * 1000
                    + (uint64_t) (now.tv_nsec / 1000000) - (uint64_t) (start.tv_nsec / 1000000);
      if (limit && ms >= limit)
        {
          killpg (pid, SIGKILL);
          kill (pid, SIGKILL);
          while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
            ;
          return SECURER_EXIT_TIMEOUT;
        }
      /* Polling keeps this to POSIX calls; 5 ms is far below any useful
       * timeout and costs nothing measurable. */
      struct timespec nap = { 0, 5 * 1000 * 1000 };
      nanosleep (&nap, NULL);
    }
  /* Whatever the payload left in its session goes with it. */
  killpg (pid, SIGKILL);
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return 128 + WTERMSIG (status);
}

#else
/* ISO C wants at least one declaration per translation unit. */
typedef int securer_launch_macos_unused;
#endif
