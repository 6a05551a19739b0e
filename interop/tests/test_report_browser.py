"""`gander run` writes a report.html that a real browser renders: headless Chromium (Debian's
`chromium` package) loads the page, and the DOM it builds has the paper-style tables with their
rows, the SVG charts with their marks, and no request left the page (it is self-contained).

A small scenario with real peers keeps this fast: RSE suite iv on OpenSSL and suite iii (3DES,
TLS 1.0) on GnuTLS, a handful of handshakes and reports.
"""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

SCENARIO = """
name = "browser-check"
description = "two RSE rows with small counts"
[defaults]
key = "rsa2048"
connections = 8
reports = 40
period_ms = 2
warmup = 2
[[table]]
id = "rse-suites"
title = "RSE Tables 1 and 4 (small)"
reference = "suites/iii"
layout = "rse"
row_label = "suite"
[[row]]
name = "suites/iii"
table = "rse-suites"
cipher_suite = "TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA"
tls_version = "1.0"
reference = "suites/iii"
[[row]]
name = "suites/iv"
table = "rse-suites"
cipher_suite = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
reference = "suites/iii"
"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    pytest.fail("headless Chromium not found: install Debian's `chromium` package (scripts/setup.sh)")


class Dom(HTMLParser):
    """Counts what the browser serialised: table rows per table id, SVG marks, external refs."""

    def __init__(self):
        super().__init__()
        self.table = None
        self.rows: dict[str, int] = {}
        self.marks = {"svg": 0, "rect": 0, "polyline": 0}
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("id", "?")
            self.rows.setdefault(self.table, 0)
        elif tag == "tr" and self.table:
            self.rows[self.table] += 1
        elif tag in self.marks:
            self.marks[tag] += 1
        for k in ("src", "href"):
            if a.get(k) and re.match(r"^(https?:)?//", a[k]):
                self.external.append(a[k])

    def handle_endtag(self, tag):
        if tag == "table":
            self.table = None


def png_colours(path: Path) -> int:
    """Distinct byte values in the decoded PNG scanlines: a blank page has very few."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    idat, pos = b"", 8
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + n]
        pos += 12 + n
    return len(set(zlib.decompress(idat)))


def test_report_renders_in_headless_chromium(gander, tmp_path):
    browser = chromium()
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "run"
    r = subprocess.run(
        [gander, "run", str(scenario), "--out", str(out), "--pki", str(tmp_path / "pki")],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    report = out / "report.html"
    assert f"report: {report}" in r.stdout or "report:" in r.stdout
    for f in ("results.json", "samples.csv", "summary.md", "report.html"):
        assert (out / f).is_file(), f

    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--user-data-dir=" + str(tmp_path / "profile")]
    dom = subprocess.run([browser, *flags, "--dump-dom", report.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    d = Dom()
    d.feed(dom.stdout)
    # Two header rows plus one row per case in the RSE-style table.
    assert d.rows.get("tbl-rse-suites", 0) >= 4, d.rows
    assert d.rows.get("floors-table", 0) >= 3, d.rows
    assert d.rows.get("targets-table", 0) >= 5, d.rows
    assert d.rows.get("machine-table", 0) >= 8, d.rows
    assert d.marks["svg"] >= 4 and d.marks["rect"] >= 20 and d.marks["polyline"] >= 2, d.marks
    assert not d.external, d.external
    for text in ("GnuTLS", "OpenSSL", "iii.)", "iv.)", "HT/floor", "TT3"):
        assert text in dom.stdout, text

    shot = tmp_path / "report.png"
    s = subprocess.run([browser, *flags, "--window-size=1280,2400", f"--screenshot={shot}", report.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert s.returncode == 0 and shot.is_file(), s.stderr[-2000:]
    assert png_colours(shot) > 50, "the screenshot is (nearly) blank"

    # `gander report DIR` re-renders from results.json and the per-case files.
    report.unlink()
    r = subprocess.run([gander, "report", str(out), "--class", "trip"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and report.is_file(), r.stderr
    html = report.read_text()
    assert "TT6" in html and "<svg" in html and "polyline" in html
