"""The harness itself and libiec61850 1.6.1's observed R-GOOSE behaviour (no gander needed).

These pin what docs/interop.md reports, so a change of the wheel that changes behaviour shows up here.
"""
from __future__ import annotations

import json
import shutil

import pytest

import pcap
import rgoose_layout
from conftest import FRAMES, receive, run
from modes import KEY_128, KEY_256, MODES, SECURED_MODES

MAC_LEN = {"hmac-sha256-128": 16, "hmac-sha256-256": 32}


def payloads(cap) -> list[bytes]:
    ps = pcap.rgoose_payloads(cap["pcap"])
    assert len(ps) == FRAMES
    return ps


@pytest.mark.parametrize("mode", list(MODES))
def test_publisher_capture_layout(captures, mode):
    """libiec61850 writes the version-2 layout: KeyID, 12-byte IV only when encrypting, SPDU numbers
    counting from 0, 85-trailers as documented; stNum/sqNum/values change as published."""
    m = MODES[mode]
    cap = captures[mode]
    ps = payloads(cap)
    ivs = set()
    for i, p in enumerate(ps):
        lay = rgoose_layout.parse(p, mac_len=MAC_LEN.get(m.mac) if not m.encrypted else None)
        assert p[2] == 0xA1 and p[3] == 24 and p[5] == 18
        assert lay.version == 2
        assert lay.spdu_number == i
        assert lay.key_id == m.key_id
        assert len(lay.iv) == (12 if m.encrypted else 0)
        ivs.add(lay.iv)
        # SPDU length = 20 + PayloadLength (pitfall P3), whatever the IV and trailers
        assert int.from_bytes(p[6:10], "big") == 20 + (lay.payload_end - lay.payload_start)
        if not m.encrypted:
            apdu_len = int.from_bytes(p[lay.payload_start + 4:lay.payload_start + 6], "big")
            assert apdu_len == lay.payload_end - lay.payload_start - 6 + 2  # APDU length = N + 2 (P4)
            assert p[lay.payload_start + 6] == 0x61
        if m.encrypted:
            extra = 2 + MAC_LEN[m.mac] if m.signed else 0  # encrypted inner HMAC trailer
            assert len(p) == lay.payload_end + extra + 18
            assert p[-18:-16] == b"\x85\x10"
        elif m.signed:
            assert p[lay.payload_end:lay.payload_end + 2] == b"\x85\x10"  # 16 even for the 256-bit MAC
            assert len(p) == lay.payload_end + 2 + MAC_LEN[m.mac]
        else:
            assert len(p) == lay.payload_end
    if m.encrypted:
        assert len(ivs) == FRAMES, "IVs repeat"
    sts = [(f["st_num"], f["sq_num"]) for f in cap["meta"]["frames"]]
    assert len(set(sts)) == FRAMES and len({f["st_num"] for f in cap["meta"]["frames"]}) > 1


@pytest.mark.parametrize("mode", ["hmac-sha256-128", "hmac-sha256-256"])
def test_publisher_hmac_is_hmac_sha256_over_li_to_payload_end(captures, mode):
    """Independent check (stdlib hmac) of libiec61850's MAC: HMAC-SHA256(key, LI..end of payload),
    first 16 bytes (-128) or all 32 (-256, under a length byte of 16)."""
    key = (KEY_128 if mode.endswith("128") else KEY_256).encode()
    for p in payloads(captures[mode]):
        lay = rgoose_layout.parse(p, mac_len=MAC_LEN[mode])
        mac = lay.trailers[0][2]
        assert mac == rgoose_layout.libiec61850_hmac(key, p, lay.payload_end, MAC_LEN[mode])


def test_unsecured_capture_decodes_published_values(captures):
    """The plain capture carries exactly the stNum/sqNum the publisher recorded (BER, by hand)."""
    cap = captures["none"]
    for p, exp in zip(payloads(cap), cap["meta"]["frames"]):
        lay = rgoose_layout.parse(p)
        apdu = p[lay.payload_start + 6:lay.payload_end]
        st = _ber_uint(apdu, 0x85)
        sq = _ber_uint(apdu, 0x86)
        assert (st, sq) == (exp["st_num"], exp["sq_num"])


def _ber_uint(apdu: bytes, tag: int) -> int:
    i = 3 if apdu[1] == 0x81 else (4 if apdu[1] == 0x82 else 2)
    while i < len(apdu):
        t, ln = apdu[i], apdu[i + 1]
        if t == tag:
            return int.from_bytes(apdu[i + 2:i + 2 + ln], "big")
        i += 2 + ln
    raise KeyError(tag)


@pytest.mark.parametrize("mode", ["aes-128-gcm", "aes-256-gcm"])
def test_receiver_accepts_own_gcm_frames(captures, mode):
    cap = captures[mode]
    r = receive(cap["pcap"], cap["keys"])
    assert r["accepted"] == FRAMES, json.dumps(r)[:2000]
    assert r["valid"] == FRAMES
    got = [(f["st_num"], f["sq_num"], f["values"]) for f in r["frames"]]
    assert got == [(f["st_num"], f["sq_num"], f["values"]) for f in cap["meta"]["frames"]]


