/* securer — what the running kernel can enforce (`securer probe`). */
#ifndef SECURER_PROBE_H
#define SECURER_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "securer/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct securer_probe {
  bool userns;               /* this process can create a user namespace */
  bool userns_unprivileged;  /* an unprivileged user can (tested, not guessed) */
  int landlock_abi;          /* 0 = unavailable */
  bool seccomp;              /* seccomp filters can be loaded */
  /* SECCOMP_GET_ACTION_AVAIL for each return action */
  bool act_kill_process, act_kill_thread, act_trap, act_errno, act_trace, act_log,
       act_user_notif, act_allow;
  bool seccomp_notify;       /* user notification works (sizes readable) */
  int cgroup_version;        /* 2: unified; 1: v1 only; 3: hybrid (v1 + a v2 mount) */
  bool cgroup_v2_writable;   /* the caller's v2 group accepts new children */
  bool cgroup_v1_writable;   /* the caller's v1 memory/pids groups accept children */
  /* A sandbox's memory, pids and cpu limits can all be applied (tried:
   * a group is made and removed, as a launch would); the launch's report
   * line says how or why not.  A policy with `cgroup required` (such as
   * r-server) runs only where this is true. */
  bool cgroup_limits;
  char cgroup_limits_report[512];
  bool clone3;
  bool pidfd;
  bool pidfd_getfd;          /* the seccomp listener is taken without SCM_RIGHTS */
  bool close_range;
  /* Each sandbox gets a host uid/gid of its own (root callers): the range
   * and, when not, why (e.g. an unprivileged caller). */
  bool host_ids;
  uint32_t host_ids_first, host_ids_count;
  char host_ids_why[256];
};

/* Fills *pr by asking the kernel; never fails for a missing feature. */
int securer_probe_kernel (struct securer_probe *pr, securer_err_t *err);

#ifdef __cplusplus
}
#endif
#endif
