/* Shared by the session and serve tests: what the host process costs. */
#ifndef SECURER_TEST_HOST_UTIL_H
#define SECURER_TEST_HOST_UTIL_H

#include <criterion/criterion.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Peak resident memory (VmHWM) of process `pid` ("self" for this one), in
 * KiB. */
static inline long
vm_hwm_kb (const char *pid)
{
  char path[64], line[256];
  snprintf (path, sizeof path, "/proc/%s/status", pid);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f);
  long kb = -1;
  while (fgets (line, sizeof line, f) != NULL)
    if (sscanf (line, "VmHWM: %ld kB", &kb) == 1)
      break;
  fclose (f);
  cr_assert_gt (kb, 0);
  return kb;
}

/* A sanitizer build keeps freed memory in quarantine (256 MiB by default),
 * which a process that churns through output counts as resident: a small
 * quarantine keeps the peak about what the code itself holds.  No effect
 * on an ordinary build. */
static inline void
small_asan_quarantine (void)
{
  const char *cur = getenv ("ASAN_OPTIONS");
  if (cur != NULL && strstr (cur, "quarantine_size_mb") != NULL)
    return;
  char buf[512];
  snprintf (buf, sizeof buf, "%s%squarantine_size_mb=8", cur ? cur : "", cur && *cur ? ":" : "");
  setenv ("ASAN_OPTIONS", buf, 1);
}

/* Whether this host gives the unprivileged user 65534 the cgroup limits
 * of a sandbox, as `securer probe` run as that user finds out by making
 * one: the oracle for tests of what happens without them.  Needs root. */
static inline bool
nobody_gets_cgroups (const char *securer)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      dup2 (p[1], 1);
      if (setgroups (0, NULL) < 0 || setresgid (65534, 65534, 65534) < 0
          || setresuid (65534, 65534, 65534) < 0)
        _exit (99);
      execl (securer, "securer", "probe", (char *) NULL);
      _exit (127);
    }
  close (p[1]);
  FILE *f = fdopen (p[0], "r");
  char line[1024];
  int found = -1;
  while (fgets (line, sizeof line, f) != NULL)
    if (strstr (line, "sandbox limits (memory, pids, cpu): ") != NULL)
      found = strstr (line, "): yes") != NULL;
  fclose (f);
  int st;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (found >= 0, "securer probe says nothing of the sandbox limits");
  return found == 1;
}

#endif
