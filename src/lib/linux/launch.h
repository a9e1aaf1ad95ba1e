/* Internals of the launcher shared by spawn.c, sync.c, userns.c, init.c and
 * status.c.  Not installed; nothing outside src/lib/linux includes this. */
#ifndef SECURER_LAUNCH_H
#define SECURER_LAUNCH_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <sys/resource.h>
#include <linux/filter.h>
#include <sys/types.h>

#include "error-fixed.h"
#include "securer/error.h"
#include "securer/policy.h"
#include "securer/sandbox.h"
#include "linux/linux.h"

/* ---- sync.c: typed messages over a SOCK_SEQPACKET socketpair ----------- */
enum sync_msg_type {
  SYNC_GO = 1,      /* parent -> init: maps written, cgroup placed, go on */
  SYNC_ERROR,       /* init/payload -> parent: a step failed (text, errnum, status) */
  SYNC_READY,       /* payload -> parent: all steps but rlimits and seccomp done (landlock report) */
  SYNC_NOTIFY_FD,   /* payload -> parent: seccomp listener attached with SCM_RIGHTS */
  SYNC_NOTIFY_OFFER,  /* payload -> parent: the listener's fd number (status), to take with pidfd_getfd */
  SYNC_EXIT,        /* init -> parent: how the payload ended (exit code or signal) */
  SYNC_FILTER,      /* parent -> payload, right after GO (read after READY): the seccomp BPF program */
  SYNC_SESSION_HELLO,  /* a template's fork -> parent: place me (pid by credentials) in the cgroup */
  SYNC_SESSION_INIT,   /* a template session's pid 1 -> parent: its pid, by credentials */
  SYNC_JOIN,        /* parent -> a template's fork, before GO: a v1 cgroup's "tasks" to write "0" to */
  SYNC_PROXY_FD,    /* payload -> parent: the proxy's listening socket (network allow), SCM_RIGHTS */
};

#define SYNC_TEXT_MAX 2048

struct sync_msg {
  uint32_t type;
  int32_t status;      /* ERROR: suggested exit status; EXIT: exit code */
  int32_t errnum;      /* ERROR: errno */
  int32_t signal;      /* EXIT: signal that killed the payload, 0 if it exited */
  int32_t ll_abi;      /* READY: landlock report */
  uint32_t ll_enforced;
  uint64_t ll_fs, ll_net, ll_scoped;
  /* EXIT: the usage of everything securer-init reaped (has_rusage 1). */
  uint64_t ru_user_us, ru_sys_us, ru_maxrss_kb;
  uint32_t has_rusage;
  char text[SYNC_TEXT_MAX];  /* ERROR: message; READY: landlock summary */
};

/* Sends m (only the used part of text) and, when fd >= 0, fd with SCM_RIGHTS. */
int sync_send (int sock, const struct sync_msg *m, int fd);
/* Receives one message.  Returns 1 with *m filled, 0 on EOF, -1 on error
 * (errno set).  *fd_out (may be NULL) gets a passed descriptor or -1;
 * *pid_out (may be NULL) gets the sender's pid when SO_PASSCRED is on. */
int sync_recv (int sock, struct sync_msg *m, int *fd_out, pid_t *pid_out, bool nonblock);
/* Reports a failed step to the parent: text is the error message. */
void sync_send_error (int sock, int status, const securer_err_t e);
/* The seccomp program (at most BPF_MAXINSNS instructions) and its seccomp(2)
 * flags, as one datagram.  recv fills insns (room for BPF_MAXINSNS) and
 * returns 1, 0 on EOF, -1 on error or a malformed message. */
int sync_send_filter (int sock, const struct sock_filter *insns, unsigned n, unsigned long flags);
int sync_recv_filter (int sock, struct sock_filter *insns, unsigned *n, unsigned long *flags);

/* ---- userns.c ---------------------------------------------------------- */
struct id_plan {
  uint32_t uid, gid;            /* inside */
  uint32_t host_uid, host_gid;  /* what they map to */
  bool privileged;              /* caller is root: setgroups stays allowed so
                                   init can drop the caller's groups */
};
/* ---- hostids.c: one host uid/gid per live sandbox (root callers) ---- */
struct host_id_lease {
  int fd;                       /* holds the lease; -1 when none */
  uint32_t id;
};
/* The range ids are leased from: SECURER_HOST_IDS=FIRST-LAST, or the default. */
int securer_hostids_range (uint32_t *first, uint32_t *count, securer_err_t *err);
/* Leases an id no other live sandbox holds; ends with release or the
 * holder's death. */
int securer_hostids_acquire (struct host_id_lease *lease, securer_err_t *err);
void securer_hostids_release (struct host_id_lease *lease);

/* Resolves host=caller/pool/N; leases an id into *lease (fd -1 before) when
 * the sandbox needs one of its own. */
