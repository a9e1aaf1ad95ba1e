/* securer probe — placeholder until the subcommand lands. */
#include <config.h>

#include "cli.h"

void
cmd_probe_help (FILE *out)
{
  fprintf (out, "Usage: securer probe ...\n\nNot available in this build yet.\n");
}

int
cmd_probe (int argc, char **argv)
{
  fprintf (stderr, "securer: 'probe' is not available in this build yet\n");
  return 2;
}
