//! The group member's state (`member_state`) on arbitrary push datagrams and clock events: raw
//! datagrams, and arbitrary payload chains encrypted under the member's KEK behind a valid
//! GROUPKEY-PUSH header (so the payload parsers and the push checks run, not only the header).
//! Nothing may panic, and a refused push must change nothing: same keys, same accepted count.
#![no_main]
use gander_gdoi::member_state::{FailPolicy, MemberState, MemberTiming};
use gander_gdoi::push::{Kek, PushReceiver};
use gander_wire::isakmp::header::{exchange, flags};
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{Header, IdPayload, HEADER_LEN};
use gander_wire::Codec;
use libfuzzer_sys::fuzz_target;
use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::PKey;
use std::sync::OnceLock;
use zeroize::Zeroizing;

fn kek() -> Kek {
    Kek { spi: [0x4b; 16], key: Zeroizing::new(vec![0x33; 32]) }
}

fn verify_key() -> &'static Vec<u8> {
    static K: OnceLock<Vec<u8>> = OnceLock::new();
    K.get_or_init(|| {
        let ec = EcKey::generate(&EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap()).unwrap();
        PKey::from_ec_key(ec).unwrap().public_key_to_der().unwrap()
    })
}

fn member(policy: FailPolicy) -> MemberState {
    let group = IdPayload { id_type: id_type::KEY_ID, protocol: 0, port: 0, data: b"g".to_vec() };
    let mut m = MemberState::new(group, 2, policy, MemberTiming { renew_before: 5, retry_after: 2 });
    let vk = PKey::public_key_from_der(verify_key()).unwrap();
    m.set_push_receiver(PushReceiver::new(kek(), vk, 0));
    m
}

fn wrapped(first: u8, body: &[u8]) -> Vec<u8> {
    let k = kek();
    let iv = [7u8; 16];
    let Ok(ct) = gander_gdoi::keys::encrypt(&k.key, &iv, body) else { return Vec::new() };
    let mut ci = [0u8; 8];
    let mut cr = [0u8; 8];
    ci.copy_from_slice(&k.spi[..8]);
    cr.copy_from_slice(&k.spi[8..]);
    let h = Header {
        initiator_cookie: ci,
        responder_cookie: cr,
        next_payload: first,
        major_version: 1,
        minor_version: 0,
        exchange: exchange::GROUPKEY_PUSH,
        flags: flags::ENCRYPTION,
        message_id: 0,
        length: (HEADER_LEN + 16 + ct.len()) as u32,
    };
    let mut out = h.to_vec();
    out.extend_from_slice(&iv);
    out.extend(ct);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let policy = if mode & 1 == 0 { FailPolicy::KeepUntilExpiry } else { FailPolicy::FailClosed };
    let mut m = member(policy);
    let dgram = if mode & 2 == 0 {
        rest.to_vec()
    } else {
        let Some((&first, body)) = rest.split_first() else { return };
        wrapped(first, body)
    };
    let now = 1_000 + u64::from(mode >> 2);
    let before = (m.key_ids(), m.counters().pushes);
    if m.on_push(&dgram, now).is_err() {
        assert_eq!((m.key_ids(), m.counters().pushes), before, "a refused push changed the member");
    }
    // Clock events on whatever state is left: never a panic.
    m.on_server_failed("fuzz", now);
    m.on_server_failed("fuzz", now);
    let _ = m.expire(now.saturating_add(u64::from(mode)));
    let _ = m.next_registration();
});
