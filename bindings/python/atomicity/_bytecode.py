"""Static analysis of a code object's bytecode for the access tracer (_tracing).

Neither sys.settrace's opcode events nor sys.monitoring's INSTRUCTION events show the value
stack, so the object of a STORE_ATTR or the container and key of a BINARY_SUBSCR are not
visible when the event fires. This module finds, once per code object, which instructions
produced each operand of each access instruction, by simulating the value stack within a
basic block. When an operand was produced by a side-effect-free expression (a local, cell,
global or constant, followed by attribute loads, subscripts of builtin containers, or int/str
arithmetic) it becomes an *expression* (a nested tuple) that the tracer recomputes from the
frame right before the instruction runs. Operands that cannot be recomputed safely (a call's
result, anything across a jump target) are unknown (None); accesses that need them are not
reported and are counted as unresolved.

The stack model knows the pops and pushes of the instructions that occur in expressions; it
checks each against dis.stack_effect and, for any instruction it does not know or whose
effect disagrees, forgets the whole stack (every entry below becomes unknown), which can
lose accesses but never attribute one to the wrong object.

Works with the bytecode of CPython 3.11, 3.12 and 3.13 (PRECALL/LOAD_METHOD on 3.11; the
method bit of LOAD_ATTR, BINARY_SLICE on 3.12; the LOAD_FAST_LOAD_FAST family and CALL_KW on
3.13).
"""

from __future__ import annotations

import dis
import sys
from types import CodeType
from typing import Any, Dict, List, Optional, Tuple

# Probe kinds (first field of a probe tuple after offset and line).
ATTR_R = "attr_r"      # (obj)                  attribute read
ATTR_W = "attr_w"      # (obj)                  attribute write or delete
ITEM_R = "item_r"      # (container, key)       item read
ITEM_W = "item_w"      # (container, key)       item write
ITEM_D = "item_d"      # (container, key)       item delete
SLICE_R = "slice_r"    # (container,)           slice read
SLICE_W = "slice_w"    # (container,)           slice write or delete
CONTAINS = "contains"  # (item, container)      `in` / `not in`
ITER = "iter"          # (container,)           iteration (GET_ITER)
METHOD = "method"      # (receiver, name, args) call of a method
LEN = "len"            # (callable, arg)        call of a global named len
GLOB_R = "glob_r"      # (name,)                global read
GLOB_W = "glob_w"      # (name,)                global write or delete
NAME_R = "name_r"      # (name,)                LOAD_NAME (module level only, checked at run)
NAME_W = "name_w"      # (name,)                STORE_NAME / DELETE_NAME

# Method names that the tracer reports on builtin containers; a call of one of these on a
# receiver that cannot be recomputed counts as unresolved.
TRACKED_METHODS = frozenset((
    "get", "setdefault", "pop", "popitem", "update", "clear", "keys", "values", "items",
    "copy", "__contains__", "__getitem__", "__setitem__", "__delitem__",
    "append", "extend", "insert", "remove", "index", "count", "sort", "reverse",
    "add", "discard", "appendleft", "popleft", "extendleft", "rotate",
))

# Expression nodes (nested tuples, compiled by _tracing):
#   ("fast", name)  ("deref", name)  ("global", name)  ("name", name)  ("const", value)
#   ("attr", expr, name)  ("subscr", expr, expr)  ("binop", op, expr, expr)
# Markers that are not values: ("null",) for PUSH_NULL and the NULL of LOAD_GLOBAL/LOAD_ATTR,
# ("meth", receiver_expr, name) for both slots a method lookup pushes, ("slice",) for the
# result of BUILD_SLICE.
Expr = Tuple[Any, ...]
# A probe: (line, kind, *operands).
Probe = Tuple[Any, ...]

NULL: Expr = ("null",)
SLICE: Expr = ("slice",)

_BINOPS = {0: "+", 10: "-", 5: "*"}   # BINARY_OP argument -> operator evaluated on ints/strs
_PY311 = sys.version_info[:2] == (3, 11)

_LOAD_LOCAL = {"LOAD_FAST": "fast", "LOAD_FAST_CHECK": "fast", "LOAD_DEREF": "deref"}
_STORE_ONE = frozenset(("STORE_FAST", "STORE_DEREF", "STORE_GLOBAL", "STORE_NAME", "POP_TOP"))
_UNARY = frozenset(("UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "UNARY_POSITIVE",
                    "TO_BOOL", "FORMAT_SIMPLE", "CONVERT_VALUE"))
# Instructions whose result stored into a name is code (a def, an import), not data: the
# store is not reported (a module defines all its functions at import).
_DEFINES = frozenset(("MAKE_FUNCTION", "SET_FUNCTION_ATTRIBUTE", "IMPORT_NAME", "IMPORT_FROM"))
_NOP = frozenset(("NOP", "RESUME", "CACHE", "EXTENDED_ARG", "PRECALL", "KW_NAMES",
                  "MAKE_CELL", "COPY_FREE_VARS", "NOT_TAKEN"))


