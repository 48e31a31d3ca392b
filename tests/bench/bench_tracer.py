"""The access tracer's own cost: py_workload's worker, plain and traced with a do-nothing sink.

Runs the worker of py_workload.py (one thread, --items items) once plain and once under
atomicity._tracing.Tracer with a sink that only counts the accesses it is given, best of
--repeat in CPU time of the process (less disturbed than wall time on a shared machine), and
prints the backend, both times, the number of accesses, the cost of one access
((traced - plain) / accesses) and the slowdown. No library and no Session: this is what the
tracer costs before the recorder does anything. ATOMICITY_PY_BACKEND picks the backend.

    PYTHONPATH=bindings/python python3 tests/bench/bench_tracer.py
"""

import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_workload  # noqa: E402
from atomicity import _tracing  # noqa: E402


class CountingSink:
    """Traces py_workload only; counts accesses, keeps nothing."""

    def __init__(self):
        self.accesses = 0

    def wants_code(self, code):
        return code.co_filename == py_workload.__file__

    def is_atomic(self, code, module):
        return False

    def begin(self, code, line):
        pass

    def end(self, code, line):
        pass

    def attr(self, is_write, obj, name, code, line):
        self.accesses += 1

    def item(self, is_write, container, key, code, line):
        self.accesses += 1

    def glob(self, is_write, namespace, name, code, line):
        self.accesses += 1


def work(items):
    py_workload.worker(0, items, py_workload.Stats(), threading.Lock())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    plain = traced = float("inf")
    accesses = 0
    for _ in range(args.repeat):
        t = time.process_time()
        work(args.items)
        plain = min(plain, time.process_time() - t)
        sink = CountingSink()
        tracer = _tracing.Tracer(sink)
        tracer.start()
        try:
            t = time.process_time()
            work(args.items)
            traced = min(traced, time.process_time() - t)
        finally:
            tracer.stop()
        accesses = sink.accesses
    print("python %s backend %s: plain %.3f s, traced %.3f s, %d accesses, %.2f us an access, "
          "slowdown %.1fx" % (sys.version.split()[0], tracer.backend, plain, traced, accesses,
                              (traced - plain) / accesses * 1e6, traced / plain))


if __name__ == "__main__":
    main()
