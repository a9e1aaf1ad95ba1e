# SecureSession: one sandboxed R session, run by its own `securer serve`.

timeout_message <- function(timeout) {
  sprintf("Execution timed out after %s second%s", format(timeout), if (identical(as.numeric(timeout), 1)) "" else "s")
}

# Messages often quote the sandbox (its errors, R's start-up words), so
# they are made safe for the terminal they are shown on.
securer_error <- function(msg, class = NULL) {
  stop(structure(class = c(class, "securer_error", "error", "condition"),
                 list(message = term_safe(msg), call = NULL)))
}

# A session or pool talks to its serve over pipes that its creating
# process reads: a forked child (parallel::mclapply()) reading them too
# would take replies meant for others.  Refused instead.
check_owner <- function(owner, what) {
  pid <- Sys.getpid()
  if (!identical(owner, pid)) {
    securer_error(sprintf(paste("This %s was created by process %d and cannot be used from process %d",
                                "(a forked child, as parallel::mclapply() makes): its replies would reach",
                                "the wrong process. Use SecureSessionPool$map() to run code concurrently,",
                                "or create the session in the child."), what, owner, pid), "securer_forked")
  }
}

tools_label <- function(tools) {
  if (!length(tools)) return("tools=0")
  sprintf("tools=%d (%s)", length(tools), paste(names(tools), collapse = ", "))
}

