//! Presenting a [`CryptoReport`]: the Table 8-style table, the Farooq-style signature table and
//! the targets, i.e. ratios between rows of the same run (`docs/measurement.md`: "comparisons are
//! ratios from one run").

use crate::crypto::{CryptoReport, Group, Impl, Op, Row};
use gander_measure::transfer_time::{TRIP_P1, TRIP_P2_P3};
use serde::Serialize;
use std::fmt::Write as _;

/// Whether a ratio must stay below or reach a bound.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Goal {
    /// ratio <= bound.
    AtMost(f64),
    /// ratio >= bound.
    AtLeast(f64),
}

impl Goal {
    fn holds(self, ratio: f64) -> bool {
        match self {
            Goal::AtMost(b) => ratio <= b,
            Goal::AtLeast(b) => ratio >= b,
        }
    }
    fn text(self) -> String {
        match self {
            Goal::AtMost(b) => format!("<= {b}x"),
            Goal::AtLeast(b) => format!(">= {b}x"),
        }
    }
}

/// One target: the ratio of two rows of this run.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    /// The rows' group (R-GOOSE authentication or encryption, layer 2).
    pub group: Group,
    /// Algorithm of both rows.
    pub algorithm: &'static str,
    /// AES key size where it matters.
    pub key_bits: Option<u32>,
    /// Input size.
    pub bytes: usize,
    /// What is divided by what, e.g. `gander protect / primitive mac`.
    pub what: String,
    /// Ratio of the medians: the figure the goal is judged on (robust to the scheduler noise
    /// a shared machine adds to the mean).
    pub ratio_p50: f64,
    /// Ratio of the means, for reference.
    pub ratio_mean: f64,
    /// The goal.
    pub goal: Goal,
    /// Whether `ratio_p50` meets the goal.
    pub pass: bool,
}

/// The rows the targets are set on: HMAC-SHA256-128 and AES-GMAC-128 with an AES-128 key, at
/// the medium authentication size (256 bytes, the size of the gateway paper's Table 8).
pub const TARGET_ROWS: [(&str, Option<u32>, usize); 2] = [
    ("hmac-sha256-128", None, 256),
    ("aes-gmac-128", Some(128), 256),
];

/// The library's own overhead over the primitive may be at most this factor.
pub const MAX_OVERHEAD: f64 = 1.5;
/// Per-message OpenSSL set-up must cost at least this factor more than the whole gander path.
pub const MIN_SPEEDUP_OVER_EVP: f64 = 2.0;

/// Ascon-AEAD128 targets: the same <= 1.5x overhead bound, at the medium size of each group
/// (256 bytes authenticated and 204 encrypted on R-GOOSE; the 12-object APDU on layer 2, whose
/// covered size is looked up in the report).
pub const ASCON_TARGETS: [(Group, &str, Option<u32>, Option<usize>); 4] = [
    (Group::Authentication, "ascon-aead128-mac", None, Some(256)),
    (Group::Encryption, "ascon-aead128", Some(128), Some(204)),
    (Group::Layer2, "ascon-aead128-mac", None, None),
    (Group::Layer2, "aes-gmac-128", Some(128), None),
];

type Side = (Impl, Op);

