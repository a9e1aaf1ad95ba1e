#!/usr/bin/env python3
"""Scale and soak benchmarks of `securer serve` (results: docs/benchmarks.md).

scale: for each N (default 1, 8, 32, 64) a fresh `securer serve` gets N
  "open" requests at once; reported: the time until every session is ready,
  the PSS of each session's processes (its R and its securer-init, from
  /proc/PID/smaps_rollup), and the round trip of `execute` while all N
  sessions are busy (each session always has one execution in flight).

oneshot: one `securer serve`, RUNS times in a row: open a session, execute
  "1 + 1", close it -- what execute_r() costs on a server that is already
  running; reported: the first run (which starts the policy's template when
  sessions start from one) and the median and p90 of the others, open to
  result and open to closed.

soak: one `securer serve`, S sessions, COUNT mixed requests kept in flight
  one per session: values, tool calls answered by this script, R errors,
  timeouts, R killing itself, output past the server's caps, results and
  tool calls past the message size, R flooding its channel with a line past
  it, and malformed requests.  Every reply is checked against
  what its request must give; reported: answered / correct / lost per kind,
  and serve's RSS and descriptor count sampled along the way.

Extra arguments for `securer serve` (e.g. a policy) follow `--`.
"""
import argparse
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import threading
import time


def now():
    return time.monotonic()


