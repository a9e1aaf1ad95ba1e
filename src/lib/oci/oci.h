/* Internal interface of the OCI area: an OCI runtime-spec bundle
 * (config.json) read into one structure, the container set up from it
 * (runs in the container's first process, before exec), its cgroups, and
 * the state a runc-compatible CLI keeps between create, start and delete.
 *
 * Every field of config.json is either translated here or refused with its
 * name: nothing the spec asks for is silently dropped (docs/oci.md). */
#ifndef SECURER_OCI_H
#define SECURER_OCI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "securer/error.h"
#include "securer/policy.h"

/* ---- spec.c: config.json ---------------------------------------------- */
struct oci_mount {
  char *dest;              /* absolute path inside the container */
  char *type;              /* "bind", "tmpfs", "proc", ... */
  char *source;
  unsigned long flags;     /* MS_* from the options */
  unsigned long clear;     /* MS_* explicitly cleared ("rw", "suid", ...) */
  unsigned long propagation;  /* MS_PRIVATE/MS_SHARED/... (| MS_REC) or 0 */
  bool bind, recursive;
  bool copyup;             /* tmpcopyup: the tmpfs starts with what it covers */
  char *data;              /* the other options, comma-separated, or NULL */
};

enum oci_ns_type { OCI_NS_PID, OCI_NS_NET, OCI_NS_IPC, OCI_NS_UTS, OCI_NS_MNT,
                   OCI_NS_USER, OCI_NS_CGROUP, OCI_NS_COUNT };

struct oci_idmap {
  uint32_t inside, outside, size;
};

struct oci_device {
  char *path;
  char type;               /* 'c', 'b', 'p' (or 'u' = 'c') */
  int64_t major, minor;
  uint32_t mode;           /* fileMode, default 0666 */
  uint32_t uid, gid;
};

struct oci_devrule {       /* linux.resources.devices */
  bool allow;
  char type;               /* 'a', 'c', 'b' */
  int64_t major, minor;    /* -1 = any */
  char access[4];
};

struct oci_hook {
  char *path;
  char **args;             /* NULL-terminated, may be NULL */
  char **env;
  int timeout;             /* seconds, 0 = none */
};

enum oci_hook_kind { OCI_HOOK_PRESTART, OCI_HOOK_CREATE_RUNTIME, OCI_HOOK_CREATE_CONTAINER,
                     OCI_HOOK_START_CONTAINER, OCI_HOOK_POSTSTART, OCI_HOOK_POSTSTOP,
                     OCI_HOOK_COUNT };

struct oci_rlimit {
  int resource;
  rlim_t soft, hard;
};

struct oci_process {
  bool terminal;
  unsigned short rows, cols;   /* consoleSize; 0 = leave as is */
  char **args;             /* NULL-terminated */
  char **env;              /* NULL-terminated */
  char *cwd;
  uint32_t uid, gid;
  bool has_umask;
  mode_t umask;
  gid_t *groups;
  size_t n_groups;
  /* capability sets as bit masks (bit N = capability N) */
  uint64_t cap_bounding, cap_effective, cap_permitted, cap_inheritable, cap_ambient;
  /* Ambient capabilities of the spec left out because the kernel raises
   * only what is both permitted and inheritable (runc skips them too);
   * the caller warns. */
  uint64_t cap_ambient_unraisable;
  bool no_new_privs;
  struct oci_rlimit *rlimits;
  size_t n_rlimits;
  bool has_oom_score_adj;
  int oom_score_adj;
  unsigned preserve_fds;   /* runtime option: fds 3.. kept open across exec */
};

struct oci_spec {
  json_t *json;            /* the parsed config.json (owned) */
  char *bundle;            /* absolute */
  char *rootfs;            /* absolute */
  bool root_readonly;
  char *hostname;
  struct oci_process proc;
  struct oci_mount *mounts;
  size_t n_mounts;
  /* namespaces: wanted[t] = new or joined; path[t] = join that one */
  bool ns_wanted[OCI_NS_COUNT];
  char *ns_path[OCI_NS_COUNT];
  struct oci_idmap *uid_maps, *gid_maps;
  size_t n_uid_maps, n_gid_maps;
  char **masked, **readonly;
  size_t n_masked, n_readonly;
  struct oci_device *devices;
  size_t n_devices;
  char **sysctl_keys, **sysctl_values;
  size_t n_sysctl;
  unsigned long rootfs_propagation;
  /* linux.resources */
  char *cgroups_path;
  struct oci_devrule *devrules;
  size_t n_devrules;
  int64_t mem_limit, mem_reservation, mem_swap;  /* -2 = unset */
  int64_t mem_swappiness;                        /* -1 = unset */
  bool mem_disable_oom_killer;
  int64_t pids_limit;                            /* 0 = unset */
  uint64_t cpu_shares, cpu_period;
  int64_t cpu_quota;                             /* 0 = unset */
  char *cpuset_cpus, *cpuset_mems;
  /* linux.seccomp as securer policy text (the importer's output), or NULL */
  char *seccomp_text;
  /* The highest native syscall number the profile names, when calls past
   * it are to fail with ENOSYS rather than get the default action (as with
   * runc and crun: a profile older than the libc must not make the libc's
   * probes of newer calls, clone3, close_range, faccessat2..., look like
   * refusals); -1 for none (no filter, or a permissive or ENOSYS default). */
  int seccomp_last_syscall;
  struct oci_hook *hooks[OCI_HOOK_COUNT];
  size_t n_hooks[OCI_HOOK_COUNT];
  /* run.securer.* annotations */
  char *securer_policy;    /* run.securer.policy: a policy layered on top */
  char *report_denials;    /* run.securer.report-denials: JSON-lines log path */
  char *network_allow;     /* run.securer.network-allow: `network allow` words */
  /* What is accepted without effect, as runc does (the kernel dropped
   * it): one line each, for create to print. */
  char **warnings;
  size_t n_warnings;
};

