/* Tenants are strangers: sandboxes running at the same time must not share
 * a host identity, and one that uses up a per-user kernel counter must not
 * stop another sandbox, or the host, from using it. */
#include <config.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/inotify.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <criterion/criterion.h>

#include "run-util.h"

/* A sandbox left running while the test looks at it from outside. */
struct held {
  struct securer_sandbox *sb;
  int in_w;       /* its stdin: closing it ends tenant-probe */
  int out_r;
  char out[4096];
};

static char *
tenant_probe (void)
{
  char *p = NULL;
  if (asprintf (&p, "%s/tests/helpers/tenant-probe", builddir ()) < 0)
    abort ();
  return p;
}

/* Starts tenant-probe ARGS under p and reads its report up to "ready". */
static void
hold (struct held *h, const struct securer_policy *p, const char *what, const char *n)
{
  memset (h, 0, sizeof *h);
  int in[2], out[2];
  cr_assert_eq (pipe2 (in, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (out, O_CLOEXEC), 0);
  char *argv[] = { tenant_probe (), (char *) what, (char *) n, NULL };
  struct securer_spawn_opts o = opts_for (p, argv);
  o.stdin_fd = in[0];
  o.stdout_fd = out[1];
  o.timeout_ms = 60000;
  securer_err_t err = NULL;
  int rc = securer_sandbox_spawn (&o, &h->sb, &err);
  free (argv[0]);
  close (in[0]);
  close (out[1]);
  cr_assert_eq (rc, 0, "spawn: %s", securer_error_message (err));
  h->in_w = in[1];
  h->out_r = out[0];
  size_t len = 0;
  while (strstr (h->out, "ready\n") == NULL)
    {
      ssize_t k = read (h->out_r, h->out + len, sizeof h->out - 1 - len);
      cr_assert_gt (k, 0, "tenant-probe %s ended before it was ready:\n%s", what, h->out);
      len += (size_t) k;
      h->out[len] = '\0';
    }
}

static void
release (struct held *h)
{
  close (h->in_w);
  struct securer_status st;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_wait (h->sb, &st, &err), 1, "%s", securer_error_message (err));
  cr_assert (st.exited && st.exit_code == 0, "tenant-probe: exited=%d code=%d signal=%d", st.exited,
             st.exit_code, st.signal);
  securer_status_clear (&st);
  securer_sandbox_free (h->sb);
  close (h->out_r);
}

static long
count_of (const struct held *h, const char *key)
{
  char *v = kv (h->out, key);
  cr_assert_not_null (v, "no %s in:\n%s", key, h->out);
  long n = strtol (v, NULL, 10);
  free (v);
  return n;
}

/* The host uid the sandbox's payload runs as. */
static unsigned
host_uid_of (const struct held *h)
{
  char path[64], buf[4096];
  snprintf (path, sizeof path, "/proc/%d/status", (int) securer_sandbox_pid (h->sb));
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "%s", path);
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  cr_assert_gt (n, 0);
  buf[n] = '\0';
  const char *u = strstr (buf, "\nUid:");
  cr_assert_not_null (u);
  unsigned r, e, s, f;
  cr_assert_eq (sscanf (u + 5, "%u %u %u %u", &r, &e, &s, &f), 4);
  cr_assert (r == e && e == s && s == f, "mixed host uids %u %u %u %u", r, e, s, f);
  return r;
}

static long
read_long (const char *path)
{
  FILE *f = fopen (path, "re");
  cr_assert_not_null (f, "%s", path);
  long v = -1;
  cr_assert_eq (fscanf (f, "%ld", &v), 1);
  fclose (f);
  return v;
}

Test (tenants, two_sandboxes_never_share_a_host_id)
{
  if (geteuid () != 0)
    cr_skip_test ("only a root caller leases host ids (an unprivileged caller's sandbox is the caller)");
  struct securer_policy *p = test_policy ();
  struct held a, b;
  hold (&a, p, "ids", NULL);
  hold (&b, p, "ids", NULL);
  unsigned ua = host_uid_of (&a), ub = host_uid_of (&b);
  cr_assert_neq (ua, ub, "both sandboxes run as host uid %u", ua);
  cr_assert (ua != 0 && ua != 65534 && ub != 0 && ub != 65534);
  /* Inside, both are the policy's uid. */
  cr_assert_eq (count_of (&a, "uid"), 1000);
  cr_assert_eq (count_of (&b, "uid"), 1000);
  release (&a);
  release (&b);
  test_policy_free (p);
}

