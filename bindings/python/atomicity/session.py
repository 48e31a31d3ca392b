"""Sessions: push events, attach checkers, read reports; and check_trace() for files."""

from __future__ import annotations

import collections
import contextlib
import ctypes
import os
import re
import struct
import threading
import warnings
import weakref
from typing import (IO, TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional,
                    Tuple, Union)

from . import _lib
from .errors import Error, TraceIOError, TraceNotFoundError, TraceWarning
from .report import Report, evidence_of, snapshot, target_space

if TYPE_CHECKING:
    from types import TracebackType

    from typing import Literal  # 3.8+; only for the checker

# A key: an int, or a str the session maps to an int of its own (Session docstring).
Key = Union[int, str]
# A key space: "thread", "var", "lock" or a Space member.
SpaceName = Union[str, int]
# What check_trace() reads: a path, or a file object open for reading (binary or text).
TraceSource = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]", IO[bytes], IO[str]]

__all__ = ["Session", "check_trace", "CheckerStatus"]

CheckerStatus = collections.namedtuple(
    "CheckerStatus", ["name", "state", "complete", "disabled", "stopped_at", "reason", "error"])
CheckerStatus.__doc__ = """Whether a checker decided everything (atom_checker_status_get).

``state`` is ``"complete"``, ``"incomplete"`` (it stopped at a bound of its own: its reports are
true, the absence of reports proves nothing) or ``"disabled"`` (a limit or lack of memory made
it stop checking). ``complete`` is ``state == "complete"``, ``disabled`` is
``state == "disabled"``; ``stopped_at`` is the event index where it stopped (0 when complete),
``reason`` one line (``None`` when complete), ``error`` the ErrorCode that disabled it
(``ELIMIT``, ``ENOMEM``) or ``None``."""

Space = _lib.Space

# Keys of the three key spaces are 64-bit. The binding maps string keys to integers from
# _STRING_BASE up, so integer keys below it can never collide with them.
_KEY_LIMIT = 1 << 64
_STRING_BASE = 1 << 63

# Plain ints for the hot path (enum member look-ups cost more).
_THREAD, _VAR, _LOCK = int(Space.THREAD), int(Space.VAR), int(Space.LOCK)
# Event kinds as plain ints (their values are pinned by the ABI, event.h).
(_READ, _WRITE, _ACQUIRE, _RELEASE, _FORK, _JOIN, _BEGIN, _END, _FENCE,
 _COMMIT) = range(1, 11)
# Writes one atom_event into a writable buffer: (buffer, offset, kind, flags, thread, target,
# loc). Packing the session's own CEvent and handing it to atom_push costs about half of what
# atom_read() & co. cost through ctypes, whose int converters allocate an object per argument.
_pack_event = struct.Struct(_lib.EVENT_FORMAT).pack_into
# Events per atom_push_many() call of push_many(), so that Ctrl-C is seen between chunks.
_PUSH_CHUNK = 1 << 20

# Pseudo-space for atomic-set keys of declare_set() (sets are not a library key space).
_SET_SPACE = 0

_SPACE_NAMES = {
    "thread": Space.THREAD,
    "var": Space.VAR,
    "variable": Space.VAR,
    "lock": Space.LOCK,
}

# Events per atom_trace_feed() call, so that Ctrl-C is seen between chunks of a long trace.
_FEED_CHUNK = 1 << 20
# Bytes (or characters) per read() of a file object given to check_trace().
_READ_CHUNK = 1 << 20
# Rejected trace events kept for warnings when strict=False; the rest are only counted.
_REJECTS_KEPT = 100


def _space(what: SpaceName) -> _lib.Space:
    if isinstance(what, str):
        try:
            return _SPACE_NAMES[what.lower()]
        except KeyError:
            raise ValueError("unknown key space %r (use 'thread', 'var' or 'lock')"
                             % (what,)) from None
    return Space(what)


