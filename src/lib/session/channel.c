/* Newline-delimited framing over non-blocking descriptors, with the size
 * cap enforced while reading: a peer can never make us buffer more than
 * max_message+1 bytes of one line, however it paces its writes. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/internal.h"

#define READ_CHUNK 65536

void
securer_channel_init (struct securer_channel *c, int rfd, int wfd, size_t max_message)
{
  memset (c, 0, sizeof *c);
  c->rfd = rfd;
  c->wfd = wfd;
  c->max_message = max_message ? max_message : SECURER_DEFAULT_MAX_MESSAGE;
  /* Requests carry at most one message of max_message; a little slack for
   * the tool result that may follow. */
  c->max_pending = 4 * c->max_message + 4096;
}

/* Drops the `n` consumed bytes at the front of the input buffer. */
static void
consume (struct securer_channel *c, size_t n)
{
  memmove (c->in, c->in + n, c->in_len - n);
  c->in_len -= n;
  c->scanned = 0;
  c->taken = 0;
}

enum channel_read_status
securer_channel_read (struct securer_channel *c, const char **line, size_t *len,
                      securer_err_t *err)
{
  /* The line handed out by the previous call stays in place until now, so
   * the caller's pointer was valid in between; drop it first. */
  if (c->taken > 0)
    consume (c, c->taken);
  c->taken = 0;
  for (;;)
    {
      char *nl = c->in_len > c->scanned
                   ? memchr (c->in + c->scanned, '\n', c->in_len - c->scanned)
                   : NULL;
      if (nl != NULL)
        {
          size_t n = (size_t) (nl - c->in);
          if (n > c->max_message)
            return CHANNEL_TOO_LARGE;
          *nl = '\0';
          *line = c->in;
          *len = n;
          c->taken = n + 1;
          return CHANNEL_LINE;
        }
      c->scanned = c->in_len;
      if (c->in_len > c->max_message)
        return CHANNEL_TOO_LARGE;
      if (c->eof)
        return CHANNEL_EOF;
      /* Read at most what can still complete a legal line. */
      size_t room = c->max_message + 1 - c->in_len;
      if (room > READ_CHUNK)
        room = READ_CHUNK;
      if (c->in_cap < c->in_len + room + 1)
        {
          size_t cap = c->in_cap ? c->in_cap : 4096;
          while (cap < c->in_len + room + 1)
            cap *= 2;
          char *p = realloc (c->in, cap);
          if (p == NULL)
            {
              securer_error_set (err, ENOMEM, "channel: buffer");
              return CHANNEL_ERROR;
            }
          c->in = p;
          c->in_cap = cap;
        }
      ssize_t r = read (c->rfd, c->in + c->in_len, room);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          if (errno == EAGAIN)
            return CHANNEL_AGAIN;
          securer_error_set (err, errno, "channel: read");
          return CHANNEL_ERROR;
        }
      if (r == 0)
        {
          c->eof = true;
          continue;
        }
      c->in_len += (size_t) r;
    }
}

int
securer_channel_send (struct securer_channel *c, const char *msg, size_t len, securer_err_t *err)
{
  if (c->wfd < 0)
    return securer_error_set (err, EPIPE, "channel: closed");
  if (len > c->max_message)
    return securer_error_set (err, EMSGSIZE, "message of %zu bytes exceeds the limit of %zu bytes",
                              len, c->max_message);
  size_t queued = c->out_len - c->out_off;
  if (queued + len + 1 > c->max_pending)
    return securer_error_set (err, ENOBUFS, "channel: peer is not reading (%zu bytes pending)",
                              queued);
  if (c->out_off > 0)
    {
      memmove (c->out, c->out + c->out_off, queued);
      c->out_len = queued;
      c->out_off = 0;
    }
  if (c->out_cap < c->out_len + len + 1)
    {
      size_t cap = c->out_cap ? c->out_cap : 4096;
      while (cap < c->out_len + len + 1)
        cap *= 2;
      char *p = realloc (c->out, cap);
      if (p == NULL)
        return securer_error_set (err, ENOMEM, "channel: buffer");
      c->out = p;
      c->out_cap = cap;
    }
  memcpy (c->out + c->out_len, msg, len);
  c->out[c->out_len + len] = '\n';
  c->out_len += len + 1;
  return securer_channel_flush (c, err) < 0 ? -1 : 0;
}

/* write() to a pipe whose reader is gone raises SIGPIPE; a library must
 * not die of it nor change the process's disposition, so the signal is
 * blocked in this thread for the write and a SIGPIPE it caused is consumed. */
ssize_t
securer_write_nosigpipe (int fd, const void *buf, size_t n)
{
  sigset_t pipe_set, old, pending;
  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  sigpending (&pending);
  bool was_pending = sigismember (&pending, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &pipe_set, &old);
  ssize_t w = write (fd, buf, n);
  int e = errno;
  if (w < 0 && e == EPIPE && !was_pending)
    {
      struct timespec zero = { 0, 0 };
      while (sigtimedwait (&pipe_set, NULL, &zero) < 0 && errno == EINTR)
        ;
    }
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  errno = e;
  return w;
}

int
securer_channel_flush (struct securer_channel *c, securer_err_t *err)
{
  while (c->out_off < c->out_len)
    {
      ssize_t w = securer_write_nosigpipe (c->wfd, c->out + c->out_off, c->out_len - c->out_off);
      if (w < 0)
        {
          if (errno == EINTR)
            continue;
          if (errno == EAGAIN)
            return 0;
          return securer_error_set (err, errno, "channel: write");
        }
      c->out_off += (size_t) w;
    }
  c->out_off = c->out_len = 0;
  return 1;
}

int
securer_channel_send_raw (struct securer_channel *c, const char *data, size_t len,
                          securer_err_t *err)
{
  if (c->wfd < 0)
    return securer_error_set (err, EPIPE, "channel: closed");
  if (c->out_off > 0)
    {
      memmove (c->out, c->out + c->out_off, c->out_len - c->out_off);
      c->out_len -= c->out_off;
      c->out_off = 0;
    }
  if (c->out_cap < c->out_len + len)
    {
      size_t cap = c->out_cap ? c->out_cap : 4096;
      while (cap < c->out_len + len)
        cap *= 2;
      char *p = realloc (c->out, cap);
      if (p == NULL)
        return securer_error_set (err, ENOMEM, "channel: buffer");
      c->out = p;
      c->out_cap = cap;
    }
  memcpy (c->out + c->out_len, data, len);
  c->out_len += len;
  return securer_channel_flush (c, err) < 0 ? -1 : 0;
}

bool
securer_channel_pending (const struct securer_channel *c)
{
  return c->out_off < c->out_len;
}

void
securer_channel_close (struct securer_channel *c)
{
  if (c->rfd >= 0)
    close (c->rfd);
  if (c->wfd >= 0 && c->wfd != c->rfd)
    close (c->wfd);
  c->rfd = c->wfd = -1;
  free (c->in);
  free (c->out);
  c->in = c->out = NULL;
  c->in_len = c->in_cap = c->out_len = c->out_cap = c->out_off = 0;
  c->scanned = 0;
  c->taken = 0;
}
