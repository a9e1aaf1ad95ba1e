#!/bin/sh
# The R package's round trips next to `securer exec` and bare Rscript
# (bench/r-client.R), with the package of this tree installed into a
# temporary library and the securer of this build.
#
#   SECURER_BIN   the securer binary (default: ./securer)
#   RUNS          warm executions timed (default: 2000; one-shots: RUNS/100)
set -u
here=$(cd "$(dirname "$0")" && pwd)
SECURER_BIN=$(cd "$(dirname "${SECURER_BIN:-./securer}")" && pwd)/$(basename "${SECURER_BIN:-./securer}")
export SECURER_BIN
if ! command -v Rscript >/dev/null 2>&1; then
  echo "skipped: Rscript not found" >&2
  exit 0
fi
lib=$(mktemp -d "${TMPDIR:-/tmp}/securer-bench-rlib-XXXXXX") || exit 1
trap 'rm -rf "$lib"' EXIT
R CMD INSTALL --no-docs --no-multiarch --library="$lib" "$here/../r" >"$lib/install.log" 2>&1 || {
  cat "$lib/install.log" >&2
  exit 1
}
R_LIBS="$lib${R_LIBS:+:$R_LIBS}" Rscript "$here/r-client.R"
