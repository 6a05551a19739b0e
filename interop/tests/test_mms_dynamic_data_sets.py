"""Dynamic data sets, array-element members and values that change, on `gander mms server --scl`
serving crates/peers/tests/data/harmonics_array.cid (an MHAI whose HA.phsAHar is an array of 16
CMV harmonics), driven by libiec61850 1.6.1's client (pyiec61850-ng wheel, ctypes):

- the CID's data set dsHar names array elements (phsAHar(7), phsAHar(9).cVal, phsAHar(10).cVal.mag.f)
  and is listed and read so;
- the client creates an association-specific data set (`@dyn`) whose members are array elements
  (`phsAHar(7)`, `phsAHar(9).cVal`), lists and reads it, and a persistent one that a second
  association sees; deletion of a configured data set is refused, of a dynamic one done;
- an URCB whose DatSet the client points at `@dyn` reports the members as the served values
  drift (then `@dyn` cannot be deleted while the RCB references it);
- by default the served values drift, so an URCB with dchg on the CID's data set reports within
  seconds; with `--static` the same RCB stays silent and values read twice are equal.
"""
from __future__ import annotations

import ctypes as C
import threading
import time

import pytest

import iec
import mms_iec
from mms_gander import SclServer
from conftest import REPO

CID = REPO / "crates" / "peers" / "tests" / "data" / "harmonics_array.cid"
P, I, S, B = C.c_void_p, C.c_int, C.c_char_p, C.c_bool
ACSI_DATA_SET = 1
FC_MX = 1
RCB_DATSET = 8
ReportHandler = mms_iec.ReportHandler


def _lib():
    return mms_iec.declare([
        ("IedConnection_createDataSet", None, [P, C.POINTER(I), S, P]),
        ("IedConnection_deleteDataSet", B, [P, C.POINTER(I), S]),
        ("IedConnection_getDataSetDirectory", P, [P, C.POINTER(I), S, C.POINTER(B)]),
        ("IedConnection_readDataSetValues", P, [P, C.POINTER(I), S, P]),
        ("IedConnection_getLogicalNodeDirectory", P, [P, C.POINTER(I), S, I]),
        ("IedConnection_readFloatValue", C.c_float, [P, C.POINTER(I), S, I]),
        ("ClientDataSet_getValues", P, [P]),
        ("ClientDataSet_destroy", None, [P]),
        ("ClientReportControlBlock_setDataSetReference", None, [P, S]),
        ("ClientReport_getReasonForInclusion", I, [P, I]),
        ("ClientReport_getDataSetName", S, [P]),
        ("IedConnection_getMmsConnection", P, [P]),
        ("MmsConnection_readSingleArrayElementWithComponent", P, [P, C.POINTER(I), S, S, C.c_uint32, S]),
        ("LinkedList_getNext", P, [P]),
        ("LinkedList_getData", P, [P]),
        ("LinkedList_destroy", None, [P]),
        ("LinkedList_destroyStatic", None, [P]),
    ])


names = mms_iec.names


def serve(gander: str, *flags: str) -> SclServer:
    return SclServer(gander, "--scl", str(CID), "--listen", "127.0.0.1:0", *flags, seconds=10)


def stopped(s: SclServer) -> None:
    rc, _, err = s.stop()
    assert rc == 0, err


@pytest.fixture(scope="module")
def drifting(gander):
    s = serve(gander)
    yield s
    stopped(s)


@pytest.fixture(scope="module")
def still(gander):
    s = serve(gander, "--static")
    yield s
    stopped(s)


