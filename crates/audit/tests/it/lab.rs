//! Lab captures made here, frame by frame: publishers protected with several IEC 62351-6
//! algorithms through gander-sec, a key rollover, injected replays, tampered tags, unsecured
//! publishers misbehaving, and traffic that is not IEC 61850. Each test asserts every finding
//! with its frame numbers and that nothing else is reported.

use gander_audit::{Audit, AuditOptions, Auditor};
use gander_sec::frame::protect_frame;
use gander_sec::spdu::RandomIv;
use gander_sec::{default_provider, KeyStore, Profile};
use gander_testkit::frames::{goose_frame, rgoose_spdu, sv_frame, udp_frame, UdpAddrs};
use gander_wire::data::Data;
use gander_wire::ethernet::{self, EthernetRepr};
use gander_wire::goose::GoosePdu;
use gander_wire::l2_frame::{GooseFrameRepr, L2Frame, RESERVED1_SIMULATION};
use gander_wire::sv::{Asdu, SavPdu};
use gander_wire::Codec;
use std::path::Path;

const KEYS: &str = r#"
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
[[key]]
id = 2
mac = "hmac-sha256-128"
key_ascii = "FEDCBA9876543210"
[[key]]
id = 3
mac = "aes-gmac-128"
key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
[[key]]
id = 4
enc = "aes-256-gcm"
key = "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100"
"#;

/// 2023-11-14, a time inside every key's (unbounded) validity.
const T0: u64 = 1_700_000_000_000_000_000;
const MS: u64 = 1_000_000;

const MAC_A: [u8; 6] = [0x00, 0x30, 0xa7, 0, 0, 0x0a];
const MAC_B: [u8; 6] = [0x00, 0x30, 0xa7, 0, 0, 0x0b];
const MAC_C: [u8; 6] = [0x00, 0x30, 0xa7, 0, 0, 0x0c];
const GOOSE_DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01];
const SV_DST: [u8; 6] = [0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01];

fn keys() -> KeyStore {
    KeyStore::from_toml(KEYS, Path::new("."), default_provider()).unwrap()
}

fn protect(store: &KeyStore, key: u32, frame: &[u8], ts: u64) -> Vec<u8> {
    protect_frame(
        Profile::Standard,
        store.get(key).unwrap(),
        frame,
        &mut RandomIv,
        ts / 1_000_000_000,
    )
    .unwrap()
    .unwrap()
}

/// A capture under construction: frames in time order, numbered from 1.
#[derive(Default)]
struct Cap(Vec<(u64, Vec<u8>)>);

impl Cap {
    fn push(&mut self, ts: u64, f: Vec<u8>) -> u64 {
        self.0.push((ts, f));
        self.0.len() as u64
    }
    fn audit(&self, keys: Option<&KeyStore>) -> Audit {
        let mut a = Auditor::new(AuditOptions::default(), keys);
        for (i, (ts, f)) in self.0.iter().enumerate() {
            a.feed(i as u64 + 1, *ts, f);
        }
        a.finish()
    }
}

/// (code, stream uid or "", frames), sorted: what the tests compare.
fn found(a: &Audit) -> Vec<(String, String, Vec<u64>)> {
    let mut v: Vec<_> = a
        .findings
        .iter()
        .map(|f| {
            (
                f.code.clone(),
                f.stream.clone().unwrap_or_default(),
                f.frames.clone(),
            )
        })
        .collect();
    v.sort();
    v
}

fn uid(a: &Audit, kind: &str, appid: Option<u16>) -> String {
    a.streams
        .iter()
        .find(|s| s.kind == kind && s.appid == appid)
        .unwrap_or_else(|| panic!("no {kind} stream {appid:?} in {:#?}", a.streams))
        .uid
        .clone()
}

fn expect(a: &Audit, mut want: Vec<(&str, String, Vec<u64>)>) {
    want.sort();
    let want: Vec<(String, String, Vec<u64>)> = want
        .into_iter()
        .map(|(c, s, f)| (c.to_string(), s, f))
        .collect();
    assert_eq!(found(a), want, "findings: {:#?}", a.findings);
}

