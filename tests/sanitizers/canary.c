/* Proof that a sanitizer build's instrumentation is live: make
 * check-sanitizers runs this expecting it to be stopped by a report.
 *   canary heap   writes one byte past a heap block (AddressSanitizer)
 *   canary leak   exits with a block no longer referenced (LeakSanitizer)
 *   canary ubsan  overflows a signed int (UndefinedBehaviorSanitizer)
 * Each exits 0 when the fault goes unnoticed, which the check counts as
 * a failure. */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char **argv)
{
  /* volatile: the compiler may neither see the fault nor fold it away. */
  volatile size_t n = 16;
  if (argc == 2 && strcmp (argv[1], "heap") == 0)
    {
      char *p = malloc (n);
      if (p == NULL)
        return 2;
      memset (p, 'x', n);
      volatile size_t past = n;
      p[past] = '\0';
      printf ("%c\n", p[0]);
      free (p);
      return 0;
    }
  if (argc == 2 && strcmp (argv[1], "leak") == 0)
    {
      void *volatile p = malloc (n);
      if (p == NULL)
        return 2;
      p = NULL;
      return 0;
    }
  if (argc == 2 && strcmp (argv[1], "ubsan") == 0)
    {
      volatile int big = INT_MAX;
      int sum = big + (int) n;
      printf ("%d\n", sum);
      return 0;
    }
  fprintf (stderr, "usage: canary heap|leak|ubsan\n");
  return 2;
}
