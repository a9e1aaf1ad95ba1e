#!/bin/sh
# Prints how many tests `make check` skipped, and each reason, from the
# logs of the suites (LOG...): Criterion's "[SKIP] suite::test: reason"
# lines (the suites run with CRITERION_VERBOSITY_LEVEL=1, which prints
# them), "SKIP: reason" lines of the shell suites, and testthat's
# "N. test ... - Reason: reason" lines.  A suite that exited 77 without a
# reason is listed too.  Informational only: it always exits 0, so that it
# never fails the build.
total=0
for log in "$@"; do
  [ -f "$log" ] || continue
  n=$(grep -c -E '^\[SKIP\] |^SKIP: |^[0-9]+\. .* - Reason: ' "$log")
  trs=${log%.log}.trs
  if [ "$n" = 0 ] && [ -f "$trs" ] && grep -q '^:test-result: SKIP' "$trs"; then
    echo "  ${log%.log}: skipped, and gave no reason"
    n=1
  fi
  if [ "$n" -gt 0 ]; then
    grep -E '^\[SKIP\] |^SKIP: |^[0-9]+\. .* - Reason: ' "$log" | sed "s|^|  ${log%.log}: |"
    total=$((total + n))
  fi
done
echo "Skipped: $total test(s) in all (reasons above)"
exit 0
