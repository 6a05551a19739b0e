//! Sans-I/O ClientHello builder (RFC 5246 §7.4.1.2, RFC 8446 §4.1.2, RFC 6101 §5.6.1.2 for
//! SSL 3.0) and the SSL 2.0 CLIENT-HELLO (RFC 6101 Appendix E.1, the SSL 2.0 draft §2.6).
//!
//! The scanner needs ClientHellos no TLS library sends: any code point of the registry, one
//! named group alone, a compression method, TLS_FALLBACK_SCSV, an empty key_share. A server's
//! answer to the ClientHello alone tells what it accepts, so no key is ever computed.
use super::parse::{ParseError, Reader};
use super::ProtocolVersion;

/// Handshake type client_hello (RFC 8446 §4).
pub const CLIENT_HELLO: u8 = 1;
/// Record content type handshake (RFC 8446 §5.1).
pub const CT_HANDSHAKE: u8 = 22;

/// Extension code points (IANA "TLS ExtensionType Values").
pub mod ext {
    /// server_name (RFC 6066 §3).
    pub const SERVER_NAME: u16 = 0;
    /// status_request, OCSP stapling (RFC 6066 §8).
    pub const STATUS_REQUEST: u16 = 5;
    /// supported_groups (RFC 8422 §5.1.1, RFC 8446 §4.2.7).
    pub const SUPPORTED_GROUPS: u16 = 10;
    /// ec_point_formats (RFC 8422 §5.1.2).
    pub const EC_POINT_FORMATS: u16 = 11;
    /// signature_algorithms (RFC 5246 §7.4.1.4.1, RFC 8446 §4.2.3).
    pub const SIGNATURE_ALGORITHMS: u16 = 13;
    /// heartbeat (RFC 6520 §2).
    pub const HEARTBEAT: u16 = 15;
    /// padding (RFC 7685).
    pub const PADDING: u16 = 21;
    /// extended_master_secret (RFC 7627 §5.1).
    pub const EXTENDED_MASTER_SECRET: u16 = 23;
    /// session_ticket (RFC 5077 §3.2).
    pub const SESSION_TICKET: u16 = 35;
    /// early_data (RFC 8446 §4.2.10).
    pub const EARLY_DATA: u16 = 42;
    /// supported_versions (RFC 8446 §4.2.1).
    pub const SUPPORTED_VERSIONS: u16 = 43;
    /// key_share (RFC 8446 §4.2.8).
    pub const KEY_SHARE: u16 = 51;
    /// renegotiation_info (RFC 5746 §3.2).
    pub const RENEGOTIATION_INFO: u16 = 0xFF01;
}

/// TLS_EMPTY_RENEGOTIATION_INFO_SCSV (RFC 5746 §3.3): asks for RFC 5746 without the extension.
pub const SCSV_RENEGOTIATION: u16 = 0x00FF;
/// TLS_FALLBACK_SCSV (RFC 7507 §2).
pub const SCSV_FALLBACK: u16 = 0x5600;

/// Signature schemes offered (RFC 8446 §4.2.3 and the TLS 1.2 hash/signature pairs of RFC
/// 5246 §7.4.1.4.1), wide on purpose: a server must find one for its certificate.
const SIG_ALGS: &[u16] = &[
    0x0403, 0x0503, 0x0603, 0x0807, 0x0808, 0x0804, 0x0805, 0x0806, 0x0809, 0x080A, 0x080B, 0x081A,
    0x081B, 0x081C, 0x0401, 0x0501, 0x0601, 0x0303, 0x0301, 0x0302, 0x0402, 0x0502, 0x0602, 0x0203,
    0x0201, 0x0202, 0x0101, 0x0102,
];

/// A ClientHello to emit. Everything a scan varies is a field; the rest follows the version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientHello {
    /// The version asked for; for TLS 1.3, legacy_version 0x0303 and supported_versions.
    pub version: ProtocolVersion,
    /// Cipher suites in order of preference (signalling values included as given).
    pub suites: Vec<u16>,
    /// supported_groups (TLS 1.0 and later; none for SSL 3.0).
    pub groups: Vec<u16>,
    /// Compression methods; `[0]` (null) normally, `[1, 0]` to ask for DEFLATE (RFC 3749).
    pub compression: Vec<u8>,
    /// server_name, when the target was named by a host name (RFC 6066 §3: no IP literals).
    pub server_name: Option<String>,
    /// ClientHello.random.
    pub random: [u8; 32],
    /// Ask for extended_master_secret, status_request, heartbeat and session_ticket (TLS 1.0+).
    pub probe_extensions: bool,
}

