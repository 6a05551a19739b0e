//! ROBOT, the Return Of Bleichenbacher's Oracle Threat (Böck, Somorovsky, Young, USENIX Security
//! 2018; CVE-2017-13099 and the vendor CVEs of that disclosure): a server that answers an RSA
//! ClientKeyExchange differently depending on whether its PKCS #1 v1.5 padding is right lets an
//! attacker decrypt a recorded RSA key exchange, or sign with the server's key, with enough
//! queries (Bleichenbacher, CRYPTO 1998). RFC 5246 §7.4.7.1 requires the server to go on with a
//! random premaster secret whatever the padding, so that every malformed message looks alike.
//!
//! The check, after the paper's method: five ClientKeyExchange messages with the server's own RSA
//! key ([`Payload`]: one correctly padded, four malformed the ways the paper found servers to
//! tell apart), each followed by ChangeCipherSpec and a Finished the server cannot verify, each on
//! its own connection; the server's answers (the alert, and whether it then closes, resets or
//! waits) are compared ([`classify`]). All alike: no oracle. The correctly padded one alone
//! differs: a weak oracle (the attack needs too many queries to be practical, the paper's
//! "weak"). The malformed ones differ among themselves: a strong oracle. An oracle found is
//! confirmed by a second round of the five; answers that change between rounds leave the check
//! undetermined (a busy or flaky server, not an oracle).
//!
//! Only the padding and the encryption are computed here, nothing is decrypted: the premaster
//! secret is never used for keys, and the "Finished" is 64 octets of filler.
//!
//! This module is sans-I/O except [`check`], which drives [`Conn`].
use super::conn::parse_flight_records;
use super::conn::{drain, Conn, Drained};
use super::enumerate::{alert_name, exchange, VersionScan};
use super::registry::{self, SuiteInfo};
use super::weakness::WeaknessState;
use super::{ProtocolVersion, ScanError, ScanOptions};
use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// Where the ROBOT paper and its public tools describe the attack and the check.
pub const SOURCE: &str = "ROBOT: Böck, Somorovsky, Young, \"Return Of Bleichenbacher's Oracle Threat\", USENIX Security 2018 (CVE-2017-13099 and vendor CVEs) [P]; RFC 5246 §7.4.7.1: on bad padding go on with a random premaster secret, indistinguishably [P]";

/// The five premaster-secret plaintexts (the paper's Table 2 and its public test script):
/// `00 02 || PS || 00 || version || 46 random octets` and four malformed variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Payload {
    /// PKCS #1 v1.5 conformant, the right version: what an honest client sends.
    Valid,
    /// `41 17` instead of `00 02`: not PKCS conformant at all.
    WrongFirstTwoBytes,
    /// The `00` separator in the wrong place: the "premaster" is 2 octets short.
    WrongPosition00,
    /// No `00` separator at all.
    No00InTheMiddle,
    /// Conformant padding, but version 0x0202 in the premaster (RFC 5246 §7.4.7.1 check).
    WrongVersion,
}

impl Payload {
    /// All five, in the order sent.
    pub const ALL: [Payload; 5] = [
        Payload::Valid,
        Payload::WrongFirstTwoBytes,
        Payload::WrongPosition00,
        Payload::No00InTheMiddle,
        Payload::WrongVersion,
    ];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Payload::Valid => "valid",
            Payload::WrongFirstTwoBytes => "wrong-first-two-bytes",
            Payload::WrongPosition00 => "wrong-position-00",
            Payload::No00InTheMiddle => "no-00-in-the-middle",
            Payload::WrongVersion => "wrong-version",
        }
    }
}

/// Octets of the premaster secret after its version (RFC 5246 §7.4.7.1: 48 in all).
const PMS_RANDOM: usize = 46;
/// The smallest padding string PKCS #1 v1.5 allows (RFC 8017 §7.2.1: at least eight octets).
const MIN_PS: usize = 8;