@pytest.mark.parametrize("mode", ["hmac-sha256-128", "hmac-sha256-256",
                                  "aes-128-gcm+hmac-sha256-128", "aes-256-gcm+hmac-sha256-256"])
def test_receiver_rejects_own_hmac_frames(captures, mode):
    """Pitfall P1: libiec61850 1.6.1 compares the MAC one byte early, so its own signed frames fail."""
    cap = captures[mode]
    r = receive(cap["pcap"], cap["keys"], ["--wait", "0.05"])
    assert r["accepted"] == 0


def test_receiver_accepts_hmac_frame_without_length_byte(captures, tmp_path):
    """The off-by-one made visible: drop the MAC's length byte and libiec61850 accepts the frame."""
    ps = payloads(captures["hmac-sha256-128"])[:4]
    shifted = [p[:-18] + b"\x85" + p[-16:] for p in ps]
    f = tmp_path / "shifted.pcap"
    pcap.write_udp_pcap(f, shifted)
    r = receive(f, captures["hmac-sha256-128"]["keys"])
    assert r["accepted"] == 4


def test_receiver_drops_unsecured_frames(captures, tmp_path):
    """Pitfall P2: KeyID 0 is dropped, with or without keys in the receiver's session."""
    cap = captures["none"]
    assert receive(cap["pcap"], cap["keys"], ["--wait", "0.05"])["accepted"] == 0
    assert receive(cap["pcap"], None, ["--wait", "0.05"])["accepted"] == 0


def test_receiver_rejects_tampered_gcm_and_wrong_key(captures, tmp_path):
    """So that 'accepted' in the gander tests means something: a flipped ciphertext bit or a wrong key
    is rejected by libiec61850's GCM path."""
    cap = captures["aes-128-gcm"]
    ps = payloads(cap)[:6]
    flipped = []
    for i, p in enumerate(ps):
        b = bytearray(p)
        b[60 + 20 * i] ^= 1 << (i % 8)
        flipped.append(bytes(b))
    f = tmp_path / "flipped.pcap"
    pcap.write_udp_pcap(f, flipped)
    assert receive(f, cap["keys"], ["--wait", "0.05"])["accepted"] == 0
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(MODES["aes-128-gcm"].key_toml(key_ascii="FEDCBA9876543210"))
    assert receive(cap["pcap"], wrong, ["--wait", "0.05"])["accepted"] == 0


@pytest.mark.parametrize("declared", ["hmac-sha256-80", "aes-gmac-64", "aes-gmac-128"])
def test_receiver_accepts_forgeries_for_unimplemented_mac_codes(captures, tmp_path, declared):
    """Observed: a key provisioned with a MAC code libiec61850 1.6.1 does not implement (1, 4, 5) makes
    its receiver accept any frame with an 0x85 byte after the payload: a forged value goes through."""
    ps = payloads(captures["hmac-sha256-128"])[:3]
    forged = []
    for p in ps:
        b = bytearray(p)
        i = b.find(bytes.fromhex("850203e8"))  # INT32 1000 in allData
        b[i + 3] ^= 0xFF
        forged.append(bytes(b))
    f = tmp_path / "forged.pcap"
    pcap.write_udp_pcap(f, forged)
    k = tmp_path / "k.toml"
    k.write_text(f'[[key]]\nid = 3\nmac = "{declared}"\nenc = "none"\nkey_ascii = "{KEY_128}"\n')
    r = receive(f, k)
    assert r["accepted"] == 3
    assert r["frames"][0]["values"][0] == 1000 ^ 0xFF


def test_pcap_roundtrip_and_checksums(tmp_path):
    data = [bytes(range(i, i + 40)) for i in range(5)]
    f = tmp_path / "rt.pcap"
    pcap.write_udp_pcap(f, data)
    assert pcap.rgoose_payloads(f) == []  # not 01 40
    pk = pcap.read_packets(f)
    assert [pcap.udp_payload(p.data).payload for p in pk] == data
    frame = pk[0].data
    ip = frame[14:34]
    assert pcap._csum(ip) == 0
    udp = frame[34:]
    pseudo = ip[12:20] + bytes([0, 17]) + len(udp).to_bytes(2, "big")
    assert pcap._csum(pseudo + udp) == 0


def test_tshark_reads_harness_captures_with_good_checksums(captures):
    if shutil.which("tshark") is None:
        pytest.fail("tshark not installed: run `make setup`")  # fail, never skip (as test_tshark.py)
    cap = captures["hmac-sha256-128"]
    p = run(["tshark", "-r", cap["pcap"], "-n", "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
             "-T", "fields", "-e", "ip.checksum.status", "-e", "udp.checksum.status", "-e", "goose.stNum"], check=True)
    rows = [ln.split("\t") for ln in p.stdout.splitlines() if ln]
    assert len(rows) == FRAMES
    assert all(r[0] == "1" and r[1] == "1" for r in rows), rows[:3]
    assert [int(r[2]) for r in rows] == [f["st_num"] for f in cap["meta"]["frames"]]


def test_every_secured_mode_has_distinct_key_id():
    ids = [m.key_id for m in SECURED_MODES]
    assert len(set(ids)) == len(ids) and 0 not in ids
