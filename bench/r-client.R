# The R package against the alternatives, side by side in one run:
# warm executions and tool calls from R, a session's start, one-shot
# `securer exec` and bare `Rscript`, and callr's r_session where installed.
# Run by bench/r-client.sh (`make bench-r`); prints a markdown table.
library(securer)
runs <- as.integer(Sys.getenv("RUNS", "2000"))
cold_runs <- max(5L, runs %/% 100L)
securer_bin <- securer_binary()
rscript <- file.path(R.home("bin"), "Rscript")

median_ms <- function(n, f) {
  t <- numeric(n)
  for (i in seq_len(n)) {
    t0 <- Sys.time()
    f()
    t[i] <- as.double(Sys.time() - t0, units = "secs")
  }
  1000 * stats::median(t)
}
rows <- list()
row <- function(what, ms, runs, note = "") {
  rows[[length(rows) + 1L]] <<- sprintf("| %s | %s | %d | %s |", what,
                                        if (ms < 10) sprintf("%.3f ms", ms) else sprintf("%.1f ms", ms), runs, note)
}

add <- securer_tool("add", "Add two numbers", function(a, b) a + b, args = list(a = "numeric", b = "numeric"))
s <- SecureSession$new(tools = list(add))
for (i in 1:200) s$execute("1 + 1")
warm <- median_ms(runs, function() s$execute("1 + 1"))
row("warm `session$execute(\"1 + 1\")` from R", warm, runs)
one_tool <- median_ms(runs, function() s$execute("add(1, 2)"))
row("`session$execute(\"add(1, 2)\")`: one tool call", one_tool, runs)
tools100 <- median_ms(max(20L, runs %/% 20L), function() s$execute("for (i in 1:100) add(i, 1)"))
row("one tool-call round trip (100 calls in one execution)", tools100 / 100,
    max(20L, runs %/% 20L), sprintf("%.1f ms per execution", tools100))
s$close()

row("`SecureSession$new()` + first result + close", median_ms(cold_runs, function() {
  x <- SecureSession$new()
  x$execute("1 + 1")
  x$close()
}), cold_runs)
# One-shot sessions in execute_r()'s shared server: the first call starts
# the server (and the policy's template, where sessions fork from one).
execute_r("1 + 1")
oneshot_runs <- max(20L, runs %/% 20L)
row("`execute_r(\"1 + 1\")` (one-shot, shared server)", median_ms(oneshot_runs, function() {
  execute_r("1 + 1")
}), oneshot_runs)
row("`securer exec -e '1 + 1'` (one-shot)", median_ms(cold_runs, function() {
  processx::run(securer_bin, c("exec", "-e", "1 + 1"))
}), cold_runs)
row("bare `Rscript -e '1 + 1'`", median_ms(cold_runs, function() {
  processx::run(rscript, c("-e", "1 + 1"))
}), cold_runs)

if (requireNamespace("callr", quietly = TRUE)) {
  rs <- callr::r_session$new()
  f <- function() 1 + 1
  for (i in 1:20) rs$run(f)
  n <- max(50L, runs %/% 10L)
  row("warm `callr::r_session$run(function() 1 + 1)` (no sandbox)", median_ms(n, function() rs$run(f)), n)
  rs$close()
} else {
  row("callr::r_session", NA_real_, 0L, "skipped: callr is not installed")
}

cat(sprintf("# R client, %s, %d CPUs, load %s\n", paste(Sys.info()[c("sysname", "release")], collapse = " "),
            parallel::detectCores(), paste(readLines("/proc/loadavg"), collapse = "")))
cat("| measurement | median | runs | notes |\n|---|---|---|---|\n")
cat(unlist(rows), sep = "\n")
