/* securer run — run one command inside the sandbox a policy describes. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli.h"
#include "relay.h"
#include "seccomp/complain.h"

void
cmd_run_help (FILE *out)
{
  fprintf (out,
           "Usage: securer run --policy FILE|NAME [OPTIONS] -- CMD [ARGS...]\n"
           "\n"
           "Runs CMD inside the sandbox the policy describes and exits with CMD's status.\n"
           "\n"
           "Options:\n"
           "  -p, --policy FILE|NAME   policy file, or NAME for NAME.policy in the policy path\n"
           "  -t, --timeout SEC        wall-clock limit in seconds (overrides the policy's)\n"
           "      --json-status FILE|fd:N\n"
           "                           write one JSON record about how CMD ended\n"
           "      --no-stdin           CMD's standard input is empty; securer's is not read\n"
           "      --raw-output         pass CMD's output to a terminal unchanged\n"
           "      --inherit-stdio      give CMD securer's own stdin, stdout and stderr\n"
           "      --memory SIZE        the whole sandbox's memory (cgroup), e.g. 512M\n"
           "      --pids N             its tasks (cgroup pids.max)\n"
           "      --cpus X             its CPU time, in CPUs (cgroup), e.g. 0.5\n"
           "      --network MODE       none or loopback\n"
           "                           (these four only narrow the policy: a value above its\n"
           "                           own, or a wider network, is refused; a limit the policy\n"
           "                           lacks is added and required)\n"
           "      --complain           complain mode: calls the policy's seccomp rules or\n"
           "                           default would refuse (errno, trap, kill default) go\n"
           "                           ahead and are reported; its kill rules still kill.\n"
           "                           The sandbox is weaker: for writing policies only\n"
           "      --no-seccomp-cache   resolve the seccomp rules and generate the filter\n"
           "                           afresh, neither reading nor writing the cache of\n"
           "                           compiled filters\n"
           "  -v, --verbose            report each setup step on stderr\n"
           "  -h, --help               show this help\n"
           "\n"
           "CMD's standard input, output and error are pipes that securer relays to and\n"
           "from its own (where securer's is /dev/null, CMD gets a /dev/null of its own),\n"
           "so CMD shares no open file or terminal with the caller.  Output\n"
           "going to a terminal has its escape sequences removed and other control\n"
           "characters and invalid UTF-8 shown (\"^G\", \"\\xff\"); output to a file or a\n"
           "pipe is passed byte for byte.  With --inherit-stdio CMD gets securer's\n"
           "descriptors as they are (it can change their flags and, on a terminal, the\n"
           "terminal's settings) and nothing is filtered.\n"
           "\n"
           "CMD is looked up in the PATH of the sandbox's environment when it has no '/'.\n"
           "SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to securer are passed\n"
           "on to CMD.\n"
           "\n"
           "Complain mode (--complain, or a policy with `log`/`notify` actions such as\n"
           "`seccomp default log`) reports each distinct call that went ahead (or was\n"
           "killed) with its count, the verdict the policy gives it and its first caller:\n"
           "in the `complain` array of --json-status, on stderr with --verbose.  Without\n"
           "--complain only `log`/`notify` verdicts go ahead; the rest is enforced.\n"
           "Landlock is never relaxed, and its denials are not reported.  --complain needs\n"
           "seccomp user notification (Linux 5.5); without it the run is refused (125).\n"
           "\n"
           "Exit status:\n"
           "  N      CMD exited with N\n"
           "  128+N  CMD was killed by signal N\n"
           "  124    the timeout expired (everything in the sandbox was killed)\n"
           "  125    the sandbox could not be set up (the reason is printed)\n"
           "  126    CMD could not be executed\n"
           "  127    CMD was not found\n");
}

struct run_args {
  const char *policy;
  const char *json_status;
  const char *memory, *pids, *cpus, *network;  /* overrides, or NULL */
  uint64_t timeout_ms;
  bool verbose;
  bool no_stdin, raw_output, inherit_stdio, no_seccomp_cache, complain;
  char **argv;
};

int
cli_usage (const char *cmd, int status, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fprintf (stderr, "securer %s: ", cmd);
  vfprintf (stderr, fmt, ap);
  fprintf (stderr, "\nRun 'securer %s --help' for usage.\n", cmd);
  va_end (ap);
  return status;
}

