//! The key store: key id -> key material, algorithms and validity window, loaded from the TOML
//! key file described in `docs/keys.md`:
//!
//! ```toml
//! [[key]]
//! id = 1
//! mac = "hmac-sha256-128"      # none | hmac-sha256-80 | ... (see MacAlgorithm)
//! enc = "aes-128-gcm"          # none | aes-128-gcm | aes-256-gcm
//! key = "00112233..."          # or key_ascii = "..." or key_file = "k1.bin"
//! not_before = 2026-01-01T00:00:00Z   # optional, or Unix seconds
//! not_after  = 2026-02-01T00:00:00Z   # optional
//! ```
//!
//! Keys are prepared once on load (HMAC pads, AES key schedules) so protect and verify do only the
//! per-message work. The validity window feeds the session header's TimeOfCurrentKey and
//! TimeToNextKey (IEC 62351-6 / IEC 61850-90-5 security information).

use crate::algorithm::{EncAlgorithm, MacAlgorithm};
use crate::error::SecError;
use crate::provider::{AeadKey, CryptoProvider, MacKey};
use crate::signature::{SignatureAlgorithm, SigningKey, VerifyingKey};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Why a key file was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyFileError {
    /// The file could not be read.
    #[error("cannot read key file {}", path.display())]
    Io {
        /// Path.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// Not valid TOML, or fields of the wrong type or unknown fields.
    #[error("key file: {0}")]
    Syntax(String),
    /// A key entry is inconsistent.
    #[error("key {id}: {reason}")]
    BadKey {
        /// Key id.
        id: u32,
        /// What is wrong.
        reason: String,
    },
    /// Two entries with the same id.
    #[error("key id {0} appears twice")]
    DuplicateId(u32),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    #[serde(default)]
    key: Vec<KeyEntryToml>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyEntryToml {
    id: u32,
    #[serde(default)]
    mac: Option<String>,
    #[serde(default)]
    enc: Option<String>,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    key_ascii: Option<String>,
    #[serde(default)]
    key_file: Option<PathBuf>,
    #[serde(default)]
    sig: Option<String>,
    #[serde(default)]
    private_key_file: Option<PathBuf>,
    #[serde(default)]
    public_key_file: Option<PathBuf>,
    #[serde(default)]
    not_before: Option<toml::Value>,
    #[serde(default)]
    not_after: Option<toml::Value>,
    #[serde(default)]
    appids: Option<Vec<u16>>,
}

/// One provisioned key with its prepared crypto state.
pub struct KeyEntry {
    /// Key id (the session header's KeyID, the L2 extension's KeyID).
    pub id: u32,
    /// MAC algorithm bound to this key id.
    pub mac: MacAlgorithm,
    /// Encryption algorithm bound to this key id.
    pub enc: EncAlgorithm,
    /// Start of validity, Unix seconds.
    pub not_before: Option<u64>,
    /// End of validity, Unix seconds.
    pub not_after: Option<u64>,
    secret: Zeroizing<Vec<u8>>,
    mac_key: Option<Box<dyn MacKey>>,
    aead_key: Option<Box<dyn AeadKey>>,
    /// Signature keys for layer-2 GOOSE (IEC 62351-6 digital signatures in the mAC field).
    pub signature: Option<SignatureKeys>,
    /// The publishers (APPIDs) this key may protect; `None`: any. A frame that verifies under
    /// the key but carries another APPID is refused, so a key holder of one stream cannot
    /// speak for another (IEC 62351-9 distributes group keys per publisher group).
    pub appids: Option<Vec<u16>>,
}

/// A signature key pair, or only its public half on a subscriber.
#[derive(Debug)]
pub struct SignatureKeys {
    /// Algorithm.
    pub algorithm: SignatureAlgorithm,
    /// Private key (publishers).
    pub signing: Option<SigningKey>,
    /// Public key (subscribers; derived from the private key if absent).
    pub verifying: VerifyingKey,
}

impl SignatureKeys {
    /// Length of the signature on the wire (ECDSA as raw r||s, 64 bytes; ML-DSA/SLH-DSA as
    /// FIPS 204/205 give them).
    pub fn wire_len(&self) -> usize {
        self.verifying.signature_len()
    }
}

impl std::fmt::Debug for KeyEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyEntry")
            .field("id", &self.id)
            .field("mac", &self.mac)
            .field("enc", &self.enc)
            .field("key_len", &self.secret.len())
            .field("not_before", &self.not_before)
            .field("not_after", &self.not_after)
            .finish()
    }
}

