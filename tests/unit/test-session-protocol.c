/* Message schema, the tagged value encoding and the tool registry. */
#include <config.h>

#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "session/internal.h"

static int
parse (const char *text, struct proto_msg *m, securer_err_t *err)
{
  return securer_proto_parse (text, strlen (text), m, err);
}

static void
expect_reject (const char *text, const char *fragment)
{
  struct proto_msg m;
  securer_err_t err = NULL;
  cr_assert_eq (parse (text, &m, &err), -1, "accepted: %s", text);
  cr_assert_eq (securer_error_errno (err), EPROTO);
  cr_assert (strstr (securer_error_message (err), fragment) != NULL, "%s: message '%s' lacks '%s'",
             text, securer_error_message (err), fragment);
  securer_error_free (&err);
}

Test (protocol, valid_messages_parse)
{
  struct proto_msg m;
  securer_err_t err = NULL;
  cr_assert_eq (parse ("{\"type\":\"tool_call\",\"id\":3,\"tool\":\"add\",\"args\":{\"a\":{\"t\":\"dbl\",\"v\":[1]}}}",
                       &m, &err), 0);
  cr_assert_eq (m.type, PROTO_TOOL_CALL);
  cr_assert_eq (m.id, 3);
  cr_assert_str_eq (m.tool, "add");
  cr_assert_eq (json_object_size (m.args), 1);
  securer_proto_msg_clear (&m);
  /* Any string is a call: the session answers one that names no tool. */
  cr_assert_eq (parse ("{\"type\":\"tool_call\",\"id\":3,\"tool\":\"rm -rf\",\"args\":{}}", &m, &err), 0);
  cr_assert_str_eq (m.tool, "rm -rf");
  securer_proto_msg_clear (&m);
  cr_assert_eq (parse ("{\"type\":\"tool_call\",\"id\":4,\"tool\":\"noargs\",\"args\":null}", &m, &err), 0);
  cr_assert (json_is_object (m.args));
  securer_proto_msg_clear (&m);
  cr_assert_eq (parse ("{\"type\":\"result\",\"id\":1,\"visible\":true,\"warnings\":[\"w\"],\"value\":null}",
                       &m, &err), 0);
  cr_assert (m.visible);
  securer_proto_msg_clear (&m);
  cr_assert_eq (parse ("{\"type\":\"error\",\"id\":1,\"kind\":\"syntax\",\"message\":\"bad\"}", &m, &err), 0);
  cr_assert_str_eq (m.message, "bad");
  cr_assert_null (m.call);
  securer_proto_msg_clear (&m);
  /* An error names its call and the warnings raised before it. */
  cr_assert_eq (parse ("{\"type\":\"error\",\"id\":1,\"kind\":\"error\",\"message\":\"boom\","
                       "\"warnings\":[\"w\"],\"call\":\"f(x)\"}", &m, &err), 0);
  cr_assert_str_eq (m.call, "f(x)");
  cr_assert_eq (json_array_size (m.warnings), 1);
  securer_proto_msg_clear (&m);
  cr_assert_eq (parse ("{\"type\":\"ready\",\"r_version\":\"4.2.2\",\"pid\":2}", &m, &err), 0);
  securer_proto_msg_clear (&m);
}

Test (protocol, garbage_and_wrong_shapes_are_rejected)
{
  expect_reject ("not json", "malformed JSON");
  expect_reject ("[1,2]", "not a JSON object");
  expect_reject ("\"str\"", "malformed JSON");
  expect_reject ("{}", "\"type\" must be a string");
  expect_reject ("{\"type\":7}", "\"type\" must be a string");
  expect_reject ("{\"type\":\"launch_missiles\"}", "unknown message type");
  expect_reject ("{\"type\":\"tool_call\",\"id\":1,\"tool\":\"add\",\"args\":{},\"extra\":1}", "unexpected key");
  expect_reject ("{\"type\":\"tool_call\",\"id\":1,\"tool\":[\"add\"],\"args\":{}}", "must be a string");
  expect_reject ("{\"type\":\"tool_call\",\"id\":1,\"tool\":\"add\",\"args\":[1]}", "\"args\" must be an object");
  expect_reject ("{\"type\":\"tool_call\",\"id\":-1,\"tool\":\"add\",\"args\":{}}", "non-negative");
  expect_reject ("{\"type\":\"tool_call\",\"id\":1,\"id\":2,\"tool\":\"add\",\"args\":{}}", "malformed JSON");
  expect_reject ("{\"type\":\"result\",\"id\":1,\"visible\":\"yes\",\"value\":null}", "boolean");
  expect_reject ("{\"type\":\"result\",\"id\":1,\"visible\":true}", "missing");
  expect_reject ("{\"type\":\"result\",\"id\":1,\"visible\":true,\"value\":{\"t\":\"dbl\",\"v\":[\"x\"]}}", "wrong type");
  expect_reject ("{\"type\":\"error\",\"id\":1,\"kind\":\"panic\",\"message\":\"m\"}", "unknown kind");
  expect_reject ("{\"type\":\"error\",\"id\":1,\"kind\":\"error\",\"message\":\"m\",\"call\":1}", "\"call\" must be");
  expect_reject ("{\"type\":\"error\",\"id\":1,\"kind\":\"error\",\"message\":\"m\",\"warnings\":[1]}",
                 "warnings");
  expect_reject ("{\"type\":\"result\",\"id\":1,\"visible\":true,\"value\":{\"t\":\"chr\",\"v\":[\"a\\u0000b\"]}}",
                 "malformed JSON");
}

