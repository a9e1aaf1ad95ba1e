# The tagged value encoding of docs/protocol.md, both ways.  Values from
# the sandbox are decoded strictly into base R objects: known tags and keys
# only, element types checked, nothing evaluated or unserialized.

# ---- JSON text -------------------------------------------------------------

json_strings <- function(x) {
  x <- enc2utf8(as.character(x))
  as.character(jsonlite::toJSON(x, na = "null"))
}

json_string1 <- function(x) {
  as.character(jsonlite::toJSON(enc2utf8(as.character(x)), auto_unbox = TRUE))
}

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

# An object from named JSON texts (NULL entries left out).
json_object <- function(fields) {
  fields <- fields[!vapply(fields, is.null, logical(1))]
  if (length(fields) == 0L) return("{}")
  keys <- vapply(names(fields), json_string1, character(1))
  paste0("{", paste0(keys, ":", unlist(fields), collapse = ","), "}")
}

# ---- host -> sandbox ----------------------------------------------------------

encode_value <- function(x, depth = 0L) {
  if (depth > 64L) stop("value nested too deeply to send (over 64 levels)", call. = FALSE)
  if (is.null(x)) return("null")
  common <- list()
  if (!is.null(names(x)) && !is.data.frame(x)) common$n <- json_strings(names(x))
  if (!is.null(dim(x)) && !is.data.frame(x)) common$dim <- json_ints(dim(x))
  tagged <- function(t, v, ...) json_object(c(list(t = json_string1(t), v = v), list(...), common))
  if (is.data.frame(x)) {
    cols <- vapply(x, encode_value, character(1), depth = depth + 1L)
    rn <- attr(x, "row.names")
    rownames <- if (is.character(rn)) json_strings(rn) else NULL
    return(json_object(list(t = "\"df\"", n = json_strings(names(x)), nrow = as.character(nrow(x)),
                            v = paste0("[", paste(cols, collapse = ","), "]"), rownames = rownames)))
  }
  if (is.factor(x)) return(tagged("fct", json_ints(unclass(x)), levels = json_strings(levels(x))))
  if (inherits(x, "Date")) return(tagged("date", json_doubles(unclass(x))))
  if (inherits(x, "POSIXct")) {
    tz <- attr(x, "tzone")
    return(tagged("time", json_doubles(unclass(x)), tz = json_string1(if (length(tz)) tz[[1]] else "")))
  }
  if (is.list(x) && !is.object(x)) {
    v <- vapply(x, encode_value, character(1), depth = depth + 1L, USE.NAMES = FALSE)
    return(tagged("list", paste0("[", paste(v, collapse = ","), "]")))
  }
  if (is.object(x) && !is.matrix(x) && !is.array(x)) {
    stop(sprintf("a value of class '%s' cannot be sent to the sandbox",
                 paste(class(x), collapse = "/")), call. = FALSE)
  }
  switch(typeof(x),
    logical = tagged("lgl", json_lgls(x)),
    integer = tagged("int", json_ints(x)),
    double = tagged("dbl", json_doubles(x)),
    character = tagged("chr", json_strings(x)),
    stop(sprintf("a value of type '%s' cannot be sent to the sandbox", typeof(x)), call. = FALSE))
}

# ---- sandbox -> host ----------------------------------------------------------

bad_value <- function(...) stop("invalid value from the sandbox: ", ..., call. = FALSE)

is_string <- function(x) is.character(x) && length(x) == 1L && !is.na(x)

check_keys <- function(j, allowed) {
  extra <- setdiff(names(j), allowed)
  if (length(extra)) bad_value(sprintf("unexpected key '%s'", extra[[1]]))
}

# Elements of "v" (a JSON array, parsed as a list) of one kind; NULL is NA.
decode_elements <- function(v, kind) {
  if (!is.list(v)) bad_value("\"v\" must be an array")
  n <- length(v)
  na <- vapply(v, is.null, logical(1))
  if (kind == "chr") {
    ok <- vapply(v, function(e) is.null(e) || is_string(e), logical(1))
    if (!all(ok)) bad_value("a chr element that is not a string")
    out <- rep(NA_character_, n)
    out[!na] <- unlist(v[!na])
    return(out)
  }
  if (kind == "lgl") {
    ok <- vapply(v, function(e) is.null(e) || (is.logical(e) && length(e) == 1L && !is.na(e)), logical(1))
    if (!all(ok)) bad_value("a lgl element that is not a boolean")
    out <- rep(NA, n)
    out[!na] <- unlist(v[!na])
    return(out)
  }
  if (kind == "int") {
    ok <- vapply(v, function(e) is.null(e) || (is.numeric(e) && length(e) == 1L && !is.na(e) &&
                                                 e == round(e) && abs(e) <= 2147483647), logical(1))
    if (!all(ok)) bad_value("an int element that is not an integer in R's range")
    out <- rep(NA_integer_, n)
    out[!na] <- as.integer(unlist(v[!na]))
    return(out)
  }
  # dbl: numbers, or the strings NaN, Inf, -Inf.
  out <- rep(NA_real_, n)
  for (i in which(!na)) {
    e <- v[[i]]
    if (is.numeric(e) && length(e) == 1L && !is.na(e)) out[i] <- as.double(e)
    else if (is_string(e) && e %in% c("NaN", "Inf", "-Inf"))
      out[i] <- c(NaN, Inf, -Inf)[match(e, c("NaN", "Inf", "-Inf"))]
    else bad_value("a dbl element that is not a number")
  }
  out
}

