//! Frame building for the policy's decisions: a verified frame without its security (`strip`),
//! and translation between layer-2 GOOSE (IEC 61850-8-1) and R-GOOSE (IEC 61850-90-5 session
//! over UDP/IPv4). Every output is written into the caller's buffer through the one encoder
//! shape (a value that borrows what it writes, `buffer_len`, `emit`): payload elements and
//! APDUs go from where they lie in the input to where they lie in the output, once.
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
use gander_sec::spdu::{IvSource, SendParams};
use gander_sec::spdu_emit::{PlainSpduRepr, SecuredSpduRepr, SessionFrameRepr, SpduOut};
use gander_sec::view::{ApduCounters, Content, FrameView, L2View, Verified};
use gander_sec::{KeyEntry, Profile};
use gander_wire::ethernet::{self, EthernetRepr, VlanTag};
use gander_wire::goose::GooseView;
use gander_wire::ip::{self, UdpFrameRepr};
use gander_wire::l2_emit::StrippedL2Repr;
use gander_wire::l2_frame;
use gander_wire::l2_frame_repr::{L2BodyRepr, L2FrameRepr};
use gander_wire::spdu::{PayloadElement, SpduId, SpduPayload};
use gander_wire::Codec;
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
/// §11.3.2: SPDUNum counts the SPDUs of one publisher), and the buffer a secured layer-2
/// output is assembled in before its extension is added (reused: nothing allocated per frame).
#[derive(Debug)]
pub(crate) struct Translator {
    spdu_numbers: HashMap<u16, u32>,
    scratch: Vec<u8>,
}

/// The room the scratch buffer starts with: the largest layer-2 frame without its extension
/// (a 1500-octet payload behind an Ethernet header and two 802.1Q tags), so that a frame's
/// stNum or sqNum gaining an octet does not make it grow; only an APDU too large for any
/// layer-2 frame (refused when it is secured) would.
const SCRATCH_CAPACITY: usize = 14 + 2 * 4 + 1500;

impl Default for Translator {
    fn default() -> Self {
        Translator {
            spdu_numbers: HashMap::new(),
            scratch: Vec::with_capacity(SCRATCH_CAPACITY),
        }
    }
}

impl Translator {
    /// Translates an unsecured frame into `buf` (resized to the output): layer-2 GOOSE to
    /// R-GOOSE, an R-GOOSE session to GOOSE.
    pub(crate) fn unsecured(
        &mut self,
        v: &FrameView<'_>,
        out: Output<'_>,
        buf: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        match &v.content {
            Content::L2(l) if l.ethertype == ethernet::ETHERTYPE_GOOSE => {
                let apdu = &v.frame[l.apdu.clone()];
                GooseView::parse(apdu)?;
                let el = PayloadElement {
                    payload_type: SpduId::Goose.payload_type(),
                    simulation: l.simulation() as u8,
                    appid: l.appid,
                    apdu,
                };
                self.rgoose(el, out, buf)
            }
            Content::Session(s) => {
                let dialect = out.profile.dialect();
                let el = only_element(s.pdu.payload(), &dialect)?;
                self.session_to_goose(el, false, out, buf)
            }
            _ => Err(DropReason::TranslateNotGoose),
        }
    }

    /// Translates a verified frame (its APPID the authenticated one) into `buf`.
    pub(crate) fn verified(
        &mut self,
        v: &FrameView<'_>,
        ok: &Verified<'_>,
        out: Output<'_>,
        buf: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        match (&v.content, ok) {
            (Content::L2(l), Verified::Goose { appid, .. }) => {
                let el = PayloadElement {
                    payload_type: SpduId::Goose.payload_type(),
                    simulation: l.simulation() as u8,
                    appid: *appid,
                    apdu: &v.frame[l.apdu.clone()],
                };
                self.rgoose(el, out, buf)
            }
            (
                _,
                Verified::Session {
                    session,
                    elements,
                    first,
                    ..
                },
            ) => {
                let el = only_element(session.payload(), &out.profile.dialect())?;
                // Verification parsed every APDU whole: one it read as GOOSE is not parsed
                // again.
                let checked = *elements == 1 && matches!(first, ApduCounters::Goose { .. });
                self.session_to_goose(el, checked, out, buf)
            }
            _ => Err(DropReason::Malformed),
        }
    }

