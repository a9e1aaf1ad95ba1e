/* The words of `network allow` / `network deny` and the decisions made
 * with them.  Pure functions of the policy: the proxy (linux/netproxy.c)
 * asks them about every destination, `policy test` about expectation
 * lines, and the same parser reads policy files, the JSON form, serve's
 * requests and `securer run --allow-host`.
 *
 * Deny rules win over allow rules.  A name is allowed by a name or
 * wildcard rule; an address (a literal, or what an allowed name resolved
 * to) by an address rule.  A name that resolves into private, loopback or
 * link-local space is refused unless an address rule allows that address:
 * otherwise any name an attacker controls could be pointed at the host's
 * own services (DNS rebinding). */
#include <config.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "securer/policy.h"

int
securer_net_mode_rank (enum securer_net_mode m)
{
  switch (m)
    {
    case SECURER_NET_NONE:
      return 0;
    case SECURER_NET_LOOPBACK:
      return 1;
    case SECURER_NET_ALLOW:
      return 2;
    case SECURER_NET_HOST:
      return 3;
    }
  return 3;
}

void
securer_net_rule_clear (struct securer_net_rule *r)
{
  free (r->host);
  r->host = NULL;
}

static int
parse_port (const char *s, uint16_t *out, const char **why)
{
  if (*s < '0' || *s > '9')
    {
      *why = "a port is a number from 1 to 65535";
      return -1;
    }
  unsigned long v = 0;
  for (; *s >= '0' && *s <= '9'; s++)
    {
      v = v * 10 + (unsigned long) (*s - '0');
      if (v > 65535)
        break;
    }
  if (*s != '\0' || v == 0 || v > 65535)
    {
      *why = "a port is a number from 1 to 65535";
      return -1;
    }
  *out = (uint16_t) v;
  return 0;
}

/* ":443", ":8000-8100", ":*" (after the colon); NULL: the default ports. */
static int
parse_ports (const char *s, struct securer_net_rule *r, const char **why)
{
  r->port_lo = r->port_hi = 0;
  if (s == NULL)
    return 0;
  if (strcmp (s, "*") == 0)
    {
      r->port_lo = 1;
      r->port_hi = 65535;
      return 0;
    }
  char buf[16];
  if (strlen (s) >= sizeof buf)
    {
      *why = "a port is a number from 1 to 65535, a range LOW-HIGH or *";
      return -1;
    }
  strcpy (buf, s);
  char *dash = strchr (buf, '-');
  if (dash != NULL)
    *dash = '\0';
  if (parse_port (buf, &r->port_lo, why) < 0 || (dash && parse_port (dash + 1, &r->port_hi, why) < 0))
    return -1;
  if (dash == NULL)
    r->port_hi = r->port_lo;
  else if (r->port_hi < r->port_lo)
    {
      *why = "a port range goes from low to high";
      return -1;
    }
  return 0;
}

static bool
host_bits_clear (const uint8_t *a, unsigned len, unsigned prefix)
{
  for (unsigned bit = prefix; bit < len * 8; bit++)
    if (a[bit / 8] & (0x80u >> (bit % 8)))
      return false;
  return true;
}

static int
parse_addr (const char *s, struct securer_net_rule *r, const char **why)
{
  char buf[INET6_ADDRSTRLEN + 8];
  if (strlen (s) >= sizeof buf)
    {
      *why = "not an address";
      return -1;
    }
  strcpy (buf, s);
  char *slash = strchr (buf, '/');
  if (slash != NULL)
    *slash = '\0';
  unsigned len;
  if (inet_pton (AF_INET, buf, r->addr) == 1)
    {
      r->family = AF_INET;
      len = 4;
    }
  else if (inet_pton (AF_INET6, buf, r->addr) == 1)
    {
      r->family = AF_INET6;
      len = 16;
    }
  else
    {
      *why = "not an IPv4 or IPv6 address";
      return -1;
    }
  r->kind = SECURER_NET_RULE_ADDR;
  r->prefix = (uint8_t) (len * 8);
  if (slash != NULL)
    {
      char *end;
      const char *p = slash + 1;
      long v = (*p >= '0' && *p <= '9') ? strtol (p, &end, 10) : -1;
      if (v < 0 || *end != '\0' || v > (long) len * 8)
        {
          *why = len == 4 ? "a prefix length is 0 to 32" : "a prefix length is 0 to 128";
          return -1;
        }
      r->prefix = (uint8_t) v;
      if (!host_bits_clear (r->addr, len, r->prefix))
        {
          *why = "the address has bits set past its prefix length (write the network's first address)";
          return -1;
        }
    }
  return 0;
}

