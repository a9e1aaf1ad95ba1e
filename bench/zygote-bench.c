/* Sessions from a template next to cold sandboxes, without R: the kernel
 * and library side of docs/architecture.md ("Sessions from a template").
 *
 *   zygote-bench cold N       N cold sandboxes of policies/r.policy, each
 *                             running `sh -c 'exit 0'`, one after another
 *   zygote-bench template N   one template sandbox of the same policy
 *                             (Landlock and seccomp off, as a template is)
 *                             and N sessions forked from it one after
 *                             another, each entering its own namespaces as
 *                             its own leased host id and confining itself
 *                             as r.policy says (Landlock, rlimits, seccomp)
 *
 *   zygote-bench r-cold N     N cold R sandboxes of r.policy, each asked
 *                             one expression over its channel
 *   zygote-bench r-template N one R template sandbox of r.policy
 *                             (src/runtime/zygote loaded, default packages
 *                             attached) and N R sessions forked from it, each
 *                             asked one expression
 *
 * With ZYGOTE_BENCH_PSS=1, the r- modes keep every R idle once it has
 * answered and print their PSS (and the template's) instead.
 *
 * Root only (host-id leases).  Time both in one hyperfine run; the
 * difference of N=1 and N=K runs is K-1 times the per-session cost. */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/landlock-internal.h"
#include "linux/launch.h"
#include "linux/template.h"
#include "linux/zygote.h"
#include "seccomp/seccomp.h"
#include "securer.h"

__attribute__ ((noreturn)) static void
fail (const char *what, securer_err_t err)
{
  fprintf (stderr, "zygote-bench: %s: %s\n", what, err ? securer_error_message (err) : strerror (errno));
  exit (1);
}

static struct securer_policy *
load_r (void)
{
  securer_err_t err = NULL;
  char path[4096];
  snprintf (path, sizeof path, "%s/policies/r.policy", SECURER_ABS_SRCDIR);
  struct securer_policy *p;
  if (securer_policy_load_file (path, &p, NULL, &err) < 0)
    fail ("load r.policy", err);
  return p;
}

static int
cold (unsigned n)
{
  struct securer_policy *p = load_r ();
  /* What r.policy's view has to execute besides R. */
  char *argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) "exit 0", NULL };
  for (unsigned i = 0; i < n; i++)
    {
      securer_err_t err = NULL;
      struct securer_sandbox *sb;
      struct securer_spawn_opts so = { .policy = p, .argv = argv, .stdin_fd = -1, .stdout_fd = -1,
                                       .stderr_fd = -1 };
      struct securer_status st;
      if (securer_sandbox_spawn (&so, &sb, &err) < 0 || securer_sandbox_wait (sb, &st, &err) < 0)
        fail ("cold sandbox", err);
      if (securer_status_exit_code (&st) != 0)
        fail ("cold sandbox: sh failed", NULL);
      securer_status_clear (&st);
      securer_sandbox_free (sb);
    }
  securer_policy_free (p);
  return 0;
}

/* The template's payload (fd 3: requests of one uint32 index each, with
 * the session's socket).  The plans and the filter are made once. */
static int
serve (void)
{
  securer_err_t err = NULL;
  struct securer_policy *p = load_r ();
  static struct securer_zygote_plans plans;
  if (securer_zygote_plan (p, &plans, &err) < 0)
    fail ("template plans", err);
  const struct securer_zygote_confinement c = plans.confinement;
  static const char *const tmpfs[] = { "/tmp", "/dev/shm", NULL };
  for (;;)
    {
      uint32_t index;
      union { char b[CMSG_SPACE (sizeof (int))]; struct cmsghdr a; } u;
      struct iovec iov = { &index, sizeof index };
      struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b };
      if (recvmsg (3, &mh, MSG_CMSG_CLOEXEC) != sizeof index || CMSG_FIRSTHDR (&mh) == NULL)
        return 0;
      int sock;
      memcpy (&sock, CMSG_DATA (CMSG_FIRSTHDR (&mh)), sizeof sock);
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
      pid_t cpid = fork ();
      if (cpid != 0)
        {
          close (sock);
          continue;
        }
      struct securer_zygote_session s = { .index = index, .inside = 1000, .hostname = "sandbox", .tmpfs = tmpfs,
                                          .policy = p };
      pid_t g = securer_zygote_enter (&s, &err);
      if (g > 0)
        _exit (0);
      if (g == 0)
        {
          pid_t pl = fork ();
          if (pl == 0)
            {
              struct securer_landlock_report rep;
              char ok = securer_zygote_confine (&c, &rep, &err) == 0 ? 'R' : 'E';
              if (ok == 'E')
                fprintf (stderr, "zygote-bench: session: %s\n", securer_error_message (err));
              _exit (write (sock, &ok, 1) == 1 ? 0 : 1);
            }
          int st = 0;
          _exit (pl > 0 && waitpid (pl, &st, 0) == pl && WIFEXITED (st) ? WEXITSTATUS (st) : 1);
        }
      fprintf (stderr, "zygote-bench: session: %s\n", securer_error_message (err));
      char e = 'E';
      _exit (write (sock, &e, 1) == 1 ? 1 : 2);
    }
}

