//! Client and server association machines driven against each other in memory, plus the
//! server fed libiec61850's captured bytes (`docs/mms-bytes.md`) and malformed input at every layer.

use gander_mms::association::{
    ClientAssociation, ClientConfig, CloseReason, Event, ServerAssociation, ServerConfig, Step,
};
use gander_mms::model::{self, ImpModel, ModelConfig, Trigger};
use gander_mms::pdu::ConfirmedResponse;
use gander_mms::rcb::{enable_reporting, mms_name, UrcbValues};
use gander_mms::report::Report;
use gander_mms::service::AccessResult;
use gander_mms::{Error, Layer};
use proptest::prelude::*;

fn h(s: &str) -> Vec<u8> {
    hex::decode(s.split_whitespace().collect::<String>()).unwrap()
}

/// Move bytes both ways until both sides are quiet.
fn pump(c: &mut ClientAssociation, s: &mut ServerAssociation, m: &mut ImpModel, now: u64) {
    loop {
        let mut moved = false;
        while let Some(p) = c.poll_transmit() {
            s.handle_input(now, &p, m);
            moved = true;
        }
        while let Some(p) = s.poll_transmit() {
            c.handle_input(now, &p);
            moved = true;
        }
        if !moved {
            break;
        }
    }
}

fn drain_c(c: &mut ClientAssociation) -> Vec<Event> {
    std::iter::from_fn(|| c.poll_event()).collect()
}
fn drain_s(s: &mut ServerAssociation) -> Vec<Event> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

fn steps(ev: &[Event]) -> Vec<(Step, u64)> {
    ev.iter()
        .filter_map(|e| match e {
            Event::Step { step, at } => Some((*step, *at)),
            _ => None,
        })
        .collect()
}

fn closed(ev: &[Event]) -> Option<CloseReason> {
    ev.iter().find_map(|e| match e {
        Event::Closed { reason, .. } => Some(reason.clone()),
        _ => None,
    })
}