Test (protocol, r_identifiers)
{
  const char *good[] = { "add", "get_weather", ".hidden", "x.y", "a1", "T", NULL };
  const char *bad[] = { "", "1a", "_a", ".1a", "a-b", "a b", "if", "function", "NA", "TRUE", "...",
                        "..1", "a;b", "add()", NULL };
  for (const char **g = good; *g; g++)
    cr_assert (securer_proto_valid_name (*g), "%s", *g);
  for (const char **b = bad; *b; b++)
    cr_assert_not (securer_proto_valid_name (*b), "%s", *b);
}

Test (protocol, host_messages_keep_doubles_exact)
{
  json_t *v = json_pack ("{s:s, s:[f,f,f]}", "t", "dbl", "v", 0.1 + 0.2, 1e-300, 1.7976931348623157e308);
  char *msg = securer_proto_tool_result (9, v, NULL);
  json_t *back = json_loads (msg, 0, NULL);
  json_t *arr = json_object_get (json_object_get (back, "value"), "v");
  cr_assert_eq (json_real_value (json_array_get (arr, 0)), 0.1 + 0.2);
  cr_assert_eq (json_real_value (json_array_get (arr, 1)), 1e-300);
  cr_assert_eq (json_real_value (json_array_get (arr, 2)), 1.7976931348623157e308);
  free (msg);
  json_decref (back);
  json_decref (v);
  msg = securer_proto_tool_result (9, NULL, "Unknown tool: x");
  cr_assert (strstr (msg, "\"error\":\"Unknown tool: x\"") != NULL);
  free (msg);
  struct securer_exec_opts xo = { .plot_format = SECURER_PLOT_NONE };
  cr_assert_null (securer_proto_execute (1, "\xff\xfe", &xo), "invalid UTF-8 must not be sent");
}

static json_t *
load (const char *s)
{
  json_error_t je;
  json_t *j = json_loads (s, JSON_DECODE_ANY, &je);
  cr_assert_not_null (j, "%s: %s", s, je.text);
  return j;
}

/* Each of good validates; each of bad is refused as invalid (EINVAL). */
static void
expect_values (const char *const *good, const char *const *bad)
{
  securer_err_t err = NULL;
  for (; *good; good++)
    {
      json_t *j = load (*good);
      cr_assert_eq (securer_value_validate (j, &err), 0, "%s: %s", *good, err ? securer_error_message (err) : "");
      json_decref (j);
    }
  for (; *bad; bad++)
    {
      json_t *j = load (*bad);
      cr_assert_eq (securer_value_validate (j, &err), -1, "accepted %s", *bad);
      cr_assert_eq (securer_error_errno (err), EINVAL);
      securer_error_free (&err);
      json_decref (j);
    }
}

Test (value, validation)
{
  const char *good[] = {
    "null",
    "{\"t\":\"dbl\",\"v\":[0.1,null,\"NaN\",\"Inf\",\"-Inf\",3]}",
    "{\"t\":\"int\",\"v\":[1,null],\"n\":[\"a\",null]}",
    "{\"t\":\"lgl\",\"v\":[true,false,null]}",
    "{\"t\":\"chr\",\"v\":[\"a\",null]}",
    "{\"t\":\"int\",\"v\":[1,2,3,4],\"dim\":[2,2]}",
    "{\"t\":\"fct\",\"v\":[1,2,null],\"levels\":[\"u\",\"v\"]}",
    "{\"t\":\"list\",\"v\":[null,{\"t\":\"chr\",\"v\":[]}]}",
    "{\"t\":\"df\",\"n\":[\"a\"],\"nrow\":2,\"v\":[{\"t\":\"int\",\"v\":[1,2]}]}",
    "{\"t\":\"date\",\"v\":[19000]}",
    "{\"t\":\"time\",\"v\":[1.5e9],\"tz\":\"UTC\"}",
    "{\"t\":\"other\",\"class\":[\"function\"],\"text\":\"function(x) x\"}",
    NULL,
  };
  const char *bad[] = {
    "1", "[1]", "{\"v\":[1]}", "{\"t\":\"dbl\"}", "{\"t\":\"dbl\",\"v\":[\"nan\"]}",
    "{\"t\":\"int\",\"v\":[1.5]}", "{\"t\":\"int\",\"v\":[-2147483648]}", "{\"t\":\"int\",\"v\":[3000000000]}",
    "{\"t\":\"lgl\",\"v\":[1]}", "{\"t\":\"chr\",\"v\":[1]}", "{\"t\":\"dbl\",\"v\":[1],\"n\":[\"a\",\"b\"]}",
    "{\"t\":\"int\",\"v\":[1,2,3],\"dim\":[2,2]}", "{\"t\":\"fct\",\"v\":[3],\"levels\":[\"u\"]}",
    "{\"t\":\"df\",\"n\":[\"a\"],\"nrow\":3,\"v\":[{\"t\":\"int\",\"v\":[1,2]}]}",
    "{\"t\":\"dbl\",\"v\":[1],\"evil\":true}", "{\"t\":\"list\",\"v\":[1]}", "{\"t\":\"xyz\",\"v\":[]}",
    NULL,
  };
  expect_values (good, bad);
}

