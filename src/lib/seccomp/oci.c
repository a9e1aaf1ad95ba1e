/* OCI runtime-spec / Docker seccomp profiles: export and import. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp/argwidth.h"
#include "seccomp/ruletext.h"
#include "seccomp/seccomp.h"

/* ---- action and operator names ---------------------------------------------- */

static const char *
oci_action (enum securer_action_type t)
{
  switch (t)
    {
    case SECURER_ACT_ALLOW: return "SCMP_ACT_ALLOW";
    case SECURER_ACT_ERRNO: return "SCMP_ACT_ERRNO";
    case SECURER_ACT_KILL_PROCESS: return "SCMP_ACT_KILL_PROCESS";
    case SECURER_ACT_KILL_THREAD: return "SCMP_ACT_KILL_THREAD";
    case SECURER_ACT_TRAP: return "SCMP_ACT_TRAP";
    case SECURER_ACT_LOG: return "SCMP_ACT_LOG";
    case SECURER_ACT_NOTIFY: return "SCMP_ACT_NOTIFY";
    }
  return NULL;
}

static int
parse_oci_action (const char *s, enum securer_action_type *t)
{
  static const struct { const char *name; enum securer_action_type t; } map[] = {
    { "SCMP_ACT_ALLOW", SECURER_ACT_ALLOW },
    { "SCMP_ACT_ERRNO", SECURER_ACT_ERRNO },
    { "SCMP_ACT_KILL_PROCESS", SECURER_ACT_KILL_PROCESS },
    { "SCMP_ACT_KILL_THREAD", SECURER_ACT_KILL_THREAD },
    /* libseccomp's SCMP_ACT_KILL is the thread kill */
    { "SCMP_ACT_KILL", SECURER_ACT_KILL_THREAD },
    { "SCMP_ACT_TRAP", SECURER_ACT_TRAP },
    { "SCMP_ACT_LOG", SECURER_ACT_LOG },
    { "SCMP_ACT_NOTIFY", SECURER_ACT_NOTIFY },
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp (map[i].name, s) == 0)
      {
        *t = map[i].t;
        return 0;
      }
  return -1;
}

static const char *
oci_op (enum securer_cmp op)
{
  switch (op)
    {
    case SECURER_CMP_EQ: return "SCMP_CMP_EQ";
    case SECURER_CMP_NE: return "SCMP_CMP_NE";
    case SECURER_CMP_LT: return "SCMP_CMP_LT";
    case SECURER_CMP_LE: return "SCMP_CMP_LE";
    case SECURER_CMP_GT: return "SCMP_CMP_GT";
    case SECURER_CMP_GE: return "SCMP_CMP_GE";
    case SECURER_CMP_MASKED_EQ: return "SCMP_CMP_MASKED_EQ";
    }
  return NULL;
}

static int
parse_oci_op (const char *s, enum securer_cmp *op)
{
  for (int o = SECURER_CMP_EQ; o <= SECURER_CMP_MASKED_EQ; o++)
    if (strcmp (oci_op ((enum securer_cmp) o), s) == 0)
      {
        *op = (enum securer_cmp) o;
        return 0;
      }
  return -1;
}

static const char *
oci_native_arch (void)
{
  switch (seccomp_arch_native ())
    {
    case SCMP_ARCH_X86_64: return "SCMP_ARCH_X86_64";
    case SCMP_ARCH_AARCH64: return "SCMP_ARCH_AARCH64";
    case SCMP_ARCH_X86: return "SCMP_ARCH_X86";
    case SCMP_ARCH_ARM: return "SCMP_ARCH_ARM";
    case SCMP_ARCH_PPC64LE: return "SCMP_ARCH_PPC64LE";
    case SCMP_ARCH_S390X: return "SCMP_ARCH_S390X";
    case SCMP_ARCH_RISCV64: return "SCMP_ARCH_RISCV64";
    }
  return NULL;
}

/* ---- export ------------------------------------------------------------------ */

