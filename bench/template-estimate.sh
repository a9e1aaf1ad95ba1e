#!/bin/sh
# What a session template would give R, measured with R's own fork
# (parallel:::mcfork) inside one `securer run --policy r` sandbox: the R
# there loads jsonlite (as the session runtime does), then forks 16
# children one after another; each child encodes a value with jsonlite and
# sends it back, and stays idle.  Printed: fork to first result (median,
# max) and the PSS of the children while idle.  This is R's side of the
# budget only: no per-session sandbox is entered (bench/zygote-probe times
# that part).  Results: docs/benchmarks.md, "Sessions from a template".
set -eu
SECURER_BIN=${SECURER_BIN:-securer}
FORKS=${FORKS:-16}
code="n <- ${FORKS}L
invisible(loadNamespace('jsonlite')); invisible(jsonlite::toJSON(list(a = 1)))
ms <- numeric(n); kids <- list()
for (i in seq_len(n)) {
  t0 <- proc.time()[['elapsed']]
  p <- parallel:::mcfork()
  if (inherits(p, 'masterProcess')) {
    parallel:::sendMaster(as.character(jsonlite::toJSON(list(x = 1 + 1))))
    Sys.sleep(60); parallel:::mcexit(0L)
  }
  r <- parallel:::readChild(p)
  ms[i] <- (proc.time()[['elapsed']] - t0) * 1000
  kids[[i]] <- p
}
cat(sprintf('fork to first result: median %.1f ms, max %.1f ms (%d forks)\n', median(ms), max(ms), n))
Sys.sleep(60)"
"$SECURER_BIN" run --policy r -- /usr/lib/R/bin/exec/R --vanilla --no-echo -e "$code" &
run=$!
desc() { for c in $(ps -o pid= --ppid "$1"); do echo "$c"; desc "$c"; done; }
# Wait until every child is idle (all R processes present and the parent printed).
i=0
while [ "$(desc $run | while read -r p; do [ "$(cat /proc/$p/comm 2>/dev/null)" = R ] && echo "$p"; done | wc -l)" -lt $((FORKS + 1)) ] && [ $i -lt 600 ]; do
  sleep 0.1; i=$((i + 1))
done
sleep 2
desc $run | while read -r p; do
  [ "$(cat /proc/"$p"/comm 2>/dev/null)" = R ] && awk '/^Pss:/ {print $2}' /proc/"$p"/smaps_rollup
done | sort -n | awk '{a[NR] = $1} END {printf "PSS of the %d R processes (template and children): min %.1f MB, median %.1f MB, max %.1f MB (the max is the template)\n", NR, a[1] / 1024, a[int((NR + 1) / 2)] / 1024, a[NR] / 1024}'
kill "$run" 2>/dev/null || true
wait "$run" 2>/dev/null || true
