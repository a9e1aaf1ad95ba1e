#!/bin/sh
# securer-runc driven directly, the way containerd's runc shim and conmon
# drive runc: bundles from a busybox rootfs, checks made from inside.
set -u
. "$(dirname "$0")/lib.sh"
skip_unless_ready
under_subreaper sh "$0" "$@"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/securer-runc-test-XXXXXX") || exit 99
# Reachable by the mapped ids of the user-namespace test.
chmod 755 "$WORK"
ROOT=$WORK/state
cleanup () {
  for id in $("$RUNC" --root "$ROOT" list -q 2>/dev/null); do
    "$RUNC" --root "$ROOT" delete --force "$id" >/dev/null 2>&1
  done
  rm -rf "$WORK"
  # Parents of the containers' cgroups (delete removes only its own).
  for d in /sys/fs/cgroup/*/securer-runc-test /sys/fs/cgroup/securer-runc-test \
    /sys/fs/cgroup/*/securer-runc /sys/fs/cgroup/securer-runc; do
    [ -d "$d" ] && rmdir "$d" 2>/dev/null
  done
  return 0
}
trap cleanup EXIT
make_rootfs "$WORK/rootfs"
R () { "$RUNC" --root "$ROOT" "$@"; }

# ---- command line -------------------------------------------------------
out=$(R create --bogus x 2>&1); rc=$?
check "unknown option: exit status" 1 "$rc"
check_contains "unknown option: named" "unknown option --bogus" "$out"
out=$(R frobnicate 2>&1); rc=$?
check_contains "unknown command: named" 'unknown command "frobnicate"' "$out"
check_contains "--version" "securer-runc version" "$("$RUNC" --version)"
R features | python3 -c 'import json,sys; f=json.load(sys.stdin); assert "SCMP_ACT_ERRNO" in f["linux"]["seccomp"]["actions"]' \
  && ok "features: JSON with the seccomp actions" || not_ok "features"

# ---- run: exit codes and what the process sees --------------------------
make_bundle "$WORK/b1" 'c["process"]["args"] = ["sh", "-c", "exit 42"]'
R run --bundle "$WORK/b1" exit42 >/dev/null 2>&1
check "run: exit status passed through" 42 "$?"
make_bundle "$WORK/b1" 'c["process"]["args"] = ["nonexistent-cmd"]'
out=$(R run --bundle "$WORK/b1" notfound 2>&1); rc=$?
check "run: command not found is 127" 127 "$rc"
check_contains "run: not found named" "nonexistent-cmd" "$out"

make_bundle "$WORK/b1" 'c["process"]["args"] = ["sleep", "1000"]'
R run --bundle "$WORK/b1" killed9 >/dev/null 2>&1 &
runpid=$!
for _ in $(seq 100); do [ "$(R state killed9 2>/dev/null | json_field status)" = running ] && break; sleep 0.05; done
R kill killed9 KILL
wait $runpid
check "run: a process killed by SIGKILL gives 137" 137 "$?"
check_contains "run: the container is deleted afterwards" "does not exist" "$(R state killed9 2>&1)"

make_bundle "$WORK/b2" 'c["linux"]["maskedPaths"].append("/proc/cpuinfo")' \
  'c["process"]["args"] = ["sh", "-c", "echo pid=$$; hostname; readlink /proc/self/ns/net; readlink /proc/self/ns/mnt; grep CapEff /proc/self/status; ulimit -n; touch /x 2>&1; echo cpuinfo=$(wc -c < /proc/cpuinfo); echo > /proc/sys/kernel/hostname 2>&1"]'
out=$(R run --bundle "$WORK/b2" ns 2>&1)
check_contains "pid namespace: the process is pid 1" "pid=1" "$out"
check_contains "uts namespace: the spec's hostname" "securer" "$out"
hostnet=$(readlink /proc/self/ns/net)
hostmnt=$(readlink /proc/self/ns/mnt)
case $out in *"$hostnet"*) not_ok "network namespace: differs from the host's" ;; *) ok "network namespace: differs from the host's" ;; esac
case $out in *"$hostmnt"*) not_ok "mount namespace: differs from the host's" ;; *) ok "mount namespace: differs from the host's" ;; esac
# AUDIT_WRITE (29), KILL (5), NET_BIND_SERVICE (10): the default spec's set.
check_contains "capabilities: exactly the spec's effective set" "CapEff:	0000000020000420" "$out"
check_contains "rlimits: RLIMIT_NOFILE from the spec" "
1024" "$out"
check_contains "root.readonly: the root is read-only" "Read-only file system" "$out"
check_contains "maskedPaths: /proc/cpuinfo reads empty" "cpuinfo=0" "$out"
check_contains "readonlyPaths: /proc/sys is read-only" "can't create /proc/sys/kernel/hostname: Read-only file system" "$out"

# ---- runc's own default spec: ambient capabilities without inheritable ones
# The kernel raises an ambient capability only when it is permitted and
# inheritable; runc runs this spec without them, and so must we.
if command -v runc >/dev/null 2>&1; then
  mkdir -p "$WORK/b24"
  cp -a "$WORK/rootfs" "$WORK/b24/rootfs"
  (cd "$WORK/b24" && runc spec)
  python3 - "$WORK/b24/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["process"]["args"] = ["sh", "-c", "grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status"]
json.dump(c, open(sys.argv[1], "w"))
PY
  R run --bundle "$WORK/b24" runcspec >"$WORK/b24.out" 2>"$WORK/b24.err"
  check "runc spec: the container runs" 0 "$?"
  out=$(cat "$WORK/b24.out")
  check_contains "runc spec: effective is the spec's" "CapEff:	0000000020000420" "$out"
  check_contains "runc spec: no ambient capability raised" "CapAmb:	0000000000000000" "$out"
  check_contains "runc spec: the ambient capabilities left out are named" \
    "process.capabilities.ambient: CAP_KILL CAP_NET_BIND_SERVICE CAP_AUDIT_WRITE not raised" "$(cat "$WORK/b24.err")"
  # With them inheritable too, a non-root process keeps them across exec.
  python3 - "$WORK/b24/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
caps = c["process"]["capabilities"]
caps["inheritable"] = list(caps["ambient"])
c["process"]["user"] = {"uid": 1000, "gid": 1000}
json.dump(c, open(sys.argv[1], "w"))
PY
  out=$(R run --bundle "$WORK/b24" runcspec2 2>&1)
  check_contains "ambient: raised when permitted and inheritable" "CapAmb:	0000000020000420" "$out"
  check_contains "ambient: effective for a non-root process after exec" "CapEff:	0000000020000420" "$out"
  case $out in *warning*) not_ok "ambient: no warning when all can be raised: $out" ;; *) ok "ambient: no warning when all can be raised" ;; esac
else
  echo "# runc spec: runc not installed, skipped"
fi

# ---- memory.kernel and kernelTCP: accepted and ignored, as runc does ------
make_bundle "$WORK/b25" 'c["linux"]["resources"]["memory"] = {"limit": 67108864, "kernel": 33554432, "kernelTCP": 16777216}' \
  'c["process"]["args"] = ["sh", "-c", "echo kmem-ran"]'
R run --bundle "$WORK/b25" kmem >"$WORK/b25.out" 2>"$WORK/b25.err"
check "memory.kernel: the container runs" 0 "$?"
check "memory.kernel: its output" kmem-ran "$(cat "$WORK/b25.out")"
check_contains "memory.kernel: a warning names it" "linux.resources.memory.kernel: kernel memory limits are not supported" "$(cat "$WORK/b25.err")"
check_contains "memory.kernelTCP: a warning names it" "linux.resources.memory.kernelTCP:" "$(cat "$WORK/b25.err")"