/* run's usage errors are setup errors (125), as for env(1) and timeout(1). */
#define usage_error(...) cli_usage ("run", SECURER_EXIT_SETUP, __VA_ARGS__)

int
cli_parse_timeout (const char *s, uint64_t *ms)
{
  char *end = NULL;
  errno = 0;
  double v = strtod (s, &end);
  if (errno != 0 || end == s || *end != '\0' || !(v > 0) || !isfinite (v) || v > 1e9)
    return -1;
  *ms = (uint64_t) (v * 1000.0);
  if ((double) *ms < v * 1000.0)
    (*ms)++;
  return 0;
}

static int
parse_args (int argc, char **argv, struct run_args *a)
{
  memset (a, 0, sizeof *a);
  int i = 1;
  for (; i < argc; i++)
    {
      const char *o = argv[i];
      const char *val = NULL;
      if (strcmp (o, "--") == 0)
        {
          i++;
          break;
        }
      if (o[0] != '-')
        break;
      bool needs_value = strcmp (o, "-p") == 0 || strcmp (o, "--policy") == 0 || strcmp (o, "-t") == 0
                         || strcmp (o, "--timeout") == 0 || strcmp (o, "--json-status") == 0
                         || strcmp (o, "--memory") == 0 || strcmp (o, "--pids") == 0
                         || strcmp (o, "--cpus") == 0 || strcmp (o, "--network") == 0;
      const char *eq = strchr (o, '=');
      char name[32] = "";
      if (strncmp (o, "--", 2) == 0 && eq != NULL && (size_t) (eq - o) < sizeof name)
        {
          memcpy (name, o, (size_t) (eq - o));
          name[eq - o] = '\0';
          o = name;
          val = eq + 1;
          needs_value = true;
        }
      else if (needs_value)
        {
          if (i + 1 >= argc)
            return usage_error ("option '%s' needs a value", o);
          val = argv[++i];
        }
      if (strcmp (o, "-p") == 0 || strcmp (o, "--policy") == 0)
        a->policy = val;
      else if (strcmp (o, "-t") == 0 || strcmp (o, "--timeout") == 0)
        {
          if (cli_parse_timeout (val, &a->timeout_ms) < 0)
            return usage_error ("--timeout wants a positive number of seconds, not '%s'", val);
        }
      else if (strcmp (o, "--json-status") == 0)
        a->json_status = val;
      else if (strcmp (o, "--memory") == 0)
        a->memory = val;
      else if (strcmp (o, "--pids") == 0)
        a->pids = val;
      else if (strcmp (o, "--cpus") == 0)
        a->cpus = val;
      else if (strcmp (o, "--network") == 0)
        a->network = val;
      else if (strcmp (o, "-v") == 0 || strcmp (o, "--verbose") == 0)
        a->verbose = true;
      else if (strcmp (o, "--no-stdin") == 0)
        a->no_stdin = true;
      else if (strcmp (o, "--raw-output") == 0)
        a->raw_output = true;
      else if (strcmp (o, "--inherit-stdio") == 0)
        a->inherit_stdio = true;
      else if (strcmp (o, "--no-seccomp-cache") == 0)
        a->no_seccomp_cache = true;
      else if (strcmp (o, "--complain") == 0)
        a->complain = true;
      else
        return usage_error ("unknown option '%s'", argv[i]);
    }
  if (a->inherit_stdio && (a->no_stdin || a->raw_output))
    return usage_error ("%s", "--inherit-stdio relays nothing: it cannot go with --no-stdin or "
                              "--raw-output");
  if (a->policy == NULL)
    return usage_error ("%s", "--policy is required");
  if (i >= argc)
    return usage_error ("%s", "no command given (put it after '--')");
  a->argv = argv + i;
  return 0;
}

/* A size with an optional K, M, G or T suffix (powers of 1024). */
static int
parse_size (const char *s, uint64_t *out)
{
  char *end = NULL;
  errno = 0;
  double v = strtod (s, &end);
  if (errno != 0 || end == s || !(v > 0) || !isfinite (v))
    return -1;
  double mul = 1;
  if (*end != '\0')
    {
      const char *units = "KMGT";
      const char *u = strchr (units, *end == 'k' ? 'K' : *end);
      if (u == NULL || (end[1] != '\0' && !(end[1] == 'B' && end[2] == '\0')
                        && !(end[1] == 'i' && end[2] == 'B' && end[3] == '\0')))
        return -1;
      for (const char *x = units; x <= u; x++)
        mul *= 1024;
    }
  v *= mul;
  if (v >= 18446744073709551616.0)
    return -1;
  *out = (uint64_t) v;
  return *out > 0 ? 0 : -1;
}

