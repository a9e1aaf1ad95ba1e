/* securer — the policy model.
 *
 * struct securer_policy is the resolved form of a policy: includes read,
 * @groups expanded into one rule per syscall, constants turned into numbers,
 * every default made explicit.  Every backend (Linux now, Seatbelt and Job
 * Objects later) reads only this structure, never the text, so a backend
 * cannot disagree with `securer policy show` about what a policy means.
 *
 * The text grammar is documented in docs/policy.md and securer-policy(5).
 */
#ifndef SECURER_POLICY_H
#define SECURER_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "securer/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a directive came from, for diagnostics raised after parsing
 * (e.g. "mount /opt: source missing" at launch).  file is NULL for
 * policies built in code; line/col are 1-based, 0 when unknown. */
struct securer_loc {
  char *file;
  unsigned line;
  unsigned col;
};

/* ---- namespaces --------------------------------------------------------- */
enum securer_ns {
  SECURER_NS_USER = 1u << 0,
  SECURER_NS_PID = 1u << 1,
  SECURER_NS_MOUNT = 1u << 2,
  SECURER_NS_NET = 1u << 3,
  SECURER_NS_UTS = 1u << 4,
  SECURER_NS_IPC = 1u << 5,
  SECURER_NS_CGROUP = 1u << 6,
};
#define SECURER_NS_ALL 0x7fu

/* Required protections are refused (exit 125) when the kernel cannot give
 * them; best-effort ones are applied as far as possible and reported. */
enum securer_enforce {
  SECURER_ENFORCE_OFF = 0,
  SECURER_ENFORCE_BEST_EFFORT,
  SECURER_ENFORCE_REQUIRED,
};

/* ---- filesystem view ---------------------------------------------------- */
enum securer_mount_type {
  SECURER_MOUNT_RO,      /* read-only bind of a host path */
  SECURER_MOUNT_RW,      /* read-write bind of a host path */
  SECURER_MOUNT_TMPFS,   /* fresh tmpfs */
  SECURER_MOUNT_PROC,    /* new procfs for the sandbox's pid namespace */
  SECURER_MOUNT_DEV,     /* minimal /dev: null zero full random urandom tty, pts, shm, fd links */
  SECURER_MOUNT_DIR,     /* create an empty directory (in the tmpfs root) */
  SECURER_MOUNT_SYMLINK, /* create a symlink dest -> source */
};

struct securer_mount {
  enum securer_mount_type type;
  char *source;    /* host path (RO/RW), link target (SYMLINK); NULL otherwise */
  char *dest;      /* absolute path inside the sandbox */
  bool optional;   /* RO/RW: skip silently when the source does not exist */
  bool noexec;     /* resolved: RW and TMPFS default to true, RO to false */
  uint64_t size;   /* TMPFS: size in bytes, 0 = kernel default */
  uint32_t mode;   /* TMPFS/DIR: permission bits (default 0755; 01777 for /tmp-like) */
  bool pid_only;   /* PROC: subset=pid, the processes' directories and nothing host-wide */
  bool unmasked;   /* PROC: the host-wide entries left visible (no masks, the host's boot_id
                      and meminfo); the read-only entries stay read-only */
  struct securer_loc loc;
};

/* ---- network ------------------------------------------------------------ */
struct securer_policy;

enum securer_net_mode {
  SECURER_NET_NONE = 0,   /* new net namespace, nothing up */
  SECURER_NET_LOOPBACK,   /* new net namespace, lo up */
  SECURER_NET_HOST,       /* share the caller's network (explicit only) */
  SECURER_NET_ALLOW,      /* new net namespace, lo up, and the supervisor's proxy
                             reaching what the policy's net rules allow */
};

/* How wide a mode is: none < loopback < allow < host.  An override may
 * only go down this order. */
int securer_net_mode_rank (enum securer_net_mode m);

/* One word of `network allow …` / `network deny …`: a host name, a
 * `*.suffix` wildcard, or an address or CIDR block, with a port or port
 * range (none: the default ports 80 and 443; `*`: every port). */
