/* The policy language: what it accepts, what it means, and every
 * diagnostic it can give, with its exact position and wording. */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy-test.h"
#include "securer/paths.h"
#include "seccomp/seccomp.h"

/* ---- every diagnostic ------------------------------------------------------ */

struct diag_case {
  const char *text;      /* "seccomp off" is appended on a line of its own */
  const char *expected;  /* every diagnostic, formatted, one per line */
};

static const struct diag_case cases[] = {
  /* lexer */
  { "env set A=\"x\\q\"", "t.policy:1:13: error: unknown escape sequence in string (write \\\\ for a backslash)\n" },
  { "hostname \"abc", "t.policy:1:10: error: unterminated string: expected '\"' before the end of the line\n" },
  { "hostname a\xff", "t.policy:1:10: error: invalid UTF-8: policy text must be UTF-8\n" },
  /* directives */
  { "moutn ro /usr", "t.policy:1:1: error: unknown directive 'moutn' (did you mean 'mount'?)\n" },
  { "\"mount\" ro /usr", "t.policy:1:1: error: unknown directive 'mount'\n" },
  { "bogus", "t.policy:1:1: error: unknown directive 'bogus'\n" },
  { "network", "t.policy:1:8: error: expected none, loopback, host, allow, deny or limit after 'network'\n" },
  { "network none loopback", "t.policy:1:14: error: unexpected 'loopback': expected the end of the network directive\n" },
  { "network hots", "t.policy:1:9: error: unknown network mode 'hots': expected none, loopback, host, allow, deny or limit (did you mean 'host'?)\n" },
  { "namespaces user pidd", "t.policy:1:17: error: unknown namespace 'pidd': expected user, pid, mount, net, uts, ipc, cgroup, all or none (did you mean 'pid'?)\n" },
  { "namespaces", "t.policy:1:11: error: expected namespace names (user pid mount net uts ipc cgroup), 'all' or 'none' after 'namespaces'\n" },
  { "hostname -bad", "t.policy:1:10: error: invalid host name '-bad': expected a host name of 1 to 64 letters, digits, '-' and '.'\n" },
  { "uid 1000 hots=1", "t.policy:1:10: error: unexpected 'hots=1': expected host=ID, host=caller or host=pool\n" },
  { "gid 1000 host=x", "t.policy:1:10: error: expected host=ID (a number below 4294967295), host=caller or host=pool, got 'host=x'\n" },
  { "uid 1000 host=0", "t.policy:1:10: error: host=0 would make the sandbox host root: expected another id, host=caller or host=pool\n" },
  { "gid 0 host=0", "t.policy:1:7: error: host=0 would make the sandbox host root: expected another id, host=caller or host=pool\n" },
  { "uid 4294967295", "t.policy:1:5: error: number '4294967295' is too large (at most 4294967294)\n" },
  { "uid abc", "t.policy:1:5: error: expected a number, got 'abc'\n" },
  { "cwd tmp", "t.policy:1:5: error: invalid directory 'tmp': expected an absolute path\n" },
  { "cwd /a/../b", "t.policy:1:5: error: invalid directory '/a/../b': expected an absolute path without '..'\n" },
  { "cwd \"/a\\tb\"", "t.policy:1:5: error: invalid directory '/a\tb': expected a path without control characters\n" },
  /* mounts */
  { "mount", "t.policy:1:6: error: expected a mount type (ro, rw, tmpfs, proc, dev, dir or symlink) after 'mount'\n" },
  { "mount r0 /usr", "t.policy:1:7: error: unknown mount type 'r0': expected ro, rw, tmpfs, proc, dev, dir or symlink (did you mean 'ro'?)\n" },
  { "mount tmpfs? /tmp", "t.policy:1:7: error: '?' (skip when the source is missing) applies to ro and rw mounts only\n" },
  { "mount ro usr", "t.policy:1:10: error: invalid source path 'usr': expected an absolute path\n" },
  { "mount ro", "t.policy:1:9: error: expected a host path after 'ro'\n" },
  { "mount tmpfs /tmp size=12KB", "t.policy:1:23: error: unknown size unit 'KB' in '12KB' (sizes take K, M, G or T (powers of 1024), or KiB, MiB, GiB, TiB)\n" },
  { "mount tmpfs /tmp size=big", "t.policy:1:23: error: expected a size such as 64M or 512KiB, got 'big'\n" },
  { "mount tmpfs /tmp size=99999999999T", "t.policy:1:23: error: size '99999999999T' is too large\n" },
  { "mount tmpfs /tmp size=1M size=2M", "t.policy:1:26: error: size given twice\n" },
  { "mount tmpfs /tmp mode=1777 mode=0700", "t.policy:1:28: error: mode given twice\n" },
  { "mount tmpfs /tmp mode=1778", "t.policy:1:23: error: expected an octal mode from 0 to 7777 such as 1777 or 0755, got '1778'\n" },
  { "mount tmpfs /tmp exec noexec", "t.policy:1:23: error: exec/noexec given twice\n" },
  { "mount ro /usr /usr size=1M", "t.policy:1:20: error: unexpected 'size=1M' in mount ro: expected a mount point, exec or noexec\n" },
  { "mount tmpfs /tmp ro", "t.policy:1:18: error: unexpected 'ro' in mount tmpfs: expected size=SIZE, mode=MODE, exec or noexec\n" },
  { "mount dir /x size=1", "t.policy:1:14: error: unexpected 'size=1' in mount dir: expected mode=MODE\n" },
  { "mount proc /proc x", "t.policy:1:18: error: unexpected 'x' in mount proc: expected subset=pid or unmasked\n" },
  { "mount proc /proc unmasked unmasked", "t.policy:1:27: error: unmasked given twice\n" },
  { "mount proc subset=pid unmasked", "t.policy:1:7: error: subset=pid and unmasked cannot go together "
    "(a subset=pid procfs has no host-wide entry to show or hide)\n" },
  { "mount dev /dev unmasked", "t.policy:1:16: error: unexpected 'unmasked' in mount dev: expected the end of the line\n" },
  { "mount proc subset=all", "t.policy:1:12: error: unknown proc subset 'all': expected subset=pid\n" },
  { "mount proc /proc subset=pid subset=pid", "t.policy:1:29: error: subset given twice\n" },
  { "mount dev /dev subset=pid", "t.policy:1:16: error: unexpected 'subset=pid' in mount dev: expected the end of the line\n" },
  { "mount proc proc", "t.policy:1:12: error: invalid mount point 'proc': expected an absolute path\n" },
  { "mount symlink /bin usr/bin", "t.policy:1:20: error: expected '->' between the link and its target, got 'usr/bin'\n" },
  { "mount symlink /bin ->", "t.policy:1:22: error: expected the link's target after '->'\n" },
  { "mount symlink /bin -> \"\"", "t.policy:1:23: error: invalid link target '': expected a non-empty path shorter than 4096 bytes, on one line\n" },
  { "mount dir", "t.policy:1:10: error: expected a path inside the sandbox after 'dir'\n" },
  { "mask", "t.policy:1:5: error: expected a path to hide after 'mask'\n" },
  { "mask /ok rel", "t.policy:1:10: error: invalid path 'rel': expected an absolute path\n" },
  /* limits */
  { "limit cpus 1", "t.policy:1:7: error: unknown limit 'cpus': expected cpu, as, fsize, nproc, nofile, stack, core, memlock, sigpending, timeout or ptys (did you mean 'cpu'?)\n" },
  { "limit cpu", "t.policy:1:10: error: expected a value after 'cpu'\n" },
  { "limit cpu 1500ms", "t.policy:1:11: error: the cpu limit counts whole seconds, got '1500ms'\n" },
  { "limit cpu 10x", "t.policy:1:11: error: unknown duration unit 'x' in '10x' (durations take ms, s, m or h)\n" },
  { "limit cpu soon", "t.policy:1:11: error: expected a duration such as 60s, 500ms or 5m, got 'soon'\n" },
  { "limit timeout 99999999999999999h", "t.policy:1:15: error: duration '99999999999999999h' is too large\n" },
  { "limit nofile 10:5", "t.policy:1:14: error: soft limit '10:5' is above the hard limit\n" },
  { "limit nproc 10:x", "t.policy:1:16: error: expected a number, got 'x'\n" },
  { "limit as 1G 2G", "t.policy:1:13: error: unexpected '2G': expected the end of the limit directive\n" },
  { "limit ptys", "t.policy:1:11: error: expected a number of ptys after 'ptys'\n" },
  { "limit ptys unlimited", "t.policy:1:12: error: limit ptys takes a number, 0 to 1048576 (0: no pty at all)\n" },
  { "limit ptys 1048577", "t.policy:1:12: error: number '1048577' is too large (at most 1048576)\n" },
  { "limit ptys 4:8", "t.policy:1:12: error: expected a number, got '4:8'\n" },
  { "limit ptys -1", "t.policy:1:12: error: expected a number, got '-1'\n" },
  { "limit ptys 4 8", "t.policy:1:14: error: unexpected '8': expected the end of the limit directive\n" },
  { "limit pty 4", "t.policy:1:7: error: unknown limit 'pty': expected cpu, as, fsize, nproc, nofile, stack, core, memlock, sigpending, timeout or ptys (did you mean 'ptys'?)\n" },
  /* cgroup */
  { "cgroup memory 1K", "t.policy:1:15: error: cgroup memory 1K is too small to start the sandbox: the minimum is 1M\n" },
  { "cgroup memory 64K", "t.policy:1:15: error: cgroup memory 64K is too small to start the sandbox: the minimum is 1M\n" },
  { "cgroup memroy 1G", "t.policy:1:8: error: unknown cgroup setting 'memroy': expected memory, pids, cpu, required, best-effort or off (did you mean 'memory'?)\n" },
  { "cgroup memory 0", "t.policy:1:15: error: cgroup memory must be above 0 (say 'unlimited' for no limit)\n" },
  { "cgroup pids 0", "t.policy:1:13: error: cgroup pids must be above 0 (say 'unlimited' for no limit)\n" },
  { "cgroup cpu 0.0001", "t.policy:1:12: error: cpu share '0.0001' is finer than 0.001 CPU\n" },
  { "cgroup cpu 5000", "t.policy:1:12: error: cpu share '5000' is too large (at most 4096 CPUs)\n" },
  { "cgroup cpu 0%", "t.policy:1:12: error: cpu share must be above 0 (leave it out for no limit)\n" },
  { "cgroup cpu half", "t.policy:1:12: error: expected CPUs such as 0.5, 2 or 150%, got 'half'\n" },
  { "cgroup off\ncgroup memory 1G", "t.policy:1:1: error: cgroup limits are set but 'cgroup off' disables them\n" },
  /* env, exec */
  { "env sett A=1", "t.policy:1:5: error: unknown env action 'sett': expected keep, set or unset (did you mean 'set'?)\n" },
  { "env set", "t.policy:1:8: error: expected NAME=VALUE after 'set'\n" },
  { "env set A", "t.policy:1:9: error: expected NAME=VALUE, got 'A'\n" },
  { "env keep 1A", "t.policy:1:10: error: invalid variable name '1A': expected a variable name (letters, digits and '_', not starting with a digit)\n" },
  { "exec bin/sh", "t.policy:1:6: error: invalid executable path 'bin/sh': expected an absolute path\n" },
  { "exec", "t.policy:1:5: error: expected paths that may be executed after 'exec'\n" },
  /* landlock */
  { "landlock requird", "t.policy:1:10: error: unknown landlock setting 'requird': expected off, best-effort, required, scope, tcp-bind or tcp-connect (did you mean 'required'?)\n" },
  { "landlock scope signals", "t.policy:1:16: error: unknown landlock scope 'signals': expected abstract-unix, signal or none (did you mean 'signal'?)\n" },
  { "landlock tcp-bind 70000", "t.policy:1:19: error: number '70000' is too large (at most 65535)\n" },
  { "landlock tcp-connect", "t.policy:1:21: error: expected port numbers after 'tcp-connect'\n" },
  /* seccomp */
  { "seccomp", "t.policy:1:8: error: expected an action, default, foreign-abi, on or off after 'seccomp'\n" },
  { "seccomp alow read", "t.policy:1:9: error: unknown seccomp action 'alow': expected allow, errno, deny, kill, kill-process, kill-thread, trap, log or notify, or default, foreign-abi, on or off (did you mean 'allow'?)\n" },
  { "seccomp default alow", "t.policy:1:17: error: unknown seccomp action 'alow': expected allow, errno, deny, kill, kill-process, kill-thread, trap, log or notify (did you mean 'allow'?)\n" },
  { "seccomp allow", "t.policy:1:14: error: expected syscall names or @groups after 'allow'\n" },
  { "seccomp allow if arg0 == 1", "t.policy:1:15: error: expected syscall names or @groups after 'allow'\n" },
  { "seccomp allow ptrac", "t.policy:1:15: error: unknown syscall 'ptrac' (did you mean 'ptrace'?)\n" },
  { "seccomp allow @basic-iox", "t.policy:1:15: error: unknown syscall group '@basic-iox' (did you mean '@basic-io'?)\n" },
  { "seccomp errno EPERMM ioctl", "t.policy:1:15: error: unknown errno name 'EPERMM': expected a name such as EPERM or ENOSYS (did you mean 'EPERM'?)\n" },
  { "seccomp errno 5000 ioctl", "t.policy:1:15: error: expected an errno number from 0 to 4095, got '5000'\n" },
  { "seccomp errno", "t.policy:1:14: error: expected an errno name or number after 'errno'\n" },
  { "seccomp on off", "t.policy:1:12: error: unexpected 'off': expected the end of the seccomp directive\n" },
  { "seccomp allow socket if", "t.policy:1:24: error: expected a condition such as 'arg0 == AF_UNIX' after 'if'\n" },
  { "seccomp allow socket if arg7 == 1", "t.policy:1:25: error: expected an argument arg0 to arg5, got 'arg7'\n" },
  { "seccomp allow socket if arg0 = 1", "t.policy:1:30: error: expected a comparison (==, !=, <, <=, >, >=) or '&', got '=' (write '==' to compare)\n" },
  { "seccomp allow socket if arg0 == AF_UNIXX", "t.policy:1:33: error: unknown constant 'AF_UNIXX' (did you mean 'AF_UNIX'?)\n" },
  { "seccomp allow socket if arg0 ==", "t.policy:1:32: error: expected a number or a constant such as AF_UNIX, got 'the end of the line'\n" },
  { "seccomp allow socket if arg0==99999999999999999999", "t.policy:1:31: error: number '99999999999999999999' does not fit in 64 bits\n" },
  { "seccomp allow socket if arg0 == 0x1g", "t.policy:1:33: error: invalid number '0x1g'\n" },
  { "seccomp allow ioctl if arg1 & 0xff != 1", "t.policy:1:36: error: a masked comparison 'argN & MASK' takes '==' only, got '!='\n" },
  { "seccomp allow ioctl if arg1 & 0xff == 0x100", "t.policy:1:39: error: value has bits outside the mask, so the condition can never hold\n" },
  { "seccomp allow socket if arg0 == 1 or arg1 == 2", "t.policy:1:35: error: expected 'and' or the end of the line after a condition, got 'or'\n" },
  { "seccomp allow socket if arg0 == \"1\"", "t.policy:1:33: error: expected a number or a constant such as AF_UNIX, got '\"1\"'\n" },
  { "seccomp allow socket if arg0 == 1 and arg0 == 1 and arg0 == 1 and arg0 == 1 and arg0 == 1 and arg0 == 1 and arg0 == 1",
    "t.policy:1:109: error: too many conditions (at most 6)\n" },
  /* session */
  { "session", "t.policy:1:8: error: expected template after 'session'\n" },
  { "session templat on", "t.policy:1:9: error: unknown session setting 'templat': expected template (did you mean 'template'?)\n" },
  { "session template", "t.policy:1:17: error: expected auto, on or off after 'template'\n" },
  { "session template of", "t.policy:1:18: error: unknown session template mode 'of': expected auto, on or off (did you mean 'on'?)\n" },
  { "session template \"on\"", "t.policy:1:18: error: unknown session template mode 'on': expected auto, on or off\n" },
  { "session template on off", "t.policy:1:21: error: unexpected 'off': expected the end of the session directive\n" },
  /* consistency, blamed on the directive responsible */
  { "namespaces user pid mount", "t.policy:1:1: error: network 'none' needs the net namespace (add 'net' to namespaces, or say 'network host')\n" },
  { "namespaces all\nnetwork host", "t.policy:2:1: error: network 'host' cannot be combined with the net namespace (remove 'net' from namespaces)\n" },
  { "hostname box\nnamespaces user pid mount net", "t.policy:1:1: error: hostname needs the uts namespace (add 'uts' to namespaces)\n" },
  { "namespaces user pid net\nmount tmpfs /tmp", "t.policy:1:1: error: mounts need the mount namespace (add 'mount' to namespaces)\n" },
};

