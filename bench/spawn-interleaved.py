#!/usr/bin/env python3
# Spawn latency like bench/spawn.sh, for a machine whose load changes while
# it runs: each round runs every command once, starting at a rotating
# position, so a burst of other work hits all commands alike, and the
# ratios to bubblewrap come from the same rounds.  Prints median and mean
# wall time (including a small constant of this driver's posix_spawn).
#
#   SECURER_BIN   the securer binary (default: ./securer)
#   BASELINE_BIN  another securer binary to time next to it
#   RUNS          rounds (default: 200; 20 more are discarded as warm-up)
#   EXTRA_POLICIES  more policies (names or files, separated by spaces) to
#                 time with SECURER_BIN, e.g. bench/minimal-pid-proc.policy
import os, statistics, sys, time

here = os.path.dirname(os.path.abspath(__file__))
securer = os.environ.get("SECURER_BIN", "./securer")
rounds = int(os.environ.get("RUNS", "200"))
bwrap = ("bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --symlink usr/lib /lib "
         "--symlink usr/lib64 /lib64 --symlink usr/bin /bin --proc /proc --dev /dev --tmpfs /tmp /bin/true").split()
equiv = os.path.join(here, "bwrap-equivalent.policy")
masked = os.path.join(here, "bwrap-equivalent-masked.policy")


def securer_cmds(label, binary):
    return [("%s minimal" % label, [binary, "run", "--policy", "minimal", "--", "/bin/true"]),
            ("%s bwrap-equivalent" % label, [binary, "run", "--policy", equiv, "--", "/bin/true"]),
            ("%s bwrap-eq. masked" % label, [binary, "run", "--policy", masked, "--", "/bin/true"])]


cmds = securer_cmds("securer", securer)
for pol in os.environ.get("EXTRA_POLICIES", "").split():
    cmds.append(("securer %s" % os.path.basename(pol), [securer, "run", "--policy", pol, "--", "/bin/true"]))
if os.environ.get("BASELINE_BIN"):
    cmds += securer_cmds("baseline", os.environ["BASELINE_BIN"])
cmds += [("bwrap", ["/usr/bin/bwrap"] + bwrap[1:]), ("bare /bin/true", ["/bin/true"])]

devnull = os.open("/dev/null", os.O_RDWR)
actions = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]


def run(argv):
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit("failed (status %d): %s" % (status, " ".join(argv)))
    return time.perf_counter() - t0


# A command that fails here (a baseline build older than a policy line,
# bwrap missing) is left out, and said so.
kept = []
for name, argv in cmds:
    try:
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
        ok = os.waitpid(pid, 0)[1] == 0
    except OSError:
        ok = False
    if ok:
        kept.append((name, argv))
    else:
        print("# left out (fails here): %s" % " ".join(argv), file=sys.stderr)
cmds = kept
times = {name: [] for name, _ in cmds}
for i in range(20 + rounds):
    k = i % len(cmds)
    for name, argv in cmds[k:] + cmds[:k]:
        t = run(argv)
        if i >= 20:
            times[name].append(t)

print("# spawn latency, %d interleaved rounds, %s, %d CPUs, load %s" %
      (rounds, os.uname().release, os.cpu_count(), " ".join(open("/proc/loadavg").read().split()[:3])))
b_med, b_mean = statistics.median(times["bwrap"]), statistics.mean(times["bwrap"])
for name, _ in cmds:
    med, mean = statistics.median(times[name]), statistics.mean(times[name])
    print("%-28s median %6.2f ms  mean %6.2f ms   x bwrap: median %.2f, mean %.2f"
          % (name, med * 1e3, mean * 1e3, med / b_med, mean / b_mean))
