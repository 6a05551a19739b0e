//! Verdicts of a scan, each with its public source (tags of `docs/tls.md`: [P] public primary
//! source, [X] third-party reading of the paid IEC text). Ids start with `scan-` so they stand
//! beside the survey's own verdicts.
use super::weakness::WeaknessState;
use super::{ProtocolVersion, ScanReport};
use crate::survey::{Level, Verdict};

const SRC_ANON: &str = "RFC 5246 §A.5 and §F.1.1.1: anonymous Diffie-Hellman suites are open to a man in the middle and deprecated [P]; IEC 62351-4:2018 disallows the 2007 anonymous suites [X]";
const SRC_NULL: &str = "RFC 9325 (BCP 195) §4.1: MUST NOT negotiate NULL encryption [P]; IEC 62351-3:2023 lists TLS_RSA_WITH_NULL_SHA256 as conditional (integrity only) [X]";
const SRC_EXPORT: &str = "RFC 9325 §4.1: MUST NOT negotiate suites under 112 bits, export-grade included [P]; FREAK (CVE-2015-0204), Logjam (CVE-2015-4000) [P]";
const SRC_RC4: &str =
    "RFC 7465 §2: TLS servers MUST NOT select an RC4 suite [P]; IEC 62351-4:2018 disallows RC4 [X]";
const SRC_DES: &str =
    "RFC 5469: DES suites removed from TLS 1.2 [P]; RFC 9325 §4.1: under 112 bits MUST NOT [P]";
const SRC_3DES: &str = "SWEET32 (Bhargavan, Leurent, ACM CCS 2016; CVE-2016-2183): 64-bit blocks [P]; RFC 9325 §4.1: SHOULD NOT under 128 bits [P]; NIST SP 800-131A Rev.2: TDEA encryption disallowed after 2023 [P]";
const SRC_SSL2: &str = "RFC 6176: SSL 2.0 MUST NOT be negotiated [P]";
const SRC_SSL3: &str = "RFC 7568: SSL 3.0 MUST NOT be used (POODLE) [P]";
const SRC_HB: &str = "CVE-2014-0160 (Heartbleed) [P]; RFC 6520 §4: a heartbeat with a payload_length beyond its record MUST be discarded [P]";
const SRC_CCS: &str = "CVE-2014-0224 (OpenSSL ChangeCipherSpec injection) [P]";
const SRC_CRIME: &str =
    "CRIME (CVE-2012-4929) [P]; RFC 9325 §3.3: TLS-level compression SHOULD be disabled [P]";
const SRC_FALLBACK: &str =
    "RFC 7507 §3: a server MUST answer inappropriate_fallback to TLS_FALLBACK_SCSV below its newest version [P]";
const SRC_EMS: &str =
    "RFC 7627 (triple handshake) [P]; RFC 9325 §3.5: SHOULD support extended master secret [P]";
const SRC_RI: &str = "RFC 5746 [P]; IEC 62351-3: RFC 5746 mandatory [X]";
const SRC_OCSP: &str = "RFC 6066 §8 status_request [P]; no IEC 62351 requirement stated publicly";
const SRC_CR: &str = "IEC 62351-3: mutual authentication, the server asks every client for a certificate [X]; RFC 5246 §7.4.4 [P]";
const SRC_ORDER: &str = "a fact testssl.sh and sslyze report; no requirement";
const SRC_GROUPS: &str = "NIST SP 800-57 Part 1 Rev.5 §5.6.1: 112-bit security needs FFC p >= 2048, EC >= 224 bits [P]; IEC 62351-4 Annex G: EC >= 256 bits [X]";

fn v(
    id: &'static str,
    level: Level,
    source: &'static str,
    requirement: &'static str,
    detail: String,
) -> Verdict {
    Verdict {
        id,
        level,
        requirement,
        source,
        detail,
    }
}

