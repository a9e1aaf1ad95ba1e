/* Syscall arguments the kernel reads as 32-bit values (argwidth.c). */
#ifndef SECURER_SECCOMP_ARGWIDTH_H
#define SECURER_SECCOMP_ARGWIDTH_H

#include <stddef.h>

/* Bit n set: argument n of `name` is 32-bit. */
unsigned securer_syscall_args32 (const char *name);
/* The i-th entry of the table (sorted by name), NULL past the end. */
const char *securer_syscall_args32_name (size_t i);

#endif
