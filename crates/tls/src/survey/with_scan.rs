//! Puts a scan (`crate::scan`: every IANA suite per version, groups, known weaknesses) into a
//! survey: its verdicts join the survey's, and the two together tell a client certificate that
//! is required from one that is only optional or not requested at all.
use super::{Level, TlsSurvey, Verdict};
use crate::scan::{ScanReport, WeaknessState};

const SRC_MODE: &str = "IEC 62351-3: mutual authentication, a peer without a certificate is refused [X]; RFC 5246 §7.4.4, RFC 8446 §4.3.2 CertificateRequest [P]";

/// Attaches `scan` to `s`: appends its verdicts and a `client-cert-mode` verdict, which
/// combines the scan's CertificateRequest (seen in the clear up to TLS 1.2) with the survey's
/// handshake without a certificate: requested and refused without one = required (pass);
/// requested but let through = optional (fail); never requested (fail).
pub fn attach_scan(s: &mut TlsSurvey, scan: ScanReport) {
    s.verdicts.extend(scan.verdicts.iter().cloned());
    let requested = scan
        .weaknesses
        .iter()
        .find(|w| w.id == "client-certificate-request")
        .map(|w| w.state);
    if let Some((level, detail)) = client_cert_mode(requested, s.client_cert_required) {
        s.verdicts.push(Verdict {
            id: "client-cert-mode",
            level,
            requirement: "a client certificate is required (not optional, not unrequested)",
            source: SRC_MODE,
            detail: detail.into(),
        });
    }
    s.scan = Some(scan);
}

/// The verdict from the scan's CertificateRequest check and the survey's refusal of a client
/// without a certificate (`None`: neither told anything).
fn client_cert_mode(
    requested: Option<WeaknessState>,
    required: Option<bool>,
) -> Option<(Level, &'static str)> {
    match (requested, required) {
        (Some(WeaknessState::NotVulnerable), Some(true)) | (_, Some(true)) => Some((
            Level::Pass,
            "required: the server refuses a client without a certificate",
        )),
        (Some(WeaknessState::NotVulnerable), Some(false)) => Some((
            Level::Fail,
            "optional: the server asks for a certificate (CertificateRequest) but lets a client without one through",
        )),
        (Some(WeaknessState::Vulnerable), _) => Some((
            Level::Fail,
            "not requested: the server sent no CertificateRequest",
        )),
        (_, Some(false)) => Some((
            Level::Fail,
            "a client without a certificate gets through",
        )),
        (Some(WeaknessState::NotVulnerable), None) => Some((
            Level::Info,
            "requested (CertificateRequest); whether a client without one is refused was not determined",
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use WeaknessState::*;

    #[test]
    fn required_optional_not_requested() {
        let lv = |r, q| client_cert_mode(r, q).map(|m| m.0);
        assert_eq!(lv(Some(NotVulnerable), Some(true)), Some(Level::Pass));
        assert_eq!(lv(None, Some(true)), Some(Level::Pass));
        assert_eq!(lv(Some(NotVulnerable), Some(false)), Some(Level::Fail));
        assert!(client_cert_mode(Some(NotVulnerable), Some(false))
            .unwrap()
            .1
            .starts_with("optional"));
        assert_eq!(lv(Some(Vulnerable), None), Some(Level::Fail));
        assert!(client_cert_mode(Some(Vulnerable), Some(false))
            .unwrap()
            .1
            .starts_with("not requested"));
        assert_eq!(lv(Some(NotVulnerable), None), Some(Level::Info));
        assert_eq!(lv(Some(NotTested), None), None);
    }
}
