/* securer policy — placeholder until the subcommand lands. */
#include <config.h>

#include "cli.h"

void
cmd_policy_help (FILE *out)
{
  fprintf (out, "Usage: securer policy ...\n\nNot available in this build yet.\n");
}

int
cmd_policy (int argc, char **argv)
{
  fprintf (stderr, "securer: 'policy' is not available in this build yet\n");
  return 2;
}