/* Letters, digits, '-' and '_' in labels of 1..63, 253 in all, and not
 * all digits in the last label (that would be an address). */
static int
parse_name (const char *s, struct securer_net_rule *r, const char **why)
{
  size_t n = strlen (s);
  if (n > 0 && s[n - 1] == '.')
    n--;  /* the root's dot */
  if (n == 0 || n > 253)
    {
      *why = "a host name has 1 to 253 characters";
      return -1;
    }
  char *h = malloc (n + 2);
  if (h == NULL)
    {
      *why = "out of memory";
      return -1;
    }
  size_t label = 0;
  bool digits_only = true;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char ch = (unsigned char) s[i];
      if (ch == '.')
        {
          if (label == 0 || s[i - 1] == '-')
            goto bad;
          label = 0;
          digits_only = true;
        }
      else if (isalnum (ch) || ch == '-' || ch == '_')
        {
          if ((label == 0 && ch == '-') || ++label > 63)
            goto bad;
          if (!isdigit (ch))
            digits_only = false;
        }
      else
        goto bad;
      h[i] = (char) tolower (ch);
    }
  if (label == 0 || s[n - 1] == '-' || digits_only)
    goto bad;
  h[n] = '\0';
  free (r->host);
  r->host = h;
  return 0;
bad:
  free (h);
  *why = "not a host name (letters, digits, '-' and '.'), an address, or *.DOMAIN";
  return -1;
}

int
securer_net_rule_parse (const char *text, bool deny, struct securer_net_rule *out, const char **why)
{
  struct securer_net_rule r;
  memset (&r, 0, sizeof r);
  r.deny = deny;
  *why = NULL;
  char *buf = strdup (text);
  if (buf == NULL)
    {
      *why = "out of memory";
      return -1;
    }
  int rc = -1;
  const char *host = buf, *ports = NULL;
  if (buf[0] == '[')
    {
      /* [2001:db8::1], [2001:db8::/32]:443 */
      char *close = strchr (buf, ']');
      if (close == NULL || (close[1] != '\0' && close[1] != ':'))
        {
          *why = "an IPv6 address in brackets is [ADDRESS] or [ADDRESS]:PORT";
          goto out;
        }
      *close = '\0';
      host = buf + 1;
      if (close[1] == ':')
        ports = close + 2;
      if (parse_addr (host, &r, why) < 0 || parse_ports (ports, &r, why) < 0)
        goto out;
      if (r.family != AF_INET6)
        {
          *why = "brackets are for IPv6 addresses";
          goto out;
        }
    }
  else
    {
      char *colon = strchr (buf, ':');
      if (colon != NULL && strchr (colon + 1, ':') != NULL)
        {
          /* A bare IPv6 address takes no port: brackets say where it ends. */
          if (parse_addr (buf, &r, why) < 0)
            goto out;
        }
      else
        {
          if (colon != NULL)
            {
              *colon = '\0';
              ports = colon + 1;
            }
          if (parse_ports (ports, &r, why) < 0)
            goto out;
          unsigned char probe[16];
          char *slash = strchr (buf, '/');
          if (slash != NULL)
            *slash = '\0';
          bool is_v4 = inet_pton (AF_INET, buf, probe) == 1;
          if (slash != NULL)
            *slash = '/';
          if (is_v4 || slash != NULL)
            {
              if (parse_addr (buf, &r, why) < 0)
                goto out;
            }
          else if (buf[0] == '*')
            {
              if (buf[1] != '.' || parse_name (buf + 2, &r, why) < 0)
                {
                  if (*why == NULL || buf[1] != '.')
                    *why = "a wildcard is *.DOMAIN (any name below DOMAIN)";
                  goto out;
                }
              /* Stored with its dot: the match is then a plain suffix
               * test that "badexample.org" cannot pass. */
              size_t hl = strlen (r.host);
              memmove (r.host + 1, r.host, hl + 1);
              r.host[0] = '.';
              r.kind = SECURER_NET_RULE_SUFFIX;
            }
          else if (parse_name (buf, &r, why) < 0)
            goto out;
          else
            r.kind = SECURER_NET_RULE_NAME;
        }
    }
  /* A deny without a port keeps the host closed on every port: what
   * someone writing `network deny tracker.example` means. */
  if (deny && r.port_lo == 0)
    {
      r.port_lo = 1;
      r.port_hi = 65535;
    }
  *out = r;
  r.host = NULL;
  rc = 0;
out:
  free (r.host);
  free (buf);
  return rc;
}