def _c_string(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError("%s must be a str, not %s" % (what, type(value).__name__))
    if "\0" in value:
        raise ValueError("%s must not contain NUL characters" % what)
    return value.encode("utf-8")


def _uint(value: object, bits: int, what: str) -> int:
    """``value`` as an unsigned C integer of ``bits`` bits. ctypes would silently keep only the
    low bits (2**64 + 1 becomes 1), so every int the binding hands to C that is not a key or a
    loc (those have their own checks) goes through here."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (what, type(value).__name__))
    value = int(value)
    if not 0 <= value < (1 << bits):
        raise ValueError("%s must be an int in [0, 2**%d), not %d" % (what, bits, value))
    return value


def _loc(loc: object) -> int:
    if type(loc) is int and 0 <= loc < _KEY_LIMIT:
        return loc
    if not isinstance(loc, int):
        raise TypeError("loc must be an int, not %s" % type(loc).__name__)
    loc = int(loc)
    if not 0 <= loc < _KEY_LIMIT:
        raise ValueError("loc %d is not an unsigned 64-bit value" % loc)
    return loc


def _report_trampoline(session_ref: "weakref.ref[Session]") -> Any:
    """The C callback for atom_options.on_report. It holds the session weakly (no cycle) and
    never lets an exception reach C: the first one is kept and re-raised by the session call
    during which the report was made."""

    def on_report(rep: int, payload: Optional[int]) -> None:
        session = session_ref()
        if session is None or session._handle is None or session._close_pending:
            return
        try:
            report = snapshot(session._lib, session._handle, rep)
            session._on_report(report)
        except BaseException as exc:  # nothing may unwind through C
            session._keep_callback_error(exc)

    return _lib.REPORT_FN(on_report)


class Session:
    """A checking session: events go in, reports come out.

    ``checkers`` lists checker specs as ``atom_session_attach`` takes them (``"aerodrome"``,
    ``"commit-node:mode=view"``); a single string is one spec. Every session may be used from
    several Python threads: the binding serializes the calls on a session (one at a time, in
    the order the threads get its lock), so Python code cannot corrupt it; ``threadsafe=True``
    also sets ATOM_THREADSAFE on the C session. ``max_reports`` caps the
    reports kept for :attr:`reports` (0 = no cap; :attr:`dropped` counts the others), and
    ``max_reports_per_checker`` those kept from each checker (0 = no cap).
    ``on_report`` is called with each new :class:`Report` as soon as it is found; an exception
    it raises is re-raised by the session call during which the report was made.
    ``profile=True`` makes :meth:`stats` measure the time spent in each checker.

    Keys (threads, variables, locks) are ints in ``[0, 2**63)`` (or any unsigned 64-bit int
    when no string keys share the space) or strings. Each distinct string gets a stable
    integer key of its own per space and is registered as that key's name, so reports show
    it.

    Inside ``on_report``, the session's readers (:attr:`reports`, :meth:`stats`, ...) work;
    event methods, :meth:`finish`, :meth:`set_name` and :meth:`declare_set` raise Error with
    code EREENTRANT (re-raised by the call that ran the callback); :meth:`close` is deferred
    until that call returns, and no further report is delivered.

    Free it with :meth:`close` or a ``with`` block; leaving the block normally also calls
    :meth:`finish`.
    """

    def __init__(self, checkers: Union[str, Iterable[str]] = ("aerodrome",),
                 threadsafe: bool = False, max_reports: int = 0,
                 on_report: Optional[Callable[[Report], object]] = None,
                 profile: bool = False, max_reports_per_checker: int = 0) -> None:
        # First, so that close() and __del__ work whenever __init__ fails.
        self._handle: Optional[int] = None
        self._reports: List[Report] = []
        self._closed_reports: Optional[List[Report]] = None
        self._callback: Any = None
        self._lib = lib = _lib.load()
        # Serializes every call into the C session (doc/python.md "Threads"). Re-entrant: the
        # report callback runs on the thread that holds it.
        self._lock = threading.RLock()
        self._depth = 0              # calls into C in progress (under _lock)
        self._close_pending = False  # close() was called from inside the callback
        self._string_keys: Dict[int, Dict[str, int]] = {
            Space.THREAD: {}, Space.VAR: {}, Space.LOCK: {}, _SET_SPACE: {}}
        self._key_strings: Dict[int, Dict[int, str]] = {
            Space.THREAD: {}, Space.VAR: {}, Space.LOCK: {}, _SET_SPACE: {}}
        self._on_report: Any = on_report
        self._pending = 0
        self._pending_local = threading.local()

        if isinstance(checkers, str):
            checkers = [checkers]
        specs = [_c_string(spec, "checker spec") for spec in checkers]
        max_reports = _uint(max_reports, 8 * ctypes.sizeof(ctypes.c_size_t), "max_reports")
        per_checker = _uint(max_reports_per_checker, 8 * ctypes.sizeof(ctypes.c_size_t),
                            "max_reports_per_checker")
        if on_report is not None and not callable(on_report):
            raise TypeError("on_report must be callable")

        # Version 2 only when its field is wanted: a version-1 library serves the rest.
        opts = _lib.COptions2() if per_checker else _lib.COptions()
        rc = lib.atom_options_init(ctypes.byref(opts), 2 if per_checker else _lib.OPTIONS_VERSION)
        if rc:
            raise lib.error(rc)
        if per_checker:
            opts.max_reports_per_checker = per_checker
        if threadsafe:
            opts.flags |= _lib.THREADSAFE
        if profile:
            opts.flags |= _lib.PROFILE
        opts.max_reports = max_reports
        if on_report is not None:
            # Kept on the session: the C side holds only the raw pointer.
            self._callback = _report_trampoline(weakref.ref(self))
            opts.on_report = self._callback

        handle = ctypes.c_void_p()
        rc = lib.atom_session_new(ctypes.byref(handle), ctypes.byref(opts))
        if rc:
            raise lib.error(rc)
        self._handle = handle.value
        # The hot path's own objects: the handle already converted for ctypes, and one event
        # it packs under _lock (a push from inside on_report, with _depth > 0, gets a fresh
        # one: the library may still be reading this one).
        self._hv = handle
        self._event = _lib.CEvent()
        self._push_fn = lib.atom_push
        try:
            for spec in specs:
                rc = lib.atom_session_attach(self._handle, spec)
                if rc:
                    raise lib.error(rc)
        except BaseException:
            self._free()
            raise

    # -- lifetime ----------------------------------------------------------------------------

    def close(self) -> None:
        """Free the C session. Reports stay readable; every other method raises Error.
        Calling it again does nothing. From inside ``on_report`` the close is deferred until
        the call that ran the callback returns."""
        with self._lock:
            if self._handle is None:
                return
            if self._depth:
                # We hold the lock and a call is in progress: it is on this thread's stack,
                # below the callback. Freeing now would pull the session from under it.
                self._close_pending = True
                return
            try:
                self._closed_reports = self._collect_reports()
            finally:
                self._free()

    def _free(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            self._lib.atom_session_free(handle)
        self._callback = None
        if self._closed_reports is None:
            self._closed_reports = list(self._reports)

    def __del__(self) -> None:
        try:
            self._free()
        except Exception:
            pass

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> Literal[False]:
        try:
            if exc_type is None and self._handle is not None:
                self.finish()
        finally:
            self.close()
        return False

    @property
    def closed(self) -> bool:
        """True after close()."""
        return self._handle is None

    def __repr__(self) -> str:
        state = "closed" if self._handle is None else "open"
        return "<atomicity.Session %s checkers=%r reports=%d>" % (
            state, self.checkers, len(self._reports))

    # -- internal helpers --------------------------------------------------------------------

    def _h(self) -> int:
        handle = self._handle
        if handle is None:
            raise self._lib.make_error(self._lib.ErrorCode.ESTATE, "the session is closed")
        return handle

    def _enter(self) -> Optional[int]:
        """Take the session for one call into C; returns the handle. Pair with _leave()."""
        self._lock.acquire()
        handle = self._handle
        if handle is None:
            self._lock.release()
            self._h()  # raises
        self._depth += 1
        return handle

    def _leave(self) -> None:
        self._depth -= 1
        try:
            if not self._depth and self._close_pending:
                self._close_pending = False
                self.close()
        finally:
            self._lock.release()

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(handle, *args) with the session taken; returns fn's result."""
        h = self._enter()
        try:
            return fn(h, *args)
        finally:
            self._leave()

    def _keep_callback_error(self, exc: BaseException) -> None:
        local = self._pending_local
        if getattr(local, "error", None) is None:
            local.error = exc
            self._pending += 1

    def _raise_pending(self, error: Optional[BaseException] = None) -> None:
        local = self._pending_local
        exc = getattr(local, "error", None)
        if exc is not None:
            local.error = None
            self._pending -= 1
            if error is not None:
                exc.__context__ = error
            raise exc
        if error is not None:
            raise error

    def _check(self, rc: int) -> None:
        """Raise for a non-zero status (read the library's message first), or for an
        exception the report callback raised during the call."""
        error = self._lib.error(rc) if rc else None
        if error is not None or self._pending:
            self._raise_pending(error)

    def _key(self, space: int, key: Key) -> int:
        if type(key) is int and 0 <= key < _STRING_BASE:
            return key
        return self._slow_key(space, key)

    def _slow_key(self, space: int, key: object) -> int:
        if isinstance(key, str):
            value = self._string_keys[space].get(key)
            if value is None:
                value = self._new_string_key(space, key)
            return value
        if isinstance(key, int):
            key = int(key)
            if not 0 <= key < _KEY_LIMIT:
                raise ValueError("key %d is not an unsigned 64-bit value" % key)
            if key in self._key_strings[space]:
                raise ValueError("integer key %d is the key of the string %r in this space; "
                                 "integer keys below 2**63 never collide"
                                 % (key, self._key_strings[space][key]))
            return key
        raise TypeError("keys must be int or str, not %s" % type(key).__name__)

    def _new_string_key(self, space: int, key: str) -> int:
        encoded = _c_string(key, "a string key")
        with self._lock:
            table = self._string_keys[space]
            value = table.get(key)
            if value is not None:
                return value
            value = _STRING_BASE + len(table) + 1
            if space != _SET_SPACE:
                rc = self._call(self._lib.atom_set_name, space, value, encoded)
                if rc:
                    raise self._lib.error(rc)
            table[key] = value
            self._key_strings[space][value] = key
            return value

    # The push paths are the hot loop of the binding: the common case (int keys below 2**63, an
    # int loc, no error) is checked inline.

    def _push_target(self, kind: int, space: int, thread: Key, target: Key, loc: int,
                     flags: int = 0) -> None:
        if type(thread) is not int or not 0 <= thread < _STRING_BASE:
            thread = self._slow_key(_THREAD, thread)
        if type(target) is not int or not 0 <= target < _STRING_BASE:
            target = self._slow_key(space, target)
        if type(loc) is not int or not 0 <= loc < _KEY_LIMIT:
            loc = _loc(loc)
        self._push_event(kind, flags, thread, target, loc)

    def _push_plain(self, kind: int, thread: Key, loc: int) -> None:
        if type(thread) is not int or not 0 <= thread < _STRING_BASE:
            thread = self._slow_key(_THREAD, thread)
        if type(loc) is not int or not 0 <= loc < _KEY_LIMIT:
            loc = _loc(loc)
        self._push_event(kind, 0, thread, 0, loc)

    def _push_event(self, kind: int, flags: int, thread: int, target: int, loc: int) -> None:
        """Push one event of checked keys: the session's own event, packed in place."""
        if self._handle is None:
            self._h()
        lock = self._lock  # _enter() and _leave(), inline: this is the hot path
        lock.acquire()
        try:
            if self._depth or self._handle is None:
                rc = self._push_nested(kind, flags, thread, target, loc)
            else:
                ev = self._event
                self._depth = 1
                try:
                    _pack_event(ev, 0, kind, flags, thread, target, loc)
                    rc = self._push_fn(self._hv, ev)
                finally:
                    self._depth = 0
                    if self._close_pending:
                        self._close_pending = False
                        self.close()
        finally:
            lock.release()
        if rc or self._pending:
            self._check(rc)

    def _push_nested(self, kind: int, flags: int, thread: int, target: int, loc: int) -> int:
        """The push of _push_target/_push_plain from inside a call on this session (the report
        callback: the library answers EREENTRANT), or on a closed session. Its own event: the
        session's may be the one the library is reading."""
        ev = _lib.CEvent(kind, flags, thread, target, loc)
        return int(self._call(self._push_fn, ctypes.byref(ev)))

    # -- events: one method per kind, as in C ---------------------------------------------------

    def read(self, thread: Key, var: Key, loc: int = 0, acquire: bool = False) -> None:
        """``thread`` reads variable ``var``. ``acquire=True``: the read is an acquire (the
        predictive checkers order it after every earlier release write of ``var`` by another
        thread)."""
        if acquire:
            self._push_flagged(1, thread, var, loc,
                               _lib.FLAG_ACQUIRE)
        else:
            self._push_target(_READ, _VAR, thread, var, loc)

    def write(self, thread: Key, var: Key, loc: int = 0, release: bool = False) -> None:
        """``thread`` writes variable ``var`` (under TSO: issues the write). ``release=True``:
        the write is a release (see :meth:`read`)."""
        if release:
            self._push_flagged(2, thread, var, loc, _lib.FLAG_RELEASE)
        else:
            self._push_target(_WRITE, _VAR, thread, var, loc)

    def _push_flagged(self, kind: int, thread: Key, var: Key, loc: int, flags: int) -> None:
        # A flagged READ or WRITE: the hot path with flags.
        self._push_target(kind, _VAR, thread, var, loc, flags)

    def acquire(self, thread: Key, lock: Key, loc: int = 0) -> None:
        """``thread`` acquires ``lock`` (re-entrant: only the outermost pair counts)."""
        self._push_target(_ACQUIRE, _LOCK, thread, lock, loc)

    def release(self, thread: Key, lock: Key, loc: int = 0) -> None:
        """``thread`` releases ``lock``."""
        self._push_target(_RELEASE, _LOCK, thread, lock, loc)

    def fork(self, thread: Key, child: Key, loc: int = 0) -> None:
        """``thread`` starts thread ``child`` (before any event of ``child``)."""
        self._push_target(_FORK, _THREAD, thread, child, loc)

    def join(self, thread: Key, child: Key, loc: int = 0) -> None:
        """``thread`` waits for thread ``child`` to end (after its last event)."""
        self._push_target(_JOIN, _THREAD, thread, child, loc)

    def begin(self, thread: Key, loc: int = 0) -> None:
        """``thread`` begins a transaction (inner pairs nest and are swallowed)."""
        self._push_plain(_BEGIN, thread, loc)

    def end(self, thread: Key, loc: int = 0) -> None:
        """``thread`` ends its innermost open transaction."""
        self._push_plain(_END, thread, loc)

    def fence(self, thread: Key, loc: int = 0) -> None:
        """``thread`` executes a memory fence (drains its TSO store buffer)."""
        self._push_plain(_FENCE, thread, loc)

    def commit(self, thread: Key, var: Key, loc: int = 0) -> None:
        """TSO: the oldest buffered write of ``thread`` to ``var`` reaches memory."""
        self._push_target(_COMMIT, _VAR, thread, var, loc)

    def push(self, kind: Union[int, str], thread: Key, target: Optional[Key] = None,
             loc: int = 0, flags: int = 0) -> None:
        """Push one event of ``kind`` (a Kind member, its value, or its name such as
        ``"read"``); ``target`` is the variable, lock or child thread, None for BEGIN, END,
        FENCE; ``flags`` is 0, ``FLAG_ACQUIRE`` on a read or ``FLAG_RELEASE`` on a write."""
        lib = self._lib
        if isinstance(kind, str):
            try:
                kind = lib.Kind[kind.upper()]
            except KeyError:
                raise ValueError("unknown event kind %r" % (kind,)) from None
        else:
            kind = _as_kind(lib, kind)
        space = target_space(kind)
        ev = _lib.CEvent()
        ev.kind = int(kind)
        ev.thread = self._key(Space.THREAD, thread)
        if space is None:
            if target is not None:
                raise TypeError("a %s event has no target"
                                % kind.name.lower())  # type: ignore[union-attr]
        else:
            if target is None:
                raise TypeError("a %s event needs a target"
                                % kind.name.lower())  # type: ignore[union-attr]
            ev.target = self._key(space, target)
        ev.loc = _loc(loc)
        ev.flags = _uint(flags, 32, "flags")
        self._check(self._call(lib.atom_push, ctypes.byref(ev)))

    def push_many(self, events: Any) -> int:
        """Push a batch of packed events in one call into the library; returns how many.

        ``events`` is any object with the buffer protocol (bytes, bytearray, array.array,
        memoryview, a NumPy array...) holding ``atom_event`` structs back to back:
        :data:`EVENT_SIZE` (32) bytes each, ``struct`` format :data:`EVENT_FORMAT`
        (``"=IIQQQ"``: kind, flags, thread, target, loc, native byte order). Its length must be
        a multiple of 32 bytes and it must be C-contiguous (else ValueError). It is not copied
        (except a buffer whose address is not a multiple of 8), so do not change it from
        another thread during the call.

        Keys are raw 64-bit keys, as ints given to :meth:`read`: nothing is interned; take the
        key of a string with :meth:`key` (``session.key("var", "balance")``). Locations are
        loc values as with the other methods (describe them with :meth:`set_location`).

        The first ill-formed event stops the batch: the events before it are pushed (kept), it
        and the rest are not, and Error is raised with two more attributes: ``index``, the
        failing event's index in ``events``, and ``pushed``, the number of events the
        library consumed (``index + 1``; for an error a checker itself returns, up to the end
        of the library's block of 256 events). An exception raised by ``on_report`` is
        re-raised after the whole batch was pushed.
        """
        address, count, keep = _event_buffer(events)
        if count == 0:
            return 0
        lib = self._lib
        done = ctypes.c_size_t()
        first = 0
        try:
            while first < count:
                n = min(count - first, _PUSH_CHUNK)
                ptr = ctypes.cast(address + first * _lib.EVENT_SIZE, _lib.P_CEvent)
                rc = self._call(lib.atom_push_many, ptr, n, ctypes.byref(done))
                if rc:
                    error = lib.error(rc)
                    pushed = first + done.value
                    index = pushed - 1 if done.value else first
                    error.index = index
                    error.pushed = pushed
                    error.message = "push_many: event %d of the batch: %s" % (index, error.message)
                    error.args = (error.message,) + tuple(error.args[1:])
                    self._raise_pending(error)
                first += n
        finally:
            keep.release()
        self._check(0)
        return count

    @contextlib.contextmanager
    def transaction(self, thread: Key, loc: int = 0,
                    end_loc: Optional[int] = None) -> Iterator[Session]:
        """``with session.transaction(t):`` pushes BEGIN on entry and END on exit, also when
        the block raises. END gets ``end_loc`` (default: ``loc``)."""
        self.begin(thread, loc)
        try:
            yield self
        finally:
            self.end(thread, loc if end_loc is None else end_loc)

    # -- names and sets ----------------------------------------------------------------------

    def set_name(self, what: SpaceName, key: Key, name: str) -> None:
        """Name ``key`` of key space ``what`` (``"thread"``, ``"var"``, ``"lock"`` or a
        Space) for reports; replaces an earlier name."""
        space = _space(what)
        encoded = _c_string(name, "name")
        value = self._key(space, key)
        self._check(self._call(self._lib.atom_set_name, space, value, encoded))
        self._renamed()

    def get_name(self, what: SpaceName, key: Key) -> Optional[str]:
        """The name registered for ``key`` of space ``what``, or None."""
        space = _space(what)
        value = self._key(space, key)
        with self._lock:
            raw: Optional[bytes] = self._lib.atom_get_name(self._h(), space, value)
            return _lib.text(raw)

    def key(self, what: SpaceName, key: Key) -> int:
        """The integer key the library sees for ``key`` (itself for an int; the mapped key
        for a string)."""
        space = _space(what)
        return self._key(space, key)

    def declare_set(self, var: Key, set: Key) -> None:  # named as in C
        """Declare that variable ``var`` belongs to atomic set ``set`` (an int or a str);
        a later call moves it."""
        self._check(self._call(self._lib.atom_declare_set, self._key(Space.VAR, var),
                               self._key(_SET_SPACE, set)))

    # -- locations -----------------------------------------------------------------------------

    def set_location(self, loc: int, function: Optional[str] = None,
                     file: Union[str, "os.PathLike[str]", None] = None, line: int = 0) -> None:
        """Describe location ``loc`` (the ``loc`` value of events) for reports: the
        ``function``, the source ``file`` as users should see it, the ``line`` (0: unknown).
        At least one must be known. A later call replaces the description."""
        loc = _loc(loc)
        function_c = None if function is None else _c_string(function, "function")
        file_c = None if file is None else _c_string(os.fspath(file), "file")
        line = _uint(line, 32, "line")
        self._check(self._call(self._lib.atom_set_location, loc, function_c, file_c, line))
        self._renamed()

    def get_location(self, loc: int) -> Optional[Tuple[Optional[str], Optional[str], int]]:
        """``(function, file, line)`` of ``loc`` as :meth:`set_location` described it (unknown
        parts None, line 0), or None if it was not described."""
        loc = _loc(loc)
        function = ctypes.c_char_p()
        file = ctypes.c_char_p()
        line = ctypes.c_uint32()
        with self._lock:
            if not self._lib.atom_get_location(self._h(), loc, ctypes.byref(function),
                                               ctypes.byref(file), ctypes.byref(line)):
                return None
            return (_lib.text(function.value), _lib.text(file.value), line.value)

    def set_stack(self, loc: int, frames: Iterable[int]) -> None:
        """The call stack of ``loc``: ``frames`` (locs, each described with
        :meth:`set_location`) from the frame that shows in the headline out to its outermost
        caller. The innermost 64 are kept; a later call replaces the stack."""
        loc = _loc(loc)
        values = [_loc(frame) for frame in frames]
        array = (ctypes.c_uint64 * max(1, len(values)))(*values)
        self._check(self._call(self._lib.atom_set_stack, loc, array, len(values)))
        self._renamed()

    def get_stack(self, loc: int) -> Tuple[int, ...]:
        """The frames of ``loc``'s stack as a tuple of locs (empty if none was set)."""
        loc = _loc(loc)
        frames = _lib.P_uint64()
        with self._lock:
            n = self._lib.atom_get_stack(self._h(), loc, ctypes.byref(frames))
            return tuple(frames[i] for i in range(n))

    # -- end and results ---------------------------------------------------------------------

    def finish(self) -> List[Report]:
        """End of the execution: close every open transaction and let every checker finish.
        Idempotent. Returns :attr:`reports`."""
        self._check(self._call(self._lib.atom_finish))
        return self.reports

    def _renamed(self) -> None:
        # A report's copy holds the names and locations known when it was made: after a new
        # name or location, reports are copied again at the next look.
        with self._lock:
            self._reports.clear()

    def _collect_reports(self) -> List[Report]:
        lib, h = self._lib, self._handle
        count = lib.atom_report_count(h)
        for i in range(len(self._reports), count):
            rep = lib.atom_report_get(h, i)
            if rep is None:
                break
            self._reports.append(snapshot(lib, h, rep))
        for i, report in enumerate(self._reports):
            rep = lib.atom_report_get(h, i)
            if rep is not None:
                occurrences = lib.atom_report_occurrences(rep)
                evidence = evidence_of(lib, rep)  # a prediction may be confirmed later
                if occurrences != report.count or evidence != report.evidence:
                    self._reports[i] = report._with_count(occurrences, evidence)
        return list(self._reports)

    @property
    def reports(self) -> List[Report]:
        """The stored reports (a new list of :class:`Report`, in order of discovery, with
        current occurrence counts). Readable during the run, after finish() and after
        close()."""
        with self._lock:
            if self._handle is None:
                return list(self._closed_reports or ())
            return self._collect_reports()

    @property
    def dropped(self) -> int:
        """Distinct reports found but not stored because of ``max_reports``."""
        with self._lock:
            return int(self._lib.atom_report_dropped(self._h()))

    @property
    def checkers(self) -> List[str]:
        """Names of the attached checkers, in attach order."""
        with self._lock:
            if self._handle is None:
                return []
            lib = self._lib
            return [_lib.text(lib.atom_checker_name(self._handle, i))
                    for i in range(lib.atom_checker_count(self._handle))]

    def stats(self) -> Dict[str, Any]:
        """Counters of the session and of each checker, as a dict:
        ``{"events", "rejected", "threads", "vars", "locks", "bytes", "checkers": [...]}``,
        each checker a dict with ``name``, ``bytes``, ``peak_bytes``, ``time_ns`` (with
        ``profile=True``), ``reports``, ``occurrences``, ``nodes``, ``edges``, ``clocks``,
        ``disabled`` (1 if the checker stopped checking: out of memory or a limit; see
        :meth:`checker_status`)."""
        with self._lock:
            return self._stats()

    def _stats(self) -> Dict[str, Any]:
        lib, h = self._lib, self._h()
        out = _lib.CSessionStats()
        out.version = _lib.SESSION_STATS_VERSION
        self._check(lib.atom_session_stats_get(h, ctypes.byref(out)))
        result = {name: getattr(out, name) for name, _ in _lib.CSessionStats._fields_
                  if name not in ("version", "reserved")}
        checkers = []
        for i in range(lib.atom_checker_count(h)):
            cs = _lib.CCheckerStats()
            cs.version = _lib.CHECKER_STATS_VERSION
            self._check(lib.atom_checker_stats_get(h, i, ctypes.byref(cs)))
            entry = {"name": _lib.text(lib.atom_checker_name(h, i))}
            entry.update((name, getattr(cs, name)) for name, _ in _lib.CCheckerStats._fields_
                         if name not in ("version", "reserved"))
            checkers.append(entry)
        result["checkers"] = checkers
        return result

    def checker_status(self, i: int) -> CheckerStatus:
        """The :class:`CheckerStatus` of attached checker ``i`` (attach order). Read it after
        :meth:`finish`: checkers that decide at the end can still stop there. A
        :meth:`finish` that raised because a checker was disabled leaves it readable."""
        with self._lock:
            return self._checker_status(i)

    def _checker_status(self, i: int) -> CheckerStatus:
        lib, h = self._lib, self._h()
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < lib.atom_checker_count(h):
            raise IndexError(f"no checker {i!r}")
        st = _lib.CCheckerStatus()
        st.version = _lib.CHECKER_STATUS_VERSION
        self._check(lib.atom_checker_status_get(h, i, ctypes.byref(st)))
        state = _lib.CHECKER_STATES.get(st.state, "complete")
        return CheckerStatus(
            name=_lib.text(lib.atom_checker_name(h, i)), state=state,
            complete=state == "complete", disabled=state == "disabled",
            stopped_at=st.stopped_at if state != "complete" else 0,
            reason=_lib.text(st.reason) if st.reason is not None else None,
            error=lib.code(st.error) if st.error else None)

    @property
    def status(self) -> List[CheckerStatus]:
        """The :class:`CheckerStatus` of every attached checker, in attach order."""
        with self._lock:
            if self._handle is None:
                return []
            return [self._checker_status(i)
                    for i in range(self._lib.atom_checker_count(self._handle))]

    # -- output ------------------------------------------------------------------------------

    def write_reports(self, path_or_file: Union[str, bytes, "os.PathLike[str]", IO[Any]],
                      format: str = "html", *, tool: str = "python",
                      input: Union[str, "os.PathLike[str]", None] = None,
                      max_reports: int = 0, cut_short: Optional[str] = None,
                      show_reports: bool = True,
                      suppressions: Optional[Suppressions] = None,
                      baseline: Optional[Iterable[int]] = None) -> None:
        """(Not ``write``: that is the WRITE event.) Write the stored reports, the checkers' status and a summary, in ``format``:
        ``"html"`` (one self-contained page with a picture of each violation, doc/html.md),
        ``"json"``, ``"sarif"``, ``"text"`` or ``"dot"`` (doc/output.md), as atomcheck and
        libatomicity-rt write them (atom_session_write). ``path_or_file`` is a path (the file
        is replaced) or a file object open for writing, binary or text (UTF-8 is written).
        ``input`` names what was checked in the output; ``max_reports`` caps the reports
        shown per checker (0: all). ``cut_short`` says why the events given to the session
        are only part of the run ("recording stopped after 1000 events (--max-events)"): every
        format then marks the input INCOMPLETE with it. ``show_reports=False`` writes only the
        counts and statuses. Reports matched by ``suppressions`` (a :class:`Suppressions`) or
        whose fingerprint is in ``baseline`` (ints, as :func:`read_baseline` gives) are left
        out and counted. Call :meth:`finish` first for the final verdict.

        Raises ValueError for an unknown format, Error if the library fails, OSError if the
        file cannot be written."""
        if not isinstance(format, str) or format.lower() not in _lib.FORMATS:
            raise ValueError("unknown format %r (use %s)"
                             % (format, ", ".join(repr(f) for f in _lib.FORMATS)))
        lib = self._lib
        opts = _lib.COutputOptions()
        # Version 1 unless the cut-short reason (version 2) is needed: a library older than the
        # binding then still writes whole runs.
        version = 1 if cut_short is None else _lib.OUTPUT_OPTIONS_VERSION
        rc = lib.atom_output_options_init(ctypes.byref(opts), version)
        if rc:
            raise lib.error(rc)
        opts.format = _lib.FORMATS[format.lower()]
        tool_c = _c_string(tool, "tool")
        input_c = None if input is None else _c_string(os.fspath(input), "input")
        opts.tool = tool_c
        opts.input = input_c
        cut_c = None if cut_short is None else _c_string(cut_short, "cut_short")
        opts.cut_short = cut_c
        opts.max_reports = _uint(max_reports, 8 * ctypes.sizeof(ctypes.c_size_t), "max_reports")
        if not show_reports:
            opts.flags |= _lib.OUTPUT_NO_REPORTS
        if suppressions is not None:
            opts.suppressions = suppressions._h()
        fingerprints = list(baseline or ())
        known = (ctypes.c_uint64 * max(1, len(fingerprints)))(
            *(_uint(f, 64, "baseline fingerprint") for f in fingerprints))
        if fingerprints:
            opts.baseline = known
            opts.n_baseline = len(fingerprints)
        chunks = []

        def collect(data: int, length: int, _payload: Optional[int]) -> int:
            try:
                chunks.append(ctypes.string_at(data, length))
                return 0
            except BaseException:  # nothing may unwind through C
                return 1

        callback = _lib.WRITE_FN(collect)
        # The whole document is built first, so a failure leaves no half-written file.
        self._check(self._call(lib.atom_session_write, ctypes.byref(opts), callback, None))
        data = b"".join(chunks)
        if hasattr(path_or_file, "write"):
            try:
                path_or_file.write(data)
            except TypeError:  # a text file
                path_or_file.write(data.decode("utf-8"))
        else:
            with open(path_or_file, "wb") as f:
                f.write(data)

    def shown_violations(self, suppressions: Optional[Suppressions] = None,
                         baseline: Optional[Iterable[int]] = None) -> int:
        """Distinct reports neither matched by ``suppressions`` nor with a fingerprint in
        ``baseline``, plus the ones counted but not stored (they cannot be matched): what
        makes atomcheck exit with status 1."""
        known = set(baseline or ())
        with self._lock:
            lib, h = self._lib, self._h()
            n = int(lib.atom_report_dropped(h))
            for i in range(lib.atom_report_count(h)):
                rep = lib.atom_report_get(h, i)
                if rep is None:
                    continue
                if suppressions is not None and lib.atom_suppressions_match(suppressions._h(),
                                                                            rep):
                    continue
                if int(lib.atom_report_fingerprint(rep)) not in known:
                    n += 1
            return n

    # -- trace files ---------------------------------------------------------------------------

    def _feed_trace(self, path: Any, strict: bool, data: Optional[bytes] = None) -> None:
        """Push every event of STD trace ``path`` (names registered from the trace). Keys of
        the trace are 1, 2, 3... per space, so do not mix this with events of your own.
        With ``data``, the trace is that buffer and ``path`` only its name in messages."""
        lib = self._lib
        reader = ctypes.c_void_p()
        if data is None:
            rc = lib.atom_trace_reader_open(ctypes.byref(reader), os.fsencode(path))
        else:
            # The reader borrows `data` (not copied): this frame holds it until the reader is
            # freed below.
            rc = lib.atom_trace_reader_open_memory(ctypes.byref(reader), data, len(data),
                                                   os.fsencode(path))
        if rc:
            raise lib.error(rc)
        rejects: List[Any] = []
        counter = [0]

        def on_reject(_reader: Optional[int], err: int, message: Optional[bytes],
                      _payload: Optional[int]) -> int:
            try:
                counter[0] += 1
                if len(rejects) < _REJECTS_KEPT:
                    rejects.append((err, _lib.text(message)))
            except BaseException:  # nothing may unwind through C
                pass
            return 1 if strict else 0

        callback = _lib.REJECT_FN(on_reject)
        try:
            while True:
                rc = self._call(lib.atom_trace_feed, reader, _FEED_CHUNK, None, callback, None)
                if rc == 1:
                    self._check(0)
                    continue
                if rc == 0:
                    self._check(0)
                    break
                if strict and rejects and rc == lib.ErrorCode.ECALLBACK:
                    err, message = rejects[0]
                    self._raise_pending(lib.make_error(err, message))
                self._check(rc)
        finally:
            lib.atom_trace_reader_free(reader.value)
        for _err, message in rejects:
            warnings.warn(message, TraceWarning, stacklevel=3)
        if counter[0] > len(rejects):
            warnings.warn("%s: %d more ill-formed events dropped"
                          % (os.fsdecode(path), counter[0] - len(rejects)),
                          TraceWarning, stacklevel=3)


class Suppressions:
    """Suppression rules (``atom_suppressions_parse``), one per line: ``atomic:PATTERN``,
    ``fn:PATTERN``, ``file:PATTERN``, ``checker:NAME``, ``kind:KIND``; ``#`` starts a comment
    (doc/output.md). For :meth:`Session.write_reports`. Raises Error for a malformed line
    (its message says which). Free with :meth:`close` or a ``with`` block."""

    def __init__(self, text: Union[str, bytes]) -> None:
        self._handle: Optional[int] = None
        self._lib = lib = _lib.load()
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        handle = ctypes.c_void_p()
        rc = lib.atom_suppressions_parse(ctypes.byref(handle), data, len(data))
        if rc:
            raise lib.error(rc)
        self._handle = handle.value

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"]) -> "Suppressions":
        with open(path, "rb") as f:
            return cls(f.read())

    def _h(self) -> int:
        if self._handle is None:
            raise Error("the suppressions are closed")
        return self._handle

    def close(self) -> None:
        if self._handle is not None:
            self._lib.atom_suppressions_free(self._handle)
            self._handle = None

    def __enter__(self) -> "Suppressions":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def read_baseline(text: Union[str, bytes]) -> List[int]:
    """The fingerprints of an earlier ``--format json`` or ``sarif`` output (the values of its
    ``"fingerprint"`` / ``"atomicity/v1"`` members), as atomcheck --baseline reads them."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return [int(m.group(1), 16) for m in _FINGERPRINT.finditer(text)]


_FINGERPRINT = re.compile(r'"(?:fingerprint|atomicity/v1)"\s*:\s*"([0-9a-fA-F]{16})"')


class _PyBuffer(ctypes.Structure):
    """CPython's ``Py_buffer`` (part of the stable ABI since 3.11, unchanged since 3.0)."""

    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p),
                ("strides", ctypes.c_void_p), ("suboffsets", ctypes.c_void_p),
                ("internal", ctypes.c_void_p)]


