/* OCI / Docker seccomp profiles: import to policy text, export from a
 * policy, and the round trip between them. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "seccomp/seccomp.h"
#include "securer/policy.h"

static char *
read_file (const char *rel, size_t *len)
{
  const char *top = getenv ("SECURER_SRCDIR");
  cr_assert_not_null (top, "SECURER_SRCDIR must be set (run through make check)");
  char path[1024];
  snprintf (path, sizeof path, "%s/%s", top, rel);
  FILE *f = fopen (path, "r");
  cr_assert_not_null (f, "%s", path);
  char *buf = malloc (1 << 20);
  *len = fread (buf, 1, (1 << 20) - 1, f);
  buf[*len] = '\0';
  fclose (f);
  return buf;
}

static struct securer_policy *
load_text (const char *name, const char *text)
{
  struct securer_policy *p = NULL;
  struct securer_diags diags = { 0 };
  securer_err_t err = NULL;
  int rc = securer_policy_load_string (name, text, strlen (text), &p, &diags, &err);
  cr_assert_eq (rc, 0, "%s\n--- text ---\n%s", err ? securer_error_message (err) : "", text);
  securer_diags_free (&diags);
  return p;
}

static struct securer_seccomp_prog *
compile (const struct securer_policy *p)
{
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_seccomp_compile (p, 0, -1, &prog, &err), 0, "%s", err ? securer_error_message (err) : "");
  return prog;
}

static enum securer_action_type
eval (struct securer_seccomp_prog *prog, long nr, uint64_t a0, uint64_t a1, int *errnum)
{
  uint64_t a[6] = { a0, a1, 0, 0, 0, 0 };
  struct securer_action r = securer_seccomp_eval (prog, 0, (int) nr, a);
  if (errnum)
    *errnum = r.errnum;
  return r.type;
}

Test (oci, import_docker_style_profile)
{
  size_t len;
  char *json = read_file ("tests/unit/data/seccomp/docker-like.json", &len);
  securer_err_t err = NULL;
  char *text = securer_seccomp_import_oci ("docker-like.json", json, len, &err);
  cr_assert_not_null (text, "%s", err ? securer_error_message (err) : "");
  free (json);

  cr_assert_not_null (strstr (text, "seccomp default errno EPERM\n"), "%s", text);
  cr_assert_not_null (strstr (text, "seccomp allow personality if arg0 == 0\n"), "%s", text);
  cr_assert_not_null (strstr (text, "seccomp allow personality if arg0 == 0xffffffff\n"), "%s", text);
  cr_assert_not_null (strstr (text, "seccomp allow clone if arg0 & 0x7e020000 == 0\n"), "%s", text);
  cr_assert_not_null (strstr (text, "seccomp errno ENOSYS clone3\n"), "%s", text);
  cr_assert_not_null (strstr (text, "seccomp kill-thread ptrace\n"), "%s", text);
  cr_assert_not_null (strstr (text, "seccomp allow arch_prctl\n"), "%s", text);
  cr_assert_not_null (strstr (text, "# left out (only with a capability, which the sandbox never has): mount umount2 unshare"), "%s", text);
  cr_assert_not_null (strstr (text, "# left out (only on another architecture): clone"), "%s", text);
  cr_assert_not_null (strstr (text, "# unknown to this libseccomp, left out: futex_waitv_not_a_syscall"), "%s", text);
  cr_assert_null (strstr (text, "seccomp allow mount"));

  /* The printed rules are a valid policy, and mean what the profile meant. */
  struct securer_policy *p = load_text ("imported.policy", text);
  struct securer_seccomp_prog *prog = compile (p);
  int e;
  cr_assert_eq (eval (prog, SYS_read, 0, 0, NULL), SECURER_ACT_ALLOW);
  cr_assert_eq (eval (prog, SYS_clone, 0x11 /* SIGCHLD */, 0, NULL), SECURER_ACT_ALLOW);
  cr_assert_eq (eval (prog, SYS_clone, CLONE_NEWUSER | 0x11, 0, &e), SECURER_ACT_ERRNO);
  cr_assert_eq (e, EPERM);
  cr_assert_eq (eval (prog, SYS_clone3, 0, 0, &e), SECURER_ACT_ERRNO);
  cr_assert_eq (e, ENOSYS);
  cr_assert_eq (eval (prog, SYS_mount, 0, 0, &e), SECURER_ACT_ERRNO);
  cr_assert_eq (e, EPERM);
  cr_assert_eq (eval (prog, SYS_ptrace, 0, 0, NULL), SECURER_ACT_KILL_THREAD);
  cr_assert_eq (eval (prog, SYS_personality, 0xffffffff, 0, NULL), SECURER_ACT_ALLOW);
  cr_assert_eq (eval (prog, SYS_personality, 0x0040000, 0, NULL), SECURER_ACT_ERRNO);
  securer_seccomp_free (prog);
  securer_policy_free (p);
  free (text);
}

