"""The access tracer: finds reads and writes of traced Python code and reports them to a sink.

``Tracer(sink)`` instruments the code objects that ``sink.wants_code(code)`` accepts. For each
such code object _bytecode.analyze() finds the access instructions and how to recompute their
operands from the frame; here each of those *probes* becomes a small function run right
before its instruction, which recomputes the object (and key) and calls ``sink.attr``,
``sink.item`` or ``sink.glob``. Calls of code for which ``sink.is_atomic(code, module)`` holds
are bracketed with ``sink.begin`` / ``sink.end``.

Two backends, one per interpreter generation:
- "monitoring" (3.12+): sys.monitoring with a free tool id; PY_START meets each code object
  once (and is disabled for unwanted code); wanted code gets local INSTRUCTION events, which
  are disabled again at every offset without a probe, so only access instructions call back.
- "settrace" (3.11, or forced): sys.settrace and threading.settrace; opcode events are turned
  on only for frames of code that has probes; on 3.11 only on the lines that have probes,
  switched by line events (see _line_gate), elsewhere line events are off.
ATOMICITY_PY_BACKEND=settrace|monitoring forces one.

The tracer never touches a Session; it owns nothing but its caches (code object -> probes,
kept alive with the code objects they describe, until the Tracer is dropped).
"""

from __future__ import annotations

import _thread
import collections
import os
import sys
import threading
import types
from types import CodeType, FrameType
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, cast

from . import _bytecode as B

from typing import Protocol


class Sink(Protocol):
    """What the tracer reports to (implemented by _recorder.Recorder)."""

    def wants_code(self, code: CodeType) -> bool: ...

    def is_atomic(self, code: CodeType, module: str) -> bool: ...

    def begin(self, code: CodeType, line: int) -> None: ...

    def end(self, code: CodeType, line: int) -> None: ...

    def attr(self, is_write: bool, obj: Any, name: str, code: CodeType, line: int) -> None: ...

    def item(self, is_write: bool, container: Any, key: Any, code: CodeType,
             line: int) -> None: ...

    def glob(self, is_write: bool, namespace: Dict[str, Any], name: str, code: CodeType,
             line: int) -> None: ...


# sys.monitoring (3.12+), untyped: the stubs of a 3.11 type checker do not have it.
_monitoring: Any = getattr(sys, "monitoring", None)

# A compiled expression: (frame, its f_locals or None when not needed) -> value.
_Eval = Callable[[FrameType, Any], Any]
# A probe: run right before its instruction, with the frame that runs it.
_Probe = Callable[[FrameType], None]
# A container method's handler: (container, first argument) -> item accesses (is_write, key).
_Accesses = Sequence[Tuple[bool, Any]]
_Handler = Callable[[Any, Any], _Accesses]
# A settrace trace function (returns itself, or None).
_TraceFn = Callable[[FrameType, str, Any], Any]


