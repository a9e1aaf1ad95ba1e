/* Work directories and the files of upload and download
 * (src/cli/serve_files.c): names are resolved beneath the directory by
 * the kernel, never through a symbolic link the sandbox planted. */
#include <config.h>

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve_files.h"

static char root[64];
static struct serve_workdir wd = { .fd = -1 };

/* A work directory the tests may use whoever runs them: as root one of
 * nobody's in a directory nobody may traverse. */
static void
setup (void)
{
  snprintf (root, sizeof root, "/tmp/securer-wd-XXXXXX");
  cr_assert_not_null (mkdtemp (root));
  chmod (root, 0711);
  char dir[96];
  snprintf (dir, sizeof dir, "%s/w", root);
  cr_assert_eq (mkdir (dir, 0755), 0);
  if (geteuid () == 0)
    cr_assert_eq (chown (dir, 65534, 65534), 0);
  struct securer_policy *p = calloc (1, sizeof *p);
  securer_err_t err = NULL;
  cr_assert_eq (serve_workdir_apply (p, dir, &wd, &err), 0, "%s", err ? securer_error_message (err) : "");
  cr_assert_eq (p->n_mounts, 1);
  cr_assert_eq (p->mounts[0].type, SECURER_MOUNT_RW);
  cr_assert_str_eq (p->mounts[0].source, dir);
  cr_assert_str_eq (p->mounts[0].dest, SERVE_WORKDIR);
  cr_assert_str_eq (p->cwd, SERVE_WORKDIR);
  if (geteuid () == 0)
    {
      cr_assert (p->host_uid == 65534 && p->host_gid == 65534, "the sandbox writes as the owner");
      cr_assert_eq (p->session_template, SECURER_SESSION_TEMPLATE_OFF, "a template's fork has a leased id");
    }
  securer_policy_free (p);
}

static void
teardown (void)
{
  if (wd.fd >= 0)
    close (wd.fd);
  wd.fd = -1;
  char cmd[128];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", root);
  cr_assert_eq (system (cmd), 0);
}

static char *
at (const char *name)
{
  static char path[256];
  snprintf (path, sizeof path, "%s/w/%s", root, name);
  return path;
}

static void
expect_error (int rc, securer_err_t *err, const char *fragment)
{
  cr_assert_eq (rc, -1, "accepted (expected '%s')", fragment);
  cr_assert (strstr (securer_error_message (*err), fragment) != NULL, "'%s' lacks '%s'",
             securer_error_message (*err), fragment);
  securer_error_free (err);
}

