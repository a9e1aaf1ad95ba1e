/* Sessions forked from a template (src/lib/linux/zygote.c): a template
 * (tests/helpers/zygote-template) holding the host-id lease range forks
 * sessions that each enter their own namespaces as their own leased host
 * id.  Each session reports, from inside, what it sees; the host checks
 * from outside who owns it.  The template runs either in bare namespaces
 * made here or as a template sandbox (securer_zygote_template_start).
 * Root only: only root may map a range of host ids into the template. */
#include <config.h>

#include <dirent.h>
#include <poll.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include "../helpers/zygote-wire.h"
#include "linux/landlock-internal.h"
#include "linux/launch.h"
#include "linux/template.h"
#include "linux/zygote.h"
#include "run-util.h"

struct tmpl {
  struct host_id_lease own;   /* bare template: its id; fd -1 for a sandbox (the launcher holds it) */
  uint32_t own_id;
  uint32_t first, count;
  int ctl;
  pid_t pid;      /* the template (its pid 1 when bare), as the host sees it */
  struct securer_sandbox *sb;
  struct securer_policy *policy;
};

static char *
helper (void)
{
  char *dir = helpers_dir ();
  char *p = NULL;
  if (asprintf (&p, "%s/zygote-template", dir) < 0)
    abort ();
  free (dir);
  return p;
}

static void
r_policy_path (char *buf, size_t cap)
{
  snprintf (buf, cap, "%s/policies/r.policy", SECURER_ABS_SRCDIR);
}

/* Waits for the template's first byte: it runs, and its pid. */
static void
template_ready (struct tmpl *t)
{
  char c;
  t->pid = 0;
  cr_assert_eq (recv_msg (t->ctl, &c, 1, NULL, &t->pid), 0, "the template did not start");
  cr_assert (c == 'T' && t->pid > 0);
}

