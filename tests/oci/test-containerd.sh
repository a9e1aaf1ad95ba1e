#!/bin/sh
# containerd (Debian's 1.6) with securer-runc as the runc binary of its
# io.containerd.runc.v2 shim, driven with ctr.  The containerd is the
# suite's own: its root, state, socket and config under a temporary
# directory, run in a private mount namespace with a tmpfs on /run (the
# shims' sockets and the runtime's --root are under /run/containerd
# whatever the config says), so nothing of it reaches the host's /run or
# mount table; it and its shims are killed on exit.  The image is built
# here from busybox-static (there is no registry).  Its CRI plugin has
# securer-runc as the runtime handler "securer" (BinaryName), which cri.py
# drives as the kubelet would.  Skipped with the reason when containerd or
# ctr is missing; the CRI part when grpc or protobuf for python is.
set -u
. "$(dirname "$0")/lib.sh"
skip_unless_ready
for tool in containerd ctr containerd-shim-runc-v2; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "SKIP: $tool not found (Debian: containerd)"
    exit 77
  fi
done
if ! command -v unshare >/dev/null 2>&1; then
  echo "SKIP: unshare not found (Debian: util-linux)"
  exit 77
fi
# The private mount namespace, entered once: what containerd and its shims
# mount (snapshots, rootfs, the tmpfs on /run) dies with it.
if [ -z "${SECURER_TEST_MNTNS:-}" ]; then
  SECURER_TEST_MNTNS=1 exec unshare --mount --propagation private sh "$0" "$@"
