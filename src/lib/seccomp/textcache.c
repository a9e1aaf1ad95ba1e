/* Whole compiled programs, addressed by the policy's rule text.
 *
 * The cache of generated programs (cache.c) spares a launch libseccomp's
 * generation, but its key is the resolved rules: every launch still reads
 * and expands the @group files, builds some four hundred rules and checks
 * them, which is most of what `securer run` does on its way to the command.
 * Everything that resolution produces — the rules as the compiler keeps
 * them, the program and its load flags — is decided by the words of the
 * policy's rule lines, the group files they reach, the default and
 * foreign-ABI actions, the fd denials are handed over on, and securer's,
 * libseccomp's and the kernel's versions.  Hashed together they address one
 * entry holding the compiled program whole, so a launch whose policy text
 * and group files have not changed skips the resolution.
 *
 * The group files are part of the key by content, read at every launch:
 * editing one, or a new file earlier in the data search path, is a miss.
 * An entry is stored only after a resolution without an error, and only
 * when the group files still hash as they did before it (a file changed in
 * between must not leave an entry for contents that were never resolved).
 * Entries live in the cache directory of programs, under the same rules of
 * ownership; docs/security.md ("Cache of compiled filters") says what is
 * checked when one is read back. */
#include <config.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "securer/paths.h"
#include "seccomp/prog.h"
#include "seccomp/seccomp.h"
#include "sha256.h"

#define TEXT_FORMAT 1
#define MAX_GROUP_DEPTH 32
/* Group files are a few kilobytes; a bigger one is not read into a key. */
#define MAX_GROUP_FILE (1u << 20)
#define MAX_ENTRY_RULES 65536

static void
put_u64 (struct securer_sha256 *s, uint64_t v)
{
  securer_sha256_update (s, &v, sizeof v);
}

static void
put_str (struct securer_sha256 *s, const char *str, size_t len)
{
  put_u64 (s, len);
  securer_sha256_update (s, str, len);
}

/* ---- the key ---------------------------------------------------------------- */

struct names {
  char **v;
  size_t n, cap;
};

static bool
names_has (const struct names *ns, const char *name, size_t len)
{
  for (size_t i = 0; i < ns->n; i++)
    if (strlen (ns->v[i]) == len && memcmp (ns->v[i], name, len) == 0)
      return true;
  return false;
}

static int
names_add (struct names *ns, const char *name, size_t len)
{
  if (ns->n == ns->cap)
    {
      size_t cap = ns->cap ? ns->cap * 2 : 16;
      char **v = realloc (ns->v, cap * sizeof *v);
      if (v == NULL)
        return -1;
      ns->v = v;
      ns->cap = cap;
    }
  char *d = strndup (name, len);
  if (d == NULL)
    return -1;
  ns->v[ns->n++] = d;
  return 0;
}

static void
names_clear (struct names *ns)
{
  for (size_t i = 0; i < ns->n; i++)
    free (ns->v[i]);
  free (ns->v);
  memset (ns, 0, sizeof *ns);
}

struct lines_ctx {
  struct securer_sha256 s;
  struct names groups;
  bool oom;
};

static void
feed_word (void *ctx, size_t line, const char *word, bool quoted)
{
  struct lines_ctx *lc = ctx;
  size_t len = strlen (word);
  put_u64 (&lc->s, line);
  put_u64 (&lc->s, quoted);
  put_str (&lc->s, word, len);
  /* Every unquoted @word, conditions included: a name that is no group
   * only adds a file the resolution will not read (or an absent one). */
  if (!quoted && word[0] == '@' && !names_has (&lc->groups, word + 1, len - 1)
      && names_add (&lc->groups, word + 1, len - 1) < 0)
    lc->oom = true;
}

static char *
read_small (const char *path, size_t *len)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return NULL;
  struct stat st;
  char *buf = NULL;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && (uint64_t) st.st_size <= MAX_GROUP_FILE
      && (buf = malloc ((size_t) st.st_size + 1)) != NULL)
    {
      size_t got = 0;
      ssize_t n;
      while ((n = read (fd, buf + got, (size_t) st.st_size + 1 - got)) > 0 && got + (size_t) n <= (size_t) st.st_size)
        got += (size_t) n;
      /* A file that grew or failed while being read is not keyed. */
      if (n != 0 || got != (size_t) st.st_size)
        {
          free (buf);
          buf = NULL;
        }
      else
        *len = got;
    }
  close (fd);
  return buf;
}

