//! Whole captured frames: find the IEC 61850 traffic in an Ethernet frame and protect or verify it.
//!
//! R-GOOSE and R-SV are UDP datagrams whose payload starts `01 40` (CLTP UD, IEC 61850-90-5);
//! any UDP datagram to or from port 102 (the IEC 61850-90-5 port) is treated as a session PDU too,
//! so that a frame whose first bytes were damaged fails verification instead of being skipped;
//! GOOSE is EtherType 0x88B8, with or without an 802.1Q tag (IEC 61850-8-1). Everything else is
//! reported as `other` and left alone. This is what `gander frame` and the gateway share.

use crate::error::SecError;
use crate::keystore::{KeyEntry, KeyStore};
use crate::profile::Profile;
use crate::session::{self, Checked, IvSource, SendParams, SessionReceiver};
use gander_wire::ethernet::{self, EthernetRepr, Frame};
use gander_wire::ip::{self, Ipv4Address};
use gander_wire::session::{SessionPdu, SpduId};
use std::ops::Range;

/// The UDP port of IEC 61850-90-5 sessions.
pub const SESSION_PORT: u16 = 102;

/// What a frame carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Located {
    /// An IEC 61850-90-5 session PDU in UDP, at this byte range of the frame.
    Session {
        /// UDP payload range.
        payload: Range<usize>,
        /// Source address and port (the replay window's sender).
        src: (Ipv4Address, u16),
        /// SI byte.
        spdu_id: u8,
    },
    /// A layer-2 GOOSE frame; `offset` is where APPID starts.
    Goose {
        /// Offset of the APPID field.
        offset: usize,
    },
    /// Anything else.
    Other,
}

/// Finds the IEC 61850 traffic in an Ethernet frame.
pub fn locate(frame: &[u8]) -> Located {
    let Ok(eth) = Frame::new_checked(frame) else {
        return Located::Other;
    };
    match eth.ethertype() {
        ethernet::ETHERTYPE_GOOSE => Located::Goose {
            offset: eth.payload_offset(),
        },
        ethernet::ETHERTYPE_IPV4 => match ip::locate_udp(frame) {
            Ok(loc) => {
                let p = &frame[loc.payload.clone()];
                let cltp = p.len() >= 2
                    && p[0] == gander_wire::session::CLTP_LI
                    && p[1] == gander_wire::session::CLTP_UD;
                if cltp || loc.dst_port == SESSION_PORT || loc.src_port == SESSION_PORT {
                    Located::Session {
                        spdu_id: p.get(2).copied().unwrap_or(0),
                        payload: loc.payload,
                        src: (loc.src_addr, loc.src_port),
                    }
                } else {
                    Located::Other
                }
            }
            Err(_) => Located::Other,
        },
        _ => Located::Other,
    }
}

/// The kind of traffic, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// R-GOOSE (SI 0xA1, or a tunnelled GOOSE APDU).
    RGoose,
    /// R-SV (SI 0xA2).
    RSv,
    /// Another session SPDU (management).
    Session,
    /// Layer-2 GOOSE.
    Goose,
    /// Not IEC 61850 traffic gander handles.
    Other,
}

impl Kind {
    /// Name in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::RGoose => "r-goose",
            Kind::RSv => "r-sv",
            Kind::Session => "session",
            Kind::Goose => "goose",
            Kind::Other => "other",
        }
    }
}

fn session_kind(si: u8) -> Kind {
    match SpduId::from_u8(si) {
        Ok(SpduId::Goose) | Ok(SpduId::Tunnelled) => Kind::RGoose,
        Ok(SpduId::SampledValues) => Kind::RSv,
        _ => Kind::Session,
    }
}

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

fn goose_numbers(apdu: &[u8]) -> Option<(u32, u32)> {
    gander_wire::goose::GoosePdu::parse(apdu)
        .ok()
        .map(|g| (g.st_num, g.sq_num))
}

/// Verifies every frame of a capture in order, keeping replay state across frames.
#[derive(Debug)]
pub struct CaptureVerifier<'s> {
    store: &'s KeyStore,
    sessions: SessionReceiver<(Ipv4Address, u16)>,
    goose: std::collections::HashMap<([u8; 6], u16), crate::replay::GooseSequence>,
}

impl<'s> CaptureVerifier<'s> {
    /// A verifier for `profile` with the keys of `store`.
    pub fn new(profile: Profile, store: &'s KeyStore) -> Self {
        CaptureVerifier {
            store,
            sessions: SessionReceiver::new(profile, false),
            goose: Default::default(),
        }
    }

