"""check_trace() on the corpus and on broken files."""

import os
import pathlib
import tempfile
import unittest
import warnings

import helpers
import atomicity


class TestCorpus(unittest.TestCase):
    def test_rho2(self):
        reports = atomicity.check_trace(helpers.corpus("aerodrome-rho2.std"))
        self.assertEqual(len(reports), 1, reports)
        r = reports[0]
        self.assertEqual((r.checker, r.event_index), ("aerodrome", 5))
        self.assertEqual(sorted(t.thread for t in r.transactions), ["t1", "t2"])
        self.assertIn("t1", r.message)

    def test_pathlike_and_several_checkers(self):
        path = pathlib.Path(helpers.corpus("aerodrome-rho2.std"))
        reports = atomicity.check_trace(path, ["aerodrome", "velodrome"])
        self.assertEqual(sorted(r.checker for r in reports), ["aerodrome", "velodrome"])

    def test_same_as_per_event_api(self):
        name = "aerodrome-rho2.std"
        from_file = atomicity.check_trace(helpers.corpus(name))
        with atomicity.Session(["aerodrome"]) as s:
            helpers.replay(s, helpers.parse_std(helpers.corpus(name)))
            from_api = s.finish()
        self.assertEqual([(r.event_index, r.kind, r.message) for r in from_file],
                         [(r.event_index, r.kind, r.message) for r in from_api])

    def test_corpus_verdicts(self):
        for name in helpers.corpus_traces():
            exp = helpers.expected(name)
            if "conflict_serializable" not in exp:
                continue
            for checker in ("aerodrome", "velodrome"):
                with self.subTest(trace=name, checker=checker):
                    reports = atomicity.check_trace(helpers.corpus(name), [checker])
                    self.assertEqual(not reports, exp["conflict_serializable"], reports)
                    first = exp.get("aerodrome_first_violation_index")
                    if checker == "aerodrome" and first is not None:
                        self.assertEqual(min(r.event_index for r in reports), first)


class TestBrokenFiles(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, text):
        path = os.path.join(self.dir.name, "t.std")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_malformed_line(self):
        path = self.write("t1|begin|0\nt1|frobnicate(x)|1\n")
        with self.assertRaises(atomicity.Error) as cm:
            atomicity.check_trace(path)
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.EPARSE)
        self.assertIn("t.std:2", cm.exception.message)

    def test_ill_formed_event_strict(self):
        path = self.write("t1|begin|0\nt1|end|1\nt1|end|2\n")
        with self.assertRaises(atomicity.Error) as cm:
            atomicity.check_trace(path)
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.EENDNOBEGIN)
        self.assertIn("t.std:3", cm.exception.message)

    def test_ill_formed_event_lenient(self):
        with open(helpers.corpus("aerodrome-rho2.std"), encoding="utf-8") as f:
            rho2 = f.read()
        path = self.write("t9|end|99\n" + rho2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reports = atomicity.check_trace(path, strict=False)
        self.assertEqual(len(caught), 1)
        self.assertIs(caught[0].category, atomicity.TraceWarning)
        self.assertIn("t.std:1", str(caught[0].message))
        self.assertEqual([r.event_index for r in reports], [6])  # the dropped END counts

    def test_missing_file(self):
        with self.assertRaises(atomicity.Error) as cm:
            atomicity.check_trace(os.path.join(self.dir.name, "missing.std"))
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.EIO)

    def test_unknown_checker(self):
        with self.assertRaises(atomicity.Error) as cm:
            atomicity.check_trace(helpers.corpus("aerodrome-rho2.std"), ["nope"])
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.ENOTFOUND)


if __name__ == "__main__":
    unittest.main()
