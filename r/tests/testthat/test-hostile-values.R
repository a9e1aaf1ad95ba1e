# The host R is the target here: a value the sandboxed code returns is
# shown on the host the usual ways (print, format, paste, message, str),
# and none of them may read a host file, read the host's stdin, open a
# browser, hang or crash.  Base R's methods act on what an object's fields
# name, so the classes and attributes that would make them do so stay data.

# Shows `v` in an R process of its own (a crash or hang there fails the
# test, not the run) whose stdin is a pipe nobody writes, whose browser
# only says it was called, under a memory and a time limit.
show_on_host <- function(v, timeout = 30) {
  rds <- tempfile(fileext = ".rds")
  saveRDS(v, rds)
  script <- tempfile(fileext = ".R")
  out <- tempfile()
  on.exit(unlink(c(rds, script, out)))
  writeLines(c(
    "suppressMessages(library(securer))",
    "options(browser = function(url, ...) cat('BROWSER CALLED', url, '\\n'), pdfviewer = 'false')",
    sprintf("v <- readRDS('%s')", rds),
    "shows <- list(print, function(v) cat(format(v), sep = '\\n'), function(v) cat(paste(v), sep = '\\n'),",
    "  function(v) message(v), function(v) cat(as.character(v), sep = '\\n'), str, function(v) cat(toString(v), '\\n'),",
    "  function(v) print(summary(v)), function(v) print(getSrcLines(v, 1, 1)))",
    "for (f in shows) try(f(v), silent = TRUE)",
    "cat('SHOWN\\n')"), script)
  rscript <- file.path(R.home("bin"), "Rscript")
  p <- processx::process$new("sh", c("-c", "ulimit -v 2000000; exec \"$0\" \"$1\"", rscript, script),
                             stdin = "|", stdout = out, stderr = "2>&1",
                             env = c("current", R_LIBS = paste(.libPaths(), collapse = ":")))
  p$wait(timeout * 1000)
  hung <- p$is_alive()
  if (hung) p$kill()
  text <- paste(readLines(out, warn = FALSE), collapse = "\n")
  list(text = text, hung = hung, done = !hung && grepl("SHOWN", text, fixed = TRUE))
}

# ESC, BEL or a C1 control: what a terminal would act on.
has_controls <- function(x) any(grepl("[\\x{1b}\\x{07}\\x{80}-\\x{9f}]", x, perl = TRUE))

secret_file <- function() {
  f <- tempfile("secret-")
  writeLines("the-host-secret-4f2a", f)
  f
}

test_that("a srcref naming a host file does not make the host read it", {
  skip_if_no_securer()
  f <- secret_file()
  on.exit(unlink(f))
  s <- SecureSession$new()
  on.exit(s$close(), add = TRUE)
  v <- s$execute(sprintf(paste0(
    "structure(c(1L, 1L, 100L, 1000L, 1L, 1000L, 1L, 100L), srcfile = structure(list(filename = '%s', ",
    "encoding = 'native.enc', Enc = 'unknown'), class = 'srcfile'), class = 'srcref')"), f))
  expect_null(oldClass(v))
  expect_identical(attr(v, "securer_class"), "srcref")
  expect_null(attr(v, "srcfile"))
  shown <- show_on_host(v)
  expect_true(shown$done, info = shown$text)
  expect_false(grepl("the-host-secret", shown$text, fixed = TRUE))
  # In this process too, and in the text a model is given.
  here <- paste(c(capture.output(print(v)), format(v), paste(v), toString(v)), collapse = "\n")
  expect_false(grepl("the-host-secret", here, fixed = TRUE))
  parts <- securer:::ellmer_tool_parts(s, list(), TRUE, NULL, 30)
  text <- parts$fun(sprintf("structure(1:8, srcfile = structure(list(filename = '%s', encoding = 'native.enc', Enc = 'unknown'), class = 'srcfile'), class = 'srcref')", f))
  expect_false(grepl("the-host-secret", text, fixed = TRUE))
})