/* run.securer.network-allow: the policy the proxy decides with (a net
 * namespace, the annotation's words), checked against the spec: the
 * container needs a network namespace of its own. */
int oci_network_policy (const struct oci_spec *s, struct securer_policy **out, securer_err_t *err);
/* The proxy's environment added to process.env (http_proxy, ...). */
int oci_network_env (struct oci_spec *s, securer_err_t *err);
/* Starts the proxy beside the container: detached (own session, stdio on
 * /dev/null), it takes the listening socket the container's init sends
 * on sock, serves it, and ends when the process pidfd refers to does. */
int oci_netproxy_start (const struct securer_policy *p, int sock, int pidfd, securer_err_t *err);
/* A process beside the container, detached from the runtime (double
 * fork, own session, stdio on /dev/null, every descriptor closed but
 * keep_a and keep_b) that neither the runtime's caller nor the engine
 * waits for: returns 0 in it, 1 in the caller once it is on its own, -1
 * on failure. */
int oci_detach (int keep_a, int keep_b, securer_err_t *err);
/* Container side: listens on the proxy's port in the current network
 * namespace and sends the socket on sock. */
int oci_netproxy_listen (int sock, securer_err_t *err);

/* Reads BUNDLE/config.json.  Fields that securer cannot honour are refused
 * with their name (status 125). */
int oci_spec_load (const char *bundle, struct oci_spec **out, securer_err_t *err);
/* The same from a config.json path (bundle = its directory). */
int oci_spec_load_file (const char *config_path, struct oci_spec **out, securer_err_t *err);
/* The copy of config.json that create keeps in the state directory
 * (bundle: the container's bundle directory, for relative paths).  exec,
 * start and delete read this one: a bundle's config.json changed after
 * create changes nothing of a container. */
int oci_spec_load_saved (const char *config_path, const char *bundle, struct oci_spec **out,
                         securer_err_t *err);
/* Reads a LinuxResources object alone (what `update` is given) into a spec
 * of its own in which only the resource fields and warnings are set; a
 * field left out stays unset, and so unchanged by oci_cgroup_update. */
int oci_resources_parse (json_t *r, struct oci_spec **out, securer_err_t *err);
/* Whether two specs have the same linux.resources.devices rules. */
bool oci_devrules_equal (const struct oci_spec *a, const struct oci_spec *b);
/* Reads a process object alone (runc exec --process FILE) into *proc. */
int oci_process_parse (json_t *j, const char *where, struct oci_process *proc, securer_err_t *err);
void oci_process_clear (struct oci_process *p);
/* The warning for cap_ambient_unraisable (malloc'd), or NULL. */
char *oci_process_warning (const struct oci_process *p, const char *where);
void oci_spec_free (struct oci_spec *s);
const char *oci_ns_name (enum oci_ns_type t);
/* The securer policy the spec amounts to, as far as the policy model can
 * say it (seccomp, namespaces, identity, mounts, limits), for `policy show`. */
int oci_spec_to_policy (const struct oci_spec *s, struct securer_policy **out, securer_err_t *err);
/* What the policy model cannot say, as "# ..." lines (malloc'd). */
char *oci_spec_extra_text (const struct oci_spec *s);
/* The policy whose seccomp section is the spec's linux.seccomp (layered
 * with run.securer.policy), or *out = NULL when there is no filter. */
int oci_spec_seccomp_policy (const struct oci_spec *s, struct securer_policy **out, securer_err_t *err);
/* Compiles and generates that filter (NULL policy: *out = NULL). */
struct securer_seccomp_prog;
int oci_seccomp_prepare (const struct securer_policy *p, struct securer_seccomp_prog **out,
                         securer_err_t *err);
