/* The attack table: R code (and, where R hides the errno, the attack-probe
 * helper) run by `securer run` under policies/r.policy, each attack checked
 * for the specific denial the policy promises.  A test fails when an attack
 * succeeds or is stopped by something other than what the policy says.
 *
 * Probes run under a test policy made from r.policy plus a read-only mount
 * of the helper and an exec entry for it, so everything else — mounts,
 * limits, Landlock, seccomp — is r.policy's own. */
#include <config.h>

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <seccomp.h>

#include "host-util.h"
#include "securer/policy.h"
#include "securer/probe.h"
#include "seccomp/seccomp.h"
#include "linux/landlock-internal.h"

#define R_BIN "/usr/lib/R/bin/exec/R"
#define PROBE_DIR "/opt/securer-test"
#define SUID_DIR "/opt/securer-suid"

/* ---- paths and fixtures ------------------------------------------------- */

static const char *
env_or (const char *name, const char *dflt)
{
  const char *v = getenv (name);
  return v && *v ? v : dflt;
}

static char r_policy[PATH_MAX];
static char t_policy[PATH_MAX];  /* r.policy + the probe helper */
static char work[64];           /* temp dir for the test policy, a setuid copy, a fake home */
static struct securer_policy *R;  /* r.policy as the library resolves it */

static void
write_text (const char *path, const char *text, mode_t mode)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  cr_assert_geq (fd, 0, "create %s: %s", path, strerror (errno));
  size_t len = strlen (text);
  cr_assert_eq (write (fd, text, len), (ssize_t) len);
  close (fd);
}

static void
copy_file (const char *from, const char *to, mode_t mode)
{
  int in = open (from, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (in, 0, "open %s: %s", from, strerror (errno));
  int out = open (to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
  cr_assert_geq (out, 0);
  char buf[65536];
  ssize_t n;
  while ((n = read (in, buf, sizeof buf)) > 0)
    cr_assert_eq (write (out, buf, (size_t) n), n);
  close (in);
  close (out);
  cr_assert_eq (chmod (to, mode), 0);
}

static void
rm_rf (const char *path)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      execl ("/bin/rm", "rm", "-rf", "--one-file-system", path, (char *) NULL);
      _exit (127);
    }
  waitpid (pid, NULL, 0);
}

static void
setup (void)
{
  if (access (R_BIN, X_OK) != 0)
    cr_skip_test ("R is not installed (%s)", R_BIN);
  const char *src = env_or ("SECURER_SRCDIR", SECURER_ABS_SRCDIR);
  const char *build = env_or ("SECURER_BUILDDIR", SECURER_ABS_BUILDDIR);
  snprintf (r_policy, sizeof r_policy, "%s/policies/r.policy", src);

  /* Not under /tmp: a secret there would be hidden by the sandbox's own
   * /tmp for the wrong reason.  /var/tmp is not in r.policy's view. */
  snprintf (work, sizeof work, "/var/tmp/securer-attacks-XXXXXX");
  cr_assert_not_null (mkdtemp (work));
  /* The sandbox's uid (an unmapped one on the host) must traverse it. */
  cr_assert_eq (chmod (work, 0755), 0);

  char p[PATH_MAX + 64];
  snprintf (p, sizeof p, "%s/suid", work);
  cr_assert_eq (mkdir (p, 0755), 0);
  char probe[PATH_MAX];
  snprintf (probe, sizeof probe, "%s/tests/helpers/attack-probe", build);
  snprintf (p, sizeof p, "%s/suid/attack-probe", work);
  copy_file (probe, p, 04755);  /* setuid root: it must not elevate inside */

  snprintf (p, sizeof p, "%s/home", work);
  cr_assert_eq (mkdir (p, 0700), 0);
  snprintf (p, sizeof p, "%s/home/secret.txt", work);
  write_text (p, "caller-home-secret\n", 0600);

  char text[4 * PATH_MAX];
  snprintf (text, sizeof text,
            "include \"%s\"\n"
            "mount ro %s/tests/helpers %s\n"
            "mount ro %s/suid %s\n"
            "exec %s/attack-probe %s/attack-probe\n",
            r_policy, build, PROBE_DIR, work, SUID_DIR, PROBE_DIR, SUID_DIR);
  snprintf (t_policy, sizeof t_policy, "%s/test.policy", work);
  write_text (t_policy, text, 0644);

  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_file (r_policy, &R, NULL, &err), 0, "load r.policy: %s",
                securer_error_message (err));
}

static void
teardown (void)
{
  securer_policy_free (R);
  R = NULL;
  if (work[0] != '\0')
    rm_rf (work);
}

/* ---- running securer -------------------------------------------------- */

struct run {
  int status;            /* securer's exit status */
  char out[65536];
  char err[65536];
  json_t *st;            /* --json-status */
};

static void
run_free (struct run *r)
{
  if (r->st)
    json_decref (r->st);
  r->st = NULL;
}

static const char *
st_str (const struct run *r, const char *key)
{
  json_t *v = r->st ? json_object_get (r->st, key) : NULL;
  return json_is_string (v) ? json_string_value (v) : "";
}

static long long
st_int (const struct run *r, const char *key)
{
  json_t *v = r->st ? json_object_get (r->st, key) : NULL;
  return json_is_integer (v) ? json_integer_value (v) : -1;
}

struct opts {
  int timeout;             /* seconds, 0 = the policy's */
  int stdin_fd;            /* -1 = /dev/null */
  const char *extra_env;   /* one "NAME=value" added to the caller's environment */
  pid_t *pid_out;          /* when set: do not wait; return after start */
  bool unprivileged;       /* securer itself runs as uid/gid 65534 (no --json-status) */
  bool inherit_stdio;      /* run --inherit-stdio: the payload gets stdin_fd itself */
};

static pid_t running_pid;
static int running_out = -1, running_err = -1;

static void
collect (struct run *r, pid_t pid, int po, int pe)
{
  size_t lo = 0, le = 0;
  r->out[0] = r->err[0] = '\0';
  struct pollfd fds[2] = { { po, POLLIN, 0 }, { pe, POLLIN, 0 } };
  int open_fds = 2;
  while (open_fds > 0)
    {
      if (poll (fds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0 && fds[i].revents)
          {
            char *buf = i == 0 ? r->out : r->err;
            size_t *len = i == 0 ? &lo : &le;
            ssize_t n = read (fds[i].fd, buf + *len, sizeof r->out - 1 - *len);
            if (n > 0)
              {
                *len += (size_t) n;
                buf[*len] = '\0';
              }
            else
              {
                fds[i].fd = -1;
                open_fds--;
              }
          }
    }
  close (po);
  close (pe);
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  r->status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);

  char path[PATH_MAX + 32];
  snprintf (path, sizeof path, "%s/status.json", work);
  json_error_t je;
  r->st = json_load_file (path, 0, &je);
  unlink (path);
}

static void
start_securer (const char *policy, const char *const *cmd, const struct opts *o, struct run *r)
{
  const char *bin = env_or ("SECURER_BIN", SECURER_ABS_BUILDDIR "/securer");
  char status_path[PATH_MAX + 32];
  snprintf (status_path, sizeof status_path, "%s/status.json", work);
  char tbuf[32];
  const char *argv[64];
  int n = 0;
  argv[n++] = bin;
  argv[n++] = "run";
  argv[n++] = "--policy";
  argv[n++] = policy;
  if (!(o && o->unprivileged))
    {
      argv[n++] = "--json-status";
      argv[n++] = status_path;
    }
  if (o && o->timeout > 0)
    {
      snprintf (tbuf, sizeof tbuf, "%d", o->timeout);
      argv[n++] = "--timeout";
      argv[n++] = tbuf;
    }
  if (o && o->inherit_stdio)
    argv[n++] = "--inherit-stdio";
  argv[n++] = "--";
  for (int i = 0; cmd[i] != NULL && n < 62; i++)
    argv[n++] = cmd[i];
  argv[n] = NULL;

  char home[PATH_MAX + 16];
  snprintf (home, sizeof home, "HOME=%s/home", work);
  const char *envp[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", home,
                         "SECURER_TEST_SECRET=caller-env-secret",
                         o && o->extra_env ? o->extra_env : NULL, NULL };

  int po[2], pe[2];
  cr_assert_eq (pipe2 (po, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (pe, O_CLOEXEC), 0);
  fflush (NULL);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      int in = o && o->stdin_fd >= 0 ? o->stdin_fd : open ("/dev/null", O_RDONLY);
      dup2 (in, 0);
      dup2 (po[1], 1);
      dup2 (pe[1], 2);
      if (o && o->unprivileged && geteuid () == 0
          && (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
              || setresuid (65534, 65534, 65534) < 0))
        _exit (99);
      execve (bin, (char **) argv, (char **) envp);
      _exit (127);
    }
  close (po[1]);
  close (pe[1]);
  running_pid = pid;
  running_out = po[0];
  running_err = pe[0];
  (void) r;
}

static void
finish_securer (struct run *r)
{
  collect (r, running_pid, running_out, running_err);
  running_pid = 0;
}

static void
run_cmd (const char *policy, const char *const *cmd, const struct opts *o, struct run *r)
{
  start_securer (policy, cmd, o, r);
  finish_securer (r);
}

