/* Sessions from a template (src/lib/linux/template.c), driven through the
 * host's handle: tests/helpers/template-prog is the template's program
 * under the shipped r policy, and each session reports from inside what
 * it is and what it could do. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include "linux/launch.h"
#include "linux/template.h"
#include "securer/policy.h"
#include "securer/sandbox.h"

#include "ident.h"

#define PROG_DIR "/opt/securer-test"

static struct securer_policy *policy;
static struct securer_template *tpl;

/* The shipped r policy with the template program's directory. */
static void
load_policy (void)
{
  char text[PATH_MAX * 3];
  snprintf (text, sizeof text, "include \"%s/policies/r.policy\"\nmount ro %s/tests/helpers %s\n",
            SECURER_ABS_SRCDIR, SECURER_ABS_BUILDDIR, PROG_DIR);
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_string ("template-test.policy", text, strlen (text), &policy, NULL, &err), 0,
                "%s", securer_error_message (err));
}

static void
setup (void)
{
  if (geteuid () != 0)
    cr_skip_test ("only root may map the host-id lease range into a template");
  signal (SIGPIPE, SIG_IGN);
  load_policy ();
  securer_err_t err = NULL;
  char *argv[] = { (char *) PROG_DIR "/template-prog", NULL };
  struct securer_template_opts o = { .policy = policy, .argv = argv, .stdin_fd = -1, .stderr_fd = -1 };
  cr_assert_eq (securer_template_start (&o, &tpl, &err), 0, "%s", securer_error_message (err));
}

static void
teardown (void)
{
  securer_template_free (tpl);
  tpl = NULL;
  securer_policy_free (policy);
  policy = NULL;
}

struct sess {
  struct securer_sandbox *sb;
  int chan;
};

static struct sess
open_session (uint64_t timeout_ms)
{
  int sp[2];
  cr_assert_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
  struct securer_spawn_opts so = { .stdin_fd = sp[1], .stdout_fd = -1, .stderr_fd = -1, .timeout_ms = timeout_ms };
  securer_err_t err = NULL;
  struct sess s;
  cr_assert_eq (securer_template_spawn (tpl, &so, &s.sb, &err), 0, "%s", securer_error_message (err));
  close (sp[1]);
  s.chan = sp[0];
  return s;
}

/* Sends a command and reads one answer line ("" at EOF). */
static void
ask (struct sess *s, const char *cmd, char *out, size_t cap)
{
  dprintf (s->chan, "%s\n", cmd);
  size_t len = 0;
  while (len + 1 < cap && (len == 0 || out[len - 1] != '\n'))
    {
      struct pollfd pfd = { s->chan, POLLIN, 0 };
      cr_assert_eq (poll (&pfd, 1, 30000), 1, "no answer to %s", cmd);
      ssize_t n = read (s->chan, out + len, 1);
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  out[len] = '\0';
  out[strcspn (out, "\n")] = '\0';
}

static struct securer_status
finish (struct sess *s)
{
  securer_err_t err = NULL;
  struct securer_status st;
  close (s->chan);   /* EOF: the program's sessions end */
  cr_assert_eq (securer_sandbox_wait (s->sb, &st, &err), 1, "%s", securer_error_message (err));
  return st;
}

static unsigned
status_uid (pid_t pid)
{
  char path[64], line[256];
  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  FILE *f = fopen (path, "re");
  cr_assert_not_null (f, "%s: %s", path, strerror (errno));
  unsigned uid = 0;
  while (fgets (line, sizeof line, f))
    if (sscanf (line, "Uid: %u", &uid) == 1)
      break;
  fclose (f);
  return uid;
}

static unsigned
userns_owner (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "%s: %s", path, strerror (errno));
  uid_t u = 0;
  cr_assert_eq (ioctl (fd, NS_GET_OWNER_UID, &u), 0, "NS_GET_OWNER_UID: %s", strerror (errno));
  close (fd);
  return (unsigned) u;
}

static void
read_file (const char *path, char *buf, size_t cap)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "%s: %s", path, strerror (errno));
  ssize_t n = read (fd, buf, cap - 1);
  buf[n > 0 ? n : 0] = '\0';
  close (fd);
}

TestSuite (template, .init = setup, .fini = teardown, .timeout = 120);