Test (oci, import_errors_are_clear)
{
  securer_err_t err = NULL;
  cr_assert_null (securer_seccomp_import_oci ("bad.json", "{ \"defaultAction\": ", 19, &err));
  cr_assert_not_null (strstr (securer_error_message (err), "bad.json:1:"), "%s", securer_error_message (err));
  securer_error_free (&err);

  const char *t1 = "{\"defaultAction\":\"SCMP_ACT_TRACE\"}";
  cr_assert_null (securer_seccomp_import_oci ("t1.json", t1, strlen (t1), &err));
  cr_assert_not_null (strstr (securer_error_message (err), "defaultAction"), "%s", securer_error_message (err));
  securer_error_free (&err);

  const char *t2 = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\","
                   "\"args\":[{\"index\":9,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}";
  cr_assert_null (securer_seccomp_import_oci ("t2.json", t2, strlen (t2), &err));
  cr_assert_not_null (strstr (securer_error_message (err), "syscalls[0].args[0]"), "%s", securer_error_message (err));
  securer_error_free (&err);
}

static const char *round_trip_policy =
  "seccomp default errno ENOSYS\n"
  "seccomp foreign-abi kill-process\n"
  "seccomp allow read write close exit_group getpid\n"
  "seccomp allow socket if arg0 == AF_UNIX\n"
  "seccomp allow socket if arg0 == AF_INET and arg1 & 0xf == SOCK_STREAM\n"
  "seccomp errno EACCES openat if arg2 & O_WRONLY == O_WRONLY\n"
  "seccomp kill-process ptrace\n"
  "seccomp errno EPERM lseek if arg1 > 0x100000000\n";

static char *
round_trip (const struct securer_policy *p)
{
  securer_err_t err = NULL;
  json_t *j = securer_seccomp_to_oci (p, &err);
  cr_assert_not_null (j, "%s", err ? securer_error_message (err) : "");
  char *dump = json_dumps (j, JSON_COMPACT);
  json_decref (j);
  char *text = securer_seccomp_import_oci ("exported.json", dump, strlen (dump), &err);
  cr_assert_not_null (text, "%s\n%s", err ? securer_error_message (err) : "", dump);
  free (dump);
  return text;
}

static bool
same_rule (const struct securer_syscall_rule *a, const struct securer_syscall_rule *b)
{
  if (strcmp (a->name, b->name) || a->action.type != b->action.type || a->action.errnum != b->action.errnum
      || a->n_conds != b->n_conds)
    return false;
  for (unsigned k = 0; k < a->n_conds; k++)
    if (a->conds[k].arg != b->conds[k].arg || a->conds[k].op != b->conds[k].op
        || a->conds[k].value != b->conds[k].value
        || (a->conds[k].op == SECURER_CMP_MASKED_EQ && a->conds[k].mask != b->conds[k].mask))
      return false;
  return true;
}

