//! What the key-server tests share: a policy, and a model member that applies what it
//! receives (registration, pushes) to a table of key windows the way `install::key_entry` does.

#![allow(dead_code)]

use gander_gdoi::group_kek::GroupKek;
use gander_gdoi::net::kdc::{GroupPolicy, KdcPolicy, MemberPolicy};
use gander_gdoi::pull::{group_keys, GroupKeys};
use gander_gdoi::push::{PushError, PushReceiver};
use gander_wire::isakmp::gdoi::tek_protocol;
use gander_wire::isakmp::iec61850::oid;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::sa::PROTO_ISAKMP;
use gander_wire::isakmp::{IdPayload, Payload, Traffic};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use zeroize::Zeroizing;

pub(crate) fn id(s: &str) -> IdPayload {
    IdPayload {
        id_type: id_type::KEY_ID,
        protocol: 0,
        port: 0,
        data: s.as_bytes().to_vec(),
    }
}

pub(crate) fn member(identity: &str, ip: [u8; 4], push: Option<SocketAddr>) -> MemberPolicy {
    MemberPolicy {
        identity: identity.as_bytes().to_vec(),
        psk: Zeroizing::new(format!("psk-of-{identity}-0123456789").into_bytes()),
        address: ip.into(),
        groups: vec![b"goose-1".to_vec()],
        push,
        cert: None,
    }
}

pub(crate) fn group(lifetime: u64, atd: u64, overlap: u64) -> GroupPolicy {
    GroupPolicy {
        id: b"goose-1".to_vec(),
        oid: oid::GOOSE.to_string(),
        traffic: Traffic::L2 {
            mac: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
            appid: 1,
        },
        mac_code: 2,
        enc_code: 0,
        lifetime_secs: lifetime,
        activation_delay_secs: atd,
        overlap_secs: overlap,
        key_id: 0,
        key: Zeroizing::new(Vec::new()),
    }
}

pub(crate) fn policy(members: Vec<MemberPolicy>, g: GroupPolicy) -> KdcPolicy {
    KdcPolicy {
        identity: id("kdc"),
        members,
        groups: vec![g],
    }
}

/// A member's view: Key ID -> (valid from, valid to, key), and its push receiver.
#[derive(Default)]
pub(crate) struct Model {
    pub(crate) keys: BTreeMap<u32, (u64, u64, Vec<u8>)>,
    pub(crate) rx: Option<PushReceiver>,
    pub(crate) kek_spi: Option<[u8; 16]>,
    /// The KEK was withdrawn: must register again.
    pub(crate) must_register: bool,
}

impl Model {
    fn install(&mut self, k: &GroupKeys, now: u64) {
        for t in &k.teks {
            let start = now + t.activation_delay_secs.unwrap_or(0);
            let end = start + t.lifetime_secs.unwrap_or(0) + t.overlap_secs.unwrap_or(0);
            let key = t
                .integrity_key
                .as_ref()
                .or(t.algorithm_key.as_ref())
                .map(|k| k.to_vec())
                .unwrap_or_default();
            self.keys.insert(t.key_id, (start, end, key));
        }
    }

    /// A registration's result.
    pub(crate) fn registered(&mut self, k: &GroupKeys, now: u64) {
        self.install(k, now);
        let kek: &GroupKek = k.kek.as_ref().expect("grant carries the KEK");
        self.rx = Some(PushReceiver::new(
            kek.kek(),
            kek.verify_key().unwrap(),
            k.seq.unwrap_or(0),
        ));
        self.kek_spi = Some(kek.spi);
        self.must_register = false;
    }

    /// A push: verified, then applied. Returns its SEQ.
    pub(crate) fn push(&mut self, msg: &[u8], now: u64) -> Result<u32, PushError> {
        let rx = self.rx.as_mut().ok_or(PushError::NotOurs)?;
        let r = rx.receive(msg)?;
        let mut sa = None;
        for p in &r.payloads {
            match p {
                Payload::Delete(d)
                    if d.protocol == PROTO_ISAKMP
                        && d.spis.iter().any(|s| {
                            Some(s.as_slice()) == self.kek_spi.as_ref().map(|k| &k[..])
                        }) =>
                {
                    self.must_register = true;
                }
                Payload::Delete(d) if d.protocol == tek_protocol::IEC61850 => {
                    for s in &d.spis {
                        if let Ok(b) = <[u8; 4]>::try_from(s.as_slice()) {
                            self.keys.remove(&u32::from_be_bytes(b));
                        }
                    }
                }
                Payload::Sa(s) => sa = Some(s.clone()),
                Payload::Kd(kd) => {
                    if let Some(s) = &sa {
                        let g = group_keys(id("goose-1"), s, kd, Some(r.seq)).unwrap();
                        self.install(&g, now);
                    }
                }
                _ => {}
            }
        }
        Ok(r.seq)
    }

    /// Key IDs valid at `t`.
    pub(crate) fn valid_at(&self, t: u64) -> Vec<u32> {
        self.keys
            .iter()
            .filter(|(_, (a, b, _))| *a <= t && t < *b)
            .map(|(id, _)| *id)
            .collect()
    }
}
