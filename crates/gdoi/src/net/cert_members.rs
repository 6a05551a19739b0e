//! The key server's certificate side: its own credentials, the members it authorises by
//! certificate subject or subjectAltName, and the lab key log.
//!
//! A member authenticated by certificate is not bound to an address (unlike a pre-shared key,
//! RFC 2409 5.4); phase 1 lets in any certificate of the trusted CAs that one of the policy's
//! `CertMatch` entries names, and GROUPKEY-PULL then finds the member by the certificate the
//! phase-1 SA verified (never by the ID payload alone, so a pre-shared-key peer can never be
//! taken for a certificate member or the other way round).

use super::kdc::{KdcPolicy, MemberPolicy};
use crate::cert_auth::{CertMatch, Credentials, PeerCert};
use crate::keylog::KeyLog;
use crate::main_mode::CertPolicy;
use crate::profile::PeerProfile;
use crate::Phase1Sa;
use std::sync::Arc;

/// What the key server adds for certificates and the key log.
#[derive(Default, Clone)]
pub struct KdcCerts {
    /// The key server's certificates (one per key type), keys and trust stores; without
    /// them phase 1 is PSK only.
    pub creds: Vec<Arc<Credentials>>,
    /// The lab key log ([`crate::keylog`]); `None` in production.
    pub keylog: Option<Arc<KeyLog>>,
    /// Certificate members written for with a peer profile (`[[member]] profile`,
    /// [`crate::profile`]); the others get the RFC's reading.
    pub profiles: Vec<(CertMatch, PeerProfile)>,
}

impl KdcCerts {
    /// The responder's certificate policy for a new exchange: the credentials and every
    /// certificate member's match.
    pub fn policy(&self, p: &KdcPolicy) -> Option<CertPolicy> {
        if self.creds.is_empty() {
            return None;
        }
        Some(CertPolicy {
            creds: self.creds.clone(),
            allowed: p.members.iter().filter_map(|m| m.cert.clone()).collect(),
            profiles: self.profiles.clone(),
        })
    }

    /// Writes a new phase-1 SA to the key log, if there is one. A failed write is reported
    /// on stderr and does not stop the key server (the log is a lab aid, not state).
    pub fn log(&self, sa: &Phase1Sa) {
        if let Some(k) = &self.keylog {
            if let Err(e) = k.record(sa) {
                eprintln!("key log {}: {e}", k.path().display());
            }
        }
    }
}

impl KdcPolicy {
    /// The certificate member a verified certificate is (the first whose subject or
    /// subjectAltName entry names it).
    pub fn cert_member(&self, c: &PeerCert) -> Option<&MemberPolicy> {
        self.members
            .iter()
            .find(|m| m.cert.as_ref().is_some_and(|x| x.matches(c)))
    }
}
