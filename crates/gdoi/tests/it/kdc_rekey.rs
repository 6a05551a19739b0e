//! The key server's schedule (RFC 6407 4 GROUPKEY-PUSH): the next key is pushed `lead` seconds
//! before the current one expires, old keys are withdrawn with a Delete after the overlap, a
//! member that follows the pushes holds the publisher's active key at every second, and a key
//! server restarted mid-rollover re-announces the pending key under a fresh SEQ without ever
//! reusing a Key ID or a SEQ.

use crate::kdc_support;

use gander_gdoi::group_kek::KdcSigner;
use gander_gdoi::kdc_schedule::{self, PushWhat};
use gander_gdoi::kdc_state::KdcState;
use gander_gdoi::net::kdc::{Kdc, KdcEvent};
use gander_gdoi::pull::group_keys;
use gander_gdoi::push;
use kdc_support::{group, id, member, policy, Model};
use std::collections::HashSet;
use std::net::UdpSocket;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

const T0: u64 = 1_800_000_000;

fn register(model: &mut Model, p: &gander_gdoi::net::kdc::KdcPolicy, st: &KdcState, now: u64) {
    let signer = KdcSigner::new(st.signer().unwrap()).unwrap();
    let g = kdc_schedule::grant(&p.groups[0], st, &signer, [127, 0, 0, 1].into(), now).unwrap();
    let keys = group_keys(id("goose-1"), &g.sa, &g.kd, g.seq).unwrap();
    model.registered(&keys, now);
}

/// The key publishers use at `t`: the newest key already active.
fn active(st: &KdcState, t: u64) -> Option<u32> {
    st.groups["goose-1"]
        .keys
        .iter()
        .filter(|k| k.activates_at <= t)
        .max_by_key(|k| k.activates_at)
        .map(|k| k.key_id)
}

#[test]
fn next_key_before_expiry_old_key_withdrawn_no_gap() {
    let p = policy(vec![], group(10, 2, 3));
    let mut st = KdcState::new().unwrap();
    assert!(kdc_schedule::tick(&p, &mut st, T0).unwrap().is_empty());
    let first = st.groups["goose-1"].keys[0].clone();
    assert_eq!(
        (first.activates_at, first.expires_at, first.delete_at),
        (T0, T0 + 10, T0 + 13)
    );
    let mut m = Model::default();
    register(&mut m, &p, &st, T0);
    let signer = st.signer().unwrap();
    let (mut seqs, mut ids) = (Vec::new(), HashSet::from([first.key_id]));
    let mut rekeys_at = Vec::new();
    let mut deletes_at = Vec::new();
    for t in T0 + 1..=T0 + 45 {
        for pp in kdc_schedule::tick(&p, &mut st, t).unwrap() {
            let msg = push::build(&pp.kek, &signer, pp.seq, pp.payloads.clone()).unwrap();
            seqs.push(m.push(&msg, t).unwrap());
            match pp.what {
                PushWhat::Rekey { key_id, .. } => {
                    assert!(ids.insert(key_id), "Key ID {key_id} reused");
                    rekeys_at.push(t);
                }
                PushWhat::Delete { .. } => deletes_at.push(t),
                PushWhat::KekWithdrawn => panic!("no revocation here"),
            }
        }
        // The publisher's key is valid at the member at every second.
        let a = active(&st, t).unwrap();
        assert!(m.valid_at(t).contains(&a), "t0+{}: {a} not valid", t - T0);
        if t == T0 + 39 {
            // During the lead the member holds current and next, only current valid.
            assert_eq!((m.keys.len(), m.valid_at(t).len()), (2, 1));
        }
        if t == T0 + 41 {
            // During the overlap both verify.
            assert_eq!(m.valid_at(t).len(), 2);
        }
    }
    // Pushed 2 s (SA_ATD) before each expiry, withdrawn 3 s (SA_KDA) after it.
    assert_eq!(rekeys_at, vec![T0 + 8, T0 + 18, T0 + 28, T0 + 38]);
    assert_eq!(deletes_at, vec![T0 + 13, T0 + 23, T0 + 33, T0 + 43]);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));
    assert!(!m.keys.contains_key(&first.key_id));
}

#[test]
fn restart_mid_rollover_never_reuses_key_id_or_seq() {
    let dir = std::env::temp_dir().join(format!("gander-kdc-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("state.toml");
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let p = policy(
        vec![member(
            "ied-1",
            [127, 0, 0, 1],
            Some(rx.local_addr().unwrap()),
        )],
        group(10, 2, 3),
    );
    let mut buf = vec![0u8; 65_535];
    let (mut kdc, ev) = Kdc::open(
        UdpSocket::bind("127.0.0.1:0").unwrap(),
        p.clone(),
        &path,
        T0,
    )
    .unwrap();
    assert!(ev.is_empty(), "{ev:?}");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let mut m = Model::default();
    register(&mut m, &p, kdc.state(), T0);
    let first = kdc.state().groups["goose-1"].keys[0].key_id;

    // The rollover starts: the next key is pushed at T0 + 8.
    let ev = kdc.tick(T0 + 8).unwrap();
    let Some(KdcEvent::Rekeyed {
        key_id: next,
        seq: s1,
        members: 1,
        ..
    }) = ev.first().cloned()
    else {
        panic!("{ev:?}")
    };
    let n = rx.recv(&mut buf).unwrap();
    assert_eq!(m.push(&buf[..n], T0 + 8).unwrap(), s1);
    let next_key = m.keys[&next].2.clone();
    drop(kdc);

    // Restart before the next key is active: the same key again, under a higher SEQ.
    let (mut kdc, ev) = Kdc::open(
        UdpSocket::bind("127.0.0.1:0").unwrap(),
        p.clone(),
        &path,
        T0 + 9,
    )
    .unwrap();
    let Some(KdcEvent::Rekeyed {
        key_id, seq: s2, ..
    }) = ev.first().cloned()
    else {
        panic!("{ev:?}")
    };
    assert_eq!(key_id, next);
    assert!(s2 > s1);
    let n = rx.recv(&mut buf).unwrap();
    assert_eq!(m.push(&buf[..n], T0 + 9).unwrap(), s2);
    assert_eq!(m.keys[&next].2, next_key, "same Key ID, same key");
    assert_eq!(kdc.state().groups["goose-1"].keys.len(), 2);

    // The following rollover gets a Key ID never used and a higher SEQ again.
    let ev = kdc.tick(T0 + 18).unwrap();
    let rekey = ev
        .iter()
        .find_map(|e| match e {
            KdcEvent::Rekeyed { key_id, seq, .. } => Some((*key_id, *seq)),
            _ => None,
        })
        .unwrap();
    assert!(rekey.0 != first && rekey.0 != next);
    assert!(rekey.1 > s2);
    for _ in &ev {
        let n = rx.recv(&mut buf).unwrap();
        m.push(&buf[..n], T0 + 18).unwrap();
    }
    assert!(m.valid_at(T0 + 20).contains(&rekey.0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn readable_state_file_refused_at_start() {
    let dir = std::env::temp_dir().join(format!("gander-kdc-perm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("state.toml");
    let p = policy(vec![], group(10, 2, 3));
    drop(
        Kdc::open(
            UdpSocket::bind("127.0.0.1:0").unwrap(),
            p.clone(),
            &path,
            T0,
        )
        .unwrap(),
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = Kdc::open(UdpSocket::bind("127.0.0.1:0").unwrap(), p, &path, T0)
        .err()
        .unwrap();
    assert!(e.to_string().contains("chmod 600"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