int securer_userns_plan (const struct securer_policy *p, struct id_plan *plan, struct host_id_lease *lease,
                         securer_err_t *err);
/* Parent, around clone: the calling thread takes the sandbox's host ids as
 * its effective ids, so the new user namespace is owned by them. */
struct owner_switch {
  bool active;
  gid_t egid;
  int dumpable;
};
int securer_userns_owner_enter (const struct id_plan *plan, struct owner_switch *sw, securer_err_t *err);
void securer_userns_owner_leave (struct owner_switch *sw);
/* Parent: writes setgroups, uid_map and gid_map of the child. */
int securer_userns_write_maps (pid_t pid, const struct id_plan *plan, securer_err_t *err);
/* Child: becomes the inside ids while keeping its capabilities. */
int securer_userns_become (const struct id_plan *plan, securer_err_t *err);

/* ---- caps.c ------------------------------------------------------------ */
/* Child: effective := permitted (after a uid change cleared it). */
int securer_linux_raise_effective (securer_err_t *err);

/* ---- fds.c ------------------------------------------------------------- */
/* Payload: puts the std fds (when >= 0) on 0..2 and pass_fds on 3.., moves
 * `keep` (the sync socket, stays close-on-exec) to fd number keep_at, and
 * closes everything else.  lifted: room for n_pass ints, allocated by the
 * parent (the payload allocates nothing). */
int securer_linux_arrange_fds (int in, int out, int errfd, const int *pass, unsigned n_pass,
                               int *lifted, int keep, int keep_at, securer_err_t *err);


/* ---- rlimit.c ---------------------------------------------------------- */
struct rlimit_plan {
  unsigned n;
  struct {
    int resource;                 /* RLIMIT_* */
    int id;                       /* SECURER_RLIMIT_* (for messages) */
    struct rlimit lim;
  } step[SECURER_RLIMIT_COUNT];
};
/* Parent, before clone: the setrlimit calls the payload will make for the
 * policy's limits (each clamped to the caller's hard limit), with NOFILE's
 * hard limit at most nofile_max. */
int securer_linux_plan_rlimits (const struct securer_policy *p, int nofile_max, struct rlimit_plan *plan,
                                securer_err_t *err);
/* Payload: makes the planned calls.  Allocates nothing.  Returns 0, or
 * -errno with *failed the index of the step that failed. */
int securer_linux_apply_rlimits (const struct rlimit_plan *plan, unsigned *failed);

/* ---- init.c ------------------------------------------------------------ */
struct launch_plan;
/* Runs as the sandbox's pid 1: never returns. */
__attribute__ ((noreturn)) void securer_init_main (struct launch_plan *lp);

/* Everything the child needs, prepared by the parent before clone so the
 * child does as little dynamic work as possible. */
struct launch_plan {
  const struct securer_policy *p;
  struct id_plan ids;
  int setup_sock;           /* child end: GO in; ERROR/READY/NOTIFY_FD out; EOF = exec */
  int status_sock;          /* child end: EXIT out (held by init until it exits) */
  int parent_setup_sock, parent_status_sock;  /* closed in the child */
  int stdin_fd, stdout_fd, stderr_fd;
  const int *pass_fds;
  unsigned n_pass_fds;
  int *pass_scratch;        /* room for n_pass_fds ints (arrange_fds) */
  struct securer_landlock_plan *landlock;  /* built before clone, or NULL (landlock off) */
  char **envp;
  char *const *argv;
  char **exec_paths;        /* candidates for argv[0], tried in order */
  int setup_sock_at;        /* fd number of setup_sock in the payload (see spawn.c) */
  struct rlimit_plan rlimits;
  struct securer_seccomp_prog *seccomp;   /* compiled, BPF generated after clone and sent (SYNC_FILTER) */
  unsigned seccomp_flags;
  bool unshare_cgroup;
  struct securer_cgroup *cg;              /* v1 groups init joins itself, or NULL */
  bool verbose;
  int init_fd;              /* securer-init, opened (O_PATH) before clone */
  int lease_fd;             /* the host-id lease's lock, kept by securer-init to its end; -1: none */
  int gate_fd;              /* payload: a byte once securer-init is undumpable */
  bool builds_view;         /* the payload builds the sandbox's view (init.c) and
                               joins pid 1's network namespace */
  bool restore_cpus;        /* moved off its parent's CPU (pid 1 by the launcher, the payload
                               by pid 1): cpus is its own mask, to take back */
  bool no_host_root;        /* no id of the sandbox is host uid 0 (SECURER_ROOTFS_NO_HOST_ROOT) */
  bool no_memory_limit;     /* `cgroup memory` set but not applied (SECURER_ROOTFS_NO_MEMORY_LIMIT) */
  cpu_set_t cpus;
  const struct launch_template *tpl;  /* a session template (zygote.c), or NULL */
  bool want_filter;         /* the payload receives a seccomp program after READY */
  bool resume;              /* a session from a template: the payload returns into the
                               template's program instead of executing argv */
};

