/* securer — running a process inside the sandbox a policy describes.
 *
 * securer_sandbox_spawn() starts CMD in a new sandbox and returns at once
 * with a handle; the caller either waits (securer_sandbox_wait) or, in an
 * event loop, watches securer_sandbox_pollfd() and calls
 * securer_sandbox_dispatch() whenever it is readable.
 */
#ifndef SECURER_SANDBOX_H
#define SECURER_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "securer/error.h"
#include "securer/policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses used by `securer run` (and suggested in errors). */
#define SECURER_EXIT_TIMEOUT 124
#define SECURER_EXIT_SETUP 125
#define SECURER_EXIT_CANNOT_EXEC 126
#define SECURER_EXIT_NOT_FOUND 127

/* One syscall seen by the supervisor (see on_syscall below). */
struct securer_syscall_event {
  pid_t pid;                     /* calling thread, in the caller's pid namespace */
  uint32_t arch;                 /* AUDIT_ARCH_* */
  int nr;
  const char *name;              /* "openat"; "x32:…"/"i386:…" for other ABIs; "nr N" if unknown */
  uint64_t args[6];
  struct securer_action action;  /* what the policy decided for it */
};

/* One decision of the proxy of a `network allow` policy (see on_net). */
struct securer_net_event {
  const char *host;              /* as the sandbox asked for it (name or address) */
  uint16_t port;
  const char *via;               /* "connect" (HTTP CONNECT), "http" (plain HTTP) or "socks" */
  const char *addr;              /* the address connected to, when allowed; else NULL */
  enum securer_net_verdict verdict;
  const char *reason;            /* securer_net_verdict_text, or why an allowed one failed */
};

struct securer_spawn_opts {
  const struct securer_policy *policy;
  char *const *argv;             /* argv[0] is resolved inside the sandbox */
  char *const *extra_env;        /* "NAME=value" added after the policy's env; may be NULL */

  int stdin_fd, stdout_fd, stderr_fd;  /* -1: inherit the caller's */

  /* Extra descriptors handed to the payload as fds 3, 4, … in this order
   * (everything else above 2 is closed). */
  const int *pass_fds;
  unsigned n_pass_fds;

  uint64_t timeout_ms;           /* overrides the policy's timeout when != 0 */
  bool verbose;                  /* report each setup step on stderr */

  /* Called for every syscall the filter reports through user notification
   * (`notify` rules or default, kills named by the supervisor), once it has
   * been answered: while spawn waits for the exec, then from dispatch.  It
   * must not call back into the sandbox.  May be NULL. */
  void (*on_syscall) (void *ctx, const struct securer_syscall_event *ev);
  void *on_syscall_ctx;

  /* Called for every destination the proxy of a `network allow` policy
   * decided on (from dispatch).  It must not call back into the sandbox.
   * May be NULL. */
  void (*on_net) (void *ctx, const struct securer_net_event *ev);
  void *on_net_ctx;

  /* Generate the seccomp filter afresh instead of taking it from the cache
   * of compiled filters (docs/security.md, "Cache of compiled filters");
   * SECURER_SECCOMP_CACHE=off in the environment does the same for every
   * spawn. */
  bool no_seccomp_cache;

  /* Finish as soon as the sandbox's pid 1 reports that the command and
   * every other process of the sandbox are gone, without waiting for the
   * namespaces to be torn down as pid 1 exits; securer_sandbox_free() then
   * does not wait for it either (pid 1 is reaped there if it is already
   * gone, else left to the caller's exit: for a process about to exit,
   * like `securer run`).  Applies only to a sandbox with its own pid
   * namespace and no cgroup (which must outlive its pid 1); others finish
   * as without it.  A leased host id stays leased until pid 1's exit is
   * done: pid 1 holds the lease itself. */
  bool return_before_teardown;
};

enum securer_kill_reason {
  SECURER_KILL_NONE = 0,
  SECURER_KILL_TIMEOUT,   /* wall-clock timeout */
  SECURER_KILL_LIMIT,     /* an rlimit or cgroup limit (cpu, memory, file size) */
  SECURER_KILL_SECCOMP,   /* the seccomp filter stopped the payload */
  SECURER_KILL_CALLER,    /* securer_sandbox_kill() */
  SECURER_KILL_SIGNAL,    /* ended by a signal sent with securer_sandbox_signal() (from outside) */
};