#[test]
fn connect_enable_reports_release() {
    let mut m = ImpModel::new(ModelConfig::default());
    let mut c = ClientAssociation::new(ClientConfig::default());
    let mut s = ServerAssociation::new(ServerConfig::default(), 7, 0);

    // Connect: CR is libiec61850's byte for byte.
    c.connect(100).unwrap();
    let cr = c.poll_transmit().unwrap();
    assert_eq!(cr, h("03000016 11E00000000100 C0010D C2020001 C1020001"));
    s.handle_input(110, &cr, &mut m);
    let cc = s.poll_transmit().unwrap();
    assert_eq!(cc, h("03000016 11D00001000100 C0010D C2020001 C1020001"));
    c.handle_input(120, &cc);
    let cn = c.poll_transmit().unwrap();
    // The CN carries the libiec61850 initiate request and AARQ prefix.
    let cn_hex = hex::encode(&cn);
    assert!(cn_hex.contains(
        "a82680030 0fde8810105820105830 10aa416800101810305f100820c03ee1c00000408000079ef18"
            .replace(' ', "")
            .as_str()
    ));
    assert!(cn_hex.contains(
        "a1070605 28ca220203 a2070605 2901876701 a303 02010c a606 0604 29018767 a703 02010c"
            .replace(' ', "")
            .as_str()
    ));
    s.handle_input(130, &cn, &mut m);
    let ac = s.poll_transmit().unwrap();
    c.handle_input(140, &ac);
    assert!(c.poll_transmit().is_none());

    let ce = drain_c(&mut c);
    assert_eq!(
        steps(&ce),
        vec![
            (Step::CotpConnectSent, 100),
            (Step::CotpConnected, 120),
            (Step::AssociateSent, 120),
            (Step::Associated, 140)
        ]
    );
    let se = drain_s(&mut s);
    assert_eq!(
        steps(&se),
        vec![
            (Step::CotpConnectReceived, 110),
            (Step::CotpConnected, 110),
            (Step::AssociateReceived, 130),
            (Step::Associated, 130)
        ]
    );
    assert_eq!(c.negotiated().unwrap().local_detail, Some(65000));
    assert_eq!(s.calling_ap_title(), Some("1.1.1.999"));

    // getRCBValues.
    let rcb = mms_name(model::RCB_REF).unwrap();
    let id = c.read(200, vec![rcb.clone()]).unwrap();
    pump(&mut c, &mut s, &mut m, 200);
    let ev = drain_c(&mut c);
    let Some(Event::Response {
        invoke_id,
        response: ConfirmedResponse::Read(r),
        ..
    }) = ev.into_iter().next()
    else {
        panic!()
    };
    assert_eq!(invoke_id, id);
    let AccessResult::Success(d) = &r.results[0] else {
        panic!()
    };
    let v = UrcbValues::from_data(d).unwrap();
    assert_eq!((v.rpt_id.as_str(), v.rpt_ena), ("rpt01", false));

    // Enable with GI, as libiec61850 does.
    c.write(300, enable_reporting(&rcb, true)).unwrap();
    pump(&mut c, &mut s, &mut m, 300);
    let ev = drain_c(&mut c);
    assert!(
        matches!(&ev[0], Event::Response { response: ConfirmedResponse::Write(w), .. } if w.0 == vec![Ok(()); 4])
    );
    assert_eq!(
        drain_s(&mut s)
            .iter()
            .filter(|e| matches!(e, Event::Written { result: Ok(()), .. }))
            .count(),
        4
    );

    // GI report, then N data-change reports.
    assert!(m.take_gi(s.conn_id()));
    let gi = m
        .build_report(
            s.conn_id(),
            Trigger::GeneralInterrogation,
            1_700_000_000_000,
        )
        .unwrap();
    s.send_information_report(&gi).unwrap();
    const N: u16 = 20;
    for i in 0..N {
        let t = m.change_all(1_700_000_000_000 + i as u64);
        let ir = m.build_report(s.conn_id(), t, 1_700_000_000_000).unwrap();
        s.send_information_report(&ir).unwrap();
    }
    pump(&mut c, &mut s, &mut m, 400);
    let reports: Vec<Report> = drain_c(&mut c)
        .into_iter()
        .filter_map(|e| match e {
            Event::InformationReport { report, at } => {
                assert_eq!(at, 400);
                Some(Report::from_information_report(&report).unwrap())
            }
            _ => None,
        })
        .collect();
    assert_eq!(reports.len(), N as usize + 1);
    for (i, r) in reports.iter().enumerate() {
        assert_eq!(r.rpt_id, "rpt01");
        assert_eq!(r.seq_num, Some(i as u16));
        assert_eq!(r.data_set.as_deref(), Some(model::DATA_SET_REF));
        assert_eq!(r.values.len(), 3);
    }

    // Release.
    c.release(500).unwrap();
    pump(&mut c, &mut s, &mut m, 510);
    assert!(c.is_closed() && s.is_closed());
    let ce = drain_c(&mut c);
    assert_eq!(closed(&ce), Some(CloseReason::Released));
    assert_eq!(
        steps(&ce),
        vec![
            (Step::ConcludeRequested, 500),
            (Step::Concluded, 510),
            (Step::ReleaseRequested, 510),
            (Step::Released, 510)
        ]
    );
    assert_eq!(closed(&drain_s(&mut s)), Some(CloseReason::Released));
    // The RCB was freed.
    assert!(!m.is_enabled_for(7));
}