static json_t *
arg_json (unsigned index, const char *op, uint64_t value, uint64_t value2)
{
  return json_pack ("{s:I, s:I, s:I, s:s}", "index", (json_int_t) index, "value", (json_int_t) value,
                    "valueTwo", (json_int_t) value2, "op", op);
}

static json_t *
rule_json (const char *name, struct securer_action a, json_t *args)
{
  json_t *r = json_pack ("{s:[s], s:s}", "names", name, "action", oci_action (a.type));
  if (r == NULL)
    {
      json_decref (args);
      return NULL;
    }
  if (a.type == SECURER_ACT_ERRNO)
    json_object_set_new (r, "errnoRet", json_integer (a.errnum));
  if (args && json_array_size (args))
    json_object_set_new (r, "args", args);
  else
    json_decref (args);
  return r;
}

struct region_out {
  json_t *syscalls;
  const char *name;
};

static int
region_to_json (void *ctx, struct securer_action act, const uint64_t mask[6], const uint64_t value[6])
{
  struct region_out *o = ctx;
  json_t *args = json_array ();
  for (unsigned k = 0; k < 6; k++)
    if (mask[k])
      json_array_append_new (args, arg_json (k, "SCMP_CMP_MASKED_EQ", mask[k], value[k]));
  json_t *r = rule_json (o->name, act, args);
  return r && json_array_append_new (o->syscalls, r) == 0 ? 0 : -1;
}

/* Whether the rules of one syscall can be exported as written: a single
 * action (so overlap does not matter without order), and only comparisons an
 * OCI runtime evaluates exactly as we do. */
static bool
exportable_as_written (const struct securer_seccomp *sc, const char *name)
{
  const struct securer_action *first = NULL;
  unsigned args32 = securer_syscall_args32 (name);
  for (size_t i = 0; i < sc->n_rules; i++)
    {
      const struct securer_syscall_rule *r = &sc->rules[i];
      if (strcmp (r->name, name) != 0)
        continue;
      if (first && (first->type != r->action.type || first->errnum != r->action.errnum))
        return false;
      first = &r->action;
      for (unsigned j = 0; j < r->n_conds; j++)
        if (((args32 >> r->conds[j].arg) & 1) && r->conds[j].op != SECURER_CMP_EQ
            && r->conds[j].op != SECURER_CMP_MASKED_EQ)
          return false;
    }
  return true;
}

json_t *
securer_seccomp_to_oci (const struct securer_policy *p, securer_err_t *err)
{
  const struct securer_seccomp *sc = &p->seccomp;
  struct securer_seccomp_prog *prog = NULL;
  if (securer_seccomp_compile (p, 0, -1, &prog, err) < 0)
    return NULL;
  json_t *root = json_object ();
  json_t *syscalls = json_array ();
  json_object_set_new (root, "defaultAction", json_string (oci_action (sc->default_action.type)));
  if (sc->default_action.type == SECURER_ACT_ERRNO)
    json_object_set_new (root, "defaultErrnoRet", json_integer (sc->default_action.errnum));
  /* Only the native ABI: the runtime's bad-arch handling stops the others. */
  json_object_set_new (root, "architectures", json_pack ("[s]", oci_native_arch ()));
  json_object_set_new (root, "syscalls", syscalls);

  for (size_t i = 0; i < sc->n_rules; i++)
    {
      const struct securer_syscall_rule *r = &sc->rules[i];
      bool seen = false;
      for (size_t k = 0; k < i && !seen; k++)
        seen = strcmp (sc->rules[k].name, r->name) == 0;
      if (seen || seccomp_syscall_resolve_name (r->name) < 0)
        continue;  /* handled with its first rule / not on this arch */
      if (!exportable_as_written (sc, r->name))
        {
          struct region_out o = { syscalls, r->name };
          if (securer_seccomp_regions (prog, r->name, region_to_json, &o, err) < 0)
            goto fail;
          continue;
        }
      unsigned args32 = securer_syscall_args32 (r->name);
      for (size_t k = i; k < sc->n_rules; k++)
        {
          const struct securer_syscall_rule *q = &sc->rules[k];
          if (strcmp (q->name, r->name) != 0)
            continue;
          json_t *args = json_array ();
          for (unsigned j = 0; j < q->n_conds; j++)
            {
              const struct securer_arg_cond *c = &q->conds[j];
              bool is32 = (args32 >> c->arg) & 1;
              if (is32 && c->op == SECURER_CMP_EQ)
                json_array_append_new (args, arg_json (c->arg, "SCMP_CMP_MASKED_EQ", 0xffffffffu,
                                                       c->value & 0xffffffffu));
              else if (is32 && c->op == SECURER_CMP_MASKED_EQ)
                json_array_append_new (args, arg_json (c->arg, "SCMP_CMP_MASKED_EQ", c->mask & 0xffffffffu,
                                                       c->value & c->mask & 0xffffffffu));
              else if (c->op == SECURER_CMP_MASKED_EQ)
                json_array_append_new (args, arg_json (c->arg, "SCMP_CMP_MASKED_EQ", c->mask, c->value));
              else
                json_array_append_new (args, arg_json (c->arg, oci_op (c->op), c->value, 0));
            }
          json_t *rj = rule_json (q->name, q->action, args);
          if (rj == NULL || json_array_append_new (syscalls, rj) < 0)
            {
              securer_error_set (err, ENOMEM, "export OCI profile");
              goto fail;
            }
        }
    }
  securer_seccomp_free (prog);
  return root;
fail:
  securer_seccomp_free (prog);
  json_decref (root);
  return NULL;
}

