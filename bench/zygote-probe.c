/* Checks, on this kernel, the mechanics the session template design in
 * docs/architecture.md ("Sessions from a template") rests on, and times
 * them.  No R and no library code: only the namespace steps, as root.
 *
 *   host (root) --clone(user,mnt,pid,net,ipc,uts; owner T)--> template
 *     template uid_map: 0 -> T, 1..N -> S..S+N-1 (written by the host)
 *     template: a fresh /proc of its pid namespace, masked like a policy's
 *   template --fork--> C: setresuid(i) (= host id S+i-1), unshare(user, mnt,
 *     pid, net, ipc, uts) and maps its own id (1000 -> S+i-1);
 *   C --fork--> G: pid 1 of the session's pid namespace; mounts its own
 *     /proc and /tmp, then checks that once under Landlock it may no longer
 *     mount (why the template cannot be).
 *
 * For every session the host then reads, from outside: the owner of its
 * user namespace (NS_GET_OWNER_UID), its uid, whether G is pid 1 and what
 * its /proc shows.  Usage: zygote-probe [SESSIONS [--mask-template]]
 * (default 8 sessions; --mask-template shows the refused proc mount). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <dirent.h>
#include <linux/landlock.h>
#include <unistd.h>

#define T_ID 0x7d000000u        /* outside securer's default lease range */
#define S_ID 0x7d000100u
#define INSIDE 1000u

static int mask_template;

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
die (const char *what)
{
  fprintf (stderr, "zygote-probe: %s: %s\n", what, strerror (errno));
  /* In a child: the host learns of it by the socket's end (every child
   * has a copy, so also kill the process group). */
  kill (0, SIGKILL);
  exit (1);
}

static void
write_file (pid_t pid, const char *name, const char *text)
{
  char path[64];
  if (pid == 0)
    snprintf (path, sizeof path, "/proc/self/%s", name);
  else
    snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, name);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write (fd, text, strlen (text)) != (ssize_t) strlen (text))
    die (path);
  close (fd);
}

/* One datagram; with creds the sender's pid as seen here. */
static int
msg_recv (int sock, char *c, pid_t *pid)
{
  union { char buf[CMSG_SPACE (sizeof (struct ucred))]; struct cmsghdr a; } u;
  struct iovec iov = { c, 1 };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf };
  if (recvmsg (sock, &mh, 0) != 1)
    return -1;
  for (struct cmsghdr *h = CMSG_FIRSTHDR (&mh); h && pid; h = CMSG_NXTHDR (&mh, h))
    if (h->cmsg_type == SCM_CREDENTIALS)
      {
        struct ucred cr;
        memcpy (&cr, CMSG_DATA (h), sizeof cr);
        *pid = cr.pid;
      }
  return 0;
}

static void
msg_send (int sock, char c)
{
  if (send (sock, &c, 1, MSG_NOSIGNAL) != 1)
    _exit (3);
}

/* G: pid 1 of one session.  Reports on the socket: 'R' ready, or 'E'
 * with errno in the exit status. */