Test (serve_files, names)
{
  securer_err_t err = NULL;
  static const char *const good[] = { "a.csv", "sub/b.txt", ".hidden", "a..b", NULL };
  static const char *const bad[] = { "", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/", "a/.", NULL };
  for (const char *const *g = good; *g; g++)
    cr_assert_eq (serve_file_name_check (*g, &err), 0, "%s", *g);
  for (const char *const *b = bad; *b; b++)
    {
      cr_assert_eq (serve_file_name_check (*b, &err), -1, "accepted '%s'", *b);
      securer_error_free (&err);
    }
}

Test (serve_files, work_directories_the_sandbox_may_not_have)
{
  struct securer_policy *p = calloc (1, sizeof *p);
  struct serve_workdir w;
  securer_err_t err = NULL;
  char base[] = "/tmp/securer-wd-XXXXXX", dir[64], link[64];
  cr_assert_not_null (mkdtemp (base));
  expect_error (serve_workdir_apply (p, "relative/dir", &w, &err), &err, "absolute path");
  snprintf (dir, sizeof dir, "%s/d", base);
  mkdir (dir, 0775);
  chmod (dir, 0775);
  if (geteuid () == 0)
    chown (dir, 65534, 65534);
  expect_error (serve_workdir_apply (p, dir, &w, &err), &err, "group or others may write it");
  chmod (dir, 0755);
  snprintf (link, sizeof link, "%s/l", base);
  symlink (dir, link);
  expect_error (serve_workdir_apply (p, link, &w, &err), &err, "symbolic link");
  if (geteuid () == 0)
    {
      chown (dir, 0, 0);
      expect_error (serve_workdir_apply (p, dir, &w, &err), &err, "owned by root");
    }
  else
    expect_error (serve_workdir_apply (p, "/", &w, &err), &err, "it is not ours");
  cr_assert_eq (p->n_mounts, 0, "a refused directory is not mounted");
  securer_policy_free (p);
  char cmd[96];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", base);
  system (cmd);
}

Test (serve_files, write_replaces_and_never_follows, .init = setup, .fini = teardown)
{
  securer_err_t err = NULL;
  cr_assert_eq (serve_file_write (&wd, "a.txt", "hello", 5, false, 100, &err), 0, "%s",
                err ? securer_error_message (err) : "");
  struct stat st;
  cr_assert_eq (stat (at ("a.txt"), &st), 0);
  cr_assert_eq (st.st_size, 5);
  if (geteuid () == 0)
    cr_assert_eq (st.st_uid, 65534, "owned by the directory's owner");
  cr_assert_eq (serve_file_write (&wd, "a.txt", " world", 6, true, 100, &err), 0);
  cr_assert_eq (stat (at ("a.txt"), &st), 0);
  cr_assert_eq (st.st_size, 11);
  expect_error (serve_file_write (&wd, "a.txt", "x", 1, true, 11, &err), &err, "more than the 11");
  expect_error (serve_file_write (&wd, "b.txt", "toolarge", 8, false, 4, &err), &err, "more than the 4");
  /* A link planted where the file goes is replaced, its target untouched. */
  char victim[128];
  snprintf (victim, sizeof victim, "%s/victim", root);
  FILE *f = fopen (victim, "w");
  fputs ("secret", f);
  fclose (f);
  cr_assert_eq (symlink (victim, at ("planted")), 0);
  cr_assert_eq (serve_file_write (&wd, "planted", "new", 3, false, 100, &err), 0);
  cr_assert_eq (lstat (at ("planted"), &st), 0);
  cr_assert (S_ISREG (st.st_mode) && st.st_size == 3, "the link was not replaced by the file");
  cr_assert_eq (stat (victim, &st), 0);
  cr_assert_eq (st.st_size, 6, "the link's target was written");
  /* Appending never follows one either, nor does a directory on the way. */
  cr_assert_eq (symlink (victim, at ("planted2")), 0);
  expect_error (serve_file_write (&wd, "planted2", "x", 1, true, 100, &err), &err, "symbolic link");
  cr_assert_eq (symlink (root, at ("updir")), 0);
  expect_error (serve_file_write (&wd, "updir/victim", "x", 1, false, 100, &err), &err, "symbolic link");
  cr_assert_eq (stat (victim, &st), 0);
  cr_assert_eq (st.st_size, 6);
  cr_assert_eq (mkdir (at ("sub"), 0755), 0);
  cr_assert_eq (serve_file_write (&wd, "sub/c.txt", "c", 1, false, 100, &err), 0);
  expect_error (serve_file_write (&wd, "sub", "c", 1, false, 100, &err), &err, "is a directory");
  expect_error (serve_file_write (&wd, "nodir/c.txt", "c", 1, false, 100, &err), &err, "does not exist");
  expect_error (serve_file_write (&wd, "../victim", "c", 1, false, 100, &err), &err, "'..'");
  /* Nothing of the temporary files is left behind. */
  char cmd[160];
  snprintf (cmd, sizeof cmd, "ls -a '%s/w' | grep -q securer-upload", root);
  cr_assert_neq (system (cmd), 0, "a temporary file was left");
}

Test (serve_files, read_in_parts_of_regular_files_only, .init = setup, .fini = teardown)
{
  securer_err_t err = NULL;
  cr_assert_eq (serve_file_write (&wd, "d.bin", "0123456789", 10, false, 100, &err), 0);
  char *data;
  size_t n;
  uint64_t size;
  cr_assert_eq (serve_file_read (&wd, "d.bin", 0, 4, 100, &data, &n, &size, &err), 0);
  cr_assert (n == 4 && size == 10 && memcmp (data, "0123", 4) == 0);
  free (data);
  cr_assert_eq (serve_file_read (&wd, "d.bin", 8, 4, 100, &data, &n, &size, &err), 0);
  cr_assert (n == 2 && memcmp (data, "89", 2) == 0);
  free (data);
  expect_error (serve_file_read (&wd, "d.bin", 11, 4, 100, &data, &n, &size, &err), &err, "past its end");
  expect_error (serve_file_read (&wd, "d.bin", 0, 4, 9, &data, &n, &size, &err), &err, "more than the 9");
  cr_assert_eq (symlink ("/etc/passwd", at ("pw")), 0);
  expect_error (serve_file_read (&wd, "pw", 0, 100, 10000, &data, &n, &size, &err), &err, "symbolic link");
  cr_assert_eq (mkfifo (at ("fifo"), 0644), 0);
  expect_error (serve_file_read (&wd, "fifo", 0, 100, 100, &data, &n, &size, &err), &err, "not a regular file");
  expect_error (serve_file_read (&wd, "/etc/passwd", 0, 100, 10000, &data, &n, &size, &err), &err, "absolute");
  expect_error (serve_file_read (&wd, "none", 0, 100, 100, &data, &n, &size, &err), &err, "does not exist");
}
