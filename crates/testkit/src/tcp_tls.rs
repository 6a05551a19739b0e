//! Ethernet/IPv4/TCP frames and TLS 1.2 records for the audit's MMS tests and benchmark: what
//! a capture of an MMS association (plain on port 102, TLS on 3782) holds.

/// An Ethernet/IPv4/TCP frame from `src` to `dst` (address, port) with sequence number `seq`,
/// TCP `flags` (0x02 SYN, 0x10 ACK, 0x18 PSH+ACK) and `payload`; the IPv4 header checksum is
/// correct, the TCP checksum left 0 (as a capture on the sending host shows it).
pub fn tcp_frame(
    src: ([u8; 4], u16),
    dst: ([u8; 4], u16),
    seq: u32,
    flags: u8,
    payload: &[u8],
) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00];
    let total = (20 + 20 + payload.len()) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend(total.to_be_bytes());
    ip.extend([0, 0, 0x40, 0, 64, 6, 0, 0]);
    ip.extend(src.0);
    ip.extend(dst.0);
    let c = gander_wire::ip::checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend(ip);
    f.extend(src.1.to_be_bytes());
    f.extend(dst.1.to_be_bytes());
    f.extend(seq.to_be_bytes());
    f.extend(0u32.to_be_bytes());
    f.extend([0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    f.extend(payload);
    f
}

/// A TLS 1.2 record of content type `ct` (20 ChangeCipherSpec, 22 handshake, 23 data).
pub fn tls_record(ct: u8, body: &[u8]) -> Vec<u8> {
    let mut r = vec![ct, 3, 3];
    r.extend((body.len() as u16).to_be_bytes());
    r.extend(body);
    r
}

/// A handshake message of type `ty`.
pub fn handshake(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty];
    m.extend(&(body.len() as u32).to_be_bytes()[1..]);
    m.extend(body);
    m
}

/// A TLS 1.2 ClientHello offering `suites`, with renegotiation_info.
pub fn client_hello(suites: &[u16]) -> Vec<u8> {
    let mut b = vec![3, 3];
    b.extend([1u8; 32]);
    b.push(0);
    b.extend(((suites.len() * 2) as u16).to_be_bytes());
    for s in suites {
        b.extend(s.to_be_bytes());
    }
    b.extend([1, 0, 0, 5, 0xff, 0x01, 0, 1, 0]);
    handshake(1, &b)
}

/// A TLS 1.2 ServerHello choosing `suite`, with renegotiation_info if `reneg_info`.
pub fn server_hello(suite: u16, reneg_info: bool) -> Vec<u8> {
    let mut b = vec![3, 3];
    b.extend([2u8; 32]);
    b.push(0);
    b.extend(suite.to_be_bytes());
    b.push(0);
    if reneg_info {
        b.extend([0, 5, 0xff, 0x01, 0, 1, 0]);
    }
    handshake(2, &b)
}

/// A Certificate message carrying `chain` (DER, leaf first).
pub fn certificate(chain: &[&[u8]]) -> Vec<u8> {
    let mut list: Vec<u8> = Vec::new();
    for c in chain {
        list.extend(&(c.len() as u32).to_be_bytes()[1..]);
        list.extend(*c);
    }
    let mut b = (list.len() as u32).to_be_bytes()[1..].to_vec();
    b.extend(list);
    handshake(11, &b)
}