# ---- memory.swappiness and disableOOMKiller: v1's knobs ------------------
if [ -f /sys/fs/cgroup/memory/memory.swappiness ]; then
  make_bundle "$WORK/b28" 'c["linux"]["resources"]["memory"] = {"limit": 67108864, "swappiness": 37, "disableOOMKiller": True}' \
    'c["linux"]["cgroupsPath"] = "/securer-runc-test/swappy"' 'c["process"]["args"] = ["true"]'
  R create --bundle "$WORK/b28" swappy
  check "memory.swappiness: create" 0 "$?"
  d=/sys/fs/cgroup/memory/securer-runc-test/swappy
  check "memory.swappiness: written" 37 "$(cat "$d/memory.swappiness" 2>&1)"
  check_contains "memory.disableOOMKiller: written" "oom_kill_disable 1" "$(cat "$d/memory.oom_control" 2>&1)"
  R delete --force swappy
else
  echo "# memory.swappiness: no v1 memory controller, skipped"
fi

# ---- linux.namespaces: the mount namespace joined by path ----------------
# As with runc, the rootfs is set up in the joined namespace (its view of
# the bundle's path), and the container's root is pivoted to there.
if command -v unshare >/dev/null 2>&1; then
  unshare --mount --propagation private --fork --kill-child sleep 1000 &
  holder=$!
  for _ in $(seq 100); do
    [ "$(readlink /proc/$holder/ns/mnt 2>/dev/null)" != "$(readlink /proc/self/ns/mnt)" ] && break
    sleep 0.05
  done
  want=$(readlink /proc/$holder/ns/mnt)
  make_bundle "$WORK/b27" 'c["process"]["args"] = ["sh", "-c", "readlink /proc/self/ns/mnt; test -x /bin/busybox && echo rootfs-ok"]' \
    "c['linux']['namespaces'] = [n if n['type'] != 'mount' else {'type': 'mount', 'path': '/proc/$holder/ns/mnt'} for n in c['linux']['namespaces']]"
  out=$(R run --bundle "$WORK/b27" mntjoin 2>&1); rc=$?
  check "mount namespace by path: the container runs" 0 "$rc"
  check_contains "mount namespace by path: it is the one joined" "$want" "$out"
  check_contains "mount namespace by path: the rootfs is the bundle's" "rootfs-ok" "$out"
  kill -KILL $holder
  wait $holder 2>/dev/null
else
  echo "# mount namespace by path: no unshare, skipped"
fi

# ---- run with a terminal and no console socket: the pty relayed ----------
make_bundle "$WORK/b14" 'c["process"]["terminal"] = True' \
  'c["process"]["args"] = ["sh", "-c", "test -t 0 && test -t 1 && echo tty-ok; exit 5"]'
out=$(R run --bundle "$WORK/b14" tty1 </dev/null 2>&1); rc=$?
check "run -t (relayed): exit status" 5 "$rc"
check_contains "run -t (relayed): stdin and stdout are the container's terminal" "tty-ok" "$out"

# ---- seccomp from config.json: the errno the profile names --------------
make_bundle "$WORK/b3" \
  'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"], "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 18}]}' \
  'c["root"]["readonly"] = False' \
  'c["process"]["args"] = ["sh", "-c", "mkdir /tmp/d; grep Seccomp: /proc/self/status; echo still-running"]'
out=$(R run --bundle "$WORK/b3" sc 2>&1)
check_contains "seccomp: mkdir gets errnoRet 18 (EXDEV)" "Invalid cross-device link" "$out"
check_contains "seccomp: filter mode" "Seccomp:	2" "$out"
check_contains "seccomp: other calls allowed" "still-running" "$out"
[ ! -e "$WORK/b3/rootfs/tmp/d" ] && ok "seccomp: the directory was not made" || not_ok "seccomp: the directory was made"

# ---- an old Docker-style profile: no close_range, clone3, faccessat2 ----
# Default ERRNO (EPERM) and an allow list of 2019: the runtime's own steps
# must not need a call the profile does not know, and calls newer than the
# profile's last one fail with ENOSYS (so the libc falls back), as with runc.
OLDPROF=$(cd "$(dirname "$0")" && pwd)/seccomp-docker-2019.json
for nnp in False True; do
  make_bundle "$WORK/b26" "c['linux']['seccomp'] = json.load(open('$OLDPROF'))" \
    "c['process']['noNewPrivileges'] = $nnp" \
    'c["process"]["args"] = ["/bin/busybox", "ls", "/bin/busybox"]'
  out=$(R run --bundle "$WORK/b26" oldprof 2>&1); rc=$?
  check "old profile (noNewPrivileges $nnp): busybox ls succeeds" 0 "$rc"
  check "old profile (noNewPrivileges $nnp): its output" /bin/busybox "$out"
done
cat >"$WORK/newcalls.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
static void
try (const char *name, long nr)
{
  long rc = syscall (nr, -1L, -1L, 0L, 0L, 0L, 0L);
  printf ("%s=%s\n", name, rc < 0 ? strerrorname_np (errno) : "ok");
}
int
main (void)
{
  try ("acct", SYS_acct);                 /* older than the profile, not in it */
  try ("close_range", 436);
  try ("openat2", 437);
  try ("faccessat2", 439);
  return 0;
}
EOF
if cc -static -o "$WORK/newcalls" "$WORK/newcalls.c" 2>/dev/null; then
  make_bundle "$WORK/b26" "c['linux']['seccomp'] = json.load(open('$OLDPROF'))" \
    'c["root"]["readonly"] = False' 'c["process"]["args"] = ["/newcalls"]'
  cp "$WORK/newcalls" "$WORK/b26/rootfs/newcalls"
  out=$(R run --bundle "$WORK/b26" newcalls 2>&1)
  check_contains "old profile: a call it predates but does not allow gets its default" "acct=EPERM" "$out"
  check_contains "old profile: close_range, newer than it, is ENOSYS" "close_range=ENOSYS" "$out"
  check_contains "old profile: openat2 is ENOSYS" "openat2=ENOSYS" "$out"
  check_contains "old profile: faccessat2 is ENOSYS" "faccessat2=ENOSYS" "$out"
  make_bundle "$WORK/b26" "c['linux']['seccomp'] = json.load(open('$OLDPROF'))" \
    'c["process"]["args"] = ["sleep", "1000"]'
  R run -d --bundle "$WORK/b26" newcalls-exec
  out=$(R exec newcalls-exec /newcalls 2>&1)
  check_contains "old profile: exec'd processes get ENOSYS past it too" "faccessat2=ENOSYS" "$out"
  R delete --force newcalls-exec
else
  echo "# old profile: no static C compiler, the ENOSYS checks skipped"
fi

# ---- run.securer.policy: Landlock and a second filter from a securer policy
cat >"$WORK/layer.policy" <<'POL'
mount ro /bin
mount rw /tmp
mount proc /proc
mount dev /dev
landlock required
seccomp default allow
seccomp errno EXDEV symlink symlinkat
POL
make_bundle "$WORK/b7" 'c["root"]["readonly"] = False' \
  "c['annotations'] = {'run.securer.policy': '$WORK/layer.policy'}" \
  'c["process"]["args"] = ["sh", "-c", "touch /etc/x 2>&1; touch /tmp/y && echo tmp-ok; ln -s a /tmp/l 2>&1; grep -E \"^(NoNewPrivs|Seccomp_filters):\" /proc/self/status"]'
out=$(R run --bundle "$WORK/b7" layer 2>&1)
check_contains "run.securer.policy: Landlock denies writes outside its rw mounts" "touch: /etc/x: Permission denied" "$out"
check_contains "run.securer.policy: Landlock allows its rw mounts" "tmp-ok" "$out"
check_contains "run.securer.policy: its seccomp rule (EXDEV)" "Invalid cross-device link" "$out"
check_contains "run.securer.policy: implies no_new_privs" "NoNewPrivs:	1" "$out"
[ ! -e "$WORK/b7/rootfs/etc/x" ] && ok "run.securer.policy: nothing written outside" || not_ok "run.securer.policy: /etc/x written"

