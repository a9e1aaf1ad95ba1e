/* The seccomp compiler: resolved policy -> libseccomp filter.
 *
 * libseccomp does not evaluate rules in order, and it silently drops a
 * conditional rule when the same syscall also has an unconditional one
 * (`allow ioctl` + `errno(EPERM) ioctl if arg1 == TIOCSTI` loads as plain
 * "allow ioctl").  So the compiler never hands it overlapping rules: for each
 * syscall it computes the disjoint regions of argument space in which each
 * rule of the policy decides (first match wins), and adds one libseccomp rule
 * per region.  Regions are conjunctions of masked-equality tests, one per
 * argument ("cubes"), because that is the one comparison whose complement is
 * again a small set of disjoint cubes and whose intersection on the same
 * argument is again a single cube — which is also what lets 32-bit arguments
 * be compared on their low 32 bits only.
 *
 * A cube may also exclude a few exact values ("arg != v"): the complement of
 * one exact value is 32 or 64 cubes, so a profile that says "errno if
 * arg0 == 16 and arg2 == 9, else allow" in three rules would multiply them
 * into thousands of regions.  Exclusions keep the computation to a handful,
 * and only the regions handed to libseccomp are expanded into plain cubes;
 * of those, the action that covers the most argument space is emitted as the
 * complement of all the others when that is smaller (for the example, 64
 * cubes instead of 2048). */
#include <config.h>

#include <errno.h>
#include <linux/audit.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp/argwidth.h"
#include "seccomp/prog.h"
#include "seccomp/seccomp.h"
#include "sha256.h"

/* Upper bound on the regions of one syscall: far above what real policies
 * produce (an allowlist with a dozen ioctl denials needs ~100), low enough to
 * stay within the kernel's 4096-instruction limit with room to spare. */
#define MAX_REGIONS 1024

#define X32_SYSCALL_BIT 0x40000000


/* ---- cubes and regions ---------------------------------------------------- */

/* Exact values a cube may exclude before it is split into plain cubes. */
#define MAX_NE 4

struct cube {
  uint64_t mask, value;  /* (arg & mask) == value; mask 0 = any value */
  unsigned n_ne;         /* and arg (within its width) is none of ne[] */
  uint64_t ne[MAX_NE];
};

struct cubeset {
  struct cube *v;
  size_t n, cap;
};

struct region {
  struct cube arg[6];
};

struct regionset {
  struct region *v;
  size_t n, cap;
  size_t max;  /* 0: MAX_REGIONS */
};

/* What all the rules of one action may add up to, before the program's
 * size is checked (each rule's own cases stay within MAX_REGIONS). */
#define MAX_EMIT (8 * MAX_REGIONS)

static int
cubeset_add (struct cubeset *s, uint64_t mask, uint64_t value)
{
  if (s->n == s->cap)
    {
      size_t cap = s->cap ? s->cap * 2 : 16;
      struct cube *nv = realloc (s->v, cap * sizeof *nv);
      if (nv == NULL)
        return -1;
      s->v = nv;
      s->cap = cap;
    }
  s->v[s->n++] = (struct cube) { .mask = mask, .value = value & mask };
  return 0;
}

static int
cubeset_push (struct cubeset *s, const struct cube *c)
{
  if (cubeset_add (s, 0, 0) < 0)
    return -1;
  s->v[s->n - 1] = *c;
  return 0;
}

static int
regionset_add (struct regionset *s, const struct region *r)
{
  if (s->n >= (s->max ? s->max : MAX_REGIONS))
    {
      errno = E2BIG;
      return -1;
    }
  if (s->n == s->cap)
    {
      size_t cap = s->cap ? s->cap * 2 : 16;
      struct region *nv = realloc (s->v, cap * sizeof *nv);
      if (nv == NULL)
        return -1;
      s->v = nv;
      s->cap = cap;
    }
  s->v[s->n++] = *r;
  return 0;
}

static bool
cube_merge (struct cube a, struct cube b, struct cube *out)
{
  if ((a.value ^ b.value) & a.mask & b.mask)
    return false;
  out->mask = a.mask | b.mask;
  out->value = a.value | b.value;
  out->n_ne = 0;
  return true;
}

/* Bits top..low of a width-bit value, as a mask. */
static uint64_t
bits_from (unsigned low, uint64_t width_mask)
{
  return (width_mask >> low) << low;
}

/* { x : x < v } within width_mask, as disjoint cubes: for every 1 bit i of
 * v, the values that agree with v above i and have 0 at i. */
static int
cubes_lt (struct cubeset *s, uint64_t v, uint64_t width_mask)
{
  for (int i = 63; i >= 0; i--)
    {
      uint64_t bit = 1ull << i;
      if (!(bit & width_mask) || !(v & bit))
        continue;
      uint64_t above = i == 63 ? 0 : bits_from (i + 1, width_mask);
      if (cubeset_add (s, above | bit, v & above) < 0)
        return -1;
    }
  return 0;
}

static int
cubes_gt (struct cubeset *s, uint64_t v, uint64_t width_mask)
{
  for (int i = 63; i >= 0; i--)
    {
      uint64_t bit = 1ull << i;
      if (!(bit & width_mask) || (v & bit))
        continue;
      uint64_t above = i == 63 ? 0 : bits_from (i + 1, width_mask);
      if (cubeset_add (s, above | bit, (v & above) | bit) < 0)
        return -1;
    }
  return 0;
}

/* The complement of one cube: for every bit i of its mask (high to low), the
 * values that agree with it on the mask bits above i and differ at i. */
static int
cube_complement (struct cubeset *s, struct cube c)
{
  uint64_t above = 0;
  for (int i = 63; i >= 0; i--)
    {
      uint64_t bit = 1ull << i;
      if (!(c.mask & bit))
        continue;
      if (cubeset_add (s, above | bit, (c.value & above) | (~c.value & bit)) < 0)
        return -1;
      above |= bit;
    }
  return 0;
}

static int
cubeset_intersect (struct cubeset *out, const struct cubeset *a, const struct cubeset *b)
{
  for (size_t i = 0; i < a->n; i++)
    for (size_t j = 0; j < b->n; j++)
      {
        struct cube m;
        if (cube_merge (a->v[i], b->v[j], &m) && cubeset_add (out, m.mask, m.value) < 0)
          return -1;
      }
  return 0;
}

static int
cubeset_complement (struct cubeset *out, const struct cubeset *s)
{
  struct cubeset acc = { 0 };
  if (cubeset_add (&acc, 0, 0) < 0)
    return -1;
  for (size_t i = 0; i < s->n; i++)
    {
      struct cubeset comp = { 0 }, next = { 0 };
      if (cube_complement (&comp, s->v[i]) < 0 || cubeset_intersect (&next, &acc, &comp) < 0)
        {
          free (comp.v);
          free (next.v);
          free (acc.v);
          return -1;
        }
      free (comp.v);
      free (acc.v);
      acc = next;
      if (acc.n > MAX_REGIONS)
        {
          free (acc.v);
          errno = E2BIG;
          return -1;
        }
    }
  *out = acc;
  return 0;
}

/* ---- cubes with excluded values ------------------------------------------ */

/* a ∧ b, within width w, appended to out (nothing when they are disjoint).
 * Exclusions the positive part already rules out are dropped, so every
 * excluded value of a cube satisfies its positive part; past MAX_NE the
 * extra ones are split off as plain cubes. */
