# Text from the sandbox made safe to show on a terminal, by the rules
# `securer exec` applies to a terminal (src/cli/termsafe.c): an escape
# sequence (CSI, OSC and the other strings, ESC and intermediates) is
# removed whole, as a terminal would parse it, so that none can set the
# clipboard (OSC 52), the title or clear the screen; any other C0 control
# but tab and newline shows as ^X, DEL as ^?, a C1 control as \u0080 ..
# \u009f, a byte that is not UTF-8 as \xNN; CR and CR LF become a newline.
# Values stay exact: only what the package prints or raises passes here.

# One token each: CR (LF), an escape sequence, a C0 control or DEL, a C1
# control, a run of UTF-8 characters that are not C1, a byte that is not
# UTF-8.  PCRE without UTF mode (useBytes), so the classes are bytes.
term_token <- paste0(
  "\\r\\n?",
  "|\\x1b+(?:[\\]PX^_][^\\x07\\x18\\x1a\\x1b]*(?:\\x07|\\x1b\\\\)?",
  "|\\[[\\x20-\\x3f]*[\\x40-\\x7e]?|[\\x20-\\x2f]+[\\x30-\\x7e]?|[\\x30-\\x7e])?",
  "|[\\x01-\\x08\\x0b-\\x1f\\x7f]",
  "|\\xc2[\\x80-\\x9f]",
  "|(?:\\xc2[\\xa0-\\xbf]|[\\xc3-\\xdf][\\x80-\\xbf]|\\xe0[\\xa0-\\xbf][\\x80-\\xbf]|[\\xe1-\\xec\\xee\\xef][\\x80-\\xbf]{2}",
  "|\\xed[\\x80-\\x9f][\\x80-\\xbf]|\\xf0[\\x90-\\xbf][\\x80-\\xbf]{2}|[\\xf1-\\xf3][\\x80-\\xbf]{3}",
  "|\\xf4[\\x80-\\x8f][\\x80-\\xbf]{2})+",
  "|[\\x80-\\xff]")

term_unsafe <- "[\\x01-\\x08\\x0b-\\x1f\\x7f]|\\xc2[\\x80-\\x9f]"

term_safe <- function(x) {
  x <- as.character(x)
  # Bytes as they are unless marked latin1: text from the sandbox is UTF-8,
  # marked or not, and enc2utf8() would recode an unmarked one from the
  # locale's encoding.
  lat <- Encoding(x) == "latin1"
  x[lat] <- enc2utf8(x[lat])
  todo <- which(!is.na(x) & (grepl(term_unsafe, x, perl = TRUE, useBytes = TRUE) | !validUTF8(x)))
  for (i in todo) x[[i]] <- term_safe1(x[[i]])
  x
}

term_safe1 <- function(s) {
  m <- gregexpr(term_token, s, perl = TRUE, useBytes = TRUE)
  tok <- regmatches(s, m)[[1L]]
  bytes <- lapply(tok, charToRaw)
  first <- vapply(bytes, function(b) as.integer(b[[1L]]), 0L)
  shown <- vapply(seq_along(tok), function(k) {
    b <- first[[k]]
    if (b == 0x0d) "\n"
    else if (b == 0x1b) ""
    else if (b < 0x20 || b == 0x7f) paste0("^", rawToChar(as.raw(bitwXor(b, 0x40))))
    else if (b == 0xc2 && length(bytes[[k]]) == 2L && bytes[[k]][[2L]] < as.raw(0xa0)) {
      sprintf("\\u00%02x", as.integer(bytes[[k]][[2L]]))
    } else if (b >= 0x80 && length(bytes[[k]]) == 1L) sprintf("\\x%02x", b)
    else tok[[k]]
  }, "")
  regmatches(s, m) <- list(shown)
  Encoding(s) <- "UTF-8"
  s
}
