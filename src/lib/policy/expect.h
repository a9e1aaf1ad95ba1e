/* Calls written by hand and expectations about them: the file format of
 * `securer policy test` and the CALL of `securer policy explain` (see
 * docs/policy.md, "Testing a policy").
 *
 * A call is `[ABI] SYSCALL [ARG...]`: ABI is x86_64 (the default), i386 or
 * x32; an ARG is a value as in policy conditions (numbers, constants, `|`)
 * plus `A<<B`, or `*` for every value; arguments not given are `*`.  An
 * expectation is `CALL -> VERDICT` and holds when the filter gives that
 * verdict to every call it stands for.  `network MODE` and `limit NAME
 * VALUE` lines, written as in a policy, expect that setting; `path PATH ->
 * writable|read-only|masked|absent`, `exec PATH -> allowed|denied`, `env
 * NAME=VALUE` and `env NAME -> set|kept|absent` what the sandbox will have
 * (paths as linux/view.h reads them from the policy); `net HOST[:PORT] ->
 * allowed|denied` what `network allow` gives (port 443 when none). */
#ifndef SECURER_POLICY_EXPECT_H
#define SECURER_POLICY_EXPECT_H

#include <stdint.h>

#include "securer/policy.h"

struct securer_seccomp_prog;

struct securer_call {
  uint32_t arch;    /* AUDIT_ARCH_* */
  int nr;           /* as the filter sees it (x32 bit included) */
  char *name;       /* syscall name as written */
  char *abi;        /* "x86_64", "i386", "x32" */
  bool foreign;     /* an ABI the filter refuses outright (i386, x32) */
  uint64_t args[6];
  unsigned wild;    /* bit k: argument k stands for every value */
};

enum securer_expect_kind {
  SECURER_EXPECT_CALL,     /* CALL -> VERDICT */
  SECURER_EXPECT_NETWORK,  /* network none|loopback|host */
  SECURER_EXPECT_LIMIT,    /* limit NAME VALUE, as in a policy */
  SECURER_EXPECT_PATH,     /* path PATH -> writable|read-only|masked|absent */
  SECURER_EXPECT_EXEC,     /* exec PATH -> allowed|denied */
  SECURER_EXPECT_ENV,      /* env NAME=VALUE, env NAME -> set|kept|absent */
  SECURER_EXPECT_NET,      /* net HOST:PORT -> allowed|denied (path: HOST, limit: PORT) */
};

enum securer_env_state { SECURER_ENV_ABSENT = 0, SECURER_ENV_KEPT, SECURER_ENV_SET };

struct securer_expectation {
  enum securer_expect_kind kind;
  struct securer_call call;          /* CALL */
  struct securer_action verdict;     /* CALL */
  enum securer_net_mode network;     /* NETWORK */
  int limit;                         /* LIMIT: an enum securer_rlimit_id, -1 for timeout, -2 for ptys */
  struct securer_limits limits;      /* LIMIT: the value, read as a policy would */
  char *path;                        /* PATH, EXEC: absolute; ENV: the name */
  int want;                          /* PATH: enum securer_view_kind; EXEC: 1 allowed, 0 denied;
                                        ENV: enum securer_env_state */
  char *value;                       /* ENV with SET: the value, or NULL for any */
  char *text;       /* the line as written, for reports */
  unsigned line, col;
};

struct securer_expectations {
  char *file;
  struct securer_expectation *items;
  size_t n;
};

/* Reads an expectation file; every malformed line is reported to diags
 * (file:line:col, with suggestions).  Returns -1 when there was one. */
int securer_expect_parse (const char *name, const char *text, size_t len,
                          struct securer_expectations *out, struct securer_diags *diags);
/* Whether p meets a NETWORK, LIMIT or NET expectation (a CALL one is checked
 * against the filter, with securer_call_samples; PATH, EXEC and ENV ones
 * with securer_expect_check_view). */
bool securer_expect_setting_holds (const struct securer_expectation *x, const struct securer_policy *p);
/* NET: whether p lets the command reach x's destination; *why (may be
 * NULL) says why, in a few words. */
bool securer_expect_net_allowed (const struct securer_policy *p, const struct securer_expectation *x,
                                 const char **why);

/* Checks a PATH, EXEC or ENV expectation: returns 1 when it holds, 0 when
 * not, -1 on error.  *actual is what p gives, in the words of the
 * expectation ("writable", "denied", "kept"), *why the reason, naming
 * the mount and where it was written when there is one; malloc'd. */
int securer_expect_check_view (const struct securer_expectation *x, const struct securer_policy *p,
                               char **actual, char **why, securer_err_t *err);

/* The same for a file (at most 1 MiB, as policies); a file that cannot be
 * read is reported to diags too. */
int securer_expect_load_file (const char *path, struct securer_expectations *out,
                              struct securer_diags *diags);
void securer_expectations_clear (struct securer_expectations *e);

/* A call given as words (the command line of `policy explain`). */
int securer_call_parse_words (char *const *words, size_t n, struct securer_call *out, securer_err_t *err);
void securer_call_clear (struct securer_call *c);

/* Calls cb with the arguments of every concrete call that c stands for
 * and that can decide a verdict: c's fixed arguments, and for each `*`
 * the values the policy's conditions turn on (each value and mask, one
 * off, with the upper 32 bits set) together with a point of every
 * argument region the compiler derived.  Stops when cb returns non-zero
 * and returns that value. */
typedef int (*securer_call_sample_cb) (void *ctx, const uint64_t args[6]);
int securer_call_samples (const struct securer_seccomp_prog *prog, const struct securer_policy *p,
                          const struct securer_call *c, securer_call_sample_cb cb, void *ctx);

/* Makes a witness readable: sets to 0 each argument of args in `wild`
 * (upper bits first, then the rest) as long as still_holds says the
 * witness still shows what it showed. */
typedef bool (*securer_call_pred) (void *ctx, const uint64_t args[6]);
void securer_call_simplify (uint64_t args[6], unsigned wild, securer_call_pred still_holds, void *ctx);

/* "errno EPERM", "kill-process", ... (static or in buf). */
const char *securer_verdict_text (struct securer_action a, char *buf, size_t size);
/* "socket(0x2, 0x1, 0x0, ...)" for a concrete call, malloc'd. */
char *securer_call_text (const struct securer_call *c, const uint64_t args[6]);

#endif
