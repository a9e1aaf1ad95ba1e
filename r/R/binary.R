#' Where the securer binary is
#'
#' The option `securer.bin` or `SECURER_BIN`, then `securer` on the PATH.
#' @return the path, or "" when there is none.
#' @export
securer_binary <- function() {
  b <- getOption("SECURER_BIN", getOption("securer.bin", Sys.getenv("SECURER_BIN", "")))
  if (nzchar(b)) {
    if (!file.exists(b)) stop(sprintf("securer binary '%s' (SECURER_BIN) does not exist", b), call. = FALSE)
    return(normalizePath(b))
  }
  unname(Sys.which("securer"))
}

find_binary <- function() {
  b <- securer_binary()
  if (!nzchar(b)) {
    stop("securer binary not found: install securer, or set SECURER_BIN ",
         "(environment variable or option) to its path", call. = FALSE)
  }
  b
}