char *
securer_net_rule_format (const struct securer_net_rule *r)
{
  char host[INET6_ADDRSTRLEN + 8], ports[16] = "";
  const char *h = host;
  if (r->kind == SECURER_NET_RULE_ADDR)
    {
      char a[INET6_ADDRSTRLEN];
      if (inet_ntop (r->family, r->addr, a, sizeof a) == NULL)
        return NULL;
      unsigned full = r->family == AF_INET ? 32 : 128;
      char pfx[8] = "";
      if (r->prefix != full)
        snprintf (pfx, sizeof pfx, "/%u", r->prefix);
      snprintf (host, sizeof host, r->family == AF_INET6 ? "[%s%s]" : "%s%s", a, pfx);
    }
  else
    h = r->host;
  if (r->port_lo == 1 && r->port_hi == 65535)
    strcpy (ports, r->deny ? "" : ":*");
  else if (r->port_lo != 0 && r->port_lo == r->port_hi)
    snprintf (ports, sizeof ports, ":%u", r->port_lo);
  else if (r->port_lo != 0)
    snprintf (ports, sizeof ports, ":%u-%u", r->port_lo, r->port_hi);
  char *out = NULL;
  if (asprintf (&out, "%s%s%s", r->kind == SECURER_NET_RULE_SUFFIX ? "*" : "", h, ports) < 0)
    return NULL;
  return out;
}

static bool
port_matches (const struct securer_net_rule *r, uint16_t port)
{
  if (r->port_lo == 0)
    return port == 80 || port == 443;
  return port >= r->port_lo && port <= r->port_hi;
}

static bool
name_matches (const struct securer_net_rule *r, const char *host)
{
  if (r->kind == SECURER_NET_RULE_NAME)
    return strcmp (r->host, host) == 0;
  if (r->kind != SECURER_NET_RULE_SUFFIX)
    return false;
  size_t hl = strlen (host), sl = strlen (r->host);
  return hl > sl && strcmp (host + hl - sl, r->host) == 0;
}

/* The family, 4 or 16 address bytes and port of a sockaddr; an
 * IPv4-mapped IPv6 address counts as the IPv4 one. */
static bool
split_addr (const void *sa, int *family, uint8_t a[16], uint16_t *port)
{
  const struct sockaddr *s = sa;
  if (s->sa_family == AF_INET)
    {
      const struct sockaddr_in *in = sa;
      *family = AF_INET;
      memcpy (a, &in->sin_addr, 4);
      *port = ntohs (in->sin_port);
      return true;
    }
  if (s->sa_family == AF_INET6)
    {
      const struct sockaddr_in6 *in6 = sa;
      *port = ntohs (in6->sin6_port);
      if (IN6_IS_ADDR_V4MAPPED (&in6->sin6_addr))
        {
          *family = AF_INET;
          memcpy (a, in6->sin6_addr.s6_addr + 12, 4);
        }
      else
        {
          *family = AF_INET6;
          memcpy (a, in6->sin6_addr.s6_addr, 16);
        }
      return true;
    }
  return false;
}

static bool
prefix_matches (const uint8_t *net, unsigned prefix, const uint8_t *a)
{
  unsigned bytes = prefix / 8, bits = prefix % 8;
  if (memcmp (net, a, bytes) != 0)
    return false;
  if (bits == 0)
    return true;
  uint8_t mask = (uint8_t) (0xffu << (8 - bits));
  return (net[bytes] & mask) == (a[bytes] & mask);
}

static bool
addr_rule_matches (const struct securer_net_rule *r, int family, const uint8_t *a, uint16_t port)
{
  return r->kind == SECURER_NET_RULE_ADDR && r->family == family && port_matches (r, port)
         && prefix_matches (r->addr, r->prefix, a);
}

/* Space that is not the public internet: the host itself, its LANs and
 * link, carrier NAT, benchmarking, multicast and reserved blocks. */