#' A persistent sandboxed R session with tools
#'
#' @description
#' Runs R code in a sandboxed R process (a `securer serve` session: its
#' own namespaces, Landlock, seccomp and resource limits).  State persists
#' between `$execute()` calls.  Tools are host R functions the sandboxed
#' code calls like ordinary functions.
#' @export
SecureSession <- R6::R6Class("SecureSession",
  public = list(
    #' @description Start a session.
    #' @param tools a list of [securer_tool()]s.
    #' @param sandbox `TRUE` (the shipped `r` policy), or the name of a
    #'   shipped policy or the path of a policy file.  `FALSE` runs R
    #'   WITHOUT the OS sandbox: a separate process under the resource
    #'   limits, with no namespaces, Landlock or seccomp (it sees the host's
    #'   files, processes and network; a root host runs it under a uid of its
    #'   own); for trusted code only.  `print()` says which.
    #' @param limits named resource limits, see [default_limits()].
    #' @param verbose report the sandbox set-up on stderr.
    #' @param sandbox_strict accepted for compatibility: a session always
    #'   refuses to start when the sandbox cannot be had.
    #' @param audit_log path of a JSONL audit log.
    #' @param max_executions cap on `$execute()` calls.
    #' @param pre_execute_hook function(code) returning FALSE to block.
    #' @param sanitize_errors strip paths, pids and host names from errors.
    #' @param plots how the pages the code draws come back in `$run()`'s
    #'   result: `TRUE` (PNG, 480 x 480), [plot_options()], or `FALSE`.
    #' @param workdir a host directory mounted read-write at `/work` in the
    #'   sandbox, R's working directory there; `TRUE` for a private one,
    #'   removed when the session closes; `NULL` for none.  `$upload()` and
    #'   `$download()` move files in and out of it.
    #' @param max_file_size the largest file `$upload()` and `$download()`
    #'   move, in bytes.
    #' @param max_result_size the largest message either way, in bytes: a
    #'   value the code returns (or passes to a tool) and a tool's answer
    #'   (`NULL`: serve's 1 MiB).
    #' @param network hosts the code may reach, as in the policy line
    #'   `network allow`: `"cran.r-project.org"` (ports 80 and 443),
    #'   `"api.example.org:8443"`, `"*.githubusercontent.com"`, addresses
    #'   and blocks (`"10.1.0.0/16:5432"`).  `download.file()`, `url()` and
    #'   curl reach them through a filtering proxy outside the sandbox, and
    #'   nothing else; a refused destination is named in the error and in
    #'   `$run()`'s `network_denied`.  `NULL` (default): the policy's network.
    initialize = function(tools = list(), sandbox = TRUE, limits = NULL, verbose = FALSE,
                          sandbox_strict = FALSE, audit_log = NULL, max_executions = NULL,
                          pre_execute_hook = NULL, sanitize_errors = FALSE, plots = TRUE, workdir = NULL,
                          max_file_size = 64 * 1024^2, max_result_size = NULL, network = NULL, .shared = FALSE) {
      private$network <- check_network(network, sandbox)
      private$size_args <- result_size_args(max_result_size)
      private$tool_list <- normalize_tools(tools)
      private$plots <- check_plots(plots)
      private$max_file_size <- check_max_file_size(max_file_size)
      if (!is.null(workdir) && isFALSE(sandbox)) {
        stop("workdir is mounted in the sandbox: sandbox = FALSE has none", call. = FALSE)
      }
      private$wd <- prepare_workdir(workdir)
      if (!is.null(pre_execute_hook) && !is.function(pre_execute_hook)) {
        stop("pre_execute_hook must be a function", call. = FALSE)
      }
      private$hook <- pre_execute_hook
      private$policy <- session_policy(sandbox)
      private$limits <- limits
      private$verbose <- verbose
      private$audit <- check_audit_log(audit_log)
      private$max_executions <- max_executions
      private$sanitize <- isTRUE(sanitize_errors)
      # In the package's shared serve process (execute_r()) when nothing
      # about this session needs a serve of its own.
      private$shared <- isTRUE(.shared) && !isFALSE(sandbox) && is.null(audit_log) && !isTRUE(verbose) &&
        is.null(serve_policy(private$policy, NULL)$dir) && is.null(private$wd) && !length(private$size_args) &&
        is.null(private$network)
      private$owner <- Sys.getpid()
      private$handle <- new.env(parent = emptyenv())
      # A forgotten session's serve process is closed at gc or exit.
      private$handle$workdir <- if (isTRUE(private$wd$private)) private$wd$path
      reg.finalizer(private$handle, function(h) {
        if (!is.null(h$serve)) h$serve$close()
        if (!is.null(h$workdir)) unlink(h$workdir, recursive = TRUE)
      }, onexit = TRUE)
      private$start()
      invisible(self)
    },

    #' @description Copy a host file into the work directory (see
    #'   `workdir`), replacing what is there; a name the sandbox left there
    #'   (a symbolic link too) is replaced, never followed.
    #' @param path the host file.
    #' @param to its name in the work directory, relative (`"data.csv"`,
    #'   `"in/data.csv"` when `in` exists); no `..`, no symbolic link on the
    #'   way.
    #' @return `to`, invisibly.
    upload = function(path, to = basename(path)) {
      private$files_check()
      upload_file(private$serve, list(session = json_string1(private$sid)), path, to, private$max_file_size)
    },

    #' @description Copy a file of the work directory to the host.
    #' @param from its name in the work directory (as for `to` of
    #'   `$upload()`); a symbolic link, a directory or a FIFO is refused.
    #' @param path the host file to write.
    #' @param overwrite replace `path` when it exists.
    #' @return `path`, invisibly.
    download = function(from, path = basename(from), overwrite = FALSE) {
      private$files_check()
      download_file(private$serve, list(session = json_string1(private$sid)), from, path, overwrite)
    },

    #' @description The host path of the work directory (`NULL`: none).
    workdir = function() private$wd$path,

    #' @description Run code; returns its value, as R would (invisibly
    #'   when R would not print it).  An error in the code is raised as an
    #'   R error whose condition also carries `output`, `stdout`, `stderr`,
    #'   `warnings` and the whole `result` (see `$run()`); the lines the
    #'   code printed are the value's attribute `"output"`.
    #' @param code R code (a character vector, its elements lines).
    #' @param timeout seconds, `NULL` for none.
    #' @param validate check the syntax on the host before sending.
    #' @param output_handler function(line) called for each output line.
    #' @param max_tool_calls cap on tool calls in this execution.
    #' @param max_code_length longest code accepted, in characters.
    #' @param max_output_lines cap on the output lines kept.
    #' @param plots `FALSE`: `$execute()` returns the value alone, so no
    #'   page is rendered.  For `$run()`, `NULL` (the session's), `TRUE`,
    #'   `FALSE` or [plot_options()]: how the pages drawn come back in its
    #'   result.
    execute = function(code, timeout = 30, validate = TRUE, output_handler = NULL,
                       max_tool_calls = NULL, max_code_length = 100000L, max_output_lines = NULL, plots = FALSE) {
      result_value(self$run(code, timeout, validate, output_handler, max_tool_calls, max_code_length,
                            max_output_lines, plots))
    },

    #' @description Run code; returns a [securer_result]: the value, the
    #'   output by stream, warnings, the error (the code's errors, timeouts
    #'   and refusals are results, not R errors), elapsed time and status.
    #'   Arguments as for `$execute()`.
    #' @param code,timeout,validate,output_handler,max_tool_calls,max_code_length,max_output_lines,plots
    #'   as for `$execute()`.
    run = function(code, timeout = 30, validate = TRUE, output_handler = NULL,
                   max_tool_calls = NULL, max_code_length = 100000L, max_output_lines = NULL, plots = NULL) {
      plots <- if (is.null(plots)) private$plots else check_plots(plots)
      check_owner(private$owner, "SecureSession")
      # Cheap checks only: a serve process that died is found out by the
      # request itself.
      if (is.null(private$serve) || is.null(private$sid)) securer_error("Session is not running.")
      if (private$busy) {
        securer_error("SecureSession does not support concurrent executions: wait for the running one to finish",
                      "securer_busy")
      }
      prep <- prepare_code(code, max_code_length, validate, private$hook)
      if (!is.null(prep$refused)) return(prep$refused)
      serve <- private$serve
      id <- serve$next_request_id()
      text <- execute_request(id, private$sid_json, prep$code, timeout, max_code_length, max_tool_calls,
                              max_output_lines, stream = !is.null(output_handler), extra = plots_request(plots))
      private$busy <- TRUE
      on.exit(private$busy <- FALSE, add = TRUE)
      tools <- private$tool_list
      interrupted <- FALSE
      reply <- tryCatch(serve$request_text(text, id, function(ev) handle_event(serve, tools, ev, output_handler)),
                        interrupt = function(e) { interrupted <<- TRUE; NULL },
                        error = function(e) {
                          if (serve$is_alive()) stop(e)
                          securer_error(paste0("Session is not running. (", conditionMessage(e), ")"))
                        })
      if (interrupted) {
        # Nothing can stop one execution of a serve session: the session
        # starts afresh.
        private$busy <- FALSE
        private$restart_process()
        securer_error("Execution interrupted: the session was restarted (its state is lost)", "securer_interrupted")
      }
      private$executions <- private$executions + 1L
      reply_result(reply, timeout)
    },

    #' @description Run code in the background: returns a
    #'   [securer_async] handle at once, whose `$wait()` gives the
    #'   [securer_result] `$run()` would.  The session is busy until then.
    #' @param code,timeout,validate,max_tool_calls,max_code_length,max_output_lines,plots
    #'   as for `$run()`.
    run_async = function(code, timeout = 30, validate = TRUE, max_tool_calls = NULL, max_code_length = 100000L,
                         max_output_lines = NULL, plots = NULL) {
      check_owner(private$owner, "SecureSession")
      if (is.null(private$serve) || is.null(private$sid)) securer_error("Session is not running.")
      if (private$busy) {
        securer_error("SecureSession does not support concurrent executions: wait for the running one to finish",
                      "securer_busy")
      }
      plots <- if (is.null(plots)) private$plots else check_plots(plots)
      prep <- prepare_code(code, max_code_length, validate, private$hook)
      done <- function() private$busy <- FALSE
      if (!is.null(prep$refused)) return(new_async(NULL, 0L, timeout, NULL, done, prep$refused))
      serve <- private$serve
      id <- serve$next_request_id()
      serve$send(execute_request(id, private$sid_json, prep$code, timeout, max_code_length, max_tool_calls,
                                 max_output_lines, extra = plots_request(plots)))
      private$busy <- TRUE
      private$executions <- private$executions + 1L
      tools <- private$tool_list
      new_async(serve, id, timeout, function(ev) handle_event(serve, tools, ev, NULL), done)
    },

    #' @description Close the session (its serve process ends, unless it is
    #'   the package's shared one, which only closes this session).
    close = function() {
      # A forked child leaves the creator's serve alone.
      if (!is.null(private$serve) && identical(private$owner, Sys.getpid())) {
        if (private$shared) {
          if (private$serve$is_alive() && !is.null(private$sid)) {
            try(private$serve$request(list(op = "\"close\"", session = json_string1(private$sid))), silent = TRUE)
          }
        } else {
          private$serve$close()
        }
      }
      private$serve <- NULL
      private$handle$serve <- NULL
      private$sid <- NULL
      if (!is.null(private$handle$workdir) && identical(private$owner, Sys.getpid()) && !isTRUE(private$restarting)) {
        unlink(private$handle$workdir, recursive = TRUE)
        private$handle$workdir <- NULL
      }
      invisible(self)
    },

    #' @description Is the session running?
    is_alive = function() !is.null(private$serve) && private$serve$is_alive() && !is.null(private$sid),

    #' @description Start a fresh R in the session (state is gone).
    restart = function() {
      check_owner(private$owner, "SecureSession")
      if (private$busy) securer_error("Cannot restart while an execution is in progress")
      if (!self$is_alive()) {
        private$start()
        return(invisible(self))
      }
      r <- private$serve$request(list(op = "\"restart\"", session = json_string1(private$sid)))
      if (!isTRUE(r$ok)) securer_error(r$error)
      invisible(self)
    },

    #' @description The tools: a named list of `list(name, args)`
    #'   (`list()` when there are none).
    tools = function() {
      if (!length(private$tool_list)) return(list())
      lapply(private$tool_list, function(t) list(name = t@name, args = t@args))
    },

    #' @description One line describing the session: its id, state
    #'   (`idle`, `busy`, `closed`), tools, executions and sandbox.
    format = function(...) {
      alive <- self$is_alive()
      state <- if (!alive) "closed" else if (private$busy) "busy" else "idle"
      sprintf("<SecureSession> id=%s, state=%s, %s, executions=%d; sandbox: %s%s%s",
              if (is.null(private$sid)) "none" else private$sid, state, tools_label(private$tool_list),
              private$executions, sandbox_label(private$policy, private$sandboxed),
              if (is.null(private$limits)) "" else " with limits",
              if (alive) sprintf(" (securer serve pid %d)", private$serve$pid()) else "")
    },

    #' @description Print the session.
    print = function(...) {
      cat(self$format(), "\n", sep = "")
      invisible(self)
    }
  ),
  private = list(
    serve = NULL, sid = NULL, sid_json = NULL, handle = NULL, tool_list = list(), hook = NULL, policy = "r",
    sandboxed = NA, limits = NULL, verbose = FALSE, audit = NULL, max_executions = NULL,
    sanitize = FALSE, busy = FALSE, executions = 0L, shared = FALSE, owner = NA_integer_, plots = TRUE,
    network = NULL,
    wd = NULL, max_file_size = 0, restarting = FALSE, size_args = character(),

    files_check = function() {
      check_owner(private$owner, "SecureSession")
      if (is.null(private$serve) || is.null(private$sid)) securer_error("Session is not running.")
      if (is.null(private$wd)) {
        securer_error("This session has no work directory: create it with workdir = DIR (or TRUE for a private one)")
      }
    },

    start = function() {
      args <- character()
      sp <- serve_policy(private$policy, private$limits)
      # The session's own serve, so its one audit file is the server's.
      if (!is.null(private$audit)) args <- c(args, "--audit-log", private$audit)
      if (isTRUE(private$verbose)) args <- c(args, "--verbose")
      args <- c(args, private$size_args)
      if (private$shared) {
        # Shared by execute_r()'s one-shot sessions: from the second on,
        # each is a fork of the policy's template (the server's default).
        serve <- shared_serve()
      } else {
        # This server runs one session: a template of its policy would not
        # outlive it, so R starts cold unless SECURER_SESSION_TEMPLATE says
        # otherwise (docs/sessions.md, "How a session starts").
        if (!nzchar(Sys.getenv("SECURER_SESSION_TEMPLATE"))) args <- c(args, "--cold")
        if (!is.null(private$wd)) {
          args <- c(args, "--allow-workdir", "--max-file-bytes", format(private$max_file_size, scientific = FALSE))
        }
        # The session's own server: its one client may name hosts.
        if (!is.null(private$network)) args <- c(args, "--allow-network")
        serve <- ServeProcess$new(c(args, sp$serve_args), private$verbose, sp$dir)
        private$handle$serve <- serve
      }
      private$serve <- serve
      fields <- list(op = "\"open\"", tools = tools_json(private$tool_list), policy = sp$name,
                     sandbox = sp$sandbox, limits = sp$limits,
                     workdir = if (!is.null(private$wd)) json_string1(private$wd$path),
                     network = if (!is.null(private$network)) json_strings(private$network),
                     max_executions = if (!is.null(private$max_executions)) as.character(as.integer(private$max_executions)),
                     sanitize_errors = if (private$sanitize) "true")
      r <- tryCatch(serve$request(fields), error = function(e) list(ok = FALSE, error = conditionMessage(e)))
      if (!isTRUE(r$ok)) {
        self$close()
        securer_error(paste0("The sandboxed session could not start: ", r$error))
      }
      private$sid <- r$session
      private$sid_json <- paste0("\"session\":", json_string1(r$session))
      private$sandboxed <- !isFALSE(r$sandboxed)
      warn_degraded(r$degraded)
      if (!private$sandboxed && isTRUE(private$verbose)) message(self$format())
    },

    restart_process = function() {
      # The work directory outlives the serve process.
      private$restarting <- TRUE
      on.exit(private$restarting <- FALSE)
      self$close()
      private$start()
    }
  )
)

