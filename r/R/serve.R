# One `securer serve` process, driven over its stdin/stdout pipes: requests
# out, replies and events in (JSON lines, docs/protocol.md).
#
# The round trip of a warm execution is well under a millisecond in serve
# and the sandboxed R, so the R side is kept lean: the pipes' processx
# connections are taken once, a reply is awaited by one blocking poll on
# stdout (no sleeping, no busy loop; the wait is cut into 200 ms slices only
# so that an interrupt is seen), and the lines that came are read in one go.

# The four pipe operations a request needs.  processx's exported functions
# check their arguments with assert_that on every call, which costs
# ~100 us each on a slow machine, several times per round trip; its native
# routines do the same work in microseconds.  They are looked up by name
# once and tried on a live connection at the first start (pipe_ops_for());
# if anything about them differs from what is expected, the exported
# functions are used instead.
pipe_ops_public <- list(
  poll = function(pollables, ms) match(processx::poll(pollables, ms)[[1L]], processx_poll_codes),
  read_lines = function(con) processx::conn_read_lines(con),
  write = function(con, bytes) processx::conn_write(con, bytes),
  at_eof = function(con) !processx::conn_is_incomplete(con))

processx_poll_codes <- c("nopipe", "ready", "timeout", "closed", "silent", "event", "connect")

pipe_ops_native <- function() {
  routines <- getDLLRegisteredRoutines("processx")$.Call
  sym <- function(name) {
    r <- routines[[name]]
    if (!inherits(r, "NativeSymbolInfo")) stop("no routine ", name)
    r
  }
  poll <- sym("processx_poll")
  read_lines <- sym("processx_connection_read_lines")
  write <- sym("processx_connection_write_bytes")
  is_eof <- sym("processx_connection_is_eof")
  list(
    poll = function(pollables, ms) .Call(poll, pollables, rep(2L, length(pollables)), as.integer(ms))[[1L]],
    read_lines = function(con) .Call(read_lines, con, -1L),
    write = function(con, bytes) .Call(write, con, bytes),
    at_eof = function(con) .Call(is_eof, con))
}

pipe_ops_cache <- new.env(parent = emptyenv())

# The operations for serve's pipes: the native ones when they behave as the
# exported ones on this live output connection (nothing to read yet), else
# the exported ones.
pipe_ops_for <- function(oc) {
  if (!is.null(pipe_ops_cache$ops)) return(pipe_ops_cache$ops)
  fast <- tryCatch(pipe_ops_native(), error = function(e) NULL)
  if (is.null(fast)) {
    pipe_ops_cache$ops <- pipe_ops_public
    return(pipe_ops_public)
  }
  # Only an agreement is remembered: a serve that has already written or
  # exited says nothing about the routines, and the next start tries again.
  ok <- tryCatch(identical(fast$poll(list(oc), 0L), 3L) && identical(fast$read_lines(oc), character()) &&
                   identical(fast$at_eof(oc), FALSE), error = function(e) FALSE)
  if (!ok) return(pipe_ops_public)
  pipe_ops_cache$ops <- fast
  fast
}

