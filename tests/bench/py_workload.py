"""A CPU-bound threaded Python program for measuring the tracer's slowdown (bench_python.py).

Four threads do pure-Python work: each scores items of its own (arithmetic, a small list, a
dict), and every few items records its results in objects shared by all threads (an attribute
of a Stats object, items of a dict, a module global) under a threading.Lock. About 1-2 s
without tracing on one core of the benchmark machine (``--scale`` multiplies the work). It
prints one line with a checksum that does not depend on the schedule.
"""

import argparse
import threading

TOTAL = 0  # a module global written under the lock


class Stats:
    def __init__(self):
        self.items = 0
        self.best = 0
        self.by_bucket = {}


def score(n):
    """Pure-Python work on locals: a few dozen bytecodes with a list and a dict."""
    digits = [int(c) for c in str(n * 7919)]
    seen = {}
    acc = 0
    for d in digits:
        seen[d] = seen.get(d, 0) + 1
        acc = (acc * 31 + d) % 1000003
    return acc + len(seen)


def worker(start, count, stats, lock):
    global TOTAL
    batch = []
    for n in range(start, start + count):
        batch.append(score(n))
        if len(batch) == 8:
            with lock:
                stats.items += len(batch)
                top = max(batch)
                if top > stats.best:
                    stats.best = top
                bucket = top % 16
                stats.by_bucket[bucket] = stats.by_bucket.get(bucket, 0) + 1
                TOTAL += sum(batch)
            batch = []
    with lock:
        stats.items += len(batch)
        TOTAL += sum(batch)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    per_thread = max(8, int(60000 * args.scale))
    stats = Stats()
    lock = threading.Lock()
    threads = [threading.Thread(target=worker, args=(i * per_thread, per_thread, stats, lock))
               for i in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("items %d best %d total %d" % (stats.items, stats.best, TOTAL))


if __name__ == "__main__":
    main()