/* The same with securer's denial reports: kills and the like go through
 * user notification; the container process hands the listener over
 * sendmsg on notify_fd (the only extra call the filter allows). */
int oci_seccomp_prepare_reporting (const struct securer_policy *p, int notify_fd,
                                   struct securer_seccomp_prog **out, securer_err_t *err);

/* ---- devices.c ----------------------------------------------------------- */
/* The device rules a container gets: the spec's, then the default nodes
 * and linux.devices (malloc'd, *n set); last match wins, default deny. */
struct oci_devrule *oci_devrules_effective (const struct oci_spec *s, size_t *n);
/* One rule as v1's devices.allow/deny take it. */
int oci_devrule_v1 (const struct oci_devrule *d, char *buf, size_t len);
/* The rules as a BPF_PROG_TYPE_CGROUP_DEVICE program attached to a cgroup
 * v2 directory (BPF_F_ALLOW_MULTI: it adds to what the parents enforce). */
int oci_devices_bpf_attach (const char *cgroup_dir, const struct oci_devrule *rules, size_t n,
                            securer_err_t *err);

/* ---- cgroup.c ------------------------------------------------------------ */
struct oci_cgroup;
/* Resolves cgroupsPath on this host's hierarchies (v1, v2 or both) and
 * creates the directories with linux.resources applied. */
int oci_cgroup_create (const struct oci_spec *s, bool systemd, const char *id,
                       struct oci_cgroup **out, securer_err_t *err);
int oci_cgroup_add_pid (struct oci_cgroup *cg, pid_t pid, securer_err_t *err);
/* Directories as stored in the state file (a JSON array of strings). */
json_t *oci_cgroup_to_json (const struct oci_cgroup *cg);
struct oci_cgroup *oci_cgroup_from_json (json_t *a);
/* Every pid in the container's cgroup; malloc'd, *n set. */
pid_t *oci_cgroup_pids (const struct oci_cgroup *cg, size_t *n);
/* Freezes (true) or thaws the container's processes: v1 freezer.state or
 * v2 cgroup.freeze. */
int oci_cgroup_freeze (const struct oci_cgroup *cg, bool freeze, securer_err_t *err);
bool oci_cgroup_frozen (const struct oci_cgroup *cg);
/* Writes the resources set in res (from oci_resources_parse) to a running
 * container's cgroup; devices are not among them (see cmd_update). */
int oci_cgroup_update (const struct oci_cgroup *cg, const struct oci_spec *res, securer_err_t *err);
/* Removes the directories (waiting briefly for exiting processes). */
int oci_cgroup_destroy (struct oci_cgroup *cg, securer_err_t *err);
void oci_cgroup_free (struct oci_cgroup *cg);
/* Joins the calling process to cg (exec). */
int oci_cgroup_join_self (const struct oci_cgroup *cg, securer_err_t *err);
/* The host path of this container's cgroup in each hierarchy, keyed by
 * the hierarchy's mount point (for the "cgroup" mount type). */
/* Writes text to an existing file (cgroup and /proc files). */
int oci_write_file (const char *path, const char *text, securer_err_t *err);
size_t oci_cgroup_count (const struct oci_cgroup *cg);
const char *oci_cgroup_dir (const struct oci_cgroup *cg, size_t i);

/* ---- layer.c: run.securer.policy ----------------------------------------- */
/* A securer policy layered on a container: its Landlock rules (derived from
 * its mounts and exec list, as paths inside the container) and its seccomp
 * filter (a second filter: the stricter verdict wins).  It implies
 * no_new_privs, as every securer sandbox has. */
struct oci_layer {
  struct securer_policy *policy;
  struct securer_seccomp_prog *seccomp;
};
int oci_layer_load (const char *name_or_path, struct oci_layer **out, securer_err_t *err);
/* In the container's process, before the identity change. */
int oci_layer_landlock (const struct oci_layer *l, securer_err_t *err);
void oci_layer_free (struct oci_layer *l);

/* ---- container.c: the container's first process ------------------------ */
struct oci_launch {
  const char *id;
  const struct oci_spec *spec;
  const struct oci_cgroup *cg;
  int console_fd;          /* connected console socket, or -1 */
  int fifo_fd;             /* exec fifo opened O_RDWR (create), or -1 (run) */
  const struct securer_seccomp_prog *seccomp;  /* NULL: no filter */
  int seccomp_last_syscall;  /* oci_spec's: ENOSYS past it, or -1 */
  const struct oci_layer *layer;  /* run.securer.policy, or NULL */
  int notify_fd;           /* report-denials: where the listener goes, or -1 */
  int proxy_fd;            /* network-allow: where the proxy's listening socket goes, or -1 */
  bool keep_keyring;       /* --no-new-keyring: stay in the caller's session keyring */
};
/* Sets up mounts, devices, hostname, sysctls and the process, and waits on
 * the exec fifo; calls ready(ctx) once only exec remains.  Returns only on
 * failure (the error says which step). */
