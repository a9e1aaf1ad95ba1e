/* securer — sandbox runtime for untrusted code.  Umbrella header. */
#ifndef SECURER_H
#define SECURER_H

#include "securer/error.h"
#include "securer/paths.h"
#include "securer/policy.h"
#include "securer/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the library, e.g. "0.1.0". */
const char *securer_version (void);

#ifdef __cplusplus
}
#endif
#endif
