//! `gander frame show|verify|protect` over pcap/pcapng captures.

use crate::pcap_io::PcapOut;
use crate::show_goose::goose_json;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use gander_capture::{Capture, CaptureReader, Frame, Reassembly};
use gander_sec::fit::Transport;
use gander_sec::frame::{protect_frame, CaptureVerifier, Outcome, Verdict};
use gander_sec::spdu::RandomIv;
use gander_sec::view::{self, Content, CutFrame};
use gander_sec::{default_provider, KeyStore, Profile};
use gander_wire::l2_frame::L2Frame;
use gander_wire::spdu::{parse_elements, SessionPdu};
use gander_wire::sv::SavPdu;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Subcommand)]
pub(crate) enum FrameCommand {
    /// Decode every GOOSE / SV / R-GOOSE / R-SV frame of a capture (IPv4 or IPv6).
    Show(ShowArgs),
    /// Verify every secured frame; exits 1 if any secured frame fails.
    Verify(VerifyArgs),
    /// Secure every GOOSE / SV / R-GOOSE / R-SV frame with one key; other frames are copied.
    Protect(ProtectArgs),
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ProfileArg {
    /// IEC 62351-6 / IEC 61850-90-5 version 2 as specified.
    Standard,
    /// libiec61850 1.6's framing quirks.
    Libiec61850,
    /// The gateway paper's R-GOOSE_SecLib (version-1 framing).
    Seclib,
    /// `standard` plus Ascon-AEAD128 (no standard code point; not interoperable, docs/ascon.md).
    Experimental,
}

impl From<ProfileArg> for Profile {
    fn from(p: ProfileArg) -> Profile {
        match p {
            ProfileArg::Standard => Profile::Standard,
            ProfileArg::Libiec61850 => Profile::Libiec61850,
            ProfileArg::Seclib => Profile::Seclib,
            ProfileArg::Experimental => Profile::Experimental,
        }
    }
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum TimeBase {
    /// Key validity is judged at each frame's capture time.
    Capture,
    /// Key validity is judged now.
    Now,
}

#[derive(Args)]
pub(crate) struct ShowArgs {
    /// Capture file (pcap or pcapng: Ethernet, Linux cooked SLL/SLL2 or raw IP).
    pub file: PathBuf,
    /// One JSON object per frame.
    #[arg(long)]
    pub json: bool,
    /// Length conventions used to decode session headers.
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: ProfileArg,
}

#[derive(Args)]
pub(crate) struct VerifyArgs {
    /// Capture file (pcap or pcapng: Ethernet, Linux cooked SLL/SLL2 or raw IP).
    pub file: PathBuf,
    /// Key file (TOML, see docs/keys.md).
    #[arg(long, required_unless_present = "kdc")]
    pub keys: Option<PathBuf>,
    /// Or the keys of a GDOI group, from a registration (docs/gdoi.md, "Member").
    #[command(flatten)]
    pub kdc: crate::gdoi_member::KdcKeyArgs,
    /// Framing profile of the sender.
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: ProfileArg,
    /// One JSON verdict per frame.
    #[arg(long)]
    pub json: bool,
    /// When key validity windows are evaluated.
    #[arg(long, value_enum, default_value = "capture")]
    pub at: TimeBase,
    /// Treat unsecured GOOSE/SV/R-GOOSE/R-SV frames as failures.
    #[arg(long)]
    pub require_security: bool,
    /// Samples per second at which layer-2 SV smpCnt wraps, for streams that do not state it
    /// (IEC 61850-9-2LE: 4000 at 50 Hz, 4800 at 60 Hz).
    #[arg(long, default_value_t = gander_sec::replay::DEFAULT_SV_WRAP)]
    pub sv_wrap: u16,
}

#[derive(Args)]
pub(crate) struct ProtectArgs {
    /// Input capture (pcap or pcapng). A fragmented R-GOOSE/R-SV datagram is reassembled,
    /// protected and written again in fragments; fragments of other traffic are copied; a
    /// fragment of a datagram never reassembled that may be IEC 61850 is left out, named, and
    /// the exit status is 1 (docs/frame-cli.md).
    pub input: PathBuf,
    /// Output capture (pcap, Ethernet).
    pub output: PathBuf,
    /// Key file.
    #[arg(long, required_unless_present = "kdc")]
    pub keys: Option<PathBuf>,
    /// Or the keys of a GDOI group, from a registration (docs/gdoi.md, "Member").
    #[command(flatten)]
    pub kdc: crate::gdoi_member::KdcKeyArgs,
    /// Id of the key (and so the algorithms) to protect with; with --kdc, the group's newest
    /// key when absent.
    #[arg(long, required_unless_present = "kdc")]
    pub key_id: Option<u32>,
    /// Framing profile to write.
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: ProfileArg,
}

pub(crate) fn run(cmd: FrameCommand) -> Result<ExitCode> {
    match cmd {
        FrameCommand::Show(a) => show(a),
        FrameCommand::Verify(a) => verify(a),
        FrameCommand::Protect(a) => protect(a),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn load_keys(path: &Path) -> Result<KeyStore> {
    KeyStore::load(path, default_provider()).map_err(anyhow::Error::from)
}

/// The key store of `--keys FILE`, or of a registration with `--kdc` (with the group's Key
/// IDs, newest last), and a name for messages.
fn keys_or_kdc(
    keys: &Option<PathBuf>,
    kdc: &crate::gdoi_member::KdcKeyArgs,
) -> Result<(KeyStore, Vec<u32>, String)> {
    match keys {
        Some(p) if kdc.kdc.is_empty() => Ok((load_keys(p)?, Vec::new(), p.display().to_string())),
        Some(_) => bail!("give --keys or --kdc, not both"),
        None => {
            let (store, ids) = crate::gdoi_member::store_from_kdc(kdc)?;
            Ok((
                store,
                ids,
                format!("the keys of key server {}", kdc.kdc.join(", ")),
            ))
        }
    }
}

fn verdict_json(index: usize, v: &Verdict) -> Value {
    let mut o = json!({
        "index": index,
        "kind": v.kind.name(),
        "ok": v.ok(),
        "verdict": v.word(),
        "key_id": v.key_id,
        "spdu_number": v.spdu_number,
        "appid": v.appid,
        "st_num": v.st_sq.map(|s| s.0),
        "sq_num": v.st_sq.map(|s| s.1),
        "smp_cnt": v.smp_cnt,
    });
    if let Some((mac, enc)) = v.algorithms {
        o["mac"] = json!(mac);
        o["enc"] = json!(enc);
    }
    if let Outcome::Failed(e) = &v.outcome {
        o["error"] = json!(e.to_string());
    }
    o
}

fn verdict_line(number: usize, v: &Verdict) -> String {
    let mut s = format!("#{number:<5} {:<8} {:<22}", v.kind.name(), v.word());
    if let Some(k) = v.key_id {
        s += &format!(" key={k}");
    }
    if let Some(n) = v.spdu_number {
        s += &format!(" spdu={n}");
    }
    if let Some(a) = v.appid {
        s += &format!(" appid=0x{a:04x}");
    }
    if let Some((st, sq)) = v.st_sq {
        s += &format!(" st={st} sq={sq}");
    }
    if let Some(c) = v.smp_cnt {
        s += &format!(" smpCnt={c}");
    }
    if let Some((mac, enc)) = v.algorithms {
        s += &format!(" mac={mac} enc={enc}");
    }
    if let Outcome::Failed(e) = &v.outcome {
        s += &format!(" error: {e}");
    }
    s
}

fn open(path: &Path) -> Result<Capture<std::fs::File>> {
    Capture::open(path).with_context(|| format!("cannot open {}", path.display()))
}

/// What the captured headers of a frame the capture cut show: `goose`, `sv`,
/// `gse-management`, `session` (UDP to or from port 102, or starting `01 40`), `other`, or
/// `unknown` (cut before the headers that tell).
fn cut_carries(data: &[u8]) -> &'static str {
    match classify_cut_frame(data) {
        CutFrame::Iec61850(k) => k.name(),
        CutFrame::Other => "other",
        CutFrame::Unknown => "unknown",
    }
}

/// What a cut frame carries, looking inside a GRE/ERSPAN tunnel (docs/capture.md) when the
/// inner Ethernet header was captured; a GRE packet cut before it may carry anything.
fn classify_cut_frame(data: &[u8]) -> CutFrame {
    match gander_capture::tunnel::decapsulate(data) {
        Some((_, r)) => view::classify_cut(&data[r]),
        None if gander_capture::tunnel::is_gre(data) => CutFrame::Unknown,
        None => view::classify_cut(data),
    }
}

/// A frame the capture cut (captured length below its length on the wire: a snap length).
/// It is not decoded: its IP, UDP and APDU lengths run past what was captured, and the missing
/// octets were never recorded, so it is neither malformed nor verifiable. The line names both
/// lengths and what the captured headers show.
fn cut_json(f: &Frame<'_>) -> Value {
    json!({
        "index": f.number - 1,
        "frame": f.number,
        "kind": "capture-truncated",
        "carries": cut_carries(f.data),
        "captured_len": f.captured_len,
        "orig_len": f.orig_len,
        "detail": cut_detail(f.captured_len, f.orig_len),
    })
}

fn cut_detail(captured: u32, orig: u32) -> String {
    format!("cut by the capture to {captured} of {orig} octets (the capture's snap length): the rest was never recorded, not decoded")
}

/// The frame's line for a fragment held (or dropped) for reassembly: its datagram is shown at
/// the frame of its last fragment, as tshark does.
fn fragment_json(f: &Frame<'_>) -> Value {
    json!({
        "index": f.number - 1,
        "frame": f.number,
        "kind": "ip-fragment",
        "verdict": if f.reassembly == Reassembly::Dropped { "fragment-dropped" } else { "fragment-held" },
        "len": f.data.len(),
    })
}

/// Prints the reassembly findings of a frame (or of the end of the capture).
fn print_findings(findings: &[gander_capture::Finding], as_json: bool) {
    for f in findings {
        if as_json {
            crate::out(json!({
                "finding": f.kind.name(),
                "frame": f.frame,
                "first_frame": f.first_frame,
                "src": f.datagram.src.to_string(),
                "dst": f.datagram.dst.to_string(),
                "ip_id": f.datagram.id,
                "detail": f.to_string(),
            }));
        } else {
            crate::out(format!("#{:<5} finding  {f}", f.frame));
        }
    }
}

/// The end of a capture: reassembly findings still open and the reader's warnings (a capture
/// cut short is read up to its last whole packet, and said so).
fn finish_capture(c: &mut Capture<std::fs::File>, path: &Path, as_json: bool) {
    print_findings(&c.finish(), as_json);
    for w in c.warnings() {
        eprintln!("warning: {}: {w}", path.display());
    }
}

fn verify(a: VerifyArgs) -> Result<ExitCode> {
    let (store, _, _) = keys_or_kdc(&a.keys, &a.kdc)?;
    let mut capture = open(&a.file)?;
    if a.sv_wrap == 0 {
        bail!("--sv-wrap must be the samples per second at which smpCnt wraps (e.g. 4000, 4800)");
    }
    let mut verifier = CaptureVerifier::new(a.profile.into(), &store);
    verifier.set_sv_wrap(a.sv_wrap);
    let (mut verified, mut unsecured, mut failed, mut skipped, mut cut) = (0, 0, 0, 0, 0);
    // Frames accepted lately, to tell a capture's copies of one frame (Linux "any", several
    // interfaces) from a replay, as the audit does (`gander_audit::is_capture_copy_at`).
    let mut recent: std::collections::VecDeque<(u64, u64, gander_audit::Recorded)> =
        std::collections::VecDeque::with_capacity(RECENT_FRAMES);
    let mut copies = 0;
    let ctx = || format!("{}", a.file.display());
    while let Some(f) = capture.next_frame().with_context(ctx)? {
        print_findings(f.findings, a.json);
        let i = (f.number - 1) as usize;
        if f.cut_by_capture() && f.ethernet {
            // Not verifiable: the MAC or signature covers octets the capture did not record.
            // Not a failure of the frame, except under --require-security for a frame that
            // is (or may be) IEC 61850: its security cannot be shown.
            cut += 1;
            let carries = cut_carries(f.data);
            let fails = a.require_security && carries != "other";
            if fails {
                failed += 1;
            }
            if a.json {
                let mut o = cut_json(&f);
                o["ok"] = json!(!fails);
                o["verdict"] = json!("capture-truncated");
                crate::out(o);
            } else {
                crate::out(format!(
                    "#{:<5} {:<8} {:<22} {}",
                    f.number,
                    carries,
                    "capture-truncated",
                    cut_detail(f.captured_len, f.orig_len)
                ));
            }
            continue;
        }
        if matches!(f.reassembly, Reassembly::Held | Reassembly::Dropped) || !f.ethernet {
            skipped += 1;
            if a.json {
                crate::out(fragment_or_link_json(&f));
            } else {
                crate::out(format!("#{:<5} {}", f.number, fragment_or_link_word(&f)));
            }
            continue;
        }
        let t = if a.at == TimeBase::Now {
            now()
        } else {
            f.timestamp_ns / 1_000_000_000
        };
        // SV freshness is judged on the capture clock, whatever `--at` says about keys.
        let mut v = verifier.verify_at(f.data, t, f.timestamp_ns);
        if a.require_security && v.outcome == Outcome::Unsecured {
            v.outcome = Outcome::Failed(gander_sec::SecError::MissingAuthenticator(
                "security (unsecured frame)",
            ));
        }
        let rec = gander_audit::Recorded {
            interface: f.interface,
            packet_type: f.packet_type,
        };
        let hash = gander_audit::recorded_octets_hash(f.data);
        if matches!(
            &v.outcome,
            Outcome::Failed(gander_sec::SecError::Replay { .. })
        ) && recent.iter().any(|&(h, ts, r)| {
            h == hash
                && gander_audit::is_capture_copy_at(
                    f.timestamp_ns.saturating_sub(ts),
                    true,
                    r == rec,
                )
        }) {
            copies += 1;
            print_capture_copy(&f, &v, a.json);
            continue;
        }
        match &v.outcome {
            Outcome::Verified => verified += 1,
            Outcome::Unsecured => unsecured += 1,
            Outcome::Skipped => skipped += 1,
            Outcome::Failed(_) => failed += 1,
        }
        if matches!(v.outcome, Outcome::Verified | Outcome::Unsecured) {
            if recent.len() == RECENT_FRAMES {
                recent.pop_front();
            }
            recent.push_back((hash, f.timestamp_ns, rec));
        }
        if a.json {
            let mut o = verdict_json(i, &v);
            o["frame"] = json!(f.number);
            add_reassembly(&mut o, &f);
            if let Some(t) = f.tunnel {
                o["tunnel"] = json!(t.name());
            }
            crate::out(o);
        } else {
            let mut line = verdict_line(f.number as usize, &v);
            if let Some(t) = f.tunnel {
                line += &format!(" (inside {})", t.name());
            }
            crate::out(line);
        }
    }
    finish_capture(&mut capture, &a.file, a.json);
    let mut summary = format!(
        "{} frames: {verified} verified, {unsecured} unsecured, {failed} failed, {skipped} not GOOSE/R-GOOSE/R-SV",
        capture.frames()
    );
    if cut > 0 {
        summary += &format!(", {cut} cut by the capture's snap length (not verifiable)");
    }
    if copies > 0 {
        summary += &format!(
            ", {copies} copies the capture made of a frame just accepted (not judged twice)"
        );
    }
    eprintln!("{summary}");
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Frames remembered for [`print_capture_copy`]'s test: copies follow their frame within a
/// millisecond, with at most a few other frames between.
const RECENT_FRAMES: usize = 32;

/// A frame the verifier calls a replay that is byte for byte a frame accepted just before,
/// recorded again within 50 µs or on another interface or with another Linux packet type
/// within 1 ms: the capture's copy of one frame, not a replay on the wire (the audit's
/// `capture-copy`, docs/audit.md). Not a failure.
fn print_capture_copy(f: &Frame<'_>, v: &Verdict, json: bool) {
    const WHY: &str = "the same frame recorded again (within 50 us, or on another interface or with another Linux packet type within 1 ms): a copy the capture made, not judged twice";
    if json {
        let mut o = verdict_json((f.number - 1) as usize, v);
        o["frame"] = json!(f.number);
        o["ok"] = json!(true);
        o["verdict"] = json!("capture-copy");
        o["note"] = json!(WHY);
        if let Some(e) = o.as_object_mut() {
            e.remove("error");
        }
        crate::out(o);
    } else {
        crate::out(format!(
            "#{:<5} {:<8} {:<22} {WHY}",
            f.number,
            v.kind.name(),
            "capture-copy"
        ));
    }
}

fn fragment_or_link_json(f: &Frame<'_>) -> Value {
    if f.ethernet {
        fragment_json(f)
    } else {
        json!({"index": f.number - 1, "frame": f.number, "kind": "other", "link": f.link.code(), "len": f.data.len()})
    }
}

fn fragment_or_link_word(f: &Frame<'_>) -> String {
    match (f.ethernet, f.reassembly) {
        (false, _) => format!("other    link type {} not read", f.link.code()),
        (_, Reassembly::Dropped) => "ip-fragment fragment-dropped".into(),
        _ => "ip-fragment fragment-held (shown at its datagram's last fragment)".into(),
    }
}

/// Notes, on a reassembled datagram's line, which frames it was made of.
fn add_reassembly(o: &mut Value, f: &Frame<'_>) {
    if let Reassembly::Complete {
        first_frame,
        fragments,
    } = f.reassembly
    {
        o["reassembled"] = json!({"first_frame": first_frame, "fragments": fragments});
    }
}

fn protect(a: ProtectArgs) -> Result<ExitCode> {
    let (store, group_ids, source) = keys_or_kdc(&a.keys, &a.kdc)?;
    let key_id = a
        .key_id
        .or(group_ids.last().copied())
        .context("--key-id is needed")?;
    let key = store
        .get(key_id)
        .with_context(|| format!("key id {key_id} is not in {source}"))?;
    // A signature no frame can carry (ML-DSA, SLH-DSA) is refused before any frame is read.
    if let Some(s) = &key.signature {
        gander_sec::fit::check_signature(s.algorithm, s.wire_len(), Transport::L2Goose)
            .with_context(|| format!("key id {key_id} cannot protect any GOOSE frame"))?;
    }
    // First pass: what becomes of every datagram sent in fragments (crate::protect_fragments).
    let plan = crate::protect_fragments::plan(&a.input, a.profile.into())?;
    let file = std::fs::File::open(&a.input)
        .with_context(|| format!("cannot open {}", a.input.display()))?;
    let mut reader = CaptureReader::new(file);
    let mut out = PcapOut::create(&a.output)?;
    let mut n = Counts::default();
    let written = protect_into(&a, key, &plan, &mut reader, &mut out, &mut n);
    if let Err(e) = written {
        // Nothing half-written is left as if it were the protected capture.
        drop(out);
        let _ = std::fs::remove_file(&a.output);
        return Err(e);
    }
    out.finish()?;
    for w in reader.warnings() {
        eprintln!("warning: {}: {w}", a.input.display());
    }
    let mut summary = format!(
        "{} frames: {} secured with key {key_id}, {} copied unchanged",
        reader.packets(),
        n.secured,
        n.copied
    );
    if n.reassembled > 0 {
        summary += &format!(
            " ({} of the secured reassembled from fragments and sent again in fragments)",
            n.reassembled
        );
    }
    eprintln!("{summary}");
    if n.left_out.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let shown: Vec<String> = n
        .left_out
        .iter()
        .take(10)
        .map(|f| format!("#{f}"))
        .collect();
    eprintln!(
        "gander: {} fragments left out ({}{}): their datagrams were never reassembled (a fragment missing, or the capture began or ended inside them) and may be R-GOOSE/R-SV, which cannot be protected in part",
        n.left_out.len(),
        shown.join(", "),
        if n.left_out.len() > shown.len() { ", ..." } else { "" }
    );
    Ok(ExitCode::from(1))
}

/// What `protect_into` wrote.
#[derive(Debug, Default)]
struct Counts {
    secured: u64,
    copied: u64,
    /// Datagrams reassembled from fragments, protected and fragmented again.
    reassembled: u64,
    /// Fragment frames left out (their numbers).
    left_out: Vec<u64>,
}

/// Protects every frame of `reader` into `out`.
fn protect_into(
    a: &ProtectArgs,
    key: &gander_sec::KeyEntry,
    plan: &crate::protect_fragments::Plan,
    reader: &mut CaptureReader<std::fs::File>,
    out: &mut PcapOut,
    n: &mut Counts,
) -> Result<()> {
    let mut ivs = RandomIv;
    let mut reassembler = crate::protect_fragments::reassembler();
    let (mut datagram, mut findings) = (Vec::new(), Vec::new());
    while let Some(p) = reader
        .next_packet()
        .with_context(|| format!("{}", a.input.display()))?
    {
        if !p.ethernet {
            bail!(
                "frame #{}: link type {} cannot be written as Ethernet",
                p.number,
                p.link.code()
            );
        }
        if p.cut_by_capture() {
            // A frame the snap length cut: other traffic is copied as it was captured (cut,
            // its length on the wire kept); an IEC 61850 frame cannot be protected (the MAC
            // would cover octets never recorded) and is not copied unprotected into a capture
            // that claims to be protected: the command stops, as for a malformed frame.
            let (cap, orig) = (p.captured_len, p.orig_len);
            match classify_cut_frame(p.data) {
                CutFrame::Other => {
                    n.copied += 1;
                    out.write(p.timestamp_ns, written_orig_len(&p), p.data)?;
                    continue;
                }
                CutFrame::Iec61850(k) => bail!(
                    "frame #{}: a {} frame cut by the capture to {cap} of {orig} octets (its snap length): it cannot be protected; capture again without a snap length",
                    p.number,
                    k.name()
                ),
                CutFrame::Unknown => bail!(
                    "frame #{}: cut by the capture to {cap} of {orig} octets (its snap length) before the headers that tell whether it is IEC 61850 traffic: not copied unprotected; capture again without a snap length",
                    p.number
                ),
            }
        }
        // Mirrored traffic: protect rewrites frames, not tunnels. A GRE/ERSPAN packet whose
        // inner frame is IEC 61850 (or does not parse) stops the command rather than leave a
        // cleartext publisher frame in a capture that claims to be protected.
        if let Some((tunnel, r)) = gander_capture::tunnel::decapsulate(p.data) {
            let inner = view::classify(a.profile.into(), &p.data[r]).map(|v| v.kind());
            if !matches!(inner, Ok(view::Kind::Other)) {
                let what = inner.map_or("a malformed", |k| k.name());
                bail!(
                    "frame #{}: {what} frame inside {} (mirrored traffic): protect does not rewrite tunnelled frames",
                    p.number,
                    tunnel.name()
                );
            }
        }
        let t = now();
        use crate::protect_fragments::Action;
        match plan.action(p.number) {
            None => {}
            Some(Action::Copy) => {
                n.copied += 1;
                out.write(p.timestamp_ns, written_orig_len(&p), p.data)?;
                continue;
            }
            Some(Action::LeaveOut) => {
                n.left_out.push(p.number);
                continue;
            }
            Some(Action::Reassemble {
                last,
                max_ip_len,
                id,
            }) => {
                let o = reassembler.push(
                    p.number,
                    p.timestamp_ns,
                    p.data,
                    &mut datagram,
                    &mut findings,
                );
                findings.clear();
                if p.number != last {
                    continue;
                }
                let gander_capture::reassembly::Outcome::Complete { first_frame, .. } = o else {
                    bail!("frame #{}: the datagram reassembled in the first pass did not complete again", p.number);
                };
                let what = || {
                    format!(
                        "frame #{} (a datagram reassembled from frame #{first_frame} on)",
                        p.number
                    )
                };
                let Some(data) = gander_sec::frame::protect_frame_fragmented(
                    a.profile.into(),
                    key,
                    &datagram,
                    &mut ivs,
                    t,
                )
                .with_context(what)?
                else {
                    bail!("{}: not IEC 61850 traffic on the second reading", what());
                };
                let parts =
                    gander_wire::ip_fragment::fragment(&data, max_ip_len, id).with_context(what)?;
                for f in &parts {
                    out.write(p.timestamp_ns, f.len() as u32, f)?;
                }
                n.secured += 1;
                n.reassembled += 1;
                continue;
            }
        }
        match protect_frame(a.profile.into(), key, p.data, &mut ivs, t) {
            Ok(Some(data)) => {
                n.secured += 1;
                out.write(p.timestamp_ns, data.len() as u32, &data)?;
            }
            Ok(None) => {
                n.copied += 1;
                out.write(p.timestamp_ns, written_orig_len(&p), p.data)?;
            }
            Err(e) => bail!("frame #{}: {e}", p.number),
        }
    }
    Ok(())
}

/// The original length of a frame as protect writes it, as Ethernet: its octets plus the
/// octets the capture cut, if any. The input record's own `orig_len` counts its link header
/// and FCS: an SLL record's is two octets more than the Ethernet frame written for it
/// (16-octet cooked header, 14-octet Ethernet header), and a frame whose FCS was recorded four
/// more than a frame written without it.
fn written_orig_len(p: &gander_capture::Packet<'_>) -> u32 {
    let missing = p.orig_len.saturating_sub(p.captured_len);
    u32::try_from(p.data.len())
        .unwrap_or(u32::MAX)
        .saturating_add(missing)
}

fn sv_json(apdu: &[u8]) -> Value {
    match SavPdu::parse(apdu) {
        Ok(p) => json!({
            "noASDU": p.asdus.len(),
            "asdus": p.asdus.iter().map(|a| json!({
                "svID": a.sv_id,
                "datSet": a.dat_set,
                "smpCnt": a.smp_cnt,
                "confRev": a.conf_rev,
                "refrTm": a.refr_tm.map(hex::encode),
                "smpSynch": a.smp_synch,
                "smpRate": a.smp_rate,
                "smpMod": a.smp_mod,
                "sample": hex::encode(&a.sample),
            })).collect::<Vec<_>>(),
        }),
        Err(e) => json!({ "error": e.to_string(), "bytes": apdu.len() }),
    }
}

/// A frame `classify` refused. A layer-2 GOOSE or SV frame whose APDU is whole still shows it,
/// as tshark does, so the reader sees which publisher and state the damaged frame carried:
/// kelecho/IEC-61850-Studio's fixtures/pcap/goose.pcap has a "secured" frame whose 32 octets
/// after the APDU are announced in Reserved2, not Reserved1 (malformed by IEC 62351-6), and it
/// showed only the error.
fn malformed_json(data: &[u8], e: &gander_sec::SecError) -> Value {
    let mut o = json!({ "kind": "malformed", "error": e.to_string(), "len": data.len() });
    let Some(c) = view::cut_l2(data) else {
        return o;
    };
    o["appid"] = json!(c.appid);
    let whole = gander_wire::cut_apdu::announced_len(c.apdu).filter(|&n| n <= c.apdu.len());
    if let Some(n) = whole {
        let (key, apdu) = if c.kind == view::Kind::Sv {
            ("sv", sv_json(&c.apdu[..n]))
        } else {
            ("goose", goose_json(&c.apdu[..n]))
        };
        o[key] = apdu;
        o["after_apdu"] = json!(c.apdu.len() - n);
    }
    o
}

fn show_frame(data: &[u8], profile: Profile) -> Value {
    let v = match view::classify(profile, data) {
        Ok(v) => v,
        Err(e) => return malformed_json(data, &e),
    };
    let tags: Vec<Value> = (0..v.tags)
        .filter_map(|i| v.tag(i))
        .map(|t| json!({"tpid": format!("0x{:04x}", t.tpid), "vid": t.tag.vid, "pcp": t.tag.pcp}))
        .collect();
    let mut o = show_content(data, profile, &v);
    if !tags.is_empty() {
        o["tags"] = json!(tags);
    }
    o
}

fn show_content(data: &[u8], profile: Profile, v: &view::FrameView<'_>) -> Value {
    match &v.content {
        Content::Other => json!({ "kind": "other", "len": data.len() }),
        Content::L2(l) if !matches!(v.kind(), view::Kind::Goose | view::Kind::Sv) => json!({
            "kind": v.kind().name(),
            "appid": l.appid,
            "length": l.length(),
            "secured": l.secured(),
        }),
        Content::L2(_) => match L2Frame::parse(data) {
            Ok((l2, _)) => {
                let sv = v.kind() == view::Kind::Sv;
                let mut o = json!({
                "kind": v.kind().name(),
                "dst": hex::encode(l2.eth.dst),
                "src": hex::encode(l2.eth.src),
                "vlan": l2.eth.vlan.map(|v| v.tci()),
                "appid": l2.body.appid,
                "simulation": l2.body.simulation(),
                "reserved1": l2.body.reserved1,
                "reserved2": l2.body.reserved2,
                "extension": l2.body.extension.as_deref().map(|e| {
                    match gander_wire::l2_extension::SecurityExtension::parse(e) {
                        Ok(x) => json!({"key_id": x.key_id, "version": x.version, "time_of_current_key": x.time_of_current_key,
                            "time_to_next_key": x.time_to_next_key, "iv": x.iv.map(hex::encode), "mac": hex::encode(x.mac)}),
                        Err(err) => json!({"error": err.to_string()}),
                    }
                }),
                });
                if sv {
                    o["sv"] = sv_json(&l2.body.apdu);
                } else {
                    o["goose"] = goose_json(&l2.body.apdu);
                }
                o
            }
            Err(e) => json!({ "kind": v.kind().name(), "error": e.to_string() }),
        },
        Content::Session(s) => {
            let bytes = &data[s.udp.payload.clone()];
            let d = profile.dialect();
            match SessionPdu::parse(bytes, &d) {
                Ok(p) => {
                    let h = &p.header;
                    let mut o = json!({
                        "kind": "session",
                        "src": std::net::SocketAddr::new(s.udp.ip.src(), s.udp.src_port).to_string(),
                        "spdu_id": format!("0x{:02x}", h.spdu_id.to_u8()),
                        "version": h.security.version(),
                        "spdu_number": h.spdu_number,
                        "spdu_length": p.spdu_length_field,
                        "time_of_current_key": h.time_of_current_key,
                        "time_to_next_key": h.time_to_next_key,
                        "key_id": h.security.key_id(),
                        "iv": hex::encode(h.security.iv()),
                        "payload_length": p.payload_length_field,
                        "trailer": hex::encode(p.trailer()),
                    });
                    if let gander_wire::spdu::SecurityInfo::V1 {
                        enc_code, mac_code, ..
                    } = h.security
                    {
                        o["enc_code"] = json!(enc_code);
                        o["mac_code"] = json!(mac_code);
                    }
                    match parse_elements(p.payload(), &d) {
                        Ok(els) => {
                            o["elements"] = els
                                .iter()
                                .map(|e| {
                                    json!({"type": format!("0x{:02x}", e.payload_type), "simulation": e.simulation,
                                           "appid": e.appid, "apdu_len": e.apdu.len(),
                                           "goose": if e.apdu.first() == Some(&0x61) { goose_json(e.apdu) } else { Value::Null },
                                           "sv": if e.apdu.first() == Some(&0x60) { sv_json(e.apdu) } else { Value::Null }})
                                })
                                .collect();
                        }
                        Err(e) => {
                            o["elements"] = json!(format!("not readable without the key ({e})"))
                        }
                    }
                    o
                }
                Err(e) => json!({ "kind": "session", "error": e.to_string() }),
            }
        }
    }
}

fn show(a: ShowArgs) -> Result<ExitCode> {
    let mut capture = open(&a.file)?;
    let ctx = || format!("{}", a.file.display());
    while let Some(f) = capture.next_frame().with_context(ctx)? {
        print_findings(f.findings, a.json);
        let mut v = if f.cut_by_capture() && f.ethernet {
            cut_json(&f)
        } else if matches!(f.reassembly, Reassembly::Held | Reassembly::Dropped) || !f.ethernet {
            fragment_or_link_json(&f)
        } else {
            let mut v = show_frame(f.data, a.profile.into());
            add_reassembly(&mut v, &f);
            if let Some(t) = f.tunnel {
                v["tunnel"] = json!(t.name());
            }
            if !f.dst_known {
                v["dst_captured"] = json!(false);
            }
            v
        };
        v["index"] = json!(f.number - 1);
        v["frame"] = json!(f.number);
        v["time"] = json!(f.timestamp_ns as f64 / 1e9);
        if a.json {
            crate::out(&v);
        } else {
            crate::out(format!(
                "#{} {}",
                f.number,
                serde_json::to_string_pretty(&v)?
            ));
        }
    }
    finish_capture(&mut capture, &a.file, a.json);
    Ok(ExitCode::SUCCESS)
}
