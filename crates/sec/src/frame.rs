//! Whole captured frames: protect or verify the IEC 61850 traffic of an Ethernet frame.
//!
//! Every frame is classified once by [`crate::view::classify`] (tag stacks, IPv4/IPv6, UDP
//! port 102 or a `01 40` payload, GOOSE/SV EtherTypes); what it found decides what is checked.
//! This is what `gander frame` and the gateway share, so both give the same verdict.

use crate::error::SecError;
use crate::fit::{self, FitError, Transport};
use crate::keystore::{KeyEntry, KeyStore};
use crate::profile::Profile;
use crate::replay::ReplayState;
use crate::spdu::{IvSource, SendParams};
use crate::spdu_emit::{SecuredSpduRepr, SessionFrameRepr, SpduOut};
use crate::view::{self, Apdu, Content, FrameView, Judged, Link};
use gander_wire::ethernet::EthernetRepr;
use gander_wire::spdu::SpduId;
use gander_wire::spdu::{SessionPdu, SpduPayload};

pub use crate::view::{Kind, SESSION_PORT};

/// What happened to one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Secured, and the security verified.
    Verified,
    /// Carries no security.
    Unsecured,
    /// Not IEC 61850 traffic.
    Skipped,
    /// Secured (or claiming to be) and it failed.
    Failed(SecError),
}

/// The verdict on one frame, with what could be read of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Kind of traffic.
    pub kind: Kind,
    /// Outcome.
    pub outcome: Outcome,
    /// Key id, where the header could be read.
    pub key_id: Option<u32>,
    /// SPDU number (sessions).
    pub spdu_number: Option<u32>,
    /// APPID of the first element (only after verification, or for cleartext).
    pub appid: Option<u16>,
    /// stNum/sqNum of the GOOSE APDU (only after verification, or for cleartext).
    pub st_sq: Option<(u32, u32)>,
    /// MAC and encryption algorithm names, when verified.
    pub algorithms: Option<(&'static str, &'static str)>,
    /// smpCnt of the first SV ASDU (only after verification, or for cleartext).
    pub smp_cnt: Option<u16>,
}

impl Verdict {
    pub(crate) fn new(kind: Kind, outcome: Outcome) -> Self {
        Verdict {
            kind,
            outcome,
            key_id: None,
            spdu_number: None,
            appid: None,
            st_sq: None,
            algorithms: None,
            smp_cnt: None,
        }
    }
    /// Whether the frame is acceptable: verified, unsecured or not ours.
    pub fn ok(&self) -> bool {
        !matches!(self.outcome, Outcome::Failed(_))
    }
    /// One word for the outcome.
    pub fn word(&self) -> &'static str {
        match &self.outcome {
            Outcome::Verified => "verified",
            Outcome::Unsecured => "unsecured",
            Outcome::Skipped => "skipped",
            Outcome::Failed(e) => e.code(),
        }
    }
}

/// What can be read of an unsecured frame's first APDU: APPID and stNum/sqNum.
fn cleartext_numbers(profile: Profile, v: &FrameView<'_>) -> (Option<u16>, Option<(u32, u32)>) {
    let goose = |b: &[u8]| {
        gander_wire::goose::GoosePdu::parse(b)
            .ok()
            .map(|g| (g.st_num, g.sq_num))
    };
    match &v.content {
        Content::L2(l) if l.ethertype == gander_wire::ethernet::ETHERTYPE_GOOSE => {
            (Some(l.appid), goose(&v.frame[l.apdu.clone()]))
        }
        Content::L2(l) => (Some(l.appid), None),
        Content::Session(s) => {
            match gander_wire::spdu::elements(s.pdu.payload(), &profile.dialect()).next() {
                Some(Ok(e)) => (Some(e.appid), goose(e.apdu)),
                _ => (None, None),
            }
        }
        Content::Other => (None, None),
    }
}

/// smpCnt of an unsecured layer-2 SV frame's first ASDU.
fn cleartext_smp_cnt(v: &FrameView<'_>) -> Option<u16> {
    match &v.content {
        Content::L2(l) if l.ethertype == gander_wire::ethernet::ETHERTYPE_SV => {
            gander_wire::sv::SavPdu::parse(&v.frame[l.apdu.clone()])
                .ok()
                .and_then(|s| s.asdus.first().map(|a| a.smp_cnt))
        }
        _ => None,
    }
}

/// Verifies every frame of a capture in order, keeping replay state across frames: the same
/// classification, verification and replay state ([`ReplayState`], keyed on authenticated
/// fields only) as the gateway's `verify` rules.
#[derive(Debug)]
pub struct CaptureVerifier<'s> {
    profile: Profile,
    store: &'s KeyStore,
    replay: ReplayState,
}

