/* securer-runc — securer as an OCI runtime, speaking runc's command line
 * so that podman (conmon), containerd's runc shim and CRI-O can call it.
 * docs/oci.md describes what is supported and what is refused. */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "oci/oci.h"
#include "securer/error.h"
#include "seccomp/seccomp.h"

const char *securer_version (void);

struct globals {
  const char *root;
  const char *log;
  bool log_json;
  bool systemd_cgroup;
};
static struct globals g = { "/run/securer", NULL, false, false };

/* Errors go to stderr and, with --log, to the log file as the engine
 * expects it (containerd's shim reads the last JSON line). */
static void
logmsg (const char *level, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static void
logmsg (const char *level, const char *fmt, ...)
{
  char msg[4096];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  if (strcmp (level, "error") == 0)
    fprintf (stderr, "securer-runc: %s\n", msg);
  else if (strcmp (level, "warning") == 0)
    fprintf (stderr, "securer-runc: warning: %s\n", msg);
  if (g.log == NULL)
    return;
  FILE *f = fopen (g.log, "ae");
  if (f == NULL)
    return;
  char ts[64];
  time_t now = time (NULL);
  struct tm tm;
  strftime (ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime_r (&now, &tm));
  if (g.log_json)
    {
      json_t *j = json_pack ("{s:s, s:s, s:s}", "level", level, "msg", msg, "time", ts);
      char *s = json_dumps (j, JSON_COMPACT);
      fprintf (f, "%s\n", s);
      free (s);
      json_decref (j);
    }
  else
    fprintf (f, "time=\"%s\" level=%s msg=\"%s\"\n", ts, level, msg);
  fclose (f);
}

static int
fail (securer_err_t *err)
{
  logmsg ("error", "%s", securer_error_message (*err));
  int status = (*err)->status;
  securer_error_free (err);
  /* runc exits 1 on a failed command; run/exec pass 125-127 through. */
  return status > 0 ? status : 1;
}

static int
usage_error (const char *cmd, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static int
usage_error (const char *cmd, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  logmsg ("error", "%s%s%s (see securer-runc %s--help)", cmd ? cmd : "", cmd ? ": " : "", msg,
          cmd ? cmd : "");
  return 1;
}

/* ---- option parsing: runc's "--name value", "--name=value", short forms ---- */
struct optlist {
  const char *v[64];
  size_t n;
};

struct opt {
  const char *name;    /* long name without "--" */
  char short_name;     /* 0: none */
  bool has_arg;
  const char **value;  /* has_arg */
  bool *flag;          /* !has_arg */
  struct optlist *list;  /* has_arg, may repeat: every value kept */
};

#define OPT_ARG(n, c, p) { n, c, true, p, NULL, NULL }
#define OPT_FLAG(n, c, p) { n, c, false, NULL, p, NULL }
#define OPT_LIST(n, c, p) { n, c, true, NULL, NULL, p }
#define OPT_END { NULL, 0, false, NULL, NULL, NULL }

/* Parses options of cmd from argv[*i...]; stops at the first non-option
 * (or after "--").  Unknown options are errors naming them. */
static int
parse_opts (const char *cmd, int argc, char **argv, int *i, const struct opt *opts)
{
  for (; *i < argc; (*i)++)
    {
      char *a = argv[*i];
      if (strcmp (a, "--") == 0)
        {
          (*i)++;
          return 0;
        }
      if (a[0] != '-' || a[1] == '\0')
        return 0;
      const struct opt *o = NULL;
      const char *val = NULL;
      if (a[1] == '-')
        {
          char *eq = strchr (a, '=');
          size_t n = eq ? (size_t) (eq - a - 2) : strlen (a + 2);
          for (const struct opt *p = opts; p->name; p++)
            if (strlen (p->name) == n && strncmp (p->name, a + 2, n) == 0)
              o = p;
          if (eq)
            val = eq + 1;
        }
      else if (a[2] == '\0')
        for (const struct opt *p = opts; p->name; p++)
          if (p->short_name == a[1])
            o = p;
      if (o == NULL)
        return usage_error (cmd, "unknown option %s", a);
      if (o->has_arg)
        {
          if (val == NULL)
            {
              if (*i + 1 >= argc)
                return usage_error (cmd, "option %s needs a value", a);
              val = argv[++(*i)];
            }
          if (o->list && o->list->n < sizeof o->list->v / sizeof o->list->v[0])
            o->list->v[o->list->n++] = val;
          else if (o->list)
            return usage_error (cmd, "option %s given too many times", a);
          else
            *o->value = val;
        }
      else
        {
          if (val && strcmp (val, "true") != 0 && strcmp (val, "false") != 0)
            return usage_error (cmd, "option %s takes no value", a);
          *o->flag = val == NULL || strcmp (val, "true") == 0;
        }
    }
  return 0;
}

static char *
state_dir (const char *id)
{
  char *d = malloc (strlen (g.root) + strlen (id) + 2);
  sprintf (d, "%s/%s", g.root, id);
  return d;
}

static int
mkdir_p (const char *path, mode_t mode)
{
  char *p = strdup (path);
  for (char *c = p + 1; *c; c++)
    if (*c == '/')
      {
        *c = '\0';
        mkdir (p, mode);
        *c = '/';
      }
  int rc = mkdir (p, mode);
  free (p);
  return rc < 0 && errno != EEXIST ? -1 : 0;
}

static int
write_pid_file (const char *path, pid_t pid, securer_err_t *err)
{
  if (path == NULL)
    return 0;
  /* The pid file's directory belongs to the engine, and what else can
   * write there is not ours to judge: a fresh name made with O_EXCL
   * follows no planted symlink, and rename replaces a link at path
   * rather than writing through it. */
  char *tmp = malloc (strlen (path) + 8);
  sprintf (tmp, "%s.XXXXXX", path);
  int fd = mkostemp (tmp, O_CLOEXEC);
  char text[16];
  int len = snprintf (text, sizeof text, "%d", (int) pid);
  int rc = 0;
  bool written = fd >= 0 && fchmod (fd, 0644) == 0 && write (fd, text, (size_t) len) == len;
  int e = errno;
  if (fd >= 0 && close (fd) < 0 && written)
    written = false, e = errno;
  if (!written || rename (tmp, path) < 0)
    {
      rc = securer_error_set (err, written ? errno : e, "write pid file %s", path);
      if (fd >= 0)
        unlink (tmp);
    }
  free (tmp);
  return rc;
}

/* --preserve-fds N: a count of descriptors after stdio, refused unless it
 * is one (a misread count would hand the container more than meant). */
static int
parse_preserve_fds (const char *text, unsigned *out, securer_err_t *err)
{
  if (text == NULL)
    return 0;
  char *end;
  errno = 0;
  unsigned long n = strtoul (text, &end, 10);
  if (*text < '0' || *text > '9' || *end != '\0' || errno != 0 || n > 65536)
    return securer_error_set (err, EINVAL, "--preserve-fds \"%s\": not a count of descriptors",
                              text);
  *out = (unsigned) n;
  return 0;
}

static int
connect_console (const char *path, securer_err_t *err)
{
  if (path == NULL)
    return -1;
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof a.sun_path)
    return securer_error_set (err, ENAMETOOLONG, "--console-socket %s", path);
  strcpy (a.sun_path, path);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *) &a, sizeof a) < 0)
    {
      securer_error_set (err, errno, "connect to --console-socket %s", path);
      if (fd >= 0)
        close (fd);
      return -2;
    }
  return fd;
}

static void
remove_state_dir (const char *dir)
{
  static const char *const files[] = { "state.json", "state.json.tmp", "exec.fifo", "config.json", NULL };
  for (size_t i = 0; files[i]; i++)
    {
      char *p = malloc (strlen (dir) + strlen (files[i]) + 2);
      sprintf (p, "%s/%s", dir, files[i]);
      unlink (p);
      free (p);
    }
  rmdir (dir);
}

