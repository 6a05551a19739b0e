"""(b) gander protects a plain libiec61850 capture; libiec61850's receiver accepts what gander wrote.

`gander frame protect --keys K --key-id N --profile libiec61850 IN OUT` on libiec61850's own
unsecured R-GOOSE capture. libiec61850 1.6.1's receiver only accepts AES-GCM-only frames (its HMAC
check is off by one byte, see test_harness.py), so the HMAC modes are checked against an independent
stdlib HMAC of the bytes libiec61850 covers instead.
"""
from __future__ import annotations

import pytest

import pcap
import rgoose_layout
from conftest import FRAMES, protect, receive, verify
from modes import MODES

GCM_MODES = ["aes-128-gcm", "aes-256-gcm"]
WRONG_KEY = {"aes-128-gcm": "FEDCBA9876543210", "aes-256-gcm": "VUTSRQPONMLKJIHGFEDCBA9876543210"}


def published(cap) -> list[tuple]:
    return [(f["st_num"], f["sq_num"], f["values"]) for f in cap["meta"]["frames"]]


@pytest.fixture(params=GCM_MODES)
def gcm_protected(request, gander, captures, tmp_path):
    m = MODES[request.param]
    keys = tmp_path / "keys.toml"
    keys.write_text(m.key_toml())
    out = tmp_path / f"gander-{m.name}.pcap"
    protect(gander, keys, m.key_id, captures["none"]["pcap"], out)
    return m, keys, out


def test_gander_gcm_output_layout(gcm_protected):
    """Version 2, the key id, a 12-byte IV that never repeats, PayloadLength unchanged by encryption,
    and a 16-byte tag after 85 10: what libiec61850's parser expects."""
    m, _keys, out = gcm_protected
    ps = pcap.rgoose_payloads(out)
    assert len(ps) == FRAMES, f"gander wrote {len(ps)} R-GOOSE frames, expected {FRAMES}"
    ivs = set()
    for p in ps:
        lay = rgoose_layout.parse(p)
        assert lay.version == 2 and lay.key_id == m.key_id and len(lay.iv) == 12
        ivs.add(lay.iv)
        assert p[-18:-16] == b"\x85\x10" and len(p) == lay.payload_end + 18
    assert len(ivs) == FRAMES, "gander reused an AES-GCM IV"


def test_gander_gcm_verifies_with_gander(gander, gcm_protected):
    m, keys, out = gcm_protected
    v = verify(gander, keys, out)
    assert v.rc == 0, v.describe()
    assert all(f["ok"] and f.get("key_id") == m.key_id for f in v.require(FRAMES)), v.describe()


def test_libiec61850_receiver_accepts_gander_gcm(captures, gcm_protected):
    m, keys, out = gcm_protected
    r = receive(out, keys)
    assert r["accepted"] == FRAMES, r
    assert r["valid"] == FRAMES, r
    got = [(f["st_num"], f["sq_num"], f["values"]) for f in r["frames"]]
    assert got == published(captures["none"])


def test_libiec61850_receiver_rejects_gander_gcm_with_wrong_key(gcm_protected, tmp_path):
    m, _keys, out = gcm_protected
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(m.key_toml(key_ascii=WRONG_KEY[m.name]))
    r = receive(out, wrong, ["--wait", "0.05"])
    assert r["accepted"] == 0, r


@pytest.mark.parametrize("mode", ["hmac-sha256-128", "hmac-sha256-256"])
def test_gander_hmac_matches_libiec61850_algorithm(gander, captures, tmp_path, mode):
    """HMAC-SHA256 over LI..end of payload, 16 or 32 bytes after `85 10` (profile libiec61850 writes
    libiec61850's length byte 16 for the 256-bit MAC), checked with Python's hmac."""
    m = MODES[mode]
    keys = tmp_path / "keys.toml"
    keys.write_text(m.key_toml())
    out = tmp_path / f"gander-{mode}.pcap"
    protect(gander, keys, m.key_id, captures["none"]["pcap"], out)
    ps = pcap.rgoose_payloads(out)
    assert len(ps) == FRAMES
    mac_len = 16 if mode.endswith("128") else 32
    for p in ps:
        lay = rgoose_layout.parse(p, mac_len=mac_len)
        assert lay.key_id == m.key_id and lay.iv == b""
        assert p[lay.payload_end:lay.payload_end + 2] == b"\x85\x10"
        assert len(p) == lay.payload_end + 2 + mac_len
        assert lay.trailers[0][2] == rgoose_layout.libiec61850_hmac(m.key_ascii.encode(), p, lay.payload_end, mac_len)
    v = verify(gander, keys, out)
    assert v.rc == 0, v.describe()
