"""A libiec61850 1.6.1 server (pyiec61850-ng wheel, through ctypes) with a model gander has never
seen, for `gander probe` and the later target tests (`gander run` with a `[target]`, the TLS survey).

IED ``PRB`` with two logical devices (MMS domains ``PRBPROT`` and ``PRBMEAS``):

- ``PRBPROT``: ``LLN0``, ``PTOC1`` (Str ACD, Op ACT), ``XCBR1`` (Pos DPC, status only), ``GGIO1``
  (Ind1 SPS); data set ``LLN0$Trips`` (PTOC1 Str and Op [ST], XCBR1 Pos [ST]); the indexed buffered
  control blocks ``brcbTrip01`` and ``brcbTrip02`` (RptID ``trips``).
- ``PRBMEAS``: ``LLN0``, ``MMXU1`` (TotW, Hz MV); data set ``LLN0$Meas`` (MMXU1 TotW and Hz [MX]);
  the unbuffered ``urcbMeas01`` (RptID ``meas``, data change and GI) and the buffered ``brcbMeas``
  (RptID empty, integrity period 1 s).

A thread updates ``MMXU1.TotW`` (value and timestamp ``t``) every ``--period`` seconds, so an enabled
``urcbMeas01`` sends data-change reports. Identify answers vendor ``gander-test``, model ``PRB-1``.

Options: ``--port`` (0: a free one), ``--pki DIR`` (TLS with DIR/ca.pem, server.pem, server.key;
libiec61850 then requires a client certificate chaining to the CA), ``--pin-client`` (accept only
DIR/client.pem), ``--tls-min``/``--tls-max`` (``1.0``..``1.3``; the wheel's mbedTLS 3.6.0 has
nothing below 1.2, docs/interop.md), ``--refuse`` (an ACSE authenticator
that refuses every association), ``--period``. Prints ``READY <port>`` once listening and serves until
stdin closes or SIGTERM.

GPL library, external test peer only (see iec.py).
"""
from __future__ import annotations

import argparse
import ctypes as C
import signal
import socket
import sys
import threading
import time

import mms_iec

P, I, U32, U8, B, S = C.c_void_p, C.c_int, C.c_uint32, C.c_uint8, C.c_bool, C.c_char_p
Authenticator = C.CFUNCTYPE(B, P, P, C.POINTER(P), P)
VERSIONS = {"1.0": 4, "1.1": 5, "1.2": 6, "1.3": 7}
# TRG_OPT_* and RPT_OPT_* of iec61850_common.h
DCHG, QCHG, DUPD, PERIOD, GI = 1, 2, 4, 8, 16
SEQ, TS, REASON, DS, DREF, OVFL, ENTRY, CONF = 1, 2, 4, 8, 16, 32, 64, 128


