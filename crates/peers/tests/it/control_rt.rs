//! Control round trips (`gander_client::control_rt`) against gander's own server serving the
//! control fixture `tests/data/controls.cid` (one object per ctlModel), in process, over plain
//! TCP and over TLS with each backend: every ctlModel yields the phases it has, the object
//! ends as it was found (or is restored), and Test keeps the process still.
use crate::common;
use common::*;
use gander_client::control::{ControlError, ControlOptions};
use gander_client::control_rt::{measure, DeviceLeft, RtOptions};
use gander_client::session::{Connector, DEFAULT_MAX_PDU};
use gander_peers::config::ValueMode;
use gander_tls::{backend, BackendKind, TlsProfile, TlsVersion};
use std::path::Path;
use std::time::Duration;

const D: &str = "CTRLLD0";

fn server(tls: Option<TlsProfile>) -> Running {
    let mut cfg = server_cfg(tls, 1000);
    cfg.scl = Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/controls.cid"));
    // Still values: only the controls move the states compared.
    cfg.values = ValueMode::Static;
    Running::start(cfg)
}

fn opts(object: &str, value: &str, test: bool, count: usize) -> RtOptions {
    RtOptions {
        control: ControlOptions {
            object: format!("{D}/{object}"),
            value: value.into(),
            test,
            interlock_check: false,
            synchro_check: false,
            or_cat: 3,
            or_ident: b"control-rt-test".to_vec(),
            termination_timeout: Duration::from_secs(3),
        },
        count,
        pause: Duration::from_millis(1),
        cancel: true,
    }
}

/// Every ctlModel of the fixture, `count` operations each, on one association.
fn every_model(srv: &Running, client_tls: Option<TlsProfile>) {
    let b = client_tls
        .as_ref()
        .map(|p| backend::open(p).expect("client backend"));
    let (mut s, _) = Connector {
        max_pdu: Some(DEFAULT_MAX_PDU),
        ..Connector::new(srv.addr, b.as_deref(), Duration::from_secs(3))
    }
    .connect()
    .expect("connect");
    for (object, model, sbo, enhanced) in [
        ("GGIO1.SPCSO1", 1, false, false),
        ("GGIO1.SPCSO2", 2, true, false),
        ("GGIO1.SPCSO3", 3, false, true),
        ("GGIO1.SPCSO4", 4, true, true),
    ] {
        // --no-test: the state really moves, and 3 operations (odd) end on the other value,
        // so the restoring operation runs.
        let m = measure(&mut s, &opts(object, "", false, 3)).expect(object);
        assert!(m.failed.is_none(), "{object}: {:?}", m.failed);
        let r = m.rt;
        assert_eq!(
            (r.ctl_model, r.operated, r.stopped.as_deref()),
            (model, 3, None),
            "{object}"
        );
        assert_eq!(
            r.values,
            ["true", "false"],
            "{object}: the opposite of stVal first"
        );
        assert_eq!(r.operate_ms.map(|x| x.n), Some(3), "{object}");
        assert_eq!(r.select_ms.map(|x| x.n), sbo.then_some(3), "{object}");
        assert_eq!(
            r.termination_ms.map(|x| x.n),
            enhanced.then_some(3),
            "{object}"
        );
        assert_eq!(r.cancel_ms.map(|x| x.n), sbo.then_some(3), "{object}");
        assert_eq!(r.left, DeviceLeft::Restored, "{object}");
        assert_eq!(
            (r.before.as_deref(), r.after.as_deref()),
            (Some("false"), Some("false"))
        );
        // Test set: the process does not move, so the object is as found with no restore.
        let t = measure(&mut s, &opts(object, "true", true, 3))
            .expect(object)
            .rt;
        assert_eq!((t.operated, t.test), (3, true), "{object}: {:?}", t.stopped);
        assert_eq!(t.left, DeviceLeft::AsFound, "{object}");
    }
    // An INC and an APC: integers, AnalogueValues, as found after an even count.
    for (object, first) in [("GGIO1.ISCSO1", "5"), ("GGIO1.APCSO1", "2.5")] {
        let r = measure(&mut s, &opts(object, first, false, 2))
            .expect(object)
            .rt;
        assert_eq!((r.operated, r.stopped.as_deref()), (2, None), "{object}");
        assert_eq!(
            r.left,
            DeviceLeft::AsFound,
            "{object}: {:?} {:?}",
            r.before,
            r.after
        );
    }
    // The DPC's Dbpos is intermediate (00) in the fixture: no command yields it back, so
    // without Test it is not operated at all; with Test it is, and stays 00.
    let e = measure(&mut s, &opts("CSWI1.Pos", "true", false, 2)).unwrap_err();
    assert!(
        matches!(e, ControlError::Unrestorable { ref state, .. } if state == "00"),
        "{e}"
    );
    let r = measure(&mut s, &opts("CSWI1.Pos", "true", true, 2))
        .expect("Pos")
        .rt;
    assert_eq!((r.operated, r.ctl_model), (2, 4), "{:?}", r.stopped);
    assert_eq!(r.select_ms.map(|x| x.n), Some(2));
    assert_eq!(r.left, DeviceLeft::AsFound);
    // status-only is refused before anything is written.
    assert!(measure(&mut s, &opts("GGIO1.SPCSO5", "true", true, 1)).is_err());
    s.release().expect("release");
}

