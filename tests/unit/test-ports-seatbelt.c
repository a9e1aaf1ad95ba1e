/* The macOS port's plan: Seatbelt profile text and the gap report. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "securer/ports.h"
#include "securer/sandbox.h"
#include "ports-policy.h"

/* ---- a small SBPL reader, to check structure rather than substrings ---- */

struct forms {
  char *head[512];   /* "allow file-read*", "deny network*", ... per top-level form */
  size_t n;
  char *strings[1024];  /* every string literal, unescaped */
  size_t n_strings;
};

static void
forms_free (struct forms *f)
{
  for (size_t i = 0; i < f->n; i++)
    free (f->head[i]);
  for (size_t i = 0; i < f->n_strings; i++)
    free (f->strings[i]);
}

/* Reads the profile as the TinyScheme reader would: comments to end of
 * line, strings with backslash escapes, parentheses.  Fails the test on
 * unbalanced input. */
static void
read_forms (const char *text, struct forms *f)
{
  memset (f, 0, sizeof *f);
  int depth = 0;
  const char *form_start = NULL;
  for (const char *c = text; *c; c++)
    {
      if (*c == ';')
        {
          while (*c && *c != '\n')
            c++;
          if (!*c)
            break;
          continue;
        }
      if (*c == '"')
        {
          char buf[4096];
          size_t n = 0;
          for (c++; *c && *c != '"'; c++)
            {
              if (*c == '\\')
                c++;
              cr_assert (*c, "string runs off the end");
              buf[n++] = *c;
            }
          cr_assert_eq (*c, '"', "unterminated string");
          buf[n] = '\0';
          cr_assert_lt (f->n_strings, 1024);
          f->strings[f->n_strings++] = strdup (buf);
          continue;
        }
      if (*c == '(')
        {
          if (depth == 0)
            form_start = c + 1;
          depth++;
        }
      else if (*c == ')')
        {
          depth--;
          cr_assert_geq (depth, 0, "unbalanced ')'");
          if (depth == 0)
            {
              /* head: the first two words of the form */
              const char *e = form_start;
              int words = 0;
              while (*e && *e != '(' && *e != '"' && *e != ')' && *e != '\n')
                {
                  if (*e == ' ' && ++words == 2)
                    break;
                  e++;
                }
              size_t len = (size_t) (e - form_start);
              while (len > 0 && form_start[len - 1] == ' ')
                len--;
              cr_assert_lt (f->n, 512);
              f->head[f->n++] = strndup (form_start, len);
            }
        }
    }
  cr_assert_eq (depth, 0, "unbalanced '('");
}

static size_t
count_head (const struct forms *f, const char *head)
{
  size_t n = 0;
  for (size_t i = 0; i < f->n; i++)
    if (strcmp (f->head[i], head) == 0)
      n++;
  return n;
}

static char *
profile_of (const struct securer_policy *p, struct securer_port_report *rep)
{
  securer_err_t err = NULL;
  char *text = securer_seatbelt_profile (p, rep, &err);
  cr_assert_not_null (text, "%s", err ? securer_error_message (err) : "?");
  return text;
}

