//! Frames into the audit, the same way from a file and from an interface: IPv4/IPv6 fragments
//! of UDP through `gander-capture`'s reassembler (RFC 791, RFC 8200 §4.5, RFC 5722) with its
//! findings, then [`Auditor::feed`]. A file goes through `gander_capture::Capture`, which holds
//! the reassembler itself; a live interface through a [`LiveInput`] around one. Both report
//! reassembly findings with [`reassembly_severity`], so a datagram is judged the same whichever
//! way it arrived.

use gander_audit::finding::Severity;
use gander_audit::Auditor;
use gander_capture::reassembly::Outcome;
use gander_capture::{Finding, FindingKind, Limits, Reassembler};

/// Severity of an IP reassembly finding: conflicting overlaps and oversize datagrams are the
/// shapes of fragmentation attacks; inconsistent fragments are broken senders; datagrams left
/// incomplete at the end of a capture or pushed out by the limits are the capture's edges.
pub fn reassembly_severity(k: &FindingKind) -> Severity {
    use FindingKind as K;
    match k {
        K::OverlapConflict { .. } | K::Ipv6Overlap { .. } | K::TooLarge { .. } => Severity::High,
        K::LengthMismatch { .. } | K::UnalignedFragment { .. } | K::TooManyFragments { .. } => {
            Severity::Medium
        }
        _ => Severity::Info,
    }
}

/// Hands reassembly findings to the audit; `offset` continues frame numbers across files. A
/// datagram given up (incomplete at the end of the capture or after the timeout, or pushed
/// out by the limits) is listed at its first fragment's frame, where a reader finds it: the
/// frame that happened to end it (the capture's last, for every datagram still open there)
/// says nothing of it and is named in the detail.
pub fn report_findings(auditor: &mut Auditor<'_>, findings: &[Finding], offset: u64, ts_ns: u64) {
    for r in findings {
        let (sev, detail) = (reassembly_severity(&r.kind), r.to_string());
        let frame = match r.kind {
            FindingKind::Incomplete { .. } | FindingKind::Evicted { .. } => r.first_frame,
            _ => r.frame,
        };
        auditor.input_finding(r.kind.name(), sev, offset + frame, ts_ns, || detail);
    }
}

/// Numbered frames of a live interface, reassembled and fed to an audit.
#[derive(Debug)]
pub struct LiveInput {
    reassembler: Reassembler,
    out: Vec<u8>,
    findings: Vec<Finding>,
    /// Frames read (the last frame's number).
    pub frames: u64,
    /// The last frame's capture time.
    pub last_ts_ns: u64,
}

impl Default for LiveInput {
    fn default() -> Self {
        LiveInput {
            reassembler: Reassembler::new(Limits::default()),
            out: Vec::new(),
            findings: Vec::new(),
            frames: 0,
            last_ts_ns: 0,
        }
    }
}

impl LiveInput {
    /// Numbers `data` (received at `ts_ns`) and feeds it; a frame cut by the capture is
    /// counted (and a GOOSE or SV one put into its stream), its contents not judged.
    pub fn frame(&mut self, auditor: &mut Auditor<'_>, data: &[u8], ts_ns: u64, truncated: bool) {
        self.frames += 1;
        self.last_ts_ns = ts_ns;
        let no = self.frames;
        if truncated {
            return auditor.truncated(no, ts_ns, data);
        }
        self.findings.clear();
        let o = self
            .reassembler
            .push(no, ts_ns, data, &mut self.out, &mut self.findings);
        if !self.findings.is_empty() {
            report_findings(auditor, &self.findings, 0, ts_ns);
        }
        match o {
            Outcome::Held => auditor.held(ts_ns),
            Outcome::Complete { .. } => auditor.feed(no, ts_ns, &self.out),
            Outcome::NotFragment | Outcome::Dropped => auditor.feed(no, ts_ns, data),
        }
    }

