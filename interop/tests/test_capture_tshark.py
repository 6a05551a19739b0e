"""gander-capture against tshark on captures written here: Linux cooked (SLL), BSD loopback
(NULL, LOOP) and Ethernet,
IPv4 and IPv6 fragments in and out of order, a capture cut short. tshark is the reference for
frame numbers and for where a reassembled datagram is shown (its last fragment), as issue #21
measured on robidev/iec61850-dissector test/iec90-5-samples.pcap and test/capture.pcapng.
"""
from __future__ import annotations

import json
import shutil
import struct

import pytest

from conftest import run


def csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4(ident: int, more: bool, offset: int, data: bytes) -> bytes:
    h = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(data), ident,
                              (offset // 8) | (0x2000 if more else 0), 64, 17, 0,
                              bytes([192, 168, 10, 66]), bytes([224, 0, 1, 4])))
    h[10:12] = struct.pack("!H", csum(bytes(h)))
    return bytes(h) + data


def ipv6_frag(ident: int, more: bool, offset: int, data: bytes) -> bytes:
    src = bytes.fromhex("fe800000000000000000000000000001")
    dst = bytes.fromhex("ff050000000000000000000000000066")
    fh = struct.pack("!BBHI", 17, 0, offset | int(more), ident)
    return struct.pack("!IHBB", 0x60000000, 8 + len(data), 44, 64) + src + dst + fh + data


def udp(length: int) -> bytes:
    payload = bytes(i & 0xFF for i in range(length))
    return struct.pack("!HHHH", 49152, 102, 8 + length, 0) + payload


def ether(ethertype: int, payload: bytes) -> bytes:
    return bytes.fromhex("01005e000104") + bytes.fromhex("0030a7010203") + struct.pack("!H", ethertype) + payload


def sll(ethertype: int, payload: bytes) -> bytes:
    return struct.pack("!HHH", 4, 1, 6) + bytes.fromhex("0030a70102030000") + struct.pack("!H", ethertype) + payload


def null(family: int, payload: bytes, big: bool = False) -> bytes:
    """A BSD loopback packet (LINKTYPE_NULL in the writer's byte order, LOOP big-endian)."""
    return struct.pack(">I" if big else "<I", family) + payload


def pcap_file(link: int, frames: list[bytes]) -> bytes:
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, link)
    for i, f in enumerate(frames):
        out += struct.pack("<IIII", 1_700_000_000 + i, 0, len(f), len(f)) + f
    return out


def tshark_reassembled(path) -> tuple[int, list[int]]:
    """(frames, frame numbers at which tshark shows a reassembled datagram)."""
    if shutil.which("tshark") is None:
        pytest.fail("tshark not installed: run `make setup`")
    p = run(["tshark", "-r", str(path), "-n", "-T", "json", "--no-duplicate-keys"])
    frames = json.loads(p.stdout or "[]")
    at = [int(f["_source"]["layers"]["frame"]["frame.number"]) for f in frames
          if "udp" in f["_source"]["layers"]]
    return len(frames), at


def gander_reassembled(gander, path) -> tuple[int, list[int], str]:
    p = run([gander, "frame", "show", "--json", str(path)])
    assert p.returncode == 0, p.stderr
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    frames = [o for o in lines if "finding" not in o]
    at = [o["frame"] for o in frames if "reassembled" in o]
    return len(frames), at, p.stderr


def fragment_cases():
    d4 = udp(1562)
    v4 = [ipv4(7, True, 0, d4[:1480]), ipv4(7, False, 1480, d4[1480:])]
    d6 = udp(3000)
    v6 = [ipv6_frag(9, i + 1232 < len(d6), i, d6[i:i + 1232]) for i in range(0, len(d6), 1232)]
    return {
        "sll-v4-in-order": (113, [sll(0x0800, f) for f in v4]),
        "eth-v4-reversed": (1, [ether(0x0800, f) for f in reversed(v4)]),
        "eth-v6-shuffled": (1, [ether(0x86DD, v6[i]) for i in (1, 2, 0)]),
        "sll-v6-in-order": (113, [sll(0x86DD, f) for f in v6]),
        # macOS loopback (AF_INET6 is 30 there), a big-endian writer, OpenBSD's LOOP (24).
        "null-v4-reversed": (0, [null(2, f) for f in reversed(v4)]),
        "null-v6-macos": (0, [null(30, f) for f in v6]),
        "null-v4-big-endian": (0, [null(2, f, big=True) for f in v4]),
        "loop-v6-openbsd": (108, [null(24, v6[i], big=True) for i in (2, 0, 1)]),
    }


