//! Why the gateway dropped a frame: one variant per counter, so drivers, tests and the bench
//! can act on a reason; [`DropReason::name`] is the counter's stable name in the JSON reports
//! (documented in `docs/gateway.md`).

use gander_sec::SecError;

/// Why a frame was not forwarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DropReason {
    /// A layer that looks like IEC 61850 traffic does not parse.
    Malformed,
    /// IPv4 header or UDP checksum wrong.
    BadChecksum,
    /// A fragment of a UDP datagram.
    IpFragment,
    /// No security where a rule requires it.
    Unsecured,
    /// Key id not in the key file.
    UnknownKey,
    /// Key expired.
    KeyExpired,
    /// Key not yet valid.
    KeyNotYetValid,
    /// The key verified but may not protect this publisher (key file `appids`, rule `key_ids`).
    KeyNotAllowed,
    /// A frame the gateway would itself have protected in the other direction.
    Reflected,
    /// An unauthenticated field differs from the publisher's `[[pin]]`.
    PinMismatch,
    /// An SPDU whose payload elements carry different APPIDs.
    MixedAppids,
    /// MAC or signature does not verify.
    BadMac,
    /// AES-GCM tag does not verify.
    BadTag,
    /// MAC or tag absent.
    MissingAuthenticator,
    /// IV absent or of the wrong length.
    BadIv,
    /// Version-1 algorithm codes do not match the key.
    AlgorithmMismatch,
    /// Algorithm code unknown to the profile.
    UnknownAlgorithm,
    /// Replayed or stale.
    Replay,
    /// A protect rule met a secured frame.
    AlreadySecured,
    /// No key of a protect rule is valid now.
    NoValidKey,
    /// Something gander cannot check or do (layer-2 SV security, tunnelled SPDUs, ...).
    Unsupported,
    /// The crypto provider failed.
    Crypto,
    /// A `drop` rule.
    Policy,
    /// IEC 61850 traffic no rule matches, with `default = "drop"`.
    NoRule,
    /// Non-IEC 61850 traffic with `other = "drop"`.
    Other,
    /// Translation of an SPDU with several elements.
    TranslateMultiElement,
    /// Translation of something other than GOOSE.
    TranslateNotGoose,
    /// Translation without its addresses.
    TranslateUnconfigured,
}

impl DropReason {
    /// Every reason, for reports that list the zeros too (OpenMetrics, docs).
    pub const ALL: [DropReason; 28] = [
        DropReason::Malformed,
        DropReason::BadChecksum,
        DropReason::IpFragment,
        DropReason::Unsecured,
        DropReason::UnknownKey,
        DropReason::KeyExpired,
        DropReason::KeyNotYetValid,
        DropReason::KeyNotAllowed,
        DropReason::Reflected,
        DropReason::PinMismatch,
        DropReason::MixedAppids,
        DropReason::BadMac,
        DropReason::BadTag,
        DropReason::MissingAuthenticator,
        DropReason::BadIv,
        DropReason::AlgorithmMismatch,
        DropReason::UnknownAlgorithm,
        DropReason::Replay,
        DropReason::AlreadySecured,
        DropReason::NoValidKey,
        DropReason::Unsupported,
        DropReason::Crypto,
        DropReason::Policy,
        DropReason::NoRule,
        DropReason::Other,
        DropReason::TranslateMultiElement,
        DropReason::TranslateNotGoose,
        DropReason::TranslateUnconfigured,
    ];

    /// The counter name (stable: JSON reports and docs use it).
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Malformed => "malformed",
            DropReason::BadChecksum => "bad-checksum",
            DropReason::IpFragment => "ip-fragment",
            DropReason::Unsecured => "unsecured",
            DropReason::UnknownKey => "unknown-key",
            DropReason::KeyExpired => "key-expired",
            DropReason::KeyNotYetValid => "key-not-yet-valid",
            DropReason::KeyNotAllowed => "key-not-allowed",
            DropReason::Reflected => "reflected",
            DropReason::PinMismatch => "pin-mismatch",
            DropReason::MixedAppids => "mixed-appids",
            DropReason::BadMac => "bad-mac",
            DropReason::BadTag => "bad-tag",
            DropReason::MissingAuthenticator => "missing-authenticator",
            DropReason::BadIv => "bad-iv",
            DropReason::AlgorithmMismatch => "algorithm-mismatch",
            DropReason::UnknownAlgorithm => "unknown-algorithm",
            DropReason::Replay => "replay",
            DropReason::AlreadySecured => "already-secured",
            DropReason::NoValidKey => "no-valid-key",
            DropReason::Unsupported => "unsupported",
            DropReason::Crypto => "crypto",
            DropReason::Policy => "policy",
            DropReason::NoRule => "no-rule",
            DropReason::Other => "other",
            DropReason::TranslateMultiElement => "translate-multi-element",
            DropReason::TranslateNotGoose => "translate-not-goose",
            DropReason::TranslateUnconfigured => "translate-unconfigured",
        }
    }
}

impl std::fmt::Display for DropReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<&SecError> for DropReason {
    fn from(e: &SecError) -> Self {
        match e {
            SecError::Malformed(_) | SecError::WrongProfile { .. } => DropReason::Malformed,
            SecError::UnknownKeyId(_) => DropReason::UnknownKey,
            SecError::KeyNotYetValid { .. } => DropReason::KeyNotYetValid,
            SecError::KeyExpired { .. } => DropReason::KeyExpired,
            SecError::AlgorithmMismatch { .. } => DropReason::AlgorithmMismatch,
            SecError::UnknownAlgorithmCode { .. } => DropReason::UnknownAlgorithm,
            SecError::MissingAuthenticator(_) => DropReason::MissingAuthenticator,
            SecError::BadIv(_) => DropReason::BadIv,
            SecError::BadMac => DropReason::BadMac,
            SecError::BadTag => DropReason::BadTag,
            SecError::Replay { .. } => DropReason::Replay,
            SecError::KeyNotAllowed { .. } => DropReason::KeyNotAllowed,
            SecError::Unsecured => DropReason::Unsecured,
            SecError::BadChecksum(_) => DropReason::BadChecksum,
            SecError::Fragment => DropReason::IpFragment,
            SecError::AlreadySecured(_) => DropReason::AlreadySecured,
            SecError::Unsupported(_) => DropReason::Unsupported,
            SecError::Crypto(_) => DropReason::Crypto,
            _ => DropReason::Malformed,
        }
    }
}

impl From<SecError> for DropReason {
    fn from(e: SecError) -> Self {
        DropReason::from(&e)
    }
}

impl From<gander_wire::Error> for DropReason {
    fn from(_: gander_wire::Error) -> Self {
        DropReason::Malformed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sec_error_code_is_the_counter_name() {
        // The gateway's counter names and `gander frame verify`'s words are the same strings.
        for e in [
            SecError::BadMac,
            SecError::BadTag,
            SecError::UnknownKeyId(1),
            SecError::Unsecured,
            SecError::Fragment,
            SecError::BadChecksum("UDP"),
            SecError::KeyNotAllowed { id: 1, appid: 2 },
            SecError::Replay {
                kind: gander_sec::ReplayKind::Duplicate,
                seq: 1,
            },
            SecError::Unsupported("x"),
            SecError::AlreadySecured(1),
        ] {
            assert_eq!(DropReason::from(&e).name(), e.code(), "{e:?}");
        }
    }
}
