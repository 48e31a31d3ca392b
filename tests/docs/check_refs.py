#!/usr/bin/env python3
"""Docs point only at what the repository has.

Scans README.md, doc/ (Markdown and the man page), the public headers and the comments of the
sources for:

* paths of the repository (doc/..., tests/..., examples/..., include/..., lib/...,
  bindings/..., .ci/...) that do not exist; a path may end in a glob (doc/checkers/*.md) or a
  placeholder (doc/checkers/NAME.md), which must then match at least one file;
* citations of documents the repository does not have ("DESIGN §", "../shared", "seeds/").

usage: check_refs.py SOURCE_DIR
"""
import glob
import os
import re
import sys

ROOTS = ("doc", "tests", "examples", "include", "lib", "bindings", ".ci")
# A repository path in running text: a known top directory, then path characters. Trailing
# punctuation of the sentence is not part of it.
PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./*{}<>+-]*[\w*/}>])" %
                  "|".join(re.escape(r) for r in ROOTS))
FORBIDDEN = (("DESIGN §", "cites a document the repository does not have"),
             ("../shared", "points outside the repository"),
             ("shared/seeds", "points outside the repository"))
# Placeholders written in capitals stand for any name (doc/checkers/NAME.md, tests/corpus/X.std).
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]*\b|<[^<>/]*>")


def scanned(src):
    files = [os.path.join(src, "README.md")]
    files += glob.glob(os.path.join(src, "doc", "**", "*.md"), recursive=True)
    files += glob.glob(os.path.join(src, "doc", "*.1"))
    files += glob.glob(os.path.join(src, "include", "**", "*.h"), recursive=True)
    for top in ("lib", "examples", "bindings", "tests"):
        for ext in ("c", "h", "py", "sh", "build"):
            files += glob.glob(os.path.join(src, top, "**", "*." + ext), recursive=True)
    return sorted(set(f for f in files if os.path.isfile(f)))


def exists(src, path):
    """The path names a file or directory, a file without its extension (lib/support/vclock),
    files by a glob or placeholder, or a program its directory's meson.build builds."""
    path = path.rstrip("/").replace("\\", "")
    full = os.path.join(src, path)
    if os.path.exists(full) or glob.glob(glob.escape(full) + ".*"):
        return True
    pattern = PLACEHOLDER.sub("*", path).replace("{", "*").replace("}", "*")
    if "*" in pattern and glob.glob(os.path.join(src, pattern)):
        return True
    build = os.path.join(os.path.dirname(full), "meson.build")
    if not os.path.isfile(build):
        return False
    text, base = open(build, encoding="utf-8").read(), os.path.basename(path)
    # 'name' or a name built as 'prefix-' + name (tests/fuzz/fuzz-push)
    return "'%s'" % base in text or any(
        "'%s' +" % base[:i + 1] in text for i, c in enumerate(base) if c == "-")


def main():
    src = os.path.abspath(sys.argv[1])
    problems = []
    own = os.path.abspath(__file__)
    for f in scanned(src):
        if os.path.abspath(f) == own:
            continue
        rel = os.path.relpath(f, src)
        doc = rel.endswith((".md", ".1", ".h")) and not rel.startswith(("lib/", "tests/"))
        for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
            for text, why in FORBIDDEN:
                if text in line:
                    problems.append("%s:%d: %s (%r)" % (rel, n, why, text))
            if not doc:
                continue  # sources name build paths and generated files; docs must not
            for m in PATH.finditer(line.replace("\\-", "-").replace("\\fR", " ")
                                   .replace("\\fI", " ").replace("\\fB", " ")):
                if not exists(src, m.group(1)):
                    problems.append("%s:%d: %s does not exist" % (rel, n, m.group(1)))
    for p in problems:
        print(p)
    print("refs: %d files, %d problems" % (len(scanned(src)), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
