/* Internal interface of the seccomp area: syscall groups, symbolic
 * constants and syscall names (used by the policy resolver), and the
 * compiler from a resolved policy to a libseccomp filter (used by the
 * launcher and `securer policy compile`). */
#ifndef SECURER_SECCOMP_H
#define SECURER_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/filter.h>

#include "securer/error.h"
#include "securer/policy.h"

/* ---- names: groups, constants, syscalls (names.c / groups.c / constants.c) ---- */

/* Loads group `name` (without '@') from seccomp/<name>.syscalls in the data
 * path, expanding nested @groups (cycles are errors).  *members is a
 * malloc'd array of malloc'd syscall names, sorted and de-duplicated, and
 * NULL-terminated (free with securer_strv_free).  Entries marked "?name" in
 * a group file are included only when this libseccomp knows them; "known"
 * is built in: every syscall libseccomp can name.  Errors carry file:line. */
int securer_group_load (const char *name, char ***members, size_t *n_members, securer_err_t *err);
/* The same, handing every problem found in a group file (unknown syscall
 * or group, malformed line, cycle) to report with its place (1-based line
 * and column) and a "did you mean" hint or NULL, before failing. */
typedef void (*securer_group_report_fn) (void *ctx, const char *file, unsigned line, unsigned col,
                                         const char *hint, const char *message);
int securer_group_load_report (const char *name, char ***members, size_t *n_members,
                               securer_group_report_fn report, void *ctx, securer_err_t *err);
/* Where syscall first appears in group (nested groups included): *path
 * (malloc'd) and *line; *path is NULL when it is not a member, or comes
 * from the built-in @known. */
int securer_group_locate (const char *group, const char *syscall, char **path, unsigned *line,
                          securer_err_t *err);
/* Whether name (without '@') may name a group file: lower-case letters,
 * digits, '-' and '_', at most 64 of them. */
bool securer_group_name_valid (const char *name);
/* NULL-terminated malloc'd list of every group name available (without '@'). */
char **securer_group_names (void);
void securer_strv_free (char **v);

/* Symbolic constants for argument conditions (AF_UNIX, TIOCSTI,
 * CLONE_NEWUSER, O_WRONLY, PROT_EXEC, ...).  Returns 0 and sets *value, or
 * -1 when unknown. */
int securer_const_lookup (const char *name, uint64_t *value);
/* Every constant name, NULL-terminated, static storage (for suggestions). */
const char *const *securer_const_names (void);

/* errno names (EPERM, ENOSYS, ...) <-> numbers. */
int securer_errno_lookup (const char *name, int *value);
const char *securer_errno_name (int value);
/* Every errno name, NULL-terminated, static storage (for suggestions). */
const char *const *securer_errno_names (void);

/* True when libseccomp knows `name` as a syscall on the native arch
 * (pseudo-syscalls that exist only on other arches also count). */
bool securer_syscall_known (const char *name);
/* Every syscall name libseccomp knows for the native arch, NULL-terminated,
 * malloc'd (for suggestions). */
char **securer_syscall_names (void);

/* ---- compile.c ---- */
/* Meaning of the seccomp section (docs/seccomp.md has the long form):
 *
 *  - The rules of one syscall are at most one unconditional rule plus
 *    conditional rules in policy order.  The first conditional rule whose
 *    conditions all hold decides; else the unconditional rule; else the
 *    default action.  The compiler turns this into disjoint libseccomp rules
 *    (libseccomp itself neither keeps order nor keeps a conditional rule
 *    next to an unconditional one), so the filter means exactly this.
 *  - Arguments the kernel reads as 32-bit (ioctl request, socket domain,
 *    fds, flags declared int ...) are compared on their low 32 bits only,
 *    so ioctl(fd, TIOCSTI | 1ul << 32) is TIOCSTI to the filter as it is to
 *    the kernel.  Ordering comparisons (< <= > >=) are unsigned.
 *  - Syscalls of other ABIs (i386 via int 0x80, x32 on x86_64) get the
 *    policy's foreign_arch action; syscalls unknown to the policy (and to
 *    this libseccomp) get the default action.
 *  - Names of syscalls that do not exist on this arch (chown32 on x86_64)
 *    are accepted and have no effect. */
struct securer_seccomp_prog;

