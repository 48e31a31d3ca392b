"""The recorder of ``python -m atomicity run``: what the access tracer, the lock wrappers
(_sync) and atomic blocks (_atomic) see becomes events of a Session.

The Recorder is the *sink* of the tracer (the methods wants_code, is_atomic, begin, end, attr,
item, glob). It gives every thread, variable, lock and source line a 64-bit key:

* threads: the main thread (the one that created the recorder) is 1, every Thread gets the
  next number when it is started; a thread the recorder never saw start (one started before
  the run, or through _thread) gets a number at its first event, without a FORK;
* variables: one key per (object, attribute), (container, item) or (globals dict, name);
* locks: one key per lock object, made by the lock wrappers;
* locations: one ``loc`` per (code object, line), described with the function
  (``co_qualname``), the file (relative to the working directory when below it) and the line.

Object identity: ``id()`` values are reused once an object is freed, and a new object must not
become the old one's variable. An object that supports weak references is held weakly; when it
dies its entry is dropped, so an object that later gets the same id() gets new keys. Others
(dict, list, set and most builtin containers, which cannot be weakly referenced) are kept alive
by the recorder until the run ends: the memory bound is every such container the traced code
touched, plus every non-value item key (values -- int, str, bytes, float, bool, None and tuples
of those -- are keys by value, like the container sees them). Releasing a pin sooner would let
the next object made at that address take over the old one's variables, so pins stay; the
``max_objects`` bound (run --max-objects) stops recording when there are too many.

Names: a variable is named (Session.set_name) only when a report shows it, after the run
(close); a container's name is looked up when a second thread touches it.

Events are appended to one buffer in the order they happen (list.append is atomic) and pushed
with Session.push_many when the buffer holds FLUSH_EVENTS events, and at the end.
"""

from __future__ import annotations

import array
import itertools
import os
import site
import sys
import sysconfig
import types
import weakref
import _thread
from types import CodeType, FrameType
from typing import (TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Set,
                    Tuple)

from .errors import Error
from ._tracing import LENGTH  # the sentinel for "the length / membership of a container"

if TYPE_CHECKING:
    import threading
    from .report import Report
    from .session import Session

__all__ = ["Recorder", "LENGTH", "current"]

# Event kinds (atom_kind values, pinned by the ABI).
READ, WRITE, ACQUIRE, RELEASE, FORK, JOIN, BEGIN, END = range(1, 9)
# The packed event is "=IIQQQ": kind and flags share the first 64-bit word.
_KIND_SHIFT = 0 if sys.byteorder == "little" else 32
_FLAGS_SHIFT = 32 - _KIND_SHIFT  # kind and flags share the first word of a packed event
_FLAG_ACQUIRE, _FLAG_RELEASE = 1, 2
# Events buffered before a push: 8192 events, 256 KiB packed.
FLUSH_EVENTS = 8192
# Default bound of `run --max-objects`: objects kept alive for their identity (about 1.2 KiB
# for a one-item temporary dict with the recorder's entries and the session's keys, measured,
# so about 1.2 GB at the bound: doc/limits.md).
MAX_OBJECTS = 1000000
# Rejected events whose messages are kept for the final warning.
_REJECTS_KEPT = 5
# Longest rendering of an item key in a variable's name.
_KEY_NAME_MAX = 40

# The first word of a READ / WRITE event, indexed by is_write.
_ACCESS_WORD = (READ << _KIND_SHIFT, WRITE << _KIND_SHIFT)
# A loc is found by one int: id(code) << _LINE_BITS | line (lines past it: a slower table).
_LINE_BITS = 20
_get_ident = _thread.get_ident
# What a variable is of its object (its name is made from them when a report needs it).
_ATTR, _ITEM, _LEN, _GLOBAL = range(4)
# Per type: (weakly referenceable, unique: a class or module, not numbered).
_TYPE_INFO: Dict[type, Tuple[bool, bool]] = {}
_WeakRef = weakref.ref

# Marks item keys taken by identity: (_BY_ID, id(key)) never equals a value key.
_BY_ID = object()