/* The session's pid 1 is securer-init, the payload alone beside it, as
 * the policy's uid; its exit status reaches the host through securer-init
 * although the session is not the host's child. */
Test (template, pid1_is_securer_init_and_the_exit_status_comes_back)
{
  struct sess s = open_session (0);
  char a[256];
  ask (&s, "id", a, sizeof a);
  cr_expect_str_eq (a, "uid=1000 gid=1000 pid=2 init=securer-init procs=2");
  dprintf (s.chan, "exit 7\n");
  struct securer_status st;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_wait (s.sb, &st, &err), 1, "%s", securer_error_message (err));
  close (s.chan);
  cr_expect (st.exited);
  cr_expect_eq (st.exit_code, 7);
  cr_expect_eq (st.reason, SECURER_KILL_NONE);
  securer_status_clear (&st);
  securer_sandbox_free (s.sb);
}

/* Two sessions at once: each has its own leased host uid, owning its own
 * user namespace, its own cgroup and its own /tmp; neither sees the
 * other's processes or files. */
Test (template, two_sessions_at_once_are_strangers)
{
  struct sess s[2] = { open_session (0), open_session (0) };
  pid_t pid[2];
  unsigned uid[2];
  char cg[2][4096], a[512];
  for (int i = 0; i < 2; i++)
    {
      pid[i] = securer_sandbox_pid (s[i].sb);
      uid[i] = status_uid (pid[i]);
      cr_expect_eq (userns_owner (pid[i]), uid[i], "session %d's user namespace is owned by its own id", i);
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/cgroup", (int) pid[i]);
      read_file (path, cg[i], sizeof cg[i]);
    }
  uint32_t first, count;
  securer_err_t err = NULL;
  cr_assert_eq (securer_hostids_range (&first, &count, &err), 0);
  for (int i = 0; i < 2; i++)
    cr_expect (uid[i] >= first && uid[i] - first < count, "uid %u is leased", uid[i]);
  cr_expect_neq (uid[0], uid[1]);
  cr_expect_neq (userns_owner (pid[0]), userns_owner (getpid ()));
  cr_expect_str_neq (cg[0], cg[1], "one cgroup each");
  cr_expect (strstr (cg[0], "securer") != NULL, "in a securer cgroup: %s", cg[0]);
  ask (&s[0], "tmp only-in-0", a, sizeof a);
  cr_expect_str_eq (a, "only-in-0 ");
  ask (&s[1], "tmp only-in-1", a, sizeof a);
  cr_expect_str_eq (a, "only-in-1 ", "session 1 sees only its own /tmp");
  for (int i = 0; i < 2; i++)
    {
      struct securer_status st = finish (&s[i]);
      cr_expect_eq (securer_status_exit_code (&st), 0);
      securer_status_clear (&st);
      securer_sandbox_free (s[i].sb);
    }
}

/* The /proc entries every proc mount hides are hidden in a session too,
 * whose pid 1 mounts its own proc: irq, fs and sys/fs/quota follow the
 * host's (and so other tenants') interrupts, disks and syncs. */
Test (template, host_wide_proc_directories_are_masked)
{
  struct sess s = open_session (0);
  char a[512];
  static const char *const dirs[] = { "/proc/irq", "/proc/fs", "/proc/sys/fs/quota" };
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
    {
      char cmd[64];
      snprintf (cmd, sizeof cmd, "ls %s", dirs[i]);
      ask (&s, cmd, a, sizeof a);
      cr_expect_str_eq (a, access (dirs[i], F_OK) == 0 ? "" : strerror (ENOENT), "%s in a session: %s", dirs[i], a);
    }
  ask (&s, "touch /proc/fs/x", a, sizeof a);
  cr_expect_str_eq (a, strerror (EROFS));
  struct securer_status st = finish (&s);
  cr_expect_eq (securer_status_exit_code (&st), 0);
  securer_status_clear (&st);
  securer_sandbox_free (s.sb);
}

/* r gives no pty, in a session as in a cold sandbox. */
Test (template, no_pty_under_r)
{
  struct sess s = open_session (0);
  char a[512];
  ask (&s, "pty", a, sizeof a);
  cr_expect_str_eq (a, "ENOENT");
  ask (&s, "ls /dev/pts", a, sizeof a);
  cr_expect_str_eq (a, strerror (ENOENT));
  struct securer_status st = finish (&s);
  cr_expect_eq (securer_status_exit_code (&st), 0);
  securer_status_clear (&st);
  securer_sandbox_free (s.sb);
}