impl KeyEntry {
    /// Builds and prepares a key. The same secret serves the MAC and the AEAD, as in
    /// libiec61850's `RSession_addKey` (one key record per key id).
    pub fn new(
        id: u32,
        mac: MacAlgorithm,
        enc: EncAlgorithm,
        secret: &[u8],
        provider: &dyn CryptoProvider,
    ) -> Result<Self, KeyFileError> {
        let bad = |reason: String| KeyFileError::BadKey { id, reason };
        if mac == MacAlgorithm::None && enc == EncAlgorithm::None {
            return Err(bad(
                "neither mac nor enc is set: an unsecured key id is meaningless".into(),
            ));
        }
        if secret.is_empty() {
            return Err(bad("empty key".into()));
        }
        if mac.needs_iv() && enc != EncAlgorithm::None {
            // GMAC and GCM under one key would use one IV for two GCM invocations (SP 800-38D §8).
            return Err(bad(format!("{mac} together with {enc} on one key would reuse the GCM nonce; GCM already authenticates")));
        }
        if enc != EncAlgorithm::None && secret.len() != enc.key_len() {
            return Err(bad(format!(
                "{enc} needs a {}-byte key, got {}",
                enc.key_len(),
                secret.len()
            )));
        }
        if !mac.accepts_key_len(secret.len()) {
            return Err(bad(format!(
                "{mac} does not take a {}-byte key",
                secret.len()
            )));
        }
        let mac_key = if mac != MacAlgorithm::None {
            Some(
                provider
                    .mac_key(mac, secret)
                    .map_err(|e| bad(e.to_string()))?,
            )
        } else {
            None
        };
        let aead_key = if enc != EncAlgorithm::None {
            Some(
                provider
                    .aead_key(enc, secret)
                    .map_err(|e| bad(e.to_string()))?,
            )
        } else {
            None
        };
        Ok(KeyEntry {
            id,
            mac,
            enc,
            not_before: None,
            not_after: None,
            secret: Zeroizing::new(secret.to_vec()),
            mac_key,
            aead_key,
            signature: None,
            appids: None,
        })
    }

    /// A signature-only key (layer-2 GOOSE integrity with a digital signature).
    pub fn signature_only(id: u32, keys: SignatureKeys) -> Self {
        KeyEntry {
            id,
            mac: MacAlgorithm::None,
            enc: EncAlgorithm::None,
            not_before: None,
            not_after: None,
            secret: Zeroizing::new(Vec::new()),
            mac_key: None,
            aead_key: None,
            signature: Some(keys),
            appids: None,
        }
    }

    /// Sets the validity window.
    pub fn with_validity(mut self, not_before: Option<u64>, not_after: Option<u64>) -> Self {
        self.not_before = not_before;
        self.not_after = not_after;
        self
    }

    /// Binds the key to these APPIDs.
    pub fn with_appids(mut self, appids: Option<Vec<u16>>) -> Self {
        self.appids = appids;
        self
    }

    /// Fails unless the key may protect `appid`.
    pub fn check_appid(&self, appid: u16) -> Result<(), SecError> {
        match &self.appids {
            Some(list) if !list.contains(&appid) => {
                Err(SecError::KeyNotAllowed { id: self.id, appid })
            }
            _ => Ok(()),
        }
    }

    /// Key length in bytes.
    pub fn key_len(&self) -> usize {
        self.secret.len()
    }

    /// The raw secret (for the benchmark's per-message baseline only).
    pub fn secret(&self) -> &[u8] {
        &self.secret
    }

    /// The prepared MAC key (None if `mac` is none).
    pub fn mac_key(&self) -> Option<&dyn MacKey> {
        self.mac_key.as_deref()
    }

    /// The prepared AEAD key (None if `enc` is none).
    pub fn aead_key(&self) -> Option<&dyn AeadKey> {
        self.aead_key.as_deref()
    }

    /// Fails unless `now` (Unix seconds) is inside the validity window.
    pub fn check_valid_at(&self, now: u64) -> Result<(), SecError> {
        if let Some(nb) = self.not_before {
            if now < nb {
                return Err(SecError::KeyNotYetValid {
                    id: self.id,
                    not_before: nb,
                });
            }
        }
        if let Some(na) = self.not_after {
            if now >= na {
                return Err(SecError::KeyExpired {
                    id: self.id,
                    not_after: na,
                });
            }
        }
        Ok(())
    }