static int
atom_and (struct cubeset *out, const struct cube *a, const struct cube *b, uint64_t w)
{
  struct cube m;
  if (!cube_merge (*a, *b, &m))
    return 0;
  uint64_t list[2 * MAX_NE];
  unsigned n = 0;
  for (unsigned i = 0; i < a->n_ne + b->n_ne; i++)
    {
      uint64_t v = i < a->n_ne ? a->ne[i] : b->ne[i - a->n_ne];
      if ((v & m.mask) != m.value)
        continue;
      if ((m.mask & w) == w)
        return 0;  /* the one value left is excluded */
      bool dup = false;
      for (unsigned k = 0; k < n; k++)
        dup |= list[k] == v;
      if (!dup)
        list[n++] = v;
    }
  m.n_ne = n < MAX_NE ? n : MAX_NE;
  memcpy (m.ne, list, m.n_ne * sizeof list[0]);
  if (n <= MAX_NE)
    return cubeset_push (out, &m);

  struct cubeset acc = { 0 };
  if (cubeset_push (&acc, &m) < 0)
    return -1;
  for (unsigned k = MAX_NE; k < n; k++)
    {
      struct cubeset comp = { 0 }, next = { 0 };
      int rc = cube_complement (&comp, (struct cube) { .mask = w, .value = list[k] & w });
      for (size_t i = 0; rc == 0 && i < acc.n; i++)
        for (size_t j = 0; rc == 0 && j < comp.n; j++)
          rc = atom_and (&next, &acc.v[i], &comp.v[j], w);
      free (comp.v);
      free (acc.v);
      acc = next;
      if (rc < 0)
        {
          free (acc.v);
          return -1;
        }
    }
  for (size_t i = 0; i < acc.n; i++)
    if (cubeset_push (out, &acc.v[i]) < 0)
      {
        free (acc.v);
        return -1;
      }
  free (acc.v);
  return 0;
}

/* ¬c within width w, as disjoint cubes: an exact value's complement is one
 * exclusion; each excluded value comes back as an exact cube. */
static int
atom_complement (struct cubeset *s, const struct cube *c, uint64_t w)
{
  if (c->mask != 0 && (c->mask & w) == w)
    {
      struct cube x = { .n_ne = 1, .ne = { c->value & w } };
      if (cubeset_push (s, &x) < 0)
        return -1;
    }
  else if (cube_complement (s, (struct cube) { .mask = c->mask, .value = c->value }) < 0)
    return -1;
  for (unsigned i = 0; i < c->n_ne; i++)
    if (cubeset_add (s, w, c->ne[i]) < 0)
      return -1;
  return 0;
}

/* c as plain cubes: its positive part minus each excluded value. */
static int
atom_expand (struct cubeset *out, const struct cube *c, uint64_t w)
{
  struct cubeset acc = { 0 };
  if (cubeset_add (&acc, c->mask, c->value) < 0)
    return -1;
  for (unsigned k = 0; k < c->n_ne; k++)
    {
      struct cubeset comp = { 0 }, next = { 0 };
      if (cube_complement (&comp, (struct cube) { .mask = w, .value = c->ne[k] & w }) < 0
          || cubeset_intersect (&next, &acc, &comp) < 0)
        {
          free (comp.v);
          free (next.v);
          free (acc.v);
          return -1;
        }
      free (comp.v);
      free (acc.v);
      acc = next;
    }
  for (size_t i = 0; i < acc.n; i++)
    if (cubeset_push (out, &acc.v[i]) < 0)
      {
        free (acc.v);
        return -1;
      }
  free (acc.v);
  return 0;
}

static uint64_t
arg_width (unsigned args32, unsigned k)
{
  return (args32 >> k) & 1 ? 0xffffffffull : ~0ull;
}

static bool
atom_any (const struct cube *c)
{
  return c->mask == 0 && c->n_ne == 0;
}

/* ---- conditions --------------------------------------------------------- */

static const char *
cmp_name (enum securer_cmp op)
{
  switch (op)
    {
    case SECURER_CMP_EQ: return "==";
    case SECURER_CMP_NE: return "!=";
    case SECURER_CMP_LT: return "<";
    case SECURER_CMP_LE: return "<=";
    case SECURER_CMP_GT: return ">";
    case SECURER_CMP_GE: return ">=";
    case SECURER_CMP_MASKED_EQ: return "&";
    }
  return "?";
}

/* A 32-bit argument's value as the kernel sees it; negative ints may be
 * written sign-extended (AT_FDCWD) or not. */
static bool
fits32 (uint64_t v)
{
  return v <= 0xffffffffull || (v >> 31) == 0x1ffffffffull;
}

/* Checks a condition and says why it cannot mean anything, or NULL. */
static const char *
cond_problem (const struct securer_arg_cond *c, bool is32)
{
  if (c->arg > 5)
    return "argument index must be 0..5";
  switch (c->op)
    {
    case SECURER_CMP_EQ:
    case SECURER_CMP_NE:
      if (is32 && !fits32 (c->value))
        return "value does not fit this 32-bit argument";
      return NULL;
    case SECURER_CMP_LT:
    case SECURER_CMP_LE:
    case SECURER_CMP_GT:
    case SECURER_CMP_GE:
      if (is32 && c->value > 0xffffffffull)
        return "value does not fit this 32-bit argument (ordering comparisons are unsigned)";
      return NULL;
    case SECURER_CMP_MASKED_EQ:
      if (c->value & ~c->mask)
        return "value has bits outside the mask, so the condition can never hold";
      if (is32 && (c->mask >> 32) != 0 && (c->mask & 0xffffffffull) == 0)
        return "mask only covers the upper 32 bits of a 32-bit argument, which the kernel ignores";
      return NULL;
    }
  return "unknown comparison";
}

static int
cond_cubes (struct cubeset *s, const struct securer_arg_cond *c, bool is32)
{
  uint64_t w = is32 ? 0xffffffffull : ~0ull;
  uint64_t v = c->value & w;
  switch (c->op)
    {
    case SECURER_CMP_EQ:
      return cubeset_add (s, w, v);
    case SECURER_CMP_NE:
      {
        struct cube x = { .n_ne = 1, .ne = { v } };
        return cubeset_push (s, &x);
      }
    case SECURER_CMP_LT:
      return cubes_lt (s, v, w);
    case SECURER_CMP_LE:
      return v == w ? cubeset_add (s, 0, 0) : cubes_lt (s, v + 1, w);
    case SECURER_CMP_GT:
      return cubes_gt (s, v, w);
    case SECURER_CMP_GE:
      return v == 0 ? cubeset_add (s, 0, 0) : cubes_gt (s, v - 1, w);
    case SECURER_CMP_MASKED_EQ:
      return cubeset_add (s, c->mask & w, c->value & c->mask & w);
    }
  errno = EINVAL;
  return -1;
}

static bool
cond_holds (const struct securer_arg_cond *c, bool is32, uint64_t arg)
{
  uint64_t w = is32 ? 0xffffffffull : ~0ull;
  uint64_t a = arg & w, v = c->value & w;
  switch (c->op)
    {
    case SECURER_CMP_EQ: return a == v;
    case SECURER_CMP_NE: return a != v;
    case SECURER_CMP_LT: return a < v;
    case SECURER_CMP_LE: return a <= v;
    case SECURER_CMP_GT: return a > v;
    case SECURER_CMP_GE: return a >= v;
    case SECURER_CMP_MASKED_EQ: return (a & c->mask) == (c->value & c->mask & w);
    }
  return false;
}

/* r ∧ (arg = one of s) -> out */
static int
regions_and_cubes (struct regionset *out, const struct regionset *in, unsigned arg,
                   const struct cubeset *s, uint64_t w)
{
  for (size_t i = 0; i < in->n; i++)
    for (size_t j = 0; j < s->n; j++)
      {
        struct cubeset m = { 0 };
        if (atom_and (&m, &in->v[i].arg[arg], &s->v[j], w) < 0)
          {
            free (m.v);
            return -1;
          }
        for (size_t k = 0; k < m.n; k++)
          {
            struct region r = in->v[i];
            r.arg[arg] = m.v[k];
            if (regionset_add (out, &r) < 0)
              {
                free (m.v);
                return -1;
              }
          }
        free (m.v);
      }
  return 0;
}

