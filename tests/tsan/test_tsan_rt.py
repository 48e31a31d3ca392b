"""Tests of the tsan-rt runtime (examples/tsan-rt): programs built with clang -fsanitize=thread
-fno-sanitize-link-runtime and linked with -latomicity-rt.

Run by tests/tsan/meson.build, one meson test per class: test_tsan_rt.py CLASS. The paths come
from the environment (see meson.build)."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

ENV = os.environ
RT_DIR = ENV.get("TSAN_RT_DIR", "")
CLANG = ENV.get("CLANG", "clang")
CLANGXX = ENV.get("CLANGXX", "")
ATOMCHECK = ENV.get("ATOMCHECK", "")
DEMO_DIR = ENV.get("TSAN_DEMO_DIR", "")
DEMO_SRC = ENV.get("TSAN_DEMO_SRC", "")
PROGRAMS = ENV.get("TSAN_PROGRAMS", "")

TSAN = ["-fsanitize=thread", "-fno-sanitize-link-runtime", "-g"]
RBW = ["-mllvm", "-tsan-instrument-read-before-write=1"]
RECOMMENDED = TSAN + ["-O1", "-fno-inline"] + RBW

DEMOS = ["counter", "lazy_init", "transfer", "withdraw", "vector"]


def demo_options(name):
    """The ATOMICITY_OPTIONS line written in the demo's header comment."""
    with open(os.path.join(DEMO_SRC, name + ".c")) as f:
        m = re.search(r"ATOMICITY_OPTIONS: (\S+)", f.read())
    return m.group(1)


def run(cmd, options=None, timeout=60, extra_env=None, **kw):
    env = dict(os.environ)
    env.pop("ATOMICITY_OPTIONS", None)
    env.update(extra_env or {})
    if options is not None:
        env["ATOMICITY_OPTIONS"] = options
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout, **kw)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="tsan-rt-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def build(self, source, out, flags=RECOMMENDED, compiler=None, extra=()):
        """Compile and link one program against the build tree's runtime."""
        exe = self.path(out)
        cmd = [compiler or CLANG] + list(flags) + list(extra) + [source, "-o", exe,
                                                              "-L" + RT_DIR, "-latomicity-rt",
                                                              "-Wl,-rpath," + RT_DIR]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        self.assertEqual(p.returncode, 0, " ".join(cmd) + "\n" + p.stdout)
        return exe

    def json_report(self, cmd, options, **kw):
        report = self.path("report.json")
        if os.path.exists(report):
            os.remove(report)  # a run that fails to write one must not read the last one
        p = run(cmd, options + " format=json report=" + report, **kw)
        with open(report) as f:
            return p, json.load(f)

    def atomcheck(self, trace):
        p = run([ATOMCHECK, "-c", "aerodrome", "-c", "velodrome", "--format", "json", trace])
        self.assertIn(p.returncode, (0, 1), p.stderr)
        return p.returncode, json.loads(p.stdout)


def violations(doc):
    return {c["name"]: c["violations"] for c in doc["checkers"]}


def functions(doc):
    """Every function named in a frame of a report's transactions and events."""
    return {f["function"] for c in doc["checkers"] for r in c["reports"]
            for item in r["transactions"] + r["events"] for f in item.get("stack", [])}


class Demos(Base):
    """Each demo: the bug is reported by aerodrome and velodrome, the fixed twin is clean, the
    program's output and status are those of an unchecked run, and a recorded trace gives
    atomcheck the same verdict."""

    def check_demo(self, name):
        opts = demo_options(name)
        atomic = opts.split("=", 1)[1].split(",")
        for fixed in (False, True):
            exe = os.path.join(DEMO_DIR, name + ("-fixed" if fixed else ""))
            with self.subTest(demo=name, fixed=fixed):
                plain = run([exe])  # unchecked
                trace = self.path("trace.std")
                p, doc = self.json_report([exe], opts + " checkers=aerodrome,velodrome record=" + trace)
                # A run with a violation exits with 66 (exitcode=); otherwise the program's status.
                self.assertEqual((p.stdout, p.returncode),
                                 (plain.stdout, plain.returncode if fixed else 66))
                self.assertEqual(doc["rejected"], 0)
                v = violations(doc)
                if fixed:
                    self.assertEqual(v, {"aerodrome": 0, "velodrome": 0}, p.stderr)
                else:
                    self.assertGreater(v["aerodrome"], 0, p.stderr)
                    self.assertGreater(v["velodrome"], 0, p.stderr)
                    # Every transaction and witness is symbolized: a stack whose first frame is
                    # the function and file:line.
                    for c in doc["checkers"]:
                        for r in c["reports"]:
                            for t in r["transactions"]:
                                where = t["stack"][0]
                                self.assertIn(where["function"], atomic)
                                self.assertTrue(where["file"].endswith(name + ".c"), where)
                                self.assertGreater(where["line"], 0)
                            for e in r["events"]:
                                where = e["stack"][0]
                                self.assertTrue(where["file"].endswith(name + ".c"), where)
                                self.assertGreater(where["line"], 0)
                rc, checked = self.atomcheck(trace)
                self.assertEqual(rc, 0 if fixed else 1)
                self.assertEqual(bool(violations(checked)["aerodrome"]), not fixed)
                self.assertEqual(bool(violations(checked)["velodrome"]), not fixed)

    def test_counter(self):
        self.check_demo("counter")

    def test_lazy_init(self):
        self.check_demo("lazy_init")

    def test_transfer(self):
        self.check_demo("transfer")

    def test_withdraw(self):
        self.check_demo("withdraw")

    def test_vector(self):
        self.check_demo("vector")

    def test_text_report_names_functions_and_lines(self):
        exe = os.path.join(DEMO_DIR, "counter")
        p = run([exe], "atomic=increment checkers=velodrome")
        self.assertRegex(p.stderr, r"T1's transaction at increment at \S*counter\.c:\d+")
        self.assertRegex(p.stderr, r"T1 wrote counter at increment at \S*counter\.c:\d+")
        self.assertIn("atomicity-rt: velodrome: 1 violation", p.stderr)

    def test_static_functions_are_named(self):
        # new_config is static: the ELF symbol table names it (dladdr would not).
        _, doc = self.json_report([os.path.join(DEMO_DIR, "lazy_init")], "atomic=get_config")
        self.assertIn("new_config", functions(doc))

    def test_other_optimization_levels(self):
        # The same verdicts at -O0, and at -O2 when inlining is off.
        for level in ("-O0", "-O2"):
            for fixed in (False, True):
                with self.subTest(level=level, fixed=fixed):
                    exe = self.build(os.path.join(DEMO_SRC, "transfer.c"), "transfer",
                                     TSAN + [level, "-fno-inline"] + RBW + (["-DFIXED"] if fixed else []))
                    _, doc = self.json_report([exe], demo_options("transfer"))
                    self.assertEqual(violations(doc)["aerodrome"] > 0, not fixed)


