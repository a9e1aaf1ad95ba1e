/* Landlock step: rules derived from a policy IR built here, applied in a
 * forked child (Landlock needs no namespace, only no_new_privs), and the
 * child's own view of what it may do.  The paths are host paths because
 * nothing is pivot_root'ed here; the rules are the same. */
#include <config.h>

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "linux/landlock-internal.h"
#include "linux/landlock-uapi.h"

/* ---- fixture: a directory tree to confine against ---------------------- */

static char top[64];
static char ro[128], rw[128], hidden[128];

static void
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f, "create %s: %s", path, strerror (errno));
  fputs (text, f);
  fclose (f);
}

static void
copy_file (const char *from, const char *to)
{
  int in = open (from, O_RDONLY);
  cr_assert_geq (in, 0);
  int out = open (to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
  cr_assert_geq (out, 0);
  char buf[65536];
  ssize_t n;
  while ((n = read (in, buf, sizeof buf)) > 0)
    cr_assert_eq (write (out, buf, (size_t) n), n);
  close (in);
  close (out);
}

static void
setup_tree (void)
{
  strcpy (top, "/tmp/securer-ll-XXXXXX");
  cr_assert_not_null (mkdtemp (top));
  snprintf (ro, sizeof ro, "%s/ro", top);
  snprintf (rw, sizeof rw, "%s/rw", top);
  snprintf (hidden, sizeof hidden, "%s/hidden", top);
  char p[256];
  cr_assert_eq (mkdir (ro, 0755), 0);
  cr_assert_eq (mkdir (rw, 0755), 0);
  cr_assert_eq (mkdir (hidden, 0755), 0);
  snprintf (p, sizeof p, "%s/a", rw);
  cr_assert_eq (mkdir (p, 0755), 0);
  snprintf (p, sizeof p, "%s/b", rw);
  cr_assert_eq (mkdir (p, 0755), 0);
  snprintf (p, sizeof p, "%s/file", ro);
  write_file (p, "read me\n");
  snprintf (p, sizeof p, "%s/secret", hidden);
  write_file (p, "secret\n");
  snprintf (p, sizeof p, "%s/a/f", rw);
  write_file (p, "movable\n");
  snprintf (p, sizeof p, "%s/true", rw);
  copy_file ("/usr/bin/true", p);
  snprintf (p, sizeof p, "%s/true", ro);
  copy_file ("/usr/bin/true", p);
}

static void
rm_tree (const char *path)
{
  struct stat st;
  if (lstat (path, &st) < 0)
    return;
  if (S_ISDIR (st.st_mode))
    {
      const char *kids[] = { "ro", "rw", "hidden", "a", "b", "file", "secret", "f", "true",
                             "new", "l", "moved", "x" };
      for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++)
        {
          char p[256];
          snprintf (p, sizeof p, "%s/%s", path, kids[i]);
          rm_tree (p);
        }
      rmdir (path);
    }
  else
    unlink (path);
}

static void
teardown_tree (void)
{
  rm_tree (top);
}

/* ---- policies ------------------------------------------------------- */

static char *loader = "/lib64/ld-linux-x86-64.so.2";
static char *exec_true = "/usr/bin/true";

struct pol {
  struct securer_policy p;
  struct securer_mount m[8];
  char *exec[4];
  uint16_t bind[2], conn[2];
};

static void
pol_init (struct pol *x, enum securer_enforce mode)
{
  memset (x, 0, sizeof *x);
  x->m[0] = (struct securer_mount){ .type = SECURER_MOUNT_RO, .source = "/usr", .dest = "/usr" };
  x->m[1] = (struct securer_mount){ .type = SECURER_MOUNT_RO, .source = ro, .dest = ro };
  x->m[2] = (struct securer_mount){ .type = SECURER_MOUNT_RW, .source = rw, .dest = rw,
                                    .noexec = true };
  x->m[3] = (struct securer_mount){ .type = SECURER_MOUNT_DEV, .dest = "/dev" };
  x->p.mounts = x->m;
  x->p.n_mounts = 4;
  x->exec[0] = exec_true;
  x->exec[1] = loader;
  x->p.exec = x->exec;
  x->p.n_exec = 2;
  x->p.exec_restricted = true;
  x->p.network = SECURER_NET_NONE;
  x->p.landlock.mode = mode;
}

