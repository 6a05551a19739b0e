//! `gander audit`'s frame path on arbitrary bytes: classification, the cleartext reads, the
//! GOOSE/SV checks, TCP following and the passive TLS handshake reader (`tls_wire`), and the
//! renderings, and frames cut by the capture (an odd length) put into their streams. Input:
//! frames separated by a two-octet length; the TLS parsers also see the whole input. Nothing
//! may panic.
#![no_main]

use gander_audit::{tls_wire, AuditOptions, Auditor};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = tls_wire::ClientHello::parse(data);
    let _ = tls_wire::ServerHello::parse(data);
    let _ = tls_wire::certificates(data);
    let _ = tls_wire::record(data);
    let _ = tls_wire::handshake(data);
    let mut a = Auditor::new(AuditOptions::default(), None);
    let mut rest = data;
    let mut no = 0u64;
    while rest.len() >= 2 {
        let n = usize::from(u16::from_be_bytes([rest[0], rest[1]])).min(rest.len() - 2);
        no += 1;
        let frame = &rest[2..2 + n];
        // An odd length prefix marks the frame as cut by the capture (its captured start),
        // so the cut-frame path (`cut_stream`) sees the same streams as whole frames.
        if rest[1] & 1 == 1 {
            a.cut_by_capture(no, no * 1_000_000, frame, n as u32, n as u32 + 100);
        } else {
            a.feed(no, no * 1_000_000, frame);
        }
        rest = &rest[2 + n..];
    }
    let audit = a.finish();
    let _ = gander_audit::zeek::logs(&audit);
    let _ = gander_audit::html::render(&audit, "fuzz");
});