/* Before: the user namespace was created by root, so every inotify
 * instance inside was also charged to host root, and 128 of them left root
 * unable to create any. */
Test (tenants, inotify_instances_are_charged_to_the_sandbox_alone)
{
  if (geteuid () != 0)
    cr_skip_test ("an unprivileged caller's sandboxes share the caller's counters by design");
  long max = read_long ("/proc/sys/fs/inotify/max_user_instances");
  cr_assert_lt (max, 100000, "max_user_instances %ld is too large to use up in a test", max);
  struct securer_policy *p = test_policy ();
  char n[32];
  snprintf (n, sizeof n, "%ld", max + 20);
  struct held a;
  hold (&a, p, "inotify", n);
  cr_assert_eq (count_of (&a, "inotify"), max, "%s", a.out);
  char *e = kv (a.out, "inotify_err");
  cr_assert_str_eq (e, "EMFILE");
  free (e);
  /* The host, and another sandbox, are unaffected while a holds them. */
  int fd = inotify_init1 (IN_CLOEXEC);
  cr_assert_geq (fd, 0, "host root cannot create an inotify instance: %s", strerror (errno));
  close (fd);
  struct held b;
  hold (&b, p, "inotify", "5");
  cr_assert_eq (count_of (&b, "inotify"), 5, "%s", b.out);
  release (&b);
  release (&a);
  test_policy_free (p);
}

/* Before: all of root's sandboxes were host uid 65534, and the launcher
 * handed the seccomp listener over with SCM_RIGHTS, which fails with
 * ETOOMANYREFS once that user has more descriptors in flight than the new
 * payload's NOFILE limit: one tenant stopped every later launch. */
Test (tenants, descriptors_in_flight_do_not_stop_another_launch)
{
  struct securer_policy *p = test_policy ();
  struct held a;
  hold (&a, p, "inflight", "4000");
  long inflight = count_of (&a, "inflight");
  cr_assert_gt (inflight, 256, "%s", a.out);

  /* A policy whose filter has a kill rule, so the launch hands a listener
   * over, with a NOFILE limit below what a holds in flight. */
  struct securer_policy *q = test_policy ();
  q->seccomp.enabled = true;
  add_syscall_rule (q, "ptrace", SECURER_ACT_KILL_PROCESS, 0);
  q->limits.rlimit[SECURER_RLIMIT_NOFILE].set = true;
  q->limits.rlimit[SECURER_RLIMIT_NOFILE].soft = 64;
  q->limits.rlimit[SECURER_RLIMIT_NOFILE].hard = 64;
  char *argv[] = { (char *) "/bin/true", NULL };
  struct securer_spawn_opts o = opts_for (q, argv);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "a launch failed while another sandbox holds %ld fds in flight: %s", inflight,
                r.spawn_msg);
  cr_assert (r.st.exited && r.st.exit_code == 0);
  run_result_clear (&r);
  release (&a);
  test_policy_free (q);
  test_policy_free (p);
}

/* Before: pending signals inside were charged to host root as well. */
Test (tenants, pending_signals_are_charged_to_the_sandbox_alone)
{
  if (geteuid () != 0)
    cr_skip_test ("an unprivileged caller's sandboxes share the caller's counters by design");
  struct rlimit rl;
  cr_assert_eq (getrlimit (RLIMIT_SIGPENDING, &rl), 0);
  cr_assert (rl.rlim_cur < 10000000, "RLIMIT_SIGPENDING %llu is too large to use up in a test",
             (unsigned long long) rl.rlim_cur);
  struct securer_policy *p = test_policy ();
  char n[32];
  snprintf (n, sizeof n, "%llu", (unsigned long long) rl.rlim_cur + 10);
  struct held a;
  hold (&a, p, "sigqueue", n);
  char *e = kv (a.out, "sigqueue_err");
  cr_assert_str_eq (e, "EAGAIN", "%s", a.out);
  free (e);
  sigset_t s;
  sigemptyset (&s);
  sigaddset (&s, SIGRTMIN + 1);
  sigprocmask (SIG_BLOCK, &s, NULL);
  union sigval v = { 0 };
  cr_assert_eq (sigqueue (getpid (), SIGRTMIN + 1, v), 0, "host root cannot queue a signal: %s",
                strerror (errno));
  struct timespec zero = { 0, 0 };
  cr_assert_eq (sigtimedwait (&s, NULL, &zero), SIGRTMIN + 1);
  release (&a);
  test_policy_free (p);
}

