//! R-GOOSE and R-SV publishers against the SCD's routable addresses (`gander audit --scd`).
//!
//! IEC 61850-6 Ed.2.1 gives a routable control block's `GSE`/`SMV` an `Address` with `IP`
//! (or `IPv6`): the destination of its IEC 61850-90-5 session datagrams, a multicast group or
//! a unicast address; `IP-UDP-PORT` (102 when absent: IEC 61850-90-5 and IEC 61850-8-1
//! Ed.2.1 give R-GOOSE and R-SV UDP port 102); `APPID`; and `IP-IGMPv3Src`, the publisher's
//! address that subscribers join with source-specific multicast (RFC 3376 / RFC 3810).
//! `gander_scl::routable_addresses` reads them; [`attach`] joins each to its declared control
//! block (IED, `ldInst`, `cbName`).
//!
//! A routable stream is matched to its block by reference (gocbRef or svID) as layer-2 ones
//! are; an encrypted one, whose reference (and APPID) is hidden, by destination IP and UDP
//! port when exactly one declared routable block has them ([`matching_hidden`]). Then
//! [`mismatches`] gives:
//!
//! * `ip`: the stream's destination address is not the block's `IP`/`IPv6` (subscribers
//!   joined to the declared group do not receive it);
//! * `udp-port`: its destination port is not `IP-UDP-PORT` (or 102);
//! * `appid`: the session's APPID is not the block's `APPID`;
//! * `source-ip`: its source is not `IP-IGMPv3Src` (or, when the SCD gives none, the
//!   publishing `ConnectedAP`'s own `IP`): a source-specific subscriber drops it, and another
//!   host publishing a configured block is a spoofed or misconfigured publisher (compared
//!   only within one address family);
//! * `transport`: a block the SCD gives only an IP address seen as layer-2 GOOSE/SV, or one
//!   it gives only a MAC address seen routed.
//!
//! Each is a `scd-mismatch-<field>` finding (medium) on the stream's first frame, as for the
//! layer-2 fields. Unknown routable publishers and declared-but-absent routable blocks are the
//! common `scd-unknown-publisher` and `scd-absent`.

use crate::scd::{BlockKind, Declared, Scd};
use crate::stream::StreamReport;
use gander_scl::{RoutableAddress, RoutableKind};
use std::net::IpAddr;

/// The UDP port of the IEC 61850-90-5 session protocol when the SCD gives none.
pub const DEFAULT_UDP_PORT: u16 = 102;

/// Joins each routable address to the declared block it names (same IED, `ldInst`,
/// `cbName`, and GSE for GOOSE, SMV for SV). An address naming no declared block is left
/// out: its block is not in the model (or its IED was refused).
pub fn attach(scd: &mut Scd, addrs: &[RoutableAddress]) {
    for r in addrs {
        let kind = match r.kind {
            RoutableKind::Gse => BlockKind::Goose,
            RoutableKind::Smv => BlockKind::Sv,
        };
        if let Some(d) = scd.publishers.iter_mut().find(|d| {
            d.kind == kind && d.ied == r.ied && d.ld_inst == r.ld_inst && d.cb_name == r.cb_name
        }) {
            d.routable = Some(r.clone());
        }
    }
}

fn ip(s: &Option<String>) -> Option<IpAddr> {
    s.as_deref().and_then(|a| a.parse().ok())
}

/// The one declared routable block of this destination IP, and APPID when the frames show
/// it (an encrypted R-GOOSE or R-SV stream, whose reference is hidden: IEC 61850-90-5
/// encrypts the whole payload, APPID included, so only the addresses are left).
pub fn matching_hidden(scd: &Scd, s: &StreamReport, kind: BlockKind) -> Option<usize> {
    let dst = ip(&s.dst_ip)?;
    let mut hits = scd.publishers.iter().enumerate().filter(|(_, d)| {
        d.kind == kind
            && d.routable.as_ref().is_some_and(|r| {
                let appid = r.app_id.or(d.address.and_then(|a| a.app_id));
                r.destination == dst
                    && s.dst_port
                        .is_none_or(|p| p == r.udp_port.unwrap_or(DEFAULT_UDP_PORT))
                    && (s.appid.is_none() || appid.is_none() || s.appid == appid)
            })
    });
    match (hits.next(), hits.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

/// One field of a stream the SCD contradicts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The field (`ip`, `udp-port`, `appid`, `source-ip`, `transport`).
    pub field: &'static str,
    /// What the SCD says.
    pub scd: String,
    /// What the stream shows.
    pub seen: String,
}

/// The routable fields of stream `s` that its declared block `d` contradicts.
pub fn mismatches(d: &Declared, s: &StreamReport) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut push = |field, scd: String, seen: String| out.push(Mismatch { field, scd, seen });
    let routed = matches!(s.kind, "r-goose" | "r-sv");
    let l2_mac = d.address.and_then(|a| a.mac);
    match (&d.routable, routed) {
        (Some(r), false) if l2_mac.is_none() => push(
            "transport",
            format!("routable to {}", r.destination),
            "layer-2 frames".into(),
        ),
        (None, true) if l2_mac.is_some() => push(
            "transport",
            "layer 2 (a MAC-Address, no IP)".into(),
            format!("routed to {}", s.dst_ip.as_deref().unwrap_or("?")),
        ),
        _ => {}
    }
    let Some(r) = d.routable.as_ref().filter(|_| routed) else {
        return out;
    };
    if let Some(seen) = ip(&s.dst_ip) {
        if seen != r.destination {
            push("ip", r.destination.to_string(), seen.to_string());
        }
    }
    let want_port = r.udp_port.unwrap_or(DEFAULT_UDP_PORT);
    if let Some(seen) = s.dst_port {
        if seen != want_port {
            push("udp-port", want_port.to_string(), seen.to_string());
        }
    }
    if let (Some(want), Some(seen)) = (r.app_id.or(d.address.and_then(|a| a.app_id)), s.appid) {
        if want != seen {
            push("appid", format!("0x{want:04X}"), format!("0x{seen:04X}"));
        }
    }
    // The access point's IPv4 address says nothing of a stream sent over IPv6, and back.
    if let (Some(want), Some(seen)) = (r.igmpv3_source.or(r.access_point_ip), ip(&s.src_ip)) {
        if want != seen && want.is_ipv4() == seen.is_ipv4() {
            let why = if r.igmpv3_source.is_some() {
                "IP-IGMPv3Src"
            } else {
                "the access point's IP"
            };
            push("source-ip", format!("{want} ({why})"), seen.to_string());
        }
    }
    out
}
