/* `securer policy learn`: the learning filter, the record of what the
 * command did, and the fragment written from it.
 *
 * The fragment is meant to be minimal: removing any line of it makes the
 * same run fail under a deny-by-default policy.  So by default every syscall
 * is listed on its own, under a comment naming the smallest shipped group
 * that holds it, and a whole @group is written only when the command used
 * every member of it this architecture has (the group then allows nothing
 * more than the individual lines would).  For a handful of syscalls whose
 * arguments decide what they reach (socket families, ioctl requests, prctl
 * options) the values seen are written as conditions. */
#include <config.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seccomp/argwidth.h"
#include "seccomp/learn.h"
#include "seccomp/ruletext.h"
#include "seccomp/seccomp.h"

/* Beyond this many distinct values the argument stops being a useful
 * condition (a terminal program's ioctls): the syscall is allowed whole. */
#define MAX_VALUES 16
/* Comment column of the fragment's rule lines. */
#define COMMENT_COL 44

/* Syscalls whose listed argument is worth learning, and the prefixes of the
 * constant names that may spell its values, in order of preference (aliases
 * such as TIOCINQ/FIONREAD resolve to the first prefix that has one). */
static const struct refine {
  const char *syscall;
  unsigned arg;
  const char *prefixes[6];
} refine_table[] = {
  { "ioctl", 1, { "TC", "FIO", "TIOC", "FI", "SIOC", NULL } },
  { "prctl", 0, { "PR_", NULL } },
  { "socket", 0, { "AF_", NULL } },
  { "socketpair", 0, { "AF_", NULL } },
};

struct value {
  uint64_t value;
  uint64_t calls;
};

struct entry {
  char *name;
  uint32_t arch;
  int nr;
  bool other;                      /* another ABI, or a number libseccomp cannot name */
  uint64_t calls;                  /* calls that went ahead */
  uint64_t denied;                 /* calls the learning filter did not let through */
  struct securer_action denied_action;
  uint64_t base_denied;            /* calls base would not have let through */
  struct securer_action base_action;
  const struct refine *refine;
  bool arg32;
  struct value *values;
  size_t n_values;
  bool too_many;
  uint64_t first_args[6];          /* of the first call that went ahead */
};

/* Programs seen running, for the exec list the fragment proposes. */
#define MAX_PROCS 1024
#define MAX_PROGRAMS 128

struct proc {
  pid_t pid;
  bool stale;                      /* it has made an execve since its program was read */
};

/* Files seen open, for the read-only mounts the fragment proposes. */
#define MAX_FDS 4096
#define MAX_FILES 4096
#define MAX_MOUNT_LINES 64

struct fdseen {
  pid_t pid;
  int fd;
};

/* BASE's mounts, copied: the files seen are mapped back to them. */
struct bind {
  char *source, *dest;       /* source: NULL but for binds */
  enum securer_mount_type type;
};

struct securer_learn {
  struct securer_seccomp_prog *base;
  struct entry *v;
  size_t n, cap;
  uint64_t total;
  bool oom;
  struct proc procs[MAX_PROCS];
  size_t n_procs, next_proc;
  char *programs[MAX_PROGRAMS];    /* as the sandbox names them: executables, then loaders */
  bool loader[MAX_PROGRAMS];
  size_t n_programs;
  struct fdseen fds[MAX_FDS];
  size_t n_fds, next_fd;
  char **files;                    /* directories, or files whose directory counts */
  bool *is_dir;
  size_t n_files;
  struct bind *binds;
  size_t n_binds;
  bool other_mount_used;           /* a file under BASE's tmpfs, proc, dev, ... */
};

int
securer_learn_available (securer_err_t *err)
{
  /* API level 6: user notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE
   * (Linux 5.5).  SECCOMP_RET_LOG would need the audit log, which is
   * rate-limited and root-only: a list learned from it could be silently
   * incomplete, so it is not offered. */
  if (seccomp_api_get () < 6)
    return securer_error_set (err, ENOSYS,
                              "learning needs seccomp user notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE "
                              "(Linux 5.5 or later; libseccomp API level %u here); as a fallback run the "
                              "command under `seccomp default log` and read the SECCOMP records of the "
                              "kernel's audit log",
                              seccomp_api_get ());
  return 0;
}

int
securer_learn_new (const struct securer_policy *base, struct securer_learn **out, securer_err_t *err)
{
  /* securer_learn_free copes with a half-made one. */
  *out = NULL;
  struct securer_learn *l = calloc (1, sizeof *l);
  if (l == NULL)
    return securer_error_set (err, ENOMEM, "learn");
  if (securer_seccomp_compile (base, 0, -1, &l->base, err) < 0)
    {
      free (l);
      return securer_error_prefix (err, "learn: the base policy's seccomp section");
    }
  l->files = calloc (MAX_FILES, sizeof *l->files);
  l->is_dir = calloc (MAX_FILES, sizeof *l->is_dir);
  l->binds = calloc (base->n_mounts + 1, sizeof *l->binds);
  if (l->files == NULL || l->is_dir == NULL || l->binds == NULL)
    {
      securer_learn_free (l);
      return securer_error_set (err, ENOMEM, "learn");
    }
  for (size_t i = 0; i < base->n_mounts; i++)
    {
      const struct securer_mount *m = &base->mounts[i];
      struct bind *b = &l->binds[l->n_binds++];
      b->type = m->type;
      b->dest = strdup (m->dest);
      b->source = (m->type == SECURER_MOUNT_RO || m->type == SECURER_MOUNT_RW) && m->source ? strdup (m->source)
                                                                                           : NULL;
      if (b->dest == NULL || ((m->type == SECURER_MOUNT_RO || m->type == SECURER_MOUNT_RW) && b->source == NULL))
        {
          securer_learn_free (l);
          return securer_error_set (err, ENOMEM, "learn");
        }
    }
  *out = l;
  return 0;
}

