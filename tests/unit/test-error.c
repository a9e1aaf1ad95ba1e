/* Error values carry errno and context, outermost first. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error-fixed.h"
#include "securer/error.h"

Test (error, set_appends_errno_name)
{
  securer_err_t err = NULL;
  cr_assert_eq (securer_error_set (&err, ENOENT, "bind %s", "/usr"), -1);
  cr_assert_str_eq (securer_error_message (err), "bind /usr: ENOENT (No such file or directory)");
  cr_assert_eq (securer_error_errno (err), ENOENT);
  securer_error_free (&err);
  cr_assert_null (err);
}

Test (error, prefix_adds_context_outermost_first)
{
  securer_err_t err = NULL;
  securer_error_set (&err, 0, "inner");
  securer_error_prefix (&err, "middle");
  securer_error_prefix (&err, "outer %d", 1);
  cr_assert_str_eq (securer_error_message (err), "outer 1: middle: inner");
  cr_assert_eq (securer_error_errno (err), 0);
  securer_error_free (&err);
}

Test (error, set_replaces_previous_error)
{
  securer_err_t err = NULL;
  securer_error_set (&err, EPERM, "first");
  securer_error_set (&err, 0, "second");
  cr_assert_str_eq (securer_error_message (err), "second");
  securer_error_free (&err);
}

Test (error, text_leaves_out_errno_names)
{
  securer_err_t err = NULL;
  securer_error_set (&err, EPERM, "Maximum executions (%d) reached", 3);
  securer_error_prefix (&err, "execute");
  cr_assert_str_eq (securer_error_message (err),
                    "execute: Maximum executions (3) reached: EPERM (Operation not permitted)");
  cr_assert_str_eq (securer_error_text (err), "execute: Maximum executions (3) reached");
  securer_error_set (&err, 0, "plain");
  cr_assert_str_eq (securer_error_text (err), "plain");
  securer_error_free (&err);
  cr_assert_str_eq (securer_error_text (err), "");
}

/* In the sandbox's child, pid 1 and the payload share their memory until
 * pid 1 executes securer-init, and both may fail: each keeps its error. */
static securer_err_t payload_err;

static int
payload_fails (void *arg)
{
  (void) arg;
  securer_error_set (&payload_err, EIO, "payload step");
  return 0;
}

Test (error, fixed_storage_keeps_one_error_per_process)
{
  int p[2];
  cr_assert_eq (pipe (p), 0);
  pid_t pid = fork ();
  if (pid == 0)
    {
      securer_error_use_fixed_storage ();
      securer_err_t err = NULL;
      securer_error_set (&err, EPERM, "pid 1 step");
      static char stack[64 * 1024] __attribute__ ((aligned (16)));
      pid_t c = clone (payload_fails, stack + sizeof stack, CLONE_VM | SIGCHLD, NULL);
      if (c < 0 || waitpid (c, NULL, 0) != c)
        _exit (1);
      securer_error_prefix (&err, "pid 1");
      dprintf (p[1], "%s|%s", securer_error_message (err),
               payload_err ? securer_error_message (payload_err) : "none");
      _exit (0);
    }
  close (p[1]);
  char buf[512] = "";
  ssize_t n = read (p[0], buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  close (p[0]);
  int st = 0;
  cr_assert_eq (waitpid (pid, &st, 0), pid);
  cr_assert (WIFEXITED (st) && WEXITSTATUS (st) == 0);
  cr_assert_str_eq (buf, "pid 1: pid 1 step: EPERM (Operation not permitted)|"
                    "payload step: EIO (Input/output error)");
}