fi
under_subreaper sh "$0" "$@"
mount -t tmpfs -o mode=755 tmpfs /run || { echo "SKIP: cannot mount a tmpfs on /run"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/securer-ctrd-test-XXXXXX") || exit 99
chmod 755 "$WORK"
SOCK=$WORK/containerd.sock
# Also the first level of the containers' cgroups: its own per run.
NS=securer-ctrd-test-$$
CTRD_PID=
started=$(date +%s)
C () { ctr --address "$SOCK" --namespace "$NS" "$@"; }
cleanup () {
  if [ -n "$CTRD_PID" ]; then
    for t in $(C task ls -q 2>/dev/null); do C task kill -s KILL "$t" >/dev/null 2>&1; done
    sleep 0.2
    for t in $(C task ls -q 2>/dev/null); do C task rm -f "$t" >/dev/null 2>&1; done
    for c in $(C container ls -q 2>/dev/null); do C container rm "$c" >/dev/null 2>&1; done
    for t in $(ctr --address "$SOCK" -n k8s.io task ls -q 2>/dev/null); do
      ctr --address "$SOCK" -n k8s.io task rm -f "$t" >/dev/null 2>&1
    done
    kill "$CTRD_PID" 2>/dev/null
    wait "$CTRD_PID" 2>/dev/null
  fi
  # Shims left behind (their command line names this suite's socket).
  for p in $(pgrep -f -- "-address $SOCK" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  for r in "/run/containerd/runc/$NS" /run/containerd/runc/k8s.io; do
    for id in $("$RUNC" --root "$r" list -q 2>/dev/null); do
      "$RUNC" --root "$r" delete --force "$id" >/dev/null 2>&1
    done
  done
  # What a killed shim left mounted (rootfs, a pod's shm), deepest first.
  awk -v w="$WORK/" 'index($5, w) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
    umount -l "$m" 2>/dev/null
  done
  rm -rf "$WORK"
  for d in /sys/fs/cgroup/*/$NS /sys/fs/cgroup/$NS /sys/fs/cgroup/*/securer-cri-test-$$ \
    /sys/fs/cgroup/securer-cri-test-$$; do
    [ -d "$d" ] && rmdir "$d"/*/* "$d"/* "$d" 2>/dev/null
  done
  return 0
}
trap cleanup EXIT

IMG=localhost/securer-bb:test
# ---- the image: an OCI image layout of a busybox rootfs ----------------
make_rootfs "$WORK/rootfs"
python3 - "$WORK" <<'PY' || exit 99
import hashlib, io, json, os, sys, tarfile
work = sys.argv[1]
lay = os.path.join(work, "layout")
blobs = os.path.join(lay, "blobs", "sha256")
os.makedirs(blobs)
def blob(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, d), "wb").write(data)
    return "sha256:" + d, len(data)
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
    root = os.path.join(work, "rootfs")
    for name in sorted(os.listdir(root)):
        t.add(os.path.join(root, name), arcname=name)
layer, layer_size = blob(buf.getvalue())
config = {"architecture": "amd64", "os": "linux",
          "config": {"Env": ["PATH=/bin"], "Cmd": ["sleep", "2147483647"], "WorkingDir": "/"},
          "rootfs": {"type": "layers", "diff_ids": [layer]}}
cfg, cfg_size = blob(json.dumps(config).encode())
manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cfg, "size": cfg_size},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer, "size": layer_size}]}
man, man_size = blob(json.dumps(manifest).encode())
index = {"schemaVersion": 2, "manifests": [{
    "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": man, "size": man_size,
    "platform": {"architecture": "amd64", "os": "linux"},
    "annotations": {"io.containerd.image.name": "localhost/securer-bb:test",
                    "org.opencontainers.image.ref.name": "test"}}]}
json.dump(index, open(os.path.join(lay, "index.json"), "w"))
json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(lay, "oci-layout"), "w"))
PY
tar -C "$WORK/layout" -cf "$WORK/image.tar" . || exit 99

# ---- the private containerd ---------------------------------------------
cat >"$WORK/config.toml" <<EOF
version = 2
root = "$WORK/root"
state = "$WORK/state"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = "$WORK/debug.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$WORK/opt"
# The CRI plugin as a node would have it, with securer-runc as the runtime
# handler "securer" (what a RuntimeClass names) and runc the default.  The
# pause container is the busybox image's sleep; pods use the node's network,
# so no CNI plugin is needed.
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$IMG"
  disable_apparmor = true
  # Pods' oomScoreAdj no lower than containerd's own: lowering it takes
  # CAP_SYS_RESOURCE, which root may lack (as here, in some VMs), and then
  # the runtime (runc as well) fails to set the pause container's -998.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.securer]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.securer.options]
        BinaryName = "$RUNC"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$WORK/cni/bin"
    conf_dir = "$WORK/cni/conf"
EOF
containerd --config "$WORK/config.toml" >"$WORK/containerd.log" 2>&1 &
CTRD_PID=$!
for _ in $(seq 200); do C version >/dev/null 2>&1 && break; sleep 0.05; done
if ! C version >/dev/null 2>&1; then
  echo "SKIP: the private containerd did not start: $(tail -3 "$WORK/containerd.log")"
  exit 77
fi
if ! C image import "$WORK/image.tar" >"$WORK/import.log" 2>&1; then
  not_ok "ctr image import: $(cat "$WORK/import.log")"
  echo "$fails failure(s)"
  exit 1
fi
# containerd must run this image with runc first, or the host is the problem.
if ! C run --rm "$IMG" probe-runc true >"$WORK/runc.log" 2>&1 </dev/null; then
  echo "SKIP: containerd with runc does not work on this host: $(tail -1 "$WORK/runc.log")"
  exit 77
fi
RUN () { C run --runc-binary "$RUNC" "$@"; }
RROOT=/run/containerd/runc/$NS
BUNDLES=$WORK/state/io.containerd.runtime.v2.task/$NS

# task_pid ID: the container's first process, as containerd reports it.
task_pid () { C task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }'; }
task_status () { C task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $3 }'; }
# leaves_nothing NAME ID: no trace of the container in containerd, the
# runtime's state, the shims, the mount table or any cgroup hierarchy.
leaves_nothing () {
  left=
  C container ls -q | grep -qx "$2" && left="$left container"
  C snapshot ls 2>/dev/null | awk '{ print $1 }' | grep -qx "$2" && left="$left snapshot"
  [ -e "$RROOT/$2" ] && left="$left runtime-state"
  [ -e "$BUNDLES/$2" ] && left="$left bundle"
  grep -q " [^ ]*/$NS/$2[/ ]" /proc/self/mountinfo && left="$left mounts"
  pgrep -f -- "-id $2 -address $SOCK" >/dev/null && left="$left shim"
  for d in /sys/fs/cgroup/*/$NS/$2 /sys/fs/cgroup/$NS/$2; do
    [ -d "$d" ] && left="$left cgroup:$d"
  done
  check "$1: leaves nothing" "" "$left"
}

# ---- ctr run --rm ---------------------------------------------------------
out=$(RUN --rm --seccomp "$IMG" c1 sh -c 'echo pid=$$; grep -E "^(CapEff|Seccomp):" /proc/self/status; exit 3' 2>&1 </dev/null); rc=$?
check "ctr run --rm: exit status passed through" 3 "$rc"
check_contains "ctr run --rm: the container's pid namespace" "pid=1" "$out"
check_contains "ctr run --rm: containerd's seccomp profile loaded" "Seccomp:	2" "$out"
# containerd's default capabilities: CHOWN DAC_OVERRIDE FSETID FOWNER MKNOD
# NET_RAW SETGID SETUID SETFCAP SETPCAP NET_BIND_SERVICE SYS_CHROOT KILL
# AUDIT_WRITE.
check_contains "ctr run --rm: containerd's capability set" "CapEff:	00000000a80425fb" "$out"
leaves_nothing "ctr run --rm" c1
out=$(RUN --rm "$IMG" c1b sh -c 'cat /proc/self/status >/dev/null; test -c /dev/null && echo null-ok; mknod /tmp/mem c 1 1 && head -c1 /tmp/mem; echo st=$?' 2>&1 </dev/null)
check_contains "device rules: the default nodes open" "null-ok" "$out"
check_contains "device rules: a node the spec does not allow cannot be opened" "Operation not permitted" "$out"
leaves_nothing "ctr run --rm (device rules)" c1b
out=$(RUN --rm --privileged "$IMG" c1c sh -c 'test -c /dev/kmsg && echo kmsg-ok; head -c1 /dev/kmsg >/dev/null && echo open-ok' 2>&1 </dev/null); rc=$?
check "ctr run --privileged: a device rule per host device, the container runs" 0 "$rc"
check_contains "ctr run --privileged: host devices open" "open-ok" "$out"
leaves_nothing "ctr run --rm --privileged" c1c

# ---- ctr run -d, task exec, ps, pause, resume, kill, delete --------------
RUN -d "$IMG" c2 sh -c 'trap "exit 9" TERM; while :; do sleep 0.1; done' </dev/null >/dev/null 2>&1
check "ctr run -d: exit status" 0 "$?"
for _ in $(seq 100); do [ "$(task_status c2)" = RUNNING ] && break; sleep 0.05; done
check "ctr run -d: running" RUNNING "$(task_status c2)"
pid=$(task_pid c2)
check "ctr run -d: securer-runc holds the container" running "$("$RUNC" --root "$RROOT" state c2 2>&1 | json_field status)"
out=$(C task exec --exec-id e1 c2 sh -c 'cat /proc/1/cmdline | tr "\0" " "; exit 7' 2>&1 </dev/null); rc=$?
check "ctr task exec: exit status passed through" 7 "$rc"
check_contains "ctr task exec: inside the container" "while :" "$out"
C task exec --exec-id e2 c2 sleep 1000 </dev/null >/dev/null 2>&1 &
execpid=$!
for _ in $(seq 100); do C task ps c2 2>/dev/null | grep -q e2 && break; sleep 0.05; done
out=$(C task ps c2 2>&1)
check_contains "ctr task ps: the container's process" "$pid" "$out"
check_contains "ctr task ps: the exec'd process" "e2" "$out"
C task pause c2
check "ctr task pause: paused" PAUSED "$(task_status c2)"
check "ctr task pause: securer-runc says paused" paused "$("$RUNC" --root "$RROOT" state c2 2>&1 | json_field status)"
f=$(cgroup_file "$pid" freezer freezer.state cgroup.freeze)
case $f in
  */freezer.state) check "ctr task pause: the cgroup is frozen" FROZEN "$(cat "$f")" ;;
  *) check "ctr task pause: the cgroup is frozen" 1 "$(cat "$f")" ;;
esac
C task resume c2
check "ctr task resume: running" RUNNING "$(task_status c2)"
case $f in
  */freezer.state) check "ctr task resume: the cgroup is thawed" THAWED "$(cat "$f")" ;;
  *) check "ctr task resume: the cgroup is thawed" 0 "$(cat "$f")" ;;