Test (value, depth_is_limited)
{
  json_t *v = json_null ();
  for (int i = 0; i < 100; i++)
    v = json_pack ("{s:s, s:[o]}", "t", "list", "v", v);
  securer_err_t err = NULL;
  cr_assert_eq (securer_value_validate (v, &err), -1);
  cr_assert (strstr (securer_error_message (err), "deeper") != NULL);
  securer_error_free (&err);
  json_decref (v);
}

/* "dim" must multiply to the length without the product wrapping: three
 * dimensions of 2^30 are 2^90, which a 64-bit product used to wrap to 0,
 * so they passed for an empty vector.  A zero dimension is an empty array
 * whatever the others are. */
Test (value, dim_product_does_not_wrap)
{
  const char *bad[] = {
    "{\"t\":\"dbl\",\"v\":[],\"dim\":[1073741824,1073741824,1073741824]}",
    "{\"t\":\"int\",\"v\":[],\"dim\":[2147483647,2147483647,2147483647,2147483647]}",
    "{\"t\":\"chr\",\"v\":[\"a\"],\"dim\":[4294967296]}",
    "{\"t\":\"lgl\",\"v\":[true],\"dim\":[1073741824,1073741824,1073741824,0]}",
    "{\"t\":\"int\",\"v\":[1,2,3,4],\"dim\":[2,3]}",
    "{\"t\":\"int\",\"v\":[1,2,3,4],\"dim\":[4,1,2]}",
    NULL,
  };
  const char *good[] = {
    "{\"t\":\"dbl\",\"v\":[],\"dim\":[1073741824,1073741824,1073741824,0]}",
    "{\"t\":\"dbl\",\"v\":[],\"dim\":[0,2147483647]}",
    "{\"t\":\"int\",\"v\":[1,2,3,4],\"dim\":[4,1,1]}",
    "{\"t\":\"int\",\"v\":[1,2,3,4,5,6],\"dim\":[1,2,3]}",
    NULL,
  };
  securer_err_t err = NULL;
  for (const char **b = bad; *b; b++)
    {
      json_t *j = load (*b);
      cr_assert_eq (securer_value_validate (j, &err), -1, "accepted %s", *b);
      cr_assert_eq (securer_error_errno (err), EINVAL);
      cr_assert (strstr (securer_error_message (err), "dim") != NULL, "%s: %s", *b, securer_error_message (err));
      securer_error_free (&err);
      json_decref (j);
    }
  for (const char **g = good; *g; g++)
    {
      json_t *j = load (*g);
      cr_assert_eq (securer_value_validate (j, &err), 0, "%s: %s", *g, err ? securer_error_message (err) : "");
      json_decref (j);
    }
}

/* Classes and other attributes (matrix dimnames, ordered factors,
 * difftime units, classed lists): accepted in their one documented form,
 * anything else refused with a message that names the problem. */