impl<'s> CaptureVerifier<'s> {
    /// A verifier for `profile` with the keys of `store`.
    pub fn new(profile: Profile, store: &'s KeyStore) -> Self {
        CaptureVerifier {
            profile,
            store,
            replay: ReplayState::new(),
        }
    }

    /// Sets the smpCnt wrap of SV streams that do not state it
    /// ([`ReplayState::set_sv_wrap`]).
    pub fn set_sv_wrap(&mut self, wrap: u16) {
        self.replay.set_sv_wrap(wrap);
    }

    /// Verifies one frame captured at `now` (Unix seconds); SV replay is judged against the
    /// same clock in whole seconds (use [`CaptureVerifier::verify_at`] with capture times).
    pub fn verify(&mut self, frame: &[u8], now: u64) -> Verdict {
        self.verify_at(frame, now, now.saturating_mul(1_000_000_000))
    }

    /// Verifies one frame captured at `now` (Unix seconds, for key validity) and `at_ns`
    /// (nanoseconds on any monotonic clock, for the SV freshness check of
    /// [`crate::replay::SvCounter`]).
    pub fn verify_at(&mut self, frame: &[u8], now: u64, at_ns: u64) -> Verdict {
        let view = match view::classify(self.profile, frame) {
            Ok(v) => v,
            Err(e) => {
                let kind = guess_kind(frame);
                // A frame that is not recognisably IEC 61850 traffic is not judged as such
                // (a truncated or odd IP packet of another protocol is not a failure).
                if kind == Kind::Other {
                    return Verdict::new(kind, Outcome::Skipped);
                }
                return Verdict::new(kind, Outcome::Failed(e));
            }
        };
        let kind = view.kind();
        if kind == Kind::Other {
            return Verdict::new(kind, Outcome::Skipped);
        }
        let mut v = Verdict::new(kind, Outcome::Unsecured);
        match &view.content {
            Content::Session(s) => {
                v.key_id = Some(s.pdu.header.security.key_id());
                v.spdu_number = Some(s.pdu.header.spdu_number);
            }
            Content::L2(l) => {
                v.key_id = l.extension.as_ref().and_then(|r| {
                    gander_wire::l2_extension::SecurityExtension::parse(&frame[r.clone()])
                        .ok()
                        .map(|e| e.key_id)
                });
            }
            Content::Other => {}
        }
        match view::verify(self.profile, self.store, &view, now) {
            Ok(Judged::Unsecured) => {
                (v.appid, v.st_sq) = cleartext_numbers(self.profile, &view);
                v.smp_cnt = cleartext_smp_cnt(&view);
            }
            Ok(Judged::Verified(ok)) => match self.replay.check_and_accept(&ok.freshness(at_ns)) {
                Ok(()) => {
                    v.outcome = Outcome::Verified;
                    v.key_id = Some(ok.key_id());
                    v.appid = Some(ok.appid());
                    v.st_sq = ok.st_sq();
                    v.smp_cnt = ok.smp_cnt();
                    v.algorithms = Some(ok.algorithms());
                }
                Err(e) => v.outcome = Outcome::Failed(e),
            },
            Err(e) => v.outcome = Outcome::Failed(e),
        }
        v
    }
}

/// The kind a frame that failed classification claims to be, for the report.
fn guess_kind(frame: &[u8]) -> Kind {
    let Ok(f) = gander_wire::ethernet::Frame::new_checked(frame) else {
        return Kind::Other;
    };
    match f.ethertype() {
        gander_wire::ethernet::ETHERTYPE_GOOSE => Kind::Goose,
        gander_wire::ethernet::ETHERTYPE_SV => Kind::Sv,
        gander_wire::ethernet::ETHERTYPE_GSE_MANAGEMENT => Kind::GseManagement,
        gander_wire::ethernet::ETHERTYPE_IPV4 | gander_wire::ethernet::ETHERTYPE_IPV6 => {
            guess_session_kind(f.ethertype(), f.payload())
        }
        _ => Kind::Other,
    }
}

