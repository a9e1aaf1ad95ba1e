/* securer policy compile | import | learn — the seccomp side of `policy`. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <seccomp.h>

#include "cli.h"
#include "seccomp/seccomp.h"

static void
compile_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy compile POLICY (--bpf OUT | --pfc)\n"
           "\n"
           "Compile the seccomp section of POLICY (a file, or the NAME of a shipped policy)\n"
           "into the filter the sandbox loads, and write it out.\n"
           "\n"
           "Options:\n"
           "  --bpf OUT   write the raw BPF program to OUT ('-' for standard output)\n"
           "  --pfc       print libseccomp's pseudo filter code (readable) to standard output\n"
           "  -h, --help  show this help\n"
           "\n"
           "A summary (instruction count) goes to standard error.\n"
           "Exit status: 0 on success, 1 when the policy is invalid or cannot be compiled,\n"
           "2 for usage errors.\n");
}

int
cmd_policy_compile (int argc, char **argv)
{
  static const struct option opts[] = {
    { "bpf", required_argument, NULL, 'b' },
    { "pfc", no_argument, NULL, 'p' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *bpf = NULL;
  bool pfc = false;
  int c;
  optind = 1;
  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 'b': bpf = optarg; break;
      case 'p': pfc = true; break;
      case 'h': compile_help (stdout); return 0;
      default: compile_help (stderr); return 2;
      }
  if (optind != argc - 1 || (bpf == NULL) == !pfc)
    {
      fprintf (stderr, "securer policy compile: expected one POLICY and exactly one of --bpf OUT or --pfc\n");
      compile_help (stderr);
      return 2;
    }
  struct securer_policy *p = cli_load_policy (argv[optind]);
  if (p == NULL)
    return 1;
  securer_err_t err = NULL;
  struct securer_seccomp_prog *prog = NULL;
  if (securer_seccomp_compile (p, 0, -1, &prog, &err) < 0)
    {
      securer_error_prefix (&err, "compile %s", argv[optind]);
      cli_report (&err);
      securer_policy_free (p);
      return 1;
    }
  int status = 0;
  if (pfc)
    {
      fflush (stdout);
      if (securer_seccomp_export_pfc (prog, STDOUT_FILENO, &err) < 0)
        status = 1;
    }
  else
    {
      bool to_stdout = strcmp (bpf, "-") == 0;
      int fd = to_stdout ? STDOUT_FILENO : open (bpf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0)
        {
          securer_error_set (&err, errno, "open %s", bpf);
          status = 1;
        }
      else
        {
          if (securer_seccomp_export_bpf (prog, fd, &err) < 0)
            status = 1;
          else if (!to_stdout)
            {
              off_t size = lseek (fd, 0, SEEK_END);
              fprintf (stderr, "%s: %lld BPF instructions written to %s\n", argv[optind],
                       (long long) (size / 8), bpf);
            }
          if (!to_stdout && close (fd) < 0 && status == 0)
            {
              securer_error_set (&err, errno, "write %s", bpf);
              status = 1;
            }
        }
    }
  if (status)
    cli_report (&err);
  securer_seccomp_free (prog);
  securer_policy_free (p);
  return status;
}

static void
import_help (FILE *out)
{
  fprintf (out,
           "Usage: securer policy import FILE.json\n"
           "\n"
           "Read a seccomp profile in the OCI runtime-spec / Docker format (defaultAction,\n"
           "defaultErrnoRet, syscalls[] with names, action, errnoRet and args) and print the\n"
           "equivalent `seccomp` lines of a securer policy.  Rules that only apply with a\n"
           "capability the sandbox never has, or on another architecture, are left out with\n"
           "a comment.  '-' reads standard input.\n"
           "\n"
           "Exit status: 0 on success, 1 when the profile cannot be read or converted,\n"
           "2 for usage errors.\n");
}

/* The syscall a converted rule line is for: the word before " if ", or
 * the last one; NULL for lines that are not rules. */
static char *
rule_syscall (const char *line, size_t len)
{
  if (len < 8 || strncmp (line, "seccomp ", 8) != 0)
    return NULL;
  static const char *const settings[] = { "seccomp on", "seccomp off", "seccomp default ", "seccomp foreign-abi " };
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
    if (strncmp (line, settings[i], strlen (settings[i])) == 0)
      return NULL;
  size_t end = len;
  for (size_t i = 0; i + 4 <= len; i++)
    if (memcmp (line + i, " if ", 4) == 0)
      {
        end = i;
        break;
      }
  size_t start = end;
  while (start > 0 && line[start - 1] != ' ')
    start--;
  return start < end ? strndup (line + start, end - start) : NULL;
}

static const char *
native_arch (void)
{
  static struct utsname u;
  if (u.machine[0] == '\0' && uname (&u) < 0)
    return "this architecture";
  return u.machine;
}