/// A GOOSE frame with every field chosen.
#[allow(clippy::too_many_arguments)]
fn goose(
    src: [u8; 6],
    appid: u16,
    st: u32,
    sq: u32,
    tal: u32,
    sim: bool,
    nds: bool,
    r1_sim: bool,
) -> Vec<u8> {
    L2Frame {
        eth: EthernetRepr {
            dst: GOOSE_DST,
            src,
            vlan: None,
            ethertype: ethernet::ETHERTYPE_GOOSE,
        },
        body: GooseFrameRepr {
            appid,
            reserved1: if r1_sim { RESERVED1_SIMULATION } else { 0 },
            reserved2: 0,
            apdu: GoosePdu {
                gocb_ref: "LAB1/LLN0$GO$gcb2".into(),
                time_allowed_to_live: tal,
                dat_set: "LAB1/LLN0$DS2".into(),
                go_id: None,
                t: [0x65, 0, 0, 0, 0, 0, 0, 0x0a],
                st_num: st,
                sq_num: sq,
                simulation: sim,
                conf_rev: 1,
                nds_com: nds,
                num_dat_set_entries: 1,
                all_data: vec![Data::Boolean(st.is_multiple_of(2))],
            }
            .to_vec(),
            extension: None,
        },
    }
    .to_vec()
    .unwrap()
}

fn sv(appid: u16, smp: u16, synch: u8) -> Vec<u8> {
    L2Frame {
        eth: EthernetRepr {
            dst: SV_DST,
            src: MAC_C,
            vlan: None,
            ethertype: ethernet::ETHERTYPE_SV,
        },
        body: GooseFrameRepr {
            appid,
            reserved1: 0,
            reserved2: 0,
            apdu: SavPdu {
                security: None,
                asdus: vec![Asdu {
                    sv_id: "LAB1MU01".into(),
                    dat_set: None,
                    smp_cnt: smp,
                    conf_rev: 1,
                    refr_tm: None,
                    smp_synch: synch,
                    smp_rate: None,
                    sample: vec![0; 64],
                    smp_mod: None,
                    gm_identity: None,
                }],
            }
            .to_vec(),
            extension: None,
        },
    }
    .to_vec()
    .unwrap()
}

/// A UDP datagram to LLMNR (5355) whose checksum the sending NIC was to fill in: captured
/// on the sender, it carries a wrong checksum and is none of the audit's business.
fn llmnr_unfinished_checksum() -> Vec<u8> {
    let a = UdpAddrs {
        src_mac: MAC_B,
        dst_mac: [0x01, 0x00, 0x5e, 0, 0, 0xfc],
        src_ip: [10, 0, 0, 9],
        dst_ip: [224, 0, 0, 252],
        src_port: 49152,
        dst_port: 5355,
    };
    let mut f = udp_frame(&a, b"\x12\x34\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00");
    let n = f.len();
    // UDP checksum field: Ethernet 14 + IPv4 20 + 6.
    f[40] ^= 0x5a;
    assert!(n > 41);
    f
}

/// The mixed lab capture: every stream and every injected fault, with and without keys.
struct Mixed {
    cap: Cap,
    /// First frame of GOOSE A under key 2.
    rollover: u64,
    /// GOOSE A frame replayed.
    goose_replay: u64,
    /// SV C frame with a tampered tag.
    sv_tampered: u64,
    /// R-GOOSE D frame replayed.
    rgoose_replay: u64,
    /// Unsecured GOOSE B frames.
    b_frames: Vec<u64>,
    /// Frames of the secured streams A, C and D.
    a_frames: Vec<u64>,
    c_frames: Vec<u64>,
    d_frames: Vec<u64>,
    /// B: sqNum jumps.
    b_sq_gap: u64,
    /// B: late beyond timeAllowedtoLive.
    b_tal: u64,
}

