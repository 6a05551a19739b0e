//! Why a frame was not protected or did not verify: one variant per kind of failure, so the CLI
//! can print it, the gateway can count it, and tests can assert on it.

use crate::provider::CryptoError;

/// Which replay rule a frame broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayKind {
    /// The sequence number was already accepted.
    Duplicate,
    /// The sequence number is older than the window still remembers.
    TooOld,
    /// GOOSE: stNum/sqNum do not advance (IEC 61850-8-1 retransmission rules); SV: smpCnt is
    /// behind the last accepted one.
    NotNewer,
    /// SV: smpCnt advanced further than the time since the last accepted frame allows
    /// (`docs/gateway.md`, "Replay"): a frame from an earlier turn of the counter.
    AheadOfClock,
    /// SV: [`Self::AheadOfClock`] at smpCnt 0 right after `last`, below the wrap assumed: the
    /// stream most likely wraps at `last + 1` (a 50 Hz merging unit's 4000 read with the
    /// default wrap of 4800), a configuration to fix rather than an attack.
    WrappedEarly {
        /// The smpCnt before the 0.
        last: u16,
    },
}

/// A protect or verify failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SecError {
    /// The frame does not parse.
    #[error("malformed frame: {0}")]
    Malformed(#[from] gander_wire::Error),
    /// The session header does not parse in the profile asked for, but does in another
    /// profile's dialect: the capture was most likely written by that implementation.
    #[error("malformed frame: {error} (the frame reads as profile {reads_as}: try --profile {reads_as})")]
    WrongProfile {
        /// The error in the profile asked for.
        error: gander_wire::Error,
        /// The profile whose dialect reads it.
        reads_as: &'static str,
    },
    /// The key id is not in the key store.
    #[error("unknown key id {0}")]
    UnknownKeyId(u32),
    /// The key's validity window has not started.
    #[error("key {id} is not valid before {not_before}")]
    KeyNotYetValid {
        /// Key id.
        id: u32,
        /// Start of validity, Unix seconds.
        not_before: u64,
    },
    /// The key's validity window has ended.
    #[error("key {id} expired at {not_after}")]
    KeyExpired {
        /// Key id.
        id: u32,
        /// End of validity, Unix seconds.
        not_after: u64,
    },
    /// Version-1 algorithm codes on the wire do not match the key's algorithms.
    #[error("algorithm codes enc={enc_code} mac={mac_code} do not match key {id}")]
    AlgorithmMismatch {
        /// Key id.
        id: u32,
        /// Encryption code on the wire.
        enc_code: u8,
        /// MAC code on the wire.
        mac_code: u8,
    },
    /// An algorithm code that the profile does not define.
    #[error("unknown {what} algorithm code {code} in profile {profile}")]
    UnknownAlgorithmCode {
        /// "MAC" or "encryption".
        what: &'static str,
        /// The code.
        code: u8,
        /// Profile name.
        profile: &'static str,
    },
    /// The key requires a MAC or tag that the frame does not carry.
    #[error("missing {0}")]
    MissingAuthenticator(&'static str),
    /// The IV is absent or of the wrong length.
    #[error("IV of {0} bytes does not suit the key's algorithm (AES-GCM/GMAC need 12, Ascon-AEAD128 16)")]
    BadIv(usize),
    /// The MAC or signature does not verify.
    #[error("MAC or signature does not verify")]
    BadMac,
    /// The AEAD (AES-GCM or Ascon-AEAD128) tag does not verify (payload left encrypted).
    #[error("AEAD tag does not verify")]
    BadTag,
    /// A replayed or stale frame.
    #[error("replay ({kind:?}) of {}", ReplaySeq(*seq))]
    Replay {
        /// The rule broken.
        kind: ReplayKind,
        /// The offending sequence (SPDU number, or stNum<<32|sqNum for GOOSE).
        seq: u64,
    },
    /// The key verified, but it is not bound to this publisher: the key file's `appids` (or a
    /// gateway rule's `key_ids`) do not allow it for this APPID.
    #[error("key {id} may not protect APPID 0x{appid:04x}")]
    KeyNotAllowed {
        /// Key id.
        id: u32,
        /// APPID of the frame.
        appid: u16,
    },
    /// The frame carries no security where security is required.
    #[error("unsecured frame where security is required")]
    Unsecured,
    /// An IPv4 header, UDP (IPv4 or IPv6) or other checksum does not verify.
    #[error("bad {0} checksum")]
    BadChecksum(&'static str),
    /// An IP fragment: only the reassembled datagram could be judged, and the gateway does not
    /// reassemble.
    #[error("IP fragment of a UDP datagram")]
    Fragment,
    /// The frame is already secured (protect refuses to secure twice).
    #[error("frame is already secured (key id {0})")]
    AlreadySecured(u32),
    /// The combination cannot be done in this profile (with the reason).
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// The crypto provider failed.
    #[error("crypto: {0}")]
    Crypto(#[from] CryptoError),
    /// No fresh nonce could be made (Ascon-AEAD128, `crate::nonce`).
    #[error("nonce: {0}")]
    Nonce(#[from] crate::nonce::NonceError),
    /// A signature key's signature cannot fit the frame without fragmentation
    /// ([`crate::fit`]).
    #[error("{0}")]
    DoesNotFit(#[from] crate::fit::FitError),
}

impl SecError {
    /// A short stable name for counters and JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            SecError::Malformed(_) | SecError::WrongProfile { .. } => "malformed",
            SecError::UnknownKeyId(_) => "unknown-key",
            SecError::KeyNotYetValid { .. } => "key-not-yet-valid",
            SecError::KeyExpired { .. } => "key-expired",
            SecError::AlgorithmMismatch { .. } => "algorithm-mismatch",
            SecError::UnknownAlgorithmCode { .. } => "unknown-algorithm",
            SecError::MissingAuthenticator(_) => "missing-authenticator",
            SecError::BadIv(_) => "bad-iv",
            SecError::BadMac => "bad-mac",
            SecError::BadTag => "bad-tag",
            SecError::Replay { .. } => "replay",
            SecError::KeyNotAllowed { .. } => "key-not-allowed",
            SecError::Unsecured => "unsecured",
            SecError::BadChecksum(_) => "bad-checksum",
            SecError::Fragment => "ip-fragment",
            SecError::AlreadySecured(_) => "already-secured",
            SecError::Unsupported(_) => "unsupported",
            SecError::Crypto(_) => "crypto",
            SecError::Nonce(_) => "nonce-exhausted",
            SecError::DoesNotFit(_) => "does-not-fit",
        }
    }
}

/// A replayed frame's sequence as users read it: a GOOSE frame's stNum and sqNum (packed as
/// stNum<<32|sqNum: above 32 bits), else the SPDU number or smpCnt. `gander frame verify`
/// printed "of sequence 4294967301" for stNum 1 sqNum 5.
struct ReplaySeq(u64);

impl core::fmt::Display for ReplaySeq {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 >> 32 {
            0 => write!(f, "sequence {}", self.0),
            st => write!(f, "stNum {st} sqNum {}", self.0 & 0xffff_ffff),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_goose_replay_names_its_counters() {
        let goose = SecError::Replay {
            kind: ReplayKind::Duplicate,
            seq: (1 << 32) | 5,
        };
        assert_eq!(goose.to_string(), "replay (Duplicate) of stNum 1 sqNum 5");
        let spdu = SecError::Replay {
            kind: ReplayKind::Duplicate,
            seq: 7,
        };
        assert_eq!(spdu.to_string(), "replay (Duplicate) of sequence 7");
    }
}