/* The @entries of a group file, read as groups.c reads it: '#' starts a
 * comment, blanks around an entry do not count. */
static int
walk_group (struct securer_sha256 *s, struct names *seen, const char *name, unsigned depth);

static int
walk_entries (struct securer_sha256 *s, struct names *seen, const char *buf, size_t len, unsigned depth)
{
  size_t i = 0;
  while (i < len)
    {
      size_t end = i;
      while (end < len && buf[end] != '\n')
        end++;
      size_t stop = i;
      while (stop < end && buf[stop] != '#')
        stop++;
      size_t a = i;
      while (a < stop && (buf[a] == ' ' || buf[a] == '\t' || buf[a] == '\r' || buf[a] == '\v' || buf[a] == '\f'))
        a++;
      if (a < stop && buf[a] == '@')
        {
          size_t b = a + 1;
          while (b < stop && buf[b] != ' ' && buf[b] != '\t' && buf[b] != '\r' && buf[b] != '\v' && buf[b] != '\f')
            b++;
          char name[80];
          if (b - a - 1 < sizeof name)
            {
              memcpy (name, buf + a + 1, b - a - 1);
              name[b - a - 1] = '\0';
              if (walk_group (s, seen, name, depth + 1) < 0)
                return -1;
            }
        }
      i = end + 1;
    }
  return 0;
}

static int
walk_group (struct securer_sha256 *s, struct names *seen, const char *name, unsigned depth)
{
  size_t nlen = strlen (name);
  if (names_has (seen, name, nlen))
    return 0;
  if (depth > MAX_GROUP_DEPTH || names_add (seen, name, nlen) < 0)
    return -1;
  put_str (s, name, nlen);
  /* "known" is libseccomp's own list (its version is in the key); a name
   * that cannot be a file is an error of the resolution, never a file. */
  if (strcmp (name, "known") == 0 || !securer_group_name_valid (name))
    {
      put_u64 (s, 0);
      return 0;
    }
  char rel[128];
  snprintf (rel, sizeof rel, "seccomp/%s.syscalls", name);
  securer_err_t err = NULL;
  char *path = securer_data_find (rel, &err);
  securer_error_free (&err);
  if (path == NULL)
    {
      put_u64 (s, 1);
      return 0;
    }
  size_t len = 0;
  char *buf = read_small (path, &len);
  int rc = -1;
  if (buf != NULL)
    {
      put_u64 (s, 2);
      put_str (s, path, strlen (path));
      put_str (s, buf, len);
      rc = walk_entries (s, seen, buf, len, depth);
    }
  free (buf);
  free (path);
  return rc;
}

/* ---- this build ------------------------------------------------------------ */

/* The linker's build id of the object this code is in (the securer program,
 * or libsecurer): a patch to the compiler that keeps the version number,
 * as a distribution's security update does, is another build, and an entry
 * it did not make is never read as its own. */
struct build_id {
  unsigned char id[64];
  size_t len;
};

static struct build_id this_build;
static pthread_once_t this_build_once = PTHREAD_ONCE_INIT;

static bool
note_build_id (const unsigned char *p, const unsigned char *end, size_t align, struct build_id *out)
{
  while ((size_t) (end - p) >= sizeof (ElfW (Nhdr)))
    {
      const ElfW (Nhdr) *n = (const void *) p;
      size_t name = (n->n_namesz + align - 1) & ~(align - 1), desc = (n->n_descsz + align - 1) & ~(align - 1);
      const unsigned char *d = p + sizeof *n + name;
      if (d > end || (size_t) (end - d) < n->n_descsz)
        return false;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp (p + sizeof *n, "GNU", 4) == 0
          && n->n_descsz > 0 && n->n_descsz <= sizeof out->id)
        {
          memcpy (out->id, d, n->n_descsz);
          out->len = n->n_descsz;
          return true;
        }
      if ((size_t) (end - d) < desc)
        return false;
      p = d + desc;
    }
  return false;
}

