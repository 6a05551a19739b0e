//! The metrics endpoint of a live audit: `GET /metrics` (or `/`) answers the last OpenMetrics
//! text the reader published ([`gander_audit::metrics::render`]), anything else a 404 or 405,
//! as the gateway's exporter does. The listener is bound before the audit starts, so a bad
//! address fails the command, not a later scrape.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A running endpoint.
#[derive(Debug)]
pub struct Endpoint {
    text: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    addr: SocketAddr,
}

impl Endpoint {
    /// Binds `addr` and serves `initial` until [`Endpoint::publish`] replaces it.
    pub fn start(addr: SocketAddr, initial: String) -> Result<Self, crate::LiveError> {
        let server = tiny_http::Server::http(addr).map_err(|e| crate::LiveError::Metrics {
            addr,
            reason: e.to_string(),
        })?;
        let addr = server.server_addr().to_ip().unwrap_or(addr);
        let text = Arc::new(Mutex::new(initial));
        let stop = Arc::new(AtomicBool::new(false));
        let (t, s) = (text.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("gander-audit-metrics".into())
            .spawn(move || serve(server, &t, &s))
            .map_err(crate::LiveError::Spawn)?;
        Ok(Endpoint {
            text,
            stop,
            thread: Some(thread),
            addr,
        })
    }

    /// The bound address (the port the kernel chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the text served.
    pub fn publish(&self, text: String) {
        if let Ok(mut t) = self.text.lock() {
            *t = text;
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(server: tiny_http::Server, text: &Mutex<String>, stop: &AtomicBool) {
    let header = |k: &str, v: &str| tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()).ok();
    while !stop.load(Ordering::Relaxed) {
        let req = match server.recv_timeout(Duration::from_millis(100)) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(_) => break,
        };
        let path = req.url().split('?').next().unwrap_or("").to_string();
        let resp = if *req.method() != tiny_http::Method::Get {
            tiny_http::Response::from_string("only GET\n").with_status_code(405)
        } else if path == "/metrics" || path == "/" {
            let body = text.lock().map(|t| t.clone()).unwrap_or_default();
            let mut r = tiny_http::Response::from_string(body);
            if let Some(h) = header("Content-Type", gander_audit::metrics::CONTENT_TYPE) {
                r = r.with_header(h);
            }
            r
        } else {
            tiny_http::Response::from_string("not found: GET /metrics\n").with_status_code(404)
        };
        let _ = req.respond(resp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn serves_the_last_text_published() {
        let ep = Endpoint::start("127.0.0.1:0".parse().unwrap(), "# EOF\n".into()).unwrap();
        let addr = ep.addr();
        let get = |req: &str| -> String {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(req.as_bytes()).unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        };
        ep.publish("gander_audit_x 1\n# EOF\n".into());
        let ok = get("GET /metrics HTTP/1.0\r\n\r\n");
        assert!(ok.contains(" 200 "), "{ok}");
        assert!(ok.contains("application/openmetrics-text"), "{ok}");
        assert!(ok.ends_with("gander_audit_x 1\n# EOF\n"), "{ok}");
        assert!(get("GET /other HTTP/1.0\r\n\r\n").contains(" 404 "));
        assert!(get("POST / HTTP/1.0\r\nContent-Length: 0\r\n\r\n").contains(" 405 "));
        // The address is taken: a second endpoint says which.
        let e = Endpoint::start(addr, String::new()).expect_err("in use");
        assert!(e.to_string().contains(&addr.to_string()), "{e}");
    }
}