/* A session template's launch (docs/architecture.md, "Sessions from a
 * template"): its map also holds the lease range [first, first + count),
 * its payload runs as inside 0 keeping CAP_SETUID/CAP_SETGID, and its proc
 * mounts are bare.  The caller passes a policy without Landlock and seccomp:
 * each session applies its own. */
struct launch_template {
  uint32_t first, count;   /* count 0: an unprivileged caller's template, which maps
                              its own id alone, keeps no capability, and whose
                              sessions stay that id */
};
int securer_launch_spawn (const struct securer_spawn_opts *opts, const struct launch_template *tpl,
                          struct securer_sandbox **out, securer_err_t *err);

/* A new task starts on its parent's CPU and waits there while the parent
 * keeps it busy, though another CPU may be idle: pid moves to `mask` less
 * the caller's CPU (when that leaves any), and takes its mask back itself
 * once it runs.  Without errno (raw-syscall.h): pid 1 calls it while the
 * payload may share its memory. */
void launch_move_off_this_cpu (pid_t pid, const cpu_set_t *mask);

/* ---- spawn.c: the payload ------------------------------------------------ */
/* Every step of the payload up to and including the seccomp filter;
 * returns with the setup socket still open (on lp->setup_sock). */
void securer_payload_confine (struct launch_plan *lp, pid_t init_pid);
/* securer_payload_confine, then execve. */
__attribute__ ((noreturn)) void securer_payload_main (struct launch_plan *lp, pid_t init_pid);

/* ---- init.c ---------------------------------------------------------------- */
/* pid 1's last steps: forks the payload and becomes securer-init.  Returns
 * only in the payload, with *init_pid the pid of its parent (as the payload
 * sees it) and lp->gate_fd its gate. */
void securer_init_fork_payload (struct launch_plan *lp, pid_t *init_pid);
/* The namespaces pid 1 makes after clone3, beside the payload's mounts,
 * and the payload joins (CLONE_NEWNET, CLONE_NEWIPC as the policy has them). */
int launch_late_namespaces (const struct securer_policy *p);
/* The payload's part of a cold launch: the filesystem view and the
 * hostname; a failure is reported on the setup socket and exits. */
void securer_init_build_view (struct launch_plan *lp);
/* The byte securer-init writes on the gate, and pid 1 on the ready pipe. */
#define LAUNCH_GATE_BYTE 'g'
/* Reads a gate: true when its byte came. */
bool launch_wait_byte (int fd);

/* ---- spawn.c: parent side, shared with template.c ------------------------ */
int launch_await_exec (struct securer_sandbox *sb, int sock, uint64_t timeout_ms, securer_err_t *err);
int launch_start_supervision (struct securer_sandbox *sb, uint64_t timeout_ms, securer_err_t *err);
bool launch_policy_can_kill (const struct securer_seccomp *sc);
int launch_sync_fd_number (const struct securer_policy *p, unsigned n_pass, int *out, securer_err_t *err);
int launch_open_init (int *out, securer_err_t *err);
void launch_abort_child (struct securer_sandbox *sb);
void launch_sandbox_destroy (struct securer_sandbox *sb);

/* ---- the handle (spawn.c; status.c reads it for the JSON record) ------- */
struct securer_sandbox {
  const struct securer_policy *p;   /* borrowed: must outlive the sandbox */
  pid_t init_pid;                   /* host pid of the sandbox's pid 1 */
  pid_t payload_pid;                /* host pid of the command, 0 if unknown */
  int pidfd, epfd, timerfd, notify_fd, status_sock;
  struct securer_cgroup *cg;
  char *cg_report;
  struct host_id_lease host_ids;    /* this sandbox's own host uid/gid, if leased */
  uint32_t host_uid;                /* the host uid its processes run as */
  struct securer_seccomp_prog *prog;
  struct securer_landlock_report ll;
  bool ll_known;                    /* the payload sent its landlock report */
  uint64_t start_ns;
  bool finished;
  enum securer_kill_reason reason;
  enum securer_limit_hit limit;     /* with reason SECURER_KILL_LIMIT, when known before the end */
  char *detail;                     /* e.g. denied syscall's name */
  void (*on_syscall) (void *ctx, const struct securer_syscall_event *ev);
  void *on_syscall_ctx;
  struct securer_status final;
  bool foreign;                     /* a session of a template: init_pid is not our child */
  bool prog_borrowed;               /* prog belongs to the template */
  bool status_early;                /* finished on securer-init's report (return_before_teardown) */
  bool teardown_pending;            /* finished, and pid 1 not reaped yet */
  struct securer_netproxy *proxy;   /* network allow: the proxy serving it, or NULL */
  void (*on_net) (void *ctx, const struct securer_net_event *ev);
  void *on_net_ctx;
};

uint64_t launch_now_ns (void);

#endif