/* ---- running a probe confined ----------------------------------------- */

struct outcome {
  int rc;                 /* securer_landlock_apply_abi's return */
  int status;             /* the error's suggested exit status */
  char msg[256];          /* the error message */
  struct securer_landlock_report rep;  /* summary copied into sum */
  char sum[512];
  int fds_leaked;
  int probe;              /* the probe's result (an errno, 0 = success) */
};

typedef int (*probe_fn) (void *arg);

static int
count_fds (void)
{
  int n = 0;
  for (int fd = 0; fd < 1024; fd++)
    if (fcntl (fd, F_GETFD) >= 0)
      n++;
  return n;
}

/* abi < 0: the kernel's own. */
static struct outcome
run_confined (const struct securer_policy *p, int abi, probe_fn fn, void *arg)
{
  int pfd[2];
  cr_assert_eq (pipe (pfd), 0);
  fflush (NULL);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      close (pfd[0]);
      struct outcome o;
      memset (&o, 0, sizeof o);
      securer_err_t err = NULL;
      int before = count_fds ();
      o.rc = abi < 0 ? securer_landlock_apply (p, &o.rep, &err)
                     : securer_landlock_apply_abi (p, abi, &o.rep, &err);
      o.fds_leaked = count_fds () - before;
      if (o.rc < 0)
        {
          snprintf (o.msg, sizeof o.msg, "%s", securer_error_message (err));
          o.status = err ? err->status : 0;
          securer_error_free (&err);
        }
      else
        {
          if (o.rep.summary)
            snprintf (o.sum, sizeof o.sum, "%s", o.rep.summary);
          free (o.rep.summary);
          o.rep.summary = NULL;
          o.probe = fn ? fn (arg) : 0;
        }
      if (write (pfd[1], &o, sizeof o) != (ssize_t) sizeof o)
        _exit (3);
      _exit (0);
    }
  close (pfd[1]);
  struct outcome o;
  memset (&o, 0, sizeof o);
  ssize_t n = read (pfd[0], &o, sizeof o);
  close (pfd[0]);
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "probe child died (status 0x%x)", st);
  cr_assert_eq (n, (ssize_t) sizeof o);
  o.rep.summary = NULL;
  return o;
}

static struct outcome
confined_ok (const struct securer_policy *p, probe_fn fn, void *arg)
{
  struct outcome o = run_confined (p, -1, fn, arg);
  cr_assert_eq (o.rc, 0, "apply failed: %s", o.msg);
  cr_assert_eq (o.fds_leaked, 0, "apply leaked %d fds", o.fds_leaked);
  return o;
}

/* ---- probes: each returns 0 or the errno that stopped it --------------- */