enum {
  /* Route kill-process/kill-thread denials (rules, default action and
   * foreign_arch) and `notify` rules through seccomp user notification so
   * the supervisor can name the syscall.  The compiled filter then also
   * allows sendmsg(notify_send_fd, ...) and nothing else extra, so that the
   * payload can hand the listener to its supervisor right after loading
   * (securer_seccomp_send_listener) before execve.  The launcher should
   * number that socket at or above the payload's RLIMIT_NOFILE hard limit
   * (the fd exists before the limit is lowered), so that once exec has
   * closed it (CLOEXEC) the sandboxed program can never own an fd with that
   * number.  Without kernel support for user notification (or for
   * SECCOMP_USER_NOTIF_FLAG_CONTINUE) the flag is ignored: kills stay
   * in-kernel kills, `notify` rules become `log`, and load hands back -1. */
  SECURER_SECCOMP_REPORT_DENIALS = 1u << 0,
  /* Check the rules and decide the program's shape, but leave the
   * libseccomp work (rules, BPF generation: most of the cost) to
   * securer_seccomp_generate, so a launcher can do it while the sandbox is
   * being set up.  Until then the program can be evaluated but not loaded
   * or exported. */
  SECURER_SECCOMP_DEFER_BPF = 1u << 1,
  /* Take the generated program from the cache of programs (cache.c) when
   * it holds this one, checked, and store it there after generating it.
   * The program then has no libseccomp context: it can be loaded, sent and
   * emulated, not exported with securer_seccomp_export_bpf/pfc. */
  SECURER_SECCOMP_CACHE = 1u << 2,
};

/* Compiles the policy's seccomp section.  Errors name the rule (file:line).
 * notify_send_fd is only used with REPORT_DENIALS (pass -1 otherwise).
 * When the policy disables seccomp, *out is a program that loads nothing. */
int securer_seccomp_compile (const struct securer_policy *p, unsigned flags, int notify_send_fd,
                             struct securer_seccomp_prog **out, securer_err_t *err);
/* Builds the filter with libseccomp and generates its BPF program (no-op
 * when already done).  p is the policy it was compiled from (for messages). */
int securer_seccomp_generate (struct securer_seccomp_prog *prog, const struct securer_policy *p,
                              securer_err_t *err);
int securer_seccomp_export_bpf (const struct securer_seccomp_prog *prog, int fd, securer_err_t *err);
int securer_seccomp_export_pfc (const struct securer_seccomp_prog *prog, int fd, securer_err_t *err);
/* Loads the filter into the calling thread (tsync).  NO_NEW_PRIVS must be
 * set already (refused otherwise).  *notify_fd receives the listener when
 * the program uses user notification, else -1. */
int securer_seccomp_load (struct securer_seccomp_prog *prog, int *notify_fd, securer_err_t *err);
/* The same load for a caller that must not allocate (the payload after its
 * rlimits are set): one prctl and one seccomp(2) call on the program
 * generated at compile time.  Returns 0 (*listener = the notification fd or
 * -1) or -errno; -EPERM when no_new_privs is not set. */
int securer_seccomp_install (const struct securer_seccomp_prog *prog, int *listener);
/* The generated program and its seccomp(2) flags, to hand to another
 * process (-1 when disabled or not generated); and the load of such a copy,
 * with the same contract as securer_seccomp_install. */
int securer_seccomp_bpf (const struct securer_seccomp_prog *prog, const struct sock_filter **insns,
                         unsigned *n_insns, unsigned long *flags);
int securer_seccomp_install_bpf (const struct sock_filter *insns, unsigned n_insns, unsigned long flags,
                                 int *listener);
void securer_seccomp_free (struct securer_seccomp_prog *prog);
/* False when the policy disables seccomp (the program loads nothing). */
bool securer_seccomp_enabled (const struct securer_seccomp_prog *prog);
/* True when the compiled program routes events through user notification
 * (REPORT_DENIALS was honoured or the policy has `notify` rules). */
bool securer_seccomp_uses_notify (const struct securer_seccomp_prog *prog);

/* What the policy means for one syscall as the kernel would present it:
 * the same first-match evaluation the filter implements (used by the
 * supervisor, by `policy learn`, and by tests to cross-check the filter).
 * `arch` is an AUDIT_ARCH_* value; nr may carry the x32 bit. */
struct securer_action securer_seccomp_eval (const struct securer_seccomp_prog *prog, uint32_t arch,
                                            int nr, const uint64_t args[6]);

/* The same evaluation, saying what decided: a rule of the policy (*rule is
 * its index in p->seccomp.rules; SIZE_MAX for an exception the compiler
 * added itself), the default action, the foreign-ABI action, or no filter
 * at all (the policy disables seccomp).  by and rule may be NULL. */
enum securer_decided_by {
  SECURER_BY_RULE,
  SECURER_BY_DEFAULT,
  SECURER_BY_FOREIGN_ABI,
  SECURER_BY_NO_FILTER,
};
struct securer_action securer_seccomp_decide (const struct securer_seccomp_prog *prog, uint32_t arch,
                                              int nr, const uint64_t args[6],
                                              enum securer_decided_by *by, size_t *rule);

