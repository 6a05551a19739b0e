//! IEC 61850-5 transfer-time requirements as data, so every latency table can show a verdict
//! against the class the reader cares about (`docs/measurement.md`, "How results are measured").
//!
//! The transfer time is the whole trip from the sender's application handing data to its stack
//! to the receiver's application getting it (IEC 61850-5 §13.7, the gateway paper's Figure 2):
//! both devices' processing plus the network. A single cryptographic operation is only part of
//! that budget, so "ok" against a class means the operation alone fits, not that a system does.
//!
//! Values as reproduced in the gateway paper's Table 1 (Andrade et al., from IEC 61850-5).

use std::time::Duration;

/// One row of the requirement table: a message type and performance class with its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferRequirement {
    /// Message type (IEC 61850-5 §13.7).
    pub message_type: &'static str,
    /// Performance class ("P1", "P2/3", or "-" where the type has none).
    pub performance_class: &'static str,
    /// Transfer-time class name (TT0 slowest .. TT6 fastest).
    pub class: &'static str,
    /// Maximum transfer time.
    pub limit: Duration,
    /// What the messages are.
    pub application: &'static str,
}

/// Type 1A (trip), P2/P3 (transmission level): 3 ms, class TT6. The R-GOOSE budget the
/// gateway paper evaluates against.
pub const TRIP_P2_P3: TransferRequirement = TransferRequirement {
    message_type: "1A",
    performance_class: "P2/3",
    class: "TT6",
    limit: Duration::from_millis(3),
    application: "fast messages: trip",
};

/// Type 1A (trip), P1 (distribution level): 10 ms, class TT5.
pub const TRIP_P1: TransferRequirement = TransferRequirement {
    message_type: "1A",
    performance_class: "P1",
    class: "TT5",
    limit: Duration::from_millis(10),
    application: "fast messages: trip",
};

/// Type 1B (other fast messages), P2/P3: 20 ms, class TT4.
pub const FAST_OTHER_P2_P3: TransferRequirement = TransferRequirement {
    message_type: "1B",
    performance_class: "P2/3",
    class: "TT4",
    limit: Duration::from_millis(20),
    application: "fast messages: others",
};

/// Type 1B (other fast messages), P1: 100 ms, class TT3.
pub const FAST_OTHER_P1: TransferRequirement = TransferRequirement {
    message_type: "1B",
    performance_class: "P1",
    class: "TT3",
    limit: Duration::from_millis(100),
    application: "fast messages: others",
};

/// The requirements R-GOOSE carries (types 1A and 1B), fastest first.
pub const GOOSE_REQUIREMENTS: [TransferRequirement; 4] =
    [TRIP_P2_P3, TRIP_P1, FAST_OTHER_P2_P3, FAST_OTHER_P1];

impl TransferRequirement {
    /// Limit in nanoseconds.
    pub fn limit_ns(&self) -> f64 {
        self.limit.as_nanos() as f64
    }

    /// `"ok"` if `ns` is within the limit, `"over"` otherwise.
    pub fn verdict(&self, ns: f64) -> &'static str {
        if ns <= self.limit_ns() {
            "ok"
        } else {
            "over"
        }
    }

    /// Short label, e.g. `TT6 3 ms`.
    pub fn label(&self) -> String {
        format!("{} {} ms", self.class, self.limit.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(TRIP_P2_P3.verdict(3_000_000.0), "ok");
        assert_eq!(TRIP_P2_P3.verdict(3_000_001.0), "over");
        assert_eq!(TRIP_P1.label(), "TT5 10 ms");
        assert!(GOOSE_REQUIREMENTS
            .windows(2)
            .all(|w| w[0].limit <= w[1].limit));
    }
}
