# The tagged value encoding of docs/protocol.md, both ways.  Values from
# the sandbox are decoded strictly into base R objects: known tags and keys
# only, element types checked, nothing evaluated or unserialized.  They are
# data on the host: base R's methods act on what an object's fields name
# (srcref methods read the file of its srcfile, POSIXct ones open its tzone
# as a zone file, a vignette's print opens a browser), so a class from the
# sandbox is kept as the attribute "securer_class", and only classes whose
# methods only format are restored, on the layout they assume.

# ---- JSON text -------------------------------------------------------------

# Strings as JSON.  Most need no escape at all; those that do are escaped
# with gsub, and the rare one holding another control character goes
# through jsonlite (toJSON costs ~100 us a call, too much for every request).
json_strings_raw <- function(x) {
  if (length(x) == 0L) return(character())
  x <- enc2utf8(as.character(x))
  out <- paste0("\"", x, "\"")
  special <- grepl("[\"\\\\\\x00-\\x1f]", x, perl = TRUE, useBytes = TRUE)
  if (any(special, na.rm = TRUE)) {
    for (i in which(special)) {
      s <- x[[i]]
      out[[i]] <- if (grepl("[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f]", s, perl = TRUE, useBytes = TRUE)) {
        as.character(jsonlite::toJSON(s, auto_unbox = TRUE))
      } else {
        s <- gsub("\\", "\\\\", s, fixed = TRUE, useBytes = TRUE)
        s <- gsub("\"", "\\\"", s, fixed = TRUE, useBytes = TRUE)
        s <- gsub("\n", "\\n", s, fixed = TRUE, useBytes = TRUE)
        s <- gsub("\r", "\\r", s, fixed = TRUE, useBytes = TRUE)
        paste0("\"", gsub("\t", "\\t", s, fixed = TRUE, useBytes = TRUE), "\"")
      }
    }
  }
  out[is.na(x)] <- "null"
  out
}

json_strings <- function(x) paste0("[", paste(json_strings_raw(x), collapse = ","), "]")

json_string1 <- function(x) json_strings_raw(x[[1L]])

# Doubles exactly: 15 significant digits when they read back to the same
# double, 17 otherwise; -0 keeps its sign.
json_doubles <- function(x) {
  x <- as.double(x)
  s <- sprintf("%.15g", x)
  again <- suppressWarnings(as.double(s))
  redo <- !is.na(x) & is.finite(x) & again != x
  s[redo] <- sprintf("%.17g", x[redo])
  s[is.na(x)] <- "null"
  s[is.nan(x)] <- "\"NaN\""
  s[x %in% Inf] <- "\"Inf\""
  s[x %in% -Inf] <- "\"-Inf\""
  s[!is.na(x) & x == 0 & 1 / x < 0] <- "-0.0"
  paste0("[", paste(s, collapse = ","), "]")
}

json_ints <- function(x) {
  s <- as.character(as.integer(x))
  s[is.na(x)] <- "null"
  paste0("[", paste(s, collapse = ","), "]")
}

json_lgls <- function(x) {
  s <- ifelse(x, "true", "false")
  s[is.na(x)] <- "null"
  paste0("[", paste(s, collapse = ","), "]")
}

# An object from named JSON texts (NULL entries left out).  The names are
# the package's own keys or user strings; both are escaped.
json_object <- function(fields) {
  fields <- fields[!vapply(fields, is.null, logical(1))]
  if (length(fields) == 0L) return("{}")
  paste0("{", paste0(json_strings_raw(names(fields)), ":", unlist(fields), collapse = ","), "}")
}

# ---- the shape of values ----------------------------------------------------

max_attrs <- 64L

vec_keys <- c("t", "v", "n", "dim", "class", "attr")
value_keys <- list(lgl = vec_keys, int = vec_keys, dbl = vec_keys, chr = vec_keys, date = vec_keys, raw = vec_keys,
                   list = vec_keys, fct = c(vec_keys, "levels"), time = c(vec_keys, "tz"),
                   df = c("t", "v", "n", "nrow", "rownames", "class", "attr"),
                   other = c("t", "class", "text"))

# Classes a tag gets when "class" is absent.
default_class <- list(fct = "factor", date = "Date", time = c("POSIXct", "POSIXt"), df = "data.frame")

# Attributes that are references, not data: serve refuses them (R keeps
# environments and external pointers there, and base R follows them).
ref_attrs <- c("srcfile", "srcref", "wholeSrcref", "conn_id")
is_ref_attr <- function(nm) nm %in% ref_attrs | startsWith(nm, ".")

