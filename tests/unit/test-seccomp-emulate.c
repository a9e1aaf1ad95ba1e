/* The userspace seccomp-BPF interpreter against the kernel.
 *
 * For the shipped policies and for random ones, random calls (native, i386
 * through int 0x80, x32) are judged by the interpreter and made for real
 * in a child that runs under the compiled filter.  Nothing the policy
 * allows ever runs: below the filter under test sits a second one that
 * answers every call with an errno no policy uses (MARKER).  The kernel
 * takes the most severe verdict of the two and, between two errno
 * verdicts, the later filter's; so the child sees the policy's errno, dies
 * of SIGSYS for kill and trap, and sees MARKER where the policy allows. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp/argwidth.h"
#include "seccomp/seccomp.h"

#if defined(__x86_64__)

#define MARKER 4000
#define MAX_CALLS 1500

enum abi { NATIVE, I386, X32 };

struct call {
  enum abi abi;
  int nr;        /* as the filter sees it (x32 bit included) */
  uint64_t a[6];
};

/* Shared with the child: where it is, and what each call returned. */
struct shared {
  volatile int cur;
  volatile int done;
  volatile int result[MAX_CALLS];  /* errno, 0 for success */
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t
rnd (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* ---- the child ------------------------------------------------------------- */

static int
make_call (const struct call *c)
{
  if (c->abi == I386)
    {
      long ret;
      /* Arguments do not matter: the filter decides i386 calls on the arch. */
      __asm__ volatile ("int $0x80" : "=a" (ret) : "a" (c->nr), "b" (0), "c" (0), "d" (0), "S" (0), "D" (0) : "memory");
      return ret < 0 && ret > -4096 ? (int) -ret : 0;
    }
  long r = syscall (c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
  return r < 0 ? errno : 0;
}

/* Everything but seccomp(2) (to load the filter under test on top) and
 * exit_group (to end) on the native arch gets MARKER. */
static const struct sock_filter marker_filter[] = {
  BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 4),
  BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 3, 0),
  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 2, 0),
  BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | MARKER),
  BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | MARKER),
  BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static void
child (struct securer_seccomp_prog *prog, const struct call *calls, int from, int n, struct shared *sh)
{
  const struct sock_filter *insns;
  unsigned n_insns;
  unsigned long flags;
  struct sock_fprog marker = { sizeof marker_filter / sizeof marker_filter[0], (struct sock_filter *) marker_filter };
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &marker) < 0)
    _exit (250);
  if (securer_seccomp_bpf (prog, &insns, &n_insns, &flags) == 0)
    {
      struct sock_fprog fp = { (unsigned short) n_insns, (struct sock_filter *) insns };
      if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp) < 0)
        _exit (251);
    }
  for (int i = from; i < n; i++)
    {
      sh->cur = i;
      sh->result[i] = make_call (&calls[i]);
    }
  sh->done = 1;
  /* Directly: libc's exit would make calls of its own. */
  syscall (SYS_exit_group, 0);
}

/* ---- the comparison -------------------------------------------------------- */

static uint32_t
arch_of (enum abi abi)
{
  return abi == I386 ? AUDIT_ARCH_I386 : AUDIT_ARCH_X86_64;
}

static char *
describe (const struct call *c)
{
  char *s = NULL;
  cr_assert_geq (asprintf (&s, "%s nr %d (0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx, 0x%llx)",
                           c->abi == I386 ? "i386" : c->abi == X32 ? "x32" : "x86_64", c->nr,
                           (unsigned long long) c->a[0], (unsigned long long) c->a[1],
                           (unsigned long long) c->a[2], (unsigned long long) c->a[3],
                           (unsigned long long) c->a[4], (unsigned long long) c->a[5]), 0);
  return s;
}

/* Runs calls[0..n) in as many children as kills require and checks each
 * outcome against the interpreter; returns how many calls were judged. */
