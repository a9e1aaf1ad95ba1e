#!/bin/sh
# The OCI runtime conformance suite (opencontainers/runtime-tools'
# validation programs) run against securer-runc and runc side by side, in
# one go.  What must hold (docs/oci.md, "Conformance"): every program runc
# passes fully, securer-runc passes fully too, but for the ones where
# securer-runc is deliberately stricter (EXCEPT below, each with its
# reason), and securer-runc passes at least as many checks in all.
#
# The suite's source is not part of the project: it is used from
# ../shared/oci-runtime-tools/ (OCI_RUNTIME_TOOLS=DIR elsewhere) and built
# there, offline, with Debian's Go; without either the suite is skipped.
set -u
. "$(dirname "$0")/lib.sh"
skip_unless_ready
src=${SECURER_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tools=${OCI_RUNTIME_TOOLS:-$src/../shared/oci-runtime-tools}
tarball=$(ls "$tools"/runtime-tools-*.tar.gz 2>/dev/null | head -1)
if [ -z "$tarball" ]; then
  echo "SKIP: the OCI validation suite's source is not at $tools (OCI_RUNTIME_TOOLS=DIR)"
  exit 77
fi
command -v go >/dev/null 2>&1 || { echo "SKIP: go not found (Debian: golang-go)"; exit 77; }
REF=${REFERENCE_RUNC:-$(command -v runc || echo /usr/sbin/runc)}
[ -x "$REF" ] || { echo "SKIP: no runc to compare with (Debian: runc)"; exit 77; }
under_subreaper sh "$0" "$@"

# Programs where securer-runc is stricter than runc on purpose; each must
# be named in docs/oci.md with the same reason.
EXCEPT="process_capabilities_fail linux_ns_itype pidfile"
# process_capabilities_fail: CAP_TEST in bounding is refused (what the
#   program asks for); runc warns, runs the container, and fails it.
# linux_ns_itype: no mount namespace in the spec would change the
#   runtime's own mount namespace; refused.
# pidfile: kills a container whose process may already have exited; a
#   kill of a stopped container is an error (as the kill program needs).

build=${SECURER_BUILDDIR}/tests/oci/runtime-tools
stamp=$build/.built-$(basename "$tarball" .tar.gz)
if [ ! -e "$stamp" ]; then
  rm -rf "$build" && mkdir -p "$build"
  tar -xzf "$tarball" -C "$build" || exit 99
  (cd "$build/runtime-tools" && GOFLAGS=-mod=vendor GOCACHE="$build/.gocache" GOPATH="$build/go" \
     make runtimetest validation-executables >"$build/build.log" 2>&1) \
    || { echo "Bail out! the validation suite did not build (see $build/build.log)"; exit 99; }
  touch "$stamp"
fi
cd "$build/runtime-tools" || exit 99
out=$(mktemp -d "${TMPDIR:-/tmp}/securer-validation-XXXXXX") || exit 99
trap 'rm -rf "$out"' EXIT

# run NAME RUNTIME: every program, its TAP kept.  A program with a failed
# check runs once more, for both runtimes alike, and the second run counts:
# some of the suite's programs race the container (killsig signals a shell
# that may not have set its trap yet), and a busy machine loses such races
# whichever runtime it drives.
run_all () {
  mkdir -p "$out/$1"
  for t in validation/*/*.t; do
    tap=$out/$1/$(basename "$t" .t).tap
    RUNTIME=$2 timeout 120 "$t" >"$tap" 2>&1 </dev/null
    if grep -q '^not ok ' "$tap"; then
      RUNTIME=$2 timeout 120 "$t" >"$tap.again" 2>&1 </dev/null
      mv "$tap.again" "$tap"
    fi
  done
}
t0=$(date +%s)
run_all securer "$RUNC"
t1=$(date +%s)
run_all runc "$REF"
t2=$(date +%s)

# count DIR PROG: "passed failed" of one program.
count () {
  p=$(grep -c '^ok ' "$out/$1/$2.tap")
  f=$(grep -c '^not ok ' "$out/$1/$2.tap")
  echo "$p $f"
}
total_s=0 total_r=0 full_s=0 full_r=0 except_s=0 except_r=0
echo "# program: securer-runc passed/failed, runc passed/failed"
for f in "$out"/runc/*.tap; do
  prog=$(basename "$f" .tap)
  set -- $(count securer "$prog") $(count runc "$prog")
  sp=$1 sf=$2 rp=$3 rf=$4
  total_s=$((total_s + sp)) total_r=$((total_r + rp))
  s_full=false r_full=false
  [ "$sp" -gt 0 ] && [ "$sf" = 0 ] && s_full=true && full_s=$((full_s + 1))
  [ "$rp" -gt 0 ] && [ "$rf" = 0 ] && r_full=true && full_r=$((full_r + 1))
  echo "#   $prog: $sp/$sf, $rp/$rf"
  case " $EXCEPT " in *" $prog "*) except_s=$((except_s + sp)) except_r=$((except_r + rp)) ;; esac
  if $r_full && ! $s_full; then
    case " $EXCEPT " in
      *" $prog "*) ok "$prog: stricter than runc on purpose (docs/oci.md)" ;;
      *) not_ok "$prog: runc passes every check, securer-runc $sp passed, $sf failed"
         grep '^not ok' "$out/securer/$prog.tap" | head -5 | sed 's/^/#     /' ;;
    esac
  elif $r_full; then
    ok "$prog: passes fully, as under runc"
  fi
done
echo "# securer-runc: $total_s checks passed, $full_s programs fully, $((t1 - t0)) s"
echo "# runc:         $total_r checks passed, $full_r programs fully, $((t2 - t1)) s"
# The checks of the programs securer-runc refuses on purpose are checks
# runc collects by running a container the spec says to refuse
# (process_capabilities_fail's 307 are the runtimetest's, inside a
# container that must not exist): compared without them, and both totals
# said.
if [ $((total_s - except_s)) -ge $((total_r - except_r)) ]; then
  ok "securer-runc passes at least as many checks as runc outside the programs it refuses on purpose ($((total_s - except_s)) >= $((total_r - except_r)); in all $total_s and $total_r)"
else
  not_ok "securer-runc passes fewer checks than runc ($((total_s - except_s)) < $((total_r - except_r)) outside the programs it refuses on purpose)"
fi
echo "$fails failure(s)"
[ "$fails" = 0 ]
