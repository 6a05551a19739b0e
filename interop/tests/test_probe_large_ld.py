"""`gander probe` against libiec61850 1.6.1 (pyiec61850-ng wheel, ctypes) serving a logical device
of 2882 names: one GGIO with 720 SPS (`LN`, `LN$ST`, and per SPS the DO with stVal, q, t). A
65000-octet GetNameList page of such names holds about 2800 identifiers, more than the 1024 that
gander's MMS codec used to accept in one answer, so the probe failed with "too many identifiers
in one GetNameList answer" (issue 19, item 1). Now the count follows from the PDU size.
"""
from __future__ import annotations

import json
import socket

import pytest

import mms_iec
from conftest import run

SPS = 720


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LargeServer:
    """IED ``LRG``, domain ``LRGLD0``: LLN0 and GGIO1 with Ind1..Ind720 (SPS)."""

    def __init__(self):
        L = self.L = mms_iec._declare()
        self.model = L.IedModel_create(b"LRG")
        ld = L.LogicalDevice_create(b"LD0", self.model)
        L.LogicalNode_create(b"LLN0", ld)
        ggio = L.LogicalNode_create(b"GGIO1", ld)
        for i in range(1, SPS + 1):
            L.CDC_SPS_create(f"Ind{i}".encode(), ggio, 0)
        self.server = L.IedServer_create(self.model)
        for _ in range(5):
            self.port = _free_port()
            L.IedServer_start(self.server, self.port)
            if L.IedServer_isRunning(self.server):
                return
        raise RuntimeError("IedServer_start failed")

    def close(self):
        self.L.IedServer_stop(self.server)
        self.L.IedServer_destroy(self.server)
        self.L.IedModel_destroy(self.model)


@pytest.fixture(scope="module")
def large():
    s = LargeServer()
    yield s
    s.close()


def test_probe_reads_a_2882_name_logical_device(gander, large):
    p = run([gander, "probe", f"127.0.0.1:{large.port}", "--json", "--quick"], timeout=120)
    assert "panicked" not in p.stderr, p.stderr
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr)
    doc = json.loads(p.stdout)
    lds = {ld["name"]: ld for ld in doc["model"]["logical_devices"]}
    assert set(lds) == {"LRGLD0"}, list(lds)
    assert set(lds["LRGLD0"]["logical_nodes"]) == {"LLN0", "GGIO1"}
    # LLN0, GGIO1, GGIO1$ST and 720 × (DO, stVal, q, t).
    assert lds["LRGLD0"]["variables"] == 3 + 4 * SPS, lds["LRGLD0"]["variables"]
