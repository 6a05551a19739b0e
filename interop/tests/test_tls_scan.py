"""The scan of `gander tls survey` (crafted ClientHellos, every IANA suite and group per version)
against libiec61850 1.6.1's TLS server (pyiec61850-ng wheel, mbedTLS inside), configured with
known settings: the scan must find exactly those, and the client certificate as required.
"""
from __future__ import annotations

import json
import subprocess

from mms_gander import free_port, tls_table
from mms_iec import LibServer, TLS_1_2, TLS_1_3
from test_tls_survey import pki, server_tls  # noqa: F401  (pki is a fixture)


def scan(gander, tmp_path, pki, port) -> dict:
    cfg = tmp_path / "client.toml"
    cfg.write_text(tls_table(pki, "client", pin=False))
    p = subprocess.run([gander, "tls", "survey", f"127.0.0.1:{port}", "--tls", str(cfg), "--json", "--quick",
                        "--timeout-ms", "2000", "--pause-ms", "10", "--scan-pause-ms", "5"],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, (p.stdout, p.stderr)
    s = json.loads(p.stdout)
    assert "scan" in s, p.stderr
    return s


def found(s: dict) -> dict[str, set[int]]:
    return {v["version"]: {x["code"] for x in v["suites"]} for v in s["scan"]["versions"] if v["accepted"]}


def test_tls12_two_suites_scan(gander, pki, tmp_path):
    port = free_port()
    srv = LibServer(port, server_tls(pki, TLS_1_2, TLS_1_2, [0xC02F, 0x003C]))
    try:
        s = scan(gander, tmp_path, pki, port)
    finally:
        srv.close()
    sc = s["scan"]
    assert found(s) == {"1.2": {0xC02F, 0x003C}}, sc["versions"]
    assert not sc["sslv2"]["accepted"]
    t12 = next(v for v in sc["versions"] if v["version"] == "1.2")
    assert t12["certificate_request"] is True
    states = {w["id"]: w["state"] for w in sc["weaknesses"]}
    assert states["heartbleed"] == "not-vulnerable" and states["ccs-injection"] == "not-vulnerable", states
    assert states["compression"] == "not-vulnerable", states
    levels = {v["id"]: v["level"] for v in s["verdicts"]}
    assert levels["client-cert-mode"] == "pass", levels
    assert levels["scan-anonymous-suites"] == "pass" and levels["scan-3des-suites"] == "pass", levels
    assert not sc["capped"]


def test_tls13_only_scan(gander, pki, tmp_path):
    port = free_port()
    srv = LibServer(port, server_tls(pki, TLS_1_3, TLS_1_3, [0x1301]))
    try:
        s = scan(gander, tmp_path, pki, port)
    finally:
        srv.close()
    sc = s["scan"]
    assert found(s) == {"1.3": {0x1301}}, sc["versions"]
    t13 = next(v for v in sc["versions"] if v["version"] == "1.3")
    assert t13["groups"], t13
