/* The Windows port, plan layer: policy IR → Job Object limits, an
 * AppContainer (capabilities and filesystem grants) and a sanitized,
 * sorted environment block, plus the report of what Windows cannot
 * enforce.  Portable C (tested on Linux); the launcher is
 * launch-windows.c.
 *
 * The R package this project replaces ran Windows payloads with no
 * restriction but a few environment variables.  Here the payload runs in a
 * fresh AppContainer (low integrity, its own object namespace, no network
 * unless granted, no access to the user's files except explicit grants)
 * inside a Job Object that bounds processes, memory, CPU and UI access and
 * is killed as a whole. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "securer/ports.h"
#include "ports/ports-internal.h"

/* Names Windows programs and R take their home and scratch space from:
 * all point at the private directory, whatever the caller had. */
static const char *const redirected[] = {
  "HOME", "USERPROFILE", "R_USER", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP", "TMPDIR",
};
/* Per-user R start-up files and libraries: never the caller's. */
static const char *const emptied[] = { "R_LIBS_USER" };
static const char *const dropped_from_caller[] = { "R_ENVIRON_USER", "R_PROFILE_USER" };
/* Without SystemRoot Winsock and many system DLLs fail to initialise; it
 * names the Windows directory and carries nothing secret. */
static const char *const system_names[] = { "SystemRoot", "windir" };

#define N_ELEMS(a) (sizeof (a) / sizeof (a)[0])

/* ---- environment ---------------------------------------------------------- */

static int
upper (int c)
{
  return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c;
}

/* Compares two names (up to '=' or NUL) as Windows does: case-insensitive. */
static int
name_cmp (const char *a, const char *b)
{
  for (;; a++, b++)
    {
      int ca = (*a == '=' || *a == '\0') ? 0 : upper ((unsigned char) *a);
      int cb = (*b == '=' || *b == '\0') ? 0 : upper ((unsigned char) *b);
      if (ca != cb || ca == 0)
        return ca - cb;
    }
}

static int
entry_cmp (const void *a, const void *b)
{
  return name_cmp (*(char *const *) a, *(char *const *) b);
}

/* Sets NAME=value in the plan's list, replacing an entry of the same name
 * (case-insensitively). */
static int
env_put (struct securer_jobobject_plan *plan, const char *name, const char *value,
         securer_err_t *err)
{
  if (name[0] == '\0' || strchr (name, '=') != NULL)
    return securer_error_set (err, EINVAL, "environment name '%s' is not valid", name);
  char *entry = securer_port_printf ("%s=%s", name, value);
  if (entry == NULL)
    return securer_error_set (err, ENOMEM, "environment %s", name);
  for (size_t i = 0; i < plan->n_env; i++)
    if (name_cmp (plan->env[i], name) == 0)
      {
        free (plan->env[i]);
        plan->env[i] = entry;
        return 0;
      }
  char **v = realloc (plan->env, (plan->n_env + 2) * sizeof *v);
  if (v == NULL)
    {
      free (entry);
      return securer_error_set (err, ENOMEM, "environment %s", name);
    }
  plan->env = v;
  v[plan->n_env++] = entry;
  v[plan->n_env] = NULL;
  return 0;
}

static void
env_remove (struct securer_jobobject_plan *plan, const char *name)
{
  for (size_t i = 0; i < plan->n_env; i++)
    if (name_cmp (plan->env[i], name) == 0)
      {
        free (plan->env[i]);
        memmove (&plan->env[i], &plan->env[i + 1], (plan->n_env - i) * sizeof *plan->env);
        plan->n_env--;
        return;
      }
}

static const char *
caller_value (char *const *caller_env, const char *name)
{
  for (char *const *e = caller_env; e && *e; e++)
    {
      const char *eq = strchr (*e, '=');
      /* Entries like "=C:=C:\\dir" (per-drive directories) have an empty
       * name before their second '='; they never match a policy name. */
      if (eq == NULL || eq == *e)
        continue;
      if (name_cmp (*e, name) == 0)
        return eq + 1;
    }
  return NULL;
}

