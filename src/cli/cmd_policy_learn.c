/* securer policy learn — run a command in a base policy's sandbox with a
 * filter that reports every syscall and lets it continue, then print the
 * syscalls as an allowlist fragment. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli.h"
#include "relay.h"
#include "policy/derive.h"
#include "policy/expect.h"
#include "seccomp/learn.h"

static void
learn_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy learn [OPTIONS] -- CMD [ARGS...] [-- CMD [ARGS...]]...\n"
           "\n"
           "Run CMD in the sandbox of BASE (namespaces, mounts, Landlock, limits) with BASE's\n"
           "seccomp rules replaced by a filter that reports every syscall to securer and\n"
           "lets it continue, then print the syscalls CMD used (and every process it\n"
           "started) as a policy fragment of 'seccomp allow' lines:\n"
           "  - one line per syscall, under a comment naming the smallest shipped @group\n"
           "    holding it, with the number of calls;\n"
           "  - socket/socketpair families, ioctl requests and prctl options as\n"
           "    conditions ('seccomp allow socket if arg0 == AF_UNIX');\n"
           "  - a whole @group only when CMD used every member of it (or --collapse);\n"
           "  - as comments, the exec list of the programs that ran and their loaders, and\n"
           "    read-only mounts of the directories of the files read, to review.\n"
           "The fragment allows exactly what this run needed: include it after a\n"
           "'seccomp default' line, review it, and tighten.  Several commands, each after\n"
           "its own '--', are run one after the other in the same sandbox policy and their\n"
           "syscalls merged into one fragment (a '--' always starts a new command).\n"
           "\n"
           "Options:\n"
           "  -p, --policy BASE     base policy, a file or NAME (default: minimal)\n"
           "  -o, --output FILE     write the fragment to FILE instead of standard output\n"
           "      --write-policy FILE\n"
           "                        also write a complete policy to FILE: BASE's lines (its\n"
           "                        includes of the shipped pieces, mounts, limits, ...) with\n"
           "                        its syscall allowlist replaced by the fragment; it is\n"
           "                        loaded back, and an error if it does not load\n"
           "      --write-expect FILE\n"
           "                        with --write-policy: also write an expectation file for\n"
           "                        it ('securer policy test POLICY FILE' passes): the verdict\n"
           "                        of each call CMD made and of each call BASE allowed that\n"
           "                        CMD did not, BASE's network, limits, paths, environment\n"
           "      --json            write JSON (syscalls, counts, groups, fragment) instead\n"
           "      --collapse PCT    write @group once PCT%% of its members were used\n"
           "                        (1-100, default 100; below 100 the fragment allows more\n"
           "                        than the run used, and says what)\n"
           "      --keep-denials    keep BASE's errno/kill/trap rules while learning (CMD sees\n"
           "                        BASE's denials; by default it meets none)\n"
           "  -t, --timeout SEC     wall-clock limit (overrides BASE's)\n"
           "  -v, --verbose         report each setup step on stderr\n"
           "  -h, --help            show this help\n"
           "\n"
           "Without --output, CMD's standard output goes to standard error so that standard\n"
           "output holds only the fragment.  CMD's stdio are pipes relayed as by\n"
           "'securer run' (escape sequences removed on a terminal).\n"
           "\n"
           "Exit status: 0 when a fragment was written (CMD's own status is reported on\n"
           "standard error), 125 when the sandbox could not be set up or this kernel\n"
           "cannot report syscalls, 126/127 when CMD could not be executed/found, 1 when\n"
           "the fragment could not be written, 2 for usage errors.\n");
}

struct learn_args {
  const char *base, *output, *write_policy, *write_expect;
  bool json, keep_denials, verbose;
  unsigned collapse_pct;
  uint64_t timeout_ms;
  char **argv;
  /* Each command, NULL-terminated in place of the '--' that followed it. */
#define LEARN_MAX_RUNS 64
  char **cmds[LEARN_MAX_RUNS];
  size_t n_cmds;
};