static void
session_init (int sock)
{
  int ok = getpid () == 1;
  if (mount ("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    {
      fprintf (stderr, "session: mount proc: %s\n", strerror (errno));
      msg_send (sock, 'E');
      _exit (10);
    }
  if (mount ("/dev/null", "/proc/keys", NULL, MS_BIND, NULL) < 0)
    {
      fprintf (stderr, "session: mask: %s\n", strerror (errno));
      msg_send (sock, 'E');
      _exit (12);
    }
  if (mount ("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=1M") < 0)
    {
      fprintf (stderr, "session: mount tmpfs: %s\n", strerror (errno));
      msg_send (sock, 'E');
      _exit (11);
    }
  /* Why the template cannot be under Landlock: a restricted process may
   * not mount (EPERM), and a domain is inherited by every fork. */
  int pre_mount = mount ("tmpfs", "/mnt", "tmpfs", 0, "size=1M") == 0 && umount ("/mnt") == 0;
  struct landlock_ruleset_attr ra = { .handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE };
  int rs = (int) syscall (SYS_landlock_create_ruleset, &ra, sizeof ra, 0);
  if (rs < 0 || prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
      || syscall (SYS_landlock_restrict_self, rs, 0) < 0)
    {
      fprintf (stderr, "session: landlock: %s\n", strerror (errno));
      msg_send (sock, 'E');
      _exit (13);
    }
  int ll_mount = pre_mount && mount ("tmpfs", "/mnt", "tmpfs", 0, "size=1M") < 0 && errno == EPERM;
  /* Nothing but this session in its /proc. */
  int n = 0;
  DIR *d = opendir ("/proc");
  for (struct dirent *e; d && (e = readdir (d));)
    n += e->d_name[0] >= '0' && e->d_name[0] <= '9';
  if (d)
    closedir (d);
  msg_send (sock, ok && n == 1 && ll_mount ? 'R' : 'X');
  pause ();
  _exit (0);
}

/* C: becomes session i's host id, enters fresh namespaces, waits for its
 * maps, forks the session's pid 1 and waits for it. */
static void
session_fork (int sock, unsigned i)
{
  if (setresgid (i, i, i) < 0 || setresuid (i, i, i) < 0)
    die ("setresuid in the template");
  /* The id change made /proc/self root's; the map below is written there. */
  prctl (PR_SET_DUMPABLE, 1, 0, 0, 0);
  if (unshare (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
               | CLONE_NEWUTS) < 0)
    die ("unshare");
  /* The host cannot write these maps (it is two user namespaces up; only
   * a process in the namespace or its parent may); the child maps its own
   * id, which is all an unprivileged map may hold anyway. */
  char map[64];
  snprintf (map, sizeof map, "%u %u 1\n", INSIDE, i);
  write_file (0, "uid_map", map);
  write_file (0, "setgroups", "deny");
  write_file (0, "gid_map", map);
  msg_send (sock, 'U');
  if (setresgid (INSIDE, INSIDE, INSIDE) < 0 || setresuid (INSIDE, INSIDE, INSIDE) < 0)
    die ("become the inside id");
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    die ("make / private");
  pid_t g = fork ();
  if (g == 0)
    session_init (sock);
  int st;
  waitpid (g, &st, 0);
  _exit (0);
}

/* The template: pid 1 of its own namespaces, uid 0 there; forks sessions
 * on request ('F'), one at a time. */
static void
template_main (int sock)
{
  char c;
  if (recv (sock, &c, 1, 0) != 1 || c != 'G')
    _exit (2);
  if (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0)
    die ("template: become 0");
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0
      || mount ("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    die ("template: proc");
  /* A policy's masks on the template's own /proc become locked mounts in
   * every session's mount namespace, and a proc with locked mounts over
   * files is not "fully visible": the session's own proc is then refused
   * (EPERM).  So the template's proc stays unmasked, and each session masks
   * its own. */
  if (mask_template && mount ("/dev/null", "/proc/keys", NULL, MS_BIND, NULL) < 0)
    die ("template: mask");
  signal (SIGCHLD, SIG_DFL);
  unsigned i = 1;
  while (recv (sock, &c, 1, 0) == 1 && c == 'F')
    {
      pid_t p = fork ();
      if (p == 0)
        session_fork (sock, i);
      i++;
    }
  _exit (0);
}

static unsigned
owner_of (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  uid_t u = (uid_t) -1;
  if (fd >= 0)
    {
      ioctl (fd, NS_GET_OWNER_UID, &u);
      close (fd);
    }
  return u;
}

static pid_t
first_child (pid_t pid)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int) pid, (int) pid);
  FILE *f = fopen (path, "re");
  int c = 0;
  if (f)
    {
      if (fscanf (f, "%d", &c) != 1)
        c = 0;
      fclose (f);
    }
  return c;
}

int
main (int argc, char **argv)
{
  unsigned n = argc > 1 ? (unsigned) atoi (argv[1]) : 8;
  mask_template = argc > 2 && strcmp (argv[2], "--mask-template") == 0;
  if (geteuid () != 0)
    {
      fprintf (stderr, "zygote-probe: needs root (the template maps a range of host ids)\n");
      return 77;
    }
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    die ("socketpair");
  int one = 1;
  setsockopt (sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  /* The template's namespace is owned by T, as a sandbox's is owned by its
   * leased id. */
  if (syscall (SYS_setresgid, -1, T_ID, -1) < 0 || syscall (SYS_setresuid, -1, T_ID, -1) < 0)
    die ("become T");
  pid_t t = (pid_t) syscall (SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET
                             | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD, NULL, NULL, NULL, NULL);
  if (t == 0)
    {
      close (sv[0]);
      template_main (sv[1]);
    }
  if (syscall (SYS_setresuid, -1, 0, -1) < 0 || syscall (SYS_setresgid, -1, 0, -1) < 0)
    die ("back to root");
  if (t < 0)
    die ("clone the template");
  char map[128];
  snprintf (map, sizeof map, "0 %u 1\n1 %u %u\n", T_ID, S_ID, n);
  write_file (t, "uid_map", map);
  write_file (t, "gid_map", map);
  msg_send (sv[0], 'G');

  unsigned bad = 0;
  double total = 0;
  for (unsigned i = 1; i <= n; i++)
    {
      double t0 = now_ms ();
      msg_send (sv[0], 'F');
      char c;
      pid_t cpid = 0;
      if (msg_recv (sv[0], &c, &cpid) < 0 || c != 'U' || cpid <= 0)
        die ("session did not unshare");
      if (msg_recv (sv[0], &c, NULL) < 0)
        die ("session report");
      double ms = now_ms () - t0;
      total += ms;
      pid_t g = first_child (cpid);
      unsigned owner = owner_of (g);
      struct stat st;
      char path[64];
      snprintf (path, sizeof path, "/proc/%d", (int) g);
      stat (path, &st);
      int ok = c == 'R' && owner == S_ID + i - 1 && st.st_uid == S_ID + i - 1;
      bad += !ok;
      printf ("session %u: %s, pid 1 with its own /proc, no mount under Landlock: %s, user ns owner %u (want %u), host uid %u, "
              "%.2f ms\n", i, ok ? "ok" : "WRONG", c == 'R' ? "yes" : "no", owner, S_ID + i - 1,
              (unsigned) st.st_uid, ms);
    }
  printf ("%u sessions, mean %.2f ms from request to the session's pid 1 ready\n", n, total / n);
  kill (t, SIGKILL);
  waitpid (t, NULL, 0);
  return bad ? 1 : 0;
}
