/* securer CLI: one file per subcommand, dispatched from main.c. */
#ifndef SECURER_CLI_H
#define SECURER_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "securer.h"
#include "securer/session.h"

struct cli_command {
  const char *name;
  const char *summary;                       /* one line for `securer --help` */
  int (*run) (int argc, char **argv);        /* argv[0] is the subcommand name */
  void (*help) (FILE *out);                  /* full help for `securer help NAME` / NAME --help */
};

int cmd_run (int argc, char **argv);
void cmd_run_help (FILE *out);
int cmd_probe (int argc, char **argv);
void cmd_probe_help (FILE *out);
int cmd_policy (int argc, char **argv);
void cmd_policy_help (FILE *out);
int cmd_exec (int argc, char **argv);
void cmd_exec_help (FILE *out);
int cmd_serve (int argc, char **argv);
void cmd_serve_help (FILE *out);

/* Prints "securer: <message>" for an error and frees it. */
void cli_report (securer_err_t *err);

/* --cold or --template (exec, serve): 1 when arg is one (sets *start), 0
 * when it is not, -1 (message printed) when the other one came before. */
int cli_start_option (const char *cmd, const char *arg, enum securer_session_start *start);

/* True when argv holds -h/--help before any "--". */
int cli_wants_help (int argc, char **argv);

/* Prints "securer CMD: <message>" and a pointer to CMD's --help on stderr;
 * returns status. */
int cli_usage (const char *cmd, int status, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* A positive number of seconds (fractions allowed) as milliseconds,
 * rounded up; -1 when s is not one. */
int cli_parse_timeout (const char *s, uint64_t *ms);

/* Finds and loads POLICY (a file or a NAME), printing every diagnostic on
 * stderr; NULL when it cannot be loaded. */
struct securer_policy *cli_load_policy (const char *arg);

struct cli_relay;

/* Runs the sandbox to completion (fills *st), passing each signal read
 * from sigfd (-1: none) on to it and moving the payload's stdio through
 * relay (may be NULL).  Once the sandbox has ended, the output left in the
 * pipes is written out; a signal read from sigfd then gives up on it. */
int cli_supervise (struct securer_sandbox *sb, int sigfd, struct cli_relay *relay,
                   struct securer_status *st, securer_err_t *err);



/* `securer policy` subcommands implemented in cmd_policy_seccomp.c. */
int cmd_policy_compile (int argc, char **argv);
int cmd_policy_import (int argc, char **argv);
int cmd_policy_learn (int argc, char **argv);
/* cmd_policy_test.c */
int cmd_policy_test (int argc, char **argv);
void cmd_policy_test_help (FILE *out);
/* cmd_policy_explain.c */
int cmd_policy_explain (int argc, char **argv);
void cmd_policy_explain_help (FILE *out);
/* cmd_policy_diff.c */
int cmd_policy_diff (int argc, char **argv);
void cmd_policy_diff_help (FILE *out);
#endif
