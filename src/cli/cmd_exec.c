/* securer exec — run R code once in a sandboxed session and print its value. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "termsafe.h"
#include "securer/session.h"
#include "session/internal.h"

void
cmd_exec_help (FILE *out)
{
  fprintf (out,
           "Usage: securer exec [OPTIONS] (-e CODE | -f FILE | -)\n"
           "\n"
           "Run R code once in a fresh sandboxed R session and print what it prints,\n"
           "as the R console would (visible values are printed).  On a terminal, escape\n"
           "sequences in it are removed and other control characters and invalid UTF-8\n"
           "shown (\"^G\", \"\\xff\"); to a file or a pipe it is written unchanged.\n"
           "\n"
           "Options:\n"
           "  -e, --expr CODE         R code to run\n"
           "  -f, --file FILE         read the R code from FILE ('-' for stdin)\n"
           "  -p, --policy P          policy name or path (default: r)\n"
           "  -t, --tool SPEC         register a host tool (repeatable), see below\n"
           "      --timeout S         execution timeout in seconds (default 30)\n"
           "      --tool-env VAR[=VALUE]  add VAR to every tool command's environment\n"
           "                          (repeatable; VAR alone passes securer's own value on)\n"
           "      --max-tool-calls N  fail when the code calls tools more than N times\n"
           "                          (default 1000; 'unlimited' lifts the cap)\n"
           "      --max-output-lines N  keep at most N output lines (default 10000)\n"
           "      --max-output-bytes N  keep at most N bytes of output text (default\n"
           "                          1048576); output past either cap is read and\n"
           "                          counted, not kept; 'unlimited' lifts a cap\n"
           "      --max-reply N       with --json: the printed object stays within N\n"
           "                          bytes (default 16777216): output lines are left\n"
           "                          out first, then a value that still does not fit\n"
           "                          makes the status too_large\n"
           "      --audit-log FILE    append JSON-lines audit events to FILE (created 0600)\n"
           "      --sanitize-errors   strip paths, pids, host names and IPs from errors\n"
           "      --cold              start R cold, in a new sandbox, whatever the policy's\n"
           "                          'session template' says\n"
           "      --template          start R from the policy's template (a pre-initialised\n"
           "                          R that forks the session); refused (status 125) when\n"
           "                          the policy cannot have one.  Without either,\n"
           "                          the policy decides; its default, auto, starts exec's\n"
           "                          one session cold (a template pays off from the\n"
           "                          second session of a process; see docs/sessions.md)\n"
           "      --json              print one JSON object: status, value (tagged encoding),\n"
           "                          output, warnings, error, and the pages drawn as\n"
           "                          PNG images in base64 (see docs/protocol.md)\n"
           "      --plain             with --json: the value as ordinary JSON (lossy)\n"
           "  -v, --verbose           report the sandbox set-up steps on stderr\n"
           "  -h, --help              show this help\n"
           "\n"
           "Tools: SPEC is NAME(ARG:TYPE,...)=COMMAND, e.g.\n"
           "  --tool 'add(a:numeric,b:numeric)=/usr/local/bin/add-tool'\n"
           "TYPE is numeric, integer, character, logical, list, data.frame or any (the\n"
           "default when ':TYPE' is left out); 'NAME=COMMAND' declares no arguments.\n"
           "COMMAND runs on the host, outside the sandbox, without a shell: it is split\n"
           "on spaces, or given as a JSON array of strings ('[\"/bin/tool\", \"--x\"]');\n"
           "a first word without '/' is looked up in PATH.  It receives the arguments\n"
           "as a JSON object on stdin (ordinary JSON: NA is null, length-1 vectors are\n"
           "scalars) and must print the value as JSON on stdout and exit 0; a non-zero\n"
           "exit makes the call fail in R with the first line of its stderr.  It runs\n"
           "in its own process group with a clean environment (PATH, LANG=C.UTF-8,\n"
           "HOME, USER, LOGNAME, TZ, TMPDIR, SECURER_TOOL, SECURER_SESSION_ID and each\n"
           "--tool-env) and no descriptors but its pipes.  Output over 1 MiB fails the\n"
           "call; the --timeout covers tool commands too (their process group is\n"
           "killed), and anything a command leaves running in its group is killed.\n"
           "\n"
           "Exit status: 0 success, 1 R error, 124 timeout, 125 the session could not\n"
           "start, 2 usage error.\n");
}


/* ---- tools given as host commands ------------------------------------------ */

