/* The cache of generated seccomp programs: a program comes back from it
 * only from a directory and a file that are the caller's alone, intact,
 * and giving the policy's verdicts; anything else is ignored and the
 * program generated afresh.  The last test runs real sandboxes from the
 * cache and checks the filter still stops what the policy kills. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "seccomp/seccomp.h"
#include "securer.h"
#include "sha256.h"

static char dir[64];
static struct securer_policy *pol;

static void
setup (void)
{
  snprintf (dir, sizeof dir, "/tmp/securer-cache-test-XXXXXX");
  cr_assert_not_null (mkdtemp (dir));
  cr_assert_eq (setenv ("SECURER_SECCOMP_CACHE", dir, 1), 0);
  char path[512];
  snprintf (path, sizeof path, "%s/policies/minimal.policy", SECURER_ABS_SRCDIR);
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_file (path, &pol, NULL, &err), 0, "%s", securer_error_message (err));
}

static void
teardown (void)
{
  char cmd[128];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  (void) !system (cmd);
  securer_policy_free (pol);
  unsetenv ("SECURER_SECCOMP_CACHE");
}

TestSuite (seccomp_cache, .init = setup, .fini = teardown, .timeout = 120);

/* Compiles and generates; *cached tells whether the program came from the
 * cache (such a program has no libseccomp context to export). */
static struct securer_seccomp_prog *
build (unsigned flags, bool *cached)
{
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_seccomp_compile (pol, flags | SECURER_SECCOMP_DEFER_BPF, 200, &prog, &err), 0, "%s",
                securer_error_message (err));
  cr_assert_eq (securer_seccomp_generate (prog, pol, &err), 0, "%s", securer_error_message (err));
  int fd = open ("/dev/null", O_WRONLY | O_CLOEXEC);
  *cached = securer_seccomp_export_bpf (prog, fd, &err) < 0;
  close (fd);
  securer_error_free (&err);
  return prog;
}

static bool
same_program (const struct securer_seccomp_prog *a, const struct securer_seccomp_prog *b)
{
  const struct sock_filter *ia, *ib;
  unsigned na, nb;
  unsigned long fa, fb;
  cr_assert_eq (securer_seccomp_bpf (a, &ia, &na, &fa), 0);
  cr_assert_eq (securer_seccomp_bpf (b, &ib, &nb, &fb), 0);
  return na == nb && fa == fb && memcmp (ia, ib, na * sizeof *ia) == 0;
}

/* The one file the cache holds (after one generation). */
static void
cache_file (char *out, size_t cap)
{
  char cmd[256];
  snprintf (cmd, sizeof cmd, "ls '%s'/*.bpf", dir);
  FILE *f = popen (cmd, "r");
  cr_assert_not_null (f);
  cr_assert_not_null (fgets (out, (int) cap, f), "no program in the cache");
  out[strcspn (out, "\n")] = '\0';
  pclose (f);
}

Test (seccomp_cache, second_compile_comes_from_the_cache_unchanged)
{
  bool cached;
  struct securer_seccomp_prog *fresh = build (SECURER_SECCOMP_REPORT_DENIALS, &cached);
  struct securer_seccomp_prog *plain = build (SECURER_SECCOMP_REPORT_DENIALS, &cached);
  cr_assert (!cached, "a compile without SECURER_SECCOMP_CACHE used the cache");
  struct securer_seccomp_prog *first = build (SECURER_SECCOMP_REPORT_DENIALS | SECURER_SECCOMP_CACHE, &cached);
  cr_assert (!cached, "the empty cache had a program");
  struct securer_seccomp_prog *second = build (SECURER_SECCOMP_REPORT_DENIALS | SECURER_SECCOMP_CACHE, &cached);
  cr_assert (cached, "the second compile did not come from the cache");
  cr_assert (same_program (fresh, second));
  cr_assert (same_program (plain, first));
  /* Another policy shape (no denial reporting) is another program. */
  struct securer_seccomp_prog *other = build (SECURER_SECCOMP_CACHE, &cached);
  cr_assert (!cached, "a different program was taken from the cache");
  securer_seccomp_free (fresh);
  securer_seccomp_free (plain);
  securer_seccomp_free (first);
  securer_seccomp_free (second);
  securer_seccomp_free (other);
}

