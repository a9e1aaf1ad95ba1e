# What an execution gave: a `securer_result`, built from serve's execute
# reply (docs/protocol.md) or, for code refused on the host, from the
# reason.  `$run()` returns it; `$execute()` turns it into a value or an
# error (result_value()).

# The condition class of each status that is not "ok".
status_class <- c(timeout = "securer_timeout", tool_limit = "securer_tool_limit",
                  rejected = "securer_rejected", syntax = "securer_syntax")

new_result <- function(status, value = NULL, visible = FALSE, output = character(), streams = character(),
                       truncated = c(lines = 0, bytes = 0), warnings = character(), error = NULL,
                       call = NULL, elapsed = 0, tool_calls = 0L, plots = list(), plots_dropped = 0,
                       network_denied = NULL) {
  if (!is.null(error)) {
    error <- list(message = error, call = call,
                  class = c(unname(status_class[status][!is.na(status_class[status])]), "securer_error", "error",
                            "condition"))
  }
  structure(list(value = value, visible = visible, output = output,
                 stdout = output[streams == "stdout"], stderr = output[streams == "stderr"],
                 truncated = truncated, warnings = warnings, error = error, status = status,
                 elapsed = elapsed, tool_calls = tool_calls, plots = plots, plots_dropped = plots_dropped,
                 network_denied = network_denied),
            class = "securer_result")
}

# The result of an execute reply.  A request serve refused (not a result)
# is an error, unless `raise` is FALSE: then a result of status "error".
reply_result <- function(reply, timeout, raise = TRUE) {
  if (!isTRUE(reply$ok)) {
    msg <- if (is.null(reply$error)) "the request failed" else reply$error
    if (grepl("became free within", msg, fixed = TRUE)) {
      msg <- paste0("All sessions are busy: ", msg)
      if (raise) securer_error(msg, "securer_busy")
    }
    if (raise) securer_error(msg)
    return(new_result("error", error = msg))
  }
  res <- reply$result
  out <- res$output
  strings <- function(x) vapply(x, function(s) if (is.character(s) && length(s) == 1L) s else "", "")
  status <- if (is_string(res$status)) res$status else "error"
  num <- function(x) if (is.numeric(x) && length(x) == 1L) as.numeric(x) else 0
  error <- NULL
  if (!identical(status, "ok")) {
    error <- if (is_string(res$error)) res$error else status
    if (identical(status, "timeout") && !is.null(timeout)) error <- timeout_message(timeout)
    if (identical(status, "syntax")) error <- paste0("Code has a syntax error: ", error)
  }
  dropped <- c(lines = num(res$output_dropped_lines), bytes = num(res$output_dropped_bytes))
  # Lines left out to fit the reply are not counted by serve: one at least.
  if (isTRUE(res$output_truncated) && dropped[["lines"]] == 0) dropped[["lines"]] <- 1
  new_result(status,
             value = if (is.null(error)) decode_value(res$value),
             visible = is.null(error) && isTRUE(res$visible),
             output = strings(lapply(out, `[[`, "line")),
             streams = strings(lapply(out, function(o) if (is.null(o$stream)) "stdout" else o$stream)),
             truncated = dropped, warnings = strings(res$warnings), error = error,
             call = if (!is.null(error) && is_string(res$error_call)) res$error_call,
             elapsed = num(res$elapsed), tool_calls = as.integer(num(res$tool_calls)),
             plots = decode_plots(res$plots), plots_dropped = num(res$plots_dropped) + sum(!plots_ok(res$plots)),
             network_denied = denied_frame(res$network_denied))
}

# The destinations the network allow proxy refused, as a data frame
# (host, port, reason, count), or NULL when none was.
denied_frame <- function(d) {
  if (!is.list(d) || !length(d)) return(NULL)
  field <- function(k, f) vapply(d, function(e) { v <- e[[k]]; if (length(v) == 1L) f(v) else f(NA) }, f(NA))
  data.frame(host = field("host", as.character), port = field("port", as.integer),
             reason = field("reason", as.character), count = field("count", as.integer),
             stringsAsFactors = FALSE)
}

# The pages of a reply as securer_plot objects: serve checked each, and
# one that does not have the expected shape anyway is counted as dropped
# (plots_ok()), never half-decoded.
plot_ok <- function(p) {
  is.list(p) && is_string(p$format) && p$format %in% c("png", "svg") && is.numeric(p$width) &&
    length(p$width) == 1L && is.numeric(p$height) && length(p$height) == 1L && is_string(p$data)
}
plots_ok <- function(plots) if (is.list(plots)) vapply(plots, plot_ok, NA) else logical()

decode_plots <- function(plots) {
  ok <- plots_ok(plots)
  lapply(plots[ok], function(p) {
    structure(list(format = p$format, width = as.integer(p$width), height = as.integer(p$height),
                   data = base64_decode(p$data)), class = "securer_plot")
  })
}

