"""gander's MMS peers against libiec61850 1.6.1 (pyiec61850-ng wheel, via ctypes), both directions,
over plain TCP, TLS 1.2 (ECDHE-RSA-AES128-GCM-SHA256 and RSA-AES128-CBC-SHA256) and TLS 1.3, with
mutual authentication and certificate pinning on both sides.

- libiec61850 client -> `gander mms server`: enables IMPLD0/LLN0.RP.urcb01 with GI and receives at
  least 10 reports, RptID rpt01, SqNum 0, 1, 2, ... in order.
- `gander mms client` -> libiec61850 server (dynamic model matching gander's): the same.
"""
from __future__ import annotations

import pytest

import mms_iec
from conftest import run
from mms_gander import GanderServer, free_port, run_client, tls_table
from mms_iec import MODES, LibClient, LibServer

N = 12


@pytest.fixture(scope="session")
def pki(gander, tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("pki")
    run([gander, "pki", "init", "--dir", d, "--rsa", "2048", "--ecdsa", "none"], check=True)
    return str(d / "rsa2048")


def gander_tls(mode, pki, role):
    if not mode.tls:
        return ""
    return tls_table(pki, role, mode.gander_version, mode.suite_name)


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_libiec61850_client_to_gander_server(gander, pki, tmp_path, mode):
    srv = GanderServer(gander, tmp_path, gander_tls(mode, pki, "server"), period_ms=20)
    try:
        c = LibClient(mms_iec.tls_config(mode, pki, "client"))
        err = c.connect_and_enable("127.0.0.1", srv.port, gi=True)
        assert err == 0, f"libiec61850 client: connect or RCB enable error {err}"
        reports = c.wait_reports(N, timeout=10)
        c.close()
    finally:
        rc, out, errout = srv.stop()
    assert rc == 0, errout
    assert len(reports) >= N, reports
    assert all(r == "rpt01" for r, _ in reports)
    seqs = [s for _, s in reports]
    assert seqs == list(range(len(seqs))), seqs
    ev = srv.event_log()
    # A retried first call (connect_and_enable) leaves one dropped connection per retry.
    assert len([e for e in ev if e["event"] == "ERROR"]) <= c.retries, ev
    if mode.tls:
        up = [e for e in ev if e["event"] == "TLS_UP"]
        assert up and up[0]["suite"] == mode.suite_name, up
    starts = [e for e in ev if e["event"] == "RT_START"]
    assert len(starts) >= N


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_gander_client_to_libiec61850_server(gander, pki, tmp_path, mode):
    port = free_port()
    srv = LibServer(port, mms_iec.tls_config(mode, pki, "server"), period=0.02)
    try:
        p, summary, ev = run_client(gander, tmp_path, port, gander_tls(mode, pki, "client"),
                                    connections=2, reports=N, gi=True)
    finally:
        srv.close()
    assert p.returncode == 0, (p.stdout, p.stderr, [e for e in ev if e["event"] == "ERROR"])
    assert summary["ok"] and summary["connections"] == 2 and summary["reports"] == N, summary
    ends = [e for e in ev if e["event"] == "RT_END"]
    assert [e["seq"] for e in ends] == list(range(N)), ends
    if mode.tls:
        assert summary["suite"] == mode.suite_name
        assert summary["version"] == ("TLSv1.3" if mode.version == mms_iec.TLS_1_3 else "TLSv1.2")
