//! Which port and which transport to probe a device on, when the SCD does not say (IEC 61850-6
//! has no P type for TLS; some tools write `MMS-Port`). Candidates: the given port, else the
//! IEC 62351-3 port 3782 when a TLS profile was given, then the RFC 1006 port 102. The first
//! candidate that accepts TCP is asked with one COTP connection request (ISO 8073, the first
//! thing an MMS client sends): a connection confirm means plain MMS; a TLS record, a reset or
//! a close means the port expects TLS. One short connection per device, closed at once.
use super::targets::Target;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The IEC 62351-3 port of MMS over TLS.
pub const TLS_PORT: u16 = 3782;
/// RFC 1006 (ISO transport on TCP).
pub const PLAIN_PORT: u16 = 102;

/// Where and how to probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    /// The address.
    pub addr: SocketAddr,
    /// TLS or plain.
    pub tls: bool,
}

/// Why no endpoint was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoEndpoint {
    /// The `address:port` candidates tried.
    pub tried: String,
    /// What happened.
    pub detail: String,
}

/// The candidate ports of `t`.
pub fn candidates(t: &Target, have_tls: bool) -> Vec<u16> {
    match (t.port, t.tls) {
        (Some(p), _) => vec![p],
        (None, Some(true)) => vec![TLS_PORT],
        (None, Some(false)) => vec![PLAIN_PORT],
        (None, None) if have_tls => vec![TLS_PORT, PLAIN_PORT],
        (None, None) => vec![PLAIN_PORT],
    }
}

/// Finds the endpoint of `t`.
pub fn find(t: &Target, have_tls: bool, timeout: Duration) -> Result<Endpoint, NoEndpoint> {
    let ports = candidates(t, have_tls);
    let tried = ports
        .iter()
        .map(|p| format!("{}:{p}", bracket(&t.address)))
        .collect::<Vec<_>>()
        .join(", ");
    let mut last = String::from("no address");
    for p in ports {
        let addr = match resolve(&t.address, p) {
            Some(a) => a,
            None => {
                last = format!("cannot resolve {}", t.address);
                continue;
            }
        };
        let mut s = match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => s,
            Err(e) => {
                last = format!("{addr}: {e}");
                continue;
            }
        };
        if let Some(tls) = t.tls {
            return Ok(Endpoint { addr, tls });
        }
        let _ = s.set_read_timeout(Some(timeout));
        let _ = s.set_write_timeout(Some(timeout));
        let _ = s.set_nodelay(true);
        let mut buf = [0u8; 64];
        // A TLS server may reset or stay silent on a CR it cannot read as a record: 0 octets.
        let n = s
            .write_all(&gander_client::detect::cotp_connect_request())
            .and_then(|_| s.read(&mut buf))
            .unwrap_or_default();
        // A plain MMS server answers a CR with a CC; a TLS server reads the TPKT as a broken
        // record and answers with an alert, or closes, or waits: all of those are TLS.
        let tls = !gander_client::detect::is_cotp_confirm(buf.get(..n).unwrap_or(&[]));
        return Ok(Endpoint { addr, tls });
    }
    Err(NoEndpoint {
        tried,
        detail: last,
    })
}

/// An IPv6 literal in brackets for `host:port` forms, anything else as it is.
/// `address` (an IPv4 or IPv6 address, bracketed or not, or a host name) with `port`. The
/// `(host, port)` form of `to_socket_addrs` wants an IPv6 address without brackets: given
/// `[fd00::12]` it looked the name up and failed, so every IPv6 device of an SCD (`P
/// type="IPv6"`) or targets file was "cannot resolve" in a sweep, though `gander probe
/// '[fd00::12]:102'` reached it.
fn resolve(address: &str, port: u16) -> Option<std::net::SocketAddr> {
    let bare = address
        .strip_prefix('[')
        .and_then(|a| a.strip_suffix(']'))
        .unwrap_or(address);
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => Some(std::net::SocketAddr::new(ip, port)),
        Err(_) => (bare, port).to_socket_addrs().ok()?.next(),
    }
}

fn bracket(a: &str) -> String {
    if a.contains(':') && !a.starts_with('[') {
        format!("[{a}]")
    } else {
        a.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(port: Option<u16>, tls: Option<bool>) -> Target {
        Target {
            name: "x".into(),
            ied: None,
            access_point: None,
            address: "127.0.0.1".into(),
            port,
            tls,
        }
    }

    #[test]
    fn ports_follow_the_file_then_the_defaults() {
        assert_eq!(candidates(&t(Some(5102), None), true), [5102]);
        assert_eq!(candidates(&t(None, None), true), [3782, 102]);
        assert_eq!(candidates(&t(None, None), false), [102]);
        assert_eq!(candidates(&t(None, Some(true)), false), [3782]);
        assert_eq!(bracket("fd00::1"), "[fd00::1]");
    }

    /// IPv6 addresses, bracketed or not, are addresses, not names to look up.
    #[test]
    fn ipv6_addresses_resolve_without_a_lookup() {
        let want: std::net::SocketAddr = "[fd00::12]:102".parse().unwrap();
        assert_eq!(resolve("fd00::12", 102), Some(want));
        assert_eq!(resolve("[fd00::12]", 102), Some(want));
        assert_eq!(
            resolve("10.0.0.1", 5102),
            Some("10.0.0.1:5102".parse().unwrap())
        );
        assert_eq!(resolve("localhost", 102).map(|a| a.port()), Some(102));
    }

    /// A device on an IPv6 address is reached (it was "cannot resolve fd00::12" in a sweep).
    #[test]
    fn an_ipv6_device_is_reached() {
        let l = std::net::TcpListener::bind("[::1]:0").expect("IPv6 loopback");
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 64];
            let _ = s.read(&mut b);
            let _ = s.write_all(&[3, 0, 0, 11, 6, 0xD0, 0, 1, 0, 1, 0]);
        });
        let mut target = t(Some(port), None);
        target.address = "::1".into();
        let e = find(&target, false, Duration::from_secs(2)).unwrap();
        assert_eq!(e.addr, format!("[::1]:{port}").parse().unwrap());
        h.join().unwrap();
    }

    #[test]
    fn a_closed_port_is_no_endpoint_and_a_cotp_confirm_is_plain() {
        // A listener that answers a CR with a CC (ISO 8073 13.4) is plain.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 64];
            let _ = s.read(&mut b);
            // TPKT v3, length 11; COTP CC (0xD0) with a 7-octet header.
            let _ = s.write_all(&[3, 0, 0, 11, 6, 0xD0, 0, 1, 0, 1, 0]);
        });
        let e = find(&t(Some(port), None), true, Duration::from_secs(2)).unwrap();
        assert!(!e.tls);
        h.join().unwrap();
        let closed = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let e = find(&t(Some(closed), None), true, Duration::from_millis(500)).unwrap_err();
        assert!(e.tried.contains(&closed.to_string()));
    }
}
