//! Fixture captures the tests write themselves (no capture file is committed).
#![allow(dead_code, unreachable_pub)]

/// Internet checksum (RFC 1071).
pub fn csum(data: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in data.chunks(2) {
        s += u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

pub const SRC_MAC: [u8; 6] = [0x00, 0x30, 0xa7, 0x11, 0x22, 0x33];
pub const GOOSE_DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];

/// A minimal layer-2 GOOSE frame body after the EtherType (APPID, Length, reserved, APDU).
pub fn goose_body() -> Vec<u8> {
    let apdu = [0x61, 0x03, 0x80, 0x01, 0x41];
    let mut b = vec![0x00, 0x01];
    b.extend(((8 + apdu.len()) as u16).to_be_bytes());
    b.extend([0, 0, 0, 0]);
    b.extend(apdu);
    b
}

pub fn ethernet(dst: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend(SRC_MAC);
    f.extend(ethertype.to_be_bytes());
    f.extend(payload);
    f
}

/// A UDP datagram (header + payload) with checksum 0 (IPv4 allows it).
pub fn udp(src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = src_port.to_be_bytes().to_vec();
    u.extend(dst_port.to_be_bytes());
    u.extend(((8 + payload.len()) as u16).to_be_bytes());
    u.extend([0, 0]);
    u.extend(payload);
    u
}

/// An IPv4 header + data, with flags/offset (offset in octets) and identification.
pub fn ipv4(id: u16, more: bool, offset: usize, protocol: u8, data: &[u8]) -> Vec<u8> {
    let mut h = vec![0x45, 0];
    h.extend(((20 + data.len()) as u16).to_be_bytes());
    h.extend(id.to_be_bytes());
    let ff = ((offset / 8) as u16) | if more { 0x2000 } else { 0 };
    h.extend(ff.to_be_bytes());
    h.extend([64, protocol, 0, 0, 10, 0, 0, 1, 239, 0, 0, 1]);
    let c = csum(&h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend(data);
    h
}

/// IPv4 fragments (Ethernet frames) of `datagram` (a UDP header + payload), `size` octets each.
pub fn ipv4_fragments(id: u16, datagram: &[u8], size: usize) -> Vec<Vec<u8>> {
    assert_eq!(size % 8, 0);
    let mut out = Vec::new();
    let mut at = 0;
    while at < datagram.len() {
        let end = (at + size).min(datagram.len());
        let more = end < datagram.len();
        out.push(ethernet(
            [0x01, 0, 0x5e, 0, 0, 1],
            0x0800,
            &ipv4(id, more, at, 17, &datagram[at..end]),
        ));
        at = end;
    }
    out
}

/// An IPv6 packet whose payload is `payload` after a Fragment header.
pub fn ipv6_fragment(id: u32, more: bool, offset: usize, data: &[u8]) -> Vec<u8> {
    let mut h = vec![0x60, 0, 0, 0];
    h.extend(((8 + data.len()) as u16).to_be_bytes());
    h.extend([44, 64]);
    h.extend([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    h.extend([0xff, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x66]);
    h.extend([17, 0]);
    h.extend(((offset as u16) | more as u16).to_be_bytes());
    h.extend(id.to_be_bytes());
    h.extend(data);
    ethernet([0x33, 0x33, 0, 0, 0, 0x66], 0x86dd, &h)
}

pub fn ipv6_fragments(id: u32, datagram: &[u8], size: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < datagram.len() {
        let end = (at + size).min(datagram.len());
        out.push(ipv6_fragment(
            id,
            end < datagram.len(),
            at,
            &datagram[at..end],
        ));
        at = end;
    }
    out
}

/// A classic pcap file (little-endian, microseconds unless `nanos`).
pub fn pcap(link: u32, nanos: bool, packets: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    let mut f = magic.to_le_bytes().to_vec();
    f.extend(2u16.to_le_bytes());
    f.extend(4u16.to_le_bytes());
    f.extend([0; 8]);
    f.extend(262144u32.to_le_bytes());
    f.extend(link.to_le_bytes());
    for (ts_ns, d) in packets {
        f.extend(((ts_ns / 1_000_000_000) as u32).to_le_bytes());
        let sub = ts_ns % 1_000_000_000;
        f.extend((if nanos { sub } else { sub / 1000 } as u32).to_le_bytes());
        f.extend((d.len() as u32).to_le_bytes());
        f.extend((d.len() as u32).to_le_bytes());
        f.extend(d);
    }
    f
}

fn block(big: bool, t: u32, body: &[u8]) -> Vec<u8> {
    let u = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut body = body.to_vec();
    while !body.len().is_multiple_of(4) {
        body.push(0);
    }
    let len = 12 + body.len() as u32;
    let mut b = u(t).to_vec();
    b.extend(u(len));
    b.extend(body);
    b.extend(u(len));
    b
}

/// A pcapng section: interfaces (link type, if_tsresol option) and packets (interface,
/// timestamp in the interface's units, data).
pub fn pcapng(big: bool, ifaces: &[(u16, Option<u8>)], packets: &[(u32, u64, Vec<u8>)]) -> Vec<u8> {
    let u32b = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u16b = |v: u16| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut shb = u32b(0x1a2b_3c4d).to_vec();
    shb.extend(u16b(1));
    shb.extend(u16b(0));
    shb.extend([0xff; 8]);
    let mut f = block(big, 0x0a0d_0d0a, &shb);
    for (link, tsresol) in ifaces {
        let mut b = u16b(*link).to_vec();
        b.extend([0, 0]);
        b.extend(u32b(0));
        if let Some(r) = tsresol {
            b.extend(u16b(9));
            b.extend(u16b(1));
            b.extend([*r, 0, 0, 0]);
        }
        b.extend([0, 0, 0, 0]);
        f.extend(block(big, 1, &b));
    }
    for (iface, ts, data) in packets {
        let mut b = u32b(*iface).to_vec();
        b.extend(u32b((ts >> 32) as u32));
        b.extend(u32b(*ts as u32));
        b.extend(u32b(data.len() as u32));
        b.extend(u32b(data.len() as u32));
        b.extend(data);
        f.extend(block(big, 6, &b));
    }
    f
}

/// A Linux cooked (SLL, link type 113) packet of `ethertype`.
pub fn sll(pkttype: u16, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut p = pkttype.to_be_bytes().to_vec();
    p.extend(1u16.to_be_bytes());
    p.extend(6u16.to_be_bytes());
    p.extend(SRC_MAC);
    p.extend([0, 0]);
    p.extend(ethertype.to_be_bytes());
    p.extend(payload);
    p
}

/// A Linux cooked v2 (SLL2, link type 276) packet of `ethertype`.
pub fn sll2(pkttype: u8, ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut p = ethertype.to_be_bytes().to_vec();
    p.extend([0, 0]);
    p.extend(3u32.to_be_bytes());
    p.extend(1u16.to_be_bytes());
    p.extend([pkttype, 6]);
    p.extend(SRC_MAC);
    p.extend([0, 0]);
    p.extend(payload);
    p
}
