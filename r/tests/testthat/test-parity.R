test_that("format() of a session says its id, state and tools", {
  skip_if_no_securer()
  s <- SecureSession$new(tools = list(add_tool()))
  expect_match(format(s), "^<SecureSession> id=sess_[0-9a-f]+, state=idle, tools=1 \\(add\\)")
  expect_output(print(s), "state=idle", fixed = TRUE)
  expect_identical(s$tools()$add$name, "add")
  s$close()
  expect_match(format(s), "state=closed", fixed = TRUE)
  t <- SecureSession$new()
  on.exit(t$close())
  expect_identical(t$tools(), list())
  expect_match(format(t), "tools=0", fixed = TRUE)
})

test_that("format() of a pool says its size with idle and busy sessions; a closed pool's status is zeros", {
  skip_if_no_securer()
  pool <- SecureSessionPool$new(size = 2, tools = list(add_tool()))
  expect_match(format(pool), "^<SecureSessionPool> id=pool_[^,]+, size=2 \\(idle=2, busy=0\\), tools=1 \\(add\\)")
  expect_output(print(pool), "size=2", fixed = TRUE)
  pool$close()
  expect_identical(pool$status(), list(total = 0L, busy = 0L, idle = 0L, dead = 0L))
  expect_identical(format(pool), "<SecureSessionPool> closed")
})

test_that("a pool's size is at least 1 and at most 100", {
  expect_error(SecureSessionPool$new(size = 0), "at least 1")
  expect_error(SecureSessionPool$new(size = 101), "at most 100")
  expect_error(SecureSessionPool$new(size = "2"), "whole number")
  expect_error(SecureSessionPool$new(size = 1.5), "whole number")
})

test_that("code over max_code_length is refused as too long", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  expect_error(s$execute(strrep("x", 20), max_code_length = 10), "Code too long")
  expect_error(s$execute(NULL), "character string")
})

test_that("validate_code() refuses what is not code and flags .Fortran()", {
  expect_error(validate_code(NULL), "character string")
  expect_error(validate_code(42), "character string")
  expect_error(validate_code(list("1")), "character string")
  expect_match(validate_code(".Fortran('x')")$warnings, ".Fortran", fixed = TRUE)
  expect_true(validate_code(c("x <- 1", "x + 1"))$valid)
})

test_that("a tool argument declared NULL accepts any type", {
  skip_if_no_securer()
  echo <- securer_tool("echo", "Echoes", function(x) x, args = list(x = NULL))
  expect_identical(echo@args, list(x = "any"))
  s <- SecureSession$new(tools = list(echo))
  on.exit(s$close())
  expect_identical(s$execute("echo('a')"), "a")
  expect_identical(s$execute("echo(1:2)"), 1:2)
  expect_identical(s$execute("echo(list(1))"), list(1))
})

test_that("cgroup limits are named apart from the address space and hold the whole sandbox", {
  expect_error(SecureSession$new(sandbox = FALSE, limits = list(cgroup_memory = 1e8)), "need the sandbox")
  f <- tempfile(fileext = ".policy")
  writeLines('include "r"', f)
  on.exit(unlink(f))
  expect_error(SecureSession$new(sandbox = f, limits = list(cgroup_pids = 10)), "write them in the file")
  expect_error(SecureSession$new(limits = list(cgroup_swap = 1)), "cgroup_memory, cgroup_pids, cgroup_cpu")
  expect_error(SecureSession$new(limits = list(cgroup_cpu = 0)), "must be positive")
  sp <- securer:::serve_policy("r", list(cgroup_memory = 64 * 2^20, cgroup_pids = 8, cgroup_cpu = 0.5, cpu = 10))
  on.exit(unlink(sp$dir, recursive = TRUE), add = TRUE)
  expect_identical(readLines(file.path(sp$dir, "custom.policy")),
                   c('include "r"', "cgroup memory 67108864", "cgroup pids 8", "cgroup cpu 0.500"))
  expect_identical(sp$limits, '{"cpu":10}')
  skip_if_no_securer()
  s <- SecureSession$new(limits = list(cgroup_memory = 64 * 2^20))
  on.exit(s$close(), add = TRUE)
  if (any(grepl("cgroup", securer:::shared_env$degraded_seen))) skip("this host gives the sandbox no cgroup")
  # 160 MB is well within the address-space limit (512 MiB), not within
  # the cgroup's 64 MiB.
  expect_identical(s$run("x <- numeric(2e7); length(x)")$status, "crashed")
  t <- SecureSession$new(limits = list(cgroup_memory = 512 * 2^20))
  on.exit(t$close(), add = TRUE)
  expect_identical(t$execute("x <- numeric(2e7); length(x)"), 20000000L)
})