/* A syscall the policy kills ends the session with SIGSYS, and the host
 * names it: the filter reports through the listener the session offered,
 * as a cold sandbox's does. */
Test (template, a_killed_syscall_is_named)
{
  struct sess s = open_session (0);
  char a[256];
  ask (&s, "mount", a, sizeof a);
  cr_expect_str_eq (a, "mounting");
  struct securer_status st = finish (&s);
  cr_expect (!st.exited);
  cr_expect_eq (st.signal, SIGSYS);
  cr_expect_eq (st.reason, SECURER_KILL_SECCOMP);
  cr_expect_str_eq (st.detail ? st.detail : "(none)", "mount");
  securer_status_clear (&st);
  securer_sandbox_free (s.sb);
}

/* The wall-clock timeout kills the session (not the template: the next
 * session starts). */
Test (template, the_timeout_kills_the_session_not_the_template)
{
  struct sess s = open_session (300);
  char a[256];
  ask (&s, "sleep", a, sizeof a);
  cr_expect_str_eq (a, "sleeping");
  struct securer_status st = finish (&s);
  cr_expect_eq (st.reason, SECURER_KILL_TIMEOUT);
  cr_expect_eq (securer_status_exit_code (&st), SECURER_EXIT_TIMEOUT);
  securer_status_clear (&st);
  securer_sandbox_free (s.sb);
  cr_expect (securer_template_alive (tpl));
  struct sess t = open_session (0);
  ask (&t, "id", a, sizeof a);
  cr_expect (strncmp (a, "uid=1000", 8) == 0, "%s", a);
  st = finish (&t);
  securer_status_clear (&st);
  securer_sandbox_free (t.sb);
}

/* Killing a session by its handle ends it; freeing the template ends
 * every session forked from it (they live in its pid namespace), and a
 * dead template forks nothing. */
Test (template, a_dead_template_refuses_sessions)
{
  struct sess s = open_session (0);
  char a[256];
  ask (&s, "sleep", a, sizeof a);
  struct proc_ident pid = proc_ident_of (securer_sandbox_pid (s.sb));
  securer_template_free (tpl);
  tpl = NULL;
  struct securer_status st = finish (&s);
  cr_expect (!st.exited);
  cr_expect_eq (st.signal, SIGKILL);
  securer_status_clear (&st);
  securer_sandbox_free (s.sb);
  cr_expect (!proc_ident_exists (pid), "the session outlived its template");
}

/* An unprivileged caller's template: its sessions run as the caller's
 * uid, as its cold sandboxes do (no lease range to map), still each in
 * its own namespaces; a policy that needs a leased id is refused. */