# The text of an execute request; `target` is the JSON member naming the
# session or pool (`"session":"sess_…"`), `extra` more members (",…").
execute_request <- function(id, target, code, timeout, max_code_length = 100000L, max_tool_calls = NULL,
                            max_output_lines = NULL, stream = FALSE, extra = "") {
  if (!is.null(timeout) && !(is.numeric(timeout) && length(timeout) == 1L && !is.na(timeout) && timeout > 0)) {
    stop("timeout must be a positive number of seconds or NULL", call. = FALSE)
  }
  opt <- function(key, x) if (is.null(x)) "" else paste0(",\"", key, "\":", as.integer(x))
  paste0("{\"op\":\"execute\",\"id\":", id, ",", target, ",\"code\":", json_string1(code),
         ",\"timeout\":", if (is.null(timeout) || is.infinite(timeout)) "null" else sprintf("%.17g", timeout),
         opt("max_code_length", max_code_length), opt("max_tool_calls", max_tool_calls),
         opt("max_output_lines", max_output_lines), if (stream) ",\"stream\":true", extra, "}")
}

# An event from serve during an execution: an output line for the
# handler, or a tool call, answered by running the host function.
handle_event <- function(serve, tool_list, ev, output_handler) {
  if (identical(ev$event, "output")) {
    if (!is.null(output_handler)) output_handler(ev$line)
    return(invisible())
  }
  if (!identical(ev$event, "tool_call")) return(invisible())
  answer <- run_tool(tool_list, ev$tool, ev$args)
  serve$send(paste0("{\"op\":\"tool_result\",\"session\":", json_string1(ev$session),
                    ",\"call_id\":", format(ev$call_id, scientific = FALSE),
                    if (is.null(answer$error)) paste0(",\"value\":", answer$value)
                    else paste0(",\"error\":", json_string1(answer$error)), "}"))
}