Test (policy_diag, every_diagnostic_has_its_position_and_wording)
{
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      char *text = NULL;
      cr_assert_geq (asprintf (&text, "%s\nseccomp off\n", cases[i].text), 0);
      char *diags = NULL;
      struct securer_policy *p = load_text ("t.policy", text, &diags);
      cr_expect_null (p, "case %zu accepted: %s", i, cases[i].text);
      cr_expect_str_eq (diags, cases[i].expected, "case %zu: %s", i, cases[i].text);
      securer_policy_free (p);
      free (diags);
      free (text);
    }
}

Test (policy_diag, all_errors_of_a_file_are_reported)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", "moutn\nnetwork x\nseccomp alow read\nseccomp off\n", &diags);
  cr_assert_null (p);
  cr_assert_str_eq (diags,
                    "t.policy:1:1: error: unknown directive 'moutn' (did you mean 'mount'?)\n"
                    "t.policy:2:9: error: unknown network mode 'x': expected none, loopback, host, allow, deny or limit\n"
                    "t.policy:3:9: error: unknown seccomp action 'alow': expected allow, errno, deny, kill, "
                    "kill-process, kill-thread, trap, log or notify, or default, foreign-abi, on or off "
                    "(did you mean 'allow'?)\n");
  free (diags);
}

