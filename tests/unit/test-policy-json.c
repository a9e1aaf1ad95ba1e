/* JSON form of the resolved policy: exact round trip, strict input. */
#include <config.h>

#include "policy-test.h"

static char *
json_of_file (const char *rel)
{
  char *path = src_path (rel);
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  cr_assert_not_null (p, "%s", diags);
  char *j = securer_policy_to_json_text (p, 0);
  cr_assert_not_null (j);
  securer_policy_free (p);
  free (diags);
  free (path);
  return j;
}

Test (policy_json, text_json_ir_json_is_byte_identical)
{
  static const char *const files[] = { "policies/r.policy", "policies/minimal.policy",
                                       "tests/unit/data/policy/everything.policy" };
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    {
      char *a = json_of_file (files[i]);
      struct securer_policy *p = NULL;
      securer_err_t err = NULL;
      cr_assert_eq (securer_policy_from_json_text ("a.json", a, strlen (a), &p, &err), 0, "%s: %s",
                    files[i], securer_error_message (err));
      char *b = securer_policy_to_json_text (p, 0);
      cr_assert_str_eq (a, b, "%s", files[i]);
      /* A JSON file loads like any policy file. */
      struct securer_policy *q = NULL;
      cr_assert_eq (securer_policy_load_string ("b.json", a, strlen (a), &q, NULL, &err), 0);
      char *c = securer_policy_to_json_text (q, 0);
      cr_assert_str_eq (a, c);
      free (c);
      free (b);
      free (a);
      securer_policy_free (p);
      securer_policy_free (q);
    }
}

Test (policy_json, shown_text_reads_back_to_the_same_policy)
{
  char *path = src_path ("tests/unit/data/policy/everything.policy");
  char *diags = NULL;
  struct securer_policy *p = load_path (path, &diags);
  cr_assert_not_null (p, "%s", diags);
  char *text = securer_policy_to_text (p);
  free (diags);
  struct securer_policy *q = load_text ("shown.policy", text, &diags);
  cr_assert_not_null (q, "%s\n%s", diags, text);
  cr_assert_str_eq (diags, "");
  char *t2 = securer_policy_to_text (q);
  /* Only the header (name, files read) and the group comments differ. */
  const char *b1 = strstr (text, "\nnamespaces"), *b2 = strstr (t2, "\nnamespaces");
  cr_assert_not_null (b1);
  cr_assert_not_null (b2);
  char *s1 = strdup (b1), *s2 = strdup (b2);
  for (char *c = s1; (c = strstr (c, "  # @")) != NULL;)
    {
      char *e = strchr (c, '\n');
      memmove (c, e, strlen (e) + 1);
    }
  cr_assert_str_eq (s1, s2);
  free (s1);
  free (s2);
  free (t2);
  free (text);
  free (diags);
  free (path);
  securer_policy_free (p);
  securer_policy_free (q);
}

struct json_case {
  const char *edit;     /* python-like description only, for the message */
  const char *from;     /* text replaced in the valid document */
  const char *to;
  const char *expected;
};

static const struct json_case jcases[] = {
  { "unknown top key", "\"name\": \"everything\"", "\"nmae\": \"everything\"",
    "e.json: error: $.nmae: unknown key (did you mean 'name'?)\n"
    "e.json: error: $.name: missing key\n" },
  { "unknown mount key", "\"optional\": true", "\"optinal\": true",
    "e.json: error: $.mounts[1].optinal: unknown key (did you mean 'optional'?)\n"
    "e.json: error: $.mounts[1].optional: missing key\n" },
  { "pid_only on a bind", "\"optional\": true", "\"optional\": true, \"pid_only\": true",
    "e.json: error: $.mounts[1].pid_only: only a proc mount can be pid_only\n" },
  { "unmasked on a bind", "\"optional\": true", "\"optional\": true, \"unmasked\": true",
    "e.json: error: $.mounts[1].unmasked: only a proc mount can be unmasked\n" },
  { "bad enum", "\"network\": \"host\"", "\"network\": \"hots\"",
    "e.json: error: $.network: expected 'none', 'loopback', 'host' or 'allow' (did you mean 'host'?)\n" },
  { "relative dest", "\"dest\": \"/x\"", "\"dest\": \"x\"",
    "e.json: error: $.mounts[1].dest: expected an absolute path\n" },
  { "wrong type", "\"uid\": 0", "\"uid\": \"0\"",
    "e.json: error: $.uid: expected an integer from 0 to 4294967294, got a string\n" },
  { "unknown syscall", "\"syscall\": \"ptrace\"", "\"syscall\": \"ptrac\"",
    "e.json: error: $.seccomp.rules[0].syscall: unknown syscall 'ptrac'\n" },
  { "unknown errno", "\"errno\": \"EPERM\"", "\"errno\": \"EPERMM\"",
    "e.json: error: $.seccomp.foreign_abi.errno: unknown errno name 'EPERMM' (did you mean 'EPERM'?)\n" },
  { "masked op", "\"mask\": 4294967295,\n            \"op\": \"==\"", "\"mask\": 4294967295,\n            \"op\": \"!=\"",
    "e.json: error: $.seccomp.rules[1].conditions[0].op: a masked comparison takes \"==\" only\n" },
  { "consistency", "\"network\": \"host\"", "\"network\": \"none\"",
    "e.json: error: $.namespaces: network 'none' needs the net namespace (add 'net' to namespaces, or say 'network host')\n" },
  { "link target on two lines", "\"source\": \"usr/bin\"", "\"source\": \"usr\\nbin\"",
    "e.json: error: $.mounts[8].source: expected a non-empty path shorter than 4096 bytes, on one line "
    "as the link target\n" },
  { "host root", "\"host_uid\": 1234", "\"host_uid\": 0",
    "e.json: error: $.host_uid: expected an id from 1 to 4294967294, \"caller\" or \"pool\"\n" },
  { "version", "\"securer_policy\": 1", "\"securer_policy\": 2",
    "e.json: error: $.securer_policy: unsupported format version 2 (expected 1)\n" },
  { "ptys above the kernel's ceiling", "\"ptys\": 8", "\"ptys\": 1048577",
    "e.json: error: $.limits.ptys: expected an integer from 0 to 1048576, got an integer\n" },
  { "ptys as a string", "\"ptys\": 8", "\"ptys\": \"8\"",
    "e.json: error: $.limits.ptys: expected an integer from 0 to 1048576, got a string\n" },
  { "syntax", "\"securer_policy\": 1,", "\"securer_policy\": 1,,",
    "e.json:2:23: error: invalid JSON: string or '}' expected near ','\n" },
};