#[test]
fn release_bytes_match_mms_tls() {
    let mut m = ImpModel::new(ModelConfig::default());
    let mut c = ClientAssociation::new(ClientConfig::default());
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, 0);
    c.connect(0).unwrap();
    pump(&mut c, &mut s, &mut m, 0);
    c.release(1).unwrap();
    let concl = c.poll_transmit().unwrap();
    // TPKT, DT, DATA 01000100, P-DATA on context 3, conclude 8B 00.
    assert_eq!(
        concl,
        h("0300 0016 02F080 01000100 61 09 30 07 020103 A0 02 8B00")
    );
    s.handle_input(1, &concl, &mut m);
    let resp = s.poll_transmit().unwrap();
    assert!(resp.ends_with(&h("A0 02 8C00")));
    c.handle_input(1, &resp);
    let finish = c.poll_transmit().unwrap();
    // FINISH with RLRQ 62 03 80 01 00 on context 1.
    assert_eq!(
        &finish[7..],
        &h("09 10 C1 0E 61 0C 30 0A 020101 A0 05 6203800100")[..]
    );
    s.handle_input(1, &finish, &mut m);
    let disc = s.poll_transmit().unwrap();
    assert_eq!(
        &disc[7..],
        &h("0A 0D C1 0B 61 09 30 07 020101 A0 02 6300")[..]
    );
    c.handle_input(1, &disc);
    assert!(c.is_closed());
}

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    gander_wire::ber_sink::tlv(&mut v, tag, content);
    v
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// The full CN of a libiec61850 client, assembled from the [V] pieces of `docs/mms-bytes.md` §1.
fn libiec61850_cn_packet() -> Vec<u8> {
    let initiate = h("A8 26 80 03 00FDE8 81 01 05 82 01 05 83 01 0A A4 16 80 01 01 81 03 05F100 82 0C 03EE1C00000408000079EF18");
    let ext = tlv(0x28, &cat(&[&h("02 01 03"), &tlv(0xa0, &initiate)]));
    let aarq = tlv(
        0x60,
        &cat(&[
            &h("A1 07 06 05 28CA220203 A2 07 06 05 2901876701 A3 03 02 01 0C A6 06 06 04 29018767 A7 03 02 01 0C"),
            &tlv(0xbe, &ext),
        ]),
    );
    let ud = tlv(0x61, &tlv(0x30, &cat(&[&h("02 01 01"), &tlv(0xa0, &aarq)])));
    let a2 = cat(&[
        &h("81 04 00000001 82 04 00000001 A4 23 30 0F 02 01 01 06 04 52010001 30 04 06 02 5101 30 10 02 01 03 06 05 28CA220201 30 04 06 02 5101"),
        &ud,
    ]);
    let cp = tlv(0x31, &cat(&[&h("A0 03 80 01 01"), &tlv(0xa2, &a2)]));
    let mut params = h("05 06 13 01 00 16 01 02 14 02 00 02 33 02 0001 34 02 0001 C1");
    params.push(cp.len() as u8);
    params.extend(cp);
    let mut spdu = vec![0x0d, params.len() as u8];
    spdu.extend(params);
    let mut dt = h("02 F0 80");
    dt.extend(spdu);
    gander_mms::tpkt::frame(&dt).unwrap()
}