Test (policy_diag, load_error_carries_the_first_diagnostic)
{
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  const char *text = "seccomp off\nnetwork x\nmount y\n";
  cr_assert_eq (securer_policy_load_string ("t.policy", text, strlen (text), &p, NULL, &err), -1);
  cr_assert_str_eq (securer_error_message (err),
                    "t.policy:2:9: unknown network mode 'x': expected none, loopback, host, allow, deny or limit");
  securer_error_free (&err);
}

Test (policy_diag, continuation_lines_keep_positions)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", "seccomp off\nmount tmpfs /tmp \\\n   size=1M \\\n  bad\n", &diags);
  cr_assert_null (p);
  cr_assert_str_eq (diags, "t.policy:4:3: error: unexpected 'bad' in mount tmpfs: expected size=SIZE, mode=MODE, exec or noexec\n");
  free (diags);
}

Test (policy_diag, nul_byte_and_long_lines)
{
  struct securer_diags d = { NULL, 0, 0 };
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  const char text[] = "seccomp off\nhostname a\0b\n";
  cr_assert_eq (securer_policy_load_string ("t.policy", text, sizeof text - 1, &p, &d, &err), -1);
  char *s = diags_text (&d);
  cr_assert_str_eq (s, "t.policy:2:11: error: NUL byte in policy text\n");
  free (s);
  securer_diags_free (&d);
  securer_error_free (&err);

  /* One word longer than a line may be. */
  size_t n = 70000;
  char *big = malloc (n + 32);
  strcpy (big, "seccomp off\nhostname ");
  memset (big + strlen (big), 'a', n);
  strcpy (big + 21 + n, "\n");
  char *diags = NULL;
  p = load_text ("t.policy", big, &diags);
  cr_assert_null (p);
  cr_assert_str_eq (diags, "t.policy:2:10: error: word too long (more than 65536 bytes)\n");
  free (diags);

  /* A line of many short words. */
  strcpy (big, "seccomp off\nmask");
  size_t len = strlen (big);
  for (int i = 0; i < 1100; i++)
    len += (size_t) sprintf (big + len, " /");
  p = load_text ("t.policy", big, &diags);
  cr_assert_null (p);
  cr_assert_str_eq (diags, "t.policy:2:2052: error: too many words on one line (more than 1024)\n");
  free (diags);

  /* A logical line made long by continuations. */
  char *cont = malloc (200000);
  strcpy (cont, "seccomp off\nmask");
  len = strlen (cont);
  for (int i = 0; i < 900; i++)
    len += (size_t) sprintf (cont + len, " /%070d \\\n", i);
  strcpy (cont + len, "\n");
  p = load_text ("t.policy", cont, &diags);
  cr_assert_null (p);
  cr_assert_str_eq (diags, "t.policy:876:2: error: line too long (more than 65536 bytes)\n");
  free (diags);
  free (cont);
  free (big);
}

Test (policy_diag, warnings_do_not_fail)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", "network none\n", &diags);
  cr_assert_not_null (p);
  cr_assert_str_eq (diags, "t.policy: warning: no seccomp directive: every system call fails with ENOSYS "
                           "(add 'seccomp allow ...' rules, or 'seccomp off' to run without a filter)\n");
  securer_policy_free (p);
  free (diags);
  p = load_text ("t.policy", "seccomp kill ptrace\nseccomp off\n", &diags);
  cr_assert_not_null (p);
  cr_assert_str_eq (diags, "t.policy:2:1: warning: seccomp is off: 1 rule will not be enforced\n");
  securer_policy_free (p);
  free (diags);
}

/* What would only fail at run time, or silently apply one of two lines. */
Test (policy_diag, launch_problems_and_conflicting_lines_are_warned_about)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy",
                                        "seccomp on\n"
                                        "seccomp default errno ENOSYS\n"
                                        "seccomp allow read\n"
                                        "seccomp kill read\n"
                                        "network loopback\n"
                                        "network none\n"
                                        "mount ro /usr\n"
                                        "mount rw /usr\n"
                                        "limit as 1\n",
                                        &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_str_eq (diags,
                    "t.policy:4:14: warning: seccomp kill-process read replaces seccomp allow read at t.policy:3:15\n"
                    "t.policy:6:1: warning: network none replaces network loopback at t.policy:5:1\n"
                    "t.policy:8:1: warning: mount rw /usr replaces the mount ro /usr at t.policy:7:1\n"
                    "t.policy:9:10: warning: limit as 1 is too small to start a dynamically linked program: "
                    "the minimum is 4M\n");
  securer_policy_free (p);
  free (diags);

  /* an exception after a group, the same line twice, limits that start: no warning */
  p = load_text ("t.policy",
                 "seccomp on\nseccomp allow @basic-io\nseccomp kill read\nseccomp kill read\n"
                 "network none\nnetwork none\nlimit as 4M\ncgroup memory 1M\n",
                 &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_str_eq (diags, "");
  securer_policy_free (p);
  free (diags);
}

Test (policy_diag, too_many_seccomp_rules)
{
  /* Conditional rules accumulate; there is a ceiling. */
  char **members = NULL;
  size_t n = 0;
  securer_err_t err = NULL;
  cr_assert_eq (securer_group_load ("basic-io", &members, &n, &err), 0);
  securer_strv_free (members);
  size_t lines = 65536 / n + 2;
  char *text = malloc (lines * 40);
  size_t len = 0;
  for (size_t i = 0; i < lines; i++)
    len += (size_t) sprintf (text + len, "seccomp allow @basic-io if arg0 == %zu\n", i);
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", text, &diags);
  cr_assert_null (p);
  char *expected = NULL;
  cr_assert_geq (asprintf (&expected, "t.policy:%zu:15: error: too many seccomp rules (more than 65536)\n",
                           65536 / n + 1), 0);
  cr_assert_str_eq (diags, expected);
  free (expected);
  free (diags);
  free (text);
}

