/* Runs a step of the Linux backend in real namespaces, the way the
 * launcher does, and collects what the code running inside observed.
 *
 * The test process forks a child that unshares a user namespace; the test
 * writes its uid/gid maps (inside uid -> nobody when the tests run as root,
 * -> the caller otherwise, so the sandbox is never host root), the child
 * switches to the mapped root, unshares mount+pid+net+ipc and forks pid 1
 * of the new pid namespace.  Pid 1 runs the step(s) and then the test's
 * `inside` function, which reports facts as "key=value" lines on a pipe;
 * the test asserts on those facts. */
#ifndef TEST_ROOTFS_HARNESS_H
#define TEST_ROOTFS_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cap-ng.h>
#include <sys/prctl.h>

#include "linux/linux.h"

#define OVERFLOW_ID 65534

/* Host uid/gid that inside-root maps to. */
static inline uid_t
harness_host_uid (void)
{
  return geteuid () == 0 ? OVERFLOW_ID : geteuid ();
}
static inline gid_t
harness_host_gid (void)
{
  return geteuid () == 0 ? OVERFLOW_ID : getegid ();
}

static int harness_out_fd = -1;

/* Reports one fact from inside the sandbox. */
static inline void fact (const char *key, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static inline void
fact (const char *key, const char *fmt, ...)
{
  char *v = NULL;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&v, fmt, ap) < 0)
    v = NULL;
  va_end (ap);
  dprintf (harness_out_fd, "%s=%s\n", key, v ? v : "?");
  free (v);
}

/* errno as its name, "OK" for success (rc >= 0). */
static inline const char *
errname (int rc, int e)
{
  if (rc >= 0)
    return "OK";
  const char *n = strerrorname_np (e);
  return n ? n : "E?";
}

static inline void
fact_rc (const char *key, int rc)
{
  fact (key, "%s", errname (rc, errno));
}

struct harness_steps {
  const struct securer_policy *policy;
  bool rootfs;    /* run securer_linux_setup_rootfs */
  bool network;   /* run securer_linux_setup_network */
  unsigned uid;   /* inside uid/gid the steps run as (caps kept, as the launcher does) */
  void (*inside) (void *arg);
  void *arg;
};

static int
harness_write_file (pid_t pid, const char *name, const char *text)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = write (fd, text, strlen (text));
  close (fd);
  return n == (ssize_t) strlen (text) ? 0 : -1;
}

static void
harness_pid1 (const struct harness_steps *s)
{
  securer_err_t err = NULL;
  if (s->rootfs && securer_linux_setup_rootfs (s->policy, false, &err) < 0)
    {
      fact ("setup_error", "%s", securer_error_message (err));
      fact ("setup_errno", "%s", errname (-1, securer_error_errno (err)));
      _exit (0);
    }
  if (s->network && securer_linux_setup_network (s->policy, &err) < 0)
    {
      fact ("setup_error", "%s", securer_error_message (err));
      fact ("setup_errno", "%s", errname (-1, securer_error_errno (err)));
      _exit (0);
    }
  fact ("setup", "ok");
  if (s->inside)
    s->inside (s->arg);
  fact ("done", "yes");
  _exit (0);
}

/* Returns the facts reported inside (malloc'd, "key=value\n" lines) or
 * NULL when the namespaces could not be set up. */
static char *
harness_run (const struct harness_steps *s)
{
  int out[2], sync1[2], sync2[2];
  if (pipe2 (out, O_CLOEXEC) < 0 || pipe2 (sync1, O_CLOEXEC) < 0 || pipe2 (sync2, O_CLOEXEC) < 0)
    return NULL;
  pid_t child = fork ();
  if (child < 0)
    return NULL;
  if (child == 0)
    {
      close (out[0]);
      close (sync1[0]);
      close (sync2[1]);
      harness_out_fd = out[1];
      char c = 0;
      if (unshare (CLONE_NEWUSER) < 0)
        {
          fact ("setup_error", "unshare user: %s", strerror (errno));
          _exit (1);
        }
      if (write (sync1[1], "u", 1) != 1 || read (sync2[0], &c, 1) != 1 || c != 'g')
        _exit (1);
      if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setresgid (s->uid, s->uid, s->uid) < 0
          || setresuid (s->uid, s->uid, s->uid) < 0)
        {
          fact ("setup_error", "become inside uid: %s", strerror (errno));
          _exit (1);
        }
      /* setresuid to a non-zero uid clears the effective set even with
       * KEEPCAPS; raise it again from the permitted set. */
      capng_get_caps_process ();
      for (unsigned cap = 0; cap <= (unsigned) CAP_LAST_CAP; cap++)
        if (capng_have_capability (CAPNG_PERMITTED, cap))
          capng_update (CAPNG_ADD, CAPNG_EFFECTIVE, cap);
      if (capng_apply (CAPNG_SELECT_CAPS) < 0)
        {
          fact ("setup_error", "raise effective capabilities");
          _exit (1);
        }
      if (unshare (CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC) < 0)
        {
          fact ("setup_error", "unshare: %s", strerror (errno));
          _exit (1);
        }
      pid_t pid1 = fork ();
      if (pid1 < 0)
        _exit (1);
      if (pid1 == 0)
        harness_pid1 (s);
      int st;
      while (waitpid (pid1, &st, 0) < 0 && errno == EINTR)
        ;
      _exit (WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st));
    }
  close (out[1]);
  close (sync1[1]);
  close (sync2[0]);
  char c = 0, map[64];
  bool ok = read (sync1[0], &c, 1) == 1 && c == 'u';
  if (ok)
    {
      snprintf (map, sizeof map, "%u %u 1\n", s->uid, (unsigned) harness_host_uid ());
      ok = harness_write_file (child, "setgroups", "deny") == 0
           && harness_write_file (child, "uid_map", map) == 0;
      snprintf (map, sizeof map, "%u %u 1\n", s->uid, (unsigned) harness_host_gid ());
      ok = ok && harness_write_file (child, "gid_map", map) == 0;
    }
  if (ok)
    ok = write (sync2[1], "g", 1) == 1;
  close (sync1[0]);
  close (sync2[1]);

  size_t len = 0, cap = 4096;
  char *buf = malloc (cap);
  ssize_t n;
  while (buf && (n = read (out[0], buf + len, cap - len - 1)) != 0)
    {
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      len += (size_t) n;
      if (cap - len < 512)
        {
          char *nb = realloc (buf, cap *= 2);
          if (nb == NULL)
            {
              free (buf);
              buf = NULL;
            }
          buf = nb;
        }
    }
  close (out[0]);
  int st;
  while (waitpid (child, &st, 0) < 0 && errno == EINTR)
    ;
  if (buf)
    buf[len] = '\0';
  if (!ok)
    {
      free (buf);
      return NULL;
    }
  return buf;
}

/* The value of `key` in the facts (static buffer), NULL when absent. */
static const char *
get_fact (const char *facts, const char *key)
{
  static char val[4096];
  size_t klen = strlen (key);
  for (const char *l = facts; l && *l;)
    {
      const char *nl = strchr (l, '\n');
      size_t llen = nl ? (size_t) (nl - l) : strlen (l);
      if (llen > klen && strncmp (l, key, klen) == 0 && l[klen] == '=')
        {
          size_t vlen = llen - klen - 1;
          if (vlen >= sizeof val)
            vlen = sizeof val - 1;
          memcpy (val, l + klen + 1, vlen);
          val[vlen] = '\0';
          return val;
        }
      l = nl ? nl + 1 : NULL;
    }
  return NULL;
}

#endif