# ---- run.securer.report-denials: kills reported by a reporter that ends with the container
make_bundle "$WORK/b13" 'c["root"]["readonly"] = False' \
  'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["chroot"], "action": "SCMP_ACT_KILL_PROCESS"}]}' \
  "c['annotations'] = {'run.securer.report-denials': '$WORK/denials.log'}" \
  'c["process"]["args"] = ["sh", "-c", "chroot / true; echo chroot-status=$?"]'
out=$(R run --bundle "$WORK/b13" report 2>&1)
check_contains "report-denials: the caller is killed" "chroot-status=137" "$out"
for _ in $(seq 100); do [ -s "$WORK/denials.log" ] && break; sleep 0.05; done
rep=$(cat "$WORK/denials.log" 2>/dev/null)
check_contains "report-denials: the syscall named" '"syscall":"chroot"' "$rep"
check_contains "report-denials: the verdict" '"action":"kill-process"' "$rep"
check_contains "report-denials: the container id" '"id":"report"' "$rep"
for _ in $(seq 100); do pgrep -f "run --bundle $WORK/b13" >/dev/null || break; sleep 0.05; done
pgrep -f "run --bundle $WORK/b13" >/dev/null && not_ok "report-denials: the reporter outlived the container" \
  || ok "report-denials: the reporter ended with the container"
# The reporter writes as root on the host: a symlink planted at the log's
# path (say in a volume the container writes) is not followed.
echo victim >"$WORK/victim13"
ln -s "$WORK/victim13" "$WORK/denials-link.log"
make_bundle "$WORK/b13" 'c["root"]["readonly"] = False' \
  'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["chroot"], "action": "SCMP_ACT_KILL_PROCESS"}]}' \
  "c['annotations'] = {'run.securer.report-denials': '$WORK/denials-link.log'}" \
  'c["process"]["args"] = ["sh", "-c", "chroot / true"]'
R run --bundle "$WORK/b13" reportlink >"$WORK/b13.out" 2>&1
check "report-denials: a symlink at the log's path is refused" 1 "$?"
check_contains "report-denials: the refusal named" "report-denials: open $WORK/denials-link.log" "$(cat "$WORK/b13.out")"
sleep 0.2
check "report-denials: the link's target untouched" victim "$(cat "$WORK/victim13")"
# ---- run.securer.network-allow: the proxy beside the container ----------
# A server on the host's loopback, named web.test for the proxy (a hosts
# file: no DNS); the container reaches it by name, and nothing else.
mkdir -p "$WORK/www" && echo hello-from-web >"$WORK/www/hello.txt"
webport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$WORK/www" "$webport" >/dev/null 2>&1 &
webpid=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$webport/hello.txt" && break; sleep 0.1; done
printf '127.0.0.1 web.test other.test\n' >"$WORK/hosts14"
make_bundle "$WORK/b14" \
  "c['annotations'] = {'run.securer.network-allow': 'web.test:$webport, 127.0.0.1:$webport'}" \
  "c['process']['args'] = ['sh', '-c', 'wget -q -O - http://web.test:$webport/hello.txt; echo rc=\$?; wget -q -O - http://other.test:$webport/hello.txt 2>&1; echo rc2=\$?; env | grep ^http_proxy']"
out=$(SECURER_NET_HOSTS="$WORK/hosts14" R run --bundle "$WORK/b14" netallow 2>&1)
check_contains "network-allow: the allowed name is reached through the proxy" "hello-from-web" "$out"
check_contains "network-allow: ... and the request succeeds" "rc=0" "$out"
check_contains "network-allow: another name is refused by the proxy" "403 Forbidden" "$out"
check_contains "network-allow: the environment names the proxy" "http_proxy=http://127.0.0.1:3128" "$out"
for _ in $(seq 100); do pgrep -f "run --bundle $WORK/b14" >/dev/null || break; sleep 0.05; done
pgrep -f "run --bundle $WORK/b14" >/dev/null && not_ok "network-allow: the proxy outlived the container" \
  || ok "network-allow: the proxy ended with the container"
kill "$webpid" 2>/dev/null
make_bundle "$WORK/b14" \
  "c['annotations'] = {'run.securer.network-allow': 'web.test'}" \
  "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'network']"
R run --bundle "$WORK/b14" netallow2 >"$WORK/b14.out" 2>&1
check "network-allow: refused without a network namespace of the container's own" 1 "$?"
check_contains "network-allow: the refusal named" "annotations.run.securer.network-allow: the container needs a network namespace" "$(cat "$WORK/b14.out")"
make_bundle "$WORK/b14" "c['annotations'] = {'run.securer.network-allow': 'web.test:0'}"
R run --bundle "$WORK/b14" netallow3 >"$WORK/b14.out" 2>&1
check "network-allow: a bad entry refused" 1 "$?"
check_contains "network-allow: the bad entry named" "network allow entry 'web.test:0': a port is a number from 1 to 65535" "$(cat "$WORK/b14.out")"

# ---- what an operator reads: securer policy show --oci-config ------------
SECURER=${SECURER_BIN:-$SECURER_BUILDDIR/securer}
out=$("$SECURER" policy show --oci-config "$WORK/b3/config.json" 2>&1)
check_contains "policy show --oci-config: the spec's seccomp rule" "seccomp errno EXDEV mkdir" "$out"
check_contains "policy show --oci-config: kept capabilities" "# capabilities effective: kill net_bind_service audit_write" "$out"
check_contains "policy show --oci-config: no Landlock without the annotation" "landlock off" "$out"
check_contains "policy show --oci-config: the rlimit" "limit nofile 1024" "$out"

# ---- create / start / state / kill / delete, containerd-shim style -------
make_bundle "$WORK/b4" 'c["process"]["args"] = ["sleep", "1000"]' \
  'c["linux"]["cgroupsPath"] = "/securer-runc-test/lifecycle"'
LOG=$WORK/log.json
"$RUNC" --root "$ROOT" --log "$LOG" --log-format json create --bundle "$WORK/b4" --pid-file "$WORK/b4.pid" life
check "create: exit status" 0 "$?"
pid=$(cat "$WORK/b4.pid")
check "state after create: created" created "$(R state life | json_field status)"
check "state: pid is the pid file's" "$pid" "$(R state life | json_field pid)"
check "created: the process waits before exec (still securer-runc)" securer-runc "$(cat /proc/$pid/comm)"
cg=/sys/fs/cgroup/pids/securer-runc-test/lifecycle
[ -d /sys/fs/cgroup/unified ] || cg=/sys/fs/cgroup/securer-runc-test/lifecycle
grep -qx "$pid" "$cg/cgroup.procs" && ok "cgroupsPath: the process is in it" || not_ok "cgroupsPath: $pid not in $cg"
out=$(R delete life 2>&1); rc=$?
check_contains "delete of a created container without --force: refused" "use --force" "$out"
R start life
check "start: exit status" 0 "$?"
check "state after start: running" running "$(R state life | json_field status)"
check "running: the process exec'd" sleep "$(cat /proc/$pid/comm)"
out=$(R start life 2>&1)
check_contains "start twice: refused" "is running" "$out"
check_contains "list: shows it" life "$(R list -q)"
R kill life KILL
for _ in $(seq 100); do [ "$(R state life | json_field status)" = stopped ] && break; sleep 0.05; done
check "state after kill: stopped" stopped "$(R state life | json_field status)"
out=$(R kill life TERM 2>&1)
check_contains "kill of a stopped container: error" "not running" "$out"
R delete life
check "delete: exit status" 0 "$?"
[ ! -d "$cg" ] && ok "delete: the cgroup is gone" || not_ok "delete: $cg left behind"
out=$(R state life 2>&1)
check_contains "state after delete: gone" "does not exist" "$out"
R delete --force life
check "delete --force of what is gone: success" 0 "$?"
"$RUNC" --root "$ROOT" --log "$LOG" --log-format json state life 2>/dev/null
check_contains "--log-format json: errors logged as JSON" '"level":"error"' "$(cat "$LOG")"
check_contains "--log-format json: the message" 'does not exist' "$(cat "$LOG")"

