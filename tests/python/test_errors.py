"""Errors: ill-formed events, unknown checkers, bad keys."""

import pickle
import re
import unittest

import helpers  # puts the binding of this tree on sys.path  # noqa: F401
import atomicity


class TestIllFormed(unittest.TestCase):
    def test_end_without_begin(self):
        with atomicity.Session(["aerodrome"]) as s:
            s.begin("t1")
            s.write("t1", "x")
            s.end("t1")
            with self.assertRaises(atomicity.Error) as cm:
                s.end("t2")  # event index 3
            e = cm.exception
            self.assertIsInstance(e, Exception)
            self.assertEqual(e.code, atomicity.ErrorCode.EENDNOBEGIN)
            self.assertEqual(e.name, "ATOM_EENDNOBEGIN")
            self.assertRegex(e.message, r"\b3\b")
            self.assertIn(e.message, str(e))
            self.assertIn("ATOM_EENDNOBEGIN", str(e))
            # The event was dropped and the session stays usable.
            s.begin("t2")
            s.end("t2")
            self.assertEqual(s.finish(), [])
            self.assertEqual(s.stats()["rejected"], 1)

    def test_release_not_held(self):
        with atomicity.Session(["aerodrome"]) as s:
            with self.assertRaises(atomicity.Error) as cm:
                s.release("t1", "m")
            self.assertEqual(cm.exception.code, atomicity.ErrorCode.ENOTHELD)
            self.assertRegex(cm.exception.message, r"\b0\b")

    def test_acquire_held_by_other(self):
        with atomicity.Session(["aerodrome"]) as s:
            s.acquire("t1", "m")
            with self.assertRaises(atomicity.Error) as cm:
                s.acquire("t2", "m")
            self.assertEqual(cm.exception.code, atomicity.ErrorCode.EHELD)

    def test_error_pickles(self):
        e = atomicity.Error("event 3: oops", atomicity.ErrorCode.EENDNOBEGIN, "ATOM_EENDNOBEGIN")
        f = pickle.loads(pickle.dumps(e))
        self.assertEqual((f.message, f.code, f.name), ("event 3: oops", -10, "ATOM_EENDNOBEGIN"))
        self.assertIn("atomicity.Error", repr(f))


class TestCheckers(unittest.TestCase):
    def test_unknown_checker(self):
        with self.assertRaises(atomicity.Error) as cm:
            atomicity.Session(["aerodrome", "no-such-checker"])
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.ENOTFOUND)
        self.assertEqual(cm.exception.name, "ATOM_ENOTFOUND")

    def test_unknown_argument(self):
        with self.assertRaises(atomicity.Error) as cm:
            atomicity.Session(["aerodrome:no_such_key=1"])
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.EINVAL)
        self.assertTrue(re.search("no_such_key", cm.exception.message), cm.exception.message)

    def test_spec_types(self):
        with self.assertRaises(TypeError):
            atomicity.Session([b"aerodrome"])
        with self.assertRaises(ValueError):
            atomicity.Session(["aero\0drome"])
        with self.assertRaises(ValueError):
            atomicity.Session(["aerodrome"], max_reports=-1)


