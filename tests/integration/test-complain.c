/* Complain mode of `securer run`: what goes ahead, what is still refused
 * or killed, and what the status record and stderr report, checked on
 * real sandboxes from the probe's own output and from outside. */
#include <config.h>

#include <criterion/criterion.h>
#include <jansson.h>
#include <seccomp.h>

#include "cli-util.h"
#include "seccomp/complain.h"

static char tmpdir[] = "/tmp/securer-complain-XXXXXX";

static void
setup (void)
{
  cr_assert_not_null (mkdtemp (tmpdir));
}

static void
teardown (void)
{
  cli_remove_dir (tmpdir);
}

TestSuite (complain, .init = setup, .fini = teardown, .timeout = 120);

static char *
write_policy (const char *name, const char *extra)
{
  return cli_probe_policy (tmpdir, name, extra);
}

static size_t
count (const char *hay, const char *needle)
{
  size_t n = 0;
  for (const char *p = hay; (p = strstr (p, needle)) != NULL; p += strlen (needle))
    n++;
  return n;
}

static char *
status_path (void)
{
  char *s = NULL;
  cr_assert (asprintf (&s, "%s/status.json", tmpdir) > 0);
  return s;
}

static json_t *
load_status (const char *path)
{
  json_error_t je;
  json_t *o = json_load_file (path, 0, &je);
  cr_assert_not_null (o, "%s", je.text);
  return o;
}

/* The complain entry for syscall name, or NULL. */
static json_t *
entry (json_t *status, const char *name)
{
  json_t *arr = json_object_get (status, "complain");
  cr_assert (json_is_array (arr));
  size_t i;
  json_t *e;
  json_array_foreach (arr, i, e)
    if (strcmp (json_string_value (json_object_get (e, "syscall")), name) == 0)
      return e;
  return NULL;
}

static const char *
str (json_t *o, const char *key)
{
  return json_string_value (json_object_get (o, key));
}

