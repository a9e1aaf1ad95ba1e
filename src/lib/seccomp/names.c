/* Syscall names as libseccomp knows them, and errno names. */
#include <config.h>

#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp/seccomp.h"

bool
securer_syscall_known (const char *name)
{
  if (name == NULL || name[0] == '\0')
    return false;
  /* resolve_name() answers for the native arch but also returns the
   * negative pseudo-numbers of syscalls that exist only elsewhere (chown32,
   * _llseek, ...), so shared groups can list every arch's variant. */
  return seccomp_syscall_resolve_name (name) != __NR_SCMP_ERROR;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Native numbers stay well below this on every arch libseccomp supports
 * (x86_64 uses 0..~460; x32 and MIPS bias their numbers, but those are not
 * native here); pseudo-numbers live in -10000..-10999. */
#define NATIVE_NR_MAX 4096
#define PSEUDO_NR_MIN (-11000)

char **
securer_syscall_names (void)
{
  size_t n = 0, cap = 512;
  char **v = malloc (cap * sizeof *v);
  if (v == NULL)
    return NULL;
  for (int nr = PSEUDO_NR_MIN; nr < NATIVE_NR_MAX; nr++)
    {
      if (nr < 0 && nr > -10000)
        nr = 0;
      char *s = seccomp_syscall_resolve_num_arch (SCMP_ARCH_NATIVE, nr);
      if (s == NULL)
        continue;
      if (n + 2 > cap)
        {
          cap *= 2;
          char **nv = realloc (v, cap * sizeof *v);
          if (nv == NULL)
            {
              free (s);
              v[n] = NULL;
              securer_strv_free (v);
              return NULL;
            }
          v = nv;
        }
      v[n++] = s;
    }
  qsort (v, n, sizeof *v, cmp_str);
  /* Several pseudo-syscalls share a number; keep each name once. */
  size_t w = 0;
  for (size_t r = 0; r < n; r++)
    {
      if (w > 0 && strcmp (v[w - 1], v[r]) == 0)
        free (v[r]);
      else
        v[w++] = v[r];
    }
  v[w] = NULL;
  return v;
}

/* ---- errno -------------------------------------------------------------- */

struct errno_entry {
  const char *name;
  int value;
};

/* Canonical names come first so that securer_errno_name() prints the name a
 * reader expects (EAGAIN, not EWOULDBLOCK); aliases follow at the end.
 * Values come from <errno.h>, never typed by hand. */
#define ERRNO_LIST(X) \
  X (EPERM) X (ENOENT) X (ESRCH) X (EINTR) X (EIO) X (ENXIO) X (E2BIG) \
  X (ENOEXEC) X (EBADF) X (ECHILD) X (EAGAIN) X (ENOMEM) X (EACCES) \
  X (EFAULT) X (ENOTBLK) X (EBUSY) X (EEXIST) X (EXDEV) X (ENODEV) \
  X (ENOTDIR) X (EISDIR) X (EINVAL) X (ENFILE) X (EMFILE) X (ENOTTY) \
  X (ETXTBSY) X (EFBIG) X (ENOSPC) X (ESPIPE) X (EROFS) X (EMLINK) X (EPIPE) \
  X (EDOM) X (ERANGE) X (EDEADLK) X (ENAMETOOLONG) X (ENOLCK) X (ENOSYS) \
  X (ENOTEMPTY) X (ELOOP) X (ENOMSG) X (EIDRM) X (ECHRNG) X (EL2NSYNC) \
  X (EL3HLT) X (EL3RST) X (ELNRNG) X (EUNATCH) X (ENOCSI) X (EL2HLT) \
  X (EBADE) X (EBADR) X (EXFULL) X (ENOANO) X (EBADRQC) X (EBADSLT) \
  X (EBFONT) X (ENOSTR) X (ENODATA) X (ETIME) X (ENOSR) X (ENONET) X (ENOPKG) \
  X (EREMOTE) X (ENOLINK) X (EADV) X (ESRMNT) X (ECOMM) X (EPROTO) \
  X (EMULTIHOP) X (EDOTDOT) X (EBADMSG) X (EOVERFLOW) X (ENOTUNIQ) X (EBADFD) \
  X (EREMCHG) X (ELIBACC) X (ELIBBAD) X (ELIBSCN) X (ELIBMAX) X (ELIBEXEC) \
  X (EILSEQ) X (ERESTART) X (ESTRPIPE) X (EUSERS) X (ENOTSOCK) \
  X (EDESTADDRREQ) X (EMSGSIZE) X (EPROTOTYPE) X (ENOPROTOOPT) \
  X (EPROTONOSUPPORT) X (ESOCKTNOSUPPORT) X (EOPNOTSUPP) X (EPFNOSUPPORT) \
  X (EAFNOSUPPORT) X (EADDRINUSE) X (EADDRNOTAVAIL) X (ENETDOWN) \
  X (ENETUNREACH) X (ENETRESET) X (ECONNABORTED) X (ECONNRESET) X (ENOBUFS) \
  X (EISCONN) X (ENOTCONN) X (ESHUTDOWN) X (ETOOMANYREFS) X (ETIMEDOUT) \
  X (ECONNREFUSED) X (EHOSTDOWN) X (EHOSTUNREACH) X (EALREADY) \
  X (EINPROGRESS) X (ESTALE) X (EUCLEAN) X (ENOTNAM) X (ENAVAIL) X (EISNAM) \
  X (EREMOTEIO) X (EDQUOT) X (ENOMEDIUM) X (EMEDIUMTYPE) X (ECANCELED) \
  X (ENOKEY) X (EKEYEXPIRED) X (EKEYREVOKED) X (EKEYREJECTED) X (EOWNERDEAD) \
  X (ENOTRECOVERABLE) X (ERFKILL) X (EHWPOISON) \
  /* aliases */ \
  X (EWOULDBLOCK) X (EDEADLOCK) X (ENOTSUP)

#define ENTRY(x) { #x, x },
static const struct errno_entry errno_table[] = { ERRNO_LIST (ENTRY) };
#undef ENTRY
#define NAME(x) #x,
static const char *const errno_names[] = { ERRNO_LIST (NAME) NULL };
#undef NAME

int
securer_errno_lookup (const char *name, int *value)
{
  if (name == NULL)
    return -1;
  for (size_t i = 0; i < sizeof errno_table / sizeof errno_table[0]; i++)
    if (strcmp (errno_table[i].name, name) == 0)
      {
        *value = errno_table[i].value;
        return 0;
      }
  return -1;
}

const char *
securer_errno_name (int value)
{
  for (size_t i = 0; i < sizeof errno_table / sizeof errno_table[0]; i++)
    if (errno_table[i].value == value)
      return errno_table[i].name;
  return NULL;
}

const char *const *
securer_errno_names (void)
{
  return errno_names;
}
