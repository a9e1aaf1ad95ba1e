/* The seccomp compiler: every test loads the compiled filter into a forked
 * child (after PR_SET_NO_NEW_PRIVS), makes real syscalls there, and the
 * parent checks the exact outcome: the errno, SIGSYS death, the trap, or the
 * syscall's own result. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp/argwidth.h"
#include "seccomp/seccomp.h"

/* ---- building policies in code -------------------------------------------- */

#define MAX_RULES 64

struct pol {
  struct securer_policy p;
  struct securer_syscall_rule rules[MAX_RULES];
};

static struct securer_action
act (enum securer_action_type t, int e)
{
  return (struct securer_action) { t, e };
}
#define ALLOW act (SECURER_ACT_ALLOW, 0)
#define ERRNO(e) act (SECURER_ACT_ERRNO, e)
#define KILL act (SECURER_ACT_KILL_PROCESS, 0)
#define KILL_THREAD act (SECURER_ACT_KILL_THREAD, 0)
#define TRAP act (SECURER_ACT_TRAP, 0)
#define LOG act (SECURER_ACT_LOG, 0)
#define NOTIFY act (SECURER_ACT_NOTIFY, 0)

static void
pol_init (struct pol *x, struct securer_action def)
{
  memset (x, 0, sizeof *x);
  x->p.path = (char *) "test.policy";
  x->p.seccomp.enabled = true;
  x->p.seccomp.default_action = def;
  x->p.seccomp.foreign_arch = KILL;
  x->p.seccomp.rules = x->rules;
}

static struct securer_syscall_rule *
rule (struct pol *x, const char *name, struct securer_action a)
{
  cr_assert_lt (x->p.seccomp.n_rules, MAX_RULES);
  struct securer_syscall_rule *r = &x->rules[x->p.seccomp.n_rules++];
  r->name = (char *) name;
  r->action = a;
  r->loc.line = (unsigned) x->p.seccomp.n_rules + 10;
  return r;
}

static struct securer_syscall_rule *
cond (struct securer_syscall_rule *r, unsigned arg, enum securer_cmp op, uint64_t value, uint64_t mask)
{
  r->conds[r->n_conds++] = (struct securer_arg_cond) { arg, op, value, mask };
  return r;
}

/* Enough for a child to report and exit. */
static void
allow_exit (struct pol *x)
{
  rule (x, "exit_group", ALLOW);
  rule (x, "exit", ALLOW);
  rule (x, "write", ALLOW);
}

static struct securer_seccomp_prog *
compile_ok (struct pol *x, unsigned flags, int send_fd)
{
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  int rc = securer_seccomp_compile (&x->p, flags, send_fd, &prog, &err);
  cr_assert_eq (rc, 0, "compile: %s", err ? securer_error_message (err) : "");
  return prog;
}

static void
compile_fails (struct pol *x, int errnum, const char *needle)
{
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_seccomp_compile (&x->p, 0, -1, &prog, &err), -1);
  cr_assert_null (prog);
  cr_assert_eq (securer_error_errno (err), errnum, "%s", securer_error_message (err));
  cr_assert_not_null (strstr (securer_error_message (err), needle), "'%s' not in '%s'", needle,
                      securer_error_message (err));
  securer_error_free (&err);
}

/* ---- running a child under the filter -------------------------------------- */

typedef int (*child_fn) (void *);

/* Exit codes: 0..199 = what fn returned; 250 = load failed. */
static int
run (struct securer_seccomp_prog *prog, child_fn fn, void *arg)
{
  fflush (NULL);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      securer_err_t err = NULL;
      int lfd;
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || securer_seccomp_load (prog, &lfd, &err) < 0)
        {
          fprintf (stderr, "load: %s\n", err ? securer_error_message (err) : "prctl failed");
          _exit (250);
        }
      /* exit_group directly: a sanitizer runtime's _exit makes syscalls of
       * its own (sigaltstack, mmap) that the filter under test denies. */
      syscall (SYS_exit_group, fn (arg));
      _exit (251);
    }
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  return st;
}

static void
assert_exit (int st, int code)
{
  cr_assert (WIFEXITED (st), "child died of signal %d", WIFSIGNALED (st) ? WTERMSIG (st) : 0);
  cr_assert_eq (WEXITSTATUS (st), code, "child exit %d, expected %d", WEXITSTATUS (st), code);
}

static void
assert_sigsys (int st)
{
  cr_assert (WIFSIGNALED (st), "child exited %d instead of dying", WIFEXITED (st) ? WEXITSTATUS (st) : -1);
  cr_assert_eq (WTERMSIG (st), SIGSYS);
}

/* errno of a raw syscall, 0 on success; always < 200. */
static int
err_of (long ret)
{
  return ret < 0 ? errno : 0;
}

struct call {
  long nr;
  uint64_t a[6];
};

