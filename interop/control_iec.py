"""libiec61850 1.6.1's control client (``ControlObjectClient``, pyiec61850-ng wheel, ctypes) as the
reference client of IEC 61850-7-2 clause 20 controls, for interop/tests/test_controls.py.

``Controller(host, port)`` connects one IedConnection; ``control(ref)`` makes a ControlObjectClient
(which reads the object's ctlModel and its Oper type from the server, as the library always does)
with a CommandTermination handler that records positive and negative terminations.

GPL library, external test peer only (see iec.py).
"""
from __future__ import annotations

import ctypes as C
import threading
import time

import iec

P, I, B, S = C.c_void_p, C.c_int, C.c_bool, C.c_char_p
TerminationHandler = C.CFUNCTYPE(None, P, P)
FC_ST, FC_MX, FC_CO = 0, 1, 3
IED_ERROR_CONNECTION_LOST = 3


class LastApplError(C.Structure):
    """``LastApplError`` of iec61850_client.h, returned by value."""
    _fields_ = [("ctlNum", I), ("error", I), ("addCause", I)]


_declared = False


def lib() -> C.CDLL:
    global _declared
    L = iec.lib()
    if _declared:
        return L
    for name, res, args in [
        ("IedConnection_create", P, []),
        ("IedConnection_createWithTlsSupport", P, [P]),
        ("TLSConfiguration_destroy", None, [P]),
        ("IedConnection_setConnectTimeout", None, [P, C.c_uint32]),
        ("IedConnection_connect", None, [P, C.POINTER(I), S, I]),
        ("IedConnection_release", None, [P, C.POINTER(I)]),
        ("IedConnection_getLogicalDeviceList", P, [P, C.POINTER(I)]),
        ("LinkedList_destroy", None, [P]),
        ("IedConnection_destroy", None, [P]),
        ("IedConnection_readBooleanValue", B, [P, C.POINTER(I), S, I]),
        ("IedConnection_readInt32Value", C.c_int32, [P, C.POINTER(I), S, I]),
        ("IedConnection_readFloatValue", C.c_float, [P, C.POINTER(I), S, I]),
        ("IedConnection_readObject", P, [P, C.POINTER(I), S, I]),
        ("ControlObjectClient_create", P, [S, P]),
        ("ControlObjectClient_destroy", None, [P]),
        ("ControlObjectClient_getControlModel", I, [P]),
        ("ControlObjectClient_operate", B, [P, P, C.c_uint64]),
        ("ControlObjectClient_select", B, [P]),
        ("ControlObjectClient_selectWithValue", B, [P, P]),
        ("ControlObjectClient_cancel", B, [P]),
        ("ControlObjectClient_getLastApplError", LastApplError, [P]),
        ("ControlObjectClient_setOrigin", None, [P, S, I]),
        ("ControlObjectClient_setTestMode", None, [P, B]),
        ("ControlObjectClient_setInterlockCheck", None, [P, B]),
        ("ControlObjectClient_setCommandTerminationHandler", None, [P, TerminationHandler, P]),
        ("MmsValue_newBoolean", P, [B]),
        ("MmsValue_newIntegerFromInt32", P, [C.c_int32]),
        ("MmsValue_newFloat", P, [C.c_float]),
        ("MmsValue_delete", None, [P]),
        ("Dbpos_fromMmsValue", I, [P]),
    ]:
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    _declared = True
    return L


class Control:
    """One ControlObjectClient with its terminations (addCause of each; 0 for a positive one
    whose LastApplError the library reset)."""

    def __init__(self, L, con, ref: str):
        self.L, self.ref = L, ref
        self.h = L.ControlObjectClient_create(ref.encode(), con)
        if not self.h:
            raise AssertionError(f"ControlObjectClient_create({ref}) failed")
        L.ControlObjectClient_setOrigin(self.h, b"interop", 3)
        self.terminations: list[LastApplError] = []
        self._lock = threading.Lock()
        self._cb = TerminationHandler(self._on_termination)
        L.ControlObjectClient_setCommandTerminationHandler(self.h, self._cb, None)

    def _on_termination(self, _param, client):
        e = self.L.ControlObjectClient_getLastApplError(client)
        with self._lock:
            self.terminations.append(e)

    @property
    def model(self) -> int:
        return self.L.ControlObjectClient_getControlModel(self.h)

    def value(self, v):
        L = self.L
        if isinstance(v, bool):
            return L.MmsValue_newBoolean(v)
        if isinstance(v, int):
            return L.MmsValue_newIntegerFromInt32(v)
        return L.MmsValue_newFloat(v)

    def operate(self, v, oper_time: int = 0) -> bool:
        mv = self.value(v)
        try:
            return self.L.ControlObjectClient_operate(self.h, mv, oper_time)
        finally:
            self.L.MmsValue_delete(mv)

    def select_with_value(self, v) -> bool:
        mv = self.value(v)
        try:
            return self.L.ControlObjectClient_selectWithValue(self.h, mv)
        finally:
            self.L.MmsValue_delete(mv)

    def select(self) -> bool:
        return self.L.ControlObjectClient_select(self.h)

    def cancel(self) -> bool:
        return self.L.ControlObjectClient_cancel(self.h)

    def last_appl_error(self) -> LastApplError:
        return self.L.ControlObjectClient_getLastApplError(self.h)

    def wait_terminations(self, n: int, timeout: float = 5.0) -> list[LastApplError]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if len(self.terminations) >= n:
                    break
            time.sleep(0.01)
        with self._lock:
            return list(self.terminations)

    def close(self):
        self.L.ControlObjectClient_destroy(self.h)


