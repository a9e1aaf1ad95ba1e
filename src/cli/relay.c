/* The stdio relay of `securer run` and `securer policy learn`.
 *
 * The payload gets three pipes (two when the caller's stdout and stderr are
 * the same file: one pipe keeps their order), except where the caller's fd
 * is the null device: then a /dev/null of its own, and nothing to relay.  securer's ends are
 * non-blocking; the caller's descriptions never change: a terminal or a
 * pipe of the caller's is reopened through /proc/self/fd, which gives
 * securer a description of its own to make non-blocking, a socket is used
 * with MSG_DONTWAIT, and a file is read and written as it is (a file never
 * makes a reader or writer wait for long).  When a terminal or pipe cannot
 * be reopened (a terminal in exclusive mode, a pipe with no reader), its
 * shared description is used as it is, at most PIPE_BUF bytes per write
 * after poll() reported room, which does not block on a pipe.
 *
 * Each direction has a fixed buffer; a source is read only while its
 * buffer has room, so a slow reader holds the writer back (backpressure)
 * and nothing grows without bound. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "relay.h"
#include "termsafe.h"

#define BUF_SIZE (64 * 1024)
#define SANITIZE_CHUNK 4096

struct end {
  int fd;          /* -1: none (or closed) */
  bool own;        /* securer's own descriptor: closed here */
  bool sock;       /* recv/send with MSG_DONTWAIT */
  bool shared;     /* a blocking description shared with the caller */
};

struct chan {
  struct end src, dst;
  bool to_payload;     /* the stdin direction */
  bool discard;        /* no destination: what is read is dropped */
  bool sanitize;
  bool eof;            /* the source is finished; the buffer still drains */
  bool draining;       /* the sandbox ended: an empty source is finished */
  bool keep_waiting;   /* while draining, wait for a slow destination */
  struct termsafe ts;
  char *buf;
  size_t off, len;
};

enum { IN, OUT, ERR };

struct cli_relay {
  struct chan ch[3];
  unsigned n_ch;           /* 2 when stdout and stderr share a pipe */
  int payload_fd[3];       /* the payload's ends until spawned */
  struct {
    unsigned ch;
    bool src;
  } polled[CLI_RELAY_MAX_POLLFDS];
};

static void
end_close (struct end *e)
{
  if (e->fd >= 0 && e->own)
    close (e->fd);
  e->fd = -1;
}

void
cli_relay_std_fds (int fd[3])
{
  for (int i = 0; i < 3; i++)
    fd[i] = fcntl (i, F_GETFD) >= 0 ? i : -1;
}

/* The caller's fd as an end securer can wait on without changing the
 * caller's description. */
static int
caller_end (int fd, bool reading, struct end *e, securer_err_t *err)
{
  memset (e, 0, sizeof *e);
  e->fd = -1;
  if (fd < 0 || fcntl (fd, F_GETFL) < 0)
    return 0;
  struct stat st;
  if (fstat (fd, &st) < 0)
    return securer_error_set (err, errno, "stdio relay: fstat fd %d", fd);
  e->fd = fd;
  if (S_ISSOCK (st.st_mode))
    e->sock = true;
  else if (S_ISFIFO (st.st_mode) || isatty (fd))
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
      int own = open (path, (reading ? O_RDONLY : O_WRONLY) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
      if (own >= 0)
        {
          e->fd = own;
          e->own = true;
        }
      else
        e->shared = true;
    }
  return 0;
}

static ssize_t
end_read (const struct end *e, void *buf, size_t n)
{
  return e->sock ? recv (e->fd, buf, n, MSG_DONTWAIT) : read (e->fd, buf, n);
}

