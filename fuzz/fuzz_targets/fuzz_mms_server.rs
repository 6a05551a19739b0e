//! A server association with the IEC 61850 model fed arbitrary bytes: first raw, then after
//! a valid libiec61850-style connect as framed DT payloads. Must never panic or grow
//! without bound; must end closed or keep running.
#![no_main]
use gander_mms::association::{ClientAssociation, ClientConfig, ServerAssociation, ServerConfig};
use gander_mms::model::{ImpModel, ModelConfig};
use gander_mms::{cotp, tpkt};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    // 1. Raw stream from the first byte.
    let mut m = ImpModel::new(ModelConfig::default());
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, 0);
    for chunk in bytes.chunks(11) {
        s.handle_input(1, chunk, &mut m);
    }
    while s.poll_transmit().is_some() {}
    while s.poll_event().is_some() {}

    // 2. Associated first, then the input as one TSDU (DATA prefix optional).
    let mut s = ServerAssociation::new(ServerConfig::default(), 2, 0);
    let mut c = ClientAssociation::new(ClientConfig::default());
    c.connect(0).expect("connect");
    loop {
        let mut moved = false;
        while let Some(p) = c.poll_transmit() {
            s.handle_input(0, &p, &mut m);
            moved = true;
        }
        while let Some(p) = s.poll_transmit() {
            c.handle_input(0, &p);
            moved = true;
        }
        if !moved {
            break;
        }
    }
    assert!(s.is_associated());
    for dt in cotp::data_tpdus(bytes, 8192) {
        s.handle_input(2, &tpkt::frame(&dt).expect("frame"), &mut m);
    }
    while s.poll_transmit().is_some() {}
    while s.poll_event().is_some() {}
    if let Some(t) = s.poll_timeout() {
        s.handle_timeout(t, &mut m);
    }
});
