/* The kernel's seccomp-BPF interpreter, in userspace.
 *
 * `securer policy test` and `securer policy explain` judge a policy by the
 * program the kernel would run, not by the compiler's own reading of the
 * rules: a mistake in the compiler or in libseccomp (2.5.4 mis-compiles
 * some merged 64-bit argument comparisons) then shows up here as it would
 * in a sandbox.  The interpreter follows the kernel's rules for seccomp
 * programs (kernel/seccomp.c seccomp_check_filter, net/core/filter.c
 * bpf_check_classic): only the instructions seccomp accepts, 32-bit loads
 * at aligned offsets inside struct seccomp_data, forward jumps inside the
 * program, scratch memory read only after it was written.  A program the
 * kernel would refuse is an error, never a verdict.  tests/unit/
 * test-seccomp-emulate.c checks it against real filtered processes. */
#include <config.h>

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <string.h>

#include "seccomp/seccomp.h"

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef SECCOMP_RET_LOG
#define SECCOMP_RET_LOG 0x7ffc0000U
#endif
#ifndef SECCOMP_RET_ACTION_FULL
#define SECCOMP_RET_ACTION_FULL 0xffff0000U
#endif

#define BPF_MEMWORDS_SECCOMP 16

static int
bad (securer_err_t *err, unsigned pc, const char *why)
{
  return securer_error_set (err, EINVAL, "BPF instruction %u: %s", pc, why);
}

