//! What a live input (an interface read through an AF_PACKET ring) tells the audit beyond the
//! frames themselves: frames cut by the capture, and frames the kernel dropped before the
//! audit could read them. An audit that lost frames must say so: every sequence finding near
//! the loss may be the audit's own (a `goose-sq-gap` or `sv-gap` with no gap on the wire), and
//! an attack in the lost frames was not judged. Both are reported as findings and the drops
//! in the summary (`kernel_drops`).

use crate::finding::Severity;
use crate::metrics::KernelTotals;
use crate::Auditor;

impl Auditor<'_> {
    /// Counts frame `no`, cut by the capture (longer than the ring slot): it is not judged,
    /// since a cut frame would be misread as malformed.
    pub fn truncated(&mut self, no: u64, ts_ns: u64, len: usize) {
        self.frames += 1;
        self.first_ts.get_or_insert(ts_ns);
        self.last_ts = self.last_ts.max(ts_ns);
        *self.kinds.entry("truncated").or_insert(0) += 1;
        self.findings
            .add("capture-truncated", Severity::Low, None, no, ts_ns, || {
                format!("a frame cut to {len} octets by the capture (longer than its ring slot): not judged")
            });
    }

    /// Adds the kernel's capture-socket counters read since the previous call
    /// (`PACKET_STATISTICS` resets on every read); `no` and `ts_ns` are the last frame read,
    /// after which the loss was seen. A drop is a medium finding: the audit is incomplete.
    pub fn kernel_counters(&mut self, packets: u64, drops: u64, no: u64, ts_ns: u64) {
        let k = self.kernel.get_or_insert_with(KernelTotals::default);
        k.packets += packets;
        k.drops += drops;
        if drops > 0 {
            self.findings
                .add("capture-drops", Severity::Medium, None, no, ts_ns, || {
                    format!("the kernel dropped {drops} frames before the audit read them (capture ring full, PACKET_STATISTICS tp_drops): the audit is incomplete, sequence gaps after frame {no} may be its own loss and whatever the lost frames held was not judged")
                });
        }
    }

    /// The kernel's counters so far (`None` for a file audit).
    pub fn kernel_totals(&self) -> Option<KernelTotals> {
        self.kernel
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
        assert_eq!(f.frames, vec![12]);
        assert_eq!(audit.exit_code(), 4);
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
        a.truncated(1, 5, 2048);
        let audit = a.finish();
        assert_eq!(audit.summary.frames, 1);
        assert_eq!(audit.summary.kinds.get("truncated"), Some(&1));
        assert!(audit.streams.is_empty());
        assert_eq!(audit.findings[0].code, "capture-truncated");
    }
}
