/* The macOS launcher's logic, run on Linux: launch-macos.c uses POSIX calls
 * only, so it is built here with a stand-in for /usr/bin/sandbox-exec that
 * checks the arguments it gets (-D SECURER_PRIVATE_DIR=<real path> -p
 * <profile> -- CMD) and runs CMD.  What Seatbelt itself enforces needs a
 * Mac; what the launcher does — rlimits set in the child, environment,
 * private directory layout, never root, no leaked descriptors, timeout,
 * refusal — is checked from inside a real child process here. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>

#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "securer/ports.h"
#include "securer/sandbox.h"
#include "ports-policy.h"

extern const char *securer_macos_sandbox_exec;

static char work[64];     /* holds the stand-in and the captured output */
static char priv[64];     /* the sandbox's private directory */
static char out_path[128];

static const char stand_in[] =
  "#!/bin/sh\n"
  "# Stand-in for macOS sandbox-exec: checks the launcher's arguments.\n"
  "[ \"$1\" = -D ] || exit 90\n"
  "case \"$2\" in SECURER_PRIVATE_DIR=/*) ;; *) exit 91 ;; esac\n"
  "[ \"$3\" = -p ] || exit 92\n"
  "case \"$4\" in \"(version 1)\"*\"(deny default)\"*) ;; *) exit 93 ;; esac\n"
  "[ \"$5\" = -- ] || exit 94\n"
  "shift 5\n"
  "exec \"$@\"\n";

static int
rm_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  return remove (path);
}

static void
setup (void)
{
  strcpy (work, "/tmp/securer-test-mac-XXXXXX");
  strcpy (priv, "/tmp/securer-test-priv-XXXXXX");
  cr_assert_not_null (mkdtemp (work));
  cr_assert_not_null (mkdtemp (priv));
  /* The payload may run as nobody: the stand-in must be reachable. */
  chmod (work, 0755);
  static char exe[128];
  snprintf (exe, sizeof exe, "%s/sandbox-exec", work);
  FILE *f = fopen (exe, "w");
  cr_assert_not_null (f);
  fputs (stand_in, f);
  fclose (f);
  chmod (exe, 0755);
  securer_macos_sandbox_exec = exe;
  snprintf (out_path, sizeof out_path, "%s/out", work);
}

