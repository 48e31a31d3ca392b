"""Session.push_many (packed events through atom_push_many) and the location methods."""

import array
import io
import json
import random
import struct
import threading
import unittest

import helpers  # noqa: F401  (puts this tree's package first on sys.path)

import atomicity

EVENT = struct.Struct(atomicity.EVENT_FORMAT)
READ, WRITE, ACQUIRE, RELEASE, FORK, JOIN, BEGIN, END = range(1, 9)
CHECKERS = ["aerodrome", "velodrome", "commit-node"]


def random_trace(seed, threads=4, steps=400, vars_=6, locks=2):
    """A well-formed trace as (kind, flags, thread, target, loc) tuples: thread 1 forks the
    others, every thread runs transactions of reads and writes, sometimes under a lock, in a
    random interleaving, and thread 1 joins the others at the end. Locs are 100 + the
    step, and some are 1..4 (described by the tests)."""
    rng = random.Random(seed)
    out = []
    loc = 100
    for t in range(2, threads + 1):
        out.append((FORK, 0, 1, t, 1))
    in_txn = {t: False for t in range(1, threads + 1)}
    held = {}    # thread -> lock
    owner = {}   # lock -> thread
    for _ in range(steps):
        loc += 1
        t = rng.randint(1, threads)
        if not in_txn[t]:
            out.append((BEGIN, 0, t, 0, rng.choice((2, loc))))
            in_txn[t] = True
        elif rng.random() < 0.12:
            if t in held:
                out.append((RELEASE, 0, t, held[t], loc))
                del owner[held.pop(t)]
            out.append((END, 0, t, 0, loc))
            in_txn[t] = False
        elif t not in held and rng.random() < 0.1:
            lock = rng.randint(1, locks)
            if lock not in owner:
                out.append((ACQUIRE, 0, t, lock, 3))
                held[t], owner[lock] = lock, t
        elif t in held and rng.random() < 0.2:
            out.append((RELEASE, 0, t, held[t], loc))
            del owner[held.pop(t)]
        else:
            kind = WRITE if rng.random() < 0.4 else READ
            out.append((kind, 0, t, rng.randint(1, vars_), rng.choice((4, loc))))
    for t in range(1, threads + 1):
        if t in held:
            out.append((RELEASE, 0, t, held.pop(t), loc))
        if in_txn[t]:
            out.append((END, 0, t, 0, loc))
    for t in range(2, threads + 1):
        out.append((JOIN, 0, 1, t, 1))
    return out


def pack(events):
    return b"".join(EVENT.pack(*ev) for ev in events)


def describe(session):
    session.set_location(1, function="main", file="prog.py", line=10)
    session.set_location(2, function="Account.transfer", file="bank.py", line=21)
    session.set_location(3, function="Account.transfer", file="bank.py", line=22)
    session.set_location(4, file="bank.py", line=30)


METHOD = {READ: "read", WRITE: "write", ACQUIRE: "acquire", RELEASE: "release",
          FORK: "fork", JOIN: "join"}


def one_by_one(session, events):
    for kind, _flags, thread, target, loc in events:
        if kind in (BEGIN, END):
            getattr(session, "begin" if kind == BEGIN else "end")(thread, loc)
        else:
            getattr(session, METHOD[kind])(thread, target, loc)


def by_checker(reports):
    """Reports in order of discovery within each checker: across checkers the order differs,
    as a batch goes through one checker block by block before the next."""
    return [repr(r) for r in sorted(reports, key=lambda r: r.checker)]


def json_of(session):
    out = io.BytesIO()
    session.write_reports(out, format="json")
    return json.loads(out.getvalue().decode("utf-8"))