static ssize_t
end_write (const struct end *e, const void *buf, size_t n)
{
  if (e->sock)
    return send (e->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (e->shared && n > PIPE_BUF)
    n = PIPE_BUF;
  return write (e->fd, buf, n);
}

/* A pipe with the payload's end in *theirs (blocking, as a program expects
 * its stdio) and securer's end, non-blocking, in *ours; the payload reads
 * from it when payload_reads. */
static int
make_pipe (bool payload_reads, int *theirs, struct end *ours, securer_err_t *err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return securer_error_set (err, errno, "stdio relay: pipe");
  *theirs = payload_reads ? p[0] : p[1];
  memset (ours, 0, sizeof *ours);
  ours->fd = payload_reads ? p[1] : p[0];
  ours->own = true;
  /* Only securer's end: the two ends of a pipe are separate descriptions. */
  if (fcntl (ours->fd, F_SETFL, O_NONBLOCK) < 0)
    return securer_error_set (err, errno, "stdio relay: make the pipe non-blocking");
  return 0;
}

static bool
same_file (int a, int b)
{
  struct stat sa, sb;
  return a >= 0 && b >= 0 && fstat (a, &sa) == 0 && fstat (b, &sb) == 0 && sa.st_dev == sb.st_dev
         && sa.st_ino == sb.st_ino;
}

/* The caller's fd is the null device: nothing to relay either way, and
 * CMD can be given a /dev/null of its own instead of a pipe (a description
 * of its own too, so nothing it does to it reaches the caller's). */
static bool
is_null_device (int fd)
{
  struct stat st;
  return fd >= 0 && fstat (fd, &st) == 0 && S_ISCHR (st.st_mode) && major (st.st_rdev) == 1
         && minor (st.st_rdev) == 3;
}

static int
open_null (int flags, int *out, securer_err_t *err)
{
  *out = open ("/dev/null", flags | O_CLOEXEC | O_NOCTTY);
  if (*out < 0)
    return securer_error_set (err, errno, "stdio relay: open /dev/null");
  return 0;
}

static int
output_chan (struct cli_relay *r, unsigned i, int caller_fd, bool raw, securer_err_t *err)
{
  struct chan *c = &r->ch[i];
  if (is_null_device (caller_fd))
    {
      c->eof = true;
      return open_null (O_WRONLY, &r->payload_fd[i], err);
    }
  if (caller_end (caller_fd, false, &c->dst, err) < 0
      || make_pipe (false, &r->payload_fd[i], &c->src, err) < 0)
    return -1;
  c->discard = c->dst.fd < 0;
  c->sanitize = !raw && c->dst.fd >= 0 && isatty (c->dst.fd);
  termsafe_init (&c->ts);
  return 0;
}

int
cli_relay_new (const struct cli_relay_opts *o, struct cli_relay **out, securer_err_t *err)
{
  struct cli_relay *r = calloc (1, sizeof *r);
  if (r == NULL)
    return securer_error_set (err, ENOMEM, "stdio relay");
  for (unsigned i = 0; i < 3; i++)
    {
      r->payload_fd[i] = -1;
      r->ch[i].src.fd = r->ch[i].dst.fd = -1;
      r->ch[i].buf = malloc (BUF_SIZE);
      if (r->ch[i].buf == NULL)
        {
          cli_relay_free (r);
          return securer_error_set (err, ENOMEM, "stdio relay");
        }
    }
  /* Write errors to a departed reader come back as EPIPE, handled below;
   * the payload starts with default dispositions whatever securer's are. */
  signal (SIGPIPE, SIG_IGN);

  struct chan *in = &r->ch[IN];
  in->to_payload = true;
  if (!o->no_stdin && is_null_device (o->in))
    {
      in->eof = true;
      if (open_null (O_RDONLY, &r->payload_fd[IN], err) < 0)
        goto fail;
    }
  else if (make_pipe (true, &r->payload_fd[IN], &in->dst, err) < 0
      || (!o->no_stdin && caller_end (o->in, true, &in->src, err) < 0))
    goto fail;
  if (in->src.fd < 0)
    {
      /* Nothing to read: the payload sees EOF at once. */
      in->eof = true;
      end_close (&in->dst);
    }
  r->n_ch = same_file (o->out, o->err) ? 2 : 3;
  if (output_chan (r, OUT, o->out, o->raw, err) < 0)
    goto fail;
  if (r->n_ch == 3)
    {
      if (output_chan (r, ERR, o->err, o->raw, err) < 0)
        goto fail;
    }
  else
    r->payload_fd[ERR] = r->payload_fd[OUT];
  *out = r;
  return 0;
fail:
  cli_relay_free (r);
  return -1;
}

static void
close_payload_ends (struct cli_relay *r)
{
  for (unsigned i = 0; i < 3; i++)
    if (r->payload_fd[i] >= 0 && (i != ERR || r->payload_fd[ERR] != r->payload_fd[OUT]))
      close (r->payload_fd[i]);
  for (unsigned i = 0; i < 3; i++)
    r->payload_fd[i] = -1;
}

int
cli_relay_spawn (struct cli_relay *r, struct securer_spawn_opts *o, struct securer_sandbox **sb,
                 securer_err_t *err)
{
  if (r == NULL)
    return securer_sandbox_spawn (o, sb, err);
  o->stdin_fd = r->payload_fd[IN];
  o->stdout_fd = r->payload_fd[OUT];
  o->stderr_fd = r->payload_fd[ERR];
  int rc = securer_sandbox_spawn (o, sb, err);
  /* The sandbox has its copies, or never will. */
  close_payload_ends (r);
  return rc;
}

/* How much one read may take so that its output fits in the buffer. */
static size_t
read_size (struct chan *c)
{
  if (c->len == 0)
    c->off = 0;
  else if (c->off > 0 && c->off + c->len > BUF_SIZE / 2)
    {
      memmove (c->buf, c->buf + c->off, c->len);
      c->off = 0;
    }
  size_t room = BUF_SIZE - c->off - c->len;
  if (!c->sanitize)
    return room;
  /* Worst case of one feed plus the end of the stream. */
  size_t reserve = TERMSAFE_MAX_OUT (0) * 2;
  if (room <= reserve)
    return 0;
  size_t n = (room - reserve) / 4;
  return n < SANITIZE_CHUNK ? n : SANITIZE_CHUNK;
}

static void
src_finished (struct chan *c)
{
  if (c->sanitize)
    c->len += termsafe_finish (&c->ts, c->buf + c->off + c->len);
  end_close (&c->src);
  c->eof = true;
  if (c->to_payload && c->len == 0)
    end_close (&c->dst);   /* the payload reads EOF */
}

/* The destination is gone (EPIPE, or another write error): the payload
 * learns it as it would have on its own (EPIPE, SIGPIPE) when its output
 * pipe loses its reader; the caller's stdin is simply no longer read. */
static void
dst_gone (struct chan *c)
{
  c->off = c->len = 0;
  end_close (&c->dst);
  end_close (&c->src);
  c->eof = true;
}

static void
src_read (struct chan *c)
{
  size_t want = read_size (c);
  if (want == 0)
    return;
  char chunk[SANITIZE_CHUNK];
  char *to = c->sanitize ? chunk : c->buf + c->off + c->len;
  ssize_t n = end_read (&c->src, to, want);
  if (n < 0 && errno == EINTR)
    return;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    {
      /* After the end of the sandbox, what the payload wrote is all in
       * the pipe; an empty pipe is the end even if a leftover process
       * still holds its other end. */
      if (c->draining)
        src_finished (c);
      return;
    }
  if (n <= 0)
    {
      src_finished (c);   /* EOF, or an error such as EIO from a hung-up terminal */
      return;
    }
  if (c->discard)
    return;
  if (c->sanitize)
    c->len += termsafe_feed (&c->ts, chunk, (size_t) n, c->buf + c->off + c->len);
  else
    c->len += (size_t) n;
}

/* After a timeout, what the caller does not take at once is dropped. */
static void
drop_if_killed (struct chan *c)
{
  if (c->draining && !c->keep_waiting)
    c->off = c->len = 0;
}

static void
dst_write (struct chan *c)
{
  if (c->len == 0 || c->dst.fd < 0)
    return;
  ssize_t n = end_write (&c->dst, c->buf + c->off, c->len);
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
    {
      drop_if_killed (c);
      return;
    }
  if (n < 0)
    {
      dst_gone (c);
      return;
    }
  c->off += (size_t) n;
  c->len -= (size_t) n;
  if (c->len == 0 && c->eof && c->to_payload)
    end_close (&c->dst);
}

unsigned
cli_relay_poll_fill (struct cli_relay *r, struct pollfd *pf, bool *now)
{
  unsigned n = 0;
  *now = false;
  for (unsigned i = 0; i < r->n_ch; i++)
    {
      struct chan *c = &r->ch[i];
      if (c->src.fd >= 0 && !c->eof && read_size (c) > 0)
        {
          pf[n] = (struct pollfd) { .fd = c->src.fd, .events = POLLIN };
          r->polled[n].ch = i;
          r->polled[n++].src = true;
          *now |= c->draining;
        }
      if (c->dst.fd >= 0 && c->len > 0)
        {
          pf[n] = (struct pollfd) { .fd = c->dst.fd, .events = POLLOUT };
          r->polled[n].ch = i;
          r->polled[n++].src = false;
          *now |= c->draining && !c->keep_waiting;
        }
    }
  return n;
}

void
cli_relay_pump (struct cli_relay *r, const struct pollfd *pf, unsigned n)
{
  for (unsigned k = 0; k < n; k++)
    {
      struct chan *c = &r->ch[r->polled[k].ch];
      bool ready = pf[k].revents != 0;
      if (r->polled[k].src)
        {
          if (ready || c->draining)
            src_read (c);
        }
      else if (ready)
        dst_write (c);
      else
        drop_if_killed (c);
    }
}

void
cli_relay_sandbox_ended (struct cli_relay *r, bool keep_waiting)
{
  struct chan *in = &r->ch[IN];
  in->off = in->len = 0;
  end_close (&in->src);
  end_close (&in->dst);
  in->eof = true;
  for (unsigned i = OUT; i < r->n_ch; i++)
    {
      r->ch[i].draining = true;
      r->ch[i].keep_waiting = keep_waiting;
    }
}

bool
cli_relay_busy (const struct cli_relay *r)
{
  for (unsigned i = OUT; i < r->n_ch; i++)
    {
      const struct chan *c = &r->ch[i];
      if ((c->src.fd >= 0 && !c->eof) || (c->len > 0 && c->dst.fd >= 0))
        return true;
    }
  return false;
}

void
cli_relay_free (struct cli_relay *r)
{
  if (r == NULL)
    return;
  close_payload_ends (r);
  for (unsigned i = 0; i < 3; i++)
    {
      end_close (&r->ch[i].src);
      end_close (&r->ch[i].dst);
      free (r->ch[i].buf);
    }
  free (r);
}