#define R_BIN "/usr/lib/R/bin/exec/R"
/* R reads one expression from its channel (fd 0), answers on it, and
 * idles until the channel ends. */
#define R_EVAL_ONE                                                                                   \
  "i <- file('stdin', 'r'); o <- file('stdin', 'w');"                                              \
  "writeLines(deparse(eval(parse(text = readLines(i, 1L)))), o); flush(o);"                        \
  "invisible(readLines(i, 1L)); quit(save = 'no')"

/* ZYGOTE_BENCH_PSS=1: every R stays idle after its answer until all have
 * answered, then the PSS of each (its processes found by their host uid)
 * is printed instead of timing anything. */
static bool pss_mode;

/* Proportional set size, in kB, of the processes named R running as
 * host uid `uid`. */
static unsigned long
pss_of_uid (uid_t uid)
{
  unsigned long total = 0;
  DIR *d = opendir ("/proc");
  for (struct dirent *e; d && (e = readdir (d));)
    {
      char path[300], line[256], comm[32] = "";
      struct stat st;
      snprintf (path, sizeof path, "/proc/%s", e->d_name);
      if (e->d_name[0] < '0' || e->d_name[0] > '9' || stat (path, &st) < 0 || st.st_uid != uid)
        continue;
      snprintf (path, sizeof path, "/proc/%s/comm", e->d_name);
      FILE *f = fopen (path, "re");
      if (f == NULL || fgets (comm, sizeof comm, f) == NULL || strcmp (comm, "R\n") != 0)
        {
          if (f)
            fclose (f);
          continue;
        }
      fclose (f);
      snprintf (path, sizeof path, "/proc/%s/smaps_rollup", e->d_name);
      f = fopen (path, "re");
      unsigned long kb;
      while (f && fgets (line, sizeof line, f))
        if (sscanf (line, "Pss: %lu kB", &kb) == 1)
          total += kb;
      if (f)
        fclose (f);
    }
  if (d)
    closedir (d);
  return total;
}

static void
pss_report (const char *what, const uid_t *uids, unsigned n)
{
  unsigned long sum = 0, min = ~0ul, max = 0;
  for (unsigned i = 0; i < n; i++)
    {
      unsigned long kb = pss_of_uid (uids[i]);
      sum += kb;
      min = kb < min ? kb : min;
      max = kb > max ? kb : max;
    }
  printf ("%s: %u idle R, PSS mean %.1f MB (%.1f-%.1f)\n", what, n, sum / 1024.0 / n, min / 1024.0, max / 1024.0);
}

static char *r_env[8] = { (char *) "R_SHARE_DIR=/usr/share/R/share", (char *) "R_INCLUDE_DIR=/usr/share/R/include",
                          (char *) "R_DOC_DIR=/usr/share/R/doc", (char *) "LANG=C.UTF-8", NULL };

static void
r_ask (int sock)
{
  static const char q[] = "sum(1:10)\n";
  char a[64];
  if (write (sock, q, sizeof q - 1) != sizeof q - 1)
    fail ("ask R", NULL);
  struct pollfd pfd = { sock, POLLIN, 0 };
  ssize_t n = poll (&pfd, 1, 60000) == 1 ? read (sock, a, sizeof a - 1) : -1;
  if (n < 4 || strncmp (a, "55L", 3) != 0)
    fail ("R's answer", NULL);
}

