//! What TLS 1.3 hides from a ClientHello scan: everything after the ServerHello is encrypted
//! under the handshake keys (RFC 8446 §2, §4.3, §4.4), so the server's Certificate, its
//! CertificateRequest and a stapled OCSP response are not in the clear as they are up to
//! TLS 1.2 (RFC 5246 §7.4.2, §7.4.4). A TLS 1.3-only server showed the scan none of them: a
//! second, weaker certificate behind another signature scheme went unjudged, and whether the
//! server asks for a client certificate was "not tested".
//!
//! Read here through OpenSSL, one completed handshake per class of signature scheme the
//! server may sign its CertificateVerify with (RFC 8446 §4.2.3, §4.4.3): a server holding an
//! RSA and an ECDSA certificate (`openssl s_server -cert ... -dcert ...`) picks the one the
//! client's `signature_algorithms` allows (RFC 8446 §4.4.2.2), so offering one class at a
//! time shows each certificate, as testssl.sh does with `-sigalgs`. The client verifies
//! nothing (the survey judges the chain) and its security level is 0 (to see a weak key, not
//! to refuse it). OpenSSL's message callback (`SSL_set_msg_callback`) reports every handshake
//! message after decryption, which gives the CertificateRequest; `status_request` is offered
//! and the OCSP response in the server's Certificate entry (RFC 8446 §4.4.2.1) is read back.
//!
//! The client presents the profile's certificate when one is given
//! ([`super::ScanOptions::client_identity`]); without it a server that requires one still
//! completes the handshake on the client's side (TLS 1.3 refuses the client after its
//! Finished), so its certificate is read all the same.
use super::conn::Conn;
use super::enumerate::ScanCertificate;
use super::tls13_client::{self, ClientSetup};
use super::{ProtocolVersion, ScanError, ScanOptions, VersionScan};
use foreign_types::ForeignTypeRef;
use openssl::ssl::{Ssl, StatusType};
use serde::Serialize;
use std::os::raw::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

/// A class of TLS 1.3 signature schemes (RFC 8446 §4.2.3) that one kind of certificate key
/// signs with: `auth` names it in the scan's certificate list, `sigalgs` is the OpenSSL list
/// offered alone to make the server show that certificate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignatureClass {
    /// The key kind, as the scan's certificate list names it.
    pub auth: &'static str,
    /// The signature schemes offered (OpenSSL's names are RFC 8446's).
    pub sigalgs: &'static str,
}

/// The classes asked, one handshake each. RSA keys sign TLS 1.3 handshakes with RSASSA-PSS
/// only (`rsa_pss_rsae_*` for an rsaEncryption key, `rsa_pss_pss_*` for an RSASSA-PSS key,
/// RFC 8446 §4.2.3); PKCS #1 v1.5 schemes are for certificates' own signatures there.
pub const CLASSES: [SignatureClass; 4] = [
    SignatureClass {
        auth: "RSA",
        sigalgs: "rsa_pss_rsae_sha256:rsa_pss_rsae_sha384:rsa_pss_rsae_sha512",
    },
    SignatureClass {
        auth: "RSA-PSS",
        sigalgs: "rsa_pss_pss_sha256:rsa_pss_pss_sha384:rsa_pss_pss_sha512",
    },
    SignatureClass {
        auth: "ECDSA",
        sigalgs: "ecdsa_secp256r1_sha256:ecdsa_secp384r1_sha384:ecdsa_secp521r1_sha512",
    },
    SignatureClass {
        auth: "EdDSA",
        sigalgs: "ed25519:ed448",
    },
];

/// HandshakeType certificate_request (RFC 8446 §4).
const HT_CERTIFICATE_REQUEST: u8 = 13;
/// ContentType handshake (RFC 8446 §5.1), as OpenSSL's message callback reports a decrypted
/// handshake message.
const CT_HANDSHAKE: c_int = 22;
/// `SSL_CTRL_SET_MSG_CALLBACK_ARG` (ssl.h; `SSL_set_msg_callback_arg` is a macro over it).
const SSL_CTRL_SET_MSG_CALLBACK_ARG: c_int = 16;

