//! The IKEv1 key log `gander audit --ike-keylog FILE` reads: the lines `gander kdc --keylog`
//! and `gander gdoi register --keylog` write (`gander_gdoi::keylog`), in the form of
//! Wireshark's IKEv1 decryption table (the `ikev1_decryption_table` UAT of its ISAKMP
//! dissector, as strongSwan's save-keys plugin writes it): per phase-1 SA, the initiator
//! cookie (8 octets) and the phase-1 encryption key (the AES key cut from SKEYID_e, RFC 2409
//! Appendix B), both hex, comma-separated. `#` starts a comment line; Wireshark's UAT files
//! may quote fields (`"0123…","abcd…"`), which is accepted too.
//!
//! A lab tool only: with the file and a capture anyone reads every group key the key server
//! handed out. The keys are held in [`Zeroizing`] buffers and never written anywhere.

use std::collections::HashMap;
use zeroize::Zeroizing;

/// Why a key log line was refused (1-based line number).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyLogError {
    /// A line is not `cookie,key`.
    #[error("key log line {line}: {why}")]
    BadLine {
        /// Line number.
        line: usize,
        /// What is wrong.
        why: &'static str,
    },
}

/// Phase-1 encryption keys by initiator cookie.
#[derive(Default)]
pub struct IkeKeyLog {
    keys: HashMap<[u8; 8], Zeroizing<Vec<u8>>>,
}

impl std::fmt::Debug for IkeKeyLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IkeKeyLog({} SAs)", self.keys.len())
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    let s = s.trim().trim_matches('"');
    if !s.len().is_multiple_of(2) || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl IkeKeyLog {
    /// Reads a key log's text. A later line for the same cookie replaces an earlier one.
    pub fn parse(text: &str) -> Result<IkeKeyLog, KeyLogError> {
        let mut keys = HashMap::new();
        for (i, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let bad = |why| KeyLogError::BadLine { line: i + 1, why };
            let (c, k) = l
                .split_once(',')
                .ok_or_else(|| bad("not two comma-separated fields"))?;
            let c = unhex(c).ok_or_else(|| bad("the initiator cookie is not hex"))?;
            let c: [u8; 8] = c
                .try_into()
                .map_err(|_| bad("the initiator cookie is not 8 octets"))?;
            let k = Zeroizing::new(unhex(k).ok_or_else(|| bad("the key is not hex"))?);
            if !matches!(k.len(), 16 | 24 | 32) {
                return Err(bad("the key is not an AES key (16, 24 or 32 octets)"));
            }
            keys.insert(c, k);
        }
        Ok(IkeKeyLog { keys })
    }

    /// Adds one SA's key (tests, and a caller holding the keys in memory).
    pub fn insert(&mut self, initiator_cookie: [u8; 8], key: &[u8]) {
        self.keys
            .insert(initiator_cookie, Zeroizing::new(key.to_vec()));
    }

    /// The encryption key of the phase-1 SA with this initiator cookie.
    pub fn key(&self, initiator_cookie: &[u8; 8]) -> Option<&[u8]> {
        self.keys.get(initiator_cookie).map(|k| k.as_slice())
    }

    /// Phase-1 SAs known.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// No SA known.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// One line as `gander_gdoi::keylog::ikev1_line` writes it (tests and the fuzz target).
pub fn line(initiator_cookie: &[u8; 8], key: &[u8]) -> String {
    let h = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!("{},{}", h(initiator_cookie), h(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn comments_quotes_and_refusals() {
        let t =
            "# gander IKEv1 key log\n\n\"0102030405060708\",\"000102030405060708090a0b0c0d0e0f\"\n";
        let k = IkeKeyLog::parse(t).unwrap();
        assert_eq!(k.len(), 1);
        assert_eq!(k.key(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap()[15], 15);
        for (bad, line) in [
            ("0102", 1),
            ("# c\n01020304050607,00112233445566778899aabbccddeeff", 2),
            ("0102030405060708,0011", 1),
            ("0102030405060708,zz112233445566778899aabbccddeeff", 1),
        ] {
            assert!(
                matches!(IkeKeyLog::parse(bad), Err(KeyLogError::BadLine { line: l, .. }) if l == line),
                "{bad}"
            );
        }
    }

    proptest! {
        /// Every line [`line`] writes (the format of `gander_gdoi::keylog`) reads back; any
        /// text is read or refused without panic.
        #[test]
        fn written_lines_read_back(
            sas in proptest::collection::vec((any::<[u8; 8]>(), prop_oneof![Just(16usize), Just(32)], any::<u8>()), 0..8),
            junk in ".{0,200}",
        ) {
            let mut text = String::from(gander_gdoi::keylog::WARNING);
            for (c, n, b) in &sas {
                text += &line(c, &vec![*b; *n]);
                text.push('\n');
            }
            let k = IkeKeyLog::parse(&text).unwrap();
            for (c, _, _) in &sas {
                let (_, n, b) = sas.iter().rev().find(|(x, _, _)| x == c).unwrap();
                prop_assert_eq!(k.key(c).unwrap(), &vec![*b; *n][..]);
            }
            let _ = IkeKeyLog::parse(&junk);
        }
    }
}
