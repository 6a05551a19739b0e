//! The NSS key log: TLS secrets written to a file so that a monitoring tool (Wireshark, tshark)
//! can decrypt captured sessions.
//!
//! Sandia's report on IEC 62351 deployment notes that operators must keep monitoring traffic
//! once it is encrypted; in a lab that is done by letting the endpoints disclose their session
//! secrets. The format is the one NSS defined and Wireshark reads (`tls.keylog_file`), specified
//! in the IETF draft draft-ietf-tls-keylogfile: one line per secret,
//!
//! ```text
//! <label> SP <ClientHello.random, 64 hex digits> SP <secret, hex> LF
//! ```
//!
//! with `CLIENT_RANDOM` (the TLS 1.0-1.2 master secret, 48 octets) or the TLS 1.3 labels
//! `CLIENT_HANDSHAKE_TRAFFIC_SECRET`, `SERVER_HANDSHAKE_TRAFFIC_SECRET`,
//! `CLIENT_TRAFFIC_SECRET_0`, `SERVER_TRAFFIC_SECRET_0`, `EXPORTER_SECRET` (RFC 8446 §7.1) and,
//! with 0-RTT, `CLIENT_EARLY_TRAFFIC_SECRET` / `EARLY_EXPORTER_SECRET`. Lines starting with `#`
//! are comments. The client random identifies the session; Wireshark matches it against the
//! ClientHello it captured.
//!
//! A key log defeats TLS confidentiality for every session it records: anyone who can read the
//! file and the traffic reads the MMS inside. gander therefore creates the file with mode 0600,
//! refuses an existing one that others can read or a symbolic link, appends (several peers and
//! runs may share one file), writes each line with one `write` so concurrent writers do not
//! interleave, and warns on standard error once per file when it starts logging.
//!
//! Each backend feeds this writer from its library's own hook: rustls's `KeyLog` trait,
//! OpenSSL's `SSL_CTX_set_keylog_callback` (OpenSSL >= 1.1.1) and GnuTLS's
//! `gnutls_session_set_keylog_function` (GnuTLS >= 3.6.13).
use crate::profile::ProfileError;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The length of ClientHello.random (RFC 5246 §7.4.1.2, RFC 8446 §4.1.2).
pub const CLIENT_RANDOM_LEN: usize = 32;

/// `O_NOFOLLOW`: a key log is never written through a symbolic link (a root-run peer must not be
/// tricked into appending secrets to another file).
const O_NOFOLLOW: i32 = libc::O_NOFOLLOW;