# ---- exec into a running container, delete --force -----------------------
make_bundle "$WORK/b5" 'c["process"]["args"] = ["sleep", "1000"]'
R run -d --bundle "$WORK/b5" ex
out=$(R exec ex sh -c 'echo pid=$$; cat /proc/1/comm; exit 9' 2>&1); rc=$?
check "exec: exit status passed through" 9 "$rc"
check_contains "exec: in the container's pid namespace" "sleep" "$out"
epid=$(R state ex | json_field pid)
check_contains "ps --format json: the container's process" "$epid" "$(R ps --format json ex)"
R pause ex
check "pause: state paused" paused "$(R state ex | json_field status)"
out=$(R exec ex true 2>&1)
check_contains "exec into a paused container: refused" "is paused" "$out"
R resume ex
check "resume: state running" running "$(R state ex | json_field status)"
# The bundle's config.json changed after create changes nothing: exec
# takes the process defaults and filter from the spec create read.
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
for k in ("bounding", "effective", "permitted"):
    c["process"]["capabilities"][k].append("CAP_SYS_ADMIN")
json.dump(c, open(sys.argv[1], "w"))' "$WORK/b5/config.json"
out=$(R exec ex grep CapEff /proc/self/status 2>&1)
check_contains "exec: the spec as create read it, not the bundle's changed one" "CapEff:	0000000020000420" "$out"
R exec --detach --pid-file "$WORK/ex.pid" ex sleep 1000
check "exec --detach: exit status" 0 "$?"
expid=$(cat "$WORK/ex.pid")
check "exec --detach: pid file" sleep "$(cat /proc/$expid/comm)"
exstart=$(proc_start "$expid")
R pause ex
R delete --force ex
check "delete --force of a paused container" 0 "$?"
! proc_running "$expid" "$exstart" \
  && ok "delete --force: the exec'd process is gone too" || not_ok "delete --force: exec'd process left"

# ---- kill --all: every process of the container, nothing left frozen ------
make_bundle "$WORK/b25" 'c["process"]["args"] = ["sh", "-c", "sleep 1000 & sleep 1000 & trap \"\" TERM; wait; wait; exec sleep 1000"]'
R run -d --bundle "$WORK/b25" killall
for _ in $(seq 100); do [ "$(R ps --format json killall | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" -ge 3 ] && break; sleep 0.05; done
R kill --all killall TERM
check "kill --all: the container is not left paused" running "$(R state killall | json_field status)"
for _ in $(seq 100); do [ "$(R ps --format json killall)" = "[1]" ] || [ "$(R ps --format json killall | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 1 ] && break; sleep 0.05; done
check "kill --all: every process but the one ignoring it is gone" 1 \
  "$(R ps --format json killall | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
R delete --force killall
check "kill --all: delete --force ends the rest" 0 "$?"

# ---- user namespace with the spec's mappings ----------------------------
make_bundle "$WORK/b6" 'c["linux"]["namespaces"].append({"type": "user"})' \
  'c["linux"]["uidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]' \
  'c["linux"]["gidMappings"] = [{"containerID": 0, "hostID": 200000, "size": 65536}]' \
  'c["process"]["args"] = ["sh", "-c", "cat /proc/self/uid_map; id -u; echo oom=$(cat /proc/self/oom_score_adj)"]' \
  'c["process"]["oomScoreAdj"] = 123'
out=$(R run --bundle "$WORK/b6" userns 2>&1)
check_contains "user namespace: the spec's uid map" "200000" "$out"
# The setup runs non-dumpable: its /proc files are the host root's, which
# the container's root cannot write; the runtime writes the value.
check_contains "user namespace: process.oomScoreAdj applied" "oom=123" "$out"

# ---- tmpcopyup: a tmpfs that starts with what it covers --------------------
make_bundle "$WORK/b12" \
  'c["mounts"].append({"destination": "/data", "type": "tmpfs", "source": "tmpfs", "options": ["tmpcopyup", "mode=755"]})' \
  'c["process"]["args"] = ["sh", "-c", "cat /data/sub/f; readlink /data/l; echo new > /data/sub/f && cat /data/sub/f; grep \" /data \" /proc/self/mounts | cut -d\" \" -f3"]'
mkdir -p "$WORK/b12/rootfs/data/sub"
echo original >"$WORK/b12/rootfs/data/sub/f"
ln -s sub/f "$WORK/b12/rootfs/data/l"
out=$(R run --bundle "$WORK/b12" copyup 2>&1)
check_contains "tmpcopyup: the file is copied" "original" "$out"
check_contains "tmpcopyup: the symlink is copied as a link" "sub/f" "$out"
check_contains "tmpcopyup: the copy is writable" "new" "$out"
check_contains "tmpcopyup: it is a tmpfs" "tmpfs" "$out"
check "tmpcopyup: the rootfs is untouched" original "$(cat "$WORK/b12/rootfs/data/sub/f")"

# ---- linux.resources: a pids limit enforced from inside -----------------
make_bundle "$WORK/b8" 'c["linux"]["resources"]["pids"] = {"limit": 4}' \
  'c["process"]["args"] = ["sh", "-c", "for i in 1 2 3 4 5 6; do sleep 5 & done 2>&1; echo done"]'
out=$(R run --bundle "$WORK/b8" pids 2>&1)
check_contains "resources.pids.limit: fork fails past the limit" "can't fork" "$out"

# ---- --systemd-cgroup: slice:prefix:name made into a scope directory -------
make_bundle "$WORK/b10" 'c["process"]["args"] = ["sh", "-c", "cat /proc/self/cgroup"]' \
  'c["linux"]["cgroupsPath"] = "securer-test.slice:runc:sd"' \
  'c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "cgroup"]'
out=$("$RUNC" --root "$ROOT" --systemd-cgroup run --bundle "$WORK/b10" sd 2>&1)
check_contains "--systemd-cgroup: the container is in SLICE/PREFIX-NAME.scope" "/securer-test.slice/runc-sd.scope" "$out"
for d in /sys/fs/cgroup/*/securer-test.slice /sys/fs/cgroup/securer-test.slice; do
  [ -d "$d" ] && rmdir "$d"
done

# ---- hooks: run with the state on stdin -----------------------------------
make_bundle "$WORK/b9" 'c["process"]["args"] = ["true"]' \
  "c['hooks'] = {'prestart': [{'path': '/bin/sh', 'args': ['sh', '-c', 'cat > $WORK/prestart.json']}], 'poststop': [{'path': '/bin/sh', 'args': ['sh', '-c', 'cat > $WORK/poststop.json']}]}"
R run --bundle "$WORK/b9" hooks >/dev/null 2>&1
check "hooks: prestart got the state (creating)" creating "$(json_field status <"$WORK/prestart.json")"
check "hooks: prestart got the id" hooks "$(json_field id <"$WORK/prestart.json")"
check "hooks: poststop got the state (stopped)" stopped "$(json_field status <"$WORK/poststop.json")"
# Hooks get the state on stdin, stdout and stderr, and no other descriptor
# (fd 7: one the engine passed to the runtime).
make_bundle "$WORK/b9" 'c["process"]["args"] = ["true"]' \
  "c['hooks'] = {'createRuntime': [{'path': '/bin/sh', 'args': ['sh', '-c', 'ls /proc/\$\$/fd']}]}"
R run --bundle "$WORK/b9" hookfds >"$WORK/hookfds" 2>/dev/null 7>/dev/null
check "hooks: only stdin, stdout and stderr open" "0 1 2" "$(echo $(cat "$WORK/hookfds"))"
# The hook compares its mount namespace with the container process's while
# both exist: a namespace number recorded and compared after the hook has
# gone could have been given to another namespace since.
cat >"$WORK/cc-hook.sh" <<SH
cat >"$WORK/cc.json"
p=\$(sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' "$WORK/cc.json")
own=\$(readlink /proc/self/ns/mnt)
theirs=\$(readlink /proc/\$p/ns/mnt)
if [ -n "\$own" ] && [ "\$own" = "\$theirs" ]; then echo same; else echo "hook in \$own, pid \$p in \$theirs"; fi >"$WORK/cc.ns"
SH
make_bundle "$WORK/b9" 'c["process"]["args"] = ["true"]' 'c["root"]["readonly"] = False' \
  "c['hooks'] = {'createContainer': [{'path': '/bin/sh', 'args': ['sh', '$WORK/cc-hook.sh']}], 'startContainer': [{'path': '/bin/sh', 'args': ['sh', '-c', 'cat > /tmp/sc.json']}]}"
R create --bundle "$WORK/b9" inside >/dev/null 2>&1
cpid=$(R state inside | json_field pid)
check "hooks: createContainer ran at create, with the state" inside "$(json_field id <"$WORK/cc.json")"
check "hooks: createContainer got the container's host pid" "$cpid" "$(json_field pid <"$WORK/cc.json")"
check "hooks: createContainer ran in the container's mount namespace" same "$(cat "$WORK/cc.ns")"
[ ! -e "$WORK/b9/rootfs/tmp/sc.json" ] && ok "hooks: startContainer not before start" || not_ok "hooks: startContainer ran at create"
R start inside
for _ in $(seq 100); do [ -s "$WORK/b9/rootfs/tmp/sc.json" ] && break; sleep 0.05; done
check "hooks: startContainer ran inside the container (its /tmp)" inside "$(json_field id <"$WORK/b9/rootfs/tmp/sc.json")"
R delete --force inside
make_bundle "$WORK/b9" 'c["process"]["args"] = ["true"]' \
  "c['hooks'] = {'createRuntime': [{'path': '/bin/false'}]}"
out=$(R run --bundle "$WORK/b9" hookfail 2>&1); rc=$?
[ "$rc" != 0 ] && ok "hooks: a failing createRuntime hook fails create" || not_ok "hooks: failing hook ignored"
check_contains "hooks: the failing hook named" "hooks.createRuntime[0]" "$out"

# ---- a create killed half-way: delete --force cleans up -------------------
make_bundle "$WORK/b11" 'c["process"]["args"] = ["true"]' \
  'c["linux"]["cgroupsPath"] = "/securer-runc-test/killed"' \
  "c['hooks'] = {'createRuntime': [{'path': '/bin/sh', 'args': ['sh', '-c', 'kill -9 \$PPID']}]}"
R create --bundle "$WORK/b11" killed >/dev/null 2>&1
check "killed create: exit by SIGKILL" 137 "$?"
[ -d "$ROOT/killed" ] && ok "killed create: state left behind" || not_ok "killed create: no state to clean"
R delete --force killed
check "killed create: delete --force succeeds" 0 "$?"
[ ! -e "$ROOT/killed" ] && ok "killed create: state removed" || not_ok "killed create: state left"
left=$(ls -d /sys/fs/cgroup/*/securer-runc-test/killed /sys/fs/cgroup/securer-runc-test/killed 2>/dev/null)
check "killed create: cgroups removed" "" "$left"

