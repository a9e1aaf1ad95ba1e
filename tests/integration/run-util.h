/* Shared by the launcher's integration tests: a policy built in code that
 * makes tests/helpers/probe visible inside, running it in a real sandbox
 * with its stdout captured, and reading its key=value report. */
#ifndef SECURER_TEST_RUN_UTIL_H
#define SECURER_TEST_RUN_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "securer.h"

/* Not every test file uses every helper. */
#define UTIL static __attribute__ ((unused))

UTIL const char *
builddir (void)
{
  const char *b = getenv ("SECURER_BUILDDIR");
  return b ? b : SECURER_ABS_BUILDDIR;
}

UTIL char *
xstrdup (const char *s)
{
  char *d = strdup (s);
  if (d == NULL)
    abort ();
  return d;
}

UTIL char *
probe_path (void)
{
  char *p = NULL;
  if (asprintf (&p, "%s/tests/helpers/probe", builddir ()) < 0)
    abort ();
  return p;
}

UTIL char *
helpers_dir (void)
{
  char *p = NULL;
  if (asprintf (&p, "%s/tests/helpers", builddir ()) < 0)
    abort ();
  return p;
}

UTIL void
add_mount (struct securer_policy *p, enum securer_mount_type t, const char *src, const char *dest)
{
  p->mounts = realloc (p->mounts, (p->n_mounts + 1) * sizeof *p->mounts);
  struct securer_mount *m = &p->mounts[p->n_mounts++];
  memset (m, 0, sizeof *m);
  m->type = t;
  m->source = src ? xstrdup (src) : NULL;
  m->dest = xstrdup (dest);
  m->noexec = t == SECURER_MOUNT_RW || t == SECURER_MOUNT_TMPFS;
  m->mode = t == SECURER_MOUNT_TMPFS ? 01777 : 0755;
}

UTIL void
add_env_set (struct securer_policy *p, const char *name, const char *value)
{
  p->env_set = realloc (p->env_set, (p->n_env_set + 1) * sizeof *p->env_set);
  p->env_set[p->n_env_set].name = xstrdup (name);
  p->env_set[p->n_env_set].value = xstrdup (value);
  p->n_env_set++;
}

UTIL void
add_env_keep (struct securer_policy *p, const char *name)
{
  p->env_keep = realloc (p->env_keep, (p->n_env_keep + 1) * sizeof *p->env_keep);
  p->env_keep[p->n_env_keep++] = xstrdup (name);
}

UTIL void
add_syscall_rule (struct securer_policy *p, const char *name, enum securer_action_type t, int errnum)
{
  p->seccomp.rules = realloc (p->seccomp.rules, (p->seccomp.n_rules + 1) * sizeof *p->seccomp.rules);
  struct securer_syscall_rule *r = &p->seccomp.rules[p->seccomp.n_rules++];
  memset (r, 0, sizeof *r);
  r->name = xstrdup (name);
  r->action.type = t;
  r->action.errnum = errnum;
}

/* What minimal.policy gives, plus the helpers' build directory read-only. */
UTIL struct securer_policy *
test_policy (void)
{
  struct securer_policy *p = calloc (1, sizeof *p);
  p->name = xstrdup ("test");
  p->namespaces = SECURER_NS_ALL;
  p->hostname = xstrdup ("sandbox");
  p->uid = 1000;
  p->gid = 1000;
  p->host_uid = -1;
  p->host_gid = -1;
  add_mount (p, SECURER_MOUNT_RO, "/usr", "/usr");
  add_mount (p, SECURER_MOUNT_SYMLINK, "usr/bin", "/bin");
  add_mount (p, SECURER_MOUNT_SYMLINK, "usr/lib", "/lib");
  add_mount (p, SECURER_MOUNT_SYMLINK, "usr/lib64", "/lib64");
  add_mount (p, SECURER_MOUNT_PROC, NULL, "/proc");
  add_mount (p, SECURER_MOUNT_DEV, NULL, "/dev");
  add_mount (p, SECURER_MOUNT_TMPFS, NULL, "/tmp");
  char *h = helpers_dir ();
  add_mount (p, SECURER_MOUNT_RO, h, h);
  free (h);
  p->cwd = xstrdup ("/");
  p->network = SECURER_NET_LOOPBACK;
  add_env_set (p, "PATH", "/usr/bin:/bin");
  p->limits.cgroup = SECURER_ENFORCE_BEST_EFFORT;
  p->landlock.mode = SECURER_ENFORCE_OFF;
  p->seccomp.enabled = false;
  p->seccomp.default_action.type = SECURER_ACT_ALLOW;
  p->seccomp.foreign_arch.type = SECURER_ACT_KILL_PROCESS;
  return p;
}

UTIL void
test_policy_free (struct securer_policy *p)
{
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      free (p->mounts[i].source);
      free (p->mounts[i].dest);
    }
  free (p->mounts);
  for (size_t i = 0; i < p->n_env_set; i++)
    {
      free (p->env_set[i].name);
      free (p->env_set[i].value);
    }
  free (p->env_set);
  for (size_t i = 0; i < p->n_env_keep; i++)
    free (p->env_keep[i]);
  free (p->env_keep);
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    free (p->seccomp.rules[i].name);
  free (p->seccomp.rules);
  free (p->name);
  free (p->hostname);
  free (p->cwd);
  free (p);
}

