/* run.securer.policy: a securer policy layered on top of a container.
 * What runc's spec cannot express (Landlock rights, securer's exact
 * first-match seccomp rules) comes from the policy; the container itself
 * (rootfs, mounts, identity) stays as the spec says: the policy's mounts
 * are not made, they only say which paths Landlock opens and how. */
#include <config.h>

#include <stdlib.h>

#include "linux/linux.h"
#include "oci/oci.h"
#include "seccomp/seccomp.h"

int
oci_layer_load (const char *name_or_path, struct oci_layer **out, securer_err_t *err)
{
  char *path = NULL;
  struct oci_layer *l = calloc (1, sizeof *l);
  *out = NULL;
  if (securer_policy_find (name_or_path, &path, err) < 0
      || securer_policy_load_file (path, &l->policy, NULL, err) < 0
      || oci_seccomp_prepare (l->policy, &l->seccomp, err) < 0)
    {
      free (path);
      oci_layer_free (l);
      securer_error_prefix (err, "annotations.run.securer.policy");
      securer_error_set_status (err, 125);
      return -1;
    }
  free (path);
  *out = l;
  return 0;
}

int
oci_layer_landlock (const struct oci_layer *l, securer_err_t *err)
{
  if (l == NULL)
    return 0;
  struct securer_landlock_report rep = { 0 };
  int rc = securer_landlock_apply (l->policy, &rep, err);
  free (rep.summary);
  return rc < 0 ? securer_error_prefix (err, "annotations.run.securer.policy: landlock") : 0;
}

void
oci_layer_free (struct oci_layer *l)
{
  if (l == NULL)
    return;
  securer_seccomp_free (l->seccomp);
  securer_policy_free (l->policy);
  free (l);
}
