"""check_trace() on the corpus and on broken files."""

import errno
import io
import os
import pathlib
import subprocess
import sys
import tempfile
import textwrap
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


class TestSources(unittest.TestCase):
    """check_trace() reads paths of every kind and file objects, with the same reports."""

    NAME = "aerodrome-rho2.std"

    def setUp(self):
        self.path = helpers.corpus(self.NAME)
        self.expected = [(r.checker, r.event_index, r.message)
                         for r in atomicity.check_trace(self.path)]
        self.assertEqual(len(self.expected), 1)

    def check(self, source, **kw):
        reports = atomicity.check_trace(source, **kw)
        self.assertEqual([(r.checker, r.event_index, r.message) for r in reports],
                         self.expected)

    def test_bytes_path(self):
        self.check(os.fsencode(self.path))

    def test_pathlike(self):
        self.check(pathlib.Path(self.path))

    def test_binary_and_text_files(self):
        with open(self.path, "rb") as f:
            self.check(f)
        with open(self.path, encoding="utf-8") as f:
            self.check(f)

    def test_memory_streams(self):
        with open(self.path, "rb") as f:
            data = f.read()
        self.check(io.BytesIO(data))
        self.check(io.StringIO(data.decode("utf-8")))

    def test_stdin_buffer(self):
        code = textwrap.dedent("""
            import sys
            import atomicity
            for r in atomicity.check_trace(sys.stdin.buffer):
                print(r.checker, r.event_index)
            """)
        env = dict(os.environ, PYTHONPATH=helpers.BINDING, PYTHONDONTWRITEBYTECODE="1")
        with open(self.path, "rb") as f:
            proc = subprocess.run([sys.executable, "-c", code], stdin=f, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(), ["aerodrome", str(self.expected[0][1])])

    def test_name_in_messages(self):
        bad = "t1|begin|0\nt1|frobnicate(x)|1\n"
        with self.assertRaises(atomicity.TraceError) as cm:
            atomicity.check_trace(io.StringIO(bad))
        self.assertIn("<stream>:2", cm.exception.message)
        stream = io.BytesIO(bad.encode())
        stream.name = "from-the-network.std"
        with self.assertRaises(atomicity.TraceError) as cm:
            atomicity.check_trace(stream)
        self.assertIn("from-the-network.std:2", cm.exception.message)

    def test_strict_on_file_objects(self):
        with self.assertRaises(atomicity.EventError) as cm:
            atomicity.check_trace(io.StringIO("t1|end|0\n"))
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.EENDNOBEGIN)

    def test_not_a_source(self):
        with self.assertRaises(TypeError):
            atomicity.check_trace(42)


class TestFileErrors(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def test_missing_is_file_not_found(self):
        missing = os.path.join(self.dir.name, "missing.std")
        with self.assertRaises(FileNotFoundError) as cm:
            atomicity.check_trace(missing)
        e = cm.exception
        self.assertIsInstance(e, atomicity.TraceNotFoundError)
        self.assertIsInstance(e, atomicity.Error)
        self.assertEqual((e.errno, e.filename), (errno.ENOENT, missing))
        self.assertEqual(e.code, atomicity.ErrorCode.EIO)

    def test_directory_is_an_os_error(self):
        with self.assertRaises(OSError) as cm:
            atomicity.check_trace(self.dir.name)
        e = cm.exception
        self.assertIsInstance(e, atomicity.TraceIOError)
        self.assertNotIsInstance(e, FileNotFoundError)
        self.assertEqual(e.filename, self.dir.name)


if __name__ == "__main__":
    unittest.main()