/* A template in namespaces made here, as pid 1, with the r policy's plans. */
static void
template_start_bare (struct tmpl *t)
{
  securer_err_t err = NULL;
  memset (t, 0, sizeof *t);
  t->own.fd = -1;
  cr_assert_eq (securer_hostids_acquire (&t->own, &err), 0, "%s", securer_error_message (err));
  t->own_id = t->own.id;
  cr_assert_eq (securer_hostids_range (&t->first, &t->count, &err), 0);
  int sv[2];
  cr_assert_eq (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  int one = 1;
  setsockopt (sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  char *path = helper ();
  char policy[PATH_MAX];
  r_policy_path (policy, sizeof policy);
  pid_t x = fork ();
  cr_assert_geq (x, 0);
  if (x == 0)
    {
      close (sv[0]);
      /* The template's user namespace is owned by its own leased id. */
      uint32_t id = t->own.id;
      if (syscall (SYS_setresgid, -1, id, -1) < 0 || syscall (SYS_setresuid, -1, id, -1) < 0
          || unshare (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
        _exit (70);
      char c = 'U';
      send_fd (sv[1], &c, 1, -1);
      if (recv (sv[1], &c, 1, 0) != 1 || c != 'G')
        _exit (71);
      if (syscall (SYS_setresgid, 0, 0, 0) < 0 || syscall (SYS_setresuid, 0, 0, 0) < 0
          || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        _exit (72);
      pid_t init = fork ();
      if (init == 0)
        {
          if (dup2 (sv[1], 3) < 0)
            _exit (74);
          execl (path, path, "--mount-proc", "--confine", policy, (char *) NULL);
          _exit (75);
        }
      _exit (init < 0 ? 73 : 0);
    }
  free (path);
  close (sv[1]);
  t->ctl = sv[0];
  char c;
  cr_assert_eq (recv_msg (sv[0], &c, 1, NULL, NULL), 0, "the template did not unshare");
  cr_assert_eq (securer_zygote_template_maps (x, t->own.id, t->first, t->count, &err), 0, "%s",
                securer_error_message (err));
  c = 'G';
  send_fd (sv[0], &c, 1, -1);
  int st;
  cr_assert_eq (waitpid (x, &st, 0), x);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "template setup status %#x", st);
  template_ready (t);
}

/* A template sandbox of the launcher's test policy (no Landlock, no seccomp). */
static void
template_start_sandbox (struct tmpl *t)
{
  securer_err_t err = NULL;
  memset (t, 0, sizeof *t);
  t->own.fd = -1;
  cr_assert_eq (securer_hostids_range (&t->first, &t->count, &err), 0);
  int sv[2];
  cr_assert_eq (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  int one = 1;
  setsockopt (sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  t->policy = test_policy ();
  /* A policy mask below /proc: the template sandbox cannot have it (its
   * proc is bare), each session applies it to its own. */
  t->policy->masks = calloc (1, sizeof *t->policy->masks);
  t->policy->masks[t->policy->n_masks++] = xstrdup ("/proc/version");
  char *path = helper ();
  char *argv[] = { path, (char *) "--mask", (char *) "/proc/version", NULL };
  struct securer_spawn_opts so = { .policy = t->policy, .argv = argv, .stdin_fd = -1, .stdout_fd = -1,
                                   .stderr_fd = -1, .pass_fds = &sv[1], .n_pass_fds = 1 };
  cr_assert_eq (securer_zygote_template_start (&so, &t->sb, &err), 0, "%s", securer_error_message (err));
  free (path);
  close (sv[1]);
  t->ctl = sv[0];
  template_ready (t);
  struct stat st;
  char proc[32];
  snprintf (proc, sizeof proc, "/proc/%d", (int) t->pid);
  cr_assert_eq (stat (proc, &st), 0);
  t->own_id = st.st_uid;
  /* The template keeps CAP_SETUID and CAP_SETGID (6, 7), nothing else. */
  char status[64], line[256];
  snprintf (status, sizeof status, "/proc/%d/status", (int) t->pid);
  FILE *f = fopen (status, "re");
  cr_assert_not_null (f);
  unsigned long long eff = ~0ull, bnd = ~0ull;
  while (fgets (line, sizeof line, f))
    if (sscanf (line, "CapEff: %llx", &eff) == 1 || sscanf (line, "CapBnd: %llx", &bnd) == 1)
      continue;
  fclose (f);
  cr_expect_eq (eff, 0xc0ull, "template CapEff %llx", eff);
  cr_expect_eq (bnd, 0xc0ull, "template CapBnd %llx", bnd);
}

static void
template_stop (struct tmpl *t)
{
  if (t->sb != NULL)
    {
      securer_err_t err = NULL;
      securer_sandbox_kill (t->sb, &err);
      securer_sandbox_free (t->sb);
      securer_policy_free (t->policy);
    }
  else
    /* The end of the template's pid 1 ends every process of its pid
     * namespace, the sessions' nested ones included. */
    kill (t->pid, SIGKILL);
  close (t->ctl);
  securer_hostids_release (&t->own);
}

struct session {
  struct host_id_lease lease;
  int sock;
  pid_t pid;      /* the session's pid 1 as the host sees it */
  struct report r;
};

/* Asks the template for a session as host id `host`; returns its first report. */
static void
session_request (struct tmpl *t, struct session *s, uint32_t host, int confine)
{
  securer_err_t err = NULL;
  struct request q = { .confine = confine };
  cr_assert_eq (securer_zygote_index (host, t->first, t->count, &q.index, &err), 0, "%s",
                securer_error_message (err));
  int sp[2];
  cr_assert_eq (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
  int one = 1;
  setsockopt (sp[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  send_fd (t->ctl, &q, sizeof q, sp[1]);
  close (sp[1]);
  s->sock = sp[0];
  s->pid = 0;
  cr_assert_eq (recv_msg (s->sock, &s->r, sizeof s->r, NULL, &s->pid), 0, "no report from session %u", q.index);
}

static void
session_lease (struct session *s)
{
  securer_err_t err = NULL;
  s->lease.fd = -1;
  cr_assert_eq (securer_hostids_acquire (&s->lease, &err), 0, "%s", securer_error_message (err));
}

static uid_t
ns_owner (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "%s: %s", path, strerror (errno));
  uid_t u = (uid_t) -1;
  cr_assert_eq (ioctl (fd, NS_GET_OWNER_UID, &u), 0, "NS_GET_OWNER_UID: %s", strerror (errno));
  close (fd);
  return u;
}

static void
require_root (void)
{
  if (geteuid () != 0)
    cr_skip_test ("only root may map the host-id lease range into a template");
}

static void
concurrent_sessions (struct tmpl *t)
{
  struct session s[2];
  for (int i = 0; i < 2; i++)
    {
      session_lease (&s[i]);
      session_request (t, &s[i], s[i].lease.id, 0);
      cr_assert_eq (s[i].r.kind, 'S', "session %d: %s (errno %d)", i, s[i].r.text, s[i].r.errnum);
    }
  cr_assert_neq (s[0].lease.id, s[1].lease.id);
  for (int i = 0; i < 2; i++)
    {
      struct report *r = &s[i].r;
      /* From inside: pid 1 of its own pid namespace, alone in its /proc
       * (neither the template nor the other session), masked, its own id
       * and hostname. */
      cr_expect_eq (r->is_pid1, 1, "session %d is not pid 1", i);
      cr_expect_eq (r->procs, 1, "session %d sees %d processes in /proc", i, r->procs);
      cr_expect_eq (r->keys_masked, 1, "session %d: /proc/keys is not masked", i);
      cr_expect_eq (r->version_masked, t->sb != NULL, "session %d: /proc/version masked: %d", i, r->version_masked);
      /* Nothing of the caller's environment in a template sandbox's
       * sessions; the bare template is exec'd with it, which shows the
       * check sees it when it is there. */
      cr_expect_eq (r->caller_env, t->sb == NULL, "session %d: caller's environment seen: %d", i, r->caller_env);
      cr_expect_eq (r->uid, ZYGOTE_INSIDE);
      cr_expect_eq (r->gid, ZYGOTE_INSIDE);
      char name[32];
      snprintf (name, sizeof name, "session-%u", s[i].lease.id - t->first + 1);
      cr_expect_str_eq (r->hostname, name);
      /* From outside: its user namespace and its process belong to its
       * own leased host id, not the template's. */
      cr_assert_gt (s[i].pid, 0);
      cr_expect_eq (ns_owner (s[i].pid), s[i].lease.id, "session %d's user namespace owner", i);
      struct stat st;
      char path[32];
      snprintf (path, sizeof path, "/proc/%d", (int) s[i].pid);
      cr_assert_eq (stat (path, &st), 0);
      cr_expect_eq (st.st_uid, s[i].lease.id, "session %d runs as host uid %u", i, (unsigned) st.st_uid);
      cr_expect_neq (ns_owner (s[i].pid), t->own_id);
    }
  /* Both have written their markers and are alive: each /tmp holds its
   * own and nothing of the other. */
  for (int i = 0; i < 2; i++)
    {
      char go = 'C';
      cr_assert_eq (send (s[i].sock, &go, 1, MSG_NOSIGNAL), 1);
      cr_assert_eq (recv_msg (s[i].sock, &s[i].r, sizeof s[i].r, NULL, NULL), 0);
      cr_expect_eq (s[i].r.own_marker, 1, "session %d lost its own /tmp file", i);
      cr_expect_eq (s[i].r.foreign_markers, 0, "session %d sees another session's /tmp file", i);
    }
  for (int i = 0; i < 2; i++)
    {
      close (s[i].sock);
      securer_hostids_release (&s[i].lease);
    }
  template_stop (t);
}

Test (zygote, concurrent_sessions_are_apart)
{
  require_root ();
  setenv (ZYGOTE_CALLER_ENV, "caller-only", 1);
  struct tmpl t;
  template_start_bare (&t);
  concurrent_sessions (&t);
}

/* The same from a template sandbox of a policy: pivot_root'ed view, bare
 * proc, securer-init as pid 1, the launcher's own lease for the template. */
Test (zygote, sessions_of_a_template_sandbox_are_apart)
{
  require_root ();
  setenv (ZYGOTE_CALLER_ENV, "caller-only", 1);
  struct tmpl t;
  template_start_sandbox (&t);
  concurrent_sessions (&t);
}

/* A session may only become an id of the lease range the template maps;
 * the template's own index is left unmapped.  Either is refused at the
 * first step, with the kernel's EINVAL, not carried on as another id. */
Test (zygote, unmapped_index_is_refused)
{
  require_root ();
  struct tmpl t;
  template_start_bare (&t);
  struct session s;
  session_request (&t, &s, t.own_id, 0);
  cr_assert_eq (s.r.kind, 'E', "the template's own id was given to a session");
  cr_expect_eq (s.r.errnum, EINVAL, "errno %d: %s", s.r.errnum, s.r.text);
  cr_expect (strstr (s.r.text, "in the template") != NULL, "%s", s.r.text);
  close (s.sock);
  template_stop (&t);
}

Test (zygote, index_outside_the_range)
{
  securer_err_t err = NULL;
  uint32_t index = 0;
  cr_expect_eq (securer_zygote_index (99, 100, 10, &index, &err), -1);
  cr_expect_eq (securer_error_errno (err), ERANGE);
  cr_expect_eq (securer_zygote_index (110, 100, 10, &index, &err), -1);
  cr_expect_eq (securer_zygote_index (109, 100, 10, &index, &err), 0);
  cr_expect_eq (index, 10u);
  securer_error_free (&err);
}

/* The payload of a session from the template gets what a cold r.policy
 * sandbox gets: the filter's errnos and kill, Landlock, the limits
 * (tests/policies/r.expect and common.expect). */
Test (zygote, session_confines_itself_as_the_policy_says)
{
  require_root ();
  struct tmpl t;
  template_start_bare (&t);
  struct session s;
  session_lease (&s);
  session_request (&t, &s, s.lease.id, 1);
  cr_assert_eq (s.r.kind, 'P', "%s (errno %d)", s.r.text, s.r.errnum);
  cr_expect_eq (s.r.memfd_before, 0, "memfd_create before confinement: %s", strerror (s.r.memfd_before));
  cr_expect_eq (s.r.memfd_after, ENOSYS, "memfd_create: %s", strerror (s.r.memfd_after));
  cr_expect_eq (s.r.mmap_wx, EPERM, "mmap rwx: %s", strerror (s.r.mmap_wx));
  cr_expect_eq (s.r.open_passwd, EACCES, "open /etc/passwd: %s", strerror (s.r.open_passwd));
  cr_expect_eq (s.r.mount_after, SIGSYS, "mount: ended by signal %d", s.r.mount_after);
  cr_expect_eq (s.r.tmp_write, 0, "write in the session's /tmp: %s", strerror (s.r.tmp_write));
  cr_expect_eq (s.r.as_limit, 512ull << 20);
  close (s.sock);
  securer_hostids_release (&s.lease);
  template_stop (&t);
}

/* Refusals come before any step: the process is left as it was. */
Test (zygote, confinement_refuses_what_it_cannot_give)
{
  securer_err_t err = NULL;
  char path[PATH_MAX];
  r_policy_path (path, sizeof path);
  struct securer_policy *p;
  cr_assert_eq (securer_policy_load_file (path, &p, NULL, &err), 0, "%s", securer_error_message (err));
  cr_assert (p->seccomp.enabled);
  struct rlimit_plan rl = { 0 };
  struct securer_landlock_report rep;
  struct securer_zygote_confinement c = { .p = p, .rlimits = &rl };
  cr_expect_eq (securer_zygote_confine (&c, &rep, &err), -1);
  cr_expect_eq (securer_error_errno (err), EINVAL, "%s", securer_error_message (err));
  securer_error_free (&err);
  static const struct sock_filter allow[] = { BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
  c.filter = allow;
  c.n_insns = 1;
  c.filter_flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
  cr_expect_eq (securer_zygote_confine (&c, &rep, &err), -1);
  cr_expect_eq (securer_error_errno (err), ENOTSUP, "%s", securer_error_message (err));
  securer_error_free (&err);
  cr_expect_eq (prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0, "a refusal set no_new_privs");
  securer_policy_free (p);
}

/* A template is refused, not started half-confined, when its policy has
 * Landlock or seccomp (a Landlock domain would forbid every session's
 * mounts). */
Test (zygote, template_with_landlock_is_refused)
{
  require_root ();
  securer_err_t err = NULL;
  struct securer_policy *p = test_policy ();
  p->landlock.mode = SECURER_ENFORCE_REQUIRED;
  char *path = helper ();
  char *argv[] = { path, NULL };
  struct securer_spawn_opts so = { .policy = p, .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 };
  struct securer_sandbox *sb = NULL;
  cr_expect_eq (securer_zygote_template_start (&so, &sb, &err), -1);
  cr_expect_eq (securer_error_errno (err), EINVAL, "%s", securer_error_message (err));
  cr_expect_null (sb);
  securer_error_free (&err);
  free (path);
  securer_policy_free (p);
}

/* ---- R from a template ---------------------------------------------------- */

#define R_BIN "/usr/lib/R/bin/exec/R"

/* Both ways R reads one expression from its channel (fd 0), evaluates it
 * and writes the deparsed value back on the same socket. */
#define R_EVAL_ONE                                                                                   \
  "i <- file('stdin', 'r'); o <- file('stdin', 'w'); code <- readLines(i, 1L);"                    \
  "v <- tryCatch(eval(parse(text = code), globalenv()), error = function(e) paste('error:', "      \
  "conditionMessage(e)));"                                                                         \
  "writeLines(paste(deparse(v), collapse = ' '), o); flush(o); quit(save = 'no')"

static const char *const r_exprs[] = {
  "sum(1:10)",
  "rev(letters[1:3])",
  "Sys.getpid()",
  "getwd()",
  "Sys.getenv(c('HOME', 'TMPDIR', 'PATH', 'R_HOME'))",
  "Sys.getenv('" ZYGOTE_CALLER_ENV "', 'absent')",
  "length(list.files('/tmp', all.files = TRUE, no.. = TRUE))",
  "dir.exists(tempdir())",
  "unname(Sys.info()[c('sysname', 'nodename')])",
  "tryCatch(readLines('/etc/passwd', 1L), error = function(e) 'refused', warning = function(w) 'refused')",
  "search()",
  "exists('.Random.seed', globalenv())",
  "format(1/3, digits = 17)",
  "as.integer(system('exit 3'))",
  "{ cat('to its own stdout\\n'); flush(stdout()); 0L }",
  /* Its descriptors but stdout and stderr (those are the test's for a cold
   * R, the session's own pipe below) and the file R -e reads its script
   * from (only a cold R still has it open): the channel and R's own. */
  ("{ f <- list.files('/proc/self/fd', full.names = TRUE); f <- f[!basename(f) %in% c('1', '2')];"
   "sub('\\\\[[0-9]+\\\\]', '', grep('Rscript', Sys.readlink(f), value = TRUE, invert = TRUE)) }"),
};
#define N_EXPRS (sizeof r_exprs / sizeof *r_exprs)

static char *const r_env[] = { (char *) "R_SHARE_DIR=/usr/share/R/share", (char *) "R_INCLUDE_DIR=/usr/share/R/include",
                               (char *) "R_DOC_DIR=/usr/share/R/doc", (char *) "LANG=C.UTF-8", NULL };

/* Sends one expression on sock and reads the one-line answer. */
static void
r_ask (int sock, const char *expr, char *out, size_t cap)
{
  char line[1024];
  snprintf (line, sizeof line, "%s\n", expr);
  cr_assert_eq (write (sock, line, strlen (line)), (ssize_t) strlen (line));
  size_t len = 0;
  while (len + 1 < cap)
    {
      struct pollfd pfd = { sock, POLLIN, 0 };
      cr_assert_eq (poll (&pfd, 1, 60000), 1, "no answer to %s (got '%.*s')", expr, (int) len, out);
      ssize_t n = read (sock, out + len, cap - 1 - len);
      cr_assert_geq (n, 0, "read the answer to %s: %s", expr, strerror (errno));
      if (n == 0)
        break;
      len += (size_t) n;
      if (memchr (out, '\n', len))
        break;
    }
  out[len] = '\0';
  out[strcspn (out, "\n")] = '\0';
}

static void
r_cold (struct securer_policy *p, char answers[][512])
{
  char script[] = R_EVAL_ONE;
  char *argv[] = { (char *) R_BIN, (char *) "--vanilla", (char *) "--no-echo", (char *) "--no-restore",
                   (char *) "-e", script, NULL };
  for (size_t i = 0; i < N_EXPRS; i++)
    {
      int sp[2];
      cr_assert_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
      securer_err_t err = NULL;
      struct securer_sandbox *sb;
      struct securer_spawn_opts so = { .policy = p, .argv = argv, .extra_env = r_env, .stdin_fd = sp[1],
                                       .stdout_fd = -1, .stderr_fd = -1 };
      cr_assert_eq (securer_sandbox_spawn (&so, &sb, &err), 0, "%s", securer_error_message (err));
      close (sp[1]);
      r_ask (sp[0], r_exprs[i], answers[i], 512);
      struct securer_status st;
      cr_assert_eq (securer_sandbox_wait (sb, &st, &err), 1, "%s", securer_error_message (err));
      cr_expect_eq (securer_status_exit_code (&st), 0, "cold R for %s", r_exprs[i]);
      securer_status_clear (&st);
      securer_sandbox_free (sb);
      close (sp[0]);
    }
}

/* The template's R: loads the module from fd 4 and forks on request; each
 * session answers one expression. */
#define R_TEMPLATE_SCRIPT                                                                             \
  "dyn.load('/proc/self/fd/4');"                                                                    \
  "repeat { if (.C('securer_zygote_r_serve', r = 0L)$r != 1L) quit(save = 'no');"                   \
  "invisible(tempdir(check = TRUE)); " R_EVAL_ONE " }"

static struct securer_template *
r_template_start (const struct securer_policy *p)
{
  char script[] = R_TEMPLATE_SCRIPT;
  char *argv[] = { (char *) R_BIN, (char *) "--vanilla", (char *) "--no-echo", (char *) "--no-restore",
                   (char *) "-e", script, NULL };
  struct securer_template_opts o = { .policy = p, .argv = argv, .extra_env = r_env, .stdin_fd = -1,
                                     .stderr_fd = -1 };
  securer_err_t err = NULL;
  struct securer_template *t;
  cr_assert_eq (securer_template_start (&o, &t, &err), 0, "%s", securer_error_message (err));
  return t;
}

/* A session from t with its channel (returned) and stdout on *out_r. */
static struct securer_sandbox *
r_template_session (struct securer_template *t, int *chan, int *out_r, uint64_t timeout_ms)
{
  int sp[2], out[2];
  cr_assert_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
  cr_assert_eq (pipe2 (out, O_CLOEXEC), 0);
  struct securer_spawn_opts so = { .stdin_fd = sp[1], .stdout_fd = out[1], .stderr_fd = 2, .timeout_ms = timeout_ms };
  securer_err_t err = NULL;
  struct securer_sandbox *sb;
  cr_assert_eq (securer_template_spawn (t, &so, &sb, &err), 0, "%s", securer_error_message (err));
  close (sp[1]);
  close (out[1]);
  *chan = sp[0];
  *out_r = out[0];
  return sb;
}

static void
r_template (const char *policy_path, char answers[][512])
{
  securer_err_t err = NULL;
  struct securer_policy *p;
  cr_assert_eq (securer_policy_load_file (policy_path, &p, NULL, &err), 0, "%s", securer_error_message (err));
  struct securer_template *t = r_template_start (p);
  for (size_t i = 0; i < N_EXPRS; i++)
    {
      int chan, out;
      struct securer_sandbox *sb = r_template_session (t, &chan, &out, 0);
      r_ask (chan, r_exprs[i], answers[i], 512);
      close (chan);
      /* What the session printed is in its own pipe, and only there: the
       * write end closes when it ends (nothing else holds it). */
      char printed[256];
      size_t len = 0;
      ssize_t n;
      while (len + 1 < sizeof printed && (n = read (out, printed + len, sizeof printed - 1 - len)) > 0)
        len += (size_t) n;
      printed[len] = '\0';
      close (out);
      if (strstr (r_exprs[i], "its own stdout") != NULL)
        cr_expect_str_eq (printed, "to its own stdout\n");
      else
        cr_expect_str_eq (printed, "", "%s printed '%s'", r_exprs[i], printed);
      struct securer_status st;
      cr_assert_eq (securer_sandbox_wait (sb, &st, &err), 1, "%s", securer_error_message (err));
      cr_expect_eq (securer_status_exit_code (&st), 0, "template session for %s", r_exprs[i]);
      securer_status_clear (&st);
      securer_sandbox_free (sb);
    }
  securer_template_free (t);
  securer_policy_free (p);
}

/* An R session forked from a template R (src/runtime/zygote) answers a
 * set of expressions exactly as a cold R sandbox of the same policy does:
 * values, its pid, cwd, environment (nothing of the caller's), its own
 * /tmp with a temporary directory, hostname, what Landlock refuses, the
 * attached packages, an unseeded RNG, a child process. */
Test (zygote, r_session_from_a_template_answers_as_cold, .timeout = 300)
{
  require_root ();
  if (access (R_BIN, X_OK) != 0)
    cr_skip_test ("R is not installed (%s)", R_BIN);
  setenv (ZYGOTE_CALLER_ENV, "caller-only", 1);
  char path[PATH_MAX];
  r_policy_path (path, sizeof path);
  securer_err_t err = NULL;
  struct securer_policy *p;
  cr_assert_eq (securer_policy_load_file (path, &p, NULL, &err), 0, "%s", securer_error_message (err));
  static char cold[N_EXPRS][512], tmpl[N_EXPRS][512];
  r_cold (p, cold);
  r_template (path, tmpl);
  for (size_t i = 0; i < N_EXPRS; i++)
    {
      cr_expect_str_eq (tmpl[i], cold[i], "%s: template '%s', cold '%s'", r_exprs[i], tmpl[i], cold[i]);
      cr_expect (strncmp (cold[i], "\"error:", 7) != 0, "%s: %s", r_exprs[i], cold[i]);
    }
  securer_policy_free (p);
}
