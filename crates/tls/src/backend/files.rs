//! Reading the profile's PEM/DER files once, with errors that name the file.
use crate::profile::ProfileError;
use crate::TlsError;
use openssl::x509::{X509Crl, X509};
use std::path::Path;

fn read(what: &'static str, p: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(p).map_err(|e| {
        TlsError::Profile(ProfileError::MissingFile {
            what,
            path: p.to_owned(),
            reason: e.to_string(),
        })
    })
}

fn bad(what: &'static str, p: &Path, e: impl std::fmt::Display) -> TlsError {
    TlsError::Profile(ProfileError::MissingFile {
        what,
        path: p.to_owned(),
        reason: format!("not a valid {what}: {e}"),
    })
}

/// Every certificate in a PEM file (or a single DER certificate).
pub(crate) fn certs(what: &'static str, p: &Path) -> Result<Vec<X509>, TlsError> {
    let data = read(what, p)?;
    let v = if data.starts_with(b"-----") || data.iter().take(64).all(|b| b.is_ascii()) {
        X509::stack_from_pem(&data).map_err(|e| bad(what, p, e))?
    } else {
        vec![X509::from_der(&data).map_err(|e| bad(what, p, e))?]
    };
    if v.is_empty() {
        return Err(bad(what, p, "no certificate in file"));
    }
    Ok(v)
}

/// The first certificate of a file, as DER (for pinning).
pub(crate) fn cert_der(what: &'static str, p: &Path) -> Result<Vec<u8>, TlsError> {
    let c = certs(what, p)?;
    c[0].to_der().map_err(|e| bad(what, p, e))
}

/// Every CRL in a PEM file (or one DER CRL).
pub(crate) fn crls(p: &Path) -> Result<Vec<X509Crl>, TlsError> {
    let data = read("crl", p)?;
    if let Ok(c) = X509Crl::from_der(&data) {
        return Ok(vec![c]);
    }
    let text = String::from_utf8_lossy(&data);
    let mut out = Vec::new();
    const BEGIN: &str = "-----BEGIN X509 CRL-----";
    const END: &str = "-----END X509 CRL-----";
    let mut rest = &text[..];
    while let Some(b) = rest.find(BEGIN) {
        let Some(e) = rest[b..].find(END) else { break };
        let block = &rest[b..b + e + END.len()];
        out.push(X509Crl::from_pem(block.as_bytes()).map_err(|e| bad("crl", p, e))?);
        rest = &rest[b + e + END.len()..];
    }
    if out.is_empty() {
        return Err(bad("crl", p, "no CRL in file"));
    }
    Ok(out)
}