/* ---- includes ------------------------------------------------------------- */

Test (policy_include, relative_to_the_including_file)
{
  char *path = src_path ("tests/unit/data/policy/include-ok.policy");
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_str_eq (diags, "");
  cr_assert_eq (p->n_includes, 3);
  cr_assert_str_eq (p->includes[0], path);
  cr_assert (strstr (p->includes[1], "/sub/inner.policy") != NULL);
  cr_assert (strstr (p->includes[2], "/sub/../common.policy") != NULL);
  cr_assert_str_eq (p->hostname, "outer");   /* set after the include: wins */
  cr_assert_eq (p->limits.rlimit[SECURER_RLIMIT_NOFILE].soft, 32);  /* from sub/inner */
  securer_policy_free (p);
  free (diags);
  free (path);
}

Test (policy_include, direct_cycle)
{
  char *path = src_path ("tests/unit/data/policy/cycle-self.policy");
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  cr_assert_null (p);
  char *expected = NULL;
  cr_assert_geq (asprintf (&expected, "%s:2:9: error: include cycle: %s -> %s\n", path, path, path), 0);
  cr_assert_str_eq (diags, expected);
  free (expected);
  free (diags);
  free (path);
}

Test (policy_include, indirect_cycle)
{
  char *a = src_path ("tests/unit/data/policy/cycle-a.policy");
  char *b = src_path ("tests/unit/data/policy/cycle-b.policy");
  char *diags = NULL;
  struct securer_policy *p = load_path (a, &diags);
  cr_assert_null (p);
  char *expected = NULL;
  cr_assert_geq (asprintf (&expected, "%s:1:9: error: include cycle: %s -> %s -> %s\n", b, a, b, a), 0);
  cr_assert_str_eq (diags, expected);
  free (expected);
  free (diags);
  free (a);
  free (b);
}

Test (policy_include, missing_file_and_json_and_empty)
{
  char *path = src_path ("tests/unit/data/policy/include-bad.policy");
  char *dir = src_path ("tests/unit/data/policy");
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  cr_assert_null (p);
  char *expected = NULL;
  /* Not next to the file, so every data directory was searched too. */
  char *searched = NULL;
  cr_assert_geq (asprintf (&searched, "%s/missing.policy", dir), 0);
  for (const char *const *d = securer_data_dirs (); *d != NULL; d++)
    {
      char *more = NULL;
      cr_assert_geq (asprintf (&more, "%s, %s/policies/missing.policy", searched, *d), 0);
      free (searched);
      searched = more;
    }
  cr_assert_geq (asprintf (&expected,
                           "%s:2:9: error: cannot include 'missing.policy': not found (searched %s)\n"
                           "%s:3:9: error: cannot include 'resolved.json': it is a JSON policy; only policy text can be included\n"
                           "%s:4:9: error: expected a file name to include, got an empty string\n"
                           "%s:5:25: error: unexpected 'x': expected the end of the include directive\n"
                           "%s:6:8: error: expected a file name in quotes after 'include'\n",
                           path, searched, path, path, path, path), 0);
  cr_assert_str_eq (diags, expected);
  free (searched);
  free (expected);
  free (diags);
  free (dir);
  free (path);
}

/* The worked example of docs/policy.md, saved anywhere, finds the shipped
 * base/ pieces through the data directories. */
static char *
worked_example (void)
{
  char *doc = src_path ("docs/policy.md");
  FILE *f = fopen (doc, "r");
  cr_assert_not_null (f, "%s", doc);
  char *text = NULL;
  size_t cap = 0;
  ssize_t n = getdelim (&text, &cap, '\0', f);
  fclose (f);
  free (doc);
  cr_assert_gt (n, 0);
  const char *start = strstr (text, "## A worked example\n\n```\n");
  cr_assert_not_null (start);
  start = strchr (start, '`') + 4;
  const char *end = strstr (start, "\n```\n");
  cr_assert_not_null (end);
  char *example = strndup (start, (size_t) (end - start) + 1);
  free (text);
  return example;
}

static char *
write_temp_policy (char *dir_template, const char *rel, const char *text)
{
  char *path = NULL;
  cr_assert_geq (asprintf (&path, "%s/%s", dir_template, rel), 0);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f, "%s", path);
  fputs (text, f);
  fclose (f);
  return path;
}

Test (policy_include, shipped_pieces_from_anywhere)
{
  char tmp[] = "/tmp/securer-include-XXXXXX";
  cr_assert_not_null (mkdtemp (tmp));
  char *example = worked_example ();
  cr_assert (strstr (example, "include \"base/isolation.policy\"") != NULL, "%s", example);
  char *path = write_temp_policy (tmp, "my.policy", example);
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  unlink (path);
  rmdir (tmp);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_str_eq (diags, "");
  /* Each piece was read from a data directory, the first that has it. */
  char *shipped = NULL;
  cr_assert_geq (asprintf (&shipped, "%s/policies/base/isolation.policy", securer_data_dirs ()[0]), 0);
  bool found = false;
  for (size_t i = 0; i < p->n_includes; i++)
    found |= strcmp (p->includes[i], shipped) == 0;
  cr_assert (found, "%s not among the %zu files read", shipped, p->n_includes);
  cr_assert_eq (p->network, SECURER_NET_NONE);
  cr_assert_eq (p->landlock.mode, SECURER_ENFORCE_REQUIRED);
  cr_assert_gt (p->seccomp.n_rules, 100);
  cr_assert_eq (p->limits.rlimit[SECURER_RLIMIT_NOFILE].soft, 256);
  securer_policy_free (p);
  free (shipped);
  free (diags);
  free (path);
  free (example);
}

Test (policy_include, a_file_next_to_the_policy_comes_first)
{
  char tmp[] = "/tmp/securer-include-XXXXXX";
  cr_assert_not_null (mkdtemp (tmp));
  char *sub = NULL;
  cr_assert_geq (asprintf (&sub, "%s/base", tmp), 0);
  cr_assert_eq (mkdir (sub, 0755), 0);
  char *own = write_temp_policy (tmp, "base/isolation.policy", "hostname own\n");
  char *path = write_temp_policy (tmp, "my.policy", "include \"base/isolation.policy\"\nseccomp off\n");
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  unlink (own);
  unlink (path);
  rmdir (sub);
  rmdir (tmp);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_str_eq (p->hostname, "own");
  cr_assert_eq (p->n_includes, 2);
  cr_assert_str_eq (p->includes[1], own);
  securer_policy_free (p);
  free (diags);
  free (path);
  free (own);
  free (sub);
}

/* A bare name is the shipped policy of that name, as for --policy; so an
 * r.policy of one's own can build on the shipped r without a cycle. */
Test (policy_include, a_bare_name_is_a_shipped_policy)
{
  char tmp[] = "/tmp/securer-include-XXXXXX";
  cr_assert_not_null (mkdtemp (tmp));
  char *path = write_temp_policy (tmp, "r.policy", "include \"r\"\nlimit cpu 5s\n");
  char *bad = write_temp_policy (tmp, "bad.policy", "include \"no-such-policy\"\n");
  char *diags = NULL, *bad_diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  struct securer_policy *q = load_path (bad, &bad_diags);
  unlink (path);
  unlink (bad);
  rmdir (tmp);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_str_eq (diags, "");
  char *shipped = NULL;
  cr_assert_geq (asprintf (&shipped, "%s/policies/r.policy", securer_data_dirs ()[0]), 0);
  cr_assert_str_eq (p->includes[1], shipped);
  cr_assert_eq (p->limits.rlimit[SECURER_RLIMIT_CPU].soft, 5);
  cr_assert_eq (p->network, SECURER_NET_NONE);
  cr_assert_gt (p->seccomp.n_rules, 100);
  cr_assert_null (q);
  cr_assert (strstr (bad_diags, "/policies/no-such-policy.policy") != NULL, "%s", bad_diags);
  securer_policy_free (p);
  free (shipped);
  free (diags);
  free (bad_diags);
  free (path);
  free (bad);
}

