//! `gander audit --ike-keylog`: the key log parser on any text, and GDOI datagrams on UDP 848
//! read by the decrypting tracker (`gdoi_decrypt`) with keys for the cookies they carry. Input:
//! the first octet picks how many datagrams follow, each after a two-octet length; the key
//! log names the initiator cookie of every datagram with a key made of its own octets, so the
//! phase-1 IV chain, GROUPKEY-PULL and GROUPKEY-PUSH reading all see the junk. Nothing may
//! panic.
#![no_main]

use gander_audit::ike_keylog::IkeKeyLog;
use gander_audit::{AuditOptions, Auditor};
use libfuzzer_sys::fuzz_target;

/// Ethernet / IPv4 (header checksum set) / UDP 848 -> 848 around `payload`.
fn frame(src: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, src, 0x08, 0x00];
    let total = (28 + payload.len()).min(usize::from(u16::MAX)) as u16;
    let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, src, 10, 0, 0, 1];
    ip[2..4].copy_from_slice(&total.to_be_bytes());
    let mut sum = 0u32;
    for c in ip.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f.extend(ip);
    f.extend(848u16.to_be_bytes());
    f.extend(848u16.to_be_bytes());
    f.extend((total - 20).to_be_bytes());
    f.extend([0, 0]);
    f.extend_from_slice(payload);
    f
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = IkeKeyLog::parse(text);
    }
    let mut log = IkeKeyLog::default();
    let mut msgs = Vec::new();
    let mut rest = data;
    while rest.len() >= 2 {
        let n = usize::from(u16::from_be_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        let m = &rest[2..2 + n];
        if let Some(c) = m.get(..8) {
            let mut cookie = [0u8; 8];
            cookie.copy_from_slice(c);
            let key: Vec<u8> = c.iter().chain(c).copied().collect();
            log.insert(cookie, &key);
        }
        msgs.push(m);
        rest = &rest[2 + n..];
    }
    let mut a = Auditor::new(AuditOptions::default(), None);
    a.set_ike_keylog(log);
    for (i, m) in msgs.iter().enumerate() {
        a.feed(i as u64 + 1, i as u64 * 1_000_000, &frame(2 + (i % 2) as u8, m));
    }
    let audit = a.finish();
    let _ = gander_audit::zeek::logs(&audit);
    let _ = gander_audit::html::render(&audit, "fuzz");
});
