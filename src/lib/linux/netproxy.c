/* The filtering proxy of `network allow` (netproxy.h says what it is).
 *
 * Everything the sandbox sends here is hostile input parsed by the
 * supervisor: request heads are bounded (PROXY_HEAD_MAX), names are
 * checked by the policy's parser before anything is resolved, and the
 * state of one connection is two fixed buffers.  A destination is decided
 * twice: by the name or address the sandbox asked for, then by every
 * address the name resolved to (netrule.c says why). */
#include <config.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "linux/netproxy.h"

#define PROXY_BUF 65536
#define PROXY_HEAD_MAX 8192
#define PROXY_HOSTS_MAX 1024  /* entries read from SECURER_NET_HOSTS */

enum tag_kind { TAG_LISTEN, TAG_TIMER, TAG_RESOLVED, TAG_CLIENT, TAG_SERVER };

struct np_conn;
struct tag {
  enum tag_kind kind;
  struct np_conn *c;
};

enum conn_state {
  ST_HEAD,        /* reading the request (HTTP head or SOCKS greeting/request) */
  ST_RESOLVING,   /* waiting for the resolver */
  ST_CONNECTING,  /* non-blocking connect to cand[next_cand - 1] */
  ST_TUNNEL,      /* bytes both ways */
  ST_CLOSING,     /* flushing a refusal to the client, then close */
};

enum conn_via { VIA_NONE, VIA_CONNECT, VIA_HTTP, VIA_SOCKS };

struct np_job;

struct np_conn {
  struct securer_netproxy *px;
  struct np_conn *prev, *next;
  int cfd, sfd;
  struct tag ctag, stag;
  enum conn_state st;
  enum conn_via via;
  bool socks_greeted;
  char host[256];
  uint16_t port;
  struct sockaddr_storage cand[8];
  unsigned n_cand, next_cand;
  struct np_job *job;
  char cbuf[PROXY_BUF];  /* client -> server (or the request being read) */
  size_t clen;
  char sbuf[PROXY_BUF];  /* server -> client (or a reply to send) */
  size_t slen;
  bool c_eof, s_eof, c_shut, s_shut;
  bool c_reg, s_reg;     /* registered with the proxy's epoll */
  bool dead;             /* freed at the end of this dispatch */
  uint64_t last_ns;
};

/* ---- the resolver thread -------------------------------------------------- */

/* Where finished jobs of one proxy go; shared with the resolver threads,
 * so it outlives the proxy while a job of it is out. */
struct mailbox {
  pthread_mutex_t mu;
  int efd;
  bool dead;
  unsigned refs;
  struct np_job *done;
};

struct np_job {
  struct np_job *next;
  struct mailbox *mb;
  struct np_conn *conn;   /* NULL once cancelled (under mb->mu) */
  char host[256];
  struct addrinfo *res;
  int gai;
};

#define RESOLVER_THREADS 2

static pthread_mutex_t rq_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rq_cv = PTHREAD_COND_INITIALIZER;
static struct np_job *rq_head, *rq_tail;
static unsigned rq_threads;

static void
mailbox_unref (struct mailbox *mb)
{
  pthread_mutex_lock (&mb->mu);
  bool last = --mb->refs == 0;
  pthread_mutex_unlock (&mb->mu);
  if (last)
    {
      close (mb->efd);
      pthread_mutex_destroy (&mb->mu);
      free (mb);
    }
}

static void *
resolver_main (void *arg)
{
  (void) arg;
  for (;;)
    {
      pthread_mutex_lock (&rq_mu);
      while (rq_head == NULL)
        pthread_cond_wait (&rq_cv, &rq_mu);
      struct np_job *j = rq_head;
      rq_head = j->next;
      if (rq_head == NULL)
        rq_tail = NULL;
      pthread_mutex_unlock (&rq_mu);

      pthread_mutex_lock (&j->mb->mu);
      bool wanted = j->conn != NULL && !j->mb->dead;
      pthread_mutex_unlock (&j->mb->mu);
      if (wanted)
        {
          struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                                    .ai_flags = AI_ADDRCONFIG };
          j->gai = getaddrinfo (j->host, NULL, &hints, &j->res);
        }
      struct mailbox *mb = j->mb;
      pthread_mutex_lock (&mb->mu);
      if (j->conn == NULL || mb->dead)
        {
          if (j->res)
            freeaddrinfo (j->res);
          free (j);
        }
      else
        {
          j->next = mb->done;
          mb->done = j;
          uint64_t one = 1;
          (void) !write (mb->efd, &one, sizeof one);
        }
      pthread_mutex_unlock (&mb->mu);
      mailbox_unref (mb);
    }
  return NULL;
}

static int
resolver_submit (struct np_job *j)
{
  pthread_mutex_lock (&rq_mu);
  int rc = 0;
  if (rq_threads < RESOLVER_THREADS)
    {
      pthread_t t;
      pthread_attr_t a;
      pthread_attr_init (&a);
      pthread_attr_setdetachstate (&a, PTHREAD_CREATE_DETACHED);
      /* getaddrinfo wants a modest stack; the default 8 MiB is address
       * space the process need not give. */
      pthread_attr_setstacksize (&a, 256 * 1024);
      /* Every signal blocked: the caller's handlers run on its threads. */
      sigset_t all, old;
      sigfillset (&all);
      pthread_sigmask (SIG_BLOCK, &all, &old);
      if (pthread_create (&t, &a, resolver_main, NULL) == 0)
        rq_threads++;
      else if (rq_threads == 0)
        rc = -1;
      pthread_sigmask (SIG_SETMASK, &old, NULL);
      pthread_attr_destroy (&a);
    }
  if (rc == 0)
    {
      j->next = NULL;
      if (rq_tail)
        rq_tail->next = j;
      else
        rq_head = j;
      rq_tail = j;
      pthread_cond_signal (&rq_cv);
    }
  pthread_mutex_unlock (&rq_mu);
  return rc;
}

