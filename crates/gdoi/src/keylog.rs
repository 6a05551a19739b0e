//! A key log for the lab: one line per phase-1 SA in the form of Wireshark's IKEv1 decryption
//! table (the `ikev1_decryption_table` UAT of its ISAKMP dissector: the initiator cookie and the
//! phase-1 encryption key, both hex), so that tshark can decrypt messages 5 and 6 and every
//! later exchange under the SA (GROUPKEY-PULL) in a capture of gander's own traffic.
//!
//! The file holds the keys that protect the group keys: anyone who reads it and has a capture
//! can read every key the key server handed out. It exists for debugging in a lab and must
//! never be switched on in production; the file is created with mode 0600 and starts with a
//! comment saying so, and the CLI warns on stderr when it is in use.

use crate::Phase1Sa;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The comment a new key log starts with (Wireshark's UAT files take `#` comments).
pub const WARNING: &str = "# gander IKEv1 key log (Wireshark ikev1_decryption_table: initiator cookie, encryption key).\n\
# LAB USE ONLY: these keys decrypt the group keys in any capture. Never enable in production.\n";

/// One line of the table: initiator cookie and encryption key, hex, comma-separated (the
/// record syntax of Wireshark's UAT files, which `-o uat:ikev1_decryption_table:LINE` takes
/// too).
pub fn ikev1_line(sa: &Phase1Sa) -> String {
    format!(
        "{},{}",
        hex::encode(sa.cky_i),
        hex::encode(&sa.keys.enc_key[..])
    )
}

/// An append-only key log file.
#[derive(Debug)]
pub struct KeyLog {
    path: PathBuf,
    file: Mutex<std::fs::File>,
}

impl KeyLog {
    /// Opens (or creates, mode 0600, with [`WARNING`] at its head) the key log at `path`.
    pub fn open(path: &Path) -> std::io::Result<KeyLog> {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)?;
        if file.metadata()?.len() == 0 {
            file.write_all(WARNING.as_bytes())?;
        }
        Ok(KeyLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the line of one phase-1 SA.
    pub fn record(&self, sa: &Phase1Sa) -> std::io::Result<()> {
        let mut f = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("key log lock poisoned"))?;
        writeln!(f, "{}", ikev1_line(sa))?;
        f.flush()
    }
}
