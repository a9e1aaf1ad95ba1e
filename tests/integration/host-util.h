/* Shared by the session and serve tests: what the host process costs. */
#ifndef SECURER_TEST_HOST_UTIL_H
#define SECURER_TEST_HOST_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

#endif