impl ClientHello {
    /// A ClientHello of `version` with `suites` and `groups`, null compression, the probe
    /// extensions on.
    pub fn new(version: ProtocolVersion, suites: Vec<u16>, groups: Vec<u16>) -> ClientHello {
        ClientHello {
            version,
            suites,
            groups,
            compression: vec![0],
            server_name: None,
            random: [0x5A; 32],
            probe_extensions: true,
        }
    }

    /// The extensions in emission order, `(type, body)`.
    fn extensions(&self) -> Vec<(u16, Vec<u8>)> {
        let mut e = Vec::new();
        if self.version == ProtocolVersion::Ssl3 || self.version == ProtocolVersion::Ssl2 {
            return e;
        }
        if let Some(name) = &self.server_name {
            let n = name.as_bytes();
            let mut b = Vec::with_capacity(n.len() + 5);
            put_u16(&mut b, (n.len() + 3) as u16);
            b.push(0); // host_name
            put_u16(&mut b, n.len() as u16);
            b.extend_from_slice(n);
            e.push((ext::SERVER_NAME, b));
        }
        if !self.groups.is_empty() {
            let mut b = Vec::new();
            put_u16(&mut b, (self.groups.len() * 2) as u16);
            self.groups.iter().for_each(|g| put_u16(&mut b, *g));
            e.push((ext::SUPPORTED_GROUPS, b));
            // uncompressed, ansiX962_compressed_prime, ansiX962_compressed_char2 (RFC 8422 §5.1.2)
            e.push((ext::EC_POINT_FORMATS, vec![3, 0, 1, 2]));
        }
        if self.version >= ProtocolVersion::Tls12 {
            let mut b = Vec::new();
            put_u16(&mut b, (SIG_ALGS.len() * 2) as u16);
            SIG_ALGS.iter().for_each(|s| put_u16(&mut b, *s));
            e.push((ext::SIGNATURE_ALGORITHMS, b));
        }
        if self.probe_extensions {
            // status_request: ocsp, no responder ids, no request extensions (RFC 6066 §8).
            e.push((ext::STATUS_REQUEST, vec![1, 0, 0, 0, 0]));
            e.push((ext::EXTENDED_MASTER_SECRET, Vec::new()));
            e.push((ext::SESSION_TICKET, Vec::new()));
            // peer_allowed_to_send (RFC 6520 §2).
            e.push((ext::HEARTBEAT, vec![1]));
        }
        if self.version == ProtocolVersion::Tls13 {
            e.push((ext::SUPPORTED_VERSIONS, vec![2, 0x03, 0x04]));
            // An empty client_shares: a server that supports one of the groups answers with a
            // HelloRetryRequest naming it (RFC 8446 §4.1.4, §4.2.8), without any key computed.
            e.push((ext::KEY_SHARE, vec![0, 0]));
            // psk_key_exchange_modes psk_dhe_ke (RFC 8446 §4.2.9): some servers want it.
            e.push((45, vec![1, 1]));
        }
        e
    }

    /// The ClientHello handshake message body (without the 4-octet handshake header).
    fn body(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(64 + self.suites.len() * 2);
        put_u16(&mut b, self.version.client_version());
        b.extend_from_slice(&self.random);
        b.push(0); // empty session id
        put_u16(&mut b, (self.suites.len() * 2) as u16);
        self.suites.iter().for_each(|s| put_u16(&mut b, *s));
        b.push(self.compression.len() as u8);
        b.extend_from_slice(&self.compression);
        let exts = self.extensions();
        // SSL 3.0 ClientHellos carry no extensions (RFC 6101 predates them).
        if self.version <= ProtocolVersion::Ssl3 {
            return b;
        }
        let mut eb = Vec::new();
        for (t, body) in &exts {
            put_u16(&mut eb, *t);
            put_u16(&mut eb, body.len() as u16);
            eb.extend_from_slice(body);
        }
        // Some TLS stacks hang on a ClientHello of 256..=511 octets (the reason for RFC 7685):
        // pad it to 512.
        let len = 4 + b.len() + 2 + eb.len();
        if (256..512).contains(&len) {
            let pad = (512 - len).saturating_sub(4);
            put_u16(&mut eb, ext::PADDING);
            put_u16(&mut eb, pad as u16);
            eb.resize(eb.len() + pad, 0);
        }
        put_u16(&mut b, eb.len() as u16);
        b.extend_from_slice(&eb);
        b
    }

