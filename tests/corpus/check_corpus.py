#!/usr/bin/env python3
"""Check atomcheck's verdicts on every trace of the corpus against NAME.expected.json.

    check_corpus.py --atomcheck PATH [--corpus DIR] [NAME ...]

For each DIR/NAME.std, runs atomcheck once with every checker spec that the rows of CHECKS need
(`--format json`), then compares each key of NAME.expected.json that has a row (README.md in this
directory says what the keys mean). Keys without a row are listed as skipped. Prints one line
per file (PASS/FAIL, with the reasons) and a summary; exits 1 if anything failed, 2 if it could
not run at all.

To check a key when its checker exists, add one row to CHECKS: the key, the checker specs whose
output it is compared with, and the comparison function.
"""

import argparse
import glob
import json
import os
import subprocess
import sys


def verdict(expected, results):
    """Boolean keys: true iff every listed checker reports no violation."""
    errors = []
    for spec, checker in results.items():
        clean = checker["violations"] == 0
        if clean != expected:
            errors.append(f"{spec}: {checker['violations']} violation(s), expected "
                          f"{'none' if expected else 'some'}")
    return errors


def first_violation_index(expected, results):
    """The smallest event_index among each checker's reports."""
    errors = []
    for spec, checker in results.items():
        indexes = [r["event_index"] for r in checker["reports"]]
        got = min(indexes) if indexes else None
        if got != expected:
            errors.append(f"{spec}: first violation at {got}, expected {expected}")
    return errors


def txn_set(report):
    return {f"{t['thread']}@{t['begin_index']}" for t in report["transactions"]}


def cycle(expected, results):
    """null: no report. A list of thread@begin_index: some report whose transactions are that
    set (a cycle may be given in any rotation)."""
    errors = []
    for spec, checker in results.items():
        reports = checker["reports"]
        if expected is None:
            if reports:
                errors.append(f"{spec}: {len(reports)} report(s), expected no cycle")
            continue
        want = set(expected)
        if not any(txn_set(r) == want for r in reports):
            got = [sorted(txn_set(r)) for r in reports]
            errors.append(f"{spec}: no report with transactions {sorted(want)}; got {got}")
    return errors


def kind_verdict(kind):
    """Boolean keys judged on one report kind: true iff no checker made a report of that kind
    (potential_deadlock: true iff some checker did)."""
    def compare(expected, results):
        errors = []
        for spec, checker in results.items():
            clean = not any(r["kind"] == kind for r in checker["reports"])
            if clean != expected:
                errors.append(f"{spec}: {'no' if clean else 'a'} {kind} report, expected "
                              f"{'none' if expected else 'one'}")
        return errors
    return compare


def negate(compare):
    return lambda expected, results: compare(not expected, results)


def pattern_matches(expected, results):
    """Exactly the listed matches [pattern, u, u', l1, l2] (l2 null for patterns 1-5), one
    report each: u and u' are thread@begin_index, l1 and l2 variable names."""
    errors = []
    want = {tuple(m) for m in expected}
    for spec, checker in results.items():
        got = set()
        for r in checker["reports"]:
            txns = [f"{t['thread']}@{t['begin_index']}" for t in r["transactions"]]
            names = r["variables"] + [None]
            got.add((int(r["kind"].split("-")[1]), *txns, names[0], names[1]))
        if got != want:
            errors.append(f"{spec}: missing {sorted(want - got, key=str)}, "
                          f"unexpected {sorted(got - want, key=str)}")
    return errors


class Row:
    def __init__(self, key, specs, compare):
        self.key = key
        self.specs = specs
        self.compare = compare


# One row per checked key of *.expected.json.
CHECKS = [
    Row("conflict_serializable", ["aerodrome", "aerodrome:variant=basic", "velodrome"], verdict),
    Row("aerodrome_first_violation_index", ["aerodrome", "aerodrome:variant=basic"],
        first_violation_index),
    Row("conflict_cycle", ["velodrome"], cycle),
    Row("atomic_set_violations", ["race-automata:sets=one"], pattern_matches),
    Row("conflict_atomic", ["commit-node:mode=conflict"], kind_verdict("commit-nodes")),
    Row("view_atomic", ["commit-node:mode=view"], kind_verdict("commit-nodes")),
    Row("view_atomic", ["block:scope=all"], verdict),
    Row("potential_deadlock", ["commit-node"], negate(kind_verdict("potential-deadlock"))),
    Row("tso_serializable", ["tso:mode=trace"], verdict),
]

