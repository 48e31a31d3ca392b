#!/usr/bin/env python3
"""Speed of the Python binding (doc/performance.md, "Python").

1. Per-event pushes: Session.read()/write() (and begin/end, acquire/release) on a 2PL mix,
   in ns an event and M events/s, with the `null` checker and with `aerodrome`.
2. Session.push_many(): the same mix packed into buffers of several sizes, in M events/s.
3. The tracer: `python -m atomicity run -c null py_workload.py` against the plain program (the
   slowdown ratio, both measured in this run); skipped with a line saying so when
   `python -m atomicity run` is not available.

Each figure is the best of --repeat runs. Run it from meson (`meson test --benchmark
python-binding`) or by hand:
    ATOMICITY_LIBRARY=build/lib/libatomicity.so.1 PYTHONPATH=bindings/python \\
        python3 tests/bench/bench_python.py
"""

import argparse
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir, "bindings", "python"))
# The package on PYTHONPATH when there is one (meson sets it to this tree's), else this tree's.
if BINDING not in sys.path:
    sys.path.append(BINDING)

import atomicity  # noqa: E402

READ, WRITE, ACQUIRE, RELEASE, BEGIN, END = 1, 2, 3, 4, 7, 8


def mix(threads=8, vars_=1000, locks=16, txn_len=10, txns=800):
    """The 2PL shape of bench_push: each transaction takes lock v mod L for the variables v it
    touches (all of one lock), makes txn_len - 4 accesses (30 % writes), releases, ends; the
    threads' transactions interleave round-robin. Conflict serializable (no report), so the
    checkers run their steady state. Returns (kind, thread, target, loc) tuples; the events
    of one round of transactions can be repeated any number of times."""
    state = 12345
    out = []
    per_lock = vars_ // locks
    for i in range(txns):
        t = i % threads + 1
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        lock = state % locks
        out.append((BEGIN, t, 0, 1))
        out.append((ACQUIRE, t, lock + 1, 2))
        for _ in range(txn_len - 4):
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
            var = lock + locks * (state % per_lock) + 1
            kind = WRITE if state % 10 < 3 else READ
            out.append((kind, t, var, 3))
        out.append((RELEASE, t, lock + 1, 4))
        out.append((END, t, 0, 5))
    return out


def best(repeat, fn):
    return min(fn() for _ in range(repeat))


def per_event(checker, events, rounds):
    session = atomicity.Session(checker)
    methods = {READ: session.read, WRITE: session.write, ACQUIRE: session.acquire,
               RELEASE: session.release}
    begin, end = session.begin, session.end
    calls = [(methods[k], t, x, loc) if k not in (BEGIN, END)
             else ((begin if k == BEGIN else end), t, None, loc) for k, t, x, loc in events]
    start = time.perf_counter()
    for _ in range(rounds):
        for fn, t, x, loc in calls:
            if x is None:
                fn(t, loc)
            else:
                fn(t, x, loc)
    elapsed = time.perf_counter() - start
    session.close()
    return elapsed / (rounds * len(events))


def batch(checker, block, copies, total):
    """Seconds an event for push_many of `copies` copies of `block` per call."""
    data = block * copies
    n = len(data) // atomicity.EVENT_SIZE
    calls = max(1, total // n)
    session = atomicity.Session(checker)
    start = time.perf_counter()
    for _ in range(calls):
        session.push_many(data)
    session.finish()
    elapsed = time.perf_counter() - start
    session.close()
    return elapsed / (calls * n)


def tracer(python, workload, scale, repeat, env):
    probe = subprocess.run([python, "-m", "atomicity", "run", "--help"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        print("tracer: skipped (`%s -m atomicity run` is not available)" % python)
        return

    def run(cmd):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start

    work = [workload, "--scale", repr(scale)]
    plain = best(repeat, lambda: run([python] + work))
    traced = best(repeat, lambda: run([python, "-m", "atomicity", "run", "-c", "null",
                                        "--report", os.devnull, "--"] + work))
    print("tracer: %s plain %.2f s, `-m atomicity run -c null` %.2f s: slowdown %.1fx"
          % (os.path.basename(workload), plain, traced, traced / plain))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--events", type=float, default=1e7,
                        help="events per push_many measurement (default 1e7)")
    parser.add_argument("--single-events", type=float, default=2e5,
                        help="events per per-event measurement (default 2e5)")
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter for the tracer part (default: this one)")
    parser.add_argument("--workload", default=os.path.join(HERE, "py_workload.py"))
    parser.add_argument("--copies", default="1,16,256",
                        help="push_many buffer sizes, in copies of the %d-event mix" % len(mix()))
    parser.add_argument("--workload-scale", type=float, default=1.0,
                        help="--scale of the workload (default 1: about 1-2 s plain)")
    parser.add_argument("--skip-tracer", action="store_true")
    args = parser.parse_args()

    print("python %s, library %s (%s)" % (sys.version.split()[0], atomicity.library_version(),
                                          atomicity.library_path()))
    events = mix()
    rounds = max(1, int(args.single_events) // len(events))
    for checker in ("null", "aerodrome"):
        t = best(args.repeat, lambda: per_event(checker, events, rounds))
        print("per-event push (read/write/acquire/release/begin/end), %-9s %6.0f ns/event "
              "%6.2f M events/s" % (checker, t * 1e9, 1e-6 / t))

    event = struct.Struct(atomicity.EVENT_FORMAT)
    block = b"".join(event.pack(k, 0, t, x, loc) for k, t, x, loc in events)
    total = int(args.events)
    for checker in ("null", "aerodrome"):
        for copies in [int(c) for c in args.copies.split(",")]:
            n = copies * len(events)
            t = best(args.repeat, lambda: batch(checker, block, copies, total))
            print("push_many, %-9s %8d events a call: %6.2f ns/event %7.1f M events/s"
                  % (checker, n, t * 1e9, 1e-6 / t))

    if not args.skip_tracer:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), BINDING) if p)
        env.setdefault("ATOMICITY_LIBRARY", atomicity.library_path())
        tracer(args.python, args.workload, args.workload_scale, args.repeat, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