fn target(
    report: &CryptoReport,
    group: Group,
    (alg, kb, bytes): (&'static str, Option<u32>, usize),
    (num, den, goal): (Side, Side, Goal),
) -> Option<Target> {
    let a = report.row_in(group, alg, kb, bytes, num.0, num.1)?;
    let b = report.row_in(group, alg, kb, bytes, den.0, den.1)?;
    let ratio_p50 = a.p50_ns / b.p50_ns;
    Some(Target {
        group,
        algorithm: alg,
        key_bits: kb,
        bytes,
        what: format!(
            "{} {} / {} {}",
            num.0.name(),
            num.1.name(),
            den.0.name(),
            den.1.name()
        ),
        ratio_p50,
        ratio_mean: a.mean_ns / b.mean_ns,
        goal,
        pass: goal.holds(ratio_p50),
    })
}

/// The middle of the sizes `group` has rows of for `alg` (the 12-object APDU of three).
fn middle_size(report: &CryptoReport, group: Group, alg: &str) -> Option<usize> {
    let mut sizes: Vec<usize> = report
        .rows
        .iter()
        .filter(|r| r.group == group && r.algorithm == alg)
        .map(|r| r.bytes)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes.get(sizes.len() / 2).copied()
}

/// Computes the targets from a report; targets whose rows are missing are left out.
pub fn targets(report: &CryptoReport) -> Vec<Target> {
    let mut out = classical_targets(report);
    for (group, alg, kb, bytes) in ASCON_TARGETS {
        let Some(bytes) = bytes.or_else(|| middle_size(report, group, alg)) else {
            continue;
        };
        let (first, second) = if group == Group::Encryption {
            (Op::Encrypt, Op::Decrypt)
        } else {
            (Op::Mac, Op::Verify)
        };
        for pair in [
            (
                (Impl::Gander, Op::Protect),
                (Impl::Primitive, first),
                Goal::AtMost(MAX_OVERHEAD),
            ),
            (
                (Impl::Gander, Op::Verify),
                (Impl::Primitive, second),
                Goal::AtMost(MAX_OVERHEAD),
            ),
        ] {
            out.extend(target(report, group, (alg, kb, bytes), pair));
        }
    }
    out
}

/// The targets of the HMAC and GMAC rows ([`TARGET_ROWS`]).
fn classical_targets(report: &CryptoReport) -> Vec<Target> {
    let pairs: [(Side, Side, Goal); 4] = [
        (
            (Impl::Gander, Op::Protect),
            (Impl::Primitive, Op::Mac),
            Goal::AtMost(MAX_OVERHEAD),
        ),
        (
            (Impl::Gander, Op::Verify),
            (Impl::Primitive, Op::Verify),
            Goal::AtMost(MAX_OVERHEAD),
        ),
        (
            (Impl::EvpPerMessage, Op::Mac),
            (Impl::Gander, Op::Protect),
            Goal::AtLeast(MIN_SPEEDUP_OVER_EVP),
        ),
        (
            (Impl::EvpPerMessage, Op::Verify),
            (Impl::Gander, Op::Verify),
            Goal::AtLeast(MIN_SPEEDUP_OVER_EVP),
        ),
    ];
    let mut out = vec![];
    for (alg, kb, bytes) in TARGET_ROWS {
        for pair in pairs {
            out.extend(target(
                report,
                Group::Authentication,
                (alg, kb, bytes),
                pair,
            ));
        }
    }
    out
}

fn us(ns: f64) -> f64 {
    ns / 1_000.0
}

fn alg_label(r: &Row) -> String {
    match r.key_bits {
        Some(b) if matches!(r.group, Group::Authentication | Group::Layer2) => {
            format!("{} aes{b}", r.algorithm)
        }
        _ => r.algorithm.to_string(),
    }
}

/// The header: machine, parameters and how to read the tables.
pub fn render_header(report: &CryptoReport) -> String {
    let mut s = String::new();
    let c = &report.config;
    let _ = writeln!(s, "gander bench crypto");
    let _ = writeln!(s, "{}", report.machine);
    let _ = writeln!(
        s,
        "run:      {} samples per row (RSA signing at most {}), warm-up discarded, {:.1} s; provider {} for primitive/gander",
        c.reps, c.rsa_sign_cap, report.elapsed_s, report.provider
    );
    let _ = writeln!(
        s,
        "method:   times in µs per operation; batches of k ops (k in column k) last >= {} ns; percentiles nearest-rank; CI95 = t*sd/sqrt(n)",
        c.target_batch_ns
    );
    let _ = writeln!(
        s,
        "verdicts: p99 of one operation against IEC 61850-5 type 1A {} (P2/3) and {} (P1); a crypto operation is only part of the transfer time",
        TRIP_P2_P3.label(),
        TRIP_P1.label()
    );
    s
}

/// The Table 8-style table of MAC and AEAD rows, grouped by algorithm and size.
pub fn render_table(report: &CryptoReport) -> String {
    let mut s = String::new();
    for (group, title) in [
        (
            Group::Authentication,
            "Authentication (gateway paper Table 3 HMAC/GMAC, Table 6 sizes, Figure 4)",
        ),
        (
            Group::Encryption,
            "Encryption (gateway paper Table 3 AES-GCM, Table 6 sizes, Figure 5)",
        ),
        (
            Group::Layer2,
            "Layer-2 GOOSE, whole frame (IEC 62351-6 extension; bytes = range the MAC covers)",
        ),
        (
            Group::Signature,
            "Signatures (Farooq et al. Table 1 and successors), impl primitive",
        ),
    ] {
        let rows: Vec<&Row> = report.rows.iter().filter(|r| r.group == group).collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(s, "\n{title}");
        let _ = writeln!(
            s,
            "{:<29} {:>5} {:<15} {:<8} {:>7} {:>2} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>8}  {:<4} TT5",
            "algorithm", "bytes", "impl", "op", "n", "k", "mean", "sd", "min", "max", "p50", "p99", "CI95", "TT6"
        );
        let mut last = String::new();
        for r in rows {
            let label = if r.group == Group::Signature {
                format!("{} {}", r.algorithm, r.key_bits.unwrap_or(0))
            } else {
                alg_label(r)
            };
            let key = format!("{label}/{}", r.bytes);
            if !last.is_empty() && key != last && r.group != Group::Signature {
                s.push('\n');
            }
            let shown = if key == last {
                String::new()
            } else {
                label.clone()
            };
            last = key;
            let _ = writeln!(
                s,
                "{:<29} {:>5} {:<15} {:<8} {:>7} {:>2} {:>10.3} {:>9.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>8.4}  {:<4} {}",
                shown,
                r.bytes,
                r.imp.name(),
                r.op.name(),
                format!("{}{}", r.n, if r.reps_capped { "*" } else { "" }),
                r.batch,
                us(r.mean_ns),
                us(r.sd_ns),
                us(r.min_ns),
                us(r.max_ns),
                us(r.p50_ns),
                us(r.p99_ns),
                us(r.ci95_ns),
                r.verdict_3ms,
                r.verdict_10ms,
            );
        }
    }
    if report.rows.iter().any(|r| r.reps_capped) {
        let _ = writeln!(
            s,
            "\n* fewer samples than requested: RSA signing is capped at {} per row, SLH-DSA at {}",
            report.config.rsa_sign_cap, report.config.slh_cap
        );
    }
    s
}

/// Farooq et al.'s published Table 1 values (ms, Intel i5-3210M @ 2.5 GHz), for context only:
/// a different machine and library, so never a ratio.
const FAROOQ: [(&str, u32, f64, f64); 4] = [
    ("rsassa-pkcs1-v1_5-sha256", 1024, 0.942, 0.283),
    ("rsassa-pkcs1-v1_5-sha256", 2048, 3.56, 0.75),
    ("rsassa-pss-sha256", 1024, 5.2, 0.25),
    ("rsassa-pss-sha256", 2048, 6.1, 0.28),
];

/// The signature rows laid out as Farooq et al.'s Table 1: sign and verify times in ms and
/// whether sign + verify fits the 3 ms GOOSE budget.
pub fn render_signatures(report: &CryptoReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nSignatures, Farooq et al. Table 1 layout (ms; mean, median, p99 of this run; {} B message)",
        crate::crypto::SIGNATURE_MESSAGE_LEN
    );
    let _ = writeln!(
        s,
        "{:<26} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11}  {:<16} {:>6} {:<6} {:<7} Farooq i5-3210M s/v",
        "algorithm",
        "bits",
        "sign",
        "sign p50",
        "sign p99",
        "verify",
        "ver. p50",
        "ver. p99",
        "sign+verify",
        "TT6 3 ms (mean)",
        "sig B",
        "L2 fit",
        "R-GOOSE",
    );
    let sigs: Vec<&Row> = report
        .rows
        .iter()
        .filter(|r| r.group == Group::Signature && r.op == Op::Sign)
        .collect();
    for sign in sigs {
        let Some(verify) = report.row(
            sign.algorithm,
            sign.key_bits,
            sign.bytes,
            sign.imp,
            Op::Verify,
        ) else {
            continue;
        };
        let bits = sign.key_bits.unwrap_or(0);
        let total = sign.mean_ns + verify.mean_ns;
        let farooq = FAROOQ
            .iter()
            .find(|f| f.0 == sign.algorithm && f.1 == bits)
            .map(|f| format!("{} / {}", f.2, f.3))
            .unwrap_or_else(|| "-".into());
        let fit = signature_fit(sign.algorithm, bits);
        let (sig_len, l2, rg) = match &fit {
            Some(f) => (
                f.signature_len.to_string(),
                yes_no(f.l2_goose),
                yes_no(f.r_goose),
            ),
            None => ("-".into(), "-", "-"),
        };
        let _ = writeln!(
            s,
            "{:<26} {:>5} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>11.3}  {:<16} {:>6} {:<6} {:<7} {}",
            sign.algorithm,
            bits,
            sign.mean_ns / 1e6,
            sign.p50_ns / 1e6,
            sign.p99_ns / 1e6,
            verify.mean_ns / 1e6,
            verify.p50_ns / 1e6,
            verify.p99_ns / 1e6,
            total / 1e6,
            TRIP_P2_P3.verdict(total),
            sig_len,
            l2,
            rg,
            farooq
        );
    }
    let _ = writeln!(
        s,
        "fit: L2 = a layer-2 GOOSE frame with this {} B APDU and the signature in the IEC 62351-6 \
         extension within a 1500 B Ethernet payload (and the extension within 4095 B); R-GOOSE = \
         the signature within the 90-5 signature element (255 B) and the SPDU within 1472 B \
         (MTU 1500 - IPv4 20 - UDP 8), see gander_sec::fit",
        crate::crypto::SIGNATURE_MESSAGE_LEN
    );
    s
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Whether a signature of an algorithm fits a frame carrying the benchmark's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SignatureFit {
    /// Signature length on the wire, bytes (RSA: the modulus length; ECDSA: raw r||s).
    pub signature_len: usize,
    /// A layer-2 GOOSE frame with a [`crate::crypto::SIGNATURE_MESSAGE_LEN`]-byte APDU fits.
    pub l2_goose: bool,
    /// An R-GOOSE SPDU with that APDU fits the signature element and an unfragmented datagram.
    pub r_goose: bool,
}

