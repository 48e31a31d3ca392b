#!/usr/bin/env python3
"""Overhead of tsan-rt (doc/performance.md, "tsan-rt"): each demo, one compute-heavy program and
the --extra programs (an FFT-like kernel, a work queue, a compression pipeline), built four ways
and timed (best of --repeat runs, wall clock; the ratios are taken within this one run):

  plain     clang -O1 -fno-inline -g                      (no instrumentation)
  tsan      the same with -fsanitize=thread               (clang's own ThreadSanitizer)
  rt-off    the same with -fno-sanitize-link-runtime -mllvm -tsan-instrument-read-before-write=1,
            linked with -latomicity-rt, run without ATOMICITY_OPTIONS (the runtime idles)
  rt        the same, run with the program's atomic functions and checkers=aerodrome
  rt-2      the same, checkers=aerodrome,velodrome
  rt-all    the same as rt with skip_idle=no (every access recorded, the owned-memory path on)

Usage: bench_tsan_rt.py --clang CLANG --rt-dir DIR --demo-src DIR --compute FILE
                       [--extra FILE ...] [--repeat N] [--only NAME ...]"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DEMOS = ["counter", "lazy_init", "transfer", "withdraw", "vector"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clang", required=True)
    ap.add_argument("--rt-dir", required=True)
    ap.add_argument("--demo-src", required=True)
    ap.add_argument("--compute", required=True)
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", action="append", default=[])
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="bench-tsan-rt-")
    base = ["-O1", "-fno-inline", "-g", "-pthread"]
    builds = {
        "plain": base,
        "tsan": base + ["-fsanitize=thread"],
        "rt": base + ["-fsanitize=thread", "-fno-sanitize-link-runtime", "-mllvm",
                      "-tsan-instrument-read-before-write=1"],
    }
    link_rt = ["-L" + a.rt_dir, "-latomicity-rt", "-Wl,-rpath," + a.rt_dir]

    programs = [(d, os.path.join(a.demo_src, d + ".c")) for d in DEMOS]
    programs.append(("compute", a.compute))
    for src in a.extra:
        programs.append((os.path.basename(src)[:-2].replace("tsan_", ""), src))
    if a.only:
        programs = [p for p in programs if p[0] in a.only]

    def opts_of(src):
        with open(src) as f:
            m = re.search(r"ATOMICITY_OPTIONS: (\S+)", f.read())
        return m.group(1) if m else "atomic=add_chunk"

    def timed(cmd, env):
        best = None
        out = None
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
            dt = time.perf_counter() - t0
            best = dt if best is None or dt < best else best
            out = p
        return best, out

    print("%-10s %9s %9s %9s %9s %9s %9s %8s %10s %8s %9s" % (
        "program", "plain s", "tsan s", "rt-off s", "rt s", "rt-2 s", "rt-all s", "rt/plain",
        "tsan/plain", "rt/tsan", "events"))
    for name, src in programs:
        exes = {}
        for kind, flags in builds.items():
            exe = os.path.join(tmp, name + "-" + kind)
            cmd = [a.clang] + flags + [src, "-o", exe, "-lm"] + (link_rt if kind == "rt" else [])
            subprocess.run(cmd, check=True)
            exes[kind] = exe
        env = dict(os.environ)
        env.pop("ATOMICITY_OPTIONS", None)
        env_tsan = dict(env, TSAN_OPTIONS="report_bugs=0")
        t_plain, p_plain = timed([exes["plain"]], env)
        t_tsan, _ = timed([exes["tsan"]], env_tsan)
        t_off, _ = timed([exes["rt"]], dict(env, ATOMICITY_OPTIONS="verbosity=0"))
        opts = opts_of(src)
        report = os.path.join(tmp, "r.json")
        t_rt, p_rt = timed([exes["rt"]], dict(env, ATOMICITY_OPTIONS=opts +
                                              " checkers=aerodrome format=json report=" + report))
        with open(report) as f:
            events = int(re.search(r'"events": (\d+)', f.read()).group(1))
        t_rt2, _ = timed([exes["rt"]], dict(env, ATOMICITY_OPTIONS=opts +
                                            " checkers=aerodrome,velodrome verbosity=0"))
        t_all, _ = timed([exes["rt"]], dict(env, ATOMICITY_OPTIONS=opts +
                                            " checkers=aerodrome skip_idle=no verbosity=0"))
        if p_rt.stdout != p_plain.stdout:
            print("%s: output differs under the runtime" % name, file=sys.stderr)
            return 1
        print("%-10s %9.4f %9.4f %9.4f %9.4f %9.4f %9.4f %8.1f %10.1f %8.1f %9d" % (
            name, t_plain, t_tsan, t_off, t_rt, t_rt2, t_all, t_rt / t_plain, t_tsan / t_plain,
            t_rt / t_tsan, events), flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