static int
probe_open (void *arg)
{
  const char *spec = arg;  /* "r:path" or "w:path" or "c:path" (create) */
  int flags = spec[0] == 'r' ? O_RDONLY : spec[0] == 'w' ? O_WRONLY : O_WRONLY | O_CREAT;
  int fd = open (spec + 2, flags | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno;
  if (spec[0] == 'r')
    {
      char c;
      if (read (fd, &c, 1) < 0)
        {
          int e = errno;
          close (fd);
          return e;
        }
    }
  else if (write (fd, "x", 1) != 1)
    {
      int e = errno;
      close (fd);
      return e;
    }
  close (fd);
  return 0;
}

static int
probe_exec (void *arg)
{
  char *path = arg;
  char *argv[] = { path, NULL };
  char *envp[] = { NULL };
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    return 250;
  if (pid == 0)
    {
      execve (path, argv, envp);
      _exit (errno);
    }
  int st;
  if (waitpid (pid, &st, 0) != pid || !WIFEXITED (st))
    return 251;
  return WEXITSTATUS (st);
}

static int
probe_truncate (void *arg)
{
  return truncate ((const char *) arg, 0) < 0 ? errno : 0;
}

static int
probe_rename (void *arg)
{
  const char *const *pair = arg;
  return rename (pair[0], pair[1]) < 0 ? errno : 0;
}

static int
probe_link (void *arg)
{
  const char *const *pair = arg;
  return link (pair[0], pair[1]) < 0 ? errno : 0;
}

static int
probe_ioctl (void *arg)
{
  int fd = open ((const char *) arg, O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return 200;  /* the open itself is not what is under test */
  struct termios t;
  int r = ioctl (fd, TCGETS, &t) < 0 ? errno : 0;
  close (fd);
  return r;
}

static int
probe_tcp_connect (void *arg)
{
  int port = *(int *) arg;
  int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return 200;
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  int r = connect (s, (struct sockaddr *) &a, sizeof a) < 0 ? errno : 0;
  close (s);
  return r;
}

static int
probe_tcp_bind (void *arg)
{
  int port = *(int *) arg;
  int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return 200;
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  int r = bind (s, (struct sockaddr *) &a, sizeof a) < 0 ? errno : 0;
  close (s);
  return r;
}

static int
probe_abstract_connect (void *arg)
{
  const char *name = arg;
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return 200;
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  size_t len = strlen (name);
  memcpy (a.sun_path + 1, name, len);
  int r = connect (s, (struct sockaddr *) &a,
                   (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + len))
              < 0
            ? errno
            : 0;
  close (s);
  return r;
}

static int
probe_kill_parent (void *arg)
{
  (void) arg;
  return kill (getppid (), 0) < 0 ? errno : 0;
}

static int
probe_kill_own_child (void *arg)
{
  (void) arg;
  pid_t pid = fork ();
  if (pid == 0)
    {
      pause ();
      _exit (0);
    }
  int r = kill (pid, SIGTERM) < 0 ? errno : 0;
  waitpid (pid, NULL, 0);
  return r;
}

static char *
path_in (const char *dir, const char *name)
{
  static char buf[8][256];
  static int i;
  char *b = buf[i++ % 8];
  snprintf (b, sizeof buf[0], "%s/%s", dir, name);
  return b;
}

static char *
spec (char mode, const char *path)
{
  static char buf[8][300];
  static int i;
  char *b = buf[i++ % 8];
  snprintf (b, sizeof buf[0], "%c:%s", mode, path);
  return b;
}

static void
need_abi (int abi)
{
  int have = securer_landlock_abi ();
  if (have < abi)
    cr_skip_test ("kernel Landlock ABI %d < %d", have, abi);
}

TestSuite (landlock, .init = setup_tree, .fini = teardown_tree);

/* ---- filesystem ------------------------------------------------------- */

Test (landlock, reads_listed_path)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_open, spec ('r', path_in (ro, "file")));
  cr_assert_eq (o.probe, 0, "read ro/file: %s", strerror (o.probe));
}

Test (landlock, read_outside_rules_is_eacces)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_open, spec ('r', path_in (hidden, "secret")));
  cr_assert_eq (o.probe, EACCES, "got %s", strerror (o.probe));
  o = confined_ok (&x.p, probe_open, spec ('r', "/etc/passwd"));
  cr_assert_eq (o.probe, EACCES, "got %s", strerror (o.probe));
}

Test (landlock, write_to_ro_path_is_eacces)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_open, spec ('w', path_in (ro, "file")));
  cr_assert_eq (o.probe, EACCES, "got %s", strerror (o.probe));
  o = confined_ok (&x.p, probe_open, spec ('c', path_in (ro, "new")));
  cr_assert_eq (o.probe, EACCES, "got %s", strerror (o.probe));
}

Test (landlock, write_in_rw_path_works)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_open, spec ('c', path_in (rw, "new")));
  cr_assert_eq (o.probe, 0, "create rw/new: %s", strerror (o.probe));
  struct stat st;
  cr_assert_eq (stat (path_in (rw, "new"), &st), 0);
  cr_assert_eq (st.st_size, 1);
}

Test (landlock, writes_dev_null)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_open, spec ('w', "/dev/null"));
  cr_assert_eq (o.probe, 0, "write /dev/null: %s", strerror (o.probe));
}

