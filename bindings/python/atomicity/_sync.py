"""Locks and threads during ``python -m atomicity run``.

While a run lasts, ``threading.Lock`` and ``threading.RLock`` make wrapped locks that report to
the current Recorder: ACQUIRE after a real acquire succeeded (``with``, blocking or not, with a
timeout), RELEASE right before the real release; for an RLock only the outermost pair.
Condition, Semaphore, BoundedSemaphore, Event, Barrier and queue.Queue build on these two
constructors (threading.py and queue.py call ``Lock()`` / ``RLock()`` at creation), so their
happens-before comes through their locks. A queue hands an item over in its own code, which
is not traced: ``Queue.put`` (and so LifoQueue, PriorityQueue) and ``SimpleQueue.put`` (a C
type, which concurrent.futures uses) push a release write of the queue's length before the
real put, ``get`` an acquire read after the real get, so that every checker orders a taker
after the putter (a release and an acquire of the queue's lock alone would let the predictive
checkers move a get before the put that filled the queue). ``_thread.allocate_lock`` is left alone: threading
uses it for the waiters of a Condition, which one thread acquires and another releases, and
which carry no order the wrapped lock of the Condition does not already give.

``Thread.start`` pushes FORK (in the parent, before the real start), the new thread registers
itself on its first step (``Thread._bootstrap_inner``), and ``Thread.join`` pushes JOIN when it
saw the thread finish. ``restore()`` puts everything back; locks made during the run keep
working afterwards (they report nothing once the run is over).
"""

from __future__ import annotations

import queue
import sys
import threading
import _thread
from types import FrameType
from typing import TYPE_CHECKING, Any, Callable, Optional, Tuple

from . import _recorder

if TYPE_CHECKING:
    _SimpleQueueBase = queue.SimpleQueue[Any]
else:
    _SimpleQueueBase = queue.SimpleQueue  # not subscriptable before 3.9

__all__ = ["Lock", "RLock", "patch", "restore"]

_real_allocate_lock = _thread.allocate_lock
_real_RLock: Callable[..., Any] = (getattr(_thread, "RLock", None) or
                                     getattr(threading, "_PyRLock"))
_getframe = sys._getframe
# What patch() replaced, for restore(); None when not patched.
_saved: Optional[Tuple[Any, ...]] = None


class Lock:
    """threading.Lock during a run. A Lock may be released by another thread than the one
    that acquired it (a signal); that release is pushed as the owner's, so the session's view
    of the lock stays a possible one."""

    __slots__ = ("_lock", "_key", "_owner", "__weakref__")

    def __init__(self) -> None:
        self._lock = _real_allocate_lock()
        rec = _recorder.current
        self._key = rec.new_lock("Lock", _getframe(1)) if rec is not None else 0
        self._owner = 0       # thread key of the holder as pushed (0: not held, or not pushed)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        ok = self._lock.acquire(blocking, timeout)
        if ok and self._key:
            rec = _recorder.current
            if rec is not None and rec.recording:
                self._owner = rec.acquired(self._key, _getframe(1))
        return ok

    def release(self) -> None:
        owner = self._owner
        if owner:
            self._owner = 0
            rec = _recorder.current
            if rec is not None:
                rec.released(self._key, owner, _getframe(1))
        self._lock.release()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def locked(self) -> bool:
        return self._lock.locked()

    acquire_lock = acquire
    release_lock = release
    locked_lock = locked

    def _at_fork_reinit(self) -> None:
        lock: Any = self._lock  # _at_fork_reinit is not in the stubs
        lock._at_fork_reinit()
        self._owner = 0

    def __repr__(self) -> str:
        return "<%s atomicity.Lock object at %#x>" % (
            "locked" if self._lock.locked() else "unlocked", id(self))