/* The disjoint regions the compiler derived for syscall `name` (whose rules
 * were given in policy order): cb receives each region whose action is not
 * the default, as per-argument masked equalities ((arg & mask[k]) ==
 * value[k]; mask 0 = any).  Used to export rules to formats without rule
 * order (OCI).  The syscall must exist on the native arch. */
typedef int (*securer_region_cb) (void *ctx, struct securer_action act, const uint64_t mask[6],
                                  const uint64_t value[6]);
int securer_seccomp_regions (const struct securer_seccomp_prog *prog, const char *name,
                             securer_region_cb cb, void *ctx, securer_err_t *err);

/* ---- cache.c: generated programs kept across launches (content-addressed) ---- */
/* The cache directory as a descriptor, or -1 when there is none to trust:
 * SECURER_SECCOMP_CACHE=off (or 0, no) disables it, an absolute path names
 * it; else /var/cache/securer/seccomp for root, $XDG_CACHE_HOME/securer/
 * seccomp or ~/.cache/securer/seccomp for others.  Created 0700 when
 * missing; used only when owned by the effective uid with mode 0700. */
int securer_seccomp_cache_open (void);
/* 1 with *insns (malloc'd), *n and *flags when a file for key exists, is
 * the caller's alone and intact (its own key, SHA-256 of its contents);
 * else 0.  What the program means is for the caller to check. */
int securer_seccomp_cache_get (int dirfd, const unsigned char key[32], struct sock_filter **insns, unsigned *n,
                               uint64_t *flags);
/* Stores a program under key (written aside, renamed into place); best
 * effort, silent on failure. */
void securer_seccomp_cache_put (int dirfd, const unsigned char key[32], const struct sock_filter *insns,
                                unsigned n, uint64_t flags);
/* The same storage for opaque entries (textcache.c): 1 with *data
 * (malloc'd) and *len when the entry for key is the caller's alone and
 * intact, else 0; and its best-effort store. */
int securer_seccomp_cache_get_entry (int dirfd, const unsigned char key[32], unsigned char **data, size_t *len);
void securer_seccomp_cache_put_entry (int dirfd, const unsigned char key[32], const void *data, size_t len);

/* ---- textcache.c: whole compiled programs addressed by the rule text ---- */
/* The key of a launch whose policy still has its rule lines pending
 * (SECURER_POLICY_DEFER_SECCOMP): a SHA-256 of the lines' words, of every
 * group file they reach (name, the path the data search finds, contents),
 * of the policy's default and foreign-ABI actions, of the fd denials are
 * handed over on, and of securer's, libseccomp's and the kernel's part. */
struct securer_seccomp_textkey {
  bool valid;
  unsigned char key[32];
  unsigned char lines[32];   /* the part of the key from the rule lines */
  char **groups;             /* the @groups the lines name, in order */
  size_t n_groups;
};
/* 0, or -1 when the policy has nothing pending or a group file could not be
 * read (no key: the launch resolves its rules and stores nothing). */
int securer_seccomp_textkey_make (const struct securer_policy *p, int send_fd,
                                  struct securer_seccomp_textkey *tk);
void securer_seccomp_textkey_clear (struct securer_seccomp_textkey *tk);
/* 1 with *out, a program as securer_seccomp_compile + generate make it for
 * this policy (rules, actions, program and load flags), when the cache
 * holds an intact entry for the key; else 0. */
int securer_seccomp_text_get (int dirfd, const struct securer_seccomp_textkey *tk,
                              const struct securer_policy *p, int send_fd, struct securer_seccomp_prog **out);
/* Stores a program compiled and generated after a miss, when the group
 * files still hash as they did when the key was made. */
void securer_seccomp_text_put (int dirfd, const struct securer_seccomp_textkey *tk,
                               const struct securer_policy *p, int send_fd,
                               const struct securer_seccomp_prog *prog);

/* ---- emulate.c: the kernel's seccomp-BPF interpreter, in userspace ---- */
struct seccomp_data;

/* Runs a classic BPF seccomp program over d as the kernel does and sets
 * *ret to the SECCOMP_RET_* value it returns.  A program the kernel would
 * refuse (an instruction seccomp does not accept, a load outside struct
 * seccomp_data, a jump out of the program, ...) is an error. */
int securer_bpf_run (const struct sock_filter *insns, unsigned n, const struct seccomp_data *d,
                     uint32_t *ret, securer_err_t *err);