/* Leases come from one id from here on, outside the default range so that
 * no other test takes it; returns the id. */
static unsigned
lease_one_id (unsigned base)
{
  char range[64];
  unsigned id = base + (unsigned) getpid () % 1000000u;
  snprintf (range, sizeof range, "%u-%u", id, id);
  cr_assert_eq (setenv ("SECURER_HOST_IDS", range, 1), 0);
  return id;
}

Test (tenants, an_exhausted_id_range_refuses_with_the_reason)
{
  if (geteuid () != 0)
    cr_skip_test ("only a root caller leases host ids");
  unsigned id = lease_one_id (3000000000u);
  struct securer_policy *p = test_policy ();
  struct held a;
  hold (&a, p, "ids", NULL);
  cr_assert_eq (host_uid_of (&a), id);
  char *argv[] = { (char *) "/bin/true", NULL };
  struct securer_spawn_opts o = opts_for (p, argv);
  struct run_result r;
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, -1, "a second sandbox started with the only id in use");
  cr_assert_eq (r.spawn_status, SECURER_EXIT_SETUP);
  cr_assert_eq (r.spawn_errno, EAGAIN);
  cr_assert_not_null (strstr (r.spawn_msg, "in use by running sandboxes"), "%s", r.spawn_msg);
  run_result_clear (&r);
  release (&a);
  /* Released with the sandbox: the id can be had again. */
  run_in_sandbox (&o, &r);
  cr_assert_eq (r.spawn_rc, 0, "%s", r.spawn_msg);
  run_result_clear (&r);
  unsetenv ("SECURER_HOST_IDS");
  test_policy_free (p);
}

static char *
slurp (const char *path, size_t *len)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "%s: %s", path, strerror (errno));
  char *buf = malloc (65536);
  ssize_t n = read (fd, buf, 65535);
  close (fd);
  cr_assert_geq (n, 0, "%s", path);
  buf[n] = '\0';
  *len = (size_t) n;
  return buf;
}

/* The host pid of the sandbox's pid 1: the parent of its payload. */
static int
init_of (struct securer_sandbox *sb)
{
  char path[64];
  size_t len;
  snprintf (path, sizeof path, "/proc/%d/status", (int) securer_sandbox_pid (sb));
  char *st = slurp (path, &len);
  const char *pp = strstr (st, "\nPPid:");
  cr_assert_not_null (pp);
  int init = atoi (pp + 6);
  free (st);
  cr_assert_gt (init, 1);
  return init;
}

/* Before: a lease locked the byte of its id's place in the range, not of
 * the id: launchers given different ranges (SECURER_HOST_IDS) that overlap
 * handed out the same id, byte 1 of one range being byte 0 of the other. */
Test (tenants, overlapping_id_ranges_never_give_two_sandboxes_one_id)
{
  if (geteuid () != 0)
    cr_skip_test ("only a root caller leases host ids");
  unsigned id = lease_one_id (3200000000u);
  struct securer_policy *p = test_policy ();
  struct held a, b;
  hold (&a, p, "ids", NULL);
  cr_assert_eq (host_uid_of (&a), id);
  char range[64];
  snprintf (range, sizeof range, "%u-%u", id - 1, id);
  cr_assert_eq (setenv ("SECURER_HOST_IDS", range, 1), 0);
  hold (&b, p, "ids", NULL);
  cr_assert_eq (host_uid_of (&b), id - 1, "a second live sandbox got host id %u", host_uid_of (&b));
  release (&b);
  release (&a);
  unsetenv ("SECURER_HOST_IDS");
  test_policy_free (p);
}

/* pid 1 used to be a fork of the caller that never executed anything: its
 * argv (with --tool-env secrets), environment and memory were the caller's. */
