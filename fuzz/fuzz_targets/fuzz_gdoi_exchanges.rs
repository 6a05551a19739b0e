//! The GDOI state machines on arbitrary datagrams: the key server's main-mode responder on a
//! first message, the member's main-mode initiator waiting for message 2, and the key
//! server's GROUPKEY-PULL on a first message under an established phase-1 SA. None may
//! panic; a refused datagram must leave the member able to finish with the genuine reply.
#![no_main]
use gander_gdoi::cookie::CookieJar;
use gander_gdoi::main_mode::ResponderConfig;
use gander_gdoi::pull::{Grant, GroupSource, MessageIds, PullError, PullServer};
use gander_gdoi::{Initiator, Phase1Sa, Responder, Suite};
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::IdPayload;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use zeroize::Zeroizing;

fn id(s: &str) -> IdPayload {
    IdPayload { id_type: id_type::KEY_ID, protocol: 0, port: 0, data: s.as_bytes().to_vec() }
}

fn cfg(suite: Suite) -> ResponderConfig {
    ResponderConfig { psk: Zeroizing::new(b"k".to_vec()), suites: vec![suite], id: id("kdc"), expect_peer: None, cert: None }
}

struct NoGroups;
impl GroupSource for NoGroups {
    fn grant(&self, _: &IdPayload, _: &IdPayload) -> Result<Grant, PullError> {
        Err(PullError::UnknownGroup)
    }
}

/// One established phase-1 SA pair (member, key server), built once.
fn pair() -> &'static (Phase1Sa, Phase1Sa) {
    static P: OnceLock<(Phase1Sa, Phase1Sa)> = OnceLock::new();
    P.get_or_init(|| {
        let suite = Suite::all(60)[1];
        let jar = CookieJar::new();
        let (mut i, m1) = Initiator::start(b"k", id("m"), vec![suite]).unwrap();
        let (mut r, m2) = Responder::start(&jar, &[1], &m1, cfg(suite)).unwrap();
        let m3 = i.handle(&m2).unwrap().unwrap();
        let m4 = r.handle(&jar, &m3).unwrap();
        let m5 = i.handle(&m4).unwrap().unwrap();
        let m6 = r.handle(&jar, &m5).unwrap();
        i.handle(&m6).unwrap();
        (i.into_sa().unwrap(), r.into_sa().unwrap())
    })
}

fuzz_target!(|data: &[u8]| {
    let suite = Suite::all(60)[1];
    let jar = CookieJar::new();
    let _ = Responder::start(&jar, &[1], data, cfg(suite));

    let (mut i, m1) = Initiator::start(b"k", id("m"), vec![suite]).unwrap();
    if i.handle(data).is_err() {
        let (_, m2) = Responder::start(&jar, &[1], &m1, cfg(suite)).unwrap();
        assert!(i.handle(&m2).unwrap().is_some(), "a refused datagram changed the initiator");
    }

    let (_, k) = pair();
    let mut ids = MessageIds::default();
    let _ = PullServer::start(k, &mut ids, &NoGroups, data);
});