    /// TimeOfCurrentKey: when this key became valid (Unix seconds, 0 if unknown).
    pub fn time_of_current_key(&self) -> u32 {
        self.not_before
            .map(|t| t.min(u32::MAX as u64) as u32)
            .unwrap_or(0)
    }

    /// TimeToNextKey: whole minutes from `now` until this key expires, clamped to i16; -1 when
    /// the key has no end (no next key is scheduled).
    pub fn time_to_next_key(&self, now: u64) -> i16 {
        match self.not_after {
            None => -1,
            Some(na) => (na.saturating_sub(now) / 60).min(i16::MAX as u64) as i16,
        }
    }
}

/// Every provisioned key, by id.
#[derive(Debug, Default)]
pub struct KeyStore {
    keys: BTreeMap<u32, KeyEntry>,
}

impl KeyStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a key; refuses a duplicate id.
    pub fn insert(&mut self, key: KeyEntry) -> Result<(), KeyFileError> {
        if self.keys.contains_key(&key.id) {
            return Err(KeyFileError::DuplicateId(key.id));
        }
        self.keys.insert(key.id, key);
        Ok(())
    }

    /// Looks a key up.
    pub fn get(&self, id: u32) -> Option<&KeyEntry> {
        self.keys.get(&id)
    }

    /// Looks a key up, failing with `UnknownKeyId`.
    pub fn require(&self, id: u32) -> Result<&KeyEntry, SecError> {
        self.get(id).ok_or(SecError::UnknownKeyId(id))
    }

    /// All keys in id order.
    pub fn iter(&self) -> impl Iterator<Item = &KeyEntry> {
        self.keys.values()
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Loads a key file; relative `key_file` paths are resolved against the file's directory.
    pub fn load(path: &Path, provider: &dyn CryptoProvider) -> Result<Self, KeyFileError> {
        use std::io::Read;
        let io = |source| KeyFileError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut text = String::new();
        std::fs::File::open(path)
            .map_err(io)?
            .take(MAX_KEY_STORE_FILE + 1)
            .read_to_string(&mut text)
            .map_err(io)?;
        if text.len() as u64 > MAX_KEY_STORE_FILE {
            return Err(KeyFileError::Syntax(format!(
                "{} is larger than {MAX_KEY_STORE_FILE} bytes: not a key file",
                path.display()
            )));
        }
        let base = path.parent().unwrap_or(Path::new("."));
        Self::from_toml(&text, base, provider)
    }

    /// Parses key-file text.
    pub fn from_toml(
        text: &str,
        base: &Path,
        provider: &dyn CryptoProvider,
    ) -> Result<Self, KeyFileError> {
        let file: KeyFile =
            toml::from_str(text).map_err(|e| KeyFileError::Syntax(e.to_string()))?;
        let mut store = KeyStore::new();
        for k in file.key {
            let id = k.id;
            let bad = |reason: String| KeyFileError::BadKey { id, reason };
            let mac: MacAlgorithm = match &k.mac {
                Some(s) => s
                    .parse()
                    .map_err(|e: crate::algorithm::UnknownAlgorithm| bad(e.to_string()))?,
                None => MacAlgorithm::None,
            };
            let enc: EncAlgorithm = match &k.enc {
                Some(s) => s
                    .parse()
                    .map_err(|e: crate::algorithm::UnknownAlgorithm| bad(e.to_string()))?,
                None => EncAlgorithm::None,
            };
            let nb = k
                .not_before
                .as_ref()
                .map(|v| toml_time(v).map_err(|e| bad(format!("not_before: {e}"))))
                .transpose()?;
            let na = k
                .not_after
                .as_ref()
                .map(|v| toml_time(v).map_err(|e| bad(format!("not_after: {e}"))))
                .transpose()?;
            if let (Some(a), Some(b)) = (nb, na) {
                if b <= a {
                    return Err(bad("not_after is not after not_before".into()));
                }
            }
            if k.appids.as_ref().is_some_and(Vec::is_empty) {
                return Err(bad("appids is empty: the key could protect nothing".into()));
            }
            if let Some(sig) = &k.sig {
                if mac != MacAlgorithm::None
                    || enc != EncAlgorithm::None
                    || k.key.is_some()
                    || k.key_ascii.is_some()
                    || k.key_file.is_some()
                {
                    return Err(bad(
                        "a signature key takes private_key_file/public_key_file, not mac/enc/key"
                            .into(),
                    ));
                }
                let alg: SignatureAlgorithm = sig
                    .parse()
                    .map_err(|e: crate::algorithm::UnknownAlgorithm| bad(e.to_string()))?;
                let read = |p: &PathBuf| read_capped(&base.join(p)).map_err(|e| bad(e.to_string()));
                let signing = k
                    .private_key_file
                    .as_ref()
                    .map(|p| {
                        SigningKey::from_pkcs8_pem(alg, &read(p)?)
                            .map_err(|e| bad(format!("private key: {e}")))
                    })
                    .transpose()?;
                let verifying = match (&k.public_key_file, &signing) {
                    (Some(p), _) => VerifyingKey::from_spki_pem(alg, &read(p)?)
                        .map_err(|e| bad(format!("public key: {e}")))?,
                    (None, Some(s)) => s.verifying_key().map_err(|e| bad(e.to_string()))?,
                    (None, None) => {
                        return Err(bad(
                            "a signature key needs private_key_file or public_key_file".into(),
                        ))
                    }
                };
                let entry = KeyEntry::signature_only(
                    id,
                    SignatureKeys {
                        algorithm: alg,
                        signing,
                        verifying,
                    },
                )
                .with_validity(nb, na)
                .with_appids(k.appids.clone());
                store.insert(entry)?;
                continue;
            }
            let sources =
                k.key.is_some() as u8 + k.key_ascii.is_some() as u8 + k.key_file.is_some() as u8;
            if sources != 1 {
                return Err(bad("give exactly one of key, key_ascii, key_file".into()));
            }
            let secret: Zeroizing<Vec<u8>> = if let Some(h) = &k.key {
                let h: String = h
                    .chars()
                    .filter(|c| !c.is_whitespace() && *c != ':')
                    .collect();
                Zeroizing::new(hex::decode(&h).map_err(|e| bad(format!("key is not hex: {e}")))?)
            } else if let Some(a) = &k.key_ascii {
                Zeroizing::new(a.as_bytes().to_vec())
            } else {
                let p = base.join(k.key_file.as_ref().expect("one source is set"));
                Zeroizing::new(read_capped(&p).map_err(|e| bad(e.to_string()))?)
            };
            let entry = KeyEntry::new(id, mac, enc, &secret, provider)?
                .with_validity(nb, na)
                .with_appids(k.appids.clone());
            store.insert(entry)?;
        }
        Ok(store)
    }
}

