"""A counter whose increment is one critical section (the twin of counter.py).

    python3 -m atomicity run counter_fixed.py
"""

import threading

import atomicity

from gate import Gate


class Counter:
    def __init__(self):
        self.value = 0
        self._lock = threading.Lock()

    def increment(self):
        with atomicity.atomic():
            with self._lock:
                current = self.value  # access: read
                between_steps()
                self.value = current + 1  # access: write


# The same forcing as in counter.py: the second thread starts its increment after the first
# has read. The first does not wait for it: it holds the lock until it has written, which is
# the fix.
first_has_read = Gate()


def between_steps():
    if threading.current_thread().name == "first":
        first_has_read.open()


def first(counter):
    counter.increment()


def second(counter):
    first_has_read.wait()
    counter.increment()


def main():
    counter = Counter()
    threads = [threading.Thread(target=first, args=(counter,), name="first"),
               threading.Thread(target=second, args=(counter,), name="second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"2 increments, the counter holds {counter.value}")


if __name__ == "__main__":
    main()
