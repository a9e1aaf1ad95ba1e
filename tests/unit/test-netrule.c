/* The words of `network allow`/`network deny`, the policy lines that
 * carry them (diagnostics, show, JSON) and the decisions made with them. */
#include <config.h>

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "securer.h"
#include "policy-test.h"

static void
roundtrip (const char *in, const char *canon)
{
  struct securer_net_rule r;
  const char *why = NULL;
  cr_assert_eq (securer_net_rule_parse (in, false, &r, &why), 0, "%s: %s", in, why);
  char *f = securer_net_rule_format (&r);
  cr_assert_str_eq (f, canon, "%s", in);
  free (f);
  securer_net_rule_clear (&r);
}

static void
refused (const char *in, const char *why_part)
{
  struct securer_net_rule r;
  const char *why = NULL;
  cr_assert_eq (securer_net_rule_parse (in, false, &r, &why), -1, "%s was accepted", in);
  cr_assert_not_null (strstr (why, why_part), "%s: %s", in, why);
}

Test (netrule, words_parse_to_their_canonical_form)
{
  roundtrip ("API.Example.org", "api.example.org");
  roundtrip ("api.example.org.", "api.example.org");
  roundtrip ("api.example.org:443", "api.example.org:443");
  roundtrip ("*.example.org:8000-8100", "*.example.org:8000-8100");
  roundtrip ("10.0.0.0/8:*", "10.0.0.0/8:*");
  roundtrip ("192.0.2.7", "192.0.2.7");
  roundtrip ("[2001:db8::1]:8443", "[2001:db8::1]:8443");
  roundtrip ("[2001:db8::/32]", "[2001:db8::/32]");
  roundtrip ("2001:db8::/32", "[2001:db8::/32]");
}

Test (netrule, bad_words_say_what_is_wrong)
{
  refused ("api.example.org:0", "port is a number from 1 to 65535");
  refused ("api.example.org:70000", "port is a number from 1 to 65535");
  refused ("api.example.org:9-3", "low to high");
  refused ("10.0.0.1/8", "bits set past its prefix");
  refused ("10.0.0.0/33", "prefix length is 0 to 32");
  refused ("exa mple.org", "not a host name");
  refused ("-bad.org", "not a host name");
  refused ("*example.org", "wildcard is *.DOMAIN");
  refused ("[10.0.0.1]", "brackets are for IPv6");
  refused ("1.2.3", "not a host name");
}

static struct securer_policy *
load (const char *text)
{
  char *d = NULL;
  struct securer_policy *p = load_text ("t.policy", text, &d);
  cr_assert_not_null (p, "%s", d);
  free (d);
  return p;
}

static enum securer_net_verdict
by_addr (const struct securer_policy *p, const char *ip, int port, bool by_name)
{
  struct sockaddr_in6 s6;
  struct sockaddr_in s4;
  memset (&s6, 0, sizeof s6);
  memset (&s4, 0, sizeof s4);
  if (inet_pton (AF_INET, ip, &s4.sin_addr) == 1)
    {
      s4.sin_family = AF_INET;
      s4.sin_port = htons ((uint16_t) port);
      return securer_net_decide_addr (p, &s4, by_name, NULL);
    }
  cr_assert_eq (inet_pton (AF_INET6, ip, &s6.sin6_addr), 1);
  s6.sin6_family = AF_INET6;
  s6.sin6_port = htons ((uint16_t) port);
  return securer_net_decide_addr (p, &s6, by_name, NULL);
}

