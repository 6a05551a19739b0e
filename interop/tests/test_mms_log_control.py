"""Log control blocks (FC LG) and logs: ``gander mms server --scl`` against libiec61850 1.6.1
(pyiec61850-ng wheel, ctypes) serving the same SCL (its genconfig output,
interop/fixtures/libiec61850/log_control.cfg, through interop/lib_cfg_server.py).

The fixture (interop/fixtures/log_control.cid, our own; its comment names the public files it
reproduces) has an enabled LCB, a disabled one with an integrity period, one in a GGIO, and
the logs they name. libiec61850's client:
- lists every variable of the LD on both servers: the same LG names, type descriptions and
  values (IEC 61850-8-1 §17.3: LogEna, LogRef, DatSet, OldEntrTm, NewEntrTm, OldEntr, NewEntr,
  TrgOps, IntgPd);
- lists the LD's journals (the logs) on both: the same names;
- runs the same SetLCBValues sequence on both (IEC 61850-7-2 §17.3.3.3: DatSet and IntgPd only
  while LogEna is FALSE, an unknown data set, read-only entry attributes) and gets the same
  answer to every write, then the same values.
gander keeps no journal: a ReadJournal is refused with a confirmed error and the association
lives on (test_open61850.py's unimplemented-service test does the same for the relay fixture).
"""
from __future__ import annotations

import ctypes as C

import pytest

import mms_iec
import o61
from conftest import INTEROP

SCL = INTEROP / "fixtures" / "log_control.cid"
CFG = INTEROP / "fixtures" / "libiec61850" / "log_control.cfg"
DOMAIN = b"LGIEDCTRL"
P, I, S, B, U32 = C.c_void_p, C.c_int, C.c_char_p, C.c_bool, C.c_uint32
FC_LG = 17


def _lib():
    L = mms_iec._declare()
    for name, res, args in [
        ("IedConnection_getMmsConnection", P, [P]),
        ("MmsConnection_getDomainVariableNames", P, [P, C.POINTER(I), S]),
        ("MmsConnection_getDomainJournals", P, [P, C.POINTER(I), S]),
        ("MmsConnection_getVariableAccessAttributes", P, [P, C.POINTER(I), S, S]),
        ("MmsConnection_readVariable", P, [P, C.POINTER(I), S, S]),
        ("MmsVariableSpecification_getType", I, [P]),
        ("MmsVariableSpecification_getName", S, [P]),
        ("MmsVariableSpecification_getSize", I, [P]),
        ("MmsVariableSpecification_getChildSpecificationByIndex", P, [P, I]),
        ("MmsVariableSpecification_destroy", None, [P]),
        ("MmsValue_printToBuffer", S, [P, C.c_char_p, I]),
        ("MmsValue_delete", None, [P]),
        ("LinkedList_getNext", P, [P]),
        ("LinkedList_getData", P, [P]),
        ("LinkedList_destroy", None, [P]),
        ("IedConnection_writeBooleanValue", None, [P, C.POINTER(I), S, I, B]),
        ("IedConnection_writeUnsigned32Value", None, [P, C.POINTER(I), S, I, U32]),
        ("IedConnection_writeVisibleStringValue", None, [P, C.POINTER(I), S, I, S]),
        ("IedConnection_readUnsigned32Value", U32, [P, C.POINTER(I), S, I]),
    ]:
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    return L


def connect(port: int) -> mms_iec.LibClient:
    """A libiec61850 client whose first service succeeded (retrying its first-call
    connection-lost race, see mms_iec.LibClient.connect_and_enable)."""
    L = _lib()
    for _ in range(3):
        c = mms_iec.LibClient()
        assert c.connect("127.0.0.1", port) == 0
        err = C.c_int(0)
        L.IedConnection_readUnsigned32Value(c.con, C.byref(err), b"LGIEDCTRL/LLN0.Periodic.IntgPd", FC_LG)
        if err.value != mms_iec.IED_ERROR_CONNECTION_LOST:
            assert err.value == 0, err.value
            return c
        c.close()
    raise AssertionError("connection lost three times")


def _names(L, lst) -> list[str]:
    out, e = [], L.LinkedList_getNext(lst)
    while e:
        out.append(C.cast(L.LinkedList_getData(e), C.c_char_p).value.decode())
        e = L.LinkedList_getNext(e)
    L.LinkedList_destroy(lst)
    return out


def _describe(L, spec) -> tuple:
    t, n = L.MmsVariableSpecification_getType(spec), L.MmsVariableSpecification_getSize(spec)
    if t == 1:  # structure
        return (t, n, tuple((L.MmsVariableSpecification_getName(k).decode(), _describe(L, k))
                            for k in (L.MmsVariableSpecification_getChildSpecificationByIndex(spec, i)
                                      for i in range(n))))
    return (t, n, None)