test_that("the decoder itself drops reference attributes, whatever serve let through", {
  f <- secret_file()
  on.exit(unlink(f))
  v <- dec(sprintf(paste0(
    '{"t":"int","v":[1,1,100,1000,1,1000,1,100],"class":["srcref"],"attr":{"srcfile":{"t":"list",',
    '"v":[{"t":"chr","v":["%s"]},{"t":"chr","v":["native.enc"]},{"t":"chr","v":["unknown"]}],',
    '"n":["filename","encoding","Enc"],"class":["srcfile"]}}}'), f))
  expect_identical(v, structure(c(1L, 1L, 100L, 1000L, 1L, 1000L, 1L, 100L), securer_class = "srcref"))
  expect_false(any(grepl("the-host-secret", capture.output(print(v)), fixed = TRUE)))
  for (nm in c("srcref", "wholeSrcref", "conn_id", ".internal.selfref", ".Environment", "securer_class")) {
    v <- dec(sprintf('{"t":"dbl","v":[1],"attr":{"%s":{"t":"chr","v":["x"]},"keep":{"t":"int","v":[2]}}}', nm))
    expect_identical(v, structure(1, keep = 2L), info = nm)
  }
  # Placeholders (environments, pointers, code) are no attribute data.
  expect_identical(dec('{"t":"dbl","v":[1],"attr":{"env":{"t":"other","class":["environment"],"text":"<env>"}}}'), 1)
  # contrasts() calls the function a character "contrasts" names.
  v <- dec('{"t":"fct","v":[1],"levels":["/tmp/x"],"attr":{"contrasts":{"t":"chr","v":["file.create"]}}}')
  expect_identical(v, factor("/tmp/x"))
})

test_that("a srcfile of /dev/zero neither hangs nor crashes the host", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  v <- s$execute(paste0(
    "structure(c(1L, 1L, 100L, 1000L, 1L, 1000L, 1L, 100L), srcfile = structure(list(filename = '/dev/zero', ",
    "encoding = 'native.enc', Enc = 'unknown'), class = 'srcfile'), class = 'srcref')"))
  shown <- show_on_host(v)
  expect_false(shown$hung)
  expect_true(shown$done, info = shown$text)
})

test_that("an object of class srcfile is a plain list on the host", {
  skip_if_no_securer()
  f <- secret_file()
  on.exit(unlink(f))
  s <- SecureSession$new()
  on.exit(s$close(), add = TRUE)
  v <- s$execute(sprintf("structure(list(filename = '%s', encoding = 'native.enc', Enc = 'unknown', lines = NULL), class = 'srcfile')", f))
  expect_null(oldClass(v))
  expect_identical(attr(v, "securer_class"), "srcfile")
  shown <- show_on_host(v)
  expect_true(shown$done, info = shown$text)
  expect_false(grepl("the-host-secret", shown$text, fixed = TRUE))
})

test_that("a time zone naming a file is no zone on the host", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  # The host's stdin as a zone file: reading it would block.
  v <- s$execute("structure(1.7e9, class = c('POSIXct', 'POSIXt'), tzone = ':/proc/self/fd/0')")
  expect_false(inherits(v, "POSIXct"))
  expect_identical(attr(v, "securer_class"), c("POSIXct", "POSIXt"))
  shown <- show_on_host(v)
  expect_false(shown$hung)
  expect_true(shown$done, info = shown$text)
  # A path out of the zone directory to a zone file of the host's choosing.
  zone <- "/usr/share/zoneinfo/Asia/Tokyo"
  skip_if_not(file.exists(zone), "no Asia/Tokyo zone file")
  d <- tempfile("zones-")
  dir.create(d)
  on.exit(unlink(d, recursive = TRUE), add = TRUE)
  file.copy(zone, file.path(d, "zone"))
  tz <- paste0(strrep("../", 12), substring(file.path(normalizePath(d), "zone"), 2))
  for (code in c(sprintf(".POSIXct(1.7e9, tz = '%s')", tz), sprintf("suppressWarnings(as.POSIXlt(.POSIXct(1.7e9, tz = 'UTC'), tz = '%s'))", tz),
                 ".POSIXct(1.7e9, tz = '../../etc/x')", ".POSIXct(1.7e9, tz = '/etc/localtime')")) {
    v <- s$execute(code)
    expect_false(inherits(v, "POSIXt"), info = code)
    expect_false(grepl("JST", paste(capture.output(print(v)), format(v), collapse = "\n"), fixed = TRUE), info = code)
  }
})