/* a ∧ b -> out */
static int
region_and (struct regionset *out, const struct region *a, const struct region *b, unsigned args32)
{
  struct regionset acc = { 0 };
  if (regionset_add (&acc, a) < 0)
    return -1;
  for (unsigned k = 0; k < 6 && acc.n > 0; k++)
    {
      if (atom_any (&b->arg[k]))
        continue;
      struct cubeset one = { 0 };
      struct regionset next = { 0 };
      if (cubeset_push (&one, &b->arg[k]) < 0
          || regions_and_cubes (&next, &acc, k, &one, arg_width (args32, k)) < 0)
        {
          free (one.v);
          free (next.v);
          free (acc.v);
          return -1;
        }
      free (one.v);
      free (acc.v);
      acc = next;
    }
  int rc = 0;
  for (size_t i = 0; i < acc.n && rc == 0; i++)
    rc = regionset_add (out, &acc.v[i]);
  free (acc.v);
  return rc;
}

/* ¬r as disjoint regions: r's tests on the arguments before k hold, k's fails. */
static int
region_complement (struct regionset *out, const struct region *r, unsigned args32)
{
  struct region prefix = { 0 };
  for (unsigned k = 0; k < 6; k++)
    {
      if (atom_any (&r->arg[k]))
        continue;
      struct cubeset neg = { 0 };
      if (atom_complement (&neg, &r->arg[k], arg_width (args32, k)) < 0)
        {
          free (neg.v);
          return -1;
        }
      for (size_t i = 0; i < neg.n; i++)
        {
          struct region q = prefix;
          q.arg[k] = neg.v[i];
          if (regionset_add (out, &q) < 0)
            {
              free (neg.v);
              return -1;
            }
        }
      free (neg.v);
      prefix.arg[k] = r->arg[k];
    }
  return 0;
}

/* The regions in rs, their exclusions split into plain cubes, appended. */
static int
regions_expand (struct regionset *out, const struct regionset *rs, unsigned args32)
{
  for (size_t i = 0; i < rs->n; i++)
    {
      struct regionset acc = { 0 };
      struct region base = rs->v[i];
      for (unsigned k = 0; k < 6; k++)
        base.arg[k].n_ne = 0;
      if (regionset_add (&acc, &base) < 0)
        return -1;
      for (unsigned k = 0; k < 6; k++)
        {
          if (rs->v[i].arg[k].n_ne == 0)
            continue;
          struct cubeset cs = { 0 };
          struct regionset next = { 0 };
          int rc = atom_expand (&cs, &rs->v[i].arg[k], arg_width (args32, k));
          for (size_t a = 0; rc == 0 && a < acc.n; a++)
            for (size_t c = 0; rc == 0 && c < cs.n; c++)
              {
                struct region q = acc.v[a];
                q.arg[k] = cs.v[c];
                rc = regionset_add (&next, &q);
              }
          free (cs.v);
          free (acc.v);
          acc = next;
          if (rc < 0)
            {
              free (acc.v);
              return -1;
            }
        }
      for (size_t a = 0; a < acc.n; a++)
        if (regionset_add (out, &acc.v[a]) < 0)
          {
            free (acc.v);
            return -1;
          }
      free (acc.v);
    }
  return 0;
}

/* ---- the program ---------------------------------------------------------- */

static const char *
loc_file (const struct securer_loc *loc, const struct securer_policy *p)
{
  if (loc->file)
    return loc->file;
  if (p->path)
    return p->path;
  return "<policy>";
}

static int
rule_error (securer_err_t *err, int errnum, const struct securer_policy *p,
            const struct securer_syscall_rule *r, const char *fmt, const char *detail)
{
  if (r->loc.line)
    return securer_error_set (err, errnum, "%s:%u: %s: %s%s%s", loc_file (&r->loc, p), r->loc.line,
                              r->name ? r->name : "?", fmt, detail ? ": " : "", detail ? detail : "");
  return securer_error_set (err, errnum, "%s: rule for %s: %s%s%s", loc_file (&r->loc, p),
                            r->name ? r->name : "?", fmt, detail ? ": " : "", detail ? detail : "");
}

static int
check_action (const struct securer_action *a)
{
  switch (a->type)
    {
    case SECURER_ACT_ERRNO:
      return a->errnum >= 0 && a->errnum <= 4095 ? 0 : -1;
    case SECURER_ACT_ALLOW:
    case SECURER_ACT_KILL_PROCESS:
    case SECURER_ACT_KILL_THREAD:
    case SECURER_ACT_TRAP:
    case SECURER_ACT_LOG:
    case SECURER_ACT_NOTIFY:
      return 0;
    }
  return -1;
}

static uint32_t
scmp_action (const struct securer_seccomp_prog *prog, struct securer_action a)
{
  switch (a.type)
    {
    case SECURER_ACT_ALLOW: return SCMP_ACT_ALLOW;
    case SECURER_ACT_ERRNO: return SCMP_ACT_ERRNO ((unsigned) a.errnum);
    case SECURER_ACT_KILL_PROCESS: return prog->report ? SCMP_ACT_NOTIFY : SCMP_ACT_KILL_PROCESS;
    case SECURER_ACT_KILL_THREAD: return prog->report ? SCMP_ACT_NOTIFY : SCMP_ACT_KILL_THREAD;
    case SECURER_ACT_TRAP: return SCMP_ACT_TRAP;
    case SECURER_ACT_LOG: return SCMP_ACT_LOG;
    case SECURER_ACT_NOTIFY: return prog->notify ? SCMP_ACT_NOTIFY : SCMP_ACT_LOG;
    }
  return SCMP_ACT_KILL_PROCESS;
}

void
securer_seccomp_free (struct securer_seccomp_prog *prog)
{
  if (prog == NULL)
    return;
  if (prog->ctx)
    seccomp_release (prog->ctx);
  for (size_t i = 0; i < prog->n_rules; i++)
    {
      free (prog->rules[i].name);
      free (prog->rules[i].loc.file);
    }
  free (prog->rules);
  free (prog->bpf.filter);
  free (prog);
}

bool
securer_seccomp_enabled (const struct securer_seccomp_prog *prog)
{
  return prog != NULL && prog->enabled;
}

bool
securer_seccomp_uses_notify (const struct securer_seccomp_prog *prog)
{
  return prog != NULL && prog->enabled && prog->notify;
}

/* User notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE is API level 6. */
bool
securer_seccomp_can_continue (void)
{
  return seccomp_api_get () >= 6;
}

static int
cmp_rule_nr (const void *a, const void *b)
{
  const struct srule *x = *(const struct srule *const *) a, *y = *(const struct srule *const *) b;
  if (x->nr != y->nr)
    return x->nr < y->nr ? -1 : 1;
  /* Keep policy order within one syscall (qsort is not stable). */
  return x < y ? -1 : x > y;
}

static int
emit_regions (void *unused, struct securer_seccomp_prog *prog, int nr, const struct regionset *rs,
              struct securer_action act, const struct srule *why, const struct securer_policy *p,
              securer_err_t *err)
{
  uint32_t a = scmp_action (prog, act);
  if (a == scmp_action (prog, prog->def))
    return 0;  /* the default action applies anyway */
  for (size_t i = 0; i < rs->n; i++)
    {
      struct scmp_arg_cmp cmps[6];
      unsigned n = 0;
      for (unsigned k = 0; k < 6; k++)
        if (rs->v[i].arg[k].mask != 0)
          cmps[n++] = (struct scmp_arg_cmp) { k, SCMP_CMP_MASKED_EQ, rs->v[i].arg[k].mask, rs->v[i].arg[k].value };
      int rc = seccomp_rule_add_array (prog->ctx, a, nr, n, cmps);
      if (rc < 0)
        {
          if (why && why->loc.line)
            return securer_error_set (err, -rc, "%s:%u: %s: libseccomp refused the rule",
                                      loc_file (&why->loc, p), why->loc.line, why->name);
          return securer_error_set (err, -rc, "syscall %d: libseccomp refused the rule", nr);
        }
    }
  return 0;
}

