/* A pool of pre-warmed sessions.  Thread-safe: acquire blocks on a
 * condition variable (with a deadline) until another thread releases a
 * session; each session is used by one thread at a time. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session/internal.h"

struct slot {
  struct securer_session *s;   /* NULL when it could not be (re)started */
  bool busy;
};

struct securer_pool {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct slot *slots;
  unsigned n;
  bool reset;
  struct securer_session_opts tmpl;
  char *audit_log;
  struct securer_policy *policy;   /* own copy: replacements must not depend on the caller's */
  bool closing;
  unsigned waiting;                /* threads blocked in acquire */
};

static int
open_one (struct securer_pool *p, struct securer_session **out, securer_err_t *err)
{
  return securer_session_open (&p->tmpl, out, err);
}

int
securer_pool_new (const struct securer_pool_opts *opts, struct securer_pool **out,
                  securer_err_t *err)
{
  *out = NULL;
  if (opts->size == 0 || opts->size > 1024)
    return securer_error_set (err, EINVAL, "pool size must be between 1 and 1024");
  if (opts->session.loop != NULL)
    return securer_error_set (err, EINVAL, "pool sessions run their own loops");
  struct securer_pool *p = calloc (1, sizeof *p);
  if (p == NULL)
    return securer_error_set (err, ENOMEM, "pool");
  p->slots = calloc (opts->size, sizeof *p->slots);
  if (p->slots == NULL)
    {
      free (p);
      return securer_error_set (err, ENOMEM, "pool");
    }
  pthread_mutex_init (&p->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);  /* deadlines immune to clock changes */
  pthread_cond_init (&p->cv, &ca);
  pthread_condattr_destroy (&ca);
  p->n = opts->size;
  p->reset = opts->reset_between_uses;
  p->tmpl = opts->session;
  p->tmpl.tools = securer_tools_ref (opts->session.tools);
  if (opts->session.audit_log)
    {
      p->audit_log = strdup (opts->session.audit_log);
      p->tmpl.audit_log = p->audit_log;
    }
  if (opts->session.policy != NULL)
    {
      char *text = securer_policy_to_json_text (opts->session.policy, 0);
      if (text == NULL
          || securer_policy_from_json_text ("pool", text, strlen (text), &p->policy, err) < 0)
        {
          free (text);
          securer_pool_close (p);
          return securer_error_prefix (err, "pool policy");
        }
      free (text);
      p->tmpl.policy = p->policy;
    }
  /* Start every R at once so their start-ups overlap: open each session on
   * a private loop without waiting, then wait for all. */
  for (unsigned i = 0; i < p->n; i++)
    if (securer_session_open_ex (&p->tmpl, false, &p->slots[i].s, err) < 0)
      {
        securer_pool_close (p);
        return securer_error_prefix (err, "pool: session %u", i + 1);
      }
  for (unsigned i = 0; i < p->n; i++)
    if (securer_session_wait_ready (p->slots[i].s, err) < 0)
      {
        securer_pool_close (p);
        return securer_error_prefix (err, "pool: session %u", i + 1);
      }
  *out = p;
  return 0;
}

static int
deadline_from (uint64_t timeout_ms, struct timespec *ts)
{
  clock_gettime (CLOCK_MONOTONIC, ts);
  ts->tv_sec += (time_t) (timeout_ms / 1000);
  ts->tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L)
    {
      ts->tv_sec++;
      ts->tv_nsec -= 1000000000L;
    }
  return 0;
}

