//! Per version: is it accepted, which suites (all of the IANA registry), in whose order, which
//! named groups; and SSL 2.0.
//!
//! Suites: offer a batch, take the ServerHello's suite out, offer the rest, until the server
//! refuses (an alert such as handshake_failure or insufficient_security, a close, silence).
//! Groups: TLS 1.3 by the HelloRetryRequest's selected_group for an empty key_share (RFC 8446
//! §4.1.4), TLS 1.2 and below by the ServerKeyExchange's named curve (RFC 8422 §5.4) with the
//! ECDHE suites the server accepted; the finite-field prime of a DHE ServerKeyExchange is
//! described by size and shape ([`super::groups::describe_prime`]).
use super::conn::{Answer, Conn, End};
use super::groups::{self, FfdhPrime};
use super::hello::{self, ext, ClientHello};
use super::parse::{KeyExchangeParams, ServerFlight};
use super::registry::{self, SuiteInfo};
use super::{ProtocolVersion, ScanError, ScanOptions};
use serde::Serialize;

/// A named group the server accepted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupFound {
    /// IANA code.
    pub code: u16,
    /// IANA name.
    pub name: String,
}

/// The server's own certificate for one authentication class (RSA, ECDSA, DSS), as the
/// Certificate message of a TLS 1.2-and-below first flight carries it in the clear
/// (RFC 5246 §7.4.2). A server may hold one certificate per class (`openssl s_server -cert ...
/// -dcert ...`) and choose by the suite; a library handshake sees only one of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScanCertificate {
    /// The suites' authentication (`RSA`, `ECDSA`, `DSS`; the registry's word).
    pub auth: &'static str,
    /// The first accepted suite whose flight carried it.
    pub suite: &'static str,
    /// What the certificate says (the survey's description, `crate::survey::CertInfo`).
    pub cert: crate::survey::CertInfo,
}

/// What one version's scan found.
#[derive(Clone, Debug, Serialize)]
pub struct VersionScan {
    /// The version.
    pub version: ProtocolVersion,
    /// The server chose this version and a suite of it.
    pub accepted: bool,
    /// How the server answered the first ClientHello of this version when it did not accept it.
    pub refusal: Option<String>,
    /// The alert of that refusal, if it was one (for the scan's own decisions: alert 112,
    /// unrecognized_name, refuses the server name and not the version, RFC 6066 §3).
    #[serde(skip)]
    pub refusal_alert: Option<u8>,
    /// Every accepted suite, in the order found.
    pub suites: Vec<SuiteInfo>,
    /// `Some(true)`: the server picks by its own order; `Some(false)`: by the client's;
    /// `None`: fewer than two suites, or the answers did not tell.
    pub server_order: Option<bool>,
    /// The named groups accepted (TLS 1.3: key_share groups; older: ECDHE curves).
    pub groups: Vec<GroupFound>,
    /// The prime of a DHE ServerKeyExchange, if a DHE suite was chosen.
    pub dh_prime: Option<FfdhPrime>,
    /// The server's certificate per authentication class (one each): up to TLS 1.2 of the
    /// accepted suites, from the Certificate messages read in the clear; TLS 1.3 per class of
    /// signature scheme, from completed handshakes (`super::tls13_flight`).
    pub certificates: Vec<ScanCertificate>,
    /// TLS 1.3: each class of signature scheme offered alone in a completed handshake, and
    /// what came of it (`super::tls13_flight`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signature_classes: Vec<super::tls13_flight::SignatureClassScan>,
    /// ServerHello extensions of the first accepted answer (types).
    pub server_hello_extensions: Vec<u16>,
    /// A CertificateRequest in the server's first flight (TLS 1.3: in a completed handshake).
    pub certificate_request: Option<bool>,
    /// A stapled OCSP response: CertificateStatus in the first flight, TLS 1.3 the
    /// Certificate entry's status_request.
    pub certificate_status: Option<bool>,
    /// The connection cap stopped this version's scan.
    pub incomplete: bool,
    /// Connections this version took.
    pub connections: u32,
}

impl VersionScan {
    pub(crate) fn new(version: ProtocolVersion) -> VersionScan {
        VersionScan {
            version,
            accepted: false,
            refusal: None,
            refusal_alert: None,
            suites: Vec::new(),
            server_order: None,
            groups: Vec::new(),
            dh_prime: None,
            certificates: Vec::new(),
            signature_classes: Vec::new(),
            server_hello_extensions: Vec::new(),
            certificate_request: None,
            certificate_status: None,
            incomplete: false,
            connections: 0,
        }
    }

