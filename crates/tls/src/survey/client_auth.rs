//! Whether the server requires a client certificate, and whether it refuses one it cannot trust
//! (IEC 62351-3: mutual authentication is mandatory; a peer without a valid certificate is
//! refused, per public extracts of the standard, `docs/tls-survey.md`).
//!
//! Three connections at the newest accepted version: with the profile's certificate (the
//! baseline), without any, and with a self-signed certificate generated for this run. Each makes
//! the COTP round after the handshake, because a TLS 1.3 server refuses the client's certificate
//! after the client has finished (RFC 8446 §4.4.2.4): the alert arrives at the first read.
use super::attempt::{derive, is_certificate_error, After, Attempt, Runner};
use super::cotp::Round;
use super::SurveyError;
use crate::backend::BackendKind;
use crate::{Side, TlsError, TlsProfile, TlsVersion};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One client-authentication probe.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AuthProbe {
    /// The handshake completed.
    pub handshake: bool,
    /// What the COTP round after the handshake gave.
    pub round: Option<String>,
    /// Whether the server refused this client (`None`: cannot tell, see `detail`).
    pub refused: Option<bool>,
    /// The handshake's error, or why the probe is inconclusive.
    pub detail: Option<String>,
    /// Whether the server sent a CertificateRequest (`None`: not reported, or no ServerHello).
    pub certificate_requested: Option<bool>,
}

/// The client-authentication probes.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClientAuth {
    /// The version they ran at.
    pub version: Option<TlsVersion>,
    /// Whether the profile had a certificate of its own for the baseline (without one the
    /// baseline is a second connection without certificate).
    pub profile_certificate: bool,
    /// With the profile's own certificate.
    pub baseline: AuthProbe,
    /// Without a certificate.
    pub without_cert: AuthProbe,
    /// With a fresh self-signed certificate no CA of the server can know.
    pub untrusted_cert: AuthProbe,
}

fn judge(a: &Attempt, baseline_ok: bool) -> AuthProbe {
    let mut p = AuthProbe {
        handshake: a.ok(),
        round: a.round.as_ref().map(Round::word),
        refused: None,
        detail: a.reason(),
        certificate_requested: a.cert_requested,
    };
    p.refused = match (&a.error, &a.round) {
        (None, Some(r)) if r.let_through() => Some(false),
        // The server's certificate alert after the handshake (TLS 1.3 certificate_required,
        // alert 116, or bad_certificate / unknown_ca; RFC 8446 §4.4.2.4, §6.2) is evidence of its
        // own, also when the baseline had no certificate to offer either.
        (None, Some(Round::CertRefused(_))) => Some(true),
        (None, Some(_)) if baseline_ok => Some(true),
        (None, _) => None,
        // The server's own certificate alert, or its ending the handshake after its ServerHello,
        // is evidence whatever the baseline did (also when the profile has no certificate at all).
        (Some(e), _) if is_certificate_error(e) && peer_said(e) => Some(true),
        (Some(_), _) if a.peer_refused_after_hello() => Some(true),
        (Some(_), _) if baseline_ok => Some(true),
        (Some(_), _) => None,
    };
    if p.refused.is_none() && p.detail.is_none() {
        p.detail = Some(
            "inconclusive: the baseline connection with the profile's certificate failed too"
                .into(),
        );
    }
    p
}

fn peer_said(e: &TlsError) -> bool {
    matches!(
        e,
        TlsError::BadCertificate { by: Side::Peer, .. }
            | TlsError::UnknownCa { by: Side::Peer, .. }
            | TlsError::Expired { by: Side::Peer, .. }
            | TlsError::Revoked { by: Side::Peer, .. }
    )
}

/// A fresh directory for the survey's generated certificates and keys, owner-only (mode 0700,
/// `tempfile`), removed when dropped.
pub(crate) fn temp_dir() -> Result<tempfile::TempDir, SurveyError> {
    tempfile::Builder::new()
        .prefix("gander-survey-")
        .tempdir()
        .map_err(|e| SurveyError::Setup(format!("creating a temporary directory: {e}")))
}

/// Writes a fresh P-256 self-signed client certificate (clientAuth) and its key under `dir`.
fn untrusted_cert(dir: &Path) -> Result<(PathBuf, PathBuf), SurveyError> {
    self_signed(dir, "untrusted", "gander survey untrusted client", true)
}

/// Writes a fresh P-256 self-signed trust anchor under `dir` that no server chains to: the
/// stand-in CA of a survey given none (`survey_after_scan`), so that every backend has the
/// trust anchor it requires and every chain fails "unknown CA", the path that then surveys
/// with verification off.
pub(crate) fn stand_in_anchor(dir: &Path) -> Result<PathBuf, SurveyError> {
    self_signed(
        dir,
        "anchor",
        "gander survey stand-in anchor (no ca given)",
        false,
    )
    .map(|p| p.0)
}