/* A profile's rules merged from several includes repeat lines (the
 * containers profile has "allow socket if arg2 != 9" twice), and name
 * syscalls of other architectures (_llseek, socketcall), which a policy
 * for this one does not need: both are left out, and said. */
static char *
import_tidy (const char *in)
{
  size_t n_lines = 0;
  for (const char *q = in; *q; q++)
    n_lines += *q == '\n';
  const char **seen = calloc (n_lines + 1, sizeof *seen);
  size_t *seen_len = calloc (n_lines + 1, sizeof *seen_len);
  char *out = NULL, *foreign = NULL, *dups = NULL;
  size_t out_len = 0, foreign_len = 0, dups_len = 0, n_seen = 0, first_rule = SIZE_MAX;
  FILE *o = open_memstream (&out, &out_len);
  FILE *f = open_memstream (&foreign, &foreign_len);
  FILE *d = open_memstream (&dups, &dups_len);
  if (seen == NULL || seen_len == NULL || o == NULL || f == NULL || d == NULL)
    goto fail;
  for (const char *line = in; *line;)
    {
      const char *nl = strchr (line, '\n');
      size_t len = nl ? (size_t) (nl - line) : strlen (line);
      char *name = rule_syscall (line, len);
      bool keep = true;
      if (name != NULL)
        {
          if (first_rule == SIZE_MAX)
            {
              fflush (o);
              first_rule = out_len;
            }
          if (seccomp_syscall_resolve_name_arch (SCMP_ARCH_NATIVE, name) < 0)
            {
              fprintf (f, " %s", name);
              keep = false;
            }
          for (size_t i = 0; keep && i < n_seen; i++)
            if (seen_len[i] == len && memcmp (seen[i], line, len) == 0)
              {
                fprintf (d, "# repeated rule left out: %.*s\n", (int) len, line);
                keep = false;
              }
          if (keep)
            {
              seen[n_seen] = line;
              seen_len[n_seen++] = len;
            }
          free (name);
        }
      if (keep)
        fprintf (o, "%.*s\n", (int) len, line);
      line += len + (nl != NULL);
    }
  if (fclose (o) != 0 || fclose (f) != 0 || fclose (d) != 0)
    {
      o = f = d = NULL;
      goto fail;
    }
  if (first_rule == SIZE_MAX)
    first_rule = out_len;
  char *res = NULL;
  if (asprintf (&res, "%.*s%s%s%s%s%s", (int) first_rule, out,
                foreign_len ? "# left out (not a system call on " : "", foreign_len ? native_arch () : "",
                foreign_len ? "):" : "", foreign_len ? foreign : "", foreign_len ? "\n" : "") < 0)
    res = NULL;
  char *all = NULL;
  if (res && asprintf (&all, "%s%s%s", res, dups, out + first_rule) < 0)
    all = NULL;
  free (res);
  free (out);
  free (foreign);
  free (dups);
  free (seen);
  free (seen_len);
  return all;
fail:
  if (o)
    fclose (o);
  if (f)
    fclose (f);
  if (d)
    fclose (d);
  free (out);
  free (foreign);
  free (dups);
  free (seen);
  free (seen_len);
  return NULL;
}

int
cmd_policy_import (int argc, char **argv)
{
  if (cli_wants_help (argc, argv))
    {
      import_help (stdout);
      return 0;
    }
  if (argc != 2)
    {
      import_help (stderr);
      return 2;
    }
  const char *file = argv[1];
  FILE *f = strcmp (file, "-") == 0 ? stdin : fopen (file, "re");
  if (f == NULL)
    {
      fprintf (stderr, "securer: open %s: %s\n", file, strerror (errno));
      return 1;
    }
  char *text = NULL;
  size_t len = 0, cap = 0;
  for (;;)
    {
      if (len + 4096 > cap)
        {
          cap = cap ? cap * 2 : 65536;
          if (cap > (64u << 20))
            {
              fprintf (stderr, "securer: %s: larger than 64 MiB\n", file);
              free (text);
              if (f != stdin)
                fclose (f);
              return 1;
            }
          char *nt = realloc (text, cap);
          if (nt == NULL)
            {
              free (text);
              if (f != stdin)
                fclose (f);
              return 1;
            }
          text = nt;
        }
      size_t n = fread (text + len, 1, cap - len, f);
      len += n;
      if (n == 0)
        break;
    }
  if (f != stdin)
    fclose (f);
  securer_err_t err = NULL;
  char *out = securer_seccomp_import_oci (file, text, len, &err);
  free (text);
  if (out == NULL)
    {
      cli_report (&err);
      return 1;
    }
  char *tidy = import_tidy (out);
  free (out);
  if (tidy == NULL)
    {
      fprintf (stderr, "securer: import %s: out of memory\n", file);
      return 1;
    }
  fputs (tidy, stdout);
  free (tidy);
  return 0;
}
