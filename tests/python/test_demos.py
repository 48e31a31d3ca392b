"""The demos of examples/python: each runs as a plain program and prints its outcome (the
buggy ones show the bug, their fixed twins and the control do not); under
`python -m atomicity run` each buggy demo is reported with its function, file and the lines of
its conflicting accesses, and the fixed twins and the control are reported clean.

The demos force their interleaving with gates made of raw _thread locks (which the run does not
record), so every run takes the same path and the reports are about the demo's own data; the
hit counter (hits.py) is not forced, and only the predictive checkers, which report it from any
run, are asked about it.
The lines of the accesses are found through the `# access: NAME` comments of the demos.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from helpers import ROOT, BINDING


DEMOS = os.path.join(ROOT, "examples", "python")
TIMEOUT = 120

# One table of expectations. For each demo: the --atomic declarations it needs, a regular
# expression its stdout must match (the outcome it prints), and for a buggy demo what the FIRST
# report of each checker in CHECKERS must be: its transactions are all calls of "function", it
# names exactly the variables "variables" (none for a cycle through a lock alone), and every
# event of it lies on a line marked `# access: NAME` with NAME in "markers" (the line of every
# marker in "required" is among them). A demo without "function" must report nothing.
EXPECT = {
    "cache.py": dict(atomic=["cache:get_or_compute"],
                     stdout=r"^'greeting' was computed 2 time\(s\): first, second$",
                     function="get_or_compute", variables=["cache['greeting']"],
                     markers=["check", "act"], required=["check", "act"]),
    "cache_fixed.py": dict(atomic=["cache_fixed:get_or_compute"],
                           stdout=r"^'greeting' was computed 1 time\(s\): first$"),
    # A cycle through the bank's lock: transfer released it after the withdrawal, the audit
    # took and released it, transfer took it again for the deposit.
    "bank.py": dict(stdout=r"^the audit saw a total of 50 \(the bank holds 100\)$",
                    function={"transfer", "audit"}, variables=[],
                    markers=["withdraw-lock", "audit-lock", "deposit-lock"],
                    required=["withdraw-lock", "audit-lock", "deposit-lock"]),
    "bank_fixed.py": dict(stdout=r"^the audit saw a total of 100 \(the bank holds 100\)$"),
    # The same through the counter's lock, between the step that reads and the one that writes.
    "counter.py": dict(stdout=r"^2 increments, the counter holds 1$",
                       function="Counter.increment", variables=[],
                       markers=["read-lock", "write-lock"], required=["read-lock", "write-lock"]),
    "counter_fixed.py": dict(stdout=r"^2 increments, the counter holds 2$"),
    "lazy_init.py": dict(atomic=["lazy_init:get_config"],
                         stdout=r"^the configuration was loaded 2 time\(s\); "
                                r"the threads hold two different objects$",
                         function="get_config", variables=["_config"],
                         markers=["check", "init"], required=["check", "init"]),
    "lazy_init_fixed.py": dict(atomic=["lazy_init_fixed:get_config"],
                               stdout=r"^the configuration was loaded 1 time\(s\); "
                                      r"the threads hold one object$"),
    # Not forced: the calls seldom overlap, so only the predictive checkers are asked (they
    # judge the other orders of the same accesses, and report it in every run).
    "hits.py": dict(atomic=["hits:count_hit"], stdout=r"^\d+ hits counted of 120$",
                    function="count_hit", markers=["read", "write"], predictive_only=True),
    "hits_fixed.py": dict(atomic=["hits_fixed:count_hit"],
                          stdout=r"^120 hits counted of 120$"),
    "queue_control.py": dict(stdout=r"^20 of 20 jobs handled, every result right: True$"),
}

# Checkers the tool runs with: None is the default (aerodrome). The first report of each must
# be the one the table describes. The predictive checkers may report another witness of the
# same bug first (test_predictive checks them more loosely).
CHECKERS = [None, "velodrome"]
PREDICTIVE = ["commit-node", "block"]


def source(demo):
    with open(os.path.join(DEMOS, demo), encoding="utf-8") as f:
        return f.read()


def marker_lines(demo):
    """{marker: line} of the `# access: NAME` comments of a demo."""
    lines = {}
    for number, text in enumerate(source(demo).splitlines(), start=1):
        m = re.search(r"#\s*access:\s*([\w-]+)", text)
        if m:
            lines[m.group(1)] = number
    return lines


def environment():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [BINDING, env.get("PYTHONPATH", "")] if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(argv):
    return subprocess.run(argv, cwd=DEMOS, env=environment(), capture_output=True,
                          text=True, timeout=TIMEOUT)


def frames(item):
    """(function, file, line) of the headline frame of a JSON event or transaction."""
    stack = item.get("stack")
    if stack:
        top = stack[0]
        return top.get("function"), top.get("file"), top.get("line")
    at = item.get("at") or item.get("begin_at") or ""
    m = re.match(r"^(.*) at (.*):(\d+)$", at)
    if m:
        return m.group(1), m.group(2), int(m.group(3))
    return None, None, None


def in_demo(file, demo):
    return file is not None and os.path.basename(file) == demo


class PlainRuns(unittest.TestCase):
    """Without the tool: the demo's own outcome, the bug visible or not."""

    def test_outcomes(self):
        for demo, expect in EXPECT.items():
            with self.subTest(demo=demo):
                r = run([sys.executable, demo])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertRegex(r.stdout.strip(), expect["stdout"])
                self.assertEqual(r.stderr, "")

    def test_markers(self):
        for demo, expect in EXPECT.items():
            with self.subTest(demo=demo):
                lines = marker_lines(demo)
                for marker in expect.get("markers", []):
                    self.assertIn(marker, lines)


