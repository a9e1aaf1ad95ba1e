/* `network allow`: real sandboxes (`securer run`) reaching servers through
 * the supervisor's proxy, and what they cannot reach.
 *
 * Every test runs in a network namespace of its own (Criterion forks a
 * process per test, which unshares one), with 198.51.100.1 and .2
 * (TEST-NET-2, public-looking addresses) on its loopback: the servers
 * listen there and on 127.0.0.1, nothing leaves the machine.  Names are
 * mapped by a hosts file the proxy is pointed at (SECURER_NET_HOSTS). */
#include <config.h>

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "run-util.h"

static char tmpdir[] = "/tmp/securer-netproxy-XXXXXX";
static char *hosts_file;

static const char *
securer_bin (void)
{
  const char *b = getenv ("SECURER_BIN");
  return b ? b : SECURER_ABS_BUILDDIR "/securer";
}

static const char *
srcdir (void)
{
  const char *s = getenv ("SECURER_SRCDIR");
  return s ? s : SECURER_ABS_SRCDIR;
}

/* ---- servers in this test's namespace ------------------------------------ */

static atomic_int private_hits;   /* connections the 127.0.0.1 server saw */
static char last_request[512];    /* first line the HTTP server got */
static pthread_mutex_t req_mu = PTHREAD_MUTEX_INITIALIZER;

enum server_kind { HTTP, ECHO, PRIVATE };
struct server {
  int fd;
  enum server_kind kind;
};

static void *
serve_conn (void *arg)
{
  struct server *sv = arg;
  int c = sv->fd;
  char buf[4096];
  if (sv->kind == ECHO)
    {
      ssize_t n;
      while ((n = read (c, buf, sizeof buf)) > 0)
        if (write (c, buf, (size_t) n) != n)
          break;
    }
  else
    {
      size_t got = 0;
      ssize_t n;
      while (got < sizeof buf - 1 && (n = read (c, buf + got, sizeof buf - 1 - got)) > 0)
        {
          got += (size_t) n;
          buf[got] = '\0';
          if (strstr (buf, "\r\n\r\n"))
            break;
        }
      buf[got] = '\0';
      pthread_mutex_lock (&req_mu);
      snprintf (last_request, sizeof last_request, "%.*s", (int) strcspn (buf, "\r\n"), buf);
      pthread_mutex_unlock (&req_mu);
      const char *body = sv->kind == PRIVATE ? "private" : "hello from api";
      dprintf (c, "HTTP/1.0 200 OK\r\nContent-Length: %zu\r\n\r\n%s", strlen (body), body);
    }
  close (c);
  free (sv);
  return NULL;
}

static void *
accept_loop (void *arg)
{
  struct server *l = arg;
  for (;;)
    {
      int c = accept (l->fd, NULL, NULL);
      if (c < 0)
        continue;
      if (l->kind == PRIVATE)
        atomic_fetch_add (&private_hits, 1);
      struct server *sv = malloc (sizeof *sv);
      sv->fd = c;
      sv->kind = l->kind;
      pthread_t t;
      pthread_create (&t, NULL, serve_conn, sv);
      pthread_detach (t);
    }
  return NULL;
}

static void
start_server (const char *ip, int port, enum server_kind kind)
{
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
  inet_pton (AF_INET, ip, &sa.sin_addr);
  cr_assert_eq (bind (fd, (struct sockaddr *) &sa, sizeof sa), 0, "bind %s:%d: %s", ip, port, strerror (errno));
  cr_assert_eq (listen (fd, 128), 0);
  struct server *l = malloc (sizeof *l);
  l->fd = fd;
  l->kind = kind;
  pthread_t t;
  pthread_create (&t, NULL, accept_loop, l);
  pthread_detach (t);
}