typedef int (*emit_fn) (void *ctx, struct securer_seccomp_prog *prog, int nr, const struct regionset *rs,
                        struct securer_action act, const struct srule *why,
                        const struct securer_policy *p, securer_err_t *err);

static bool
same_action (struct securer_action a, struct securer_action b)
{
  return a.type == b.type && (a.type != SECURER_ACT_ERRNO || a.errnum == b.errnum);
}

/* The regions in which one action decides, and the first rule with it. */
struct group {
  struct securer_action act;
  const struct srule *why;
  struct regionset rs, out;
  size_t cost;  /* plain cubes out needs; SIZE_MAX when more than MAX_REGIONS */
};

static int
group_add (struct group *g, size_t *ng, struct securer_action act, const struct srule *why,
           const struct regionset *rs)
{
  size_t i = 0;
  while (i < *ng && !same_action (g[i].act, act))
    i++;
  if (i == *ng)
    {
      g[i] = (struct group) { .act = act, .why = why, .rs.max = MAX_EMIT, .out.max = MAX_EMIT };
      (*ng)++;
    }
  for (size_t k = 0; k < rs->n; k++)
    if (regionset_add (&g[i].rs, &rs->v[k]) < 0)
      return -1;
  return 0;
}

/* The complement of every region of the groups but `skip`, as plain cubes:
 * what `skip` decides, without the exclusions its own regions carry. */
static int
complement_of_others (struct regionset *out, const struct group *g, size_t ng, size_t skip,
                      unsigned args32)
{
  struct regionset acc = { .max = MAX_EMIT };
  struct region all = { 0 };
  if (regionset_add (&acc, &all) < 0)
    return -1;
  for (size_t i = 0; i < ng; i++)
    for (size_t j = 0; i != skip && j < g[i].rs.n; j++)
      {
        struct regionset comp = { 0 }, next = { .max = MAX_EMIT };
        int rc = region_complement (&comp, &g[i].rs.v[j], args32);
        for (size_t a = 0; rc == 0 && a < acc.n; a++)
          for (size_t c = 0; rc == 0 && c < comp.n; c++)
            rc = region_and (&next, &acc.v[a], &comp.v[c], args32);
        free (comp.v);
        free (acc.v);
        acc = next;
        if (rc < 0)
          {
            free (acc.v);
            return -1;
          }
      }
  int rc = regions_expand (out, &acc, args32);
  free (acc.v);
  return rc;
}

/* Compiles the rules of one syscall, rules[0..n) in policy order, into
 * disjoint regions handed to `emit` with the action that decides there. */
static int
compile_syscall (struct securer_seccomp_prog *prog, struct srule **rules, size_t n,
                 const struct securer_policy *p, emit_fn emit, void *ctx, securer_err_t *err)
{
  int nr = rules[0]->nr;
  unsigned args32 = rules[0]->args32;
  const struct srule *uncond = NULL;
  struct regionset remaining = { 0 };
  struct region all = { 0 };
  struct group *g = calloc (n + 1, sizeof *g);
  size_t ng = 0;
  int rc = -1;

  if (g == NULL || regionset_add (&remaining, &all) < 0)
    goto oom;

  for (size_t i = 0; i < n; i++)
    {
      const struct srule *r = rules[i];
      if (r->n_conds == 0)
        {
          if (uncond != NULL)
            {
              /* The same line twice (a profile's includes often overlap)
               * decides nothing new. */
              if (same_action (uncond->action, r->action))
                continue;
              securer_error_set (err, EINVAL, "%s:%u: %s: second unconditional rule (the first is at %s:%u)",
                                 loc_file (&r->loc, p), r->loc.line, r->name,
                                 loc_file (&uncond->loc, p), uncond->loc.line);
              goto out;
            }
          uncond = r;
          continue;
        }

      /* hit = remaining ∧ c1 ∧ ... ∧ cm;  remaining' = ⋃_j remaining ∧ c1..c(j-1) ∧ ¬cj */
      struct regionset prefix = { 0 }, next_remaining = { 0 };
      for (size_t k = 0; k < remaining.n; k++)
        if (regionset_add (&prefix, &remaining.v[k]) < 0)
          goto oom_cond;
      for (unsigned j = 0; j < r->n_conds && prefix.n > 0; j++)
        {
          const struct securer_arg_cond *c = &r->conds[j];
          bool is32 = (r->args32 >> c->arg) & 1;
          uint64_t w = is32 ? 0xffffffffull : ~0ull;
          struct cubeset pos = { 0 }, neg = { 0 };
          struct regionset t1 = { 0 }, t2 = { 0 };
          if (cond_cubes (&pos, c, is32) < 0
              || (pos.n == 1 ? atom_complement (&neg, &pos.v[0], w) : cubeset_complement (&neg, &pos)) < 0
              || regions_and_cubes (&t2, &prefix, c->arg, &neg, w) < 0
              || regions_and_cubes (&t1, &prefix, c->arg, &pos, w) < 0)
            {
              free (pos.v);
              free (neg.v);
              free (t1.v);
              free (t2.v);
              goto oom_cond;
            }
          for (size_t k = 0; k < t2.n; k++)
            if (regionset_add (&next_remaining, &t2.v[k]) < 0)
              {
                free (pos.v);
                free (neg.v);
                free (t1.v);
                free (t2.v);
                goto oom_cond;
              }
          free (pos.v);
          free (neg.v);
          free (t2.v);
          free (prefix.v);
          prefix = t1;
        }
      if (prefix.n > 0 && group_add (g, &ng, r->action, r, &prefix) < 0)
        goto oom_cond;
      free (prefix.v);
      free (remaining.v);
      remaining = next_remaining;
      continue;
    oom_cond:
      free (prefix.v);
      free (next_remaining.v);
      goto oom;
    }
  if (remaining.n > 0 && group_add (g, &ng, uncond ? uncond->action : prog->def, uncond, &remaining) < 0)
    goto oom;

  /* Every action but the default is emitted as plain cubes; the one that
   * needs the most may instead be the complement of all the others. */
  size_t big = SIZE_MAX;
  for (size_t i = 0; i < ng; i++)
    {
      if (same_action (g[i].act, prog->def))
        continue;
      if (regions_expand (&g[i].out, &g[i].rs, args32) < 0)
        {
          if (errno != E2BIG)
            goto oom;
          free (g[i].out.v);
          g[i].out = (struct regionset) { .max = MAX_EMIT };
          g[i].cost = SIZE_MAX;
        }
      else
        g[i].cost = g[i].out.n;
      if (big == SIZE_MAX || g[i].cost > g[big].cost)
        big = i;
    }
  if (big != SIZE_MAX && ng > 1 && g[big].cost > 1)
    {
      struct regionset alt = { .max = MAX_EMIT };
      int crc = complement_of_others (&alt, g, ng, big, args32);
      if (crc == 0 && alt.n < g[big].cost)
        {
          free (g[big].out.v);
          g[big].out = alt;
          g[big].cost = alt.n;
        }
      else
        {
          free (alt.v);
          if (crc < 0 && errno != E2BIG)
            goto oom;
        }
    }
  for (size_t i = 0; i < ng; i++)
    if (g[i].cost == SIZE_MAX)
      {
        errno = E2BIG;
        goto oom;
      }
  for (size_t i = 0; i < ng; i++)
    if (!same_action (g[i].act, prog->def) && emit (ctx, prog, nr, &g[i].out, g[i].act, g[i].why, p, err) < 0)
      goto out;
  rc = 0;
  goto out;

oom:
  if (errno == E2BIG)
    securer_error_set (err, E2BIG, "%s:%u: %s: the conditions on this syscall are too complex to compile (more than %d disjoint cases)",
                       loc_file (&rules[0]->loc, p), rules[0]->loc.line, rules[0]->name, MAX_REGIONS);
  else
    securer_error_set (err, ENOMEM, "compile rules for %s", rules[0]->name);
out:
  for (size_t i = 0; g && i < ng; i++)
    {
      free (g[i].rs.v);
      free (g[i].out.v);
    }
  free (g);
  free (remaining.v);
  return rc;
}