/// Whether `label` can be a key log label: upper-case letters, digits and `_`, as every label
/// of the format is, so that nothing a library passes can break the line structure.
fn valid_label(label: &str) -> bool {
    !label.is_empty()
        && label
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// One key log line, `LABEL <client random hex> <secret hex>` and a line feed, or `None` when
/// `label` is not a label ([`valid_label`]), the client random is not 32 octets or the secret
/// is empty (Wireshark could not use such a line).
pub fn format_line(label: &str, client_random: &[u8], secret: &[u8]) -> Option<String> {
    if !valid_label(label) || client_random.len() != CLIENT_RANDOM_LEN || secret.is_empty() {
        return None;
    }
    let mut s =
        String::with_capacity(label.len() + 2 + 2 * (client_random.len() + secret.len()) + 1);
    s.push_str(label);
    s.push(' ');
    push_hex(&mut s, client_random);
    s.push(' ');
    push_hex(&mut s, secret);
    s.push('\n');
    Some(s)
}

fn push_hex(s: &mut String, b: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for x in b {
        s.push(HEX[usize::from(x >> 4)] as char);
        s.push(HEX[usize::from(x & 15)] as char);
    }
}

/// Whether `line` (without its line feed) has the shape of a key log line: a label, 64 hex
/// digits and an even, non-zero number of hex digits, separated by single spaces. OpenSSL hands
/// its lines already formatted; this keeps a malformed one out of the file.
fn well_formed(line: &str) -> bool {
    let mut parts = line.split(' ');
    let (Some(label), Some(random), Some(secret), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let hex = |s: &str| {
        !s.is_empty() && s.len().is_multiple_of(2) && s.bytes().all(|b| b.is_ascii_hexdigit())
    };
    valid_label(label) && random.len() == 2 * CLIENT_RANDOM_LEN && hex(random) && hex(secret)
}

/// An open key log file, shared by every connection of a backend.
#[derive(Debug)]
pub struct KeyLogFile {
    path: PathBuf,
    file: Mutex<File>,
    written: AtomicU64,
    failed: AtomicU64,
}

impl KeyLogFile {
    /// Opens (or creates, mode 0600) `path` for appending. Refuses a symbolic link, something
    /// that is not a regular file, and an existing file that group or others may read or write.
    pub fn open(path: &Path) -> Result<Arc<Self>, ProfileError> {
        let bad = |reason: String| ProfileError::KeyLog {
            path: path.to_owned(),
            reason,
        };
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(O_NOFOLLOW)
            .open(path)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::ELOOP) {
                    bad("is a symbolic link; give the real path".into())
                } else {
                    bad(e.to_string())
                }
            })?;
        let meta = file.metadata().map_err(|e| bad(e.to_string()))?;
        if !meta.is_file() {
            return Err(bad("not a regular file".into()));
        }
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(bad(format!(
                "exists with mode {mode:04o}: others may read the secrets; `chmod 600` it or remove it"
            )));
        }
        warn_once(path);
        Ok(Arc::new(KeyLogFile {
            path: path.to_owned(),
            file: Mutex::new(file),
            written: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        }))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one secret (see [`format_line`]). A secret that cannot be formatted or written is
    /// counted in [`KeyLogFile::failures`] and never breaks the TLS session it belongs to.
    pub fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        match format_line(label, client_random, secret) {
            Some(line) => self.append(&line),
            None => self.fail("a secret the key log format cannot carry"),
        }
    }

    /// Appends a line a library formatted itself (OpenSSL), without its line feed.
    pub fn log_line(&self, line: &str) {
        if well_formed(line) {
            self.append(&format!("{line}\n"));
        } else {
            self.fail("a malformed line from the TLS library");
        }
    }

    /// Lines written so far.
    pub fn lines_written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Secrets that could not be written so far.
    pub fn failures(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// One `write` per line: with `O_APPEND` the kernel places each at the end of the file as
    /// a whole, so peers sharing the file do not interleave. There is no user-space buffer, so a
    /// reader (tshark) sees the line as soon as this returns.
    fn append(&self, line: &str) {
        let r = match self.file.lock() {
            Ok(mut f) => f.write_all(line.as_bytes()),
            Err(_) => Err(std::io::Error::other("key log lock poisoned")),
        };
        match r {
            Ok(()) => {
                self.written.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => self.fail(&e.to_string()),
        }
    }

    fn fail(&self, why: &str) {
        if self.failed.fetch_add(1, Ordering::Relaxed) == 0 {
            eprintln!(
                "gander: key log {}: a secret was not written ({why}); sessions go on, but \
                 the capture may not decrypt",
                self.path.display()
            );
        }
    }
}

/// Warns once per path and process that TLS secrets are being disclosed.
fn warn_once(path: &Path) {
    static WARNED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let set = WARNED.get_or_init(|| Mutex::new(HashSet::new()));
    let first = set
        .lock()
        .map(|mut s| s.insert(path.to_owned()))
        .unwrap_or(true);
    if first {
        eprintln!(
            "gander: WARNING: TLS key log on: the secrets of every session are appended to {} \
             (anyone with this file and a capture reads the traffic; lab monitoring only)",
            path.display()
        );
    }
}

/// The key log of `profile`, opened, or `None` when the profile has no `keylog`.
pub fn open_for(profile: &crate::TlsProfile) -> Result<Option<Arc<KeyLogFile>>, ProfileError> {
    profile.keylog.as_deref().map(KeyLogFile::open).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn line_format_matches_the_nss_format() {
        let random: Vec<u8> = (0..32).collect();
        let master = [0xABu8; 48];
        assert_eq!(
            format_line("CLIENT_RANDOM", &random, &master).unwrap(),
            format!(
                "CLIENT_RANDOM 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f {}\n",
                "ab".repeat(48)
            )
        );
        let secret = [0x5Au8; 32];
        let line = format_line("CLIENT_HANDSHAKE_TRAFFIC_SECRET", &random, &secret).unwrap();
        assert!(line.starts_with("CLIENT_HANDSHAKE_TRAFFIC_SECRET 0001"));
        assert!(line.ends_with(&format!(" {}\n", "5a".repeat(32))));
        assert!(well_formed(line.trim_end()));
        // What cannot be used by a reader is refused.
        assert_eq!(format_line("CLIENT_RANDOM", &random[..31], &master), None);
        assert_eq!(format_line("CLIENT_RANDOM", &random, &[]), None);
        assert_eq!(format_line("client random", &random, &master), None);
        assert_eq!(format_line("A\nB", &random, &master), None);
        assert_eq!(format_line("", &random, &master), None);
    }

    #[test]
    fn openssl_lines_are_checked() {
        let r = "00".repeat(32);
        assert!(well_formed(&format!(
            "CLIENT_RANDOM {r} {}",
            "11".repeat(48)
        )));
        assert!(!well_formed(&format!("CLIENT_RANDOM {r}")));
        assert!(!well_formed(&format!("CLIENT_RANDOM {r} 1")));
        assert!(!well_formed(&format!("CLIENT_RANDOM {r} 11 22")));
        assert!(!well_formed(&format!(
            "CLIENT_RANDOM {} 11",
            "00".repeat(31)
        )));
        assert!(!well_formed(&format!("CLIENT_RANDOM {r} zz")));
        assert!(!well_formed(""));
    }

    #[test]
    fn file_is_private_appended_and_guarded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys.log");
        std::fs::write(&path, "# earlier run\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let log = KeyLogFile::open(&path).unwrap();
        log.log("CLIENT_RANDOM", &[1; 32], &[2; 48]);
        log.log_line(&format!(
            "SERVER_TRAFFIC_SECRET_0 {} {}",
            "03".repeat(32),
            "04".repeat(32)
        ));
        log.log("CLIENT_RANDOM", &[1; 5], &[2; 48]);
        log.log_line("garbage");
        assert_eq!((log.lines_written(), log.failures()), (2, 2));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], "# earlier run");
        assert!(lines[1].starts_with("CLIENT_RANDOM 0101"));
        assert!(lines[2].starts_with("SERVER_TRAFFIC_SECRET_0 0303"));

        let fresh = dir.path().join("new.log");
        KeyLogFile::open(&fresh).unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);

        let open = dir.path().join("open.log");
        std::fs::write(&open, "").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = KeyLogFile::open(&open).unwrap_err();
        assert!(
            matches!(&e, ProfileError::KeyLog { reason, .. } if reason.contains("0644")),
            "{e}"
        );

        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let e = KeyLogFile::open(&link).unwrap_err();
        assert!(
            matches!(&e, ProfileError::KeyLog { reason, .. } if reason.contains("symbolic")),
            "{e}"
        );

        assert!(matches!(
            KeyLogFile::open(dir.path()),
            Err(ProfileError::KeyLog { .. })
        ));
        assert!(matches!(
            KeyLogFile::open(&dir.path().join("no/such/dir/k.log")),
            Err(ProfileError::KeyLog { .. })
        ));
    }

    proptest! {
        /// Every line format_line emits is one well-formed line that gives back its parts.
        #[test]
        fn format_round_trips(label in "[A-Z][A-Z0-9_]{0,40}",
                              random in proptest::collection::vec(any::<u8>(), 32),
                              secret in proptest::collection::vec(any::<u8>(), 1..80)) {
            let line = format_line(&label, &random, &secret).unwrap();
            prop_assert!(line.ends_with('\n'));
            let body = line.strip_suffix('\n').unwrap();
            prop_assert!(!body.contains('\n'));
            prop_assert!(well_formed(body));
            let parts: Vec<&str> = body.split(' ').collect();
            prop_assert_eq!(parts[0], label.as_str());
            let unhex = |s: &str| (0..s.len()).step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect::<Vec<u8>>();
            prop_assert_eq!(unhex(parts[1]), random);
            prop_assert_eq!(unhex(parts[2]), secret);
        }
    }
}
