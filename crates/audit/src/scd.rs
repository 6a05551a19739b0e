//! The audit against the substation's configuration: what the SCD (IEC 61850-6 §9, the
//! System Configuration Description) says each publisher sends, set against what the capture
//! shows (`gander audit --scd FILE`).
//!
//! From the SCD: every `GSEControl` (IEC 61850-6 §9.3.9) and `SampledValueControl` (§9.3.10)
//! of every IED's `LLN0`, with the `GSE`/`SMV` address of its `ConnectedAP` (§9.2.3:
//! `MAC-Address`, `APPID`, `VLAN-ID`, `VLAN-PRIORITY`), its data set, `confRev`, GoID
//! (`appID`) or `smvID`, `smpRate` and `securityEnable`; and every `ConnectedAP` whose address
//! gives the MMS port 3782, the port IEC 62351-3 assigns to MMS over TLS (ISO-TSAP over TLS),
//! as an access point that serves MMS only over TLS. `gander-scl` reads all of it.
//!
//! A stream is the publisher's control block when its reference matches: the gocbRef
//! `LD/LLN0$GO$name` (IEC 61850-8-1 §18.1.2.2: the LD name is `ldName` or IED name + `inst`)
//! for GOOSE and R-GOOSE, the `svID` (= `smvID`, IEC 61850-9-2 §8.5) for SV and R-SV. A
//! stream whose reference is hidden (encrypted R-GOOSE/R-SV) is matched on its layer-2
//! destination and APPID when one declared block has both. Then:
//!
//! * `scd-unknown-publisher` (medium): a stream no declared control block accounts for;
//! * `scd-mismatch-<field>` (medium; `scd-mismatch-security` high): a declared field the
//!   stream contradicts, the detail naming the field, the SCD's value and the seen value;
//! * `scd-second-source` (medium): a control block's stream from a second source address
//!   (one control block has one publisher);
//! * `scd-vlan-untagged` (info): the SCD gives a VLAN, the capture shows the frames untagged
//!   (a switch may strip the tag at the egress port where the capture was taken);
//! * `scd-absent` (low): a declared control block whose stream the capture does not hold;
//! * `scd-mms-plain` (high): plain MMS to an access point the SCD declares on port 3782;
//! * `scd-ied-unread` (info): an IED of the SCD that gander-scl refused (its blocks are not
//!   known); `scd-publisher-unread` (info): a stream whose gocbRef begins with such an IED's
//!   name, not checked (rather than called unknown).
//!
//! Frame numbers: a stream's fields are read from its first frames, so a mismatch names the
//! stream's first frame (its `confRev` the last: a change within the stream is the audit's
//! own `confrev-changed`), and counts every frame of the stream.

use crate::assoc::AssociationReport;
use crate::finding::{Finding, Severity};
use crate::stream::{mac, StreamReport};
use crate::Audit;
use gander_scl::{CommAddress, IpAccessPoint, RoutableAddress, Scl, SclError, SecurityEnable};
use serde::Serialize;
use std::net::IpAddr;

/// The TCP port IEC 62351-3 assigns to ISO-TSAP (MMS) over TLS.
pub const MMS_TLS_PORT: u16 = 3782;

/// Which control block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BlockKind {
    /// A `GSEControl` (GOOSE; R-GOOSE carries the same APDU).
    Goose,
    /// A `SampledValueControl` (SV; R-SV).
    Sv,
}

/// One publisher control block as the SCD declares it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Declared {
    /// GOOSE or SV.
    pub kind: BlockKind,
    /// IED name.
    pub ied: String,
    /// The control block's object reference (`LD/LLN0$GO$name`, `LD/LLN0$MS$name`).
    pub block: String,
    /// What a frame carries to name it: gocbRef for GOOSE, smvID for SV.
    pub reference: String,
    /// The data set reference as frames carry it (`LD/LLN0$name`).
    pub data_set: Option<String>,
    /// `confRev`.
    pub conf_rev: u32,
    /// GOOSE: the `appID` attribute, sent as goID.
    pub go_id: Option<String>,
    /// SV: `smpRate`.
    pub smp_rate: Option<u32>,
    /// The `GSE`/`SMV` address of the Communication section.
    pub address: Option<CommAddress>,
    /// `securityEnable`.
    pub security: SecurityEnable,
    /// `ldInst` of the logical device holding the block.
    pub ld_inst: String,
    /// The block's `name` (`cbName` in the Communication section).
    pub cb_name: String,
    /// The routable (R-GOOSE/R-SV) address of its `GSE`/`SMV`, if the SCD gives one
    /// ([`crate::scd_routable`]).
    pub routable: Option<RoutableAddress>,
}

