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

/* The system call itself: src/lib/raw-syscall.h, which falls back on the
 * C library's syscall() where it has no code of its own. */
#include "raw-syscall.h"

/* Without a C library there is no thread pointer holding a stack canary:
 * every function of the program is built without the stack protector,
 * whatever the CFLAGS a distribution's build passes (-fstack-protector-strong). */
#ifdef INIT_LIBC
#define INIT_FN
#else
#define INIT_FN __attribute__ ((no_stack_protector))
#endif

#define SYS0 SECURER_SYS0
#define SYS1 SECURER_SYS1
#define SYS2 SECURER_SYS2
#define SYS3 SECURER_SYS3
#define SYS4 SECURER_SYS4
#define SYS5 SECURER_SYS5
#define SYS6 SECURER_SYS6

/* The kernel's signal set: 64 signals, one bit each (bit n-1 for signal n). */
typedef uint64_t ksigset_t;

/* The kernel's siginfo is 128 bytes; only the signal number is read. */
struct ksiginfo {
  int32_t si_signo;
  int32_t pad[31];
};

#endif