def declare(L):
    sigs = {
        "IedServerConfig_create": (P, []),
        "IedServerConfig_destroy": (None, [P]),
        "IedServerConfig_enableResvTmsForBRCB": (None, [P, B]),
        "IedServerConfig_enableOwnerForRCB": (None, [P, B]),
        "IedServer_createWithConfig": (P, [P, P, P]),
        "IedServer_setServerIdentity": (None, [P, S, S, S]),
        "IedServer_setAuthenticator": (None, [P, Authenticator, P]),
        "IedServer_updateUTCTimeAttributeValue": (None, [P, P, C.c_uint64]),
        "CDC_ACD_create": (P, [S, P, U32, B]),
        "CDC_ACT_create": (P, [S, P, U32]),
        "CDC_DPC_create": (P, [S, P, U32, U32]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(L, name)
        fn.restype = res
        fn.argtypes = args


class ProbeServer(mms_iec.UpdatingServer):
    """The server; ``port`` once started. ``close()`` stops it."""

    def __init__(self, port: int = 0, pki: str | None = None, pin_client: bool = False,
                 tls_min: str | None = None, tls_max: str | None = None, refuse: bool = False,
                 period: float = 0.05):
        L = self.L = mms_iec._declare()
        declare(L)
        m = self.model = L.IedModel_create(b"PRB")
        prot = L.LogicalDevice_create(b"PROT", m)
        lln0 = L.LogicalNode_create(b"LLN0", prot)
        ptoc = L.LogicalNode_create(b"PTOC1", prot)
        L.CDC_ACD_create(b"Str", ptoc, 0, False)
        L.CDC_ACT_create(b"Op", ptoc, 0)
        xcbr = L.LogicalNode_create(b"XCBR1", prot)
        L.CDC_DPC_create(b"Pos", xcbr, 0, 0)  # control model 0: status only
        ggio = L.LogicalNode_create(b"GGIO1", prot)
        L.CDC_SPS_create(b"Ind1", ggio, 0)
        ds = L.DataSet_create(b"Trips", lln0)
        for member in (b"PTOC1$ST$Str", b"PTOC1$ST$Op", b"XCBR1$ST$Pos"):
            L.DataSetEntry_create(ds, member, -1, None)
        for name in (b"brcbTrip01", b"brcbTrip02"):
            L.ReportControlBlock_create(name, lln0, b"trips", True, b"Trips", 2, DCHG | QCHG | GI,
                                        SEQ | TS | REASON | DS | ENTRY | CONF, 100, 0)

        meas = L.LogicalDevice_create(b"MEAS", m)
        lln0m = L.LogicalNode_create(b"LLN0", meas)
        mmxu = L.LogicalNode_create(b"MMXU1", meas)
        L.CDC_MV_create(b"TotW", mmxu, 0, False)
        L.CDC_MV_create(b"Hz", mmxu, 0, False)
        dsm = L.DataSet_create(b"Meas", lln0m)
        for member in (b"MMXU1$MX$TotW", b"MMXU1$MX$Hz"):
            L.DataSetEntry_create(dsm, member, -1, None)
        L.ReportControlBlock_create(b"urcbMeas01", lln0m, b"meas", False, b"Meas", 1, DCHG | GI,
                                    SEQ | DS, 0, 0)
        L.ReportControlBlock_create(b"brcbMeas", lln0m, None, True, b"Meas", 1, PERIOD | GI,
                                    SEQ | TS | ENTRY, 0, 1000)

        self.tls = None
        if pki:
            self.tls = t = L.TLSConfiguration_create()
            ok = (L.TLSConfiguration_setOwnCertificateFromFile(t, f"{pki}/server.pem".encode())
                  and L.TLSConfiguration_setOwnKeyFromFile(t, f"{pki}/server.key".encode(), None)
                  and L.TLSConfiguration_addCACertificateFromFile(t, f"{pki}/ca.pem".encode()))
            if not ok:
                raise RuntimeError(f"libiec61850 TLS configuration failed for {pki}")
            if pin_client:
                L.TLSConfiguration_addAllowedCertificateFromFile(t, f"{pki}/client.pem".encode())
                L.TLSConfiguration_setAllowOnlyKnownCertificates(t, True)
            if tls_min:
                L.TLSConfiguration_setMinTlsVersion(t, VERSIONS[tls_min])
            if tls_max:
                L.TLSConfiguration_setMaxTlsVersion(t, VERSIONS[tls_max])
            L.TLSConfiguration_enableSessionResumption(t, False)
        cfg = L.IedServerConfig_create()
        L.IedServerConfig_enableResvTmsForBRCB(cfg, True)
        L.IedServerConfig_enableOwnerForRCB(cfg, True)
        self.server = L.IedServer_createWithConfig(m, self.tls, cfg)
        L.IedServerConfig_destroy(cfg)
        L.IedServer_setServerIdentity(self.server, b"gander-test", b"PRB-1", b"0.9")
        self._auth = Authenticator(lambda *_: False)  # kept alive by self
        if refuse:
            L.IedServer_setAuthenticator(self.server, self._auth, None)
        self.totw = L.IedModel_getModelNodeByObjectReference(m, b"PRBMEAS/MMXU1.TotW.mag.f")
        self.totw_t = L.IedModel_getModelNodeByObjectReference(m, b"PRBMEAS/MMXU1.TotW.t")
        if not (self.totw and self.totw_t):
            raise RuntimeError("model nodes not found")
        self.port = port or free_port()
        L.IedServer_start(self.server, self.port)
        if not L.IedServer_isRunning(self.server):
            raise RuntimeError(f"IedServer_start on port {self.port} failed")
        self.start_updates(period)

    def update(self, step: int):
        self.L.IedServer_updateUTCTimeAttributeValue(self.server, self.totw_t, int(time.time() * 1000))
        self.L.IedServer_updateFloatAttributeValue(self.server, self.totw, 1.5 * step)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--pki")
    ap.add_argument("--pin-client", action="store_true")
    ap.add_argument("--tls-min", choices=sorted(VERSIONS))
    ap.add_argument("--tls-max", choices=sorted(VERSIONS))
    ap.add_argument("--refuse", action="store_true")
    ap.add_argument("--period", type=float, default=0.05)
    a = ap.parse_args()
    srv = ProbeServer(a.port, a.pki, a.pin_client, a.tls_min, a.tls_max, a.refuse, a.period)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    print(f"READY {srv.port}", flush=True)
    stop.wait()
    srv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
