/* The one printer of seccomp rules in the policy language, shared by
 * `securer policy show` (policy/text.c), `securer policy import`
 * (seccomp/oci.c) and `securer policy learn` (seccomp/learn.c), so the
 * three can never spell a rule differently. */
#ifndef SECURER_SECCOMP_RULETEXT_H
#define SECURER_SECCOMP_RULETEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "securer/policy.h"

/* How values are written; NULL means the defaults (all zero). */
struct securer_rule_style {
  /* Bit k: argument k is an int, so `& 0xffffffff == V` on it is
   * written `== V` (the filter compares only its low 32 bits anyway). */
  unsigned args32;
  /* All numbers in hex (by default below 4096 in decimal). */
  bool hex;
  /* The name of a constant for value v of argument arg, or NULL. */
  const char *(*value_name) (void *ctx, unsigned arg, uint64_t v);
  void *ctx;
};

/* "allow", "errno EPERM" (or "errno 1234" for an unnamed one), "kill-process", ... */
void securer_rule_put_action (FILE *f, struct securer_action a);

/* "seccomp ACTION NAME [if argN OP VALUE [and ...]]", without a newline;
 * NAME may be "@group".  Returns the number of bytes written. */
int securer_rule_put (FILE *f, const char *name, struct securer_action a, const struct securer_arg_cond *conds,
                      unsigned n_conds, const struct securer_rule_style *style);

#endif
