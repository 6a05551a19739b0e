"""`gander mms server --scl` serving the sample feeder protection CID
(crates/scl/tests/data/feeder_protection.cid) to libiec61850 1.6.1's client (pyiec61850-ng wheel,
ctypes): the client browses the model it has never been told about (logical devices, logical
nodes, data sets and their members, control blocks), reads a value the CID initialises, and gets
reports from the CID's indexed URCB and its BRCB. Plus: a bad SCL file is refused with exit 2 and
a message naming the problem and its line, and one with a defect local to one element is served
with the repair printed at start-up.

One server process for the module (plain TCP, 50 ms report period, values moved by the
measurement stimulus only, so that each data change is the first member's).
"""
from __future__ import annotations

import ctypes as C
import json
import subprocess
import time
from pathlib import Path

import pytest

import iec
import mms_iec
from conftest import REPO
from mms_gander import SclServer
from mms_iec import LibClient

CID = REPO / "crates" / "scl" / "tests" / "data" / "feeder_protection.cid"
P, I, S = C.c_void_p, C.c_int, C.c_char_p
# ACSIClass (iec61850_client.h)
ACSI_DATA_SET, ACSI_BRCB, ACSI_URCB = 1, 2, 3
FC_MX = 1


def _lib():
    return mms_iec.declare([
        ("IedConnection_getLogicalDeviceList", P, [P, C.POINTER(I)]),
        ("IedConnection_getLogicalDeviceDirectory", P, [P, C.POINTER(I), S]),
        ("IedConnection_getLogicalNodeDirectory", P, [P, C.POINTER(I), S, I]),
        ("IedConnection_getDataSetDirectory", P, [P, C.POINTER(I), S, C.POINTER(C.c_bool)]),
        ("IedConnection_readFloatValue", C.c_float, [P, C.POINTER(I), S, I]),
        ("IedConnection_getState", I, [P]),
        ("LinkedList_getNext", P, [P]),
        ("LinkedList_getData", P, [P]),
        ("LinkedList_destroy", None, [P]),
    ])


names = mms_iec.names


class Server(SclServer):
    def __init__(self, gander: str, workdir: Path):
        self.events = workdir / "events.jsonl"
        cfg = workdir / "server.toml"
        cfg.write_text(f'listen = "127.0.0.1:0"\nevents = "{self.events}"\ntimeout_ms = 3000\n'
                       f'scl = "{CID}"\nvalues = "stimulus"\n[reports]\nperiod_ms = 50\n')
        super().__init__(gander, "--config", str(cfg), seconds=10)

    def errors(self) -> list[dict]:
        """The ERROR events logged so far (shown when a libiec61850 call fails)."""
        lines = self.events.read_text().splitlines() if self.events.exists() else []
        return [e for e in map(json.loads, filter(None, lines)) if e["event"] == "ERROR"]



@pytest.fixture(scope="module")
def server(gander, tmp_path_factory):
    s = Server(gander, tmp_path_factory.mktemp("scl"))
    yield s
    rc, _, err = s.stop()
    assert rc == 0, err


IED_ERROR_CONNECTION_LOST = 3


def ready(make, server, first):
    _lib()
    """A connected client whose first call succeeded. libiec61850 1.6.1's client (through
    ctypes) sometimes reports connection-lost (3) on the first service after a successful
    connect while its state says connected and the TCP connection stays open: seen 1 in 60 in
    fresh processes against libiec61850's own server (`LibServer`) as well, and in
    test_mms_interop.py against the fixed model, so it is the client's race, not the server's.
    Immediate retries fail the same way; after 0.3 s they succeed. Retry that case only, with a
    fresh client, at most three times; any other error fails the test."""
    for _ in range(3):
        c = make()
        assert c.connect("127.0.0.1", server.port) == 0
        err = first(c)
        if err == IED_ERROR_CONNECTION_LOST:
            print("connection lost on the first call; state", c.L.IedConnection_getState(c.con))
            time.sleep(0.3)
        if err != IED_ERROR_CONNECTION_LOST:
            assert err == 0, (err, server.errors())
            return c
        c.close()
    raise AssertionError(f"connection lost three times: {server.errors()}")


class ValuesClient(LibClient):
    """LibClient on another RCB, also keeping each report's data set values."""

    def __init__(self, rcb: bytes):
        super().__init__()
        self.RCB = rcb
        self.values: list = []

    def _on_report(self, param, report):
        super()._on_report(param, report)
        v = iec.mms_to_python(self.L.ClientReport_getDataSetValues(report))
        with self._lock:
            self.values.append(v)


def test_libiec61850_browses_the_scl_model(server):
    L = _lib()
    got = {}

    def first(c):
        e = C.c_int(0)
        got["lds"] = L.IedConnection_getLogicalDeviceList(c.con, C.byref(e))
        return e.value

    c = ready(LibClient, server, first)
    err = C.c_int(0)
    try:
        lds = names(L, got["lds"])
        assert sorted(lds) == ["FDR1MEAS", "FDR1PROT"], lds
        lns = names(L, L.IedConnection_getLogicalDeviceDirectory(c.con, C.byref(err), b"FDR1PROT"))
        assert err.value == 0
        assert set(lns) == {"LLN0", "LPHD1", "PTOC1", "PTRC1", "Q0XCBR1", "GGIO1"}, lns
        ds = names(L, L.IedConnection_getLogicalNodeDirectory(c.con, C.byref(err), b"FDR1PROT/LLN0",
                                                               ACSI_DATA_SET))
        assert ds == ["dsProt"], ds
        br = names(L, L.IedConnection_getLogicalNodeDirectory(c.con, C.byref(err), b"FDR1PROT/LLN0", ACSI_BRCB))
        assert br == ["brcbProt01"], br
        ur = names(L, L.IedConnection_getLogicalNodeDirectory(c.con, C.byref(err), b"FDR1MEAS/LLN0", ACSI_URCB))
        assert ur == ["urcbMeas01", "urcbMeas02", "urcbMeas03"], ur
        deletable = C.c_bool(True)
        members = names(L, L.IedConnection_getDataSetDirectory(c.con, C.byref(err), b"FDR1PROT/LLN0.dsProt",
                                                               C.byref(deletable)))
        assert err.value == 0 and not deletable.value
        assert members == ["FDR1PROT/PTRC1.Tr[ST]", "FDR1PROT/PTOC1.Str[ST]", "FDR1PROT/PTOC1.Op[ST]",
                           "FDR1PROT/Q0XCBR1.Pos.stVal[ST]", "FDR1PROT/GGIO1.Ind1[ST]"], members
        hz = L.IedConnection_readFloatValue(c.con, C.byref(err), b"FDR1MEAS/MMXU1.Hz.mag.f", FC_MX)
        assert err.value == 0 and hz == 50.0, (err.value, hz)
    finally:
        c.close()