/// RFC 6066 §3: the source of the server-name verdicts (scan and survey).
pub(crate) const SRC_SNI: &str = "RFC 6066 §3: a server that does not recognize the name in server_name may end the handshake with unrecognized_name (112); the alert refuses the name, not the version [P]";

/// The server refused the SNI `name` with unrecognized_name (alert 112): a finding about the
/// client's settings, not about the versions, which the scan then surveyed without SNI.
pub fn server_name_refused(id: &'static str, name: &str, what: &str) -> Verdict {
    v(
        id,
        Level::Warn,
        SRC_SNI,
        "the server accepts the server name the client sends (SNI)",
        format!(
            "the server refuses the server name \"{name}\" with unrecognized_name (alert 112); \
             set server_name in the client profile to the name the device expects, or leave it \
             out; {what} went on without SNI"
        ),
    )
}

const SRC_CERT_KEYS: &str = "IEC 62351-3 Ed.1 Amd1: RSA >= 2048 bits mandatory, 1024 deprecated; IEC 62351-4 Annex G: EC >= 256 bits [X]; NIST SP 800-131A Rev.2 [P]";

/// Every certificate the server holds for the accepted suites, by authentication class (seen
/// in the clear up to TLS 1.2, through a completed handshake per signature class in TLS 1.3,
/// `super::tls13_flight`): a server with an RSA and an ECDSA certificate shows only one of
/// them to a library handshake, and the other may be the weak one. `None` when no Certificate
/// message was read.
fn certificate_keys(r: &ScanReport) -> Option<Verdict> {
    let mut seen: Vec<&str> = Vec::new();
    let mut small = false;
    let mut parts = Vec::new();
    for vs in r.versions.iter().filter(|v| v.accepted) {
        for c in &vs.certificates {
            if seen.contains(&c.cert.sha256.as_str()) {
                continue;
            }
            seen.push(&c.cert.sha256);
            let weak = match c.cert.key_type.as_str() {
                "RSA" | "RSA-PSS" | "DSA" => c.cert.key_bits < 2048,
                "EC" => c.cert.key_bits < 256,
                _ => false,
            };
            small |= weak;
            let whose = if vs.version == ProtocolVersion::Tls13 {
                format!("TLS 1.3 {} signatures ({})", c.auth, c.suite)
            } else {
                format!("{} suites (e.g. {})", c.auth, c.suite)
            };
            parts.push(format!(
                "{whose}: {} {} bits, {}{}",
                c.cert.key_type,
                c.cert.key_bits,
                c.cert.subject,
                if weak { " (too small)" } else { "" }
            ));
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(v(
        "scan-certificate-keys",
        if small { Level::Fail } else { Level::Pass },
        SRC_CERT_KEYS,
        "every server certificate: RSA/DSA keys >= 2048 bits, EC keys >= 256 bits",
        parts.join("; "),
    ))
}

/// The verdicts of `r`.
pub fn judge(r: &ScanReport) -> Vec<Verdict> {
    let mut out = Vec::new();
    out.push(if r.sslv2.accepted {
        v(
            "scan-sslv2",
            Level::Fail,
            SRC_SSL2,
            "no SSL 2.0",
            format!("SSL 2.0 accepted: {}", r.sslv2.ciphers.join(", ")),
        )
    } else {
        v(
            "scan-sslv2",
            Level::Pass,
            SRC_SSL2,
            "no SSL 2.0",
            "refused".into(),
        )
    });
    if let Some(s3) = r.version(ProtocolVersion::Ssl3) {
        out.push(if s3.accepted {
            v(
                "scan-sslv3",
                Level::Fail,
                SRC_SSL3,
                "no SSL 3.0",
                format!("SSL 3.0 accepted with {} suites", s3.suites.len()),
            )
        } else {
            v(
                "scan-sslv3",
                Level::Pass,
                SRC_SSL3,
                "no SSL 3.0",
                "refused".into(),
            )
        });
    }
    // Suite classes: one verdict per class, listing the suites and versions.
    type Pick = fn(&super::registry::SuiteInfo) -> bool;
    let classes: [(&'static str, &'static str, &'static str, Pick); 6] = [
        (
            "scan-anonymous-suites",
            "no anonymous suite (no server authentication)",
            SRC_ANON,
            |s| s.anonymous,
        ),
        ("scan-null-suites", "no NULL encryption", SRC_NULL, |s| {
            s.null
        }),
        (
            "scan-export-suites",
            "no export-grade suite",
            SRC_EXPORT,
            |s| s.export,
        ),
        ("scan-rc4-suites", "no RC4", SRC_RC4, |s| s.rc4),
        ("scan-des-suites", "no single DES", SRC_DES, |s| s.des),
        ("scan-3des-suites", "no 3DES", SRC_3DES, |s| s.triple_des),
    ];
    for (id, req, src, pick) in classes {
        let mut found: Vec<String> = Vec::new();
        let mut only_integrity = true;
        for vs in &r.versions {
            for s in vs.suites.iter().filter(|s| pick(s)) {
                found.push(format!("{} ({})", s.name, vs.version.name()));
                only_integrity &= s.code == 0x003B;
            }
        }
        out.push(if found.is_empty() {
            v(id, Level::Pass, src, req, "none accepted".into())
        } else {
            // The one NULL suite IEC 62351-3:2023 allows conditionally is a warning, not a fail.
            let level = if id == "scan-null-suites" && only_integrity {
                Level::Warn
            } else {
                Level::Fail
            };
            v(
                id,
                level,
                src,
                req,
                format!("{} accepted: {}", found.len(), found.join(", ")),
            )
        });
    }
    for vs in r
        .versions
        .iter()
        .filter(|v| v.accepted && v.suites.len() >= 2)
    {
        let d = match vs.server_order {
            Some(true) => "the server chooses by its own order",
            Some(false) => "the server follows the client's order",
            None => "not determined",
        };
        out.push(v(
            "scan-cipher-order",
            Level::Info,
            SRC_ORDER,
            "server cipher-suite preference",
            format!("TLS {}: {d}", vs.version.name()),
        ));
    }
    if let Some(c) = certificate_keys(r) {
        out.push(c);
    }
    let mut weak_groups = Vec::new();
    let mut all_groups = Vec::new();
    for vs in r.versions.iter().filter(|v| v.accepted) {
        for g in &vs.groups {
            all_groups.push(format!("{} ({})", g.name, vs.version.name()));
            if g.code <= 0x0016 {
                weak_groups.push(format!("{} ({})", g.name, vs.version.name()));
            }
        }
        if let Some(p) = &vs.dh_prime {
            let name = p
                .family
                .clone()
                .unwrap_or_else(|| format!("own {}-bit prime", p.bits));
            all_groups.push(format!("DH {name} ({})", vs.version.name()));
            if p.bits < 2048 {
                weak_groups.push(format!("DH {}-bit ({})", p.bits, vs.version.name()));
            }
        }
    }
    out.push(if !weak_groups.is_empty() {
        v(
            "scan-groups",
            Level::Fail,
            SRC_GROUPS,
            "key-exchange groups of >= 256-bit EC / >= 2048-bit FFDH",
            format!(
                "weak: {}; all: {}",
                weak_groups.join(", "),
                all_groups.join(", ")
            ),
        )
    } else {
        v(
            "scan-groups",
            Level::Info,
            SRC_GROUPS,
            "key-exchange groups of >= 256-bit EC / >= 2048-bit FFDH",
            if all_groups.is_empty() {
                "none found".into()
            } else {
                all_groups.join(", ")
            },
        )
    });
    if let Some(rb) = &r.robot {
        use super::robot::Verdict as R;
        let level = match rb.verdict {
            R::Vulnerable => Level::Fail,
            R::WeakOracle => Level::Warn,
            R::NotVulnerable => Level::Pass,
            R::NotApplicable | R::Undetermined => Level::Info,
        };
        let what = match rb.verdict {
            R::Vulnerable => "vulnerable (strong oracle)",
            R::WeakOracle => "weak oracle",
            R::NotVulnerable => "not vulnerable",
            R::NotApplicable => "not applicable",
            R::Undetermined => "not determined",
        };
        out.push(v(
            "scan-robot",
            level,
            super::robot::SOURCE,
            "no Bleichenbacher padding oracle in RSA key exchange",
            format!("{what}: {}", rb.detail),
        ));
    }
    if let Some(ed) = &r.early_data {
        use super::early_data::Verdict as E;
        let level = match ed.verdict {
            E::Accepted => Level::Warn,
            E::AdvertisedRejected | E::NotAdvertised | E::NoTicket => Level::Pass,
            E::NotApplicable | E::Undetermined => Level::Info,
        };
        out.push(v(
            "scan-early-data",
            level,
            super::early_data::SOURCE,
            "no 0-RTT (replayable early data) accepted",
            ed.detail.clone(),
        ));
    }
    for wk in &r.weaknesses {
        let (id, req, src, bad) = match wk.id {
            "heartbleed" => (
                "scan-heartbleed",
                "not vulnerable to Heartbleed",
                SRC_HB,
                Level::Fail,
            ),
            "ccs-injection" => (
                "scan-ccs-injection",
                "not vulnerable to CCS injection",
                SRC_CCS,
                Level::Fail,
            ),
            "compression" => (
                "scan-compression",
                "no TLS compression",
                SRC_CRIME,
                Level::Fail,
            ),
            "fallback-scsv" => (
                "scan-fallback-scsv",
                "TLS_FALLBACK_SCSV honoured",
                SRC_FALLBACK,
                Level::Warn,
            ),
            "extended-master-secret" => (
                "scan-extended-master-secret",
                "extended master secret supported",
                SRC_EMS,
                Level::Warn,
            ),
            "secure-renegotiation" => (
                "scan-secure-renegotiation",
                "RFC 5746 renegotiation_info",
                SRC_RI,
                Level::Warn,
            ),
            "ocsp-stapling" => ("scan-ocsp-stapling", "OCSP stapling", SRC_OCSP, Level::Info),
            "client-certificate-request" => (
                "scan-certificate-request",
                "the server asks for a client certificate",
                SRC_CR,
                Level::Fail,
            ),
            _ => continue,
        };
        let level = match wk.state {
            WeaknessState::Vulnerable => bad,
            WeaknessState::NotVulnerable => Level::Pass,
            WeaknessState::NotTested | WeaknessState::Undetermined => Level::Info,
        };
        out.push(v(id, level, src, req, wk.detail.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::enumerate::{ScanCertificate, Sslv2Scan, VersionScan};
    use crate::scan::groups::FfdhPrime;
    use crate::scan::registry::by_code;

    fn report(codes: &[u16], dh_bits: Option<u32>, sslv2: bool) -> ScanReport {
        let vs = VersionScan {
            version: ProtocolVersion::Tls12,
            accepted: true,
            refusal: None,
            refusal_alert: None,
            suites: codes.iter().filter_map(|c| by_code(*c)).collect(),
            server_order: None,
            groups: Vec::new(),
            dh_prime: dh_bits.map(|bits| FfdhPrime { bits, family: None }),
            certificates: Vec::new(),
            signature_classes: Vec::new(),
            server_hello_extensions: Vec::new(),
            certificate_request: Some(true),
            certificate_status: Some(false),
            incomplete: false,
            connections: 0,
        };
        ScanReport {
            sslv2: Sslv2Scan {
                accepted: sslv2,
                ciphers: vec!["SSL_CK_RC4_128_WITH_MD5".into()],
                refusal: None,
            },
            versions: vec![vs],
            weaknesses: Vec::new(),
            robot: None,
            early_data: None,
            verdicts: Vec::new(),
            connections: 0,
            capped: false,
            duration_s: 0.0,
        }
    }

    fn level(r: &ScanReport, id: &str) -> Option<Level> {
        judge(r).into_iter().find(|v| v.id == id).map(|v| v.level)
    }

    #[test]
    fn suite_classes() {
        let r = report(&[0xC02F], Some(2048), false);
        for id in [
            "scan-anonymous-suites",
            "scan-null-suites",
            "scan-export-suites",
            "scan-rc4-suites",
            "scan-des-suites",
            "scan-3des-suites",
            "scan-sslv2",
        ] {
            assert_eq!(level(&r, id), Some(Level::Pass), "{id}");
        }
        assert_eq!(level(&r, "scan-groups"), Some(Level::Info));
        // RSA_EXPORT_WITH_RC4_40_MD5: export and RC4; DES_CBC_SHA; 3DES; ADH.
        let r = report(&[0x0003, 0x0009, 0x000A, 0x0034], None, true);
        for id in [
            "scan-export-suites",
            "scan-rc4-suites",
            "scan-des-suites",
            "scan-3des-suites",
            "scan-anonymous-suites",
            "scan-sslv2",
        ] {
            assert_eq!(level(&r, id), Some(Level::Fail), "{id}");
        }
    }

    #[test]
    fn null_sha256_is_a_warning_other_null_suites_fail() {
        assert_eq!(
            level(&report(&[0x003B], None, false), "scan-null-suites"),
            Some(Level::Warn)
        );
        assert_eq!(
            level(&report(&[0x003B, 0x0002], None, false), "scan-null-suites"),
            Some(Level::Fail)
        );
    }

    fn cert(auth: &'static str, key_type: &str, bits: u32, sha: &str) -> ScanCertificate {
        ScanCertificate {
            auth,
            suite: "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            cert: crate::survey::CertInfo {
                subject: "CN=ied".into(),
                issuer: "CN=ca".into(),
                self_issued: false,
                x509_version: 3,
                key_type: key_type.into(),
                key_bits: bits,
                curve: None,
                signature_algorithm: "sha256WithRSAEncryption".into(),
                not_before: String::new(),
                not_after: String::new(),
                valid_now: true,
                key_usage: None,
                extended_key_usage: None,
                san: Vec::new(),
                der_len: 800,
                sha256: sha.into(),
            },
        }
    }

    #[test]
    fn every_certificate_is_judged_once() {
        let mut r = report(&[0xC02F, 0xC02B], None, false);
        assert_eq!(level(&r, "scan-certificate-keys"), None);
        r.versions[0].certificates = vec![
            cert("RSA", "RSA", 2048, "aa"),
            cert("ECDSA", "EC", 256, "bb"),
        ];
        assert_eq!(level(&r, "scan-certificate-keys"), Some(Level::Pass));
        r.versions[0].certificates[0].cert.key_bits = 1024;
        let v = judge(&r);
        let c = v.iter().find(|x| x.id == "scan-certificate-keys").unwrap();
        assert_eq!(c.level, Level::Fail);
        assert!(
            c.detail.contains("RSA 1024 bits") && c.detail.contains("EC 256"),
            "{c:?}"
        );
        // The same certificate seen at two versions is listed once.
        let mut again = r.versions[0].clone();
        again.version = ProtocolVersion::Tls11;
        r.versions.push(again);
        let v = judge(&r);
        let c = v.iter().find(|x| x.id == "scan-certificate-keys").unwrap();
        assert_eq!(c.detail.matches("RSA 1024 bits").count(), 1, "{c:?}");
    }

    #[test]
    fn small_dh_prime_fails() {
        assert_eq!(
            level(&report(&[0x0033], Some(1024), false), "scan-groups"),
            Some(Level::Fail)
        );
    }
}
