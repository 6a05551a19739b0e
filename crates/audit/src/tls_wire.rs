//! The cleartext part of a TLS handshake as a passive observer reads it (RFC 5246 §6.2, §7.4;
//! RFC 8446 §4): records, handshake messages, and the fields of ClientHello, ServerHello,
//! Certificate and ServerKeyExchange that IEC 62351-3 judges. Everything after
//! ChangeCipherSpec (TLS 1.2) or ServerHello (TLS 1.3) is encrypted and only counted.
//!
//! Borrowing parsers over bytes: every length is checked against what is there, and a message
//! that does not parse is an error, never a panic.

/// Record content types (RFC 5246 §6.2.1).
pub const CHANGE_CIPHER_SPEC: u8 = 20;
/// Alert.
pub const ALERT: u8 = 21;
/// Handshake.
pub const HANDSHAKE: u8 = 22;
/// Application data.
pub const APPLICATION_DATA: u8 = 23;

/// Handshake message types.
pub const CLIENT_HELLO: u8 = 1;
/// ServerHello.
pub const SERVER_HELLO: u8 = 2;
/// Certificate.
pub const CERTIFICATE: u8 = 11;
/// ServerKeyExchange.
pub const SERVER_KEY_EXCHANGE: u8 = 12;
/// CertificateRequest.
pub const CERTIFICATE_REQUEST: u8 = 13;

/// Extensions read here.
const EXT_SUPPORTED_GROUPS: u16 = 10;
const EXT_SESSION_TICKET: u16 = 35;
const EXT_PRE_SHARED_KEY: u16 = 41;
const EXT_SUPPORTED_VERSIONS: u16 = 43;
const EXT_KEY_SHARE: u16 = 51;
const EXT_RENEGOTIATION_INFO: u16 = 0xff01;

/// The ServerHello.random of a HelloRetryRequest (RFC 8446 §4.1.3).
const HRR_RANDOM: [u8; 32] = [
    0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
    0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
];

/// Largest record fragment (RFC 5246 §6.2.3: 2^14 + 2048 for ciphertext).
pub const MAX_RECORD: usize = (1 << 14) + 2048;

/// What does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TlsWireError {
    /// Fewer bytes than a length says.
    #[error("{0} cut short")]
    Truncated(&'static str),
    /// A record longer than TLS allows.
    #[error("record of {0} octets exceeds 2^14 + 2048")]
    RecordTooLong(usize),
    /// A field with a value the protocol excludes.
    #[error("{0}")]
    Bad(&'static str),
}

type R<T> = Result<T, TlsWireError>;

/// A cursor over bytes.
struct Cur<'a>(&'a [u8]);

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> R<&'a [u8]> {
        if self.0.len() < n {
            return Err(TlsWireError::Truncated(what));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self, what: &'static str) -> R<u8> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &'static str) -> R<u16> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u24(&mut self, what: &'static str) -> R<usize> {
        let b = self.take(3, what)?;
        Ok((usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]))
    }
    fn vec8(&mut self, what: &'static str) -> R<&'a [u8]> {
        let n = usize::from(self.u8(what)?);
        self.take(n, what)
    }
    fn vec16(&mut self, what: &'static str) -> R<&'a [u8]> {
        let n = usize::from(self.u16(what)?);
        self.take(n, what)
    }
    fn vec24(&mut self, what: &'static str) -> R<&'a [u8]> {
        let n = self.u24(what)?;
        self.take(n, what)
    }
}

/// One record: content type, legacy version, fragment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Content type.
    pub content_type: u8,
    /// Record-layer version.
    pub version: u16,
    /// Fragment.
    pub fragment: &'a [u8],
}

/// The first record of `buf`, and the octets it takes; `Ok(None)` if `buf` holds only part of
/// it (wait for more).
pub fn record(buf: &[u8]) -> R<Option<(Record<'_>, usize)>> {
    if buf.len() < 5 {
        return Ok(None);
    }
    let len = usize::from(u16::from_be_bytes([buf[3], buf[4]]));
    if len > MAX_RECORD {
        return Err(TlsWireError::RecordTooLong(len));
    }
    if !(20..=24).contains(&buf[0]) || buf[1] != 3 {
        return Err(TlsWireError::Bad("not a TLS record header"));
    }
    if buf.len() < 5 + len {
        return Ok(None);
    }
    Ok(Some((
        Record {
            content_type: buf[0],
            version: u16::from_be_bytes([buf[1], buf[2]]),
            fragment: &buf[5..5 + len],
        },
        5 + len,
    )))
}

/// The first handshake message of `buf` (type, body) and its length; `Ok(None)` if cut short.
pub fn handshake(buf: &[u8]) -> R<Option<(u8, &[u8], usize)>> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let len = (usize::from(buf[1]) << 16) | (usize::from(buf[2]) << 8) | usize::from(buf[3]);
    if buf.len() < 4 + len {
        return Ok(None);
    }
    Ok(Some((buf[0], &buf[4..4 + len], 4 + len)))
}

