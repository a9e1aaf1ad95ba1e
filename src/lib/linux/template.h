/* Session templates, host side: a long-lived sandbox of a policy whose
 * program (R with its default packages and the session runtime loaded)
 * forks one process per session, each of which enters namespaces, mounts,
 * Landlock, rlimits and seccomp of its own before it reads any user code
 * (docs/architecture.md, "Sessions from a template").
 *
 * Internal to libsecurer (the session library and its tests). */
#ifndef SECURER_TEMPLATE_H
#define SECURER_TEMPLATE_H

#include <stdbool.h>

#include "securer/error.h"
#include "securer/policy.h"
#include "securer/sandbox.h"

struct securer_template;

/* Descriptors the template's program finds open: the control socket, which
 * only the zygote module reads, and the module itself, to be loaded with
 * dyn.load("/proc/self/fd/4") (the module need not be in the sandbox's
 * view).  Both are closed in every session. */
#define SECURER_TEMPLATE_CTL_FD 3
#define SECURER_TEMPLATE_MODULE_FD 4

struct securer_template_opts {
  /* The sessions' policy, borrowed: must outlive the template.  The
   * template itself runs it without Landlock and seccomp (each session
   * applies them to itself) and with a bare /proc. */
  const struct securer_policy *policy;
  /* The template's program (R with a bootstrap that loads what every
   * session shares, then calls the module's loop, which returns only in a
   * session, with the session's channel, stdout and stderr on 0-2). */
  char *const *argv;
  char *const *extra_env;
  int stdin_fd;                 /* the program's stdin (-1: /dev/null) */
  int stderr_fd;                /* where it reports a failed start (-1: the caller's stderr) */
  bool verbose;
};

/* Whether this caller and kernel can start templates for p at all: root
 * (the lease range is mapped into the template), user, pid and mount
 * namespaces in p, no seccomp rule that needs a supervisor (notify,
 * denial reports).  0, or -1 with the reason in *err. */
int securer_template_supported (const struct securer_policy *p, securer_err_t *err);

/* Starts a template and waits until its program has loaded the module
 * and is ready to fork sessions (or failed: -1 with what it printed). */
int securer_template_start (const struct securer_template_opts *o, struct securer_template **out,
                            securer_err_t *err);

/* False once the template has died (a session cannot be forked from it;
 * start a new one). */
bool securer_template_alive (const struct securer_template *t);

/* A session from the template: a sandbox of the template's policy whose
 * payload is a fork of the template's program.  Of so, only the stdio
 * descriptors (stdin_fd is the session's channel), timeout_ms, verbose and
 * on_syscall are used; argv, extra_env and pass_fds are the template's.
 * The handle works with every securer_sandbox_* function (pid, pollfd,
 * dispatch, wait, kill, signal, status JSON, free) as a cold sandbox's
 * does; the session has its own leased host id, namespaces, /proc, /tmp,
 * cgroup, Landlock domain and filter. */
int securer_template_spawn (struct securer_template *t, const struct securer_spawn_opts *so,
                            struct securer_sandbox **out, securer_err_t *err);

/* Kills the template (sessions already forked from it end with it: they
 * live in its pid namespace) and frees it. */
void securer_template_free (struct securer_template *t);

#endif
