"""A memoising cache shared by threads, with a check-then-act race (the buggy version).

Two threads ask for the same key. get_or_compute tests whether the key is cached and, when it
is not, computes and stores the value: two steps that are not atomic, so both threads can
find the key missing and both compute it. The fixed twin is cache_fixed.py.

    python3 -m atomicity run --atomic cache:get_or_compute cache.py
"""

import threading

cache = {}
computations = []  # which thread computed a value, in order

# Force the interleaving that shows the bug: the first thread waits inside compute() (after
# its check, before its store) until the second thread has been through get_or_compute.
first_computing = threading.Event()
second_done = threading.Event()


def compute(key):
    """The expensive part: in a real program, a query or a long calculation."""
    computations.append(threading.current_thread().name)
    if threading.current_thread().name == "first":
        first_computing.set()
        second_done.wait()
    return key.upper()


def get_or_compute(key):
    if key not in cache:  # access: check
        cache[key] = compute(key)  # access: act
    return cache[key]


def first():
    get_or_compute("greeting")


def second():
    first_computing.wait()
    get_or_compute("greeting")
    second_done.set()


def main():
    threads = [threading.Thread(target=first, name="first"),
               threading.Thread(target=second, name="second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"'greeting' was computed {len(computations)} time(s): {', '.join(computations)}")


if __name__ == "__main__":
    main()
