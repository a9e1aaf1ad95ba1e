/* Sessions from a template: the namespace steps of one session forked from
 * a template process (docs/architecture.md, "Sessions from a template").
 * Not installed; internal to the Linux backend and its tests. */
#ifndef SECURER_ZYGOTE_H
#define SECURER_ZYGOTE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "securer/error.h"
#include "securer/policy.h"

struct rlimit_plan;
struct securer_landlock_plan;
struct securer_landlock_report;
struct sock_filter;
struct securer_seccomp_prog;

/* Host side: writes the template's uid_map and gid_map: its own id (inside
 * 0 -> own) and the whole host-id lease range (inside 1..count -> first..,
 * but for `own` when it is in the range), so that a session forked from it
 * can become its leased id there.  Only a caller with CAP_SETUID/CAP_SETGID
 * over those ids (root) may write it. */
int securer_zygote_template_maps (pid_t template_pid, uint32_t own, uint32_t first, uint32_t count,
                                  securer_err_t *err);

/* The id, in the template's user namespace, of host id `host` of the range
 * [first, first + count): what securer_zygote_enter takes as `index`. */
int securer_zygote_index (uint32_t host, uint32_t first, uint32_t count, uint32_t *index, securer_err_t *err);

struct securer_zygote_session {
  uint32_t index;              /* the session's leased id in the template's namespace (1..N) */
  uint32_t inside;             /* the one id the session maps to it (uid and gid) */
  const char *hostname;        /* NULL: leave the template's */
  const char *const *tmpfs;    /* fresh tmpfs mounts over the template's, NULL-terminated; may be NULL */
  uint64_t tmpfs_size;         /* bytes, each; 0: the kernel's default */
  const struct securer_policy *policy;  /* its masks below /proc are applied again; may be NULL */
  uint32_t inside_gid;         /* the gid it maps; 0: inside */
  bool policy_tmpfs;           /* the policy's tmpfs mounts fresh, with their sizes and modes */
  bool own_id;                 /* index 0: stay the template's own id (an unprivileged caller's) */
  bool policy_ns;              /* unshare the policy's namespaces only (else all of them) */
  bool no_memory_limit;        /* its `cgroup memory` was not applied: meminfo stays empty */
};

/* Runs in a fresh fork of the template (single-threaded, uid 0 of the
 * template's user namespace with CAP_SETUID/CAP_SETGID there).  Becomes the
 * session's host id, unshares user, mount, pid, net, ipc and uts namespaces,
 * maps its own single id to `inside`, then forks the session's pid 1.
 * Returns, in the forked process (pid 1 of the session's pid namespace),
 * 0 once it has its own /proc (masked as a policy's), its tmpfs mounts and
 * its hostname; in the calling process the pid of that
 * child as the caller sees it (> 0); -1 with *err on any failure, in
 * whichever of the two it happened: nothing is skipped or left half done
 * silently.  The caller decides what each process does next (the caller's
 * process has no further part in the session and should _exit). */
pid_t securer_zygote_enter (const struct securer_zygote_session *s, securer_err_t *err);

/* A template's payload (spawn.c): keeps CAP_SETUID and CAP_SETGID, in its
 * permitted and bounding sets, and no other capability. */
int securer_zygote_keep_setid_caps (securer_err_t *err);

struct securer_spawn_opts;
struct securer_sandbox;
/* Starts a session template: a sandbox of opts->policy whose user namespace
 * maps, besides its own leased id (inside 0), the whole host-id lease range,
 * whose payload keeps CAP_SETUID/CAP_SETGID, and whose proc is bare.
 * Refused unless the caller is root, the policy has a user namespace, and
 * its Landlock and seccomp are off (a Landlock domain forbids the
 * sessions' mounts; both are applied per session, securer_zygote_confine). */
int securer_zygote_template_start (const struct securer_spawn_opts *opts, struct securer_sandbox **out,
                                   securer_err_t *err);

/* What a session applies to itself before it reads any user code, all
 * prepared before the template forks it (nothing is built after). */
