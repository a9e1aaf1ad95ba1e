/* Shared by the session and serve tests: what the host process costs. */
#ifndef SECURER_TEST_HOST_UTIL_H
#define SECURER_TEST_HOST_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>

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

#endif
