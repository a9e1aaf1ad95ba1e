/* Pools of sandboxed R sessions: pre-warming, acquire/release with a
 * deadline, reset between uses, replacement of dead sessions. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "securer/session.h"

static char *
value_of (struct securer_session *s, const char *code)
{
  struct securer_result r;
  securer_err_t err = NULL;
  cr_assert_eq (securer_session_execute (s, code, NULL, &r, &err), 0, "%s: %s", code, r.error);
  char *j = json_dumps (r.value, JSON_COMPACT | JSON_ENCODE_ANY);
  securer_result_clear (&r);
  return j;
}

Test (pool, acquire_release_status_and_deadline)
{
  struct securer_pool_opts po = { .size = 2 };
  struct securer_pool *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_pool_new (&po, &p, &err), 0, "%s", err ? securer_error_message (err) : "");
  struct securer_pool_status st;
  securer_pool_status (p, &st);
  cr_assert (st.total == 2 && st.idle == 2 && st.busy == 0 && st.dead == 0);
  struct securer_session *a, *b, *c;
  cr_assert_eq (securer_pool_acquire (p, 1000, &a, &err), 0);
  cr_assert_eq (securer_pool_acquire (p, 1000, &b, &err), 0);
  cr_assert_neq (a, b);
  securer_pool_status (p, &st);
  cr_assert (st.busy == 2 && st.idle == 0);
  cr_assert_eq (securer_pool_acquire (p, 100, &c, &err), -1);
  cr_assert_eq (securer_error_errno (err), ETIMEDOUT);
  securer_error_free (&err);
  free (value_of (a, "x <- 1"));
  securer_pool_release (p, a);
  cr_assert_eq (securer_pool_acquire (p, 0, &c, &err), 0);
  cr_assert_eq (c, a);
  char *v = value_of (c, "exists('x')");
  cr_assert_str_eq (v, "{\"t\":\"lgl\",\"v\":[true]}", "without reset, state stays");
  free (v);
  securer_pool_release (p, b);
  securer_pool_release (p, c);
  securer_pool_close (p);
}

Test (pool, reset_between_uses_and_dead_sessions_replaced)
{
  struct securer_pool_opts po = { .size = 1, .reset_between_uses = true };
  struct securer_pool *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_pool_new (&po, &p, &err), 0);
  struct securer_result r;
  cr_assert_eq (securer_pool_execute (p, "x <- 99", NULL, 1000, &r, &err), 0);
  securer_result_clear (&r);
  cr_assert_eq (securer_pool_execute (p, "exists('x')", NULL, 5000, &r, &err), 0);
  char *j = json_dumps (r.value, JSON_COMPACT);
  cr_assert_str_eq (j, "{\"t\":\"lgl\",\"v\":[false]}", "reset must clear state");
  free (j);
  securer_result_clear (&r);

  struct securer_session *s;
  cr_assert_eq (securer_pool_acquire (p, 1000, &s, &err), 0);
  securer_pool_release (p, s);
  /* release restarted it: kill the new R, as a crash would. */
  pid_t pid = securer_session_pid (s);
  cr_assert_gt (pid, 0);
  kill (pid, SIGKILL);
  struct securer_pool_status st;
  for (int i = 0; i < 200; i++)
    {
      securer_pool_status (p, &st);
      if (st.dead == 1)
        break;
      usleep (10000);
    }
  cr_assert_eq (st.dead, 1, "the killed session must show as dead");
  cr_assert_eq (securer_pool_execute (p, "6 * 7", NULL, 1000, &r, &err), 0, "%s", r.error);
  cr_assert_eq (json_number_value (json_array_get (json_object_get (r.value, "v"), 0)), 42.0);
  securer_result_clear (&r);
  securer_pool_close (p);
}

struct waiter {
  struct securer_pool *p;
  struct securer_session *got;
  int rc;
  char *value;
};

static void *
wait_for_a_session (void *data)
{
  struct waiter *w = data;
  securer_err_t err = NULL;
  w->rc = securer_pool_acquire (w->p, 120000, &w->got, &err);
  securer_error_free (&err);
  if (w->rc == 0)
    {
      struct securer_result r;
      if (securer_session_execute (w->got, "x", NULL, &r, &err) == 0)
        w->value = json_dumps (r.value, JSON_COMPACT);
      securer_error_free (&err);
      securer_result_clear (&r);
      securer_pool_release (w->p, w->got);
    }
  return NULL;
}

Test (pool, acquire_waits_for_a_release)
{
  struct securer_pool_opts po = { .size = 1 };
  struct securer_pool *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_pool_new (&po, &p, &err), 0);
  struct securer_session *s;
  cr_assert_eq (securer_pool_acquire (p, 0, &s, &err), 0);
  struct waiter w = { .p = p };
  pthread_t th;
  cr_assert_eq (pthread_create (&th, NULL, wait_for_a_session, &w), 0);
  /* Until the other thread is blocked in acquire. */
  struct securer_pool_status st;
  do
    {
      usleep (2000);
      securer_pool_status (p, &st);
    }
  while (st.waiting == 0);
  cr_assert_eq (st.busy, 1);
  free (value_of (s, "x <- 7L"));
  securer_pool_release (p, s);
  pthread_join (th, NULL);
  cr_assert_eq (w.rc, 0, "the waiting acquire must get the released session");
  cr_assert_eq (w.got, s);
  cr_assert_str_eq (w.value, "{\"t\":\"int\",\"v\":[7]}", "it saw the state left by the first user");
  free (w.value);

  /* A deadline that passes: a clear error, nothing acquired. */
  cr_assert_eq (securer_pool_acquire (p, 0, &s, &err), 0);
  struct securer_result r;
  cr_assert_eq (securer_pool_execute (p, "1", NULL, 50, &r, &err), -1);
  cr_assert_eq (securer_error_errno (err), ETIMEDOUT);
  cr_assert_eq (r.status, SECURER_EXEC_REJECTED);
  cr_assert (strstr (r.error, "no session of the pool became free within 50 ms (all 1 busy)") != NULL,
             "%s", r.error);
  securer_error_free (&err);
  securer_result_clear (&r);
  securer_pool_status (p, &st);
  cr_assert (st.busy == 1 && st.waiting == 0);
  securer_pool_release (p, s);
  securer_pool_close (p);
}
