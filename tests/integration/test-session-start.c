/* How a session's R starts: the switch (policy, option, environment), a
 * refused 'on', cold starts, and the templates the library keeps (one per
 * policy, shared, freed with the last session, replaced when it died).
 *
 * Which way R started is read from the kernel, not from the library: a
 * cold session's pid namespace is a child of ours, a session forked from
 * a template has the template's pid namespace as its parent. */
#include <config.h>

#include <criterion/criterion.h>
#include <stdbool.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "securer/sandbox.h"
#include "securer/session.h"

#include "ident.h"

/* The parent of pid's pid namespace, held (ident.h says why a bare inode
 * number would not do). */
static struct ns_ref
parent_pidns (pid_t pid)
{
  struct ns_ref own = ns_ref_of (pid, "pid");
  int pfd = ioctl (own.fd, NS_GET_PARENT);
  cr_assert_geq (pfd, 0, "NS_GET_PARENT: %s", strerror (errno));
  ns_ref_release (&own);
  return ns_ref_from_fd (pfd);
}

/* Whether the parent of pid's pid namespace is ns. */
static bool
parent_pidns_is (pid_t pid, const struct ns_ref *ns)
{
  struct ns_ref p = parent_pidns (pid);
  bool same = ns_ref_same (&p, ns);
  ns_ref_release (&p);
  return same;
}

/* Processes on the host whose pid namespace is ns (zombies left out: they
 * are gone but for their parent's wait), each sent sig unless it is 0. */
static unsigned
scan_pidns (const struct ns_ref *ns, int sig)
{
  unsigned n = 0;
  DIR *d = opendir ("/proc");
  cr_assert_not_null (d);
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    {
      char path[300], line[512];
      if (e->d_name[0] < '1' || e->d_name[0] > '9')
        continue;
      snprintf (path, sizeof path, "/proc/%s/ns/pid", e->d_name);
      if (!ns_ref_is_at (ns, path))
        continue;
      snprintf (path, sizeof path, "/proc/%s/stat", e->d_name);
      FILE *f = fopen (path, "re");
      const char *paren = f && fgets (line, sizeof line, f) ? strrchr (line, ')') : NULL;
      if (f)
        fclose (f);
      if (paren != NULL && paren[2] == 'Z')
        continue;
      n++;
      if (sig != 0)
        kill (atoi (e->d_name), sig);
    }
  closedir (d);
  return n;
}

static unsigned
processes_in (const struct ns_ref *ns)
{
  return scan_pidns (ns, 0);
}

static struct securer_policy *
policy_with (const char *extra)
{
  const char *top = getenv ("SECURER_SRCDIR");
  cr_assert_not_null (top);
  char *text = NULL;
  cr_assert_geq (asprintf (&text, "include \"%s/policies/r.policy\"\n%s", top, extra), 0);
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_string ("t.policy", text, strlen (text), &p, NULL, &err), 0, "%s",
                securer_error_message (err));
  free (text);
  return p;
}

static struct securer_session *
open_ok (const struct securer_policy *p, enum securer_session_start start)
{
  struct securer_session_opts o = { .policy = p, .start = start };
  struct securer_session *s = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_open (&o, &s, &err), 0, "open: %s", securer_error_message (err));
  return s;
}

static void
expect_value (struct securer_session *s, const char *code, int want)
{
  struct securer_result r;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_execute (s, code, NULL, &r, &err), 0, "%s: %s", code, r.error ? r.error : "");
  cr_assert_eq (json_integer_value (json_array_get (json_object_get (r.value, "v"), 0)), want, "%s", code);
  securer_result_clear (&r);
}

static void
expect_cold (struct securer_session *s)
{
  cr_assert_str_eq (securer_session_start_kind (s), "cold");
  struct ns_ref own = ns_ref_of (0, "pid");
  cr_assert (parent_pidns_is (securer_session_pid (s), &own), "a cold session's pid namespace is not a child of ours");
  ns_ref_release (&own);
}

static void
expect_template (struct securer_session *s)
{
  cr_assert_str_eq (securer_session_start_kind (s), "template");
  struct ns_ref own = ns_ref_of (0, "pid");
  cr_assert (!parent_pidns_is (securer_session_pid (s), &own), "a template's session has our pid namespace as its parent");
  ns_ref_release (&own);
}

/* ---- the switch --------------------------------------------------------------------- */