int oci_container_init (const struct oci_launch *l, void (*ready) (void *ctx), void *ctx,
                        securer_err_t *err);
/* The process part alone (exec into a running container): identity,
 * capabilities, rlimits, seccomp, then execve. */
int oci_process_exec (const struct oci_process *p, const struct securer_seccomp_prog *seccomp,
                      int seccomp_last_syscall, const struct oci_layer *layer, int console_fd,
                      securer_err_t *err);

/* Writes process.oomScoreAdj for pid (0: the caller; a pid of another
 * pid namespace than the caller's /proc would name someone else).  From the runtime's side, in the
 * host's user namespace: the setup runs non-dumpable, so the process's
 * own /proc files belong to the host's root, which a container root in a
 * user namespace cannot write. */
int oci_oom_score_adj (pid_t pid, const struct oci_process *p, securer_err_t *err);

/* Joins a new anonymous session keyring: keyrings are not namespaced, and
 * the caller's (the engine's, the host root's) must not be the
 * container's. */
int oci_new_session_keyring (securer_err_t *err);

/* ---- launch.c ------------------------------------------------------------ */
/* Clones the container's first process, writes its id maps, adds it to cg,
 * runs the prestart/createRuntime hooks (id given) and waits until it is
 * ready to exec (or failed: its error is returned).  *start_time is read
 * before it is released, so that a process that execs and exits at once
 * (run) is still told apart from a later one with the same pid. */
int oci_launch_container (const struct oci_launch *l, struct oci_cgroup *cg, const char *id,
                          pid_t *pid_out, uint64_t *start_time, securer_err_t *err);
struct oci_exec_opts {
  pid_t container_pid;
  uint64_t start_time;     /* of container_pid, as saved in the state */
  const struct oci_cgroup *cg;
  const struct oci_process *proc;
  const struct securer_seccomp_prog *seccomp;
  int seccomp_last_syscall;
  const struct oci_layer *layer;
  int console_fd;
};
/* Forks a process into the container's namespaces and cgroup and execs
 * proc there; returns once it has exec'd (or failed). */
int oci_launch_exec (const struct oci_exec_opts *o, pid_t *pid_out, securer_err_t *err);

/* ---- report.c: run.securer.report-denials ------------------------------ */
/* Starts the reporter: a process of its own (not a child the engine
 * waits for) that receives the container's seccomp listener on sock,
 * answers every notification as the profile says, appends one JSON line
 * per event to log_path, and on a kill verdict kills the calling process.
 * It exits when the container's last filtered process is gone. */
int oci_reporter_start (const struct securer_seccomp_prog *prog, int sock, const char *log_path,
                        const char *id, securer_err_t *err);

/* ---- state.c ------------------------------------------------------------- */
enum oci_status { OCI_CREATING, OCI_CREATED, OCI_RUNNING, OCI_STOPPED, OCI_PAUSED };
struct oci_state {
  char *id;
  char *dir;               /* ROOT/ID */
  char *bundle;
  pid_t pid;
  uint64_t start_time;     /* /proc/PID/stat field 22, against pid reuse */
  char *created;           /* RFC 3339 */
  json_t *annotations;
  struct oci_cgroup *cg;
};
/* Validates an id (no '/', not "." or "..", printable). */
int oci_id_check (const char *id, securer_err_t *err);
/* Refuses a state root (or a directory above it) that another user owns
 * or that others may write to. */
int oci_root_check (const char *root, securer_err_t *err);
int oci_state_save (const struct oci_state *st, securer_err_t *err);
int oci_state_load (const char *root, const char *id, struct oci_state **out, securer_err_t *err);
enum oci_status oci_state_status (const struct oci_state *st);
const char *oci_status_name (enum oci_status s);
/* The OCI state object (ociVersion, id, status, pid, bundle, annotations). */
json_t *oci_state_json (const struct oci_state *st);
void oci_state_free (struct oci_state *st);
uint64_t oci_proc_start_time (pid_t pid);
/* The same while the process is still waiting for its go (it cannot have
 * exited yet); 0 on error. */
uint64_t oci_proc_start_time_any (pid_t pid);
/* Runs the hooks of one kind with the state JSON on their stdin. */
int oci_hooks_run (const struct oci_spec *s, enum oci_hook_kind k, const char *state_json,
                   securer_err_t *err);

/* ---- selfexe.c ------------------------------------------------------------ */
/* Before a command starts container processes: re-executes argv from a
 * sealed memfd copy of the runtime (returns only on failure or once
 * running from one), then makes the process non-dumpable. */
int oci_self_protect (char **argv, securer_err_t *err);
bool oci_self_is_sealed (void);

#endif