@pytest.mark.parametrize("name", list(fragment_cases()))
def test_reassembled_at_the_same_frame_as_tshark(gander, tmp_path, name):
    link, frames = fragment_cases()[name]
    path = tmp_path / f"{name}.pcap"
    path.write_bytes(pcap_file(link, frames))
    t_frames, t_at = tshark_reassembled(path)
    g_frames, g_at, _ = gander_reassembled(gander, path)
    assert g_frames == t_frames
    assert t_at, "tshark reassembled nothing: the fixture is wrong"
    assert g_at == t_at


def test_cut_short_reads_the_frames_tshark_shows(gander, tmp_path):
    d = udp(200)
    frames = [ether(0x0800, ipv4(i, False, 0, d)) for i in range(5)]
    whole = pcap_file(1, frames)
    path = tmp_path / "cut.pcap"
    path.write_bytes(whole[:-50])
    p = run(["tshark", "-r", str(path), "-n", "-T", "fields", "-e", "frame.number"])
    t_numbers = [int(x) for x in p.stdout.split()]
    g = run([gander, "frame", "show", "--json", str(path)])
    assert g.returncode == 0, g.stderr
    g_numbers = [json.loads(l)["frame"] for l in g.stdout.splitlines()]
    assert g_numbers == t_numbers == [1, 2, 3, 4]
    assert "cut short" in g.stderr


def test_frames_cut_by_the_snap_length_are_the_ones_tshark_shows_cut(gander, tmp_path):
    """`editcap -s 64` of a capture (the field test's D_snap64p, from ITI/ICS-Security-Tools
    Sample_File_MMS_and_GOOSE.pcap): every frame longer than 64 octets is recorded cut. gander
    names exactly the frames tshark shows with frame.cap_len < frame.len, with the same lengths,
    as `capture-truncated` and never malformed; GOOSE by its EtherType, NTP as other."""
    if shutil.which("editcap") is None:
        pytest.fail("editcap not installed: run `make setup`")
    goose = ether(0x88B8, struct.pack("!HHHH", 0x0001, 8 + 120, 0, 0) + bytes([0x61, 0x76]) + bytes(118))
    ntp = ether(0x0800, ipv4(5, False, 0, struct.pack("!HHHH", 123, 123, 56, 0) + bytes(48)))
    short = ether(0x0800, ipv4(6, False, 0, struct.pack("!HHHH", 123, 123, 16, 0) + bytes(8)))
    whole = tmp_path / "whole.pcap"
    whole.write_bytes(pcap_file(1, [goose, ntp, short]))
    cut = tmp_path / "cut.pcap"
    run(["editcap", "-s", "64", str(whole), str(cut)], check=True)
    p = run(["tshark", "-r", str(cut), "-n", "-T", "fields", "-e", "frame.number",
             "-e", "frame.cap_len", "-e", "frame.len"], check=True)
    t_cut = [tuple(int(x) for x in l.split()) for l in p.stdout.splitlines()]
    t_cut = [t for t in t_cut if t[1] < t[2]]
    assert [t[0] for t in t_cut] == [1, 2], p.stdout
    g = run([gander, "frame", "show", "--json", str(cut)])
    assert g.returncode == 0, g.stderr
    lines = [json.loads(l) for l in g.stdout.splitlines()]
    g_cut = [(o["frame"], o["captured_len"], o["orig_len"]) for o in lines if o["kind"] == "capture-truncated"]
    assert g_cut == t_cut
    assert [o.get("carries") for o in lines[:2]] == ["goose", "other"]
    assert lines[2]["kind"] == "other"
    assert "malformed" not in g.stdout


