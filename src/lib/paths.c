/* Data search path; see include/securer/paths.h. */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "securer/paths.h"

static const char *dirs[4];
static char env_dir[PATH_MAX];
static pthread_once_t dirs_once = PTHREAD_ONCE_INIT;

/* True when the running executable sits below the build directory, i.e.
 * it is ./securer or a test program that has not been installed. */
static int
running_from_build_tree (void)
{
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0)
    return 0;
  exe[n] = '\0';
  size_t bl = strlen (SECURER_ABS_BUILDDIR);
  return strncmp (exe, SECURER_ABS_BUILDDIR, bl) == 0 && exe[bl] == '/';
}

static void
init_dirs (void)
{
  size_t i = 0;
  const char *e = secure_getenv ("SECURER_DATADIR");
  if (e != NULL && e[0] == '/' && strlen (e) < sizeof env_dir)
    {
      strcpy (env_dir, e);
      dirs[i++] = env_dir;
    }
  if (running_from_build_tree ())
    dirs[i++] = SECURER_ABS_SRCDIR;
  dirs[i++] = SECURER_PKGDATADIR;
  dirs[i] = NULL;
}

const char *const *
securer_data_dirs (void)
{
  pthread_once (&dirs_once, init_dirs);
  return dirs;
}

char *
securer_data_find (const char *relpath, securer_err_t *err)
{
  const char *const *d = securer_data_dirs ();
  char searched[1024] = "";
  for (; *d != NULL; d++)
    {
      char *p = NULL;
      if (asprintf (&p, "%s/%s", *d, relpath) < 0)
        {
          securer_error_set (err, ENOMEM, "find %s", relpath);
          return NULL;
        }
      if (access (p, R_OK) == 0)
        return p;
      free (p);
      size_t used = strlen (searched);
      snprintf (searched + used, sizeof searched - used, "%s%s", used ? ", " : "", *d);
    }
  securer_error_set (err, ENOENT, "%s not found (searched %s)", relpath, searched);
  return NULL;
}

const char *
securer_libexec_dir (void)
{
  static int in_tree = -1;
  if (in_tree < 0)
    in_tree = running_from_build_tree ();
  return in_tree ? SECURER_ABS_BUILDDIR : SECURER_LIBEXECDIR;
}
