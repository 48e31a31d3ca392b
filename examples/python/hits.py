"""A page-hit counter shared by request threads, updated without a lock (the buggy version).

Four worker threads serve requests and count them per page in a dict. count_hit reads the
count and stores count + 1: two steps that another thread's update can fall between, losing a
hit. Nothing forces the bad order here: CPython switches threads only every few milliseconds,
so most runs count right. The predictive checkers still find the bug in any run, because they
judge the other orders of the same accesses. The fixed twin is hits_fixed.py.

    python3 -m atomicity run -c commit-node --atomic hits:count_hit hits.py
"""

import threading

hits = {}


def count_hit(page):
    n = hits.get(page, 0)  # access: read
    hits[page] = n + 1  # access: write


def serve(requests):
    for i in range(requests):
        count_hit("/page/%d" % (i % 3))


def main():
    workers = [threading.Thread(target=serve, args=(30,)) for _ in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    print("%d hits counted of 120" % sum(hits.values()))


if __name__ == "__main__":
    main()