static int
r_cold (unsigned n)
{
  struct securer_policy *p = load_r ();
  char script[] = R_EVAL_ONE;
  char *argv[] = { (char *) R_BIN, (char *) "--vanilla", (char *) "--no-echo", (char *) "--no-restore",
                   (char *) "-e", script, NULL };
  struct securer_sandbox **sbs = calloc (n, sizeof *sbs);
  int *socks = calloc (n, sizeof *socks);
  uid_t *uids = calloc (n, sizeof *uids);
  if (sbs == NULL || socks == NULL || uids == NULL)
    fail ("calloc", NULL);
  for (unsigned i = 0; i < n; i++)
    {
      int sp[2];
      if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
        fail ("socketpair", NULL);
      securer_err_t err = NULL;
      struct securer_spawn_opts so = { .policy = p, .argv = argv, .extra_env = r_env, .stdin_fd = sp[1],
                                       .stdout_fd = -1, .stderr_fd = -1 };
      if (securer_sandbox_spawn (&so, &sbs[i], &err) < 0)
        fail ("cold R", err);
      close (sp[1]);
      r_ask (sp[0]);
      socks[i] = sp[0];
      char proc[32];
      struct stat st;
      snprintf (proc, sizeof proc, "/proc/%d", (int) securer_sandbox_pid (sbs[i]));
      uids[i] = stat (proc, &st) == 0 ? st.st_uid : 0;
      if (!pss_mode)
        close (socks[i]);
    }
  if (pss_mode)
    pss_report ("cold", uids, n);
  for (unsigned i = 0; i < n; i++)
    {
      securer_err_t err = NULL;
      struct securer_status st;
      if (pss_mode)
        close (socks[i]);
      if (securer_sandbox_wait (sbs[i], &st, &err) < 0)
        fail ("cold R", err);
      securer_status_clear (&st);
      securer_sandbox_free (sbs[i]);
    }
  free (sbs);
  free (socks);
  free (uids);
  securer_policy_free (p);
  return 0;
}

static int
template (unsigned n, const char *self)
{
  securer_err_t err = NULL;
  struct securer_policy *p = load_r ();
  p->landlock.mode = SECURER_ENFORCE_OFF;
  p->seccomp.enabled = false;
  /* This program, the policies and their syscall groups, read-only, for
   * the template's payload. */
  const char *dirs[] = { SECURER_ABS_BUILDDIR, SECURER_ABS_SRCDIR };
  p->mounts = realloc (p->mounts, (p->n_mounts + 2) * sizeof *p->mounts);
  for (int i = 0; i < 2; i++)
    p->mounts[p->n_mounts++] = (struct securer_mount){ .type = SECURER_MOUNT_RO, .source = strdup (dirs[i]),
                                                       .dest = strdup (dirs[i]), .optional = true };
  uint32_t first, count;
  if (securer_hostids_range (&first, &count, &err) < 0)
    fail ("host ids", err);
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    fail ("socketpair", NULL);
  char *argv[] = { (char *) self, (char *) "--serve", NULL };
  struct securer_spawn_opts so = { .policy = p, .argv = argv, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
                                   .pass_fds = &sv[1], .n_pass_fds = 1 };
  struct securer_sandbox *sb;
  if (securer_zygote_template_start (&so, &sb, &err) < 0)
    fail ("template", err);
  close (sv[1]);
  struct host_id_lease *leases = calloc (n, sizeof *leases);
  int *socks = calloc (n, sizeof *socks);
  uid_t *uids = calloc (n, sizeof *uids);
  if (leases == NULL || socks == NULL || uids == NULL)
    fail ("calloc", NULL);
  for (unsigned i = 0; i < n; i++)
    {
      struct host_id_lease lease = { .fd = -1 };
      uint32_t index;
      if (securer_hostids_acquire (&lease, &err) < 0 || securer_zygote_index (lease.id, first, count, &index, &err) < 0)
        fail ("lease", err);
      int sp[2];
      if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
        fail ("socketpair", NULL);
      int fds[1] = { sp[1] };
      unsigned nfds = 1;
      union { char b[CMSG_SPACE (sizeof (int))]; struct cmsghdr a; } u;
      struct iovec iov = { &index, sizeof index };
      struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                           .msg_controllen = CMSG_SPACE (nfds * sizeof (int)) };
      struct cmsghdr *h = CMSG_FIRSTHDR (&mh);
      h->cmsg_level = SOL_SOCKET;
      h->cmsg_type = SCM_RIGHTS;
      h->cmsg_len = CMSG_LEN (nfds * sizeof (int));
      memcpy (CMSG_DATA (h), fds, nfds * sizeof (int));
      if (sendmsg (sv[0], &mh, MSG_NOSIGNAL) != sizeof index)
        fail ("request a session", NULL);
      close (sp[1]);
      char c = 0;
      if (recv (sp[0], &c, 1, 0) != 1 || c != 'R')
        fail ("session did not confine itself", NULL);
      if (pss_mode)
        {
          leases[i] = lease;
          socks[i] = sp[0];
          uids[i] = lease.id;
          continue;
        }
      close (sp[0]);
      securer_hostids_release (&lease);
    }
  if (pss_mode)
    {
      pss_report ("template sessions", uids, n);
      char proc[32];
      struct stat st;
      snprintf (proc, sizeof proc, "/proc/%d", (int) securer_sandbox_pid (sb));
      uid_t own = stat (proc, &st) == 0 ? st.st_uid : 0;
      pss_report ("the template", &own, 1);
      for (unsigned i = 0; i < n; i++)
        {
          close (socks[i]);
          securer_hostids_release (&leases[i]);
        }
    }
  free (leases);
  free (socks);
  free (uids);
  close (sv[0]);
  securer_sandbox_kill (sb, &err);
  securer_sandbox_free (sb);
  securer_policy_free (p);
  return 0;
}

