/* Error values carry errno and context, outermost first. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>

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
