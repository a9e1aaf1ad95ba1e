# securer R runtime: runs inside the sandbox, driven by the host over a
# private socket that is R's fd 0 (a socketpair made by the host).
#
# The host starts R with a tiny bootstrap (-e) that reads this file's text
# from that socket, evaluates it to a function and calls the function with
# the connection.  Sending the runtime over the channel means it never has
# to be visible inside the sandbox's filesystem.  file("stdin") is the one
# way R reaches an inherited descriptor without open() (it dup()s fd 0);
# reopening /proc/self/fd/N is refused inside the sandbox.
#
# Wire format: one JSON object per line, values in the tagged encoding of
# docs/protocol.md ("Values").  Everything the host receives is validated
# again on the host side; nothing here is a security boundary against the
# code being evaluated (it runs in this same process), the runtime only
# keeps its own bindings out of reach of ordinary assignment.
function(inc) {
  # PCRE2's JIT needs writable+executable memory, which the shipped R
  # policy refuses (base/seccomp-wx.policy): without this every
  # perl = TRUE expression would warn "PCRE JIT compilation error".
  options(PCRE_use_JIT = FALSE)
  # The write side of the same socket (stdio: a long line is written whole).
  out <- file("stdin", "w")
  jsonlite_ns <- asNamespace("jsonlite")
  parse_json <- get("parse_json", jsonlite_ns)
  # jsonlite's string escaper (C); toJSON() would cost ~100 us per call.
  escape_chars <- if (exists("deparse_vector", jsonlite_ns)) get("deparse_vector", jsonlite_ns) else
    function(x) vapply(x, function(s) as.character(jsonlite::toJSON(s, auto_unbox = TRUE)), "")

  # Mutable state lives in its own environment; the function environment
  # itself is locked once set up.
  st <- new.env(parent = emptyenv())
  st$id <- 0
  st$max_message <- 1048576
  st$risky <- character()

  send <- function(txt) {
    writeLines(txt, out, useBytes = TRUE)
    flush(out)
  }

  # ---- encoding R -> JSON -------------------------------------------------
  jstr <- function(x) {
    x <- enc2utf8(as.character(x))
    s <- escape_chars(x)
    s[is.na(x)] <- "null"
    s
  }
  # Base64 in the one spelling the host accepts: no line breaks.
  b64 <- function(bytes) if (length(bytes)) gsub("\n", "", jsonlite::base64_enc(bytes), fixed = TRUE) else ""
  jarr <- function(parts) paste0("[", paste(parts, collapse = ","), "]")
  jchr <- function(x) jarr(jstr(x))
  jdbl <- function(x) {
    x <- as.double(x)
    if (!length(x)) return("[]")
    s <- sprintf("%.15g", x)
    fin <- is.finite(x)
    bad <- which(fin)[as.double(s[fin]) != x[fin]]
    if (length(bad)) s[bad] <- sprintf("%.17g", x[bad])
    if (any(!fin)) {
      s[is.na(x)] <- "null"
      s[is.nan(x)] <- "\"NaN\""
      s[!is.na(x) & x == Inf] <- "\"Inf\""
      s[!is.na(x) & x == -Inf] <- "\"-Inf\""
    }
    # Without a '.' the host's parser would read "-0" as the integer 0.
    negzero <- fin & x == 0 & 1 / x < 0
    if (any(negzero)) s[negzero] <- "-0.0"
    jarr(s)
  }
  jint <- function(x) {
    s <- as.character(as.integer(x))
    s[is.na(x)] <- "null"
    jarr(s)
  }
  jlgl <- function(x) {
    s <- ifelse(x, "true", "false")
    s[is.na(x)] <- "null"
    jarr(s)
  }
  # Attributes with a key of their own, by tag; every other attribute
  # travels in "attr" (docs/protocol.md, "Values").
  own_attrs <- list(fct = c("names", "dim", "class", "levels"),
                    time = c("names", "dim", "class", "tzone"),
                    df = c("names", "class", "row.names"))
  plain_own <- c("names", "dim", "class")
  # Attributes that are references, not data (a srcref's srcfile, a
  # connection's conn_id, data.table's .internal.selfref): base R follows
  # them on the host, which refuses them (docs/protocol.md, "Values").
  ref_attrs <- c("srcfile", "srcref", "wholeSrcref", "conn_id")
  default_class <- list(fct = "factor", date = "Date", time = c("POSIXct", "POSIXt"),
                        df = "data.frame")
  extras <- function(x, tag, depth) {
    a <- attributes(x)
    if (is.null(a)) return("")
    e <- ""
    # [[ ]], not $: `a$dim` would partially match "dimnames".
    nm <- a[["names"]]
    if (!is.null(nm) && tag != "df") e <- paste0(e, ",\"n\":", jchr(nm))
    d <- a[["dim"]]
    if (!is.null(d) && tag != "df") e <- paste0(e, ",\"dim\":", jint(d))
    cls <- a[["class"]]
    if (!is.null(cls) && !identical(cls, default_class[[tag]]))
      e <- paste0(e, ",\"class\":", jchr(cls))
    own <- own_attrs[[tag]]
    if (is.null(own)) own <- plain_own
    if (tag == "time" && length(a[["tzone"]]) != 1L) own <- plain_own
    rest <- a[!(names(a) %in% own | names(a) %in% ref_attrs | startsWith(names(a), "."))]
    if (length(rest)) {
      if (length(rest) > 64L)
        stop(sprintf("a value with %d attributes cannot be transferred (at most 64)", length(rest)),
             call. = FALSE)
      parts <- vapply(rest, enc, "", depth + 1L, USE.NAMES = FALSE)
      e <- paste0(e, ",\"attr\":{", paste0(jstr(names(rest)), ":", parts, collapse = ","), "}")
    }
    e
  }
  other <- function(x) {
    txt <- tryCatch(paste(utils::capture.output(print(x)), collapse = "\n"),
                    error = function(e) "")
    if (nchar(txt, "bytes") > 4096) txt <- paste0(substr(txt, 1, 4000), "\n...")
    paste0("{\"t\":\"other\",\"class\":", jchr(class(x)), ",\"text\":", jstr(txt), "}")
  }
  enc <- function(x, depth = 0L) {
    if (depth > 64L) stop("value nested too deeply to transfer (over 64 levels)", call. = FALSE)
    if (is.null(x)) return("null")
    if (isS4(x)) return(other(x))
    ty <- typeof(x)
    obj <- is.object(x)
    tag <- switch(ty,
      logical = "lgl",
      integer = if (obj && inherits(x, "factor")) "fct" else "int",
      double = if (!obj) "dbl" else if (inherits(x, "Date")) "date" else
        if (inherits(x, "POSIXct")) "time" else "dbl",
      character = "chr",
      list = if (obj && inherits(x, "data.frame")) "df" else "list",
      raw = "raw",
      NULL)
    # The host refuses a factor or data frame class on another layout.
    if (is.null(tag) || obj && (tag != "fct" && inherits(x, "factor") ||
                                tag != "df" && inherits(x, "data.frame")))
      return(other(x))
    body <- switch(tag,
      lgl = jlgl(unclass(x)),
      int = jint(unclass(x)),
      dbl = jdbl(unclass(x)),
      chr = jchr(unclass(x)),
      raw = jstr(b64(unclass(x))),
      fct = paste0(jint(unclass(x)), ",\"levels\":", jchr(attr(x, "levels"))),
      date = jdbl(unclass(x)),
      time = {
        tz <- attr(x, "tzone")
        if (length(tz) == 1L) paste0(jdbl(unclass(x)), ",\"tz\":", jstr(tz)) else jdbl(unclass(x))
      },
      list = jarr(vapply(unclass(x), enc, "", depth + 1L, USE.NAMES = FALSE)),
      df = {
        # Row names other than the automatic 1..n: strings, or integers
        # (what subsetting rows leaves).
        r <- attr(x, "row.names")
        rn <- if (.row_names_info(x, 1L) < 0L || !length(r) && !is.character(r)) "" else
          paste0(",\"rownames\":", if (is.character(r)) jchr(r) else jint(r))
        return(paste0("{\"t\":\"df\",\"n\":", jchr(names(x)), ",\"nrow\":", .row_names_info(x, 2L), rn,
                      ",\"v\":", jarr(vapply(unclass(x), enc, "", depth + 1L, USE.NAMES = FALSE)),
                      extras(x, tag, depth), "}"))
      })
    paste0("{\"t\":\"", tag, "\",\"v\":", body, extras(x, tag, depth), "}")
  }

  # ---- decoding JSON -> R ---------------------------------------------------
  nulls <- function(v) vapply(v, is.null, NA)
  vec <- function(v, na, conv) {
    if (!length(v)) return(conv(logical()))
    isn <- nulls(v)
    v[isn] <- list(na)
    conv(unlist(v, use.names = FALSE))
  }
  dbl_vec <- function(v) {
    if (!length(v)) return(double())
    r <- rep(NA_real_, length(v))
    isnum <- vapply(v, is.numeric, NA)
    r[isnum] <- as.double(unlist(v[isnum], use.names = FALSE))
    ischr <- vapply(v, is.character, NA)
    if (any(ischr)) {
      s <- unlist(v[ischr], use.names = FALSE)
      r[ischr] <- c("NaN" = NaN, "Inf" = Inf, "-Inf" = -Inf)[s]
    }
    r
  }
  chr_vec <- function(v) vec(v, NA_character_, as.character)
  # Names, dim, "attr" (dim before dimnames), then the class; a value
  # from the host needs no checks beyond R's own.
  attrs <- function(x, j) {
    if (!is.null(j[["n"]])) names(x) <- chr_vec(j[["n"]])
    if (!is.null(j[["dim"]])) dim(x) <- vec(j[["dim"]], NA_integer_, as.integer)
    a <- j[["attr"]]
    for (k in names(a)) attr(x, k) <- dec(a[[k]])
    if (!is.null(j[["class"]])) class(x) <- chr_vec(j[["class"]])
    x
  }
  dec <- function(j) {
    if (is.null(j)) return(NULL)
    t <- j[["t"]]
    if (!is.list(j) || !is.character(t)) stop("malformed value from host", call. = FALSE)
    v <- j[["v"]]
    switch(t,
      lgl = attrs(vec(v, NA, as.logical), j),
      int = attrs(vec(v, NA_integer_, as.integer), j),
      dbl = attrs(dbl_vec(v), j),
      chr = attrs(chr_vec(v), j),
      raw = attrs(if (nzchar(v)) jsonlite::base64_dec(v) else raw(), j),
      fct = attrs(structure(vec(v, NA_integer_, as.integer), levels = chr_vec(j[["levels"]]),
                            class = "factor"), j),
      date = attrs(structure(dbl_vec(v), class = "Date"), j),
      time = {
        x <- structure(dbl_vec(v), class = c("POSIXct", "POSIXt"))
        if (!is.null(j[["tz"]])) attr(x, "tzone") <- j[["tz"]]
        attrs(x, j)
      },
      list = attrs(lapply(v, dec), j),
      df = {
        rn <- j[["rownames"]]
        rn <- if (is.null(rn)) .set_row_names(as.integer(j[["nrow"]])) else
          if (length(rn) && is.numeric(rn[[1L]])) vec(rn, NA_integer_, as.integer) else chr_vec(rn)
        x <- structure(lapply(v, dec), names = chr_vec(j[["n"]]), row.names = rn, class = "data.frame")
        attrs(x, j[setdiff(names(j), "n")])
      },
      other = structure(list(), class = "securer_unsupported", text = j[["text"]]),
      stop("unknown value type '", t, "' from host", call. = FALSE))
  }

  # ---- tools ----------------------------------------------------------------
  call_tool <- function(name, args) {
    if (!is.character(name) || length(name) != 1L || is.na(name))
      stop("tool name must be a single string", call. = FALSE)
    parts <- vapply(args, enc, "", USE.NAMES = FALSE)
    argobj <- if (length(args))
      paste0("{", paste0(jstr(names(args)), ":", parts, collapse = ","), "}") else "{}"
    msg <- paste0("{\"type\":\"tool_call\",\"id\":", st$id, ",\"tool\":", jstr(name),
                  ",\"args\":", argobj, "}")
    if (nchar(msg, "bytes") > st$max_message)
      stop(sprintf("Tool '%s': arguments too large to send (%d bytes, limit %d)",
                   name, nchar(msg, "bytes"), st$max_message), call. = FALSE)
    send(msg)
    line <- readLines(inc, 1L, encoding = "UTF-8")
    if (!length(line)) quit(save = "no", status = 1L, runLast = FALSE)
    m <- parse_json(line)
    if (!identical(m$type, "tool_result")) stop("protocol error: expected a tool result", call. = FALSE)
    if (!is.null(m$error)) stop(m$error, call. = FALSE)
    dec(m$value)
  }
  generic_call <- function(tool, ...) {
    args <- list(...)
    if (length(args) && (is.null(names(args)) || any(!nzchar(names(args)))))
      stop("arguments to .securer_call_tool() must be named", call. = FALSE)
    call_tool(tool, args)
  }
  checks <- list(
    numeric = function(v) is.numeric(v),
    integer = function(v) is.integer(v) ||
      (is.double(v) && !is.object(v) && all(is.na(v) | (is.finite(v) & v == trunc(v) &
                                                           abs(v) <= .Machine$integer.max))),
    character = function(v) is.character(v),
    logical = function(v) is.logical(v),
    list = function(v) is.list(v),
    data.frame = function(v) is.data.frame(v),
    any = function(v) TRUE)
  make_wrapper <- function(tool, argnames, argtypes) {
    # Force now: the caller's loop variables change before the first call.
    force(tool)
    force(argnames)
    force(argtypes)
    invoke <- function(frame) {
      args <- list()
      for (k in seq_along(argnames)) {
        a <- argnames[[k]]
        if (eval(call("missing", as.name(a)), frame)) next
        val <- get(a, envir = frame)
        ty <- argtypes[[k]]
        if (!checks[[ty]](val))
          stop(sprintf("Tool '%s': argument '%s' must be %s, got %s",
                       tool, a, ty, class(val)[[1]]), call. = FALSE)
        if (ty == "integer" && !is.integer(val)) {
          nm <- names(val)
          val <- as.integer(val)
          names(val) <- nm
        }
        args[a] <- list(val)
      }
      call_tool(tool, args)
    }
    wenv <- new.env(parent = baseenv())
    wenv$invoke <- invoke
    lockEnvironment(wenv, bindings = TRUE)
    fmls <- rep(list(quote(expr = )), length(argnames))
    names(fmls) <- argnames
    as.function(c(fmls, quote(invoke(environment()))), envir = wenv)
  }
  tools_env <- new.env(parent = emptyenv())
  define_tools <- function(tools) {
    for (t in tools) {
      argnames <- vapply(t$args, function(a) a$name, "")
      argtypes <- vapply(t$args, function(a) a$type, "")
      assign(t$name, make_wrapper(t$name, argnames, argtypes), envir = tools_env)
    }
    assign(".securer_call_tool", generic_call, envir = tools_env)
    lockEnvironment(tools_env, bindings = TRUE)
    # On the search path, so rm() in the global environment cannot remove
    # them; plus locked bindings in the global environment so that an
    # accidental `add <- ...` fails loudly instead of shadowing the tool.
    base::attach(tools_env, pos = 2L, name = "securer:tools", warn.conflicts = FALSE)
    g <- globalenv()
    for (n in ls(tools_env, all.names = TRUE)) {
      assign(n, get(n, envir = tools_env), envir = g)
      lockBinding(n, g)
    }
  }

  # ---- pre-validation ---------------------------------------------------------
  called_names <- function(e) {
    acc <- character()
    walk <- function(x) {
      if (is.call(x)) {
        f <- x[[1L]]
        if (is.name(f)) {
          fn <- as.character(f)
          acc <<- c(acc, fn)
          if (fn %in% c("do.call", "match.fun", "get", "get0", "getExportedValue") &&
              length(x) >= 2L && is.character(x[[2L]]))
            acc <<- c(acc, x[[2L]])
        } else if (is.call(f) && is.name(f[[1L]]) &&
                   as.character(f[[1L]]) %in% c("::", ":::") && length(f) == 3L) {
          acc <<- c(acc, as.character(f[[3L]]),
                    paste0(as.character(f[[2L]]), "::", as.character(f[[3L]])))
        }
        for (k in seq_along(x)) {
          a <- x[[k]]
          if (!missing(a)) walk(a)
        }
      }
    }
    for (x in e) walk(x)
    unique(acc)
  }
  risky_warnings <- function(exprs) {
    hits <- intersect(called_names(exprs), st$risky)
    if (!length(hits)) return(character())
    sprintf("call to %s() found: advisory only, the sandbox is the enforcement layer", hits)
  }


  # ---- plots ------------------------------------------------------------------
  # Every page drawn on the runtime's own device (the default device: what
  # plot() or grid.newpage() opens when none is open) comes back as an
  # image, without the code asking.  The device is a null pdf() that keeps
  # R's display list; a page is taken (recordPlot()) when it is finished --
  # a new page is about to start, or the execution ends -- and replayed
  # onto a png() or svg() file for the host.  A page still open when an
  # execution ends is taken then and again at its end only if the code
  # drew on it meanwhile, so that lines added by the next execution give
  # a new image and an untouched page none.
  pl <- new.env(parent = emptyenv())
  pl$opts <- NULL       # this execution's plot options; NULL: no plots
  pl$dev <- 0L          # our device's number, 0 when none has been opened
  pl$pages <- list()    # finished pages of this execution
  pl$sent <- NULL       # the open page as last taken, not to be taken again
  pl$last <- NULL       # the open page before an expression that closes devices
  pl$dropped <- 0
  open_device <- function(...) {
    o <- pl$opts
    w <- if (is.null(o)) 480 else o$width
    h <- if (is.null(o)) 480 else o$height
    r <- if (is.null(o)) 72 else o$res
    grDevices::pdf(file = NULL, width = w / r, height = h / r)
    grDevices::dev.control("enable")
    pl$dev <- grDevices::dev.cur()
    invisible()
  }
  # The open page of our device, or NULL (none open, nothing drawn); the
  # current device stays what it was.
  snap <- function() {
    d <- pl$dev
    if (d < 2L || !(d %in% grDevices::dev.list())) return(NULL)
    cur <- grDevices::dev.cur()
    if (cur != d) {
      grDevices::dev.set(d)
      on.exit(grDevices::dev.set(cur))
    }
    p <- tryCatch(grDevices::recordPlot(), error = function(e) NULL)
    if (is.null(p) || !length(drawing(p))) NULL else p
  }
  # A page's display list without the settings that end it: par() and
  # palette() are recorded too, and par(mfrow = ...) before the next plot
  # changes no pixel of the page that is about to be cleared.
  settings <- c("C_par", "palette", "palette2", "C_layout")
  routine <- function(e) tryCatch({
    f <- e[[2L]][[1L]]
    if (inherits(f, "NativeSymbolInfo")) f$name else ""
  }, error = function(err) "")
  drawing <- function(p) {
    dl <- as.list(p[[1L]])
    n <- length(dl)
    while (n > 0L && routine(dl[[n]]) %in% settings) n <- n - 1L
    dl[seq_len(n)]
  }
  keep_page <- function(p) {
    if (is.null(p) || !is.null(pl$sent) && identical(drawing(p), drawing(pl$sent))) return(invisible())
    if (length(pl$pages) >= pl$opts$max) pl$dropped <- pl$dropped + 1 else pl$pages[[length(pl$pages) + 1L]] <- p
  }
  # A page is about to be cleared: base graphics start a new page only
  # when par("page") says so (not for each panel of par(mfrow)), grid
  # always.
  page_ends <- function(base) {
    if (is.null(pl$opts) || pl$dev < 2L || grDevices::dev.cur() != pl$dev) return(invisible())
    if (base && !isTRUE(graphics::par("page"))) return(invisible())
    keep_page(snap())
    pl$sent <- NULL
    pl$last <- NULL
  }
  setHook("before.plot.new", function() page_ends(TRUE))
  setHook("before.grid.newpage", function() page_ends(FALSE))
  options(device = open_device)
  plots_begin <- function(o) {
    pl$opts <- o
    pl$pages <- list()
    pl$dropped <- 0
    pl$last <- NULL
  }
  # Before an expression that may close our device: its page as it is.
  # (Taken after every expression instead, a page of a million points
  # would be copied at each.)
  before_expr <- function(e) {
    if (!is.null(pl$opts) && pl$dev %in% grDevices::dev.list() &&
        any(c("dev.off", "graphics.off") %in% all.names(e))) pl$last <- snap()
  }
  # Renders and sends this execution's pages; returns warnings for pages
  # that could not be rendered.  Pages over the caps are counted, never
  # rendered.
  plots_end <- function() {
    o <- pl$opts
    p <- snap()
    # Drawn with plots off: seen, so that no later execution sends it.
    if (is.null(o)) {
      pl$sent <- p
      return(character())
    }
    # The code closed our device: its page as it was before.
    if (is.null(p) && !(pl$dev %in% grDevices::dev.list())) p <- pl$last
    keep_page(p)
    pl$sent <- p
    pl$opts <- NULL
    warns <- character()
    used <- 0
    for (k in seq_along(pl$pages)) {
      img <- tryCatch(render(pl$pages[[k]], o), error = function(e) e)
      if (inherits(img, "error")) {
        pl$dropped <- pl$dropped + 1
        warns <- c(warns, sprintf("plot %d could not be drawn: %s", k, conditionMessage(img)))
        next
      }
      msg <- paste0("{\"type\":\"plot\",\"id\":", st$id, ",\"format\":\"", o$format, "\",\"width\":",
                    o$width, ",\"height\":", o$height, ",\"data\":\"", b64(img), "\"}")
      if (used + length(img) > o$max_bytes || nchar(msg, "bytes") > st$max_message) {
        pl$dropped <- pl$dropped + 1
        next
      }
      used <- used + length(img)
      send(msg)
    }
    pl$pages <- list()
    warns
  }
  render <- function(p, o) {
    f <- tempfile(fileext = paste0(".", o$format))
    on.exit(unlink(f))
    cur <- grDevices::dev.cur()
    if (o$format == "svg") grDevices::svg(f, width = o$width / o$res, height = o$height / o$res)
    else grDevices::png(f, width = o$width, height = o$height, res = o$res, type = "cairo")
    d <- grDevices::dev.cur()
    tryCatch(suppressWarnings(grDevices::replayPlot(p)), finally = {
      grDevices::dev.off(d)
      if (cur > 1L) grDevices::dev.set(cur)
    })
    readBin(f, "raw", file.size(f))
  }

  # ---- requests -----------------------------------------------------------------
  reply_error <- function(id, msg, kind = "error", warns = character(), call = NULL) {
    send(paste0("{\"type\":\"error\",\"id\":", id, ",\"kind\":\"", kind,
                "\",\"message\":", jstr(msg),
                if (length(warns)) paste0(",\"warnings\":", jchr(warns)),
                if (!is.null(call)) paste0(",\"call\":", jstr(call)), dropped_field(), "}"))
  }
  dropped_field <- function() if (pl$dropped > 0) paste0(",\"plots_dropped\":", format(pl$dropped, scientific = FALSE))
  # The call an error names, as R's "Error in f(x) :" shows it: one line,
  # none for an error at the top level of the code.
  error_call <- function(e) {
    call <- conditionCall(e)
    if (is.null(call) || identical(call, top_call)) return(NULL)
    text <- tryCatch(deparse(call, width.cutoff = 500L, nlines = 1L), error = function(e) character())
    if (!length(text)) return(NULL)
    substr(text[[1L]], 1L, 1000L)
  }
  top_call <- quote(eval(e, globalenv()))
  parse_code <- function(code) {
    tryCatch(parse(text = code, keep.source = FALSE, encoding = "UTF-8"),
             error = function(e) e)
  }
  do_parse <- function(m) {
    pl$dropped <- 0
    exprs <- parse_code(m$code)
    if (inherits(exprs, "error"))
      return(reply_error(m$id, conditionMessage(exprs), "syntax"))
    send(paste0("{\"type\":\"parsed\",\"id\":", m$id, ",\"warnings\":",
                jchr(risky_warnings(exprs)), "}"))
  }
  do_execute <- function(m) {
    st$id <- m$id
    plots_begin(m$plots)
    exprs <- parse_code(m$code)
    if (inherits(exprs, "error"))
      return(reply_error(m$id, conditionMessage(exprs), "syntax"))
    autoprint <- isTRUE(m$print)
    warns <- character()
    res <- tryCatch(withCallingHandlers({
      r <- list(NULL, FALSE)
      for (e in exprs) {
        before_expr(e)
        r <- withVisible(eval(e, globalenv()))
        if (autoprint && r[[2L]]) print(r[[1L]])
      }
      r
    }, warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    }), error = function(e) e)
    warns <- c(warns, plots_end())
    flush(stdout())
    flush(stderr())
    if (inherits(res, "error"))
      return(reply_error(m$id, conditionMessage(res), warns = warns, call = error_call(res)))
    val <- tryCatch(enc(res[[1L]]), error = function(e) e)
    if (inherits(val, "error"))
      return(reply_error(m$id, paste("cannot transfer the result:", conditionMessage(val)), warns = warns))
    msg <- paste0("{\"type\":\"result\",\"id\":", m$id, ",\"visible\":",
                  if (res[[2L]]) "true" else "false", ",\"warnings\":", jchr(warns),
                  dropped_field(), ",\"value\":", val, "}")
    if (nchar(msg, "bytes") > st$max_message)
      return(reply_error(m$id, sprintf("result too large to transfer (%d bytes, limit %d)",
                                       nchar(msg, "bytes"), st$max_message), "too_large"))
    send(msg)
  }
  # parallel::detectCores() asks `grep | wc` of /proc/cpuinfo, neither of
  # which the sandbox has (NA), and would count the host's CPUs anyway:
  # it says the sandbox's own, as the host counted them, and mclapply()
  # uses as many by default.
  cores_are <- function(n) {
    options(mc.cores = n)
    patch <- function(...) {
      ns <- asNamespace("parallel")
      unlockBinding("detectCores", ns)
      assign("detectCores", function(all.tests = FALSE, logical = TRUE) n, envir = ns)
      lockBinding("detectCores", ns)
    }
    if (isNamespaceLoaded("parallel")) patch() else setHook(packageEvent("parallel", "onLoad"), patch)
  }
  do_hello <- function(m) {
    if (is.numeric(m$cpus) && length(m$cpus) == 1L && m$cpus >= 1) cores_are(as.integer(m$cpus))
    if (is.numeric(m$max_message)) st$max_message <- m$max_message
    st$risky <- as.character(unlist(m$risky))
    define_tools(m$tools)
    send(paste0("{\"type\":\"ready\",\"r_version\":", jstr(paste(R.version$major, R.version$minor, sep = ".")),
                ",\"pid\":", Sys.getpid(), "}"))
  }

  serve <- function() repeat {
    line <- readLines(inc, 1L, encoding = "UTF-8")
    if (!length(line)) quit(save = "no", status = 0L, runLast = FALSE)
    m <- tryCatch(parse_json(line), error = function(e) NULL)
    if (!is.list(m) || !is.character(m$type)) quit(save = "no", status = 3L, runLast = FALSE)
    switch(m$type,
           hello = do_hello(m),
           execute = do_execute(m),
           parse = do_parse(m),
           quit(save = "no", status = 3L, runLast = FALSE))
  }
  lockEnvironment(environment(), bindings = TRUE)
  serve()
}