# Built-in checkers that no row checks, each with the reason. Every other checker that
# `atomcheck --list-checkers` names must appear in a row of CHECKS: a new checker fails this
# script until it has expectations here or a reason to have none.
NOT_IN_CORPUS = {
    "null": "it decides nothing",
    "reduction": "Lipton reducibility is none of the corpus truths (conflict/view atomicity, "
                 "serializability, TSO); tests/unit/test_reduction.c checks its verdicts",
}


def unchecked_checkers(atomcheck):
    """Listed checkers that neither a row of CHECKS nor NOT_IN_CORPUS covers."""
    p = subprocess.run([atomcheck, "--list-checkers"], stdout=subprocess.PIPE, check=True,
                       timeout=60)
    listed = [line.split()[0] for line in p.stdout.decode().splitlines() if line.strip()]
    covered = {spec.split(":")[0] for row in CHECKS for spec in row.specs}
    return [n for n in listed if n not in covered and n not in NOT_IN_CORPUS]


# Keys whose checkers are not built yet (reported as skipped). When a checker lands, move its key
# into CHECKS with the spec and comparison named here, for example
#   Row("conflict_atomic", ["commit-node:mode=conflict"], verdict)
#   Row("view_atomic", ["commit-node:mode=view", "block"], verdict)
#   Row("tso_serializable", ["tso:mode=trace"], verdict)
PENDING = {
}


def run_atomcheck(atomcheck, specs, trace):
    args = [atomcheck, "--format", "json"]
    for spec in specs:
        args += ["-c", spec]
    args.append(trace)
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"atomcheck exited with {p.returncode}: {p.stderr.decode().strip()}")
    doc = json.loads(p.stdout)
    by_spec = {c["spec"]: c for c in doc["checkers"]}
    any_violation = any(c["violations"] for c in doc["checkers"])
    if p.returncode != (1 if any_violation else 0):
        raise RuntimeError(f"exit status {p.returncode} does not match the reports")
    return by_spec


def check_file(atomcheck, trace, expected_path):
    """@return (failures, skipped keys)."""
    with open(expected_path) as f:
        expected = json.load(f)
    rows = [row for row in CHECKS if row.key in expected]
    specs = []
    for row in rows:
        for spec in row.specs:
            if spec not in specs:
                specs.append(spec)
    skipped = sorted(key for key in expected if key not in {row.key for row in CHECKS})
    if not rows:
        return [], skipped
    try:
        by_spec = run_atomcheck(atomcheck, specs, trace)
    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
        return [f"atomcheck: {e}"], skipped
    failures = []
    for row in rows:
        results = {spec: by_spec[spec] for spec in row.specs}
        for message in row.compare(expected[row.key], results):
            failures.append(f"{row.key}: {message}")
    return failures, skipped


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--atomcheck", required=True, help="path of the atomcheck binary")
    ap.add_argument("--corpus", default=here, help="directory of NAME.std and NAME.expected.json")
    ap.add_argument("names", nargs="*", help="only these traces (NAME or NAME.std)")
    opts = ap.parse_args()

    traces = sorted(glob.glob(os.path.join(opts.corpus, "*.std")))
    if opts.names:
        wanted = {n[:-4] if n.endswith(".std") else n for n in opts.names}
        traces = [t for t in traces if os.path.basename(t)[:-4] in wanted]
    if not traces:
        print(f"check_corpus: no traces in {opts.corpus}", file=sys.stderr)
        return 2

    missing = unchecked_checkers(opts.atomcheck)
    if missing:
        print(f"FAIL: no corpus expectations for {', '.join(missing)} (add a row to CHECKS, or "
              "the reason to NOT_IN_CORPUS)")
        return 1

    passed = failed = 0
    all_skipped = set()
    for trace in traces:
        name = os.path.basename(trace)[:-4]
        expected_path = os.path.join(opts.corpus, name + ".expected.json")
        if not os.path.exists(expected_path):
            print(f"FAIL {name}: no {name}.expected.json")
            failed += 1
            continue
        failures, skipped = check_file(opts.atomcheck, trace, expected_path)
        all_skipped.update(skipped)
        if failures:
            failed += 1
            print(f"FAIL {name}")
            for f in failures:
                print(f"     {f}")
        else:
            passed += 1
            print(f"PASS {name}")

    if all_skipped:
        print("skipped keys (no checker row yet): " + ", ".join(
            f"{k} [{PENDING[k]}]" if k in PENDING else k for k in sorted(all_skipped)))
    print(f"corpus: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