/// What a ClientHello offers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientHello {
    /// legacy_version.
    pub legacy_version: u16,
    /// Versions of supported_versions (TLS 1.3 clients), else empty.
    pub versions: Vec<u16>,
    /// Cipher suites offered.
    pub suites: Vec<u16>,
    /// Session id (resumption by id when non-empty and the server echoes it).
    pub session_id: Vec<u8>,
    /// Offers an RFC 5077 ticket (non-empty session_ticket extension).
    pub ticket: bool,
    /// Offers a TLS 1.3 PSK.
    pub psk: bool,
    /// Sends renegotiation_info or TLS_EMPTY_RENEGOTIATION_INFO_SCSV.
    pub renegotiation_info: bool,
    /// supported_groups.
    pub groups: Vec<u16>,
}

/// What a ServerHello chose.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerHello {
    /// The negotiated version (supported_versions if present, else legacy_version).
    pub version: u16,
    /// The chosen suite.
    pub suite: u16,
    /// Session id.
    pub session_id: Vec<u8>,
    /// key_share group (TLS 1.3).
    pub group: Option<u16>,
    /// Sent renegotiation_info (RFC 5746).
    pub renegotiation_info: bool,
    /// Accepted a TLS 1.3 PSK (resumption).
    pub psk: bool,
    /// A HelloRetryRequest, not a ServerHello.
    pub retry: bool,
}

fn extensions<'a>(c: &mut Cur<'a>, mut each: impl FnMut(u16, &'a [u8]) -> R<()>) -> R<()> {
    if c.0.is_empty() {
        return Ok(());
    }
    let mut e = Cur(c.vec16("extensions")?);
    while !e.0.is_empty() {
        let ty = e.u16("extension type")?;
        let body = e.vec16("extension")?;
        each(ty, body)?;
    }
    Ok(())
}

fn u16s(b: &[u8], what: &'static str) -> R<Vec<u16>> {
    if !b.len().is_multiple_of(2) {
        return Err(TlsWireError::Bad(what));
    }
    Ok(b.chunks_exact(2)
        .map(|x| u16::from_be_bytes([x[0], x[1]]))
        .collect())
}

impl ClientHello {
    /// Parses a ClientHello body.
    pub fn parse(body: &[u8]) -> R<ClientHello> {
        let mut c = Cur(body);
        let mut h = ClientHello {
            legacy_version: c.u16("ClientHello version")?,
            ..Default::default()
        };
        c.take(32, "ClientHello random")?;
        h.session_id = c.vec8("session id")?.to_vec();
        h.suites = u16s(c.vec16("cipher suites")?, "odd cipher-suite list")?;
        h.renegotiation_info = h.suites.contains(&0x00ff);
        c.vec8("compression methods")?;
        extensions(&mut c, |ty, b| {
            match ty {
                EXT_SUPPORTED_VERSIONS => {
                    let mut x = Cur(b);
                    h.versions = u16s(x.vec8("supported_versions")?, "odd version list")?;
                }
                EXT_SUPPORTED_GROUPS => {
                    let mut x = Cur(b);
                    h.groups = u16s(x.vec16("supported_groups")?, "odd group list")?;
                }
                EXT_SESSION_TICKET => h.ticket = !b.is_empty(),
                EXT_PRE_SHARED_KEY => h.psk = true,
                EXT_RENEGOTIATION_INFO => h.renegotiation_info = true,
                _ => {}
            }
            Ok(())
        })?;
        Ok(h)
    }
}

impl ServerHello {
    /// Parses a ServerHello body.
    pub fn parse(body: &[u8]) -> R<ServerHello> {
        let mut c = Cur(body);
        let mut h = ServerHello {
            version: c.u16("ServerHello version")?,
            ..Default::default()
        };
        h.retry = c.take(32, "ServerHello random")? == HRR_RANDOM;
        h.session_id = c.vec8("session id")?.to_vec();
        h.suite = c.u16("cipher suite")?;
        c.u8("compression method")?;
        extensions(&mut c, |ty, b| {
            let mut x = Cur(b);
            match ty {
                EXT_SUPPORTED_VERSIONS => h.version = x.u16("selected_version")?,
                EXT_KEY_SHARE => h.group = Some(x.u16("key_share group")?),
                EXT_RENEGOTIATION_INFO => h.renegotiation_info = true,
                EXT_PRE_SHARED_KEY => h.psk = true,
                _ => {}
            }
            Ok(())
        })?;
        Ok(h)
    }
}

/// The DER certificates of a TLS 1.2 Certificate message, leaf first (RFC 5246 §7.4.2).
pub fn certificates(body: &[u8]) -> R<Vec<&[u8]>> {
    let mut c = Cur(body);
    let mut list = Cur(c.vec24("certificate_list")?);
    let mut out = Vec::new();
    while !list.0.is_empty() {
        out.push(list.vec24("certificate")?);
    }
    Ok(out)
}

