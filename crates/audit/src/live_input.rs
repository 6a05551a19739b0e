//! What a live input (an interface read through an AF_PACKET ring) tells the audit beyond the
//! frames themselves: frames cut by the capture, and frames the kernel dropped before the
//! audit could read them. An audit that lost frames must say so: every sequence finding near
//! the loss may be the audit's own (a `goose-sq-gap` or `sv-gap` with no gap on the wire), and
//! an attack in the lost frames was not judged. Both are reported as findings and the drops
//! in the summary (`kernel_drops`).

use crate::finding::Severity;
use crate::metrics::KernelTotals;
use crate::Auditor;
use gander_sec::view::Kind;

impl Auditor<'_> {
    /// Counts frame `no`, cut by the capture (longer than the ring slot; `data` is what the
    /// slot holds): its contents are not judged, since a cut frame would be misread as
    /// malformed, but a GOOSE or SV frame goes into its stream as a file's cut frame does
    /// (`crate::cut_stream`).
    pub fn truncated(&mut self, no: u64, ts_ns: u64, data: &[u8]) {
        self.frames += 1;
        self.first_ts.get_or_insert(ts_ns);
        self.last_ts = self.last_ts.max(ts_ns);
        *self.kinds.entry("truncated").or_insert(0) += 1;
        let len = data.len();
        self.findings
            .add("capture-truncated", Severity::Low, None, no, ts_ns, || {
                format!("a frame cut to {len} octets by the capture (longer than its ring slot): its contents not judged; a GOOSE or SV frame counted in its stream")
            });
        let _ = self.cut_into_stream(no, ts_ns, data);
    }

    /// Counts frame `no` of a file, cut by the capture's snap length (`captured_len` of
    /// `orig_len` octets recorded; `data` is what was captured, presented as Ethernet). The
    /// missing octets were never recorded, so the frame is neither malformed nor judged: not
    /// verified, no check of its contents. What its captured headers show
    /// (`gander_sec::view::classify_cut`) is tallied; a layer-2 GOOSE or SV frame goes into its
    /// stream, its counters into the sequence checks where they were captured
    /// (`crate::cut_stream`); and [`Auditor::finish`] states the whole in one
    /// `capture-truncated` finding (how many, the snap length, how many were IEC 61850, how
    /// many went into their streams).
    pub fn cut_by_capture(
        &mut self,
        no: u64,
        ts_ns: u64,
        data: &[u8],
        captured_len: u32,
        orig_len: u32,
    ) {
        self.frames += 1;
        self.first_ts.get_or_insert(ts_ns);
        self.last_ts = self.last_ts.max(ts_ns);
        *self.kinds.entry("truncated").or_insert(0) += 1;
        let c = &mut self.cut;
        c.frames += 1;
        c.max_captured = c.max_captured.max(captured_len);
        c.max_orig = c.max_orig.max(orig_len);
        match gander_sec::view::classify_cut(data) {
            gander_sec::view::CutFrame::Iec61850(_) => c.iec += 1,
            gander_sec::view::CutFrame::Unknown => c.unknown += 1,
            gander_sec::view::CutFrame::Other => {}
        }
        if let Some(read) = self.cut_into_stream(no, ts_ns, data) {
            self.cut.into_streams += 1;
            self.cut.counters_read += u64::from(read);
        }
        self.findings.add(
            "capture-truncated",
            Severity::Low,
            None,
            no,
            ts_ns,
            String::new,
        );
    }

    /// The end of a live audit at wall time `now_ns`: a GOOSE stream whose last frame in order
    /// is older than its timeAllowedtoLive has fallen silent, which a file's end cannot tell
    /// (the capture may just have stopped) but a live reader can. One `goose-tal-exceeded` per
    /// such stream, at its last frame (bro-goose's NormalTrace1, TAL 1500 ms, replayed and
    /// then silent for 8 s under a live audit: nothing was said).
    pub fn end_live(&mut self, now_ns: u64) {
        for (i, s) in self.streams.iter_mut().enumerate() {
            if !matches!(s.key.kind, Kind::Goose | Kind::RGoose) {
                continue;
            }
            let Some(e) = s.tal_expired(now_ns) else {
                continue;
            };
            self.findings.add("goose-tal-exceeded", Severity::Medium, Some((i, s.uid.as_str())), e.frame, e.frame_ns, || {
                format!("no frame in order for {:.1} ms after frame {}{} until the audit ended, whose timeAllowedtoLive was {} ms: the publisher fell silent, a subscriber takes it as lost (IEC 61850-8-1 §18.1.2.5)", e.gap_ns as f64 / 1e6, e.frame, e.counters, e.tal)
            });
        }
    }

    /// Adds the kernel's capture-socket counters read since the previous call
    /// (`PACKET_STATISTICS` resets on every read); `no` and `ts_ns` are the last frame read,
    /// after which the loss was seen. A drop is a medium finding: the audit is incomplete.
    pub fn kernel_counters(&mut self, packets: u64, drops: u64, no: u64, ts_ns: u64) {
        let k = self.kernel.get_or_insert_with(KernelTotals::default);
        k.packets += packets;
        k.drops += drops;
        // The loss happened somewhere after the previous read: listed at the first frame read
        // since (sequence gaps it caused lie between that frame and `no`), not at `no` (gaps
        // before the finding went unexplained).
        let since = self.stats_read_at.map_or(1, |p| p + 1).min(no.max(1));
        self.stats_read_at = Some(no);
        if drops > 0 {
            self.findings
                .add("capture-drops", Severity::Medium, None, since, ts_ns, || {
                    format!("the kernel dropped {drops} frames between frames {since} and {no} before the audit read them (capture ring full, PACKET_STATISTICS tp_drops; this episode: the summary's kernel_drops is the total): the audit is incomplete, sequence gaps in that stretch may be its own loss and whatever the lost frames held was not judged")
                });
        }
    }

    /// The kernel's counters so far (`None` for a file audit).
    pub fn kernel_totals(&self) -> Option<KernelTotals> {
        self.kernel
    }
}

