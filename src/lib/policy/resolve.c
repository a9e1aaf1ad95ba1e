/* Resolution: applies directives in the order they are read (an include
 * is read where it stands), with the override rules of docs/policy.md:
 *
 *  - scalar settings (network, hostname, limits, default action, …): the
 *    last one read wins;
 *  - a mount on a destination already mounted replaces the earlier entry in
 *    place, so an including file can change /tmp without reordering;
 *  - lists (masks, env keep, exec, ports) accumulate without duplicates;
 *  - seccomp: an unconditional rule for a syscall replaces every earlier
 *    rule for it; conditional rules accumulate in order.
 *
 * Then every default is made explicit, unconditional rules that merely
 * repeat the default action are dropped, and the result is checked for
 * consistency (network vs namespaces, …). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "seccomp/seccomp.h"

/* ---- validators --------------------------------------------------------- */

const char *
check_abs_path (const char *s)
{
  if (s == NULL || s[0] != '/')
    return "an absolute path";
  size_t len = strlen (s);
  if (len >= POLICY_MAX_PATH)
    return "a path shorter than 4096 bytes";
  /* ".." would let a destination escape the directory it names. */
  for (const char *c = s; *c; )
    {
      while (*c == '/')
        c++;
      const char *e = c;
      while (*e && *e != '/')
        e++;
      if (e - c == 2 && c[0] == '.' && c[1] == '.')
        return "an absolute path without '..'";
      c = e;
    }
  for (const char *c = s; *c; c++)
    if ((unsigned char) *c < 0x20 || *c == 0x7f)
      return "a path without control characters";
  return NULL;
}

const char *
check_env_name (const char *s)
{
  if (s == NULL || *s == '\0' || strlen (s) > 256)
    return "a variable name (letters, digits and '_', not starting with a digit)";
  if (*s >= '0' && *s <= '9')
    return "a variable name (letters, digits and '_', not starting with a digit)";
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
          || *s == '_'))
      return "a variable name (letters, digits and '_', not starting with a digit)";
  return NULL;
}

const char *
check_hostname (const char *s)
{
  size_t len = s ? strlen (s) : 0;
  if (len == 0 || len > 64 || s[0] == '-' || s[0] == '.')
    return "a host name of 1 to 64 letters, digits, '-' and '.'";
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
          || *s == '-' || *s == '.'))
      return "a host name of 1 to 64 letters, digits, '-' and '.'";
  return NULL;
}

const char *
check_link_target (const char *s)
{
  if (s == NULL || s[0] == '\0' || strlen (s) >= POLICY_MAX_PATH || strpbrk (s, "\n\t\r") != NULL)
    return "a non-empty path shorter than 4096 bytes, on one line";
  return NULL;
}

const char *
check_env_value (const char *s)
{
  if (s == NULL || strlen (s) > POLICY_MAX_PATH * 8)
    return "a value of at most 32768 bytes";
  return NULL;
}

/* ---- consistency ---------------------------------------------------------- */

int
policy_check_consistency (const struct securer_policy *p,
                          void (*report) (void *ctx, int what, const char *msg), void *ctx)
{
  int n = 0;
  if (p->network != SECURER_NET_HOST && !(p->namespaces & SECURER_NS_NET))
    {
      char msg[128];
      snprintf (msg, sizeof msg, "network '%s' needs the net namespace (add 'net' to namespaces, or say 'network host')",
                policy_net_name (p->network) ? policy_net_name (p->network) : "?");
      report (ctx, SET_NAMESPACES, msg);
      n++;
    }
  if (p->network == SECURER_NET_HOST && (p->namespaces & SECURER_NS_NET))
    {
      report (ctx, SET_NETWORK, "network 'host' cannot be combined with the net namespace (remove 'net' from namespaces)");
      n++;
    }
  if (p->hostname != NULL && !(p->namespaces & SECURER_NS_UTS))
    {
      report (ctx, SET_HOSTNAME, "hostname needs the uts namespace (add 'uts' to namespaces)");
      n++;
    }
  if (p->n_mounts > 0 && !(p->namespaces & SECURER_NS_MOUNT))
    {
      report (ctx, SET_NAMESPACES, "mounts need the mount namespace (add 'mount' to namespaces)");
      n++;
    }
  const struct securer_limits *l = &p->limits;
  if (l->cgroup == SECURER_ENFORCE_OFF
      && (l->cgroup_memory || l->cgroup_pids || l->cgroup_cpu_millis))
    {
      report (ctx, SET_CGROUP_MODE, "cgroup limits are set but 'cgroup off' disables them");
      n++;
    }
  return n;
}

