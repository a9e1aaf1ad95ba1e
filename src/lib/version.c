#include <config.h>

#include "securer.h"

const char *
securer_version (void)
{
  return PACKAGE_VERSION;
}