class RLock:
    """threading.RLock during a run, with what Condition needs of an RLock
    (_is_owned, _release_save, _acquire_restore)."""

    __slots__ = ("_lock", "_key", "_owner", "_count", "__weakref__")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._lock: Any = _real_RLock(*args, **kwargs)
        rec = _recorder.current
        self._key = rec.new_lock("RLock", _getframe(1)) if rec is not None else 0
        self._owner = 0
        self._count = 0       # acquisitions by the holder (only the holder changes it)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        ok: bool = self._lock.acquire(blocking, timeout)
        if ok:
            self._count += 1
            if self._count == 1 and self._key:
                rec = _recorder.current
                if rec is not None and rec.recording:
                    self._owner = rec.acquired(self._key, _getframe(1))
        return ok

    def release(self) -> None:
        if not self._lock._is_owned():
            self._lock.release()  # raises RuntimeError as the real one does
            return
        self._count -= 1
        if self._count == 0:
            self._push_release(_getframe(1))
        self._lock.release()

    def _push_release(self, frame: FrameType) -> None:
        owner = self._owner
        if owner:
            self._owner = 0
            rec = _recorder.current
            if rec is not None:
                rec.released(self._key, owner, frame)

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _is_owned(self) -> bool:
        owned: bool = self._lock._is_owned()
        return owned

    def _release_save(self) -> Tuple[Any, int]:
        # Condition.wait: release every level at once.
        if self._lock._is_owned():
            self._push_release(_getframe(1))
        count, self._count = self._count, 0
        return (self._lock._release_save(), count)

    def _acquire_restore(self, saved: Tuple[Any, int]) -> None:
        state, count = saved
        self._lock._acquire_restore(state)
        self._count = count
        if self._key:
            rec = _recorder.current
            if rec is not None and rec.recording:
                self._owner = rec.acquired(self._key, _getframe(1))

    def _at_fork_reinit(self) -> None:
        self._lock._at_fork_reinit()
        self._owner = 0
        self._count = 0

    def __repr__(self) -> str:
        return "<atomicity.RLock object count=%d at %#x>" % (self._count, id(self))


def _put_hook(real_put: Callable[..., None]) -> Callable[..., None]:
    def put(self: Any, item: Any, block: bool = True, timeout: Optional[float] = None) -> None:
        rec = _recorder.current
        if rec is not None and rec.recording:
            rec.handing_over(self, _getframe(1))
        return real_put(self, item, block, timeout)
    put.__doc__ = real_put.__doc__
    return put


def _get_hook(real_get: Callable[..., Any]) -> Callable[..., Any]:
    def get(self: Any, block: bool = True, timeout: Optional[float] = None) -> Any:
        item = real_get(self, block, timeout)
        rec = _recorder.current
        if rec is not None and rec.recording:
            rec.taken(self, _getframe(1))
        return item
    get.__doc__ = real_get.__doc__
    return get


class SimpleQueue(_SimpleQueueBase):
    """queue.SimpleQueue during a run: its hand-overs are recorded (see the module's doc)."""

    __slots__ = ()
    put = _put_hook(queue.SimpleQueue.put)
    get = _get_hook(queue.SimpleQueue.get)

    def put_nowait(self, item: Any) -> None:
        return self.put(item, block=False)

    def get_nowait(self) -> Any:
        return self.get(block=False)


def patch() -> None:
    """Install the wrappers and the Thread hooks (once; the Recorder must be active)."""
    global _saved
    if _saved is not None:
        return
    # Any: replacing classes and methods is what mypy is right to refuse elsewhere.
    T: Any = threading.Thread
    Q: Any = queue.Queue
    _saved = (threading.Lock, threading.RLock, T.start, T.join, T._bootstrap_inner,
              Q.put, Q.get, queue.SimpleQueue)
    real_start, real_join, real_bootstrap = T.start, T.join, T._bootstrap_inner

    def start(self: threading.Thread) -> Any:
        rec = _recorder.current
        started = getattr(self, "_started", None)
        if rec is not None and rec.recording and started is not None and not started.is_set():
            rec.forking(self, _getframe(1))
        return real_start(self)

    def join(self: threading.Thread, timeout: Optional[float] = None) -> None:
        real_join(self, timeout)
        rec = _recorder.current
        if rec is not None and rec.recording and not self.is_alive():
            rec.joined(self, _getframe(1))

    def _bootstrap_inner(self: threading.Thread) -> Any:
        rec = _recorder.current
        if rec is not None:
            rec.started(self)
        return real_bootstrap(self)

    start.__doc__, join.__doc__ = real_start.__doc__, real_join.__doc__
    threading_: Any = threading
    queue_: Any = queue
    threading_.Lock = Lock
    threading_.RLock = RLock
    T.start = start
    T.join = join
    T._bootstrap_inner = _bootstrap_inner
    Q.put = _put_hook(Q.put)
    Q.get = _get_hook(Q.get)
    queue_.SimpleQueue = SimpleQueue


def restore() -> None:
    """Put back what patch() replaced. Safe to call twice."""
    global _saved
    if _saved is None:
        return
    T: Any = threading.Thread
    Q: Any = queue.Queue
    threading_: Any = threading
    queue_: Any = queue
    (threading_.Lock, threading_.RLock, T.start, T.join, T._bootstrap_inner,
     Q.put, Q.get, queue_.SimpleQueue) = _saved
    _saved = None
