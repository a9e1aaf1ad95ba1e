/* What a container leaves in ROOT/ID between runtime invocations
 * (state.json, the exec fifo), its OCI state object, and hooks. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oci/oci.h"

int
oci_id_check (const char *id, securer_err_t *err)
{
  bool ok = *id && strcmp (id, ".") && strcmp (id, "..") && strlen (id) < 1024;
  for (const char *c = id; ok && *c; c++)
    ok = *c > ' ' && *c < 127 && *c != '/';
  if (!ok)
    {
      securer_error_set (err, EINVAL, "invalid container id \"%s\"", id);
      securer_error_set_status (err, 1);
      return -1;
    }
  return 0;
}

int
oci_root_check (const char *root, securer_err_t *err)
{
  /* The state names pids to signal, cgroups to remove and bundles whose
   * hooks run as root: whoever can write the state directory, or any
   * directory above it (the sticky bit aside: others cannot then rename
   * what is ours), can make us do that.  Missing components are fine:
   * create makes them 0700. */
  char *p = strdup (root);
  int rc = 0;
  for (;;)
    {
      const char *name = *p ? p : "/";
      struct stat st;
      if (stat (name, &st) < 0)
        {
          if (errno != ENOENT)
            rc = securer_error_set (err, errno, "--root %s: %s", root, name);
        }
      else if (!S_ISDIR (st.st_mode))
        rc = securer_error_set (err, ENOTDIR, "--root %s: %s is not a directory", root, name);
      else if (st.st_uid != 0 && st.st_uid != geteuid ())
        rc = securer_error_set (err, EPERM, "--root %s: %s belongs to uid %u", root, name,
                                (unsigned) st.st_uid);
      else if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        rc = securer_error_set (err, EPERM, "--root %s: %s is writable by others (mode %04o)", root,
                                name, (unsigned) (st.st_mode & 07777));
      char *slash = strrchr (p, '/');
      if (rc < 0 || slash == NULL || *p == '\0')
        break;
      *slash = '\0';
    }
  free (p);
  return rc;
}

static uint64_t
start_time (pid_t pid, bool zombie_ok)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: fields start after the last ')'. */
  char *p = strrchr (buf, ')');
  if (p == NULL)
    return 0;
  char state = 0;
  unsigned long long start = 0;
  if (sscanf (p + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
              &state, &start) != 2)
    return 0;
  if (!zombie_ok && (state == 'Z' || state == 'X'))
    return 0;  /* dead, waiting to be reaped: stopped */
  return start;
}

uint64_t
oci_proc_start_time (pid_t pid)
{
  return start_time (pid, false);
}

uint64_t
oci_proc_start_time_any (pid_t pid)
{
  return start_time (pid, true);
}

static char *
state_path (const char *dir, const char *file)
{
  char *p = malloc (strlen (dir) + strlen (file) + 2);
  sprintf (p, "%s/%s", dir, file);
  return p;
}

int
oci_state_save (const struct oci_state *st, securer_err_t *err)
{
  /* "o" takes the reference: the annotations' own one is added here, an
   * empty object's is its only one (with "O" that object leaked). */
  json_t *j = json_pack ("{s:s, s:s, s:I, s:I, s:s, s:o, s:o}", "id", st->id, "bundle", st->bundle,
                         "pid", (json_int_t) st->pid, "startTime", (json_int_t) st->start_time,
                         "created", st->created, "annotations",
                         st->annotations ? json_incref (st->annotations) : json_object (), "cgroup",
                         oci_cgroup_to_json (st->cg));
  char *tmp = state_path (st->dir, "state.json.tmp");
  char *path = state_path (st->dir, "state.json");
  int rc = json_dump_file (j, tmp, JSON_COMPACT);
  json_decref (j);
  if (rc < 0 || rename (tmp, path) < 0)
    rc = securer_error_set (err, errno, "write %s", path);
  free (tmp);
  free (path);
  return rc;
}

int
oci_state_load (const char *root, const char *id, struct oci_state **out, securer_err_t *err)
{
  *out = NULL;
  if (oci_id_check (id, err) < 0)
    return -1;
  struct oci_state *st = calloc (1, sizeof *st);
  st->id = strdup (id);
  st->dir = malloc (strlen (root) + strlen (id) + 2);
  sprintf (st->dir, "%s/%s", root, id);
  char *path = state_path (st->dir, "state.json");
  json_error_t je;
  json_t *j = json_load_file (path, 0, &je);
  free (path);
  if (j == NULL)
    {
      int e = errno;
      oci_state_free (st);
      securer_error_set (err, e == ENOENT || access (root, F_OK) < 0 ? ENOENT : 0,
                         "container \"%s\" does not exist", id);
      securer_error_set_status (err, 1);
      return -1;
    }
  st->bundle = strdup (json_string_value (json_object_get (j, "bundle")) ?: "");
  st->pid = (pid_t) json_integer_value (json_object_get (j, "pid"));
  st->start_time = (uint64_t) json_integer_value (json_object_get (j, "startTime"));
  st->created = strdup (json_string_value (json_object_get (j, "created")) ?: "");
  st->annotations = json_incref (json_object_get (j, "annotations"));
  st->cg = oci_cgroup_from_json (json_object_get (j, "cgroup"));
  json_decref (j);
  *out = st;
  return 0;
}

