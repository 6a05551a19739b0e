"""ctypes bindings for the parts of libiec61850 1.6.1 that the interop harness drives.

The library comes from the ``pyiec61850-ng`` wheel, installed into the project's ``.venv`` by
``make venv``. It is GPL-licensed and used only as an external test peer: nothing here is
linked into gander. The wheel's SWIG module does not expose the R-Session API, so everything is
declared here through ctypes on the bundled shared object (every C symbol is exported).

Every handle is a ``c_void_p``; callbacks must be kept alive by the caller.
"""
from __future__ import annotations

import ctypes as C
import glob
import os
import sysconfig

# RSecurityAlgorithm / RSignatureAlgorithm (src/r_session/r_session.h)
SEC_NONE, SEC_AES_128_GCM, SEC_AES_256_GCM = 0, 1, 2
SIG_NONE, SIG_HMAC_SHA256_80, SIG_HMAC_SHA256_128, SIG_HMAC_SHA256_256 = 0, 1, 2, 3

# MmsType (src/mms/inc/mms_value.h)
MMS_ARRAY, MMS_STRUCTURE, MMS_BOOLEAN, MMS_BIT_STRING, MMS_INTEGER, MMS_UNSIGNED = 0, 1, 2, 3, 4, 5
MMS_FLOAT, MMS_OCTET_STRING, MMS_VISIBLE_STRING = 6, 7, 8

GooseListener = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p)


def _find_library() -> str:
    explicit = os.environ.get("GANDER_LIBIEC61850")
    if explicit:
        return explicit
    site = sysconfig.get_paths()["purelib"]
    hits = sorted(glob.glob(os.path.join(site, "pyiec61850_ng.libs", "libiec61850-*.so*")))
    if not hits:
        raise RuntimeError(
            "libiec61850 not found: install the pinned wheel with `make venv` "
            "(pyiec61850-ng==1.6.1.10) and run with .venv/bin/python"
        )
    return hits[0]


def _declare(lib: C.CDLL) -> None:
    P, I, U32, U16, B, S = C.c_void_p, C.c_int, C.c_uint32, C.c_uint16, C.c_bool, C.c_char_p
    sigs = {
        "RSession_create": (P, []),
        "RSession_destroy": (None, [P]),
        "RSession_setLocalAddress": (I, [P, S, I]),
        "RSession_setRemoteAddress": (I, [P, S, I]),
        "RSession_addKey": (I, [P, U32, P, I, I, I]),
        "RSession_setActiveKey": (I, [P, U32]),
        "RSession_start": (I, [P]),
        "RSession_stop": (I, [P]),
        "GoosePublisher_createRemote": (P, [P, U16]),
        "GoosePublisher_destroy": (None, [P]),
        "GoosePublisher_setGoCbRef": (None, [P, S]),
        "GoosePublisher_setDataSetRef": (None, [P, S]),
        "GoosePublisher_setGoID": (None, [P, S]),
        "GoosePublisher_setConfRev": (None, [P, U32]),
        "GoosePublisher_setTimeAllowedToLive": (None, [P, U32]),
        "GoosePublisher_setStNum": (None, [P, U32]),
        "GoosePublisher_setSqNum": (None, [P, U32]),
        "GoosePublisher_increaseStNum": (C.c_uint64, [P]),
        "GoosePublisher_publish": (I, [P, P]),
        "GooseReceiver_createRemote": (P, [P]),
        "GooseReceiver_addSubscriber": (None, [P, P]),
        "GooseReceiver_start": (None, [P]),
        "GooseReceiver_stop": (None, [P]),
        "GooseReceiver_isRunning": (B, [P]),
        "GooseReceiver_destroy": (None, [P]),
        "GooseSubscriber_create": (P, [S, P]),
        "GooseSubscriber_setAppId": (None, [P, U16]),
        "GooseSubscriber_setListener": (None, [P, GooseListener, P]),
        "GooseSubscriber_isValid": (B, [P]),
        "GooseSubscriber_getParseError": (I, [P]),
        "GooseSubscriber_getStNum": (U32, [P]),
        "GooseSubscriber_getSqNum": (U32, [P]),
        "GooseSubscriber_getDataSetValues": (P, [P]),
        "LinkedList_create": (P, []),
        "LinkedList_add": (None, [P, P]),
        "LinkedList_destroyDeep": (None, [P, P]),
        "MmsValue_newIntegerFromInt32": (P, [C.c_int32]),
        "MmsValue_newBoolean": (P, [B]),
        "MmsValue_newFloat": (P, [C.c_float]),
        "MmsValue_delete": (None, [P]),
        "MmsValue_getType": (I, [P]),
        "MmsValue_getArraySize": (U32, [P]),
        "MmsValue_getElement": (P, [P, I]),
        "MmsValue_toInt32": (C.c_int32, [P]),
        "MmsValue_toUint32": (U32, [P]),
        "MmsValue_getBoolean": (B, [P]),
        "MmsValue_toFloat": (C.c_float, [P]),
        "MmsValue_printToBuffer": (S, [P, C.c_char_p, I]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


_LIB: C.CDLL | None = None


def lib() -> C.CDLL:
    """The loaded libiec61850, with argument and result types declared."""
    global _LIB
    if _LIB is None:
        path = _find_library()
        loaded = C.CDLL(path, mode=C.RTLD_GLOBAL)
        _declare(loaded)
        _LIB = loaded
    return _LIB


def library_path() -> str:
    return _find_library()


def mms_to_python(value: int | None):
    """Convert an MmsValue* (data set member or the data set array) to a Python value."""
    L = lib()
    if not value:
        return None
    t = L.MmsValue_getType(value)
    if t in (MMS_ARRAY, MMS_STRUCTURE):
        n = L.MmsValue_getArraySize(value)
        return [mms_to_python(L.MmsValue_getElement(value, i)) for i in range(n)]
    if t == MMS_BOOLEAN:
        return bool(L.MmsValue_getBoolean(value))
    if t == MMS_INTEGER:
        return int(L.MmsValue_toInt32(value))
    if t == MMS_UNSIGNED:
        return int(L.MmsValue_toUint32(value))
    if t == MMS_FLOAT:
        return round(float(L.MmsValue_toFloat(value)), 6)
    buf = C.create_string_buffer(256)
    L.MmsValue_printToBuffer(value, buf, len(buf))
    return buf.value.decode("latin-1")
