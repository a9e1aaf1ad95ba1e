/* Sessions forked from a template (src/lib/linux/zygote.c): a template
 * process holding the host-id lease range forks sessions that each enter
 * their own namespaces as their own leased host id.  Each session reports,
 * from inside, what it sees; the host checks from outside who owns it.
 * Root only: only root may map a range of host ids into the template. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>

#include "linux/landlock-internal.h"
#include "linux/launch.h"
#include "linux/zygote.h"
#include "seccomp/seccomp.h"

#define INSIDE 1000u
#define MARKER "/tmp/zygote-session-marker-"

struct request {
  uint32_t index;
  int confine;    /* the session's payload confines itself as policies/r.policy says */
};

/* What a session's pid 1 saw (kind 'S'), or why it could not start ('E'). */
struct report {
  char kind;
  int errnum;
  int is_pid1;
  int procs;            /* numeric entries in its /proc */
  int keys_masked;      /* /proc/keys is /dev/null */
  unsigned uid, gid;
  int own_marker;       /* its marker file is in /tmp */
  int foreign_markers;  /* markers of other sessions in /tmp */
  char hostname[65];
  /* kind 'P': the payload after securer_zygote_confine */
  int memfd_before;     /* errno of memfd_create before confinement (0: it worked) */
  int memfd_after, mmap_wx, open_passwd, tmp_write;
  int mount_after;      /* the signal that ended a child trying mount(2) */
  unsigned long long as_limit;
  char text[512];
};

/* policies/r.policy, prepared on the host before the template starts (the
 * template and its forks inherit it, as a template would hold a policy's
 * plans). */
static struct {
  struct securer_policy *p;
  struct securer_landlock_plan ll;
  struct rlimit_plan rl;
  struct securer_seccomp_prog *prog;
  struct securer_zygote_confinement c;
} r_pol;

static void
send_fd (int sock, const void *buf, size_t len, int fd)
{
  union { char b[CMSG_SPACE (sizeof (int))]; struct cmsghdr a; } u;
  struct iovec iov = { (void *) buf, len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (fd >= 0)
    {
      mh.msg_control = u.b;
      mh.msg_controllen = sizeof u.b;
      struct cmsghdr *h = CMSG_FIRSTHDR (&mh);
      h->cmsg_level = SOL_SOCKET;
      h->cmsg_type = SCM_RIGHTS;
      h->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (h), &fd, sizeof fd);
    }
  if (sendmsg (sock, &mh, MSG_NOSIGNAL) != (ssize_t) len)
    _exit (90);
}

/* One datagram of exactly len bytes; *fd a passed descriptor (or -1),
 * *pid the sender's pid as seen here (SO_PASSCRED). */
