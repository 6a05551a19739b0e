"""`gander audit` writes a report.html that a real browser renders: headless Chromium (Debian's
`chromium` package) loads the report of a lab capture without a console message, and the DOM it
builds holds every finding of the capture with its frame numbers, the inventory with every
publisher, the MMS association, and one plot per stream; no request leaves the page.

The capture is written here, frame by frame, so the test knows every finding it must show: a
GOOSE publisher of the SCD `crates/audit/tests/data/substation.scd` as configured, one that
skips sqNum values and contradicts its control block's APPID, a merging unit, a publisher the SCD
does not know, and a plain MMS association to an IED the SCD declares on port 3782.
"""
from __future__ import annotations

import re
import shutil
import struct
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCD = REPO / "crates" / "audit" / "tests" / "data" / "substation.scd"
T0 = 1_700_000_000  # seconds


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    pytest.fail("headless Chromium not found: install Debian's `chromium` package (scripts/setup.sh)")


def tlv(tag: int, value: bytes) -> bytes:
    """One BER TLV (short or long definite length, X.690 §8.1.3)."""
    n = len(value)
    if n < 0x80:
        return bytes([tag, n]) + value
    ln = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(ln)]) + ln + value


def uint(tag: int, v: int) -> bytes:
    b = v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big")
    return tlv(tag, b)


def goose(src: bytes, dst: bytes, appid: int, gocb: str, ds: str, go_id: str, st: int, sq: int,
          conf_rev: int, vlan: tuple[int, int] | None = None) -> bytes:
    """An IEC 61850-8-1 GOOSE frame (APDU tags of §A.3, Table A.2)."""
    pdu = (tlv(0x80, gocb.encode()) + uint(0x81, 2000) + tlv(0x82, ds.encode())
           + tlv(0x83, go_id.encode()) + tlv(0x84, bytes([0x65, 0, 0, 0, 0, 0, 0, 0x0a]))
           + uint(0x85, st) + uint(0x86, sq) + tlv(0x87, b"\x00") + uint(0x88, conf_rev)
           + tlv(0x89, b"\x00") + uint(0x8A, 1) + tlv(0xAB, tlv(0x83, b"\x01")))
    apdu = tlv(0x61, pdu)
    body = struct.pack(">HHHH", appid, 8 + len(apdu), 0, 0) + apdu
    tag = b"" if vlan is None else struct.pack(">HH", 0x8100, (vlan[0] << 13) | vlan[1])
    return dst + src + tag + b"\x88\xb8" + body


def sv(src: bytes, dst: bytes, appid: int, sv_id: str, smp: int, vlan: tuple[int, int]) -> bytes:
    """An IEC 61850-9-2 SV frame, one ASDU (tags of §8.5.2, Table 14)."""
    asdu = (tlv(0x80, sv_id.encode()) + struct.pack(">BBH", 0x82, 2, smp) + tlv(0x83, b"\x00\x00\x00\x01")
            + tlv(0x85, b"\x02") + tlv(0x87, bytes(64)))
    apdu = tlv(0x60, uint(0x80, 1) + tlv(0xA2, tlv(0x30, asdu)))
    body = struct.pack(">HHHH", appid, 8 + len(apdu), 0, 0) + apdu
    return dst + src + struct.pack(">HH", 0x8100, (vlan[0] << 13) | vlan[1]) + b"\x88\xba" + body


