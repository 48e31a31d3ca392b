#!/usr/bin/env python3
"""Docs that cannot drift: run every example of README.md and doc/*.md and compare.

Every fenced block that shows something runnable is checked, or says why not:

* A transcript (a block whose first line starts with "$ "): each "$ COMMAND" runs in the
  source directory (through bash; stdout and stderr together); the lines after it, up to the
  next "$ ", must be its output. "$ echo $?" shows the previous command's exit status.
* A block of output after  <!-- doc-test: output of: COMMAND -->  is COMMAND's output;
  after  <!-- doc-test: output (loose) of: COMMAND -->  numbers and the directories before
  examples/ or tests/ in paths may differ (a program's run: event indexes, where it was built).
* A ```json block after  <!-- doc-test: json of: COMMAND -->  must be contained in COMMAND's
  JSON output (every member shown has that value; arrays have the length shown);
  <!-- doc-test: json of: COMMAND at KEY.KEY -->  compares a fragment (a whole value, or the
  member "KEY": value); a KEY that is a number indexes an array (checkers.0.reports.0).
* A ```c block is compiled against the library and run (exit status 0); a ```python block is
  run with the binding; either one's output is compared with the next block when that block
  follows  <!-- doc-test: output of the block above -->.
* A ```sh block after  <!-- doc-test: run -->  runs and must exit 0.
* <!-- doc-test: skip REASON -->  before a block leaves it unchecked; the reason is required.
A ```c/```python/```json/```sh block or a transcript with none of these marks is an error.

In expected output a line "..." matches any number of lines, and "<ANY>" inside a line
matches any text. Commands find atomcheck, the tsan-rt demos' directory ($DEMO), the build
directory ($BUILD) and the library through the environment (Runner.env).

usage: check_docs.py SOURCE_DIR BUILD_DIR [FILE.md...]
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARK = re.compile(r"<!--\s*doc-test:\s*(.*?)\s*-->")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")


class Block:
    def __init__(self, path, line, lang, lines, mark):
        self.path, self.line, self.lang, self.lines, self.mark = path, line, lang, lines, mark

    def where(self):
        return "%s:%d" % (self.path, self.line)


def blocks_of(path):
    """The fenced blocks of a Markdown file, each with the doc-test mark just before it."""
    out, mark, lines = [], None, open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = MARK.search(lines[i])
        if m:
            mark = m.group(1)
            i += 1
            continue
        f = FENCE.match(lines[i])
        if f:
            indent, lang, start = len(f.group(1)), f.group(2), i + 1
            body = []
            i += 1
            while i < len(lines) and not FENCE.match(lines[i]):
                body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
                i += 1
            out.append(Block(path, start, lang, body, mark))
            mark = None
        elif lines[i].strip():
            mark = None if not lines[i].lstrip().startswith("<!--") else mark
        i += 1
    return out


def line_matches(pattern, text):
    if "<ANY>" not in pattern:
        return pattern == text
    parts = [re.escape(p) for p in pattern.split("<ANY>")]
    return re.fullmatch(".*".join(parts), text) is not None


def output_matches(expected, actual):
    """Lines, with "..." matching any run of lines (backtracking; outputs are short)."""
    def go(i, j):
        if i == len(expected):
            return j == len(actual)
        if expected[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and line_matches(expected[i], actual[j]) and go(i + 1, j + 1)
    return go(0, 0)


def loosen(line):
    """A line of a program's run, without what changes from run to run and from machine to
    machine: numbers (event indexes) and the directories before a source path."""
    line = re.sub(r"(?<![\w.])(/[^\s:]*/|(\.\./)+)(?=examples/|tests/)", "", line)
    return re.sub(r"\d+", "N", line)


def strip_trailing(lines):
    lines = [l.rstrip() for l in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def json_contains(expected, actual, path="$"):
    """None if expected is contained in actual, else where it differs."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return path
        for k, v in expected.items():
            if k not in actual:
                return "%s.%s (missing)" % (path, k)
            d = json_contains(v, actual[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return "%s (length %s, shown %d)" % (path, len(actual) if isinstance(actual, list)
                                                  else "-", len(expected))
        for i, (e, a) in enumerate(zip(expected, actual)):
            d = json_contains(e, a, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if expected == actual else "%s (%r, shown %r)" % (path, actual, expected)


class Runner:
    def __init__(self, src, build):
        self.src, self.build = src, build
        self.tmp = tempfile.mkdtemp(prefix="doctest.")
        bindir = os.path.join(self.tmp, "bin")
        os.mkdir(bindir)
        # Python examples run in the temporary directory (the files they write land there) and
        # see the repository's tests/ and doc/ as the reader does from the source tree.
        for d in ("tests", "doc"):
            os.symlink(os.path.join(src, d), os.path.join(self.tmp, d))
        for name, rel in (("atomcheck", "examples/atomcheck/atomcheck"),):
            os.symlink(os.path.join(build, rel), os.path.join(bindir, name))
        lib = os.path.join(build, "lib", "libatomicity.so.1")
        self.env = dict(os.environ)
        self.env.update({
            "PATH": bindir + os.pathsep + self.env.get("PATH", ""),
            "ATOMICITY_LIBRARY": lib,
            "PYTHONPATH": os.path.join(src, "bindings", "python"),
            "DEMO": os.path.join(build, "examples", "tsan-rt", "demo"),
            "BUILD": build,
            "LC_ALL": "C.UTF-8",
            "COLUMNS": "100",
        })
        self.env.pop("ATOMICITY_OPTIONS", None)
        self.status = 0

    def sh(self, command, cwd=None):
        p = subprocess.run(["bash", "-c", command], cwd=cwd or self.src, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        self.status = p.returncode
        return p.stdout.decode("utf-8", "replace")

    def transcript(self, b):
        errors, i = [], 0
        lines = b.lines
        while i < len(lines):
            if not lines[i].startswith("$ "):
                return ["line %d: text before the first command" % (b.line + i + 1)]
            command, i = lines[i][2:], i + 1
            expected = []
            while i < len(lines) and not lines[i].startswith("$ "):
                expected.append(lines[i])
                i += 1
            if command.strip() == "echo $?":
                actual = str(self.status)
            else:
                actual = self.sh(command)
            exp, act = strip_trailing(expected), strip_trailing(actual.split("\n"))
            if not output_matches(exp, act):
                errors.append("`%s` printed:\n%s\n  the doc shows:\n%s" % (
                    command, indent(act), indent(exp)))
        return errors

    def compiled(self, b):
        exe = os.path.join(self.tmp, "example")
        src = exe + ".c"
        with open(src, "w") as f:
            f.write("\n".join(b.lines) + "\n")
        cc = os.environ.get("CC", "cc")
        p = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror",
                            "-I" + os.path.join(self.src, "include"), src, "-o", exe,
                            "-L" + os.path.join(self.build, "lib"), "-latomicity",
                            "-Wl,-rpath," + os.path.join(self.build, "lib")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode:
            return None, ["does not compile:\n" + indent(p.stdout.decode().split("\n"))]
        out = self.sh(exe)
        return out, [] if self.status == 0 else ["exits with status %d" % self.status]

    def python(self, b):
        script = os.path.join(self.tmp, "example.py")
        with open(script, "w") as f:
            f.write("\n".join(b.lines) + "\n")
        out = self.sh("python3 " + script, cwd=self.tmp)
        return out, [] if self.status == 0 else ["exits with status %d:\n%s" % (
            self.status, indent(out.split("\n")))]


def indent(lines):
    return "\n".join("    | " + l for l in lines)


def check_file(runner, path):
    errors, blocks = [], blocks_of(path)
    for n, b in enumerate(blocks):
        mark = b.mark or ""
        transcript = bool(b.lines) and b.lines[0].startswith("$ ")
        follows_code = n > 0 and blocks[n - 1].lang in ("c", "python") and \
            mark == "output of the block above"
        problems = []
        if mark.startswith("skip"):
            if not mark[4:].strip():
                problems = ["a skip without a reason"]
        elif follows_code:
            pass  # compared by the block above
        elif mark.startswith("output of:") or mark.startswith("output (loose) of:"):
            command = mark.split("of:", 1)[1].strip()
            out = runner.sh(command)
            exp, act = strip_trailing(b.lines), strip_trailing(out.split("\n"))
            if mark.startswith("output (loose)"):
                exp, act = [loosen(l) for l in exp], [loosen(l) for l in act]
            if not output_matches(exp, act):
                problems = ["`%s` printed:\n%s" % (command, indent(act))]
        elif mark.startswith("json of:"):
            spec = mark[len("json of:"):].strip()
            command, _, key = spec.partition(" at ")
            out = runner.sh(command)
            try:
                actual = json.loads(out)
                for k in filter(None, key.split(".")):
                    actual = actual[int(k)] if isinstance(actual, list) else actual[k]
                try:  # a whole value, or the member "KEY": value of the last key
                    shown = json.loads("\n".join(b.lines))
                except ValueError:
                    if not key:
                        raise
                    shown = json.loads("{" + "\n".join(b.lines) + "}")[key.split(".")[-1]]
                d = json_contains(shown, actual)
                if d:
                    problems = ["differs at " + d]
            except (ValueError, KeyError, IndexError, TypeError) as e:
                problems = ["cannot compare: %s" % e]
        elif transcript:
            problems = runner.transcript(b)
        elif b.lang in ("c", "python"):
            out, problems = (runner.compiled if b.lang == "c" else runner.python)(b)
            nxt = blocks[n + 1] if n + 1 < len(blocks) else None
            if not problems and nxt and nxt.mark == "output of the block above":
                exp = strip_trailing(nxt.lines)
                act = strip_trailing(out.split("\n"))
                if not output_matches(exp, act):
                    problems = ["printed:\n%s\n  the doc shows:\n%s" % (indent(act), indent(exp))]
        elif b.lang == "sh" and mark == "run":
            out = runner.sh("\n".join(b.lines))
            if runner.status:
                problems = ["exits with status %d:\n%s" % (runner.status,
                                                           indent(out.split("\n")[-20:]))]
        elif b.lang in ("sh", "json", "c", "python"):
            problems = ["not checked: mark it (doc-test: run / output of: / json of: / skip "
                        "REASON)"]
        errors += ["%s: %s" % (b.where(), p) for p in problems]
    return errors, len(blocks)


def main():
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    files = sys.argv[3:] or [os.path.join(src, "README.md")] + sorted(
        glob.glob(os.path.join(src, "doc", "*.md")) + glob.glob(os.path.join(src, "doc", "*", "*.md")))
    runner = Runner(src, build)
    errors, total = [], 0
    try:
        for f in files:
            e, n = check_file(runner, f)
            errors += [os.path.relpath(x, src) if x.startswith(src) else x for x in e]
            total += n
    finally:
        shutil.rmtree(runner.tmp, ignore_errors=True)
    for e in errors:
        print(e)
    print("docs: %d blocks in %d files, %d problems" % (total, len(files), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