Test (value, attributes)
{
  const char *good[] = {
    "{\"t\":\"int\",\"v\":[1,2,3,4],\"dim\":[2,2],\"attr\":{\"dimnames\":{\"t\":\"list\","
    "\"v\":[{\"t\":\"chr\",\"v\":[\"a\",\"b\"]},null],\"n\":[\"row\",\"col\"]}}}",
    "{\"t\":\"fct\",\"v\":[1],\"levels\":[\"lo\"],\"class\":[\"ordered\",\"factor\"]}",
    "{\"t\":\"dbl\",\"v\":[1.5],\"class\":[\"difftime\"],\"attr\":{\"units\":{\"t\":\"chr\",\"v\":[\"mins\"]}}}",
    "{\"t\":\"list\",\"v\":[],\"class\":[\"lm\"]}",
    "{\"t\":\"df\",\"n\":[\"a\"],\"nrow\":2,\"v\":[{\"t\":\"int\",\"v\":[1,2]}],\"rownames\":[2,5],"
    "\"class\":[\"tbl\",\"data.frame\"],\"attr\":{\"note\":{\"t\":\"other\",\"text\":\"x\"}}}",
    NULL,
  };
  struct { const char *value, *message; } bad[] = {
    { "{\"t\":\"dbl\",\"v\":[1],\"attr\":{\"class\":{\"t\":\"dbl\",\"v\":[1]}}}",
      "attribute \"class\" must be given by its own key" },
    { "{\"t\":\"dbl\",\"v\":[1],\"class\":[1]}", "class must be an array of strings" },
    { "{\"t\":\"dbl\",\"v\":[1],\"class\":[]}", "may not be empty" },
    { "{\"t\":\"dbl\",\"v\":[1],\"class\":[\"factor\"]}", "belongs to the fct tag" },
    { "{\"t\":\"list\",\"v\":[],\"class\":[\"data.frame\"]}", "belongs to the df tag" },
    { "{\"t\":\"fct\",\"v\":[1],\"levels\":[\"a\"],\"class\":[\"ordered\"]}", "belongs to the fct tag" },
    { "{\"t\":\"fct\",\"v\":[1],\"levels\":[\"a\"],\"attr\":{\"levels\":{\"t\":\"chr\",\"v\":[\"b\"]}}}",
      "must be given by its own key" },
    { "{\"t\":\"df\",\"n\":[],\"nrow\":0,\"v\":[],\"attr\":{\"row.names\":{\"t\":\"int\",\"v\":[]}}}",
      "must be given by its own key" },
    { "{\"t\":\"dbl\",\"v\":[1],\"attr\":[1]}", "\"attr\" must be an object" },
    { "{\"t\":\"dbl\",\"v\":[1],\"attr\":{\"\":{\"t\":\"dbl\",\"v\":[1]}}}", "without a name" },
    { "{\"t\":\"dbl\",\"v\":[1],\"attr\":{\"a\":null}}", "is NULL" },
    { "{\"t\":\"dbl\",\"v\":[1],\"attr\":{\"a\":{\"t\":\"closure\"}}}", "attribute \"a\"" },
    { "{\"t\":\"int\",\"v\":[1,2],\"attr\":{\"dimnames\":{\"t\":\"list\",\"v\":[null]}}}",
      "without \"dim\"" },
    { "{\"t\":\"int\",\"v\":[1,2],\"dim\":[2],\"attr\":{\"dimnames\":{\"t\":\"list\","
      "\"v\":[{\"t\":\"chr\",\"v\":[\"a\"]}]}}}", "as many strings as the dimension" },
    { "{\"t\":\"int\",\"v\":[1,2],\"dim\":[2],\"attr\":{\"dimnames\":{\"t\":\"chr\",\"v\":[\"a\"]}}}",
      "one entry per dimension" },
    { "{\"t\":\"df\",\"n\":[\"a\"],\"nrow\":1,\"v\":[{\"t\":\"int\",\"v\":[1]}],\"rownames\":[\"x\",1]}",
      "all strings or all integers" },
    /* References, which base R follows (as.character.srcref reads the file
     * a "srcfile" names): the runtime never sends them. */
    { "{\"t\":\"int\",\"v\":[1,1,1,1],\"class\":[\"srcref\"],\"attr\":{\"srcfile\":{\"t\":\"list\","
      "\"v\":[{\"t\":\"chr\",\"v\":[\"/etc/shadow\"]}],\"n\":[\"filename\"],\"class\":[\"srcfile\"]}}}",
      "attribute \"srcfile\" is a reference" },
    { "{\"t\":\"dbl\",\"v\":[1],\"attr\":{\"srcref\":{\"t\":\"int\",\"v\":[1]}}}", "is a reference" },
    { "{\"t\":\"dbl\",\"v\":[1],\"attr\":{\"wholeSrcref\":{\"t\":\"int\",\"v\":[1]}}}", "is a reference" },
    { "{\"t\":\"int\",\"v\":[3],\"class\":[\"file\",\"connection\"],\"attr\":{\"conn_id\":"
      "{\"t\":\"other\",\"class\":[\"externalptr\"],\"text\":\"<pointer: 0x1>\"}}}", "is a reference" },
    { "{\"t\":\"df\",\"n\":[],\"nrow\":0,\"v\":[],\"attr\":{\".internal.selfref\":{\"t\":\"lgl\",\"v\":[]}}}",
      "attribute \".internal.selfref\" is a reference" },
    { "{\"t\":\"list\",\"v\":[{\"t\":\"dbl\",\"v\":[1],\"attr\":{\".Environment\":{\"t\":\"int\",\"v\":[1]}}}]}",
      "is a reference" },
    { NULL, NULL },
  };
  securer_err_t err = NULL;
  for (const char **g = good; *g; g++)
    {
      json_t *j = load (*g);
      cr_assert_eq (securer_value_validate (j, &err), 0, "%s: %s", *g, err ? securer_error_message (err) : "");
      json_decref (j);
    }
  for (size_t i = 0; bad[i].value; i++)
    {
      json_t *j = load (bad[i].value);
      cr_assert_eq (securer_value_validate (j, &err), -1, "accepted %s", bad[i].value);
      cr_assert_eq (securer_error_errno (err), EINVAL);
      cr_assert (strstr (securer_error_message (err), bad[i].message) != NULL, "%s: %s", bad[i].value,
                 securer_error_message (err));
      securer_error_free (&err);
      json_decref (j);
    }
}

/* Hostile shapes: a chain of attributes nested past the depth limit, and
 * more attributes than allowed, are refused (no deep recursion, no crash). */