    /// Ends reassembly: datagrams still incomplete become findings at the last frame.
    pub fn finish(&mut self, auditor: &mut Auditor<'_>) {
        self.findings.clear();
        self.reassembler.finish(&mut self.findings);
        let f = std::mem::take(&mut self.findings);
        report_findings(auditor, &f, 0, self.last_ts_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_audit::AuditOptions;
    use gander_testkit::frames::{goose_frame, rgoose_spdu, udp_frame, UdpAddrs};

    /// The frames of `whole` (an Ethernet/IPv4/UDP frame) as IPv4 fragments of `chunk`
    /// payload octets (a multiple of 8).
    fn fragments(whole: &[u8], chunk: usize) -> Vec<Vec<u8>> {
        let (eth, ip) = whole.split_at(14);
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        let (hdr, payload) = ip.split_at(ihl);
        let mut out = Vec::new();
        let mut off = 0;
        while off < payload.len() {
            let end = (off + chunk).min(payload.len());
            let mut h = hdr.to_vec();
            let total = (ihl + end - off) as u16;
            h[2..4].copy_from_slice(&total.to_be_bytes());
            let more = if end < payload.len() { 0x2000 } else { 0 };
            h[6..8].copy_from_slice(&(more | (off / 8) as u16).to_be_bytes());
            h[10..12].copy_from_slice(&[0, 0]);
            let mut s = h
                .chunks(2)
                .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
                .sum::<u32>();
            while s > 0xffff {
                s = (s & 0xffff) + (s >> 16);
            }
            h[10..12].copy_from_slice(&(!(s as u16)).to_be_bytes());
            let mut f = eth.to_vec();
            f.extend_from_slice(&h);
            f.extend_from_slice(&payload[off..end]);
            out.push(f);
            off = end;
        }
        out
    }

    #[test]
    fn fragments_are_reassembled_as_from_a_file() {
        let spdu = rgoose_spdu(gander_sec::Profile::Standard, 0x1000, 1, 1, 0);
        let whole = udp_frame(&UdpAddrs::IED_TO_SUB, &spdu);
        let parts = fragments(&whole, 48);
        assert!(parts.len() >= 2);
        let mut a = Auditor::new(AuditOptions::default(), None);
        let mut live = LiveInput::default();
        for (i, p) in parts.iter().enumerate() {
            live.frame(&mut a, p, 1_000 + i as u64, false);
        }
        live.finish(&mut a);
        let audit = a.finish();
        assert_eq!(audit.streams.len(), 1, "{:?}", audit.findings);
        assert_eq!(audit.streams[0].kind, "r-goose");
        assert_eq!(audit.streams[0].first_frame, parts.len() as u64);
        assert!(!audit.findings.iter().any(|f| f.code == "malformed"));
    }

    /// A datagram still incomplete when the capture ends is found there, but listed at its
    /// first fragment's frame: with hundreds open at the end (a lossy capture of fragmented
    /// R-SV, robidev/iec61850-dissector's iec90-5-samples.pcap: 781), every one was listed at
    /// the capture's last frame.
    #[test]
    fn an_incomplete_datagram_is_listed_at_its_first_fragment() {
        let spdu = rgoose_spdu(gander_sec::Profile::Standard, 0x1000, 1, 1, 0);
        let whole = udp_frame(&UdpAddrs::IED_TO_SUB, &spdu);
        let parts = fragments(&whole, 48);
        let mut a = Auditor::new(AuditOptions::default(), None);
        let mut live = LiveInput::default();
        live.frame(
            &mut a,
            &goose_frame([0, 1, 2, 3, 4, 5], [1, 0x0c, 0xcd, 1, 0, 1], None, 1, 1, 0),
            4,
            false,
        );
        live.frame(&mut a, &parts[0], 5, false);
        live.frame(
            &mut a,
            &goose_frame([0, 1, 2, 3, 4, 5], [1, 0x0c, 0xcd, 1, 0, 1], None, 1, 2, 0),
            6,
            false,
        );
        live.finish(&mut a);
        let audit = a.finish();
        assert_eq!(audit.summary.frames, 3);
        let f = audit
            .findings
            .iter()
            .find(|f| f.code == "fragments-incomplete")
            .expect("an incomplete datagram");
        assert_eq!((f.severity, f.frames.clone()), (Severity::Info, vec![2]));
        assert!(f.detail.contains("at frame 3"), "{}", f.detail);
    }
}
