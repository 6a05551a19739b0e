"""`gander tls survey` against libiec61850 1.6.1's TLS server (pyiec61850-ng wheel, via ctypes),
configured with known settings: the survey must find exactly those.

One server per configuration, reused by the module's tests; `--quick` (the IEC 62351 mandatory and
recommended suites) keeps each survey to about twenty handshakes.
"""
from __future__ import annotations

import json
import socket
import subprocess
import threading
import time

import pytest

import mms_iec
from mms_gander import GanderServer, free_port, tls_table
from mms_iec import LibServer, TLS_1_2, TLS_1_3


@pytest.fixture(scope="module")
def pki(gander, tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("pki")
    subprocess.run([gander, "pki", "init", "--dir", d, "--rsa", "2048", "--ecdsa", "none"], check=True)
    return str(d / "rsa2048")


def server_tls(pki: str, lo: int, hi: int, suites: list[int]) -> int:
    """A libiec61850 server TLSConfiguration: the lab CA (no pinning), versions lo..hi, `suites`."""
    L = mms_iec._declare()
    t = L.TLSConfiguration_create()
    assert L.TLSConfiguration_setOwnCertificateFromFile(t, f"{pki}/server.pem".encode())
    assert L.TLSConfiguration_setOwnKeyFromFile(t, f"{pki}/server.key".encode(), None)
    assert L.TLSConfiguration_addCACertificateFromFile(t, f"{pki}/ca.pem".encode())
    L.TLSConfiguration_setMinTlsVersion(t, lo)
    L.TLSConfiguration_setMaxTlsVersion(t, hi)
    L.TLSConfiguration_clearCipherSuiteList(t)
    for s in suites:
        L.TLSConfiguration_addCipherSuite(t, s)
    L.TLSConfiguration_enableSessionResumption(t, True)
    return t


def survey(gander, tmp_path, pki, port) -> dict:
    cfg = tmp_path / "client.toml"
    cfg.write_text(tls_table(pki, "client", pin=False))
    p = subprocess.run([gander, "tls", "survey", f"127.0.0.1:{port}", "--tls", str(cfg), "--json", "--quick",
                        "--timeout-ms", "2000", "--pause-ms", "10"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, (p.stdout, p.stderr)
    return json.loads(p.stdout)


def accepted(s: dict) -> set[str]:
    return {x["code"] for x in s["suites"] if x["accepted"]}


def test_tls12_two_suites(gander, pki, tmp_path):
    port = free_port()
    srv = LibServer(port, server_tls(pki, TLS_1_2, TLS_1_2, [0xC02F, 0x003C]))
    try:
        s = survey(gander, tmp_path, pki, port)
    finally:
        srv.close()
    assert s["versions"] == {"1.0": False, "1.1": False, "1.2": True, "1.3": False}, s["version_probes"]
    assert accepted(s) == {"0xC02F", "0x003C"}, s["suites"]
    assert s["client_cert_required"] is True, s["client_auth"]
    assert s["untrusted_client_cert_refused"] is True, s["client_auth"]
    assert s["client_auth"]["baseline"]["round"] == "answered (COTP CC)", s["client_auth"]
    assert s["chain"][0]["key_type"] == "RSA" and s["chain"][0]["key_bits"] == 2048
    assert s["renegotiation"]["secure_renegotiation"] is True
    assert s["resumption"]["tls12_session_id"]["ok"] is True, s["resumption"]
    levels = {v["id"]: v["level"] for v in s["verdicts"]}
    assert levels["tls12-accepted"] == "pass" and levels["client-cert-required"] == "pass", levels


def test_tls13_only(gander, pki, tmp_path):
    port = free_port()
    srv = LibServer(port, server_tls(pki, TLS_1_3, TLS_1_3, [0x1301]))
    try:
        s = survey(gander, tmp_path, pki, port)
    finally:
        srv.close()
    assert s["versions"] == {"1.0": False, "1.1": False, "1.2": False, "1.3": True}, s["version_probes"]
    assert accepted(s) == {"0x1301"}, s["suites"]
    assert s["client_cert_required"] is True, s["client_auth"]
    assert s["untrusted_client_cert_refused"] is True, s["client_auth"]
    # libiec61850 1.6.1's mbedTLS server sends no NewSessionTicket and does not answer a KeyUpdate
    # (it closes the connection): facts of this peer the survey must report, not gander limits.
    assert s["resumption"]["tls13_psk"]["ok"] is False, s["resumption"]
    assert s["key_update"]["ok"] is False, s["key_update"]
    levels = {v["id"]: v["level"] for v in s["verdicts"]}
    assert levels["tls12-accepted"] == "fail" and levels["key-update"] == "warn", levels


def test_tls13_without_credentials_against_gander_server(gander, pki, tmp_path):
    """Issue #22 defects 2 and 3 on gander's own MMS server: TLS 1.3 with a required client
    certificate, surveyed by an engineer who has only the CA. The server's certificate_required
    alert (116) comes after the handshake (RFC 8446 §4.4.2.4); it counts for both
    client-authentication verdicts, and the KeyUpdate verdict does not blame it."""
    srv = GanderServer(gander, tmp_path, tls=tls_table(pki, "server", version="1.3", pin=False))
    try:
        cfg = tmp_path / "client.toml"
        cfg.write_text(f'[tls]\nca = "{pki}/ca.pem"\nrequire_client_auth = false\n')
        p = subprocess.run([gander, "tls", "survey", f"127.0.0.1:{srv.port}", "--tls", str(cfg), "--json",
                            "--quick", "--timeout-ms", "2000", "--pause-ms", "10"],
                           capture_output=True, text=True, timeout=120)
    finally:
        srv.stop()
    assert p.returncode == 0, (p.stdout, p.stderr)
    s = json.loads(p.stdout)
    assert s["versions"]["1.3"] is True, s["version_probes"]
    assert s["client_cert_required"] is True, s["client_auth"]
    assert s["untrusted_client_cert_refused"] is True, s["client_auth"]
    assert s["key_update"]["ok"] is None, s["key_update"]
    levels = {v["id"]: v["level"] for v in s["verdicts"]}
    assert levels["client-cert-required"] == "pass" and levels["key-update"] == "info", levels


def test_no_credentials_at_all_against_libiec61850(gander, pki, tmp_path):
    """`gander tls survey HOST:PORT` with no --tls, as sslscan is run: libiec61850's mbedTLS
    server (client certificates required) is surveyed as the CA holder surveys it, and the
    chain is read but called not verified, not "untrusted"."""
    port = free_port()
    srv = LibServer(port, server_tls(pki, TLS_1_2, TLS_1_2, [0xC02F, 0x003C]))
    try:
        p = subprocess.run([gander, "tls", "survey", f"127.0.0.1:{port}", "--json", "--quick",
                            "--timeout-ms", "2000", "--pause-ms", "10"],
                           capture_output=True, text=True, timeout=120)
        with_ca = survey(gander, tmp_path, pki, port)
    finally:
        srv.close()
    assert p.returncode == 0, (p.stdout, p.stderr)
    s = json.loads(p.stdout)
    assert s["trust_anchors"] is False and with_ca["trust_anchors"] is True
    assert s["versions"] == with_ca["versions"], s["version_probes"]
    assert accepted(s) == accepted(with_ca) == {"0xC02F", "0x003C"}, s["suites"]
    assert s["chain"] == with_ca["chain"] and s["chain"][0]["key_bits"] == 2048
    assert s["chain_trusted"] is None and s["server_verification_error"] is None
    assert s["client_cert_required"] is True, s["client_auth"]
    assert s["client_auth"]["profile_certificate"] is False
    levels = {v["id"]: v["level"] for v in s["verdicts"]}
    assert levels["server-chain-trusted"] == "info" and levels["client-cert-required"] == "pass", levels


def test_an_unusable_profile_is_refused_before_anything_is_sent(gander, tmp_path):
    """The profile used to be checked after the scan's few hundred connections to the device."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[tls]\nca = "{tmp_path}/absent-ca.pem"\n')
    try:
        p = subprocess.run([gander, "tls", "survey", f"127.0.0.1:{port}", "--tls", str(cfg)],
                           capture_output=True, text=True, timeout=60)
        try:
            conn, _ = listener.accept()
            conn.close()
            connected = True
        except socket.timeout:
            connected = False
    finally:
        listener.close()
    assert p.returncode == 2 and "absent-ca.pem" in p.stderr, (p.returncode, p.stderr)
    assert p.stderr.count("cannot be read") == 1, p.stderr
    assert not connected, "the survey connected to the device with a profile it cannot use"


def test_plain_server_is_not_tls(gander, pki, tmp_path):
    port = free_port()
    srv = LibServer(port, None)
    try:
        cfg = tmp_path / "client.toml"
        cfg.write_text(tls_table(pki, "client", pin=False))
        p = subprocess.run([gander, "tls", "survey", f"127.0.0.1:{port}", "--tls", str(cfg), "--quick",
                            "--timeout-ms", "1000"], capture_output=True, text=True, timeout=60)
    finally:
        srv.close()
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "does not speak TLS" in p.stderr, p.stderr


def test_bad_arguments_exit_2(gander, tmp_path):
    missing = tmp_path / "nope.toml"
    p = subprocess.run([gander, "tls", "survey", "127.0.0.1:3782", "--tls", str(missing)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "nope.toml" in p.stderr, (p.returncode, p.stderr)
    cfg = tmp_path / "c.toml"
    cfg.write_text('[tls]\nca = "x.pem"\n')
    p = subprocess.run([gander, "tls", "survey", "no-port-here", "--tls", str(cfg)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "HOST:PORT" in p.stderr, (p.returncode, p.stderr)


class OddServer:
    """A TCP server of the field test's odd kinds, in a thread of this test: `silent` accepts and
    never answers; `banner` answers whatever arrives with a plain-text banner (not TLS)."""

    def __init__(self, mode: str):
        self.mode = mode
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            if self.mode == "banner":
                threading.Thread(target=self._banner, args=(c,), daemon=True).start()

    @staticmethod
    def _banner(c: socket.socket):
        try:
            c.settimeout(10)
            d = c.recv(4096)
            c.sendall(b"220 substation-gw ready\r\n" + d)
        except OSError:
            pass

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def survey_json_exit1(gander, pki, tmp_path, port, timeout_ms) -> tuple[dict, float, str]:
    cfg = tmp_path / "client.toml"
    cfg.write_text(tls_table(pki, "client", pin=False))
    t0 = time.monotonic()
    p = subprocess.run([gander, "tls", "survey", f"127.0.0.1:{port}", "--tls", str(cfg), "--json",
                        "--timeout-ms", str(timeout_ms), "--pause-ms", "10"],
                       capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t0
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    return json.loads(p.stdout), took, p.stderr


def test_silent_port_stops_at_once_and_json_says_why(gander, pki, tmp_path):
    """Field test defect D: a port that accepts and never answers took 19 connections and 93 s,
    and `--json` printed nothing. The survey stops after the first ClientHello without answer
    (the scan's), asks once in the clear, and prints one JSON document."""
    srv = OddServer("silent")
    try:
        s, took, err = survey_json_exit1(gander, pki, tmp_path, srv.port, 1000)
        n = len(srv.conns)
    finally:
        srv.close()
    assert s["error_kind"] == "timeout", s
    assert "does not answer" in s["error"], s
    assert "does not answer a ClientHello" in (s["scan_error"] or ""), s
    # The scan's SSL 2.0 and first TLS ClientHello, and one clear request: three timeouts.
    assert n <= 3, n
    assert took < 6, took


def test_plain_banner_server_json_has_the_error_and_the_scan(gander, pki, tmp_path):
    """Field test defect D: a plain-TCP server whose first octet is not a TLS record; with
    `--json` the error and the scan's findings are one JSON document on stdout."""
    srv = OddServer("banner")
    try:
        s, _, err = survey_json_exit1(gander, pki, tmp_path, srv.port, 1000)
    finally:
        srv.close()
    assert s["error_kind"] == "not-tls", s
    assert "does not speak TLS" in s["error"] and "does not speak TLS" in err, (s, err)
    assert s["scan"] is not None and not any(v["accepted"] for v in s["scan"]["versions"]), s["scan"]