Test (value, hostile_attributes)
{
  json_t *v = json_pack ("{s:s, s:[i]}", "t", "int", "v", 1);
  for (int i = 0; i < 10000; i++)
    v = json_pack ("{s:s, s:[i], s:{s:o}}", "t", "int", "v", 1, "attr", "a", v);
  securer_err_t err = NULL;
  cr_assert_eq (securer_value_validate (v, &err), -1);
  cr_assert (strstr (securer_error_message (err), "deeper than 64") != NULL, "%s", securer_error_message (err));
  securer_error_free (&err);
  json_decref (v);

  json_t *attr = json_object ();
  for (int i = 0; i < 65; i++)
    {
      char name[16];
      snprintf (name, sizeof name, "a%d", i);
      json_object_set_new (attr, name, json_pack ("{s:s, s:[i]}", "t", "int", "v", i));
    }
  v = json_pack ("{s:s, s:[], s:o}", "t", "dbl", "v", "attr", attr);
  cr_assert_eq (securer_value_validate (v, &err), -1);
  cr_assert (strstr (securer_error_message (err), "65 attributes, at most 64") != NULL, "%s",
             securer_error_message (err));
  securer_error_free (&err);
  json_object_del (json_object_get (v, "attr"), "a0");
  cr_assert_eq (securer_value_validate (v, &err), 0, "%s", err ? securer_error_message (err) : "");
  json_decref (v);
}

static void
expect_plain (const char *tagged, const char *plain)
{
  json_t *t = load (tagged);
  json_t *p = securer_value_to_plain (t);
  char *s = json_dumps (p, JSON_COMPACT | JSON_ENCODE_ANY);
  cr_assert_str_eq (s, plain, "%s", tagged);
  free (s);
  json_decref (p);
  json_decref (t);
}

Test (value, to_plain)
{
  expect_plain ("{\"t\":\"dbl\",\"v\":[2]}", "2");
  expect_plain ("{\"t\":\"dbl\",\"v\":[1,null,\"NaN\"]}", "[1,null,\"NaN\"]");
  expect_plain ("{\"t\":\"int\",\"v\":[1,2],\"n\":[\"a\",\"b\"]}", "{\"a\":1,\"b\":2}");
  expect_plain ("{\"t\":\"fct\",\"v\":[2,null],\"levels\":[\"u\",\"v\"]}", "[\"v\",null]");
  expect_plain ("{\"t\":\"date\",\"v\":[0,19000]}", "[\"1970-01-01\",\"2022-01-08\"]");
  expect_plain ("{\"t\":\"list\",\"v\":[null,{\"t\":\"chr\",\"v\":[\"x\"]}],\"n\":[\"a\",\"b\"]}",
                "{\"a\":null,\"b\":\"x\"}");
  expect_plain ("{\"t\":\"df\",\"n\":[\"a\",\"b\"],\"nrow\":2,\"v\":[{\"t\":\"int\",\"v\":[1,2]},"
                "{\"t\":\"chr\",\"v\":[\"x\",null]}]}",
                "[{\"a\":1,\"b\":\"x\"},{\"a\":2,\"b\":null}]");
  expect_plain ("null", "null");
  /* Classes and attributes have no place in plain JSON: the data alone. */
  expect_plain ("{\"t\":\"dbl\",\"v\":[90],\"class\":[\"difftime\"],\"attr\":{\"units\":{\"t\":\"chr\","
                "\"v\":[\"mins\"]}}}", "90");
  expect_plain ("{\"t\":\"list\",\"v\":[{\"t\":\"dbl\",\"v\":[1.5]}],\"n\":[\"coefficients\"],"
                "\"class\":[\"lm\"]}", "{\"coefficients\":1.5}");
}

/* A data frame's "nrow" is only believed as far as its columns carry the
 * rows: a few bytes from R claiming 2^31-1 rows once made the host build
 * that many row objects. */
Test (value, data_frame_rows_are_backed_by_columns)
{
  const char *bad[] = {
    "{\"t\":\"df\",\"n\":[\"l\"],\"nrow\":2147483647,\"v\":[{\"t\":\"list\",\"v\":[null]}]}",
    "{\"t\":\"df\",\"n\":[\"l\"],\"nrow\":1,\"v\":[{\"t\":\"list\",\"v\":[null,null]}]}",
    "{\"t\":\"df\",\"n\":[\"d\"],\"nrow\":2147483647,\"v\":[{\"t\":\"df\",\"n\":[],\"nrow\":1,\"v\":[]}]}",
    NULL,
  };
  securer_err_t err = NULL;
  for (const char **b = bad; *b; b++)
    {
      json_t *j = load (*b);
      cr_assert_eq (securer_value_validate (j, &err), -1, "accepted %s", *b);
      cr_assert_eq (securer_error_errno (err), EINVAL);
      cr_assert (strstr (securer_error_message (err), "rows, expected") != NULL, "%s: %s", *b,
                 securer_error_message (err));
      securer_error_free (&err);
      json_decref (j);
    }
  /* Valid values whose rows no column carries: no row objects at all. */
  const char *empty[] = {
    "{\"t\":\"df\",\"n\":[],\"nrow\":2147483647,\"v\":[]}",
    "{\"t\":\"df\",\"n\":[\"z\"],\"nrow\":2147483647,"
    "\"v\":[{\"t\":\"other\",\"class\":[\"complex\"],\"text\":\"1+2i\"}]}",
    NULL,
  };
  for (const char **e = empty; *e; e++)
    {
      json_t *j = load (*e);
      cr_assert_eq (securer_value_validate (j, &err), 0, "%s: %s", *e, securer_error_message (err));
      json_decref (j);
      expect_plain (*e, "[]");
    }
  expect_plain ("{\"t\":\"df\",\"n\":[\"a\",\"z\",\"l\"],\"nrow\":2,\"v\":[{\"t\":\"int\",\"v\":[1,2]},"
                "{\"t\":\"other\",\"class\":[\"complex\"],\"text\":\"1+2i\"},"
                "{\"t\":\"list\",\"v\":[null,{\"t\":\"chr\",\"v\":[\"x\"]}]}]}",
                "[{\"a\":1,\"l\":null},{\"a\":2,\"l\":\"x\"}]");
  expect_plain ("{\"t\":\"df\",\"n\":[\"z\"],\"nrow\":1,"
                "\"v\":[{\"t\":\"other\",\"class\":[\"complex\"],\"text\":\"1+2i\"}]}",
                "[{\"z\":\"1+2i\"}]");
}

