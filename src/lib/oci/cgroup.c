/* The container's cgroup: cgroupsPath in every hierarchy the host has
 * (cgroup v1 controllers, the v2 unified tree, or both on hybrid hosts),
 * with linux.resources written where the controller lives.  A resource no
 * hierarchy can enforce is refused with its field name. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci/oci.h"

struct oci_cgroup {
  char **dirs;          /* MOUNTPOINT/PATH, one per hierarchy */
  char **controllers;   /* ",cpu,cpuacct," etc.; ",v2," for the unified tree */
  size_t n;
};

static int
refuse (securer_err_t *err, const char *field, const char *why)
{
  securer_error_set (err, 0, "%s: %s", field, why);
  securer_error_set_status (err, 125);
  return -1;
}

/* Hierarchies mounted under /sys/fs/cgroup, from mountinfo. */
static void
hierarchies (char ***mps, char ***ctls, size_t *n)
{
  FILE *f = fopen ("/proc/self/mountinfo", "re");
  *mps = *ctls = NULL;
  *n = 0;
  if (f == NULL)
    return;
  char *line = NULL;
  size_t cap = 0;
  while (getline (&line, &cap, f) > 0)
    {
      char mp[512], fstype[64], super[512];
      /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
      char *sep = strstr (line, " - ");
      if (sep == NULL || sscanf (line, "%*s %*s %*s %*s %511s", mp) != 1
          || sscanf (sep + 3, "%63s %*s %511s", fstype, super) != 2)
        continue;
      if (strncmp (mp, "/sys/fs/cgroup", 14) != 0)
        continue;
      char c[600];
      if (strcmp (fstype, "cgroup2") == 0)
        snprintf (c, sizeof c, ",v2,");
      else if (strcmp (fstype, "cgroup") == 0)
        snprintf (c, sizeof c, ",%s,", super);
      else
        continue;
      bool dup = false;
      for (size_t i = 0; i < *n; i++)
        dup = dup || strcmp ((*mps)[i], mp) == 0;
      if (dup)
        continue;
      *mps = realloc (*mps, (*n + 1) * sizeof (char *));
      *ctls = realloc (*ctls, (*n + 1) * sizeof (char *));
      (*mps)[*n] = strdup (mp);
      (*ctls)[*n] = strdup (c);
      (*n)++;
    }
  free (line);
  fclose (f);
}

static bool
has_ctl (const char *ctls, const char *name)
{
  char k[64];
  snprintf (k, sizeof k, ",%s,", name);
  return strstr (ctls, k) != NULL;
}

static int
write_to (const char *dir, const char *file, const char *val, securer_err_t *err)
{
  char path[1024];
  snprintf (path, sizeof path, "%s/%s", dir, file);
  return oci_write_file (path, val, err);
}

int
oci_write_file (const char *path, const char *text, securer_err_t *err)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return securer_error_set (err, errno, "open %s", path);
  ssize_t n = write (fd, text, strlen (text));
  int e = errno;
  close (fd);
  if (n != (ssize_t) strlen (text))
    return securer_error_set (err, n < 0 ? e : EIO, "write \"%s\" to %s", text, path);
  return 0;
}

static char *
read_trim (const char *dir, const char *file)
{
  char path[1024], buf[4096];
  snprintf (path, sizeof path, "%s/%s", dir, file);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n < 0)
    return NULL;
  buf[n] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  return strdup (buf);
}

/* mkdir -p below the mount point; a new cpuset group starts with no cpus
 * and no memory nodes (v1), so it inherits its parent's. */
static int
make_dirs (const char *mp, const char *dir, bool cpuset, securer_err_t *err)
{
  char *p = strdup (dir);
  for (char *c = p + strlen (mp) + 1; ; c++)
    {
      if (*c != '/' && *c != '\0')
        continue;
      char save = *c;
      *c = '\0';
      if (mkdir (p, 0755) == 0 && cpuset)
        {
          char *parent = strdup (p);
          *strrchr (parent, '/') = '\0';
          static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
          for (int i = 0; i < 2; i++)
            {
              char *v = read_trim (parent, files[i]);
              if (v && write_to (p, files[i], v, err) < 0)
                {
                  free (v);
                  free (parent);
                  free (p);
                  return -1;
                }
              free (v);
            }
          free (parent);
        }
      else if (errno != EEXIST && access (p, F_OK) != 0)
        {
          securer_error_set (err, errno, "create cgroup %s", p);
          free (p);
          return -1;
        }
      *c = save;
      if (save == '\0')
        break;
    }
  free (p);
  return 0;
}