/// The `k`-octet plaintext of `p` for a modulus of `k` octets and the ClientHello's version
/// (`None` when the modulus is too small to hold a premaster secret with PKCS #1 padding).
/// PS and the secret are non-zero filler: nothing is ever derived from them.
pub fn plaintext(p: Payload, k: usize, client_version: u16) -> Option<Vec<u8>> {
    // 00 02 | PS | 00 | version(2) | random(46): 51 octets besides PS.
    let ps_len = k.checked_sub(3 + 2 + PMS_RANDOM)?;
    if ps_len < MIN_PS {
        return None;
    }
    let ps = (0..ps_len).map(|i| 0x5A ^ (i as u8 & 0x0F) | 0x01);
    let secret = (0..PMS_RANDOM).map(|i| 0xA0 | (i as u8 & 0x0F));
    let ver = client_version.to_be_bytes();
    let mut m = Vec::with_capacity(k);
    match p {
        Payload::Valid => {
            m.extend([0x00, 0x02]);
            m.extend(ps);
            m.push(0x00);
            m.extend(ver);
            m.extend(secret);
        }
        Payload::WrongFirstTwoBytes => {
            m.extend([0x41, 0x17]);
            m.extend(ps);
            m.push(0x00);
            m.extend(ver);
            m.extend(secret);
        }
        Payload::WrongPosition00 => {
            m.extend([0x00, 0x02]);
            m.extend(ps);
            m.push(0x11);
            m.extend(secret);
            m.extend([0x00, 0x11]);
        }
        Payload::No00InTheMiddle => {
            m.extend([0x00, 0x02]);
            m.extend(ps);
            m.extend([0x11, 0x11, 0x11]);
            m.extend(secret);
        }
        Payload::WrongVersion => {
            m.extend([0x00, 0x02]);
            m.extend(ps);
            m.push(0x00);
            m.extend([0x02, 0x02]);
            m.extend(secret);
        }
    }
    debug_assert_eq!(m.len(), k);
    Some(m)
}

/// Why a ClientKeyExchange could not be made from the server's certificate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RobotError {
    /// The certificate is not DER X.509.
    #[error("server certificate unreadable: {0}")]
    Certificate(openssl::error::ErrorStack),
    /// The certificate's key is not RSA.
    #[error("the server's certificate has no RSA key")]
    NotRsa,
    /// The modulus cannot hold a PKCS #1 v1.5 premaster secret.
    #[error("RSA modulus of {0} octets too small for a premaster secret")]
    ModulusTooSmall(usize),
    /// Raw RSA failed (the plaintext is not below the modulus).
    #[error("RSA encryption failed: {0}")]
    Encrypt(openssl::error::ErrorStack),
}

/// The server's RSA public key, from its certificate (DER).
pub struct ServerKey {
    rsa: openssl::rsa::Rsa<openssl::pkey::Public>,
}

impl ServerKey {
    /// Reads the RSA key of a DER certificate.
    pub fn from_certificate(der: &[u8]) -> Result<ServerKey, RobotError> {
        let cert = openssl::x509::X509::from_der(der).map_err(RobotError::Certificate)?;
        let key = cert.public_key().map_err(RobotError::Certificate)?;
        let rsa = key.rsa().map_err(|_| RobotError::NotRsa)?;
        Ok(ServerKey { rsa })
    }

    /// Modulus size in bits.
    pub fn bits(&self) -> u32 {
        self.rsa.n().num_bits() as u32
    }

    /// `m^e mod n` of the payload's plaintext: the EncryptedPreMasterSecret (raw RSA, the
    /// padding is ours: `Padding::NONE`).
    pub fn encrypt(&self, p: Payload, client_version: u16) -> Result<Vec<u8>, RobotError> {
        let k = self.rsa.size() as usize;
        let m = plaintext(p, k, client_version).ok_or(RobotError::ModulusTooSmall(k))?;
        let mut c = vec![0u8; k];
        let n = self
            .rsa
            .public_encrypt(&m, &mut c, openssl::rsa::Padding::NONE)
            .map_err(RobotError::Encrypt)?;
        c.truncate(n);
        Ok(c)
    }
}

