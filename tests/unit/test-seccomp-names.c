/* Syscall groups, constants, errno and syscall names of the seccomp area. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seccomp/seccomp.h"

static bool
strv_has (char **v, const char *s)
{
  for (; *v != NULL; v++)
    if (strcmp (*v, s) == 0)
      return true;
  return false;
}

static void
assert_sorted_unique (char **v, size_t n)
{
  for (size_t i = 1; i < n; i++)
    cr_assert_lt (strcmp (v[i - 1], v[i]), 0, "'%s' before '%s'", v[i - 1], v[i]);
  cr_assert_null (v[n]);
}

/* ---- shipped groups ------------------------------------------------------ */

Test (groups, every_shipped_group_loads_with_known_members_only)
{
  char **names = securer_group_names ();
  cr_assert_not_null (names);
  size_t n_groups = 0;
  for (char **g = names; *g != NULL; g++, n_groups++)
    {
      char **m = NULL;
      size_t n = 0;
      securer_err_t err = NULL;
      int rc = securer_group_load (*g, &m, &n, &err);
      cr_assert_eq (rc, 0, "@%s: %s", *g, err ? securer_error_message (err) : "");
      cr_assert_gt (n, 0, "@%s is empty", *g);
      assert_sorted_unique (m, n);
      for (size_t i = 0; i < n; i++)
        cr_assert (securer_syscall_known (m[i]), "@%s: %s", *g, m[i]);
      securer_strv_free (m);
    }
  cr_assert_geq (n_groups, 29);
  securer_strv_free (names);
}

Test (groups, the_systemd_sets_are_all_there)
{
  static const char *expected[] = {
    "default", "aio", "basic-io", "chown", "clock", "cpu-emulation", "debug",
    "file-system", "io-event", "ipc", "keyring", "memlock", "module", "mount",
    "network-io", "obsolete", "pkey", "privileged", "process", "raw-io",
    "reboot", "resources", "sandbox", "setuid", "signal", "swap", "sync",
    "system-service", "timer", "known",
  };
  char **names = securer_group_names ();
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
    cr_assert (strv_has (names, expected[i]), "missing @%s", expected[i]);
  securer_strv_free (names);
}

Test (groups, nested_groups_are_expanded)
{
  char **m = NULL;
  size_t n = 0;
  securer_err_t err = NULL;
  cr_assert_eq (securer_group_load ("@system-service", &m, &n, &err), 0);
  cr_assert (strv_has (m, "read"));       /* via @basic-io */
  cr_assert (strv_has (m, "openat"));     /* via @file-system */
  cr_assert (strv_has (m, "seccomp"));    /* via @default -> @sandbox */
  cr_assert (strv_has (m, "ioctl"));      /* listed directly */
  cr_assert (!strv_has (m, "mount"));
  cr_assert (!strv_has (m, "ptrace"));
  securer_strv_free (m);

  cr_assert_eq (securer_group_load ("privileged", &m, &n, &err), 0);
  cr_assert (strv_has (m, "fchownat"));   /* via @chown */
  cr_assert (strv_has (m, "reboot"));     /* via @reboot */
  cr_assert (!strv_has (m, "read"));
  securer_strv_free (m);
}

Test (groups, optional_members_follow_what_libseccomp_knows)
{
  char **m = NULL;
  size_t n = 0;
  securer_err_t err = NULL;
  cr_assert_eq (securer_group_load ("default", &m, &n, &err), 0);
  /* "?mseal": present exactly when this libseccomp can name it. */
  cr_assert_eq (strv_has (m, "mseal"), seccomp_syscall_resolve_name ("mseal") != __NR_SCMP_ERROR);
  cr_assert (strv_has (m, "futex_waitv"));
  cr_assert (strv_has (m, "getpid"));
  securer_strv_free (m);
}

Test (groups, known_lists_every_syscall_libseccomp_names)
{
  char **m = NULL;
  size_t n = 0;
  securer_err_t err = NULL;
  cr_assert_eq (securer_group_load ("known", &m, &n, &err), 0);
  cr_assert_gt (n, 300);
  cr_assert (strv_has (m, "read"));
  cr_assert (strv_has (m, "ptrace"));
  cr_assert (strv_has (m, "landlock_restrict_self"));
  assert_sorted_unique (m, n);
  securer_strv_free (m);
}

/* ---- malformed groups, in a private data directory ------------------------- */

static char datadir[64];

static void
write_group (const char *name, const char *text)
{
  char path[256];
  snprintf (path, sizeof path, "%s/seccomp/%s.syscalls", datadir, name);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fputs (text, f);
  fclose (f);
}

static void
private_datadir (void)
{
  strcpy (datadir, "/tmp/securer-test-XXXXXX");
  cr_assert_not_null (mkdtemp (datadir));
  char sub[128];
  snprintf (sub, sizeof sub, "%s/seccomp", datadir);
  cr_assert_eq (mkdir (sub, 0755), 0);
  /* Must be set before the first data lookup in this (forked) test process. */
  setenv ("SECURER_DATADIR", datadir, 1);
}