static int
plan_env (const struct securer_policy *p, char *const *caller_env,
          struct securer_jobobject_plan *plan, securer_err_t *err)
{
  for (size_t i = 0; i < p->n_env_keep; i++)
    {
      const char *v = caller_value (caller_env, p->env_keep[i]);
      if (v != NULL && env_put (plan, p->env_keep[i], v, err) < 0)
        return -1;
    }
  for (size_t i = 0; i < N_ELEMS (dropped_from_caller); i++)
    env_remove (plan, dropped_from_caller[i]);
  for (size_t i = 0; i < p->n_env_set; i++)
    if (env_put (plan, p->env_set[i].name, p->env_set[i].value ? p->env_set[i].value : "", err) < 0)
      return -1;
  for (size_t i = 0; i < N_ELEMS (system_names); i++)
    {
      const char *v = caller_value (caller_env, system_names[i]);
      if (v != NULL && env_put (plan, system_names[i], v, err) < 0)
        return -1;
    }
  /* Last, so neither the caller nor a policy written for Linux paths
   * (HOME=/home/sandbox) can point them anywhere else. */
  for (size_t i = 0; i < N_ELEMS (redirected); i++)
    if (env_put (plan, redirected[i], plan->private_dir, err) < 0)
      return -1;
  for (size_t i = 0; i < N_ELEMS (emptied); i++)
    if (env_put (plan, emptied[i], "", err) < 0)
      return -1;
  if (plan->env == NULL)
    return 0;
  qsort (plan->env, plan->n_env, sizeof *plan->env, entry_cmp);
  return 0;
}

/* ---- filesystem ----------------------------------------------------------- */

/* The level of a gap in what Landlock enforces on Linux. */
static enum securer_enforce
landlock_level (const struct securer_policy *p)
{
  return p->landlock.mode == SECURER_ENFORCE_REQUIRED ? SECURER_ENFORCE_REQUIRED
                                                      : SECURER_ENFORCE_BEST_EFFORT;
}

static int
add_grant (struct securer_jobobject_plan *plan, const char *path, enum securer_win_access access,
           bool optional, securer_err_t *err)
{
  char *dup = strdup (path);
  struct securer_win_grant *g = dup ? realloc (plan->grants, (plan->n_grants + 1) * sizeof *g) : NULL;
  if (g == NULL)
    {
      free (dup);
      return securer_error_set (err, ENOMEM, "grant %s", path);
    }
  plan->grants = g;
  g[plan->n_grants++] = (struct securer_win_grant) { dup, access, optional };
  return 0;
}

static int
plan_filesystem (const struct securer_policy *p, struct securer_jobobject_plan *plan,
                 struct securer_port_report *rep, securer_err_t *err)
{
  const enum securer_enforce BE = SECURER_ENFORCE_BEST_EFFORT;
  if (add_grant (plan, plan->private_dir, SECURER_WIN_READ_WRITE, false, err) < 0)
    return -1;
  for (size_t i = 0; i < p->n_mounts; i++)
    {
      const struct securer_mount *m = &p->mounts[i];
      char *rule = securer_port_printf ("mount %s", m->dest ? m->dest : "?");
      if (rule == NULL)
        return securer_error_set (err, ENOMEM, "jobobject plan");
      int r = 0;
      switch (m->type)
        {
        case SECURER_MOUNT_RO:
        case SECURER_MOUNT_RW:
          if (m->source == NULL || m->source[0] == '\0')
            r = securer_error_set (err, EINVAL, "%s: no source", rule);
          else
            r = add_grant (plan, m->source,
                           m->type == SECURER_MOUNT_RW ? SECURER_WIN_READ_WRITE : SECURER_WIN_READ,
                           m->optional, err);
          if (r == 0 && m->dest && strcmp (m->source, m->dest) != 0)
            r = securer_port_gap (rep, BE, "filesystem", rule, err,
                                  "no mount namespace: the payload finds it at %s", m->source);
          if (r == 0 && m->type == SECURER_MOUNT_RW && m->noexec)
            r = securer_port_gap (rep, BE, "filesystem", rule, err,
                                  "noexec is not enforced: the grant includes execute");
          break;
        case SECURER_MOUNT_TMPFS:
          r = securer_port_gap (rep, BE, "filesystem", rule, err,
                                "no tmpfs: scratch space is the private directory (TEMP, TMP, "
                                "TMPDIR, HOME point there)%s",
                                m->size ? "; its size limit is not enforced" : "");
          break;
        case SECURER_MOUNT_PROC:
        case SECURER_MOUNT_DEV:
          /* No procfs; NUL and the console exist for every process. */
          break;
        case SECURER_MOUNT_DIR:
        case SECURER_MOUNT_SYMLINK:
          r = securer_port_gap (rep, BE, "filesystem", rule, err,
                                "cannot be created without a mount namespace");
          break;
        }
      free (rule);
      if (r < 0)
        return -1;
    }
  /* A mask inside a granted tree becomes a deny ACE for the container,
   * which Windows evaluates before the inherited grant. */
  for (size_t i = 0; i < p->n_masks; i++)
    {
      struct securer_host_path hp;
      int r = securer_port_map_path (p, p->masks[i], &hp, err);
      if (r < 0)
        return -1;
      if (r == 0)
        continue;
      if (!hp.in_private)
        r = add_grant (plan, hp.path, SECURER_WIN_DENY, true, err);
      free (hp.path);
      if (r < 0)
        return -1;
    }
  if (securer_port_enforced (rep, err,
                             "filesystem: AppContainer; writes only to the private directory and "
                             "rw mounts, reads of the user's files only where a mount grants them")
      < 0)
    return -1;
  /* The AppContainer model lets every container read what is ACL'd for
   * ALL APPLICATION PACKAGES: the Windows directory and Program Files.
   * None of it is the user's data; but a policy that requires Landlock
   * requires that only its mounts be reachable, so it decides. */
  return securer_port_gap (rep, landlock_level (p), "filesystem", "reads outside mounts", err,
                           "an AppContainer can read what Windows grants ALL APPLICATION "
                           "PACKAGES (the Windows directory, Program Files); the user profile "
                           "and other users' files stay unreadable");
}

