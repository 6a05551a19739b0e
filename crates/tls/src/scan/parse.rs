//! Sans-I/O parser of what a server sends back to a ClientHello, up to where the scanner stops
//! reading: the ServerHello (RFC 5246 §7.4.1.3, RFC 8446 §4.1.3) or HelloRetryRequest
//! (RFC 8446 §4.1.4), in TLS 1.2 and below the rest of the server's first flight in the clear
//! (Certificate, ServerKeyExchange, CertificateRequest, ServerHelloDone; RFC 5246 §7.3), an
//! alert (RFC 5246 §7.2), a heartbeat record (RFC 6520), or an SSL 2.0 SERVER-HELLO (SSL 2.0
//! draft §2.6).
//!
//! [`parse_flight`] takes all bytes received so far and is called again as more arrive; bytes
//! that do not yet make a whole record or message are left for the next call. Anything a
//! server sends is untrusted: every length is checked, no input panics (fuzz target
//! `fuzz_tls_scan_flight`).
use super::hello::ext;
use super::registry;

/// A server's bytes that cannot be what they claim.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// A length field points past the end of its container.
    #[error("{0}: truncated")]
    Truncated(&'static str),
    /// A field holds a value the protocol does not allow here.
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// The first octets are not a TLS record (content type 20..=24, major version 3).
    #[error("not a TLS record (first octets {0:02X?})")]
    NotTls(Vec<u8>),
}

/// A bounds-checked reader over untrusted octets.
pub(crate) struct Reader<'a> {
    b: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(b: &'a [u8], what: &'static str) -> Reader<'a> {
        Reader { b, what }
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], ParseError> {
        if self.b.len() < n {
            return Err(ParseError::Truncated(self.what));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, ParseError> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, ParseError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub(crate) fn u24(&mut self) -> Result<usize, ParseError> {
        let b = self.take(3)?;
        Ok((b[0] as usize) << 16 | (b[1] as usize) << 8 | b[2] as usize)
    }
    pub(crate) fn vec8(&mut self) -> Result<&'a [u8], ParseError> {
        let n = self.u8()? as usize;
        self.take(n)
    }
    pub(crate) fn vec16(&mut self) -> Result<&'a [u8], ParseError> {
        let n = self.u16()? as usize;
        self.take(n)
    }
    pub(crate) fn vec24(&mut self) -> Result<&'a [u8], ParseError> {
        let n = self.u24()?;
        self.take(n)
    }
}

/// Record content types (RFC 8446 §5.1, RFC 6520 §3).
const CT_CCS: u8 = 20;
const CT_ALERT: u8 = 21;
const CT_HANDSHAKE: u8 = 22;
const CT_APP_DATA: u8 = 23;
const CT_HEARTBEAT: u8 = 24;

/// Handshake message types (RFC 5246 §7.4, RFC 8446 §4).
const HT_SERVER_HELLO: u8 = 2;
const HT_CERTIFICATE: u8 = 11;
const HT_SERVER_KEY_EXCHANGE: u8 = 12;
const HT_CERTIFICATE_REQUEST: u8 = 13;
const HT_SERVER_HELLO_DONE: u8 = 14;
const HT_CERTIFICATE_STATUS: u8 = 22;

/// ServerHello.random of a HelloRetryRequest: SHA-256("HelloRetryRequest") (RFC 8446 §4.1.3).
pub const HRR_RANDOM: [u8; 32] = [
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
];

/// A ServerHello (or HelloRetryRequest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerHello {
    /// legacy_version / server_version.
    pub legacy_version: u16,
    /// The negotiated version: supported_versions' selected_version if present, else
    /// legacy_version (RFC 8446 §4.2.1).
    pub version: u16,
    /// A HelloRetryRequest (its random is [`HRR_RANDOM`]).
    pub retry: bool,
    /// cipher_suite.
    pub suite: u16,
    /// compression_method.
    pub compression: u8,
    /// Extension types, in order.
    pub extensions: Vec<u16>,
    /// The group of key_share (a HelloRetryRequest's selected_group or a ServerHello's entry).
    pub key_share_group: Option<u16>,
}

impl ServerHello {
    /// Whether the server sent extension `t`.
    pub fn has(&self, t: u16) -> bool {
        self.extensions.contains(&t)
    }
}