esac
C task kill --exec-id e2 -s KILL c2
wait $execpid
check "ctr task kill --exec-id: the exec'd process killed (137)" 137 "$?"
C task kill c2
for _ in $(seq 100); do [ "$(task_status c2)" = STOPPED ] && break; sleep 0.05; done
check "ctr task kill: SIGTERM delivered, the process exits" STOPPED "$(task_status c2)"
out=$(C task delete c2 2>&1)
check "ctr task delete: exit status" 0 "$?"
C container rm c2
check "ctr container rm: exit status" 0 "$?"
leaves_nothing "ctr task delete + container rm" c2
RUN -d "$IMG" c2b sleep 1000 </dev/null >/dev/null 2>&1
C task delete --force c2b >/dev/null 2>&1
check "ctr task delete --force: a running task" 0 "$?"
C container rm c2b
leaves_nothing "ctr task delete --force" c2b

# ---- --tty ----------------------------------------------------------------
if command -v script >/dev/null 2>&1; then
  out=$(script -qec "ctr --address $SOCK --namespace $NS run --runc-binary $RUNC --rm -t $IMG c3 sh -c 'test -t 0 && test -t 1 && echo tty-ok; exit 4'" /dev/null </dev/null 2>&1); rc=$?
  check "ctr run --tty: exit status" 4 "$rc"
  check_contains "ctr run --tty: stdin and stdout are a terminal" "tty-ok" "$out"
  # ctr asks for a terminal on its stdin even to detach.
  script -qec "ctr --address $SOCK --namespace $NS run --runc-binary $RUNC -d -t $IMG c3b sleep 1000" /dev/null </dev/null >/dev/null 2>&1
  check "ctr run -d --tty: exit status" 0 "$?"
  out=$(script -qec "ctr --address $SOCK --namespace $NS task exec -t --exec-id t1 c3b sh -c 'test -t 0 && echo exec-tty-ok; exit 6'" /dev/null </dev/null 2>&1); rc=$?
  check "ctr task exec --tty: exit status" 6 "$rc"
  check_contains "ctr task exec --tty: a terminal" "exec-tty-ok" "$out"
  C task delete --force c3b >/dev/null 2>&1
  C container rm c3b
  leaves_nothing "ctr run -d --tty" c3b