static int
add_srule (struct securer_seccomp_prog *prog, const struct securer_syscall_rule *r, int nr, size_t index)
{
  struct srule *nv = realloc (prog->rules, (prog->n_rules + 1) * sizeof *nv);
  if (nv == NULL)
    return -1;
  prog->rules = nv;
  struct srule *s = &prog->rules[prog->n_rules];
  memset (s, 0, sizeof *s);
  s->nr = nr;
  s->index = index;
  s->name = strdup (r->name);
  s->loc.file = r->loc.file ? strdup (r->loc.file) : NULL;
  s->loc.line = r->loc.line;
  s->loc.col = r->loc.col;
  if (s->name == NULL || (r->loc.file && s->loc.file == NULL))
    {
      free (s->name);
      free (s->loc.file);
      return -1;
    }
  s->action = r->action;
  s->n_conds = r->n_conds;
  memcpy (s->conds, r->conds, sizeof s->conds);
  s->args32 = securer_syscall_args32 (r->name);
  prog->n_rules++;
  return 0;
}

/* Generates the BPF program once (libseccomp writes it to an fd; a memfd
 * reads it back) and checks its size: the kernel refuses programs over
 * BPF_MAXINSNS with a bare EINVAL at load time, in the payload, so find
 * out here where the error can say why. */
static int
generate_bpf (struct securer_seccomp_prog *prog, securer_err_t *err)
{
  int fd = memfd_create ("securer-seccomp-bpf", MFD_CLOEXEC);
  if (fd < 0)
    return securer_error_set (err, errno, "generate the filter: memfd_create");
  int rc = seccomp_export_bpf (prog->ctx, fd);
  struct stat st;
  if (rc < 0 || fstat (fd, &st) < 0)
    {
      securer_error_set (err, rc < 0 ? -rc : errno, "generate the filter");
      close (fd);
      return -1;
    }
  size_t size = (size_t) st.st_size, insns = size / sizeof (struct sock_filter);
  if (insns > BPF_MAXINSNS)
    {
      close (fd);
      return securer_error_set (err, E2BIG, "the compiled filter has %zu instructions, more than the kernel's %d; "
                                "simplify the argument conditions (ranges and != expand the most)",
                                insns, BPF_MAXINSNS);
    }
  if (insns == 0 || size % sizeof (struct sock_filter) != 0)
    {
      close (fd);
      return securer_error_set (err, EINVAL, "generate the filter: %zu bytes is not a BPF program", size);
    }
  struct sock_filter *buf = malloc (size);
  if (buf == NULL)
    {
      close (fd);
      return securer_error_set (err, ENOMEM, "generate the filter");
    }
  size_t got = 0;
  while (got < size)
    {
      ssize_t n = pread (fd, (char *) buf + got, size - got, (off_t) got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          securer_error_set (err, n < 0 ? errno : EIO, "read back the generated filter");
          free (buf);
          close (fd);
          return -1;
        }
      got += (size_t) n;
    }
  close (fd);
  prog->bpf.len = (unsigned short) insns;
  prog->bpf.filter = buf;
  return 0;
}

/* The flags libseccomp's seccomp_load() would pass for this filter
 * (src/system.c: sys_filter_load), read from the same attributes, so
 * loading the pre-generated program behaves exactly as seccomp_load. */
static int
derive_load_flags (struct securer_seccomp_prog *prog, securer_err_t *err)
{
  uint32_t tsync = 0, log = 0, ssb = 0, nnp = 0;
  int rc;
  if ((rc = seccomp_attr_get (prog->ctx, SCMP_FLTATR_CTL_TSYNC, &tsync)) < 0
      || (rc = seccomp_attr_get (prog->ctx, SCMP_FLTATR_CTL_LOG, &log)) < 0
      || (rc = seccomp_attr_get (prog->ctx, SCMP_FLTATR_CTL_SSB, &ssb)) < 0
      || (rc = seccomp_attr_get (prog->ctx, SCMP_FLTATR_CTL_NNP, &nnp)) < 0)
    return securer_error_set (err, -rc, "read filter attributes");
  /* The launcher sets NO_NEW_PRIVS itself, as its own step; load checks it. */
  if (nnp)
    return securer_error_set (err, EINVAL, "the filter would set no_new_privs itself");
  unsigned long f = 0;
  /* API level 6: the kernel has TSYNC_ESRCH, so TSYNC can go with a
   * listener and reports a thread it cannot synchronise as ESRCH. */
  bool esrch = seccomp_api_get () >= 6;
  if (tsync)
    f |= SECCOMP_FILTER_FLAG_TSYNC | (esrch ? SECCOMP_FILTER_FLAG_TSYNC_ESRCH : 0);
  if (prog->notify)
    {
      if (tsync && !esrch)
        return securer_error_set (err, EOPNOTSUPP, "this kernel cannot combine thread sync with a listener");
      f |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
    }
  if (log)
    f |= SECCOMP_FILTER_FLAG_LOG;
  if (ssb)
    f |= SECCOMP_FILTER_FLAG_SPEC_ALLOW;
  prog->load_flags = f;
  return 0;
}

/* ---- the cache of generated programs (cache.c) ---------------------------- */

/* Bumped whenever the program generate_bpf makes for the same inputs
 * changes (attributes, rule emission), so older files are never found. */
#define CACHE_FORMAT 3

static void
key_u64 (struct securer_sha256 *s, uint64_t v)
{
  unsigned char b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char) (v >> (8 * i));
  securer_sha256_update (s, b, sizeof b);
}

/* Most rule fields fit 32 bits; the argument values do not. */
static void
key_u32 (struct securer_sha256 *s, uint32_t v)
{
  unsigned char b[4] = { (unsigned char) v, (unsigned char) (v >> 8), (unsigned char) (v >> 16),
                         (unsigned char) (v >> 24) };
  securer_sha256_update (s, b, sizeof b);
}

static void
key_action (struct securer_sha256 *s, struct securer_action a)
{
  key_u64 (s, (uint64_t) a.type);
  key_u64 (s, (uint64_t) (int64_t) a.errnum);
}

/* Everything that decides the program's bytes, each field at a fixed width
 * (no padding, no pointers): the rules in order as the compiler resolved
 * them (names resolved to numbers, 32-bit argument masks), the actions,
 * the notification choices and the hand-over fd, and what libseccomp and
 * the kernel contribute. */
