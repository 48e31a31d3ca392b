#!/usr/bin/env python3
"""The HTML output, loaded in headless Chromium: the page loads without an error, and the
lanes, transaction boxes, event dots and arrows read back from the DOM are those of the
reports (as make_page read them through the public accessors).

    check_page.py Demo|Rho2|Many|Python

Exit 0 (pass), 1 (fail), 77 (skipped: no chromium; in CI, CI=true, a missing chromium fails).
MAKE_PAGE names the make_page program; the Python case uses the binding (PYTHONPATH,
ATOMICITY_LIBRARY as for tests/python).
"""

import html.parser
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def load(page, timeout=120):
    """The DOM of ``page`` after its scripts ran, and Chromium's log (stderr)."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
             "--dump-dom", "file://" + os.path.abspath(page)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if proc.returncode != 0:
        fail("chromium exited with %d: %s" % (proc.returncode, proc.stderr.decode()[-2000:]))
    return proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8", "replace")


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


def expect(cond, message):
    if not cond:
        fail(message)


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], ""

    def classes(self):
        return self.attrs.get("class", "").split()

    def find_all(self, pred):
        for child in self.children:
            if pred(child):
                yield child
            yield from child.find_all(pred)

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)

    def child(self, tag):
        for c in self.children:
            if c.tag == tag:
                return c
        return None


VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "source", "wbr"}


class Tree(html.parser.HTMLParser):
    """A small DOM from the serialized one (Chromium writes every SVG element closed)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        node = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.text += data  # the checked elements hold text only, or elements only


def parse(dom):
    t = Tree()
    t.feed(dom)
    t.close()
    return t.root


def has_class(name, tag=None):
    return lambda n: name in n.classes() and (tag is None or n.tag == tag)


def static_checks(raw):
    """Self-contained: no URL out of the page anywhere."""
    for attr, value in re.findall(r'\s(src|href|xlink:href|action)\s*=\s*"([^"]*)"', raw):
        expect(value.startswith("#"), "%s=%r leaves the page" % (attr, value))
    expect("http:" not in raw and "https:" not in raw, "a URL in the page")
    expect("<link" not in raw and "@import" not in raw, "an external resource in the page")
    expect(not re.search(r"<script[^>]*\ssrc", raw), "an external script")
    for url in re.findall(r"url\(([^)]*)\)", raw):
        expect(url.startswith("#"), "url(%s) leaves the page" % url)


def no_errors(root, log):
    errors = next(root.find_all(lambda n: n.attrs.get("id") == "errors"), None)
    expect(errors is not None, "no #errors element")
    expect(errors.all_text().strip() == "", "page errors: %r" % errors.all_text())
    for line in log.splitlines():
        if "Uncaught" in line or ("CONSOLE" in line and "ERROR" in line):
            fail("console error: " + line)


def center(event):
    c = event.child("circle")
    return float(c.attrs["cx"]), float(c.attrs["cy"])


def path_ends(d):
    nums = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", d)]
    return (nums[0], nums[1]), (nums[-2], nums[-1])


