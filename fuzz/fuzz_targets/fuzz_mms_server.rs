//! A server association with the IEC 61850 model fed arbitrary bytes: first raw, then after
//! a valid libiec61850-style connect as framed DT payloads, then as the MMS PDU of a valid
//! session DATA and P-DATA. Must never panic or grow without bound; must end closed or keep
//! running; and whatever the MMS PDU, the association survives it (ISO 9506-2 7.5: a
//! protocol error in an MMS PDU is answered with a Reject, not an abort).
#![no_main]
use gander_mms::association::{ClientAssociation, ClientConfig, ServerAssociation, ServerConfig};
use gander_mms::model::{ImpModel, ModelConfig};
use gander_mms::iso_session::Spdu;
use gander_mms::{cotp, presentation, tpkt, Codec};
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

    // 3. The input as one MMS PDU on a fresh association: it never aborts.
    let mut s = ServerAssociation::new(ServerConfig::default(), 3, 0);
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
    let ud = presentation::user_data(3, bytes.to_vec());
    for dt in cotp::data_tpdus(&Spdu::Data(&ud).to_vec(), 8192) {
        s.handle_input(3, &tpkt::frame(&dt).expect("frame"), &mut m);
    }
    assert!(!s.is_closed(), "an MMS PDU closed the association");
    while s.poll_transmit().is_some() {}
    while s.poll_event().is_some() {}
    if let Some(t) = s.poll_timeout() {
        s.handle_timeout(t, &mut m);
    }
});
