"""IEC 61850-7-2 clause 20 controls between gander and libiec61850 1.6.1 (pyiec61850-ng wheel).

gander's server (`gander mms server --scl` of the fixture crates/peers/tests/data/controls.cid,
one controllable object per ctlModel) operated by libiec61850's ControlObjectClient, which reads
each object's ctlModel and Oper type from the server and drives the services itself: direct and
SBO, normal and enhanced security (CommandTermination), Cancel (also of a waiting
time-activated operate), the SCL's sboTimeout, and refusals whose LastApplError AddCause the
library decodes. Then the other way: `gander mms control` against libiec61850's server.

AddCause numbers are IEC 61850-7-2's (libiec61850 `ControlAddCause`).
"""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO
from control_iec import Controller
from mms_gander import SclServer

CID = REPO / "crates" / "peers" / "tests" / "data" / "controls.cid"
LD = "CTRLLD0"
# ControlModel / ControlAddCause (iec61850_common.h)
DIRECT_NORMAL, SBO_NORMAL, DIRECT_ENHANCED, SBO_ENHANCED = 1, 2, 3, 4
BLOCKED_BY_INTERLOCKING, POSITION_REACHED = 10, 5
OBJECT_NOT_SELECTED, LOCKED_BY_OTHER_CLIENT, INCONSISTENT_PARAMETERS = 18, 27, 26
ABORTION_BY_CANCEL = 15


class Server(SclServer):
    def __init__(self, gander: str, workdir: Path, tls: str = ""):
        cfg = workdir / "server.toml"
        cfg.write_text(f'listen = "127.0.0.1:0"\nevents = "{workdir / "events.jsonl"}"\n'
                       f'timeout_ms = 5000\nscl = "{CID}"\n[reports]\nperiod_ms = 1000\n' + tls)
        # --static: only the controls change values (the default simulation toggles status
        # points, which would race the reads of stVal below).
        super().__init__(gander, "--config", str(cfg), "--static", seconds=10)


@pytest.fixture(scope="module")
def server(gander, tmp_path_factory):
    s = Server(gander, tmp_path_factory.mktemp("controls"))
    yield s
    s.stop()


@pytest.fixture
def client(server):
    c = Controller("127.0.0.1", server.port)
    yield c
    c.close()


def test_direct_normal_spc(client):
    c = client.control(f"{LD}/GGIO1.SPCSO1")
    assert c.model == DIRECT_NORMAL
    assert c.operate(True)
    assert client.read_bool(f"{LD}/GGIO1.SPCSO1.stVal")
    assert c.operate(False)
    assert not client.read_bool(f"{LD}/GGIO1.SPCSO1.stVal")
    assert c.wait_terminations(1, timeout=0.3) == []


def test_sbo_normal_select_operate_cancel(client, server):
    c = client.control(f"{LD}/GGIO1.SPCSO2")
    assert c.model == SBO_NORMAL
    # Operate without select: refused, Object-not-selected.
    assert not c.operate(True)
    assert c.last_appl_error().addCause == OBJECT_NOT_SELECTED
    assert c.select()
    # Another association cannot operate the selected object.
    other = Controller("127.0.0.1", server.port)
    try:
        o = other.control(f"{LD}/GGIO1.SPCSO2")
        assert not o.select()
    finally:
        other.close()
    assert c.operate(True)
    assert client.read_bool(f"{LD}/GGIO1.SPCSO2.stVal")
    # Select then cancel: the next operate needs a new select.
    assert c.select()
    assert c.cancel()
    assert not c.operate(False)
    assert c.last_appl_error().addCause == OBJECT_NOT_SELECTED


def test_direct_enhanced_command_termination(client):
    c = client.control(f"{LD}/GGIO1.SPCSO3")
    assert c.model == DIRECT_ENHANCED
    assert c.operate(True)
    t = c.wait_terminations(1)
    assert len(t) == 1 and t[0].addCause == 0, [(x.error, x.addCause) for x in t]
    assert client.read_bool(f"{LD}/GGIO1.SPCSO3.stVal")