decode_strings <- function(x, what, na_ok = TRUE) {
  if (!is.list(x)) bad_value(sprintf("\"%s\" must be an array", what))
  if (!na_ok && any(vapply(x, is.null, logical(1)))) bad_value(sprintf("\"%s\" may not hold null", what))
  decode_elements(x, "chr")
}

decode_value <- function(j, depth = 0L) {
  if (is.null(j)) return(NULL)
  if (depth > 64L) bad_value("nested over 64 levels")
  if (!is.list(j) || is.null(names(j)) || !is_string(j$t)) bad_value("not a tagged value")
  t <- j$t
  vec_keys <- c("t", "v", "n", "dim", "class")
  switch(t,
    lgl = , int = , dbl = , chr = check_keys(j, vec_keys),
    fct = check_keys(j, c(vec_keys, "levels")),
    date = check_keys(j, vec_keys),
    time = check_keys(j, c(vec_keys, "tz")),
    list = check_keys(j, vec_keys),
    df = check_keys(j, c("t", "v", "n", "nrow", "rownames")),
    other = check_keys(j, c("t", "class", "text")),
    bad_value(sprintf("unknown tag '%s'", t)))
  if (t == "other") {
    if (!is_string(j$text)) bad_value("\"other\" without text")
    cls <- if (is.null(j$class)) character() else decode_strings(j$class, "class", FALSE)
    return(structure(list(class = cls, text = j$text), class = "securer_other"))
  }
  if (t == "df") return(decode_df(j, depth))
  x <- switch(t,
    lgl = , int = , dbl = , chr = decode_elements(j$v, t),
    date = structure(decode_elements(j$v, "dbl"), class = "Date"),
    time = {
      tz <- if (is.null(j$tz)) "" else if (is_string(j$tz)) j$tz else bad_value("\"tz\" must be a string")
      structure(decode_elements(j$v, "dbl"), class = c("POSIXct", "POSIXt"), tzone = tz)
    },
    fct = {
      codes <- decode_elements(j$v, "int")
      levels <- decode_strings(j$levels, "levels", FALSE)
      if (any(!is.na(codes) & (codes < 1L | codes > length(levels)))) bad_value("factor code out of range")
      if (anyDuplicated(levels)) bad_value("duplicated factor levels")
      cls <- if (is.null(j$class)) character() else decode_strings(j$class, "class", FALSE)
      structure(codes, levels = levels, class = if ("ordered" %in% cls) c("ordered", "factor") else "factor")
    },
    list = {
      if (!is.list(j$v)) bad_value("\"v\" must be an array")
      lapply(j$v, decode_value, depth = depth + 1L)
    })
  if (!is.null(j$n)) {
    nm <- decode_strings(j$n, "n")
    if (length(nm) != length(x)) bad_value("names of the wrong length")
    names(x) <- nm
  }
  if (!is.null(j$dim)) {
    d <- decode_elements(j$dim, "int")
    if (anyNA(d) || any(d < 0L) || prod(d) != length(x)) bad_value("dim does not match the length")
    dim(x) <- d
  }
  x
}

decode_df <- function(j, depth) {
  names <- decode_strings(j$n, "n", FALSE)
  nrow <- j$nrow
  if (!(is.numeric(nrow) && length(nrow) == 1L && nrow >= 0 && nrow == round(nrow))) bad_value("bad nrow")
  if (!is.list(j$v) || length(j$v) != length(names)) bad_value("data frame columns and names differ")
  cols <- lapply(j$v, decode_value, depth = depth + 1L)
  for (col in cols) {
    rows <- if (is.data.frame(col)) nrow(col) else if (inherits(col, "securer_other")) nrow else NROW(col)
    if (rows != nrow) bad_value("a data frame column of the wrong length")
  }
  rn <- if (is.null(j$rownames)) .set_row_names(as.integer(nrow)) else decode_strings(j$rownames, "rownames", FALSE)
  if (length(rn) != nrow && !is.null(j$rownames)) bad_value("row names of the wrong length")
  structure(cols, names = names, row.names = rn, class = "data.frame")
}

#' @export
print.securer_other <- function(x, ...) {
  cat(sprintf("<securer: a value of class %s that stays in the sandbox>\n",
              paste(x$class, collapse = "/")))
  cat(x$text, sep = "\n")
  invisible(x)
}