/// The records sent after the server's first flight: an empty Certificate if one was requested
/// (RFC 5246 §7.4.6), the ClientKeyExchange with `encrypted` (RFC 5246 §7.4.7.1: a two-octet
/// length in TLS 1.0 and later), ChangeCipherSpec, and a Finished record of filler (the server
/// cannot decrypt it whatever the padding: only how it fails matters).
pub fn client_flight(version: u16, encrypted: &[u8], empty_certificate: bool) -> Vec<u8> {
    let [maj, min] = version.to_be_bytes();
    let mut out = Vec::new();
    let handshake = |t: u8, body: &[u8], out: &mut Vec<u8>| {
        let len = body.len() + 4;
        out.extend([22, maj, min, (len >> 8) as u8, len as u8, t]);
        out.extend(&(body.len() as u32).to_be_bytes()[1..]);
        out.extend(body);
    };
    if empty_certificate {
        handshake(11, &[0, 0, 0], &mut out);
    }
    let mut cke = Vec::with_capacity(encrypted.len() + 2);
    cke.extend((encrypted.len() as u16).to_be_bytes());
    cke.extend(encrypted);
    handshake(16, &cke, &mut out);
    out.extend([20, maj, min, 0, 1, 1]);
    out.extend([22, maj, min, 0, 64]);
    out.extend((0..64u8).map(|i| i.wrapping_mul(37) ^ 0xC3));
    out
}

/// How the server answered one payload: its first alert and how the connection then ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// The first alert's description, if any.
    pub alert: Option<u8>,
    /// The server sent records other than alerts (it went on as if the handshake were good).
    pub other_records: bool,
    /// How the connection ended within the wait.
    pub end: Drained,
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.alert {
            Some(d) => write!(f, "alert {} ({d})", alert_name(d))?,
            None => write!(f, "no alert")?,
        }
        if self.other_records {
            write!(f, ", other records")?;
        }
        let end = match self.end {
            Drained::Closed => "then closed",
            Drained::Reset => "then reset",
            Drained::Silent => "then silent",
        };
        write!(f, ", {end}")
    }
}

/// The oracle the answers show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Oracle {
    /// Every payload got the same answer.
    None,
    /// Only the conformant payload is told apart (the paper's weak oracle).
    Weak,
    /// The malformed payloads are told apart from each other (the paper's strong oracle).
    Strong,
}

/// The paper's classification of one round of answers (in [`Payload::ALL`] order): all alike,
/// no oracle; the three non-conformant ones (wrong first bytes, misplaced or missing separator)
/// alike, so only a conformant message stands out, a weak oracle; else a strong one.
pub fn classify(answers: &[Answer; 5]) -> Oracle {
    if answers.iter().all(|a| *a == answers[0]) {
        Oracle::None
    } else if answers[1] == answers[2] && answers[2] == answers[3] {
        Oracle::Weak
    } else {
        Oracle::Strong
    }
}

/// The verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A strong oracle, seen twice alike.
    Vulnerable,
    /// A weak oracle, seen twice alike.
    WeakOracle,
    /// The server answered all five alike.
    NotVulnerable,
    /// No RSA key exchange accepted: nothing to attack.
    NotApplicable,
    /// Tested; the answers did not tell (inconsistent, or refused before the key exchange).
    Undetermined,
}

/// One payload's answers, one per round.
#[derive(Clone, Debug, Serialize)]
pub struct PayloadAnswers {
    /// [`Payload::name`].
    pub payload: &'static str,
    /// The answers in words.
    pub answers: Vec<String>,
}