static void
run_r (const char *code, const struct opts *o, struct run *r)
{
  const char *cmd[] = { R_BIN, "--vanilla", "--slave", "-e", code, NULL };
  run_cmd (r_policy, cmd, o, r);
}

/* Runs attack-probe ARGS... under the test policy. */
static void
probe (struct run *r, const struct opts *o, const char *a1, const char *a2, const char *a3)
{
  const char *cmd[] = { PROBE_DIR "/attack-probe", a1, a2, a3, NULL };
  run_cmd (t_policy, cmd, o, r);
}

#define ASSERT_HAS(hay, needle, r)                                                        \
  cr_assert (strstr ((hay), (needle)) != NULL,                                            \
             "expected \"%s\"\n--- status %d\n--- stdout:\n%s\n--- stderr:\n%s", (needle),  \
             (r)->status, (r)->out, (r)->err)

/* ---- what the policy says a syscall gets ------------------------------- */

/* The seccomp area's own evaluator over the compiled r.policy: the same
 * first-match meaning the loaded filter has. */
static struct securer_action
policy_action (const char *name, const uint64_t *args)
{
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_seccomp_compile (R, 0, -1, &prog, &err), 0, "%s",
                securer_error_message (err));
  int nr = seccomp_syscall_resolve_name (name);
  cr_assert_neq (nr, __NR_SCMP_ERROR, "unknown syscall %s", name);
  struct securer_action a = securer_seccomp_eval (prog, 0, nr, args);
  securer_seccomp_free (prog);
  return a;
}

/* Asserts that probe `name` met exactly what the policy's seccomp filter
 * says; `otherwise` is the errno expected when the filter lets it through
 * (another layer's denial), NULL when getting through is itself a failure. */
static void
check_syscall_denied (const char *name, const uint64_t *args, const char *otherwise)
{
  cr_assert (R->seccomp.enabled, "r.policy has no seccomp filter");
  struct securer_action a = policy_action (name, args);
  struct run r = { 0 };
  probe (&r, NULL, name, NULL, NULL);
  char line[128];
  switch (a.type)
    {
    case SECURER_ACT_KILL_PROCESS:
    case SECURER_ACT_KILL_THREAD:
    case SECURER_ACT_TRAP:
      cr_assert_eq (r.status, 128 + SIGSYS, "%s: policy kills, got status %d\n%s%s", name,
                    r.status, r.out, r.err);
      cr_assert_eq (st_int (&r, "signal"), SIGSYS);
      cr_assert_str_eq (st_str (&r, "kill_reason"), "seccomp", "%s: kill_reason", name);
      break;
    case SECURER_ACT_ERRNO:
      cr_assert_eq (r.status, 0, "%s: status %d\n%s", name, r.status, r.err);
      snprintf (line, sizeof line, "%s = %s\n", name, strerrorname_np (a.errnum));
      ASSERT_HAS (r.out, line, &r);
      break;
    default:
      cr_assert_not_null (otherwise, "%s: r.policy's seccomp filter lets it through (%s)", name,
                          securer_action_name (a.type));
      snprintf (line, sizeof line, "%s = %s\n", name, otherwise);
      ASSERT_HAS (r.out, line, &r);
      break;
    }
  run_free (&r);
}

TestSuite (attacks, .init = setup, .fini = teardown, .timeout = 240);

/* ---- files ------------------------------------------------------------- */

Test (attacks, read_etc_shadow)
{
  struct run r = { 0 };
  run_r ("m <- tryCatch(readLines('/etc/shadow'), warning = function(w) conditionMessage(w),"
         " error = function(e) conditionMessage(e)); cat('RESULT:', m, '\\n')",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "RESULT: cannot open file '/etc/shadow': No such file or directory", &r);
  run_free (&r);
  probe (&r, NULL, "read", "/etc/shadow", NULL);
  ASSERT_HAS (r.out, "read = ENOENT\n", &r);
  run_free (&r);
}

Test (attacks, read_secret_in_callers_home)
{
  char code[PATH_MAX * 2];
  snprintf (code, sizeof code,
            "p <- '%s/home/secret.txt'; cat('EXISTS:', file.exists(p), '\\n');"
            " cat('HOME:', Sys.getenv('HOME'), '\\n');"
            " m <- tryCatch(readLines(p), warning = function(w) conditionMessage(w)); cat('RESULT:', m, '\\n')",
            work);
  struct run r = { 0 };
  run_r (code, NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "EXISTS: FALSE", &r);
  ASSERT_HAS (r.out, "HOME: /tmp \n", &r);
  ASSERT_HAS (r.out, "No such file or directory", &r);
  cr_assert (strstr (r.out, "caller-home-secret") == NULL);
  run_free (&r);
}