/// An access point the SCD declares on the MMS-over-TLS port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TlsOnly {
    /// IED name.
    pub ied: String,
    /// Access point name.
    pub access_point: String,
    /// Its IP address.
    pub address: IpAddr,
}

/// What the audit reads of an SCD.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Scd {
    /// Every GOOSE and SV control block, in file order.
    pub publishers: Vec<Declared>,
    /// Access points serving MMS over TLS only.
    pub tls_only: Vec<TlsOnly>,
    /// IEDs gander-scl refused, with why.
    pub unread: Vec<(String, String)>,
}

impl Scd {
    /// Reads an SCD's text. A file that is not SCL at all is an error; an IED whose model is
    /// broken is listed in [`Scd::unread`] and the rest is used.
    pub fn from_text(text: &str) -> Result<Scd, SclError> {
        let scl = gander_scl::parse(text)?;
        let aps = gander_scl::ip_access_points(text)?;
        let mut scd = Scd::from_parts(&scl, &aps);
        crate::scd_routable::attach(&mut scd, &gander_scl::routable_addresses(text)?);
        Ok(scd)
    }

    /// From an SCL file already read and its IP access points.
    pub fn from_parts(scl: &Scl, aps: &[IpAccessPoint]) -> Scd {
        let mut publishers = Vec::new();
        for ied in &scl.ieds {
            for ld in &ied.logical_devices {
                for ln in ld.logical_nodes.iter().filter(|l| l.ln_class == "LLN0") {
                    let ds =
                        |n: &Option<String>| n.as_ref().map(|n| format!("{}/LLN0${n}", ld.domain));
                    for g in &ln.gse_controls {
                        let reference = format!("{}/LLN0$GO${}", ld.domain, g.name);
                        publishers.push(Declared {
                            kind: BlockKind::Goose,
                            ied: ied.name.clone(),
                            block: reference.clone(),
                            reference,
                            data_set: ds(&g.data_set),
                            conf_rev: g.conf_rev,
                            go_id: Some(g.app_id.clone()),
                            smp_rate: None,
                            address: g.address,
                            security: g.security_enable,
                            ld_inst: ld.inst.clone(),
                            cb_name: g.name.clone(),
                            routable: None,
                        });
                    }
                    for s in &ln.sv_controls {
                        let fc = if s.multicast { "MS" } else { "US" };
                        publishers.push(Declared {
                            kind: BlockKind::Sv,
                            ied: ied.name.clone(),
                            block: format!("{}/LLN0${fc}${}", ld.domain, s.name),
                            reference: s.smv_id.clone(),
                            data_set: ds(&s.data_set),
                            conf_rev: s.conf_rev,
                            go_id: None,
                            smp_rate: Some(s.smp_rate),
                            address: s.address,
                            security: s.security_enable,
                            ld_inst: ld.inst.clone(),
                            cb_name: s.name.clone(),
                            routable: None,
                        });
                    }
                }
            }
        }
        let tls_only = aps
            .iter()
            .filter(|a| a.port == Some(MMS_TLS_PORT))
            .map(|a| TlsOnly {
                ied: a.ied.clone(),
                access_point: a.access_point.clone(),
                address: a.address,
            })
            .collect();
        let unread = scl
            .refused
            .iter()
            .map(|r| (r.name.clone(), r.error.to_string()))
            .collect();
        Scd {
            publishers,
            tls_only,
            unread,
        }
    }
}

fn kind_of(stream_kind: &str) -> Option<BlockKind> {
    match stream_kind {
        "goose" | "r-goose" => Some(BlockKind::Goose),
        "sv" | "r-sv" => Some(BlockKind::Sv),
        _ => None,
    }
}

