//! The frames `translate` writes, held to what they must be byte for byte: a secured R-GOOSE
//! frame stripped is the unsecured frame it was made from (every profile, IPv4 with and without
//! a tag, IPv6, and each way into the policy), and translation to layer 2 writes exactly the
//! GOOSE frame a legacy publisher sends, secured or not.

use crate::config::{Config, Direction};
use crate::policy::{Decision, Policy};
use gander_sec::spdu_emit::PlainSpduRepr;
use gander_sec::{default_provider, KeyStore, Profile};
use gander_testkit::frames::{self as craft, Udp6Addrs, UdpAddrs};
use gander_wire::ethernet::{VlanTag, ETHERTYPE_VLAN};
use gander_wire::spdu::{PayloadElement, SpduId, SpduPayload};
use proptest::prelude::*;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

const SRC_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xfe];
const GOOSE_DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];

fn policy(profile: Profile, rules: &str) -> Policy {
    let text = format!(
        "driver = \"l2\"\nkeys = \"unused\"\nprofile = \"{}\"\nreflected = \"allow\"\n[l2]\nied = \"a\"\nnet = \"b\"\n{rules}",
        profile.name()
    );
    let cfg = Config::from_toml(&text, Path::new(".")).unwrap();
    let keys = KeyStore::from_toml(
        gander_testkit::keys::ALGORITHMS,
        Path::new("."),
        default_provider(),
    )
    .unwrap();
    Policy::new(&cfg, keys).unwrap()
}

fn protect(key: u32) -> String {
    format!("[[rule]]\ndirection = \"outbound\"\naction = \"protect\"\nkey_id = {key}\n")
}

const VERIFY: &str = "[[rule]]\ndirection = \"inbound\"\naction = \"verify\"\n";

fn fwd(d: Decision<'_>) -> Vec<u8> {
    match d {
        Decision::Forward(b) => b.to_vec(),
        Decision::Drop(r) => panic!("dropped: {r}"),
    }
}

/// How a frame reaches the policy.
#[derive(Clone, Copy, Debug)]
enum Way {
    Frame,
    Packet,
    Datagram,
}

/// `frame` handed to `p` the `way` a driver would, and the forwarded bytes put back into the
/// frame's form (a packet behind the frame's link header, a payload behind its IP/UDP headers)
/// so that outputs of every way compare with one frame.
fn handle(
    p: &mut Policy,
    profile: Profile,
    dir: Direction,
    frame: &[u8],
    ip_offset: usize,
    way: Way,
) -> Vec<u8> {
    match way {
        Way::Frame => fwd(p.handle(dir, frame, 0, &mut Vec::new())),
        Way::Packet => {
            let mut out = frame[..ip_offset].to_vec();
            out.extend(fwd(p.handle_ip(
                dir,
                &frame[ip_offset..],
                0,
                &mut Vec::new(),
            )));
            out
        }
        Way::Datagram => {
            let v = gander_sec::view::classify(profile, frame).ok();
            let Some(gander_sec::view::Content::Session(s)) = v.map(|v| v.content) else {
                panic!("not a session")
            };
            let ip = |a: IpAddr, port| SocketAddr::new(a, port);
            let (src, dst) = match s.udp.ip {
                gander_sec::view::IpAddrs::V4 { src, dst } => {
                    (IpAddr::from(src), IpAddr::from(dst))
                }
                gander_sec::view::IpAddrs::V6 { src, dst } => {
                    (IpAddr::from(src), IpAddr::from(dst))
                }
            };
            let payload = fwd(p.handle_datagram(
                dir,
                ip(src, s.udp.src_port),
                ip(dst, s.udp.dst_port),
                &frame[s.udp.payload.clone()],
                0,
                &mut Vec::new(),
            ));
            // The payload behind the frame's own headers, lengths and checksums redone.
            s.udp.rewrite_payload(frame, &payload).unwrap()
        }
    }
}

/// An unsecured R-SV SPDU (one 9-2LE ASDU) as `profile` writes it.
fn rsv_spdu(profile: Profile, appid: u16, n: u32) -> Vec<u8> {
    let apdu = craft::sv_apdu("gander/MU01", n as u16);
    let el = [PayloadElement {
        payload_type: SpduId::SampledValues.payload_type(),
        simulation: 0,
        appid,
        apdu: &apdu,
    }];
    let repr = PlainSpduRepr::new(
        profile,
        SpduId::SampledValues,
        n,
        SpduPayload::Elements(&el),
    )
    .unwrap();
    let mut out = vec![0; repr.buffer_len()];
    repr.emit(&mut out).unwrap();
    out
}