def check_section(sec, rep, number):
    """Section ``sec`` of the DOM against report ``rep`` of make_page's expectations."""
    where = "report %d" % number
    expect(sec.attrs.get("data-kind") == rep["kind"], where + ": kind")
    expect(sec.attrs.get("data-checker") == rep["checker"], where + ": checker")
    expect(int(sec.attrs.get("data-count")) == rep["count"], where + ": count")
    msg = next(sec.find_all(has_class("msg", "p")))
    expect(msg.all_text() == rep["message"], where + ": message %r" % msg.all_text())

    # lanes: one per thread, labelled with its name, top to bottom in order of appearance
    lanes = list(sec.find_all(has_class("lane")))
    threads = {int(k): v for k, v in rep["threads"].items()}
    got = {int(l.attrs["data-thread"]): l for l in lanes}
    expect(len(lanes) == len(threads) and set(got) == set(threads),
           where + ": lanes %s, want threads %s" % (sorted(got), sorted(threads)))
    lane_y = {}
    for key, lane in got.items():
        label = lane.child("text").all_text()
        want = threads[key]
        expect(label == want or (label.endswith("\u2026") and want.startswith(label[:-1])),
               where + ": lane label %r, want %r" % (label, want))
        expect(lane.child("title").all_text() == "thread " + want, where + ": lane title")
        expect(lane.child("text").children == [], where + ": markup inside a label (escaping)")
        lane_y[key] = float(lane.child("line").attrs["y1"])

    # transaction boxes: on their thread's lane, spanning their events
    boxes = list(sec.find_all(has_class("txn")))
    expect(len(boxes) == len(rep["txns"]), where + ": %d boxes for %d transactions"
           % (len(boxes), len(rep["txns"])))
    events = {int(e.attrs["data-event-index"]): e for e in sec.find_all(has_class("event"))}
    for i, (box, txn) in enumerate(zip(boxes, rep["txns"])):
        expect(int(box.attrs["data-txn"]) == i, where + ": box order")
        expect(int(box.attrs["data-thread"]) == txn["thread"], where + ": box %d thread" % i)
        expect(int(box.attrs["data-begin"]) == txn["begin"], where + ": box %d begin" % i)
        expect(int(box.attrs["data-count"]) == txn["count"], where + ": box %d count" % i)
        expect(("unary" in box.classes()) == txn["unary"], where + ": box %d unary" % i)
        expect(box.child("title").all_text().startswith(txn["describe"]),
               where + ": box %d title %r" % (i, box.child("title").all_text()))
        rect = box.child("rect")
        x0, w = float(rect.attrs["x"]), float(rect.attrs["width"])
        y0, h = float(rect.attrs["y"]), float(rect.attrs["height"])
        expect(y0 < lane_y[txn["thread"]] < y0 + h, where + ": box %d off its lane" % i)
        for ev in rep["events"]:
            if ev["txn"] == i:
                cx, cy = center(events[ev["index"]])
                expect(x0 < cx < x0 + w and y0 < cy < y0 + h,
                       where + ": event %d outside its box %d" % (ev["index"], i))

    # event dots: on their lane, left to right in trace order, hover text = the report's words
    want_events = {ev["index"]: ev for ev in rep["events"]}
    expect(set(events) == set(want_events), where + ": events %s, want %s"
           % (sorted(events), sorted(want_events)))
    xs = []
    for index in sorted(events):
        e, ev = events[index], want_events[index]
        cx, cy = center(e)
        expect(int(e.attrs["data-thread"]) == ev["thread"], where + ": event %d thread" % index)
        expect(cy == lane_y[ev["thread"]], where + ": event %d off its lane" % index)
        expect(e.child("title").all_text().startswith(ev["describe"]),
               where + ": event %d title %r" % (index, e.child("title").all_text()))
        xs.append(cx)
    expect(xs == sorted(xs) and len(set(xs)) == len(xs), where + ": events not in trace order")

    # arrows: from the earlier access to the later, the closing one highlighted
    arrows = list(sec.find_all(has_class("edge", "path")))
    expect(len(arrows) == len(rep["edges"]), where + ": %d arrows for %d edges"
           % (len(arrows), len(rep["edges"])))
    for a, edge in zip(arrows, rep["edges"]):
        f, t = int(a.attrs["data-edge-from"]), int(a.attrs["data-edge-to"])
        expect((f, t) == (edge["from"], edge["to"]), where + ": arrow %d->%d, want %d->%d"
               % (f, t, edge["from"], edge["to"]))
        expect(("closing" in a.classes()) == edge["closing"], where + ": closing flag")
        expect(a.attrs.get("marker-end", "").startswith("url(#"), where + ": no arrowhead")
        start, end = path_ends(a.attrs["d"])
        expect(math.dist(start, center(events[f])) < 14, where + ": arrow does not leave %d" % f)
        expect(math.dist(end, center(events[t])) < 14, where + ": arrow does not reach %d" % t)
    return events


def check_page(page, expect_file, want_sections=None):
    raw = open(page, encoding="utf-8").read()
    static_checks(raw)
    started = time.monotonic()
    dom, log = load(page)
    seconds = time.monotonic() - started
    root = parse(dom)
    no_errors(root, log)
    reports = json.load(open(expect_file, encoding="utf-8"))["reports"]
    sections = list(root.find_all(lambda n: n.tag == "details" and "report" in n.classes()))
    expect(len(sections) == len(reports), "%d sections for %d reports"
           % (len(sections), len(reports)))
    rows = list(next(root.find_all(lambda n: n.attrs.get("id") == "summary"))
                .find_all(lambda n: n.tag == "tr" and n.parent.tag == "tbody"))
    expect(len(rows) == len(reports), "%d summary rows for %d reports" % (len(rows), len(reports)))
    ids = {s.attrs.get("id") for s in sections}
    for row in rows:
        for a in row.find_all(lambda n: n.tag == "a"):
            expect(a.attrs["href"][1:] in ids, "summary link %s goes nowhere" % a.attrs["href"])
    n = len(sections) if want_sections is None else want_sections
    for i, (sec, rep) in enumerate(zip(sections[:n], reports[:n])):
        check_section(sec, rep, i + 1)
    return root, sections, seconds