class TestIntegerRanges(unittest.TestCase):
    """Every int the binding hands to C is range-checked: ctypes alone keeps the low bits."""

    def test_max_reports(self):
        for bad in (2 ** 64 + 1, 2 ** 64, -1):
            with self.assertRaises(ValueError, msg=bad):
                atomicity.Session(["aerodrome"], max_reports=bad)
        for bad in ("3", 1.0, True):
            with self.assertRaises(TypeError, msg=repr(bad)):
                atomicity.Session(["aerodrome"], max_reports=bad)
        with self.assertRaises(ValueError):
            atomicity.check_trace("-", max_reports=2 ** 64 + 1)
        with atomicity.Session(["aerodrome"], max_reports=2 ** 64 - 1):
            pass

    def test_max_reports_is_not_wrapped(self):
        # 2**64 + 1 used to become 1: only one of the two reports was kept.
        with atomicity.Session(["aerodrome", "velodrome"], max_reports=2 ** 64 - 1) as s:
            s.begin(1)
            s.read(1, "x")
            s.write(2, "x")
            s.write(1, "x")
            s.end(1)
            s.finish()
            self.assertEqual(len(s.reports), 2)
            self.assertEqual(s.dropped, 0)

    def test_push_fields(self):
        with atomicity.Session(["aerodrome"]) as s:
            with self.assertRaises(ValueError):
                s.push("read", 1, 1, flags=2 ** 32 + 1)  # was FLAG_ACQUIRE after wrapping
            with self.assertRaises(ValueError):
                s.push("read", 1, 1, flags=-1)
            with self.assertRaises(TypeError):
                s.push("read", 1, 1, flags=1.0)
            with self.assertRaises(ValueError):
                s.push(2 ** 64 + 1, 1, 1)  # kind
            with self.assertRaises(ValueError):
                s.push("read", 2 ** 64 + 1, 1)
            with self.assertRaises(ValueError):
                s.push("read", 1, 1, loc=2 ** 64 + 1)
            with self.assertRaises(ValueError):
                s.set_name(2 ** 64 + 2, 1, "a")  # space
            with self.assertRaises(ValueError):
                s.set_name("var", 2 ** 64 + 1, "a")
            with self.assertRaises(ValueError):
                s.get_name("var", 2 ** 64 + 1)
            with self.assertRaises(ValueError):
                s.declare_set(1, 2 ** 64 + 1)
            self.assertEqual(s.stats()["events"], 0)


class TestKeys(unittest.TestCase):
    def test_key_types(self):
        with atomicity.Session(["aerodrome"]) as s:
            with self.assertRaises(TypeError):
                s.read(1.5, 1)
            with self.assertRaises(TypeError):
                s.read(1, None)
            with self.assertRaises(ValueError):
                s.read(-1, 1)
            with self.assertRaises(ValueError):
                s.read(1, 2 ** 64)
            with self.assertRaises(TypeError):
                s.read(1, 1, loc="here")
            with self.assertRaises(ValueError):
                s.read(1, 1, loc=-5)
            with self.assertRaises(ValueError):
                s.read("t\0", 1)
            s.read(2 ** 64 - 1, 2 ** 64 - 1, 2 ** 64 - 1)  # full range when no strings

    def test_collision_with_string_key(self):
        with atomicity.Session(["aerodrome"]) as s:
            k = s.key("var", "x")
            with self.assertRaises(ValueError):
                s.read(1, k)
            s.acquire(1, k)  # another space: no collision
            s.release(1, k)

    def test_bad_space(self):
        with atomicity.Session(["aerodrome"]) as s:
            with self.assertRaises(ValueError):
                s.set_name("process", 1, "p")
            with self.assertRaises(ValueError):
                s.set_name(9, 1, "p")
            with self.assertRaises(TypeError):
                s.set_name("thread", 1, 5)