static void
expect_tagged (const char *plain, const char *tagged)
{
  json_t *p = load (plain);
  securer_err_t err = NULL;
  json_t *t = securer_value_from_plain (p, &err);
  cr_assert_not_null (t);
  cr_assert_eq (securer_value_validate (t, &err), 0);
  char *s = json_dumps (t, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
  cr_assert_str_eq (s, tagged, "%s", plain);
  free (s);
  json_decref (p);
  json_decref (t);
}

Test (value, from_plain)
{
  expect_tagged ("3", "{\"t\":\"int\",\"v\":[3]}");
  expect_tagged ("2.5", "{\"t\":\"dbl\",\"v\":[2.5]}");
  expect_tagged ("[1,2.5,null]", "{\"t\":\"dbl\",\"v\":[1.0,2.5,null]}");
  expect_tagged ("[true,null]", "{\"t\":\"lgl\",\"v\":[true,null]}");
  expect_tagged ("\"s\"", "{\"t\":\"chr\",\"v\":[\"s\"]}");
  expect_tagged ("[1,\"a\"]", "{\"t\":\"list\",\"v\":[{\"t\":\"int\",\"v\":[1]},{\"t\":\"chr\",\"v\":[\"a\"]}]}");
  expect_tagged ("{\"x\":null}", "{\"t\":\"list\",\"v\":[null],\"n\":[\"x\"]}");
  expect_tagged ("[]", "{\"t\":\"list\",\"v\":[]}");
  expect_tagged ("null", "null");
}

static enum securer_tool_status
nop (void *u, const struct securer_tool_call *c, json_t **r, char **e)
{
  return SECURER_TOOL_OK;
}

Test (tools, registry_validates_names_and_duplicates)
{
  struct securer_tools *t = securer_tools_new ();
  securer_err_t err = NULL;
  struct securer_tool_arg ab[] = { { "a", SECURER_ARG_NUMERIC }, { "b", SECURER_ARG_INTEGER } };
  cr_assert_eq (securer_tools_add (t, "add", "Add", ab, 2, nop, NULL, &err), 0);
  cr_assert_eq (securer_tools_add (t, "add", "again", ab, 2, nop, NULL, &err), -1);
  cr_assert_eq (securer_error_errno (err), EEXIST);
  securer_error_free (&err);
  cr_assert_eq (securer_tools_add (t, "bad name", "", NULL, 0, nop, NULL, &err), -1);
  securer_error_free (&err);
  cr_assert_eq (securer_tools_add (t, "system", "", NULL, 0, nop, NULL, &err), 0);
  struct securer_tool_arg dup[] = { { "x", SECURER_ARG_ANY }, { "x", SECURER_ARG_ANY } };
  cr_assert_eq (securer_tools_add (t, "f", "", dup, 2, nop, NULL, &err), -1);
  cr_assert_eq (securer_error_errno (err), EEXIST);
  securer_error_free (&err);
  struct securer_tool_arg badarg[] = { { "x y", SECURER_ARG_ANY } };
  cr_assert_eq (securer_tools_add (t, "g", "", badarg, 1, nop, NULL, &err), -1);
  securer_error_free (&err);
  cr_assert_eq (securer_tools_count (t), 2);

  const struct tool_def *d = securer_tools_find (t, "add");
  cr_assert_not_null (d);
  json_t *ok = load ("{\"a\":{\"t\":\"int\",\"v\":[1]},\"b\":{\"t\":\"int\",\"v\":[2]}}");
  cr_assert_eq (securer_tool_check_args (d, ok, &err), 0);
  json_t *wrongtype = load ("{\"a\":{\"t\":\"chr\",\"v\":[\"1\"]}}");
  cr_assert_eq (securer_tool_check_args (d, wrongtype, &err), -1);
  cr_assert (strstr (securer_error_message (err), "must be numeric, got chr") != NULL);
  securer_error_free (&err);
  json_t *unknown = load ("{\"c\":null}");
  cr_assert_eq (securer_tool_check_args (d, unknown, &err), -1);
  cr_assert (strstr (securer_error_message (err), "unexpected argument 'c'") != NULL);
  securer_error_free (&err);
  json_decref (ok);
  json_decref (wrongtype);
  json_decref (unknown);

  char *hello = securer_proto_hello (t, 1024, 3);
  json_t *h = load (hello);
  cr_assert_str_eq (json_string_value (json_object_get (json_array_get (json_object_get (h, "tools"), 0), "name")), "add");
  cr_assert_eq (json_integer_value (json_object_get (h, "max_message")), 1024);
  cr_assert_eq (json_integer_value (json_object_get (h, "cpus")), 3);
  json_decref (h);
  free (hello);
  securer_tools_unref (t);
}

/* ---- raw vectors and plots ------------------------------------------------ */

Test (value, raw_vectors_are_canonical_base64)
{
  const char *good[] = {
    "{\"t\":\"raw\",\"v\":\"\"}",
    "{\"t\":\"raw\",\"v\":\"AQID\"}",
    "{\"t\":\"raw\",\"v\":\"AQ==\",\"n\":[\"a\"]}",
    "{\"t\":\"raw\",\"v\":\"AQI=\",\"dim\":[2,1],\"attr\":{\"note\":{\"t\":\"chr\",\"v\":[\"x\"]}}}",
    "{\"t\":\"raw\",\"v\":\"/+8=\"}",
    NULL,
  };
  const char *bad[] = {
    "{\"t\":\"raw\",\"v\":[1,2]}",            /* bytes travel as one string */
    "{\"t\":\"raw\",\"v\":\"AQ\"}",           /* unpadded */
    "{\"t\":\"raw\",\"v\":\"AR==\"}",         /* unused bits set: a second spelling of 01 */
    "{\"t\":\"raw\",\"v\":\"AQI\\nAw==\"}",   /* a line break */
    "{\"t\":\"raw\",\"v\":\"A=QI\"}",         /* padding inside */
    "{\"t\":\"raw\",\"v\":\"AQ-_\"}",         /* the URL alphabet */
    "{\"t\":\"raw\",\"v\":\"AQID\",\"n\":[\"a\"]}",
    "{\"t\":\"raw\",\"v\":\"AQID\",\"dim\":[2,2]}",
    "{\"t\":\"raw\",\"v\":\"AQID\",\"levels\":[\"a\"]}",
    NULL,
  };
  expect_values (good, bad);
  securer_err_t err = NULL;
  /* Plain JSON has no bytes: the base64 text, whose size is counted. */
  json_t *v = load ("{\"t\":\"raw\",\"v\":\"AQID\",\"n\":[\"a\",\"b\",\"c\"]}");
  json_t *p = securer_value_to_plain_max (v, 64, &err);
  cr_assert_str_eq (json_string_value (p), "AQID");
  json_decref (p);
  cr_assert_null (securer_value_to_plain_max (v, 5, &err), "a 6-byte string fits in 5");
  securer_error_free (&err);
  json_decref (v);
  size_t n;
  unsigned char head[2];
  cr_assert_eq (securer_base64_check ("/+8=", 4, &n, head, sizeof head), 0);
  cr_assert_eq (n, 2);
  cr_assert (head[0] == 0xff && head[1] == 0xef);
}

/* The first bytes of a PNG (signature and the start of IHDR), in base64. */
#define PNG_B64 "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"

Test (protocol, plot_messages)
{
  struct proto_msg m;
  securer_err_t err = NULL;
  cr_assert_eq (parse ("{\"type\":\"plot\",\"id\":4,\"format\":\"png\",\"width\":480,\"height\":320,\"data\":\""
                       PNG_B64 "\"}", &m, &err), 0, "%s", err ? securer_error_message (err) : "");
  cr_assert_eq (m.type, PROTO_PLOT);
  cr_assert_eq (m.id, 4);
  cr_assert_eq (m.plot_format, SECURER_PLOT_PNG);
  cr_assert_eq (m.plot_width, 480);
  cr_assert_eq (m.plot_height, 320);
  cr_assert_eq (m.plot_bytes, 24);
  cr_assert_eq (m.plot_data_len, strlen (PNG_B64));
  securer_proto_msg_clear (&m);
  /* "<svg" */
  cr_assert_eq (parse ("{\"type\":\"plot\",\"id\":4,\"format\":\"svg\",\"width\":1,\"height\":1,\"data\":\"PHN2Zw==\"}",
                       &m, &err), 0, "%s", err ? securer_error_message (err) : "");
  cr_assert_eq (m.plot_format, SECURER_PLOT_SVG);
  securer_proto_msg_clear (&m);
  expect_reject ("{\"type\":\"plot\",\"id\":4,\"format\":\"png\",\"width\":1,\"height\":1,\"data\":\"PHN2Zw==\"}",
                 "is no png image");
  expect_reject ("{\"type\":\"plot\",\"id\":4,\"format\":\"svg\",\"width\":1,\"height\":1,\"data\":\"" PNG_B64 "\"}",
                 "is no svg image");
  expect_reject ("{\"type\":\"plot\",\"id\":4,\"format\":\"pdf\",\"width\":1,\"height\":1,\"data\":\"" PNG_B64 "\"}",
                 "\"format\"");
  expect_reject ("{\"type\":\"plot\",\"id\":4,\"format\":\"none\",\"width\":1,\"height\":1,\"data\":\"" PNG_B64 "\"}",
                 "\"format\"");
  expect_reject ("{\"type\":\"plot\",\"id\":4,\"format\":\"png\",\"width\":0,\"height\":1,\"data\":\"" PNG_B64 "\"}",
                 "\"width\"");
  expect_reject ("{\"type\":\"plot\",\"id\":4,\"format\":\"png\",\"width\":1,\"height\":10001,\"data\":\"" PNG_B64 "\"}",
                 "\"height\"");
  expect_reject ("{\"type\":\"plot\",\"id\":4,\"format\":\"png\",\"width\":1,\"height\":1,\"data\":\"iVBO\\n\"}",
                 "base64");
  expect_reject ("{\"type\":\"plot\",\"id\":4,\"format\":\"png\",\"width\":1,\"height\":1,\"data\":7}", "base64");
  expect_reject ("{\"type\":\"plot\",\"id\":4,\"format\":\"png\",\"width\":1,\"height\":1,\"data\":\"" PNG_B64
                 "\",\"path\":\"/etc/passwd\"}", "unexpected key");
  /* What R did not send, counted in the result and the error. */
  cr_assert_eq (parse ("{\"type\":\"result\",\"id\":1,\"visible\":true,\"value\":null,\"plots_dropped\":3}", &m, &err), 0);
  cr_assert_eq (m.plots_dropped, 3);
  securer_proto_msg_clear (&m);
  cr_assert_eq (parse ("{\"type\":\"error\",\"id\":1,\"kind\":\"error\",\"message\":\"x\",\"plots_dropped\":2}", &m, &err), 0);
  cr_assert_eq (m.plots_dropped, 2);
  securer_proto_msg_clear (&m);
  expect_reject ("{\"type\":\"result\",\"id\":1,\"visible\":true,\"value\":null,\"plots_dropped\":-1}", "plots_dropped");
  expect_reject ("{\"type\":\"error\",\"id\":1,\"kind\":\"error\",\"message\":\"x\",\"plots_dropped\":\"2\"}",
                 "plots_dropped");
}

/* The execute message tells R the plot options and caps; none when off. */
Test (protocol, execute_carries_the_plot_options)
{
  struct securer_exec_opts xo = { .plot_format = SECURER_PLOT_SVG, .plot_width = 300, .plot_height = 200,
                                  .plot_res = 96, .max_plots = 7, .max_plot_bytes = 1000 };
  char *msg = securer_proto_execute (3, "plot(1)", &xo);
  json_t *j = load (msg);
  json_t *p = json_object_get (j, "plots");
  cr_assert_str_eq (json_string_value (json_object_get (p, "format")), "svg");
  cr_assert_eq (json_integer_value (json_object_get (p, "width")), 300);
  cr_assert_eq (json_integer_value (json_object_get (p, "height")), 200);
  cr_assert_eq (json_integer_value (json_object_get (p, "res")), 96);
  cr_assert_eq (json_integer_value (json_object_get (p, "max")), 7);
  cr_assert_eq (json_integer_value (json_object_get (p, "max_bytes")), 1000);
  json_decref (j);
  free (msg);
  xo.plot_format = SECURER_PLOT_NONE;
  msg = securer_proto_execute (3, "plot(1)", &xo);
  j = load (msg);
  cr_assert (json_is_null (json_object_get (j, "plots")));
  json_decref (j);
  free (msg);
}

/* A reply keeps its plots while they fit after the text, and counts the
 * rest; the value and the output lines come first. */
Test (result, plots_fit_the_reply_or_are_counted)
{
  char data[4001];
  memset (data, 'A', sizeof data - 1);
  data[sizeof data - 1] = '\0';
  struct securer_plot plots[3];
  for (int i = 0; i < 3; i++)
    plots[i] = (struct securer_plot) { .format = SECURER_PLOT_PNG, .width = 480, .height = 480, .data = data,
                                       .bytes = 3000 };
  struct securer_output_line line = { .stream = SECURER_STDOUT, .text = (char *) "hello" };
  json_t *value = load ("{\"t\":\"dbl\",\"v\":[1]}");
  struct securer_result r = { .status = SECURER_EXEC_OK, .value = value, .output = &line, .n_output = 1,
                              .plots = plots, .n_plots = 3, .plots_dropped = 2 };
  json_t *o = securer_result_json (&r, "line", false, 1 << 20);
  cr_assert_eq (json_array_size (json_object_get (o, "plots")), 3);
  cr_assert_eq (json_integer_value (json_object_get (o, "plots_dropped")), 2);
  json_t *first = json_array_get (json_object_get (o, "plots"), 0);
  cr_assert_str_eq (json_string_value (json_object_get (first, "format")), "png");
  cr_assert_eq (json_integer_value (json_object_get (first, "bytes")), 3000);
  cr_assert_eq (json_string_length (json_object_get (first, "data")), 4000);
  json_decref (o);
  /* Room for the value, the line and two plots: the third is counted. */
  o = securer_result_json (&r, "line", false, 9700);
  cr_assert_eq (json_array_size (json_object_get (o, "plots")), 2, "%zu plots",
                json_array_size (json_object_get (o, "plots")));
  cr_assert_eq (json_integer_value (json_object_get (o, "plots_dropped")), 3);
  cr_assert_eq (json_array_size (json_object_get (o, "output")), 1);
  cr_assert (json_dumpb (o, NULL, 0, JSON_COMPACT | JSON_REAL_PRECISION (17)) <= 9700);
  json_decref (o);
  json_decref (value);
}
