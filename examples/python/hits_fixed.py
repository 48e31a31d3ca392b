"""A page-hit counter shared by request threads (the fixed twin of hits.py).

count_hit reads and stores the count under one lock, so no update can fall between them.

    python3 -m atomicity run -c commit-node --atomic hits_fixed:count_hit hits_fixed.py
"""

import threading

hits = {}
hits_lock = threading.Lock()


def count_hit(page):
    with hits_lock:
        n = hits.get(page, 0)
        hits[page] = n + 1


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
