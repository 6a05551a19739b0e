//! R-GOOSE publishers against the routable GSE addresses of an SCD (`gander audit --scd`):
//! `tests/data/routable.scd` declares gcb01 to 239.192.0.1:102 from 10.0.0.5 with APPID
//! 0x1000, gcb02 to 239.192.0.2 (absent from the capture), and gcbL2 on layer 2 only. The
//! capture holds gcb01 as declared, and then to another group, to another port, under another
//! APPID and from another host; gcbL2 routed; a publisher the SCD does not know; and R-SV of
//! rsv01 to another IPv6 group than its SMV's; and gcb01 encrypted (reference and APPID
//! hidden) to its own group and to another. Every
//! `scd-*` finding is asserted with its stream and frame, and nothing else.

use gander_audit::scd::Scd;
use gander_audit::{Audit, AuditOptions, Auditor};
use gander_sec::frame::protect_frame;
use gander_sec::spdu::RandomIv;
use gander_sec::{default_provider, KeyStore, Profile};
use gander_testkit::frames::{
    ipv6_multicast_mac, sv_apdu, udp6_frame, udp_frame, Udp6Addrs, UdpAddrs,
};
use gander_wire::data::Data;
use gander_wire::goose::GoosePdu;
use gander_wire::spdu::{PayloadElement, SpduId, SpduPayload, SpduRepr};
use gander_wire::Codec;

const SCD: &str = include_str!("../data/routable.scd");
const T0: u64 = 1_700_000_000_000_000_000;
const MS: u64 = 1_000_000;

/// An unsecured R-GOOSE SPDU of control block `cb` of LD GANDERIED.
fn rgoose(cb: &str, appid: u16, spdu_no: u32, sq: u32) -> Vec<u8> {
    let apdu = GoosePdu {
        gocb_ref: format!("GANDERIED/LLN0$GO${cb}"),
        time_allowed_to_live: 2000,
        dat_set: "GANDERIED/LLN0$DS1".into(),
        go_id: Some(
            match cb {
                "gcb01" => "gander",
                "gcbL2" => "gander3",
                _ => "other",
            }
            .into(),
        ),
        t: [0x66, 0, 0, 0, 0, 0, 0, 0x0a],
        st_num: 1,
        sq_num: sq,
        simulation: false,
        conf_rev: 1,
        nds_com: false,
        num_dat_set_entries: 1,
        all_data: vec![Data::Boolean(true)],
    }
    .to_vec();
    let profile = Profile::Standard;
    let header = gander_sec::spdu::unsecured_header(profile, SpduId::Goose, spdu_no);
    let el = PayloadElement {
        payload_type: 0x81,
        simulation: 0,
        appid,
        apdu: &apdu,
    };
    let trailer = gander_sec::spdu::unsigned_trailer(profile);
    SpduRepr::new(
        header,
        SpduPayload::Elements(&[el]),
        trailer.len(),
        &profile.dialect(),
    )
    .unwrap()
    .to_vec_with_trailer(trailer)
    .unwrap()
}

/// An unsecured R-SV SPDU of stream `sv_id`.
fn rsv(sv_id: &str, appid: u16, spdu_no: u32, smp_cnt: u16) -> Vec<u8> {
    let apdu = sv_apdu(sv_id, smp_cnt);
    let profile = Profile::Standard;
    let header = gander_sec::spdu::unsecured_header(profile, SpduId::SampledValues, spdu_no);
    let el = PayloadElement {
        payload_type: SpduId::SampledValues.payload_type(),
        simulation: 0,
        appid,
        apdu: &apdu,
    };
    let trailer = gander_sec::spdu::unsigned_trailer(profile);
    SpduRepr::new(
        header,
        SpduPayload::Elements(&[el]),
        trailer.len(),
        &profile.dialect(),
    )
    .unwrap()
    .to_vec_with_trailer(trailer)
    .unwrap()
}

/// R-SV from the IED's IPv6 address to `group`.
fn rsv_frame(group: [u8; 16], payload: &[u8]) -> Vec<u8> {
    udp6_frame(
        &Udp6Addrs {
            src_mac: [0x02, 0, 0, 0, 0, 5],
            dst_mac: ipv6_multicast_mac(group),
            src_ip: "fd00::5".parse::<std::net::Ipv6Addr>().unwrap().octets(),
            dst_ip: group,
            src_port: 102,
            dst_port: 102,
        },
        payload,
    )
}

fn addrs(src: [u8; 4], dst: [u8; 4], port: u16) -> UdpAddrs {
    UdpAddrs {
        src_mac: [0x02, 0, 0, 0, 0, src[3]],
        dst_mac: [0x01, 0x00, 0x5e, dst[1] & 0x7f, dst[2], dst[3]],
        src_ip: src,
        dst_ip: dst,
        src_port: 102,
        dst_port: port,
    }
}

const IED: [u8; 4] = [10, 0, 0, 5];
const ROGUE: [u8; 4] = [10, 0, 0, 66];
const G1: [u8; 4] = [239, 192, 0, 1];
const G9: [u8; 4] = [239, 192, 0, 9];

/// A test stream: name, source, destination, port, control block, APPID.
type Route = (&'static str, [u8; 4], [u8; 4], u16, &'static str, u16);

