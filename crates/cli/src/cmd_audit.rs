//! `gander audit CAPTURE... [--keys FILE] [--scd FILE] [--ike-keylog FILE] [--out DIR]`: the IEC 62351 security posture of the
//! IEC 61850 traffic in captures (`docs/audit.md`). The judging is `gander-audit`'s; this reads
//! the files, feeds the frames, writes the report and the logs, and exits with the code of the
//! worst finding.

use anyhow::{Context, Result};
use clap::Args;
use gander_audit::finding::Severity;
use gander_audit::{html, zeek, AuditOptions, Auditor};
use gander_sec::{default_provider, KeyStore};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::frame::ProfileArg;

#[derive(Args)]
pub(crate) struct AuditArgs {
    /// Capture files (pcap or pcapng, any link type real captures use), read in order; frame
    /// numbers run on across files (with one file they are Wireshark's).
    #[arg(required_unless_present = "interface", conflicts_with = "interface")]
    pub captures: Vec<PathBuf>,
    #[command(flatten)]
    pub live: crate::cmd_audit_live::LiveArgs,
    /// Key file (TOML, docs/keys.md): every secured frame is verified and its freshness judged.
    #[arg(long)]
    pub keys: Option<PathBuf>,
    /// The substation's SCD (IEC 61850-6): publishers, addresses, data sets and confRev are
    /// checked against its GSE/SMV control blocks and Communication section.
    #[arg(long)]
    pub scd: Option<PathBuf>,
    /// IKEv1 key log (`gander kdc --keylog`, `gander gdoi register --keylog`: Wireshark's
    /// ikev1_decryption_table lines): GDOI registrations and rekeys under those phase-1 SAs are
    /// decrypted, and gdoi.log gets the group, SEQ and TEK key ids and algorithms (never keys).
    /// Lab captures only.
    #[arg(long, value_name = "FILE")]
    pub ike_keylog: Option<PathBuf>,
    /// Directory for report.html, audit.json and the Zeek-convention logs.
    #[arg(long, default_value = "audit")]
    pub out: PathBuf,
    /// Framing profile of the senders' session headers.
    #[arg(long, value_enum, default_value = "standard")]
    pub profile: ProfileArg,
    /// smpCnt wrap for SV freshness of streams that do not state it (as `frame verify`).
    #[arg(long, default_value_t = gander_sec::replay::DEFAULT_SV_WRAP)]
    pub sv_wrap: u16,
}

use gander_audit_live::input::report_findings;

/// Feeds every frame of `path` to the auditor through gander-capture's streaming reader (every
/// link type presented as Ethernet, IP fragments reassembled, a capture cut short read up to
/// its last complete packet); `offset` continues the frame numbers of the files before.
/// Returns the number of frames read.
fn feed_file(path: &Path, offset: u64, auditor: &mut Auditor<'_>) -> Result<u64> {
    let mut cap = gander_capture::Capture::open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let mut last = (0u64, 0u64);
    loop {
        let f = match cap.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break,
            // Broken after whole packets (a damaged file, a crashed writer): what came before is
            // judged, and the audit says where reading stopped and that nothing after it was
            // read. Not a capture at all (offset 0) or an I/O error stays an error.
            Err(e @ gander_capture::CaptureError::Corrupt { .. }) if !e.not_a_capture() => {
                let detail = format!(
                    "{}: {e}; reading stopped there, and nothing after it was judged",
                    path.display()
                );
                eprintln!("gander: warning: {detail}");
                auditor.input_finding("capture-corrupt", Severity::Medium, last.0, last.1, || {
                    detail
                });
                break;
            }
            Err(e) => return Err(anyhow::Error::new(e).context(path.display().to_string())),
        };
        let no = offset + f.number;
        last = (no, f.timestamp_ns);
        report_findings(auditor, f.findings, offset, f.timestamp_ns);
        if f.tunnel.is_none() && f.ethernet && gander_capture::tunnel::is_gre(f.data) {
            // GRE that gander-capture does not open (another protocol than Ethernet or
            // ERSPAN, a header it does not read): whatever is inside was not judged.
            auditor.input_finding("tunnel-unread", Severity::Low, no, f.timestamp_ns, || {
                "GRE packets whose contents were not read (a GRE protocol other than transparent Ethernet bridging or ERSPAN I/II/III, or a GRE header with routing or another version): mirrored traffic inside them was not judged".into()
            });
        }
        match f.reassembly {
            _ if f.cut_by_capture() && f.ethernet => {
                // What a cut frame carries is judged inside a tunnel when it was captured.
                let inner =
                    gander_capture::tunnel::decapsulate(f.data).map_or(f.data, |(_, r)| &f.data[r]);
                auditor.cut_by_capture(no, f.timestamp_ns, inner, f.captured_len, f.orig_len)
            }
            gander_capture::Reassembly::Held => auditor.held(f.timestamp_ns),
            _ => {
                let rec = gander_audit::Recorded {
                    interface: f.interface,
                    packet_type: f.packet_type,
                };
                auditor.feed_recorded(no, f.timestamp_ns, f.data, rec)
            }
        }
    }
    report_findings(auditor, &cap.finish(), offset, last.1);
    for w in cap.warnings() {
        let detail = format!("{}: {w}", path.display());
        eprintln!("gander: warning: {detail}");
        auditor.input_finding("capture-cut-short", Severity::Info, last.0, last.1, || {
            detail
        });
    }
    Ok(cap.frames())
}