Test (policy_include, nesting_is_bounded)
{
  char *path = src_path ("tests/unit/data/policy/deep/d0.policy");
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  cr_assert_null (p);
  cr_assert (strstr (diags, "error: includes nested too deeply (more than 16 levels)\n") != NULL, "%s", diags);
  cr_assert (strstr (diags, "deep/d15.policy:1:9: ") != NULL, "%s", diags);
  free (diags);
  free (path);
}

/* ---- meaning ----------------------------------------------------------------- */

static const struct securer_syscall_rule *
rule_at (const struct securer_policy *p, const char *name, size_t nth)
{
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    if (strcmp (p->seccomp.rules[i].name, name) == 0 && nth-- == 0)
      return &p->seccomp.rules[i];
  return NULL;
}

static size_t
rules_for (const struct securer_policy *p, const char *name)
{
  size_t n = 0;
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    n += strcmp (p->seccomp.rules[i].name, name) == 0;
  return n;
}

Test (policy_seccomp, groups_expand_to_one_rule_per_syscall)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", "seccomp allow @process\n", &diags);
  cr_assert_not_null (p, "%s", diags);
  const struct securer_syscall_rule *r = rule_at (p, "ptrace", 0);
  cr_assert_null (r);  /* not in @process */
  r = rule_at (p, "clone", 0);
  cr_assert_not_null (r);
  cr_assert_str_eq (r->group, "@process");
  cr_assert_eq (r->action.type, SECURER_ACT_ALLOW);
  cr_assert_eq (r->loc.line, 1);
  cr_assert_eq (r->loc.col, 15);
  cr_assert_not_null (rule_at (p, "wait4", 0));
  securer_policy_free (p);
  free (diags);
}

Test (policy_seccomp, unconditional_rule_replaces_earlier_rules)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy",
                                        "seccomp allow @process\n"
                                        "seccomp allow socket if arg0 == AF_UNIX\n"
                                        "seccomp kill clone\n"
                                        "seccomp errno EPERM socket\n",
                                        &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (rules_for (p, "clone"), 1);
  const struct securer_syscall_rule *r = rule_at (p, "clone", 0);
  cr_assert_eq (r->action.type, SECURER_ACT_KILL_PROCESS);
  cr_assert_null (r->group);
  cr_assert_eq (r->loc.line, 3);
  /* the conditional allow was replaced too */
  cr_assert_eq (rules_for (p, "socket"), 1);
  r = rule_at (p, "socket", 0);
  cr_assert_eq (r->action.type, SECURER_ACT_ERRNO);
  cr_assert_eq (r->action.errnum, EPERM);
  cr_assert_eq (r->n_conds, 0);
  securer_policy_free (p);
  free (diags);
}

Test (policy_seccomp, conditional_rules_accumulate_in_order)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy",
                                        "seccomp errno EAFNOSUPPORT socket\n"
                                        "seccomp allow socket if arg0 == AF_UNIX\n"
                                        "seccomp allow socket if arg0 == AF_INET and arg1 != 3\n"
                                        "seccomp errno EPERM ioctl if arg1 & 0xffffffff == TIOCSTI\n"
                                        "seccomp allow clone if arg0 & CLONE_NEWUSER|CLONE_NEWNS == 0\n"
                                        "seccomp log getpid if arg0 >= 1 and arg1 > 2 and arg2 <= 3 and arg3 < 4\n",
                                        &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (rules_for (p, "socket"), 3);
  cr_assert_eq (rule_at (p, "socket", 0)->n_conds, 0);
  const struct securer_syscall_rule *r = rule_at (p, "socket", 1);
  cr_assert_eq (r->n_conds, 1);
  cr_assert_eq (r->conds[0].arg, 0);
  cr_assert_eq (r->conds[0].op, SECURER_CMP_EQ);
  cr_assert_eq (r->conds[0].value, 1);  /* AF_UNIX */
  r = rule_at (p, "socket", 2);
  cr_assert_eq (r->n_conds, 2);
  cr_assert_eq (r->conds[0].value, 2);  /* AF_INET */
  cr_assert_eq (r->conds[1].arg, 1);
  cr_assert_eq (r->conds[1].op, SECURER_CMP_NE);
  cr_assert_eq (r->conds[1].value, 3);
  r = rule_at (p, "ioctl", 0);
  cr_assert_eq (r->conds[0].op, SECURER_CMP_MASKED_EQ);
  cr_assert_eq (r->conds[0].mask, 0xffffffffu);
  cr_assert_eq (r->conds[0].value, 0x5412);  /* TIOCSTI */
  r = rule_at (p, "clone", 0);
  cr_assert_eq (r->conds[0].mask, 0x10000000u | 0x00020000u);
  cr_assert_eq (r->conds[0].value, 0);
  r = rule_at (p, "getpid", 0);
  cr_assert_eq (r->action.type, SECURER_ACT_LOG);
  cr_assert_eq (r->n_conds, 4);
  cr_assert_eq (r->conds[0].op, SECURER_CMP_GE);
  cr_assert_eq (r->conds[1].op, SECURER_CMP_GT);
  cr_assert_eq (r->conds[2].op, SECURER_CMP_LE);
  cr_assert_eq (r->conds[3].op, SECURER_CMP_LT);
  securer_policy_free (p);
  free (diags);
}

Test (policy_seccomp, rules_equal_to_the_default_are_dropped)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy",
                                        "seccomp allow read write\n"
                                        "seccomp errno ENOSYS write\n"
                                        "seccomp errno ENOSYS ioctl if arg1 == 1\n",
                                        &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (rules_for (p, "read"), 1);
  cr_assert_eq (rules_for (p, "write"), 0);   /* same as the default: dropped */
  cr_assert_eq (rules_for (p, "ioctl"), 1);   /* conditional: kept */
  securer_policy_free (p);
  free (diags);
  /* The default is the final one, wherever it is set. */
  p = load_text ("t.policy", "seccomp kill ptrace\nseccomp default kill\n", &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (p->seccomp.n_rules, 0);
  cr_assert_eq (p->seccomp.default_action.type, SECURER_ACT_KILL_PROCESS);
  securer_policy_free (p);
  free (diags);
}

Test (policy_seccomp, actions_and_errno_names_and_numbers)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy",
                                        "seccomp default kill-thread\n"
                                        "seccomp foreign-abi errno 1\n"
                                        "seccomp errno EACCES read\n"
                                        "seccomp errno 4095 write\n"
                                        "seccomp deny open\n"
                                        "seccomp kill ptrace\n"
                                        "seccomp kill-process bpf\n"
                                        "seccomp trap getpid\n"
                                        "seccomp notify getppid\n"
                                        "seccomp allow close\n",
                                        &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (p->seccomp.default_action.type, SECURER_ACT_KILL_THREAD);
  cr_assert_eq (p->seccomp.foreign_arch.type, SECURER_ACT_ERRNO);
  cr_assert_eq (p->seccomp.foreign_arch.errnum, 1);
  cr_assert_eq (rule_at (p, "read", 0)->action.errnum, EACCES);
  cr_assert_eq (rule_at (p, "write", 0)->action.errnum, 4095);
  cr_assert_eq (rule_at (p, "open", 0)->action.type, SECURER_ACT_ERRNO);
  cr_assert_eq (rule_at (p, "open", 0)->action.errnum, EPERM);
  cr_assert_eq (rule_at (p, "ptrace", 0)->action.type, SECURER_ACT_KILL_PROCESS);
  cr_assert_eq (rule_at (p, "bpf", 0)->action.type, SECURER_ACT_KILL_PROCESS);
  cr_assert_eq (rule_at (p, "getpid", 0)->action.type, SECURER_ACT_TRAP);
  cr_assert_eq (rule_at (p, "getppid", 0)->action.type, SECURER_ACT_NOTIFY);
  cr_assert_eq (rule_at (p, "close", 0)->action.type, SECURER_ACT_ALLOW);
  securer_policy_free (p);
  free (diags);
}