class _Length:
    """The sentinel key for a container's length (its set of keys, for dicts and sets)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "LENGTH"

    def __reduce__(self) -> str:
        return "LENGTH"


LENGTH = _Length()

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# Values that are code rather than data: reads of globals or attributes bound to these are
# not reported (a program reads its functions and classes all the time; they are not state).
_CODE_VALUES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type,
                types.ModuleType, classmethod, staticmethod, property,
                types.MethodDescriptorType, types.WrapperDescriptorType,
                types.ClassMethodDescriptorType, types.MethodWrapperType)
# Immutable containers: reading their items cannot conflict with anything.
_IMMUTABLE = frozenset((str, bytes, tuple, frozenset, range, int, float, complex, bool,
                        type(None), memoryview))
# Containers whose length reads (len, iteration, `in` over a sequence) are reported.
_SIZED = (dict, list, set, collections.deque, bytearray)


class _Unresolved(Exception):
    """An operand that cannot be recomputed safely at this access."""


# A sentinel; Any so that `d.get(k, _MISSING)` keeps the dict's value type.
_MISSING: Any = object()

# Attribute kinds by (type, name), looked up along the type's MRO once.
_DATA, _METHOD, _COMPUTED, _SLOT, _ABSENT = range(5)
_attr_kinds: Dict[Tuple[type, str], int] = {}


def _attr_kind(tp: type, name: str) -> int:
    try:
        return _attr_kinds[(tp, name)]
    except KeyError:
        pass
    kind = _ABSENT
    for klass in getattr(tp, "__mro__", (tp,)):
        d = klass.__dict__
        if name in d:
            v = d[name]
            if isinstance(v, types.MemberDescriptorType):
                kind = _SLOT
            elif isinstance(v, _CODE_VALUES):
                kind = _COMPUTED if isinstance(v, property) else _METHOD
            elif hasattr(type(v), "__get__"):
                kind = _COMPUTED    # a descriptor: its own code does the accesses
            else:
                kind = _DATA
            break
    _attr_kinds[(tp, name)] = kind
    return kind


def _peek_attr(obj: Any, name: str) -> Any:
    """obj.name without running user code (no properties, no __getattr__)."""
    if type(obj) is types.ModuleType:
        try:
            return obj.__dict__[name]
        except KeyError:
            raise _Unresolved() from None
    is_class = isinstance(obj, type)
    kind = _attr_kind(obj if is_class else type(obj), name)
    if kind == _COMPUTED:
        raise _Unresolved()
    if (kind == _DATA or kind == _ABSENT) and not is_class:
        try:
            return object.__getattribute__(obj, "__dict__")[name]
        except (AttributeError, KeyError):
            pass
    if kind == _ABSENT:
        raise _Unresolved()     # only a __getattr__ could answer
    return getattr(obj, name)


def _binop(sym: str, a: Any, b: Any) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return a + b if sym == "+" else a - b if sym == "-" else a * b
    if ta is str and tb is str and sym == "+":
        return a + b
    raise _Unresolved()


def _compile(e: B.Expr) -> _Eval:
    """Expression (see _bytecode) -> function(frame, f_locals) recomputing its value."""
    k = e[0]
    if k == "fast" or k == "deref":
        name = e[1]

        def ev(f: FrameType, L: Any) -> Any:
            return L[name]
    elif k == "global":
        name = e[1]

        def ev(f: FrameType, L: Any) -> Any:
            g = f.f_globals
            if name in g:
                return g[name]
            return f.f_builtins[name]
    elif k == "name":
        name = e[1]

        def ev(f: FrameType, L: Any) -> Any:
            if name in L:
                return L[name]
            g = f.f_globals
            if name in g:
                return g[name]
            return f.f_builtins[name]
    elif k == "const":
        value = e[1]

        def ev(f: FrameType, L: Any) -> Any:
            return value
    elif k == "attr":
        inner, name = _compile(e[1]), e[2]

        def ev(f: FrameType, L: Any) -> Any:
            return _peek_attr(inner(f, L), name)
    elif k == "subscr":
        c, key = _compile(e[1]), _compile(e[2])

        def ev(f: FrameType, L: Any) -> Any:
            cv = c(f, L)
            if type(cv) not in (dict, list, tuple):
                raise _Unresolved()  # a user __getitem__ may do anything
            return cv[key(f, L)]
    elif k == "binop":
        sym, a, b = e[1], _compile(e[2]), _compile(e[3])

        def ev(f: FrameType, L: Any) -> Any:
            return _binop(sym, a(f, L), b(f, L))
    else:
        raise ValueError("not a value expression: %r" % (e,))
    return ev


def _needs_locals(e: Optional[B.Expr]) -> bool:
    """Whether recomputing expression e (or None) reads the frame's locals."""
    if e is None:
        return False
    k = e[0]
    if k in ("fast", "deref", "name"):
        return True
    if k == "attr":
        return _needs_locals(e[1])
    if k == "subscr":
        return _needs_locals(e[1]) or _needs_locals(e[2])
    if k == "binop":
        return _needs_locals(e[2]) or _needs_locals(e[3])
    return False    # const, global


