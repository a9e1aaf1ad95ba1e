/* securer policy — check and show policies; compile, import and learn are
 * implemented next to the seccomp compiler (cmd_policy_seccomp.c). */
#include <config.h>

#include <elf.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <seccomp.h>

#include "cli.h"
#include "linux/view.h"
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

/* The host file a path inside the sandbox is, when a bind shows it. */
static char *
host_path_of (const struct securer_view *v, const char *inside)
{
  const struct securer_mount *m = v->mount;
  if (m == NULL || (m->type != SECURER_MOUNT_RO && m->type != SECURER_MOUNT_RW) || m->source == NULL)
    return NULL;
  const char *path = v->resolved ? v->resolved : inside;
  size_t dl = strlen (m->dest);
  if (strncmp (path, m->dest, dl) != 0 || (path[dl] != '\0' && path[dl] != '/' && dl > 1))
    return NULL;
  char *h = NULL;
  if (asprintf (&h, "%s%s", m->source, dl > 1 ? path + dl : path) < 0)
    return NULL;
  return h;
}

/* The program interpreter (PT_INTERP) an ELF file names, or "" when it
 * names none (static, a script, not ELF). */
static void
elf_interp (const char *path, char *out, size_t cap)
{
  out[0] = '\0';
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  Elf64_Ehdr eh;
  if (pread (fd, &eh, sizeof eh, 0) == (ssize_t) sizeof eh && memcmp (eh.e_ident, ELFMAG, SELFMAG) == 0
      && eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof (Elf64_Phdr) && eh.e_phnum < 256)
    for (unsigned i = 0; i < eh.e_phnum; i++)
      {
        Elf64_Phdr ph;
        if (pread (fd, &ph, sizeof ph, (off_t) (eh.e_phoff + i * sizeof ph)) != (ssize_t) sizeof ph)
          break;
        if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz >= cap)
          continue;
        if (pread (fd, out, ph.p_filesz, (off_t) ph.p_offset) != (ssize_t) ph.p_filesz)
          out[0] = '\0';
        else
          out[ph.p_filesz - 1] = '\0';
        break;
      }
  close (fd);
}

/* Whether an exec entry covers `real` (a canonical host path): Landlock
 * puts each entry's rule on the file or directory it leads to. */
static bool
exec_covers (const struct securer_policy *p, const char *real)
{
  for (size_t i = 0; i < p->n_exec; i++)
    {
      char r[PATH_MAX];
      if (realpath (p->exec[i], r) == NULL)
        continue;
      size_t l = strlen (r);
      if (strncmp (real, r, l) == 0 && (real[l] == '\0' || real[l] == '/' || strcmp (r, "/") == 0))
        return true;
    }
  return false;
}

/* The kernel opens a program's loader for execution too: a dynamically
 * linked entry whose loader no entry covers fails with EACCES. */
static void
check_exec_loader (const struct securer_policy *p, const char *file, const char *entry, const char *host)
{
  char interp[PATH_MAX], real[PATH_MAX];
  elf_interp (host, interp, sizeof interp);
  if (interp[0] == '\0' || realpath (interp, real) == NULL || exec_covers (p, real))
    return;
  fprintf (stderr, "%s: warning: exec %s: its program loader %s is not in the exec list: execve fails with "
           "EACCES (list %s)\n", file, entry, interp, interp);
}

/* Follows the links from `host` one at a time, as the kernel will inside
 * (where the shipped mounts show host paths where they are): a hop the
 * sandbox does not show ends the walk with ENOENT there (awk ->
 * /etc/alternatives/awk), and the file reached must be listed. */
static void
report_exec_link (const struct securer_policy *p, const char *file, const char *entry, const char *host)
{
  char cur[2 * PATH_MAX + 2];
  snprintf (cur, sizeof cur, "%s", host);
  for (int hop = 0; hop < 40; hop++)
    {
      char link[PATH_MAX];
      ssize_t n = readlink (cur, link, sizeof link - 1);
      if (n < 0)
        break;
      link[n] = '\0';
      char next[2 * PATH_MAX + 2];
      if (link[0] == '/')
        snprintf (next, sizeof next, "%s", link);
      else
        {
          char *slash = strrchr (cur, '/');
          snprintf (next, sizeof next, "%.*s/%s", slash ? (int) (slash - cur) : 0, cur, link);
        }
      char canon[PATH_MAX];
      /* The directory part canonical, the last component kept: it may be a link itself. */
      char *ls = strrchr (next, '/');
      char dir[2 * PATH_MAX + 2];
      snprintf (dir, sizeof dir, "%.*s", ls && ls != next ? (int) (ls - next) : 1, next);
      if (realpath (dir, canon) == NULL)
        break;
      int w = snprintf (cur, sizeof cur, "%s/%s", strcmp (canon, "/") == 0 ? "" : canon, ls ? ls + 1 : next);
      if (w < 0 || (size_t) w >= sizeof cur)
        return;
      struct securer_view t;
      securer_err_t err = NULL;
      if (securer_view_path (p, cur, &t, &err) < 0)
        {
          securer_error_free (&err);
          return;
        }
      bool absent = t.kind == SECURER_VIEW_ABSENT || t.kind == SECURER_VIEW_MASKED;
      securer_view_clear (&t);
      if (absent)
        {
          fprintf (stderr, "%s: warning: exec %s is a symbolic link through %s, which is not in the sandbox: "
                   "it cannot be executed there (mount it, or list the program it leads to)\n", file, entry, cur);
          return;
        }
      struct stat st;
      if (lstat (cur, &st) < 0 || !S_ISLNK (st.st_mode))
        break;
    }
}

/* An exec entry works when execve reaches a file Landlock lets it run:
 * an entry the view does not show can never run, and one that is a
 * symbolic link (python3 -> python3.11, awk -> /etc/alternatives/awk)
 * lets nothing run unless its target is listed too, and shown.  Said
 * here, as `run` would otherwise say only EACCES or ENOENT. */
static void
check_exec_entries (const struct securer_policy *p)
{
  const char *file = p->path ? p->path : "<policy>";
  for (size_t i = 0; p->exec_restricted && i < p->n_exec; i++)
    {
      const char *e = p->exec[i];
      struct securer_view v;
      securer_err_t err = NULL;
      if (securer_view_path (p, e, &v, &err) < 0)
        {
          securer_error_free (&err);
          continue;
        }
      if (v.kind == SECURER_VIEW_ABSENT || v.kind == SECURER_VIEW_MASKED)
        {
          fprintf (stderr, "%s: warning: exec %s: %s in the sandbox (%s): it can never be executed\n", file, e,
                   v.kind == SECURER_VIEW_ABSENT ? "not there" : "masked", v.why ? v.why : "no mount shows it");
          securer_view_clear (&v);
          continue;
        }
      char *host = host_path_of (&v, e);
      /* A bind of the entry itself follows the host's link when it is
       * made: inside, the entry is the file. */
      bool bound_itself = v.mount != NULL && v.mount->dest != NULL && strcmp (v.mount->dest, e) == 0;
      struct stat st;
      if (host != NULL && !bound_itself && lstat (host, &st) == 0 && S_ISLNK (st.st_mode))
        report_exec_link (p, file, e, host);
      if (host != NULL && stat (host, &st) == 0 && S_ISREG (st.st_mode))
        check_exec_loader (p, file, e, host);
      else if (host != NULL && lstat (host, &st) < 0)
        fprintf (stderr, "%s: warning: exec %s: %s does not exist on this host: it can never be executed\n", file,
                 e, host);
      free (host);
      securer_view_clear (&v);
    }
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
      check_exec_entries (p);
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
