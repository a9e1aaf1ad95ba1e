#!/bin/sh
# make check-sanitizers: each fault of tests/sanitizers/canary must be
# stopped by its sanitizer with a report; a build whose instrumentation is
# not live fails here, before its test suite can pass for the wrong reason.
set -u
canary=${1:?usage: canary.sh PATH-TO-CANARY}
fails=0
expect () {
  mode=$1
  report=$2
  out=$("$canary" "$mode" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -q "$report"; then
    echo "ok - canary $mode: stopped with \"$report\" (exit $rc)"
  else
    echo "not ok - canary $mode: exit $rc, no \"$report\" report:"
    printf '%s\n' "$out" | sed 's/^/#   /'
    fails=$((fails + 1))
  fi
}
expect heap "ERROR: AddressSanitizer: heap-buffer-overflow"
expect leak "ERROR: LeakSanitizer: detected memory leaks"
expect ubsan "runtime error: signed integer overflow"
[ "$fails" -eq 0 ]
