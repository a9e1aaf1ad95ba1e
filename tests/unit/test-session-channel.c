/* The channel's framing: lines are delivered whole, and the size cap is
 * enforced while reading, before a line has been fully buffered. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/internal.h"

static void
nb_pipe (int p[2])
{
  cr_assert_eq (pipe2 (p, O_CLOEXEC | O_NONBLOCK), 0);
}

Test (channel, delivers_lines_split_across_writes)
{
  int p[2];
  nb_pipe (p);
  struct securer_channel c;
  securer_channel_init (&c, p[0], -1, 1024);
  const char *line;
  size_t len;
  securer_err_t err = NULL;
  cr_assert_eq (write (p[1], "{\"a\":", 5), 5);
  cr_assert_eq (securer_channel_read (&c, &line, &len, &err), CHANNEL_AGAIN);
  cr_assert_eq (write (p[1], "1}\n{\"b\":2}\npart", 15), 15);
  cr_assert_eq (securer_channel_read (&c, &line, &len, &err), CHANNEL_LINE);
  cr_assert_eq (len, 7);
  cr_assert_str_eq (line, "{\"a\":1}");
  cr_assert_eq (securer_channel_read (&c, &line, &len, &err), CHANNEL_LINE);
  cr_assert_str_eq (line, "{\"b\":2}");
  cr_assert_eq (securer_channel_read (&c, &line, &len, &err), CHANNEL_AGAIN);
  close (p[1]);
  cr_assert_eq (securer_channel_read (&c, &line, &len, &err), CHANNEL_EOF);
  securer_channel_close (&c);
}

Test (channel, oversized_line_is_rejected_while_reading)
{
  int p[2];
  nb_pipe (p);
  struct securer_channel c;
  securer_channel_init (&c, p[0], -1, 100);
  char big[4096];
  memset (big, 'x', sizeof big);
  /* 4 KiB without a newline: the channel must give up after 101 bytes and
   * must not have read (buffered) the rest. */
  cr_assert_eq (write (p[1], big, sizeof big), (ssize_t) sizeof big);
  const char *line;
  size_t len;
  securer_err_t err = NULL;
  cr_assert_eq (securer_channel_read (&c, &line, &len, &err), CHANNEL_TOO_LARGE);
  cr_assert_leq (c.in_len, 101);
  char rest[8192];
  cr_assert_eq (read (p[0], rest, sizeof rest), (ssize_t) (sizeof big - c.in_len));
  securer_channel_close (&c);
  close (p[1]);
}

Test (channel, line_of_exactly_the_limit_is_accepted)
{
  int p[2];
  nb_pipe (p);
  struct securer_channel c;
  securer_channel_init (&c, p[0], -1, 100);
  char msg[101];
  memset (msg, 'y', 100);
  msg[100] = '\n';
  cr_assert_eq (write (p[1], msg, 101), 101);
  const char *line;
  size_t len;
  securer_err_t err = NULL;
  cr_assert_eq (securer_channel_read (&c, &line, &len, &err), CHANNEL_LINE);
  cr_assert_eq (len, 100);
  msg[100] = 'y';
  cr_assert_eq (write (p[1], msg, 101), 101);
  cr_assert_eq (write (p[1], "\n", 1), 1);
  cr_assert_eq (securer_channel_read (&c, &line, &len, &err), CHANNEL_TOO_LARGE);
  securer_channel_close (&c);
  close (p[1]);
}

Test (channel, send_rejects_oversized_and_queues_when_pipe_full)
{
  int p[2];
  nb_pipe (p);
  struct securer_channel c;
  securer_channel_init (&c, -1, p[1], 200000);
  securer_err_t err = NULL;
  char *big = malloc (200001);
  memset (big, 'z', 200001);
  cr_assert_eq (securer_channel_send (&c, big, 200001, &err), -1);
  cr_assert_eq (securer_error_errno (err), EMSGSIZE);
  securer_error_free (&err);
  /* 190 KB does not fit a 64 KiB pipe: the rest stays queued. */
  cr_assert_eq (securer_channel_send (&c, big, 190000, &err), 0);
  cr_assert (securer_channel_pending (&c));
  size_t got = 0;
  char buf[65536];
  while (securer_channel_pending (&c))
    {
      ssize_t r = read (p[0], buf, sizeof buf);
      if (r > 0)
        got += (size_t) r;
      cr_assert_geq (securer_channel_flush (&c, &err), 0);
    }
  ssize_t r;
  while ((r = read (p[0], buf, sizeof buf)) > 0)
    got += (size_t) r;
  cr_assert_eq (got, 190001);
  free (big);
  securer_channel_close (&c);
  close (p[0]);
}

Test (channel, peer_that_never_reads_is_cut_off)
{
  int p[2];
  nb_pipe (p);
  struct securer_channel c;
  securer_channel_init (&c, -1, p[1], 100000);
  securer_err_t err = NULL;
  char msg[90000];
  memset (msg, 'q', sizeof msg);
  int rc = 0;
  for (int i = 0; i < 20 && rc == 0; i++)
    rc = securer_channel_send (&c, msg, sizeof msg, &err);
  cr_assert_eq (rc, -1);
  cr_assert_eq (securer_error_errno (err), ENOBUFS);
  securer_error_free (&err);
  securer_channel_close (&c);
  close (p[0]);
}

Test (channel, write_to_closed_reader_fails_without_sigpipe)
{
  int p[2];
  nb_pipe (p);
  close (p[0]);
  struct securer_channel c;
  securer_channel_init (&c, -1, p[1], 1024);
  securer_err_t err = NULL;
  /* SIGPIPE's default action would kill the test process. */
  cr_assert_eq (securer_channel_send (&c, "x", 1, &err), -1);
  cr_assert_eq (securer_error_errno (err), EPIPE);
  securer_error_free (&err);
  sigset_t pending;
  sigpending (&pending);
  cr_assert_not (sigismember (&pending, SIGPIPE));
  securer_channel_close (&c);
}
