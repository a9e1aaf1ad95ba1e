/* securer run — placeholder until the subcommand lands. */
#include <config.h>

#include "cli.h"

void
cmd_run_help (FILE *out)
{
  fprintf (out, "Usage: securer run ...\n\nNot available in this build yet.\n");
}

int
cmd_run (int argc, char **argv)
{
  fprintf (stderr, "securer: 'run' is not available in this build yet\n");
  return 2;
}
