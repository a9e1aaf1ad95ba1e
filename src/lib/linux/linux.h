/* Internal interface between the launcher (spawn.c) and the per-concern
 * steps of the Linux backend.  Each step is one function that either
 * succeeds or returns -1 with an error that says what it was doing. */
#ifndef SECURER_LINUX_H
#define SECURER_LINUX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "securer/error.h"
#include "securer/policy.h"

/* ---- mount.c: runs in the child, inside the new user+mount namespace ---- */
/* Makes / private, assembles the policy's filesystem on a fresh tmpfs,
 * pivot_roots into it and detaches the old root.  Afterwards applies masks
 * and (for RO binds) remounts read-only; every mount is nosuid,nodev. */
int securer_linux_setup_rootfs (const struct securer_policy *p, bool verbose, securer_err_t *err);
/* The same, with flags:
 * SECURER_ROOTFS_BARE_PROC: proc mounts get no masks and no read-only
 *   entries and neither do the policy's masks below them (a session
 *   template's, docs/architecture.md "Sessions from a template");
 * SECURER_ROOTFS_NO_HOST_ROOT: no id of the sandbox is host root, so the
 *   proc entries the kernel lets host root alone read (mode 0400: kmsg,
 *   kpageflags, timer_list on recent kernels) are left as they are rather
 *   than masked: nothing inside can open them (docs/security.md). */
#define SECURER_ROOTFS_BARE_PROC 1u
#define SECURER_ROOTFS_NO_HOST_ROOT 2u
/* SECURER_ROOTFS_NO_MEMORY_LIMIT: the policy's `cgroup memory` limit could
 *   not be applied (best effort): meminfo stays empty rather than showing a
 *   limit that nothing enforces. */
#define SECURER_ROOTFS_NO_MEMORY_LIMIT 4u
int securer_linux_setup_rootfs_ex (const struct securer_policy *p, bool verbose, unsigned flags,
                                   securer_err_t *err);
/* Whether every proc mount hides `entry` (relative to the mount: "kcore",
 * "sys/fs/file-nr", or something below such an entry). */
bool securer_linux_proc_masked (const char *entry);
/* Whether `entry` (or what it is below) is one of the entries some kernels
 * let host root alone open, which a sandbox without host root leaves as
 * they are (SECURER_ROOTFS_NO_HOST_ROOT). */
bool securer_linux_proc_root_only (const char *entry);
/* The entries every proc mount hides (relative to the mount), *n of them:
 * for a proc mounted outside securer_linux_setup_rootfs (zygote.c). */
const char *const *securer_linux_proc_masks (size_t *n);
/* Whether path is on or below one of the policy's proc mounts. */
bool securer_linux_under_proc (const struct securer_policy *p, const char *path);
/* The entries every proc mount makes read-only. */
const char *const *securer_linux_proc_readonly (size_t *n);

/* A --verbose line on stderr from the sandbox's child: formatted on the
 * stack and written with one write(2) (dprintf allocates a buffer and takes
 * stdio's list lock, which a caller's thread may hold). */