Test (attacks, write_outside_tmp)
{
  struct run r = { 0 };
  run_r ("for (p in c('/usr/lib/R/evil', '/etc/R/evil', '/evil', '/proc/evil')) {"
         " m <- tryCatch({ writeLines('x', p); 'WRITTEN' }, warning = function(w) conditionMessage(w));"
         " cat('RESULT:', p, m, '\\n') };"
         " writeLines('ok', '/tmp/fine'); cat('TMP:', readLines('/tmp/fine'), '\\n')",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert (strstr (r.out, "WRITTEN") == NULL, "a write outside /tmp worked:\n%s", r.out);
  ASSERT_HAS (r.out, "RESULT: /usr/lib/R/evil cannot open file '/usr/lib/R/evil': Read-only file system", &r);
  ASSERT_HAS (r.out, "RESULT: /etc/R/evil cannot open file '/etc/R/evil': Read-only file system", &r);
  ASSERT_HAS (r.out, "RESULT: /evil cannot open file '/evil': Read-only file system", &r);
  ASSERT_HAS (r.out, "TMP: ok", &r);
  run_free (&r);
}

Test (attacks, proc_sys_and_sysrq_are_not_writable)
{
  struct run r = { 0 };
  /* Owned by root of the host: the sandbox's uid fails the permission
   * check first (EACCES), before the read-only /proc/sys mount (EROFS) or
   * Landlock (proc is read-only to it) are consulted. */
  probe (&r, NULL, "write", "/proc/sys/kernel/hostname", NULL);
  ASSERT_HAS (r.out, "write = EACCES\n", &r);
  run_free (&r);
  /* A /proc file the process owns passes the permission check: Landlock
   * is what refuses it. */
  probe (&r, NULL, "write", "/proc/self/oom_score_adj", NULL);
  ASSERT_HAS (r.out, "write = EACCES\n", &r);
  run_free (&r);
  probe (&r, NULL, "write", "/proc/sysrq-trigger", NULL);
  if (access ("/proc/sysrq-trigger", F_OK) != 0)
    {
      /* Kernels built without CONFIG_MAGIC_SYSRQ have no such file. */
      cr_log_info ("this kernel has no /proc/sysrq-trigger: only its absence is checked");
      ASSERT_HAS (r.out, "write = ENOENT\n", &r);
    }
  else
    /* Masked with an empty read-only file. */
    ASSERT_HAS (r.out, "write = EROFS\n", &r);
  run_free (&r);
}

/* ---- network ----------------------------------------------------------- */

static int
tcp_listener (int *port)
{
  int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  cr_assert_geq (s, 0);
  struct sockaddr_in a = { .sin_family = AF_INET };
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  cr_assert_eq (bind (s, (struct sockaddr *) &a, sizeof a), 0);
  cr_assert_eq (listen (s, 8), 0);
  socklen_t len = sizeof a;
  cr_assert_eq (getsockname (s, (struct sockaddr *) &a, &len), 0);
  *port = ntohs (a.sin_port);
  return s;
}

static void
assert_no_connection (int listener)
{
  int c = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
  cr_assert_lt (c, 0, "the sandbox reached the host's listener");
  cr_assert_eq (errno, EAGAIN);
}

Test (attacks, http_to_host_loopback)
{
  int port;
  int s = tcp_listener (&port);
  char code[512];
  snprintf (code, sizeof code,
            "m <- tryCatch(readLines(url('http://127.0.0.1:%d/')), error = function(e) conditionMessage(e),"
            " warning = function(w) conditionMessage(w)); cat('RESULT:', m, '\\n');"
            "m <- tryCatch(socketConnection('127.0.0.1', %d, open = 'r+b', timeout = 2),"
            " error = function(e) conditionMessage(e), warning = function(w) conditionMessage(w));"
            " cat('SOCKET:', m, '\\n')",
            port, port);
  struct run r = { 0 };
  run_r (code, NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "RESULT:", &r);
  ASSERT_HAS (r.out, "SOCKET:", &r);
  cr_assert (strstr (r.out, "<html") == NULL);
  assert_no_connection (s);
  run_free (&r);

  /* The errno, by the policy's word: AF_INET sockets are refused by seccomp. */
  char ps[16];
  snprintf (ps, sizeof ps, "%d", port);
  uint64_t args[6] = { AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0, 0, 0, 0 };
  struct securer_action a = policy_action ("socket", args);
  probe (&r, NULL, "connect", "127.0.0.1", ps);
  char line[64];
  if (a.type == SECURER_ACT_ERRNO)
    snprintf (line, sizeof line, "socket = %s\n", strerrorname_np (a.errnum));
  else
    /* A socket is allowed: Landlock's TCP rules (no port listed) refuse the
     * connect before the empty network namespace could. */
    snprintf (line, sizeof line, "connect = EACCES\n");
  ASSERT_HAS (r.out, line, &r);
  assert_no_connection (s);
  run_free (&r);
  close (s);
}

Test (attacks, abstract_unix_socket_on_host)
{
  char name[64];
  snprintf (name, sizeof name, "securer-attack-%d", (int) getpid ());
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  cr_assert_geq (s, 0);
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  memcpy (a.sun_path + 1, name, strlen (name));
  cr_assert_eq (bind (s, (struct sockaddr *) &a,
                      (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + strlen (name))),
                0);
  cr_assert_eq (listen (s, 4), 0);
  struct run r = { 0 };
  probe (&r, NULL, "connect-abstract", name, NULL);
  /* Abstract names live in the network namespace: the sandbox's own has no
   * such socket.  (Landlock's abstract-unix scope would answer EPERM had
   * the namespace been shared.) */
  ASSERT_HAS (r.out, "connect-abstract = ECONNREFUSED\n", &r);
  assert_no_connection (s);
  run_free (&r);
  close (s);
}

/* ---- executing programs -------------------------------------------------- */

Test (attacks, external_programs_via_system)
{
  struct run r = { 0 };
  /* Interpreters and tools are not in r.policy's view at all: the shell
   * reports "not found" (127).  Programs that are in the view but not on
   * the exec list meet Landlock: "Permission denied" (126). */
  run_r ("for (c in c('python3 -V', 'perl -e 1', 'id', 'ls /', 'cat /etc/R/Renviron',"
         " '/usr/bin/env true', '/usr/bin/which sh', '/usr/lib/R/bin/Rscript -e 1',"
         " '/usr/lib/R/bin/R --version')) cat('SYSTEM:', c, '=', suppressWarnings(system(c)), '\\n');"
         " for (c in c('python3', 'perl', 'id', '/usr/lib/R/bin/Rscript')) cat('SYSTEM2:', c, '=',"
         " suppressWarnings(system2(c, stdout = FALSE, stderr = FALSE)), '\\n')",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "SYSTEM: python3 -V = 127", &r);
  ASSERT_HAS (r.out, "SYSTEM: perl -e 1 = 127", &r);
  ASSERT_HAS (r.out, "SYSTEM: id = 127", &r);
  ASSERT_HAS (r.out, "SYSTEM: ls / = 127", &r);
  ASSERT_HAS (r.out, "SYSTEM: cat /etc/R/Renviron = 127", &r);
  ASSERT_HAS (r.out, "SYSTEM: /usr/bin/env true = 127", &r);
  ASSERT_HAS (r.out, "SYSTEM: /usr/bin/which sh = 126", &r);
  ASSERT_HAS (r.out, "SYSTEM: /usr/lib/R/bin/Rscript -e 1 = 126", &r);
  ASSERT_HAS (r.out, "SYSTEM: /usr/lib/R/bin/R --version = 126", &r);
  ASSERT_HAS (r.out, "SYSTEM2: python3 = 127", &r);
  ASSERT_HAS (r.out, "SYSTEM2: perl = 127", &r);
  ASSERT_HAS (r.out, "SYSTEM2: id = 127", &r);
  ASSERT_HAS (r.out, "SYSTEM2: /usr/lib/R/bin/Rscript = 126", &r);
  ASSERT_HAS (r.err, "sh: 1: python3: not found", &r);
  ASSERT_HAS (r.err, "sh: 1: perl: not found", &r);
  ASSERT_HAS (r.err, "sh: 1: id: not found", &r);
  ASSERT_HAS (r.err, "sh: 1: /usr/bin/which: Permission denied", &r);
  ASSERT_HAS (r.err, "sh: 1: /usr/lib/R/bin/Rscript: Permission denied", &r);
  ASSERT_HAS (r.err, "sh: 1: /usr/lib/R/bin/R: Permission denied", &r);
  run_free (&r);
  /* The same without a shell in between: execve itself is refused. */
  probe (&r, NULL, "exec", "/usr/lib/R/bin/Rscript", NULL);
  ASSERT_HAS (r.out, "exec = EACCES\n", &r);
  run_free (&r);
  probe (&r, NULL, "exec", "/usr/bin/python3", NULL);
  ASSERT_HAS (r.out, "exec = ENOENT\n", &r);
  run_free (&r);
}

Test (attacks, loader_cannot_launch_other_programs)
{
  struct run r = { 0 };
  run_r ("cat('LDSO:', system('/lib64/ld-linux-x86-64.so.2 /usr/bin/python3 -V'), '\\n');"
         " file.copy('/usr/lib/R/bin/exec/R', '/tmp/R2'); Sys.chmod('/tmp/R2', '755');"
         " cat('LDSO2:', system('/lib64/ld-linux-x86-64.so.2 /tmp/R2 --version'), '\\n')",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "LDSO: 127", &r);
  ASSERT_HAS (r.err, "/usr/bin/python3: cannot open shared object file: No such file or directory", &r);
  ASSERT_HAS (r.out, "LDSO2: 127", &r);
  ASSERT_HAS (r.err, "/tmp/R2: failed to map segment from shared object", &r);
  run_free (&r);
}

Test (attacks, dyn_load_library_written_to_tmp)
{
  struct run r = { 0 };
  run_r ("for (d in c('/tmp', '/dev/shm')) { p <- file.path(d, 'x.so');"
         " stopifnot(file.copy(file.path(R.home('library'), 'stats', 'libs', 'stats.so'), p));"
         " m <- tryCatch({ dyn.load(p); 'LOADED' }, error = function(e) conditionMessage(e));"
         " cat('RESULT:', m, '\\n') }",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert (strstr (r.out, "LOADED") == NULL, "%s", r.out);
  /* mmap(PROT_EXEC) of a file on a noexec mount: EPERM, which glibc
   * reports as failing to map the segment. */
  ASSERT_HAS (r.out, "/tmp/x.so: failed to map segment from shared object", &r);
  ASSERT_HAS (r.out, "/dev/shm/x.so: failed to map segment from shared object", &r);
  run_free (&r);
}

Test (attacks, setuid_binary_does_not_elevate)
{
  struct run r = { 0 };
  const char *cmd[] = { SUID_DIR "/attack-probe", "ids", NULL };
  run_cmd (t_policy, cmd, NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  char want[128];
  snprintf (want, sizeof want, "ids = uid %u %u %u gid %u %u %u\n", R->uid, R->uid, R->uid,
            R->gid, R->gid, R->gid);
  ASSERT_HAS (r.out, want, &r);
  run_free (&r);
  /* Asking for uid 0 directly: the policy's filter answers (setuid is not
   * on the allowlist), and without the filter the kernel would say EPERM
   * (no capability in the sandbox). */
  uint64_t a[6] = { 0 };
  struct securer_action act = policy_action ("setuid", a);
  probe (&r, NULL, "setuid0", NULL, NULL);
  char line[64];
  snprintf (line, sizeof line, "setuid0 = %s\n",
            act.type == SECURER_ACT_ERRNO ? strerrorname_np (act.errnum) : "EPERM");
  ASSERT_HAS (r.out, line, &r);
  run_free (&r);
  /* su and passwd are not in r.policy's view at all. */
  probe (&r, NULL, "exec", "/usr/bin/su", NULL);
  ASSERT_HAS (r.out, "exec = ENOENT\n", &r);
  run_free (&r);
}

/* ---- resources ----------------------------------------------------------- */

static int
count_marker_processes (const char *marker)
{
  DIR *d = opendir ("/proc");
  cr_assert_not_null (d);
  int n = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (de->d_name[0] < '1' || de->d_name[0] > '9')
        continue;
      char path[300], buf[4096];
      snprintf (path, sizeof path, "/proc/%s/cmdline", de->d_name);
      int fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        continue;
      ssize_t len = read (fd, buf, sizeof buf - 1);
      close (fd);
      if (len <= 0)
        continue;
      for (ssize_t i = 0; i < len; i++)
        if (buf[i] == '\0')
          buf[i] = ' ';
      buf[len] = '\0';
      if (strstr (buf, marker) != NULL)
        n++;
    }
  closedir (d);
  return n;
}

Test (attacks, fork_bomb)
{
  char marker[64], code[512];
  snprintf (marker, sizeof marker, "securer_bomb_%d", (int) getpid ());
  /* The shell returns at once and leaves the bomb running; R then waits,
   * so only the limits and the timeout can end it. */
  snprintf (code, sizeof code, "system('%s(){ %s | %s & }; %s'); Sys.sleep(120)", marker, marker,
            marker, marker);
  struct opts o = { .timeout = 8, .stdin_fd = -1 };
  struct run r = { 0 };
  const char *cmd[] = { R_BIN, "--vanilla", "--slave", "-e", code, NULL };
  start_securer (r_policy, cmd, &o, &r);
  /* While it runs, the host can still start processes. */
  sleep (2);
  pid_t c = fork ();
  cr_assert_geq (c, 0, "the host cannot fork: %s", strerror (errno));
  if (c == 0)
    _exit (7);
  int st;
  cr_assert_eq (waitpid (c, &st, 0), c);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 7);
  finish_securer (&r);
  cr_assert_eq (r.status, 124, "fork bomb: status %d\n%s", r.status, r.err);
  cr_assert_str_eq (st_str (&r, "kill_reason"), "timeout");
  ASSERT_HAS (r.err, "sh: 1: Cannot fork", &r);  /* fork failing at the nproc limit */
  cr_assert_eq (count_marker_processes (marker), 0, "processes of the sandbox were left behind");
  run_free (&r);
}

Test (attacks, allocate_10_gb)
{
  struct run r = { 0 };
  run_r ("m <- tryCatch({ x <- numeric(10 * 2^30 / 8); 'ALLOCATED' }, error = function(e) conditionMessage(e));"
         " cat('RESULT:', m, '\\n')",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "RESULT: cannot allocate vector of size 10.0 Gb", &r);
  run_free (&r);
}

Test (attacks, fill_memory_through_tmpfs)
{
  /* Files in tmpfs are memory the address-space limit does not see; each
   * file is capped by RLIMIT_FSIZE, their number only by the tmpfs size. */
  struct run r = { 0 };
  run_r ("for (d in c('/tmp', '/dev/shm')) { n <- 0; m <- 'ALL WRITTEN';"
         " for (i in 1:40) { ok <- tryCatch({ con <- file(sprintf('%s/f%d', d, i), 'wb');"
         " writeBin(raw(40 * 2^20), con); close(con); TRUE },"
         " error = function(e) conditionMessage(e), warning = function(w) conditionMessage(w));"
         " if (!isTRUE(ok)) { m <- ok; break } };"
         " cat('FILL:', d, round(sum(file.size(list.files(d, full.names = TRUE))) / 2^20), 'MiB:', m, '\\n');"
         " unlink(list.files(d, full.names = TRUE)) }",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert (strstr (r.out, "ALL WRITTEN") == NULL, "%s", r.out);
  /* ENOSPC, which R reports without the errno. */
  ASSERT_HAS (r.out, "FILL: /tmp 64 MiB: problem writing to connection", &r);
  ASSERT_HAS (r.out, "FILL: /dev/shm 16 MiB: problem writing to connection", &r);
  run_free (&r);
}

Test (attacks, infinite_loop_hits_wall_timeout)
{
  struct opts o = { .timeout = 3, .stdin_fd = -1 };
  struct run r = { 0 };
  run_r ("repeat {}", &o, &r);
  cr_assert_eq (r.status, 124, "status %d\n%s", r.status, r.err);
  cr_assert_str_eq (st_str (&r, "kill_reason"), "timeout");
  run_free (&r);
}

Test (attacks, infinite_loop_hits_cpu_limit)
{
  const struct securer_rlimit *cpu = &R->limits.rlimit[SECURER_RLIMIT_CPU];
  cr_assert (cpu->set, "r.policy sets no cpu limit");
  /* A copy of r.policy with a short cpu limit, so the test does not spin
   * for the full minute; the mechanism is the same. */
  char pol[PATH_MAX + 32], text[PATH_MAX + 64];
  snprintf (pol, sizeof pol, "%s/cpu.policy", work);
  snprintf (text, sizeof text, "include \"%s\"\nlimit cpu 1s:2s\n", r_policy);
  write_text (pol, text, 0644);
  const char *cmd[] = { R_BIN, "--vanilla", "--slave", "-e", "repeat {}", NULL };
  struct opts o = { .timeout = 60, .stdin_fd = -1 };
  struct run r = { 0 };
  run_cmd (pol, cmd, &o, &r);
  cr_assert_eq (r.status, 128 + SIGXCPU, "status %d\n%s", r.status, r.err);
  cr_assert_eq (st_int (&r, "signal"), SIGXCPU);
  cr_assert_str_eq (st_str (&r, "kill_reason"), "cpu-limit");
  run_free (&r);
}

Test (attacks, write_1_gb_file)
{
  struct run r = { 0 };
  run_r ("con <- file('/tmp/big', 'wb'); for (i in 1:1024) writeBin(raw(2^20), con); close(con);"
         " cat('WROTE', file.size('/tmp/big'), '\\n')",
         NULL, &r);
  cr_assert (strstr (r.out, "WROTE") == NULL, "%s", r.out);
  cr_assert_eq (r.status, 128 + SIGXFSZ, "status %d\n%s", r.status, r.err);
  cr_assert_eq (st_int (&r, "signal"), SIGXFSZ);
  cr_assert_str_eq (st_str (&r, "kill_reason"), "file-size-limit");
  run_free (&r);
}

/* With soft and hard equal, as the shipped policies have them, the kernel
 * ends the command at RLIMIT_CPU with SIGKILL, not SIGXCPU: still named a
 * CPU limit, not left unexplained.  A signal from outside, forwarded by
 * securer run, is "signal". */
Test (attacks, cpu_limit_kill_and_an_outside_signal_are_named)
{
  char pol[PATH_MAX + 32], text[PATH_MAX + 64];
  snprintf (pol, sizeof pol, "%s/cpu-equal.policy", work);
  snprintf (text, sizeof text, "include \"%s\"\nlimit cpu 1s\n", r_policy);
  write_text (pol, text, 0644);
  const char *cmd[] = { R_BIN, "--vanilla", "--slave", "-e", "repeat {}", NULL };
  struct opts o = { .timeout = 60, .stdin_fd = -1 };
  struct run r = { 0 };
  run_cmd (pol, cmd, &o, &r);
  cr_assert_eq (r.status, 128 + SIGKILL, "status %d\n%s", r.status, r.err);
  cr_assert_str_eq (st_str (&r, "kill_reason"), "cpu-limit");
  ASSERT_HAS (r.err, "the CPU time limit (limit cpu) was reached", &r);
  run_free (&r);

  const char *sleeper[] = { R_BIN, "--vanilla", "--slave", "-e", "Sys.sleep(60)", NULL };
  pid_t pid;
  o.pid_out = &pid;
  start_securer (r_policy, sleeper, &o, &r);
  usleep (500000);
  cr_assert_eq (kill (running_pid, SIGTERM), 0);
  finish_securer (&r);
  cr_assert_eq (r.status, 128 + SIGTERM, "status %d\n%s", r.status, r.err);
  cr_assert_str_eq (st_str (&r, "kill_reason"), "signal");
  run_free (&r);
}

Test (attacks, open_1000_files)
{
  const struct securer_rlimit *nofile = &R->limits.rlimit[SECURER_RLIMIT_NOFILE];
  cr_assert (nofile->set);
  struct run r = { 0 };
  probe (&r, NULL, "openmany", "1000", NULL);
  /* fds 0-2 are open: the rest of the limit is what can be opened. */
  char want[64];
  snprintf (want, sizeof want, "openmany = EMFILE after %llu\n",
            (unsigned long long) nofile->soft - 3);
  ASSERT_HAS (r.out, want, &r);
  run_free (&r);
  run_r ("cons <- vector('list', 1000);"
         " m <- tryCatch({ for (i in 1:1000) cons[[i]] <- file(tempfile(), 'w'); 'OPENED' },"
         " error = function(e) conditionMessage(e));"
         " cat('RESULT:', m, '\\n')",
         NULL, &r);
  cr_assert (strstr (r.out, "OPENED") == NULL, "%s", r.out);
  /* R caps its own connections below the fd limit. */
  ASSERT_HAS (r.out, "RESULT: all connections are in use", &r);
  run_free (&r);
}

/* ---- tenants: aggregate limits, stale cgroups, /proc, host name ---------- */

/* A policy file in the work directory: the test policy plus `extra`. */
static void
derived_policy (char *path, size_t len, const char *name, const char *extra)
{
  snprintf (path, len, "%s/%s", work, name);
  char text[2 * PATH_MAX];
  snprintf (text, sizeof text, "include \"%s\"\n%s", t_policy, extra);
  write_text (path, text, 0644);
}

/* Can this host give a sandbox its cgroup limits?  Asked the way
 * `securer probe` does, independently of what a run reports, so that a
 * run that fails to apply them fails the test instead of skipping it. */
static bool
host_gives_cgroups (void)
{
  struct securer_probe pr;
  securer_err_t err = NULL;
  cr_assert_eq (securer_probe_kernel (&pr, &err), 0);
  if (!pr.cgroup_limits)
    cr_log_info ("%s", pr.cgroup_limits_report);
  return pr.cgroup_limits;
}

/* The cgroup version enforcing `ctrl` according to --json-status, 0 = none. */
static int
enforced_cgroup (const struct run *r, const char *ctrl)
{
  json_t *enf = r->st ? json_object_get (r->st, "enforced") : NULL;
  json_t *cg = enf ? json_object_get (enf, "cgroup") : NULL;
  json_t *v = cg ? json_object_get (cg, ctrl) : NULL;
  return json_is_integer (v) ? (int) json_integer_value (v) : 0;
}

/* A sandbox under plain r.policy that stays up until release_bystander:
 * it holds some memory and waits for its stdin to end. */
struct bystander {
  pid_t pid;
  int out, err, in;
};

static void
start_bystander (struct bystander *b)
{
  int p[2];
  cr_assert_eq (pipe2 (p, O_CLOEXEC), 0);
  struct opts o = { .timeout = 120, .stdin_fd = p[0] };
  struct run unused = { 0 };
  const char *cmd[] = { R_BIN, "--vanilla", "--slave", "-e",
                        "x <- numeric(2^22); x[] <- 1; invisible(readLines(file('stdin')));"
                        " cat('BYSTANDER', sum(x), '\\n')", NULL };
  start_securer (r_policy, cmd, &o, &unused);
  close (p[0]);
  b->pid = running_pid;
  b->out = running_out;
  b->err = running_err;
  b->in = p[1];
  running_pid = 0;
}

/* Lets the bystander finish and checks that nothing touched it. */
static void
release_bystander (struct bystander *b)
{
  close (b->in);
  struct run r = { 0 };
  collect (&r, b->pid, b->out, b->err);
  cr_assert_eq (r.status, 0, "the other sandbox was affected: status %d\n%s", r.status, r.err);
  ASSERT_HAS (r.out, "BYSTANDER 4194304", &r);
  run_free (&r);
}

Test (attacks, memory_past_the_cgroup_cap_kills_only_that_sandbox)
{
  /* A small cap, so that each kind of memory alone passes it: the 16 MiB
   * of /dev/shm and the 64 MiB of /tmp fit their tmpfs sizes but not the
   * sandbox's 12 MiB. */
  char pol[PATH_MAX + 64];
  derived_policy (pol, sizeof pol, "mem.policy", "cgroup memory 12M\n");
  /* memfd is not here: the r policy refuses memfd_create outright (W^X,
   * test-wx.c), so it is no way to memory either. */
  static const char *const kinds[][3] = {
    { "heap", "64", NULL }, { "shm", "64", NULL },
    { "file", "32", "/tmp" }, { "file", "15", "/dev/shm" },
  };
  if (!host_gives_cgroups ())
    cr_skip_test ("this host gives no cgroup limits");
  struct bystander b;
  start_bystander (&b);
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    {
      struct run r = { 0 };
      const char *cmd[] = { PROBE_DIR "/attack-probe", "fill", kinds[i][0], kinds[i][1],
                            kinds[i][2], NULL };
      run_cmd (pol, cmd, NULL, &r);
      cr_assert_neq (enforced_cgroup (&r, "memory"), 0, "no memory cgroup: %s", r.err);
      cr_assert_eq (r.status, 128 + SIGKILL, "fill %s %s: status %d\n%s%s", kinds[i][0],
                    kinds[i][2] ? kinds[i][2] : "", r.status, r.out, r.err);
      cr_assert_str_eq (st_str (&r, "kill_reason"), "memory", "fill %s", kinds[i][0]);
      ASSERT_HAS (r.err, "the cgroup memory limit was reached", &r);
      cr_assert (strstr (r.out, "fill = ok") == NULL, "%s", r.out);
      run_free (&r);
    }
  /* The same /dev/shm fill without the cgroup passes: the cap stopped it. */
  struct run r = { 0 };
  const char *cmd[] = { PROBE_DIR "/attack-probe", "fill", "file", "15", "/dev/shm", NULL };
  char nocg[PATH_MAX + 64];
  derived_policy (nocg, sizeof nocg, "nocg.policy",
                  "cgroup memory unlimited\ncgroup pids unlimited\ncgroup cpu unlimited\n"
                  "cgroup off\n");
  run_cmd (nocg, cmd, NULL, &r);
  ASSERT_HAS (r.out, "fill = ok 15\n", &r);
  run_free (&r);
  release_bystander (&b);
}

Test (attacks, mclapply_children_share_one_memory_cap)
{
  /* Each child stays under `limit as`; four of them do not fit in 1 GiB. */
  if (!host_gives_cgroups ())
    cr_skip_test ("this host gives no cgroup limits");
  struct run r = { 0 };
  run_r ("library(parallel); r <- mclapply(1:4, function(i) { x <- numeric(400 * 2^20 / 8);"
         " x[] <- i; Sys.sleep(1); sum(x) }, mc.cores = 4); cat('SURVIVED\\n')",
         NULL, &r);
  cr_assert_neq (enforced_cgroup (&r, "memory"), 0, "no memory cgroup: %s", r.err);
  cr_assert_eq (r.status, 128 + SIGKILL, "status %d\n%s%s", r.status, r.out, r.err);
  cr_assert_str_eq (st_str (&r, "kill_reason"), "memory");
  cr_assert (strstr (r.out, "SURVIVED") == NULL, "%s", r.out);
  run_free (&r);
}

Test (attacks, fork_bomb_stopped_by_cgroup_pids)
{
  /* Without the nproc rlimit only the cgroup's pids limit is left. */
  char pol[PATH_MAX + 64];
  derived_policy (pol, sizeof pol, "pids.policy", "limit nproc unlimited\n");
  if (!host_gives_cgroups ())
    cr_skip_test ("this host gives no cgroup limits");
  struct bystander b;
  start_bystander (&b);
  struct run r = { 0 };
  const char *cmd[] = { PROBE_DIR "/attack-probe", "forks", "1000", NULL };
  run_cmd (pol, cmd, NULL, &r);
  cr_assert_neq (enforced_cgroup (&r, "pids"), 0, "no pids cgroup: %s", r.err);
  /* init and the probe are two of the tasks. */
  char want[64];
  snprintf (want, sizeof want, "forks = EAGAIN after %llu\n",
            (unsigned long long) R->limits.cgroup_pids - 2);
  ASSERT_HAS (r.out, want, &r);
  run_free (&r);
  release_bystander (&b);
}

Test (attacks, r_server_refuses_an_unprivileged_caller)
{
  /* r-server wants a host id of the sandbox's own, which only root can
   * give: an unprivileged caller is refused, and told why. */
  char server[PATH_MAX + 32];
  snprintf (server, sizeof server, "%s/policies/r-server.policy",
            env_or ("SECURER_SRCDIR", SECURER_ABS_SRCDIR));
  struct opts o = { .stdin_fd = -1, .unprivileged = true };
  struct run r = { 0 };
  const char *cmd[] = { R_BIN, "--version", NULL };
  run_cmd (server, cmd, &o, &r);
  cr_assert_eq (r.status, 125, "%s", r.err);
  ASSERT_HAS (r.err, "host=pool: only a root caller can give each sandbox a host uid of its own", &r);
  run_free (&r);
}

Test (attacks, r_server_refuses_without_cgroups)
{
  /* As an unprivileged caller without a delegated cgroup (its own uid
   * allowed, so that the cgroup check is the one met): r runs on its
   * rlimits, r-server refuses and says why. */
  char server[PATH_MAX + 32], pol[PATH_MAX + 64];
  snprintf (server, sizeof server, "%s/policies/r-server.policy",
            env_or ("SECURER_SRCDIR", SECURER_ABS_SRCDIR));
  snprintf (pol, sizeof pol, "%s/server-caller.policy", work);
  char text[2 * PATH_MAX];
  snprintf (text, sizeof text, "include \"%s\"\nuid 1000 host=caller\ngid 1000 host=caller\n", server);
  write_text (pol, text, 0644);
  struct opts o = { .stdin_fd = -1, .unprivileged = true };
  struct run r = { 0 };
  const char *cmd[] = { R_BIN, "--version", NULL };
  run_cmd (pol, cmd, &o, &r);
  if (r.status == 0)
    cr_skip_test ("this host gives unprivileged callers cgroups");
  cr_assert_eq (r.status, 125, "%s", r.err);
  ASSERT_HAS (r.err, "cgroup limits are required by the policy but could not be applied", &r);
  ASSERT_HAS (r.err, "Permission denied", &r);
  run_free (&r);
}

/* A best-effort protection the host does not give is said, once, and
 * nothing inside pretends it holds: as an unprivileged caller without a
 * delegated cgroup, r still runs, stderr names the cgroup limits that were
 * not applied, and /proc/meminfo shows no 1 GiB that nothing enforces.
 * As root, where the limits hold, there is no such line and meminfo shows
 * the limit. */
Test (attacks, r_without_its_cgroup_limits_says_so_and_shows_no_memory_limit)
{
  const char *code = "m <- readLines('/proc/meminfo'); cat('lines', length(m), '\\n'); "
                     "cat(grep('^MemTotal', m, value = TRUE), '\\n')";
  if (geteuid () != 0)
    cr_skip_test ("needs root, to become an unprivileged user and to compare with root's sandboxes");
  struct opts o = { .stdin_fd = -1, .unprivileged = true };
  struct run r = { 0 };
  run_r (code, &o, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  const char *warn = "securer: warning: best-effort protections not applied: cgroup memory, pids, cpu limits";
  const char *at = strstr (r.err, warn);
  if (nobody_gets_cgroups (env_or ("SECURER_BIN", SECURER_ABS_BUILDDIR "/securer")))
    {
      ASSERT_HAS (r.out, "MemTotal:        1048576 kB", &r);
      cr_assert_not (strstr (r.err, "best-effort protections not applied"), "%s", r.err);
    }
  else
    {
      cr_assert_not_null (at, "nothing said of the missing limits:\n%s", r.err);
      cr_assert_null (strstr (at + 1, warn), "said more than once:\n%s", r.err);
      ASSERT_HAS (r.out, "lines 0", &r);
    }
  run_free (&r);

  struct run full = { 0 };
  run_r (code, NULL, &full);
  cr_assert_eq (full.status, 0, "%s", full.err);
  json_t *cg = json_object_get (json_object_get (full.st, "enforced"), "cgroup");
  cr_assert (json_is_integer (json_object_get (cg, "memory")), "no memory cgroup for root:\n%s", full.err);
  cr_assert (json_is_null (json_object_get (full.st, "degraded")), "degraded: %s",
             json_string_value (json_object_get (full.st, "degraded")));
  cr_assert_not (strstr (full.err, "best-effort protections not applied"), "%s", full.err);
  ASSERT_HAS (full.out, "MemTotal:        1048576 kB", &full);
  run_free (&full);
}

/* Directories named `name` in the cgroup hierarchies (at most 4 levels
 * down from each mount), as paths in `out`; returns how many. */
static int
find_groups_under (const char *dir, const char *name, int depth, char out[][PATH_MAX], int n,
                   int max)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    return n;
  struct dirent *e;
  while (n < max && (e = readdir (d)) != NULL)
    {
      if (e->d_type != DT_DIR || e->d_name[0] == '.')
        continue;
      char sub[PATH_MAX];
      snprintf (sub, sizeof sub, "%s/%s", dir, e->d_name);
      if (strcmp (e->d_name, name) == 0)
        snprintf (out[n++], PATH_MAX, "%s", sub);
      else if (depth > 0)
        n = find_groups_under (sub, name, depth - 1, out, n, max);
    }
  closedir (d);
  return n;
}

static bool
group_empty (const char *dir)
{
  int d = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int fd = d >= 0 ? openat (d, "cgroup.procs", O_RDONLY | O_CLOEXEC) : -1;
  char c;
  ssize_t n = fd >= 0 ? read (fd, &c, 1) : 0;
  if (fd >= 0)
    close (fd);
  if (d >= 0)
    close (d);
  return n <= 0;
}

Test (attacks, cgroup_of_a_killed_supervisor_is_removed_by_the_next_run)
{
  if (!host_gives_cgroups ())
    cr_skip_test ("this host gives no cgroup limits");
  int p[2];
  cr_assert_eq (pipe2 (p, O_CLOEXEC), 0);
  struct opts o = { .timeout = 120, .stdin_fd = p[0] };
  struct run r = { 0 };
  const char *cmd[] = { R_BIN, "--vanilla", "--slave", "-e",
                        "cat('UP\\n'); invisible(readLines(file('stdin')))", NULL };
  start_securer (r_policy, cmd, &o, &r);
  close (p[0]);
  pid_t sup = running_pid;
  char up[16] = "";
  cr_assert (read (running_out, up, sizeof up - 1) > 0, "the sandbox did not start");
  char name[64];
  snprintf (name, sizeof name, "securer-%d-0", (int) sup);
  char groups[8][PATH_MAX];
  int n = find_groups_under ("/sys/fs/cgroup", name, 4, groups, 0, 8);
  if (n == 0)
    {
      kill (sup, SIGKILL);
      close (p[1]);
      finish_securer (&r);
      cr_assert_fail ("no group %s of the running sandbox was found", name);
    }

  /* SIGKILL: the supervisor cannot remove its groups; the sandbox dies
   * with it (parent-death signal). */
  cr_assert_eq (kill (sup, SIGKILL), 0);
  close (p[1]);
  finish_securer (&r);
  cr_assert_eq (r.status, 128 + SIGKILL);
  run_free (&r);
  /* A launch by another test running at the same time may already have
   * swept a group (the killed supervisor cannot have): only a group still
   * there is waited on. */
  for (int i = 0; i < n; i++)
    {
      for (int k = 0; k < 1000 && access (groups[i], F_OK) == 0 && !group_empty (groups[i]); k++)
        usleep (10 * 1000);
      cr_assert (access (groups[i], F_OK) < 0 || group_empty (groups[i]),
                 "the sandbox in %s outlived its supervisor", groups[i]);
    }

  /* Any later run that makes a group removes the leftovers. */
  probe (&r, NULL, "getenv", "HOME", NULL);
  cr_assert_eq (r.status, 0, "%s", r.err);
  run_free (&r);
  for (int i = 0; i < n; i++)
    cr_assert_eq (access (groups[i], F_OK), -1, "%s is still there", groups[i]);
}

Test (attacks, host_name_is_the_sandbox_s_own)
{
  char host[256] = "";
  gethostname (host, sizeof host - 1);
  struct run r = { 0 };
  run_r ("cat('NODENAME', Sys.info()[['nodename']], '\\n')", NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "NODENAME sandbox \n", &r);
  run_free (&r);
  cr_assert_str_neq (host, "sandbox", "the host itself is named sandbox: nothing is shown");
}

/* Entries of /proc that show the host or other tenants: empty inside. */
static const char *const proc_hidden[] = {
  "cmdline", "loadavg", "stat", "uptime", "interrupts", "softirqs", "diskstats", "vmstat",
  "zoneinfo", "buddyinfo", "swaps", "locks", "cgroups", "key-users", "sys/fs/file-nr", "sys/fs/inode-nr", "sys/fs/dentry-state", "sys/fs/aio-nr",
  "sys/kernel/pty/nr", "keys", "kallsyms", "config.gz",
};

Test (attacks, proc_shows_nothing_of_the_host)
{
  /* R reads each file as far as it goes and counts the bytes. */
  char code[4096] = "for (f in c(";
  for (size_t i = 0; i < sizeof proc_hidden / sizeof *proc_hidden; i++)
    {
      char one[96];
      snprintf (one, sizeof one, "%s'/proc/%s'", i ? "," : "", proc_hidden[i]);
      strcat (code, one);
    }
  strcat (code, ")) { con <- file(f, 'rb'); n <- length(readBin(con, 'raw', 1e6)); close(con);"
                " cat('PROC', f, n, '\\n') };"
                " cat('PRESSURE', length(list.files('/proc/pressure')), '\\n')");
  struct run r = { 0 };
  run_r (code, NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  for (size_t i = 0; i < sizeof proc_hidden / sizeof *proc_hidden; i++)
    {
      char path[128], line[160];
      snprintf (path, sizeof path, "/proc/%s", proc_hidden[i]);
      if (access (path, R_OK) != 0)
        continue;   /* not on this kernel (or not readable): nothing to hide */
      snprintf (line, sizeof line, "PROC %s 0 \n", path);
      ASSERT_HAS (r.out, line, &r);
    }
  if (access ("/proc/pressure", F_OK) == 0)
    ASSERT_HAS (r.out, "PRESSURE 0 \n", &r);
  run_free (&r);
  /* Nothing can be written into them either: Landlock (proc is read-only
   * to it) refuses before the read-only mount would (EROFS, test-rootfs). */
  probe (&r, NULL, "write", "/proc/loadavg", NULL);
  ASSERT_HAS (r.out, "write = EACCES\n", &r);
  run_free (&r);
}

static void
read_line_of (const char *path, char *buf, size_t len)
{
  FILE *f = fopen (path, "re");
  cr_assert_not_null (f, "%s", path);
  cr_assert_not_null (fgets (buf, (int) len, f));
  fclose (f);
}

Test (attacks, boot_id_and_meminfo_are_per_sandbox)
{
  /* Two sandboxes at once: each reads its boot id; the first waits for its
   * stdin so that both are up together. */
  int p[2];
  cr_assert_eq (pipe2 (p, O_CLOEXEC), 0);
  struct opts o = { .timeout = 120, .stdin_fd = p[0] };
  struct run a = { 0 }, b = { 0 };
  const char *cmd[] = { R_BIN, "--vanilla", "--slave", "-e",
                        "cat('BOOT', readLines('/proc/sys/kernel/random/boot_id'), '\\n');"
                        " invisible(readLines(file('stdin')))", NULL };
  start_securer (r_policy, cmd, &o, &a);
  close (p[0]);
  pid_t apid = running_pid;
  int aout = running_out, aerr = running_err;
  running_pid = 0;
  run_r ("cat('BOOT', readLines('/proc/sys/kernel/random/boot_id'), '\\n');"
         " m <- readLines('/proc/meminfo'); cat(m[1:3], sep = '\\n')",
         NULL, &b);
  close (p[1]);
  collect (&a, apid, aout, aerr);
  cr_assert_eq (a.status, 0, "%s", a.err);
  cr_assert_eq (b.status, 0, "%s", b.err);

  char host[64], ida[64] = "", idb[64] = "";
  read_line_of ("/proc/sys/kernel/random/boot_id", host, sizeof host);
  host[strcspn (host, "\n")] = '\0';
  cr_assert_eq (sscanf (strstr (a.out, "BOOT ") ? strstr (a.out, "BOOT ") : "", "BOOT %63s", ida),
                1, "%s", a.out);
  cr_assert_eq (sscanf (strstr (b.out, "BOOT ") ? strstr (b.out, "BOOT ") : "", "BOOT %63s", idb),
                1, "%s", b.out);
  cr_assert_eq (strlen (ida), 36, "%s", ida);
  cr_assert_eq (ida[14], '4', "not a random (version 4) id: %s", ida);
  cr_assert_str_neq (ida, idb, "two sandboxes share a boot id");
  cr_assert_str_neq (ida, host, "the host's boot id is visible");
  cr_assert_str_neq (idb, host, "the host's boot id is visible");

  /* meminfo: the sandbox's own memory, the cgroup limit of r.policy. */
  char want[64];
  snprintf (want, sizeof want, "MemTotal:       %8llu kB\n",
            (unsigned long long) (R->limits.cgroup_memory / 1024));
  ASSERT_HAS (b.out, want, &b);
  snprintf (want, sizeof want, "MemAvailable:   %8llu kB\n",
            (unsigned long long) (R->limits.cgroup_memory / 1024));
  ASSERT_HAS (b.out, want, &b);
  run_free (&a);
  run_free (&b);
}

/* ---- processes, environment, terminal ------------------------------------ */

Test (attacks, host_processes_invisible_and_unsignalable)
{
  struct run r = { 0 };
  probe (&r, NULL, "pids", NULL, NULL);
  cr_assert_eq (r.status, 0, "%s", r.err);
  /* pid 1 is the sandbox's init, 2 the probe itself. */
  ASSERT_HAS (r.out, "pids = 1 2\n", &r);
  run_free (&r);
  char pid[16];
  snprintf (pid, sizeof pid, "%d", (int) getpid ());
  probe (&r, NULL, "kill", pid, NULL);
  ASSERT_HAS (r.out, "kill = ESRCH\n", &r);
  run_free (&r);
  /* Its own init is outside the Landlock domain: scoped signals stop it. */
  probe (&r, NULL, "kill", "1", NULL);
  ASSERT_HAS (r.out, "kill = EPERM\n", &r);
  run_free (&r);
}

Test (attacks, caller_environment_secret)
{
  struct run r = { 0 };
  run_r ("cat('SECRET: [', Sys.getenv('SECURER_TEST_SECRET'), ']\\n', sep = '');"
         " e <- tryCatch(readBin('/proc/1/environ', 'raw', 1e6), error = function(e) raw(0),"
         " warning = function(w) raw(0));"
         " cat('INIT_ENV_HAS_SECRET:', grepl('caller-env-secret', rawToChar(e[e != 0])), '\\n')",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "SECRET: []", &r);
  ASSERT_HAS (r.out, "INIT_ENV_HAS_SECRET: FALSE", &r);
  cr_assert (strstr (r.out, "caller-env-secret") == NULL);
  run_free (&r);
}

Test (attacks, tiocsti_on_inherited_terminal)
{
  int master, slave;
  cr_assert_eq (openpty (&master, &slave, NULL, NULL, NULL), 0);
  /* The terminal is the payload's own stdin only when the caller asks. */
  struct opts o = { .stdin_fd = slave, .inherit_stdio = true };
  struct run r = { 0 };
  probe (&r, &o, "tiocsti", NULL, NULL);
  uint64_t args[6] = { 0, 0x5412 /* TIOCSTI */, 0, 0, 0, 0 };
  struct securer_action a = policy_action ("ioctl", args);
  char want[64];
  if (a.type == SECURER_ACT_ERRNO)
    snprintf (want, sizeof want, "tiocsti = %s\n", strerrorname_np (a.errnum));
  else
    /* The filter lets it through: the payload runs in its own session, so
     * the terminal is not its controlling one and the kernel says EPERM. */
    snprintf (want, sizeof want, "tiocsti = EPERM\n");
  ASSERT_HAS (r.out, want, &r);
  run_free (&r);

  /* The real cause: make the terminal the probe's controlling one (it is
   * a session leader without one), which would satisfy the kernel's own
   * check; what still refuses TIOCSTI is then the filter. */
  probe (&r, &o, "tiocsti-ctty", NULL, NULL);
  close (slave);
  ASSERT_HAS (r.out, "tiocsctty = ok 0\n", &r);
  cr_assert_eq (a.type, SECURER_ACT_ERRNO, "r.policy's filter does not refuse TIOCSTI");
  ASSERT_HAS (r.out, want, &r);
  /* Nothing reached the terminal's input queue. */
  int fl = fcntl (master, F_GETFL);
  fcntl (master, F_SETFL, fl | O_NONBLOCK);
  char c;
  ssize_t n = read (master, &c, 1);
  cr_assert (n <= 0, "a character was injected");
  close (master);
  run_free (&r);
}

/* ---- kernel attack surface: the policy's seccomp answer ---------------- */

Test (attacks, ptrace)
{
  uint64_t a[6] = { 16 /* PTRACE_ATTACH */, 1 };
  check_syscall_denied ("ptrace", a, NULL);
}

Test (attacks, mount)
{
  uint64_t a[6] = { 0 };
  check_syscall_denied ("mount", a, NULL);
}

Test (attacks, unshare_user)
{
  /* unshare is not a syscall of r.policy's allowlist; the probe's name
   * differs from the syscall's, so ask the policy about "unshare". */
  uint64_t a[6] = { 0x10000000 /* CLONE_NEWUSER */ };
  struct securer_action act = policy_action ("unshare", a);
  struct run r = { 0 };
  probe (&r, NULL, "unshare-user", NULL, NULL);
  if (act.type == SECURER_ACT_ERRNO)
    {
      char want[64];
      snprintf (want, sizeof want, "unshare-user = %s\n", strerrorname_np (act.errnum));
      ASSERT_HAS (r.out, want, &r);
    }
  else if (act.type == SECURER_ACT_KILL_PROCESS || act.type == SECURER_ACT_KILL_THREAD)
    cr_assert_eq (r.status, 128 + SIGSYS);
  else
    cr_assert_fail ("r.policy allows unshare: %s", r.out);
  run_free (&r);
}

Test (attacks, bpf)
{
  uint64_t a[6] = { 0 };
  check_syscall_denied ("bpf", a, NULL);
}

Test (attacks, perf_event_open)
{
  uint64_t a[6] = { 0 };
  check_syscall_denied ("perf_event_open", a, NULL);
}

Test (attacks, keyctl)
{
  uint64_t a[6] = { 0, (uint64_t) -3, 1 };
  check_syscall_denied ("keyctl", a, NULL);
}

Test (attacks, userfaultfd)
{
  uint64_t a[6] = { O_CLOEXEC };
  check_syscall_denied ("userfaultfd", a, NULL);
}

Test (attacks, io_uring_setup)
{
  uint64_t a[6] = { 1 };
  check_syscall_denied ("io_uring_setup", a, NULL);
}

Test (attacks, open_by_handle_at)
{
  uint64_t a[6] = { (uint64_t) AT_FDCWD };
  check_syscall_denied ("open_by_handle_at", a, NULL);
}

Test (attacks, personality)
{
  uint64_t a[6] = { 0x0400000 /* READ_IMPLIES_EXEC */ };
  check_syscall_denied ("personality", a, NULL);
}

/* ---- other tenants and the host: page cache, KSM, writeback, ldiscs ------- */

/* R's files are shared by every sandbox on the host: evicting their pages
 * from the page cache (fadvise DONTNEED, and NOREUSE since Linux 6.3)
 * slows the other tenants down, and a read that may not wait (RWF_NOWAIT)
 * then says which pages someone else brought back, i.e. what they read.
 * Advice that only brings pages in stays, and so do ordinary reads. */
Test (attacks, page_cache_of_shared_files_cannot_be_evicted_or_probed)
{
  struct run r = { 0 };
  probe (&r, NULL, "pagecache", "/usr/lib/R/library/base/DESCRIPTION", NULL);
  cr_assert_eq (r.status, 0, "status %d\n%s%s", r.status, r.out, r.err);
  ASSERT_HAS (r.out, "fadvise-normal = ok 0\n", &r);
  ASSERT_HAS (r.out, "fadvise-willneed = ok 0\n", &r);
  ASSERT_HAS (r.out, "fadvise-dontneed = EPERM\n", &r);
  ASSERT_HAS (r.out, "fadvise-noreuse = EPERM\n", &r);
  ASSERT_HAS (r.out, "fadvise-dontneed-hi = EPERM\n", &r);
  ASSERT_HAS (r.out, "preadv2 = ok 64\n", &r);
  /* What the kernel says of a file that cannot be read without waiting:
   * callers fall back to an ordinary read. */
  ASSERT_HAS (r.out, "preadv2-nowait = EOPNOTSUPP\n", &r);
  ASSERT_HAS (r.out, "preadv2-nowait-hipri = EOPNOTSUPP\n", &r);
  run_free (&r);
  probe (&r, NULL, "nowait-write", "/tmp/w", NULL);
  cr_assert_eq (r.status, 0, "status %d\n%s%s", r.status, r.out, r.err);
  ASSERT_HAS (r.out, "pwritev2 = ok 1\n", &r);
  ASSERT_HAS (r.out, "pwritev2-nowait = EOPNOTSUPP\n", &r);
  run_free (&r);
}

/* Pages KSM merged with another process's are copied again on the first
 * write, which takes measurably longer: whether a write is slow says
 * whether some other tenant holds a page with the same contents. */
Test (attacks, memory_cannot_be_offered_to_ksm)
{
  struct run r = { 0 };
  probe (&r, NULL, "ksm", NULL, NULL);
  cr_assert_eq (r.status, 0, "status %d\n%s%s", r.status, r.out, r.err);
  ASSERT_HAS (r.out, "madvise-mergeable = EPERM\n", &r);
  ASSERT_HAS (r.out, "process_madvise-mergeable = EPERM\n", &r);
  ASSERT_HAS (r.out, "prctl-memory-merge = EINVAL\n", &r);
  /* Taking memory out of KSM, freeing it, and naming a thread stay. */
  ASSERT_HAS (r.out, "madvise-unmergeable = ok 0\n", &r);
  ASSERT_HAS (r.out, "madvise-dontneed = ok 0\n", &r);
  ASSERT_HAS (r.out, "prctl-set-name = ok 0\n", &r);
  ASSERT_HAS (r.out, "prctl-get-name = ok 0\n", &r);
  ASSERT_HAS (r.out, "name = probe\n", &r);
  run_free (&r);
}

/* A sandbox given ptys (r gives none: `limit ptys 0`) has /dev/ptmx, and
 * with the host's dev.tty.ldisc_autoload (on by default) TIOCSETD with the
 * number of a line discipline not loaded yet loads its module: n_hdlc,
 * n_gsm and others have had exploitable bugs.  The probe asks for N_TTY,
 * which the pty has already, so nothing but the filter can refuse it. */
Test (attacks, line_discipline_cannot_be_set)
{
  char pol[PATH_MAX + 32], text[PATH_MAX + 64];
  snprintf (pol, sizeof pol, "%s/ptys.policy", work);
  snprintf (text, sizeof text, "include \"%s\"\nlimit ptys 2\n", t_policy);
  write_text (pol, text, 0644);
  const char *cmd[] = { PROBE_DIR "/attack-probe", "ldisc", NULL };
  struct run r = { 0 };
  run_cmd (pol, cmd, NULL, &r);
  cr_assert_eq (r.status, 0, "status %d\n%s%s", r.status, r.out, r.err);
  ASSERT_HAS (r.out, "tiocgetd = ok 0\n", &r);
  ASSERT_HAS (r.out, "tiocsetd = EPERM\n", &r);
  run_free (&r);
}

/* sync() writes back every filesystem of the host, syncfs() the whole
 * filesystem of a descriptor (the host's root through any file of /usr):
 * every tenant's dirty data, at one sandbox's request.  The sandbox's own
 * files are still made durable one by one. */
Test (attacks, host_wide_writeback_is_not_available)
{
  struct run r = { 0 };
  probe (&r, NULL, "sync", "/tmp/s", NULL);
  cr_assert_eq (r.status, 0, "status %d\n%s%s", r.status, r.out, r.err);
  ASSERT_HAS (r.out, "fsync = ok 0\n", &r);
  ASSERT_HAS (r.out, "fdatasync = ok 0\n", &r);
  ASSERT_HAS (r.out, "syncfs = ENOSYS\n", &r);
  ASSERT_HAS (r.out, "sync = ENOSYS\n", &r);
  run_free (&r);
}

/* prctl options are an allowlist: what R, its libraries and launchers use
 * (or what only takes something away), EINVAL for the rest, as for an
 * option the kernel does not have. */
Test (attacks, prctl_options_outside_the_allowlist_are_unknown)
{
  static const struct {
    const char *option, *arg, *want;
  } cases[] = {
    { "3", "0", "ok 1" },            /* PR_GET_DUMPABLE: libblkid, libmount */
    { "1", "9", "ok 0" },            /* PR_SET_PDEATHSIG */
    { "38", "1", "ok 0" },           /* PR_SET_NO_NEW_PRIVS */
    { "39", "0", "ok 1" },           /* PR_GET_NO_NEW_PRIVS */
    { "21", "0", "ok 2" },           /* PR_GET_SECCOMP: in filter mode */
    { "23", "0", "ok 0" },           /* PR_CAPBSET_READ: the bounding set is empty */
    { "36", "1", "EINVAL" },         /* PR_SET_CHILD_SUBREAPER */
    { "29", "1", "EINVAL" },         /* PR_SET_TIMERSLACK */
    { "41", "1", "EINVAL" },         /* PR_SET_THP_DISABLE */
    { "31", "0", "EINVAL" },         /* PR_TASK_PERF_EVENTS_DISABLE */
    { "35", "1", "EINVAL" },         /* PR_SET_MM, EPERM from the kernel */
    { "57", "1", "EINVAL" },         /* PR_SET_IO_FLUSHER, EPERM from the kernel */
    { "68", "0", "EINVAL" },         /* PR_GET_MEMORY_MERGE */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      struct run r = { 0 };
      probe (&r, NULL, "prctl", cases[i].option, cases[i].arg);
      char want[64];
      snprintf (want, sizeof want, "prctl = %s\n", cases[i].want);
      cr_assert_eq (r.status, 0, "prctl %s: status %d\n%s", cases[i].option, r.status, r.err);
      cr_assert (strstr (r.out, want) != NULL, "prctl %s %s: expected \"%s\", got %s", cases[i].option,
                 cases[i].arg, want, r.out);
      run_free (&r);
    }
}

/* What R does itself under these rules: the base packages, a png()
 * device (cairo and pango, whose font thread names itself with prctl)
 * and forked workers. */
Test (attacks, r_graphics_and_workers_run_under_the_filter)
{
  struct run r = { 0 };
  run_r ("for (p in c('utils', 'stats', 'methods', 'grDevices', 'graphics'))"
         " suppressPackageStartupMessages(library(p, character.only = TRUE));"
         " png('/tmp/plot.png'); plot(1:10); text(5, 5, 'text'); invisible(dev.off());"
         " cat('PNG:', file.info('/tmp/plot.png')$size > 1000, '\\n');"
         " library(parallel); cat('MCLAPPLY:', unlist(mclapply(1:4, function(i) i * i, mc.cores = 2)), '\\n');"
         " f <- tempfile(); saveRDS(mtcars, f); cat('RDS:', identical(readRDS(f), mtcars), '\\n')",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "PNG: TRUE \n", &r);
  ASSERT_HAS (r.out, "MCLAPPLY: 1 4 9 16 \n", &r);
  ASSERT_HAS (r.out, "RDS: TRUE \n", &r);
  run_free (&r);
}

/* ---- the layers report themselves ----------------------------------------- */

Test (attacks, landlock_is_enforced_as_reported)
{
  struct run r = { 0 };
  run_r ("cat('ok\\n')", NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  json_t *enf = json_object_get (r.st, "enforced");
  json_t *ll = enf ? json_object_get (enf, "landlock") : NULL;
  cr_assert_not_null (ll, "no landlock in --json-status");
  cr_assert (json_is_true (json_object_get (ll, "enforced")));
  cr_assert_eq (json_integer_value (json_object_get (ll, "abi")), securer_landlock_abi ());
  const char *sum = json_string_value (json_object_get (ll, "summary"));
  cr_assert_not_null (sum);
  cr_assert (strncmp (sum, "landlock required, ABI ", 23) == 0, "%s", sum);
  run_free (&r);
}

/* ---- native code from plain R: W^X (base/seccomp-wx.policy) --------------- */

/* R reaches libc with dyn.load() and .C(): CALLS make the calls, then
 * perror(NAME) shows the errno they left, and no descriptor of KIND
 * (what /proc/self/fd/N links to, e.g. "memfd:") may exist. */
static void
assert_libc_calls_fail (const char *calls, const char *name, const char *kind)
{
  char code[2048], want[128];
  snprintf (code, sizeof code,
            "invisible(dyn.load('/lib/x86_64-linux-gnu/libc.so.6'));"
            " z <- function(s) c(charToRaw(s), as.raw(0)); %s;"
            " invisible(.C('perror', z('%s')));"
            " f <- list.files('/proc/self/fd', full.names = TRUE);"
            " cat('FDS:', sum(grepl('%s', Sys.readlink(f), fixed = TRUE)), '\\n')",
            calls, name, kind);
  struct run r = { 0 };
  run_r (code, NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  snprintf (want, sizeof want, "%s: Function not implemented", name);
  ASSERT_HAS (r.err, want, &r);
  ASSERT_HAS (r.out, "FDS: 0 \n", &r);
  run_free (&r);
}

/* A memfd is on no mount, so neither noexec nor Landlock's execute right
 * would stop writing an ELF into it and executing it. */
Test (attacks, native_code_memfd_from_r)
{
  assert_libc_calls_fail ("invisible(.C('memfd_create', z('payload'), 0L))", "memfd_create",
                          "memfd:");
}

Test (attacks, native_code_library_with_executable_stack)
{
  /* A library on an exec mount that asks for an executable stack: the
   * loader's mprotect(PROT_EXEC) is refused with EACCES. */
  struct run r = { 0 };
  const char *cmd[] = { R_BIN, "--vanilla", "--slave", "-e",
                        "m <- tryCatch({ dyn.load('" PROBE_DIR "/.libs/libexecstack.so'); 'LOADED' },"
                        " error = function(e) conditionMessage(e)); cat('RESULT:', m, '\\n')",
                        NULL };
  run_cmd (t_policy, cmd, NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert (strstr (r.out, "LOADED") == NULL, "%s", r.out);
  ASSERT_HAS (r.out, "cannot enable executable stack as shared object requires: Permission denied",
              &r);
  run_free (&r);
}

Test (attacks, native_code_jit_gets_no_writable_executable_memory)
{
  /* PCRE2's JIT asks for an anonymous read-write-execute mapping; refused,
   * R falls back to the interpreter and warns (the session runtime turns
   * the JIT off). */
  struct run r = { 0 };
  run_r ("options(PCRE_use_JIT = TRUE); cat('MATCH:', grepl('a+b', 'xaab', perl = TRUE), '\\n')",
         NULL, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (r.out, "MATCH: TRUE \n", &r);
  ASSERT_HAS (r.err, "PCRE JIT compilation error", &r);
  run_free (&r);
}

/* inotify instances are charged to the host user owning the sandbox's user
 * namespace: not available to R at all. */
Test (attacks, inotify_from_r)
{
  assert_libc_calls_fail ("for (i in 1:140) invisible(.C('inotify_init'))", "inotify_init",
                          "inotify");
}
