//! Builders for the unsecured GOOSE and R-GOOSE frames that tests and benchmarks send through
//! the gateway (what a legacy IED publishes).

use gander_sec::Profile;
use gander_wire::data::Data;
use gander_wire::ethernet::{self, EthernetRepr, VlanTag};
use gander_wire::goose::GoosePdu;
use gander_wire::ip::UdpFrameRepr;
use gander_wire::l2_frame::{GooseFrameRepr, L2Frame};
use gander_wire::spdu::{PayloadElement, SpduId, SpduPayload};
use gander_wire::sv::{Asdu, SavPdu};
use gander_wire::Codec;

/// A GOOSE APDU with `entries` integer values (the gateway paper's 1/12/72-object sizes).
pub fn goose_apdu(st: u32, sq: u32, entries: usize) -> Vec<u8> {
    GoosePdu {
        gocb_ref: "GANDERIED/LLN0$GO$gcb01".into(),
        time_allowed_to_live: 2000,
        dat_set: "GANDERIED/LLN0$DS1".into(),
        go_id: Some("gander".into()),
        t: [0x66, 0, 0, 0, 0, 0, 0, 0x0a],
        st_num: st,
        sq_num: sq,
        simulation: false,
        conf_rev: 1,
        nds_com: false,
        num_dat_set_entries: entries as u32,
        all_data: (0..entries as i64)
            .map(|i| Data::Integer(1000 + i))
            .collect(),
    }
    .to_vec()
}

/// An unsecured layer-2 GOOSE frame (IEC 61850-8-1), untagged or 802.1Q-tagged.
pub fn goose_frame(
    src: [u8; 6],
    dst: [u8; 6],
    vlan: Option<VlanTag>,
    appid: u16,
    st: u32,
    sq: u32,
) -> Vec<u8> {
    L2Frame {
        eth: EthernetRepr {
            dst,
            src,
            vlan,
            ethertype: ethernet::ETHERTYPE_GOOSE,
        },
        body: GooseFrameRepr {
            appid,
            reserved1: 0,
            reserved2: 0,
            apdu: goose_apdu(st, sq, 4),
            extension: None,
        },
    }
    .to_vec()
    .unwrap_or_default()
}

/// An unsecured R-GOOSE session PDU as `profile` writes it.
pub fn rgoose_spdu(profile: Profile, appid: u16, spdu_number: u32, st: u32, sq: u32) -> Vec<u8> {
    let apdu = goose_apdu(st, sq, 4);
    let el = PayloadElement {
        payload_type: 0x81,
        simulation: 0,
        appid,
        apdu: &apdu,
    };
    gander_sec::spdu_emit::PlainSpduRepr::new(
        profile,
        SpduId::Goose,
        spdu_number,
        SpduPayload::Elements(&[el]),
    )
    .and_then(|repr| {
        let mut out = vec![0; repr.buffer_len()];
        repr.emit(&mut out).map(|_| out)
    })
    .unwrap_or_default()
}

/// Addresses of an R-GOOSE datagram.
#[derive(Clone, Copy, Debug)]
pub struct UdpAddrs {
    /// Ethernet source.
    pub src_mac: [u8; 6],
    /// Ethernet destination.
    pub dst_mac: [u8; 6],
    /// IPv4 source.
    pub src_ip: [u8; 4],
    /// IPv4 destination.
    pub dst_ip: [u8; 4],
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
}

impl UdpAddrs {
    /// The lab's IED publishing to the subscriber through the gateway, UDP port 102 both ways
    /// (IEC 61850-90-5 R-GOOSE): the path the gateway tests and benchmark send on.
    pub const IED_TO_SUB: UdpAddrs = UdpAddrs {
        src_mac: gander_lab::addr::IED_MAC,
        dst_mac: gander_lab::addr::SUB_MAC,
        src_ip: gander_lab::addr::IED_IP,
        dst_ip: gander_lab::addr::SUB_IP,
        src_port: 102,
        dst_port: 102,
    };
}

/// An Ethernet/IPv4/UDP frame carrying `payload`.
pub fn udp_frame(a: &UdpAddrs, payload: &[u8]) -> Vec<u8> {
    UdpFrameRepr {
        eth: EthernetRepr {
            dst: a.dst_mac,
            src: a.src_mac,
            vlan: None,
            ethertype: ethernet::ETHERTYPE_IPV4,
        },
        src_addr: a.src_ip,
        dst_addr: a.dst_ip,
        src_port: a.src_port,
        dst_port: a.dst_port,
        ttl: 64,
        tos: 0,
        identification: 0,
    }
    .to_vec(payload)
    .unwrap_or_default()
}