static int
do_call (void *p)
{
  struct call *c = p;
  return err_of (syscall (c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]));
}

static int
outcome (struct securer_seccomp_prog *prog, long nr, uint64_t a0, uint64_t a1, uint64_t a2)
{
  struct call c = { nr, { a0, a1, a2, 0, 0, 0 } };
  return run (prog, do_call, &c);
}

/* ---- ioctl: conditional denial next to an unconditional allow --------------- */

Test (compile, allow_plus_conditional_deny_keeps_both)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  struct pol x;
  pol_init (&x, ERRNO (ENOSYS));
  allow_exit (&x);
  rule (&x, "ioctl", ALLOW);
  cond (rule (&x, "ioctl", ERRNO (EPERM)), 1, SECURER_CMP_EQ, TIOCSTI, 0);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  char ch = 'x';
  /* Denied: TIOCSTI, also with garbage in the upper 32 bits of the request. */
  assert_exit (outcome (prog, SYS_ioctl, (uint64_t) p[0], TIOCSTI, (uint64_t) (uintptr_t) &ch), EPERM);
  assert_exit (outcome (prog, SYS_ioctl, (uint64_t) p[0], TIOCSTI | (1ull << 32), (uint64_t) (uintptr_t) &ch), EPERM);
  assert_exit (outcome (prog, SYS_ioctl, (uint64_t) p[0], TIOCSTI | 0xffffffff00000000ull, (uint64_t) (uintptr_t) &ch), EPERM);
  /* Allowed: other requests reach the kernel (FIONREAD works on a pipe,
   * TCGETS on a pipe is the kernel's own ENOTTY). */
  int n;
  assert_exit (outcome (prog, SYS_ioctl, (uint64_t) p[0], FIONREAD, (uint64_t) (uintptr_t) &n), 0);
  assert_exit (outcome (prog, SYS_ioctl, (uint64_t) p[0], TCGETS, (uint64_t) (uintptr_t) &n), ENOTTY);
  /* Unlisted syscalls get the default. */
  assert_exit (outcome (prog, SYS_getppid, 0, 0, 0), ENOSYS);
  securer_seccomp_free (prog);
  close (p[0]);
  close (p[1]);
}

Test (compile, conditional_deny_before_or_after_the_allow_means_the_same)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  struct pol x;
  pol_init (&x, ERRNO (ENOSYS));
  allow_exit (&x);
  cond (rule (&x, "ioctl", ERRNO (EPERM)), 1, SECURER_CMP_EQ, TIOCSTI, 0);
  cond (rule (&x, "ioctl", ERRNO (EACCES)), 1, SECURER_CMP_EQ, TIOCLINUX, 0);
  rule (&x, "ioctl", ALLOW);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  int n;
  assert_exit (outcome (prog, SYS_ioctl, (uint64_t) p[0], TIOCSTI, 0), EPERM);
  assert_exit (outcome (prog, SYS_ioctl, (uint64_t) p[0], TIOCLINUX | (1ull << 40), 0), EACCES);
  assert_exit (outcome (prog, SYS_ioctl, (uint64_t) p[0], FIONREAD, (uint64_t) (uintptr_t) &n), 0);
  securer_seccomp_free (prog);
  close (p[0]);
  close (p[1]);
}

/* The socket rules of the containers profile Debian ships with podman: the
 * complements of two exact values used to multiply into thousands of cases. */
Test (compile, deny_when_both_else_allow_in_three_rules)
{
  struct pol x;
  pol_init (&x, ERRNO (ENOSYS));
  allow_exit (&x);
  rule (&x, "close", ALLOW);
  cond (cond (rule (&x, "socket", ERRNO (EINVAL)), 0, SECURER_CMP_EQ, AF_NETLINK, 0), 2, SECURER_CMP_EQ, 9, 0);
  cond (rule (&x, "socket", ALLOW), 2, SECURER_CMP_NE, 9, 0);
  cond (rule (&x, "socket", ALLOW), 0, SECURER_CMP_NE, AF_NETLINK, 0);
  /* the profile's includes repeat the second rule */
  cond (rule (&x, "socket", ALLOW), 2, SECURER_CMP_NE, 9, 0);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  const struct sock_filter *insns;
  unsigned n_insns;
  unsigned long flags;
  cr_assert_eq (securer_seccomp_bpf (prog, &insns, &n_insns, &flags), 0);
  cr_assert_lt (n_insns, 1024u, "%u instructions", n_insns);
  /* NETLINK_AUDIT (9) is refused, also with garbage above the 32-bit ints. */
  assert_exit (outcome (prog, SYS_socket, AF_NETLINK, SOCK_RAW, 9), EINVAL);
  assert_exit (outcome (prog, SYS_socket, AF_NETLINK | (1ull << 32), SOCK_RAW, 9 | (7ull << 32)), EINVAL);
  /* every other socket reaches the kernel */
  assert_exit (outcome (prog, SYS_socket, AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */), 0);
  assert_exit (outcome (prog, SYS_socket, AF_UNIX, SOCK_STREAM, 0), 0);
  assert_exit (outcome (prog, SYS_socket, AF_UNIX, SOCK_STREAM, 9), EPROTONOSUPPORT);
  assert_exit (outcome (prog, SYS_getppid, 0, 0, 0), ENOSYS);
  securer_seccomp_free (prog);
}