Test (landlock, exec_outside_list_is_eacces)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_exec, "/usr/bin/id");
  cr_assert_eq (o.probe, EACCES, "exec id: got %d", o.probe);
  /* Same bytes as the allowed program, different path. */
  o = confined_ok (&x.p, probe_exec, path_in (ro, "true"));
  cr_assert_eq (o.probe, EACCES, "exec ro/true: got %d", o.probe);
}

Test (landlock, exec_in_list_works)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_exec, exec_true);
  cr_assert_eq (o.probe, 0, "exec true: got %d", o.probe);
}

Test (landlock, exec_needs_the_loader_listed)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.p.n_exec = 1;  /* the program only */
  struct outcome o = confined_ok (&x.p, probe_exec, exec_true);
  cr_assert_eq (o.probe, EACCES, "exec true without the loader: got %d", o.probe);
}

Test (landlock, no_exec_list_follows_mount_noexec)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.p.exec_restricted = false;
  x.p.n_exec = 0;
  struct outcome o = confined_ok (&x.p, probe_exec, "/usr/bin/true");
  cr_assert_eq (o.probe, 0, "exec /usr/bin/true: got %d", o.probe);
  o = confined_ok (&x.p, probe_exec, path_in (rw, "true"));
  cr_assert_eq (o.probe, EACCES, "exec rw/true (noexec mount): got %d", o.probe);
}

Test (landlock, exec_list_overrides_rw)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_exec, path_in (rw, "true"));
  cr_assert_eq (o.probe, EACCES, "exec rw/true: got %d", o.probe);
}

Test (landlock, truncate_follows_write_rights)
{
  need_abi (3);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_truncate, path_in (ro, "file"));
  cr_assert_eq (o.probe, EACCES, "truncate ro/file: %s", strerror (o.probe));
  o = confined_ok (&x.p, probe_truncate, path_in (rw, "a/f"));
  cr_assert_eq (o.probe, 0, "truncate rw/a/f: %s", strerror (o.probe));
}

Test (landlock, refer_inside_rw_but_not_into_more_rights)
{
  need_abi (2);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  const char *move[] = { path_in (rw, "a/f"), path_in (rw, "b/moved") };
  struct outcome o = confined_ok (&x.p, probe_rename, move);
  cr_assert_eq (o.probe, 0, "rename a/f -> b/moved: %s", strerror (o.probe));
  /* A hard link would give a read-only file the rw tree's rights. */
  const char *up[] = { path_in (ro, "file"), path_in (rw, "l") };
  o = confined_ok (&x.p, probe_link, up);
  cr_assert_eq (o.probe, EXDEV, "link ro/file -> rw/l: %s", strerror (o.probe));
  const char *down[] = { path_in (rw, "b/moved"), path_in (ro, "x") };
  o = confined_ok (&x.p, probe_rename, down);
  cr_assert_eq (o.probe, EACCES, "rename rw -> ro: %s", strerror (o.probe));
}

Test (landlock, ioctl_dev_only_on_ttys)
{
  need_abi (5);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_ioctl, "/dev/null");
  cr_assert_eq (o.probe, EACCES, "TCGETS on /dev/null: %s", strerror (o.probe));
  /* Without Landlock the driver answers, and says it is no tty. */
  x.p.landlock.mode = SECURER_ENFORCE_OFF;
  o = confined_ok (&x.p, probe_ioctl, "/dev/null");
  cr_assert_eq (o.probe, ENOTTY, "TCGETS on /dev/null unconfined: %s", strerror (o.probe));
  /* ptmx has ioctl_dev: the driver is reached. */
  x.p.landlock.mode = SECURER_ENFORCE_REQUIRED;
  o = confined_ok (&x.p, probe_ioctl, "/dev/ptmx");
  cr_assert_neq (o.probe, EACCES, "TCGETS on /dev/ptmx: %s", strerror (o.probe));
  cr_assert_neq (o.probe, 200, "could not open /dev/ptmx");
}

/* ---- network ---------------------------------------------------------- */