static void
free_argv (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

/* COMMAND: a JSON array of strings, or words separated by spaces (no shell,
 * no quoting). */
static char **
split_command (const char *cmd, securer_err_t *err)
{
  size_t n = 0;
  char **v = NULL;
  if (cmd[0] == '[')
    {
      json_error_t je;
      json_t *a = json_loads (cmd, 0, &je);
      if (!json_is_array (a) || json_array_size (a) == 0)
        {
          json_decref (a);
          securer_error_set (err, EINVAL, "tool command: expected a non-empty JSON array of strings");
          return NULL;
        }
      v = calloc (json_array_size (a) + 1, sizeof *v);
      size_t i;
      json_t *e;
      json_array_foreach (a, i, e)
      {
        if (!json_is_string (e) || v == NULL)
          {
            json_decref (a);
            free_argv (v);
            securer_error_set (err, EINVAL, "tool command: array elements must be strings");
            return NULL;
          }
        v[n++] = strdup (json_string_value (e));
      }
      json_decref (a);
      return v;
    }
  v = calloc (strlen (cmd) / 2 + 2, sizeof *v);
  for (const char *p = cmd; v && *p;)
    {
      while (*p == ' ')
        p++;
      if (!*p)
        break;
      size_t len = strcspn (p, " ");
      v[n++] = strndup (p, len);
      p += len;
    }
  if (v == NULL || n == 0)
    {
      free_argv (v);
      securer_error_set (err, EINVAL, "tool command is empty");
      return NULL;
    }
  return v;
}

/* NAME[(ARG[:TYPE],...)]=COMMAND */
static int
add_tool_spec (struct securer_tools *tools, const char *spec, const char *const *env,
               securer_err_t *err)
{
  const char *eq = strchr (spec, '=');
  const char *paren = strchr (spec, '(');
  if (eq == NULL || (paren != NULL && paren < eq && strchr (paren, ')') == NULL))
    return securer_error_set (err, EINVAL, "--tool '%s': expected NAME(ARG:TYPE,...)=COMMAND", spec);
  if (paren != NULL && paren < eq)
    eq = strchr (strchr (paren, ')'), '=');
  if (eq == NULL)
    return securer_error_set (err, EINVAL, "--tool '%s': expected NAME(ARG:TYPE,...)=COMMAND", spec);
  size_t name_len = (paren != NULL && paren < eq) ? (size_t) (paren - spec) : (size_t) (eq - spec);
  char *name = strndup (spec, name_len);
  struct securer_tool_arg args[64];
  char *names[64];
  size_t n = 0;
  int rc = -1;
  if (paren != NULL && paren < eq)
    {
      const char *close_p = strchr (paren, ')');
      char *list = strndup (paren + 1, (size_t) (close_p - paren - 1));
      char *save = NULL;
      for (char *tok = strtok_r (list, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
        {
          while (*tok == ' ')
            tok++;
          if (n == 64)
            {
              securer_error_set (err, EINVAL, "--tool '%s': too many arguments", spec);
              free (list);
              goto done;
            }
          char *colon = strchr (tok, ':');
          int ty = SECURER_ARG_ANY;
          if (colon)
            {
              *colon = '\0';
              ty = securer_arg_type_parse (colon + 1);
              if (ty < 0)
                {
                  securer_error_set (err, EINVAL, "--tool '%s': unknown type '%s'", spec, colon + 1);
                  free (list);
                  goto done;
                }
            }
          names[n] = strdup (tok);
          args[n].name = names[n];
          args[n].type = (enum securer_arg_type) ty;
          n++;
        }
      free (list);
    }
  {
    char **cmd = split_command (eq + 1, err);
    if (cmd == NULL)
      {
        securer_error_prefix (err, "--tool %s", name);
        goto done;
      }
    struct securer_tool_command tc = { .argv = (const char *const *) cmd, .env = env };
    rc = securer_tools_add_command (tools, name, "", args, n, &tc, err);
    free_argv (cmd);
  }
done:
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (name);
  return rc;
}

/* Which of stdout and stderr are terminals: what the sandbox prints goes
 * to them through the terminal sanitiser. */
struct ttys {
  bool out, err;
};

static void
print_line (void *data, enum securer_stream stream, const char *line)
{
  const struct ttys *t = data;
  bool to_err = stream == SECURER_STDERR;
  FILE *f = to_err ? stderr : stdout;
  termsafe_fputs (line, f, to_err ? t->err : t->out);
  fputc ('\n', f);
  fflush (f);
}

static char *
read_all (FILE *f)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream (&buf, &len);
  if (m == NULL)
    return NULL;
  char chunk[8192];
  size_t n;
  while ((n = fread (chunk, 1, sizeof chunk, f)) > 0)
    fwrite (chunk, 1, n, m);
  fclose (m);
  return buf;
}

int
cmd_exec (int argc, char **argv)
{
  const char *code = NULL, *file = NULL, *policy_name = NULL, *audit = NULL;
  double timeout = 0;
  unsigned max_tools = 0, max_lines = 0;
  size_t max_bytes = 0, max_reply = SECURER_DEFAULT_MAX_REPLY;
  bool json = false, plain = false, sanitize = false, verbose = false;
  enum securer_session_start start = SECURER_SESSION_START_POLICY;
  int r;
  struct securer_tools *tools = securer_tools_new ();
  /* Tools are registered once every --tool-env is known. */
  const char **specs = calloc ((size_t) argc + 1, sizeof *specs);
  const char **tool_env = calloc ((size_t) argc + 1, sizeof *tool_env);
  size_t n_specs = 0, n_env = 0;
  securer_err_t err = NULL;
  int status = 2;
  if (tools == NULL || specs == NULL || tool_env == NULL)
    {
      fprintf (stderr, "securer exec: out of memory\n");
      goto out;
    }
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDS_VALUE()                                                     \
  do {                                                                    \
    if (val == NULL)                                                      \
      {                                                                   \
        fprintf (stderr, "securer exec: %s needs a value\n", a);          \
        goto out;                                                         \
      }                                                                   \
    i++;                                                                  \
  } while (0)
      if (strcmp (a, "-e") == 0 || strcmp (a, "--expr") == 0)
        {
          NEEDS_VALUE ();
          code = val;
        }
      else if (strcmp (a, "-f") == 0 || strcmp (a, "--file") == 0)
        {
          NEEDS_VALUE ();
          file = val;
        }
      else if (strcmp (a, "-") == 0)
        file = "-";
      else if (strcmp (a, "-p") == 0 || strcmp (a, "--policy") == 0)
        {
          NEEDS_VALUE ();
          policy_name = val;
        }
      else if (strcmp (a, "-t") == 0 || strcmp (a, "--tool") == 0)
        {
          NEEDS_VALUE ();
          specs[n_specs++] = val;
        }
      else if (strcmp (a, "--tool-env") == 0)
        {
          NEEDS_VALUE ();
          tool_env[n_env++] = val;
        }
      else if (strcmp (a, "--timeout") == 0)
        {
          NEEDS_VALUE ();
          char *end;
          timeout = strtod (val, &end);
          if (*end || !(timeout > 0) || timeout > 1e7)
            {
              fprintf (stderr, "securer exec: --timeout needs a positive number of seconds\n");
              goto out;
            }
        }
      else if (strcmp (a, "--max-tool-calls") == 0 || strcmp (a, "--max-output-lines") == 0
               || strcmp (a, "--max-output-bytes") == 0 || strcmp (a, "--max-reply") == 0)
        {
          NEEDS_VALUE ();
          bool unlimited = strcmp (val, "unlimited") == 0 && strcmp (a, "--max-reply") != 0;
          char *end;
          unsigned long long n = unlimited ? 0 : strtoull (val, &end, 10);
          if (!unlimited && (val[0] == '-' || *end || n == 0 || n > (1ull << 40)))
            {
              fprintf (stderr, "securer exec: %s needs a positive integer%s\n", a,
                       strcmp (a, "--max-reply") != 0 ? " or 'unlimited'" : "");
              goto out;
            }
          if (strcmp (a, "--max-tool-calls") == 0)
            max_tools = unlimited || n > UINT_MAX ? UINT_MAX : (unsigned) n;
          else if (strcmp (a, "--max-output-lines") == 0)
            max_lines = unlimited || n > UINT_MAX ? UINT_MAX : (unsigned) n;
          else if (strcmp (a, "--max-output-bytes") == 0)
            max_bytes = unlimited ? SIZE_MAX : (size_t) n;
          else
            max_reply = n < 4096 ? 4096 : (size_t) n;
        }
      else if (strcmp (a, "--audit-log") == 0)
        {
          NEEDS_VALUE ();
          audit = val;
        }
      else if (strcmp (a, "--json") == 0)
        json = true;
      else if (strcmp (a, "--plain") == 0)
        plain = true;
      else if (strcmp (a, "--sanitize-errors") == 0)
        sanitize = true;
      else if ((r = cli_start_option ("exec", a, &start)) != 0)
        {
          if (r < 0)
            goto out;
        }
      else if (strcmp (a, "-v") == 0 || strcmp (a, "--verbose") == 0)
        verbose = true;
      else
        {
          fprintf (stderr, "securer exec: unknown option '%s'; see 'securer exec --help'\n", a);
          goto out;
        }
#undef NEEDS_VALUE
    }
  if ((code != NULL) + (file != NULL) != 1)
    {
      fprintf (stderr, "securer exec: give exactly one of -e CODE, -f FILE or -\n");
      goto out;
    }
  for (size_t i = 0; i < n_specs; i++)
    if (add_tool_spec (tools, specs[i], tool_env, &err) < 0)
      {
        cli_report (&err);
        goto out;
      }
  char *owned_code = NULL;
  if (file != NULL)
    {
      FILE *f = strcmp (file, "-") == 0 ? stdin : fopen (file, "re");
      if (f == NULL)
        {
          fprintf (stderr, "securer exec: %s: %s\n", file, strerror (errno));
          goto out;
        }
      owned_code = read_all (f);
      if (f != stdin)
        fclose (f);
      if (owned_code == NULL)
        {
          fprintf (stderr, "securer exec: %s: cannot read\n", file);
          goto out;
        }
      code = owned_code;
    }

  /* A tool command or a closed stdout must not kill us with SIGPIPE. */
  signal (SIGPIPE, SIG_IGN);
  struct securer_policy *policy = NULL;
  status = 125;
  if (policy_name != NULL)
    {
      char *path = NULL;
      if (securer_policy_find (policy_name, &path, &err) < 0
          || securer_policy_load_file (path, &policy, NULL, &err) < 0)
        {
          free (path);
          cli_report (&err);
          free (owned_code);
          goto out;
        }
      free (path);
    }
  /* A template pays off only for a session after the first: exec has one,
   * so under the default (auto) it starts cold.  An explicit 'on' (policy,
   * SECURER_SESSION_TEMPLATE) or --template still forks from a template. */
  const char *env_mode = getenv ("SECURER_SESSION_TEMPLATE");
  if (start == SECURER_SESSION_START_POLICY
      && (policy == NULL || policy->session_template == SECURER_SESSION_TEMPLATE_AUTO)
      && (env_mode == NULL || *env_mode == '\0' || strcmp (env_mode, "auto") == 0))
    start = SECURER_SESSION_START_COLD;
  struct securer_session_opts so = { .policy = policy, .tools = tools, .audit_log = audit,
                                     .sanitize_errors = sanitize, .verbose = verbose, .start = start };
  struct securer_session *s = NULL;
  int rc = securer_session_open (&so, &s, &err);
  securer_policy_free (policy);
  if (rc < 0)
    {
      cli_report (&err);
      free (owned_code);
      goto out;
    }
  /* How R started, for --json: a timeout's restart does not change it. */
  const char *start_kind = securer_session_start_kind (s);
  struct ttys ttys = { .out = isatty (1), .err = isatty (2) };
  struct securer_exec_opts xo = {
    .timeout_ms = (uint64_t) (timeout * 1000.0), .max_tool_calls = max_tools,
    .max_output_lines = max_lines, .print = !json, .on_output = json ? NULL : print_line,
    .max_output_bytes = max_bytes,
    .output_data = &ttys,
    /* A terminal cannot show the pages: rendered only for --json. */
    .plot_format = json ? SECURER_PLOT_PNG : SECURER_PLOT_NONE,
  };
  struct securer_result res;
  rc = securer_session_execute (s, code, &xo, &res, &err);
  securer_error_free (&err);
  free (owned_code);
  if (json)
    {
      json_t *out = securer_result_json (&res, "text", plain, max_reply);
      json_object_set_new (out, "start", json_string (start_kind ? start_kind : "cold"));
      /* JSON escapes every C0 control; on a terminal, C1 controls (which
       * some terminals act on even as UTF-8) are escaped too. */
      json_dumpf (out, stdout, JSON_COMPACT | JSON_REAL_PRECISION (17) | (ttys.out ? JSON_ENSURE_ASCII : 0));
      fputc ('\n', stdout);
      json_decref (out);
    }
  else
    {
      for (size_t i = 0; i < res.n_warnings; i++)
        {
          fputs ("Warning message:\n", stderr);
          termsafe_fputs (res.warnings[i], stderr, ttys.err);
          fputc ('\n', stderr);
        }
      if (res.output_truncated)
        fprintf (stderr, "securer: output truncated: %llu more lines (%llu bytes) were not kept\n",
                 (unsigned long long) res.output_dropped_lines,
                 (unsigned long long) res.output_dropped_bytes);
      if (rc < 0)
        {
          fputs ("Error: ", stderr);
          termsafe_fputs (res.error ? res.error : "execution failed", stderr, ttys.err);
          fputc ('\n', stderr);
        }
    }
  switch (res.status)
    {
    case SECURER_EXEC_OK: status = 0; break;
    case SECURER_EXEC_TIMEOUT: status = SECURER_EXIT_TIMEOUT; break;
    case SECURER_EXEC_CRASHED: status = 1; break;
    default: status = 1; break;
    }
  securer_result_clear (&res);
  securer_session_close (s);
out:
  securer_tools_unref (tools);
  free (specs);
  free (tool_env);
  return status;
}