    /// One GOOSE APDU as an R-GOOSE frame (IEC 61850-90-5 §11.3), secured when the rule has a
    /// key, over IPv4 with the rule's addresses, written into `buf`: the SPDU is written in
    /// its place in the frame, not assembled apart and copied.
    fn rgoose(
        &mut self,
        el: PayloadElement<'_>,
        out: Output<'_>,
        buf: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        let t = out.translate.ok_or(DropReason::TranslateUnconfigured)?;
        let (Some(src_ip), Some(dst_ip)) = (t.src_ip, t.dst_ip) else {
            return Err(DropReason::TranslateUnconfigured);
        };
        let n = self.spdu_numbers.entry(el.appid).or_insert(0);
        let spdu_number = *n;
        *n = n.wrapping_add(1);
        let els = [el];
        let spdu = match out.key? {
            None => SpduOut::Plain(PlainSpduRepr::new(
                out.profile,
                SpduId::Goose,
                spdu_number,
                SpduPayload::Elements(&els),
            )?),
            Some(key) => {
                key.check_appid(el.appid)?;
                let params = SendParams {
                    spdu_id: SpduId::Goose,
                    spdu_number,
                    now: out.now,
                };
                SpduOut::Secured(SecuredSpduRepr::new(
                    out.profile,
                    key,
                    params,
                    SpduPayload::Elements(&els),
                    out.ivs,
                )?)
            }
        };
        let headers = UdpFrameRepr {
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
        let spdu_len = spdu.buffer_len();
        buf.resize(headers.buffer_len(spdu_len), 0);
        headers.emit_with(buf, spdu_len, |p: &mut [u8]| {
            spdu.emit(p).map(drop).map_err(DropReason::from)
        })?;
        Ok(())
    }

    /// The one GOOSE element of an R-GOOSE session as a layer-2 GOOSE frame (IEC 61850-8-1
    /// Annex C) in `buf`, protected with the IEC 62351-6 extension when the rule has a key.
    /// Its APDU is checked whole unless verification already parsed it as GOOSE
    /// (`apdu_checked`).
    /// The APDU is written from where it lies in the session, through a frame value that
    /// borrows it ([`L2FrameRepr`]); a secured output is assembled in the translator's reused
    /// buffer and secured from there by the layer-2 protect of the security library.
    fn session_to_goose(
        &mut self,
        el: PayloadElement<'_>,
        apdu_checked: bool,
        out: Output<'_>,
        buf: &mut Vec<u8>,
    ) -> Result<(), DropReason> {
        if el.payload_type != SpduId::Goose.payload_type() {
            return Err(DropReason::TranslateNotGoose);
        }
        if !apdu_checked {
            GooseView::parse(el.apdu)?;
        }
        let t = out.translate.ok_or(DropReason::TranslateUnconfigured)?;
        let frame = L2FrameRepr {
            eth: EthernetRepr {
                dst: t.dst_mac,
                src: t.src_mac,
                vlan: t.vlan,
                ethertype: ethernet::ETHERTYPE_GOOSE,
            },
            body: L2BodyRepr::unsecured(el.appid, el.simulation != 0, el.apdu),
        };
        let Some(key) = out.key? else {
            buf.resize(frame.buffer_len(), 0);
            frame.emit(buf)?;
            return Ok(());
        };
        let plain = &mut self.scratch;
        plain.resize(frame.buffer_len(), 0);
        frame.emit(plain)?;
        // Where the frame just written has its parts: the Ethernet header of `frame.eth`,
        // then APPID, Length, Reserved1/2 and the APDU (IEC 61850-8-1 Figure C.1).
        let header_offset = frame.eth.buffer_len();
        let apdu_start = header_offset + l2_frame::HEADER_LEN;
        let located = L2View {
            ethertype: ethernet::ETHERTYPE_GOOSE,
            appid: el.appid,
            reserved1: frame.body.reserved1,
            reserved2: 0,
            header_offset,
            apdu: apdu_start..apdu_start + el.apdu.len(),
            extension: None,
            end: plain.len(),
        };
        l2::protect_view_into(out.profile, key, plain, &located, out.ivs, out.now, buf)?;
        Ok(())
    }
}

/// The one payload element of a translated session: a session with more (or none) cannot be
/// one layer-2 frame. Every element is checked well formed first, as before any decision.
fn only_element<'p>(
    payload: &'p [u8],
    dialect: &gander_wire::spdu::Dialect,
) -> Result<PayloadElement<'p>, DropReason> {
    if gander_wire::spdu::validate_elements(payload, dialect)? != 1 {
        return Err(DropReason::TranslateMultiElement);
    }
    gander_wire::spdu::elements(payload, dialect)
        .next()
        .ok_or(DropReason::TranslateMultiElement)?
        .map_err(DropReason::from)
}

/// A verified frame without its security, written into `buf` (resized to the output),
/// everything in front of the secured part kept byte for byte (tags, IP options).
pub(crate) fn strip(
    profile: Profile,
    v: &FrameView<'_>,
    ok: &Verified<'_>,
    buf: &mut Vec<u8>,
) -> Result<(), DropReason> {
    match (&v.content, ok) {
        (Content::L2(l), Verified::Goose { .. } | Verified::Sv { .. }) => {
            // Reserved1 keeps only the simulation bit and Reserved2 returns to 0, as a legacy
            // subscriber expects; the frame is copied once, from the positions the
            // classification found.
            let repr = StrippedL2Repr::new(v.frame, l.header_offset, l.apdu.clone())?;
            buf.resize(repr.buffer_len(), 0);
            repr.emit(buf)?;
            Ok(())
        }
        (Content::Session(s), Verified::Session { session, .. }) => {
            // The cleartext payload goes on as it was verified (checked whole, in this
            // profile's dialect) under an unsecured header, behind the headers the
            // classification located, written once into the output.
            let spdu = PlainSpduRepr::new(
                profile,
                session.header().spdu_id,
                session.header().spdu_number,
                SpduPayload::Encoded(session.payload()),
            )?;
            let frame = SessionFrameRepr {
                udp: s.udp.located(v.frame)?,
                spdu: SpduOut::Plain(spdu),
            };
            frame.emit_into(buf)?;
            Ok(())
        }
        _ => Err(DropReason::Malformed),
    }
}

#[cfg(test)]
mod tests;
