/* securer probe — what this kernel can enforce. */
#include <config.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "securer/probe.h"

void
cmd_probe_help (FILE *out)
{
  fprintf (out,
           "Usage: securer probe [--json]\n"
           "\n"
           "Reports what the running kernel offers to a sandbox: user namespaces (and\n"
           "whether an unprivileged user may create them), the Landlock ABI, seccomp\n"
           "actions and user notification, cgroup version and whether the caller's\n"
           "group can hold sandboxes (a group with memory, pids and cpu limits is made\n"
           "and removed, as a launch would: without it policies that require cgroup\n"
           "limits, such as r-server, are refused), clone3, pidfd, pidfd_getfd and\n"
           "close_range, and whether each sandbox can get a host uid of its own (root\n"
           "callers; the range comes from SECURER_HOST_IDS or the default).  Each\n"
           "feature is tried, not guessed from version numbers.\n"
           "\n"
           "Options:\n"
           "  --json      one JSON object instead of text\n"
           "  -h, --help  show this help\n");
}

static const char *
yes_no (bool b)
{
  return b ? "yes" : "no";
}

static const char *
cgroup_name (int v)
{
  switch (v)
    {
    case 1: return "v1";
    case 2: return "v2";
    case 3: return "hybrid (v1 controllers, v2 mounted)";
    default: return "none";
    }
}

int
cmd_probe (int argc, char **argv)
{
  bool json = false;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--json") == 0)
        json = true;
      else
        {
          fprintf (stderr, "securer probe: unknown argument '%s'\nRun 'securer probe --help' for usage.\n",
                   argv[i]);
          return 2;
        }
    }
  struct securer_probe pr;
  securer_err_t err = NULL;
  if (securer_probe_kernel (&pr, &err) < 0)
    {
      cli_report (&err);
      return 1;
    }
  if (json)
    {
      json_t *acts = json_pack ("{s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b}",
                                "kill_process", pr.act_kill_process, "kill_thread", pr.act_kill_thread,
                                "trap", pr.act_trap, "errno", pr.act_errno, "trace", pr.act_trace,
                                "log", pr.act_log, "user_notif", pr.act_user_notif, "allow", pr.act_allow);
      json_t *o = json_pack ("{s:{s:b, s:b}, s:i, s:{s:b, s:o, s:b}, s:{s:i, s:b, s:b, s:b, s:s}, s:b, s:b, s:b}",
                             "user_namespaces", "available", pr.userns, "unprivileged", pr.userns_unprivileged,
                             "landlock_abi", pr.landlock_abi,
                             "seccomp", "available", pr.seccomp, "actions", acts, "user_notification",
                             pr.seccomp_notify,
                             "cgroup", "version", pr.cgroup_version, "v2_writable", pr.cgroup_v2_writable,
                             "v1_writable", pr.cgroup_v1_writable, "limits", pr.cgroup_limits,
                             "limits_report", pr.cgroup_limits_report,
                             "clone3", pr.clone3, "pidfd", pr.pidfd, "close_range", pr.close_range);
      json_t *ids = json_pack ("{s:b, s:I, s:I}", "available", pr.host_ids, "first",
                               (json_int_t) pr.host_ids_first, "count", (json_int_t) pr.host_ids_count);
      if (ids != NULL && !pr.host_ids)
        json_object_set_new (ids, "why", json_string (pr.host_ids_why));
      if (o != NULL)
        {
          json_object_set_new (o, "pidfd_getfd", json_boolean (pr.pidfd_getfd));
          json_object_set_new (o, "host_ids", ids);
        }
      else
        json_decref (ids);
      char *s = o ? json_dumps (o, JSON_INDENT (2)) : NULL;
      if (s == NULL)
        {
          fprintf (stderr, "securer probe: out of memory\n");
          json_decref (o);
          return 1;
        }
      printf ("%s\n", s);
      free (s);
      json_decref (o);
      return 0;
    }
  printf ("user namespaces:     %s (unprivileged: %s)\n", yes_no (pr.userns), yes_no (pr.userns_unprivileged));
  if (pr.landlock_abi > 0)
    printf ("landlock:            ABI %d\n", pr.landlock_abi);
  else
    printf ("landlock:            unavailable\n");
  printf ("seccomp:             %s\n", yes_no (pr.seccomp));
  printf ("  actions:          %s%s%s%s%s%s%s%s\n", pr.act_kill_process ? " kill_process" : "",
          pr.act_kill_thread ? " kill_thread" : "", pr.act_trap ? " trap" : "", pr.act_errno ? " errno" : "",
          pr.act_trace ? " trace" : "", pr.act_log ? " log" : "", pr.act_user_notif ? " user_notif" : "",
          pr.act_allow ? " allow" : "");
  printf ("  user notification: %s\n", yes_no (pr.seccomp_notify));
  printf ("cgroup:              %s\n", cgroup_name (pr.cgroup_version));
  if (pr.cgroup_version >= 2)
    printf ("  v2 group writable: %s\n", yes_no (pr.cgroup_v2_writable));
  if (pr.cgroup_version == 1 || pr.cgroup_version == 3)
    printf ("  v1 groups writable (memory, pids): %s\n", yes_no (pr.cgroup_v1_writable));
  printf ("  sandbox limits (memory, pids, cpu): %s\n",
          pr.cgroup_limits ? "yes" : "no: policies with 'cgroup required' (r-server) are refused");
  printf ("    %s\n", pr.cgroup_limits_report);
  printf ("clone3:              %s\n", yes_no (pr.clone3));
  printf ("pidfd:               %s\n", yes_no (pr.pidfd));
  printf ("pidfd_getfd:         %s\n", yes_no (pr.pidfd_getfd));
  printf ("close_range:         %s\n", yes_no (pr.close_range));
  if (pr.host_ids)
    printf ("host ids:            one per sandbox, from %u-%u\n", pr.host_ids_first,
            pr.host_ids_first + pr.host_ids_count - 1);
  else
    printf ("host ids:            not per sandbox: %s\n", pr.host_ids_why);
  return 0;
}
