"""python -m atomicity run / check: scripts written here, run in a child interpreter.

Interleavings are forced with untraced _thread locks used as gates.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest
import weakref

import helpers
import atomicity
from atomicity import _recorder

# A balance read and written in two steps by two threads; the gates put the other thread's
# whole withdrawal between them. The gates are _thread locks, which the run does not record:
# a threading.Barrier inside the transaction would make it non-atomic through the barrier's
# own lock, in an order that depends on the schedule. WITHDRAW is replaced by each variant.
BANK = textwrap.dedent("""\
    import _thread, threading
    import atomicity

    class Account:
        def __init__(self):
            self.balance = 100

    acct = Account()
    go, done = _thread.allocate_lock(), _thread.allocate_lock()
    go.acquire(); done.acquire()

    WITHDRAW

    def other():
        go.acquire()
        withdraw(10, False)
        done.release()

    t = threading.Thread(target=other)
    t.start()
    withdraw(5, True)
    t.join()
    print("balance", acct.balance)
    """)

BODY = """\
    b = acct.balance
    if wait:
        go.release(); done.acquire()
    acct.balance = b - n
"""


def line_of(text, needle):
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError("%r not in the script" % needle)


class RunBase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def tool(self, *args):
        """Run the CLI in the test's directory; (status, stdout, stderr)."""
        cmd = [sys.executable, "-m", "atomicity"] + list(args)
        p = subprocess.run(cmd, cwd=self.dir.name, capture_output=True, text=True, timeout=30)
        return p.returncode, p.stdout, p.stderr

    def json_reports(self, *args):
        status, out, err = self.tool("run", "--format", "json", "--report", "out.json", *args)
        self.assertEqual(status, 0, err)
        with open(os.path.join(self.dir.name, "out.json")) as f:
            doc = json.load(f)
        return doc, out, err


class TestProgramUnchanged(RunBase):
    def test_stdout_and_status_zero(self):
        self.write("hello.py", "print('hello')\nprint('world')\n")
        status, out, err = self.tool("run", "hello.py")
        self.assertEqual((status, out), (0, "hello\nworld\n"))
        self.assertIn("aerodrome: no violations", err)

    def test_sys_exit_status(self):
        self.write("three.py", "import sys\nprint('x')\nsys.exit(3)\n")
        status, out, _ = self.tool("run", "three.py")
        self.assertEqual((status, out), (3, "x\n"))
        self.write("msg.py", "import sys\nsys.exit('bad thing')\n")
        status, _, err = self.tool("run", "msg.py")
        self.assertEqual(status, 1)
        self.assertIn("bad thing", err)

    def test_uncaught_exception(self):
        self.write("boom.py", "def f():\n    raise ValueError('boom')\nf()\n")
        status, out, err = self.tool("run", "boom.py")
        self.assertEqual((status, out), (1, ""))
        self.assertIn('Traceback (most recent call last):\n  File "boom.py", line 3', err)
        self.assertIn("ValueError: boom", err)
        self.assertNotIn("runpy", err)
        self.assertNotIn("_cli.py", err)

    def test_arguments_and_double_dash(self):
        self.write("args.py", "import sys\nprint(sys.argv)\n")
        status, out, _ = self.tool("run", "args.py", "-c", "x", "--format", "y")
        self.assertEqual((status, out), (0, "['args.py', '-c', 'x', '--format', 'y']\n"))
        status, out, _ = self.tool("run", "-c", "velodrome", "--", "args.py", "--", "z")
        self.assertEqual((status, out), (0, "['args.py', '--', 'z']\n"))

    def test_usage_errors(self):
        self.assertEqual(self.tool("run")[0], 2)
        self.assertEqual(self.tool("run", "--format", "json", "x.py")[0], 2)
        self.assertEqual(self.tool("frobnicate")[0], 2)
        status, _, err = self.tool("run", "missing.py")
        self.assertEqual(status, 2)
        self.assertIn("missing.py", err)
        self.write("a.py", "pass\n")
        status, _, err = self.tool("run", "-c", "nosuch", "a.py")
        self.assertEqual(status, 2)
        self.assertIn("nosuch", err)

    def test_max_events(self):
        script = BANK.replace("WITHDRAW", "@atomicity.atomic\ndef withdraw(n, wait):\n" + BODY)
        self.write("bank.py", script)
        status, out, err = self.tool("run", "--max-events", "3", "bank.py")
        self.assertEqual((status, out), (0, "balance 95\n"))
        cut = "recording stopped after 3 events (--max-events)"
        # the text report (on stderr) marks its input, as every other format does
        self.assertIn("input: INCOMPLETE, cut short: " + cut + "\n", err)
        self.assertIn("atomicity: " + cut + ": only the start of the run was checked", err)
        docs = {}
        for fmt in ("json", "sarif", "html"):
            status, out, err = self.tool("run", "--max-events", "3", "--format", fmt,
                                         "--report", "out." + fmt, "bank.py")
            self.assertEqual((status, out), (0, "balance 95\n"), err)
            with open(os.path.join(self.dir.name, "out." + fmt), encoding="utf-8") as f:
                docs[fmt] = f.read()
        self.assertEqual(json.loads(docs["json"])["cut_short"], cut)
        self.assertEqual(json.loads(docs["json"])["events"], 3)
        inv = json.loads(docs["sarif"])["runs"][0]["invocations"][0]
        self.assertFalse(inv["executionSuccessful"])
        self.assertIn("input: INCOMPLETE, cut short: " + cut,
                      [n["message"]["text"] for n in inv["toolExecutionNotifications"]])
        self.assertIn('<p class="cut-short" id="cut-short"><strong>INCOMPLETE input</strong>, '
                      "cut short: " + cut, docs["html"])
        # without the bound, or under it, nothing is cut
        doc, _, err = self.json_reports("--max-events", "100000", "bank.py")
        self.assertIsNone(doc["cut_short"])
        self.assertNotIn("recording stopped", err)