Test (start, policy_off_option_cold_and_environment_off_start_cold)
{
  unsetenv ("SECURER_SESSION_TEMPLATE");
  struct securer_policy *off = policy_with ("session template off\n");
  struct securer_session *s = open_ok (off, SECURER_SESSION_START_POLICY);
  expect_cold (s);
  expect_value (s, "40L + 2L", 42);
  securer_session_close (s);

  struct securer_policy *dflt = policy_with ("");
  s = open_ok (dflt, SECURER_SESSION_START_COLD);
  expect_cold (s);
  securer_session_close (s);

  setenv ("SECURER_SESSION_TEMPLATE", "off", 1);
  s = open_ok (dflt, SECURER_SESSION_START_POLICY);
  expect_cold (s);
  securer_session_close (s);
  unsetenv ("SECURER_SESSION_TEMPLATE");
  securer_policy_free (off);
  securer_policy_free (dflt);
}

Test (start, auto_on_and_option_template_fork_from_the_template)
{
  unsetenv ("SECURER_SESSION_TEMPLATE");
  cr_assert_eq (geteuid (), 0, "this suite runs as root");
  struct securer_policy *dflt = policy_with ("");
  struct securer_policy *on = policy_with ("session template on\n");
  struct securer_policy *off = policy_with ("session template off\n");
  struct securer_session *a = open_ok (dflt, SECURER_SESSION_START_POLICY);
  struct securer_session *b = open_ok (on, SECURER_SESSION_START_POLICY);
  struct securer_session *c = open_ok (off, SECURER_SESSION_START_TEMPLATE);
  expect_template (a);
  expect_template (b);
  expect_template (c);
  /* The setting is not part of what a template is: one for the three. */
  struct ns_ref t = parent_pidns (securer_session_pid (a));
  cr_assert (parent_pidns_is (securer_session_pid (b), &t));
  cr_assert (parent_pidns_is (securer_session_pid (c), &t));
  ns_ref_release (&t);
  expect_value (a, "x <- 1L; x", 1);
  expect_value (b, "exists('x')", 0);
  securer_session_close (a);
  securer_session_close (b);
  securer_session_close (c);
  securer_policy_free (dflt);
  securer_policy_free (on);
  securer_policy_free (off);
}

Test (start, an_unknown_environment_value_is_refused)
{
  setenv ("SECURER_SESSION_TEMPLATE", "sometimes", 1);
  struct securer_session_opts o = { 0 };
  struct securer_session *s = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_open (&o, &s, &err), -1);
  cr_assert_null (s);
  cr_assert_eq (err->status, SECURER_EXIT_SETUP);
  cr_assert (strstr (securer_error_message (err), "SECURER_SESSION_TEMPLATE=sometimes: expected auto, on or off"),
             "%s", securer_error_message (err));
  securer_error_free (&err);
  unsetenv ("SECURER_SESSION_TEMPLATE");
}

/* A policy that cannot have a template: 'on' is refused with the reason,
 * auto starts cold. */
Test (start, on_is_refused_for_a_policy_without_pid_namespace_and_auto_starts_cold)
{
  unsetenv ("SECURER_SESSION_TEMPLATE");
  struct securer_policy *p = policy_with ("namespaces user mount net uts ipc cgroup\nsession template on\n");
  struct securer_session_opts o = { .policy = p };
  struct securer_session *s = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_open (&o, &s, &err), -1);
  cr_assert_eq (err->status, SECURER_EXIT_SETUP);
  const char *m = securer_error_message (err);
  cr_assert (strstr (m, "the policy says 'session template on', but this session cannot have one") != NULL, "%s", m);
  cr_assert (strstr (m, "user, pid and mount namespaces") != NULL, "%s", m);
  securer_error_free (&err);
  p->session_template = SECURER_SESSION_TEMPLATE_AUTO;
  o.start = SECURER_SESSION_START_TEMPLATE;
  cr_assert_eq (securer_session_open (&o, &s, &err), -1);
  cr_assert (strstr (securer_error_message (err), "a start from a template was asked for") != NULL, "%s",
             securer_error_message (err));
  securer_error_free (&err);
  securer_policy_free (p);
}

/* A caller that is not root: auto and on start from a template (its
 * sessions run as the caller, as its cold sandboxes do), and 'on' is
 * refused, status 125, for a policy asking for host=pool, which needs a
 * leased id per session and so a root caller. */