enum securer_net_rule_kind {
  SECURER_NET_RULE_NAME = 0,  /* host is the exact name, lower case */
  SECURER_NET_RULE_SUFFIX,    /* host is ".example.org": any name below it */
  SECURER_NET_RULE_ADDR,      /* family/addr/prefix */
};

struct securer_net_rule {
  bool deny;
  enum securer_net_rule_kind kind;
  char *host;                 /* NAME, SUFFIX; NULL for ADDR */
  int family;                 /* ADDR: AF_INET or AF_INET6 */
  uint8_t addr[16];           /* ADDR: network order, the bits past prefix zero */
  uint8_t prefix;             /* ADDR: 0..32 or 0..128 */
  uint16_t port_lo, port_hi;  /* both 0: the default ports (80, 443); a deny rule
                                 written without a port has every port */
};

/* What the proxy of one sandbox may use (`network limit …`); 0 in a
 * field: the default. */
struct securer_net_limits {
  uint32_t connections;  /* open at once (default 64) */
  uint64_t bytes;        /* through it, both ways, in the sandbox's life (default 1 GiB;
                            UINT64_MAX: unlimited) */
  uint64_t idle_ms;      /* a connection with no traffic is closed (default 60 s) */
};
#define SECURER_NET_DEFAULT_CONNECTIONS 64u
#define SECURER_NET_DEFAULT_BYTES (1ull << 30)
#define SECURER_NET_DEFAULT_IDLE_MS 60000u
#define SECURER_NET_MAX_CONNECTIONS 4096u

/* The proxy's port on the sandbox's loopback (SECURER_NET_ALLOW). */
#define SECURER_NET_PROXY_PORT 3128

/* Parses one word.  Returns 0, or -1 with *why (static text) saying what
 * is wrong.  out->host is malloc'd (free with securer_net_rule_clear). */
int securer_net_rule_parse (const char *text, bool deny, struct securer_net_rule *out, const char **why);
/* The word as it would be written in a policy ("api.example.org:443",
 * "*.example.org", "10.0.0.0/8:*", "[2001:db8::1]:8443").  malloc'd. */
char *securer_net_rule_format (const struct securer_net_rule *r);
void securer_net_rule_clear (struct securer_net_rule *r);

enum securer_net_verdict {
  SECURER_NET_DENIED_NO_RULE = 0,  /* nothing allows it */
  SECURER_NET_DENIED_RULE,         /* a deny rule matches */
  SECURER_NET_DENIED_PRIVATE,      /* the name resolved to a private, loopback or link-local
                                      address that no address rule allows */
  SECURER_NET_ALLOWED,
};

/* Decision for a destination asked for by name (lower case, no trailing
 * dot; an address literal is decided as an address).  *rule (may be NULL)
 * gets the rule that decided, or NULL. */
enum securer_net_verdict securer_net_decide_name (const struct securer_policy *p, const char *host,
                                                  uint16_t port, const struct securer_net_rule **rule);
/* Decision for a connection to addr (struct sockaddr_in/_in6, port
 * included).  by_name: the address is what an allowed name resolved to;
 * it is then refused only by a deny rule, or when it is private and no
 * address rule allows it (a name pointing into the host's own networks).
 * Otherwise an address rule must allow it. */
enum securer_net_verdict securer_net_decide_addr (const struct securer_policy *p, const void *addr,
                                                  bool by_name, const struct securer_net_rule **rule);
const char *securer_net_verdict_text (enum securer_net_verdict v);

/* Adds words (as in a `network allow`/`network deny` line) to a policy
 * already read: an allow makes its network SECURER_NET_ALLOW, with the
 * TCP socket rules that mode gives the command.  For a host widening a
 * policy on an operator's say-so (serve --allow-network).  A policy
 * without its own network namespace is refused. */
int securer_policy_add_net_rules (struct securer_policy *p, const char *const *words, size_t n, bool deny,
                                  securer_err_t *err);

/* ---- limits ------------------------------------------------------------- */
enum securer_rlimit_id {
  SECURER_RLIMIT_CPU = 0,  /* seconds */
  SECURER_RLIMIT_AS,       /* bytes */
  SECURER_RLIMIT_FSIZE,    /* bytes */
  SECURER_RLIMIT_NPROC,
  SECURER_RLIMIT_NOFILE,
  SECURER_RLIMIT_STACK,    /* bytes */
  SECURER_RLIMIT_CORE,     /* bytes */
  SECURER_RLIMIT_MEMLOCK,  /* bytes */
  SECURER_RLIMIT_SIGPENDING,
  SECURER_RLIMIT_COUNT
};