def test_sbo_enhanced_select_with_value(client):
    c = client.control(f"{LD}/GGIO1.SPCSO4")
    assert c.model == SBO_ENHANCED
    assert c.select_with_value(True)
    assert c.operate(True)
    assert len(c.wait_terminations(1)) == 1
    assert client.read_bool(f"{LD}/GGIO1.SPCSO4.stVal")
    # An operate whose value differs from the select's: Inconsistent-parameters.
    assert c.select_with_value(False)
    assert not c.operate(True)
    assert c.last_appl_error().addCause == INCONSISTENT_PARAMETERS
    # Select, cancel.
    assert c.select_with_value(False)
    assert c.cancel()


def test_dpc_interlocking_and_position(client):
    c = client.control(f"{LD}/CSWI1.Pos")
    assert c.model == SBO_ENHANCED
    # CILO1.EnaCls is false: a close with interlock check is refused at select.
    client.L.ControlObjectClient_setInterlockCheck(c.h, True)
    assert not c.select_with_value(True)
    assert c.last_appl_error().addCause == BLOCKED_BY_INTERLOCKING
    client.L.ControlObjectClient_setInterlockCheck(c.h, False)
    assert c.select_with_value(True)
    assert c.operate(True)
    assert len(c.wait_terminations(1)) == 1
    assert client.read_dbpos(f"{LD}/CSWI1.Pos.stVal") == 2  # on
    # Already closed: Position-reached.
    assert not c.select_with_value(True)
    assert c.last_appl_error().addCause == POSITION_REACHED


def test_inc_time_activated_and_apc(client):
    c = client.control(f"{LD}/GGIO1.ISCSO1")
    assert c.model == DIRECT_ENHANCED
    at = int(time.time() * 1000) + 1500
    assert c.operate(21, at)
    assert client.read_int(f"{LD}/GGIO1.ISCSO1.stVal") != 21
    t = c.wait_terminations(1, timeout=5)
    assert len(t) == 1 and t[0].addCause == 0
    assert time.time() * 1000 >= at
    assert client.read_int(f"{LD}/GGIO1.ISCSO1.stVal") == 21
    a = client.control(f"{LD}/GGIO1.APCSO1")
    assert a.model == DIRECT_NORMAL
    assert a.operate(7.5)
    assert client.read_float(f"{LD}/GGIO1.APCSO1.mxVal.f") == 7.5


def test_cancel_of_a_time_activated_operate(client):
    c = client.control(f"{LD}/GGIO1.ISCSO1")
    before = client.read_int(f"{LD}/GGIO1.ISCSO1.stVal")
    assert c.operate(before + 5, int(time.time() * 1000) + 3000)
    assert c.cancel()
    t = c.wait_terminations(1)
    assert len(t) == 1 and t[0].addCause == ABORTION_BY_CANCEL, [(x.error, x.addCause) for x in t]
    time.sleep(0.2)
    assert client.read_int(f"{LD}/GGIO1.ISCSO1.stVal") == before


def test_select_times_out_after_the_scl_sbo_timeout(client):
    # SPCSO2's sboTimeout is 2000 ms in the fixture.
    c = client.control(f"{LD}/GGIO1.SPCSO2")
    assert c.select()
    time.sleep(2.2)
    assert not c.operate(True)
    assert c.last_appl_error().addCause == OBJECT_NOT_SELECTED


def test_status_only_is_refused(client):
    c = client.control(f"{LD}/GGIO1.SPCSO5")
    assert c.model == 0
    assert not c.operate(True)
    assert not client.read_bool(f"{LD}/GGIO1.SPCSO5.stVal")


# --- gander's control client (`gander mms control`, the sans-I/O ControlOperation driven by the
# probe's session) against libiec61850's server.

@pytest.fixture(scope="module")
def lib_server():
    import socket
    from control_iec import ControlServer
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    srv = ControlServer(port)
    srv.port = port
    yield srv
    srv.close()


def gander_control(gander, port, obj, value, *extra):
    p = subprocess.run([gander, "mms", "control", f"127.0.0.1:{port}", "--object", obj, "--value", value,
                        *extra], capture_output=True, text=True, timeout=30)
    assert p.stdout, p.stderr
    return p.returncode, json.loads(p.stdout)


