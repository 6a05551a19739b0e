//! Notifications to refused peers: the key server tells a member why it was refused with an
//! ISAKMP Informational exchange (RFC 2408 4.8) carrying one Notification payload (3.14)
//! whose Notify Message Type is the RFC 2408 3.14.1 reason, and the member reads it.
//!
//! Two forms, by what the key server can prove:
//!
//! - **Unprotected** (no phase-1 SA yet, or the peer failed to authenticate it: a wrong
//!   pre-shared key, a certificate that is untrusted, revoked or not authorised, an address no
//!   member registers from): `HDR, N` in the clear, the cookies of the refused exchange in the
//!   header and as the Notification's SPI (Protocol-ID PROTO_ISAKMP). Anybody who can send a
//!   datagram with the key server's source address can forge one.
//! - **Protected** (the member's phase-1 SA is established, GROUPKEY-PULL refused: an unknown
//!   group, a member not authorised for it): `HDR*, HASH(1), N` under the phase-1 SA, as RFC
//!   2409 5.7 protects an informational exchange: a fresh non-zero Message ID, the IV
//!   hash(last phase-1 CBC block | M-ID), `HASH(1) = prf(SKEYID_a, M-ID | N)`.
//!
//! **The member's rule** ([`read`], `net::member`): an unprotected notification changes no
//! state. The member keeps waiting and retransmitting exactly as if nothing had arrived and
//! only remembers the last one; if the exchange then ends without an acceptable reply, the
//! failure names that notification (flagged unauthenticated) instead of "no answer". So a
//! spoofed notification can neither end a registration early, nor move the member to its
//! second key server sooner, nor stop a genuine reply from being accepted; at worst it changes
//! the text of a failure that happened anyway. A protected notification whose HASH verifies
//! comes from the key server the member authenticated in phase 1, so it ends the
//! registration at once with that reason. A protected-looking datagram whose HASH does not
//! verify is ignored like any forged datagram.
//!
//! The key server sends a notification only in answer to a datagram whose ISAKMP header
//! parses (it needs the cookies), never in answer to an Informational exchange (two peers
//! must not notify each other in a loop), and at most [`NOTIFY_PER_SECOND`] a second: a
//! notification (56 octets unprotected) is smaller than any message it answers, so it cannot
//! amplify a reflection, and the cap bounds what a spoofed flood makes it send.

use crate::keys;
use crate::main_mode::{seal, Phase1Sa};
use gander_wire::isakmp::chain_end;
use gander_wire::isakmp::header::exchange;
use gander_wire::isakmp::payload::{emit_payloads, first_kind, parse_payloads, payloads_len};
use gander_wire::isakmp::sa::{doi, PROTO_ISAKMP};
use gander_wire::isakmp::{Header, NotifyPayload, Payload, HEADER_LEN};
use gander_wire::Codec;
use rand::RngCore;
use subtle::ConstantTimeEq;

/// Notifications the key server sends per second at most (the rest are only logged).
pub const NOTIFY_PER_SECOND: u32 = 50;

/// Why a notification could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotifyError {
    /// A cryptographic primitive failed (never caused by peer data).
    #[error("notification: {0}")]
    Crypto(#[from] crate::Phase1Error),
}

/// A notification the member read from the key server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notice {
    /// The Notify Message Type (RFC 2408 3.14.1).
    pub notify: u16,
    /// Whether it came under the member's phase-1 SA with a HASH that verifies.
    pub authenticated: bool,
}

impl Notice {
    /// The RFC 2408 name of the notification.
    pub fn name(&self) -> &'static str {
        crate::kdc_events::notify_name(self.notify)
    }
}

impl core::fmt::Display for Notice {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} ({}), {}",
            self.name(),
            self.notify,
            if self.authenticated {
                "authenticated under the phase-1 SA"
            } else {
                "unauthenticated notification (not acted on until the exchange timed out)"
            }
        )
    }
}

fn payload(cky_i: [u8; 8], cky_r: [u8; 8], notify: u16) -> Payload {
    let mut spi = cky_i.to_vec();
    spi.extend_from_slice(&cky_r);
    Payload::Notify(NotifyPayload {
        doi: doi::IPSEC,
        protocol: PROTO_ISAKMP,
        message_type: notify,
        spi,
        data: Vec::new(),
    })
}

fn header(cky_i: [u8; 8], cky_r: [u8; 8], message_id: u32) -> Header {
    Header {
        initiator_cookie: cky_i,
        responder_cookie: cky_r,
        next_payload: 0,
        major_version: 1,
        minor_version: 0,
        exchange: exchange::INFORMATIONAL,
        flags: 0,
        message_id,
        length: 0,
    }
}

