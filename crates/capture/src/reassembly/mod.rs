//! Sans-I/O reassembly of IPv4 (RFC 791 §3.2) and IPv6 (RFC 8200 §4.5) fragments.
//!
//! IEC 61850-90-5 R-GOOSE and R-SV SPDUs travel in UDP and may be longer than a link's MTU
//! (an SPDU of 1562 octets on Ethernet is two IPv4 fragments); a subscriber's IP stack
//! reassembles them before the session layer sees anything, so a monitor must too.
//!
//! [`Reassembler::push`] is given every frame in capture order. A frame that is not a fragment
//! is left alone; a fragment is held; the fragment that completes a datagram yields the whole
//! datagram as one Ethernet frame (the first fragment's Ethernet and IP headers, lengths set
//! for one packet), which the caller classifies at that frame's number, as tshark shows a
//! reassembled datagram at its last fragment.
//!
//! Bounded in memory and in time:
//! * at most [`Limits::max_datagrams`] datagrams and [`Limits::max_bytes`] octets held (the
//!   oldest datagram is given up first, with a finding);
//! * at most [`Limits::max_fragments`] fragments per datagram;
//! * a datagram not complete [`Limits::timeout_ns`] of *capture* time after its first fragment
//!   is given up (Linux waits 30 s, RFC 8200 §4.5 60 s), so the result does not depend on how
//!   fast the capture is read.
//!
//! Inconsistent fragments are findings ([`FindingKind`]): overlapping IPv4 fragments with
//! different octets, any overlap of IPv6 fragments (RFC 5722), fragments that disagree about
//! the length, unaligned fragments, datagrams beyond 65535 octets. Exact duplicates are dropped
//! quietly (RFC 8200 §4.5). A discarded datagram's later fragments are dropped until it
//! expires, so an attack is reported once. An IPv6 atomic fragment (offset 0, M clear) is a
//! whole packet on its own (RFC 6946).

mod datagram;
mod finding;
mod fragment;

pub use finding::{DatagramId, EvictionCause, Finding, FindingKind};
pub use fragment::{fragment_of, FragmentOf};

use datagram::{Datagram, Insert};
use fragment::Key;
use std::collections::HashMap;

/// Bounds of the reassembler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Datagrams in flight at once.
    pub max_datagrams: usize,
    /// Octets held over all datagrams (at least 64 KiB plus headers, so that one datagram of
    /// the largest size fits).
    pub max_bytes: usize,
    /// Fragments per datagram (a 64 KiB SPDU over a 1500-octet MTU is 45 fragments).
    pub max_fragments: usize,
    /// Capture time a datagram may take to complete, nanoseconds.
    pub timeout_ns: u64,
}

impl Default for Limits {
    /// 1024 datagrams, 16 MiB, 128 fragments, 30 s.
    fn default() -> Self {
        Limits {
            max_datagrams: 1024,
            max_bytes: 16 << 20,
            max_fragments: 128,
            timeout_ns: 30_000_000_000,
        }
    }
}

/// What [`Reassembler::push`] did with a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Not a fragment: classify the frame itself.
    NotFragment,
    /// A fragment, held until the datagram is complete.
    Held,
    /// A fragment that was dropped (a duplicate, or of a discarded datagram).
    Dropped,
    /// This fragment completed a datagram, now in the output buffer.
    Complete {
        /// Frame number of the datagram's first fragment seen.
        first_frame: u64,
        /// Fragments it was made of.
        fragments: usize,
    },
}

/// The reassembler (see the module documentation).
#[derive(Debug, Default)]
pub struct Reassembler {
    limits: Limits,
    table: HashMap<Key, Datagram>,
    held: usize,
    /// Capture time at which the oldest datagram expires.
    next_expiry: Option<u64>,
    last_frame: u64,
}

impl Reassembler {
    /// A reassembler with `limits` (`max_bytes` is raised to hold one datagram of 64 KiB).
    pub fn new(mut limits: Limits) -> Self {
        limits.max_bytes = limits.max_bytes.max(70 << 10);
        limits.max_datagrams = limits.max_datagrams.max(1);
        limits.max_fragments = limits.max_fragments.max(2);
        Reassembler {
            limits,
            ..Default::default()
        }
    }

    /// Datagrams in flight (discarded ones waiting to expire included).
    pub fn in_flight(&self) -> usize {
        self.table.len()
    }