/* ---- the builder ---------------------------------------------------------- */

struct slot {       /* rules of one syscall, as indices into b->rules */
  char *name;
  size_t *idx;
  size_t n, cap;
};

struct group {
  char *name;
  char **members;
  size_t n;
  char *error;      /* non-NULL: loading failed with this message */
};

struct mark {
  bool set;
  char *file;
  unsigned line, col;
};

struct builder {
  struct securer_policy *p;
  struct securer_diags *diags;

  struct securer_syscall_rule *rules;
  bool *dead;
  size_t n_rules, cap_rules, cap_dead, n_dead;

  struct slot *slots;   /* open addressing, power-of-two size */
  size_t n_slots, used_slots;

  struct group *groups;
  size_t n_groups, cap_groups;

  size_t cap_mounts, cap_masks, cap_keep, cap_set, cap_exec, cap_bind, cap_conn, cap_inc;
  struct mark marks[SET_COUNT];
  bool too_many_rules_reported;
};

struct builder *
builder_new (struct securer_diags *diags)
{
  struct builder *b = calloc (1, sizeof *b);
  if (b == NULL)
    return NULL;
  b->p = calloc (1, sizeof *b->p);
  if (b->p == NULL)
    {
      free (b);
      return NULL;
    }
  b->diags = diags;
  struct securer_policy *p = b->p;
  /* Defaults that directives override.  The rest are filled in by
   * builder_finish, where they depend on what was said. */
  p->uid = 1000;
  p->gid = 1000;
  p->host_uid = SECURER_HOST_CALLER;
  p->host_gid = SECURER_HOST_CALLER;
  p->network = SECURER_NET_NONE;
  p->landlock.mode = SECURER_ENFORCE_BEST_EFFORT;
  p->landlock.scope_abstract_unix = true;
  p->landlock.scope_signal = true;
  p->seccomp.enabled = true;
  p->seccomp.default_action.type = SECURER_ACT_ERRNO;
  p->seccomp.default_action.errnum = ENOSYS;
  p->seccomp.foreign_arch.type = SECURER_ACT_KILL_PROCESS;
  return b;
}

static void
slots_free (struct builder *b)
{
  for (size_t i = 0; i < b->n_slots; i++)
    {
      free (b->slots[i].name);
      free (b->slots[i].idx);
    }
  free (b->slots);
  b->slots = NULL;
  b->n_slots = b->used_slots = 0;
}

static void
rule_clear (struct securer_syscall_rule *r)
{
  free (r->name);
  free (r->group);
  free (r->loc.file);
  memset (r, 0, sizeof *r);
}

void
builder_free (struct builder *b)
{
  if (b == NULL)
    return;
  for (size_t i = 0; i < b->n_rules; i++)
    rule_clear (&b->rules[i]);
  free (b->rules);
  free (b->dead);
  slots_free (b);
  for (size_t i = 0; i < b->n_groups; i++)
    {
      securer_strv_free (b->groups[i].members);
      free (b->groups[i].name);
      free (b->groups[i].error);
    }
  free (b->groups);
  for (int i = 0; i < SET_COUNT; i++)
    free (b->marks[i].file);
  securer_policy_free (b->p);
  free (b);
}

struct securer_policy *
builder_policy (struct builder *b)
{
  return b->p;
}

void
builder_mark (struct builder *b, int what, const char *file, unsigned line, unsigned col)
{
  struct mark *m = &b->marks[what];
  char *f = loc_file_dup (file);
  if (f == NULL && file != NULL)
    return;
  free (m->file);
  m->set = true;
  m->file = f;
  m->line = line;
  m->col = col;
}