# ---- the runtime's binary cannot be rewritten from inside (CVE-2019-5736) --
# A process that `exec` starts is the runtime until its execve; a script
# whose interpreter is /proc/self/exe makes it run the runtime again inside
# the container.  The container holds that executable open and, once no
# runtime process runs, reopens it for writing.  A copy of the runtime is
# used so that a failure damages nothing else.
cp "$RUNC" "$WORK/runc-copy"
RC () { "$WORK/runc-copy" --root "$ROOT" "$@"; }
before=$(cksum <"$WORK/runc-copy")
make_bundle "$WORK/b15" 'c["root"]["readonly"] = False' 'c["process"]["args"] = ["sh", "/hold.sh"]'
# The runtime's shared libraries, so that it can run in the container.
for lib in $(ldd "$WORK/runc-copy" | grep -o '/[^ ]*'); do
  mkdir -p "$WORK/b15/rootfs${lib%/*}" && cp "$lib" "$WORK/b15/rootfs$lib"
done
printf '#!/proc/self/exe --log=/tmp/fifo\n' >"$WORK/b15/rootfs/evil"
chmod 755 "$WORK/b15/rootfs/evil"
cat >"$WORK/b15/rootfs/hold.sh" <<'SH'
mkfifo /tmp/fifo
# The runtime re-run as the interpreter blocks opening its log, the fifo.
while :; do
  for d in /proc/[0-9]*; do
    exe=$(readlink $d/exe 2>/dev/null) || continue
    case $exe in */busybox|"") ;; *) p=${d#/proc/}; break 2 ;; esac
  done
  sleep 0.02
done
exec 3<"/proc/$p/exe" || { echo noopen >/result; exit 0; }
cat /tmp/fifo >/dev/null
while [ -e "/proc/$p" ]; do sleep 0.02; done
# Text-file-busy while a runtime process still runs it: retry (the bound
# only keeps a runtime that never exits from hanging the suite).
for _ in $(seq 1200); do
  if out=$(printf '#' 2>&1 >>/proc/self/fd/3); then echo WRITABLE >/result; exit 0; fi
  case $out in *busy*) sleep 0.05 ;; *) echo "refused: $out" >/result; exit 0 ;; esac
done
echo "busy" >/result
SH
RC create --bundle "$WORK/b15" selfexe >/dev/null 2>&1 && RC start selfexe \
  && RC exec --detach selfexe /evil >/dev/null 2>&1
started=$?
# hold.sh writes its result once the runtime has gone, which on a loaded
# machine can take many seconds: waited for until it is there (the bound,
# past hold.sh's own, only keeps a hang from stopping the suite).
if [ "$started" = 0 ]; then
  for _ in $(seq 1800); do [ -s "$WORK/b15/rootfs/result" ] && break; sleep 0.05; done
fi
result=$(cat "$WORK/b15/rootfs/result" 2>/dev/null)
[ "$started" = 0 ] || result="create, start or exec failed (status $started)"
case $result in
  refused*|noopen) ok "runtime binary: not writable from the container ($result)" ;;
  *) not_ok "runtime binary: writable from the container or test did not run: [$result]" ;;
esac
check "runtime binary: unchanged on the host" "$before" "$(cksum <"$WORK/runc-copy")"
RC delete --force selfexe >/dev/null 2>&1
# Run from the build tree, a policy named (not a path) is still found in
# the source tree once the runtime runs from its memfd copy.
if [ -z "${SECURER_RUNC_BIN:-}" ]; then
  make_bundle "$WORK/b24" "c['annotations'] = {'run.securer.policy': 'minimal'}" 'c["process"]["args"] = ["true"]'
  out=$(R run --bundle "$WORK/b24" byname 2>&1)
  case $out in
    *"not found"*) not_ok "memfd copy: a policy by name still found from the build tree [$out]" ;;
    *) ok "memfd copy: a policy by name still found from the build tree" ;;
  esac
fi