void
securer_learn_free (struct securer_learn *l)
{
  if (l == NULL)
    return;
  for (size_t i = 0; i < l->n; i++)
    {
      free (l->v[i].name);
      free (l->v[i].values);
    }
  free (l->v);
  for (size_t i = 0; i < l->n_programs; i++)
    free (l->programs[i]);
  for (size_t i = 0; i < l->n_files; i++)
    free (l->files[i]);
  free (l->files);
  free (l->is_dir);
  for (size_t i = 0; i < l->n_binds; i++)
    {
      free (l->binds[i].source);
      free (l->binds[i].dest);
    }
  free (l->binds);
  securer_seccomp_free (l->base);
  free (l);
}

static bool
goes_ahead (struct securer_action a)
{
  return a.type == SECURER_ACT_ALLOW || a.type == SECURER_ACT_LOG || a.type == SECURER_ACT_NOTIFY;
}

int
securer_learn_prepare (struct securer_policy *p, bool keep_denials, securer_err_t *err)
{
  struct securer_seccomp *sc = &p->seccomp;
  size_t kept = 0;
  for (size_t i = 0; i < sc->n_rules; i++)
    {
      struct securer_syscall_rule *r = &sc->rules[i];
      if (keep_denials && !goes_ahead (r->action))
        {
          sc->rules[kept++] = *r;
          continue;
        }
      if (keep_denials)
        {
          r->action = (struct securer_action) { SECURER_ACT_NOTIFY, 0 };
          sc->rules[kept++] = *r;
          continue;
        }
      free (r->name);
      free (r->group);
      free (r->loc.file);
    }
  sc->n_rules = kept;
  sc->enabled = true;
  sc->default_action = (struct securer_action) { SECURER_ACT_NOTIFY, 0 };
  if (sc->foreign_arch.type == SECURER_ACT_NOTIFY)
    return securer_error_set (err, EINVAL, "learn: foreign-abi cannot be notify");
  return 0;
}

static struct entry *
find_entry (struct securer_learn *l, const struct securer_syscall_event *ev)
{
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].nr == ev->nr && l->v[i].arch == ev->arch)
      return &l->v[i];
  if (l->n == l->cap)
    {
      size_t cap = l->cap ? l->cap * 2 : 64;
      struct entry *nv = realloc (l->v, cap * sizeof *nv);
      if (nv == NULL)
        return NULL;
      l->v = nv;
      l->cap = cap;
    }
  struct entry *e = &l->v[l->n];
  memset (e, 0, sizeof *e);
  e->name = strdup (ev->name);
  if (e->name == NULL)
    return NULL;
  e->nr = ev->nr;
  e->arch = ev->arch;
  /* The supervisor spells other ABIs "x32:read" and unnamed numbers "nr N":
   * neither can be written as a rule of this policy. */
  e->other = strchr (ev->name, ':') != NULL || strncmp (ev->name, "nr ", 3) == 0;
  if (!e->other)
    for (size_t i = 0; i < sizeof refine_table / sizeof *refine_table; i++)
      if (strcmp (refine_table[i].syscall, ev->name) == 0)
        {
          e->refine = &refine_table[i];
          e->arg32 = (securer_syscall_args32 (ev->name) >> refine_table[i].arg) & 1;
        }
  l->n++;
  return e;
}

static void
record_value (struct securer_learn *l, struct entry *e, uint64_t v)
{
  if (e->arg32)
    v &= 0xffffffffull;
  for (size_t i = 0; i < e->n_values; i++)
    if (e->values[i].value == v)
      {
        e->values[i].calls++;
        return;
      }
  if (e->n_values == MAX_VALUES)
    {
      e->too_many = true;
      return;
    }
  struct value *nv = realloc (e->values, (e->n_values + 1) * sizeof *nv);
  if (nv == NULL)
    {
      l->oom = true;
      return;
    }
  e->values = nv;
  e->values[e->n_values++] = (struct value) { v, 1 };
}

/* The sandbox names its files: only an absolute path that is one plain
 * word is written, so that no name can end the comment it stands in and
 * add a line to the policy, or reach a terminal. */
static bool
plain_path (const char *path)
{
  if (path[0] != '/')
    return false;
  for (const char *c = path; *c; c++)
    if ((unsigned char) *c <= ' ' || (unsigned char) *c >= 0x7f || strchr ("\"\\#", *c) != NULL)
      return false;
  return true;
}

static void
add_file (struct securer_learn *l, const char *path, bool dir)
{
  for (size_t i = 0; i < l->n_files; i++)
    if (strcmp (l->files[i], path) == 0)
      return;
  if (!plain_path (path) || l->n_files == MAX_FILES)
    return;
  char *copy = strdup (path);
  if (copy == NULL)
    {
      l->oom = true;
      return;
    }
  l->is_dir[l->n_files] = dir;
  l->files[l->n_files++] = copy;
}

/* Syscalls whose argument (index) is a descriptor of a file being read:
 * every file a command opens to read is read, mapped or looked at through
 * one of them, so its path can be had from /proc/PID/fd without ever
 * reading the caller's memory. */
static const struct fdcall {
  const char *name;
  unsigned arg;
} fd_calls[] = {
  { "read", 0 }, { "pread64", 0 }, { "readv", 0 }, { "preadv", 0 }, { "preadv2", 0 },
  { "newfstatat", 0 }, { "fstat", 0 }, { "statx", 0 }, { "getdents64", 0 }, { "lseek", 0 },
  { "mmap", 4 }, { "fadvise64", 0 }, { "readlinkat", 0 }, { "openat", 0 },
};

