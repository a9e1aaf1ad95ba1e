# Files in and out of a session's work directory: a host directory that
# serve mounts read-write at /work in the sandbox (R's working directory
# there).  The sandbox writes in it, so the package never touches it by
# name: upload() and download() go through serve, which resolves every
# name beneath the directory with no symbolic link on the way
# (docs/protocol.md, "Files").

# Bytes of a file per request: their base64 stays well inside serve's
# request line of 1 MiB.
file_chunk <- 512L * 1024L

# The work directory of `workdir` (NULL: none; TRUE: a private one,
# removed with the session; else an existing directory), as
# list(path, private).
prepare_workdir <- function(workdir) {
  if (is.null(workdir) || isFALSE(workdir)) return(NULL)
  if (isTRUE(workdir)) {
    # Next to the temporary directory, not in it: as root the sandbox
    # writes as the directory's owner, who must be able to reach it.
    parent <- dirname(tempdir())
    path <- tempfile("securer-work-", tmpdir = parent)
    if (!dir.create(path, mode = "0700")) stop(sprintf("cannot create a work directory in %s", parent), call. = FALSE)
    Sys.chmod(path, "0700", use_umask = FALSE)
    # serve never lets the sandbox write as host root: a root caller's
    # private directory belongs to nobody (65534), whom root reads anyway.
    if (identical(unname(Sys.info()[["effective_user"]]), "root")) {
      st <- system2("chown", c("65534:65534", shQuote(path)), stdout = FALSE, stderr = FALSE)
      if (!identical(st, 0L)) {
        unlink(path, recursive = TRUE)
        stop("cannot give the private work directory to nobody (chown)", call. = FALSE)
      }
    }
    return(list(path = path, private = TRUE))
  }
  if (!is_string(workdir)) stop("workdir must be TRUE or the path of a directory", call. = FALSE)
  if (!dir.exists(workdir)) stop(sprintf("workdir '%s' is not a directory", workdir), call. = FALSE)
  list(path = normalizePath(workdir, mustWork = TRUE), private = FALSE)
}

check_max_file_size <- function(x) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x < 1 || x > 2^40 || x != round(x)) {
    stop("max_file_size must be a whole number of bytes", call. = FALSE)
  }
  x
}

# `target` names the session or pool: list(session = <JSON text>) or
# list(pool = <JSON text>).
upload_file <- function(serve, target, path, to, max_size) {
  if (!is_string(path)) stop("path must be the name of a file", call. = FALSE)
  if (!is_string(to) || !nzchar(to)) stop("to must be a file name in the work directory", call. = FALSE)
  info <- file.info(path, extra_cols = FALSE)
  if (is.na(info$size) || isTRUE(info$isdir)) stop(sprintf("'%s' is not a file", path), call. = FALSE)
  if (info$size > max_size) {
    stop(sprintf("'%s' is %s bytes, more than the %s a file may be (max_file_size)", path,
                 format(info$size, scientific = FALSE), format(max_size, scientific = FALSE)), call. = FALSE)
  }
  con <- file(path, "rb")
  on.exit(close(con))
  # The first part replaces the file, the others are appended to it.
  append <- FALSE
  repeat {
    bytes <- readBin(con, "raw", file_chunk)
    if (append && !length(bytes)) break
    r <- serve$request(c(list(op = "\"upload\"", path = json_string1(to), data = json_string1(base64_encode(bytes)),
                              append = if (append) "true"), target))
    if (!isTRUE(r$ok)) securer_error(r$error)
    append <- TRUE
    if (length(bytes) < file_chunk) break
  }
  invisible(to)
}

download_file <- function(serve, target, from, path, overwrite) {
  if (!is_string(from) || !nzchar(from)) stop("from must be a file name in the work directory", call. = FALSE)
  if (!is_string(path)) stop("path must be the name of a file", call. = FALSE)
  if (file.exists(path) && !isTRUE(overwrite)) {
    stop(sprintf("'%s' exists (overwrite = TRUE replaces it)", path), call. = FALSE)
  }
  # Written beside path and renamed onto it once whole: a failed download
  # leaves what was there.
  tmp <- tempfile(".securer-download-", tmpdir = dirname(normalizePath(path, mustWork = FALSE)))
  on.exit(unlink(tmp))
  con <- file(tmp, "wb")
  offset <- 0
  tryCatch({
    repeat {
      r <- serve$request(c(list(op = "\"download\"", path = json_string1(from),
                                offset = format(offset, scientific = FALSE)), target))
      if (!isTRUE(r$ok)) securer_error(r$error)
      bytes <- base64_decode(r$data)
      writeBin(bytes, con)
      offset <- offset + length(bytes)
      if (!length(bytes) || offset >= r$size) break
    }
    TRUE
  }, finally = close(con))
  if (!file.rename(tmp, path)) stop(sprintf("cannot write '%s'", path), call. = FALSE)
  invisible(path)
}
