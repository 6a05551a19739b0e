//! `gander bench crypto`: the per-operation cost of IEC 62351-6 protection, laid out like the
//! gateway paper's evaluation (Andrade et al., Table 3 algorithms, Table 6 input sizes, Table 8
//! statistics, Figures 4-5 progression with size) and Farooq et al.'s Table 1 (signatures).
//!
//! # What a row measures
//!
//! Every MAC and AEAD row exists in four implementations, all on the **same bytes**:
//!
//! * `primitive`: the bare primitive with a prepared key ([`MacKey::sign`] / [`MacKey::verify`],
//!   [`AeadKey::seal_in_place`] / [`AeadKey::open_in_place`] from the default provider). The
//!   floor: what the algorithm itself costs here.
//! * `openssl`: the same primitive through the system OpenSSL with prepared keys
//!   ([`OpensslProvider`]), a second floor from the library the paper used.
//! * `gander`: the library on a whole R-GOOSE SPDU: [`spdu::protect`] (profile `standard`,
//!   key from a [`KeyStore`], fresh IV from [`RandomIv`], output `Vec` cleared and reused so the
//!   allocator's first-touch cost is not what is measured) and [`spdu::verify`] (parse, key
//!   look-up, tag check, payload parse). Ops `protect` and `verify`.
//! * `evp-per-message`: OpenSSL EVP with a fresh context and key set-up for every message,
//!   as the gateway paper's C library did ([`evp_per_message`]).
//!
//! # How inputs are sized (Table 6)
//!
//! The gateway paper sized its inputs as "the GOOSE PDU and a set of fixed size fields" of an
//! R-GOOSE packet with 1, 12 or 72 GOOSE data objects: 196/256/572 bytes authenticated and
//! 51/204/408 bytes encrypted. Here each size is the exact byte count of the range the
//! `standard` profile authenticates or encrypts in a real frame (`docs/framing.md`):
//!
//! * authentication: LI .. end of payload = session header up to and including PayloadLength
//!   (31 bytes; 43 with the 12-byte GMAC IV) + the 6-byte payload-element header + the GOOSE
//!   APDU. The APDU is built to `bytes - 37` (HMAC) or `bytes - 49` (GMAC) bytes;
//! * encryption: the payload = element header (6) + APDU, so the APDU is `bytes - 6`; the
//!   associated data is the 43-byte header.
//!
//! The APDU carries the paper's 1, 12 or 72 INTEGER data objects, and its gocbRef and datSet
//! strings are lengthened until the encoding has the exact size ([`goose_apdu`]). The
//! `primitive`, `openssl` and `evp-per-message` rows take their input from that very frame (the
//! authenticated range and its IV; the AAD, cleartext payload and tag).
//!
//! # How time is taken
//!
//! Each sample reads [`Instant`] (CLOCK_MONOTONIC on Linux) before and after a **batch** of `k`
//! consecutive operations and keeps the batch total; statistics are reported per operation
//! (batch total / k). `k` is chosen per row from a short calibration so a batch lasts at least
//! [`CryptoConfig::target_batch_ns`] (1 µs by default, at most [`CryptoConfig::max_batch`]
//! operations): reading the clock costs about 20 ns, which would otherwise be 10-25% of a
//! 100-200 ns MAC and would pull every ratio towards 1. Operations of a microsecond or more run
//! with `k = 1`, so their min/max/p99 are single operations; for batched rows they are
//! extremes of batch means (a single slow operation is diluted by `k`). `k` is in every row.
//!
//! The eight rows of one algorithm and size (four implementations, two directions) are
//! measured **interleaved**, round-robin one sample each ([`measure_interleaved`]), so that the
//! rows a ratio compares see the same machine: on a shared CPU a burst of other work lands on
//! all of them rather than moving one row's median.
//!
//! `n` kept samples follow `warmup` discarded ones ([`stats::warmup_for`]); both are reported.
//! RSA signing is slow (milliseconds at 3072/4096 bits), so its rows are capped at
//! [`CryptoConfig::rsa_sign_cap`] samples (2,000; 200 with `--quick`) unless `reps` is lower.
//! Every timed operation's result is checked; a failure aborts the benchmark.
//!
//! Decrypt rows (and, for symmetry, the encrypt rows other than `gander`) copy the
//! input into the work buffer inside the timed region, because in-place decryption consumes
//! it: at most 408 bytes, a few nanoseconds.

use gander_measure::stats::{self, Summary};
use gander_measure::transfer_time::{TRIP_P1, TRIP_P2_P3};
use gander_sec::openssl_evp::{evp_per_message, OpensslProvider};
use gander_sec::signature::{SignatureAlgorithm, SigningKey, VerifyingKey};
use gander_sec::spdu::{self, Checked, IvSource, RandomIv, SendParams};
use gander_sec::{
    default_provider, AeadKey, CryptoError, CryptoProvider, EncAlgorithm, KeyEntry, KeyFileError,
    KeyStore, MacAlgorithm, MacKey, Profile, SecError,
};
use gander_wire::data::Data;
use gander_wire::goose::GoosePdu;
use gander_wire::spdu::{PayloadElement, SessionPdu, SpduId};
use gander_wire::Codec;
use serde::Serialize;
use std::hint::black_box;
use std::time::Instant;

