#!/usr/bin/env python3
# Where the wall time of one launch goes: runs a command under
# `perf record` with a few scheduler and syscall tracepoints (root), finds
# the steps of the launch in the trace and prints the median time from the
# start of the traced command to each step, over RUNS launches.
#
#   python3 bench/spawn-phases.py [POLICY]     securer run --policy POLICY -- /bin/true
#   python3 bench/spawn-phases.py --bwrap      bubblewrap's command of bench/spawn.sh
#
#   SECURER_BIN   the securer binary (default: ./securer)
#   RUNS          launches (default: 30)
#
# The tracepoints cost a few microseconds each; the steps' order and the
# gaps between them are what to read, not the absolute total.
import os, re, statistics, subprocess, sys, tempfile

securer = os.environ.get("SECURER_BIN", "./securer")
runs = int(os.environ.get("RUNS", "30"))
arg = sys.argv[1] if len(sys.argv) > 1 else "minimal"
bwrap = ("bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --symlink usr/lib /lib "
         "--symlink usr/lib64 /lib64 --symlink usr/bin /bin --proc /proc --dev /dev --tmpfs /tmp /bin/true").split()
cmd = bwrap if arg == "--bwrap" else [securer, "run", "--policy", arg, "--", "/bin/true"]
events = ["sched:sched_process_exec", "sched:sched_process_exit",
          "syscalls:sys_enter_clone3", "syscalls:sys_enter_pivot_root", "syscalls:sys_enter_umount",
          "syscalls:sys_exit_umount", "syscalls:sys_enter_seccomp", "syscalls:sys_enter_execve",
          "syscalls:sys_enter_execveat", "syscalls:sys_exit_unshare", "syscalls:sys_exit_setns"]
line_re = re.compile(r"\s*(\S+)\s+(\d+)\s+([\d.]+):\s+\S+:(\S+):\s*(.*)")


def steps(trace):
    evs = []
    for line in trace.splitlines():
        m = line_re.match(line)
        if m:
            evs.append((float(m.group(3)) * 1e3, int(m.group(2)), m.group(4), m.group(5)))
    t0, launcher = evs[0][0], evs[0][1]
    def first(name, tid=None, text=None, last=False):
        hit = None
        for t, i, n, rest in evs:
            if n == name and (tid is None or i == tid) and (text is None or text in rest):
                hit = t - t0
                if not last:
                    break
        return hit
    out = [("first syscall of the launcher", 0.0),
           ("clone3 (the sandbox's child)", first("sys_enter_clone3", launcher))]
    # pid 1 makes the network namespace (after the cgroup one, which it
    # unshares first) while the payload builds the mounts; the payload
    # joins it after pid 1 has become securer-init.
    out.append(("pid 1: network namespace made", first("sys_exit_unshare", last=True)))
    out.append(("pid 1 execs securer-init", first("sys_enter_execveat")))
    who = "" if arg == "--bwrap" else "payload: "
    out.append((who + "pivot_root", first("sys_enter_pivot_root")))
    out.append((who + "old root detached", first("sys_exit_umount")))
    out.append(("payload joins the network namespace", first("sys_exit_setns")))
    # The launcher asks seccomp(2) about the kernel first; the payload's
    # filter is the last call.
    out.append(("payload loads seccomp", first("sys_enter_seccomp", last=True)))
    out.append(("/bin/true starts", first("sched_process_exec", text="filename=/bin/true")))
    out.append(("/bin/true exits", first("sched_process_exit", text="comm=true")))
    out.append(("launcher exits", first("sched_process_exit", launcher)))
    return [(k, v) for k, v in out if v is not None]


got = {}
order = []
with tempfile.TemporaryDirectory() as d:
    data = os.path.join(d, "perf.data")
    for _ in range(runs):
        subprocess.run(["perf", "record", "-q", "-o", data, "-e", ",".join(events), "--"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        trace = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,time,event,trace"],
                               capture_output=True, text=True, check=True).stdout
        for k, v in steps(trace):
            if k not in got:
                order.append(k)
            got.setdefault(k, []).append(v)
print("# %s, %d launches, load %s" % (" ".join(cmd), runs, open("/proc/loadavg").read().split()[0]))
for k in order:
    print("%-32s median %6.2f ms  (%d of %d launches)" % (k, statistics.median(got[k]), len(got[k]), runs))