bool
builder_marked (struct builder *b, int what, const char **file, unsigned *line, unsigned *col)
{
  const struct mark *m = &b->marks[what];
  *file = m->file;
  *line = m->line;
  *col = m->col;
  return m->set;
}

static bool action_eq (const struct securer_action *a, const struct securer_action *c);

static size_t
hash_str (const char *s)
{
  size_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char) *s) * 1099511628211ull;
  return h;
}

static struct slot *
slot_find (struct builder *b, const char *name, bool create)
{
  if (create && (b->used_slots + 1) * 2 > b->n_slots)
    {
      size_t nn = b->n_slots ? b->n_slots * 2 : 256;
      struct slot *ns = calloc (nn, sizeof *ns);
      if (ns == NULL)
        return NULL;
      for (size_t i = 0; i < b->n_slots; i++)
        if (b->slots[i].name)
          {
            size_t j = hash_str (b->slots[i].name) & (nn - 1);
            while (ns[j].name)
              j = (j + 1) & (nn - 1);
            ns[j] = b->slots[i];
          }
      free (b->slots);
      b->slots = ns;
      b->n_slots = nn;
    }
  if (b->n_slots == 0)
    return NULL;
  size_t j = hash_str (name) & (b->n_slots - 1);
  while (b->slots[j].name)
    {
      if (strcmp (b->slots[j].name, name) == 0)
        return &b->slots[j];
      j = (j + 1) & (b->n_slots - 1);
    }
  if (!create)
    return NULL;
  b->slots[j].name = strdup (name);
  if (b->slots[j].name == NULL)
    return NULL;
  b->used_slots++;
  return &b->slots[j];
}

/* Removes dead rules and rebuilds the per-syscall index. */
static int
compact (struct builder *b)
{
  size_t w = 0;
  for (size_t i = 0; i < b->n_rules; i++)
    {
      if (b->dead[i])
        {
          rule_clear (&b->rules[i]);
          continue;
        }
      b->rules[w] = b->rules[i];
      b->dead[w] = false;
      w++;
    }
  b->n_rules = w;
  b->n_dead = 0;
  for (size_t i = 0; i < b->n_slots; i++)
    b->slots[i].n = 0;
  for (size_t i = 0; i < b->n_rules; i++)
    {
      struct slot *s = slot_find (b, b->rules[i].name, true);
      if (s == NULL || grow ((void **) &s->idx, &s->cap, s->n, sizeof *s->idx) < 0)
        return -1;
      s->idx[s->n++] = i;
    }
  return 0;
}

