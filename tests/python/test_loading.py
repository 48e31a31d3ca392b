"""Loading the library: ATOMICITY_LIBRARY, errors when it is missing, tables read from it."""

import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
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


def run_clean(code, env_extra, pythonpath=None):
    """Run ``code`` in a fresh interpreter with no ATOMICITY_LIBRARY, no LD_LIBRARY_PATH, and a
    pkg-config that sees only ``env_extra``'s PKG_CONFIG_PATH (never the system's .pc files)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ATOMICITY_LIBRARY", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH")}
    env["PKG_CONFIG_LIBDIR"] = env_extra.pop("PKG_CONFIG_LIBDIR")
    env.update(env_extra)
    env["PYTHONPATH"] = pythonpath or helpers.BINDING
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)


SHOW = """
    import atomicity
    from atomicity import _lib
    try:
        path = atomicity.library_path()
    except atomicity.LibraryNotFoundError as e:
        print("NOTFOUND", e)
    else:
        print(_lib.loaded().origin, path)
        assert atomicity.check_trace(%r)
    """ % helpers.corpus("aerodrome-rho2.std")


class TestLookupOrder(unittest.TestCase):
    """ATOMICITY_LIBRARY, then the soname, then pkg-config's libdir, then the recorded libdir."""

    @classmethod
    def setUpClass(cls):
        env = os.environ.get("ATOMICITY_LIBRARY")
        if not env or not os.path.isabs(env):
            raise unittest.SkipTest("needs ATOMICITY_LIBRARY set to the library of a build")
        cls.libdir = os.path.dirname(env)
        if not os.path.exists(os.path.join(cls.libdir, _lib.SONAME)):
            raise unittest.SkipTest("no %s beside %s" % (_lib.SONAME, env))

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.empty = os.path.join(self.tmp, "empty")
        os.mkdir(self.empty)

    def write_pc(self, libdir):
        pcdir = os.path.join(self.tmp, "pc")
        os.makedirs(pcdir, exist_ok=True)
        with open(os.path.join(pcdir, "atomicity.pc"), "w", encoding="utf-8") as f:
            f.write("libdir=%s\nName: atomicity\nDescription: test\nVersion: 0.1.0\n"
                    "Libs: -L${libdir} -latomicity\n" % libdir)
        return pcdir

    def installed_copy(self, libdir):
        """A copy of the package with the module meson install generates."""
        site = os.path.join(self.tmp, "site")
        shutil.copytree(os.path.join(helpers.BINDING, "atomicity"),
                        os.path.join(site, "atomicity"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        with open(os.path.join(site, "atomicity", "_installed.py"), "w",
                  encoding="utf-8") as f:
            f.write("LIBDIR = %r\n" % libdir)
        return site

    def test_soname(self):
        proc = run_clean(SHOW, {"PKG_CONFIG_LIBDIR": self.empty,
                                "LD_LIBRARY_PATH": self.libdir})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(), ["soname", _lib.SONAME])

    def test_pkg_config(self):
        if shutil.which("pkg-config") is None:
            self.skipTest("pkg-config is not installed")
        proc = run_clean(SHOW, {"PKG_CONFIG_LIBDIR": self.empty,
                                "PKG_CONFIG_PATH": self.write_pc(self.libdir)},
                         self.installed_copy(os.path.join(self.tmp, "nowhere")))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(),
                         ["pkg-config", os.path.join(self.libdir, _lib.SONAME)])

    def test_recorded_libdir(self):
        pc = {"PKG_CONFIG_PATH": self.write_pc(os.path.join(self.tmp, "nowhere"))} \
            if shutil.which("pkg-config") else {}
        proc = run_clean(SHOW, dict(pc, PKG_CONFIG_LIBDIR=self.empty),
                         self.installed_copy(self.libdir))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.split(),
                         ["install", os.path.join(self.libdir, _lib.SONAME)])

    def test_nothing_found_lists_every_place(self):
        proc = run_clean(SHOW, {"PKG_CONFIG_LIBDIR": self.empty})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = proc.stdout
        self.assertTrue(out.startswith("NOTFOUND"), out)
        self.assertIn("the soname '%s'" % _lib.SONAME, out)
        self.assertIn("pkg-config", out)
        self.assertIn("no library directory was recorded", out)
        self.assertIn("ATOMICITY_LIBRARY", out)

    def test_environment_variable_is_the_only_place(self):
        # Set but wrong: an error, although the soname would load.
        proc = run_clean(SHOW, {"PKG_CONFIG_LIBDIR": self.empty,
                                "LD_LIBRARY_PATH": self.libdir, "ATOMICITY_LIBRARY": BOGUS})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stdout.startswith("NOTFOUND"), proc.stdout)
        self.assertIn(BOGUS, proc.stdout)
        self.assertNotIn("pkg-config", proc.stdout)


