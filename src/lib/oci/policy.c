/* A config.json seen through securer's policy model, for `securer policy
 * show --oci-config`: what the model can say is put in a struct
 * securer_policy (printed by the same printer as every policy), the rest
 * (capabilities, devices, sysctls, id maps, cgroupsPath) as comment lines,
 * so that an operator reads everything that will be enforced. */
#include <config.h>

#include <cap-ng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "oci/oci.h"

static char *
dup_or_null (const char *s)
{
  return s ? strdup (s) : NULL;
}

static void
add_mount (struct securer_policy *p, enum securer_mount_type t, const char *src, const char *dest,
           bool noexec)
{
  p->mounts = realloc (p->mounts, (p->n_mounts + 1) * sizeof *p->mounts);
  struct securer_mount *m = &p->mounts[p->n_mounts++];
  memset (m, 0, sizeof *m);
  m->type = t;
  m->source = dup_or_null (src);
  m->dest = strdup (dest);
  m->noexec = noexec;
  m->mode = 0755;
}

static const struct { int res; enum securer_rlimit_id id; } rlimit_map[] = {
  { RLIMIT_CPU, SECURER_RLIMIT_CPU }, { RLIMIT_AS, SECURER_RLIMIT_AS },
  { RLIMIT_FSIZE, SECURER_RLIMIT_FSIZE }, { RLIMIT_NPROC, SECURER_RLIMIT_NPROC },
  { RLIMIT_NOFILE, SECURER_RLIMIT_NOFILE }, { RLIMIT_STACK, SECURER_RLIMIT_STACK },
  { RLIMIT_CORE, SECURER_RLIMIT_CORE }, { RLIMIT_MEMLOCK, SECURER_RLIMIT_MEMLOCK },
  { RLIMIT_SIGPENDING, SECURER_RLIMIT_SIGPENDING },
};

int
oci_spec_to_policy (const struct oci_spec *s, struct securer_policy **out, securer_err_t *err)
{
  struct securer_policy *p = NULL;
  *out = NULL;
  if (oci_spec_seccomp_policy (s, &p, err) < 0)
    return -1;
  if (p == NULL)
    {
      /* No linux.seccomp: no filter at all. */
      static const char none[] = "seccomp off\n";
      if (securer_policy_load_string ("config.json", none, sizeof none - 1, &p, NULL, err) < 0)
        return -1;
    }
  free (p->name);
  p->name = strdup ("config.json");
  free (p->path);
  p->path = malloc (strlen (s->bundle) + sizeof "/config.json");
  sprintf (p->path, "%s/config.json", s->bundle);
  static const unsigned bits[OCI_NS_COUNT] = { SECURER_NS_PID, SECURER_NS_NET, SECURER_NS_IPC,
                                               SECURER_NS_UTS, SECURER_NS_MOUNT, SECURER_NS_USER,
                                               SECURER_NS_CGROUP };
  p->namespaces = 0;
  for (int k = 0; k < OCI_NS_COUNT; k++)
    if (s->ns_wanted[k])
      p->namespaces |= bits[k];
  free (p->hostname);
  p->hostname = dup_or_null (s->hostname);
  p->uid = s->proc.uid;
  p->gid = s->proc.gid;
  /* The engine chose the ids: no per-sandbox host id in this mode. */
  p->host_uid = s->n_uid_maps ? (int64_t) s->uid_maps[0].outside : (int64_t) s->proc.uid;
  p->host_gid = s->n_gid_maps ? (int64_t) s->gid_maps[0].outside : (int64_t) s->proc.gid;
  p->network = !s->ns_wanted[OCI_NS_NET] ? SECURER_NET_HOST
               : s->ns_path[OCI_NS_NET] ? SECURER_NET_HOST : SECURER_NET_LOOPBACK;
  free (p->cwd);
  p->cwd = strdup (s->proc.cwd);
  add_mount (p, s->root_readonly ? SECURER_MOUNT_RO : SECURER_MOUNT_RW, s->rootfs, "/", false);
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const struct oci_mount *m = &s->mounts[i];
      bool noexec = (m->flags & MS_NOEXEC) != 0;
      if (m->bind)
        add_mount (p, (m->flags & MS_RDONLY) ? SECURER_MOUNT_RO : SECURER_MOUNT_RW, m->source,
                   m->dest, noexec);
      else if (strcmp (m->type, "tmpfs") == 0)
        add_mount (p, SECURER_MOUNT_TMPFS, NULL, m->dest, noexec);
      else if (strcmp (m->type, "proc") == 0)
        add_mount (p, SECURER_MOUNT_PROC, NULL, m->dest, noexec);
      /* sysfs, devpts, mqueue, cgroup: listed in the comments below. */
    }
  for (size_t i = 0; i < s->n_masked; i++)
    {
      p->masks = realloc (p->masks, (p->n_masks + 1) * sizeof (char *));
      p->masks[p->n_masks++] = strdup (s->masked[i]);
    }
  for (size_t i = 0; i < SECURER_RLIMIT_COUNT; i++)
    p->limits.rlimit[i].set = false;
  for (size_t i = 0; i < s->proc.n_rlimits; i++)
    for (size_t k = 0; k < sizeof rlimit_map / sizeof rlimit_map[0]; k++)
      if (rlimit_map[k].res == s->proc.rlimits[i].resource)
        {
          struct securer_rlimit *r = &p->limits.rlimit[rlimit_map[k].id];
          r->set = true;
          r->soft = s->proc.rlimits[i].soft == RLIM_INFINITY ? UINT64_MAX : s->proc.rlimits[i].soft;
          r->hard = s->proc.rlimits[i].hard == RLIM_INFINITY ? UINT64_MAX : s->proc.rlimits[i].hard;
        }
  p->limits.timeout_ms = 0;
  p->limits.cgroup_memory = s->mem_limit > 0 ? (uint64_t) s->mem_limit : 0;
  p->limits.cgroup_pids = s->pids_limit > 0 ? (uint64_t) s->pids_limit : 0;
  p->limits.cgroup_cpu_millis = s->cpu_quota > 0 && s->cpu_period
                                  ? (uint32_t) ((uint64_t) s->cpu_quota * 1000 / s->cpu_period)
                                  : 0;
  p->limits.cgroup = (p->limits.cgroup_memory || p->limits.cgroup_pids || p->limits.cgroup_cpu_millis)
                       ? SECURER_ENFORCE_REQUIRED
                       : SECURER_ENFORCE_OFF;
  for (size_t i = 0; s->proc.env && s->proc.env[i]; i++)
    {
      const char *eq = strchr (s->proc.env[i], '=');
      if (eq == NULL)
        continue;
      p->env_set = realloc (p->env_set, (p->n_env_set + 1) * sizeof *p->env_set);
      p->env_set[p->n_env_set].name = strndup (s->proc.env[i], (size_t) (eq - s->proc.env[i]));
      p->env_set[p->n_env_set++].value = strdup (eq + 1);
    }
  /* Landlock only through run.securer.policy (docs/oci.md). */
  p->landlock.mode = SECURER_ENFORCE_OFF;
  p->landlock.scope_abstract_unix = p->landlock.scope_signal = false;
  *out = p;
  return 0;
}

