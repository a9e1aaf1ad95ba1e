/* Policies built in code for the port tests: an R-like one (the shape of
 * policies/r.policy: read-only system, tmpfs /tmp and home, exec list,
 * limits, seccomp) and a minimal one.  Static storage: nothing to free. */
#ifndef TEST_PORTS_POLICY_H
#define TEST_PORTS_POLICY_H

#include <stdint.h>
#include <string.h>

#include "securer/policy.h"

static struct securer_mount r_mounts[] = {
  { .type = SECURER_MOUNT_RO, .source = (char *) "/usr", .dest = (char *) "/usr" },
  { .type = SECURER_MOUNT_RO, .source = (char *) "/etc/R", .dest = (char *) "/etc/R", .optional = true },
  { .type = SECURER_MOUNT_RO, .source = (char *) "/opt/site-lib", .dest = (char *) "/usr/local/lib/R/site-library" },
  { .type = SECURER_MOUNT_TMPFS, .dest = (char *) "/tmp", .noexec = true, .size = 64u << 20, .mode = 01777 },
  { .type = SECURER_MOUNT_TMPFS, .dest = (char *) "/home/sandbox", .noexec = true },
  { .type = SECURER_MOUNT_RW, .source = (char *) "/srv/work", .dest = (char *) "/work", .noexec = true },
  { .type = SECURER_MOUNT_PROC, .dest = (char *) "/proc" },
  { .type = SECURER_MOUNT_DEV, .dest = (char *) "/dev" },
};
static char *r_masks[] = { (char *) "/usr/share/secret", (char *) "/proc/kcore" };
static char *r_exec[] = { (char *) "/usr/lib/R/bin", (char *) "/usr/bin/Rscript" };
static char *r_keep[] = { (char *) "LANG", (char *) "PATH", (char *) "TZ" };
static struct securer_env_var r_set[] = {
  { (char *) "HOME", (char *) "/home/sandbox" },
  { (char *) "R_HOME", (char *) "/usr/lib/R" },
  { (char *) "TMPDIR", (char *) "/tmp" },
};
static struct securer_syscall_rule r_rules[] = {
  { .name = (char *) "read", .action = { SECURER_ACT_ALLOW, 0 } },
  { .name = (char *) "write", .action = { SECURER_ACT_ALLOW, 0 } },
};

static inline void
test_r_policy (struct securer_policy *p)
{
  memset (p, 0, sizeof *p);
  p->name = (char *) "r";
  p->namespaces = SECURER_NS_ALL;
  p->hostname = (char *) "sandbox";
  p->uid = 1000;
  p->gid = 1000;
  p->host_uid = p->host_gid = -1;
  p->mounts = r_mounts;
  p->n_mounts = sizeof r_mounts / sizeof r_mounts[0];
  p->masks = r_masks;
  p->n_masks = 2;
  p->cwd = (char *) "/home/sandbox";
  p->network = SECURER_NET_NONE;
  struct securer_limits *l = &p->limits;
  l->rlimit[SECURER_RLIMIT_CPU] = (struct securer_rlimit) { true, 60, 60 };
  l->rlimit[SECURER_RLIMIT_AS] = (struct securer_rlimit) { true, 512u << 20, 512u << 20 };
  l->rlimit[SECURER_RLIMIT_FSIZE] = (struct securer_rlimit) { true, 50u << 20, 50u << 20 };
  l->rlimit[SECURER_RLIMIT_NPROC] = (struct securer_rlimit) { true, 50, 50 };
  l->rlimit[SECURER_RLIMIT_NOFILE] = (struct securer_rlimit) { true, 256, 256 };
  l->timeout_ms = 30000;
  l->cgroup_memory = 768u << 20;
  l->cgroup_pids = 64;
  l->cgroup = SECURER_ENFORCE_BEST_EFFORT;
  p->env_keep = r_keep;
  p->n_env_keep = 3;
  p->env_set = r_set;
  p->n_env_set = 3;
  p->exec_restricted = true;
  p->exec = r_exec;
  p->n_exec = 2;
  p->landlock.mode = SECURER_ENFORCE_BEST_EFFORT;
  p->landlock.scope_signal = true;
  p->landlock.scope_abstract_unix = true;
  p->seccomp.enabled = true;
  p->seccomp.default_action = (struct securer_action) { SECURER_ACT_ERRNO, 1 };
  p->seccomp.rules = r_rules;
  p->seccomp.n_rules = 2;
}

static struct securer_mount min_mounts[] = {
  { .type = SECURER_MOUNT_RO, .source = (char *) "/usr", .dest = (char *) "/usr" },
  { .type = SECURER_MOUNT_TMPFS, .dest = (char *) "/tmp", .noexec = true },
};

static inline void
test_min_policy (struct securer_policy *p)
{
  memset (p, 0, sizeof *p);
  p->name = (char *) "minimal";
  p->namespaces = SECURER_NS_USER | SECURER_NS_MOUNT | SECURER_NS_NET;
  p->host_uid = p->host_gid = -1;
  p->mounts = min_mounts;
  p->n_mounts = 2;
  p->network = SECURER_NET_NONE;
}

#endif
