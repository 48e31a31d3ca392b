"""A memoising cache shared by threads, with a check-then-act race (the buggy version).

Two threads ask for the same key. get_or_compute tests whether the key is cached and, when it
is not, computes and stores the value: two steps that are not atomic, so both threads can
find the key missing and both compute it. The fixed twin is cache_fixed.py.

    python3 -m atomicity run --atomic cache:get_or_compute cache.py
"""

import threading

from gate import Gate

cache = {}
got = {}  # thread name -> the value get_or_compute gave it


# Force the interleaving that shows the bug: the first thread waits inside compute() (after
# its check, before its store) until the second thread has been through get_or_compute.
first_computing = Gate()
second_done = Gate()


def compute(key):
    """The expensive part: in a real program, a query or a long calculation."""
    if threading.current_thread().name == "first":
        first_computing.open()
        second_done.wait()
    # The value, and which thread computed it (to show the outcome).
    return key.upper(), threading.current_thread().name


def get_or_compute(key):
    if key not in cache:  # access: check
        cache[key] = compute(key)  # access: act
    return cache[key]


def first():
    got["first"] = get_or_compute("greeting")


def second():
    first_computing.wait()
    got["second"] = get_or_compute("greeting")
    second_done.open()


def main():
    threads = [threading.Thread(target=first, name="first"),
               threading.Thread(target=second, name="second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    computed_by = sorted({who for _, who in got.values()})
    print(f"'greeting' was computed {len(computed_by)} time(s): {', '.join(computed_by)}")


if __name__ == "__main__":
    main()