static void
remove_datadir (void)
{
  char cmd[128];
  /* Only the names this file creates. */
  static const char *files[] = { "a", "b", "c", "self", "typo", "opt", "empty", "two", "nogroup", "deep", NULL };
  for (const char **f = files; *f; f++)
    {
      snprintf (cmd, sizeof cmd, "%s/seccomp/%s.syscalls", datadir, *f);
      unlink (cmd);
    }
  snprintf (cmd, sizeof cmd, "%s/seccomp", datadir);
  rmdir (cmd);
  rmdir (datadir);
}

TestSuite (groupfiles, .init = private_datadir, .fini = remove_datadir);

static void
expect_error (const char *group, int errnum, const char *needle)
{
  char **m = NULL;
  size_t n = 0;
  securer_err_t err = NULL;
  cr_assert_eq (securer_group_load (group, &m, &n, &err), -1);
  cr_assert_not_null (err);
  cr_assert_eq (securer_error_errno (err), errnum, "%s", securer_error_message (err));
  cr_assert_not_null (strstr (securer_error_message (err), needle), "'%s' not in '%s'", needle,
                      securer_error_message (err));
  securer_error_free (&err);
}

Test (groupfiles, cycle_is_an_error_naming_the_chain_and_line)
{
  write_group ("a", "read\n@b\n");
  write_group ("b", "# comment\nwrite\n\n@c\n");
  write_group ("c", "@a\n");
  expect_error ("a", ELOOP, "group cycle: @a -> @b -> @c -> @a");
  expect_error ("b", ELOOP, "/seccomp/c.syscalls:1");
}

Test (groupfiles, self_inclusion_is_a_cycle)
{
  write_group ("self", "read\n@self\n");
  expect_error ("self", ELOOP, "self.syscalls:2");
}

Test (groupfiles, unknown_syscall_names_file_and_line)
{
  write_group ("typo", "read\n  write  # trailing comment\nopenatt\n");
  expect_error ("typo", EINVAL, "typo.syscalls:3:1: unknown syscall 'openatt' (did you mean 'openat'?)");
}

Test (groupfiles, unknown_nested_group)
{
  write_group ("nogroup", "read\n@does-not-exist\n");
  expect_error ("nogroup", ENOENT, "nogroup.syscalls:2:1: unknown group '@does-not-exist'");
}

Test (groupfiles, one_entry_per_line)
{
  write_group ("two", "read write\n");
  expect_error ("two", EINVAL, "two.syscalls:1:1: one entry per line");
}

Test (groupfiles, names_cannot_escape_the_data_directory)
{
  expect_error ("../../etc/passwd", EINVAL, "invalid group name");
  write_group ("deep", "@../x\n");
  expect_error ("deep", EINVAL, "invalid group name");
}

Test (groupfiles, optional_entries_and_comments)
{
  write_group ("opt", "# header\n\n?read\n?no_such_syscall_yet\nwrite # both\nread\n");
  char **m = NULL;
  size_t n = 0;
  securer_err_t err = NULL;
  cr_assert_eq (securer_group_load ("opt", &m, &n, &err), 0);
  cr_assert_eq (n, 2);
  cr_assert_str_eq (m[0], "read");
  cr_assert_str_eq (m[1], "write");
  cr_assert_null (m[2]);
  securer_strv_free (m);
}

Test (groupfiles, empty_group_is_valid)
{
  write_group ("empty", "# nothing\n");
  char **m = NULL;
  size_t n = 7;
  securer_err_t err = NULL;
  cr_assert_eq (securer_group_load ("empty", &m, &n, &err), 0);
  cr_assert_eq (n, 0);
  cr_assert_not_null (m);
  cr_assert_null (m[0]);
  securer_strv_free (m);
  char **names = securer_group_names ();
  cr_assert (strv_has (names, "empty"));
  cr_assert (strv_has (names, "known"));
  securer_strv_free (names);
}

/* ---- constants ----------------------------------------------------------- */