static void
caps_line (FILE *f, const char *set, uint64_t bits)
{
  fprintf (f, "# capabilities %s:", set);
  if (bits == 0)
    fputs (" none", f);
  for (int c = 0; c < 64; c++)
    if ((bits >> c) & 1)
      {
        const char *n = capng_capability_to_name ((unsigned) c);
        fprintf (f, " %s", n ? n : "?");
      }
  fputc ('\n', f);
}

char *
oci_spec_extra_text (const struct oci_spec *s)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    return NULL;
  fputs ("\n# Enforced by securer-runc beyond what the policy language says:\n", f);
  fprintf (f, "# rootfs %s%s (pivot_root)\n", s->rootfs, s->root_readonly ? " read-only" : "");
  for (int k = 0; k < OCI_NS_COUNT; k++)
    if (s->ns_path[k])
      fprintf (f, "# namespace %s joined: %s\n", oci_ns_name (k), s->ns_path[k]);
  for (size_t i = 0; i < s->n_uid_maps; i++)
    fprintf (f, "# uid map %u -> %u (%u ids)\n", s->uid_maps[i].inside, s->uid_maps[i].outside,
             s->uid_maps[i].size);
  for (size_t i = 0; i < s->n_gid_maps; i++)
    fprintf (f, "# gid map %u -> %u (%u ids)\n", s->gid_maps[i].inside, s->gid_maps[i].outside,
             s->gid_maps[i].size);
  if (s->proc.n_groups)
    {
      fputs ("# additional gids:", f);
      for (size_t i = 0; i < s->proc.n_groups; i++)
        fprintf (f, " %u", (unsigned) s->proc.groups[i]);
      fputc ('\n', f);
    }
  if (s->proc.has_umask)
    fprintf (f, "# umask %04o\n", (unsigned) s->proc.umask);
  caps_line (f, "bounding", s->proc.cap_bounding);
  caps_line (f, "effective", s->proc.cap_effective);
  caps_line (f, "permitted", s->proc.cap_permitted);
  caps_line (f, "inheritable", s->proc.cap_inheritable);
  caps_line (f, "ambient", s->proc.cap_ambient);
  fprintf (f, "# no_new_privs %s\n", s->proc.no_new_privs ? "on" : "off");
  if (s->proc.has_oom_score_adj)
    fprintf (f, "# oom_score_adj %d\n", s->proc.oom_score_adj);
  for (size_t i = 0; i < s->n_mounts; i++)
    {
      const struct oci_mount *m = &s->mounts[i];
      if (!m->bind && strcmp (m->type, "tmpfs") && strcmp (m->type, "proc"))
        fprintf (f, "# mount %s on %s%s%s\n", m->type, m->dest, m->data ? " " : "",
                 m->data ? m->data : "");
    }
  for (size_t i = 0; i < s->n_readonly; i++)
    fprintf (f, "# read-only path %s\n", s->readonly[i]);
  fputs ("# devices: null zero full random urandom tty, /dev/pts, /dev/ptmx", f);
  for (size_t i = 0; i < s->n_devices; i++)
    fprintf (f, ", %s", s->devices[i].path);
  fputc ('\n', f);
  for (size_t i = 0; i < s->n_devrules; i++)
    fprintf (f, "# device cgroup: %s %c %lld:%lld %s\n", s->devrules[i].allow ? "allow" : "deny",
             s->devrules[i].type, (long long) s->devrules[i].major, (long long) s->devrules[i].minor,
             s->devrules[i].access);
  for (size_t i = 0; i < s->n_sysctl; i++)
    fprintf (f, "# sysctl %s = %s\n", s->sysctl_keys[i], s->sysctl_values[i]);
  fprintf (f, "# cgroupsPath %s\n", s->cgroups_path ? s->cgroups_path : "(default: /securer-runc/ID)");
  if (s->cpu_shares)
    fprintf (f, "# cpu shares %llu\n", (unsigned long long) s->cpu_shares);
  if (s->securer_policy)
    fprintf (f, "# run.securer.policy %s: its seccomp filter is added, its Landlock rules applied\n",
             s->securer_policy);
  if (s->report_denials)
    fprintf (f, "# run.securer.report-denials %s: kill verdicts reported there, the caller killed\n",
             s->report_denials);
  fclose (f);
  return buf;
}
