/* The templates sessions start from (docs/sessions.md, "How a session
 * starts"; docs/architecture.md, "Sessions from a template").
 *
 * One template per resolved policy and process, found by a digest of the
 * policy's canonical form, started on first need and shared by every
 * session of that policy: a pool's, restarts after a timeout, serve's
 * opens.  A session holds a reference for as long as its R may be a fork
 * of the template (the template's pid namespace contains its sessions, so
 * freeing it would kill them).  A template whose last session closed stays
 * in the cache, idle, for the next one (a host that opens one session per
 * request would otherwise start a template each time): at most MAX_IDLE of
 * them, none idle for more than IDLE_NS, trimmed whenever a session starts
 * or closes, or all at once by securer_session_templates_trim().  A
 * template that died is taken out of the cache by the next spawn, which
 * starts a new one; sessions still holding the dead one let go of it as
 * they restart or close.  A template is retired (out of the cache, freed
 * with its last session) once it has forked retire_sessions() sessions or
 * lived RETIRE_AGE_NS: every session of a template shares its address-space
 * layout, so a new one re-randomises it (docs/security.md). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "linux/template.h"
#include "session/internal.h"
#include "sha256.h"

/* Idle templates kept for the next session of their policy. */
#define MAX_IDLE 4
#define IDLE_NS (300ull * 1000000000ull)
/* Retirement: sessions forked, unless SECURER_TEMPLATE_MAX_SESSIONS says
 * otherwise, and age. */
#define RETIRE_SESSIONS 1000u
#define RETIRE_AGE_NS (3600ull * 1000000000ull)
/* Policy texts whose canonical digest is remembered. */
#define N_MEMO 16

/* The template's R: reads the runtime's text from its stdin (a pipe the
 * host filled and closed), evaluates it to the runtime function, loads
 * jsonlite (with methods) so that no session loads anything of its own
 * before the hello, then loads the module and waits in its loop.  The loop
 * returns 1 only in a new session's process, already confined, with the
 * session's channel, stdout and stderr on fds 0-2; the template's temp
 * directory is not in the session's fresh /tmp, hence tempdir(check).
 * Nothing read after the runtime's text is ever evaluated here: the hello
 * and every request reach each session over its own channel. */
static const char boot[] =
  "local({i<-file(\"stdin\",\"r\");n<-as.integer(readLines(i,1L));"
  "f<-eval(parse(text=readLines(i,n,encoding=\"UTF-8\"),keep.source=FALSE));close(i);"
  "loadNamespace(\"jsonlite\");dyn.load(\"/proc/self/fd/4\");"
  "repeat{if(.C(\"securer_zygote_r_serve\",r=0L)$r!=1L)quit(save=\"no\");"
  "invisible(tempdir(check=TRUE));f(file(\"stdin\",\"r\"));quit(save=\"no\",runLast=FALSE)}})";

struct session_template {
  struct session_template *next;     /* in the cache while current */
  char key[2 * SECURER_SHA256_LEN + 1];
  struct securer_policy *policy;     /* the template's copy, borrowed by it */
  struct securer_template *t;
  unsigned refs;                     /* sessions holding it, under cache_mu */
  bool cached;
  uint64_t idle_since;               /* cached with no session: when the last one let go */
  uint64_t born;                     /* when it was started */
  unsigned forks;                    /* sessions forked from it, under mu */
  pthread_mutex_t mu;                /* spawns and liveness checks of t */
};

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
/* Held while a template starts (taken before cache_mu, never inside it). */
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static struct session_template *cache;

/* The canonical digest costs two JSON passes over the policy (more than
 * the rest of a session's start on the host): it is computed once per
 * distinct policy text, which a session hashes anyway. */
static struct {
  char text[SECURER_POLICY_DIGEST_HEX], key[2 * SECURER_SHA256_LEN + 1];
} memo[N_MEMO];
static unsigned memo_next;

/* ---- which start ------------------------------------------------------------ */

