"""A counter whose increment takes the lock twice: a lost update (the buggy version).

increment() reads the value under the lock and writes value + 1 under the lock again, so two
threads can read the same value and one increment is lost. The fixed twin is counter_fixed.py.

    python3 -m atomicity run counter.py
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
            with self._lock:  # access: read-lock
                current = self.value  # access: read
            between_steps()
            with self._lock:  # access: write-lock
                self.value = current + 1  # access: write


# Force the interleaving that shows the bug: the first thread waits between its read and its
# write until the second thread has incremented.
first_has_read = Gate()
second_done = Gate()


def between_steps():
    if threading.current_thread().name == "first":
        first_has_read.open()
        second_done.wait()


def first(counter):
    counter.increment()


def second(counter):
    first_has_read.wait()
    counter.increment()
    second_done.open()


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