static int
listen_loopback (int *port)
{
  int s = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  cr_assert_geq (s, 0);
  struct sockaddr_in a = { .sin_family = AF_INET };
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  cr_assert_eq (bind (s, (struct sockaddr *) &a, sizeof a), 0);
  cr_assert_eq (listen (s, 4), 0);
  socklen_t len = sizeof a;
  cr_assert_eq (getsockname (s, (struct sockaddr *) &a, &len), 0);
  *port = ntohs (a.sin_port);
  return s;
}

Test (landlock, tcp_connect_only_to_listed_ports)
{
  need_abi (4);
  int port;
  int s = listen_loopback (&port);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.p.network = SECURER_NET_HOST;
  x.conn[0] = (uint16_t) (port == 65535 ? 1 : port + 1);
  x.p.landlock.tcp_connect = x.conn;
  x.p.landlock.n_tcp_connect = 1;
  struct outcome o = confined_ok (&x.p, probe_tcp_connect, &port);
  cr_assert_eq (o.probe, EACCES, "connect to unlisted port: %s", strerror (o.probe));
  x.conn[0] = (uint16_t) port;
  o = confined_ok (&x.p, probe_tcp_connect, &port);
  cr_assert_eq (o.probe, 0, "connect to listed port: %s", strerror (o.probe));
  close (s);
}

Test (landlock, private_network_handles_tcp_with_nothing_allowed)
{
  need_abi (4);
  int port;
  int s = listen_loopback (&port);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.p.network = SECURER_NET_NONE;
  struct outcome o = confined_ok (&x.p, probe_tcp_connect, &port);
  cr_assert_eq (o.probe, EACCES, "connect: %s", strerror (o.probe));
  int any = port == 65535 ? 1 : port + 1;
  o = confined_ok (&x.p, probe_tcp_bind, &any);
  cr_assert_eq (o.probe, EACCES, "bind: %s", strerror (o.probe));
  close (s);
}

Test (landlock, host_network_without_ports_leaves_tcp_alone)
{
  need_abi (4);
  int port;
  int s = listen_loopback (&port);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.p.network = SECURER_NET_HOST;
  struct outcome o = confined_ok (&x.p, probe_tcp_connect, &port);
  cr_assert_eq (o.probe, 0, "connect: %s", strerror (o.probe));
  close (s);
}

Test (landlock, tcp_bind_only_listed_ports)
{
  need_abi (4);
  int port;
  int s = listen_loopback (&port);
  close (s);  /* a port that was just free */
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.bind[0] = (uint16_t) port;
  x.p.landlock.tcp_bind = x.bind;
  x.p.landlock.n_tcp_bind = 1;
  struct outcome o = confined_ok (&x.p, probe_tcp_bind, &port);
  cr_assert_eq (o.probe, 0, "bind listed port %d: %s", port, strerror (o.probe));
  int other = port == 65535 ? 1 : port + 1;
  o = confined_ok (&x.p, probe_tcp_bind, &other);
  cr_assert_eq (o.probe, EACCES, "bind unlisted port: %s", strerror (o.probe));
}

/* ---- scopes ------------------------------------------------------------ */

Test (landlock, abstract_unix_connect_outside_is_eperm)
{
  need_abi (6);
  char name[64];
  snprintf (name, sizeof name, "securer-ll-test-%d", (int) getpid ());
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  cr_assert_geq (s, 0);
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  memcpy (a.sun_path + 1, name, strlen (name));
  socklen_t len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + 1 + strlen (name));
  cr_assert_eq (bind (s, (struct sockaddr *) &a, len), 0);
  cr_assert_eq (listen (s, 4), 0);

  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_abstract_connect, name);
  cr_assert_eq (o.probe, 0, "unscoped connect: %s", strerror (o.probe));
  x.p.landlock.scope_abstract_unix = true;
  o = confined_ok (&x.p, probe_abstract_connect, name);
  cr_assert_eq (o.probe, EPERM, "scoped connect: %s", strerror (o.probe));
  close (s);
}

