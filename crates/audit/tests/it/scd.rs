//! The audit against an SCD (`gander audit --scd`): a lab capture of the substation of
//! `tests/data/substation.scd` with one publisher as configured, one that contradicts its
//! control block in four fields, a publisher the SCD does not know, a second source of a
//! configured block, a merging unit on the wrong priority, a stream declared and absent, and
//! plain MMS to an IED the SCD declares on the MMS-over-TLS port. Every finding is asserted
//! with its frame numbers, and nothing else.

use gander_audit::scd::{BlockKind, Scd};
use gander_audit::{Audit, AuditOptions, Auditor};
use gander_testkit::frames::sv_frame;
use gander_testkit::tcp_tls::tcp_frame;
use gander_wire::data::Data;
use gander_wire::ethernet::{self, EthernetRepr, VlanTag};
use gander_wire::goose::GoosePdu;
use gander_wire::l2_frame::{GooseFrameRepr, L2Frame};
use gander_wire::Codec;

const SCD: &str = include_str!("../data/substation.scd");
const T0: u64 = 1_700_000_000_000_000_000;
const MS: u64 = 1_000_000;
const PROT1_MAC: [u8; 6] = [0x00, 0x30, 0xa7, 0, 0, 0x11];
const ROGUE_MAC: [u8; 6] = [0x00, 0x30, 0xa7, 0, 0, 0x66];
const MU01_MAC: [u8; 6] = [0x00, 0x30, 0xa7, 0, 0, 0x21];

struct G<'a> {
    src: [u8; 6],
    dst: [u8; 6],
    vlan: Option<VlanTag>,
    appid: u16,
    gocb: &'a str,
    dat_set: &'a str,
    go_id: &'a str,
    conf_rev: u32,
}

fn goose(g: &G, st: u32, sq: u32) -> Vec<u8> {
    L2Frame {
        eth: EthernetRepr {
            dst: g.dst,
            src: g.src,
            vlan: g.vlan,
            ethertype: ethernet::ETHERTYPE_GOOSE,
        },
        body: GooseFrameRepr {
            appid: g.appid,
            reserved1: 0,
            reserved2: 0,
            apdu: GoosePdu {
                gocb_ref: g.gocb.into(),
                time_allowed_to_live: 2000,
                dat_set: g.dat_set.into(),
                go_id: Some(g.go_id.into()),
                t: [0x65, 0, 0, 0, 0, 0, 0, 0x0a],
                st_num: st,
                sq_num: sq,
                simulation: false,
                conf_rev: g.conf_rev,
                nds_com: false,
                num_dat_set_entries: 1,
                all_data: vec![Data::Boolean(true)],
            }
            .to_vec(),
            extension: None,
        },
    }
    .to_vec()
    .unwrap()
}

fn tag(pcp: u8, vid: u16) -> Option<VlanTag> {
    Some(VlanTag {
        pcp,
        dei: false,
        vid,
    })
}

/// The lab capture: (frames, the frame numbers the assertions need).
fn capture() -> (Vec<Vec<u8>>, [u64; 8]) {
    let trip = G {
        src: PROT1_MAC,
        dst: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x11],
        vlan: tag(4, 0x64),
        appid: 0x0011,
        gocb: "PROT1PRO/LLN0$GO$gcbTrip",
        dat_set: "PROT1PRO/LLN0$dsTrip",
        go_id: "PROT1_TRIP",
        conf_rev: 2,
    };
    // gcbIntlk: APPID 0x0013 (SCD 0x0012), confRev 3 (SCD 1), unsecured (SCD Signature),
    // untagged (SCD VLAN 0x064).
    let intlk = G {
        dst: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x12],
        vlan: None,
        appid: 0x0013,
        gocb: "PROT1PRO/LLN0$GO$gcbIntlk",
        dat_set: "PROT1PRO/LLN0$dsIntlk",
        go_id: "PROT1_INTLK",
        conf_rev: 3,
        ..trip
    };
    let rogue = G {
        src: ROGUE_MAC,
        gocb: "ROGUE1CTRL/LLN0$GO$gcb1",
        dat_set: "ROGUE1CTRL/LLN0$ds1",
        go_id: "ROGUE",
        ..trip
    };
    // gcbTrip again, from another source address.
    let spoof = G {
        src: ROGUE_MAC,
        ..trip
    };
    let mut cap: Vec<Vec<u8>> = Vec::new();
    let mut push = |f: Vec<u8>| {
        cap.push(f);
        cap.len() as u64
    };
    let trip1 = push(goose(&trip, 1, 0));
    let intlk1 = push(goose(&intlk, 1, 0));
    push(goose(&trip, 1, 1));
    let intlk2 = push(goose(&intlk, 1, 1));
    let rogue1 = push(goose(&rogue, 1, 0));
    let spoof1 = push(goose(&spoof, 5, 0));
    // MU01 msvcb01 on priority 4, the SCD says 6; msvcb02 absent.
    let sv1 = push(sv_frame(
        MU01_MAC,
        [0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01],
        tag(4, 5),
        0x4001,
        "MU0101",
        0,
    ));
    push(sv_frame(
        MU01_MAC,
        [0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01],
        tag(4, 5),
        0x4001,
        "MU0101",
        1,
    ));
    // Plain MMS to PROT1 (the SCD gives it port 3782): SYN and a COTP connection request.
    let c = ([10, 0, 0, 50], 40000);
    let s = ([10, 0, 0, 11], 102);
    let syn = push(tcp_frame(c, s, 1000, 0x02, &[]));
    push(tcp_frame(s, c, 5000, 0x12, &[]));
    let cr = push(tcp_frame(
        c,
        s,
        1001,
        0x18,
        &[
            3, 0, 0, 22, 17, 0xe0, 0, 0, 0, 1, 0, 0xc1, 2, 0, 1, 0xc2, 2, 0, 1, 0xc0, 1, 10,
        ],
    ));
    let _ = trip1;
    (cap, [intlk1, intlk2, rogue1, spoof1, sv1, syn, cr, trip1])
}