def ipv4_tcp(src: tuple[str, int], dst: tuple[str, int], seq: int, flags: int, data: bytes) -> bytes:
    ip = lambda a: bytes(int(x) for x in a.split("."))  # noqa: E731
    hdr = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 40 + len(data), 0, 0x4000, 64, 6, 0, ip(src[0]), ip(dst[0]))
    s = sum(struct.unpack(">10H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    hdr = hdr[:10] + struct.pack(">H", ~s & 0xFFFF) + hdr[12:]
    tcp = struct.pack(">HHIIBBHHH", src[1], dst[1], seq, 0, 0x50, flags, 0xFFFF, 0, 0)
    return b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00" + hdr + tcp + data


def write_pcap(path: Path, frames: list[tuple[float, bytes]]) -> None:
    with path.open("wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for ts, fr in frames:
            sec, usec = int(ts), int(round((ts - int(ts)) * 1e6))
            f.write(struct.pack("<IIII", sec, usec, len(fr), len(fr)) + fr)


PROT1 = bytes.fromhex("0030a7000011")
ROGUE = bytes.fromhex("0030a7000066")
MU01 = bytes.fromhex("0030a7000021")


def lab_capture(path: Path) -> None:
    frames: list[tuple[float, bytes]] = []
    t = float(T0)
    trip = dict(src=PROT1, dst=bytes.fromhex("010ccd010011"), appid=0x11, gocb="PROT1PRO/LLN0$GO$gcbTrip",
                ds="PROT1PRO/LLN0$dsTrip", go_id="PROT1_TRIP", conf_rev=2, vlan=(4, 0x64))
    intlk = dict(src=PROT1, dst=bytes.fromhex("010ccd010012"), appid=0x13, gocb="PROT1PRO/LLN0$GO$gcbIntlk",
                 ds="PROT1PRO/LLN0$dsIntlk", go_id="PROT1_INTLK", conf_rev=1, vlan=(4, 0x64))
    rogue = dict(trip, src=ROGUE, gocb="ROGUE1CTRL/LLN0$GO$gcb1", ds="ROGUE1CTRL/LLN0$ds1", go_id="ROGUE")
    for i in range(20):
        frames.append((t, goose(**trip, st=1, sq=i)))
        # gcbIntlk skips sqNum 5..7.
        if not 5 <= i <= 7:
            frames.append((t + 0.001, goose(**intlk, st=1, sq=i)))
        frames.append((t + 0.002, sv(MU01, bytes.fromhex("010ccd040001"), 0x4001, "MU0101", i, (4, 5))))
        t += 0.1
    frames.append((t, goose(**rogue, st=1, sq=0)))
    c, s = ("10.0.0.50", 40000), ("10.0.0.11", 102)
    cr = bytes([3, 0, 0, 22, 17, 0xE0, 0, 0, 0, 1, 0, 0xC1, 2, 0, 1, 0xC2, 2, 0, 1, 0xC0, 1, 10])
    frames.append((t + 0.01, ipv4_tcp(c, s, 1000, 0x02, b"")))
    frames.append((t + 0.02, ipv4_tcp(s, c, 5000, 0x12, b"")))
    frames.append((t + 0.03, ipv4_tcp(c, s, 1001, 0x18, cr)))
    write_pcap(path, frames)


class Dom(HTMLParser):
    """Rows of each table (cells as text), SVG plots, external references."""

    def __init__(self):
        super().__init__()
        self.table = None
        self.rows: dict[str, list[list[str]]] = {}
        self.cell: list[str] | None = None
        self.svg = 0
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("id", "?")
            self.rows.setdefault(self.table, [])
        elif tag == "tr" and self.table:
            self.rows[self.table].append([])
        elif tag in ("td", "th") and self.table:
            self.cell = []
        elif tag == "svg":
            self.svg += 1
        for k in ("src", "href"):
            if a.get(k) and re.match(r"^(https?:)?//", a[k]):
                self.external.append(a[k])

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None and self.table:
            self.rows[self.table][-1].append("".join(self.cell).strip())
            self.cell = None
        elif tag == "table":
            self.table = None


def test_the_audit_report_renders_in_headless_chromium_with_every_finding(gander, tmp_path):
    browser = chromium()
    cap = tmp_path / "lab.pcap"
    lab_capture(cap)
    out = tmp_path / "audit"
    r = subprocess.run([gander, "audit", str(cap), "--scd", str(SCD), "--out", str(out)],
                       capture_output=True, text=True, timeout=120)
    # Worst finding high (plain MMS where the SCD declares TLS): exit code 5.
    assert r.returncode == 5, r.stdout + r.stderr
    report = out / "report.html"
    assert report.is_file()

    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--enable-logging=stderr", "--v=0", "--user-data-dir=" + str(tmp_path / "profile")]
    dom = subprocess.run([browser, *flags, "--dump-dom", report.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [l for l in dom.stderr.splitlines() if "CONSOLE" in l]
    assert not console, console
    d = Dom()
    d.feed(dom.stdout)
    assert not d.external, d.external

    codes = Counter(row[1] for row in d.rows["findings"][1:])
    # Every finding of the capture, and nothing else: one `unsecured` per stream (trip, intlk,
    # MU, rogue); the SCD's: intlk's APPID and missing signature, MU's priority, the rogue
    # publisher, msvcb02 absent, plain MMS to PROT1.
    want = Counter({
        "unsecured": 4, "goose-sq-gap": 1, "mms-plain": 1,
        "scd-mismatch-appid": 1, "scd-mismatch-security": 1, "scd-mismatch-priority": 1,
        "scd-unknown-publisher": 1, "scd-absent": 1, "scd-mms-plain": 1,
    })
    assert codes == want, codes
    rows = {row[1]: row for row in d.rows["findings"][1:]}
    assert rows["scd-mms-plain"][0] == "high"
    assert rows["scd-mms-plain"][4].startswith("59"), rows["scd-mms-plain"]
    assert rows["scd-unknown-publisher"][4].startswith("58"), rows["scd-unknown-publisher"]
    # Ticks 0-4 hold 3 frames each, 5-7 two (intlk skipped): intlk's sqNum 8 is frame 23.
    assert rows["goose-sq-gap"][4] == "23", rows["goose-sq-gap"]
    assert "SCD 0x0012, seen 0x0013" in rows["scd-mismatch-appid"][5]

    inventory = d.rows["inventory"][1:]
    kinds = sorted(row[1] for row in inventory)
    assert kinds == ["goose", "goose", "goose", "sv"], inventory
    refs = {row[6] for row in inventory}
    assert {"PROT1PRO/LLN0$GO$gcbTrip", "PROT1PRO/LLN0$GO$gcbIntlk", "ROGUE1CTRL/LLN0$GO$gcb1",
            "MU0101"} <= refs, refs
    assoc = d.rows["associations"][1:]
    assert len(assoc) == 1 and assoc[0][3] == "plain", assoc
    assert d.svg >= 4, d.svg
