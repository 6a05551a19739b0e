//! The key server's persistent state: per group its TEKs (Key ID, key, activation, expiry,
//! withdrawal), its KEK, the last GROUPKEY-PUSH SEQ used and the members authorised when it was
//! last written; the next Key ID never used; the key server's signing key.
//!
//! Why: a key server restarted mid-rollover must hand out the same keys under the same Key IDs,
//! never a Key ID with another key (IEC 62351-6 receivers select the key by Key ID), and never a
//! SEQ a member has already seen (RFC 6407 4.1: members drop a push whose SEQ is not above the
//! last one, so a reused SEQ would silently lose a rekey). Every change is written before the
//! push that announces it is sent (write-ahead), so a crash between the two loses a push, never
//! uniqueness; the key server re-announces pending keys at start under a fresh SEQ.
//!
//! The file holds secrets: it is written with mode 0600 through a temporary file that is
//! fsync'd and renamed over the old one (a crash leaves the old or the new state, never half),
//! and the directory is fsync'd so the rename survives power loss. A state file that the group
//! or others can read is refused at start: its keys must be considered disclosed.

use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why the state cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Cannot read or write the file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a state file.
    #[error("{path}: {source}")]
    Toml {
        /// The file.
        path: PathBuf,
        /// The error.
        source: toml::de::Error,
    },
    /// The group or others may read the file (mode shown in octal).
    #[error("{path}: mode {mode:o} lets others read the key server's keys; chmod 600 it")]
    Permissions {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A value in the file is not usable (bad hex, wrong length, bad signing key).
    #[error("state: {0}")]
    Bad(&'static str),
    /// Every Key ID (or SEQ) has been used.
    #[error("{0} exhausted: the group needs a new identity")]
    Exhausted(&'static str),
}

/// One TEK of a group, as the key server schedules it (times in seconds since the epoch).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct KeyState {
    /// The IEC 62351-6 Key ID (the TEK's SPI).
    pub key_id: u32,
    /// The key, hex.
    pub key_hex: String,
    /// When publishers switch to it.
    pub activates_at: u64,
    /// End of its lifetime: the next key activates then.
    pub expires_at: u64,
    /// When it is withdrawn (Delete payload): expiry plus the overlap (SA_KDA), or earlier
    /// after a revocation.
    pub delete_at: u64,
}

/// One group's state.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct GroupState {
    /// The last SEQ used in a GROUPKEY-PUSH of this group (the next push gets a higher one).
    pub seq: u32,
    /// KEK SPI, hex (16 octets).
    pub kek_spi_hex: String,
    /// KEK (AES-256) key, hex.
    pub kek_key_hex: String,
    /// The TEKs not yet withdrawn, oldest first.
    #[serde(default)]
    pub keys: Vec<KeyState>,
    /// The member identities authorised for the group when this state was written: a member
    /// missing from the policy at the next start or reload is revoked.
    #[serde(default)]
    pub members: Vec<String>,
}

/// The whole state file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct KdcState {
    /// The next Key ID never used (Key IDs are unique across groups and restarts).
    pub next_key_id: u32,
    /// The key server's signing key (PKCS#8 PEM, ECDSA P-256), made on first start.
    #[serde(default)]
    pub signing_key_pem: String,
    /// Per group, by group id.
    #[serde(default)]
    pub groups: BTreeMap<String, GroupState>,
}

impl KdcState {
    /// A fresh state with a new signing key.
    pub fn new() -> Result<KdcState, StateError> {
        let mut s = KdcState {
            next_key_id: 1,
            ..KdcState::default()
        };
        s.ensure_signer()?;
        Ok(s)
    }

    /// Takes a fresh Key ID (never 0, never one used before).
    pub fn take_key_id(&mut self) -> Result<u32, StateError> {
        let id = self.next_key_id.max(1);
        self.next_key_id = id.checked_add(1).ok_or(StateError::Exhausted("Key IDs"))?;
        Ok(id)
    }

