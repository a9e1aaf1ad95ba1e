/* A library caller with other threads: clone3 copies the caller's memory,
 * with whatever locks its other threads held at that instant, and runs no
 * atfork handlers.  A child that then allocated (or forked through glibc,
 * which takes the malloc locks) could wait forever on a lock nobody in its
 * copy will release.  The spawns below run while other threads hold the
 * allocator's lock most of the time; a hang fails through the timeout. */
#include <config.h>

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>

#include <criterion/criterion.h>

#include "error-fixed.h"
#include "run-util.h"

#ifndef SECURER_SANITIZERS
#define SPAWNS 2000
#else
/* A spawn costs several times as much under the sanitizers (2000 took 12
 * minutes on a loaded two-core machine, near the suite's timeout): fewer,
 * each still made while the other threads hold the allocator's locks. */
#define SPAWNS 500
#endif
#define CHURNERS 2

static atomic_bool stop;

static void *
churn (void *arg)
{
  unsigned seed = (unsigned) (uintptr_t) arg;
  void *slot[64] = { 0 };
  while (!atomic_load_explicit (&stop, memory_order_relaxed))
    {
      /* Sizes above the per-thread cache's limit: every call goes to the
       * arena and takes its lock. */
      unsigned i = (seed = seed * 1103515245u + 12345u) % 64;
      free (slot[i]);
      slot[i] = malloc (2048 + (seed >> 8) % 65536);
    }
  for (unsigned i = 0; i < 64; i++)
    free (slot[i]);
  return NULL;
}

/* 2000 spawns take 1-4 minutes on a loaded two-core machine; a child
 * stuck on a lock would block the spawn (and the test) for good. */
TestSuite (threaded, .timeout = 900);

Test (threaded, spawns_while_other_threads_allocate)
{
  /* glibc gives each thread an arena of its own while there are few
   * threads, which hides the hazard; a process with more threads than
   * arenas shares them.  One arena for all makes that the rule here. */
#ifndef SECURER_SANITIZERS
  cr_assert_eq (mallopt (M_ARENA_MAX, 1), 1);
#else
  /* The sanitizer's allocator stands in for glibc's and has no arenas to
   * set (mallopt fails); its locks are shared by every thread anyway, so
   * the hazard is there all the same. */
#endif

  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/policies/minimal.policy", SECURER_ABS_SRCDIR);
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_file (path, &p, NULL, &err), 0, "%s", securer_error_message (err));

  pthread_t t[CHURNERS];
  for (uintptr_t i = 0; i < CHURNERS; i++)
    cr_assert_eq (pthread_create (&t[i], NULL, churn, (void *) (i + 1)), 0);

  char *argv[] = { (char *) "/bin/true", NULL };
  int failures = 0;
  char first[512] = "";
  for (int i = 0; i < SPAWNS; i++)
    {
      struct securer_spawn_opts o = opts_for (p, argv);
      struct securer_sandbox *sb = NULL;
      struct securer_status st;
      memset (&st, 0, sizeof st);
      if (securer_sandbox_spawn (&o, &sb, &err) < 0 || securer_sandbox_wait (sb, &st, &err) < 0
          || !st.exited || st.exit_code != 0)
        {
          if (failures++ == 0)
            snprintf (first, sizeof first, "spawn %d: %s (exited %d, code %d, signal %d)", i,
                      err ? securer_error_message (err) : "", (int) st.exited, st.exit_code, st.signal);
          securer_error_free (&err);
        }
      securer_status_clear (&st);
      securer_sandbox_free (sb);
    }

  atomic_store (&stop, true);
  for (int i = 0; i < CHURNERS; i++)
    pthread_join (t[i], NULL);
  securer_policy_free (p);
  cr_assert_eq (failures, 0, "%d of %d spawns failed; first: %s", failures, SPAWNS, first);
}

/* The child's errors: formatted into static storage, composed outermost
 * first as on the heap, errno name and description for operators only. */
Test (threaded, child_errors_use_fixed_storage)
{
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      securer_error_use_fixed_storage ();
      securer_err_t err = NULL;
      securer_error_set (&err, ENOENT, "open %s", "/usr/lib/R");
      securer_error_prefix (&err, "bind %s on %s", "/usr", "/usr");
      securer_error_set_status (&err, 125);
      bool ok = strcmp (securer_error_message (err),
                        "bind /usr on /usr: open /usr/lib/R: ENOENT (No such file or directory)") == 0
                && strcmp (securer_error_text (err), "bind /usr on /usr: open /usr/lib/R") == 0
                && securer_error_errno (err) == ENOENT && err->status == 125;
      securer_error_free (&err);
      ok = ok && err == NULL;
      securer_error_set (&err, 0, "no errno");
      ok = ok && strcmp (securer_error_message (err), "no errno") == 0
           && strcmp (securer_error_text (err), "no errno") == 0;
      _exit (ok ? 0 : 1);
    }
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0, "fixed-storage messages differ (status %#x)", st);
}