fn mixed(store: &KeyStore) -> Mixed {
    let mut cap = Cap::default();
    let mut m = Mixed {
        cap: Cap::default(),
        rollover: 0,
        goose_replay: 0,
        sv_tampered: 0,
        rgoose_replay: 0,
        b_frames: vec![],
        a_frames: vec![],
        c_frames: vec![],
        d_frames: vec![],
        b_sq_gap: 0,
        b_tal: 0,
    };
    let mut a_kept = Vec::new();
    let mut d_kept = Vec::new();
    let mut b_sq = 0;
    for step in 0..40u64 {
        let ts = T0 + step * 50 * MS;
        // GOOSE A, 0x0001: HMAC-SHA256-128, key 1 then key 2 from step 20; state change at 10.
        let (st, sq) = if step < 10 {
            (1, step as u32)
        } else {
            (2, step as u32 - 10)
        };
        let key = if step < 20 { 1 } else { 2 };
        let f = protect(
            store,
            key,
            &goose_frame(MAC_A, GOOSE_DST, None, 0x0001, st, sq),
            ts,
        );
        a_kept.push(f.clone());
        let n = cap.push(ts, f);
        m.a_frames.push(n);
        if step == 20 {
            m.rollover = n;
        }
        // SV C, 0x4000: AES-GMAC-128, every step; step 15 tampered in its last octet (the mAC).
        let mut f = protect(
            store,
            3,
            &sv_frame(MAC_C, SV_DST, None, 0x4000, "LAB1MU01", step as u16),
            ts + MS,
        );
        if step == 15 {
            let l = f.len() - 1;
            f[l] ^= 1;
        }
        let n = cap.push(ts + MS, f);
        m.c_frames.push(n);
        if step == 15 {
            m.sv_tampered = n;
        }
        // R-GOOSE D, appid 0x1000, AES-256-GCM, every other step.
        if step % 2 == 0 {
            let spdu = rgoose_spdu(
                Profile::Standard,
                0x1000,
                step as u32 / 2 + 1,
                1,
                step as u32 / 2,
            );
            let f = protect(
                store,
                4,
                &udp_frame(&UdpAddrs::IED_TO_SUB, &spdu),
                ts + 2 * MS,
            );
            d_kept.push(f.clone());
            let n = cap.push(ts + 2 * MS, f);
            m.d_frames.push(n);
        }
        // Unsecured GOOSE B, 0x0002, TAL 200 ms: every 4th step; sqNum skips 2 at step 16;
        // silent from step 24 to 32 (400 ms > TAL).
        if step % 4 == 0 && !(25..32).contains(&step) {
            b_sq += if step == 16 { 3 } else { 1 };
            let n = cap.push(
                ts + 3 * MS,
                goose(MAC_B, 0x0002, 7, b_sq, 200, false, false, false),
            );
            m.b_frames.push(n);
            if step == 16 {
                m.b_sq_gap = n;
            }
            if step == 32 {
                m.b_tal = n;
            }
        }
        // Not IEC 61850: LLMNR with an unfinished checksum.
        if step == 5 {
            cap.push(ts + 4 * MS, llmnr_unfinished_checksum());
        }
        // Injected replays: GOOSE A's frame of step 12 again at step 30; R-GOOSE D's first
        // frame again at step 35.
        if step == 30 {
            m.goose_replay = cap.push(ts + 5 * MS, a_kept[12].clone());
            m.a_frames.push(m.goose_replay);
        }
        if step == 35 {
            m.rgoose_replay = cap.push(ts + 5 * MS, d_kept[0].clone());
            m.d_frames.push(m.rgoose_replay);
        }
    }
    m.cap = cap;
    m
}

#[test]
fn with_keys_every_fault_is_found_at_its_frame_and_nothing_else() {
    let store = keys();
    let m = mixed(&store);
    let a = m.cap.audit(Some(&store));
    let (ga, gb) = (uid(&a, "goose", Some(1)), uid(&a, "goose", Some(2)));
    let sc = uid(&a, "sv", Some(0x4000));
    // Encrypted: the APPID is not readable without decrypting, the stream is keyed without it.
    let rd = uid(&a, "r-goose", None);
    expect(
        &a,
        vec![
            ("key-rollover", ga.clone(), vec![m.rollover]),
            ("sec-replay", ga.clone(), vec![m.goose_replay]),
            ("sec-bad-mac", sc.clone(), vec![m.sv_tampered]),
            ("sec-replay", rd.clone(), vec![m.rgoose_replay]),
            ("unsecured", gb.clone(), m.b_frames.clone()),
            ("goose-sq-gap", gb.clone(), vec![m.b_sq_gap]),
            ("goose-tal-exceeded", gb.clone(), vec![m.b_tal]),
        ],
    );
    let s = |u: &str| a.streams.iter().find(|s| s.uid == u).unwrap().clone();
    let sa = s(&ga);
    assert_eq!((sa.frames, sa.verified, sa.failed), (41, 40, 1));
    assert_eq!(sa.key_ids, vec![1, 2]);
    assert_eq!((sa.mac, sa.enc), (Some("hmac-sha256-128"), Some("none")));
    assert_eq!(sa.state_changes, 1);
    assert_eq!(sa.id.as_deref(), Some("GANDERIED/LLN0$GO$gcb01"));
    let sd = s(&rd);
    assert_eq!(
        (sd.verified, sd.failed, sd.enc),
        (20, 1, Some("aes-256-gcm"))
    );
    let ssc = s(&sc);
    assert_eq!((ssc.verified, ssc.failed), (39, 1));
    assert_eq!(ssc.id.as_deref(), Some("LAB1MU01"));
    assert_eq!(s(&gb).security, "unsecured");
    assert_eq!(a.summary.kinds.get("other"), Some(&1));
    assert_eq!(a.exit_code(), 5);
}