    /// Whether the first accepted ServerHello carried extension `t` (`None`: nothing accepted,
    /// or SSL 3.0 where no extension was offered).
    pub fn echoed(&self, t: u16) -> Option<bool> {
        (self.accepted && self.version >= ProtocolVersion::Tls10)
            .then(|| self.server_hello_extensions.contains(&t))
    }
}

/// SSL 2.0's result.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Sslv2Scan {
    /// The server answered with an SSL 2.0 SERVER-HELLO.
    pub accepted: bool,
    /// The cipher kinds it listed (SSL 2.0 draft Appendix A names).
    pub ciphers: Vec<String>,
    /// How it answered otherwise.
    pub refusal: Option<String>,
}

/// Sends an SSL 2.0 CLIENT-HELLO with every cipher kind.
pub fn sslv2(c: &mut Conn) -> Result<Sslv2Scan, ScanError> {
    let a = c.exchange(&hello::sslv2_client_hello(random16()))?;
    let mut s = Sslv2Scan::default();
    match &a.flight.sslv2_ciphers {
        Some(k) if !k.is_empty() => {
            s.accepted = true;
            s.ciphers = k
                .iter()
                .map(|k| {
                    hello::SSL2_CIPHER_KINDS
                        .iter()
                        .find(|(c, _)| c == k)
                        .map(|(_, n)| n.to_string())
                        .unwrap_or_else(|| format!("{:02X}{:02X}{:02X}", k[0], k[1], k[2]))
                })
                .collect();
        }
        _ => s.refusal = Some(describe(&a, None)),
    }
    Ok(s)
}

/// Scans one version (not SSL 2.0). A reached cap marks the result incomplete.
pub fn version(
    c: &mut Conn,
    v: ProtocolVersion,
    opts: &ScanOptions,
) -> Result<VersionScan, ScanError> {
    let before = c.count;
    let mut s = VersionScan::new(v);
    let r = run(c, v, opts, &mut s);
    s.connections = c.count - before;
    match r {
        Ok(()) => Ok(s),
        Err(ScanError::Cap(_)) => {
            s.incomplete = true;
            Ok(s)
        }
        Err(e) => Err(e),
    }
}