static void
note_fd (struct securer_learn *l, const struct securer_syscall_event *ev)
{
  if (strcmp (ev->name, "close") == 0)
    {
      for (size_t i = 0; i < l->n_fds; i++)
        if (l->fds[i].pid == ev->pid && l->fds[i].fd == (int) ev->args[0])
          l->fds[i].pid = 0;
      return;
    }
  int fd = -1;
  for (size_t i = 0; i < sizeof fd_calls / sizeof *fd_calls && fd < 0; i++)
    if (strcmp (fd_calls[i].name, ev->name) == 0)
      fd = (int) ev->args[fd_calls[i].arg];
  /* Negative: AT_FDCWD, or mmap's -1 of an anonymous mapping. */
  if (fd < 0)
    return;
  size_t k = SIZE_MAX;
  for (size_t i = 0; i < l->n_fds; i++)
    {
      if (l->fds[i].pid == ev->pid && l->fds[i].fd == fd)
        return;
      if (l->fds[i].pid == 0 && k == SIZE_MAX)
        k = i;
    }
  /* A closed one's place first, so the table stays as small as what is open. */
  if (k == SIZE_MAX)
    k = l->n_fds < MAX_FDS ? l->n_fds++ : l->next_fd++ % MAX_FDS;
  l->fds[k] = (struct fdseen) { ev->pid, fd };
  char path[64], target[PATH_MAX];
  snprintf (path, sizeof path, "/proc/%d/fd/%d", (int) ev->pid, fd);
  ssize_t n = readlink (path, target, sizeof target - 1);
  struct stat st;
  if (n <= 0 || stat (path, &st) < 0)
    return;
  target[n] = '\0';
  if (S_ISREG (st.st_mode) || S_ISDIR (st.st_mode))
    add_file (l, target, S_ISDIR (st.st_mode));
}

/* An execve closes the descriptors marked close-on-exec without a close
 * call: what this process had open is forgotten. */
static void
forget_fds (struct securer_learn *l, pid_t pid)
{
  for (size_t i = 0; i < l->n_fds; i++)
    if (l->fds[i].pid == pid)
      l->fds[i].pid = 0;
}

static void
add_program (struct securer_learn *l, const char *path, bool loader)
{
  for (size_t i = 0; i < l->n_programs; i++)
    if (strcmp (l->programs[i], path) == 0)
      return;
  if (!plain_path (path) || l->n_programs == MAX_PROGRAMS)
    return;
  char *copy = strdup (path);
  if (copy == NULL)
    {
      l->oom = true;
      return;
    }
  l->loader[l->n_programs] = loader;
  l->programs[l->n_programs++] = copy;
}

/* The files mapped by a program that has just been executed: itself and
 * its loader, as the kernel mapped them (by their real paths). */
static void
note_maps (struct securer_learn *l, pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/maps", (int) pid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return;
  char line[PATH_MAX + 128];
  while (fgets (line, sizeof line, f) != NULL)
    {
      char *slash = strchr (line, '/');
      if (slash == NULL)
        continue;
      slash[strcspn (slash, "\n")] = '\0';
      /* " (deleted)" and other decorations: not a path to mount. */
      if (strchr (slash, ' ') == NULL)
        add_file (l, slash, false);
    }
  fclose (f);
}

/* The ELF interpreter (PT_INTERP) of the program behind fd, or "". */
static void
read_interp (int fd, char *out, size_t size)
{
  out[0] = '\0';
  Elf64_Ehdr eh;
  if (pread (fd, &eh, sizeof eh, 0) != (ssize_t) sizeof eh || memcmp (eh.e_ident, ELFMAG, SELFMAG) != 0
      || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof (Elf64_Phdr) || eh.e_phnum > 256)
    return;
  for (unsigned i = 0; i < eh.e_phnum; i++)
    {
      Elf64_Phdr ph;
      if (pread (fd, &ph, sizeof ph, (off_t) (eh.e_phoff + i * sizeof ph)) != (ssize_t) sizeof ph)
        return;
      if (ph.p_type != PT_INTERP)
        continue;
      if (ph.p_filesz == 0 || ph.p_filesz >= size)
        return;
      ssize_t n = pread (fd, out, ph.p_filesz, (off_t) ph.p_offset);
      out[n == (ssize_t) ph.p_filesz ? ph.p_filesz - 1 : 0] = '\0';
      return;
    }
}

/* The program a caller runs, read from /proc at its first call after an
 * execve (by then the exec is done: the call that reported the execve was
 * answered before the kernel ran it).  Only then: before its first execve
 * the payload is the launcher, and a forked process runs its parent's
 * program, already read.  The path is the one inside the sandbox, which
 * is what an exec list names. */
static void
note_program (struct securer_learn *l, const struct securer_syscall_event *ev)
{
  struct proc *pr = NULL;
  for (size_t i = 0; i < l->n_procs && pr == NULL; i++)
    if (l->procs[i].pid == ev->pid)
      pr = &l->procs[i];
  if (pr == NULL)
    {
      size_t k = l->n_procs < MAX_PROCS ? l->n_procs++ : l->next_proc++ % MAX_PROCS;
      pr = &l->procs[k];
      *pr = (struct proc) { ev->pid, false };
    }
  if (pr->stale)
    {
      char path[64], exe[PATH_MAX], interp[PATH_MAX];
      snprintf (path, sizeof path, "/proc/%d/exe", (int) ev->pid);
      ssize_t n = readlink (path, exe, sizeof exe - 1);
      if (n > 0)
        {
          exe[n] = '\0';
          add_program (l, exe, false);
          int fd = open (path, O_RDONLY | O_CLOEXEC);
          if (fd >= 0)
            {
              read_interp (fd, interp, sizeof interp);
              close (fd);
              if (interp[0] != '\0')
                add_program (l, interp, true);
            }
          add_file (l, exe, false);
        }
      note_maps (l, ev->pid);
      pr->stale = false;
    }
  if (strcmp (ev->name, "execve") == 0 || strcmp (ev->name, "execveat") == 0)
    {
      pr->stale = true;
      forget_fds (l, ev->pid);
    }
}