/* ---- the proxy ------------------------------------------------------------ */

struct host_entry {
  char *name;
  struct sockaddr_storage addr;
};

struct denial {
  char host[256];
  uint16_t port;
  enum securer_net_verdict verdict;
  uint64_t count;
};

struct securer_netproxy {
  const struct securer_policy *p;
  int epfd, lfd, tfd;
  struct mailbox *mb;
  struct tag ltag, ttag, rtag;
  struct np_conn *conns;
  unsigned n_conns;
  struct np_conn *grave;       /* closed during this dispatch, freed at its end */
  unsigned max_conns;          /* the policy's network limits, defaults filled in */
  uint64_t max_bytes, idle_ns;
  bool timer_armed;
  uint64_t bytes;
  uint64_t allowed, refused_busy, refused_bytes, failed;
  struct denial denied[SECURER_NETPROXY_MAX_DENIED];
  unsigned n_denied;
  uint64_t denied_other;       /* denials past the kept ones */
  struct host_entry *hosts;    /* SECURER_NET_HOSTS, or NULL: DNS */
  size_t n_hosts;
  bool hosts_only;
  void (*on_net) (void *ctx, const struct securer_net_event *ev);
  void *ctx;
};

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static const char *const via_names[] = { "?", "connect", "http", "socks" };

static void
tell (struct np_conn *c, enum securer_net_verdict v, const char *addr, const char *reason)
{
  struct securer_netproxy *px = c->px;
  if (px->on_net == NULL)
    return;
  struct securer_net_event ev = { c->host, c->port, via_names[c->via], addr, v,
                                  reason ? reason : securer_net_verdict_text (v) };
  px->on_net (px->ctx, &ev);
}

static void
record_denial (struct securer_netproxy *px, const char *host, uint16_t port, enum securer_net_verdict v)
{
  for (unsigned i = 0; i < px->n_denied; i++)
    if (px->denied[i].port == port && px->denied[i].verdict == v && strcmp (px->denied[i].host, host) == 0)
      {
        px->denied[i].count++;
        return;
      }
  if (px->n_denied == SECURER_NETPROXY_MAX_DENIED)
    {
      px->denied_other++;
      return;
    }
  struct denial *d = &px->denied[px->n_denied++];
  snprintf (d->host, sizeof d->host, "%s", host);
  d->port = port;
  d->verdict = v;
  d->count = 1;
}

static void
ep_set (struct securer_netproxy *px, int fd, struct tag *t, uint32_t events, bool add)
{
  struct epoll_event ev = { .events = events, .data.ptr = t };
  (void) epoll_ctl (px->epfd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev);
}

/* Registered while it waits for something, and only then: a socket whose
 * peer is gone reports EPOLLHUP whatever it was asked for. */
static void
ep_want (struct securer_netproxy *px, int fd, struct tag *t, uint32_t events, bool *reg)
{
  if (events == 0)
    {
      if (*reg)
        (void) epoll_ctl (px->epfd, EPOLL_CTL_DEL, fd, NULL);
      *reg = false;
      return;
    }
  ep_set (px, fd, t, events, !*reg);
  *reg = true;
}

/* What each side waits for, from the buffers' state. */
static void
conn_rearm (struct np_conn *c)
{
  uint32_t ce = 0, se = 0;
  switch (c->st)
    {
    case ST_HEAD:
      ce = EPOLLIN;
      break;
    case ST_RESOLVING:
      ce = EPOLLRDHUP;  /* the client giving up */
      break;
    case ST_CONNECTING:
      ce = EPOLLRDHUP;
      se = EPOLLOUT;
      break;
    case ST_TUNNEL:
      if (!c->c_eof && c->clen < sizeof c->cbuf)
        ce |= EPOLLIN;
      if (c->slen > 0)
        ce |= EPOLLOUT;
      if (!c->s_eof && c->slen < sizeof c->sbuf)
        se |= EPOLLIN;
      if (c->clen > 0)
        se |= EPOLLOUT;
      break;
    case ST_CLOSING:
      ce = c->slen > 0 ? EPOLLOUT : 0;
      break;
    }
  ep_want (c->px, c->cfd, &c->ctag, ce, &c->c_reg);
  if (c->sfd >= 0)
    ep_want (c->px, c->sfd, &c->stag, se, &c->s_reg);
}

static void
close_server (struct np_conn *c)
{
  if (c->sfd < 0)
    return;
  ep_want (c->px, c->sfd, &c->stag, 0, &c->s_reg);
  close (c->sfd);
  c->sfd = -1;
}

static void
conn_free (struct np_conn *c)
{
  struct securer_netproxy *px = c->px;
  if (c->dead)
    return;
  if (c->job != NULL)
    {
      pthread_mutex_lock (&px->mb->mu);
      c->job->conn = NULL;  /* the resolver or the done list drops it */
      pthread_mutex_unlock (&px->mb->mu);
      c->job = NULL;
    }
  ep_want (px, c->cfd, &c->ctag, 0, &c->c_reg);
  close (c->cfd);
  close_server (c);
  if (c->prev)
    c->prev->next = c->next;
  else
    px->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  px->n_conns--;
  /* Events of this batch may still name it. */
  c->dead = true;
  c->next = px->grave;
  px->grave = c;
}

/* Queues a reply for the client and closes once it is out. */
static void
conn_refuse (struct np_conn *c, const char *reply, size_t len)
{
  /* After what is still queued (a SOCKS method reply). */
  if (len > sizeof c->sbuf - c->slen)
    len = sizeof c->sbuf - c->slen;
  memcpy (c->sbuf + c->slen, reply, len);
  c->slen += len;
  c->st = ST_CLOSING;
  close_server (c);
  conn_rearm (c);
}

static const unsigned char socks_fail[] = { 5, 1, 0, 1, 0, 0, 0, 0, 0, 0 };

