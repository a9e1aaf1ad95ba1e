/* config.json → struct oci_spec (src/lib/oci/spec.c): fields refused by
 * name, the seccomp profile compiled to the filter it means, the Docker
 * "deny when C, allow otherwise" idiom read as such, and the BPF verdicts
 * of the result (emulated as the kernel runs them). */
#include <config.h>

#include <criterion/criterion.h>
#include <linux/audit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "oci/oci.h"
#include "seccomp/seccomp.h"

static char bundle[64];

static void
setup (void)
{
  strcpy (bundle, "/tmp/securer-oci-spec-XXXXXX");
  cr_assert_not_null (mkdtemp (bundle));
  char rootfs[96];
  snprintf (rootfs, sizeof rootfs, "%s/rootfs", bundle);
  cr_assert_eq (mkdir (rootfs, 0755), 0);
}

static void
teardown (void)
{
  char path[128];
  snprintf (path, sizeof path, "%s/config.json", bundle);
  unlink (path);
  snprintf (path, sizeof path, "%s/rootfs", bundle);
  rmdir (path);
  rmdir (bundle);
}

/* A minimal valid config with `extra` spliced into the linux object and
 * `top` into the top level. */
static int
load (const char *top, const char *linux_extra, struct oci_spec **s, securer_err_t *err)
{
  char path[128];
  snprintf (path, sizeof path, "%s/config.json", bundle);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fprintf (f,
           "{\"ociVersion\": \"1.0.2\", %s"
           " \"process\": {\"args\": [\"true\"], \"cwd\": \"/\"},"
           " \"root\": {\"path\": \"rootfs\"},"
           " \"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"ipc\"}] %s}}",
           top, linux_extra);
  fclose (f);
  return oci_spec_load (bundle, s, err);
}

static void
refused (const char *top, const char *linux_extra, const char *field)
{
  struct oci_spec *s = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (load (top, linux_extra, &s, &err), -1, "accepted: %s %s", top, linux_extra);
  cr_assert (strstr (securer_error_message (err), field), "\"%s\" not named in: %s", field,
             securer_error_message (err));
  cr_assert_eq (err->status, 125);
  securer_error_free (&err);
}

TestSuite (oci_spec, .init = setup, .fini = teardown);

Test (oci_spec, minimal_config_is_read)
{
  struct oci_spec *s = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (load ("", "", &s, &err), 0, "%s", err ? securer_error_message (err) : "");
  cr_assert_str_eq (s->proc.args[0], "true");
  cr_assert (s->ns_wanted[OCI_NS_MNT] && s->ns_wanted[OCI_NS_IPC] && !s->ns_wanted[OCI_NS_NET]);
  cr_assert_eq (s->proc.cap_effective, 0);
  oci_spec_free (s);
}

Test (oci_spec, unknown_and_unsupported_fields_are_named)
{
  refused ("\"frobnicate\": 1,", "", "frobnicate");
  refused ("", ", \"intelRdt\": {}", "linux.intelRdt");
  refused ("", ", \"sysctl\": {\"kernel.randomize_va_space\": \"0\"}", "linux.sysctl.kernel.randomize_va_space");
  /* net.* needs a network namespace of the container's own. */
  refused ("", ", \"sysctl\": {\"net.ipv4.ip_forward\": \"1\"}", "linux.sysctl.net.ipv4.ip_forward");
  refused ("", ", \"resources\": {\"blockIO\": {\"weight\": 10}}", "linux.resources.blockIO");
  refused ("", ", \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"]}",
           "linux.seccomp.flags[0]");
  refused ("\"annotations\": {\"run.securer.landlok\": \"x\"},", "", "annotations.run.securer.landlok");
  refused ("\"hooks\": {\"createContainer\": [{\"path\": \"/bin/true\", \"when\": 1}]},", "", "hooks.createContainer[0].when");
  refused ("\"mounts\": [{\"destination\": \"/x\", \"type\": \"overlay\", \"source\": \"o\"}],", "", "mounts[0].type");
  refused ("\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"/tmp\", \"options\": [\"idmap\"]}],",
           "", "mounts[0].options");
  refused ("\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"/tmp\", \"options\": [\"tmpcopyup\"]}],",
           "", "mounts[0].options: tmpcopyup is for tmpfs");
  /* The kernel drops a bind mount's data unread: rro would not hold. */
  refused ("\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"/tmp\", \"options\": [\"rbind\", \"rro\"]}],",
           "", "mounts[0].options: \"rro\" is not supported for a bind mount");
  refused ("", ", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]", "linux.uidMappings");
}

/* update's LinuxResources: what is left out stays unset (unchanged), and
 * the same refusals as at create. */