Test (policy_meaning, defaults_are_explicit)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("dir/name.policy", "seccomp off\n", &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_str_eq (p->name, "name");
  cr_assert_str_eq (p->path, "dir/name.policy");
  cr_assert_eq (p->namespaces, SECURER_NS_ALL);
  cr_assert_eq (p->network, SECURER_NET_NONE);
  cr_assert_str_eq (p->hostname, "sandbox");   /* uts is in "all" */
  cr_assert_eq (p->uid, 1000);
  cr_assert_eq (p->gid, 1000);
  cr_assert_eq (p->host_uid, -1);
  cr_assert_eq (p->host_gid, -1);
  cr_assert_str_eq (p->cwd, "/");
  cr_assert_eq (p->n_mounts, 0);
  cr_assert (p->limits.rlimit[SECURER_RLIMIT_CORE].set);
  cr_assert_eq (p->limits.rlimit[SECURER_RLIMIT_CORE].hard, 0);
  cr_assert_not (p->limits.rlimit[SECURER_RLIMIT_CPU].set);
  cr_assert_eq (p->limits.cgroup, SECURER_ENFORCE_OFF);
  cr_assert_not (p->exec_restricted);
  cr_assert_eq (p->landlock.mode, SECURER_ENFORCE_BEST_EFFORT);
  cr_assert (p->landlock.scope_abstract_unix);
  cr_assert (p->landlock.scope_signal);
  cr_assert_not (p->seccomp.enabled);
  cr_assert_eq (p->seccomp.default_action.type, SECURER_ACT_ERRNO);
  cr_assert_eq (p->seccomp.default_action.errnum, ENOSYS);
  cr_assert_eq (p->seccomp.foreign_arch.type, SECURER_ACT_KILL_PROCESS);
  securer_policy_free (p);
  free (diags);
}

Test (policy_meaning, sizes_durations_and_limits)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy",
                                        "seccomp off\n"
                                        "limit cpu 2m\n"
                                        "limit as 512M\n"
                                        "limit fsize 50MiB\n"
                                        "limit stack 8K:unlimited\n"
                                        "limit memlock 1G\n"
                                        "limit core 3\n"
                                        "limit nproc 50\n"
                                        "limit nofile 256:1024\n"
                                        "limit sigpending 128:256\n"
                                        "limit timeout 1500ms\n"
                                        "limit ptys 4\n"
                                        "cgroup memory 2GiB\n"
                                        "cgroup pids 64\n"
                                        "cgroup cpu 1.5\n"
                                        "mount tmpfs /tmp size=1T\n"
                                        "mount tmpfs /big size=7B mode=700 exec\n",
                                        &diags);
  cr_assert_not_null (p, "%s", diags);
  const struct securer_limits *l = &p->limits;
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_CPU].soft, 120);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_AS].soft, 512ull << 20);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_FSIZE].hard, 50ull << 20);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_STACK].soft, 8192);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_STACK].hard, UINT64_MAX);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_MEMLOCK].soft, 1ull << 30);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_CORE].soft, 3);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_NPROC].soft, 50);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_NOFILE].soft, 256);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_NOFILE].hard, 1024);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_SIGPENDING].soft, 128);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_SIGPENDING].hard, 256);
  cr_assert_eq (l->timeout_ms, 1500);
  cr_assert (l->ptys_set);
  cr_assert_eq (l->ptys, 4);
  cr_assert_eq (securer_policy_ptys (p), 4);
  cr_assert_eq (l->cgroup_memory, 2ull << 30);
  cr_assert_eq (l->cgroup_pids, 64);
  cr_assert_eq (l->cgroup_cpu_millis, 1500);
  cr_assert_eq (l->cgroup, SECURER_ENFORCE_REQUIRED);   /* limits given, mode not: required */
  cr_assert_eq (p->mounts[0].size, 1ull << 40);
  cr_assert_eq (p->mounts[0].mode, 01777);            /* /tmp default */
  cr_assert (p->mounts[0].noexec);
  cr_assert_eq (p->mounts[1].size, 7);
  cr_assert_eq (p->mounts[1].mode, 0700);
  cr_assert_not (p->mounts[1].noexec);
  securer_policy_free (p);
  free (diags);
}

/* Unset: the default cap; 0 is a value of its own (no pty at all), and
 * the last line wins, as for every limit. */
Test (policy_meaning, ptys_default_zero_and_the_last_line)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", "seccomp off\n", &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_not (p->limits.ptys_set);
  cr_assert_eq (securer_policy_ptys (p), SECURER_PTYS_DEFAULT);
  securer_policy_free (p);
  free (diags);
  p = load_text ("t.policy", "seccomp off\nlimit ptys 0\n", &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert (p->limits.ptys_set);
  cr_assert_eq (securer_policy_ptys (p), 0);
  securer_policy_free (p);
  free (diags);
  p = load_text ("t.policy", "seccomp off\nlimit ptys 0\nlimit ptys 1048576\n", &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (securer_policy_ptys (p), SECURER_PTYS_MAX);
  securer_policy_free (p);
  free (diags);
}

Test (policy_meaning, mounts_env_exec_landlock)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy",
                                        "seccomp off\n"
                                        "namespaces user mount pid uts ipc\n"
                                        "network host\n"
                                        "hostname sandbox\n"
                                        "uid 0 host=1234\n"
                                        "gid 5\n"
                                        "cwd /work\n"
                                        "mount ro /usr\n"
                                        "mount ro? /opt/x /x noexec\n"
                                        "mount rw /srv/data /data\n"
                                        "mount tmpfs /tmp size=64M\n"
                                        "mount tmpfs /tmp size=128M  # replaces the earlier /tmp in place\n"
                                        "mount proc\n"
                                        "mount dev /dev\n"
                                        "mount dir /work mode=0700\n"
                                        "mount symlink /bin -> usr/bin\n"
                                        "mask /proc/kcore /proc/kcore\n"
                                        "env keep LANG TERM LANG\n"
                                        "env set HOME=/tmp R_LIBS_USER= \"MSG=a b\"\n"
                                        "env set HOME=/work\n"
                                        "env keep DROPME\n"
                                        "env unset DROPME\n"
                                        "exec /usr/bin/R /lib64/ld-linux-x86-64.so.2\n"
                                        "landlock required\n"
                                        "landlock scope none\n"
                                        "landlock tcp-bind 8080\n"
                                        "landlock tcp-connect 443 80 443\n",
                                        &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (p->namespaces, SECURER_NS_USER | SECURER_NS_MOUNT | SECURER_NS_PID | SECURER_NS_UTS | SECURER_NS_IPC);
  cr_assert_eq (p->network, SECURER_NET_HOST);
  cr_assert_str_eq (p->hostname, "sandbox");
  cr_assert_eq (p->uid, 0);
  cr_assert_eq (p->host_uid, 1234);
  cr_assert_eq (p->gid, 5);
  cr_assert_eq (p->host_gid, -1);
  cr_assert_str_eq (p->cwd, "/work");
  cr_assert_eq (p->n_mounts, 8);
  cr_assert_eq (p->mounts[0].type, SECURER_MOUNT_RO);
  cr_assert_str_eq (p->mounts[0].source, "/usr");
  cr_assert_str_eq (p->mounts[0].dest, "/usr");
  cr_assert_not (p->mounts[0].noexec);
  cr_assert (p->mounts[1].optional);
  cr_assert_str_eq (p->mounts[1].dest, "/x");
  cr_assert (p->mounts[1].noexec);
  cr_assert_eq (p->mounts[2].type, SECURER_MOUNT_RW);
  cr_assert (p->mounts[2].noexec);
  cr_assert_eq (p->mounts[3].type, SECURER_MOUNT_TMPFS);
  cr_assert_eq (p->mounts[3].size, 128ull << 20);
  cr_assert_eq (p->mounts[3].loc.line, 12);
  cr_assert_eq (p->mounts[4].type, SECURER_MOUNT_PROC);
  cr_assert_str_eq (p->mounts[4].dest, "/proc");
  cr_assert_not (p->mounts[4].pid_only);
  cr_assert_eq (p->mounts[5].type, SECURER_MOUNT_DEV);
  cr_assert_eq (p->mounts[6].type, SECURER_MOUNT_DIR);
  cr_assert_eq (p->mounts[6].mode, 0700);
  cr_assert_eq (p->mounts[7].type, SECURER_MOUNT_SYMLINK);
  cr_assert_str_eq (p->mounts[7].source, "usr/bin");
  cr_assert_str_eq (p->mounts[7].dest, "/bin");
  cr_assert_eq (p->n_masks, 1);
  cr_assert_eq (p->n_env_keep, 2);
  cr_assert_str_eq (p->env_keep[1], "TERM");
  cr_assert_eq (p->n_env_set, 3);
  cr_assert_str_eq (p->env_set[0].name, "HOME");
  cr_assert_str_eq (p->env_set[0].value, "/work");
  cr_assert_str_eq (p->env_set[1].value, "");
  cr_assert_str_eq (p->env_set[2].value, "a b");
  cr_assert (p->exec_restricted);
  cr_assert_eq (p->n_exec, 2);
  cr_assert_eq (p->landlock.mode, SECURER_ENFORCE_REQUIRED);
  cr_assert_not (p->landlock.scope_abstract_unix);
  cr_assert_not (p->landlock.scope_signal);
  cr_assert_eq (p->landlock.n_tcp_bind, 1);
  cr_assert_eq (p->landlock.n_tcp_connect, 2);
  securer_policy_free (p);
  free (diags);
}