int
securer_pool_acquire (struct securer_pool *p, uint64_t timeout_ms, struct securer_session **out,
                      securer_err_t *err)
{
  *out = NULL;
  struct timespec dl;
  bool forever = timeout_ms == UINT64_MAX;
  if (!forever)
    deadline_from (timeout_ms, &dl);
  pthread_mutex_lock (&p->mu);
  struct slot *got = NULL;
  bool timed_out = false;
  for (;;)
    {
      if (p->closing)
        {
          pthread_mutex_unlock (&p->mu);
          return securer_error_set (err, ESHUTDOWN, "pool is closing");
        }
      for (unsigned i = 0; i < p->n && got == NULL; i++)
        if (!p->slots[i].busy)
          got = &p->slots[i];
      if (got != NULL)
        break;
      /* Looked once more after the deadline: a release that raced with
       * the timeout is not lost. */
      if (timed_out || timeout_ms == 0)
        {
          pthread_mutex_unlock (&p->mu);
          if (timeout_ms == 0)
            return securer_error_set (err, ETIMEDOUT, "no idle session in the pool (all %u busy)",
                                      p->n);
          return securer_error_set (err, ETIMEDOUT,
                                    "no session of the pool became free within %llu ms (all %u busy)",
                                    (unsigned long long) timeout_ms, p->n);
        }
      p->waiting++;
      int rc = forever ? pthread_cond_wait (&p->cv, &p->mu)
                       : pthread_cond_timedwait (&p->cv, &p->mu, &dl);
      p->waiting--;
      if (p->closing)
        pthread_cond_broadcast (&p->cv);  /* close waits for the last waiter to leave */
      if (rc == ETIMEDOUT)
        timed_out = true;
    }
  got->busy = true;
  pthread_mutex_unlock (&p->mu);
  /* Replace a dead session outside the lock: R's start-up takes a while. */
  if (got->s != NULL && !securer_session_is_alive (got->s))
    {
      if (securer_session_restart (got->s, err) < 0)
        {
          securer_session_close (got->s);
          got->s = NULL;
          securer_error_free (err);
        }
    }
  if (got->s == NULL && open_one (p, &got->s, err) < 0)
    {
      pthread_mutex_lock (&p->mu);
      got->busy = false;
      pthread_cond_signal (&p->cv);
      pthread_mutex_unlock (&p->mu);
      return securer_error_prefix (err, "pool: replace a dead session");
    }
  *out = got->s;
  return 0;
}

void
securer_pool_release (struct securer_pool *p, struct securer_session *s)
{
  if (p == NULL || s == NULL)
    return;
  if (p->reset && securer_session_is_alive (s))
    {
      securer_err_t e = NULL;
      if (securer_session_restart (s, &e) < 0)
        securer_error_free (&e);  /* left dead: replaced at the next acquire */
    }
  pthread_mutex_lock (&p->mu);
  for (unsigned i = 0; i < p->n; i++)
    if (p->slots[i].s == s)
      {
        p->slots[i].busy = false;
        break;
      }
  pthread_cond_signal (&p->cv);
  pthread_mutex_unlock (&p->mu);
}

int
securer_pool_execute (struct securer_pool *p, const char *code, const struct securer_exec_opts *opts,
                      uint64_t acquire_timeout_ms, struct securer_result *res, securer_err_t *err)
{
  memset (res, 0, sizeof *res);
  struct securer_session *s;
  if (securer_pool_acquire (p, acquire_timeout_ms, &s, err) < 0)
    {
      res->status = SECURER_EXEC_REJECTED;
      res->error = strdup (securer_error_text (*err));
      return -1;
    }
  int rc = securer_session_execute (s, code, opts, res, err);
  securer_pool_release (p, s);
  return rc;
}

void
securer_pool_status (struct securer_pool *p, struct securer_pool_status *st)
{
  memset (st, 0, sizeof *st);
  pthread_mutex_lock (&p->mu);
  st->total = p->n;
  st->waiting = p->waiting;
  for (unsigned i = 0; i < p->n; i++)
    {
      if (p->slots[i].busy)
        st->busy++;
      else if (p->slots[i].s == NULL || !securer_session_is_alive (p->slots[i].s))
        st->dead++;
      else
        st->idle++;
    }
  pthread_mutex_unlock (&p->mu);
}

void
securer_pool_close (struct securer_pool *p)
{
  if (p == NULL)
    return;
  pthread_mutex_lock (&p->mu);
  p->closing = true;
  pthread_cond_broadcast (&p->cv);
  /* Waiters must be out of pthread_cond_wait before it is destroyed. */
  while (p->waiting > 0)
    pthread_cond_wait (&p->cv, &p->mu);
  pthread_mutex_unlock (&p->mu);
  for (unsigned i = 0; i < p->n; i++)
    securer_session_close (p->slots[i].s);
  free (p->slots);
  securer_tools_unref (p->tmpl.tools);
  securer_policy_free (p->policy);
  free (p->audit_log);
  pthread_cond_destroy (&p->cv);
  pthread_mutex_destroy (&p->mu);
  free (p);
}
