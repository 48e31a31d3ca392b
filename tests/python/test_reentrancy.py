"""Calls into a Session from its own on_report callback, and from several Python threads: the
binding must never let Python code crash the interpreter (doc/python.md "Threads and
callbacks")."""

import threading
import unittest

import atomicity

ROUNDS = 7


def rounds(s, n=ROUNDS):
    """n distinct violations (a conflict cycle each, distinct begin locations)."""
    for k in range(n):
        loc = 100 + 10 * k
        s.begin("t1", loc)
        s.read("t1", "x", loc + 1)
        s.write("t2", "x", loc + 2)
        s.write("t2", "y", loc + 3)
        s.read("t1", "y", loc + 4)
        s.end("t1", loc + 5)


class TestCallback(unittest.TestCase):
    def test_close_inside_callback_is_deferred(self):
        seen = []

        def on_report(report):
            seen.append(report)
            s.close()
            self.assertFalse(s.closed)  # still open until the push returns

        s = atomicity.Session(["aerodrome"], on_report=on_report)
        with self.assertRaises(atomicity.Error) as cm:
            rounds(s)  # the push that found the first violation closes it; the next one fails
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.ESTATE)
        self.assertTrue(s.closed)
        self.assertEqual(len(seen), 1)
        self.assertEqual(len(s.reports), 1)
        self.assertEqual(s.reports[0].kind, seen[0].kind)
        s.close()  # again: nothing

    def test_close_inside_callback_during_finish(self):
        seen = []

        def on_report(report):
            seen.append(report)
            s.close()

        s = atomicity.Session(["commit-node"], on_report=on_report)
        rounds(s)
        s.finish()  # predictions come here; the first one closes the session
        self.assertTrue(s.closed)
        self.assertEqual(len(seen), 1)

    def check_refused(self, call):
        def run(call):
            outcome = []
            raised = []

            def on_report(report):
                if not outcome:
                    outcome.append(None)
                    if call:
                        call(s)

            s = atomicity.Session(["aerodrome"], on_report=on_report)
            with s:
                for k in range(ROUNDS):
                    loc = 100 + 10 * k
                    for fn, args in ((s.begin, ("t1", loc)), (s.read, ("t1", "x", loc + 1)),
                                     (s.write, ("t2", "x", loc + 2)),
                                     (s.write, ("t2", "y", loc + 3)),
                                     (s.read, ("t1", "y", loc + 4)), (s.end, ("t1", loc + 5))):
                        try:
                            fn(*args)
                        except atomicity.Error as exc:  # re-raised from the callback
                            raised.append(exc.code)
                return raised, [(r.kind, r.event_index, r.count) for r in s.finish()]

        raised, reports = run(call)
        self.assertEqual(raised, [atomicity.ErrorCode.EREENTRANT])
        # Nothing changed: the same reports as without the refused call.
        self.assertEqual(reports, run(None)[1])
        self.assertEqual(len(reports), ROUNDS)

    def test_push_inside_callback_is_refused(self):
        self.check_refused(lambda s: s.write("t3", "z"))

    def test_finish_inside_callback_is_refused(self):
        self.check_refused(lambda s: s.finish())

    def test_set_name_inside_callback_is_refused(self):
        self.check_refused(lambda s: s.set_name("var", 5, "five"))

    def test_new_string_key_inside_callback_is_refused(self):
        self.check_refused(lambda s: s.read("t9", "new-variable"))

    def test_declare_set_inside_callback_is_refused(self):
        self.check_refused(lambda s: s.declare_set(1, 2))

    def test_readers_work_inside_callback(self):
        seen = []

        def on_report(report):
            seen.append((len(s.reports), s.stats()["events"], s.checkers, s.get_name("var", "x")))

        with atomicity.Session(["aerodrome"], on_report=on_report) as s:
            rounds(s)
        self.assertEqual([n for n, _, _, _ in seen], list(range(1, ROUNDS + 1)))
        self.assertEqual(seen[0][2], ["aerodrome"])
        self.assertEqual(seen[0][3], "x")


class TestThreads(unittest.TestCase):
    THREADS = 4
    EVENTS = 20000

    def run_threads(self, s, body):
        start = threading.Barrier(self.THREADS)
        errors = []

        def run(i):
            try:
                start.wait()
                body(s, i)
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(self.THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return errors

    def test_threads_without_threadsafe_are_serialized(self):
        # Many new variables: the session's tables grow while other threads push (without
        # the binding's lock this corrupts the heap within a few thousand events).
        def body(s, i):
            for k in range(self.EVENTS):
                s.write(10 + i, (k * 7 + i) % 5000 + 1000 * i, k)

        for threadsafe in (False, True):
            s = atomicity.Session(["aerodrome", "velodrome"], threadsafe=threadsafe)
            errors = self.run_threads(s, body)
            self.assertEqual(errors, [])
            self.assertEqual(s.stats()["events"], self.THREADS * self.EVENTS)
            self.assertEqual(s.finish(), [])
            s.close()

    def test_close_from_another_thread_while_pushing(self):
        # Thread 0 closes once every thread has pushed at least once; the others keep pushing
        # until they see the session closed (ESTATE), never a crash.
        pushed = threading.Barrier(self.THREADS)

        def body(s, i):
            s.write(10 + i, 100 + i)
            pushed.wait()
            if i == 0:
                s.close()
                return
            while True:
                try:
                    s.write(10 + i, 100 + i)
                except atomicity.Error as exc:
                    if exc.code != atomicity.ErrorCode.ESTATE:
                        raise
                    return

        s = atomicity.Session(["velodrome"])
        self.assertEqual(self.run_threads(s, body), [])
        self.assertTrue(s.closed)


if __name__ == "__main__":
    unittest.main()