# Only one run at a time: the Recorder that the lock wrappers and atomic blocks report to.
current: Optional[Recorder] = None

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_THREADING_FILE = os.path.normcase(os.path.abspath(getattr(sys.modules.get("threading"),
                                                           "__file__", "threading.py")))
_VALUE_TYPES = frozenset((int, str, bytes, float, bool, type(None)))
# Types whose attributes are methods only (their contents are item events): attribute reads
# and writes on them are not variables.
_NO_ATTR_TYPES = frozenset((int, str, bytes, float, complex, bool, type(None), tuple, frozenset,
                            range, list, dict, set, bytearray, types.FunctionType,
                            types.BuiltinFunctionType, types.MethodType))
_CODE_IS_METHOD = (types.FunctionType, staticmethod, classmethod, property,
                   types.BuiltinFunctionType, types.MethodDescriptorType,
                   types.WrapperDescriptorType)


def _qualname(code: CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)


def _is_value(key: Any, depth: int = 0) -> bool:
    t = type(key)
    if t in _VALUE_TYPES:
        return True
    if t is tuple and depth < 4:
        return all(_is_value(k, depth + 1) for k in key)
    return False


def _skip_prefixes() -> Tuple[str, ...]:
    """Directories whose code is not the user's: the standard library, site-packages and
    this package."""
    dirs: Set[str] = set()
    paths = sysconfig.get_paths()
    for name in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(name):
            dirs.add(paths[name])
    try:
        dirs.update(site.getsitepackages())
    except AttributeError:  # old virtualenv's site module
        pass
    user = getattr(site, "getusersitepackages", None)
    if user is not None:
        try:
            dirs.add(user())
        except Exception:
            pass
    dirs.add(_PACKAGE_DIR)
    return tuple(sorted(os.path.join(os.path.normcase(os.path.abspath(d)), "") for d in dirs))


class _Obj:
    """What the recorder knows of one object, container or globals dict."""

    __slots__ = ("ref", "base", "seq", "first", "attrs", "items")

    def __init__(self, ref: Any, base: str, seq: int, first: int) -> None:
        self.ref = ref            # weakref.ref, or the object itself (pinned: kept alive)
        self.base = base          # name before numbering ("Account", "cache")
        self.seq = seq            # number among the objects of this base (0: unique, no #N)
        self.first = first        # thread key of the first thread that touched this container
        #                           while its name is not looked up yet, else 0
        self.attrs: Dict[str, int] = {}  # attribute name -> var key
        self.items: Dict[Any, int] = {}  # item key (value, or (_BY_ID, id)) -> var key