static void
teardown (void)
{
  nftw (work, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  nftw (priv, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Runs `sh -c script` under p with stdout captured; returns the status
 * securer_macos_wait reports and the output in *out. */
static int
run (const struct securer_policy *p, const char *script, char **out, securer_err_t *err)
{
  char *argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) script, NULL };
  char *caller_env[] = { (char *) "PATH=/usr/bin:/bin", (char *) "LANG=C.UTF-8",
                         (char *) "OPENAI_API_KEY=sk-secret", (char *) "HOME=/root", NULL };
  int fd = open (out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  cr_assert_geq (fd, 0);
  int saved = dup (1);
  fflush (stdout);
  dup2 (fd, 1);
  close (fd);
  /* A descriptor the payload must not inherit. */
  int leak = open ("/dev/null", O_RDONLY);
  struct securer_port_report rep = { 0 };
  int pid = -1;
  int r = securer_macos_spawn (p, argv, caller_env, priv, 0, &pid, &rep, err);
  int status = r < 0 ? -1 : securer_macos_wait (p, pid, err);
  close (leak);
  dup2 (saved, 1);
  close (saved);
  securer_port_report_clear (&rep);
  FILE *f = fopen (out_path, "r");
  cr_assert_not_null (f);
  static char buf[8192];
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose (f);
  *out = buf;
  return status;
}

static void
launch_policy (struct securer_policy *p)
{
  static struct securer_mount mounts[] = {
    { .type = SECURER_MOUNT_RO, .source = (char *) "/usr", .dest = (char *) "/usr" },
    { .type = SECURER_MOUNT_RO, .source = (char *) "/bin", .dest = (char *) "/bin" },
    { .type = SECURER_MOUNT_TMPFS, .dest = (char *) "/tmp", .mode = 01777, .noexec = true },
    { .type = SECURER_MOUNT_TMPFS, .dest = (char *) "/home/sandbox", .mode = 0700, .noexec = true },
  };
  static char *keep[] = { (char *) "PATH", (char *) "LANG" };
  static struct securer_env_var set[] = {
    { (char *) "HOME", (char *) "/home/sandbox" },
    { (char *) "TMPDIR", (char *) "/tmp" },
  };
  test_min_policy (p);
  p->mounts = mounts;
  p->n_mounts = 4;
  p->env_keep = keep;
  p->n_env_keep = 2;
  p->env_set = set;
  p->n_env_set = 2;
  p->cwd = (char *) "/home/sandbox";
  p->limits.rlimit[SECURER_RLIMIT_CPU] = (struct securer_rlimit) { true, 7, 9 };
  p->limits.rlimit[SECURER_RLIMIT_NOFILE] = (struct securer_rlimit) { true, 64, 64 };
}

TestSuite (launch_macos, .init = setup, .fini = teardown);

Test (launch_macos, child_gets_limits_env_dirs_and_no_fds)
{
  struct securer_policy p;
  launch_policy (&p);
  securer_err_t err = NULL;
  char *out;
  int st = run (&p,
                "ulimit -t; ulimit -H -t; ulimit -n; echo \"home=$HOME\"; echo \"tmp=$TMPDIR\"; "
                "echo \"cwd=$(pwd)\"; echo \"secret=${OPENAI_API_KEY-unset}\"; echo \"lang=$LANG\"; "
                "echo \"uid=$(id -u)\"; echo fds=$(ls /proc/self/fd | tr '\\n' ' ')",
                &out, &err);
  cr_assert_eq (st, 0, "status %d: %s / %s", st, err ? securer_error_message (err) : "", out);

  char real[PATH_MAX];
  cr_assert_not_null (realpath (priv, real));
  char uid[32];
  /* Root runs the payload as nobody; anyone else keeps their uid. */
  snprintf (uid, sizeof uid, "%u", geteuid () == 0 ? 4294967294u : (unsigned) geteuid ());
  char *expect = NULL;
  cr_assert_geq (asprintf (&expect,
                           "7\n9\n64\nhome=%s/tmpfs/home/sandbox\ntmp=%s/tmpfs/tmp\n"
                           "cwd=%s/tmpfs/home/sandbox\nsecret=unset\nlang=C.UTF-8\nuid=%s\n"
                           "fds=0 1 2 3\n",
                           real, real, real, uid),
                 0);
  cr_assert_str_eq (out, expect);
  free (expect);

  /* The tmpfs mounts exist below the private directory with their modes. */
  char path[PATH_MAX + 32];
  struct stat sb;
  snprintf (path, sizeof path, "%s/tmpfs/tmp", real);
  cr_assert_eq (stat (path, &sb), 0);
  cr_assert_eq (sb.st_mode & 07777, 01777);
  snprintf (path, sizeof path, "%s/tmpfs/home/sandbox", real);
  cr_assert_eq (stat (path, &sb), 0);
  cr_assert_eq (sb.st_mode & 07777, 0700);
}

Test (launch_macos, cpu_limit_kills_with_sigxcpu)
{
  struct securer_policy p;
  launch_policy (&p);
  p.limits.rlimit[SECURER_RLIMIT_CPU] = (struct securer_rlimit) { true, 1, 1 };
  securer_err_t err = NULL;
  char *out;
  int st = run (&p, "while :; do :; done", &out, &err);
  /* Soft = hard = 1 s: SIGXCPU at the soft limit (dash does not catch it). */
  cr_assert (st == 128 + SIGXCPU || st == 128 + SIGKILL, "status %d", st);
}

Test (launch_macos, timeout_kills_the_process_group)
{
  struct securer_policy p;
  launch_policy (&p);
  p.limits.timeout_ms = 300;
  securer_err_t err = NULL;
  char *out;
  int st = run (&p, "sleep 30 & sleep 30; echo not-reached", &out, &err);
  cr_assert_eq (st, SECURER_EXIT_TIMEOUT);
  cr_assert_str_eq (out, "");
}

Test (launch_macos, required_gap_refused_before_anything_runs)
{
  struct securer_policy p;
  launch_policy (&p);
  p.network = SECURER_NET_LOOPBACK;
  securer_err_t err = NULL;
  char *out;
  int st = run (&p, "echo ran", &out, &err);
  cr_assert_eq (st, -1);
  cr_assert_eq (err->status, SECURER_EXIT_SETUP);
  cr_assert (strstr (securer_error_message (err), "network loopback (required)"), "%s",
             securer_error_message (err));
  cr_assert_str_eq (out, "", "nothing ran");
  securer_error_free (&err);
}

Test (launch_macos, missing_sandbox_exec_is_an_error_not_a_fallback)
{
  struct securer_policy p;
  launch_policy (&p);
  securer_macos_sandbox_exec = "/nonexistent/sandbox-exec";
  securer_err_t err = NULL;
  char *out;
  int st = run (&p, "echo ran", &out, &err);
  cr_assert_eq (st, -1);
  cr_assert_eq (securer_error_errno (err), ENOENT);
  cr_assert_eq (err->status, SECURER_EXIT_CANNOT_EXEC);
  cr_assert (strstr (securer_error_message (err), "exec sandbox-exec"), "%s", securer_error_message (err));
  cr_assert_str_eq (out, "");
  securer_error_free (&err);
}