LIB_L2 = ("010ccd01000102000000000188b8400100d10022c0356181a4802973696d706c65494f47656e65726963494f2f"
          "4c4c4e3024474f24676362416e616c6f6756616c756573810201f4822373696d706c65494f47656e65726963494f2f"
          "4c4c4e3024416e616c6f6756616c756573832973696d706c65494f47656e65726963494f2f4c4c4e3024474f246763"
          "62416e616c6f6756616c75657384086b022a6fcb020c0a8501018601008701008801018901008a0102ab07850204d2"
          "830101a020a40c800101810100820100840101851030f90ee17f312b2dd902094ef6496319")


def gre_wrap(kind: str, inner: bytes, o_bit: bool = False) -> bytes:
    """`inner` (an Ethernet frame) as a collector receives it in GRE: transparent Ethernet
    bridging (0x6558), ERSPAN type II (0x88BE, sequence number, 8-octet header) or type III
    (0x22EB, 12-octet header, an 8-octet platform sub-header when the O bit is set)."""
    if kind == "teb":
        gre = struct.pack("!HH", 0, 0x6558)
    elif kind == "erspan2":
        gre = struct.pack("!HHI", 0x1000, 0x88BE, 7) + bytes([0x10, 0x05, 0x00, 0x64, 0, 0, 0, 0])
    else:
        gre = struct.pack("!HHI", 0x1000, 0x22EB, 7) + bytes([0x20, 0x05, 0x00, 0x64, 1, 2, 3, 4, 0, 0, 0, int(o_bit)])
        if o_bit:
            gre += bytes([0x08, 0, 0, 0, 0, 0, 0, 0])
    gre += inner
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(gre), 1, 0, 64, 47, 0,
                               bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
    ip[10:12] = struct.pack("!H", csum(bytes(ip)))
    return bytes.fromhex("00005e0001010000000000fe") + struct.pack("!H", 0x0800) + bytes(ip) + gre


def test_goose_inside_gre_and_erspan_is_found_where_tshark_finds_it(gander, tmp_path):
    """The field test's D_erspan.pcap (ITI Sample_File_MMS_and_GOOSE inside ERSPAN type II):
    34 GOOSE frames were `other` and the audit said 0 streams, exit 0. gander takes the frame out
    of the tunnel at the same frames where tshark shows GOOSE, with the same stNum."""
    # libiec61850's GOOSE frame (crates/cli/tests/it/frame_cli.rs LIB_L2) without its extension.
    lib = bytearray(bytes.fromhex(LIB_L2)[:-34])
    lib[16:18] = struct.pack("!H", len(lib) - 14)
    lib[18:22] = bytes(4)
    goose = bytes(lib)
    ntp = ether(0x0800, ipv4(5, False, 0, struct.pack("!HHHH", 123, 123, 56, 0) + bytes(48)))
    frames = [gre_wrap("erspan2", goose), gre_wrap("erspan2", ntp), gre_wrap("erspan3", goose),
              gre_wrap("erspan3", goose, o_bit=True), gre_wrap("teb", goose), goose]
    path = tmp_path / "erspan.pcap"
    path.write_bytes(pcap_file(1, frames))
    p = run(["tshark", "-r", str(path), "-n", "-Y", "goose", "-T", "fields", "-e", "frame.number",
             "-e", "goose.stNum"], check=True)
    t = [tuple(int(x) for x in l.split()) for l in p.stdout.splitlines()]
    assert [n for n, _ in t] == [1, 3, 4, 5, 6], p.stdout
    g = run([gander, "frame", "show", "--json", str(path)])
    assert g.returncode == 0, g.stderr
    lines = [json.loads(l) for l in g.stdout.splitlines()]
    g_goose = [(o["frame"], o["goose"]["stNum"]) for o in lines if o["kind"] == "goose"]
    assert g_goose == t
    assert [o.get("tunnel") for o in lines] == ["erspan-ii", "erspan-ii", "erspan-iii", "erspan-iii", "gre-eth", None]