class TestHierarchy(unittest.TestCase):
    """The Error subclasses: which code raises which, and what else they are."""

    def test_event_errors(self):
        with atomicity.Session(["aerodrome"]) as s:
            with self.assertRaises(atomicity.EventError) as cm:
                s.end(1)
            self.assertEqual(cm.exception.code, atomicity.ErrorCode.EENDNOBEGIN)
            with self.assertRaises(atomicity.EventError) as cm:
                s.release(1, 7)
            self.assertEqual(cm.exception.code, atomicity.ErrorCode.ENOTHELD)
            s.acquire(1, 7)
            with self.assertRaises(atomicity.EventError) as cm:
                s.acquire(2, 7)
            self.assertEqual(cm.exception.code, atomicity.ErrorCode.EHELD)

    def test_usage_errors(self):
        with self.assertRaises(atomicity.UsageError) as cm:
            atomicity.Session(["no-such-checker"])
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.ENOTFOUND)
        s = atomicity.Session(["aerodrome"])
        s.close()
        with self.assertRaises(atomicity.UsageError) as cm:
            s.write(1, 1)
        self.assertEqual(cm.exception.code, atomicity.ErrorCode.ESTATE)

    def test_every_code_has_its_class(self):
        lib = atomicity._lib.load()
        expected = {
            "EINVAL": atomicity.UsageError, "ENOTFOUND": atomicity.UsageError,
            "ESTATE": atomicity.UsageError, "EREENTRANT": atomicity.UsageError,
            "EKIND": atomicity.EventError, "EENDNOBEGIN": atomicity.EventError,
            "ENOTHELD": atomicity.EventError, "EHELD": atomicity.EventError,
            "EJOINED": atomicity.EventError, "ENOPENDING": atomicity.EventError,
            "EFORK": atomicity.EventError, "EJOIN": atomicity.EventError,
            "EPARSE": atomicity.TraceError, "ELIMIT": atomicity.LimitError,
            "ENOMEM": atomicity.OutOfMemoryError,
        }
        for code in atomicity.ErrorCode:
            with self.subTest(code=code.name):
                e = lib.make_error(code)
                self.assertIs(type(e), expected.get(code.name, atomicity.Error))
                self.assertIsInstance(e, atomicity.Error)
                self.assertEqual(e.code, code)
                self.assertEqual(e.name, "ATOM_" + code.name)
                self.assertTrue(e.message)

    def test_out_of_memory_is_a_memory_error(self):
        e = atomicity._lib.load().make_error(atomicity.ErrorCode.ENOMEM)
        self.assertIsInstance(e, MemoryError)
        self.assertIsInstance(e, atomicity.Error)
        self.assertEqual(str(e), "out of memory (ATOM_ENOMEM)")

    def test_file_errors_are_os_errors(self):
        self.assertTrue(issubclass(atomicity.TraceNotFoundError, FileNotFoundError))
        self.assertTrue(issubclass(atomicity.TraceNotFoundError, atomicity.TraceIOError))
        self.assertTrue(issubclass(atomicity.TraceIOError, OSError))
        e = atomicity.TraceNotFoundError(2, "No such file or directory", "x.std",
                                         atomicity.ErrorCode.EIO, "ATOM_EIO")
        self.assertEqual((e.errno, e.strerror, e.filename), (2, "No such file or directory",
                                                             "x.std"))
        self.assertEqual(e.message, "x.std: No such file or directory")
        self.assertEqual(str(e), "x.std: No such file or directory (ATOM_EIO)")

    def test_subclasses_pickle(self):
        lib = atomicity._lib.load()
        errors = [lib.make_error(code) for code in atomicity.ErrorCode]
        errors.append(atomicity.LibraryNotFoundError("cannot load"))
        errors.append(atomicity.TraceNotFoundError(2, "No such file or directory", "x.std",
                                                   -3, "ATOM_EIO"))
        errors.append(atomicity.TraceIOError(None, "the file shrank", "y.std", -3, "ATOM_EIO"))
        for e in errors:
            with self.subTest(error=repr(e)):
                f = pickle.loads(pickle.dumps(e))
                self.assertIs(type(f), type(e))
                self.assertEqual((f.message, f.code, f.name), (e.message, e.code, e.name))
                self.assertEqual(str(f), str(e))
                if isinstance(e, OSError):
                    self.assertEqual((f.errno, f.strerror, f.filename),
                                     (e.errno, e.strerror, e.filename))

    def test_exported(self):
        for name in ("Error", "LibraryNotFoundError", "UsageError", "EventError", "TraceError",
                     "LimitError", "OutOfMemoryError", "TraceIOError", "TraceNotFoundError"):
            with self.subTest(name=name):
                cls = getattr(atomicity, name)
                self.assertIn(name, atomicity.__all__)
                self.assertTrue(issubclass(cls, atomicity.Error))
                self.assertEqual(cls.__module__, "atomicity.errors")


if __name__ == "__main__":
    unittest.main()