class _Held:
    """What keeps a batch's memory valid during push_many(); release() ends that."""

    def __init__(self, obj: Any = None, release: Optional[Callable[[], None]] = None) -> None:
        self.obj = obj
        self._release = release

    def release(self) -> None:
        release, self._release = self._release, None
        self.obj = None
        if release is not None:
            release()


def _readonly_address(view: memoryview) -> Optional[Tuple[int, "_Held"]]:
    """The address of read-only C-contiguous ``view``'s memory and what holds it, without a
    copy: ctypes only maps writable buffers (from_buffer), so ask CPython for the buffer
    (PyObject_GetBuffer, released by _Held.release). None where there is no ``pythonapi``."""
    api = getattr(ctypes, "pythonapi", None)
    if api is None:
        return None
    get = api["PyObject_GetBuffer"]  # own function objects: pythonapi's are shared
    get.argtypes = (ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int)
    get.restype = ctypes.c_int
    put = api["PyBuffer_Release"]
    put.argtypes = (ctypes.POINTER(_PyBuffer),)
    put.restype = None
    info = _PyBuffer()
    get(view, ctypes.byref(info), 0)  # PyBUF_SIMPLE; a failure raises (pythonapi)
    def release() -> None:
        put(ctypes.byref(info))

    return info.buf or 0, _Held(info, release)


