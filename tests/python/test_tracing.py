"""Tests of the access tracer (atomicity._tracing): which accesses of Python code it reports.

The target functions below are traced with a recording sink; each access line carries a
marker comment `# L:name` and the tests compare the exact sequence of reported accesses with
their lines. TracingTests runs in this process with the interpreter's default backend (or the
one ATOMICITY_PY_BACKEND forces); OtherBackendsTests runs TracingTests again in a child for
every other (interpreter, backend) pair it finds (sys.executable, python3.12 and python3.13 on
PATH, and those listed in ATOMICITY_TEST_PYTHONS, separated by the path separator): settrace
up to 3.12, sys.monitoring from 3.12 on. Pure Python: the library is not needed.
"""

import ast
import collections
import os
import re
import shutil
import subprocess
import sys
import threading
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BINDING = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir, "bindings", "python"))
if BINDING not in sys.path:
    sys.path.insert(0, BINDING)

from atomicity import _tracing  # noqa: E402
from atomicity._tracing import LENGTH  # noqa: E402

THIS_FILE = os.path.abspath(__file__)
if THIS_FILE.endswith((".pyc", ".pyo")):
    THIS_FILE = THIS_FILE[:-1]


def _markers():
    lines = {}
    with open(THIS_FILE, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            for name in re.findall(r"L:(\w+)", text.partition("#")[2]):
                lines[name] = n
    return lines


L = _markers()


class Recorder:
    """A sink that records every call; wants only the code objects in `wanted`."""

    def __init__(self, wanted, atomic=(), hash_keys=False):
        self.wanted = set(wanted)
        self.atomic = set(atomic)
        self.hash_keys = hash_keys
        self.log = []
        self.asked = []
        self.threads = set()

    def wants_code(self, code):
        self.asked.append(code)
        return code in self.wanted or code.co_filename == "<tracing-test>"

    def is_atomic(self, code, module):
        return code in self.atomic

    def begin(self, code, line):
        self.log.append(("begin", code.co_name, line))

    def end(self, code, line):
        self.log.append(("end", code.co_name, line))

    def _name(self, obj):
        return obj.__name__ if isinstance(obj, (type, types.ModuleType)) else type(obj).__name__

    def attr(self, is_write, obj, name, code, line):
        self.threads.add(threading.get_ident())
        self.log.append(("attr", "w" if is_write else "r", self._name(obj), name, line))

    def item(self, is_write, container, key, code, line):
        if self.hash_keys:
            hash(key)   # runs the key's own __hash__: must not be traced
        self.threads.add(threading.get_ident())
        self.log.append(("item", "w" if is_write else "r", self._name(container), key, line))

    def glob(self, is_write, namespace, name, code, line):
        self.log.append(("glob", "w" if is_write else "r", name, line))


# --- targets ---------------------------------------------------------------------------

class Inner:
    pass


class Obj:
    def __init__(self):
        self.inner = Inner()

    def m(self):
        return 1

    @property
    def p(self):
        return 2


NS = types.ModuleType("ns")
NS.VALUE = 1
COUNTER = 0


def attrs(o):
    o.a = 1                 # L:attr_w
    x = o.a                 # L:attr_r
    o.m()
    o.p
    o.inner.b = x           # L:chain
    del o.a                 # L:attr_d
    return NS.VALUE         # L:modattr


def items(d, lst, k):
    d[k] = 1                # L:item_new
    d[k] = 2                # L:item_set
    v = d[k]                # L:item_get
    d[k] += 1               # L:item_aug
    del d[k]                # L:item_del
    lst[0] = v              # L:list_set
    lst[-1]                 # L:list_neg
    lst[1:2]                # L:slice_r
    lst[0:1] = [9]          # L:slice_w
    k in d                  # L:in_dict
    v in lst                # L:in_list
    n = len(lst)            # L:len
    for x in d:             # L:iter
        pass
    d[k + "x"] = n          # L:binop_key
    return n


TABLE = {}


def const_keys(d, k):
    d[(1, 2)] = k           # L:tuple_key
    TABLE.clear()           # L:global_clear
    return k in (1, 2), d.get((1, 2), ())   # L:tuple_in


class MyDict(dict):
    pass


def methods(d, lst, s, dq, md):
    d.get("a")              # L:get
    d.setdefault("b", 1)    # L:setdefault_new
    d.setdefault("b", 2)    # L:setdefault_old
    d.pop("b")              # L:pop
    d.pop("zz", None)       # L:pop_absent
    d.update({"c": 1})      # L:update (a dict display is not recomputed: the length only)
    d.keys()                # L:keys
    d.clear()               # L:clear
    lst.append(1)           # L:append
    lst.pop()               # L:list_pop
    s.add(1)                # L:add_new
    s.add(1)                # L:add_old
    s.discard(1)            # L:discard
    dq.append(1)            # L:dq_append
    dq.popleft()            # L:dq_popleft
    md.get("a")             # a subclass may override get: not reported
    return md["a"]          # L:md_item


def helper():
    return 1


def globals_():
    global COUNTER
    COUNTER += 1            # L:counter
    helper()
    return len("abc")


def make():
    return Obj()


def unresolved():
    make().a = 1
    return make().inner


def worker(d):
    d["t"] = 1              # L:worker


def atomic_ok(d):           # L:atomic_def
    d["x"] = 1              # L:atomic_body
    return d                # L:atomic_ret


def atomic_raises(d):       # L:raises_def
    d["y"] = 1              # L:raises_body
    raise ValueError("x")   # L:raises_line


def gen(d):                 # L:gen_def
    d["g"] = 1              # L:gen_a
    yield 1                 # L:gen_y1
    d["g"] = 2              # L:gen_b


# Several probes on one line, reached again without a new line (3.11's settrace switches
# opcode events per line: a backward jump within the line, a branch, a generator resumed on
# the line after its last probe).
def one_line_loop(box, flag):
    n = 0
    while n < 2: n += 1; box["n"] = n                     # noqa: E701  L:loop_line
    v = box["a"] if flag else box["b"]                    # L:cond_line
    return v + sum(one_line_gen(box))                     # L:gen_call


def one_line_gen(box): yield box["a"]; yield box["b"]    # noqa: E704,E702  L:gen_line


class Key:
    def __init__(self, v):
        self.v = v

    def __hash__(self):
        return hash(self.v)  # L:key_hash

    def __eq__(self, other):
        return isinstance(other, Key) and self.v == other.v


def keyed(d, k):
    d[k] = 1                # L:keyed


MODULE_SRC = ("X = 1\nY = X + 1\ndel Y\nimport os\ndef f():\n    return X\n"
              "Z = len(X.__class__.__name__)\n")


def run(sink, fn, *args):
    tracer = _tracing.Tracer(sink)
    tracer.start()
    try:
        return fn(*args), tracer
    finally:
        tracer.stop()


class TracingTests(unittest.TestCase):
    maxDiff = None

    def test_backend(self):
        forced = os.environ.get("ATOMICITY_PY_BACKEND")
        want = forced or ("monitoring" if hasattr(sys, "monitoring") else "settrace")
        self.assertEqual(_tracing.Tracer(Recorder(())).backend, want)

    def test_attributes(self):
        sink = Recorder([attrs.__code__])
        o = Obj()
        run(sink, attrs, o)
        self.assertEqual(sink.log, [
            ("attr", "w", "Obj", "a", L["attr_w"]),
            ("attr", "r", "Obj", "a", L["attr_r"]),
            ("attr", "r", "Obj", "inner", L["chain"]),
            ("attr", "w", "Inner", "b", L["chain"]),
            ("attr", "w", "Obj", "a", L["attr_d"]),
            ("glob", "r", "VALUE", L["modattr"]),
        ])

    def test_items(self):
        sink = Recorder([items.__code__])
        run(sink, items, {}, [1, 2, 3], "k")
        self.assertEqual(sink.log, [
            ("item", "w", "dict", "k", L["item_new"]),
            ("item", "w", "dict", LENGTH, L["item_new"]),
            ("item", "w", "dict", "k", L["item_set"]),
            ("item", "r", "dict", "k", L["item_get"]),
            ("item", "r", "dict", "k", L["item_aug"]),
            ("item", "w", "dict", "k", L["item_aug"]),
            ("item", "w", "dict", "k", L["item_del"]),
            ("item", "w", "dict", LENGTH, L["item_del"]),
            ("item", "w", "list", 0, L["list_set"]),
            ("item", "r", "list", 2, L["list_neg"]),
            ("item", "r", "list", LENGTH, L["slice_r"]),
            ("item", "w", "list", LENGTH, L["slice_w"]),
            ("item", "r", "dict", "k", L["in_dict"]),
            ("item", "r", "list", LENGTH, L["in_list"]),
            ("item", "r", "list", LENGTH, L["len"]),
            ("item", "r", "dict", LENGTH, L["iter"]),
            ("item", "w", "dict", "kx", L["binop_key"]),
            ("item", "w", "dict", LENGTH, L["binop_key"]),
        ])

    def test_several_probes_on_one_line(self):
        sink = Recorder([one_line_loop.__code__, one_line_gen.__code__])
        box = {"a": 1, "b": 2}
        for flag in (True, False):
            run(sink, one_line_loop, box, flag)
        want = []
        for flag in (True, False):
            if flag:
                want += [("item", "w", "dict", "n", L["loop_line"]),
                         ("item", "w", "dict", LENGTH, L["loop_line"])]
            else:
                want += [("item", "w", "dict", "n", L["loop_line"])]
            want += [("item", "w", "dict", "n", L["loop_line"]),
                     ("item", "r", "dict", "a" if flag else "b", L["cond_line"]),
                     ("item", "r", "dict", "a", L["gen_line"]),
                     ("item", "r", "dict", "b", L["gen_line"])]
        self.assertEqual(sink.log, want)

    def test_constant_tuples(self):
        sink = Recorder([const_keys.__code__])
        run(sink, const_keys, {}, 1)
        self.assertEqual(sink.log, [
            ("item", "w", "dict", (1, 2), L["tuple_key"]),
            ("item", "w", "dict", LENGTH, L["tuple_key"]),
            ("glob", "r", "TABLE", L["global_clear"]),
            ("item", "w", "dict", LENGTH, L["global_clear"]),
            ("item", "r", "dict", (1, 2), L["tuple_in"]),
        ])

    def test_container_methods(self):
        sink = Recorder([methods.__code__])
        run(sink, methods, {"a": 0}, [], set(), collections.deque([0]), MyDict(a=1))
        self.assertEqual(sink.log, [
            ("item", "r", "dict", "a", L["get"]),
            ("item", "w", "dict", "b", L["setdefault_new"]),
            ("item", "w", "dict", LENGTH, L["setdefault_new"]),
            ("item", "r", "dict", "b", L["setdefault_old"]),
            ("item", "w", "dict", "b", L["pop"]),
            ("item", "w", "dict", LENGTH, L["pop"]),
            ("item", "r", "dict", "zz", L["pop_absent"]),
            ("item", "w", "dict", LENGTH, L["update"]),
            ("item", "r", "dict", LENGTH, L["keys"]),
            ("item", "w", "dict", "a", L["clear"]),
            ("item", "w", "dict", "c", L["clear"]),
            ("item", "w", "dict", LENGTH, L["clear"]),
            ("item", "w", "list", LENGTH, L["append"]),
            ("item", "w", "list", LENGTH, L["list_pop"]),
            ("item", "w", "set", 1, L["add_new"]),
            ("item", "w", "set", LENGTH, L["add_new"]),
            ("item", "r", "set", 1, L["add_old"]),
            ("item", "w", "set", 1, L["discard"]),
            ("item", "w", "set", LENGTH, L["discard"]),
            ("item", "w", "deque", LENGTH, L["dq_append"]),
            ("item", "w", "deque", LENGTH, L["dq_popleft"]),
            ("item", "r", "MyDict", "a", L["md_item"]),
        ])

    def test_globals_skip_code_and_builtins(self):
        global COUNTER
        sink = Recorder([globals_.__code__])
        before = COUNTER
        run(sink, globals_)
        self.assertEqual(COUNTER, before + 1)
        self.assertEqual(sink.log, [
            ("glob", "r", "COUNTER", L["counter"]),
            ("glob", "w", "COUNTER", L["counter"]),
        ])

    def test_module_level_names(self):
        sink = Recorder(())
        code = compile(MODULE_SRC, "<tracing-test>", "exec")
        ns = {"__name__": "tmod"}
        run(sink, exec, code, ns)
        self.assertEqual(sink.log, [
            ("glob", "w", "X", 1), ("glob", "r", "X", 2), ("glob", "w", "Y", 2),
            ("glob", "w", "Y", 3), ("glob", "r", "X", 7), ("glob", "w", "Z", 7),
        ])

    def test_unresolved_are_counted_not_reported(self):
        sink = Recorder([unresolved.__code__])
        _, tracer = run(sink, unresolved)
        self.assertEqual(sink.log, [])
        self.assertEqual(tracer.unresolved, {unresolved.__code__: 2})

    def test_unwanted_code_is_not_traced(self):
        sink = Recorder([])
        run(sink, items, {}, [1, 2, 3], "k")
        self.assertEqual(sink.log, [])
        self.assertIn(items.__code__, sink.asked)

    def test_thread_started_after_start(self):
        sink = Recorder([worker.__code__])
        d = {}

        def main():
            t = threading.Thread(target=worker, args=(d,))
            t.start()
            t.join()
        run(sink, main)
        self.assertEqual(sink.log, [
            ("item", "w", "dict", "t", L["worker"]),
            ("item", "w", "dict", LENGTH, L["worker"]),
        ])
        self.assertNotIn(threading.get_ident(), sink.threads)

    def test_transactions(self):
        codes = [atomic_ok.__code__, atomic_raises.__code__, gen.__code__]
        sink = Recorder(codes, atomic=codes)

        def main():
            atomic_ok({})
            try:
                atomic_raises({})
            except ValueError:
                pass
            return list(gen({}))
        run(sink, main)
        self.assertEqual(sink.log, [
            ("begin", "atomic_ok", L["atomic_def"]),
            ("item", "w", "dict", "x", L["atomic_body"]),
            ("item", "w", "dict", LENGTH, L["atomic_body"]),
            ("end", "atomic_ok", L["atomic_ret"]),
            ("begin", "atomic_raises", L["raises_def"]),
            ("item", "w", "dict", "y", L["raises_body"]),
            ("item", "w", "dict", LENGTH, L["raises_body"]),
            ("end", "atomic_raises", L["raises_line"]),
            ("begin", "gen", L["gen_def"]),
            ("item", "w", "dict", "g", L["gen_a"]),
            ("item", "w", "dict", LENGTH, L["gen_a"]),
            ("end", "gen", L["gen_y1"]),
            ("begin", "gen", L["gen_def"]),
            ("item", "w", "dict", "g", L["gen_b"]),
            ("end", "gen", L["gen_b"]),
        ])

    def test_sink_work_is_not_traced(self):
        # the sink hashes the key (user code); the probe itself tests `key in d` (user code
        # again): neither may come back as accesses, only the program's own hash of the key.
        sink = Recorder([keyed.__code__, Key.__hash__.__code__, Key.__eq__.__code__],
                        hash_keys=True)
        k = Key(1)
        run(sink, keyed, {}, k)
        self.assertEqual(sink.log, [
            ("item", "w", "dict", k, L["keyed"]),
            ("item", "w", "dict", LENGTH, L["keyed"]),
            ("attr", "r", "Key", "v", L["key_hash"]),
        ])

    def test_stop_removes_hooks(self):
        sink = Recorder([items.__code__])
        tracer = _tracing.Tracer(sink)
        before = sys.gettrace()
        tracer.start()
        tracer.stop()
        tracer.stop()
        self.assertIs(sys.gettrace(), before)
        items({}, [1, 2, 3], "k")
        self.assertEqual(sink.log, [])


def _interpreters():
    """(path, has_monitoring) of every Python that runs here, sys.executable first."""
    found, seen = [], set()
    extra = [p for p in os.environ.get("ATOMICITY_TEST_PYTHONS", "").split(os.pathsep) if p]
    for cand in [sys.executable, shutil.which("python3.12"), shutil.which("python3.13")] + extra:
        if not cand or os.path.realpath(cand) in seen:
            continue
        seen.add(os.path.realpath(cand))
        try:
            out = subprocess.run(
                [cand, "-c", "import sys; print(sys.version_info >= (3, 11), "
                 "hasattr(sys, 'monitoring'), sys.version_info[:2])"],
                capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        words = out.stdout.split()
        if out.returncode != 0 or not words or words[0] != "True":
            continue
        found.append((cand, words[1] == "True", ast.literal_eval(out.stdout.split(" ", 2)[2])))
    return found


class OtherBackendsTests(unittest.TestCase):
    def test_every_backend_of_every_interpreter(self):
        if os.environ.get("ATOMICITY_TRACING_CHILD"):
            self.skipTest("already a child run")
        default = os.environ.get("ATOMICITY_PY_BACKEND") or \
            ("monitoring" if hasattr(sys, "monitoring") else "settrace")
        runs = 0
        for path, has_monitoring, version in _interpreters():
            for backend in ("settrace", "monitoring") if has_monitoring else ("settrace",):
                if path == sys.executable and backend == default:
                    continue    # that is this process's own run
                if backend == "settrace" and version >= (3, 13):
                    continue    # 3.13 misses each code object's first run (doc/python.md)
                env = dict(os.environ, ATOMICITY_PY_BACKEND=backend,
                           ATOMICITY_TRACING_CHILD="1", PYTHONDONTWRITEBYTECODE="1")
                with self.subTest(python=version, backend=backend):
                    out = subprocess.run(
                        [path, "-m", "unittest", "test_tracing.TracingTests"], cwd=HERE,
                        env=env, capture_output=True, text=True, timeout=120)
                    self.assertEqual(out.returncode, 0, out.stderr[-3000:])
                    runs += 1
        if runs == 0:
            self.skipTest("no other interpreter or backend here")


if __name__ == "__main__":
    unittest.main()