/* SOCKS5 reply codes (RFC 1928 section 6). */
#define SOCKS_GENERAL 1
#define SOCKS_NOT_ALLOWED 2
#define SOCKS_HOST_UNREACHABLE 4
#define SOCKS_REFUSED 5
#define SOCKS_CMD 7
#define SOCKS_ATYP 8

static void
refuse_socks (struct np_conn *c, unsigned code)
{
  unsigned char r[sizeof socks_fail];
  memcpy (r, socks_fail, sizeof r);
  r[1] = (unsigned char) code;
  conn_refuse (c, (const char *) r, sizeof r);
}

static void
refuse_http (struct np_conn *c, int status, const char *what, const char *detail)
{
  char body[512], reply[1024];
  int bn = snprintf (body, sizeof body, "securer: %s\n", detail);
  if (bn < 0 || (size_t) bn >= sizeof body)
    bn = (int) strlen (body);
  int n = snprintf (reply, sizeof reply,
                    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                    "Content-Length: %d\r\n\r\n%s",
                    status, what, bn, body);
  if (n < 0 || (size_t) n >= sizeof reply)
    n = (int) strlen (reply);
  conn_refuse (c, reply, (size_t) n);
}

/* The refusal of a destination the policy does not allow. */
static void
deny (struct np_conn *c, enum securer_net_verdict v)
{
  struct securer_netproxy *px = c->px;
  record_denial (px, c->host, c->port, v);
  tell (c, v, NULL, NULL);
  if (c->via == VIA_SOCKS)
    {
      refuse_socks (c, SOCKS_NOT_ALLOWED);
      return;
    }
  char detail[400];
  snprintf (detail, sizeof detail, "%s:%u is not allowed by the sandbox's network policy (%s)", c->host,
            c->port, securer_net_verdict_text (v));
  refuse_http (c, 403, "Forbidden", detail);
}

static void
fail_upstream (struct np_conn *c, const char *why, unsigned socks_code)
{
  c->px->failed++;
  tell (c, SECURER_NET_ALLOWED, NULL, why);
  if (c->via == VIA_SOCKS)
    {
      refuse_socks (c, socks_code);
      return;
    }
  char detail[400];
  snprintf (detail, sizeof detail, "%s:%u: %s", c->host, c->port, why);
  refuse_http (c, 502, "Bad Gateway", detail);
}

/* ---- connecting ---------------------------------------------------------- */

static void
addr_text (const struct sockaddr_storage *ss, char *out, size_t cap)
{
  const void *a = ss->ss_family == AF_INET ? (const void *) &((const struct sockaddr_in *) ss)->sin_addr
                                           : (const void *) &((const struct sockaddr_in6 *) ss)->sin6_addr;
  if (inet_ntop (ss->ss_family, a, out, (socklen_t) cap) == NULL)
    snprintf (out, cap, "?");
}

static void try_next_candidate (struct np_conn *c, int last_errno);

static void
start_connect (struct np_conn *c)
{
  while (c->next_cand < c->n_cand)
    {
      const struct sockaddr_storage *ss = &c->cand[c->next_cand++];
      int fd = socket (ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0)
        continue;
      socklen_t len = ss->ss_family == AF_INET ? sizeof (struct sockaddr_in) : sizeof (struct sockaddr_in6);
      int r = connect (fd, (const struct sockaddr *) ss, len);
      if (r < 0 && errno != EINPROGRESS)
        {
          close (fd);
          continue;
        }
      c->sfd = fd;
      c->s_reg = false;
      c->st = ST_CONNECTING;
      conn_rearm (c);
      return;
    }
  try_next_candidate (c, ECONNREFUSED);
}

static void
try_next_candidate (struct np_conn *c, int last_errno)
{
  close_server (c);
  if (c->next_cand < c->n_cand)
    {
      start_connect (c);
      return;
    }
  char why[128];
  snprintf (why, sizeof why, "cannot connect: %s", strerror (last_errno));
  fail_upstream (c, why, last_errno == ECONNREFUSED ? SOCKS_REFUSED : SOCKS_HOST_UNREACHABLE);
}

/* The name's addresses, each decided again: an allowed name may still
 * point somewhere the policy keeps closed. */
static void
take_addresses (struct np_conn *c, const struct addrinfo *res)
{
  enum securer_net_verdict worst = SECURER_NET_DENIED_NO_RULE;
  c->n_cand = c->next_cand = 0;
  for (const struct addrinfo *a = res; a != NULL && c->n_cand < 8; a = a->ai_next)
    {
      if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
        continue;
      struct sockaddr_storage ss;
      memset (&ss, 0, sizeof ss);
      memcpy (&ss, a->ai_addr, a->ai_addrlen);
      if (ss.ss_family == AF_INET)
        ((struct sockaddr_in *) &ss)->sin_port = htons (c->port);
      else
        ((struct sockaddr_in6 *) &ss)->sin6_port = htons (c->port);
      enum securer_net_verdict v = securer_net_decide_addr (c->px->p, &ss, true, NULL);
      if (v == SECURER_NET_ALLOWED)
        c->cand[c->n_cand++] = ss;
      else
        worst = v;
    }
  if (c->n_cand == 0)
    {
      deny (c, worst == SECURER_NET_DENIED_NO_RULE ? SECURER_NET_DENIED_PRIVATE : worst);
      return;
    }
  start_connect (c);
}

static bool
hosts_lookup (struct securer_netproxy *px, const char *name, struct addrinfo *out, struct sockaddr_storage *ss)
{
  size_t n = 0;
  struct addrinfo *prev = NULL;
  for (size_t i = 0; i < px->n_hosts && n < 8; i++)
    if (strcasecmp (px->hosts[i].name, name) == 0)
      {
        ss[n] = px->hosts[i].addr;
        struct addrinfo *a = &out[n];
        memset (a, 0, sizeof *a);
        a->ai_family = ss[n].ss_family;
        a->ai_addr = (struct sockaddr *) &ss[n];
        a->ai_addrlen = ss[n].ss_family == AF_INET ? sizeof (struct sockaddr_in) : sizeof (struct sockaddr_in6);
        if (prev)
          prev->ai_next = a;
        prev = a;
        n++;
      }
  return n > 0;
}