fn run(
    c: &mut Conn,
    v: ProtocolVersion,
    opts: &ScanOptions,
    s: &mut VersionScan,
) -> Result<(), ScanError> {
    let tls13 = v == ProtocolVersion::Tls13;
    let all_groups = groups::offered(tls13);
    let codes: Vec<u16> = registry::for_version(v).iter().map(|s| s.code).collect();
    for batch in codes.chunks(opts.batch.max(1)) {
        let mut offer = batch.to_vec();
        while !offer.is_empty() {
            let a = match exchange(c, v, &offer, &all_groups, opts) {
                Ok(a) => a,
                Err(ScanError::Connect { reason, .. }) if s.accepted || s.refusal.is_some() => {
                    // The server stopped taking connections part-way (few slots): what was
                    // found stands; the rest is marked incomplete.
                    s.incomplete = true;
                    s.refusal.get_or_insert(format!("connect failed: {reason}"));
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            // Not an octet nor a close to a ClientHello, and nothing ever heard from the port:
            // it does not speak (TLS). Every further probe would wait out the timeout again.
            if a.end == End::TimedOut && !c.heard {
                return Err(ScanError::Silent {
                    addr: c.addr,
                    timeout_ms: c.timeout.as_millis() as u64,
                });
            }
            let chosen = a.flight.server_hello.as_ref().and_then(|h| {
                (h.version == v.code() && offer.contains(&h.suite)).then_some(h.suite)
            });
            let Some(code) = chosen else {
                if !s.accepted && s.refusal.is_none() {
                    s.refusal = Some(describe(&a, Some(v)));
                    s.refusal_alert = a.flight.alert.map(|(_, d)| d);
                }
                // Another version, or protocol_version (RFC 8446 §6.2), refuses the version
                // itself: no other batch will do.
                if a.flight
                    .server_hello
                    .as_ref()
                    .is_some_and(|h| h.version != v.code())
                    || (!s.accepted && a.flight.alert.is_some_and(|(_, d)| d == 70))
                {
                    return Ok(());
                }
                break;
            };
            if !s.accepted {
                s.accepted = true;
                s.refusal = None;
                s.refusal_alert = None;
                if let Some(h) = &a.flight.server_hello {
                    s.server_hello_extensions = h.extensions.clone();
                }
                if !tls13 {
                    s.certificate_request = Some(a.flight.certificate_request);
                    s.certificate_status = Some(a.flight.certificate_status);
                }
            }
            note_kx(s, &a.flight);
            offer.retain(|&x| x != code);
            if let Some(info) = registry::by_code(code) {
                note_certificate(s, &info, &a.flight);
                s.suites.push(info);
            }
        }
    }
    if !s.accepted {
        return Ok(());
    }
    order(c, v, opts, s)?;
    if tls13 {
        groups13(c, opts, s)
    } else {
        groups12(c, v, opts, s)
    }
}

/// The DH prime of a ServerKeyExchange, kept once.
fn note_kx(s: &mut VersionScan, f: &ServerFlight) {
    if let Some(KeyExchangeParams::Dh { p }) = &f.key_exchange {
        if s.dh_prime.is_none() {
            s.dh_prime = Some(groups::describe_prime(p));
        }
    }
}

/// The leaf certificate of a suite's first flight, kept once per authentication class that
/// carries one (RSA, ECDSA, DSS; not anonymous or PSK suites). A certificate that cannot be
/// described is left out: the scan reports what it can read, the rest is the survey's.
fn note_certificate(s: &mut VersionScan, info: &SuiteInfo, f: &ServerFlight) {
    if !matches!(info.auth, "RSA" | "ECDSA" | "DSS")
        || s.certificates.iter().any(|c| c.auth == info.auth)
    {
        return;
    }
    let Some(der) = &f.leaf_certificate else {
        return;
    };
    if let Ok(cert) = crate::survey::chain::describe(der, crate::survey::chain::now_unix()) {
        s.certificates.push(ScanCertificate {
            auth: info.auth,
            suite: info.name,
            cert,
        });
    }
}

/// Offers the accepted suites forwards and backwards: a server that keeps its choice picks by
/// its own order; one that follows takes the first of each.
fn order(
    c: &mut Conn,
    v: ProtocolVersion,
    opts: &ScanOptions,
    s: &mut VersionScan,
) -> Result<(), ScanError> {
    if s.suites.len() < 2 {
        return Ok(());
    }
    let fwd: Vec<u16> = s.suites.iter().map(|x| x.code).collect();
    let rev: Vec<u16> = fwd.iter().rev().copied().collect();
    let groups = groups::offered(v == ProtocolVersion::Tls13);
    let pick = |a: &Answer| a.flight.server_hello.as_ref().map(|h| h.suite);
    let f = pick(&exchange(c, v, &fwd, &groups, opts)?);
    let r = pick(&exchange(c, v, &rev, &groups, opts)?);
    s.server_order = match (f, r) {
        (Some(f), Some(r)) if f == fwd[0] && r == rev[0] => Some(false),
        (Some(f), Some(r)) if f == r => Some(true),
        _ => None,
    };
    Ok(())
}

/// TLS 1.3: the HelloRetryRequest's selected_group, removed and asked again.
fn groups13(c: &mut Conn, opts: &ScanOptions, s: &mut VersionScan) -> Result<(), ScanError> {
    let suites: Vec<u16> = s.suites.iter().map(|x| x.code).collect();
    let mut offer = groups::offered(true);
    while !offer.is_empty() {
        let a = exchange(c, ProtocolVersion::Tls13, &suites, &offer, opts)?;
        let g = a
            .flight
            .server_hello
            .as_ref()
            .filter(|h| h.version == 0x0304)
            .and_then(|h| h.key_share_group)
            .filter(|g| offer.contains(g));
        let Some(g) = g else { break };
        offer.retain(|&x| x != g);
        s.groups.push(GroupFound {
            code: g,
            name: groups::group_name(g),
        });
    }
    Ok(())
}

/// TLS 1.2 and below: the ServerKeyExchange's named curve with the accepted ECDHE suites.
fn groups12(
    c: &mut Conn,
    v: ProtocolVersion,
    opts: &ScanOptions,
    s: &mut VersionScan,
) -> Result<(), ScanError> {
    let suites: Vec<u16> = s
        .suites
        .iter()
        .filter(|x| x.kx == "ECDHE" || (x.kx == "ECDH" && x.anonymous))
        .map(|x| x.code)
        .collect();
    if suites.is_empty() {
        return Ok(());
    }
    let mut offer = groups::ec_tls12();
    while !offer.is_empty() {
        let a = exchange(c, v, &suites, &offer, opts)?;
        let g = match a.flight.key_exchange {
            Some(KeyExchangeParams::NamedCurve(g)) if offer.contains(&g) => g,
            _ => break,
        };
        offer.retain(|&x| x != g);
        s.groups.push(GroupFound {
            code: g,
            name: groups::group_name(g),
        });
    }
    Ok(())
}

/// One ClientHello of `v` with `suites` (plus the RFC 5746 SCSV below TLS 1.3) and `groups`.
pub(super) fn exchange(
    c: &mut Conn,
    v: ProtocolVersion,
    suites: &[u16],
    groups: &[u16],
    opts: &ScanOptions,
) -> Result<Answer, ScanError> {
    let mut h = hello_for(v, suites, groups, opts);
    h.random = random32();
    c.exchange(&h.to_record())
}

/// The ClientHello the enumeration sends.
pub(super) fn hello_for(
    v: ProtocolVersion,
    suites: &[u16],
    groups: &[u16],
    opts: &ScanOptions,
) -> ClientHello {
    let mut list = suites.to_vec();
    if v != ProtocolVersion::Tls13 {
        list.push(hello::SCSV_RENEGOTIATION);
    }
    let mut h = ClientHello::new(v, list, groups.to_vec());
    h.server_name = opts.server_name.clone();
    h
}

/// A refusal in words: the alert (RFC 8446 §6), another version, a close, silence.
pub(super) fn describe(a: &Answer, v: Option<ProtocolVersion>) -> String {
    if let Some((_, d)) = a.flight.alert {
        return format!("alert {} ({d})", alert_name(d));
    }
    if let (Some(h), Some(v)) = (&a.flight.server_hello, v) {
        if h.version != v.code() {
            return match ProtocolVersion::from_code(h.version) {
                Some(o) => format!("the server answered with {}", o.name()),
                None => format!("the server answered with version 0x{:04X}", h.version),
            };
        }
        return format!(
            "the server chose {}, which was not offered",
            registry::name_of(h.suite)
        );
    }
    match &a.end {
        End::Closed => "connection closed".into(),
        End::TimedOut => "no answer within the timeout".into(),
        End::Malformed(e) => format!("not TLS: {e}"),
        End::Complete => "no ServerHello".into(),
    }
}

/// Alert unrecognized_name (RFC 6066 §3).
pub const UNRECOGNIZED_NAME: u8 = 112;

/// Alert description names (RFC 8446 §6, RFC 5246 §7.2, RFC 7507 §2).
pub fn alert_name(d: u8) -> &'static str {
    match d {
        0 => "close_notify",
        10 => "unexpected_message",
        20 => "bad_record_mac",
        21 => "decryption_failed",
        22 => "record_overflow",
        30 => "decompression_failure",
        40 => "handshake_failure",
        41 => "no_certificate",
        42 => "bad_certificate",
        43 => "unsupported_certificate",
        47 => "illegal_parameter",
        48 => "unknown_ca",
        50 => "decode_error",
        51 => "decrypt_error",
        70 => "protocol_version",
        71 => "insufficient_security",
        80 => "internal_error",
        86 => "inappropriate_fallback",
        90 => "user_canceled",
        109 => "missing_extension",
        110 => "unsupported_extension",
        112 => "unrecognized_name",
        116 => "certificate_required",
        120 => "no_application_protocol",
        _ => "alert",
    }
}

/// ClientHello.random: from OpenSSL's generator (a scan needs no secrecy; fresh values keep
/// a server's replay caches and middleboxes out of the way).
fn random32() -> [u8; 32] {
    let mut r = [0u8; 32];
    if openssl::rand::rand_bytes(&mut r).is_err() {
        r = [0x5A; 32];
    }
    r
}

fn random16() -> [u8; 16] {
    let mut r = [0u8; 16];
    r.copy_from_slice(&random32()[..16]);
    r
}

/// Extension types a report names.
pub fn extension_name(t: u16) -> &'static str {
    match t {
        ext::SERVER_NAME => "server_name",
        ext::STATUS_REQUEST => "status_request",
        ext::EC_POINT_FORMATS => "ec_point_formats",
        ext::HEARTBEAT => "heartbeat",
        ext::EXTENDED_MASTER_SECRET => "extended_master_secret",
        ext::SESSION_TICKET => "session_ticket",
        ext::SUPPORTED_VERSIONS => "supported_versions",
        ext::KEY_SHARE => "key_share",
        ext::RENEGOTIATION_INFO => "renegotiation_info",
        _ => "other",
    }
}
