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
    initialize = function(size = 4L, tools = list(), sandbox = TRUE, limits = NULL, verbose = FALSE,
                          reset_between_uses = FALSE) {
      if (!is.numeric(size) || length(size) != 1L || size < 1 || size > 100) {
        stop("size must be a number of sessions from 1 to 100", call. = FALSE)
      }
      private$n <- as.integer(size)
      private$tool_list <- normalize_tools(tools)
      private$reset <- isTRUE(reset_between_uses)
      private$handle <- new.env(parent = emptyenv())
      reg.finalizer(private$handle, function(h) if (!is.null(h$serve)) h$serve$close(), onexit = TRUE)
      private$policy <- session_policy(sandbox)
      sp <- serve_policy(private$policy, limits)
      serve <- ServeProcess$new(c(if (isTRUE(verbose)) "--verbose", sp$serve_args), verbose, sp$dir)
      private$serve <- serve
      private$handle$serve <- serve
      r <- serve$request(list(op = "\"pool_open\"", size = as.character(private$n),
                              reset_between_uses = if (private$reset) "true" else "false",
                              tools = tools_json(private$tool_list), policy = sp$name,
                              sandbox = sp$sandbox, limits = sp$limits))
      if (!isTRUE(r$ok)) {
        self$close()
        securer_error(paste0("The session pool could not start: ", r$error))
      }
      private$pid <- r$pool
      private$sandboxed <- !isFALSE(r$sandboxed)
      warn_degraded(r$degraded)
      invisible(self)
    },

    #' @description Run code on an idle session; returns its value.
    #' @param code R code.
    #' @param timeout seconds, `NULL` for none.
    #' @param acquire_timeout seconds to wait for an idle session (`NULL`:
    #'   30; 0: fail at once).
    execute = function(code, timeout = NULL, acquire_timeout = NULL) {
      if (is.null(private$pid)) securer_error("Pool is closed")
      if (private$busy > 0L && private$busy >= private$n) securer_error("All sessions are busy", "securer_busy")
      code <- paste(as.character(code), collapse = "\n")
      serve <- private$serve
      id <- serve$next_request_id()
      text <- execute_request(id, paste0("\"pool\":", json_string1(private$pid)), code, timeout,
                              extra = if (!is.null(acquire_timeout)) {
                                paste0(",\"acquire_timeout\":", format(as.numeric(acquire_timeout), scientific = FALSE))
                              } else "")
      private$busy <- private$busy + 1L
      on.exit(private$busy <- private$busy - 1L, add = TRUE)
      tools <- private$tool_list
      reply <- serve$request_text(text, id, function(ev) handle_event(serve, tools, ev, NULL))
      if (!isTRUE(reply$ok) && grepl("became free within", reply$error, fixed = TRUE)) {
        securer_error(paste0("All sessions are busy: ", reply$error), "securer_busy")
      }
      reply_value(reply, timeout)
    },

    #' @description Number of sessions.
    size = function() private$n,

    #' @description Number of idle sessions.
    available = function() {
      s <- self$status()
      as.integer(s$idle)
    },

    #' @description `list(total, busy, idle, dead)`.
    status = function() {
      if (is.null(private$pid)) securer_error("Pool is closed")
      r <- private$serve$request(list(op = "\"pool_status\"", pool = json_string1(private$pid)))
      if (!isTRUE(r$ok)) securer_error(r$error)
      list(total = r$total, busy = r$busy, idle = r$idle, dead = r$dead)
    },

    #' @description Close every session.
    close = function() {
      if (!is.null(private$serve)) private$serve$close()
      private$serve <- NULL
      private$handle$serve <- NULL
      private$pid <- NULL
      invisible(self)
    },

    #' @description One line describing the pool.
    format = function(...) {
      if (is.null(private$pid)) return("<SecureSessionPool> closed")
      sprintf("<SecureSessionPool> %d sessions%s; sandbox: %s; tools: %s", private$n,
              if (private$reset) ", reset between uses" else "", sandbox_label(private$policy, private$sandboxed),
              if (length(private$tool_list)) paste(names(private$tool_list), collapse = ", ") else "none")
    },

    #' @description Print the pool.
    print = function(...) {
      cat(self$format(), "\n", sep = "")
      invisible(self)
    }
  ),
  private = list(serve = NULL, handle = NULL, pid = NULL, n = 0L, tool_list = list(), reset = FALSE, busy = 0L,
                 policy = "r", sandboxed = NA)
)
