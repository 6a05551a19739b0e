"""(d) tshark (Debian's Wireshark 4.0) dissects what gander writes without malformed-packet or
expert warnings/errors, and shows the fields we expect (so this test can fail).

R-GOOSE: UDP -> CLTP heuristic -> R-GOOSE heuristic, on by default in 4.0 (`tshark -G
heuristic-decodes` lists `udp goose T` and `cltp goose T`); we enable them explicitly anyway by their
short names `cltp_udp` and `rgoose_cltp`. tshark
cannot decrypt, so for encrypted frames only the session header (SPDU number, KeyID, IV) is checked;
for unencrypted frames stNum/sqNum must match what libiec61850 published.
"""
from __future__ import annotations

import json
import shutil
import struct

import pytest

import pcap
from conftest import FRAMES, protect, run
from modes import MODES

WARN_SEVERITY = 0x00600000  # PI_WARN; clean libiec61850 frames carry no expert info at all
PROTECT_MODES = ["aes-128-gcm", "aes-256-gcm", "hmac-sha256-128", "hmac-sha256-256",
                 "aes-128-gcm+hmac-sha256-128", "aes-256-gcm+hmac-sha256-256"]


def tshark_frames(path) -> list[dict]:
    """Frames as tshark's JSON layers; fails if tshark is missing or errors."""
    if shutil.which("tshark") is None:
        pytest.fail("tshark not installed: run `make setup`")
    p = run(["tshark", "-r", path, "-n", "--enable-heuristic", "cltp_udp", "--enable-heuristic", "rgoose_cltp",
             "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
             "-T", "json", "--no-duplicate-keys"])
    if "can't enable" in p.stderr:
        # heuristic names differ between versions; they are enabled by default in 4.0
        p = run(["tshark", "-r", path, "-n", "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
                 "-T", "json", "--no-duplicate-keys"])
    assert p.returncode == 0, p.stderr
    return [pkt["_source"]["layers"] for pkt in json.loads(p.stdout or "[]")]


def walk(node, found: dict):
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, (dict, list)):
                walk(v, found)
            found.setdefault(k, [])
            if not isinstance(v, (dict, list)):
                found[k].append(v)
            elif isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v):
                found[k].extend(v)
            if k == "_ws.expert" and isinstance(v, dict):
                found.setdefault("__expert__", []).append(v)
    elif isinstance(node, list):
        for x in node:
            walk(x, found)


def problems(layers: dict) -> list[str]:
    found: dict = {}
    walk(layers, found)
    out = []
    if "_ws.malformed" in found or any(k.startswith("_ws.malformed") for k in found):
        out.append("Malformed Packet")
    for e in found.get("__expert__", []):
        sev = int(e.get("_ws.expert.severity", "0"))
        if sev >= WARN_SEVERITY:
            out.append(f"expert info (severity {sev:#x}): {e.get('_ws.expert.message')}")
    for k in ("ip.checksum.status", "udp.checksum.status"):
        if any(v not in ("1", "2") for v in found.get(k, [])):  # 1 good, 2 unverified
            out.append(f"{k}={found[k]}")
    return out


def fields(layers: dict) -> dict:
    found: dict = {}
    walk(layers, found)
    return found


def outside_ciphertext(layers: dict) -> dict:
    """The layers of an encrypted R-GOOSE frame without what tshark made of the ciphertext.

    tshark cannot decrypt, so it reads the encrypted payload as a cleartext one. The first
    ciphertext byte lands on the payload-type tag; when it happens to be 0x81 or 0x82 (about one
    frame in 128, the IV being random) tshark goes on to parse ciphertext as a GOOSE/SV APDU and
    reports a zero-byte PDU or BER errors inside `rgoose.session_user_info`, and if that throws, a
    top-level "Malformed Packet (Exception occurred)" layer. Those findings say nothing about
    gander's bytes, so they are removed; everything else (Ethernet, IP and UDP checksums, CLTP, the
    session header with SPDU length, key id and IV) is still checked. An exception is only forgiven
    when the ciphertext subtree itself carries a finding, so an exception in the header would fail.
    """
    rg = layers.get("r-goose")
    if not isinstance(rg, dict) or "rgoose.session_user_info" not in rg:
        return layers
    misread = problems(rg["rgoose.session_user_info"])
    rg = {k: v for k, v in rg.items() if k != "rgoose.session_user_info"}
    out = {k: v for k, v in layers.items() if k != "r-goose"}
    out["r-goose"] = rg
    if misread:
        out.pop("_ws.malformed", None)
    return out