class Client(mms_iec.LibClient):
    """A libiec61850 connection with the data set services, retrying only libiec61850 1.6.1's
    first-call race (connection-lost on the first service after connect, see
    test_mms_scl_server.ready) with a fresh connection."""

    RCB = b"HAR1LD0/LLN0.RP.urcbMeas01"

    def __init__(self, port: int):
        for _ in range(3):
            super().__init__()
            self.L = _lib()
            self.values: list = []
            self.reasons: list = []
            self.data_sets_seen: list = []
            assert self.connect("127.0.0.1", port) == 0
            err = C.c_int(0)
            self.L.IedConnection_getLogicalNodeDirectory(self.con, C.byref(err), b"HAR1LD0/LLN0", ACSI_DATA_SET)
            if err.value != mms_iec.IED_ERROR_CONNECTION_LOST:
                assert err.value == 0, err.value
                return
            self.close()
            time.sleep(0.3)
        raise AssertionError("connection lost three times")

    def _on_report(self, param, report):
        super()._on_report(param, report)
        v = iec.mms_to_python(self.L.ClientReport_getDataSetValues(report))
        with self._lock:
            self.values.append(v)
            self.reasons.append([self.L.ClientReport_getReasonForInclusion(report, i) for i in range(len(v or []))])
            self.data_sets_seen.append((self.L.ClientReport_getDataSetName(report) or b"").decode())

    def create(self, ref: bytes, members: list[bytes]) -> int:
        err = C.c_int(0)
        lst = self.L.LinkedList_create()
        bufs = [C.create_string_buffer(m) for m in members]  # alive until the call returns
        for b in bufs:
            self.L.LinkedList_add(lst, C.cast(b, P))
        self.L.IedConnection_createDataSet(self.con, C.byref(err), ref, lst)
        self.L.LinkedList_destroyStatic(lst)
        return err.value

    def delete(self, ref: bytes) -> tuple[bool, int]:
        err = C.c_int(0)
        ok = self.L.IedConnection_deleteDataSet(self.con, C.byref(err), ref)
        return bool(ok), err.value

    def directory(self, ref: bytes) -> tuple[list[str], bool]:
        err, deletable = C.c_int(0), C.c_bool(False)
        lst = self.L.IedConnection_getDataSetDirectory(self.con, C.byref(err), ref, C.byref(deletable))
        assert err.value == 0, err.value
        return names(self.L, lst), deletable.value

    def read_set(self, ref: bytes):
        err = C.c_int(0)
        ds = self.L.IedConnection_readDataSetValues(self.con, C.byref(err), ref, None)
        assert err.value == 0 and ds, err.value
        v = iec.mms_to_python(self.L.ClientDataSet_getValues(ds))
        self.L.ClientDataSet_destroy(ds)
        return v

    def read_element(self, item: bytes, index: int, component: bytes | None):
        """MMS Read of one array element (index alternate access), optionally a component."""
        err = C.c_int(0)
        mms = self.L.IedConnection_getMmsConnection(self.con)
        v = self.L.MmsConnection_readSingleArrayElementWithComponent(mms, C.byref(err), b"HAR1LD0", item, index,
                                                                     component)
        assert err.value == 0 and v, err.value
        out = iec.mms_to_python(v)
        self.L.MmsValue_delete(v)
        return out

    def data_sets(self, ln: bytes) -> list[str]:
        err = C.c_int(0)
        return names(self.L, self.L.IedConnection_getLogicalNodeDirectory(self.con, C.byref(err), ln, ACSI_DATA_SET))

    def read_float(self, ref: bytes) -> float:
        err = C.c_int(0)
        v = self.L.IedConnection_readFloatValue(self.con, C.byref(err), ref, FC_MX)
        assert err.value == 0, err.value
        return v

    def enable_on(self, data_set: bytes | None) -> int:
        """Point the URCB at `data_set` (if given), then enable it with dchg (no GI)."""
        L = self.L
        err = C.c_int(0)
        self.rcb = L.IedConnection_getRCBValues(self.con, C.byref(err), self.RCB, None)
        if err.value or not self.rcb:
            return err.value or -1
        L.IedConnection_installReportHandler(self.con, self.RCB, L.ClientReportControlBlock_getRptId(self.rcb),
                                             self._cb, None)
        mask = mms_iec.RCB_RPT_ENA | mms_iec.RCB_TRG_OPS | mms_iec.RCB_OPT_FLDS
        if data_set is not None:
            L.ClientReportControlBlock_setDataSetReference(self.rcb, data_set)
            mask |= RCB_DATSET
        L.ClientReportControlBlock_setTrgOps(self.rcb, mms_iec.TRG_DCHG)
        L.ClientReportControlBlock_setOptFlds(self.rcb, mms_iec.OPT_SEQ_NUM | mms_iec.OPT_REASON | mms_iec.OPT_DATA_SET)
        L.ClientReportControlBlock_setRptEna(self.rcb, True)
        L.IedConnection_setRCBValues(self.con, C.byref(err), self.rcb, mask, True)
        return err.value


HAR = [b"HAR1LD0/MHAI1.HA.phsAHar(7)[MX]", b"HAR1LD0/MHAI1.HA.phsAHar(9).cVal[MX]", b"HAR1LD0/MMXU1.TotW[MX]"]