/// Largest key file (the TOML) accepted: thousands of keys fit in far less.
const MAX_KEY_STORE_FILE: u64 = 4 * 1024 * 1024;

/// Largest key or key-pair file accepted: an RSA-8192 PKCS#8 PEM is under 7 KiB.
const MAX_KEY_FILE: u64 = 64 * 1024;

/// Reads a key file, refusing anything larger than [`MAX_KEY_FILE`] (a key file pointing at
/// `/dev/zero` or a log must fail, not exhaust memory).
fn read_capped(p: &Path) -> Result<Vec<u8>, KeyReadError> {
    use std::io::Read;
    let cannot = |error| KeyReadError::Read {
        path: p.to_path_buf(),
        error,
    };
    let f = std::fs::File::open(p).map_err(cannot)?;
    let mut buf = Vec::new();
    f.take(MAX_KEY_FILE + 1)
        .read_to_end(&mut buf)
        .map_err(cannot)?;
    if buf.len() as u64 > MAX_KEY_FILE {
        return Err(KeyReadError::TooLarge(p.to_path_buf()));
    }
    Ok(buf)
}

/// Why a key file named by a key entry could not be used; it becomes that entry's
/// [`KeyFileError::BadKey`] reason, so its message carries the I/O error.
#[derive(Debug, thiserror::Error)]
enum KeyReadError {
    /// The file could not be opened or read.
    #[error("cannot read {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The file is larger than any key file.
    #[error("{} is larger than {MAX_KEY_FILE} bytes: not a key file", .0.display())]
    TooLarge(PathBuf),
}

/// Why a key's validity bound is not a time.
#[derive(Debug, thiserror::Error)]
enum TimeError {
    /// A time of day without a date.
    #[error("a date is required")]
    NoDate,
    /// A date-time before the Unix epoch.
    #[error("before 1970")]
    Before1970,
    /// Neither a date-time nor an integer.
    #[error("expected a date-time or Unix seconds")]
    NotATime,
}