Test (netrule, deny_wins_and_names_need_name_rules)
{
  struct securer_policy *p = load ("namespaces all\nseccomp off\nnetwork allow api.example.org *.cran.r-project.org:443"
                                   " 10.1.0.0/16:5432\nnetwork deny bad.cran.r-project.org\n");
  cr_assert_eq (p->network, SECURER_NET_ALLOW);
  cr_assert_eq (securer_net_decide_name (p, "api.example.org", 443, NULL), SECURER_NET_ALLOWED);
  cr_assert_eq (securer_net_decide_name (p, "api.example.org", 80, NULL), SECURER_NET_ALLOWED);
  cr_assert_eq (securer_net_decide_name (p, "api.example.org", 8080, NULL), SECURER_NET_DENIED_NO_RULE);
  cr_assert_eq (securer_net_decide_name (p, "a.b.cran.r-project.org", 443, NULL), SECURER_NET_ALLOWED);
  /* a wildcard is below its domain, not the domain, nor a look-alike */
  cr_assert_eq (securer_net_decide_name (p, "cran.r-project.org", 443, NULL), SECURER_NET_DENIED_NO_RULE);
  cr_assert_eq (securer_net_decide_name (p, "evilcran.r-project.org", 443, NULL), SECURER_NET_DENIED_NO_RULE);
  cr_assert_eq (securer_net_decide_name (p, "bad.cran.r-project.org", 443, NULL), SECURER_NET_DENIED_RULE);
  /* an address literal is decided by address rules only */
  cr_assert_eq (securer_net_decide_name (p, "10.1.2.3", 5432, NULL), SECURER_NET_ALLOWED);
  cr_assert_eq (securer_net_decide_name (p, "10.2.0.1", 5432, NULL), SECURER_NET_DENIED_NO_RULE);
  cr_assert_eq (securer_net_decide_name (p, "[::ffff:10.1.2.3]", 5432, NULL), SECURER_NET_ALLOWED);
  securer_policy_free (p);
}

Test (netrule, what_a_name_resolves_to_is_decided_again)
{
  struct securer_policy *p = load ("namespaces all\nseccomp off\nnetwork allow api.example.org 127.0.0.1:443\n"
                                   "network deny 203.0.113.0/24:*\n");
  /* public: allowed for a name the policy allows */
  cr_assert_eq (by_addr (p, "198.51.100.7", 443, true), SECURER_NET_ALLOWED);
  /* the host's own networks: refused unless the address is allowed */
  static const char *const private_ones[] = { "10.0.0.1", "172.16.5.5", "192.168.1.1", "169.254.169.254",
                                              "127.0.0.2", "100.64.0.1", "0.0.0.0", "::1", "fe80::1",
                                              "fd00::1", "::ffff:192.168.1.1", "64:ff9b::a00:1" };
  for (size_t i = 0; i < sizeof private_ones / sizeof *private_ones; i++)
    cr_assert_eq (by_addr (p, private_ones[i], 443, true), SECURER_NET_DENIED_PRIVATE, "%s", private_ones[i]);
  cr_assert_eq (by_addr (p, "127.0.0.1", 443, true), SECURER_NET_ALLOWED);
  cr_assert_eq (by_addr (p, "203.0.113.9", 443, true), SECURER_NET_DENIED_RULE);
  /* asked for by address: only address rules allow */
  cr_assert_eq (by_addr (p, "198.51.100.7", 443, false), SECURER_NET_DENIED_NO_RULE);
  securer_policy_free (p);
}

static char *
diags_of (const char *text)
{
  char *d = NULL;
  securer_policy_free (load_text ("t.policy", text, &d));
  return d;
}

Test (netrule, policy_lines_report_their_place)
{
  char *s = diags_of ("namespaces all\nseccomp off\nnetwork allow api.example.org bad_port:x\n");
  cr_assert_str_eq (s, "t.policy:3:31: error: invalid network allow entry 'bad_port:x': a port is a number from 1 "
                       "to 65535\n");
  free (s);
  s = diags_of ("namespaces all\nseccomp off\nnetwork allow\n");
  cr_assert_not_null (strstr (s, "t.policy:3:14: error: expected host names"), "%s", s);
  free (s);
  s = diags_of ("namespaces all\nseccomp off\nnetwork none\nnetwork allow a.example.org\n");
  cr_assert_not_null (strstr (s, "t.policy:4:1: warning: network allow replaces network none at t.policy:3:1"), "%s",
                      s);
  free (s);
}

Test (netrule, show_and_json_carry_the_rules)
{
  struct securer_policy *p = load ("namespaces all\nseccomp off\nnetwork allow b.example.org:443 10.0.0.0/8:*\n"
                                   "network deny c.example.org\n");
  char *text = securer_policy_to_text (p);
  cr_assert_not_null (strstr (text, "network allow b.example.org:443\nnetwork allow 10.0.0.0/8:*\n"
                                    "network deny c.example.org\n"),
                      "%s", text);
  cr_assert_null (strstr (text, "network none"));
  char *json = securer_policy_to_json_text (p, 0);
  struct securer_policy *q = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_from_json_text ("p.json", json, strlen (json), &q, &err), 0, "%s",
                securer_error_message (err));
  cr_assert_eq (q->network, SECURER_NET_ALLOW);
  cr_assert_eq (q->n_net_rules, 3);
  cr_assert_eq (securer_net_decide_name (q, "c.example.org", 443, NULL), SECURER_NET_DENIED_RULE);
  cr_assert_eq (securer_net_decide_name (q, "b.example.org", 443, NULL), SECURER_NET_ALLOWED);
  securer_policy_free (q);
  free (json);
  free (text);
  securer_policy_free (p);
}