Test (complain, an_errno_rule_is_enforced_without_complain_and_goes_ahead_counted_with_it)
{
  char *pol = write_policy ("eperm", "seccomp errno EPERM setuid");
  char *probe = probe_path (), *status = status_path ();
  struct cli_run r;

  char *plain[] = { "run", "--policy", pol, "--json-status", status, "--", probe, "setuid", "1000", "setuid",
                    "1000", NULL };
  cli_run (plain, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_eq (count (r.out, "setuid=EPERM\n"), 2, "%s", r.out);
  cr_assert_null (strstr (r.err, "complain"), "%s", r.err);
  json_t *o = load_status (status);
  cr_assert (json_is_null (json_object_get (o, "complain_mode")));
  cr_assert_eq (json_array_size (json_object_get (o, "complain")), 0);
  json_decref (o);
  cli_run_clear (&r);

  char *complain[] = { "run", "--complain", "--policy", pol, "--json-status", status, "--", probe, "setuid",
                       "1000", "setuid", "1000", NULL };
  cli_run (complain, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_eq (count (r.out, "setuid=OK\n"), 2, "%s", r.out);
  cr_assert_not_null (strstr (r.err, "warning: complain mode (--complain)"), "%s", r.err);
  /* After the command too, with the count: never a silent weakening. */
  cr_assert_not_null (strstr (r.err, "securer: complain mode (--complain): 2 calls reported, 1 distinct"), "%s",
                      r.err);
  o = load_status (status);
  cr_assert_str_eq (str (o, "complain_mode"), "run");
  json_t *e = entry (o, "setuid");
  cr_assert_not_null (e, "%s", json_dumps (o, 0));
  cr_assert_eq (json_integer_value (json_object_get (e, "calls")), 2);
  cr_assert_str_eq (str (e, "verdict"), "errno EPERM");
  cr_assert_str_eq (str (e, "decided_by"), "rule");
  char *loc = NULL;
  cr_assert (asprintf (&loc, "%s:3:", pol) > 0);
  cr_assert_eq (strncmp (str (e, "rule"), loc, strlen (loc)), 0, "%s", str (e, "rule"));
  cr_assert_str_eq (str (e, "answered"), "allowed");
  json_t *first = json_object_get (e, "first");
  cr_assert_gt (json_integer_value (json_object_get (first, "pid")), 1);
  cr_assert_str_eq (str (first, "comm"), "probe");
  cr_assert_str_eq (str (first, "exe"), probe);
  cr_assert_str_eq (json_string_value (json_array_get (json_object_get (first, "args"), 0)), "0x3e8");
  json_decref (o);
  free (loc);
  cli_run_clear (&r);
  free (status);
  free (probe);
  free (pol);
}

Test (complain, a_kill_rule_still_kills_and_is_reported)
{
  /* minimal's base/seccomp-hardening.policy kills ptrace. */
  char *pol = write_policy ("kill", "");
  char *probe = probe_path (), *status = status_path ();
  struct cli_run r;
  char *args[] = { "run", "--complain", "--policy", pol, "--json-status", status, "--", probe, "ptrace", "echo",
                   "after", NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 128 + SIGSYS, "%s", r.err);
  cr_assert_null (strstr (r.out, "ptrace="), "%s", r.out);
  cr_assert_null (strstr (r.out, "after"), "%s", r.out);
  json_t *o = load_status (status);
  cr_assert_str_eq (str (o, "kill_reason"), "seccomp");
  cr_assert_str_eq (str (o, "detail"), "ptrace");
  json_t *e = entry (o, "ptrace");
  cr_assert_not_null (e);
  cr_assert_eq (json_integer_value (json_object_get (e, "calls")), 1);
  cr_assert_str_eq (str (e, "verdict"), "kill-process");
  cr_assert_str_eq (str (e, "answered"), "kill-process");
  cr_assert_not_null (strstr (str (e, "rule"), "seccomp-hardening.policy:"));
  json_decref (o);
  cli_run_clear (&r);
  free (status);
  free (probe);
  free (pol);
}

Test (complain, a_kill_default_goes_ahead_and_verbose_lists_each_call)
{
  /* setuid is in no rule of minimal: the default decides it. */
  char *pol = write_policy ("killdefault", "seccomp default kill-process");
  char *probe = probe_path ();
  struct cli_run r;
  char *plain[] = { "run", "--policy", pol, "--", probe, "setuid", "1000", NULL };
  cli_run (plain, &r);
  cr_assert_eq (r.status, 128 + SIGSYS, "%s", r.err);
  cli_run_clear (&r);

  char *args[] = { "run", "--complain", "--verbose", "--policy", pol, "--", probe, "setuid", "1000", "setuid",
                   "1000", "setuid", "1000", NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_eq (count (r.out, "setuid=OK\n"), 3, "%s", r.out);
  cr_assert_not_null (strstr (r.err, "securer: complain:   setuid: 3 calls, kill-process by default, allowed; "
                                     "first by pid "),
                      "%s", r.err);
  cr_assert_not_null (strstr (r.err, "setuid(0x3e8, "), "%s", r.err);
  cli_run_clear (&r);
  free (probe);
  free (pol);
}

Test (complain, a_log_default_reports_and_enforces_every_other_verdict)
{
  /* Without --complain: the default goes ahead and is reported, the errno
   * rule and the kill rules are enforced as written. */
  char *pol = write_policy ("logdefault", "seccomp default log\nseccomp errno EPERM setuid");
  char *probe = probe_path (), *status = status_path ();
  struct cli_run r;
  char *args[] = { "run", "--policy", pol, "--json-status", status, "--", probe, "setuid", "1000", "ptrace", NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 128 + SIGSYS, "%s", r.err);
  cr_assert_eq (count (r.out, "setuid=EPERM\n"), 1, "%s", r.out);
  cr_assert_not_null (strstr (r.err, "complain mode (the policy's log/notify actions)"), "%s", r.err);
  json_t *o = load_status (status);
  cr_assert_str_eq (str (o, "complain_mode"), "policy");
  cr_assert_null (entry (o, "setuid"));
  json_t *e = entry (o, "ptrace");
  cr_assert_not_null (e);
  cr_assert_str_eq (str (e, "answered"), "kill-process");
  json_decref (o);
  cli_run_clear (&r);

  /* A call no rule of minimal names, made through the default. */
  char *args2[] = { "run", "--policy", pol, "--json-status", status, "--", probe, "setuid", "1000", NULL };
  char *pol2 = write_policy ("logdefault2", "seccomp default log");
  args2[2] = pol2;
  cli_run (args2, &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_eq (count (r.out, "setuid=OK\n"), 1, "%s", r.out);
  o = load_status (status);
  e = entry (o, "setuid");
  cr_assert_not_null (e);
  cr_assert_eq (json_integer_value (json_object_get (e, "calls")), 1);
  cr_assert_str_eq (str (e, "verdict"), "log");
  cr_assert_str_eq (str (e, "decided_by"), "default");
  cr_assert_str_eq (str (e, "answered"), "allowed");
  json_decref (o);
  cli_run_clear (&r);
  free (pol2);
  free (status);
  free (probe);
  free (pol);
}

Test (complain, seccomp_off_is_refused_with_125)
{
  char *pol = write_policy ("off", "seccomp off");
  char *probe = probe_path ();
  struct cli_run r;
  char *args[] = { "run", "--complain", "--policy", pol, "--", probe, "echo", "ran", NULL };
  cli_run (args, &r);
  cr_assert_eq (r.status, 125, "%s", r.err);
  cr_assert_null (strstr (r.out, "ran"));
  cr_assert_not_null (strstr (r.err, "seccomp off"), "%s", r.err);
  cli_run_clear (&r);
  free (probe);
  free (pol);
}

Test (complain, without_continue_from_user_notification_it_is_refused)
{
  /* The check `securer run` makes before anything starts, on a libseccomp
   * that reports an API level below CONTINUE's. */
  cr_assert_eq (securer_complain_available (NULL), 0);
  unsigned level = seccomp_api_get ();
  cr_assert_eq (seccomp_api_set (5), 0);
  securer_err_t err = NULL;
  cr_assert_eq (securer_complain_available (&err), -1);
  cr_assert_eq (err->errnum, ENOSYS);
  cr_assert_not_null (strstr (securer_error_message (err), "SECCOMP_USER_NOTIF_FLAG_CONTINUE"));
  securer_error_free (&err);
  cr_assert_eq (seccomp_api_set (level), 0);
}