static bool
is_private (int family, const uint8_t *a)
{
  static const struct {
    uint8_t net[4];
    unsigned prefix;
  } v4[] = {
    { { 0, 0, 0, 0 }, 8 },       { { 10, 0, 0, 0 }, 8 },     { { 100, 64, 0, 0 }, 10 },
    { { 127, 0, 0, 0 }, 8 },     { { 169, 254, 0, 0 }, 16 }, { { 172, 16, 0, 0 }, 12 },
    { { 192, 0, 0, 0 }, 24 },    { { 192, 168, 0, 0 }, 16 }, { { 198, 18, 0, 0 }, 15 },
    { { 224, 0, 0, 0 }, 4 },     { { 240, 0, 0, 0 }, 4 },
  };
  if (family == AF_INET)
    {
      for (size_t i = 0; i < sizeof v4 / sizeof *v4; i++)
        if (prefix_matches (v4[i].net, v4[i].prefix, a))
          return true;
      return false;
    }
  static const uint8_t unspec[16] = { 0 };
  static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
  if (memcmp (a, unspec, 15) == 0 && (a[15] == 0 || a[15] == 1))
    return true;                          /* :: and ::1 */
  if ((a[0] & 0xfe) == 0xfc)             /* fc00::/7 unique local */
    return true;
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)  /* fe80::/10 link-local */
    return true;
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)  /* fec0::/10 site-local (deprecated) */
    return true;
  if (a[0] == 0xff)                      /* multicast */
    return true;
  if (memcmp (a, nat64, 12) == 0)        /* 64:ff9b::/96 carries an IPv4 address */
    return is_private (AF_INET, a + 12);
  if (a[0] == 0x20 && a[1] == 0x02)      /* 2002::/16 6to4 carries one too */
    return is_private (AF_INET, a + 2);
  return false;
}

static bool
parse_literal (const char *host, int *family, uint8_t a[16])
{
  char buf[INET6_ADDRSTRLEN + 2];
  size_t n = strlen (host);
  if (n >= sizeof buf)
    return false;
  if (host[0] == '[' && n > 2 && host[n - 1] == ']')
    {
      memcpy (buf, host + 1, n - 2);
      buf[n - 2] = '\0';
    }
  else
    strcpy (buf, host);
  if (inet_pton (AF_INET, buf, a) == 1)
    {
      *family = AF_INET;
      return true;
    }
  if (inet_pton (AF_INET6, buf, a) == 1)
    {
      *family = AF_INET6;
      if (IN6_IS_ADDR_V4MAPPED ((struct in6_addr *) a))
        {
          memmove (a, a + 12, 4);
          *family = AF_INET;
        }
      return true;
    }
  return false;
}

enum securer_net_verdict
securer_net_decide_name (const struct securer_policy *p, const char *host, uint16_t port,
                         const struct securer_net_rule **rule)
{
  int family;
  uint8_t a[16];
  if (parse_literal (host, &family, a))
    {
      struct sockaddr_in6 sa6;
      struct sockaddr_in sa4;
      const void *sa;
      memset (&sa6, 0, sizeof sa6);
      memset (&sa4, 0, sizeof sa4);
      if (family == AF_INET)
        {
          sa4.sin_family = AF_INET;
          sa4.sin_port = htons (port);
          memcpy (&sa4.sin_addr, a, 4);
          sa = &sa4;
        }
      else
        {
          sa6.sin6_family = AF_INET6;
          sa6.sin6_port = htons (port);
          memcpy (&sa6.sin6_addr, a, 16);
          sa = &sa6;
        }
      return securer_net_decide_addr (p, sa, false, rule);
    }
  const struct securer_net_rule *allow = NULL;
  for (size_t i = 0; i < p->n_net_rules; i++)
    {
      const struct securer_net_rule *r = &p->net_rules[i];
      if (!name_matches (r, host) || !port_matches (r, port))
        continue;
      if (r->deny)
        {
          if (rule != NULL)
            *rule = r;
          return SECURER_NET_DENIED_RULE;
        }
      if (allow == NULL)
        allow = r;
    }
  if (rule != NULL)
    *rule = allow;
  return allow != NULL ? SECURER_NET_ALLOWED : SECURER_NET_DENIED_NO_RULE;
}

enum securer_net_verdict
securer_net_decide_addr (const struct securer_policy *p, const void *addr, bool by_name,
                         const struct securer_net_rule **rule)
{
  int family;
  uint8_t a[16];
  uint16_t port;
  if (rule != NULL)
    *rule = NULL;
  if (!split_addr (addr, &family, a, &port))
    return SECURER_NET_DENIED_NO_RULE;
  const struct securer_net_rule *allow = NULL;
  for (size_t i = 0; i < p->n_net_rules; i++)
    {
      const struct securer_net_rule *r = &p->net_rules[i];
      if (!addr_rule_matches (r, family, a, port))
        continue;
      if (r->deny)
        {
          if (rule != NULL)
            *rule = r;
          return SECURER_NET_DENIED_RULE;
        }
      if (allow == NULL)
        allow = r;
    }
  if (allow != NULL)
    {
      if (rule != NULL)
        *rule = allow;
      return SECURER_NET_ALLOWED;
    }
  if (!by_name)
    return SECURER_NET_DENIED_NO_RULE;
  return is_private (family, a) ? SECURER_NET_DENIED_PRIVATE : SECURER_NET_ALLOWED;
}

