"""Capture the MMS PDUs libiec61850 1.6.1 exchanges for the client services of `gander-mms`.

Provenance of the golden PDUs in `libiec61850_services.txt` (and the unit tests that cite them):
a libiec61850 server (IED "IMP", LD "LD0" -> domain "IMPLD0") and a libiec61850 client, both from
the pyiec61850-ng wheel through ctypes, talk over loopback through interop's RecordingProxy; this
script strips TPKT/COTP/session/presentation and prints each MMS PDU as hex with a label.

Run from the repository root:
    PYTHONPATH=interop .venv/bin/python crates/mms/tests/golden/capture_services.py \
        > crates/mms/tests/golden/libiec61850_services.txt
"""
from __future__ import annotations

import ctypes as C
import socket
import sys

import iec
import mms_iec
import mms_pcap

P, I, U32, U8, B, S = C.c_void_p, C.c_int, C.c_uint32, C.c_uint8, C.c_bool, C.c_char_p


def declare(L):
    sigs = {
        "IedServerConfig_create": (P, []),
        "IedServerConfig_enableResvTmsForBRCB": (None, [P, B]),
        "IedServerConfig_enableOwnerForRCB": (None, [P, B]),
        "MmsConnection_setLocalDetail": (None, [P, I]),
        "IedServer_createWithConfig": (P, [P, P, P]),
        "IedServer_setServerIdentity": (None, [P, S, S, S]),
        "CDC_SPC_create": (P, [S, P, U32, U32]),
        "CDC_INS_create": (P, [S, P, U32]),
        "IedConnection_getMmsConnection": (P, [P]),
        "MmsConnection_identify": (P, [P, C.POINTER(I)]),
        "MmsConnection_getDomainNames": (P, [P, C.POINTER(I)]),
        "MmsConnection_getDomainVariableNames": (P, [P, C.POINTER(I), S]),
        "MmsConnection_getDomainVariableListNames": (P, [P, C.POINTER(I), S]),
        "MmsConnection_getVariableAccessAttributes": (P, [P, C.POINTER(I), S, S]),
        "MmsConnection_readNamedVariableListDirectory": (P, [P, C.POINTER(I), S, S, C.POINTER(B)]),
        "MmsConnection_readVariable": (P, [P, C.POINTER(I), S, S]),
        "MmsConnection_readVariableComponent": (P, [P, C.POINTER(I), S, S, S]),
        "MmsConnection_writeVariable": (I, [P, C.POINTER(I), S, S, P]),
        "ControlObjectClient_create": (P, [S, P]),
        "ControlObjectClient_operate": (B, [P, P, C.c_uint64]),
        "ControlObjectClient_setOrigin": (None, [P, S, I]),
        "ControlObjectClient_getLastApplError": (P, [P]),
        "IedServer_setPerformCheckHandler": (None, [P, P, P, P]),
        "IedConnection_getRCBValues": (P, [P, C.POINTER(I), S, P]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(L, name)
        fn.restype = res
        fn.argtypes = args


CheckHandler = C.CFUNCTYPE(I, P, P, P, B, B)


def build_server(port):
    L = mms_iec._declare()
    declare(L)
    model = L.IedModel_create(b"IMP")
    ld = L.LogicalDevice_create(b"LD0", model)
    lln0 = L.LogicalNode_create(b"LLN0", ld)
    ggio = L.LogicalNode_create(b"GGIO1", ld)
    L.CDC_SPS_create(b"Ind1", ggio, 0)
    L.CDC_MV_create(b"AnIn1", ggio, 0, False)
    # SPC with direct-with-enhanced-security (3) so a refused operate sends LastApplError.
    L.CDC_SPC_create(b"SPCSO1", ggio, 0, 3)
    ds = L.DataSet_create(b"DS1", lln0)
    L.DataSetEntry_create(ds, b"GGIO1$ST$Ind1", -1, None)
    L.DataSetEntry_create(ds, b"GGIO1$MX$AnIn1", -1, None)
    L.ReportControlBlock_create(b"urcb01", lln0, b"rpt01", False, b"DS1", 1, 1 | 16, 1 | 2 | 4 | 8, 0, 0)
    L.ReportControlBlock_create(b"brcb01", lln0, b"brpt01", True, b"DS1", 1, 1 | 16, 1 | 2 | 4 | 8 | 64, 50, 0)
    cfg = L.IedServerConfig_create()
    L.IedServerConfig_enableResvTmsForBRCB(cfg, True)
    L.IedServerConfig_enableOwnerForRCB(cfg, True)
    server = L.IedServer_createWithConfig(model, None, cfg)
    L.IedServer_setServerIdentity(server, b"gander-test", b"capture", b"1.6.1")
    spc = L.IedModel_getModelNodeByObjectReference(model, b"IMPLD0/GGIO1.SPCSO1")

    def refuse(action, param, ctl_val, test, interlock):
        return 3  # CONTROL_OBJECT_ACCESS_DENIED

    cb = CheckHandler(refuse)
    L.IedServer_setPerformCheckHandler(server, spc, C.cast(cb, P), None)
    L.IedServer_start(server, port)
    if not L.IedServer_isRunning(server):
        raise RuntimeError("server did not start")
    return L, server, model, cb


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def mms_pdus(chunks):
    """Yield (direction, MMS PDU bytes) from the recorded stream of each direction."""
    streams = {0: b"", 1: b""}
    order = []
    for d, data in chunks:
        streams[d] += data
        buf = streams[d]
        while len(buf) >= 4:
            n = int.from_bytes(buf[2:4], "big")
            if len(buf) < n:
                break
            order.append((d, buf[4:n]))
            buf = buf[n:]
        streams[d] = buf
    for d, tpdu in order:
        if len(tpdu) < 3 or tpdu[1] != 0xF0:
            continue
        spdu = tpdu[3:]
        if spdu[:4] != b"\x01\x00\x01\x00":
            continue
        ppdu = spdu[4:]
        # 61 L { 30 L { 02 01 03, A0 L <MMS> } }
        i = 0

        def hdr(b, i):
            t = b[i]
            ln = b[i + 1]
            i += 2
            if ln & 0x80:
                k = ln & 0x7F
                ln = int.from_bytes(b[i:i + k], "big")
                i += k
            return t, ln, i

        _, _, i = hdr(ppdu, 0)
        _, _, i = hdr(ppdu, i)
        _, ln, i = hdr(ppdu, i)
        i += ln
        _, ln, i = hdr(ppdu, i)
        yield d, ppdu[i:i + ln]


def main():
    port = free_port()
    L, server, model, cb = build_server(port)
    proxy = mms_pcap.RecordingProxy(("127.0.0.1", port))
    con = L.IedConnection_create()
    err = C.c_int(0)
    mms = L.IedConnection_getMmsConnection(con)
    # A small proposed PDU size makes GetNameList of the domain's variables need continuation.
    L.MmsConnection_setLocalDetail(mms, 400)
    L.IedConnection_connect(con, C.byref(err), b"127.0.0.1", proxy.port)
    if err.value:
        raise RuntimeError(f"connect {err.value}")
    mms = L.IedConnection_getMmsConnection(con)
    steps = []

    def step(label, fn):
        e = C.c_int(0)
        fn(e)
        steps.append((label, e.value))

    step("identify", lambda e: L.MmsConnection_identify(mms, C.byref(e)))
    step("getNameList domains", lambda e: L.MmsConnection_getDomainNames(mms, C.byref(e)))
    step("getNameList variables IMPLD0", lambda e: L.MmsConnection_getDomainVariableNames(mms, C.byref(e), b"IMPLD0"))
    step("getNameList lists IMPLD0", lambda e: L.MmsConnection_getDomainVariableListNames(mms, C.byref(e), b"IMPLD0"))
    step("read GGIO1$MX$AnIn1", lambda e: L.MmsConnection_readVariable(mms, C.byref(e), b"IMPLD0", b"GGIO1$MX$AnIn1"))
    step("read component GGIO1$ST / Ind1$stVal",
         lambda e: L.MmsConnection_readVariableComponent(mms, C.byref(e), b"IMPLD0", b"GGIO1$ST", b"Ind1$stVal"))
    step("read BRCB", lambda e: L.IedConnection_getRCBValues(con, C.byref(e), b"IMPLD0/LLN0.BR.brcb01", None))
    v = L.MmsValue_newBoolean(True)
    step("write read-only stVal",
         lambda e: L.MmsConnection_writeVariable(mms, C.byref(e), b"IMPLD0", b"GGIO1$ST$Ind1$stVal", v))
    ctl = L.ControlObjectClient_create(b"IMPLD0/GGIO1.SPCSO1", con)
    L.ControlObjectClient_setOrigin(ctl, b"gander", 3)
    step("operate refused (LastApplError)", lambda e: L.ControlObjectClient_operate(ctl, v, 0))
    L.IedConnection_release(con, C.byref(err))
    L.IedConnection_close(con)
    chunks = proxy.join()
    # Second association with the default local detail (65000): whole-LN type descriptions.
    proxy = mms_pcap.RecordingProxy(("127.0.0.1", port))
    con = L.IedConnection_create()
    L.IedConnection_connect(con, C.byref(err), b"127.0.0.1", proxy.port)
    if err.value:
        raise RuntimeError(f"connect {err.value}")
    mms = L.IedConnection_getMmsConnection(con)
    step("getVariableAccessAttributes IMPLD0/LLN0",
         lambda e: L.MmsConnection_getVariableAccessAttributes(mms, C.byref(e), b"IMPLD0", b"LLN0"))
    step("getVariableAccessAttributes IMPLD0/GGIO1",
         lambda e: L.MmsConnection_getVariableAccessAttributes(mms, C.byref(e), b"IMPLD0", b"GGIO1"))
    dl = C.c_bool(False)
    step("getNamedVariableListAttributes IMPLD0/LLN0$DS1",
         lambda e: L.MmsConnection_readNamedVariableListDirectory(mms, C.byref(e), b"IMPLD0", b"LLN0$DS1", C.byref(dl)))
    L.IedConnection_release(con, C.byref(err))
    L.IedConnection_close(con)
    chunks2 = proxy.join()
    L.IedServer_stop(server)
    print("# libiec61850 1.6.1 (pyiec61850-ng 1.6.1.10), MMS PDUs only; C>S client to server")
    for label, e in steps:
        print(f"# step {label}: client error {e}")
    for n, c in enumerate([chunks, chunks2]):
        print(f"# association {n + 1}")
        for d, pdu in mms_pdus(c):
            print(("C>S " if d == 0 else "S>C ") + pdu.hex())


if __name__ == "__main__":
    sys.exit(main())
