/* securer — error reporting shared by every module of libsecurer.
 *
 * A failing function returns a negative value and fills *err with the errno
 * it saw (0 when the failure is not a system error) and a message that says
 * what it was doing.  Callers up the stack add context with
 * securer_error_prefix() so the final message reads outermost-first, e.g.
 * "set up mounts: bind /usr on /usr: ENOENT (No such file or directory)".
 * The library never prints and never exits; the CLI decides what to do.
 */
#ifndef SECURER_ERROR_H
#define SECURER_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

struct securer_error {
  int errnum;    /* errno value, or 0 */
  int status;    /* suggested exit status for a CLI (0 = unspecified) */
  char *msg;     /* heap-allocated, never NULL once set */
  char *text;    /* msg without errno names and descriptions, or NULL */
};
typedef struct securer_error *securer_err_t;

/* Create an error (replacing none: *err must be NULL).  errnum may be 0.
 * When errnum != 0 its name and description are appended to the message.
 * Always returns -1 so callers can `return securer_error_set(...)`. */
int securer_error_set (securer_err_t *err, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Add context in front of an existing message: "<context>: <old message>".
 * A no-op when err or *err is NULL.  Returns -1. */
int securer_error_prefix (securer_err_t *err, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Set the suggested CLI exit status on an existing error. */
void securer_error_set_status (securer_err_t *err, int status);

const char *securer_error_message (const securer_err_t err);
/* The message as users and language models read it (serve replies, result
 * errors): the same context, without the errno name and description that
 * securer_error_set() appends for operators. */
const char *securer_error_text (const securer_err_t err);
int securer_error_errno (const securer_err_t err);

/* Frees *err and sets it to NULL.  Safe on NULL. */
void securer_error_free (securer_err_t *err);

#ifdef __cplusplus
}
#endif
#endif
