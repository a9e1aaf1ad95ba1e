#' The resource limits of a sandboxed session
#'
#' Those of the shipped `r` policy: CPU seconds, address space (bytes),
#' largest file (bytes), processes, open files: rlimits, per process.  A
#' session's `limits` may also name the sandbox's cgroup limits, for all
#' its processes together: `cgroup_memory` (bytes), `cgroup_pids`,
#' `cgroup_cpu` (CPUs).
#' @export
default_limits <- function() {
  list(cpu = 60, memory = 512 * 1024 * 1024, fsize = 50 * 1024 * 1024, nproc = 50, nofile = 256)
}

rlimit_names <- c("cpu", "memory", "fsize", "nproc", "nofile", "stack")
# Limits of the sandbox's cgroup (all its processes together), and the
# policy's word for each: `memory` above is RLIMIT_AS, per process.
cgroup_limit_names <- c(cgroup_memory = "memory", cgroup_pids = "pids", cgroup_cpu = "cpu")
limit_names <- c(rlimit_names, names(cgroup_limit_names))

check_limits <- function(limits) {
  if (is.null(limits)) return(list())
  limits <- as.list(limits)
  unknown <- setdiff(names(limits), limit_names)
  if (length(limits) && (is.null(names(limits)) || length(unknown))) {
    stop(sprintf("Unknown limit '%s' (known: %s)", if (length(unknown)) unknown[[1]] else "",
                 paste(limit_names, collapse = ", ")), call. = FALSE)
  }
  for (n in names(limits)) {
    v <- limits[[n]]
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 0 || is.infinite(v)) {
      stop(sprintf("Limit '%s' must be a single non-negative number", n), call. = FALSE)
    }
  }
  limits
}

# The policy lines of the cgroup limits (none: character()).
cgroup_lines <- function(limits) {
  cg <- limits[intersect(names(limits), names(cgroup_limit_names))]
  vapply(names(cg), function(n) {
    v <- cg[[n]]
    if (v <= 0) stop(sprintf("Limit '%s' must be positive", n), call. = FALSE)
    paste("cgroup", cgroup_limit_names[[n]],
          if (n == "cgroup_cpu") sprintf("%.3f", max(v, 0.001)) else format(ceiling(v), scientific = FALSE))
  }, character(1), USE.NAMES = FALSE)
}

# The "limits" object of serve's open request: serve sets them on the
# session's policy.
limits_json <- function(limits) {
  limits <- check_limits(limits)
  limits <- limits[intersect(names(limits), rlimit_names)]
  if (!length(limits)) return(NULL)
  values <- vapply(names(limits), function(n) {
    v <- limits[[n]]
    format(ceiling(v), scientific = FALSE)
  }, character(1))
  json_object(as.list(values))
}

# The policy of `sandbox`: TRUE is the shipped r, FALSE none at all (serve's
# unsandboxed mode), anything else a shipped name or a policy file.
session_policy <- function(sandbox) {
  if (isTRUE(sandbox)) return("r")
  if (isFALSE(sandbox)) return(NULL)
  if (!is_string(sandbox)) stop("sandbox must be TRUE, FALSE, a policy name or a policy file", call. = FALSE)
  sandbox
}

sandbox_label <- function(policy, sandboxed) {
  if (is.null(policy) || isFALSE(sandboxed)) {
    return("NONE (sandbox = FALSE: a separate process under resource limits, no OS sandbox)")
  }
  sprintf("policy '%s'", policy)
}

# The open request's policy fields (JSON texts): a shipped name as it is,
# or a file copied to a private directory that serve is started with
# (--policy-dir); NULL policy is "sandbox": false, which this session's own
# serve is told to accept (--allow-unsandboxed).  Limits go inline, and may
# only lower the policy's.
serve_policy <- function(policy, limits) {
  cgroup <- cgroup_lines(check_limits(limits))
  limits <- limits_json(limits)
  if (length(cgroup)) {
    # Not inline in the open request: a policy of the session's own that
    # builds on the shipped one, in a private directory (--policy-dir).
    if (is.null(policy)) stop("cgroup limits need the sandbox: sandbox = FALSE has no cgroup", call. = FALSE)
    if (grepl("/", policy) || grepl("\\.(policy|json)$", policy)) {
      stop("cgroup limits and a policy file: write them in the file (cgroup memory 256M, ...)", call. = FALSE)
    }
    if (!grepl("^[A-Za-z0-9_-]+$", policy)) stop(sprintf("Unknown policy '%s'", policy), call. = FALSE)
    dir <- tempfile("securer-policy-")
    dir.create(dir, mode = "0700")
    writeLines(c(sprintf("include \"%s\"", policy), cgroup), file.path(dir, "custom.policy"))
    return(list(name = json_string1("custom.policy"), dir = dir, limits = limits))
  }
  if (is.null(policy)) {
    return(list(name = NULL, sandbox = "false", dir = NULL, limits = limits, serve_args = "--allow-unsandboxed"))
  }
  is_file <- grepl("/", policy) || grepl("\\.(policy|json)$", policy)
  if (!is_file) {
    # This session's own serve: a shipped policy other than its default
    # must be allowed by name.
    return(list(name = json_string1(policy), dir = NULL, limits = limits,
                serve_args = c("--allow-policy", policy)))
  }
  dir <- tempfile("securer-policy-")
  dir.create(dir, mode = "0700")
  file.copy(policy, file.path(dir, "custom.policy"))
  list(name = json_string1("custom.policy"), dir = dir, limits = limits)
}

# What serve says a session's sandbox lacks of its policy's best-effort
# protections (the open reply's "degraded": a host that gives no cgroup,
# say): a warning of class securer_degraded, once per R process for each
# text, so that a session held to less than its policy describes never
# looks like one that is not, and a loop of sessions does not repeat it.
warn_degraded <- function(text) {
  if (is.null(text) || !nzchar(text)) return(invisible(FALSE))
  seen <- shared_env$degraded_seen
  if (text %in% seen) return(invisible(TRUE))
  shared_env$degraded_seen <- c(seen, text)
  cond <- structure(class = c("securer_degraded", "warning", "condition"),
                    list(message = paste0("The sandbox runs without part of its policy: ", term_safe(text)),
                         call = NULL))
  warning(cond)
  invisible(TRUE)
}

# serve's options for `max_result_size` (bytes of one message either way,
# values and tool arguments included; NULL: serve's 1 MiB): the message
# cap, and a reply cap that holds such a value beside the output.
result_size_args <- function(x) {
  if (is.null(x)) return(character())
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x != round(x) || x < 1024 || x > 2^30) {
    stop("max_result_size must be a whole number of bytes from 1024 to 1073741824", call. = FALSE)
  }
  reply <- max(16 * 1024^2, 2 * x + 1024^2)
  c("--max-message", format(x, scientific = FALSE), "--max-reply", format(reply, scientific = FALSE))
}