/* ---- import ------------------------------------------------------------------ */

struct out {
  char *buf;
  size_t len;
  FILE *f;
};

static int
json_u64 (json_t *j, uint64_t *v)
{
  if (j == NULL)
    {
      *v = 0;
      return 0;
    }
  if (!json_is_integer (j))
    return -1;
  /* jansson holds 64-bit signed integers; masks like 0xffffffffffffffff
   * arrive as -1 and mean the same bits. */
  *v = (uint64_t) json_integer_value (j);
  return 0;
}

/* Does a Docker-style includes/excludes block keep this rule for a sandbox
 * that has no capabilities and runs on the native arch? */
static bool
applies_here (json_t *rule, const char **why)
{
  const char *native = oci_native_arch ();
  json_t *inc = json_object_get (rule, "includes"), *exc = json_object_get (rule, "excludes");
  json_t *v;
  size_t i;
  if (json_is_object (inc))
    {
      json_t *caps = json_object_get (inc, "caps");
      if (json_is_array (caps) && json_array_size (caps) > 0)
        {
          *why = "only with a capability, which the sandbox never has";
          return false;
        }
      json_t *arches = json_object_get (inc, "arches");
      if (json_is_array (arches) && json_array_size (arches) > 0)
        {
          bool found = false;
          json_array_foreach (arches, i, v)
            {
              const char *a = json_string_value (v);
              if (a && native && (strcasecmp (a, native) == 0 || strcasecmp (a, native + strlen ("SCMP_ARCH_")) == 0
                                  || (strcmp (native, "SCMP_ARCH_X86_64") == 0 && strcmp (a, "amd64") == 0)))
                found = true;
            }
          if (!found)
            {
              *why = "only on another architecture";
              return false;
            }
        }
    }
  if (json_is_object (exc))
    {
      json_t *arches = json_object_get (exc, "arches");
      json_array_foreach (arches, i, v)
        {
          const char *a = json_string_value (v);
          if (a && native && (strcasecmp (a, native) == 0 || strcasecmp (a, native + strlen ("SCMP_ARCH_")) == 0
                              || (strcmp (native, "SCMP_ARCH_X86_64") == 0 && strcmp (a, "amd64") == 0)))
            {
              *why = "excluded on this architecture";
              return false;
            }
        }
    }
  return true;
}

struct irule {
  char *name;
  enum securer_action_type act;
  int errnum;
  unsigned n;
  struct securer_arg_cond c[SECURER_MAX_ARG_CONDS];
};

