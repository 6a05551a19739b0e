"""`gander mms server --scl` of a fixture with the basic types gander's server used to refuse
(crates/peers/tests/data/btypes_ltrk.icd: a Unicode255 `dU`, an LTRK-like GoCB tracking object
whose `dstAddress` is a PhyComAddr, Octet6/Octet16/INT128/INT24U; the need showed in the SEL 451
CID of sureenapatnaik92/sampleProject and in lib_simpleIO_ltrk_tests.icd of
mz-automation/libiec61850), read by libiec61850 1.6.1's client (pyiec61850-ng wheel, ctypes):
it finds the new attributes, reads the Unicode255 as an MMS string (UTF-8, `90`), gets the
PhyComAddr's type as the structure libiec61850's own server declares (Addr octet-string(6),
PRIORITY unsigned(8), VID and APPID unsigned(16)), and reads it.

Also: an MMS FileDirectory request (a two-octet tag, `BF 4D`), as an independent IEC 61850
client's feature test sends it, is refused with a reject and the association lives on; and
libiec61850's client lists every name of a logical device too large for one GetNameList page.
"""
from __future__ import annotations

import ctypes as C
import subprocess
import time
from pathlib import Path

import pytest

import iec
import mms_iec
from mms_gander import SclServer
from conftest import REPO

FIXTURE = REPO / "crates" / "peers" / "tests" / "data" / "btypes_ltrk.icd"
P, I, S, U32 = C.c_void_p, C.c_int, C.c_char_p, C.c_uint32
FC_SP, FC_DC, FC_SR = 2, 5, 8  # FunctionalConstraint (iec61850_common.h): ST 0, MX 1, SP 2, SV 3, CF 4, DC 5, SG 6, SE 7, SR 8
MMS_STRUCTURE, MMS_INTEGER, MMS_UNSIGNED, MMS_OCTET_STRING, MMS_STRING = 1, 4, 5, 7, 13


def _lib():
    return mms_iec.declare([
        ("IedConnection_readObject", P, [P, C.POINTER(I), S, I]),
        ("IedConnection_getVariableSpecification", P, [P, C.POINTER(I), S, I]),
        ("IedConnection_getLogicalDeviceDirectory", P, [P, C.POINTER(I), S]),
        ("IedConnection_getLogicalDeviceVariables", P, [P, C.POINTER(I), S]),
        ("MmsValue_toString", S, [P]),
        ("MmsValue_getOctetStringSize", I, [P]),
        ("MmsVariableSpecification_getType", I, [P]),
        ("MmsVariableSpecification_getSize", I, [P]),
        ("MmsVariableSpecification_getChildSpecificationByIndex", P, [P, I]),
        ("MmsVariableSpecification_getName", S, [P]),
        ("MmsVariableSpecification_destroy", None, [P]),
        ("LinkedList_getNext", P, [P]),
        ("LinkedList_getData", P, [P]),
        ("LinkedList_destroy", None, [P]),
    ])


def serve(gander: str, scl: Path) -> SclServer:
    return SclServer(gander, "--scl", str(scl), "--listen", "127.0.0.1:0")


@pytest.fixture(scope="module")
def server(gander):
    s = serve(gander, FIXTURE)
    yield s
    assert s.stop()[0] == 0


def client(L, port: int):
    """A connected client whose first read succeeded: libiec61850 1.6.1's client sometimes
    reports connection-lost (3) on its first service after a successful connect (its own race,
    seen against its own server too; test_mms_scl_server.py `ready`); retry that case only."""
    for _ in range(3):
        c = L.IedConnection_create()
        err = I(0)
        L.IedConnection_connect(c, C.byref(err), b"127.0.0.1", port)
        assert err.value == 0, err.value
        v = L.IedConnection_readObject(c, C.byref(err), b"BTYLD0/LLN0.Mod.stVal", 0)
        if v:
            L.MmsValue_delete(v)
        if err.value != 3:
            assert err.value == 0, err.value
            return c
        close(L, c)
        time.sleep(0.3)
    raise AssertionError("connection lost on the first read three times")


def close(L, c):
    err = I(0)
    L.IedConnection_release(c, C.byref(err))
    L.IedConnection_destroy(c)


strings = mms_iec.names


def test_libiec61850_reads_unicode255_as_an_mms_string(server):
    L = _lib()
    c = client(L, server.port)
    err = I(0)
    try:
        lns = strings(L, L.IedConnection_getLogicalDeviceDirectory(c, C.byref(err), b"BTYLD0"))
        assert set(lns) == {"LLN0", "LTRK1", "GGIO1"}, lns
        for ref, want in [(b"BTYLD0/LLN0.Mod.dU", "Betriebsart \u03a9 \u2013 \u00e4ndern"),
                          (b"BTYLD0/LTRK1.GoCBTrk.dU", "GoCB tracking")]:
            v = L.IedConnection_readObject(c, C.byref(err), ref, FC_DC)
            assert err.value == 0 and v, (ref, err.value)
            assert L.MmsValue_getType(v) == MMS_STRING, (ref, L.MmsValue_getType(v))
            assert L.MmsValue_toString(v).decode("utf-8") == want
            L.MmsValue_delete(v)
    finally:
        close(L, c)