# ---- the pid file is written without following planted symlinks ----------
# The engine's directory may hold links made by others: the temporary name
# the pid file is written under must not write through one.
echo victim >"$WORK/victim"
for suffix in .tmpXX .tmp .new; do ln -sf "$WORK/victim" "$WORK/pf.pid$suffix"; done
make_bundle "$WORK/b16" 'c["process"]["args"] = ["true"]'
R create --bundle "$WORK/b16" --pid-file "$WORK/pf.pid" pidfile >/dev/null 2>&1
check "pid file: a planted symlink is not written through" victim "$(cat "$WORK/victim")"
[ -f "$WORK/pf.pid" ] && [ ! -L "$WORK/pf.pid" ] && ok "pid file: a regular file" || not_ok "pid file: not a regular file"
check "pid file: the container's pid" "$(R state pidfile | json_field pid)" "$(cat "$WORK/pf.pid")"
R delete --force pidfile >/dev/null 2>&1

# ---- a state root others could write to is refused ------------------------
# The state names pids to signal, cgroups to remove and bundles whose hooks
# run as root.
mkdir -p "$WORK/shared"
chmod 1777 "$WORK/shared"
make_bundle "$WORK/b17" 'c["process"]["args"] = ["true"]'
"$RUNC" --root "$WORK/shared/state" create --bundle "$WORK/b17" sticky >/dev/null 2>&1
check "state root: under a sticky directory: accepted" 0 "$?"
"$RUNC" --root "$WORK/shared/state" delete --force sticky >/dev/null 2>&1
chmod 0777 "$WORK/shared"
# (Output to a file: a container that were created would hold a pipe open.)
"$RUNC" --root "$WORK/shared/state" create --bundle "$WORK/b17" shared >"$WORK/b17.out" 2>&1
rc=$?
out=$(cat "$WORK/b17.out")
check "state root: under a directory others can write: refused" 1 "$rc"
check_contains "state root: the directory named" "$WORK/shared is writable by others" "$out"
out=$("$RUNC" --root "$WORK/shared/state" list -q 2>&1); rc=$?
check "state root: list refused too" 1 "$rc"
chmod 0755 "$WORK/shared"
mkdir -p "$WORK/shared/other"
chown 65534 "$WORK/shared/other"
out=$("$RUNC" --root "$WORK/shared/other" state x 2>&1)
check_contains "state root: another user's directory refused" "belongs to uid 65534" "$out"

# ---- masking binds only the real null device (runc CVE-2025-31133) -------
# A /dev/null that is something else would be bound over every masked file.
make_bundle "$WORK/b18" 'c["process"]["args"] = ["true"]' \
  'c["linux"]["devices"] = [{"path": "/dev/null", "type": "c", "major": 1, "minor": 5}]'
R create --bundle "$WORK/b18" fakenull >"$WORK/b18.out" 2>&1
check "masking: a /dev/null that is not 1:3 is refused" 125 "$?"
check_contains "masking: the reason named" "/dev/null is not the null device" "$(cat "$WORK/b18.out")"
R delete --force fakenull >/dev/null 2>&1
# A masked path that is a symlink in the image masks the link's target
# inside the container, never a host path.
make_bundle "$WORK/b19" 'c["root"]["readonly"] = False' \
  'c["linux"]["maskedPaths"] = ["/etc/secret-link", "/etc/dirlink"]' \
  'c["linux"]["readonlyPaths"] = ["/etc/rolink"]' \
  'c["process"]["args"] = ["sh", "-c", "echo s=$(cat /etc/secret); echo entries=$(ls /etc/dir); echo x > /etc/ro/f || echo ro-ok"]'
echo secret >"$WORK/b19/rootfs/etc/secret"
ln -s /etc/secret "$WORK/b19/rootfs/etc/secret-link"
mkdir -p "$WORK/b19/rootfs/etc/dir" "$WORK/b19/rootfs/etc/ro"
touch "$WORK/b19/rootfs/etc/dir/file"
ln -s ../../../../../../etc/dir "$WORK/b19/rootfs/etc/dirlink"
ln -s /etc/ro "$WORK/b19/rootfs/etc/rolink"
out=$(R run --bundle "$WORK/b19" masklinks 2>&1)
check_contains "maskedPaths through a symlink: the target in the container masked" "s=
" "$out
"
check_contains "maskedPaths through a relative symlink: the directory masked" "entries=
" "$out
"
check_contains "readonlyPaths through a symlink: read-only" "ro-ok" "$out"
# Without a proc mount, /proc/self/fd would be the image's to point anywhere.
make_bundle "$WORK/b20" 'c["process"]["args"] = ["true"]' \
  'c["mounts"] = [m for m in c["mounts"] if m["type"] != "proc"]' \
  'c["linux"]["maskedPaths"] = ["/etc"]' 'c["linux"]["readonlyPaths"] = []'
mkdir -p "$WORK/b20/rootfs/proc/self/fd"
for n in $(seq 3 40); do ln -s /tmp "$WORK/b20/rootfs/proc/self/fd/$n"; done
R create --bundle "$WORK/b20" noproc >"$WORK/b20.out" 2>&1
check "maskedPaths without a proc mount: refused" 125 "$?"
check_contains "maskedPaths without a proc mount: the reason" "needs a proc mount on /proc" "$(cat "$WORK/b20.out")"
R delete --force noproc >/dev/null 2>&1
# A namespaced sysctl is written to the container's procfs, and refused
# where /proc is the image's (it would land in an image file, silently).
make_bundle "$WORK/b21" 'c["linux"]["sysctl"] = {"net.ipv4.ip_forward": "1"}' \
  'c["process"]["args"] = ["cat", "/proc/sys/net/ipv4/ip_forward"]'
check "sysctl: applied in the container's network namespace" 1 "$(R run --bundle "$WORK/b21" sysctl 2>&1)"
make_bundle "$WORK/b21" 'c["linux"]["sysctl"] = {"net.ipv4.ip_forward": "1"}' \
  'c["process"]["args"] = ["true"]' 'c["linux"]["maskedPaths"] = []' 'c["linux"]["readonlyPaths"] = []' \
  'c["mounts"] = [m for m in c["mounts"] if m["type"] != "proc"]'
mkdir -p "$WORK/b21/rootfs/proc/sys/net/ipv4"
echo 0 >"$WORK/b21/rootfs/proc/sys/net/ipv4/ip_forward"
R create --bundle "$WORK/b21" sysctlnoproc >"$WORK/b21.out" 2>&1
check "sysctl without a proc mount: refused" 125 "$?"
check_contains "sysctl without a proc mount: the reason" "linux.sysctl: needs a proc mount on /proc" "$(cat "$WORK/b21.out")"
R delete --force sysctlnoproc >/dev/null 2>&1

# ---- symlinks in the image never lead a mount, device or id to the host ---
# (runc CVE-2021-30465 and the like): each destination below goes through a
# link to a host directory, absolute or with "..", and must land inside the
# rootfs, the host directory untouched.
mkdir -p "$WORK/host1" "$WORK/host2" "$WORK/host3" "$WORK/host4" "$WORK/bindsrc"
echo from-host >"$WORK/host4/f"
make_bundle "$WORK/b22" 'c["root"]["readonly"] = False' \
  "c['mounts'].append({'destination': '/l1/sub', 'type': 'tmpfs', 'source': 'tmpfs'})" \
  "c['mounts'].append({'destination': '/l2/sub', 'type': 'bind', 'source': '$WORK/bindsrc', 'options': ['rbind']})" \
  "c['mounts'].append({'destination': '/l4', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['tmpcopyup']})" \
  "c['linux']['devices'] = [{'path': '/l3/evilnull', 'type': 'c', 'major': 1, 'minor': 3}]" \
  "c['process']['cwd'] = '/l1'" \
  'c["process"]["args"] = ["sh", "-c", "pwd; ls /l4; grep host /proc/self/mountinfo; test -c /l3/evilnull && echo dev-ok"]'