# Runs a tool on the host; any failure is an error for the sandboxed code.
run_tool <- function(tool_list, name, args) {
  tool <- if (is_string(name)) tool_list[[name]] else NULL
  if (is.null(tool)) return(list(error = sprintf("Unknown tool: %s", format(name))))
  tryCatch({
    if (!is.list(args)) stop("malformed arguments")
    decoded <- lapply(args, decode_value, classes = isTRUE(tool@classes))
    value <- do.call(tool@fn, decoded)
    list(value = encode_value(value))
  }, error = function(e) list(error = conditionMessage(e)))
}

check_audit_log <- function(path) {
  if (is.null(path)) return(NULL)
  if (!is_string(path)) stop("audit_log must be a path", call. = FALSE)
  path <- path.expand(path)
  link <- Sys.readlink(path)
  if (!is.na(link) && nzchar(link)) stop(sprintf("audit_log '%s' is a symlink: refused", path), call. = FALSE)
  if (file.exists(path)) {
    if (dir.exists(path)) stop(sprintf("audit_log '%s' is a directory", path), call. = FALSE)
    real <- normalizePath(path)
    if (startsWith(real, "/dev/") || startsWith(real, "/proc/") || startsWith(real, "/sys/")) {
      stop(sprintf("audit_log '%s' is a device file: refused", path), call. = FALSE)
    }
  }
  dir <- normalizePath(dirname(path), mustWork = TRUE)
  file.path(dir, basename(path))
}

# `network =` of a session: a character vector of `network allow` words,
# checked here for shape only (serve names a malformed entry precisely).
check_network <- function(network, sandbox) {
  if (is.null(network)) return(NULL)
  if (!is.character(network) || !length(network) || anyNA(network) || any(!nzchar(network)) ||
      length(network) > 256L) {
    stop("network must be a character vector of 1 to 256 host names (\"HOST\", \"HOST:PORT\", \"*.DOMAIN\" or an address)",
         call. = FALSE)
  }
  if (isFALSE(sandbox)) {
    stop("network is enforced by the sandbox: sandbox = FALSE has the host's network", call. = FALSE)
  }
  unname(network)
}
