# A sandboxed R session as a tool for an ellmer chat: the model writes R
# code, the tool runs it and answers with what R printed.

# ellmer is optional and not packaged in Debian, so it is not declared
# (not even in Suggests, which R CMD check would then require): it is
# named through this variable and looked up only when asked for.
ellmer_pkg <- "ellmer"

#' An ellmer tool that runs R code in a sandboxed session
#'
#' Gives a language model (an `ellmer` chat) one tool, `execute_r_code`,
#' whose argument `code` runs in a [SecureSession].  State persists between
#' calls: the model can build on earlier results.  The answer is the code's
#' output, its printed value and its warnings, as the console shows them; an
#' error in the code is a tool error, which ellmer reports to the model, with
#' the output and warnings before it.  The session's own tools are listed in the
#' description so the model knows it can call them.
#'
#' ellmer is not part of Debian; without it this function stops with an
#' error saying so.
#' @param session a [SecureSession] to run the code in; `NULL` starts one
#'   (with `tools`, `sandbox` and `limits`) at the first call, closed when
#'   the tool is garbage-collected.
#' @param tools,sandbox,limits for the session started when `session` is
#'   `NULL`.
#' @param timeout seconds per call, `NULL` for none.
#' @return an ellmer tool definition (`ellmer::tool()`).
#' @export
as_ellmer_tool <- function(session = NULL, tools = list(), sandbox = TRUE, limits = NULL, timeout = 30) {
  if (!requireNamespace(ellmer_pkg, quietly = TRUE)) {
    stop("as_ellmer_tool() needs the ellmer package, which is not installed ",
         "(install.packages(\"ellmer\"); it is not packaged in Debian)", call. = FALSE)
  }
  parts <- ellmer_tool_parts(session, tools, sandbox, limits, timeout)
  # Looked up at run time: ellmer is an optional package, not a dependency.
  tool <- getExportedValue(ellmer_pkg, "tool")
  type_string <- getExportedValue(ellmer_pkg, "type_string")
  code_arg <- type_string("R code to run. Its printed output and the value of its last expression are returned.")
  # ellmer 0.3 renamed the arguments of tool() (.fun, .description, ...,
  # .name became fun, description, arguments = list(...), name).
  if ("arguments" %in% names(formals(tool))) {
    tool(parts$fun, parts$description, arguments = list(code = code_arg), name = "execute_r_code")
  } else {
    tool(parts$fun, parts$description, code = code_arg, .name = "execute_r_code")
  }
}

#' @rdname as_ellmer_tool
#' @param ... passed to `as_ellmer_tool()`.
#' @export
securer_as_ellmer_tool <- function(...) {
  .Deprecated("as_ellmer_tool", package = "securer")
  as_ellmer_tool(...)
}

# The tool's function and description, without ellmer.
ellmer_tool_parts <- function(session, tools, sandbox, limits, timeout) {
  if (!is.null(session) && !inherits(session, "SecureSession")) {
    stop("session must be a SecureSession or NULL", call. = FALSE)
  }
  tool_list <- if (is.null(session)) normalize_tools(tools) else NULL
  state <- new.env(parent = emptyenv())
  state$session <- session
  if (is.null(session)) {
    reg.finalizer(state, function(e) if (!is.null(e$session)) e$session$close(), onexit = TRUE)
  }
  fun <- function(code) {
    if (is.null(state$session)) {
      state$session <- SecureSession$new(tools = tool_list, sandbox = sandbox, limits = limits)
    }
    # What the console would show (format() of the result): the output,
    # the value printed (the sanitized one $execute() returns: classes kept
    # as data but for the allowed ones, references dropped, so printing it
    # reads nothing on the host), the warnings and the error, all made safe
    # for a terminal.  An error is a tool error with that whole text, so
    # the model sees what ran before it.
    r <- state$session$run(code, timeout = timeout)
    text <- paste(format(r), collapse = "\n")
    if (!is.null(r$error)) stop(text, call. = FALSE)
    if (nzchar(text)) text else "(no output)"
  }
  declared <- if (is.null(session)) tool_list else {
    lapply(session$tools(), function(t) list(name = t$name, args = t$args))
  }
  described <- vapply(declared, function(t) {
    name <- if (is(t, "securer_tool_class")) t@name else t$name
    args <- if (is(t, "securer_tool_class")) t@args else t$args
    desc <- if (is(t, "securer_tool_class") && nzchar(t@description)) paste0(": ", t@description) else ""
    sprintf("- %s(%s)%s", name, paste(names(args), collapse = ", "), desc)
  }, character(1))
  unsandboxed <- if (is.null(session)) isFALSE(sandbox) else grepl("sandbox: NONE", session$format(), fixed = TRUE)
  description <- paste(c(
    if (unsandboxed) "Run R code in a separate R session (NOT sandboxed: trusted code only)."
    else "Run R code in a sandboxed R session (no network, no access to the host's files).",
    "State persists between calls. Returns what the code printed and the value of its last expression.",
    if (length(described)) c("Functions available inside the session:", described)), collapse = "\n")
  list(fun = fun, description = description)
}
