"""libiec61850 1.6.1 (pyiec61850-ng wheel) as an MMS reference peer, through ctypes.

- ``LibServer``: an IEC 61850 server built with the dynamic-model API to match gander's fixed model
  (IED ``IMP``, LD ``LD0`` -> MMS domain ``IMPLD0``, ``LLN0`` with data set ``DS1`` and the
  unbuffered RCB ``urcb01``, RptID ``rpt01``; ``GGIO1`` whose members fill DS1). A thread changes
  ``GGIO1.Ind1.stVal`` every ``period`` seconds, so an enabled RCB sends a data-change report.
- ``LibClient``: connects, enables ``IMPLD0/LLN0.RP.urcb01`` exactly as the library's client does
  (``IedConnection_getRCBValues`` then ``IedConnection_setRCBValues`` with RptEna, OptFlds, TrgOps and
  GI in one Write) and collects the reports (RptID, SqNum) in its callback.
- ``tls_config(mode, pki_dir, role)``: a TLSConfiguration for a ``Mode`` (versions, suite, pinning).

GPL library, external test peer only (see iec.py).
"""
from __future__ import annotations

import ctypes as C
import dataclasses
import threading
import time

import iec

P, I, U32, U8, B, S = C.c_void_p, C.c_int, C.c_uint32, C.c_uint8, C.c_bool, C.c_char_p
ReportHandler = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p)

# TLSConfigVersion (hal/inc/tls_config.h)
TLS_1_2, TLS_1_3 = 6, 7
# FunctionalConstraint
FC_ST, FC_MX = 0, 1
# TRG_OPT_* / RPT_OPT_* (iec61850_common.h)
TRG_DCHG, TRG_GI = 1, 16
OPT_SEQ_NUM, OPT_TIME_STAMP, OPT_REASON, OPT_DATA_SET = 1, 2, 4, 8
# IedConnection_setRCBValues parameter mask
RCB_RPT_ENA, RCB_OPT_FLDS, RCB_TRG_OPS, RCB_GI = 2, 32, 256, 1024

_declared = False