Test (landlock, signal_outside_is_eperm)
{
  need_abi (6);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = confined_ok (&x.p, probe_kill_parent, NULL);
  cr_assert_eq (o.probe, 0, "unscoped kill: %s", strerror (o.probe));
  x.p.landlock.scope_signal = true;
  o = confined_ok (&x.p, probe_kill_parent, NULL);
  cr_assert_eq (o.probe, EPERM, "scoped kill of the parent: %s", strerror (o.probe));
  o = confined_ok (&x.p, probe_kill_own_child, NULL);
  cr_assert_eq (o.probe, 0, "scoped kill of its own child: %s", strerror (o.probe));
}

/* ---- modes and ABI differences ------------------------------------------ */

Test (landlock, required_fails_closed_on_old_abi)
{
  need_abi (5);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = run_confined (&x.p, 3, probe_open, spec ('r', path_in (hidden, "secret")));
  cr_assert_eq (o.rc, -1);
  cr_assert_str_eq (o.msg, "kernel ABI 3 cannot enforce IOCTL_DEV (needs 5)");
  cr_assert_eq (o.status, 125);

  o = run_confined (&x.p, 2, NULL, NULL);
  cr_assert_str_eq (o.msg, "kernel ABI 2 cannot enforce TRUNCATE (needs 3)");

  o = run_confined (&x.p, 0, NULL, NULL);
  cr_assert_eq (o.rc, -1);
  cr_assert_str_eq (o.msg, "the kernel does not support Landlock (policy requires it)");
}

Test (landlock, required_fails_closed_on_missing_scope_and_ports)
{
  need_abi (5);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.p.landlock.scope_signal = true;
  struct outcome o = run_confined (&x.p, 5, NULL, NULL);
  cr_assert_eq (o.rc, -1);
  cr_assert_str_eq (o.msg, "kernel ABI 5 cannot enforce scope SIGNAL (needs 6)");

  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.m[3].type = SECURER_MOUNT_PROC;  /* no /dev: ioctl_dev is not needed */
  x.m[3].dest = "/proc";
  x.conn[0] = 443;
  x.p.landlock.tcp_connect = x.conn;
  x.p.landlock.n_tcp_connect = 1;
  o = run_confined (&x.p, 3, NULL, NULL);
  cr_assert_eq (o.rc, -1);
  cr_assert_str_eq (o.msg, "kernel ABI 3 cannot enforce BIND_TCP (needs 4)");
}

Test (landlock, required_without_ports_does_not_need_net)
{
  need_abi (3);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.m[3].type = SECURER_MOUNT_PROC;
  x.m[3].dest = "/proc";
  struct outcome o = run_confined (&x.p, 3, probe_open, spec ('r', path_in (hidden, "secret")));
  cr_assert_eq (o.rc, 0, "%s", o.msg);
  cr_assert_eq (o.probe, EACCES);
  cr_assert_eq (o.rep.handled_net, 0);
  cr_assert_eq (o.rep.handled_fs, SECURER_LL_FS_ABI3);
}

Test (landlock, best_effort_enforces_what_the_abi_has)
{
  need_abi (5);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_BEST_EFFORT);
  x.m[3].type = SECURER_MOUNT_PROC;  /* a /dev rule count would depend on the host */
  x.m[3].dest = "/proc";
  x.p.landlock.scope_signal = true;
  struct outcome o = run_confined (&x.p, 3, probe_open, spec ('r', path_in (hidden, "secret")));
  cr_assert_eq (o.rc, 0, "%s", o.msg);
  cr_assert (o.rep.enforced);
  cr_assert_eq (o.rep.abi, 3);
  cr_assert_eq (o.rep.handled_fs, SECURER_LL_FS_ABI3);
  cr_assert_eq (o.rep.handled_net, 0);
  cr_assert_eq (o.rep.scoped, 0);
  cr_assert_eq (o.probe, EACCES, "read outside under ABI 3: %s", strerror (o.probe));
  cr_assert_str_eq (o.sum, "landlock best-effort, ABI 3: fs 15 rights, 7 rules; net none, 0 ports; "
                           "scoped none; not enforced (ABI 3): ioctl_dev,bind_tcp,connect_tcp,"
                           "signal");

  o = run_confined (&x.p, 0, probe_open, spec ('r', path_in (hidden, "secret")));
  cr_assert_eq (o.rc, 0, "%s", o.msg);
  cr_assert_not (o.rep.enforced);
  cr_assert_eq (o.probe, 0, "nothing enforced, yet: %s", strerror (o.probe));
}