# Attributes with keys of their own: never in "attr".
own_attrs <- function(tag, tz) {
  c("names", "dim", "class",
    switch(tag, fct = "levels", df = "row.names", time = if (tz) "tzone"))
}

# ---- host -> sandbox ----------------------------------------------------------

cannot_send <- function(x) {
  what <- if (is.object(x)) sprintf("class '%s'", paste(class(x), collapse = "/")) else sprintf("type '%s'", typeof(x))
  stop(sprintf("a value of %s cannot be sent to the sandbox", what), call. = FALSE)
}

encode_extras <- function(x, tag, depth) {
  a <- attributes(x)
  if (is.null(a)) return("")
  e <- ""
  # [[ ]], not $: `a$dim` would partially match "dimnames".
  if (!is.null(a[["names"]]) && tag != "df") e <- paste0(e, ",\"n\":", json_strings(a[["names"]]))
  if (!is.null(a[["dim"]]) && tag != "df") e <- paste0(e, ",\"dim\":", json_ints(a[["dim"]]))
  cls <- a[["class"]]
  if (!is.null(cls) && !identical(cls, default_class[[tag]])) e <- paste0(e, ",\"class\":", json_strings(cls))
  rest <- a[!(names(a) %in% own_attrs(tag, tag == "time" && length(a[["tzone"]]) == 1L) | is_ref_attr(names(a)))]
  if (length(rest)) {
    if (length(rest) > max_attrs) {
      stop(sprintf("a value with %d attributes cannot be sent to the sandbox (at most %d)",
                   length(rest), max_attrs), call. = FALSE)
    }
    parts <- vapply(rest, encode_value, character(1), depth = depth + 1L, USE.NAMES = FALSE)
    e <- paste0(e, ",\"attr\":{", paste0(json_strings_raw(names(rest)), ":", parts, collapse = ","), "}")
  }
  e
}

encode_value <- function(x, depth = 0L) {
  if (depth > 64L) stop("value nested too deeply to send (over 64 levels)", call. = FALSE)
  if (is.null(x)) return("null")
  if (isS4(x)) cannot_send(x)
  obj <- is.object(x)
  tag <- switch(typeof(x),
    logical = "lgl",
    integer = if (obj && inherits(x, "factor")) "fct" else "int",
    double = if (!obj) "dbl" else if (inherits(x, "Date")) "date" else if (inherits(x, "POSIXct")) "time" else "dbl",
    character = "chr",
    list = if (obj && inherits(x, "data.frame")) "df" else "list",
    raw = "raw",
    cannot_send(x))
  if (obj && (tag != "fct" && inherits(x, "factor") || tag != "df" && inherits(x, "data.frame"))) cannot_send(x)
  u <- unclass(x)
  body <- switch(tag,
    lgl = json_lgls(u),
    int = json_ints(u),
    dbl = , date = json_doubles(u),
    chr = json_strings(u),
    raw = json_string1(base64_encode(u)),
    fct = paste0(json_ints(u), ",\"levels\":", json_strings(attr(x, "levels"))),
    time = {
      tz <- attr(x, "tzone")
      if (length(tz) == 1L) paste0(json_doubles(u), ",\"tz\":", json_string1(tz)) else json_doubles(u)
    },
    list = paste0("[", paste(vapply(u, encode_value, character(1), depth = depth + 1L, USE.NAMES = FALSE),
                             collapse = ","), "]"),
    df = {
      r <- attr(x, "row.names")
      rn <- if (.row_names_info(x, 1L) < 0L || !length(r) && !is.character(r)) "" else
        paste0(",\"rownames\":", if (is.character(r)) json_strings(r) else json_ints(r))
      cols <- vapply(u, encode_value, character(1), depth = depth + 1L, USE.NAMES = FALSE)
      paste0("[", paste(cols, collapse = ","), "],\"n\":", json_strings(names(x)),
             ",\"nrow\":", .row_names_info(x, 2L), rn)
    })
  paste0("{\"t\":\"", tag, "\",\"v\":", body, encode_extras(x, tag, depth), "}")
}

# ---- raw vectors: one base64 string --------------------------------------------

base64_encode <- function(bytes) if (length(bytes)) gsub("\n", "", jsonlite::base64_enc(bytes), fixed = TRUE) else ""

# The one spelling serve accepts (padded, no line breaks), checked again
# here: jsonlite's decoder skips what is not base64.
base64_decode <- function(text) {
  if (!is_string(text)) bad_value("a raw vector's \"v\" must be a base64 string")
  if (!nzchar(text)) return(raw())
  if (nchar(text, "bytes") %% 4L != 0L || !grepl("^[A-Za-z0-9+/]*={0,2}$", text, useBytes = TRUE)) {
    bad_value("a raw vector's \"v\" is not base64")
  }
  jsonlite::base64_dec(text)
}