#[test]
fn without_keys_secured_streams_are_listed_and_only_cleartext_behaviour_is_judged() {
    let store = keys();
    let m = mixed(&store);
    let a = m.cap.audit(None);
    let (ga, gb) = (uid(&a, "goose", Some(1)), uid(&a, "goose", Some(2)));
    let sc = uid(&a, "sv", Some(0x4000));
    let rd = uid(&a, "r-goose", None);
    let (fa, fc, fd) = (m.a_frames.clone(), m.c_frames.clone(), m.d_frames.clone());
    assert_eq!((fa.len(), fc.len(), fd.len()), (41, 40, 21));
    expect(
        &a,
        vec![
            ("not-verified", ga.clone(), fa),
            ("not-verified", sc.clone(), fc),
            ("not-verified", rd.clone(), fd),
            ("key-rollover", ga.clone(), vec![m.rollover]),
            // Without the key the replayed GOOSE is still an older stNum/sqNum.
            ("goose-out-of-order", ga.clone(), vec![m.goose_replay]),
            ("unsecured", gb.clone(), m.b_frames.clone()),
            ("goose-sq-gap", gb.clone(), vec![m.b_sq_gap]),
            ("goose-tal-exceeded", gb.clone(), vec![m.b_tal]),
        ],
    );
    let sa = a.streams.iter().find(|s| s.uid == ga).unwrap();
    assert_eq!(sa.mac_len, Some(16));
    assert_eq!(sa.mac, None);
    assert_eq!(a.exit_code(), 4);
}

#[test]
fn goose_behaviour_of_an_unsecured_publisher() {
    let mut cap = Cap::default();
    let mut all = vec![];
    let mut at = |cap: &mut Cap, ms: u64, f: Vec<u8>| {
        let n = cap.push(T0 + ms * MS, f);
        all.push(n);
        n
    };
    let g = |st, sq| goose(MAC_B, 0x0003, st, sq, 2000, false, false, false);
    at(&mut cap, 0, g(4, 0));
    at(&mut cap, 10, g(4, 1));
    let dup = at(&mut cap, 20, g(4, 1));
    let ooo = at(&mut cap, 30, g(4, 0));
    let stgap = at(&mut cap, 40, g(7, 0));
    let lost = at(&mut cap, 50, g(8, 3));
    let restart = at(&mut cap, 60, g(1, 0));
    let sim = at(
        &mut cap,
        70,
        goose(MAC_B, 0x0003, 1, 1, 2000, true, false, false),
    );
    let r1 = at(
        &mut cap,
        80,
        goose(MAC_B, 0x0003, 1, 2, 2000, false, false, true),
    );
    let nds = at(
        &mut cap,
        90,
        goose(MAC_B, 0x0003, 1, 3, 2000, false, true, false),
    );
    let a = cap.audit(None);
    let u = uid(&a, "goose", Some(3));
    expect(
        &a,
        vec![
            ("unsecured", u.clone(), all.clone()),
            ("goose-duplicate", u.clone(), vec![dup]),
            ("goose-out-of-order", u.clone(), vec![ooo]),
            ("goose-st-gap", u.clone(), vec![stgap]),
            ("goose-sq-gap", u.clone(), vec![lost]),
            ("goose-restart", u.clone(), vec![restart]),
            ("goose-simulation", u.clone(), vec![sim, r1]),
            ("goose-ndscom", u.clone(), vec![nds]),
        ],
    );
    let s = &a.streams[0];
    assert_eq!(s.state_changes, 3);
    assert_eq!(s.tal_ms, Some(2000));
    assert_eq!(s.id.as_deref(), Some("LAB1/LLN0$GO$gcb2"));
    assert_eq!(s.dat_set.as_deref(), Some("LAB1/LLN0$DS2"));
    assert!(s.simulation);
}