Test (template_unprivileged, sessions_run_as_the_callers_uid, .timeout = 120)
{
  if (geteuid () != 0)
    cr_skip_test ("needs root to become an unprivileged uid");
  signal (SIGPIPE, SIG_IGN);
  const uid_t nobody = 65534;
  cr_assert_eq (setgroups (0, NULL), 0);
  cr_assert_eq (setresgid (nobody, nobody, nobody), 0);
  cr_assert_eq (setresuid (nobody, nobody, nobody), 0);
  /* As a process started by that uid is (the id change cleared it). */
  cr_assert_eq (prctl (PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
  load_policy ();
  securer_err_t err = NULL;
  cr_assert_eq (securer_template_supported (policy, &err), 0, "%s", securer_error_message (err));
  char *argv[] = { (char *) PROG_DIR "/template-prog", NULL };
  struct securer_template_opts o = { .policy = policy, .argv = argv, .stdin_fd = -1, .stderr_fd = -1 };
  cr_assert_eq (securer_template_start (&o, &tpl, &err), 0, "%s", securer_error_message (err));
  struct sess s[2] = { open_session (0), open_session (0) };
  char a[256];
  for (int i = 0; i < 2; i++)
    {
      ask (&s[i], "id", a, sizeof a);
      cr_expect_str_eq (a, "uid=1000 gid=1000 pid=2 init=securer-init procs=2");
      pid_t pid = securer_sandbox_pid (s[i].sb);
      cr_expect_eq (status_uid (pid), nobody);
      cr_expect_eq (userns_owner (pid), nobody);
    }
  cr_expect_neq (userns_owner (securer_sandbox_pid (s[0].sb)) + 0, 0u);
  for (int i = 0; i < 2; i++)
    {
      struct securer_status st = finish (&s[i]);
      cr_expect_eq (securer_status_exit_code (&st), 0);
      securer_status_clear (&st);
      securer_sandbox_free (s[i].sb);
    }
  securer_template_free (tpl);
  tpl = NULL;
  securer_policy_free (policy);
  const char *pool = "namespaces all\nuid 1000 host=pool\ngid 1000 host=pool\n";
  cr_assert_eq (securer_policy_load_string ("pool.policy", pool, strlen (pool), &policy, NULL, &err), 0, "%s",
                securer_error_message (err));
  cr_expect_eq (securer_template_supported (policy, &err), -1);
  cr_expect (err != NULL && strstr (securer_error_message (err), "host=pool") != NULL, "%s",
             err ? securer_error_message (err) : "no error");
  securer_error_free (&err);
  securer_policy_free (policy);
  policy = NULL;
}

static int
count_fds (void)
{
  int n = 0;
  DIR *d = opendir ("/proc/self/fd");
  cr_assert_not_null (d);
  while (readdir (d) != NULL)
    n++;
  closedir (d);
  return n;
}

/* Sessions that end every way (exit, kill, timeout, a killed syscall) and
 * the template itself leave no descriptor behind in the host. */
Test (template_host, no_descriptor_leaks, .timeout = 120)
{
  int before = count_fds ();
  setup ();
  static const char *const how[] = { "exit 0", "exit 3", "sleep", "mount", "id" };
  for (int i = 0; i < 20; i++)
    {
      const char *cmd = how[i % 5];
      struct sess s = open_session (strcmp (cmd, "sleep") == 0 ? 200 : 0);
      dprintf (s.chan, "%s\n", cmd);
      if (i % 7 == 6)
        {
          securer_err_t err = NULL;
          cr_assert_eq (securer_sandbox_kill (s.sb, &err), 0);
        }
      struct securer_status st = finish (&s);
      securer_status_clear (&st);
      securer_sandbox_free (s.sb);
    }
  teardown ();
  cr_expect_eq (count_fds (), before);
}

/* A template whose program ends before it is ready is reported with its
 * exit status, and nothing is left running. */
Test (template_host, a_template_that_fails_to_start_says_so, .timeout = 60)
{
  if (geteuid () != 0)
    cr_skip_test ("only root may map the host-id lease range into a template");
  load_policy ();
  securer_err_t err = NULL;
  char *argv[] = { (char *) PROG_DIR "/template-prog", (char *) "fail", NULL };
  struct securer_template_opts o = { .policy = policy, .argv = argv, .stdin_fd = -1, .stderr_fd = -1 };
  int before = count_fds ();
  cr_expect_eq (securer_template_start (&o, &tpl, &err), -1);
  cr_expect_null (tpl);
  cr_expect (err != NULL && strstr (securer_error_message (err), "ended before it was ready (exit status 3)") != NULL,
             "%s", err ? securer_error_message (err) : "no error");
  securer_error_free (&err);
  cr_expect_eq (count_fds (), before);
  securer_policy_free (policy);
  policy = NULL;
}

/* A template of minimal.policy's pieces without its limits (so without
 * a nofile limit of its own), and extra lines. */
static void
start_minimal (const char *extra)
{
  char text[PATH_MAX * 8];
  int n = 0;
  static const char *const pieces[] = { "isolation", "fs-system", "env", "seccomp-common", "seccomp-hardening" };
  for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++)
    n += snprintf (text + n, sizeof text - (size_t) n, "include \"%s/policies/base/%s.policy\"\n", SECURER_ABS_SRCDIR,
                   pieces[i]);
  snprintf (text + n, sizeof text - (size_t) n, "mount ro %s/tests/helpers %s\n%s", SECURER_ABS_BUILDDIR, PROG_DIR,
            extra);
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_string ("template-minimal.policy", text, strlen (text), &policy, NULL, &err), 0,
                "%s", securer_error_message (err));
  char *argv[] = { (char *) PROG_DIR "/template-prog", NULL };
  struct securer_template_opts o = { .policy = policy, .argv = argv, .stdin_fd = -1, .stderr_fd = -1 };
  cr_assert_eq (securer_template_start (&o, &tpl, &err), 0, "%s", securer_error_message (err));
}

