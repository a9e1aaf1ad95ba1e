/* Policies loaded with their seccomp rules resolved later
 * (SECURER_POLICY_DEFER_SECCOMP): once completed they are the policy a
 * full load gives, with the same diagnostics, from the bytes read at load
 * time only. */
#include <config.h>

#include <dirent.h>
#include <unistd.h>

#include "policy-test.h"

struct loaded {
  int rc;
  struct securer_policy *p;
  char *diags;     /* every diagnostic, formatted */
  char *error;     /* the first error, as the CLI reports it */
  char *json, *text;
};

static void
loaded_fill (struct loaded *l, struct securer_diags *d, securer_err_t *err)
{
  l->diags = diags_text (d);
  l->error = strdup (*err ? securer_error_message (*err) : "");
  l->json = l->p ? securer_policy_to_json_text (l->p, 0) : strdup ("");
  l->text = l->p ? securer_policy_to_text (l->p) : strdup ("");
  securer_diags_free (d);
  securer_error_free (err);
}

static void
load_full (const char *path, struct loaded *l)
{
  struct securer_diags d = { NULL, 0, 0 };
  securer_err_t err = NULL;
  memset (l, 0, sizeof *l);
  l->rc = securer_policy_load_file (path, &l->p, &d, &err);
  cr_assert (!securer_policy_seccomp_pending (l->p));
  loaded_fill (l, &d, &err);
}

/* Deferred load, then whatever `between` does to the files, then the
 * completion; the diagnostics of both steps in one list. */
static void
load_deferred (const char *path, struct loaded *l, void (*between) (void *), void *ctx)
{
  struct securer_diags d = { NULL, 0, 0 };
  securer_err_t err = NULL;
  memset (l, 0, sizeof *l);
  l->rc = securer_policy_load_file_opts (path, SECURER_POLICY_DEFER_SECCOMP, &l->p, &d, &err);
  if (between != NULL)
    between (ctx);
  if (l->rc == 0)
    {
      l->rc = securer_policy_complete (l->p, &d, &err);
      cr_assert (!securer_policy_seccomp_pending (l->p));
      if (l->rc < 0)
        {
          /* Only good for freeing, as a failed load gives nothing. */
          securer_policy_free (l->p);
          l->p = NULL;
        }
    }
  loaded_fill (l, &d, &err);
}

static void
loaded_free (struct loaded *l)
{
  securer_policy_free (l->p);
  free (l->diags);
  free (l->error);
  free (l->json);
  free (l->text);
}

static void
assert_same (const char *path, void (*between) (void *), void *ctx)
{
  struct loaded a, b;
  load_full (path, &a);
  load_deferred (path, &b, between, ctx);
  cr_assert_eq (a.rc, b.rc, "%s: full %d, deferred %d (%s)", path, a.rc, b.rc, b.error);
  cr_assert_str_eq (a.diags, b.diags, "%s:\nfull:\n%s\ndeferred:\n%s", path, a.diags, b.diags);
  cr_assert_str_eq (a.error, b.error, "%s", path);
  cr_assert_str_eq (a.json, b.json, "%s", path);
  cr_assert_str_eq (a.text, b.text, "%s", path);
  loaded_free (&a);
  loaded_free (&b);
}

static void
each_policy (const char *rel_dir)
{
  char *dir = src_path (rel_dir);
  DIR *d = opendir (dir);
  cr_assert_not_null (d, "%s", dir);
  struct dirent *e;
  int n = 0;
  while ((e = readdir (d)) != NULL)
    {
      size_t len = strlen (e->d_name);
      if (len < 8 || strcmp (e->d_name + len - 7, ".policy") != 0)
        continue;
      char *path = NULL;
      cr_assert_geq (asprintf (&path, "%s/%s", dir, e->d_name), 0);
      assert_same (path, NULL, NULL);
      free (path);
      n++;
    }
  closedir (d);
  cr_assert_gt (n, 0, "no policy in %s", dir);
  free (dir);
}

Test (policy_defer, shipped_policies_complete_to_a_full_load)
{
  each_policy ("policies");
  each_policy ("policies/base");
  each_policy ("bench");
  each_policy ("tests/unit/data/policy");
}

