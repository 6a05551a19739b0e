//! Why a phase-1 message was refused, with the RFC 2408 3.14.1 notification for the peer.

use crate::cert_auth::CertError;
use gander_wire::isakmp::error::notify_type;
use gander_wire::isakmp::IsakmpError;

/// One variant per reason a phase-1 message is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Phase1Error {
    /// The bytes are not a well-formed ISAKMP message.
    #[error("malformed message: {0}")]
    Malformed(#[from] IsakmpError),
    /// A message this state does not expect (a replay, a message out of order, another
    /// exchange type).
    #[error("unexpected message in state {state}")]
    Unexpected {
        /// The state that refused it.
        state: &'static str,
    },
    /// The cookies do not belong to this exchange (RFC 2408 2.5.3).
    #[error("cookie mismatch")]
    BadCookie,
    /// A payload the message must carry is absent.
    #[error("missing {0} payload")]
    Missing(&'static str),
    /// No offered proposal is acceptable (or the answer is not one of ours).
    #[error("no proposal chosen")]
    NoProposalChosen,
    /// The Key Exchange data is not a valid public value of the negotiated group.
    #[error("invalid key exchange data")]
    InvalidKe,
    /// HASH_I or HASH_R does not verify: the peer used another pre-shared key, or the
    /// exchange was tampered with.
    #[error("hash does not verify (wrong pre-shared key?)")]
    HashMismatch,
    /// Message 5 or 6 does not decrypt to well-formed payloads. With pre-shared keys this is
    /// how a wrong key shows (SKEYID_e follows from it, RFC 2409 5), so it is reported as an
    /// authentication failure rather than as a malformed payload.
    #[error("encrypted identity does not decrypt (wrong pre-shared key?): {0}")]
    AuthFailed(IsakmpError),
    /// The peer's identity is not the one the policy expects.
    #[error("identity not accepted")]
    BadIdentity,
    /// Decryption failed (length not a multiple of the block size).
    #[error("cannot decrypt: {0}")]
    Decrypt(&'static str),
    /// Certificate authentication failed (RFC 2409 5.1): no, unsupported, untrusted, expired,
    /// revoked or unauthorised certificate, an identity it does not name, or a bad signature.
    #[error("certificate authentication: {0}")]
    Cert(#[from] CertError),
    /// OpenSSL refused an operation (never caused by peer data alone).
    #[error("crypto failure: {0}")]
    Crypto(&'static str),
    /// The responder answered message 5 with an encrypted Informational exchange instead of
    /// message 6 (RFC 2408 4.8): it did not accept the initiator's identity or its
    /// authentication. With pre-shared keys that is what a different key at the responder
    /// looks like: message 5 does not decrypt there.
    #[error(
        "the key server answered our identity (message 5) with an encrypted notification, \
         not message 6: it refused our authentication (another pre-shared key, or a \
         certificate or identity it does not accept)"
    )]
    PeerRefusedIdentity,
}

impl Phase1Error {
    /// The Notify Message Type (RFC 2408 3.14.1) that tells the peer why.
    pub fn notify(&self) -> u16 {
        match self {
            Phase1Error::Malformed(e) => e.notify(),
            Phase1Error::Unexpected { .. } | Phase1Error::PeerRefusedIdentity => {
                notify_type::INVALID_EXCHANGE_TYPE
            }
            Phase1Error::BadCookie => notify_type::INVALID_COOKIE,
            Phase1Error::Missing(_) | Phase1Error::Decrypt(_) | Phase1Error::Crypto(_) => {
                notify_type::PAYLOAD_MALFORMED
            }
            Phase1Error::NoProposalChosen => notify_type::NO_PROPOSAL_CHOSEN,
            Phase1Error::InvalidKe => notify_type::INVALID_KEY_INFORMATION,
            Phase1Error::HashMismatch => notify_type::INVALID_HASH_INFORMATION,
            Phase1Error::AuthFailed(_) => notify_type::AUTHENTICATION_FAILED,
            Phase1Error::BadIdentity => notify_type::INVALID_ID_INFORMATION,
            Phase1Error::Cert(e) => e.notify(),
        }
    }
}

impl Phase1Error {
    /// Whether the peer failed to authenticate (wrong key, forged or corrupted identity
    /// message): what a security event calls an authentication refusal.
    pub fn is_authentication_failure(&self) -> bool {
        matches!(
            self,
            Phase1Error::HashMismatch | Phase1Error::AuthFailed(_) | Phase1Error::Cert(_)
        )
    }
}

impl From<openssl::error::ErrorStack> for Phase1Error {
    fn from(_: openssl::error::ErrorStack) -> Self {
        Phase1Error::Crypto("openssl")
    }
}
