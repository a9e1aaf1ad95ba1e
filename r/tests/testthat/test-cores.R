test_that("parallel::detectCores() reports the sandbox's CPUs", {
  skip_if_no_securer()
  host <- length(parallel::mcaffinity())
  degraded <- FALSE
  s <- withCallingHandlers(SecureSession$new(limits = list(cgroup_cpu = 1)),
                           securer_degraded = function(w) {
                             degraded <<- TRUE
                             invokeRestart("muffleWarning")
                           })
  on.exit(s$close())
  # Without the cgroup, the CPUs of the affinity mask; with it, one.
  expect_identical(s$execute("parallel::detectCores()"), if (degraded) host else 1L)
  expect_identical(s$execute("getOption('mc.cores')"), if (degraded) host else 1L)
  big <- SecureSession$new(limits = list(cgroup_cpu = 64))
  on.exit(big$close(), add = TRUE)
  expect_identical(big$execute("parallel::detectCores()"), host)
})