#[test]
fn every_ctl_model_over_plain_tcp() {
    let srv = server(None);
    every_model(&srv, None);
}

#[test]
fn every_ctl_model_over_tls_with_each_backend() {
    for b in [
        BackendKind::Openssl,
        BackendKind::Gnutls,
        BackendKind::Rustls,
    ] {
        let suite = "TLS_AES_128_GCM_SHA256";
        let srv = server(Some(profile(b, true, &[TlsVersion::Tls13], &[suite])));
        every_model(
            &srv,
            Some(profile(b, false, &[TlsVersion::Tls13], &[suite])),
        );
    }
}

#[test]
fn a_refusal_stops_the_run_and_names_the_cause() {
    let srv = server(None);
    let (mut s, _) = Connector::new(srv.addr, None, Duration::from_secs(3))
        .connect()
        .expect("connect");
    // CSWI1.Pos with the interlock check: CILO1.EnaCls is false in the fixture.
    let mut o = opts("CSWI1.Pos", "true", true, 4);
    o.control.interlock_check = true;
    let r = measure(&mut s, &o).expect("measure").rt;
    assert_eq!(r.operated, 0);
    let why = r.stopped.expect("stopped");
    assert!(why.contains("blocked-by-interlocking"), "{why}");
    assert_eq!(r.left, DeviceLeft::AsFound);
    s.release().expect("release");
}

/// `gander run`'s client (`gander mms client` with `[control]`): HT loop, then the control
/// round trips on the last association, CONTROL events per phase sample and the result in the
/// summary, over plain TCP and TLS 1.3.
#[test]
fn the_run_client_measures_a_named_control() {
    use gander_peers::client::ControlConfig;
    for tls in [false, true] {
        let suite = "TLS_AES_128_GCM_SHA256";
        let p = |server| profile(BackendKind::Openssl, server, &[TlsVersion::Tls13], &[suite]);
        let srv = server(tls.then(|| p(true)));
        let mut cfg = client_cfg(srv.addr, tls.then(|| p(false)), 2, 0);
        cfg.control = Some(ControlConfig {
            object: format!("{D}/GGIO1.SPCSO4"),
            value: String::new(),
            count: 4,
            test: false,
            pause_ms: 1,
            cancel: true,
        });
        let (s, ev) = run_client(&cfg);
        assert!(s.ok, "tls {tls}: {s:?}");
        assert_eq!(s.connections, 2);
        let c = s.control.expect("control result");
        assert_eq!(
            (c.ctl_model, c.operated, c.left.clone()),
            (4, 4, DeviceLeft::AsFound)
        );
        let n = |phase: &str| {
            ev.iter()
                .filter(|e| e.event == "CONTROL" && e.get_str("phase") == Some(phase))
                .count()
        };
        assert_eq!(
            (n("select"), n("operate"), n("termination"), n("cancel")),
            (4, 4, 4, 4)
        );
        let j = serde_json::to_value(&c).unwrap();
        assert_eq!(j["left"]["state"], "as-found");
    }
}

/// Without Test, an object whose state cannot be commanded back is refused: the run fails
/// with kind `control`, nothing written.
#[test]
fn the_run_client_refuses_an_unrestorable_object() {
    use gander_peers::client::ControlConfig;
    let srv = server(None);
    let mut cfg = client_cfg(srv.addr, None, 1, 0);
    cfg.control = Some(ControlConfig {
        object: format!("{D}/CSWI1.Pos"),
        value: "true".into(),
        count: 2,
        test: false,
        pause_ms: 1,
        cancel: false,
    });
    let (s, _) = run_client(&cfg);
    assert!(!s.ok);
    assert_eq!(s.error.as_deref(), Some("control"), "{s:?}");
}
