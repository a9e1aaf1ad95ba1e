/* The fragment `securer policy learn` writes, from recorded events: when a
 * group is written whole, argument conditions and their order, what cannot
 * be allowed, what the base would have done, the learning policy itself, and
 * that the text is a policy the loader accepts with exactly the rules meant. */
#include <config.h>

#include <criterion/criterion.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "securer.h"
#include "seccomp/learn.h"

static struct securer_policy *
policy_from (const char *text)
{
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  int r = securer_policy_load_string ("test.policy", text, strlen (text), &p, NULL, &err);
  cr_assert_eq (r, 0, "%s", err ? securer_error_message (err) : "");
  return p;
}

static struct securer_learn *
new_learn (const char *base_text)
{
  struct securer_policy *base = policy_from (base_text);
  struct securer_learn *l = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_learn_new (base, &l, &err), 0, "%s", err ? securer_error_message (err) : "");
  securer_policy_free (base);
  return l;
}

static void
call (struct securer_learn *l, const char *name, uint64_t a0, uint64_t a1)
{
  struct securer_syscall_event ev = {
    .pid = 1,
    .arch = seccomp_arch_native (),
    .nr = seccomp_syscall_resolve_name (name),
    .name = name,
    .args = { a0, a1, 0, 0, 0, 0 },
    .action = { SECURER_ACT_NOTIFY, 0 },
  };
  cr_assert_geq (ev.nr, 0, "%s", name);
  securer_learn_record (l, &ev);
}

static char *
fragment (struct securer_learn *l, unsigned pct)
{
  char *argv[] = { "prog", "arg\nwith newline", NULL };
  struct securer_learn_info info = { .argv = argv, .base = "base", .collapse_pct = pct };
  securer_err_t err = NULL;
  char *s = securer_learn_fragment (l, &info, &err);
  cr_assert_not_null (s, "%s", err ? securer_error_message (err) : "");
  return s;
}

/* @sync on x86_64: sync_file_range2 exists only on other arches. */
static const char *const sync_native[] = { "fdatasync", "fsync", "msync", "sync", "sync_file_range", "syncfs" };

Test (learn_fragment, whole_group_only_when_every_native_member_was_used)
{
  if (seccomp_syscall_resolve_name ("sync_file_range2") >= 0)
    cr_skip_test ("sync_file_range2 exists on this arch");
  struct securer_learn *l = new_learn ("seccomp default errno ENOSYS\n");
  for (size_t i = 0; i < 6; i++)
    call (l, sync_native[i], 0, 0);
  char *s = fragment (l, 100);
  cr_assert_not_null (strstr (s, "\nseccomp allow @sync "), "%s", s);
  cr_assert_not_null (strstr (s, "# 6 of 6 used, 6 calls"), "%s", s);
  cr_assert_null (strstr (s, "seccomp allow fsync"), "%s", s);
  cr_assert_null (strstr (s, "also allows"), "%s", s);
  free (s);
  securer_learn_free (l);

  l = new_learn ("seccomp default errno ENOSYS\n");
  for (size_t i = 0; i < 5; i++)
    call (l, sync_native[i], 0, 0);
  s = fragment (l, 100);
  cr_assert_null (strstr (s, "seccomp allow @"), "%s", s);
  cr_assert_not_null (strstr (s, "\n# @sync: 5 of 6 used\nseccomp allow fdatasync "), "%s", s);
  free (s);
  /* Below 100%, the group is written and what it adds is named. */
  s = fragment (l, 80);
  cr_assert_not_null (strstr (s, "\nseccomp allow @sync "), "%s", s);
  cr_assert_not_null (strstr (s, "#   also allows: syncfs\n"), "%s", s);
  free (s);
  securer_learn_free (l);
}

Test (learn_fragment, argument_values_become_sorted_conditions)
{
  struct securer_learn *l = new_learn ("seccomp default errno ENOSYS\n");
  call (l, "ioctl", 1, 0x5413);              /* TIOCGWINSZ */
  call (l, "ioctl", 1, 0x5401 | 1ull << 32); /* TCGETS: the kernel ignores the upper half */
  call (l, "ioctl", 1, 0x5401);
  call (l, "ioctl", 1, 0x12345);             /* no name */
  call (l, "socket", 1, 0);                  /* AF_UNIX (not AF_LOCAL) */
  char *s = fragment (l, 100);
  const char *a = strstr (s, "seccomp allow ioctl if arg1 == TCGETS ");
  const char *b = strstr (s, "seccomp allow ioctl if arg1 == TIOCGWINSZ ");
  const char *c = strstr (s, "seccomp allow ioctl if arg1 == 0x12345 ");
  cr_assert (a && b && c && a < b && b < c, "%s", s);
  cr_assert_not_null (strstr (a, "# 2 calls"), "%s", s);
  cr_assert_not_null (strstr (s, "seccomp allow socket if arg0 == AF_UNIX "), "%s", s);
  /* The newline in the command line cannot end the header comment. */
  cr_assert_not_null (strstr (s, "# Syscalls used by: prog arg?with newline\n"), "%s", s);
  free (s);

  /* Too many distinct requests: the syscall is allowed whole, and says so. */
  for (uint64_t v = 0; v < 20; v++)
    call (l, "ioctl", 1, 0x9000 + v);
  s = fragment (l, 100);
  cr_assert_null (strstr (s, "ioctl if"), "%s", s);
  cr_assert_not_null (strstr (s, "seccomp allow ioctl "), "%s", s);
  cr_assert_not_null (strstr (s, "more than 16 distinct arg1 values"), "%s", s);
  free (s);
  securer_learn_free (l);
}

