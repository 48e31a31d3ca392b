#!/usr/bin/env python3
"""The verdict table of doc/choosing.md (every checker on every corpus trace), regenerated.

    choosing_table.py --atomcheck PATH --corpus DIR --doc doc/choosing.md [--write]

Runs atomcheck once per trace of DIR with every checker (default arguments), builds the table
from the JSON verdicts and the truth of DIR/NAME.expected.json, and compares it with the table
between the marks <!-- verdict-table:begin --> and <!-- verdict-table:end --> of the doc. Exit
status 1 (with a diff) if they differ, so the doc cannot drift from what the checkers do;
--write replaces the table in the doc instead.
"""
import argparse
import difflib
import glob
import json
import os
import subprocess
import sys

# Checkers listed by `atomcheck --list-checkers` that decide nothing, so they get no column.
NOT_CHECKING = {"null"}


def checkers(atomcheck):
    """The built-in checkers, in listing order (a new one gets a column: the doc's table then
    differs until it is regenerated)."""
    p = subprocess.run([atomcheck, "--list-checkers"], stdout=subprocess.PIPE, check=True,
                       timeout=60)
    names = [line.split()[0] for line in p.stdout.decode().splitlines() if line.strip()]
    return [n for n in names if n not in NOT_CHECKING]


CHECKERS = []  # filled by main() from --list-checkers

# Columns of the truth, from NAME.expected.json (tests/corpus/README.md).
TRUTH = [("conflict_serializable", "CS"), ("conflict_atomic", "CA"), ("view_atomic", "VA"),
         ("tso_serializable", "TSO")]

BEGIN = "<!-- verdict-table:begin -->"
END = "<!-- verdict-table:end -->"


def verdicts(atomcheck, trace):
    """{checker: cell text} for one trace."""
    args = [atomcheck, "--format", "json"]
    for c in CHECKERS:
        args += ["-c", c]
    p = subprocess.run(args + [trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    if p.returncode not in (0, 1, 3):
        raise SystemExit(f"{trace}: atomcheck exited {p.returncode}: {p.stderr.decode()}")
    doc = json.loads(p.stdout)
    cells = {}
    for c in doc["checkers"]:
        n = c["violations"]
        kinds = {r["kind"] for r in c["reports"]}
        cell = "·" if n == 0 else str(n)
        if "potential-deadlock" in kinds:
            cell += " (deadlock)"
        if not c["complete"]:
            cell += " (incomplete)"
        cells[c["name"]] = cell
    return cells


def table(atomcheck, corpus):
    traces = sorted(glob.glob(os.path.join(corpus, "*.std")))
    head = ["trace"] + [short for _, short in TRUTH] + [f"`{c}`" for c in CHECKERS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    flagged = {c: 0 for c in CHECKERS}
    for trace in traces:
        name = os.path.basename(trace)[:-len(".std")]
        with open(os.path.join(corpus, name + ".expected.json")) as f:
            truth = json.load(f)
        cells = verdicts(atomcheck, trace)
        row = [f"`{name}`"]
        for key, _ in TRUTH:
            row.append("yes" if truth.get(key) else "**no**")
        for c in CHECKERS:
            row.append(cells[c])
            flagged[c] += cells[c] != "·"
        lines.append("| " + " | ".join(row) + " |")
    lines.append("| traces flagged | | | | | "
                 + " | ".join(f"{flagged[c]} of {len(traces)}" for c in CHECKERS) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--atomcheck", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--doc", required=True)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    with open(a.doc, encoding="utf-8") as f:
        text = f.read()
    try:
        i = text.index(BEGIN) + len(BEGIN) + 1
        j = text.index(END)
    except ValueError:
        raise SystemExit(f"{a.doc}: no {BEGIN} ... {END} marks")
    CHECKERS[:] = checkers(a.atomcheck)
    want = table(a.atomcheck, a.corpus)
    have = text[i:j]
    if a.write:
        with open(a.doc, "w", encoding="utf-8") as f:
            f.write(text[:i] + want + text[j:])
        return 0
    if have == want:
        print(f"{a.doc}: the verdict table matches the checkers' verdicts")
        return 0
    sys.stdout.writelines(difflib.unified_diff(
        have.splitlines(True), want.splitlines(True), f"{a.doc} (as written)",
        "as the checkers decide now"))
    print(f"{a.doc}: the verdict table is out of date; regenerate it with --write")
    return 1


if __name__ == "__main__":
    sys.exit(main())
