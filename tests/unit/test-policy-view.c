/* linux/view.c: what a path inside the sandbox will be, read from the
 * policy alone (the `path` and `exec` lines of `securer policy test`). */
#include <config.h>

#include <errno.h>

#include "linux/view.h"
#include "policy-test.h"

static struct securer_policy *
policy (const char *text)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("/view/test.policy", text, &diags);
  cr_assert_not_null (p, "%s", diags);
  free (diags);
  return p;
}

static void
expect_view (const struct securer_policy *p, const char *path, enum securer_view_kind kind, bool exec)
{
  struct securer_view v;
  securer_err_t err = NULL;
  cr_assert_eq (securer_view_path (p, path, &v, &err), 0, "%s", securer_error_message (err));
  cr_expect_eq (v.kind, kind, "%s: %s, expected %s (%s)", path, securer_view_kind_name (v.kind),
                securer_view_kind_name (kind), v.why);
  cr_expect_eq (v.exec, exec, "%s: exec %d (%s)", path, v.exec, v.why_exec);
  securer_view_clear (&v);
}

/* Mounts stack in order: a later one hides what it covers, an earlier
 * one's subtree keeps what a later, deeper one does not replace. */
Test (policy_view, later_mounts_cover_earlier_ones)
{
  struct securer_policy *p = policy ("landlock off\n"
                                     "mount ro /usr\n"
                                     "mount tmpfs /usr/local exec\n"
                                     "mount ro /opt/tool\n"
                                     "mount tmpfs /opt\n"
                                     "mount rw /srv/data\n"
                                     "mount dir /empty\n");
  expect_view (p, "/usr/bin/ls", SECURER_VIEW_READ_ONLY, true);
  expect_view (p, "/usr/local/bin/x", SECURER_VIEW_WRITABLE, true);
  expect_view (p, "/opt/tool/bin", SECURER_VIEW_WRITABLE, false);   /* the tmpfs hid the bind */
  expect_view (p, "/srv/data/f", SECURER_VIEW_WRITABLE, false);     /* rw defaults to noexec */
  expect_view (p, "/srv", SECURER_VIEW_READ_ONLY, false);           /* a directory of the root */
  expect_view (p, "/srv/other", SECURER_VIEW_ABSENT, false);
  expect_view (p, "/empty", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/empty/x", SECURER_VIEW_ABSENT, false);
  expect_view (p, "/", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/usr/./bin/../bin//ls", SECURER_VIEW_READ_ONLY, true);
  securer_policy_free (p);
}

Test (policy_view, symlinks_masks_and_landlock)
{
  struct securer_policy *p = policy ("mount ro /usr\n"
                                     "mount tmpfs /tmp\n"
                                     "mount symlink /bin -> usr/bin\n"
                                     "mount symlink /usr2 -> /usr\n"
                                     "mount symlink /loop -> loop2\n"
                                     "mount symlink /loop2 -> loop\n"
                                     "mount proc /proc\n"
                                     "mount dev /dev\n"
                                     "mask /usr/secret /proc/kcore /nowhere\n"
                                     "exec /bin/sh /usr/libexec\n");
  expect_view (p, "/bin/sh", SECURER_VIEW_READ_ONLY, true);        /* in the exec list */
  expect_view (p, "/usr/bin/sh", SECURER_VIEW_READ_ONLY, true);
  expect_view (p, "/usr2/bin/sh", SECURER_VIEW_READ_ONLY, true);
  expect_view (p, "/usr/bin/ls", SECURER_VIEW_READ_ONLY, false);   /* not in it */
  expect_view (p, "/usr/libexec/a/b", SECURER_VIEW_READ_ONLY, true);
  expect_view (p, "/loop/x", SECURER_VIEW_ABSENT, false);
  expect_view (p, "/usr/secret/key", SECURER_VIEW_MASKED, false);
  expect_view (p, "/proc/kcore", SECURER_VIEW_MASKED, false);
  expect_view (p, "/proc/self/status", SECURER_VIEW_READ_ONLY, false);
  /* What every proc mount hides, the policy's masks or not. */
  expect_view (p, "/proc/cmdline", SECURER_VIEW_MASKED, false);
  expect_view (p, "/proc/sys/fs/file-nr", SECURER_VIEW_MASKED, false);
  expect_view (p, "/proc/acpi/wakeup", SECURER_VIEW_MASKED, false);
  expect_view (p, "/proc/meminfo", SECURER_VIEW_MASKED, false);   /* no cgroup memory limit */
  expect_view (p, "/proc/irq/24/spurious", SECURER_VIEW_MASKED, false);
  expect_view (p, "/proc/fs/ext4/vda/mb_groups", SECURER_VIEW_MASKED, false);
  expect_view (p, "/proc/sys/fs/quota/syncs", SECURER_VIEW_MASKED, false);
  expect_view (p, "/proc/sys/fs/file-max", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/nowhere", SECURER_VIEW_ABSENT, false);         /* a mask shows nothing new */
  expect_view (p, "/dev/null", SECURER_VIEW_WRITABLE, false);
  expect_view (p, "/dev/urandom", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/dev/shm/x", SECURER_VIEW_WRITABLE, false);
  expect_view (p, "/dev/sda", SECURER_VIEW_ABSENT, false);
  expect_view (p, "/dev/ptmx", SECURER_VIEW_WRITABLE, false);     /* the default cap */
  expect_view (p, "/dev/pts/0", SECURER_VIEW_WRITABLE, false);
  expect_view (p, "/tmp/a.out", SECURER_VIEW_WRITABLE, false);
  securer_policy_free (p);

  /* limit ptys 0: neither ptmx nor pts. */
  p = policy ("mount dev /dev\nlimit ptys 0\n");
  expect_view (p, "/dev/ptmx", SECURER_VIEW_ABSENT, false);
  expect_view (p, "/dev/pts/0", SECURER_VIEW_ABSENT, false);
  expect_view (p, "/dev/null", SECURER_VIEW_WRITABLE, false);
  securer_policy_free (p);

  /* subset=pid: the processes' directories alone; nothing to mask. */
  p = policy ("mount proc /proc subset=pid\nmask /proc/kcore\n");
  expect_view (p, "/proc/self/status", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc/thread-self", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc/12/maps", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc/cmdline", SECURER_VIEW_ABSENT, false);
  expect_view (p, "/proc/kcore", SECURER_VIEW_ABSENT, false);
  expect_view (p, "/proc/12a", SECURER_VIEW_ABSENT, false);
  expect_view (p, "/proc/selfish", SECURER_VIEW_ABSENT, false);
  securer_policy_free (p);

  /* unmasked: the host-wide entries as the kernel shows them; the
   * policy's own masks and the read-only entries still apply. */
  p = policy ("mount proc /proc unmasked\nmask /proc/kcore\n");
  expect_view (p, "/proc/loadavg", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc/meminfo", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc/acpi/wakeup", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc/irq/24/spurious", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc/fs/ext4/vda/mb_groups", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc/sys/fs/quota/syncs", SECURER_VIEW_READ_ONLY, false);
  expect_view (p, "/proc/kcore", SECURER_VIEW_MASKED, false);
  securer_policy_free (p);

  p = policy ("mount proc /proc\ncgroup memory 1G\n");
  expect_view (p, "/proc/meminfo", SECURER_VIEW_READ_ONLY, false);
  securer_policy_free (p);

  /* Without Landlock the exec list is not enforced: the mounts decide. */
  p = policy ("landlock off\nmount ro /usr\nexec /usr/bin/sh\n");
  expect_view (p, "/usr/bin/ls", SECURER_VIEW_READ_ONLY, true);
  securer_policy_free (p);
}

Test (policy_view, a_relative_path_is_refused)
{
  struct securer_policy *p = policy ("mount ro /usr\n");
  struct securer_view v;
  securer_err_t err = NULL;
  cr_assert_eq (securer_view_path (p, "usr", &v, &err), -1);
  cr_assert_eq (securer_error_errno (err), EINVAL);
  securer_error_free (&err);
  securer_policy_free (p);
}
