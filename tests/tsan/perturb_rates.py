"""How often aerodrome sees each demo's bug, with and without schedule=perturb.

For each demo of doc/tsan-rt.md, "Finding bugs that hide", runs the buggy program and its fixed
twin RUNS times (default 20) with the natural schedule and RUNS times with schedule=perturb
(seeds 1..RUNS), and prints a Markdown table of the runs in which aerodrome reported a
violation. Not part of the default test run (it measures rates, it asserts nothing about them):

    meson test -C build --benchmark --suite perturb-rates -v
    TSAN_DEMO_DIR=build/examples/tsan-rt/demo TSAN_DEMO_SRC=examples/tsan-rt/demo \\
        python3 tests/tsan/perturb_rates.py [RUNS]

It fails only when a fixed twin is reported (the checkers are sound: that would be a bug)."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

DEMO_DIR = os.environ.get("TSAN_DEMO_DIR", "")
DEMO_SRC = os.environ.get("TSAN_DEMO_SRC", "")

# (shape, program built without a forced schedule, its source)
DEMOS = [
    ("lost update with a local copy", "counter-natural", "counter"),
    ("two-stage locking", "withdraw-natural", "withdraw"),
    ("check-then-act under the wrong lock", "wrong_lock", "wrong_lock"),
    ("reordered initialization", "publish", "publish"),
    ("StringBuffer append", "append", "append"),
    ("driver increment/stop", "driver", "driver"),
]


def demo_options(source):
    with open(os.path.join(DEMO_SRC, source + ".c")) as f:
        return re.search(r"ATOMICITY_OPTIONS: (\S+)", f.read()).group(1)


def reported(exe, options, report):
    env = dict(os.environ)
    env["ATOMICITY_OPTIONS"] = options + " checkers=aerodrome format=json report=" + report
    subprocess.run([exe], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=120, check=False)
    with open(report) as f:
        doc = json.load(f)
    return doc["checkers"][0]["violations"] > 0


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    tmp = tempfile.mkdtemp(prefix="perturb-rates-")
    report = os.path.join(tmp, "report.json")
    print("| demo | program | natural | perturb | fixed twin, natural | fixed twin, perturb "
          "| ms per perturbed run |")
    print("|---|---|---|---|---|---|---|")
    false_alarm = False
    for shape, prog, source in DEMOS:
        opts = demo_options(source)
        counts = {}
        ms = 0.0
        for fixed in (False, True):
            exe = os.path.join(DEMO_DIR, prog + ("-fixed" if fixed else ""))
            for mode in ("natural", "perturb"):
                n = 0
                for i in range(runs):
                    extra = " schedule=perturb seed=%d" % (i + 1) if mode == "perturb" else ""
                    start = time.monotonic()
                    n += reported(exe, opts + extra, report)
                    if mode == "perturb" and not fixed:
                        ms += (time.monotonic() - start) * 1000
                counts[fixed, mode] = n
        false_alarm |= counts[True, "natural"] > 0 or counts[True, "perturb"] > 0
        print("| %s | `%s` | %d/%d | %d/%d | %d/%d | %d/%d | %.0f |" % (
            shape, prog, counts[False, "natural"], runs, counts[False, "perturb"], runs,
            counts[True, "natural"], runs, counts[True, "perturb"], runs, ms / runs))
        sys.stdout.flush()
    os.remove(report) if os.path.exists(report) else None
    os.rmdir(tmp)
    return 1 if false_alarm else 0


if __name__ == "__main__":
    sys.exit(main())
