//! The TLS scanner reads whatever a server sends back to its ClientHellos (`gander tls survey`,
//! `gander_tls::scan`): any octets, cut anywhere, must parse to a flight or an error, never a
//! panic; the ClientHello reader must survive anything as well.
#![no_main]
use gander_tls::scan::{hello, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = parse::parse_flight(data) {
        assert!(f.consumed <= data.len());
    }
    // The same octets as they arrive in two reads: the first call sees a prefix.
    if let Some((&cut, rest)) = data.split_first() {
        let at = usize::from(cut).min(rest.len());
        let _ = parse::parse_flight(&rest[..at]);
    }
    let _ = parse::parse_server_hello(data);
    let _ = hello::parse_client_hello(data);
});