Test (landlock, off_does_nothing)
{
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_OFF);
  struct outcome o = run_confined (&x.p, -1, probe_open, spec ('r', path_in (hidden, "secret")));
  cr_assert_eq (o.rc, 0);
  cr_assert_not (o.rep.enforced);
  cr_assert_eq (o.probe, 0);
  cr_assert_str_eq (o.sum, "landlock off (policy)");
}

Test (landlock, report_of_full_abi)
{
  need_abi (6);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.m[3].type = SECURER_MOUNT_PROC;
  x.m[3].dest = "/proc";
  x.p.landlock.scope_signal = true;
  x.p.landlock.scope_abstract_unix = true;
  struct outcome o = confined_ok (&x.p, NULL, NULL);
  cr_assert (o.rep.enforced);
  cr_assert_eq (o.rep.handled_fs, SECURER_LL_FS_ABI5);
  cr_assert_eq (o.rep.handled_net, SECURER_LL_NET_ABI4);
  cr_assert_eq (o.rep.scoped, SECURER_LL_SCOPE_ABI6);
  char want[256];
  snprintf (want, sizeof want,
            "landlock required, ABI %d: fs 16 rights, 7 rules; net bind_tcp,connect_tcp, 0 ports; "
            "scoped abstract_unix_socket,signal",
            securer_landlock_abi ());
  cr_assert_str_eq (o.sum, want);
}

Test (landlock, absent_paths_are_counted_not_fatal)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.exec[2] = "/nonexistent/securer-bin";
  x.p.n_exec = 3;
  struct outcome o = confined_ok (&x.p, probe_exec, exec_true);
  cr_assert_eq (o.probe, 0);
  cr_assert (strstr (o.sum, "(1 absent)") != NULL, "%s", o.sum);
}

Test (landlock, relative_destination_is_rejected)
{
  need_abi (1);
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.m[1].dest = "relative/path";
  struct outcome o = run_confined (&x.p, -1, NULL, NULL);
  cr_assert_eq (o.rc, -1);
  cr_assert_str_eq (o.msg,
                    "mount #2: destination is not absolute: EINVAL (Invalid argument)");
  cr_assert_eq (o.status, 125);
}

Test (landlock, abi_above_kernel_is_an_error)
{
  int have = securer_landlock_abi ();
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  struct outcome o = run_confined (&x.p, have + 1, NULL, NULL);
  cr_assert_eq (o.rc, -1);
}

/* ---- the plan (pure) ------------------------------------------------------ */

TestSuite (landlock_plan, .init = setup_tree, .fini = teardown_tree);

static uint64_t
plan_access (const struct securer_landlock_plan *pl, const char *path)
{
  for (size_t i = 0; i < pl->n_paths; i++)
    if (strcmp (pl->paths[i].path, path) == 0)
      return pl->paths[i].access;
  return 0;
}

