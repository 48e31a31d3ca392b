#!/usr/bin/env python3
"""The SARIF output against GitHub code scanning's ingestion rules.

Runs the SARIF multitool (`validate --rule-kind "Sarif;Ghas"`: the SARIF specification's rules
and those of GitHub Advanced Security) on the SARIF of several runs: the output demo with and
without described locations and with its input cut short, and atomcheck on corpus traces with
and without a --locations map.
Fails on any error or warning. Exit 77 (skipped) when the multitool is not installed: .ci/deps
installs it with npm into build-npm/ of the source tree; SARIF_MULTITOOL names another binary.

Environment: ATOMCHECK, OUTPUT_DEMO, ATOM_CORPUS_DIR, SARIF_MULTITOOL (optional).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CORPUS = os.environ.get("ATOM_CORPUS_DIR", os.path.join(ROOT, "tests", "corpus"))


def multitool():
    named = os.environ.get("SARIF_MULTITOOL")
    if named:
        return named
    local = os.path.join(ROOT, "build-npm", "node_modules", "@microsoft", "sarif-multitool-linux",
                         "Sarif.Multitool")
    if os.path.isfile(local) and os.access(local, os.X_OK):
        return local
    return shutil.which("sarif-multitool")


def main():
    tool = multitool()
    if not tool:
        if os.environ.get("CI") == "true":
            print("FAIL: the SARIF multitool is not installed, and CI must validate the SARIF "
                  "(sh .ci/deps installs it)")
            return 1
        print("SKIP: the SARIF multitool is not installed (sh .ci/deps installs it)")
        return 77
    atomcheck, demo = os.environ["ATOMCHECK"], os.environ["OUTPUT_DEMO"]
    with tempfile.TemporaryDirectory() as tmp:
        locs = os.path.join(tmp, "locs.txt")
        with open(locs, "w") as f:
            # every loc of the rho2 traces, as lines of two source files
            for loc in range(16):
                f.write(f"{loc} src/{'bank' if loc % 2 else 'teller'}.c:{10 + loc} fn{loc}\n")
        runs = {
            "demo": [demo, "sarif"],
            "demo-no-locations": [demo, "sarif", "0", "nolocations"],
            "demo-cut-short": [demo, "sarif", "0", "cutshort"],
        }
        traces = ["aerodrome-rho2.std", "aerodrome-rho1.std", "hammer-fig3b.std"]
        for t in traces:
            path = os.path.join(CORPUS, t)
            checkers = ["-c", "aerodrome", "-c", "velodrome", "-c", "commit-node", "-c", "block",
                        "-c", "race-automata"]
            runs[t] = [atomcheck, "--format", "sarif", *checkers, path]
            runs[t + "-locations"] = [atomcheck, "--format", "sarif", "--locations", locs,
                                      *checkers, path]
        files = []
        for name, cmd in runs.items():
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                               cwd=tmp)
            if p.returncode not in (0, 1):
                print(f"{name}: exit {p.returncode}: {p.stderr.decode()}")
                return 1
            out = os.path.join(tmp, name + ".sarif")
            with open(out, "wb") as f:
                f.write(p.stdout)
            json.loads(p.stdout)
            files.append(out)
        log = os.path.join(tmp, "validation.sarif")
        p = subprocess.run([tool, "validate", "--rule-kind", "Sarif;Ghas", "--output", log,
                            *files], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=300)
        print(p.stdout.decode("utf-8", "replace"))
        if not os.path.exists(log):
            print(f"the multitool wrote no log (exit {p.returncode})")
            return 1
        with open(log, encoding="utf-8-sig") as f:
            results = [r for run in json.load(f)["runs"] for r in run.get("results", [])]
        bad = [r for r in results if r.get("level", "warning") in ("error", "warning")]
        for r in bad:
            print(r.get("level", "warning"), r["ruleId"], r["message"].get("arguments"))
        print(f"{len(files)} SARIF logs validated: {len(bad)} errors or warnings")
        return 1 if bad or p.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