Test (compile, repeated_unconditional_rule_is_one_rule)
{
  struct pol x;
  pol_init (&x, ERRNO (ENOSYS));
  allow_exit (&x);
  rule (&x, "getppid", ERRNO (EPERM));
  rule (&x, "getppid", ERRNO (EPERM));
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_getppid, 0, 0, 0), EPERM);
  securer_seccomp_free (prog);
}

Test (compile, first_matching_conditional_rule_decides)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  int fd = p[0], other = p[1];
  int n;
  for (int order = 0; order < 2; order++)
    {
      struct pol x;
      pol_init (&x, ERRNO (ENOSYS));
      allow_exit (&x);
      if (order == 0)
        {
          cond (rule (&x, "ioctl", ERRNO (EPERM)), 1, SECURER_CMP_EQ, FIONREAD, 0);
          cond (rule (&x, "ioctl", ERRNO (EACCES)), 0, SECURER_CMP_EQ, (uint64_t) fd, 0);
        }
      else
        {
          cond (rule (&x, "ioctl", ERRNO (EACCES)), 0, SECURER_CMP_EQ, (uint64_t) fd, 0);
          cond (rule (&x, "ioctl", ERRNO (EPERM)), 1, SECURER_CMP_EQ, FIONREAD, 0);
        }
      rule (&x, "ioctl", ALLOW);
      struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
      /* Both rules match: the earlier one wins. */
      assert_exit (outcome (prog, SYS_ioctl, (uint64_t) fd, FIONREAD, (uint64_t) (uintptr_t) &n),
                   order == 0 ? EPERM : EACCES);
      /* Only one matches. */
      assert_exit (outcome (prog, SYS_ioctl, (uint64_t) other, FIONREAD, (uint64_t) (uintptr_t) &n), EPERM);
      assert_exit (outcome (prog, SYS_ioctl, (uint64_t) fd, TCGETS, (uint64_t) (uintptr_t) &n), EACCES);
      /* Neither: the unconditional rule. */
      assert_exit (outcome (prog, SYS_ioctl, (uint64_t) other, TCGETS, (uint64_t) (uintptr_t) &n), ENOTTY);
      securer_seccomp_free (prog);
    }
  close (p[0]);
  close (p[1]);
}

Test (compile, conditional_allow_under_default_and_unconditional_kill)
{
  struct pol x;
  pol_init (&x, ERRNO (ENOSYS));
  allow_exit (&x);
  cond (rule (&x, "socket", ALLOW), 0, SECURER_CMP_EQ, AF_UNIX, 0);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_socket, AF_UNIX, SOCK_STREAM, 0), 0);
  assert_exit (outcome (prog, SYS_socket, AF_INET, SOCK_STREAM, 0), ENOSYS);
  /* The kernel reads the domain as int: AF_UNIX | 1 << 32 is AF_UNIX. */
  assert_exit (outcome (prog, SYS_socket, AF_UNIX | (1ull << 32), SOCK_STREAM, 0), 0);
  securer_seccomp_free (prog);

  pol_init (&x, ERRNO (ENOSYS));
  allow_exit (&x);
  rule (&x, "socket", KILL);
  cond (rule (&x, "socket", ALLOW), 0, SECURER_CMP_EQ, AF_UNIX, 0);
  prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_socket, AF_UNIX, SOCK_DGRAM, 0), 0);
  assert_sigsys (outcome (prog, SYS_socket, AF_INET, SOCK_DGRAM, 0));
  assert_sigsys (outcome (prog, SYS_socket, AF_INET | (1ull << 32), SOCK_DGRAM, 0));
  securer_seccomp_free (prog);
}

Test (compile, several_conditions_all_must_hold)
{
  struct pol x;
  pol_init (&x, ALLOW);
  /* deny socket(AF_INET, SOCK_RAW, *) only */
  struct securer_syscall_rule *r = rule (&x, "socket", ERRNO (EACCES));
  cond (r, 0, SECURER_CMP_EQ, AF_INET, 0);
  cond (r, 1, SECURER_CMP_MASKED_EQ, SOCK_RAW, 0xf);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_socket, AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP), EACCES);
  assert_exit (outcome (prog, SYS_socket, AF_INET, SOCK_DGRAM, 0), 0);
  assert_exit (outcome (prog, SYS_socket, AF_UNIX, SOCK_DGRAM, 0), 0);
  securer_seccomp_free (prog);
}