int
securer_bpf_run (const struct sock_filter *insns, unsigned n, const struct seccomp_data *d,
                 uint32_t *ret, securer_err_t *err)
{
  if (n == 0 || n > BPF_MAXINSNS)
    return securer_error_set (err, EINVAL, "BPF program of %u instructions", n);
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS_SECCOMP];
  unsigned written = 0;  /* bit i: mem[i] was stored */
  unsigned char raw[sizeof *d];
  memcpy (raw, d, sizeof raw);
  for (unsigned pc = 0; pc < n; pc++)
    {
      const struct sock_filter *f = &insns[pc];
      uint32_t k = f->k;
      switch (f->code)
        {
        case BPF_LD | BPF_W | BPF_ABS:
          if (k >= sizeof raw || (k & 3) != 0)
            return bad (err, pc, "load outside struct seccomp_data or unaligned");
          memcpy (&a, raw + k, sizeof a);
          break;
        case BPF_LD | BPF_W | BPF_LEN: a = sizeof raw; break;
        case BPF_LDX | BPF_W | BPF_LEN: x = sizeof raw; break;
        case BPF_LD | BPF_IMM: a = k; break;
        case BPF_LDX | BPF_IMM: x = k; break;
        case BPF_MISC | BPF_TAX: x = a; break;
        case BPF_MISC | BPF_TXA: a = x; break;
        case BPF_LD | BPF_MEM:
        case BPF_LDX | BPF_MEM:
          if (k >= BPF_MEMWORDS_SECCOMP || !(written & (1u << k)))
            return bad (err, pc, "scratch memory read before it was written");
          if (BPF_CLASS (f->code) == BPF_LD)
            a = mem[k];
          else
            x = mem[k];
          break;
        case BPF_ST:
        case BPF_STX:
          if (k >= BPF_MEMWORDS_SECCOMP)
            return bad (err, pc, "scratch memory index out of range");
          mem[k] = f->code == BPF_ST ? a : x;
          written |= 1u << k;
          break;
        case BPF_ALU | BPF_NEG: a = -a; break;
        case BPF_ALU | BPF_ADD | BPF_K: a += k; break;
        case BPF_ALU | BPF_ADD | BPF_X: a += x; break;
        case BPF_ALU | BPF_SUB | BPF_K: a -= k; break;
        case BPF_ALU | BPF_SUB | BPF_X: a -= x; break;
        case BPF_ALU | BPF_MUL | BPF_K: a *= k; break;
        case BPF_ALU | BPF_MUL | BPF_X: a *= x; break;
        case BPF_ALU | BPF_AND | BPF_K: a &= k; break;
        case BPF_ALU | BPF_AND | BPF_X: a &= x; break;
        case BPF_ALU | BPF_OR | BPF_K: a |= k; break;
        case BPF_ALU | BPF_OR | BPF_X: a |= x; break;
        case BPF_ALU | BPF_XOR | BPF_K: a ^= k; break;
        case BPF_ALU | BPF_XOR | BPF_X: a ^= x; break;
        case BPF_ALU | BPF_DIV | BPF_K:
          if (k == 0)
            return bad (err, pc, "division by zero");
          a /= k;
          break;
        case BPF_ALU | BPF_DIV | BPF_X:
          /* The kernel ends the program with 0 (kill-thread) here. */
          if (x == 0)
            {
              *ret = 0;
              return 0;
            }
          a /= x;
          break;
        case BPF_ALU | BPF_LSH | BPF_K:
        case BPF_ALU | BPF_RSH | BPF_K:
          if (k >= 32)
            return bad (err, pc, "shift by 32 or more");
          a = BPF_OP (f->code) == BPF_LSH ? a << k : a >> k;
          break;
        case BPF_ALU | BPF_LSH | BPF_X: a = x >= 32 ? 0 : a << x; break;
        case BPF_ALU | BPF_RSH | BPF_X: a = x >= 32 ? 0 : a >> x; break;
        case BPF_RET | BPF_K: *ret = k; return 0;
        case BPF_RET | BPF_A: *ret = a; return 0;
        case BPF_JMP | BPF_JA:
          if (k >= n - pc - 1)
            return bad (err, pc, "jump out of the program");
          pc += k;
          break;
        case BPF_JMP | BPF_JEQ | BPF_K:
        case BPF_JMP | BPF_JEQ | BPF_X:
        case BPF_JMP | BPF_JGT | BPF_K:
        case BPF_JMP | BPF_JGT | BPF_X:
        case BPF_JMP | BPF_JGE | BPF_K:
        case BPF_JMP | BPF_JGE | BPF_X:
        case BPF_JMP | BPF_JSET | BPF_K:
        case BPF_JMP | BPF_JSET | BPF_X:
          {
            if ((unsigned) f->jt >= n - pc - 1 || (unsigned) f->jf >= n - pc - 1)
              return bad (err, pc, "jump out of the program");
            uint32_t v = BPF_SRC (f->code) == BPF_X ? x : k;
            bool taken;
            switch (BPF_OP (f->code))
              {
              case BPF_JEQ: taken = a == v; break;
              case BPF_JGT: taken = a > v; break;
              case BPF_JGE: taken = a >= v; break;
              default: taken = (a & v) != 0; break;
              }
            pc += taken ? f->jt : f->jf;
            break;
          }
        default:
          return bad (err, pc, "instruction not allowed in a seccomp program");
        }
    }
  return securer_error_set (err, EINVAL, "BPF program ends without a return");
}

int
securer_seccomp_ret_action (uint32_t ret, struct securer_action *out)
{
  uint32_t data = ret & SECCOMP_RET_DATA;
  switch (ret & SECCOMP_RET_ACTION_FULL)
    {
    case SECCOMP_RET_KILL_PROCESS: *out = (struct securer_action) { SECURER_ACT_KILL_PROCESS, 0 }; return 0;
    case SECCOMP_RET_KILL_THREAD: *out = (struct securer_action) { SECURER_ACT_KILL_THREAD, 0 }; return 0;
    case SECCOMP_RET_TRAP: *out = (struct securer_action) { SECURER_ACT_TRAP, 0 }; return 0;
    case SECCOMP_RET_ERRNO:
      /* The kernel caps the errno at MAX_ERRNO. */
      *out = (struct securer_action) { SECURER_ACT_ERRNO, (int) (data > 4095 ? 4095 : data) };
      return 0;
    case SECCOMP_RET_USER_NOTIF: *out = (struct securer_action) { SECURER_ACT_NOTIFY, 0 }; return 0;
    case SECCOMP_RET_LOG: *out = (struct securer_action) { SECURER_ACT_LOG, 0 }; return 0;
    case SECCOMP_RET_ALLOW: *out = (struct securer_action) { SECURER_ACT_ALLOW, 0 }; return 0;
    default:
      /* Unknown actions are kill-process to the kernel; securer never
       * generates one (nor SECCOMP_RET_TRACE), so it is reported. */
      return -1;
    }
}