static char *
now_rfc3339 (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r (&ts.tv_sec, &tm);
  char buf[64], out[80];
  strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (out, sizeof out, "%s.%09ldZ", buf, ts.tv_nsec);
  return strdup (out);
}

/* ---- create / run ------------------------------------------------------- */
struct create_args {
  const char *bundle, *pid_file, *console_socket, *preserve_fds;
  bool no_pivot, no_new_keyring, detach, keep;
  int relay_socket;        /* run: our own console socket for a terminal, or -1 */
  bool terminal;           /* out: process.terminal */
};

/* The container's end of the report socket, renumbered at or above the
 * process's RLIMIT_NOFILE hard limit: the filter allows sendmsg on that
 * number, and once exec has closed it (close-on-exec) the container can
 * never own a descriptor with that number again. */
static int
report_fd_number (const struct oci_spec *s, int fd)
{
  rlim_t want = 1024;
  for (size_t i = 0; i < s->proc.n_rlimits; i++)
    if (s->proc.rlimits[i].resource == RLIMIT_NOFILE)
      want = s->proc.rlimits[i].hard;
  struct rlimit mine;
  if (getrlimit (RLIMIT_NOFILE, &mine) == 0 && mine.rlim_cur < mine.rlim_max)
    {
      mine.rlim_cur = mine.rlim_max;
      setrlimit (RLIMIT_NOFILE, &mine);
    }
  if (want >= 1u << 20)
    return fd;
  int high = fcntl (fd, F_DUPFD_CLOEXEC, (int) want);
  if (high < 0)
    return fd;
  close (fd);
  return high;
}

static char *
saved_config_path (const struct oci_state *st)
{
  char *p = malloc (strlen (st->dir) + sizeof "/config.json");
  sprintf (p, "%s/config.json", st->dir);
  return p;
}

/* The spec as create read it, kept for exec, start and delete. */
static int
save_config (const struct oci_state *st, const struct oci_spec *s, securer_err_t *err)
{
  char *path = saved_config_path (st);
  int rc = json_dump_file (s->json, path, JSON_COMPACT);
  if (rc < 0)
    securer_error_set (err, errno, "save %s", path);
  free (path);
  return rc;
}

static int
load_saved_spec (const struct oci_state *st, struct oci_spec **out, securer_err_t *err)
{
  char *path = saved_config_path (st);
  int rc = oci_spec_load_saved (path, st->bundle, out, err);
  free (path);
  return rc;
}

/* What the spec asks for that is accepted without effect, as runc does. */
static void
warn_process (const struct oci_process *p, const char *where)
{
  char *w = oci_process_warning (p, where);
  if (w)
    logmsg ("warning", "%s", w);
  free (w);
}

static void
warn_spec (const struct oci_spec *s)
{
  for (size_t i = 0; i < s->n_warnings; i++)
    logmsg ("warning", "%s", s->warnings[i]);
  warn_process (&s->proc, "process");
}

/* Everything of create; with wait_start the process waits on the fifo.
 * On success *st is the saved state (the caller frees it). */
static int
do_create (const char *id, struct create_args *a, bool wait_start, struct oci_state **st_out,
           securer_err_t *err)
{
  *st_out = NULL;
  if (oci_id_check (id, err) < 0)
    return -1;
  if (a->no_pivot)
    {
      securer_error_set (err, 0, "--no-pivot: securer-runc always pivot_roots (the old root is "
                                 "detached; chroot alone would leave it reachable)");
      return -1;
    }
  if (mkdir_p (g.root, 0700) < 0)
    return securer_error_set (err, errno, "create state root %s", g.root);
  char *dir = state_dir (id);
  if (mkdir (dir, 0700) < 0)
    {
      int e = errno;
      free (dir);
      if (e == EEXIST)
        return securer_error_set (err, 0, "container with id \"%s\" already exists", id);
      return securer_error_set (err, e, "create state directory");
    }
  struct oci_spec *s = NULL;
  struct securer_policy *sc = NULL;
  struct securer_seccomp_prog *prog = NULL;
  struct oci_layer *layer = NULL;
  int fifo = -1, console = -1;
  int rc = -1;
  int report[2] = { -1, -1 }, netsock[2] = { -1, -1 }, pidfd = -1;
  struct securer_policy *netpol = NULL;
  if (oci_spec_load (a->bundle ? a->bundle : ".", &s, err) < 0 || oci_spec_seccomp_policy (s, &sc, err) < 0
      || oci_network_policy (s, &netpol, err) < 0 || oci_network_env (s, err) < 0)
    goto out;
  if (netpol != NULL && socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, netsock) < 0)
    {
      securer_error_set (err, errno, "socketpair for network-allow");
      goto out;
    }
  warn_spec (s);
  if (s->report_denials)
    {
      if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report) < 0)
        {
          securer_error_set (err, errno, "socketpair for report-denials");
          goto out;
        }
      report[1] = report_fd_number (s, report[1]);
    }
  if (s->report_denials ? oci_seccomp_prepare_reporting (sc, report[1], &prog, err) < 0
                        : oci_seccomp_prepare (sc, &prog, err) < 0)
    goto out;
  if (s->securer_policy && oci_layer_load (s->securer_policy, &layer, err) < 0)
    goto out;
  if (parse_preserve_fds (a->preserve_fds, &s->proc.preserve_fds, err) < 0)
    goto out;
  struct oci_state *st = calloc (1, sizeof *st);
  st->id = strdup (id);
  st->dir = dir;
  dir = NULL;
  st->bundle = strdup (s->bundle);
  st->created = now_rfc3339 ();
  st->annotations = json_incref (json_object_get (s->json, "annotations"));
  /* Saved before anything is made, and again with each thing made, so a
   * create killed half-way leaves what `delete --force` needs. */
  if (oci_state_save (st, err) < 0 || save_config (st, s, err) < 0
      || oci_cgroup_create (s, g.systemd_cgroup, id, &st->cg, err) < 0
      || oci_state_save (st, err) < 0)
    goto fail;
  if (wait_start)
    {
      char *fifo_path = malloc (strlen (st->dir) + sizeof "/exec.fifo");
      sprintf (fifo_path, "%s/exec.fifo", st->dir);
      if (mkfifo (fifo_path, 0600) < 0 || (fifo = open (fifo_path, O_RDWR | O_CLOEXEC)) < 0)
        securer_error_set (err, errno, "exec fifo %s", fifo_path);
      free (fifo_path);
      if (fifo < 0)
        goto fail;
    }
  console = connect_console (a->console_socket, err);
  if (console == -2)
    goto fail;
  a->terminal = s->proc.terminal;
  if (console < 0 && s->proc.terminal && a->relay_socket >= 0)
    console = dup (a->relay_socket);
  if (s->proc.terminal && console < 0 && wait_start)
    {
      securer_error_set (err, 0, "process.terminal is set: --console-socket is required");
      goto fail;
    }
  struct oci_launch l = { .id = id, .spec = s, .cg = st->cg, .console_fd = console, .fifo_fd = fifo,
                          .seccomp = prog, .seccomp_last_syscall = s->seccomp_last_syscall,
                          .layer = layer, .notify_fd = report[1], .proxy_fd = netsock[1],
                          .keep_keyring = a->no_new_keyring };
  if (oci_launch_container (&l, st->cg, id, &st->pid, &st->start_time, err) < 0)
    goto fail;
  if (oci_state_save (st, err) < 0 || write_pid_file (a->pid_file, st->pid, err) < 0
      || (s->report_denials
          && oci_reporter_start (prog, report[0], s->report_denials, id, err) < 0)
      || (netpol != NULL
          && ((pidfd = (int) syscall (SYS_pidfd_open, st->pid, 0)) < 0
                ? securer_error_set (err, errno, "network-allow: pidfd of the container")
                : oci_netproxy_start (netpol, netsock[0], pidfd, err))
               < 0))
    {
      kill (st->pid, SIGKILL);
      goto fail;
    }
  *st_out = st;
  rc = 0;
  goto out;
