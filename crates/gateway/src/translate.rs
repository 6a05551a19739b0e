//! Frame building for the policy's decisions: a verified frame without its security (`strip`),
//! and translation between layer-2 GOOSE (IEC 61850-8-1) and R-GOOSE (IEC 61850-90-5 session
//! over UDP/IPv4).
//!
//! The policy ([`crate::policy`]) decides what happens to a frame (which rule, which key, whether
//! it is authentic, fresh and allowed); this module only builds the bytes that decision calls
//! for, from the one classification of the frame ([`gander_sec::view::FrameView`]). Nothing here
//! chooses a rule or a key: the key of a rule is resolved by the policy and handed in, as a
//! `Result` so that a frame that cannot be translated at all is refused for that reason before
//! a missing key is reported (the order the counters have always had).

use crate::config::{ConfigError, KindMatch, TranslateToml};
use crate::reason::DropReason;
use gander_sec::l2;
use gander_sec::spdu::{self, IvSource, SendParams};
use gander_sec::view::{Content, FrameView, Verified};
use gander_sec::{KeyEntry, Profile};
use gander_wire::ethernet::{self, EthernetRepr, VlanTag};
use gander_wire::goose::GoosePdu;
use gander_wire::ip::{self, UdpFrameRepr};
use gander_wire::l2_emit::StrippedL2Repr;
use gander_wire::l2_frame::{GooseFrameRepr, L2Frame};
use gander_wire::spdu::{PayloadElement, SpduId};
use std::collections::HashMap;

/// The addresses a `translate` rule writes its output with (`[rules.translate]`).
#[derive(Debug, Clone)]
pub(crate) struct Translate {
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    vlan: Option<VlanTag>,
    src_ip: Option<[u8; 4]>,
    dst_ip: Option<[u8; 4]>,
    port: u16,
}

impl Translate {
    /// The addresses of rule `n` (1-based, for the message) matching `kind`: GOOSE input is
    /// written as R-GOOSE, which needs both IPv4 addresses.
    pub(crate) fn from_toml(
        n: usize,
        kind: KindMatch,
        t: &TranslateToml,
    ) -> Result<Translate, ConfigError> {
        let mac = |m: &Option<String>| -> Result<[u8; 6], ConfigError> {
            crate::config::parse_mac(m.as_deref().unwrap_or(""))
        };
        let needs_ip = matches!(kind, KindMatch::Any | KindMatch::Goose);
        if needs_ip && (t.src_ip.is_none() || t.dst_ip.is_none()) {
            return Err(ConfigError::Invalid(format!(
                "rule {n}: translating GOOSE to R-GOOSE needs src_ip and dst_ip"
            )));
        }
        Ok(Translate {
            src_mac: mac(&t.src_mac)?,
            dst_mac: mac(&t.dst_mac)?,
            vlan: t.vlan.map(|vid| VlanTag {
                // IEC 61850-8-1 Annex C: GOOSE priority 4 unless configured.
                pcp: t.priority.unwrap_or(4),
                dei: false,
                vid,
            }),
            src_ip: t.src_ip.map(|a| a.octets()),
            dst_ip: t.dst_ip.map(|a| a.octets()),
            port: t.port.unwrap_or(ip::RGOOSE_PORT),
        })
    }
}

/// The key a rule secures its output with: `Ok(None)` for a rule without keys (cleartext
/// output), `Err` when the rule has keys and none is valid now.
pub(crate) type OutputKey<'k> = Result<Option<&'k KeyEntry>, DropReason>;

/// What a translation writes its output with: the profile, the rule's addresses and key, the IV
/// source.
pub(crate) struct Output<'p> {
    /// The profile (dialect of the session header, IEC 62351-6 variant).
    pub profile: Profile,
    /// The rule's `[rules.translate]` addresses.
    pub translate: Option<&'p Translate>,
    /// The rule's key now.
    pub key: OutputKey<'p>,
    /// Where IVs come from.
    pub ivs: &'p mut dyn IvSource,
    /// Unix seconds, for key validity and the session's time of current key.
    pub now: u64,
}

/// The gateway's own R-GOOSE stream state: the next SPDU number per APPID (IEC 61850-90-5
/// §11.3.2: SPDUNum counts the SPDUs of one publisher).
#[derive(Debug, Default)]
pub(crate) struct Translator {
    spdu_numbers: HashMap<u16, u32>,
}

impl Translator {
    /// Translates an unsecured frame: layer-2 GOOSE to R-GOOSE, an R-GOOSE session to GOOSE.
    pub(crate) fn unsecured(
        &mut self,
        v: &FrameView<'_>,
        out: Output<'_>,
    ) -> Result<Vec<u8>, DropReason> {
        match &v.content {
            Content::L2(l) if l.ethertype == ethernet::ETHERTYPE_GOOSE => {
                let apdu = &v.frame[l.apdu.clone()];
                GoosePdu::parse(apdu)?;
                let el = PayloadElement {
                    payload_type: SpduId::Goose.payload_type(),
                    simulation: l.simulation() as u8,
                    appid: l.appid,
                    apdu,
                };
                self.rgoose(el, out)
            }
            Content::Session(s) => {
                let dialect = out.profile.dialect();
                let elements = gander_wire::spdu::parse_elements(s.pdu.payload(), &dialect)?;
                session_to_goose(&elements, out)
            }
            _ => Err(DropReason::TranslateNotGoose),
        }
    }