/// Key-exchange parameters of a TLS 1.2-and-below ServerKeyExchange, where readable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyExchangeParams {
    /// ServerDHParams (RFC 5246 §7.4.3): the prime p, big-endian.
    Dh {
        /// dh_p.
        p: Vec<u8>,
    },
    /// ECParameters with a named curve (RFC 8422 §5.4).
    NamedCurve(u16),
    /// Explicit curve parameters (curve_type 1 or 2, deprecated by RFC 8422 §5.1.1).
    ExplicitCurve,
}

/// What the server sent, as far as it has been received.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerFlight {
    /// The ServerHello or HelloRetryRequest.
    pub server_hello: Option<ServerHello>,
    /// A Certificate message was seen (TLS 1.2 and below).
    pub certificate: bool,
    /// The first certificate of that message (the server's own, RFC 5246 §7.4.2), DER, as sent:
    /// ROBOT's ciphertexts are made with its RSA key. `None` for an empty list.
    pub leaf_certificate: Option<Vec<u8>>,
    /// A CertificateStatus message (stapled OCSP, RFC 6066 §8) was seen.
    pub certificate_status: bool,
    /// The ServerKeyExchange's parameters.
    pub key_exchange: Option<KeyExchangeParams>,
    /// A CertificateRequest was seen (the server asks for a client certificate).
    pub certificate_request: bool,
    /// ServerHelloDone was seen: the server's first flight is complete.
    pub hello_done: bool,
    /// The first alert `(level, description)`.
    pub alert: Option<(u8, u8)>,
    /// A heartbeat record arrived (RFC 6520 §3).
    pub heartbeat: bool,
    /// A ChangeCipherSpec record arrived.
    pub change_cipher_spec: bool,
    /// Encrypted records follow (TLS 1.3 after its ServerHello).
    pub encrypted: bool,
    /// The SSL 2.0 SERVER-HELLO's cipher kinds, if the server answered in SSL 2.0.
    pub sslv2_ciphers: Option<Vec<[u8; 3]>>,
    /// Octets consumed: whole records (the rest is an incomplete record).
    pub consumed: usize,
}

impl ServerFlight {
    /// The server has said all the scanner waits for: an alert, a HelloRetryRequest, a TLS 1.3
    /// ServerHello, ServerHelloDone, or an SSL 2.0 SERVER-HELLO.
    pub fn complete(&self) -> bool {
        self.alert.is_some()
            || self.hello_done
            || self.sslv2_ciphers.is_some()
            || self
                .server_hello
                .as_ref()
                .is_some_and(|h| h.retry || h.version >= 0x0304)
    }
}

/// Parses every whole record of `buf` (the server's octets from the start of the connection).
pub fn parse_flight(buf: &[u8]) -> Result<ServerFlight, ParseError> {
    let mut f = ServerFlight::default();
    if let Some(&b0) = buf.first() {
        if b0 & 0x80 != 0 && !(CT_CCS..=CT_HEARTBEAT).contains(&b0) {
            return parse_sslv2(buf, f);
        }
    }
    let mut hs = Vec::new();
    let mut at = 0;
    while buf.len() >= at + 5 {
        let (ct, major, len) = (
            buf[at],
            buf[at + 1],
            u16::from_be_bytes([buf[at + 3], buf[at + 4]]) as usize,
        );
        if !(CT_CCS..=CT_HEARTBEAT).contains(&ct) || major != 3 {
            return Err(ParseError::NotTls(buf[at..at + 5].to_vec()));
        }
        if len > (1 << 14) + 2048 {
            return Err(ParseError::Malformed("record length over 2^14 + 2048"));
        }
        if buf.len() < at + 5 + len {
            break;
        }
        let frag = &buf[at + 5..at + 5 + len];
        at += 5 + len;
        f.consumed = at;
        if f.encrypted {
            continue;
        }
        match ct {
            CT_ALERT if frag.len() >= 2 && f.alert.is_none() => {
                f.alert = Some((frag[0], frag[1]));
            }
            CT_HANDSHAKE => {
                hs.extend_from_slice(frag);
                handshake_messages(&hs, &mut f)?;
            }
            CT_HEARTBEAT => f.heartbeat = true,
            CT_CCS => f.change_cipher_spec = true,
            CT_APP_DATA => f.encrypted = true,
            _ => {}
        }
    }
    Ok(f)
}