/// The declared block stream `s` is, if any.
fn matching(scd: &Scd, s: &StreamReport, kind: BlockKind) -> Option<usize> {
    if let Some(id) = &s.id {
        return scd
            .publishers
            .iter()
            .position(|d| d.kind == kind && &d.reference == id);
    }
    if matches!(s.kind, "r-goose" | "r-sv") {
        return crate::scd_routable::matching_hidden(scd, s, kind);
    }
    // Reference hidden (encrypted): the one declared block of this destination and APPID.
    let appid = s.appid?;
    let mut hits = scd.publishers.iter().enumerate().filter(|(_, d)| {
        d.kind == kind
            && d.address.is_some_and(|a| {
                a.app_id == Some(appid) && a.mac.is_some_and(|m| mac(&m) == s.dst_mac)
            })
    });
    match (hits.next(), hits.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

/// A finding on stream `s` shown by its frame `frame`, counting every frame of the stream.
fn on_stream(code: String, sev: Severity, s: &StreamReport, frame: u64, detail: String) -> Finding {
    Finding {
        code,
        severity: sev,
        stream: Some(s.uid.clone()),
        detail,
        first_ts_ns: s.first_ts_ns,
        frames: vec![frame],
        count: s.frames,
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "(none)".into(), |v| v.to_string())
}

/// The mismatches of stream `s` against its declared block `d`.
fn compare(d: &Declared, s: &StreamReport, out: &mut Vec<Finding>) {
    let first = s.first_frame;
    let mut untagged = None;
    let mut mismatch = |field: &str, scd: String, seen: String, frame: u64| {
        let sev = if field == "security" {
            Severity::High
        } else {
            Severity::Medium
        };
        out.push(on_stream(
            format!("scd-mismatch-{field}"),
            sev,
            s,
            frame,
            format!("{}: {field} in the SCD {scd}, seen {seen}", d.block),
        ));
    };
    let layer2 = matches!(s.kind, "goose" | "sv");
    if let Some(a) = d.address.filter(|_| layer2) {
        if let (Some(want), Some(seen)) = (a.app_id, s.appid) {
            if want != seen {
                mismatch(
                    "appid",
                    format!("0x{want:04X}"),
                    format!("0x{seen:04X}"),
                    first,
                );
            }
        }
        if let Some(m) = a.mac {
            let want = mac(&m);
            if want != s.dst_mac {
                mismatch("mac", want, s.dst_mac.clone(), first);
            }
        }
        // VLAN-ID 0 (or none) is a priority-tagged frame, no VLAN (IEEE 802.1Q §9.6).
        let want_vid = a.vlan_id.filter(|v| *v != 0);
        let seen_vid = s.vlan.filter(|v| *v != 0);
        match (want_vid, s.vlan, seen_vid) {
            (Some(w), None, _) => untagged = Some(on_stream(
                "scd-vlan-untagged".into(),
                Severity::Info,
                s,
                first,
                format!(
                    "{}: the SCD gives VLAN {w} (0x{w:03X}), the frames were captured untagged (a switch may strip the tag at the port the capture was taken on)",
                    d.block
                ),
            )),
            (w, Some(_), sv) if w != sv => {
                mismatch("vlan", opt(w), opt(sv), first);
            }
            _ => {}
        }
        if let (Some(want), Some(seen)) = (a.vlan_priority, s.priority) {
            if want != seen {
                mismatch("priority", want.to_string(), seen.to_string(), first);
            }
        }
    }
    for m in crate::scd_routable::mismatches(d, s) {
        mismatch(m.field, m.scd, m.seen, first);
    }
    if let (Some(want), Some(seen)) = (&d.data_set, &s.dat_set) {
        if want != seen {
            mismatch("dat-set", format!("{want:?}"), format!("{seen:?}"), first);
        }
    }
    if let Some(seen) = s.conf_rev {
        if seen != d.conf_rev {
            mismatch(
                "conf-rev",
                d.conf_rev.to_string(),
                seen.to_string(),
                s.last_frame,
            );
        }
    }
    if let (Some(want), Some(seen)) = (&d.go_id, &s.go_id) {
        if want != seen {
            mismatch("go-id", format!("{want:?}"), format!("{seen:?}"), first);
        }
    }
    if let (Some(want), Some(seen)) = (d.smp_rate, s.smp_rate) {
        if want != u32::from(seen) {
            mismatch("smp-rate", want.to_string(), seen.to_string(), first);
        }
    }
    if d.security != SecurityEnable::None && s.unsecured > 0 {
        mismatch(
            "security",
            format!("{:?}", d.security),
            format!("{} of {} frames unsecured", s.unsecured, s.frames),
            first,
        );
    }
    out.extend(untagged);
}

/// The source of a stream as an address string.
fn source(s: &StreamReport) -> String {
    match (&s.src_ip, s.src_port) {
        (Some(ip), Some(p)) => format!("{ip}:{p}"),
        _ => s.src_mac.clone(),
    }
}

/// Plain MMS to an access point declared on the TLS port.
fn mms_plain(scd: &Scd, a: &AssociationReport, out: &mut Vec<Finding>) {
    if a.transport != "plain" {
        return;
    }
    let Ok(server) = a.server.parse::<std::net::SocketAddr>() else {
        return;
    };
    if let Some(t) = scd.tls_only.iter().find(|t| t.address == server.ip()) {
        out.push(Finding {
            code: "scd-mms-plain".into(),
            severity: Severity::High,
            stream: Some(a.uid.clone()),
            detail: format!(
                "plain MMS to {server}, which the SCD declares as {}/{} on port {MMS_TLS_PORT} (IEC 62351-3 MMS over TLS)",
                t.ied, t.access_point
            ),
            first_ts_ns: a.first_ts_ns,
            frames: vec![a.first_frame],
            count: a.frames,
        });
    }
}

/// The findings of `audit` against `scd`, added to its findings (worst first, then by first
/// occurrence, as [`crate::Auditor::finish`] orders them).
pub fn judge(audit: &mut Audit, scd: &Scd) {
    let mut out = Vec::new();
    let t0 = audit.summary.first_ts_ns;
    for (name, why) in &scd.unread {
        out.push(Finding {
            code: "scd-ied-unread".into(),
            severity: Severity::Info,
            stream: None,
            detail: format!(
                "IED {name:?} of the SCD was not read ({why}): its control blocks are not known"
            ),
            first_ts_ns: t0,
            frames: Vec::new(),
            count: 0,
        });
    }
    // The first stream matched to each declared block (its source).
    let mut seen: Vec<Option<String>> = vec![None; scd.publishers.len()];
    for s in &audit.streams {
        let Some(kind) = kind_of(s.kind) else {
            continue;
        };
        let Some(i) = matching(scd, s, kind) else {
            // A gocbRef under an IED the SCD has but gander-scl refused: not known to be
            // foreign (IEC 61850-8-1: the LD name begins with the IED name by default).
            let unread = s.id.as_deref().and_then(|id| {
                scd.unread
                    .iter()
                    .find(|(n, _)| !n.is_empty() && id.starts_with(n.as_str()))
            });
            if let (Some((ied, _)), Some(id)) = (unread, &s.id) {
                out.push(on_stream(
                    "scd-publisher-unread".into(),
                    Severity::Info,
                    s,
                    s.first_frame,
                    format!("{} {id:?} from {}: a control block of IED {ied:?}, which the SCD holds but could not be read, so it is not checked", s.kind, source(s)),
                ));
                continue;
            }
            let what = s.id.as_deref().map_or_else(
                || {
                    format!(
                        "APPID {} to {}",
                        opt(s.appid.map(|a| format!("0x{a:04X}"))),
                        s.dst_mac
                    )
                },
                |id| format!("{id:?}"),
            );
            out.push(on_stream(
                "scd-unknown-publisher".into(),
                Severity::Medium,
                s,
                s.first_frame,
                format!(
                    "{} {what} from {}: no control block of the SCD",
                    s.kind,
                    source(s)
                ),
            ));
            continue;
        };
        let d = &scd.publishers[i];
        match &seen[i] {
            Some(src) if *src != source(s) => out.push(on_stream(
                "scd-second-source".into(),
                Severity::Medium,
                s,
                s.first_frame,
                format!(
                    "{} from {} as well as from {src}: one control block has one publisher",
                    d.block,
                    source(s)
                ),
            )),
            Some(_) => {}
            None => seen[i] = Some(source(s)),
        }
        compare(d, s, &mut out);
    }
    for (d, _) in scd
        .publishers
        .iter()
        .zip(&seen)
        .filter(|(_, s)| s.is_none())
    {
        out.push(Finding {
            code: "scd-absent".into(),
            severity: Severity::Low,
            stream: None,
            detail: format!(
                "{} ({} of IED {}, {:?}) is declared in the SCD; the capture holds no frame of it",
                d.block,
                match d.kind {
                    BlockKind::Goose => "GOOSE",
                    BlockKind::Sv => "SV",
                },
                d.ied,
                d.reference
            ),
            first_ts_ns: t0,
            frames: Vec::new(),
            count: 0,
        });
    }
    for a in &audit.associations {
        mms_plain(scd, a, &mut out);
    }
    audit.findings.extend(out);
    audit.findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then(a.first_ts_ns.cmp(&b.first_ts_ns))
    });
}