    /// Translates a verified frame (its APPID the authenticated one).
    pub(crate) fn verified(
        &mut self,
        v: &FrameView<'_>,
        ok: &Verified<'_>,
        out: Output<'_>,
    ) -> Result<Vec<u8>, DropReason> {
        match (&v.content, ok) {
            (Content::L2(l), Verified::Goose { appid, .. }) => {
                let el = PayloadElement {
                    payload_type: SpduId::Goose.payload_type(),
                    simulation: l.simulation() as u8,
                    appid: *appid,
                    apdu: &v.frame[l.apdu.clone()],
                };
                self.rgoose(el, out)
            }
            (_, Verified::Session { session, .. }) => {
                let elements = session.elements()?;
                session_to_goose(&elements, out)
            }
            _ => Err(DropReason::Malformed),
        }
    }

    /// One GOOSE APDU as an R-GOOSE frame (IEC 61850-90-5 §11.3), secured when the rule has a
    /// key, over IPv4 with the rule's addresses.
    fn rgoose(&mut self, el: PayloadElement<'_>, out: Output<'_>) -> Result<Vec<u8>, DropReason> {
        let t = out.translate.ok_or(DropReason::TranslateUnconfigured)?;
        let (Some(src_ip), Some(dst_ip)) = (t.src_ip, t.dst_ip) else {
            return Err(DropReason::TranslateUnconfigured);
        };
        let n = self.spdu_numbers.entry(el.appid).or_insert(0);
        let spdu_number = *n;
        *n = n.wrapping_add(1);
        let mut spdu = Vec::with_capacity(el.apdu.len() + 96);
        match out.key? {
            None => {
                let header = spdu::unsecured_header(out.profile, SpduId::Goose, spdu_number);
                let trailer = spdu::unsigned_trailer(out.profile);
                gander_wire::spdu::emit(
                    &header,
                    &[el],
                    trailer.len(),
                    &out.profile.dialect(),
                    &mut spdu,
                )?;
                spdu.extend_from_slice(trailer);
            }
            Some(key) => {
                key.check_appid(el.appid)?;
                let params = SendParams {
                    spdu_id: SpduId::Goose,
                    spdu_number,
                    now: out.now,
                };
                spdu::protect(out.profile, key, params, &[el], out.ivs, &mut spdu)?;
            }
        }
        let repr = UdpFrameRepr {
            eth: EthernetRepr {
                dst: t.dst_mac,
                src: t.src_mac,
                vlan: t.vlan,
                ethertype: ethernet::ETHERTYPE_IPV4,
            },
            src_addr: src_ip,
            dst_addr: dst_ip,
            src_port: t.port,
            dst_port: t.port,
            ttl: 64,
            // DSCP EF (46): IEC 61850-90-5 asks for a priority class for R-GOOSE.
            tos: 46 << 2,
            identification: (spdu_number & 0xffff) as u16,
        };
        Ok(repr.emit(&spdu)?)
    }
}

/// The one GOOSE element of an R-GOOSE session as a layer-2 GOOSE frame (IEC 61850-8-1 Annex
/// C), protected with the IEC 62351-6 extension when the rule has a key.
fn session_to_goose(
    elements: &[PayloadElement<'_>],
    out: Output<'_>,
) -> Result<Vec<u8>, DropReason> {
    let [el] = elements else {
        return Err(DropReason::TranslateMultiElement);
    };
    if el.payload_type != SpduId::Goose.payload_type() {
        return Err(DropReason::TranslateNotGoose);
    }
    GoosePdu::parse(el.apdu)?;
    let t = out.translate.ok_or(DropReason::TranslateUnconfigured)?;
    let l2f = L2Frame {
        eth: EthernetRepr {
            dst: t.dst_mac,
            src: t.src_mac,
            vlan: t.vlan,
            ethertype: ethernet::ETHERTYPE_GOOSE,
        },
        body: GooseFrameRepr {
            appid: el.appid,
            reserved1: if el.simulation != 0 { 0x8000 } else { 0 },
            reserved2: 0,
            apdu: el.apdu.to_vec(),
            extension: None,
        },
    };
    let frame = l2f.to_vec()?;
    match out.key? {
        None => Ok(frame),
        Some(key) => Ok(l2::protect(out.profile, key, &frame, out.ivs, out.now)?),
    }
}

/// A verified frame without its security, everything in front of the secured part kept byte
/// for byte (tags, IP options).
pub(crate) fn strip(
    profile: Profile,
    v: &FrameView<'_>,
    ok: &Verified<'_>,
) -> Result<Vec<u8>, DropReason> {
    match (&v.content, ok) {
        (Content::L2(l), Verified::Goose { .. } | Verified::Sv { .. }) => {
            // Reserved1 keeps only the simulation bit and Reserved2 returns to 0, as a legacy
            // subscriber expects; the frame is copied once, from the positions the
            // classification found.
            Ok(StrippedL2Repr::new(v.frame, l.header_offset, l.apdu.clone())?.to_vec()?)
        }
        (Content::Session(s), Verified::Session { session, .. }) => {
            let dialect = profile.dialect();
            let header = spdu::unsecured_header(
                profile,
                session.header().spdu_id,
                session.header().spdu_number,
            );
            let trailer = spdu::unsigned_trailer(profile);
            let elements = session.elements()?;
            let mut out = Vec::with_capacity(s.pdu.bytes().len());
            gander_wire::spdu::emit(&header, &elements, trailer.len(), &dialect, &mut out)?;
            out.extend_from_slice(trailer);
            Ok(s.udp.rewrite_payload(v.frame, &out)?)
        }
        _ => Err(DropReason::Malformed),
    }
}