static int
as_nobody (const char *extra, const char *env, bool expect_open)
{
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      struct securer_policy *p = policy_with (extra);
      /* Dumpable again after the change of ids, as after an exec: the
       * launcher writes its children's /proc/PID/uid_map. */
      if (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0 || setresuid (65534, 65534, 65534) < 0
          || prctl (PR_SET_DUMPABLE, 1) < 0)
        _exit (90);
      setenv ("SECURER_SESSION_TEMPLATE", env, 1);
      struct securer_session_opts o = { .policy = p };
      struct securer_session *s = NULL;
      securer_err_t err = NULL;
      int rc = securer_session_open (&o, &s, &err);
      if (rc < 0)
        fprintf (stderr, "%s\n", securer_error_message (err));
      if (rc == 0 && expect_open)
        {
          struct ns_ref own = ns_ref_of (0, "pid");
          bool ok = strcmp (securer_session_start_kind (s), "template") == 0
                    && !parent_pidns_is (securer_session_pid (s), &own);
          securer_session_close (s);
          _exit (ok ? 0 : 93);
        }
      if (rc == 0 || expect_open)
        _exit (91);
      const char *m = securer_error_message (err);
      if (strstr (m, "SECURER_SESSION_TEMPLATE=on, but this session cannot have one") == NULL
          || strstr (m, "host=pool needs a root caller") == NULL || err->errnum != EPERM)
        _exit (92);
      _exit (err->status);
    }
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st));
  return WEXITSTATUS (st);
}

Test (start, a_caller_that_is_not_root_starts_from_a_template_unless_host_pool, .timeout = 120)
{
  cr_assert_eq (as_nobody ("", "auto", true), 0);
  cr_assert_eq (as_nobody ("", "on", true), 0);
  cr_assert_eq (as_nobody ("uid 1000 host=pool\n", "on", false), SECURER_EXIT_SETUP);
}

/* ---- templates kept by the library ------------------------------------------------ */

Test (start, a_template_outlives_its_sessions_idle_until_trimmed, .timeout = 120)
{
  unsetenv ("SECURER_SESSION_TEMPLATE");
  securer_session_templates_trim ();
  struct securer_policy *p = policy_with ("");
  struct securer_session *a = open_ok (p, SECURER_SESSION_START_TEMPLATE);
  struct securer_session *b = open_ok (p, SECURER_SESSION_START_TEMPLATE);
  /* Held to the end: a new template could otherwise get its number. */
  struct ns_ref t = parent_pidns (securer_session_pid (a));
  cr_assert (parent_pidns_is (securer_session_pid (b), &t));
  securer_session_close (a);
  /* Trimming frees idle templates only: b still uses this one. */
  securer_session_templates_trim ();
  cr_assert_gt (processes_in (&t), 0, "b still uses the template");
  expect_value (b, "7L", 7);
  securer_session_close (b);
  /* Idle, kept for the next session of the policy. */
  cr_assert_gt (processes_in (&t), 0, "the idle template was not kept");
  a = open_ok (p, SECURER_SESSION_START_TEMPLATE);
  cr_assert (parent_pidns_is (securer_session_pid (a), &t));
  securer_session_close (a);
  securer_session_templates_trim ();
  cr_assert_eq (processes_in (&t), 0, "the template outlived the trim");
  /* The next session starts a new one. */
  a = open_ok (p, SECURER_SESSION_START_TEMPLATE);
  cr_assert (!parent_pidns_is (securer_session_pid (a), &t), "the trimmed template was used again");
  securer_session_close (a);
  ns_ref_release (&t);
  securer_policy_free (p);
}

Test (start, at_most_four_idle_templates_are_kept, .timeout = 180)
{
  unsetenv ("SECURER_SESSION_TEMPLATE");
  securer_session_templates_trim ();
  struct ns_ref t[5];
  for (int i = 0; i < 5; i++)
    {
      /* Five policies that differ in a limit: five templates. */
      char extra[64];
      snprintf (extra, sizeof extra, "limit nofile %d\n", 200 + i);
      struct securer_policy *p = policy_with (extra);
      struct securer_session *s = open_ok (p, SECURER_SESSION_START_TEMPLATE);
      t[i] = parent_pidns (securer_session_pid (s));
      securer_session_close (s);
      securer_policy_free (p);
    }
  cr_assert_eq (processes_in (&t[0]), 0, "the oldest idle template was kept");
  for (int i = 1; i < 5; i++)
    cr_assert_gt (processes_in (&t[i]), 0, "idle template %d was not kept", i);
  securer_session_templates_trim ();
  for (int i = 1; i < 5; i++)
    cr_assert_eq (processes_in (&t[i]), 0);
  for (int i = 0; i < 5; i++)
    ns_ref_release (&t[i]);
}