int
builder_add_rule (struct builder *b, const char *syscall, const char *group,
                  const struct securer_action *act, const struct securer_arg_cond *conds,
                  unsigned n_conds, const struct securer_loc *loc)
{
  struct slot *s = slot_find (b, syscall, true);
  if (s == NULL)
    return -1;
  if (n_conds == 0)
    {
      for (size_t i = 0; i < s->n; i++)
        if (!b->dead[s->idx[i]])
          {
            const struct securer_syscall_rule *o = &b->rules[s->idx[i]];
            /* `allow @group` then `kill ptrace` is the way to make an
             * exception; two lines naming the call in one file are not. */
            if (o->n_conds == 0 && o->group == NULL && group == NULL && o->loc.file && loc->file
                && strcmp (o->loc.file, loc->file) == 0 && !action_eq (&o->action, act))
              diag_add (b->diags, SECURER_DIAG_WARNING, loc->file, loc->line, loc->col, NULL,
                        "seccomp %s %s replaces seccomp %s %s at %s:%u:%u", securer_action_name (act->type),
                        syscall, securer_action_name (o->action.type), syscall, o->loc.file, o->loc.line,
                        o->loc.col);
            b->dead[s->idx[i]] = true;
            b->n_dead++;
          }
      s->n = 0;
    }
  if (b->n_rules - b->n_dead >= POLICY_MAX_RULES)
    {
      if (!b->too_many_rules_reported)
        diag_add (b->diags, SECURER_DIAG_ERROR, loc->file, loc->line, loc->col, NULL,
                  "too many seccomp rules (more than %d)", POLICY_MAX_RULES);
      b->too_many_rules_reported = true;
      return -1;
    }
  if (b->n_dead > 1024 && b->n_dead * 2 > b->n_rules)
    {
      if (compact (b) < 0)
        return -1;
      s = slot_find (b, syscall, true);
      if (s == NULL)
        return -1;
    }
  if (grow ((void **) &b->rules, &b->cap_rules, b->n_rules, sizeof *b->rules) < 0)
    return -1;
  if (b->cap_dead < b->cap_rules)
    {
      bool *nd = realloc (b->dead, b->cap_rules * sizeof *nd);
      if (nd == NULL)
        return -1;
      b->dead = nd;
      b->cap_dead = b->cap_rules;
    }
  if (grow ((void **) &s->idx, &s->cap, s->n, sizeof *s->idx) < 0)
    return -1;
  struct securer_syscall_rule *r = &b->rules[b->n_rules];
  memset (r, 0, sizeof *r);
  r->name = strdup (syscall);
  r->group = group ? strdup (group) : NULL;
  r->loc.file = loc_file_dup (loc->file);
  r->loc.line = loc->line;
  r->loc.col = loc->col;
  r->action = *act;
  r->n_conds = n_conds > SECURER_MAX_ARG_CONDS ? SECURER_MAX_ARG_CONDS : n_conds;
  memcpy (r->conds, conds, r->n_conds * sizeof *conds);
  if (r->name == NULL || (group && r->group == NULL) || (loc->file && r->loc.file == NULL))
    {
      rule_clear (r);
      return -1;
    }
  b->dead[b->n_rules] = false;
  s->idx[s->n++] = b->n_rules;
  b->n_rules++;
  return 0;
}

static void
report_group_problem (void *ctx, const char *file, unsigned line, unsigned col, const char *hint,
                      const char *message)
{
  struct builder *b = ctx;
  diag_add (b->diags, SECURER_DIAG_ERROR, file, line, col, hint, "%s", message);
}

int
builder_group (struct builder *b, const char *name, char ***members, size_t *n, char **why)
{
  for (size_t i = 0; i < b->n_groups; i++)
    if (strcmp (b->groups[i].name, name) == 0)
      {
        *members = b->groups[i].members;
        *n = b->groups[i].n;
        *why = b->groups[i].error;
        return b->groups[i].error ? -1 : 0;
      }
  if (grow ((void **) &b->groups, &b->cap_groups, b->n_groups, sizeof *b->groups) < 0)
    return -1;
  struct group *g = &b->groups[b->n_groups];
  memset (g, 0, sizeof *g);
  g->name = strdup (name);
  if (g->name == NULL)
    return -1;
  securer_err_t err = NULL;
  if (securer_group_load_report (name, &g->members, &g->n, report_group_problem, b, &err) < 0)
    {
      g->members = NULL;
      g->n = 0;
      g->error = strdup (securer_error_message (err));
      securer_error_free (&err);
      if (g->error == NULL)
        {
          free (g->name);
          return -1;
        }
    }
  b->n_groups++;
  *members = g->members;
  *n = g->n;
  *why = g->error;
  return g->error ? -1 : 0;
}

static void
mount_clear (struct securer_mount *m)
{
  free (m->source);
  free (m->dest);
  free (m->loc.file);
}

void
builder_add_mount (struct builder *b, struct securer_mount *m)
{
  struct securer_policy *p = b->p;
  for (size_t i = 0; i < p->n_mounts; i++)
    if (strcmp (p->mounts[i].dest, m->dest) == 0)
      {
        const struct securer_mount *o = &p->mounts[i];
        /* An include overridden is layering; two lines of one file that
         * disagree are a mistake, and only the second one is applied. */
        if (o->loc.file && m->loc.file && strcmp (o->loc.file, m->loc.file) == 0
            && (o->type != m->type || (o->source == NULL) != (m->source == NULL)
                || (o->source && strcmp (o->source, m->source) != 0)))
          diag_add (b->diags, SECURER_DIAG_WARNING, m->loc.file, m->loc.line, m->loc.col, NULL,
                    "mount %s %s replaces the mount %s %s at %s:%u:%u", policy_mount_type_name (m->type), m->dest,
                    policy_mount_type_name (o->type), o->dest, o->loc.file, o->loc.line, o->loc.col);
        mount_clear (&p->mounts[i]);
        p->mounts[i] = *m;
        return;
      }
  if (p->n_mounts >= POLICY_MAX_ITEMS
      || grow ((void **) &p->mounts, &b->cap_mounts, p->n_mounts, sizeof *p->mounts) < 0)
    {
      diag_add (b->diags, SECURER_DIAG_ERROR, m->loc.file, m->loc.line, m->loc.col, NULL,
                "too many mounts (more than %d)", POLICY_MAX_ITEMS);
      mount_clear (m);
      return;
    }
  p->mounts[p->n_mounts++] = *m;
}

