/* securer serve — placeholder until the subcommand lands. */
#include <config.h>

#include "cli.h"

void
cmd_serve_help (FILE *out)
{
  fprintf (out, "Usage: securer serve ...\n\nNot available in this build yet.\n");
}

int
cmd_serve (int argc, char **argv)
{
  fprintf (stderr, "securer: 'serve' is not available in this build yet\n");
  return 2;
}
