#!/bin/sh
# podman with securer-runc as its runtime: a local image imported from a
# busybox rootfs tarball (no registry), vfs storage, cgroupfs, no network,
# in a private podman root removed afterwards.  Skipped with the reason
# when podman (or what it needs) is missing, or when podman cannot run
# containers here even with runc.
set -u
. "$(dirname "$0")/lib.sh"
skip_unless_ready
for tool in podman conmon runc; do
  if ! command -v $tool >/dev/null 2>&1 && ! [ -x /usr/sbin/$tool ]; then
    echo "SKIP: $tool not found (Debian: podman runc)"
    exit 77
  fi
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/securer-podman-test-XXXXXX") || exit 99
P () {
  podman --root "$WORK/storage" --runroot "$WORK/run" --storage-driver vfs \
    --cgroup-manager cgroupfs --events-backend none --runtime "$RUNTIME" "$@"
}
cleanup () {
  RUNTIME=$RUNC P rm -a -f -t 0 >/dev/null 2>&1
  RUNTIME=$RUNC P rmi -a -f >/dev/null 2>&1
  rm -rf "$WORK" 2>/dev/null || { umount -R "$WORK"/storage/* 2>/dev/null; rm -rf "$WORK"; }
}
trap cleanup EXIT
make_rootfs "$WORK/rootfs"
tar -C "$WORK/rootfs" -cf "$WORK/rootfs.tar" . || exit 99
RUNTIME=runc
P import -q "$WORK/rootfs.tar" localhost/securer-bb:test >/dev/null || {
  echo "SKIP: podman import failed"
  exit 77
}
# rlimits within this host's hard limits (root may lack CAP_SYS_RESOURCE).
U="--ulimit nofile=1024:1024 --ulimit nproc=1024:1024"
IMG=localhost/securer-bb:test
# podman must work here with runc first, or the host is the problem.
if ! P run --rm --network none $U $IMG true >"$WORK/runc.log" 2>&1; then
  echo "SKIP: podman --runtime runc does not work on this host: $(tail -1 "$WORK/runc.log")"
  exit 77
fi
RUNTIME=$RUNC

P run --rm --network none $U $IMG sh -c 'exit 3' >/dev/null 2>&1
check "podman run: exit status passed through" 3 "$?"
out=$(P run --rm --network none $U $IMG sh -c 'echo pid=$$; grep -E "^(Seccomp|CapEff):" /proc/self/status; readlink /proc/self/ns/net' 2>&1)
check_contains "podman run: pid namespace" "pid=1" "$out"
check_contains "podman run: podman's seccomp profile is loaded" "Seccomp:	2" "$out"
# podman's default capabilities: CHOWN DAC_OVERRIDE FOWNER FSETID KILL
# NET_BIND_SERVICE SETFCAP SETGID SETPCAP SETUID SYS_CHROOT.
check_contains "podman run: podman's capability set" "CapEff:	00000000800405fb" "$out"
cat >"$WORK/profile.json" <<'JSON'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 18}]}
JSON
out=$(P run --rm --network none $U --security-opt seccomp="$WORK/profile.json" $IMG sh -c 'mkdir /tmp/x; echo after' 2>&1)
check_contains "podman --security-opt seccomp=FILE: mkdir gets errnoRet 18 (EXDEV)" "Invalid cross-device link" "$out"
check_contains "podman --security-opt seccomp=FILE: the rest is allowed" "after" "$out"
case $out in *"$(readlink /proc/self/ns/net)"*) not_ok "podman run: own network namespace" ;; *) ok "podman run: own network namespace" ;; esac

out=$(P run --rm --network none $U --read-only --security-opt no-new-privileges $IMG sh -c 'touch /x 2>&1; touch /tmp/y && echo tmp-ok; grep NoNewPrivs /proc/self/status' 2>&1)
check_contains "podman run --read-only: the root is read-only" "Read-only file system" "$out"
check_contains "podman run --read-only: /tmp is a writable tmpfs (tmpcopyup)" "tmp-ok" "$out"
check_contains "podman --security-opt no-new-privileges" "NoNewPrivs:	1" "$out"
out=$(P run --rm --network none $U --uidmap 0:300000:65536 --gidmap 0:300000:65536 $IMG cat /proc/self/uid_map 2>&1)
check_contains "podman run --uidmap: the container's user namespace" "300000" "$out"

echo '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["chroot"], "action": "SCMP_ACT_KILL_PROCESS"}]}' >"$WORK/kill.json"
out=$(P run --rm --network none $U --security-opt seccomp="$WORK/kill.json" \
  --annotation run.securer.report-denials="$WORK/denials.log" $IMG sh -c 'chroot / true; echo st=$?' 2>&1)
check_contains "podman --annotation run.securer.report-denials: the caller killed" "st=137" "$out"
for _ in $(seq 100); do [ -s "$WORK/denials.log" ] && break; sleep 0.05; done
check_contains "podman --annotation run.securer.report-denials: reported" '"syscall":"chroot"' "$(cat "$WORK/denials.log" 2>/dev/null)"

cid=$(P run -d --network none $U $IMG sleep 1000)
check "podman run -d: exit status" 0 "$?"
check "podman run -d: running" running "$(P inspect -f '{{.State.Status}}' "$cid")"
out=$(P exec "$cid" sh -c 'cat /proc/1/comm; exit 7' 2>&1); rc=$?
check "podman exec: exit status passed through" 7 "$rc"
check_contains "podman exec: inside the container" sleep "$out"
# podman update hands the runtime the new LinuxResources (update -r).
P update --memory 96m --cpu-quota 50000 "$cid" >"$WORK/update.log" 2>&1; rc=$?
check "podman update: exit status" 0 "$rc"
[ "$rc" = 0 ] || sed "s/^/# /" "$WORK/update.log"
pid=$(P inspect -f '{{.State.Pid}}' "$cid")
check "podman update --memory: the container's cgroup" 100663296 \
  "$(cat "$(cgroup_file "$pid" memory memory.limit_in_bytes memory.max)" 2>&1)"
qf=$(cgroup_file "$pid" cpu cpu.cfs_quota_us cpu.max)
check "podman update --cpu-quota: the container's cgroup" 50000 "$(cut -d' ' -f1 "$qf" 2>&1)"
P pause "$cid" >/dev/null
check "podman pause" paused "$(P inspect -f '{{.State.Status}}' "$cid")"
P unpause "$cid" >/dev/null
check "podman unpause" running "$(P inspect -f '{{.State.Status}}' "$cid")"
P stop -t 1 "$cid" >/dev/null 2>&1
check "podman stop: exit status" 0 "$?"
check "podman stop: exited" exited "$(P inspect -f '{{.State.Status}}' "$cid")"
P rm "$cid" >/dev/null
check "podman rm: exit status" 0 "$?"

if command -v script >/dev/null 2>&1; then
  out=$(script -qec "podman --root $WORK/storage --runroot $WORK/run --storage-driver vfs --cgroup-manager cgroupfs --events-backend none --runtime $RUNC run --rm -t --network none $U $IMG sh -c 'test -t 0 && test -t 1 && echo tty-ok; exit 4'" /dev/null </dev/null 2>&1); rc=$?
  check "podman run -t: exit status" 4 "$rc"
  check_contains "podman run -t: stdin and stdout are a terminal" "tty-ok" "$out"
  cid=$(P run -d -t --network none $U $IMG sleep 1000)
  out=$(script -qec "podman --root $WORK/storage --runroot $WORK/run --storage-driver vfs --cgroup-manager cgroupfs --events-backend none --runtime $RUNC exec -t $cid sh -c 'test -t 0 && echo exec-tty-ok; exit 6'" /dev/null </dev/null 2>&1); rc=$?
  check "podman exec -t: exit status" 6 "$rc"
  check_contains "podman exec -t: a terminal" "exec-tty-ok" "$out"
  P rm -f -t 0 "$cid" >/dev/null
else
  echo "# podman run -t not tested: script(1) not found"
fi
ls "$WORK/storage" >/dev/null
echo "$fails failure(s)"
[ "$fails" = 0 ]
