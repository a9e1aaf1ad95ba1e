test_that("a session keeps state and returns exact values", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  expect_true(s$is_alive())
  s$execute("x <- c(a = 0.1 + 0.2, b = NA)")
  expect_identical(s$execute("x"), c(a = 0.1 + 0.2, b = NA))
  expect_identical(s$execute("data.frame(n = 1:2, d = as.Date(c('2024-01-01', NA)))"),
                   data.frame(n = 1:2, d = as.Date(c("2024-01-01", NA))))
  expect_null(s$execute("NULL"))
  expect_identical(s$execute("factor(c('a', 'b'))"), factor(c("a", "b")))
  expect_match(format(s), "SecureSession")
})

test_that("tools run on the host, in loops, and their errors are errors in the sandbox", {
  skip_if_no_securer()
  calls <- 0
  tools <- list(add_tool(),
                securer_tool("fail", "Always fails", function() stop("no adding today")),
                securer_tool("count", "Counts calls", function() { calls <<- calls + 1; calls }))
  s <- SecureSession$new(tools = tools)
  on.exit(s$close())
  expect_identical(s$execute("s <- 0; for (i in 1:20) s <- add(s, i); s"), 210)
  expect_error(s$execute("fail()"), "no adding today")
  expect_identical(s$execute("tryCatch(fail(), error = function(e) conditionMessage(e))"), "no adding today")
  expect_error(s$execute("add('a', 1)"), "must be numeric, got character")
  s$execute("for (i in 1:3) count()")
  expect_identical(calls, 3)
  expect_named(s$tools(), c("add", "fail", "count"))
  expect_identical(s$tools()$add$args, list(a = "numeric", b = "numeric"))
  expect_error(s$execute("for (i in 1:10) add(i, i)", max_tool_calls = 5), "Maximum tool calls \\(5\\) exceeded")
})

test_that("tool definitions are checked", {
  expect_error(securer_tool("not valid", "x", function() 1), "valid R identifier")
  expect_error(SecureSession$new(tools = list(add_tool(), add_tool())), "Duplicate")
  expect_s4_class(add_tool(), "securer_tool_class")
  expect_identical(add_tool()@name, "add")
})

test_that("errors, syntax errors, warnings and output reach the host", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  expect_error(s$execute('stop("something went wrong")'), "something went wrong")
  expect_error(s$execute("if (TRUE {"), "syntax error")
  expect_warning(v <- s$execute('warning("careful"); 3'), "careful")
  expect_identical(as.numeric(v), 3)
  lines <- character()
  r <- s$execute('for (i in 1:3) cat("Step", i, "\\n"); 1', output_handler = function(l) lines <<- c(lines, l))
  expect_identical(lines, c("Step 1 ", "Step 2 ", "Step 3 "))
  expect_identical(attr(r, "output"), lines)
  expect_error(s$execute(strrep("x", 20), max_code_length = 10), "exceeds maximum length")
})

test_that("a timeout kills the execution and the session recovers", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  expect_error(s$execute("Sys.sleep(60)", timeout = 1), "Execution timed out after 1 second$")
  expect_true(s$is_alive())
  expect_identical(s$execute("1 + 1"), 2)
  expect_identical(s$execute("Sys.sleep(1.5); 3", timeout = NULL), 3)
})

test_that("restart, close and max_executions", {
  skip_if_no_securer()
  s <- SecureSession$new(max_executions = 3)
  s$execute("x <- 42")
  s$restart()
  expect_false(s$execute("exists('x')"))
  s$execute("1")
  expect_error(s$execute("1"), "Maximum executions \\(3\\) reached")
  s$close()
  expect_false(s$is_alive())
  expect_error(s$execute("1"), "Session is not running.", fixed = TRUE)
})

test_that("a tool cannot start a second execution on its own session", {
  skip_if_no_securer()
  s <- NULL
  reenter <- securer_tool("reenter", "Runs code on the session", function() s$execute("1"))
  s <- SecureSession$new(tools = list(reenter))
  on.exit(s$close())
  expect_error(s$execute("reenter()"), "does not support concurrent")
  expect_identical(s$execute("2"), 2)
})

test_that("pre_execute_hook blocks code", {
  skip_if_no_securer()
  s <- SecureSession$new(pre_execute_hook = function(code) !grepl("system\\(", code))
  on.exit(s$close())
  expect_error(s$execute("system('ls')"), "blocked")
  expect_identical(s$execute("1L"), 1L)
})

test_that("limits map onto the policy", {
  skip_if_no_securer()
  s <- SecureSession$new(limits = list(cpu = 1))
  on.exit(s$close())
  expect_error(s$execute("x <- 0; repeat x <- x + 1", timeout = 20))
  expect_identical(s$execute("1"), 1)
  expect_error(SecureSession$new(limits = list(bogus = 1)), "Unknown limit")
  expect_named(default_limits(), c("cpu", "memory", "fsize", "nproc", "nofile"))
})

