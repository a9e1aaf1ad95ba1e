is_root <- function() identical(unname(Sys.info()[["effective_user"]]), "root")

# A work directory of the host user's own: as root one of nobody's, since
# the sandbox writes as the directory's owner and never as root.
user_workdir <- function() {
  d <- tempfile("wd-", tmpdir = dirname(tempdir()))
  dir.create(d, mode = "0755")
  Sys.chmod(d, "0755", use_umask = FALSE)
  if (is_root()) system2("chown", c("65534:65534", d))
  d
}

host_file <- function(text) {
  f <- tempfile()
  writeLines(text, f)
  f
}

test_that("files go in and out of the work directory, R's working directory", {
  skip_if_no_securer()
  s <- SecureSession$new(workdir = TRUE)
  wd <- s$workdir()
  expect_true(dir.exists(wd))
  s$upload(host_file(c("a,b", "1,2", "3,4")), "in.csv")
  expect_identical(s$execute("getwd()"), "/work")
  expect_identical(s$execute("d <- read.csv('in.csv'); write.csv(d * 10, 'out.csv', row.names = FALSE); sum(d)"), 10L)
  out <- tempfile()
  s$download("out.csv", out)
  expect_identical(readLines(out), c("\"a\",\"b\"", "10,20", "30,40"))
  expect_error(s$download("out.csv", out), "exists")
  s$execute("writeLines('again', 'out.csv')")
  s$download("out.csv", out, overwrite = TRUE)
  expect_identical(readLines(out), "again")
  # Larger than one request: sent and read back in parts.
  big <- tempfile()
  bytes <- as.raw(sample(0:255, 3e6, replace = TRUE))
  writeBin(bytes, big)
  s$upload(big, "big.bin")
  expect_identical(s$execute("file.size('big.bin')"), 3e6)
  back <- tempfile()
  s$download("big.bin", back)
  expect_identical(readBin(back, "raw", 4e6), bytes)
  s$close()
  expect_false(dir.exists(wd))
})

test_that("names are confined to the work directory and never followed", {
  skip_if_no_securer()
  s <- SecureSession$new(workdir = TRUE)
  on.exit(s$close())
  f <- host_file("payload")
  expect_error(s$upload(f, "../escape"), "'..'")
  expect_error(s$upload(f, "/etc/passwd"), "not an absolute path")
  expect_error(s$download("../../etc/passwd", tempfile()), "'..'")
  expect_error(s$upload(f, "nodir/x"), "does not exist")
  # A link the sandbox plants at a name is replaced by an upload, its
  # target (a host file outside the directory) left alone; a download of
  # it, or through a linked directory, is refused.
  victim <- host_file("host secret")
  s$execute(sprintf("file.symlink(%s, 'planted'); file.symlink('/', 'root')", deparse(victim)))
  expect_error(s$download("planted", tempfile()), "symbolic link")
  expect_error(s$download("root/etc/passwd", tempfile()), "symbolic link")
  s$upload(f, "planted")
  expect_identical(readLines(victim), "host secret")
  expect_identical(s$execute("c(Sys.readlink('planted'), readLines('planted'))"), c("", "payload"))
  s$execute("dir.create('sub')")
  expect_error(s$download("sub", tempfile()), "not a regular file")
  expect_identical(s$execute("1 + 1"), 2)
})

test_that("sizes are bounded and the session goes on", {
  skip_if_no_securer()
  s <- SecureSession$new(workdir = TRUE, max_file_size = 1000)
  on.exit(s$close())
  big <- tempfile()
  writeBin(as.raw(rep(1, 2000)), big)
  expect_error(s$upload(big, "big.bin"), "2000 bytes, more than the 1000 a file may be")
  s$execute("writeBin(as.raw(rep(1, 5000)), 'made.bin')")
  expect_error(s$download("made.bin", tempfile()), "5000 bytes, more than the 1000 a file may be")
  expect_error(SecureSession$new(max_file_size = -1), "max_file_size")
  expect_identical(s$execute("file.size('made.bin')"), 5000)
})

test_that("two sessions at once share a work directory, and what one wrote the other and the host replace", {
  skip_if_no_securer()
  wd <- user_workdir()
  on.exit(unlink(wd, recursive = TRUE))
  a <- SecureSession$new(workdir = wd)
  on.exit(a$close(), add = TRUE)
  b <- SecureSession$new(workdir = wd)
  on.exit(b$close(), add = TRUE)
  a$execute("writeLines('from a', 'shared.txt')")
  expect_identical(b$execute("readLines('shared.txt')"), "from a")
  b$execute("writeLines('from b', 'shared.txt'); file.remove('shared.txt'); writeLines('b again', 'shared.txt')")
  expect_identical(a$execute("readLines('shared.txt')"), "b again")
  # What the sandbox wrote belongs to the directory's owner (the host
  # user), who reads and replaces it.
  info <- file.info(file.path(wd, "shared.txt"), extra_cols = TRUE)
  expect_identical(info$uid, file.info(wd, extra_cols = TRUE)$uid)
  expect_identical(readLines(file.path(wd, "shared.txt")), "b again")
  a$upload(host_file("uploaded"), "shared.txt")
  expect_identical(b$execute("readLines('shared.txt')"), "uploaded")
  b$execute("writeLines('over the upload', 'shared.txt')")
  expect_identical(readLines(file.path(wd, "shared.txt")), "over the upload")
  # A later session too.
  a$close()
  c <- SecureSession$new(workdir = wd)
  on.exit(c$close(), add = TRUE)
  c$execute("writeLines('from c', 'shared.txt')")
  expect_identical(readLines(file.path(wd, "shared.txt")), "from c")
  # The user's directory outlives the sessions.
  c$close()
  b$close()
  expect_true(file.exists(file.path(wd, "shared.txt")))
})

test_that("a work directory others may write, or none, is refused clearly", {
  skip_if_no_securer()
  wd <- user_workdir()
  on.exit(unlink(wd, recursive = TRUE))
  Sys.chmod(wd, "0777", use_umask = FALSE)
  expect_error(SecureSession$new(workdir = wd), "group or others may write it")
  expect_error(SecureSession$new(workdir = file.path(wd, "none")), "is not a directory")
  expect_error(SecureSession$new(workdir = wd, sandbox = FALSE), "sandbox = FALSE has none")
  s <- SecureSession$new()
  on.exit(s$close(), add = TRUE)
  expect_error(s$upload(host_file("x")), "has no work directory")
  if (is_root()) {
    d <- tempfile("rootwd-", tmpdir = dirname(tempdir()))
    dir.create(d, mode = "0755")
    on.exit(unlink(d, recursive = TRUE), add = TRUE)
    expect_error(SecureSession$new(workdir = d), "owned by root")
  }
})

test_that("a pool's sessions share its work directory", {
  skip_if_no_securer()
  pool <- SecureSessionPool$new(size = 2, workdir = TRUE)
  on.exit(pool$close())
  pool$upload(host_file("42"), "n.txt")
  rs <- pool$map(c("as.numeric(readLines('n.txt')) + 1", "writeLines('7', 'm.txt'); 0"))
  expect_identical(rs[[1]]$value, 43)
  out <- tempfile()
  pool$download("m.txt", out)
  expect_identical(readLines(out), "7")
})
