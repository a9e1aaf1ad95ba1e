/* Landlock user-space ABI, up to ABI 7.
 *
 * Debian 12's <linux/landlock.h> stops at ABI 2 while the kernels securer
 * runs on go further, so the project carries the definitions itself.  The
 * names are prefixed (SECURER_LL_*, struct securer_ll_*) so that this header
 * never collides with whatever version of the system header a translation
 * unit also pulls in.  Values and layouts are the kernel's and never change
 * (Landlock's ABI is append-only). */
#ifndef SECURER_LANDLOCK_UAPI_H
#define SECURER_LANDLOCK_UAPI_H

#include <stdint.h>
#include <sys/syscall.h>

/* ---- syscalls (same numbers on every architecture since 5.13) ---------- */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

/* ---- landlock_create_ruleset() ----------------------------------------- */
/* Each field is read only when the passed size covers it: an ABI 1..3
 * kernel is given 8 bytes, ABI 4..5 16 bytes, ABI 6+ 24 bytes. */
struct securer_ll_ruleset_attr {
  uint64_t handled_access_fs;   /* ABI 1 */
  uint64_t handled_access_net;  /* ABI 4 */
  uint64_t scoped;              /* ABI 6 */
};

#define SECURER_LL_CREATE_RULESET_VERSION (1U << 0)
#define SECURER_LL_CREATE_RULESET_ERRATA (1U << 1)  /* ABI 7 kernels and fixes */

/* ---- landlock_add_rule() ----------------------------------------------- */
enum securer_ll_rule_type {
  SECURER_LL_RULE_PATH_BENEATH = 1,
  SECURER_LL_RULE_NET_PORT = 2,  /* ABI 4 */
};

struct securer_ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__ ((packed));

struct securer_ll_net_port_attr {
  uint64_t allowed_access;
  uint64_t port;  /* host byte order */
};

/* ---- landlock_restrict_self() flags (ABI 7) ----------------------------- */
#define SECURER_LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#define SECURER_LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#define SECURER_LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)

/* ---- filesystem access rights ------------------------------------------ */
#define SECURER_LL_ACCESS_FS_EXECUTE (1ULL << 0)
#define SECURER_LL_ACCESS_FS_WRITE_FILE (1ULL << 1)
#define SECURER_LL_ACCESS_FS_READ_FILE (1ULL << 2)
#define SECURER_LL_ACCESS_FS_READ_DIR (1ULL << 3)
#define SECURER_LL_ACCESS_FS_REMOVE_DIR (1ULL << 4)
#define SECURER_LL_ACCESS_FS_REMOVE_FILE (1ULL << 5)
#define SECURER_LL_ACCESS_FS_MAKE_CHAR (1ULL << 6)
#define SECURER_LL_ACCESS_FS_MAKE_DIR (1ULL << 7)
#define SECURER_LL_ACCESS_FS_MAKE_REG (1ULL << 8)
#define SECURER_LL_ACCESS_FS_MAKE_SOCK (1ULL << 9)
#define SECURER_LL_ACCESS_FS_MAKE_FIFO (1ULL << 10)
#define SECURER_LL_ACCESS_FS_MAKE_BLOCK (1ULL << 11)
#define SECURER_LL_ACCESS_FS_MAKE_SYM (1ULL << 12)
#define SECURER_LL_ACCESS_FS_REFER (1ULL << 13)      /* ABI 2 */
#define SECURER_LL_ACCESS_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define SECURER_LL_ACCESS_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */

/* ---- network access rights (ABI 4) -------------------------------------- */
#define SECURER_LL_ACCESS_NET_BIND_TCP (1ULL << 0)
#define SECURER_LL_ACCESS_NET_CONNECT_TCP (1ULL << 1)

/* ---- scopes (ABI 6) ----------------------------------------------------- */
#define SECURER_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define SECURER_LL_SCOPE_SIGNAL (1ULL << 1)

/* ---- what each ABI version knows ---------------------------------------- */
#define SECURER_LL_FS_ABI1 ((1ULL << 13) - 1)  /* EXECUTE .. MAKE_SYM */
#define SECURER_LL_FS_ABI2 (SECURER_LL_FS_ABI1 | SECURER_LL_ACCESS_FS_REFER)
#define SECURER_LL_FS_ABI3 (SECURER_LL_FS_ABI2 | SECURER_LL_ACCESS_FS_TRUNCATE)
#define SECURER_LL_FS_ABI5 (SECURER_LL_FS_ABI3 | SECURER_LL_ACCESS_FS_IOCTL_DEV)
#define SECURER_LL_NET_ABI4 (SECURER_LL_ACCESS_NET_BIND_TCP | SECURER_LL_ACCESS_NET_CONNECT_TCP)
#define SECURER_LL_SCOPE_ABI6 (SECURER_LL_SCOPE_ABSTRACT_UNIX_SOCKET | SECURER_LL_SCOPE_SIGNAL)

/* The newest ABI whose definitions this header carries. */
#define SECURER_LL_ABI_KNOWN 7

#endif
