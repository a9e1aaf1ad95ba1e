/* Compiled seccomp filters kept across launches, addressed by content.
 *
 * libseccomp's generation of a filter is most of a launch's CPU time, and
 * the same policy gives the same program every time.  The program is kept
 * in a file named by the SHA-256 of everything that decides its bytes (see
 * compile.c: the resolved rules, actions, the flags, the libseccomp
 * version, the arch, the kernel's seccomp API level).
 *
 * A filter is the sandbox's last line of defence, so what is read back is
 * trusted only as far as its storage: the directory must be owned by the
 * caller's effective uid and closed to everyone else (mode 0700, not a
 * symlink), every file in it owned by that uid, a regular file with one
 * link, writable by nobody else; anything else is ignored, never repaired.
 * All access goes through the one directory descriptor, so the path cannot
 * be swapped between the check and the use.  A file then has to carry its
 * own key and a SHA-256 of its contents, and compile.c checks the program
 * as the kernel would and compares its verdicts with the policy's before
 * using it.  docs/security.md has the reasoning. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seccomp/seccomp.h"
#include "sha256.h"

#define MAGIC "SECBPF01"

struct cache_header {
  char magic[8];
  unsigned char key[SECURER_SHA256_LEN];
  uint64_t flags;
  uint32_t n;
  uint32_t zero;
};

/* Opens dir (creating it 0700 when missing, its parent too when create_parent)
 * and checks it is ours alone. */
static int
open_trusted_dir (const char *dir, bool create_parent)
{
  if (dir[0] != '/' || strlen (dir) >= PATH_MAX)
    return -1;
  if (create_parent)
    {
      char parent[PATH_MAX];
      snprintf (parent, sizeof parent, "%s", dir);
      char *slash = strrchr (parent, '/');
      if (slash != NULL && slash != parent)
        {
          *slash = '\0';
          (void) mkdir (parent, 0700);
        }
    }
  (void) mkdir (dir, 0700);
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat st;
  if (fstat (fd, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & 077) != 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

int
securer_seccomp_cache_open (void)
{
  const char *env = secure_getenv ("SECURER_SECCOMP_CACHE");
  if (env != NULL && env[0] != '\0')
    {
      if (strcmp (env, "off") == 0 || strcmp (env, "0") == 0 || strcmp (env, "no") == 0)
        return -1;
      return open_trusted_dir (env, false);
    }
  char dir[PATH_MAX];
  if (geteuid () == 0)
    snprintf (dir, sizeof dir, "/var/cache/securer/seccomp");
  else
    {
      const char *xdg = secure_getenv ("XDG_CACHE_HOME"), *home = secure_getenv ("HOME");
      int k;
      if (xdg != NULL && xdg[0] == '/')
        k = snprintf (dir, sizeof dir, "%s/securer/seccomp", xdg);
      else if (home != NULL && home[0] == '/')
        k = snprintf (dir, sizeof dir, "%s/.cache/securer/seccomp", home);
      else
        return -1;
      if (k < 0 || (size_t) k >= sizeof dir)
        return -1;
    }
  return open_trusted_dir (dir, true);
}

static void
file_name (char out[2 * SECURER_SHA256_LEN + 5], const unsigned char key[SECURER_SHA256_LEN])
{
  for (int i = 0; i < SECURER_SHA256_LEN; i++)
    snprintf (out + 2 * i, 3, "%02x", key[i]);
  memcpy (out + 2 * SECURER_SHA256_LEN, ".bpf", 5);
}

static void
digest (const struct cache_header *h, const struct sock_filter *insns, unsigned char out[SECURER_SHA256_LEN])
{
  struct securer_sha256 s;
  securer_sha256_init (&s);
  securer_sha256_update (&s, h, sizeof *h);
  securer_sha256_update (&s, insns, h->n * sizeof *insns);
  securer_sha256_final (&s, out);
}

static bool
read_all (int fd, void *buf, size_t len)
{
  size_t got = 0;
  while (got < len)
    {
      ssize_t n = read (fd, (char *) buf + got, len - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      got += (size_t) n;
    }
  return true;
}

int
securer_seccomp_cache_get (int dirfd, const unsigned char key[SECURER_SHA256_LEN], struct sock_filter **insns,
                           unsigned *n, uint64_t *flags)
{
  char name[2 * SECURER_SHA256_LEN + 5];
  file_name (name, key);
  int fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return 0;
  struct stat st;
  struct cache_header h;
  unsigned char sum[SECURER_SHA256_LEN], want[SECURER_SHA256_LEN];
  struct sock_filter *buf = NULL;
  int rc = 0;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid () || (st.st_mode & 022) != 0
      || st.st_nlink != 1 || (size_t) st.st_size < sizeof h + sizeof sum || !read_all (fd, &h, sizeof h))
    goto out;
  if (memcmp (h.magic, MAGIC, sizeof h.magic) != 0 || memcmp (h.key, key, sizeof h.key) != 0 || h.zero != 0
      || h.n == 0 || h.n > BPF_MAXINSNS
      || (size_t) st.st_size != sizeof h + h.n * sizeof *buf + sizeof sum)
    goto out;
  buf = malloc (h.n * sizeof *buf);
  if (buf == NULL || !read_all (fd, buf, h.n * sizeof *buf) || !read_all (fd, sum, sizeof sum))
    goto out;
  digest (&h, buf, want);
  if (memcmp (sum, want, sizeof sum) != 0)
    goto out;
  *insns = buf;
  buf = NULL;
  *n = h.n;
  *flags = h.flags;
  rc = 1;
out:
  free (buf);
  close (fd);
  return rc;
}

static bool
write_all (int fd, const void *buf, size_t len)
{
  size_t done = 0;
  while (done < len)
    {
      ssize_t n = write (fd, (const char *) buf + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      done += (size_t) n;
    }
  return true;
}

void
securer_seccomp_cache_put (int dirfd, const unsigned char key[SECURER_SHA256_LEN], const struct sock_filter *insns,
                           unsigned n, uint64_t flags)
{
  if (n == 0 || n > BPF_MAXINSNS)
    return;
  struct cache_header h;
  memset (&h, 0, sizeof h);
  memcpy (h.magic, MAGIC, sizeof h.magic);
  memcpy (h.key, key, sizeof h.key);
  h.flags = flags;
  h.n = n;
  unsigned char sum[SECURER_SHA256_LEN];
  digest (&h, insns, sum);

  /* Written under a random name and renamed into place: a reader sees the
   * whole file or none, and concurrent writers of the same key agree. */
  unsigned char rnd[8];
  if (getrandom (rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t) sizeof rnd)
    return;
  char tmp[32];
  snprintf (tmp, sizeof tmp, ".tmp-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
            rnd[5], rnd[6], rnd[7]);
  int fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  bool ok = write_all (fd, &h, sizeof h) && write_all (fd, insns, n * sizeof *insns) && write_all (fd, sum, sizeof sum);
  ok = close (fd) == 0 && ok;
  char name[2 * SECURER_SHA256_LEN + 5];
  file_name (name, key);
  if (!ok || renameat (dirfd, tmp, dirfd, name) < 0)
    unlinkat (dirfd, tmp, 0);
}