void
securer_learn_record (void *ctx, const struct securer_syscall_event *ev)
{
  struct securer_learn *l = ctx;
  note_program (l, ev);
  note_fd (l, ev);
  struct entry *e = find_entry (l, ev);
  if (e == NULL)
    {
      /* The callback cannot fail the run; the fragment will. */
      l->oom = true;
      return;
    }
  l->total++;
  if (!goes_ahead (ev->action))
    {
      if (e->denied++ == 0)
        e->denied_action = ev->action;
      return;
    }
  if (e->calls++ == 0)
    memcpy (e->first_args, ev->args, sizeof e->first_args);
  if (e->other)
    return;
  struct securer_action b = securer_seccomp_eval (l->base, ev->arch, ev->nr, ev->args);
  if (!goes_ahead (b) && e->base_denied++ == 0)
    e->base_action = b;
  if (e->refine != NULL && !e->too_many)
    record_value (l, e, ev->args[e->refine->arg]);
}

/* ---- the plan: which group each syscall belongs to, which groups collapse ---- */

struct group {
  char *name;
  char **members;     /* those that exist on this arch, sorted */
  size_t n;
  size_t used;
  uint64_t calls;
  bool conditioned;   /* a used member was learned with argument conditions */
  bool selected;      /* written as @name */
};

struct plan {
  struct group *g;
  size_t n_g;
  const struct entry **sorted;  /* syscalls that went ahead, by name */
  size_t n_sorted;
  const struct entry **other;   /* denied, other ABIs, unnamed: by name */
  size_t n_other;
  int *home;                    /* per sorted entry: smallest group holding it, -1 none */
  int *cover;                   /* per sorted entry: the selected group allowing it, -1 none */
  uint64_t calls;               /* calls that went ahead */
};

static bool
conditioned (const struct entry *e)
{
  return e->refine != NULL && e->n_values > 0 && !e->too_many;
}