Test (seccomp_cache, off_switch_reads_and_writes_nothing)
{
  cr_assert_eq (setenv ("SECURER_SECCOMP_CACHE", "off", 1), 0);
  bool cached;
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  cr_assert (!cached);
  char cmd[256];
  snprintf (cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir);
  cr_assert_eq (system (cmd), 0, "something was written with the cache off");
}

/* A directory others can enter or write is never used, not even fixed. */
Test (seccomp_cache, directory_open_to_others_is_ignored)
{
  cr_assert_eq (chmod (dir, 0755), 0);
  bool cached;
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  cr_assert (!cached);
  struct stat st;
  cr_assert_eq (stat (dir, &st), 0);
  cr_assert_eq (st.st_mode & 0777, 0755, "the cache changed the directory's mode");
  char cmd[256];
  snprintf (cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", dir);
  cr_assert_eq (system (cmd), 0, "a program was written into an untrusted directory");
}

Test (seccomp_cache, directory_of_another_user_is_ignored)
{
  cr_assert_eq (chown (dir, 12345, 12345), 0);
  bool cached;
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  cr_assert (!cached);
}

Test (seccomp_cache, file_writable_by_others_or_foreign_is_ignored)
{
  bool cached;
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  char file[512];
  cache_file (file, sizeof file);
  cr_assert_eq (chmod (file, 0620), 0);
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  cr_assert (!cached, "a group-writable file was used");
  /* Regenerated and replaced: from now on it is ours again. */
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  cr_assert (cached);
  cr_assert_eq (chown (file, 12345, 0), 0);
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  cr_assert (!cached, "a file owned by another user was used");
}

static void
rewrite (const char *file, void (*change) (unsigned char *buf, size_t *len))
{
  static unsigned char buf[64 + BPF_MAXINSNS * 8 + 64];
  FILE *f = fopen (file, "rb");
  cr_assert_not_null (f);
  size_t len = fread (buf, 1, sizeof buf, f);
  fclose (f);
  change (buf, &len);
  f = fopen (file, "wb");
  cr_assert_not_null (f);
  cr_assert_eq (fwrite (buf, 1, len, f), len);
  fclose (f);
}

static void
flip_an_instruction_bit (unsigned char *buf, size_t *len)
{
  buf[*len - 32 - 3] ^= 1;   /* in the last instruction, before the digest */
}

/* The header is magic[8] key[32] flags[8] n[4] zero[4]: an allow-all
 * program with a correct digest, as someone able to write the file could
 * plant it. */
static void
plant_allow_all (unsigned char *buf, size_t *len)
{
  const size_t hdr = 56;
  struct sock_filter allow = BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  uint32_t one = 1;
  memcpy (buf + 48, &one, sizeof one);
  memcpy (buf + hdr, &allow, sizeof allow);
  struct securer_sha256 s;
  securer_sha256_init (&s);
  securer_sha256_update (&s, buf, hdr + sizeof allow);
  securer_sha256_final (&s, buf + hdr + sizeof allow);
  *len = hdr + sizeof allow + SECURER_SHA256_LEN;
}

/* Changes the cached file; the next compile must regenerate the same
 * program as before and put it back. */
static void
tamper_and_check (void (*change) (unsigned char *buf, size_t *len), const char *what)
{
  bool cached;
  struct securer_seccomp_prog *good = build (SECURER_SECCOMP_CACHE, &cached);
  char file[512];
  cache_file (file, sizeof file);
  rewrite (file, change);
  struct securer_seccomp_prog *again = build (SECURER_SECCOMP_CACHE, &cached);
  cr_assert (!cached, "%s was used", what);
  cr_assert (same_program (good, again));
  securer_seccomp_free (build (SECURER_SECCOMP_CACHE, &cached));
  cr_assert (cached, "%s was not replaced", what);
  securer_seccomp_free (good);
  securer_seccomp_free (again);
}

Test (seccomp_cache, corrupt_file_is_ignored_and_replaced)
{
  tamper_and_check (flip_an_instruction_bit, "a file whose digest does not match");
}

Test (seccomp_cache, planted_program_with_a_valid_digest_is_refused)
{
  tamper_and_check (plant_allow_all, "an allow-all program with a valid digest");
}

/* A real sandbox whose filter came from the cache still kills what the
 * policy kills (chroot, in base/seccomp-hardening.policy) and runs what it
 * allows. */
static void
spawn (const char *const *argv, struct securer_status *st)
{
  struct securer_spawn_opts o;
  memset (&o, 0, sizeof o);
  o.policy = pol;
  o.argv = (char *const *) argv;
  o.stdin_fd = o.stdout_fd = o.stderr_fd = -1;
  struct securer_sandbox *sb = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_sandbox_spawn (&o, &sb, &err), 0, "%s", securer_error_message (err));
  cr_assert_eq (securer_sandbox_wait (sb, st, &err), 1, "%s", securer_error_message (err));
  securer_sandbox_free (sb);
}