fn audit(cap: &[Vec<u8>]) -> Audit {
    let mut a = Auditor::new(AuditOptions::default(), None);
    for (i, f) in cap.iter().enumerate() {
        a.feed(i as u64 + 1, T0 + i as u64 * MS, f);
    }
    a.finish()
}

fn uid_of(a: &Audit, pred: impl Fn(&gander_audit::stream::StreamReport) -> bool) -> String {
    a.streams.iter().find(|s| pred(s)).unwrap().uid.clone()
}

#[test]
fn the_scd_is_read_into_publishers_and_tls_only_access_points() {
    let scd = Scd::from_text(SCD).unwrap();
    assert!(scd.unread.is_empty());
    let refs: Vec<(&str, &str)> = scd
        .publishers
        .iter()
        .map(|d| (d.block.as_str(), d.reference.as_str()))
        .collect();
    assert_eq!(
        refs,
        [
            ("PROT1PRO/LLN0$GO$gcbTrip", "PROT1PRO/LLN0$GO$gcbTrip"),
            ("PROT1PRO/LLN0$GO$gcbIntlk", "PROT1PRO/LLN0$GO$gcbIntlk"),
            ("MU01MU/LLN0$MS$msvcb01", "MU0101"),
            ("MU01MU/LLN0$MS$msvcb02", "MU0102"),
        ]
    );
    let trip = &scd.publishers[0];
    assert_eq!(trip.kind, BlockKind::Goose);
    assert_eq!(trip.data_set.as_deref(), Some("PROT1PRO/LLN0$dsTrip"));
    assert_eq!(trip.conf_rev, 2);
    let a = trip.address.unwrap();
    assert_eq!(
        (a.app_id, a.vlan_id, a.vlan_priority),
        (Some(0x11), Some(0x64), Some(4))
    );
    assert_eq!(scd.tls_only.len(), 1);
    assert_eq!(scd.tls_only[0].address.to_string(), "10.0.0.11");
    assert!(Scd::from_text("<nope/>").is_err());
}

