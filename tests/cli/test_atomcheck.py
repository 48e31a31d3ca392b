#!/usr/bin/env python3
"""Tests of the atomcheck command (doc/atomcheck.md).

Run by meson (tests/cli/meson.build) as `test_atomcheck.py [TestClass ...]` with the environment:
  ATOMCHECK         path of the atomcheck binary
  ATOM_CORPUS_DIR   tests/corpus
  OUTPUT_DEMO       path of output-demo (Outputs only)
"""

import json
import os
import pty
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

ATOMCHECK = os.environ.get("ATOMCHECK", "atomcheck")
CORPUS = os.environ.get(
    "ATOM_CORPUS_DIR",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
OUTPUT_DEMO = os.environ.get("OUTPUT_DEMO", "")

SERIALIZABLE = os.path.join(CORPUS, "aerodrome-rho1.std")
VIOLATING = os.path.join(CORPUS, "aerodrome-rho2.std")


def run(*args, stdin=None, timeout=60):
    """Run atomcheck; stdin is bytes or str (or None for no input)."""
    if isinstance(stdin, str):
        stdin = stdin.encode()
    p = subprocess.run([ATOMCHECK, *args], input=stdin if stdin is not None else b"",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8", "replace")


def run_json(*args, stdin=None):
    code, out, err = run("--format", "json", *args, stdin=stdin)
    try:
        doc = json.loads(out)
    except ValueError as e:
        raise AssertionError(f"not JSON ({e}); exit {code}; stderr: {err}; stdout:\n{out}")
    return code, doc, err


class TempTrace:
    """A trace file written from text (or bytes) and removed afterwards."""

    def __init__(self, content):
        self.content = content.encode() if isinstance(content, str) else content

    def __enter__(self):
        fd, self.path = tempfile.mkstemp(suffix=".std")
        with os.fdopen(fd, "wb") as f:
            f.write(self.content)
        return self.path

    def __exit__(self, *exc):
        os.unlink(self.path)


def rho2_copies(n):
    """n independent copies of the rho2 violation, each with its own threads and locations, so
    that each is a distinct report (different begin locations)."""
    lines = []
    for i in range(n):
        a, b, x, y, base = f"a{i}", f"b{i}", f"x{i}", f"y{i}", 100 * i
        lines += [f"{a}|begin|{base}", f"{b}|begin|{base + 1}", f"{a}|w({x})|{base + 2}",
                  f"{b}|r({x})|{base + 3}", f"{b}|w({y})|{base + 4}", f"{a}|r({y})|{base + 5}",
                  f"{a}|end|{base + 6}", f"{b}|end|{base + 7}"]
    return "\n".join(lines) + "\n"


class ExitCodes(unittest.TestCase):
    def test_serializable_is_0(self):
        code, _, err = run(SERIALIZABLE)
        self.assertEqual(code, 0, err)

    def test_violation_is_1(self):
        code, _, err = run(VIOLATING)
        self.assertEqual(code, 1, err)

    def test_every_checker_given(self):
        for spec in ("aerodrome", "aerodrome:variant=basic", "velodrome"):
            with self.subTest(spec=spec):
                self.assertEqual(run("-c", spec, SERIALIZABLE)[0], 0)
                self.assertEqual(run("-c", spec, VIOLATING)[0], 1)
        self.assertEqual(run("-c", "aerodrome", "-c", "velodrome", VIOLATING)[0], 1)

    def test_malformed_line_is_2_with_file_and_line(self):
        with TempTrace("t1|begin|0\nt1|r(x)|1\nt1|bogus(x)|2\nt1|end|3\n") as path:
            code, out, err = run(path)
            self.assertEqual(code, 2)
            self.assertIn(f"{path}:3:", err)
            self.assertEqual(out, "")

    def test_malformed_line_on_stdin_is_2(self):
        code, _, err = run("-", stdin="t1|begin|0\nnot an event\n")
        self.assertEqual(code, 2)
        self.assertIn(":2:", err)

    def test_missing_file_is_2(self):
        code, out, err = run("/nonexistent/trace.std")
        self.assertEqual(code, 2)
        self.assertIn("/nonexistent/trace.std", err)
        self.assertEqual(out, "")

    def test_unknown_checker_is_2(self):
        code, _, err = run("-c", "no-such-checker", SERIALIZABLE)
        self.assertEqual(code, 2)
        self.assertIn("no-such-checker", err)

    def test_bad_checker_args_are_2(self):
        for spec in ("aerodrome:variant=nope", "aerodrome:no_such_key=1", "velodrome:bogus=1"):
            with self.subTest(spec=spec):
                code, _, err = run("-c", spec, SERIALIZABLE)
                self.assertEqual(code, 2)
                self.assertIn(spec, err)

    def test_usage_errors_are_2(self):
        cases = [
            ("--no-such-option", SERIALIZABLE),
            ("-z", SERIALIZABLE),
            (),                                   # no file
            (SERIALIZABLE, VIOLATING),            # two files
            ("--format", "xml", SERIALIZABLE),
            ("--max-reports", "many", SERIALIZABLE),
            ("--max-reports", "-1", SERIALIZABLE),
            ("-c",),                              # missing argument
            ("-j", "0", SERIALIZABLE),
            ("--jobs", "65", SERIALIZABLE),
            ("-j", "two", SERIALIZABLE),
        ]
        for args in cases:
            with self.subTest(args=args):
                code, out, err = run(*args)
                self.assertEqual(code, 2)
                self.assertEqual(out, "")
                self.assertIn("atomcheck:", err)

    def test_bad_sets_file_is_2(self):
        with TempTrace("x S1\nlonely\n") as sets:
            code, out, err = run("-c", "race-automata", "--sets", sets, VIOLATING)
            self.assertEqual(code, 2)
            self.assertEqual(out, "")
            self.assertIn(f"{sets}:2: expected 'variable set', found 1 word", err)
        code, out, err = run("-c", "race-automata", "--sets", "/nonexistent/sets", VIOLATING)
        self.assertEqual(code, 2)
        self.assertIn("/nonexistent/sets", err)
        code, out, err = run("--sets", "a", "--sets", "b", VIOLATING)
        self.assertEqual(code, 2)
        self.assertIn("--sets given twice", err)

    def test_help_and_version_are_0(self):
        code, out, _ = run("--help")
        self.assertEqual(code, 0)
        self.assertIn("Usage: atomcheck", out)
        for opt in ("--checker", "--format", "--max-reports", "--sets", "--stats", "--progress",
                    "--quiet"):
            self.assertIn(opt, out)
        code, out, _ = run("-h")
        self.assertEqual(code, 0)
        code, out, _ = run("--version")
        self.assertEqual(code, 0)
        self.assertRegex(out, r"^atomcheck \(libatomicity\) \d+\.\d+\.\d+\n$")

    def test_ill_formed_events_warn_and_exit_2(self):
        # END without BEGIN is dropped by the session; the rest is still checked.
        with open(VIOLATING) as f:
            body = f.read()
        with TempTrace("t9|end|99\n" + body) as path:
            code, out, err = run(path)
            self.assertEqual(code, 2, err)
            self.assertIn(f"{path}:1:", err)
            self.assertIn("1 ill-formed event dropped", err)
            self.assertRegex(err, r"^atomcheck: \S+:[0-9]+: event [0-9]+: ")
            self.assertIn("aerodrome: 1 violation", out)

    def test_ill_formed_warnings_are_capped(self):
        with TempTrace("".join(f"t{i}|end|{i}\n" for i in range(30))) as path:
            code, _, err = run(path)
            self.assertEqual(code, 2)
            warnings = [l for l in err.splitlines() if l.startswith(f"atomcheck: {path}:")]
            self.assertEqual(len(warnings), 20, err)
            self.assertIn("10 more ill-formed events not shown", err)
            self.assertIn("30 ill-formed events dropped", err)


class Json(unittest.TestCase):
    def test_rho2_aerodrome(self):
        code, doc, err = run_json(VIOLATING)
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["events"], 8)
        self.assertEqual(doc["rejected"], 0)
        self.assertEqual(doc["file"], VIOLATING)
        self.assertNotIn("stats", doc)
        self.assertEqual(len(doc["checkers"]), 1)
        c = doc["checkers"][0]
        self.assertEqual(c["name"], "aerodrome")
        self.assertEqual(c["spec"], "aerodrome")
        self.assertEqual(c["violations"], len(c["reports"]))
        self.assertGreaterEqual(c["violations"], 1)
        self.assertEqual(c["occurrences"], sum(r["count"] for r in c["reports"]))
        r = c["reports"][0]
        for key in ("checker", "kind", "event_index", "count", "evidence", "message",
                    "transactions", "variables", "events"):
            self.assertIn(key, r)
        self.assertEqual(r["checker"], "aerodrome")
        self.assertEqual(r["evidence"], "observed")
        self.assertEqual(r["event_index"], 5)
        self.assertIsInstance(r["kind"], str)
        self.assertTrue(r["kind"])
        self.assertIsInstance(r["message"], str)
        self.assertTrue(r["message"])
        self.assertGreaterEqual(r["count"], 1)
        self.assertRegex(r["fingerprint"], r"^[0-9a-f]{16}$")
        self.assertIsInstance(r["edges"], list)
        self.assertEqual(r["omitted"], 0)
        for t in r["transactions"]:
            self.assertTrue({"thread", "begin_index", "begin_loc", "unary", "count",
                             "last_index", "description"} <= set(t), t)
            self.assertEqual(t["count"], 1)
            self.assertNotIn("stack", t)  # nothing is known of the locs of a bare trace
            self.assertIn(f'{t["thread"]}@{t["begin_index"]}', {"t1@0", "t2@1"})
            self.assertEqual(t["begin_loc"], t["begin_index"])  # locs equal indexes in rho2
        for v in r["variables"]:
            self.assertIn(v, {"x", "y"})
        for e in r["events"]:
            self.assertTrue({"index", "kind", "thread", "target", "loc", "transaction",
                             "description"} <= set(e), e)
            self.assertIn(e["transaction"], (None, *range(len(r["transactions"]))))
            self.assertIn(e["thread"], {"t1", "t2"})
            self.assertIn(e["kind"], {"read", "write", "begin", "end", "acquire", "release",
                                      "fork", "join", "fence", "commit"})
            if e["kind"] in ("read", "write"):
                self.assertIn(e["target"], {"x", "y"})
            elif e["kind"] in ("begin", "end"):
                self.assertIsNone(e["target"])
            self.assertEqual(e["loc"], e["index"])

    def test_velodrome_cycle(self):
        code, doc, err = run_json("-c", "velodrome", VIOLATING)
        self.assertEqual(code, 1, err)
        c = doc["checkers"][0]
        self.assertEqual(c["name"], "velodrome")
        self.assertTrue(any({f'{t["thread"]}@{t["begin_index"]}' for t in r["transactions"]}
                            == {"t1@0", "t2@1"} for r in c["reports"]), c)

    def test_race_automata_sets_file(self):
        # 001 Fig. 3(b): pattern 11 needs x and y in one atomic set; each variable is alone by
        # default, and the sets file (names, keys given by the trace reader) joins them.
        trace = os.path.join(CORPUS, "hammer-fig3b.std")
        code, doc, err = run_json("-c", "race-automata", trace)
        self.assertEqual(code, 1, err)
        kinds = sorted(r["kind"] for r in doc["checkers"][0]["reports"])
        self.assertEqual(kinds, ["pattern-1", "pattern-1", "pattern-2"])
        with TempTrace("# atomic sets\ny  point\nx\tpoint\nz other\n") as sets:
            code, doc, err = run_json("-c", "race-automata", "--sets", sets, trace)
        self.assertEqual(code, 1, err)
        reports = doc["checkers"][0]["reports"]
        self.assertEqual(sorted(r["kind"] for r in reports),
                         ["pattern-1", "pattern-1", "pattern-11", "pattern-2"])
        r = next(r for r in reports if r["kind"] == "pattern-11")
        self.assertEqual([f'{t["thread"]}@{t["begin_index"]}' for t in r["transactions"]],
                         ["t1@0", "t2@3"])
        self.assertEqual(r["variables"], ["y", "x"])
        self.assertEqual([e["index"] for e in r["events"]], [2, 7, 8, 10])

    def test_serializable_has_no_reports(self):
        code, doc, err = run_json("-c", "aerodrome", "-c", "velodrome", SERIALIZABLE)
        self.assertEqual(code, 0, err)
        self.assertEqual(doc["events"], 10)
        self.assertEqual([c["name"] for c in doc["checkers"]], ["aerodrome", "velodrome"])
        for c in doc["checkers"]:
            self.assertEqual(c["violations"], 0)
            self.assertEqual(c["reports"], [])

    def test_checkers_in_attach_order(self):
        specs = ["velodrome", "aerodrome:variant=basic", "aerodrome"]
        args = [a for s in specs for a in ("-c", s)]
        code, doc, err = run_json(*args, VIOLATING)
        self.assertEqual(code, 1, err)
        self.assertEqual([c["spec"] for c in doc["checkers"]], specs)
        self.assertEqual([c["name"] for c in doc["checkers"]],
                         ["velodrome", "aerodrome", "aerodrome"])
        for c in doc["checkers"]:
            self.assertGreaterEqual(c["violations"], 1, c)
            for r in c["reports"]:
                self.assertEqual(r["checker"], c["name"])

    def test_stats(self):
        code, doc, err = run_json("--stats", "-c", "aerodrome", "-c", "velodrome", VIOLATING)
        self.assertEqual(code, 1, err)
        st = doc["stats"]
        self.assertGreaterEqual(st["seconds"], 0)
        self.assertGreaterEqual(st["events_per_second"], 0)
        self.assertEqual([c["spec"] for c in st["checkers"]], ["aerodrome", "velodrome"])
        for c in st["checkers"]:
            for key in ("time_ns", "peak_bytes", "bytes", "nodes", "edges", "clocks"):
                self.assertIsInstance(c[key], int)
            self.assertGreaterEqual(c["peak_bytes"], c["bytes"])
        self.assertNotIn("stats:", err)  # JSON carries them; nothing on stderr

    def test_names_are_escaped(self):
        # The rho2 violation over variables whose names need escaping (or are not ASCII), and
        # one more variable outside it.
        a, b, other = 'q"uote', "caf\u00e9", "back\\slash"
        trace = (f"t1|begin|0\nt2|begin|1\nt1|w({a})|2\nt2|r({a})|3\nt2|w({b})|4\n"
                 f"t1|r({b})|5\nt1|end|6\nt2|end|7\nt3|w({other})|8\n")
        with TempTrace(trace) as path:
            code, out, err = run("--format", "json", path)
            if code == 2:
                self.skipTest(f"the trace reader does not accept these names: {err.strip()}")
            self.assertEqual(code, 1, err)
            doc = json.loads(out)
            r = doc["checkers"][0]["reports"][0]
            seen = set(r["variables"]) | {e["target"] for e in r["events"]}
            seen.discard(None)
            self.assertTrue(seen <= {a, b}, seen)
            code, out, _ = run("--format", "sarif", path)
            self.assertEqual(code, 1)
            json.loads(out)

    def test_non_utf8_names_give_valid_json(self):
        # Names are any bytes (doc/trace-format.md); JSON and SARIF must stay valid UTF-8: a
        # byte that starts no valid sequence (RFC 3629: no overlong form, no surrogate, nothing
        # above U+10FFFF) becomes U+FFFD, a C1 control is escaped, valid UTF-8 passes as is.
        cases = [
            (b"\xff\xfe", "\ufffd" * 2),
            (b"caf\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "caf\u00e9\u20ac\U0001F600"),
            (b"\xc0\xaf", "\ufffd" * 2),                # overlong, two bytes
            (b"\xe0\x80\xaf", "\ufffd" * 3),            # overlong, three bytes
            (b"\xf0\x80\x80\xaf", "\ufffd" * 4),        # overlong, four bytes
            (b"\xed\xa0\x80", "\ufffd" * 3),            # a surrogate
            (b"\xf4\x90\x80\x80", "\ufffd" * 4),        # above U+10FFFF
            (b"x\xe2\x82", "x" + "\ufffd" * 2),         # truncated
            (b"\xc2\x85", "\x85"),                      # C1 control, escaped
            (b'q"b\\s', 'q"b\\s'),                     # quote and backslash, escaped
        ]
        for name, shown in cases:
            trace = b"t1|begin|0\nt2|begin|1\nt1|w(" + name + b")|2\nt2|r(" + name + \
                    b")|3\nt2|w(y)|4\nt1|r(y)|5\nt1|end|6\nt2|end|7\n"
            with self.subTest(name=name), TempTrace(trace) as path:
                for fmt in ("json", "sarif"):
                    p = subprocess.run([ATOMCHECK, "--format", fmt, path],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       timeout=60)
                    self.assertEqual(p.returncode, 1, p.stderr)
                    doc = json.loads(p.stdout.decode("utf-8"))  # strict: must be valid UTF-8
                    if fmt == "json":
                        r = doc["checkers"][0]["reports"][0]
                        self.assertEqual(set(r["variables"]), {shown, "y"})

class Sarif(unittest.TestCase):
    def test_rho2(self):
        code, out, err = run("--format", "sarif", "-c", "aerodrome", "-c", "velodrome", VIOLATING)
        self.assertEqual(code, 1, err)
        log = json.loads(out)
        self.assertEqual(log["version"], "2.1.0")
        self.assertIn("sarif-schema-2.1.0", log["$schema"])
        self.assertEqual(len(log["runs"]), 1)
        run0 = log["runs"][0]
        driver = run0["tool"]["driver"]
        self.assertEqual(driver["name"], "atomcheck")
        rule_ids = [r["id"] for r in driver["rules"]]
        self.assertEqual(len(rule_ids), len(set(rule_ids)))
        code, doc, _ = run_json("-c", "aerodrome", "-c", "velodrome", VIOLATING)
        reports = [r for c in doc["checkers"] for r in c["reports"]]
        results = run0["results"]
        self.assertEqual(len(results), len(reports))
        for res, rep in zip(results, reports):
            self.assertEqual(res["ruleId"], rep["checker"] + "/" + rep["kind"])
            self.assertEqual(rule_ids[res["ruleIndex"]], res["ruleId"])
            self.assertEqual(res["partialFingerprints"]["atomicity/v1"], rep["fingerprint"])
            self.assertEqual(res["level"], "error")
            self.assertEqual(res["message"]["text"], rep["message"] + " (observed in this run)")
            self.assertEqual(res["properties"]["evidence"], "observed")
            self.assertEqual(res["properties"]["event_index"], rep["event_index"])
            self.assertEqual(res["properties"]["checker"], rep["checker"])
            self.assertTrue(res["locations"])
            # no source line is known: the trace file itself is the physical location
            self.assertEqual(len(res["locations"]), 1)
            phys = res["locations"][0]["physicalLocation"]
            self.assertEqual(phys["artifactLocation"]["uri"].rsplit("/", 1)[-1],
                             "aerodrome-rho2.std")
            self.assertEqual(phys["region"]["startLine"], 1)
            for loc in res.get("relatedLocations", []):
                ll = loc["logicalLocations"]
                self.assertEqual(len(ll), 1)
                self.assertRegex(ll[0]["fullyQualifiedName"], r"^event \d+$")
                self.assertTrue(loc["message"]["text"])
            self.assertEqual([l["logicalLocations"][0]["fullyQualifiedName"]
                              for l in res.get("relatedLocations", [])],
                             [f'event {e["index"]}' for e in rep["events"]])
        self.assertEqual(run0["properties"]["events"], 8)

    def test_serializable(self):
        code, out, err = run("--format", "sarif", SERIALIZABLE)
        self.assertEqual(code, 0, err)
        log = json.loads(out)
        self.assertEqual(log["runs"][0]["results"], [])
        self.assertEqual(log["runs"][0]["tool"]["driver"]["rules"], [])


class Text(unittest.TestCase):
    def test_rho2(self):
        code, out, err = run(VIOLATING)
        self.assertEqual(code, 1, err)
        self.assertEqual(err, "")
        self.assertRegex(out, r"(?m)^aerodrome: \S+ at event 5 \(\d+ occurrences?, observed\)$")
        self.assertIn("    t1's transaction at loc 0 (event 0)\n", out)
        self.assertIn("    t2's transaction at loc 1 (event 1)\n", out)
        self.assertRegex(out, r"(?m)^aerodrome: 1 violation \(\d+ occurrences?\)$")

    def test_serializable(self):
        code, out, err = run("-c", "aerodrome", "-c", "velodrome", SERIALIZABLE)
        self.assertEqual(code, 0, err)
        self.assertEqual(out, "aerodrome: no violations\nvelodrome: no violations\n")

    def test_witness_events_use_names(self):
        code, out, _ = run("-c", "velodrome", VIOLATING)
        self.assertEqual(code, 1)
        # Witness events read "THREAD VERB TARGET at loc N (event I)"; an edge line shows its
        # two events with an arrow between them.
        event = r"t[12] (read|wrote) [xy] at loc \d+ \(event \d+\)"
        events = re.findall(r"(?m)^    t[12] (?!'s).*$", out)
        self.assertTrue(events)
        for line in events:
            self.assertRegex(line, r"^    %s( → %s( \(closed the cycle\))?)?$" % (event, event))

    def test_quiet(self):
        code, out, err = run("--quiet", VIOLATING)
        self.assertEqual((code, out, err), (1, "", ""))
        code, out, err = run("-q", "--format", "json", SERIALIZABLE)
        self.assertEqual((code, out, err), (0, "", ""))

    def test_stats_on_stderr(self):
        code, out, err = run("--stats", "-c", "aerodrome", "-c", "velodrome", VIOLATING)
        self.assertEqual(code, 1)
        self.assertRegex(err, r"(?m)^stats: 8 events in [0-9.]+ [mu]?s \(\d+ events/s\), 0 rejected$")
        self.assertRegex(err, r"(?m)^stats: aerodrome: time [0-9.]+ [mu]?s, peak memory ")
        self.assertRegex(err, r"(?m)^stats: velodrome: time [0-9.]+ [mu]?s, peak memory ")
        self.assertNotIn("stats:", out)

    def test_no_progress_when_stderr_is_not_a_terminal(self):
        code, out, err = run("--progress", VIOLATING)
        self.assertEqual(code, 1)
        self.assertEqual(err, "")


    def test_control_characters_are_escaped(self):
        # C1 controls as UTF-8 (U+0085, U+009B = CSI) and as raw bytes (0x9b: a CSI for some
        # terminals) in names and a location name never reach the terminal; other UTF-8 does.
        var = b"x\xc2\x85\xc2\x9b31m\x9b2J\xc3\xa9"
        trace = (b"T\xc2\x9b|begin|10\nT\xc2\x9b|r(" + var + b")|11\nT2|w(" + var + b")|20\n"
                 b"T\xc2\x9b|w(" + var + b")|12\nT\xc2\x9b|end|13\n"
                 b"#name loc 10 start\x9b[2J\tat \xc2\x90f.c:1\n")
        with TempTrace(trace) as path:
            p = subprocess.run([ATOMCHECK, "-c", "aerodrome", path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(p.returncode, 1, p.stderr)
        out = p.stdout
        for raw in (b"\x9b", b"\x85", b"\x90", b"\t"):
            self.assertNotIn(raw, out)
        text = out.decode("utf-8")
        # (a tab in a one-line rendering may be escaped or turned into a space)
        self.assertRegex(text, r"T\\xC2\\x9B's transaction at start\\x9B\[2J(\\x09| )at "
                               r"\\xC2\\x90f\.c:1")
        self.assertIn(r"variables: x\xC2\x85\xC2\x9B31m\x9B2J" + "\u00e9\n", text)
        self.assertIn(r"wrote x\xC2\x85\xC2\x9B31m\x9B2J", text)


# T1's transaction (begin at loc 10) split by T2's write (observed), and the same events in a
# serial order (only predicted).
INTERLEAVED = "T1|begin|10\nT1|r(x)|11\nT2|w(x)|20\nT1|w(x)|12\nT1|end|13\n"
SERIAL = "T1|begin|10\nT1|r(x)|11\nT1|w(x)|12\nT1|end|13\nT2|w(x)|20\n"


class Evidence(unittest.TestCase):
    def evidence(self, trace, fmt):
        args = ("-c", "aerodrome", "-c", "commit-node", "-c", "block", "-")
        if fmt == "json":
            _, doc, _ = run_json(*args, stdin=trace)
            return {c["name"]: [r["evidence"] for r in c["reports"]] for c in doc["checkers"]}
        if fmt == "sarif":
            _, out, _ = run("--format", "sarif", *args, stdin=trace)
            got = {}
            for res in json.loads(out)["runs"][0]["results"]:
                ev = res["properties"]["evidence"]
                self.assertIn(ev + (" in this run)" if ev == "observed" else ":"),
                              res["message"]["text"])
                got.setdefault(res["properties"]["checker"], []).append(ev)
            return got
        _, out, _ = run(*args, stdin=trace)
        got = {}
        for m in re.finditer(r"(?m)^([a-z-]+): \S+ at event \d+ \(\d+ occurrences?, (\w+)\)$", out):
            got.setdefault(m.group(1), []).append(m.group(2))
        return got

    def test_confirmed(self):
        for fmt in ("text", "json", "sarif"):
            got = self.evidence(INTERLEAVED, fmt)
            self.assertEqual(got.get("aerodrome"), ["observed"], fmt)
            self.assertEqual(got.get("commit-node"), ["confirmed"], fmt)
            self.assertEqual(got.get("block"), ["confirmed"], fmt)

    def test_predicted(self):
        for fmt in ("text", "json", "sarif"):
            got = self.evidence(SERIAL, fmt)
            self.assertFalse(got.get("aerodrome"), fmt)
            self.assertEqual(got.get("commit-node"), ["predicted"], fmt)
            self.assertEqual(got.get("block"), ["predicted"], fmt)


class Stdin(unittest.TestCase):
    def test_same_result_as_file(self):
        with open(VIOLATING, "rb") as f:
            data = f.read()
        code, doc, err = run_json("-c", "aerodrome", "-c", "velodrome", "-", stdin=data)
        self.assertEqual(code, 1, err)
        code2, doc2, _ = run_json("-c", "aerodrome", "-c", "velodrome", VIOLATING)
        self.assertEqual(doc["file"], "-")
        del doc["file"], doc2["file"]
        self.assertEqual(doc, doc2)

    def test_serializable_on_stdin(self):
        with open(SERIALIZABLE, "rb") as f:
            self.assertEqual(run("-", stdin=f.read())[0], 0)

    def test_empty_input(self):
        code, doc, err = run_json("--allow-empty", "-", stdin=b"")
        self.assertEqual(code, 0, err)
        self.assertEqual(doc["events"], 0)

    def test_many_events(self):
        # More than one feed chunk (65536 events), with one violation at the very end.
        n = 200000
        lines = [f"u{i % 7}|r(v{i % 13})|{i}" for i in range(n)]
        with open(VIOLATING) as f:
            lines += [l for l in f.read().splitlines() if not l.startswith("#")]
        code, doc, err = run_json("-", stdin="\n".join(lines) + "\n")
        self.assertEqual(code, 1, err)
        self.assertEqual(doc["events"], n + 8)
        self.assertEqual(doc["checkers"][0]["reports"][0]["event_index"], n + 5)


class MaxReports(unittest.TestCase):
    def test_limits_reports_not_counts(self):
        with TempTrace(rho2_copies(3)) as path:
            code, doc, err = run_json(path)
            self.assertEqual(code, 1, err)
            self.assertEqual(doc["checkers"][0]["violations"], 3)
            self.assertEqual(len(doc["checkers"][0]["reports"]), 3)
            for n in (0, 1, 2, 3, 10):
                with self.subTest(n=n):
                    code, doc, err = run_json("--max-reports", str(n), path)
                    self.assertEqual(code, 1, err)
                    c = doc["checkers"][0]
                    self.assertEqual(c["violations"], 3)
                    self.assertEqual(len(c["reports"]), min(n, 3))

    def test_per_checker(self):
        with TempTrace(rho2_copies(3)) as path:
            code, doc, err = run_json("--max-reports", "1", "-c", "aerodrome", "-c", "velodrome",
                                      path)
            self.assertEqual(code, 1, err)
            for c in doc["checkers"]:
                self.assertEqual(len(c["reports"]), 1, c["name"])
                self.assertEqual(c["violations"], 3, c["name"])

    def test_text(self):
        with TempTrace(rho2_copies(3)) as path:
            code, out, _ = run("--max-reports", "1", path)
            self.assertEqual(code, 1)
            heads = [l for l in out.splitlines() if re.match(r"aerodrome: \S+ at event \d+ \(", l)]
            self.assertEqual(len(heads), 1, out)
            self.assertIn("aerodrome: 2 more reports not shown (at most 1 per checker)", out)
            self.assertRegex(out, r"(?m)^aerodrome: 3 violations \(\d+ occurrences\)$")

    def test_sarif(self):
        with TempTrace(rho2_copies(3)) as path:
            code, out, _ = run("--format", "sarif", "--max-reports", "2", path)
            self.assertEqual(code, 1)
            self.assertEqual(len(json.loads(out)["runs"][0]["results"]), 2)


class Bounds(unittest.TestCase):
    """Every resource a trace can grow is bounded (doc/limits.md): stored reports, the
    end-of-run work of reduction and block, the sets file."""

    def test_max_stored_counts_what_it_drops(self):
        with TempTrace(rho2_copies(5)) as path:
            code, doc, err = run_json("--max-stored", "2", "-c", "aerodrome", "-c", "velodrome",
                                      path)
            self.assertEqual(code, 1, err)
            for c in doc["checkers"]:
                self.assertEqual(c["violations"], 5, c)
                self.assertEqual(c["dropped"], 3, c)
                self.assertEqual(len(c["reports"]), 2, c)
                self.assertTrue(c["complete"], c)  # a cap on reports is not a bound of the check
            code, out, err = run("--max-stored", "2", path)
            self.assertEqual(code, 1, err)
            self.assertIn("aerodrome: 5 violations (5 occurrences)\n"
                          "aerodrome: 3 distinct reports counted but not stored\n",
                          out)
            # the default (10000) and 0 (no limit) keep all five
            for args in ((), ("--max-stored", "0")):
                code, doc, err = run_json(*args, path)
                self.assertEqual(code, 1, err)
                self.assertEqual(doc["checkers"][0]["dropped"], 0)
                self.assertEqual(len(doc["checkers"][0]["reports"]), 5)
        code, _, err = run("--max-stored", "-1", VIOLATING)
        self.assertEqual(code, 2)
        self.assertIn("--max-stored needs a non-negative number, not '-1'", err)

    def test_block_reports_are_capped_per_checker(self):
        # n single-transaction threads on one variable: n(n-1)/2 distinct pair reports
        n = 200
        trace = "".join(f"T{t}|begin|{10 * t}\nT{t}|r(x)|{10 * t + 1}\nT{t}|w(x)|{10 * t + 2}\n"
                        f"T{t}|end|{10 * t + 3}\n" for t in range(n))
        with TempTrace(trace) as path:
            code, doc, err = run_json("--max-stored", "100", "-c", "block", path)
        self.assertEqual(code, 1, err)
        c = doc["checkers"][0]
        self.assertEqual(len(c["reports"]), 100)
        self.assertEqual(c["violations"], c["dropped"] + 100)
        self.assertGreaterEqual(c["violations"], n * (n - 1) // 2)

    def test_reduction_and_block_work_bounds_are_incomplete(self):
        # no lock is common to every write of x, but every cross pair shares one: the race
        # analysis must compare all pairs (doc/checkers/reduction.md)
        lines = ["T1|acq(p)|0", "T1|w(x)|1", "T1|rel(p)|2"]
        for i in range(100):
            lines += ["T1|acq(m)|3", f"T1|acq(a{i})|4", "T1|w(x)|5", f"T1|rel(a{i})|6",
                      "T1|rel(m)|7", "T2|acq(m)|3", "T2|acq(p)|3", f"T2|acq(b{i})|4",
                      "T2|w(x)|5", f"T2|rel(b{i})|6", "T2|rel(p)|7", "T2|rel(m)|7"]
        with TempTrace("\n".join(lines) + "\n") as path:
            code, out, err = run("-c", "reduction:max_work=50", path)
            self.assertEqual(code, 3, err)
            self.assertIn("reduction:max_work=50: INCOMPLETE, stopped at event 1203: the race "
                          "analysis stopped after 50 comparisons (max_work=50)", out)
            code, out, err = run("-c", "reduction", path)
            self.assertEqual(code, 0, err)
        ex16 = ("t1|begin|0\nt1|w(x)|1\nt2|begin|2\nt2|r(x)|3\nt2|w(z)|4\nt2|end|5\n"
                "t3|begin|6\nt3|r(z)|7\nt3|r(y)|8\nt3|end|9\nt1|w(y)|10\nt1|end|11\n")
        with TempTrace(ex16) as path:
            code, doc, err = run_json("-c", "block:scope=all,max_work=5", path)
            self.assertEqual(code, 3, err)
            c = doc["checkers"][0]
            self.assertEqual((c["violations"], c["complete"], c["disabled"], c["stopped_at"]),
                             (0, False, False, 12), c)
            self.assertIn("scope=all: the search stopped after 5 steps (max_work=5)", c["reason"])
            code, doc, err = run_json("-c", "block:scope=all", path)
            self.assertEqual(code, 1, err)

    def test_sets_file_is_streamed(self):
        trace = os.path.join(CORPUS, "hammer-fig3b.std")
        # /dev/zero never ends: the first NUL byte ends the reading
        code, _, err = run("-c", "race-automata", "--sets", "/dev/zero", trace, timeout=10)
        self.assertEqual(code, 2)
        self.assertIn("/dev/zero:1: NUL byte (not a sets file?)", err)
        with TempTrace("x S\n" + "y" * (1 << 20) + " S\n") as sets:
            code, _, err = run("-c", "race-automata", "--sets", sets, trace)
        self.assertEqual(code, 2)
        self.assertIn(f"{sets}:2: line too long (more than 1048576 bytes)", err)
        # lines across the reader's chunks, and a last line without LF, still count
        pad = " " * 200000
        with TempTrace("# sets\n" + "".join(f"v{i} s{i}\n" for i in range(20000)) +
                       f"y{pad}point\nx\tpoint") as sets:
            code, doc, err = run_json("-c", "race-automata", "--sets", sets, trace)
        self.assertEqual(code, 1, err)
        self.assertIn("pattern-11", [r["kind"] for r in doc["checkers"][0]["reports"]])


class Progress(unittest.TestCase):
    def test_progress_line_on_a_terminal(self):
        # Standard error is a pseudo-terminal; the trace arrives on standard input in two parts
        # with a pause between, long enough for the line to be drawn at least once.
        try:
            master, slave = pty.openpty()
        except OSError as e:
            self.skipTest(f"no pseudo-terminal: {e}")
        p = subprocess.Popen([ATOMCHECK, "--progress", "-"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        chunks = []

        def drain():
            while True:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    return
                if not data:
                    return
                chunks.append(data)

        reader = threading.Thread(target=drain)
        reader.start()
        part = "".join(f"t1|r(x)|{i}\n" for i in range(100000)).encode()
        p.stdin.write(part)
        p.stdin.flush()
        threading.Event().wait(0.8)
        p.stdin.write(part)
        p.stdin.close()
        out = p.stdout.read()
        p.stdout.close()
        code = p.wait(timeout=60)
        reader.join(timeout=10)
        os.close(master)
        err = b"".join(chunks).decode("utf-8", "replace")
        self.assertEqual(code, 0, err)
        self.assertEqual(out, b"aerodrome: no violations\n")
        self.assertRegex(err, r"\ratomcheck: [0-9.]+k? events, [0-9.]+[kMG]?B read")
        self.assertIn("events/s", err)
        self.assertTrue(err.endswith("\r\x1b[K"), repr(err[-40:]))

    def test_reading_bar_for_a_file(self):
        # A regular file: its size is known, so the line is a bar with % and ETA. It is drawn
        # after the first chunk of 65536 events without waiting, so a file of more than one
        # chunk shows it on every run, however fast the machine.
        try:
            master, slave = pty.openpty()
        except OSError as e:
            self.skipTest(f"no pseudo-terminal: {e}")
        with TempTrace("".join(f"t1|r(x)|{i}\n" for i in range(150000))) as path:
            p = subprocess.Popen([ATOMCHECK, "--progress", path], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=slave)
            os.close(slave)
            chunks = []
            while True:
                try:
                    data = os.read(master, 4096)
                except OSError:
                    break
                if not data:
                    break
                chunks.append(data)
            out = p.stdout.read()
            p.stdout.close()
            code = p.wait(timeout=60)
        os.close(master)
        err = b"".join(chunks).decode("utf-8", "replace")
        self.assertEqual(code, 0, err)
        self.assertEqual(out, b"aerodrome: no violations\n")
        self.assertRegex(err, r"\ratomcheck: reading \[[#.]{20}\] [0-9]{1,3} % [0-9.]+k events, "
                              r"ETA ([0-9]+ s|\?)\x1b\[K")
        self.assertTrue(err.endswith("\r\x1b[K"), repr(err[-40:]))

    def test_no_line_without_a_terminal(self):
        with TempTrace("".join(f"t1|r(x)|{i}\n" for i in range(70000))) as path:
            code, out, err = run("--progress", path)
        self.assertEqual((code, err), (0, ""))


def builtin_names():
    """The built-in checkers' names, in order, from the one list (lib/checkers/list.def)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib",
                        "checkers", "list.def")
    with open(path) as f:
        return re.findall(r'^CHECKER\(\w+, "([^"]+)"\)', f.read(), re.M)


BUILTIN_NAMES = builtin_names()

# What --list-checkers says of each built-in checker: when it decides and what its reports
# promise. Every checker of list.def needs a line here (a new one fails until it has one).
LISTED = {
    "aerodrome": "online +sound, complete",
    "velodrome": "online +sound, complete",
    "commit-node": "at finish +complete, predictive",
    "block": "at finish +predictive",
    "reduction": "at finish +complete, predictive",
    "race-automata": "online +sound, complete",
    "tso": "online\\+at finish +sound, complete, predictive",
    "null": "online +sound",
}


class Checkers(unittest.TestCase):
    """--list-checkers, the list in --help, and the error for an unknown name."""

    def test_list_checkers(self):
        code, out, err = run("--list-checkers")
        self.assertEqual(code, 0, err)
        lines = out.splitlines()
        self.assertGreater(len(BUILTIN_NAMES), 0)
        self.assertEqual([l.split()[0] for l in lines], BUILTIN_NAMES)
        self.assertEqual(sorted(LISTED), sorted(BUILTIN_NAMES),
                         "every checker of lib/checkers/list.def needs its line in LISTED")
        for line in lines:
            name = line.split()[0]
            self.assertRegex(line, rf"^{re.escape(name)} +{LISTED[name]} +\S")

    def test_help_lists_the_same_checkers(self):
        code, out, _ = run("--help")
        self.assertEqual(code, 0)
        listed = run("--list-checkers")[1].splitlines()
        epilogue = out[out.index("Checkers (-c NAME)"):].splitlines()
        rows = [l for l in epilogue if l.startswith("  ")]
        self.assertEqual(len(rows), len(listed))
        for row, full in zip(rows, listed):
            # The help leaves out the summary; the rest is the same text.
            self.assertTrue(full.startswith(row.strip()), (row, full))
        self.assertTrue(all(len(l) <= 80 for l in epilogue), "epilogue wider than 80")

    def test_unknown_checker(self):
        for spec in ("foo", "foo:mode=view"):
            code, out, err = run("-c", spec, SERIALIZABLE)
            self.assertEqual(code, 2)
            self.assertEqual(out, "")
            self.assertEqual(err, "atomcheck: no checker named 'foo'; known: "
                             + ", ".join(BUILTIN_NAMES) + "\n")

    def test_alias_is_known(self):
        self.assertEqual(run("-c", "graph", SERIALIZABLE)[0], 0)


class Inputs(unittest.TestCase):
    """Empty traces, a byte order mark, and the shape of input errors."""

    def test_empty_file_is_an_error(self):
        for content in ("", "# only a comment\n\n#name thread 1 t1\n"):
            with TempTrace(content) as path:
                code, out, err = run(path)
                self.assertEqual(code, 2, err)
                self.assertEqual(out, "")
                self.assertEqual(err, f"atomcheck: {path}: no events read "
                                 "(--allow-empty accepts an empty trace)\n")
                code, out, err = run("--allow-empty", path)
                self.assertEqual((code, out, err), (0, "aerodrome: no violations\n", ""))

    def test_jobs_do_not_change_the_result(self):
        # Over 1 MiB, so that -j 2 cuts it into chunks read by two threads.
        body = "".join(f"t{i % 8}|w(v{i % 500})|{i}\n" for i in range(120000))
        for tail in (rho2_copies(3), rho2_copies(2) + "t1|r(x|7\n" + rho2_copies(1)):
            with TempTrace(body + tail) as path:
                want = run("--format", "json", "-c", "aerodrome", "-c", "velodrome", "-j", "1",
                           path)
                self.assertEqual(want[0], 1 if "r(x|" not in tail else 2, want[2])
                for jobs in ("2", "3"):
                    got = run("--format", "json", "-c", "aerodrome", "-c", "velodrome", "-j",
                              jobs, path)
                    self.assertEqual(got, want)

    def test_empty_stdin_is_an_error(self):
        code, _, err = run("-", stdin=b"")
        self.assertEqual(code, 2)
        self.assertIn("atomcheck: <stdin>: no events read", err)

    def test_byte_order_mark_is_skipped(self):
        with open(VIOLATING, "rb") as f:
            trace = f.read()
        want = run_json(VIOLATING)[1]
        for where in ("file", "stdin"):
            if where == "file":
                with TempTrace(b"\xef\xbb\xbf" + trace) as path:
                    code, doc, err = run_json(path)
            else:
                code, doc, err = run_json("-", stdin=b"\xef\xbb\xbf" + trace)
            self.assertEqual(code, 1, err)
            del doc["file"]
            self.assertEqual(doc, {k: v for k, v in want.items() if k != "file"})
        # Only at the very start: on line 2 the bytes are part of a name.
        code, doc, err = run_json("-", stdin=b"t1|r(x)|1\n\xef\xbb\xbft1|r(x)|2\n")
        self.assertEqual(code, 0, err)
        self.assertEqual(doc["events"], 2)

    def test_errors_have_one_shape(self):
        # atomcheck: FILE:LINE: message for a parse error; atomcheck: FILE: message when
        # there is no line (a file that cannot be opened).
        with TempTrace("t1|r(x)|1\nt1|bad|2\n") as path:
            code, _, err = run(path)
            self.assertEqual(code, 2)
            self.assertRegex(err, rf"^atomcheck: {re.escape(path)}:2: \S")
        code, _, err = run("/nonexistent/trace.std")
        self.assertEqual(code, 2)
        self.assertRegex(err, r"^atomcheck: /nonexistent/trace.std: cannot open: ")
        with TempTrace("x s\nbad line here\n") as sets:
            code, _, err = run("--sets", sets, SERIALIZABLE)
            self.assertEqual(code, 2)
            self.assertRegex(err, rf"^atomcheck: {re.escape(sets)}:2: ")
        code, _, err = run("--sets", "/nonexistent/sets", SERIALIZABLE)
        self.assertEqual(code, 2)
        self.assertRegex(err, r"^atomcheck: /nonexistent/sets: cannot open: ")


def interleaved_trace(threads):
    """Two-variable transactions of every thread, interleaved so that commit-node predicts
    violations; its inter-edges grow with the square of the thread count."""
    lines = []
    for t in range(threads):
        lines += [f"t{t}|begin|{t}", f"t{t}|w(x)|{t}"]
    for t in range(threads):
        lines += [f"t{t}|r(y)|{t}", f"t{t}|w(y)|{t}", f"t{t}|end|{t}"]
    return "\n".join(lines) + "\n"


def threads_trace(threads):
    """One transaction [w(x)] per thread, one thread after the other (serializable)."""
    return "".join(f"t{t}|begin|{t}\nt{t}|w(x)|{t}\nt{t}|end|{t}\n" for t in range(threads))


def two_phase_trace(transactions):
    """Serializable two-phase-locked transactions of two threads without fences between the
    writes and reads of one transaction, so tso:mode=trace must search."""
    lines = []
    for i in range(transactions):
        t = i % 2 + 1
        lines += [f"t{t}|begin|{i}", f"t{t}|acq(l)|{i}", f"t{t}|w(x)|{i}", f"t{t}|r(y)|{i}",
                  f"t{t}|w(y)|{i}", f"t{t}|rel(l)|{i}", f"t{t}|end|{i}"]
    return "\n".join(lines) + "\n"


class Incomplete(unittest.TestCase):
    """A checker that stopped early (a limit, a work bound) is marked in every format and the
    exit status is 3, never a clean "no violations" (doc/atomcheck.md, Exit status)."""

    def check_all_formats(self, path, spec, state, reason_part):
        code, out, err = run("-c", spec, path)
        self.assertEqual(code, 3, err)
        self.assertNotIn("no violations", out)
        self.assertRegex(out, rf"^{re.escape(spec)}: {state}, stopped at event \d+: .*"
                              + re.escape(reason_part), out)
        code, doc, err = run_json("-c", spec, path)
        self.assertEqual(code, 3, err)
        c = doc["checkers"][0]
        self.assertEqual(c["violations"], 0)
        self.assertIs(c["complete"], False)
        self.assertIs(c["disabled"], state == "DISABLED")
        self.assertIn(reason_part, c["reason"])
        self.assertIsInstance(c["stopped_at"], int)
        code, out, err = run("--format", "sarif", "-c", spec, path)
        self.assertEqual(code, 3, err)
        inv = json.loads(out)["runs"][0]["invocations"][0]
        self.assertIs(inv["executionSuccessful"], False)
        [note] = inv["toolExecutionNotifications"]
        self.assertEqual(note["level"], "error" if state == "DISABLED" else "warning")
        self.assertIn(reason_part, note["message"]["text"])
        self.assertEqual(note["properties"]["stopped_at"], c["stopped_at"])
        return c

    def test_commit_node_max_edges(self):
        with TempTrace(interleaved_trace(8)) as path:
            c = self.check_all_formats(path, "commit-node:max_edges=20", "DISABLED",
                                       "more than 20 inter-edges")
            self.assertEqual(c["stopped_at"], 40)  # the end of the events: it stopped at finish
            # under the limit the same trace has violations: exit 1, complete
            code, doc, err = run_json("-c", "commit-node", path)
            self.assertEqual(code, 1, err)
            self.assertGreater(doc["checkers"][0]["violations"], 0)
            self.assertIs(doc["checkers"][0]["complete"], True)
            self.assertNotIn("stopped_at", doc["checkers"][0])

    def test_aerodrome_max_threads(self):
        with TempTrace(threads_trace(5)) as path:
            c = self.check_all_formats(path, "aerodrome:max_threads=3", "DISABLED",
                                       "beyond max_threads=3")
            self.assertEqual(c["stopped_at"], 9)  # the first event of the fourth thread
            code, out, err = run("-c", "aerodrome:max_threads=5", path)
            self.assertEqual((code, out), (0, "aerodrome:max_threads=5: no violations\n"), err)

    def test_tso_max_work_is_not_a_violation(self):
        with TempTrace(two_phase_trace(6)) as path:
            c = self.check_all_formats(path, "tso:mode=trace,max_work=10", "INCOMPLETE",
                                       "max_work=10): the trace was only partly checked")
            self.assertEqual(c["reports"], [])
            code, out, err = run("-c", "tso:mode=trace", path)
            self.assertEqual((code, out), (0, "tso:mode=trace: no violations\n"), err)

    def test_violations_win_over_incomplete(self):
        # exit 1 when a violation was found, even if another checker stopped early; both said
        with TempTrace(interleaved_trace(8)) as path:
            code, out, err = run("-c", "commit-node", "-c", "aerodrome:max_threads=2", path)
            self.assertEqual(code, 1, err)
            self.assertRegex(out, r"commit-node: \d+ violations")
            self.assertIn("aerodrome:max_threads=2: DISABLED, stopped at event 4: ", out)

    def test_complete_run_has_a_successful_invocation(self):
        code, out, err = run("--format", "sarif", "-c", "aerodrome", SERIALIZABLE)
        self.assertEqual(code, 0, err)
        inv = json.loads(out)["runs"][0]["invocations"]
        self.assertEqual(inv, [{"executionSuccessful": True, "toolExecutionNotifications": []}])
        code, doc, err = run_json("-c", "aerodrome", SERIALIZABLE)
        self.assertIs(doc["checkers"][0]["complete"], True)
        self.assertIs(doc["checkers"][0]["disabled"], False)


def demo(fmt, *args):
    """output-demo's document: one cycle report with edges, locations and a stack."""
    if not OUTPUT_DEMO:
        raise unittest.SkipTest("OUTPUT_DEMO is not set")
    p = subprocess.run([OUTPUT_DEMO, fmt, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"output-demo {fmt} {args}: exit {p.returncode}: {p.stderr}")
    return p.stdout.decode("utf-8")


class Outputs(unittest.TestCase):
    """The library's writers (atom_session_write) on a report whose cycle has edges."""

    EDGE1 = ("T1 wrote balance at withdraw at src/bank.c:31 (event 2) \u2192 "
             "T2 read balance at deposit at src/bank.c:51 (event 3)")
    EDGE2 = ("T2 wrote limit at deposit at src/bank.c:52 (event 4) \u2192 "
             "T1 read limit at withdraw at src/bank.c:33 (event 5) (closed the cycle)")

    def test_text_shows_every_edge(self):
        out = demo("text")
        self.assertRegex(out, r"(?m)^demo: conflict-cycle at event 5 \(1 occurrence, observed\)$")
        self.assertIn("  edges:\n    " + self.EDGE1 + "\n    " + self.EDGE2 + "\n", out)
        self.assertIn("  transactions:\n"
                      "    T1's transaction at withdraw at src/bank.c:30 (event 0)\n"
                      "    T2's transaction at deposit at src/bank.c:50 (event 1)\n", out)
        self.assertIn("  variables: balance, limit\n", out)
        self.assertNotIn("other events:", out)  # every witness event is on an edge
        self.assertTrue(out.endswith("demo: 1 violation (1 occurrence)\n"), out)

    def test_report_write_gives_the_same_block(self):
        block = demo("text", "0", "report")
        self.assertIn(block, demo("text"))
        self.assertEqual(json.loads(demo("json", "0", "report")),
                         json.loads(demo("json"))["checkers"][0]["reports"][0])

    def test_json_edges_stacks_fingerprint(self):
        doc = json.loads(demo("json"))
        self.assertEqual(doc["tool"], "output-demo")
        self.assertEqual(doc["file"], "demo.std")
        r = doc["checkers"][0]["reports"][0]
        self.assertRegex(r["fingerprint"], r"^[0-9a-f]{16}$")
        self.assertEqual(r["edges"], [{"from": 0, "to": 1, "closing": False},
                                      {"from": 2, "to": 3, "closing": True}])
        self.assertEqual([e["transaction"] for e in r["events"]], [0, 1, 1, 0])
        self.assertEqual([e["kind"] for e in r["events"]], ["write", "read", "write", "read"])
        self.assertEqual(r["events"][0]["stack"],
                         [{"function": "withdraw", "file": "src/bank.c", "line": 31},
                          {"function": "main", "file": "src/main.c", "line": 12}])
        self.assertEqual(r["events"][1]["stack"],
                         [{"function": "deposit", "file": "src/bank.c", "line": 51}])
        self.assertEqual(r["transactions"][0]["stack"],
                         [{"function": "withdraw", "file": "src/bank.c", "line": 30}])
        self.assertEqual(r["events"][3]["description"],
                         "T1 read limit at withdraw at src/bank.c:33 (event 5)")
        self.assertEqual(r["transactions"][1]["description"],
                         "T2's transaction at deposit at src/bank.c:50 (event 1)")
        bare = json.loads(demo("json", "0", "nolocations"))["checkers"][0]["reports"][0]
        self.assertNotIn("stack", bare["events"][0])
        self.assertNotIn("stack", bare["transactions"][0])

    def test_fingerprint_survives_shifted_indexes(self):
        a = json.loads(demo("json"))["checkers"][0]["reports"][0]
        b = json.loads(demo("json"))["checkers"][0]["reports"][0]
        c = json.loads(demo("json", "7"))["checkers"][0]["reports"][0]
        self.assertEqual(c["event_index"], 12)
        self.assertEqual(a["fingerprint"], b["fingerprint"])
        self.assertEqual(a["fingerprint"], c["fingerprint"])

    def test_sarif_for_code_scanning(self):
        log = json.loads(demo("sarif"))
        run0 = log["runs"][0]
        rule = run0["tool"]["driver"]["rules"][0]
        self.assertEqual(rule["id"], "demo/conflict-cycle")
        for key in ("shortDescription", "fullDescription"):
            self.assertTrue(rule[key]["text"])
        self.assertTrue(rule["help"]["text"] and rule["help"]["markdown"])
        self.assertEqual(rule["defaultConfiguration"]["level"], "error")
        res = run0["results"][0]
        self.assertEqual(res["level"], "error")
        phys = res["locations"][0]["physicalLocation"]
        # the later event of the closing edge heads the result
        self.assertEqual(phys, {"artifactLocation": {"uri": "src/bank.c"},
                                "region": {"startLine": 33}})
        related = res["relatedLocations"]
        self.assertEqual([l["physicalLocation"]["region"]["startLine"] for l in related],
                         [31, 51, 52, 33])
        self.assertEqual(related[0]["message"]["text"],
                         "T1 wrote balance at withdraw at src/bank.c:31 (event 2)")
        flows = res["codeFlows"][0]["threadFlows"]
        self.assertEqual([f["id"] for f in flows], ["T1", "T2"])
        self.assertEqual([l["executionOrder"] for l in flows[0]["locations"]], [3, 6])
        fp = json.loads(demo("json"))["checkers"][0]["reports"][0]["fingerprint"]
        self.assertEqual(res["partialFingerprints"], {"atomicity/v1": fp})
        # without any known line: the input file stands in, no code flow
        bare = json.loads(demo("sarif", "0", "nolocations"))["runs"][0]["results"][0]
        self.assertEqual(bare["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                         "demo.std")
        self.assertNotIn("codeFlows", bare)

    def test_dot_graph(self):
        out = demo("dot")
        self.assertRegex(out, r"^digraph cycle0 \{\n")
        self.assertTrue(out.endswith("}\n"))
        self.assertEqual(len(re.findall(r"(?m)^  t[01] \[label=\"", out)), 2)
        edges = re.findall(r"(?m)^  (t\d) -> (t\d) \[label=\"([^\"]*)\"(.*)\];$", out)
        self.assertEqual([(a, b) for a, b, _, _ in edges], [("t0", "t1"), ("t1", "t0")])
        self.assertIn("T1 wrote balance at withdraw at src/bank.c:31 (event 2)\\n\u2192 T2 read",
                      edges[0][2])
        self.assertEqual(edges[0][3], "")
        self.assertIn("color=red", edges[1][3])
        self.assertIn("style=bold", edges[1][3])
        dot = shutil.which("dot")
        if dot:
            p = subprocess.run([dot, "-Tsvg"], input=out.encode(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)

    CUT = "recording stopped after 8 events (--max-events)"

    def test_cut_short_is_marked_in_every_format(self):
        # a document of a whole run says nothing of it
        self.assertNotIn("INCOMPLETE", demo("text"))
        self.assertIsNone(json.loads(demo("json"))["cut_short"])
        self.assertNotIn('id="cut-short"', demo("html"))
        whole = json.loads(demo("sarif"))["runs"][0]["invocations"][0]
        self.assertEqual((whole["executionSuccessful"], whole["toolExecutionNotifications"]),
                         (True, []))
        self.assertNotIn("INCOMPLETE", demo("dot"))
        # and a cut one says so in each
        text = demo("text", "0", "cutshort")
        self.assertTrue(text.endswith("demo: 1 violation (1 occurrence)\n"
                                      "input: INCOMPLETE, cut short: " + self.CUT + "\n"), text)
        self.assertEqual(json.loads(demo("json", "0", "cutshort"))["cut_short"], self.CUT)
        run0 = json.loads(demo("sarif", "0", "cutshort"))["runs"][0]
        inv = run0["invocations"][0]
        self.assertFalse(inv["executionSuccessful"])
        note = inv["toolExecutionNotifications"][0]
        self.assertEqual((note["level"], note["descriptor"]["id"], note["message"]["text"]),
                         ("warning", "input-cut-short", "input: INCOMPLETE, cut short: " + self.CUT))
        self.assertEqual(run0["properties"]["cut_short"], self.CUT)
        self.assertEqual(len(run0["results"]), 1)  # the results are still there
        page = demo("html", "0", "cutshort")
        banner = re.search(r'<p class="cut-short" id="cut-short">(.*?)</p>', page)
        self.assertTrue(banner, page[:2000])
        self.assertIn("INCOMPLETE input</strong>, cut short: " + self.CUT, banner.group(1))
        self.assertLess(banner.start(), page.index('<table class="checkers">'))
        dot = demo("dot", "0", "cutshort")
        self.assertTrue(dot.startswith("// input: INCOMPLETE, cut short: " + self.CUT + "\n"
                                       "digraph cycle0 {\n"), dot)

    def test_cut_short_is_escaped(self):
        nasty = 'a <b>"&\'\x1b[31m\nz'
        self.assertIn("input: INCOMPLETE, cut short: a <b>\"&'\\x1B[31m\\x0Az\n",
                      demo("text", "0", "cutshort", nasty))
        self.assertEqual(json.loads(demo("json", "0", "cutshort", nasty))["cut_short"], nasty)
        self.assertIn("cut short: a &lt;b&gt;&quot;&amp;&#39;", demo("html", "0", "cutshort", nasty))
        self.assertNotIn("<b>", demo("html", "0", "cutshort", nasty))
        dot = demo("dot", "0", "cutshort", nasty)
        self.assertEqual(dot.split("\n")[1], "digraph cycle0 {")

    def test_version_1_options_still_work(self):
        # a caller built against the first header: its smaller struct is read, nothing beyond
        for fmt in ("text", "json", "sarif", "html", "dot"):
            self.assertEqual(demo(fmt, "0", "v1"), demo(fmt), fmt)

    def test_atomcheck_dot(self):
        code, out, err = run("--format", "dot", VIOLATING)
        self.assertEqual(code, 1, err)
        # a graph per cycle with edges; a comment for a report without them
        self.assertRegex(out, r"(?s)^(digraph cycle\d+ \{\n.*\}\n|// aerodrome: .*\n)+$")


def shifted(trace, n):
    """trace with n unrelated events of a thread of its own in front: other event indexes,
    the same violations."""
    return "".join(f"filler|r(pad)|{900 + i % 3}\n" for i in range(n)) + trace


class Baseline(unittest.TestCase):
    def fingerprints(self, doc):
        return sorted(r["fingerprint"] for c in doc["checkers"] for r in c["reports"])

    def test_fingerprints_are_stable(self):
        with open(VIOLATING) as f:
            trace = f.read()
        with TempTrace(trace) as a, TempTrace(shifted(trace, 11)) as b:
            _, d1, _ = run_json("-c", "aerodrome", "-c", "velodrome", a)
            _, d2, _ = run_json("-c", "aerodrome", "-c", "velodrome", a)
            _, d3, _ = run_json("-c", "aerodrome", "-c", "velodrome", b)
        self.assertTrue(self.fingerprints(d1))
        self.assertEqual(self.fingerprints(d1), self.fingerprints(d2))
        self.assertEqual(self.fingerprints(d1), self.fingerprints(d3))

    def test_baseline_hides_old_keeps_new(self):
        old, new = rho2_copies(1), rho2_copies(2)  # new: the old violation plus another one
        with TempTrace(old) as old_path, TempTrace(new) as new_path, \
                TempTrace("") as base, TempTrace("") as sarif_base:
            code, out, err = run("--format", "json", old_path)
            self.assertEqual(code, 1, err)
            with open(base, "w") as f:
                f.write(out)
            code, out, err = run("--format", "sarif", old_path)
            with open(sarif_base, "w") as f:
                f.write(out)
            old_fp = self.fingerprints(json.loads(open(base).read()))
            for b in (base, sarif_base):
                # the same run against its own baseline: nothing new, exit 0
                code, out, err = run("--baseline", b, old_path)
                self.assertEqual(code, 0, err)
                self.assertIn("aerodrome: 1 known violation not shown (0 suppressed, "
                              "1 in the baseline)\naerodrome: no new violations\n", out)
                # one new violation: shown, exit 1
                code, doc, err = run_json("--baseline", b, new_path)
                self.assertEqual(code, 1, err)
                c = doc["checkers"][0]
                self.assertEqual((c["violations"], c["baselined"]), (1, 1))
                self.assertNotEqual(self.fingerprints(doc), old_fp)
                self.assertEqual(c["reports"][0]["transactions"][0]["thread"], "a1")

    def test_missing_baseline_is_2(self):
        code, _, err = run("--baseline", "/nonexistent/base.json", VIOLATING)
        self.assertEqual(code, 2)
        self.assertIn("atomcheck: /nonexistent/base.json: ", err)


class Suppressions(unittest.TestCase):
    def check(self, rules, trace, expect_exit, locations=None):
        with TempTrace(rules) as sup, TempTrace(trace) as path:
            args = ["--suppressions", sup]
            if locations:
                loc_file = path + ".locs"
                with open(loc_file, "w") as f:
                    f.write(locations)
                args += ["--locations", loc_file]
            try:
                code, out, err = run("--format", "json", *args, "-c", "aerodrome", path)
            finally:
                if locations:
                    os.unlink(loc_file)
        if code == 2 and "not written yet" in err:
            self.skipTest("this build's library has no suppression rules yet")
        self.assertEqual(code, expect_exit, err)
        return json.loads(out)["checkers"][0]

    LOCS = "0 src/teller.c:10 withdraw\n1 src/teller.c:20 deposit\n2 src/teller.c:11 withdraw\n" \
           "3 src/teller.c:21 deposit\n4 src/teller.c:22 deposit\n5 src/teller.c:12 withdraw\n"

    def test_by_checker_kind_function_file(self):
        with open(VIOLATING) as f:
            trace = f.read()
        for rules in ("checker:aerodrome\n", "kind:conflict-cycle\n", "# known\nfn:deposit\n",
                      "file:teller.c\n", "atomic:withdraw\n"):
            with self.subTest(rules=rules):
                c = self.check(rules, trace, 0, self.LOCS)
                self.assertEqual((c["violations"], c["suppressed"], c["reports"]), (0, 1, []))
        for rules in ("checker:velodrome\n", "fn:^main$\n", "file:other.c\n"):
            with self.subTest(rules=rules):
                c = self.check(rules, trace, 1, self.LOCS)
                self.assertEqual((c["violations"], c["suppressed"]), (1, 0))

    def test_bad_rule_is_2_with_line(self):
        with TempTrace("fn:ok\nbogus line\n") as sup:
            code, _, err = run("--suppressions", sup, VIOLATING)
        self.assertEqual(code, 2)
        if "not written yet" in err:
            self.skipTest("this build's library has no suppression rules yet")
        self.assertIn(f"atomcheck: {sup}:2:", err)


class Locations(unittest.TestCase):
    def test_map_gives_lines_everywhere(self):
        with TempTrace("0 src/a.c:10 withdraw\n# comment\n\n1 src/b.c:20\n5 src/a.c:12 withdraw\n") \
                as locs:
            code, out, err = run("--locations", locs, VIOLATING)
            self.assertEqual(code, 1, err)
            self.assertIn("    t1's transaction at withdraw at src/a.c:10 (event 0)\n", out)
            self.assertIn("    t2's transaction at src/b.c:20 (event 1)\n", out)
            code, out, err = run("--format", "sarif", "--locations", locs, VIOLATING)
            self.assertEqual(code, 1, err)
            res = json.loads(out)["runs"][0]["results"][0]
            phys = res["locations"][0]["physicalLocation"]
            self.assertIn(phys["artifactLocation"]["uri"], ("src/a.c", "src/b.c"))
            self.assertIn(phys["region"]["startLine"], (10, 12, 20))
            code, doc, err = run_json("--locations", locs, VIOLATING)
            t = doc["checkers"][0]["reports"][0]["transactions"][0]
            self.assertEqual(t["stack"], [{"function": "withdraw", "file": "src/a.c", "line": 10}])

    def test_bad_map_is_2_with_line(self):
        for text, line in (("0 a.c:1\nnot a line\n", 2), ("x a.c:1\n", 1), ("3 a.c\n", 1),
                           ("3 a.c:0\n", 1)):
            with self.subTest(text=text), TempTrace(text) as locs:
                code, _, err = run("--locations", locs, VIOLATING)
                self.assertEqual(code, 2)
                self.assertIn(f"atomcheck: {locs}:{line}: expected 'LOC FILE:LINE [FUNCTION]'",
                              err)

    def test_html_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            page = os.path.join(tmp, "r.html")
            code, out, err = run("--html", page, VIOLATING)
            self.assertEqual(code, 1, err)
            self.assertTrue(os.path.exists(page))
            self.assertRegex(out, r"(?m)^aerodrome: 1 violation")


class Convert(unittest.TestCase):
    """--convert between STD and .atb (doc/atomcheck.md, doc/trace-format.md)."""

    CHECKERS = ("aerodrome", "velodrome", "commit-node", "block", "reduction", "tso")

    @staticmethod
    def event_lines(path):
        """Lines of a STD file without plain comments and blank lines (#name lines kept)."""
        with open(path, "rb") as f:
            lines = f.read().replace(b"\r\n", b"\n").split(b"\n")
        return [l for l in lines
                if l.strip() and not (l.lstrip().startswith(b"#") and
                                      not re.match(rb"\s*#name\s", l))]

    def test_corpus_round_trip(self):
        names = sorted(f for f in os.listdir(CORPUS) if f.endswith(".std"))
        self.assertGreater(len(names), 10)
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                with self.subTest(trace=name):
                    src = os.path.join(CORPUS, name)
                    atb = os.path.join(tmp, name[:-4] + ".atb")
                    back = os.path.join(tmp, name)
                    code, _, err = run("--convert", src, atb)
                    self.assertEqual(code, 0, err)
                    with open(atb, "rb") as f:
                        self.assertEqual(f.read(8), b"ATB\0\r\n\x1a\n")
                    code, _, err = run("--convert", atb, back)
                    self.assertEqual(code, 0, err)
                    with open(back, "rb") as f:  # canonical: no comments, LF
                        self.assertEqual(f.read().count(b"\r"), 0)
                    self.assertEqual(self.event_lines(back), self.event_lines(src))
                    for c in self.CHECKERS:
                        a = run("--format", "json", "-c", c, src)
                        b = run("--format", "json", "-c", c, atb)
                        self.assertEqual(a[0], b[0], f"{c}: {a[2]} / {b[2]}")
                        ja, jb = json.loads(a[1]), json.loads(b[1])
                        for j in (ja, jb):
                            j.pop("trace", None)
                            j.pop("input", None)
                        self.assertEqual(json.dumps(ja, sort_keys=True).replace(src, "F"),
                                         json.dumps(jb, sort_keys=True).replace(atb, "F"), c)

    def test_directives_and_stdin_stdout(self):
        text = ("#name thread t1 the teller\nt1|begin|1\n#name var x the balance\n"
                "t1|r(x)|2\nt2|w(x)|3\nt1|w(x)|4\nt1|end|5\n#name loc 5 leave\n")
        with tempfile.TemporaryDirectory() as tmp:
            atb = os.path.join(tmp, "t.atb")
            code, _, err = run("--convert", "-", atb, stdin=text)
            self.assertEqual(code, 0, err)
            with open(atb, "rb") as f:
                data = f.read()
            code, out, err = run("--convert", "-", "-", stdin=data)
            self.assertEqual((code, err), (0, ""))
            self.assertEqual(out, text)
            code, out, _ = run(atb)
            self.assertEqual(code, 1)
            self.assertIn("the balance", out)

    def test_bad_input_is_2_and_leaves_no_output(self):
        with tempfile.TemporaryDirectory() as tmp:
            atb = os.path.join(tmp, "t.atb")
            back = os.path.join(tmp, "t.std")
            self.assertEqual(run("--convert", VIOLATING, atb)[0], 0)
            with open(atb, "rb") as f:
                data = f.read()
            with open(atb, "wb") as f:
                f.write(data[:-20])
            code, _, err = run("--convert", atb, back)
            self.assertEqual(code, 2)
            self.assertIn(f"atomcheck: {atb}: truncated: block 1 at byte 16 has", err)
            self.assertFalse(os.path.exists(back))
            code, _, err = run(atb)
            self.assertEqual(code, 2)
            self.assertIn("truncated", err)
            self.assertEqual(run("--convert", atb)[0], 2)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v", *sys.argv[1:]])
