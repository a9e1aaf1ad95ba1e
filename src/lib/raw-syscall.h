/* System calls made without the C library's wrappers: the kernel's result
 * comes back as it is, a negative errno on failure, and errno is neither
 * read nor written.
 *
 * Two users.  securer-init (src/init/sys.h) has no C library on x86_64 and
 * aarch64.  And the sandbox's pid 1 shares its address space with the
 * payload from the payload's fork until it executes securer-init
 * (linux/init.c): errno, like every thread-local variable, is then one
 * variable for both, so pid 1's steps in that window must leave it alone.
 *
 * SECURER_RAW_SYSCALL is defined where the system call is made here
 * directly; elsewhere the C library's syscall() stands in, and writes
 * errno. */
#ifndef SECURER_RAW_SYSCALL_H
#define SECURER_RAW_SYSCALL_H

#if defined(__x86_64__)
#define SECURER_RAW_SYSCALL 1
static inline __attribute__ ((no_stack_protector)) long
securer_raw_syscall (long n, long a, long b, long c, long d, long e, long f)
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
#define SECURER_RAW_SYSCALL 1
static inline __attribute__ ((no_stack_protector)) long
securer_raw_syscall (long n, long a, long b, long c, long d, long e, long f)
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
#else
#include <errno.h>
#include <unistd.h>
static inline long
securer_raw_syscall (long n, long a, long b, long c, long d, long e, long f)
{
  long r = syscall (n, a, b, c, d, e, f);
  return r < 0 ? -errno : r;
}
#endif

#define SECURER_SYS0(n) securer_raw_syscall ((n), 0, 0, 0, 0, 0, 0)
#define SECURER_SYS1(n, a) securer_raw_syscall ((n), (long) (a), 0, 0, 0, 0, 0)
#define SECURER_SYS2(n, a, b) securer_raw_syscall ((n), (long) (a), (long) (b), 0, 0, 0, 0)
#define SECURER_SYS3(n, a, b, c) securer_raw_syscall ((n), (long) (a), (long) (b), (long) (c), 0, 0, 0)
#define SECURER_SYS4(n, a, b, c, d) \
  securer_raw_syscall ((n), (long) (a), (long) (b), (long) (c), (long) (d), 0, 0)
#define SECURER_SYS5(n, a, b, c, d, e) \
  securer_raw_syscall ((n), (long) (a), (long) (b), (long) (c), (long) (d), (long) (e), 0)
#define SECURER_SYS6(n, a, b, c, d, e, f) \
  securer_raw_syscall ((n), (long) (a), (long) (b), (long) (c), (long) (d), (long) (e), (long) (f))

#endif