def check_capture(path, *, expect_frames: int, published=None, key_id=None, encrypted=False):
    frames = tshark_frames(path)
    assert len(frames) == expect_frames
    bad = {i: problems(outside_ciphertext(f) if encrypted else f) for i, f in enumerate(frames)}
    bad = {i: p for i, p in bad.items() if p}
    assert not bad, f"tshark reports problems in {path}: {dict(list(bad.items())[:5])}"
    for i, f in enumerate(frames):
        fl = fields(f)
        protos = fl.get("frame.protocols", [""])[0]
        assert "goose" in protos, f"frame {i} not dissected as (R-)GOOSE: {protos}"
        if key_id is not None:
            assert [int(x, 0) for x in fl.get("rgoose.key_id", [])] == [key_id], (i, fl.get("rgoose.key_id"))
            assert fl.get("rgoose.init_v_len") == [("12" if encrypted else "0")], (i, fl.get("rgoose.init_v_len"))
        if published is not None and not encrypted:
            assert [int(x) for x in fl.get("goose.stNum", [])] == [published[i]["st_num"]], i
            assert [int(x) for x in fl.get("goose.sqNum", [])] == [published[i]["sq_num"]], i


# every mode under profile libiec61850; a representative subset under the standard profile
PROTECT_CASES = [(m, "libiec61850") for m in PROTECT_MODES] + [
    (m, "standard") for m in ("aes-128-gcm", "hmac-sha256-128", "hmac-sha256-256")]


@pytest.mark.parametrize("mode,profile", PROTECT_CASES)
def test_tshark_dissects_gander_rgoose(gander, captures, tmp_path, mode, profile):
    m = MODES[mode]
    keys = tmp_path / "keys.toml"
    keys.write_text(m.key_toml())
    out = tmp_path / f"{mode}.{profile}.pcap"
    protect(gander, keys, m.key_id, captures["none"]["pcap"], out, profile=profile)
    check_capture(out, expect_frames=FRAMES, published=captures["none"]["meta"]["frames"],
                  key_id=m.key_id, encrypted=m.encrypted)


def test_tshark_dissects_plain_captures(captures):
    """libiec61850's unsecured R-GOOSE as the harness writes it (the input of every protect test)."""
    check_capture(captures["none"]["pcap"], expect_frames=FRAMES, published=captures["none"]["meta"]["frames"],
                  key_id=0)


def l2_goose(apdu: bytes, appid: int = 0x1000, vlan: bool = False) -> bytes:
    """IEC 61850-8-1 GOOSE frame (EtherType 0x88B8) around a GOOSE APDU."""
    eth = bytes.fromhex("010ccd010001") + pcap.SRC_MAC
    if vlan:
        eth += struct.pack("!HH", 0x8100, (4 << 13) | 10)
    return eth + struct.pack("!HHHHH", 0x88B8, appid, 8 + len(apdu), 0, 0) + apdu


@pytest.fixture
def plain_l2(captures, tmp_path):
    frames = []
    for i, p in enumerate(pcap.rgoose_payloads(captures["none"]["pcap"])):
        ps = 27 + p[26] + 4
        apdu = p[ps + 6:ps + 6 + int.from_bytes(p[ps + 4:ps + 6], "big") - 2]  # APDU length is N + 2
        frames.append(l2_goose(apdu, vlan=bool(i % 2)))
    path = tmp_path / "goose-l2.pcap"
    pcap.write_pcap(path, frames)
    return path


def test_tshark_dissects_plain_l2_goose(captures, plain_l2):
    check_capture(plain_l2, expect_frames=FRAMES, published=captures["none"]["meta"]["frames"])


