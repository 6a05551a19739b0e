//! gander's own work inside one HT, measured without I/O so that `gander run` can say how much
//! of a handshake time is gander's and how much the TLS library's, the path's and the system's
//! (`docs/measurement.md`, "HT accounting").
//!
//! Two parts, each the median of repetitions in the calling process:
//! * the MMS association: gander's client and server association machines (COTP CR/CC, session
//!   CONNECT/ACCEPT, presentation, ACSE AARQ/AARE, MMS initiate) driven against each other in
//!   memory, with the configurations the peers use, from `connect` to the client's
//!   `Associated` event — the protocol work both peers do inside the HT window;
//! * the harness: the event-log lines the peers write inside the HT window
//!   ([`EVENTS_IN_HT_WINDOW`]), serialised into a buffered file sink as the peers do, and the
//!   server's per-connection thread, from spawn to running ([`connection_thread`]).

use crate::clock::now_ns;
use crate::events::{name, Event, Sink};
use gander_mms::association::{
    ClientAssociation, ClientConfig, Event as AEvent, ServerAssociation, ServerConfig,
};
use gander_mms::model::{ImpModel, ModelConfig};
use std::path::Path;
use std::time::Instant;

/// Event lines written between a connection's HT_START stamp and its HT_END stamp: the client's
/// HT_START, TCP_UP, TLS_UP and COTP_UP (`client.rs`), and the server's TCP_UP, TLS_UP,
/// COTP_UP and ASSOCIATED (`server.rs`), which the client waits for.
pub const EVENTS_IN_HT_WINDOW: u32 = 8;

/// Why gander's own cost could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum OwnCostError {
    /// The in-memory association did not reach `Associated`.
    #[error("in-memory MMS association did not complete: {0}")]
    Association(String),
    /// The event-log file could not be created.
    #[error("event log for the harness measurement")]
    Events(#[source] std::io::Error),
    /// No thread could be started.
    #[error("connection thread for the harness measurement")]
    Thread(#[source] std::io::Error),
}

/// One in-memory association, connect to the client's `Associated`: elapsed ns.
pub fn association_once() -> Result<u64, OwnCostError> {
    let mut model = ImpModel::new(ModelConfig::default());
    let start = Instant::now();
    let now = now_ns();
    let mut c = ClientAssociation::new(ClientConfig::default());
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, now);
    c.connect(now)
        .map_err(|e| OwnCostError::Association(e.to_string()))?;
    for _ in 0..16 {
        let mut moved = false;
        while let Some(p) = c.poll_transmit() {
            s.handle_input(now, &p, &mut model);
            moved = true;
        }
        while let Some(p) = s.poll_transmit() {
            c.handle_input(now, &p);
            moved = true;
        }
        while s.poll_event().is_some() {}
        while let Some(e) = c.poll_event() {
            match e {
                AEvent::Associated { .. } => return Ok(start.elapsed().as_nanos() as u64),
                AEvent::Closed { reason, .. } => {
                    return Err(OwnCostError::Association(format!("{reason:?}")))
                }
                _ => {}
            }
        }
        if !moved {
            break;
        }
    }
    Err(OwnCostError::Association(format!(
        "stopped in state {:?}",
        c.state()
    )))
}

/// `n` in-memory associations after `warmup` untimed ones, ns each.
pub fn association(warmup: usize, n: usize) -> Result<Vec<u64>, OwnCostError> {
    for _ in 0..warmup {
        association_once()?;
    }
    (0..n).map(|_| association_once()).collect()
}

/// Writing [`EVENTS_IN_HT_WINDOW`] event lines, `n` times after `warmup`, into a file sink in
/// `dir`, ns each.
pub fn harness(dir: &Path, warmup: usize, n: usize) -> Result<Vec<u64>, OwnCostError> {
    let path = dir.join("own-cost.events");
    let sink = Sink::file(&path).map_err(OwnCostError::Events)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..warmup + n {
        let start = Instant::now();
        for k in 0..EVENTS_IN_HT_WINDOW {
            let ev = match k {
                0 => name::HT_START,
                1 | 4 => name::TCP_UP,
                2 | 5 => name::TLS_UP,
                3 | 6 => name::COTP_UP,
                _ => name::ASSOCIATED,
            };
            sink.emit(
                Event::new(ev, now_ns(), i as u64)
                    .with("local", "127.0.0.1:40000")
                    .with("resumed", false),
            );
        }
        if i >= warmup {
            out.push(start.elapsed().as_nanos() as u64);
        }
    }
    sink.flush();
    let _ = std::fs::remove_file(&path);
    Ok(out)
}

/// The server's per-connection thread (`server.rs` spawns one per accepted connection): from
/// the spawn call until the new thread runs, `n` times after `warmup`, ns each.
pub fn connection_thread(warmup: usize, n: usize) -> Result<Vec<u64>, OwnCostError> {
    let mut out = Vec::with_capacity(n);
    for i in 0..warmup + n {
        let (tx, rx) = std::sync::mpsc::channel::<Instant>();
        let start = Instant::now();
        let h = std::thread::Builder::new()
            .name(format!("mms-conn-{i}"))
            .spawn(move || {
                let _ = tx.send(Instant::now());
            })
            .map_err(OwnCostError::Thread)?;
        let ran = rx
            .recv()
            .map_err(|_| OwnCostError::Association("connection thread did not run".into()))?;
        let _ = h.join();
        if i >= warmup {
            out.push(ran.saturating_duration_since(start).as_nanos() as u64);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_in_memory_association_completes() {
        let t = association(1, 3).unwrap();
        assert_eq!(t.len(), 3);
        assert!(t.iter().all(|x| *x > 0));
    }

    #[test]
    fn the_harness_writes_its_lines() {
        let dir = std::env::temp_dir().join(format!("gander-own-cost-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = harness(&dir, 0, 2).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(connection_thread(1, 2).unwrap().len(), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