enum oci_status
oci_state_status (const struct oci_state *st)
{
  if (st->pid <= 0 || oci_proc_start_time (st->pid) != st->start_time)
    return OCI_STOPPED;
  char *fifo = state_path (st->dir, "exec.fifo");
  bool waiting = access (fifo, F_OK) == 0;
  free (fifo);
  if (waiting)
    return OCI_CREATED;
  return oci_cgroup_frozen (st->cg) ? OCI_PAUSED : OCI_RUNNING;
}

const char *
oci_status_name (enum oci_status s)
{
  static const char *const names[] = { "creating", "created", "running", "stopped", "paused" };
  return names[s];
}

json_t *
oci_state_json (const struct oci_state *st)
{
  enum oci_status s = oci_state_status (st);
  /* "o", as in oci_state_save. */
  return json_pack ("{s:s, s:s, s:s, s:I, s:s, s:o, s:s}", "ociVersion", "1.0.2", "id", st->id,
                    "status", oci_status_name (s), "pid",
                    (json_int_t) (s == OCI_STOPPED ? 0 : st->pid), "bundle", st->bundle,
                    "annotations", st->annotations ? json_incref (st->annotations) : json_object (),
                    "created", st->created);
}

void
oci_state_free (struct oci_state *st)
{
  if (st == NULL)
    return;
  free (st->id);
  free (st->dir);
  free (st->bundle);
  free (st->created);
  json_decref (st->annotations);
  oci_cgroup_free (st->cg);
  free (st);
}

static int
run_hook (const struct oci_hook *h, const char *state_json, securer_err_t *err)
{
  int in[2];
  if (pipe2 (in, O_CLOEXEC) < 0)
    return securer_error_set (err, errno, "pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (in[0]);
      close (in[1]);
      return securer_error_set (err, errno, "fork");
    }
  if (pid == 0)
    {
      dup2 (in[0], 0);
      /* The state on stdin, the runtime's stdout and stderr, nothing else:
       * not what the engine passed on for the container, nor any
       * descriptor the runtime holds. */
      syscall (SYS_close_range, 3, ~0u, 0);
      char *const def[] = { h->path, NULL };
      char *const empty[] = { NULL };
      execve (h->path, h->args ? h->args : def, h->env ? h->env : empty);
      _exit (127);
    }
  close (in[0]);
  /* A hook that does not read its stdin must not kill us (nor leave
   * SIGPIPE ignored: inside the container that would reach the process). */
  struct sigaction ign = { .sa_handler = SIG_IGN }, old;
  sigaction (SIGPIPE, &ign, &old);
  ssize_t w = write (in[1], state_json, strlen (state_json));
  (void) w;
  close (in[1]);
  sigaction (SIGPIPE, &old, NULL);
  int status = 0;
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  for (;;)
    {
      pid_t r = waitpid (pid, &status, h->timeout ? WNOHANG : 0);
      if (r == pid)
        break;
      if (r < 0 && errno != EINTR)
        return securer_error_set (err, errno, "wait for hook %s", h->path);
      struct timespec now;
      clock_gettime (CLOCK_MONOTONIC, &now);
      if (h->timeout && now.tv_sec - start.tv_sec >= h->timeout)
        {
          kill (pid, SIGKILL);
          waitpid (pid, &status, 0);
          return securer_error_set (err, ETIMEDOUT, "hook %s timed out after %d s", h->path,
                                    h->timeout);
        }
      struct timespec ts = { 0, 5 * 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return securer_error_set (err, 0, "hook %s failed (status %d)", h->path,
                              WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
  return 0;
}

int
oci_hooks_run (const struct oci_spec *s, enum oci_hook_kind k, const char *state_json,
               securer_err_t *err)
{
  static const char *const names[] = { "prestart", "createRuntime", "createContainer",
                                       "startContainer", "poststart", "poststop" };
  for (size_t i = 0; s && i < s->n_hooks[k]; i++)
    if (run_hook (&s->hooks[k][i], state_json, err) < 0)
      return securer_error_prefix (err, "hooks.%s[%zu]", names[k], i);
  return 0;
}