static void
setup (void)
{
  if (geteuid () != 0)
    cr_skip_test ("needs root: each test makes a network namespace with test addresses");
  if (access ("/usr/bin/curl", X_OK) != 0)
    cr_skip_test ("needs /usr/bin/curl (Debian package curl)");
  cr_assert_eq (unshare (CLONE_NEWNET), 0, "unshare(CLONE_NEWNET): %s", strerror (errno));
  cr_assert_eq (system ("ip link set lo up && ip addr add 198.51.100.1/32 dev lo"
                        " && ip addr add 198.51.100.2/32 dev lo"),
                0, "ip(8) could not set up the test addresses");
  cr_assert_not_null (mkdtemp (tmpdir));
  cr_assert (asprintf (&hosts_file, "%s/hosts", tmpdir) > 0);
  FILE *f = fopen (hosts_file, "w");
  cr_assert_not_null (f);
  fprintf (f, "198.51.100.1 api.test evil.test\n198.51.100.2 other.test\n127.0.0.1 rebind.test\n");
  fclose (f);
  setenv ("SECURER_NET_HOSTS", hosts_file, 1);
  start_server ("198.51.100.1", 8080, HTTP);
  start_server ("198.51.100.1", 8443, ECHO);
  start_server ("198.51.100.2", 8080, HTTP);
  start_server ("127.0.0.1", 8080, PRIVATE);
}

static void
teardown (void)
{
  char cmd[128];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  (void) !system (cmd);
  free (hosts_file);
}

TestSuite (netproxy, .init = setup, .fini = teardown, .timeout = 60);

/* ---- running sandboxes ----------------------------------------------------- */

static char *
write_policy (const char *name, const char *net)
{
  char *path = NULL, *h = helpers_dir ();
  cr_assert (asprintf (&path, "%s/%s.policy", tmpdir, name) > 0);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fprintf (f, "include \"%s/policies/minimal.policy\"\nmount ro %s\nmount tmpfs /tmp\n%s\n", srcdir (), h, net);
  fclose (f);
  free (h);
  return path;
}

struct cli {
  int status;
  char *out, *err;
  json_t *st;   /* --json-status */
};

static char *
slurp (const char *path)
{
  FILE *f = fopen (path, "r");
  if (f == NULL)
    return xstrdup ("");
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream (&buf, &len);
  int ch;
  while ((ch = fgetc (f)) != EOF)
    fputc (ch, m);
  fclose (m);
  fclose (f);
  return buf;
}

/* securer run --policy POLICY --json-status … -- ARGS (a shell word list). */
static struct cli
run (const char *policy, const char *args)
{
  static int seq;
  char out[256], err[256], st[256], *cmd = NULL;
  seq++;
  snprintf (out, sizeof out, "%s/out.%d", tmpdir, seq);
  snprintf (err, sizeof err, "%s/err.%d", tmpdir, seq);
  snprintf (st, sizeof st, "%s/st.%d", tmpdir, seq);
  cr_assert (asprintf (&cmd, "'%s' run --policy '%s' --json-status '%s' -- %s > '%s' 2> '%s'", securer_bin (),
                       policy, st, args, out, err)
             > 0);
  int ws = system (cmd);
  free (cmd);
  struct cli r = { WIFEXITED (ws) ? WEXITSTATUS (ws) : 1000, slurp (out), slurp (err), NULL };
  r.st = json_load_file (st, 0, NULL);
  return r;
}

static void
cli_clear (struct cli *r)
{
  free (r->out);
  free (r->err);
  json_decref (r->st);
}

static char *
probe_cmd (const char *args)
{
  char *p = probe_path (), *c = NULL;
  cr_assert (asprintf (&c, "'%s' %s", p, args) > 0);
  free (p);
  return c;
}

/* The count of denials of host:port in a status, 0 when none. */
static json_int_t
denied_count (json_t *st, const char *host, int port, const char *reason)
{
  json_t *d = json_object_get (json_object_get (st, "network"), "denied");
  size_t i;
  json_t *e;
  json_array_foreach (d, i, e)
    if (strcmp (json_string_value (json_object_get (e, "host")), host) == 0
        && json_integer_value (json_object_get (e, "port")) == port
        && strcmp (json_string_value (json_object_get (e, "reason")), reason) == 0)
      return json_integer_value (json_object_get (e, "count"));
  return 0;
}