test_that("a vignette does not open a browser on the host", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  v <- s$execute("structure(list(Topic = 'x', PDF = 'x.txt', Dir = '/tmp', Package = 'p', R = '', File = 'x.Rmd'), class = 'vignette')")
  expect_identical(attr(v, "securer_class"), "vignette")
  called <- FALSE
  old <- options(browser = function(url, ...) called <<- TRUE)
  on.exit(options(old), add = TRUE)
  capture.output(print(v))
  expect_false(called)
  shown <- show_on_host(v)
  expect_true(shown$done, info = shown$text)
  expect_false(grepl("BROWSER CALLED", shown$text, fixed = TRUE))
})

test_that("attributes whose names start with a dot do not reach the host", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  expect_identical(s$execute("structure(1:2, .hidden = 'x', .Environment = 'y', shown = 'z')"),
                   structure(1:2, shown = "z"))
})

test_that("allowed classes come back as they were", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  same <- c("factor(c('b', 'a', NA))", "factor(c('lo', 'hi'), levels = c('lo', 'hi'), ordered = TRUE)",
            "as.Date(c('2024-01-02', NA))", ".POSIXct(1.7e9, tz = 'UTC')", ".POSIXct(c(1.7e9, NA), tz = 'Europe/Paris')",
            "as.POSIXlt(.POSIXct(1.7e9, tz = 'Europe/Paris'))", ".POSIXct(1.7e9, tz = '')",
            "data.frame(n = 1:2, d = as.Date(c('2024-01-01', NA)), f = factor(c('u', 'v')))",
            "as.difftime(c(1.5, 2), units = 'hours')", "table(c('a', 'b', 'a'), c('x', 'y', 'y'))",
            "matrix(1:6, 2, dimnames = list(c('a', 'b'), NULL))", "noquote('x')")
  for (code in same) {
    v <- s$execute(code)
    expect_identical(v, eval(parse(text = code)), info = code)
    expect_null(attr(v, "securer_class"), info = code)
  }
  expect_identical(format(s$execute(".POSIXct(1.7e9, tz = 'Europe/Paris')"), "%H:%M %Z"), "23:13 CET")
})

test_that("other classes are kept as data, and an allowed class they end in is restored", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  v <- s$execute("structure(1:3, class = c('myclass', 'foo'))")
  expect_identical(v, structure(1:3, securer_class = c("myclass", "foo")))
  v <- s$execute("structure(list(a = 1:2), class = c('tbl_df', 'tbl', 'data.frame'), row.names = 1:2)")
  expect_identical(class(v), "data.frame")
  expect_identical(attr(v, "securer_class"), c("tbl_df", "tbl", "data.frame"))
  expect_identical(s$execute("structure(5, units = 'fortnights', class = 'difftime')"),
                   structure(5, units = "fortnights", securer_class = "difftime"))
  expect_identical(s$execute("structure('2024-01-01', class = 'Date')"), structure("2024-01-01", securer_class = "Date"))
  expect_identical(s$execute("structure(list(a = 1), class = c('POSIXlt', 'POSIXt'))"),
                   structure(list(a = 1), securer_class = c("POSIXlt", "POSIXt")))
})

test_that("the decoder restores a class only on the layout its methods assume", {
  expect_identical(dec('{"t":"chr","v":["x"],"class":["POSIXct","POSIXt"]}'),
                   structure("x", securer_class = c("POSIXct", "POSIXt")))
  expect_identical(dec('{"t":"time","v":[0],"tz":"Europe/../../x"}'),
                   structure(0, tzone = "Europe/../../x", securer_class = c("POSIXct", "POSIXt")))
  expect_false(inherits(dec(sprintf('{"t":"time","v":[0],"tz":"%s"}', strrep("A", 65))), "POSIXct"))
  expect_false(inherits(dec('{"t":"time","v":[0],"attr":{"tzone":{"t":"chr","v":["UTC",":x","y"]}}}'), "POSIXct"))
  expect_false(inherits(dec('{"t":"list","v":[{"t":"chr","v":["x"]}],"n":["sec"],"class":["POSIXlt","POSIXt"]}'), "POSIXlt"))
  expect_false(inherits(dec('{"t":"dbl","v":[1],"class":["difftime"]}'), "difftime"))
  expect_false(inherits(dec('{"t":"list","v":[],"class":["table"]}'), "table"))
  expect_error(dec('{"t":"fct","v":[1],"levels":["a","a"]}'), "duplicated")
  expect_error(dec('{"t":"fct","v":[2],"levels":["a"]}'), "out of range")
  expect_error(dec('{"t":"date","v":["2024-01-01"]}'), "not a number")
})