/// What the ROBOT check found.
#[derive(Clone, Debug, Serialize)]
pub struct RobotResult {
    /// The verdict.
    pub verdict: Verdict,
    /// The version and suite the payloads were sent with.
    pub version: Option<ProtocolVersion>,
    /// The suite the server chose (IANA name).
    pub suite: Option<String>,
    /// The server's RSA modulus, bits.
    pub modulus_bits: Option<u32>,
    /// Each payload's answer(s), in words: one per round.
    pub answers: Vec<PayloadAnswers>,
    /// What led to the verdict.
    pub detail: String,
    /// The public source.
    pub source: &'static str,
}

impl RobotResult {
    fn without(verdict: Verdict, detail: impl Into<String>) -> RobotResult {
        RobotResult {
            verdict,
            version: None,
            suite: None,
            modulus_bits: None,
            answers: Vec::new(),
            detail: detail.into(),
            source: SOURCE,
        }
    }

    /// The weakness row of the scan's list.
    pub fn weakness_state(&self) -> WeaknessState {
        match self.verdict {
            Verdict::Vulnerable | Verdict::WeakOracle => WeaknessState::Vulnerable,
            Verdict::NotVulnerable => WeaknessState::NotVulnerable,
            Verdict::NotApplicable => WeaknessState::NotTested,
            Verdict::Undetermined => WeaknessState::Undetermined,
        }
    }
}

/// The RSA key-exchange suites of a version's accepted ones (static RSA; not the export suites,
/// whose ServerKeyExchange carries a temporary key, nor RSA_PSK).
pub fn rsa_kx_suites(s: &[SuiteInfo]) -> Vec<u16> {
    s.iter()
        .filter(|s| s.kx == "RSA" && !s.export)
        .map(|s| s.code)
        .collect()
}

/// Runs the check at the newest version from TLS 1.0 to 1.2 that accepted an RSA key-exchange
/// suite (SSL 3.0's ClientKeyExchange has another layout and is not tried).
pub fn check(
    c: &mut Conn,
    versions: &[VersionScan],
    opts: &ScanOptions,
) -> Result<RobotResult, ScanError> {
    let target = versions.iter().rev().find(|v| {
        v.accepted
            && (ProtocolVersion::Tls10..=ProtocolVersion::Tls12).contains(&v.version)
            && !rsa_kx_suites(&v.suites).is_empty()
    });
    let Some(vs) = target else {
        let ssl3 = versions
            .iter()
            .any(|v| v.version == ProtocolVersion::Ssl3 && !rsa_kx_suites(&v.suites).is_empty());
        return Ok(if ssl3 {
            RobotResult::without(
                Verdict::Undetermined,
                "RSA key exchange only in SSL 3.0, which this check does not try",
            )
        } else {
            RobotResult::without(
                Verdict::NotApplicable,
                "no RSA key-exchange suite accepted (TLS 1.0-1.2): no ciphertext to attack",
            )
        });
    };
    let suites = rsa_kx_suites(&vs.suites);
    let wait = opts.timeout.min(Duration::from_secs(2));
    let mut rounds: Vec<[Answer; 5]> = Vec::new();
    let mut facts: Option<(u16, u32, bool)> = None;
    for _round in 0..2 {
        let mut got: Vec<Answer> = Vec::with_capacity(5);
        for p in Payload::ALL {
            match one(c, vs.version, &suites, p, opts, wait)? {
                Ok((a, suite, bits, cr)) => {
                    facts = Some((suite, bits, cr));
                    got.push(a);
                }
                Err(why) => {
                    let mut r = RobotResult::without(Verdict::Undetermined, why.to_string());
                    r.version = Some(vs.version);
                    return Ok(r);
                }
            }
        }
        let Ok(arr) = <[Answer; 5]>::try_from(got) else {
            break;
        };
        let oracle = classify(&arr);
        rounds.push(arr);
        if oracle == Oracle::None {
            break;
        }
    }
    Ok(judge(vs.version, facts, &rounds))
}