fn message_id() -> u32 {
    let mut m = 0;
    while m == 0 {
        m = rand::thread_rng().next_u32();
    }
    m
}

/// `HDR, N` in the clear for the exchange with these cookies.
pub fn unprotected(cky_i: [u8; 8], cky_r: [u8; 8], notify: u16) -> Vec<u8> {
    let n = [payload(cky_i, cky_r, notify)];
    let mut h = header(cky_i, cky_r, message_id());
    h.next_payload = first_kind(&n);
    let len = HEADER_LEN + payloads_len(&n);
    h.length = u32::try_from(len).unwrap_or(u32::MAX);
    let mut out = h.to_vec();
    let start = out.len();
    out.resize(start + payloads_len(&n), 0);
    emit_payloads(&n, &mut out[start..]);
    out
}

fn hash1(sa: &Phase1Sa, mid: u32, n_bytes: &[u8]) -> Result<Vec<u8>, crate::Phase1Error> {
    Ok(keys::prf(
        sa.suite.hash,
        &sa.keys.skeyid_a,
        &[&mid.to_be_bytes(), n_bytes],
    )?
    .to_vec())
}

fn first_iv(sa: &Phase1Sa, mid: u32) -> Result<Vec<u8>, crate::Phase1Error> {
    keys::hash(sa.suite.hash, &[&sa.last_iv, &mid.to_be_bytes()])
}

/// `HDR*, HASH(1), N` under the phase-1 SA (RFC 2409 5.7).
pub fn protected(sa: &Phase1Sa, notify: u16) -> Result<Vec<u8>, NotifyError> {
    let mid = message_id();
    let n = [payload(sa.cky_i, sa.cky_r, notify)];
    let mut n_bytes = vec![0u8; payloads_len(&n)];
    emit_payloads(&n, &mut n_bytes);
    let h = hash1(sa, mid, &n_bytes)?;
    let payloads = [Payload::Hash(h), n[0].clone()];
    let iv = first_iv(sa, mid)?;
    let (msg, _) = seal(
        header(sa.cky_i, sa.cky_r, mid),
        &payloads,
        &sa.keys.enc_key,
        &iv,
    )?;
    Ok(msg)
}

fn notify_of(payloads: &[Payload]) -> Option<u16> {
    payloads.iter().find_map(|p| match p {
        Payload::Notify(n) => Some(n.message_type),
        _ => None,
    })
}

/// Reads `buf` as a notification for the member whose exchange has initiator cookie `cky_i`
/// (and, once phase 1 is done, phase-1 SA `sa`). `None`: not a notification for this member,
/// or a protected one that does not verify; either way the caller treats the datagram as
/// if it never arrived. Reading changes nothing.
pub fn read(buf: &[u8], cky_i: [u8; 8], sa: Option<&Phase1Sa>) -> Option<Notice> {
    let h = Header::parse(buf).ok()?;
    if h.exchange != exchange::INFORMATIONAL || h.initiator_cookie != cky_i {
        return None;
    }
    if usize::try_from(h.length).ok()? != buf.len() {
        return None;
    }
    let body = &buf[HEADER_LEN..];
    if !h.encrypted() {
        let payloads = parse_payloads(h.next_payload, body, h.exchange, false).ok()?;
        return notify_of(&payloads).map(|notify| Notice {
            notify,
            authenticated: false,
        });
    }
    let sa = sa?;
    if h.responder_cookie != sa.cky_r || h.message_id == 0 {
        return None;
    }
    let iv = first_iv(sa, h.message_id).ok()?;
    let pt = keys::decrypt(&sa.keys.enc_key, &iv, body).ok()?;
    let payloads = parse_payloads(h.next_payload, &pt, h.exchange, true).ok()?;
    let Some(Payload::Hash(got)) = payloads.first() else {
        return None;
    };
    let end = chain_end(h.next_payload, &pt).ok()?;
    let after = pt.get(4 + got.len()..end)?;
    let want = hash1(sa, h.message_id, after).ok()?;
    if !bool::from(want.ct_eq(got)) {
        return None;
    }
    notify_of(&payloads[1..]).map(|notify| Notice {
        notify,
        authenticated: true,
    })
}

/// The key server's notification budget: at most [`NOTIFY_PER_SECOND`] per second.
#[derive(Debug, Default)]
pub struct NotifyLimit {
    second: u64,
    sent: u32,
}

