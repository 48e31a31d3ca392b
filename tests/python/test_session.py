"""Sessions through the per-event API: the paper's ρ2, transactions, lifetime, callbacks."""

import threading
import unittest

import helpers
import atomicity

RHO2 = helpers.parse_std(helpers.corpus("aerodrome-rho2.std"))


class TestRho2(unittest.TestCase):
    def test_rho2_string_keys(self):
        with atomicity.Session(["aerodrome"]) as s:
            helpers.replay(s, RHO2)
            reports = s.finish()
        self.assertEqual(len(reports), 1, reports)
        r = reports[0]
        self.assertEqual(r.checker, "aerodrome")
        self.assertEqual(r.event_index, 5)
        self.assertGreaterEqual(r.count, 1)
        self.assertIsInstance(r.kind, str)
        self.assertTrue(r.kind)
        self.assertTrue(r.message)
        self.assertEqual(s.reports, reports)  # still readable after close

    def test_rho2_found_online(self):
        # AeroDrome sees ρ2's violation at event 5, before finish().
        s = atomicity.Session(["aerodrome"])
        try:
            helpers.replay(s, RHO2[:6])
            self.assertEqual([r.event_index for r in s.reports], [5])
        finally:
            s.close()

    def test_rho2_int_keys(self):
        keys = {}
        with atomicity.Session("aerodrome") as s:
            helpers.replay(s, RHO2, keymap=lambda n: keys.setdefault(n, 100 + len(keys)))
            s.finish()
            reports = s.reports
        self.assertEqual([r.event_index for r in reports], [5])
        threads = {t.thread for t in reports[0].transactions}
        self.assertTrue(threads <= {keys["t1"], keys["t2"]}, threads)

    def test_names_given_after_the_report(self):
        # A report copied before its variables had names shows them once they are given.
        keys = {}
        with atomicity.Session("aerodrome") as s:
            helpers.replay(s, RHO2, keymap=lambda n: keys.setdefault(n, 100 + len(keys)))
            before = s.finish()
            x, y = keys["x"], keys["y"]
            self.assertEqual(sorted(before[0].variables), [x, y])
            s.set_name("var", x, "balance")
            s.set_location(0, function="withdraw", file="bank.py", line=30)
            after = s.reports
        self.assertEqual(sorted(after[0].variables, key=str), [y, "balance"])
        self.assertIn("balance", after[0].message)
        self.assertNotIn("balance", before[0].message)
        self.assertEqual([r.event_index for r in after], [5])

    def test_rho2_velodrome_cycle(self):
        with atomicity.Session(["velodrome"]) as s:
            helpers.replay(s, RHO2)
            reports = s.finish()
        self.assertEqual(len(reports), 1, reports)
        cycle = {"%s@%d" % (t.thread, t.begin_index) for t in reports[0].transactions}
        self.assertEqual(cycle, set(helpers.expected("aerodrome-rho2.std")["conflict_cycle"]))

    def test_two_checkers(self):
        with atomicity.Session(["aerodrome", "velodrome"]) as s:
            self.assertEqual(s.checkers, ["aerodrome", "velodrome"])
            helpers.replay(s, RHO2)
            reports = s.finish()
        self.assertEqual(sorted(r.checker for r in reports), ["aerodrome", "velodrome"])
        for r in reports:
            self.assertEqual(r.checker_index, ["aerodrome", "velodrome"].index(r.checker))

    def test_serializable(self):
        with atomicity.Session(["aerodrome"]) as s:
            helpers.replay(s, helpers.parse_std(helpers.corpus("ws-ex1.std")))
            self.assertEqual(s.finish(), [])


class TestTransaction(unittest.TestCase):
    def test_transaction_blocks(self):
        # ρ2's events with both transactions as with-blocks (t2 ends first here).
        s = atomicity.Session(["aerodrome"])
        with s:
            with s.transaction("t1", loc=0):
                with s.transaction("t2", loc=1):
                    s.write("t1", "x", 2)
                    s.read("t2", "x", 3)
                    s.write("t2", "y", 4)
                    s.read("t1", "y", 5)
        reports = s.reports
        self.assertEqual([r.event_index for r in reports], [5])
        self.assertEqual(sorted(t.begin_loc for t in reports[0].transactions), [0, 1])

    def test_transaction_ends_on_exception(self):
        with atomicity.Session(["aerodrome"]) as s:
            with self.assertRaises(RuntimeError):
                with s.transaction("t1"):
                    s.write("t1", "x")
                    raise RuntimeError("boom")
            # The END was pushed: another END has no BEGIN to match.
            with self.assertRaises(atomicity.Error) as cm:
                s.end("t1")
            self.assertEqual(cm.exception.code, atomicity.ErrorCode.EENDNOBEGIN)

    def test_transaction_yields_session(self):
        with atomicity.Session(["aerodrome"]) as s:
            with s.transaction(7, loc=3) as tx:
                self.assertIs(tx, s)
                tx.read(7, 1)

    def test_serial_transactions_are_fine(self):
        with atomicity.Session(["aerodrome", "velodrome"]) as s:
            for i in range(50):
                with s.transaction(i % 3):
                    s.read(i % 3, "x")
                    s.write(i % 3, "x")
            self.assertEqual(s.finish(), [])


