/* W^X under the shipped r policy: tests/helpers/native-probe, run by
 * `securer run` under r.policy plus a read-only mount of the helpers and an
 * exec entry for the probe (everything else is r.policy's own), tries every
 * way native code has to make memory or a file it wrote executable, and
 * the test asserts the errno of the layer that refuses; positive controls
 * show that what the loader needs still works.  R itself is then run under
 * the unmodified r.policy: packages' compiled code loads and runs. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "securer/policy.h"

#define R_BIN "/usr/lib/R/bin/exec/R"
#define PROBE_DIR "/opt/securer-test"
#define PROBE PROBE_DIR "/native-probe"

static char r_policy[PATH_MAX];
static char t_policy[PATH_MAX];
static char work[64];

struct run {
  int status;        /* exit code, or 128 + signal */
  char out[65536];
  char err[65536];
};

static const char *
env_or (const char *name, const char *dflt)
{
  const char *v = getenv (name);
  return v && *v ? v : dflt;
}

static void
setup (void)
{
  const char *src = env_or ("SECURER_SRCDIR", SECURER_ABS_SRCDIR);
  const char *build = env_or ("SECURER_BUILDDIR", SECURER_ABS_BUILDDIR);
  snprintf (r_policy, sizeof r_policy, "%s/policies/r.policy", src);
  snprintf (work, sizeof work, "/var/tmp/securer-wx-XXXXXX");
  cr_assert_not_null (mkdtemp (work));
  snprintf (t_policy, sizeof t_policy, "%s/test.policy", work);
  FILE *f = fopen (t_policy, "w");
  cr_assert_not_null (f);
  fprintf (f,
           "include \"%s\"\n"
           "mount ro %s/tests/helpers %s\n"
           "exec %s\n",
           r_policy, build, PROBE_DIR, PROBE);
  cr_assert_eq (fclose (f), 0);
}

static void
teardown (void)
{
  if (work[0] == '\0')
    return;
  char p[PATH_MAX];
  snprintf (p, sizeof p, "%s/test.policy", work);
  unlink (p);
  snprintf (p, sizeof p, "%s/out", work);
  unlink (p);
  snprintf (p, sizeof p, "%s/err", work);
  unlink (p);
  rmdir (work);
}

static void
slurp (const char *path, char *buf, size_t cap)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  cr_assert_geq (fd, 0, "%s: %s", path, strerror (errno));
  size_t len = 0;
  ssize_t n;
  while (len < cap - 1 && (n = read (fd, buf + len, cap - 1 - len)) > 0)
    len += (size_t) n;
  buf[len] = '\0';
  close (fd);
  unlink (path);
}

/* securer run --policy POLICY -- CMD..., stdout and stderr to files (no
 * pipe to fill up while the test waits). */
