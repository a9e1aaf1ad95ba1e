/* securer exec — placeholder until the subcommand lands. */
#include <config.h>

#include "cli.h"

void
cmd_exec_help (FILE *out)
{
  fprintf (out, "Usage: securer exec ...\n\nNot available in this build yet.\n");
}

int
cmd_exec (int argc, char **argv)
{
  fprintf (stderr, "securer: 'exec' is not available in this build yet\n");
  return 2;
}