static int
compare_with_kernel (struct securer_seccomp_prog *prog, const struct call *calls, int n, const char *what)
{
  cr_assert_leq (n, MAX_CALLS);
  struct shared *sh = mmap (NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq (sh, MAP_FAILED);
  int from = 0, kills = 0;
  while (from < n)
    {
      sh->cur = -1;
      sh->done = 0;
      fflush (NULL);
      pid_t pid = fork ();
      cr_assert_geq (pid, 0);
      if (pid == 0)
        child (prog, calls, from, n, sh);
      int st;
      cr_assert_eq (waitpid (pid, &st, 0), pid);
      int upto = sh->done ? n : sh->cur;
      cr_assert (sh->done || (WIFSIGNALED (st) && WTERMSIG (st) == SIGSYS && upto >= from),
                 "%s: child status 0x%x at call %d", what, st, sh->cur);
      for (int i = from; i <= upto && i < n; i++)
        {
          const struct call *c = &calls[i];
          struct securer_action emu, ref;
          securer_err_t err = NULL;
          cr_assert_eq (securer_seccomp_emulate (prog, arch_of (c->abi), c->nr, c->a, &emu, &err), 0,
                        "%s", err ? securer_error_message (err) : "");
          /* The interpreter runs the BPF code; the evaluator reads the
           * rules: they must agree exactly. */
          ref = securer_seccomp_eval (prog, arch_of (c->abi), c->nr, c->a);
          char *d = describe (c);
          cr_assert (emu.type == ref.type && (emu.type != SECURER_ACT_ERRNO || emu.errnum == ref.errnum),
                     "%s: %s: BPF says %s/%d, rules say %s/%d", what, d, securer_action_name (emu.type),
                     emu.errnum, securer_action_name (ref.type), ref.errnum);
          bool dies = emu.type == SECURER_ACT_KILL_PROCESS || emu.type == SECURER_ACT_KILL_THREAD
                      || emu.type == SECURER_ACT_TRAP;
          if (i == upto && !sh->done)
            cr_assert (dies, "%s: %s killed the child, the interpreter says %s", what, d,
                       securer_action_name (emu.type));
          else if (emu.type == SECURER_ACT_ERRNO)
            cr_assert_eq (sh->result[i], emu.errnum, "%s: %s: errno %d, the interpreter says %d", what, d,
                          sh->result[i], emu.errnum);
          else
            cr_assert (!dies && sh->result[i] == MARKER, "%s: %s: errno %d, the interpreter says %s", what, d,
                       sh->result[i], securer_action_name (emu.type));
          free (d);
        }
      if (!sh->done)
        kills++;
      from = upto + 1;
    }
  munmap (sh, sizeof *sh);
  return kills;
}

/* ---- random calls ---------------------------------------------------------- */

/* Values that sit on the boundaries of a policy's conditions: each
 * condition's value and mask, off by one, with high bits set. */
static uint64_t
pick_value (const struct securer_policy *p, int nr, unsigned arg)
{
  static const uint64_t base[] = { 0, 1, 2, 3, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull, ~0ull };
  uint64_t v = base[rnd () % (sizeof base / sizeof base[0])];
  if (rnd () % 3 != 0)
    {
      /* A condition on this argument of a rule for this syscall. */
      size_t start = (size_t) rnd () % (p->seccomp.n_rules ? p->seccomp.n_rules : 1);
      for (size_t k = 0; k < p->seccomp.n_rules; k++)
        {
          const struct securer_syscall_rule *r = &p->seccomp.rules[(start + k) % p->seccomp.n_rules];
          if (seccomp_syscall_resolve_name (r->name) != nr)
            continue;
          for (unsigned j = 0; j < r->n_conds; j++)
            if (r->conds[j].arg == arg)
              {
                v = r->conds[j].value;
                if (r->conds[j].op == SECURER_CMP_MASKED_EQ && rnd () % 2)
                  v |= rnd () & ~r->conds[j].mask;
                break;
              }
          break;
        }
    }
  switch (rnd () % 5)
    {
    case 0: v += 1; break;
    case 1: v -= 1; break;
    case 2: v |= (rnd () % 4) << 32; break;
    default: break;
    }
  return v;
}

static int
random_calls (const struct securer_policy *p, struct call *calls, int n, bool foreign)
{
  for (int i = 0; i < n; i++)
    {
      struct call *c = &calls[i];
      memset (c, 0, sizeof *c);
      unsigned kind = (unsigned) (rnd () % 20);
      if (foreign && kind == 0)
        {
          c->abi = I386;
          c->nr = (int) (rnd () % 440);
          continue;
        }
      if (foreign && kind == 1)
        {
          c->abi = X32;
          c->nr = (int) (0x40000000u | (rnd () % 550));
          continue;
        }
      /* Syscalls libseccomp knows, and numbers far from any: a kernel may
       * handle reserved numbers of its own before seccomp runs (some VM
       * kernels do), which no filter can speak for. */
      do
        {
          if (kind < 12 && p->seccomp.n_rules > 0)
            c->nr = seccomp_syscall_resolve_name (p->seccomp.rules[rnd () % p->seccomp.n_rules].name);
          else if (kind == 12)
            c->nr = 1000 + (int) (rnd () % 100);
          else
            {
              c->nr = (int) (rnd () % 470);
              char *name = seccomp_syscall_resolve_num_arch (SCMP_ARCH_NATIVE, c->nr);
              if (name == NULL)
                c->nr = -1;
              free (name);
            }
          kind = 99;
        }
      while (c->nr < 0 || c->nr == SYS_exit_group || c->nr == SYS_seccomp);
      for (unsigned a = 0; a < 6; a++)
        c->a[a] = pick_value (p, c->nr, a);
    }
  return n;
}

static void
check_shipped (const char *name)
{
  securer_err_t err = NULL;
  char *path = NULL;
  cr_assert_eq (securer_policy_find (name, &path, &err), 0, "%s", err ? securer_error_message (err) : "");
  struct securer_policy *p = NULL;
  cr_assert_eq (securer_policy_load_file (path, &p, NULL, &err), 0, "%s", err ? securer_error_message (err) : "");
  struct securer_seccomp_prog *prog = NULL;
  cr_assert_eq (securer_seccomp_compile (p, 0, -1, &prog, &err), 0, "%s", err ? securer_error_message (err) : "");
  static struct call calls[MAX_CALLS];
  int n = random_calls (p, calls, 1200, true);
  int kills = compare_with_kernel (prog, calls, n, name);
  /* The shipped policies kill some calls, allow and refuse others. */
  cr_assert_gt (kills, 5, "%s: only %d kills", name, kills);
  securer_seccomp_free (prog);
  securer_policy_free (p);
  free (path);
}

Test (emulate, agrees_with_the_kernel_on_policy_r) { check_shipped ("r"); }
Test (emulate, agrees_with_the_kernel_on_policy_minimal) { check_shipped ("minimal"); }
Test (emulate, agrees_with_the_kernel_on_policy_r_server) { check_shipped ("r-server"); }

/* Random policies: rules of every action with conditions of every kind on
 * a few syscalls, so first-match order, 32-bit arguments and the merged
 * 64-bit comparisons are all exercised. */
/* A sanitizer's run-time makes system calls of its own in the child (its
 * fake stacks are mapped on first use, its reports map buffers), which
 * the marker filter and the random ones answer with errors: the child
 * then crashes into the run-time's report, which cannot map or exit and
 * spins for ever. */
#if defined(__SANITIZE_ADDRESS__)
#define EMULATE_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMULATE_UNDER_SANITIZER 1
#endif
#endif

Test (emulate, agrees_with_the_kernel_on_random_policies)
{
#ifdef EMULATE_UNDER_SANITIZER
  cr_skip_test ("a sanitizer's run-time cannot run under these filters (its mmap and exit fail)");
#endif
  static const char *const names[] = { "ioctl", "mmap", "mprotect", "lseek", "socket", "clone", "kill", "fcntl" };
  static const enum securer_action_type acts[] = { SECURER_ACT_ALLOW, SECURER_ACT_ERRNO, SECURER_ACT_ERRNO,
                                                   SECURER_ACT_KILL_PROCESS, SECURER_ACT_KILL_THREAD,
                                                   SECURER_ACT_TRAP, SECURER_ACT_LOG };
  /* Weighted towards what policies use: ranges and != expand the most. */
  static const enum securer_cmp ops[] = { SECURER_CMP_EQ, SECURER_CMP_EQ, SECURER_CMP_EQ, SECURER_CMP_MASKED_EQ,
                                          SECURER_CMP_MASKED_EQ, SECURER_CMP_MASKED_EQ, SECURER_CMP_MASKED_EQ,
                                          SECURER_CMP_NE, SECURER_CMP_LT, SECURER_CMP_LE, SECURER_CMP_GT,
                                          SECURER_CMP_GE };
  int judged = 0;
  for (int t = 0; t < 40; t++)
    {
      struct securer_syscall_rule rules[24];
      struct securer_policy p;
      memset (&p, 0, sizeof p);
      memset (rules, 0, sizeof rules);
      p.path = (char *) "random.policy";
      p.seccomp.enabled = true;
      p.seccomp.default_action = (struct securer_action) { rnd () % 2 ? SECURER_ACT_ALLOW : SECURER_ACT_ERRNO, 38 };
      p.seccomp.foreign_arch = (struct securer_action) { rnd () % 2 ? SECURER_ACT_KILL_PROCESS : SECURER_ACT_ERRNO, 13 };
      p.seccomp.rules = rules;
      size_t n_rules = 3 + rnd () % 8;
      bool uncond[sizeof names / sizeof names[0]] = { false };
      for (size_t i = 0; i < n_rules; i++)
        {
          struct securer_syscall_rule *r = &rules[p.seccomp.n_rules];
          size_t s = (size_t) rnd () % (sizeof names / sizeof names[0]);
          r->name = (char *) names[s];
          r->action.type = acts[rnd () % (sizeof acts / sizeof acts[0])];
          r->action.errnum = 1 + (int) (rnd () % 120);
          r->n_conds = (unsigned) (rnd () % 3);
          if (r->n_conds == 0 && uncond[s])
            r->n_conds = 1;
          uncond[s] |= r->n_conds == 0;
          unsigned args32 = securer_syscall_args32 (r->name);
          for (unsigned j = 0; j < r->n_conds; j++)
            {
              struct securer_arg_cond *c = &r->conds[j];
              c->arg = (unsigned) (rnd () % 4);
              c->op = ops[rnd () % (sizeof ops / sizeof ops[0])];
              c->value = pick_value (&p, -1, 0);
              if (c->op == SECURER_CMP_MASKED_EQ)
                {
                  c->mask = pick_value (&p, -1, 0) | 1;
                  c->value &= c->mask;
                }
              if ((args32 >> c->arg) & 1)
                {
                  c->value &= 0xffffffffu;
                  c->mask &= 0xffffffffu;
                  if (c->op == SECURER_CMP_MASKED_EQ && c->mask == 0)
                    c->mask = 1;
                }
            }
          p.seccomp.n_rules++;
        }
      struct securer_seccomp_prog *prog = NULL;
      securer_err_t err = NULL;
      if (securer_seccomp_compile (&p, 0, -1, &prog, &err) < 0)
        {
          /* Only "too complex" may be refused. */
          if (getenv ("DEBUG_EMULATE"))
            fprintf (stderr, "policy %d: %s\n", t, securer_error_message (err));
          cr_assert_eq (securer_error_errno (err), E2BIG, "%s", securer_error_message (err));
          securer_error_free (&err);
          continue;
        }
      static struct call calls[MAX_CALLS];
      int n = random_calls (&p, calls, 300, t % 5 == 0);
      compare_with_kernel (prog, calls, n, "random policy");
      judged++;
      securer_seccomp_free (prog);
    }
  cr_assert_geq (judged, 20, "only %d of 40 random policies compiled", judged);
}

/* Programs the kernel would refuse are errors, not verdicts. */
Test (emulate, refuses_what_the_kernel_refuses)
{
  struct seccomp_data d = { .nr = 1, .arch = AUDIT_ARCH_X86_64 };
  uint32_t ret = 7;
  securer_err_t err = NULL;
  const struct sock_filter unaligned[] = { BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 2), BPF_STMT (BPF_RET | BPF_K, 0) };
  const struct sock_filter outside[] = { BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 64), BPF_STMT (BPF_RET | BPF_K, 0) };
  const struct sock_filter far_jump[] = { BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, 1, 5, 0), BPF_STMT (BPF_RET | BPF_K, 0) };
  const struct sock_filter no_ret[] = { BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 0) };
  const struct sock_filter unset_mem[] = { BPF_STMT (BPF_LD | BPF_MEM, 3), BPF_STMT (BPF_RET | BPF_K, 0) };
  const struct sock_filter not_seccomp[] = { BPF_STMT (BPF_LD | BPF_B | BPF_ABS, 0), BPF_STMT (BPF_RET | BPF_K, 0) };
  const struct { const struct sock_filter *f; unsigned n; const char *needle; } bad[] = {
    { unaligned, 2, "unaligned" }, { outside, 2, "outside" }, { far_jump, 2, "jump out" },
    { no_ret, 1, "without a return" }, { unset_mem, 2, "before it was written" },
    { not_seccomp, 2, "not allowed" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      cr_assert_eq (securer_bpf_run (bad[i].f, bad[i].n, &d, &ret, &err), -1, "case %zu", i);
      cr_assert (strstr (securer_error_message (err), bad[i].needle) != NULL, "%s", securer_error_message (err));
      securer_error_free (&err);
    }
  /* And runs what it accepts: nr 1 -> errno 1 from scratch memory. */
  const struct sock_filter ok[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    BPF_STMT (BPF_ST, 5),
    BPF_STMT (BPF_LDX | BPF_MEM, 5),
    BPF_STMT (BPF_LD | BPF_IMM, SECCOMP_RET_ERRNO),
    BPF_STMT (BPF_ALU | BPF_OR | BPF_X, 0),
    BPF_STMT (BPF_RET | BPF_A, 0),
  };
  cr_assert_eq (securer_bpf_run (ok, 6, &d, &ret, &err), 0);
  cr_assert_eq (ret, SECCOMP_RET_ERRNO | 1);
}

#else
Test (emulate, needs_x86_64)
{
  cr_skip_test ("the kernel cross-check makes i386 and x32 calls: x86_64 only");
}
#endif