def _declare() -> C.CDLL:
    global _declared
    L = iec.lib()
    if _declared:
        return L
    sigs = {
        "TLSConfiguration_create": (P, []),
        "TLSConfiguration_destroy": (None, [P]),
        "TLSConfiguration_setOwnCertificateFromFile": (B, [P, S]),
        "TLSConfiguration_setOwnKeyFromFile": (B, [P, S, S]),
        "TLSConfiguration_addCACertificateFromFile": (B, [P, S]),
        "TLSConfiguration_addAllowedCertificateFromFile": (B, [P, S]),
        "TLSConfiguration_setAllowOnlyKnownCertificates": (None, [P, B]),
        "TLSConfiguration_setMinTlsVersion": (None, [P, I]),
        "TLSConfiguration_setMaxTlsVersion": (None, [P, I]),
        "TLSConfiguration_clearCipherSuiteList": (None, [P]),
        "TLSConfiguration_addCipherSuite": (None, [P, I]),
        "TLSConfiguration_enableSessionResumption": (None, [P, B]),
        "IedModel_create": (P, [S]),
        "IedModel_destroy": (None, [P]),
        "IedModel_getModelNodeByObjectReference": (P, [P, S]),
        "LogicalDevice_create": (P, [S, P]),
        "LogicalNode_create": (P, [S, P]),
        "CDC_SPS_create": (P, [S, P, U32]),
        "CDC_MV_create": (P, [S, P, U32, B]),
        "DataSet_create": (P, [S, P]),
        "DataSetEntry_create": (P, [P, S, I, S]),
        "ReportControlBlock_create": (P, [S, P, S, B, S, U32, U8, U8, U32, U32]),
        "IedServer_create": (P, [P]),
        "IedServer_createWithTlsSupport": (P, [P, P]),
        "IedServer_start": (None, [P, I]),
        "IedServer_stop": (None, [P]),
        "IedServer_isRunning": (B, [P]),
        "IedServer_destroy": (None, [P]),
        "IedServer_lockDataModel": (None, [P]),
        "IedServer_unlockDataModel": (None, [P]),
        "IedServer_updateBooleanAttributeValue": (None, [P, P, B]),
        "IedServer_updateFloatAttributeValue": (None, [P, P, C.c_float]),
        "IedConnection_create": (P, []),
        "IedConnection_createWithTlsSupport": (P, [P]),
        "IedConnection_setConnectTimeout": (None, [P, U32]),
        "IedConnection_connect": (None, [P, C.POINTER(I), S, I]),
        "IedConnection_getRCBValues": (P, [P, C.POINTER(I), S, P]),
        "IedConnection_installReportHandler": (None, [P, S, S, ReportHandler, P]),
        "IedConnection_setRCBValues": (None, [P, C.POINTER(I), P, U32, B]),
        "IedConnection_release": (None, [P, C.POINTER(I)]),
        "IedConnection_close": (None, [P]),
        "IedConnection_destroy": (None, [P]),
        "ClientReportControlBlock_getRptId": (S, [P]),
        "ClientReportControlBlock_setRptEna": (None, [P, B]),
        "ClientReportControlBlock_setGI": (None, [P, B]),
        "ClientReportControlBlock_setTrgOps": (None, [P, I]),
        "ClientReportControlBlock_setOptFlds": (None, [P, I]),
        "ClientReportControlBlock_destroy": (None, [P]),
        "ClientReport_getRptId": (S, [P]),
        "ClientReport_getSeqNum": (C.c_uint16, [P]),
        "ClientReport_getDataSetValues": (P, [P]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(L, name)
        fn.restype = res
        fn.argtypes = args
    _declared = True
    return L


def declare(extra: list[tuple[str, object, list]]) -> C.CDLL:
    """The library with `_declare`'s prototypes and the (name, restype, argtypes) of `extra`."""
    L = _declare()
    for name, res, args in extra:
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    return L


def names(L: C.CDLL, lst) -> list[str]:
    """The strings of a libiec61850 LinkedList of char* (a directory answer), which it frees."""
    assert lst, "the directory call failed (NULL list)"
    out, e = [], L.LinkedList_getNext(lst)
    while e:
        out.append(C.cast(L.LinkedList_getData(e), C.c_char_p).value.decode())
        e = L.LinkedList_getNext(e)
    L.LinkedList_destroy(lst)
    return out


@dataclasses.dataclass(frozen=True)
class Mode:
    """One interop mode: None versions = plain TCP."""
    name: str
    version: int | None = None        # TLS_1_2 / TLS_1_3
    suite_code: int | None = None
    suite_name: str | None = None

    @property
    def tls(self) -> bool:
        return self.version is not None

    @property
    def gander_version(self) -> str:
        return {TLS_1_2: "1.2", TLS_1_3: "1.3"}[self.version]


MODES = [
    Mode("plain"),
    Mode("tls12-ecdhe-rsa-aes128-gcm", TLS_1_2, 0xC02F, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
    Mode("tls12-rsa-aes128-cbc-sha256", TLS_1_2, 0x003C, "TLS_RSA_WITH_AES_128_CBC_SHA256"),
    Mode("tls13-aes128-gcm", TLS_1_3, 0x1301, "TLS_AES_128_GCM_SHA256"),
]


def tls_config(mode: Mode, pki: str, role: str, pin: bool = True) -> int | None:
    """TLSConfiguration for libiec61850 in ``role`` ('server' or 'client'); pins the peer's cert."""
    if not mode.tls:
        return None
    L = _declare()
    peer = "client" if role == "server" else "server"
    t = L.TLSConfiguration_create()
    ok = (L.TLSConfiguration_setOwnCertificateFromFile(t, f"{pki}/{role}.pem".encode())
          and L.TLSConfiguration_setOwnKeyFromFile(t, f"{pki}/{role}.key".encode(), None)
          and L.TLSConfiguration_addCACertificateFromFile(t, f"{pki}/ca.pem".encode()))
    if not ok:
        raise RuntimeError(f"libiec61850 TLS configuration failed for {pki}")
    if pin:
        L.TLSConfiguration_addAllowedCertificateFromFile(t, f"{pki}/{peer}.pem".encode())
        L.TLSConfiguration_setAllowOnlyKnownCertificates(t, True)
    L.TLSConfiguration_setMinTlsVersion(t, mode.version)
    L.TLSConfiguration_setMaxTlsVersion(t, mode.version)
    L.TLSConfiguration_clearCipherSuiteList(t)
    L.TLSConfiguration_addCipherSuite(t, mode.suite_code)
    L.TLSConfiguration_enableSessionResumption(t, False)
    return t


class UpdatingServer:
    """A started libiec61850 ``IedServer`` (``L``, ``server``, ``model``, ``tls``) whose values a
    thread changes every ``period`` s: ``update(step)`` runs under the data-model lock, with
    step 1, 2, ... ``close()`` stops the thread and frees the server."""

    def start_updates(self, period: float):
        self.period = period
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def update(self, step: int):
        raise NotImplementedError

    def _run(self):
        step = 0
        while not self._stop.wait(self.period):
            step += 1
            self.L.IedServer_lockDataModel(self.server)
            try:
                self.update(step)
            finally:
                self.L.IedServer_unlockDataModel(self.server)

    def close(self):
        self._stop.set()
        self._t.join(timeout=2)
        self.L.IedServer_stop(self.server)
        self.L.IedServer_destroy(self.server)
        self.L.IedModel_destroy(self.model)
        if self.tls:
            self.L.TLSConfiguration_destroy(self.tls)


class LibServer(UpdatingServer):
    """libiec61850 server with gander's model; reports every ``period`` s once a client enables."""

    def __init__(self, port: int, tls: int | None = None, period: float = 0.02):
        L = self.L = _declare()
        self.model = L.IedModel_create(b"IMP")
        ld = L.LogicalDevice_create(b"LD0", self.model)
        lln0 = L.LogicalNode_create(b"LLN0", ld)
        ggio = L.LogicalNode_create(b"GGIO1", ld)
        L.CDC_SPS_create(b"Ind1", ggio, 0)
        L.CDC_MV_create(b"AnIn1", ggio, 0, False)
        ds = L.DataSet_create(b"DS1", lln0)
        L.DataSetEntry_create(ds, b"GGIO1$ST$Ind1", -1, None)
        L.DataSetEntry_create(ds, b"GGIO1$MX$AnIn1", -1, None)
        L.ReportControlBlock_create(b"urcb01", lln0, b"rpt01", False, b"DS1", 1, TRG_DCHG | TRG_GI,
                                    OPT_SEQ_NUM | OPT_TIME_STAMP | OPT_REASON | OPT_DATA_SET, 0, 0)
        self.server = L.IedServer_createWithTlsSupport(self.model, tls) if tls else L.IedServer_create(self.model)
        self.tls = tls
        self.ind1 = L.IedModel_getModelNodeByObjectReference(self.model, b"IMPLD0/GGIO1.Ind1.stVal")
        self.anin = L.IedModel_getModelNodeByObjectReference(self.model, b"IMPLD0/GGIO1.AnIn1.mag.f")
        if not (self.ind1 and self.anin):
            raise RuntimeError("model nodes not found")
        L.IedServer_start(self.server, port)
        if not L.IedServer_isRunning(self.server):
            raise RuntimeError(f"IedServer_start on port {port} failed")
        self.start_updates(period)

    def update(self, step: int):
        self.L.IedServer_updateBooleanAttributeValue(self.server, self.ind1, step % 2 == 1)
        self.L.IedServer_updateFloatAttributeValue(self.server, self.anin, float(step))


IED_ERROR_CONNECTION_LOST = 3


class LibClient:
    """libiec61850 client that enables urcb01 and records (RptID, SqNum) of every report."""

    RCB = b"IMPLD0/LLN0.RP.urcb01"

    def __init__(self, tls: int | None = None):
        L = self.L = _declare()
        self.tls = tls
        self.con = L.IedConnection_createWithTlsSupport(tls) if tls else L.IedConnection_create()
        L.IedConnection_setConnectTimeout(self.con, 5000)
        self.reports: list[tuple[str, int]] = []
        self._lock = threading.Lock()
        self._cb = ReportHandler(self._on_report)  # kept alive by self
        self.rcb = None
        self.retries = 0

    def _on_report(self, _param, report):
        rid = self.L.ClientReport_getRptId(report)
        seq = self.L.ClientReport_getSeqNum(report)
        with self._lock:
            self.reports.append(((rid or b"").decode(), int(seq)))

    def connect(self, host: str, port: int) -> int:
        err = C.c_int(0)
        self.L.IedConnection_connect(self.con, C.byref(err), host.encode(), port)
        return err.value

    def connect_and_enable(self, host: str, port: int, gi: bool = True, attempts: int = 3) -> int:
        """`connect` then `enable`, retrying only libiec61850 1.6.1's first-call race: its client
        sometimes reports connection-lost (IED_ERROR_CONNECTION_LOST, 3) on the first service
        after a successful connect (seen against gander's server and against libiec61850's own;
        immediate retries fail the same way, after 0.3 s a fresh connection works). `retries`
        counts the retries so a test can account for the connections they cost."""
        err = 0
        for _ in range(attempts):
            err = self.connect(host, port)
            if err:
                return err
            err = self.enable(gi)
            if err != IED_ERROR_CONNECTION_LOST:
                return err
            self.retries += 1
            self.L.IedConnection_destroy(self.con)
            self.con = (self.L.IedConnection_createWithTlsSupport(self.tls) if self.tls
                        else self.L.IedConnection_create())
            self.L.IedConnection_setConnectTimeout(self.con, 5000)
            if self.rcb:
                self.L.ClientReportControlBlock_destroy(self.rcb)
                self.rcb = None
            time.sleep(0.3)
        return err

    def enable(self, gi: bool = True) -> int:
        L = self.L
        err = C.c_int(0)
        self.rcb = L.IedConnection_getRCBValues(self.con, C.byref(err), self.RCB, None)
        if err.value or not self.rcb:
            return err.value or -1
        rpt_id = L.ClientReportControlBlock_getRptId(self.rcb)
        L.IedConnection_installReportHandler(self.con, self.RCB, rpt_id, self._cb, None)
        L.ClientReportControlBlock_setTrgOps(self.rcb, TRG_DCHG | TRG_GI)
        L.ClientReportControlBlock_setOptFlds(self.rcb, OPT_SEQ_NUM | OPT_TIME_STAMP | OPT_REASON | OPT_DATA_SET)
        L.ClientReportControlBlock_setRptEna(self.rcb, True)
        L.ClientReportControlBlock_setGI(self.rcb, gi)
        mask = RCB_RPT_ENA | RCB_OPT_FLDS | RCB_TRG_OPS | (RCB_GI if gi else 0)
        L.IedConnection_setRCBValues(self.con, C.byref(err), self.rcb, mask, True)
        return err.value

    def wait_reports(self, n: int, timeout: float = 10.0) -> list[tuple[str, int]]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if len(self.reports) >= n:
                    break
            time.sleep(0.01)
        with self._lock:
            return list(self.reports)

    def close(self) -> int:
        err = C.c_int(0)
        self.L.IedConnection_release(self.con, C.byref(err))
        if self.rcb:
            self.L.ClientReportControlBlock_destroy(self.rcb)
        self.L.IedConnection_destroy(self.con)
        if self.tls:
            self.L.TLSConfiguration_destroy(self.tls)
        return err.value
