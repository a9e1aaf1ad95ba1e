/* Error values with context; see include/securer/error.h. */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "securer/error.h"

static char *vformat (const char *fmt, va_list ap) __attribute__ ((format (printf, 1, 0)));

static char *
vformat (const char *fmt, va_list ap)
{
  char *s = NULL;
  if (vasprintf (&s, fmt, ap) < 0)
    return NULL;
  return s;
}

/* Used when allocation fails while reporting an error: the caller still
 * gets an error object, just with a fixed message. */
static struct securer_error oom_error = { ENOMEM, 0, (char *) "out of memory while reporting an error",
                                          NULL };

int
securer_error_set (securer_err_t *err, int errnum, const char *fmt, ...)
{
  if (err == NULL)
    return -1;
  if (*err != NULL)
    securer_error_free (err);

  va_list ap;
  va_start (ap, fmt);
  char *base = vformat (fmt, ap);
  va_end (ap);

  struct securer_error *e = calloc (1, sizeof *e);
  if (e == NULL || base == NULL)
    {
      free (e);
      free (base);
      *err = &oom_error;
      return -1;
    }
  e->errnum = errnum;
  if (errnum != 0)
    {
      const char *name = strerrorname_np (errnum);
      char *full = NULL;
      if (asprintf (&full, "%s: %s (%s)", base, name ? name : "E?", strerror (errnum)) < 0)
        full = NULL;
      if (full != NULL)
        {
          e->text = base;
          base = full;
        }
    }
  e->msg = base;
  *err = e;
  return -1;
}

int
securer_error_prefix (securer_err_t *err, const char *fmt, ...)
{
  if (err == NULL || *err == NULL || *err == &oom_error)
    return -1;
  va_list ap;
  va_start (ap, fmt);
  char *ctx = vformat (fmt, ap);
  va_end (ap);
  if (ctx == NULL)
    return -1;
  char *full = NULL;
  if (asprintf (&full, "%s: %s", ctx, (*err)->msg) >= 0)
    {
      free ((*err)->msg);
      (*err)->msg = full;
    }
  if ((*err)->text != NULL && asprintf (&full, "%s: %s", ctx, (*err)->text) >= 0)
    {
      free ((*err)->text);
      (*err)->text = full;
    }
  free (ctx);
  return -1;
}

void
securer_error_set_status (securer_err_t *err, int status)
{
  if (err != NULL && *err != NULL && *err != &oom_error)
    (*err)->status = status;
}

const char *
securer_error_message (const securer_err_t err)
{
  return err ? err->msg : "";
}

const char *
securer_error_text (const securer_err_t err)
{
  return err == NULL ? "" : err->text != NULL ? err->text : err->msg;
}

int
securer_error_errno (const securer_err_t err)
{
  return err ? err->errnum : 0;
}

void
securer_error_free (securer_err_t *err)
{
  if (err == NULL || *err == NULL)
    return;
  if (*err != &oom_error)
    {
      free ((*err)->msg);
      free ((*err)->text);
      free (*err);
    }
  *err = NULL;
}