/// Reads `--scd`: a file that is not SCL stops the command; an IED gander-scl refuses is
/// reported (`scd-ied-unread`) and the rest used.
fn load_scd(p: &Path) -> Result<gander_audit::scd::Scd> {
    let text = gander_scl::read(p)?;
    let scd = gander_audit::scd::Scd::from_text(&text)
        .with_context(|| format!("cannot read the SCD {}", p.display()))?;
    for (ied, why) in &scd.unread {
        eprintln!("warning: {}: IED {ied} not read: {why}", p.display());
    }
    Ok(scd)
}

pub(crate) fn run(a: AuditArgs) -> Result<ExitCode> {
    a.live.check_without_interface()?;
    if a.sv_wrap == 0 {
        anyhow::bail!(
            "--sv-wrap must be the samples per second at which smpCnt wraps (e.g. 4000, 4800)"
        );
    }
    let store = match &a.keys {
        Some(k) => Some(KeyStore::load(k, default_provider())?),
        None => None,
    };
    let opts = AuditOptions {
        profile: a.profile.into(),
        sv_wrap: a.sv_wrap,
    };
    let scd = match &a.scd {
        Some(p) => Some(load_scd(p)?),
        None => None,
    };
    let mut auditor = Auditor::new(opts, store.as_ref());
    if let Some(p) = &a.ike_keylog {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?;
        let log = gander_audit::ike_keylog::IkeKeyLog::parse(&text)
            .with_context(|| p.display().to_string())?;
        eprintln!(
            "gander audit: {} phase-1 SA key(s) from {}: GDOI messages under them are decrypted (lab use only)",
            log.len(),
            p.display()
        );
        auditor.set_ike_keylog(log);
    }
    let mut offset = 0u64;
    if let Some(iface) = &a.live.interface {
        // The report directory is made before the capture, not after hours of it.
        std::fs::create_dir_all(&a.out)
            .with_context(|| format!("cannot create {}", a.out.display()))?;
        crate::cmd_audit_live::feed(&a.live, iface, &mut auditor, store.as_ref())?;
    }
    for path in &a.captures {
        offset += feed_file(path, offset, &mut auditor)?;
    }
    let mut audit = auditor.finish();
    if let Some(scd) = &scd {
        gander_audit::scd::judge(&mut audit, scd);
    }
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    let write = |name: &str, text: &str| -> Result<()> {
        let p = a.out.join(name);
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))
    };
    let title: Vec<String> = a
        .live
        .interface
        .iter()
        .map(|i| format!("live on {i}"))
        .chain(a.captures.iter().map(|p| {
            p.file_name()
                .unwrap_or(p.as_os_str())
                .to_string_lossy()
                .into_owned()
        }))
        .collect();
    write("report.html", &html::render(&audit, &title.join(", ")))?;
    write("audit.json", &serde_json::to_string_pretty(&audit)?)?;
    for (log, lines) in zeek::logs(&audit) {
        let mut text = lines.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        write(&format!("{log}.log"), &text)?;
    }
    for s in &audit.streams {
        crate::out(format!(
            "{:<18} {:<8} {:<17} appid={} {:<40} frames={} {}{}",
            s.uid,
            s.kind,
            s.src_ip.clone().unwrap_or_else(|| s.src_mac.clone()),
            s.appid
                .map(|x| format!("0x{x:04x}"))
                .unwrap_or_else(|| "?".into()),
            s.id.clone().unwrap_or_default(),
            s.frames,
            s.security,
            if s.key_ids.is_empty() {
                String::new()
            } else {
                format!(" keys={:?}", s.key_ids)
            }
        ));
    }
    for f in &audit.findings {
        crate::out(format!(
            "{:<6} {:<22} {:<18} x{:<6} frames {:?}: {}",
            f.severity.word(),
            f.code,
            f.stream.clone().unwrap_or_default(),
            f.count,
            f.frames,
            f.detail
        ));
    }
    eprintln!(
        "{} frames, {} streams, {} findings (worst {}); report in {}",
        audit.summary.frames,
        audit.streams.len(),
        audit.findings.len(),
        audit.worst().map(|w| w.word()).unwrap_or("none"),
        a.out.display()
    );
    Ok(ExitCode::from(audit.exit_code()))
}