/// A TOML offset date-time (or local date-time taken as UTC, or an integer) as Unix seconds.
fn toml_time(v: &toml::Value) -> Result<u64, TimeError> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => Ok(*i as u64),
        toml::Value::Datetime(dt) => {
            let date = dt.date.ok_or(TimeError::NoDate)?;
            let time = dt.time.unwrap_or(toml::value::Time {
                hour: 0,
                minute: 0,
                second: 0,
                nanosecond: 0,
            });
            let offset_min: i64 = match dt.offset {
                None | Some(toml::value::Offset::Z) => 0,
                Some(toml::value::Offset::Custom { minutes }) => minutes as i64,
            };
            let days = days_from_civil(date.year as i64, date.month as i64, date.day as i64);
            let secs = days * 86_400
                + time.hour as i64 * 3600
                + time.minute as i64 * 60
                + time.second as i64
                - offset_min * 60;
            u64::try_from(secs).map_err(|_| TimeError::Before1970)
        }
        _ => Err(TimeError::NotATime),
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's civil-from-days inverse).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::default_provider;

    #[test]
    fn endless_key_files_are_refused() {
        // Found by fuzz_keyfile: a key_file naming a device that never ends.
        let text = "[[key]]\nid = 7\nmac = \"hmac-blake2s-80\"\nkey_file = \"/dev/zero\"\n";
        let err = KeyStore::from_toml(text, Path::new("."), default_provider()).unwrap_err();
        assert!(err.to_string().contains("larger than"), "{err}");
    }

    #[test]
    fn an_endless_key_store_file_is_refused() {
        let err = KeyStore::load(Path::new("/dev/zero"), default_provider()).unwrap_err();
        assert!(err.to_string().contains("larger than"), "{err}");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2026, 11, 22), 20_779);
    }

    #[test]
    fn loads_a_key_file() {
        let text = r#"
            [[key]]
            id = 1
            mac = "hmac-sha256-128"
            enc = "aes-128-gcm"
            key_ascii = "0123456789ABCDEF"
            not_before = 2026-01-01T00:00:00Z
            not_after = 1798761600
            [[key]]
            id = 7
            mac = "aes-gmac-64"
            key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
        "#;
        let s = KeyStore::from_toml(text, Path::new("."), default_provider()).unwrap();
        let k = s.require(1).unwrap();
        assert_eq!(
            (k.mac, k.enc),
            (MacAlgorithm::HmacSha256_128, EncAlgorithm::Aes128Gcm)
        );
        assert_eq!(k.not_before, Some(1_767_225_600));
        assert!(k.check_valid_at(1_767_225_599).is_err());
        assert!(k.check_valid_at(1_767_225_600).is_ok());
        assert!(matches!(
            k.check_valid_at(1_798_761_600),
            Err(SecError::KeyExpired { .. })
        ));
        assert_eq!(k.time_to_next_key(1_798_761_600 - 120), 2);
        assert_eq!(s.require(7).unwrap().key_len(), 32);
        assert!(matches!(s.require(3), Err(SecError::UnknownKeyId(3))));
    }

    #[test]
    fn refuses_bad_entries() {
        let cases = [
            ("[[key]]\nid=1\nmac=\"hmac-md5\"\nkey=\"00\"", "unknown algorithm"),
            ("[[key]]\nid=1\nenc=\"aes-128-gcm\"\nkey=\"00\"", "16-byte key"),
            ("[[key]]\nid=1\nmac=\"aes-gmac-128\"\nenc=\"aes-128-gcm\"\nkey_ascii=\"0123456789ABCDEF\"", "nonce"),
            ("[[key]]\nid=1\nmac=\"hmac-sha256-80\"", "exactly one"),
            ("[[key]]\nid=1\nkey=\"00\"", "neither"),
            ("[[key]]\nid=1\nmac=\"hmac-sha256-80\"\nkey=\"zz\"", "not hex"),
            ("[[key]]\nid=1\nmac=\"hmac-sha256-80\"\nkey=\"00\"\ncolour=1", "unknown field"),
            ("[[key]]\nid=1\nmac=\"hmac-sha256-80\"\nkey=\"00\"\n[[key]]\nid=1\nmac=\"hmac-sha256-80\"\nkey=\"00\"", "twice"),
            ("[[key]]\nid=1\nmac=\"hmac-sha256-80\"\nkey=\"00\"\nnot_before=10\nnot_after=5", "not after"),
        ];
        for (text, want) in cases {
            let err = KeyStore::from_toml(text, Path::new("."), default_provider())
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