/* R sessions through the library's template (src/lib/linux/template.c):
 * what a session of `securer serve` costs when started from a template. */
static int
r_template (unsigned n)
{
  securer_err_t err = NULL;
  struct securer_policy *p = load_r ();
  char script[] = "dyn.load('/proc/self/fd/4');"
                  "repeat { if (.C('securer_zygote_r_serve', r = 0L)$r != 1L) quit(save = 'no');"
                  "invisible(tempdir(check = TRUE)); " R_EVAL_ONE " }";
  char *r_argv[] = { (char *) R_BIN, (char *) "--vanilla", (char *) "--no-echo", (char *) "--no-restore",
                     (char *) "-e", script, NULL };
  struct securer_template_opts o = { .policy = p, .argv = r_argv, .extra_env = r_env, .stdin_fd = -1,
                                     .stderr_fd = -1 };
  struct securer_template *t;
  if (securer_template_start (&o, &t, &err) < 0)
    fail ("template", err);
  struct securer_sandbox **sbs = calloc (n, sizeof *sbs);
  int *socks = calloc (n, sizeof *socks);
  uid_t *uids = calloc (n, sizeof *uids);
  if (sbs == NULL || socks == NULL || uids == NULL)
    fail ("calloc", NULL);
  for (unsigned i = 0; i < n; i++)
    {
      int sp[2];
      if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
        fail ("socketpair", NULL);
      struct securer_spawn_opts so = { .stdin_fd = sp[1], .stdout_fd = 1, .stderr_fd = 2 };
      if (securer_template_spawn (t, &so, &sbs[i], &err) < 0)
        fail ("session", err);
      close (sp[1]);
      r_ask (sp[0]);
      socks[i] = sp[0];
      char proc[32];
      struct stat st;
      snprintf (proc, sizeof proc, "/proc/%d", (int) securer_sandbox_pid (sbs[i]));
      uids[i] = stat (proc, &st) == 0 ? st.st_uid : 0;
      if (pss_mode)
        continue;
      close (socks[i]);
      struct securer_status status;
      if (securer_sandbox_wait (sbs[i], &status, &err) < 0)
        fail ("wait", err);
      securer_status_clear (&status);
      securer_sandbox_free (sbs[i]);
    }
  if (pss_mode)
    {
      pss_report ("template sessions", uids, n);
      for (unsigned i = 0; i < n; i++)
        {
          close (socks[i]);
          securer_sandbox_free (sbs[i]);
        }
    }
  free (sbs);
  free (socks);
  free (uids);
  securer_template_free (t);
  securer_policy_free (p);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "--serve") == 0)
    return serve ();
  static const char *const modes[] = { "cold", "template", "r-cold", "r-template" };
  int mode = -1;
  for (int i = 0; argc == 3 && i < 4; i++)
    if (strcmp (argv[1], modes[i]) == 0)
      mode = i;
  if (mode < 0)
    {
      fprintf (stderr, "usage: zygote-bench cold|template|r-cold|r-template N\n");
      return 2;
    }
  if (geteuid () != 0)
    {
      fprintf (stderr, "zygote-bench: needs root (host-id leases)\n");
      return 77;
    }
  unsigned n = (unsigned) strtoul (argv[2], NULL, 10);
  if (n == 0)
    n = 1;
  const char *pe = getenv ("ZYGOTE_BENCH_PSS");
  pss_mode = pe != NULL && strcmp (pe, "1") == 0;
  char self[4096];
  ssize_t len = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (len < 0)
    fail ("/proc/self/exe", NULL);
  self[len] = '\0';
  switch (mode)
    {
    case 0:
      return cold (n);
    case 2:
      return r_cold (n);
    default:
      return mode == 3 ? r_template (n) : template (n, self);
    }
}