Test (compile, masked_flags_deny_clone_newuser)
{
  struct pol x;
  pol_init (&x, ALLOW);
  cond (rule (&x, "unshare", ERRNO (EPERM)), 0, SECURER_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_unshare, CLONE_NEWUSER, 0, 0), EPERM);
  assert_exit (outcome (prog, SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS, 0, 0), EPERM);
  /* unshare(0) does nothing and succeeds when allowed. */
  assert_exit (outcome (prog, SYS_unshare, 0, 0, 0), 0);
  securer_seccomp_free (prog);
}

/* ---- actions ------------------------------------------------------------- */

Test (compile, default_kill_process)
{
  struct pol x;
  pol_init (&x, KILL);
  allow_exit (&x);
  rule (&x, "getpid", ALLOW);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_getpid, 0, 0, 0), 0);
  assert_sigsys (outcome (prog, SYS_getppid, 0, 0, 0));
  securer_seccomp_free (prog);
}

Test (compile, kill_thread_rule)
{
  struct pol x;
  pol_init (&x, ALLOW);
  rule (&x, "getppid", KILL_THREAD);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_sigsys (outcome (prog, SYS_getppid, 0, 0, 0));
  assert_exit (outcome (prog, SYS_getpid, 0, 0, 0), 0);
  securer_seccomp_free (prog);
}

static volatile sig_atomic_t trapped_nr = -1;

static void
on_sigsys (int sig, siginfo_t *info, void *uc)
{
  trapped_nr = info->si_syscall;
}

static int
trap_child (void *unused)
{
  /* The handler was installed before the filter was loaded (see below). */
  long r = syscall (SYS_getppid);
  (void) r;
  return trapped_nr == SYS_getppid ? 42 : 1;
}

Test (compile, trap_delivers_sigsys_with_the_syscall)
{
  struct pol x;
  pol_init (&x, ALLOW);
  rule (&x, "getppid", TRAP);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
  sigaction (SIGSYS, &sa, NULL);  /* inherited by the child */
  assert_exit (run (prog, trap_child, NULL), 42);
  signal (SIGSYS, SIG_DFL);
  securer_seccomp_free (prog);
}

Test (compile, log_allows)
{
  struct pol x;
  pol_init (&x, KILL);
  allow_exit (&x);
  rule (&x, "getppid", LOG);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_getppid, 0, 0, 0), 0);
  securer_seccomp_free (prog);
}

Test (compile, notify_without_reporting_behaves_as_log_or_continue)
{
  /* Without a supervisor, a `notify` rule must not hang the program. */
  struct pol x;
  pol_init (&x, KILL);
  allow_exit (&x);
  rule (&x, "getppid", NOTIFY);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  cr_assert (securer_seccomp_uses_notify (prog) || seccomp_api_get () < 6);
  securer_seccomp_free (prog);
}

Test (compile, unknown_syscall_numbers_get_the_default)
{
  struct pol x;
  pol_init (&x, ERRNO (ENOSYS));
  allow_exit (&x);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, 1000, 0, 0, 0), ENOSYS);
  securer_seccomp_free (prog);

  pol_init (&x, ERRNO (EPERM));
  allow_exit (&x);
  prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, 1000, 0, 0, 0), EPERM);
  securer_seccomp_free (prog);
}

/* ---- foreign ABIs ---------------------------------------------------------- */

#if defined(__x86_64__)
static int
i386_getpid (void *unused)
{
  long ret;
  __asm__ volatile ("int $0x80" : "=a" (ret) : "a" (20) : "memory");
  return ret == -EACCES ? 77 : ret < 0 ? 1 : 0;
}

static int
x32_getpid (void *unused)
{
  long r = syscall (0x40000000 | SYS_getpid);
  return r < 0 && errno == EACCES ? 77 : r < 0 ? 1 : 0;
}

Test (compile, i386_and_x32_syscalls_get_the_foreign_arch_action)
{
  struct pol x;
  pol_init (&x, ALLOW);  /* even an allow-all policy */
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_sigsys (run (prog, i386_getpid, NULL));
  assert_sigsys (run (prog, x32_getpid, NULL));
  assert_exit (outcome (prog, SYS_getpid, 0, 0, 0), 0);
  securer_seccomp_free (prog);

  pol_init (&x, ALLOW);
  x.p.seccomp.foreign_arch = ERRNO (EACCES);
  prog = compile_ok (&x, 0, -1);
  assert_exit (run (prog, i386_getpid, NULL), 77);
  assert_exit (run (prog, x32_getpid, NULL), 77);
  uint64_t a[6] = { 0 };
  cr_assert_eq (securer_seccomp_eval (prog, AUDIT_ARCH_I386, 20, a).type, SECURER_ACT_ERRNO);
  cr_assert_eq (securer_seccomp_eval (prog, AUDIT_ARCH_X86_64, 0x40000000 | SYS_getpid, a).type, SECURER_ACT_ERRNO);
  cr_assert_eq (securer_seccomp_eval (prog, AUDIT_ARCH_X86_64, SYS_getpid, a).type, SECURER_ACT_ALLOW);
  securer_seccomp_free (prog);
}
#endif