    /// The ClientHello in one handshake record, ready to send.
    pub fn to_record(&self) -> Vec<u8> {
        let body = self.body();
        let mut r = Vec::with_capacity(body.len() + 9);
        r.push(CT_HANDSHAKE);
        // Record version: 0x0300 for SSL 3.0, 0x0301 otherwise, what servers expect of a
        // first ClientHello (RFC 8446 §5.1, RFC 5246 Appendix E.1).
        put_u16(
            &mut r,
            if self.version == ProtocolVersion::Ssl3 {
                0x0300
            } else {
                0x0301
            },
        );
        put_u16(&mut r, (body.len() + 4) as u16);
        r.push(CLIENT_HELLO);
        put_u24(&mut r, body.len() as u32);
        r.extend_from_slice(&body);
        r
    }
}

/// What [`parse_client_hello`] reads back (for tests and the fuzz target).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedClientHello {
    /// client_version.
    pub client_version: u16,
    /// Cipher suites.
    pub suites: Vec<u16>,
    /// Compression methods.
    pub compression: Vec<u8>,
    /// supported_groups, if present.
    pub groups: Vec<u16>,
    /// Extension types in order.
    pub extensions: Vec<u16>,
    /// supported_versions, if present.
    pub supported_versions: Vec<u16>,
}

/// Reads a ClientHello record as [`ClientHello::to_record`] emits it (one record).
pub fn parse_client_hello(rec: &[u8]) -> Result<ParsedClientHello, ParseError> {
    let mut r = Reader::new(rec, "ClientHello record");
    if r.u8()? != CT_HANDSHAKE {
        return Err(ParseError::Malformed("ClientHello record type"));
    }
    r.u16()?;
    let mut r = Reader::new(r.vec16()?, "ClientHello");
    if r.u8()? != CLIENT_HELLO {
        return Err(ParseError::Malformed("ClientHello handshake type"));
    }
    let mut b = Reader::new(r.vec24()?, "ClientHello body");
    let client_version = b.u16()?;
    b.take(32)?;
    b.vec8()?;
    let suites = u16s(b.vec16()?)?;
    let compression = b.vec8()?.to_vec();
    let mut p = ParsedClientHello {
        client_version,
        suites,
        compression,
        groups: Vec::new(),
        extensions: Vec::new(),
        supported_versions: Vec::new(),
    };
    if b.is_empty() {
        return Ok(p);
    }
    let mut e = Reader::new(b.vec16()?, "ClientHello extensions");
    while !e.is_empty() {
        let t = e.u16()?;
        let body = e.vec16()?;
        p.extensions.push(t);
        match t {
            ext::SUPPORTED_GROUPS => p.groups = u16s(Reader::new(body, "groups").vec16()?)?,
            ext::SUPPORTED_VERSIONS => {
                p.supported_versions = u16s(Reader::new(body, "versions").vec8()?)?
            }
            _ => {}
        }
    }
    Ok(p)
}

fn u16s(b: &[u8]) -> Result<Vec<u16>, ParseError> {
    if !b.len().is_multiple_of(2) {
        return Err(ParseError::Malformed("odd length of a u16 list"));
    }
    Ok(b.chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect())
}

/// SSL 2.0 cipher kinds (SSL 2.0 draft Appendix A): every one the protocol defines.
pub const SSL2_CIPHER_KINDS: &[([u8; 3], &str)] = &[
    ([0x01, 0x00, 0x80], "SSL_CK_RC4_128_WITH_MD5"),
    ([0x02, 0x00, 0x80], "SSL_CK_RC4_128_EXPORT40_WITH_MD5"),
    ([0x03, 0x00, 0x80], "SSL_CK_RC2_128_CBC_WITH_MD5"),
    ([0x04, 0x00, 0x80], "SSL_CK_RC2_128_CBC_EXPORT40_WITH_MD5"),
    ([0x05, 0x00, 0x80], "SSL_CK_IDEA_128_CBC_WITH_MD5"),
    ([0x06, 0x00, 0x40], "SSL_CK_DES_64_CBC_WITH_MD5"),
    ([0x07, 0x00, 0xC0], "SSL_CK_DES_192_EDE3_CBC_WITH_MD5"),
];

