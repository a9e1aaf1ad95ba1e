/* Sequential HTTP GETs from one process, each on a new connection, for
 * bench/netproxy.sh: the time per request and the bytes per second, with
 * no process start-up in the measure.
 *
 *   http-get MODE ADDR PORT HOST PATH N
 *
 * MODE direct: connect to ADDR:PORT and GET PATH; http: ADDR:PORT is a
 * proxy, GET http://HOST:PORT… through it; connect: CONNECT HOST:PORT
 * through the proxy, then GET.  (HOST's port is PORT2 in HOST, e.g.
 * api.test:8080.)  Prints "requests=N mean_us=… p50_us=… p99_us=…
 * bytes=… mib_s=…".  Only libc, linked statically, so it runs in any
 * sandbox view. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static int
send_all (int s, const char *b, size_t n)
{
  while (n > 0)
    {
      ssize_t w = write (s, b, n);
      if (w <= 0)
        return -1;
      b += w;
      n -= (size_t) w;
    }
  return 0;
}

/* Reads to the end of the stream; returns the bytes read, -1 on error.
 * until_head: stop after the first empty line (a CONNECT reply). */
static long long
read_reply (int s, int until_head)
{
  static char buf[1 << 16];
  long long total = 0;
  int state = 0;
  for (;;)
    {
      ssize_t r = until_head ? read (s, buf, 1) : read (s, buf, sizeof buf);
      if (r < 0)
        return -1;
      if (r == 0)
        return until_head ? -1 : total;
      total += r;
      if (until_head)
        {
          /* \r\n\r\n */
          state = (buf[0] == (state % 2 == 0 ? '\r' : '\n')) ? state + 1 : (buf[0] == '\r');
          if (state == 4)
            return total;
        }
    }
}

int
main (int argc, char **argv)
{
  if (argc != 7)
    {
      fprintf (stderr, "usage: http-get direct|http|connect ADDR PORT HOST:PORT PATH N\n");
      return 2;
    }
  const char *mode = argv[1], *host = argv[4], *path = argv[5];
  int n = atoi (argv[6]);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) atoi (argv[3])) };
  if (inet_pton (AF_INET, argv[2], &sa.sin_addr) != 1 || n <= 0)
    return 2;
  double *t = calloc ((size_t) n, sizeof *t);
  long long bytes = 0;
  double t_all = now_us ();
  char req[1024];
  for (int i = 0; i < n; i++)
    {
      double t0 = now_us ();
      int s = socket (AF_INET, SOCK_STREAM, 0);
      if (s < 0 || connect (s, (struct sockaddr *) &sa, sizeof sa) < 0)
        {
          perror ("connect");
          return 1;
        }
      if (strcmp (mode, "connect") == 0)
        {
          int k = snprintf (req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", host, host);
          if (send_all (s, req, (size_t) k) < 0 || read_reply (s, 1) < 0)
            {
              fprintf (stderr, "CONNECT failed\n");
              return 1;
            }
        }
      int k = strcmp (mode, "http") == 0
                ? snprintf (req, sizeof req, "GET http://%s%s HTTP/1.0\r\nHost: %s\r\n\r\n", host, path, host)
                : snprintf (req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, host);
      long long got;
      if (send_all (s, req, (size_t) k) < 0 || (got = read_reply (s, 0)) < 0)
        {
          fprintf (stderr, "GET failed\n");
          return 1;
        }
      bytes += got;
      close (s);
      t[i] = now_us () - t0;
    }
  t_all = now_us () - t_all;
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += t[i];
  qsort (t, (size_t) n, sizeof *t, cmp);
  printf ("requests=%d mean_us=%.1f p50_us=%.1f p99_us=%.1f bytes=%lld mib_s=%.0f\n", n, sum / n, t[n / 2],
          t[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1], bytes, (double) bytes / 1048576.0 / (t_all / 1e6));
  free (t);
  return 0;
}