static bool
under (const char *path, const char *dir)
{
  size_t n = strlen (dir);
  return strncmp (path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool
is_ancestor (const char *path, const char *of)
{
  if (strcmp (path, "/") == 0)
    return true;
  size_t n = strlen (path);
  return strncmp (of, path, n) == 0 && of[n] == '/';
}

/* ---- tests ----------------------------------------------------------------- */

Test (seatbelt, r_policy_starts_deny_default)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_port_report rep = { 0 };
  char *text = profile_of (&p, &rep);
  cr_assert (strncmp (text, "(version 1)\n(deny default)\n", 27) == 0, "%s", text);
  struct forms f;
  read_forms (text, &f);
  cr_assert_str_eq (f.head[0], "version 1");
  cr_assert_str_eq (f.head[1], "deny default");
  /* Never a blanket allow of a whole operation class over everything. */
  cr_assert_eq (count_head (&f, "allow default"), 0);
  cr_assert_eq (count_head (&f, "allow file-read*)"), 0);
  forms_free (&f);
  free (text);
  securer_port_report_clear (&rep);
}

Test (seatbelt, r_policy_grants_exactly_the_mounts)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_port_report rep = { 0 };
  char *text = profile_of (&p, &rep);

  cr_assert (strstr (text, "(allow file-read* (subpath \"/usr\"))\n"), "%s", text);
  cr_assert (strstr (text, "(allow file-read* (subpath \"/etc/R\") (subpath \"/private/etc/R\"))\n"));
  /* A bind is granted at its source: there is no mount namespace. */
  cr_assert (strstr (text, "(allow file-read* (subpath \"/opt/site-lib\"))\n"));
  cr_assert_null (strstr (text, "\"/usr/local/lib/R/site-library\""));
  cr_assert (strstr (text, "(allow file-read* file-write* (subpath \"/srv/work\"))\n"));
  /* tmpfs mounts become directories below the private directory. */
  cr_assert (strstr (text, "(allow file-read* file-write* (subpath (string-append (param "
                           "\"SECURER_PRIVATE_DIR\") \"/tmpfs/tmp\")))\n"));
  cr_assert (strstr (text, "(string-append (param \"SECURER_PRIVATE_DIR\") \"/tmpfs/home/sandbox\")"));
  /* No grant of the tmpfs destinations themselves. */
  cr_assert_null (strstr (text, "\"/tmp\""));
  cr_assert_null (strstr (text, "\"/home/sandbox\""));

  /* Every path string is under a mount source, a platform path, a device,
   * or is a directory above one (stat only); private suffixes aside. */
  static const char *const allowed_roots[] = {
    "/usr", "/etc/R", "/private/etc/R", "/opt/site-lib", "/srv/work", "/dev/null", "/dev/zero",
    "/dev/tty", "/dev/random", "/dev/urandom", "/dev/fd", "/System/Library/Frameworks",
    "/System/Library/PrivateFrameworks", "/System/Volumes/Preboot/Cryptexes/OS",
    "/System/Cryptexes/OS", "/private/var/db/dyld", "/private/var/db/timezone",
    "/private/etc/localtime",
  };
  struct forms f;
  read_forms (text, &f);
  for (size_t i = 0; i < f.n_strings; i++)
    {
      const char *s = f.strings[i];
      if (s[0] != '/' || strncmp (s, "/tmpfs/", 7) == 0)
        continue;
      bool ok = false;
      for (size_t j = 0; j < sizeof allowed_roots / sizeof *allowed_roots && !ok; j++)
        ok = under (s, allowed_roots[j]) || is_ancestor (s, allowed_roots[j]);
      cr_assert (ok, "unexpected path in profile: %s", s);
    }
  forms_free (&f);
  free (text);
  securer_port_report_clear (&rep);
}

Test (seatbelt, exec_list_and_noexec)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_port_report rep = { 0 };
  char *text = profile_of (&p, &rep);
  cr_assert (strstr (text, "(allow process-exec (subpath \"/usr/lib/R/bin\"))\n"), "%s", text);
  cr_assert (strstr (text, "(allow process-exec (subpath \"/usr/bin/Rscript\"))\n"));
  struct forms f;
  read_forms (text, &f);
  cr_assert_eq (count_head (&f, "allow process-exec"), 2, "only the exec list may run");
  forms_free (&f);
  free (text);
  securer_port_report_clear (&rep);

  /* Without an exec list: mounts without noexec only (not tmpfs, not rw). */
  test_min_policy (&p);
  text = profile_of (&p, &rep);
  cr_assert (strstr (text, "(allow process-exec (subpath \"/usr\"))\n"), "%s", text);
  read_forms (text, &f);
  cr_assert_eq (count_head (&f, "allow process-exec"), 1);
  forms_free (&f);
  free (text);
  securer_port_report_clear (&rep);
}