Test (oci_spec, resources_alone_for_update)
{
  securer_err_t err = NULL;
  struct oci_spec *r = NULL;
  json_t *j = json_loads ("{\"memory\": {\"limit\": 1048576}, \"cpu\": {\"cpus\": \"0-1\"}}", 0, NULL);
  cr_assert_eq (oci_resources_parse (j, &r, &err), 0, "%s", err ? securer_error_message (err) : "");
  json_decref (j);
  cr_assert_eq (r->mem_limit, 1048576);
  cr_assert_eq (r->mem_swap, -2);
  cr_assert_eq (r->mem_reservation, -2);
  cr_assert_eq (r->mem_swappiness, -1);
  cr_assert_eq (r->pids_limit, 0);
  cr_assert_eq (r->cpu_shares, 0);
  cr_assert_str_eq (r->cpuset_cpus, "0-1");
  oci_spec_free (r);
  static const char *const bad[][2] = {
    { "{\"cpu\": {\"shares\": -5}}", "linux.resources.cpu.shares: -5 is negative" },
    { "{\"cpu\": {\"period\": -1}}", "linux.resources.cpu.period" },
    { "{\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 1}]}", "linux.resources.hugepageLimits" },
    { "{\"pids\": {\"max\": 1}}", "linux.resources.pids.max" },
    { "[]", "linux.resources: not an object" },
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      j = json_loads (bad[i][0], JSON_DECODE_ANY, NULL);
      cr_assert_not_null (j);
      cr_assert_eq (oci_resources_parse (j, &r, &err), -1, "accepted: %s", bad[i][0]);
      cr_assert (strstr (securer_error_message (err), bad[i][1]), "\"%s\" not named in: %s", bad[i][1],
                 securer_error_message (err));
      json_decref (j);
      securer_error_free (&err);
    }
}

Test (oci_spec, device_rules_compared)
{
  securer_err_t err = NULL;
  struct oci_spec *a, *b, *c;
  json_t *ja = json_loads ("{\"devices\": [{\"allow\": false, \"access\": \"rwm\"},"
                           " {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": \"rw\"}]}",
                           0, NULL);
  json_t *jc = json_loads ("{\"devices\": [{\"allow\": false, \"access\": \"rwm\"},"
                           " {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 5, \"access\": \"rw\"}]}",
                           0, NULL);
  cr_assert_eq (oci_resources_parse (ja, &a, &err), 0);
  cr_assert_eq (oci_resources_parse (ja, &b, &err), 0);
  cr_assert_eq (oci_resources_parse (jc, &c, &err), 0);
  cr_assert (oci_devrules_equal (a, b));
  cr_assert (!oci_devrules_equal (a, c));
  json_decref (ja);
  json_decref (jc);
  oci_spec_free (a);
  oci_spec_free (b);
  oci_spec_free (c);
}

Test (oci_spec, mount_options_become_flags_and_data)
{
  struct oci_spec *s = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (load ("\"mounts\": [{\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\","
                      " \"options\": [\"nosuid\", \"noexec\", \"mode=755\", \"size=65536k\", \"ro\", \"rw\"]},"
                      " {\"destination\": \"/h\", \"type\": \"bind\", \"source\": \"/tmp\", \"options\": [\"rbind\", \"ro\", \"rprivate\"]}],",
                      "", &s, &err),
                0, "%s", err ? securer_error_message (err) : "");
  cr_assert_eq (s->n_mounts, 2);
  cr_assert_eq (s->mounts[0].flags, MS_NOSUID | MS_NOEXEC);  /* rw after ro clears it */
  cr_assert_str_eq (s->mounts[0].data, "mode=755,size=65536k");
  cr_assert (s->mounts[1].bind && s->mounts[1].recursive);
  cr_assert_eq (s->mounts[1].flags, MS_RDONLY);
  cr_assert_eq (s->mounts[1].propagation, MS_PRIVATE | MS_REC);
  oci_spec_free (s);
}

static struct securer_seccomp_prog *
compile_profile (const char *profile)
{
  char extra[4096];
  snprintf (extra, sizeof extra, ", \"seccomp\": %s", profile);
  struct oci_spec *s = NULL;
  struct securer_policy *p = NULL;
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (load ("", extra, &s, &err), 0, "%s", err ? securer_error_message (err) : "");
  cr_assert_eq (oci_spec_seccomp_policy (s, &p, &err), 0, "%s", err ? securer_error_message (err) : "");
  cr_assert_eq (oci_seccomp_prepare (p, &prog, &err), 0, "%s", err ? securer_error_message (err) : "");
  oci_spec_free (s);
  /* prog keeps no pointer into the policy once generated. */
  securer_policy_free (p);
  return prog;
}

static struct securer_action
verdict (struct securer_seccomp_prog *prog, int nr, uint64_t a0, uint64_t a2)
{
  uint64_t args[6] = { a0, 1, a2, 0, 0, 0 };
  struct securer_action act;
  securer_err_t err = NULL;
  cr_assert_eq (securer_seccomp_emulate (prog, AUDIT_ARCH_X86_64, nr, args, &act, &err), 0, "%s",
                err ? securer_error_message (err) : "");
  return act;
}