/* The request named its destination: decide, then resolve or connect. */
static void
destination_known (struct np_conn *c)
{
  struct securer_netproxy *px = c->px;
  for (char *h = c->host; *h; h++)
    *h = (char) tolower ((unsigned char) *h);
  size_t hl = strlen (c->host);
  if (hl > 0 && c->host[hl - 1] == '.')
    c->host[hl - 1] = '\0';
  if (c->port == 0)
    {
      deny (c, SECURER_NET_DENIED_NO_RULE);
      return;
    }
  /* A name must be one the policy could have written; anything else (NUL
   * bytes, spaces, 300 characters) is refused before it reaches a
   * resolver. */
  struct securer_net_rule probe;
  const char *why;
  char lit[270];
  snprintf (lit, sizeof lit, strchr (c->host, ':') ? "[%s]" : "%s", c->host);
  if (securer_net_rule_parse (lit, false, &probe, &why) < 0)
    {
      deny (c, SECURER_NET_DENIED_NO_RULE);
      return;
    }
  bool literal = probe.kind == SECURER_NET_RULE_ADDR;
  securer_net_rule_clear (&probe);
  enum securer_net_verdict v = securer_net_decide_name (px->p, c->host, c->port, NULL);
  if (v != SECURER_NET_ALLOWED)
    {
      deny (c, v);
      return;
    }
  if (literal)
    {
      struct addrinfo hints = { .ai_flags = AI_NUMERICHOST, .ai_socktype = SOCK_STREAM };
      struct addrinfo *res = NULL;
      if (getaddrinfo (c->host, NULL, &hints, &res) != 0)
        {
          deny (c, SECURER_NET_DENIED_NO_RULE);
          return;
        }
      c->n_cand = c->next_cand = 0;
      memset (&c->cand[0], 0, sizeof c->cand[0]);
      memcpy (&c->cand[0], res->ai_addr, res->ai_addrlen);
      if (c->cand[0].ss_family == AF_INET)
        ((struct sockaddr_in *) &c->cand[0])->sin_port = htons (c->port);
      else
        ((struct sockaddr_in6 *) &c->cand[0])->sin6_port = htons (c->port);
      c->n_cand = 1;
      freeaddrinfo (res);
      start_connect (c);
      return;
    }
  if (px->hosts_only)
    {
      struct addrinfo ai[8];
      struct sockaddr_storage ss[8];
      if (!hosts_lookup (px, c->host, ai, ss))
        {
          fail_upstream (c, "cannot resolve the name (not in SECURER_NET_HOSTS)", SOCKS_HOST_UNREACHABLE);
          return;
        }
      take_addresses (c, ai);
      return;
    }
  struct np_job *j = calloc (1, sizeof *j);
  if (j == NULL)
    {
      fail_upstream (c, "out of memory", SOCKS_GENERAL);
      return;
    }
  snprintf (j->host, sizeof j->host, "%s", c->host);
  j->conn = c;
  j->mb = px->mb;
  pthread_mutex_lock (&px->mb->mu);
  px->mb->refs++;
  pthread_mutex_unlock (&px->mb->mu);
  if (resolver_submit (j) < 0)
    {
      mailbox_unref (px->mb);
      free (j);
      fail_upstream (c, "cannot start the resolver", SOCKS_GENERAL);
      return;
    }
  c->job = j;
  c->st = ST_RESOLVING;
  conn_rearm (c);
}

static void
take_resolved (struct securer_netproxy *px)
{
  uint64_t n;
  (void) !read (px->mb->efd, &n, sizeof n);
  pthread_mutex_lock (&px->mb->mu);
  struct np_job *done = px->mb->done;
  px->mb->done = NULL;
  pthread_mutex_unlock (&px->mb->mu);
  while (done != NULL)
    {
      struct np_job *j = done;
      done = j->next;
      struct np_conn *c = j->conn;
      if (c != NULL)
        {
          c->job = NULL;
          if (j->gai != 0)
            {
              char why[160];
              snprintf (why, sizeof why, "cannot resolve the name: %s", gai_strerror (j->gai));
              fail_upstream (c, why, SOCKS_HOST_UNREACHABLE);
            }
          else
            take_addresses (c, j->res);
        }
      if (j->res)
        freeaddrinfo (j->res);
      free (j);
    }
}

/* ---- requests ------------------------------------------------------------- */

/* "host:port" or "[v6]:port" into c->host/c->port; default_port when the
 * port is absent (0: required). */
static bool
split_hostport (struct np_conn *c, const char *s, size_t len, uint16_t default_port)
{
  const char *end = s + len, *colon = NULL, *hs = s, *he;
  if (len > 0 && s[0] == '[')
    {
      const char *rb = memchr (s, ']', len);
      if (rb == NULL)
        return false;
      hs = s + 1;
      he = rb;
      if (rb + 1 < end)
        {
          if (rb[1] != ':')
            return false;
          colon = rb + 1;
        }
    }
  else
    {
      colon = memchr (s, ':', len);
      he = colon ? colon : end;
    }
  size_t hl = (size_t) (he - hs);
  if (hl == 0 || hl >= sizeof c->host)
    return false;
  memcpy (c->host, hs, hl);
  c->host[hl] = '\0';
  if (memchr (c->host, '\0', hl) != NULL)
    return false;
  unsigned long port = default_port;
  if (colon != NULL)
    {
      port = 0;
      const char *p = colon + 1;
      if (p == end)
        return false;
      for (; p < end; p++)
        {
          if (*p < '0' || *p > '9' || (port = port * 10 + (unsigned long) (*p - '0')) > 65535)
            return false;
        }
    }
  if (port == 0 || port > 65535)
    return false;
  c->port = (uint16_t) port;
  return true;
}