Test (seccomp_cache, sandbox_from_the_cache_is_filtered)
{
  const char *chroot_argv[] = { "/usr/sbin/chroot", "/", "/bin/true", NULL };
  const char *true_argv[] = { "/bin/true", NULL };
  /* The first round's file is held open: while it is, no file made later
   * can have its inode number, so (dev, ino) names that very file. */
  int first = -1;
  struct stat first_st;
  for (int round = 0; round < 3; round++)
    {
      struct securer_status st;
      spawn (chroot_argv, &st);
      cr_assert (!st.exited && st.signal == SIGSYS && st.reason == SECURER_KILL_SECCOMP,
                 "round %d: chroot: exited %d code %d signal %d reason %d", round, st.exited, st.exit_code,
                 st.signal, (int) st.reason);
      securer_status_clear (&st);
      spawn (true_argv, &st);
      cr_assert (st.exited && st.exit_code == 0, "round %d: /bin/true: exited %d code %d signal %d", round,
                 st.exited, st.exit_code, st.signal);
      securer_status_clear (&st);
      /* The first spawn stored its program; the later ones read that very
       * file (a regenerated one would have been renamed over it). */
      char file[512];
      cache_file (file, sizeof file);
      struct stat now;
      cr_assert_eq (stat (file, &now), 0);
      if (round == 0)
        {
          first = open (file, O_RDONLY | O_CLOEXEC);
          cr_assert_geq (first, 0, "%s: %s", file, strerror (errno));
          cr_assert_eq (fstat (first, &first_st), 0);
          cr_assert (first_st.st_dev == now.st_dev && first_st.st_ino == now.st_ino, "%s changed", file);
        }
      else
        cr_assert (now.st_dev == first_st.st_dev && now.st_ino == first_st.st_ino,
                   "the program was generated again");
    }
  close (first);
}

/* The kernel keeps "allow" per syscall in its action cache only when the
 * filter's verdict for that number depends on nothing but arch and nr
 * (kernel/seccomp.c seccomp_is_const_allow).  Every syscall the policy
 * allows unconditionally must qualify, else each such call runs the whole
 * program. */
Test (seccomp_cache, unconditional_allows_are_cacheable_by_the_kernel)
{
  bool cached;
  struct securer_seccomp_prog *prog = build (SECURER_SECCOMP_REPORT_DENIALS, &cached);
  const struct sock_filter *insns;
  unsigned n;
  unsigned long flags;
  cr_assert_eq (securer_seccomp_bpf (prog, &insns, &n, &flags), 0);
  uint32_t arch = (uint32_t) seccomp_arch_native ();
  /* Syscalls with an argument condition (the compiler's own hand-over
   * exceptions on sendmsg and recvmsg included) must look at arguments. */
  bool conditional[1024] = { false };
  conditional[seccomp_syscall_resolve_name ("sendmsg")] = true;
  conditional[seccomp_syscall_resolve_name ("recvmsg")] = true;
  for (size_t i = 0; i < pol->seccomp.n_rules; i++)
    {
      int nr = seccomp_syscall_resolve_name (pol->seccomp.rules[i].name);
      if (nr >= 0 && nr < 1024 && pol->seccomp.rules[i].n_conds > 0)
        conditional[nr] = true;
    }
  static const uint64_t zero[6];
  unsigned allowed = 0;
  for (int nr = 0; nr < 1024; nr++)
    {
      bool always = !conditional[nr] && securer_seccomp_eval (prog, arch, nr, zero).type == SECURER_ACT_ALLOW;
      bool cacheable = securer_bpf_const_allow (insns, n, arch, nr);
      if (always)
        allowed++;
      cr_expect (!always || cacheable, "syscall %d is always allowed but not cacheable", nr);
      cr_expect (!cacheable || always, "syscall %d is cacheable as allowed but the policy says otherwise", nr);
    }
  cr_assert_gt (allowed, 100);
  /* getpid (39 on x86_64) in particular */
  cr_assert (securer_bpf_const_allow (insns, n, arch, (int) SYS_getpid));
  securer_seccomp_free (prog);
}