/// An SSL 2.0 CLIENT-HELLO in a two-octet-header record (SSL 2.0 draft §2.6): version 0x0002,
/// every cipher kind, no session id, a 16-octet challenge.
pub fn sslv2_client_hello(challenge: [u8; 16]) -> Vec<u8> {
    let mut m = vec![1u8]; // SSL2_MT_CLIENT_HELLO
    put_u16(&mut m, 0x0002);
    put_u16(&mut m, (SSL2_CIPHER_KINDS.len() * 3) as u16);
    put_u16(&mut m, 0); // session id length
    put_u16(&mut m, challenge.len() as u16);
    SSL2_CIPHER_KINDS
        .iter()
        .for_each(|(k, _)| m.extend_from_slice(k));
    m.extend_from_slice(&challenge);
    let mut r = Vec::with_capacity(m.len() + 2);
    put_u16(&mut r, 0x8000 | m.len() as u16);
    r.extend_from_slice(&m);
    r
}

pub(super) fn put_u16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn put_u24(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_be_bytes()[1..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tls12_hello_layout() {
        let h = ClientHello::new(ProtocolVersion::Tls12, vec![0xC02F, 0x00FF], vec![0x0017]);
        let rec = h.to_record();
        assert_eq!(&rec[..3], &[22, 3, 1]);
        assert_eq!(rec[5], 1);
        let p = parse_client_hello(&rec).unwrap();
        assert_eq!(p.client_version, 0x0303);
        assert_eq!(p.suites, vec![0xC02F, 0x00FF]);
        assert_eq!(p.groups, vec![0x0017]);
        assert!(p.extensions.contains(&ext::SIGNATURE_ALGORITHMS));
        assert!(p.supported_versions.is_empty());
        // Padded out of the 256..511 range.
        assert!(!(256..512).contains(&(rec.len() - 5)));
    }

    #[test]
    fn ssl3_hello_has_no_extensions() {
        let h = ClientHello::new(ProtocolVersion::Ssl3, vec![0x000A], vec![0x0017]);
        let rec = h.to_record();
        assert_eq!(&rec[1..3], &[3, 0]);
        let p = parse_client_hello(&rec).unwrap();
        assert_eq!(p.client_version, 0x0300);
        assert!(p.extensions.is_empty());
    }

    #[test]
    fn tls13_hello_asks_1_3_with_empty_key_share() {
        let h = ClientHello::new(ProtocolVersion::Tls13, vec![0x1301], vec![0x001D]);
        let p = parse_client_hello(&h.to_record()).unwrap();
        assert_eq!(p.client_version, 0x0303);
        assert_eq!(p.supported_versions, vec![0x0304]);
        assert!(p.extensions.contains(&ext::KEY_SHARE));
    }

    #[test]
    fn sslv2_hello_layout() {
        let h = sslv2_client_hello([7; 16]);
        assert_eq!(h[0] & 0x80, 0x80);
        assert_eq!(((h[0] & 0x7F) as usize) << 8 | h[1] as usize, h.len() - 2);
        assert_eq!(h[2], 1);
        assert_eq!(&h[3..5], &[0, 2]);
    }

    fn version() -> impl Strategy<Value = ProtocolVersion> {
        prop_oneof![
            Just(ProtocolVersion::Ssl3),
            Just(ProtocolVersion::Tls10),
            Just(ProtocolVersion::Tls11),
            Just(ProtocolVersion::Tls12),
            Just(ProtocolVersion::Tls13),
        ]
    }

    proptest! {
        #[test]
        fn emit_parse_roundtrip(
            v in version(),
            suites in proptest::collection::vec(any::<u16>(), 1..200),
            groups in proptest::collection::vec(any::<u16>(), 0..40),
            deflate in any::<bool>(),
            probe in any::<bool>(),
            sni in proptest::option::of("[a-z]{1,20}\\.example"),
        ) {
            let mut h = ClientHello::new(v, suites.clone(), groups.clone());
            h.probe_extensions = probe;
            h.server_name = sni;
            if deflate { h.compression = vec![1, 0]; }
            let rec = h.to_record();
            let p = parse_client_hello(&rec).unwrap();
            prop_assert_eq!(p.client_version, v.client_version());
            prop_assert_eq!(&p.suites, &suites);
            prop_assert_eq!(&p.compression, &h.compression);
            if v == ProtocolVersion::Ssl3 {
                prop_assert!(p.extensions.is_empty());
            } else {
                prop_assert_eq!(&p.groups, &groups);
            }
            prop_assert_eq!(
                p.supported_versions.is_empty(),
                v != ProtocolVersion::Tls13
            );
            let body = rec.len() - 5;
            prop_assert!(!(256..512).contains(&body) || v == ProtocolVersion::Ssl3);
        }
    }
}