/* ---- errors ------------------------------------------------------------- */

Test (compile, errors_name_the_rule)
{
  struct pol x;
  pol_init (&x, ALLOW);
  rule (&x, "readd", ERRNO (EPERM));
  compile_fails (&x, EINVAL, "test.policy:11: readd: unknown syscall");

  pol_init (&x, ALLOW);
  rule (&x, "ioctl", ERRNO (EPERM));
  rule (&x, "ioctl", KILL);
  compile_fails (&x, EINVAL, "test.policy:12: ioctl: second unconditional rule (the first is at test.policy:11)");

  pol_init (&x, ALLOW);
  cond (rule (&x, "ioctl", ERRNO (EPERM)), 1, SECURER_CMP_MASKED_EQ, 0x10, 0x01);
  compile_fails (&x, EINVAL, "bits outside the mask");

  pol_init (&x, ALLOW);
  cond (rule (&x, "ioctl", ERRNO (EPERM)), 1, SECURER_CMP_EQ, 0x100000000ull, 0);
  compile_fails (&x, EINVAL, "does not fit this 32-bit argument");

  pol_init (&x, ALLOW);
  cond (rule (&x, "ioctl", ERRNO (EPERM)), 7, SECURER_CMP_EQ, 1, 0);
  compile_fails (&x, EINVAL, "argument index must be 0..5");

  pol_init (&x, ALLOW);
  rule (&x, "ioctl", ERRNO (5000));
  compile_fails (&x, EINVAL, "errno must be 0..4095");

  pol_init (&x, ALLOW);
  x.rules[0].loc.file = (char *) "base/r.policy";
  rule (&x, "nosuchcall", ALLOW);
  compile_fails (&x, EINVAL, "base/r.policy:11: nosuchcall");
}

Test (compile, sign_extended_negative_ints_are_accepted_for_32_bit_args)
{
  struct pol x;
  pol_init (&x, ALLOW);
  cond (rule (&x, "openat", ERRNO (EACCES)), 0, SECURER_CMP_EQ, (uint64_t) (int64_t) AT_FDCWD, 0);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_openat, (uint64_t) (int64_t) AT_FDCWD, (uint64_t) (uintptr_t) "/", O_RDONLY), EACCES);
  /* Same fd as the kernel reads it, written without sign extension. */
  assert_exit (outcome (prog, SYS_openat, (uint32_t) AT_FDCWD, (uint64_t) (uintptr_t) "/", O_RDONLY), EACCES);
  securer_seccomp_free (prog);
}

Test (compile, other_arch_names_have_no_effect)
{
  struct pol x;
  pol_init (&x, ALLOW);
  rule (&x, "chown32", KILL);
  rule (&x, "_llseek", KILL);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_getpid, 0, 0, 0), 0);
  securer_seccomp_free (prog);
}

Test (compile, disabled_seccomp_loads_nothing)
{
  struct pol x;
  pol_init (&x, KILL);
  x.p.seccomp.enabled = false;
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_getppid, 0, 0, 0), 0);
  securer_err_t err = NULL;
  cr_assert_eq (securer_seccomp_export_bpf (prog, 1, &err), -1);
  securer_error_free (&err);
  securer_seccomp_free (prog);
}

static int
load_without_nnp (void *p)
{
  securer_err_t err = NULL;
  int fd;
  if (securer_seccomp_load (p, &fd, &err) == 0)
    return 1;
  return strstr (securer_error_message (err), "no_new_privs") ? 0 : 2;
}

Test (compile, load_refuses_without_no_new_privs)
{
  struct pol x;
  pol_init (&x, ALLOW);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  fflush (NULL);
  pid_t pid = fork ();
  if (pid == 0)
    _exit (load_without_nnp (prog));
  int st;
  waitpid (pid, &st, 0);
  assert_exit (st, 0);
  securer_seccomp_free (prog);
}

/* ---- exports --------------------------------------------------------------- */

Test (compile, export_bpf_and_pfc)
{
  struct pol x;
  pol_init (&x, ERRNO (ENOSYS));
  rule (&x, "read", ALLOW);
  cond (rule (&x, "ioctl", ERRNO (EPERM)), 1, SECURER_CMP_EQ, TIOCSTI, 0);
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  FILE *f = tmpfile ();
  securer_err_t err = NULL;
  cr_assert_eq (securer_seccomp_export_bpf (prog, fileno (f), &err), 0);
  long size = lseek (fileno (f), 0, SEEK_END);
  cr_assert_gt (size, 0);
  cr_assert_eq (size % 8, 0);
  fclose (f);
  f = tmpfile ();
  cr_assert_eq (securer_seccomp_export_pfc (prog, fileno (f), &err), 0);
  char buf[8192] = "";
  lseek (fileno (f), 0, SEEK_SET);
  cr_assert_gt (read (fileno (f), buf, sizeof buf - 1), 0);
  cr_assert_not_null (strstr (buf, "\"ioctl\""));
  cr_assert_not_null (strstr (buf, "\"read\""));
  fclose (f);
  securer_seccomp_free (prog);
}