struct run_result {
  int spawn_rc;            /* 0, or -1 when spawn failed */
  int spawn_status;        /* the error's exit status when spawn failed */
  int spawn_errno;
  char *spawn_msg;
  struct securer_status st;
  char *out;               /* the probe's stdout */
};

UTIL char *
read_all (int fd)
{
  size_t cap = 4096, len = 0;
  char *buf = malloc (cap);
  for (;;)
    {
      if (len + 1 >= cap)
        buf = realloc (buf, cap *= 2);
      ssize_t n = read (fd, buf + len, cap - len - 1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  return buf;
}

UTIL struct securer_spawn_opts
opts_for (const struct securer_policy *p, char **argv)
{
  struct securer_spawn_opts o;
  memset (&o, 0, sizeof o);
  o.policy = p;
  o.argv = argv;
  o.stdin_fd = o.stdout_fd = o.stderr_fd = -1;
  return o;
}

/* Runs o->argv in the sandbox o describes, capturing its stdout. */
UTIL void
run_in_sandbox (struct securer_spawn_opts *o, struct run_result *r)
{
  memset (r, 0, sizeof *r);
  int pfd[2];
  if (pipe2 (pfd, O_CLOEXEC) < 0)
    abort ();
  o->stdout_fd = pfd[1];
  struct securer_sandbox *sb = NULL;
  securer_err_t err = NULL;
  r->spawn_rc = securer_sandbox_spawn (o, &sb, &err);
  close (pfd[1]);
  if (r->spawn_rc < 0)
    {
      r->spawn_status = err ? err->status : 0;
      r->spawn_errno = securer_error_errno (err);
      r->spawn_msg = xstrdup (securer_error_message (err));
      securer_error_free (&err);
      r->out = read_all (pfd[0]);
      close (pfd[0]);
      return;
    }
  /* Output and the sandbox's events are served together: a command that
   * never closes stdout must still meet its timeout. */
  size_t cap = 4096, len = 0;
  r->out = malloc (cap);
  bool eof = false;
  int done = 0;
  while (!eof || !done)
    {
      struct pollfd pf[2] = { { eof ? -1 : pfd[0], POLLIN, 0 },
                              { done ? -1 : securer_sandbox_pollfd (sb), POLLIN, 0 } };
      if (poll (pf, 2, -1) < 0 && errno != EINTR)
        abort ();
      if (pf[0].revents)
        {
          if (len + 1024 >= cap)
            r->out = realloc (r->out, cap *= 2);
          ssize_t n = read (pfd[0], r->out + len, cap - len - 1);
          if (n <= 0)
            eof = true;
          else
            len += (size_t) n;
        }
      if (pf[1].revents && !done)
        {
          done = securer_sandbox_dispatch (sb, &r->st, &err);
          if (done < 0)
            {
              fprintf (stderr, "dispatch: %s\n", securer_error_message (err));
              abort ();
            }
        }
    }
  r->out[len] = '\0';
  close (pfd[0]);
  securer_sandbox_free (sb);
}

UTIL void
run_result_clear (struct run_result *r)
{
  free (r->spawn_msg);
  free (r->out);
  securer_status_clear (&r->st);
}

/* Value of the first "key=value" line, malloc'd, or NULL. */
UTIL char *
kv (const char *out, const char *key)
{
  size_t kl = strlen (key);
  for (const char *l = out; l != NULL && *l; )
    {
      const char *nl = strchr (l, '\n');
      size_t len = nl ? (size_t) (nl - l) : strlen (l);
      if (len > kl && strncmp (l, key, kl) == 0 && l[kl] == '=')
        return strndup (l + kl + 1, len - kl - 1);
      l = nl ? nl + 1 : NULL;
    }
  return NULL;
}

/* Number of processes whose command line contains marker. */
UTIL int
count_marked (const char *marker)
{
  DIR *d = opendir ("/proc");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir (d)) != NULL)
    {
      if (e->d_name[0] < '0' || e->d_name[0] > '9')
        continue;
      char path[300], buf[4096];
      snprintf (path, sizeof path, "/proc/%s/cmdline", e->d_name);
      int fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        continue;
      ssize_t len = read (fd, buf, sizeof buf - 1);
      close (fd);
      for (ssize_t i = 0; i < len; i++)
        if (buf[i] == '\0')
          buf[i] = ' ';
      if (len > 0)
        {
          buf[len] = '\0';
          if (strstr (buf, marker) != NULL)
            n++;
        }
    }
  if (d)
    closedir (d);
  return n;
}

/* Waits (bounded, 10 s) until no process carries marker; returns the count left. */
UTIL int
wait_marked_gone (const char *marker)
{
  int n = 0;
  for (int i = 0; i < 1000; i++)
    {
      if ((n = count_marked (marker)) == 0)
        return 0;
      struct timespec ts = { 0, 10 * 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
  return n;
}

UTIL void
unique_marker (char *buf, size_t len, const char *what)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  snprintf (buf, len, "securer-test-%s-%d-%ld", what, (int) getpid (), (long) ts.tv_nsec);
}

#endif
