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

/// One suite handshake to make: (index into the probes, name, code point, backend, version).
type Job = (usize, &'static str, u16, BackendKind, TlsVersion);
/// What one suite handshake found: (accepted, HT ms, reason).
type Found = (bool, Option<f64>, Option<String>);

/// Whether quick mode tests the suite.
pub(crate) fn in_quick(s: IecStatus) -> bool {
    matches!(s, IecStatus::Mandatory | IecStatus::Recommended)
}

/// Probes the catalogue (or its mandatory and recommended part when `quick`), with
/// `opts.parallel` connections at once (each worker paced on its own).
///
/// With a `scan` made before (`crate::scan`), a suite the scan's crafted ClientHellos found
/// refused at the version it would be offered with is not asked again through a library: the
/// scan offered every IANA code point of that version and the server never chose this one. Only
/// a version the scan finished and found accepted counts (a capped or refused version in the
/// scan is asked again, so a disagreement between the two shows).
pub(crate) fn probe(
    r: &mut Runner<'_>,
    client: &TlsProfile,
    accepted_versions: &[TlsVersion],
    scan: Option<&crate::scan::ScanReport>,
) -> Result<(Vec<SuiteProbe>, Vec<&'static str>), SurveyError> {
    let mut out = Vec::new();
    let mut untested = Vec::new();
    // (index into `out`, suite code, backend, version) of each handshake to make.
    let mut jobs: Vec<Job> = Vec::new();
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
        match version {
            None => {
                p.reason = Some("the server accepts no version this suite is defined for".into())
            }
            Some(v) => {
                let b = backend_for(s.code, v).unwrap_or(b);
                p.backend = b.name();
                if scan.is_some_and(|sc| refused_in_scan(sc, s.code, v)) {
                    p.reason = Some(format!(
                        "never chosen in the scan's ClientHellos of every TLS {} suite; no library handshake made",
                        v.short()
                    ));
                } else {
                    jobs.push((out.len(), s.name, s.code, b, v));
                }
            }
        }
        out.push(p);
    }
    let workers = r.opts.parallel.clamp(1, jobs.len().max(1));
    let one = |r: &mut Runner<'_>, (_, name, code, b, v): Job| -> Result<Found, SurveyError> {
        match r.backend(&derive(client, b, &[v], &[name])) {
            Ok(be) => {
                let a = r.run(be.as_ref(), After::Close)?;
                Ok((a.chose(Some(v), Some(code)), a.ht_ms, a.reason()))
            }
            Err(e) => Ok((false, None, Some(format!("not tested: {e}")))),
        }
    };
    let results: Vec<(usize, Found)> = if workers == 1 {
        let mut res = Vec::new();
        for j in &jobs {
            res.push((j.0, one(r, *j)?));
        }
        res
    } else {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let base = r.clone();
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    let mut w = Runner {
                        handshakes: 0,
                        ..base.clone()
                    };
                    let (next, jobs, one) = (&next, &jobs, &one);
                    scope.spawn(move || {
                        let mut res = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            let Some(j) = jobs.get(i) else { break };
                            match one(&mut w, *j) {
                                Ok(x) => res.push((j.0, x)),
                                Err(e) => return (w.handshakes, w.max_ht_ms, Err(e)),
                            }
                        }
                        (w.handshakes, w.max_ht_ms, Ok(res))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        (
                            0,
                            0.0,
                            Err(SurveyError::Setup("a suite worker panicked".into())),
                        )
                    })
                })
                .collect()
        });
        let mut res = Vec::new();
        for (n, ht, o) in outcomes {
            r.handshakes += n;
            r.max_ht_ms = r.max_ht_ms.max(ht);
            res.extend(o?);
        }
        res
    };
    for (i, (accepted, ht_ms, reason)) in results {
        if let Some(p) = out.get_mut(i) {
            p.accepted = accepted;
            p.ht_ms = ht_ms;
            p.reason = reason;
        }
    }
    Ok((out, untested))
}

/// Whether the scan finished `v`, found it accepted, and never saw the server choose `code`.
pub(crate) fn refused_in_scan(scan: &crate::scan::ScanReport, code: u16, v: TlsVersion) -> bool {
    use crate::scan::ProtocolVersion as P;
    let pv = match v {
        TlsVersion::Tls10 => P::Tls10,
        TlsVersion::Tls11 => P::Tls11,
        TlsVersion::Tls12 => P::Tls12,
        TlsVersion::Tls13 => P::Tls13,
    };
    scan.version(pv).is_some_and(|vs| {
        vs.accepted && !vs.incomplete && !vs.suites.iter().any(|x| x.code == code)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::enumerate::{Sslv2Scan, VersionScan};
    use crate::scan::{ProtocolVersion, ScanReport};

    fn vs(v: ProtocolVersion, accepted: bool, codes: &[u16], incomplete: bool) -> VersionScan {
        VersionScan {
            version: v,
            accepted,
            refusal: None,
            refusal_alert: None,
            suites: codes
                .iter()
                .filter_map(|c| crate::scan::registry::by_code(*c))
                .collect(),
            server_order: None,
            groups: Vec::new(),
            dh_prime: None,
            certificates: Vec::new(),
            signature_classes: Vec::new(),
            server_hello_extensions: Vec::new(),
            certificate_request: None,
            certificate_status: None,
            incomplete,
            connections: 0,
        }
    }

    /// Only a version the scan finished and found accepted lets a library probe be skipped.
    #[test]
    fn scan_refusals_that_count() {
        let r = ScanReport {
            sslv2: Sslv2Scan::default(),
            versions: vec![
                vs(ProtocolVersion::Tls11, false, &[], false),
                vs(ProtocolVersion::Tls12, true, &[0xC02F, 0x009C], false),
                vs(ProtocolVersion::Tls13, true, &[0x1301], true),
            ],
            weaknesses: Vec::new(),
            robot: None,
            early_data: None,
            verdicts: Vec::new(),
            connections: 0,
            capped: false,
            duration_s: 0.0,
        };
        assert!(!refused_in_scan(&r, 0xC02F, TlsVersion::Tls12));
        assert!(refused_in_scan(&r, 0xC030, TlsVersion::Tls12));
        // Refused version in the scan: asked again (a disagreement must show).
        assert!(!refused_in_scan(&r, 0xC013, TlsVersion::Tls11));
        // Incomplete (capped) version: asked again.
        assert!(!refused_in_scan(&r, 0x1302, TlsVersion::Tls13));
        // Not scanned at all.
        assert!(!refused_in_scan(&r, 0xC013, TlsVersion::Tls10));
    }
}
