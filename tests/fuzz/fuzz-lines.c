/* The pacing varies with the input so that lines are split across reads
 * at every kind of boundary: a peer may write one byte at a time, or many
 * messages at once. */
#include <config.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz-lines.h"
#include "session/internal.h"

/* Drains what the pipe holds; false once the channel gives up. */
static bool
drain (struct securer_channel *ch, fuzz_line_fn fn)
{
  for (;;)
    {
      const char *line;
      size_t len;
      securer_err_t err = NULL;
      enum channel_read_status st = securer_channel_read (ch, &line, &len, &err);
      securer_error_free (&err);
      if (st == CHANNEL_LINE)
        {
          fn (line, len);
          continue;
        }
      return st == CHANNEL_AGAIN;
    }
}

void
fuzz_feed_lines (const uint8_t *data, size_t size, size_t max_message, fuzz_line_fn fn)
{
  static const size_t chunks[] = { 1, 3, 64, 700, 4096 };
  int fds[2];
  if (pipe2 (fds, O_NONBLOCK | O_CLOEXEC) < 0)
    abort ();
  struct securer_channel ch;
  securer_channel_init (&ch, fds[0], -1, max_message);
  size_t off = 0, k = size % 5;
  bool open = true;
  while (off < size && open)
    {
      size_t n = chunks[k++ % 5];
      if (n > size - off)
        n = size - off;
      /* The pipe is empty here: each chunk is drained before the next. */
      if (write (fds[1], data + off, n) != (ssize_t) n)
        abort ();
      off += n;
      open = drain (&ch, fn);
    }
  close (fds[1]);
  if (open)
    drain (&ch, fn);
  securer_channel_close (&ch);
}
