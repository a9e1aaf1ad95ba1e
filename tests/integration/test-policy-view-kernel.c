/* linux/view.c against real sandboxes: for the shipped policies, what
 * `securer policy test` reads from the policy (`path PATH -> KIND`, `exec
 * PATH -> allowed|denied`) must be what tests/helpers/view-probe finds in
 * a sandbox `securer run` builds from the same policy. */
#include <config.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/view.h"
#include "securer/policy.h"

#define PROBE_DIR "/opt/view-probe"

static const char *
env_or (const char *name, const char *fallback)
{
  const char *v = getenv (name);
  return v ? v : fallback;
}

/* Paths whose answer differs between the shipped policies, or that a
 * mistake of the view would get wrong: every kind of mount, the root's
 * directories, symlinks of the policy, masks and the proc entries every
 * proc mount hides, the minimal /dev, exec lists and noexec mounts. */
static const char *const paths[] = {
  "/", "/usr", "/usr/bin", "/usr/bin/dash", "/bin/sh", "/usr/bin/sh", "/usr/bin/rm", "/usr/bin/which",
  "/usr/bin/env", "/usr/bin/python3", "/usr/lib/R", "/usr/lib/R/bin/exec/R", "/usr/lib/R/bin/Rscript",
  "/lib64/ld-linux-x86-64.so.2", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/etc", "/etc/ld.so.cache",
  "/etc/passwd", "/etc/R", "/home", "/root", "/var", "/run", "/sys", "/tmp", "/dev", "/dev/null",
  "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/shm", "/dev/sda", "/proc", "/proc/meminfo",
  "/proc/kcore", "/proc/keys", "/proc/sysrq-trigger", "/proc/cmdline", "/proc/loadavg", "/proc/acpi",
  "/proc/sys/fs/file-nr", "/proc/1", "/proc/cpuinfo", "/proc/irq", "/proc/fs", "/proc/sys/fs/quota",
  "/proc/sys/fs", "/dev/ptmx",
};

/* What the host has where the sandbox shows `v`: the view never looks at
 * the host, so a path it places in a bind or in proc that the host (or
 * its kernel) does not have is absent in the sandbox for the host's
 * reason, not the policy's. */
static bool
host_lacks (const struct securer_view *v)
{
  const struct securer_mount *m = v->mount;
  if (m == NULL || v->resolved == NULL)
    return false;
  const char *rest = v->resolved + strlen (m->dest);
  char host[8192];
  if (m->type == SECURER_MOUNT_RO || m->type == SECURER_MOUNT_RW)
    snprintf (host, sizeof host, "%s%s", m->source, rest);
  else if (m->type == SECURER_MOUNT_PROC)
    snprintf (host, sizeof host, "/proc%s", rest);
  else
    return false;
  /* A host symlink is followed in the sandbox's view, where its target
   * may not be (the view does not follow the host's links). */
  struct stat st;
  return lstat (host, &st) != 0 || S_ISLNK (st.st_mode);
}

/* `extra`: a line appended to the shipped policy, or "". */
static void
check_policy (const char *name, const char *extra)
{
  if (access ("/usr/lib/R/bin/exec/R", X_OK) != 0 && strcmp (name, "r") == 0)
    cr_skip_test ("R is not installed");
  const char *src = env_or ("SECURER_SRCDIR", SECURER_ABS_SRCDIR);
  const char *build = env_or ("SECURER_BUILDDIR", SECURER_ABS_BUILDDIR);
  char dir[] = "/tmp/securer-view-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char base[4096], pol[4096];
  snprintf (base, sizeof base, "%s/policies/%s.policy", src, name);
  securer_err_t err = NULL;
  struct securer_policy *b = NULL;
  cr_assert_eq (securer_policy_load_file (base, &b, NULL, &err), 0, "%s", securer_error_message (err));
  /* The probe is added where nothing of the policy is; an exec list must
   * name it, and a policy without one must not get one. */
  snprintf (pol, sizeof pol, "%s/test.policy", dir);
  FILE *f = fopen (pol, "w");
  cr_assert_not_null (f);
  fprintf (f, "include \"%s\"\nmount ro %s/tests/helpers %s\n%s\n%s\n", base, build, PROBE_DIR,
           b->exec_restricted ? "exec " PROBE_DIR "/view-probe" : "", extra);
  cr_assert_eq (fclose (f), 0);
  securer_policy_free (b);

  struct securer_policy *p = NULL;
  cr_assert_eq (securer_policy_load_file (pol, &p, NULL, &err), 0, "%s", securer_error_message (err));

  char *cmd = NULL;
  size_t len = 0;
  FILE *c = open_memstream (&cmd, &len);
  fprintf (c, "'%s/securer' run --policy '%s' -- " PROBE_DIR "/view-probe", env_or ("SECURER_BUILDDIR", build), pol);
  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
    fprintf (c, " %s", paths[i]);
  fclose (c);
  FILE *out = popen (cmd, "r");
  cr_assert_not_null (out);
  char line[8192];
  size_t seen = 0;
  while (fgets (line, sizeof line, out) != NULL)
    {
      char path[4096], kind[32], exec[32];
      cr_assert_eq (sscanf (line, "%4095s %31s %31s", path, kind, exec), 3, "%s", line);
      struct securer_view v;
      cr_assert_eq (securer_view_path (p, path, &v, &err), 0, "%s", securer_error_message (err));
      if (strcmp (kind, "absent") == 0 && v.kind != SECURER_VIEW_ABSENT && host_lacks (&v))
        {
          securer_view_clear (&v);
          seen++;
          continue;
        }
      cr_expect_str_eq (securer_view_kind_name (v.kind), kind, "%s: %s says %s (%s), the sandbox %s", name, path,
                        securer_view_kind_name (v.kind), v.why, kind);
      if (strcmp (exec, "-") != 0)
        cr_expect_str_eq (v.exec ? "allowed" : "denied", exec, "%s: exec %s: the view says %s (%s), the sandbox %s",
                          name, path, v.exec ? "allowed" : "denied", v.why_exec, exec);
      securer_view_clear (&v);
      seen++;
    }
  int st = pclose (out);
  cr_assert_eq (st, 0, "%s: securer run exited with %d", cmd, st);
  cr_assert_eq (seen, sizeof paths / sizeof *paths);
  free (cmd);
  securer_policy_free (p);
  unlink (pol);
  rmdir (dir);
}

TestSuite (view_kernel, .timeout = 120);

Test (view_kernel, r)
{
  check_policy ("r", "");
}

Test (view_kernel, minimal)
{
  check_policy ("minimal", "");
}

Test (view_kernel, r_server)
{
  check_policy ("r-server", "");
}

/* A procfs of the processes only: everything host-wide is absent, not
 * masked. */
Test (view_kernel, minimal_proc_subset_pid)
{
  check_policy ("minimal", "mount proc /proc subset=pid");
}

/* The host-wide entries left visible: read-only, not masked. */
Test (view_kernel, minimal_proc_unmasked)
{
  check_policy ("minimal", "mount proc /proc unmasked");
}