#define CURL "/usr/bin/curl -sS --max-time 20 "

Test (netproxy, an_allowed_name_is_reached_over_plain_http)
{
  char *pol = write_policy ("http", "network allow api.test:8080");
  struct cli r = run (pol, CURL "http://api.test:8080/data?x=1");
  cr_assert_eq (r.status, 0, "status %d: %s", r.status, r.err);
  cr_assert_str_eq (r.out, "hello from api");
  /* The server got the request in origin form, from the proxy. */
  pthread_mutex_lock (&req_mu);
  cr_assert_str_eq (last_request, "GET /data?x=1 HTTP/1.1");
  pthread_mutex_unlock (&req_mu);
  cr_assert_not_null (r.st);
  json_t *net = json_object_get (r.st, "network");
  cr_assert_eq (json_integer_value (json_object_get (net, "connections")), 1);
  cr_assert_str_eq (json_string_value (json_object_get (json_object_get (r.st, "enforced"), "network")), "allow");
  cli_clear (&r);
  free (pol);
}

Test (netproxy, connect_and_socks_tunnels_carry_bytes_unmodified)
{
  char *pol = write_policy ("tls", "network allow api.test:8443");
  char *c = probe_cmd ("tunnel connect api.test 8443 100000 tunnel socks api.test 8443 100000");
  struct cli r = run (pol, c);
  cr_assert_eq (r.status, 0, "status %d: %s", r.status, r.err);
  cr_assert_str_eq (r.out, "tunnel=OK\ntunnel=OK\n", "%s", r.err);
  cr_assert_eq (json_integer_value (json_object_get (json_object_get (r.st, "network"), "connections")), 2);
  cli_clear (&r);
  free (c);
  free (pol);
}

Test (netproxy, other_names_ports_and_addresses_are_refused_and_reported)
{
  char *pol = write_policy ("deny", "network allow api.test:8080 *.test:8443\nnetwork deny evil.test");
  char *c = probe_cmd ("tunnel connect other.test 8080 1 tunnel connect api.test 9999 1"
                       " tunnel connect 198.51.100.1 8080 1 tunnel socks evil.test 8443 1"
                       " tunnel socks evil.test 8443 1");
  struct cli r = run (pol, c);
  cr_assert_eq (r.status, 0, "%s", r.err);
  cr_assert_str_eq (r.out,
                    "tunnel=reply:HTTP/1.1 403 Forbidden\ntunnel=reply:HTTP/1.1 403 Forbidden\n"
                    "tunnel=reply:HTTP/1.1 403 Forbidden\ntunnel=reply:socks-2\ntunnel=reply:socks-2\n");
  cr_assert_eq (denied_count (r.st, "other.test", 8080, "no-rule"), 1);
  cr_assert_eq (denied_count (r.st, "api.test", 9999, "no-rule"), 1);
  cr_assert_eq (denied_count (r.st, "198.51.100.1", 8080, "no-rule"), 1);
  cr_assert_eq (denied_count (r.st, "evil.test", 8443, "deny-rule"), 2);
  cr_assert_eq (json_integer_value (json_object_get (json_object_get (r.st, "network"), "connections")), 0);
  cli_clear (&r);
  free (c);

  /* curl sees the refusal as the proxy's answer, with the reason. */
  r = run (pol, CURL "-i http://other.test:8080/");
  cr_assert_neq (strstr (r.out, "HTTP/1.1 403 Forbidden"), NULL, "%s", r.out);
  cr_assert_neq (strstr (r.out, "other.test:8080 is not allowed by the sandbox's network policy"), NULL, "%s",
                 r.out);
  cli_clear (&r);
  free (pol);
}

