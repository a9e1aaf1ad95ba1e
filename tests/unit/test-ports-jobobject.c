/* The Windows port's plan: Job Object numbers, AppContainer grants, the
 * environment block and the gap report. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "securer/ports.h"
#include "securer/sandbox.h"
#include "ports-policy.h"

#define PRIV "C:\\Users\\alice\\AppData\\Local\\Temp\\securer-1a2b"

static char *caller_env[] = {
  (char *) "PATH=C:\\Windows\\system32;C:\\Program Files\\R\\bin",
  (char *) "lang=en_US.UTF-8",          /* Windows names are case-insensitive */
  (char *) "OPENAI_API_KEY=sk-secret",
  (char *) "AWS_SECRET_ACCESS_KEY=aws-secret",
  (char *) "HOME=C:\\Users\\alice",
  (char *) "USERPROFILE=C:\\Users\\alice",
  (char *) "TEMP=C:\\Users\\alice\\AppData\\Local\\Temp",
  (char *) "R_LIBS_USER=C:\\Users\\alice\\R\\win-library",
  (char *) "R_PROFILE_USER=C:\\Users\\alice\\.Rprofile",
  (char *) "SystemRoot=C:\\Windows",
  (char *) "=C:=C:\\Users\\alice",
  (char *) "not-an-entry",
  NULL,
};

static void
make_plan (const struct securer_policy *p, struct securer_jobobject_plan *plan,
           struct securer_port_report *rep)
{
  securer_err_t err = NULL;
  int r = securer_jobobject_plan (p, PRIV, caller_env, plan, rep, &err);
  cr_assert_eq (r, 0, "%s", err ? securer_error_message (err) : "?");
}

static const char *
env_get (const struct securer_jobobject_plan *plan, const char *name)
{
  size_t n = strlen (name);
  for (size_t i = 0; i < plan->n_env; i++)
    if (strncasecmp (plan->env[i], name, n) == 0 && plan->env[i][n] == '=')
      return plan->env[i] + n + 1;
  return NULL;
}

Test (jobobject, limits_equal_the_policy)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_jobobject_plan plan;
  struct securer_port_report rep = { 0 };
  make_plan (&p, &plan, &rep);

  cr_assert_eq (plan.limit_flags,
                SECURER_JOB_LIMIT_KILL_ON_JOB_CLOSE | SECURER_JOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
                  | SECURER_JOB_LIMIT_ACTIVE_PROCESS | SECURER_JOB_LIMIT_PROCESS_MEMORY
                  | SECURER_JOB_LIMIT_JOB_MEMORY | SECURER_JOB_LIMIT_PROCESS_TIME);
  /* nproc 50 and pids.max 64: the job takes the smaller. */
  cr_assert_eq (plan.active_process_limit, 50);
  cr_assert_eq (plan.process_memory_limit, 512ull << 20);
  cr_assert_eq (plan.job_memory_limit, 768ull << 20);
  cr_assert_eq (plan.per_process_user_time, 60ll * 10000000, "cpu 60 s in 100 ns units");
  cr_assert_eq (plan.ui_restrictions, 0xff, "every UI restriction");
  cr_assert_eq (plan.timeout_ms, 30000);
  cr_assert_eq (plan.cpu_rate_millis, 0);
  cr_assert (plan.appcontainer);
  cr_assert_eq (plan.n_capabilities, 0, "network none: no capability at all");
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);

  /* Kill on close and no error dialogs even with no limit at all. */
  test_min_policy (&p);
  make_plan (&p, &plan, &rep);
  cr_assert_eq (plan.limit_flags,
                SECURER_JOB_LIMIT_KILL_ON_JOB_CLOSE | SECURER_JOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION);
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);

  p.limits.cgroup_pids = 8;
  p.limits.cgroup_cpu_millis = 500;
  make_plan (&p, &plan, &rep);
  cr_assert_eq (plan.active_process_limit, 8);
  cr_assert_eq (plan.cpu_rate_millis, 500);
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);
}