struct securer_rlimit {
  bool set;
  uint64_t soft;  /* UINT64_MAX = unlimited */
  uint64_t hard;
};

struct securer_limits {
  struct securer_rlimit rlimit[SECURER_RLIMIT_COUNT];
  uint64_t timeout_ms;          /* wall clock; 0 = none */
  uint64_t cgroup_memory;       /* bytes for memory.max; 0 = unset */
  uint64_t cgroup_pids;         /* pids.max; 0 = unset */
  uint32_t cgroup_cpu_millis;   /* 1000 = one full CPU; 0 = unset */
  enum securer_enforce cgroup;  /* how to treat a host without a usable cgroup */
  /* ptys of `mount dev`'s own devpts instance (its max=).  The kernel counts
   * the ptys of every non-initial instance against one pool of
   * kernel.pty.max - kernel.pty.reserve, so without a cap one sandbox can
   * take them all.  0: no devpts instance and no ptmx at all.  Unset:
   * SECURER_PTYS_DEFAULT (securer_policy_ptys). */
  bool ptys_set;
  uint32_t ptys;
};

/* Enough for a shell with a few nested terminals (script, expect, an
 * editor's subshell); 3072 / 8 = 384 sandboxes at their cap before the
 * shared pool of a default kernel is gone. */
#define SECURER_PTYS_DEFAULT 8u
/* The kernel's own ceiling on an instance (NR_UNIX98_PTY_MAX). */
#define SECURER_PTYS_MAX (1u << 20)

/* ---- environment ------------------------------------------------------ */
struct securer_env_var {
  char *name;
  char *value;
};

/* ---- seccomp ------------------------------------------------------------ */
enum securer_action_type {
  SECURER_ACT_ALLOW = 0,
  SECURER_ACT_ERRNO,
  SECURER_ACT_KILL_PROCESS,
  SECURER_ACT_KILL_THREAD,
  SECURER_ACT_TRAP,
  SECURER_ACT_LOG,
  SECURER_ACT_NOTIFY,
};

struct securer_action {
  enum securer_action_type type;
  int errnum;  /* SECURER_ACT_ERRNO only */
};

enum securer_cmp {
  SECURER_CMP_EQ = 0,
  SECURER_CMP_NE,
  SECURER_CMP_LT,
  SECURER_CMP_LE,
  SECURER_CMP_GT,
  SECURER_CMP_GE,
  SECURER_CMP_MASKED_EQ,  /* (arg & mask) == value */
};

struct securer_arg_cond {
  unsigned arg;        /* 0..5 */
  enum securer_cmp op;
  uint64_t value;
  uint64_t mask;       /* MASKED_EQ only */
};

#define SECURER_MAX_ARG_CONDS 6

/* One rule for one syscall; all conditions must hold (AND). */
struct securer_syscall_rule {
  char *name;                 /* syscall name as libseccomp knows it */
  struct securer_action action;
  unsigned n_conds;
  struct securer_arg_cond conds[SECURER_MAX_ARG_CONDS];
  char *group;                /* "@group" the rule came from, or NULL */
  struct securer_loc loc;
};

struct securer_seccomp {
  bool enabled;                        /* false: no filter is loaded at all */
  struct securer_action default_action;
  struct securer_action foreign_arch;  /* syscalls of other ABIs (x32, i386 on x86_64) */
  struct securer_syscall_rule *rules;
  size_t n_rules;
};

/* ---- landlock ----------------------------------------------------------- */
struct securer_landlock {
  enum securer_enforce mode;
  bool scope_abstract_unix;  /* ABI 6: no connect to abstract sockets outside */
  bool scope_signal;         /* ABI 6: no signals to processes outside */
  uint16_t *tcp_bind;        /* allowed TCP bind ports (ABI 4) */
  size_t n_tcp_bind;
  uint16_t *tcp_connect;     /* allowed TCP connect ports (ABI 4) */
  size_t n_tcp_connect;
};