def _event_buffer(events: Any) -> Tuple[int, int, "_Held"]:
    """(address, number of events, _Held) of push_many()'s argument, not copied when it is
    bytes or a C-contiguous buffer (an address that is not 8-aligned is copied: the library
    reads the events as structs)."""
    size = _lib.EVENT_SIZE
    if type(events) is bytes:
        if len(events) % size:
            raise ValueError("push_many: %d bytes is not a whole number of %d-byte events"
                             % (len(events), size))
        keep = _Held(ctypes.c_char_p(events))
        address = ctypes.cast(keep.obj, ctypes.c_void_p).value or 0
        count = len(events) // size
    else:
        try:
            view = memoryview(events)
        except TypeError:
            raise TypeError("push_many: events must support the buffer protocol (bytes, "
                            "bytearray, array.array, memoryview...), not %s"
                            % type(events).__name__) from None
        if view.nbytes % size:
            raise ValueError("push_many: %d bytes is not a whole number of %d-byte events"
                             % (view.nbytes, size))
        if not view.c_contiguous:
            raise ValueError("push_many: the buffer is not C-contiguous (pass a contiguous "
                             "copy, e.g. bytes(view))")
        count = view.nbytes // size
        if count == 0:
            return 0, 0, _Held()
        if not view.readonly:
            first = ctypes.c_char.from_buffer(view)  # holds the export: no resize meanwhile
            keep = _Held(first)
            address = ctypes.addressof(first)
        else:
            held = _readonly_address(view)
            if held is None:
                data = bytes(view)
                return _event_buffer(data)
            address, keep = held
    if address % 8:
        copy = bytearray(ctypes.string_at(address, count * size))
        keep.release()
        return _event_buffer(copy)
    return address, count, keep