static size_t *
cap_for (struct builder *b, char ***v)
{
  struct securer_policy *p = b->p;
  if (v == &p->masks)
    return &b->cap_masks;
  if (v == &p->env_keep)
    return &b->cap_keep;
  if (v == &p->exec)
    return &b->cap_exec;
  return &b->cap_inc;
}

int
builder_add_str (struct builder *b, char ***v, size_t *n, const char *s)
{
  for (size_t i = 0; i < *n; i++)
    if (strcmp ((*v)[i], s) == 0)
      return 0;
  if (*n >= POLICY_MAX_ITEMS)
    return -1;
  if (grow ((void **) v, cap_for (b, v), *n, sizeof **v) < 0)
    return -1;
  char *d = strdup (s);
  if (d == NULL)
    return -1;
  (*v)[(*n)++] = d;
  return 0;
}

void
builder_note_include (struct builder *b, const char *path)
{
  builder_add_str (b, &b->p->includes, &b->p->n_includes, path);
}

int
builder_env_set (struct builder *b, const char *name, const char *value)
{
  struct securer_policy *p = b->p;
  char *v = strdup (value);
  if (v == NULL)
    return -1;
  for (size_t i = 0; i < p->n_env_set; i++)
    if (strcmp (p->env_set[i].name, name) == 0)
      {
        free (p->env_set[i].value);
        p->env_set[i].value = v;
        return 0;
      }
  char *nm = strdup (name);
  if (nm == NULL || p->n_env_set >= POLICY_MAX_ITEMS
      || grow ((void **) &p->env_set, &b->cap_set, p->n_env_set, sizeof *p->env_set) < 0)
    {
      free (nm);
      free (v);
      return -1;
    }
  p->env_set[p->n_env_set].name = nm;
  p->env_set[p->n_env_set].value = v;
  p->n_env_set++;
  return 0;
}

void
builder_env_unset (struct builder *b, const char *name)
{
  struct securer_policy *p = b->p;
  for (size_t i = 0; i < p->n_env_set; i++)
    if (strcmp (p->env_set[i].name, name) == 0)
      {
        free (p->env_set[i].name);
        free (p->env_set[i].value);
        memmove (&p->env_set[i], &p->env_set[i + 1], (p->n_env_set - i - 1) * sizeof *p->env_set);
        p->n_env_set--;
        break;
      }
  for (size_t i = 0; i < p->n_env_keep; i++)
    if (strcmp (p->env_keep[i], name) == 0)
      {
        free (p->env_keep[i]);
        memmove (&p->env_keep[i], &p->env_keep[i + 1], (p->n_env_keep - i - 1) * sizeof *p->env_keep);
        p->n_env_keep--;
        break;
      }
}

int
builder_add_port (struct builder *b, uint16_t **v, size_t *n, uint16_t port)
{
  for (size_t i = 0; i < *n; i++)
    if ((*v)[i] == port)
      return 0;
  size_t *cap = v == &b->p->landlock.tcp_bind ? &b->cap_bind : &b->cap_conn;
  if (*n >= POLICY_MAX_ITEMS || grow ((void **) v, cap, *n, sizeof **v) < 0)
    return -1;
  (*v)[(*n)++] = port;
  return 0;
}

/* ---- finishing ------------------------------------------------------------ */

struct report_ctx {
  struct builder *b;
  const char *top;
};