struct securer_zygote_confinement {
  const struct securer_policy *p;             /* cwd, Landlock mode, seccomp on/off */
  const struct securer_landlock_plan *landlock;  /* NULL when the policy's Landlock is off */
  const struct rlimit_plan *rlimits;
  const struct sock_filter *filter;           /* the policy's BPF program (securer_seccomp_bpf) */
  unsigned n_insns;
  unsigned long filter_flags;
};

/* Runs in the session's process that will run the payload: a new session
 * (setsid), the policy's cwd, no capabilities, no_new_privs, Landlock (the
 * paths are opened now, so they are the session's own mounts), the
 * rlimits, then the seccomp filter, last.  Refuses (-1, nothing loaded
 * beyond the step that failed) when the policy wants seccomp and no filter
 * is given, or when the filter needs a supervisor for user notification.
 * A supervisor-less confinement for the namespace-level tests and
 * benchmarks (tests/helpers/zygote-template, bench/zygote-bench); sessions
 * of a real template (template.c) are confined by securer_payload_confine,
 * the cold payload's own steps, with a supervisor. */
int securer_zygote_confine (const struct securer_zygote_confinement *c, struct securer_landlock_report *rep,
                            securer_err_t *err);

/* A template's confinement for its sessions, made once from the policy:
 * the Landlock and rlimit plans and the BPF program, generated without
 * denial reports (see securer_zygote_confine, for the same tests).
 * out must stay where it is while `confinement` is used. */
struct securer_zygote_plans {
  struct securer_zygote_confinement confinement;
  struct securer_landlock_plan *landlock;
  struct rlimit_plan *rlimits;
  struct securer_seccomp_prog *prog;
};
int securer_zygote_plan (const struct securer_policy *p, struct securer_zygote_plans *out, securer_err_t *err);

/* ---- a template's program (the module its R loads) ----------------------- */

/* What the template was told once, at its start. */
struct securer_zygote_program {
  struct securer_policy *p;                 /* the sessions' policy */
  struct securer_landlock_plan *landlock;   /* built once (NULL: Landlock off); paths opened in each session */
  int init_fd;                              /* securer-init, O_PATH */
};

/* One request on the control socket, with SECURER_ZYGOTE_REQUEST_FDS
 * descriptors: the session's channel, stdout, stderr, setup socket, status
 * socket and, when `lease` is set, the session's host-id lease (which the
 * session's pid 1 holds to the end of its exit; otherwise a copy of the
 * status socket stands in its place). */
#define SECURER_ZYGOTE_REQUEST_FDS 6
#define SECURER_ZYGOTE_MAGIC 0x5a594731u   /* "ZYG1" */
struct securer_zygote_request {
  uint32_t magic;
  uint32_t index;       /* the session's host id in the template's namespace */
  int32_t sock_at;      /* the setup socket's fd number in the payload (its seccomp exception) */
  uint32_t verbose;
  uint32_t lease;       /* descriptor 5 is the host-id lease */
  uint32_t no_memory_limit;  /* the session's cgroup has no memory limit the policy asked for */
};

/* Reads the sessions' policy (its exact JSON form, securer_policy_to_json_text)
 * from policy_fd and prepares what every session applies. */
int securer_zygote_program_init (struct securer_zygote_program *z, int policy_fd, int init_fd, securer_err_t *err);

/* Forks the session a request asks for.  Returns 0 in the template; 1 in
 * the session's payload, on its way back into the template's program:
 * its channel, stdout and stderr on fds 0-2 and no other descriptor, its
 * own namespaces, host id, /proc, /tmp and cgroup, confined (Landlock,
 * rlimits, seccomp) exactly as a cold payload before its exec, with
 * securer-init as its pid 1; -1 with *err in the template when it cannot
 * fork.  Failures inside the session go to the host on its setup socket. */
int securer_zygote_fork_session (const struct securer_zygote_program *z, const struct securer_zygote_request *rq,
                                 const int fds[SECURER_ZYGOTE_REQUEST_FDS], securer_err_t *err);

#endif