/// Reads the whole handshake messages of `hs` into `f` (from the start each time: a message
/// may span records, RFC 5246 §6.2.1).
fn handshake_messages(hs: &[u8], f: &mut ServerFlight) -> Result<(), ParseError> {
    let mut r = Reader::new(hs, "handshake");
    let mut seen_hello = false;
    loop {
        let rest = r.b;
        if rest.len() < 4 {
            break;
        }
        let len = (rest[1] as usize) << 16 | (rest[2] as usize) << 8 | rest[3] as usize;
        if rest.len() < 4 + len {
            break;
        }
        let t = r.u8()?;
        let body = r.vec24()?;
        match t {
            HT_SERVER_HELLO if !seen_hello => {
                seen_hello = true;
                let sh = parse_server_hello(body)?;
                if sh.version >= 0x0304 && !sh.retry {
                    f.encrypted = true;
                }
                f.server_hello = Some(sh);
            }
            HT_SERVER_HELLO => return Err(ParseError::Malformed("second ServerHello")),
            HT_CERTIFICATE => {
                f.certificate = true;
                f.leaf_certificate = leaf_certificate(body)?;
            }
            HT_CERTIFICATE_STATUS => f.certificate_status = true,
            HT_SERVER_KEY_EXCHANGE => {
                let suite = f
                    .server_hello
                    .as_ref()
                    .and_then(|h| registry::by_code(h.suite));
                f.key_exchange = suite.and_then(|s| parse_ske(s.kx, s.auth, body));
            }
            HT_CERTIFICATE_REQUEST => f.certificate_request = true,
            HT_SERVER_HELLO_DONE => f.hello_done = true,
            _ => {}
        }
        if !seen_hello {
            return Err(ParseError::Malformed(
                "first handshake message is not ServerHello",
            ));
        }
    }
    Ok(())
}

/// The first entry of a TLS 1.2-and-below Certificate message: `certificate_list<0..2^24-1>` of
/// `opaque ASN.1Cert<1..2^24-1>` (RFC 5246 §7.4.2).
fn leaf_certificate(body: &[u8]) -> Result<Option<Vec<u8>>, ParseError> {
    let mut list = Reader::new(
        Reader::new(body, "Certificate").vec24()?,
        "certificate_list",
    );
    if list.is_empty() {
        return Ok(None);
    }
    Ok(Some(list.vec24()?.to_vec()))
}

/// Reads ServerHello / HelloRetryRequest fields (RFC 8446 §4.1.3; RFC 5246 §7.4.1.3).
pub fn parse_server_hello(body: &[u8]) -> Result<ServerHello, ParseError> {
    let mut r = Reader::new(body, "ServerHello");
    let legacy_version = r.u16()?;
    let random = r.take(32)?;
    let sid = r.vec8()?;
    if sid.len() > 32 {
        return Err(ParseError::Malformed(
            "ServerHello session id over 32 octets",
        ));
    }
    let suite = r.u16()?;
    let compression = r.u8()?;
    let mut sh = ServerHello {
        legacy_version,
        version: legacy_version,
        retry: random == HRR_RANDOM,
        suite,
        compression,
        extensions: Vec::new(),
        key_share_group: None,
    };
    if r.is_empty() {
        return Ok(sh);
    }
    let mut e = Reader::new(r.vec16()?, "ServerHello extensions");
    while !e.is_empty() {
        let t = e.u16()?;
        let b = e.vec16()?;
        sh.extensions.push(t);
        match t {
            ext::SUPPORTED_VERSIONS => {
                sh.version = Reader::new(b, "selected_version").u16()?;
            }
            ext::KEY_SHARE => {
                sh.key_share_group = Some(Reader::new(b, "key_share").u16()?);
            }
            _ => {}
        }
    }
    Ok(sh)
}