/// The kind of an IP packet that failed classification: a session (by the SPDU identifier
/// after `01 40`, else R-GOOSE) only if its UDP header, read as far as it goes, names port 102
/// or its payload starts with the CLTP octets; anything else (another protocol, a fragment
/// whose ports cannot be seen) is other traffic, never an IEC 61850 failure.
fn guess_session_kind(ethertype: u16, ip: &[u8]) -> Kind {
    let udp_at = if ethertype == gander_wire::ethernet::ETHERTYPE_IPV4 {
        let Some(&v) = ip.first() else {
            return Kind::Other;
        };
        let frag = ip
            .get(6..8)
            .map(|b| u16::from_be_bytes([b[0], b[1]]) & 0x1fff);
        if v >> 4 != 4 || ip.get(9) != Some(&gander_wire::ip::PROTOCOL_UDP) || frag != Some(0) {
            return Kind::Other;
        }
        usize::from(v & 0x0f) * 4
    } else {
        // IPv6 straight to UDP; a session behind extension headers that does not classify
        // cannot be told from other traffic here.
        if ip.get(6) != Some(&gander_wire::ipv6::next_header::UDP) {
            return Kind::Other;
        }
        gander_wire::ipv6::HEADER_LEN
    };
    let Some(udp) = ip.get(udp_at..udp_at + gander_wire::ip::UDP_HEADER_LEN) else {
        return Kind::Other;
    };
    let port = |i: usize| u16::from_be_bytes([udp[i], udp[i + 1]]);
    let payload = ip
        .get(udp_at + gander_wire::ip::UDP_HEADER_LEN..)
        .unwrap_or(&[]);
    if !view::is_session_datagram(port(0), port(2), payload) {
        return Kind::Other;
    }
    match payload.get(2).map(|&si| SpduId::from_u8(si)) {
        Some(Ok(si)) => Kind::of_spdu(si),
        _ => Kind::RGoose,
    }
}

/// Secures one frame with `key` as `profile` writes it. Returns `Ok(None)` for frames that are
/// not IEC 61850 traffic (the caller copies them unchanged), and an error for frames that are
/// already secured or malformed at any layer, and for GSE management (IEC 62351-6 defines no
/// security for it).
pub fn protect_frame(
    profile: Profile,
    key: &KeyEntry,
    frame: &[u8],
    ivs: &mut dyn IvSource,
    now: u64,
) -> Result<Option<Vec<u8>>, SecError> {
    protect_frame_as(profile, key, frame, ivs, now, Fit::Unfragmented)
}

/// How large a protected R-GOOSE/R-SV datagram may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// One IP packet within the 1500-octet path MTU (what a gateway or a sender writes
    /// unfragmented; `fit::check_link_payload`).
    Unfragmented,
    /// Up to the IP limit: the caller sends it in fragments
    /// (`gander_wire::ip_fragment::fragment`), as its publisher sent it. Layer-2 frames
    /// cannot be fragmented and are held to one Ethernet frame either way.
    Fragmented,
}

/// [`protect_frame`] of a datagram reassembled from fragments, which its caller sends on in
/// fragments again ([`Fit::Fragmented`]): the 1500-octet MTU does not bound it.
pub fn protect_frame_fragmented(
    profile: Profile,
    key: &KeyEntry,
    frame: &[u8],
    ivs: &mut dyn IvSource,
    now: u64,
) -> Result<Option<Vec<u8>>, SecError> {
    protect_frame_as(profile, key, frame, ivs, now, Fit::Fragmented)
}

