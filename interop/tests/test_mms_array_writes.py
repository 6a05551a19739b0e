"""Writes to array elements by alternate access (ISO 9506-2 14.1: index and indexRange), on
`gander mms server --scl` serving crates/peers/tests/data/schedule_array.icd (DSCH1.SchdAbsTm.val,
an array of 8 FLOAT32 settings, FC SP), driven by libiec61850 1.6.1's client (pyiec61850-ng
wheel, ctypes): `MmsConnection_writeSingleArrayElementWithComponent` (one index, as
iec61850bean's client writes a schedule point) and `MmsConnection_writeArrayElements` (an
indexRange with an array of values), read back with `MmsConnection_readArrayElements`. gander
answered both writes object-access-unsupported while it read the same elements; libiec61850's
and iec61850bean's servers accept them.
"""
from __future__ import annotations

import ctypes as C

import pytest

import iec
import mms_iec
from conftest import REPO
from mms_gander import SclServer

ICD = REPO / "crates" / "peers" / "tests" / "data" / "schedule_array.icd"
P, I, S, U32 = C.c_void_p, C.c_int, C.c_char_p, C.c_uint32
DOM, ITEM = b"SCH1LD0", b"DSCH1$SP$SchdAbsTm$val"
# MmsDataAccessError (mms_common.h): success -1, type-inconsistent 7, object-non-existent 10
SUCCESS, TYPE_INCONSISTENT, NON_EXISTENT = -1, 7, 10


def _lib():
    return mms_iec.declare([
        ("IedConnection_getMmsConnection", P, [P]),
        ("MmsConnection_writeSingleArrayElementWithComponent", I, [P, C.POINTER(I), S, S, U32, S, P]),
        ("MmsConnection_writeArrayElements", I, [P, C.POINTER(I), S, S, I, I, P]),
        ("MmsConnection_readArrayElements", P, [P, C.POINTER(I), S, S, U32, U32]),
        ("MmsValue_createEmptyArray", P, [I]),
        ("MmsValue_setElement", None, [P, I, P]),
    ])


@pytest.fixture(scope="module")
def server(gander):
    s = SclServer(gander, "--scl", str(ICD), "--listen", "127.0.0.1:0", "--static", seconds=10)
    yield s
    rc, _, err = s.stop()
    assert rc == 0, err


class Client(mms_iec.LibClient):
    def __init__(self, port: int):
        super().__init__()
        self.L = _lib()
        assert self.connect("127.0.0.1", port) == 0
        self.mms = self.L.IedConnection_getMmsConnection(self.con)

    def write_one(self, index: int, value) -> int:
        err = C.c_int(0)
        v = self.L.MmsValue_newFloat(value) if isinstance(value, float) else self.L.MmsValue_newBoolean(value)
        r = self.L.MmsConnection_writeSingleArrayElementWithComponent(self.mms, C.byref(err), DOM, ITEM, index,
                                                                      None, v)
        self.L.MmsValue_delete(v)
        return r

    def write_range(self, index: int, values: list[float]) -> int:
        err = C.c_int(0)
        arr = self.L.MmsValue_createEmptyArray(len(values))
        for k, f in enumerate(values):
            self.L.MmsValue_setElement(arr, k, self.L.MmsValue_newFloat(f))
        r = self.L.MmsConnection_writeArrayElements(self.mms, C.byref(err), DOM, ITEM, index, len(values), arr)
        self.L.MmsValue_delete(arr)
        return r

    def read_range(self, index: int, count: int):
        err = C.c_int(0)
        v = self.L.MmsConnection_readArrayElements(self.mms, C.byref(err), DOM, ITEM, index, count)
        assert err.value == 0 and v, err.value
        out = iec.mms_to_python(v)
        self.L.MmsValue_delete(v)
        return out


def test_libiec61850_writes_single_elements_and_ranges(server):
    c = Client(server.port)
    try:
        assert c.write_one(2, 2.5) == SUCCESS
        assert c.write_range(4, [4.5, 5.5, 6.5]) == SUCCESS
        assert c.read_range(0, 8) == pytest.approx([0.0, 0.0, 2.5, 0.0, 4.5, 5.5, 6.5, 0.0])
        assert c.read_range(4, 2) == pytest.approx([4.5, 5.5])
        # The element's type and the array's bounds are checked, and a refused range stores nothing.
        assert c.write_one(1, True) == TYPE_INCONSISTENT
        assert c.write_one(8, 1.0) == NON_EXISTENT
        assert c.write_range(6, [1.0, 2.0, 3.0]) == NON_EXISTENT
        assert c.read_range(0, 8) == pytest.approx([0.0, 0.0, 2.5, 0.0, 4.5, 5.5, 6.5, 0.0])
    finally:
        c.close()