/* ---- sessions ------------------------------------------------------------ */
/* How a session (include/securer/session.h) of this policy starts: from a
 * template of the policy (a pre-initialised R that forks each session) or
 * cold (a new sandbox that executes R).  Plain runs ignore it. */
enum securer_session_template {
  SECURER_SESSION_TEMPLATE_AUTO = 0,  /* from a template when this caller can have one */
  SECURER_SESSION_TEMPLATE_ON,        /* from a template, or refused (exit 125) */
  SECURER_SESSION_TEMPLATE_OFF,       /* always cold */
};

/* ---- the policy --------------------------------------------------------- */
#define SECURER_HOST_CALLER (-1)
#define SECURER_HOST_POOL (-2)

struct securer_policy {
  char *name;                 /* file stem, e.g. "r" */
  char *path;                 /* file it was loaded from, NULL if built in code */

  unsigned namespaces;        /* enum securer_ns bits */
  char *hostname;             /* NULL = leave as is (only with SECURER_NS_UTS) */

  /* Identity inside the sandbox, and the host ids it maps to: an id, or
   * SECURER_HOST_CALLER ("the caller's id; for a root caller an id of the
   * sandbox's own, as with POOL", so the sandbox is never host root), or
   * SECURER_HOST_POOL (an id no other live sandbox has; root callers only). */
  uint32_t uid, gid;
  int64_t host_uid, host_gid;

  struct securer_mount *mounts;  /* applied in order */
  size_t n_mounts;
  char **masks;                  /* paths hidden inside the sandbox */
  size_t n_masks;
  char *cwd;                     /* working directory inside; default "/" */

  enum securer_net_mode network;
  struct securer_net_rule *net_rules;  /* network allow/deny, in order */
  size_t n_net_rules;
  struct securer_net_limits net_limits;

  struct securer_limits limits;

  char **env_keep;               /* names passed through from the caller */
  size_t n_env_keep;
  struct securer_env_var *env_set;  /* fixed values (win over env_keep) */
  size_t n_env_set;

  bool exec_restricted;          /* an `exec` directive was given */
  char **exec;                   /* paths (files or directories) that may be executed */
  size_t n_exec;

  struct securer_landlock landlock;
  struct securer_seccomp seccomp;

  enum securer_session_template session_template;

  char **includes;               /* every file read, in order (for show) */
  size_t n_includes;

  /* Seccomp rules read but not resolved yet (SECURER_POLICY_DEFER_SECCOMP);
   * NULL in a complete policy. */
  struct securer_policy_deferred *deferred;
};

/* ---- diagnostics -------------------------------------------------------- */
enum securer_diag_severity {
  SECURER_DIAG_ERROR = 0,
  SECURER_DIAG_WARNING,
  SECURER_DIAG_NOTE,
};

struct securer_diag {
  enum securer_diag_severity severity;
  char *file;
  unsigned line, col;
  char *message;   /* what is wrong and what was expected */
  char *hint;      /* e.g. "did you mean 'mount'?"; may be NULL */
};

struct securer_diags {
  struct securer_diag *items;
  size_t n;
  size_t n_errors;
};

/* Renders one diagnostic as "file:line:col: error: message (hint)". */
char *securer_diag_format (const struct securer_diag *d);
void securer_diags_free (struct securer_diags *d);

/* ---- loading ------------------------------------------------------------ */

/* Parses and resolves a policy file.  All problems found are appended to
 * *diags (may be NULL); on any error returns -1 and *err carries the first
 * diagnostic formatted as "file:line:col: message". */
int securer_policy_load_file (const char *path, struct securer_policy **out,
                              struct securer_diags *diags, securer_err_t *err);

/* Options of securer_policy_load_file_opts. */
enum {
  /* Read every file of the policy but leave its seccomp rule lines
   * (`seccomp ACTION NAMES...`: @groups expanded from seccomp/, conditions,
   * the override rules) unresolved: they are kept as read, and
   * securer_policy_complete resolves them later without reading any policy
   * file again.  Everything else, including `seccomp on|off`, the default
   * and foreign-abi actions, is resolved and checked at once.  A policy
   * with errors, with seccomp off, or without rule lines is loaded
   * complete.  A launch (securer_sandbox_spawn) completes such a policy in
   * place while the sandbox is being set up, so it must belong to that one
   * launch: never share it between threads. */
  SECURER_POLICY_DEFER_SECCOMP = 1u << 0,
};