/// The verdict from one or two rounds of answers (sans-I/O, unit-tested).
pub fn judge(
    version: ProtocolVersion,
    facts: Option<(u16, u32, bool)>,
    rounds: &[[Answer; 5]],
) -> RobotResult {
    let mut r = RobotResult::without(Verdict::Undetermined, "no answers");
    r.version = Some(version);
    if let Some((suite, bits, _)) = facts {
        r.suite = Some(registry::name_of(suite));
        r.modulus_bits = Some(bits);
    }
    r.answers = Payload::ALL
        .iter()
        .enumerate()
        .map(|(i, p)| PayloadAnswers {
            payload: p.name(),
            answers: rounds.iter().map(|a| a[i].to_string()).collect(),
        })
        .collect();
    let cert_requested = facts.is_some_and(|f| f.2);
    let Some(first) = rounds.first() else {
        return r;
    };
    let oracle = classify(first);
    (r.verdict, r.detail) = match oracle {
        Oracle::None => {
            let a = &first[0];
            // A server that refuses the (empty) client certificate ends the handshake before
            // it decrypts anything: alike answers then prove nothing about the padding check.
            let refused_client = matches!(a.alert, Some(40 | 42..=46 | 48 | 49 | 116));
            if cert_requested && refused_client {
                (
                    Verdict::Undetermined,
                    format!("the server asks for a client certificate and answered every payload with {a}: refused before the key exchange was judged"),
                )
            } else {
                (
                    Verdict::NotVulnerable,
                    format!("all five ClientKeyExchange payloads answered alike: {a}"),
                )
            }
        }
        _ if rounds.len() < 2 || rounds[0] != rounds[1] => (
            Verdict::Undetermined,
            "the answers differed, but not the same way twice: no consistent oracle".to_string(),
        ),
        Oracle::Weak => (
            Verdict::WeakOracle,
            format!(
                "only the PKCS #1-conformant payload is told apart ({} against {}), twice alike: a weak oracle",
                first[0], first[1]
            ),
        ),
        Oracle::Strong => (
            Verdict::Vulnerable,
            "malformed payloads are told apart from each other, twice alike: a strong oracle"
                .to_string(),
        ),
    };
    r
}

