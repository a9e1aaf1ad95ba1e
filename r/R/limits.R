#' The resource limits of a sandboxed session
#'
#' Those of the shipped `r` policy: CPU seconds, address space (bytes),
#' largest file (bytes), processes, open files.
#' @export
default_limits <- function() {
  list(cpu = 60, memory = 512 * 1024 * 1024, fsize = 50 * 1024 * 1024, nproc = 50, nofile = 256)
}

limit_keywords <- c(cpu = "cpu", memory = "as", fsize = "fsize", nproc = "nproc", nofile = "nofile",
                    stack = "stack")

# The policy text for `limits` on top of a base policy: its resolved file
# included, then the limits (a later `limit` line wins).
limits_policy <- function(base, limits) {
  limits <- as.list(limits)
  unknown <- setdiff(names(limits), names(limit_keywords))
  if (is.null(names(limits)) || length(unknown)) {
    stop(sprintf("Unknown limit '%s' (known: %s)", if (length(unknown)) unknown[[1]] else "",
                 paste(names(limit_keywords), collapse = ", ")), call. = FALSE)
  }
  lines <- vapply(names(limits), function(n) {
    v <- limits[[n]]
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0) {
      stop(sprintf("Limit '%s' must be a single non-negative number", n), call. = FALSE)
    }
    sprintf("limit %s %s%s", limit_keywords[[n]], format(ceiling(v), scientific = FALSE), if (n == "cpu") "s" else "")
  }, character(1))
  shown <- processx::run(find_binary(), c("policy", "show", base), error_on_status = FALSE)
  if (shown$status != 0) stop(sprintf("policy '%s': %s", base, trimws(shown$stderr)), call. = FALSE)
  from <- regmatches(shown$stdout, regexec("^# Resolved policy '[^\n]*' from ([^\n]+)\n", shown$stdout))[[1]]
  head <- if (length(from) == 2L) sprintf("include \"%s\"", gsub("([\"\\\\])", "\\\\\\1", from[2])) else shown$stdout
  paste(c(head, lines, ""), collapse = "\n")
}

# The policy a serve process is asked for: a shipped name as it is, or a
# file written to a private directory that serve is started with
# (--policy-dir) when limits are layered on it or a file was named.
serve_policy <- function(policy, limits) {
  is_file <- grepl("/", policy) || grepl("\\.(policy|json)$", policy)
  if (is.null(limits) && !is_file) return(list(name = policy, dir = NULL))
  dir <- tempfile("securer-policy-")
  dir.create(dir, mode = "0700")
  if (!is.null(limits)) {
    if (is_file) policy <- normalizePath(policy, mustWork = TRUE)
    writeLines(limits_policy(policy, limits), file.path(dir, "limits.policy"))
    return(list(name = "limits", dir = dir))
  }
  file.copy(policy, file.path(dir, "custom.policy"))
  list(name = "custom.policy", dir = dir)
}
