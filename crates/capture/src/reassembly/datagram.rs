//! One datagram being reassembled.

use super::finding::FindingKind;
use super::fragment::{v4, v6, Fragment, Patch};
use gander_wire::ip::checksum;

/// Largest IP packet (IPv4 Total Length, IPv6 Payload Length: 16 bits).
pub(crate) const MAX_IP_LEN: u32 = 65535;

/// What inserting a fragment did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Insert {
    /// Held; more to come.
    Held,
    /// An exact duplicate, dropped (RFC 8200 §4.5 allows this for IPv6; for IPv4 it is a
    /// retransmission).
    Duplicate,
    /// Every octet is there.
    Complete,
    /// The fragment alone is ignored.
    Ignored(FindingKind),
    /// The datagram must be discarded.
    Discard(FindingKind),
}

#[derive(Debug)]
pub(crate) struct Datagram {
    pub(crate) v6: bool,
    pub(crate) first_frame: u64,
    pub(crate) first_ts: u64,
    /// Fragments accepted.
    pub(crate) fragments: usize,
    /// The first fragment's header (empty until it arrives).
    header: Vec<u8>,
    patch: Option<Patch>,
    /// End of the fragmentable part, once the last fragment said it.
    total: Option<u32>,
    data: Vec<u8>,
    /// Received pieces (start, end), sorted by start, as they arrived (not merged: an IPv6
    /// exact duplicate is told from an overlap by them).
    pieces: Vec<(u32, u32)>,
    /// Discarded: later fragments of the same datagram are dropped silently until it expires
    /// (RFC 5722: the whole datagram is abandoned, not restarted by its next fragment).
    pub(crate) dead: bool,
}

impl Datagram {
    pub(crate) fn new(v6: bool, first_frame: u64, first_ts: u64) -> Self {
        Datagram {
            v6,
            first_frame,
            first_ts,
            fragments: 0,
            header: Vec::new(),
            patch: None,
            total: None,
            data: Vec::new(),
            pieces: Vec::new(),
            dead: false,
        }
    }

    /// Octets held.
    pub(crate) fn held(&self) -> usize {
        self.data.len() + self.header.len()
    }

    /// Payload octets received (overlaps counted once is not needed: an estimate for reports).
    pub(crate) fn received(&self) -> usize {
        self.pieces.iter().map(|&(s, e)| (e - s) as usize).sum()
    }

    /// Octets `f` would add to [`Self::held`].
    pub(crate) fn growth(&self, f: &Fragment<'_>) -> usize {
        let end = f.offset as usize + f.data.len();
        let hdr = if f.offset == 0 && self.header.is_empty() {
            f.header.len()
        } else {
            0
        };
        end.saturating_sub(self.data.len()) + hdr
    }

    /// Frees what it holds and marks it discarded.
    pub(crate) fn kill(&mut self) {
        self.dead = true;
        self.data = Vec::new();
        self.header = Vec::new();
        self.pieces = Vec::new();
    }

