/* Advisory pre-validation.  The syntax check runs inside the sandboxed R
 * (parse() only, never eval) because only R's own parser knows R's
 * grammar; the walk that looks for risky calls runs there too, over the
 * parsed expressions rather than the text, so that a string or a comment
 * mentioning system() is not reported.  The list lives here so there is one
 * place to extend it.  None of this is a security boundary: the sandbox is. */
#include <config.h>

#include "session/internal.h"

static const char *const risky[] = {
  "system", "system2", "shell", "shell.exec", ".Call", ".C", ".External", ".External2",
  ".Fortran", ".Internal", ".Primitive", "dyn.load", "dyn.unload", "library.dynam", "pipe",
  "fifo", "socketConnection", "socketAccept", "serverSocket", "make.socket", "url",
  "download.file", "curlGetHeaders", "do.call", "Sys.setenv", "Sys.unsetenv", "setwd",
  "unlockBinding", "assignInNamespace", "getNativeSymbolInfo", "processx::run",
  "processx::process", "callr::r", "callr::r_bg", "callr::r_session",
  NULL,
};

const char *const *
securer_risky_calls (void)
{
  return risky;
}