test_that("the sandbox holds: no network, no writes outside /tmp", {
  skip_if_no_securer()
  expect_error(execute_r("readLines(url('http://example.com'))"))
  expect_error(execute_r('writeLines("test", "/usr/file.txt")'))
  expect_identical(execute_r("1 + 1"), 2)
})

test_that("audit logs are written, and symlinks refused", {
  skip_if_no_securer()
  dir <- tempfile()
  dir.create(dir)
  log <- file.path(dir, "audit.jsonl")
  s <- SecureSession$new(audit_log = log)
  s$execute("1 + 1")
  s$close()
  events <- vapply(readLines(log), function(l) jsonlite::parse_json(l)$event, character(1))
  expect_true(all(c("session_start", "execute_start", "session_close") %in% events))
  file.symlink(log, file.path(dir, "link.jsonl"))
  expect_error(SecureSession$new(audit_log = file.path(dir, "link.jsonl")), "symlink")
  expect_error(SecureSession$new(audit_log = "/dev/null"), "device file")
})

test_that("with_secure_session closes, and a forgotten session is closed by gc", {
  skip_if_no_securer()
  before <- serve_pids()
  expect_identical(with_secure_session(function(s) { s$execute("x <- 10"); s$execute("x * 2") }), 20)
  s <- SecureSession$new()
  # The process by its handle: its pid may be another process's once it
  # is gone.
  proc <- s$.__enclos_env__$private$serve$proc
  expect_true(proc$get_pid() %in% serve_pids())
  rm(s)
  gc()
  Sys.sleep(0.5)
  expect_false(proc$is_alive())
  expect_true(all(serve_pids() %in% before))
})

test_that("validate_code parses and notes risky calls", {
  expect_true(validate_code("1 + 1")$valid)
  expect_false(validate_code("if (TRUE {")$valid)
  expect_match(validate_code("system('ls')")$warnings, "system")
})

test_that("an interrupt of the host R restarts the session and says so", {
  skip_if_no_securer()
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(securer)",
    "s <- SecureSession$new()",
    "s$execute('x <- 1')",
    "# 'ready' once the execution runs (its first output line is streamed).",
    "r <- tryCatch(s$execute('cat(1, \"\\\\n\"); Sys.sleep(30)', output_handler = function(l) cat('ready\\n')),",
    "              error = function(e) conditionMessage(e))",
    "cat('caught:', r, '\\n')",
    "cat('exists:', s$execute(\"exists('x')\"), '\\n')",
    "s$close()"), script)
  env <- c(R_LIBS = paste(.libPaths(), collapse = ":"), SECURER_BIN = securer_binary())
  p <- processx::process$new(file.path(R.home("bin"), "Rscript"), script, stdout = "|", stderr = "|",
                             env = c("current", env))
  on.exit(p$kill_tree())
  out <- ""
  while (!grepl("ready", out) && p$is_alive()) {
    p$poll_io(1000)
    out <- paste0(out, p$read_output())
  }
  expect_match(out, "ready")
  p$interrupt()
  p$wait(20000)
  out <- paste0(out, p$read_all_output())
  err <- p$read_all_error()
  expect_match(out, "caught: Execution interrupted: the session was restarted")
  expect_match(out, "exists: FALSE")
  expect_identical(p$get_exit_status(), 0L, info = err)
})

test_that("sandbox = FALSE runs without the OS sandbox, under limits, and says so", {
  skip_if_no_securer()
  probe <- "c(pid = Sys.readlink('/proc/self/ns/pid'), net = Sys.readlink('/proc/self/ns/net'),
             nofile = gsub(' +', ' ', grep('^Max open files', readLines('/proc/self/limits'), value = TRUE)))"
  host <- c(pid = Sys.readlink("/proc/self/ns/pid"), net = Sys.readlink("/proc/self/ns/net"))
  s <- SecureSession$new(sandbox = FALSE, limits = list(nofile = 200))
  on.exit(s$close())
  expect_match(format(s), "sandbox: NONE (sandbox = FALSE", fixed = TRUE)
  inside <- s$execute(probe)
  expect_identical(inside[["pid"]], host[["pid"]])
  expect_identical(inside[["net"]], host[["net"]])
  expect_identical(inside[["nofile"]], "Max open files 200 200 files ")
  sandboxed <- SecureSession$new()
  on.exit(sandboxed$close(), add = TRUE)
  expect_match(format(sandboxed), "sandbox: policy 'r'", fixed = TRUE)
  expect_false(sandboxed$execute(probe)[["pid"]] == host[["pid"]])
  expect_error(SecureSession$new(sandbox = NA), "sandbox must be")
})

test_that("as_ellmer_tool needs ellmer and says so", {
  if (requireNamespace(securer:::ellmer_pkg, quietly = TRUE)) skip("ellmer is installed: the error for its absence cannot be shown")
  expect_error(as_ellmer_tool(), "needs the ellmer package, which is not installed")
})