static int
cmp_entry_name (const void *a, const void *b)
{
  const struct entry *x = *(const struct entry *const *) a, *y = *(const struct entry *const *) b;
  return strcmp (x->name, y->name);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static bool
group_has (const struct group *g, const char *name)
{
  return bsearch (&name, g->members, g->n, sizeof *g->members, cmp_str) != NULL;
}

static void
plan_free (struct plan *pl)
{
  for (size_t i = 0; i < pl->n_g; i++)
    {
      free (pl->g[i].name);
      securer_strv_free (pl->g[i].members);
    }
  free (pl->g);
  free (pl->sorted);
  free (pl->other);
  free (pl->home);
  free (pl->cover);
  memset (pl, 0, sizeof *pl);
}

static int
load_groups (struct plan *pl, securer_err_t *err)
{
  char **names = securer_group_names ();
  if (names == NULL)
    return securer_error_set (err, ENOMEM, "learn: list the syscall groups");
  size_t n = 0;
  while (names[n] != NULL)
    n++;
  pl->g = calloc (n ? n : 1, sizeof *pl->g);
  if (pl->g == NULL)
    {
      securer_strv_free (names);
      return securer_error_set (err, ENOMEM, "learn: syscall groups");
    }
  for (size_t i = 0; i < n; i++)
    {
      /* @known is everything: never a useful summary of a run. */
      if (strcmp (names[i], "known") == 0)
        continue;
      char **members = NULL;
      size_t n_members = 0;
      if (securer_group_load (names[i], &members, &n_members, err) < 0)
        {
          securer_strv_free (names);
          return securer_error_prefix (err, "learn");
        }
      /* Names of other arches (chown32 on x86_64) cannot be used here. */
      size_t k = 0;
      for (size_t j = 0; j < n_members; j++)
        {
          if (seccomp_syscall_resolve_name (members[j]) >= 0)
            members[k++] = members[j];
          else
            free (members[j]);
        }
      members[k] = NULL;
      struct group *g = &pl->g[pl->n_g++];
      g->name = strdup (names[i]);
      g->members = members;
      g->n = k;
      if (g->name == NULL)
        {
          securer_strv_free (names);
          return securer_error_set (err, ENOMEM, "learn: syscall groups");
        }
    }
  securer_strv_free (names);
  return 0;
}

/* Greedy cover: groups used past the threshold, most-used first, each taken
 * only when it still allows a syscall no taken group allows. */
static int
cmp_candidate (const void *a, const void *b)
{
  const struct group *x = *(const struct group *const *) a, *y = *(const struct group *const *) b;
  if (x->used != y->used)
    return x->used > y->used ? -1 : 1;
  if (x->n != y->n)
    return x->n < y->n ? -1 : 1;
  return strcmp (x->name, y->name);
}

static int
make_plan (const struct securer_learn *l, unsigned collapse_pct, struct plan *pl, securer_err_t *err)
{
  memset (pl, 0, sizeof *pl);
  if (l->oom)
    return securer_error_set (err, ENOMEM, "learn: out of memory while recording syscalls");
  if (collapse_pct == 0 || collapse_pct > 100)
    collapse_pct = 100;
  if (load_groups (pl, err) < 0)
    goto fail;
  pl->sorted = calloc (l->n + 1, sizeof *pl->sorted);
  pl->other = calloc (l->n + 1, sizeof *pl->other);
  pl->home = calloc (l->n + 1, sizeof *pl->home);
  pl->cover = calloc (l->n + 1, sizeof *pl->cover);
  struct group **cand = calloc (pl->n_g + 1, sizeof *cand);
  if (pl->sorted == NULL || pl->other == NULL || pl->home == NULL || pl->cover == NULL || cand == NULL)
    {
      free (cand);
      securer_error_set (err, ENOMEM, "learn");
      goto fail;
    }
  for (size_t i = 0; i < l->n; i++)
    {
      const struct entry *e = &l->v[i];
      if (e->calls > 0 && !e->other)
        pl->sorted[pl->n_sorted++] = e;
      if (e->other || e->denied > 0)
        pl->other[pl->n_other++] = e;
      pl->calls += e->calls;
    }
  qsort (pl->sorted, pl->n_sorted, sizeof *pl->sorted, cmp_entry_name);
  qsort (pl->other, pl->n_other, sizeof *pl->other, cmp_entry_name);

  for (size_t i = 0; i < pl->n_sorted; i++)
    {
      const struct entry *e = pl->sorted[i];
      pl->home[i] = pl->cover[i] = -1;
      for (size_t k = 0; k < pl->n_g; k++)
        {
          struct group *g = &pl->g[k];
          if (!group_has (g, e->name))
            continue;
          g->used++;
          g->calls += e->calls;
          g->conditioned |= conditioned (e);
          int h = pl->home[i];
          if (h < 0 || g->n < pl->g[h].n || (g->n == pl->g[h].n && strcmp (g->name, pl->g[h].name) < 0))
            pl->home[i] = (int) k;
        }
    }

  size_t n_cand = 0;
  for (size_t k = 0; k < pl->n_g; k++)
    {
      struct group *g = &pl->g[k];
      if (g->n == 0 || g->used == 0)
        continue;
      bool take = collapse_pct == 100 ? g->used == g->n && !g->conditioned
                                      : g->used * 100 >= (size_t) collapse_pct * g->n;
      if (take)
        cand[n_cand++] = g;
    }
  qsort (cand, n_cand, sizeof *cand, cmp_candidate);
  for (size_t c = 0; c < n_cand; c++)
    {
      struct group *g = cand[c];
      bool adds = false;
      for (size_t i = 0; i < pl->n_sorted && !adds; i++)
        adds = pl->cover[i] < 0 && group_has (g, pl->sorted[i]->name);
      if (!adds)
        continue;
      g->selected = true;
      int k = (int) (g - pl->g);
      for (size_t i = 0; i < pl->n_sorted; i++)
        if (pl->cover[i] < 0 && group_has (g, pl->sorted[i]->name))
          pl->cover[i] = k;
    }
  free (cand);
  return 0;
fail:
  plan_free (pl);
  return -1;
}

/* ---- text ---------------------------------------------------------------- */

static const char *
value_name (const struct entry *e, uint64_t v)
{
  const char *const *names = securer_const_names ();
  for (size_t p = 0; p < 6 && e->refine->prefixes[p] != NULL; p++)
    {
      size_t plen = strlen (e->refine->prefixes[p]);
      for (size_t i = 0; names[i] != NULL; i++)
        {
          uint64_t cv;
          if (strncmp (names[i], e->refine->prefixes[p], plen) != 0
              || securer_const_lookup (names[i], &cv) < 0)
            continue;
          if (e->arg32)
            cv &= 0xffffffffull;
          if (cv == v)
            return names[i];
        }
    }
  return NULL;
}

/* value_name as the rule printer's callback (ctx is the entry). */
static const char *
rule_value_name (void *ctx, unsigned arg, uint64_t v)
{
  (void) arg;
  return value_name (ctx, v);
}

static void
put_calls (FILE *f, uint64_t n)
{
  fprintf (f, "%llu call%s", (unsigned long long) n, n == 1 ? "" : "s");
}

/* Pads the rule written so far (len bytes) to the comment column. */
static void
pad_to_comment (FILE *f, int len)
{
  fprintf (f, "%*s# ", len < COMMENT_COL ? COMMENT_COL - len : 1, "");
}

static void
put_base_note (FILE *f, const struct entry *e)
{
  if (e->base_denied == 0)
    return;
  fputs ("; base: ", f);
  securer_rule_put_action (f, e->base_action);
  if (e->base_denied != e->calls)
    fprintf (f, " for %llu of them", (unsigned long long) e->base_denied);
}

static const struct securer_action allow = { SECURER_ACT_ALLOW, 0 };

static void
put_entry (FILE *f, const struct entry *e)
{
  if (!conditioned (e))
    {
      int len = securer_rule_put (f, e->name, allow, NULL, 0, NULL);
      pad_to_comment (f, len);
      put_calls (f, e->calls);
      if (e->too_many)
        fprintf (f, "; more than %d distinct arg%u values", MAX_VALUES, e->refine->arg);
      put_base_note (f, e);
      fputc ('\n', f);
      return;
    }
  /* Conditions in ascending value order: the output must not depend on
   * which value the command happened to use first. */
  bool done[MAX_VALUES] = { false };
  for (size_t k = 0; k < e->n_values; k++)
    {
      size_t m = SIZE_MAX;
      for (size_t i = 0; i < e->n_values; i++)
        if (!done[i] && (m == SIZE_MAX || e->values[i].value < e->values[m].value))
          m = i;
      done[m] = true;
      struct securer_arg_cond c = { e->refine->arg, SECURER_CMP_EQ, e->values[m].value, 0 };
      struct securer_rule_style style = { 0, true, rule_value_name, (void *) e };
      int len = securer_rule_put (f, e->name, allow, &c, 1, &style);
      pad_to_comment (f, len);
      put_calls (f, e->values[m].calls);
      if (k == 0)
        put_base_note (f, e);
      fputc ('\n', f);
    }
}

/* A comment holds one line: anything that could end it or confuse a
 * terminal is replaced. */
static void
put_safe (FILE *f, const char *s)
{
  for (; *s; s++)
    fputc ((unsigned char) *s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/* "#   also allows: a b c", wrapped with the words aligned. */
static void
put_words (FILE *f, const char *lead, char **words, size_t n)
{
  int indent = (int) strlen (lead);
  int col = fprintf (f, "%s", lead);
  for (size_t i = 0; i < n; i++)
    {
      if (col > indent && col + 1 + (int) strlen (words[i]) > 78)
        col = fprintf (f, "\n#%*s", indent - 1, "") - 1;
      col += fprintf (f, " %s", words[i]);
    }
  fputc ('\n', f);
}

/* who: "The command", or "Run N" of merged runs. */
static void
put_status (FILE *f, const struct securer_status *st, const char *who)
{
  if (st == NULL)
    return;
  if (st->reason == SECURER_KILL_TIMEOUT)
    fprintf (f, "# %s timed out: the list covers only what it did until then.\n", who);
  else if (st->exited && st->exit_code == 0)
    fprintf (f, "# %s exited with status 0.\n", who);
  else
    {
      if (st->exited)
        fprintf (f, "# %s exited with status %d", who, st->exit_code);
      else
        fprintf (f, "# %s was killed by signal %d", who, st->signal);
      if (st->reason == SECURER_KILL_SECCOMP && st->detail != NULL)
        {
          fputs (" (seccomp, at ", f);
          put_safe (f, st->detail);
          fputc (')', f);
        }
      fputs (": the list covers only the path it took.\n", f);
    }
}

/* The exec list the runs suggest, as a comment: not a rule of the
 * fragment, because what it misses (a script's own file: the process
 * shows its interpreter) would stop a command at its next run. */
static void
put_programs (FILE *f, const struct securer_learn *l)
{
  if (l->n_programs == 0)
    return;
  fputs ("\n# Programs executed, as an exec list names them (executables, then their\n"
         "# loaders; a script's own file is not seen and must be added):\n", f);
  char *words[MAX_PROGRAMS + 1];
  size_t n = 0;
  words[n++] = "exec";
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < l->n_programs; i++)
      if (l->loader[i] == (pass == 1))
        words[n++] = l->programs[i];
  put_words (f, "#  ", words, n);
}

/* The mount of BASE that holds path in the sandbox: the deepest
 * destination above it, the last of equals (a later line replaces). */
static const struct bind *
bind_of (const struct securer_learn *l, const char *path)
{
  const struct bind *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; i < l->n_binds; i++)
    {
      const struct bind *b = &l->binds[i];
      size_t n = strlen (b->dest);
      bool above = strcmp (b->dest, "/") == 0
                   || (strncmp (path, b->dest, n) == 0 && (path[n] == '\0' || path[n] == '/'));
      if (above && (best == NULL || n >= best_len))
        {
          best = b;
          best_len = n;
        }
    }
  return best;
}

static bool
below (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  return strncmp (path, dir, n) == 0 && path[n] == '/';
}

/* The directories of the files read, as read-only binds of the host
 * paths BASE's own read-only binds give them: a view to review, for the
 * same reason as the exec list a comment only (symlinks followed on the
 * way and paths only looked up are not seen). */
static void
put_mounts (FILE *f, const struct securer_learn *l)
{
  char **dirs = calloc (l->n_files + 1, sizeof *dirs);
  size_t n = 0;
  for (size_t i = 0; dirs != NULL && i < l->n_files; i++)
    {
      char *d = strdup (l->files[i]);
      if (d == NULL)
        break;
      /* A file is counted by its directory, but for a file BASE binds on
       * its own (/etc/ld.so.cache). */
      const struct bind *b = bind_of (l, d);
      char *slash = strrchr (d, '/');
      if (!l->is_dir[i] && slash != NULL && (b == NULL || strcmp (b->dest, d) != 0))
        {
          *(slash == d ? slash + 1 : slash) = '\0';
          b = bind_of (l, d);
        }
      bool dup = false;
      for (size_t k = 0; k < n && !dup; k++)
        dup = strcmp (dirs[k], d) == 0;
      if (b == NULL || b->type != SECURER_MOUNT_RO || dup)
        free (d);
      else
        dirs[n++] = d;
    }
  if (dirs == NULL || n == 0)
    {
      free (dirs);
      return;
    }
  qsort (dirs, n, sizeof *dirs, cmp_str);
  fputs ("\n# Directories of the files read, as read-only mounts narrower than the\n"
         "# base's (symlinks on the way and paths only looked up are not seen;\n"
         "# its other mounts stay):\n", f);
  size_t lines = 0;
  for (size_t i = 0; i < n; i++)
    {
      bool covered = false;
      for (size_t k = 0; k < n && !covered; k++)
        covered = below (dirs[i], dirs[k]);
      if (covered)
        continue;
      if (lines++ == MAX_MOUNT_LINES)
        {
          fprintf (f, "#   ... more than %d directories\n", MAX_MOUNT_LINES);
          break;
        }
      const struct bind *b = bind_of (l, dirs[i]);
      size_t dn = strcmp (b->dest, "/") == 0 ? 0 : strlen (b->dest);
      char *src = NULL;
      if (asprintf (&src, "%s%s", b->source, dirs[i] + dn) < 0)
        break;
      /* A host source is BASE's own text, the rest the sandbox's plain path. */
      if (plain_path (src))
        fprintf (f, "#   mount ro %s%s%s\n", src, strcmp (src, dirs[i]) != 0 ? " " : "",
                 strcmp (src, dirs[i]) != 0 ? dirs[i] : "");
      free (src);
    }
  for (size_t i = 0; i < n; i++)
    free (dirs[i]);
  free (dirs);
}

static void
write_fragment (FILE *f, const struct securer_learn *l, const struct plan *pl,
                const struct securer_learn_info *info)
{
  bool merged = info->n_runs > 1;
  if (merged)
    fprintf (f, "# Syscalls used by %zu runs, merged:\n", info->n_runs);
  for (size_t r = 0; r < (merged ? info->n_runs : 1); r++)
    {
      if (merged)
        fprintf (f, "#   %zu:", r + 1);
      else
        fputs ("# Syscalls used by:", f);
      for (char *const *a = merged ? info->runs[r].argv : info->argv; a != NULL && *a != NULL; a++)
        {
          fputc (' ', f);
          put_safe (f, *a);
        }
      fputc ('\n', f);
    }
  fputs ("# Learned by `securer policy learn` in the sandbox of ", f);
  put_safe (f, info->base ? info->base : "?");
  fputs (info->keep_denials ? ", its seccomp denials kept.\n" : ", without its seccomp rules.\n", f);
  for (size_t r = 0; r < (merged ? info->n_runs : 1); r++)
    {
      char who[32] = "The command";
      if (merged)
        snprintf (who, sizeof who, "Run %zu", r + 1);
      put_status (f, merged ? info->runs[r].status : info->status, who);
    }
  fprintf (f, "# %zu syscalls, %llu calls.  Include it after a `seccomp default` line;\n"
           "# rules below allow exactly what was used", pl->n_sorted, (unsigned long long) pl->calls);
  fputs (info->collapse_pct > 0 && info->collapse_pct < 100 ? " (whole groups where marked).\n" : ".\n", f);
  put_programs (f, l);
  put_mounts (f, l);

  bool any_selected = false;
  for (size_t k = 0; k < pl->n_g; k++)
    {
      const struct group *g = &pl->g[k];
      if (!g->selected)
        continue;
      if (!any_selected)
        fputc ('\n', f);
      any_selected = true;
      char at[128];
      snprintf (at, sizeof at, "@%s", g->name);
      int len = securer_rule_put (f, at, allow, NULL, 0, NULL);
      pad_to_comment (f, len);
      fprintf (f, "%zu of %zu used, ", g->used, g->n);
      put_calls (f, g->calls);
      fputc ('\n', f);
      /* Say what the group adds beyond the run, so the reviewer sees it. */
      char **extra = calloc (g->n + 1, sizeof *extra);
      size_t n_extra = 0;
      for (size_t j = 0; extra != NULL && j < g->n; j++)
        {
          bool used = false;
          for (size_t i = 0; i < pl->n_sorted && !used; i++)
            used = strcmp (pl->sorted[i]->name, g->members[j]) == 0 && !conditioned (pl->sorted[i]);
          if (!used)
            extra[n_extra++] = g->members[j];
        }
      if (n_extra > 0)
        put_words (f, "#   also allows:", extra, n_extra);
      free (extra);
    }

  /* Remaining syscalls, under their smallest group (groups by name, then
   * the syscalls in no shipped group). */
  for (size_t k = 0; k <= pl->n_g; k++)
    {
      bool header = false;
      for (size_t i = 0; i < pl->n_sorted; i++)
        {
          if (pl->cover[i] >= 0)
            continue;
          if (k < pl->n_g ? pl->home[i] != (int) k : pl->home[i] >= 0)
            continue;
          if (!header)
            {
              if (k < pl->n_g)
                fprintf (f, "\n# @%s: %zu of %zu used\n", pl->g[k].name, pl->g[k].used, pl->g[k].n);
              else
                fputs ("\n# in no shipped group\n", f);
              header = true;
            }
          put_entry (f, pl->sorted[i]);
        }
    }

  if (pl->n_other > 0)
    {
      fputs ("\n# Not allowed above:\n", f);
      for (size_t i = 0; i < pl->n_other; i++)
        {
          const struct entry *e = pl->other[i];
          fputs ("#   ", f);
          put_safe (f, e->name);
          if (e->denied > 0)
            {
              fputs (": ", f);
              put_calls (f, e->denied);
              fputs (" stopped by ", f);
              securer_rule_put_action (f, e->denied_action);
            }
          if (e->other && e->calls > 0)
            {
              fputs (": ", f);
              put_calls (f, e->calls);
              fputs (strchr (e->name, ':') ? " through another ABI" : ", unknown to libseccomp", f);
            }
          fputc ('\n', f);
        }
    }
}

char *
securer_learn_fragment (const struct securer_learn *l, const struct securer_learn_info *info,
                        securer_err_t *err)
{
  struct plan pl;
  if (make_plan (l, info->collapse_pct, &pl, err) < 0)
    return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  if (f == NULL)
    {
      plan_free (&pl);
      securer_error_set (err, errno, "learn: write the fragment");
      return NULL;
    }
  write_fragment (f, l, &pl, info);
  plan_free (&pl);
  if (fclose (f) != 0)
    {
      free (buf);
      securer_error_set (err, ENOMEM, "learn: write the fragment");
      return NULL;
    }
  return buf;
}

/* ---- JSON -------------------------------------------------------------- */

static json_t *
jaction (struct securer_action a)
{
  const char *n = securer_action_name (a.type);
  json_t *o = json_pack ("{s:s}", "type", n ? n : "?");
  if (o != NULL && a.type == SECURER_ACT_ERRNO)
    {
      const char *en = securer_errno_name (a.errnum);
      json_object_set_new (o, "errno", en ? json_string (en) : json_integer (a.errnum));
    }
  return o;
}

static json_t *
jstatus (const struct securer_status *st)
{
  if (st == NULL)
    return json_null ();
  json_t *o = json_object ();
  json_object_set_new (o, "exit_status", json_integer (securer_status_exit_code (st)));
  if (st->exited)
    json_object_set_new (o, "exit_code", json_integer (st->exit_code));
  else
    json_object_set_new (o, "signal", json_integer (st->signal));
  json_object_set_new (o, "timeout", json_boolean (st->reason == SECURER_KILL_TIMEOUT));
  if (st->detail != NULL)
    json_object_set_new (o, "detail", json_string (st->detail));
  return o;
}

json_t *
securer_learn_json (const struct securer_learn *l, const struct securer_learn_info *info,
                    securer_err_t *err)
{
  char *text = securer_learn_fragment (l, info, err);
  if (text == NULL)
    return NULL;
  struct plan pl;
  if (make_plan (l, info->collapse_pct, &pl, err) < 0)
    {
      free (text);
      return NULL;
    }
  json_t *o = json_object ();
  json_t *cmd = json_array ();
  for (char *const *a = info->argv; a != NULL && *a != NULL; a++)
    json_array_append_new (cmd, json_string (*a));
  json_object_set_new (o, "command", cmd);
  if (info->n_runs > 1)
    {
      json_t *runs = json_array ();
      for (size_t r = 0; r < info->n_runs; r++)
        {
          json_t *c = json_array ();
          for (char *const *a = info->runs[r].argv; a != NULL && *a != NULL; a++)
            json_array_append_new (c, json_string (*a));
          json_array_append_new (runs, json_pack ("{s:o, s:o}", "command", c, "status",
                                                  jstatus (info->runs[r].status)));
        }
      json_object_set_new (o, "runs", runs);
    }
  json_object_set_new (o, "base", info->base ? json_string (info->base) : json_null ());
  json_object_set_new (o, "mechanism", json_string ("seccomp-user-notification"));
  json_object_set_new (o, "base_denials_kept", json_boolean (info->keep_denials));
  json_object_set_new (o, "status", jstatus (info->status));
  json_object_set_new (o, "calls", json_integer ((json_int_t) pl.calls));

  json_t *sys = json_array ();
  for (size_t i = 0; i < pl.n_sorted; i++)
    {
      const struct entry *e = pl.sorted[i];
      json_t *s = json_pack ("{s:s, s:I, s:o, s:o}", "name", e->name, "calls", (json_int_t) e->calls,
                             "group", pl.home[i] >= 0 ? json_string (pl.g[pl.home[i]].name) : json_null (),
                             "allowed_by_group",
                             pl.cover[i] >= 0 ? json_string (pl.g[pl.cover[i]].name) : json_null ());
      if (e->base_denied > 0)
        {
          json_object_set_new (s, "base_action", jaction (e->base_action));
          json_object_set_new (s, "base_denied_calls", json_integer ((json_int_t) e->base_denied));
        }
      if (conditioned (e))
        {
          json_t *vals = json_array ();
          for (size_t k = 0; k < e->n_values; k++)
            {
              const char *vn = value_name (e, e->values[k].value);
              json_array_append_new (vals, json_pack ("{s:I, s:o, s:I}", "value", (json_int_t) e->values[k].value,
                                                      "name", vn ? json_string (vn) : json_null (),
                                                      "calls", (json_int_t) e->values[k].calls));
            }
          json_object_set_new (s, "arg", json_integer (e->refine->arg));
          json_object_set_new (s, "values", vals);
        }
      json_array_append_new (sys, s);
    }
  json_object_set_new (o, "syscalls", sys);

  json_t *other = json_array ();
  for (size_t i = 0; i < pl.n_other; i++)
    {
      const struct entry *e = pl.other[i];
      json_t *s = json_pack ("{s:s, s:I, s:I, s:b}", "name", e->name, "calls", (json_int_t) e->calls,
                             "denied_calls", (json_int_t) e->denied, "expressible", !e->other);
      if (e->denied > 0)
        json_object_set_new (s, "denied_by", jaction (e->denied_action));
      json_array_append_new (other, s);
    }
  json_object_set_new (o, "not_allowed", other);

  json_t *groups = json_array ();
  for (size_t k = 0; k < pl.n_g; k++)
    if (pl.g[k].used > 0)
      json_array_append_new (groups, json_pack ("{s:s, s:I, s:I, s:b}", "name", pl.g[k].name,
                                                "used", (json_int_t) pl.g[k].used,
                                                "members", (json_int_t) pl.g[k].n,
                                                "written_whole", pl.g[k].selected));
  json_object_set_new (o, "groups", groups);
  json_t *programs = json_array ();
  for (size_t i = 0; i < l->n_programs; i++)
    json_array_append_new (programs, json_pack ("{s:s, s:b}", "path", l->programs[i], "loader", l->loader[i]));
  json_object_set_new (o, "programs", programs);
  json_t *files = json_array ();
  for (size_t i = 0; i < l->n_files; i++)
    json_array_append_new (files, json_pack ("{s:s, s:b}", "path", l->files[i], "dir", l->is_dir[i]));
  json_object_set_new (o, "files", files);
  json_object_set_new (o, "fragment", json_string (text));
  free (text);
  plan_free (&pl);
  return o;
}

/* ---- each call --------------------------------------------------------- */

int
securer_learn_each (const struct securer_learn *l, securer_learn_each_cb cb, void *ctx)
{
  const struct entry **v = calloc (l->n + 1, sizeof *v);
  if (v == NULL)
    return -1;
  size_t n = 0;
  for (size_t i = 0; i < l->n; i++)
    if (l->v[i].calls > 0 && !l->v[i].other)
      v[n++] = &l->v[i];
  qsort (v, n, sizeof *v, cmp_entry_name);
  int r = 0;
  for (size_t i = 0; i < n && r == 0; i++)
    {
      const struct entry *e = v[i];
      uint64_t values[MAX_VALUES];
      const char *names[MAX_VALUES];
      struct securer_learned_call c = { e->name, conditioned (e), e->refine ? e->refine->arg : 0, values, names,
                                        0, { 0 } };
      memcpy (c.args, e->first_args, sizeof c.args);
      for (size_t k = 0; c.conditioned && k < e->n_values; k++)
        {
          names[c.n_values] = value_name (e, e->values[k].value);
          values[c.n_values++] = e->values[k].value;
        }
      r = cb (ctx, &c);
    }
  free (v);
  return r;
}