type MsgCallback = unsafe extern "C" fn(
    write_p: c_int,
    version: c_int,
    content_type: c_int,
    buf: *const c_void,
    len: usize,
    ssl: *mut openssl_sys::SSL,
    arg: *mut c_void,
);

extern "C" {
    // Not wrapped by the `openssl` crate (ssl.h, every OpenSSL since 0.9.7).
    fn SSL_set_msg_callback(ssl: *mut openssl_sys::SSL, cb: Option<MsgCallback>);
}

/// Records the type of every handshake message the server sent (a bit per type below 32).
unsafe extern "C" fn note_message(
    write_p: c_int,
    _version: c_int,
    content_type: c_int,
    buf: *const c_void,
    len: usize,
    _ssl: *mut openssl_sys::SSL,
    arg: *mut c_void,
) {
    if write_p != 0 || content_type != CT_HANDSHAKE || len == 0 || buf.is_null() || arg.is_null() {
        return;
    }
    // SAFETY: OpenSSL passes `len` readable octets at `buf` (ssl.h, SSL_set_msg_callback);
    // only the first, the HandshakeType, is read.
    let kind = unsafe { *(buf as *const u8) };
    if kind < 32 {
        // SAFETY: `arg` is the `AtomicU32` that `handshake` set and keeps alive for as long
        // as the connection that calls back here.
        let seen = unsafe { &*(arg as *const AtomicU32) };
        seen.fetch_or(1 << kind, Ordering::Relaxed);
    }
}

