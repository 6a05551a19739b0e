//! Shared pieces of the known-answer-test harness: the vector-file reader, the implementations
//! every vector is run against, bit flipping, and a report that collects failures so one run
//! shows all of them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gander_sec::openssl_evp::{evp_per_message, OpensslProvider};
use gander_sec::rustcrypto::RustCryptoProvider;
use gander_sec::{AeadKey, CryptoError, CryptoProvider, EncAlgorithm, MacAlgorithm, MacKey};

// ---------------------------------------------------------------------------------------------
// Vector files.

pub(crate) use crate::records::{parse_records, Record};

/// Directory of the vectors transcribed into this repository.
pub(crate) fn repo_vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

/// Loads one of this repository's vector files by name.
pub(crate) fn load_repo_vectors(file: &str) -> Vec<Record> {
    let path = repo_vectors_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let recs = parse_records(file, &text);
    assert!(!recs.is_empty(), "{}: no records", path.display());
    recs
}

// ---------------------------------------------------------------------------------------------
// Implementations under test.

/// Adapts the `evp_per_message` free functions to the provider traits, so the harness runs the
/// benchmark's baseline through the same checks as the two providers.
pub(crate) struct PerMessage;

struct PerMessageMac {
    alg: MacAlgorithm,
    key: Vec<u8>,
}

struct PerMessageAead {
    alg: EncAlgorithm,
    key: Vec<u8>,
}

impl CryptoProvider for PerMessage {
    fn name(&self) -> &'static str {
        "evp-per-message"
    }
    fn mac_key(&self, alg: MacAlgorithm, key: &[u8]) -> Result<Box<dyn MacKey>, CryptoError> {
        // The free functions check the key on every call; check once here too so a bad key
        // fails at the same point as with the providers.
        let mut probe = vec![0u8; alg.tag_len()];
        if let Err(e @ (CryptoError::BadKeyLength { .. } | CryptoError::Unsupported(_))) =
            evp_per_message::mac(alg, key, &[0; 12], b"", &mut probe)
        {
            return Err(e);
        }
        Ok(Box::new(PerMessageMac {
            alg,
            key: key.to_vec(),
        }))
    }
    fn aead_key(&self, alg: EncAlgorithm, key: &[u8]) -> Result<Box<dyn AeadKey>, CryptoError> {
        evp_per_message::seal(alg, key, &[0; 12], b"", &mut [])?;
        Ok(Box::new(PerMessageAead {
            alg,
            key: key.to_vec(),
        }))
    }
}

impl MacKey for PerMessageMac {
    fn algorithm(&self) -> MacAlgorithm {
        self.alg
    }
    fn sign(&self, iv: &[u8], data: &[u8], tag_out: &mut [u8]) -> Result<(), CryptoError> {
        evp_per_message::mac(self.alg, &self.key, iv, data, tag_out)
    }
    fn verify(&self, iv: &[u8], data: &[u8], tag: &[u8]) -> Result<(), CryptoError> {
        evp_per_message::mac_verify(self.alg, &self.key, iv, data, tag)
    }
}

impl AeadKey for PerMessageAead {
    fn algorithm(&self) -> EncAlgorithm {
        self.alg
    }
    fn seal_in_place(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<[u8; 16], CryptoError> {
        evp_per_message::seal(self.alg, &self.key, iv, aad, buf)
    }
    fn open_in_place(
        &self,
        iv: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), CryptoError> {
        evp_per_message::open(self.alg, &self.key, iv, aad, buf, tag)
    }
}

/// Every implementation each MAC/AEAD vector runs against: the two providers, plus the
/// per-message OpenSSL baseline.
pub(crate) fn implementations() -> [&'static dyn CryptoProvider; 3] {
    [&RustCryptoProvider, &OpensslProvider, &PerMessage]
}

// ---------------------------------------------------------------------------------------------
// Bit flips.

/// `v` with one bit flipped; the position is spread over the input by `seed`, so that over a
/// file of vectors every byte position and bit gets hit. An empty input gets one byte appended
/// instead (there is no bit to flip; the message must still change).
pub(crate) fn one_bit_changed(v: &[u8], seed: usize) -> Vec<u8> {
    let mut out = v.to_vec();
    if out.is_empty() {
        out.push(0x80);
        return out;
    }
    let bit = seed.wrapping_mul(7919) % (out.len() * 8);
    out[bit / 8] ^= 1 << (bit % 8);
    out
}

// ---------------------------------------------------------------------------------------------
// Report.

/// Counts what a test ran and collects failures, so a single run lists every broken vector.
#[derive(Default)]
pub(crate) struct Report {
    /// Vectors (records) run, by label.
    pub vectors: BTreeMap<String, usize>,
    /// Individual checks done (each implementation, each flipped variant).
    pub checks: usize,
    /// Records left out on purpose, by reason.
    pub skipped: BTreeMap<String, usize>,
    /// Wycheproof "acceptable" results and what we did with them.
    pub notes: Vec<String>,
    pub failures: Vec<String>,
}

impl Report {
    pub(crate) fn vector(&mut self, label: &str) {
        *self.vectors.entry(label.to_string()).or_default() += 1;
    }

    pub(crate) fn skip(&mut self, reason: &str) {
        *self.skipped.entry(reason.to_string()).or_default() += 1;
    }

    /// Records one check: `ok` or a failure described by `what`.
    pub(crate) fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.checks += 1;
        if !ok {
            self.failures.push(what());
        }
    }

    pub(crate) fn total(&self) -> usize {
        self.vectors.values().sum()
    }

    /// Prints the summary and fails the test if anything failed or nothing ran.
    pub(crate) fn finish(self, name: &str) {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{name}: {} vectors, {} checks",
            self.total(),
            self.checks
        );
        for (k, v) in &self.vectors {
            let _ = writeln!(s, "  ran     {v:6}  {k}");
        }
        for (k, v) in &self.skipped {
            let _ = writeln!(s, "  skipped {v:6}  {k}");
        }
        for n in &self.notes {
            let _ = writeln!(s, "  note: {n}");
        }
        println!("{s}");
        assert!(self.total() > 0, "{name}: no vector ran");
        if !self.failures.is_empty() {
            let shown: Vec<_> = self.failures.iter().take(40).cloned().collect();
            panic!(
                "{name}: {} failures, first ones:\n{}",
                self.failures.len(),
                shown.join("\n")
            );
        }
    }
}
