test_that("a pool's map() runs code concurrently and returns results in order", {
  skip_if_no_securer()
  pool <- SecureSessionPool$new(size = 3, tools = list(add_tool()))
  on.exit(pool$close())
  pool$map(rep("1", 3))                         # every session started
  t0 <- Sys.time()
  res <- pool$map(sprintf("Sys.sleep(0.6); add(%d, 0)", 1:6))
  took <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  expect_identical(vapply(res, function(r) r$value, 1), as.numeric(1:6))
  expect_true(took < 3, info = sprintf("%.1f s for 6 x 0.6 s on 3 sessions", took))
  res <- pool$map(list("stop('second')", "x <- (", "cat('third\\n')", "3"))
  expect_identical(vapply(res, function(r) r$status, ""), c("error", "syntax", "ok", "ok"))
  expect_identical(res[[1]]$error$message, "second")
  expect_identical(res[[3]]$stdout, "third")
  expect_identical(pool$execute("4"), 4)
  expect_identical(pool$map(character()), list())
})

test_that("a session or pool used from a forked child is refused, never answered with another's reply", {
  skip_if_no_securer()
  skip_on_os("windows")
  pool <- SecureSessionPool$new(size = 2)
  on.exit(pool$close())
  s <- SecureSession$new()
  on.exit(s$close(), add = TRUE)
  got <- parallel::mclapply(1:4, function(i) {
    tryCatch(pool$execute(sprintf("%d", i)), error = function(e) class(e)[[1]])
  }, mc.cores = 2)
  expect_identical(unlist(got), rep("securer_forked", 4))
  got <- parallel::mclapply(1:2, function(i) {
    tryCatch(s$execute("1"), error = function(e) conditionMessage(e))
  }, mc.cores = 2)
  expect_match(unlist(got), "cannot be used from process")
  # The creator's session and pool still work, with their own replies.
  expect_identical(lapply(1:8, function(i) pool$execute(sprintf("%d", i))), as.list(as.numeric(1:8)))
  expect_identical(s$execute("2"), 2)
})