/// Authentication input sizes in bytes and the GOOSE data objects behind them (Table 6).
pub const AUTH_SIZES: [(usize, usize); 3] = [(196, 1), (256, 12), (572, 72)];
/// Encryption/decryption input sizes in bytes and GOOSE data objects (Table 6).
pub const ENC_SIZES: [(usize, usize); 3] = [(51, 1), (204, 12), (408, 72)];
/// Size of the message signed in the signature rows: a GOOSE APDU of a typical size.
pub const SIGNATURE_MESSAGE_LEN: usize = 256;
/// RSA modulus sizes: Farooq et al.'s 1024 and 2048, plus 3072 and 4096.
pub const RSA_BITS: [u32; 4] = [1024, 2048, 3072, 4096];
/// The Unix time every protect/verify runs at (keys have no validity window here).
pub const NOW: u64 = 1_767_225_600;
/// Length of the session header up to and including PayloadLength without an IV (`standard`
/// profile, version 2): 22 fixed bytes, KeyID (4), IV length (1), PayloadLength (4).
pub const HEADER_LEN_NO_IV: usize = 31;
/// The same with the 12-byte AES-GCM/GMAC IV.
pub const HEADER_LEN_IV: usize = HEADER_LEN_NO_IV + 12;
/// The payload-element header: type, simulation, APPID, APDU length.
pub const ELEMENT_HEADER_LEN: usize = gander_wire::spdu::ELEMENT_HEADER_LEN;

/// Why the benchmark could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// The library refused to protect or verify the benchmark frame.
    #[error("gander: {0}")]
    Sec(#[from] SecError),
    /// A primitive failed.
    #[error("crypto: {0}")]
    Crypto(#[from] CryptoError),
    /// A key could not be built.
    #[error("key: {0}")]
    Key(#[from] KeyFileError),
    /// An input could not be built as specified.
    #[error("setup: {0}")]
    Setup(String),
    /// A timed operation failed (the result of every operation is checked).
    #[error("{row}: {failures} of {total} timed operations failed")]
    OpFailed {
        /// Row label.
        row: String,
        /// Failed operations.
        failures: usize,
        /// Operations timed.
        total: usize,
    },
}

/// Which implementation a row measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Impl {
    /// The bare primitive with a prepared key.
    Primitive,
    /// The same primitive through the system OpenSSL with prepared keys
    /// ([`OpensslProvider`]: keyed `EVP_PKEY` / `EVP_CIPHER_CTX` made once, IV set per
    /// message): a second floor, from the library the paper used.
    Openssl,
    /// The library on a whole R-GOOSE frame.
    Gander,
    /// OpenSSL EVP with a fresh context per message.
    EvpPerMessage,
}

impl Impl {
    /// Name in reports and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Impl::Primitive => "primitive",
            Impl::Openssl => "openssl",
            Impl::Gander => "gander",
            Impl::EvpPerMessage => "evp-per-message",
        }
    }
}

/// The operation a row times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// Compute a MAC.
    Mac,
    /// Check a MAC, a tag or a signature; for `gander`, verify a whole frame.
    Verify,
    /// AES-GCM encryption.
    Encrypt,
    /// AES-GCM decryption.
    Decrypt,
    /// Protect a whole frame.
    Protect,
    /// Make a signature.
    Sign,
}

impl Op {
    /// Name in reports and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Op::Mac => "mac",
            Op::Verify => "verify",
            Op::Encrypt => "encrypt",
            Op::Decrypt => "decrypt",
            Op::Protect => "protect",
            Op::Sign => "sign",
        }
    }
}

/// The paper's grouping of rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    /// HMAC and GMAC (gateway paper Figure 4).
    Authentication,
    /// AES-GCM (gateway paper Figure 5).
    Encryption,
    /// Digital signatures (Farooq et al. Table 1).
    Signature,
    /// MACs on whole layer-2 GOOSE frames (IEC 62351-6 extension), [`crate::crypto_ascon`].
    Layer2,
}

/// Run parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CryptoConfig {
    /// Kept samples per row.
    pub reps: usize,
    /// Most samples for an RSA signing row.
    pub rsa_sign_cap: usize,
    /// A batch of operations lasts at least this long (see the module documentation).
    pub target_batch_ns: u64,
    /// Largest batch.
    pub max_batch: usize,
    /// RSA modulus sizes to measure.
    pub rsa_bits: Vec<u32>,
    /// Most samples for an SLH-DSA row (signing takes hundreds of milliseconds for the small
    /// parameter set, verifying milliseconds for the fast one).
    pub slh_cap: usize,
}

impl CryptoConfig {
    /// The paper's repetition count.
    pub const DEFAULT_REPS: usize = 500_000;
    /// Repetitions of `--quick`.
    pub const QUICK_REPS: usize = 3_000;
    /// RSA signing cap of a full run.
    pub const RSA_SIGN_CAP: usize = 2_000;
    /// RSA signing cap of `--quick`.
    pub const QUICK_RSA_SIGN_CAP: usize = 200;
    /// SLH-DSA cap of a full run.
    pub const SLH_CAP: usize = 50;
    /// SLH-DSA cap of `--quick`.
    pub const QUICK_SLH_CAP: usize = 3;

    /// A full run with `reps` samples per row.
    pub fn new(reps: usize) -> Self {
        CryptoConfig {
            reps,
            rsa_sign_cap: Self::RSA_SIGN_CAP,
            target_batch_ns: 1_000,
            max_batch: 32,
            rsa_bits: RSA_BITS.to_vec(),
            slh_cap: Self::SLH_CAP,
        }
    }

    /// The `--quick` run: [`Self::QUICK_REPS`] samples per row (or `reps` if given) and
    /// [`Self::QUICK_RSA_SIGN_CAP`] for RSA signing.
    pub fn quick(reps: Option<usize>) -> Self {
        CryptoConfig {
            rsa_sign_cap: Self::QUICK_RSA_SIGN_CAP,
            slh_cap: Self::QUICK_SLH_CAP,
            ..Self::new(reps.unwrap_or(Self::QUICK_REPS))
        }
    }
}

