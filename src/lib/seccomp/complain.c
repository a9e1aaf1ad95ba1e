/* Complain mode: the filter that lets refused calls go ahead, and the
 * record of them.
 *
 * It is built on what `policy learn` uses: the launcher's supervisor
 * answers each notification (CONTINUE for `notify`, no answer for a kill)
 * and hands it to on_syscall; here the call is judged again by the policy
 * as written, so the report says what the policy would have done, and
 * where it says so.  Nothing is read from the caller's memory. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/expect.h"
#include "seccomp/complain.h"
#include "seccomp/seccomp.h"

/* Distinct calls kept with their first caller.  A run that makes more has
 * gone far past what a policy author can review; the rest are counted. */
#define MAX_ENTRIES 1024

struct centry {
  uint32_t arch;
  int nr;
  char *name;
  struct securer_action would;       /* the policy's verdict as written */
  enum securer_decided_by by;
  size_t rule;                       /* by == SECURER_BY_RULE: index in the policy's rules */
  struct securer_action answered;    /* what the complain filter did */
  uint64_t calls;
  /* The first caller, read from /proc once the call was reported. */
  pid_t pid, sandbox_pid;
  char comm[32];
  char *exe;
  uint64_t args[6];
};

struct securer_complain {
  const struct securer_policy *p;
  struct securer_seccomp_prog *prog;
  struct centry *v;
  size_t n;
  uint64_t calls, unlisted;
};

enum securer_complain_mode
securer_complain_mode_of (const struct securer_policy *p, bool option)
{
  if (option)
    return SECURER_COMPLAIN_RUN;
  const struct securer_seccomp *sc = &p->seccomp;
  if (!sc->enabled)
    return SECURER_COMPLAIN_OFF;
  bool reports = sc->default_action.type == SECURER_ACT_LOG || sc->default_action.type == SECURER_ACT_NOTIFY;
  for (size_t i = 0; i < sc->n_rules && !reports; i++)
    reports = sc->rules[i].action.type == SECURER_ACT_LOG || sc->rules[i].action.type == SECURER_ACT_NOTIFY;
  return reports ? SECURER_COMPLAIN_POLICY : SECURER_COMPLAIN_OFF;
}

const char *
securer_complain_mode_name (enum securer_complain_mode m)
{
  return m == SECURER_COMPLAIN_RUN ? "run" : m == SECURER_COMPLAIN_POLICY ? "policy" : NULL;
}

int
securer_complain_available (securer_err_t *err)
{
  /* Without CONTINUE a relaxed call could only be let through as a kernel
   * `log`, whose audit records are rate-limited and root's to read: the
   * run would not report what it promised, so it does not start. */
  if (seccomp_api_get () < 6)
    return securer_error_set (err, ENOSYS,
                              "complain mode needs seccomp user notification with "
                              "SECCOMP_USER_NOTIF_FLAG_CONTINUE (Linux 5.5 or later; libseccomp API level %u "
                              "here), so that refused calls can go ahead and be reported",
                              seccomp_api_get ());
  return 0;
}

int
securer_complain_new (const struct securer_policy *p, struct securer_complain **out, securer_err_t *err)
{
  *out = NULL;
  struct securer_complain *c = calloc (1, sizeof *c);
  if (c == NULL)
    return securer_error_set (err, ENOMEM, "complain mode");
  c->v = calloc (MAX_ENTRIES, sizeof *c->v);
  if (c->v == NULL)
    {
      free (c);
      return securer_error_set (err, ENOMEM, "complain mode");
    }
  if (securer_seccomp_compile (p, 0, -1, &c->prog, err) < 0)
    {
      free (c->v);
      free (c);
      return securer_error_prefix (err, "complain mode: the policy's seccomp section");
    }
  c->p = p;
  *out = c;
  return 0;
}

void
securer_complain_free (struct securer_complain *c)
{
  if (c == NULL)
    return;
  for (size_t i = 0; i < c->n; i++)
    {
      free (c->v[i].name);
      free (c->v[i].exe);
    }
  free (c->v);
  securer_seccomp_free (c->prog);
  free (c);
}

/* Whether mode m lets a call with verdict a (of a rule, or the default)
 * go ahead.  Kill rules stay: they name what must never run, the calls
 * that reach the kernel's attack surface or leave the sandbox (ptrace,
 * bpf, keyctl, the mount API in base/seccomp-hardening.policy).  A kill
 * default is only the answer to "everything not listed", which is what
 * complain mode is for. */