class EntryPoints(Base):
    """Every entry point listed in the README is exported, and nothing else with that prefix;
    a program calling each one links and runs (ENTRY_POINTS, built by meson)."""

    def readme_names(self):
        with open(ENV["TSAN_README"]) as f:
            text = f.read()
        block = re.search(r"```entry-points\n(.*?)```", text, re.S).group(1)
        names = set()
        for line in block.split("\n"):
            line = line.split("#")[0].strip()
            if not line:
                continue
            todo = [line]
            while todo:  # expand {a,b,c}
                s = todo.pop()
                m = re.search(r"\{([^{}]*)\}", s)
                if not m:
                    names.add(s)
                    continue
                for alt in m.group(1).split(","):
                    todo.append(s[:m.start()] + alt + s[m.end():])
        return names

    def exported(self):
        out = subprocess.run(["nm", "-D", "--defined-only", ENV["TSAN_RT_LIB"]],
                             stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
        return {l.split()[-1] for l in out.splitlines() if l.strip()}

    def test_readme_lists_every_entry_point(self):
        readme = self.readme_names()
        exported = self.exported()
        tsan = {n for n in exported if n.startswith("__tsan_")}
        self.assertEqual(tsan, {n for n in readme if n.startswith("__tsan_")})
        self.assertTrue(readme <= exported, readme - exported)

    def test_program_calling_each_entry_point(self):
        p = run([ENV["ENTRY_POINTS"]], "atomic=main record=" + self.path("t.std"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "entry points: ok\n")
        rc, _ = self.atomcheck(self.path("t.std"))
        self.assertEqual(rc, 0)

    def test_instrumented_programs_at_each_level(self):
        """C and C++ programs at -O0..-O2, with and without read-before-write: every __tsan_*
        symbol clang emits is defined by the runtime, and the programs behave as without it."""
        exported = self.exported()
        sources = [(os.path.join(PROGRAMS, "probe.c"), CLANG)]
        if CLANGXX:
            sources.append((os.path.join(PROGRAMS, "cxx.cpp"), CLANGXX))
        for src, compiler in sources:
            plain = self.path("plain")
            subprocess.run([compiler, "-O1", src, "-o", plain, "-pthread"], check=True)
            expected = run([plain])
            for level in ("-O0", "-O1", "-O2"):
                for rbw in ([], RBW):
                    with self.subTest(src=os.path.basename(src), level=level, rbw=bool(rbw)):
                        obj = self.path("p.o")
                        subprocess.run([compiler, "-c"] + TSAN + [level] + rbw + [src, "-o", obj],
                                       check=True)
                        nm = subprocess.run(["nm", "-u", obj], stdout=subprocess.PIPE,
                                            universal_newlines=True, check=True).stdout
                        wanted = {l.split()[-1] for l in nm.splitlines() if "__tsan_" in l}
                        self.assertTrue(wanted, "no instrumentation?")
                        self.assertTrue(wanted <= exported, wanted - exported)
                        exe = self.build(obj, "p", [], compiler)
                        got = run([exe], "atomic=run,Account::deposit checkers=aerodrome exitcode=0")
                        self.assertEqual((got.stdout, got.returncode),
                                         (expected.stdout, expected.returncode), got.stderr)


class Behaviour(Base):
    """Interceptors keep the program's behaviour; threads that end inside a transaction."""

    def test_sync_primitives(self):
        src = os.path.join(PROGRAMS, "sync.c")
        plain = self.path("plain")
        subprocess.run([CLANG, "-O1", src, "-o", plain, "-pthread"], check=True)
        expected = run([plain])
        exe = self.build(src, "sync")
        trace = self.path("t.std")
        p, doc = self.json_report([exe], "atomic=bump_all checkers=aerodrome,velodrome record=" + trace)
        self.assertEqual((p.stdout, p.returncode), (expected.stdout, expected.returncode))
        self.assertEqual(expected.returncode, 3)
        self.assertEqual(doc["rejected"], 0, p.stderr)
        self.assertNotIn("ill-formed", p.stderr)
        # Every operation is protected: serializable.
        self.assertEqual(violations(doc), {"aerodrome": 0, "velodrome": 0})
        rc, _ = self.atomcheck(trace)
        self.assertEqual(rc, 0)
        with open(trace) as f:
            text = f.read()
        for op in ("fork(", "join(", "acq(", "rel(", "begin", "end"):
            self.assertIn(op, text)

    def test_threads_ending_inside_a_transaction(self):
        exe = self.build(os.path.join(PROGRAMS, "exits.c"), "exits")
        for mode, status, out in (("pthread_exit", 0, "start pthread_exit\njoined, shared = 1\n"),
                                  ("exit", 4, "start exit\n"),
                                  ("return", 5, "start return\nmain returns\n")):
            with self.subTest(mode=mode):
                trace = self.path(mode + ".std")
                p = run([exe, mode], "atomic=work_in_transaction checkers=aerodrome,velodrome "
                        "record=" + trace)
                self.assertEqual((p.stdout, p.returncode), (out, status), p.stderr)
                self.assertIn("atomicity-rt: aerodrome: no violations", p.stderr)
                self.assertNotIn("ill-formed", p.stderr)
                with open(trace) as f:
                    lines = f.read().split()
                self.assertEqual(sum("|begin|" in l for l in lines),
                                 sum("|end|" in l for l in lines))
                rc, _ = self.atomcheck(trace)
                self.assertEqual(rc, 0)

    def test_library_loaded_by_a_relative_path(self):
        """Atomic functions of an object loaded as ./lib.so (dlopen, or LD_LIBRARY_PATH=.) are
        found: the runtime reads the file the kernel mapped, not the name it was loaded by."""
        lib = self.path("libdlbump.so")
        p = subprocess.run([CLANG] + RECOMMENDED + ["-shared", "-fPIC",
                                                    os.path.join(PROGRAMS, "dl_lib.c"), "-o", lib],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        src = os.path.join(PROGRAMS, "dl_main.c")
        by_dlopen = self.build(src, "dl_main", extra=["-pthread", "-ldl"])
        linked = self.build(src, "dl_linked",
                            extra=["-DLINKED", "-pthread", "-L" + self.tmp, "-ldlbump"])
        for name, exe in (("dlopen", by_dlopen), ("LD_LIBRARY_PATH=.", linked)):
            with self.subTest(loaded_by=name):
                p, doc = self.json_report([exe], "atomic=bump checkers=aerodrome verbosity=1",
                                          cwd=self.tmp, extra_env={"LD_LIBRARY_PATH": "."})
                self.assertEqual(p.stdout, "1\n", p.stderr)
                self.assertNotIn("never entered", p.stderr)
                self.assertGreater(violations(doc)["aerodrome"], 0, p.stderr)
                named = functions(doc)
                self.assertIn("bump", named)

    def test_unreadable_object_is_not_blamed_on_inlining(self):
        """When code was entered that no symbol table could name (here: the library's file was
        removed after it was loaded), the exit note says so instead of blaming inlining."""
        lib = self.path("libgone.so")
        p = subprocess.run([CLANG] + RECOMMENDED + ["-shared", "-fPIC",
                                                    os.path.join(PROGRAMS, "dl_lib.c"), "-o", lib],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        exe = self.build(os.path.join(PROGRAMS, "dl_main.c"), "dl_main", extra=["-pthread", "-ldl"])
        p = run([exe, lib, "unlink"], "atomic=bump checkers=aerodrome verbosity=1")
        self.assertEqual((p.stdout, p.returncode), ("1\n", 0), p.stderr)
        self.assertRegex(p.stderr, r"atomic function 'bump' was never recognized: \d+ entered "
                         r"functions? could not be named")
        self.assertNotIn("inlined", p.stderr)

    def test_cancelled_in_cond_wait(self):
        """A thread cancelled in pthread_cond_wait inside an atomic function owns the mutex
        again when its cleanup handler unlocks it: no ill-formed release."""
        exe = self.build(os.path.join(PROGRAMS, "cancel.c"), "cancel", extra=["-pthread"])
        trace = self.path("t.std")
        p, doc = self.json_report([exe], "atomic=wait_in_transaction checkers=aerodrome "
                                  "verbosity=1 record=" + trace)
        self.assertEqual(p.stdout, "cancelled 2\n", p.stderr)
        self.assertNotIn("ill-formed", p.stderr)
        self.assertNotIn("does not hold", p.stderr)
        self.assertEqual(doc["rejected"], 0, p.stderr)
        # The waiter's transaction lets main take the mutex in its middle: a real violation.
        self.assertEqual(violations(doc), {"aerodrome": 1})
        with open(trace) as f:
            t1 = [l.split("|")[1] for l in f.read().split() if l.startswith("T1|")]
        ops = [op[:3] for op in t1 if op.startswith(("acq", "rel"))]
        self.assertEqual(ops, ["acq", "rel", "acq", "rel"], t1)
        rc, _ = self.atomcheck(trace)
        self.assertEqual(rc, 1)

    def test_cxx(self):
        if not CLANGXX:
            self.skipTest("clang++ not found")
        exe = self.build(os.path.join(PROGRAMS, "cxx.cpp"), "cxx", RECOMMENDED, CLANGXX)
        p, doc = self.json_report([exe], "atomic=Account::deposit checkers=aerodrome,velodrome")
        self.assertEqual(p.stdout, "hello 9 10\n")
        self.assertEqual(p.returncode, 66)
        self.assertGreater(violations(doc)["aerodrome"], 0)
        named = functions(doc)
        self.assertIn("Account::deposit(int)", named)

    def test_read_before_write(self):
        """x++ is a read and a write only with -tsan-instrument-read-before-write=1."""
        src = os.path.join(PROGRAMS, "rmw.c")
        for rbw in (True, False):
            with self.subTest(rbw=rbw):
                exe = self.build(src, "rmw", TSAN + ["-O1", "-fno-inline"] + (RBW if rbw else []))
                trace = self.path("t.std")
                p = run([exe], "atomic=hit record=" + trace)
                self.assertEqual(p.stdout, "2\n")
                with open(trace) as f:
                    ops = [l.split("|")[1] for l in f.read().split() if l.startswith("T0|")]
                inside = ops[ops.index("begin") + 1:ops.index("end")]
                if rbw:
                    self.assertEqual([o[0] for o in inside], ["r", "w"])
                else:
                    self.assertEqual([o[0] for o in inside], ["w"])


class Options(Base):
    def exe(self):
        return os.path.join(DEMO_DIR, "counter")

    def test_bad_options_run_unchecked(self):
        plain = run([self.exe()])
        for bad in ("nonsense", "atomic=increment foo=1", "atomic=increment format=xml",
                    "atomic=increment checkers=nope", "atomic=increment max_reports=-3",
                    "atomic=increment exitcode=999", "atomic_file=/nonexistent/file",
                    "atomic=increment record=/nonexistent/dir/t.std", "atomic='unterminated"):
            with self.subTest(options=bad):
                p = run([self.exe()], bad)
                self.assertEqual((p.stdout, p.returncode), (plain.stdout, plain.returncode))
                lines = p.stderr.strip().split("\n")
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertRegex(lines[0], r"^atomicity-rt: .*running unchecked$")

    def test_separators_and_quotes(self):
        for opts in ("atomic=increment:checkers=velodrome", "  atomic=increment \t checkers=velodrome ",
                     "atomic='increment' checkers=\"velodrome\""):
            with self.subTest(options=opts):
                p = run([self.exe()], opts)
                self.assertIn("atomicity-rt: velodrome: 1 violation", p.stderr)

    def test_checker_arguments(self):
        p = run([self.exe()], "atomic=increment checkers=aerodrome:variant=basic,velodrome")
        self.assertIn("atomicity-rt: aerodrome:variant=basic: 1 violation", p.stderr)
        self.assertIn("atomicity-rt: velodrome: 1 violation", p.stderr)

    def test_exitcode(self):
        for opt, status in (("", 66), (" exitcode=66", 66), (" exitcode=7", 7), (" exitcode=0", 0)):
            with self.subTest(option=opt):
                p = run([self.exe()], "atomic=increment" + opt)
                self.assertEqual(p.returncode, status)
                self.assertEqual(p.stdout, "counter = 1\n")  # flushed before the status is changed
                p = run([os.path.join(DEMO_DIR, "counter-fixed")], "atomic=increment" + opt)
                self.assertEqual(p.returncode, 0)

    def test_max_reports_and_report_file(self):
        # transfer has two distinct violations in every schedule (one per transaction of the
        # two the demo's barriers interleave)
        exe = os.path.join(DEMO_DIR, "transfer")
        report = self.path("r.txt")
        p = run([exe], "atomic=transfer checkers=aerodrome max_reports=1 report=" + report)
        self.assertEqual(p.stderr, "")
        with open(report) as f:
            text = f.read()
        self.assertEqual(text.count("conflict-cycle at event"), 1)
        self.assertRegex(text, r"aerodrome: \d+ more reports? not shown \(max_reports=1\)")
        _, doc = self.json_report([exe], "atomic=transfer max_reports=0")
        self.assertEqual(doc["checkers"][0]["reports"], [])
        self.assertGreater(doc["checkers"][0]["violations"], 0)

    def test_eager(self):
        # Reports are always written as they are found; eager= is still accepted.
        for opt in ("", " eager=1", " eager=0"):
            with self.subTest(option=opt):
                p = run([self.exe()], "atomic=increment checkers=velodrome" + opt)
                self.assertEqual(p.stderr.count("conflict-cycle at event"), 1)
                self.assertIn("velodrome: 1 violation", p.stderr)

    def test_report_file_that_cannot_be_written(self):
        # /dev/full accepts the open and fails every write: said once on stderr.
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        p = run([self.exe()], "atomic=increment report=/dev/full")
        self.assertEqual(p.stderr.count("atomicity-rt: report=/dev/full: cannot write"), 1, p.stderr)
        self.assertEqual(p.returncode, 66)

    def test_atomic_file(self):
        src = os.path.join(DEMO_SRC, "transfer.c")
        with open(src) as f:
            lines = f.read().split("\n")
        # the buggy transfer() is the first definition; audit() the only one
        first = next(i for i, l in enumerate(lines) if l.startswith("void transfer(")) + 1
        listing = self.path("atomic.txt")
        with open(listing, "w") as f:
            f.write("# one per line\naudit\n\ntransfer.c:%d-%d\n" % (first, first + 1))
        _, doc = self.json_report([os.path.join(DEMO_DIR, "transfer")], "atomic_file=" + listing)
        self.assertGreater(violations(doc)["aerodrome"], 0)
        named = functions(doc)
        self.assertTrue({"transfer", "audit"} <= named, named)

    def test_unmatched_name_is_reported(self):
        p = run([self.exe()], "atomic=increment,no_such_function")
        self.assertIn("atomic function 'no_such_function' was never entered", p.stderr)


class AbnormalEnds(Base):
    """tests/tsan/programs/crash.c: a lost update (a violation aerodrome sees online and
    commit-node predicts at the end), then the program ends abnormally inside the open
    transaction. Every report is written, the JSON report file is complete, the recording is
    complete, and the status (or the signal) is as documented."""

    OPTS = "atomic=increment checkers=aerodrome,commit-node"
    # mode -> (status: an exit status, or minus the signal number), what stdout holds
    MODES = {
        "abort": (-signal.SIGABRT, "start abort\n"),
        "segv": (-signal.SIGSEGV, "start segv\n"),
        "_exit": (66, "start _exit\n"),
        "exit2": (66, "start exit2\n"),
        "handler": (-signal.SIGSEGV, "start handler\n"),
    }

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="tsan-rt-crash-")
        cls.exe = os.path.join(cls.dir, "crash")
        cmd = [CLANG] + RECOMMENDED + [os.path.join(PROGRAMS, "crash.c"), "-o", cls.exe,
                                       "-L" + RT_DIR, "-latomicity-rt", "-Wl,-rpath," + RT_DIR]
        subprocess.run(cmd, check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def check_mode(self, mode):
        status, out = self.MODES[mode]
        # Text on stderr, and the recording.
        trace = self.path("t.std")
        p = run([self.exe, mode], self.OPTS + " record=" + trace, timeout=60)
        self.assertEqual((p.stdout, p.returncode), (out, status), p.stderr)
        err = p.stderr
        self.assertEqual(err.count("atomicity-rt: aerodrome: conflict-cycle at event"), 1, err)
        self.assertEqual(err.count("atomicity-rt: commit-node:lock_blocks=no: commit-nodes at event"), 1, err)
        self.assertIn("atomicity-rt: aerodrome: 1 violation", err)
        self.assertIn("atomicity-rt: commit-node:lock_blocks=no: 1 violation", err)
        self.assertRegex(err, r"T1's transaction at increment at \S*crash\.c:\d+")
        if mode == "handler":  # the program's handler runs after the runtime's reports
            self.assertGreater(err.index("program handler: SIGSEGV"),
                               err.index("commit-node:lock_blocks=no: 1 violation"), err)
        with open(trace) as f:
            text = f.read()
        self.assertTrue(text.endswith("\n"), text[-200:])
        lines = text.split("\n")[:-1]
        self.assertEqual(sum("|begin|" in l for l in lines), sum("|end|" in l for l in lines))
        rc, checked = self.atomcheck(trace)
        self.assertEqual(rc, 1)
        self.assertEqual(violations(checked)["aerodrome"], 1)
        # The JSON report file.
        p, doc = self.json_report([self.exe, mode], self.OPTS, timeout=60)
        self.assertEqual(p.returncode, status, p.stderr)
        self.assertEqual(violations(doc), {"aerodrome": 1, "commit-node": 1})
        self.assertEqual(doc["rejected"], 0)

    def test_abort(self):
        self.check_mode("abort")

    def test_segv(self):
        self.check_mode("segv")

    def test_exit_underscore(self):
        self.check_mode("_exit")

    def test_two_threads_call_exit(self):
        self.check_mode("exit2")

    def test_program_handler(self):
        self.check_mode("handler")

    def test_exit_status(self):
        for mode, opt, status in (("return", "", 66), ("return", " exitcode=0", 0),
                                  ("return", " exitcode=7", 7), ("_exit", " exitcode=0", 3),
                                  ("_exit", " exitcode=7", 7), ("abort", " exitcode=7", -signal.SIGABRT)):
            with self.subTest(mode=mode, option=opt):
                p = run([self.exe, mode], self.OPTS + opt)
                self.assertEqual(p.returncode, status, p.stderr)
                self.assertIn("atomicity-rt: commit-node:lock_blocks=no: 1 violation", p.stderr)


class Names(Base):
    """What is atomic (lock_blocks=), lock sites named after the user's code rather than a lock
    wrapper, the evidence of each report, and recordings that keep the runtime's names."""

    def line_of(self, source, mark):
        with open(source) as f:
            return next(i for i, l in enumerate(f, 1) if mark in l)

    def check_lock_blocks(self, source, compiler):
        exe = self.build(source, os.path.basename(source) + ".exe", RECOMMENDED, compiler)
        where = r"bump(\(\))? at \S*%s:%d" % (re.escape(os.path.basename(source)),
                                             self.line_of(source, "BUMP-LOCK"))
        # By default only declared functions are atomic: the lock block in bump() is no unit.
        p, doc = self.json_report([exe], "atomic=reset checkers=commit-node,block")
        self.assertEqual(p.stdout, "done\n")
        self.assertEqual(violations(doc), {"commit-node": 0, "block": 0}, p.stderr)
        # lock_blocks=yes (or the checker's own argument) makes it one; it is named after the
        # call in bump(), not lock() or std::mutex::lock, and only predicted.
        for opts in ("lock_blocks=yes checkers=commit-node,block",
                     "atomic=reset checkers=commit-node:lock_blocks=yes,block:lock_blocks=yes",
                     "atomic=reset checkers='commit-node:lock_blocks=yes,block:lock_blocks=yes'"):
            with self.subTest(options=opts):
                p, doc = self.json_report([exe], opts)
                self.assertEqual(p.stdout, "done\n")
                for c in doc["checkers"]:
                    self.assertEqual(c["violations"], 1, p.stderr)
                    r = c["reports"][0]
                    self.assertEqual(r["evidence"], "predicted")
                    self.assertRegex(r["transactions"][0]["begin_at"], "^" + where + "$")
        p = run([exe], "lock_blocks=yes checkers=commit-node")
        self.assertRegex(p.stderr, r"\n    T\d+'s transaction at %s \(event \d+\)\n" % where)
        self.assertRegex(p.stderr, r"commit-nodes at event \d+ \(1 occurrence, predicted\)")
        # No headline (a report's transaction or event line) names the wrapper or the library.
        self.assertNotRegex(p.stderr, r"(?m)^    T\d+.* at (lock|std::mutex::lock|__gthread)\b")

    def test_c_lock_wrapper(self):
        self.check_lock_blocks(os.path.join(PROGRAMS, "lock_wrapper.c"), CLANG)

    def test_cxx_lock_guard(self):
        if not CLANGXX:
            self.skipTest("clang++ not found")
        self.check_lock_blocks(os.path.join(PROGRAMS, "lock_guard.cpp"), CLANGXX)

    def test_bad_lock_blocks_runs_unchecked(self):
        p = run([os.path.join(DEMO_DIR, "counter")], "atomic=increment lock_blocks=maybe")
        self.assertRegex(p.stderr, r"lock_blocks=maybe: expected yes or no.*running unchecked")

    def test_evidence(self):
        # The demo makes the bad interleaving happen: what commit-node and block predict,
        # aerodrome observes, so their reports are confirmed.
        exe = os.path.join(DEMO_DIR, "counter")
        _, doc = self.json_report([exe], "atomic=increment checkers=aerodrome,commit-node,block")
        # (The two threads run increment() from different callers, but one atomic function
        # through two call paths is one bug: one report per checker.)
        got = {c["name"]: [r["evidence"] for r in c["reports"]] for c in doc["checkers"]}
        self.assertEqual(got, {"aerodrome": ["observed"], "commit-node": ["confirmed"],
                               "block": ["confirmed"]})
        p = run([exe], "atomic=increment checkers=commit-node,aerodrome")
        self.assertIn("commit-nodes at event", p.stderr)
        self.assertRegex(p.stderr, r"commit-node:lock_blocks=no: commit-nodes at event \d+ \(\d+ occurrences?, confirmed\)")

    def named_lines(self, text):
        """The reports' transaction and event lines, whole (four spaces in; the callers of a
        stack are indented further), sorted."""
        return sorted(re.findall(r"(?m)^    (?:T|\d).*$", text))

    def test_recording_keeps_names(self):
        for name in ("counter", "transfer", "vector"):
            with self.subTest(demo=name):
                trace = self.path(name + ".std")
                p = run([os.path.join(DEMO_DIR, name)],
                        demo_options(name) + " checkers=aerodrome record=" + trace)
                with open(trace) as f:
                    recording = f.read()
                self.assertIn("#name loc ", recording)
                offline = subprocess.run([ATOMCHECK, "-c", "aerodrome", trace],
                                         stdout=subprocess.PIPE, universal_newlines=True)
                self.assertEqual(offline.returncode, 1)
                named = self.named_lines(p.stderr)
                self.assertTrue(named, p.stderr)
                # every line names a function at a file:line
                for line in named:
                    self.assertRegex(line, r"\b[A-Za-z_]\w* at \S+:\d+", p.stderr)
                self.assertEqual(self.named_lines(offline.stdout), named, offline.stdout)

    def test_recording_atb(self):
        """record=FILE.atb writes the binary format through the same writer: atomcheck reads it
        with the verdict and named lines of the run, and its STD copy gives the same output."""
        name = "transfer"
        trace = self.path(name + ".atb")
        p = run([os.path.join(DEMO_DIR, name)],
                demo_options(name) + " checkers=aerodrome record=" + trace)
        with open(trace, "rb") as f:
            self.assertEqual(f.read(8), b"ATB\0\r\n\x1a\n")
        offline = subprocess.run([ATOMCHECK, "-c", "aerodrome", trace],
                                 stdout=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(offline.returncode, 1)
        named = self.named_lines(p.stderr)
        self.assertTrue(named, p.stderr)
        self.assertEqual(self.named_lines(offline.stdout), named, offline.stdout)
        copy = self.path(name + ".std")
        subprocess.run([ATOMCHECK, "--convert", trace, copy], check=True)
        with open(copy) as f:
            self.assertIn("#name loc ", f.read())
        again = subprocess.run([ATOMCHECK, "-c", "aerodrome", copy],
                               stdout=subprocess.PIPE, universal_newlines=True)
        self.assertEqual((again.returncode, again.stdout),
                         (1, offline.stdout.replace(trace, copy)))


class Stacks(Base):
    """Each transaction and witness carries a stack; its headline frame is the user's own line
    (library frames skipped); variables are named: globals, heap blocks, thread stacks."""

    def line_of(self, source, mark):
        with open(source) as f:
            return next(i for i, l in enumerate(f, 1) if mark in l)

    def cxx_mutex(self):
        if not CLANGXX:
            self.skipTest("clang++ not found")
        return self.build(os.path.join(PROGRAMS, "cxx_mutex.cpp"), "cxx_mutex", RECOMMENDED,
                          CLANGXX)

    def test_cxx_mutex_headline_is_the_users_line(self):
        exe = self.cxx_mutex()
        src = os.path.join(PROGRAMS, "cxx_mutex.cpp")
        p, doc = self.json_report([exe], "atomic=withdraw")
        self.assertEqual((p.stdout, p.returncode), ("balance 40\n", 66), p.stderr)
        reports = doc["checkers"][0]["reports"]
        self.assertTrue(reports, p.stderr)
        lock_line = self.line_of(src, "WITHDRAW-LOCK")
        seen = set()
        for r in reports:
            for item in r["transactions"] + r["events"]:
                head = item["stack"][0]
                # The headline frame: the user's file, never a header of the C++ library.
                self.assertTrue(head["file"].endswith("cxx_mutex.cpp"), item)
                self.assertNotIn("gthr", item.get("at", ""))
                seen.add((head["function"], head["line"]))
            for t in r["transactions"]:
                self.assertEqual(t["stack"][0]["line"], self.line_of(src, "void withdraw"))
                # Its callers: victim() or interferer(), then the C++ library's thread start.
                self.assertIn(t["stack"][1]["function"], ("victim()", "interferer()"), t)
        locks = (lock_line, self.line_of(src, "WITHDRAW-LOCK2"))
        self.assertTrue(any(f.startswith("withdraw") and l in locks for f, l in seen), seen)
        # The text: the same headline; no frame of gthr-default.h or std_mutex.h leads a line.
        p = run([exe], "atomic=withdraw")
        self.assertRegex(p.stderr, r"T1 acquired .* at withdraw\(int, bool\) at \S*cxx_mutex\.cpp:\d+")
        self.assertNotRegex(p.stderr, r"(?m)^    T\d+ .* at \S*(gthr-default|std_mutex)\.h")

    def test_heap_block_named_by_allocation_site(self):
        exe = self.cxx_mutex()
        src = os.path.join(PROGRAMS, "cxx_mutex.cpp")
        p = run([exe], "atomic=withdraw")
        # sizeof(Account): a 40-byte std::mutex and an int, padded to 48.
        self.assertRegex(p.stderr, r"T1 acquired heap block of 48 bytes allocated at "
                                   r"make_account\(\) at \S*cxx_mutex\.cpp:%d at withdraw"
                         % self.line_of(src, "ACCOUNT-NEW"))
        self.assertNotIn("0x", "\n".join(l for l in p.stderr.splitlines()
                                          if l.startswith("    ")))

    def test_stack_variable_named_by_thread_and_function(self):
        exe = self.build(os.path.join(PROGRAMS, "stack_var.c"), "stack_var")
        p = run([exe], "atomic=bump")
        self.assertEqual((p.stdout, p.returncode), ("counter 1\n", 66), p.stderr)
        self.assertIn("  variables: stack of T0 in main\n", p.stderr)
        self.assertRegex(p.stderr, r"T1 wrote stack of T0 in main at bump at \S*stack_var\.c:\d+")

    def test_two_call_paths_are_one_bug(self):
        # bump() through via_a() and via_b(): two stacks, one atomic function, one report
        exe = self.build(os.path.join(PROGRAMS, "two_paths.c"), "two_paths")
        for checker in ("aerodrome", "velodrome", "block"):
            with self.subTest(checker=checker):
                p, doc = self.json_report([exe], "atomic=bump checkers=" + checker)
                self.assertEqual((p.stdout, p.returncode), ("counter 2\n", 66), p.stderr)
                reports = doc["checkers"][0]["reports"]
                self.assertEqual(len(reports), 1, p.stderr)
                # the pipes force both splits into the trace: two occurrences for each checker,
                # block (at finish, from the same trace) included
                self.assertEqual(reports[0]["count"], 2, p.stderr)
                callers = {t["stack"][1]["function"] for t in reports[0]["transactions"]
                           if len(t["stack"]) > 1}
                self.assertTrue(callers & {"via_a", "via_b"}, reports[0])

    def test_one_bug_under_library_frames_is_one_report(self):
        # The interfering write is made inside std::fill_n (a library frame innermost), through
        # two instantiations in the two rounds: the stacks differ below the user's line, and the
        # first report is found before any stack was symbolized. The site of a stack is its
        # headline frame's (function, file, line): one report with two occurrences.
        if not CLANGXX:
            self.skipTest("clang++ not found")
        src = os.path.join(PROGRAMS, "system_frame.cpp")
        exe = self.build(src, "system_frame", RECOMMENDED, CLANGXX)
        for checker in ("velodrome", "aerodrome", "block"):
            with self.subTest(checker=checker):
                p, doc = self.json_report([exe], "atomic=update checkers=" + checker)
                self.assertEqual((p.stdout, p.returncode), ("balance 80\n", 66), p.stderr)
                reports = doc["checkers"][0]["reports"]
                self.assertEqual(len(reports), 1, p.stderr)
                self.assertEqual(reports[0]["count"], 2, p.stderr)
                heads = sorted((t["stack"][0]["function"], t["stack"][0]["line"])
                               for t in reports[0]["transactions"])
                self.assertEqual(heads, [("reset(int)", self.line_of(src, "RESET-LINE")),
                                         ("update(int)", self.line_of(src, "void update"))],
                                 reports[0])

    def test_stack_depth_limits_the_stack(self):
        exe = self.cxx_mutex()
        for depth, expect in ((1, 1), (2, 2), (None, 8)):
            with self.subTest(stack_depth=depth):
                opts = "atomic=withdraw" + (" stack_depth=%d" % depth if depth else "")
                p, doc = self.json_report([exe], opts)
                lengths = [len(item["stack"]) for c in doc["checkers"] for r in c["reports"]
                           for item in r["transactions"] + r["events"]]
                self.assertTrue(lengths, p.stderr)
                # Library frames before the headline are not in "stack": at most depth frames.
                self.assertLessEqual(max(lengths), expect, doc)
                self.assertEqual(max(lengths) >= 2, expect >= 2, doc)
        p = run([exe], "atomic=withdraw stack_depth=0")
        self.assertRegex(p.stderr, r"stack_depth=0: expected 1\.\.64.*running unchecked")

    def test_demo_text_has_no_raw_numbers(self):
        # Transactions, events, variables and callers are named: no "0x..." pc or address and
        # no "loc N". (The message line is the checker's own; it is rendered from a template
        # once the checker provides one.)
        for name in DEMOS:
            with self.subTest(demo=name):
                p = run([os.path.join(DEMO_DIR, name)],
                        demo_options(name) + " checkers=aerodrome,velodrome,commit-node,block")
                self.assertEqual(p.returncode, 66, p.stderr)
                body = [l for l in p.stderr.splitlines() if l.startswith("    ")
                        or l.startswith("  variables:")]
                self.assertTrue(body, p.stderr)
                for l in body:
                    self.assertNotRegex(l, r"0x[0-9a-f]+|\bloc \d+", p.stderr)

    def test_json_items_carry_stacks(self):
        p, doc = self.json_report([os.path.join(DEMO_DIR, "transfer")],
                                  demo_options("transfer") + " checkers=aerodrome,commit-node")
        items = [item for c in doc["checkers"] for r in c["reports"]
                 for item in r["transactions"] + r["events"]]
        self.assertTrue(items, p.stderr)
        for item in items:
            self.assertTrue(item["stack"], item)
            for frame in item["stack"]:
                self.assertEqual(set(frame), {"function", "file", "line"}, frame)

    def test_suppressions_silence_a_report(self):
        # Rules of ThreadSanitizer's shape (atom_suppressions_parse): a suppressed report is
        # neither printed nor a failure.
        exe = os.path.join(DEMO_DIR, "withdraw")
        plain = run([exe])
        for rule in ("atomic:withdraw", "fn:take_60", "file:withdraw.c"):
            with self.subTest(rule=rule):
                rules = self.path("supp.txt")
                with open(rules, "w") as f:
                    f.write("# known\n" + rule + "\n")
                p = run([exe], "atomic=withdraw suppressions=" + rules)
                self.assertEqual((p.stdout, p.returncode), (plain.stdout, plain.returncode),
                                 p.stderr)
                self.assertNotIn("conflict-cycle", p.stderr)
                self.assertNotIn("running unchecked", p.stderr)
                self.assertIn("aerodrome: 1 known violation not shown (1 suppressed", p.stderr)
        # A long file is read whole: its rule comes after more than a megabyte of comments.
        rules = self.path("long.txt")
        with open(rules, "w") as f:
            f.write(("#" + "x" * 99 + "\n") * 12000 + "atomic:withdraw\n")
        p = run([exe], "atomic=withdraw suppressions=" + rules)
        self.assertEqual((p.stdout, p.returncode), (plain.stdout, plain.returncode), p.stderr)
        self.assertIn("aerodrome: 1 known violation not shown (1 suppressed", p.stderr)
        p = run([exe], "atomic=withdraw suppressions=" + self.path("missing.txt"))
        self.assertRegex(p.stderr, r"suppressions=\S*missing\.txt: cannot read")

    def test_sarif(self):
        exe = os.path.join(DEMO_DIR, "withdraw")
        report = self.path("report.sarif")
        p = run([exe], "atomic=withdraw format=sarif report=" + report)
        self.assertEqual(p.returncode, 66, p.stderr)
        with open(report) as f:
            sarif = json.load(f)
        self.assertEqual(sarif["version"], "2.1.0")
        results = sarif["runs"][0]["results"]
        self.assertTrue(results)
        self.assertIn("withdraw.c", json.dumps(results))


class PkgConfig(Base):
    """The three commands of doc/tsan-rt.md, with the build tree's atomicity-rt.pc."""

    def test_three_commands(self):
        if not shutil.which("pkg-config"):
            self.skipTest("pkg-config not found")
        env = dict(os.environ, PKG_CONFIG_PATH=ENV["TSAN_PKGCONFIG_DIR"])
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "atomicity-rt"], env=env,
                               stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split()
        for f in ("-fsanitize=thread", "-fno-sanitize-link-runtime", "-latomicity-rt"):
            self.assertIn(f, flags)
        exe = self.path("counter")
        subprocess.run([CLANG, "-O1", os.path.join(DEMO_SRC, "counter.c"), "-o", exe] + flags,
                       check=True)
        # the runtime's directory and the library's (atomicity-rt.pc requires atomicity.pc,
        # so the program needs libatomicity.so.1 too)
        env["LD_LIBRARY_PATH"] = RT_DIR + os.pathsep + ENV.get("LD_LIBRARY_PATH", "")
        env["ATOMICITY_OPTIONS"] = "atomic=increment"
        p = subprocess.run([exe], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(p.stdout, "counter = 1\n")
        self.assertIn("aerodrome: 1 violation", p.stderr)


# The demos of doc/tsan-rt.md, "Finding bugs that hide": built without a forced schedule.
PERTURB_DEMOS = [("counter-natural", "counter"), ("withdraw-natural", "withdraw"),
                 ("wrong_lock", "wrong_lock"), ("publish", "publish"), ("append", "append"),
                 ("driver", "driver")]
PERTURB = " schedule=perturb seed=12345 perturb_wait=50"


class Perturb(Base):
    """schedule=perturb: whatever schedule the pauses produce, each buggy demo's run is judged
    consistently (aerodrome and velodrome agree, and atomcheck agrees on the recorded trace);
    the fixed twins are never reported (the checkers are sound, whatever the schedule); bad
    schedule=/seed= values run the program unchecked; the summary and the JSON report give the
    seed. How often the bugs are seen is luck, so it is measured by the perturb-rates benchmark
    (doc/tsan-rt.md, "How many runs"), not asserted here."""

    def aerodrome(self, exe, options):
        p, doc = self.json_report([exe], options + " checkers=aerodrome,velodrome")
        self.assertEqual(doc["rejected"], 0)
        self.assertEqual(doc["seed"], 12345)
        return violations(doc), p

    def test_buggy_demos_judged_consistently(self):
        for prog, source in PERTURB_DEMOS:
            with self.subTest(demo=prog):
                exe = os.path.join(DEMO_DIR, prog)
                trace = self.path("t.std")
                v, p = self.aerodrome(exe, demo_options(source) + PERTURB + " record=" + trace)
                # Both decide conflict serializability of the schedule that happened.
                self.assertEqual(v["aerodrome"] > 0, v["velodrome"] > 0, p.stderr)
                rc, checked = self.atomcheck(trace)
                self.assertEqual(rc, 1 if v["aerodrome"] else 0, p.stderr)
                self.assertEqual(bool(violations(checked)["aerodrome"]), v["aerodrome"] > 0)

    def test_fixed_twins_clean(self):
        for prog, source in PERTURB_DEMOS:
            with self.subTest(demo=prog):
                exe = os.path.join(DEMO_DIR, prog + "-fixed")
                for _ in range(3):
                    v, p = self.aerodrome(exe, demo_options(source) + PERTURB)
                    self.assertEqual(v, {"aerodrome": 0, "velodrome": 0}, p.stderr)
                    self.assertEqual(p.returncode, 0)  # the output depends on the schedule

    def test_summary_prints_seed(self):
        exe = os.path.join(DEMO_DIR, "counter-natural")
        p = run([exe], "atomic=increment schedule=perturb seed=777")
        self.assertRegex(p.stderr, r"(?m)^atomicity-rt: schedule=perturb seed=777: \d+ pauses? ")
        # Without seed=, one is chosen and printed, and passing it back is accepted.
        p = run([exe], "atomic=increment schedule=perturb")
        m = re.search(r"(?m)^atomicity-rt: schedule=perturb seed=(\d+): ", p.stderr)
        self.assertIsNotNone(m, p.stderr)
        p = run([exe], "atomic=increment schedule=perturb seed=" + m.group(1))
        self.assertIn("schedule=perturb seed=" + m.group(1) + ":", p.stderr)
        # The natural schedule prints no such line.
        p = run([exe], "atomic=increment")
        self.assertNotIn("schedule=", p.stderr)

    def test_bad_values_run_unchecked(self):
        # counter forces its interleaving (pipes), so its output is the same in every run:
        # a bad option changes nothing but the one line on stderr
        exe = os.path.join(DEMO_DIR, "counter")
        plain = run([exe])
        self.assertEqual((plain.stdout, plain.returncode), ("counter = 1\n", 0))
        for bad in ("schedule=random", "schedule=", "seed=-1", "seed=abc", "seed=",
                    "seed=18446744073709551616", "perturb_wait=0", "perturb_budget=x"):
            with self.subTest(option=bad):
                p = run([exe], "atomic=increment " + bad)
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertRegex(lines[0], r"^atomicity-rt: ATOMICITY_OPTIONS: .*running unchecked$")
                self.assertIn(bad.split("=")[0], lines[0])
                self.assertEqual((p.stdout, p.returncode), (plain.stdout, plain.returncode))


class Sync(Base):
    """Barriers, pthread_once, condition variables, semaphores and C11 atomics are recorded as
    acquire reads and release writes of the object (doc/tsan-rt.md, "Synchronization"). The
    programs are built without PIE so that `nm` gives the addresses the trace names (V<address>),
    and each forces its interleaving with the primitives themselves."""

    ATOMIC = {"phases": "phase_work", "flag_handoff": "producer,consumer",
              "handoffs": "put_item,take_item,fill,drain", "once": "use_table"}

    def program(self, name):
        """Build tests/tsan/programs/NAME.c; return the executable, its unchecked output and
        the trace variable of each global: {symbol: "V<decimal address>"}."""
        src = os.path.join(PROGRAMS, name + ".c")
        plain = self.path(name + "-plain")
        subprocess.run([CLANG, "-O1", src, "-o", plain, "-pthread"], check=True)
        exe = self.build(src, name, RECOMMENDED + ["-fno-pie", "-no-pie"])
        nm = subprocess.run(["nm", exe], stdout=subprocess.PIPE, universal_newlines=True,
                            check=True).stdout
        var = {}
        for line in nm.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "bBdD":
                var[f[2]] = "V%d" % int(f[0], 16)
        return exe, plain, var

    def record(self, name, args=()):
        """Run NAME checked by aerodrome and velodrome with a recording: they report nothing,
        the output is that of an unchecked run, no event is rejected, and atomcheck reads the
        recording back to the same verdict. Returns the trace as (thread, op, arg) tuples and
        the variables."""
        exe, plain, var = self.program(name)
        expected = run([plain] + list(args))
        trace = self.path(name + ".std")
        p, doc = self.json_report([exe] + list(args), "atomic=%s checkers=aerodrome,velodrome "
                                  "record=%s" % (self.ATOMIC[name], trace))
        self.assertEqual((p.stdout, p.returncode), (expected.stdout, expected.returncode), p.stderr)
        self.assertEqual(doc["rejected"], 0, p.stderr)
        self.assertEqual(violations(doc), {"aerodrome": 0, "velodrome": 0}, p.stderr)
        rc, checked = self.atomcheck(trace)
        self.assertEqual(rc, 0)
        self.assertEqual(violations(checked), {"aerodrome": 0, "velodrome": 0})
        events = []
        with open(trace) as f:
            for line in f.read().splitlines():
                if not line or line.startswith("#"):  # comments and #name directives
                    continue
                t, op = line.split("|")[:2]
                m = re.match(r"([a-z.]+)(?:\((.*)\))?$", op)
                events.append((t, m.group(1), m.group(2)))
        return events, var

    def ops_on(self, events, v):
        return [(t, op) for t, op, arg in events if arg == v]

    def test_barrier_phases(self):
        for n in (2, 4):
            with self.subTest(threads=n):
                events, var = self.record("phases", [str(n)])
                ops = self.ops_on(events, var["barrier"])
                # PHASES = 4 waits per worker: arrival r.acq + w.rel, departure r.acq
                self.assertEqual(len(ops), 4 * n * 3)
                self.assertEqual({op for _, op in ops}, {"r.acq", "w.rel"})
                workers = sorted({t for t, _ in ops})
                self.assertEqual(len(workers), n)
                for w in workers:
                    mine = [op for t, op in ops if t == w]
                    self.assertEqual(mine, ["r.acq", "w.rel", "r.acq"] * 4)
                # A thread's k-th departure comes after the k-th arrival of every thread.
                count = {w: 0 for w in workers}
                arrived = 0
                for t, op in ops:
                    if op == "w.rel":
                        arrived += 1
                        continue
                    count[t] += 1
                    if count[t] % 2 == 0:  # the 2nd, 4th, ... r.acq: a departure
                        self.assertGreaterEqual(arrived, n * (count[t] // 2))

    def test_flag_handoff_atomics(self):
        events, var = self.record("flag_handoff")
        flag = self.ops_on(events, var["flag"])
        ops = {op for _, op in flag}
        self.assertEqual(ops, {"r.acq", "w.rel", "r"})
        # the producer's release store, then the consumer's successful acquire loads
        rel = [i for i, (_, op) in enumerate(flag) if op == "w.rel"][0]
        producer = flag[rel][0]
        self.assertIn("r.acq", [op for t, op in flag[rel:] if t not in (producer, "T0")])
        # main: a successful seq_cst compare-exchange (r.acq, w.rel), then a failed one whose
        # failure order is relaxed (a plain read)
        self.assertEqual([op for t, op in flag if t == "T0"], ["r.acq", "w.rel", "r"])
        # relaxed operations carry no flags; seq_cst read-modify-writes are both
        self.assertEqual({op for _, op in self.ops_on(events, var["stats"])}, {"r", "w"})
        done = [op for t, op in self.ops_on(events, var["done"]) if t != "T0"]
        self.assertEqual(done, ["r.acq", "w.rel"] * 2)

    def test_condition_variable_and_semaphore_handoffs(self):
        events, var = self.record("handoffs")
        # consumer T1 posts `waiting`, main waits for it
        self.assertEqual(self.ops_on(events, var["waiting"]), [("T1", "w.rel"), ("T0", "r.acq")])
        # main signals, the waiting consumer is woken
        self.assertEqual(self.ops_on(events, var["cond"]), [("T0", "w.rel"), ("T1", "r.acq")])
        self.assertEqual(self.ops_on(events, var["full"]), [("T0", "w.rel"), ("T1", "r.acq")])
        # waits that time out (or a trywait that fails) acquire nothing
        self.assertEqual(self.ops_on(events, var["never"]), [])
        self.assertEqual(self.ops_on(events, var["empty"]), [])
        # the mutex is still released and taken again around every wait
        mutex = [op for t, op, arg in events if arg == "L" + var["mutex"][1:]]
        self.assertEqual(mutex.count("acq"), mutex.count("rel"))

    def test_once(self):
        events, var = self.record("once")
        once = self.ops_on(events, var["once"])
        inner = self.ops_on(events, var["inner_once"])
        # one thread ran the init routine: it released the inner control, then the outer one
        self.assertEqual([op for _, op in once].count("w.rel"), 1)
        runner = next(t for t, op in once if op == "w.rel")
        self.assertEqual(inner, [(runner, "w.rel"), (runner, "r.acq")])
        self.assertLess(events.index((runner, "w.rel", var["inner_once"])),
                        events.index((runner, "w.rel", var["once"])))
        # every worker acquired the control after it was released
        self.assertEqual(once[0], (runner, "w.rel"))
        self.assertEqual(sorted(t for t, op in once[1:] if op == "r.acq"),
                         ["T1", "T2", "T3", "T4"])

    def test_predictive_checkers_quiet_on_barriers_and_flags(self):
        """The issue's acceptance test: the FFT-shaped program and the flag handoff give no
        predictive report, since barriers and release/acquire order their phases; nor do the
        condition-variable, semaphore and pthread_once programs."""
        for name, args in (("phases", ["2"]), ("phases", ["4"]), ("flag_handoff", []),
                           ("handoffs", []), ("once", [])):
            with self.subTest(program=name, args=args):
                exe, _, _ = self.program(name)
                p, doc = self.json_report([exe] + args, "atomic=%s checkers=commit-node,block,"
                                          "reduction" % self.ATOMIC[name])
                self.assertEqual(doc["rejected"], 0, p.stderr)
                self.assertEqual(violations(doc), {"commit-node": 0, "block": 0, "reduction": 0},
                                 p.stderr)


class Owned(Base):
    """Memory one thread owns skips the event lock (doc/tsan-rt.md, "How events are ordered")."""

    def setUp(self):
        super().setUp()
        self.exe = self.build(os.path.join(PROGRAMS, "owned.c"), "owned")
        self.opts = "atomic=checked,sum_up checkers=aerodrome,velodrome"

    def test_write_to_owned_memory_is_ordered_before_its_publication(self):
        # A's write of x, to memory only A had touched, closes the cycle through checked():
        # found with the owned path on and off alike.
        for owned in ("yes", "no"):
            with self.subTest(owned=owned):
                p, doc = self.json_report([self.exe, "publish"],
                                          self.opts + " owned=" + owned, timeout=30)
                self.assertEqual(p.stdout, "x = 2, sink = 2\n")
                self.assertEqual(violations(doc), {"aerodrome": 1, "velodrome": 1}, doc)
                self.assertIn("checked", functions(doc))

    def test_private_memory_pushes_almost_no_events(self):
        # 2 threads x 1000 rounds x 64 words, a read and a write each: 256000 accesses, all to
        # memory one thread owns, with no synchronization in between; only the first round's
        # (and sum_up's) are pushed.
        counts = {}
        for owned, skip in (("yes", "no"), ("no", "no"), ("no", "yes")):
            p, doc = self.json_report([self.exe], self.opts + " owned=%s skip_idle=%s" % (owned, skip),
                                      timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(violations(doc), {"aerodrome": 0, "velodrome": 0})
            counts[owned, skip] = doc["events"]
        self.assertLess(counts["yes", "no"], 1000, counts)
        self.assertGreater(counts["no", "no"], 256000, counts)
        # No transaction is open while the threads run: with skip_idle=yes none of their
        # accesses is recorded.
        self.assertLess(counts["no", "yes"], 1000, counts)
        # verbosity=2 says how many accesses were left out, and why.
        p = run([self.exe], self.opts + " verbosity=2")
        m = re.search(r"accesses not recorded: (\d+) made while no transaction was open "
                      r"\(skip_idle\), (\d+) repeats", p.stderr)
        self.assertTrue(m, p.stderr)
        self.assertGreater(int(m.group(1)), 255000, p.stderr)

    def test_skip_idle_only_for_serializability_checkers(self):
        # A predictive checker reasons about other orders of the events: every access is kept.
        p, doc = self.json_report([self.exe], "atomic=checked,sum_up owned=no "
                                  "checkers=aerodrome,commit-node", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreater(doc["events"], 256000)

    def test_violation_found_with_skip_idle_on_and_off(self):
        # The publication test's cycle lies inside checked(): skip_idle leaves it whole.
        for skip in ("yes", "no"):
            with self.subTest(skip_idle=skip):
                p, doc = self.json_report([self.exe, "publish"],
                                          self.opts + " owned=yes skip_idle=" + skip, timeout=30)
                self.assertEqual(violations(doc), {"aerodrome": 1, "velodrome": 1}, doc)

if __name__ == "__main__":
    names = sys.argv[1:]
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    for n in names or ["Demos", "EntryPoints", "Behaviour", "Options", "AbnormalEnds", "PkgConfig",
                       "Perturb", "Sync", "Names"]:
        suite.addTests(loader.loadTestsFromName(n, sys.modules[__name__]))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