/* ---- the shipped groups as a large allowlist -------------------------------- */

Test (compile, system_service_allowlist)
{
  char **m = NULL;
  size_t n = 0;
  securer_err_t err = NULL;
  cr_assert_eq (securer_group_load ("system-service", &m, &n, &err), 0);
  struct pol x;
  pol_init (&x, ERRNO (ENOSYS));
  static struct securer_syscall_rule many[600];
  cr_assert_lt (n, 600);
  x.p.seccomp.rules = many;
  for (size_t i = 0; i < n; i++)
    many[i] = (struct securer_syscall_rule) { .name = m[i], .action = ALLOW };
  x.p.seccomp.n_rules = n;
  struct securer_seccomp_prog *prog = compile_ok (&x, 0, -1);
  assert_exit (outcome (prog, SYS_getppid, 0, 0, 0), 0);
  assert_exit (outcome (prog, SYS_ptrace, PTRACE_TRACEME, 0, 0), ENOSYS);
  assert_exit (outcome (prog, SYS_mount, 0, 0, 0), ENOSYS);
  securer_seccomp_free (prog);
  securer_strv_free (m);
}

/* ---- differential test: filter == evaluator == documented meaning ---------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd (void)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Values near interesting boundaries, with and without high-bit garbage. */
static uint64_t
rnd_value (void)
{
  static const uint64_t base[] = { 0, 1, 2, 3, 5, 7, 8, 0x10, 0xff, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull, ~0ull };
  uint64_t v = base[rnd () % (sizeof base / sizeof base[0])];
  switch (rnd () % 4)
    {
    case 0: v |= (rnd () % 3 + 1) << 32; break;
    case 1: v ^= rnd () % 4; break;
    default: break;
    }
  return v;
}

static const int markers[] = { ENOKEY, EKEYREJECTED, EKEYREVOKED, EKEYEXPIRED, EHWPOISON };

struct diff {
  struct securer_seccomp_prog *prog;
  uint64_t seed;
  int n_calls;
  int wfd;  /* reports go here; every other fd is closed first */
};

/* lseek(fd, off, whence) is harmless whatever the arguments; without a
 * marker errno from the filter it fails with EBADF/ESPIPE/EINVAL or works. */
static int
diff_child (void *p)
{
  struct diff *d = p;
  /* Random fds must never reach a real file shared with the test runner. */
  for (int fd = 0; fd < 1024; fd++)
    if (fd != d->wfd)
      close (fd);
  rng_state = d->seed;
  for (int i = 0; i < d->n_calls; i++)
    {
      uint64_t a[6] = { rnd_value (), rnd_value (), rnd_value (), 0, 0, 0 };
      if (rnd () % 3 == 0)
        a[0] = 0x100000000ull * (rnd () % 2) + (uint64_t) d->wfd;  /* a real fd, maybe with high bits */
      struct securer_action want = securer_seccomp_eval (d->prog, 0, SYS_lseek, a);
      long r = syscall (SYS_lseek, a[0], a[1], a[2]);
      int e = r < 0 ? errno : 0;
      bool is_marker = false;
      for (size_t k = 0; k < sizeof markers / sizeof markers[0]; k++)
        is_marker |= e == markers[k];
      if (want.type == SECURER_ACT_ERRNO ? e != want.errnum : is_marker)
        {
          char line[200];
          int n = snprintf (line, sizeof line, "mismatch: lseek(0x%llx, 0x%llx, 0x%llx) errno %d, policy says %d/%d\n",
                            (unsigned long long) a[0], (unsigned long long) a[1], (unsigned long long) a[2], e,
                            want.type, want.errnum);
          (void) !write (d->wfd, line, (size_t) n);
          return 1;
        }
    }
  return 0;
}