Test (seatbelt, masks_denied_after_grants)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_port_report rep = { 0 };
  char *text = profile_of (&p, &rep);
  const char *deny = strstr (text, "(deny file-read* file-write* process-exec (subpath \"/usr/share/secret\"))\n");
  const char *grant = strstr (text, "(allow file-read* (subpath \"/usr\"))");
  cr_assert_not_null (deny, "%s", text);
  cr_assert_not_null (grant);
  cr_assert_gt (deny, grant, "a mask must come after the grant it narrows (last match wins)");
  /* /proc/kcore lies under no mount: nothing to deny, nothing granted. */
  cr_assert_null (strstr (text, "/proc"));
  free (text);
  securer_port_report_clear (&rep);
}

Test (seatbelt, network_modes)
{
  struct securer_policy p;
  test_min_policy (&p);
  struct securer_port_report rep = { 0 };
  char *text = profile_of (&p, &rep);
  struct forms f;
  read_forms (text, &f);
  cr_assert_eq (count_head (&f, "deny network*)"), 0);
  cr_assert (strstr (text, "(deny network*)\n"));
  for (size_t i = 0; i < f.n; i++)
    cr_assert (strncmp (f.head[i], "allow network", 13) != 0, "network allowed: %s", f.head[i]);
  forms_free (&f);
  free (text);
  securer_port_report_clear (&rep);

  p.network = SECURER_NET_LOOPBACK;
  text = profile_of (&p, &rep);
  cr_assert (strstr (text, "(allow network-outbound (remote ip \"localhost:*\"))\n"), "%s", text);
  const struct securer_port_gap *g = securer_port_report_find (&rep, "network", "network loopback");
  cr_assert_not_null (g);
  cr_assert_eq (g->level, SECURER_ENFORCE_REQUIRED, "a shared host loopback is weaker than asked");
  free (text);
  securer_port_report_clear (&rep);

  static uint16_t connect_ports[] = { 443, 8443 };
  p.network = SECURER_NET_HOST;
  p.landlock.mode = SECURER_ENFORCE_REQUIRED;
  p.landlock.tcp_connect = connect_ports;
  p.landlock.n_tcp_connect = 2;
  text = profile_of (&p, &rep);
  const char *allow_all = strstr (text, "(allow network*)\n");
  const char *deny_tcp = strstr (text, "(deny network-outbound (remote tcp \"*:*\"))\n");
  const char *allow_ports = strstr (text, "(allow network-outbound (remote tcp \"*:443\") (remote tcp \"*:8443\"))\n");
  cr_assert (allow_all && deny_tcp && allow_ports, "%s", text);
  cr_assert (allow_all < deny_tcp && deny_tcp < allow_ports, "order decides: last match wins");
  cr_assert (strstr (text, "(deny network-bind (local tcp \"*:*\"))\n"), "no bind port listed: none allowed");
  cr_assert_eq (securer_port_report_count (&rep, SECURER_ENFORCE_REQUIRED), 0);
  free (text);
  securer_port_report_clear (&rep);
}