static int
recv_msg (int sock, void *buf, size_t len, int *fd, pid_t *pid)
{
  union { char b[CMSG_SPACE (sizeof (int)) + CMSG_SPACE (sizeof (struct ucred))]; struct cmsghdr a; } u;
  struct iovec iov = { buf, len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
  if (fd)
    *fd = -1;
  if (recvmsg (sock, &mh, MSG_CMSG_CLOEXEC) != (ssize_t) len)
    return -1;
  for (struct cmsghdr *h = CMSG_FIRSTHDR (&mh); h; h = CMSG_NXTHDR (&mh, h))
    if (h->cmsg_type == SCM_RIGHTS && fd)
      memcpy (fd, CMSG_DATA (h), sizeof *fd);
    else if (h->cmsg_type == SCM_CREDENTIALS && pid)
      {
        struct ucred cr;
        memcpy (&cr, CMSG_DATA (h), sizeof cr);
        *pid = cr.pid;
      }
  return 0;
}

static void
count_markers (struct report *r, uint32_t index)
{
  char own[32];
  snprintf (own, sizeof own, "%u", index);
  DIR *d = opendir ("/tmp");
  for (struct dirent *e; d && (e = readdir (d));)
    if (strncmp (e->d_name, MARKER + 5, strlen (MARKER + 5)) == 0)
      {
        if (strcmp (e->d_name + strlen (MARKER + 5), own) == 0)
          r->own_marker = 1;
        else
          r->foreign_markers++;
      }
  if (d)
    closedir (d);
}

static int
errno_of (int rc)
{
  return rc < 0 ? errno : 0;
}

/* The session's payload: confines itself, then tries what the policy
 * refuses.  Reports with write(2): sendmsg is not in every filter. */
__attribute__ ((noreturn)) static void
payload_main (int sock)
{
  struct report r = { .kind = 'P' };
  int m = (int) syscall (SYS_memfd_create, "probe", 0);
  r.memfd_before = errno_of (m);
  if (m >= 0)
    close (m);
  securer_err_t err = NULL;
  struct securer_landlock_report rep;
  if (securer_zygote_confine (&r_pol.c, &rep, &err) < 0)
    {
      r.kind = 'E';
      r.errnum = securer_error_errno (err);
      snprintf (r.text, sizeof r.text, "%s", securer_error_message (err));
      if (write (sock, &r, sizeof r) < 0)
        _exit (92);
      _exit (1);
    }
  m = (int) syscall (SYS_memfd_create, "probe", 0);
  r.memfd_after = errno_of (m);
  void *wx = mmap (NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  r.mmap_wx = wx == MAP_FAILED ? errno : 0;
  /* World-readable, outside the policy's paths: only Landlock refuses it. */
  r.open_passwd = errno_of (open ("/etc/passwd", O_RDONLY | O_CLOEXEC));
  /* The policy kills on mount(2): tried in a child, whose end says how. */
  pid_t k = fork ();
  if (k == 0)
    _exit (mount ("tmpfs", "/tmp", "tmpfs", 0, NULL) < 0 ? errno : 0);
  int st = 0;
  r.mount_after = k > 0 && waitpid (k, &st, 0) == k && WIFSIGNALED (st) ? WTERMSIG (st) : -1;
  int fd = open ("/tmp/payload-file", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  r.tmp_write = errno_of (fd);
  struct rlimit as;
  r.as_limit = getrlimit (RLIMIT_AS, &as) == 0 ? (unsigned long long) as.rlim_cur : 0;
  if (write (sock, &r, sizeof r) < 0)
    _exit (92);
  _exit (0);
}

/* The session's pid 1: looks around, leaves a marker in its /tmp, reports,
 * waits for the host's go-ahead and looks for the other sessions' markers. */
__attribute__ ((noreturn)) static void
session_main (int sock, uint32_t index, int confine)
{
  if (confine)
    {
      pid_t pl = fork ();
      if (pl == 0)
        payload_main (sock);
      int st;
      _exit (pl > 0 && waitpid (pl, &st, 0) == pl && WIFEXITED (st) ? WEXITSTATUS (st) : 93);
    }
  struct report r = { .kind = 'S' };
  r.is_pid1 = getpid () == 1;
  DIR *d = opendir ("/proc");
  for (struct dirent *e; d && (e = readdir (d));)
    r.procs += e->d_name[0] >= '0' && e->d_name[0] <= '9';
  if (d)
    closedir (d);
  struct stat st;
  r.keys_masked = stat ("/proc/keys", &st) == 0 && S_ISCHR (st.st_mode) && st.st_rdev == makedev (1, 3);
  r.uid = getuid ();
  r.gid = getgid ();
  gethostname (r.hostname, sizeof r.hostname - 1);
  char path[64];
  snprintf (path, sizeof path, MARKER "%u", index);
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0)
    close (fd);
  send_fd (sock, &r, sizeof r, -1);
  char go;
  if (recv (sock, &go, 1, 0) != 1)
    _exit (91);
  r.own_marker = r.foreign_markers = 0;
  count_markers (&r, index);
  send_fd (sock, &r, sizeof r, -1);
  _exit (0);
}

/* The template: pid 1 of its namespaces, uid 0 there; forks one session per
 * request, handing it the session's socket. */
__attribute__ ((noreturn)) static void
template_main (int ctl)
{
  if (mount ("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    _exit (80);
  static const char *const tmpfs[] = { "/tmp", NULL };
  struct request q;
  int fd;
  while (recv_msg (ctl, &q, sizeof q, &fd, NULL) == 0 && fd >= 0)
    {
      pid_t c = fork ();
      if (c < 0)
        _exit (81);
      if (c > 0)
        {
          close (fd);
          continue;
        }
      close (ctl);
      char name[32];
      snprintf (name, sizeof name, "session-%u", q.index);
      struct securer_zygote_session s = { .index = q.index, .inside = INSIDE, .hostname = name,
                                          .tmpfs = tmpfs, .tmpfs_size = 1 << 20 };
      securer_err_t err = NULL;
      pid_t g = securer_zygote_enter (&s, &err);
      if (g > 0)
        _exit (0);
      if (g == 0)
        session_main (fd, q.index, q.confine);
      struct report r = { .kind = 'E', .errnum = securer_error_errno (err) };
      snprintf (r.text, sizeof r.text, "%s", securer_error_message (err));
      send_fd (fd, &r, sizeof r, -1);
      _exit (1);
    }
  _exit (0);
}

struct tmpl {
  struct host_id_lease own;
  uint32_t first, count;
  int ctl;
  pid_t init;     /* the template's pid 1, as the host sees it */
};

static void
template_start (struct tmpl *t)
{
  securer_err_t err = NULL;
  t->own.fd = -1;
  cr_assert_eq (securer_hostids_acquire (&t->own, &err), 0, "%s", securer_error_message (err));
  cr_assert_eq (securer_hostids_range (&t->first, &t->count, &err), 0);
  int sv[2];
  cr_assert_eq (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  int one = 1;
  setsockopt (sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  pid_t x = fork ();
  cr_assert_geq (x, 0);
  if (x == 0)
    {
      close (sv[0]);
      /* The template's user namespace is owned by its own leased id. */
      uint32_t id = t->own.id;
      if (syscall (SYS_setresgid, -1, id, -1) < 0 || syscall (SYS_setresuid, -1, id, -1) < 0
          || unshare (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
        _exit (70);
      char c = 'U';
      send_fd (sv[1], &c, 1, -1);
      if (recv (sv[1], &c, 1, 0) != 1 || c != 'G')
        _exit (71);
      if (syscall (SYS_setresgid, 0, 0, 0) < 0 || syscall (SYS_setresuid, 0, 0, 0) < 0
          || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        _exit (72);
      pid_t init = fork ();
      if (init == 0)
        {
          send_fd (sv[1], &c, 1, -1);
          template_main (sv[1]);
        }
      _exit (init < 0 ? 73 : 0);
    }
  close (sv[1]);
  char c;
  cr_assert_eq (recv_msg (sv[0], &c, 1, NULL, NULL), 0, "the template did not unshare");
  cr_assert_eq (securer_zygote_template_maps (x, t->own.id, t->first, t->count, &err), 0, "%s",
                securer_error_message (err));
  c = 'G';
  send_fd (sv[0], &c, 1, -1);
  t->init = 0;
  cr_assert_eq (recv_msg (sv[0], &c, 1, NULL, &t->init), 0, "the template did not start");
  cr_assert_gt (t->init, 0);
  int st;
  cr_assert_eq (waitpid (x, &st, 0), x);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "template setup status %#x", st);
  t->ctl = sv[0];
}

static void
template_stop (struct tmpl *t)
{
  /* The end of the template's pid 1 ends every process of its pid
   * namespace, the sessions' nested ones included. */
  kill (t->init, SIGKILL);
  close (t->ctl);
  securer_hostids_release (&t->own);
}

struct session {
  struct host_id_lease lease;
  int sock;
  pid_t pid;      /* the session's pid 1 as the host sees it */
  struct report r;
};

/* Asks the template for a session as host id `host`; returns its first report. */
static void
session_request (struct tmpl *t, struct session *s, uint32_t host, int confine)
{
  securer_err_t err = NULL;
  struct request q = { .confine = confine };
  cr_assert_eq (securer_zygote_index (host, t->first, t->count, &q.index, &err), 0, "%s",
                securer_error_message (err));
  int sp[2];
  cr_assert_eq (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
  int one = 1;
  setsockopt (sp[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  send_fd (t->ctl, &q, sizeof q, sp[1]);
  close (sp[1]);
  s->sock = sp[0];
  s->pid = 0;
  cr_assert_eq (recv_msg (s->sock, &s->r, sizeof s->r, NULL, &s->pid), 0, "no report from session %u", q.index);
}

static void
session_lease (struct session *s)
{
  securer_err_t err = NULL;
  s->lease.fd = -1;
  cr_assert_eq (securer_hostids_acquire (&s->lease, &err), 0, "%s", securer_error_message (err));
}

static uid_t
ns_owner (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "%s: %s", path, strerror (errno));
  uid_t u = (uid_t) -1;
  cr_assert_eq (ioctl (fd, NS_GET_OWNER_UID, &u), 0, "NS_GET_OWNER_UID: %s", strerror (errno));
  close (fd);
  return u;
}

static void
require_root (void)
{
  if (geteuid () != 0)
    cr_skip_test ("only root may map the host-id lease range into a template");
}

Test (zygote, concurrent_sessions_are_apart)
{
  require_root ();
  struct tmpl t;
  template_start (&t);
  struct session s[2];
  for (int i = 0; i < 2; i++)
    {
      session_lease (&s[i]);
      session_request (&t, &s[i], s[i].lease.id, 0);
      cr_assert_eq (s[i].r.kind, 'S', "session %d: %s (errno %d)", i, s[i].r.text, s[i].r.errnum);
    }
  cr_assert_neq (s[0].lease.id, s[1].lease.id);
  for (int i = 0; i < 2; i++)
    {
      struct report *r = &s[i].r;
      /* From inside: pid 1 of its own pid namespace, alone in its /proc
       * (neither the template nor the other session), masked, its own id
       * and hostname. */
      cr_expect_eq (r->is_pid1, 1, "session %d is not pid 1", i);
      cr_expect_eq (r->procs, 1, "session %d sees %d processes in /proc", i, r->procs);
      cr_expect_eq (r->keys_masked, 1, "session %d: /proc/keys is not masked", i);
      cr_expect_eq (r->uid, INSIDE);
      cr_expect_eq (r->gid, INSIDE);
      char name[32];
      snprintf (name, sizeof name, "session-%u", s[i].lease.id - t.first + 1);
      cr_expect_str_eq (r->hostname, name);
      /* From outside: its user namespace and its process belong to its
       * own leased host id, not the template's. */
      cr_assert_gt (s[i].pid, 0);
      cr_expect_eq (ns_owner (s[i].pid), s[i].lease.id, "session %d's user namespace owner", i);
      struct stat st;
      char path[32];
      snprintf (path, sizeof path, "/proc/%d", (int) s[i].pid);
      cr_assert_eq (stat (path, &st), 0);
      cr_expect_eq (st.st_uid, s[i].lease.id, "session %d runs as host uid %u", i, (unsigned) st.st_uid);
      cr_expect_neq (ns_owner (s[i].pid), t.own.id);
    }
  /* Both have written their markers and are alive: each /tmp holds its
   * own and nothing of the other. */
  for (int i = 0; i < 2; i++)
    {
      char go = 'C';
      cr_assert_eq (send (s[i].sock, &go, 1, MSG_NOSIGNAL), 1);
      cr_assert_eq (recv_msg (s[i].sock, &s[i].r, sizeof s[i].r, NULL, NULL), 0);
      cr_expect_eq (s[i].r.own_marker, 1, "session %d lost its own /tmp file", i);
      cr_expect_eq (s[i].r.foreign_markers, 0, "session %d sees another session's /tmp file", i);
    }
  for (int i = 0; i < 2; i++)
    {
      close (s[i].sock);
      securer_hostids_release (&s[i].lease);
    }
  template_stop (&t);
}

/* A session may only become an id of the lease range the template maps;
 * the template's own index is left unmapped.  Either is refused at the
 * first step, with the kernel's EINVAL, not carried on as another id. */
Test (zygote, unmapped_index_is_refused)
{
  require_root ();
  struct tmpl t;
  template_start (&t);
  struct session s;
  session_request (&t, &s, t.own.id, 0);
  cr_assert_eq (s.r.kind, 'E', "the template's own id was given to a session");
  cr_expect_eq (s.r.errnum, EINVAL, "errno %d: %s", s.r.errnum, s.r.text);
  cr_expect (strstr (s.r.text, "in the template") != NULL, "%s", s.r.text);
  close (s.sock);
  template_stop (&t);
}

Test (zygote, index_outside_the_range)
{
  securer_err_t err = NULL;
  uint32_t index = 0;
  cr_expect_eq (securer_zygote_index (99, 100, 10, &index, &err), -1);
  cr_expect_eq (securer_error_errno (err), ERANGE);
  cr_expect_eq (securer_zygote_index (110, 100, 10, &index, &err), -1);
  cr_expect_eq (securer_zygote_index (109, 100, 10, &index, &err), 0);
  cr_expect_eq (index, 10u);
  securer_error_free (&err);
}

static void
load_r_policy (void)
{
  securer_err_t err = NULL;
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/policies/r.policy", SECURER_ABS_SRCDIR);
  cr_assert_eq (securer_policy_load_file (path, &r_pol.p, NULL, &err), 0, "%s", securer_error_message (err));
  cr_assert_eq (securer_landlock_plan_build (r_pol.p, &r_pol.ll, &err), 0, "%s", securer_error_message (err));
  cr_assert_eq (securer_linux_plan_rlimits (r_pol.p, 1024, &r_pol.rl, &err), 0, "%s", securer_error_message (err));
  /* Without REPORT_DENIALS: a denied call gets the policy's errno from the
   * filter itself, no supervisor involved. */
  cr_assert_eq (securer_seccomp_compile (r_pol.p, 0, -1, &r_pol.prog, &err), 0, "%s", securer_error_message (err));
  cr_assert_eq (securer_seccomp_generate (r_pol.prog, r_pol.p, &err), 0, "%s", securer_error_message (err));
  const struct sock_filter *insns;
  unsigned n;
  unsigned long flags;
  cr_assert_eq (securer_seccomp_bpf (r_pol.prog, &insns, &n, &flags), 0);
  r_pol.c = (struct securer_zygote_confinement){ .p = r_pol.p, .landlock = &r_pol.ll, .rlimits = &r_pol.rl,
                                                 .filter = insns, .n_insns = n, .filter_flags = flags };
}

/* The payload of a session from the template gets what a cold r.policy
 * sandbox gets: the filter's errnos and kill, Landlock, the limits
 * (tests/policies/r.expect and common.expect). */
Test (zygote, session_confines_itself_as_the_policy_says)
{
  require_root ();
  load_r_policy ();
  struct tmpl t;
  template_start (&t);
  struct session s;
  session_lease (&s);
  session_request (&t, &s, s.lease.id, 1);
  cr_assert_eq (s.r.kind, 'P', "%s (errno %d)", s.r.text, s.r.errnum);
  cr_expect_eq (s.r.memfd_before, 0, "memfd_create before confinement: %s", strerror (s.r.memfd_before));
  cr_expect_eq (s.r.memfd_after, ENOSYS, "memfd_create: %s", strerror (s.r.memfd_after));
  cr_expect_eq (s.r.mmap_wx, EPERM, "mmap rwx: %s", strerror (s.r.mmap_wx));
  cr_expect_eq (s.r.open_passwd, EACCES, "open /etc/passwd: %s", strerror (s.r.open_passwd));
  cr_expect_eq (s.r.mount_after, SIGSYS, "mount: ended by signal %d", s.r.mount_after);
  cr_expect_eq (s.r.tmp_write, 0, "write in the session's /tmp: %s", strerror (s.r.tmp_write));
  cr_expect_eq (s.r.as_limit, 512ull << 20);
  close (s.sock);
  securer_hostids_release (&s.lease);
  template_stop (&t);
}

/* Refusals come before any step: the process is left as it was. */
Test (zygote, confinement_refuses_what_it_cannot_give)
{
  load_r_policy ();
  securer_err_t err = NULL;
  struct securer_landlock_report rep;
  struct securer_zygote_confinement c = r_pol.c;
  c.filter = NULL;
  c.n_insns = 0;
  cr_expect_eq (securer_zygote_confine (&c, &rep, &err), -1);
  cr_expect_eq (securer_error_errno (err), EINVAL, "%s", securer_error_message (err));
  securer_error_free (&err);
  c = r_pol.c;
  c.filter_flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  cr_expect_eq (securer_zygote_confine (&c, &rep, &err), -1);
  cr_expect_eq (securer_error_errno (err), ENOTSUP, "%s", securer_error_message (err));
  securer_error_free (&err);
  cr_expect_eq (prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0, "a refusal set no_new_privs");
}