#' Plots from the sandbox
#'
#' Every page drawn on the sandboxed R's default graphics device during an
#' execution comes back in the result's `plots` (see [securer_result]), in
#' drawing order: base graphics, grid and what builds on them.
#' `plot_options()` chooses how they are rendered; `$run(plots =)` and
#' `SecureSession$new(plots =)` take it (or `TRUE`, the defaults, or
#' `FALSE`, none).
#'
#' A plot is a `securer_plot`: `list(format, width, height, data)`, `data`
#' the image's bytes (a raw vector).  `save_plot()` writes them to a file.
#' An SVG is text the sandboxed code had drawn: show it as an image (an
#' `<img>` element), never insert it into a page as markup.
#' @param format `"png"` or `"svg"`.
#' @param width,height size in pixels (1 to 10000).
#' @param res pixels per inch (1 to 10000): the scale of text and lines.
#' @param max_plots,max_plot_bytes the most pages, and image bytes in all,
#'   kept per execution (`NULL`: serve's, 50 pages and 8 MiB); pages past
#'   them are counted in the result's `plots_dropped`.
#' @return `plot_options()`: options for `plots =`.
#' @export
plot_options <- function(format = "png", width = 480L, height = 480L, res = 72L, max_plots = NULL,
                         max_plot_bytes = NULL) {
  if (!is_string(format) || !format %in% c("png", "svg")) stop("plot format must be \"png\" or \"svg\"", call. = FALSE)
  whole <- function(x, what, hi) {
    if (!is.numeric(x) || length(x) != 1L || is.na(x) || x != round(x) || x < 1 || x > hi) {
      stop(sprintf("plot %s must be a whole number from 1 to %s", what, format(hi, big.mark = ",")), call. = FALSE)
    }
    as.integer(x)
  }
  structure(list(format = format, width = whole(width, "width", 10000), height = whole(height, "height", 10000),
                 res = whole(res, "res", 10000),
                 max_plots = if (!is.null(max_plots)) whole(max_plots, "max_plots", .Machine$integer.max),
                 max_plot_bytes = if (!is.null(max_plot_bytes)) whole(max_plot_bytes, "max_plot_bytes", 2^40)),
            class = "securer_plot_options")
}

# `plots` as given to $run() or $new(): TRUE, FALSE or plot_options().
check_plots <- function(plots) {
  if (isTRUE(plots)) return(plot_options())
  if (isFALSE(plots) || inherits(plots, "securer_plot_options")) return(plots)
  stop("plots must be TRUE, FALSE or plot_options(...)", call. = FALSE)
}

# The execute request's members for the plots (",…").
plots_request <- function(plots) {
  if (isFALSE(plots)) return(",\"plots\":false")
  paste0(",\"plots\":{\"format\":\"", plots$format, "\",\"width\":", plots$width, ",\"height\":", plots$height,
         ",\"res\":", plots$res, "}",
         if (!is.null(plots$max_plots)) paste0(",\"max_plots\":", plots$max_plots),
         if (!is.null(plots$max_plot_bytes)) paste0(",\"max_plot_bytes\":", format(plots$max_plot_bytes, scientific = FALSE)))
}

#' @rdname plot_options
#' @param plot a `securer_plot`.
#' @param path the file to write.
#' @return `save_plot()`: `path`, invisibly.
#' @export
save_plot <- function(plot, path) {
  if (!inherits(plot, "securer_plot")) stop("plot must be a securer_plot (an element of a result's plots)", call. = FALSE)
  if (!is_string(path)) stop("path must be a file name", call. = FALSE)
  writeBin(plot$data, path)
  invisible(path)
}

#' @export
format.securer_plot <- function(x, ...) {
  sprintf("<securer_plot: %s %dx%d, %s bytes>", x$format, x$width, x$height, format(length(x$data)))
}

#' @export
print.securer_plot <- function(x, ...) {
  cat(format(x), "\n", sep = "")
  invisible(x)
}

# Code as one string, or the result that refuses it before anything is
# sent: too long, blocked by the hook, a syntax error.
prepare_code <- function(code, max_code_length, validate, hook = NULL) {
  if (!is.character(code) || !length(code)) {
    stop("code must be a character string", call. = FALSE)
  }
  code <- paste(code, collapse = "\n")
  refuse <- function(status, msg) list(code = code, refused = new_result(status, error = msg))
  if (!is.null(max_code_length) && nchar(code) > max_code_length) {
    return(refuse("rejected", sprintf("Code too long: exceeds maximum length (%d > %d characters)",
                                      nchar(code), as.integer(max_code_length))))
  }
  if (!is.null(hook) && !isTRUE(hook(code))) return(refuse("rejected", "Execution blocked by pre_execute_hook"))
  if (isTRUE(validate)) {
    parsed <- tryCatch({ parse(text = code, keep.source = FALSE); NULL }, error = function(e) conditionMessage(e))
    if (!is.null(parsed)) return(refuse("syntax", paste0("Code has a syntax error: ", parsed)))
  }
  list(code = code, refused = NULL)
}

