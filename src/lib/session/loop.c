/* A small epoll loop.  Handlers removed while events are being dispatched
 * are only marked dead and freed after the batch, so an event already
 * returned by epoll_wait for a removed descriptor is skipped safely. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "session/internal.h"

struct handler {
  int fd;
  bool dead;
  securer_loop_fn fn;
  void *data;
  struct handler *next;
};

struct securer_loop {
  int epfd;
  struct handler *live;   /* registered handlers */
  struct handler *dead;   /* removed, freed after the current batch */
  int depth;              /* nesting of run_once (a handler may run the loop) */
};

int
securer_loop_new (struct securer_loop **out, securer_err_t *err)
{
  struct securer_loop *l = calloc (1, sizeof *l);
  if (l == NULL)
    return securer_error_set (err, ENOMEM, "event loop");
  l->epfd = epoll_create1 (EPOLL_CLOEXEC);
  if (l->epfd < 0)
    {
      int e = errno;
      free (l);
      return securer_error_set (err, e, "event loop: epoll_create1");
    }
  *out = l;
  return 0;
}

int
securer_loop_fd (const struct securer_loop *l)
{
  return l->epfd;
}

static struct handler *
find (struct securer_loop *l, int fd)
{
  for (struct handler *h = l->live; h; h = h->next)
    if (h->fd == fd)
      return h;
  return NULL;
}

int
securer_loop_add (struct securer_loop *l, int fd, uint32_t events, securer_loop_fn fn,
                  void *userdata, securer_err_t *err)
{
  struct handler *h = calloc (1, sizeof *h);
  if (h == NULL)
    return securer_error_set (err, ENOMEM, "event loop");
  h->fd = fd;
  h->fn = fn;
  h->data = userdata;
  struct epoll_event ev = { .events = events, .data.ptr = h };
  if (epoll_ctl (l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
    {
      int e = errno;
      free (h);
      return securer_error_set (err, e, "event loop: watch fd %d", fd);
    }
  h->next = l->live;
  l->live = h;
  return 0;
}

int
securer_loop_mod (struct securer_loop *l, int fd, uint32_t events, securer_err_t *err)
{
  struct handler *h = find (l, fd);
  if (h == NULL)
    return securer_error_set (err, ENOENT, "event loop: fd %d not watched", fd);
  struct epoll_event ev = { .events = events, .data.ptr = h };
  if (epoll_ctl (l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
    return securer_error_set (err, errno, "event loop: modify fd %d", fd);
  return 0;
}

void
securer_loop_del (struct securer_loop *l, int fd)
{
  struct handler **pp = &l->live;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->fd == fd)
      {
        struct handler *h = *pp;
        *pp = h->next;
        epoll_ctl (l->epfd, EPOLL_CTL_DEL, fd, NULL);
        h->dead = true;
        h->next = l->dead;
        l->dead = h;
        break;
      }
  if (l->depth == 0)
    while (l->dead)
      {
        struct handler *h = l->dead;
        l->dead = h->next;
        free (h);
      }
}

int
securer_loop_run_once (struct securer_loop *l, int timeout_ms, securer_err_t *err)
{
  struct epoll_event evs[16];
  int n = epoll_wait (l->epfd, evs, 16, timeout_ms);
  if (n < 0)
    {
      if (errno == EINTR)
        return 0;
      return securer_error_set (err, errno, "event loop: epoll_wait");
    }
  l->depth++;
  for (int i = 0; i < n; i++)
    {
      struct handler *h = evs[i].data.ptr;
      if (!h->dead)
        h->fn (h->data, evs[i].events);
    }
  l->depth--;
  if (l->depth == 0)
    while (l->dead)
      {
        struct handler *h = l->dead;
        l->dead = h->next;
        free (h);
      }
  return n;
}

void
securer_loop_free (struct securer_loop *l)
{
  if (l == NULL)
    return;
  while (l->live)
    {
      struct handler *h = l->live;
      l->live = h->next;
      free (h);
    }
  while (l->dead)
    {
      struct handler *h = l->dead;
      l->dead = h->next;
      free (h);
    }
  close (l->epfd);
  free (l);
}

int
securer_random_hex (char *buf, size_t n, securer_err_t *err)
{
  unsigned char raw[64];
  if (n > sizeof raw)
    return securer_error_set (err, EINVAL, "random: too many bytes");
  size_t got = 0;
  while (got < n)
    {
      ssize_t r = getrandom (raw + got, n - got, 0);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return securer_error_set (err, errno, "getrandom");
        }
      got += (size_t) r;
    }
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++)
    {
      buf[2 * i] = hex[raw[i] >> 4];
      buf[2 * i + 1] = hex[raw[i] & 15];
    }
  buf[2 * n] = '\0';
  return 0;
}

uint64_t
securer_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}
