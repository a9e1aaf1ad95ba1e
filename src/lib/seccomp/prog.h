/* The compiled program's representation, shared by the compiler
 * (compile.c) and the launch cache that stores it whole (textcache.c). */
#ifndef SECURER_SECCOMP_PROG_H
#define SECURER_SECCOMP_PROG_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stddef.h>

#include "securer/policy.h"

/* Older uapi headers lack the newer filter flags. */
#ifndef SECCOMP_FILTER_FLAG_LOG
#define SECCOMP_FILTER_FLAG_LOG (1UL << 1)
#endif
#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif

struct srule {
  int nr;
  char *name;
  struct securer_action action;
  unsigned n_conds;
  struct securer_arg_cond conds[SECURER_MAX_ARG_CONDS];
  unsigned args32;
  struct securer_loc loc;
  size_t index;   /* in the policy's rules; SIZE_MAX for the hand-over exceptions */
};

struct securer_seccomp_prog {
  bool enabled;
  scmp_filter_ctx ctx;
  bool notify;            /* user notification is used */
  bool report;            /* kills are routed through notify */
  int send_fd;
  struct securer_action def, foreign;
  struct srule *rules;    /* in policy order, with the send_fd exception first */
  size_t n_rules;
  /* The filter as libseccomp generated it once, at compile time, and the
   * seccomp(2) flags its own load would pass: loading is then one syscall
   * with no allocation, which the payload needs (it runs after its rlimits
   * are set, and generating the program again cost milliseconds). */
  struct sock_fprog bpf;
  unsigned long load_flags;
  bool use_cache;         /* SECURER_SECCOMP_CACHE */
};

/* Whether seccomp(2) flags read back from the cache are the ones the
 * compiler derives: thread sync, a listener exactly when the program
 * notifies, nothing that weakens the filter. */
bool securer_seccomp_flags_expected (uint64_t flags, bool notify);

/* Whether the kernel can let a notified syscall continue (seccomp API
 * level 6): reporting denials through user notification needs it. */
bool securer_seccomp_can_continue (void);

#endif
