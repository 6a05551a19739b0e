//! Which catalogue suites the server accepts: one handshake per suite, offering only that suite
//! (RFC 5246 §7.4.1.2: the server picks from the client's list or fails), at the newest version
//! the server accepts among those the suite is defined for.
//!
//! Each suite is offered by the first in-process backend that has it (OpenSSL, then GnuTLS, then
//! rustls); suites none of them can offer (e.g. the static DH_RSA ones of IEC 62351-4, which no
//! library here implements) are listed as not tested. A handshake that reached the certificate
//! checks counts as accepted, since the server chose the suite in its ServerHello before that.
use super::attempt::{derive, After, Runner};
use super::SurveyError;
use crate::backend::{self, BackendKind};
use crate::suites::{IecStatus, CATALOGUE};
use crate::{TlsProfile, TlsVersion};
use serde::Serialize;

/// The probe of one suite.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteProbe {
    /// IANA name.
    pub name: &'static str,
    /// IANA code point, `0xC02F`.
    pub code: String,
    /// The version the suite was offered with (`None`: the server accepts none it is defined for).
    pub version: Option<TlsVersion>,
    /// The server chose the suite.
    pub accepted: bool,
    /// Handshake time in ms, for handshakes that completed.
    pub ht_ms: Option<f64>,
    /// IEC 62351-3/-4 status in gander's catalogue.
    pub iec_status: IecStatus,
    /// The backend that offered it.
    pub backend: &'static str,
    /// Why it was not accepted, or why an accepted handshake then failed.
    pub reason: Option<String>,
}

/// The backend that can offer `code` at `v`, OpenSSL first (it reports the most).
fn backend_for(code: u16, v: TlsVersion) -> Option<BackendKind> {
    [
        BackendKind::Openssl,
        BackendKind::Gnutls,
        BackendKind::Rustls,
    ]
    .into_iter()
    .find(|b| {
        let c = backend::capabilities(*b);
        c.in_process && c.suites.contains(&code) && c.versions.contains(&v)
    })
}

/// Whether quick mode tests the suite.
pub(crate) fn in_quick(s: IecStatus) -> bool {
    matches!(s, IecStatus::Mandatory | IecStatus::Recommended)
}

/// Probes the catalogue (or its mandatory and recommended part when `quick`).
pub(crate) fn probe(
    r: &mut Runner<'_>,
    client: &TlsProfile,
    accepted_versions: &[TlsVersion],
) -> Result<(Vec<SuiteProbe>, Vec<&'static str>), SurveyError> {
    let mut out = Vec::new();
    let mut untested = Vec::new();
    for s in CATALOGUE
        .iter()
        .filter(|s| !r.opts.quick || in_quick(s.iec))
    {
        // The backend is chosen on the suite's newest version, so that the choice does not
        // depend on the server.
        let Some(b) = s
            .versions()
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .find_map(|v| backend_for(s.code, v))
        else {
            untested.push(s.name);
            continue;
        };
        let version = s
            .versions()
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .find(|v| accepted_versions.contains(v) && backend_for(s.code, *v).is_some());
        let mut p = SuiteProbe {
            name: s.name,
            code: format!("0x{:04X}", s.code),
            version,
            accepted: false,
            ht_ms: None,
            iec_status: s.iec,
            backend: b.name(),
            reason: None,
        };
        let Some(v) = version else {
            p.reason = Some("the server accepts no version this suite is defined for".into());
            out.push(p);
            continue;
        };
        let b = backend_for(s.code, v).unwrap_or(b);
        p.backend = b.name();
        match r.backend(&derive(client, b, &[v], &[s.name])) {
            Ok(be) => {
                let a = r.run(be.as_ref(), After::Close)?;
                p.accepted = a.chose(Some(v), Some(s.code));
                p.ht_ms = a.ht_ms;
                p.reason = a.reason();
            }
            Err(e) => p.reason = Some(format!("not tested: {e}")),
        }
        out.push(p);
    }
    Ok((out, untested))
}