Test (seatbelt, quotes_and_parens_cannot_inject_rules)
{
  struct securer_policy p;
  test_min_policy (&p);
  static struct securer_mount evil[] = {
    { .type = SECURER_MOUNT_RO,
      .source = (char *) "/data/x\") (allow default) (allow file-write* (subpath \"/x",
      .dest = (char *) "/data" },
    { .type = SECURER_MOUNT_RW, .source = (char *) "/a\\\") (allow network*) ;", .dest = (char *) "/b" },
  };
  p.mounts = evil;
  p.n_mounts = 2;
  p.name = (char *) "evil\") (allow default";
  struct securer_port_report rep = { 0 };
  char *text = profile_of (&p, &rep);
  struct forms f;
  read_forms (text, &f);
  cr_assert_eq (count_head (&f, "allow default"), 0, "%s", text);
  cr_assert_eq (count_head (&f, "allow network*)"), 0, "%s", text);
  cr_assert_eq (count_head (&f, "allow file-write*"), 0, "%s", text);
  /* The paths survive as single string tokens, byte for byte. */
  bool found_ro = false, found_rw = false;
  for (size_t i = 0; i < f.n_strings; i++)
    {
      found_ro |= strcmp (f.strings[i], evil[0].source) == 0;
      found_rw |= strcmp (f.strings[i], evil[1].source) == 0;
    }
  cr_assert (found_ro && found_rw, "%s", text);
  forms_free (&f);
  free (text);
  securer_port_report_clear (&rep);
}

Test (seatbelt, control_characters_and_relative_paths_refused)
{
  struct securer_policy p;
  test_min_policy (&p);
  static struct securer_mount nl[] = {
    { .type = SECURER_MOUNT_RO, .source = (char *) "/x\n(allow default)", .dest = (char *) "/x" },
  };
  static struct securer_mount rel[] = {
    { .type = SECURER_MOUNT_RO, .source = (char *) "usr", .dest = (char *) "/usr" },
  };
  struct securer_port_report rep = { 0 };
  securer_err_t err = NULL;
  p.mounts = nl;
  p.n_mounts = 1;
  cr_assert_null (securer_seatbelt_profile (&p, &rep, &err));
  cr_assert_eq (securer_error_errno (err), EINVAL);
  cr_assert (strstr (securer_error_message (err), "control character 0x0a"), "%s",
             securer_error_message (err));
  securer_error_free (&err);
  securer_port_report_clear (&rep);

  p.mounts = rel;
  cr_assert_null (securer_seatbelt_profile (&p, &rep, &err));
  cr_assert (strstr (securer_error_message (err), "absolute path"), "%s", securer_error_message (err));
  securer_error_free (&err);
  securer_port_report_clear (&rep);
}

Test (seatbelt, report_lists_what_macos_cannot_enforce)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_port_report rep = { 0 };
  char *text = profile_of (&p, &rep);
  cr_assert_str_eq (rep.port, "seatbelt");
  const struct { const char *section, *rule; } expect[] = {
    { "seccomp", "seccomp (2 rules, default errno)" },
    { "namespaces", "namespace pid" },
    { "namespaces", "namespace uts, hostname sandbox" },
    { "identity", "uid 1000 gid 1000" },
    { "limits", "rlimit as" },
    { "limits", "rlimit nproc" },
    { "limits", "cgroup memory" },
    { "limits", "cgroup pids" },
    { "filesystem", "mount tmpfs /tmp" },
    { "filesystem", "mount ro /usr/local/lib/R/site-library" },
    { "filesystem", "mount tmpfs /home/sandbox" },
    { "filesystem", "mount rw /work" },
    { "privileges", "no_new_privs" },
    { "filesystem", "reads outside mounts" },
  };
  for (size_t i = 0; i < sizeof expect / sizeof *expect; i++)
    {
      const struct securer_port_gap *g = securer_port_report_find (&rep, expect[i].section, expect[i].rule);
      cr_assert_not_null (g, "missing gap %s / %s", expect[i].section, expect[i].rule);
      cr_assert_eq (g->level, SECURER_ENFORCE_BEST_EFFORT, "%s", expect[i].rule);
    }
  char *all = securer_port_report_format (&rep);
  cr_assert_eq (rep.n_gaps, sizeof expect / sizeof *expect, "unexpected extra gaps:\n%s", all);
  free (all);
  /* What Seatbelt does enforce is not reported as a gap. */
  cr_assert_null (securer_port_report_find (&rep, "network", NULL));
  cr_assert_null (securer_port_report_find (&rep, "limits", "rlimit cpu"));
  cr_assert_null (securer_port_report_find (&rep, "namespaces", "namespace ipc"));
  /* tmpfs with a size: the report says the size is not enforced. */
  cr_assert (strstr (securer_port_report_find (&rep, "filesystem", "mount tmpfs /tmp")->reason,
                     "size limit is not enforced"));

  char *human = securer_port_report_format (&rep);
  cr_assert (strstr (human, "backend: seatbelt\n"));
  cr_assert (strstr (human, "best-effort: seccomp seccomp (2 rules, default errno): "), "%s", human);
  cr_assert (strstr (human, "enforced: rlimit cpu: setrlimit in the child before exec\n"), "%s", human);
  free (human);
  free (text);
  securer_port_report_clear (&rep);
  cr_assert_null (rep.gaps);
}

