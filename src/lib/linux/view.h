/* What a path inside the sandbox will be, read from the policy alone: the
 * answer `securer policy test` checks `path` and `exec` expectations
 * against, without building a sandbox.
 *
 * It follows the launcher: mounts are attached in order (a later mount at
 * or above an earlier one's destination hides it), the policy's symlinks
 * are followed, masks hide what they cover, the root is a read-only tmpfs
 * holding only the directories leading to mount points, and Landlock's
 * rules are the plan securer_landlock_plan_build() derives (the same one
 * the payload applies).  The host is never looked at: an optional mount
 * counts as present, and what is below a bind is whatever the host has
 * there, with the bind's rights. */
#ifndef SECURER_LINUX_VIEW_H
#define SECURER_LINUX_VIEW_H

#include <stdbool.h>

#include "securer/policy.h"

enum securer_view_kind {
  SECURER_VIEW_ABSENT = 0,  /* nothing of the policy is there */
  SECURER_VIEW_MASKED,      /* hidden by a mask (an empty file or directory) */
  SECURER_VIEW_READ_ONLY,
  SECURER_VIEW_WRITABLE,
};

struct securer_view {
  enum securer_view_kind kind;
  bool exec;                          /* a file there may be executed */
  char *resolved;                     /* the path after the policy's symlinks */
  const struct securer_mount *mount;  /* the mount it is in; NULL: the root */
  const char *why;                    /* what decides kind (and exec), for reports */
  const char *why_exec;
};

/* Fills *out for `path` (absolute).  Fails only for a path that is not
 * absolute, or for lack of memory. */
int securer_view_path (const struct securer_policy *p, const char *path, struct securer_view *out,
                       securer_err_t *err);
void securer_view_clear (struct securer_view *v);

/* "absent", "masked", "read-only", "writable". */
const char *securer_view_kind_name (enum securer_view_kind k);

#endif
