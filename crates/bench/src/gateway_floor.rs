//! The floor of `gander bench gateway`: [`gander_gateway::floor`] (the `l2` driver's sockets,
//! rings, threads and scheduling, forwarding every frame unjudged) in the gateway's place in
//! the same run, so that the added latency splits into what any forwarding thread pays on this
//! host and what gander adds on top (docs/gateway.md, "Where the time goes").

use crate::gateway::{GatewayBenchError, Result};
use gander_gateway::config::Config;
use gander_gateway::driver::Control;
use gander_lab::{Lab, Role};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// A running floor forwarder in the lab's gateway namespace; stopped when dropped.
pub(crate) struct Floor {
    ctl: Arc<Control>,
    h: Option<std::thread::JoinHandle<std::io::Result<[u64; 2]>>>,
}

impl Floor {
    /// Starts the floor with the `[l2]` interfaces and data-path options of the gateway
    /// configuration `config` (the same text the gateway of the run gets).
    pub(crate) fn start(lab: &Lab, config: &str) -> Result<Floor> {
        let cfg = Config::from_toml(config, Path::new("."))?;
        let ctl = Arc::new(Control::new(None, None));
        let (c2, ns) = (ctl.clone(), lab.ns(Role::Gw));
        let h = std::thread::spawn(move || {
            gander_lab::enter(&ns)?;
            gander_gateway::floor::run(&cfg, &c2)
        });
        // As for the gateway: sockets, rings and tc rules in place before traffic starts.
        std::thread::sleep(Duration::from_millis(200));
        Ok(Floor { ctl, h: Some(h) })
    }

    /// Stops it; the frames it forwarded, IED-to-network and network-to-IED.
    pub(crate) fn stop(mut self) -> Result<[u64; 2]> {
        self.ctl.stop.store(true, Ordering::Relaxed);
        let h = self.h.take().ok_or(GatewayBenchError::NotRunning)?;
        Ok(h.join()
            .map_err(|_| GatewayBenchError::Panicked("floor"))??)
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        self.ctl.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.h.take() {
            let _ = h.join();
        }
    }
}