/// The parameters at the head of a ServerKeyExchange, by the suite's key exchange `kx` and
/// authentication `auth` (as [`registry::SuiteInfo`] names them).
///
/// The PSK key exchanges put an `opaque psk_identity_hint<0..2^16-1>` first: DHE_PSK before its
/// ServerDHParams (RFC 4279 §3), ECDHE_PSK before its ServerECDHParams (RFC 5489 §2), plain PSK
/// and RSA_PSK carry only the hint (RFC 4279 §2, §4). Read without skipping it, an empty hint
/// (`00 00`) would pass for an empty prime. A prime that is empty or zero is no prime: `None`,
/// never a 0-bit group.
fn parse_ske(kx: &str, auth: &str, body: &[u8]) -> Option<KeyExchangeParams> {
    let mut r = Reader::new(body, "ServerKeyExchange");
    if auth == "PSK" {
        r.vec16().ok()?;
    }
    match kx {
        "DHE" | "DH" => {
            let p = r.vec16().ok()?;
            // dh_p<1..2^16-1> (RFC 5246 §7.4.3): a prime has at least one non-zero octet.
            if p.iter().all(|&b| b == 0) {
                return None;
            }
            Some(KeyExchangeParams::Dh { p: p.to_vec() })
        }
        "ECDHE" | "ECDH" => match r.u8().ok()? {
            3 => Some(KeyExchangeParams::NamedCurve(r.u16().ok()?)),
            1 | 2 => Some(KeyExchangeParams::ExplicitCurve),
            _ => None,
        },
        _ => None,
    }
}