# --- container methods: handler(container, a0) -> ((is_write, key), ...) -------------
# a0 is the recomputed first positional argument, _NOARG when the call has none or it cannot
# be recomputed, _FAILED when recomputing it raised anything else; handlers that need it raise
# _Unresolved then. They return the item accesses in order (key LENGTH for the length / set
# of keys) and report nothing themselves, so that one failing half-way reports nothing.
# (A handler per call rather than closures made per call: this runs for every method call of
# traced code on a builtin container.)

_NOARG = object()
_FAILED = object()
_READ_LEN = ((False, LENGTH),)
_WRITE_LEN = ((True, LENGTH),)


def _read_key(c: Any, a0: Any) -> _Accesses:
    if a0 is _NOARG or a0 is _FAILED:
        raise _Unresolved()
    return ((False, a0),)


def _read_len(c: Any, a0: Any) -> _Accesses:
    return _READ_LEN


def _write_len(c: Any, a0: Any) -> _Accesses:
    return _WRITE_LEN


def _insert_key(c: Any, a0: Any) -> _Accesses:
    # dict.setdefault / set.add: a read when the key is there, else an insertion
    if a0 is _NOARG or a0 is _FAILED:
        raise _Unresolved()
    if a0 in c:
        return ((False, a0),)
    return ((True, a0), (True, LENGTH))


def _remove_key(c: Any, a0: Any) -> _Accesses:
    # dict.pop / set.discard / set.remove: a removal when the key is there, else a read
    if a0 is _NOARG or a0 is _FAILED:
        raise _Unresolved()
    if a0 in c:
        return ((True, a0), (True, LENGTH))
    return ((False, a0),)


def _set_key(c: Any, a0: Any) -> _Accesses:
    if a0 is _NOARG or a0 is _FAILED:
        raise _Unresolved()
    if a0 not in c:
        return ((True, a0), (True, LENGTH))
    return ((True, a0),)


def _del_key(c: Any, a0: Any) -> _Accesses:
    if a0 is _NOARG or a0 is _FAILED:
        raise _Unresolved()
    return ((True, a0), (True, LENGTH))


def _pop_any(first: Callable[[Any], Any]) -> _Handler:
    def handler(c: Any, a0: Any) -> _Accesses:
        if len(c):
            return ((True, first(c)), (True, LENGTH))
        return _READ_LEN
    return handler


def _clear_all(c: Any, a0: Any) -> _Accesses:
    out = [(True, k) for k in list(c)]
    out.append((True, LENGTH))
    return out


def _update_keys(c: Any, a0: Any) -> _Accesses:
    if a0 is _FAILED:
        raise _Unresolved()
    other = None if a0 is _NOARG else a0
    if isinstance(other, (dict, set, frozenset, list, tuple)) and not isinstance(c, dict) \
            or isinstance(other, dict):
        new = False
        out = []
        for k in other:
            new = new or k not in c
            out.append((True, k))
        if new:
            out.append((True, LENGTH))
        return out
    return _WRITE_LEN


_DICT_METHODS: Dict[str, _Handler] = {
    "get": _read_key, "__getitem__": _read_key, "__contains__": _read_key,
    "setdefault": _insert_key, "pop": _remove_key, "popitem": _pop_any(lambda c: next(reversed(c))),
    "update": _update_keys, "clear": _clear_all, "__setitem__": _set_key, "__delitem__": _del_key,
    "keys": _read_len, "values": _read_len, "items": _read_len, "copy": _read_len,
}
_LIST_METHODS: Dict[str, _Handler] = dict.fromkeys(
    ("append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"), _write_len)
_LIST_METHODS.update(dict.fromkeys(("index", "count", "copy"), _read_len))
_SET_METHODS: Dict[str, _Handler] = {
    "add": _insert_key, "discard": _remove_key, "remove": _remove_key, "__contains__": _read_key,
    "pop": _pop_any(lambda c: next(iter(c))), "clear": _clear_all, "update": _update_keys,
    "copy": _read_len,
}
_DEQUE_METHODS: Dict[str, _Handler] = dict.fromkeys(
    ("append", "appendleft", "pop", "popleft", "extend", "extendleft", "clear", "rotate",
     "remove", "insert", "reverse"), _write_len)
