"""The compiled libiec61850 peer (interop/cref, `make cref`) keeps the peer contract of
`gander run` (docs/mms-peers.md, interop/imp_libiec61850_peer.py): READY line, the TOML
configuration, JSON-lines events with CLOCK_MONOTONIC `t_ns`, the client's JSON summary, and a
clear error for a bad configuration. Run against gander's own peers over TLS 1.2 and 1.3."""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO, run
from mms_gander import GanderServer, read_events, run_client, tls_table

HARNESS = REPO / "interop" / "cref" / "build" / "libiec61850_peer"
SUITES = {"1.2": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "1.3": "TLS_AES_128_GCM_SHA256"}


@pytest.fixture(scope="module")
def harness() -> str:
    if not os.access(HARNESS, os.X_OK):
        pytest.fail(f"{HARNESS} not built: run `make cref`")
    return str(HARNESS)


@pytest.fixture(scope="module")
def pki(gander, tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("pki")
    run([gander, "pki", "init", "--dir", d, "--rsa", "2048", "--ecdsa", "none"], check=True)
    return str(d / "rsa2048")


def monotonic_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def test_harness_server_against_gander_client(harness, gander, pki, tmp_path: Path):
    events = tmp_path / "server.events"
    cfg = tmp_path / "server.toml"
    cfg.write_text(f'# as gander run writes it\nlisten = "127.0.0.1:0"\nevents = "{events}"\n\n'
                   "[reports]\nperiod_ms = 10\nsize = 125\n\n"
                   + tls_table(pki, "server", version="1.3", suite=SUITES["1.3"], extra="session_tickets = false"))
    t0 = monotonic_ns()
    p = subprocess.Popen([harness, "server", "--config", str(cfg)], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        addr = None
        end = time.monotonic() + 10
        while time.monotonic() < end and addr is None:
            if select.select([p.stdout], [], [], 0.2)[0]:
                line = p.stdout.readline()
                if line.startswith("READY "):
                    addr = line.split()[1]
                elif not line:
                    break
        assert addr, "no READY line"
        port = int(addr.rsplit(":", 1)[1])
        assert port > 0
        proc, summary, cev = run_client(gander, tmp_path, port, tls_table(pki, "client", version="1.3",
                                                                           suite=SUITES["1.3"]),
                                        connections=3, reports=5, gi=False)
        assert proc.returncode == 0, proc.stderr
        assert summary and summary["ok"] and summary["version"] == "TLSv1.3", summary
    finally:
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=10)
    assert rc == 0, "the server exits cleanly on SIGTERM"
    ev = read_events(events)
    starts = [e for e in ev if e["event"] == "RT_START"]
    assert len(starts) >= 5, ev[:5]
    assert [e["n_server"] for e in starts] == list(range(len(starts)))
    assert all(t0 <= e["t_ns"] <= monotonic_ns() for e in starts), "CLOCK_MONOTONIC stamps"
    gaps = [b["t_ns"] - a["t_ns"] for a, b in zip(starts, starts[1:])]
    assert 5e6 < sorted(gaps)[len(gaps) // 2] < 50e6, f"period_ms = 10: median gap {sorted(gaps)[len(gaps) // 2]} ns"


@pytest.mark.parametrize("version", ["1.2", "1.3"])
def test_harness_client_against_gander_server(harness, gander, pki, tmp_path: Path, version):
    srv = GanderServer(gander, tmp_path, tls_table(pki, "server", version=version, suite=SUITES[version]),
                       period_ms=10)
    try:
        events = tmp_path / "client.events"
        cfg = tmp_path / "client.toml"
        cfg.write_text(f'connect = "{srv.addr}"\nconnections = 4\nreports = 6\nevents = "{events}"\n\n'
                       + tls_table(pki, "client", version=version, suite=SUITES[version],
                                   extra="session_tickets = false"))
        t0 = monotonic_ns()
        p = run([harness, "client", "--config", cfg], timeout=60)
        t1 = monotonic_ns()
    finally:
        srv.stop()
    assert p.returncode == 0, p.stderr[-2000:]
    summary = [line for line in p.stdout.splitlines() if line.startswith('{"ok"')]
    assert summary, p.stdout[-2000:]
    assert '"driver": "c"' in summary[-1] and '"connections": 4' in summary[-1], summary
    ev = read_events(events)
    for conn in range(4):
        s = [e["t_ns"] for e in ev if e["event"] == "HT_START" and e["conn"] == conn]
        e_ = [e["t_ns"] for e in ev if e["event"] == "HT_END" and e["conn"] == conn]
        assert len(s) == 1 and len(e_) == 1 and t0 <= s[0] < e_[0] <= t1, (conn, ev[:8])
    ends = [e for e in ev if e["event"] == "RT_END"]
    assert len(ends) >= 6 and all(e["conn"] == 3 for e in ends), ends[:3]
    assert [e["n_client"] for e in ends] == list(range(len(ends)))
    # The server's TLS_UP events say what was negotiated with the harness.
    tls_up = [e for e in srv.event_log() if e["event"] == "TLS_UP"]
    assert len(tls_up) == 4 and {e["version"] for e in tls_up} == {f"TLSv{version}"}, tls_up


def test_bad_configuration_is_a_clear_error(harness, tmp_path: Path):
    cases = {
        "listen = 3782\n": "listen: expected a string",
        'listen = "nohostport"\n': "is not host:port",
        'listen = "127.0.0.1:0"\n[tls]\nversions = ["1.0"]\n': "versions must be one of 1.2, 1.3",
        'listen = "127.0.0.1:0"\n[reports]\nperiod_ms = "x"\n': "expected an integer",
        'listen "127.0.0.1:0"\n': "expected key = value",
    }
    for text, want in cases.items():
        cfg = tmp_path / "bad.toml"
        cfg.write_text(text)
        p = run([harness, "server", "--config", cfg], timeout=10)
        assert p.returncode == 2 and want in p.stderr, (text, p.returncode, p.stderr)
    p = run([harness, "client", "--config", tmp_path / "missing.toml"], timeout=10)
    assert p.returncode == 2 and "cannot read" in p.stderr, p.stderr
    p = run([harness, "peer"], timeout=10)
    assert p.returncode == 2 and "usage" in p.stderr, p.stderr


SMOKE = """name = "cref-smoke"
description = "libiec61850 on both sides, through the compiled harness"
source = "gander"

[defaults]
key = "rsa2048"
interaction = "report"
payload = 125
period_ms = 10
connections = 4
reports = 8
warmup = 1
backend = "openssl"
rt_blocks = 1

[[table]]
id = "t"
title = "smoke"
layout = "rse"
row_label = "name"

[[matrix]]
name = "tls1.3"
table = "t"
tls_version = "1.3"
cipher_suite = "TLS_AES_128_GCM_SHA256"
server_stack = ["libiec61850"]
client_stack = ["libiec61850"]
"""


def test_gander_run_starts_the_compiled_harness(harness, gander, pki, tmp_path: Path):
    """`gander run` runs a libiec61850 row through the harness (not Python) and says so."""
    scenario = tmp_path / "smoke.toml"
    scenario.write_text(SMOKE)
    out = tmp_path / "run"
    p = run([gander, "run", scenario, "--out", out, "--pki", Path(pki).parent], timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    case = results["scenarios"][0]
    assert case["status"] == "ok", case.get("error")
    assert case["ht"]["n"] >= 1 and case["rt"]["n"] >= 1 and case["rt_cleartext"]["n"] >= 1, case
    assert case["client_summary"]["driver"] == "c", case["client_summary"]
    assert "compiled C harness" in results["libraries"]["libiec61850"], results["libraries"]
