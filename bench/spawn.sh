#!/bin/sh
# Spawn latency of `securer run` side by side with bubblewrap, unshare(1)
# and the bare command, in one run on one machine; then R start-up in and
# out of the sandbox.  Uses hyperfine when installed, else a timing loop.
#
#   SECURER_BIN   the securer binary (default: ./securer)
#   BASELINE_BIN  another securer binary (e.g. a build of an earlier commit)
#                 to time next to it, for a before/after in the same run
#   RUNS          runs per command (default: 200; R: RUNS/4)
set -u
here=$(cd "$(dirname "$0")" && pwd)
securer=${SECURER_BIN:-./securer}
runs=${RUNS:-200}
rruns=$((runs / 4))
R=/usr/lib/R/bin/exec/R

bwrap_cmd="bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin --proc /proc --dev /dev --tmpfs /tmp /bin/true"

# name|command — the commands are run without a shell.
set -- \
  "securer minimal|$securer run --policy minimal -- /bin/true" \
  "securer bwrap-equivalent|$securer run --policy $here/bwrap-equivalent.policy -- /bin/true" \
  "securer bwrap-equivalent masked|$securer run --policy $here/bwrap-equivalent-masked.policy -- /bin/true" \
  "securer r (loader --version)|$securer run --policy r -- /lib64/ld-linux-x86-64.so.2 --version"
if [ -n "${BASELINE_BIN:-}" ]; then
  set -- "$@" \
    "baseline minimal|$BASELINE_BIN run --policy minimal -- /bin/true" \
    "baseline bwrap-equivalent|$BASELINE_BIN run --policy $here/bwrap-equivalent.policy -- /bin/true" \
    "baseline bwrap-equivalent masked|$BASELINE_BIN run --policy $here/bwrap-equivalent-masked.policy -- /bin/true"
fi
command -v bwrap >/dev/null 2>&1 && set -- "$@" "bwrap|$bwrap_cmd"
command -v unshare >/dev/null 2>&1 && set -- "$@" "unshare -Urpfmn|unshare -Urpfmn --mount-proc /bin/true"
set -- "$@" "bare /bin/true|/bin/true"

echo "# spawn latency, $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
# A command that fails here (a baseline build older than a policy line) is
# left out, and said so.
for c in "$@"; do
  cmd=${c#*|}
  if $cmd >/dev/null 2>&1; then
    set -- "$@" "$c"
  else
    echo "skipped (fails here): ${c%%|*}: $cmd" >&2
  fi
  shift
done

if command -v hyperfine >/dev/null 2>&1; then
  for c in "$@"; do
    set -- "$@" -n "${c%%|*}" "${c#*|}"
    shift
  done
  hyperfine -N --warmup 20 --runs "$runs" --style basic "$@" 2>&1 | grep -v '^ *Range'
  if [ -x "$R" ]; then
    echo
    echo "# R start-up (R -e 1), in and out of the sandbox"
    hyperfine -N --warmup 3 --runs "$rruns" --style basic \
      -n "securer r: R -e 1" "$securer run --policy r -- $R --vanilla --slave -e 1" \
      -n "bare: R -e 1" "env R_HOME=/usr/lib/R $R --vanilla --slave -e 1" 2>&1 | grep -v '^ *Range'
  fi
  exit 0
fi

# Fallback: mean wall time over a loop, in microseconds.
loop () {
  n=$1; shift
  start=$(date +%s%N)
  i=0
  while [ $i -lt "$n" ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done
  end=$(date +%s%N)
  echo $(((end - start) / n / 1000))
}
for c in "$@"; do
  printf '%-32s %8s us\n' "${c%%|*}" "$(loop "$runs" ${c#*|})"
done
if [ -x "$R" ]; then
  printf '%-32s %8s us\n' "securer r: R -e 1" "$(loop "$rruns" $securer run --policy r -- $R --vanilla --slave -e 1)"
  printf '%-32s %8s us\n' "bare: R -e 1" "$(loop "$rruns" env R_HOME=/usr/lib/R $R --vanilla --slave -e 1)"
fi