#[test]
fn server_accepts_libiec61850_bytes_and_answers_like_it() {
    let mut m = ImpModel::new(ModelConfig::default());
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, 0);
    s.handle_input(0, &h("0300000B 06E00000000100"), &mut m); // bare CR [V]
    let cc = s.poll_transmit().unwrap();
    assert_eq!(cc, h("03000013 0ED00001000100 C2020001 C1020001"));
    // Without C0 the TPDU size is ISO 8073's default of 128 octets, so use the full CR
    // (libiec61850's client requires the AC in one DT).
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, 0);
    s.handle_input(
        0,
        &h("03000016 11E00000000100 C0010D C2020001 C1020001"),
        &mut m,
    );
    assert!(s.poll_transmit().is_some());
    s.handle_input(1, &libiec61850_cn_packet(), &mut m);
    assert!(s.is_associated(), "{:?}", drain_s(&mut s));
    let ac = hex::encode(s.poll_transmit().unwrap());
    // AC with PGI 5 echo, CPA with 83 00000001 and two accepted contexts, AARE [V].
    assert!(ac.contains("05061301001601021402000234020001c1"));
    assert!(ac.contains(
        "8304 00000001 a512 3007800100 81025101 3007800100 81025101"
            .replace(' ', "")
            .as_str()
    ));
    assert!(ac.contains(
        "a107060528ca220203 a203020100 a305a103020100 be"
            .replace(' ', "")
            .as_str()
    ));
    // servicesSupportedCalled: libiec61850's server sets status, obtainFile, readJournal
    // and the file services too (`EE1C00000002000040ED18`); gander sets only what it answers.
    assert!(
        ac.contains(
            "a92680030 0fde8810105820105830 10aa416800101810305f100820c03ee1c000000000000000118"
                .replace(" ", "")
                .as_str()
        ),
        "{ac}"
    );

    // The captured read layout of GGIO1$ST$Ind1$stVal (with our domain) and its reply.
    let read = tlv(
        0xa0,
        &cat(&[
            &h("02 01 01"),
            &tlv(
                0xa4,
                &tlv(
                    0xa1,
                    &tlv(
                        0xa0,
                        &tlv(
                            0x30,
                            &tlv(
                                0xa0,
                                &tlv(
                                    0xa1,
                                    &cat(&[
                                        &tlv(0x1a, b"IMPLD0"),
                                        &tlv(0x1a, b"GGIO1$ST$Ind1$stVal"),
                                    ]),
                                ),
                            ),
                        ),
                    ),
                ),
            ),
        ]),
    );
    let ud = tlv(0x61, &tlv(0x30, &cat(&[&h("02 01 03"), &tlv(0xa0, &read)])));
    let mut dt = h("02F080 01000100");
    dt.extend(ud);
    s.handle_input(2, &gander_mms::tpkt::frame(&dt).unwrap(), &mut m);
    let resp = s.poll_transmit().unwrap();
    assert!(
        resp.ends_with(&h("A1 0A 02 01 01 A4 05 A1 03 83 01 00")),
        "{}",
        hex::encode(&resp)
    );
}

fn connected_server() -> (ServerAssociation, ImpModel) {
    let mut m = ImpModel::new(ModelConfig::default());
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, 0);
    s.handle_input(0, &h("0300000B 06E00000000100"), &mut m);
    s.handle_input(0, &libiec61850_cn_packet(), &mut m);
    assert!(s.is_associated());
    while s.poll_transmit().is_some() {}
    drain_s(&mut s);
    (s, m)
}

fn dt(tsdu: &[u8]) -> Vec<u8> {
    let mut v = h("02F080");
    v.extend(tsdu);
    gander_mms::tpkt::frame(&v).unwrap()
}

fn server_error(prefix_associated: bool, input: &[u8]) -> (Error, bool) {
    let (mut s, mut m) = if prefix_associated {
        connected_server()
    } else {
        (
            ServerAssociation::new(ServerConfig::default(), 1, 0),
            ImpModel::new(ModelConfig::default()),
        )
    };
    s.handle_input(5, input, &mut m);
    let ev = drain_s(&mut s);
    let Some(CloseReason::Error(e)) = closed(&ev) else {
        panic!("no error close: {ev:?}")
    };
    assert!(s.is_closed());
    let sent_abort = std::iter::from_fn(|| s.poll_transmit()).any(|p| p.get(7) == Some(&0x19));
    (e, sent_abort)
}