int
securer_seccomp_emulate (const struct securer_seccomp_prog *prog, uint32_t arch, int nr,
                         const uint64_t args[6], struct securer_action *out, securer_err_t *err)
{
  const struct sock_filter *insns;
  unsigned n;
  unsigned long flags;
  if (!securer_seccomp_enabled (prog))
    {
      *out = (struct securer_action) { SECURER_ACT_ALLOW, 0 };  /* no filter is loaded */
      return 0;
    }
  if (securer_seccomp_bpf (prog, &insns, &n, &flags) < 0)
    return securer_error_set (err, EINVAL, "emulate the filter: it was not generated");
  struct seccomp_data d;
  memset (&d, 0, sizeof d);
  d.nr = nr;
  d.arch = arch ? arch : (uint32_t) seccomp_arch_native ();
  memcpy (d.args, args, sizeof d.args);
  uint32_t ret;
  if (securer_bpf_run (insns, n, &d, &ret, err) < 0)
    return securer_error_prefix (err, "emulate the filter");
  if (securer_seccomp_ret_action (ret, out) < 0)
    return securer_error_set (err, EINVAL, "emulate the filter: unexpected return value 0x%08x", ret);
  return 0;
}

/* Every instruction at once, as the kernel checks a program when it is
 * attached (seccomp_check_filter + bpf_check_classic), rather than along
 * one path as securer_bpf_run does: for a program read back from storage
 * before anything runs it. */
int
securer_bpf_check (const struct sock_filter *insns, unsigned n, securer_err_t *err)
{
  if (n == 0 || n > BPF_MAXINSNS)
    return securer_error_set (err, EINVAL, "BPF program of %u instructions", n);
  /* Scratch words surely written on every path to each instruction: jumps
   * only go forward, so one pass in order sees every predecessor first. */
  uint16_t valid[BPF_MAXINSNS];
  memset (valid, 0xff, n * sizeof *valid);
  valid[0] = 0;
  for (unsigned pc = 0; pc < n; pc++)
    {
      const struct sock_filter *f = &insns[pc];
      uint32_t k = f->k;
      uint16_t v = valid[pc];
      bool falls = true;
      switch (f->code)
        {
        case BPF_LD | BPF_W | BPF_ABS:
          if (k >= sizeof (struct seccomp_data) || (k & 3) != 0)
            return bad (err, pc, "load outside struct seccomp_data or unaligned");
          break;
        case BPF_LD | BPF_MEM:
        case BPF_LDX | BPF_MEM:
          if (k >= BPF_MEMWORDS_SECCOMP || !(v & (1u << k)))
            return bad (err, pc, "scratch memory read before it was written");
          break;
        case BPF_ST:
        case BPF_STX:
          if (k >= BPF_MEMWORDS_SECCOMP)
            return bad (err, pc, "scratch memory index out of range");
          v |= (uint16_t) (1u << k);
          break;
        case BPF_ALU | BPF_DIV | BPF_K:
          if (k == 0)
            return bad (err, pc, "division by zero");
          break;
        case BPF_ALU | BPF_LSH | BPF_K:
        case BPF_ALU | BPF_RSH | BPF_K:
          if (k >= 32)
            return bad (err, pc, "shift by 32 or more");
          break;
        case BPF_LD | BPF_W | BPF_LEN: case BPF_LDX | BPF_W | BPF_LEN:
        case BPF_LD | BPF_IMM: case BPF_LDX | BPF_IMM:
        case BPF_MISC | BPF_TAX: case BPF_MISC | BPF_TXA:
        case BPF_ALU | BPF_NEG:
        case BPF_ALU | BPF_ADD | BPF_K: case BPF_ALU | BPF_ADD | BPF_X:
        case BPF_ALU | BPF_SUB | BPF_K: case BPF_ALU | BPF_SUB | BPF_X:
        case BPF_ALU | BPF_MUL | BPF_K: case BPF_ALU | BPF_MUL | BPF_X:
        case BPF_ALU | BPF_AND | BPF_K: case BPF_ALU | BPF_AND | BPF_X:
        case BPF_ALU | BPF_OR | BPF_K: case BPF_ALU | BPF_OR | BPF_X:
        case BPF_ALU | BPF_XOR | BPF_K: case BPF_ALU | BPF_XOR | BPF_X:
        case BPF_ALU | BPF_DIV | BPF_X:
        case BPF_ALU | BPF_LSH | BPF_X: case BPF_ALU | BPF_RSH | BPF_X:
          break;
        case BPF_RET | BPF_K:
        case BPF_RET | BPF_A:
          falls = false;
          break;
        case BPF_JMP | BPF_JA:
          if (k >= n - pc - 1)
            return bad (err, pc, "jump out of the program");
          valid[pc + 1 + k] &= v;
          falls = false;
          break;
        case BPF_JMP | BPF_JEQ | BPF_K: case BPF_JMP | BPF_JEQ | BPF_X:
        case BPF_JMP | BPF_JGT | BPF_K: case BPF_JMP | BPF_JGT | BPF_X:
        case BPF_JMP | BPF_JGE | BPF_K: case BPF_JMP | BPF_JGE | BPF_X:
        case BPF_JMP | BPF_JSET | BPF_K: case BPF_JMP | BPF_JSET | BPF_X:
          if ((unsigned) f->jt >= n - pc - 1 || (unsigned) f->jf >= n - pc - 1)
            return bad (err, pc, "jump out of the program");
          valid[pc + 1 + f->jt] &= v;
          valid[pc + 1 + f->jf] &= v;
          falls = false;
          break;
        default:
          return bad (err, pc, "instruction not allowed in a seccomp program");
        }
      if (falls)
        {
          if (pc + 1 >= n)
            return bad (err, pc, "the program ends without a return");
          valid[pc + 1] &= v;
        }
    }
  return 0;
}