/// Frames of a file that its snap length cut, for the one `capture-truncated` finding.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CutTally {
    pub(crate) frames: u64,
    pub(crate) max_captured: u32,
    pub(crate) max_orig: u32,
    pub(crate) iec: u64,
    pub(crate) unknown: u64,
    /// Counted into their streams (`crate::cut_stream`).
    pub(crate) into_streams: u64,
    /// Of those, the ones whose counters went through the sequence checks.
    pub(crate) counters_read: u64,
}

impl CutTally {
    /// The finding's text, once every frame is counted.
    pub(crate) fn detail(&self) -> String {
        format!(
            "{} frames cut by the capture's snap length ({} octets captured at most, of frames up to {} octets): {} of them IEC 61850 by their headers (GOOSE, SV, GSE management, R-GOOSE/R-SV), {} cut before the headers that tell. {} went into their GOOSE/SV streams as frames seen ({} with stNum/sqNum or smpCnt read and checked in sequence; the others explain one missing number each). Their contents past the cut were not recorded and not judged: not verified, no malformed check; capture without a snap length to audit them",
            self.frames, self.max_captured, self.max_orig, self.iec, self.unknown, self.into_streams, self.counters_read
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::finding::Severity;
    use crate::{AuditOptions, Auditor};

    #[test]
    fn drops_are_a_finding_and_in_the_summary() {
        let mut a = Auditor::new(AuditOptions::default(), None);
        a.kernel_counters(10, 0, 0, 0);
        a.kernel_counters(5, 3, 12, 99);
        assert_eq!(
            a.kernel_totals().map(|k| (k.packets, k.drops)),
            Some((15, 3))
        );
        let audit = a.finish();
        assert_eq!(audit.summary.kernel_drops, Some(3));
        let f = audit
            .findings
            .iter()
            .find(|f| f.code == "capture-drops")
            .expect("finding");
        assert_eq!(f.severity, Severity::Medium);
        // Listed at the first frame read since the previous read: the gaps the loss caused
        // lie after it (they came before the finding when it sat at frame 12).
        assert_eq!(f.frames, vec![1]);
        assert!(f.detail.contains("between frames 1 and 12"), "{}", f.detail);
        assert_eq!(audit.exit_code(), 4);
    }

    #[test]
    fn each_drop_episode_is_placed_after_the_read_before_it() {
        let mut a = Auditor::new(AuditOptions::default(), None);
        a.kernel_counters(10, 2, 40, 0);
        a.kernel_counters(10, 0, 80, 0);
        a.kernel_counters(10, 5, 120, 0);
        let audit = a.finish();
        let f = audit
            .findings
            .iter()
            .find(|f| f.code == "capture-drops")
            .expect("finding");
        assert_eq!(f.frames, vec![1, 81]);
        assert_eq!(audit.summary.kernel_drops, Some(7));
    }

    #[test]
    fn no_drops_no_finding_but_a_zero_in_the_summary() {
        let mut a = Auditor::new(AuditOptions::default(), None);
        a.kernel_counters(10, 0, 3, 0);
        let audit = a.finish();
        assert_eq!(audit.summary.kernel_drops, Some(0));
        assert!(audit.findings.is_empty());
        // A file audit says nothing about drops.
        let file = Auditor::new(AuditOptions::default(), None).finish();
        assert_eq!(file.summary.kernel_drops, None);
        assert!(!serde_json::to_string(&file.summary)
            .unwrap()
            .contains("kernel_drops"));
    }

    #[test]
    fn truncated_frames_are_counted_not_judged() {
        let mut a = Auditor::new(AuditOptions::default(), None);
        a.truncated(1, 5, &[0u8; 2048]);
        let audit = a.finish();
        assert_eq!(audit.summary.frames, 1);
        assert_eq!(audit.summary.kinds.get("truncated"), Some(&1));
        assert!(audit.streams.is_empty());
        assert_eq!(audit.findings[0].code, "capture-truncated");
        // A GOOSE frame longer than the slot still starts (or joins) its stream.
        let g =
            gander_testkit::frames::goose_frame([2; 6], [1, 0x0c, 0xcd, 1, 0, 1], None, 1, 1, 0);
        let mut a = Auditor::new(AuditOptions::default(), None);
        a.truncated(1, 5, &g[..g.len() - 4]);
        let audit = a.finish();
        assert_eq!(
            audit
                .streams
                .iter()
                .map(|s| (s.frames, s.cut_by_capture))
                .collect::<Vec<_>>(),
            vec![(1, 1)]
        );
    }
}

#[cfg(test)]
mod cut_tests {
    use crate::finding::Severity;
    use crate::{AuditOptions, Auditor};
    use gander_testkit::frames::{goose_frame, udp_frame, UdpAddrs};

    /// The field test's `editcap -s 200` copy of a public capture (D_snap200): NTP and GOOSE
    /// frames cut by the snap length were 173 medium `malformed` findings ("truncated IPv4
    /// packet: need 76 bytes, have 50") and the GOOSE streams were lost. A cut frame is counted
    /// once in a low `capture-truncated` finding that names the snap length and how many were
    /// IEC 61850, never `malformed`; the whole frames are still judged.
    #[test]
    fn frames_cut_by_the_snap_length_are_one_finding_not_malformed() {
        let src = [0, 0x30, 0xa7, 1, 2, 3];
        let dst = [1, 0x0c, 0xcd, 1, 0, 1];
        let ntp = udp_frame(
            &UdpAddrs {
                src_mac: src,
                dst_mac: [0, 1, 2, 3, 4, 5],
                src_ip: [10, 0, 0, 1],
                dst_ip: [10, 0, 0, 2],
                src_port: 123,
                dst_port: 123,
            },
            &[0x23; 48],
        );
        let g1 = goose_frame(src, dst, None, 1, 1, 0);
        let g2 = goose_frame(src, dst, None, 1, 1, 1);
        let g3 = goose_frame(src, dst, None, 1, 1, 2);
        let mut a = Auditor::new(AuditOptions::default(), None);
        a.feed(1, 1_000, &g1);
        a.cut_by_capture(2, 2_000, &ntp[..64], 64, ntp.len() as u32);
        a.cut_by_capture(3, 3_000, &g2[..40], 40, g2.len() as u32);
        a.feed(4, 4_000_000, &g3);
        let audit = a.finish();
        assert_eq!(audit.summary.frames, 4);
        assert_eq!(audit.summary.kinds.get("truncated"), Some(&2));
        assert_eq!(audit.summary.kinds.get("malformed"), None);
        assert!(audit.findings.iter().all(|f| f.code != "malformed"));
        let cut: Vec<_> = audit
            .findings
            .iter()
            .filter(|f| f.code == "capture-truncated")
            .collect();
        assert_eq!(cut.len(), 1);
        assert_eq!(cut[0].severity, Severity::Low);
        assert_eq!(cut[0].count, 2);
        assert_eq!(cut[0].frames, vec![2, 3]);
        assert!(
            cut[0]
                .detail
                .starts_with("2 frames cut by the capture's snap length (64 octets"),
            "{}",
            cut[0].detail
        );
        assert!(
            cut[0].detail.contains("1 of them IEC 61850"),
            "{}",
            cut[0].detail
        );
        // The cut GOOSE frame between the two whole ones is counted in their stream (cut inside
        // gocbRef, it goes to the one stream of its addresses and APPID, `crate::cut_stream`)
        // and explains the sqNum missing between them: no gap.
        assert_eq!(audit.streams.len(), 1);
        assert_eq!(
            (audit.streams[0].frames, audit.streams[0].cut_by_capture),
            (3, 1)
        );
        assert!(audit.findings.iter().all(|f| f.code != "goose-sq-gap"));
    }
}
