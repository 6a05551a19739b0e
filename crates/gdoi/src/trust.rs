//! The trust anchors a peer's certificate must chain to, with optional CRLs: RFC 5280 path
//! validation (signatures, validity periods at the current time, basic constraints and CA key
//! usage, and with a CRL file revocation of the end-entity certificate) done by OpenSSL's
//! X509_verify_cert through an `X509Store`.

use crate::cert_auth::CertError;
use openssl::ssl::SslFiletype;
use openssl::stack::Stack;
use openssl::x509::store::{X509Lookup, X509Store, X509StoreBuilder};
use openssl::x509::verify::X509VerifyFlags;
use openssl::x509::{X509Ref, X509StoreContext, X509};
use std::path::Path;

/// The CA certificates (and CRLs) a peer's chain is checked against.
pub struct TrustStore {
    store: X509Store,
    cas: Vec<X509>,
    crl: bool,
}

impl core::fmt::Debug for TrustStore {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TrustStore")
            .field("cas", &self.cas.len())
            .field("crl", &self.crl)
            .finish()
    }
}

fn creds(what: String) -> impl Fn(openssl::error::ErrorStack) -> CertError {
    move |_| CertError::Credentials(what.clone())
}

impl TrustStore {
    /// Trusts the CA certificates of a PEM file; with `crl`, a PEM file of CRLs is loaded and
    /// the end-entity certificate is checked against it (`X509_V_FLAG_CRL_CHECK`: a peer whose
    /// issuer has no CRL in the file is then refused, which is what a configured CRL means).
    pub fn load(ca: &Path, crl: Option<&Path>) -> Result<TrustStore, CertError> {
        let pem = std::fs::read(ca)
            .map_err(|e| CertError::Credentials(format!("{}: {e}", ca.display())))?;
        TrustStore::from_pem(&pem, crl)
            .map_err(|e| CertError::Credentials(format!("{}: {e}", ca.display())))
    }

    /// [`TrustStore::load`] with the CA certificates given as PEM text.
    pub fn from_pem(pem: &[u8], crl: Option<&Path>) -> Result<TrustStore, CertError> {
        let cas = X509::stack_from_pem(pem).map_err(creds("not PEM certificates".into()))?;
        if cas.is_empty() {
            return Err(CertError::Credentials("no CA certificate".into()));
        }
        let fail = creds("trust store".into());
        let mut b = X509StoreBuilder::new().map_err(&fail)?;
        for c in &cas {
            b.add_cert(c.clone()).map_err(&fail)?;
        }
        if let Some(crl) = crl {
            let lookup = b.add_lookup(X509Lookup::file()).map_err(&fail)?;
            let n = lookup
                .load_crl_file(crl, SslFiletype::PEM)
                .map_err(creds(format!("{}: not PEM CRLs", crl.display())))?;
            if n < 1 {
                return Err(CertError::Credentials(format!("{}: no CRL", crl.display())));
            }
            b.set_flags(X509VerifyFlags::CRL_CHECK).map_err(&fail)?;
        }
        Ok(TrustStore {
            store: b.build(),
            cas,
            crl: crl.is_some(),
        })
    }

    /// The DER subject names of the trusted CAs: what a CERTREQ names (RFC 2408 3.10).
    pub fn ca_names(&self) -> Vec<Vec<u8>> {
        self.cas
            .iter()
            .filter_map(|c| c.subject_name().to_der().ok())
            .collect()
    }

    /// Path validation of `cert` with the untrusted intermediates `chain`.
    pub fn verify(&self, cert: &X509Ref, chain: &[X509]) -> Result<(), CertError> {
        let fail = |_| CertError::Invalid("verification could not run".into());
        let mut untrusted = Stack::new().map_err(fail)?;
        for c in chain {
            untrusted.push(c.clone()).map_err(fail)?;
        }
        let mut ctx = X509StoreContext::new().map_err(fail)?;
        let mut reason = None;
        let ok = ctx
            .init(&self.store, cert, &untrusted, |c| {
                let ok = c.verify_cert()?;
                if !ok {
                    reason = Some(c.error().error_string().to_string());
                }
                Ok(ok)
            })
            .map_err(fail)?;
        if ok {
            Ok(())
        } else {
            Err(CertError::Invalid(
                reason.unwrap_or_else(|| "chain does not verify".into()),
            ))
        }
    }
}