static void
cache_key (const struct securer_seccomp_prog *prog, unsigned char key[SECURER_SHA256_LEN])
{
  struct securer_sha256 s;
  securer_sha256_init (&s);
  static const char tag[] = "securer seccomp program " PACKAGE_VERSION;
  securer_sha256_update (&s, tag, sizeof tag);
  const struct scmp_version *v = seccomp_version ();
  key_u64 (&s, CACHE_FORMAT);
  key_u64 (&s, v ? v->major : 0);
  key_u64 (&s, v ? v->minor : 0);
  key_u64 (&s, v ? v->micro : 0);
  key_u64 (&s, seccomp_arch_native ());
  key_u64 (&s, seccomp_api_get ());
  key_u64 (&s, prog->notify);
  key_u64 (&s, prog->report);
  key_u64 (&s, (uint64_t) (int64_t) prog->send_fd);
  key_action (&s, prog->def);
  key_action (&s, prog->foreign);
  key_u64 (&s, prog->n_rules);
  for (size_t i = 0; i < prog->n_rules; i++)
    {
      const struct srule *r = &prog->rules[i];
      key_u32 (&s, (uint32_t) r->nr);
      key_u32 (&s, (uint32_t) r->action.type);
      key_u32 (&s, (uint32_t) r->action.errnum);
      key_u32 (&s, r->args32);
      key_u32 (&s, r->n_conds);
      for (unsigned j = 0; j < r->n_conds; j++)
        {
          key_u32 (&s, r->conds[j].arg);
          key_u32 (&s, (uint32_t) r->conds[j].op);
          key_u64 (&s, r->conds[j].value);
          key_u64 (&s, r->conds[j].mask);
        }
    }
  securer_sha256_final (&s, key);
}

/* What the kernel returns for a policy action in this program. */
static struct securer_action
kernel_view (const struct securer_seccomp_prog *prog, struct securer_action a)
{
  if ((a.type == SECURER_ACT_KILL_PROCESS || a.type == SECURER_ACT_KILL_THREAD) && prog->report)
    return (struct securer_action) { SECURER_ACT_NOTIFY, 0 };
  if (a.type == SECURER_ACT_NOTIFY && !prog->notify)
    return (struct securer_action) { SECURER_ACT_LOG, 0 };
  return a;
}

static bool
program_gives (const struct sock_filter *insns, unsigned n, uint32_t arch, int nr, const uint64_t args[6],
               struct securer_action want)
{
  struct seccomp_data d;
  memset (&d, 0, sizeof d);
  d.nr = nr;
  d.arch = arch;
  memcpy (d.args, args, sizeof d.args);
  uint32_t ret;
  struct securer_action got;
  securer_err_t e = NULL;
  if (securer_bpf_run (insns, n, &d, &ret, &e) < 0 || securer_seccomp_ret_action (ret, &got) < 0)
    {
      securer_error_free (&e);
      return false;
    }
  return got.type == want.type && (got.type != SECURER_ACT_ERRNO || got.errnum == want.errnum);
}

#define VERIFY_NRS 1024
/* Numbers checked past the highest one a rule names: the binary tree
 * libseccomp builds sends all of them down the same default branch. */
#define VERIFY_BEYOND 64

/* A program read back from the cache is used only if the kernel would
 * accept it and it gives, for every syscall number up to VERIFY_BEYOND
 * past the highest the rules name (at most VERIFY_NRS) with all-zero and
 * all-one arguments, for an x32 and a foreign-arch call, the verdict the
 * policy gives: a file that does not hold this policy's program (corrupt,
 * stale or planted) is caught before it is loaded. */
static bool
verify_program (const struct securer_seccomp_prog *prog, const struct sock_filter *insns, unsigned n)
{
  securer_err_t e = NULL;
  if (securer_bpf_check (insns, n, &e) < 0)
    {
      securer_error_free (&e);
      return false;
    }
  uint32_t arch = seccomp_arch_native ();
  unsigned char has_rule[VERIFY_NRS / 8];
  memset (has_rule, 0, sizeof has_rule);
  int last = VERIFY_BEYOND;
  for (size_t i = 0; i < prog->n_rules; i++)
    if (prog->rules[i].nr >= 0 && prog->rules[i].nr < VERIFY_NRS)
      {
        has_rule[prog->rules[i].nr / 8] |= (unsigned char) (1u << (prog->rules[i].nr % 8));
        if (prog->rules[i].nr + VERIFY_BEYOND > last)
          last = prog->rules[i].nr + VERIFY_BEYOND;
      }
  if (last > VERIFY_NRS)
    last = VERIFY_NRS;
  /* The policy's verdict for a number depends only on the rules of that
   * number, first match first: evaluated on the slice of them (a stable
   * counting sort by number) it is the same, without walking every rule for
   * every number checked. */
  unsigned start[VERIFY_NRS + 1];
  memset (start, 0, sizeof start);
  for (size_t i = 0; i < prog->n_rules; i++)
    if (prog->rules[i].nr >= 0 && prog->rules[i].nr < VERIFY_NRS)
      start[prog->rules[i].nr + 1]++;
  for (int nr = 0; nr < VERIFY_NRS; nr++)
    start[nr + 1] += start[nr];
  struct srule *by_nr = start[VERIFY_NRS] ? malloc (start[VERIFY_NRS] * sizeof *by_nr) : NULL;
  if (by_nr != NULL)
    {
      unsigned fill[VERIFY_NRS];
      memcpy (fill, start, sizeof fill);
      for (size_t i = 0; i < prog->n_rules; i++)
        if (prog->rules[i].nr >= 0 && prog->rules[i].nr < VERIFY_NRS)
          by_nr[fill[prog->rules[i].nr]++] = prog->rules[i];
    }
  static const uint64_t zero[6], ones[6] = { ~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull };
  const uint64_t *vectors[] = { zero, ones };
  struct securer_action def = kernel_view (prog, prog->def);
  struct securer_seccomp_prog slice = *prog;
  bool same = true;
  for (int v = 0; v < 2 && same; v++)
    for (int nr = 0; nr < last && same; nr++)
      {
        if (by_nr != NULL)
          {
            slice.rules = by_nr + start[nr];
            slice.n_rules = start[nr + 1] - start[nr];
          }
        struct securer_action want = (has_rule[nr / 8] & (1u << (nr % 8)))
                                       ? kernel_view (prog, securer_seccomp_eval (&slice, arch, nr, vectors[v]))
                                       : def;
        same = program_gives (insns, n, arch, nr, vectors[v], want);
      }
  free (by_nr);
  if (!same)
    return false;
  struct securer_action foreign = kernel_view (prog, prog->foreign);
  if (arch == AUDIT_ARCH_X86_64 && !program_gives (insns, n, arch, X32_SYSCALL_BIT | 1, zero, foreign))
    return false;
  uint32_t other = arch == AUDIT_ARCH_I386 ? AUDIT_ARCH_X86_64 : AUDIT_ARCH_I386;
  return program_gives (insns, n, other, 1, zero, foreign);
}

bool
securer_seccomp_flags_expected (uint64_t flags, bool notify)
{
  unsigned long known = SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH | SECCOMP_FILTER_FLAG_NEW_LISTENER
                        | SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW;
  bool listener = (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) != 0;
  return (flags & ~(uint64_t) known) == 0 && listener == notify && (flags & SECCOMP_FILTER_FLAG_TSYNC) != 0;
}

/* 1 when the cache held this program's BPF and it passed every check. */
static int
cache_load (struct securer_seccomp_prog *prog, int dirfd, const unsigned char key[SECURER_SHA256_LEN])
{
  struct sock_filter *insns = NULL;
  unsigned n = 0;
  uint64_t flags = 0;
  if (securer_seccomp_cache_get (dirfd, key, &insns, &n, &flags) != 1)
    return 0;
  if (!securer_seccomp_flags_expected (flags, prog->notify) || !verify_program (prog, insns, n))
    {
      free (insns);
      return 0;
    }
  prog->bpf.filter = insns;
  prog->bpf.len = (unsigned short) n;
  prog->load_flags = (unsigned long) flags;
  return 1;
}

static int generate_uncached (struct securer_seccomp_prog *prog, const struct securer_policy *p,
                              securer_err_t *err);