class TestLifetime(unittest.TestCase):
    def test_close_is_idempotent(self):
        s = atomicity.Session(["aerodrome"])
        s.write(1, 1)
        s.close()
        s.close()
        self.assertTrue(s.closed)
        self.assertEqual(s.reports, [])
        with self.assertRaises(atomicity.Error) as cm:
            s.write(1, 1)
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.ESTATE)
        with self.assertRaises(atomicity.Error):
            s.finish()

    def test_del_frees_once(self):
        for _ in range(100):
            s = atomicity.Session(["aerodrome", "velodrome"])
            s.write("t", "x")
            if _ % 2:
                s.close()
            del s

    def test_context_manager_finishes(self):
        with atomicity.Session(["aerodrome"]) as s:
            helpers.replay(s, RHO2[:6])  # both transactions left open
        self.assertTrue(s.closed)
        self.assertEqual([r.event_index for r in s.reports], [5])

    def test_finish_is_idempotent_and_final(self):
        with atomicity.Session(["aerodrome"]) as s:
            helpers.replay(s, RHO2)
            first = s.finish()
            self.assertEqual(s.finish(), first)
            with self.assertRaises(atomicity.Error) as cm:
                s.read("t1", "x")
            self.assertEqual(cm.exception.code, atomicity.ErrorCode.ESTATE)

    def test_repr(self):
        s = atomicity.Session(["aerodrome"])
        self.assertIn("open", repr(s))
        s.close()
        self.assertIn("closed", repr(s))


class TestCallback(unittest.TestCase):
    def test_on_report(self):
        seen = []
        with atomicity.Session(["aerodrome"], on_report=seen.append) as s:
            for i, ev in enumerate(RHO2):
                helpers.replay(s, [ev])
                if i == 5:
                    self.assertEqual(len(seen), 1)
            s.finish()
        self.assertEqual(len(seen), 1)
        self.assertIsInstance(seen[0], atomicity.Report)
        self.assertEqual(seen[0].event_index, 5)
        self.assertEqual(seen[0].message, s.reports[0].message)

    def test_callback_exception_is_raised_after_the_call(self):
        class Stop(Exception):
            pass

        def on_report(report):
            raise Stop(report.event_index)

        with atomicity.Session(["aerodrome"], on_report=on_report) as s:
            helpers.replay(s, RHO2[:5])
            with self.assertRaises(Stop) as cm:
                helpers.replay(s, RHO2[5:6])
            self.assertEqual(cm.exception.args, (5,))
            helpers.replay(s, RHO2[6:])  # still usable, nothing pending
            self.assertEqual(len(s.finish()), 1)

    def test_callback_must_be_callable(self):
        with self.assertRaises(TypeError):
            atomicity.Session(["aerodrome"], on_report=42)