/* --memory, --pids, --cpus, --network on the loaded policy.  They only
 * narrow it: whoever wrote the policy decided the most a run may have,
 * and a command line that asks for more is refused (125) rather than
 * quietly held to less.  A limit the policy does not set is added, as
 * required: asked for by name, it must hold or the run must not start. */
static int
apply_overrides (const struct run_args *a, struct securer_policy *p, securer_err_t *err)
{
  struct securer_limits *l = &p->limits;
  bool cgroup_added = false;
  if (a->memory != NULL)
    {
      uint64_t v;
      if (parse_size (a->memory, &v) < 0 || v < (1u << 20))
        return securer_error_set (err, EINVAL, "--memory wants a size of at least 1M (e.g. 512M), not '%s'",
                                  a->memory);
      if (l->cgroup_memory != 0 && v > l->cgroup_memory)
        return securer_error_set (err, EPERM, "--memory %s is above the policy's cgroup memory %llu bytes: "
                                  "an override may only lower it", a->memory,
                                  (unsigned long long) l->cgroup_memory);
      cgroup_added |= l->cgroup_memory == 0;
      l->cgroup_memory = v;
    }
  if (a->pids != NULL)
    {
      char *end = NULL;
      errno = 0;
      unsigned long long v = strtoull (a->pids, &end, 10);
      if (errno != 0 || end == a->pids || *end != '\0' || a->pids[0] == '-' || v < 1 || v > (1u << 22))
        return securer_error_set (err, EINVAL, "--pids wants a number of tasks from 1, not '%s'", a->pids);
      if (l->cgroup_pids != 0 && v > l->cgroup_pids)
        return securer_error_set (err, EPERM, "--pids %llu is above the policy's cgroup pids %llu: an override "
                                  "may only lower it", v, (unsigned long long) l->cgroup_pids);
      cgroup_added |= l->cgroup_pids == 0;
      l->cgroup_pids = v;
    }
  if (a->cpus != NULL)
    {
      char *end = NULL;
      errno = 0;
      double v = strtod (a->cpus, &end);
      if (errno != 0 || end == a->cpus || *end != '\0' || !(v >= 0.001) || v > 4096)
        return securer_error_set (err, EINVAL, "--cpus wants a number of CPUs from 0.001, not '%s'", a->cpus);
      uint32_t millis = (uint32_t) (v * 1000.0 + 0.5);
      if (l->cgroup_cpu_millis != 0 && millis > l->cgroup_cpu_millis)
        return securer_error_set (err, EPERM, "--cpus %s is above the policy's cgroup cpu %u.%03u: an override "
                                  "may only lower it", a->cpus, l->cgroup_cpu_millis / 1000,
                                  l->cgroup_cpu_millis % 1000);
      cgroup_added |= l->cgroup_cpu_millis == 0;
      l->cgroup_cpu_millis = millis;
    }
  if (cgroup_added && l->cgroup == SECURER_ENFORCE_OFF)
    l->cgroup = SECURER_ENFORCE_REQUIRED;
  if (a->network != NULL)
    {
      enum securer_net_mode m;
      if (strcmp (a->network, "none") == 0)
        m = SECURER_NET_NONE;
      else if (strcmp (a->network, "loopback") == 0)
        m = SECURER_NET_LOOPBACK;
      else if (strcmp (a->network, "host") == 0)
        m = SECURER_NET_HOST;
      else
        return securer_error_set (err, EINVAL, "--network wants none or loopback, not '%s'", a->network);
      /* none < loopback < allow < host: what the command can reach. */
      if (securer_net_mode_rank (m) > securer_net_mode_rank (p->network))
        return securer_error_set (err, EPERM, "--network %s is wider than the policy's network: an override "
                                  "may only narrow it", a->network);
      if (m != SECURER_NET_HOST)
        p->namespaces |= SECURER_NS_NET;
      p->network = m;
    }
  return 0;
}

