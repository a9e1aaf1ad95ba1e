/* The sessions' copies of their policies.
 *
 * A session keeps a copy of its policy (the caller's may go away), made
 * through the JSON form, which round-trips exactly, with the wall-clock
 * timeout cleared: a session enforces its own per-execution timeout.
 * Parsing that JSON is most of the host's work in starting a session from
 * a template, so sessions whose policies have the same text share one
 * read-only copy, found by the text's digest; the last few copies no
 * session uses are kept for the next session (a server opening one
 * session per request).  Thread-safe. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "session/internal.h"

/* Copies kept without a session. */
#define MAX_UNUSED 4

struct session_policy {
  struct session_policy *next;
  unsigned refs;                     /* under mu */
  uint64_t unused_since;
  char digest[SECURER_POLICY_DIGEST_HEX];
  struct securer_policy *p;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct session_policy *copies;

/* Under mu: unused copies past MAX_UNUSED, oldest first, unlinked and
 * returned as a list to free outside the lock. */
static struct session_policy *
trim_locked (void)
{
  struct session_policy *gone = NULL;
  for (;;)
    {
      unsigned unused = 0;
      struct session_policy **oldest = NULL;
      for (struct session_policy **pp = &copies; *pp; pp = &(*pp)->next)
        if ((*pp)->refs == 0)
          {
            unused++;
            if (oldest == NULL || (*pp)->unused_since < (*oldest)->unused_since)
              oldest = pp;
          }
      if (unused <= MAX_UNUSED)
        return gone;
      struct session_policy *c = *oldest;
      *oldest = c->next;
      c->next = gone;
      gone = c;
    }
}

static void
free_list (struct session_policy *c)
{
  while (c != NULL)
    {
      struct session_policy *next = c->next;
      securer_policy_free (c->p);
      free (c);
      c = next;
    }
}

int
securer_session_policy_get (const struct securer_policy *p, struct session_policy **out, securer_err_t *err)
{
  *out = NULL;
  char *text = securer_policy_to_json_text (p, 0);
  if (text == NULL)
    return securer_error_set (err, ENOMEM, "session policy: copy");
  char digest[SECURER_POLICY_DIGEST_HEX];
  securer_policy_text_digest (text, digest);
  pthread_mutex_lock (&mu);
  for (struct session_policy *c = copies; c; c = c->next)
    if (strcmp (c->digest, digest) == 0)
      {
        c->refs++;
        *out = c;
        break;
      }
  pthread_mutex_unlock (&mu);
  if (*out != NULL)
    {
      free (text);
      return 0;
    }
  struct session_policy *c = calloc (1, sizeof *c);
  int rc = c ? securer_policy_from_json_text (p->name ? p->name : "session", text, strlen (text), &c->p, err)
             : securer_error_set (err, ENOMEM, "session policy: copy");
  free (text);
  if (rc < 0)
    {
      free (c);
      return securer_error_prefix (err, "session policy: copy");
    }
  c->p->limits.timeout_ms = 0;
  c->refs = 1;
  memcpy (c->digest, digest, sizeof digest);
  /* Two first sessions of one policy may both get here: both copies are
   * equal, each is kept until unused. */
  pthread_mutex_lock (&mu);
  c->next = copies;
  copies = c;
  pthread_mutex_unlock (&mu);
  *out = c;
  return 0;
}

const struct securer_policy *
securer_session_policy (const struct session_policy *c)
{
  return c->p;
}

const char *
securer_session_policy_digest (const struct session_policy *c)
{
  return c->digest;
}

void
securer_session_policy_put (struct session_policy *c)
{
  if (c == NULL)
    return;
  pthread_mutex_lock (&mu);
  if (--c->refs == 0)
    c->unused_since = securer_now_ns ();
  struct session_policy *gone = trim_locked ();
  pthread_mutex_unlock (&mu);
  free_list (gone);
}
