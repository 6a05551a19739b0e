"""Control round trips measured by `gander probe --control` (IEC 61850-7-2 clause 20 over 8-1
clause 20: select, operate, CommandTermination, Cancel) against libiec61850 1.6.1's server
(pyiec61850-ng wheel, control_iec.ControlServer: one SPC per ctlModel) and against gander's own
server serving the control fixture, each over plain TCP and over TLS 1.3 (libiec61850's server
is built with TLS in the wheel: IedServer_createWithTlsSupport).

What every test checks besides the phases: the probe operates nothing unless an object is named,
sets Test unless --no-test, and leaves the object's stVal as it found it, read by libiec61850's
own client after the run.
"""
from __future__ import annotations

import json
import socket
import subprocess

import pytest

from conftest import REPO, run
from control_iec import ControlServer, Controller

LIB_LD = "LIBLD0"
MODELS = [("SPCSO1", 1), ("SPCSO2", 2), ("SPCSO3", 3), ("SPCSO4", 4)]
COUNT = 4


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def probe(gander, port, *extra, tls=None):
    args = [gander, "probe", f"127.0.0.1:{port}", "--json", "--quick", "--timeout-ms", "5000", *extra]
    if tls:
        args += ["--tls", str(tls), "--no-tls-survey"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert p.stdout, p.stderr
    return p.returncode, json.loads(p.stdout)


def check_phases(r, model, count=COUNT, cancel=True):
    c = r["measurements"]["control"]
    assert c["ctl_model"] == model and c["operated"] == count and c["stopped"] is None, c
    assert c["operate_ms"]["n"] == count, c
    assert (c["select_ms"] is not None) == (model in (2, 4)), c
    assert (c["termination_ms"] is not None) == (model in (3, 4)), c
    # Cancel after a select: SBO models with a Cancel only.
    assert (c["cancel_ms"] is not None) == (cancel and model in (2, 4)), c
    assert bool(c["notes"]) == (not cancel and model in (2, 4)), c
    for phase in ("select_ms", "operate_ms", "termination_ms", "cancel_ms"):
        s = c[phase]
        if s:
            assert 0 <= s["p50_ms"] <= s["p99_ms"] <= s["max_ms"] < 5000, (phase, s)
    return c


@pytest.fixture(scope="module")
def pki(gander, tmp_path_factory):
    d = tmp_path_factory.mktemp("ctlrt-pki")
    run([gander, "pki", "init", "--dir", d / "pki", "--rsa", "2048", "--ecdsa", "none"], check=True)
    return str(d / "pki" / "rsa2048")


def lib_server(pki_dir=None, cancel=True):
    import mms_iec
    tls = None
    if pki_dir:
        mode = next(m for m in mms_iec.MODES if m.version == mms_iec.TLS_1_3)
        tls = mms_iec.tls_config(mode, pki_dir, "server")
    port = free_port()
    srv = ControlServer(port, tls, cancel)
    srv.port = port
    return srv


def client_tls(pki_dir, tmp_path):
    from mms_gander import tls_table
    f = tmp_path / "client.toml"
    f.write_text(tls_table(pki_dir, "client", "1.3"))
    return f


@pytest.mark.parametrize("transport", ["plain", "tls"])
def test_every_ctl_model_against_libiec61850(gander, pki, tmp_path, transport):
    srv = lib_server(pki if transport == "tls" else None)
    tls = client_tls(pki, tmp_path) if transport == "tls" else None
    try:
        reader = Controller("127.0.0.1", srv.port, _lib_client_tls(pki) if tls else None)
        try:
            for name, model in MODELS:
                ref = f"{LIB_LD}/GGIO1.{name}"
                before = reader.read_bool(f"{ref}.stVal")
                srv.operated.clear()
                code, r = probe(gander, srv.port, "--control", ref, "--no-test",
                                "--control-count", str(COUNT), tls=tls)
                assert code == 0, (r.get("failed"), r["measurements"].get("control"))
                c = check_phases(r, model)
                # Test cleared: the handler saw every command and the process moved...
                assert [(n, t) for n, _, t in srv.operated] == [(name, False)] * COUNT
                assert [v for _, v, _ in srv.operated] == [not before, before] * (COUNT // 2)
                # ...and an even count ends where it began.
                assert r["device"]["control"] == {"state": "as-found"}, r["device"]
                assert c["before"] == c["after"] == str(before).lower()
                assert reader.read_bool(f"{ref}.stVal") == before
        finally:
            reader.close()
    finally:
        srv.close()


def _lib_client_tls(pki_dir):
    import mms_iec
    mode = next(m for m in mms_iec.MODES if m.version == mms_iec.TLS_1_3)
    return mms_iec.tls_config(mode, pki_dir, "client")


def test_sbo_objects_without_cancel_are_operated_without_cancelling(gander):
    srv = lib_server(cancel=False)
    try:
        for name, model in [("SPCSO2", 2), ("SPCSO4", 4)]:
            code, r = probe(gander, srv.port, "--control", f"{LIB_LD}/GGIO1.{name}", "--control-count", "2")
            assert code == 0, r.get("failed")
            check_phases(r, model, count=2, cancel=False)
    finally:
        srv.close()


def test_an_odd_count_is_restored_and_test_is_the_default(gander):
    srv = lib_server()
    try:
        reader = Controller("127.0.0.1", srv.port)
        try:
            ref = f"{LIB_LD}/GGIO1.SPCSO3"
            before = reader.read_bool(f"{ref}.stVal")
            # Odd count without Test: the last operation leaves the other value, the probe
            # operates back once more (not counted) and says so.
            code, r = probe(gander, srv.port, "--control", ref, "--no-test", "--control-count", "3")
            assert code == 0, r.get("failed")
            assert r["measurements"]["control"]["operated"] == 3
            assert r["device"]["control"] == {"state": "restored"}, r["device"]
            assert len(srv.operated) == 4 and not any(t for _, _, t in srv.operated)
            assert reader.read_bool(f"{ref}.stVal") == before
            # Default: Test set; libiec61850's handler does not move the process for a test.
            srv.operated.clear()
            code, r = probe(gander, srv.port, "--control", ref, "--control-count", "2")
            assert code == 0, r.get("failed")
            assert r["measurements"]["control"]["test"] is True
            assert srv.operated and all(t for _, _, t in srv.operated), srv.operated
            assert r["device"]["control"] == {"state": "as-found"}
        finally:
            reader.close()
    finally:
        srv.close()


def test_nothing_is_operated_unless_named(gander):
    srv = lib_server()
    try:
        code, r = probe(gander, srv.port)
        assert code == 0, r.get("failed")
        # Absent without --control (the schema of a probe that operates nothing is unchanged).
        assert "control" not in r["measurements"] and "control" not in r["device"], r["device"]
        assert srv.operated == []
    finally:
        srv.close()


def test_a_refusal_is_reported_and_the_device_left_as_found(gander):
    srv = lib_server()
    try:
        # SPCSO5's check handler refuses every command (Blocked-by-interlocking).
        code, r = probe(gander, srv.port, "--control", f"{LIB_LD}/GGIO1.SPCSO5", "--no-test")
        assert code == 0, r.get("failed")
        c = r["measurements"]["control"]
        assert c["operated"] == 0 and "blocked-by-interlocking" in c["stopped"], c
        assert r["device"]["control"] == {"state": "as-found"}
    finally:
        srv.close()


# --- gander's own server (`gander mms server --scl` of the control fixture).

CID = REPO / "crates" / "peers" / "tests" / "data" / "controls.cid"


@pytest.mark.parametrize("transport", ["plain", "tls"])
def test_every_ctl_model_against_gander(gander, pki, tmp_path, transport):
    from mms_gander import SclServer, tls_table
    cfg = tmp_path / "server.toml"
    server_tls = tls_table(pki, "server", "1.3") if transport == "tls" else ""
    cfg.write_text(f'listen = "127.0.0.1:0"\ntimeout_ms = 5000\nscl = "{CID}"\n'
                   f'[reports]\nperiod_ms = 1000\n' + server_tls)
    srv = SclServer(gander, "--config", str(cfg), "--static", seconds=10)
    tls = client_tls(pki, tmp_path) if transport == "tls" else None
    try:
        for name, model in MODELS:
            code, r = probe(gander, srv.port, "--control", f"CTRLLD0/GGIO1.{name}", "--no-test",
                            "--control-count", str(COUNT), tls=tls)
            assert code == 0, (r.get("failed"), r["measurements"].get("control"))
            c = check_phases(r, model)
            assert c["before"] == c["after"], c
            assert r["device"]["control"]["state"] == "as-found", r["device"]
    finally:
        srv.stop()


# --- `gander run --target` control rows against libiec61850's server (cleartext: the rows run
# gander's client only; TLS rows against gander's own server are the built-in `controls`).

@pytest.mark.parametrize("test_flag", [True, False])
def test_run_target_control_rows_against_libiec61850(gander, tmp_path, test_flag):
    srv = lib_server()
    try:
        reader = Controller("127.0.0.1", srv.port)
        try:
            before = {n: reader.read_bool(f"{LIB_LD}/GGIO1.{n}.stVal") for n, _ in MODELS}
            tf = tmp_path / "t.toml"
            tf.write_text(f'address = "127.0.0.1:{srv.port}"\n')
            rows = "".join(f'[[row]]\nname = "{n}"\ncontrol_object = "{LIB_LD}/GGIO1.{n}"\n'
                           for n, _ in MODELS)
            sc = tmp_path / "s.toml"
            sc.write_text('name = "ctl"\n[defaults]\ntls_version = "none"\ninteraction = "control"\n'
                          f'connections = 2\nreports = {COUNT}\nperiod_ms = 5\nwarmup = 0\n'
                          f'control_test = {str(test_flag).lower()}\n' + rows)
            out = tmp_path / "out"
            p = run([gander, "run", sc, "--target", tf, "--out", out], timeout=300)
            assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
            res = {r["name"]: r for r in json.loads((out / "results.json").read_text())["scenarios"]}
            for name, model in MODELS:
                r = res[name]
                assert r["status"] == "ok", r.get("error")
                c = r["control"]
                assert c["operate"]["tls"]["n"] == COUNT, c
                assert (c["select"] is not None) == (model in (2, 4)), c
                assert (c["termination"] is not None) == (model in (3, 4)), c
                summary = r["client_summary"]["control"]
                assert summary["test"] is test_flag and summary["left"]["state"] == "as-found", summary
                assert reader.read_bool(f"{LIB_LD}/GGIO1.{name}.stVal") == before[name]
            assert {t for _, _, t in srv.operated} == {test_flag}
            assert "Control round trips" in (out / "summary.md").read_text()
        finally:
            reader.close()
    finally:
        srv.close()