    /// Octets held.
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// Takes frame `number` captured at `ts_ns`. When it completes a datagram, the reassembled
    /// frame is written to `out`. Findings (this frame's, and datagrams that timed out by its
    /// time) are appended to `findings`.
    pub fn push(
        &mut self,
        number: u64,
        ts_ns: u64,
        frame: &[u8],
        out: &mut Vec<u8>,
        findings: &mut Vec<Finding>,
    ) -> Outcome {
        self.last_frame = number;
        if self.next_expiry.is_some_and(|t| ts_ns >= t) {
            self.expire(number, ts_ns, findings);
        }
        let Some(f) = fragment::find(frame) else {
            return Outcome::NotFragment;
        };
        let v6 = matches!(f.key, Key::V6 { .. });
        if v6 && f.offset == 0 && !f.more {
            // RFC 6946: an atomic fragment is reassembled alone, whatever is in flight.
            let mut d = Datagram::new(true, number, ts_ns);
            return match d.insert(&f, 1) {
                Insert::Complete if d.emit(out).is_ok() => Outcome::Complete {
                    first_frame: number,
                    fragments: 1,
                },
                _ => Outcome::Dropped,
            };
        }
        let finding = |kind, first_frame| Finding {
            frame: number,
            first_frame,
            datagram: f.key.id(),
            kind,
        };
        if !self.table.contains_key(&f.key) {
            if self.table.len() >= self.limits.max_datagrams {
                self.evict_oldest(None, EvictionCause::Datagrams, number, findings);
            }
            self.table.insert(f.key, Datagram::new(v6, number, ts_ns));
            let expiry = ts_ns.saturating_add(self.limits.timeout_ns);
            self.next_expiry = Some(self.next_expiry.map_or(expiry, |t| t.min(expiry)));
        }
        let (dead, growth) = match self.table.get(&f.key) {
            Some(d) => (d.dead, d.growth(&f)),
            None => return Outcome::Dropped,
        };
        if dead {
            return Outcome::Dropped;
        }
        while self.held + growth > self.limits.max_bytes {
            if !self.evict_oldest(Some(f.key), EvictionCause::Bytes, number, findings) {
                break;
            }
        }
        if self.held + growth > self.limits.max_bytes {
            if let Some(d) = self.table.get_mut(&f.key) {
                self.held -= d.held();
                findings.push(finding(
                    FindingKind::Evicted {
                        cause: EvictionCause::Bytes,
                    },
                    d.first_frame,
                ));
                d.kill();
            }
            return Outcome::Dropped;
        }
        let Some(d) = self.table.get_mut(&f.key) else {
            return Outcome::Dropped;
        };
        let before = d.held();
        let r = d.insert(&f, self.limits.max_fragments);
        self.held = self.held + d.held() - before;
        match r {
            Insert::Held => Outcome::Held,
            Insert::Duplicate => Outcome::Dropped,
            Insert::Ignored(kind) => {
                findings.push(finding(kind, d.first_frame));
                Outcome::Dropped
            }
            Insert::Discard(kind) => {
                findings.push(finding(kind, d.first_frame));
                self.held -= d.held();
                d.kill();
                Outcome::Dropped
            }
            Insert::Complete => {
                let emitted = d.emit(out);
                let (first_frame, fragments) = (d.first_frame, d.fragments);
                self.held -= d.held();
                self.table.remove(&f.key);
                match emitted {
                    Ok(()) => Outcome::Complete {
                        first_frame,
                        fragments,
                    },
                    Err(kind) => {
                        findings.push(finding(kind, first_frame));
                        Outcome::Dropped
                    }
                }
            }
        }
    }

    /// Gives up every datagram older than the timeout at capture time `now_ns`.
    pub fn expire(&mut self, frame: u64, now_ns: u64, findings: &mut Vec<Finding>) {
        let timeout = self.limits.timeout_ns;
        let mut expired: Vec<Key> = self
            .table
            .iter()
            .filter(|(_, d)| now_ns.saturating_sub(d.first_ts) >= timeout)
            .map(|(k, _)| *k)
            .collect();
        expired.sort_by_key(|k| self.table.get(k).map(|d| d.first_frame));
        for k in expired {
            if let Some(d) = self.table.remove(&k) {
                self.held -= d.held();
                if !d.dead {
                    findings.push(Finding {
                        frame,
                        first_frame: d.first_frame,
                        datagram: k.id(),
                        kind: FindingKind::Incomplete {
                            fragments: d.fragments,
                            bytes: d.received(),
                        },
                    });
                }
            }
        }
        self.next_expiry = self
            .table
            .values()
            .map(|d| d.first_ts.saturating_add(timeout))
            .min();
    }

    /// The end of the capture: every datagram still incomplete is a finding (at the last
    /// frame pushed).
    pub fn finish(&mut self, findings: &mut Vec<Finding>) {
        self.expire(self.last_frame, u64::MAX, findings);
    }

    /// Gives up the oldest datagram other than `keep`; false if there is none.
    fn evict_oldest(
        &mut self,
        keep: Option<Key>,
        cause: EvictionCause,
        frame: u64,
        findings: &mut Vec<Finding>,
    ) -> bool {
        let oldest = self
            .table
            .iter()
            .filter(|(k, d)| {
                Some(**k) != keep && (cause == EvictionCause::Datagrams || d.held() > 0)
            })
            .min_by_key(|(_, d)| (d.first_ts, d.first_frame))
            .map(|(k, _)| *k);
        let Some(k) = oldest else {
            return false;
        };
        if let Some(d) = self.table.remove(&k) {
            self.held -= d.held();
            if !d.dead {
                findings.push(Finding {
                    frame,
                    first_frame: d.first_frame,
                    datagram: k.id(),
                    kind: FindingKind::Evicted { cause },
                });
            }
        }
        true
    }
}

#[cfg(test)]
mod tests;