class Controller:
    """One libiec61850 client connection for controls."""

    def __init__(self, host: str, port: int, tls: int | None = None):
        """``tls``: a TLSConfiguration (``mms_iec.tls_config``), freed by ``close``."""
        L = self.L = lib()
        self.tls = tls
        self.retries = 0
        for _ in range(3):
            self.con = L.IedConnection_createWithTlsSupport(tls) if tls else L.IedConnection_create()
            L.IedConnection_setConnectTimeout(self.con, 5000)
            err = I(0)
            L.IedConnection_connect(self.con, C.byref(err), host.encode(), port)
            if err.value:
                raise AssertionError(f"connect failed: IedClientError {err.value}")
            # libiec61850 1.6.1's first-call race (mms_iec.LibClient.connect_and_enable): the
            # first service after a good connect may report connection-lost (3); a fresh
            # connection 0.3 s later works. Probe with a directory call before the tests' own.
            lst = L.IedConnection_getLogicalDeviceList(self.con, C.byref(err))
            if lst:
                L.LinkedList_destroy(lst)
            if err.value != IED_ERROR_CONNECTION_LOST:
                break
            self.retries += 1
            L.IedConnection_destroy(self.con)
            time.sleep(0.3)
        self.controls: list[Control] = []

    def control(self, ref: str) -> Control:
        c = Control(self.L, self.con, ref)
        self.controls.append(c)
        return c

    def read_bool(self, ref: str, fc: int = FC_ST) -> bool:
        err = I(0)
        v = self.L.IedConnection_readBooleanValue(self.con, C.byref(err), ref.encode(), fc)
        assert err.value == 0, f"read {ref}: IedClientError {err.value}"
        return bool(v)

    def read_int(self, ref: str, fc: int = FC_ST) -> int:
        err = I(0)
        v = self.L.IedConnection_readInt32Value(self.con, C.byref(err), ref.encode(), fc)
        assert err.value == 0, f"read {ref}: IedClientError {err.value}"
        return int(v)

    def read_float(self, ref: str, fc: int = FC_MX) -> float:
        err = I(0)
        v = self.L.IedConnection_readFloatValue(self.con, C.byref(err), ref.encode(), fc)
        assert err.value == 0, f"read {ref}: IedClientError {err.value}"
        return float(v)

    def read_dbpos(self, ref: str, fc: int = FC_ST) -> int:
        """A Dbpos as libiec61850 decodes it: 0 intermediate, 1 off, 2 on, 3 bad."""
        err = I(0)
        v = self.L.IedConnection_readObject(self.con, C.byref(err), ref.encode(), fc)
        assert err.value == 0 and v, f"read {ref}: IedClientError {err.value}"
        try:
            return int(self.L.Dbpos_fromMmsValue(v))
        finally:
            self.L.MmsValue_delete(v)

    def close(self):
        for c in self.controls:
            c.close()
        err = I(0)
        self.L.IedConnection_release(self.con, C.byref(err))
        self.L.IedConnection_destroy(self.con)
        if self.tls:
            self.L.TLSConfiguration_destroy(self.tls)


ControlHandler = C.CFUNCTYPE(I, P, P, P, B)
CheckHandler = C.CFUNCTYPE(I, P, P, P, B, B)
CONTROL_RESULT_OK = 1
CONTROL_OBJECT_ACCESS_DENIED = 3
CDC_CTL_MODEL_HAS_CANCEL = 1 << 4  # iec61850_cdc.h


