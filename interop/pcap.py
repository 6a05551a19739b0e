"""Minimal pcap / pcapng reading and pcap writing (stdlib only).

Writing: classic pcap, microsecond timestamps, link type 1 (Ethernet). R-GOOSE payloads are wrapped in
synthesised Ethernet/IPv4/UDP headers with correct lengths and checksums, so that tools that check
checksums (tshark with validation enabled, gander) see a clean frame. Reading accepts both classic pcap
(either byte order, micro- or nanosecond) and pcapng (SHB/IDB/EPB/SPB), because gander may write either.
"""
from __future__ import annotations

import dataclasses
import struct
from typing import Iterable, Iterator

LINKTYPE_ETHERNET = 1
ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_VLAN = 0x8100
ETHERTYPE_GOOSE = 0x88B8
RGOOSE_PORT = 102

# Documentation addresses (RFC 5737, RFC 7042): these frames never leave a file.
SRC_MAC = bytes.fromhex("0200000000a1")
DST_MAC = bytes.fromhex("0200000000a2")
SRC_IP = bytes([192, 0, 2, 1])
DST_IP = bytes([192, 0, 2, 2])


@dataclasses.dataclass
class Packet:
    ts: float
    data: bytes
    linktype: int = LINKTYPE_ETHERNET


def _csum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def udp_frame(payload: bytes, *, sport: int = RGOOSE_PORT, dport: int = RGOOSE_PORT, ident: int = 0,
              src_ip: bytes = SRC_IP, dst_ip: bytes = DST_IP,
              src_mac: bytes = SRC_MAC, dst_mac: bytes = DST_MAC) -> bytes:
    """Ethernet II + IPv4 (no options, DF) + UDP around ``payload``, checksums filled in."""
    udp_len = 8 + len(payload)
    pseudo = src_ip + dst_ip + struct.pack("!BBH", 0, 17, udp_len)
    udp_hdr = struct.pack("!HHHH", sport, dport, udp_len, 0)
    uc = _csum(pseudo + udp_hdr + payload) or 0xFFFF
    udp_hdr = struct.pack("!HHHH", sport, dport, udp_len, uc)
    total = 20 + udp_len
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, ident & 0xFFFF, 0x4000, 64, 17, 0, src_ip, dst_ip)
    ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
    return dst_mac + src_mac + struct.pack("!H", ETHERTYPE_IPV4) + ip + udp_hdr + payload


def write_pcap(path, packets: Iterable[Packet | bytes], snaplen: int = 65535) -> int:
    n = 0
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, LINKTYPE_ETHERNET))
        t0 = 1_700_000_000.0
        for i, p in enumerate(packets):
            if isinstance(p, (bytes, bytearray)):
                p = Packet(t0 + i * 0.001, bytes(p))
            sec = int(p.ts)
            usec = int(round((p.ts - sec) * 1e6))
            if usec >= 1_000_000:
                sec, usec = sec + 1, usec - 1_000_000
            f.write(struct.pack("<IIII", sec, usec, len(p.data), len(p.data)))
            f.write(p.data)
            n += 1
    return n


def write_udp_pcap(path, payloads: Iterable[bytes], timestamps: Iterable[float] | None = None) -> int:
    payloads = list(payloads)
    ts = list(timestamps) if timestamps is not None else [1_700_000_000.0 + i * 0.001 for i in range(len(payloads))]
    return write_pcap(path, [Packet(t, udp_frame(p, ident=i + 1)) for i, (t, p) in enumerate(zip(ts, payloads))])


def read_packets(path) -> list[Packet]:
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 4:
        raise ValueError(f"{path}: too short for a capture file")
    magic = data[:4]
    if magic == b"\x0a\x0d\x0d\x0a":
        return list(_read_pcapng(data))
    return list(_read_pcap(data, path))


def _read_pcap(data: bytes, path) -> Iterator[Packet]:
    m = struct.unpack("<I", data[:4])[0]
    if m in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif m in (0xD4C3B2A1, 0x4D3CB2A1):
        e = ">"
        m = struct.unpack(">I", data[:4])[0]
    else:
        raise ValueError(f"{path}: not a pcap/pcapng file (magic {data[:4].hex()})")
    div = 1e9 if m == 0xA1B23C4D else 1e6
    linktype = struct.unpack(e + "I", data[20:24])[0] & 0x0FFFFFFF
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        yield Packet(sec + frac / div, data[off:off + incl], linktype)
        off += incl


def _read_pcapng(data: bytes) -> Iterator[Packet]:
    off = 0
    e = "<"
    ifaces: list[tuple[int, float]] = []
    while off + 12 <= len(data):
        btype = struct.unpack(e + "I", data[off:off + 4])[0]
        if btype == 0x0A0D0D0A:
            bom = data[off + 8:off + 12]
            e = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">"
            ifaces = []
        btype, blen = struct.unpack(e + "II", data[off:off + 8])
        if blen < 12:
            raise ValueError("pcapng: bad block length")
        body = data[off + 8:off + blen - 4]
        if btype == 1:  # IDB
            linktype = struct.unpack(e + "H", body[:2])[0]
            res = 1e6
            opts = body[8:]
            o = 0
            while o + 4 <= len(opts):
                code, olen = struct.unpack(e + "HH", opts[o:o + 4])
                if code == 0:
                    break
                if code == 9 and olen >= 1:
                    v = opts[o + 4]
                    res = float(2 ** (v & 0x7F)) if v & 0x80 else float(10 ** v)
                o += 4 + ((olen + 3) & ~3)
            ifaces.append((linktype, res))
        elif btype == 6:  # EPB
            iface, th, tl, cap, _orig = struct.unpack(e + "IIIII", body[:20])
            lt, res = ifaces[iface] if iface < len(ifaces) else (LINKTYPE_ETHERNET, 1e6)
            yield Packet(((th << 32) | tl) / res, body[20:20 + cap], lt)
        elif btype == 3:  # SPB
            orig = struct.unpack(e + "I", body[:4])[0]
            lt = ifaces[0][0] if ifaces else LINKTYPE_ETHERNET
            yield Packet(0.0, body[4:4 + orig], lt)
        off += blen


@dataclasses.dataclass
class UdpView:
    """Where the UDP payload sits inside an Ethernet frame."""
    payload_offset: int
    payload: bytes
    sport: int
    dport: int


def udp_payload(frame: bytes) -> UdpView | None:
    """Locate the UDP payload of an Ethernet(/802.1Q)/IPv4/UDP frame, else None."""
    off = 12
    if len(frame) < 14:
        return None
    et = struct.unpack("!H", frame[off:off + 2])[0]
    off += 2
    while et == ETHERTYPE_VLAN and len(frame) >= off + 4:
        et = struct.unpack("!H", frame[off + 2:off + 4])[0]
        off += 4
    if et != ETHERTYPE_IPV4 or len(frame) < off + 20:
        return None
    ihl = (frame[off] & 0x0F) * 4
    if frame[off + 9] != 17:
        return None
    total = struct.unpack("!H", frame[off + 2:off + 4])[0]
    u = off + ihl
    if len(frame) < u + 8:
        return None
    sport, dport, ulen = struct.unpack("!HHH", frame[u:u + 6])
    end = min(len(frame), u + ulen, off + total)
    return UdpView(u + 8, frame[u + 8:end], sport, dport)


def rgoose_payloads(path) -> list[bytes]:
    """UDP payloads of a capture that look like 90-5 session PDUs (start 01 40)."""
    out = []
    for p in read_packets(path):
        v = udp_payload(p.data)
        if v is not None and v.payload[:2] == b"\x01\x40":
            out.append(v.payload)
    return out
