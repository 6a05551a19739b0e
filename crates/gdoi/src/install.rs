//! A TEK received from the key server becomes an IEC 62351-6 key in gander's key store
//! (`gander_sec::KeyStore`): the Key ID is the TEK's SPI, the algorithms are the IEC 62351-6
//! codes the policy names (the R-GOOSE header's codes, `gander_sec::Profile::mac_from_code`),
//! the secret is TEK_INTEGRITY_KEY for a MAC (AES-GMAC included) and TEK_ALGORITHM_KEY for
//! GCM, an AES key without the salt RFC 8052 2.3 appends (`tek_keys`), and the
//! validity window follows from the activation delay and lifetime (docs/gdoi.md).

use crate::pull::TekKey;
use gander_sec::{CryptoProvider, EncAlgorithm, KeyEntry, MacAlgorithm, Profile};

/// Why a TEK cannot be installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// The policy names an algorithm code IEC 62351-6 does not define.
    #[error("algorithm: {0}")]
    Algorithm(#[from] gander_sec::SecError),
    /// The key does not fit the algorithm.
    #[error("key: {0}")]
    Key(#[from] gander_sec::KeyFileError),
    /// No key for the algorithm named.
    #[error("the TEK carries no key for its algorithm")]
    NoKey,
    /// A code wider than the 8 bits of the IEC 62351-6 header.
    #[error("algorithm code out of range")]
    Code,
}

/// The key-store entry for a TEK received at `received` (seconds since the epoch): valid from
/// `received + SA_ATD` to `received + SA_ATD + lifetime (+ SA_KDA overlap)`.
pub fn key_entry(
    t: &TekKey,
    provider: &dyn CryptoProvider,
    received: u64,
) -> Result<KeyEntry, InstallError> {
    let code = |v: Option<u16>| u8::try_from(v.unwrap_or(0)).map_err(|_| InstallError::Code);
    let (mac, _) = Profile::Standard.mac_from_code(code(t.mac_algorithm)?)?;
    let enc = Profile::Standard.enc_from_code(code(t.encryption_algorithm)?)?;
    let gcm = enc != EncAlgorithm::None;
    let aes = gcm || matches!(mac, MacAlgorithm::AesGmac64 | MacAlgorithm::AesGmac128);
    // RFC 8052 2.3: the AES key without its salt (`tek_keys`).
    let secret = t.received_key(aes, gcm).ok_or(InstallError::NoKey)?.key;
    let start = received.saturating_add(t.activation_delay_secs.unwrap_or(0));
    let end = t.lifetime_secs.map(|l| {
        start
            .saturating_add(l)
            .saturating_add(t.overlap_secs.unwrap_or(0))
    });
    Ok(KeyEntry::new(t.key_id, mac, enc, &secret, provider)?.with_validity(Some(start), end))
}