/* Docker's and podman's socket rule: EINVAL for (AF_NETLINK, NETLINK_AUDIT),
 * allow otherwise, written as one errno rule and one allow per negation. */
Test (oci_spec, docker_socket_idiom_means_deny_c_else_allow)
{
  struct securer_seccomp_prog *prog = compile_profile (
    "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 38, \"syscalls\": ["
    " {\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 22, \"args\": ["
    "   {\"index\": 0, \"value\": 16, \"op\": \"SCMP_CMP_EQ\"}, {\"index\": 2, \"value\": 9, \"op\": \"SCMP_CMP_EQ\"}]},"
    " {\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 2, \"value\": 9, \"op\": \"SCMP_CMP_NE\"}]},"
    " {\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, \"value\": 16, \"op\": \"SCMP_CMP_NE\"}]},"
    " {\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_ALLOW\"}]}");
  struct securer_action a = verdict (prog, SYS_socket, 16, 9);
  cr_assert_eq (a.type, SECURER_ACT_ERRNO);
  cr_assert_eq (a.errnum, 22);
  cr_assert_eq (verdict (prog, SYS_socket, 16, 0).type, SECURER_ACT_ALLOW);
  cr_assert_eq (verdict (prog, SYS_socket, 2, 9).type, SECURER_ACT_ALLOW);
  cr_assert_eq (verdict (prog, SYS_socket, 2, 0).type, SECURER_ACT_ALLOW);
  cr_assert_eq (verdict (prog, SYS_getpid, 0, 0).type, SECURER_ACT_ALLOW);
  a = verdict (prog, SYS_mkdir, 0, 0);
  cr_assert_eq (a.type, SECURER_ACT_ERRNO);
  cr_assert_eq (a.errnum, 38);
  securer_seccomp_free (prog);
}

/* Allow rules that do not cover every condition are not that idiom: they
 * stay as written, and the filter decides as they say (first match wins,
 * else the default). */
Test (oci_spec, partial_negations_are_not_folded)
{
  char extra[2048];
  snprintf (extra, sizeof extra, ", \"seccomp\": %s",
            "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 1, \"syscalls\": ["
            " {\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 22, \"args\": ["
            "   {\"index\": 0, \"value\": 16, \"op\": \"SCMP_CMP_EQ\"}, {\"index\": 2, \"value\": 9, \"op\": \"SCMP_CMP_EQ\"}]},"
            " {\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 2, \"value\": 9, \"op\": \"SCMP_CMP_NE\"}]}]}");
  struct oci_spec *s = NULL;
  struct securer_policy *p = NULL;
  struct securer_seccomp_prog *prog = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (load ("", extra, &s, &err), 0);
  cr_assert_eq (oci_spec_seccomp_policy (s, &p, &err), 0);
  size_t n_socket = 0;
  for (size_t i = 0; i < p->seccomp.n_rules; i++)
    n_socket += strcmp (p->seccomp.rules[i].name, "socket") == 0;
  cr_assert_eq (n_socket, 2, "the two rules are kept as written");
  cr_assert_eq (oci_seccomp_prepare (p, &prog, &err), 0, "%s", err ? securer_error_message (err) : "");
  const uint64_t audit[6] = { 16, 3, 9 }, route[6] = { 16, 3, 0 }, inet9[6] = { 2, 1, 9 };
  struct securer_action a = securer_seccomp_eval (prog, 0, SYS_socket, audit);
  cr_assert (a.type == SECURER_ACT_ERRNO && a.errnum == 22, "%d/%d", a.type, a.errnum);
  a = securer_seccomp_eval (prog, 0, SYS_socket, route);
  cr_assert_eq (a.type, SECURER_ACT_ALLOW);
  a = securer_seccomp_eval (prog, 0, SYS_socket, inet9);
  cr_assert (a.type == SECURER_ACT_ERRNO && a.errnum == 1, "%d/%d", a.type, a.errnum);
  securer_seccomp_free (prog);
  securer_policy_free (p);
  oci_spec_free (s);
}

/* A malformed additionalGids was skipped, leaving the runtime's own
 * supplementary groups' replacement empty without a word. */
Test (oci_spec, additional_gids_not_an_array_is_refused)
{
  json_t *j = json_loads ("{\"args\": [\"true\"], \"cwd\": \"/\","
                          " \"user\": {\"uid\": 0, \"gid\": 0, \"additionalGids\": 5}}", 0, NULL);
  cr_assert_not_null (j);
  struct oci_process p;
  securer_err_t err = NULL;
  cr_assert_eq (oci_process_parse (j, "process", &p, &err), -1);
  cr_assert (strstr (securer_error_message (err), "process.user.additionalGids: not an array"), "%s",
             securer_error_message (err));
  securer_error_free (&err);
  json_decref (j);
}