Test (tenants, pid1_holds_nothing_of_the_caller)
{
  const char *secret = "SECURER_TEST_SECRET=swordfish-caller-only";
  cr_assert_eq (putenv ((char *) secret), 0);
  struct securer_policy *p = test_policy ();
  struct held a;
  hold (&a, p, "ids", NULL);
  char path[64];
  size_t len;
  char *st;
  int init = init_of (a.sb);

  snprintf (path, sizeof path, "/proc/%d/cmdline", init);
  char *cmd = slurp (path, &len);
  char want[64];
  int wl = snprintf (want, sizeof want, "securer-init%c%d", '\0', 2);
  cr_assert_eq (len, (size_t) wl + 1, "pid 1's command line has %zu bytes", len);
  cr_assert_eq (memcmp (cmd, want, (size_t) wl + 1), 0, "pid 1's command line is not securer-init's");
  free (cmd);
  snprintf (path, sizeof path, "/proc/%d/environ", init);
  char *env = slurp (path, &len);
  cr_assert_eq (len, 0, "pid 1 has an environment: %.*s", (int) len, env);
  free (env);
  snprintf (path, sizeof path, "/proc/%d/status", init);
  st = slurp (path, &len);
  cr_assert_not_null (strstr (st, "\nCapEff:\t0000000000000000\n"), "pid 1 kept capabilities:\n%s", st);
  free (st);

  /* Only the status socket is open in pid 1, and with a leased host id the
   * lease's lock (held to the end of pid 1's exit): none of the caller's
   * files, its stdio included. */
  snprintf (path, sizeof path, "/proc/%d/fd", init);
  DIR *d = opendir (path);
  cr_assert_not_null (d);
  struct dirent *e;
  int n = 0;
  bool lease = false;
  while ((e = readdir (d)) != NULL)
    if (e->d_name[0] != '.')
      {
        if (strcmp (e->d_name, "5") == 0 && geteuid () == 0)
          {
            char link[96], target[256];
            snprintf (link, sizeof link, "/proc/%d/fd/5", init);
            ssize_t tl = readlink (link, target, sizeof target - 1);
            cr_assert_gt (tl, 0);
            target[tl] = '\0';
            const char *base = strrchr (target, '/');
            cr_assert_str_eq (base ? base + 1 : target, "host-ids.lock", "pid 1's fd 5 is %s", target);
            lease = true;
            continue;
          }
        cr_assert_str_eq (e->d_name, "3", "pid 1 holds fd %s", e->d_name);
        n++;
      }
  closedir (d);
  cr_assert_eq (n, 1);
  cr_assert_eq (lease, geteuid () == 0, "a root caller's pid 1 does not hold its lease");
  release (&a);
  test_policy_free (p);
  unsetenv ("SECURER_TEST_SECRET");
}

/* Before: one sandbox's pipe buffers past pipe-user-pages-soft shrank every
 * new pipe of every other sandbox (same host uid) to two pages. */
Test (tenants, pipe_buffers_are_counted_per_sandbox)
{
  if (geteuid () != 0)
    cr_skip_test ("an unprivileged caller's sandboxes share the caller's counters by design");
  long soft = read_long ("/proc/sys/fs/pipe-user-pages-soft");
  long max = read_long ("/proc/sys/fs/pipe-max-size");
  if (soft == 0 || max < (1 << 20))
    cr_skip_test ("pipe-user-pages-soft is 0 or pipe-max-size below 1 MiB: nothing to use up");
  /* 1 MiB pipes are 256 pages each. */
  char n[32];
  snprintf (n, sizeof n, "%ld", soft / 256 + 8);
  struct securer_policy *p = test_policy ();
  struct held a;
  hold (&a, p, "pipes", n);
  char *e = kv (a.out, "pipes_err");
  cr_assert_str_eq (e, "EPERM", "%s", a.out);
  free (e);
  cr_assert_eq (count_of (&a, "pipe_size"), 8192, "%s", a.out);
  struct held b;
  hold (&b, p, "pipes", "0");
  cr_assert_eq (count_of (&b, "pipe_size"), 65536, "a fresh pipe in another sandbox:\n%s", b.out);
  release (&b);
  release (&a);
  test_policy_free (p);
}