@pytest.mark.parametrize("name,model", [("SPCSO1", 1), ("SPCSO2", 2), ("SPCSO3", 3), ("SPCSO4", 4)])
def test_gander_client_operates_every_model(gander, lib_server, name, model):
    code, r = gander_control(gander, lib_server.port, f"LIBLD0/GGIO1.{name}", "true", "--no-test")
    assert code == 0, r
    assert r["ctl_model"] == model and r["outcome"] == "done" and r["released"], r
    assert (name, True, False) in lib_server.operated
    assert (r["select_ms"] is not None) == (model in (2, 4)), r
    assert (r["termination_ms"] is not None) == (model in (3, 4)), r
    assert r["operate_ms"] is not None


def test_gander_client_sets_test_by_default(gander, lib_server):
    code, r = gander_control(gander, lib_server.port, "LIBLD0/GGIO1.SPCSO1", "false")
    assert code == 0, r
    assert ("SPCSO1", False, True) in lib_server.operated


def test_gander_client_reads_the_add_cause(gander, lib_server):
    code, r = gander_control(gander, lib_server.port, "LIBLD0/GGIO1.SPCSO5", "true", "--no-test")
    assert code == 1, r
    assert r["outcome"] == "refused" and r["add_cause"] == lib_server.REFUSED_CAUSE, r
    assert r["add_cause_name"] == "blocked-by-interlocking"


def test_gander_client_refuses_bad_input(gander, lib_server):
    p = subprocess.run([gander, "mms", "control", f"127.0.0.1:{lib_server.port}", "--object",
                        "LIBLD0/GGIO1.SPCSO1", "--value", "maybe"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "true or false" in p.stderr, p.stderr


# --- Over TLS (TLS 1.3, mutual authentication, pinned certificates) against gander's server
# serving the fixture: gander's control client and libiec61850's.

def _tls_server(gander, tmp_path):
    from conftest import run
    from mms_gander import tls_table
    run([gander, "pki", "init", "--dir", tmp_path / "pki", "--rsa", "2048", "--ecdsa", "none"], check=True)
    pki = str(tmp_path / "pki" / "rsa2048")
    return pki, Server(gander, tmp_path, tls_table(pki, "server", "1.3"))


def test_libiec61850_control_client_over_tls(gander, tmp_path):
    import mms_iec
    pki, srv = _tls_server(gander, tmp_path)
    mode = next(m for m in mms_iec.MODES if m.version == mms_iec.TLS_1_3)
    try:
        c = Controller("127.0.0.1", srv.port, mms_iec.tls_config(mode, pki, "client"))
        try:
            enhanced = c.control(f"{LD}/GGIO1.SPCSO4")
            assert enhanced.select_with_value(True) and enhanced.operate(True)
            assert len(enhanced.wait_terminations(1)) == 1
            assert c.read_bool(f"{LD}/GGIO1.SPCSO4.stVal")
            sbo = c.control(f"{LD}/GGIO1.SPCSO2")
            assert sbo.select() and sbo.operate(True)
        finally:
            c.close()
    finally:
        srv.stop()


def test_gander_client_over_tls_operates_every_model(gander, tmp_path):
    from mms_gander import tls_table
    pki, srv = _tls_server(gander, tmp_path)
    client = tmp_path / "client.toml"
    client.write_text(tls_table(pki, "client", "1.3"))
    try:
        for name, model in [("SPCSO1", 1), ("SPCSO2", 2), ("SPCSO3", 3), ("SPCSO4", 4)]:
            code, r = gander_control(gander, srv.port, f"{LD}/GGIO1.{name}", "true", "--no-test",
                                     "--tls", str(client))
            assert code == 0 and r["ctl_model"] == model and r["outcome"] == "done", r
            assert (r["termination_ms"] is not None) == (model >= 3), r
        # A refusal over TLS: CSWI1.Pos with interlock check (CILO1.EnaCls false).
        code, r = gander_control(gander, srv.port, f"{LD}/CSWI1.Pos", "true", "--interlock-check",
                                 "--tls", str(client))
        assert code == 1 and r["add_cause"] == BLOCKED_BY_INTERLOCKING, r
    finally:
        srv.stop()
