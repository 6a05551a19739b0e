"""`gander mms server --scl` on a model loaded with repairs (docs/scl.md, "Repairs"), against
libiec61850 1.6.1's client (pyiec61850-ng wheel, ctypes).

The fixture, crates/scl/tests/data/inverter_domain_ldinst.icd, is gander's own. It reproduces
the defects of libiec61850's complexModel.icd (tools/model_generator: data set members whose
ldInst is the LD's MMS domain, `ied1Inverter`), of OpenSCD's Services.scd (a member whose ldInst
names no LD, `CircuitBreaker`) and of the IOP 2019 SED (`<Val>False</Val>`). gander refused the
whole IED before; now it loads it, prints every repair at start-up, and serves the repaired
model: libiec61850 reads the data set's directory and values, and each member on its own.
"""
from __future__ import annotations

import ctypes as C
import subprocess

import pytest

import iec
import mms_iec
from conftest import REPO
from mms_gander import SclServer
from mms_iec import LibClient

ICD = REPO / "crates" / "scl" / "tests" / "data" / "inverter_domain_ldinst.icd"
P, I, S, B = C.c_void_p, C.c_int, C.c_char_p, C.c_bool
FC = {"ST": 0, "MX": 1, "CF": 4}
IED_ERROR_CONNECTION_LOST = 3
DATA_SET = b"ied1Inverter/MMXU1.dataset1"
# What the repaired data set holds: the four members that name something, in file order.
MEMBERS = ["ied1Inverter/LLN0.Mod.q[ST]", "ied1Battery/LLN0.Mod.stVal[ST]",
           "ied1Inverter/MMXU1.TotW.mag.f[MX]", "ied1Inverter/MMXU1.Mod.ctlModel[CF]"]


def _lib():
    return mms_iec.declare([
        ("IedConnection_getDataSetDirectory", P, [P, C.POINTER(I), S, C.POINTER(B)]),
        ("IedConnection_readDataSetValues", P, [P, C.POINTER(I), S, P]),
        ("IedConnection_readObject", P, [P, C.POINTER(I), S, I]),
        ("IedConnection_getLogicalDeviceList", P, [P, C.POINTER(I)]),
        ("ClientDataSet_getValues", P, [P]),
        ("ClientDataSet_destroy", None, [P]),
        ("LinkedList_getNext", P, [P]),
        ("LinkedList_getData", P, [P]),
        ("LinkedList_destroy", None, [P]),
    ])


def line_of(needle: str) -> int:
    return next(i for i, t in enumerate(ICD.read_text().splitlines(), 1) if needle in t)


@pytest.fixture(scope="module")
def server(gander):
    s = SclServer(gander, "--scl", str(ICD), "--listen", "127.0.0.1:0", "--static", seconds=20)
    yield s
    s.stop()


def connected(server) -> LibClient:
    """A client whose first call worked (libiec61850 1.6.1's first-call race: see
    test_mms_scl_server.py's `ready`)."""
    L = _lib()
    for _ in range(3):
        c = LibClient()
        assert c.connect("127.0.0.1", server.port) == 0
        err = C.c_int(0)
        lst = L.IedConnection_getLogicalDeviceList(c.con, C.byref(err))
        if err.value == 0:
            assert sorted(mms_iec.names(L, lst)) == ["ied1Battery", "ied1Inverter"]
            return c
        c.close()
        assert err.value == IED_ERROR_CONNECTION_LOST, err.value
    raise AssertionError("connection lost three times")


def test_libiec61850_reads_the_repaired_data_set_and_its_members(server):
    L = _lib()
    c = connected(server)
    try:
        err, deletable = C.c_int(0), C.c_bool(True)
        members = mms_iec.names(L, L.IedConnection_getDataSetDirectory(c.con, C.byref(err), DATA_SET,
                                                                       C.byref(deletable)))
        assert err.value == 0 and not deletable.value, err.value
        assert members == MEMBERS, members

        ds = L.IedConnection_readDataSetValues(c.con, C.byref(err), DATA_SET, None)
        assert err.value == 0 and ds, err.value
        values = iec.mms_to_python(L.ClientDataSet_getValues(ds))
        L.ClientDataSet_destroy(ds)
        assert isinstance(values, list) and len(values) == 4, values

        # Each member read on its own gives what the data set gave.
        for m, v in zip(MEMBERS, values):
            ref, fc = m[:-4], m[-3:-1]
            obj = L.IedConnection_readObject(c.con, C.byref(err), ref.encode(), FC[fc])
            assert err.value == 0 and obj, (m, err.value)
            alone = iec.mms_to_python(obj)
            L.MmsValue_delete(obj)
            if m.endswith(".q[ST]"):
                continue  # a Quality bit string; only its presence is compared
            assert alone == v, (m, alone, v)
        # The values the ICD gives: Beh "on" (ord 1) from the template, TotW 1500.5 from the
        # DOI, ctlModel status-only (ord 0) from LLN0's type default.
        assert values[1] == 1, values
        assert values[2] == pytest.approx(1500.5), values
        assert values[3] == 0, values
    finally:
        c.close()


def test_the_server_prints_every_repair_at_start_up(gander):
    s = SclServer(gander, "--scl", str(ICD), "--listen", "127.0.0.1:0", "--static", seconds=20)
    rc, _, err = s.stop()
    assert rc == 0, err
    warnings = [l for l in err.splitlines() if "WARNING" in l]
    assert len(warnings) == 6, err
    cb = line_of('ldInst="CircuitBreaker"')
    assert f"{ICD}: WARNING: line {cb}, column 15:" in err, err
    assert "repaired: the member is left out of data set \"dataset1\"" in err, err
    assert "repaired: read as LD \"Inverter\", whose MMS domain ldInst names" in err, err
    false = line_of("<Val>False</Val>")
    assert f"line {false}," in err, err


def test_scl_show_lists_the_repairs_and_exits_4(gander):
    p = subprocess.run([gander, "scl", "show", str(ICD)], capture_output=True, text=True, timeout=20)
    assert p.returncode == 4, (p.stdout, p.stderr)
    assert p.stdout.count("IED ied1 WARNING: ") == 6, p.stdout
    assert "data set MMXU1$dataset1 (4 members)" in p.stdout, p.stdout