Test (netproxy, a_name_resolving_to_a_private_address_is_refused)
{
  char *pol = write_policy ("rebind", "network allow rebind.test:8080");
  struct cli r = run (pol, CURL "-i http://rebind.test:8080/");
  cr_assert_neq (strstr (r.out, "403 Forbidden"), NULL, "%s %s", r.out, r.err);
  cr_assert_eq (denied_count (r.st, "rebind.test", 8080, "private-address"), 1);
  cr_assert_eq (atomic_load (&private_hits), 0, "the host's loopback service was reached");
  cli_clear (&r);
  free (pol);

  /* Unless the address itself is allowed. */
  pol = write_policy ("rebind-ok", "network allow rebind.test:8080 127.0.0.1:8080");
  r = run (pol, CURL "http://rebind.test:8080/");
  cr_assert_str_eq (r.out, "private", "%s", r.err);
  cr_assert_eq (atomic_load (&private_hits), 1);
  cli_clear (&r);
  free (pol);
}

Test (netproxy, nothing_but_the_proxy_is_reachable_from_inside)
{
  char *pol = write_policy ("direct", "network allow api.test:8080");
  char *c = probe_cmd ("connect 198.51.100.1 8080 connect 127.0.0.1 8080 udp 198.51.100.1 53 udp 127.0.0.1 53");
  struct cli r = run (pol, c);
  cr_assert_eq (r.status, 0, "%s", r.err);
  /* No route out of the sandbox's namespace; Landlock (ABI 4 and later)
   * refuses TCP connects to any port but the proxy's before routing. */
  char *direct = kv (r.out, "connect");
  cr_assert (direct != NULL && (strcmp (direct, "EACCES") == 0 || strcmp (direct, "ENETUNREACH") == 0), "%s",
             r.out);
  /* UDP sockets (a resolver's) are not created at all. */
  cr_assert_neq (strstr (r.out, "udp=EAFNOSUPPORT\nudp=EAFNOSUPPORT\n"), NULL, "%s", r.out);
  cr_assert_eq (atomic_load (&private_hits), 0);
  free (direct);
  cli_clear (&r);
  free (c);
  free (pol);
}

Test (netproxy, two_sandboxes_at_once_keep_their_own_allowlists)
{
  char *a = write_policy ("a", "network allow api.test:8080");
  char *b = write_policy ("b", "network allow other.test:8080");
  char *ca = NULL, *cb = NULL;
  cr_assert (asprintf (&ca, "'%s' run --policy '%s' -- /bin/sh -c '" CURL "-o /tmp/1 http://api.test:8080/ && "
                       CURL "-o /tmp/2 -w %%{http_code} http://other.test:8080/' > %s/a.out 2>&1",
                       securer_bin (), a, tmpdir)
             > 0);
  cr_assert (asprintf (&cb, "'%s' run --policy '%s' -- /bin/sh -c '" CURL "-o /tmp/1 http://other.test:8080/ && "
                       CURL "-o /tmp/2 -w %%{http_code} http://api.test:8080/' > %s/b.out 2>&1",
                       securer_bin (), b, tmpdir)
             > 0);
  pid_t pa = fork ();
  if (pa == 0)
    _exit (system (ca) == 0 ? 0 : 1);
  int sb = system (cb);
  int wa;
  waitpid (pa, &wa, 0);
  char pathbuf[256];
  snprintf (pathbuf, sizeof pathbuf, "%s/a.out", tmpdir);
  char *oa = slurp (pathbuf);
  snprintf (pathbuf, sizeof pathbuf, "%s/b.out", tmpdir);
  char *ob = slurp (pathbuf);
  cr_assert (WIFEXITED (wa) && WIFEXITED (sb), "a: %s b: %s", oa, ob);
  cr_assert_str_eq (oa, "403", "a: %s", oa);
  cr_assert_str_eq (ob, "403", "b: %s", ob);
  free (oa);
  free (ob);
  free (ca);
  free (cb);
  free (a);
  free (b);
}

