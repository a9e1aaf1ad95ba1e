#!/bin/sh
# The Windows port run for real: securer-winrun.exe and winprobe.exe
# (cross-built with mingw-w64) under Wine, a child process under the Job
# Object checked from outside.  What Wine does not implement is reported as
# unverified, never passed: see docs/ports.md for the list.
#
# Exit 0 when every check passed, 1 otherwise, 77 (skipped) without Wine or
# mingw-w64.
set -u
b=${SECURER_BUILDDIR:-.}
wine=${WINE64:-}
run=$b/windows/securer-winrun.exe
probe=$b/tests/windows/winprobe.exe
if [ -z "$wine" ] || [ ! -x "$wine" ]; then
  echo "SKIP: wine64 not found at configure time (apt-get install wine64)"
  exit 77
fi
if [ ! -f "$run" ] || [ ! -f "$probe" ]; then
  echo "SKIP: the Windows programs were not built (apt-get install gcc-mingw-w64-x86-64, then ./configure)"
  exit 77
fi

work=$(mktemp -d /tmp/securer-wine-XXXXXX)
export WINEPREFIX="$work/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
wineserver=$(dirname "$wine")/wineserver
[ -x "$wineserver" ] || wineserver=wineserver
cleanup () {
  "$wineserver" -k >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Wine sees the host's root as drive Z:.
winpath () {
  printf 'Z:%s' "$1" | tr / '\\'
}
P=$(winpath "$(cd "$(dirname "$probe")" && pwd)/$(basename "$probe")")

pass=0
fail=0
unverified=0
ok () { pass=$((pass + 1)); echo "ok - $1"; }
bad () { fail=$((fail + 1)); echo "not ok - $1"; }
check () {
  name=$1
  shift
  if "$@"; then ok "$name"; else bad "$name"; fi
}
# Runs securer-winrun with ARGS; stdout in $work/out, stderr in $work/err, status in $rc.
winrun () {
  "$wine" "$run" "$@" >"$work/out" 2>"$work/err"
  rc=$?
}
has () { grep -qs -- "$1" "$work/$2"; }

# The prefix is made on first use (several seconds): not part of a check.
"$wine" "$probe" exit 0 >/dev/null 2>&1

# No AppContainer under Wine: refused by default, with the reason.
winrun -- "$P" exit 0
check "refused without AppContainer (125)" test "$rc" = 125
check "the refusal names the missing AppContainer" has "no AppContainer under Wine" err
check "nothing ran when refused" test ! -s "$work/out"

W="--accept-weaker"
winrun $W -- "$P" exit 7
check "exit code passes through (7)" test "$rc" = 7
check "the report says what is not enforced" has "required: filesystem" err

winrun $W -- "$P" echo hello-out
check "stdout passes through" has "^hello-out" out
winrun $W -- "$P" err hello-err
check "stderr passes through" has "hello-err" err

FOO_KEPT=kept SECURER_WINE_SECRET=secret winrun $W --keep FOO_KEPT -- "$P" env
check "a kept variable is in the environment" has "^FOO_KEPT=kept" out
check "any other variable of the caller is not" eval '! has SECURER_WINE_SECRET out'
check "TEMP points at the private directory" has 'TEMP=.*securer-' out

# The wall-clock timeout ends the whole job: the grandchild never writes.
# The timeout leaves Wine time to start both processes on a loaded machine;
# the grandchild writes 3 s after it, long after the job is gone.
rm -f "$work/late1"
winrun $W --timeout-ms 5000 -- "$P" grandchild "$(winpath "$work/late1")" 8000
check "timeout gives 124" test "$rc" = 124
check "the grandchild had started before the timeout" has "grandchild=started" out
sleep 5
check "the timeout killed the grandchild too" test ! -e "$work/late1"

# Control: without the launcher, the same grandchild does write.
rm -f "$work/late0"
"$wine" "$probe" touch-later "$(winpath "$work/late0")" 300 >/dev/null 2>&1
check "control: touch-later writes its file" test -e "$work/late0"

# Kill-on-job-close: SIGKILL the launcher; what it started dies with the job.
# The old $work/out (the timeout check's, which has "grandchild=started")
# must be gone before the background launcher's shell gets to truncate it.
rm -f "$work/late2" "$work/out"
"$wine" "$run" $W -- "$P" grandchild "$(winpath "$work/late2")" 4000 >"$work/out" 2>"$work/err2" &
launcher=$!
i=0
while [ $i -lt 600 ] && ! has "grandchild=started" out; do sleep 0.1; i=$((i + 1)); done
check "the grandchild started" has "grandchild=started" out
if ! has "grandchild=started" out; then
  echo "# waited ${i}00 ms; the launcher's stdout and stderr:"
  sed 's/^/#   /' "$work/out" "$work/err2"
fi
kill -9 "$launcher" 2>/dev/null
wait "$launcher" 2>/dev/null
sleep 5
check "killing the launcher killed the job (kill on job close)" test ! -e "$work/late2"

# Limits Wine accepts but does not enforce: reported, not passed.
winrun $W --nproc 1 -- "$P" spawn
if has "spawn=error" out; then ok "active process limit refuses a second process"
else unverified=$((unverified + 1)); echo "# unverified under Wine: active process limit (a second process started)"; fi
winrun $W --memory 67108864 -- "$P" alloc 256
if has "alloc=error" out; then ok "process memory limit refuses 256 MiB under a 64 MiB cap"
else unverified=$((unverified + 1)); echo "# unverified under Wine: process memory limit (256 MiB committed under a 64 MiB cap)"; fi

echo "# $unverified behaviours unverified under Wine (see docs/ports.md)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
