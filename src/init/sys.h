/* The few system calls securer-init makes, without a C library where the
 * architecture allows it.
 *
 * securer-init starts once per sandbox, on the way from the sandbox's
 * setup to the command: the command may not execute before securer-init
 * has made itself undumpable.  A C library's start-up is most of what such
 * a small program costs there: glibc's static start-up queries the CPU's
 * features and caches with dozens of CPUID instructions, each of which
 * traps to the hypervisor on a virtual machine (about 4 us each measured
 * here, 0.2 ms per start), and it applies IRELATIVE relocations for its
 * string functions.  On x86_64 and aarch64 this program has its own entry
 * point and makes its system calls directly; elsewhere (INIT_LIBC) the C
 * library provides them.
 *
 * Every function returns the kernel's result: a negative errno on failure. */
#ifndef SECURER_INIT_SYS_H
#define SECURER_INIT_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#if !defined(INIT_LIBC) && !defined(__x86_64__) && !defined(__aarch64__)
#define INIT_LIBC 1
#endif

#ifdef INIT_LIBC
#include <errno.h>
#include <unistd.h>

static inline long
init_syscall (long n, long a, long b, long c, long d, long e, long f)
{
  long r = syscall (n, a, b, c, d, e, f);
  return r < 0 ? -errno : r;
}
#elif defined(__x86_64__)
static inline __attribute__ ((no_stack_protector)) long
init_syscall (long n, long a, long b, long c, long d, long e, long f)
{
  register long r10 __asm__ ("r10") = d;
  register long r8 __asm__ ("r8") = e;
  register long r9 __asm__ ("r9") = f;
  long ret;
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "a" (n), "D" (a), "S" (b), "d" (c), "r" (r10), "r" (r8), "r" (r9)
                    : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
static inline __attribute__ ((no_stack_protector)) long
init_syscall (long n, long a, long b, long c, long d, long e, long f)
{
  register long x8 __asm__ ("x8") = n;
  register long x0 __asm__ ("x0") = a;
  register long x1 __asm__ ("x1") = b;
  register long x2 __asm__ ("x2") = c;
  register long x3 __asm__ ("x3") = d;
  register long x4 __asm__ ("x4") = e;
  register long x5 __asm__ ("x5") = f;
  __asm__ volatile ("svc 0"
                    : "+r" (x0)
                    : "r" (x8), "r" (x1), "r" (x2), "r" (x3), "r" (x4), "r" (x5)
                    : "memory", "cc");
  return x0;
}
#endif

/* Without a C library there is no thread pointer holding a stack canary:
 * every function of the program is built without the stack protector,
 * whatever the CFLAGS a distribution's build passes (-fstack-protector-strong). */
#ifdef INIT_LIBC
#define INIT_FN
#else
#define INIT_FN __attribute__ ((no_stack_protector))
#endif

#define SYS0(n) init_syscall ((n), 0, 0, 0, 0, 0, 0)
#define SYS1(n, a) init_syscall ((n), (long) (a), 0, 0, 0, 0, 0)
#define SYS2(n, a, b) init_syscall ((n), (long) (a), (long) (b), 0, 0, 0, 0)
#define SYS3(n, a, b, c) init_syscall ((n), (long) (a), (long) (b), (long) (c), 0, 0, 0)
#define SYS4(n, a, b, c, d) init_syscall ((n), (long) (a), (long) (b), (long) (c), (long) (d), 0, 0)
#define SYS5(n, a, b, c, d, e) \
  init_syscall ((n), (long) (a), (long) (b), (long) (c), (long) (d), (long) (e), 0)
#define SYS6(n, a, b, c, d, e, f) \
  init_syscall ((n), (long) (a), (long) (b), (long) (c), (long) (d), (long) (e), (long) (f))

/* The kernel's signal set: 64 signals, one bit each (bit n-1 for signal n). */
typedef uint64_t ksigset_t;

/* The kernel's siginfo is 128 bytes; only the signal number is read. */
struct ksiginfo {
  int32_t si_signo;
  int32_t pad[31];
};

#endif