Test (netproxy, a_flood_of_connections_is_bounded_and_harms_no_other_sandbox)
{
  char *pol = write_policy ("flood", "network allow api.test:8080");
  char *c = probe_cmd ("hold 200 3"), *cmd = NULL;
  char st[256];
  snprintf (st, sizeof st, "%s/flood.json", tmpdir);
  cr_assert (asprintf (&cmd, "'%s' run --policy '%s' --json-status '%s' -- %s > %s/flood.out 2>&1", securer_bin (),
                       pol, st, c, tmpdir)
             > 0);
  pid_t p = fork ();
  if (p == 0)
    _exit (system (cmd) == 0 ? 0 : 1);
  usleep (1000 * 1000);
  /* Meanwhile another sandbox works as usual. */
  struct cli r = run (pol, CURL "http://api.test:8080/");
  cr_assert_str_eq (r.out, "hello from api", "%s", r.err);
  cli_clear (&r);
  int ws;
  waitpid (p, &ws, 0);
  json_t *j = json_load_file (st, 0, NULL);
  cr_assert_not_null (j);
  json_t *net = json_object_get (j, "network");
  /* At most 64 (the default network limit) held; the rest closed at once. */
  cr_assert_geq (json_integer_value (json_object_get (net, "refused_busy")), 200 - 64 - 64, "%s",
                 json_dumps (net, 0));
  json_decref (j);
  free (cmd);
  free (c);
  free (pol);
}

/* ---- sessions: serve --allow-network, R's own url() and download.file() --- */

struct serve_proc {
  pid_t pid;
  FILE *in, *out;
};

static struct serve_proc
serve_start (const char *flag)
{
  int to[2], from[2];
  cr_assert_eq (pipe (to), 0);
  cr_assert_eq (pipe (from), 0);
  pid_t pid = fork ();
  cr_assert_geq (pid, 0);
  if (pid == 0)
    {
      dup2 (to[0], 0);
      dup2 (from[1], 1);
      close (to[1]);
      close (from[0]);
      execl (securer_bin (), "securer", "serve", "--cold", flag, (char *) NULL);
      _exit (127);
    }
  close (to[0]);
  close (from[1]);
  struct serve_proc s = { pid, fdopen (to[1], "w"), fdopen (from[0], "r") };
  return s;
}

/* Sends one request and returns the reply with its id. */
static json_t *
serve_req (struct serve_proc *s, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *line = NULL;
  cr_assert_geq (vasprintf (&line, fmt, ap), 0);
  va_end (ap);
  json_t *req = json_loads (line, 0, NULL);
  cr_assert_not_null (req, "%s", line);
  json_int_t id = json_integer_value (json_object_get (req, "id"));
  json_decref (req);
  fprintf (s->in, "%s\n", line);
  fflush (s->in);
  free (line);
  char buf[1 << 16];
  while (fgets (buf, sizeof buf, s->out) != NULL)
    {
      json_t *m = json_loads (buf, 0, NULL);
      if (m != NULL && json_integer_value (json_object_get (m, "id")) == id && json_object_get (m, "ok"))
        return m;
      json_decref (m);
    }
  cr_assert_fail ("serve ended before replying");
  return NULL;
}

static void
serve_stop (struct serve_proc *s)
{
  fclose (s->in);
  fclose (s->out);
  waitpid (s->pid, NULL, 0);
}

