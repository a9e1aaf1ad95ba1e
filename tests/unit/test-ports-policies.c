/* The ports on the shipped policies, as the parser resolves them. */
#include <config.h>

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "securer/policy.h"
#include "securer/ports.h"
#include "securer/sandbox.h"
#include "ports/ports-internal.h"

static struct securer_policy *
load (const char *name)
{
  char path[4096];
  snprintf (path, sizeof path, "%s/policies/%s", SECURER_ABS_SRCDIR, name);
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_file (path, &p, NULL, &err), 0, "%s",
                err ? securer_error_message (err) : "?");
  return p;
}

static size_t
count (const char *hay, const char *needle)
{
  size_t n = 0;
  for (const char *s = strstr (hay, needle); s; s = strstr (s + 1, needle))
    n++;
  return n;
}

Test (port_policies, r_policy_seatbelt)
{
  struct securer_policy *p = load ("r.policy");
  struct securer_port_report rep = { 0 };
  securer_err_t err = NULL;
  char *sb = securer_seatbelt_profile (p, &rep, &err);
  cr_assert_not_null (sb, "%s", err ? securer_error_message (err) : "?");

  /* Exactly the exec list, followed through the policy's symlinks:
   * /lib64/ld-linux… → /usr/lib64/…, /bin/sh → /usr/bin/sh → dash. */
  size_t n_exec = 0;
  for (size_t i = 0; i < p->n_exec; i++)
    {
      struct securer_host_path hp;
      if (securer_port_map_path (p, p->exec[i], &hp, &err) == 1)
        {
          n_exec++;
          free (hp.path);
        }
    }
  cr_assert_geq (n_exec, 3);
  cr_assert_eq (count (sb, "(allow process-exec"), n_exec, "%s", sb);
  cr_assert (strstr (sb, "(allow process-exec (subpath \"/usr/lib/R/bin/exec/R\"))\n"));
  cr_assert (strstr (sb, "(allow process-exec (subpath \"/usr/lib64/ld-linux-x86-64.so.2\"))\n"));
  cr_assert (strstr (sb, "(allow process-exec (subpath \"/usr/bin/dash\"))\n"));
  /* Not all of /usr, no interpreter, no home, no network. */
  cr_assert_null (strstr (sb, "(subpath \"/usr\")"));
  cr_assert_null (strstr (sb, "python"));
  cr_assert_null (strstr (sb, "/home"));
  cr_assert_null (strstr (sb, "/Users"));
  cr_assert (strstr (sb, "(deny network*)\n"));
  cr_assert_eq (count (sb, "(allow network"), 0);
  cr_assert (strstr (sb, "(allow file-read* file-write* (subpath (string-append (param "
                         "\"SECURER_PRIVATE_DIR\") \"/tmpfs/tmp\")))\n"));
  /* Every writable place is a tmpfs below the private directory. */
  cr_assert_eq (count (sb, "file-write*"),
                count (sb, "(allow file-read* file-write* (subpath (string-append (param "
                           "\"SECURER_PRIVATE_DIR\") \"/tmpfs/"),
                "%s", sb);

  /* r.policy needs nothing macOS lacks at the required level. */
  cr_assert_eq (securer_port_report_count (&rep, SECURER_ENFORCE_REQUIRED), 0);
  cr_assert_eq (securer_port_check (&rep, 0, &err), 0);
  cr_assert_eq (securer_port_check (&rep, SECURER_PORT_STRICT, &err), -1);
  securer_error_free (&err);
  cr_assert_not_null (securer_port_report_find (&rep, "seccomp", NULL));
  cr_assert_not_null (securer_port_report_find (&rep, "limits", "rlimit as"));
  free (sb);
  securer_port_report_clear (&rep);
  securer_policy_free (p);
}

Test (port_policies, r_policy_jobobject)
{
  struct securer_policy *p = load ("r.policy");
  char *env[] = { (char *) "LANG=de_DE.UTF-8", (char *) "GITHUB_TOKEN=ghp_secret",
                  (char *) "SystemRoot=C:\\Windows", NULL };
  struct securer_jobobject_plan plan;
  struct securer_port_report rep = { 0 };
  securer_err_t err = NULL;
  cr_assert_eq (securer_jobobject_plan (p, "C:\\T\\s", env, &plan, &rep, &err), 0);
  cr_assert_eq (plan.active_process_limit, 50);
  cr_assert_eq (plan.process_memory_limit, 512ull << 20);
  cr_assert_eq (plan.per_process_user_time, 60ll * 10000000);
  cr_assert (plan.limit_flags & SECURER_JOB_LIMIT_KILL_ON_JOB_CLOSE);
  cr_assert_eq (plan.n_capabilities, 0);
  for (size_t i = 0; i < plan.n_env; i++)
    cr_assert_null (strstr (plan.env[i], "secret"), "%s", plan.env[i]);

  /* r.policy requires Landlock, whose exec list and mount allowlist an
   * AppContainer cannot give: refused unless the caller accepts it. */
  cr_assert_eq (securer_port_check (&rep, 0, &err), -1);
  cr_assert (strstr (securer_error_message (err), "cannot enforce 2 rules"), "%s",
             securer_error_message (err));
  cr_assert (strstr (securer_error_message (err), "exec exec list (required)"));
  securer_error_free (&err);
  cr_assert_eq (securer_port_check (&rep, SECURER_PORT_ACCEPT_WEAKER, &err), 0);
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);
  securer_policy_free (p);
}

Test (port_policies, minimal_policy)
{
  struct securer_policy *p = load ("minimal.policy");
  struct securer_port_report rep = { 0 };
  securer_err_t err = NULL;
  char *sb = securer_seatbelt_profile (p, &rep, &err);
  cr_assert_not_null (sb);
  /* No exec list: whatever a mount without noexec holds, never /tmp. */
  cr_assert (strstr (sb, "(allow process-exec (subpath \"/usr\"))\n"), "%s", sb);
  cr_assert_null (strstr (sb, "process-exec (subpath (string-append"));
  free (sb);
  securer_port_report_clear (&rep);

  struct securer_jobobject_plan plan;
  cr_assert_eq (securer_jobobject_plan (p, "C:\\T\\s", NULL, &plan, &rep, &err), 0);
  cr_assert_eq (plan.timeout_ms, 60000);
  cr_assert_eq (plan.active_process_limit, 64);
  cr_assert_eq (plan.process_memory_limit, 1ull << 30);
  cr_assert_eq (plan.per_process_user_time, 10ll * 10000000);
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);
  securer_policy_free (p);
}

/* The ports keep their own copy of the enum names (the Windows build has
 * no parser): they must say what the policy module says. */
Test (port_policies, names_agree_with_the_policy_module)
{
  for (int i = 0; i < SECURER_RLIMIT_COUNT; i++)
    cr_assert_str_eq (securer_port_rlimit_name (i), securer_rlimit_name ((enum securer_rlimit_id) i));
  for (int t = SECURER_ACT_ALLOW; t <= SECURER_ACT_NOTIFY; t++)
    cr_assert_str_eq (securer_port_action_name ((enum securer_action_type) t),
                      securer_action_name ((enum securer_action_type) t));
}
