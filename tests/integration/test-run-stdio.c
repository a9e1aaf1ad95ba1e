/* The payload's stdio under `securer run` (and what `securer exec` prints):
 * the payload holds only securer's pipes, so it cannot change the caller's
 * open file descriptions or terminal; output reaches a terminal without
 * escape sequences and a pipe byte for byte; stdin, EOF, EPIPE, exit
 * statuses and the timeout work through the relay. */
#include <config.h>

#include <criterion/criterion.h>
#include <sys/ioctl.h>
#include <termios.h>

#include "run-util.h"
#include "../helpers/stdio-pattern.h"

static char tmpdir[] = "/tmp/securer-run-stdio-XXXXXX";
static char *policy;
static char *sprobe;

static const char *
bin (void)
{
  const char *b = getenv ("SECURER_BIN");
  return b ? b : SECURER_ABS_BUILDDIR "/securer";
}

static void
setup (void)
{
  cr_assert_not_null (mkdtemp (tmpdir));
  const char *src = getenv ("SECURER_SRCDIR");
  char *h = helpers_dir ();
  cr_assert (asprintf (&policy, "%s/stdio.policy", tmpdir) > 0);
  cr_assert (asprintf (&sprobe, "%s/stdio-probe", h) > 0);
  FILE *f = fopen (policy, "w");
  cr_assert_not_null (f);
  fprintf (f, "include \"%s/policies/minimal.policy\"\nmount ro %s\n", src ? src : SECURER_ABS_SRCDIR, h);
  fclose (f);
  free (h);
}

static void
teardown (void)
{
  unlink (policy);
  rmdir (tmpdir);
  free (policy);
  free (sprobe);
}

TestSuite (run_stdio, .init = setup, .fini = teardown, .timeout = 120);

/* The securer binary, then args (NULL-terminated). */
static char **
with_bin (char *const *args)
{
  size_t n = 0;
  while (args[n])
    n++;
  char **argv = calloc (n + 2, sizeof *argv);
  cr_assert_not_null (argv);
  argv[0] = (char *) bin ();
  memcpy (argv + 1, args, n * sizeof *argv);
  return argv;
}

/* securer with args (NULL-terminated, argv[0] left out) on fds 0..2 given;
 * -1 leaves that fd closed. */
static pid_t
start (char *const *args, int in, int out, int err)
{
  char **argv = with_bin (args);
  pid_t c = fork ();
  cr_assert_geq (c, 0);
  if (c == 0)
    {
      int want[3] = { in, out, err };
      /* Out of the way first, so that placing one cannot clobber another. */
      for (int i = 0; i < 3; i++)
        if (want[i] >= 0)
          want[i] = fcntl (want[i], F_DUPFD_CLOEXEC, 10);
      for (int i = 0; i < 3; i++)
        if (want[i] >= 0)
          dup2 (want[i], i);
        else
          close (i);
      execv (argv[0], argv);
      _exit (99);
    }
  free (argv);
  return c;
}

static int
finish (pid_t c)
{
  int st;
  while (waitpid (c, &st, 0) < 0)
    cr_assert_eq (errno, EINTR);
  return WIFEXITED (st) ? WEXITSTATUS (st) : 1000 + WTERMSIG (st);
}

/* The report line key (with fd appended when fd >= 0) says want. */
static void
assert_kv (const char *out, const char *key, int fd, const char *want)
{
  char k[32];
  if (fd >= 0)
    snprintf (k, sizeof k, "%s%d", key, fd);
  else
    snprintf (k, sizeof k, "%s", key);
  char *v = kv (out, k);
  cr_assert_str_eq (v ? v : "(none)", want, "%s: %s", k, out);
  free (v);
}

static bool
nonblocking (int fd)
{
  int fl = fcntl (fd, F_GETFL);
  cr_assert_geq (fl, 0);
  return (fl & O_NONBLOCK) != 0;
}

