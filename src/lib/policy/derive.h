/* A policy written from another one: the base's own lines, with its
 * syscall allowlist replaced by other rules (`securer policy learn
 * --write-policy`). */
#ifndef SECURER_POLICY_DERIVE_H
#define SECURER_POLICY_DERIVE_H

#include "securer/error.h"

/* The text of a policy that keeps everything of the policy file at
 * base_path (mounts, limits, environment, exec list, its errno/kill/trap
 * rules) but allows only what `rules` allows: base's lines as written
 * (comments dropped), where each include that brings `seccomp
 * allow|log|notify` rules, and each such rule of its own, is left out and
 * `rules` stands at the first of them (so the base's later denials, such
 * as the hardening rules, still come after it); its `seccomp on|off|
 * default|foreign-abi` lines are left out too, so `rules` should say
 * them.  Relative includes are written so that they resolve from any
 * directory: as written when the data directories give the same file,
 * otherwise as absolute paths.  header goes first.  malloc'd. */
char *securer_policy_derive (const char *base_path, const char *header, const char *rules, securer_err_t *err);

#endif