int
securer_session_template_wanted (const struct securer_policy *p, enum securer_session_start choice,
                                 bool *use, bool *required, securer_err_t *err)
{
  *use = *required = false;
  enum securer_session_template mode = p->session_template;
  const char *why_on = "the policy says 'session template on'";
  /* The environment replaces the default only: a policy that says on or
   * off (r-unsandboxed.policy has no sandbox to fork from) keeps it. */
  const char *env = getenv ("SECURER_SESSION_TEMPLATE");
  if (env != NULL && *env != '\0')
    {
      int m = securer_session_template_parse (env);
      if (m < 0)
        {
          securer_error_set (err, EINVAL, "SECURER_SESSION_TEMPLATE=%s: expected auto, on or off", env);
          securer_error_set_status (err, SECURER_EXIT_SETUP);
          return -1;
        }
      if (mode == SECURER_SESSION_TEMPLATE_AUTO)
        {
          mode = (enum securer_session_template) m;
          why_on = "SECURER_SESSION_TEMPLATE=on";
        }
    }
  /* A network allow session needs a namespace of its own for its proxy
   * (template.c): cold, unless a template was asked for by name (the
   * policy's own `on`, or the caller's choice), which is then refused. */
  if (p->network == SECURER_NET_ALLOW && p->session_template != SECURER_SESSION_TEMPLATE_ON
      && choice != SECURER_SESSION_START_TEMPLATE)
    mode = SECURER_SESSION_TEMPLATE_OFF;
  if (choice == SECURER_SESSION_START_COLD)
    mode = SECURER_SESSION_TEMPLATE_OFF;
  else if (choice == SECURER_SESSION_START_TEMPLATE)
    {
      mode = SECURER_SESSION_TEMPLATE_ON;
      why_on = "a start from a template was asked for";
    }
  if (mode == SECURER_SESSION_TEMPLATE_OFF)
    return 0;
  *required = mode == SECURER_SESSION_TEMPLATE_ON;
  securer_err_t why = NULL;
  if (securer_template_supported (p, &why) == 0)
    {
      *use = true;
      return 0;
    }
  if (mode == SECURER_SESSION_TEMPLATE_AUTO)
    {
      securer_error_free (&why);
      return 0;
    }
  securer_error_set (err, why ? why->errnum : ENOTSUP, "%s, but this session cannot have one: %s", why_on,
                     securer_error_text (why));
  securer_error_free (&why);
  securer_error_set_status (err, SECURER_EXIT_SETUP);
  return -1;
}

/* ---- the key ---------------------------------------------------------------- */

/* The policy's canonical form: its JSON without what does not change the
 * sandbox (where it was read from, the directives' positions, the session
 * setting itself), keys sorted, compact. */