class TestPackage(unittest.TestCase):
    def test_version_is_the_projects(self):
        with open(os.path.join(helpers.ROOT, "meson.build"), encoding="utf-8") as f:
            match = re.search(r"^project\([^)]*?version:\s*'([^']+)'", f.read(), re.M | re.S)
        self.assertIsNotNone(match)
        self.assertEqual(atomicity.__version__, match.group(1))
        with open(os.path.join(helpers.BINDING, "pyproject.toml"), encoding="utf-8") as f:
            pyproject = f.read()
        # The version is read from __version__, not written twice.
        self.assertIn('dynamic = ["version"]', pyproject)
        self.assertIn('version = {attr = "atomicity.__version__"}', pyproject)

    def test_py_typed(self):
        self.assertTrue(os.path.isfile(os.path.join(helpers.BINDING, "atomicity", "py.typed")))

    def test_no_recorded_libdir_in_the_source_tree(self):
        self.assertFalse(os.path.exists(os.path.join(helpers.BINDING, "atomicity",
                                                     "_installed.py")))


# The package held to mypy --strict: its whole directory, so that a new module is checked
# (and fails the test when it is not annotated) without being listed anywhere.
TYPED_PACKAGE = os.path.join(helpers.BINDING, "atomicity")
# A user of the package: mypy --strict must accept it as it is (see its docstring).
TYPED_USER = os.path.join(helpers.HERE, "typed_user.py")


def find_mypy():
    """A command that runs mypy, or None: this interpreter's, Debian's, or one on PATH."""
    for python in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(python) and subprocess.run(
                [python, "-c", "import mypy"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, timeout=60).returncode == 0:
            return [python, "-m", "mypy"]
    exe = shutil.which("mypy")
    return [exe] if exe else None


class TestTypes(unittest.TestCase):
    def test_mypy_strict(self):
        mypy = find_mypy()
        if mypy is None:
            self.skipTest("mypy is not installed (Debian: python3-mypy)")
        with tempfile.TemporaryDirectory() as cache:
            start = time.monotonic()
            proc = subprocess.run(
                mypy + ["--strict", "--follow-imports=silent", "--cache-dir", cache] +
                ["atomicity", TYPED_USER],
                cwd=helpers.BINDING, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                universal_newlines=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertIn("Success", proc.stdout)
        # Every module of the package was checked, and the typed user.
        modules = [m for m in os.listdir(TYPED_PACKAGE) if m.endswith(".py")]
        self.assertIn("_recorder.py", modules)
        self.assertIn("in %d source files" % (len(modules) + 1), proc.stdout)
        sys.stderr.write("mypy --strict: %.1f s\n" % (time.monotonic() - start))

    def test_typed_user_runs(self):
        # The typed example is real code: what it does works.
        import typed_user
        lines = typed_user.main()
        self.assertEqual(lines[0], "balance 15")
        self.assertEqual(len(lines), 3, lines)
        self.assertTrue(lines[1].startswith("aerodrome: "), lines)
        self.assertEqual(lines[2], "trace 1")


if __name__ == "__main__":
    unittest.main()