fail:
  oci_cgroup_destroy (st->cg, NULL);
  remove_state_dir (st->dir);
  oci_state_free (st);
out:
  if (dir)
    remove_state_dir (dir);
  for (int k = 0; k < 2; k++)
    {
      if (report[k] >= 0)
        close (report[k]);
      if (netsock[k] >= 0)
        close (netsock[k]);
    }
  if (pidfd >= 0)
    close (pidfd);
  securer_policy_free (netpol);
  if (fifo >= 0)
    close (fifo);
  if (console >= 0)
    close (console);
  free (dir);
  oci_layer_free (layer);
  securer_seccomp_free (prog);
  securer_policy_free (sc);
  oci_spec_free (s);
  return rc;
}

static int
cmd_create (int argc, char **argv)
{
  struct create_args a = { .relay_socket = -1 };
  const struct opt opts[] = {
    OPT_ARG ("bundle", 'b', &a.bundle), OPT_ARG ("pid-file", 0, &a.pid_file),
    OPT_ARG ("console-socket", 0, &a.console_socket),
    OPT_ARG ("preserve-fds", 0, &a.preserve_fds), OPT_FLAG ("no-pivot", 0, &a.no_pivot),
    OPT_FLAG ("no-new-keyring", 0, &a.no_new_keyring), OPT_END,
  };
  int i = 1;
  if (parse_opts ("create", argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc - 1)
    return usage_error ("create", "expects exactly one container id");
  securer_err_t err = NULL;
  struct oci_state *st;
  if (do_create (argv[i], &a, true, &st, &err) < 0)
    return fail (&err);
  oci_state_free (st);
  return 0;
}

static struct oci_state *
load_state (const char *id, securer_err_t *err)
{
  struct oci_state *st;
  return oci_state_load (g.root, id, &st, err) < 0 ? NULL : st;
}

static int
state_json_text (const struct oci_state *st, char **out)
{
  json_t *j = oci_state_json (st);
  *out = json_dumps (j, JSON_COMPACT);
  json_decref (j);
  return 0;
}

/* Hooks of a container whose bundle is still there (poststart, poststop). */
static int
run_hooks (const struct oci_state *st, enum oci_hook_kind k, securer_err_t *err)
{
  struct oci_spec *s = NULL;
  securer_err_t ignore = NULL;
  if (load_saved_spec (st, &s, &ignore) < 0)
    {
      securer_error_free (&ignore);
      return 0;
    }
  char *state;
  state_json_text (st, &state);
  int rc = oci_hooks_run (s, k, state, err);
  free (state);
  oci_spec_free (s);
  return rc;
}

static int
do_start (struct oci_state *st, securer_err_t *err)
{
  enum oci_status s = oci_state_status (st);
  if (s != OCI_CREATED)
    return securer_error_set (err, 0, "cannot start a container that is %s", oci_status_name (s));
  char *path = malloc (strlen (st->dir) + sizeof "/exec.fifo");
  sprintf (path, "%s/exec.fifo", st->dir);
  /* Non-blocking: with no reader (the process died) this is ENXIO rather
   * than a hang. */
  int fd = open (path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  int rc = 0;
  if (fd < 0 || write (fd, "s", 1) != 1)
    rc = securer_error_set (err, errno, "release the container (exec fifo)");
  if (fd >= 0)
    close (fd);
  unlink (path);
  free (path);
  if (rc == 0)
    rc = run_hooks (st, OCI_HOOK_POSTSTART, err);
  return rc;
}

static int
cmd_start (int argc, char **argv)
{
  const struct opt opts[] = { OPT_END };
  int i = 1;
  if (parse_opts ("start", argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc - 1)
    return usage_error ("start", "expects exactly one container id");
  securer_err_t err = NULL;
  struct oci_state *st = load_state (argv[i], &err);
  if (st == NULL || do_start (st, &err) < 0)
    {
      oci_state_free (st);
      return fail (&err);
    }
  oci_state_free (st);
  return 0;
}

static int
parse_signal (const char *s)
{
  static const struct { const char *name; int sig; } sigs[] = {
    { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ILL", SIGILL }, { "TRAP", SIGTRAP },
    { "ABRT", SIGABRT }, { "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL }, { "USR1", SIGUSR1 },
    { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 }, { "PIPE", SIGPIPE }, { "ALRM", SIGALRM },
    { "TERM", SIGTERM }, { "CHLD", SIGCHLD }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
    { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU }, { "URG", SIGURG },
    { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
    { "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR }, { "SYS", SIGSYS },
  };
  char *end;
  long n = strtol (s, &end, 10);
  if (*s && *end == '\0')
    return n > 0 && n < NSIG ? (int) n : -1;
  if (strncasecmp (s, "SIG", 3) == 0)
    s += 3;
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    if (strcasecmp (s, sigs[i].name) == 0)
      return sigs[i].sig;
  return -1;
}

static int
kill_container (const struct oci_state *st, int sig, bool all, securer_err_t *err)
{
  if (all)
    {
      /* Frozen, the listed processes cannot exit and have their pids
       * reused by someone else's before the signal reaches them. */
      bool froze = !oci_cgroup_frozen (st->cg) && oci_cgroup_freeze (st->cg, true, NULL) == 0;
      size_t n;
      pid_t *pids = oci_cgroup_pids (st->cg, &n);
      for (size_t k = 0; k < n; k++)
        kill (pids[k], sig);
      free (pids);
      if (froze)
        oci_cgroup_freeze (st->cg, false, NULL);
    }
  if (oci_state_status (st) == OCI_STOPPED)
    return all ? 0 : securer_error_set (err, ESRCH, "container \"%s\" is not running", st->id);
  /* A pidfd names one process for good: once start_time matches after
   * it is open, the signal cannot reach a process that reused the pid. */
  int pfd = (int) syscall (SYS_pidfd_open, st->pid, 0);
  if (pfd < 0 || oci_proc_start_time (st->pid) != st->start_time)
    {
      if (pfd >= 0)
        close (pfd);
      return all ? 0 : securer_error_set (err, ESRCH, "container \"%s\" is not running", st->id);
    }
  int rc = (int) syscall (SYS_pidfd_send_signal, pfd, sig, NULL, 0);
  int e = errno;
  close (pfd);
  if (rc < 0)
    return securer_error_set (err, e, "kill %d", (int) st->pid);
  return 0;
}

static int
cmd_kill (int argc, char **argv)
{
  bool all = false;
  const char *pid = NULL;
  const struct opt opts[] = { OPT_FLAG ("all", 'a', &all), OPT_ARG ("pid", 'p', &pid),
                              OPT_END };
  int i = 1;
  if (parse_opts ("kill", argc, argv, &i, opts) != 0)
    return 1;
  if (pid)
    return usage_error ("kill", "--pid is not supported");
  if (i != argc - 1 && i != argc - 2)
    return usage_error ("kill", "expects a container id and an optional signal");
  int sig = i == argc - 2 ? parse_signal (argv[i + 1]) : SIGTERM;
  if (sig < 0)
    return usage_error ("kill", "unknown signal \"%s\"", argv[i + 1]);
  securer_err_t err = NULL;
  struct oci_state *st = load_state (argv[i], &err);
  if (st == NULL || kill_container (st, sig, all, &err) < 0)
    {
      oci_state_free (st);
      return fail (&err);
    }
  oci_state_free (st);
  return 0;
}

static int
do_delete (struct oci_state *st, bool force, securer_err_t *err)
{
  enum oci_status s = oci_state_status (st);
  if (s != OCI_STOPPED)
    {
      if (!force)
        return securer_error_set (err, 0, "cannot delete container \"%s\" that is %s (use --force)",
                                  st->id, oci_status_name (s));
      kill_container (st, SIGKILL, true, NULL);
      /* A frozen process dies only once thawed. */
      if (s == OCI_PAUSED)
        oci_cgroup_freeze (st->cg, false, NULL);
      /* Reaped by the engine, not by us: wait until it is gone. */
      for (int t = 0; t < 500 && oci_state_status (st) != OCI_STOPPED; t++)
        {
          struct timespec ts = { 0, 10 * 1000 * 1000 };
          nanosleep (&ts, NULL);
        }
    }
  securer_err_t hook_err = NULL;
  if (run_hooks (st, OCI_HOOK_POSTSTOP, &hook_err) < 0)
    {
      /* runc only warns: the container is gone either way. */
      logmsg ("warning", "%s", securer_error_message (hook_err));
      securer_error_free (&hook_err);
    }
  if (oci_cgroup_destroy (st->cg, err) < 0)
    return -1;
  remove_state_dir (st->dir);
  return 0;
}

static int
cmd_delete (int argc, char **argv)
{
  bool force = false;
  const struct opt opts[] = { OPT_FLAG ("force", 'f', &force), OPT_END };
  int i = 1;
  if (parse_opts ("delete", argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc - 1)
    return usage_error ("delete", "expects exactly one container id");
  securer_err_t err = NULL;
  struct oci_state *st = load_state (argv[i], &err);
  if (st == NULL)
    {
      /* As runc: forcing the removal of what is not there succeeds; a
       * directory without a readable state is what a create killed before
       * its first save leaves. */
      if (force && securer_error_errno (err) == ENOENT)
        {
          securer_error_free (&err);
          if (oci_id_check (argv[i], NULL) == 0)
            {
              char *dir = state_dir (argv[i]);
              remove_state_dir (dir);
              free (dir);
            }
          return 0;
        }
      return fail (&err);
    }
  int rc = do_delete (st, force, &err);
  oci_state_free (st);
  return rc < 0 ? fail (&err) : 0;
}

static int
cmd_state (int argc, char **argv)
{
  const struct opt opts[] = { OPT_END };
  int i = 1;
  if (parse_opts ("state", argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc - 1)
    return usage_error ("state", "expects exactly one container id");
  securer_err_t err = NULL;
  struct oci_state *st = load_state (argv[i], &err);
  if (st == NULL)
    return fail (&err);
  json_t *j = oci_state_json (st);
  char *s = json_dumps (j, JSON_INDENT (2));
  printf ("%s\n", s);
  free (s);
  json_decref (j);
  oci_state_free (st);
  return 0;
}

static int
cmd_list (int argc, char **argv)
{
  const char *format = "table";
  bool quiet = false;
  const struct opt opts[] = { OPT_ARG ("format", 'f', &format), OPT_FLAG ("quiet", 'q', &quiet),
                              OPT_END };
  int i = 1;
  if (parse_opts ("list", argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc)
    return usage_error ("list", "takes no arguments");
  bool json = strcmp (format, "json") == 0;
  if (!json && strcmp (format, "table") != 0)
    return usage_error ("list", "--format must be table or json");
  json_t *arr = json_array ();
  DIR *d = opendir (g.root);
  if (!json && !quiet)
    printf ("%-20s %-8s %-10s %-40s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED");
  for (struct dirent *e; d && (e = readdir (d));)
    {
      if (e->d_name[0] == '.')
        continue;
      struct oci_state *st;
      securer_err_t err = NULL;
      if (oci_state_load (g.root, e->d_name, &st, &err) < 0)
        {
          securer_error_free (&err);
          continue;
        }
      json_t *j = oci_state_json (st);
      if (json)
        json_array_append (arr, j);
      else if (quiet)
        printf ("%s\n", st->id);
      else
        printf ("%-20s %-8lld %-10s %-40s %s\n", st->id,
                (long long) json_integer_value (json_object_get (j, "pid")),
                json_string_value (json_object_get (j, "status")), st->bundle, st->created);
      json_decref (j);
      oci_state_free (st);
    }
  if (d)
    closedir (d);
  if (json)
    {
      char *s = json_dumps (arr, JSON_COMPACT);
      printf ("%s\n", s);
      free (s);
    }
  json_decref (arr);
  return 0;
}

/* Waits for the container's first process, passing signals on to it, and
 * returns the exit status runc reports (code, or 128 + signal). */
static volatile sig_atomic_t forward_sig;
static void
on_signal (int sig)
{
  forward_sig = sig;
}

static int
wait_forwarding (pid_t pid)
{
  static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };
  struct sigaction sa = { .sa_handler = on_signal };
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction (sigs[i], &sa, NULL);
  int status;
  for (;;)
    {
      pid_t r = waitpid (pid, &status, 0);
      if (r == pid)
        break;
      if (r < 0 && errno != EINTR)
        return 255;
      if (forward_sig)
        {
          kill (pid, forward_sig);
          forward_sig = 0;
        }
    }
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

/* run with a terminal and no --console-socket: the pty's master comes to
 * us, and we relay it to our own stdin/stdout (raw when a terminal) until
 * the process exits, as runc does. */
static int
recv_master (int sock)
{
  char byte;
  struct iovec iov = { &byte, 1 };
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = sizeof u.buf };
  if (recvmsg (sock, &msg, MSG_CMSG_CLOEXEC) <= 0)
    return -1;
  struct cmsghdr *c = CMSG_FIRSTHDR (&msg);
  if (c == NULL || c->cmsg_type != SCM_RIGHTS)
    return -1;
  int fd;
  memcpy (&fd, CMSG_DATA (c), sizeof fd);
  return fd;
}

static bool
copy_once (int from, int to)
{
  char buf[4096];
  ssize_t n = read (from, buf, sizeof buf);
  if (n <= 0)
    return false;
  for (ssize_t off = 0; off < n;)
    {
      ssize_t w = write (to, buf + off, (size_t) (n - off));
      if (w <= 0)
        return false;
      off += w;
    }
  return true;
}

static int
relay_terminal (int master, pid_t pid)
{
  struct termios saved;
  bool raw = isatty (0) && tcgetattr (0, &saved) == 0;
  if (raw)
    {
      struct termios t = saved;
      cfmakeraw (&t);
      tcsetattr (0, TCSANOW, &t);
      struct winsize ws;
      if (ioctl (0, TIOCGWINSZ, &ws) == 0)
        ioctl (master, TIOCSWINSZ, &ws);
    }
  bool in_open = true;
  int status = 0;
  for (;;)
    {
      struct pollfd p[2] = { { master, POLLIN, 0 }, { in_open ? 0 : -1, POLLIN, 0 } };
      int r = poll (p, 2, 100);
      if (r > 0 && (p[0].revents & POLLIN) && !copy_once (master, 1))
        p[0].revents |= POLLHUP;
      if (r > 0 && (p[1].revents & (POLLIN | POLLHUP)) && !copy_once (0, master))
        in_open = false;
      pid_t w = waitpid (pid, &status, WNOHANG);
      if (w == pid || (r > 0 && (p[0].revents & (POLLHUP | POLLERR)) && waitpid (pid, &status, 0) == pid))
        break;
    }
  /* What the process wrote last. */
  while (fcntl (master, F_SETFL, O_NONBLOCK) == 0 && copy_once (master, 1))
    ;
  if (raw)
    tcsetattr (0, TCSANOW, &saved);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static int
cmd_run (int argc, char **argv)
{
  struct create_args a = { .relay_socket = -1 };
  const struct opt opts[] = {
    OPT_ARG ("bundle", 'b', &a.bundle), OPT_ARG ("pid-file", 0, &a.pid_file),
    OPT_ARG ("console-socket", 0, &a.console_socket),
    OPT_ARG ("preserve-fds", 0, &a.preserve_fds), OPT_FLAG ("no-pivot", 0, &a.no_pivot),
    OPT_FLAG ("no-new-keyring", 0, &a.no_new_keyring), OPT_FLAG ("detach", 'd', &a.detach),
    OPT_FLAG ("keep", 0, &a.keep), OPT_END,
  };
  int i = 1;
  if (parse_opts ("run", argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc - 1)
    return usage_error ("run", "expects exactly one container id");
  securer_err_t err = NULL;
  struct oci_state *st;
  int relay[2] = { -1, -1 };
  if (!a.detach && a.console_socket == NULL
      && socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, relay) == 0)
    a.relay_socket = relay[1];
  /* Detached, the process must outlive us: it goes through the fifo as
   * with create + start.  Attached, it is our child and starts at once. */
  int created = do_create (argv[i], &a, a.detach, &st, &err);
  if (relay[1] >= 0)
    close (relay[1]);
  if (created < 0)
    {
      if (relay[0] >= 0)
        close (relay[0]);
      return fail (&err);
    }
  if (a.detach)
    {
      int rc = do_start (st, &err);
      oci_state_free (st);
      return rc < 0 ? fail (&err) : 0;
    }
  if (run_hooks (st, OCI_HOOK_POSTSTART, &err) < 0)
    {
      kill (st->pid, SIGKILL);
      waitpid (st->pid, NULL, 0);
      do_delete (st, true, NULL);
      oci_state_free (st);
      return fail (&err);
    }
  int master = a.terminal && relay[0] >= 0 ? recv_master (relay[0]) : -1;
  if (relay[0] >= 0)
    close (relay[0]);
  int code = master >= 0 ? relay_terminal (master, st->pid) : wait_forwarding (st->pid);
  if (master >= 0)
    close (master);
  if (!a.keep && do_delete (st, true, &err) < 0)
    logmsg ("warning", "%s", securer_error_message (err));
  securer_error_free (&err);
  oci_state_free (st);
  return code;
}

/* ---- exec --------------------------------------------------------------- */
static int
cmd_exec (int argc, char **argv)
{
  const char *process = NULL, *pid_file = NULL, *console_socket = NULL, *cwd = NULL, *user = NULL;
  const char *preserve = NULL, *label = NULL, *apparmor = NULL;
  bool detach = false, tty = false, nnp = false;
  struct optlist env = { .n = 0 };
  const struct opt opts[] = {
    OPT_ARG ("process", 'p', &process), OPT_ARG ("pid-file", 0, &pid_file),
    OPT_ARG ("console-socket", 0, &console_socket), OPT_ARG ("cwd", 0, &cwd),
    OPT_ARG ("user", 'u', &user), OPT_LIST ("env", 'e', &env),
    OPT_ARG ("preserve-fds", 0, &preserve), OPT_ARG ("process-label", 0, &label),
    OPT_ARG ("apparmor", 0, &apparmor), OPT_FLAG ("detach", 'd', &detach),
    OPT_FLAG ("tty", 't', &tty), OPT_FLAG ("no-new-privs", 0, &nnp),
    OPT_END,
  };
  int i = 1;
  if (parse_opts ("exec", argc, argv, &i, opts) != 0)
    return 1;
  if (i < argc && strcmp (argv[i], "--") == 0)
    i++;
  if (i >= argc)
    return usage_error ("exec", "expects a container id");
  if ((label && *label) || (apparmor && *apparmor))
    return usage_error ("exec", "--process-label and --apparmor: securer-runc does not apply LSM labels");
  const char *id = argv[i++];
  securer_err_t err = NULL;
  struct oci_state *st = load_state (id, &err);
  struct oci_spec *s = NULL;
  struct securer_policy *sc = NULL;
  struct securer_seccomp_prog *prog = NULL;
  struct oci_layer *layer = NULL;
  struct oci_process proc = { 0 };
  int console = -1, rc = 1;
  if (st == NULL)
    return fail (&err);
  if (oci_state_status (st) != OCI_RUNNING)
    {
      securer_error_set (&err, 0, "cannot exec in a container that is %s",
                         oci_status_name (oci_state_status (st)));
      goto out;
    }
  if (load_saved_spec (st, &s, &err) < 0 || oci_spec_seccomp_policy (s, &sc, &err) < 0
      || oci_seccomp_prepare (sc, &prog, &err) < 0
      || (s->securer_policy && oci_layer_load (s->securer_policy, &layer, &err) < 0))
    goto out;
  json_t *pj;
  if (process)
    {
      json_error_t je;
      pj = json_load_file (process, 0, &je);
      if (pj == NULL)
        {
          securer_error_set (&err, 0, "--process %s:%d: %s", process, je.line, je.text);
          goto out;
        }
    }
  else
    {
      if (i >= argc)
        {
          securer_error_set (&err, 0, "exec: no command given (and no --process)");
          goto out;
        }
      pj = json_deep_copy (json_object_get (s->json, "process"));
      json_t *args = json_array ();
      for (; i < argc; i++)
        json_array_append_new (args, json_string (argv[i]));
      json_object_set_new (pj, "args", args);
      json_t *e = json_object_get (pj, "env");
      if (!json_is_array (e))
        json_object_set_new (pj, "env", e = json_array ());
      for (size_t k = 0; k < env.n; k++)
        json_array_append_new (e, json_string (env.v[k]));
      if (cwd)
        json_object_set_new (pj, "cwd", json_string (cwd));
      json_object_set_new (pj, "terminal", json_boolean (tty));
      if (nnp)
        json_object_set_new (pj, "noNewPrivileges", json_true ());
      if (user)
        {
          unsigned uid = 0, gid = 0;
          int k = sscanf (user, "%u:%u", &uid, &gid);
          if (k < 1)
            {
              json_decref (pj);
              securer_error_set (&err, 0, "--user \"%s\": expected UID[:GID]", user);
              goto out;
            }
          json_object_set_new (pj, "user", json_pack ("{s:i, s:i}", "uid", uid, "gid", k == 2 ? gid : 0));
        }
    }
  int prc = oci_process_parse (pj, process ? "--process" : "process", &proc, &err);
  json_decref (pj);
  if (prc < 0)
    goto out;
  warn_process (&proc, process ? "--process" : "process");
  if (parse_preserve_fds (preserve, &proc.preserve_fds, &err) < 0)
    goto out;
  console = connect_console (console_socket, &err);
  if (console == -2)
    goto out;
  if (proc.terminal && console < 0)
    {
      securer_error_set (&err, 0, "a terminal needs --console-socket");
      goto out;
    }
  struct oci_exec_opts eo = { .container_pid = st->pid, .start_time = st->start_time, .cg = st->cg, .proc = &proc, .seccomp = prog,
                              .seccomp_last_syscall = s->seccomp_last_syscall,
                              .layer = layer,
                              .console_fd = console };
  pid_t pid;
  if (oci_launch_exec (&eo, &pid, &err) < 0)
    goto out;
  if (write_pid_file (pid_file, pid, &err) < 0)
    goto out;
  rc = detach ? 0 : wait_forwarding (pid);
out:
  if (console >= 0)
    close (console);
  oci_process_clear (&proc);
  oci_layer_free (layer);
  securer_seccomp_free (prog);
  securer_policy_free (sc);
  oci_spec_free (s);
  oci_state_free (st);
  return err ? fail (&err) : rc;
}

/* ---- pause / resume / ps ------------------------------------------------ */
static int
pause_resume (int argc, char **argv, bool freeze)
{
  const char *cmd = freeze ? "pause" : "resume";
  const struct opt opts[] = { OPT_END };
  int i = 1;
  if (parse_opts (cmd, argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc - 1)
    return usage_error (cmd, "expects exactly one container id");
  securer_err_t err = NULL;
  struct oci_state *st = load_state (argv[i], &err);
  if (st == NULL)
    return fail (&err);
  enum oci_status s = oci_state_status (st);
  if (s != (freeze ? OCI_RUNNING : OCI_PAUSED))
    securer_error_set (&err, 0, "cannot %s a container that is %s", cmd, oci_status_name (s));
  else
    oci_cgroup_freeze (st->cg, freeze, &err);
  oci_state_free (st);
  return err ? fail (&err) : 0;
}

static int
cmd_pause (int argc, char **argv)
{
  return pause_resume (argc, argv, true);
}

static int
cmd_resume (int argc, char **argv)
{
  return pause_resume (argc, argv, false);
}

/* ---- update -------------------------------------------------------------- */
/* A size as runc reads one: bytes, or a number with k, m, g, t or p
 * (binary multiples; "kb", "kib" too), or -1 for unlimited. */
static bool
parse_size (const char *text, int64_t *out)
{
  if (strcmp (text, "-1") == 0)
    {
      *out = -1;
      return true;
    }
  if (!isdigit ((unsigned char) text[0]))
    return false;
  char *end;
  errno = 0;
  unsigned long long n = strtoull (text, &end, 10);
  if (errno)
    return false;
  int shift = 0;
  const char *u = end, *units = "kmgtp", *p;
  if (*u == ' ')
    u++;
  if (*u && (p = strchr (units, tolower ((unsigned char) *u))) != NULL)
    {
      shift = 10 * (int) (p - units + 1);
      u++;
      if (tolower ((unsigned char) *u) == 'i')
        u++;
    }
  if (tolower ((unsigned char) *u) == 'b')
    u++;
  if (*u || n > ((unsigned long long) INT64_MAX >> shift))
    return false;
  *out = (int64_t) (n << shift);
  return true;
}

static bool
parse_int (const char *text, bool is_unsigned, int64_t *out)
{
  char *end;
  errno = 0;
  long long n = strtoll (text, &end, 10);
  if (errno || end == text || *end || (is_unsigned && n < 0))
    return false;
  *out = n;
  return true;
}

/* runc's update flags, each the LinuxResources field it sets. */
enum upd_kind { UPD_SIZE, UPD_INT, UPD_UINT, UPD_STR };
static const struct {
  const char *flag, *section, *key;
  enum upd_kind kind;
} upd_flags[] = {
  { "memory", "memory", "limit", UPD_SIZE },
  { "memory-swap", "memory", "swap", UPD_SIZE },
  { "memory-reservation", "memory", "reservation", UPD_SIZE },
  { "kernel-memory", "memory", "kernel", UPD_SIZE },
  { "kernel-memory-tcp", "memory", "kernelTCP", UPD_SIZE },
  { "cpu-quota", "cpu", "quota", UPD_INT },
  { "cpu-period", "cpu", "period", UPD_UINT },
  { "cpu-share", "cpu", "shares", UPD_UINT },
  { "cpu-shares", "cpu", "shares", UPD_UINT },
  { "cpu-rt-period", "cpu", "realtimePeriod", UPD_UINT },
  { "cpu-rt-runtime", "cpu", "realtimeRuntime", UPD_INT },
  { "cpuset-cpus", "cpu", "cpus", UPD_STR },
  { "cpuset-mems", "cpu", "mems", UPD_STR },
  { "pids-limit", "pids", "limit", UPD_INT },
  { "blkio-weight", "blockIO", "weight", UPD_UINT },
};
#define N_UPD (sizeof upd_flags / sizeof upd_flags[0])

/* The flags given, as the LinuxResources object they amount to. */
static json_t *
flags_resources (const char *const *vals, securer_err_t *err)
{
  json_t *r = json_object ();
  for (size_t k = 0; k < N_UPD; k++)
    {
      const char *v = vals[k];
      if (v == NULL)
        continue;
      int64_t n = 0;
      json_t *jv;
      bool ok = true;
      switch (upd_flags[k].kind)
        {
        case UPD_SIZE: ok = parse_size (v, &n); break;
        case UPD_INT: ok = parse_int (v, false, &n); break;
        case UPD_UINT: ok = parse_int (v, true, &n); break;
        case UPD_STR: break;
        }
      if (!ok)
        {
          securer_error_set (err, 0, "--%s: \"%s\" is not %s", upd_flags[k].flag, v,
                             upd_flags[k].kind == UPD_SIZE ? "a size (bytes, or with k, m, g, t or p; -1: unlimited)"
                             : upd_flags[k].kind == UPD_UINT ? "a non-negative integer"
                                                             : "an integer");
          json_decref (r);
          return NULL;
        }
      jv = upd_flags[k].kind == UPD_STR ? json_string (v) : json_integer (n);
      json_t *sec = json_object_get (r, upd_flags[k].section);
      if (sec == NULL)
        json_object_set_new (r, upd_flags[k].section, sec = json_object ());
      json_object_set_new (sec, upd_flags[k].key, jv);
    }
  return r;
}

static json_t *
read_resources_file (const char *path, securer_err_t *err)
{
  json_error_t je;
  json_t *j = strcmp (path, "-") == 0 ? json_loadf (stdin, 0, &je) : json_load_file (path, 0, &je);
  if (j == NULL)
    securer_error_set (err, 0, "--resources %s:%d: %s", strcmp (path, "-") == 0 ? "(stdin)" : path,
                       je.line, je.text);
  return j;
}

/* runc update: a running, created or paused container's cgroup limits
 * changed in place (the kubelet's UpdateContainerResources).  Device rules
 * are the container's from create: engines send them again unchanged,
 * which is accepted; a change is refused. */
static int
cmd_update (int argc, char **argv)
{
  const char *resources = NULL, *vals[N_UPD] = { NULL }, *l3 = NULL, *mbw = NULL;
  struct opt opts[N_UPD + 4];
  size_t o = 0;
  opts[o++] = (struct opt) OPT_ARG ("resources", 'r', &resources);
  opts[o++] = (struct opt) OPT_ARG ("l3-cache-schema", 0, &l3);
  opts[o++] = (struct opt) OPT_ARG ("mem-bw-schema", 0, &mbw);
  for (size_t k = 0; k < N_UPD; k++)
    opts[o++] = (struct opt) OPT_ARG (upd_flags[k].flag, 0, &vals[k]);
  opts[o] = (struct opt) OPT_END;
  int i = 1;
  if (parse_opts ("update", argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc - 1)
    return usage_error ("update", "expects exactly one container id");
  if (l3 || mbw)
    return usage_error ("update", "--%s: linux.intelRdt is not supported by securer-runc",
                        l3 ? "l3-cache-schema" : "mem-bw-schema");
  bool any_flag = false;
  for (size_t k = 0; k < N_UPD; k++)
    any_flag = any_flag || vals[k];
  if (resources && any_flag)
    return usage_error ("update", "--resources and the resource flags cannot be combined");
  securer_err_t err = NULL;
  struct oci_state *st = load_state (argv[i], &err);
  if (st == NULL)
    return fail (&err);
  struct oci_spec *res = NULL, *saved = NULL;
  json_t *j = NULL;
  enum oci_status status = oci_state_status (st);
  if (status == OCI_STOPPED || status == OCI_CREATING)
    {
      securer_error_set (&err, 0, "container \"%s\" is not running (%s)", st->id, oci_status_name (status));
      goto out;
    }
  j = resources ? read_resources_file (resources, &err) : flags_resources (vals, &err);
  if (j == NULL || oci_resources_parse (j, &res, &err) < 0)
    goto out;
  for (size_t w = 0; w < res->n_warnings; w++)
    logmsg ("warning", "%s", res->warnings[w]);
  if (res->n_devrules)
    {
      if (load_saved_spec (st, &saved, &err) < 0)
        goto out;
      if (!oci_devrules_equal (saved, res))
        {
          securer_error_set (&err, 0, "linux.resources.devices: the device rules are the "
                                      "container's from create; update cannot change them");
          goto out;
        }
      res->n_devrules = 0;
    }
  oci_cgroup_update (st->cg, res, &err);
out:
  json_decref (j);
  oci_spec_free (res);
  oci_spec_free (saved);
  oci_state_free (st);
  /* runc's status for a failed update, whatever the step. */
  if (err)
    securer_error_set_status (&err, 1);
  return err ? fail (&err) : 0;
}

static int
cmd_ps (int argc, char **argv)
{
  const char *format = "table";
  const struct opt opts[] = { OPT_ARG ("format", 'f', &format), OPT_END };
  int i = 1;
  if (parse_opts ("ps", argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc - 1)
    return usage_error ("ps", "expects a container id (ps options after it are not supported)");
  if (strcmp (format, "json") != 0 && strcmp (format, "table") != 0)
    return usage_error ("ps", "--format must be table or json");
  securer_err_t err = NULL;
  struct oci_state *st = load_state (argv[i], &err);
  if (st == NULL)
    return fail (&err);
  size_t n;
  pid_t *pids = oci_cgroup_pids (st->cg, &n);
  if (strcmp (format, "json") == 0)
    {
      json_t *a = json_array ();
      for (size_t k = 0; k < n; k++)
        json_array_append_new (a, json_integer (pids[k]));
      char *s = json_dumps (a, JSON_COMPACT);
      printf ("%s\n", s);
      free (s);
      json_decref (a);
    }
  else
    {
      printf ("PID\tCMD\n");
      for (size_t k = 0; k < n; k++)
        {
          char path[64], comm[64] = "?";
          snprintf (path, sizeof path, "/proc/%d/comm", (int) pids[k]);
          FILE *f = fopen (path, "re");
          if (f && fgets (comm, sizeof comm, f))
            comm[strcspn (comm, "\n")] = '\0';
          if (f)
            fclose (f);
          printf ("%d\t%s\n", (int) pids[k], comm);
        }
    }
  free (pids);
  oci_state_free (st);
  return 0;
}

/* ---- features / spec ---------------------------------------------------- */
static int
cmd_features (int argc, char **argv)
{
  (void) argv;
  if (argc != 1)
    return usage_error ("features", "takes no arguments");
  static const char *const mount_opts[] = {
    "ro", "rw", "nosuid", "suid", "nodev", "dev", "noexec", "exec", "sync", "async", "dirsync",
    "remount", "mand", "nomand", "atime", "noatime", "diratime", "nodiratime", "relatime",
    "norelatime", "strictatime", "nostrictatime", "bind", "rbind", "private", "rprivate", "shared",
    "rshared", "slave", "rslave", "unbindable", "runbindable", "defaults", "tmpcopyup", NULL,
  };
  json_t *mo = json_array ();
  for (size_t k = 0; mount_opts[k]; k++)
    json_array_append_new (mo, json_string (mount_opts[k]));
  json_t *seccomp = json_pack (
    "{s:b, s:[s,s,s,s,s,s,s], s:[s,s,s,s,s,s,s], s:[s,s,s], s:[s]}", "enabled", 1, "actions",
    "SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS",
    "SCMP_ACT_KILL_THREAD", "SCMP_ACT_TRAP", "SCMP_ACT_LOG", "operators",
    "SCMP_CMP_EQ", "SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_GT", "SCMP_CMP_GE",
    "SCMP_CMP_MASKED_EQ", "archs", "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32",
    "supportedFlags", "SECCOMP_FILTER_FLAG_TSYNC");
  json_t *lx = json_pack ("{s:[s,s,s,s,s,s,s], s:[], s:{s:b, s:b, s:b, s:b}, s:o, s:{s:b}, s:{s:b},"
                          " s:{s:b}}",
                          "namespaces", "pid", "network", "ipc", "uts", "mount", "user", "cgroup",
                          "capabilities", "cgroup", "v1", 1, "v2", 1, "systemd", 0, "systemdUser", 0,
                          "seccomp", seccomp, "apparmor", "enabled", 0, "selinux", "enabled", 0,
                          "intelRdt", "enabled", 0);
  json_t *j = json_pack ("{s:s, s:s, s:[s,s,s,s,s,s], s:o, s:o, s:{s:s, s:s, s:s, s:s}}", "ociVersionMin", "1.0.0",
                         "ociVersionMax", "1.0.2", "hooks", "prestart", "createRuntime",
                         "createContainer", "startContainer", "poststart", "poststop", "mountOptions", mo, "linux", lx, "annotations",
                         "run.securer.version", securer_version (), "run.securer.policy",
                         "a securer policy (name or path) layered on top (docs/oci.md)",
                         "run.securer.report-denials",
                         "a path: kill verdicts of linux.seccomp reported there as JSON lines",
                         "run.securer.network-allow",
                         "HOST[:PORT] words: the container reaches those hosts, and nothing else, through a proxy");
  /* The capability list is the kernel's, not a fixed one. */
  json_t *caps = json_object_get (json_object_get (j, "linux"), "capabilities");
  for (int c = 0; c <= 63; c++)
    {
      extern const char *capng_capability_to_name (unsigned int capability);
      const char *n = capng_capability_to_name ((unsigned) c);
      if (n == NULL)
        break;
      char up[64];
      snprintf (up, sizeof up, "CAP_%s", n);
      for (char *p = up; *p; p++)
        *p = (char) (*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
      json_array_append_new (caps, json_string (up));
    }
  char *s = json_dumps (j, JSON_INDENT (2));
  printf ("%s\n", s);
  free (s);
  json_decref (j);
  return 0;
}

static const char default_spec[] =
  "{\n"
  "  \"ociVersion\": \"1.0.2\",\n"
  "  \"process\": {\n"
  "    \"terminal\": true,\n"
  "    \"user\": { \"uid\": 0, \"gid\": 0 },\n"
  "    \"args\": [ \"sh\" ],\n"
  "    \"env\": [ \"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\", \"TERM=xterm\" ],\n"
  "    \"cwd\": \"/\",\n"
  "    \"capabilities\": {\n"
  "      \"bounding\": [ \"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\" ],\n"
  "      \"effective\": [ \"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\" ],\n"
  "      \"permitted\": [ \"CAP_AUDIT_WRITE\", \"CAP_KILL\", \"CAP_NET_BIND_SERVICE\" ]\n"
  "    },\n"
  "    \"rlimits\": [ { \"type\": \"RLIMIT_NOFILE\", \"hard\": 1024, \"soft\": 1024 } ],\n"
  "    \"noNewPrivileges\": true\n"
  "  },\n"
  "  \"root\": { \"path\": \"rootfs\", \"readonly\": true },\n"
  "  \"hostname\": \"securer\",\n"
  "  \"mounts\": [\n"
  "    { \"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\" },\n"
  "    { \"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [ \"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\" ] },\n"
  "    { \"destination\": \"/dev/pts\", \"type\": \"devpts\", \"source\": \"devpts\", \"options\": [ \"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\", \"mode=0620\" ] },\n"
  "    { \"destination\": \"/dev/shm\", \"type\": \"tmpfs\", \"source\": \"shm\", \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", \"size=65536k\" ] },\n"
  "    { \"destination\": \"/dev/mqueue\", \"type\": \"mqueue\", \"source\": \"mqueue\", \"options\": [ \"nosuid\", \"noexec\", \"nodev\" ] },\n"
  "    { \"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"sysfs\", \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"ro\" ] }\n"
  "  ],\n"
  "  \"linux\": {\n"
  "    \"resources\": { \"devices\": [ { \"allow\": false, \"access\": \"rwm\" } ] },\n"
  "    \"namespaces\": [ { \"type\": \"pid\" }, { \"type\": \"network\" }, { \"type\": \"ipc\" },\n"
  "                    { \"type\": \"uts\" }, { \"type\": \"mount\" }, { \"type\": \"cgroup\" } ],\n"
  "    \"maskedPaths\": [ \"/proc/acpi\", \"/proc/asound\", \"/proc/kcore\", \"/proc/keys\", \"/proc/latency_stats\",\n"
  "                     \"/proc/timer_list\", \"/proc/timer_stats\", \"/proc/sched_debug\", \"/sys/firmware\", \"/proc/scsi\" ],\n"
  "    \"readonlyPaths\": [ \"/proc/bus\", \"/proc/fs\", \"/proc/irq\", \"/proc/sys\", \"/proc/sysrq-trigger\" ]\n"
  "  }\n"
  "}\n";

static int
cmd_spec (int argc, char **argv)
{
  const char *bundle = ".";
  bool rootless = false;
  const struct opt opts[] = { OPT_ARG ("bundle", 'b', &bundle), OPT_FLAG ("rootless", 0, &rootless),
                              OPT_END };
  int i = 1;
  if (parse_opts ("spec", argc, argv, &i, opts) != 0)
    return 1;
  if (i != argc)
    return usage_error ("spec", "takes no arguments");
  if (rootless)
    return usage_error ("spec", "--rootless: securer-runc runs containers as root only");
  char *path = malloc (strlen (bundle) + sizeof "/config.json");
  sprintf (path, "%s/config.json", bundle);
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      logmsg ("error", "spec: create %s: %s", path, strerror (errno));
      free (path);
      return 1;
    }
  free (path);
  ssize_t w = write (fd, default_spec, sizeof default_spec - 1);
  close (fd);
  return w == (ssize_t) sizeof default_spec - 1 ? 0 : 1;
}

static void
usage (FILE *out)
{
  fprintf (out,
           "Usage: securer-runc [GLOBAL OPTIONS] COMMAND [OPTIONS] ID\n"
           "\n"
           "An OCI runtime with runc's command line, enforcing the bundle's config.json with\n"
           "securer (see securer-runc(8) and docs/oci.md).\n"
           "\n"
           "Commands:\n"
           "  create --bundle DIR [--pid-file F] [--console-socket S] [--preserve-fds N]\n"
           "         [--no-new-keyring] ID\n"
           "  start ID                  let a created container exec its process\n"
           "  run [-d] --bundle DIR ID  create + start (+ wait and delete unless -d)\n"
           "  state ID                  print the OCI state JSON\n"
           "  kill [--all] ID [SIGNAL]  signal the container (default TERM)\n"
           "  delete [--force] ID       remove a stopped container (--force: kill it first)\n"
           "  exec [--process F | -t -e -u --cwd] [-d] [--pid-file F] [--console-socket S] ID [CMD...]\n"
           "  list [--format table|json] [-q]\n"
           "  pause ID / resume ID      freeze / thaw every process of the container\n"
           "  ps [--format table|json] ID   the container's processes (host pids)\n"
           "  update [-r FILE|-] ID     change a running container's cgroup limits: FILE (- for\n"
           "         stdin) holds an OCI LinuxResources object, or runc's flags --memory,\n"
           "         --memory-swap, --memory-reservation (bytes, or with k m g t p; -1 for\n"
           "         unlimited), --cpu-quota, --cpu-period, --cpu-share(s), --cpuset-cpus,\n"
           "         --cpuset-mems, --pids-limit\n"
           "  features                  JSON of what this runtime supports\n"
           "  spec [--bundle DIR]       write a default config.json\n"
           "\n"
           "Global options:\n"
           "  --root DIR         state directory (default /run/securer)\n"
           "  --log FILE         append errors and warnings to FILE\n"
           "  --log-format F     text (default) or json\n"
           "  --systemd-cgroup   cgroupsPath is slice:prefix:name; the directories are created\n"
           "                     directly (no systemd scope is requested)\n"
           "  --debug            accepted, no effect\n"
           "  -h, --help         this help;  -v, --version  the version\n");
}

int
main (int argc, char **argv)
{
  const char *log_format = "text";
  bool debug = false, help = false, version = false, systemd = false;
  const char *rootless = NULL, *criu = NULL;
  const struct opt opts[] = {
    OPT_ARG ("root", 0, &g.root), OPT_ARG ("log", 0, &g.log),
    OPT_ARG ("log-format", 0, &log_format), OPT_FLAG ("systemd-cgroup", 0, &systemd),
    OPT_FLAG ("debug", 0, &debug), OPT_FLAG ("help", 'h', &help),
    OPT_FLAG ("version", 'v', &version), OPT_ARG ("rootless", 0, &rootless),
    OPT_ARG ("criu", 0, &criu), OPT_END,
  };
  int i = 1;
  if (parse_opts (NULL, argc, argv, &i, opts) != 0)
    return 1;
  g.systemd_cgroup = systemd;
  if (strcmp (log_format, "json") == 0)
    g.log_json = true;
  else if (strcmp (log_format, "text") != 0)
    return usage_error (NULL, "--log-format must be text or json");
  if (version)
    {
      printf ("securer-runc version %s\nspec: 1.0.2\n", securer_version ());
      return 0;
    }
  if (help || i >= argc || strcmp (argv[i], "help") == 0)
    {
      usage (help || i < argc ? stdout : stderr);
      return help || i < argc ? 0 : 1;
    }
  if (rootless && strcmp (rootless, "false") != 0)
    return usage_error (NULL, "--rootless %s: securer-runc runs containers as root only", rootless);
  if (g.root[0] != '/')
    return usage_error (NULL, "--root must be an absolute path");
  static const struct {
    const char *name;
    int (*fn) (int, char **);
  } cmds[] = {
    { "create", cmd_create }, { "start", cmd_start }, { "run", cmd_run }, { "state", cmd_state },
    { "kill", cmd_kill }, { "delete", cmd_delete }, { "list", cmd_list }, { "exec", cmd_exec },
    { "features", cmd_features }, { "spec", cmd_spec }, { "pause", cmd_pause },
    { "resume", cmd_resume }, { "ps", cmd_ps }, { "update", cmd_update },
  };
  for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
    if (strcmp (argv[i], cmds[k].name) == 0)
      {
        if (i + 1 < argc && (strcmp (argv[i + 1], "--help") == 0 || strcmp (argv[i + 1], "-h") == 0))
          {
            usage (stdout);
            return 0;
          }
        if (strcmp (argv[i], "features") != 0 && strcmp (argv[i], "spec") != 0)
          {
            securer_err_t err = NULL;
            if (oci_root_check (g.root, &err) < 0)
              return fail (&err);
          }
        /* Only these put runtime processes into a container. */
        if (strcmp (argv[i], "create") == 0 || strcmp (argv[i], "run") == 0
            || strcmp (argv[i], "exec") == 0)
          {
            securer_err_t err = NULL;
            if (oci_self_protect (argv, &err) < 0)
              {
                securer_error_set_status (&err, 125);
                return fail (&err);
              }
          }
        return cmds[k].fn (argc - i, argv + i);
      }
  return usage_error (NULL, "unknown command \"%s\"", argv[i]);
}
