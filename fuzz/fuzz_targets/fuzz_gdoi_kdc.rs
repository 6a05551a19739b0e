//! The key server's datagram handler (`Kdc::handle`, everything `gander kdc` does with a
//! datagram) on arbitrary bytes from a member's address and from a stranger's, then its key
//! schedule one rollover later; and the member's reading of a grant (`group_keys`,
//! `GroupKek::from_grant`) and of a push (`PushReceiver`) on arbitrary bytes. None may panic;
//! a refused push leaves the receiver's SEQ as it was.
#![no_main]
use gander_gdoi::group_kek::GroupKek;
use gander_gdoi::net::kdc::{GroupPolicy, Kdc, KdcPolicy, MemberPolicy};
use gander_gdoi::pull::group_keys;
use gander_gdoi::push::{Kek, PushReceiver};
use gander_wire::isakmp::iec61850::oid;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdPayload, KeyDownload, SaPayload, Traffic};
use libfuzzer_sys::fuzz_target;
use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::PKey;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Mutex, OnceLock};
use zeroize::Zeroizing;

fn id(s: &str) -> IdPayload {
    IdPayload { id_type: id_type::KEY_ID, protocol: 0, port: 0, data: s.as_bytes().to_vec() }
}

fn kdc() -> &'static Mutex<Kdc> {
    static K: OnceLock<Mutex<Kdc>> = OnceLock::new();
    K.get_or_init(|| {
        let policy = KdcPolicy {
            identity: id("kdc"),
            members: vec![MemberPolicy {
                identity: b"m".to_vec(),
                psk: Zeroizing::new(b"0123456789abcdef".to_vec()),
                address: [10, 0, 0, 1].into(),
                groups: vec![b"g".to_vec()],
                push: None,
                cert: None,
            }],
            groups: vec![GroupPolicy {
                id: b"g".to_vec(),
                oid: oid::GOOSE.to_string(),
                traffic: Traffic::L2 { mac: [1, 0x0c, 0xcd, 1, 0, 1], appid: 1 },
                mac_code: 2,
                enc_code: 0,
                lifetime_secs: 10,
                activation_delay_secs: 1,
                overlap_secs: 2,
                key_id: 0,
                key: Zeroizing::new(Vec::new()),
            }],
        };
        Mutex::new(Kdc::new(UdpSocket::bind("127.0.0.1:0").unwrap(), policy))
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(mut k) = kdc().lock() {
        let ip = if data.first().is_some_and(|b| b & 1 == 1) { [10, 0, 0, 1] } else { [10, 0, 0, 2] };
        let _ = k.handle(SocketAddr::from((ip, 848)), data);
        let newest = k.state().groups.get("g").and_then(|g| g.keys.iter().map(|k| k.expires_at).max());
        if let Some(t) = newest {
            let _ = k.tick(t);
        }
    }
    if let (Ok(sa), Ok(kd)) = (SaPayload::parse(data, true), KeyDownload::parse(data)) {
        let _ = group_keys(id("g"), &sa, &kd, None);
        let _ = GroupKek::from_grant(&sa, &kd);
    }
    static VK: OnceLock<PKey<openssl::pkey::Public>> = OnceLock::new();
    let vk = VK.get_or_init(|| {
        let g = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
        let k = PKey::from_ec_key(EcKey::generate(&g).unwrap()).unwrap();
        PKey::public_key_from_der(&k.public_key_to_der().unwrap()).unwrap()
    });
    let mut rx = PushReceiver::new(Kek { spi: [0; 16], key: Zeroizing::new(vec![7; 32]) }, vk.clone(), 5);
    if rx.receive(data).is_err() {
        assert_eq!(rx.last_seq(), 5, "a refused push changed the receiver");
    }
});