Test (landlock_plan, rights_by_mount_type)
{
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.m[4] = (struct securer_mount){ .type = SECURER_MOUNT_TMPFS, .dest = "/tmp", .noexec = true };
  x.m[5] = (struct securer_mount){ .type = SECURER_MOUNT_PROC, .dest = "/proc" };
  x.m[6] = (struct securer_mount){ .type = SECURER_MOUNT_SYMLINK, .source = "usr/lib",
                                   .dest = "/lib" };
  x.p.n_mounts = 7;
  struct securer_landlock_plan pl;
  securer_err_t err = NULL;
  cr_assert_eq (securer_landlock_plan_build (&x.p, &pl, &err), 0);

  const uint64_t R = SECURER_LL_ACCESS_FS_READ_FILE | SECURER_LL_ACCESS_FS_READ_DIR;
  const uint64_t X = SECURER_LL_ACCESS_FS_EXECUTE;
  cr_assert_eq (plan_access (&pl, "/usr"), R, "exec list given: /usr is not executable");
  cr_assert_eq (plan_access (&pl, "/proc"), R);
  uint64_t tmp = plan_access (&pl, "/tmp");
  cr_assert (tmp & SECURER_LL_ACCESS_FS_WRITE_FILE);
  cr_assert (tmp & SECURER_LL_ACCESS_FS_MAKE_REG);
  cr_assert (tmp & SECURER_LL_ACCESS_FS_REFER);
  cr_assert (tmp & SECURER_LL_ACCESS_FS_TRUNCATE);
  cr_assert_not (tmp & X);
  cr_assert_not (tmp & SECURER_LL_ACCESS_FS_MAKE_CHAR);
  cr_assert_not (tmp & SECURER_LL_ACCESS_FS_MAKE_BLOCK);
  cr_assert_eq (plan_access (&pl, "/dev"), R);
  cr_assert (plan_access (&pl, "/dev/pts") & SECURER_LL_ACCESS_FS_IOCTL_DEV);
  cr_assert_not (plan_access (&pl, "/dev/null") & SECURER_LL_ACCESS_FS_IOCTL_DEV);
  cr_assert (plan_access (&pl, "/dev/null") & SECURER_LL_ACCESS_FS_WRITE_FILE);
  cr_assert (plan_access (&pl, exec_true) & X);
  cr_assert (plan_access (&pl, loader) & X);
  cr_assert_eq (plan_access (&pl, "/lib"), 0, "symlinks get no rule of their own");
  cr_assert_eq (plan_access (&pl, "/"), SECURER_LL_ACCESS_FS_READ_DIR,
                "the root may be listed, nothing more");
  cr_assert_eq (pl.want_fs, SECURER_LL_FS_ABI5);
  cr_assert (pl.need_fs & SECURER_LL_ACCESS_FS_IOCTL_DEV);
  cr_assert_not (pl.need_fs & SECURER_LL_ACCESS_FS_REFER);
  cr_assert_eq (pl.want_net, SECURER_LL_NET_ABI4);
  cr_assert_eq (pl.need_net, 0);
  securer_landlock_plan_clear (&pl);
}

Test (landlock_plan, without_exec_list_execute_follows_noexec)
{
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.p.exec_restricted = false;
  x.p.n_exec = 0;
  struct securer_landlock_plan pl;
  securer_err_t err = NULL;
  cr_assert_eq (securer_landlock_plan_build (&x.p, &pl, &err), 0);
  cr_assert (plan_access (&pl, "/usr") & SECURER_LL_ACCESS_FS_EXECUTE);
  cr_assert_not (plan_access (&pl, rw) & SECURER_LL_ACCESS_FS_EXECUTE);
  cr_assert_not (plan_access (&pl, "/dev") & SECURER_LL_ACCESS_FS_EXECUTE);
  securer_landlock_plan_clear (&pl);
}

Test (landlock_plan, ports_merge_and_are_needed)
{
  struct pol x;
  pol_init (&x, SECURER_ENFORCE_REQUIRED);
  x.bind[0] = 8080;
  x.conn[0] = 8080;
  x.conn[1] = 443;
  x.p.landlock.tcp_bind = x.bind;
  x.p.landlock.n_tcp_bind = 1;
  x.p.landlock.tcp_connect = x.conn;
  x.p.landlock.n_tcp_connect = 2;
  x.p.network = SECURER_NET_HOST;
  struct securer_landlock_plan pl;
  securer_err_t err = NULL;
  cr_assert_eq (securer_landlock_plan_build (&x.p, &pl, &err), 0);
  cr_assert_eq (pl.n_ports, 2);
  cr_assert_eq (pl.ports[0].port, 8080);
  cr_assert_eq (pl.ports[0].access, SECURER_LL_NET_ABI4);
  cr_assert_eq (pl.ports[1].access, SECURER_LL_ACCESS_NET_CONNECT_TCP);
  cr_assert_eq (pl.need_net, SECURER_LL_NET_ABI4);
  securer_landlock_plan_clear (&pl);
}

Test (landlock_plan, fs_names)
{
  char *s = securer_landlock_fs_names (SECURER_LL_ACCESS_FS_EXECUTE | SECURER_LL_ACCESS_FS_IOCTL_DEV);
  cr_assert_str_eq (s, "execute,ioctl_dev");
  free (s);
}
