test_that("a pool runs code, resets between uses, and reports its state", {
  skip_if_no_securer()
  pool <- SecureSessionPool$new(size = 2, tools = list(add_tool()), reset_between_uses = TRUE)
  on.exit(pool$close())
  expect_identical(pool$execute("add(1, 2)"), 3)
  pool$execute("x <- 99")
  expect_false(pool$execute("exists('x')"))
  expect_identical(pool$size(), 2L)
  st <- pool$status()
  expect_identical(st$total, 2L)
  expect_identical(st$busy, 0L)
  expect_match(format(pool), "size=2 (idle=2, busy=0)", fixed = TRUE)
  pool$close()
  expect_error(pool$execute("1"), "Pool is closed")
})

test_that("a pool whose sessions are all busy fails at once with acquire_timeout = 0", {
  skip_if_no_securer()
  pool <- NULL
  inner <- securer_tool("inner", "Runs code on the pool", function() pool$execute("1", acquire_timeout = 0))
  pool <- SecureSessionPool$new(size = 1, tools = list(inner))
  on.exit(pool$close())
  expect_error(pool$execute("inner()"), "All sessions are busy")
})

test_that("a pool with sandbox = FALSE runs its sessions without the sandbox and says so", {
  skip_if_no_securer()
  pool <- SecureSessionPool$new(size = 1, sandbox = FALSE)
  on.exit(pool$close())
  expect_match(format(pool), "sandbox: NONE", fixed = TRUE)
  expect_identical(pool$execute("Sys.readlink('/proc/self/ns/pid')"), Sys.readlink("/proc/self/ns/pid"))
})