/* Runs stdio-probe nonblock with pipes as stdin/stdout/stderr and reports
 * whether each of securer's three descriptions came back non-blocking. */
static void
nonblock_case (bool inherit, bool got[3])
{
  int i[2], o[2], e[2];
  cr_assert_eq (pipe2 (i, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (e, O_CLOEXEC), 0);
  char *relayed[] = { "run", "--policy", policy, "--", sprobe, "nonblock", NULL };
  char *inherited[] = { "run", "--policy", policy, "--inherit-stdio", "--", sprobe, "nonblock", NULL };
  pid_t c = start (inherit ? inherited : relayed, i[0], o[1], e[1]);
  /* The report is a few lines: it fits in the pipe while we wait. */
  int status = finish (c);
  got[0] = nonblocking (i[0]);
  got[1] = nonblocking (o[1]);
  got[2] = nonblocking (e[1]);
  close (o[1]);
  close (e[1]);
  char *out = read_all (o[0]), *err = read_all (e[0]);
  cr_assert_eq (status, 0, "%s", err);
  for (int fd = 0; fd < 3; fd++)
    assert_kv (out, "nonblock", fd, "OK");
  free (out);
  free (err);
  close (i[0]);
  close (i[1]);
  close (o[0]);
  close (e[0]);
}

Test (run_stdio, the_payload_cannot_make_the_callers_descriptions_non_blocking)
{
  bool got[3];
  nonblock_case (false, got);
  for (int fd = 0; fd < 3; fd++)
    cr_assert (!got[fd], "the caller's fd %d was left O_NONBLOCK", fd);
}

/* What the relay prevents: with --inherit-stdio the same payload does it. */
Test (run_stdio, with_inherit_stdio_the_payload_shares_the_callers_descriptions)
{
  bool got[3];
  nonblock_case (true, got);
  for (int fd = 0; fd < 3; fd++)
    cr_assert (got[fd], "fd %d", fd);
}

/* ---- a pseudo-terminal as the caller's terminal ---------------------------- */

struct pty {
  int master, slave;     /* slave: the test's own, O_NOCTTY */
  char path[64];
  struct termios before;
};

static void
pty_open (struct pty *p)
{
  p->master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  cr_assert_geq (p->master, 0);
  cr_assert_eq (grantpt (p->master), 0);
  cr_assert_eq (unlockpt (p->master), 0);
  cr_assert_eq (ptsname_r (p->master, p->path, sizeof p->path), 0);
  p->slave = open (p->path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  cr_assert_geq (p->slave, 0);
  cr_assert_eq (tcgetattr (p->slave, &p->before), 0);
}

/* securer in a new session whose controlling terminal is the pty, on
 * stdin, stdout and stderr, as in an interactive shell. */
static pid_t
pty_start (const struct pty *p, char *const *args)
{
  char **argv = with_bin (args);
  pid_t c = fork ();
  cr_assert_geq (c, 0);
  if (c == 0)
    {
      setsid ();
      int t = open (p->path, O_RDWR);   /* becomes the controlling terminal */
      if (t < 0)
        _exit (98);
      for (int fd = 0; fd < 3; fd++)
        dup2 (t, fd);
      execv (argv[0], argv);
      _exit (99);
    }
  free (argv);
  return c;
}

static void
append (char **buf, size_t *len, const char *chunk, size_t n)
{
  *buf = realloc (*buf, *len + n + 1);
  memcpy (*buf + *len, chunk, n);
  *len += n;
  (*buf)[*len] = '\0';
}

/* Reads the terminal's output until c exits; *status gets its status.  The
 * rest (after the test's own checks) comes from pty_drain. */
static char *
pty_run (struct pty *p, pid_t c, int *status, size_t *len)
{
  char *buf = NULL;
  *len = 0;
  append (&buf, len, "", 0);
  for (;;)
    {
      struct pollfd pf = { p->master, POLLIN, 0 };
      if (poll (&pf, 1, 50) > 0)
        {
          char chunk[4096];
          ssize_t n = read (p->master, chunk, sizeof chunk);
          if (n > 0)
            append (&buf, len, chunk, (size_t) n);
        }
      int st;
      pid_t w = waitpid (c, &st, WNOHANG);
      if (w == c)
        {
          *status = WIFEXITED (st) ? WEXITSTATUS (st) : 1000 + WTERMSIG (st);
          return buf;
        }
    }
}

/* Closes the test's slave: the master then reads what is left and EIO. */
static void
pty_drain (struct pty *p, char **buf, size_t *len)
{
  close (p->slave);
  p->slave = -1;
  char chunk[4096];
  ssize_t n;
  while ((n = read (p->master, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      append (buf, len, chunk, (size_t) n);
  close (p->master);
}

/* What the terminal showed while securer ran with args on it. */
static char *
pty_output (char *const *args, int *status, size_t *len)
{
  struct pty p;
  pty_open (&p);
  char *out = pty_run (&p, pty_start (&p, args), status, len);
  pty_drain (&p, &out, len);
  return out;
}

static void
assert_same_termios (const struct termios *a, const struct termios *b)
{
  cr_assert_eq (a->c_iflag, b->c_iflag);
  cr_assert_eq (a->c_oflag, b->c_oflag);
  cr_assert_eq (a->c_cflag, b->c_cflag);
  cr_assert_eq (a->c_lflag, b->c_lflag, "lflag %#o became %#o", (unsigned) a->c_lflag, (unsigned) b->c_lflag);
  cr_assert_eq (memcmp (a->c_cc, b->c_cc, sizeof a->c_cc), 0);
}

static int
exclusive (int fd)
{
  int excl = -1;
  cr_assert_eq (ioctl (fd, TIOCGEXCL, &excl), 0);
  return excl;
}

Test (run_stdio, the_payload_cannot_reach_the_callers_terminal)
{
  struct pty p;
  pty_open (&p);
  char *args[] = { "run", "--policy", policy, "--", sprobe, "tty", NULL };
  int status;
  size_t len;
  char *out = pty_run (&p, pty_start (&p, args), &status, &len);
  struct termios after;
  cr_assert_eq (tcgetattr (p.slave, &after), 0);
  assert_same_termios (&p.before, &after);
  cr_assert_eq (exclusive (p.slave), 0, "the terminal was left in exclusive mode");
  pty_drain (&p, &out, &len);
  cr_assert_eq (status, 0, "%s", out);
  /* The terminal writes "\r\n" for each line. */
  char *w = out;
  for (const char *r = out; *r; r++)
    if (!(r[0] == '\r' && r[1] == '\n'))
      *w++ = *r;
  *w = '\0';
  /* From inside, none of the three is a terminal, and there is none to open. */
  for (int fd = 0; fd < 3; fd++)
    {
      assert_kv (out, "excl", fd, "ENOTTY");
      assert_kv (out, "raw", fd, "ENOTTY");
    }
  assert_kv (out, "devtty", -1, "ENXIO");
  free (out);
}

/* What the relay prevents: with --inherit-stdio the payload takes the
 * terminal over. */
Test (run_stdio, with_inherit_stdio_the_payload_reaches_the_terminal)
{
  struct pty p;
  pty_open (&p);
  char *args[] = { "run", "--policy", policy, "--inherit-stdio", "--", sprobe, "tty", NULL };
  int status;
  size_t len;
  char *out = pty_run (&p, pty_start (&p, args), &status, &len);
  struct termios after;
  cr_assert_eq (tcgetattr (p.slave, &after), 0);
  int excl = exclusive (p.slave);
  pty_drain (&p, &out, &len);
  cr_assert_eq (status, 0, "%s", out);
  cr_assert_eq (excl, 1, "%s", out);
  cr_assert_eq (after.c_lflag & (ICANON | ECHO), 0, "%s", out);
}

static bool
has_byte (const char *buf, size_t len, char c)
{
  return memchr (buf, c, len) != NULL;
}

/* securer with args on a terminal succeeds, and the terminal shows
 * exactly want: no ESC or BEL reached it. */
static void
assert_terminal_shows (char *const *args, const char *want)
{
  int status;
  size_t len;
  char *out = pty_output (args, &status, &len);
  cr_assert_eq (status, 0, "%s", out);
  cr_assert (!has_byte (out, len, '\033') && !has_byte (out, len, '\007'), "%s", out);
  cr_assert_str_eq (out, want);
  free (out);
}

Test (run_stdio, escape_sequences_do_not_reach_a_terminal)
{
  char *args[] = { "run", "--policy", policy, "--", sprobe, "escapes", NULL };
  /* the text around them is all there ('\n' is "\r\n" on a terminal) */
  assert_terminal_shows (args, "beforemiddleafter\r\n");
}

Test (run_stdio, raw_output_passes_escape_sequences_to_a_terminal)
{
  char *args[] = { "run", "--policy", policy, "--raw-output", "--", sprobe, "escapes", NULL };
  int status;
  size_t len;
  char *out = pty_output (args, &status, &len);
  cr_assert_eq (status, 0, "%s", out);
  cr_assert_not_null (strstr (out, "\033]52;c;"), "%s", out);
  cr_assert_not_null (strstr (out, "\033[2J"), "%s", out);
  free (out);
}

/* ---- pipes: bytes unchanged, stdin, EOF, EPIPE ------------------------------ */

/* Runs securer with stdin from in_fd (-1: closed) and stdout/stderr to
 * pipes; returns the status, *out and *err what they carried. */
static int
run_piped (char *const *args, int in_fd, char **out, char **err)
{
  int o[2], e[2];
  cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (e, O_CLOEXEC), 0);
  pid_t c = start (args, in_fd, o[1], e[1]);
  close (o[1]);
  close (e[1]);
  *out = read_all (o[0]);
  *err = read_all (e[0]);
  close (o[0]);
  close (e[0]);
  return finish (c);
}

Test (run_stdio, escape_sequences_pass_unchanged_to_a_pipe)
{
  char *args[] = { "run", "--policy", policy, "--", sprobe, "escapes", NULL };
  char *out, *err;
  int status = run_piped (args, -1, &out, &err);
  cr_assert_eq (status, 0, "%s", err);
  cr_assert_str_eq (out, "before\033]52;c;cm0gLXJmIH4K\007middle\033[2J\033[Hafter\n");
  free (out);
  free (err);
}

/* Reads fd to its end (then closes it), checking every byte against the
 * pattern; returns how many came. */
static unsigned long long
read_pattern (int fd)
{
  unsigned long long at = 0;
  char buf[65536];
  ssize_t got;
  while ((got = read (fd, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR))
    for (ssize_t k = 0; k < got; k++, at++)
      if ((unsigned char) buf[k] != pattern_byte (at))
        cr_assert_fail ("byte %llu differs", at);
  close (fd);
  return at;
}

Test (run_stdio, fifty_megabytes_of_binary_output_arrive_exactly)
{
  const unsigned long long total = 50ull << 20;
  char n[32];
  snprintf (n, sizeof n, "%llu", total);
  char *args[] = { "run", "--policy", policy, "--", sprobe, "pattern", n, NULL };
  int o[2];
  cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
  pid_t c = start (args, -1, o[1], 2);
  close (o[1]);
  cr_assert_eq (read_pattern (o[0]), total);
  cr_assert_eq (finish (c), 0);
}

/* A writer process feeds `len` bytes of the pattern into pipe p, whose
 * write end is closed here. */
static pid_t
feed (int p[2], size_t len)
{
  int fd = p[1];
  pid_t w = fork ();
  cr_assert_geq (w, 0);
  if (w == 0)
    {
      close (p[0]);
      static unsigned char buf[8192];
      for (size_t at = 0; at < len;)
        {
          size_t k = 0;
          for (; k < sizeof buf && at + k < len; k++)
            buf[k] = pattern_byte (at + k);
          ssize_t n = write (fd, buf, k);
          if (n <= 0)
            _exit (1);
          at += (size_t) n;
        }
      _exit (0);
    }
  close (fd);
  return w;
}

Test (run_stdio, stdin_is_delivered_and_its_eof_ends_cat)
{
  const size_t len = 4u << 20;   /* far more than the pipes hold */
  int i[2];
  cr_assert_eq (pipe2 (i, O_CLOEXEC), 0);
  pid_t w = feed (i, len);
  char *args[] = { "run", "--policy", policy, "--", "/bin/cat", NULL };
  int o[2];
  cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
  pid_t c = start (args, i[0], o[1], 2);
  close (i[0]);
  close (o[1]);
  unsigned long long at = read_pattern (o[0]);
  /* cat ended: it saw EOF, which only comes when no one else holds the pipe */
  cr_assert_eq (finish (c), 0);
  cr_assert_eq (at, len);
  cr_assert_eq (finish (w), 0);
}

Test (run_stdio, no_stdin_leaves_the_callers_input_unread)
{
  int i[2];
  cr_assert_eq (pipe2 (i, O_CLOEXEC), 0);
  cr_assert_eq (write (i[1], "for later\n", 10), 10);
  char *args[] = { "run", "--policy", policy, "--no-stdin", "--", "/bin/cat", NULL };
  char *out, *err;
  int status = run_piped (args, i[0], &out, &err);
  cr_assert_eq (status, 0, "%s", err);
  cr_assert_str_eq (out, "");
  close (i[1]);
  char *left = read_all (i[0]);
  cr_assert_str_eq (left, "for later\n");
  close (i[0]);
  free (left);
  free (out);
  free (err);
}

/* `securer run -- yes | head -c 10`: the reader goes away, the command
 * meets EPIPE/SIGPIPE as it would have writing to the pipe itself. */
Test (run_stdio, a_departed_reader_gives_the_command_sigpipe)
{
  char *args[] = { "run", "--policy", policy, "--", "/usr/bin/yes", NULL };
  int o[2];
  cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
  pid_t c = start (args, -1, o[1], 2);
  close (o[1]);
  char buf[10];
  cr_assert_eq (read (o[0], buf, sizeof buf), (ssize_t) sizeof buf);
  cr_assert_eq (memcmp (buf, "y\ny\ny\ny\ny\n", 10), 0);
  close (o[0]);
  cr_assert_eq (finish (c), 128 + SIGPIPE);
}

/* One pipe when stdout and stderr are the same file, so their order holds. */
Test (run_stdio, stdout_and_stderr_to_one_pipe_keep_their_order)
{
  char *args[] = { "run", "--policy", policy, "--", sprobe, "order", NULL };
  int o[2];
  cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
  pid_t c = start (args, -1, o[1], o[1]);
  close (o[1]);
  char *out = read_all (o[0]);
  close (o[0]);
  cr_assert_eq (finish (c), 0);
  cr_assert_str_eq (out, "123");
  free (out);
}

/* A caller that stops reading cannot keep securer past its timeout. */
Test (run_stdio, the_timeout_ends_a_run_whose_output_is_not_read)
{
  char *args[] = { "run", "--policy", policy, "--timeout", "0.5", "--", "/usr/bin/yes", NULL };
  int o[2], e[2];
  cr_assert_eq (pipe2 (o, O_CLOEXEC), 0);
  cr_assert_eq (pipe2 (e, O_CLOEXEC), 0);
  pid_t c = start (args, -1, o[1], e[1]);
  close (o[1]);
  close (e[1]);
  char *err = read_all (e[0]);   /* EOF when securer exits; stdout never read */
  cr_assert_eq (finish (c), 124, "%s", err);
  cr_assert_not_null (strstr (err, "timeout"), "%s", err);
  close (o[0]);
  close (e[0]);
  free (err);
}

Test (run_stdio, exit_status_and_signal_come_through)
{
  char *probe = probe_path ();
  char *a1[] = { "run", "--policy", policy, "--", probe, "echo", "x", "exit", "3", NULL };
  char *a2[] = { "run", "--policy", policy, "--", probe, "echo", "y", "raise", "9", NULL };
  char *out, *err;
  cr_assert_eq (run_piped (a1, -1, &out, &err), 3, "%s", err);
  cr_assert_str_eq (out, "x\n");
  free (out);
  free (err);
  cr_assert_eq (run_piped (a2, -1, &out, &err), 128 + SIGKILL, "%s", err);
  cr_assert_str_eq (out, "y\n");
  free (out);
  free (err);
  free (probe);
}

/* Plain R under the shipped r policy, as `securer run`, on a terminal. */
Test (run_stdio, r_under_run_cannot_write_escape_sequences_to_a_terminal)
{
  if (access ("/usr/lib/R/bin/exec/R", X_OK) != 0)
    cr_skip_test ("R is not installed");
  char *args[] = { "run", "--policy", "r", "--", "/usr/lib/R/bin/exec/R", "--vanilla", "--slave", "-e",
                   "cat('a\\033]52;c;cm0gLXJmIH4K\\007b\\033[2J\\033[3Jc\\n')", NULL };
  assert_terminal_shows (args, "abc\r\n");
}

/* ---- securer exec ----------------------------------------------------------- */

static bool
have_r (void)
{
  return access ("/usr/lib/R/bin/exec/R", X_OK) == 0;
}

/* securer exec -e code on a terminal: what the terminal showed. */
static char *
exec_on_pty (const char *code, int *status, size_t *len)
{
  char *args[] = { "exec", "-e", (char *) code, NULL };
  char *out = pty_output (args, status, len);
  cr_assert (!has_byte (out, *len, '\033') && !has_byte (out, *len, '\007'), "%s", out);
  return out;
}

Test (run_stdio, exec_prints_no_escape_sequences_on_a_terminal)
{
  if (!have_r ())
    cr_skip_test ("R is not installed");
  int status;
  size_t len;
  char *out = exec_on_pty ("cat('before\\033]52;c;cm0gLXJmIH4K\\007middle\\033[2Jafter\\n');"
                           " message('mes\\033[Hsage'); warning('w\\033[2Jarn')",
                           &status, &len);
  cr_assert_eq (status, 0, "%s", out);
  cr_assert_not_null (strstr (out, "beforemiddleafter"), "%s", out);
  cr_assert_not_null (strstr (out, "message"), "%s", out);
  cr_assert_not_null (strstr (out, "warn"), "%s", out);
  free (out);
}

Test (run_stdio, exec_errors_show_no_escape_sequences_on_a_terminal)
{
  if (!have_r ())
    cr_skip_test ("R is not installed");
  int status;
  size_t len;
  char *out = exec_on_pty ("stop('bo\\033]0;title\\007om')", &status, &len);
  cr_assert_eq (status, 1, "%s", out);
  cr_assert_not_null (strstr (out, "boom"), "%s", out);
  free (out);
}

Test (run_stdio, exec_output_to_a_pipe_is_unchanged)
{
  if (!have_r ())
    cr_skip_test ("R is not installed");
  char *args[] = { "exec", "-e", "cat('a\\033[2Jb\\n')", NULL };
  char *out, *err;
  int status = run_piped (args, -1, &out, &err);
  cr_assert_eq (status, 0, "%s", err);
  cr_assert_str_eq (out, "a\033[2Jb\n");
  free (out);
  free (err);
}
