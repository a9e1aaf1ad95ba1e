/* Runs inside a sandbox and does to its stdin/stdout/stderr what a hostile
 * payload would do to the caller's, reporting one key=value per line on
 * stdout (after the deeds, so the report itself is not affected):
 *
 *   nonblock       set O_NONBLOCK on fds 0, 1 and 2   -> nonblockN=OK|ENAME
 *   tty            on fds 0..2: TIOCEXCL, tcsetattr -icanon -echo
 *                                                  -> exclN=, rawN=OK|ENAME
 *                  and open /dev/tty               -> devtty=OK|ENAME
 *   escapes        print OSC 52, CSI 2J and text between them
 *   pattern N      write N bytes of pattern_byte(i) in uneven chunks
 *   order          "1" on stdout, "2" on stderr, "3" on stdout, unbuffered
 *
 * Only libc, linked statically, so it runs in any sandbox view. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "stdio-pattern.h"

static char report[4096];
static size_t report_len;

static void
note (const char *key, int fd, int ok)
{
  const char *e = ok ? "OK" : strerrorname_np (errno);
  int n = fd >= 0 ? snprintf (report + report_len, sizeof report - report_len, "%s%d=%s\n", key, fd, e ? e : "E?")
                  : snprintf (report + report_len, sizeof report - report_len, "%s=%s\n", key, e ? e : "E?");
  if (n > 0 && (size_t) n < sizeof report - report_len)
    report_len += (size_t) n;
}

static void
write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;   /* a description made non-blocking above */
      if (n <= 0)
        exit (3);
      p += n;
      len -= (size_t) n;
    }
}

static void
pattern (unsigned long long total)
{
  static unsigned char buf[65536];
  unsigned long long i = 0;
  size_t chunk = 1;
  while (i < total)
    {
      size_t n = chunk;
      if (n > total - i)
        n = (size_t) (total - i);
      for (size_t k = 0; k < n; k++)
        buf[k] = pattern_byte (i + k);
      write_all (1, buf, n);
      i += n;
      chunk = chunk * 7 % 65521 + 1;   /* 1 .. 65521 bytes, uneven */
    }
}

int
main (int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      const char *c = argv[i];
      if (strcmp (c, "nonblock") == 0)
        for (int fd = 0; fd < 3; fd++)
          {
            int fl = fcntl (fd, F_GETFL);
            note ("nonblock", fd, fl >= 0 && fcntl (fd, F_SETFL, fl | O_NONBLOCK) == 0);
          }
      else if (strcmp (c, "tty") == 0)
        {
          for (int fd = 0; fd < 3; fd++)
            {
              note ("excl", fd, ioctl (fd, TIOCEXCL) == 0);
              struct termios t;
              int ok = tcgetattr (fd, &t) == 0;
              if (ok)
                {
                  t.c_lflag &= ~(tcflag_t) (ICANON | ECHO);
                  ok = tcsetattr (fd, TCSANOW, &t) == 0;
                }
              note ("raw", fd, ok);
            }
          int t = open ("/dev/tty", O_RDWR | O_CLOEXEC);
          note ("devtty", -1, t >= 0);
          if (t >= 0)
            close (t);
        }
      else if (strcmp (c, "escapes") == 0)
        {
          static const char s[] = "before\033]52;c;cm0gLXJmIH4K\007middle\033[2J\033[Hafter\n";
          write_all (1, s, sizeof s - 1);
        }
      else if (strcmp (c, "pattern") == 0 && i + 1 < argc)
        pattern (strtoull (argv[++i], NULL, 10));
      else if (strcmp (c, "order") == 0)
        {
          write_all (1, "1", 1);
          write_all (2, "2", 1);
          write_all (1, "3", 1);
        }
      else
        {
          fprintf (stderr, "stdio-probe: unknown command '%s'\n", c);
          return 2;
        }
    }
  write_all (1, report, report_len);
  return 0;
}
