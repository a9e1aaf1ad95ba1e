# Tools: host R functions the sandboxed code calls by name.

tool_arg_types <- c("numeric", "integer", "character", "logical", "list", "data.frame", "any")

is_identifier <- function(x) {
  is_string(x) && grepl("^((([[:alpha:]]|[.][._[:alpha:]])[._[:alnum:]]*)|[.])$", x) &&
    !x %in% c("if", "else", "repeat", "while", "function", "for", "next", "break", "TRUE", "FALSE",
              "NULL", "Inf", "NaN", "NA", "NA_integer_", "NA_real_", "NA_character_", "in")
}

#' The class of tools
#'
#' A base-R S4 class; its fields are read with `@`: `name`, `description`,
#' `fn`, `args` (a named list of argument types) and `classes` (whether the
#' arguments keep their allowed classes).
#' @export
securer_tool_class <- setClass("securer_tool_class",
  slots = c(name = "character", description = "character", fn = "function", args = "list", classes = "logical"))

#' Define a tool the sandboxed code can call
#'
#' @param name the function name inside the sandbox (an R identifier).
#' @param description what the tool does (for people and models).
#' @param fn the host R function that runs for each call; its errors are
#'   errors in the sandboxed code.
#' @param args a named list (or character vector) of argument types:
#'   "numeric", "integer", "character", "logical", "list", "data.frame" or
#'   "any" (`NULL` is "any").
#' @param classes `FALSE` (the default): the arguments arrive as base types
#'   (a factor as its integer codes with a `levels` attribute, a data frame as
#'   a named list with `row.names`, a `Date` as a number), each class the
#'   sandboxed code gave kept as data in the attribute `securer_class`.
#'   `TRUE`: the classes that `$execute()` restores on its values (factor,
#'   ordered, Date, POSIXct and POSIXlt with a valid zone, difftime,
#'   data.frame, table, noquote) are restored on the arguments too, so that
#'   a `"data.frame"` argument arrives as a data frame; any other class is
#'   still kept as data.  The sandboxed code chooses the classes of what it
#'   passes: opt in only for a function that wants them.
#' @export
securer_tool <- function(name, description, fn, args = list(), classes = FALSE) {
  if (!is_identifier(name)) stop(sprintf("Tool name '%s' must be a valid R identifier", format(name)), call. = FALSE)
  if (!is.function(fn)) stop(sprintf("Tool '%s': fn must be a function", name), call. = FALSE)
  args <- as.list(args)
  if (length(args) > 0L) {
    an <- names(args)
    if (is.null(an) || any(!nzchar(an))) stop(sprintf("Tool '%s': every argument must be named", name), call. = FALSE)
    for (a in an) {
      if (!is_identifier(a)) stop(sprintf("Tool '%s': argument name '%s' must be a valid R identifier", name, a), call. = FALSE)
    }
    if (anyDuplicated(an)) stop(sprintf("Tool '%s': Duplicate argument '%s'", name, an[anyDuplicated(an)]), call. = FALSE)
    for (a in an) {
      # A type declared NULL accepts anything.
      if (is.null(args[[a]])) args[a] <- list("any")
      t <- args[[a]]
      if (!is_string(t) || !t %in% tool_arg_types) {
        stop(sprintf("Tool '%s': argument '%s' has an unknown type (one of %s)", name, a,
                     paste(tool_arg_types, collapse = ", ")), call. = FALSE)
      }
    }
  }
  if (!isTRUE(classes) && !isFALSE(classes)) stop(sprintf("Tool '%s': classes must be TRUE or FALSE", name), call. = FALSE)
  new("securer_tool_class", name = name, description = as.character(description)[1], fn = fn, args = args,
      classes = classes)
}

# A list of tools: securer_tool objects, or list(name = , fn = , args = )
# legacy lists; names unique.
normalize_tools <- function(tools) {
  if (is.null(tools)) tools <- list()
  if (is(tools, "securer_tool_class")) tools <- list(tools)
  out <- lapply(seq_along(tools), function(i) {
    t <- tools[[i]]
    if (is(t, "securer_tool_class")) return(t)
    if (is.function(t) && !is.null(names(tools)) && nzchar(names(tools)[i])) {
      return(securer_tool(names(tools)[i], "", t, as.list(setNames(rep("any", length(formals(t))), names(formals(t))))))
    }
    stop("tools must be created with securer_tool()", call. = FALSE)
  })
  nms <- vapply(out, function(t) t@name, character(1))
  if (anyDuplicated(nms)) stop(sprintf("Duplicate tool name: '%s'", nms[anyDuplicated(nms)]), call. = FALSE)
  names(out) <- nms
  out
}

tools_json <- function(tools) {
  decl <- vapply(tools, function(t) {
    args <- if (length(t@args)) json_object(lapply(t@args, json_string1)) else "{}"
    json_object(list(name = json_string1(t@name), description = json_string1(t@description), args = args))
  }, character(1))
  paste0("[", paste(decl, collapse = ","), "]")
}