/* FILE is created (mode 0644, truncated); fd:N must be open already. */
static int
open_status_target (const char *spec, securer_err_t *err)
{
  if (strncmp (spec, "fd:", 3) == 0)
    {
      char *end = NULL;
      errno = 0;
      long n = strtol (spec + 3, &end, 10);
      if (errno != 0 || end == spec + 3 || *end != '\0' || n < 0 || n > INT_MAX)
        return securer_error_set (err, EINVAL, "--json-status %s: not a descriptor number", spec);
      if (fcntl ((int) n, F_GETFD) < 0)
        return securer_error_set (err, errno, "--json-status %s", spec);
      /* Our own copy, close-on-exec, so the sandbox never sees it. */
      int fd = fcntl ((int) n, F_DUPFD_CLOEXEC, 3);
      if (fd < 0)
        return securer_error_set (err, errno, "--json-status %s", spec);
      return fd;
    }
  int fd = open (spec, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0)
    return securer_error_set (err, errno, "--json-status %s", spec);
  return fd;
}

static void
write_all (int fd, const char *s)
{
  size_t len = strlen (s), off = 0;
  while (off < len)
    {
      ssize_t n = write (fd, s + off, len - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return;
      off += (size_t) n;
    }
}

/* The record for a sandbox that never ran the command. */
static void
write_setup_status (int fd, int status, const char *msg)
{
  json_t *o = json_pack ("{s:i, s:s}", "exit_status", status, "error", msg);
  char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
  if (s != NULL)
    {
      write_all (fd, s);
      write_all (fd, "\n");
    }
  free (s);
  json_decref (o);
}

/* Said once, before the command's own output: a run that is held to less
 * than its policy describes must not look like one that is not. */
static int
report_degraded (const struct securer_sandbox *sb)
{
  char *d = securer_sandbox_degraded (sb);
  if (d != NULL)
    fprintf (stderr, "securer: warning: %s\n", d);
  free (d);
  return 0;
}

static int
fail_setup (securer_err_t *err, int status_fd)
{
  int status = *err && (*err)->status ? (*err)->status : SECURER_EXIT_SETUP;
  if (status_fd >= 0)
    write_setup_status (status_fd, status, securer_error_message (*err));
  cli_report (err);
  return status;
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

static void
note_report_word (void *ctx, size_t line, const char *word, bool quoted)
{
  (void) line;
  bool *found = ctx;
  if (!quoted && (strcmp (word, "log") == 0 || strcmp (word, "notify") == 0))
    *found = true;
}

/* Complain mode, when --complain asks for it or the policy has `log` or
 * `notify` actions.  The rule lines of a policy without either stay
 * pending (the launch resolves them, maybe from the cache); the others
 * are resolved here, since the filter is made from what they mean. */
static int
setup_complain (const struct run_args *a, struct securer_policy *p, enum securer_complain_mode *mode,
                struct securer_complain **out, securer_err_t *err)
{
  *mode = SECURER_COMPLAIN_OFF;
  *out = NULL;
  enum securer_action_type d = p->seccomp.default_action.type;
  bool maybe = a->complain || (p->seccomp.enabled && (d == SECURER_ACT_LOG || d == SECURER_ACT_NOTIFY));
  if (!maybe && p->seccomp.enabled)
    {
      if (securer_policy_seccomp_pending (p))
        securer_policy_pending_words (p, note_report_word, &maybe);
      else
        maybe = securer_complain_mode_of (p, false) != SECURER_COMPLAIN_OFF;
    }
  if (!maybe || securer_policy_complete (p, NULL, err) < 0)
    return maybe ? -1 : 0;
  *mode = securer_complain_mode_of (p, a->complain);
  if (*mode == SECURER_COMPLAIN_OFF)
    return 0;
  if (*mode == SECURER_COMPLAIN_POLICY && securer_complain_available (NULL) < 0)
    {
      /* The policy's `log` is the kernel's then, as the policy allows: only
       * --complain, which relaxes what the policy enforces, must not run
       * without its reports. */
      fprintf (stderr, "securer: warning: no seccomp user notification with CONTINUE here: the policy's "
               "log/notify calls go to the kernel's audit log and are not reported\n");
      *mode = SECURER_COMPLAIN_OFF;
      return 0;
    }
  if (securer_complain_available (err) < 0 || securer_complain_new (p, out, err) < 0
      || securer_complain_prepare (p, *mode, err) < 0)
    {
      securer_complain_free (*out);
      *out = NULL;
      return -1;
    }
  /* Said before the command runs: a weakened sandbox must never pass for
   * the policy's own. */
  if (*mode == SECURER_COMPLAIN_RUN)
    fprintf (stderr, "securer: warning: complain mode (--complain): the policy's seccomp denials are not "
             "enforced, only its kill rules; the calls they would refuse go ahead and are reported\n");
  else
    fprintf (stderr, "securer: complain mode (the policy's log/notify actions): those calls go ahead and are "
             "reported\n");
  return 0;
}

static void
report_complain (const struct securer_complain *c, enum securer_complain_mode mode, bool verbose)
{
  unsigned long long calls = securer_complain_calls (c);
  fprintf (stderr, "securer: complain mode (%s): %llu call%s reported, %zu distinct%s\n",
           mode == SECURER_COMPLAIN_RUN ? "--complain" : "policy", calls, calls == 1 ? "" : "s",
           securer_complain_distinct (c), verbose || calls == 0 ? "" : " (--verbose or --json-status lists them)");
  if (verbose)
    securer_complain_print (c, stderr, "securer: complain:   ");
}

/* The status record with what complain mode saw (empty when it was off). */
static char *
status_with_complain (char *js, const struct securer_complain *c, enum securer_complain_mode mode)
{
  json_t *o = json_loads (js, 0, NULL);
  if (o == NULL)
    return js;
  const char *name = securer_complain_mode_name (mode);
  json_object_set_new (o, "complain_mode", name ? json_string (name) : json_null ());
  json_object_set_new (o, "complain", securer_complain_json (c));
  json_object_set_new (o, "complain_unlisted", json_integer ((json_int_t) securer_complain_unlisted (c)));
  char *s = json_dumps (o, JSON_COMPACT);
  json_decref (o);
  if (s == NULL)
    return js;
  free (js);
  return s;
}

int
cli_supervise (struct securer_sandbox *sb, int sigfd, struct cli_relay *relay, struct securer_status *st,
               securer_err_t *err)
{
  bool ended = false;
  for (;;)
    {
      if (!ended)
        {
          int r = securer_sandbox_dispatch (sb, st, err);
          if (r < 0)
            return -1;
          if (r == 1)
            {
              ended = true;
              /* After a timeout the caller may be the one not reading: what
               * it does not take at once is dropped rather than waited for. */
              if (relay != NULL)
                cli_relay_sandbox_ended (relay, st->reason != SECURER_KILL_TIMEOUT);
            }
        }
      if (ended && (relay == NULL || !cli_relay_busy (relay)))
        return 0;
      struct pollfd pf[2 + CLI_RELAY_MAX_POLLFDS];
      unsigned n = 0;
      if (!ended)
        pf[n++] = (struct pollfd) { .fd = securer_sandbox_pollfd (sb), .events = POLLIN };
      int sig_at = -1;
      if (sigfd >= 0)
        {
          sig_at = (int) n;
          pf[n++] = (struct pollfd) { .fd = sigfd, .events = POLLIN };
        }
      unsigned first = n;
      bool now = false;
      if (relay != NULL)
        n += cli_relay_poll_fill (relay, pf + n, &now);
      if (poll (pf, n, now ? 0 : -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return securer_error_set (err, errno, "poll");
        }
      if (sig_at >= 0 && pf[sig_at].revents)
        {
          struct signalfd_siginfo si;
          while (read (sigfd, &si, sizeof si) == (ssize_t) sizeof si)
            {
              if (ended)
                return 0;   /* the operator gives up on the remaining output */
              securer_sandbox_signal (sb, (int) si.ssi_signo, NULL);
            }
        }
      if (relay != NULL)
        cli_relay_pump (relay, pf + first, n - first);
    }
}

int
cmd_run (int argc, char **argv)
{
  /* Before anything is opened: a closed std fd must not be mistaken for
   * whatever takes its number later. */
  int caller_fd[3];
  cli_relay_std_fds (caller_fd);
  struct run_args a;
  int rc = parse_args (argc, argv, &a);
  if (rc != 0)
    return rc;

  securer_err_t err = NULL;
  int status_fd = -1;
  if (a.json_status != NULL && (status_fd = open_status_target (a.json_status, &err)) < 0)
    return fail_setup (&err, -1);

  char *path = NULL;
  struct securer_policy *policy = NULL;
  struct securer_complain *complain = NULL;
  enum securer_complain_mode cmode = SECURER_COMPLAIN_OFF;
  /* The policy is this process's alone: its seccomp rules are resolved by
   * the launch, while the sandbox is being set up. */
  if (securer_policy_find (a.policy, &path, &err) < 0
      || securer_policy_load_file_opts (path, SECURER_POLICY_DEFER_SECCOMP, &policy, NULL, &err) < 0
      || apply_overrides (&a, policy, &err) < 0 || setup_complain (&a, policy, &cmode, &complain, &err) < 0)
    {
      securer_error_set_status (&err, SECURER_EXIT_SETUP);
      securer_complain_free (complain);
      securer_policy_free (policy);
      free (path);
      rc = fail_setup (&err, status_fd);
      if (status_fd >= 0)
        close (status_fd);
      return rc;
    }
  free (path);

  /* Blocked before spawn so none is lost; the payload starts with an empty mask. */
  sigset_t set, old;
  sigemptyset (&set);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset (&set, forwarded[i]);
  sigprocmask (SIG_BLOCK, &set, &old);
  int sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0)
    {
      /* Without it the blocked signals would never reach CMD: a ^C would
       * do nothing until the timeout. */
      securer_error_set (&err, errno, "signalfd for the forwarded signals");
      rc = fail_setup (&err, status_fd);
      sigprocmask (SIG_SETMASK, &old, NULL);
      securer_complain_free (complain);
      securer_policy_free (policy);
      if (status_fd >= 0)
        close (status_fd);
      return rc;
    }

  struct securer_spawn_opts o = {
    .policy = policy,
    .argv = a.argv,
    .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
    .timeout_ms = a.timeout_ms,
    .verbose = a.verbose,
    .no_seccomp_cache = a.no_seccomp_cache,
    .on_syscall = complain != NULL ? securer_complain_record : NULL,
    .on_syscall_ctx = complain,
    /* The status is all this process waits for before it exits. */
    .return_before_teardown = true,
  };
  struct securer_sandbox *sb = NULL;
  struct securer_status st;
  memset (&st, 0, sizeof st);
  struct cli_relay *relay = NULL;
  struct cli_relay_opts ro = { .in = caller_fd[0], .out = caller_fd[1], .err = caller_fd[2],
                              .no_stdin = a.no_stdin, .raw = a.raw_output };
  if (!a.inherit_stdio && cli_relay_new (&ro, &relay, &err) < 0)
    rc = fail_setup (&err, status_fd);
  else if (cli_relay_spawn (relay, &o, &sb, &err) < 0 || report_degraded (sb) < 0
           || cli_supervise (sb, sigfd, relay, &st, &err) < 0)
    rc = fail_setup (&err, status_fd);
  else
    {
      rc = securer_status_exit_code (&st);
      if (st.reason == SECURER_KILL_TIMEOUT)
        fprintf (stderr, "securer: timeout: killed everything in the sandbox\n");
      if (st.reason == SECURER_KILL_LIMIT && st.limit == SECURER_LIMIT_MEMORY)
        fprintf (stderr, "securer: the cgroup memory limit was reached: killed everything in "
                 "the sandbox\n");
      else if (st.reason == SECURER_KILL_LIMIT && st.limit == SECURER_LIMIT_CPU)
        fprintf (stderr, "securer: the CPU time limit (limit cpu) was reached: the kernel killed "
                 "the command\n");
      else if (st.reason == SECURER_KILL_LIMIT && st.limit == SECURER_LIMIT_FSIZE)
        fprintf (stderr, "securer: the file size limit (limit fsize) was reached: the kernel "
                 "killed the command\n");
      if (st.reason == SECURER_KILL_SECCOMP)
        fprintf (stderr, "securer: the seccomp filter killed the command%s%s\n",
                 st.detail ? " at syscall " : "", st.detail ? st.detail : "");
      if (complain != NULL)
        report_complain (complain, cmode, a.verbose);
      if (status_fd >= 0)
        {
          char *js = securer_sandbox_status_json (sb, &st, &err);
          if (js != NULL)
            js = status_with_complain (js, complain, cmode);
          if (js == NULL)
            cli_report (&err);
          else
            {
              write_all (status_fd, js);
              write_all (status_fd, "\n");
              free (js);
            }
        }
    }
  securer_status_clear (&st);
  securer_sandbox_free (sb);
  cli_relay_free (relay);
  securer_complain_free (complain);
  securer_policy_free (policy);
  if (sigfd >= 0)
    close (sigfd);
  sigprocmask (SIG_SETMASK, &old, NULL);
  if (status_fd >= 0)
    close (status_fd);
  return rc;
}