#[test]
fn every_scd_finding_is_present_with_its_frames_and_nothing_else() {
    let scd = Scd::from_text(SCD).unwrap();
    let (cap, [intlk1, intlk2, rogue1, spoof1, sv1, syn, cr, trip1]) = capture();
    let mut a = audit(&cap);
    let before: Vec<String> = a.findings.iter().map(|f| f.code.clone()).collect();
    gander_audit::scd::judge(&mut a, &scd);
    let trip = uid_of(&a, |s| {
        s.id.as_deref() == Some("PROT1PRO/LLN0$GO$gcbTrip") && s.first_frame == trip1
    });
    let intlk = uid_of(&a, |s| s.appid == Some(0x13));
    let rogue = uid_of(&a, |s| s.first_frame == rogue1);
    let spoof = uid_of(&a, |s| s.first_frame == spoof1);
    let sv = uid_of(&a, |s| s.kind == "sv");
    let mms = a.associations[0].uid.clone();
    let mut got: Vec<(String, String, Vec<u64>, u64)> = a
        .findings
        .iter()
        .filter(|f| f.code.starts_with("scd-"))
        .map(|f| {
            (
                f.code.clone(),
                f.stream.clone().unwrap_or_default(),
                f.frames.clone(),
                f.count,
            )
        })
        .collect();
    got.sort();
    let s = |x: &str| x.to_string();
    let mut want = vec![
        (s("scd-mismatch-appid"), intlk.clone(), vec![intlk1], 2),
        (s("scd-mismatch-conf-rev"), intlk.clone(), vec![intlk2], 2),
        (s("scd-mismatch-security"), intlk.clone(), vec![intlk1], 2),
        (s("scd-vlan-untagged"), intlk.clone(), vec![intlk1], 2),
        (s("scd-unknown-publisher"), rogue.clone(), vec![rogue1], 1),
        (s("scd-second-source"), spoof.clone(), vec![spoof1], 1),
        (s("scd-mismatch-priority"), sv.clone(), vec![sv1], 2),
        (s("scd-absent"), s(""), vec![], 0),
        (s("scd-mms-plain"), mms.clone(), vec![syn], 3),
    ];
    want.sort();
    assert_eq!(got, want, "{:#?}", a.findings);
    // The SCD's findings come on top of the audit's own, which are unchanged.
    let after: Vec<String> = a
        .findings
        .iter()
        .filter(|f| !f.code.starts_with("scd-"))
        .map(|f| f.code.clone())
        .collect();
    let mut b = before.clone();
    b.sort();
    let mut c = after;
    c.sort();
    assert_eq!(b, c);
    assert!(before.iter().any(|c| c == "mms-plain"));
    let _ = (trip, cr);
    // Details name the field, the SCD's value and the seen one.
    let detail = |code: &str| {
        a.findings
            .iter()
            .find(|f| f.code == code)
            .unwrap()
            .detail
            .clone()
    };
    assert!(detail("scd-mismatch-appid").contains("SCD 0x0012, seen 0x0013"));
    assert!(detail("scd-mismatch-conf-rev").contains("SCD 1, seen 3"));
    assert!(detail("scd-mismatch-priority").contains("SCD 6, seen 4"));
    assert!(detail("scd-absent").contains("MU01MU/LLN0$MS$msvcb02"));
    assert!(detail("scd-mms-plain").contains("PROT1/S1"));
    // Worst first still.
    assert!(a
        .findings
        .windows(2)
        .all(|w| w[0].severity >= w[1].severity));
    assert_eq!(
        a.findings[0].severity,
        gander_audit::finding::Severity::High
    );
}

#[test]
fn a_capture_that_matches_the_scd_has_no_scd_finding_but_the_absent_streams() {
    let scd = Scd::from_text(SCD).unwrap();
    let (cap, [_, _, _, _, _, _, _, trip1]) = capture();
    // Only gcbTrip's two frames, as configured.
    let only: Vec<Vec<u8>> = vec![cap[trip1 as usize - 1].clone(), cap[2].clone()];
    let mut a = audit(&only);
    gander_audit::scd::judge(&mut a, &scd);
    let codes: Vec<(&str, String)> = a
        .findings
        .iter()
        .filter(|f| f.code.starts_with("scd-"))
        .map(|f| (f.code.as_str(), f.detail.clone()))
        .collect();
    assert_eq!(codes.len(), 3, "{codes:#?}");
    assert!(codes.iter().all(|(c, _)| *c == "scd-absent"));
    assert!(codes.iter().all(|(_, d)| !d.contains("gcbTrip")));
}

#[test]
fn a_publisher_of_an_ied_the_scd_holds_but_cannot_give_is_not_called_unknown() {
    // PROT1's model broken (two GGIO1, one MMS name for two LNs): gander-scl refuses the IED.
    // (A data set member naming nothing, or an SDI its type lacks as in OpenSCD's
    // valid2007B4.scd, is repaired with a warning now, docs/scl.md "Repairs".)
    let ggio = r#"<LN lnClass="GGIO" lnType="T_GGIO" inst="1"/>"#;
    assert_eq!(SCD.matches(ggio).count(), 1);
    let broken = SCD.replacen(ggio, &format!("{ggio}{ggio}"), 1);
    let scd = Scd::from_text(&broken).unwrap();
    assert_eq!(scd.unread.len(), 1, "{:?}", scd.unread);
    assert_eq!(scd.unread[0].0, "PROT1");
    let (cap, [_, _, rogue1, _, _, _, _, trip1]) = capture();
    let mut a = audit(&cap);
    gander_audit::scd::judge(&mut a, &scd);
    let code_of = |frame: u64| -> Vec<&str> {
        a.findings
            .iter()
            .filter(|f| f.code.starts_with("scd-") && f.frames == [frame])
            .map(|f| f.code.as_str())
            .collect()
    };
    assert_eq!(code_of(trip1), ["scd-publisher-unread"]);
    assert_eq!(code_of(rogue1), ["scd-unknown-publisher"]);
    assert!(a.findings.iter().any(|f| f.code == "scd-ied-unread"));
}
