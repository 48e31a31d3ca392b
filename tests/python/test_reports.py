"""Report objects: names from string keys and set_name, counts, copies, repr."""

import json
import unittest

import helpers
import atomicity

RHO2 = helpers.parse_std(helpers.corpus("aerodrome-rho2.std"))


def run(events, checkers=("aerodrome",), names=None, keymap=None):
    with atomicity.Session(list(checkers)) as s:
        for what, key, name in names or ():
            s.set_name(what, key, name)
        helpers.replay(s, events, keymap)
        return s.finish()


class TestNames(unittest.TestCase):
    def test_string_keys_name_reports(self):
        (r,) = run(RHO2)
        self.assertEqual(sorted(t.thread for t in r.transactions), ["t1", "t2"])
        self.assertEqual(sorted(t.begin_index for t in r.transactions), [0, 1])
        self.assertEqual(sorted(t.begin_loc for t in r.transactions), [0, 1])
        self.assertIn("t1", r.message)
        self.assertIn("t2", r.message)
        for v in r.variables:
            self.assertIn(v, ("x", "y"))
        for ev in r.events:
            self.assertIsInstance(ev, atomicity.Event)
            self.assertIn(ev.thread, ("t1", "t2"))
            self.assertIsInstance(ev.kind, atomicity.Kind)
            if ev.kind in (atomicity.Kind.READ, atomicity.Kind.WRITE):
                self.assertIn(ev.target, ("x", "y"))
            self.assertEqual(RHO2[ev.index][0], ev.thread)
            self.assertEqual(RHO2[ev.index][3], ev.loc)

    def test_int_keys_with_set_name(self):
        ids = {"t1": 1, "t2": 2, "x": 10, "y": 11}
        names = [("thread", 1, "alice"), ("thread", 2, "bob"),
                 ("var", 10, "balance"), (atomicity.Space.VAR, 11, "limit")]
        (r,) = run(RHO2, names=names, keymap=ids.__getitem__)
        self.assertEqual(sorted(t.thread for t in r.transactions), ["alice", "bob"])
        self.assertIn("alice", r.message)
        for v in r.variables:
            self.assertIn(v, ("balance", "limit"))

    def test_int_keys_without_names(self):
        ids = {"t1": 1, "t2": 2, "x": 10, "y": 11}
        (r,) = run(RHO2, keymap=ids.__getitem__)
        self.assertEqual(sorted(t.thread for t in r.transactions), [1, 2])
        for v in r.variables:
            self.assertIn(v, (10, 11))

    def test_rename_string_key(self):
        (r,) = run(RHO2, names=[("thread", "t1", "writer")])
        self.assertEqual(sorted(t.thread for t in r.transactions), ["t2", "writer"])

    def test_string_keys_are_stable_per_space(self):
        with atomicity.Session(["aerodrome"]) as s:
            k = s.key("thread", "main")
            self.assertEqual(s.key("thread", "main"), k)
            self.assertNotEqual(s.key("thread", "other"), k)
            self.assertGreaterEqual(k, 2 ** 63)
            self.assertEqual(s.key("var", 5), 5)
            self.assertEqual(s.get_name("thread", "main"), "main")
            self.assertIsNone(s.get_name("lock", 77))
            # A lock and a variable of the same name are different objects.
            s.acquire("main", "x")
            s.write("main", "x")
            s.release("main", "x")


class TestReportObjects(unittest.TestCase):
    def test_counts_repeated_violation(self):
        # The same violation in a loop (same begin locations) is one report with a count.
        (once,) = run(RHO2)
        rounds = 3
        (r,) = run(RHO2 * rounds)
        self.assertEqual(r.count, rounds * once.count)
        self.assertEqual(r.event_index, 5)
        self.assertIn("x%d" % r.count, repr(r))

    def test_copy_survives_close(self):
        s = atomicity.Session(["aerodrome"])
        helpers.replay(s, RHO2)
        s.finish()
        r = s.reports[0]
        before = r.as_dict()
        s.close()
        self.assertEqual(r.as_dict(), before)
        self.assertEqual(s.reports[0], r)

    def test_repr_and_dict(self):
        (r,) = run(RHO2)
        self.assertTrue(repr(r).startswith("<Report aerodrome "))
        self.assertIn("at event 5", repr(r))
        self.assertIn(r.message, str(r))
        d = json.loads(json.dumps(r.as_dict()))
        self.assertEqual(d["checker"], "aerodrome")
        self.assertEqual(d["event_index"], 5)
        self.assertEqual(len(d["transactions"]), len(r.transactions))
        for ev in d["events"]:
            self.assertIn(ev["kind"], ("read", "write", "begin", "end", "acquire", "release",
                                       "fork", "join", "fence", "commit"))

    def test_reports_are_a_fresh_list(self):
        with atomicity.Session(["aerodrome"]) as s:
            helpers.replay(s, RHO2)
            a = s.reports
            a.clear()
            self.assertEqual(len(s.reports), 1)


class TestEvidence(unittest.TestCase):
    def check(self, interleaved):
        s = atomicity.Session(["aerodrome", "commit-node"])
        s.begin(1, loc=10)
        s.read(1, "x", loc=11)
        if interleaved:
            s.write(2, "x", loc=20)
        s.write(1, "x", loc=12)
        s.end(1, loc=13)
        if not interleaved:
            s.write(2, "x", loc=20)
        s.finish()
        return {r.checker: r.evidence for r in s.reports}

    def test_confirmed(self):
        self.assertEqual(self.check(True), {"aerodrome": "observed", "commit-node": "confirmed"})

    def test_predicted(self):
        got = self.check(False)
        self.assertEqual(got, {"commit-node": "predicted"})

    def test_in_dict(self):
        (r,) = run(RHO2)
        self.assertEqual(r.evidence, "observed")
        self.assertEqual(r.as_dict()["evidence"], "observed")


if __name__ == "__main__":
    unittest.main()
