/* The audit log's file handling and format, and error sanitising. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/internal.h"

static char dir[] = "/tmp/securer-audit-XXXXXX";

static void
setup (void)
{
  cr_assert_not_null (mkdtemp (dir));
}

static void
teardown (void)
{
  char cmd[128];
  /* Only our own mkdtemp directory. */
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq (system (cmd), 0);
}

TestSuite (audit, .init = setup, .fini = teardown);

Test (audit, creates_0600_and_writes_json_lines)
{
  char path[256];
  snprintf (path, sizeof path, "%s/log.jsonl", dir);
  mode_t old = umask (0);
  struct securer_audit *a = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_audit_open (NULL, path, &a, &err), 0);
  umask (old);
  struct stat st;
  cr_assert_eq (stat (path, &st), 0);
  cr_assert_eq (st.st_mode & 07777, 0600);
  securer_audit_log (a, "sess_1", "tool_call", json_pack ("{s:s, s:{s:i}}", "tool", "add", "args", "a", 1));
  securer_audit_log (a, "sess_1", "session_close", NULL);
  cr_assert_not (securer_audit_failed (a));
  securer_audit_close (a);

  FILE *f = fopen (path, "r");
  char line[1024];
  cr_assert_not_null (fgets (line, sizeof line, f));
  json_t *j = json_loads (line, 0, NULL);
  cr_assert_not_null (j);
  cr_assert_str_eq (json_string_value (json_object_get (j, "event")), "tool_call");
  cr_assert_str_eq (json_string_value (json_object_get (j, "session_id")), "sess_1");
  cr_assert_str_eq (json_string_value (json_object_get (j, "tool")), "add");
  regex_t re;
  regcomp (&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$", REG_EXTENDED);
  cr_assert_eq (regexec (&re, json_string_value (json_object_get (j, "timestamp")), 0, NULL, 0), 0);
  regfree (&re);
  json_decref (j);
  cr_assert_not_null (fgets (line, sizeof line, f));
  cr_assert_null (fgets (line, sizeof line, f));
  fclose (f);
}

Test (audit, refuses_symlink_fifo_and_group_writable)
{
  char target[256], link[256], fifo[256], gw[256];
  snprintf (target, sizeof target, "%s/target", dir);
  snprintf (link, sizeof link, "%s/link", dir);
  snprintf (fifo, sizeof fifo, "%s/fifo", dir);
  snprintf (gw, sizeof gw, "%s/gw", dir);
  cr_assert_eq (symlink (target, link), 0);
  struct securer_audit *a = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_audit_open (NULL, link, &a, &err), -1);
  cr_assert_eq (securer_error_errno (err), ELOOP);
  securer_error_free (&err);
  cr_assert_eq (access (target, F_OK), -1, "the symlink's target must not be created");

  cr_assert_eq (mkfifo (fifo, 0600), 0);
  cr_assert_eq (securer_audit_open (NULL, fifo, &a, &err), -1);
  cr_assert (strstr (securer_error_message (err), "not a regular file") != NULL);
  securer_error_free (&err);

  cr_assert_eq (securer_audit_open (NULL, "/dev/null", &a, &err), -1);
  securer_error_free (&err);

  int fd = open (gw, O_CREAT | O_WRONLY, 0600);
  cr_assert_geq (fd, 0);
  fchmod (fd, 0620);
  close (fd);
  cr_assert_eq (securer_audit_open (NULL, gw, &a, &err), -1);
  cr_assert_eq (securer_error_errno (err), EPERM);
  securer_error_free (&err);
}

static void
expect_sanitized (const char *in, const char *out)
{
  char *s = securer_sanitize_error (in);
  cr_assert_str_eq (s, out, "input: %s", in);
  free (s);
}

Test (sanitize, strips_paths_pids_and_addresses)
{
  expect_sanitized ("cannot open file '/home/alice/secret.csv': No such file",
                    "cannot open file '<path>': No such file");
  expect_sanitized ("in /usr/lib/R/library/base", "in <path>");
  expect_sanitized ("killed pid 12345", "killed pid <pid>");
  expect_sanitized ("PID: 77 died", "PID: <pid> died");
  expect_sanitized ("connect to 10.0.0.12 failed", "connect to <ip> failed");
  expect_sanitized ("connect to fe80::1%eth0 failed", "connect to <ip> failed");
  expect_sanitized ("connect to 2001:db8:85a3::8a2e:370:7334 refused", "connect to <ip> refused");
  expect_sanitized ("object 'x' not found", "object 'x' not found");
  expect_sanitized ("3 / 4 is 0.75", "3 / 4 is 0.75");
  char host[256];
  gethostname (host, sizeof host);
  char in[600], want[64];
  snprintf (in, sizeof in, "resolve %s", host);
  snprintf (want, sizeof want, "resolve <hostname>");
  if (strcmp (host, "localhost") != 0)
    expect_sanitized (in, want);
}