static bool
header_is (const char *line, size_t len, const char *name)
{
  size_t n = strlen (name);
  return len > n && line[n] == ':' && strncasecmp (line, name, n) == 0;
}

/* A complete HTTP head is in cbuf[0, head_len).  CONNECT host:port, or an
 * absolute http:// URL rewritten to origin form for the server, with the
 * proxy's headers dropped and the connection closed after one request
 * (so that one connection cannot carry requests for other hosts). */
static void
http_request (struct np_conn *c, size_t head_len)
{
  char *buf = c->cbuf;
  char *eol = memchr (buf, '\n', head_len);
  size_t l0 = (size_t) (eol - buf);
  if (l0 > 0 && buf[l0 - 1] == '\r')
    l0--;
  char *sp1 = memchr (buf, ' ', l0);
  char *sp2 = sp1 ? memchr (sp1 + 1, ' ', l0 - (size_t) (sp1 + 1 - buf)) : NULL;
  if (sp1 == NULL || sp2 == NULL)
    {
      refuse_http (c, 400, "Bad Request", "malformed request line");
      return;
    }
  const char *target = sp1 + 1;
  size_t tlen = (size_t) (sp2 - target);
  size_t mlen = (size_t) (sp1 - buf);
  if (mlen == 7 && memcmp (buf, "CONNECT", 7) == 0)
    {
      c->via = VIA_CONNECT;
      if (!split_hostport (c, target, tlen, 0))
        {
          refuse_http (c, 400, "Bad Request", "CONNECT wants HOST:PORT");
          return;
        }
      /* Whatever came after the head is the tunnel's first bytes. */
      memmove (buf, buf + head_len, c->clen - head_len);
      c->clen -= head_len;
      destination_known (c);
      return;
    }
  c->via = VIA_HTTP;
  if (tlen < 8 || strncasecmp (target, "http://", 7) != 0)
    {
      refuse_http (c, 400, "Bad Request",
                   "a proxy request names an absolute http:// URL (https goes through CONNECT)");
      return;
    }
  const char *auth = target + 7, *tend = target + tlen;
  const char *path = memchr (auth, '/', (size_t) (tend - auth));
  const char *q = memchr (auth, '?', (size_t) (tend - auth));
  if (q != NULL && (path == NULL || q < path))
    path = q;
  const char *aend = path ? path : tend;
  const char *at = memchr (auth, '@', (size_t) (aend - auth));
  if (at != NULL)
    {
      refuse_http (c, 400, "Bad Request", "credentials in the URL are not forwarded");
      return;
    }
  if (!split_hostport (c, auth, (size_t) (aend - auth), 80))
    {
      refuse_http (c, 400, "Bad Request", "malformed host in the URL");
      return;
    }
  /* The new head: method, origin-form target, version; then the headers
   * but the proxy's and the connection's own. */
  char out[PROXY_HEAD_MAX + 64];
  size_t o = 0;
  int n = snprintf (out, sizeof out, "%.*s %s%.*s %.*s\r\n", (int) mlen, buf, path && *path == '?' ? "/" : "",
                    path ? (int) (tend - path) : 1, path ? path : "/", (int) (l0 - (size_t) (sp2 + 1 - buf)),
                    sp2 + 1);
  if (n < 0 || (size_t) n >= sizeof out)
    {
      refuse_http (c, 414, "URI Too Long", "request line too long");
      return;
    }
  o = (size_t) n;
  const char *line = eol + 1, *hend = buf + head_len;
  while (line < hend)
    {
      const char *le = memchr (line, '\n', (size_t) (hend - line));
      if (le == NULL)
        break;
      size_t ll = (size_t) (le - line);
      size_t cl = ll > 0 && line[ll - 1] == '\r' ? ll - 1 : ll;
      if (cl == 0)
        break;
      if (!header_is (line, cl, "Proxy-Connection") && !header_is (line, cl, "Proxy-Authorization")
          && !header_is (line, cl, "Connection") && !header_is (line, cl, "Keep-Alive"))
        {
          if (o + cl + 2 >= sizeof out)
            {
              refuse_http (c, 431, "Request Header Fields Too Large", "request head too large");
              return;
            }
          memcpy (out + o, line, cl);
          o += cl;
          out[o++] = '\r';
          out[o++] = '\n';
        }
      line = le + 1;
    }
  static const char close_hdr[] = "Connection: close\r\n\r\n";
  size_t rest = c->clen - head_len;
  if (o + sizeof close_hdr - 1 + rest > sizeof c->cbuf)
    {
      refuse_http (c, 431, "Request Header Fields Too Large", "request head too large");
      return;
    }
  memcpy (out + o, close_hdr, sizeof close_hdr - 1);
  o += sizeof close_hdr - 1;
  memmove (buf + o, buf + head_len, rest);
  memcpy (buf, out, o);
  c->clen = o + rest;
  destination_known (c);
}

/* SOCKS5 (RFC 1928), no authentication, CONNECT only.  Returns false
 * while more bytes are needed. */
