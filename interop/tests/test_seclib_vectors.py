"""(c) The gateway paper's sample packets (slipz/RPi-Gateway packet_*.bin) verify with --profile seclib.

They are whole Ethernet frames in the repository's golden-frame file,
crates/sec/tests/vectors/golden_frames.txt (records `seclib-*`; where they come from is in its header).
SEC frames carry KeyID 0; the MAC is over SI..end of the GOOSE PDU; GMAC uses a zero IV
(docs/session-layout.md). Key 11754cd72aec309bf52f7687212e8957.
"""
from __future__ import annotations

import hashlib
import hmac

import pytest

import pcap
from conftest import GOLDEN_FRAMES, golden_frames, verify
from modes import key_entry

KEY_HEX = "11754cd72aec309bf52f7687212e8957"
# Record name in the golden-frame file -> gander key-file MAC name.
PACKETS = {
    "seclib-hmac-sha256-80": "hmac-sha256-80",
    "seclib-hmac-blake2b-80": "hmac-blake2b-80",
    "seclib-aes-gmac-128": "aes-gmac-128",
}


@pytest.fixture(scope="module")
def vectors() -> dict[str, bytes]:
    records = golden_frames()
    missing = set(PACKETS) - set(records)
    assert not missing, f"{GOLDEN_FRAMES}: no record {sorted(missing)}"
    out = {}
    for name, mac in PACKETS.items():
        r = records[name]
        # The record's own provenance fields must say what this test assumes.
        assert (r["Layer"], r["Profile"], r["KeyId"], r["Key"], r["Mac"], r["Enc"]) == \
            ("ethernet", "seclib", "0", KEY_HEX, mac, "none"), r
        out[name] = bytes.fromhex(r["Frame"])
    return out


def write_case(tmp_path, name, frames, mac):
    cap = tmp_path / f"{name}.pcap"
    pcap.write_pcap(cap, frames)
    keys = tmp_path / f"{name}.keys.toml"
    keys.write_text(key_entry(0, mac, "none", key_hex=KEY_HEX))
    return cap, keys


def test_vectors_are_seclib_frames(vectors):
    for name, frame in vectors.items():
        u = pcap.udp_payload(frame)
        assert u is not None and u.dport == 102, name
        assert u.payload[:3] == b"\x01\x40\xa0" and u.payload[14:16] == b"\x00\x01", name  # SI A0, version 1


@pytest.mark.parametrize("name", ["seclib-hmac-sha256-80", "seclib-hmac-blake2b-80"])
def test_vectors_mac_is_over_si_to_end_of_pdu(vectors, name):
    """Independent check (stdlib hmac) of what the seclib profile must compute: HMAC over SI..end of
    the GOOSE PDU, first 10 bytes, after `85 0a`."""
    p = pcap.udp_payload(vectors[name]).payload
    assert p[-12:-10] == b"\x85\x0a"
    digest = hashlib.sha256 if "sha256" in name else hashlib.blake2b
    assert hmac.new(bytes.fromhex(KEY_HEX), p[2:-12], digest).digest()[:10] == p[-10:]


@pytest.mark.parametrize("name", list(PACKETS))
def test_seclib_vector_verifies(gander, vectors, tmp_path, name):
    cap, keys = write_case(tmp_path, name, [vectors[name]], PACKETS[name])
    v = verify(gander, keys, cap, profile="seclib")
    assert v.rc == 0, v.describe()
    (f,) = v.require(1)
    assert f["ok"] is True and f["verdict"] != "unsecured", f
    assert f["kind"] == "r-goose", f
    if "key_id" in f:
        assert f["key_id"] == 0, f


@pytest.mark.parametrize("name", list(PACKETS))
def test_seclib_vector_tampered_or_wrong_key_fails(gander, vectors, tmp_path, name):
    frame = vectors[name]
    off = pcap.udp_payload(frame).payload_offset
    apdu_flip = bytearray(frame)
    apdu_flip[off + 200] ^= 0x01  # inside the GOOSE PDU (allData)
    mac_flip = bytearray(frame)
    mac_flip[-1] ^= 0x80  # last MAC byte
    si_flip = bytearray(frame)
    si_flip[off + 2] ^= 0x01  # SI: covered by SEC's MAC
    cap, keys = write_case(tmp_path, name, [bytes(apdu_flip), bytes(mac_flip), bytes(si_flip)], PACKETS[name])
    v = verify(gander, keys, cap, profile="seclib")
    assert v.rc != 0, v.describe()
    assert [f["ok"] for f in v.require(3)] == [False, False, False], v.describe()

    wrong = tmp_path / "wrong.toml"
    wrong.write_text(key_entry(0, PACKETS[name], "none", key_hex="00" * 16))
    cap1 = tmp_path / "one.pcap"
    pcap.write_pcap(cap1, [frame])
    v = verify(gander, wrong, cap1, profile="seclib")
    assert v.rc != 0 and v.require(1)[0]["ok"] is False, v.describe()