Test (seatbelt, best_effort_gaps_run_required_refuse)
{
  struct securer_policy p;
  test_r_policy (&p);
  struct securer_port_report rep = { 0 };
  securer_err_t err = NULL;
  char *text = profile_of (&p, &rep);
  free (text);
  cr_assert_eq (securer_port_check (&rep, 0, &err), 0, "only best-effort gaps: runs");
  cr_assert_eq (securer_port_check (&rep, SECURER_PORT_STRICT, &err), -1);
  cr_assert_eq (err->status, SECURER_EXIT_SETUP);
  cr_assert (strstr (securer_error_message (err), "(strict)"));
  securer_error_free (&err);
  securer_port_report_clear (&rep);

  /* The policy marks the cgroup limits required: macOS has none → refuse. */
  p.limits.cgroup = SECURER_ENFORCE_REQUIRED;
  text = profile_of (&p, &rep);
  free (text);
  cr_assert_eq (securer_port_report_count (&rep, SECURER_ENFORCE_REQUIRED), 2);
  cr_assert_eq (securer_port_check (&rep, 0, &err), -1);
  cr_assert_eq (err->status, SECURER_EXIT_SETUP);
  const char *msg = securer_error_message (err);
  cr_assert (strstr (msg, "the seatbelt backend cannot enforce 2 rules this policy needs: "), "%s", msg);
  cr_assert (strstr (msg, "limits cgroup memory (required): macOS has no cgroups"), "%s", msg);
  cr_assert_null (strstr (msg, "seccomp"), "best-effort gaps do not refuse: %s", msg);
  securer_error_free (&err);
  /* Only an explicit opt-in runs it anyway. */
  cr_assert_eq (securer_port_check (&rep, SECURER_PORT_ACCEPT_WEAKER, &err), 0);
  securer_port_report_clear (&rep);
}

Test (seatbelt, host_path_mapping)
{
  struct securer_policy p;
  test_r_policy (&p);
  char *s = securer_seatbelt_host_path (&p, "/tmp/Rtmp1/x", "/private/var/folders/T/s1");
  cr_assert_str_eq (s, "/private/var/folders/T/s1/tmpfs/tmp/Rtmp1/x");
  free (s);
  s = securer_seatbelt_host_path (&p, "/usr/local/lib/R/site-library/jsonlite", NULL);
  cr_assert_str_eq (s, "/opt/site-lib/jsonlite", "the most specific mount wins");
  free (s);
  s = securer_seatbelt_host_path (&p, "/usr/lib/R", NULL);
  cr_assert_str_eq (s, "/usr/lib/R");
  free (s);
  s = securer_seatbelt_host_path (&p, "/home/sandbox", NULL);
  cr_assert_str_eq (s, "<SECURER_PRIVATE_DIR>/tmpfs/home/sandbox");
  free (s);
  cr_assert_null (securer_seatbelt_host_path (&p, "/Users/alice/.ssh", NULL));
  cr_assert_null (securer_seatbelt_host_path (&p, "/usrx", NULL), "prefix is not a path component");
}
