/* The filesystem view, network and cgroup limits through `securer run`
 * with the shipped minimal policy.  Each test policy includes it and turns
 * the seccomp layer off, so that what is checked here is the filesystem
 * and limits layer alone (seccomp has its own tests). */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *
bin (void)
{
  const char *b = getenv ("SECURER_BIN");
  return b ? b : SECURER_ABS_BUILDDIR "/securer";
}

static const char *
srcdir (void)
{
  const char *s = getenv ("SECURER_SRCDIR");
  return s ? s : SECURER_ABS_SRCDIR;
}

static const char *
builddir (void)
{
  const char *b = getenv ("SECURER_BUILDDIR");
  return b ? b : SECURER_ABS_BUILDDIR;
}

struct out {
  int status;  /* exit status of securer */
  char out[16384];
  char err[16384];
};

static void
drain (int fd, char *buf, size_t cap, size_t *len, bool *eof)
{
  ssize_t n = read (fd, buf + *len, cap - 1 - *len);
  if (n <= 0)
    *eof = true;
  else
    *len += (size_t) n;
  buf[*len] = '\0';
}

/* Runs `securer run --policy POLICY -- argv...`. */
static void
securer_run (const char *policy, char *const *cmd, struct out *o)
{
  char *argv[40];
  size_t n = 0;
  argv[n++] = (char *) bin ();
  argv[n++] = (char *) "run";
  argv[n++] = (char *) "--policy";
  argv[n++] = (char *) policy;
  argv[n++] = (char *) "--";
  for (size_t i = 0; cmd[i] && n < 39; i++)
    argv[n++] = cmd[i];
  argv[n] = NULL;
  int po[2], pe[2];
  cr_assert_eq (pipe2 (po, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (pe, O_CLOEXEC), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      dup2 (po[1], 1);
      dup2 (pe[1], 2);
      execv (argv[0], argv);
      _exit (127);
    }
  close (po[1]);
  close (pe[1]);
  memset (o, 0, sizeof *o);
  size_t lo = 0, le = 0;
  bool eo = false, ee = false;
  while (!eo || !ee)
    {
      struct pollfd pf[2] = { { eo ? -1 : po[0], POLLIN, 0 }, { ee ? -1 : pe[0], POLLIN, 0 } };
      if (poll (pf, 2, -1) < 0 && errno != EINTR)
        break;
      if (pf[0].revents)
        drain (po[0], o->out, sizeof o->out, &lo, &eo);
      if (pf[1].revents)
        drain (pe[0], o->err, sizeof o->err, &le, &ee);
    }
  close (po[0]);
  close (pe[0]);
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st));
  o->status = WEXITSTATUS (st);
}

static char *
shipped (const char *name)
{
  char *p = NULL;
  if (asprintf (&p, "%s/policies/%s", srcdir (), name) < 0)
    abort ();
  return p;
}

/* A policy file that includes minimal.policy and adds `extra`; each test
 * removes it right after the run, before asserting anything. */
static char *
policy_with (const char *extra)
{
  char *path = strdup ("/tmp/securer-fs-cli-XXXXXX.policy");
  int fd = mkstemps (path, 7);
  cr_assert_geq (fd, 0);
  char *min = shipped ("minimal.policy");
  dprintf (fd, "include \"%s\"\nseccomp off\n%s", min, extra);
  free (min);
  close (fd);
  return path;
}

Test (fs_cli, minimal_policy_system_is_read_only)
{
  char *pol = policy_with ("");
  struct out o;
  char *cmd[] = { "/usr/bin/touch", "/usr/securer-x", NULL };
  securer_run (pol, cmd, &o);
  cr_assert_eq (o.status, 1, "%s", o.err);
  cr_assert_not_null (strstr (o.err, "Read-only file system"), "%s", o.err);

  char *cmd2[] = { "/usr/bin/touch", "/securer-x", NULL };
  securer_run (pol, cmd2, &o);
  unlink (pol);
  cr_assert_eq (o.status, 1, "%s", o.err);
  cr_assert_not_null (strstr (o.err, "Read-only file system"), "%s", o.err);
  free (pol);
}

Test (fs_cli, minimal_policy_tmp_is_private_writable_and_noexec)
{
  char *pol = policy_with ("");
  struct out o;
  char *cmd[] = { "/bin/sh", "-c",
                  "echo hello > /tmp/f && cat /tmp/f && cp /usr/bin/true /tmp/t && /tmp/t; "
                  "echo rc=$?; ls -A /tmp | wc -l; ls /home /etc/passwd 2>&1 | wc -l",
                  NULL };
  securer_run (pol, cmd, &o);
  unlink (pol);
  cr_assert_eq (o.status, 0, "%s", o.err);
  /* cp + f; /tmp/t could not run (126: permission denied, noexec). */
  cr_assert_str_eq (o.out, "hello\nrc=126\n2\n2\n", "%s", o.out);
  free (pol);
}

Test (fs_cli, missing_mount_source_exits_125_naming_the_line)
{
  char *pol = policy_with ("# a comment\nmount ro /nonexistent-securer-src\n");
  struct out o;
  char *cmd[] = { "/usr/bin/true", NULL };
  securer_run (pol, cmd, &o);
  unlink (pol);
  cr_assert_eq (o.status, 125, "%s", o.err);
  char want[512];
  snprintf (want, sizeof want, "%s:4: bind /nonexistent-securer-src on /nonexistent-securer-src",
            pol);
  cr_assert_not_null (strstr (o.err, want), "%s", o.err);
  cr_assert_not_null (strstr (o.err, "ENOENT"), "%s", o.err);
  free (pol);
}

Test (fs_cli, optional_missing_source_is_skipped)
{
  char *pol = policy_with ("mount ro? /nonexistent-securer-src\n");
  struct out o;
  char *cmd[] = { "/bin/sh", "-c", "test -e /nonexistent-securer-src; echo $?", NULL };
  securer_run (pol, cmd, &o);
  unlink (pol);
  cr_assert_eq (o.status, 0, "%s", o.err);
  cr_assert_str_eq (o.out, "1\n");
  free (pol);
}

Test (fs_cli, cgroup_memory_limit_from_a_policy_file)
{
  if (geteuid () != 0)
    cr_skip_test ("cgroups need root or a delegated cgroup");
  char extra[1024];
  snprintf (extra, sizeof extra,
            "mount ro %s/tests/helpers\ncgroup memory 32M\ncgroup pids 16\ncgroup required\n",
            builddir ());
  char *pol = policy_with (extra);
  char probe[600];
  snprintf (probe, sizeof probe, "%s/tests/helpers/fsprobe", builddir ());
  struct out o;
  char *cmd[] = { probe, "forks", "64", "alloc", "512", NULL };
  securer_run (pol, cmd, &o);
  unlink (pol);
  cr_assert_eq (o.status, 128 + 9, "%s\n%s", o.out, o.err);
  /* pid 1, fsprobe and 14 children make 16. */
  cr_assert_not_null (strstr (o.out, "forks=14 EAGAIN"), "%s", o.out);
  cr_assert_null (strstr (o.out, "alloc=done"), "%s", o.out);
  free (pol);
}