Test (policy_defer, rules_wait_for_completion)
{
  char *path = src_path ("policies/minimal.policy");
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_file_opts (path, SECURER_POLICY_DEFER_SECCOMP, &p, NULL, &err), 0);
  cr_assert (securer_policy_seccomp_pending (p));
  cr_assert (p->seccomp.enabled);
  cr_assert_eq (p->seccomp.n_rules, 0);
  /* Everything a launcher needs before clone is there. */
  cr_assert_gt (p->n_mounts, 0);
  cr_assert_eq (p->limits.rlimit[SECURER_RLIMIT_NOFILE].hard, 256);
  cr_assert_eq (p->seccomp.default_action.type, SECURER_ACT_ERRNO);
  cr_assert_eq (securer_policy_complete (p, NULL, &err), 0);
  cr_assert_gt (p->seccomp.n_rules, 100);
  cr_assert_eq (securer_policy_complete (p, NULL, &err), 0, "completing twice does nothing");
  securer_policy_free (p);
  /* Freed without completion: nothing leaks (run under the sanitizers). */
  cr_assert_eq (securer_policy_load_file_opts (path, SECURER_POLICY_DEFER_SECCOMP, &p, NULL, &err), 0);
  securer_policy_free (p);
  free (path);
}

static char tmpdir[] = "/tmp/securer-defer-XXXXXX";

static char *
write_file (const char *name, const char *text)
{
  char *path = NULL;
  cr_assert_geq (asprintf (&path, "%s/%s", tmpdir, name), 0);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fputs (text, f);
  fclose (f);
  return path;
}

static void
tmp_setup (void)
{
  cr_assert_not_null (mkdtemp (tmpdir));
}

static void
tmp_teardown (void)
{
  static const char *const names[] = { "inc.policy", "top.policy", "bad.policy" };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    {
      char p[512];
      snprintf (p, sizeof p, "%s/%s", tmpdir, names[i]);
      unlink (p);
    }
  rmdir (tmpdir);
}

/* Errors in rule lines, between other errors and warnings: the same
 * diagnostics in the same order (the load resolves the rules at once). */
Test (policy_defer, errors_are_reported_as_by_a_full_load, .init = tmp_setup, .fini = tmp_teardown)
{
  char *inc = write_file ("inc.policy", "seccomp allow read write\n"
                                        "seccomp allow @no-such-group\n"
                                        "mount ro /etc/x /\n");
  char *top = write_file ("top.policy", "include \"inc.policy\"\n"
                                        "seccomp allow opne\n"
                                        "network lopback\n"
                                        "seccomp errno EPERM socket if arg0 == AF_NOPE\n"
                                        "seccomp off\n");
  assert_same (top, NULL, NULL);
  free (inc);
  free (top);
}

/* A policy that is fine but for its rules: the load succeeds, the
 * completion fails with what a full load reports. */
Test (policy_defer, rule_errors_are_reported_by_the_completion, .init = tmp_setup, .fini = tmp_teardown)
{
  char *top = NULL;
  if (asprintf (&top, "include \"%s/policies/minimal.policy\"\nseccomp allow opne\n"
                "seccomp kill ptrace if arg0 == PTRACE_NOPE\n", getenv ("SECURER_SRCDIR")) < 0)
    cr_assert_fail ();
  char *path = write_file ("bad.policy", top);
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_file_opts (path, SECURER_POLICY_DEFER_SECCOMP, &p, NULL, &err), 0);
  cr_assert (securer_policy_seccomp_pending (p));
  securer_policy_free (p);
  assert_same (path, NULL, NULL);
  struct loaded l;
  load_deferred (path, &l, NULL, NULL);
  cr_assert_eq (l.rc, -1);
  char *want = NULL;
  cr_assert_geq (asprintf (&want, "%s:2:15: unknown syscall 'opne' (did you mean 'open'?)", path), 0);
  cr_assert_str_eq (l.error, want);
  loaded_free (&l);
  free (want);
  free (path);
  free (top);
}

static void
rewrite_files (void *ctx)
{
  (void) ctx;
  free (write_file ("inc.policy", "seccomp allow @no-such-group\nseccomp kill read\n"));
  free (write_file ("top.policy", "seccomp allow opne\n"));
}

/* Files changed or removed between the load and the completion change
 * nothing: the completion uses what the load read. */
Test (policy_defer, completion_reads_no_policy_file_again, .init = tmp_setup, .fini = tmp_teardown)
{
  char *inc = write_file ("inc.policy", "seccomp allow read write\nseccomp errno EPERM socket if arg0 == AF_INET\n");
  char *top = write_file ("top.policy", "include \"inc.policy\"\nseccomp allow close @clock\nseccomp off\nseccomp on\n");
  struct loaded a, b;
  load_full (top, &a);
  cr_assert_eq (a.rc, 0, "%s", a.diags);
  load_deferred (top, &b, rewrite_files, NULL);
  cr_assert_eq (b.rc, 0, "%s", b.diags);
  cr_assert_str_eq (a.json, b.json);
  cr_assert_str_eq (a.diags, b.diags);
  loaded_free (&a);
  loaded_free (&b);
  free (inc);
  free (top);
}