    /// Makes a signing key if the state has none.
    pub fn ensure_signer(&mut self) -> Result<(), StateError> {
        if self.signing_key_pem.is_empty() {
            let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)
                .map_err(|_| StateError::Bad("EC group"))?;
            let k = EcKey::generate(&g).map_err(|_| StateError::Bad("EC key"))?;
            let pk = PKey::from_ec_key(k).map_err(|_| StateError::Bad("EC key"))?;
            let pem = pk
                .private_key_to_pem_pkcs8()
                .map_err(|_| StateError::Bad("EC key"))?;
            self.signing_key_pem =
                String::from_utf8(pem).map_err(|_| StateError::Bad("signing key PEM"))?;
        }
        Ok(())
    }

    /// The signing key.
    pub fn signer(&self) -> Result<PKey<Private>, StateError> {
        PKey::private_key_from_pem(self.signing_key_pem.as_bytes())
            .map_err(|_| StateError::Bad("signing_key_pem is not a private key"))
    }
}

/// Reads the state file; `Ok(None)` if it does not exist yet. Refuses a file the group or
/// others may read.
pub fn load_state(path: &Path) -> Result<Option<KdcState>, StateError> {
    use std::os::unix::fs::PermissionsExt;
    let io = |source| StateError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(StateError::Permissions {
            path: path.to_path_buf(),
            mode,
        });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    let mut s: KdcState = toml::from_str(&text).map_err(|source| StateError::Toml {
        path: path.to_path_buf(),
        source,
    })?;
    s.ensure_signer()?;
    s.signer()?;
    Ok(Some(s))
}

/// Writes `state` to `path` atomically with mode 0600: temporary file, fsync, rename, fsync of
/// the directory.
pub fn save_state(path: &Path, state: &KdcState) -> Result<(), StateError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |source| StateError::Io {
        path: path.to_path_buf(),
        source,
    };
    let text = toml::to_string(state).map_err(|_| StateError::Bad("cannot serialise"))?;
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("gander-kdc-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn saved_state_is_0600_and_reads_back() {
        let d = dir("rt");
        let p = d.join("state.toml");
        let mut s = KdcState::new().unwrap();
        let id = s.take_key_id().unwrap();
        s.groups.insert(
            "g".into(),
            GroupState {
                seq: 9,
                kek_spi_hex: "00".repeat(16),
                kek_key_hex: "11".repeat(32),
                keys: vec![KeyState {
                    key_id: id,
                    key_hex: "22".repeat(32),
                    activates_at: 10,
                    expires_at: 20,
                    delete_at: 25,
                }],
                members: vec!["ied-1".into()],
            },
        );
        save_state(&p, &s).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(load_state(&p).unwrap(), Some(s));
        assert!(!d.join("state.toml.tmp").exists());
    }

    #[test]
    fn readable_state_is_refused() {
        let d = dir("perm");
        let p = d.join("state.toml");
        save_state(&p, &KdcState::new().unwrap()).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(matches!(
            load_state(&p),
            Err(StateError::Permissions { mode: 0o640, .. })
        ));
        assert!(load_state(&d.join("absent")).unwrap().is_none());
    }

    #[test]
    fn key_ids_never_repeat_and_stop_at_the_end() {
        let mut s = KdcState::new().unwrap();
        let a = s.take_key_id().unwrap();
        let b = s.take_key_id().unwrap();
        assert!(b > a && a >= 1);
        s.next_key_id = u32::MAX;
        assert!(matches!(s.take_key_id(), Err(StateError::Exhausted(_))));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Any state the key server holds reads back equal from its file.
        #[test]
        fn state_file_round_trip(
            next in 1u32..,
            seq: u32,
            keys in proptest::collection::vec((1u32.., 0u64..1 << 40, 0u64..1 << 20, 0u64..1 << 20), 0..6),
            members in proptest::collection::vec("[a-z0-9-]{1,12}", 0..4),
        ) {
            let d = dir("prop");
            let p = d.join("state.toml");
            let mut s = KdcState::new().unwrap();
            s.next_key_id = next;
            s.groups.insert("g\"1".into(), GroupState {
                seq,
                kek_spi_hex: "ab".repeat(16),
                kek_key_hex: "cd".repeat(32),
                keys: keys.iter().map(|&(id, a, l, o)| KeyState {
                    key_id: id,
                    key_hex: hex::encode(id.to_be_bytes()),
                    activates_at: a,
                    expires_at: a + l,
                    delete_at: a + l + o,
                }).collect(),
                members,
            });
            save_state(&p, &s).unwrap();
            proptest::prop_assert_eq!(load_state(&p).unwrap(), Some(s));
        }
    }
}