int
securer_seccomp_generate (struct securer_seccomp_prog *prog, const struct securer_policy *p,
                          securer_err_t *err)
{
  if (!prog->enabled || prog->bpf.filter != NULL)
    return 0;
  int dirfd = prog->use_cache ? securer_seccomp_cache_open () : -1;
  if (dirfd < 0)
    return generate_uncached (prog, p, err);
  unsigned char key[SECURER_SHA256_LEN];
  cache_key (prog, key);
  int rc = 0;
  if (cache_load (prog, dirfd, key) != 1)
    {
      rc = generate_uncached (prog, p, err);
      if (rc == 0)
        securer_seccomp_cache_put (dirfd, key, prog->bpf.filter, prog->bpf.len, prog->load_flags);
    }
  close (dirfd);
  return rc;
}

static int
generate_uncached (struct securer_seccomp_prog *prog, const struct securer_policy *p, securer_err_t *err)
{
  prog->ctx = seccomp_init (scmp_action (prog, prog->def));
  if (prog->ctx == NULL)
    goto oom;
  uint32_t badarch = scmp_action (prog, prog->foreign);
  int rc;
  if ((rc = seccomp_attr_set (prog->ctx, SCMP_FLTATR_ACT_BADARCH, badarch)) < 0
      /* NO_NEW_PRIVS is the launcher's explicit step; load checks it. */
      || (rc = seccomp_attr_set (prog->ctx, SCMP_FLTATR_CTL_NNP, 0)) < 0
      || (rc = seccomp_attr_set (prog->ctx, SCMP_FLTATR_CTL_TSYNC, 1)) < 0
      /* Binary search over syscall numbers instead of a linear chain:
       * an allowlist of ~300 syscalls costs ~9 comparisons, not ~300. */
      || (rc = seccomp_attr_set (prog->ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0
      || (rc = seccomp_attr_set (prog->ctx, SCMP_FLTATR_API_SYSRAWRC, 1)) < 0)
    {
      securer_error_set (err, -rc, "set filter attributes");
      goto fail;
    }

  /* Group the rules by syscall, keeping policy order inside each group. */
  struct srule **order = malloc ((prog->n_rules ? prog->n_rules : 1) * sizeof *order);
  if (order == NULL)
    goto oom;
  for (size_t i = 0; i < prog->n_rules; i++)
    order[i] = &prog->rules[i];
  qsort (order, prog->n_rules, sizeof *order, cmp_rule_nr);
  for (size_t i = 0; i < prog->n_rules;)
    {
      size_t j = i;
      while (j < prog->n_rules && order[j]->nr == order[i]->nr)
        j++;
      if (compile_syscall (prog, order + i, j - i, p, emit_regions, NULL, err) < 0)
        {
          free (order);
          goto fail;
        }
      i = j;
    }
  free (order);
  if (generate_bpf (prog, err) < 0 || derive_load_flags (prog, err) < 0)
    goto fail;
  return 0;

oom:
  securer_error_set (err, ENOMEM, "seccomp compile");
fail:
  if (prog->ctx)
    seccomp_release (prog->ctx);
  prog->ctx = NULL;
  free (prog->bpf.filter);
  prog->bpf.filter = NULL;
  prog->bpf.len = 0;
  return -1;
}

int
securer_seccomp_compile (const struct securer_policy *p, unsigned flags, int notify_send_fd,
                         struct securer_seccomp_prog **out, securer_err_t *err)
{
  const struct securer_seccomp *sc = &p->seccomp;
  *out = NULL;
  if (flags & ~(unsigned) (SECURER_SECCOMP_REPORT_DENIALS | SECURER_SECCOMP_DEFER_BPF | SECURER_SECCOMP_CACHE))
    return securer_error_set (err, EINVAL, "seccomp compile: unknown flags 0x%x", flags);

  struct securer_seccomp_prog *prog = calloc (1, sizeof *prog);
  if (prog == NULL)
    return securer_error_set (err, ENOMEM, "seccomp compile");
  prog->send_fd = -1;
  prog->use_cache = (flags & SECURER_SECCOMP_CACHE) != 0;
  prog->enabled = sc->enabled;
  prog->def = sc->default_action;
  prog->foreign = sc->foreign_arch;
  if (!sc->enabled)
    {
      *out = prog;
      return 0;
    }

  if (check_action (&sc->default_action) < 0)
    {
      securer_error_set (err, EINVAL, "%s: seccomp default action: invalid", p->path ? p->path : "<policy>");
      goto fail;
    }
  if (check_action (&sc->foreign_arch) < 0 || sc->foreign_arch.type == SECURER_ACT_NOTIFY)
    {
      securer_error_set (err, EINVAL, "%s: seccomp foreign_arch action: must be allow, errno, kill, trap or log",
                         p->path ? p->path : "<policy>");
      goto fail;
    }

  bool has_notify_rules = sc->default_action.type == SECURER_ACT_NOTIFY;
  for (size_t i = 0; i < sc->n_rules; i++)
    has_notify_rules |= sc->rules[i].action.type == SECURER_ACT_NOTIFY;
  bool can_notify = securer_seccomp_can_continue ();
  prog->report = (flags & SECURER_SECCOMP_REPORT_DENIALS) && can_notify;
  prog->notify = can_notify && (prog->report || has_notify_rules);
  if (prog->report)
    {
      if (notify_send_fd < 0)
        {
          securer_error_set (err, EINVAL, "seccomp compile: reporting denials needs the fd the listener is sent over");
          goto fail;
        }
      prog->send_fd = notify_send_fd;
      /* The hand-over exceptions come first, so no policy rule can shadow
       * them: the offer goes out with sendmsg and the supervisor's answer
       * comes back with recvmsg, both on that one fd, which the command
       * can never own after exec (it is above its NOFILE limit). */
      static const char *const handover[] = { "sendmsg", "recvmsg" };
      for (size_t h = 0; h < 2; h++)
        {
          struct securer_syscall_rule ex = {
            .name = (char *) handover[h],
            .action = { SECURER_ACT_ALLOW, 0 },
            .n_conds = 1,
            .conds = { { .arg = 0, .op = SECURER_CMP_EQ, .value = (uint64_t) notify_send_fd } },
          };
          if (add_srule (prog, &ex, seccomp_syscall_resolve_name (handover[h]), SIZE_MAX) < 0)
            goto oom;
        }
    }

  for (size_t i = 0; i < sc->n_rules; i++)
    {
      const struct securer_syscall_rule *r = &sc->rules[i];
      if (r->name == NULL || r->name[0] == '\0')
        {
          rule_error (err, EINVAL, p, r, "rule without a syscall name", NULL);
          goto fail;
        }
      int nr = seccomp_syscall_resolve_name (r->name);
      if (nr == __NR_SCMP_ERROR)
        {
          rule_error (err, EINVAL, p, r, "unknown syscall", NULL);
          goto fail;
        }
      if (check_action (&r->action) < 0)
        {
          rule_error (err, EINVAL, p, r, "invalid action", r->action.type == SECURER_ACT_ERRNO ? "errno must be 0..4095" : NULL);
          goto fail;
        }
      if (r->n_conds > SECURER_MAX_ARG_CONDS)
        {
          rule_error (err, EINVAL, p, r, "too many conditions", NULL);
          goto fail;
        }
      unsigned args32 = securer_syscall_args32 (r->name);
      for (unsigned j = 0; j < r->n_conds; j++)
        {
          const char *why = cond_problem (&r->conds[j], (args32 >> r->conds[j].arg) & 1);
          if (why)
            {
              char detail[160];
              snprintf (detail, sizeof detail, "arg%u %s 0x%llx", r->conds[j].arg,
                        cmp_name (r->conds[j].op), (unsigned long long) r->conds[j].value);
              rule_error (err, EINVAL, p, r, why, detail);
              goto fail;
            }
        }
      /* A name of another arch (chown32 on x86_64) resolves to a negative
       * pseudo-number: nothing to filter here. */
      if (nr < 0)
        continue;
      if (add_srule (prog, r, nr, i) < 0)
        goto oom;
    }

  if (!(flags & SECURER_SECCOMP_DEFER_BPF) && securer_seccomp_generate (prog, p, err) < 0)
    goto fail;
  *out = prog;
  return 0;

oom:
  securer_error_set (err, ENOMEM, "seccomp compile");
fail:
  securer_seccomp_free (prog);
  return -1;
}

int
securer_seccomp_export_bpf (const struct securer_seccomp_prog *prog, int fd, securer_err_t *err)
{
  if (!prog->enabled)
    return securer_error_set (err, EINVAL, "export BPF: the policy disables seccomp");
  if (prog->ctx == NULL)
    return securer_error_set (err, EINVAL, "export BPF: the filter was not generated");
  int rc = seccomp_export_bpf (prog->ctx, fd);
  if (rc < 0)
    return securer_error_set (err, -rc, "export BPF");
  return 0;
}

int
securer_seccomp_export_pfc (const struct securer_seccomp_prog *prog, int fd, securer_err_t *err)
{
  if (!prog->enabled)
    return securer_error_set (err, EINVAL, "export filter text: the policy disables seccomp");
  if (prog->ctx == NULL)
    return securer_error_set (err, EINVAL, "export filter text: the filter was not generated");
  int rc = seccomp_export_pfc (prog->ctx, fd);
  if (rc < 0)
    return securer_error_set (err, -rc, "export filter text");
  return 0;
}

int
securer_seccomp_bpf (const struct securer_seccomp_prog *prog, const struct sock_filter **insns,
                     unsigned *n_insns, unsigned long *flags)
{
  if (!prog->enabled || prog->bpf.filter == NULL)
    return -1;
  *insns = prog->bpf.filter;
  *n_insns = prog->bpf.len;
  *flags = prog->load_flags;
  return 0;
}

int
securer_seccomp_install_bpf (const struct sock_filter *insns, unsigned n_insns, unsigned long flags,
                             int *listener)
{
  *listener = -1;
  if (n_insns == 0 || n_insns > BPF_MAXINSNS)
    return -EINVAL;
  int nnp = prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  if (nnp != 1)
    return nnp < 0 ? -errno : -EPERM;
  struct sock_fprog fp = { .len = (unsigned short) n_insns, .filter = (struct sock_filter *) insns };
  long rc = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp);
  if (rc < 0)
    return -errno;
  if (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER)
    *listener = (int) rc;
  else if (rc > 0)
    /* TSYNC without TSYNC_ESRCH: rc is the thread that could not be
     * synchronised (the filter is then not loaded). */
    return -ESRCH;
  return 0;
}

int
securer_seccomp_install (const struct securer_seccomp_prog *prog, int *listener)
{
  *listener = -1;
  if (!prog->enabled)
    return 0;
  if (prog->bpf.filter == NULL)
    return -EINVAL;  /* compiled with SECURER_SECCOMP_DEFER_BPF and never generated */
  return securer_seccomp_install_bpf (prog->bpf.filter, prog->bpf.len, prog->load_flags, listener);
}

int
securer_seccomp_load (struct securer_seccomp_prog *prog, int *notify_fd, securer_err_t *err)
{
  int fd = -1;
  int rc = securer_seccomp_install (prog, &fd);
  if (rc == -EPERM && prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
    return securer_error_set (err, EPERM, "load seccomp filter: no_new_privs is not set");
  if (rc < 0)
    return securer_error_set (err, -rc, "load seccomp filter");
  if (notify_fd)
    *notify_fd = fd;
  else if (fd >= 0)
    close (fd);
  return 0;
}

struct securer_action
securer_seccomp_decide (const struct securer_seccomp_prog *prog, uint32_t arch, int nr,
                        const uint64_t args[6], enum securer_decided_by *by, size_t *rule)
{
  enum securer_decided_by b = SECURER_BY_DEFAULT;
  size_t idx = SIZE_MAX;
  struct securer_action a = prog->def;
  if (!prog->enabled)
    {
      b = SECURER_BY_NO_FILTER;
      a = (struct securer_action) { SECURER_ACT_ALLOW, 0 };
    }
  /* arch 0 (SCMP_ARCH_NATIVE) stands for the native arch; libseccomp
   * treats x32 syscalls as a foreign ABI in an x86_64 filter. */
  else if ((arch != SCMP_ARCH_NATIVE && arch != seccomp_arch_native ())
           || (arch == AUDIT_ARCH_X86_64 && (uint32_t) nr >= X32_SYSCALL_BIT && nr != -1))
    {
      b = SECURER_BY_FOREIGN_ABI;
      a = prog->foreign;
    }
  else
    {
      const struct srule *uncond = NULL, *hit = NULL;
      for (size_t i = 0; i < prog->n_rules && hit == NULL; i++)
        {
          const struct srule *r = &prog->rules[i];
          if (r->nr != nr)
            continue;
          if (r->n_conds == 0)
            {
              if (uncond == NULL)
                uncond = r;
              continue;
            }
          bool all = true;
          for (unsigned j = 0; j < r->n_conds && all; j++)
            all = cond_holds (&r->conds[j], (r->args32 >> r->conds[j].arg) & 1, args[r->conds[j].arg]);
          if (all)
            hit = r;
        }
      if (hit == NULL)
        hit = uncond;
      if (hit != NULL)
        {
          b = SECURER_BY_RULE;
          idx = hit->index;
          a = hit->action;
        }
    }
  if (by)
    *by = b;
  if (rule)
    *rule = idx;
  return a;
}

struct securer_action
securer_seccomp_eval (const struct securer_seccomp_prog *prog, uint32_t arch, int nr,
                      const uint64_t args[6])
{
  return securer_seccomp_decide (prog, arch, nr, args, NULL, NULL);
}

/* ---- regions for other back ends (OCI export) ---------------------------- */

struct region_walk {
  securer_region_cb cb;
  void *ctx;
};

static int
emit_walk (void *ctx, struct securer_seccomp_prog *prog, int nr, const struct regionset *rs,
           struct securer_action act, const struct srule *why, const struct securer_policy *p,
           securer_err_t *err)
{
  struct region_walk *w = ctx;
  if (same_action (act, prog->def))
    return 0;
  for (size_t i = 0; i < rs->n; i++)
    {
      uint64_t mask[6], value[6];
      for (unsigned k = 0; k < 6; k++)
        {
          mask[k] = rs->v[i].arg[k].mask;
          value[k] = rs->v[i].arg[k].value;
        }
      if (w->cb (w->ctx, act, mask, value) < 0)
        return securer_error_set (err, ENOMEM, "export rules of syscall %d", nr);
    }
  return 0;
}

int
securer_seccomp_regions (const struct securer_seccomp_prog *cprog, const char *name,
                         securer_region_cb cb, void *ctx, securer_err_t *err)
{
  struct securer_seccomp_prog *prog = (struct securer_seccomp_prog *) cprog;
  int nr = seccomp_syscall_resolve_name (name);
  struct srule **sel = malloc ((prog->n_rules ? prog->n_rules : 1) * sizeof *sel);
  if (sel == NULL)
    return securer_error_set (err, ENOMEM, "regions of %s", name);
  size_t n = 0;
  for (size_t i = 0; i < prog->n_rules; i++)
    if (prog->rules[i].nr == nr && prog->rules[i].name != NULL && strcmp (prog->rules[i].name, name) == 0)
      sel[n++] = &prog->rules[i];
  int rc = 0;
  if (n > 0)
    {
      struct region_walk w = { cb, ctx };
      struct securer_policy dummy;
      memset (&dummy, 0, sizeof dummy);
      rc = compile_syscall (prog, sel, n, &dummy, emit_walk, &w, err);
    }
  free (sel);
  return rc;
}