def _is_value(e: Optional[Expr]) -> bool:
    """True for an expression that denotes a value (not unknown and not a marker)."""
    return e is not None and e[0] not in ("null", "meth", "slice")


def analyze(code: CodeType) -> Tuple[Dict[int, Probe], int]:
    """Return (probes, unresolved) for a code object.

    probes: dict byte offset -> (line, kind, *operands); the operands are expressions (None
    for an operand the tracer may ignore) as described above.
    unresolved: the number of access instructions left unreported because an operand they
    need cannot be recomputed.
    """
    probes: Dict[int, Probe] = {}
    unresolved = 0
    stack: List[Optional[Expr]] = []  # known top of the value stack; below it everything is unknown
    kwnames: Tuple[str, ...] = ()  # 3.11/3.12: names of the keyword arguments of the next CALL
    line = code.co_firstlineno
    module_level = code.co_name == "<module>"

    def pop() -> Optional[Expr]:
        return stack.pop() if stack else None

    def peek(n: int) -> Optional[Expr]:        # n = 1 is the top
        return stack[-n] if len(stack) >= n else None

    last: Optional[str] = None  # the name of the instruction before this one (prev)
    for ins in dis.get_instructions(code):
        prev, last = last, ins.opname
        pos = ins.positions
        if pos is not None and pos.lineno is not None:
            line = pos.lineno
        if ins.is_jump_target:
            stack = []  # reached from elsewhere too: its stack is not this block's
        op = ins.opname
        # None only for instructions without an argument, which never read it below
        # (stack_effect is given None for them)
        arg = 0 if ins.arg is None else ins.arg
        off = ins.offset
        # (pops, pushes) of a known instruction, pushes a list of expressions
        model: Optional[Tuple[int, List[Optional[Expr]]]] = None

        # --- access instructions: record a probe from the stack before them -------------
        if op == "LOAD_ATTR" or op == "LOAD_METHOD":
            is_method = op == "LOAD_METHOD" or (not _PY311 and arg & 1)
            obj = peek(1)
            name = ins.argval
            if is_method:
                m = ("meth", obj, name) if _is_value(obj) else ("meth", None, name)
                model = (1, [m, m])
            else:
                if _is_value(obj):
                    probes[off] = (line, ATTR_R, obj, name)
                else:
                    unresolved += 1
                model = (1, [("attr", obj, name) if _is_value(obj) else None])
        elif op in ("STORE_ATTR", "DELETE_ATTR"):
            obj = peek(1)
            if _is_value(obj):
                probes[off] = (line, ATTR_W, obj, ins.argval)
            else:
                unresolved += 1
            model = (2, []) if op == "STORE_ATTR" else (1, [])
        elif op == "BINARY_SUBSCR":
            c, k = peek(2), peek(1)
            if _is_value(c) and k == SLICE:
                probes[off] = (line, SLICE_R, c)
            elif _is_value(c) and _is_value(k):
                probes[off] = (line, ITEM_R, c, k)
            else:
                unresolved += 1
            model = (2, [("subscr", c, k) if _is_value(c) and _is_value(k) else None])
        elif op in ("STORE_SUBSCR", "DELETE_SUBSCR"):
            c, k = peek(2), peek(1)
            if _is_value(c) and k == SLICE:
                probes[off] = (line, SLICE_W, c)
            elif _is_value(c) and _is_value(k):
                probes[off] = (line, ITEM_W if op == "STORE_SUBSCR" else ITEM_D, c, k)
            else:
                unresolved += 1
            model = (3, []) if op == "STORE_SUBSCR" else (2, [])
        elif op in ("BINARY_SLICE", "STORE_SLICE"):
            c = peek(3)
            if _is_value(c):
                probes[off] = (line, SLICE_R if op == "BINARY_SLICE" else SLICE_W, c)
            else:
                unresolved += 1
            model = (3, [None]) if op == "BINARY_SLICE" else (4, [])
        elif op == "CONTAINS_OP":
            item, c = peek(2), peek(1)
            if _is_value(c):
                # the item is only needed for dicts and sets: keep None when unknown
                probes[off] = (line, CONTAINS, item if _is_value(item) else None, c)
            else:
                unresolved += 1
            model = (2, [None])
        elif op == "GET_ITER":
            c = peek(1)
            if _is_value(c):
                probes[off] = (line, ITER, c)
            model = (1, [None])
        elif op in ("CALL", "CALL_KW"):
            nkw = len(kwnames)
            extra = 0
            if op == "CALL_KW":
                top = peek(1)
                nkw = len(top[1]) if top is not None and top[0] == "const" else -1
                extra = 1
            argc = arg
            slots = (peek(argc + extra + 2), peek(argc + extra + 1))
            args = [peek(argc + extra - i) for i in range(argc)]
            npos = argc - nkw if nkw >= 0 else 0
            meth = next((s for s in slots if s is not None and s[0] == "meth"), None)
            if meth is not None:
                if meth[1] is not None:
                    probes[off] = (line, METHOD, meth[1], meth[2], tuple(args[:npos]))
                elif meth[2] in TRACKED_METHODS:
                    unresolved += 1
            else:
                fn = next((s for s in slots if _is_value(s)), None)
                if fn is not None and fn[0] in ("global", "name") and fn[1] == "len" \
                        and argc == 1 and nkw == 0:
                    if _is_value(args[0]):
                        probes[off] = (line, LEN, fn, args[0])
                    else:
                        unresolved += 1
            kwnames = ()
            model = (argc + extra + 2, [None])
        elif op in ("LOAD_GLOBAL",):
            if not arg & 1:
                # with the low bit set the global is being called: a function or a class
                probes[off] = (line, GLOB_R, ins.argval)
            g = ("global", ins.argval)
            if arg & 1:
                # 3.11/3.12 push NULL below the value, 3.13 above: a CALL finds either
                model = (0, [NULL, g] if sys.version_info < (3, 13) else [g, NULL])
            else:
                model = (0, [g])
        elif op in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            if prev not in _DEFINES:
                probes[off] = (line, GLOB_W, ins.argval)
            model = (1, []) if op == "STORE_GLOBAL" else (0, [])
        elif op == "LOAD_NAME":
            if module_level:
                probes[off] = (line, NAME_R, ins.argval)
            model = (0, [("name", ins.argval)])
        elif op in ("STORE_NAME", "DELETE_NAME"):
            if module_level and prev not in _DEFINES:
                probes[off] = (line, NAME_W, ins.argval)
            model = (1, []) if op == "STORE_NAME" else (0, [])

        # --- the rest of the stack model ------------------------------------------------
        elif op in _LOAD_LOCAL:
            model = (0, [(_LOAD_LOCAL[op], ins.argval)])
        elif op == "LOAD_CONST":
            model = (0, [("const", ins.argval)])
        elif op == "RETURN_CONST":
            model = (0, [])
        elif op == "LOAD_FAST_LOAD_FAST":
            a, b = ins.argval
            model = (0, [("fast", a), ("fast", b)])
        elif op == "STORE_FAST_LOAD_FAST":
            model = (1, [("fast", ins.argval[1])])
        elif op == "STORE_FAST_STORE_FAST":
            model = (2, [])
        elif op in _STORE_ONE or op.startswith("POP_JUMP"):
            model = (1, [])
        elif op == "PUSH_NULL":
            model = (0, [NULL])
        elif op == "COPY":
            model = (0, [peek(arg)])
        elif op == "SWAP":
            if len(stack) >= arg:
                stack[-1], stack[-arg] = stack[-arg], stack[-1]
            else:
                stack = []
            continue
        elif op == "BINARY_OP":
            a, b = peek(2), peek(1)
            sym = _BINOPS.get(arg)
            e = ("binop", sym, a, b) if sym and _is_value(a) and _is_value(b) else None
            model = (2, [e])
        elif op in ("COMPARE_OP", "IS_OP"):
            model = (2, [None])
        elif op in _UNARY:
            model = (1, [None])
        elif op == "FORMAT_WITH_SPEC":
            model = (2, [None])
        elif op == "FORMAT_VALUE":
            model = (2 if (arg & 0x04) else 1, [None])
        elif op in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING"):
            model = (arg, [None])
        elif op == "BUILD_MAP":
            model = (2 * arg, [None])
        elif op == "BUILD_CONST_KEY_MAP":
            model = (arg + 1, [None])
        elif op == "BUILD_SLICE":
            model = (arg, [SLICE])
        elif op == "UNPACK_SEQUENCE":
            unpacked: List[Optional[Expr]] = [None] * arg
            model = (1, unpacked)
        elif op == "FOR_ITER":
            model = (0, [None])
        if op == "KW_NAMES":
            kwnames = code.co_consts[arg] if _PY311 else ins.argval
        if op in _NOP:
            continue
        if model is None:
            stack = []  # an instruction the model does not know: forget everything
            continue
        pops, pushes = model
        if not (_PY311 and op == "CALL"):
            try:
                effect = dis.stack_effect(ins.opcode, arg if ins.opcode >= dis.HAVE_ARGUMENT
                                          else None, jump=False)
            except ValueError:
                effect = None
            if effect != len(pushes) - pops:
                stack = []
                continue
        for _ in range(pops):
            pop()
        stack.extend(pushes)
    return probes, unresolved