static void
end_session (struct sess *s)
{
  struct securer_status st = finish (s);
  cr_expect_eq (securer_status_exit_code (&st), 0);
  securer_status_clear (&st);
  securer_sandbox_free (s->sb);
}

/* The /dev/shm a `mount dev` makes is each session's own, as each cold
 * sandbox's is (these pieces have no tmpfs of their own there), and so is
 * the boot id; a policy without a nofile limit of its own works too. */
Test (template_host, dev_shm_and_boot_id_are_the_sessions_own, .timeout = 120)
{
  if (geteuid () != 0)
    cr_skip_test ("only root may map the host-id lease range into a template");
  signal (SIGPIPE, SIG_IGN);
  start_minimal ("");
  struct sess a = open_session (0), b = open_session (0);
  char x[512], y[512], host[64] = "";
  ask (&a, "touch /dev/shm/from-a", x, sizeof x);
  cr_expect_str_eq (x, "touched");
  ask (&b, "ls /dev/shm", y, sizeof y);
  cr_expect_str_eq (y, "", "session b sees a's /dev/shm: %s", y);
  ask (&a, "cat /proc/sys/kernel/random/boot_id", x, sizeof x);
  ask (&b, "cat /proc/sys/kernel/random/boot_id", y, sizeof y);
  read_file ("/proc/sys/kernel/random/boot_id", host, sizeof host);
  host[strcspn (host, "\n")] = '\0';
  cr_expect_eq (strlen (x), 36u, "%s", x);
  cr_expect_str_neq (x, host);
  cr_expect_str_neq (x, y);
  end_session (&a);
  end_session (&b);
  teardown ();
}

/* The numbered entries of an "ls /dev/pts" answer. */
static int
ptys_listed (const char *ls)
{
  int n = 0;
  for (const char *t = ls; *t; t++)
    n += *t >= '0' && *t <= '9' && (t == ls || t[-1] == ' ');
  return n;
}

/* Each session has a devpts instance of its own, with the policy's cap:
 * with the template's, shared by every session, one session saw the
 * others' ptys and took from their cap. */
Test (template_host, ptys_are_each_sessions_own, .timeout = 120)
{
  if (geteuid () != 0)
    cr_skip_test ("only root may map the host-id lease range into a template");
  signal (SIGPIPE, SIG_IGN);
  start_minimal ("limit ptys 2\n");
  struct sess a = open_session (0), b = open_session (0);
  char x[512], y[512];
  ask (&a, "pty", x, sizeof x);
  cr_expect_str_eq (x, "opened");
  ask (&a, "pty", x, sizeof x);
  cr_expect_str_eq (x, "opened");
  ask (&a, "pty", x, sizeof x);
  cr_expect_str_eq (x, "ENOSPC", "a third pty under limit ptys 2: %s", x);
  ask (&b, "ls /dev/pts", y, sizeof y);
  cr_expect_eq (ptys_listed (y), 0, "session b sees a's ptys: %s", y);
  ask (&b, "pty", y, sizeof y);
  cr_expect_str_eq (y, "opened", "session a's ptys took b's: %s", y);
  ask (&a, "ls /dev/pts", x, sizeof x);
  cr_expect_eq (ptys_listed (x), 2, "session a's /dev/pts: %s", x);
  end_session (&a);
  end_session (&b);
  teardown ();
}

/* `mount proc /proc subset=pid` gives a session the processes' entries
 * alone, as it gives a cold sandbox. */
Test (template_host, proc_subset_pid_holds, .timeout = 120)
{
  if (geteuid () != 0)
    cr_skip_test ("only root may map the host-id lease range into a template");
  signal (SIGPIPE, SIG_IGN);
  start_minimal ("mount proc /proc subset=pid\n");
  struct sess a = open_session (0);
  char x[512];
  ask (&a, "cat /proc/meminfo", x, sizeof x);
  cr_expect_str_eq (x, strerror (ENOENT));
  ask (&a, "cat /proc/1/cmdline", x, sizeof x);
  cr_expect_str_eq (x, "securer-init");
  end_session (&a);
  teardown ();
}

/* `mount proc /proc unmasked` gives a session the host-wide entries as
 * the kernel shows them, as it gives a cold sandbox: the host's boot id,
 * a load average. */
