"""Loading the library: ATOMICITY_LIBRARY, errors when it is missing, tables read from it."""

import ctypes
import os
import subprocess
import sys
import textwrap
import unittest

import helpers
import atomicity
from atomicity import _lib

BOGUS = os.path.join(os.sep, "nonexistent", "atomicity-test", "libatomicity.so.1")


def run_python(code, library):
    """Run ``code`` in a fresh interpreter with ATOMICITY_LIBRARY=library."""
    env = dict(os.environ)
    env["ATOMICITY_LIBRARY"] = library
    env["PYTHONPATH"] = os.pathsep.join(
        [helpers.BINDING] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)


class TestLoading(unittest.TestCase):
    def test_bogus_path_raises_error(self):
        proc = run_python("""
            import atomicity
            try:
                atomicity.Session(["aerodrome"])
            except atomicity.Error as e:
                assert isinstance(e, Exception)
                assert e.code is None and e.name is None
                print("ERROR", e)
            else:
                raise SystemExit("no error")
            """, BOGUS)
        self.assertEqual(proc.returncode, 0, proc.stderr + proc.stdout)
        self.assertIn("ERROR", proc.stdout)
        self.assertIn(BOGUS, proc.stdout)
        self.assertIn("ATOMICITY_LIBRARY", proc.stdout)

    def test_bogus_path_import_still_works(self):
        # The package imports; using anything that needs the library raises atomicity.Error.
        proc = run_python("""
            import atomicity
            failures = 0
            for use in (lambda: atomicity.Kind, lambda: atomicity.READ,
                        lambda: atomicity.check_trace("x.std"), atomicity.library_version):
                try:
                    use()
                except atomicity.Error:
                    failures += 1
            print(failures)
            """, BOGUS)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "4")

    def test_environment_variable_is_honoured(self):
        path = atomicity.library_path()
        proc = run_python("""
            import atomicity
            print(atomicity.library_path())
            with atomicity.Session(["aerodrome"]) as s:
                s.write(1, 1)
            """, path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), path)

    def test_environment_variable_is_used_by_this_process(self):
        env = os.environ.get("ATOMICITY_LIBRARY")
        if not env:
            self.skipTest("ATOMICITY_LIBRARY is not set")
        self.assertEqual(atomicity.library_path(), env)

    def test_no_switch_after_load(self):
        self.assertEqual(atomicity.load(), atomicity.library_path())
        with self.assertRaises(atomicity.Error):
            atomicity.load(BOGUS)

    def test_version(self):
        version = atomicity.library_version()
        self.assertRegex(version, r"^\d+\.\d+\.\d+")


class TestTables(unittest.TestCase):
    def test_kinds_from_library(self):
        Kind = atomicity.Kind
        # Pinned ABI values (event.h).
        self.assertEqual(Kind.READ, 1)
        self.assertEqual(Kind.WRITE, 2)
        self.assertEqual(Kind.BEGIN, 7)
        self.assertEqual(Kind.END, 8)
        self.assertEqual(Kind.COMMIT, 10)
        self.assertEqual([k.name for k in Kind],
                         ["READ", "WRITE", "ACQUIRE", "RELEASE", "FORK", "JOIN", "BEGIN",
                          "END", "FENCE", "COMMIT"])
        self.assertIs(atomicity.READ, Kind.READ)

    def test_error_codes_from_library(self):
        Code = atomicity.ErrorCode
        self.assertEqual(Code.EINVAL, -1)
        self.assertEqual(Code.ENOMEM, -2)
        self.assertEqual(Code.EENDNOBEGIN, -10)
        self.assertEqual(Code.ECHECKER, -17)
        self.assertEqual(Code.EREENTRANT, -18)
        self.assertGreaterEqual(len(Code), 18)
        self.assertIs(atomicity.EENDNOBEGIN, Code.EENDNOBEGIN)
        for code in Code:
            self.assertLess(code, 0)

    def test_unknown_attribute(self):
        with self.assertRaises(AttributeError):
            atomicity.NOT_A_CONSTANT

    def test_every_function_is_prototyped(self):
        lib = _lib.load()
        for name, restype, argtypes in _lib._PROTOTYPES:
            fn = getattr(lib, name)
            self.assertEqual(tuple(fn.argtypes), tuple(argtypes), name)
            self.assertIs(fn.restype, restype, name)

    def test_struct_layouts(self):
        self.assertEqual(ctypes.sizeof(_lib.CEvent), 32)
        self.assertEqual(_lib.CEvent.thread.offset, 8)
        self.assertEqual(_lib.CEvent.loc.offset, 24)
        ptr = ctypes.sizeof(ctypes.c_void_p)
        self.assertEqual(_lib.COptions.on_report.offset, 8)
        self.assertEqual(ctypes.sizeof(_lib.COptions), 8 + 7 * ptr)


if __name__ == "__main__":
    unittest.main()