/* Before: with return_before_teardown (securer run) the lease ended at pid
 * 1's report, while pid 1 was still on its way out with the sandbox's
 * root, mounts and namespaces.  A sandbox without a user namespace that got
 * the same id runs as that host uid in the initial user namespace, which
 * makes it the owner of the ending sandbox's user namespace, with every
 * capability there whatever its own: it could read and write the ending
 * sandbox's files through /proc/PID/root of that pid 1.  Here pid 1 is held
 * at its exit (ptrace) to make that moment last. */
Test (tenants, a_host_id_is_not_leased_again_while_pid_1_is_on_its_way_out)
{
  if (geteuid () != 0)
    cr_skip_test ("only a root caller leases host ids");
  lease_one_id (3100000000u);

  /* A: its own pid namespace, no cgroup: what securer run returns early for. */
  struct securer_policy *p = test_policy ();
  p->limits.cgroup = SECURER_ENFORCE_OFF;
  int in[2], out[2];
  cr_assert_eq (pipe2 (in, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (out, O_CLOEXEC), 0);
  char *argv[] = { (char *) "/bin/sh", (char *) "-c",
                   (char *) "echo swordfish > /tmp/secret && echo ready && { read x || true; }", NULL };
  struct securer_spawn_opts o = opts_for (p, argv);
  o.stdin_fd = in[0];
  o.stdout_fd = out[1];
  o.timeout_ms = 60000;
  o.return_before_teardown = true;
  struct securer_sandbox *a = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_spawn (&o, &a, &err), 0, "spawn: %s", securer_error_message (err));
  close (in[0]);
  close (out[1]);
  char buf[64];
  cr_assert_eq (read (out[0], buf, sizeof buf), 6, "the command did not start");
  int init = init_of (a);
  cr_assert_eq (ptrace (PTRACE_SEIZE, init, NULL, (void *) (long) PTRACE_O_TRACEEXIT), 0, "%s",
                strerror (errno));
  close (in[1]);
  int ws;
  cr_assert_eq (waitpid (init, &ws, __WALL), init);
  cr_assert (WIFSTOPPED (ws) && (ws >> 8) == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)), "pid 1: status %#x", ws);

  /* pid 1 has reported and is held at its exit.  A caller that has the
   * status frees the sandbox, as securer run does. */
  struct securer_status st;
  memset (&st, 0, sizeof st);
  bool a_done = securer_sandbox_dispatch (a, &st, &err) == 1;
  if (a_done)
    {
      cr_assert (st.exited && st.exit_code == 0);
      securer_status_clear (&st);
      securer_sandbox_free (a);
    }

  /* B: no user namespace, no pid namespace: runs as the leased host uid. */
  struct securer_policy *q = test_policy ();
  q->namespaces = 0;
  q->network = SECURER_NET_HOST;
  free (q->hostname);
  q->hostname = NULL;
  size_t q_mounts = q->n_mounts;
  q->n_mounts = 0;
  char target[64];
  snprintf (target, sizeof target, "/proc/%d/root/tmp/secret", init);
  char *bargv[] = { (char *) "/bin/cat", target, NULL };
  struct securer_spawn_opts bo = opts_for (q, bargv);
  struct run_result r;
  run_in_sandbox (&bo, &r);
  cr_assert_eq (r.spawn_rc, -1, "a sandbox with the host id of one whose pid 1 is still there started%s%s",
                strstr (r.out, "swordfish") ? " and read its file: " : "", r.out);
  cr_assert_eq (r.spawn_errno, EAGAIN, "%s", r.spawn_msg);
  run_result_clear (&r);

  cr_assert_eq (ptrace (PTRACE_DETACH, init, NULL, NULL), 0);
  if (a_done)
    waitpid (init, NULL, __WALL);
  else
    {
      cr_assert_eq (securer_sandbox_wait (a, &st, &err), 1, "%s", securer_error_message (err));
      cr_assert (st.exited && st.exit_code == 0);
      securer_status_clear (&st);
      securer_sandbox_free (a);
    }
  close (out[0]);
  unsetenv ("SECURER_HOST_IDS");
  q->n_mounts = q_mounts;
  test_policy_free (q);
  test_policy_free (p);
}