/* The kernel's seccomp_is_const_allow (kernel/seccomp.c, 5.11+): whether
 * the program allows (arch, nr) whatever the arguments, judged the way the
 * kernel judges it to fill its per-syscall action cache — only loads of nr
 * and arch, constant jumps, AND with a constant and RET K are understood;
 * anything else on the path (an argument load above all) means "not
 * cacheable", and the program then runs on every such call. */
bool
securer_bpf_const_allow (const struct sock_filter *insns, unsigned n, uint32_t arch, int nr)
{
  uint32_t reg = 0;
  for (unsigned pc = 0; pc < n; pc++)
    {
      const struct sock_filter *f = &insns[pc];
      switch (f->code)
        {
        case BPF_LD | BPF_W | BPF_ABS:
          if (f->k == offsetof (struct seccomp_data, nr))
            reg = (uint32_t) nr;
          else if (f->k == offsetof (struct seccomp_data, arch))
            reg = arch;
          else
            return false;
          break;
        case BPF_RET | BPF_K:
          return f->k == SECCOMP_RET_ALLOW;
        case BPF_JMP | BPF_JA:
          pc += f->k;
          break;
        case BPF_JMP | BPF_JEQ | BPF_K:
        case BPF_JMP | BPF_JGE | BPF_K:
        case BPF_JMP | BPF_JGT | BPF_K:
        case BPF_JMP | BPF_JSET | BPF_K:
          {
            bool taken;
            switch (BPF_OP (f->code))
              {
              case BPF_JEQ: taken = reg == f->k; break;
              case BPF_JGE: taken = reg >= f->k; break;
              case BPF_JGT: taken = reg > f->k; break;
              default: taken = (reg & f->k) != 0; break;
              }
            pc += taken ? f->jt : f->jf;
            break;
          }
        case BPF_ALU | BPF_AND | BPF_K:
          reg &= f->k;
          break;
        default:
          return false;
        }
    }
  return false;
}
