//! The run client's control rows: on its last association, `[control]` measures the select,
//! operate, CommandTermination and Cancel round trips of one named control object with
//! `gander_client::control_rt` (the driver the probe's `--control` uses), writes one `CONTROL`
//! event per phase sample, and puts the result (statistics, how the object was left) in the
//! client's summary. It operates the device: only the object named in the configuration, Test
//! set unless `test = false`, the state read before and after and restored
//! (`docs/probe.md`, "Controls").
use gander_client::control::ControlOptions;
use gander_client::control_rt::{measure, ControlRt, DeviceLeft, RtOptions};
use gander_client::session::Session;
use serde::Deserialize;
use std::time::Duration;

use super::RunError;
use crate::events::{name, Event, Sink};

/// `[control]` of `gander mms client`'s configuration.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlConfig {
    /// The object, `LD/LN.DO`. Required: nothing is operated unless named.
    pub object: String,
    /// The first value (true/false, an integer, a number, higher/lower); empty: the opposite
    /// of the object's state.
    #[serde(default)]
    pub value: String,
    /// Operations, alternating values.
    #[serde(default = "default_count")]
    pub count: u64,
    /// Test flag of every command (IEC 61850-7-2 20.2.2); `false` operates for real.
    #[serde(default = "default_true")]
    pub test: bool,
    /// Pause between operations, ms.
    #[serde(default = "default_pause")]
    pub pause_ms: u64,
    /// Also measure select-then-Cancel pairs (SBO models with a Cancel).
    #[serde(default = "default_true")]
    pub cancel: bool,
}

fn default_count() -> u64 {
    10
}
fn default_true() -> bool {
    true
}
fn default_pause() -> u64 {
    20
}

/// Runs the control measurement on `session` (connection `id`): events, then the result.
/// A refusal by the server ends the operations (`stopped`), an object left otherwise than as
/// found (`not-restored`, `unknown`) or a failed session is an error of the run.
pub(super) fn run(
    session: &mut Session,
    sink: &Sink,
    id: u64,
    c: &ControlConfig,
    timeout: Duration,
) -> Result<ControlRt, RunError> {
    let o = RtOptions {
        control: ControlOptions {
            object: c.object.clone(),
            value: c.value.clone(),
            test: c.test,
            interlock_check: false,
            synchro_check: false,
            or_cat: 3,
            or_ident: b"gander run".to_vec(),
            termination_timeout: timeout,
        },
        count: usize::try_from(c.count).unwrap_or(usize::MAX).min(100_000),
        pause: Duration::from_millis(c.pause_ms),
        cancel: c.cancel,
    };
    let m = measure(session, &o).map_err(RunError::Control)?;
    let s = &m.rt.samples;
    for (phase, v) in [
        ("select", &s.select),
        ("operate", &s.operate),
        ("termination", &s.termination),
        ("cancel", &s.cancel),
    ] {
        for (k, ns) in v.iter().enumerate() {
            sink.emit(
                Event::new(name::CONTROL, crate::clock::now_ns(), id)
                    .with("phase", phase)
                    .with("n", k as u64)
                    .with("ns", *ns),
            );
        }
    }
    if let Some(e) = m.failed {
        return Err(e.into());
    }
    match &m.rt.left {
        DeviceLeft::AsFound | DeviceLeft::Restored | DeviceLeft::Untouched => Ok(m.rt),
        DeviceLeft::NotRestored { detail } | DeviceLeft::Unknown { detail } => {
            Err(RunError::ControlNotRestored {
                object: c.object.clone(),
                detail: detail.clone(),
            })
        }
    }
}