# A violation found before the program ends abruptly: the gates force the other thread's
# increment between the read and the write of the main thread's transaction.
ABRUPT = textwrap.dedent("""\
    import _thread, os, signal, sys, threading, time
    import atomicity

    class Counter:
        def __init__(self):
            self.value = 0

    c = Counter()
    go, done = _thread.allocate_lock(), _thread.allocate_lock()
    go.acquire(); done.acquire()

    @atomicity.atomic
    def inc(wait):
        v = c.value
        if wait:
            go.release(); done.acquire()
        c.value = v + 1

    def other():
        go.acquire()
        inc(False)
        done.release()

    t = threading.Thread(target=other)
    t.start()
    inc(True)
    t.join()
    print("value", c.value)
    sys.stdout.flush()
    END
    time.sleep(30)
    print("not reached")
    """)


class TestAbruptEnd(RunBase):
    """The reports are written however the program ends, and its status is kept."""

    def run_ending(self, end, status, *options):
        self.write("abrupt.py", ABRUPT.replace("END", end))
        got, out, err = self.tool("run", *options, "abrupt.py")
        self.assertEqual((got, out), (status, "value 1\n"), err)  # a lost update
        return err

    def assert_reported(self, err):
        self.assertIn("aerodrome: conflict-cycle", err)
        self.assertIn("Counter.value", err)
        self.assertEqual(err.count("aerodrome: 1 violation"), 1, err)  # written once

    def test_sigterm(self):
        err = self.run_ending("os.kill(os.getpid(), signal.SIGTERM)", -signal.SIGTERM)  # 143 in a shell
        self.assert_reported(err)

    def test_sighup_json_report(self):
        self.run_ending("os.kill(os.getpid(), signal.SIGHUP)", -signal.SIGHUP, "--format", "json",
                        "--report", "out.json")
        with open(os.path.join(self.dir.name, "out.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["checkers"][0]["violations"], 1)

    def test_os_exit(self):
        self.assert_reported(self.run_ending("os._exit(4)", 4))

    def test_os_exit_from_a_thread(self):
        end = "threading.Thread(target=os._exit, args=(5,)).start()"
        self.assert_reported(self.run_ending(end, 5))

    def test_keyboard_interrupt(self):
        err = self.run_ending("os.kill(os.getpid(), signal.SIGINT)", 130)
        self.assertIn("KeyboardInterrupt", err)
        self.assert_reported(err)

    def test_own_handler_wins(self):
        # The program's handler replaces the tool's: it exits through SystemExit, and the
        # reports are written on that path.
        end = ("signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))\n"
               "os.kill(os.getpid(), signal.SIGTERM)")
        self.assert_reported(self.run_ending(end, 7))

    def test_fork_child_writes_nothing(self):
        if not hasattr(os, "fork"):
            self.skipTest("no fork")
        end = ("pid = os.fork()\n"
               "if pid == 0:\n"
               "    os._exit(0)\n"
               "os.waitpid(pid, 0)\n"
               "os._exit(3)")
        self.assert_reported(self.run_ending(end, 3))


class TestBounds(RunBase):
    def test_max_objects(self):
        # Each dict is a temporary that cannot be weakly referenced: the run keeps it alive
        # (its id() must stay its own), so a bound on them bounds the run's memory.
        self.write("temps.py", textwrap.dedent("""\
            total = 0
            for i in range(50):
                d = {}
                d[i] = i
                total += d[i]
            print(total)
            """))
        status, out, err = self.tool("run", "--max-objects", "10", "--format", "json",
                                     "--report", "out.json", "temps.py")
        self.assertEqual((status, out), (0, "1225\n"), err)
        with open(os.path.join(self.dir.name, "out.json")) as f:
            doc = json.load(f)
        self.assertRegex(doc["cut_short"], r"^recording stopped after [0-9]+ events "
                         r"\(--max-objects: 10 objects kept alive\)$")
        self.assertIn("atomicity: " + doc["cut_short"] + ": only the start", err)
        cut_events = doc["events"]
        doc, _, err = self.json_reports("--max-objects", "0", "temps.py")
        self.assertIsNone(doc["cut_short"])
        # about 10 events an iteration: cut in the 11th of 50
        self.assertLess(cut_events, doc["events"] / 3)
        status, _, err = self.tool("run", "--max-objects", "-1", "temps.py")
        self.assertEqual(status, 2)
        self.assertIn("--max-objects must be 0 or more", err)


class TestNames(RunBase):
    def test_shared_container_named(self):
        # Check-then-act on a dict shared by two threads; the container gets the name of the
        # variable that holds it, in the report's variables and events.
        script = textwrap.dedent("""\
            import _thread, threading
            import atomicity

            cache = {}
            go, done = _thread.allocate_lock(), _thread.allocate_lock()
            go.acquire(); done.acquire()

            @atomicity.atomic
            def fill(value, wait):
                if "k" not in cache:
                    if wait:
                        go.release(); done.acquire()
                    cache["k"] = value

            def other():
                go.acquire()
                fill(2, False)
                done.release()

            for i in range(20):  # temporaries of one thread: never named
                tmp = {i: i}
            t = threading.Thread(target=other)
            t.start()
            fill(1, True)
            t.join()
            print(cache["k"])
            """)
        self.write("cache.py", script)
        doc, out, _ = self.json_reports("cache.py")
        self.assertEqual(out, "1\n")
        reports = doc["checkers"][0]["reports"]
        self.assertTrue(reports)
        names = set()
        for r in reports:
            names.update(r["variables"])
            names.update(e.get("target") for e in r["events"])
        self.assertIn("cache['k']", names)
        self.assertFalse([n for n in names if n and ("dict" in n or n.startswith("0x"))],
                         names)
        status, _, err = self.tool("run", "cache.py")
        self.assertIn("cache['k']", err)


class TestReports(RunBase):
    def check_bank(self, doc, script, begin_needle, write_needle='acct.balance = b - n'):
        reports = doc["checkers"][0]["reports"]
        data = [r for r in reports if "Account.balance" in r["message"]]
        self.assertTrue(data, reports)
        begins = {(t["thread"], t["begin_at"]) for t in data[0]["transactions"]}
        at = "withdraw at bank.py:%d" % line_of(script, begin_needle)
        self.assertIn(("MainThread", at), begins)
        self.assertIn(("Thread-1 (other)", at), begins)
        writes = {e["at"] for e in data[0]["events"] if e["kind"] == "write"}
        self.assertEqual(writes, {"withdraw at bank.py:%d" % line_of(script, write_needle)})

    def test_decorator(self):
        script = BANK.replace("WITHDRAW",
                              "@atomicity.atomic\ndef withdraw(n, wait):\n" + BODY)
        self.write("bank.py", script)
        doc, out, _ = self.json_reports("bank.py")
        self.assertEqual(out, "balance 95\n")
        self.check_bank(doc, script, "def withdraw")

    def test_option_atomic(self):
        script = BANK.replace("WITHDRAW", "def withdraw(n, wait):\n" + BODY)
        self.write("bank.py", script)
        doc, _, err = self.json_reports("--atomic", "bank:withdraw", "bank.py")
        self.check_bank(doc, script, "def withdraw")
        self.assertNotIn("no such function", err)

    def test_module(self):
        # -m MODULE runs a module of a package as python -m does (the working directory first
        # on sys.path, sys.argv[0] its file); --atomic names it by its dotted name.
        script = BANK.replace("WITHDRAW", "def withdraw(n, wait):\n" + BODY)
        script = script.replace('print("balance", acct.balance)',
                                'print("balance", acct.balance, sys.argv[1:])')
        script = script.replace("import _thread, threading", "import _thread, sys, threading")
        os.mkdir(os.path.join(self.dir.name, "bankpkg"))
        self.write(os.path.join("bankpkg", "__init__.py"), "")
        self.write(os.path.join("bankpkg", "bank.py"), script)
        doc, out, err = self.json_reports("--atomic", "bankpkg.bank:withdraw",
                                          "-m", "bankpkg.bank", "x", "-c")
        self.assertEqual(out, "balance 95 ['x', '-c']\n")
        self.assertEqual(doc["file"], "-m bankpkg.bank")
        reports = doc["checkers"][0]["reports"]
        self.assertTrue(reports, err)
        at = {t["begin_at"] for t in reports[0]["transactions"]}
        self.assertEqual(at, {"withdraw at %s:%d" % (os.path.join("bankpkg", "bank.py"),
                                                     line_of(script, "def withdraw"))})
        status, _, err = self.tool("run", "-m", "nosuchmodule")
        self.assertEqual(status, 2)
        self.assertIn("no module named nosuchmodule", err)

    def test_with_block(self):
        body = "    with atomicity.atomic():\n" + textwrap.indent(BODY, "    ")
        script = BANK.replace("WITHDRAW", "def withdraw(n, wait):\n" + body)
        self.write("bank.py", script)
        doc, _, _ = self.json_reports("bank.py")
        self.check_bank(doc, script, "with atomicity.atomic()")

    def test_locked_program_reports_nothing(self):
        # Both withdrawals hold the lock throughout, and the threads run in any order (no
        # gates): no order may be reported.
        body = "    with lock:\n" + textwrap.indent(BODY, "    ")
        script = BANK.replace("WITHDRAW", "lock = threading.Lock()\n\n"
                              "@atomicity.atomic\ndef withdraw(n, wait):\n" + body)
        script = script.replace("go.release(); done.acquire()", "pass")
        script = script.replace("    go.acquire()\n", "").replace("    done.release()\n", "")
        self.write("bank.py", script)
        doc, out, _ = self.json_reports("bank.py")
        self.assertEqual(out, "balance 85\n")
        self.assertEqual(doc["checkers"][0]["violations"], 0, doc)
        self.assertEqual(doc["rejected"], 0)

    def test_rlock_condition_queue(self):
        # Condition over an RLock (wait releases every level), Semaphore, Event and Queue
        # build on the wrapped locks: the run must push only well-formed events.
        script = "import threading\n" + textwrap.dedent("""\
            import queue
            r = threading.RLock()
            cond = threading.Condition(r)
            ready = []
            q = queue.Queue()
            sem = threading.Semaphore(0)
            ev = threading.Event()

            def consumer():
                with cond:
                    with r:
                        while not ready:
                            cond.wait()
                q.put(1)
                sem.release()
                ev.set()

            t = threading.Thread(target=consumer)
            t.start()
            with cond:
                ready.append(1)
                cond.notify()
            print(q.get(), sem.acquire(timeout=5), ev.wait(5))
            t.join()
            """)
        self.write("sync.py", script)
        doc, out, err = self.json_reports("sync.py")
        self.assertEqual(out, "1 True True\n")
        self.assertEqual(doc["rejected"], 0, err)
        self.assertNotIn("not a possible execution", err)


    def test_pool_hand_over_predictive(self):
        # Work handed to a ThreadPoolExecutor (through queue.SimpleQueue) and results back
        # (through futures): the hand-overs are recorded, so the predictive checkers, which
        # consider every order the recorded synchronization allows, report nothing; and they
        # are attached with lock_blocks=no, so the pool's own lock blocks are no transactions.
        script = textwrap.dedent("""\
            from concurrent.futures import ThreadPoolExecutor
            import queue, threading
            import atomicity

            class Job:
                def __init__(self, n):
                    self.n = n
                    self.result = None

            @atomicity.atomic
            def work(job):
                job.result = job.n * job.n
                return job

            with ThreadPoolExecutor(max_workers=3) as ex:
                # Jobs made one by one as they are submitted, most after the workers started.
                done = list(ex.map(work, (Job(i) for i in range(12))))
            q = queue.Queue()
            @atomicity.atomic
            def consumer():
                job = q.get()
                job.result += 1
            t = threading.Thread(target=consumer)
            t.start()
            job = Job(5)
            job.result = 1
            q.put(job)
            t.join()
            print(sum(j.result for j in done), job.result)
            """)
        self.write("pool.py", script)
        doc, out, err = self.json_reports("-c", "commit-node", "-c", "block", "pool.py")
        self.assertEqual(out, "506 2\n")
        self.assertEqual([c["spec"] for c in doc["checkers"]],
                         ["commit-node:lock_blocks=no", "block:lock_blocks=no"])
        for c in doc["checkers"]:
            self.assertEqual(c["violations"], 0, json.dumps(c["reports"])[:3000])
        self.assertEqual(doc["rejected"], 0, err)


class TestCheck(RunBase):
    def test_corpus_trace(self):
        path = helpers.corpus("aerodrome-rho2.std")
        status, out, _ = self.tool("check", path)
        self.assertEqual(status, 1)
        self.assertIn("aerodrome: conflict-cycle at event 5", out)
        status, out, _ = self.tool("check", "-c", "velodrome", "--format", "json", path)
        self.assertEqual(status, 1)
        self.assertEqual(json.loads(out)["checkers"][0]["name"], "velodrome")

    def test_missing_file(self):
        status, out, err = self.tool("check", "nonexistent.std")
        self.assertEqual((status, out), (2, ""))
        self.assertIn("nonexistent.std", err)


class TestCheckAsAtomcheck(RunBase):
    """python -m atomicity check gives atomcheck's output and exit status."""

    def setUp(self):
        super().setUp()
        # The build's atomcheck: <build>/lib/libatomicity.so.1 -> <build>/examples/atomcheck.
        build = os.path.dirname(os.path.dirname(os.environ.get("ATOMICITY_LIBRARY", "")))
        self.atomcheck = os.path.join(build, "examples", "atomcheck", "atomcheck")
        if not os.path.exists(self.atomcheck):
            self.skipTest("no atomcheck next to the library")

    def both(self, *args, stdin=None):
        """(status, JSON-without-'tool') of atomcheck and of check, for the same arguments."""
        got = []
        for cmd in ([self.atomcheck], [sys.executable, "-m", "atomicity", "check"]):
            p = subprocess.run(cmd + list(args), cwd=self.dir.name, capture_output=True,
                               input=stdin, timeout=30)
            doc = json.loads(p.stdout) if p.stdout.startswith(b"{") else p.stdout
            if isinstance(doc, dict):
                doc.pop("tool")
            got.append((p.returncode, doc))
        self.assertEqual(got[0], got[1])
        return got[0]

    def test_same_json_and_status(self):
        seen = set()
        for name in ("aerodrome-rho2", "aerodrome-rho1", "ws-ex13", "tso-store-buffering"):
            for checker in ("aerodrome", "velodrome", "commit-node"):
                status, _ = self.both("-c", checker, "--format", "json",
                                      helpers.corpus(name + ".std"))
                seen.add(status)
        self.assertEqual(seen, {0, 1})

    def test_stdin_quiet_empty_max_reports(self):
        with open(helpers.corpus("aerodrome-rho2.std"), "rb") as f:
            trace = f.read()
        status, doc = self.both("--format", "json", "-", stdin=trace)
        self.assertEqual((status, doc["file"]), (1, "-"))
        self.assertEqual(self.both("-q", "-", stdin=trace), (1, b""))
        status, doc = self.both("--format", "json", "--max-reports", "0", "-", stdin=trace)
        self.assertEqual((status, doc["checkers"][0]["reports"]), (1, []))
        self.assertEqual(self.both("-", stdin=b"")[0], 2)
        self.assertEqual(self.both("--allow-empty", "--format", "json", "-", stdin=b"")[0], 0)

    def test_baseline_suppressions_dot(self):
        trace = helpers.corpus("aerodrome-rho2.std")
        _, doc = self.both("--format", "json", trace)
        self.write("old.json", json.dumps(doc))
        status, doc = self.both("--format", "json", "--baseline", "old.json", trace)
        self.assertEqual((status, doc["checkers"][0]["baselined"]), (0, 1))
        self.write("rules.txt", "kind:conflict-cycle\n")
        status, doc = self.both("--format", "json", "--suppressions", "rules.txt", trace)
        self.assertEqual((status, doc["checkers"][0]["suppressed"]), (0, 1))
        self.write("bad.txt", "nonsense\n")
        self.assertEqual(self.both("--suppressions", "bad.txt", trace)[0], 2)
        status, dot = self.both("--format", "dot", trace)
        self.assertEqual(status, 1)
        self.assertTrue(dot.startswith(b"digraph") or b"digraph" in dot, dot[:200])


class TestRecorder(unittest.TestCase):
    """The sink, called directly."""

    def setUp(self):
        self.session = atomicity.Session(["aerodrome"])
        self.addCleanup(self.session.close)
        self.rec = _recorder.Recorder(self.session, script=__file__)
        self.code = sys._getframe().f_code

    def name(self, var):
        return self.session.get_name("var", var)

    def test_names(self):
        class Account:
            pass
        rec, code = self.rec, sys._getframe().f_code
        a, b = Account(), Account()
        rec.attr(True, a, "balance", code, 1)
        rec.name_variables()
        self.assertEqual(self.name(1), "Account.balance")
        rec.attr(True, b, "balance", code, 1)  # a second Account: both get numbers
        rec.name_variables([2])
        self.assertEqual((self.name(1), self.name(2)), ("Account.balance", "Account#2.balance"))
        rec.name_variables([1])  # named once only: what was named stays
        self.assertEqual(self.name(1), "Account.balance")
        cache = {}
        rec.item(True, cache, "k", code, 1)
        rec.item(True, cache, _recorder.LENGTH, code, 1)
        rec.item(False, cache, "k", code, 2)
        rec.glob(True, globals(), "x", code, 1)
        rec.close()
        self.assertEqual(rec.events, 6)
        self.assertIsNone(self.name(3))  # in no report: never named
        rec.name_variables()
        # cache: a container named when a second thread touches it; of one thread only,
        # it keeps its type's name
        self.assertEqual((self.name(3), self.name(4), self.name(5)),
                         ("dict['k']", "len(dict)", "test_run.x"))

    def test_numbering(self):
        class Account:
            pass
        rec, code = self.rec, self.code
        accounts = [Account() for _ in range(3)]
        for acc in accounts:
            rec.attr(True, acc, "balance", code, 1)
        rec.name_variables()
        self.assertEqual([self.name(v) for v in (1, 2, 3)],
                         ["Account#1.balance", "Account#2.balance", "Account#3.balance"])

    def test_shared_container_named_by_second_thread(self):
        rec, code = self.rec, self.code
        cache = {}
        rec.item(True, cache, "k", code, 1)          # the main thread

        def other():  # the name is looked up in the frame of the second thread's access
            rec.item(False, cache, "k", sys._getframe().f_code, 2)
        t = threading.Thread(target=other)
        t.start()
        t.join()
        rec.name_variables()
        self.assertEqual(self.name(1), "cache['k']")

    def test_value_and_identity_keys(self):
        rec, code = self.rec, self.code
        d = {}
        rec.item(True, d, 1, code, 1)
        rec.item(True, d, True, code, 1)   # d[1] and d[True] are one item
        rec.item(True, d, (1, "a"), code, 1)
        rec.item(True, d, (1, "a"), code, 1)
        key = object()
        rec.item(True, d, key, code, 1)
        self.assertEqual(rec.variables, 3)
        self.assertEqual(rec.pinned, 2)  # the dict and the key taken by identity

    def test_freed_object_is_a_new_variable(self):
        class Box:
            pass
        rec, code = self.rec, self.code
        box = Box()
        rec.attr(True, box, "v", code, 1)
        ref = weakref.ref(box)
        del box
        self.assertIsNone(ref())
        # Whatever id() the next objects get, none may reuse the dead one's key.
        for _ in range(20):
            rec.attr(True, Box(), "v", code, 1)
        self.assertEqual(rec.variables, 21)

    def test_unreported_variables_are_not_named(self):
        calls = []
        real = self.session.set_name

        def counting(space, key, name):
            calls.append((space, key, name))
            return real(space, key, name)
        self.session.set_name = counting
        rec, code = self.rec, self.code
        for i in range(100):
            rec.item(True, {}, i, code, 1)
            rec.attr(True, rec, "x%d" % i, code, 2)
        rec.glob(True, globals(), "y", code, 3)
        reports = rec.close()
        self.assertEqual(reports, [])
        self.assertEqual(rec.variables, 201)
        self.assertEqual([c for c in calls if c[0] == 2], [])

    def test_wants_code(self):
        self.assertTrue(self.rec.wants_code(self.code))
        self.assertFalse(self.rec.wants_code(threading.Thread.start.__code__))
        self.assertFalse(self.rec.wants_code(_recorder.Recorder.attr.__code__))
        self.assertFalse(self.rec.wants_code(compile("1", "<string>", "eval")))

    def test_atomic_specs(self):
        session = atomicity.Session(["aerodrome"])
        self.addCleanup(session.close)
        rec = _recorder.Recorder(session, script="/x/bank.py", atomic=["bank:withdraw"])
        def withdraw():
            pass
        code = withdraw.__code__.replace(co_name="withdraw", co_qualname="withdraw") \
            if hasattr(withdraw.__code__, "co_qualname") else withdraw.__code__
        self.assertTrue(rec.is_atomic(code, "__main__"))
        self.assertTrue(rec.is_atomic(code, "bank"))
        self.assertFalse(rec.is_atomic(code, "other"))
        with self.assertRaises(ValueError):
            _recorder.Recorder(session, atomic=["nocolon"])


class TestAtomicOutsideRun(unittest.TestCase):
    def test_noop(self):
        @atomicity.atomic
        def f(x):
            """doc"""
            return x + 1
        self.assertEqual((f(1), f.__name__, f.__doc__), (2, "f", "doc"))
        with atomicity.atomic():
            pass
        with self.assertRaises(TypeError):
            atomicity.atomic(3)


if __name__ == "__main__":
    unittest.main()