static bool
relaxed (enum securer_complain_mode m, struct securer_action a, bool is_default)
{
  switch (a.type)
    {
    case SECURER_ACT_LOG:
    case SECURER_ACT_NOTIFY:
      return true;
    case SECURER_ACT_ERRNO:
    case SECURER_ACT_TRAP:
      return m == SECURER_COMPLAIN_RUN;
    case SECURER_ACT_KILL_PROCESS:
    case SECURER_ACT_KILL_THREAD:
      return m == SECURER_COMPLAIN_RUN && is_default;
    case SECURER_ACT_ALLOW:
      break;
    }
  return false;
}

int
securer_complain_prepare (struct securer_policy *p, enum securer_complain_mode m, securer_err_t *err)
{
  struct securer_seccomp *sc = &p->seccomp;
  if (m == SECURER_COMPLAIN_OFF)
    return 0;
  if (!sc->enabled)
    return securer_error_set (err, EINVAL, "complain mode: the policy has `seccomp off`, so nothing would be "
                              "reported");
  static const struct securer_action notify = { SECURER_ACT_NOTIFY, 0 };
  for (size_t i = 0; i < sc->n_rules; i++)
    if (relaxed (m, sc->rules[i].action, false))
      sc->rules[i].action = notify;
  /* foreign-abi is left alone: a call of another ABI cannot be written
   * as a rule, so no report of it could tell the author what to allow. */
  if (relaxed (m, sc->default_action, true))
    sc->default_action = notify;
  return 0;
}

static bool
same_action (struct securer_action a, struct securer_action b)
{
  return a.type == b.type && (a.type != SECURER_ACT_ERRNO || a.errnum == b.errnum);
}

/* Text the sandbox chose (a thread's name, a file name) as one harmless
 * line: anything but printable ASCII becomes '?'. */
static void
sanitize (char *s)
{
  for (; *s; s++)
    if ((unsigned char) *s < 0x20 || (unsigned char) *s >= 0x7f)
      *s = '?';
}

static void
read_caller (struct centry *e, pid_t pid)
{
  char path[64], buf[4096];
  e->pid = pid;
  snprintf (path, sizeof path, "/proc/%d/comm", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      ssize_t n = read (fd, e->comm, sizeof e->comm - 1);
      close (fd);
      if (n > 0)
        {
          e->comm[n] = '\0';
          e->comm[strcspn (e->comm, "\n")] = '\0';
          sanitize (e->comm);
        }
    }
  snprintf (path, sizeof path, "/proc/%d/exe", (int) pid);
  ssize_t n = readlink (path, buf, sizeof buf - 1);
  if (n > 0)
    {
      buf[n] = '\0';
      e->exe = strdup (buf);
      if (e->exe != NULL)
        sanitize (e->exe);
    }
  /* The last NSpid field is the pid the sandbox itself sees. */
  snprintf (path, sizeof path, "/proc/%d/status", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      n = read (fd, buf, sizeof buf - 1);
      close (fd);
      buf[n > 0 ? n : 0] = '\0';
      char *l = strstr (buf, "\nNSpid:");
      if (l != NULL)
        {
          l += 7;
          char *end = l;
          long last = -1;
          for (;;)
            {
              long v = strtol (l, &end, 10);
              if (end == l)
                break;
              last = v;
              l = end;
            }
          e->sandbox_pid = last > 0 ? (pid_t) last : 0;
        }
    }
}

void
securer_complain_record (void *ctx, const struct securer_syscall_event *ev)
{
  struct securer_complain *c = ctx;
  enum securer_decided_by by = SECURER_BY_DEFAULT;
  size_t rule = SIZE_MAX;
  struct securer_action would = securer_seccomp_decide (c->prog, ev->arch, ev->nr, ev->args, &by, &rule);
  c->calls++;
  for (size_t i = 0; i < c->n; i++)
    {
      struct centry *e = &c->v[i];
      if (e->arch == ev->arch && e->nr == ev->nr && same_action (e->would, would))
        {
          e->calls++;
          return;
        }
    }
  if (c->n == MAX_ENTRIES)
    {
      c->unlisted++;
      return;
    }
  struct centry *e = &c->v[c->n];
  memset (e, 0, sizeof *e);
  e->name = strdup (ev->name);
  if (e->name == NULL)
    {
      /* The callback cannot fail the run: the call is counted, not named. */
      c->unlisted++;
      return;
    }
  c->n++;
  e->arch = ev->arch;
  e->nr = ev->nr;
  e->would = would;
  e->by = by;
  e->rule = rule;
  e->answered = ev->action;
  e->calls = 1;
  memcpy (e->args, ev->args, sizeof e->args);
  /* Read after the call was answered: a call that went ahead may have
   * changed what is read (an execve shows the new program). */
  read_caller (e, ev->pid);
}

unsigned long long
securer_complain_calls (const struct securer_complain *c)
{
  return c ? (unsigned long long) c->calls : 0;
}

