/* securer policy — check and show policies; compile, import and learn are
 * implemented next to the seccomp compiler (cmd_policy_seccomp.c). */
#include <config.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <seccomp.h>

#include "cli.h"
#include "oci/oci.h"
#include "seccomp/seccomp.h"

/* `learn` is not in every build yet; referenced weakly so that the other
 * subcommands link without it. */
#pragma weak cmd_policy_learn


static void
check_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy check [OPTIONS] POLICY...\n"
           "\n"
           "Read each POLICY (a file, or the NAME of a shipped policy) with its includes and\n"
           "report every problem as FILE:LINE:COLUMN: error: MESSAGE.  Prints 'POLICY: ok'\n"
           "when a policy has no errors.\n"
           "\n"
           "Options:\n"
           "  -q, --quiet  print nothing on success\n"
           "  -h, --help   show this help\n"
           "\n"
           "Exit status: 0 when every policy is valid, 1 when one is not, 2 for usage errors.\n");
}

static void
show_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy show [OPTIONS] POLICY\n"
           "       securer policy show [--json] --oci-config CONFIG.json\n"
           "\n"
           "Print the fully resolved POLICY (a file, or the NAME of a shipped policy): includes\n"
           "read, @groups expanded to one rule per syscall, every default spelled out.\n"
           "\n"
           "Options:\n"
           "  --json      print the resolved policy as JSON (accepted back as a policy file)\n"
           "  --oci       print the seccomp part as an OCI runtime-spec 'linux.seccomp' object\n"
           "  --oci-config CONFIG.json\n"
           "              what securer-runc enforces for that OCI bundle's config: the policy\n"
           "              it amounts to, then what the policy language cannot say, as comments\n"
           "  -h, --help  show this help\n"
           "\n"
           "Exit status: 0 on success, 1 when the policy is invalid, 2 for usage errors.\n");
}

void
cmd_policy_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy COMMAND [OPTIONS] ARGS...\n"
           "\n"
           "Commands:\n"
           "  check POLICY...   check policies and report every problem\n"
           "  show POLICY       print the resolved policy (--json for JSON)\n"
           "  compile POLICY    compile the seccomp filter (BPF or libseccomp's PFC text)\n"
           "  import FILE       convert an OCI/Docker seccomp profile into policy rules\n"
           "  learn -- CMD      record the syscalls CMD makes and propose rules\n"
           "  test POLICY FILE...  check expectations: verdicts of calls (in a BPF\n"
           "                       interpreter), paths, exec, env, network, limits\n"
           "  explain POLICY CALL  the verdict of one call and the rule that decides it\n"
           "  diff A B          what changes between two policies (--json for JSON)\n"
           "\n"
           "POLICY is a file (text, or JSON when it starts with '{') or the NAME of a\n"
           "shipped policy such as 'r' or 'minimal'.\n"
           "Run 'securer policy COMMAND --help' for a command's options.\n"
           "The policy language is described in securer-policy(5).\n");
}

struct securer_policy *
cli_load_policy (const char *arg)
{
  securer_err_t err = NULL;
  char *path = NULL;
  if (securer_policy_find (arg, &path, &err) < 0)
    {
      cli_report (&err);
      return NULL;
    }
  struct securer_diags diags = { NULL, 0, 0 };
  struct securer_policy *p = NULL;
  int r = securer_policy_load_file (path, &p, &diags, &err);
  for (size_t i = 0; i < diags.n; i++)
    {
      char *s = securer_diag_format (&diags.items[i]);
      if (s)
        fprintf (stderr, "%s\n", s);
      free (s);
    }
  if (diags.n_errors > diags.n)
    fprintf (stderr, "%s: %zu more errors not shown\n", path, diags.n_errors - diags.n);
  if (r < 0 && diags.n_errors == 0)
    cli_report (&err);
  securer_error_free (&err);
  securer_diags_free (&diags);
  if (r < 0)
    fprintf (stderr, "%s: invalid policy\n", path);
  free (path);
  return r < 0 ? NULL : p;
}

static const char *
native_arch (void)
{
  static struct utsname u;
  if (u.machine[0] == '\0' && uname (&u) < 0)
    return "this architecture";
  return u.machine;
}

static const char *
rule_file (const struct securer_policy *p, const struct securer_loc *loc)
{
  return loc->file ? loc->file : p->path ? p->path : "<policy>";
}

static bool
own_line (const struct securer_policy *p, const struct securer_loc *loc)
{
  if (loc->file == NULL || p->path == NULL)
    return true;
  if (strcmp (loc->file, p->path) == 0)
    return true;
  char *a = realpath (loc->file, NULL), *b = realpath (p->path, NULL);
  bool same = a && b && strcmp (a, b) == 0;
  free (a);
  free (b);
  return same;
}

/* What `run` would refuse or find useless, found without a sandbox: the
 * filter is compiled as the launcher compiles it, and rules for syscalls
 * this architecture does not have are said (they never match). */
static int
check_runtime (const struct securer_policy *p)
{
  int rc = 0;
  for (size_t i = 0; p->seccomp.enabled && i < p->seccomp.n_rules; i++)
    {
      const struct securer_syscall_rule *r = &p->seccomp.rules[i];
      /* Groups and included files are written for every architecture
       * (mmap2 is i386's and arm's); the policy's own lines are not. */
      if (r->name == NULL || r->group != NULL || !own_line (p, &r->loc)
          || seccomp_syscall_resolve_name_arch (SCMP_ARCH_NATIVE, r->name) >= 0)
        continue;
      fprintf (stderr, "%s:%u:%u: warning: '%s' is not a system call on %s: the rule has no effect\n",
               rule_file (p, &r->loc), r->loc.line, r->loc.col, r->name, native_arch ());
    }
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  if (securer_seccomp_compile (p, 0, -1, &prog, &err) < 0)
    {
      fprintf (stderr, "%s: error: the seccomp filter does not compile: %s\n", p->path ? p->path : "<policy>",
               securer_error_message (err));
      securer_error_free (&err);
      rc = -1;
    }
  securer_seccomp_free (prog);
  return rc;
}