static bool
socks_step (struct np_conn *c)
{
  unsigned char *b = (unsigned char *) c->cbuf;
  c->via = VIA_SOCKS;
  if (!c->socks_greeted)
    {
      if (c->clen < 2 || c->clen < 2u + b[1])
        return false;
      bool none = false;
      for (unsigned i = 0; i < b[1]; i++)
        none |= b[2 + i] == 0;
      size_t used = 2u + b[1];
      if (!none)
        {
          static const char no_method[] = { 5, (char) 0xff };
          conn_refuse (c, no_method, 2);
          return true;
        }
      memmove (b, b + used, c->clen - used);
      c->clen -= used;
      c->socks_greeted = true;
      /* The method reply goes out with the request's answer: both are
       * small, and a client waits for this one first. */
      c->sbuf[0] = 5;
      c->sbuf[1] = 0;
      c->slen = 2;
    }
  if (c->clen < 5)
    return false;
  if (b[0] != 5)
    {
      refuse_socks (c, SOCKS_GENERAL);
      return true;
    }
  if (b[1] != 1)
    {
      refuse_socks (c, SOCKS_CMD);
      return true;
    }
  size_t need;
  switch (b[3])
    {
    case 1:
      need = 4 + 4 + 2;
      break;
    case 3:
      need = 4 + 1 + (size_t) b[4] + 2;
      break;
    case 4:
      need = 4 + 16 + 2;
      break;
    default:
      refuse_socks (c, SOCKS_ATYP);
      return true;
    }
  if (c->clen < need)
    return false;
  c->port = (uint16_t) ((b[need - 2] << 8) | b[need - 1]);
  if (b[3] == 3)
    {
      if (b[4] == 0 || memchr (b + 5, '\0', b[4]) != NULL)
        {
          refuse_socks (c, SOCKS_NOT_ALLOWED);
          return true;
        }
      memcpy (c->host, b + 5, b[4]);
      c->host[b[4]] = '\0';
    }
  else if (inet_ntop (b[3] == 1 ? AF_INET : AF_INET6, b + 4, c->host, sizeof c->host) == NULL)
    {
      refuse_socks (c, SOCKS_GENERAL);
      return true;
    }
  memmove (b, b + need, c->clen - need);
  c->clen -= need;
  destination_known (c);
  return true;
}

/* The head state: more bytes of the request arrived. */
static void
head_progress (struct np_conn *c)
{
  if (c->clen == 0)
    return;
  if ((unsigned char) c->cbuf[0] == 5)
    {
      (void) socks_step (c);
      if (c->st == ST_HEAD && c->clen >= 512)
        refuse_socks (c, SOCKS_GENERAL);
      return;
    }
  size_t scan = c->clen < PROXY_HEAD_MAX ? c->clen : PROXY_HEAD_MAX;
  for (size_t i = 3; i < scan; i++)
    if (c->cbuf[i] == '\n' && c->cbuf[i - 1] == '\r' && c->cbuf[i - 2] == '\n' && c->cbuf[i - 3] == '\r')
      {
        http_request (c, i + 1);
        return;
      }
  for (size_t i = 1; i < scan; i++)
    if (c->cbuf[i] == '\n' && c->cbuf[i - 1] == '\n')
      {
        http_request (c, i + 1);
        return;
      }
  if (c->clen >= PROXY_HEAD_MAX)
    refuse_http (c, 431, "Request Header Fields Too Large", "request head too large");
}

/* ---- moving bytes ---------------------------------------------------------- */

static bool
over_budget (struct np_conn *c, size_t n)
{
  struct securer_netproxy *px = c->px;
  px->bytes += n;
  return px->bytes > px->max_bytes;
}

static bool
pump (int from, char *buf, size_t *len, size_t cap, bool *eof, struct np_conn *c)
{
  if (*eof || *len >= cap)
    return true;
  ssize_t n = recv (from, buf + *len, cap - *len, MSG_DONTWAIT);
  if (n > 0)
    {
      *len += (size_t) n;
      c->last_ns = now_ns ();
      return !over_budget (c, (size_t) n);
    }
  if (n == 0)
    *eof = true;
  else if (errno != EAGAIN && errno != EINTR)
    return false;
  return true;
}

static bool
drain (int to, char *buf, size_t *len)
{
  if (*len == 0)
    return true;
  ssize_t n = send (to, buf, *len, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n > 0)
    {
      memmove (buf, buf + n, *len - (size_t) n);
      *len -= (size_t) n;
      return true;
    }
  return n < 0 && (errno == EAGAIN || errno == EINTR);
}

/* Returns false when the connection is done (freed). */
static bool
tunnel (struct np_conn *c)
{
  if (!pump (c->cfd, c->cbuf, &c->clen, sizeof c->cbuf, &c->c_eof, c)
      || !pump (c->sfd, c->sbuf, &c->slen, sizeof c->sbuf, &c->s_eof, c) || !drain (c->sfd, c->cbuf, &c->clen)
      || !drain (c->cfd, c->sbuf, &c->slen))
    {
      if (c->px->bytes > c->px->max_bytes)
        c->px->refused_bytes++;
      conn_free (c);
      return false;
    }
  /* An end of file passes on once what came before it is out. */
  if (c->c_eof && c->clen == 0 && !c->s_shut)
    {
      shutdown (c->sfd, SHUT_WR);
      c->s_shut = true;
    }
  if (c->s_eof && c->slen == 0 && !c->c_shut)
    {
      shutdown (c->cfd, SHUT_WR);
      c->c_shut = true;
    }
  if (c->c_shut && c->s_shut)
    {
      conn_free (c);
      return false;
    }
  conn_rearm (c);
  return true;
}