def _as_kind(lib: _lib.Library, kind: int) -> Any:
    try:
        return lib.Kind(kind)
    except ValueError:
        raise ValueError("unknown event kind %r" % (kind,)) from None


def _read_all(stream: Any) -> bytes:
    """The whole content of a file object, as bytes (text is encoded as UTF-8)."""
    chunks = []
    while True:
        chunk = stream.read(_READ_CHUNK)
        if not chunk:
            break
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8")
        elif not isinstance(chunk, bytes):
            chunk = bytes(chunk)
        chunks.append(chunk)
    return b"".join(chunks)


def _file_error(path: Any, error: Error) -> Error:
    """The TraceIOError for ``error`` (code EIO) of the trace file ``path``: the operating
    system's errno and reason, found by opening the file again (the library reports neither).
    """
    filename = os.fsdecode(path)
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        cls = TraceNotFoundError if isinstance(exc, FileNotFoundError) else TraceIOError
        return cls(exc.errno, exc.strerror or error.message, filename, error.code, error.name)
    return TraceIOError(None, error.message, filename, error.code, error.name)


def check_trace(source: TraceSource, checkers: Union[str, Iterable[str]] = ("aerodrome",), *,
                strict: bool = True, max_reports: int = 0) -> List[Report]:
    """Check a trace with ``checkers`` and return the list of :class:`Report`. Reports use the
    names of the trace.

    ``source`` is a path (``str``, ``bytes`` or path-like; ``"-"`` = standard input), or a file
    object open for reading, binary or text (``io.BytesIO``, ``io.StringIO``, an open file,
    ``sys.stdin.buffer``): it is read to its end first, then checked from memory. Both trace
    formats are read (STD text and .atb binary, told apart by their first bytes).

    A malformed line raises TraceError (code EPARSE, message ``"file:line: ..."``, where
    ``file`` is the path, or the file object's ``name`` when it has one, else ``<stream>``).
    An ill-formed event (END without BEGIN, ...) raises EventError with its own code when
    ``strict`` (the default); with ``strict=False`` it is dropped with a
    :class:`TraceWarning` and the check goes on. A missing file raises TraceNotFoundError
    (a FileNotFoundError), another unreadable one TraceIOError (an OSError).
    """
    data: Optional[bytes] = None
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        data = _read_all(source)
        path: Any = name if isinstance(name, (str, bytes)) else "<stream>"
    elif isinstance(source, (str, bytes, os.PathLike)):
        path = os.fspath(source)
    else:
        raise TypeError("check_trace() takes a path or a file object, not %s"
                        % type(source).__name__)
    session = Session(checkers, max_reports=max_reports)
    try:
        try:
            session._feed_trace(path, strict, data)
        except Error as exc:
            if exc.name != "ATOM_EIO" or data is not None:
                raise
            if path in ("-", b"-"):
                raise TraceIOError(None, exc.message, "<stdin>", exc.code, exc.name) from None
            raise _file_error(path, exc) from None
        session.finish()
        return session.reports
    finally:
        session.close()
