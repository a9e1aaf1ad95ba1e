#!/bin/sh
# The R package (r/) against the securer of this build: installed into a
# temporary library, then its testthat suite runs real sessions.  Skipped
# (77) with the reason when R or a package it needs is missing.
set -u
srcdir=${SECURER_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
: "${SECURER_BIN:=$PWD/securer}"
export SECURER_BIN
if ! command -v Rscript >/dev/null 2>&1; then
  echo "SKIP: Rscript not found"
  exit 77
fi
missing=$(Rscript -e 'p <- c("R6", "processx", "jsonlite", "testthat"); cat(p[!vapply(p, requireNamespace, logical(1), quietly = TRUE)])')
if [ -n "$missing" ]; then
  echo "SKIP: R packages missing: $missing (Debian: r-cran-r6 r-cran-processx r-cran-jsonlite r-cran-testthat)"
  exit 77
fi
lib=$(mktemp -d "${TMPDIR:-/tmp}/securer-rlib-XXXXXX") || exit 99
trap 'rm -rf "$lib"' EXIT
R CMD INSTALL --no-docs --no-multiarch --library="$lib" "$srcdir/r" >"$lib/install.log" 2>&1 || {
  cat "$lib/install.log"
  exit 1
}
cd "$srcdir/r/tests/testthat" || exit 99
R_LIBS="$lib${R_LIBS:+:$R_LIBS}" Rscript -e '
library(securer)
r <- testthat::test_dir(".", reporter = "summary", stop_on_failure = FALSE)
d <- as.data.frame(r)
quit(status = if (any(d$failed > 0 | d$error)) 1 else 0)'