static char *
canonical_policy (const struct securer_policy *p)
{
  char *text = securer_policy_to_json_text (p, 0);
  json_t *root = text ? json_loads (text, 0, NULL) : NULL;
  free (text);
  if (root == NULL)
    return NULL;
  json_object_del (root, "name");
  json_object_del (root, "path");
  json_object_del (root, "includes");
  json_object_del (root, "session");
  size_t i;
  json_t *v;
  json_array_foreach (json_object_get (root, "mounts"), i, v)
    json_object_del (v, "loc");
  json_array_foreach (json_object_get (json_object_get (root, "seccomp"), "rules"), i, v)
    json_object_del (v, "loc");
  char *out = json_dumps (root, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref (root);
  return out;
}

void
securer_policy_text_digest (const char *text, char out[SECURER_POLICY_DIGEST_HEX])
{
  struct securer_sha256 h;
  unsigned char d[SECURER_SHA256_LEN];
  securer_sha256_init (&h);
  securer_sha256_update (&h, text, strlen (text));
  securer_sha256_final (&h, d);
  for (size_t k = 0; k < SECURER_SHA256_LEN; k++)
    snprintf (out + 2 * k, 3, "%02x", d[k]);
}

/* Under cache_mu. */
static int
policy_key (const struct securer_policy *p, const char *text_digest, char key[2 * SECURER_SHA256_LEN + 1],
            securer_err_t *err)
{
  for (unsigned k = 0; k < N_MEMO; k++)
    if (strcmp (memo[k].text, text_digest) == 0)
      {
        memcpy (key, memo[k].key, sizeof memo[k].key);
        return 0;
      }
  char *c = canonical_policy (p);
  if (c == NULL)
    return securer_error_set (err, ENOMEM, "digest of the policy");
  securer_policy_text_digest (c, key);
  free (c);
  unsigned k = memo_next++ % N_MEMO;
  snprintf (memo[k].text, sizeof memo[k].text, "%s", text_digest);
  memcpy (memo[k].key, key, sizeof memo[k].key);
  return 0;
}

/* ---- starting one ------------------------------------------------------------- */

/* The runtime's text in the template's stdin: a pipe filled and closed
 * before R starts, so the host never waits on R to read it. */
static int
runtime_pipe (const struct session_template_prog *prog, int *out, securer_err_t *err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return securer_error_set (err, errno, "pipe");
  if (prog->runtime_len + 1 > 65536 && fcntl (p[1], F_SETPIPE_SZ, (int) prog->runtime_len + 1) < 0)
    {
      int e = errno;
      close (p[0]);
      close (p[1]);
      return securer_error_set (err, e, "a pipe for the R runtime (%zu bytes)", prog->runtime_len);
    }
  ssize_t n = securer_write_nosigpipe (p[1], prog->runtime, prog->runtime_len);
  int e = errno;
  close (p[1]);
  if (n != (ssize_t) prog->runtime_len)
    {
      close (p[0]);
      return securer_error_set (err, n < 0 ? e : EIO, "write the R runtime for the template");
    }
  *out = p[0];
  return 0;
}

/* What the template's R printed before it failed (memfd), as " (R: ...)". */
static void
add_stderr (int fd, securer_err_t *err)
{
  char buf[1024];
  ssize_t n = fd >= 0 ? pread (fd, buf, sizeof buf - 1, 0) : 0;
  if (n <= 0)
    return;
  for (ssize_t k = 0; k < n; k++)
    if (buf[k] == '\n' || buf[k] == '\r' || buf[k] == '\t')
      buf[k] = ' ';
  buf[n] = '\0';
  char *m = strdup (securer_error_text (*err));
  int e = (*err)->errnum, status = (*err)->status;
  securer_error_free (err);
  securer_error_set (err, e, "%s (R: %s)", m ? m : "session template", buf);
  securer_error_set_status (err, status);
  free (m);
}

static int
template_new (const struct securer_policy *p, const char *key, const struct session_template_prog *prog,
              struct session_template **out, securer_err_t *err)
{
  struct session_template *st = calloc (1, sizeof *st);
  if (st == NULL)
    return securer_error_set (err, ENOMEM, "session template");
  memcpy (st->key, key, sizeof st->key);
  pthread_mutex_init (&st->mu, NULL);
  st->refs = 1;
  st->born = securer_now_ns ();
  char *json = securer_policy_to_json_text (p, 0);
  int rc = json ? securer_policy_from_json_text (p->name ? p->name : "template", json, strlen (json),
                                                 &st->policy, err)
                : securer_error_set (err, ENOMEM, "copy the policy");
  free (json);
  int in = -1, errfd = -1;
  if (rc == 0)
    rc = runtime_pipe (prog, &in, err);
  if (rc == 0 && !prog->verbose)
    {
      errfd = memfd_create ("securer-template-stderr", MFD_CLOEXEC);
      if (errfd < 0)
        rc = securer_error_set (err, errno, "memfd_create");
    }
  if (rc == 0)
    {
      char *argv[] = { (char *) SECURER_R_BINARY, (char *) "--vanilla", (char *) "--no-echo",
                       (char *) "--no-restore", (char *) "-e", (char *) boot, NULL };
      struct securer_template_opts o = { .policy = st->policy, .argv = argv, .extra_env = prog->env,
                                         .stdin_fd = in, .stderr_fd = errfd, .verbose = prog->verbose };
      rc = securer_template_start (&o, &st->t, err);
      if (rc < 0)
        add_stderr (errfd, err);
    }
  if (in >= 0)
    close (in);
  if (errfd >= 0)
    close (errfd);
  if (rc < 0)
    {
      securer_policy_free (st->policy);
      pthread_mutex_destroy (&st->mu);
      free (st);
      return -1;
    }
  *out = st;
  return 0;
}

static void
uncache (struct session_template *st)
{
  for (struct session_template **pp = &cache; *pp; pp = &(*pp)->next)
    if (*pp == st)
      {
        *pp = st->next;
        break;
      }
  st->cached = false;
}

static void
template_free (struct session_template *st)
{
  securer_template_free (st->t);
  securer_policy_free (st->policy);
  pthread_mutex_destroy (&st->mu);
  free (st);
}

/* Takes idle templates past the limits (or all, with all) out of the
 * cache and returns them as a list to free outside the lock. */
static struct session_template *
trim_locked (bool all)
{
  uint64_t now = securer_now_ns ();
  struct session_template *gone = NULL;
  for (;;)
    {
      unsigned idle = 0;
      struct session_template *oldest = NULL;
      for (struct session_template *st = cache; st; st = st->next)
        if (st->refs == 0)
          {
            idle++;
            if (oldest == NULL || st->idle_since < oldest->idle_since)
              oldest = st;
          }
      if (oldest == NULL || !(all || idle > MAX_IDLE || now - oldest->idle_since > IDLE_NS))
        return gone;
      uncache (oldest);
      oldest->next = gone;
      gone = oldest;
    }
}

static void
free_list (struct session_template *gone)
{
  while (gone != NULL)
    {
      struct session_template *next = gone->next;
      template_free (gone);
      gone = next;
    }
}

void
securer_session_templates_trim (void)
{
  pthread_mutex_lock (&cache_mu);
  struct session_template *gone = trim_locked (true);
  pthread_mutex_unlock (&cache_mu);
  free_list (gone);
}

static unsigned
retire_sessions (void)
{
  const char *e = getenv ("SECURER_TEMPLATE_MAX_SESSIONS");
  char *end;
  unsigned long n = e && *e ? strtoul (e, &end, 10) : 0;
  return e && *e && *end == '\0' && n > 0 && n <= 1000000 ? (unsigned) n : RETIRE_SESSIONS;
}

/* Due for retirement (read under st->mu or when no spawn can run). */
static bool
retirement_due (const struct session_template *st)
{
  return st->forks >= retire_sessions () || securer_now_ns () - st->born > RETIRE_AGE_NS;
}

/* The cached template of key, referenced; under cache_mu. */
static struct session_template *
find_locked (const char *key)
{
  struct session_template *st = cache;
  while (st != NULL && strcmp (st->key, key) != 0)
    st = st->next;
  if (st != NULL)
    st->refs++;
  return st;
}

/* The current template of p, referenced; started here when there is none
 * (concurrent first sessions of one policy wait for one template rather
 * than each starting their own). */
static int
acquire (const struct securer_policy *p, const char *text_digest, const struct session_template_prog *prog,
         struct session_template **out, securer_err_t *err)
{
  char key[2 * SECURER_SHA256_LEN + 1];
  pthread_mutex_lock (&cache_mu);
  int rc = policy_key (p, text_digest, key, err);
  struct session_template *st = rc == 0 ? find_locked (key) : NULL;
  struct session_template *gone = st != NULL ? trim_locked (false) : NULL;
  pthread_mutex_unlock (&cache_mu);
  free_list (gone);
  if (rc < 0 || st != NULL)
    {
      *out = st;
      return rc;
    }
  /* Started under start_mu alone: sessions of templates already running
   * (opens, closes, restarts) never wait for R to start; concurrent first
   * sessions of one policy still wait for one template, found again once
   * the one started before them is in. */
  pthread_mutex_lock (&start_mu);
  pthread_mutex_lock (&cache_mu);
  st = find_locked (key);
  pthread_mutex_unlock (&cache_mu);
  if (st == NULL && (rc = template_new (p, key, prog, &st, err)) == 0)
    {
      pthread_mutex_lock (&cache_mu);
      st->cached = true;
      st->next = cache;
      cache = st;
      pthread_mutex_unlock (&cache_mu);
    }
  pthread_mutex_unlock (&start_mu);
  pthread_mutex_lock (&cache_mu);
  gone = trim_locked (false);
  pthread_mutex_unlock (&cache_mu);
  free_list (gone);
  *out = st;
  return rc;
}

void
securer_session_template_release (struct session_template *st)
{
  if (st == NULL)
    return;
  pthread_mutex_lock (&cache_mu);
  bool last = --st->refs == 0;
  if (last)
    st->idle_since = securer_now_ns ();
  struct session_template *gone = trim_locked (false);
  if (last && !st->cached)
    {
      st->next = gone;
      gone = st;
    }
  pthread_mutex_unlock (&cache_mu);
  free_list (gone);
}

/* Spawns from st; 1 when st has died, 2 when it is due for retirement
 * (nothing spawned either way).  A template can
 * die between the check and the request, and its control socket may be
 * gone (EPIPE) before its pid 1 is seen to have exited: either way the
 * template cannot fork any more sessions. */
static int
spawn_from (struct session_template *st, const struct securer_spawn_opts *so, struct securer_sandbox **out,
            securer_err_t *err)
{
  pthread_mutex_lock (&st->mu);
  if (retirement_due (st))
    {
      pthread_mutex_unlock (&st->mu);
      return 2;
    }
  int rc = securer_template_alive (st->t) ? securer_template_spawn (st->t, so, out, err) : 1;
  if (rc == 0)
    st->forks++;
  /* Dead only when the template says so (its control socket or its pid 1):
   * a session that died during its own setup (out of memory in its cgroup)
   * says EPIPE too, and the template is fine. */
  if (rc < 0 && !securer_template_alive (st->t))
    {
      securer_error_free (err);
      rc = 1;
    }
  pthread_mutex_unlock (&st->mu);
  return rc;
}

int
securer_session_template_spawn (struct session_template **t, const struct securer_policy *p,
                                const char *text_digest, const struct session_template_prog *prog,
                                const struct securer_spawn_opts *so, struct securer_sandbox **out,
                                securer_err_t *err)
{
  *out = NULL;
  for (int attempt = 0; attempt < 2; attempt++)
    {
      if (*t == NULL && acquire (p, text_digest, prog, t, err) < 0)
        return -1;
      int rc = spawn_from (*t, so, out, err);
      if (rc <= 0)
        return rc;
      /* Dead, or retired: out of the cache, so that the next acquire
       * starts anew (a retirement is no failed attempt). */
      if (rc == 2)
        attempt--;
      pthread_mutex_lock (&cache_mu);
      if ((*t)->cached)
        uncache (*t);
      pthread_mutex_unlock (&cache_mu);
      securer_session_template_release (*t);
      *t = NULL;
    }
  securer_error_set (err, ECHILD, "the new session template ended at once");
  securer_error_set_status (err, SECURER_EXIT_SETUP);
  return -1;
}
