/* ll-exec: applies the Landlock step alone, from a policy given on the
 * command line, then executes a command.  Lets tests (and people) see how
 * a program such as R behaves under exactly the rules securer derives,
 * without namespaces.
 *
 *   ll-exec [-r RO]... [-w RW]... [-x EXEC]... [-t TMPFS]... [-d DEV] [-p PROC]
 *           [-m required|best-effort|off] [-a ABI] [-s signal|unix]... [-c PORT]...
 *           [-b PORT]... [-H] [-v] -- CMD [ARG]...
 *
 * -w and -t paths are treated as noexec mounts; -H means network host
 * (no TCP handling unless ports are listed).  Exit 125 when the rules
 * cannot be applied, 126/127 when CMD cannot be executed. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux/landlock-internal.h"

#define MAX_ITEMS 64

int
main (int argc, char **argv)
{
  static struct securer_mount mounts[MAX_ITEMS];
  static char *exec[MAX_ITEMS];
  static uint16_t bind[MAX_ITEMS], conn[MAX_ITEMS];
  struct securer_policy p;
  memset (&p, 0, sizeof p);
  p.mounts = mounts;
  p.exec = exec;
  p.network = SECURER_NET_NONE;
  p.landlock.mode = SECURER_ENFORCE_REQUIRED;
  p.landlock.tcp_bind = bind;
  p.landlock.tcp_connect = conn;
  int abi = -1;
  bool verbose = false;

  int c;
  while ((c = getopt (argc, argv, "+r:w:x:t:d:p:m:a:s:c:b:Hv")) != -1)
    {
      if (p.n_mounts >= MAX_ITEMS || p.n_exec >= MAX_ITEMS || p.landlock.n_tcp_bind >= MAX_ITEMS
          || p.landlock.n_tcp_connect >= MAX_ITEMS)
        {
          fprintf (stderr, "ll-exec: too many items\n");
          return 125;
        }
      struct securer_mount *m = &mounts[p.n_mounts];
      switch (c)
        {
        case 'r':
          *m = (struct securer_mount){ .type = SECURER_MOUNT_RO, .source = optarg, .dest = optarg };
          p.n_mounts++;
          break;
        case 'w':
        case 't':
          *m = (struct securer_mount){ .type = c == 'w' ? SECURER_MOUNT_RW : SECURER_MOUNT_TMPFS,
                                       .source = optarg, .dest = optarg, .noexec = true };
          p.n_mounts++;
          break;
        case 'd':
        case 'p':
          *m = (struct securer_mount){ .type = c == 'd' ? SECURER_MOUNT_DEV : SECURER_MOUNT_PROC,
                                       .dest = optarg };
          p.n_mounts++;
          break;
        case 'x':
          exec[p.n_exec++] = optarg;
          p.exec_restricted = true;
          break;
        case 'm':
          if (strcmp (optarg, "required") == 0)
            p.landlock.mode = SECURER_ENFORCE_REQUIRED;
          else if (strcmp (optarg, "best-effort") == 0)
            p.landlock.mode = SECURER_ENFORCE_BEST_EFFORT;
          else if (strcmp (optarg, "off") == 0)
            p.landlock.mode = SECURER_ENFORCE_OFF;
          else
            {
              fprintf (stderr, "ll-exec: unknown mode '%s'\n", optarg);
              return 125;
            }
          break;
        case 'a':
          abi = atoi (optarg);
          break;
        case 's':
          if (strcmp (optarg, "signal") == 0)
            p.landlock.scope_signal = true;
          else if (strcmp (optarg, "unix") == 0)
            p.landlock.scope_abstract_unix = true;
          else
            {
              fprintf (stderr, "ll-exec: unknown scope '%s'\n", optarg);
              return 125;
            }
          break;
        case 'c':
          conn[p.landlock.n_tcp_connect++] = (uint16_t) atoi (optarg);
          break;
        case 'b':
          bind[p.landlock.n_tcp_bind++] = (uint16_t) atoi (optarg);
          break;
        case 'H':
          p.network = SECURER_NET_HOST;
          break;
        case 'v':
          verbose = true;
          break;
        default:
          return 125;
        }
    }
  if (optind >= argc)
    {
      fprintf (stderr, "ll-exec: no command\n");
      return 125;
    }

  struct securer_landlock_report rep = { 0 };
  securer_err_t err = NULL;
  int r = abi < 0 ? securer_landlock_apply (&p, &rep, &err)
                  : securer_landlock_apply_abi (&p, abi, &rep, &err);
  if (r < 0)
    {
      fprintf (stderr, "ll-exec: landlock: %s\n", securer_error_message (err));
      securer_error_free (&err);
      return 125;
    }
  if (verbose && rep.summary)
    fprintf (stderr, "ll-exec: %s\n", rep.summary);
  securer_landlock_report_clear (&rep);

  execv (argv[optind], argv + optind);
  int e = errno;
  fprintf (stderr, "ll-exec: exec %s: %s\n", argv[optind], strerror (e));
  return e == ENOENT ? 127 : 126;
}