/* The seccomp listener goes to the supervisor with SCM_RIGHTS, a descriptor
 * in flight, which the kernel charges to a count per host user: another
 * process of the sandbox's host uid that keeps more descriptors in flight
 * than the payload's NOFILE limit makes that send fail (ETOOMANYREFS).  The
 * denial must still be caught and named: the listener is then offered by
 * number and taken with pidfd_getfd. */
Test (tenants, the_listener_reaches_the_supervisor_when_the_uid_has_too_many_fds_in_flight)
{
  if (geteuid () != 0)
    cr_skip_test ("the host uid's in-flight count is filled by a process of a leased id");
  unsigned id = lease_one_id (3300000000u);
  int ready[2], hold[2];
  cr_assert_eq (pipe2 (ready, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (hold, O_CLOEXEC), 0);
  pid_t filler = fork ();
  cr_assert_geq (filler, 0);
  if (filler == 0)
    {
      close (hold[1]);
      close (ready[0]);
      int sv[2];
      if (syscall (SYS_setresgid, id, id, id) < 0 || syscall (SYS_setresuid, id, id, id) < 0
          || socketpair (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
        _exit (2);
      /* 4 x 100 descriptors in flight, never received. */
      int fds[100];
      for (int i = 0; i < 100; i++)
        fds[i] = ready[1];
      union {
        char buf[CMSG_SPACE (sizeof fds)];
        struct cmsghdr align;
      } u;
      for (int k = 0; k < 4; k++)
        {
          char byte = 'x';
          struct iovec iov = { &byte, 1 };
          struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
          struct cmsghdr *c = CMSG_FIRSTHDR (&m);
          c->cmsg_level = SOL_SOCKET;
          c->cmsg_type = SCM_RIGHTS;
          c->cmsg_len = CMSG_LEN (sizeof fds);
          memcpy (CMSG_DATA (c), fds, sizeof fds);
          if (sendmsg (sv[0], &m, 0) != 1)
            _exit (3);
        }
      (void) !write (ready[1], "r", 1);
      char b;
      (void) !read (hold[0], &b, 1);
      _exit (0);
    }
  close (ready[1]);
  close (hold[0]);
  char b = 0;
  cr_assert_eq (read (ready[0], &b, 1), 1, "the filler could not put descriptors in flight");

  struct securer_policy *p = test_policy ();
  p->seccomp.enabled = true;
  add_syscall_rule (p, "kill", SECURER_ACT_KILL_PROCESS, 0);
  p->limits.rlimit[SECURER_RLIMIT_NOFILE].set = true;
  p->limits.rlimit[SECURER_RLIMIT_NOFILE].soft = 64;
  p->limits.rlimit[SECURER_RLIMIT_NOFILE].hard = 64;
  char *probe = probe_path ();
  char *args[] = { probe, "kill", "1", "0", "exit", "0", NULL };
  struct securer_spawn_opts o = opts_for (p, args);
  struct securer_sandbox *sb = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_spawn (&o, &sb, &err), 0, "%s", securer_error_message (err));
  struct securer_status st;
  cr_assert_eq (securer_sandbox_wait (sb, &st, &err), 1, "%s", securer_error_message (err));
  cr_assert_eq (st.signal, SIGSYS);
  cr_assert_eq (st.reason, SECURER_KILL_SECCOMP);
  cr_assert_not_null (st.detail);
  cr_assert_str_eq (st.detail, "kill");
  securer_status_clear (&st);
  securer_sandbox_free (sb);

  close (hold[1]);
  waitpid (filler, NULL, 0);
  close (ready[0]);
  free (probe);
  test_policy_free (p);
  unsetenv ("SECURER_HOST_IDS");
}

/* The numbered entries of tenant-probe's "pts=" list: the ptys the
 * sandbox sees. */
static long
ptys_seen (const struct held *h)
{
  char *v = kv (h->out, "pts");
  cr_assert_not_null (v, "no pts in:\n%s", h->out);
  long n = 0;
  char *save = NULL;
  for (char *t = strtok_r (v, " ", &save); t != NULL; t = strtok_r (NULL, " ", &save))
    n += t[0] >= '0' && t[0] <= '9';
  free (v);
  return n;
}

/* Before: every sandbox's devpts instance had no cap of its own, and the
 * kernel counts the ptys of all of them against one pool (kernel.pty.max
 * less kernel.pty.reserve, 3072 by default): one sandbox holding them all
 * left every other one, and every container asking for a terminal, with
 * ENOSPC on /dev/ptmx. */
Test (tenants, a_sandbox_at_its_pty_cap_leaves_ptys_to_another)
{
  struct securer_policy *p = test_policy ();
  p->limits.ptys_set = true;
  p->limits.ptys = 4;
  struct held a;
  hold (&a, p, "ptys", "64");
  cr_assert_eq (count_of (&a, "ptys"), 4, "%s", a.out);
  char *e = kv (a.out, "ptys_err");
  cr_assert_not_null (e, "%s", a.out);
  cr_assert_str_eq (e, "ENOSPC", "%s", a.out);
  free (e);
  cr_assert_eq (ptys_seen (&a), 4, "%s", a.out);

  /* While a holds its four: another sandbox, of the default cap, gets
   * ptys, and sees only its own. */
  struct securer_policy *q = test_policy ();
  struct held b;
  hold (&b, q, "ptys", "2");
  cr_assert_eq (count_of (&b, "ptys"), 2, "%s", b.out);
  cr_assert_null (kv (b.out, "ptys_err"), "%s", b.out);
  cr_assert_eq (ptys_seen (&b), 2, "a's ptys are visible in b:\n%s", b.out);
  release (&b);
  release (&a);
  test_policy_free (q);
  test_policy_free (p);
}

/* The default cap holds without a `limit ptys` line. */
Test (tenants, the_default_pty_cap)
{
  struct securer_policy *p = test_policy ();
  char n[32];
  snprintf (n, sizeof n, "%u", SECURER_PTYS_DEFAULT + 8);
  struct held a;
  hold (&a, p, "ptys", n);
  cr_assert_eq (count_of (&a, "ptys"), SECURER_PTYS_DEFAULT, "%s", a.out);
  char *e = kv (a.out, "ptys_err");
  cr_assert_not_null (e, "%s", a.out);
  cr_assert_str_eq (e, "ENOSPC", "%s", a.out);
  free (e);
  release (&a);
  test_policy_free (p);
}

/* `limit ptys 0`, as r has it: no devpts and no ptmx (a devpts max=0
 * would be no cap at all), so no pty can be had. */
/* The shipped r policy, with tenant-probe mounted and allowed to run. */
static struct securer_policy *
r_with_tenant_probe (void)
{
  if (access ("/usr/lib/R/bin/exec/R", X_OK) != 0)
    cr_skip_test ("R is not installed: r.policy's mounts are not there");
  const char *src = getenv ("SECURER_SRCDIR") ? getenv ("SECURER_SRCDIR") : SECURER_ABS_SRCDIR;
  char *h = helpers_dir ();
  char *text = NULL;
  cr_assert_geq (asprintf (&text, "include \"%s/policies/r.policy\"\nmount ro %s %s\nexec %s/tenant-probe\n", src,
                           h, h, h), 0);
  free (h);
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_string ("r-tenant.policy", text, strlen (text), &p, NULL, &err), 0, "%s",
                securer_error_message (err));
  free (text);
  return p;
}

Test (tenants, r_gives_no_pty)
{
  struct securer_policy *p = r_with_tenant_probe ();
  cr_assert_eq (securer_policy_ptys (p), 0);
  struct held a;
  hold (&a, p, "ptys", "4");
  cr_assert_eq (count_of (&a, "ptys"), 0, "%s", a.out);
  char *e = kv (a.out, "ptys_err");
  cr_assert_not_null (e, "%s", a.out);
  cr_assert_str_eq (e, "ENOENT", "%s", a.out);
  free (e);
  char *pts = kv (a.out, "pts");
  cr_assert_str_eq (pts, "none", "%s", a.out);
  free (pts);
  release (&a);
  securer_policy_free (p);
}

/* Work of the host's that every tenant's would look like: files written,
 * fsynced and removed, a sync, processes forked, loopback traffic, a file
 * read back from the disk. */
static void
host_work (void)
{
  char dir[] = "/var/tmp/securer-proc-watch-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  static char block[256 << 10];
  memset (block, 'w', sizeof block);
  for (int i = 0; i < 32; i++)
    {
      char path[96];
      snprintf (path, sizeof path, "%s/%d", dir, i);
      int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      cr_assert_geq (fd, 0, "%s: %s", path, strerror (errno));
      cr_assert_eq (write (fd, block, sizeof block), (ssize_t) sizeof block);
      cr_assert_eq (fsync (fd), 0);
      close (fd);
    }
  sync ();
  for (int i = 0; i < 32; i++)
    {
      char path[96];
      snprintf (path, sizeof path, "%s/%d", dir, i);
      /* Read back from the disk: the page cache dropped first. */
      int fd = open (path, O_RDONLY | O_CLOEXEC);
      cr_assert_geq (fd, 0);
      posix_fadvise (fd, 0, 0, POSIX_FADV_DONTNEED);
      while (read (fd, block, sizeof block) > 0)
        ;
      close (fd);
      unlink (path);
    }
  rmdir (dir);
  for (int i = 0; i < 32; i++)
    {
      pid_t c = fork ();
      cr_assert_geq (c, 0);
      if (c == 0)
        _exit (0);
      waitpid (c, NULL, 0);
    }
  int l = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t sl = sizeof sa;
  cr_assert_eq (bind (l, (struct sockaddr *) &sa, sizeof sa), 0);
  cr_assert_eq (listen (l, 1), 0);
  cr_assert_eq (getsockname (l, (struct sockaddr *) &sa, &sl), 0);
  int c = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  cr_assert_eq (connect (c, (struct sockaddr *) &sa, sizeof sa), 0);
  int a = accept4 (l, NULL, NULL, SOCK_CLOEXEC);
  cr_assert_geq (a, 0);
  /* In pieces that fit the socket's buffer, each read back before the next. */
  for (int i = 0; i < 256; i++)
    {
      cr_assert_eq (write (c, block, 16384), 16384);
      for (size_t got = 0; got < 16384;)
        {
          ssize_t r = read (a, block, 16384 - got);
          cr_assert_gt (r, 0);
          got += (size_t) r;
        }
    }
  close (a);
  close (c);
  close (l);
  sync ();
}

/* Before: /proc/irq (interrupt counts per network queue, what the masked
 * interrupts gives), /proc/fs (every ext4 disk's free blocks and extent
 * cache) and /proc/sys/fs/quota (the host's count of syncs) were readable,
 * and moved with other tenants' work.  This looks at every file of /proc
 * but the processes' directories, from inside a sandbox of r, before and
 * after the host works: no content may change that the sandbox itself,
 * idle meanwhile, does not explain.  A new kernel's new host-wide entry
 * fails it. */
Test (tenants, no_proc_file_follows_the_hosts_work, .timeout = 120)
{
  struct securer_policy *p = r_with_tenant_probe ();
  struct held a;
  hold (&a, p, "proc-watch", NULL);
  host_work ();
  cr_assert_eq (write (a.in_w, "g", 1), 1);
  static char out[1 << 20];
  size_t len = 0;
  out[0] = '\0';
  while (strstr (out, "done\n") == NULL)
    {
      ssize_t k = read (a.out_r, out + len, sizeof out - 1 - len);
      cr_assert_gt (k, 0, "proc-watch ended before it was done:\n%s", out);
      len += (size_t) k;
      out[len] = '\0';
    }
  /* Changes of the sandbox's own making: a fresh random UUID on every
   * read, nothing of the host's. */
  static const char *const own[] = { "sys/kernel/random/uuid" };
  char *files = kv (out, "files");
  cr_assert_not_null (files, "%s", out);
  cr_assert_gt (atol (files), 100, "proc-watch read next to nothing:\n%s", out);
  free (files);
  for (const char *l = out; l != NULL && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    {
      if (strncmp (l, "changed=", 8) != 0)
        continue;
      size_t n = strcspn (l + 8, "\n");
      bool known = false;
      for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        known |= strlen (own[i]) == n && strncmp (own[i], l + 8, n) == 0;
      cr_expect (known, "/proc/%.*s changed with the host's work", (int) n, l + 8);
    }
  release (&a);
  securer_policy_free (p);
}