fn cases() -> impl Strategy<Value = (Profile, u32)> {
    prop_oneof![
        Just((Profile::Standard, 1)),
        Just((Profile::Standard, 3)),
        Just((Profile::Standard, 4)),
        Just((Profile::Libiec61850, 1)),
        Just((Profile::Libiec61850, 6)),
        Just((Profile::Seclib, 2)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Protect, verify and strip give back the unsecured frame byte for byte, whatever the
    /// profile, the key, R-GOOSE or R-SV, the framing (IPv4, IPv4 behind an 802.1Q tag, IPv6)
    /// and the way in.
    #[test]
    fn strip_of_protect_is_the_plain_frame((profile, key) in cases(), framing in 0u8..3,
                                           way in prop_oneof![Just(Way::Frame), Just(Way::Packet), Just(Way::Datagram)],
                                           appid in 1u16..0x4000, n in 1u32..1000, sv: bool) {
        let spdu = if sv {
            rsv_spdu(profile, appid, n)
        } else {
            craft::rgoose_spdu(profile, appid, n, 1, n)
        };
        let v4 = craft::udp_frame(&UdpAddrs::IED_TO_SUB, &spdu);
        let (plain, ip_offset) = match framing {
            0 => (v4, 14),
            1 => (craft::tagged(&v4, &[(ETHERTYPE_VLAN, 5)]), 18),
            _ => {
                let a = Udp6Addrs {
                    src_mac: [2, 0, 0, 0, 0, 1],
                    dst_mac: craft::ipv6_multicast_mac([0xff, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2]),
                    src_ip: [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                    dst_ip: [0xff, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2],
                    src_port: 102,
                    dst_port: 102,
                };
                (craft::udp6_frame(&a, &spdu), 14)
            }
        };
        let mut tx = policy(profile, &protect(key));
        let secured = handle(&mut tx, profile, Direction::Outbound, &plain, ip_offset, way);
        prop_assert_ne!(&secured, &plain);
        let mut rx = policy(profile, VERIFY);
        let stripped = handle(&mut rx, profile, Direction::Inbound, &secured, ip_offset, way);
        prop_assert_eq!(stripped, plain);
    }

    /// A verified R-GOOSE element translated to layer 2 is the GOOSE frame a legacy publisher
    /// sends with the rule's addresses and tag; translated with a key, it verifies and strips
    /// to that frame.
    #[test]
    fn rgoose_to_goose_is_the_legacy_frame(appid in 1u16..0x4000, st in 1u32..100, sq: u32,
                                           vlan in proptest::option::of(1u16..4095), keyed: bool) {
        let plain = craft::udp_frame(
            &UdpAddrs::IED_TO_SUB,
            &craft::rgoose_spdu(Profile::Standard, appid, 7, st, sq),
        );
        let secured = fwd(policy(Profile::Standard, &protect(1)).handle(Direction::Outbound, &plain, 0, &mut Vec::new()));
        let tag = vlan.map_or(String::new(), |v| format!("vlan = {v}\n"));
        let keys = if keyed { "key_ids = [1, 2]\n" } else { "" };
        let rule = format!(
            "[[rule]]\ndirection = \"inbound\"\nkind = \"r-goose\"\naction = \"translate\"\n{keys}[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"01:0c:cd:01:00:01\"\n{tag}"
        );
        let out = fwd(policy(Profile::Standard, &rule).handle(Direction::Inbound, &secured, 0, &mut Vec::new()));
        let legacy = craft::goose_frame(
            SRC_MAC,
            GOOSE_DST,
            vlan.map(|vid| VlanTag { pcp: 4, dei: false, vid }),
            appid,
            st,
            sq,
        );
        if keyed {
            prop_assert_ne!(&out, &legacy);
            let stripped = fwd(policy(Profile::Standard, VERIFY).handle(Direction::Inbound, &out, 0, &mut Vec::new()));
            prop_assert_eq!(stripped, legacy);
        } else {
            prop_assert_eq!(out, legacy);
        }
    }
}

/// Layer-2 GOOSE to secured R-GOOSE and back to layer 2: the APDU arrives unchanged.
#[test]
fn goose_to_rgoose_and_back() {
    let goose = craft::goose_frame([2, 0, 0, 0, 0, 1], GOOSE_DST, None, 0x21, 3, 4);
    let to_rgoose = "[[rule]]\ndirection = \"outbound\"\nkind = \"goose\"\naction = \"translate\"\nkey_id = 1\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:fe\"\ndst_mac = \"02:00:00:00:00:02\"\nsrc_ip = \"10.85.0.254\"\ndst_ip = \"10.85.0.2\"\n";
    let mut tx = policy(Profile::Libiec61850, to_rgoose);
    let r1 = fwd(tx.handle(Direction::Outbound, &goose, 0, &mut Vec::new()));
    let r2 = fwd(tx.handle(Direction::Outbound, &goose, 0, &mut Vec::new()));
    let l1 = gander_wire::ip::locate_udp(&r1).unwrap();
    assert!(l1.ip_checksum_ok && l1.udp_checksum_ok);
    assert_eq!(l1.dst_addr, [10, 85, 0, 2]);
    // The gateway's own SPDU numbers count up per APPID.
    let n = |f: &[u8], at: usize| u32::from_be_bytes(f[at + 10..at + 14].try_into().unwrap());
    let l2 = gander_wire::ip::locate_udp(&r2).unwrap();
    assert_eq!(n(&r2, l2.payload.start), n(&r1, l1.payload.start) + 1);
    let back = "[[rule]]\ndirection = \"inbound\"\nkind = \"r-goose\"\naction = \"translate\"\n[rule.translate]\nsrc_mac = \"02:00:00:00:00:01\"\ndst_mac = \"01:0c:cd:01:00:01\"\n";
    let out =
        fwd(policy(Profile::Libiec61850, back).handle(Direction::Inbound, &r1, 0, &mut Vec::new()));
    assert_eq!(out, goose);
}