#[test]
fn sv_behaviour_of_an_unsecured_merging_unit() {
    let mut cap = Cap::default();
    let mut all = vec![];
    let mut n_of = std::collections::HashMap::new();
    // 4000 samples per second wrapping at 4000, with faults.
    let counts: Vec<(u16, u8, &str)> = vec![
        (3997, 2, ""),
        (3998, 2, ""),
        (3999, 2, ""),
        (0, 2, ""),
        (1, 2, ""),
        (4, 2, "gap"),
        (4, 2, "dup"),
        (3, 2, "ooo"),
        (5, 0, "nosync"),
        (6, 2, ""),
    ];
    for (i, (c, synch, tag)) in counts.iter().enumerate() {
        let n = cap.push(T0 + i as u64 * 250_000, sv(0x4001, *c, *synch));
        all.push(n);
        if !tag.is_empty() {
            n_of.insert(*tag, n);
        }
    }
    let a = cap.audit(None);
    let u = uid(&a, "sv", Some(0x4001));
    expect(
        &a,
        vec![
            ("unsecured", u.clone(), all),
            ("sv-gap", u.clone(), vec![n_of["gap"]]),
            ("sv-duplicate", u.clone(), vec![n_of["dup"]]),
            ("sv-out-of-order", u.clone(), vec![n_of["ooo"]]),
            ("sv-not-synchronised", u.clone(), vec![n_of["nosync"]]),
        ],
    );
    let s = &a.streams[0];
    assert_eq!(s.smp_synch, [1, 0, 9]);
    let arr = s.arrival.as_ref().unwrap();
    assert_eq!(arr.class, Some("TT6"));
    assert!((arr.p50_ms - 0.25).abs() < 1e-9);
}

#[test]
fn a_secured_stream_that_turns_unsecured_is_a_downgrade() {
    let store = keys();
    let mut cap = Cap::default();
    cap.push(
        T0,
        protect(&store, 1, &goose_frame(MAC_A, GOOSE_DST, None, 5, 1, 0), T0),
    );
    cap.push(
        T0 + MS,
        protect(&store, 1, &goose_frame(MAC_A, GOOSE_DST, None, 5, 1, 1), T0),
    );
    let strip = cap.push(T0 + 2 * MS, goose_frame(MAC_A, GOOSE_DST, None, 5, 1, 2));
    for keys in [Some(&store), None] {
        let a = cap.audit(keys);
        let u = uid(&a, "goose", Some(5));
        let mut want = vec![("security-downgrade", u.clone(), vec![strip])];
        if keys.is_none() {
            want.push(("not-verified", u.clone(), vec![1, 2]));
        }
        expect(&a, want);
        assert_eq!(a.exit_code(), 5);
    }
}

#[test]
fn a_clean_secured_capture_has_no_finding_above_info_and_exits_0() {
    let store = keys();
    let mut cap = Cap::default();
    for i in 0..20u64 {
        let ts = T0 + i * 100 * MS;
        cap.push(
            ts,
            protect(
                &store,
                1,
                &goose_frame(MAC_A, GOOSE_DST, None, 1, 1, i as u32),
                ts,
            ),
        );
    }
    let a = cap.audit(Some(&store));
    expect(&a, vec![]);
    assert_eq!(a.exit_code(), 0);
    assert_eq!(a.streams[0].verified, 20);
}

