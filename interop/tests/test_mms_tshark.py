"""tshark (Debian's Wireshark) dissects a plain-TCP gander MMS session -- COTP, session, presentation,
ACSE and MMS, association, the RCB write, reports and the release -- without malformed packets or
expert warnings. The session is libiec61850's client talking to `gander mms server` through a
recording relay; the byte stream is written as a pcap with synthesized TCP/IP headers (port 102)."""
from __future__ import annotations

import json
import shutil

import pytest

from conftest import run
from mms_gander import GanderServer
from mms_iec import LibClient
from mms_pcap import RecordingProxy, write_tcp_session

WARN = 0x00600000


def walk(node, found):
    if isinstance(node, dict):
        for k, v in node.items():
            found.setdefault(k, [])
            if isinstance(v, (dict, list)):
                walk(v, found)
                if k == "_ws.expert" and isinstance(v, dict):
                    found.setdefault("__expert__", []).append(v)
            else:
                found[k].append(v)
    elif isinstance(node, list):
        for x in node:
            walk(x, found)


def test_tshark_dissects_gander_server_session(gander, tmp_path):
    if shutil.which("tshark") is None:
        pytest.fail("tshark not installed: run `make setup`")
    srv = GanderServer(gander, tmp_path, "", period_ms=20)
    try:
        proxy = RecordingProxy(("127.0.0.1", srv.port))
        c = LibClient(None)
        assert c.connect_and_enable("127.0.0.1", proxy.port, gi=True) == 0
        reports = c.wait_reports(5, timeout=10)
        assert len(reports) >= 5
        c.close()
        chunks = proxy.join()
    finally:
        srv.stop()
    assert chunks and any(d == 1 for d, _ in chunks)
    path = tmp_path / "gander-mms.pcap"
    write_tcp_session(path, chunks)
    p = run(["tshark", "-r", path, "-n", "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE",
             "-T", "json", "--no-duplicate-keys"])
    assert p.returncode == 0, p.stderr
    frames = [f["_source"]["layers"] for f in json.loads(p.stdout)]
    protos = set()
    problems = []
    mms_services = []
    for i, layers in enumerate(frames):
        fp = layers.get("frame", {}).get("frame.protocols", "")
        protos.update(fp.split(":"))
        found: dict = {}
        walk(layers, found)
        if any(k.startswith("_ws.malformed") for k in found):
            problems.append(f"frame {i + 1}: malformed ({fp})")
        for e in found.get("__expert__", []):
            if int(e.get("_ws.expert.severity", "0")) >= WARN:
                problems.append(f"frame {i + 1}: {e.get('_ws.expert.message')}")
        for k in ("mms.confirmed_RequestPDU_element", "mms.unconfirmed_PDU_element", "mms.initiate_RequestPDU_element",
                  "mms.initiate_ResponsePDU_element", "mms.conclude_RequestPDU", "mms.confirmed_ResponsePDU_element"):
            if k in found:
                mms_services.append(k)
    assert not problems, problems
    for proto in ("tpkt", "cotp", "ses", "pres", "acse", "mms"):
        assert proto in protos, (proto, sorted(protos))
    assert "mms.unconfirmed_PDU_element" in mms_services, mms_services  # the reports