class Serve:
    """A `securer serve` child speaking JSON lines over pipes; a reader
    thread queues everything it prints."""

    def __init__(self, binary, extra):
        self.p = subprocess.Popen([binary, "serve"] + extra, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, bufsize=0)
        self.q = queue.Queue()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()
        self.next_id = 0

    def _read(self):
        buf = b""
        while True:
            chunk = self.p.stdout.read(1 << 16)
            if not chunk:
                self.q.put(None)
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    self.q.put(json.loads(line))
                except ValueError:
                    self.q.put({"unparsable": line[:200].decode("utf-8", "replace")})

    def send_raw(self, text):
        self.p.stdin.write(text.encode() + b"\n")

    def send(self, obj):
        self.next_id += 1
        obj = dict(obj, id=self.next_id)
        self.send_raw(json.dumps(obj))
        return self.next_id

    def get(self, timeout):
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self):
        try:
            self.send_raw('{"op":"shutdown"}')
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def children(pid):
    """Every descendant of pid (host pids)."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        ppid = int(st[st.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def pss_kb(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return "?"


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def ns_depth(pid):
    """How many pid namespaces deep pid is (the NSpid field's length)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return len(line.split()) - 1
    except OSError:
        pass
    return 0


def rss_fds(pid):
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return rss, len(os.listdir("/proc/%d/fd" % pid))


# ---- scale ------------------------------------------------------------------

def scale_one(args, n):
    s = Serve(args.securer, args.serve_args)
    t0 = now()
    for _ in range(n):
        s.send({"op": "open"})
    sessions = []
    while len(sessions) < n:
        m = s.get(args.start_timeout)
        if m is None:
            sys.exit("scale N=%d: serve gave up or stalled after %d sessions" % (n, len(sessions)))
        if "id" in m:
            if not m.get("ok"):
                sys.exit("scale N=%d: open failed: %s" % (n, m.get("error")))
            sessions.append(m["session"])
    ready = now() - t0
    time.sleep(0.5)  # idle: let start-up garbage settle before reading PSS
    procs = children(s.p.pid)
    # A template's R (sessions forked from it are one pid namespace deeper)
    # is counted apart: it is shared by every session of its policy.
    rs = [p for p in procs if comm(p) == "R"]
    deepest = max([ns_depth(p) for p in rs] or [0])
    tpl = [p for p in rs if ns_depth(p) < deepest]
    r_pss = [pss_kb(p) for p in rs if p not in tpl]
    tpl_pss = [pss_kb(p) for p in tpl]
    other_pss = [pss_kb(p) for p in procs if comm(p) != "R"]
    # Warm executions while every session is busy: one always in flight
    # per session, `rounds` each after `warmup` uncounted ones (a session's
    # first executions are slower: R byte-compiles and loads lazily).
    lat, inflight = [], {}
    left = {sid: args.rounds + args.warmup for sid in sessions}
    busy0 = now()
    for sid in sessions:
        inflight[s.send({"op": "execute", "session": sid, "code": "1 + 1"})] = (sid, now())
        left[sid] -= 1
    while inflight:
        m = s.get(60)
        if m is None:
            sys.exit("scale N=%d: executions stalled" % n)
        if "id" not in m:
            continue
        sid, t = inflight.pop(m["id"])
        if not m.get("ok") or m["result"]["status"] != "ok":
            sys.exit("scale N=%d: execute failed: %s" % (n, json.dumps(m)[:300]))
        if left[sid] < args.rounds:
            lat.append(now() - t)
        if left[sid] > 0:
            left[sid] -= 1
            inflight[s.send({"op": "execute", "session": sid, "code": "1 + 1"})] = (sid, now())
    busy = now() - busy0
    s.close()
    return {
        "n": n, "ready_s": ready, "rate": n * (args.rounds + args.warmup) / busy,
        "r_pss_mb": statistics.mean(r_pss) / 1024 if r_pss else float("nan"),
        "other_pss_mb": sum(other_pss) / 1024 / max(1, n),
        "n_r": len(r_pss), "tpl_pss_mb": sum(tpl_pss) / 1024,
        "p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3, "execs": len(lat),
    }


def scale(args):
    rows = [scale_one(args, n) for n in args.sizes]
    print("| N | all ready | per session | R PSS (mean) | init PSS per session | template R PSS | execute p50 | p99 | executions | executions/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %.2f s | %.1f ms | %.1f MB | %.2f MB | %.1f MB | %.2f ms | %.2f ms | %d | %.0f |"
              % (r["n"], r["ready_s"], r["ready_s"] * 1e3 / r["n"], r["r_pss_mb"],
                 r["other_pss_mb"], r["tpl_pss_mb"], r["p50_ms"], r["p99_ms"], r["execs"], r["rate"]))


# ---- oneshot ----------------------------------------------------------------

def reply(s, rid, timeout):
    while True:
        m = s.get(timeout)
        if m is None:
            sys.exit("oneshot: serve gave up or stalled")
        if m.get("id") == rid:
            if not m.get("ok"):
                sys.exit("oneshot: %s" % json.dumps(m)[:300])
            return m


def oneshot(args):
    s = Serve(args.securer, args.serve_args)
    to_result, to_closed, start = [], [], None
    for i in range(args.runs + 1):
        t0 = now()
        m = reply(s, s.send({"op": "open"}), args.start_timeout)
        sid, start = m["session"], m.get("start", "?")
        m = reply(s, s.send({"op": "execute", "session": sid, "code": "1 + 1"}), 60)
        if m["result"]["status"] != "ok":
            sys.exit("oneshot: execute failed: %s" % json.dumps(m)[:300])
        t1 = now()
        reply(s, s.send({"op": "close", "session": sid}), 60)
        t2 = now()
        if i == 0:
            first = (t1 - t0, t2 - t0)
        else:
            to_result.append(t1 - t0)
            to_closed.append(t2 - t0)
    s.close()
    print("| serve args | start | first run: to result, to closed | open to result p50 | p90 | open to closed p50 | p90 | runs |")
    print("|---|---|---|---|---|---|---|---|")
    print("| %s | %s | %.1f ms, %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %d |"
          % (" ".join(args.serve_args) or "(none)", start, first[0] * 1e3, first[1] * 1e3,
             pct(to_result, 50) * 1e3, pct(to_result, 90) * 1e3, pct(to_closed, 50) * 1e3,
             pct(to_closed, 90) * 1e3, len(to_result)))


# ---- soak -------------------------------------------------------------------

TOOLS = [{"name": "add", "args": {"a": "numeric", "b": "numeric"}},
         {"name": "echo", "args": {"x": "any"}}]

# kind: (weight, request fields, check(reply) -> bool)
def _res(m):
    return m.get("ok") and m.get("result") or {}


KINDS = {
    "value": (40, {"code": "x <- c(a = 1L, b = 2L); x * 3L", "plain": True},
              lambda m: _res(m).get("status") == "ok" and _res(m).get("value") == {"a": 3, "b": 6}),
    "tool": (20, {"code": "add(2, 3) * 10", "plain": True},
             lambda m: _res(m).get("status") == "ok" and _res(m).get("value") == 50
             and _res(m).get("tool_calls") == 1),
    "error": (15, {"code": "stop('boom')"},
              lambda m: _res(m).get("status") == "error" and "boom" in _res(m).get("error", "")),
    "big_output": (5, {"code": "for (i in 1:30) cat(strrep('y', 50000), '\\n')"},
                   lambda m: _res(m).get("status") == "ok" and _res(m).get("output_truncated") is True),
    "big_value": (5, {"code": "strrep('z', 2e6)"},
                  lambda m: _res(m).get("status") == "too_large"),
    # A tool call whose arguments exceed the message size: refused by the
    # runtime before it is sent.
    "big_call": (2, {"code": "echo(strrep('q', 2e6))"},
                 lambda m: _res(m).get("status") == "error" and "too large" in _res(m).get("error", "")),
    # R writing a 2 MB line straight to its channel: the host stops reading
    # at the limit and ends that R.
    "flood": (1, {"code": "con <- file('stdin', 'w'); writeLines(strrep('q', 2e6), con); flush(con); Sys.sleep(5)"},
              lambda m: _res(m).get("status") == "crashed" and "exceeds the limit" in _res(m).get("error", "")),
    "malformed": (10, None, lambda m: m.get("ok") is False and m.get("error")),
    "timeout": (1, {"code": "Sys.sleep(10)", "timeout": 0.2},
                lambda m: _res(m).get("status") == "timeout"),
    "suicide": (1, {"code": "tools::pskill(Sys.getpid(), tools::SIGKILL); Sys.sleep(5)"},
                lambda m: _res(m).get("status") == "crashed"),
}

MALFORMED = ['{"op":', '{"op":"bogus","id":%d}', '[1,2,3]', '{"op":"execute","id":%d}',
             '{"op":"execute","id":%d,"session":"sess_nonexistent","code":"1"}',
             '{"op":"tool_result","id":%d,"session":"sess_nonexistent","call_id":"x"}']


def soak(args):
    rnd = random.Random(args.seed)
    names = list(KINDS)
    weights = [KINDS[k][0] for k in names]
    s = Serve(args.securer, args.serve_args)
    for _ in range(args.sessions):
        s.send({"op": "open", "tools": TOOLS})
    sessions = []
    while len(sessions) < args.sessions:
        m = s.get(args.start_timeout)
        if m is None or not m.get("ok"):
            sys.exit("soak: open failed: %s" % m)
        sessions.append(m["session"])
    stats = {k: {"sent": 0, "answered": 0, "correct": 0, "wrong": []} for k in names}
    samples = [(0, now()) + rss_fds(s.p.pid)]
    t0 = now()
    inflight = {}        # id -> (kind, session or None)
    busy = set()
    sent = 0
    done = 0
    unexpected = 0

    def send_next(sid):
        nonlocal sent
        kind = rnd.choices(names, weights)[0]
        stats[kind]["sent"] += 1
        sent += 1
        if kind == "malformed":
            tpl = rnd.choice(MALFORMED)
            if "%d" in tpl:
                s.next_id += 1
                rid = s.next_id
                s.send_raw(tpl % rid)
            else:
                rid = None       # answered with "id": null
                s.send_raw(tpl)
            inflight.setdefault(rid, []).append((kind, sid))
            return
        req = dict(KINDS[kind][1], op="execute", session=sid)
        rid = s.send(req)
        inflight.setdefault(rid, []).append((kind, sid))

    for sid in sessions:
        busy.add(sid)
        send_next(sid)
    while inflight:
        m = s.get(args.reply_timeout)
        if m is None:
            break
        if "event" in m:
            if m["event"] == "tool_call":
                a = m["args"]
                s.send_raw(json.dumps({"op": "tool_result", "session": m["session"],
                                       "call_id": m["call_id"], "value": a["a"] + a["b"]}))
            continue
        rid = m.get("id")
        if rid not in inflight:
            unexpected += 1
            continue
        kind, sid = inflight[rid].pop(0)
        if not inflight[rid]:
            del inflight[rid]
        st = stats[kind]
        st["answered"] += 1
        if KINDS[kind][2](m):
            st["correct"] += 1
        elif len(st["wrong"]) < 3:
            st["wrong"].append(json.dumps(m)[:300])
        done += 1
        if done % args.sample_every == 0:
            samples.append((done, now()) + rss_fds(s.p.pid))
        if sent < args.count:
            send_next(sid)
    elapsed = now() - t0
    samples.append((done, now()) + rss_fds(s.p.pid))
    s.close()

    print("%d requests in %.1f s over %d sessions (%s)" % (sent, elapsed, args.sessions,
                                                        " ".join(args.serve_args) or "defaults"))
    print()
    print("| kind | sent | answered | correct | lost |")
    print("|---|---|---|---|---|")
    tot = [0, 0, 0, 0]
    for k in names:
        st = stats[k]
        lost = st["sent"] - st["answered"]
        print("| %s | %d | %d | %d | %d |" % (k, st["sent"], st["answered"], st["correct"], lost))
        tot = [a + b for a, b in zip(tot, [st["sent"], st["answered"], st["correct"], lost])]
    print("| **all** | %d | %d | %d | %d |" % tuple(tot))
    if unexpected:
        print("\nreplies to no request: %d" % unexpected)
    for k in names:
        for w in stats[k]["wrong"]:
            print("\nwrong %s: %s" % (k, w))
    print()
    print("| replies | time | serve RSS | serve fds |")
    print("|---|---|---|---|")
    for d, t, rss, fds in samples:
        print("| %d | %.0f s | %.1f MB | %d |" % (d, t - samples[0][1], rss / 1024, fds))
    if tot[0] != tot[2]:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--securer", default=os.environ.get("SECURER_BIN", "securer"))
    ap.add_argument("--start-timeout", type=float, default=120)
    sub = ap.add_subparsers(dest="mode", required=True)
    sc = sub.add_parser("scale")
    sc.add_argument("--sizes", type=lambda v: [int(x) for x in v.split(",")], default=[1, 8, 32, 64])
    sc.add_argument("--rounds", type=int, default=40, help="executions per session while all are busy")
    sc.add_argument("--warmup", type=int, default=3, help="uncounted executions per session before them")
    os_ = sub.add_parser("oneshot")
    os_.add_argument("--runs", type=int, default=50)
    so = sub.add_parser("soak")
    so.add_argument("--count", type=int, default=10000)
    so.add_argument("--sessions", type=int, default=8)
    so.add_argument("--sample-every", type=int, default=1000)
    so.add_argument("--seed", type=int, default=1)
    so.add_argument("--reply-timeout", type=float, default=60)
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    args.serve_args = extra
    {"scale": scale, "oneshot": oneshot, "soak": soak}[args.mode](args)


if __name__ == "__main__":
    main()