static void
run_cmd (const char *policy, const char *const *cmd, struct run *r)
{
  const char *bin = env_or ("SECURER_BIN", SECURER_ABS_BUILDDIR "/securer");
  const char *argv[64];
  int n = 0;
  argv[n++] = bin;
  argv[n++] = "run";
  argv[n++] = "--policy";
  argv[n++] = policy;
  argv[n++] = "--";
  for (int i = 0; cmd[i] != NULL && n < 63; i++)
    argv[n++] = cmd[i];
  argv[n] = NULL;
  char out[PATH_MAX], err[PATH_MAX];
  snprintf (out, sizeof out, "%s/out", work);
  snprintf (err, sizeof err, "%s/err", work);
  fflush (NULL);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      int in = open ("/dev/null", O_RDONLY);
      int o = open (out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int e = open (err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (in < 0 || o < 0 || e < 0)
        _exit (127);
      dup2 (in, 0);
      dup2 (o, 1);
      dup2 (e, 2);
      const char *envp[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8", NULL };
      execve (bin, (char **) argv, (char **) envp);
      _exit (127);
    }
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  r->status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
  slurp (out, r->out, sizeof r->out);
  slurp (err, r->err, sizeof r->err);
}

static void
probe (struct run *r, const char *const *probes)
{
  const char *cmd[48];
  int n = 0;
  cmd[n++] = PROBE;
  for (int i = 0; probes[i] != NULL && n < 47; i++)
    cmd[n++] = probes[i];
  cmd[n] = NULL;
  run_cmd (t_policy, cmd, r);
}

static void
run_r (const char *code, struct run *r)
{
  const char *cmd[] = { R_BIN, "--vanilla", "--slave", "-e", code, NULL };
  run_cmd (r_policy, cmd, r);
}

#define ASSERT_HAS(r, needle)                                                             \
  cr_assert (strstr ((r)->out, (needle)) != NULL,                                         \
             "expected \"%s\"\n--- status %d\n--- stdout:\n%s\n--- stderr:\n%s", (needle),  \
             (r)->status, (r)->out, (r)->err)

/* Runs the probes in one sandbox and asserts every expected line. */
static void
expect (const char *const *probes, const char *const *lines)
{
  struct run r = { 0 };
  probe (&r, probes);
  cr_assert_eq (r.status, 0, "%s", r.err);
  for (int i = 0; lines[i] != NULL; i++)
    ASSERT_HAS (&r, lines[i]);
  cr_assert (strstr (r.out, "executed") == NULL, "a written or fd-only program ran:\n%s", r.out);
}

#define PROBES(...) ((const char *const[]) { __VA_ARGS__, NULL })

TestSuite (wx, .init = setup, .fini = teardown, .timeout = 120);

/* ---- refused ---------------------------------------------------------- */

Test (wx, no_writable_and_executable_mapping)
{
  /* The filter's answer: the kernel alone would allow all three (a private
   * copy of a read-only file may be written). */
  expect (PROBES ("mmap-wx", "mmap-wx-high", "mmap-file-wx"),
          PROBES ("mmap-wx = EPERM\n", "mmap-wx-high = EPERM\n", "mmap-file-wx = EPERM\n"));
}

Test (wx, no_anonymous_executable_mapping)
{
  expect (PROBES ("mmap-anon-x", "mmap-shared-anon-x"),
          PROBES ("mmap-anon-x = EPERM\n", "mmap-shared-anon-x = EPERM\n"));
}

Test (wx, no_executable_mapping_of_a_writable_file)
{
  /* The mounts' noexec flag: mmap(PROT_EXEC) of a file there is EPERM. */
  expect (PROBES ("mmap-devzero-x", "mmap-tmp-x", "mmap-tmp-x:/dev/shm"),
          PROBES ("mmap-devzero-x = EPERM\n", "mmap-tmp-x = EPERM /tmp/native-probe-copy\n",
                  "mmap-tmp-x = EPERM /dev/shm/native-probe-copy\n"));
}

Test (wx, no_mprotect_to_executable)
{
  expect (PROBES ("mprotect-x", "mprotect-rwx", "pkey_mprotect-x", "shmat-mprotect-x"),
          PROBES ("mprotect-x = EACCES\n", "mprotect-rwx = EACCES\n", "pkey_mprotect-x = EACCES\n",
                  "shmat-mprotect-x = EACCES\n"));
}

Test (wx, no_executable_sysv_shm)
{
  expect (PROBES ("shmat-x"), PROBES ("shmat-x = EACCES\n"));
}

Test (wx, no_memfd)
{
  /* MFD_NOEXEC_SEAL would stop execve only: mmap(PROT_EXEC) of a sealed
   * memfd still runs what was written into it, so none at all. */
  expect (PROBES ("memfd", "memfd-noexec"), PROBES ("memfd = ENOSYS\n", "memfd-noexec = ENOSYS\n"));
}

Test (wx, no_exec_of_a_descriptor)
{
  /* The probe's own file is on the exec list: only the filter refuses. */
  expect (PROBES ("execveat-empty"), PROBES ("execveat-empty = EACCES\n"));
}

Test (wx, no_exec_of_a_written_file)
{
  expect (PROBES ("exec-tmp"), PROBES ("exec-tmp = EACCES\n"));
}

Test (wx, proc_self_mem_not_writable)
{
  /* Writes through /proc/self/mem ignore page protections; Landlock grants
   * only read access under /proc. */
  expect (PROBES ("proc-self-mem"), PROBES ("proc-self-mem = EACCES\n"));
}

Test (wx, no_library_with_an_executable_stack)
{
  /* The loader makes the stack executable for such a library with
   * mprotect(PROT_EXEC), refused: dlopen fails and says why. */
  expect (PROBES ("dlopen:" PROBE_DIR "/.libs/libexecstack.so"),
          PROBES ("dlopen = EFAIL " PROBE_DIR "/.libs/libexecstack.so: cannot enable executable "
                  "stack as shared object requires: Permission denied\n"));
}

/* ---- allowed: what the loader and ordinary programs need --------------- */

Test (wx, loader_mappings_still_work)
{
  expect (PROBES ("mmap-file-rx", "mmap-anon-rw", "mprotect-r", "mprotect-drop-x", "shmat-rw",
                  "dlopen:libpcre2-8.so.0"),
          PROBES ("mmap-file-rx = ok\n", "mmap-anon-rw = ok\n", "mprotect-r = ok\n",
                  "mprotect-drop-x = ok\n", "shmat-rw = ok\n", "dlopen = ok 0\n"));
}

/* ---- per-user counters ------------------------------------------------- */

Test (wx, no_inotify)
{
  expect (PROBES ("inotify_init", "inotify_init1"),
          PROBES ("inotify_init = ENOSYS\n", "inotify_init1 = ENOSYS\n"));
}

Test (wx, queued_signals_are_limited)
{
  struct securer_policy *pol = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_file (r_policy, &pol, NULL, &err), 0, "%s",
                securer_error_message (err));
  const struct securer_rlimit *l = &pol->limits.rlimit[SECURER_RLIMIT_SIGPENDING];
  cr_assert (l->set, "r.policy sets no sigpending limit");
  char want[64];
  snprintf (want, sizeof want, "sigqueue = EAGAIN after %llu\n", (unsigned long long) l->soft);
  securer_policy_free (pol);
  expect (PROBES ("sigqueue"), PROBES (want));
}

/* ---- R under the unmodified r.policy ----------------------------------- */

Test (wx, r_packages_compiled_code_loads_and_runs)
{
  if (access (R_BIN, X_OK) != 0)
    cr_skip_test ("R is not installed (%s)", R_BIN);
  struct run r = { 0 };
  /* dyn.load of a package's shared object from its read-only, executable
   * mount, .Call into it, and packages whose namespaces load compiled code. */
  run_r ("so <- file.path(R.home('library'), 'splines', 'libs', 'splines.so');"
         " d <- dyn.load(so); cat('LOADED:', inherits(d, 'DLLInfo'), '\\n');"
         " b <- .Call(getNativeSymbolInfo('spline_basis', d), as.numeric(1:10), 4L, c(4.5, 5), 0L);"
         " cat('CALL:', colSums(b), '\\n');"
         " cat('TSCONV:', .Call(stats:::C_TSconv, c(1, 2), c(1, 3)), '\\n');"
         " library(parallel); cat('MCLAPPLY:', unlist(mclapply(1:4, function(i) i * i, mc.cores = 2)), '\\n');"
         " cat('LM:', round(coef(lm(y ~ x, data.frame(x = 1:10, y = 2 * (1:10) + 1))), 6), '\\n');"
         " library(tools); library(grid); library(compiler); cat('LIBS: ok\\n')",
         &r);
  cr_assert_eq (r.status, 0, "%s", r.err);
  ASSERT_HAS (&r, "LOADED: TRUE \n");
  ASSERT_HAS (&r, "CALL: 1 1 \n");
  ASSERT_HAS (&r, "TSCONV: 1 5 6 \n");
  ASSERT_HAS (&r, "MCLAPPLY: 1 4 9 16 \n");
  ASSERT_HAS (&r, "LM: 1 2 \n");
  ASSERT_HAS (&r, "LIBS: ok\n");
}
