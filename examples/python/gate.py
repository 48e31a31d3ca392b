"""The gate the demos force their interleaving with.

A Gate is closed when made; wait() blocks until another thread open()s it, and then lets every
waiter through. It is a raw _thread lock, which the checker does not see (only threading.Lock
and RLock are recorded), so the forcing does not show up in the reports: a threading.Event
would be recorded through its lock, and a transaction that waits on it in its middle would be
non-atomic because of the forcing itself.
"""

import _thread


class Gate:
    """A one-way gate: closed until open()."""

    def __init__(self):
        self._lock = _thread.allocate_lock()
        self._lock.acquire()  # closed until open()

    def open(self):
        self._lock.release()  # a _thread lock may be released by another thread

    def wait(self):
        with self._lock:
            pass
