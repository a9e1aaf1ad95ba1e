/* The payload's stdio as securer's own pipes, relayed to and from the
 * caller's descriptors, so the payload never holds a description of the
 * caller's (its flags, offset, terminal) and output shown on a terminal
 * passes through the terminal sanitiser. */
#ifndef SECURER_CLI_RELAY_H
#define SECURER_CLI_RELAY_H

#include <poll.h>
#include <stdbool.h>

#include "securer.h"

struct cli_relay_opts {
  int in, out, err;      /* the caller's descriptors; -1 or closed: none */
  bool no_stdin;         /* the payload's stdin is at EOF; `in` is never read */
  bool raw;              /* bytes unchanged even to a terminal */
};

struct cli_relay;

/* fd[i] = i for each of 0, 1, 2 that is open, -1 for a closed one: to be
 * called before anything is opened, so that a closed std fd is not
 * mistaken for what takes its number later. */
void cli_relay_std_fds (int fd[3]);

/* Creates the pipes and opens securer's own descriptions of the caller's
 * terminals and pipes (see relay.c). */
int cli_relay_new (const struct cli_relay_opts *o, struct cli_relay **out, securer_err_t *err);

/* securer_sandbox_spawn with the payload's stdio on r's pipes (r NULL: on
 * whatever o names); securer's copies of the payload's ends are closed
 * afterwards. */
int cli_relay_spawn (struct cli_relay *r, struct securer_spawn_opts *o, struct securer_sandbox **sb,
                     securer_err_t *err);

/* Most descriptors cli_relay_poll_fill uses. */
#define CLI_RELAY_MAX_POLLFDS 6

/* Fills pf with what the relay waits for; returns how many, and sets
 * *now when the relay has work it can do without waiting. */
unsigned cli_relay_poll_fill (struct cli_relay *r, struct pollfd *pf, bool *now);

/* Moves what can be moved, after poll() filled pf[0..n-1]'s revents. */
void cli_relay_pump (struct cli_relay *r, const struct pollfd *pf, unsigned n);

/* The sandbox has ended: the payload's stdin is closed, and its output is
 * read only up to what is in the pipes now.  With keep_waiting false (the
 * run was killed), output the caller does not take at once is dropped. */
void cli_relay_sandbox_ended (struct cli_relay *r, bool keep_waiting);

/* True while output remains to be read or written. */
bool cli_relay_busy (const struct cli_relay *r);

void cli_relay_free (struct cli_relay *r);

#endif