class SameReports(unittest.TestCase):
    """The same events pushed one by one and as one batch give the same reports."""

    def test_random_traces(self):
        found = 0
        for seed in range(6):
            events = random_trace(seed)
            with self.subTest(seed=seed):
                with atomicity.Session(CHECKERS) as single, atomicity.Session(CHECKERS) as batch:
                    describe(single)
                    describe(batch)
                    one_by_one(single, events)
                    self.assertEqual(batch.push_many(pack(events)), len(events))
                    single.finish()
                    batch.finish()
                    self.assertEqual(by_checker(single.reports), by_checker(batch.reports))
                    self.assertEqual(json_of(single), json_of(batch))
                    self.assertEqual(batch.stats()["events"], len(events))
                    found += len(batch.reports)
        # The traces are racy enough that the comparison covers real reports.
        self.assertGreater(found, 5)

    def test_batch_after_single_events_and_in_pieces(self):
        events = random_trace(11)
        with atomicity.Session(CHECKERS) as whole, atomicity.Session(CHECKERS) as mixed:
            whole.push_many(pack(events))
            data = pack(events)
            one_by_one(mixed, events[:10])
            for start in range(10, len(events), 37):
                piece = events[start:start + 37]
                self.assertEqual(mixed.push_many(data[start * 32:(start + len(piece)) * 32]),
                                 len(piece))
            self.assertEqual(by_checker(whole.finish()), by_checker(mixed.finish()))

    def test_string_keys_through_key(self):
        with atomicity.Session("velodrome") as s:
            x, y = s.key("var", "x"), s.key("var", "y")
            t1, t2 = s.key("thread", "main"), s.key("thread", "worker")
            s.push_many(pack([(BEGIN, 0, t1, 0, 0), (BEGIN, 0, t2, 0, 0), (WRITE, 0, t1, x, 0),
                              (READ, 0, t2, x, 0), (WRITE, 0, t2, y, 0), (READ, 0, t1, y, 0),
                              (END, 0, t1, 0, 0), (END, 0, t2, 0, 0)]))
            reports = s.finish()
        self.assertEqual(len(reports), 1)
        self.assertIn("main", reports[0].message)
        self.assertIn("worker", reports[0].message)


class Buffers(unittest.TestCase):
    def setUp(self):
        self.events = random_trace(3, steps=60)
        self.data = pack(self.events)

    def check(self, obj):
        with atomicity.Session("aerodrome") as s:
            self.assertEqual(s.push_many(obj), len(self.events))
            self.assertEqual(s.stats()["events"], len(self.events))

    def test_kinds_of_buffer(self):
        self.check(self.data)
        self.check(bytearray(self.data))
        self.check(memoryview(self.data))
        self.check(memoryview(bytearray(self.data)))
        self.check(array.array("Q", self.data))
        self.check(memoryview(bytearray(self.data)).cast("Q"))
        # read-only and writable views that do not start at the object's start
        self.check(memoryview(bytes(32) + self.data)[32:])
        self.check(memoryview(bytearray(32) + self.data)[32:])
        # an address that is not 8-aligned is copied first
        self.check(memoryview(b"x" + self.data)[1:])

    def test_empty(self):
        with atomicity.Session() as s:
            self.assertEqual(s.push_many(b""), 0)
            self.assertEqual(s.push_many(bytearray()), 0)
            self.assertEqual(s.stats()["events"], 0)

    def test_bad_length(self):
        with atomicity.Session() as s:
            for obj in (self.data[:-1], bytearray(self.data[:31]), b"x" * 33):
                with self.assertRaisesRegex(ValueError, "whole number of 32-byte events"):
                    s.push_many(obj)
            self.assertEqual(s.stats()["events"], 0)

    def test_not_contiguous(self):
        strided = memoryview(self.data * 2)[::2]
        self.assertEqual(strided.nbytes, len(self.data))
        with atomicity.Session() as s:
            with self.assertRaisesRegex(ValueError, "not C-contiguous"):
                s.push_many(strided)
            self.assertEqual(s.stats()["events"], 0)
            self.assertEqual(s.push_many(bytes(memoryview(self.data)[::1])), len(self.events))

    def test_not_a_buffer(self):
        with atomicity.Session() as s:
            for obj in (5, "text", [b"x" * 32], None):
                with self.assertRaisesRegex(TypeError, "buffer protocol"):
                    s.push_many(obj)

    def test_bytearray_can_be_resized_afterwards(self):
        # The export that keeps the memory during the call must end with it.
        buf = bytearray(self.data)
        with atomicity.Session() as s:
            s.push_many(buf)
        buf.extend(b"x" * 32)
        del buf[:]

    def test_closed_session(self):
        s = atomicity.Session()
        s.close()
        with self.assertRaises(atomicity.Error) as cm:
            s.push_many(self.data)
        self.assertEqual(cm.exception.code, atomicity.ESTATE)