Test (policy_meaning, network_host_alone_drops_the_net_namespace)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", "seccomp off\nnetwork host\n", &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (p->namespaces, SECURER_NS_ALL & ~(unsigned) SECURER_NS_NET);
  securer_policy_free (p);
  free (diags);
}

/* ---- shipped policies and lookup ------------------------------------------- */

Test (policy_shipped, all_check_clean)
{
  static const char *const files[] = {
    "policies/r.policy", "policies/minimal.policy", "policies/r-server.policy",
  };
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    {
      char *path = src_path (files[i]);
      char *diags = NULL;
      struct securer_policy *p = load_path (path, &diags);
      cr_expect_not_null (p, "%s: %s", files[i], diags);
      cr_expect_str_eq (diags, "", "%s", files[i]);
      securer_policy_free (p);
      free (diags);
      free (path);
    }
}

Test (policy_shipped, r_policy_has_the_reference_limits)
{
  char *path = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_find ("r", &path, &err), 0, "%s", securer_error_message (err));
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  cr_assert_not_null (p, "%s", diags);
  const struct securer_limits *l = &p->limits;
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_CPU].soft, 60);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_AS].soft, 512ull << 20);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_FSIZE].soft, 50ull << 20);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_NPROC].soft, 50);
  cr_assert_eq (l->rlimit[SECURER_RLIMIT_NOFILE].soft, 256);
  cr_assert_eq (l->cgroup_memory, 1ull << 30);
  cr_assert_eq (l->cgroup_pids, 64);
  cr_assert_eq (l->cgroup_cpu_millis, 1000);
  cr_assert_eq (l->cgroup, SECURER_ENFORCE_BEST_EFFORT);
  /* R never needs a pty: none unless a policy asks. */
  cr_assert (l->ptys_set);
  cr_assert_eq (securer_policy_ptys (p), 0);
  cr_assert_str_eq (p->hostname, "sandbox");
  cr_assert_eq (p->network, SECURER_NET_NONE);
  cr_assert_eq (p->seccomp.default_action.type, SECURER_ACT_ERRNO);
  cr_assert_eq (p->seccomp.default_action.errnum, ENOSYS);
  cr_assert_eq (rule_at (p, "ptrace", 0)->action.type, SECURER_ACT_KILL_PROCESS);
  cr_assert_eq (rules_for (p, "ptrace"), 1);
  bool found_tmp = false;
  for (size_t i = 0; i < p->n_mounts; i++)
    if (strcmp (p->mounts[i].dest, "/tmp") == 0)
      found_tmp = p->mounts[i].type == SECURER_MOUNT_TMPFS;
  cr_assert (found_tmp);
  bool r_libs_user_empty = false;
  for (size_t i = 0; i < p->n_env_set; i++)
    if (strcmp (p->env_set[i].name, "R_LIBS_USER") == 0)
      r_libs_user_empty = p->env_set[i].value[0] == '\0';
  cr_assert (r_libs_user_empty);
  securer_policy_free (p);
  free (diags);
  free (path);
}

Test (policy_shipped, r_server_requires_the_cgroup_limits_of_r)
{
  char *path = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_find ("r-server", &path, &err), 0, "%s",
                securer_error_message (err));
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (p->limits.cgroup, SECURER_ENFORCE_REQUIRED);
  cr_assert_eq (p->limits.cgroup_memory, 1ull << 30);
  cr_assert_eq (p->limits.cgroup_pids, 64);
  cr_assert_eq (p->limits.cgroup_cpu_millis, 1000);
  cr_assert_eq (securer_policy_ptys (p), 0);
  securer_policy_free (p);
  free (diags);
  free (path);
}

Test (policy_find, names_and_paths)
{
  char *path = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_find ("minimal", &path, &err), 0);
  cr_assert (strstr (path, "/policies/minimal.policy") != NULL, "%s", path);
  free (path);
  cr_assert_eq (securer_policy_find ("no-such-policy", &path, &err), -1);
  cr_assert_eq (securer_error_errno (err), ENOENT);
  securer_error_free (&err);
  cr_assert_eq (securer_policy_find ("bad name!", &path, &err), -1);
  cr_assert_eq (securer_error_errno (err), EINVAL);
  securer_error_free (&err);
  cr_assert_eq (securer_policy_find ("./nope.policy", &path, &err), -1);
  cr_assert_eq (securer_error_errno (err), ENOENT);
  securer_error_free (&err);
}

/* ---- resource ceilings ---------------------------------------------------- */

/* The formats are the literals of the tables below. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static char *
repeat_lines (const char *head, const char *fmt, int n)
{
  size_t cap = strlen (head) + (size_t) n * 64 + 64;
  char *s = malloc (cap);
  size_t len = (size_t) sprintf (s, "%s", head);
  for (int i = 0; i < n; i++)
    len += (size_t) snprintf (s + len, cap - len, fmt, i);
  return s;
}
#pragma GCC diagnostic pop

Test (policy_limits, lists_are_bounded)
{
  static const struct { const char *fmt; const char *expected; } lists[] = {
    { "mask /m%d\n", "t.policy:4098:6: error: too many masked paths (more than 4096)\n" },
    { "mount dir /d%d\n", "t.policy:4098:1: error: too many mounts (more than 4096)\n" },
    { "exec /e%d\n", "t.policy:4098:6: error: too many exec paths (more than 4096)\n" },
    { "env keep V%d\n", "t.policy:4098:10: error: too many environment variables (more than 4096)\n" },
    { "env set V%d=1\n", "t.policy:4098:9: error: too many environment variables (more than 4096)\n" },
  };
  for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
    {
      char *text = repeat_lines ("seccomp off\n", lists[i].fmt, 4097);
      char *diags = NULL;
      struct securer_policy *p = load_text ("t.policy", text, &diags);
      cr_expect_null (p, "%s", lists[i].fmt);
      cr_expect_str_eq (diags, lists[i].expected, "%s", lists[i].fmt);
      securer_policy_free (p);
      free (diags);
      free (text);
    }
  /* Ports: 65536 distinct values fit, so the ceiling is the item count. */
  char *text = repeat_lines ("seccomp off\n", "landlock tcp-bind %d\n", 4097);
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", text, &diags);
  cr_assert_null (p);
  cr_assert_str_eq (diags, "t.policy:4098:19: error: too many ports (more than 4096)\n");
  free (diags);
  free (text);
}

Test (policy_limits, files_per_policy_are_bounded)
{
  char *dir = src_path ("tests/unit/data/policy");
  char *name = NULL;
  cr_assert_geq (asprintf (&name, "%s/virtual.policy", dir), 0);
  char *text = repeat_lines ("seccomp off\n", "include \"common.policy\" # %d\n", 300);
  char *diags = NULL;
  struct securer_policy *p = load_text (name, text, &diags);
  cr_assert_null (p);
  char *expected = NULL;
  cr_assert_geq (asprintf (&expected, "%s:257:9: error: too many included files (more than 256)\n", name), 0);
  /* Reported once per include past the ceiling; the first is what counts. */
  cr_assert (strncmp (diags, expected, strlen (expected)) == 0, "%s", diags);
  free (expected);
  free (diags);
  free (text);
  free (name);
  free (dir);
}