/* ---- the plan ------------------------------------------------------------- */

static int
add_capability (struct securer_jobobject_plan *plan, const char *name, securer_err_t *err)
{
  char *dup = strdup (name);
  char **v = dup ? realloc (plan->capabilities, (plan->n_capabilities + 1) * sizeof *v) : NULL;
  if (v == NULL)
    {
      free (dup);
      return securer_error_set (err, ENOMEM, "capability %s", name);
    }
  plan->capabilities = v;
  v[plan->n_capabilities++] = dup;
  return 0;
}

static uint64_t
soft (const struct securer_limits *l, enum securer_rlimit_id id)
{
  return l->rlimit[id].set ? l->rlimit[id].soft : UINT64_MAX;
}

static int
plan_limits (const struct securer_policy *p, struct securer_jobobject_plan *plan,
             struct securer_port_report *rep, securer_err_t *err)
{
  const struct securer_limits *l = &p->limits;
  const enum securer_enforce BE = SECURER_ENFORCE_BEST_EFFORT;

  plan->limit_flags = SECURER_JOB_LIMIT_KILL_ON_JOB_CLOSE
                      | SECURER_JOB_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
  plan->ui_restrictions = SECURER_JOB_UILIMIT_ALL;
  plan->timeout_ms = l->timeout_ms;

  /* The job counts its own processes, which is what both the rlimit and
   * pids.max mean to bound here; the smaller wins. */
  uint64_t nproc = soft (l, SECURER_RLIMIT_NPROC);
  if (l->cgroup_pids && l->cgroup_pids < nproc)
    nproc = l->cgroup_pids;
  if (nproc != UINT64_MAX)
    {
      plan->limit_flags |= SECURER_JOB_LIMIT_ACTIVE_PROCESS;
      plan->active_process_limit = nproc == 0 ? 1 : nproc > UINT32_MAX ? UINT32_MAX : (uint32_t) nproc;
    }
  uint64_t as = soft (l, SECURER_RLIMIT_AS);
  if (as != UINT64_MAX)
    {
      plan->limit_flags |= SECURER_JOB_LIMIT_PROCESS_MEMORY;
      plan->process_memory_limit = as;
    }
  if (l->cgroup_memory)
    {
      plan->limit_flags |= SECURER_JOB_LIMIT_JOB_MEMORY;
      plan->job_memory_limit = l->cgroup_memory;
    }
  uint64_t cpu = soft (l, SECURER_RLIMIT_CPU);
  if (cpu != UINT64_MAX)
    {
      plan->limit_flags |= SECURER_JOB_LIMIT_PROCESS_TIME;
      /* 100 ns units; clamp well below INT64_MAX. */
      plan->per_process_user_time = cpu > 900000000000ull ? INT64_MAX : (int64_t) cpu * 10000000;
      if (securer_port_gap (rep, BE, "limits", "rlimit cpu", err,
                            "PerProcessUserTimeLimit counts user time only (kernel time is not "
                            "charged); the wall-clock timeout still applies")
          < 0)
        return -1;
    }
  plan->cpu_rate_millis = l->cgroup_cpu_millis;

  if (securer_port_enforced (rep, err,
                             "job object: kill on close, no error dialogs, all UI limits "
                             "(desktop, clipboard, global atoms, handles, system parameters)%s%s%s%s",
                             (plan->limit_flags & SECURER_JOB_LIMIT_ACTIVE_PROCESS) ? ", process count" : "",
                             (plan->limit_flags & SECURER_JOB_LIMIT_PROCESS_MEMORY) ? ", per-process memory" : "",
                             (plan->limit_flags & SECURER_JOB_LIMIT_JOB_MEMORY) ? ", job memory" : "",
                             plan->cpu_rate_millis ? ", CPU rate hard cap" : "")
      < 0)
    return -1;