class BadEvent(unittest.TestCase):
    def test_index_and_earlier_events_kept(self):
        events = [(BEGIN, 0, 1, 0, 0), (WRITE, 0, 1, 5, 0), (END, 0, 1, 0, 0),
                  (END, 0, 2, 0, 0),            # index 3: END without BEGIN
                  (WRITE, 0, 2, 5, 0), (READ, 0, 1, 5, 0)]
        with atomicity.Session() as s:
            s.read(1, 9)  # the session's event 0: the batch's indexes start anew
            with self.assertRaises(atomicity.Error) as cm:
                s.push_many(pack(events))
            err = cm.exception
            self.assertEqual(err.code, atomicity.EENDNOBEGIN)
            self.assertEqual(err.index, 3)
            self.assertEqual(err.pushed, 4)
            self.assertIn("event 3 of the batch", str(err))
            # 1 + the three good events + the failing one consumed; the rest not pushed.
            self.assertEqual(s.stats()["events"], 5)
            self.assertEqual(s.stats()["rejected"], 1)
            # The session goes on: push the rest.
            self.assertEqual(s.push_many(pack(events[4:])), 2)
            self.assertEqual(s.stats()["events"], 7)

    def test_bad_kind_first(self):
        with atomicity.Session() as s:
            with self.assertRaises(atomicity.Error) as cm:
                s.push_many(pack([(99, 0, 1, 2, 0), (READ, 0, 1, 2, 0)]))
            self.assertEqual(cm.exception.index, 0)
            self.assertEqual(cm.exception.pushed, 1)

    def test_after_finish(self):
        with atomicity.Session() as s:
            s.finish()
            with self.assertRaises(atomicity.Error) as cm:
                s.push_many(pack([(READ, 0, 1, 2, 0)]))
            self.assertEqual(cm.exception.code, atomicity.ESTATE)
            self.assertEqual(cm.exception.pushed, 0)


class Callbacks(unittest.TestCase):
    RHO2 = [(BEGIN, 0, 1, 0, 0), (BEGIN, 0, 2, 0, 0), (WRITE, 0, 1, 5, 0), (READ, 0, 2, 5, 0),
            (WRITE, 0, 2, 6, 0), (READ, 0, 1, 6, 0), (END, 0, 1, 0, 0), (END, 0, 2, 0, 0),
            (READ, 0, 1, 7, 0)]

    def test_callback_error_after_the_batch(self):
        def boom(report):
            raise RuntimeError("from on_report")

        with atomicity.Session("aerodrome", on_report=boom) as s:
            with self.assertRaisesRegex(RuntimeError, "from on_report"):
                s.push_many(pack(self.RHO2))
            self.assertEqual(s.stats()["events"], len(self.RHO2))

    def test_push_many_from_the_callback_is_reentrant(self):
        seen = []

        def again(report):
            try:
                session.push_many(pack([(READ, 0, 1, 8, 0)]))
            except atomicity.Error as exc:
                seen.append(exc.code)

        session = atomicity.Session("aerodrome", on_report=again)
        with session:
            session.push_many(pack(self.RHO2))
        self.assertEqual(seen, [atomicity.EREENTRANT])

    def test_per_event_push_from_the_callback_keeps_the_outer_event(self):
        # The hot path packs one event owned by the session; a push from on_report (refused
        # by the library) must not overwrite it while the outer push is running.
        seen = []

        def again(report):
            try:
                session.write(3, 99, 77)
            except atomicity.Error as exc:
                seen.append(exc.code)

        session = atomicity.Session("aerodrome", on_report=again)
        with session:
            one_by_one(session, self.RHO2)
            self.assertEqual(session.stats()["events"], len(self.RHO2))
            self.assertEqual(session.stats()["threads"], 2)
        self.assertEqual(seen, [atomicity.EREENTRANT])