#define usage(...) cli_usage ("policy learn", 2, __VA_ARGS__)

static int
parse_args (int argc, char **argv, struct learn_args *a)
{
  static const struct option opts[] = {
    { "policy", required_argument, NULL, 'p' },
    { "output", required_argument, NULL, 'o' },
    { "write-policy", required_argument, NULL, 'P' },
    { "write-expect", required_argument, NULL, 'E' },
    { "json", no_argument, NULL, 'j' },
    { "collapse", required_argument, NULL, 'c' },
    { "keep-denials", no_argument, NULL, 'k' },
    { "timeout", required_argument, NULL, 't' },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  memset (a, 0, sizeof *a);
  a->base = "minimal";
  a->collapse_pct = 100;
  int c;
  optind = 1;
  /* '+': stop at CMD, whose own options are not ours. */
  while ((c = getopt_long (argc, argv, "+p:o:t:vh", opts, NULL)) != -1)
    {
      char *end = NULL;
      switch (c)
        {
        case 'p': a->base = optarg; break;
        case 'o': a->output = optarg; break;
        case 'P': a->write_policy = optarg; break;
        case 'E': a->write_expect = optarg; break;
        case 'j': a->json = true; break;
        case 'k': a->keep_denials = true; break;
        case 'v': a->verbose = true; break;
        case 'c':
          {
            errno = 0;
            unsigned long v = strtoul (optarg, &end, 10);
            if (errno || end == optarg || (*end != '\0' && strcmp (end, "%") != 0) || v < 1 || v > 100)
              return usage ("--collapse wants a percentage from 1 to 100, not '%s'", optarg);
            a->collapse_pct = (unsigned) v;
            break;
          }
        case 't':
          if (cli_parse_timeout (optarg, &a->timeout_ms) < 0)
            return usage ("--timeout wants a positive number of seconds, not '%s'", optarg);
          break;
        case 'h': learn_help (stdout); return -1;
        default: return usage ("%s", "bad option");
        }
    }
  if (optind >= argc)
    return usage ("%s", "no command given (put it after '--')");
  if (a->write_expect != NULL && a->write_policy == NULL)
    return usage ("%s", "--write-expect describes the policy of --write-policy: give both");
  a->argv = argv + optind;
  int start = optind;
  for (int i = optind; i <= argc; i++)
    {
      if (i < argc && strcmp (argv[i], "--") != 0)
        continue;
      if (i == start)
        return usage ("%s", "an empty command: nothing after a '--'");
      if (a->n_cmds == LEARN_MAX_RUNS)
        return usage ("at most %d commands", LEARN_MAX_RUNS);
      a->cmds[a->n_cmds++] = argv + start;
      if (i < argc)
        argv[i] = NULL;
      start = i + 1;
    }
  return 0;
}

/* *path_out (may be NULL) gets the file BASE names. */
static struct securer_policy *
load_base (const char *arg, char **path_out, securer_err_t *err)
{
  char *path = NULL;
  struct securer_policy *p = NULL;
  if (securer_policy_find (arg, &path, err) < 0 || securer_policy_load_file (path, &p, NULL, err) < 0)
    p = NULL;
  if (path_out != NULL && p != NULL)
    *path_out = path;
  else
    free (path);
  return p;
}

static int
write_out (const char *path, const char *text, securer_err_t *err)
{
  int fd = 1;
  if (path != NULL && strcmp (path, "-") != 0)
    {
      fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
      if (fd < 0)
        return securer_error_set (err, errno, "write %s", path);
    }
  size_t len = strlen (text), off = 0;
  while (off < len)
    {
      ssize_t n = write (fd, text + off, len - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int e = n < 0 ? errno : EIO;
          if (fd != 1)
            close (fd);
          return securer_error_set (err, e, "write %s", path ? path : "standard output");
        }
      off += (size_t) n;
    }
  if (fd != 1 && close (fd) < 0)
    return securer_error_set (err, errno, "write %s", path);
  return 0;
}

/* --write-policy and --write-expect: BASE's lines with the fragment in
 * place of its allowlist, loaded back to be sure it is a policy, and the
 * expectations of what it gives. */
static int
write_policy (const struct learn_args *a, const struct securer_learn *l, const struct securer_learn_info *info,
              const char *fragment, securer_err_t *err)
{
  char *base_path = NULL, *rules = NULL, *header = NULL, *text = NULL, *expect = NULL;
  struct securer_policy *base = load_base (a->base, &base_path, err), *written = NULL;
  int rc = -1;
  if (base == NULL)
    goto out;
  char d[64], fa[64];
  struct securer_action def = base->seccomp.default_action, foreign = base->seccomp.foreign_arch;
  if (asprintf (&rules, "seccomp on\nseccomp default %s\nseccomp foreign-abi %s\n%s",
                securer_verdict_text (def, d, sizeof d), securer_verdict_text (foreign, fa, sizeof fa), fragment)
        < 0
      || asprintf (&header, "# Learned by `securer policy learn` from %s (%s): its lines, with its\n"
                   "# syscall allowlist replaced by what the command used.\n\n", a->base, base_path)
           < 0)
    {
      rules = header = NULL;
      securer_error_set (err, ENOMEM, "learn: write the policy");
      goto out;
    }
  if ((text = securer_policy_derive (base_path, header, rules, err)) == NULL
      || write_out (a->write_policy, text, err) < 0)
    goto out;
  if (securer_policy_load_file (a->write_policy, &written, NULL, err) < 0)
    {
      securer_error_prefix (err, "the policy written to %s does not load", a->write_policy);
      goto out;
    }
  if (a->write_expect != NULL
      && ((expect = securer_learn_expect (l, written, base, info, err)) == NULL
          || write_out (a->write_expect, expect, err) < 0))
    goto out;
  rc = 0;
out:
  free (base_path);
  free (rules);
  free (header);
  free (text);
  free (expect);
  securer_policy_free (base);
  securer_policy_free (written);
  return rc;
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void
report_status (const char *cmd, const struct securer_status *st)
{
  if (st->reason == SECURER_KILL_TIMEOUT)
    fprintf (stderr, "securer: learn: %s timed out; the fragment covers what it did until then\n", cmd);
  else if (st->exited)
    fprintf (stderr, "securer: learn: %s exited with status %d\n", cmd, st->exit_code);
  else
    fprintf (stderr, "securer: learn: %s was killed by signal %d%s%s%s\n", cmd, st->signal,
             st->detail ? " (seccomp, at " : "", st->detail ? st->detail : "", st->detail ? ")" : "");
}

/* One command of the learning, recorded into l; *st says how it ended. */
static int
learn_one (const struct learn_args *a, char **cmd, struct securer_policy *p, struct securer_learn *l, int sigfd,
           const int caller_fd[3], struct securer_status *st, securer_err_t *err)
{
  struct securer_sandbox *sb = NULL;
  struct cli_relay *relay = NULL;
  struct securer_spawn_opts o = {
    .policy = p,
    .argv = cmd,
    .timeout_ms = a->timeout_ms,
    .verbose = a->verbose,
    .on_syscall = securer_learn_record,
    .on_syscall_ctx = l,
  };
  /* CMD's stdio is relayed as for `securer run`, so the fragment covers
   * what it does there; standard output is the fragment's unless that
   * goes to a file. */
  struct cli_relay_opts ro = {
    .in = caller_fd[0],
    .out = caller_fd[a->output != NULL && strcmp (a->output, "-") != 0 ? 1 : 2],
    .err = caller_fd[2],
  };
  int rc = 0;
  if (cli_relay_new (&ro, &relay, err) < 0)
    rc = SECURER_EXIT_SETUP;
  else if (cli_relay_spawn (relay, &o, &sb, err) < 0)
    rc = *err && (*err)->status ? (*err)->status : SECURER_EXIT_SETUP;
  /* Every readable pollfd is one or more notifications (each recorded by
   * the callback inside dispatch) or the end of the sandbox. */
  else if (cli_supervise (sb, sigfd, relay, st, err) < 0)
    rc = SECURER_EXIT_SETUP;
  else
    report_status (cmd[0], st);
  securer_sandbox_free (sb);
  cli_relay_free (relay);
  return rc;
}

int
cmd_policy_learn (int argc, char **argv)
{
  int caller_fd[3];
  cli_relay_std_fds (caller_fd);
  struct learn_args a;
  int rc = parse_args (argc, argv, &a);
  if (rc != 0)
    return rc < 0 ? 0 : rc;

  securer_err_t err = NULL;
  struct securer_learn *l = NULL;
  struct securer_policy *p = NULL;
  struct securer_status st[LEARN_MAX_RUNS];
  struct securer_learn_run runs[LEARN_MAX_RUNS];
  memset (st, 0, sizeof st);
  char *text = NULL;
  int sigfd = -1;
  sigset_t set, old;
  sigemptyset (&set);
  sigprocmask (SIG_BLOCK, NULL, &old);

  if (securer_learn_available (&err) < 0 || (p = load_base (a.base, NULL, &err)) == NULL
      || securer_learn_new (p, &l, &err) < 0 || securer_learn_prepare (p, a.keep_denials, &err) < 0)
    {
      rc = SECURER_EXIT_SETUP;
      goto out;
    }

  /* Blocked before spawn so none is lost; the payload starts with an empty mask. */
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset (&set, forwarded[i]);
  sigprocmask (SIG_BLOCK, &set, NULL);
  sigfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0)
    {
      /* The blocked signals would never reach CMD. */
      securer_error_set (&err, errno, "signalfd for the forwarded signals");
      rc = SECURER_EXIT_SETUP;
      goto out;
    }

  /* One after the other, into one record: a run that could not start
   * ends the learning, since its part of the list would be missing. */
  for (size_t i = 0; i < a.n_cmds; i++)
    {
      if ((rc = learn_one (&a, a.cmds[i], p, l, sigfd, caller_fd, &st[i], &err)) != 0)
        goto out;
      runs[i] = (struct securer_learn_run) { a.cmds[i], &st[i] };
    }

  struct securer_learn_info info = {
    .argv = a.argv,
    .base = a.base,
    .keep_denials = a.keep_denials,
    .status = &st[0],
    .collapse_pct = a.collapse_pct,
    .runs = runs,
    .n_runs = a.n_cmds,
  };
  if (a.json)
    {
      json_t *j = securer_learn_json (l, &info, &err);
      if (j != NULL)
        {
          char *s = json_dumps (j, JSON_INDENT (2) | JSON_PRESERVE_ORDER);
          json_decref (j);
          if (s != NULL && asprintf (&text, "%s\n", s) < 0)
            text = NULL;
          free (s);
          if (text == NULL)
            securer_error_set (&err, ENOMEM, "learn: JSON");
        }
    }
  else
    text = securer_learn_fragment (l, &info, &err);
  if (text == NULL || write_out (a.output, text, &err) < 0)
    {
      rc = 1;
      goto out;
    }
  if (a.write_policy != NULL)
    {
      char *fragment = a.json ? securer_learn_fragment (l, &info, &err) : NULL;
      int w = (a.json && fragment == NULL) ? -1 : write_policy (&a, l, &info, a.json ? fragment : text, &err);
      free (fragment);
      if (w < 0)
        {
          rc = 1;
          goto out;
        }
    }
  rc = 0;

out:
  if (err != NULL)
    cli_report (&err);
  free (text);
  for (size_t i = 0; i < a.n_cmds; i++)
    securer_status_clear (&st[i]);
  securer_learn_free (l);
  securer_policy_free (p);
  if (sigfd >= 0)
    close (sigfd);
  sigprocmask (SIG_SETMASK, &old, NULL);
  return rc;
}