test_that("as_ellmer_tool gives an ellmer tool named execute_r_code", {
  skip_if_no_securer()
  if (!requireNamespace(securer:::ellmer_pkg, quietly = TRUE)) skip("ellmer is not installed (it is not packaged in Debian)")
  tool <- as_ellmer_tool(tools = list(add_tool()))
  expect_identical(tool@name, "execute_r_code")
  expect_match(tool("x <- add(2, 3); x * 10"), "50")
})

test_that("the code tool runs code in one session, keeps state and lists the tools", {
  skip_if_no_securer()
  parts <- securer:::ellmer_tool_parts(NULL, list(add_tool()), TRUE, NULL, 30)
  expect_match(parts$description, "- add(a, b): Add two numbers", fixed = TRUE)
  expect_match(parts$description, "sandboxed R session", fixed = TRUE)
  expect_identical(parts$fun("x <- add(2, 3); cat('sum is', x, '\\n'); x * 10"), "sum is 5 \n[1] 50")
  expect_identical(parts$fun("x"), "[1] 5")
  expect_identical(parts$fun("invisible(1)"), "(no output)")
  expect_error(parts$fun("stop('model made a mistake')"), "model made a mistake")
  s <- SecureSession$new(sandbox = FALSE)
  on.exit(s$close())
  expect_match(securer:::ellmer_tool_parts(s, list(), TRUE, NULL, 30)$description, "NOT sandboxed", fixed = TRUE)
  expect_error(securer:::ellmer_tool_parts("no", list(), TRUE, NULL, 30), "must be a SecureSession")
})

test_that("the native pipe operations behave as processx's exported ones", {
  native <- securer:::pipe_ops_native()
  public <- securer:::pipe_ops_public
  for (ops in list(native, public)) {
    p <- processx::process$new("cat", stdin = "|", stdout = "|")
    ic <- p$get_input_connection()
    oc <- p$get_output_connection()
    expect_identical(ops$poll(list(oc), 0L), 3L)
    expect_identical(ops$read_lines(oc), character())
    expect_identical(length(ops$write(ic, charToRaw("one\ntwo\n"))), 0L)
    lines <- character()
    while (length(lines) < 2L) {
      expect_identical(ops$poll(list(oc), 5000L), 2L)
      lines <- c(lines, ops$read_lines(oc))
    }
    expect_identical(lines, c("one", "two"))
    expect_false(ops$at_eof(oc))
    close(ic)
    while (!ops$at_eof(oc)) {
      ops$poll(list(oc), 5000L)
      ops$read_lines(oc)
    }
    expect_true(ops$at_eof(oc))
    p$kill()
  }
})

test_that("a session whose serve process died says it is not running", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  tools::pskill(s$.__enclos_env__$private$serve$pid(), tools::SIGKILL)
  Sys.sleep(0.2)
  expect_error(s$execute("1"), "Session is not running.", fixed = TRUE)
  expect_false(s$is_alive())
})

test_that("a policy file of one's own builds on the shipped one with include \"r\"", {
  skip_if_no_securer()
  policy <- tempfile(fileext = ".policy")
  writeLines(c('include "r"', "limit nofile 200"), policy)
  s <- SecureSession$new(sandbox = policy)
  on.exit(s$close())
  limits <- s$execute("readLines('/proc/self/limits')")
  expect_match(grep("^Max open files", limits, value = TRUE), "^Max open files +200 +200 ")
  expect_error(s$execute("readLines(url('http://example.com'))"))
})

test_that("execute_r runs each call in a fresh session of one kept serve process", {
  skip_if_no_securer()
  stop_shared_server()
  expect_identical(execute_r("x <- 41; writeLines('a', '/tmp/left-behind'); x + 1"), 42)
  # The kept serve by its handle: a replacement could be given its pid.
  kept <- securer:::shared_env$serve
  pid <- kept$pid()
  expect_true(pid %in% serve_pids())
  # Nothing of the first call is in the second: not its variables, not its /tmp.
  expect_identical(execute_r("c(exists('x'), file.exists('/tmp/left-behind'))"), c(FALSE, FALSE))
  expect_true(identical(securer:::shared_env$serve, kept))
  expect_identical(execute_r("add(2, 3)", tools = list(add_tool())), 5)
  expect_error(execute_r("Sys.sleep(30)", timeout = 0.5), class = "securer_timeout")
  expect_identical(execute_r("1 + 1"), 2)
  expect_true(identical(securer:::shared_env$serve, kept))
  # A session that needs a serve of its own gets one; the kept one stays.
  log <- tempfile(fileext = ".jsonl")
  expect_identical(execute_r("2", audit_log = log), 2)
  expect_true(file.exists(log))
  expect_true(identical(securer:::shared_env$serve, kept))
  # A dead kept serve is replaced; stop_shared_server() ends it.
  tools::pskill(pid)
  Sys.sleep(0.2)
  expect_identical(execute_r("3"), 3)
  replacement <- securer:::shared_env$serve
  expect_false(identical(replacement, kept))
  proc <- replacement$proc
  stop_shared_server()
  Sys.sleep(0.2)
  expect_false(proc$is_alive())
})