Test (constants, values_come_from_the_headers)
{
  uint64_t v;
  cr_assert_eq (securer_const_lookup ("TIOCSTI", &v), 0);
  cr_assert_eq (v, TIOCSTI);
  cr_assert_eq (securer_const_lookup ("TIOCLINUX", &v), 0);
  cr_assert_eq (v, TIOCLINUX);
  cr_assert_eq (securer_const_lookup ("AF_UNIX", &v), 0);
  cr_assert_eq (v, AF_UNIX);
  cr_assert_eq (securer_const_lookup ("AF_NETLINK", &v), 0);
  cr_assert_eq (v, AF_NETLINK);
  cr_assert_eq (securer_const_lookup ("SOCK_RAW", &v), 0);
  cr_assert_eq (v, SOCK_RAW);
  cr_assert_eq (securer_const_lookup ("CLONE_NEWUSER", &v), 0);
  cr_assert_eq (v, CLONE_NEWUSER);
  cr_assert_eq (securer_const_lookup ("O_WRONLY", &v), 0);
  cr_assert_eq (v, O_WRONLY);
  cr_assert_eq (securer_const_lookup ("PROT_EXEC", &v), 0);
  cr_assert_eq (v, PROT_EXEC);
  cr_assert_eq (securer_const_lookup ("MAP_SHARED", &v), 0);
  cr_assert_eq (v, MAP_SHARED);
  cr_assert_eq (securer_const_lookup ("SHM_EXEC", &v), 0);
  cr_assert_eq (v, SHM_EXEC);
  cr_assert_eq (securer_const_lookup ("ADDR_NO_RANDOMIZE", &v), 0);
  cr_assert_eq (v, 0x0040000);
  cr_assert_eq (securer_const_lookup ("AT_FDCWD", &v), 0);
  cr_assert_eq (v, (uint64_t) (int64_t) AT_FDCWD);
}

Test (constants, unknown_names_fail)
{
  uint64_t v = 42;
  cr_assert_eq (securer_const_lookup ("AF_NOPE", &v), -1);
  cr_assert_eq (securer_const_lookup ("", &v), -1);
  cr_assert_eq (securer_const_lookup (NULL, &v), -1);
  cr_assert_eq (securer_const_lookup ("af_unix", &v), -1);
  cr_assert_eq (v, 42);
}

Test (constants, every_listed_name_resolves_and_names_are_unique)
{
  const char *const *names = securer_const_names ();
  size_t n = 0;
  for (; names[n] != NULL; n++)
    {
      uint64_t v;
      cr_assert_eq (securer_const_lookup (names[n], &v), 0, "%s", names[n]);
      for (size_t j = 0; j < n; j++)
        cr_assert_str_neq (names[j], names[n]);
    }
  cr_assert_gt (n, 300);
}

/* ---- errno --------------------------------------------------------------- */

Test (errno_names, lookup_and_reverse)
{
  int v = 0;
  cr_assert_eq (securer_errno_lookup ("EPERM", &v), 0);
  cr_assert_eq (v, EPERM);
  cr_assert_eq (securer_errno_lookup ("ENOSYS", &v), 0);
  cr_assert_eq (v, ENOSYS);
  cr_assert_eq (securer_errno_lookup ("EWOULDBLOCK", &v), 0);
  cr_assert_eq (v, EAGAIN);
  cr_assert_str_eq (securer_errno_name (EAGAIN), "EAGAIN");
  cr_assert_str_eq (securer_errno_name (EDEADLK), "EDEADLK");
  cr_assert_str_eq (securer_errno_name (EOPNOTSUPP), "EOPNOTSUPP");
  cr_assert_eq (securer_errno_lookup ("ENOPE", &v), -1);
  cr_assert_eq (securer_errno_lookup ("eperm", &v), -1);
  cr_assert_null (securer_errno_name (0));
  cr_assert_null (securer_errno_name (4096));
}

Test (errno_names, every_linux_errno_has_a_name_that_round_trips)
{
  for (int e = 1; e <= EHWPOISON; e++)
    {
      if (e == 41 || e == 58) /* unassigned on Linux */
        continue;
      const char *name = securer_errno_name (e);
      cr_assert_not_null (name, "errno %d", e);
      int back = 0;
      cr_assert_eq (securer_errno_lookup (name, &back), 0);
      cr_assert_eq (back, e);
    }
  size_t n = 0;
  for (const char *const *p = securer_errno_names (); *p; p++)
    n++;
  cr_assert_eq (n, EHWPOISON - 2 + 3);
}

/* ---- syscalls ------------------------------------------------------------ */

Test (syscalls, known_names)
{
  cr_assert (securer_syscall_known ("read"));
  cr_assert (securer_syscall_known ("ioctl"));
  cr_assert (securer_syscall_known ("chown32"));   /* other-arch only: still a name */
  cr_assert (!securer_syscall_known ("readd"));
  cr_assert (!securer_syscall_known (""));
  cr_assert (!securer_syscall_known (NULL));
}

Test (syscalls, names_are_sorted_unique_and_complete)
{
  char **v = securer_syscall_names ();
  cr_assert_not_null (v);
  size_t n = 0;
  while (v[n])
    n++;
  assert_sorted_unique (v, n);
  cr_assert (strv_has (v, "read"));
  cr_assert (strv_has (v, "openat"));
  cr_assert (strv_has (v, "clone3"));
  for (size_t i = 0; i < n; i++)
    cr_assert (securer_syscall_known (v[i]), "%s", v[i]);
  securer_strv_free (v);
}