test_that("tool arguments carry no class unless the tool asks for them", {
  skip_if_no_securer()
  seen <- list()
  keep <- function(x) {
    seen[[length(seen) + 1L]] <<- x
    TRUE
  }
  plain <- securer_tool("keep", "", keep, list(x = "any"))
  classed <- securer_tool("keep_classes", "", keep, list(x = "any"), classes = TRUE)
  expect_false(plain@classes)
  s <- SecureSession$new(tools = list(plain, classed))
  on.exit(s$close())
  s$execute("keep(factor(c('b', 'a'))); keep(data.frame(x = 1:2)); keep(structure(1:2, class = 'srcref'))")
  expect_identical(seen[[1]], structure(2:1, levels = c("a", "b"), securer_class = "factor"))
  expect_identical(seen[[2]], structure(list(x = 1:2), row.names = 1:2, securer_class = "data.frame"))
  expect_identical(seen[[3]], structure(1:2, securer_class = "srcref"))
  seen <- list()
  s$execute("keep_classes(factor(c('b', 'a'))); keep_classes(data.frame(x = 1:2)); keep_classes(structure(1:2, class = 'srcref'))")
  expect_identical(seen[[1]], factor(c("b", "a")))
  expect_identical(seen[[2]], data.frame(x = 1:2))
  expect_identical(seen[[3]], structure(1:2, securer_class = "srcref"))
  expect_error(securer_tool("t", "", keep, classes = NA), "TRUE or FALSE")
})

test_that("escape sequences from the sandbox do not reach the host's terminal", {
  skip_if_no_securer()
  s <- SecureSession$new()
  on.exit(s$close())
  # OSC 52 (sets the clipboard), OSC 0 (the title), CSI clear, 8-bit CSI.
  esc <- paste0("\033]52;c;cm0gLXJmIH4=\007\033]0;owned\007\033[2J\033[31m", "\u009b2J")
  s$execute("esc <- paste0('\\033]52;c;cm0gLXJmIH4=\\007\\033]0;owned\\007\\033[2J\\033[31m', '\\u009b2J')")
  expect_identical(s$execute("esc"), esc)   # a value stays exact data
  w <- tryCatch(s$execute("warning(esc); 1"), warning = function(w) w)
  expect_false(has_controls(conditionMessage(w)))
  expect_match(conditionMessage(w), "\\u009b2J", fixed = TRUE)
  e <- tryCatch(s$execute("stop(paste('boom', esc))"), error = function(e) e)
  expect_match(conditionMessage(e), "boom")
  expect_false(has_controls(conditionMessage(e)))
  v <- s$execute("print.evil <- function(x, ...) cat(esc, 'shown\\n'); structure(function() 1, class = c(esc, 'evil'))")
  expect_s3_class(v, "securer_other")
  out <- paste(capture.output(print(v)), collapse = "\n")
  expect_match(out, "shown")
  expect_false(has_controls(out))
  out <- paste(capture.output(print(s$execute("data.frame(x = esc, row.names = esc)"))), collapse = "\n")
  expect_false(has_controls(out))
  parts <- securer:::ellmer_tool_parts(s, list(), TRUE, NULL, 30)
  expect_false(has_controls(parts$fun("cat(esc, '\\n'); esc")))
})

test_that("the terminal filter follows securer exec's rules", {
  ts <- securer:::term_safe
  expect_identical(ts("a\033[2Jb"), "ab")
  expect_identical(ts("before\033]52;c;cm0=\007after"), "beforeafter")
  expect_identical(ts("\033]0;t\033\\x"), "x")
  expect_identical(ts("seen\033]52;c;never"), "seen")
  expect_identical(ts("\033(0q\033(B\0337"), "q")
  expect_identical(ts("\a\b\v\f\x0e\x7f"), "^G^H^K^L^N^?")
  expect_identical(ts("rm -rf /\rls\r\n"), "rm -rf /\nls\n")
  expect_identical(ts("\u009b2J\u0085"), "\\u009b2J\\u0085")
  expect_identical(ts("tab\tnew\nline caf\u00e9 \u4e2d"), "tab\tnew\nline caf\u00e9 \u4e2d")
  expect_identical(ts(c("a\xffb", NA)), c("a\\xffb", NA))
})
