"""A memoising cache shared by threads, done right (the twin of cache.py).

The test and the store happen under one lock, so a second thread that asks for the same key
waits until the first has stored the value, then finds it.

    python3 -m atomicity run --atomic cache_fixed:get_or_compute cache_fixed.py
"""

import threading

cache = {}
cache_lock = threading.Lock()
computations = []  # which thread computed a value, in order

# The same forcing as in cache.py: the second thread starts its look-up while the first is
# computing. The first does not wait for it here: it holds cache_lock, which is the fix.
first_computing = threading.Event()


def compute(key):
    """The expensive part: in a real program, a query or a long calculation."""
    computations.append(threading.current_thread().name)
    if threading.current_thread().name == "first":
        first_computing.set()
    return key.upper()


def get_or_compute(key):
    with cache_lock:
        if key not in cache:  # access: check
            cache[key] = compute(key)  # access: act
        return cache[key]


def first():
    get_or_compute("greeting")


def second():
    first_computing.wait()
    get_or_compute("greeting")


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