/// One measured row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Authentication, encryption or signature.
    pub group: Group,
    /// Operation.
    pub op: Op,
    /// Algorithm, named as in key files (`hmac-sha256-128`, `aes-gmac-128`, `aes-128-gcm`,
    /// `rsassa-pss-sha256`, ...).
    pub algorithm: &'static str,
    /// AES key size for GMAC/GCM, modulus or curve size for signatures; absent for HMAC (whose
    /// keys are 32 bytes here).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_bits: Option<u32>,
    /// Input size: the authenticated or encrypted range, or the signed message.
    pub bytes: usize,
    /// Implementation.
    #[serde(rename = "impl")]
    pub imp: Impl,
    /// Kept samples.
    pub n: usize,
    /// Mean per operation (ns).
    pub mean_ns: f64,
    /// Sample standard deviation (ns).
    pub sd_ns: f64,
    /// Minimum (ns).
    pub min_ns: f64,
    /// Maximum (ns).
    pub max_ns: f64,
    /// Median, nearest rank (ns).
    pub p50_ns: f64,
    /// 95th percentile, nearest rank (ns).
    pub p95_ns: f64,
    /// 99th percentile, nearest rank (ns).
    pub p99_ns: f64,
    /// Half-width of the 95% confidence interval of the mean (ns).
    pub ci95_ns: f64,
    /// Operations per sample.
    pub batch: usize,
    /// Discarded warm-up samples.
    pub warmup: usize,
    /// Whether `n` was capped below the requested repetitions (RSA signing).
    pub reps_capped: bool,
    /// p99 against IEC 61850-5 type 1A P2/3 (TT6, 3 ms): `ok` or `over`.
    pub verdict_3ms: &'static str,
    /// p99 against type 1A P1 (TT5, 10 ms).
    pub verdict_10ms: &'static str,
}

impl Row {
    /// `algorithm/key_bits bytes impl op`, for messages.
    pub fn label(&self) -> String {
        let kb = self.key_bits.map(|b| format!("/{b}")).unwrap_or_default();
        format!(
            "{}{} {} B {} {}",
            self.algorithm,
            kb,
            self.bytes,
            self.imp.name(),
            self.op.name()
        )
    }

    /// The statistics of this row.
    pub fn summary(&self) -> Summary {
        Summary {
            n: self.n,
            mean: self.mean_ns,
            sd: self.sd_ns,
            min: self.min_ns,
            max: self.max_ns,
            p50: self.p50_ns,
            p95: self.p95_ns,
            p99: self.p99_ns,
            ci95: self.ci95_ns,
        }
    }
}

/// What identifies a row before it is measured.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowId {
    pub(crate) group: Group,
    pub(crate) op: Op,
    pub(crate) algorithm: &'static str,
    pub(crate) key_bits: Option<u32>,
    pub(crate) bytes: usize,
    pub(crate) imp: Impl,
}

/// Raw timing of one row.
#[derive(Clone, Debug)]
pub struct Timing {
    /// Operations per sample.
    pub batch: usize,
    /// Warm-up samples taken and discarded.
    pub warmup: usize,
    /// Kept samples: nanoseconds per batch.
    pub samples: Vec<u64>,
}

/// Progress and raw data, handed to the caller as rows complete.
pub enum Event<'a> {
    /// Starting an algorithm.
    Algorithm(&'a str),
    /// A row finished; its kept raw samples (batch totals, ns) come along so the caller can
    /// keep them (they are not stored in the report).
    Row(&'a Row, &'a Timing),
}

/// A timed operation: one call, whose result is checked.
pub type TimedOp<'a, E> = Box<dyn FnMut() -> Result<(), E> + 'a>;

