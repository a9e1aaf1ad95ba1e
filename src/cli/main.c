/* securer — command-line entry point: dispatches to one subcommand. */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct cli_command commands[] = {
  { "run", "run a command inside the sandbox a policy describes", cmd_run, cmd_run_help },
  { "exec", "run R code once in a sandboxed session and print its value", cmd_exec, cmd_exec_help },
  { "serve", "drive sandboxed R sessions over a JSON-lines protocol", cmd_serve, cmd_serve_help },
  { "policy", "check, show, compile, learn and import policies", cmd_policy, cmd_policy_help },
  { "probe", "report what this kernel can enforce", cmd_probe, cmd_probe_help },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void
usage (FILE *out)
{
  fprintf (out,
           "Usage: securer COMMAND [OPTIONS] [ARGS...]\n"
           "\n"
           "Run untrusted code under a policy that one file describes.\n"
           "\n"
           "Commands:\n");
  for (size_t i = 0; i < N_COMMANDS; i++)
    fprintf (out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf (out,
           "  %-8s %s\n"
           "\n"
           "Options:\n"
           "  -h, --help     show this help\n"
           "  -V, --version  show the version\n"
           "\n"
           "Run 'securer help COMMAND' or 'securer COMMAND --help' for a command's options.\n"
           "See securer(1) and securer-policy(5).\n",
           "help", "show help for a command");
}

static const struct cli_command *
find_command (const char *name)
{
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (strcmp (commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

void
cli_report (securer_err_t *err)
{
  if (err != NULL && *err != NULL)
    fprintf (stderr, "securer: %s\n", securer_error_message (*err));
  securer_error_free (err);
}

int
cli_start_option (const char *cmd, const char *arg, enum securer_session_start *start)
{
  enum securer_session_start want;
  if (strcmp (arg, "--cold") == 0)
    want = SECURER_SESSION_START_COLD;
  else if (strcmp (arg, "--template") == 0)
    want = SECURER_SESSION_START_TEMPLATE;
  else
    return 0;
  if (*start != SECURER_SESSION_START_POLICY && *start != want)
    {
      fprintf (stderr, "securer %s: give at most one of --cold and --template\n", cmd);
      return -1;
    }
  *start = want;
  return 1;
}

int
cli_wants_help (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--") == 0)
        return 0;
      if (strcmp (argv[i], "-h") == 0 || strcmp (argv[i], "--help") == 0)
        return 1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  /* Every command's sandboxes have their pid 1 as this process's child,
   * waited for with wait4: a SIGCHLD ignored by whoever started securer
   * (an exec keeps it) would have the kernel reap them unseen. */
  signal (SIGCHLD, SIG_DFL);
  if (argc < 2)
    {
      usage (stderr);
      return 2;
    }
  const char *cmd = argv[1];
  if (strcmp (cmd, "-h") == 0 || strcmp (cmd, "--help") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (cmd, "-V") == 0 || strcmp (cmd, "--version") == 0)
    {
      printf ("securer %s\n", securer_version ());
      return 0;
    }
  if (strcmp (cmd, "help") == 0)
    {
      if (argc < 3)
        {
          usage (stdout);
          return 0;
        }
      const struct cli_command *c = find_command (argv[2]);
      if (c == NULL)
        {
          fprintf (stderr, "securer: unknown command '%s'; run 'securer --help'\n", argv[2]);
          return 2;
        }
      /* `securer help policy SUB` is `securer policy SUB --help`. */
      if (strcmp (c->name, "policy") == 0 && argc > 3)
        {
          char *sub[] = { argv[2], argv[3], (char *) "--help", NULL };
          return c->run (3, sub);
        }
      c->help (stdout);
      return 0;
    }
  const struct cli_command *c = find_command (cmd);
  if (c == NULL)
    {
      fprintf (stderr, "securer: unknown command '%s'; run 'securer --help'\n", cmd);
      return 2;
    }
  /* `policy` has subcommands, each with its own --help. */
  if (cli_wants_help (argc - 1, argv + 1) && !(strcmp (c->name, "policy") == 0 && argc > 2 && argv[2][0] != '-'))
    {
      c->help (stdout);
      return 0;
    }
  return c->run (argc - 1, argv + 1);
}