Test (compile, filter_agrees_with_first_match_semantics_on_random_policies)
{
  /* Weighted towards what policies use; ranges and != expand the most. */
  static const enum securer_cmp ops[] = { SECURER_CMP_EQ, SECURER_CMP_EQ, SECURER_CMP_EQ, SECURER_CMP_MASKED_EQ,
                                          SECURER_CMP_MASKED_EQ, SECURER_CMP_MASKED_EQ, SECURER_CMP_NE,
                                          SECURER_CMP_LT, SECURER_CMP_LE, SECURER_CMP_GT, SECURER_CMP_GE };
  cr_assert_eq (securer_syscall_args32 ("lseek"), 0x5u);  /* fd and whence are 32-bit, offset is not */
  int compiled = 0;
  for (int t = 0; t < 60; t++)
    {
      struct pol x;
      pol_init (&x, rnd () % 2 ? ERRNO (EHWPOISON) : ALLOW);
      allow_exit (&x);
      rule (&x, "close", ALLOW);
      int n_rules = 1 + (int) (rnd () % 4);
      bool have_uncond = false;
      for (int i = 0; i < n_rules; i++)
        {
          struct securer_syscall_rule *r = rule (&x, "lseek", rnd () % 4 == 0 ? ALLOW : ERRNO (markers[rnd () % 4]));
          unsigned nc = (unsigned) (rnd () % 3);
          if (nc == 0 && have_uncond)
            nc = 1;
          have_uncond |= nc == 0;
          for (unsigned j = 0; j < nc; j++)
            {
              unsigned arg = (unsigned) (rnd () % 3);
              bool is32 = arg != 1;
              enum securer_cmp op = ops[rnd () % (sizeof ops / sizeof ops[0])];
              uint64_t v = rnd_value (), m = 0;
              if (op == SECURER_CMP_MASKED_EQ)
                {
                  m = rnd_value () | 1;
                  v &= m;
                }
              if (is32)
                v &= 0xffffffffull;
              cond (r, arg, op, v, m);
            }
        }
      struct securer_seccomp_prog *prog = NULL;
      securer_err_t err = NULL;
      if (securer_seccomp_compile (&x.p, 0, -1, &prog, &err) < 0)
        {
          /* Only "too complex" may be refused, never silently mis-compiled. */
          cr_assert_eq (securer_error_errno (err), E2BIG, "%s", securer_error_message (err));
          securer_error_free (&err);
          continue;
        }
      compiled++;
      FILE *bf = tmpfile ();
      cr_assert_eq (securer_seccomp_export_bpf (prog, fileno (bf), &err), 0);
      long insns = lseek (fileno (bf), 0, SEEK_END) / 8;
      fclose (bf);
      if (getenv ("DEBUG_DIFF"))
        {
          fprintf (stderr, "policy %d: %ld insns\n", t, insns);
          securer_seccomp_export_pfc (prog, 2, &err);
        }
      int p[2];
      cr_assert_eq (pipe (p), 0);
      struct diff d = { prog, rnd (), 400, p[1] };
      int st = run (prog, diff_child, &d);
      close (p[1]);
      char msg[256] = "";
      (void) !read (p[0], msg, sizeof msg - 1);
      close (p[0]);
      cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "policy %d: status 0x%x: %s", t, st, msg);
      securer_seccomp_free (prog);
    }
  cr_assert_geq (compiled, 45, "only %d of 60 random policies compiled", compiled);
}

Test (compile, argwidth_table_is_sorted)
{
  const char *prev = NULL, *cur;
  for (size_t i = 0; (cur = securer_syscall_args32_name (i)) != NULL; i++)
    {
      if (prev)
        cr_assert_lt (strcmp (prev, cur), 0, "%s before %s", prev, cur);
      cr_assert (securer_syscall_known (cur), "%s", cur);
      prev = cur;
    }
  cr_assert_eq (securer_syscall_args32 ("ioctl"), 0x3u);
  cr_assert_eq (securer_syscall_args32 ("socket"), 0x7u);
  cr_assert_eq (securer_syscall_args32 ("mmap"), 0u);
}

/* ---- REPORT_DENIALS: the supervisor names the syscall ------------------------ */

static pid_t parent_pid;

enum last_call { LAST_GETUID, LAST_I386, LAST_SENDMSG };

static int
notify_payload (int sock, struct securer_seccomp_prog *prog, enum last_call last)
{
  securer_err_t err = NULL;
  int lfd = -1;
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || securer_seccomp_load (prog, &lfd, &err) < 0 || lfd < 0)
    return 10;
  /* Allowed although the policy kills sendmsg: the hand-over exception. */
  if (securer_seccomp_send_listener (sock, lfd, &err) < 0)
    return 11;
  /* `notify`: reported, then runs for real. */
  if (syscall (SYS_getppid) != parent_pid)
    return 12;
  switch (last)
    {
    case LAST_GETUID:
      syscall (SYS_getuid);  /* default kill: must never return */
      return 14;
    case LAST_I386:
#if defined(__x86_64__)
      {
        long ret;
        __asm__ volatile ("int $0x80" : "=a" (ret) : "a" (20) : "memory");
      }
#endif
      return 13;
    case LAST_SENDMSG:
      {
        /* sendmsg on any other fd is the policy's: kill. */
        struct msghdr m = { 0 };
        syscall (SYS_sendmsg, 1, &m, 0);
        return 15;
      }
    }
  return 16;
}