/// Times one operation: see [`measure_interleaved`].
pub fn measure<E>(
    reps: usize,
    warmup: usize,
    target_batch_ns: u64,
    max_batch: usize,
    op: impl FnMut() -> Result<(), E>,
) -> Result<(Timing, usize), E> {
    let mut ops: [TimedOp<'_, E>; 1] = [Box::new(op)];
    let mut v = measure_interleaved(reps, warmup, target_batch_ns, max_batch, &mut ops)?;
    Ok(v.remove(0))
}

/// Times several operations **interleaved**: sample `i` of every operation is taken before
/// sample `i + 1` of any, round-robin. Rows that are compared with each other (the four
/// implementations of one algorithm and size) thus see the same machine: a burst of other
/// work on a shared CPU lands on all of them instead of shifting one row's median, and their
/// ratios stay meaningful even in a 3,000-sample run that lasts a few milliseconds per row.
///
/// For each operation: one checked call (it may be slow: lazy initialisation), four warm calls
/// to tell slow operations (one per sample) from fast ones, 64 more to size its batch; then
/// `warmup` discarded samples and `reps` kept ones. Returns each operation's timing and the
/// number of timed calls that failed.
pub fn measure_interleaved<E>(
    reps: usize,
    warmup: usize,
    target_batch_ns: u64,
    max_batch: usize,
    ops: &mut [TimedOp<'_, E>],
) -> Result<Vec<(Timing, usize)>, E> {
    let mut batches = Vec::with_capacity(ops.len());
    for op in ops.iter_mut() {
        op()?;
        let t = Instant::now();
        for _ in 0..4 {
            op()?;
        }
        let per_op = t.elapsed().as_nanos() as u64 / 4;
        let batch = if per_op >= target_batch_ns {
            1
        } else {
            const CAL: u64 = 64;
            let t = Instant::now();
            for _ in 0..CAL {
                op()?;
            }
            let per_op = (t.elapsed().as_nanos() as u64 / CAL).max(1);
            (target_batch_ns.div_ceil(per_op) as usize).clamp(1, max_batch.max(1))
        };
        batches.push(batch);
    }
    let mut samples: Vec<Vec<u64>> = ops
        .iter()
        .map(|_| Vec::with_capacity(warmup + reps))
        .collect();
    let mut failures = vec![0usize; ops.len()];
    for _ in 0..warmup + reps {
        for (j, op) in ops.iter_mut().enumerate() {
            let t0 = Instant::now();
            for _ in 0..batches[j] {
                if black_box(op()).is_err() {
                    failures[j] += 1;
                }
            }
            samples[j].push(t0.elapsed().as_nanos() as u64);
        }
    }
    Ok(samples
        .into_iter()
        .zip(batches)
        .zip(failures)
        .map(|((all, batch), failures)| {
            let kept = stats::split_warmup(&all, warmup).1.to_vec();
            (
                Timing {
                    batch,
                    warmup: warmup.min(all.len()),
                    samples: kept,
                },
                failures,
            )
        })
        .collect())
}

/// Everything a crypto benchmark run produced.
#[derive(Clone, Debug, Serialize)]
pub struct CryptoReport {
    /// Where it ran.
    pub machine: gander_measure::machine::Machine,
    /// With which parameters.
    pub config: CryptoConfig,
    /// The rows, grouped and ordered as printed.
    pub rows: Vec<Row>,
    /// Name of the provider behind the `gander` and `primitive` rows.
    pub provider: &'static str,
    /// Wall-clock duration of the run (s).
    pub elapsed_s: f64,
}

impl CryptoReport {
    /// Finds a row of `group`.
    pub fn row_in(
        &self,
        group: Group,
        algorithm: &str,
        key_bits: Option<u32>,
        bytes: usize,
        imp: Impl,
        op: Op,
    ) -> Option<&Row> {
        self.rows.iter().find(|r| {
            r.group == group
                && r.algorithm == algorithm
                && r.key_bits == key_bits
                && r.bytes == bytes
                && r.imp == imp
                && r.op == op
        })
    }

    /// Finds a row.
    pub fn row(
        &self,
        algorithm: &str,
        key_bits: Option<u32>,
        bytes: usize,
        imp: Impl,
        op: Op,
    ) -> Option<&Row> {
        self.rows.iter().find(|r| {
            r.algorithm == algorithm
                && r.key_bits == key_bits
                && r.bytes == bytes
                && r.imp == imp
                && r.op == op
        })
    }
}

pub(crate) struct Runner<'e> {
    pub(crate) cfg: CryptoConfig,
    rows: Vec<Row>,
    pub(crate) events: &'e mut dyn FnMut(Event<'_>),
}

impl Runner<'_> {
    /// Measures `ops` interleaved, `reps` samples each, and records one row per operation.
    pub(crate) fn rows(
        &mut self,
        reps: usize,
        ops: Vec<(RowId, TimedOp<'_, BenchError>)>,
    ) -> Result<(), BenchError> {
        self.rows_with_warmup(reps, stats::warmup_for(reps), ops)
    }

    /// [`Self::rows`] with a chosen number of warm-up samples: SLH-DSA rows keep a handful of
    /// samples and one warm-up, not [`stats::warmup_for`]'s minimum of five, so that `--quick`
    /// stays quick.
    pub(crate) fn rows_with_warmup(
        &mut self,
        reps: usize,
        warmup: usize,
        ops: Vec<(RowId, TimedOp<'_, BenchError>)>,
    ) -> Result<(), BenchError> {
        let (ids, mut ops): (Vec<RowId>, Vec<_>) = ops.into_iter().unzip();
        let timings = measure_interleaved(
            reps,
            warmup,
            self.cfg.target_batch_ns,
            self.cfg.max_batch,
            &mut ops,
        )?;
        for (id, (timing, failures)) in ids.into_iter().zip(timings) {
            let s = Summary::from_samples(&timing.samples)
                .ok_or_else(|| BenchError::Setup("no samples (reps = 0)".into()))?
                .scaled(1.0 / timing.batch as f64);
            let row = Row {
                group: id.group,
                op: id.op,
                algorithm: id.algorithm,
                key_bits: id.key_bits,
                bytes: id.bytes,
                imp: id.imp,
                n: s.n,
                mean_ns: s.mean,
                sd_ns: s.sd,
                min_ns: s.min,
                max_ns: s.max,
                p50_ns: s.p50,
                p95_ns: s.p95,
                p99_ns: s.p99,
                ci95_ns: s.ci95,
                batch: timing.batch,
                warmup: timing.warmup,
                reps_capped: reps < self.cfg.reps,
                verdict_3ms: TRIP_P2_P3.verdict(s.p99),
                verdict_10ms: TRIP_P1.verdict(s.p99),
            };
            if failures > 0 {
                return Err(BenchError::OpFailed {
                    row: row.label(),
                    failures,
                    total: timing.samples.len() * timing.batch,
                });
            }
            (self.events)(Event::Row(&row, &timing));
            self.rows.push(row);
        }
        Ok(())
    }
}

/// Builds a GOOSE APDU (IEC 61850-8-1 `IECGoosePdu`) of exactly `len` bytes with `objects`
/// INTEGER data objects: the fixed fields of a typical publisher, then gocbRef and datSet
/// lengthened one character at a time until the encoding has the size. Some sizes cannot be
/// encoded at all (e.g. 130: a content of 127 bytes gives 129, one of 128 needs a two-byte
/// length and gives 131); those are refused.
pub fn goose_apdu(len: usize, objects: usize) -> Result<Vec<u8>, BenchError> {
    const REF: &str = "GANDERBENCHLD0/LLN0$GO$gcbProtection";
    const DS: &str = "GANDERBENCHLD0/LLN0$dsProtection";
    let text = |base: &str, n: usize| -> String { base.chars().cycle().take(n).collect() };
    for extra in 0..=len {
        let pdu = GoosePdu {
            gocb_ref: text(REF, 1 + extra.div_ceil(2)),
            time_allowed_to_live: 2_000,
            dat_set: text(DS, 1 + extra / 2),
            go_id: None,
            t: [0x69, 0x55, 0x3c, 0x00, 0x12, 0x34, 0x56, 0x0a],
            st_num: 1,
            sq_num: 0,
            simulation: false,
            conf_rev: 1,
            nds_com: false,
            num_dat_set_entries: objects as u32,
            all_data: (0..objects)
                .map(|i| Data::Integer((i % 100) as i64))
                .collect(),
        };
        let got = pdu.buffer_len();
        if got == len {
            pdu.validate()
                .map_err(|e| BenchError::Setup(format!("GOOSE APDU: {e}")))?;
            let bytes = pdu.to_vec();
            debug_assert_eq!(GoosePdu::parse(&bytes).ok().as_ref(), Some(&pdu));
            return Ok(bytes);
        }
        if got > len {
            break;
        }
    }
    Err(BenchError::Setup(format!(
        "no GOOSE APDU of exactly {len} bytes with {objects} objects"
    )))
}

/// IVs for the `primitive`/`evp-per-message` AES-GCM encrypt rows: a 96-bit counter, the
/// deterministic construction of SP 800-38D §8.2.1, so no IV repeats within a run and no RNG is
/// in the measurement.
struct CounterIv(u64);

impl IvSource for CounterIv {
    fn next_iv(&mut self) -> [u8; 12] {
        self.0 += 1;
        let mut iv = [0u8; 12];
        iv[4..].copy_from_slice(&self.0.to_be_bytes());
        iv
    }
}

/// A deterministic key of `len` bytes (benchmark keys need no secrecy).
pub(crate) fn bench_key(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(salt))
        .collect()
}

