/* try-syscall NAME [ARG...] — performs one syscall and prints what happened
 * as one JSON line:
 *   {"syscall":"ioctl","nr":16,"ret":-1,"errno":1,"errno_name":"EPERM"}
 *
 * Meant to run inside a sandbox under test.  Arguments are numbers (any
 * base strtoull accepts; a leading '-' is sign-extended), symbolic constants
 * (TIOCSTI, AF_UNIX, O_RDONLY, AT_FDCWD ...), "A|B" for OR-ed values (e.g.
 * "TIOCSTI|0x100000000" to test the high-bits trick), "s:TEXT" for a pointer
 * to TEXT, or "buf" for a pointer to a zeroed 4096-byte buffer.
 * A seccomp kill shows up as the process dying of SIGSYS; a trap is reported
 * as {"trap":true,...} by a SIGSYS handler.  Exit status 0 once the syscall
 * returned, 2 on usage errors. */
#include <config.h>

#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seccomp/seccomp.h"

static char buffer[4096];

static int
parse_one (const char *s, uint64_t *out)
{
  if (strncmp (s, "s:", 2) == 0)
    {
      *out = (uint64_t) (uintptr_t) (s + 2);
      return 0;
    }
  if (strcmp (s, "buf") == 0)
    {
      *out = (uint64_t) (uintptr_t) buffer;
      return 0;
    }
  if (securer_const_lookup (s, out) == 0)
    return 0;
  char *end;
  errno = 0;
  if (s[0] == '-')
    *out = (uint64_t) strtoll (s, &end, 0);
  else
    *out = strtoull (s, &end, 0);
  return errno != 0 || end == s || *end != '\0' ? -1 : 0;
}

static int
parse_arg (const char *s, uint64_t *out)
{
  if (strncmp (s, "s:", 2) == 0)
    return parse_one (s, out);
  char *copy = strdup (s), *save = NULL;
  if (copy == NULL)
    return -1;
  *out = 0;
  for (char *tok = strtok_r (copy, "|", &save); tok; tok = strtok_r (NULL, "|", &save))
    {
      uint64_t v;
      if (parse_one (tok, &v) < 0)
        {
          free (copy);
          return -1;
        }
      *out |= v;
    }
  free (copy);
  return 0;
}

static const char *trap_name;

static void
on_sigsys (int sig, siginfo_t *info, void *uc)
{
  char line[160];
  int n = snprintf (line, sizeof line, "{\"syscall\":\"%s\",\"nr\":%d,\"trap\":true}\n", trap_name,
                    info->si_syscall);
  if (n > 0)
    (void) !write (STDOUT_FILENO, line, (size_t) n);
  _exit (0);
}

int
main (int argc, char **argv)
{
  if (argc < 2 || argc > 8)
    {
      fprintf (stderr, "usage: try-syscall NAME [ARG...] (at most 6 arguments)\n");
      return 2;
    }
  int nr = seccomp_syscall_resolve_name (argv[1]);
  if (nr < 0)
    {
      fprintf (stderr, "try-syscall: unknown syscall '%s' on this arch\n", argv[1]);
      return 2;
    }
  uint64_t a[6] = { 0 };
  for (int i = 2; i < argc; i++)
    if (parse_arg (argv[i], &a[i - 2]) < 0)
      {
        fprintf (stderr, "try-syscall: cannot parse argument '%s'\n", argv[i]);
        return 2;
      }

  trap_name = argv[1];
  struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
  sigaction (SIGSYS, &sa, NULL);

  fflush (stdout);
  errno = 0;
  long ret = syscall (nr, a[0], a[1], a[2], a[3], a[4], a[5]);
  int e = ret < 0 ? errno : 0;
  const char *en = e ? securer_errno_name (e) : NULL;
  printf ("{\"syscall\":\"%s\",\"nr\":%d,\"ret\":%ld,\"errno\":%d,\"errno_name\":%s%s%s}\n", argv[1], nr,
          ret, e, en ? "\"" : "", en ? en : "null", en ? "\"" : "");
  return 0;
}
