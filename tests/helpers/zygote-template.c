/* A session template for tests/integration/test-zygote: pid 1 of its pid
 * namespace (run by the test in bare namespaces, or as the payload of a
 * template sandbox, securer_zygote_template_start).  For each request on
 * fd 3 it forks a session (securer_zygote_enter) that reports, from
 * inside, what it sees; with --confine POLICY the session's payload first
 * confines itself as POLICY says (securer_zygote_confine), with the plans
 * and the filter made here once, before any session, as a template holds
 * them.  --mount-proc: mount this pid namespace's proc first (bare
 * namespaces have none).  --mask PATH: a policy mask below /proc, which
 * each session applies to its own proc.  Nothing here evaluates what it receives. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/landlock-internal.h"
#include "linux/launch.h"
#include "linux/zygote.h"
#include "seccomp/seccomp.h"
#include "zygote-wire.h"

static struct securer_zygote_confinement confinement;
/* The policy's view of /proc the sessions re-apply: a proc mount on /proc
 * and the masks below it given with --mask. */
static struct securer_mount proc_mount = { .type = SECURER_MOUNT_PROC, .dest = (char *) "/proc" };
static char *masks[8];
static struct securer_policy view = { .mounts = &proc_mount, .n_mounts = 1, .masks = masks };

static void
count_markers (struct report *r, uint32_t index)
{
  char own[32];
  snprintf (own, sizeof own, "%u", index);
  DIR *d = opendir ("/tmp");
  for (struct dirent *e; d && (e = readdir (d));)
    if (strncmp (e->d_name, ZYGOTE_MARKER_NAME, strlen (ZYGOTE_MARKER_NAME)) == 0)
      {
        if (strcmp (e->d_name + strlen (ZYGOTE_MARKER_NAME), own) == 0)
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
  if (securer_zygote_confine (&confinement, &rep, &err) < 0)
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
  r.caller_env = getenv (ZYGOTE_CALLER_ENV) != NULL;
  r.version_masked = stat ("/proc/version", &st) == 0 && S_ISCHR (st.st_mode) && st.st_rdev == makedev (1, 3);
  r.uid = getuid ();
  r.gid = getgid ();
  gethostname (r.hostname, sizeof r.hostname - 1);
  char path[64];
  snprintf (path, sizeof path, ZYGOTE_MARKER "%u", index);
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
      struct securer_zygote_session s = { .index = q.index, .inside = ZYGOTE_INSIDE, .hostname = name,
                                          .tmpfs = tmpfs, .tmpfs_size = 1 << 20, .policy = &view };
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

static struct securer_zygote_plans plans;

static int
prepare (const char *path, securer_err_t *err)
{
  struct securer_policy *p;
  if (securer_policy_load_file (path, &p, NULL, err) < 0 || securer_zygote_plan (p, &plans, err) < 0)
    return -1;
  confinement = plans.confinement;
  return 0;
}

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--mount-proc") == 0)
      {
        if (mount ("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
          {
            perror ("zygote-template: mount proc");
            return 80;
          }
      }
    else if (strcmp (argv[i], "--confine") == 0 && i + 1 < argc)
      {
        securer_err_t err = NULL;
        if (prepare (argv[++i], &err) < 0)
          {
            fprintf (stderr, "zygote-template: %s\n", securer_error_message (err));
            return 82;
          }
      }
    else if (strcmp (argv[i], "--mask") == 0 && i + 1 < argc && view.n_masks < 8)
      masks[view.n_masks++] = argv[++i];
    else
      {
        fprintf (stderr, "usage: zygote-template [--mount-proc] [--confine POLICY] [--mask PATH]...\n");
        return 2;
      }
  /* The test learns from this byte that the template runs, and its pid. */
  char c = 'T';
  send_fd (3, &c, 1, -1);
  template_main (3);
}