_DEQUE_METHODS.update(dict.fromkeys(("index", "count", "copy"), _read_len))
# Exact receiver types only: a subclass may override the method with anything.
_METHODS: Dict[type, Dict[str, _Handler]] = {
    dict: _DICT_METHODS, collections.defaultdict: _DICT_METHODS,
    collections.OrderedDict: _DICT_METHODS, collections.Counter: _DICT_METHODS,
    list: _LIST_METHODS, set: _SET_METHODS, collections.deque: _DEQUE_METHODS,
}
# Handlers that never look at the argument: it is not recomputed for them.
_ARGLESS = frozenset(h for t in _METHODS.values() for h in t.values()
                     if h in (_read_len, _write_len, _clear_all) or h.__name__ == "handler")


def _local_name(e: Optional[B.Expr]) -> Optional[str]:
    """The name when expression e (or None) is a plain local or cell variable, else None:
    probes read those straight from f_locals instead of calling an evaluator."""
    return e[1] if e is not None and (e[0] == "fast" or e[0] == "deref") else None


# settrace on 3.11: opcode events are switched per line (see _line_gate). Not on 3.12+:
# there f_trace_opcodes of one frame turns the INSTRUCTION events of its whole code object on
# or off (3.13), which other threads' frames of that code rely on.
_GATE_LINES = sys.version_info < (3, 12)


def _line_gate(code: CodeType,
               offsets: List[int]) -> Optional[Tuple[FrozenSet[int], FrozenSet[int]]]:
    """(hot, last) for the opcode switching of the settrace backend, or None.

    Each opcode event costs a Python call, and most instructions of traced code have no
    probe. The backend therefore also takes line events and turns opcode events on at the
    start of a line that has probes (`hot`: their line numbers) and off at the start of any
    other line, and off again after the probe at an offset in `last` (no probe of the same
    line at a larger offset). A probe instruction is thus always reached with opcode events
    on: the interpreter reports a line event before the first instruction of each new line
    and after every backward jump, so the only instructions reached without one are those
    that follow an instruction of the same line at a smaller offset. None (opcode events all
    the time) when an instruction with a probe has no line number (no line event shows it).
    """
    lines: Dict[int, Optional[int]] = {}
    for start, end, line in code.co_lines():
        for off in offsets:
            if start <= off < end:
                lines[off] = line
    if len(lines) != len(offsets) or None in lines.values():
        return None
    hot = cast(FrozenSet[int], frozenset(lines.values()))  # no None: checked above
    last = frozenset(off for off, line in lines.items()
                     if not any(o > off and ln == line for o, ln in lines.items()))
    return hot, last


class _CodeInfo:
    __slots__ = ("code", "probes", "atomic", "local", "events", "hot")

    def __init__(self, code: CodeType, probes: Dict[int, _Probe], atomic: bool) -> None:
        self.code = code
        self.probes = probes        # offset -> function(frame)
        self.atomic = atomic
        self.local: Optional[_TraceFn] = None  # settrace: the local trace function
        self.events = 0             # monitoring: the local events set
        # settrace on 3.11: lines with probes (see _line_gate)
        self.hot: Optional[FrozenSet[int]] = None