  static const enum securer_rlimit_id none[] = {
    SECURER_RLIMIT_FSIZE, SECURER_RLIMIT_NOFILE, SECURER_RLIMIT_STACK, SECURER_RLIMIT_CORE,
    SECURER_RLIMIT_MEMLOCK, SECURER_RLIMIT_SIGPENDING,
  };
  for (size_t i = 0; i < N_ELEMS (none); i++)
    if (l->rlimit[none[i]].set)
      {
        char rule[32];
        snprintf (rule, sizeof rule, "rlimit %s", securer_port_rlimit_name ((int) none[i]));
        if (securer_port_gap (rep, BE, "limits", rule, err, "Job Objects have no equivalent") < 0)
          return -1;
      }
  return 0;
}

static int
plan_gaps (const struct securer_policy *p, struct securer_jobobject_plan *plan,
           struct securer_port_report *rep, securer_err_t *err)
{
  const enum securer_enforce BE = SECURER_ENFORCE_BEST_EFFORT;
  switch (p->network)
    {
    case SECURER_NET_NONE:
      if (securer_port_enforced (rep, err, "network none: AppContainer without network capabilities") < 0)
        return -1;
      break;
    case SECURER_NET_LOOPBACK:
      if (securer_port_gap (rep, BE, "network", "network loopback", err,
                            "AppContainers cannot use loopback without an administrator's "
                            "exemption: the payload gets no network at all (stricter)")
          < 0)
        return -1;
      break;
    case SECURER_NET_ALLOW:
      if (securer_port_gap (rep, SECURER_ENFORCE_REQUIRED, "network", "network allow", err,
                            "the filtering proxy runs in the Linux supervisor only: this port "
                            "cannot limit the payload to the listed hosts")
          < 0)
        return -1;
      break;
    case SECURER_NET_HOST:
      if (add_capability (plan, "internetClient", err) < 0
          || add_capability (plan, "internetClientServer", err) < 0
          || add_capability (plan, "privateNetworkClientServer", err) < 0)
        return -1;
      if (p->landlock.mode != SECURER_ENFORCE_OFF
          && (p->landlock.n_tcp_bind > 0 || p->landlock.n_tcp_connect > 0)
          && securer_port_gap (rep, SECURER_ENFORCE_REQUIRED, "landlock", "tcp ports", err,
                               "no per-port rule without Windows Firewall configuration: the "
                               "payload could bind and connect to any port")
               < 0)
        return -1;
      break;
    }

  /* On Linux the exec list is Landlock's execute right: as required as
   * Landlock is. */
  if (p->exec_restricted
      && securer_port_gap (rep, landlock_level (p), "exec", "exec list", err,
                           "any program the AppContainer can read may run (confined by the same "
                           "token and job)")
           < 0)
    return -1;
  if (p->seccomp.enabled)
    {
      char rule[64];
      snprintf (rule, sizeof rule, "seccomp (%zu rules)", p->seccomp.n_rules);
      if (securer_port_gap (rep, BE, "seccomp", rule, err,
                            "Windows has no system call filter for ordinary processes")
          < 0)
        return -1;
    }
  if (p->namespaces & SECURER_NS_USER)
    {
      char rule[64];
      snprintf (rule, sizeof rule, "uid %u gid %u", (unsigned) p->uid, (unsigned) p->gid);
      if (securer_port_gap (rep, BE, "identity", rule, err,
                            "the payload runs as the caller's account with an AppContainer "
                            "token at low integrity")
          < 0)
        return -1;
    }
  if ((p->namespaces & SECURER_NS_PID)
      && securer_port_gap (rep, BE, "namespaces", "namespace pid", err,
                           "process ids are the host's; the job groups and kills the payload's "
                           "processes, and the container cannot open the user's other processes")
           < 0)
    return -1;
  if ((p->namespaces & SECURER_NS_UTS)
      && securer_port_gap (rep, BE, "namespaces", "namespace uts", err,
                           "the host's name stays visible and cannot be replaced")
           < 0)
    return -1;
  if ((p->namespaces & SECURER_NS_IPC)
      && securer_port_enforced (rep, err, "namespace ipc: the AppContainer's own named-object namespace") < 0)
    return -1;
  if (p->limits.timeout_ms
      && securer_port_enforced (rep, err, "timeout %llu ms: the launcher terminates the job",
                                (unsigned long long) p->limits.timeout_ms)
           < 0)
    return -1;
  return securer_port_enforced (rep, err,
                                "environment: policy names only; HOME, USERPROFILE, TEMP, TMP, "
                                "TMPDIR, APPDATA, LOCALAPPDATA, R_USER → private directory; "
                                "R_LIBS_USER empty");
}