# ---- sandbox -> host ----------------------------------------------------------

bad_value <- function(...) stop(term_safe(paste0("invalid value from the sandbox: ", ...)), call. = FALSE)

is_string <- function(x) is.character(x) && length(x) == 1L && !is.na(x)

# Elements of "v" (a JSON array, parsed as a list) of one kind; NULL is NA.
# Checked with primitives over the whole list (a JSON scalar is never NA, so
# type and length say it all), not a closure per element.
decode_elements <- function(v, kind) {
  if (!is.list(v)) bad_value("\"v\" must be an array")
  n <- length(v)
  if (n == 0L) return(switch(kind, chr = character(), lgl = logical(), int = integer(), double()))
  len <- lengths(v)
  na <- len == 0L & vapply(v, is.null, NA)
  one <- len == 1L
  if (kind == "chr") {
    if (!all(na | one & vapply(v, is.character, NA))) bad_value("a chr element that is not a string")
    out <- rep(NA_character_, n)
    out[!na] <- unlist(v[!na])
    return(out)
  }
  if (kind == "lgl") {
    if (!all(na | one & vapply(v, is.logical, NA))) bad_value("a lgl element that is not a boolean")
    out <- rep(NA, n)
    out[!na] <- unlist(v[!na])
    return(out)
  }
  num <- one & vapply(v, is.numeric, NA)
  out <- rep(if (kind == "int") NA_integer_ else NA_real_, n)
  if (kind == "int") {
    if (!all(na | num)) bad_value("an int element that is not an integer in R's range")
    x <- as.double(unlist(v[num]))
    if (any(x != round(x) | abs(x) > 2147483647)) bad_value("an int element that is not an integer in R's range")
    out[num] <- as.integer(x)
    return(out)
  }
  # dbl: numbers, or the strings NaN, Inf, -Inf.
  if (any(num)) out[num] <- as.double(unlist(v[num]))
  for (i in which(!num & !na)) {
    e <- v[[i]]
    if (is_string(e) && e %in% c("NaN", "Inf", "-Inf")) out[i] <- c(NaN, Inf, -Inf)[match(e, c("NaN", "Inf", "-Inf"))]
    else bad_value("a dbl element that is not a number")
  }
  out
}

decode_strings <- function(x, what, na_ok = TRUE) {
  if (!is.list(x)) bad_value(sprintf("\"%s\" must be an array", what))
  if (!na_ok && any(vapply(x, is.null, logical(1)))) bad_value(sprintf("\"%s\" may not hold null", what))
  decode_elements(x, "chr")
}

plain_vector_keys <- c("t", "v")
plain_vector_tags <- c("lgl", "int", "dbl", "chr")

