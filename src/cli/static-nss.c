/* Linked into the static CLI only (configure.ac, --enable-static-cli).
 *
 * libcap-ng, linked in for its capability names, also holds
 * capng_change_id, which looks users up through NSS; in a static program
 * that would load glibc's shared NSS modules at run time.  securer never
 * changes ids through libcap-ng and never looks up a user, so the two
 * entry points are bound (ld --wrap) to these refusals instead: nothing
 * is loaded behind the caller's back, and the link carries no NSS. */
#include <config.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <sys/types.h>

struct passwd *__wrap_getpwuid (uid_t uid);
int __wrap_initgroups (const char *user, gid_t group);

struct passwd *
__wrap_getpwuid (uid_t uid)
{
  (void) uid;
  errno = ENOSYS;
  return NULL;
}

int
__wrap_initgroups (const char *user, gid_t group)
{
  (void) user;
  (void) group;
  errno = ENOSYS;
  return -1;
}