else
  echo "SKIP: ctr run --tty: script(1) not found (Debian: bsdutils)"
fi

# ---- --memory-limit, and the OOM event ------------------------------------
C events >"$WORK/events.log" 2>&1 &
eventspid=$!
RUN -d --memory-limit 33554432 "$IMG" c4 sleep 1000 </dev/null >/dev/null 2>&1
check "ctr run --memory-limit: exit status" 0 "$?"
pid=$(task_pid c4)
f=$(cgroup_file "$pid" memory memory.limit_in_bytes memory.max)
check "ctr run --memory-limit: the cgroup's limit" 33554432 "$(cat "$f" 2>&1)"
out=$(C task exec --exec-id small c4 dd if=/dev/zero of=/dev/null bs=8M count=1 2>&1 </dev/null); rc=$?
check "ctr run --memory-limit: 8 MiB can be allocated" 0 "$rc"
C task exec --exec-id big c4 dd if=/dev/zero of=/dev/null bs=64M count=1 </dev/null >/dev/null 2>&1
check "ctr run --memory-limit: 64 MiB cannot (killed, 137)" 137 "$?"
for _ in $(seq 100); do grep -q '/tasks/oom' "$WORK/events.log" && break; sleep 0.05; done
check_contains "ctr events: the OOM event of the container" '"container_id":"c4"' "$(grep /tasks/oom "$WORK/events.log")"
C task delete --force c4 >/dev/null 2>&1
C container rm c4
leaves_nothing "ctr run --memory-limit" c4
kill $eventspid
wait $eventspid 2>/dev/null