static void
check_report (enum last_call last, const char *want_name, int want_arg0)
{
  int sv[2];
  cr_assert_eq (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  struct pol x;
  pol_init (&x, KILL);
  allow_exit (&x);
  rule (&x, "sendmsg", KILL);
  rule (&x, "getppid", NOTIFY);
  struct securer_seccomp_prog *prog = compile_ok (&x, SECURER_SECCOMP_REPORT_DENIALS, sv[1]);
  cr_assert (securer_seccomp_uses_notify (prog));

  parent_pid = getpid ();
  fflush (NULL);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      close (sv[0]);
      syscall (SYS_exit_group, notify_payload (sv[1], prog, last));  /* see run() */
      _exit (251);
    }
  close (sv[1]);
  securer_err_t err = NULL;
  int listener = -1;
  cr_assert_eq (securer_seccomp_recv_listener (sv[0], &listener, &err), 0, "%s",
                err ? securer_error_message (err) : "");
  cr_assert_geq (listener, 0);
  cr_assert (fcntl (listener, F_GETFD) & FD_CLOEXEC);

  struct securer_seccomp_event ev;
  cr_assert_eq (securer_seccomp_notify_handle (prog, listener, &ev, &err), 1);
  cr_assert_str_eq (ev.name, "getppid");
  cr_assert_eq (ev.pid, pid);
  cr_assert_eq (ev.action.type, SECURER_ACT_NOTIFY);
  cr_assert (!ev.kill);

  cr_assert_eq (securer_seccomp_notify_handle (prog, listener, &ev, &err), 1);
  cr_assert_str_eq (ev.name, want_name);
  cr_assert (ev.kill);
  cr_assert_eq (ev.action.type, SECURER_ACT_KILL_PROCESS);
  if (want_arg0 >= 0)
    cr_assert_eq (ev.args[0], (uint64_t) want_arg0);
  /* The denied call is still blocked: the child has not exited by itself. */
  int st;
  cr_assert_eq (waitpid (pid, &st, WNOHANG), 0);
  kill (pid, SIGKILL);
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFSIGNALED (st) && WTERMSIG (st) == SIGKILL, "status 0x%x", st);
  close (listener);
  close (sv[0]);
  securer_seccomp_free (prog);
}

Test (report, default_kill_is_reported_by_name)
{
  check_report (LAST_GETUID, "getuid", -1);
}

Test (report, sendmsg_is_only_allowed_on_the_hand_over_fd)
{
  check_report (LAST_SENDMSG, "sendmsg", 1);
}

#if defined(__x86_64__)
Test (report, foreign_abi_is_reported_with_its_abi)
{
  check_report (LAST_I386, "i386:getpid", -1);
}
#endif

Test (report, needs_the_hand_over_fd)
{
  struct pol x;
  pol_init (&x, KILL);
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_seccomp_compile (&x.p, SECURER_SECCOMP_REPORT_DENIALS, -1, &prog, &err), -1);
  cr_assert_not_null (strstr (securer_error_message (err), "needs the fd"));
  securer_error_free (&err);
  cr_assert_eq (securer_seccomp_compile (&x.p, 0x80, -1, &prog, &err), -1);
  securer_error_free (&err);
}

/* ---- deferred generation (what the launcher uses) ---------------------------- */

Test (compile, deferred_program_loads_only_once_generated)
{
  struct pol x;
  pol_init (&x, ERRNO (ENOSYS));
  allow_exit (&x);
  rule (&x, "getpid", ALLOW);
  struct securer_seccomp_prog *prog = compile_ok (&x, SECURER_SECCOMP_DEFER_BPF, -1);
  /* Checked and evaluable, but nothing to load or export yet. */
  uint64_t args[6] = { 0 };
  cr_assert_eq (securer_seccomp_eval (prog, 0, SYS_getppid, args).type, SECURER_ACT_ERRNO);
  const struct sock_filter *insns;
  unsigned n;
  unsigned long flags;
  cr_assert_eq (securer_seccomp_bpf (prog, &insns, &n, &flags), -1);
  int lfd;
  cr_assert_eq (securer_seccomp_install (prog, &lfd), -EINVAL);
  securer_err_t err = NULL;
  cr_assert_eq (securer_seccomp_export_bpf (prog, 1, &err), -1);
  securer_error_free (&err);

  cr_assert_eq (securer_seccomp_generate (prog, &x.p, &err), 0, "%s", securer_error_message (err));
  cr_assert_eq (securer_seccomp_bpf (prog, &insns, &n, &flags), 0);
  cr_assert_gt (n, 0);
  assert_exit (outcome (prog, SYS_getpid, 0, 0, 0), 0);
  assert_exit (outcome (prog, SYS_getppid, 0, 0, 0), ENOSYS);
  securer_seccomp_free (prog);
}
