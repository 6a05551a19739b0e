//! MMS associations made here: one plain (TPKT/COTP on port 102), one TLS 1.2 handshake that
//! meets IEC 62351-3 (ECDHE suite, RSA-2048 SHA-256 certificate, renegotiation_info, a client
//! certificate) and one that does not (RSA key transport with SHA-1, RSA-1024 signed with
//! SHA-1, no renegotiation_info, no client certificate, a renegotiation; the suite is in the IEC
//! profile, deprecated). The findings are the
//! TLS survey's verdicts on what was seen, each at the ServerHello's frame, and nothing else.

use gander_audit::{Audit, AuditOptions, Auditor};
use gander_testkit::tcp_tls::{
    certificate, client_hello, handshake as hs, server_hello, tcp_frame as tcp,
    tls_record as record,
};
use openssl::asn1::Asn1Time;
use openssl::bn::BigNum;
use openssl::hash::MessageDigest;
use openssl::pkey::PKey;
use openssl::rsa::Rsa;
use openssl::x509::{X509Builder, X509NameBuilder};
use std::time::{SystemTime, UNIX_EPOCH};

fn cert(bits: u32, md: MessageDigest, cn: &str) -> Vec<u8> {
    let key = PKey::from_rsa(Rsa::generate(bits).unwrap()).unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", cn).unwrap();
    let name = name.build();
    let mut b = X509Builder::new().unwrap();
    b.set_version(2).unwrap();
    b.set_serial_number(&BigNum::from_u32(7).unwrap().to_asn1_integer().unwrap())
        .unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    b.set_not_before(&Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::days_from_now(30).unwrap())
        .unwrap();
    b.sign(&key, md).unwrap();
    b.build().to_der().unwrap()
}

/// Frames of one association, numbered on in the capture.
struct Conn {
    c: ([u8; 4], u16),
    s: ([u8; 4], u16),
    cseq: u32,
    sseq: u32,
}

impl Conn {
    fn new(c: ([u8; 4], u16), s: ([u8; 4], u16)) -> Conn {
        Conn {
            c,
            s,
            cseq: 1000,
            sseq: 5000,
        }
    }
    fn syn(&mut self, cap: &mut Vec<Vec<u8>>) {
        cap.push(tcp(self.c, self.s, self.cseq, 0x02, &[]));
        cap.push(tcp(self.s, self.c, self.sseq, 0x12, &[]));
        self.cseq += 1;
        self.sseq += 1;
    }
    fn client(&mut self, cap: &mut Vec<Vec<u8>>, data: &[u8]) -> u64 {
        cap.push(tcp(self.c, self.s, self.cseq, 0x18, data));
        self.cseq += data.len() as u32;
        cap.len() as u64
    }
    fn server(&mut self, cap: &mut Vec<Vec<u8>>, data: &[u8]) -> u64 {
        cap.push(tcp(self.s, self.c, self.sseq, 0x18, data));
        self.sseq += data.len() as u32;
        cap.len() as u64
    }
}

fn audit(cap: &[Vec<u8>]) -> Audit {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut a = Auditor::new(AuditOptions::default(), None);
    for (i, f) in cap.iter().enumerate() {
        a.feed(i as u64 + 1, now + i as u64 * 1_000_000, f);
    }
    a.finish()
}

