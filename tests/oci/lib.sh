# Shared by the securer-runc tests: a busybox rootfs (busybox-static), a
# bundle made from `securer-runc spec`, and assertions.  Sourced.
: "${SECURER_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
RUNC=${SECURER_RUNC_BIN:-$SECURER_BUILDDIR/securer-runc}
BUSYBOX=${BUSYBOX:-/bin/busybox}
fails=0

skip_unless_ready () {
  if [ "$(id -u)" != 0 ]; then
    echo "SKIP: securer-runc runs containers as root only"
    exit 77
  fi
  if ! [ -x "$BUSYBOX" ] || ! file_is_static "$BUSYBOX"; then
    echo "SKIP: no static busybox at $BUSYBOX (Debian: busybox-static)"
    exit 77
  fi
  if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 not found"
    exit 77
  fi
}

file_is_static () {
  LC_ALL=C ldd "$1" 2>&1 | grep -q "not a dynamic executable"
}

# make_rootfs DIR: busybox and a link per applet, the directories engines
# mount on.
make_rootfs () {
  mkdir -p "$1/bin" "$1/proc" "$1/sys" "$1/dev" "$1/etc" "$1/tmp" "$1/run"
  cp "$BUSYBOX" "$1/bin/busybox"
  for a in $("$BUSYBOX" --list); do
    [ -e "$1/bin/$a" ] || ln -s busybox "$1/bin/$a"
  done
  echo "root:x:0:0:root:/:/bin/sh" >"$1/etc/passwd"
  echo "root:x:0:" >"$1/etc/group"
}

# make_bundle DIR PYTHON-EXPR...: `securer-runc spec` with terminal off,
# then each expression applied to the config `c` (a dict).
make_bundle () {
  dir=$1
  shift
  mkdir -p "$dir"
  [ -d "$dir/rootfs" ] || cp -a "$WORK/rootfs" "$dir/rootfs"
  rm -f "$dir/config.json"
  "$RUNC" spec --bundle "$dir" || return 1
  python3 - "$dir/config.json" "$@" <<'PY'
import json, sys
path = sys.argv[1]
c = json.load(open(path))
c["process"]["terminal"] = False
for expr in sys.argv[2:]:
    exec(expr)
json.dump(c, open(path, "w"), indent=1)
PY
}

# proc_start PID: its start time (field 22 of /proc/PID/stat; the name,
# field 2, may hold spaces), which tells it from a later process that is
# given the same pid once it is gone.
proc_start () {
  sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20
}

# proc_running PID START: the process that started at START still runs
# (a zombie does not).
proc_running () {
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
  [ "$(echo "$st" | cut -d' ' -f20)" = "$2" ] && [ "$(echo "$st" | cut -d' ' -f1)" != Z ]
}

# cgroup_file PID CONTROLLER FILE-V1 FILE-V2: the path of a control file of
# the process's cgroup, from a v1 hierarchy of that controller when the host
# has one, else from the unified hierarchy.
cgroup_file () {
  v1=$(awk -F: -v c="$2" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' "/proc/$1/cgroup")
  if [ -n "$v1" ] && [ -d "/sys/fs/cgroup/$2" ]; then
    echo "/sys/fs/cgroup/$2$v1/$3"
    return
  fi
  v2=$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup")
  mnt=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
  echo "$mnt$v2/$4"
}

ok () { echo "ok - $1"; }
not_ok () {
  echo "not ok - $1"
  fails=$((fails + 1))
}
# check NAME EXPECTED ACTUAL
check () {
  if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: expected [$2], got [$3]"; fi
}
# check_contains NAME NEEDLE HAYSTACK
check_contains () {
  case $3 in
    *"$2"*) ok "$1" ;;
    *) not_ok "$1: [$2] not in [$3]" ;;
  esac
}

# json_field KEY: one field of the JSON object on stdin ("" when there is
# none, or no JSON: a container not made yet).
json_field () {
  python3 -c '
import json, sys
try:
    v = json.load(sys.stdin).get(sys.argv[1])
except ValueError:
    v = None
print(v if v is not None else "")' "$1"
}

# Re-runs the calling script under a child subreaper that reaps what is
# orphaned to it, as conmon and containerd's shim do: containers created
# here outlive the securer-runc that made them.
under_subreaper () {
  if [ -z "${SECURER_TEST_REAPER:-}" ]; then
    SECURER_TEST_REAPER=1 exec python3 -c '
import ctypes, os, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
main = os.fork()
if main == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
code = 1
while True:
    try:
        pid, status = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    if pid == main:
        code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
' "$@"
  fi
}