impl NotifyLimit {
    /// Whether one more notification may go out in second `now`; counts it if so.
    pub fn allow(&mut self, now: u64) -> bool {
        if now != self.second {
            self.second = now;
            self.sent = 0;
        }
        if self.sent >= NOTIFY_PER_SECOND {
            return false;
        }
        self.sent += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_wire::isakmp::error::notify_type as nt;
    use proptest::prelude::*;

    /// A member's and the key server's phase-1 SA from a real main mode (pre-shared key).
    fn sa_pair() -> (Phase1Sa, Phase1Sa) {
        use crate::cookie::CookieJar;
        use crate::main_mode::ResponderConfig;
        use crate::{Initiator, Responder, Suite};
        use gander_wire::isakmp::payload::id_type;
        use gander_wire::isakmp::IdPayload;
        let id = |s: &str| IdPayload {
            id_type: id_type::KEY_ID,
            protocol: 0,
            port: 0,
            data: s.as_bytes().to_vec(),
        };
        let suite = Suite::all(3600)[1];
        let jar = CookieJar::new();
        let (mut i, m1) = Initiator::start(b"psk", id("ied"), vec![suite]).unwrap();
        let cfg = ResponderConfig {
            psk: zeroize::Zeroizing::new(b"psk".to_vec()),
            suites: vec![suite],
            id: id("kdc"),
            expect_peer: None,
            cert: None,
        };
        let (mut r, m2) = Responder::start(&jar, &[1, 2, 3, 4], &m1, cfg).unwrap();
        let m3 = i.handle(&m2).unwrap().unwrap();
        let m4 = r.handle(&jar, &m3).unwrap();
        let m5 = i.handle(&m4).unwrap().unwrap();
        let m6 = r.handle(&jar, &m5).unwrap();
        i.handle(&m6).unwrap();
        (i.into_sa().unwrap(), r.into_sa().unwrap())
    }

    #[test]
    fn unprotected_notification_reads_back_unauthenticated() {
        let m = unprotected([1; 8], [2; 8], nt::AUTHENTICATION_FAILED);
        assert_eq!(m.len(), 28 + 12 + 16);
        let n = read(&m, [1; 8], None).unwrap();
        assert_eq!(n.notify, nt::AUTHENTICATION_FAILED);
        assert!(!n.authenticated);
        assert!(n.to_string().contains("AUTHENTICATION-FAILED"));
        // Another exchange's notification is not this member's.
        assert!(read(&m, [9; 8], None).is_none());
    }

    #[test]
    fn protected_notification_verifies_only_under_its_sa() {
        let (member, kdc) = sa_pair();
        let m = protected(&kdc, nt::INVALID_ID_INFORMATION).unwrap();
        let n = read(&m, member.cky_i, Some(&member)).unwrap();
        assert_eq!(
            n,
            Notice {
                notify: nt::INVALID_ID_INFORMATION,
                authenticated: true
            }
        );
        // Without the SA it cannot be read; with another SA its HASH does not verify.
        assert!(read(&m, member.cky_i, None).is_none());
        let (other, _) = sa_pair();
        let mut forged = m.clone();
        forged[8..16].copy_from_slice(&other.cky_r);
        forged[..8].copy_from_slice(&other.cky_i);
        assert!(read(&forged, other.cky_i, Some(&other)).is_none());
    }

    #[test]
    fn the_budget_is_per_second() {
        let mut l = NotifyLimit::default();
        assert!((0..NOTIFY_PER_SECOND).all(|_| l.allow(7)));
        assert!(!l.allow(7));
        assert!(l.allow(8));
    }

    proptest! {
        #[test]
        fn any_notify_type_round_trips(t in any::<u16>(), ci in any::<[u8; 8]>(), cr in any::<[u8; 8]>()) {
            let n = read(&unprotected(ci, cr, t), ci, None).unwrap();
            prop_assert_eq!(n.notify, t);
            prop_assert!(!n.authenticated);
        }

        #[test]
        fn a_flipped_bit_never_authenticates(i in 0usize..200, bit in 0u8..8) {
            let (member, kdc) = sa_pair();
            let mut m = protected(&kdc, nt::INVALID_ID_INFORMATION).unwrap();
            // An octet after the 28-octet header (drawn into range, not rejected: rejections
            // abort a run of many cases).
            let i = 28 + i % (m.len() - 28);
            m[i] ^= 1 << bit;
            let r = read(&m, member.cky_i, Some(&member));
            prop_assert!(r.is_none(), "{:?}", r);
        }

        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            let (member, _) = sa_pair();
            let _ = read(&b, member.cky_i, Some(&member));
            let _ = read(&b, [0; 8], None);
        }
    }
}