def test_gander_reports_plain_goose_unsecured(gander, captures, plain_l2):
    from conftest import verify
    v = verify(gander, captures["none"]["keys"], plain_l2, profile=None)
    assert v.rc == 0, v.describe()
    for f in v.require(FRAMES):
        assert f["ok"] is True and f["kind"] == "goose" and f["verdict"] == "unsecured", f


def test_checker_detects_malformed_frames(captures, tmp_path):
    """Control: truncated R-GOOSE must trip the checker, or the tests above prove nothing."""
    ps = pcap.rgoose_payloads(captures["hmac-sha256-128"]["pcap"])
    bad = tmp_path / "truncated.pcap"
    pcap.write_udp_pcap(bad, [ps[0][:150], ps[1][:100]])
    frames = tshark_frames(bad)
    assert all(problems(f) for f in frames), [problems(f) for f in frames]


def test_ciphertext_filter_keeps_header_findings():
    """Control for `outside_ciphertext`: a misread of the ciphertext is forgiven, a finding in the
    session header or an exception without a ciphertext finding is not."""
    ber = {"_ws.expert": {"_ws.expert.message": "BER Error", "_ws.expert.severity": "6291456"}}
    exc = {"_ws.expert": {"_ws.expert.message": "Malformed Packet (Exception occurred)",
                          "_ws.expert.severity": "8388608"}, "_ws.malformed": "Malformed Packet"}
    misread = {"udp": {}, "r-goose": {"rgoose.session_hdr": {"rgoose.key_id": "1"},
                                      "rgoose.session_user_info": {"rgoose.payload": {"x": ber}}},
               "_ws.malformed": exc}
    assert problems(misread) and not problems(outside_ciphertext(misread))
    in_header = {"r-goose": {"rgoose.session_hdr": {"e": ber}, "rgoose.session_user_info": {}}}
    assert problems(outside_ciphertext(in_header))
    bare_exception = {"r-goose": {"rgoose.session_hdr": {}, "rgoose.session_user_info": {}},
                      "_ws.malformed": exc}
    assert problems(outside_ciphertext(bare_exception))


# ---------------------------------------------------------------- layer-2 SV and IPv6

SV_KEYS = """[[key]]
id = 3
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
"""


def lib_sv_frames(n: int = 8) -> list[bytes]:
    """libiec61850 1.6.1's SV frame (golden record `lib-sv-9-2-unsecured`, provenance in the vector
    file) with smpCnt 0..n-1."""
    from conftest import golden_frames
    base = bytes.fromhex(golden_frames()["lib-sv-9-2-unsecured"]["Frame"])
    at = base.index(b"\x82\x02") + 2
    return [base[:at] + struct.pack("!H", i) + base[at + 2:] for i in range(n)]


def sv_problems(layers: dict) -> list[str]:
    """`problems` less the one finding Wireshark 4.0's SV dissector makes of every IEC 62351-6
    extension: packet-sv.c has no security-extension support and reads whatever follows the
    savPdu inside Length as a further savPdu, which yields "Internal error, zero-byte SV PDU"
    (expert `sv.zero_pdu`) at the first extension byte. Any other finding still fails."""
    out = []
    for p in problems(layers):
        if "zero-byte SV PDU" in p:
            continue
        out.append(p)
    return out


def test_tshark_dissects_gander_protected_sv(gander, tmp_path):
    frames = lib_sv_frames()
    src = tmp_path / "sv.pcap"
    pcap.write_pcap(src, frames)
    keys = tmp_path / "keys.toml"
    keys.write_text(SV_KEYS)
    out = tmp_path / "sv-protected.pcap"
    protect(gander, keys, 3, src, out, profile="standard")
    from conftest import verify
    v = verify(gander, keys, out, profile="standard")
    assert v.rc == 0, v.describe()
    for i, f in enumerate(v.require(len(frames))):
        assert (f["kind"], f["verdict"], f["smp_cnt"]) == ("sv", "verified", i), f
    protected = [p.data for p in pcap.read_packets(out)]
    for i, layers in enumerate(tshark_frames(out)):
        fl = fields(layers)
        assert "sv" in fl.get("frame.protocols", [""])[0], fl.get("frame.protocols")
        assert fl.get("sv.appid") == ["0x4000"], fl.get("sv.appid")
        # Length counts the extension; Reserved1 announces its length (IEC 62351-6).
        body = protected[i][14:]
        length, reserved1 = struct.unpack("!HH", body[2:6])
        assert length == len(body) and reserved1 == len(body) - 8 - (body[9] + 2), (length, reserved1)
        assert [int(x) for x in fl.get("sv.length", [])] == [length]
        assert [int(x, 0) for x in fl.get("sv.reserve1", [])] == [reserved1]
        assert fl.get("sv.svID") == ["GANDERMU01"], fl.get("sv.svID")
        assert [int(x) for x in fl.get("sv.smpCnt", [])] == [i]
        assert not sv_problems(layers), sv_problems(layers)
    # The finding forgiven above is exactly Wireshark's, and only on the protected frames: the
    # publisher's own frames dissect with no finding at all.
    assert all(any("zero-byte SV PDU" in p for p in problems(f)) for f in tshark_frames(out))
    assert not any(problems(f) for f in tshark_frames(src))


