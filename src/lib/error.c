/* Error values with context; see include/securer/error.h. */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error-fixed.h"
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

/* Fixed storage for the sandbox's child (see securer_error_use_fixed_storage
 * in linux/launch.h): after a raw clone of a multi-threaded caller the
 * allocator's lock may be held by a thread that does not exist in the
 * child, so errors there are formatted into these buffers, never malloc'd.
 * Each process of the child reports one error, then exits.  Two slots,
 * each taken by the first process that reports into it: pid 1 and the
 * payload share their memory until pid 1 executes securer-init
 * (linux/init.c), and may both be failing at once. */
#define FIXED_MAX 2048
#define FIXED_SLOTS 2
#ifndef __GLIBC__
#define strerrordesc_np(e) strerror (e)   /* the Windows build, which never clones */
#endif
#ifdef _WIN32
#define getpid() 1
#endif
struct fixed_slot {
  pid_t owner;
  char msg[FIXED_MAX], text[FIXED_MAX];
  struct securer_error error;
};
static bool fixed_mode;
static struct fixed_slot fixed_slots[FIXED_SLOTS];

void
securer_error_use_fixed_storage (void)
{
  fixed_mode = true;
}

static struct fixed_slot *
fixed_slot (void)
{
  pid_t me = getpid ();
  for (int i = 0; i < FIXED_SLOTS; i++)
    if (__atomic_load_n (&fixed_slots[i].owner, __ATOMIC_ACQUIRE) == me)
      return &fixed_slots[i];
  for (int i = 0; i < FIXED_SLOTS; i++)
    {
      pid_t none = 0;
      if (__atomic_compare_exchange_n (&fixed_slots[i].owner, &none, me, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE))
        return &fixed_slots[i];
    }
  return &fixed_slots[FIXED_SLOTS - 1];
}

static bool
is_fixed (const struct securer_error *e)
{
  for (int i = 0; i < FIXED_SLOTS; i++)
    if (e == &fixed_slots[i].error)
      return true;
  return false;
}

/* strerrordesc_np rather than strerror: no locale, no translation lookup
 * (which takes a lock), no buffer for an unknown number. */
static void
fixed_finish (struct fixed_slot *f, int errnum)
{
  if (errnum != 0)
    {
      const char *name = strerrorname_np (errnum), *desc = strerrordesc_np (errnum);
      if (snprintf (f->msg, sizeof f->msg, "%s: %s (%s)", f->text, name ? name : "E?",
                    desc ? desc : "unknown error") < 0)
        f->msg[0] = '\0';
    }
  else
    memcpy (f->msg, f->text, sizeof f->msg);
}

static int
set_fixed (securer_err_t *err, int errnum, const char *fmt, va_list ap)
  __attribute__ ((format (printf, 3, 0)));

static int
set_fixed (securer_err_t *err, int errnum, const char *fmt, va_list ap)
{
  struct fixed_slot *f = fixed_slot ();
  vsnprintf (f->text, sizeof f->text, fmt, ap);
  fixed_finish (f, errnum);
  f->error.errnum = errnum;
  f->error.status = 0;
  f->error.msg = f->msg;
  f->error.text = errnum != 0 ? f->text : NULL;
  *err = &f->error;
  return -1;
}

static void
prefix_fixed (struct securer_error *e, const char *ctx)
{
  struct fixed_slot *f = (struct fixed_slot *) ((char *) e - offsetof (struct fixed_slot, error));
  char tmp[FIXED_MAX];
  if (snprintf (tmp, sizeof tmp, "%s: %s", ctx, f->text) >= 0)
    memcpy (f->text, tmp, sizeof f->text);
  fixed_finish (f, f->error.errnum);
}

int
securer_error_set (securer_err_t *err, int errnum, const char *fmt, ...)
{
  if (err == NULL)
    return -1;
  if (*err != NULL)
    securer_error_free (err);

  va_list ap;
  va_start (ap, fmt);
  if (fixed_mode)
    {
      set_fixed (err, errnum, fmt, ap);
      va_end (ap);
      return -1;
    }
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
  if (is_fixed (*err))
    {
      char ctx[512];
      vsnprintf (ctx, sizeof ctx, fmt, ap);
      va_end (ap);
      prefix_fixed (*err, ctx);
      return -1;
    }
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
  if (*err != &oom_error && !is_fixed (*err))
    {
      free ((*err)->msg);
      free ((*err)->text);
      free (*err);
    }
  *err = NULL;
}
