"""`gander audit --interface` on a veth pair, judged against the file audit of the same frames.

libiec61850 publishes R-GOOSE with HMAC-SHA256-128 (the session's `captures` fixture); a replay
of one of its frames and a copy with a tampered tag are added. The frames are sent 2 ms apart
from one end of a veth pair (namespace `pub`) while the real `gander` binary audits the other
end (namespace `aud`). Checked:

* while it runs, `/metrics` answers OpenMetrics that the Prometheus project's own parser
  (`prometheus_client`, pinned in interop/requirements.txt) reads, with the frames and
  verification outcomes seen so far;
* SIGINT ends it cleanly: exit code of the worst finding, `report.html`, `audit.json` and the
  Zeek logs written, no kernel drop reported;
* the live audit holds the same inventory and the same findings on the same frame numbers as
  `gander audit` of a pcap of the same frames (both directions: nothing missing, nothing more);
* `--duration` ends an audit of a silent interface with exit 0 and its outputs.

Namespace rule (as the Rust namespace tests): without the rights to create a namespace the test
fails with the reason, unless GANDER_SKIP_NETNS=1.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pcap import Packet, read_packets, write_pcap  # noqa: E402

PORT = 9571
GAP_S = 0.002

SENDER = r"""
import socket, sys, time
from pathlib import Path
frames = [bytes.fromhex(l) for l in Path(sys.argv[1]).read_text().split()]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[2], 0))
for f in frames:
    s.send(f)
    time.sleep(float(sys.argv[3]))