Test (template_host, proc_unmasked_holds, .timeout = 120)
{
  if (geteuid () != 0)
    cr_skip_test ("only root may map the host-id lease range into a template");
  signal (SIGPIPE, SIG_IGN);
  start_minimal ("mount proc /proc unmasked\n");
  struct sess a = open_session (0);
  char x[512], host[64] = "";
  ask (&a, "cat /proc/sys/kernel/random/boot_id", x, sizeof x);
  read_file ("/proc/sys/kernel/random/boot_id", host, sizeof host);
  host[strcspn (host, "\n")] = '\0';
  cr_expect_str_eq (x, host);
  ask (&a, "cat /proc/loadavg", x, sizeof x);
  cr_expect_gt (strlen (x), 0u, "an empty load average: masked");
  end_session (&a);
  teardown ();
}

/* A session's pid 1 holds its host-id lease to the end of its exit, as a
 * cold sandbox's pid 1 does: the handle stops waiting for that exit after
 * two seconds (the template, not the host, is the session's parent), and
 * a launch given the same id meanwhile without a user namespace runs as
 * that id in the host's own, owns the ending session's user namespace and
 * would read its /tmp through /proc/PID/root. */
Test (template_host, a_sessions_host_id_stays_leased_while_its_pid_1_is_on_its_way_out, .timeout = 120)
{
  if (geteuid () != 0)
    cr_skip_test ("only root may map the host-id lease range into a template");
  /* Two ids: the template's own and the session's. */
  char range[64];
  unsigned id = 3400000000u + 2 * ((unsigned) getpid () % 1000000u);
  snprintf (range, sizeof range, "%u-%u", id, id + 1);
  cr_assert_eq (setenv ("SECURER_HOST_IDS", range, 1), 0);
  setup ();
  struct sess s = open_session (0);
  char a[256];
  ask (&s, "tmp secret-of-the-session", a, sizeof a);
  cr_assert_str_eq (a, "secret-of-the-session ");
  pid_t init = s.sb->init_pid;
  cr_assert_gt (init, 0);
  cr_assert_eq (ptrace (PTRACE_SEIZE, init, NULL, (void *) (long) PTRACE_O_TRACEEXIT), 0, "%s", strerror (errno));
  close (s.chan);   /* EOF: the session ends, pid 1 reports and stops at its exit */
  int ws;
  cr_assert_eq (waitpid (init, &ws, __WALL), init);
  cr_assert (WIFSTOPPED (ws) && (ws >> 8) == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)), "pid 1: status %#x", ws);
  securer_sandbox_free (s.sb);   /* gives up waiting for pid 1 after two seconds */
  struct securer_status st;

  char text[] = "namespaces none\nnetwork host\nseccomp off\nlandlock off\n";
  struct securer_policy *q = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_string ("no-userns.policy", text, strlen (text), &q, NULL, &err), 0, "%s",
                securer_error_message (err));
  char target[96];
  snprintf (target, sizeof target, "/proc/%d/root/tmp/secret-of-the-session", (int) init);
  char *argv[] = { (char *) "/usr/bin/stat", (char *) "-c", (char *) "%n", target, NULL };
  int out[2];
  cr_assert_eq (pipe2 (out, O_CLOEXEC), 0);
  struct securer_spawn_opts o = { .policy = q, .argv = argv, .stdin_fd = -1, .stdout_fd = out[1], .stderr_fd = out[1] };
  struct securer_sandbox *b = NULL;
  int rc = securer_sandbox_spawn (&o, &b, &err);
  close (out[1]);
  char got[512] = "";
  if (rc == 0)
    {
      ssize_t n = read (out[0], got, sizeof got - 1);
      got[n > 0 ? n : 0] = '\0';
      securer_sandbox_wait (b, &st, &err);
      securer_status_clear (&st);
      securer_sandbox_free (b);
    }
  close (out[0]);
  cr_expect_eq (rc, -1, "a sandbox with the id of a session whose pid 1 is still there started: %s", got);
  cr_expect_eq (securer_error_errno (err), EAGAIN, "%s", securer_error_message (err));
  securer_error_free (&err);

  cr_assert_eq (ptrace (PTRACE_DETACH, init, NULL, NULL), 0);
  securer_policy_free (q);
  teardown ();
  unsetenv ("SECURER_HOST_IDS");
}
