#' A pool of pre-started sandboxed sessions
#'
#' @description
#' `size` sessions started at once (one `securer serve` runs them all);
#' each `$execute()` runs on an idle one.  With `reset_between_uses` a
#' session is restarted after every use, so no state passes between callers.
#' @export
SecureSessionPool <- R6::R6Class("SecureSessionPool",
  public = list(
    #' @description Start the pool.
    #' @param size number of sessions (1 to 100).
    #' @param tools,sandbox,limits,verbose as for `SecureSession$new()`.
    #' @param reset_between_uses restart a session after each use.
    #' @param plots,workdir,max_file_size,max_result_size,network as for
    #'   `SecureSession$new()`: the sessions share the work directory, and
    #'   each reaches the hosts `network` names.
    initialize = function(size = 4L, tools = list(), sandbox = TRUE, limits = NULL, verbose = FALSE,
                          reset_between_uses = FALSE, plots = TRUE, workdir = NULL, max_file_size = 64 * 1024^2,
                          max_result_size = NULL, network = NULL) {
      network <- check_network(network, sandbox)
      size_args <- result_size_args(max_result_size)
      private$plots <- check_plots(plots)
      private$max_file_size <- check_max_file_size(max_file_size)
      if (!is.null(workdir) && isFALSE(sandbox)) {
        stop("workdir is mounted in the sandbox: sandbox = FALSE has none", call. = FALSE)
      }
      if (!is.numeric(size) || length(size) != 1L || is.na(size) || size != round(size)) {
        stop("size must be a whole number of sessions", call. = FALSE)
      }
      if (size < 1) stop("size must be at least 1", call. = FALSE)
      if (size > 100) stop("size must be at most 100", call. = FALSE)
      private$n <- as.integer(size)
      private$tool_list <- normalize_tools(tools)
      private$reset <- isTRUE(reset_between_uses)
      private$owner <- Sys.getpid()
      private$handle <- new.env(parent = emptyenv())
      private$wd <- prepare_workdir(workdir)
      private$handle$workdir <- if (isTRUE(private$wd$private)) private$wd$path
      reg.finalizer(private$handle, function(h) {
        if (!is.null(h$serve)) h$serve$close()
        if (!is.null(h$workdir)) unlink(h$workdir, recursive = TRUE)
      }, onexit = TRUE)
      private$policy <- session_policy(sandbox)
      sp <- serve_policy(private$policy, limits)
      serve <- ServeProcess$new(c(if (isTRUE(verbose)) "--verbose", sp$serve_args, size_args,
                                  if (!is.null(private$wd)) c("--allow-workdir", "--max-file-bytes",
                                                              format(private$max_file_size, scientific = FALSE)),
                                  if (!is.null(network)) "--allow-network"),
                                verbose, sp$dir)
      private$serve <- serve
      private$handle$serve <- serve
      r <- serve$request(list(op = "\"pool_open\"", size = as.character(private$n),
                              reset_between_uses = if (private$reset) "true" else "false",
                              tools = tools_json(private$tool_list), policy = sp$name,
                              sandbox = sp$sandbox, limits = sp$limits,
                              workdir = if (!is.null(private$wd)) json_string1(private$wd$path),
                              network = if (!is.null(network)) json_strings(network)))
      if (!isTRUE(r$ok)) {
        self$close()
        securer_error(paste0("The session pool could not start: ", r$error))
      }
      private$pid <- r$pool
      private$sandboxed <- !isFALSE(r$sandboxed)
      warn_degraded(r$degraded)
      invisible(self)
    },

    #' @description Run code on an idle session; returns its value, as
    #'   `SecureSession$execute()` does.
    #' @param code R code.
    #' @param timeout seconds, `NULL` for none.
    #' @param acquire_timeout seconds to wait for an idle session (`NULL`:
    #'   30; 0: fail at once).
    #' @param validate,max_tool_calls,max_code_length,max_output_lines,plots as
    #'   for `SecureSession$execute()`.
    execute = function(code, timeout = 30, acquire_timeout = NULL, validate = TRUE, max_tool_calls = NULL,
                       max_code_length = 100000L, max_output_lines = NULL, plots = FALSE) {
      result_value(self$run(code, timeout, acquire_timeout, validate, max_tool_calls, max_code_length,
                            max_output_lines, plots))
    },

    #' @description Run code on an idle session; returns a
    #'   [securer_result], as `SecureSession$run()` does.
    #' @param code,timeout,acquire_timeout,validate,max_tool_calls,max_code_length,max_output_lines
    #'   as for `$execute()`.
    #' @param plots as for `SecureSession$run()`.
    run = function(code, timeout = 30, acquire_timeout = NULL, validate = TRUE, max_tool_calls = NULL,
                   max_code_length = 100000L, max_output_lines = NULL, plots = NULL) {
      private$check()
      plots <- if (is.null(plots)) private$plots else check_plots(plots)
      if (private$busy > 0L && private$busy >= private$n) securer_error("All sessions are busy", "securer_busy")
      prep <- prepare_code(code, max_code_length, validate)
      if (!is.null(prep$refused)) return(prep$refused)
      serve <- private$serve
      id <- serve$next_request_id()
      text <- private$request(id, prep$code, timeout, acquire_timeout, max_code_length, max_tool_calls,
                              max_output_lines, plots)
      private$busy <- private$busy + 1L
      on.exit(private$busy <- private$busy - 1L, add = TRUE)
      tools <- private$tool_list
      reply <- serve$request_text(text, id, function(ev) handle_event(serve, tools, ev, NULL))
      reply_result(reply, timeout)
    },

    #' @description Run code on an idle session in the background: returns
    #'   a [securer_async] handle at once, whose `$wait()` gives the
    #'   [securer_result] `$run()` would.  Handles of one pool run at once,
    #'   as many as it has sessions; more wait in serve's queue (for at most
    #'   `acquire_timeout`).
    #' @param code,timeout,acquire_timeout,validate,max_tool_calls,max_code_length,max_output_lines,plots
    #'   as for `$run()`.
    run_async = function(code, timeout = 30, acquire_timeout = NULL, validate = TRUE, max_tool_calls = NULL,
                         max_code_length = 100000L, max_output_lines = NULL, plots = NULL) {
      private$check()
      plots <- if (is.null(plots)) private$plots else check_plots(plots)
      prep <- prepare_code(code, max_code_length, validate)
      done <- function() private$busy <- private$busy - 1L
      private$busy <- private$busy + 1L
      if (!is.null(prep$refused)) return(new_async(NULL, 0L, timeout, NULL, done, prep$refused))
      serve <- private$serve
      id <- serve$next_request_id()
      serve$send(private$request(id, prep$code, timeout, acquire_timeout, max_code_length, max_tool_calls,
                                 max_output_lines, plots))
      tools <- private$tool_list
      new_async(serve, id, timeout, function(ev) handle_event(serve, tools, ev, NULL), done)
    },

    #' @description Run each piece of code on the pool's sessions
    #'   concurrently (as many at once as there are sessions); returns a
    #'   list of [securer_result]s in the order of `codes`.  A piece that
    #'   fails is a result with its error; the others still run.
    #' @param codes a character vector or a list of code strings.
    #' @param timeout,acquire_timeout,validate,max_tool_calls,max_code_length,max_output_lines,plots
    #'   as for `$run()`, for each piece.
    map = function(codes, timeout = 30, acquire_timeout = NULL, validate = TRUE, max_tool_calls = NULL,
                   max_code_length = 100000L, max_output_lines = NULL, plots = NULL) {
      private$check()
      plots <- if (is.null(plots)) private$plots else check_plots(plots)
      codes <- as.list(codes)
      results <- vector("list", length(codes))
      prepared <- lapply(codes, prepare_code, max_code_length = max_code_length, validate = validate)
      for (i in seq_along(prepared)) if (!is.null(prepared[[i]]$refused)) results[[i]] <- prepared[[i]]$refused
      todo <- which(vapply(results, is.null, TRUE))
      serve <- private$serve
      tools <- private$tool_list
      on_event <- function(ev) handle_event(serve, tools, ev, NULL)
      slots <- max(1L, private$n - private$busy)
      ids <- integer()                      # in flight, with `at` their places
      at <- integer()
      sent <- 0L
      on.exit(private$busy <- private$busy - length(ids), add = TRUE)
      while (sent < length(todo) || length(ids)) {
        while (sent < length(todo) && length(ids) < slots) {
          sent <- sent + 1L
          i <- todo[[sent]]
          id <- serve$next_request_id()
          serve$send(private$request(id, prepared[[i]]$code, timeout, acquire_timeout, max_code_length,
                                     max_tool_calls, max_output_lines, plots))
          ids <- c(ids, id)
          at <- c(at, i)
          private$busy <- private$busy + 1L
        }
        reply <- serve$next_reply(ids, on_event)
        k <- match(as.integer(reply$id), ids)
        results[[at[[k]]]] <- reply_result(reply, timeout, raise = FALSE)
        ids <- ids[-k]
        at <- at[-k]
        private$busy <- private$busy - 1L
      }
      results
    },

    #' @description Copy a host file into the sessions' work directory, as
    #'   `SecureSession$upload()` does.
    #' @param path,to as for `SecureSession$upload()`.
    upload = function(path, to = basename(path)) {
      private$files_check()
      upload_file(private$serve, list(pool = json_string1(private$pid)), path, to, private$max_file_size)
    },

    #' @description Copy a file of the work directory to the host, as
    #'   `SecureSession$download()` does.
    #' @param from,path,overwrite as for `SecureSession$download()`.
    download = function(from, path = basename(from), overwrite = FALSE) {
      private$files_check()
      download_file(private$serve, list(pool = json_string1(private$pid)), from, path, overwrite)
    },

    #' @description The host path of the work directory (`NULL`: none).
    workdir = function() private$wd$path,

    #' @description Number of sessions.
    size = function() private$n,

    #' @description Number of idle sessions.
    available = function() {
      s <- self$status()
      as.integer(s$idle)
    },

    #' @description `list(total, busy, idle, dead)`.
    status = function() {
      if (is.null(private$pid)) return(list(total = 0L, busy = 0L, idle = 0L, dead = 0L))
      check_owner(private$owner, "SecureSessionPool")
      r <- private$serve$request(list(op = "\"pool_status\"", pool = json_string1(private$pid)))
      if (!isTRUE(r$ok)) securer_error(r$error)
      list(total = r$total, busy = r$busy, idle = r$idle, dead = r$dead)
    },

    #' @description Close every session.
    close = function() {
      # A forked child leaves the creator's serve alone (ServeProcess).
      if (!is.null(private$serve)) private$serve$close()
      private$serve <- NULL
      private$handle$serve <- NULL
      private$pid <- NULL
      if (!is.null(private$handle$workdir) && identical(private$owner, Sys.getpid())) {
        unlink(private$handle$workdir, recursive = TRUE)
        private$handle$workdir <- NULL
      }
      invisible(self)
    },

    #' @description One line describing the pool: its id, size with idle
    #'   and busy sessions, tools and sandbox.
    format = function(...) {
      if (is.null(private$pid)) return("<SecureSessionPool> closed")
      st <- if (identical(private$owner, Sys.getpid())) tryCatch(self$status(), error = function(e) NULL)
      counts <- if (is.null(st)) "" else sprintf(" (idle=%d, busy=%d%s)", st$idle, st$busy,
                                                  if (isTRUE(st$dead > 0)) sprintf(", dead=%d", st$dead) else "")
      sprintf("<SecureSessionPool> id=%s, size=%d%s, %s%s; sandbox: %s", private$pid, private$n, counts,
              tools_label(private$tool_list), if (private$reset) ", reset between uses" else "",
              sandbox_label(private$policy, private$sandboxed))
    },

    #' @description Print the pool.
    print = function(...) {
      cat(self$format(), "\n", sep = "")
      invisible(self)
    }
  ),
  private = list(serve = NULL, handle = NULL, pid = NULL, n = 0L, tool_list = list(), reset = FALSE, busy = 0L,
                 policy = "r", sandboxed = NA, owner = NA_integer_, plots = TRUE, wd = NULL, max_file_size = 0,
    files_check = function() {
      private$check()
      if (is.null(private$wd)) {
        securer_error("This pool has no work directory: create it with workdir = DIR (or TRUE for a private one)")
      }
    },
    check = function() {
      check_owner(private$owner, "SecureSessionPool")
      if (is.null(private$pid)) securer_error("Pool is closed")
    },
    request = function(id, code, timeout, acquire_timeout, max_code_length, max_tool_calls, max_output_lines,
                       plots) {
      execute_request(id, paste0("\"pool\":", json_string1(private$pid)), code, timeout, max_code_length,
                      max_tool_calls, max_output_lines,
                      extra = paste0(if (!is.null(acquire_timeout)) {
                        paste0(",\"acquire_timeout\":", format(as.numeric(acquire_timeout), scientific = FALSE))
                      }, plots_request(plots)))
    })
)