/// A fresh P-256 self-signed certificate and its key under `dir` as `NAME.pem`/`NAME.key`:
/// for client authentication (`client`), else a CA certificate.
fn self_signed(
    dir: &Path,
    name: &str,
    cn: &str,
    client: bool,
) -> Result<(PathBuf, PathBuf), SurveyError> {
    use openssl::asn1::Asn1Time;
    use openssl::ec::{EcGroup, EcKey};
    use openssl::hash::MessageDigest;
    use openssl::nid::Nid;
    use openssl::pkey::PKey;
    use openssl::x509::extension::{ExtendedKeyUsage, KeyUsage};
    use openssl::x509::{X509Builder, X509NameBuilder};
    let e =
        |e: openssl::error::ErrorStack| SurveyError::Setup(format!("untrusted certificate: {e}"));
    let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(e)?;
    let k = PKey::from_ec_key(EcKey::generate(&g).map_err(e)?).map_err(e)?;
    let mut n = X509NameBuilder::new().map_err(e)?;
    n.append_entry_by_text("CN", cn).map_err(e)?;
    let n = n.build();
    let mut b = X509Builder::new().map_err(e)?;
    b.set_version(2).map_err(e)?;
    b.set_subject_name(&n).map_err(e)?;
    b.set_issuer_name(&n).map_err(e)?;
    b.set_pubkey(&k).map_err(e)?;
    b.set_not_before(Asn1Time::days_from_now(0).map_err(e)?.as_ref())
        .map_err(e)?;
    b.set_not_after(Asn1Time::days_from_now(1).map_err(e)?.as_ref())
        .map_err(e)?;
    if client {
        b.append_extension(KeyUsage::new().digital_signature().build().map_err(e)?)
            .map_err(e)?;
        b.append_extension(ExtendedKeyUsage::new().client_auth().build().map_err(e)?)
            .map_err(e)?;
    } else {
        use openssl::x509::extension::BasicConstraints;
        b.append_extension(BasicConstraints::new().critical().ca().build().map_err(e)?)
            .map_err(e)?;
        b.append_extension(
            KeyUsage::new()
                .key_cert_sign()
                .crl_sign()
                .build()
                .map_err(e)?,
        )
        .map_err(e)?;
    }
    b.sign(&k, MessageDigest::sha256()).map_err(e)?;
    let cert = b.build().to_pem().map_err(e)?;
    let key = k.private_key_to_pem_pkcs8().map_err(e)?;
    let (cp, kp) = (
        dir.join(format!("{name}.pem")),
        dir.join(format!("{name}.key")),
    );
    let io = |x: std::io::Error| SurveyError::Setup(format!("writing {}: {x}", dir.display()));
    std::fs::write(&cp, cert).map_err(io)?;
    std::fs::write(&kp, key).map_err(io)?;
    Ok((cp, kp))
}

/// Runs the three probes at the newest accepted version.
pub(crate) fn probe(
    r: &mut Runner<'_>,
    client: &TlsProfile,
    accepted: &[TlsVersion],
) -> Result<ClientAuth, SurveyError> {
    let Some(&v) = accepted.iter().max() else {
        return Ok(ClientAuth::default());
    };
    let mut out = ClientAuth {
        version: Some(v),
        profile_certificate: client.cert.is_some(),
        ..Default::default()
    };
    // A client that cannot be set up is reported in the probe's detail, never dropped silently
    // (two surveys of one process once shared a certificate directory, and the probe of the one
    // whose files the other had removed said nothing at all).
    let run =
        |r: &mut Runner<'_>, p: TlsProfile| -> Result<Result<Attempt, TlsError>, SurveyError> {
            match r.backend(&p) {
                Ok(b) => r.run(b.as_ref(), After::ListenThenRound).map(Ok),
                Err(e) => Ok(Err(e)),
            }
        };
    let not_run = |e: TlsError| AuthProbe {
        detail: Some(format!("not run: the client could not be set up: {e}")),
        ..AuthProbe::default()
    };
    let base = derive(client, BackendKind::Openssl, &[v], &[]);
    let baseline_ok = match run(r, base.clone())? {
        Ok(a) => {
            let ok = a.ok() && a.round.as_ref().is_some_and(Round::let_through);
            out.baseline = AuthProbe {
                handshake: a.ok(),
                round: a.round.as_ref().map(Round::word),
                refused: Some(!ok),
                detail: a.reason(),
                certificate_requested: a.cert_requested,
            };
            ok
        }
        Err(e) => {
            out.baseline = not_run(e);
            false
        }
    };
    let none = TlsProfile {
        cert: None,
        key: None,
        require_client_auth: false,
        ..base.clone()
    };
    out.without_cert = match run(r, none)? {
        Ok(a) => judge(&a, baseline_ok),
        Err(e) => not_run(e),
    };
    let dir = temp_dir()?;
    let (cert, key) = untrusted_cert(dir.path())?;
    let other = TlsProfile {
        cert: Some(cert),
        key: Some(key),
        ..base
    };
    out.untrusted_cert = match run(r, other)? {
        Ok(a) => judge(&a, baseline_ok),
        Err(e) => not_run(e),
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(error: Option<TlsError>, round: Option<Round>) -> Attempt {
        Attempt {
            error,
            round,
            ..Attempt::default()
        }
    }

    #[test]
    fn refusals_are_judged() {
        let cc = Some(Round::Answered { cotp_cc: true });
        assert_eq!(judge(&attempt(None, cc.clone()), true).refused, Some(false));
        assert_eq!(
            judge(&attempt(None, Some(Round::Silent)), false).refused,
            Some(false)
        );
        let alert = Some(Round::Refused("certificate rejected".into()));
        assert_eq!(
            judge(&attempt(None, alert.clone()), true).refused,
            Some(true)
        );
        assert_eq!(judge(&attempt(None, alert), false).refused, None);
        // TLS 1.3 certificate_required (116) after the handshake, no baseline to compare with.
        let required = Some(Round::CertRefused("alert 116".into()));
        assert_eq!(judge(&attempt(None, required), false).refused, Some(true));
        let peer = TlsError::BadCertificate {
            by: Side::Peer,
            detail: "alert 116".into(),
        };
        assert_eq!(judge(&attempt(Some(peer), None), false).refused, Some(true));
        assert_eq!(
            judge(&attempt(Some(TlsError::Closed), None), true).refused,
            Some(true)
        );
        assert_eq!(
            judge(&attempt(Some(TlsError::Closed), None), false).refused,
            None
        );
    }
}