/* Which limit, when reason is SECURER_KILL_LIMIT.  A pids limit kills
 * nothing (a fork past it fails with EAGAIN), so it is none of these. */
enum securer_limit_hit {
  SECURER_LIMIT_NONE = 0,
  SECURER_LIMIT_CPU,      /* RLIMIT_CPU: SIGXCPU, or SIGKILL at the hard limit */
  SECURER_LIMIT_MEMORY,   /* the cgroup's memory limit (the OOM killer) */
  SECURER_LIMIT_FSIZE,    /* RLIMIT_FSIZE: SIGXFSZ */
};

struct securer_status {
  pid_t pid;                    /* host pid of the payload */
  bool exited;                  /* true: exit_code is valid; false: signal is */
  int exit_code;
  int signal;
  uint64_t wall_us;
  uint64_t user_us, sys_us;     /* cpu time of everything in the sandbox */
  uint64_t max_rss_kb;
  enum securer_kill_reason reason;
  enum securer_limit_hit limit;  /* with SECURER_KILL_LIMIT */
  char *detail;                 /* e.g. the denied syscall "ptrace"; may be NULL */
};

struct securer_sandbox;

/* Returns once the command has been exec'd inside the sandbox, or -1 when
 * a step failed: the error names the step, and its status is 125 (setup),
 * 126 (cannot execute) or 127 (not found).  opts->policy must outlive the
 * sandbox.  The sandbox's pid 1 is a child of the calling thread and dies
 * with it (PR_SET_PDEATHSIG); the caller must not reap it by other means
 * (waitpid(-1), SIGCHLD set to SIG_IGN). */
int securer_sandbox_spawn (const struct securer_spawn_opts *opts,
                           struct securer_sandbox **out, securer_err_t *err);

pid_t securer_sandbox_pid (const struct securer_sandbox *sb);
/* The host uid the sandbox's processes run as (a leased id of its own for
 * a root caller, else the caller's). */
uint32_t securer_sandbox_host_uid (const struct securer_sandbox *sb);

/* A descriptor that becomes readable when the sandbox needs attention
 * (payload exited, timeout, seccomp notification). */
int securer_sandbox_pollfd (const struct securer_sandbox *sb);

/* Handles whatever made pollfd readable.  Returns 1 when the sandbox has
 * finished (and fills *st), 0 when it is still running, -1 on error. */
int securer_sandbox_dispatch (struct securer_sandbox *sb, struct securer_status *st,
                              securer_err_t *err);

/* Blocks until the sandbox has finished. */
int securer_sandbox_wait (struct securer_sandbox *sb, struct securer_status *st,
                          securer_err_t *err);

/* Kills everything in the sandbox. */
int securer_sandbox_kill (struct securer_sandbox *sb, securer_err_t *err);

/* Sends sig to the sandbox: its init passes it on to the command (SIGKILL
 * kills everything).  For forwarding the caller's SIGINT/SIGTERM/SIGHUP. */
int securer_sandbox_signal (struct securer_sandbox *sb, int sig, securer_err_t *err);

/* One JSON object describing how the sandbox ended (st as filled by
 * dispatch/wait) and what was enforced (namespaces, landlock, cgroup,
 * seccomp).  malloc'd; NULL with *err set on failure. */
char *securer_sandbox_status_json (const struct securer_sandbox *sb, const struct securer_status *st,
                                   securer_err_t *err);

/* What the policy asked for as best effort and this host did not give
 * (`cgroup best-effort` limits not applied, `landlock best-effort` rights
 * not enforced), as one line for the caller to show; NULL when nothing
 * was left out.  Known once securer_sandbox_spawn has returned.  malloc'd. */
char *securer_sandbox_degraded (const struct securer_sandbox *sb);

/* The CPUs the sandbox's processes may use: those of the caller's
 * affinity mask, at most the policy's `cgroup cpu` (rounded up) when the
 * cgroup holds it.  Known once securer_sandbox_spawn has returned. */
unsigned securer_sandbox_cpus (const struct securer_sandbox *sb);

/* Kills (if still running), reaps and frees. */
void securer_sandbox_free (struct securer_sandbox *sb);

void securer_status_clear (struct securer_status *st);

/* The exit status `securer run` reports for st (command's code, 128+N, 124). */
int securer_status_exit_code (const struct securer_status *st);

#ifdef __cplusplus
}
#endif
#endif
