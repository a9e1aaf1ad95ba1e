# Executions that run while the caller does something else: $run_async()
# sends the execute request and returns at once; the handle reads serve's
# replies when asked (answering tool calls on the way, in this process),
# so nothing runs behind the caller's back and no thread is needed.

new_async <- function(serve, id, timeout, on_event, on_done, result = NULL) {
  h <- new.env(parent = emptyenv())
  h$.result <- result
  finish <- function(reply) {
    h$.result <- reply_result(reply, timeout, raise = FALSE)
    on_done()
  }
  # One poll: TRUE once the result is there.
  step <- function(ms) {
    if (!is.null(h$.result)) return(TRUE)
    reply <- tryCatch(serve$poll_reply(id, on_event, ms), error = function(e) {
      list(ok = FALSE, error = paste0("Session is not running. (", conditionMessage(e), ")"))
    })
    if (!is.null(reply)) finish(reply)
    !is.null(h$.result)
  }
  h$done <- function() step(0L)
  h$wait <- function(timeout = NULL) {
    if (!is.null(timeout) && !(is.numeric(timeout) && length(timeout) == 1L && !is.na(timeout) && timeout >= 0)) {
      stop("timeout must be a number of seconds or NULL", call. = FALSE)
    }
    deadline <- if (is.null(timeout)) Inf else as.numeric(Sys.time()) + timeout
    repeat {
      left <- deadline - as.numeric(Sys.time())
      if (step(as.integer(max(0, min(200, left * 1000))))) return(h$.result)
      if (left <= 0) return(invisible(NULL))
    }
  }
  h$result <- function() {
    if (!h$done()) securer_error("The execution is still running: wait() for it", "securer_busy")
    h$.result
  }
  if (!is.null(result)) on_done()
  lockEnvironment(h)
  class(h) <- "securer_async"
  h
}

#' Executions running in the background
#'
#' `SecureSession$run_async()` and `SecureSessionPool$run_async()` send
#' the code and return at once with a `securer_async` handle:
#' \describe{
#'   \item{`$done()`}{`TRUE` once the result is there (never blocks);}
#'   \item{`$wait(timeout = NULL)`}{waits (at most `timeout` seconds) and
#'     returns the [securer_result], or `NULL` when it is still running;}
#'   \item{`$result()`}{the result, an error while it runs.}
#' }
#' Tool calls are answered while the handle is polled or waited on, and
#' while the session or pool waits for something else.  A session runs one
#' execution at a time; a pool as many as it has sessions (more wait in
#' serve's queue).
#' @param x a `securer_async`.
#' @param ... ignored.
#' @name securer_async
#' @export
print.securer_async <- function(x, ...) {
  cat(if (is.null(x$.result)) "<securer_async: running>\n" else
        sprintf("<securer_async: done, status %s>\n", x$.result$status))
  invisible(x)
}