#[test]
fn malformed_input_at_every_layer() {
    // TPKT.
    let (e, _) = server_error(false, &h("04000008 02F08000"));
    assert_eq!(e, Error::TpktVersion(4));
    let (e, _) = server_error(false, &h("03000004"));
    assert_eq!(e, Error::TpktTooShort(4));
    let (e, _) = server_error(false, &h("0300FFFF"));
    assert!(matches!(
        e,
        Error::TooLarge {
            layer: Layer::Tpkt,
            ..
        }
    ));
    // COTP.
    let (e, _) = server_error(false, &dt(&[]));
    assert!(matches!(
        e,
        Error::UnexpectedPdu {
            layer: Layer::Cotp,
            ..
        }
    ));
    let (e, _) = server_error(false, &h("03000007 02 30 80"));
    assert!(matches!(
        e,
        Error::UnknownCode {
            layer: Layer::Cotp,
            ..
        }
    ));
    // Session: DATA not exactly 01 00 01 00.
    let (e, abort) = server_error(true, &dt(&h("01000101 00")));
    assert_eq!(e.layer(), Some(Layer::Session));
    assert!(abort);
    // Presentation: wrong transfer syntax in P-DATA.
    let (e, _) = server_error(
        true,
        &dt(&h("01000100 61 0B 30 09 06 02 5102 02 01 03 A0 00")),
    );
    assert_eq!(e.layer(), Some(Layer::Presentation));
    // MMS: a garbage PDU (`FF`) is rejected (pdu-error, unknown-pdu-type) and the association lives on
    // (ISO 9506-2 7.5; `tests/it/unknown_services.rs` has every case).
    let (mut s, mut m) = connected_server();
    s.handle_input(5, &dt(&h("01000100 61 08 30 06 02 01 03 A0 01 FF")), &mut m);
    let p = s.poll_transmit().unwrap();
    assert!(p.ends_with(&h("A4 03 85 01 00")), "{}", hex::encode(&p));
    assert!(s.is_associated());
    // ACSE: CN whose AARQ is not an AARQ.
    let mut cn = libiec61850_cn_packet();
    let pos = cn
        .windows(2)
        .position(|w| w == [0x60, 0x55] || w == [0x60, 0x56])
        .expect("AARQ tag");
    cn[pos] = 0x65;
    let mut m = ImpModel::new(ModelConfig::default());
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, 0);
    s.handle_input(0, &h("0300000B 06E00000000100"), &mut m);
    s.handle_input(0, &cn, &mut m);
    assert!(matches!(
        closed(&drain_s(&mut s)),
        Some(CloseReason::Error(Error::UnknownCode {
            layer: Layer::Acse,
            ..
        }))
    ));
}

#[test]
fn truncated_input_times_out_instead_of_hanging() {
    let mut m = ImpModel::new(ModelConfig::default());
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, 0);
    let cn = libiec61850_cn_packet();
    s.handle_input(0, &h("0300000B 06E00000000100"), &mut m);
    s.handle_input(1, &cn[..cn.len() - 3], &mut m);
    assert!(!s.is_closed());
    let t = s.poll_timeout().unwrap();
    s.handle_timeout(t, &mut m);
    assert!(matches!(
        closed(&drain_s(&mut s)),
        Some(CloseReason::Timeout(_))
    ));

    let mut c = ClientAssociation::new(ClientConfig::default());
    c.connect(0).unwrap();
    c.handle_timeout(c.poll_timeout().unwrap() - 1);
    assert!(!c.is_closed());
    c.handle_timeout(c.poll_timeout().unwrap());
    assert!(c.is_closed());
}

#[test]
fn password_authentication() {
    let sc = ServerConfig {
        password: Some(b"s3cret".to_vec()),
        ..ServerConfig::default()
    };
    for (pwd, ok) in [
        (Some(&b"s3cret"[..]), true),
        (Some(b"wrong"), false),
        (None, false),
    ] {
        let mut cc = ClientConfig::default();
        cc.aarq.password = pwd.map(|p| p.to_vec());
        let mut m = ImpModel::new(ModelConfig::default());
        let mut c = ClientAssociation::new(cc);
        let mut s = ServerAssociation::new(sc.clone(), 1, 0);
        c.connect(0).unwrap();
        pump(&mut c, &mut s, &mut m, 0);
        assert_eq!(s.is_associated(), ok);
        if !ok {
            assert!(
                matches!(closed(&drain_c(&mut c)), Some(CloseReason::Refused(d)) if d.contains("User(14)"))
            );
        }
    }
}