int
securer_jobobject_plan (const struct securer_policy *p, const char *private_dir,
                        char *const *caller_env, struct securer_jobobject_plan *plan,
                        struct securer_port_report *rep, securer_err_t *err)
{
  memset (plan, 0, sizeof *plan);
  if (p == NULL || rep == NULL || private_dir == NULL || private_dir[0] == '\0')
    return securer_error_set (err, EINVAL, "jobobject plan: policy and private directory needed");
  rep->port = "jobobject";
  plan->appcontainer = true;
  plan->private_dir = strdup (private_dir);
  if (plan->private_dir == NULL)
    return securer_error_set (err, ENOMEM, "jobobject plan");
  if (plan_limits (p, plan, rep, err) < 0 || plan_filesystem (p, plan, rep, err) < 0
      || plan_gaps (p, plan, rep, err) < 0 || plan_env (p, caller_env, plan, err) < 0)
    {
      securer_jobobject_plan_clear (plan);
      return securer_error_prefix (err, "jobobject plan");
    }
  return 0;
}

/* Drops from the report every line that credits the AppContainer. */
static void
forget_appcontainer (struct securer_port_report *rep)
{
  size_t k = 0;
  for (size_t i = 0; i < rep->n_enforced; i++)
    if (strstr (rep->enforced[i], "AppContainer") != NULL)
      free (rep->enforced[i]);
    else
      rep->enforced[k++] = rep->enforced[i];
  rep->n_enforced = k;
  k = 0;
  for (size_t i = 0; i < rep->n_gaps; i++)
    {
      struct securer_port_gap *g = &rep->gaps[i];
      if (strstr (g->reason, "AppContainer") == NULL)
        {
          rep->gaps[k++] = *g;
          continue;
        }
      free (g->section);
      free (g->rule);
      free (g->reason);
    }
  rep->n_gaps = k;
}

int
securer_jobobject_without_appcontainer (const struct securer_policy *p, struct securer_jobobject_plan *plan,
                                        struct securer_port_report *rep, const char *why,
                                        securer_err_t *err)
{
  plan->appcontainer = false;
  for (size_t i = 0; i < plan->n_capabilities; i++)
    free (plan->capabilities[i]);
  plan->n_capabilities = 0;
  for (size_t i = 0; i < plan->n_grants; i++)
    free (plan->grants[i].path);
  plan->n_grants = 0;
  forget_appcontainer (rep);
  /* What remains: the job's limits, the sanitized environment, the private
   * directory, and a token without privileges. */
  if (securer_port_gap (rep, SECURER_ENFORCE_REQUIRED, "filesystem", "the policy's view", err,
                        "%s; without one the payload can read and write whatever the caller's "
                        "account can", why) < 0)
    return -1;
  if (p->network != SECURER_NET_HOST
      && securer_port_gap (rep, SECURER_ENFORCE_REQUIRED, "network",
                           p->network == SECURER_NET_NONE ? "network none" : "network loopback", err,
                           "%s; without one the payload has the caller's network access", why) < 0)
    return -1;
  if ((p->namespaces & SECURER_NS_IPC)
      && securer_port_gap (rep, SECURER_ENFORCE_BEST_EFFORT, "namespaces", "namespace ipc", err,
                           "%s; named objects are the session's", why) < 0)
    return -1;
  if ((p->namespaces & SECURER_NS_USER)
      && securer_port_gap (rep, SECURER_ENFORCE_BEST_EFFORT, "identity", "uid and gid", err,
                           "the payload runs as the caller's account") < 0)
    return -1;
  return securer_port_enforced (rep, err, "identity: a restricted token (every privilege it can shed removed)");
}

void
securer_jobobject_plan_clear (struct securer_jobobject_plan *plan)
{
  if (plan == NULL)
    return;
  for (size_t i = 0; i < plan->n_capabilities; i++)
    free (plan->capabilities[i]);
  free (plan->capabilities);
  for (size_t i = 0; i < plan->n_grants; i++)
    free (plan->grants[i].path);
  free (plan->grants);
  for (size_t i = 0; i < plan->n_env; i++)
    free (plan->env[i]);
  free (plan->env);
  free (plan->private_dir);
  memset (plan, 0, sizeof *plan);
}