Test (netproxy, a_session_reaches_its_hosts_from_r_and_hears_of_refusals)
{
  if (access ("/usr/lib/R/bin/exec/R", X_OK) != 0)
    cr_skip_test ("R is not installed (Debian package r-base-core)");
  struct serve_proc s = serve_start ("--allow-network");
  json_t *r = serve_req (&s, "{\"op\":\"open\",\"id\":1,\"network\":[\"api.test:8080\"]}");
  cr_assert (json_is_true (json_object_get (r, "ok")), "%s", json_dumps (r, 0));
  char *sid = xstrdup (json_string_value (json_object_get (r, "session")));
  json_decref (r);

  r = serve_req (&s, "{\"op\":\"execute\",\"id\":2,\"session\":\"%s\",\"code\":"
                     "\"paste(readLines(url('http://api.test:8080/r')), collapse = '')\"}", sid);
  json_t *res = json_object_get (r, "result");
  cr_assert_str_eq (json_string_value (json_object_get (res, "status")), "ok", "%s", json_dumps (r, 0));
  cr_assert_str_eq (json_string_value (json_array_get (json_object_get (json_object_get (res, "value"), "v"), 0)),
                    "hello from api");
  json_decref (r);

  r = serve_req (&s, "{\"op\":\"execute\",\"id\":3,\"session\":\"%s\",\"code\":"
                     "\"readLines(url('http://other.test:8080/'))\"}", sid);
  res = json_object_get (r, "result");
  cr_assert_str_eq (json_string_value (json_object_get (res, "status")), "error");
  /* The error names the refused destination, not only R's "cannot open". */
  cr_assert_not_null (strstr (json_string_value (json_object_get (res, "error")),
                              "the sandbox's network policy refused: other.test:8080"),
                      "%s", json_dumps (res, 0));
  json_t *d = json_array_get (json_object_get (res, "network_denied"), 0);
  cr_assert_str_eq (json_string_value (json_object_get (d, "host")), "other.test");
  cr_assert_str_eq (json_string_value (json_object_get (d, "reason")), "no-rule");
  json_decref (r);
  free (sid);
  serve_stop (&s);
}

Test (netproxy, a_server_without_allow_network_refuses_hosts_in_requests)
{
  struct serve_proc s = serve_start ("--verbose");
  json_t *r = serve_req (&s, "{\"op\":\"open\",\"id\":1,\"network\":[\"api.test:8080\"]}");
  cr_assert (json_is_false (json_object_get (r, "ok")));
  cr_assert_str_eq (json_string_value (json_object_get (r, "error")),
                    "\"network\": \"network\" needs the server to be started with --allow-network");
  json_decref (r);
  struct serve_proc t = serve_start ("--allow-network");
  r = serve_req (&t, "{\"op\":\"open\",\"id\":1,\"network\":[\"api.test:0\"]}");
  cr_assert (json_is_false (json_object_get (r, "ok")));
  cr_assert_not_null (strstr (json_string_value (json_object_get (r, "error")),
                              "network allow entry 'api.test:0': a port is a number from 1 to 65535"),
                      "%s", json_dumps (r, 0));
  json_decref (r);
  serve_stop (&t);
  serve_stop (&s);
}

Test (netproxy, the_policys_network_limits_bound_connections_and_bytes)
{
  char *pol = write_policy ("limits", "network allow api.test:8443\nnetwork limit connections 4\n"
                                      "network limit bytes 64K");
  char *c = probe_cmd ("hold 20 1 tunnel connect api.test 8443 1000 tunnel connect api.test 8443 200000");
  struct cli r = run (pol, c);
  cr_assert_eq (r.status, 0, "%s", r.err);
  json_t *net = json_object_get (r.st, "network");
  /* 20 held, 4 kept: 16 closed at once. */
  cr_assert_geq (json_integer_value (json_object_get (net, "refused_busy")), 16, "%s", json_dumps (net, 0));
  /* The small tunnel fits the budget; the large one is cut off. */
  cr_assert_not_null (strstr (r.out, "tunnel=OK\ntunnel=E"), "%s", r.out);
  cr_assert_geq (json_integer_value (json_object_get (net, "refused_over_bytes")), 1, "%s", json_dumps (net, 0));
  json_t *lim = json_object_get (json_object_get (json_object_get (r.st, "enforced"), "network_rules"), "limits");
  cr_assert_eq (json_integer_value (json_object_get (lim, "connections")), 4);
  cr_assert_eq (json_integer_value (json_object_get (lim, "bytes")), 65536);
  cli_clear (&r);
  free (c);
  free (pol);
}