# `classes = FALSE` (tool arguments, unless the tool asks for them) keeps
# every class as data; otherwise the allowed ones are restored.
decode_value <- function(j, depth = 0L, classes = TRUE) {
  if (is.null(j)) return(NULL)
  if (depth > 64L) bad_value("nested over 64 levels")
  keys <- names(j)
  # The common case, a bare vector: the same checks, fewer steps.
  if (identical(keys, plain_vector_keys) && is.list(j)) {
    t <- j[[1L]]
    if (is.character(t) && length(t) == 1L && !is.na(t) && t %in% plain_vector_tags) return(decode_elements(j[[2L]], t))
  }
  if (!is.list(j) || is.null(keys) || !is_string(j[["t"]])) bad_value("not a tagged value")
  t <- j[["t"]]
  allowed <- value_keys[[t]]
  if (is.null(allowed)) bad_value(sprintf("unknown tag '%s'", t))
  if (!all(keys %in% allowed)) bad_value(sprintf("unexpected key '%s'", setdiff(keys, allowed)[[1]]))
  if (anyDuplicated(keys)) bad_value(sprintf("key '%s' given twice", keys[anyDuplicated(keys)]))
  cls <- j[["class"]]
  if (!is.null(cls)) {
    cls <- decode_strings(cls, "class", FALSE)
    if (length(cls) == 0L || length(cls) > max_attrs) bad_value("\"class\" must hold 1 to 64 names")
  }
  if (t == "other") {
    if (!is_string(j[["text"]])) bad_value("\"other\" without text")
    return(structure(list(class = if (is.null(cls)) character() else cls, text = j[["text"]]),
                     class = "securer_other"))
  }
  if (!is.null(cls) && ((t == "fct") != ("factor" %in% cls) || (t == "df") != ("data.frame" %in% cls))) {
    bad_value(sprintf("class '%s' on a %s value", paste(cls, collapse = "/"), t))
  }
  if (is.null(cls)) cls <- default_class[[t]]
  if (t == "df") return(decode_df(j, cls, depth, classes))
  x <- switch(t,
    lgl = , int = , dbl = , chr = decode_elements(j[["v"]], t),
    date = decode_elements(j[["v"]], "dbl"),
    raw = base64_decode(j[["v"]]),
    time = {
      x <- decode_elements(j[["v"]], "dbl")
      tz <- j[["tz"]]
      if (!is.null(tz)) attr(x, "tzone") <- if (is_string(tz)) tz else bad_value("\"tz\" must be a string")
      x
    },
    fct = {
      codes <- decode_elements(j[["v"]], "int")
      levels <- decode_strings(j[["levels"]], "levels", FALSE)
      if (any(!is.na(codes) & (codes < 1L | codes > length(levels)))) bad_value("factor code out of range")
      if (anyDuplicated(levels)) bad_value("duplicated factor levels")
      structure(codes, levels = levels)
    },
    list = {
      if (!is.list(j[["v"]])) bad_value("\"v\" must be an array")
      lapply(j[["v"]], decode_value, depth = depth + 1L, classes = classes)
    })
  if (!is.null(j[["n"]])) {
    nm <- decode_strings(j[["n"]], "n")
    if (length(nm) != length(x)) bad_value("names of the wrong length")
    names(x) <- nm
  }
  if (!is.null(j[["dim"]])) {
    d <- decode_elements(j[["dim"]], "int")
    if (length(d) == 0L || anyNA(d) || any(d < 0L) || prod(d) != length(x)) bad_value("dim does not match the length")
    dim(x) <- d
  }
  if (!is.null(j[["attr"]])) x <- decode_attrs(x, j[["attr"]], own_attrs(t, !is.null(j[["tz"]])), depth, classes)
  set_class(x, cls, classes)
}

# "attr": each attribute a value of its own, set as R sets it (R's checks of
# dimnames, tsp, comment ... apply, and their failure is an invalid value).
# Left out: references (which serve refuses, checked again here), values
# that could not cross (placeholders of environments, pointers, code), a
# "contrasts" that is not numeric (contrasts() calls the function it
# names), and "securer_class", which is the decoder's own.
decode_attrs <- function(x, a, reserved, depth, classes) {
  an <- names(a)
  if (!is.list(a) || (length(a) > 0L && is.null(an))) bad_value("\"attr\" must be an object")
  if (length(a) > max_attrs) bad_value(sprintf("%d attributes, at most %d", length(a), max_attrs))
  if (anyDuplicated(an)) bad_value(sprintf("attribute '%s' given twice", an[anyDuplicated(an)]))
  for (k in seq_along(a)) {
    nm <- an[[k]]
    if (!nzchar(nm)) bad_value("an attribute without a name")
    if (nm %in% reserved) bad_value(sprintf("attribute '%s' must be given by its own key", nm))
    if (is.null(a[[k]])) bad_value(sprintf("attribute '%s' is NULL", nm))
    val <- decode_value(a[[k]], depth + 1L, classes)
    if (is_ref_attr(nm) || nm == "securer_class" || inherits(val, "securer_other") ||
        nm == "contrasts" && !is.numeric(val)) next
    x <- tryCatch(`attr<-`(x, nm, value = val),
                  error = function(e) bad_value(sprintf("attribute '%s': %s", nm, conditionMessage(e))))
  }
  x
}