static void
report_at_mark (void *ctx, int what, const char *msg)
{
  struct report_ctx *rc = ctx;
  struct builder *b = rc->b;
  /* Blame the directive responsible; when it was left to its default,
   * the directive that conflicts with it. */
  static const int fallback[SET_COUNT] = {
    [SET_NAMESPACES] = SET_NETWORK, [SET_NETWORK] = SET_NAMESPACES,
    [SET_HOSTNAME] = SET_NAMESPACES, [SET_CGROUP_MODE] = SET_CGROUP_MODE,
    [SET_SECCOMP] = SET_SECCOMP, [SET_SECCOMP_DEFAULT] = SET_SECCOMP_DEFAULT,
    [SET_LANDLOCK] = SET_LANDLOCK,
  };
  const struct mark *m = &b->marks[what];
  if (!m->set)
    m = &b->marks[fallback[what]];
  if (m->set)
    diag_add (b->diags, SECURER_DIAG_ERROR, m->file, m->line, m->col, NULL, "%s", msg);
  else
    diag_add (b->diags, SECURER_DIAG_ERROR, rc->top, 0, 0, NULL, "%s", msg);
}

static bool
action_eq (const struct securer_action *a, const struct securer_action *c)
{
  return a->type == c->type && (a->type != SECURER_ACT_ERRNO || a->errnum == c->errnum);
}

static char *
stem_of (const char *path)
{
  const char *base = strrchr (path, '/');
  base = base ? base + 1 : path;
  size_t len = strlen (base);
  const char *dot = strrchr (base, '.');
  if (dot != NULL && dot != base)
    len = (size_t) (dot - base);
  return strndup (base, len);
}

/* Everything of the policy but its seccomp rules: the defaults that
 * depend on what was said.  Enough for a launcher to start the sandbox
 * while the rules are still being resolved. */
void
builder_finish_defaults (struct builder *b, const char *top_file)
{
  struct securer_policy *p = b->p;

  if (p->name == NULL)
    p->name = stem_of (top_file);
  if (!b->marks[SET_NAMESPACES].set)
    {
      p->namespaces = SECURER_NS_ALL;
      /* Sharing the host network means not having a net namespace; saying
       * `network host` alone is explicit enough. */
      if (p->network == SECURER_NET_HOST)
        p->namespaces &= ~(unsigned) SECURER_NS_NET;
    }
  /* A new UTS namespace starts with a copy of the host's name; the
   * sandbox gets a fixed one instead, so nothing of the host shows. */
  if (p->hostname == NULL && (p->namespaces & SECURER_NS_UTS))
    p->hostname = strdup (POLICY_DEFAULT_HOSTNAME);
  struct securer_limits *l = &p->limits;
  if (!b->marks[SET_CGROUP_MODE].set)
    l->cgroup = (l->cgroup_memory || l->cgroup_pids || l->cgroup_cpu_millis)
                  ? SECURER_ENFORCE_REQUIRED : SECURER_ENFORCE_OFF;
  /* A core dump would write the sandbox's memory to a file. */
  if (!l->rlimit[SECURER_RLIMIT_CORE].set)
    {
      l->rlimit[SECURER_RLIMIT_CORE].set = true;
      l->rlimit[SECURER_RLIMIT_CORE].soft = 0;
      l->rlimit[SECURER_RLIMIT_CORE].hard = 0;
    }
  if (p->cwd == NULL)
    p->cwd = strdup ("/");

  if (!b->marks[SET_SECCOMP].set)
    diag_add (b->diags, SECURER_DIAG_WARNING, top_file, 0, 0, NULL,
              "no seccomp directive: every system call fails with ENOSYS (add 'seccomp allow ...' "
              "rules, or 'seccomp off' to run without a filter)");
}

/* network allow: the command reaches the proxy over TCP on loopback, so
 * it may make TCP sockets (of both families: clients try ::1 as well),
 * whatever the socket rules it got from elsewhere; nothing else of the
 * network.  After every line, so that an include read later cannot take
 * it back; a line of the policy's own that denies them still does. */