def lg_view(c) -> dict:
    """Every LG variable of the LD: name -> (type description, printed value); and the journals."""
    L = _lib()
    mc = L.IedConnection_getMmsConnection(c.con)
    err = C.c_int(0)
    lst = L.MmsConnection_getDomainVariableNames(mc, C.byref(err), DOMAIN)
    assert err.value == 0 and lst, err.value
    out = {}
    for name in _names(L, lst):
        if "$LG" not in name:
            continue
        spec = L.MmsConnection_getVariableAccessAttributes(mc, C.byref(err), DOMAIN, name.encode())
        assert err.value == 0 and spec, (name, err.value)
        d = _describe(L, spec)
        L.MmsVariableSpecification_destroy(spec)
        v = L.MmsConnection_readVariable(mc, C.byref(err), DOMAIN, name.encode())
        assert err.value == 0 and v, (name, err.value)
        buf = C.create_string_buffer(1024)
        L.MmsValue_printToBuffer(v, buf, 1024)
        L.MmsValue_delete(v)
        out[name] = (d, buf.value.decode())
    lst = L.MmsConnection_getDomainJournals(mc, C.byref(err), DOMAIN)
    assert err.value == 0, err.value
    out["(journals)"] = sorted(_names(L, lst)) if lst else []
    return out


# (reference without the FC, kind, value): the SetLCBValues sequence both servers answer.
WRITES = [
    (b"LGIEDCTRL/LLN0.EventLog.DatSet", "str", b"LGIEDCTRL/GGIO1$Ind"),  # enabled
    (b"LGIEDCTRL/LLN0.EventLog.IntgPd", "u32", 1000),  # enabled
    (b"LGIEDCTRL/LLN0.EventLog.LogEna", "bool", False),
    (b"LGIEDCTRL/LLN0.EventLog.DatSet", "str", b"LGIEDCTRL/LLN0$Nope"),  # no such data set
    (b"LGIEDCTRL/LLN0.EventLog.DatSet", "str", b"LGIEDCTRL/GGIO1$Ind"),
    (b"LGIEDCTRL/LLN0.EventLog.IntgPd", "u32", 1000),
    (b"LGIEDCTRL/LLN0.EventLog.LogEna", "bool", True),
    (b"LGIEDCTRL/LLN0.Periodic.IntgPd", "u32", 2000),  # disabled
    (b"LGIEDCTRL/LLN0.Periodic.LogRef", "str", b"LGIEDCTRL/GGIO1$IndLog"),
]


def run_writes(c) -> list[int]:
    L = _lib()
    out = []
    for ref, kind, v in WRITES:
        err = C.c_int(0)
        if kind == "bool":
            L.IedConnection_writeBooleanValue(c.con, C.byref(err), ref, FC_LG, v)
        elif kind == "u32":
            L.IedConnection_writeUnsigned32Value(c.con, C.byref(err), ref, FC_LG, v)
        else:
            L.IedConnection_writeVisibleStringValue(c.con, C.byref(err), ref, FC_LG, v)
        out.append(err.value)
    return out


@pytest.fixture(scope="module")
def both(gander):
    with o61.GanderServer(gander, SCL) as g, o61.LibCfgServer(CFG) as lib:
        yield {"gander": g.port, "libiec61850": lib.port}


def test_libiec61850_client_reads_the_same_lcbs_and_logs_from_gander(both):
    views = {}
    for name, port in both.items():
        c = connect(port)
        try:
            views[name] = lg_view(c)
        finally:
            c.close()
    ours, theirs = views["gander"], views["libiec61850"]
    assert "LLN0$LG$EventLog$LogEna" in ours and "GGIO1$LG$IndLog$NewEntrTm" in ours, sorted(ours)
    assert sorted(ours) == sorted(theirs)
    for k in theirs:
        assert ours[k] == theirs[k], k
    assert ours["(journals)"] == ["GGIO1$IndLog", "LLN0$EventLog", "LLN0$GeneralLog"]


def test_set_lcb_values_answered_as_libiec61850_answers(both):
    """The same writes get the same answers (0 success, 26 temporarily-unavailable, 32
    object-value-invalid) on both servers, and leave the same values."""
    answers, views = {}, {}
    for name, port in both.items():
        c = connect(port)
        try:
            answers[name] = run_writes(c)
            views[name] = lg_view(c)
        finally:
            c.close()
    assert answers["gander"] == [26, 26, 0, 32, 0, 0, 0, 0, 0], answers
    assert answers["gander"] == answers["libiec61850"]
    assert views["gander"] == views["libiec61850"]


def test_read_journal_is_refused_and_the_association_lives(gander):
    from open61850.mms.errors import MmsConnectionError, MmsError, MmsTimeout

    with o61.GanderServer(gander, SCL) as s, o61.connect(s.port, timeout=5) as client:
        with pytest.raises(MmsError) as e:
            client.request(o61.read_journal_request("LGIEDCTRL", "LLN0$EventLog"))
        assert not isinstance(e.value, (MmsConnectionError, MmsTimeout)), repr(e.value)
        assert str(client.read("LGIEDCTRL/LLN0$LG$EventLog$LogEna")) == "bool(True)"
