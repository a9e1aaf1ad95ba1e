/* linux.resources.devices on cgroup v2 (src/lib/oci/devices.c): the BPF
 * device program attached to a real cgroup v2 directory, a child moved
 * into it, and what the kernel then lets it open.  Needs root and a cgroup2
 * mount; skipped (with the reason) otherwise. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/oci.h"

static char cg2[256];

static bool
find_cgroup2 (void)
{
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  char line[1024];
  bool found = false;
  while (f && !found && fgets (line, sizeof line, f))
    {
      char mp[256];
      char *sep = strstr (line, " - cgroup2 ");
      if (sep && sscanf (line, "%*s %*s %*s %*s %255s", mp) == 1)
        {
          snprintf (cg2, sizeof cg2, "%s", mp);
          found = true;
        }
    }
  if (f)
    fclose (f);
  return found;
}

/* Exit status of a child that joined a cgroup with `rules` and opened
 * /dev/null (1:3) with `flags`: 0 when it could, else its errno. */
static int
open_in_cgroup (const struct oci_devrule *rules, size_t n, int flags)
{
  if (getuid () != 0 || !find_cgroup2 ())
    cr_skip_test ("needs root and a cgroup2 mount");
  char dir[512];
  snprintf (dir, sizeof dir, "%s/securer-devtest-%d", cg2, (int) getpid ());
  cr_assert_eq (mkdir (dir, 0755), 0, "mkdir %s: %s", dir, strerror (errno));
  securer_err_t err = NULL;
  int rc = oci_devices_bpf_attach (dir, rules, n, &err);
  cr_assert_eq (rc, 0, "%s", err ? securer_error_message (err) : "");
  pid_t pid = fork ();
  if (pid == 0)
    {
      char procs[600];
      snprintf (procs, sizeof procs, "%s/cgroup.procs", dir);
      int fd = open (procs, O_WRONLY);
      if (fd < 0 || write (fd, "0", 1) != 1)
        _exit (200);
      close (fd);
      fd = open ("/dev/null", flags);
      _exit (fd >= 0 ? 0 : errno);
    }
  int status;
  cr_assert_eq (waitpid (pid, &status, 0), pid);
  cr_assert_eq (rmdir (dir), 0, "rmdir %s: %s", dir, strerror (errno));
  cr_assert (WIFEXITED (status));
  cr_assert_neq (WEXITSTATUS (status), 200, "could not join %s", dir);
  return WEXITSTATUS (status);
}

#define RULE(allow, type, maj, min, acc) ((struct oci_devrule) { allow, type, maj, min, acc })

Test (oci_devices, deny_all_denies_dev_null)
{
  struct oci_devrule r[] = { RULE (false, 'a', -1, -1, "rwm") };
  cr_assert_eq (open_in_cgroup (r, 1, O_RDONLY), EPERM);
}

Test (oci_devices, an_allow_rule_grants_only_its_access)
{
  struct oci_devrule r[] = { RULE (false, 'a', -1, -1, "rwm"), RULE (true, 'c', 1, 3, "r") };
  cr_assert_eq (open_in_cgroup (r, 2, O_RDONLY), 0);
  cr_assert_eq (open_in_cgroup (r, 2, O_WRONLY), EPERM);
}

Test (oci_devices, the_last_matching_rule_decides)
{
  struct oci_devrule later_deny[] = { RULE (true, 'a', -1, -1, "rwm"), RULE (false, 'c', 1, 3, "w") };
  cr_assert_eq (open_in_cgroup (later_deny, 2, O_RDONLY), 0);
  cr_assert_eq (open_in_cgroup (later_deny, 2, O_WRONLY), EPERM);
  struct oci_devrule later_allow[] = { RULE (false, 'c', 1, 3, "rwm"), RULE (true, 'a', -1, -1, "rwm") };
  cr_assert_eq (open_in_cgroup (later_allow, 2, O_WRONLY), 0);
}

Test (oci_devices, other_majors_and_minors_do_not_match)
{
  /* 1:5 (/dev/zero) and 2:3 allowed, 1:3 is neither: denied. */
  struct oci_devrule r[] = { RULE (false, 'a', -1, -1, "rwm"), RULE (true, 'c', 1, 5, "rwm"),
                             RULE (true, 'c', 2, 3, "rwm"), RULE (true, 'b', 1, 3, "rwm") };
  cr_assert_eq (open_in_cgroup (r, 4, O_RDONLY), EPERM);
  struct oci_devrule wild[] = { RULE (false, 'a', -1, -1, "rwm"), RULE (true, 'c', 1, -1, "rw") };
  cr_assert_eq (open_in_cgroup (wild, 2, O_RDWR), 0);
}

/* The program of a spec with many rules verifies, but the verifier's log
 * of it would be longer than any small buffer: it must load all the same. */
Test (oci_devices, a_program_of_many_rules_loads)
{
  enum { N = 120 };
  struct oci_devrule r[N + 2];
  r[0] = RULE (false, 'a', -1, -1, "rwm");
  for (int i = 0; i < N; i++)
    {
      r[i + 1] = RULE (true, i % 2 ? 'b' : 'c', 10 + i, i, "rwm");
      if (i % 3)
        r[i + 1].access[2] = '\0';  /* "rw": one more test in the program */
    }
  r[N + 1] = RULE (true, 'c', 1, 3, "r");
  cr_assert_eq (open_in_cgroup (r, N + 2, O_RDONLY), 0);
  cr_assert_eq (open_in_cgroup (r, N + 2, O_WRONLY), EPERM);
}
