# One `securer serve` process, driven over its stdin/stdout pipes: requests
# out, replies and events in (JSON lines, docs/protocol.md).

ServeProcess <- R6::R6Class("securer_serve",
  public = list(
    proc = NULL,
    policy_dir = NULL,
    initialize = function(args = character(), verbose = FALSE, policy_dir = NULL) {
      self$policy_dir <- policy_dir
      if (!is.null(policy_dir)) args <- c(args, "--policy-dir", policy_dir)
      self$proc <- processx::process$new(
        find_binary(), c("serve", args),
        stdin = "|", stdout = "|", stderr = if (isTRUE(verbose)) "" else NULL,
        encoding = "UTF-8", cleanup = TRUE, cleanup_tree = TRUE)
    },
    is_alive = function() !is.null(self$proc) && self$proc$is_alive(),
    pid = function() if (is.null(self$proc)) NA_integer_ else self$proc$get_pid(),

    # Sends the request (a named list of JSON texts) and waits for its
    # reply, handing events to on_event on the way.  Returns the parsed
    # reply.
    request = function(fields, on_event = NULL) {
      private$next_id <- private$next_id + 1L
      id <- private$next_id
      fields$id <- as.character(id)
      self$send(json_object(fields))
      repeat {
        msg <- self$read_message()
        if (!is.null(msg$event)) {
          if (!is.null(on_event)) on_event(msg)
          next
        }
        if (identical(msg$id, id)) return(msg)
        # A reply to a request given up on (interrupted): dropped.
      }
    },

    send = function(text) {
      if (!self$is_alive()) stop("Session is not running.", call. = FALSE)
      left <- self$proc$write_input(paste0(text, "\n"))
      while (length(left) > 0L) {
        # serve writes replies on a blocking pipe: keep reading them, or
        # both sides could wait on each other.
        private$fill(10L)
        left <- self$proc$write_input(left)
      }
    },

    read_message = function() {
      while (length(private$lines) == 0L) {
        if (!private$fill(200L) && !self$proc$is_alive() && length(private$lines) == 0L) {
          private$fill(0L)
          if (length(private$lines) == 0L) stop("securer serve exited unexpectedly", call. = FALSE)
        }
      }
      line <- private$lines[[1]]
      private$lines <- private$lines[-1]
      jsonlite::parse_json(line, simplifyVector = FALSE)
    },

    close = function() {
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
    # Reads what serve wrote within ms; TRUE when something came.
    fill = function(ms) {
      p <- self$proc$poll_io(ms)
      if (p[["output"]] %in% c("ready", "eof")) {
        new <- self$proc$read_output_lines()
        new <- new[nzchar(new)]
        private$lines <- c(private$lines, new)
        return(length(new) > 0L)
      }
      FALSE
    }
  )
)