/// `frame` (untagged) behind a stack of (TPID, VID) tags, priority 4: what a trunk or a QinQ
/// network puts in front of a frame.
pub fn tagged(frame: &[u8], stack: &[(u16, u16)]) -> Vec<u8> {
    let mut out = frame[..12].to_vec();
    for (tpid, vid) in stack {
        out.extend_from_slice(&tpid.to_be_bytes());
        out.extend_from_slice(&(0x8000 | vid).to_be_bytes());
    }
    out.extend_from_slice(&frame[12..]);
    out
}

/// An Ethernet/IPv4/UDP `frame` with another source address and port (checksums recomputed):
/// what a replaying attacker changes, since no IEC 62351-6 MAC covers it.
pub fn resourced(frame: &[u8], src_ip: [u8; 4], src_port: u16) -> Vec<u8> {
    let (mut r, payload) = UdpFrameRepr::parse(frame).expect("an Ethernet/IPv4/UDP frame");
    r.src_addr = src_ip;
    r.src_port = src_port;
    r.to_vec(&frame[payload]).expect("same size as parsed")
}

/// An IEC 61850-9-2LE style savPdu: one ASDU of stream `sv_id` with smpCnt `smp_cnt`, confRev 1,
/// smpSynch 2 (global), and the 9-2LE data set of 4 currents and 4 voltages (INT32 value and
/// quality each: 64 octets), the values derived from `smp_cnt` so consecutive frames differ.
pub fn sv_apdu(sv_id: &str, smp_cnt: u16) -> Vec<u8> {
    let sample: Vec<u8> = (0..8u32)
        .flat_map(|i| {
            let v = (u32::from(smp_cnt) * 7 + i * 1000).to_be_bytes();
            let q = 0u32.to_be_bytes();
            v.into_iter().chain(q)
        })
        .collect();
    SavPdu {
        security: None,
        asdus: vec![Asdu {
            sv_id: sv_id.into(),
            dat_set: None,
            smp_cnt,
            conf_rev: 1,
            refr_tm: None,
            smp_synch: 2,
            smp_rate: None,
            sample,
            smp_mod: None,
            gm_identity: None,
        }],
    }
    .to_vec()
}

/// An unsecured layer-2 SV frame (IEC 61850-9-2, EtherType 0x88BA), untagged or 802.1Q-tagged:
/// what a merging unit publishes on the process bus.
pub fn sv_frame(
    src: [u8; 6],
    dst: [u8; 6],
    vlan: Option<VlanTag>,
    appid: u16,
    sv_id: &str,
    smp_cnt: u16,
) -> Vec<u8> {
    L2Frame {
        eth: EthernetRepr {
            dst,
            src,
            vlan,
            ethertype: ethernet::ETHERTYPE_SV,
        },
        body: GooseFrameRepr {
            appid,
            reserved1: 0,
            reserved2: 0,
            apdu: sv_apdu(sv_id, smp_cnt),
            extension: None,
        },
    }
    .to_vec()
    .unwrap_or_default()
}

/// Addresses of an R-GOOSE/R-SV datagram over IPv6.
#[derive(Clone, Copy, Debug)]
pub struct Udp6Addrs {
    /// Ethernet source.
    pub src_mac: [u8; 6],
    /// Ethernet destination (33-33-xx-xx-xx-xx for a multicast group, RFC 2464 §7).
    pub dst_mac: [u8; 6],
    /// IPv6 source.
    pub src_ip: [u8; 16],
    /// IPv6 destination (unicast or an ff0x:: group).
    pub dst_ip: [u8; 16],
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port.
    pub dst_port: u16,
}

/// An Ethernet/IPv6/UDP frame carrying `payload` (UDP checksum set: it is mandatory in IPv6,
/// RFC 8200 §8.1).
pub fn udp6_frame(a: &Udp6Addrs, payload: &[u8]) -> Vec<u8> {
    gander_wire::ipv6::Udp6FrameRepr {
        eth: EthernetRepr {
            dst: a.dst_mac,
            src: a.src_mac,
            vlan: None,
            ethertype: ethernet::ETHERTYPE_IPV6,
        },
        src_addr: a.src_ip,
        dst_addr: a.dst_ip,
        src_port: a.src_port,
        dst_port: a.dst_port,
        traffic_class: 0,
        hop_limit: 64,
    }
    .to_vec(payload)
    .unwrap_or_default()
}

/// The Ethernet multicast address of an IPv6 group: 33-33 and the group's last four octets
/// (RFC 2464 §7).
pub fn ipv6_multicast_mac(group: [u8; 16]) -> [u8; 6] {
    [0x33, 0x33, group[12], group[13], group[14], group[15]]
}