/* A template is retired after SECURER_TEMPLATE_MAX_SESSIONS sessions: the
 * next session comes from a new one (a fresh address-space layout), while
 * sessions of the old one go on until they close, and a restart moves to
 * the new one. */
Test (start, a_template_is_retired_after_its_sessions, .timeout = 120)
{
  unsetenv ("SECURER_SESSION_TEMPLATE");
  setenv ("SECURER_TEMPLATE_MAX_SESSIONS", "2", 1);
  securer_session_templates_trim ();
  struct securer_policy *p = policy_with ("");
  struct securer_session *a = open_ok (p, SECURER_SESSION_START_TEMPLATE);
  struct securer_session *b = open_ok (p, SECURER_SESSION_START_TEMPLATE);
  struct ns_ref old = parent_pidns (securer_session_pid (a));
  cr_assert (parent_pidns_is (securer_session_pid (b), &old));
  struct securer_session *c = open_ok (p, SECURER_SESSION_START_TEMPLATE);
  struct ns_ref young = parent_pidns (securer_session_pid (c));
  cr_assert (!ns_ref_same (&young, &old), "a third session from a template retired after two");
  expect_value (a, "7L", 7);
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_restart (a, &err), 0, "%s", securer_error_message (err));
  cr_assert (parent_pidns_is (securer_session_pid (a), &young));
  securer_session_close (a);
  securer_session_close (b);
  /* The retired template went with its last session. */
  cr_assert_eq (processes_in (&old), 0);
  securer_session_close (c);
  ns_ref_release (&old);
  ns_ref_release (&young);
  securer_session_templates_trim ();
  unsetenv ("SECURER_TEMPLATE_MAX_SESSIONS");
  securer_policy_free (p);
}

Test (start, a_dead_template_is_replaced_at_the_next_start, .timeout = 120)
{
  unsetenv ("SECURER_SESSION_TEMPLATE");
  struct securer_policy *p = policy_with ("");
  struct securer_session *s = open_ok (p, SECURER_SESSION_START_TEMPLATE);
  struct ns_ref t = parent_pidns (securer_session_pid (s));
  /* The template and, with it, the session's R (the kernel ends what is in
   * a pid namespace whose pid 1 died). */
  scan_pidns (&t, SIGKILL);
  while (securer_session_is_alive (s))
    usleep (10000);
  struct securer_result r;
  securer_err_t err = NULL;
  /* Restarted from a new template: the session works again. */
  cr_assert_eq (securer_session_restart (s, &err), 0, "%s", securer_error_message (err));
  expect_template (s);
  cr_assert (!parent_pidns_is (securer_session_pid (s), &t), "restarted from the dead template");
  ns_ref_release (&t);
  cr_assert_eq (securer_session_execute (s, "1L", NULL, &r, &err), 0, "%s", r.error ? r.error : "");
  securer_result_clear (&r);
  securer_session_close (s);
  securer_policy_free (p);
}

Test (start, a_pool_shares_one_template, .timeout = 120)
{
  unsetenv ("SECURER_SESSION_TEMPLATE");
  struct securer_policy *p = policy_with ("");
  struct securer_pool_opts po = { .size = 4, .session = { .policy = p, .start = SECURER_SESSION_START_TEMPLATE } };
  struct securer_pool *pool = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_pool_new (&po, &pool, &err), 0, "%s", securer_error_message (err));
  struct securer_session *s[4];
  for (int i = 0; i < 4; i++)
    cr_assert_eq (securer_pool_acquire (pool, 0, &s[i], &err), 0, "%s", securer_error_message (err));
  struct ns_ref t = parent_pidns (securer_session_pid (s[0]));
  for (int i = 0; i < 4; i++)
    {
      expect_template (s[i]);
      cr_assert (parent_pidns_is (securer_session_pid (s[i]), &t));
      securer_pool_release (pool, s[i]);
    }
  securer_pool_close (pool);
  securer_session_templates_trim ();
  cr_assert_eq (processes_in (&t), 0);
  ns_ref_release (&t);
  securer_policy_free (p);
}
