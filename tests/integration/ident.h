/* Identities of processes and namespaces that stay true over a test.
 *
 * The kernel recycles the numbers it names them by: a namespace's inode
 * number goes back to its allocator the moment the namespace is freed and
 * is handed to the next one made (lowest free number first), and a pid is
 * reused once the counter wraps.  A number read early and compared later
 * can therefore name something else.  So a namespace is held open for as
 * long as it is compared against (its inode stays allocated while the
 * descriptor lives), and a process is named by its pid together with its
 * start time, which a later process with the same pid cannot share. */
#ifndef SECURER_TEST_IDENT_H
#define SECURER_TEST_IDENT_H

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ---- namespaces ---------------------------------------------------------- */

struct ns_ref
{
  int fd;
  dev_t dev;
  ino_t ino;
};

/* Takes ownership of fd, a descriptor of a namespace. */
static inline struct ns_ref
ns_ref_from_fd (int fd)
{
  struct ns_ref r = { .fd = fd };
  struct stat st;
  cr_assert_geq (fd, 0);
  cr_assert_eq (fstat (fd, &st), 0, "fstat of a namespace: %s", strerror (errno));
  r.dev = st.st_dev;
  r.ino = st.st_ino;
  return r;
}

/* Namespace of kind ns ("pid", "net", ...) of a live process. */
static inline struct ns_ref
ns_ref_of (pid_t pid, const char *ns)
{
  char path[64];
  if (pid == 0)
    snprintf (path, sizeof path, "/proc/self/ns/%s", ns);
  else
    snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) pid, ns);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "%s: %s", path, strerror (errno));
  return ns_ref_from_fd (fd);
}

static inline bool
ns_ref_same (const struct ns_ref *a, const struct ns_ref *b)
{
  return a->dev == b->dev && a->ino == b->ino;
}

/* Whether the namespace at path (e.g. /proc/PID/ns/pid) is the held one;
 * false when path cannot be read (the process is gone). */
static inline bool
ns_ref_is_at (const struct ns_ref *r, const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && st.st_dev == r->dev && st.st_ino == r->ino;
}

static inline void
ns_ref_release (struct ns_ref *r)
{
  if (r->fd >= 0)
    close (r->fd);
  r->fd = -1;
}

/* ---- processes ----------------------------------------------------------- */

struct proc_ident
{
  pid_t pid;
  unsigned long long start; /* /proc/PID/stat field 22, in clock ticks since boot */
};

/* Fields of /proc/PID/stat after the command name: its state and start
 * time; false when the process has been reaped. */
static inline bool
proc_stat_read (pid_t pid, char *state, unsigned long long *start)
{
  char path[64], buf[1024];
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return false;
  bool got = fgets (buf, sizeof buf, f) != NULL;
  fclose (f);
  /* The name may hold spaces and parentheses: the last ')' ends it. */
  const char *p = got ? strrchr (buf, ')') : NULL;
  if (p == NULL)
    return false;
  /* Field 3 is the state, 22 the start time: 18 fields between. */
  return sscanf (p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
                 state, start)
         == 2;
}

/* Identity of a process that exists now. */
static inline struct proc_ident
proc_ident_of (pid_t pid)
{
  struct proc_ident id = { .pid = pid };
  char state;
  cr_assert (proc_stat_read (pid, &state, &id.start), "process %d is not there", (int) pid);
  return id;
}

static inline bool
proc_ident_same (struct proc_ident a, struct proc_ident b)
{
  return a.pid == b.pid && a.start == b.start;
}

/* The process still exists (a zombie not yet reaped counts). */
static inline bool
proc_ident_exists (struct proc_ident id)
{
  char state;
  unsigned long long start;
  return proc_stat_read (id.pid, &state, &start) && start == id.start;
}

/* The process still runs: it exists and is not a zombie. */
static inline bool
proc_ident_running (struct proc_ident id)
{
  char state;
  unsigned long long start;
  return proc_stat_read (id.pid, &state, &start) && start == id.start && state != 'Z';
}

#endif