/* cgroup v2: a directory has the controllers its parent delegates in
 * cgroup.subtree_control; delegate every available one down the path so
 * the container's directory can take its limits.  A controller that
 * cannot be delegated shows as missing later, where the limit that needs
 * it is refused. */
static void
delegate_v2 (const char *mp, const char *dir)
{
  char *p = strdup (dir);
  for (char *c = p + strlen (mp); c; c = strchr (c + 1, '/'))
    {
      char save = *c;
      *c = '\0';
      const char *level = *p ? p : "/";
      char *avail = read_trim (level, "cgroup.controllers");
      *c = save;
      if (avail == NULL)
        break;
      /* level is an ancestor of the leaf (the leaf itself is never a
       * level: the loop ends at its last '/'). */
      *c = '\0';
      for (char *tok = strtok (avail, " "); tok; tok = strtok (NULL, " "))
        {
          char plus[64];
          snprintf (plus, sizeof plus, "+%s", tok);
          write_to (*p ? p : "/", "cgroup.subtree_control", plus, NULL);
        }
      *c = save;
      free (avail);
    }
  free (p);
}

/* The cgroup directory of a resource's controller: v1 first (on a hybrid
 * host the v1 hierarchies hold the controllers), then v2. */
static const char *
dir_for (const struct oci_cgroup *cg, const char *ctl, bool *v2)
{
  for (size_t i = 0; i < cg->n; i++)
    if (has_ctl (cg->controllers[i], ctl))
      {
        *v2 = false;
        return cg->dirs[i];
      }
  for (size_t i = 0; i < cg->n; i++)
    if (has_ctl (cg->controllers[i], "v2"))
      {
        char *avail = read_trim (cg->dirs[i], "cgroup.controllers");
        char k[80];
        snprintf (k, sizeof k, " %s ", ctl);
        char sp[4200];
        snprintf (sp, sizeof sp, " %s ", avail ? avail : "");
        free (avail);
        if (strstr (sp, k))
          {
            *v2 = true;
            return cg->dirs[i];
          }
      }
  return NULL;
}

static int
w_i64 (const char *dir, const char *file, int64_t v, securer_err_t *err)
{
  char b[32];
  if (v < 0)
    snprintf (b, sizeof b, "%s", strstr (file, ".max") ? "max" : "-1");
  else
    snprintf (b, sizeof b, "%lld", (long long) v);
  return write_to (dir, file, b, err);
}

/* v1's device controller where the host has one, and the BPF program on
 * the v2 directory where there is one: on a hybrid host both (an access
 * must then pass both, which is what each alone would say). */
static int
apply_devices (const struct oci_cgroup *cg, const struct oci_spec *s, securer_err_t *err)
{
  size_t n;
  struct oci_devrule *rules = oci_devrules_effective (s, &n);
  bool v2 = false, done = false;
  int rc = 0;
  const char *d = dir_for (cg, "devices", &v2);
  if (d && !v2)
    {
      for (size_t i = 0; i < n && rc == 0; i++)
        {
          char rule[80];
          oci_devrule_v1 (&rules[i], rule, sizeof rule);
          rc = write_to (d, rules[i].allow ? "devices.allow" : "devices.deny", rule, err);
        }
      done = true;
    }
  for (size_t i = 0; rc == 0 && i < cg->n; i++)
    if (has_ctl (cg->controllers[i], "v2"))
      {
        rc = oci_devices_bpf_attach (cg->dirs[i], rules, n, err);
        done = true;
      }
  free (rules);
  if (rc == 0 && !done)
    return refuse (err, "linux.resources.devices", "no device controller and no cgroup v2 hierarchy");
  return rc < 0 ? securer_error_prefix (err, "linux.resources.devices") : 0;
}