static int
add_proxy_socket_rules (struct builder *b)
{
  const struct mark *m = &b->marks[SET_NETWORK];
  struct securer_loc loc = { (char *) m->file, m->line, m->col };
  static const struct securer_action allow = { .type = SECURER_ACT_ALLOW };
  static const uint64_t families[] = { 2 /* AF_INET */, 10 /* AF_INET6 */ };
  struct slot *s = slot_find (b, "socket", false);
  for (size_t f = 0; f < 2; f++)
    {
      struct securer_arg_cond c[2] = {
        { 0, SECURER_CMP_EQ, families[f], 0 },
        /* SOCK_STREAM in the type's low bits; SOCK_CLOEXEC/NONBLOCK free. */
        { 1, SECURER_CMP_MASKED_EQ, 1, 0xf },
      };
      bool have = false;
      for (size_t i = 0; s != NULL && i < s->n && !have; i++)
        {
          const struct securer_syscall_rule *r = &b->rules[s->idx[i]];
          have = !b->dead[s->idx[i]] && r->n_conds == 2 && action_eq (&r->action, &allow)
                 && memcmp (r->conds, c, sizeof c) == 0;
        }
      if (!have && builder_add_rule (b, "socket", NULL, &allow, c, 2, &loc) < 0)
        return -1;
      s = slot_find (b, "socket", false);
    }
  return 0;
}

int
builder_finish_rules (struct builder *b, const char *top_file)
{
  struct securer_policy *p = b->p;
  if (p->network == SECURER_NET_ALLOW && p->seccomp.enabled && add_proxy_socket_rules (b) < 0)
    {
      diag_add (b->diags, SECURER_DIAG_ERROR, top_file, 0, 0, NULL, "out of memory");
      return -1;
    }

  /* Collect the live rules; an unconditional rule equal to the default
   * action decides nothing (conditional rules before it were already
   * replaced by it), so it is dropped. */
  size_t n = 0;
  for (size_t i = 0; i < b->n_rules; i++)
    if (!b->dead[i])
      n++;
  struct securer_syscall_rule *rules = xcalloc_array (n, sizeof *rules);
  if (rules == NULL)
    {
      diag_add (b->diags, SECURER_DIAG_ERROR, top_file, 0, 0, NULL, "out of memory");
      return -1;
    }
  size_t w = 0;
  for (size_t i = 0; i < b->n_rules; i++)
    {
      struct securer_syscall_rule *r = &b->rules[i];
      if (b->dead[i])
        continue;
      if (r->n_conds == 0 && action_eq (&r->action, &p->seccomp.default_action))
        {
          rule_clear (r);
          b->dead[i] = true;
          continue;
        }
      rules[w++] = *r;
      memset (r, 0, sizeof *r);
      b->dead[i] = true;
    }
  free (p->seccomp.rules);
  p->seccomp.rules = rules;
  p->seccomp.n_rules = w;
  if (!p->seccomp.enabled && w > 0)
    {
      const struct mark *m = &b->marks[SET_SECCOMP];
      diag_add (b->diags, SECURER_DIAG_WARNING, m->file ? m->file : top_file, m->line, m->col, NULL,
                "seccomp is off: %zu rule%s will not be enforced", w, w == 1 ? "" : "s");
    }
  return 0;
}

void
builder_check (struct builder *b, const char *top_file)
{
  struct report_ctx rc = { b, top_file };
  policy_check_consistency (b->p, report_at_mark, &rc);
}

static void
count_problem (void *ctx, int what, const char *msg)
{
  (void) what;
  (void) msg;
  ++*(int *) ctx;
}

bool
builder_consistent (struct builder *b)
{
  int n = 0;
  policy_check_consistency (b->p, count_problem, &n);
  return n == 0;
}

void
builder_finish (struct builder *b, const char *top_file)
{
  builder_finish_defaults (b, top_file);
  if (builder_finish_rules (b, top_file) == 0)
    builder_check (b, top_file);
}

void
builder_attach (struct builder *b, struct securer_policy *p, struct securer_diags *diags)
{
  b->p = p;
  b->diags = diags;
}

struct securer_policy *
builder_take (struct builder *b)
{
  struct securer_policy *p = b->p;
  b->p = NULL;
  return p;
}