static int
policy_check (int argc, char **argv)
{
  static const struct option opts[] = {
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool quiet = false;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "qh", opts, NULL)) != -1)
    switch (c)
      {
      case 'q': quiet = true; break;
      case 'h': check_help (stdout); return 0;
      default: check_help (stderr); return 2;
      }
  if (optind >= argc)
    {
      fprintf (stderr, "securer policy check: expected at least one POLICY\n");
      check_help (stderr);
      return 2;
    }
  int result = 0;
  for (int i = optind; i < argc; i++)
    {
      struct securer_policy *p = cli_load_policy (argv[i]);
      if (p == NULL)
        {
          result = 1;
          continue;
        }
      if (check_runtime (p) < 0)
        result = 1;
      else if (!quiet)
        printf ("%s: ok\n", argv[i]);
      securer_policy_free (p);
    }
  return result;
}

/* securer-runc's view of an OCI config.json (src/lib/oci). */
static int
show_oci_config (const char *path, bool json)
{
  securer_err_t err = NULL;
  struct oci_spec *s = NULL;
  struct securer_policy *p = NULL;
  if (oci_spec_load_file (path, &s, &err) < 0 || oci_spec_to_policy (s, &p, &err) < 0)
    {
      oci_spec_free (s);
      cli_report (&err);
      return 1;
    }
  free (p->path);
  p->path = strdup (path);
  char *text = json ? securer_policy_to_json_text (p, 0) : securer_policy_to_text (p);
  char *extra = json ? NULL : oci_spec_extra_text (s);
  if (text)
    fputs (text, stdout);
  if (extra)
    fputs (extra, stdout);
  free (text);
  free (extra);
  securer_policy_free (p);
  oci_spec_free (s);
  return 0;
}

static int
policy_show (int argc, char **argv)
{
  static const struct option opts[] = {
    { "json", no_argument, NULL, 'j' },
    { "oci", no_argument, NULL, 'o' },
    { "oci-config", required_argument, NULL, 'c' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  bool json = false, oci = false;
  const char *oci_config = NULL;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 'j': json = true; break;
      case 'o': oci = true; break;
      case 'c': oci_config = optarg; break;
      case 'h': show_help (stdout); return 0;
      default: show_help (stderr); return 2;
      }
  if (oci_config && !oci && optind == argc)
    return show_oci_config (oci_config, json);
  if (optind != argc - 1)
    {
      fprintf (stderr, "securer policy show: expected exactly one POLICY (or --oci-config alone)\n");
      show_help (stderr);
      return 2;
    }
  if (json && oci)
    {
      fprintf (stderr, "securer policy show: --json and --oci exclude each other\n");
      return 2;
    }
  struct securer_policy *p = cli_load_policy (argv[optind]);
  if (p == NULL)
    return 1;
  if (oci)
    {
      /* The OCI export lives with the seccomp compiler. */
      securer_err_t err = NULL;
      json_t *j = securer_seccomp_to_oci (p, &err);
      securer_policy_free (p);
      if (j == NULL)
        {
          cli_report (&err);
          return 1;
        }
      json_dumpf (j, stdout, JSON_INDENT (2) | JSON_PRESERVE_ORDER);
      fputc ('\n', stdout);
      json_decref (j);
      return 0;
    }
  char *s = json ? securer_policy_to_json_text (p, 0) : securer_policy_to_text (p);
  securer_policy_free (p);
  if (s == NULL)
    {
      fprintf (stderr, "securer policy show: out of memory\n");
      return 1;
    }
  fputs (s, stdout);
  free (s);
  return 0;
}

int
cmd_policy (int argc, char **argv)
{
  if (argc < 2)
    {
      cmd_policy_help (stderr);
      return 2;
    }
  const char *sub = argv[1];
  int (*fn) (int, char **) = NULL;
  if (strcmp (sub, "check") == 0)
    fn = policy_check;
  else if (strcmp (sub, "show") == 0)
    fn = policy_show;
  else if (strcmp (sub, "compile") == 0)
    fn = cmd_policy_compile;
  else if (strcmp (sub, "import") == 0)
    fn = cmd_policy_import;
  else if (strcmp (sub, "learn") == 0)
    fn = cmd_policy_learn;
  else if (strcmp (sub, "test") == 0)
    fn = cmd_policy_test;
  else if (strcmp (sub, "explain") == 0)
    fn = cmd_policy_explain;
  else if (strcmp (sub, "diff") == 0)
    fn = cmd_policy_diff;
  else if (strcmp (sub, "-h") == 0 || strcmp (sub, "--help") == 0 || strcmp (sub, "help") == 0)
    {
      cmd_policy_help (stdout);
      return 0;
    }
  else
    {
      fprintf (stderr, "securer policy: unknown command '%s'; run 'securer policy --help'\n", sub);
      return 2;
    }
  if (fn == NULL)
    {
      fprintf (stderr, "securer policy: '%s' is not available in this build\n", sub);
      return 2;
    }
  return fn (argc - 1, argv + 1);
}