fn audit() -> (Audit, Vec<(&'static str, u64)>) {
    let streams: [Route; 7] = [
        ("declared", IED, G1, 102, "gcb01", 0x1000),
        ("other-group", IED, G9, 102, "gcb01", 0x1000),
        ("other-port", IED, G1, 5102, "gcb01", 0x1000),
        ("other-appid", IED, G1, 102, "gcb01", 0x2000),
        ("rogue", ROGUE, G1, 102, "gcb01", 0x1000),
        ("l2-routed", IED, [239, 192, 0, 40], 102, "gcbL2", 0x1002),
        ("unknown", IED, [239, 192, 0, 77], 102, "gcbX", 0x1077),
    ];
    let mut a = Auditor::new(AuditOptions::default(), None);
    let mut firsts = Vec::new();
    let mut no = 0;
    for round in 0..3u32 {
        for (name, src, dst, port, cb, appid) in streams {
            no += 1;
            if round == 0 {
                firsts.push((name, no));
            }
            let f = udp_frame(&addrs(src, dst, port), &rgoose(cb, appid, round + 1, round));
            a.feed(no, T0 + no * MS, &f);
        }
    }
    // R-SV of rsv01 to another IPv6 group than the SCD's ff3e::8000:1.
    let group: std::net::Ipv6Addr = "ff3e::8000:9".parse().unwrap();
    for i in 0..3u16 {
        no += 1;
        if i == 0 {
            firsts.push(("rsv-other-group", no));
        }
        let f = rsv_frame(
            group.octets(),
            &rsv("GANDER_RSV", 0x4000, u32::from(i) + 1, i),
        );
        a.feed(no, T0 + no * MS, &f);
    }
    // gcb01 encrypted (AES-256-GCM: gocbRef and APPID hidden) to its group, and to another.
    let keys = KeyStore::from_toml(
        "[[key]]\nid = 4\nenc = \"aes-256-gcm\"\nkey = \"1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100\"\n",
        std::path::Path::new("."),
        default_provider(),
    )
    .unwrap();
    for (name, dst) in [
        ("encrypted", G1),
        ("encrypted-other-group", [239, 192, 0, 99]),
    ] {
        for i in 0..3u32 {
            no += 1;
            if i == 0 {
                firsts.push((name, no));
            }
            let plain = udp_frame(&addrs(IED, dst, 102), &rgoose("gcb01", 0x1000, i + 1, i));
            let ts = T0 + no * MS;
            let f = protect_frame(
                Profile::Standard,
                keys.get(4).unwrap(),
                &plain,
                &mut RandomIv,
                ts / 1_000_000_000,
            )
            .unwrap()
            .unwrap();
            a.feed(no, ts, &f);
        }
    }
    let mut audit = a.finish();
    let scd = Scd::from_text(SCD).unwrap();
    gander_audit::scd::judge(&mut audit, &scd);
    (audit, firsts)
}

#[test]
fn routable_goose_is_judged_against_the_scd() {
    let (audit, firsts) = audit();
    let first = |n: &str| firsts.iter().find(|(x, _)| *x == n).unwrap().1;
    // The stream whose first frame is `first(name)`.
    let uid = |n: &str| {
        audit
            .streams
            .iter()
            .find(|s| s.first_frame == first(n))
            .unwrap_or_else(|| panic!("no stream {n}"))
            .uid
            .clone()
    };
    let mut got: Vec<(String, Option<String>, Vec<u64>)> = audit
        .findings
        .iter()
        .filter(|f| f.code.starts_with("scd-"))
        .map(|f| (f.code.clone(), f.stream.clone(), f.frames.clone()))
        .collect();
    got.sort();
    let on = |code: &str, n: &str| (code.to_string(), Some(uid(n)), vec![first(n)]);
    let mut want = vec![
        on("scd-mismatch-ip", "other-group"),
        on("scd-mismatch-udp-port", "other-port"),
        on("scd-mismatch-appid", "other-appid"),
        on("scd-mismatch-source-ip", "rogue"),
        on("scd-second-source", "rogue"),
        on("scd-mismatch-transport", "l2-routed"),
        on("scd-unknown-publisher", "unknown"),
        on("scd-mismatch-ip", "rsv-other-group"),
        // The encrypted stream to gcb01's group is gcb01's (no finding); to another group, no
        // declared block accounts for it.
        on("scd-unknown-publisher", "encrypted-other-group"),
        ("scd-absent".to_string(), None, vec![]),
    ];
    want.sort();
    assert_eq!(got, want);
    let absent = audit
        .findings
        .iter()
        .find(|f| f.code == "scd-absent")
        .unwrap();
    assert!(absent.detail.contains("gcb02"), "{}", absent.detail);
    let ip = audit
        .findings
        .iter()
        .find(|f| f.code == "scd-mismatch-ip")
        .unwrap();
    assert!(
        ip.detail.contains("239.192.0.1") && ip.detail.contains("239.192.0.9"),
        "{}",
        ip.detail
    );
    let src = audit
        .findings
        .iter()
        .find(|f| f.code == "scd-mismatch-source-ip")
        .unwrap();
    assert!(src.detail.contains("IP-IGMPv3Src"), "{}", src.detail);
}

#[test]
fn routable_addresses_join_their_declared_blocks() {
    let scd = Scd::from_text(SCD).unwrap();
    let by = |n: &str| scd.publishers.iter().find(|d| d.cb_name == n).unwrap();
    let r = by("gcb01").routable.as_ref().unwrap();
    assert_eq!(r.destination.to_string(), "239.192.0.1");
    assert_eq!(r.udp_port, Some(102));
    assert_eq!(r.app_id, Some(0x1000));
    assert!(by("gcb02").routable.is_some());
    assert!(by("gcbL2").routable.is_none());
    let r = by("rsv01").routable.as_ref().unwrap();
    assert_eq!(r.destination.to_string(), "ff3e::8000:1");
}