/// Why one ROBOT connection gave no answer to compare (the verdict is then not determined).
#[derive(Debug, thiserror::Error)]
enum NoAnswer {
    /// The server's first flight is not what an RSA key exchange needs.
    #[error("{0}")]
    Flight(String),
    /// The server's certificate gave no usable RSA key.
    #[error(transparent)]
    Key(#[from] RobotError),
}

type OneAnswer = Result<(Answer, u16, u32, bool), NoAnswer>;

/// One connection: ClientHello with the RSA suites, the server's first flight, then the
/// payload's ClientKeyExchange, ChangeCipherSpec and filler Finished; the server's answer.
fn one(
    c: &mut Conn,
    v: ProtocolVersion,
    suites: &[u16],
    p: Payload,
    opts: &ScanOptions,
    wait: Duration,
) -> Result<OneAnswer, ScanError> {
    let mut a = exchange(c, v, suites, &super::groups::offered(false), opts)?;
    let Some(sh) = a.flight.server_hello.clone() else {
        return Ok(Err(NoAnswer::Flight(format!(
            "no ServerHello to a ClientHello of the RSA suites ({})",
            super::enumerate::describe(&a, Some(v))
        ))));
    };
    if !suites.contains(&sh.suite) || sh.version != v.code() {
        return Ok(Err(NoAnswer::Flight(format!(
            "the server chose {} at 0x{:04X}, not an offered RSA suite",
            registry::name_of(sh.suite),
            sh.version
        ))));
    }
    let (Some(tcp), true) = (a.stream.as_mut(), a.flight.hello_done) else {
        return Ok(Err(NoAnswer::Flight("no ServerHelloDone to answer".into())));
    };
    let Some(der) = a.flight.leaf_certificate.as_deref() else {
        return Ok(Err(NoAnswer::Flight(
            "no server certificate in the first flight".into(),
        )));
    };
    let key = match ServerKey::from_certificate(der) {
        Ok(k) => k,
        Err(e) => return Ok(Err(NoAnswer::Key(e))),
    };
    let enc = match key.encrypt(p, v.client_version()) {
        Ok(e) => e,
        Err(e) => return Ok(Err(NoAnswer::Key(e))),
    };
    let cr = a.flight.certificate_request;
    let bytes = client_flight(v.code(), &enc, cr);
    let (buf, end) = drain(tcp, &bytes, wait);
    let records = parse_flight_records(&buf);
    let answer = Answer {
        alert: records.as_ref().and_then(|f| f.alert.map(|a| a.1)),
        other_records: match &records {
            Some(f) => f.change_cipher_spec || f.heartbeat || (f.alert.is_none() && f.consumed > 0),
            None => !buf.is_empty(),
        },
        end,
    };
    Ok(Ok((answer, sh.suite, key.bits(), cr)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ans(alert: Option<u8>, end: Drained) -> Answer {
        Answer {
            alert,
            other_records: false,
            end,
        }
    }

    #[test]
    fn plaintexts_have_the_papers_shapes() {
        let k = 256;
        let v = plaintext(Payload::Valid, k, 0x0303).unwrap();
        assert_eq!(v.len(), k);
        assert_eq!(&v[..2], &[0, 2]);
        assert!(v[2..k - 49].iter().all(|b| *b != 0));
        assert_eq!(&v[k - 49..k - 46], &[0, 3, 3]);
        let w = plaintext(Payload::WrongFirstTwoBytes, k, 0x0303).unwrap();
        assert_eq!(&w[..2], &[0x41, 0x17]);
        assert_eq!(&w[2..], &v[2..]);
        let p = plaintext(Payload::WrongPosition00, k, 0x0303).unwrap();
        // The first zero after the header is two octets from the end.
        let z = p[2..].iter().position(|b| *b == 0).unwrap() + 2;
        assert_eq!(z, k - 2);
        let n = plaintext(Payload::No00InTheMiddle, k, 0x0303).unwrap();
        assert!(n[2..].iter().all(|b| *b != 0));
        let r = plaintext(Payload::WrongVersion, k, 0x0303).unwrap();
        assert_eq!(&r[k - 49..k - 46], &[0, 2, 2]);
        assert!(plaintext(Payload::Valid, 58, 0x0303).is_none());
        assert!(plaintext(Payload::Valid, 59, 0x0303).is_some());
    }

    /// Answer patterns recorded from servers, classified as the paper does.
    #[test]
    fn oracle_classification() {
        use Drained::*;
        // OpenSSL 3 (s_server, TLS_RSA_WITH_AES_128_GCM_SHA256): bad_record_mac for all five.
        let same = std::array::from_fn(|_| ans(Some(20), Closed));
        assert_eq!(classify(&same), Oracle::None);
        // The paper's weak case: the conformant message gets its own answer.
        let mut weak = same.clone();
        weak[0] = ans(Some(51), Closed);
        assert_eq!(classify(&weak), Oracle::Weak);
        // A wrong version alone differing is also only the conformant padding told apart.
        let mut weak_v = same.clone();
        weak_v[4] = ans(None, Silent);
        assert_eq!(classify(&weak_v), Oracle::Weak);
        // Strong: a malformed padding answered otherwise than another malformed one (the
        // paper's F5 pattern: a reset for a missing separator, an alert otherwise).
        let mut strong = same.clone();
        strong[3] = ans(Some(20), Reset);
        assert_eq!(classify(&strong), Oracle::Strong);
        let mut strong2 = same.clone();
        strong2[1] = ans(None, Silent);
        assert_eq!(classify(&strong2), Oracle::Strong);
    }

    #[test]
    fn verdicts_need_two_alike_rounds() {
        use Drained::*;
        let same: [Answer; 5] = std::array::from_fn(|_| ans(Some(20), Closed));
        let mut strong = same.clone();
        strong[2] = ans(Some(10), Closed);
        let facts = Some((0x009C, 2048, false));
        let v = ProtocolVersion::Tls12;
        assert_eq!(
            judge(v, facts, std::slice::from_ref(&same)).verdict,
            Verdict::NotVulnerable
        );
        assert_eq!(
            judge(v, facts, &[strong.clone(), strong.clone()]).verdict,
            Verdict::Vulnerable
        );
        assert_eq!(
            judge(v, facts, &[strong.clone(), same.clone()]).verdict,
            Verdict::Undetermined
        );
        let mut weak = same.clone();
        weak[0] = ans(None, Silent);
        assert_eq!(
            judge(v, facts, &[weak.clone(), weak]).verdict,
            Verdict::WeakOracle
        );
        // Alike refusals of the empty client certificate tell nothing.
        let refused: [Answer; 5] = std::array::from_fn(|_| ans(Some(40), Closed));
        assert_eq!(
            judge(
                v,
                Some((0x009C, 2048, true)),
                std::slice::from_ref(&refused)
            )
            .verdict,
            Verdict::Undetermined
        );
        assert_eq!(judge(v, facts, &[refused]).verdict, Verdict::NotVulnerable);
        let r = judge(v, facts, &[same]);
        assert_eq!(r.answers.len(), 5);
        assert_eq!(r.suite.as_deref(), Some("TLS_RSA_WITH_AES_128_GCM_SHA256"));
    }

    #[test]
    fn encryption_round_trips_with_the_private_key() {
        let rsa = openssl::rsa::Rsa::generate(1024).unwrap();
        let pk = openssl::pkey::PKey::from_rsa(rsa.clone()).unwrap();
        let mut b = openssl::x509::X509Builder::new().unwrap();
        b.set_pubkey(&pk).unwrap();
        let now = openssl::asn1::Asn1Time::days_from_now(0).unwrap();
        b.set_not_before(&now).unwrap();
        b.set_not_after(&now).unwrap();
        b.sign(&pk, openssl::hash::MessageDigest::sha256()).unwrap();
        let der = b.build().to_der().unwrap();
        let key = ServerKey::from_certificate(&der).unwrap();
        assert_eq!(key.bits(), 1024);
        for p in Payload::ALL {
            let c = key.encrypt(p, 0x0303).unwrap();
            let mut m = vec![0u8; 128];
            let n = rsa
                .private_decrypt(&c, &mut m, openssl::rsa::Padding::NONE)
                .unwrap();
            assert_eq!(&m[..n], &plaintext(p, 128, 0x0303).unwrap()[..]);
        }
        // Only the conformant one decrypts as PKCS #1 v1.5 to a 48-octet secret.
        let c = key.encrypt(Payload::Valid, 0x0303).unwrap();
        let mut m = vec![0u8; 128];
        let n = rsa
            .private_decrypt(&c, &mut m, openssl::rsa::Padding::PKCS1)
            .unwrap();
        assert_eq!(n, 48);
    }

    proptest! {
        /// The client flight parses back as the records it claims, for any ciphertext.
        #[test]
        fn client_flight_records(enc in proptest::collection::vec(any::<u8>(), 0..600), cert in any::<bool>()) {
            let b = client_flight(0x0303, &enc, cert);
            let mut at = 0;
            let mut types = Vec::new();
            while at < b.len() {
                let len = u16::from_be_bytes([b[at + 3], b[at + 4]]) as usize;
                types.push((b[at], b.get(at + 5).copied()));
                at += 5 + len;
            }
            prop_assert_eq!(at, b.len());
            let mut want = vec![];
            if cert { want.push((22, Some(11))); }
            want.extend([(22, Some(16)), (20, Some(1))]);
            prop_assert_eq!(&types[..types.len() - 1], &want[..]);
            let cke_at = if cert { 5 + 7 } else { 0 };
            let n = u16::from_be_bytes([b[cke_at + 9], b[cke_at + 10]]) as usize;
            prop_assert_eq!(&b[cke_at + 11..cke_at + 11 + n], &enc[..]);
        }
    }
}