class ToolRuns(unittest.TestCase):
    """Under `python -m atomicity run --format json --report FILE`."""

    python = sys.executable

    def run_json(self, demo, checkers):
        """Run the demo under the tool with ``checkers`` (None: the default); the report."""
        expect = EXPECT[demo]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "report.json")
            argv = [self.python, "-m", "atomicity", "run", "--format", "json", "--report", out]
            for a in expect.get("atomic", []):
                argv += ["--atomic", a]
            for checker in checkers:
                if checker:
                    argv += ["-c", checker]
            argv += ["--", demo]
            r = run(argv)
            # The program behaves as without the tool: same output, same exit status.
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout.strip(), expect["stdout"])
            with open(out, encoding="utf-8") as f:
                return json.load(f)

    def check(self, demo, checker):
        expect = EXPECT[demo]
        doc = self.run_json(demo, [checker])
        names = [c["name"] for c in doc["checkers"]]
        self.assertEqual(names, [checker or "aerodrome"])
        reports = [rep for c in doc["checkers"] for rep in c["reports"]]
        shown = json.dumps(reports, indent=1)[:4000]
        if "function" not in expect:
            for c in doc["checkers"]:
                self.assertEqual(c["violations"], 0, shown)
                self.assertTrue(c["complete"], c)
            return
        self.assertGreater(doc["checkers"][0]["violations"], 0)
        first = reports[0]
        shown = json.dumps(first, indent=1)[:4000]
        functions = expect["function"]
        if isinstance(functions, str):
            functions = {functions}
        for t in first["transactions"]:
            function, file, _ = frames(t)
            self.assertIn(function, functions, shown)
            self.assertTrue(in_demo(file, demo), shown)
        self.assertEqual(first.get("variables", []), expect["variables"], shown)
        lines = marker_lines(demo)
        allowed = {lines[m]: m for m in expect["markers"]}
        seen = set()
        for e in first["events"]:
            function, file, line = frames(e)
            self.assertTrue(in_demo(file, demo), shown)
            self.assertIn(function, functions, shown)
            self.assertIn(line, allowed, f"event at line {line}, not at a marked line "
                                         f"{sorted(allowed)}:\n{shown}")
            seen.add(allowed[line])
        self.assertLessEqual(set(expect["required"]), seen, shown)

    def test_demos(self):
        for demo in EXPECT:
            if EXPECT[demo].get("predictive_only"):
                continue
            for checker in CHECKERS:
                with self.subTest(demo=demo, checker=checker or "default"):
                    self.check(demo, checker)

    def test_predictive(self):
        # Every buggy demo is reported, in its atomic function; every fixed twin and the
        # control are clean (the queue's hand-over orders each get after its put for them).
        for demo, expect in EXPECT.items():
            with self.subTest(demo=demo):
                doc = self.run_json(demo, PREDICTIVE)
                self.assertEqual([c["name"] for c in doc["checkers"]], PREDICTIVE)
                for c in doc["checkers"]:
                    shown = json.dumps(c["reports"], indent=1)[:4000]
                    self.assertTrue(c["complete"], c)
                    if "function" not in expect:
                        self.assertEqual(c["violations"], 0, shown)
                        continue
                    self.assertGreater(c["violations"], 0, c["name"])
                    functions = expect["function"]
                    if isinstance(functions, str):
                        functions = {functions}
                    named = {frames(t)[0] for r in c["reports"] for t in r["transactions"]}
                    self.assertTrue(named & set(functions), shown)
                    if expect.get("predictive_only"):
                        # Every event of the first report is one of the marked accesses.
                        lines = marker_lines(demo)
                        marked = {lines[m] for m in expect["markers"]}
                        for e in c["reports"][0]["events"]:
                            self.assertIn(frames(e)[2], marked, shown)


def newer_python():
    """A Python 3.12 or later (sys.monitoring) other than this one, or None."""
    candidates = [shutil.which(n) for n in ("python3.13", "python3.12")]
    pyenv = os.path.expanduser("~/.pyenv/versions")
    if os.path.isdir(pyenv):
        for v in sorted(os.listdir(pyenv), reverse=True):
            for n in ("python3.13", "python3.12"):
                candidates.append(os.path.join(pyenv, v, "bin", n))
    for c in candidates:
        if not c or not os.access(c, os.X_OK):
            continue
        try:
            r = subprocess.run([c, "-c", "import sys; print(hasattr(sys, 'monitoring'))"],
                               capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and r.stdout.strip() == "True":
            return c
    return None


class ToolRunsMonitoring(ToolRuns):
    """The same under a Python with sys.monitoring, when this machine has one."""

    def setUp(self):
        super().setUp()
        if sys.version_info >= (3, 12):
            self.skipTest("this Python already uses sys.monitoring: ToolRuns covered it")
        python = newer_python()
        if python is None:
            self.skipTest("no Python 3.12 or later with sys.monitoring found")
        self.python = python


if __name__ == "__main__":
    unittest.main()
