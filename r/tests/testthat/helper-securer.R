skip_if_no_securer <- function() {
  if (!nzchar(securer_binary())) skip("the securer binary is not installed (set SECURER_BIN to use one)")
}

add_tool <- function() {
  securer_tool("add", "Add two numbers", fn = function(a, b) a + b, args = list(a = "numeric", b = "numeric"))
}

# Only this R's own serve processes: other programs (tests running in
# parallel, other users) may run `securer serve` at the same time.
serve_pids <- function() {
  pids <- processx::run("pgrep", c("-P", Sys.getpid(), "-f", "securer serve"),
                        error_on_status = FALSE)$stdout
  as.integer(strsplit(trimws(pids), "\n")[[1]])
}

# A value decoded from its JSON text, as the package decodes replies.
dec <- function(s, ...) securer:::decode_value(jsonlite::parse_json(s, simplifyVector = FALSE), ...)
