"""Shared helpers of the binding's tests: paths, a small STD parser, replay through a Session.

Run the tests with meson (`meson test --suite bindings`), or by hand from this directory:
    ATOMICITY_LIBRARY=../../build/lib/libatomicity.so.1 python3 -m unittest
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))
CORPUS = os.path.join(ROOT, "tests", "corpus")
BINDING = os.path.join(ROOT, "bindings", "python")

# Test the package of this source tree, also when run by hand (meson sets PYTHONPATH).
if BINDING not in sys.path:
    sys.path.insert(0, BINDING)

# STD op -> Session method name.
OPS = {
    "r": "read", "w": "write", "acq": "acquire", "rel": "release", "fork": "fork",
    "join": "join", "begin": "begin", "end": "end", "fence": "fence", "commit": "commit",
}


def corpus(name):
    return os.path.join(CORPUS, name)


def parse_std(path):
    """[(thread, method, target or None, loc)] of an STD trace (enough for the corpus)."""
    events = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            thread, op, loc = line.split("|")
            target = None
            if "(" in op:
                op, target = op[:-1].split("(")
            events.append((thread, OPS[op], target, int(loc)))
    return events


def replay(session, events, keymap=None):
    """Push ``events`` (from parse_std) through the per-event methods. ``keymap`` (a
    function) may turn the names into other keys (ints)."""
    conv = keymap or (lambda name: name)
    for thread, method, target, loc in events:
        fn = getattr(session, method)
        if target is None:
            fn(conv(thread), loc=loc)
        else:
            fn(conv(thread), conv(target), loc=loc)


def expected(name):
    with open(corpus(name[:-len(".std")] + ".expected.json"), encoding="utf-8") as f:
        return json.load(f)


def corpus_traces():
    return sorted(n for n in os.listdir(CORPUS) if n.endswith(".std"))