def make(*args):
    subprocess.run([os.environ["MAKE_PAGE"], *args], check=True, timeout=120)


def case_demo(tmp):
    page, exp = os.path.join(tmp, "demo.html"), os.path.join(tmp, "demo.json")
    make("demo", page, exp)
    root, sections, _ = check_page(page, exp)
    gaps = [int(g.attrs["data-elided"]) for g in sections[0].find_all(has_class("gap"))]
    expect(gaps == [1000], "elided stretches %s, want [1000]" % gaps)
    text = next(sections[0].find_all(has_class("gap"))).all_text()
    expect("1\u202f000 events" in text, "gap text %r" % text)
    # a name with markup stays text everywhere (no <b> or <i> element made from a name)
    expect(not list(root.find_all(lambda n: n.tag in ("b", "i"))), "a name became markup")
    # the stack of event 3 shows on hover
    title = next(sections[0].find_all(lambda n: n.attrs.get("data-event-index") == "3"))
    expect("main at bank&co.c:80" in title.child("title").all_text(), "no stack in the title")


def case_rho2(tmp):
    page, exp = os.path.join(tmp, "rho2.html"), os.path.join(tmp, "rho2.json")
    make("rho2", page, exp)
    check_page(page, exp)
    out = os.environ.get("HTML_SCREENSHOT")  # doc/images/rho2.png is made this way
    if out:
        subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--screenshot=" + os.path.abspath(out), "--window-size=1000,700",
                        "file://" + os.path.abspath(page)],
                       check=True, timeout=120, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def case_many(tmp):
    # HTML_MANY=10000 for the measurement in doc/html.md; the default keeps the test short
    n = int(os.environ.get("HTML_MANY", "1000"))
    page, exp = os.path.join(tmp, "many.html"), os.path.join(tmp, "many.json")
    make("many", str(n), page, exp)
    root, sections, seconds = check_page(page, exp, want_sections=3)
    opened = sum(1 for s in sections if "open" in s.attrs)
    expect(opened == 100, "%d sections open, want the first 100" % opened)
    expect("open" in sections[99].attrs and "open" not in sections[100].attrs, "open ones first")
    # the last one is complete too, only collapsed
    reports = json.load(open(exp, encoding="utf-8"))["reports"]
    check_section(sections[-1], reports[-1], n)
    print("%d reports: %.1f MB, loaded and dumped in %.1f s"
          % (n, os.path.getsize(page) / 1e6, seconds))


def case_python(tmp):
    import atomicity
    page = os.path.join(tmp, "py.html")
    with atomicity.Session(["velodrome", "aerodrome"]) as s:
        s.begin("t1<&>")
        s.begin("t2")
        s.write("t1<&>", "x")
        s.read("t2", "x")
        s.write("t2", "y")
        s.read("t1<&>", "y")
        s.end("t1<&>")
        s.end("t2")
        s.finish()
        reports = s.reports
        s.write_reports(page, format="html")
        with open(os.path.join(tmp, "py.json"), "w") as f:
            s.write_reports(f, format="json")
    expect(reports, "no report from the rho2 interleaving")
    raw = open(page, encoding="utf-8").read()
    static_checks(raw)
    root = parse(load(page)[0])
    no_errors(root, "")
    sections = list(root.find_all(lambda n: n.tag == "details" and "report" in n.classes()))
    expect(len(sections) == len(reports), "%d sections for %d reports"
           % (len(sections), len(reports)))
    for sec in sections:
        labels = {l.child("text").all_text() for l in sec.find_all(has_class("lane"))}
        expect(labels <= {"t1<&>", "t2"} and labels, "lane labels %s" % labels)
    # a file object and the other formats work too; a bad format is an error
    try:
        s2 = atomicity.Session("aerodrome")
        s2.write_reports(os.path.join(tmp, "x.html"), format="pdf")
    except ValueError:
        pass
    else:
        fail("format='pdf' accepted")


CASES = {"Demo": case_demo, "Rho2": case_rho2, "Many": case_many, "Python": case_python}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        sys.exit("usage: check_page.py " + "|".join(CASES))
    BROWSER = browser()
    if BROWSER is None:
        if os.environ.get("CI") == "true":
            fail("no chromium, and CI=true: .ci/deps installs it")
        print("SKIP: no chromium (apt-get install chromium)")
        sys.exit(SKIP)
    with tempfile.TemporaryDirectory() as tmp:
        CASES[sys.argv[1]](tmp)
    print("ok")
