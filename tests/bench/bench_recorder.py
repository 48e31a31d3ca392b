"""The cost of one access in the recorder of `python -m atomicity run` (the tracer's sink),
called directly: an access of an object, container or global already known, and one of a
container or object seen for the first time (a temporary). Prints microseconds per access,
the best of 7 rounds. Needs the library (ATOMICITY_LIBRARY) and the binding (PYTHONPATH)."""

import time

from atomicity import _recorder
from atomicity.session import Session


class Obj:
    pass


def _code():
    pass


CODE = _code.__code__


def best(label, fn, n):
    times = []
    for _ in range(7):
        start = time.perf_counter()
        fn(n)
        times.append(time.perf_counter() - start)
    print("%-22s %.2f us/access" % (label, min(times) / n * 1e6))


def main():
    session = Session(["null"])
    rec = _recorder.Recorder(session)
    shared_dict, shared_obj, namespace = {}, Obj(), globals()

    def item_known(n):
        item = rec.item
        for _ in range(n):
            item(False, shared_dict, "k", CODE, 5)

    def attr_known(n):
        attr = rec.attr
        for _ in range(n):
            attr(True, shared_obj, "x", CODE, 6)

    def glob_known(n):
        glob = rec.glob
        for _ in range(n):
            glob(False, namespace, "Obj", CODE, 7)

    def item_new(n):
        item = rec.item
        for _ in range(n):
            item(True, {}, "k", CODE, 8)

    def attr_new(n):
        attr = rec.attr
        for _ in range(n):
            attr(True, Obj(), "x", CODE, 9)

    best("item, known", item_known, 200000)
    best("attr, known", attr_known, 200000)
    best("glob, known", glob_known, 200000)
    best("item, new container", item_new, 50000)
    best("attr, new object", attr_new, 50000)
    rec.close()
    session.close()


if __name__ == "__main__":
    main()