class Recorder:
    """The sink of the tracer and the event source of one run (see the module's docstring).

    ``script`` is the path of the script run as __main__ (its module name for --atomic is its
    file name without .py, or ``script_module`` when given: the dotted name of a module run
    with ``-m``); ``atomic`` lists ``"MODULE:QUALNAME"`` specs; ``trace`` lists path
    prefixes whose code is traced even when it lies in the standard library or site-packages;
    ``max_events`` (0: no bound) stops recording after that many events; ``max_objects`` (0: no
    bound) stops it when more than that many objects would be kept alive (pinned).
    """

    def __init__(self, session: Session, script: Optional[str] = None,
                 atomic: Iterable[str] = (), trace: Iterable[str] = (), max_events: int = 0,
                 flush_events: int = FLUSH_EVENTS, max_objects: int = 0,
                 script_module: Optional[str] = None) -> None:
        self.session = session
        self.recording = True
        self.cut_short = False
        self.cut_reason: Optional[str] = None  # why recording stopped early (a sentence), else None
        self.rejected = 0               # events the session refused
        self.reject_messages: List[str] = []
        self._max_events = max_events
        self._max_objects = max_objects
        self._flush_events = max(1, flush_events)
        # The buffer is flushed when it holds _limit events: FLUSH_EVENTS, or fewer when the
        # --max-events bound is nearer (so that the bound is checked at flushes only, not at
        # every event).
        self._limit = self._flush_events if not max_events else \
            max(1, min(self._flush_events, max_events))
        self._pushed = 0                # events taken out of the buffer (pushed or refused)
        self._buffer: List[Tuple[int, int, int, int]] = []
        self._frozen = False            # recording stopped by a bound: the buffer is dropped
        self._flush_lock = _thread.allocate_lock()   # never a traced lock
        self._names_lock = _thread.allocate_lock()   # key allocation and naming
        self._cwd = os.getcwd()
        self._script: Optional[str] = None
        self._script_module: Optional[str] = None
        if script is not None:
            self._script = os.path.normcase(os.path.abspath(script))
            self._script_module = script_module or os.path.splitext(os.path.basename(script))[0]
        self._skip = _skip_prefixes()
        self._trace = tuple(os.path.join(os.path.normcase(os.path.abspath(p)), "")
                            if os.path.isdir(p) else os.path.normcase(os.path.abspath(p))
                            for p in trace)
        # qualname -> {module: spec} (looked up with _script_module, which may be None)
        self._atomic: Dict[str, Dict[Optional[str], str]] = {}
        self.atomic_matched: Set[str] = set()  # specs that matched a code object
        for spec in atomic:
            module, sep, qualname = spec.partition(":")
            if not sep or not module or not qualname:
                raise ValueError("--atomic wants MODULE:QUALNAME, not %r" % spec)
            self._atomic.setdefault(qualname, {})[module] = spec
        # Threads.
        self._tids = {_thread.get_ident(): 1}   # thread ident -> thread key
        self._thread_keys: Dict[threading.Thread, int] = {}  # Thread object -> thread key
        self._joined: Set[int] = set()
        self._next_tid = 2
        # Variables, locks, locations.
        self._objects: Dict[int, _Obj] = {}  # id(object) -> _Obj
        self._pinned: List[object] = []  # item keys taken by identity, kept alive
        self.pinned = 0                 # objects kept alive (pinned containers and item keys)
        self._counts: Dict[str, int] = {}  # base label -> objects numbered under it
        # (type, name) -> True when a class-level method
        self._method_attrs: Dict[Tuple[type, str], bool] = {}
        self._var_keys = itertools.count(1)
        # var key -> (_Obj, how, what): named lazily
        self._vars: Dict[int, Tuple[_Obj, int, Any]] = {}
        self._named: Set[int] = set()   # var keys given a name already
        self._next_lock = 1
        # id(code) -> code, kept alive: its id() stays its own
        self._codes: Dict[int, CodeType] = {}
        self._locs: Dict[int, int] = {}  # id(code) << _LINE_BITS | line -> loc
        # (code, line) -> loc, for lines outside _LINE_BITS
        self._odd_locs: Dict[Tuple[CodeType, int], int] = {}
        self._next_loc = 1
        self._set_location = session.set_location
        self._set_name(1, 1, "MainThread")

    @property
    def events(self) -> int:
        """Events recorded so far (pushed, refused or still in the buffer)."""
        return self._pushed + len(self._buffer)

    @property
    def variables(self) -> int:
        """Variable keys made so far."""
        return len(self._vars)

    # -- session calls ---------------------------------------------------------------------

    def _set_name(self, space: int, key: int, name: str) -> None:
        try:
            self.session.set_name(space, key, name)
        except (Error, ValueError):  # a name is only for reading; never stop the run for one
            pass

    def _push(self, events: Sequence[Tuple[int, int, int, int]]) -> None:
        """Push packed events; an event the session refuses is counted and skipped."""
        words = array.array("Q", itertools.chain.from_iterable(events))
        data = memoryview(words).cast("B")
        push_many = self.session.push_many
        start, n = 0, len(events)
        while start < n:
            try:
                push_many(data[start * 32:])
                return
            except Error as exc:
                index = getattr(exc, "index", None)
                self.rejected += 1
                if len(self.reject_messages) < _REJECTS_KEPT:
                    self.reject_messages.append(str(exc))
                if index is None:  # cannot tell which event: the rest of this chunk is lost
                    self.rejected += n - start - 1
                    return
                start += index + 1

    def flush(self, wait: bool = True) -> None:
        """Push the buffered events. Threads that fill the buffer call it without waiting:
        when another thread is pushing, the events stay for the next flush. Past the
        --max-events bound, recording stops (the events after the bound are dropped)."""
        if not self._flush_lock.acquire(wait):
            return
        try:
            buf = self._buffer
            n = len(buf)
            if self._frozen:
                del buf[:n]
                return
            if not n:
                return
            if self._max_events:
                room = self._max_events - self._pushed
                if n > room:
                    n = room
                    self._stop_locked("recording stopped after %d events (--max-events)"
                                      % self._max_events)
                else:
                    self._limit = max(1, min(self._flush_events, room - n))
            if n:
                # Appends only ever go to the end, so the first n entries are these events.
                chunk = buf[:n]
                del buf[:n]
                self._pushed += n
                self._push(chunk)
            if self._frozen:
                del buf[:]
        finally:
            self._flush_lock.release()

    def _stop_locked(self, reason: str) -> None:
        """A bound is reached (under _flush_lock): recording stops; events buffered after
        this are dropped."""
        if not self.cut_short:
            self.cut_short = True
            self.cut_reason = reason
        self.recording = False
        self._frozen = True

    def _stop(self, reason: str) -> None:
        """A bound is reached: the events so far are pushed, the rest are dropped."""
        if self._frozen:
            return
        self.flush()
        with self._flush_lock:
            self._stop_locked(reason)

    def close(self) -> List[Report]:
        """Stop recording, push everything and finish the session; then name the variables
        the reports show. Returns the reports."""
        self.recording = False
        self.flush()
        self.name_variables(_report_var_keys(self.session.finish()))
        return self.session.reports  # copied again with the names just given

    def name_variables(self, keys: Optional[Iterable[int]] = None) -> int:
        """Give the variables ``keys`` (default: every variable so far) their names
        (``Account#2.balance``, ``cache['k']``...). Variables are named only on demand: a
        name costs a call into the library, and most variables of a run (temporaries) appear
        in no report. Returns how many were named."""
        if keys is None:
            keys = list(self._vars)
        named = 0
        for var in keys:
            info = self._vars.get(var)
            if info is None or var in self._named:
                continue
            o, how, what = info
            self._set_name(2, var, _var_name(self._label(o), how, what))
            self._named.add(var)
            named += 1
        return named

    def _label(self, o: _Obj) -> str:
        """``Account`` when it is the only object of its base name, else ``Account#2``."""
        if not o.seq or self._counts.get(o.base, 0) < 2:
            return o.base
        return "%s#%d" % (o.base, o.seq)

    # -- events ----------------------------------------------------------------------------

    def _emit(self, kind: int, tid: int, target: int, loc: int, flags: int = 0) -> None:
        if not self.recording:
            return
        buf = self._buffer
        buf.append(((kind << _KIND_SHIFT) | (flags << _FLAGS_SHIFT), tid, target, loc))
        if len(buf) >= self._limit:
            self.flush(wait=False)

    def tid(self) -> int:
        """The thread key of the calling thread."""
        ident = _thread.get_ident()
        tid = self._tids.get(ident)
        if tid is None:
            tid = self._new_thread_key()
            self._tids[ident] = tid
            thread = getattr(sys.modules.get("threading"), "_active", {}).get(ident)
            name = getattr(thread, "_name", None) or "thread %d" % ident
            self._set_name(1, tid, name)
        return tid

    def _new_thread_key(self) -> int:
        with self._names_lock:
            tid = self._next_tid
            self._next_tid += 1
            return tid

    def loc(self, code: CodeType, line: int) -> int:
        """The loc of ``line`` of ``code``, described for reports the first time."""
        try:
            return self._locs[id(code) << _LINE_BITS | line]
        except (KeyError, TypeError):
            return self._new_loc(code, line)

    def _new_loc(self, code: CodeType, line: int) -> int:
        line = line if type(line) is int and line > 0 else 0
        small = line < (1 << _LINE_BITS)
        with self._names_lock:
            known = self._codes.setdefault(id(code), code)  # kept alive: its id() is its own
            if small and known is code:
                loc = self._locs.get(id(code) << _LINE_BITS | line)
            else:
                loc = self._odd_locs.get((code, line))
            if loc is not None:
                return loc
            loc = self._next_loc
            self._next_loc += 1
            if small and known is code:
                self._locs[id(code) << _LINE_BITS | line] = loc
            else:
                self._odd_locs[(code, line)] = loc
        try:
            self._set_location(loc, function=_qualname(code), file=self.display_file(code),
                               line=line)
        except (Error, ValueError):
            pass
        return loc

    def display_file(self, code: CodeType) -> str:
        path = code.co_filename
        if path.startswith("<"):
            return path
        full = os.path.abspath(path)
        if full.startswith(os.path.join(self._cwd, "")):
            return os.path.relpath(full, self._cwd)
        return full

    # -- the tracer's sink -----------------------------------------------------------------

    def wants_code(self, code: CodeType) -> bool:
        """Code of the script and of modules outside the standard library, site-packages and
        this package; or below a --trace prefix."""
        path = code.co_filename
        if not path or path.startswith("<"):
            return False
        path = os.path.normcase(os.path.abspath(path))
        if path == self._script:
            return True
        for prefix in self._trace:
            if path.startswith(prefix):
                return True
        if path == _THREADING_FILE:
            return False
        for prefix in self._skip:
            if path.startswith(prefix):
                return False
        return True

    def is_atomic(self, code: CodeType, module: str) -> bool:
        """Whether each call of ``code`` is a transaction: --atomic MODULE:QUALNAME (MODULE is
        the script's file name without .py for the script), or a generator function
        decorated with @atomicity.atomic."""
        modules = self._atomic.get(_qualname(code))
        if modules:
            spec = modules.get(module)
            if spec is None and module == "__main__":
                spec = modules.get(self._script_module)
            if spec is not None:
                self.atomic_matched.add(spec)
                return True
        from . import _atomic
        return code in _atomic.resumable_codes

    def begin(self, code: CodeType, line: int) -> None:
        self._emit(BEGIN, self.tid(), 0, self.loc(code, line))

    def end(self, code: CodeType, line: int) -> None:
        self._emit(END, self.tid(), 0, self.loc(code, line))

    # The three access methods are the hot path (one call per traced access): each is written
    # out in full, with one dict lookup each for the thread, the object, the variable and the
    # loc, and no further method call when all of them are known.

    def attr(self, is_write: bool, obj: Any, name: str, code: CodeType, line: int) -> None:
        if not self.recording:
            return
        t = type(obj)
        if t in _NO_ATTR_TYPES:
            return
        if not is_write and self._is_method(t, name):
            return
        tid = self._tids.get(_get_ident())
        if tid is None:
            tid = self.tid()
        o = self._objects.get(id(obj))
        if o is None or (o.ref is not obj and (type(o.ref) is not _WeakRef or o.ref() is not obj)):
            o = self._new_obj(obj, None, tid)
        var = o.attrs.get(name)
        if var is None:
            var = self._new_var(o, o.attrs, name, _ATTR, name)
        try:
            loc = self._locs[id(code) << _LINE_BITS | line]
        except (KeyError, TypeError):
            loc = self._new_loc(code, line)
        buf = self._buffer
        buf.append((_ACCESS_WORD[is_write], tid, var, loc))
        if len(buf) >= self._limit:
            self.flush(wait=False)

    def item(self, is_write: bool, container: Any, key: Any, code: CodeType,
             line: int) -> None:
        if not self.recording:
            return
        tid = self._tids.get(_get_ident())
        if tid is None:
            tid = self.tid()
        o = self._objects.get(id(container))
        if o is None or (o.ref is not container and
                         (type(o.ref) is not _WeakRef or o.ref() is not container)):
            o = self._new_obj(container, code, tid)
        elif o.first and o.first != tid:
            self._shared(o, container, code)
        if type(key) in _VALUE_TYPES or key is LENGTH:
            index = key
        else:
            index = self._index(key)
        try:
            var = o.items.get(index)
        except TypeError:  # an unhashable value inside (cannot happen for _is_value keys)
            return
        if var is None:
            var = self._new_item_var(o, index, key)
        try:
            loc = self._locs[id(code) << _LINE_BITS | line]
        except (KeyError, TypeError):
            loc = self._new_loc(code, line)
        buf = self._buffer
        buf.append((_ACCESS_WORD[is_write], tid, var, loc))
        if len(buf) >= self._limit:
            self.flush(wait=False)

    def glob(self, is_write: bool, namespace: Dict[str, Any], name: str, code: CodeType,
             line: int) -> None:
        if not self.recording:
            return
        tid = self._tids.get(_get_ident())
        if tid is None:
            tid = self.tid()
        o = self._objects.get(id(namespace))
        if o is None or o.ref is not namespace:
            o = self._new_namespace(namespace)
        var = o.attrs.get(name)
        if var is None:
            var = self._new_var(o, o.attrs, name, _GLOBAL, name)
        try:
            loc = self._locs[id(code) << _LINE_BITS | line]
        except (KeyError, TypeError):
            loc = self._new_loc(code, line)
        buf = self._buffer
        buf.append((_ACCESS_WORD[is_write], tid, var, loc))
        if len(buf) >= self._limit:
            self.flush(wait=False)

    # -- keys and names ----------------------------------------------------------------------

    def _is_method(self, t: type, name: str) -> bool:
        key = (t, name)
        known = self._method_attrs.get(key)
        if known is None:
            known = False
            try:
                for klass in t.__mro__:
                    value = klass.__dict__.get(name)
                    if value is not None:
                        known = isinstance(value, _CODE_IS_METHOD)
                        break
            except Exception:
                pass
            self._method_attrs[key] = known
        return known

    def _obj(self, obj: Any, code: Optional[CodeType] = None) -> _Obj:
        o = self._objects.get(id(obj))
        if o is not None:
            ref = o.ref
            if ref is obj or (type(ref) is _WeakRef and ref() is obj):
                return o
        return self._new_obj(obj, code, 0)

    def _new_obj(self, obj: Any, code: Optional[CodeType], tid: int) -> _Obj:
        """The entry of an object seen for the first time. A container (``code`` given: an
        item access) is named later, when a second thread touches it (_shared): most
        containers are temporaries of one thread and never appear in a report."""
        t = type(obj)
        info = _TYPE_INFO.get(t)
        if info is None:
            info = _TYPE_INFO[t] = (_weakrefable(obj), issubclass(t, (type, types.ModuleType)))
        weak, unique = info
        oid = id(obj)
        if weak:
            def forget(ref: Any, oid: int = oid, objects: Dict[int, _Obj] = self._objects) -> None:
                entry = objects.get(oid)
                if entry is not None and entry.ref is ref:
                    objects.pop(oid, None)
            try:
                ref = _WeakRef(obj, forget)
            except TypeError:  # a subclass' instance without __weakref__... kept alive
                ref = obj
        else:
            ref = obj
        if unique:
            base = obj.__qualname__ if isinstance(obj, type) else obj.__name__
        else:
            base = t.__name__
        with self._names_lock:
            seq = 0
            if not unique:
                seq = self._counts[base] = self._counts.get(base, 0) + 1
            o = _Obj(ref, base, seq, tid if code is not None and not unique else 0)
            self._objects[oid] = o
            if ref is obj:
                self.pinned += 1
        if ref is obj and self._max_objects and self.pinned > self._max_objects:
            self._too_many_objects()
        return o

    def _shared(self, o: _Obj, container: Any, code: CodeType) -> None:
        """A second thread touches ``container``: its name is looked up now, from the frame
        of that access (a local or global variable, or an attribute of ``self``)."""
        o.first = 0
        name = _find_name(container, code)
        if name and name != o.base:
            with self._names_lock:
                o.base = name
                o.seq = self._counts[name] = self._counts.get(name, 0) + 1

    def _too_many_objects(self) -> None:
        self._stop("recording stopped after %d events (--max-objects: %d objects kept alive)"
                   % (self.events, self._max_objects))

    def _new_namespace(self, namespace: Dict[str, Any]) -> _Obj:
        module = namespace.get("__name__") if isinstance(namespace, dict) else None
        o = _Obj(namespace, "" if module in (None, "__main__") else str(module), 0, 0)
        with self._names_lock:
            self._objects[id(namespace)] = o
        return o

    def _index(self, key: Any) -> Any:
        """The index of a non-value item key: a tuple of values by value, others by
        identity (the key is pinned then: its id() must not be reused during the run)."""
        if _is_value(key):
            return key
        return (_BY_ID, id(key))

    def _new_item_var(self, o: _Obj, index: Any, key: Any) -> int:
        if key is LENGTH:
            return self._new_var(o, o.items, index, _LEN, None)
        if type(index) is tuple and index and index[0] is _BY_ID:
            self._pinned.append(key)   # its id() must not be reused during the run
            self.pinned += 1
            if self._max_objects and self.pinned > self._max_objects:
                self._too_many_objects()
        return self._new_var(o, o.items, index, _ITEM, key)

    def _new_var(self, o: _Obj, table: Dict[Any, int], index: Any, how: int, what: Any) -> int:
        """A new variable key; its name is made only when a report needs it
        (name_variables). Lock-free: two threads racing for one index agree through
        setdefault, the loser's number stays unused."""
        var = next(self._var_keys)
        got = table.setdefault(index, var)
        if got != var:
            return got
        self._vars[var] = (o, how, what)
        return var

    # -- threads and locks (called by _sync) -------------------------------------------------

    def caller_loc(self, frame: Optional[FrameType]) -> int:
        """The loc of the first frame from ``frame`` outward that is traced code (else the
        first one outside this package and threading.py)."""
        fallback = None
        while frame is not None:
            code = frame.f_code
            path = code.co_filename
            if not path.startswith(_PACKAGE_DIR) and \
                    os.path.normcase(path) != _THREADING_FILE:
                if fallback is None:
                    fallback = frame
                if self.wants_code(code):
                    return self.loc(code, frame.f_lineno)
            frame = frame.f_back
        if fallback is None:
            return 0
        return self.loc(fallback.f_code, fallback.f_lineno)

    def new_lock(self, kind: str, frame: Optional[FrameType]) -> int:
        """A key for a new lock, named by where it was created ("Lock at bank.py:12")."""
        with self._names_lock:
            key = self._next_lock
            self._next_lock += 1
        site, owner = frame, None
        while site is not None and not self.wants_code(site.f_code):
            if site.f_code.co_name == "__init__":  # made by Barrier(), Queue(), Event()...
                this = site.f_locals.get("self")
                if this is not None:
                    owner = type(this).__name__
            site = site.f_back
        if owner is not None:
            kind = "%s of %s" % (kind, owner)
        if site is not None:
            name = "%s at %s:%d" % (kind, self.display_file(site.f_code), site.f_lineno)
        else:
            name = "%s#%d" % (kind, key)
        self._set_name(3, key, name)
        return key

    def acquired(self, lock: int, frame: Optional[FrameType]) -> int:
        """The calling thread acquired ``lock``; returns its thread key (the owner)."""
        tid = self.tid()
        self._emit(ACQUIRE, tid, lock, self.caller_loc(frame))
        return tid

    def released(self, lock: int, owner: int, frame: Optional[FrameType]) -> None:
        """``lock``, held by thread ``owner``, is about to be released (by the owner, or by
        another thread for a Lock used as a signal: the release is the owner's then)."""
        self._emit(RELEASE, owner, lock, self.caller_loc(frame))

    def handing_over(self, queue: object, frame: Optional[FrameType]) -> None:
        """The calling thread is about to put an item into ``queue``: a release write of the
        queue's length, which the taker's acquire read (taken()) is ordered after, as the
        queue's own lock orders them in the program."""
        self._emit(WRITE, self.tid(), self._queue_var(queue), self.caller_loc(frame),
                   _FLAG_RELEASE)

    def taken(self, queue: object, frame: Optional[FrameType]) -> None:
        """The calling thread took an item out of ``queue`` (after the real get)."""
        self._emit(READ, self.tid(), self._queue_var(queue), self.caller_loc(frame),
                   _FLAG_ACQUIRE)

    def _queue_var(self, queue: object) -> int:
        o = self._obj(queue)
        var = o.items.get(LENGTH)
        if var is None:
            var = self._new_var(o, o.items, LENGTH, _LEN, None)
        return var

    def forking(self, thread: threading.Thread, frame: Optional[FrameType]) -> None:
        """The calling thread starts ``thread``: FORK before the real start."""
        child = self._new_thread_key()
        self._thread_keys[thread] = child
        self._set_name(1, child, thread.name)
        self._emit(FORK, self.tid(), child, self.caller_loc(frame))

    def started(self, thread: threading.Thread) -> None:
        """First step of ``thread``, in the new thread."""
        child = self._thread_keys.get(thread)
        if child is not None:
            self._tids[_thread.get_ident()] = child

    def joined(self, thread: threading.Thread, frame: Optional[FrameType]) -> None:
        """The calling thread saw ``thread`` finish in a join."""
        child = self._thread_keys.get(thread)
        if child is None or child in self._joined:
            return
        self._joined.add(child)
        self._emit(JOIN, self.tid(), child, self.caller_loc(frame))