Test (oci, round_trip_keeps_the_resolved_rules)
{
  struct securer_policy *p = load_text ("rt.policy", round_trip_policy);
  char *text = round_trip (p);
  struct securer_policy *q = load_text ("rt-imported.policy", text);
  cr_assert_eq (q->seccomp.default_action.type, p->seccomp.default_action.type);
  cr_assert_eq (q->seccomp.default_action.errnum, p->seccomp.default_action.errnum);
  cr_assert_eq (q->seccomp.foreign_arch.type, p->seccomp.foreign_arch.type);
  cr_assert_eq (q->seccomp.n_rules, p->seccomp.n_rules, "%s", text);
  /* Same rules per syscall, in the same order within each syscall. */
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    {
      const struct securer_syscall_rule *a = &p->seccomp.rules[i];
      size_t ia = 0, ib = 0;
      for (size_t k = 0; k < i; k++)
        ia += strcmp (p->seccomp.rules[k].name, a->name) == 0;
      bool found = false;
      for (size_t k = 0; k < q->seccomp.n_rules && !found; k++)
        if (strcmp (q->seccomp.rules[k].name, a->name) == 0 && ib++ == ia)
          {
            cr_assert (same_rule (a, &q->seccomp.rules[k]), "rule %zu (%s) differs:\n%s", i, a->name, text);
            found = true;
          }
      cr_assert (found, "rule for %s lost:\n%s", a->name, text);
    }
  free (text);
  securer_policy_free (q);
  securer_policy_free (p);
}

Test (oci, order_dependent_rules_export_as_disjoint_rules)
{
  const char *src = "seccomp default errno ENOSYS\n"
                    "seccomp allow ioctl\n"
                    "seccomp errno EPERM ioctl if arg1 == TIOCSTI\n";
  struct securer_policy *p = load_text ("mixed.policy", src);
  securer_err_t err = NULL;
  json_t *j = securer_seccomp_to_oci (p, &err);
  cr_assert_not_null (j);
  /* No unconditional "allow ioctl" for an OCI runtime to let swallow the
   * TIOCSTI denial: every ioctl rule is conditional. */
  size_t i;
  json_t *r;
  size_t n_ioctl = 0;
  json_array_foreach (json_object_get (j, "syscalls"), i, r)
    {
      if (strcmp (json_string_value (json_array_get (json_object_get (r, "names"), 0)), "ioctl") != 0)
        continue;
      n_ioctl++;
      cr_assert_gt (json_array_size (json_object_get (r, "args")), 0);
    }
  cr_assert_gt (n_ioctl, 2);
  json_decref (j);

  /* Imported back, it means the same for every request. */
  char *text = round_trip (p);
  struct securer_policy *q = load_text ("mixed-imported.policy", text);
  struct securer_seccomp_prog *a = compile (p), *b = compile (q);
  uint64_t reqs[] = { TIOCSTI, TIOCSTI | (1ull << 32), TCGETS, FIONREAD, 0, ~0ull, TIOCSTI ^ 1 };
  for (size_t k = 0; k < sizeof reqs / sizeof reqs[0]; k++)
    {
      int ea = 0, eb = 0;
      cr_assert_eq (eval (a, SYS_ioctl, 0, reqs[k], &ea), eval (b, SYS_ioctl, 0, reqs[k], &eb), "request 0x%llx",
                    (unsigned long long) reqs[k]);
      cr_assert_eq (ea, eb);
    }
  cr_assert_eq (eval (b, SYS_ioctl, 0, TIOCSTI | (1ull << 32), NULL), SECURER_ACT_ERRNO);
  cr_assert_eq (eval (b, SYS_ioctl, 0, TCGETS, NULL), SECURER_ACT_ALLOW);
  securer_seccomp_free (a);
  securer_seccomp_free (b);
  securer_policy_free (q);
  securer_policy_free (p);
  free (text);
}