static int
find_build_id (struct dl_phdr_info *info, size_t size, void *data)
{
  (void) size;
  uintptr_t here = (uintptr_t) &find_build_id;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum && !mine; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      uintptr_t start = info->dlpi_addr + ph->p_vaddr;
      mine = ph->p_type == PT_LOAD && here >= start && here - start < ph->p_memsz;
    }
  if (!mine)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *ph = &info->dlpi_phdr[i];
      if (ph->p_type != PT_NOTE)
        continue;
      const unsigned char *p = (const unsigned char *) (info->dlpi_addr + ph->p_vaddr);
      if (note_build_id (p, p + ph->p_memsz, ph->p_align == 8 ? 8 : 4, data))
        break;
    }
  return 1;
}

static void
read_this_build (void)
{
  dl_iterate_phdr (find_build_id, &this_build);
}

static void
put_action (struct securer_sha256 *s, struct securer_action a)
{
  put_u64 (s, (uint64_t) a.type);
  put_u64 (s, (uint64_t) (int64_t) a.errnum);
}

static int
compute_key (const struct securer_seccomp_textkey *tk, const struct securer_policy *p, int send_fd,
             unsigned char out[SECURER_SHA256_LEN])
{
  pthread_once (&this_build_once, read_this_build);
  /* Without a build id there is no telling builds apart: no entry. */
  if (this_build.len == 0)
    return -1;
  struct securer_sha256 s;
  securer_sha256_init (&s);
  static const char tag[] = "securer seccomp rule text " PACKAGE_VERSION;
  securer_sha256_update (&s, tag, sizeof tag);
  put_str (&s, (const char *) this_build.id, this_build.len);
  const struct scmp_version *v = seccomp_version ();
  put_u64 (&s, TEXT_FORMAT);
  put_u64 (&s, v ? v->major : 0);
  put_u64 (&s, v ? v->minor : 0);
  put_u64 (&s, v ? v->micro : 0);
  put_u64 (&s, seccomp_arch_native ());
  /* The kernel's build instead of seccomp_api_get (): the same build has
   * the same seccomp API level, and asking libseccomp probes the kernel
   * with a dozen system calls. */
  struct utsname u;
  if (uname (&u) < 0)
    return -1;
  put_str (&s, u.release, strlen (u.release));
  put_str (&s, u.version, strlen (u.version));
  put_u64 (&s, (uint64_t) (int64_t) send_fd);
  put_action (&s, p->seccomp.default_action);
  put_action (&s, p->seccomp.foreign_arch);
  /* `network allow` adds the proxy's socket rules to the same lines
   * (resolve.c, add_proxy_socket_rules): without this, a policy of the same
   * rule text without it would hand over a filter refusing them. */
  put_u64 (&s, p->network == SECURER_NET_ALLOW);
  securer_sha256_update (&s, tk->lines, sizeof tk->lines);
  struct names seen = { 0 };
  int rc = 0;
  for (size_t i = 0; i < tk->n_groups && rc == 0; i++)
    rc = walk_group (&s, &seen, tk->groups[i], 0);
  names_clear (&seen);
  securer_sha256_final (&s, out);
  return rc;
}

void
securer_seccomp_textkey_clear (struct securer_seccomp_textkey *tk)
{
  for (size_t i = 0; i < tk->n_groups; i++)
    free (tk->groups[i]);
  free (tk->groups);
  memset (tk, 0, sizeof *tk);
}

int
securer_seccomp_textkey_make (const struct securer_policy *p, int send_fd, struct securer_seccomp_textkey *tk)
{
  memset (tk, 0, sizeof *tk);
  if (!securer_policy_seccomp_pending (p) || !p->seccomp.enabled)
    return -1;
  struct lines_ctx lc = { .oom = false };
  securer_sha256_init (&lc.s);
  size_t n = securer_policy_pending_words (p, feed_word, &lc);
  put_u64 (&lc.s, n);
  securer_sha256_final (&lc.s, tk->lines);
  tk->groups = lc.groups.v;
  tk->n_groups = lc.groups.n;
  if (lc.oom || compute_key (tk, p, send_fd, tk->key) < 0)
    {
      securer_seccomp_textkey_clear (tk);
      return -1;
    }
  tk->valid = true;
  return 0;
}

/* ---- the entry: the compiled program, field by field -------------------------- */

