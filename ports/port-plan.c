/* securer-port-plan: what the macOS and Windows ports make of a policy.
 *
 *   securer-port-plan --seatbelt POLICY    the Seatbelt profile (stdout)
 *   securer-port-plan --jobobject POLICY   the Job Object plan (stdout)
 *
 * Either way the report of what the port enforces and cannot enforce goes
 * to stderr, and the exit status is 0 when the launch would go ahead,
 * 125 when it would be refused (--strict: refuse on any gap). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "securer/policy.h"
#include "securer/ports.h"
#include "securer/sandbox.h"

extern char **environ;

static void
print_jobobject (const struct securer_jobobject_plan *plan)
{
  printf ("limit_flags 0x%08x\n", (unsigned) plan->limit_flags);
  printf ("active_process_limit %u\n", (unsigned) plan->active_process_limit);
  printf ("process_memory_limit %llu\n", (unsigned long long) plan->process_memory_limit);
  printf ("job_memory_limit %llu\n", (unsigned long long) plan->job_memory_limit);
  printf ("per_process_user_time %lld\n", (long long) plan->per_process_user_time);
  printf ("ui_restrictions 0x%04x\n", (unsigned) plan->ui_restrictions);
  printf ("cpu_rate_millis %u\n", (unsigned) plan->cpu_rate_millis);
  printf ("timeout_ms %llu\n", (unsigned long long) plan->timeout_ms);
  printf ("appcontainer %s\n", plan->appcontainer ? "yes" : "no");
  for (size_t i = 0; i < plan->n_capabilities; i++)
    printf ("capability %s\n", plan->capabilities[i]);
  static const char *const access[] = { "read", "read-write", "deny" };
  for (size_t i = 0; i < plan->n_grants; i++)
    printf ("grant %s %s%s\n", access[plan->grants[i].access], plan->grants[i].path,
            plan->grants[i].optional ? " (optional)" : "");
  for (size_t i = 0; i < plan->n_env; i++)
    printf ("env %s\n", plan->env[i]);
}

int
main (int argc, char **argv)
{
  unsigned flags = 0;
  int seatbelt = -1;
  const char *file = NULL;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--seatbelt") == 0)
        seatbelt = 1;
      else if (strcmp (argv[i], "--jobobject") == 0)
        seatbelt = 0;
      else if (strcmp (argv[i], "--strict") == 0)
        flags |= SECURER_PORT_STRICT;
      else if (file == NULL && argv[i][0] != '-')
        file = argv[i];
      else
        seatbelt = -1, i = argc;
    }
  if (seatbelt < 0 || file == NULL)
    {
      fprintf (stderr, "usage: securer-port-plan --seatbelt|--jobobject [--strict] POLICY\n");
      return 2;
    }

  securer_err_t err = NULL;
  char *path = NULL;
  struct securer_policy *p = NULL;
  if (securer_policy_find (file, &path, &err) < 0
      || securer_policy_load_file (path, &p, NULL, &err) < 0)
    {
      fprintf (stderr, "securer-port-plan: %s\n", securer_error_message (err));
      securer_error_free (&err);
      free (path);
      return SECURER_EXIT_SETUP;
    }
  free (path);

  struct securer_port_report rep = { 0 };
  int status = SECURER_EXIT_SETUP;
  if (seatbelt)
    {
      char *text = securer_seatbelt_profile (p, &rep, &err);
      if (text)
        fputs (text, stdout);
      free (text);
    }
  else
    {
      struct securer_jobobject_plan plan;
      if (securer_jobobject_plan (p, "C:\\securer-private", environ, &plan, &rep, &err) == 0)
        print_jobobject (&plan);
      securer_jobobject_plan_clear (&plan);
    }
  if (err == NULL)
    {
      char *report = securer_port_report_format (&rep);
      if (report)
        fputs (report, stderr);
      free (report);
      if (securer_port_check (&rep, flags, &err) == 0)
        status = 0;
    }
  if (err != NULL)
    {
      fprintf (stderr, "securer-port-plan: %s\n", securer_error_message (err));
      securer_error_free (&err);
    }
  securer_port_report_clear (&rep);
  securer_policy_free (p);
  return status;
}