# The same paths inside the rootfs: where the links lead once resolved in it.
for d in host1 host2 host3 host4; do mkdir -p "$WORK/b22/rootfs$WORK/$d"; done
echo from-rootfs >"$WORK/b22/rootfs$WORK/host4/g"
ln -s "$WORK/host1" "$WORK/b22/rootfs/l1"
ln -s "../../../../../../../../../../$WORK/host2" "$WORK/b22/rootfs/l2"
ln -s "$WORK/host3" "$WORK/b22/rootfs/l3"
ln -s "$WORK/host4" "$WORK/b22/rootfs/l4"
out=$(R run --bundle "$WORK/b22" links 2>&1)
check "symlinked destinations: nothing made in the host directories" "" \
  "$(ls -A "$WORK/host1" "$WORK/host2" "$WORK/host3" | grep -v ':$' | grep -v '^$')"
check "symlinked tmpcopyup: the host directory untouched" "f" "$(ls -A "$WORK/host4")"
case $out in *"
f"*) not_ok "symlinked tmpcopyup: copied the host's files [$out]" ;; *) ok "symlinked tmpcopyup: nothing of the host copied" ;; esac
check_contains "symlinked tmpcopyup: the rootfs's files copied" "
g" "$out"
check_contains "symlinked device path: made inside the rootfs" "dev-ok" "$out"
check_contains "symlinked cwd: resolved inside the container" "$WORK/host1" "$out"
check_contains "symlinked destinations: the tmpfs is inside the container" " $WORK/host1/sub " "$out"
check_contains "symlinked destinations: the bind mount is inside the container" " $WORK/host2/sub " "$out"
[ -d "$WORK/b22/rootfs$WORK/host1/sub" ] && ok "symlinked destinations: created inside the rootfs" \
  || not_ok "symlinked destinations: not created inside the rootfs"
for bad in ../escape a/b . ..; do
  out=$(R create --bundle "$WORK/b22" "$bad" 2>&1); rc=$?
  check "container id \"$bad\": refused" 1 "$rc"
  check_contains "container id \"$bad\": named" "invalid container id" "$out"
done
[ ! -e "$WORK/escape" ] && ok "container id ../escape: nothing made beside the root" || not_ok "container id ../escape: made $WORK/escape"

# ---- a session keyring of the container's own -----------------------------
# Keyrings are not namespaced: the caller's session keyring (here one with a
# key in it) must not be the container's, unless --no-new-keyring.
cat >"$WORK/keyls.c" <<'C'
#include <linux/keyctl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
int main (void)
{
  long n = syscall (SYS_keyctl, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, NULL, 0);
  printf ("keys=%ld\n", n < 0 ? -1 : n / 4);
  return 0;
}
C
if cc -static -o "$WORK/keyls" "$WORK/keyls.c" 2>/dev/null; then
  make_bundle "$WORK/b23" 'c["process"]["args"] = ["/keyls"]' 'c["linux"].pop("seccomp", None)'
  cp "$WORK/keyls" "$WORK/b23/rootfs/keyls"
  # A fresh session keyring holding one key, for what is started from here.
  in_keyring () {
    python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
assert libc.syscall(250, 1, b"securer-test") > 0             # keyctl JOIN_SESSION_KEYRING
assert libc.syscall(248, b"user", b"securer-test-key", b"secret", 6, -3) > 0  # add_key to @s
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
  }
  check "keyring: the caller's session keyring has a key" "keys=1" "$(in_keyring "$WORK/keyls")"
  check "keyring: the container's session keyring is its own" "keys=0" \
    "$(in_keyring "$RUNC" --root "$ROOT" run --bundle "$WORK/b23" keyring 2>&1)"
  check "keyring: --no-new-keyring keeps the caller's" "keys=1" \
    "$(in_keyring "$RUNC" --root "$ROOT" run --no-new-keyring --bundle "$WORK/b23" keyring 2>&1)"
  make_bundle "$WORK/b23" 'c["process"]["args"] = ["sleep", "1000"]' 'c["linux"].pop("seccomp", None)'
  R run -d --bundle "$WORK/b23" keyexec
  check "keyring: an exec'd process's session keyring is its own" "keys=0" \
    "$(in_keyring "$RUNC" --root "$ROOT" exec keyexec /keyls 2>&1)"
  R delete --force keyexec
else
  echo "SKIP: keyring: no static C compiler to build its probe"
fi

# ---- update: a running container's cgroup limits changed in place --------
# (the kubelet's UpdateContainerResources); values read back from the
# cgroup, on v1 or v2 whichever holds the controller.
make_bundle "$WORK/b29" 'c["root"]["readonly"] = False' 'c["process"]["args"] = ["sleep", "1000"]' \
  'c["linux"]["cgroupsPath"] = "/securer-runc-test/upd"' \
  'c["linux"]["resources"]["memory"] = {"limit": 67108864}' 'c["linux"]["resources"]["pids"] = {"limit": 50}'
R run -d --bundle "$WORK/b29" upd
pid=$(R state upd | json_field pid)
cgf () { cat "$(cgroup_file "$pid" "$@")" 2>&1; }
mem_v1=$(cgroup_file "$pid" memory memory.limit_in_bytes memory.max)
case $mem_v1 in */memory.limit_in_bytes) V1MEM=1 ;; *) V1MEM= ;; esac
swapflag=
if [ -e "$(cgroup_file "$pid" memory memory.memsw.limit_in_bytes memory.swap.max)" ]; then
  swapflag="--memory-swap 192m"
fi
cpusetflags=
if [ -e "$(cgroup_file "$pid" cpuset cpuset.cpus cpuset.cpus)" ]; then
  cpusetflags="--cpuset-cpus 0 --cpuset-mems 0"
fi
# shellcheck disable=SC2086 # the optional flags are words
out=$(R update --memory 96m $swapflag --cpu-quota 50000 --cpu-period 200000 --cpu-share 512 \
  $cpusetflags --pids-limit 77 upd 2>&1); rc=$?
check "update (runc's flags): exit status" 0 "$rc"
[ "$rc" = 0 ] || echo "# $out"
check "update --memory 96m: the limit" 100663296 "$(cgf memory memory.limit_in_bytes memory.max)"
if [ -n "$swapflag" ]; then
  if [ -n "$V1MEM" ]; then
    check "update --memory-swap 192m: memory+swap (v1)" 201326592 "$(cgf memory memory.memsw.limit_in_bytes memory.swap.max)"
  else
    check "update --memory-swap 192m: swap alone (v2)" 100663296 "$(cgf memory memory.memsw.limit_in_bytes memory.swap.max)"
  fi
else
  echo "# update --memory-swap: no swap accounting in this memory controller, not tested"
fi
qf=$(cgroup_file "$pid" cpu cpu.cfs_quota_us cpu.max)
case $qf in
  */cpu.max) check "update --cpu-quota/--cpu-period: cpu.max" "50000 200000" "$(cat "$qf")"
    # runc's conversion of shares to a weight: 1 + (512 - 2) * 9999 / 262142.
    check "update --cpu-share 512: the weight" 20 "$(cgf cpu cpu.shares cpu.weight)" ;;
  *) check "update --cpu-quota: cfs_quota_us" 50000 "$(cat "$qf")"
    check "update --cpu-period: cfs_period_us" 200000 "$(cgf cpu cpu.cfs_period_us cpu.max)"
    check "update --cpu-share 512: the shares" 512 "$(cgf cpu cpu.shares cpu.weight)" ;;
esac
if [ -n "$cpusetflags" ]; then
  check "update --cpuset-cpus" 0 "$(cgf cpuset cpuset.cpus cpuset.cpus)"
  check "update --cpuset-mems" 0 "$(cgf cpuset cpuset.mems cpuset.mems)"