/* A control file's integer value; -1 for "max", unlimited or unreadable. */
static int64_t
read_i64 (const char *dir, const char *file)
{
  char *v = read_trim (dir, file);
  char *end = NULL;
  long long n = v ? strtoll (v, &end, 10) : -1;
  bool ok = v && end != v && *end == '\0';
  free (v);
  return ok ? n : -1;
}

static int
apply_swap (const char *d, bool v2, const struct oci_spec *s, securer_err_t *err)
{
  /* v1 counts memory+swap; v2 counts swap alone, so the limit (the one
   * given, else the group's) is taken off. */
  int64_t sw = s->mem_swap;
  if (v2 && sw > 0)
    {
      int64_t limit = s->mem_limit != -2 ? s->mem_limit : read_i64 (d, "memory.max");
      if (limit < 0)
        return refuse (err, "linux.resources.memory.swap",
                       "on cgroup v2 a swap limit needs a memory limit");
      sw = sw > limit ? sw - limit : 0;
    }
  if (w_i64 (d, v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes", sw, err) < 0)
    return securer_error_prefix (err, "linux.resources.memory.swap");
  return 0;
}

static int
apply_resources (const struct oci_cgroup *cg, const struct oci_spec *s, securer_err_t *err)
{
  bool v2 = false;
  const char *d;
  if (s->n_devrules && apply_devices (cg, s, err) < 0)
    return -1;
  if (s->pids_limit)
    {
      if ((d = dir_for (cg, "pids", &v2)) == NULL)
        return refuse (err, "linux.resources.pids", "no pids controller");
      if (w_i64 (d, "pids.max", s->pids_limit, err) < 0)
        return securer_error_prefix (err, "linux.resources.pids.limit");
    }
  if (s->mem_limit != -2 || s->mem_reservation != -2 || s->mem_swap != -2 || s->mem_swappiness >= 0
      || s->mem_disable_oom_killer)
    {
      if ((d = dir_for (cg, "memory", &v2)) == NULL)
        return refuse (err, "linux.resources.memory", "no memory controller");
      /* v1 keeps memsw.limit >= limit at every step: when the limit rises
       * past the old memory+swap limit (an update), memsw goes first. */
      bool swap_first = false;
      if (!v2 && s->mem_swap != -2 && s->mem_limit != -2)
        {
          int64_t old_sw = read_i64 (d, "memory.memsw.limit_in_bytes");
          swap_first = s->mem_limit < 0 || (old_sw >= 0 && s->mem_limit > old_sw);
        }
      if (swap_first && apply_swap (d, v2, s, err) < 0)
        return -1;
      if (s->mem_limit != -2
          && w_i64 (d, v2 ? "memory.max" : "memory.limit_in_bytes", s->mem_limit, err) < 0)
        return securer_error_prefix (err, "linux.resources.memory.limit");
      if (s->mem_reservation != -2
          && w_i64 (d, v2 ? "memory.low" : "memory.soft_limit_in_bytes", s->mem_reservation, err) < 0)
        return securer_error_prefix (err, "linux.resources.memory.reservation");
      if (!swap_first && s->mem_swap != -2 && apply_swap (d, v2, s, err) < 0)
        return -1;
      /* v1 only: v2 has neither knob (its OOM killer is per cgroup,
       * memory.oom.group, which is something else). */
      if (v2 && s->mem_swappiness >= 0)
        return refuse (err, "linux.resources.memory.swappiness", "not available on cgroup v2");
      if (v2 && s->mem_disable_oom_killer)
        return refuse (err, "linux.resources.memory.disableOOMKiller", "not available on cgroup v2");
      if (s->mem_swappiness >= 0 && w_i64 (d, "memory.swappiness", s->mem_swappiness, err) < 0)
        return securer_error_prefix (err, "linux.resources.memory.swappiness");
      if (s->mem_disable_oom_killer && write_to (d, "memory.oom_control", "1", err) < 0)
        return securer_error_prefix (err, "linux.resources.memory.disableOOMKiller");
    }
  if (s->cpu_shares || s->cpu_quota || s->cpu_period)
    {
      if ((d = dir_for (cg, "cpu", &v2)) == NULL)
        return refuse (err, "linux.resources.cpu", "no cpu controller");
      if (s->cpu_shares)
        {
          /* runc's conversion of shares (2..262144) to a weight (1..10000). */
          uint64_t w = v2 ? 1 + ((s->cpu_shares - 2) * 9999) / 262142 : s->cpu_shares;
          if (w_i64 (d, v2 ? "cpu.weight" : "cpu.shares", (int64_t) w, err) < 0)
            return securer_error_prefix (err, "linux.resources.cpu.shares");
        }
      if (v2 && (s->cpu_quota || s->cpu_period))
        {
          /* cpu.max holds both: the one not given keeps its value. */
          char b[64], quota[32] = "max";
          unsigned long long period = 100000;
          char *cur = read_trim (d, "cpu.max");
          if (cur)
            sscanf (cur, "%31s %llu", quota, &period);
          free (cur);
          if (s->cpu_period)
            period = s->cpu_period;
          if (s->cpu_quota > 0)
            snprintf (quota, sizeof quota, "%lld", (long long) s->cpu_quota);
          else if (s->cpu_quota < 0)
            snprintf (quota, sizeof quota, "max");
          snprintf (b, sizeof b, "%s %llu", quota, period);
          if (write_to (d, "cpu.max", b, err) < 0)
            return securer_error_prefix (err, "linux.resources.cpu.quota");
        }
      else
        {
          if (s->cpu_period && w_i64 (d, "cpu.cfs_period_us", (int64_t) s->cpu_period, err) < 0)
            return securer_error_prefix (err, "linux.resources.cpu.period");
          if (s->cpu_quota && w_i64 (d, "cpu.cfs_quota_us", s->cpu_quota, err) < 0)
            return securer_error_prefix (err, "linux.resources.cpu.quota");
        }
    }
  if ((s->cpuset_cpus && *s->cpuset_cpus) || (s->cpuset_mems && *s->cpuset_mems))
    {
      if ((d = dir_for (cg, "cpuset", &v2)) == NULL)
        return refuse (err, "linux.resources.cpu.cpus", "no cpuset controller");
      if (s->cpuset_cpus && *s->cpuset_cpus && write_to (d, "cpuset.cpus", s->cpuset_cpus, err) < 0)
        return securer_error_prefix (err, "linux.resources.cpu.cpus");
      if (s->cpuset_mems && *s->cpuset_mems && write_to (d, "cpuset.mems", s->cpuset_mems, err) < 0)
        return securer_error_prefix (err, "linux.resources.cpu.mems");
    }
  return 0;
}

int
oci_cgroup_update (const struct oci_cgroup *cg, const struct oci_spec *res, securer_err_t *err)
{
  if (res->n_devrules)
    return refuse (err, "linux.resources.devices", "not changed by update");
  return apply_resources (cg, res, err);
}

/* cgroupsPath as a path below each hierarchy's root.  With the systemd
 * manager the engine writes "slice:prefix:name"; securer-runc creates the
 * directories systemd would (SLICE/PREFIX-NAME.scope) itself. */
static char *
resolve_path (const struct oci_spec *s, bool systemd, const char *id)
{
  const char *cp = s->cgroups_path;
  char *out;
  if (cp == NULL || *cp == '\0')
    {
      out = malloc (strlen (id) + sizeof "/securer-runc/");
      sprintf (out, "/securer-runc/%s", id);
      return out;
    }
  const char *c1 = strchr (cp, ':');
  const char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
  if (systemd && c2)
    {
      /* An empty slice is systemd's default for system services. */
      int slice_len = c1 == cp ? (int) strlen ("system.slice") : (int) (c1 - cp);
      const char *slice = c1 == cp ? "system.slice" : cp;
      if (asprintf (&out, "/%.*s/%.*s-%s.scope", slice_len, slice, (int) (c2 - c1 - 1), c1 + 1,
                    c2 + 1)
          < 0)
        return NULL;
      return out;
    }
  out = malloc (strlen (cp) + 2);
  sprintf (out, "%s%s", cp[0] == '/' ? "" : "/", cp);
  return out;
}

int
oci_cgroup_create (const struct oci_spec *s, bool systemd, const char *id, struct oci_cgroup **out,
                   securer_err_t *err)
{
  *out = NULL;
  char *rel = resolve_path (s, systemd, id);
  if (rel == NULL)
    return securer_error_set (err, ENOMEM, "linux.cgroupsPath");
  if (strstr (rel, "/../") || strstr (rel, "/./") || (strlen (rel) >= 3 && !strcmp (rel + strlen (rel) - 3, "/..")))
    {
      free (rel);
      return refuse (err, "linux.cgroupsPath", "must not contain . or .. components");
    }
  char **mps, **ctls;
  size_t n;
  hierarchies (&mps, &ctls, &n);
  struct oci_cgroup *cg = calloc (1, sizeof *cg);
  cg->dirs = calloc (n + 1, sizeof (char *));
  cg->controllers = calloc (n + 1, sizeof (char *));
  int rc = 0;
  for (size_t i = 0; i < n; i++)
    {
      /* A v1 hierarchy without a controller other than a name (systemd) is
       * still joined: engines and systemd read it. */
      char *dir = malloc (strlen (mps[i]) + strlen (rel) + 1);
      sprintf (dir, "%s%s", mps[i], rel);
      if (rc == 0 && make_dirs (mps[i], dir, has_ctl (ctls[i], "cpuset"), err) < 0)
        rc = -1;
      if (rc == 0 && has_ctl (ctls[i], "v2"))
        delegate_v2 (mps[i], dir);
      cg->dirs[cg->n] = dir;
      cg->controllers[cg->n++] = ctls[i];
      free (mps[i]);
    }
  free (mps);
  free (ctls);
  free (rel);
  if (rc == 0 && cg->n == 0 && (s->n_devrules || s->pids_limit || s->mem_limit != -2 || s->cpu_shares))
    rc = refuse (err, "linux.resources", "no cgroup hierarchy is mounted under /sys/fs/cgroup");
  if (rc == 0)
    rc = apply_resources (cg, s, err);
  if (rc < 0)
    {
      oci_cgroup_destroy (cg, NULL);
      oci_cgroup_free (cg);
      return -1;
    }
  *out = cg;
  return 0;
}

int
oci_cgroup_add_pid (struct oci_cgroup *cg, pid_t pid, securer_err_t *err)
{
  char b[32];
  snprintf (b, sizeof b, "%d", (int) pid);
  for (size_t i = 0; cg && i < cg->n; i++)
    if (write_to (cg->dirs[i], "cgroup.procs", b, err) < 0)
      return -1;
  return 0;
}

int
oci_cgroup_join_self (const struct oci_cgroup *cg, securer_err_t *err)
{
  return oci_cgroup_add_pid ((struct oci_cgroup *) cg, 0, err);
}

json_t *
oci_cgroup_to_json (const struct oci_cgroup *cg)
{
  json_t *a = json_array ();
  for (size_t i = 0; cg && i < cg->n; i++)
    json_array_append_new (a, json_pack ("{s:s, s:s}", "dir", cg->dirs[i], "controllers",
                                         cg->controllers[i]));
  return a;
}

struct oci_cgroup *
oci_cgroup_from_json (json_t *a)
{
  struct oci_cgroup *cg = calloc (1, sizeof *cg);
  size_t n = json_array_size (a);
  cg->dirs = calloc (n + 1, sizeof (char *));
  cg->controllers = calloc (n + 1, sizeof (char *));
  size_t i;
  json_t *e;
  json_array_foreach (a, i, e)
    {
      const char *d = json_string_value (json_object_get (e, "dir"));
      const char *c = json_string_value (json_object_get (e, "controllers"));
      if (d == NULL || c == NULL || strncmp (d, "/sys/fs/cgroup/", 15) != 0)
        continue;
      cg->dirs[cg->n] = strdup (d);
      cg->controllers[cg->n++] = strdup (c);
    }
  return cg;
}

size_t
oci_cgroup_count (const struct oci_cgroup *cg)
{
  return cg ? cg->n : 0;
}

const char *
oci_cgroup_dir (const struct oci_cgroup *cg, size_t i)
{
  return cg->dirs[i];
}

pid_t *
oci_cgroup_pids (const struct oci_cgroup *cg, size_t *n)
{
  *n = 0;
  pid_t *v = NULL;
  /* Any hierarchy lists every member; prefer pids, then the first. */
  const char *dir = NULL;
  bool v2;
  if (cg && cg->n)
    {
      dir = dir_for (cg, "pids", &v2);
      if (dir == NULL)
        dir = cg->dirs[0];
    }
  if (dir == NULL)
    return NULL;
  char path[1024];
  snprintf (path, sizeof path, "%s/cgroup.procs", dir);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return NULL;
  int pid;
  while (fscanf (f, "%d", &pid) == 1)
    {
      v = realloc (v, (*n + 1) * sizeof *v);
      v[(*n)++] = pid;
    }
  fclose (f);
  return v;
}

/* Where the container is frozen: the v1 freezer, else the v2 directory
 * (cgroup.freeze is core there, not a controller). */
static const char *
freeze_dir (const struct oci_cgroup *cg, bool *v2)
{
  const char *d = cg ? dir_for (cg, "freezer", v2) : NULL;
  for (size_t i = 0; cg && d == NULL && i < cg->n; i++)
    if (has_ctl (cg->controllers[i], "v2"))
      {
        d = cg->dirs[i];
        *v2 = true;
      }
  return d;
}

int
oci_cgroup_freeze (const struct oci_cgroup *cg, bool freeze, securer_err_t *err)
{
  bool v2 = false;
  const char *d = freeze_dir (cg, &v2);
  if (d == NULL)
    return securer_error_set (err, ENOTSUP, "no freezer for this container's cgroup");
  if (v2)
    return write_to (d, "cgroup.freeze", freeze ? "1" : "0", err);
  if (write_to (d, "freezer.state", freeze ? "FROZEN" : "THAWED", err) < 0)
    return -1;
  /* v1 freezing is asynchronous: wait until it is done. */
  for (int i = 0; freeze && i < 1000; i++)
    {
      char *st = read_trim (d, "freezer.state");
      bool done = st && strcmp (st, "FROZEN") == 0;
      free (st);
      if (done)
        return 0;
      struct timespec ts = { 0, 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
  return freeze ? securer_error_set (err, ETIMEDOUT, "freeze %s", d) : 0;
}

bool
oci_cgroup_frozen (const struct oci_cgroup *cg)
{
  bool v2 = false;
  const char *d = freeze_dir (cg, &v2);
  char *st = d ? read_trim (d, v2 ? "cgroup.freeze" : "freezer.state") : NULL;
  bool frozen = st && strcmp (st, v2 ? "0" : "THAWED") != 0;
  free (st);
  return frozen;
}

int
oci_cgroup_destroy (struct oci_cgroup *cg, securer_err_t *err)
{
  int rc = 0;
  for (size_t i = 0; cg && i < cg->n; i++)
    {
      /* Processes that were just killed take a moment to leave. */
      for (int tries = 0; tries < 200; tries++)
        {
          if (rmdir (cg->dirs[i]) == 0 || errno == ENOENT)
            break;
          if (errno != EBUSY)
            {
              rc = securer_error_set (err, errno, "remove cgroup %s", cg->dirs[i]);
              break;
            }
          size_t n;
          pid_t *pids = oci_cgroup_pids (cg, &n);
          for (size_t k = 0; k < n; k++)
            kill (pids[k], SIGKILL);
          free (pids);
          struct timespec ts = { 0, 10 * 1000 * 1000 };
          nanosleep (&ts, NULL);
          if (tries == 199)
            rc = securer_error_set (err, EBUSY, "remove cgroup %s", cg->dirs[i]);
        }
    }
  return rc;
}

void
oci_cgroup_free (struct oci_cgroup *cg)
{
  if (cg == NULL)
    return;
  for (size_t i = 0; i < cg->n; i++)
    {
      free (cg->dirs[i]);
      free (cg->controllers[i]);
    }
  free (cg->dirs);
  free (cg->controllers);
  free (cg);
}