struct buf {
  unsigned char *v;
  size_t n, cap;
  bool oom;
};

static void
buf_put (struct buf *b, const void *data, size_t len)
{
  if (b->oom)
    return;
  if (b->n + len > b->cap)
    {
      size_t cap = b->cap ? b->cap : 4096;
      while (cap < b->n + len)
        cap *= 2;
      unsigned char *v = realloc (b->v, cap);
      if (v == NULL)
        {
          b->oom = true;
          return;
        }
      b->v = v;
      b->cap = cap;
    }
  memcpy (b->v + b->n, data, len);
  b->n += len;
}

#define PUT(b, type, val)          \
  do                               \
    {                              \
      type v_ = (type) (val);      \
      buf_put ((b), &v_, sizeof v_); \
    }                              \
  while (0)

struct reader {
  const unsigned char *p;
  size_t left;
  bool bad;
};

static void
take (struct reader *r, void *out, size_t len)
{
  if (r->bad || r->left < len)
    {
      r->bad = true;
      memset (out, 0, len);
      return;
    }
  memcpy (out, r->p, len);
  r->p += len;
  r->left -= len;
}

#define TAKE(r, type) \
  ({ type v_; take ((r), &v_, sizeof v_); v_; })

static void
put_entry_action (struct buf *b, struct securer_action a)
{
  PUT (b, uint32_t, a.type);
  PUT (b, int32_t, a.errnum);
}

static struct securer_action
take_action (struct reader *r)
{
  struct securer_action a;
  uint32_t type = TAKE (r, uint32_t);
  a.errnum = TAKE (r, int32_t);
  if (type > SECURER_ACT_NOTIFY || (type == SECURER_ACT_ERRNO && (a.errnum < 0 || a.errnum > 4095)))
    r->bad = true;
  a.type = (enum securer_action_type) type;
  return a;
}

static bool
same_action (struct securer_action a, struct securer_action b)
{
  return a.type == b.type && (a.type != SECURER_ACT_ERRNO || a.errnum == b.errnum);
}

static int
encode (const struct securer_seccomp_prog *prog, struct buf *b)
{
  PUT (b, uint32_t, TEXT_FORMAT);
  PUT (b, uint8_t, prog->notify);
  PUT (b, uint8_t, prog->report);
  PUT (b, int32_t, prog->send_fd);
  put_entry_action (b, prog->def);
  put_entry_action (b, prog->foreign);
  PUT (b, uint64_t, prog->load_flags);
  PUT (b, uint32_t, prog->n_rules);
  PUT (b, uint32_t, prog->bpf.len);
  for (size_t i = 0; i < prog->n_rules; i++)
    {
      const struct srule *r = &prog->rules[i];
      PUT (b, int32_t, r->nr);
      put_entry_action (b, r->action);
      PUT (b, uint32_t, r->args32);
      PUT (b, uint64_t, r->index == SIZE_MAX ? UINT64_MAX : (uint64_t) r->index);
      PUT (b, uint32_t, r->n_conds);
      for (unsigned j = 0; j < r->n_conds; j++)
        {
          PUT (b, uint32_t, r->conds[j].arg);
          PUT (b, uint32_t, r->conds[j].op);
          PUT (b, uint64_t, r->conds[j].value);
          PUT (b, uint64_t, r->conds[j].mask);
        }
    }
  buf_put (b, prog->bpf.filter, prog->bpf.len * sizeof *prog->bpf.filter);
  return b->oom ? -1 : 0;
}

/* Everything of the entry is checked before it becomes a program: fields in
 * range, the actions and hand-over fd the key was made with, the program
 * as the kernel checks one it is given, the load flags the compiler derives
 * (thread sync, a listener exactly when the program notifies). */