/// The Zeek-convention logs of the mixed capture, read back with a JSON-lines reader: every line
/// is one JSON object that fits its log's schema, every stream is in its kind's log, and the
/// findings log carries the frame numbers the audit found.
#[test]
fn zeek_logs_read_back_line_by_line_and_fit_the_schema() {
    let store = keys();
    let m = mixed(&store);
    let a = m.cap.audit(Some(&store));
    let logs = gander_audit::zeek::logs(&a);
    assert_eq!(
        logs.iter().map(|l| l.0).collect::<Vec<_>>(),
        gander_audit::zeek::LOGS.to_vec()
    );
    let mut uids = std::collections::HashSet::new();
    for (log, lines) in &logs {
        let text = lines.join("\n");
        for line in std::io::BufRead::lines(text.as_bytes()) {
            let line = line.unwrap();
            gander_audit::zeek::check_line(log, &line)
                .unwrap_or_else(|e| panic!("{log}: {e}: {line}"));
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert!(
                uids.insert(v["uid"].as_str().unwrap().to_string()),
                "uids are unique"
            );
        }
    }
    let by = |name: &str| logs.iter().find(|l| l.0 == name).unwrap().1.clone();
    assert_eq!(by("goose").len(), 2);
    assert_eq!(by("sv").len(), 1);
    assert_eq!(by("rgoose").len(), 1);
    assert_eq!(by("findings").len(), a.findings.len());
    let rg: serde_json::Value = serde_json::from_str(&by("rgoose")[0]).unwrap();
    assert_eq!(rg["id.orig_h"], "10.85.0.1");
    assert_eq!(rg["id.resp_p"], 102);
    assert_eq!(rg["enc"], "aes-256-gcm");
    let replay = by("findings")
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["code"] == "sec-replay" && v["stream_uid"] == rg["uid"])
        .unwrap();
    assert_eq!(replay["frames"], serde_json::json!([m.rgoose_replay]));
    assert_eq!(replay["severity"], "high");
}

/// The HTML report: one self-contained page with the findings (frame numbers included), the
/// inventory and one inline SVG plot per stream; peer-controlled strings are escaped.
#[test]
fn the_html_report_holds_findings_inventory_and_plots() {
    let store = keys();
    let m = mixed(&store);
    let a = m.cap.audit(Some(&store));
    let h = gander_audit::html::render(&a, "lab <mixed>");
    assert!(h.starts_with("<!DOCTYPE html>"));
    assert!(h.contains("lab &lt;mixed&gt;"));
    assert!(!h.contains("<mixed>"));
    assert_eq!(h.matches("<svg").count(), a.streams.len());
    assert_eq!(h.matches("<tr class=").count(), a.findings.len());
    assert!(h.contains("<code>sec-replay</code>"));
    assert!(h.contains(&format!("<td>{}</td>", m.sv_tampered)));
    for s in &a.streams {
        assert!(h.contains(&format!("id=\"plot-{}\"", s.uid)));
    }
    assert!(!h.contains("<script"));
}

/// A Linux "any" capture records a frame once per interface it crosses, microseconds apart
/// (robidev/iec61850-dissector `test/capture.pcapng`, a Linux cooked capture: each GOOSE and SV
/// frame three or four times within 35 µs): the copies are noted as `capture-copy`, not as
/// duplicates, and do not enter the inter-arrival times.
#[test]
fn copies_of_one_frame_from_several_interfaces_are_not_duplicates() {
    let mut cap = Cap::default();
    let g = |sq| goose(MAC_B, 0x0007, 1, sq, 2000, false, false, false);
    let mut all = vec![];
    all.push(cap.push(T0, g(0)));
    let c1 = cap.push(T0 + 20_000, g(0));
    let c2 = cap.push(T0, g(0));
    all.extend([c1, c2]);
    all.push(cap.push(T0 + 10 * MS, g(1)));
    let dup = cap.push(T0 + 20 * MS, g(1));
    all.push(dup);
    let a = cap.audit(None);
    let u = uid(&a, "goose", Some(7));
    expect(
        &a,
        vec![
            ("unsecured", u.clone(), all),
            ("capture-copy", u.clone(), vec![c1, c2]),
            ("goose-duplicate", u.clone(), vec![dup]),
        ],
    );
    assert_eq!(a.streams[0].arrival.as_ref().unwrap().gaps, 1);
}