"""

SCRAPE = r"""
import sys, urllib.request
r = urllib.request.urlopen(sys.argv[1], timeout=5)
sys.stdout.write(r.headers.get("Content-Type", "") + "\n" + r.read().decode())
"""


def sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True)


@pytest.fixture
def veth():
    """Namespaces (pub, aud) joined by a veth pair (veth0 in pub, veth1 in aud), IPv6 off so
    no neighbour discovery adds frames of its own."""
    tag = os.getpid() % 100000
    pub, aud = f"galp{tag}", f"gala{tag}"
    r = subprocess.run(["ip", "netns", "add", pub], capture_output=True, text=True)
    if r.returncode != 0:
        why = f"cannot create a network namespace: {r.stderr.strip()}"
        if os.environ.get("GANDER_SKIP_NETNS") == "1":
            pytest.skip(why)
        pytest.fail(why + " (set GANDER_SKIP_NETNS=1 to skip)")
    try:
        sh("ip", "netns", "add", aud)
        for ns in (pub, aud):
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", pub, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1", "netns", aud)
        sh("ip", "-n", pub, "link", "set", "veth0", "up")
        sh("ip", "-n", aud, "link", "set", "veth1", "up")
        yield pub, aud
    finally:
        subprocess.run(["ip", "netns", "del", pub], capture_output=True)
        subprocess.run(["ip", "netns", "del", aud], capture_output=True)


def scrape(ns: str, url: str, deadline: float) -> tuple[str, str]:
    last = ""
    while time.monotonic() < deadline:
        p = subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", SCRAPE, url],
                           capture_output=True, text=True)
        if p.returncode == 0:
            ctype, _, body = p.stdout.partition("\n")
            return ctype, body
        last = p.stderr
        time.sleep(0.1)
    raise AssertionError(f"metrics endpoint {url} never answered: {last}")


def metrics(text: str) -> dict[tuple[str, tuple], float]:
    """Every sample of an OpenMetrics exposition, by (name, sorted labels); the parser refuses
    text that breaks the format (missing # EOF, bad types, duplicate families)."""
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def shape(audit: dict) -> tuple[list, list]:
    streams = [(s["uid"], s["kind"], s.get("appid"), s.get("id"), s["frames"], s["first_frame"],
                s["last_frame"], s["verified"], s["failed"], s["security"]) for s in audit["streams"]]
    findings = sorted((f["code"], f["severity"], f.get("stream"), f["count"], tuple(f["frames"]))
                      for f in audit["findings"])
    return streams, findings


def test_live_audit_matches_file_audit_and_stops_on_sigint(gander, captures, veth, tmp_path: Path):
    pub, aud = veth
    cap = captures["hmac-sha256-128"]
    frames = [p.data for p in read_packets(cap["pcap"])]
    assert len(frames) >= 5
    replay = frames[2]
    tampered = bytearray(frames[-1])
    tampered[-1] ^= 0x01
    # No UDP checksum (0, allowed over IPv4): the tag is what fails, not the datagram.
    udp = 14 + (tampered[14] & 0x0F) * 4
    tampered[udp + 6:udp + 8] = b"\0\0"
    frames += [replay, bytes(tampered)]
    # The same frames as a file, 2 ms apart as they will be sent.
    pcap = tmp_path / "sent.pcap"
    write_pcap(pcap, [Packet(ts=1_800_000_000 + i * GAP_S, data=f) for i, f in enumerate(frames)])
    hexes = tmp_path / "frames.hex"
    hexes.write_text("\n".join(f.hex() for f in frames))

    live_out, file_out = tmp_path / "live", tmp_path / "file"
    cmd = [gander, "audit", "--interface", "veth1", "--keys", str(cap["keys"]), "--profile",
           "libiec61850", "--metrics", f"127.0.0.1:{PORT}", "--out", str(live_out)]
    proc = subprocess.Popen(["ip", "netns", "exec", aud, *cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{PORT}/metrics"
        ctype, before = scrape(aud, url, time.monotonic() + 15)
        assert ctype.startswith("application/openmetrics-text"), ctype
        assert metrics(before)[("gander_audit_frames_total", (("kind", "r-goose"),))] == 0
        subprocess.run(["ip", "netns", "exec", pub, sys.executable, "-c", SENDER, str(hexes), "veth0",
                        str(GAP_S)], check=True, timeout=60)
        time.sleep(0.8)  # three snapshot periods
        _, during = scrape(aud, url, time.monotonic() + 5)
        m = metrics(during)
        assert m[("gander_audit_frames_total", (("kind", "r-goose"),))] == len(frames), during
        assert m[("gander_audit_verification_total", (("outcome", "verified"),))] == len(frames) - 2
        assert m[("gander_audit_verification_total", (("outcome", "replay"),))] == 1
        assert m[("gander_audit_verification_total", (("outcome", "bad-mac"),))] == 1
        assert m[("gander_audit_streams", (("kind", "r-goose"),))] == 1
        assert m[("gander_audit_socket_drops_total", ())] == 0
        assert m[("gander_audit_findings_total", (("severity", "high"),))] >= 2
        info = [dict(k[1]) for k, v in m.items() if k[0] == "gander_audit_info" and v == 1]
        assert len(info) == 1 and info[0]["interface"] == "veth1", info
        assert info[0]["profile"] == "libiec61850", info
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert "SIGINT" in err, err
    live = json.loads((live_out / "audit.json").read_text())
    # Exit code of the worst finding: the replay and the tampered tag are high.
    assert proc.returncode == 5, f"exit {proc.returncode}\n{err}"
    for name in ("report.html", "rgoose.log", "findings.log"):
        assert (live_out / name).stat().st_size > 0, name
    assert "id=\"drops\"" in (live_out / "report.html").read_text()
    assert live["summary"]["kernel_drops"] == 0
    assert live["summary"]["frames"] == len(frames)

    f = subprocess.run([gander, "audit", str(pcap), "--keys", str(cap["keys"]), "--profile",
                        "libiec61850", "--out", str(file_out)], capture_output=True, text=True)
    assert f.returncode == 5, f.stderr
    filed = json.loads((file_out / "audit.json").read_text())
    assert "kernel_drops" not in filed["summary"]
    ls, lf = shape(live)
    fs, ff = shape(filed)
    assert ls == fs
    assert lf == ff
    codes = {x[0] for x in ff}
    assert {"sec-replay", "sec-bad-mac"} <= codes, ff


def test_duration_ends_a_silent_audit(gander, veth, tmp_path: Path):
    _, aud = veth
    out = tmp_path / "live"
    t0 = time.monotonic()
    p = subprocess.run(["ip", "netns", "exec", aud, gander, "audit", "--interface", "veth1",
                        "--duration", "1", "--out", str(out)], capture_output=True, text=True, timeout=30)
    took = time.monotonic() - t0
    assert p.returncode == 0, p.stderr
    assert 0.9 <= took < 10, took
    assert "duration reached" in p.stderr, p.stderr
    a = json.loads((out / "audit.json").read_text())
    assert a["summary"]["frames"] == 0
    assert a["summary"]["kernel_drops"] == 0
    assert (out / "report.html").is_file()


def test_interface_and_captures_are_exclusive(gander, tmp_path: Path):
    p = subprocess.run([gander, "audit", "--interface", "lo", str(tmp_path / "x.pcap")],
                       capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    p = subprocess.run([gander, "audit", "--duration", "1"], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr


def test_sigterm_ends_it_and_metrics_show_key_ages(gander, veth, tmp_path: Path):
    """SIGTERM ends a live audit as SIGINT does; with --keys the endpoint shows each key's age
    and time to expiry from its validity window."""
    _, aud = veth
    now = int(time.time())
    keys = tmp_path / "keys.toml"
    keys.write_text(
        "[[key]]\nid = 7\nmac = \"hmac-sha256-128\"\nkey_ascii = \"0123456789ABCDEF\"\n"
        f"not_before = {now - 3600}\nnot_after = {now + 86400}\n"
    )
    out = tmp_path / "live"
    proc = subprocess.Popen(["ip", "netns", "exec", aud, gander, "audit", "--interface", "veth1",
                             "--keys", str(keys), "--metrics", f"127.0.0.1:{PORT + 1}", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, body = scrape(aud, f"http://127.0.0.1:{PORT + 1}/metrics", time.monotonic() + 15)
        m = metrics(body)
        age = m[("gander_audit_key_age_seconds", (("key_id", "7"),))]
        left = m[("gander_audit_key_expires_in_seconds", (("key_id", "7"),))]
        assert 3590 <= age <= 3600 + 60, age
        assert 86400 - 60 <= left <= 86400 + 10, left
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "SIGTERM" in err, err
    assert json.loads((out / "audit.json").read_text())["summary"]["verified_with_keys"] is True