def test_libiec61850_reads_phycomaddr_as_libiec61850_declares_it(server):
    L = _lib()
    c = client(L, server.port)
    err = I(0)
    try:
        spec = L.IedConnection_getVariableSpecification(c, C.byref(err), b"BTYLD0/LTRK1.GoCBTrk.dstAddress", FC_SR)
        assert err.value == 0 and spec, err.value
        assert L.MmsVariableSpecification_getType(spec) == MMS_STRUCTURE
        kids = []
        for i in range(L.MmsVariableSpecification_getSize(spec)):
            k = L.MmsVariableSpecification_getChildSpecificationByIndex(spec, i)
            kids.append((L.MmsVariableSpecification_getName(k).decode(), L.MmsVariableSpecification_getType(k),
                         L.MmsVariableSpecification_getSize(k)))
        L.MmsVariableSpecification_destroy(spec)
        # MmsMapping_createPhyComAddrStructure (libiec61850 mms_mapping.c).
        assert kids == [("Addr", MMS_OCTET_STRING, 6), ("PRIORITY", MMS_UNSIGNED, 8),
                        ("VID", MMS_UNSIGNED, 16), ("APPID", MMS_UNSIGNED, 16)], kids
        v = L.IedConnection_readObject(c, C.byref(err), b"BTYLD0/LTRK1.GoCBTrk.dstAddress", FC_SR)
        assert err.value == 0 and v
        assert L.MmsValue_getType(v) == MMS_STRUCTURE and L.MmsValue_getArraySize(v) == 4
        assert L.MmsValue_getOctetStringSize(L.MmsValue_getElement(v, 0)) == 6
        L.MmsValue_delete(v)
        for ref, t, size in [(b"BTYLD0/GGIO1.Addr.mac", MMS_OCTET_STRING, -6),  # varying, as libiec61850 declares Octet6
                             (b"BTYLD0/GGIO1.Addr.key", MMS_OCTET_STRING, -16),
                             (b"BTYLD0/GGIO1.Addr.big", MMS_INTEGER, 128),
                             (b"BTYLD0/GGIO1.Addr.n24", MMS_UNSIGNED, 24)]:
            s = L.IedConnection_getVariableSpecification(c, C.byref(err), ref, FC_SP)
            assert err.value == 0 and s, (ref, err.value)
            got = (L.MmsVariableSpecification_getType(s), L.MmsVariableSpecification_getSize(s))
            L.MmsVariableSpecification_destroy(s)
            assert got == (t, size), (ref, got)
    finally:
        close(L, c)


def test_file_and_journal_services_are_refused_and_the_association_lives(server):
    """libiec61850's client asks for the file directory (FileDirectory [77], `BF 4D`, two
    identifier octets) and reads a journal (ReadJournal [65], `BF 41`): gander's server has
    neither and says so with a reject; the next read on the same association succeeds."""
    L = _lib()
    for name, res, args in [
        ("IedConnection_getFileDirectory", P, [P, C.POINTER(I), S]),
        ("IedConnection_queryLogByTime", P, [P, C.POINTER(I), S, C.c_uint64, C.c_uint64, C.POINTER(C.c_bool)]),
        ("IedConnection_getState", I, [P]),
    ]:
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    c = client(L, server.port)
    err = I(0)
    try:
        d = L.IedConnection_getFileDirectory(c, C.byref(err), b"")
        assert not d and err.value != 0, err.value
        more = C.c_bool(False)
        j = L.IedConnection_queryLogByTime(c, C.byref(err), b"BTYLD0/LLN0$Log", 0, 2**40, C.byref(more))
        assert not j and err.value != 0, err.value
        assert L.IedConnection_getState(c) == 2, "IED_STATE_CONNECTED"
        v = L.IedConnection_readObject(c, C.byref(err), b"BTYLD0/LLN0.Mod.dU", FC_DC)
        assert err.value == 0 and v, err.value
        L.MmsValue_delete(v)
    finally:
        close(L, c)


def test_libiec61850_lists_a_logical_device_larger_than_one_page(gander, tmp_path):
    """3000 data objects in one LN: about 12 000 names, several 65000-octet GetNameList pages
    of more than 1024 identifiers each (what the old fixed limit refused)."""
    text = FIXTURE.read_text()
    dos = "".join(f'<DO name="Ind{i}" type="BTY_SPS"/>' for i in range(1, 3001))
    text = text.replace('<DO name="Addr" type="BTY_Octets"/>', '<DO name="Addr" type="BTY_Octets"/>' + dos)
    text = text.replace('<DOType id="BTY_Octets"', '<DOType id="BTY_SPS" cdc="SPS"><DA name="stVal" bType="BOOLEAN" fc="ST"/>'
                        '<DA name="q" bType="Quality" fc="ST"/><DA name="t" bType="Timestamp" fc="ST"/></DOType>'
                        '<DOType id="BTY_Octets"')
    big = tmp_path / "big.icd"
    big.write_text(text)
    s = serve(gander, big)
    L = _lib()
    try:
        c = client(L, s.port)
        err = I(0)
        try:
            names = strings(L, L.IedConnection_getLogicalDeviceVariables(c, C.byref(err), b"BTYLD0"))
            assert err.value == 0
            assert len(names) > 12000, len(names)
            assert "GGIO1$ST$Ind3000$stVal" in names
        finally:
            close(L, c)
        p = subprocess.run([gander, "probe", f"127.0.0.1:{s.port}", "--json", "--quick"],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
    finally:
        assert s.stop()[0] == 0