/* securer_policy_load_file and _load_string with options (SECURER_POLICY_*). */
int securer_policy_load_file_opts (const char *path, unsigned flags, struct securer_policy **out,
                                   struct securer_diags *diags, securer_err_t *err);
int securer_policy_load_string_opts (const char *name, const char *text, size_t len, unsigned flags,
                                     struct securer_policy **out, struct securer_diags *diags,
                                     securer_err_t *err);

/* True while p->seccomp.rules is not resolved yet. */
bool securer_policy_seccomp_pending (const struct securer_policy *p);

/* Hands the words of each pending rule line to fn, line after line in the
 * order they were read (`line` counts from 0; quoted: some part of the word
 * was written in quotes).  What securer_policy_complete resolves is decided
 * by these words, the group files they reach and the policy's actions, so
 * they can address a cache of the result.  Returns the number of lines. */
size_t securer_policy_pending_words (const struct securer_policy *p,
                                     void (*fn) (void *ctx, size_t line, const char *word, bool quoted),
                                     void *ctx);

/* Resolves the rules a SECURER_POLICY_DEFER_SECCOMP load left pending, in
 * place; does nothing for a complete policy.  The result is what a full
 * load of the same bytes gives.  Problems are appended to *diags (may be
 * NULL) and the first error goes to *err ("file:line:col: message
 * (hint)"), as for a load; the policy must then only be freed. */
int securer_policy_complete (struct securer_policy *p, struct securer_diags *diags, securer_err_t *err);

/* Same, for text held in memory; `name` is used in diagnostics and relative
 * includes are resolved against the directory of `name`. */
int securer_policy_load_string (const char *name, const char *text, size_t len,
                                struct securer_policy **out,
                                struct securer_diags *diags, securer_err_t *err);

/* Finds a policy by NAME or path: a string containing '/' or ending in
 * ".policy"/".json" is a path; otherwise NAME.policy is looked up in the
 * policy search path (see securer_data_dirs()). */
int securer_policy_find (const char *name_or_path, char **path_out, securer_err_t *err);

/* A policy file whose first non-space byte is '{' is read as JSON. */
int securer_policy_from_json_text (const char *name, const char *text, size_t len,
                                   struct securer_policy **out, securer_err_t *err);

/* Serialises the resolved policy; the output is accepted by
 * securer_policy_from_json_text and round-trips exactly. */
char *securer_policy_to_json_text (const struct securer_policy *p, unsigned flags);

/* Human-readable resolved policy, in the policy language itself. */
char *securer_policy_to_text (const struct securer_policy *p);

void securer_policy_free (struct securer_policy *p);

/* Whether a launch of p is a sandbox: its own user, mount and pid
 * namespaces (a fresh root and no view of the host's processes), a seccomp
 * filter and Landlock.  A policy that turns any of these off runs code
 * beside the host, whatever its name; servers decide from this, never from
 * a request's words.  When false and why is not NULL, *why names the first
 * missing layer ("no mount namespace", "seccomp off", ...). */
bool securer_policy_is_sandboxed (const struct securer_policy *p, const char **why);

/* The ptys `mount dev` gives the sandbox: limits.ptys, or the default. */
uint32_t securer_policy_ptys (const struct securer_policy *p);

/* Same action (and errno, for errno actions). */
bool securer_action_equal (struct securer_action a, struct securer_action b);

/* Names for enums, shared by every printer. */
const char *securer_rlimit_name (enum securer_rlimit_id id);
const char *securer_action_name (enum securer_action_type t);
const char *securer_ns_name (enum securer_ns ns);
/* "auto", "on", "off"; and back (-1 when unknown). */
const char *securer_session_template_name (enum securer_session_template t);
int securer_session_template_parse (const char *s);

#ifdef __cplusplus
}
#endif
#endif
