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
#define ENTRY_MAGIC "SECRUL01"
/* Far above a compiled program of the largest policy (a few hundred rules
 * and at most BPF_MAXINSNS instructions). */
#define ENTRY_MAX (4u << 20)

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

#define NAME_MAX_LEN (2 * SECURER_SHA256_LEN + 8)

/* Programs end in ".bpf", whole compiled programs keyed by rule text in
 * ".rules": the two kinds never share a name. */
static void
file_name (char out[NAME_MAX_LEN], const unsigned char key[SECURER_SHA256_LEN], const char *suffix)
{
  for (int i = 0; i < SECURER_SHA256_LEN; i++)
    snprintf (out + 2 * i, 3, "%02x", key[i]);
  snprintf (out + 2 * SECURER_SHA256_LEN, NAME_MAX_LEN - 2 * SECURER_SHA256_LEN, "%s", suffix);
}

/* The file for key, opened when it is ours alone: a regular file with one
 * link, owned by the effective uid, writable by nobody else, at least
 * min_size bytes.  -1 otherwise. */
static int
open_owned (int dirfd, const unsigned char key[SECURER_SHA256_LEN], const char *suffix, size_t min_size,
            struct stat *st)
{
  char name[NAME_MAX_LEN];
  file_name (name, key, suffix);
  int fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return -1;
  if (fstat (fd, st) < 0 || !S_ISREG (st->st_mode) || st->st_uid != geteuid () || (st->st_mode & 022) != 0
      || st->st_nlink != 1 || (size_t) st->st_size < min_size)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static void
digest (const void *header, size_t header_len, const void *body, size_t body_len,
        unsigned char out[SECURER_SHA256_LEN])
{
  struct securer_sha256 s;
  securer_sha256_init (&s);
  securer_sha256_update (&s, header, header_len);
  securer_sha256_update (&s, body, body_len);
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

/* The body after a header already read and checked: body_len bytes and
 * the SHA-256 of header and body, which must match.  Returns the body
 * (malloc'd) or NULL. */
static void *
read_body (int fd, const void *header, size_t header_len, size_t body_len)
{
  unsigned char sum[SECURER_SHA256_LEN], want[SECURER_SHA256_LEN];
  void *buf = malloc (body_len);
  if (buf == NULL || !read_all (fd, buf, body_len) || !read_all (fd, sum, sizeof sum))
    {
      free (buf);
      return NULL;
    }
  digest (header, header_len, buf, body_len, want);
  if (memcmp (sum, want, sizeof sum) != 0)
    {
      free (buf);
      return NULL;
    }
  return buf;
}

int
securer_seccomp_cache_get (int dirfd, const unsigned char key[SECURER_SHA256_LEN], struct sock_filter **insns,
                           unsigned *n, uint64_t *flags)
{
  struct stat st;
  struct cache_header h;
  int fd = open_owned (dirfd, key, ".bpf", sizeof h + SECURER_SHA256_LEN, &st);
  if (fd < 0)
    return 0;
  struct sock_filter *buf = NULL;
  if (read_all (fd, &h, sizeof h) && memcmp (h.magic, MAGIC, sizeof h.magic) == 0
      && memcmp (h.key, key, sizeof h.key) == 0 && h.zero == 0 && h.n > 0 && h.n <= BPF_MAXINSNS
      && (size_t) st.st_size == sizeof h + h.n * sizeof *buf + SECURER_SHA256_LEN)
    buf = read_body (fd, &h, sizeof h, h.n * sizeof *buf);
  close (fd);
  if (buf == NULL)
    return 0;
  *insns = buf;
  *n = h.n;
  *flags = h.flags;
  return 1;
}

struct entry_header {
  char magic[8];
  unsigned char key[SECURER_SHA256_LEN];
  uint64_t len;
};

int
securer_seccomp_cache_get_entry (int dirfd, const unsigned char key[SECURER_SHA256_LEN], unsigned char **data,
                                 size_t *len)
{
  struct stat st;
  struct entry_header h;
  int fd = open_owned (dirfd, key, ".rules", sizeof h + SECURER_SHA256_LEN, &st);
  if (fd < 0)
    return 0;
  unsigned char *buf = NULL;
  if (read_all (fd, &h, sizeof h) && memcmp (h.magic, ENTRY_MAGIC, sizeof h.magic) == 0
      && memcmp (h.key, key, sizeof h.key) == 0 && h.len > 0 && h.len <= ENTRY_MAX
      && (uint64_t) st.st_size == sizeof h + h.len + SECURER_SHA256_LEN)
    buf = read_body (fd, &h, sizeof h, h.len);
  close (fd);
  if (buf == NULL)
    return 0;
  *data = buf;
  *len = h.len;
  return 1;
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

/* Writes header, body and their digest under a random name and renames
 * the file into place: a reader sees the whole file or none, and
 * concurrent writers of the same key agree. */
static void
put_file (int dirfd, const unsigned char key[SECURER_SHA256_LEN], const char *suffix, const void *header,
          size_t header_len, const void *body, size_t body_len)
{
  unsigned char sum[SECURER_SHA256_LEN];
  digest (header, header_len, body, body_len, sum);
  unsigned char rnd[8];
  if (getrandom (rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t) sizeof rnd)
    return;
  char tmp[32];
  snprintf (tmp, sizeof tmp, ".tmp-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
            rnd[5], rnd[6], rnd[7]);
  int fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  bool ok = write_all (fd, header, header_len) && write_all (fd, body, body_len) && write_all (fd, sum, sizeof sum);
  ok = close (fd) == 0 && ok;
  char name[NAME_MAX_LEN];
  file_name (name, key, suffix);
  if (!ok || renameat (dirfd, tmp, dirfd, name) < 0)
    unlinkat (dirfd, tmp, 0);
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
  put_file (dirfd, key, ".bpf", &h, sizeof h, insns, n * sizeof *insns);
}

void
securer_seccomp_cache_put_entry (int dirfd, const unsigned char key[SECURER_SHA256_LEN], const void *data,
                                 size_t len)
{
  if (len == 0 || len > ENTRY_MAX)
    return;
  struct entry_header h;
  memset (&h, 0, sizeof h);
  memcpy (h.magic, ENTRY_MAGIC, sizeof h.magic);
  memcpy (h.key, key, sizeof h.key);
  h.len = len;
  put_file (dirfd, key, ".rules", &h, sizeof h, data, len);
}