const char *
securer_net_verdict_text (enum securer_net_verdict v)
{
  switch (v)
    {
    case SECURER_NET_ALLOWED:
      return "allowed";
    case SECURER_NET_DENIED_RULE:
      return "denied by a deny rule";
    case SECURER_NET_DENIED_PRIVATE:
      return "denied: the name resolves to a private, loopback or link-local address";
    case SECURER_NET_DENIED_NO_RULE:
      break;
    }
  return "denied: no rule allows it";
}

/* The TCP socket rules a `network allow` policy's command needs (the
 * resolver adds them when it reads the policy; here for a policy
 * widened after it was read). */
static int
add_socket_rules (struct securer_policy *p)
{
  static const uint64_t families[] = { AF_INET, AF_INET6 };
  for (size_t f = 0; f < 2; f++)
    {
      struct securer_arg_cond c[2] = {
        { .arg = 0, .op = SECURER_CMP_EQ, .value = families[f] },
        { .arg = 1, .op = SECURER_CMP_MASKED_EQ, .value = SOCK_STREAM, .mask = 0xf },
      };
      bool have = false;
      for (size_t i = 0; i < p->seccomp.n_rules && !have; i++)
        {
          const struct securer_syscall_rule *r = &p->seccomp.rules[i];
          have = strcmp (r->name, "socket") == 0 && r->action.type == SECURER_ACT_ALLOW && r->n_conds == 2
                 && r->conds[0].arg == 0 && r->conds[0].op == SECURER_CMP_EQ && r->conds[0].value == families[f]
                 && r->conds[1].arg == 1 && r->conds[1].op == SECURER_CMP_MASKED_EQ
                 && r->conds[1].value == SOCK_STREAM && r->conds[1].mask == 0xf;
        }
      if (have)
        continue;
      struct securer_syscall_rule *n = realloc (p->seccomp.rules, (p->seccomp.n_rules + 1) * sizeof *n);
      if (n == NULL)
        return -1;
      p->seccomp.rules = n;
      struct securer_syscall_rule *r = &n[p->seccomp.n_rules];
      memset (r, 0, sizeof *r);
      r->name = strdup ("socket");
      if (r->name == NULL)
        return -1;
      r->action.type = SECURER_ACT_ALLOW;
      r->n_conds = 2;
      memcpy (r->conds, c, sizeof c);
      p->seccomp.n_rules++;
    }
  return 0;
}

int
securer_policy_add_net_rules (struct securer_policy *p, const char *const *words, size_t n, bool deny,
                              securer_err_t *err)
{
  if (n == 0)
    return 0;
  if (!(p->namespaces & SECURER_NS_NET))
    return securer_error_set (err, EINVAL, "network %s: the policy has no network namespace of its own",
                              deny ? "deny" : "allow");
  if (p->n_net_rules + n > 4096)
    return securer_error_set (err, E2BIG, "network %s: too many entries", deny ? "deny" : "allow");
  struct securer_net_rule *rules = realloc (p->net_rules, (p->n_net_rules + n) * sizeof *rules);
  if (rules == NULL)
    return securer_error_set (err, ENOMEM, "network rules");
  p->net_rules = rules;
  size_t added = 0;
  for (size_t i = 0; i < n; i++)
    {
      const char *why;
      if (securer_net_rule_parse (words[i], deny, &rules[p->n_net_rules + added], &why) < 0)
        {
          for (size_t k = 0; k < added; k++)
            securer_net_rule_clear (&rules[p->n_net_rules + k]);
          return securer_error_set (err, EINVAL, "network %s entry '%s': %s", deny ? "deny" : "allow", words[i],
                                    why);
        }
      added++;
    }
  p->n_net_rules += added;
  if (deny)
    return 0;
  p->network = SECURER_NET_ALLOW;
  /* Pending rules get them when they are resolved (resolve.c). */
  if (p->seccomp.enabled && p->deferred == NULL && add_socket_rules (p) < 0)
    return securer_error_set (err, ENOMEM, "network allow: socket rules");
  return 0;
}
