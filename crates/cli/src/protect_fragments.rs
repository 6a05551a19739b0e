//! `gander frame protect` of a capture with IP fragments: an R-GOOSE or R-SV datagram longer
//! than the MTU (robidev/iec61850-dissector's iec90-5-samples.pcap: R-SV SPDUs of 2,258
//! octets in a 1,500- and an 806-octet fragment) cannot be protected fragment by fragment (the
//! MAC covers the whole SPDU), and copying its fragments unprotected would leave cleartext
//! publisher traffic in a capture that claims to be protected.
//!
//! So the capture is read twice. The first pass ([`plan`]) runs `gander-capture`'s reassembler
//! over every frame and decides, for each datagram sent in fragments, what becomes of it:
//! - reassembled and IEC 61850 (R-GOOSE, R-SV): protected whole when its last fragment comes,
//!   and written again in fragments no longer than the longest the publisher sent
//!   (`gander_wire::ip_fragment`), at that frame's time;
//! - reassembled and other traffic: its fragments are copied unchanged, in place;
//! - never reassembled (a fragment lost, or the capture began or ended inside the datagram):
//!   copied unchanged when its first fragment shows other traffic (UDP ports, the SPDU's first
//!   octets); otherwise left out, counted and named, since it may be publisher traffic that
//!   cannot be protected.
//!
//! The second pass is `frame::protect_into`, asking [`Plan::action`] for each fragment.

use anyhow::{Context, Result};
use gander_capture::reassembly::{fragment_of, DatagramId, Outcome};
use gander_capture::{CaptureReader, Limits, Reassembler};
use gander_sec::view::{self, CutFrame, Kind};
use gander_sec::Profile;
use std::collections::HashMap;
use std::path::Path;

/// What becomes of one datagram sent in fragments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Not yet complete (during the first pass), or never completed.
    Incomplete,
    /// Reassembled at frame `last`; `iec` when the datagram is IEC 61850 traffic (or does not
    /// classify: protect then says why).
    Complete { last: u64, iec: bool },
}

/// One datagram sent in fragments.
#[derive(Debug, Clone)]
struct Datagram {
    id: DatagramId,
    fate: Fate,
    /// Whether its first fragment shows IEC 61850 traffic (`None`: no first fragment seen, or
    /// cut before the octets that tell).
    first_says_iec: Option<bool>,
    /// The longest fragment's IP packet length: what the path carried.
    max_ip_len: usize,
}

/// What the second pass does with a fragment frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Copy it unchanged (a datagram of other traffic).
    Copy,
    /// Feed it to the reassembler; at frame `last` the datagram is complete: protect it and
    /// write it in fragments of at most `max_ip_len` octets, with IPv6 Identification `id`.
    Reassemble {
        /// The frame that completes the datagram.
        last: u64,
        /// The longest fragment's IP packet length.
        max_ip_len: usize,
        /// The datagram's Identification.
        id: u32,
    },
    /// Leave it out: part of a datagram that could not be reassembled and may be IEC 61850.
    LeaveOut,
}

/// The first pass's decisions: the fragment frames and their datagrams.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    frames: HashMap<u64, usize>,
    datagrams: Vec<Datagram>,
}

impl Plan {
    /// What to do with frame `number`, `None` when it is no fragment.
    pub(crate) fn action(&self, number: u64) -> Option<Action> {
        let d = &self.datagrams[*self.frames.get(&number)?];
        Some(match d.fate {
            Fate::Complete { iec: false, .. } => Action::Copy,
            Fate::Complete { last, iec: true } => Action::Reassemble {
                last,
                max_ip_len: d.max_ip_len,
                id: d.id.id,
            },
            Fate::Incomplete if d.first_says_iec == Some(false) => Action::Copy,
            Fate::Incomplete => Action::LeaveOut,
        })
    }
}

/// A reassembler with the limits both passes share (the same frames give the same outcomes).
pub(crate) fn reassembler() -> Reassembler {
    Reassembler::new(Limits::default())
}

/// The first pass over the capture at `path`.
pub(crate) fn plan(path: &Path, profile: Profile) -> Result<Plan> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = CaptureReader::new(file);
    let mut r = reassembler();
    let (mut out, mut findings) = (Vec::new(), Vec::new());
    let mut plan = Plan::default();
    // The datagram each open fragment sequence belongs to.
    let mut open: HashMap<DatagramId, usize> = HashMap::new();
    while let Some(p) = reader
        .next_packet()
        .with_context(|| path.display().to_string())?
    {
        if !p.ethernet || p.cut_by_capture() {
            continue;
        }
        let Some(f) = fragment_of(p.data) else {
            // Not a fragment: still given to the reassembler, whose timeouts run on capture
            // time.
            let _ = r.push(p.number, p.timestamp_ns, p.data, &mut out, &mut findings);
            continue;
        };
        let i = *open.entry(f.datagram).or_insert_with(|| {
            plan.datagrams.push(Datagram {
                id: f.datagram,
                fate: Fate::Incomplete,
                first_says_iec: None,
                max_ip_len: 0,
            });
            plan.datagrams.len() - 1
        });
        plan.frames.insert(p.number, i);
        let d = &mut plan.datagrams[i];
        d.max_ip_len = d.max_ip_len.max(f.ip_len);
        if f.offset == 0 {
            d.first_says_iec = match view::classify_cut(p.data) {
                CutFrame::Iec61850(_) => Some(true),
                CutFrame::Other => Some(false),
                CutFrame::Unknown => None,
            };
        }
        let outcome = r.push(p.number, p.timestamp_ns, p.data, &mut out, &mut findings);
        if let Outcome::Complete { .. } = outcome {
            let iec = !matches!(
                view::classify(profile, &out).map(|v| v.kind()),
                Ok(Kind::Other)
            );
            plan.datagrams[i].fate = Fate::Complete {
                last: p.number,
                iec,
            };
            open.remove(&f.datagram);
        }
        // A datagram given up (timed out, evicted, discarded): its later fragments start anew.
        for g in findings.drain(..) {
            open.remove(&g.datagram);
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules of `action`, datagram by datagram.
    #[test]
    fn what_each_datagram_becomes() {
        let id = DatagramId {
            src: [10, 0, 0, 1].into(),
            dst: [224, 0, 1, 4].into(),
            id: 7,
        };
        let mut plan = Plan::default();
        for (n, (fate, first)) in [
            (Fate::Complete { last: 9, iec: true }, Some(true)),
            (
                Fate::Complete {
                    last: 9,
                    iec: false,
                },
                Some(false),
            ),
            (Fate::Incomplete, Some(false)),
            (Fate::Incomplete, Some(true)),
            (Fate::Incomplete, None),
        ]
        .into_iter()
        .enumerate()
        {
            plan.datagrams.push(Datagram {
                id,
                fate,
                first_says_iec: first,
                max_ip_len: 1500,
            });
            plan.frames.insert(n as u64 + 1, n);
        }
        let got: Vec<_> = (1..=6).map(|n| plan.action(n)).collect();
        assert_eq!(
            got,
            [
                Some(Action::Reassemble {
                    last: 9,
                    max_ip_len: 1500,
                    id: 7
                }),
                Some(Action::Copy),
                Some(Action::Copy),
                Some(Action::LeaveOut),
                Some(Action::LeaveOut),
                None,
            ]
        );
    }
}
