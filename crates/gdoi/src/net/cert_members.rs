//! The key server's certificate side: its own credentials, the members it authorises by
//! certificate subject or subjectAltName, and the lab key log.
//!
//! A member authenticated by certificate is not bound to an address (unlike a pre-shared key,
//! RFC 2409 5.4); phase 1 lets in any certificate of the trusted CAs that one of the policy's
//! `CertMatch` entries names, and GROUPKEY-PULL then finds the member by its ID payload, which
//! phase 1 has checked against the certificate (RFC 4945 3.1), so matching the ID is matching
//! the certificate.

use super::kdc::{KdcPolicy, MemberPolicy};
use crate::cert_auth::Credentials;
use crate::keylog::KeyLog;
use crate::main_mode::CertPolicy;
use crate::Phase1Sa;
use gander_wire::isakmp::IdPayload;
use std::sync::Arc;

/// What the key server adds for certificates and the key log.
#[derive(Default, Clone)]
pub struct KdcCerts {
    /// The key server's certificate, key and trust store; without them phase 1 is PSK only.
    pub creds: Option<Arc<Credentials>>,
    /// The lab key log ([`crate::keylog`]); `None` in production.
    pub keylog: Option<Arc<KeyLog>>,
}

impl KdcCerts {
    /// The responder's certificate policy for a new exchange: the credentials and every
    /// certificate member's match.
    pub fn policy(&self, p: &KdcPolicy) -> Option<CertPolicy> {
        let creds = self.creds.clone()?;
        Some(CertPolicy {
            creds,
            allowed: p.members.iter().filter_map(|m| m.cert.clone()).collect(),
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

impl MemberPolicy {
    /// Whether the (phase-1 authenticated) ID payload is this member's: by certificate match
    /// for a certificate member, by its identity octets for a pre-shared-key member.
    pub fn is(&self, id: &IdPayload) -> bool {
        match &self.cert {
            Some(c) => c.matches_id(id),
            None => self.identity == id.data,
        }
    }
}