Test (learn_fragment, other_abis_and_denials_are_comments_not_rules)
{
  struct securer_learn *l = new_learn ("seccomp default errno ENOSYS\n");
  call (l, "read", 0, 0);
  struct securer_syscall_event ev = {
    .pid = 1, .arch = 0x40000003 /* AUDIT_ARCH_I386 */, .nr = 20, .name = "i386:getpid",
    .action = { SECURER_ACT_KILL_PROCESS, 0 },
  };
  securer_learn_record (l, &ev);
  struct securer_syscall_event k = {
    .pid = 1, .arch = seccomp_arch_native (), .nr = seccomp_syscall_resolve_name ("ptrace"),
    .name = "ptrace", .action = { SECURER_ACT_KILL_PROCESS, 0 },
  };
  securer_learn_record (l, &k);
  char *s = fragment (l, 100);
  cr_assert_null (strstr (s, "seccomp allow ptrace"), "%s", s);
  cr_assert_null (strstr (s, "seccomp allow i386"), "%s", s);
  cr_assert_not_null (strstr (s, "#   i386:getpid: 1 call stopped by kill-process\n"), "%s", s);
  cr_assert_not_null (strstr (s, "#   ptrace: 1 call stopped by kill-process\n"), "%s", s);
  free (s);
  securer_learn_free (l);
}

Test (learn_fragment, base_decision_is_noted)
{
  struct securer_learn *l = new_learn ("seccomp default errno ENOSYS\nseccomp allow read\n"
                                       "seccomp errno EPERM unshare\n");
  call (l, "read", 0, 0);
  call (l, "unshare", 0, 0);
  call (l, "getpid", 0, 0);
  char *s = fragment (l, 100);
  cr_assert_not_null (strstr (s, "# 1 call; base: errno EPERM\n"), "%s", s);
  cr_assert_not_null (strstr (s, "# 1 call; base: errno ENOSYS\n"), "%s", s);
  const char *r = strstr (s, "seccomp allow read ");
  cr_assert_not_null (r);
  cr_assert_eq (strncmp (strchr (r, '#'), "# 1 call\n", 9), 0, "%s", s);
  free (s);
  securer_learn_free (l);
}

Test (learn_fragment, fragment_loads_as_exactly_these_rules)
{
  struct securer_learn *l = new_learn ("seccomp default errno ENOSYS\n");
  call (l, "openat", 0, 0);
  call (l, "exit_group", 0, 0);
  call (l, "socket", 1, 0);
  char *s = fragment (l, 100);
  char *text = NULL;
  cr_assert (asprintf (&text, "seccomp default kill-process\n%s", s) > 0);
  struct securer_policy *p = policy_from (text);
  cr_assert_eq (p->seccomp.n_rules, 3);
  bool seen[3] = { false };
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    {
      const struct securer_syscall_rule *r = &p->seccomp.rules[i];
      cr_assert_eq (r->action.type, SECURER_ACT_ALLOW);
      if (strcmp (r->name, "socket") == 0)
        {
          cr_assert_eq (r->n_conds, 1);
          cr_assert_eq (r->conds[0].arg, 0);
          cr_assert_eq (r->conds[0].value, 1);
          seen[0] = true;
        }
      else
        {
          cr_assert_eq (r->n_conds, 0);
          seen[strcmp (r->name, "openat") == 0 ? 1 : 2] = true;
        }
    }
  cr_assert (seen[0] && seen[1] && seen[2]);
  securer_policy_free (p);
  free (text);
  free (s);
  securer_learn_free (l);
}

Test (learn_fragment, learning_policy_drops_or_keeps_denials)
{
  const char *base = "seccomp default errno ENOSYS\nseccomp foreign-abi kill-process\n"
                     "seccomp allow read write\nseccomp errno EPERM unshare\nseccomp kill ptrace\n";
  securer_err_t err = NULL;
  struct securer_policy *p = policy_from (base);
  cr_assert_eq (securer_learn_prepare (p, false, &err), 0);
  cr_assert_eq (p->seccomp.n_rules, 0);
  cr_assert_eq (p->seccomp.default_action.type, SECURER_ACT_NOTIFY);
  cr_assert_eq (p->seccomp.foreign_arch.type, SECURER_ACT_KILL_PROCESS);
  securer_policy_free (p);

  p = policy_from (base);
  cr_assert_eq (securer_learn_prepare (p, true, &err), 0);
  cr_assert_eq (p->seccomp.n_rules, 4);
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    {
      const struct securer_syscall_rule *r = &p->seccomp.rules[i];
      if (strcmp (r->name, "unshare") == 0)
        cr_assert_eq (r->action.type, SECURER_ACT_ERRNO);
      else if (strcmp (r->name, "ptrace") == 0)
        cr_assert_eq (r->action.type, SECURER_ACT_KILL_PROCESS);
      else
        cr_assert_eq (r->action.type, SECURER_ACT_NOTIFY, "%s", r->name);
    }
  securer_policy_free (p);
}
