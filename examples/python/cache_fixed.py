"""A memoising cache shared by threads, done right (the twin of cache.py).

The test and the store happen under one lock, so a second thread that asks for the same key
waits until the first has stored the value, then finds it.

    python3 -m atomicity run --atomic cache_fixed:get_or_compute cache_fixed.py
"""

import threading

from gate import Gate

cache = {}
cache_lock = threading.Lock()
got = {}  # thread name -> the value get_or_compute gave it


# The same forcing as in cache.py: the second thread starts its look-up while the first is
# computing. The first does not wait for it here: it holds cache_lock, which is the fix.
first_computing = Gate()


def compute(key):
    """The expensive part: in a real program, a query or a long calculation."""
    if threading.current_thread().name == "first":
        first_computing.open()
    # The value, and which thread computed it (to show the outcome).
    return key.upper(), threading.current_thread().name


def get_or_compute(key):
    with cache_lock:
        if key not in cache:  # access: check
            cache[key] = compute(key)  # access: act
        return cache[key]


def first():
    got["first"] = get_or_compute("greeting")


def second():
    first_computing.wait()
    got["second"] = get_or_compute("greeting")


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