class TestOptions(unittest.TestCase):
    def test_max_reports(self):
        with atomicity.Session(["aerodrome", "velodrome"], max_reports=1) as s:
            helpers.replay(s, RHO2)
            s.finish()
            self.assertEqual(len(s.reports), 1)
            self.assertEqual(s.dropped, 1)

    def test_threadsafe(self):
        n_threads, n_txns = 4, 300
        errors = []
        with atomicity.Session(["aerodrome", "velodrome"], threadsafe=True) as s:
            def producer(t):
                try:
                    for i in range(n_txns):
                        with s.transaction("worker%d" % t, loc=i):
                            s.read("worker%d" % t, "own%d" % t, i)
                            s.write("worker%d" % t, "own%d" % t, i)
                except BaseException as exc:  # reported below
                    errors.append(exc)

            threads = [threading.Thread(target=producer, args=(t,)) for t in range(n_threads)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            self.assertEqual(errors, [])
            self.assertEqual(s.finish(), [])
            stats = s.stats()
        self.assertEqual(stats["events"], n_threads * n_txns * 4)
        self.assertEqual(stats["threads"], n_threads)
        self.assertEqual(stats["vars"], n_threads)

    def test_stats(self):
        with atomicity.Session(["aerodrome"], profile=True) as s:
            helpers.replay(s, RHO2)
            s.finish()
            st = s.stats()
        self.assertEqual(st["events"], len(RHO2))
        self.assertEqual(st["rejected"], 0)
        self.assertEqual(st["threads"], 2)
        self.assertEqual([c["name"] for c in st["checkers"]], ["aerodrome"])
        self.assertEqual(st["checkers"][0]["reports"], 1)

    def test_status_complete(self):
        with atomicity.Session(["aerodrome", "velodrome"]) as s:
            helpers.replay(s, RHO2)
            s.finish()
            self.assertEqual([st.state for st in s.status], ["complete", "complete"])
            st = s.checker_status(0)
            self.assertEqual((st.name, st.complete, st.disabled, st.stopped_at, st.reason,
                              st.error), ("aerodrome", True, False, 0, None, None))
            with self.assertRaises(IndexError):
                s.checker_status(2)

    def test_status_aerodrome_max_threads(self):
        # the fourth thread is beyond max_threads=3: aerodrome stops there, the session goes on
        # (no "with": leaving it would finish again and raise again)
        s = atomicity.Session(["aerodrome:max_threads=3", "velodrome"])
        try:
            for t in range(5):
                s.begin(t)
                s.write(t, "x")
                s.end(t)
            with self.assertRaises(atomicity.Error) as cm:
                s.finish()
            self.assertEqual(cm.exception.code, atomicity.ErrorCode.ELIMIT)
            st = s.checker_status(0)
            self.assertEqual(st.state, "disabled")
            self.assertTrue(st.disabled)
            self.assertFalse(st.complete)
            self.assertEqual(st.stopped_at, 9)
            self.assertIn("beyond max_threads=3", st.reason)
            self.assertEqual(st.error, atomicity.ErrorCode.ELIMIT)
            self.assertTrue(s.status[1].complete)
        finally:
            s.close()

    def test_status_tso_max_work_is_incomplete_not_a_violation(self):
        with atomicity.Session(["tso:mode=trace,max_work=3"]) as s:
            for t, (a, b) in ((1, ("w", "w")), (2, ("r", "r"))):
                s.begin(t)
                getattr(s, helpers.OPS[a])(t, "x" if t == 1 else "y")
                getattr(s, helpers.OPS[b])(t, "y" if t == 1 else "x")
                s.end(t)
            self.assertEqual(s.finish(), [])
            st = s.checker_status(0)
            self.assertEqual(st.state, "incomplete")
            self.assertIsNone(st.error)
            self.assertEqual(st.stopped_at, 7)
            self.assertIn("max_work=3", st.reason)

    def test_generic_push(self):
        K = atomicity.Kind
        with atomicity.Session(["aerodrome"]) as s:
            for thread, method, target, loc in RHO2:
                s.push(method, thread, target, loc)
            self.assertEqual([r.event_index for r in s.finish()], [5])
            with self.assertRaises(TypeError):
                s.push(K.READ, "t1")
            with self.assertRaises(TypeError):
                s.push(K.BEGIN, "t1", "x")
            with self.assertRaises(ValueError):
                s.push("jump", "t1")
            with self.assertRaises(ValueError):
                s.push(99, "t1")

    def test_all_kinds(self):
        with atomicity.Session(["aerodrome"]) as s:
            s.fork("main", "child")
            s.acquire("child", "m")
            s.acquire("child", "m")  # re-entrant
            s.write("child", "x")
            s.commit("child", "x")
            s.fence("child")
            s.release("child", "m")
            s.release("child", "m")
            s.join("main", "child")
            s.begin("main")
            s.read("main", "x")
            s.end("main")
            self.assertEqual(s.finish(), [])

    def test_flagged_accesses(self):
        self.assertEqual((atomicity.FLAG_ACQUIRE, atomicity.FLAG_RELEASE), (1, 2))
        with atomicity.Session(["aerodrome"]) as s:
            s.write("t1", "flag", release=True)
            s.read("t2", "flag", acquire=True)
            s.read("t2", "flag", loc=3, acquire=False)
            s.push("write", "t1", "flag", 4, flags=atomicity.FLAG_RELEASE)
            s.push(atomicity.Kind.READ, "t2", "flag", 5, flags=atomicity.FLAG_ACQUIRE)
            # ACQUIRE only on a read, RELEASE only on a write; the session stays usable
            with self.assertRaises(atomicity.Error) as cm:
                s.push("write", "t1", "flag", 6, flags=atomicity.FLAG_ACQUIRE)
            self.assertEqual(cm.exception.code, atomicity.ErrorCode.EKIND)
            self.assertIn("invalid flags", str(cm.exception))
            with self.assertRaises(atomicity.Error):
                s.push("acquire", "t1", "m", flags=atomicity.FLAG_ACQUIRE)
            s.read("t1", "flag", acquire=True)
            self.assertEqual(s.finish(), [])

    def test_declare_set(self):
        with atomicity.Session(["aerodrome"]) as s:
            s.declare_set("x", "account")
            s.declare_set("y", "account")
            s.declare_set(5, 1)
            s.declare_set("x", "other")  # moves it


if __name__ == "__main__":
    unittest.main()
