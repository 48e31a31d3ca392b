"""Session.write_reports(): the library's output formats through atom_session_write."""

import io
import os
import tempfile
import unittest

import atomicity


def rho2(session):
    """003 Figs. 2 and 5: a cycle of two transactions."""
    session.begin("t1")
    session.begin("t2")
    session.write("t1", "x")
    session.read("t2", "x")
    session.write("t2", "y")
    session.read("t1", "y")
    session.end("t1")
    session.end("t2")
    session.finish()


class WriteReports(unittest.TestCase):
    def setUp(self):
        self.session = atomicity.Session(["velodrome"])
        rho2(self.session)

    def tearDown(self):
        self.session.close()

    def test_html_to_a_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.html")
            self.session.write_reports(path, input="rho2 <&>")
            with open(path, encoding="utf-8") as f:
                page = f.read()
        self.assertTrue(page.startswith("<!DOCTYPE html>"))
        self.assertIn("<svg", page)
        self.assertIn("rho2 &lt;&amp;&gt;", page)
        self.assertNotIn("rho2 <&>", page)
        self.assertEqual(page.count('<details class="report"'), len(self.session.reports))

    def test_binary_and_text_files(self):
        binary, text = io.BytesIO(), io.StringIO()
        self.session.write_reports(binary, format="html")
        self.session.write_reports(text, format="HTML")
        self.assertEqual(binary.getvalue().decode("utf-8"), text.getvalue())

    def test_every_format_is_accepted(self):
        for fmt in ("text", "json", "sarif", "html", "dot"):
            self.session.write_reports(io.BytesIO(), format=fmt)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            self.session.write_reports(io.BytesIO(), format="pdf")
        with self.assertRaises(ValueError):
            self.session.write_reports(io.BytesIO(), max_reports=-1)

    def test_closed_session(self):
        self.session.close()
        with self.assertRaises(atomicity.Error):
            self.session.write_reports(io.BytesIO())


if __name__ == "__main__":
    unittest.main()