/// The fit of a signature row (`algorithm` as named in key files, `bits` as in the row).
pub fn signature_fit(algorithm: &str, bits: u32) -> Option<SignatureFit> {
    use gander_sec::fit;
    use gander_sec::signature::SignatureAlgorithm;
    let alg: SignatureAlgorithm = algorithm.parse().ok()?;
    let len = alg
        .fixed_signature_len()
        .unwrap_or((bits as usize).div_ceil(8));
    let apdu = crate::crypto::SIGNATURE_MESSAGE_LEN;
    let l2_goose = fit::check_l2_goose(apdu, len, 0, None).is_ok();
    // Header without IV (31), one payload element (6 + APDU), `85 len signature`.
    let spdu = crate::crypto::HEADER_LEN_NO_IV + crate::crypto::ELEMENT_HEADER_LEN + apdu + 2 + len;
    let r_goose = fit::check_signature(alg, len, fit::Transport::RGooseIpv4).is_ok()
        && fit::check_rgoose(spdu).is_ok();
    Some(SignatureFit {
        signature_len: len,
        l2_goose,
        r_goose,
    })
}

/// The targets section.
pub fn render_targets(targets: &[Target]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nTargets (ratios of medians from this run; ratio of means in parentheses)"
    );
    for t in targets {
        let alg = match (t.key_bits, t.group) {
            (Some(b), Group::Authentication | Group::Layer2) => format!("{} aes{b}", t.algorithm),
            _ => t.algorithm.to_string(),
        };
        let alg = if t.group == Group::Layer2 {
            format!("L2 {alg}")
        } else {
            alg
        };
        let _ = writeln!(
            s,
            "  {:<24} {:>4} B  {:<38} {:>6.2}x ({:>5.2}x)  {:<7} {}",
            alg,
            t.bytes,
            t.what,
            t.ratio_p50,
            t.ratio_mean,
            t.goal.text(),
            if t.pass { "PASS" } else { "FAIL" }
        );
    }
    let failed = targets.iter().filter(|t| !t.pass).count();
    let _ = writeln!(
        s,
        "  {} of {} targets met",
        targets.len() - failed,
        targets.len()
    );
    s
}

/// The rows as a JSON array: what `gander bench crypto --json` prints on stdout, one object per
/// row with the fields of [`Row`] (`op`, `algorithm`, `key_bits`, `bytes`, `impl`, `n`,
/// `mean_ns`, `sd_ns`, `min_ns`, `max_ns`, `p50_ns`, `p95_ns`, `p99_ns`, `ci95_ns`, `batch`,
/// `warmup`, `reps_capped`, `verdict_3ms`, `verdict_10ms`, `group`).
pub fn render_json(report: &CryptoReport) -> String {
    serde_json::to_string_pretty(&report.rows).expect("rows serialise: plain numbers and strings")
}

/// The whole human-readable report.
pub fn render_text(report: &CryptoReport) -> String {
    let mut s = render_header(report);
    s.push_str(&render_table(report));
    s.push_str(&render_signatures(report));
    s.push_str(&render_targets(&targets(report)));
    s
}