static void
connected (struct np_conn *c)
{
  int soerr = 0;
  socklen_t sl = sizeof soerr;
  if (getsockopt (c->sfd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
    soerr = errno;
  if (soerr != 0)
    {
      try_next_candidate (c, soerr);
      return;
    }
  char a[INET6_ADDRSTRLEN];
  addr_text (&c->cand[c->next_cand - 1], a, sizeof a);
  c->px->allowed++;
  tell (c, SECURER_NET_ALLOWED, a, NULL);
  if (c->via == VIA_CONNECT)
    {
      static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
      memcpy (c->sbuf, ok, sizeof ok - 1);
      c->slen = sizeof ok - 1;
    }
  else if (c->via == VIA_SOCKS)
    {
      static const unsigned char ok[] = { 5, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
      memcpy (c->sbuf + c->slen, ok, sizeof ok);
      c->slen += sizeof ok;
    }
  c->st = ST_TUNNEL;
  c->last_ns = now_ns ();
  (void) tunnel (c);
}

static void
arm_timer (struct securer_netproxy *px, bool on)
{
  if (px->timer_armed == on)
    return;
  struct itimerspec its;
  memset (&its, 0, sizeof its);
  if (on)
    {
      its.it_value.tv_sec = 1;
      its.it_interval.tv_sec = 1;
    }
  (void) timerfd_settime (px->tfd, 0, &its, NULL);
  px->timer_armed = on;
}

static void
accept_some (struct securer_netproxy *px)
{
  for (int k = 0; k < 16; k++)
    {
      int fd = accept4 (px->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0)
        return;
      if (px->n_conns >= px->max_conns || px->bytes > px->max_bytes)
        {
          if (px->n_conns >= px->max_conns)
            px->refused_busy++;
          else
            px->refused_bytes++;
          close (fd);
          continue;
        }
      struct np_conn *c = calloc (1, sizeof *c);
      if (c == NULL)
        {
          close (fd);
          continue;
        }
      c->px = px;
      c->cfd = fd;
      c->sfd = -1;
      c->ctag = (struct tag) { TAG_CLIENT, c };
      c->stag = (struct tag) { TAG_SERVER, c };
      c->st = ST_HEAD;
      c->last_ns = now_ns ();
      c->next = px->conns;
      if (px->conns)
        px->conns->prev = c;
      px->conns = c;
      px->n_conns++;
      conn_rearm (c);
    }
}

static void
expire_idle (struct securer_netproxy *px)
{
  uint64_t t;
  (void) !read (px->tfd, &t, sizeof t);
  uint64_t now = now_ns ();
  for (struct np_conn *c = px->conns, *next; c != NULL; c = next)
    {
      next = c->next;
      if (now - c->last_ns > px->idle_ns)
        conn_free (c);
    }
}

static void
on_client (struct np_conn *c, uint32_t events)
{
  switch (c->st)
    {
    case ST_HEAD:
      {
        ssize_t n = recv (c->cfd, c->cbuf + c->clen, PROXY_HEAD_MAX - c->clen, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
          {
            conn_free (c);
            return;
          }
        if (n > 0)
          {
            c->clen += (size_t) n;
            c->last_ns = now_ns ();
            if (over_budget (c, (size_t) n))
              {
                conn_free (c);
                return;
              }
            head_progress (c);
            if (c->st == ST_HEAD && c->slen > 0)
              {
                /* The SOCKS method reply, while the request is read. */
                (void) drain (c->cfd, c->sbuf, &c->slen);
              }
          }
        return;
      }
    case ST_TUNNEL:
      if ((events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN))
        {
          conn_free (c);  /* the client is gone both ways */
          return;
        }
      (void) tunnel (c);
      return;
    case ST_CLOSING:
      if (!drain (c->cfd, c->sbuf, &c->slen) || c->slen == 0 || (events & (EPOLLHUP | EPOLLERR)))
        {
          conn_free (c);
          return;
        }
      conn_rearm (c);
      return;
    case ST_RESOLVING:
    case ST_CONNECTING:
      /* The client gave up while its destination was pending. */
      if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        conn_free (c);
      return;
    }
}

static void
empty_grave (struct securer_netproxy *px)
{
  while (px->grave != NULL)
    {
      struct np_conn *c = px->grave;
      px->grave = c->next;
      free (c);
    }
}

static void
on_server (struct np_conn *c)
{
  if (c->st == ST_CONNECTING)
    connected (c);
  else if (c->st == ST_TUNNEL)
    (void) tunnel (c);
}

void
securer_netproxy_dispatch (struct securer_netproxy *px)
{
  struct epoll_event ev[32];
  int n = epoll_wait (px->epfd, ev, 32, 0);
  for (int i = 0; i < n; i++)
    {
      struct tag *t = ev[i].data.ptr;
      switch (t->kind)
        {
        case TAG_LISTEN:
          accept_some (px);
          break;
        case TAG_TIMER:
          expire_idle (px);
          break;
        case TAG_RESOLVED:
          take_resolved (px);
          break;
        case TAG_CLIENT:
        case TAG_SERVER:
          /* A connection freed by an earlier event of this batch has its
           * later events dropped. */
          if (t->c->dead)
            break;
          if (t->kind == TAG_CLIENT)
            on_client (t->c, ev[i].events);
          else
            on_server (t->c);
          break;
        }
    }
  empty_grave (px);
  arm_timer (px, px->n_conns > 0);
}

/* ---- life ----------------------------------------------------------------- */

/* SECURER_NET_HOSTS=FILE (hosts(5) format): names are resolved from FILE
 * alone, never by DNS.  For pinning names, and for tests, which must not
 * depend on a resolver. */
static int
read_hosts (struct securer_netproxy *px, const char *path, securer_err_t *err)
{
  FILE *f = fopen (path, "re");
  if (f == NULL)
    return securer_error_set (err, errno, "open SECURER_NET_HOSTS file %s", path);
  char line[1024];
  px->hosts_only = true;
  while (fgets (line, sizeof line, f) != NULL && px->n_hosts < PROXY_HOSTS_MAX)
    {
      char *hash = strchr (line, '#');
      if (hash)
        *hash = '\0';
      char *save = NULL, *addr = strtok_r (line, " \t\r\n", &save);
      if (addr == NULL)
        continue;
      struct sockaddr_storage ss;
      memset (&ss, 0, sizeof ss);
      if (inet_pton (AF_INET, addr, &((struct sockaddr_in *) &ss)->sin_addr) == 1)
        ss.ss_family = AF_INET;
      else if (inet_pton (AF_INET6, addr, &((struct sockaddr_in6 *) &ss)->sin6_addr) == 1)
        ss.ss_family = AF_INET6;
      else
        continue;
      for (char *name; (name = strtok_r (NULL, " \t\r\n", &save)) != NULL && px->n_hosts < PROXY_HOSTS_MAX;)
        {
          struct host_entry *h = realloc (px->hosts, (px->n_hosts + 1) * sizeof *h);
          if (h == NULL)
            break;
          px->hosts = h;
          h[px->n_hosts].name = strdup (name);
          h[px->n_hosts].addr = ss;
          if (h[px->n_hosts].name != NULL)
            px->n_hosts++;
        }
    }
  fclose (f);
  return 0;
}

int
securer_netproxy_listen (securer_err_t *err)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (SECURER_NET_PROXY_PORT),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int one = 1;
  if (fd < 0 || setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
      || bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen (fd, 64) < 0)
    {
      int e = errno;
      if (fd >= 0)
        close (fd);
      return securer_error_set (err, e, "network allow: listen on 127.0.0.1:%d for the proxy",
                                SECURER_NET_PROXY_PORT);
    }
  return fd;
}

int
securer_netproxy_new (const struct securer_policy *p, int listen_fd,
                      void (*on_net) (void *ctx, const struct securer_net_event *ev), void *ctx,
                      struct securer_netproxy **out, securer_err_t *err)
{
  struct securer_netproxy *px = calloc (1, sizeof *px);
  if (px == NULL)
    {
      close (listen_fd);
      return securer_error_set (err, ENOMEM, "network proxy");
    }
  px->p = p;
  px->lfd = listen_fd;
  px->max_conns = p->net_limits.connections ? p->net_limits.connections : SECURER_NET_DEFAULT_CONNECTIONS;
  px->max_bytes = p->net_limits.bytes ? p->net_limits.bytes : SECURER_NET_DEFAULT_BYTES;
  px->idle_ns = (p->net_limits.idle_ms ? p->net_limits.idle_ms : SECURER_NET_DEFAULT_IDLE_MS) * 1000000u;
  px->on_net = on_net;
  px->ctx = ctx;
  px->epfd = epoll_create1 (EPOLL_CLOEXEC);
  px->tfd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  px->mb = calloc (1, sizeof *px->mb);
  if (px->mb != NULL)
    {
      pthread_mutex_init (&px->mb->mu, NULL);
      px->mb->refs = 1;
      px->mb->efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
    }
  if (px->epfd < 0 || px->tfd < 0 || px->mb == NULL || px->mb->efd < 0)
    {
      int e = errno;
      securer_netproxy_free (px);
      return securer_error_set (err, e ? e : ENOMEM, "network proxy: set up its event loop");
    }
  px->ltag = (struct tag) { TAG_LISTEN, NULL };
  px->ttag = (struct tag) { TAG_TIMER, NULL };
  px->rtag = (struct tag) { TAG_RESOLVED, NULL };
  int fl = fcntl (listen_fd, F_GETFL);
  if (fl >= 0)
    (void) fcntl (listen_fd, F_SETFL, fl | O_NONBLOCK);
  ep_set (px, listen_fd, &px->ltag, EPOLLIN, true);
  ep_set (px, px->tfd, &px->ttag, EPOLLIN, true);
  ep_set (px, px->mb->efd, &px->rtag, EPOLLIN, true);
  const char *hosts = getenv ("SECURER_NET_HOSTS");
  if (hosts != NULL && *hosts != '\0' && read_hosts (px, hosts, err) < 0)
    {
      securer_netproxy_free (px);
      return -1;
    }
  *out = px;
  return 0;
}

int
securer_netproxy_fd (const struct securer_netproxy *px)
{
  return px->epfd;
}

static const char *const verdict_names[] = {
  [SECURER_NET_DENIED_NO_RULE] = "no-rule",
  [SECURER_NET_DENIED_RULE] = "deny-rule",
  [SECURER_NET_DENIED_PRIVATE] = "private-address",
  [SECURER_NET_ALLOWED] = "allowed",
};

void *
securer_netproxy_report (const struct securer_netproxy *px)
{
  json_t *d = json_array ();
  for (unsigned i = 0; d && i < px->n_denied; i++)
    json_array_append_new (d, json_pack ("{s:s,s:i,s:s,s:I}", "host", px->denied[i].host, "port",
                                         (int) px->denied[i].port, "reason", verdict_names[px->denied[i].verdict],
                                         "count", (json_int_t) px->denied[i].count));
  return json_pack ("{s:I,s:I,s:o,s:I,s:I,s:I,s:I}", "connections", (json_int_t) px->allowed, "failed",
                    (json_int_t) px->failed, "denied", d ? d : json_array (), "denied_not_listed",
                    (json_int_t) px->denied_other, "bytes", (json_int_t) px->bytes, "refused_busy",
                    (json_int_t) px->refused_busy, "refused_over_bytes", (json_int_t) px->refused_bytes);
}

void
securer_netproxy_free (struct securer_netproxy *px)
{
  if (px == NULL)
    return;
  while (px->conns != NULL)
    conn_free (px->conns);
  empty_grave (px);
  if (px->mb != NULL)
    {
      pthread_mutex_lock (&px->mb->mu);
      px->mb->dead = true;
      struct np_job *done = px->mb->done;
      px->mb->done = NULL;
      pthread_mutex_unlock (&px->mb->mu);
      while (done != NULL)
        {
          struct np_job *j = done;
          done = j->next;
          if (j->res)
            freeaddrinfo (j->res);
          free (j);
        }
      mailbox_unref (px->mb);
    }
  if (px->lfd >= 0)
    close (px->lfd);
  if (px->tfd >= 0)
    close (px->tfd);
  if (px->epfd >= 0)
    close (px->epfd);
  for (size_t i = 0; i < px->n_hosts; i++)
    free (px->hosts[i].name);
  free (px->hosts);
  free (px);
}