size_t
securer_complain_distinct (const struct securer_complain *c)
{
  return c ? c->n : 0;
}

static const struct securer_syscall_rule *
rule_of (const struct securer_complain *c, const struct centry *e)
{
  if (e->by != SECURER_BY_RULE || e->rule >= c->p->seccomp.n_rules)
    return NULL;
  return &c->p->seccomp.rules[e->rule];
}

static const char *
decided_by_name (enum securer_decided_by by)
{
  switch (by)
    {
    case SECURER_BY_RULE: return "rule";
    case SECURER_BY_DEFAULT: return "default";
    case SECURER_BY_FOREIGN_ABI: return "foreign-abi";
    case SECURER_BY_NO_FILTER: break;
    }
  return "none";
}

static const char *
answer_text (struct securer_action a, char *buf, size_t size)
{
  if (a.type == SECURER_ACT_NOTIFY || a.type == SECURER_ACT_LOG || a.type == SECURER_ACT_ALLOW)
    return "allowed";
  return securer_verdict_text (a, buf, size);
}

json_t *
securer_complain_json (const struct securer_complain *c)
{
  json_t *arr = json_array ();
  for (size_t i = 0; c != NULL && arr != NULL && i < c->n; i++)
    {
      const struct centry *e = &c->v[i];
      char wb[64], ab[64], loc[4200] = "";
      const struct securer_syscall_rule *r = rule_of (c, e);
      if (r != NULL && r->loc.file != NULL)
        snprintf (loc, sizeof loc, "%s:%u:%u", r->loc.file, r->loc.line, r->loc.col);
      json_t *args = json_array ();
      for (size_t k = 0; k < 6; k++)
        {
          char hex[24];
          snprintf (hex, sizeof hex, "0x%" PRIx64, e->args[k]);
          json_array_append_new (args, json_string (hex));
        }
      json_t *first = json_pack ("{s:i, s:o, s:o, s:o, s:o}", "pid", (int) e->pid, "sandbox_pid",
                                 e->sandbox_pid > 0 ? json_integer (e->sandbox_pid) : json_null (), "comm",
                                 e->comm[0] ? json_string (e->comm) : json_null (), "exe",
                                 e->exe ? json_string (e->exe) : json_null (), "args", args);
      json_t *o = json_pack ("{s:s, s:I, s:s, s:s, s:o, s:o, s:s, s:o}", "syscall", e->name, "calls",
                             (json_int_t) e->calls, "verdict", securer_verdict_text (e->would, wb, sizeof wb),
                             "decided_by", decided_by_name (e->by), "rule", loc[0] ? json_string (loc) : json_null (),
                             "group", r != NULL && r->group ? json_string (r->group) : json_null (), "answered",
                             answer_text (e->answered, ab, sizeof ab), "first", first);
      json_array_append_new (arr, o);
    }
  return arr;
}

void
securer_complain_print (const struct securer_complain *c, FILE *f, const char *prefix)
{
  for (size_t i = 0; c != NULL && i < c->n; i++)
    {
      const struct centry *e = &c->v[i];
      char wb[64], ab[64];
      fprintf (f, "%s%s: %" PRIu64 " call%s, %s by ", prefix, e->name, e->calls, e->calls == 1 ? "" : "s",
               securer_verdict_text (e->would, wb, sizeof wb));
      const struct securer_syscall_rule *r = rule_of (c, e);
      if (r != NULL && r->loc.file != NULL)
        fprintf (f, "the rule at %s:%u:%u%s%s", r->loc.file, r->loc.line, r->loc.col, r->group ? " via " : "",
                 r->group ? r->group : "");
      else
        fputs (decided_by_name (e->by), f);
      fprintf (f, ", %s; first by pid %d", answer_text (e->answered, ab, sizeof ab), (int) e->pid);
      if (e->sandbox_pid > 0)
        fprintf (f, " (%d inside)", (int) e->sandbox_pid);
      if (e->comm[0])
        fprintf (f, " %s", e->comm);
      if (e->exe)
        fprintf (f, " [%s]", e->exe);
      fprintf (f, ": %s(", e->name);
      for (size_t k = 0; k < 6; k++)
        fprintf (f, "%s0x%" PRIx64, k ? ", " : "", e->args[k]);
      fputs (")\n", f);
    }
  if (c != NULL && c->unlisted > 0)
    fprintf (f, "%s%" PRIu64 " more calls not listed (more than %d distinct)\n", prefix, c->unlisted, MAX_ENTRIES);
}

unsigned long long
securer_complain_unlisted (const struct securer_complain *c)
{
  return c ? (unsigned long long) c->unlisted : 0;
}
