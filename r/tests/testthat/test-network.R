# network =: the code reaches the hosts it names through the filtering
# proxy, and hears which it may not.  The server is the test's own, on the
# host's loopback; web.test is mapped to it by a hosts file the proxy reads
# (SECURER_NET_HOSTS), so no name is resolved by DNS.  127.0.0.1 is
# private: the policy must allow the address too (a name pointing there
# is otherwise refused).

web_server <- function() {
  py <- Sys.which("python3")
  if (!nzchar(py)) skip("python3 is not installed")
  dir <- tempfile("www-")
  dir.create(dir)
  writeLines("hello from the host", file.path(dir, "hello.txt"))
  port <- NA_integer_
  for (try in 1:20) {
    port <- sample(20000:40000, 1)
    p <- processx::process$new(py, c("-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, port),
                               stdout = NULL, stderr = NULL, cleanup = TRUE)
    for (i in 1:50) {
      con <- url(sprintf("http://127.0.0.1:%d/hello.txt", port))
      ok <- tryCatch({ readLines(con, warn = FALSE); TRUE }, error = function(e) FALSE, warning = function(w) FALSE)
      try(close(con), silent = TRUE)
      if (ok || !p$is_alive()) break
      Sys.sleep(0.1)
    }
    if (ok) return(list(proc = p, port = port))
    p$kill()
  }
  skip("could not start a test web server")
}

with_hosts <- function(code) {
  hosts <- tempfile()
  writeLines("127.0.0.1 web.test other.test", hosts)
  old <- Sys.getenv("SECURER_NET_HOSTS", NA)
  Sys.setenv(SECURER_NET_HOSTS = hosts)
  on.exit(if (is.na(old)) Sys.unsetenv("SECURER_NET_HOSTS") else Sys.setenv(SECURER_NET_HOSTS = old), add = TRUE)
  force(code)
}

test_that("a session reaches the hosts it names, and hears of the others", {
  skip_if_no_securer()
  srv <- web_server()
  on.exit(srv$proc$kill(), add = TRUE)
  with_hosts({
    s <- SecureSession$new(network = c(sprintf("web.test:%d", srv$port), sprintf("127.0.0.1:%d", srv$port)))
    on.exit(s$close(), add = TRUE)
    got <- s$execute(sprintf('readLines(url("http://web.test:%d/hello.txt"))', srv$port))
    expect_identical(got, "hello from the host")
    path <- s$execute(sprintf('f <- tempfile(); download.file("http://web.test:%d/hello.txt", f, quiet = TRUE); readLines(f)',
                              srv$port))
    expect_identical(path, "hello from the host")

    r <- s$run(sprintf('readLines(url("http://other.test:%d/hello.txt"))', srv$port))
    expect_identical(r$status, "error")
    expect_match(r$error$message, sprintf("the sandbox's network policy refused: other.test:%d", srv$port), fixed = TRUE)
    expect_identical(r$network_denied$host, "other.test")
    expect_identical(r$network_denied$reason, "no-rule")
    expect_identical(r$network_denied$count, 1L)
    expect_match(paste(format(r), collapse = "\n"), "[network policy refused: other.test:", fixed = TRUE)
    # $execute() raises the same message.
    expect_error(s$execute(sprintf('readLines(url("http://other.test:%d/"))', srv$port)),
                 "network policy refused: other.test")
    # The session is still usable, and a result without refusals has none.
    r <- s$run("1 + 1")
    expect_identical(r$value, 2)
    expect_null(r$network_denied)
  })
})

test_that("without network = the code reaches nothing", {
  skip_if_no_securer()
  srv <- web_server()
  on.exit(srv$proc$kill(), add = TRUE)
  s <- SecureSession$new()
  on.exit(s$close(), add = TRUE)
  r <- s$run(sprintf('readLines(url("http://127.0.0.1:%d/hello.txt"))', srv$port))
  expect_identical(r$status, "error")
  expect_null(r$network_denied)
})

test_that("network = is checked", {
  expect_error(SecureSession$new(network = 1), "network must be a character vector")
  expect_error(SecureSession$new(network = character()), "network must be a character vector")
  expect_error(SecureSession$new(network = NA_character_), "network must be a character vector")
  expect_error(SecureSession$new(network = "x.org", sandbox = FALSE), "sandbox = FALSE has the host's network")
  skip_if_no_securer()
  expect_error(SecureSession$new(network = "web.test:0"),
               "network allow entry 'web.test:0': a port is a number from 1 to 65535")
})

test_that("a pool's sessions each reach the hosts it names", {
  skip_if_no_securer()
  srv <- web_server()
  on.exit(srv$proc$kill(), add = TRUE)
  with_hosts({
    pool <- SecureSessionPool$new(size = 2, network = c(sprintf("web.test:%d", srv$port),
                                                         sprintf("127.0.0.1:%d", srv$port)))
    on.exit(pool$close(), add = TRUE)
    code <- sprintf('readLines(url("http://web.test:%d/hello.txt"))', srv$port)
    res <- pool$map(c(code, code, sprintf('readLines(url("http://other.test:%d/"))', srv$port)))
    expect_identical(res[[1]]$value, "hello from the host")
    expect_identical(res[[2]]$value, "hello from the host")
    expect_identical(res[[3]]$network_denied$host, "other.test")
  })
})