def test_dynamic_data_sets_with_array_element_members(drifting):
    a, b = Client(drifting.port), Client(drifting.port)
    try:
        assert a.create(b"@dyn", HAR) == 0
        members, deletable = a.directory(b"@dyn")
        assert deletable
        assert members == ["HAR1LD0/MHAI1.HA.phsAHar(7)[MX]", "HAR1LD0/MHAI1.HA.phsAHar(9).cVal[MX]",
                           "HAR1LD0/MMXU1.TotW[MX]"], members
        v = a.read_set(b"@dyn")
        assert len(v) == 3, v
        # A CMV element: cVal {mag {f}, ang {f}}, q, t; the component alone: {mag {f}, ang {f}}.
        assert len(v[0]) == 3 and len(v[0][0]) == 2, v
        assert len(v[1]) == 2 and all(len(x) == 1 for x in v[1]), v
        # The same elements read on their own (MMS Read with index alternate access).
        el = a.read_element(b"MHAI1$MX$HA$phsAHar", 7, None)
        assert len(el) == 3 and len(el[0]) == 2, el
        assert a.read_element(b"MHAI1$MX$HA$phsAHar", 9, b"cVal$mag$f") is not None
        assert a.create(b"@dyn", HAR) != 0, "the name is taken"
        assert a.create(b"@bad", [b"HAR1LD0/MHAI1.HA.phsAHar(16)[MX]"]) != 0, "16 elements: 0..15"
        assert a.create(b"@bad", [b"HAR1LD0/MMXU1.Nope[MX]"]) != 0

        assert a.create(b"HAR1LD0/LLN0.dynPers", [b"HAR1LD0/MMXU1.Hz[MX]", b"HAR1LD0/MHAI1.HA.phsAHar(0)[MX]"]) == 0
        # The persistent one is everybody's; the association-specific one is a's alone.
        assert sorted(b.data_sets(b"HAR1LD0/LLN0")) == ["dsHar", "dsMeas", "dynPers"]
        assert b.directory(b"HAR1LD0/LLN0.dynPers")[1]
        hz, har0 = b.read_set(b"HAR1LD0/LLN0.dynPers")
        assert len(hz) == 3 and 40.0 < hz[0][0] < 60.0, hz  # MV {mag {f}, q, t} around 50 Hz
        assert len(har0) == 3, har0
        assert not b.directory(b"HAR1LD0/LLN0.dsMeas")[1], "configured in SCL: not deletable"
        assert b.delete(b"HAR1LD0/LLN0.dsMeas")[0] is False
        assert b.delete(b"HAR1LD0/LLN0.dynPers") == (True, 0)
        assert sorted(a.data_sets(b"HAR1LD0/LLN0")) == ["dsHar", "dsMeas"]
    finally:
        a.close()
        b.close()


def test_urcb_on_a_dynamic_data_set_reports_its_drifting_members(drifting):
    c = Client(drifting.port)
    try:
        assert c.create(b"@dyn", HAR) == 0
        assert c.enable_on(b"@dyn") == 0
        # Referenced by the RCB: DeleteNamedVariableList answers object-constraint-conflict.
        assert c.delete(b"@dyn")[0] is False
        reports = c.wait_reports(2, timeout=15)
        assert len(reports) >= 2, reports
        with c._lock:
            values, reasons, sets = list(c.values), list(c.reasons), list(c.data_sets_seen)
        assert set(sets) == {"@dyn"}, sets
        assert all(len(v) == 3 for v in values), values
        # Only changed members are included, with reason data-change (bit 1 of ReasonCode).
        assert all(any(r & 1 for r in rs) for rs in reasons), reasons
    finally:
        c.close()


def test_values_drift_unless_static(drifting, still):
    moving, quiet = Client(drifting.port), Client(still.port)
    try:
        assert moving.enable_on(None) == 0
        assert quiet.enable_on(None) == 0
        t0 = [c.read_float(b"HAR1LD0/MMXU1.TotW.mag.f") for c in (moving, quiet)]
        reports = moving.wait_reports(1, timeout=10)
        assert reports, "a drifting model sends data-change reports"
        time.sleep(1.0)
        assert quiet.wait_reports(1, timeout=2) == [], "a static model sends none"
        t1 = [c.read_float(b"HAR1LD0/MMXU1.TotW.mag.f") for c in (moving, quiet)]
        assert t1[1] == t0[1] == 1000.0
        # TotW may not be the point that moved; the reports say something did.
        assert 800.0 < t1[0] < 1200.0, t1
    finally:
        moving.close()
        quiet.close()


def test_scl_data_set_with_array_element_members(drifting):
    """dsHar of the CID names phsAHar(7), phsAHar(9).cVal and phsAHar(10).cVal.mag.f (the forms
    of libiec61850's own sample lib_mhai_array.cid): libiec61850's client lists them back in its
    reference form and reads the three elements."""
    c = Client(drifting.port)
    try:
        members, deletable = c.directory(b"HAR1LD0/LLN0.dsHar")
        assert not deletable
        assert members == ["HAR1LD0/MHAI1.HA.phsAHar(7)[MX]", "HAR1LD0/MHAI1.HA.phsAHar(9).cVal[MX]",
                           "HAR1LD0/MHAI1.HA.phsAHar(10).cVal.mag.f[MX]"], members
        v = c.read_set(b"HAR1LD0/LLN0.dsHar")
        assert len(v) == 3 and len(v[0]) == 3 and len(v[1]) == 2 and isinstance(v[2], float), v
        assert isinstance(c.read_element(b"MHAI1$MX$HA$phsAHar", 10, b"cVal$mag$f"), float)
    finally:
        c.close()