/// pg-ot/virtual-substation-beta `goose.pcapng` (Linux "any"): one GOOSE frame recorded four
/// times, packet types 2, 4, 4, 2, the third copy 72.1 µs after the first (the fourth stamped
/// like the first). Copies recorded with another packet type are `capture-copy` up to 1 ms; a
/// frame the publisher sent twice is recorded alike (packet type 2 again, at its
/// retransmission interval, here 0.5 ms) and stays a `goose-duplicate`.
#[test]
fn copies_recorded_with_another_packet_type_are_copies_a_resend_is_not() {
    let g = |sq| goose(MAC_B, 0x0007, 1, sq, 2000, false, false, false);
    let rec = |t| gander_audit::Recorded {
        interface: 0,
        packet_type: Some(t),
    };
    let frames = [
        (T0, 0, 2),
        (T0 + 31_000, 0, 4),
        (T0 + 72_100, 0, 4),
        (T0, 0, 2),
        (T0 + 10 * MS, 1, 2),
        (T0 + 10 * MS + 500_000, 1, 2),
    ];
    let mut a = Auditor::new(AuditOptions::default(), None);
    for (i, (ts, sq, t)) in frames.iter().enumerate() {
        a.feed_recorded(i as u64 + 1, *ts, &g(*sq), rec(*t));
    }
    let a = a.finish();
    let u = uid(&a, "goose", Some(7));
    expect(
        &a,
        vec![
            ("unsecured", u.clone(), vec![1, 2, 3, 4, 5, 6]),
            ("capture-copy", u.clone(), vec![2, 3, 4]),
            ("goose-duplicate", u.clone(), vec![6]),
        ],
    );
    // Recorded alike (one interface, no packet type), 72.1 µs is no capture copy.
    let mut cap = Cap::default();
    cap.push(T0, g(0));
    cap.push(T0 + 72_100, g(0));
    let a = cap.audit(None);
    let u = uid(&a, "goose", Some(7));
    expect(
        &a,
        vec![
            ("unsecured", u.clone(), vec![1, 2]),
            ("goose-duplicate", u.clone(), vec![2]),
        ],
    );
}

/// CSCRC-SCREED/QUT-ZSS-2023-SV `931/9311a` (the field test's QUTSV_9311a, tshark frames
/// 650-654: smpCnt 309, 1, 310, 2): an attacker injects SV with smpCnt 1, 2, 3, ... on the
/// APPID of a real stream. Every injected frame is `sv-out-of-order` (it was 596 `sv-gap`s,
/// "smpCnt 1 after 1 missing samples", a wrap learnt at 310), the real stream has no finding.
#[test]
fn sv_injection_with_low_counts_is_out_of_order_not_a_wrap() {
    let mut cap = Cap::default();
    let mut injected = vec![];
    let mut all = vec![];
    all.push(cap.push(T0, sv(0x4001, 308, 2)));
    for k in 0..20u16 {
        let t = T0 + u64::from(k + 1) * 250_000;
        all.push(cap.push(t, sv(0x4001, 309 + k, 2)));
        let n = cap.push(t + 100_000, sv(0x4001, 1 + k, 2));
        injected.push(n);
        all.push(n);
    }
    let a = cap.audit(None);
    let u = uid(&a, "sv", Some(0x4001));
    expect(
        &a,
        vec![
            ("unsecured", u.clone(), all),
            ("sv-out-of-order", u.clone(), injected),
        ],
    );
    let f = a
        .findings
        .iter()
        .find(|f| f.code == "sv-out-of-order")
        .unwrap();
    assert_eq!(
        f.detail,
        "smpCnt 1 after 309: a step back that is not a wrap (IEC 61850-9-2: smpCnt wraps to 0): delayed, replayed or injected"
    );
}

/// Without the key, a version-2 session header does not say whether the payload is encrypted,
/// and AES-GCM ciphertext sometimes starts like a payload element (a payload type, a nonzero
/// simulation octet, an APPID): CI once reported `goose-simulation` on an encrypted R-GOOSE
/// frame this way. Over many random IVs, nothing read from ciphertext may become a finding or
/// an APPID.
#[test]
fn ciphertext_is_never_read_as_cleartext_elements() {
    let store = keys();
    let mut cap = Cap::default();
    for i in 0..4000u32 {
        let spdu = rgoose_spdu(Profile::Standard, 0x1000, i + 1, 1, i);
        let ts = T0 + u64::from(i) * MS;
        cap.push(
            ts,
            protect(&store, 4, &udp_frame(&UdpAddrs::IED_TO_SUB, &spdu), ts),
        );
    }
    let a = cap.audit(None);
    let codes: Vec<String> = found(&a).into_iter().map(|(c, _, _)| c).collect();
    assert_eq!(codes, vec!["not-verified".to_string()], "{:#?}", a.findings);
    assert_eq!(a.streams.len(), 1, "{:#?}", a.streams);
    assert_eq!(a.streams[0].appid, None);
}