class Tracer:
    """Reports the accesses of traced code to ``sink`` (see the module's doc)."""

    def __init__(self, sink: Sink) -> None:
        if sys.version_info < (3, 11):
            # the bytecode analysis reads 3.11's instruction set and positions
            raise RuntimeError("tracing Python code needs Python 3.11 or later")
        self.sink = sink
        forced = os.environ.get("ATOMICITY_PY_BACKEND", "")
        if forced not in ("", "settrace", "monitoring"):
            raise ValueError("ATOMICITY_PY_BACKEND must be 'settrace' or 'monitoring', not %r"
                             % forced)
        if forced == "monitoring" and not hasattr(sys, "monitoring"):
            raise ValueError("ATOMICITY_PY_BACKEND=monitoring needs Python 3.12 or later")
        self.backend = forced or ("monitoring" if hasattr(sys, "monitoring") else "settrace")
        # code object -> number of its access instructions that are not reported because an
        # operand cannot be recomputed (counted once per instruction at analysis, and once per
        # execution when recomputing fails at run time).
        self.unresolved: Dict[CodeType, int] = {}
        self.tool_id: Optional[int] = None  # monitoring: the sys.monitoring tool id in use
        # code -> _CodeInfo, or None for unwanted code
        self._infos: Dict[CodeType, Optional[_CodeInfo]] = {}
        self._learn_lock = _thread.allocate_lock()  # not threading.Lock: it may be wrapped
        self._active = False
        self._prev_trace: Any = None
        self._prev_thread_trace: Any = None

    # --- code objects ----------------------------------------------------------------
    def _learn(self, code: CodeType, frame: Optional[FrameType]) -> Optional[_CodeInfo]:
        """Decide once per code object whether and how it is traced."""
        with self._learn_lock:
            info = self._infos.get(code, _MISSING)
            if info is not _MISSING:
                return info
            info = None
            filename = code.co_filename
            mine = os.path.dirname(os.path.abspath(filename)) == _PACKAGE_DIR \
                if filename and not filename.startswith("<") else False
            if not mine and self.sink.wants_code(code):
                module = frame.f_globals.get("__name__", "") if frame is not None else ""
                atomic = bool(self.sink.is_atomic(code, module))
                specs, unresolved = B.analyze(code)
                if unresolved:
                    self.unresolved[code] = unresolved
                probes = {off: self._make_probe(code, spec) for off, spec in specs.items()}
                info = _CodeInfo(code, probes, atomic)
                if self.backend == "settrace":
                    info.local = self._make_local(info)
            self._infos[code] = info
            return info

    def _missed(self, code: CodeType) -> None:
        self.unresolved[code] = self.unresolved.get(code, 0) + 1

    def _make_probe(self, code: CodeType, spec: B.Probe) -> _Probe:
        """Probe spec -> function(frame) that reports the access it describes."""
        line, kind = spec[0], spec[1]
        sink = self.sink
        attr, item, glob = sink.attr, sink.item, sink.glob
        missed = self._missed
        if kind == B.METHOD:
            exprs = (spec[2],) + spec[4]
        elif kind in (B.ATTR_R, B.ATTR_W):
            exprs = (spec[2],)
        elif kind in (B.GLOB_R, B.GLOB_W, B.NAME_R, B.NAME_W):
            exprs = ()
        else:
            exprs = spec[2:]
        nl = any(_needs_locals(x) for x in exprs)

        if kind in (B.GLOB_R, B.GLOB_W, B.NAME_R, B.NAME_W):
            name = spec[2]
            is_write = kind in (B.GLOB_W, B.NAME_W)
            module_only = kind in (B.NAME_R, B.NAME_W)

            def probe(f: FrameType) -> None:
                g = f.f_globals
                if module_only and f.f_locals is not g:
                    return          # a class body or exec() with its own locals
                if not is_write:
                    v = g.get(name, _MISSING)
                    if v is _MISSING or isinstance(v, _CODE_VALUES):
                        return      # a builtin, or code rather than data
                glob(is_write, g, name, code, line)
            return probe

        if kind in (B.ATTR_R, B.ATTR_W):
            obj_ev, name = _compile(spec[2]), spec[3]
            is_write = kind == B.ATTR_W

            local = spec[2][1] if spec[2][0] == "fast" else None   # the common `self.x`
            kinds, module_type = _attr_kinds, types.ModuleType

            def probe(f: FrameType) -> None:
                try:
                    o = f.f_locals[local] if local is not None else \
                        obj_ev(f, f.f_locals if nl else None)
                except Exception:
                    missed(code)
                    return
                tp = type(o)
                if tp is module_type:
                    d = o.__dict__
                    if not is_write:
                        v = d.get(name, _MISSING)
                        if v is _MISSING or isinstance(v, _CODE_VALUES):
                            return
                    glob(is_write, d, name, code, line)
                    return
                if isinstance(o, type):
                    tp = o
                k = kinds.get((tp, name))
                if k is None:
                    k = _attr_kind(tp, name)
                if k == _METHOD or k == _COMPUTED:
                    return          # methods are code; properties' own code is traced
                attr(is_write, o, name, code, line)
            return probe

        if kind in (B.ITEM_R, B.ITEM_W, B.ITEM_D):
            c_ev, k_ev = _compile(spec[2]), _compile(spec[3])
            c_loc, k_loc = _local_name(spec[2]), _local_name(spec[3])
            is_read, is_del = kind == B.ITEM_R, kind == B.ITEM_D
            immutable, defaultdict = _IMMUTABLE, collections.defaultdict

            def probe(f: FrameType) -> None:
                try:
                    L: Any = f.f_locals if nl else None
                    c = L[c_loc] if c_loc is not None else c_ev(f, L)
                    tc = type(c)
                    if tc in immutable or isinstance(c, type):
                        return
                    key = L[k_loc] if k_loc is not None else k_ev(f, L)
                    if tc is list and type(key) is int and key < 0:
                        key += len(c)
                    if is_read:
                        grows = isinstance(c, defaultdict) and key not in c
                    else:
                        grows = isinstance(c, dict) and (is_del or key not in c)
                except Exception:
                    missed(code)
                    return
                if is_read and not grows:
                    item(False, c, key, code, line)
                    return
                item(True, c, key, code, line)
                if grows or (is_del and isinstance(c, (list, set))):
                    item(True, c, LENGTH, code, line)
            return probe

        if kind in (B.SLICE_R, B.SLICE_W, B.ITER):
            c_ev, c_loc = _compile(spec[2]), _local_name(spec[2])
            is_write, is_iter = kind == B.SLICE_W, kind == B.ITER
            immutable, sized = _IMMUTABLE, _SIZED

            def probe(f: FrameType) -> None:
                try:
                    c = f.f_locals[c_loc] if c_loc is not None else \
                        c_ev(f, f.f_locals if nl else None)
                except Exception:
                    missed(code)
                    return
                if isinstance(c, sized) if is_iter else \
                        type(c) not in immutable and not isinstance(c, type):
                    item(is_write, c, LENGTH, code, line)
            return probe

        if kind == B.CONTAINS:
            key_ev = _compile(spec[2]) if spec[2] is not None else None
            c_ev = _compile(spec[3])
            k_loc, c_loc = _local_name(spec[2]), _local_name(spec[3])
            sized = _SIZED

            def probe(f: FrameType) -> None:
                try:
                    L: Any = f.f_locals if nl else None
                    c = L[c_loc] if c_loc is not None else c_ev(f, L)
                    if isinstance(c, (dict, set)):
                        if key_ev is None:
                            raise _Unresolved()
                        key = L[k_loc] if k_loc is not None else key_ev(f, L)
                    elif isinstance(c, sized):
                        key = LENGTH
                    else:
                        return
                except Exception:
                    missed(code)
                    return
                item(False, c, key, code, line)
            return probe

        if kind == B.LEN:
            fn_ev, a_ev = _compile(spec[2]), _compile(spec[3])
            a_loc = _local_name(spec[3])
            builtin_len, sized = len, _SIZED

            def probe(f: FrameType) -> None:
                try:
                    L: Any = f.f_locals if nl else None
                    if fn_ev(f, L) is not builtin_len:
                        return
                    c = L[a_loc] if a_loc is not None else a_ev(f, L)
                except Exception:
                    missed(code)
                    return
                if isinstance(c, sized):
                    item(False, c, LENGTH, code, line)
            return probe

        if kind == B.METHOD:
            r_ev, name = _compile(spec[2]), spec[3]
            r_loc = _local_name(spec[2])
            args = spec[4]
            a0_ev = _compile(args[0]) if args and args[0] is not None else None
            a_loc = _local_name(args[0]) if args else None
            methods, argless = _METHODS, _ARGLESS

            def probe(f: FrameType) -> None:
                L: Any = f.f_locals if nl else None
                try:
                    c = L[r_loc] if r_loc is not None else r_ev(f, L)
                except Exception:
                    missed(code)
                    return
                table = methods.get(type(c))
                if table is None:
                    return
                handler = table.get(name)
                if handler is None:
                    return
                if a0_ev is None or handler in argless:
                    a0 = _NOARG
                else:
                    try:
                        a0 = L[a_loc] if a_loc is not None else a0_ev(f, L)
                    except _Unresolved:
                        a0 = _NOARG
                    except Exception:
                        a0 = _FAILED
                try:
                    accesses = handler(c, a0)
                except Exception:
                    missed(code)
                    return
                for w, k in accesses:
                    item(w, c, k, code, line)
            return probe

        raise ValueError("unknown probe kind %r" % (kind,))

    # --- settrace backend --------------------------------------------------------------
    def _make_local(self, info: _CodeInfo) -> Optional[_TraceFn]:
        probes, code, atomic = info.probes, info.code, info.atomic
        end = self.sink.end
        if not probes and not atomic:
            return None
        get = probes.get
        gate = _line_gate(code, list(probes)) if _GATE_LINES and probes else None

        if gate is not None:
            hot, last = gate
            info.hot = hot

            def local_gated(frame: FrameType, event: str, arg: Any) -> _TraceFn:
                if event == "opcode":
                    off = frame.f_lasti
                    p = get(off)
                    if p is not None:
                        p(frame)
                        if off in last:
                            frame.f_trace_opcodes = False
                elif event == "line":
                    frame.f_trace_opcodes = frame.f_lineno in hot
                elif event == "return" and atomic and self._active:
                    end(code, frame.f_lineno)
                return local_gated
            return local_gated

        if not atomic:
            def local(frame: FrameType, event: str, arg: Any) -> _TraceFn:
                if event == "opcode":
                    p = get(frame.f_lasti)
                    if p is not None:
                        p(frame)
                return local
            return local

        def local_atomic(frame: FrameType, event: str, arg: Any) -> _TraceFn:
            if event == "opcode":
                p = get(frame.f_lasti)
                if p is not None:
                    p(frame)
            elif event == "return" and self._active:
                end(code, frame.f_lineno)
            return local_atomic
        return local_atomic

    def _global_trace(self, frame: FrameType, event: str, arg: Any) -> Optional[_TraceFn]:
        if event != "call" or not self._active:
            return None
        code = frame.f_code
        info = self._infos.get(code, _MISSING)
        if info is _MISSING:
            info = self._learn(code, frame)
        if info is None or info.local is None:
            return None
        if info.hot is not None:
            # a call, or a generator's resumption: the line events to come do not include
            # the current line, so its opcode setting is made here
            frame.f_trace_lines = True
            frame.f_trace_opcodes = frame.f_lineno in info.hot
        else:
            frame.f_trace_lines = False
            if info.probes:
                frame.f_trace_opcodes = True
        if info.atomic:
            self.sink.begin(code, code.co_firstlineno)
        return info.local

    # --- monitoring backend ------------------------------------------------------------
    def _m_start(self, code: CodeType, offset: int) -> Any:
        info = self._infos.get(code, _MISSING)
        if info is _MISSING:
            info = self._learn(code, sys._getframe(1))
            if info is not None:
                ev = _monitoring.events
                events = ev.INSTRUCTION if info.probes else 0
                if info.atomic:
                    events |= ev.PY_RETURN | ev.PY_YIELD | ev.PY_RESUME
                if events:
                    info.events = events
                    _monitoring.set_local_events(self.tool_id, code, events)
        if info is None or not info.atomic:
            return _monitoring.DISABLE
        self.sink.begin(code, code.co_firstlineno)
        return None

    def _make_m_instruction(self) -> Callable[[CodeType, int], Any]:
        """The INSTRUCTION callback: a closure over what it needs, as it runs before every
        access instruction of traced code (the other offsets are disabled at their first
        event)."""
        infos_get = self._infos.get     # start() makes it again after stop() replaced _infos
        disable = _monitoring.DISABLE
        getframe = sys._getframe

        def instruction(code: CodeType, offset: int) -> Any:
            info = infos_get(code)
            p = info.probes.get(offset) if info is not None else None
            if p is None:
                return disable
            p(getframe(1))
            return None
        return instruction

    def _m_resume(self, code: CodeType, offset: int) -> None:
        info = self._infos.get(code)
        if info is not None and info.atomic:
            self.sink.begin(code, code.co_firstlineno)

    def _m_leave(self, code: CodeType, offset: int, value: Any) -> None:
        info = self._infos.get(code)
        if info is not None and info.atomic:
            self.sink.end(code, sys._getframe(1).f_lineno)

    def _m_unwind(self, code: CodeType, offset: int, exc: BaseException) -> None:
        info = self._infos.get(code)    # PY_UNWIND is global only: most calls are for others
        if info is not None and info.atomic:
            self.sink.end(code, sys._getframe(1).f_lineno)

    # --- public ------------------------------------------------------------------------
    def start(self) -> None:
        """Instrument this thread and every thread started later (monitoring: all threads)."""
        if self._active:
            return
        if self.backend == "monitoring":
            mon = _monitoring
            for tool in (mon.DEBUGGER_ID, mon.COVERAGE_ID, mon.PROFILER_ID, 3, 4,
                         mon.OPTIMIZER_ID):
                try:
                    mon.use_tool_id(tool, "atomicity")
                except ValueError:
                    continue
                self.tool_id = tool
                break
            else:
                raise RuntimeError("no free sys.monitoring tool id (all six are in use)")
            ev = mon.events
            mon.register_callback(self.tool_id, ev.PY_START, self._m_start)
            mon.register_callback(self.tool_id, ev.INSTRUCTION, self._make_m_instruction())
            mon.register_callback(self.tool_id, ev.PY_RESUME, self._m_resume)
            mon.register_callback(self.tool_id, ev.PY_RETURN, self._m_leave)
            mon.register_callback(self.tool_id, ev.PY_YIELD, self._m_leave)
            mon.register_callback(self.tool_id, ev.PY_UNWIND, self._m_unwind)
            self._active = True
            mon.set_events(self.tool_id, ev.PY_START | ev.PY_UNWIND)
        else:
            self._prev_trace = sys.gettrace()
            self._prev_thread_trace = getattr(threading, "_trace_hook", None)
            self._active = True
            if sys.version_info >= (3, 12):
                # 3.12 delivers no opcode events at all unless some frame asked for them
                # before tracing started (3.13 delivers them from each code object's second
                # run on: documented)
                sys._getframe(1).f_trace_opcodes = True
            threading.settrace(self._global_trace)
            sys.settrace(self._global_trace)

    def stop(self) -> None:
        """Remove every hook; safe to call twice. Threads still running under settrace keep a
        trace function that does nothing more."""
        if not self._active:
            return
        self._active = False
        if self.backend == "monitoring":
            mon = _monitoring
            tool = self.tool_id
            mon.set_events(tool, 0)
            for info in list(self._infos.values()):
                if info is not None and info.events:
                    mon.set_local_events(tool, info.code, 0)
                    info.events = 0
            for event in ("PY_START", "INSTRUCTION", "PY_RESUME", "PY_RETURN", "PY_YIELD",
                          "PY_UNWIND"):
                mon.register_callback(tool, getattr(mon.events, event), None)
            mon.free_tool_id(tool)
            # offsets disabled with DISABLE stay disabled for this tool id otherwise
            mon.restart_events()
            self.tool_id = None
        else:
            sys.settrace(self._prev_trace)
            threading.settrace(self._prev_thread_trace)
            for info in list(self._infos.values()):
                if info is not None:
                    info.probes.clear()   # frames still traced find nothing to report
        # a later start() must analyse again (the probes of settrace were cleared)
        self._infos = {}
