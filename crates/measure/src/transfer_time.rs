//! IEC 61850-5 transfer-time requirements as data, so every latency table can show a verdict
//! against the class the reader cares about (`docs/measurement.md`, "How results are measured").
//!
//! The transfer time is the whole trip from the sender's application handing data to its stack
//! to the receiver's application getting it (IEC 61850-5 §13.7, the gateway paper's Figure 2):
//! both devices' processing plus the network. A single cryptographic operation is only part of
//! that budget, so "ok" against a class means the operation alone fits, not that a system does.
//!
//! Values as reproduced in the gateway paper's Table 1 (Andrade et al., from IEC 61850-5).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A transfer-time class (IEC 61850-5 §13.7.2): its name, its limit and the message types that
/// use it. The one table of limits in gander: the platform's verdicts and the crypto
/// benchmark's requirement rows both read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassLimit {
    /// Class name, `TT1` (slowest) .. `TT6` (fastest).
    pub class: &'static str,
    /// Maximum transfer time.
    pub limit: Duration,
    /// The message types and performance classes that use it.
    pub applies_to: &'static str,
}

/// TT6, 3 ms.
pub const TT6: ClassLimit = ClassLimit {
    class: "TT6",
    limit: Duration::from_millis(3),
    applies_to: "type 1A trips (P2/P3), type 4 raw data (P2/P3)",
};
/// TT5, 10 ms.
pub const TT5: ClassLimit = ClassLimit {
    class: "TT5",
    limit: Duration::from_millis(10),
    applies_to: "type 1A trips (P1), type 4 raw data (P1)",
};
/// TT4, 20 ms.
pub const TT4: ClassLimit = ClassLimit {
    class: "TT4",
    limit: Duration::from_millis(20),
    applies_to: "type 1B other fast messages (P2/P3)",
};
/// TT3, 100 ms.
pub const TT3: ClassLimit = ClassLimit {
    class: "TT3",
    limit: Duration::from_millis(100),
    applies_to: "type 2 medium-speed messages (reports of measured values), type 1B (P1)",
};
/// TT2, 500 ms.
pub const TT2: ClassLimit = ClassLimit {
    class: "TT2",
    limit: Duration::from_millis(500),
    applies_to: "type 3 low-speed messages, type 7 commands",
};
/// TT1, 1000 ms.
pub const TT1: ClassLimit = ClassLimit {
    class: "TT1",
    limit: Duration::from_millis(1000),
    applies_to: "type 3 low-speed messages (slow), events and alarms",
};

/// Every class, fastest first.
pub const CLASSES: [ClassLimit; 6] = [TT6, TT5, TT4, TT3, TT2, TT1];

/// A name that is not a transfer-time class or an alias of one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown transfer-time class {0:?} (expected TT1..TT6, trip, fast, medium or low)")]
pub struct UnknownClass(pub String);

impl ClassLimit {
    /// Looks a class up by name (`TT3`, any case) or message-type alias (`trip`/`1A`,
    /// `fast`/`1B`, `medium`/`2`, `low`/`3`; the P2/P3 class of each).
    pub fn by_name(name: &str) -> Result<ClassLimit, UnknownClass> {
        let n = name.trim().to_ascii_uppercase();
        let n = match n.as_str() {
            "TRIP" | "1A" => "TT6",
            "FAST" | "1B" => "TT4",
            "MEDIUM" | "2" => "TT3",
            "LOW" | "3" => "TT2",
            other => other,
        };
        CLASSES
            .into_iter()
            .find(|c| c.class == n)
            .ok_or_else(|| UnknownClass(name.to_string()))
    }

    /// Limit in milliseconds.
    pub fn limit_ms(&self) -> f64 {
        self.limit.as_secs_f64() * 1e3
    }
}

/// A class as results files carry it (owned, so a results file can be read back).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransferClass {
    /// Class name (`TT3`).
    pub class: String,
    /// Limit in milliseconds.
    pub limit_ms: f64,
    /// The message types that use it.
    pub applies_to: String,
}

impl From<ClassLimit> for TransferClass {
    fn from(c: ClassLimit) -> Self {
        TransferClass {
            class: c.class.into(),
            limit_ms: c.limit_ms(),
            applies_to: c.applies_to.into(),
        }
    }
}

impl TransferClass {
    /// [`ClassLimit::by_name`], owned.
    pub fn by_name(name: &str) -> Result<TransferClass, UnknownClass> {
        ClassLimit::by_name(name).map(TransferClass::from)
    }
}

/// One row of the requirement table: a message type and performance class with its class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferRequirement {
    /// Message type (IEC 61850-5 §13.7).
    pub message_type: &'static str,
    /// Performance class ("P1", "P2/3").
    pub performance_class: &'static str,
    /// The transfer-time class that applies.
    pub class: ClassLimit,
    /// What the messages are.
    pub application: &'static str,
}

/// Type 1A (trip), P2/P3 (transmission level): 3 ms, class TT6. The R-GOOSE budget the
/// gateway paper evaluates against.
pub const TRIP_P2_P3: TransferRequirement = TransferRequirement {
    message_type: "1A",
    performance_class: "P2/3",
    class: TT6,
    application: "fast messages: trip",
};

/// Type 1A (trip), P1 (distribution level): 10 ms, class TT5.
pub const TRIP_P1: TransferRequirement = TransferRequirement {
    message_type: "1A",
    performance_class: "P1",
    class: TT5,
    application: "fast messages: trip",
};

/// Type 1B (other fast messages), P2/P3: 20 ms, class TT4.
pub const FAST_OTHER_P2_P3: TransferRequirement = TransferRequirement {
    message_type: "1B",
    performance_class: "P2/3",
    class: TT4,
    application: "fast messages: others",
};

/// Type 1B (other fast messages), P1: 100 ms, class TT3.
pub const FAST_OTHER_P1: TransferRequirement = TransferRequirement {
    message_type: "1B",
    performance_class: "P1",
    class: TT3,
    application: "fast messages: others",
};

/// The requirements R-GOOSE carries (types 1A and 1B), fastest first.
pub const GOOSE_REQUIREMENTS: [TransferRequirement; 4] =
    [TRIP_P2_P3, TRIP_P1, FAST_OTHER_P2_P3, FAST_OTHER_P1];

impl TransferRequirement {
    /// Maximum transfer time.
    pub fn limit(&self) -> Duration {
        self.class.limit
    }

    /// Limit in nanoseconds.
    pub fn limit_ns(&self) -> f64 {
        self.class.limit.as_nanos() as f64
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
        format!("{} {} ms", self.class.class, self.class.limit.as_millis())
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
            .all(|w| w[0].limit() <= w[1].limit()));
    }

    #[test]
    fn classes_by_name_and_alias() {
        assert_eq!(ClassLimit::by_name("trip").unwrap().limit_ms(), 3.0);
        assert_eq!(TransferClass::by_name("tt3").unwrap().limit_ms, 100.0);
        assert_eq!(ClassLimit::by_name(" low ").unwrap(), TT2);
        let e = ClassLimit::by_name("TT9").unwrap_err();
        assert!(e.to_string().contains("TT1..TT6"), "{e}");
        assert!(CLASSES.windows(2).all(|w| w[0].limit < w[1].limit));
    }
}