    /// Verifies one frame captured at `now` (Unix seconds).
    pub fn verify(&mut self, frame: &[u8], now: u64) -> Verdict {
        match locate(frame) {
            Located::Other => Verdict::new(Kind::Other, Outcome::Skipped),
            Located::Goose { .. } => {
                let (mut v, seq) =
                    crate::l2::verdict(self.sessions.profile, self.store, frame, now);
                if let (Outcome::Verified, Some((src, appid, st, sq))) = (&v.outcome, seq) {
                    let last = self.goose.entry((src, appid)).or_default();
                    match last.check(st, sq) {
                        Ok(()) => last.accept(st, sq),
                        Err(e) => v.outcome = Outcome::Failed(e),
                    }
                }
                v
            }
            Located::Session {
                payload,
                src,
                spdu_id,
            } => {
                let kind = session_kind(spdu_id);
                let bytes = &frame[payload];
                let header = SessionPdu::parse(bytes, &self.sessions.profile.dialect()).ok();
                let mut v = match self.sessions.receive(self.store, src, bytes, now) {
                    Ok(Checked::Verified(s)) => {
                        let mut v = Verdict::new(kind, Outcome::Verified);
                        let p = s.protection();
                        v.algorithms = Some((p.mac.name(), p.enc.name()));
                        if let Ok(els) = s.elements() {
                            if let Some(e) = els.first() {
                                v.appid = Some(e.appid);
                                v.st_sq = goose_numbers(e.apdu);
                            }
                        }
                        v
                    }
                    Ok(Checked::Unsecured(pdu)) => {
                        let mut v = Verdict::new(kind, Outcome::Unsecured);
                        let d = self.sessions.profile.dialect();
                        if let Ok(els) = gander_wire::session::parse_elements(pdu.payload(), &d) {
                            if let Some(e) = els.first() {
                                v.appid = Some(e.appid);
                                v.st_sq = goose_numbers(e.apdu);
                            }
                        }
                        v
                    }
                    Err(e) => Verdict::new(kind, Outcome::Failed(e)),
                };
                if let Some(h) = header {
                    v.key_id = Some(h.header.security.key_id());
                    v.spdu_number = Some(h.header.spdu_number);
                }
                v
            }
        }
    }
}

/// Reads a cleartext session PDU written by any known implementation (the profile's own
/// dialect first) and returns its header and elements.
fn parse_plain_session(
    profile: Profile,
    bytes: &[u8],
) -> Result<(SessionPdu<'_>, gander_wire::session::Dialect), SecError> {
    let mut first_err = None;
    for p in [
        profile,
        Profile::Libiec61850,
        Profile::Standard,
        Profile::Seclib,
    ] {
        let d = p.dialect();
        match SessionPdu::parse(bytes, &d) {
            Ok(pdu) if gander_wire::session::parse_elements(pdu.payload(), &d).is_ok() => {
                return Ok((pdu, d))
            }
            Ok(_) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(SecError::Malformed(first_err.unwrap_or(
        gander_wire::Error::BadLength {
            what: "payload",
            value: 0,
        },
    )))
}

/// Secures one frame with `key` as `profile` writes it. Returns `Ok(None)` for frames that are
/// not GOOSE/R-GOOSE/R-SV (the caller copies them unchanged), and an error for frames that are
/// already secured or malformed.
pub fn protect_frame(
    profile: Profile,
    key: &KeyEntry,
    frame: &[u8],
    ivs: &mut dyn IvSource,
    now: u64,
) -> Result<Option<Vec<u8>>, SecError> {
    match locate(frame) {
        Located::Other => Ok(None),
        Located::Goose { .. } => crate::l2::protect(profile, key, frame, ivs, now).map(Some),
        Located::Session { payload, .. } => {
            let bytes = &frame[payload];
            let (pdu, dialect) = parse_plain_session(profile, bytes)?;
            let sec = &pdu.header.security;
            let secured = sec.key_id() != 0
                || !sec.iv().is_empty()
                || matches!(sec, gander_wire::session::SecurityInfo::V1 { enc_code, mac_code, .. } if *enc_code != 0 || *mac_code != 0)
                || !(pdu.trailer().is_empty() || pdu.trailer() == [0x85, 0]);
            if secured {
                return Err(SecError::AlreadySecured(sec.key_id()));
            }
            let elements = gander_wire::session::parse_elements(pdu.payload(), &dialect)?;
            let params = SendParams {
                spdu_id: pdu.header.spdu_id,
                spdu_number: pdu.header.spdu_number,
                now,
            };
            let mut out = Vec::with_capacity(bytes.len() + 64);
            session::protect(profile, key, params, &elements, ivs, &mut out)?;
            Ok(Some(ip::rewrite_udp_payload(frame, &out)?))
        }
    }
}

/// The Ethernet header of a frame, for display.
pub fn ethernet_header(frame: &[u8]) -> Option<EthernetRepr> {
    EthernetRepr::parse_bytes(frame).ok().map(|(r, _)| r)
}
