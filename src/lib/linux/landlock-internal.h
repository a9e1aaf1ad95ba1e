/* Internals of landlock.c shared with its tests: the rule plan derived from
 * a policy, and an entry point that takes the ABI to assume so that the
 * fail-closed paths can be exercised on a kernel newer than the one they
 * guard against. */
#ifndef SECURER_LANDLOCK_INTERNAL_H
#define SECURER_LANDLOCK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linux/linux.h"

struct securer_landlock_path_rule {
  char *path;        /* inside the sandbox */
  uint64_t access;   /* SECURER_LL_ACCESS_FS_* wanted beneath path */
};

struct securer_landlock_port_rule {
  uint16_t port;
  uint64_t access;   /* SECURER_LL_ACCESS_NET_* */
};

/* What the policy asks of Landlock, before it meets a kernel. */
struct securer_landlock_plan {
  uint64_t want_fs;        /* fs rights to handle (deny unless a rule allows) */
  uint64_t need_fs;        /* of those, the ones REQUIRED mode insists on */
  uint64_t want_net;
  uint64_t need_net;
  uint64_t want_scoped;    /* every requested scope is needed */
  struct securer_landlock_path_rule *paths;
  size_t n_paths;
  struct securer_landlock_port_rule *ports;
  size_t n_ports;
};

int securer_landlock_plan_build (const struct securer_policy *p, struct securer_landlock_plan *plan,
                                 securer_err_t *err);
void securer_landlock_plan_clear (struct securer_landlock_plan *plan);

/* Like securer_landlock_apply() with the kernel's ABI taken to be `abi`
 * (which must not exceed the real one; 0 = "no Landlock"). */
int securer_landlock_apply_abi (const struct securer_policy *p, int abi,
                                struct securer_landlock_report *rep, securer_err_t *err);

/* The part of securer_landlock_apply_abi that meets the kernel, for a plan
 * built beforehand (plan may be NULL when mode is off).  Allocates nothing
 * (the sandbox's child runs it after a raw clone): the one-line summary goes
 * to summary (cap bytes, SECURER_LANDLOCK_SUMMARY_MAX is enough) and
 * rep->summary stays NULL. */
#define SECURER_LANDLOCK_SUMMARY_MAX 1024
int securer_landlock_apply_plan (enum securer_enforce mode, const struct securer_landlock_plan *plan, int abi,
                                 struct securer_landlock_report *rep, char *summary, size_t cap,
                                 securer_err_t *err);

/* "read_file,read_dir,..." for fs bits; malloc'd. */
char *securer_landlock_fs_names (uint64_t bits);

#endif