else
  echo "# update --cpuset-cpus: no cpuset controller for the container, not tested"
fi
check "update --pids-limit" 77 "$(cgf pids pids.max pids.max)"
echo '{"memory": {"limit": 33554432}, "pids": {"limit": 88}}' | R update -r - upd
check "update -r - (LinuxResources on stdin): exit status" 0 "$?"
check "update -r -: the memory limit" 33554432 "$(cgf memory memory.limit_in_bytes memory.max)"
check "update -r -: the pids limit" 88 "$(cgf pids pids.max pids.max)"
R exec upd dd if=/dev/zero of=/dev/null bs=64M count=1 >/dev/null 2>&1
check "update: the lowered limit holds (a 64 MiB allocation is killed)" 137 "$?"
echo '{"pids": {"limit": -1}}' >"$WORK/res.json"
R update --resources "$WORK/res.json" upd
check "update --resources FILE: exit status" 0 "$?"
check "update --resources FILE: pids unlimited" max "$(cgf pids pids.max pids.max)"
# The device rules are the container's own: sent again as they are (as
# containerd does), accepted; changed, refused.
python3 -c 'import json, sys; print(json.dumps({"devices": json.load(open(sys.argv[1]))["linux"]["resources"]["devices"], "pids": {"limit": 99}}))' \
  "$WORK/b29/config.json" | R update -r - upd
check "update: the device rules sent unchanged are accepted" 0 "$?"
check "update: ... and the rest applied" 99 "$(cgf pids pids.max pids.max)"
upd_refused () {
  name=$1 field=$2
  shift 2
  out=$("$@" 2>&1); rc=$?
  [ "$rc" != 0 ] && ok "update refused: $name (exit $rc)" || not_ok "update refused: $name was accepted"
  check_contains "update refused: $name names $field" "$field" "$out"
}
upd_refused "--memory abc" "--memory: \"abc\" is not a size" R update --memory abc upd
upd_refused "--cpu-share -5" "--cpu-share: \"-5\"" R update --cpu-share -5 upd
upd_refused "--pids-limit x" "--pids-limit" R update --pids-limit x upd
upd_refused "a negative cpu.shares" "linux.resources.cpu.shares: -5 is negative" \
  sh -c "echo '{\"cpu\": {\"shares\": -5}}' | $RUNC --root $ROOT update -r - upd"
upd_refused "blockIO" "linux.resources.blockIO" sh -c "echo '{\"blockIO\": {\"weight\": 10}}' | $RUNC --root $ROOT update -r - upd"
upd_refused "an unknown key" "linux.resources.memory.bogus" sh -c "echo '{\"memory\": {\"bogus\": 1}}' | $RUNC --root $ROOT update -r - upd"
upd_refused "a string for a number" "linux.resources.memory.limit: not an integer" \
  sh -c "echo '{\"memory\": {\"limit\": \"1g\"}}' | $RUNC --root $ROOT update -r - upd"
upd_refused "not JSON" "--resources (stdin)" sh -c "echo '{' | $RUNC --root $ROOT update -r - upd"
upd_refused "changed device rules" "linux.resources.devices" \
  sh -c "echo '{\"devices\": [{\"allow\": true, \"access\": \"rwm\"}]}' | $RUNC --root $ROOT update -r - upd"
upd_refused "a CPU the host lacks" "linux.resources.cpu.cpus" R update --cpuset-cpus 4095 upd
upd_refused "--resources with a flag" "cannot be combined" R update -r "$WORK/res.json" --memory 1g upd
upd_refused "--l3-cache-schema" "linux.intelRdt" R update --l3-cache-schema L3:0=f upd
upd_refused "--blkio-weight" "linux.resources.blockIO" R update --blkio-weight 10 upd
check "update refused: nothing changed by the refusals" 99 "$(cgf pids pids.max pids.max)"
check "update refused: the memory limit as it was" 33554432 "$(cgf memory memory.limit_in_bytes memory.max)"
R pause upd
R update --pids-limit 55 upd
check "update of a paused container: exit status" 0 "$?"
check "update of a paused container: applied" 55 "$(cgf pids pids.max pids.max)"
check "update of a paused container: still paused" paused "$(R state upd | json_field status)"
R resume upd
R delete --force upd
# As runc: a created container may be updated, a stopped one not.
make_bundle "$WORK/b29" 'c["process"]["args"] = ["true"]' 'c["linux"]["cgroupsPath"] = "/securer-runc-test/upd2"'
R create --bundle "$WORK/b29" upd2 >/dev/null 2>&1
pid=$(R state upd2 | json_field pid)
R update --pids-limit 33 upd2
check "update of a created container: exit status" 0 "$?"
check "update of a created container: applied" 33 "$(cgf pids pids.max pids.max)"
R start upd2
for _ in $(seq 100); do [ "$(R state upd2 | json_field status)" = stopped ] && break; sleep 0.05; done
upd_refused "a stopped container" "is not running (stopped)" R update --pids-limit 44 upd2
R delete upd2
upd_refused "a container that does not exist" "does not exist" R update --pids-limit 44 nosuch

# ---- fail closed: what securer cannot do is refused, the field named -----
refused () {
  name=$1
  field=$2
  shift 2
  make_bundle "$WORK/bx" "$@"
  out=$(R create --bundle "$WORK/bx" refused 2>&1); rc=$?
  [ "$rc" != 0 ] && ok "refused: $name (exit $rc)" || not_ok "refused: $name was accepted"
  check_contains "refused: $name names $field" "$field" "$out"
  [ ! -e "$ROOT/refused" ] && ok "refused: $name leaves no state" || not_ok "refused: $name left state"
}
make_bundle "$WORK/bx" 'c["process"]["args"] = ["true"]'
for bad in abc -1 3x 99999999999; do
  R create --preserve-fds "$bad" --bundle "$WORK/bx" preserve >"$WORK/bx.out" 2>&1
  rc=$?
  out=$(cat "$WORK/bx.out")
  check "--preserve-fds $bad: refused" 1 "$rc"
  check_contains "--preserve-fds $bad: named" "--preserve-fds \"$bad\"" "$out"
  [ ! -e "$ROOT/preserve" ] && ok "--preserve-fds $bad: no state left" || not_ok "--preserve-fds $bad: state left"
  R delete --force preserve >/dev/null 2>&1
done
refused "intelRdt" "linux.intelRdt" 'c["linux"]["intelRdt"] = {"closID": "x"}'
refused "host sysctl" "linux.sysctl.kernel.randomize_va_space" 'c["linux"]["sysctl"] = {"kernel.randomize_va_space": "0"}'
refused "AppArmor label" "process.apparmorProfile" 'c["process"]["apparmorProfile"] = "docker-default"'
refused "seccomp listener" "linux.seccomp.listenerPath" 'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "/run/x.sock"}'
refused "seccomp notify" "linux.seccomp.syscalls[0].action" 'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_NOTIFY"}]}'
refused "report-denials without seccomp" "annotations.run.securer.report-denials" \
  "c['annotations'] = {'run.securer.report-denials': '$WORK/x.log'}"
refused "unknown annotation" "annotations.run.securer.bogus" 'c["annotations"] = {"run.securer.bogus": "1"}'
refused "blockIO" "linux.resources.blockIO" 'c["linux"]["resources"]["blockIO"] = {"weight": 10}'
refused "unknown capability" "process.capabilities.bounding[0]" 'c["process"]["capabilities"]["bounding"] = ["CAP_FLY"]'
refused "mount type" "mounts[0].type" 'c["mounts"][0]["type"] = "overlay"'
refused "recursive read-only bind" "rro" \
  'c["mounts"].append({"destination": "/mnt", "type": "bind", "source": "/tmp", "options": ["rbind", "rro"]})'

echo "$fails failure(s)"
[ "$fails" = 0 ]