ServeProcess <- R6::R6Class("securer_serve",
  public = list(
    proc = NULL,
    policy_dir = NULL,
    owner = NA_integer_,
    initialize = function(args = character(), verbose = FALSE, policy_dir = NULL) {
      self$policy_dir <- policy_dir
      self$owner <- Sys.getpid()
      private$kept <- new.env(parent = emptyenv())
      if (!is.null(policy_dir)) args <- c(args, "--policy-dir", policy_dir)
      self$proc <- processx::process$new(
        find_binary(), c("serve", args),
        stdin = "|", stdout = "|", stderr = if (isTRUE(verbose)) "" else NULL,
        encoding = "UTF-8", cleanup = TRUE, cleanup_tree = TRUE)
      private$ic <- self$proc$get_input_connection()
      private$oc <- self$proc$get_output_connection()
      private$pollables <- list(private$oc)
      private$ops <- pipe_ops_for(private$oc)
    },
    is_alive = function() !is.null(self$proc) && !private$eof && self$proc$is_alive(),
    pid = function() if (is.null(self$proc)) NA_integer_ else self$proc$get_pid(),

    # Sends the request (a named list of JSON texts) and waits for its
    # reply, handing events to on_event on the way.  Returns the parsed
    # reply.
    request = function(fields, on_event = NULL) {
      id <- private$next_id + 1L
      private$next_id <- id
      fields$id <- as.character(id)
      self$request_text(json_object(fields), id, on_event)
    },

    # The same for a request already written as JSON text, whose "id" is
    # `id` (from next_request_id()).
    request_text = function(text, id, on_event = NULL) {
      self$send(text)
      self$next_reply(id, on_event)
    },

    # Waits for the reply to one of the requests `ids`, handing events to
    # on_event on the way.  A reply to another request (one in flight
    # further out, as in SecureSessionPool$map() when a tool makes a
    # request of its own) is kept for whoever waits for it; one given up on
    # (interrupted) stays there.
    next_reply = function(ids, on_event = NULL) {
      keys <- as.character(ids)
      for (k in keys) {
        msg <- private$kept[[k]]
        if (!is.null(msg)) {
          rm(list = k, envir = private$kept)
          return(msg)
        }
      }
      repeat {
        msg <- self$read_message()
        if (!is.null(msg$event)) {
          if (!is.null(on_event)) on_event(msg)
          next
        }
        if (length(msg$id) == 1L && as.character(msg$id) %in% keys) return(msg)
        if (length(msg$id) == 1L && length(private$kept) < 1000L) assign(as.character(msg$id), msg, envir = private$kept)
      }
    },

    # The reply to request `id` if it has come, else NULL: reads what
    # serve has written within `ms` milliseconds (0: only what is there),
    # handing events to on_event and keeping replies to other requests.
    poll_reply = function(id, on_event = NULL, ms = 0L) {
      key <- as.character(id)
      msg <- private$kept[[key]]
      if (!is.null(msg)) {
        rm(list = key, envir = private$kept)
        return(msg)
      }
      check_owner(self$owner, "SecureSession")
      if (!length(private$lines)) private$fill(ms)
      while (length(private$lines)) {
        msg <- self$read_message()
        if (!is.null(msg$event)) {
          if (!is.null(on_event)) on_event(msg)
          next
        }
        if (length(msg$id) == 1L && identical(as.character(msg$id), key)) return(msg)
        if (length(msg$id) == 1L && length(private$kept) < 1000L) assign(as.character(msg$id), msg, envir = private$kept)
      }
      if (private$eof) stop("securer serve exited unexpectedly", call. = FALSE)
      NULL
    },

    next_request_id = function() {
      private$next_id <- private$next_id + 1L
      private$next_id
    },

    send = function(text) {
      check_owner(self$owner, "SecureSession")
      if (is.null(self$proc) || private$eof) stop("Session is not running.", call. = FALSE)
      write <- private$ops$write
      left <- write(private$ic, charToRaw(enc2utf8(paste0(text, "\n"))))
      while (length(left) > 0L) {
        # serve writes replies on a blocking pipe: keep reading them, or
        # both sides could wait on each other.
        private$fill(10L)
        left <- write(private$ic, left)
      }
    },

    read_message = function() {
      check_owner(self$owner, "SecureSession")
      while (length(private$lines) == 0L) {
        private$fill(200L)
        if (private$eof && length(private$lines) == 0L) stop("securer serve exited unexpectedly", call. = FALSE)
      }
      line <- private$lines[[1L]]
      private$lines <- private$lines[-1L]
      jsonlite::parse_json(line, simplifyVector = FALSE)
    },

    close = function() {
      # The creator's serve is not a forked child's to end.
      if (!identical(self$owner, Sys.getpid())) {
        self$proc <- NULL
        return(invisible(NULL))
      }
      if (!is.null(self$proc)) {
        if (self$proc$is_alive()) {
          # serve closes every session (the audit log says so), then exits.
          try(self$proc$write_input("{\"op\":\"shutdown\"}\n"), silent = TRUE)
          self$proc$wait(5000)
          if (self$proc$is_alive()) self$proc$kill_tree()
        }
        self$proc <- NULL
      }
      if (!is.null(self$policy_dir)) unlink(self$policy_dir, recursive = TRUE)
      self$policy_dir <- NULL
      invisible(NULL)
    }
  ),
  private = list(
    next_id = 0L,
    lines = character(),
    ic = NULL,
    oc = NULL,
    pollables = NULL,
    eof = FALSE,
    ops = NULL,
    kept = NULL,
    # Waits up to ms for serve's output and reads the complete lines that
    # came; at the end of the pipe (serve gone) sets eof.
    fill = function(ms) {
      ops <- private$ops
      if (ops$poll(private$pollables, ms) == 3L) return(invisible())  # timeout
      new <- ops$read_lines(private$oc)
      if (length(new)) {
        private$lines <- c(private$lines, new[nzchar(new)])
      } else if (ops$at_eof(private$oc)) {
        private$eof <- TRUE
      }
      invisible()
    }
  )
)

# The serve process execute_r() opens its one-shot sessions in: started at
# its first use and kept for the life of this R process, so that each
# one-shot run pays for one session (from the template serve keeps for the
# policy, where the host can give one: docs/sessions.md), not for a serve
# process and a cold R.  Replaced when it has died.
shared_env <- new.env(parent = emptyenv())

shared_serve <- function() {
  s <- shared_env$serve
  # A forked child starts a serve of its own (and leaves its creator's).
  forked <- !is.null(s) && !identical(s$owner, Sys.getpid())
  if (!is.null(s) && !forked && s$is_alive()) return(s)
  if (!is.null(s) && !forked) try(s$close(), silent = TRUE)
  # The package's own server: its operator is this R user, who may name
  # any shipped policy (an unsandboxed one still needs a serve of its own).
  s <- ServeProcess$new(c("--allow-policy", "any"))
  shared_env$serve <- s
  if (is.null(shared_env$finalizer)) {
    shared_env$finalizer <- TRUE
    reg.finalizer(shared_env, function(e) if (!is.null(e$serve)) e$serve$close(), onexit = TRUE)
  }
  s
}

#' Stop the serve process kept by execute_r()
#'
#' `execute_r()` runs its sessions in one `securer serve` process kept for
#' the life of the R process (started at its first call, replaced if it
#' dies); this stops it now.  It is stopped at exit anyway.
#' @return `NULL`, invisibly.
#' @export
stop_shared_server <- function() {
  if (!is.null(shared_env$serve)) shared_env$serve$close()
  shared_env$serve <- NULL
  invisible(NULL)
}