Test (jobobject, environment_sorted_and_sanitized)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_jobobject_plan plan;
  struct securer_port_report rep = { 0 };
  make_plan (&p, &plan, &rep);

  cr_assert_null (plan.env[plan.n_env], "NULL-terminated");
  for (size_t i = 1; i < plan.n_env; i++)
    {
      /* Case-insensitive order of the names, strictly increasing: sorted
       * as CreateProcess requires and no name twice. */
      const char *a = plan.env[i - 1], *b = plan.env[i];
      size_t la = strcspn (a, "="), lb = strcspn (b, "=");
      int c = strncasecmp (a, b, la < lb ? la : lb);
      cr_assert (c < 0 || (c == 0 && la < lb), "not sorted: %s before %s", a, b);
    }
  for (size_t i = 0; i < plan.n_env; i++)
    {
      cr_assert_null (strstr (plan.env[i], "secret"), "secret leaked: %s", plan.env[i]);
      const char *v = strchr (plan.env[i], '=') + 1;
      cr_assert (strcmp (v, "C:\\Users\\alice") != 0, "caller's home leaked: %s", plan.env[i]);
      cr_assert_null (strstr (v, "win-library"), "caller's library leaked: %s", plan.env[i]);
    }
  cr_assert_null (env_get (&plan, "OPENAI_API_KEY"));
  cr_assert_null (env_get (&plan, "R_PROFILE_USER"));
  cr_assert_null (env_get (&plan, "TZ"), "kept names absent from the caller stay absent");
  cr_assert_str_eq (env_get (&plan, "PATH"), "C:\\Windows\\system32;C:\\Program Files\\R\\bin");
  cr_assert_str_eq (env_get (&plan, "LANG"), "en_US.UTF-8");
  cr_assert_str_eq (env_get (&plan, "R_HOME"), "/usr/lib/R", "the policy's values pass");
  cr_assert_str_eq (env_get (&plan, "SystemRoot"), "C:\\Windows");
  static const char *const redirected[] = { "HOME", "USERPROFILE", "R_USER", "APPDATA",
                                            "LOCALAPPDATA", "TEMP", "TMP", "TMPDIR" };
  for (size_t i = 0; i < sizeof redirected / sizeof *redirected; i++)
    cr_assert_str_eq (env_get (&plan, redirected[i]), PRIV, "%s", redirected[i]);
  cr_assert_str_eq (env_get (&plan, "R_LIBS_USER"), "");
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);
}

Test (jobobject, appcontainer_grants)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_jobobject_plan plan;
  struct securer_port_report rep = { 0 };
  make_plan (&p, &plan, &rep);
  const struct { const char *path; enum securer_win_access access; bool optional; } expect[] = {
    { PRIV, SECURER_WIN_READ_WRITE, false },
    { "/usr", SECURER_WIN_READ, false },
    { "/etc/R", SECURER_WIN_READ, true },
    { "/opt/site-lib", SECURER_WIN_READ, false },
    { "/srv/work", SECURER_WIN_READ_WRITE, false },
    { "/usr/share/secret", SECURER_WIN_DENY, true },
  };
  cr_assert_eq (plan.n_grants, sizeof expect / sizeof *expect);
  for (size_t i = 0; i < plan.n_grants; i++)
    {
      cr_assert_str_eq (plan.grants[i].path, expect[i].path);
      cr_assert_eq (plan.grants[i].access, expect[i].access, "%s", expect[i].path);
      cr_assert_eq (plan.grants[i].optional, expect[i].optional, "%s", expect[i].path);
    }
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);
}

