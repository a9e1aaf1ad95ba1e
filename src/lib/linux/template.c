/* Session templates, host side (template.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "linux/template.h"

int
securer_template_supported (const struct securer_policy *p, securer_err_t *err)
{
  (void) p;
  return securer_error_set (err, ENOTSUP, "session templates are not available yet");
}

int
securer_template_start (const struct securer_template_opts *o, struct securer_template **out,
                        securer_err_t *err)
{
  *out = NULL;
  return securer_template_supported (o->policy, err);
}

bool
securer_template_alive (const struct securer_template *t)
{
  (void) t;
  return false;
}

int
securer_template_spawn (struct securer_template *t, const struct securer_spawn_opts *so,
                        struct securer_sandbox **out, securer_err_t *err)
{
  (void) t;
  *out = NULL;
  return securer_template_supported (so->policy, err);
}

void
securer_template_free (struct securer_template *t)
{
  free (t);
}
