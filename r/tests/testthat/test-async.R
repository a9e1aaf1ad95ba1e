test_that("run_async() returns at once and its handle gives the result", {
  skip_if_no_securer()
  s <- SecureSession$new(tools = list(add_tool()))
  on.exit(s$close())
  h <- s$run_async("Sys.sleep(1); add(1, 2)")
  expect_s3_class(h, "securer_async")
  expect_false(h$done())
  expect_error(h$result(), "still running", class = "securer_busy")
  expect_error(s$run("1"), class = "securer_busy")
  expect_null(h$wait(0.05))
  # The tool call is answered while the handle waits.
  r <- h$wait()
  expect_s3_class(r, "securer_result")
  expect_identical(r$value, 3)
  expect_true(h$done())
  expect_identical(h$result(), r)
  expect_output(print(h), "done, status ok")
  expect_identical(s$execute("x <- 5; x"), 5)
  # Refused before anything is sent: a handle that is done already.
  h <- s$run_async("1 +")
  expect_true(h$done())
  expect_identical(h$result()$status, "syntax")
  expect_identical(s$run_async("stop('no')")$wait()$error$message, "no")
  expect_error(s$run_async("1")$wait(-1), "timeout must be")
})

test_that("a pool's handles run on its sessions at once", {
  skip_if_no_securer()
  pool <- SecureSessionPool$new(size = 2, tools = list(add_tool()))
  on.exit(pool$close())
  code <- "t0 <- as.numeric(Sys.time()); Sys.sleep(1); c(t0, as.numeric(Sys.time()), add(%d, 0))"
  hs <- lapply(1:4, function(i) pool$run_async(sprintf(code, i)))
  rs <- lapply(hs, function(h) h$wait())
  expect_identical(vapply(rs, function(r) r$value[[3]], 1), c(1, 2, 3, 4))
  # The first two ran at once: each started before the other ended.
  a <- rs[[1]]$value
  b <- rs[[2]]$value
  expect_true(a[[1]] < b[[2]] && b[[1]] < a[[2]])
  expect_identical(pool$execute("1 + 1"), 2)
})