/* Checks every instruction of a program as the kernel does when it is
 * attached (allowed instructions, loads inside struct seccomp_data, jumps
 * inside the program, scratch memory written before it is read, a return
 * at the end of every path).  0, or -1 with the first problem. */
int securer_bpf_check (const struct sock_filter *insns, unsigned n, securer_err_t *err);
/* Whether the kernel's per-syscall action cache can hold "allow" for
 * (arch, nr) under this program: its own test (seccomp_is_const_allow),
 * in userspace. */
bool securer_bpf_const_allow (const struct sock_filter *insns, unsigned n, uint32_t arch, int nr);
/* The action a SECCOMP_RET_* value stands for; -1 for one securer never
 * generates (SECCOMP_RET_TRACE, unknown values). */
int securer_seccomp_ret_action (uint32_t ret, struct securer_action *out);
/* The verdict of the compiled program's BPF code for one call, as the
 * kernel would give it: arch is an AUDIT_ARCH_* value (0: native), nr may
 * carry the x32 bit.  The program must have been generated. */
int securer_seccomp_emulate (const struct securer_seccomp_prog *prog, uint32_t arch, int nr,
                             const uint64_t args[6], struct securer_action *out, securer_err_t *err);

/* ---- oci.c: OCI runtime-spec / Docker seccomp profiles ---- */
#include <jansson.h>

/* The policy's seccomp section as an OCI `linux.seccomp` object.  Rules of a
 * syscall that mean the same in an unordered rule set are exported as
 * written (32-bit arguments as SCMP_CMP_MASKED_EQ with 0xffffffff, so an OCI
 * runtime compares them as the kernel reads them); a syscall whose rules
 * depend on securer's first-match order is exported as the disjoint rules the
 * compiler derives, so any OCI runtime gets exactly the same filter. */
json_t *securer_seccomp_to_oci (const struct securer_policy *p, securer_err_t *err);

/* Reads an OCI / Docker seccomp profile and returns equivalent policy text
 * (`seccomp ...` lines, malloc'd).  `name` is used in messages. */
char *securer_seccomp_import_oci (const char *name, const char *text, size_t len, securer_err_t *err);

/* ---- notify.c: the two ends of REPORT_DENIALS ---- */

/* Payload side, right after securer_seccomp_load and before execve: sends
 * `listener` over the unix socket `sock` (SCM_RIGHTS; the only syscall used
 * is sendmsg on `sock`, which the filter allows when sock is the
 * notify_send_fd given to compile) and closes nothing. */
int securer_seccomp_send_listener (int sock, int listener, securer_err_t *err);
/* The same for a caller that must not allocate: 0 or -errno (-ETOOMANYREFS
 * when the sender's user has too many descriptors in flight already). */
int securer_seccomp_give_listener (int sock, int listener);
/* Payload side, what the launcher uses: offers the listener by its fd
 * number (sendmsg on `sock`) and waits for the supervisor's answer (recvmsg
 * on `sock`; both allowed by the filter): SECURER_LISTENER_TAKEN when it
 * took a copy with pidfd_getfd, SECURER_LISTENER_SEND when it could not and
 * wants it sent as above.  Allocates nothing; returns 0 or -errno. */
#define SECURER_LISTENER_TAKEN 'T'
#define SECURER_LISTENER_SEND 'S'
int securer_seccomp_offer_listener (int sock, int listener);
/* Supervisor side: receives the listener sent above (CLOEXEC). */
int securer_seccomp_recv_listener (int sock, int *listener, securer_err_t *err);

struct securer_seccomp_event {
  pid_t pid;                   /* thread that made the call (in the supervisor's pid ns) */
  uint32_t arch;               /* AUDIT_ARCH_* */
  int nr;
  char name[64];               /* syscall name, "nr 1234" when unknown, "x32:name"/"i386:name" for foreign ABIs */
  uint64_t args[6];
  struct securer_action action;  /* what the policy meant for this call */
  bool kill;                   /* the caller must kill the sandbox now */
};

/* Supervisor side: receives one notification on `listener` (call it when
 * the fd is readable) and answers it as the policy meant:
 *   - kill-process / kill-thread: no answer is sent, the calling thread stays
 *     blocked in the syscall, ev->kill is set: the caller must kill the
 *     sandbox (the syscall never runs and never returns);
 *   - notify / log / allow: the syscall continues (USER_NOTIF_FLAG_CONTINUE);
 *   - errno: answered with that errno.
 * Returns 1 with *ev filled, 0 when the notification vanished before it
 * could be answered (the caller died: nothing to do), -1 on error. */
int securer_seccomp_notify_handle (const struct securer_seccomp_prog *prog, int listener,
                                   struct securer_seccomp_event *ev, securer_err_t *err);

#endif