#[test]
fn unknown_service_is_rejected_and_association_survives() {
    let (mut s, mut m) = connected_server();
    // A GetDomainAttributes ([37], high-tag form, `Identifier`) request: not served.
    s.handle_input(
        1,
        &dt(&h(
            "01000100 61 12 30 10 02 01 03 A0 0B A0 09 02 01 05 9F 25 03 4C 44 30",
        )),
        &mut m,
    );
    let p = s.poll_transmit().unwrap();
    assert!(
        p.ends_with(&h("A4 06 80 01 05 81 01 01")),
        "{}",
        hex::encode(&p)
    );
    assert!(s.is_associated());
}

#[test]
fn status_is_answered_as_libiec61850_does() {
    let (mut s, mut m) = connected_server();
    // Status (`80 01 00`, extendedDerivation false), what libiec61850's
    // `MmsConnection_getServerStatus` sends; answered state-changes-allowed, operational.
    s.handle_input(
        1,
        &dt(&h(
            "01000100 61 0F 30 0D 02 01 03 A0 08 A0 06 02 01 06 80 01 00",
        )),
        &mut m,
    );
    let p = s.poll_transmit().unwrap();
    assert!(
        p.ends_with(&h("A1 0B 02 01 06 A0 06 80 01 00 81 01 00")),
        "{}",
        hex::encode(&p)
    );
    assert!(s.is_associated());
}

#[test]
fn large_reports_fragment_and_reassemble() {
    let mut m = ImpModel::new(ModelConfig::for_report_size(20_000).unwrap());
    let mut c = ClientAssociation::new(ClientConfig::default());
    let mut s = ServerAssociation::new(ServerConfig::default(), 1, 0);
    c.connect(0).unwrap();
    pump(&mut c, &mut s, &mut m, 0);
    c.write(
        1,
        enable_reporting(&mms_name(model::RCB_REF).unwrap(), false),
    )
    .unwrap();
    pump(&mut c, &mut s, &mut m, 1);
    drain_c(&mut c);
    let t = m.change_all(0);
    s.send_information_report(&m.build_report(1, t, 0).unwrap())
        .unwrap();
    let mut packets = 0;
    while let Some(p) = s.poll_transmit() {
        assert!(p.len() <= 8192 + 4);
        packets += 1;
        c.handle_input(2, &p);
    }
    assert!(packets >= 3);
    assert!(drain_c(&mut c)
        .iter()
        .any(|e| matches!(e, Event::InformationReport { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn server_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300), split in 1usize..40,
                           associated in any::<bool>()) {
        let (mut s, mut m) = if associated { connected_server() } else {
            (ServerAssociation::new(ServerConfig::default(), 1, 0), ImpModel::new(ModelConfig::default()))
        };
        for chunk in data.chunks(split) { s.handle_input(3, chunk, &mut m); }
        while s.poll_transmit().is_some() {}
        let _ = drain_s(&mut s);
    }

    #[test]
    fn server_never_panics_on_framed_garbage(body in proptest::collection::vec(any::<u8>(), 0..200)) {
        let (mut s, mut m) = connected_server();
        let mut tsdu = h("01000100");
        tsdu.extend(&body);
        s.handle_input(3, &dt(&tsdu), &mut m);
        s.handle_input(3, &dt(&body), &mut m);
        while s.poll_transmit().is_some() {}
    }

    #[test]
    fn client_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut c = ClientAssociation::new(ClientConfig::default());
        c.connect(0).unwrap();
        c.handle_input(1, &h("03000016 11D00001000100 C0010D C2020001 C1020001"));
        c.handle_input(2, &data);
        while c.poll_transmit().is_some() {}
        let _ = drain_c(&mut c);
    }
}
