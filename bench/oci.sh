#!/bin/sh
# securer-runc next to runc (and crun where it runs): `podman run --rm` of
# /bin/true through each runtime, and `RUNTIME run` on one bundle, side by
# side in one hyperfine run each (results: docs/benchmarks.md, "OCI
# runtime").  Needs root, podman, runc, busybox-static and hyperfine.
set -eu
: "${SECURER_BUILDDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
RUNC_BIN=${SECURER_RUNC_BIN:-$SECURER_BUILDDIR/securer-runc}
. "$SECURER_BUILDDIR/tests/oci/lib.sh" 2>/dev/null || . "$(dirname "$0")/../tests/oci/lib.sh"
RUNC=$RUNC_BIN
RUNS=${RUNS:-30}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/securer-oci-bench-XXXXXX")
chmod 755 "$WORK"
P="podman --root $WORK/storage --runroot $WORK/run --storage-driver vfs --cgroup-manager cgroupfs --events-backend none"
# The default cgroupsPath is /securer-runc/ID: its parent is left empty.
trap '$P rm -a -f -t 0 >/dev/null 2>&1; $P rmi -a -f >/dev/null 2>&1; rm -rf "$WORK";
      rmdir /sys/fs/cgroup/*/securer-runc /sys/fs/cgroup/securer-runc 2>/dev/null' EXIT
make_rootfs "$WORK/rootfs"
tar -C "$WORK/rootfs" -cf "$WORK/rootfs.tar" .
$P import -q "$WORK/rootfs.tar" localhost/securer-bench:latest >/dev/null
U="--ulimit nofile=1024:1024 --ulimit nproc=1024:1024"
runtimes="$RUNC runc"
if command -v crun >/dev/null 2>&1 && $P --runtime crun run --rm --network none $U localhost/securer-bench true >/dev/null 2>&1; then
  runtimes="$runtimes crun"
else
  echo "# crun: not installed or refuses this host; left out"
fi
for r in $runtimes; do
  set -- "$@" "$P --runtime $r run --rm --network none $U localhost/securer-bench /bin/true"
done
hyperfine -N --warmup 3 --runs "$RUNS" "$@"

# The runtime alone, on one bundle: create + start + wait + delete.
make_bundle "$WORK/bundle" 'c["process"]["args"] = ["/bin/true"]' 'c["root"]["readonly"] = False'
set --
for r in $runtimes; do
  set -- "$@" "$r --root $WORK/state-$(basename "$r") run --bundle $WORK/bundle bench"
done
hyperfine -N --warmup 3 --runs "$RUNS" "$@"