decode_df <- function(j, cls, depth, classes) {
  names <- decode_strings(j[["n"]], "n", FALSE)
  nrow <- j[["nrow"]]
  if (!(is.numeric(nrow) && length(nrow) == 1L && !is.na(nrow) && nrow >= 0 && nrow == round(nrow) &&
        nrow <= .Machine$integer.max)) bad_value("bad nrow")
  if (!is.list(j[["v"]]) || length(j[["v"]]) != length(names)) bad_value("data frame columns and names differ")
  cols <- lapply(j[["v"]], decode_value, depth = depth + 1L, classes = classes)
  for (k in seq_along(cols)) {
    col <- cols[[k]]
    # A data frame column counts its rows whether or not its class came back.
    rows <- if (inherits(col, "securer_other")) nrow else if (identical(j[["v"]][[k]][["t"]], "df")) {
      .row_names_info(col, 2L)
    } else NROW(col)
    if (rows != nrow) bad_value("a data frame column of the wrong length")
  }
  rn <- j[["rownames"]]
  rn <- if (is.null(rn)) {
    .set_row_names(as.integer(nrow))
  } else if (is.list(rn) && length(rn) > 0L && is.numeric(rn[[1L]])) {
    decode_elements(rn, "int")
  } else {
    decode_strings(rn, "rownames", FALSE)
  }
  if (anyNA(rn) && !is.null(j[["rownames"]])) bad_value("row names may not be NA")
  if (length(rn) != nrow && !is.null(j[["rownames"]])) bad_value("row names of the wrong length")
  x <- structure(cols, names = names, row.names = rn)
  if (!is.null(j[["attr"]])) x <- decode_attrs(x, j[["attr"]], own_attrs("df", FALSE), depth, classes)
  set_class(x, cls, classes)
}

# ---- classes ------------------------------------------------------------------

# Classes restored on the host: their methods format the value and read
# nothing but its own fields, once class_fits() has checked the layout
# they assume.  Model fits (lm, glm ...) are not among them: their methods
# evaluate the call and formula they hold (update(), predict(),
# model.frame()), which a value from the sandbox may not choose.
allowed_classes <- list("factor", c("ordered", "factor"), "Date", c("POSIXct", "POSIXt"),
                        c("POSIXlt", "POSIXt"), "difftime", "data.frame", "table", "noquote")
allowed_last <- vapply(allowed_classes, function(cl) cl[[length(cl)]], "")

difftime_units <- c("secs", "mins", "hours", "days", "weeks")
posixlt_fields <- c("sec", "min", "hour", "mday", "mon", "year", "wday", "yday", "isdst", "zone", "gmtoff")

# Olson names ("UTC", "Europe/Paris", "Etc/GMT+5") or "" (local time):
# nothing the C library would take as a path of its own (a leading ':' or
# '/', '..'), nothing longer than a zone name gets.
zones_ok <- function(tz) {
  is.null(tz) || is.character(tz) && length(tz) <= 3L && !anyNA(tz) && all(nchar(tz, "bytes") <= 64L) &&
    all(grepl("^([A-Za-z0-9_+-][A-Za-z0-9_+/-]*)?$", tz, useBytes = TRUE))
}

# The layout a restored class's methods assume; `first` is its first name.
# "factor" and "data.frame" come only with their tags, whose decoding
# checks their layout (codes within unique levels; columns of nrow rows).
class_fits <- function(x, first) {
  switch(first,
    factor = , ordered = TRUE,
    data.frame = {
      n <- .row_names_info(x, 2L)
      all(vapply(x, function(col) inherits(col, "securer_other") || NROW(col) == n, NA))
    },
    Date = is.numeric(x),
    POSIXct = is.numeric(x) && zones_ok(attr(x, "tzone")),
    # Formatting reads the fields by position, the zone as strings.
    POSIXlt = is.list(x) && length(x) >= 9L && identical(names(x), posixlt_fields[seq_along(x)]) &&
      all(vapply(x[-10L], is.numeric, NA)) && (length(x) < 10L || is.character(x[[10L]])) &&
      zones_ok(attr(x, "tzone")),
    difftime = is.numeric(x) && is_string(attr(x, "units")) && attr(x, "units") %in% difftime_units,
    table = , noquote = is.atomic(x),
    FALSE)
}

# The longest tail of `cls` that is an allowed class fitting x, or NULL: a
# subclass the host does not restore falls back to its allowed parent (a
# tibble is a data.frame, c("summaryDefault", "table") a table).
allowed_tail <- function(x, cls) {
  n <- length(cls)
  if (!cls[[n]] %in% allowed_last) return(NULL)
  for (k in seq_len(n)) {
    tail <- cls[k:n]
    if (any(vapply(allowed_classes, identical, NA, tail)) && class_fits(x, tail[[1L]])) return(tail)
  }
  NULL
}

set_class <- function(x, cls, classes) {
  if (is.null(cls)) return(x)
  keep <- if (classes) allowed_tail(x, cls)
  if (!is.null(keep)) class(x) <- keep
  if (!identical(keep, cls)) attr(x, "securer_class") <- cls
  x
}

#' @export
print.securer_other <- function(x, ...) {
  cat(sprintf("<securer: a value of class %s that stays in the sandbox>\n",
              term_safe(paste(x$class, collapse = "/"))))
  cat(term_safe(x$text), sep = "\n")
  invisible(x)
}