class Threads(unittest.TestCase):
    def test_batches_from_several_threads(self):
        # Each thread pushes its own well-formed batches; the session serializes the calls,
        # so every event arrives whatever the schedule.
        per_thread = [pack([(BEGIN, 0, t, 0, 0), (WRITE, 0, t, t, 0), (END, 0, t, 0, 0)] * 50)
                      for t in range(1, 5)]
        start = threading.Barrier(4)
        errors = []

        def work(data):
            try:
                start.wait()
                for _ in range(20):
                    session.push_many(data)
            except BaseException as exc:  # reported below
                errors.append(exc)

        with atomicity.Session("aerodrome", threadsafe=True) as session:
            threads = [threading.Thread(target=work, args=(d,)) for d in per_thread]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            self.assertEqual(session.stats()["events"], 4 * 20 * 150)


class Locations(unittest.TestCase):
    def test_set_and_get(self):
        with atomicity.Session() as s:
            self.assertIsNone(s.get_location(7))
            s.set_location(7, function="Cache.get", file="cache.py", line=12)
            self.assertEqual(s.get_location(7), ("Cache.get", "cache.py", 12))
            s.set_location(7, file="other.py")
            self.assertEqual(s.get_location(7), (None, "other.py", 0))
            s.set_location(2 ** 64 - 1, function="f")
            self.assertEqual(s.get_location(2 ** 64 - 1), ("f", None, 0))

    def test_bad_arguments(self):
        with atomicity.Session() as s:
            with self.assertRaises(atomicity.Error) as cm:
                s.set_location(1)  # nothing known
            self.assertEqual(cm.exception.code, atomicity.EINVAL)
            with self.assertRaises(ValueError):
                s.set_location(1, function="f", line=2 ** 32)
            with self.assertRaises(ValueError):
                s.set_location(-1, function="f")
            with self.assertRaises(TypeError):
                s.set_location(1, function=5)
            with self.assertRaises(ValueError):
                s.set_location(1, file="a\0b")

    def test_stack(self):
        with atomicity.Session() as s:
            self.assertEqual(s.get_stack(5), ())
            s.set_stack(5, [5, 6, 7])
            self.assertEqual(s.get_stack(5), (5, 6, 7))
            s.set_stack(5, range(100))
            self.assertEqual(len(s.get_stack(5)), 64)

    def test_locations_in_the_json_report(self):
        with atomicity.Session("velodrome") as s:
            describe(s)
            s.push_many(pack([
                (BEGIN, 0, 1, 0, 2), (BEGIN, 0, 2, 0, 1), (WRITE, 0, 1, 5, 4),
                (READ, 0, 2, 5, 1), (WRITE, 0, 2, 6, 1), (READ, 0, 1, 6, 3),
                (END, 0, 1, 0, 3), (END, 0, 2, 0, 1)]))
            s.finish()
            doc = json_of(s)
        report = doc["checkers"][0]["reports"][0]
        frames = [f for txn in report["transactions"] for f in txn.get("stack", [])]
        self.assertIn({"function": "Account.transfer", "file": "bank.py", "line": 21}, frames)
        self.assertIn({"function": "main", "file": "prog.py", "line": 10}, frames)
        self.assertIn("bank.py:30", report["message"])


if __name__ == "__main__":
    unittest.main()