/* `policy test` with net lines, as a policy author runs it. */
Test (netrule, policy_test_checks_net_expectations)
{
  char dir[] = "/tmp/securer-netrule-XXXXXX";
  cr_assert_not_null (mkdtemp (dir));
  char pol[64], exp[64], out[64], cmd[512];
  snprintf (pol, sizeof pol, "%s/p.policy", dir);
  snprintf (exp, sizeof exp, "%s/p.expect", dir);
  snprintf (out, sizeof out, "%s/out", dir);
  FILE *f = fopen (pol, "w");
  fprintf (f, "namespaces all\nseccomp off\nnetwork allow api.example.org *.cran.r-project.org:443\n"
              "network deny bad.cran.r-project.org\n");
  fclose (f);
  f = fopen (exp, "w");
  fprintf (f, "net api.example.org -> allowed\nnet a.cran.r-project.org:443 -> allowed\n"
              "net bad.cran.r-project.org:443 -> denied\nnet 10.0.0.1:443 -> allowed\n");
  fclose (f);
  const char *bin = getenv ("SECURER_BIN") ? getenv ("SECURER_BIN") : SECURER_ABS_BUILDDIR "/securer";
  snprintf (cmd, sizeof cmd, "'%s' policy test '%s' '%s' > '%s' 2>&1", bin, pol, exp, out);
  int ws = system (cmd);
  cr_assert (WIFEXITED (ws) && WEXITSTATUS (ws) == 1, "status %d", ws);
  f = fopen (out, "r");
  char buf[4096] = "";
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose (f);
  cr_assert_not_null (strstr (buf, ":3: ok: net bad.cran.r-project.org:443 -> denied\n"), "%s", buf);
  cr_assert_not_null (strstr (buf, ":4:1: error: expected `net 10.0.0.1:443 -> allowed`, got denied (no rule "
                                   "allows it)\n"), "%s", buf);
  cr_assert_not_null (strstr (buf, "4 expectations, 1 failed"), "%s", buf);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  (void) !system (cmd);
}

Test (netrule, network_limits_are_read_shown_and_carried)
{
  struct securer_policy *p = load ("namespaces all\nseccomp off\nnetwork allow a.example.org\n"
                                   "network limit connections 8\nnetwork limit bytes 10M\nnetwork limit idle 5s\n");
  cr_assert_eq (p->net_limits.connections, 8);
  cr_assert_eq (p->net_limits.bytes, 10u << 20);
  cr_assert_eq (p->net_limits.idle_ms, 5000);
  char *text = securer_policy_to_text (p);
  cr_assert_not_null (strstr (text, "network limit connections 8\nnetwork limit bytes 10485760\n"
                                    "network limit idle 5000ms\n"), "%s", text);
  char *json = securer_policy_to_json_text (p, 0);
  struct securer_policy *q = NULL;
  securer_err_t err = NULL;
  cr_assert_eq (securer_policy_from_json_text ("p.json", json, strlen (json), &q, &err), 0, "%s",
                securer_error_message (err));
  cr_assert_eq (memcmp (&q->net_limits, &p->net_limits, sizeof p->net_limits), 0);
  securer_policy_free (q);
  free (json);
  free (text);
  securer_policy_free (p);
  char *d = diags_of ("namespaces all\nseccomp off\nnetwork limit connections 0\nnetwork limit idle 10ms\n"
                      "network limit bytes 12\nnetwork limit speed 3\n");
  cr_assert_not_null (strstr (d, "t.policy:3:27: error: the proxy needs at least 1 connection"), "%s", d);
  cr_assert_not_null (strstr (d, "t.policy:4:20: error: an idle time below 1s"), "%s", d);
  cr_assert_not_null (strstr (d, "t.policy:5:21: error: a byte budget below 1K"), "%s", d);
  cr_assert_not_null (strstr (d, "t.policy:6:15: error: unknown network limit 'speed'"), "%s", d);
  free (d);
}
