/* --verbose lines from the sandbox's side of a launch (pid 1, the
 * payload, the filesystem steps): one module of its own, so that the
 * steps that log (mount.c, init.c) do not depend on each other. */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "linux/linux.h"
#include "raw-syscall.h"

void
securer_linux_child_log (const char *fmt, ...)
{
  char line[1200];
  int n = snprintf (line, sizeof line, "securer: [%d] ", (int) getpid ());
  va_list ap;
  va_start (ap, fmt);
  int m = vsnprintf (line + n, sizeof line - (size_t) n - 1, fmt, ap);
  va_end (ap);
  if (m < 0)
    return;
  size_t len = strnlen (line, sizeof line - 2);
  line[len++] = '\n';
  /* Without errno: pid 1 logs while it shares its memory with the
   * payload (fork_payload). */
  (void) SECURER_SYS3 (SYS_write, STDERR_FILENO, line, len);
}
