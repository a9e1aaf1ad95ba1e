test_that("what the sandbox lacks is said once per text, as a securer_degraded warning", {
  env <- securer:::shared_env
  old <- env$degraded_seen
  on.exit(env$degraded_seen <- old)
  env$degraded_seen <- NULL
  text <- "best-effort protections not applied: cgroup memory, pids, cpu limits (\033]52;c;Zm9v\007)"
  w <- tryCatch(securer:::warn_degraded(text), warning = function(w) w)
  expect_s3_class(w, "securer_degraded")
  expect_match(conditionMessage(w), "cgroup memory, pids, cpu limits", fixed = TRUE)
  expect_false(grepl("\033", conditionMessage(w), fixed = TRUE))
  expect_silent(securer:::warn_degraded(text))
  expect_silent(securer:::warn_degraded(NULL))
  expect_warning(securer:::warn_degraded("another"), class = "securer_degraded")
})

test_that("a session that has all of its policy opens without a degraded warning", {
  skip_if_no_securer()
  skip_if(Sys.info()[["effective_user"]] != "root", "only a root caller is sure to get the cgroup limits of r")
  env <- securer:::shared_env
  old <- env$degraded_seen
  on.exit(env$degraded_seen <- old, add = TRUE)
  env$degraded_seen <- NULL
  got <- NULL
  s <- withCallingHandlers(SecureSession$new(),
                           securer_degraded = function(w) {
                             got <<- conditionMessage(w)
                             invokeRestart("muffleWarning")
                           })
  on.exit(s$close(), add = TRUE)
  expect_null(got)
  expect_equal(s$execute("1 + 1"), 2)
})