void securer_linux_child_log (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* ---- net.c: runs in the child, inside the new net namespace ---- */
/* SECURER_NET_LOOPBACK: brings lo up over rtnetlink.  NONE: nothing. */
int securer_linux_setup_network (const struct securer_policy *p, securer_err_t *err);
/* Size of the shm tmpfs a `mount dev` makes (mount.c; zygote.c again for
 * each session of a template). */
#define SECURER_DEV_SHM_SIZE (64u << 20)

/* Over the proc mounted at dest (a session from a template mounts its
 * own): a boot id of its own and meminfo from its memory limit, as a cold
 * sandbox's proc gets them (mount.c); flags: SECURER_ROOTFS_NO_MEMORY_LIMIT. */
int securer_linux_proc_own_entries (const struct securer_policy *p, const char *dest, unsigned flags,
                                    securer_err_t *err);

/* ---- cgroup.c: runs in the parent ---- */
struct securer_cgroup;
/* Creates a cgroup for one sandbox with the policy's memory/pids/cpu limits
 * (v2 first, v1 controllers where that is what the host has).  When the
 * policy sets no cgroup limit, *out is NULL and 0 is returned.  When a limit
 * cannot be applied: error if the policy says required, otherwise a
 * warning in *report and whatever could be done.  *report (malloc'd) says
 * which limits were applied, and what was not and why. */
int securer_cgroup_create (const struct securer_policy *p, struct securer_cgroup **out,
                           char **report, securer_err_t *err);
/* Before clone: opens what the sandbox needs to join its v1 groups itself
 * (much cheaper than being moved, see cgroup.c).  In the child:
 * securer_cgroup_join_self moves the calling thread into them and closes
 * the descriptors.  securer_cgroup_add_pid, in the parent, then places pid
 * in the groups it does not join itself and drops the parent's copies. */
int securer_cgroup_prepare_join (struct securer_cgroup *cg, securer_err_t *err);
int securer_cgroup_join_self (struct securer_cgroup *cg, securer_err_t *err);
int securer_cgroup_add_pid (struct securer_cgroup *cg, pid_t pid, securer_err_t *err);
/* For a process that is not our child's clone but joins its groups itself
 * (a session forked from a template): places pid in the v2 group, and
 * moves into fds (room for 3; *n of them, the caller closes them) the v1
 * groups' "tasks" files, to which the process writes "0". */
int securer_cgroup_hand_over (struct securer_cgroup *cg, pid_t pid, int fds[3], unsigned *n, securer_err_t *err);
/* Kills every process left in the cgroup (cgroup.kill or a loop over procs). */
int securer_cgroup_kill_all (struct securer_cgroup *cg);
/* The hierarchy a controller ("memory", "pids", "cpu") of the sandbox's
 * limits is enforced in: 1 or 2, or 0 when it is not. */
int securer_cgroup_version (const struct securer_cgroup *cg, const char *controller);
/* A descriptor that becomes readable when the memory limit made the
 * kernel kill a process of the group and the rest should go too (v1,
 * which has no memory.oom.group); -1 when there is none to watch. */
int securer_cgroup_oom_fd (const struct securer_cgroup *cg);
/* True when the memory limit was hit (memory.events oom_kill / failcnt). */
bool securer_cgroup_hit_limit (struct securer_cgroup *cg);
/* Kills what is left, removes the cgroup directories, frees. */
void securer_cgroup_destroy (struct securer_cgroup *cg);

/* ---- caps.c / env.c / fds.c: run in the payload before exec (rlimits: launch.h) ---- */
int securer_linux_drop_caps (securer_err_t *err);
/* Builds the payload's environment: policy env_keep from `caller_env`,
 * then env_set, then extra ("NAME=value"). NULL-terminated, malloc'd. */
char **securer_linux_build_env (const struct securer_policy *p, char *const *caller_env,
                                char *const *extra, securer_err_t *err);
/* Closes every fd above `keep_max` (close_range, falling back to /proc/self/fd). */
int securer_linux_close_fds_above (int keep_max, securer_err_t *err);

/* ---- landlock.c: runs in the payload, after NO_NEW_PRIVS, before seccomp ---- */
struct securer_landlock_report {
  int abi;                      /* kernel's Landlock ABI, 0 = unavailable */
  bool enforced;                /* a ruleset was applied */
  uint64_t handled_fs;          /* LANDLOCK_ACCESS_FS_* bits handled */
  uint64_t handled_net;         /* LANDLOCK_ACCESS_NET_* bits handled */
  uint64_t scoped;              /* LANDLOCK_SCOPE_* bits */
  char *summary;                /* human-readable; malloc'd, may be NULL */
};
/* Returns the running kernel's Landlock ABI version (0 when unavailable). */
int securer_landlock_abi (void);
/* Applies the policy's Landlock rules.  Mode REQUIRED: any right the kernel
 * cannot enforce is an error (fail closed).  BEST_EFFORT: applies what the
 * ABI offers and says so in *rep.  OFF: does nothing. */
int securer_landlock_apply (const struct securer_policy *p, struct securer_landlock_report *rep,
                            securer_err_t *err);
void securer_landlock_report_clear (struct securer_landlock_report *rep);

#endif