class ControlServer:
    """libiec61850 server (dynamic model) with one SPC per control model: IED ``LIB``, LD ``LD0``
    (domain ``LIBLD0``), ``GGIO1.SPCSO1``..``SPCSO4`` with ctlModel 1..4, and ``SPCSO5``
    (direct-with-enhanced-security) whose check handler refuses every command with AddCause
    Blocked-by-interlocking. The control handler records (object, ctlVal, Test) and sets stVal."""

    REFUSED_CAUSE = 10  # ADD_CAUSE_BLOCKED_BY_INTERLOCKING

    def __init__(self, port: int, tls: int | None = None, cancel: bool = False):
        """``tls``: a server TLSConfiguration (``mms_iec.tls_config``), freed by ``close``;
        ``cancel``: the SBO objects also get ``Cancel`` (``CDC_CTL_MODEL_HAS_CANCEL``)."""
        L = self.L = lib()
        for name, res, args in [
            ("IedServer_createWithTlsSupport", P, [P, P]),
            ("IedModel_create", P, [S]),
            ("IedModel_destroy", None, [P]),
            ("IedModel_getModelNodeByObjectReference", P, [P, S]),
            ("LogicalDevice_create", P, [S, P]),
            ("LogicalNode_create", P, [S, P]),
            ("CDC_SPC_create", P, [S, P, C.c_uint32, C.c_uint32]),
            ("IedServer_create", P, [P]),
            ("IedServer_start", None, [P, I]),
            ("IedServer_isRunning", B, [P]),
            ("IedServer_stop", None, [P]),
            ("IedServer_destroy", None, [P]),
            ("IedServer_setControlHandler", None, [P, P, ControlHandler, P]),
            ("IedServer_setPerformCheckHandler", None, [P, P, CheckHandler, P]),
            ("IedServer_updateBooleanAttributeValue", None, [P, P, B]),
            ("ControlAction_setAddCause", None, [P, I]),
            ("MmsValue_getBoolean", B, [P]),
        ]:
            f = getattr(L, name)
            f.restype, f.argtypes = res, args
        self.model = L.IedModel_create(b"LIB")
        ld = L.LogicalDevice_create(b"LD0", self.model)
        L.LogicalNode_create(b"LLN0", ld)
        ggio = L.LogicalNode_create(b"GGIO1", ld)
        models = {"SPCSO1": 1, "SPCSO2": 2, "SPCSO3": 3, "SPCSO4": 4, "SPCSO5": 3}
        for name, m in models.items():
            L.CDC_SPC_create(name.encode(), ggio, 0, m | (CDC_CTL_MODEL_HAS_CANCEL if cancel and m in (2, 4) else 0))
        self.tls = tls
        self.server = L.IedServer_createWithTlsSupport(self.model, tls) if tls else L.IedServer_create(self.model)
        self.operated: list[tuple[str, bool, bool]] = []
        self._lock = threading.Lock()
        self._handlers = []
        for name in models:
            do = L.IedModel_getModelNodeByObjectReference(self.model, f"LIBLD0/GGIO1.{name}".encode())
            st = L.IedModel_getModelNodeByObjectReference(self.model, f"LIBLD0/GGIO1.{name}.stVal".encode())
            assert do and st, name
            h = ControlHandler(self._control(name, st))
            self._handlers.append(h)
            L.IedServer_setControlHandler(self.server, do, h, None)
            if name == "SPCSO5":
                c = CheckHandler(self._refuse)
                self._handlers.append(c)
                L.IedServer_setPerformCheckHandler(self.server, do, c, None)
        L.IedServer_start(self.server, port)
        if not L.IedServer_isRunning(self.server):
            raise RuntimeError(f"IedServer_start on port {port} failed")

    def _control(self, name, st):
        def handler(action, _param, ctl_val, test):
            v = bool(self.L.MmsValue_getBoolean(ctl_val))
            with self._lock:
                self.operated.append((name, v, bool(test)))
            if not test:
                self.L.IedServer_updateBooleanAttributeValue(self.server, st, v)
            return CONTROL_RESULT_OK
        return handler

    def _refuse(self, action, _param, _ctl_val, _test, _interlock):
        self.L.ControlAction_setAddCause(action, self.REFUSED_CAUSE)
        return CONTROL_OBJECT_ACCESS_DENIED

    def close(self):
        self.L.IedServer_stop(self.server)
        self.L.IedServer_destroy(self.server)
        self.L.IedModel_destroy(self.model)
        if self.tls:
            self.L.TLSConfiguration_destroy(self.tls)