Test (policy_json, input_errors_name_the_json_path)
{
  char *valid = json_of_file ("tests/unit/data/policy/everything.policy");
  for (size_t i = 0; i < sizeof jcases / sizeof *jcases; i++)
    {
      const char *at = strstr (valid, jcases[i].from);
      cr_assert_not_null (at, "case %zu (%s): '%s' not in the document", i, jcases[i].edit, jcases[i].from);
      char *doc = NULL;
      cr_assert_geq (asprintf (&doc, "%.*s%s%s", (int) (at - valid), valid, jcases[i].to,
                               at + strlen (jcases[i].from)), 0);
      char *diags = NULL;
      struct securer_policy *p = load_text ("e.json", doc, &diags);
      cr_expect_null (p, "case %zu (%s)", i, jcases[i].edit);
      cr_expect_str_eq (diags, jcases[i].expected, "case %zu (%s)", i, jcases[i].edit);
      securer_policy_free (p);
      free (diags);
      free (doc);
    }
  free (valid);
}

/* The cap in force is written, the default included; without the key (a
 * resolved policy written before it existed) the default holds. */
Test (policy_json, ptys_written_and_optional_on_input)
{
  char *valid = json_of_file ("tests/unit/data/policy/everything.policy");
  cr_assert_not_null (strstr (valid, "\"ptys\": 8"), "%s", valid);
  char *r = json_of_file ("policies/r.policy");
  cr_assert_not_null (strstr (r, "\"ptys\": 0"));
  free (r);
  const char *at = strstr (valid, ",\n    \"ptys\": 8");
  cr_assert_not_null (at, "%s", valid);
  char *doc = NULL;
  cr_assert_geq (asprintf (&doc, "%.*s%s", (int) (at - valid), valid, at + strlen (",\n    \"ptys\": 8")), 0);
  char *diags = NULL;
  struct securer_policy *p = load_text ("old.json", doc, &diags);
  cr_assert_not_null (p, "%s", diags);
  cr_assert_not (p->limits.ptys_set);
  cr_assert_eq (securer_policy_ptys (p), SECURER_PTYS_DEFAULT);
  securer_policy_free (p);
  free (diags);
  free (doc);
  free (valid);
}

/* The JSON form takes no value the text form would refuse. */
Test (policy_json, env_value_as_long_as_the_text_form_allows)
{
  char *valid = json_of_file ("tests/unit/data/policy/everything.policy");
  const char *from = "\"value\": \"hello world\"";
  const char *at = strstr (valid, from);
  cr_assert_not_null (at);
  for (size_t len = 32768; len <= 32769; len++)
    {
      char *big = malloc (len + 1);
      cr_assert_not_null (big);
      memset (big, 'x', len);
      big[len] = '\0';
      char *doc = NULL;
      cr_assert_geq (asprintf (&doc, "%.*s\"value\": \"%s\"%s", (int) (at - valid), valid, big,
                               at + strlen (from)), 0);
      char *diags = NULL;
      struct securer_policy *p = load_text ("e.json", doc, &diags);
      if (len == 32768)
        {
          cr_expect_not_null (p, "%s", diags);
          cr_expect_str_eq (diags, "");
        }
      else
        {
          cr_expect_null (p);
          cr_expect_str_eq (diags, "e.json: error: $.env.set[1].value: expected a value of at most 32768 bytes\n");
        }
      securer_policy_free (p);
      free (diags);
      free (doc);
      free (big);
    }
  free (valid);
}