#[test]
fn plain_and_tls_associations_are_judged_by_the_survey_table() {
    let good_cert = cert(2048, MessageDigest::sha256(), "ied-good");
    let bad_cert = cert(1024, MessageDigest::sha1(), "ied-bad");
    let client_cert = cert(2048, MessageDigest::sha256(), "scada");
    let mut cap = Vec::new();
    // Plain MMS: a COTP connection request in TPKT.
    let mut p = Conn::new(([10, 0, 0, 2], 40000), ([10, 0, 0, 1], 102));
    p.syn(&mut cap);
    let plain = p.client(
        &mut cap,
        &[
            3, 0, 0, 22, 17, 0xe0, 0, 0, 0, 1, 0, 0xc1, 2, 0, 1, 0xc2, 2, 0, 1, 0xc0, 1, 10,
        ],
    );
    // Good TLS 1.2 on 3782.
    let mut g = Conn::new(([10, 0, 0, 3], 40001), ([10, 0, 0, 1], 3782));
    g.syn(&mut cap);
    g.client(&mut cap, &record(22, &client_hello(&[0xc02f, 0x002f])));
    let mut flight = server_hello(0xc02f, true);
    flight.extend(certificate(&[&good_cert]));
    flight.extend(hs(12, &[3, 0, 23, 65]));
    flight.extend(hs(13, &[1, 1, 0, 4, 4, 1, 8, 4, 0, 0]));
    flight.extend(hs(14, &[]));
    let rec = record(22, &flight);
    // The server's flight split over two segments.
    let (a, b) = rec.split_at(100);
    g.server(&mut cap, a);
    g.server(&mut cap, b);
    let mut cf = record(22, &certificate(&[&client_cert]));
    cf.extend(record(20, &[1]));
    cf.extend(record(22, &[0xaa; 40]));
    g.client(&mut cap, &cf);
    let mut sf = record(20, &[1]);
    sf.extend(record(22, &[0xbb; 40]));
    g.server(&mut cap, &sf);
    g.client(&mut cap, &record(23, &[0xcc; 64]));
    g.server(&mut cap, &record(23, &[0xdd; 64]));
    // Bad TLS 1.2: RSA key transport with SHA-1, RSA-1024/SHA-1, no renegotiation_info, no
    // client certificate, then a renegotiation.
    let mut x = Conn::new(([10, 0, 0, 4], 40002), ([10, 0, 0, 1], 3782));
    x.syn(&mut cap);
    x.client(&mut cap, &record(22, &client_hello(&[0x002f])));
    let mut flight = server_hello(0x002f, false);
    flight.extend(certificate(&[&bad_cert]));
    flight.extend(hs(14, &[]));
    let bad_hello = x.server(&mut cap, &record(22, &flight));
    let mut cf = record(22, &hs(16, &[0, 2, 0xee, 0xee]));
    cf.extend(record(20, &[1]));
    cf.extend(record(22, &[0xaa; 40]));
    x.client(&mut cap, &cf);
    let mut sf = record(20, &[1]);
    sf.extend(record(22, &[0xbb; 40]));
    x.server(&mut cap, &sf);
    x.client(&mut cap, &record(23, &[0xcc; 64]));
    let reneg = x.client(&mut cap, &record(22, &[0x99; 60]));

    let a = audit(&cap);
    assert_eq!(a.associations.len(), 3);
    let (ap, ag, ax) = (&a.associations[0], &a.associations[1], &a.associations[2]);
    assert_eq!(
        (ap.transport, ag.transport, ax.transport),
        ("plain", "tls", "tls")
    );
    let tg = ag.tls.as_ref().unwrap();
    assert_eq!(tg.version, "TLS 1.2");
    assert_eq!(tg.suite, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
    assert_eq!(tg.group.as_deref(), Some("secp256r1"));
    assert_eq!(
        (tg.cert_requested, tg.client_cert_sent, tg.established),
        (true, Some(true), true)
    );
    assert!(tg.chain[0].contains("ied-good"), "{:?}", tg.chain);
    assert!(
        tg.verdicts.iter().all(|v| v.1 == "PASS" || v.1 == "INFO"),
        "{:?}",
        tg.verdicts
    );
    let tx = ax.tls.as_ref().unwrap();
    assert_eq!(tx.suite, "TLS_RSA_WITH_AES_128_CBC_SHA");
    assert_eq!((tx.client_cert_sent, tx.renegotiations), (None, 1));

    let mut got: Vec<(String, String, Vec<u64>)> = a
        .findings
        .iter()
        .map(|f| {
            (
                f.code.clone(),
                f.stream.clone().unwrap_or_default(),
                f.frames.clone(),
            )
        })
        .collect();
    got.sort();
    let mut want: Vec<(String, String, Vec<u64>)> = [
        ("mms-plain", &ap.uid, plain),
        ("tls-no-sha1-suites", &ax.uid, bad_hello),
        ("tls-client-cert-required", &ax.uid, bad_hello),
        ("tls-secure-renegotiation", &ax.uid, bad_hello),
        ("tls-key-size", &ax.uid, bad_hello),
        ("tls-signature-hash", &ax.uid, bad_hello),
        ("tls-renegotiation", &ax.uid, reneg),
    ]
    .into_iter()
    .map(|(c, u, n)| (c.to_string(), u.clone(), vec![n]))
    .collect();
    want.sort();
    assert_eq!(got, want, "{:#?}", a.findings);
    let sev = |c: &str| {
        a.findings
            .iter()
            .find(|f| f.code == c)
            .unwrap()
            .severity
            .word()
    };
    assert_eq!(sev("tls-key-size"), "high");
    assert_eq!(sev("tls-client-cert-required"), "high");
    assert_eq!(sev("mms-plain"), "medium");
    // The logs of both kinds fit their schema.
    for (log, lines) in gander_audit::zeek::logs(&a) {
        for l in lines {
            gander_audit::zeek::check_line(log, &l).unwrap_or_else(|e| panic!("{log}: {e}: {l}"));
        }
    }
    assert_eq!(a.summary.kinds.get("mms"), Some(&(cap.len() as u64)));
}