def test_sv_problem_filter_keeps_other_findings():
    """Control for `sv_problems`: only the zero-byte SV PDU finding is forgiven."""
    zero = {"_ws.expert": {"_ws.expert.message": "Internal error, zero-byte SV PDU",
                           "_ws.expert.severity": "8388608"}}
    ber = {"_ws.expert": {"_ws.expert.message": "BER Error", "_ws.expert.severity": "6291456"}}
    assert problems({"sv": zero}) and not sv_problems({"sv": zero})
    assert sv_problems({"sv": {"a": zero, "b": ber}})


def ipv6_udp_frame(payload: bytes, src: bytes, dst: bytes) -> bytes:
    """Ethernet/IPv6/UDP, port 102 both ways, with the UDP checksum IPv6 requires (RFC 8200 §8.1)."""
    udp_len = 8 + len(payload)
    pseudo = src + dst + struct.pack("!I", udp_len) + b"\x00\x00\x00\x11"
    udp = struct.pack("!HHHH", 102, 102, udp_len, 0) + payload
    s = 0
    data = pseudo + udp + (b"\x00" if len(udp) % 2 else b"")
    for i in range(0, len(data), 2):
        s += (data[i] << 8) | data[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    c = (~s & 0xFFFF) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    ip6 = struct.pack("!IHBB", 6 << 28, udp_len, 17, 64) + src + dst
    eth = bytes.fromhex("333300000102") + pcap.SRC_MAC + b"\x86\xdd"
    return eth + ip6 + udp


@pytest.mark.parametrize("mode", ["hmac-sha256-128", "aes-128-gcm"])
def test_tshark_dissects_gander_ipv6_rgoose(gander, captures, tmp_path, mode):
    """libiec61850's R-GOOSE moved into IPv6 (ULA source, multicast group ff05::102), protected by
    gander: tshark finds the UDP checksum good (gander recomputed it) and the session header."""
    src_ip = bytes.fromhex("fd000000000000850000000000000001")
    group = bytes.fromhex("ff050000000000000000000000000102")
    frames = [ipv6_udp_frame(p, src_ip, group) for p in pcap.rgoose_payloads(captures["none"]["pcap"])]
    plain = tmp_path / "v6.pcap"
    pcap.write_pcap(plain, frames)
    m = MODES[mode]
    keys = tmp_path / "keys.toml"
    keys.write_text(m.key_toml())
    out = tmp_path / "v6-protected.pcap"
    protect(gander, keys, m.key_id, plain, out, profile="libiec61850")
    from conftest import verify
    v = verify(gander, keys, out, profile="libiec61850")
    assert v.rc == 0, v.describe()
    assert all(f["verdict"] == "verified" for f in v.require(FRAMES))
    for i, layers in enumerate(tshark_frames(out)):
        fl = fields(layers)
        assert "ipv6" in fl.get("frame.protocols", [""])[0]
        assert fl.get("udp.checksum.status") == ["1"], (i, fl.get("udp.checksum.status"))
        assert [int(x, 0) for x in fl.get("rgoose.key_id", [])] == [m.key_id]
        assert not problems(outside_ciphertext(layers) if m.encrypted else layers), problems(layers)