/// The named curve of an ECDHE ServerKeyExchange (RFC 8422 §5.4: curve_type 3, named_curve).
pub fn ecdhe_group(body: &[u8]) -> Option<u16> {
    match body {
        [3, a, b, ..] => Some(u16::from_be_bytes([*a, *b])),
        _ => None,
    }
}

/// IANA name of a TLS version.
pub fn version_name(v: u16) -> &'static str {
    match v {
        0x0300 => "SSL 3.0",
        0x0301 => "TLS 1.0",
        0x0302 => "TLS 1.1",
        0x0303 => "TLS 1.2",
        0x0304 => "TLS 1.3",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A ClientHello body with the fields given (the emit side of the property test).
    fn client_hello(suites: &[u16], sid: &[u8], versions: &[u16], ticket: bool) -> Vec<u8> {
        let mut b = vec![3, 3];
        b.extend([7u8; 32]);
        b.push(sid.len() as u8);
        b.extend(sid);
        b.extend(((suites.len() * 2) as u16).to_be_bytes());
        for s in suites {
            b.extend(s.to_be_bytes());
        }
        b.extend([1, 0]);
        let mut ext = Vec::new();
        if !versions.is_empty() {
            ext.extend(EXT_SUPPORTED_VERSIONS.to_be_bytes());
            ext.extend(((versions.len() * 2 + 1) as u16).to_be_bytes());
            ext.push((versions.len() * 2) as u8);
            for v in versions {
                ext.extend(v.to_be_bytes());
            }
        }
        if ticket {
            ext.extend(EXT_SESSION_TICKET.to_be_bytes());
            ext.extend(2u16.to_be_bytes());
            ext.extend([0xaa, 0xbb]);
        }
        b.extend((ext.len() as u16).to_be_bytes());
        b.extend(ext);
        b
    }

    #[test]
    fn records_and_messages_wait_for_their_bytes() {
        let rec = [22, 3, 3, 0, 4, 2, 0, 0, 0];
        assert_eq!(record(&rec[..6]), Ok(None));
        let (r, n) = record(&rec).unwrap().unwrap();
        assert_eq!((r.content_type, r.version, n), (22, 0x0303, 9));
        assert_eq!(handshake(r.fragment), Ok(Some((2, &[][..], 4))));
        assert_eq!(handshake(&[1, 0, 0, 9, 0]), Ok(None));
        assert!(record(&[22, 3, 3, 0xff, 0xff]).is_err());
        assert!(record(&[3, 0, 0, 19, 2]).is_err());
    }

    #[test]
    fn a_tls13_server_hello_names_version_group_and_retry() {
        let mut b = vec![3, 3];
        b.extend(HRR_RANDOM);
        b.push(0);
        b.extend([0x13, 0x01, 0]);
        let ext = [0, 43, 0, 2, 3, 4, 0, 51, 0, 2, 0, 0x1d];
        b.extend((ext.len() as u16).to_be_bytes());
        b.extend(ext);
        let h = ServerHello::parse(&b).unwrap();
        assert_eq!(
            (h.version, h.suite, h.group, h.retry),
            (0x0304, 0x1301, Some(0x1d), true)
        );
        assert!(ServerHello::parse(&b[..40]).is_err());
    }

    #[test]
    fn certificates_are_split_leaf_first() {
        let body = [0, 0, 9, 0, 0, 2, 0xaa, 0xbb, 0, 0, 1, 0xcc];
        assert_eq!(
            certificates(&body).unwrap(),
            vec![&[0xaa, 0xbb][..], &[0xcc][..]]
        );
        assert!(certificates(&body[..7]).is_err());
        assert_eq!(ecdhe_group(&[3, 0, 23, 65]), Some(23));
    }

    proptest! {
        /// Emit then parse gives the ClientHello's fields back.
        #[test]
        fn client_hello_round_trips(
            suites in proptest::collection::vec(any::<u16>(), 1..40),
            sid in proptest::collection::vec(any::<u8>(), 0..32),
            versions in proptest::collection::vec(any::<u16>(), 0..5),
            ticket in any::<bool>(),
        ) {
            let h = ClientHello::parse(&client_hello(&suites, &sid, &versions, ticket)).unwrap();
            prop_assert_eq!(&h.suites, &suites);
            prop_assert_eq!(&h.session_id, &sid);
            prop_assert_eq!(&h.versions, &versions);
            prop_assert_eq!(h.ticket, ticket);
        }

        /// No input makes a parser panic.
        #[test]
        fn any_bytes_are_refused_or_read(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = ClientHello::parse(&b);
            let _ = ServerHello::parse(&b);
            let _ = certificates(&b);
            let _ = record(&b);
            let _ = handshake(&b);
        }
    }
}