def _weakrefable(obj: Any) -> bool:
    try:
        weakref.ref(obj)
        return True
    except TypeError:
        return False


def _report_var_keys(reports: Iterable[Report]) -> List[int]:
    """The variable keys that ``reports`` show without a name: their variables and the
    targets of their READ / WRITE / COMMIT events."""
    from .report import target_space
    from ._lib import Space
    keys: Set[int] = set()
    for report in reports:
        for var in report.variables:
            if type(var) is int:
                keys.add(var)
        for event in report.events:
            if type(event.target) is int and target_space(event.kind) == Space.VAR:
                keys.add(event.target)
    return sorted(keys)


def _var_name(label: str, how: int, what: Any) -> str:
    """A variable's name from its object's label: ``Account#2.balance``, ``cache['k']``,
    ``len(cache)``, ``counter`` (a global of the script) or ``module.counter``."""
    if how == _ATTR:
        return "%s.%s" % (label, what)
    if how == _ITEM:
        return "%s[%s]" % (label, _key_name(what))
    if how == _LEN:
        return "len(%s)" % label
    name: str = what  # _GLOBAL: the global's name
    return "%s.%s" % (label, name) if label else name


def _key_name(key: Any) -> str:
    if _is_value(key):
        text = repr(key)
        if len(text) > _KEY_NAME_MAX:
            text = text[:_KEY_NAME_MAX - 3] + "..."
        return text
    return "<%s object>" % type(key).__name__


def _find_name(obj: object, code: CodeType) -> Optional[str]:
    """The name under which the frame running ``code`` sees ``obj``: a local or global
    variable, or an attribute of ``self`` (``Cache.entries``). None when not found. Called
    once per shared container, so the walk of the stack does not matter."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None and frame.f_code is not code:
        frame = frame.f_back
    if frame is None:
        return None
    try:
        local = frame.f_locals
        for name, value in local.items():
            if value is obj and name != "self":
                return name
        this = local.get("self")
        if this is not None:
            attrs = getattr(this, "__dict__", None)
            if isinstance(attrs, dict):
                for name, value in attrs.items():
                    if value is obj:
                        return "%s.%s" % (type(this).__name__, name)
        for name, value in frame.f_globals.items():
            if value is obj:
                return name
    except Exception:
        return None
    return None


def activate(recorder: Optional[Recorder]) -> None:
    """Make ``recorder`` the one the lock wrappers and atomic blocks report to (None: no run)."""
    global current
    current = recorder