fn protect_frame_as(
    profile: Profile,
    key: &KeyEntry,
    frame: &[u8],
    ivs: &mut dyn IvSource,
    now: u64,
    bound: Fit,
) -> Result<Option<Vec<u8>>, SecError> {
    // A cleartext SPDU written in another implementation's dialect is still protected
    // (re-framed in `profile`'s): the first dialect, own first, that reads it whole is used.
    let mut first_err = None;
    for p in [
        profile,
        Profile::Libiec61850,
        Profile::Standard,
        Profile::Seclib,
    ] {
        match view::classify(p, frame) {
            Ok(v) => match &v.content {
                Content::Session(s)
                    if unsecured_spdu(&s.pdu)
                        && gander_wire::spdu::validate_elements(s.pdu.payload(), &p.dialect())
                            .is_err() => {}
                _ => {
                    let mut out = Vec::new();
                    return Ok(
                        protect_view_fit(profile, key, &v, ivs, now, &mut out, bound)?
                            .then_some(out),
                    );
                }
            },
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(
        first_err.unwrap_or(SecError::Malformed(gander_wire::Error::BadLength {
            what: "payload",
            value: 0,
        })),
    )
}

/// Whether an SPDU carries no security; SecLib ends even unsecured SPDUs with an empty
/// signature element `85 00`, which protect accepts from any sender.
fn unsecured_spdu(pdu: &SessionPdu<'_>) -> bool {
    !view::session_secured(Profile::Seclib, pdu)
}

/// [`protect_frame`] of a classified frame, into a new buffer (see [`protect_view_into`]).
pub fn protect_view(
    profile: Profile,
    key: &KeyEntry,
    view: &FrameView<'_>,
    ivs: &mut dyn IvSource,
    now: u64,
) -> Result<Option<Vec<u8>>, SecError> {
    let mut out = Vec::new();
    Ok(protect_view_into(profile, key, view, ivs, now, &mut out)?.then_some(out))
}

/// [`protect_frame`] of a classified frame, written into `out`: `out` is resized to the
/// secured frame (a buffer reused across frames allocates nothing once it is large enough, as
/// the gateway's packet threads reuse theirs), and `Ok(true)` says it holds one. `Ok(false)`
/// for frames that are not IEC 61850 traffic (the caller forwards them unchanged; `out` is
/// untouched). On error `out` holds no secured frame and must not be sent.
pub fn protect_view_into(
    profile: Profile,
    key: &KeyEntry,
    view: &FrameView<'_>,
    ivs: &mut dyn IvSource,
    now: u64,
    out: &mut Vec<u8>,
) -> Result<bool, SecError> {
    protect_view_fit(profile, key, view, ivs, now, out, Fit::Unfragmented)
}

#[allow(clippy::too_many_arguments)] // protect_view_into's arguments and the size bound
fn protect_view_fit(
    profile: Profile,
    key: &KeyEntry,
    view: &FrameView<'_>,
    ivs: &mut dyn IvSource,
    now: u64,
    out: &mut Vec<u8>,
    bound: Fit,
) -> Result<bool, SecError> {
    match &view.content {
        Content::Other => Ok(false),
        Content::L2(l) if l.ethertype == gander_wire::ethernet::ETHERTYPE_GSE_MANAGEMENT => Err(
            SecError::Unsupported("IEC 62351-6 defines no security for GSE management"),
        ),
        Content::L2(l) => {
            // A signature too large for any frame is refused before signing (SLH-DSA's would
            // not even encode: the extension length has 12 bits); then the frame itself must
            // fit one Ethernet frame, since layer-2 GOOSE and SV cannot be fragmented.
            if let Some(s) = &key.signature {
                fit::check_signature(s.algorithm, s.wire_len(), Transport::L2Goose)?;
            }
            // From the classification: the frame is not located a second time. The output is
            // sized once, to the secured frame (`l2_frame::emit_secured`), so a fresh buffer is
            // allocated once and a reused one only when this frame is its longest yet.
            crate::l2::protect_view_into(profile, key, view.frame, l, ivs, now, out)?;
            fit::check_frame(Transport::L2Goose, out).map_err(|e| FitError {
                signature: key
                    .signature
                    .as_ref()
                    .map(|s| (s.algorithm.name(), s.wire_len())),
                ..e
            })?;
            Ok(true)
        }
        Content::Session(s) => {
            let pdu = &s.pdu;
            if !unsecured_spdu(pdu) {
                return Err(SecError::AlreadySecured(pdu.header.security.key_id()));
            }
            // The elements are checked in one pass without collecting them, with the drop
            // reasons in the order they have always had: a malformed element anywhere first,
            // then the first APPID or APDU an element may not carry.
            let dialect = s.profile.dialect();
            let mut refused = Ok(());
            for e in gander_wire::spdu::elements(pdu.payload(), &dialect) {
                let e = e?;
                if refused.is_ok() {
                    refused = key
                        .check_appid(e.appid)
                        .and_then(|()| Apdu::check_element(pdu.header.spdu_id, &e));
                }
            }
            refused?;
            let params = SendParams {
                spdu_id: pdu.header.spdu_id,
                spdu_number: pdu.header.spdu_number,
                now,
            };
            // Another implementation's dialect is re-framed in `profile`'s: its elements are
            // collected once (not the gateway's steady state, whose input is its own dialect).
            let reencoded;
            let payload = if dialect == profile.dialect() {
                SpduPayload::Encoded(pdu.payload())
            } else {
                reencoded = gander_wire::spdu::parse_elements(pdu.payload(), &dialect)?;
                SpduPayload::Elements(&reencoded)
            };
            let frame = SessionFrameRepr {
                udp: s.udp.located(view.frame)?,
                spdu: SpduOut::Secured(SecuredSpduRepr::new(profile, key, params, payload, ivs)?),
            };
            frame.emit_into(out)?;
            // What the link carries: the output behind the link header it was written behind
            // (the IP packet; a socket's payload with the IP and UDP headers it will get).
            let link_payload = match view.link {
                Link::Datagram => s.udp.ip_packet_len(out.len()),
                Link::Ethernet | Link::Ip => out.len() - s.udp.ip_offset,
            };
            if bound == Fit::Unfragmented {
                fit::check_link_payload(Transport::RGooseIpv4, link_payload)?;
            }
            Ok(true)
        }
    }
}

/// The Ethernet header of a frame, for display.
pub fn ethernet_header(frame: &[u8]) -> Option<EthernetRepr> {
    EthernetRepr::parse_bytes(frame).ok().map(|(r, _)| r)
}