static int
cmp_irule (const void *a, const void *b)
{
  const struct irule *x = a, *y = b;
  int c = strcmp (x->name, y->name);
  if (c)
    return c;
  /* Within one syscall: conditional rules first (in file order), then the
   * unconditional one — what the profile's author meant, since an OCI
   * runtime has no order and libseccomp would let the unconditional rule
   * swallow the conditional ones. */
  if ((x->n == 0) != (y->n == 0))
    return x->n == 0 ? 1 : -1;
  return x < y ? -1 : x > y;
}

char *
securer_seccomp_import_oci (const char *name, const char *text, size_t len, securer_err_t *err)
{
  json_error_t je;
  json_t *root = json_loadb (text, len, 0, &je);
  if (root == NULL)
    {
      securer_error_set (err, EINVAL, "%s:%d:%d: %s", name, je.line, je.column, je.text);
      return NULL;
    }
  /* A whole runtime-spec config.json: take linux.seccomp. */
  json_t *prof = root;
  json_t *lin = json_object_get (root, "linux");
  if (json_is_object (lin) && json_is_object (json_object_get (lin, "seccomp")))
    prof = json_object_get (lin, "seccomp");

  struct out o = { NULL, 0, NULL };
  struct irule *rules = NULL;
  size_t n_rules = 0;
  o.f = open_memstream (&o.buf, &o.len);
  if (o.f == NULL)
    {
      json_decref (root);
      securer_error_set (err, ENOMEM, "import %s", name);
      return NULL;
    }
  FILE *f = o.f;

  const char *def = json_string_value (json_object_get (prof, "defaultAction"));
  enum securer_action_type dt;
  if (def == NULL || parse_oci_action (def, &dt) < 0)
    {
      securer_error_set (err, EINVAL, "%s: defaultAction: expected one of SCMP_ACT_ALLOW, SCMP_ACT_ERRNO, "
                         "SCMP_ACT_KILL_PROCESS, SCMP_ACT_KILL_THREAD, SCMP_ACT_KILL, SCMP_ACT_TRAP, "
                         "SCMP_ACT_LOG, SCMP_ACT_NOTIFY, got %s", name, def ? def : "nothing");
      goto fail;
    }
  uint64_t defret = EPERM;
  if (json_object_get (prof, "defaultErrnoRet") && json_u64 (json_object_get (prof, "defaultErrnoRet"), &defret) < 0)
    {
      securer_error_set (err, EINVAL, "%s: defaultErrnoRet: expected a number", name);
      goto fail;
    }

  fprintf (f, "# Imported from %s (OCI seccomp profile).\n", name);
  fputs ("# Syscalls of other ABIs never reach these rules: securer stops them first.\n", f);
  fputs ("seccomp on\nseccomp default ", f);
  securer_rule_put_action (f, (struct securer_action) { dt, (int) defret });
  fputs ("\nseccomp foreign-abi kill-process\n", f);

  json_t *sys = json_object_get (prof, "syscalls");
  if (sys != NULL && !json_is_array (sys))
    {
      securer_error_set (err, EINVAL, "%s: syscalls: expected an array", name);
      goto fail;
    }
  size_t i;
  json_t *r;
  json_array_foreach (sys, i, r)
    {
      const char *why = NULL;
      json_t *names = json_object_get (r, "names");
      if (names == NULL && json_is_string (json_object_get (r, "name")))
        names = json_pack ("[O]", json_object_get (r, "name"));
      else
        json_incref (names);
      if (!json_is_array (names))
        {
          json_decref (names);
          securer_error_set (err, EINVAL, "%s: syscalls[%zu]: expected \"names\" (an array of syscall names)", name, i);
          goto fail;
        }
      const char *as = json_string_value (json_object_get (r, "action"));
      enum securer_action_type at;
      if (as == NULL || parse_oci_action (as, &at) < 0)
        {
          json_decref (names);
          securer_error_set (err, EINVAL, "%s: syscalls[%zu]: unsupported action %s", name, i, as ? as : "(none)");
          goto fail;
        }
      uint64_t ret = EPERM;
      if (json_object_get (r, "errnoRet") && json_u64 (json_object_get (r, "errnoRet"), &ret) < 0)
        {
          json_decref (names);
          securer_error_set (err, EINVAL, "%s: syscalls[%zu]: errnoRet: expected a number", name, i);
          goto fail;
        }
      if (!applies_here (r, &why))
        {
          fprintf (f, "# left out (%s):", why);
          size_t k;
          json_t *nm;
          json_array_foreach (names, k, nm) fprintf (f, " %s", json_string_value (nm) ? json_string_value (nm) : "?");
          fputc ('\n', f);
          json_decref (names);
          continue;
        }
      struct irule base = { NULL, at, (int) ret, 0, { { 0 } } };
      json_t *args = json_object_get (r, "args");
      size_t k;
      json_t *a;
      json_array_foreach (args, k, a)
        {
          if (base.n == SECURER_MAX_ARG_CONDS)
            {
              json_decref (names);
              securer_error_set (err, EINVAL, "%s: syscalls[%zu]: more than %d argument conditions", name, i,
                                 SECURER_MAX_ARG_CONDS);
              goto fail;
            }
          uint64_t idx, v1, v2;
          const char *ops = json_string_value (json_object_get (a, "op"));
          enum securer_cmp op;
          if (json_u64 (json_object_get (a, "index"), &idx) < 0 || idx > 5
              || json_u64 (json_object_get (a, "value"), &v1) < 0
              || json_u64 (json_object_get (a, "valueTwo"), &v2) < 0 || ops == NULL || parse_oci_op (ops, &op) < 0)
            {
              json_decref (names);
              securer_error_set (err, EINVAL, "%s: syscalls[%zu].args[%zu]: expected index 0..5, value, "
                                 "valueTwo and op SCMP_CMP_*", name, i, k);
              goto fail;
            }
          struct securer_arg_cond *c = &base.c[base.n++];
          c->arg = (unsigned) idx;
          c->op = op;
          if (op == SECURER_CMP_MASKED_EQ)
            {
              /* OCI: value is the mask, valueTwo the datum. */
              c->mask = v1;
              c->value = v2 & v1;
            }
          else
            c->value = v1;
        }
      json_t *nm;
      json_array_foreach (names, k, nm)
        {
          const char *sn = json_string_value (nm);
          if (sn == NULL)
            continue;
          if (!securer_syscall_known (sn))
            {
              fprintf (f, "# unknown to this libseccomp, left out: %s\n", sn);
              continue;
            }
          struct irule *nr = realloc (rules, (n_rules + 1) * sizeof *nr);
          if (nr == NULL)
            {
              json_decref (names);
              securer_error_set (err, ENOMEM, "import %s", name);
              goto fail;
            }
          rules = nr;
          rules[n_rules] = base;
          rules[n_rules].name = strdup (sn);
          n_rules++;
        }
      json_decref (names);
    }

  qsort (rules, n_rules, sizeof *rules, cmp_irule);
  /* Unconditional rules with the same action share a line; a second
   * unconditional rule for a syscall cannot mean anything and is dropped. */
  for (size_t j = 0; j < n_rules;)
    {
      struct irule *q = &rules[j];
      if (j > 0 && q->n == 0 && rules[j - 1].n == 0 && strcmp (rules[j - 1].name, q->name) == 0)
        {
          fprintf (f, "# duplicate unconditional rule for %s left out\n", q->name);
          j++;
          continue;
        }
      struct securer_rule_style style = { securer_syscall_args32 (q->name), false, NULL, NULL };
      securer_rule_put (f, q->name, (struct securer_action) { q->act, q->errnum }, q->c, q->n, &style);
      fputc ('\n', f);
      j++;
    }
  for (size_t j = 0; j < n_rules; j++)
    free (rules[j].name);
  free (rules);
  json_decref (root);
  if (fclose (f) != 0)
    {
      free (o.buf);
      securer_error_set (err, ENOMEM, "import %s", name);
      return NULL;
    }
  return o.buf;

fail:
  for (size_t j = 0; j < n_rules; j++)
    free (rules[j].name);
  free (rules);
  json_decref (root);
  fclose (f);
  free (o.buf);
  return NULL;
}
