//! Which protocol versions the server accepts: one handshake per version, the client restricted
//! to that version alone (RFC 5246 §7.4.1.2 `client_version`, RFC 8446 §4.2.1
//! `supported_versions`).
//!
//! The probes run on OpenSSL because rustls has no TLS 1.0/1.1. The OpenSSL backend lowers its
//! security level to 0 when a profile allows a version below 1.2 (Debian's default level 2 would
//! refuse to offer them): a survey client must be permissive to *detect* what the server accepts.
use super::attempt::{After, Runner};
use super::SurveyError;
use crate::backend::BackendKind;
use crate::{TlsError, TlsProfile, TlsVersion};
use serde::Serialize;
use std::collections::BTreeMap;

/// The probe of one version.
#[derive(Clone, Debug, Serialize)]
pub struct VersionProbe {
    /// The version offered alone.
    pub version: TlsVersion,
    /// The server chose it (the handshake completed, or failed only on a certificate check).
    pub accepted: bool,
    /// Why the handshake failed, if it did.
    pub reason: Option<String>,
    /// The server's certificates, if it sent them.
    #[serde(skip)]
    pub(crate) chain: Vec<Vec<u8>>,
    /// The failure was a timeout.
    #[serde(skip)]
    pub(crate) timed_out: bool,
    /// The handshake failed on our own check of the server's chain.
    #[serde(skip)]
    pub(crate) local_cert_failure: bool,
    /// RFC 5746 `renegotiation_info` in the ServerHello (TLS 1.0-1.2 only).
    #[serde(skip)]
    pub(crate) secure_renegotiation: Option<bool>,
}

/// Probes every version; returns the probes and the `"1.0"`..`"1.3"` map.
pub(crate) fn probe(
    r: &mut Runner<'_>,
    client: &TlsProfile,
) -> Result<(Vec<VersionProbe>, BTreeMap<&'static str, bool>), SurveyError> {
    let mut out = Vec::new();
    for v in TlsVersion::ALL {
        let p = super::attempt::derive(client, BackendKind::Openssl, &[v], &[]);
        let probe = match r.backend(&p) {
            Ok(b) => {
                let a = r.run(b.as_ref(), After::Close)?;
                let accepted = a.chose(Some(v), None);
                VersionProbe {
                    version: v,
                    accepted,
                    reason: a.reason(),
                    timed_out: matches!(a.error, Some(TlsError::Timeout)),
                    local_cert_failure: a.local_certificate_failure(),
                    secure_renegotiation: a.secure_renegotiation.filter(|_| accepted),
                    chain: a.chain,
                }
            }
            Err(e) => VersionProbe {
                version: v,
                accepted: false,
                reason: Some(format!("not tested: {e}")),
                chain: Vec::new(),
                timed_out: false,
                local_cert_failure: false,
                secure_renegotiation: None,
            },
        };
        out.push(probe);
    }
    let map = out
        .iter()
        .map(|p| (p.version.short(), p.accepted))
        .collect();
    Ok((out, map))
}