# ---- the CRI plugin, runtime handler "securer" (BinaryName) --------------
# Driven as the kubelet drives it: a pod sandbox, a container with a
# device, exec, stop, remove.
CRI_PY=${CRI_PYTHON:-/usr/bin/python3}
CRI () { CONTAINERD_BIN=$(command -v containerd) "$CRI_PY" "$(dirname "$0")/cri.py" "$SOCK" "$@"; }
# jget EXPR: a value of the JSON reply on stdin, `r` being the reply.
jget () { python3 -c 'import json, sys; r = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
CRI Version >"$WORK/cri.out" 2>&1; rc=$?
if [ "$rc" = 77 ]; then
  echo "$(cat "$WORK/cri.out")"
elif [ "$rc" != 0 ]; then
  not_ok "CRI Version: $(cat "$WORK/cri.out")"
else
  check "CRI Version: containerd's CRI plugin answers" containerd "$(jget 'r["runtime_name"]' <"$WORK/cri.out")"
  KROOT=/run/containerd/runc/k8s.io
  CG=securer-cri-test-$$
  ctr --address "$SOCK" --namespace k8s.io image import "$WORK/image.tar" >/dev/null 2>&1
  for _ in $(seq 100); do
    CRI ImageStatus "{\"image\": {\"image\": \"$IMG\"}}" 2>/dev/null | grep -q '"id"' && break
    sleep 0.1
  done
  # No hostname: the kubelet gives none to a pod on the node's network (it
  # has the node's uts namespace).
  pod='{"metadata": {"name": "p1", "uid": "u-p1", "namespace": "securer-test", "attempt": 0},
        "log_directory": "'$WORK'/podlogs",
        "linux": {"cgroup_parent": "/'$CG'/p1",
                  "security_context": {"namespace_options": {"network": "NODE"}}}}'
  mkdir -p "$WORK/podlogs"
  out=$(CRI RunPodSandbox "{\"config\": $pod, \"runtime_handler\": \"securer\"}" 2>&1); rc=$?
  check "CRI RunPodSandbox (runtime_handler securer): succeeds" 0 "$rc"
  [ "$rc" = 0 ] || echo "# $out"
  podid=$(echo "$out" | jget 'r["pod_sandbox_id"]' 2>/dev/null)
  check "CRI RunPodSandbox: securer-runc runs the pause container" running \
    "$("$RUNC" --root "$KROOT" state "$podid" 2>&1 | json_field status)"
  ctr='{"metadata": {"name": "c1", "attempt": 0}, "image": {"image": "'$IMG'"},
        "command": ["sh", "-c", "trap \"exit 0\" TERM; while :; do sleep 0.1; done"],
        "log_path": "c1.log",
        "devices": [{"container_path": "/dev/xnull", "host_path": "/dev/null", "permissions": "rw"}],
        "linux": {"security_context": {"seccomp": {"profile_type": "RuntimeDefault"},
                                       "namespace_options": {"network": "NODE"}},
                  "resources": {"memory_limit_in_bytes": 67108864, "cpu_shares": 256}}}'
  out=$(CRI CreateContainer "{\"pod_sandbox_id\": \"$podid\", \"config\": $ctr, \"sandbox_config\": $pod}" 2>&1); rc=$?
  check "CRI CreateContainer: with a device" 0 "$rc"
  [ "$rc" = 0 ] || echo "# $out"
  cid=$(echo "$out" | jget 'r["container_id"]' 2>/dev/null)
  CRI StartContainer "{\"container_id\": \"$cid\"}" >"$WORK/cri.out" 2>&1
  check "CRI StartContainer: succeeds" 0 "$?"
  check "CRI StartContainer: securer-runc runs the container" running \
    "$("$RUNC" --root "$KROOT" state "$cid" 2>&1 | json_field status)"
  out=$(CRI ContainerStatus "{\"container_id\": \"$cid\"}" 2>&1)
  check "CRI ContainerStatus: running" CONTAINER_RUNNING "$(echo "$out" | jget 'r["status"]["state"]' 2>&1)"
  ex () {
    CRI ExecSync "{\"container_id\": \"$cid\", \"cmd\": [\"sh\", \"-c\", $(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1")], \"timeout\": 30}"
  }
  out=$(ex 'stat -c %t:%T /dev/xnull; echo x >/dev/xnull && echo dev-write-ok; grep Seccomp: /proc/self/status; exit 3' 2>&1)
  check "CRI ExecSync: exit status" 3 "$(echo "$out" | jget 'r["exit_code"]' 2>&1)"
  res=$(echo "$out" | jget '__import__("base64").b64decode(r["stdout"]).decode()' 2>&1)
  check_contains "CRI device: the host's /dev/null as /dev/xnull (1:3)" "1:3" "$res"
  check_contains "CRI device: writable as its permissions say" "dev-write-ok" "$res"
  check_contains "CRI RuntimeDefault seccomp: loaded" "Seccomp:	2" "$res"
  out=$(ex 'mknod /tmp/mem c 1 1 && head -c1 /tmp/mem' 2>&1)
  check_contains "CRI device rules: a device not given cannot be opened" "Operation not permitted" \
    "$(echo "$out" | jget '__import__("base64").b64decode(r["stderr"]).decode()' 2>&1)"
  pid=$("$RUNC" --root "$KROOT" state "$cid" 2>/dev/null | json_field pid)
  f=$(cgroup_file "$pid" memory memory.limit_in_bytes memory.max)
  check "CRI resources: the memory limit in the container's cgroup" 67108864 "$(cat "$f" 2>&1)"
  check_contains "CRI cgroup_parent: the container's cgroup is under the pod's" "/$CG/p1/" "$f"
  # The kubelet's stats come from the cgroup containerd finds by the pid.
  out=$(CRI ContainerStats "{\"container_id\": \"$cid\"}" 2>&1)
  check "CRI ContainerStats: the memory in use, from the container's cgroup" yes \
    "$(echo "$out" | jget '"yes" if int(r["stats"]["memory"]["working_set_bytes"]["value"]) > 0 else r' 2>&1)"
  # In-place resize, as the kubelet asks for it: containerd's shim runs
  # `update --resources -` with the container's new linux.resources.
  CRI UpdateContainerResources "{\"container_id\": \"$cid\", \"linux\": {\"memory_limit_in_bytes\": 100663296,
    \"cpu_shares\": 512, \"cpu_quota\": 50000, \"cpu_period\": 100000}}" >"$WORK/cri.out" 2>&1; rc=$?
  check "CRI UpdateContainerResources: succeeds" 0 "$rc"
  [ "$rc" = 0 ] || echo "# $(cat "$WORK/cri.out")"
  check "CRI UpdateContainerResources: the new memory limit" 100663296 "$(cat "$f" 2>&1)"
  qf=$(cgroup_file "$pid" cpu cpu.cfs_quota_us cpu.max)
  case $qf in
    */cpu.max) check "CRI UpdateContainerResources: the CPU quota" "50000 100000" "$(cat "$qf" 2>&1)" ;;
    *) check "CRI UpdateContainerResources: the CPU quota" 50000 "$(cat "$qf" 2>&1)"
      check "CRI UpdateContainerResources: the CPU shares" 512 "$(cat "$(cgroup_file "$pid" cpu cpu.shares cpu.weight)" 2>&1)" ;;
  esac
  out=$(ex 'dd if=/dev/zero of=/dev/null bs=80M count=1 && echo alloc-ok' 2>&1)
  check_contains "CRI UpdateContainerResources: 80 MiB fits the raised limit" "alloc-ok" \
    "$(echo "$out" | jget '__import__("base64").b64decode(r["stdout"]).decode()' 2>&1)"
  CRI StopContainer "{\"container_id\": \"$cid\", \"timeout\": 10}" >"$WORK/cri.out" 2>&1
  check "CRI StopContainer: succeeds" 0 "$?"
  out=$(CRI ContainerStatus "{\"container_id\": \"$cid\"}" 2>&1)
  check "CRI StopContainer: exited" CONTAINER_EXITED "$(echo "$out" | jget 'r["status"]["state"]' 2>&1)"
  check "CRI StopContainer: SIGTERM let it exit 0" 0 "$(echo "$out" | jget 'r["status"]["exit_code"]' 2>&1)"
  CRI RemoveContainer "{\"container_id\": \"$cid\"}" >"$WORK/cri.out" 2>&1
  check "CRI RemoveContainer: succeeds" 0 "$?"
  CRI StopPodSandbox "{\"pod_sandbox_id\": \"$podid\"}" >"$WORK/cri.out" 2>&1
  check "CRI StopPodSandbox: succeeds" 0 "$?"
  CRI RemovePodSandbox "{\"pod_sandbox_id\": \"$podid\"}" >"$WORK/cri.out" 2>&1
  check "CRI RemovePodSandbox: succeeds" 0 "$?"
  check "CRI: no container left" 0 "$(CRI ListContainers | jget 'len(r["containers"])' 2>&1)"
  check "CRI: no pod sandbox left" 0 "$(CRI ListPodSandbox | jget 'len(r["items"])' 2>&1)"
  check "CRI: no securer-runc state left" "" "$("$RUNC" --root "$KROOT" list -q 2>&1)"
  left=
  for d in /sys/fs/cgroup/*/$CG/p1/* /sys/fs/cgroup/$CG/p1/*; do
    [ -d "$d" ] && left="$left $d"
  done
  check "CRI: no container cgroup left" "" "$left"
  for d in /sys/fs/cgroup/*/$CG /sys/fs/cgroup/$CG; do
    [ -d "$d" ] && rmdir "$d/p1" "$d" 2>/dev/null
  done
fi

echo "# $(( $(date +%s) - started ))s"
if [ "$fails" != 0 ]; then
  echo "# containerd's warnings and errors:"
  grep -E 'level=(warning|error)' "$WORK/containerd.log" | grep -v 'cleaning up after shim' | sed 's/^/# /' | tail -20
fi
echo "$fails failure(s)"
[ "$fails" = 0 ]