pub(crate) fn element(apdu: &[u8]) -> PayloadElement<'_> {
    PayloadElement {
        payload_type: SpduId::Goose.payload_type(),
        simulation: 0,
        appid: 0x3001,
        apdu,
    }
}

/// gander's own protect and verify of one R-GOOSE SPDU under `profile`: the two rows every
/// session algorithm has beside its primitive (protect takes a fresh SPDU number each call).
pub(crate) fn spdu_ops<'a>(
    profile: Profile,
    entry: &'a KeyEntry,
    elements: &'a [PayloadElement<'a>],
    store: &'a KeyStore,
    frame: &'a [u8],
    id: impl Fn(Impl, Op) -> RowId,
) -> [(RowId, TimedOp<'a, BenchError>); 2] {
    let mut out = Vec::with_capacity(frame.len());
    let mut number = 1u32;
    [
        (
            id(Impl::Gander, Op::Protect),
            op(move || {
                out.clear();
                number = number.wrapping_add(1);
                spdu::protect(
                    profile,
                    entry,
                    params(number),
                    black_box(elements),
                    &mut RandomIv,
                    &mut out,
                )?;
                black_box(&out);
                Ok::<_, SecError>(())
            }),
        ),
        (
            id(Impl::Gander, Op::Verify),
            op(move || {
                black_box(spdu::verify(profile, store, black_box(frame), NOW)?);
                Ok::<_, SecError>(())
            }),
        ),
    ]
}

pub(crate) fn params(n: u32) -> SendParams {
    SendParams {
        spdu_id: SpduId::Goose,
        spdu_number: n,
        now: NOW,
    }
}

/// The MAC rows of the gateway paper's Table 3: algorithm and key length in bytes (GMAC with
/// AES-128 and AES-256 keys).
pub const MAC_ROWS: [(MacAlgorithm, usize); 9] = [
    (MacAlgorithm::HmacSha256_80, 32),
    (MacAlgorithm::HmacSha256_128, 32),
    (MacAlgorithm::HmacSha256_256, 32),
    (MacAlgorithm::HmacBlake2b80, 32),
    (MacAlgorithm::HmacBlake2s80, 32),
    (MacAlgorithm::AesGmac64, 16),
    (MacAlgorithm::AesGmac128, 16),
    (MacAlgorithm::AesGmac64, 32),
    (MacAlgorithm::AesGmac128, 32),
];

/// The AES-GCM rows of Table 3.
pub const ENC_ROWS: [EncAlgorithm; 2] = [EncAlgorithm::Aes128Gcm, EncAlgorithm::Aes256Gcm];

/// Signature rows (Farooq et al. Table 1 plus the modern curves): algorithm and key size.
pub fn signature_rows(rsa_bits: &[u32]) -> Vec<(SignatureAlgorithm, u32)> {
    let mut v = vec![];
    for alg in [
        SignatureAlgorithm::RsaPkcs1v15Sha256,
        SignatureAlgorithm::RsaPssSha256,
    ] {
        v.extend(rsa_bits.iter().map(|&b| (alg, b)));
    }
    v.push((SignatureAlgorithm::EcdsaP256Sha256, 256));
    v.push((SignatureAlgorithm::Ed25519, 256));
    // Post-quantum (FIPS 204/205); the "bits" column is the classical strength targeted.
    v.push((SignatureAlgorithm::MlDsa44, 128));
    v.push((SignatureAlgorithm::MlDsa65, 192));
    v.push((SignatureAlgorithm::SlhDsaSha2_128s, 128));
    v.push((SignatureAlgorithm::SlhDsaSha2_128f, 128));
    v
}

/// Whether `alg` is an SLH-DSA parameter set, whose rows are capped at
/// [`CryptoConfig::slh_cap`] samples.
pub fn is_slh(alg: SignatureAlgorithm) -> bool {
    matches!(
        alg,
        SignatureAlgorithm::SlhDsaSha2_128s | SignatureAlgorithm::SlhDsaSha2_128f
    )
}

/// Runs every row. `events` sees progress and each row's raw samples as it completes.
pub fn run(
    cfg: &CryptoConfig,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<CryptoReport, BenchError> {
    if cfg.reps == 0 {
        return Err(BenchError::Setup("reps must be at least 1".into()));
    }
    let machine = gander_measure::machine::Machine::describe();
    let started = Instant::now();
    let mut r = Runner {
        cfg: cfg.clone(),
        rows: vec![],
        events,
    };
    for (mac, key_len) in MAC_ROWS {
        mac_rows(&mut r, mac, key_len)?;
    }
    crate::crypto_ascon::ascon_mac_rows(&mut r)?;
    for enc in ENC_ROWS {
        enc_rows(&mut r, enc)?;
    }
    crate::crypto_ascon::ascon_enc_rows(&mut r)?;
    for (mac, key_len, profile) in crate::crypto_ascon::L2_ROWS {
        crate::crypto_ascon::l2_rows(&mut r, mac, key_len, profile)?;
    }
    signature_rows_run(&mut r)?;
    Ok(CryptoReport {
        machine,
        config: cfg.clone(),
        rows: r.rows,
        provider: default_provider().name(),
        elapsed_s: started.elapsed().as_secs_f64(),
    })
}

/// A boxed timed operation from a closure returning any error `BenchError` can hold.
pub(crate) fn op<'a, E>(mut f: impl FnMut() -> Result<(), E> + 'a) -> TimedOp<'a, BenchError>
where
    BenchError: From<E>,
{
    Box::new(move || f().map_err(BenchError::from))
}

fn mac_rows(r: &mut Runner<'_>, mac: MacAlgorithm, key_len: usize) -> Result<(), BenchError> {
    let key_bits = mac.needs_iv().then_some(key_len as u32 * 8);
    let label = format!(
        "{}{}",
        mac.name(),
        key_bits.map(|b| format!(" (AES-{b})")).unwrap_or_default()
    );
    (r.events)(Event::Algorithm(&label));
    let secret = bench_key(key_len, 7);
    let mut store = KeyStore::new();
    store.insert(KeyEntry::new(
        1,
        mac,
        EncAlgorithm::None,
        &secret,
        default_provider(),
    )?)?;
    let entry = store.require(1)?;
    let store = &store;
    let mk: &dyn MacKey = entry
        .mac_key()
        .ok_or_else(|| BenchError::Setup("no MAC key".into()))?;
    let ossl = OpensslProvider.mac_key(mac, &secret)?;
    let ossl: &dyn MacKey = &*ossl;
    let header = if mac.needs_iv() {
        HEADER_LEN_IV
    } else {
        HEADER_LEN_NO_IV
    };
    let tl = mac.tag_len();
    for (bytes, objects) in AUTH_SIZES {
        let apdu = goose_apdu(bytes - header - ELEMENT_HEADER_LEN, objects)?;
        let elements = [element(&apdu)];
        let mut frame = Vec::new();
        spdu::protect(
            Profile::Standard,
            entry,
            params(1),
            &elements,
            &mut RandomIv,
            &mut frame,
        )?;
        // The authenticated range is LI .. end of payload; the signature element follows.
        if frame.len() != bytes + 2 + tl {
            return Err(BenchError::Setup(format!(
                "{mac}: frame of {} bytes, expected {bytes} + tag",
                frame.len()
            )));
        }
        let pdu =
            SessionPdu::parse(&frame, &Profile::Standard.dialect()).map_err(SecError::from)?;
        let iv = pdu.header.security.iv().to_vec();
        let data = frame[..bytes].to_vec();
        let tag = frame[bytes + 2..].to_vec();
        mk.verify(&iv, &data, &tag)?;
        if !matches!(
            spdu::verify(Profile::Standard, store, &frame, NOW)?,
            Checked::Verified(_)
        ) {
            return Err(BenchError::Setup(format!("{mac}: frame did not verify")));
        }
        let (iv, data, tag, frame, secret, elements) = (
            &iv[..],
            &data[..],
            &tag[..],
            &frame[..],
            &secret[..],
            &elements,
        );
        let id = |imp, op| RowId {
            group: Group::Authentication,
            op,
            algorithm: mac.name(),
            key_bits,
            bytes,
            imp,
        };
        let mut ops: Vec<(RowId, TimedOp<'_, BenchError>)> = vec![
            (
                id(Impl::Primitive, Op::Mac),
                op(move || {
                    let mut t = [0u8; 32];
                    mk.sign(black_box(iv), black_box(data), &mut t[..tl])?;
                    black_box(&t);
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::Primitive, Op::Verify),
                op(move || mk.verify(black_box(iv), black_box(data), black_box(tag))),
            ),
            (
                id(Impl::Openssl, Op::Mac),
                op(move || {
                    let mut t = [0u8; 32];
                    ossl.sign(black_box(iv), black_box(data), &mut t[..tl])?;
                    black_box(&t);
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::Openssl, Op::Verify),
                op(move || ossl.verify(black_box(iv), black_box(data), black_box(tag))),
            ),
            (
                id(Impl::EvpPerMessage, Op::Mac),
                op(move || {
                    let mut t = [0u8; 32];
                    evp_per_message::mac(
                        mac,
                        secret,
                        black_box(iv),
                        black_box(data),
                        &mut t[..tl],
                    )?;
                    black_box(&t);
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::EvpPerMessage, Op::Verify),
                op(move || {
                    evp_per_message::mac_verify(
                        mac,
                        secret,
                        black_box(iv),
                        black_box(data),
                        black_box(tag),
                    )
                }),
            ),
        ];
        ops.extend(spdu_ops(
            Profile::Standard,
            entry,
            elements,
            store,
            frame,
            id,
        ));
        r.rows(r.cfg.reps, ops)?;
    }
    Ok(())
}

fn enc_rows(r: &mut Runner<'_>, enc: EncAlgorithm) -> Result<(), BenchError> {
    let key_bits = Some(enc.key_len() as u32 * 8);
    (r.events)(Event::Algorithm(enc.name()));
    let secret = bench_key(enc.key_len(), 11);
    let mut store = KeyStore::new();
    store.insert(KeyEntry::new(
        2,
        MacAlgorithm::None,
        enc,
        &secret,
        default_provider(),
    )?)?;
    let entry = store.require(2)?;
    let store = &store;
    let ak: &dyn AeadKey = entry
        .aead_key()
        .ok_or_else(|| BenchError::Setup("no AEAD key".into()))?;
    let ossl = OpensslProvider.aead_key(enc, &secret)?;
    let ossl: &dyn AeadKey = &*ossl;
    for (bytes, objects) in ENC_SIZES {
        let sealed = seal(
            Profile::Standard,
            enc,
            entry,
            store,
            bytes,
            objects,
            HEADER_LEN_IV,
        )?;
        let iv: [u8; 12] = sealed
            .iv
            .as_slice()
            .try_into()
            .map_err(|_| BenchError::Setup("IV is not 12 bytes".into()))?;
        let Sealed {
            apdu,
            frame,
            aad,
            ciphertext,
            tag,
            plaintext,
            ..
        } = sealed;
        let elements = [element(&apdu)];
        let (iv, aad, ct, tag, pt, frame, secret, elements) = (
            &iv,
            &aad[..],
            &ciphertext[..],
            &tag[..],
            &plaintext[..],
            &frame[..],
            &secret[..],
            &elements,
        );
        let id = |imp, op| RowId {
            group: Group::Encryption,
            op,
            algorithm: enc.name(),
            key_bits,
            bytes,
            imp,
        };
        // Each operation owns its work buffer (they run interleaved) and encrypt rows their IV counter.
        let (mut w1, mut w2, mut w3, mut w4, mut w5, mut w6) = (
            pt.to_vec(),
            pt.to_vec(),
            pt.to_vec(),
            pt.to_vec(),
            pt.to_vec(),
            pt.to_vec(),
        );
        let (mut iv1, mut iv2, mut iv3) = (CounterIv(0), CounterIv(1 << 40), CounterIv(2 << 40));
        let mut ops: Vec<(RowId, TimedOp<'_, BenchError>)> = vec![
            (
                id(Impl::Primitive, Op::Encrypt),
                op(move || {
                    w1.copy_from_slice(pt);
                    let t = ak.seal_in_place(&iv1.next_iv(), black_box(aad), &mut w1)?;
                    black_box((&w1, t));
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::Primitive, Op::Decrypt),
                op(move || {
                    w2.copy_from_slice(ct);
                    ak.open_in_place(black_box(iv), black_box(aad), &mut w2, black_box(tag))?;
                    black_box(&w2);
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::Openssl, Op::Encrypt),
                op(move || {
                    w3.copy_from_slice(pt);
                    let t = ossl.seal_in_place(&iv2.next_iv(), black_box(aad), &mut w3)?;
                    black_box((&w3, t));
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::Openssl, Op::Decrypt),
                op(move || {
                    w4.copy_from_slice(ct);
                    ossl.open_in_place(black_box(iv), black_box(aad), &mut w4, black_box(tag))?;
                    black_box(&w4);
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::EvpPerMessage, Op::Encrypt),
                op(move || {
                    w5.copy_from_slice(pt);
                    let t = evp_per_message::seal(
                        enc,
                        secret,
                        &iv3.next_iv(),
                        black_box(aad),
                        &mut w5,
                    )?;
                    black_box((&w5, t));
                    Ok::<_, CryptoError>(())
                }),
            ),
            (
                id(Impl::EvpPerMessage, Op::Decrypt),
                op(move || {
                    w6.copy_from_slice(ct);
                    evp_per_message::open(
                        enc,
                        secret,
                        black_box(iv),
                        black_box(aad),
                        &mut w6,
                        black_box(tag),
                    )?;
                    black_box(&w6);
                    Ok::<_, CryptoError>(())
                }),
            ),
        ];
        ops.extend(spdu_ops(
            Profile::Standard,
            entry,
            elements,
            store,
            frame,
            id,
        ));
        r.rows(r.cfg.reps, ops)?;
    }
    Ok(())
}

fn signature_rows_run(r: &mut Runner<'_>) -> Result<(), BenchError> {
    let msg = goose_apdu(SIGNATURE_MESSAGE_LEN, 12)?;
    let msg = &msg[..];
    // One RSA key per modulus size serves PKCS#1 v1.5 and PSS (key generation is slow and not
    // measured). Benchmark keys need no secrecy, so a plain String holds the PEM.
    let mut rsa_pem: Vec<(u32, String)> = Vec::new();
    for (alg, bits) in signature_rows(&r.cfg.rsa_bits) {
        (r.events)(Event::Algorithm(&format!("{} {bits}", alg.name())));
        let sk = if alg.is_rsa() {
            let pem = match rsa_pem.iter().find(|(b, _)| *b == bits) {
                Some((_, p)) => p.clone(),
                None => {
                    let p = SigningKey::generate(alg, bits)?.to_pkcs8_pem()?.to_string();
                    rsa_pem.push((bits, p.clone()));
                    p
                }
            };
            SigningKey::from_pkcs8_pem(alg, pem.as_bytes())?
        } else {
            SigningKey::generate(alg, bits)?
        };
        let vk: VerifyingKey = sk.verifying_key()?;
        let sig = sk.sign(msg)?;
        vk.verify(msg, &sig)?;
        let (sk, vk, sig) = (&sk, &vk, &sig[..]);
        let id = |op| RowId {
            group: Group::Signature,
            op,
            algorithm: alg.name(),
            key_bits: Some(bits),
            bytes: SIGNATURE_MESSAGE_LEN,
            imp: Impl::Primitive,
        };
        // Sign and verify are measured separately: RSA signing takes fewer samples, SLH-DSA
        // signing and verifying far fewer (with a single warm-up sample).
        let (sign_reps, verify_reps) = if is_slh(alg) {
            let n = r.cfg.reps.min(r.cfg.slh_cap);
            (n, n)
        } else if alg.is_rsa() {
            (r.cfg.reps.min(r.cfg.rsa_sign_cap), r.cfg.reps)
        } else {
            (r.cfg.reps, r.cfg.reps)
        };
        let warmup = |n: usize| {
            if is_slh(alg) {
                1
            } else {
                stats::warmup_for(n)
            }
        };
        r.rows_with_warmup(
            sign_reps,
            warmup(sign_reps),
            vec![(
                id(Op::Sign),
                op(move || {
                    black_box(sk.sign(black_box(msg))?);
                    Ok::<_, CryptoError>(())
                }),
            )],
        )?;
        r.rows_with_warmup(
            verify_reps,
            warmup(verify_reps),
            vec![(
                id(Op::Verify),
                op(move || vk.verify(black_box(msg), black_box(sig))),
            )],
        )?;
    }
    Ok(())
}

/// One GOOSE APDU of `bytes` in `objects` objects, protected as an encrypted R-GOOSE SPDU under
/// `profile` and split the way the bare AEAD sees it: AAD (the header up to `header_len`), the
/// ciphertext, the tag, and the plaintext that verifying gives back.
pub(crate) struct Sealed {
    /// The GOOSE APDU the frame carries (its one payload element: `element(&apdu)`).
    pub(crate) apdu: Vec<u8>,
    /// The protected frame.
    pub(crate) frame: Vec<u8>,
    /// The IV from the security header.
    pub(crate) iv: Vec<u8>,
    /// Header up to the payload.
    pub(crate) aad: Vec<u8>,
    /// The encrypted payload.
    pub(crate) ciphertext: Vec<u8>,
    /// The 16-byte tag after its `85 10` header.
    pub(crate) tag: Vec<u8>,
    /// The payload verify returns.
    pub(crate) plaintext: Vec<u8>,
}

pub(crate) fn seal(
    profile: Profile,
    enc: EncAlgorithm,
    entry: &KeyEntry,
    store: &KeyStore,
    bytes: usize,
    objects: usize,
    header_len: usize,
) -> Result<Sealed, BenchError> {
    let apdu = goose_apdu(bytes - ELEMENT_HEADER_LEN, objects)?;
    let mut frame = Vec::new();
    spdu::protect(
        profile,
        entry,
        params(1),
        &[element(&apdu)],
        &mut RandomIv,
        &mut frame,
    )?;
    // Header with IV (the AAD), the encrypted payload, then `85 10` and the 16-byte tag.
    if frame.len() != header_len + bytes + 18 {
        return Err(BenchError::Setup(format!(
            "{enc}: frame of {} bytes, expected {header_len} + {bytes} + 18",
            frame.len()
        )));
    }
    let pdu = SessionPdu::parse(&frame, &profile.dialect()).map_err(SecError::from)?;
    let iv = pdu.header.security.iv().to_vec();
    let plaintext = match spdu::verify(profile, store, &frame, NOW)? {
        Checked::Verified(v) => v.cleartext()[header_len..header_len + bytes].to_vec(),
        Checked::Unsecured(_) => {
            return Err(BenchError::Setup(format!("{enc}: frame not secured")))
        }
    };
    Ok(Sealed {
        aad: frame[..header_len].to_vec(),
        ciphertext: frame[header_len..header_len + bytes].to_vec(),
        tag: frame[header_len + bytes + 2..].to_vec(),
        apdu,
        frame,
        iv,
        plaintext,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apdus_have_the_exact_sizes() {
        for (bytes, objects) in AUTH_SIZES {
            for header in [HEADER_LEN_NO_IV, HEADER_LEN_IV] {
                let len = bytes - header - ELEMENT_HEADER_LEN;
                let apdu = goose_apdu(len, objects).unwrap();
                assert_eq!(apdu.len(), len);
                let pdu = GoosePdu::parse(&apdu).unwrap();
                assert_eq!(pdu.all_data.len(), objects);
            }
        }
        for (bytes, objects) in ENC_SIZES {
            assert_eq!(
                goose_apdu(bytes - ELEMENT_HEADER_LEN, objects)
                    .unwrap()
                    .len(),
                bytes - ELEMENT_HEADER_LEN
            );
        }
        assert!(goose_apdu(130, 1).is_err(), "130 bytes cannot be encoded");
    }

    #[test]
    fn measure_batches_tiny_ops_and_counts_warmup() {
        let (t, failures) = measure(20, 5, 1_000, 32, || Ok::<_, ()>(())).unwrap();
        assert_eq!((t.samples.len(), t.warmup, failures), (20, 5, 0));
        assert!(t.batch > 1, "an empty op must be batched");
        let mut calls = 0u32;
        let (t, failures) = measure(10, 2, 1_000, 32, || {
            calls += 1;
            if calls > 1 + 4 + 64 + 5 {
                Err(())
            } else {
                Ok(())
            }
        })
        .unwrap();
        assert!(failures > 0 && t.samples.len() == 10);
    }
}