/// An SSL 2.0 record (two-octet header, high bit set) carrying SERVER-HELLO (type 4): session
/// id hit, certificate type, version, lengths of certificate, cipher specs and connection id.
fn parse_sslv2(buf: &[u8], mut f: ServerFlight) -> Result<ServerFlight, ParseError> {
    if buf.len() < 2 {
        return Ok(f);
    }
    let len = ((buf[0] & 0x7F) as usize) << 8 | buf[1] as usize;
    if buf.len() < 2 + len {
        return Ok(f);
    }
    let mut r = Reader::new(&buf[2..2 + len], "SSL 2.0 SERVER-HELLO");
    match r.u8()? {
        4 => {}
        // SSL2_MT_ERROR: the server refuses in SSL 2.0.
        0 => {
            f.alert = Some((2, 40));
            f.consumed = 2 + len;
            return Ok(f);
        }
        _ => return Err(ParseError::Malformed("SSL 2.0 message type")),
    }
    r.u8()?;
    r.u8()?;
    let version = r.u16()?;
    if version != 0x0002 {
        return Err(ParseError::Malformed("SSL 2.0 SERVER-HELLO version"));
    }
    let cert_len = r.u16()? as usize;
    let specs_len = r.u16()? as usize;
    let _conn_len = r.u16()?;
    r.take(cert_len)?;
    let specs = r.take(specs_len)?;
    if !specs_len.is_multiple_of(3) {
        return Err(ParseError::Malformed("SSL 2.0 cipher specs length"));
    }
    f.sslv2_ciphers = Some(specs.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect());
    f.consumed = 2 + len;
    Ok(f)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A ServerHello record as a server emits it (test helper, also for the proptest).
    pub(crate) fn server_hello_record(
        version: u16,
        suite: u16,
        compression: u8,
        exts: &[(u16, Vec<u8>)],
        retry: bool,
    ) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&version.to_be_bytes());
        b.extend_from_slice(if retry { &HRR_RANDOM } else { &[1u8; 32] });
        b.push(0);
        b.extend_from_slice(&suite.to_be_bytes());
        b.push(compression);
        if !exts.is_empty() {
            let mut e = Vec::new();
            for (t, x) in exts {
                e.extend_from_slice(&t.to_be_bytes());
                e.extend_from_slice(&(x.len() as u16).to_be_bytes());
                e.extend_from_slice(x);
            }
            b.extend_from_slice(&(e.len() as u16).to_be_bytes());
            b.extend_from_slice(&e);
        }
        handshake_record(2, &b)
    }

    pub(crate) fn handshake_record(t: u8, body: &[u8]) -> Vec<u8> {
        let mut r = vec![22, 3, 3];
        r.extend_from_slice(&((body.len() + 4) as u16).to_be_bytes());
        r.push(t);
        r.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        r.extend_from_slice(body);
        r
    }

    #[test]
    fn tls12_flight_with_dhe_and_done() {
        let mut buf = server_hello_record(0x0303, 0x009E, 0, &[(0xFF01, vec![0])], false);
        buf.extend(handshake_record(11, &[0, 0, 0]));
        let mut ske = vec![0x01, 0x00];
        ske.extend(vec![0xFF; 256]);
        buf.extend(handshake_record(12, &ske));
        buf.extend(handshake_record(13, &[1, 1, 0, 0, 0, 0]));
        buf.extend(handshake_record(14, &[]));
        let f = parse_flight(&buf).unwrap();
        let sh = f.server_hello.as_ref().unwrap();
        assert_eq!((sh.version, sh.suite), (0x0303, 0x009E));
        assert!(sh.has(0xFF01));
        assert!(f.certificate && f.certificate_request && f.hello_done && f.complete());
        assert!(matches!(f.key_exchange, Some(KeyExchangeParams::Dh { ref p }) if p.len() == 256));
        // Split anywhere: never an error, complete only at the end.
        for cut in 0..buf.len() {
            let f = parse_flight(&buf[..cut]).unwrap();
            assert!(!f.hello_done);
        }
    }

    /// A ServerHello of `suite` and a ServerKeyExchange of `ske`.
    fn ske_flight(suite: u16, ske: &[u8]) -> ServerFlight {
        let mut buf = server_hello_record(0x0303, suite, 0, &[], false);
        buf.extend(handshake_record(12, ske));
        parse_flight(&buf).unwrap()
    }

    /// `opaque psk_identity_hint<0..2^16-1>` (RFC 4279 §2).
    fn hint(h: &[u8]) -> Vec<u8> {
        let mut b = (h.len() as u16).to_be_bytes().to_vec();
        b.extend_from_slice(h);
        b
    }

    #[test]
    fn psk_key_exchanges_skip_the_identity_hint() {
        // DHE_PSK (RFC 4279 §3): an empty hint, then a 2048-bit p. Read as plain DHE, the hint's
        // `00 00` was taken for an empty prime (the field test's "DH 0-bit").
        let mut ske = hint(b"");
        ske.extend([0x01, 0x00, 0xFF]);
        ske.extend(vec![0x5A; 255]);
        ske.extend([0x00, 0x01, 0x02]);
        let f = ske_flight(0x0090, &ske);
        assert!(
            matches!(f.key_exchange, Some(KeyExchangeParams::Dh { ref p }) if p.len() == 256 && p[0] == 0xFF)
        );
        // ECDHE_PSK (RFC 5489 §2): a hint, then named_curve x25519.
        let mut ske = hint(b"ied-7");
        ske.extend([3, 0x00, 0x1D, 32]);
        ske.extend([9; 32]);
        let f = ske_flight(0xC037, &ske);
        assert_eq!(f.key_exchange, Some(KeyExchangeParams::NamedCurve(0x001D)));
        // Plain PSK and RSA_PSK carry only the hint: no group.
        assert_eq!(ske_flight(0x008C, &hint(b"x")).key_exchange, None);
        assert_eq!(ske_flight(0x0094, &hint(b"")).key_exchange, None);
        // A non-PSK DHE suite has no hint: the first field is p.
        let mut ske = vec![0x00, 0x80];
        ske.extend(vec![0xC3; 128]);
        let f = ske_flight(0x009E, &ske);
        assert!(matches!(f.key_exchange, Some(KeyExchangeParams::Dh { ref p }) if p.len() == 128));
    }

    #[test]
    fn an_empty_or_zero_prime_is_no_prime() {
        assert_eq!(
            ske_flight(0x009E, &[0, 0, 0, 1, 2, 0, 1, 2]).key_exchange,
            None
        );
        assert_eq!(
            ske_flight(0x009E, &[0, 2, 0, 0, 0, 1, 2]).key_exchange,
            None
        );
        // Truncated after the hint.
        assert_eq!(ske_flight(0x0090, &[0, 0, 1]).key_exchange, None);
    }

    #[test]
    fn hello_retry_request_names_the_group() {
        let buf = server_hello_record(
            0x0303,
            0x1302,
            0,
            &[(43, vec![3, 4]), (51, vec![0, 0x18])],
            true,
        );
        let f = parse_flight(&buf).unwrap();
        let sh = f.server_hello.unwrap();
        assert!(sh.retry);
        assert_eq!(
            (sh.version, sh.suite, sh.key_share_group),
            (0x0304, 0x1302, Some(0x18))
        );
    }

    #[test]
    fn alert_and_garbage() {
        let f = parse_flight(&[21, 3, 3, 0, 2, 2, 40]).unwrap();
        assert_eq!(f.alert, Some((2, 40)));
        assert!(f.complete());
        assert!(matches!(
            parse_flight(b"HTTP/1.1 400"),
            Err(ParseError::NotTls(_))
        ));
        assert!(parse_flight(&[3, 0, 0, 11, 6, 0xD0, 0, 1, 0, 1, 0]).is_err());
    }

    #[test]
    fn sslv2_server_hello() {
        let mut m = vec![4u8, 0, 1, 0, 2, 0, 2, 0, 6, 0, 16];
        m.extend([0xAA, 0xBB]);
        m.extend([1, 0, 0x80, 7, 0, 0xC0]);
        m.extend([0; 16]);
        let mut buf = vec![0x80 | (m.len() >> 8) as u8, m.len() as u8];
        buf.extend(m);
        let f = parse_flight(&buf).unwrap();
        assert_eq!(f.sslv2_ciphers, Some(vec![[1, 0, 0x80], [7, 0, 0xC0]]));
    }

    proptest! {
        #[test]
        fn server_hello_emit_parse(
            version in prop_oneof![Just(0x0300u16), Just(0x0301), Just(0x0302), Just(0x0303)],
            suite in any::<u16>(),
            compression in any::<u8>(),
            exts in proptest::collection::vec((any::<u16>(), proptest::collection::vec(any::<u8>(), 0..20)), 0..6),
            retry in any::<bool>(),
        ) {
            // Drop the extensions whose bodies the parser reads, and keep one of each type.
            let mut exts: Vec<(u16, Vec<u8>)> = exts
                .into_iter()
                .filter(|(t, _)| *t != 43 && *t != 51)
                .collect();
            exts.sort_by_key(|e| e.0);
            exts.dedup_by_key(|e| e.0);
            let buf = server_hello_record(version, suite, compression, &exts, retry);
            let f = parse_flight(&buf).unwrap();
            let sh = f.server_hello.unwrap();
            prop_assert_eq!(sh.version, version);
            prop_assert_eq!(sh.suite, suite);
            prop_assert_eq!(sh.compression, compression);
            prop_assert_eq!(sh.retry, retry);
            prop_assert_eq!(sh.extensions, exts.iter().map(|e| e.0).collect::<Vec<_>>());
        }

        #[test]
        fn leaf_certificate_emit_parse(
            certs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..300), 0..4),
        ) {
            let mut list: Vec<u8> = Vec::new();
            for c in &certs {
                list.extend(&(c.len() as u32).to_be_bytes()[1..]);
                list.extend(c);
            }
            let mut body = (list.len() as u32).to_be_bytes()[1..].to_vec();
            body.extend(list);
            let mut buf = server_hello_record(0x0303, 0x009C, 0, &[], false);
            buf.extend(handshake_record(11, &body));
            let f = parse_flight(&buf).unwrap();
            prop_assert!(f.certificate);
            prop_assert_eq!(f.leaf_certificate, certs.first().cloned());
        }

        #[test]
        fn ske_emit_parse(
            psk in any::<bool>(),
            dhe in any::<bool>(),
            h in proptest::collection::vec(any::<u8>(), 0..40),
            p in proptest::collection::vec(any::<u8>(), 1..300),
            curve in any::<u16>(),
        ) {
            // DHE_RSA 0x009E, DHE_PSK 0x0090, ECDHE_RSA 0xC02F, ECDHE_PSK 0xC037.
            let suite = match (dhe, psk) {
                (true, false) => 0x009E,
                (true, true) => 0x0090,
                (false, false) => 0xC02F,
                (false, true) => 0xC037,
            };
            let mut ske = if psk { hint(&h) } else { Vec::new() };
            if dhe {
                ske.extend((p.len() as u16).to_be_bytes());
                ske.extend(&p);
            } else {
                ske.extend([3]);
                ske.extend(curve.to_be_bytes());
            }
            ske.extend([0, 1, 2, 0, 1, 5, 0, 0]);
            let f = ske_flight(suite, &ske);
            let want = if !dhe {
                Some(KeyExchangeParams::NamedCurve(curve))
            } else if p.iter().all(|&b| b == 0) {
                None
            } else {
                Some(KeyExchangeParams::Dh { p: p.clone() })
            };
            prop_assert_eq!(f.key_exchange, want);
        }

        #[test]
        fn never_panics(buf in proptest::collection::vec(any::<u8>(), 0..600)) {
            let _ = parse_flight(&buf);
        }
    }
}