static struct securer_seccomp_prog *
decode (const unsigned char *data, size_t len, const struct securer_policy *p, int send_fd)
{
  struct reader r = { data, len, false };
  struct securer_seccomp_prog *prog = calloc (1, sizeof *prog);
  if (prog == NULL)
    return NULL;
  prog->enabled = true;
  prog->use_cache = true;
  prog->send_fd = -1;
  if (TAKE (&r, uint32_t) != TEXT_FORMAT)
    goto bad;
  uint8_t notify = TAKE (&r, uint8_t), report = TAKE (&r, uint8_t);
  int32_t fd = TAKE (&r, int32_t);
  prog->def = take_action (&r);
  prog->foreign = take_action (&r);
  uint64_t flags = TAKE (&r, uint64_t);
  uint32_t n_rules = TAKE (&r, uint32_t), n_insns = TAKE (&r, uint32_t);
  if (r.bad || notify > 1 || report > 1 || (report && !notify) || (report && fd != send_fd)
      || (!report && fd != -1) || !same_action (prog->def, p->seccomp.default_action)
      || !same_action (prog->foreign, p->seccomp.foreign_arch) || prog->foreign.type == SECURER_ACT_NOTIFY
      || n_rules > MAX_ENTRY_RULES || n_insns == 0 || n_insns > BPF_MAXINSNS)
    goto bad;
  prog->notify = notify;
  prog->report = report;
  prog->send_fd = fd;
  prog->rules = calloc (n_rules ? n_rules : 1, sizeof *prog->rules);
  if (prog->rules == NULL)
    goto bad;
  for (uint32_t i = 0; i < n_rules && !r.bad; i++)
    {
      struct srule *s = &prog->rules[i];
      s->nr = TAKE (&r, int32_t);
      s->action = take_action (&r);
      s->args32 = TAKE (&r, uint32_t);
      uint64_t index = TAKE (&r, uint64_t);
      s->index = index == UINT64_MAX ? SIZE_MAX : (size_t) index;
      s->n_conds = TAKE (&r, uint32_t);
      if (s->nr < 0 || s->n_conds > SECURER_MAX_ARG_CONDS || s->args32 > 0x3f)
        r.bad = true;
      for (unsigned j = 0; j < s->n_conds && !r.bad; j++)
        {
          s->conds[j].arg = TAKE (&r, uint32_t);
          uint32_t op = TAKE (&r, uint32_t);
          s->conds[j].value = TAKE (&r, uint64_t);
          s->conds[j].mask = TAKE (&r, uint64_t);
          if (s->conds[j].arg > 5 || op > SECURER_CMP_MASKED_EQ)
            r.bad = true;
          s->conds[j].op = (enum securer_cmp) op;
        }
      prog->n_rules = i + 1;
    }
  if (r.bad || r.left != n_insns * sizeof *prog->bpf.filter)
    goto bad;
  prog->bpf.filter = malloc (r.left);
  if (prog->bpf.filter == NULL)
    goto bad;
  take (&r, prog->bpf.filter, n_insns * sizeof *prog->bpf.filter);
  prog->bpf.len = (unsigned short) n_insns;
  if (!securer_seccomp_flags_expected (flags, prog->notify))
    goto bad;
  prog->load_flags = (unsigned long) flags;
  securer_err_t err = NULL;
  if (securer_bpf_check (prog->bpf.filter, prog->bpf.len, &err) < 0)
    {
      securer_error_free (&err);
      goto bad;
    }
  return prog;
bad:
  securer_seccomp_free (prog);
  return NULL;
}

int
securer_seccomp_text_get (int dirfd, const struct securer_seccomp_textkey *tk, const struct securer_policy *p,
                          int send_fd, struct securer_seccomp_prog **out)
{
  *out = NULL;
  if (!tk->valid)
    return 0;
  unsigned char *data = NULL;
  size_t len = 0;
  if (securer_seccomp_cache_get_entry (dirfd, tk->key, &data, &len) != 1)
    return 0;
  *out = decode (data, len, p, send_fd);
  free (data);
  return *out != NULL;
}

void
securer_seccomp_text_put (int dirfd, const struct securer_seccomp_textkey *tk, const struct securer_policy *p,
                          int send_fd, const struct securer_seccomp_prog *prog)
{
  if (!tk->valid || prog == NULL || !prog->enabled || prog->bpf.filter == NULL)
    return;
  unsigned char again[SECURER_SHA256_LEN];
  if (compute_key (tk, p, send_fd, again) < 0 || memcmp (again, tk->key, sizeof again) != 0)
    return;
  struct buf b = { 0 };
  if (encode (prog, &b) == 0)
    securer_seccomp_cache_put_entry (dirfd, tk->key, b.v, b.n);
  free (b.v);
}