/// What one handshake offering one class showed.
#[derive(Debug)]
pub struct ClassAnswer {
    /// The class offered.
    pub class: SignatureClass,
    /// The handshake completed: the server's leaf certificate (DER) and the suite's name.
    pub accepted: Option<(Vec<u8>, &'static str)>,
    /// A CertificateRequest came in the server's flight (completed handshakes only).
    pub certificate_request: bool,
    /// An OCSP response was stapled to the certificate.
    pub ocsp_stapled: bool,
    /// Why the handshake did not complete (or was not tried: `asked` false).
    pub refusal: Option<String>,
    /// A connection was made (false: the client could not be set up).
    pub asked: bool,
}

/// One class of signature schemes as the scan reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SignatureClassScan {
    /// The key kind ([`SignatureClass::auth`]).
    pub auth: &'static str,
    /// The schemes offered alone.
    pub sigalgs: &'static str,
    /// The server completed a handshake signing with one of them.
    pub accepted: bool,
    /// The refusal (the server's alert or close), or why the class was not asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A TLS 1.3-only client offering `class` alone, security level 0 (to see a weak key, not to
/// refuse it), with `status_request`.
fn client(class: &SignatureClass, opts: &ScanOptions) -> Result<Ssl, ClientSetup> {
    let mut b = tls13_client::builder(opts)?;
    b.set_security_level(0);
    b.set_sigalgs_list(class.sigalgs)?;
    let mut ssl = tls13_client::ssl(&b.build(), opts)?;
    ssl.set_status_type(StatusType::OCSP)?;
    Ok(ssl)
}

/// One handshake offering `class`; `Err` only for the connection cap or a failed connect (a
/// refusal by the server, or a client that could not be set up, is an answer).
fn handshake(
    c: &mut Conn,
    class: SignatureClass,
    opts: &ScanOptions,
) -> Result<ClassAnswer, ScanError> {
    let mut answer = ClassAnswer {
        class,
        accepted: None,
        certificate_request: false,
        ocsp_stapled: false,
        refusal: None,
        asked: false,
    };
    let ssl = match client(&class, opts) {
        Ok(s) => s,
        Err(e) => {
            answer.refusal = Some(format!("client set-up: {e}"));
            return Ok(answer);
        }
    };
    let tcp = c.connect()?;
    answer.asked = true;
    let _ = tcp.set_read_timeout(Some(opts.timeout));
    let seen = Box::new(AtomicU32::new(0));
    let arg = &*seen as *const AtomicU32 as *mut c_void;
    // SAFETY: `ssl` is a live SSL owned here; the callback reads `arg` only while the
    // connection runs, and `seen` (boxed, so its address is fixed) outlives it: it is
    // dropped at the end of this function, after the stream.
    unsafe {
        SSL_set_msg_callback(ssl.as_ptr(), Some(note_message));
        openssl_sys::SSL_ctrl(
            ssl.as_ptr(),
            SSL_CTRL_SET_MSG_CALLBACK_ARG,
            0 as c_long,
            arg,
        );
    }
    match ssl.connect(tcp) {
        Ok(mut s) => {
            let leaf = s.ssl().peer_certificate().and_then(|x| x.to_der().ok());
            let suite = s
                .ssl()
                .current_cipher()
                .and_then(|c| super::registry::by_code(u16::from_be_bytes(c.protocol_id())))
                .map_or("TLS 1.3", |i| i.name);
            answer.ocsp_stapled = s.ssl().ocsp_status().is_some_and(|r| !r.is_empty());
            answer.certificate_request =
                seen.load(Ordering::Relaxed) & (1 << HT_CERTIFICATE_REQUEST) != 0;
            answer.accepted = leaf.map(|d| (d, suite));
            if answer.accepted.is_none() {
                answer.refusal = Some("handshake completed without a server certificate".into());
            }
            let _ = s.shutdown();
        }
        Err(e) => {
            answer.refusal = Some(e.to_string());
        }
    }
    drop(seen);
    Ok(answer)
}

/// What the TLS 1.3 handshakes showed, put into the TLS 1.3 scan ([`merge`]). Does nothing
/// when TLS 1.3 was not accepted.
pub fn read(
    c: &mut Conn,
    versions: &mut [VersionScan],
    opts: &ScanOptions,
) -> Result<(), ScanError> {
    let Some(v13) = versions
        .iter_mut()
        .find(|v| v.version == ProtocolVersion::Tls13 && v.accepted)
    else {
        return Ok(());
    };
    let mut answers = Vec::new();
    for class in CLASSES {
        answers.push(handshake(c, class, opts)?);
    }
    merge(v13, &answers, crate::survey::chain::now_unix());
    Ok(())
}

/// Puts the answers into `v13` (sans-I/O; unit-tested): each class and its outcome; a
/// certificate per class the server signed with, each distinct certificate once;
/// CertificateRequest and OCSP stapling from the completed handshakes (`None` when none
/// completed: nothing was seen).
pub fn merge(v13: &mut VersionScan, answers: &[ClassAnswer], now: i64) {
    let mut completed = false;
    for a in answers {
        v13.signature_classes.push(SignatureClassScan {
            auth: a.class.auth,
            sigalgs: a.class.sigalgs,
            accepted: a.accepted.is_some(),
            detail: a.refusal.clone(),
        });
        let Some((der, suite)) = &a.accepted else {
            continue;
        };
        completed = true;
        v13.certificate_request =
            Some(v13.certificate_request.unwrap_or(false) | a.certificate_request);
        v13.certificate_status = Some(v13.certificate_status.unwrap_or(false) | a.ocsp_stapled);
        let Ok(cert) = crate::survey::chain::describe(der, now) else {
            continue;
        };
        if v13
            .certificates
            .iter()
            .any(|c| c.cert.sha256 == cert.sha256)
        {
            continue;
        }
        v13.certificates.push(ScanCertificate {
            auth: a.class.auth,
            suite,
            cert,
        });
    }
    if !completed {
        v13.certificate_request = None;
        v13.certificate_status = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::asn1::Asn1Time;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::hash::MessageDigest;
    use openssl::nid::Nid;
    use openssl::pkey::PKey;
    use openssl::rsa::Rsa;
    use openssl::x509::{X509Builder, X509NameBuilder};

    const NOW: i64 = 1_800_000_000;

    /// A self-signed certificate: RSA of `bits`, or P-256 for `None`.
    fn cert(cn: &str, rsa_bits: Option<u32>) -> Vec<u8> {
        let k = match rsa_bits {
            Some(b) => PKey::from_rsa(Rsa::generate(b).unwrap()).unwrap(),
            None => {
                let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
                PKey::from_ec_key(EcKey::generate(&g).unwrap()).unwrap()
            }
        };
        let mut n = X509NameBuilder::new().unwrap();
        n.append_entry_by_text("CN", cn).unwrap();
        let n = n.build();
        let mut b = X509Builder::new().unwrap();
        b.set_version(2).unwrap();
        b.set_subject_name(&n).unwrap();
        b.set_issuer_name(&n).unwrap();
        b.set_pubkey(&k).unwrap();
        b.set_not_before(&Asn1Time::from_unix(NOW - 1000).unwrap())
            .unwrap();
        b.set_not_after(&Asn1Time::from_unix(NOW + 1000).unwrap())
            .unwrap();
        b.sign(&k, MessageDigest::sha256()).unwrap();
        b.build().to_der().unwrap()
    }

    fn answer(i: usize, cert: Option<Vec<u8>>, request: bool, ocsp: bool) -> ClassAnswer {
        ClassAnswer {
            class: CLASSES[i],
            refusal: cert.is_none().then(|| "handshake_failure".to_string()),
            accepted: cert.map(|c| (c, "TLS_AES_128_GCM_SHA256")),
            certificate_request: request,
            ocsp_stapled: ocsp,
            asked: true,
        }
    }

    fn v13() -> VersionScan {
        let mut v = VersionScan::new(ProtocolVersion::Tls13);
        v.accepted = true;
        v
    }

    #[test]
    fn each_class_shows_its_certificate_once() {
        let rsa = cert("weak", Some(1024));
        let ec = cert("ec", None);
        let mut v = v13();
        merge(
            &mut v,
            &[
                answer(0, Some(rsa.clone()), true, false),
                answer(1, None, false, false),
                answer(2, Some(ec), true, false),
                // A server answering EdDSA with the RSA certificate again (it would not sign
                // so, but a repeat is listed once whatever the class).
                answer(3, Some(rsa), true, false),
            ],
            NOW,
        );
        let got: Vec<(&str, &str, u32)> = v
            .certificates
            .iter()
            .map(|c| (c.auth, c.cert.key_type.as_str(), c.cert.key_bits))
            .collect();
        assert_eq!(got, vec![("RSA", "RSA", 1024), ("ECDSA", "EC", 256)]);
        let classes: Vec<(&str, bool)> = v
            .signature_classes
            .iter()
            .map(|c| (c.auth, c.accepted))
            .collect();
        assert_eq!(
            classes,
            vec![
                ("RSA", true),
                ("RSA-PSS", false),
                ("ECDSA", true),
                ("EdDSA", true)
            ]
        );
        assert_eq!(
            v.signature_classes[1].detail.as_deref(),
            Some("handshake_failure")
        );
        assert_eq!(v.certificate_request, Some(true));
        assert_eq!(v.certificate_status, Some(false));
    }

    #[test]
    fn a_request_or_staple_in_any_handshake_counts_and_none_completed_says_nothing() {
        let mut v = v13();
        merge(
            &mut v,
            &[
                answer(0, Some(cert("a", None)), false, true),
                answer(2, Some(cert("b", None)), false, false),
            ],
            NOW,
        );
        assert_eq!(v.certificate_request, Some(false));
        assert_eq!(v.certificate_status, Some(true));

        let mut v = v13();
        merge(&mut v, &[answer(0, None, false, false)], NOW);
        assert_eq!((v.certificate_request, v.certificate_status), (None, None));
        assert!(v.certificates.is_empty());
        assert_eq!(v.signature_classes.len(), 1);
    }

    /// The four classes are disjoint and each is a list OpenSSL takes.
    #[test]
    fn every_class_is_a_list_openssl_accepts() {
        for c in CLASSES {
            client(&c, &ScanOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", c.auth));
        }
        let mut all: Vec<&str> = CLASSES.iter().flat_map(|c| c.sigalgs.split(':')).collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