Test (policy_limits, oversized_and_irregular_input)
{
  size_t n = (1u << 20) + 1;
  char *big = malloc (n);
  memset (big, '#', n);
  struct securer_diags d = { NULL, 0, 0 };
  struct securer_policy *p = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_load_string ("big.policy", big, n, &p, &d, &err), -1);
  char *s = diags_text (&d);
  cr_assert_str_eq (s, "big.policy: error: larger than 1048576 bytes\n");
  cr_assert_str_eq (securer_error_message (err), "big.policy: larger than 1048576 bytes: EFBIG (File too large)");
  free (s);
  free (big);
  securer_diags_free (&d);
  securer_error_free (&err);

  char *dir = src_path ("tests/unit/data/policy");
  cr_assert_eq (securer_policy_load_file (dir, &p, &d, &err), -1);
  s = diags_text (&d);
  char *expected = NULL;
  cr_assert_geq (asprintf (&expected, "%s: error: %s: not a regular file\n", dir, dir), 0);
  cr_assert_str_eq (s, expected);
  free (expected);
  free (s);
  securer_diags_free (&d);
  securer_error_free (&err);
  free (dir);
}

/* Loads `policy` with a data directory of its own holding group `group`
 * (seccomp/GROUP.syscalls with `content`); *file is the group file's path,
 * removed again before returning. */
static struct securer_policy *
load_with_group (const char *group, const char *content, const char *policy, char **file,
                 char **diags)
{
  char tmp[] = "/tmp/securer-groups-XXXXXX";
  cr_assert_not_null (mkdtemp (tmp));
  char *sub = NULL;
  cr_assert_geq (asprintf (&sub, "%s/seccomp", tmp), 0);
  cr_assert_geq (asprintf (file, "%s/%s.syscalls", sub, group), 0);
  cr_assert_eq (mkdir (sub, 0755), 0);
  FILE *f = fopen (*file, "w");
  fputs (content, f);
  fclose (f);
  setenv ("SECURER_DATADIR", tmp, 1);
  struct securer_policy *p = load_text ("t.policy", policy, diags);
  unlink (*file);
  rmdir (sub);
  rmdir (tmp);
  free (sub);
  return p;
}

Test (policy_limits, a_group_that_cannot_load_is_an_error)
{
  /* A group that refers to a missing one. */
  char *file = NULL, *diags = NULL;
  struct securer_policy *p = load_with_group ("broken", "read\n@no-such-group-anywhere\n",
                                              "seccomp allow @broken\n", &file, &diags);
  cr_assert_null (p);
  /* The problem where it is, then the use that failed because of it. */
  char *expected = NULL;
  cr_assert_geq (asprintf (&expected, "%s:2:1: error: unknown group '@no-such-group-anywhere'\n"
                           "t.policy:1:15: error: cannot load syscall group '@broken': ", file), 0);
  cr_assert (strncmp (diags, expected, strlen (expected)) == 0, "%s", diags);
  free (expected);
  free (diags);
  free (file);
}

Test (policy_limits, group_file_mistakes_are_placed_and_suggested)
{
  char *file = NULL, *diags = NULL;
  struct securer_policy *p
    = load_with_group ("typos", "read\n  getpidd   # misspelt\n@basic-iox\nwrite close\nzz_not_a_syscall_at_all\n",
                       "seccomp allow @typos\n", &file, &diags);
  cr_assert_null (p);
  /* Every problem of the file, each at its line and column. */
  char *expected = NULL;
  cr_assert_geq (asprintf (&expected,
                           "%s:2:3: error: unknown syscall 'getpidd' (did you mean 'getpid'?)\n"
                           "%s:3:1: error: unknown group '@basic-iox' (did you mean '@basic-io'?)\n"
                           "%s:4:1: error: one entry per line expected, got 'write close'\n"
                           "%s:5:1: error: unknown syscall 'zz_not_a_syscall_at_all' (not known to libseccomp ",
                           file, file, file, file), 0);
  cr_assert (strncmp (diags, expected, strlen (expected)) == 0, "%s", diags);
  cr_assert (strstr (diags, "t.policy:1:15: error: cannot load syscall group '@typos': ") != NULL, "%s", diags);
  free (expected);
  free (diags);
  free (file);
}

Test (policy_meaning, proc_subset_pid)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", "mount proc subset=pid\nmount proc /p2 subset=pid\n", &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (p->n_mounts, 2);
  cr_assert_str_eq (p->mounts[0].dest, "/proc");
  cr_assert (p->mounts[0].pid_only);
  cr_assert_str_eq (p->mounts[1].dest, "/p2");
  cr_assert (p->mounts[1].pid_only);
  securer_policy_free (p);
  free (diags);
}

Test (policy_meaning, proc_unmasked_option)
{
  char *diags = NULL;
  struct securer_policy *p = load_text ("t.policy", "mount proc unmasked\nmount proc /p2\n", &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_eq (p->n_mounts, 2);
  cr_assert_str_eq (p->mounts[0].dest, "/proc");
  cr_assert (p->mounts[0].unmasked);
  cr_assert (!p->mounts[0].pid_only);
  cr_assert (!p->mounts[1].unmasked);
  securer_policy_free (p);
  free (diags);
}

Test (policy_meaning, session_template_mode)
{
  static const struct { const char *text; enum securer_session_template want; } modes[] = {
    { "seccomp off\n", SECURER_SESSION_TEMPLATE_AUTO },
    { "session template on\nseccomp off\n", SECURER_SESSION_TEMPLATE_ON },
    { "session template on\nsession template off\nseccomp off\n", SECURER_SESSION_TEMPLATE_OFF },
    { "session template auto\nseccomp off\n", SECURER_SESSION_TEMPLATE_AUTO },
  };
  for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
    {
      char *diags = NULL;
      struct securer_policy *p = load_text ("t.policy", modes[i].text, &diags);
      cr_assert_not_null (p, "%s", diags);
      cr_expect_eq (p->session_template, modes[i].want, "case %zu", i);
      /* The JSON form carries it (sessions copy their policy through it). */
      char *json = securer_policy_to_json_text (p, 0);
      struct securer_policy *q = NULL;
      securer_err_t e = NULL;
      cr_assert_eq (securer_policy_from_json_text ("t.json", json, strlen (json), &q, &e), 0, "%s",
                    securer_error_message (e));
      cr_expect_eq (q->session_template, modes[i].want, "case %zu (JSON)", i);
      securer_policy_free (q);
      securer_policy_free (p);
      free (json);
      free (diags);
    }
}

/* A file is one file whatever name reaches it: through a symlink or a hard
 * link, including it again from itself is a cycle. */
Test (policy_include, cycle_through_another_name_of_the_same_file)
{
  char dir[] = "/tmp/securer-include-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char a[128], hard[128], soft[128];
  snprintf (a, sizeof a, "%s/a.policy", dir);
  snprintf (hard, sizeof hard, "%s/hard.policy", dir);
  snprintf (soft, sizeof soft, "%s/soft.policy", dir);
  const char *targets[] = { "hard.policy", "soft.policy" };
  for (int i = 0; i < 2; i++)
    {
      FILE *f = fopen (a, "w");
      cr_assert_not_null (f);
      fprintf (f, "seccomp off\ninclude \"%s\"\n", targets[i]);
      fclose (f);
      cr_assert_eq (i == 0 ? link (a, hard) : symlink ("a.policy", soft), 0);
      char *diags = NULL;
      struct securer_policy *p = load_path (a, &diags);
      cr_assert_null (p, "case %d loaded", i);
      cr_assert_not_null (strstr (diags, "include cycle"), "case %d: %s", i, diags);
      free (diags);
      unlink (i == 0 ? hard : soft);
    }
  unlink (a);
  rmdir (dir);
}
