/* Cost of the seccomp filter: per-syscall overhead of a large allowlist
 * (the shipped @system-service group plus the conditional ioctl/socket/clone
 * rules an R policy carries) against no filter, and the time to compile it.
 *
 * Each measurement runs in a fresh child so the filter of one run does not
 * tax the next; the number reported is the best of several rounds (the
 * least disturbed by the machine's other work). */
#include <config.h>

#include <errno.h>
#include <linux/audit.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "seccomp/seccomp.h"

#define CALLS 2000000
#define ROUNDS 5

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static struct securer_syscall_rule rules[700];
static size_t n_rules;

static void
add (const char *name, struct securer_action a, unsigned arg, enum securer_cmp op, uint64_t v, uint64_t m)
{
  struct securer_syscall_rule *r = &rules[n_rules++];
  memset (r, 0, sizeof *r);
  r->name = (char *) name;
  r->action = a;
  if (op != (enum securer_cmp) -1)
    {
      r->n_conds = 1;
      r->conds[0] = (struct securer_arg_cond) { arg, op, v, m };
    }
}

static void
build_policy (struct securer_policy *p, size_t *n_allowed)
{
  char **m = NULL;
  size_t n = 0;
  securer_err_t err = NULL;
  if (securer_group_load ("system-service", &m, &n, &err) < 0)
    {
      fprintf (stderr, "bench: %s\n", securer_error_message (err));
      exit (1);
    }
  struct securer_action allow = { SECURER_ACT_ALLOW, 0 }, eperm = { SECURER_ACT_ERRNO, EPERM };
  for (size_t i = 0; i < n && n_rules < 600; i++)
    if (strcmp (m[i], "socket") != 0 && strcmp (m[i], "clone") != 0)
      add (strdup (m[i]), allow, 0, (enum securer_cmp) -1, 0, 0);
  *n_allowed = n_rules;
  add ("ioctl", eperm, 1, SECURER_CMP_EQ, TIOCSTI, 0);
  add ("ioctl", eperm, 1, SECURER_CMP_EQ, TIOCLINUX, 0);
  add ("socket", allow, 0, SECURER_CMP_EQ, AF_UNIX, 0);
  add ("clone", eperm, 0, SECURER_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
  add ("clone", eperm, 0, SECURER_CMP_MASKED_EQ, CLONE_NEWNET, CLONE_NEWNET);
  add ("clone", allow, 0, (enum securer_cmp) -1, 0, 0);
  securer_strv_free (m);
  memset (p, 0, sizeof *p);
  p->seccomp.enabled = true;
  p->seccomp.default_action = (struct securer_action) { SECURER_ACT_ERRNO, ENOSYS };
  p->seccomp.foreign_arch = (struct securer_action) { SECURER_ACT_KILL_PROCESS, 0 };
  p->seccomp.rules = rules;
  p->seccomp.n_rules = n_rules;
}

/* Nanoseconds per call of `nr` in a child, with or without the filter. */
static double
measure (struct securer_seccomp_prog *prog, long nr, long a0, long a1)
{
  double *shared = mmap (NULL, sizeof (double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED)
    return -1;
  *shared = -1;
  pid_t pid = fork ();
  if (pid == 0)
    {
      securer_err_t err = NULL;
      int lfd;
      if (prog && (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || securer_seccomp_load (prog, &lfd, &err) < 0))
        _exit (1);
      double best = 1e30;
      for (int r = 0; r < ROUNDS; r++)
        {
          double t0 = now_ns ();
          for (int i = 0; i < CALLS; i++)
            syscall (nr, a0, a1);
          double t = (now_ns () - t0) / CALLS;
          if (t < best)
            best = t;
        }
      *shared = best;
      _exit (0);
    }
  int st;
  waitpid (pid, &st, 0);
  double v = *shared;
  munmap (shared, sizeof (double));
  return v;
}

int
main (void)
{
  struct securer_policy p;
  size_t n_allowed;
  build_policy (&p, &n_allowed);

  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  double best_compile = 1e30;
  for (int r = 0; r < 20; r++)
    {
      double t0 = now_ns ();
      if (securer_seccomp_compile (&p, 0, -1, &prog, &err) < 0)
        {
          fprintf (stderr, "bench: compile: %s\n", securer_error_message (err));
          return 1;
        }
      double t = now_ns () - t0;
      if (t < best_compile)
        best_compile = t;
      if (r < 19)
        securer_seccomp_free (prog);
    }
  FILE *f = tmpfile ();
  securer_seccomp_export_bpf (prog, fileno (f), &err);
  long insns = ftell (f) >= 0 ? (long) lseek (fileno (f), 0, SEEK_END) / 8 : -1;
  fclose (f);

  /* The kernel's fixed cost of having any filter at all (syscall slow path). */
  struct securer_policy empty;
  memset (&empty, 0, sizeof empty);
  empty.seccomp.enabled = true;
  empty.seccomp.default_action = (struct securer_action) { SECURER_ACT_ALLOW, 0 };
  empty.seccomp.foreign_arch = (struct securer_action) { SECURER_ACT_KILL_PROCESS, 0 };
  struct securer_seccomp_prog *trivial = NULL;
  if (securer_seccomp_compile (&empty, 0, -1, &trivial, &err) < 0)
    return 1;

  int fds[2];
  if (pipe (fds) < 0)
    return 1;
  double base_getpid = measure (NULL, SYS_getpid, 0, 0);
  double triv_getpid = measure (trivial, SYS_getpid, 0, 0);
  double filt_getpid = measure (prog, SYS_getpid, 0, 0);
  double base_ioctl = measure (NULL, SYS_ioctl, fds[0], FIONREAD);
  double filt_ioctl = measure (prog, SYS_ioctl, fds[0], FIONREAD);
  double base_denied = measure (NULL, SYS_getpid, 0, 0);
  double filt_denied = measure (prog, 1000, 0, 0);  /* unknown: default ENOSYS */

  printf ("seccomp filter: %zu allowed syscalls + %zu conditional rules, %ld BPF instructions (binary tree)\n",
          n_allowed, n_rules - n_allowed, insns);
  printf ("  compile (policy IR -> libseccomp -> size check): %.2f ms\n", best_compile / 1e6);
  printf ("  getpid, no filter:        %7.1f ns/call\n", base_getpid);
  printf ("  getpid, allow-all filter: %7.1f ns/call  (kernel's fixed cost of any filter %+.1f ns)\n", triv_getpid,
          triv_getpid - base_getpid);
  printf ("  getpid, filter:           %7.1f ns/call  (overhead %+.1f ns; %+.1f ns over allow-all)\n", filt_getpid,
          filt_getpid - base_getpid, filt_getpid - triv_getpid);
  printf ("  ioctl FIONREAD, no filter:%7.1f ns/call\n", base_ioctl);
  printf ("  ioctl FIONREAD, filter:   %7.1f ns/call  (overhead %+.1f ns; argument checks)\n", filt_ioctl,
          filt_ioctl - base_ioctl);
  printf ("  denied (ENOSYS) syscall:  %7.1f ns/call  (getpid unfiltered: %.1f)\n", filt_denied, base_denied);

  /* Whether the kernel's per-syscall action cache (5.11+) can hold "allow"
   * for the unconditionally allowed syscalls: only then does such a call
   * skip the program. */
  const struct sock_filter *bpf;
  unsigned n_bpf;
  unsigned long bpf_flags;
  if (securer_seccomp_bpf (prog, &bpf, &n_bpf, &bpf_flags) == 0)
    {
      uint32_t arch = (uint32_t) seccomp_arch_native ();
      unsigned cacheable = 0, native = 0;
      for (size_t i = 0; i < n_allowed; i++)
        {
          int nr = seccomp_syscall_resolve_name (rules[i].name);
          if (nr < 0)
            continue;   /* a name of another arch */
          native++;
          if (securer_bpf_const_allow (bpf, n_bpf, arch, nr))
            cacheable++;
          else
            printf ("  not cacheable: %s (argument rules)\n", rules[i].name);
        }
      printf ("  kernel action cache: %u of %u unconditionally allowed syscalls cacheable; getpid %s\n",
              cacheable, native, securer_bpf_const_allow (bpf, n_bpf, arch, SYS_getpid) ? "yes" : "no");
    }
  securer_seccomp_free (prog);
  securer_seccomp_free (trivial);
  return 0;
}
