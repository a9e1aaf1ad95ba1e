/* Seccomp rules as policy text; see ruletext.h. */
#include <config.h>

#include <inttypes.h>

#include "seccomp/ruletext.h"
#include "seccomp/seccomp.h"

static int
put_action (FILE *f, struct securer_action a)
{
  const char *n = securer_action_name (a.type);
  int len = fprintf (f, "%s", n ? n : "?");
  if (a.type != SECURER_ACT_ERRNO)
    return len;
  const char *en = securer_errno_name (a.errnum);
  return len + (en ? fprintf (f, " %s", en) : fprintf (f, " %d", a.errnum));
}

void
securer_rule_put_action (FILE *f, struct securer_action a)
{
  put_action (f, a);
}

static int
put_value (FILE *f, unsigned arg, uint64_t v, const struct securer_rule_style *st)
{
  const char *name = st->value_name ? st->value_name (st->ctx, arg, v) : NULL;
  if (name != NULL)
    return fprintf (f, "%s", name);
  if (v < 4096 && !st->hex)
    return fprintf (f, "%" PRIu64, v);
  return fprintf (f, "0x%" PRIx64, v);
}

int
securer_rule_put (FILE *f, const char *name, struct securer_action a, const struct securer_arg_cond *conds,
                  unsigned n_conds, const struct securer_rule_style *style)
{
  static const struct securer_rule_style plain = { 0, false, NULL, NULL };
  static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=", "==" };
  const struct securer_rule_style *st = style ? style : &plain;
  int len = fprintf (f, "seccomp ");
  len += put_action (f, a);
  len += fprintf (f, " %s", name);
  for (unsigned k = 0; k < n_conds && k < SECURER_MAX_ARG_CONDS; k++)
    {
      const struct securer_arg_cond *c = &conds[k];
      len += fprintf (f, " %s arg%u ", k == 0 ? "if" : "and", c->arg);
      if (c->op == SECURER_CMP_MASKED_EQ && !(((st->args32 >> c->arg) & 1) && c->mask == 0xffffffffu))
        {
          len += fprintf (f, "& ");
          len += put_value (f, c->arg, c->mask, st);
          len += fprintf (f, " == ");
        }
      else
        len += fprintf (f, "%s ", (unsigned) c->op < sizeof ops / sizeof *ops ? ops[c->op] : "?");
      len += put_value (f, c->arg, c->value, st);
    }
  return len;
}