Test (jobobject, report_and_decision)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_jobobject_plan plan;
  struct securer_port_report rep = { 0 };
  make_plan (&p, &plan, &rep);
  cr_assert_str_eq (rep.port, "jobobject");
  const struct { const char *section, *rule; } expect[] = {
    { "limits", "rlimit fsize" },        { "limits", "rlimit nofile" },
    { "limits", "rlimit cpu" },          { "seccomp", "seccomp (2 rules)" },
    { "exec", "exec list" },             { "identity", "uid 1000 gid 1000" },
    { "namespaces", "namespace pid" },   { "namespaces", "namespace uts" },
    { "filesystem", "mount /tmp" },      { "filesystem", "reads outside mounts" },
    { "filesystem", "mount /work" },     { "filesystem", "mount /usr/local/lib/R/site-library" },
  };
  for (size_t i = 0; i < sizeof expect / sizeof *expect; i++)
    cr_assert_not_null (securer_port_report_find (&rep, expect[i].section, expect[i].rule), "%s %s",
                        expect[i].section, expect[i].rule);
  cr_assert_null (securer_port_report_find (&rep, "limits", "rlimit as"), "ProcessMemoryLimit enforces it");
  cr_assert_null (securer_port_report_find (&rep, "limits", "rlimit nproc"), "ActiveProcessLimit enforces it");
  cr_assert_null (securer_port_report_find (&rep, "network", NULL), "no capability: no network");
  cr_assert_eq (securer_port_report_count (&rep, SECURER_ENFORCE_REQUIRED), 0);
  securer_err_t err = NULL;
  cr_assert_eq (securer_port_check (&rep, 0, &err), 0);
  cr_assert_eq (securer_port_check (&rep, SECURER_PORT_STRICT, &err), -1);
  securer_error_free (&err);
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);

  /* Host network with a TCP port allowlist: Windows cannot narrow it, and
   * the policy relies on it → refused. */
  static uint16_t ports[] = { 443 };
  test_min_policy (&p);
  p.network = SECURER_NET_HOST;
  p.landlock.mode = SECURER_ENFORCE_BEST_EFFORT;
  p.landlock.tcp_connect = ports;
  p.landlock.n_tcp_connect = 1;
  make_plan (&p, &plan, &rep);
  cr_assert_eq (plan.n_capabilities, 3);
  cr_assert_str_eq (plan.capabilities[0], "internetClient");
  cr_assert_eq (securer_port_check (&rep, 0, &err), -1);
  cr_assert_eq (err->status, SECURER_EXIT_SETUP);
  cr_assert (strstr (securer_error_message (err),
                     "the jobobject backend cannot enforce 1 rule this policy needs: landlock tcp ports (required)"),
             "%s", securer_error_message (err));
  securer_error_free (&err);
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);
}

Test (jobobject, bad_input)
{
  struct securer_policy p;
  test_min_policy (&p);
  struct securer_jobobject_plan plan;
  struct securer_port_report rep = { 0 };
  securer_err_t err = NULL;
  cr_assert_eq (securer_jobobject_plan (&p, "", caller_env, &plan, &rep, &err), -1);
  cr_assert_eq (securer_error_errno (err), EINVAL);
  securer_error_free (&err);

  static struct securer_env_var bad[] = { { (char *) "A=B", (char *) "x" } };
  p.env_set = bad;
  p.n_env_set = 1;
  cr_assert_eq (securer_jobobject_plan (&p, PRIV, caller_env, &plan, &rep, &err), -1);
  cr_assert (strstr (securer_error_message (err), "environment name 'A=B' is not valid"), "%s",
             securer_error_message (err));
  cr_assert_null (plan.env, "nothing left behind");
  securer_error_free (&err);
  securer_port_report_clear (&rep);
}

/* Without AppContainers (Windows before 8, Wine) every protection the
 * container gave becomes a gap: refused unless the caller accepts a weaker
 * sandbox, and the report credits nothing to a container. */
Test (jobobject, without_appcontainer_the_view_and_network_are_required_gaps)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_jobobject_plan plan;
  struct securer_port_report rep = { 0 };
  make_plan (&p, &plan, &rep);
  cr_assert (plan.appcontainer);
  cr_assert_gt (plan.n_grants, 0);
  securer_err_t err = NULL;
  cr_assert_eq (securer_jobobject_without_appcontainer (&p, &plan, &rep, "no AppContainer here", &err), 0);
  cr_assert_not (plan.appcontainer);
  cr_assert_eq (plan.n_grants, 0);
  cr_assert_eq (plan.n_capabilities, 0);
  const struct securer_port_gap *g = securer_port_report_find (&rep, "filesystem", "the policy's view");
  cr_assert_not_null (g);
  cr_assert_eq (g->level, SECURER_ENFORCE_REQUIRED);
  g = securer_port_report_find (&rep, "network", "network none");
  cr_assert_not_null (g);
  cr_assert_eq (g->level, SECURER_ENFORCE_REQUIRED);
  for (size_t i = 0; i < rep.n_enforced; i++)
    cr_assert_null (strstr (rep.enforced[i], "AppContainer"), "still credited: %s", rep.enforced[i]);
  /* The job's limits and the environment are still enforced. */
  cr_assert_gt (plan.active_process_limit, 0);
  cr_assert_null (env_get (&plan, "OPENAI_API_KEY"));
  cr_assert_eq (securer_port_check (&rep, 0, &err), -1);
  cr_assert_not_null (strstr (securer_error_message (err), "no AppContainer here"), "%s",
                      securer_error_message (err));
  securer_error_free (&err);
  cr_assert_eq (securer_port_check (&rep, SECURER_PORT_ACCEPT_WEAKER, &err), 0);
  securer_jobobject_plan_clear (&plan);
  securer_port_report_clear (&rep);
}