# What `$execute()` returns for a result: its value (with the output lines
# in attr(, "output"), its warnings raised), or its error raised, the
# condition carrying the output, the warnings, the call the sandbox's error
# named (text: it is not a call of the host's) and the whole result.
result_value <- function(res) {
  e <- res$error
  if (!is.null(e)) {
    stop(structure(class = e$class,
                   list(message = term_safe(e$message), call = NULL, sandbox_call = e$call, output = res$output,
                        stdout = res$stdout, stderr = res$stderr, warnings = res$warnings, result = res)))
  }
  for (w in res$warnings) warning(term_safe(w), call. = FALSE)
  value <- res$value
  if (!is.null(value) && length(res$output) > 0L) attr(value, "output") <- res$output
  if (isTRUE(res$visible)) value else invisible(value)
}

#' Results of `$run()`
#'
#' `SecureSession$run()`, `SecureSessionPool$run()` and
#' `SecureSessionPool$map()` return a `securer_result`: a list with
#' \describe{
#'   \item{value, visible}{the value of the last expression and whether R
#'     would print it (`NULL` and `FALSE` after an error);}
#'   \item{output}{every line the code printed, stdout and stderr, in order;}
#'   \item{stdout, stderr}{the same lines by stream (`message()` writes to
#'     stderr);}
#'   \item{truncated}{`c(lines = , bytes = )` of output not kept (over
#'     `max_output_lines` or serve's bounds), zeros when none;}
#'   \item{warnings}{the warnings raised, before an error too;}
#'   \item{error}{`NULL`, or `list(message, call, class)`: `call` is the
#'     text of the call R's error named (`"f(1)"`; `NULL` at the top level
#'     of the code, and for timeouts and refusals), `class` the class of the
#'     condition `$execute()` raises (`securer_timeout`, `securer_syntax`,
#'     ... before `securer_error`);}
#'   \item{status}{`"ok"`, `"error"`, `"timeout"`, `"syntax"`,
#'     `"tool_limit"`, `"rejected"`, `"crashed"`, `"too_large"`;}
#'   \item{elapsed, tool_calls}{seconds in serve, tool calls made;}
#'   \item{plots}{the pages drawn, in order: a list of `securer_plot`s
#'     (see [plot_options()]);}
#'   \item{plots_dropped}{pages not kept: over the limits on their number
#'     or bytes, or larger than one message of serve's;}
#'   \item{network_denied}{with `network =`, the destinations refused during
#'     the execution: a data frame of `host`, `port`, `reason` (`"no-rule"`,
#'     `"deny-rule"`, `"private-address"`) and `count`; `NULL` when none was.}
#' }
#' `format()` gives the lines the R console would show (output, the value
#' if visible, then the error and warnings, and a line saying how much
#' output was not kept), all sandbox text made safe for a terminal;
#' `print()` writes them.
#' @param x a `securer_result`.
#' @param ... ignored.
#' @name securer_result
#' @export
format.securer_result <- function(x, ...) {
  lines <- x$output
  n <- x$truncated[["lines"]]
  if (n > 0) lines <- c(lines, sprintf("[output truncated: %s more line%s not kept]", format(n), if (n == 1) "" else "s"))
  if (is.null(x$error) && isTRUE(x$visible)) lines <- c(lines, utils::capture.output(print(x$value)))
  for (k in seq_along(x$plots)) lines <- c(lines, sprintf("[plot %d: %s]", k, format(x$plots[[k]])))
  d <- x$plots_dropped
  if (isTRUE(d > 0)) {
    lines <- c(lines, sprintf("[%s plot%s not kept: over the execution's limits on plots]", format(d),
                              if (d == 1) "" else "s"))
  }
  nd <- x$network_denied
  if (is.data.frame(nd) && nrow(nd)) {
    lines <- c(lines, sprintf("[network policy refused: %s]",
                              paste0(nd$host, ":", nd$port, " (", nd$reason, ")", collapse = ", ")))
  }
  w <- x$warnings
  warn <- if (length(w) == 1L) c("Warning message:", w)
          else if (length(w)) c("Warning messages:", paste0(seq_along(w), ": ", w))
  if (!is.null(x$error)) {
    call <- x$error$call
    lines <- c(lines, if (is.null(call)) paste0("Error: ", x$error$message)
                      else paste0("Error in ", call, " : ", x$error$message))
    if (length(warn)) warn <- c(paste("In addition:", warn[[1L]]), warn[-1L])
  }
  term_safe(c(lines, warn))
}

#' @rdname securer_result
#' @export
print.securer_result <- function(x, ...) {
  lines <- format(x)
  if (length(lines)) cat(lines, sep = "\n")
  invisible(x)
}