@pytest.mark.parametrize("rcb,rpt_id", [(b"FDR1MEAS/LLN0.RP.urcbMeas02", "meas"),
                                        (b"FDR1PROT/LLN0.BR.brcbProt01", "FDR1PROT/LLN0$BR$brcbProt")])
def test_libiec61850_gets_reports_from_the_cid_rcbs(server, rcb, rpt_id):
    c = ready(lambda: ValuesClient(rcb), server, lambda c: c.enable(gi=True))
    try:
        reports = c.wait_reports(4, timeout=10)
    finally:
        c.close()
    assert len(reports) >= 4, reports
    assert all(r == rpt_id for r, _ in reports), reports
    seqs = [s for _, s in reports]
    assert seqs == list(range(len(seqs))), seqs
    # The GI carries every member; the periodic data changes move the stimulus (first member).
    first = c.values[0]
    assert isinstance(first, list) and len(first) == (3 if b"MEAS" in rcb else 5), first
    later = [v for v in c.values[1:] if v and v[0] is not None]
    assert later and later[-1][0] != first[0], c.values


def test_bad_scl_exits_2_naming_the_problem(gander, tmp_path):
    # Two LNs of one name would be one MMS variable: the IED is refused (docs/scl.md, "Repairs").
    ln = '<LN lnClass="PTRC" lnType="FDR_PTRC" inst="1"/>'
    bad = tmp_path / "bad.cid"
    bad.write_text(CID.read_text().replace(ln, ln + ln, 1))
    p = subprocess.run([gander, "mms", "server", "--scl", str(bad), "--listen", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert 'duplicate logical node "PTRC1"' in p.stderr, p.stderr
    line = next(i for i, t in enumerate(CID.read_text().splitlines(), 1) if ln in t)
    assert f"line {line}," in p.stderr, p.stderr
    p = subprocess.run([gander, "mms", "server", "--scl", str(CID), "--ied", "NOPE"],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 2 and 'no IED named "NOPE" (the file has: FDR1)' in p.stderr, p.stderr


def test_a_member_naming_nothing_is_served_without_it_and_said(gander, tmp_path):
    # A defect local to one element: the server starts without the member and says so on
    # stderr before READY, with the line (docs/scl.md, "Repairs").
    bad = tmp_path / "member.cid"
    bad.write_text(CID.read_text().replace('doName="Op" fc="ST"/>', 'doName="Trip" fc="ST"/>', 1))
    s = SclServer(gander, "--scl", str(bad), "--listen", "127.0.0.1:0", seconds=20)
    rc, _, err = s.stop()
    assert rc == 0, err
    assert "member PROT/PTOC1.Trip [ST] is not in the model" in err, err
    line = next(i for i, t in enumerate(CID.read_text().splitlines(), 1) if 'doName="Op" fc="ST"/>' in t)
    assert f"WARNING: line {line}," in err, err
    assert 'repaired: the member is left out of data set "dsProt"' in err, err


def test_libiec61850_gets_the_server_status_and_files_are_refused_not_advertised(server):
    """Status (ISO 9506-2 10.2) through libiec61850's `MmsConnection_getServerStatus`:
    answered state-changes-allowed (0), operational (0), as libiec61850's server does. A file
    directory (not offered, so not in servicesSupportedCalled) is refused and the association
    serves on."""
    L = mms_iec.declare([
        ("IedConnection_getMmsConnection", P, [P]),
        ("MmsConnection_getServerStatus", None, [P, C.POINTER(I), C.POINTER(I), C.POINTER(I), C.c_bool]),
        ("IedConnection_getFileDirectory", P, [P, C.POINTER(I), S]),
        ("IedConnection_readFloatValue", C.c_float, [P, C.POINTER(I), S, I]),
    ])
    got = {}

    def first(c):
        e, logical, physical = C.c_int(-1), C.c_int(-1), C.c_int(-1)
        mms = L.IedConnection_getMmsConnection(c.con)
        L.MmsConnection_getServerStatus(mms, C.byref(e), C.byref(logical), C.byref(physical), False)
        got["status"] = (logical.value, physical.value)
        return e.value

    c = ready(LibClient, server, first)
    err = C.c_int(0)
    try:
        assert got["status"] == (0, 0), got
        files = L.IedConnection_getFileDirectory(c.con, C.byref(err), None)
        assert not files and err.value != 0, err.value
        hz = L.IedConnection_readFloatValue(c.con, C.byref(err), b"FDR1MEAS/MMXU1.Hz.mag.f", FC_MX)
        assert err.value == 0 and hz == 50.0, (err.value, hz)
    finally:
        c.close()