    pub(crate) fn insert(&mut self, f: &Fragment<'_>, max_fragments: usize) -> Insert {
        let start = f.offset;
        let len = f.data.len() as u32;
        let end = start + len;
        if f.more && !len.is_multiple_of(8) {
            return Insert::Ignored(FindingKind::UnalignedFragment { len });
        }
        let room = if self.v6 { MAX_IP_LEN } else { MAX_IP_LEN - 20 };
        if end > room {
            return Insert::Discard(FindingKind::TooLarge { end });
        }
        if !f.more {
            if let Some(t) = self.total.filter(|&t| t != end) {
                return Insert::Discard(FindingKind::LengthMismatch {
                    declared: t,
                    seen: end,
                });
            }
            if let Some(&(_, e)) = self.pieces.iter().max_by_key(|p| p.1).filter(|p| p.1 > end) {
                return Insert::Discard(FindingKind::LengthMismatch {
                    declared: end,
                    seen: e,
                });
            }
        } else if let Some(t) = self.total.filter(|&t| end > t) {
            return Insert::Discard(FindingKind::LengthMismatch {
                declared: t,
                seen: end,
            });
        }
        for &(s, e) in &self.pieces {
            if s >= end || start >= e {
                continue;
            }
            let (os, oe) = (s.max(start), e.min(end));
            let old = &self.data[os as usize..oe as usize];
            let new = &f.data[(os - start) as usize..(oe - start) as usize];
            let same = old == new;
            if (s, e) == (start, end) && same {
                return Insert::Duplicate;
            }
            if self.v6 {
                return Insert::Discard(FindingKind::Ipv6Overlap { offset: os });
            }
            if !same {
                let d = old.iter().zip(new).position(|(a, b)| a != b).unwrap_or(0) as u32;
                return Insert::Discard(FindingKind::OverlapConflict { offset: os + d });
            }
        }
        if self.fragments >= max_fragments {
            return Insert::Discard(FindingKind::TooManyFragments {
                limit: max_fragments,
            });
        }
        self.fragments += 1;
        if self.data.len() < end as usize {
            self.data.resize(end as usize, 0);
        }
        self.data[start as usize..end as usize].copy_from_slice(f.data);
        let at = self.pieces.partition_point(|p| p.0 <= start);
        self.pieces.insert(at, (start, end));
        if !f.more {
            self.total = Some(end);
        }
        if start == 0 && self.header.is_empty() {
            self.header = f.header.to_vec();
            self.patch = Some(f.patch);
        }
        if self.is_complete() {
            Insert::Complete
        } else {
            Insert::Held
        }
    }

    fn is_complete(&self) -> bool {
        let Some(total) = self.total else {
            return false;
        };
        if self.header.is_empty() {
            return false;
        }
        let mut covered = 0;
        for &(s, e) in &self.pieces {
            if s > covered {
                return false;
            }
            covered = covered.max(e);
        }
        covered >= total
    }

    /// Writes the reassembled frame into `out` (the first fragment's Ethernet and IP headers,
    /// lengths and offsets set for one unfragmented packet, IPv4 header checksum recomputed).
    pub(crate) fn emit(&self, out: &mut Vec<u8>) -> Result<(), FindingKind> {
        let (Some(total), Some(patch)) = (self.total, self.patch) else {
            return Err(FindingKind::Incomplete {
                fragments: self.fragments,
                bytes: self.received(),
            });
        };
        out.clear();
        out.extend_from_slice(&self.header);
        out.extend_from_slice(&self.data[..total as usize]);
        match patch {
            Patch::V4 { ip_offset } => {
                let hl = self.header.len() - ip_offset;
                let len = hl as u32 + total;
                if len > MAX_IP_LEN {
                    return Err(FindingKind::TooLarge { end: len });
                }
                let ip = &mut out[ip_offset..];
                ip[v4::TOTAL_LEN..v4::TOTAL_LEN + 2].copy_from_slice(&(len as u16).to_be_bytes());
                let ff = u16::from_be_bytes([ip[v4::FLAGS_FRAG], ip[v4::FLAGS_FRAG + 1]]) & v4::DF;
                ip[v4::FLAGS_FRAG..v4::FLAGS_FRAG + 2].copy_from_slice(&ff.to_be_bytes());
                ip[v4::CHECKSUM..v4::CHECKSUM + 2].fill(0);
                let c = checksum(&ip[..hl]);
                ip[v4::CHECKSUM..v4::CHECKSUM + 2].copy_from_slice(&c.to_be_bytes());
            }
            Patch::V6 {
                ip_offset,
                nh_at,
                next,
            } => {
                let len = (self.header.len() - ip_offset - 40) as u32 + total;
                if len > MAX_IP_LEN {
                    return Err(FindingKind::TooLarge { end: len });
                }
                out[ip_offset + v6::PAYLOAD_LEN..ip_offset + v6::PAYLOAD_LEN + 2]
                    .copy_from_slice(&(len as u16).to_be_bytes());
                out[nh_at] = next;
            }
        }
        Ok(())
    }
}
