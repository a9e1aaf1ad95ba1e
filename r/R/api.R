#' Run R code once in a fresh sandboxed session
#' @inheritParams SecureSession
#' @param code R code.
#' @param timeout seconds, `NULL` for none.
#' @param validate check the syntax before running.
#' @param tools a list of [securer_tool()]s.
#' @param sandbox,limits,verbose,sandbox_strict,audit_log as for `SecureSession$new()`.
#' @export
execute_r <- function(code, tools = list(), timeout = 30, sandbox = TRUE, limits = NULL, verbose = FALSE,
                      validate = TRUE, sandbox_strict = FALSE, audit_log = NULL) {
  session <- SecureSession$new(tools = tools, sandbox = sandbox, limits = limits, verbose = verbose,
                               sandbox_strict = sandbox_strict, audit_log = audit_log, .shared = TRUE)
  on.exit(session$close(), add = TRUE)
  session$execute(code, timeout = timeout, validate = validate)
}

#' Run a function with a session that is closed afterwards
#' @param fn function(session).
#' @param tools,sandbox,... passed to `SecureSession$new()`.
#' @export
with_secure_session <- function(fn, tools = list(), sandbox = TRUE, ...) {
  session <- SecureSession$new(tools = tools, sandbox = sandbox, ...)
  on.exit(session$close(), add = TRUE)
  fn(session)
}

#' Check code before running it
#'
#' Parses (never evaluates) the code and notes calls that deserve a second
#' look; the notes are advisory, the sandbox is the enforcement layer.
#' @param code R code: a character vector (its elements lines); anything
#'   else is an error.
#' @return `list(valid, error, warnings)`.
#' @export
validate_code <- function(code) {
  if (!is.character(code) || !length(code)) stop("code must be a character string", call. = FALSE)
  code <- paste(code, collapse = "\n")
  exprs <- tryCatch(parse(text = code, keep.source = FALSE), error = function(e) e)
  if (inherits(exprs, "error")) {
    return(list(valid = FALSE, error = paste0("syntax error: ", conditionMessage(exprs)), warnings = character()))
  }
  risky <- c("system", "system2", "shell", "pipe", "url", "download.file", "socketConnection",
             ".Call", ".C", ".Fortran", ".External", ".Internal", "dyn.load", "library.dynam", "eval", "do.call",
             "Sys.setenv", "file.remove", "unlink")
  found <- intersect(all.names(as.call(c(as.name("{"), as.list(exprs)))), risky)
  list(valid = TRUE, error = NULL,
       warnings = sprintf("call to %s() found: advisory only, the sandbox is the enforcement layer", found))
}
