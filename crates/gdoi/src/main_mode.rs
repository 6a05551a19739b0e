//! IKEv1 main mode with pre-shared keys (RFC 2409 5, 5.4), both roles:
//!
//! ```text
//! 1 I->R  HDR, SA                 offers (suite.rs)
//! 2 R->I  HDR, SA                 the one transform chosen
//! 3 I->R  HDR, KE, Ni
//! 4 R->I  HDR, KE, Nr             both derive SKEYID, SKEYID_d/_a/_e (keys.rs)
//! 5 I->R  HDR*, IDii, HASH_I      encrypted; HASH_I = prf(SKEYID, g^xi|g^xr|CKY-I|CKY-R|SAi_b|IDii_b)
//! 6 R->I  HDR*, IDir, HASH_R      HASH_R = prf(SKEYID, g^xr|g^xi|CKY-R|CKY-I|SAi_b|IDir_b)
//! ```
//!
//! With pre-shared keys the responder must know the key before it can read message 5 (the
//! identity is inside it), so it takes the key chosen by the peer's address (RFC 2409 5.4)
//! and then checks that the identity in message 5 is the one that key belongs to.
//!
//! Each `handle` computes the whole next state before it changes anything: a refused message
//! leaves the machine as it was, so the genuine message can still follow a forged one.

use crate::cookie::{initiator_cookie, CookieJar};
use crate::dh::KeyPair;
use crate::error::Phase1Error;
use crate::keys::{self, Phase1Keys};
use crate::suite::Suite;
use gander_wire::isakmp::header::{exchange, flags};
use gander_wire::isakmp::payload::{emit_payloads, first_kind, parse_payloads, payloads_len};
use gander_wire::isakmp::sa::{doi, PROTO_ISAKMP};
use gander_wire::isakmp::{
    Header, IdPayload, Message, Payload, Proposal, SaBody, SaPayload, HEADER_LEN,
};
use gander_wire::Codec;
use rand::RngCore;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

/// SIT_IDENTITY_ONLY (RFC 2407 4.2).
const SIT_IDENTITY_ONLY: u32 = 1;
/// Nonce length gander sends (RFC 2409 5: 8 to 256 octets).
const NONCE_LEN: usize = 32;

/// An established phase-1 SA: what GROUPKEY-PULL and informational exchanges run under.
#[derive(Debug)]
pub struct Phase1Sa {
    /// Initiator cookie.
    pub cky_i: [u8; 8],
    /// Responder cookie.
    pub cky_r: [u8; 8],
    /// The negotiated suite.
    pub suite: Suite,
    /// SKEYID_d, SKEYID_a and the cipher key.
    pub keys: Phase1Keys,
    /// The last CBC block of phase 1: later exchanges' IVs are hash(this | Message ID).
    pub last_iv: [u8; keys::BLOCK],
    /// The peer's identity (IDii at the responder, IDir at the initiator).
    pub peer_id: IdPayload,
}

fn random_nonce() -> Vec<u8> {
    let mut n = vec![0u8; NONCE_LEN];
    rand::thread_rng().fill_bytes(&mut n);
    n
}

fn id_body(id: &IdPayload) -> Vec<u8> {
    let mut v = vec![id.id_type, id.protocol];
    v.extend_from_slice(&id.port.to_be_bytes());
    v.extend_from_slice(&id.data);
    v
}

fn header(cky_i: [u8; 8], cky_r: [u8; 8], encrypted: bool) -> Header {
    Header {
        initiator_cookie: cky_i,
        responder_cookie: cky_r,
        next_payload: 0,
        major_version: 1,
        minor_version: 0,
        exchange: exchange::MAIN_MODE,
        flags: if encrypted { flags::ENCRYPTION } else { 0 },
        message_id: 0,
        length: 0,
    }
}

fn plain(cky_i: [u8; 8], cky_r: [u8; 8], payloads: Vec<Payload>) -> Result<Vec<u8>, Phase1Error> {
    Ok(Message {
        header: header(cky_i, cky_r, false),
        payloads,
    }
    .to_bytes()?)
}

/// Encrypts `payloads` under `key`/`iv`; returns the message and its last CBC block.
pub(crate) fn seal(
    mut h: Header,
    payloads: &[Payload],
    key: &[u8],
    iv: &[u8],
) -> Result<(Vec<u8>, [u8; 16]), Phase1Error> {
    if !payloads.iter().all(Payload::fits) {
        return Err(gander_wire::isakmp::IsakmpError::TooLarge { what: "payload" }.into());
    }
    let mut body = Zeroizing::new(vec![0u8; payloads_len(payloads)]);
    emit_payloads(payloads, &mut body);
    let ct = keys::encrypt(key, iv, &body)?;
    h.flags |= flags::ENCRYPTION;
    h.next_payload = first_kind(payloads);
    h.length = u32::try_from(HEADER_LEN + ct.len()).map_err(|_| Phase1Error::Crypto("length"))?;
    let mut out = h.to_vec();
    out.extend_from_slice(&ct);
    Ok((out, keys::last_block(&ct)))
}

/// Decrypts an encrypted message; returns header, payloads and its last CBC block. Payloads
/// that do not parse after decryption are [`Phase1Error::AuthFailed`]: the key is wrong.
pub(crate) fn open(
    buf: &[u8],
    key: &[u8],
    iv: &[u8],
) -> Result<(Header, Vec<Payload>, [u8; 16]), Phase1Error> {
    let h = Header::parse(buf)?;
    if !h.encrypted() {
        return Err(Phase1Error::Decrypt("message not encrypted"));
    }
    if buf.len() != h.length as usize {
        return Err(gander_wire::isakmp::IsakmpError::BadLength {
            what: "message",
            value: buf.len(),
        }
        .into());
    }
    let ct = &buf[HEADER_LEN..];
    let pt = keys::decrypt(key, iv, ct)?;
    let p =
        parse_payloads(h.next_payload, &pt, h.exchange, true).map_err(Phase1Error::AuthFailed)?;
    Ok((h, p, keys::last_block(ct)))
}

fn only_main_mode(h: &Header, state: &'static str) -> Result<(), Phase1Error> {
    if h.exchange != exchange::MAIN_MODE || h.message_id != 0 {
        return Err(Phase1Error::Unexpected { state });
    }
    Ok(())
}

fn ke_nonce(p: &[Payload]) -> Result<(&[u8], &[u8]), Phase1Error> {
    let ke = p.iter().find_map(|x| {
        if let Payload::Ke(k) = x {
            Some(k.as_slice())
        } else {
            None
        }
    });
    let n = p.iter().find_map(|x| {
        if let Payload::Nonce(n) = x {
            Some(n.as_slice())
        } else {
            None
        }
    });
    let ke = ke.ok_or(Phase1Error::Missing("KE"))?;
    let n = n.ok_or(Phase1Error::Missing("nonce"))?;
    if !(8..=256).contains(&n.len()) {
        return Err(Phase1Error::Malformed(
            gander_wire::isakmp::IsakmpError::BadLength {
                what: "nonce",
                value: n.len(),
            },
        ));
    }
    Ok((ke, n))
}

fn id_hash(p: &[Payload]) -> Result<(&IdPayload, &[u8]), Phase1Error> {
    let id = p.iter().find_map(|x| {
        if let Payload::Id(i) = x {
            Some(i)
        } else {
            None
        }
    });
    let h = p.iter().find_map(|x| {
        if let Payload::Hash(h) = x {
            Some(h.as_slice())
        } else {
            None
        }
    });
    Ok((
        id.ok_or(Phase1Error::Missing("ID"))?,
        h.ok_or(Phase1Error::Missing("HASH"))?,
    ))
}

/// The context both HASH_I and HASH_R cover.
struct Exchange {
    suite: Suite,
    cky_i: [u8; 8],
    cky_r: [u8; 8],
    sai_b: Vec<u8>,
    gxi: Vec<u8>,
    gxr: Vec<u8>,
    keys: Phase1Keys,
}

impl Exchange {
    fn hash_i(&self, idii_b: &[u8]) -> Result<Zeroizing<Vec<u8>>, Phase1Error> {
        keys::prf(
            self.suite.hash,
            &self.keys.skeyid,
            &[
                &self.gxi,
                &self.gxr,
                &self.cky_i,
                &self.cky_r,
                &self.sai_b,
                idii_b,
            ],
        )
    }
    fn hash_r(&self, idir_b: &[u8]) -> Result<Zeroizing<Vec<u8>>, Phase1Error> {
        keys::prf(
            self.suite.hash,
            &self.keys.skeyid,
            &[
                &self.gxr,
                &self.gxi,
                &self.cky_r,
                &self.cky_i,
                &self.sai_b,
                idir_b,
            ],
        )
    }
    fn iv0(&self) -> Result<Vec<u8>, Phase1Error> {
        keys::hash(self.suite.hash, &[&self.gxi, &self.gxr])
    }
}

// ---------------------------------------------------------------------------------------------
// Initiator

enum IState {
    SentSa {
        sai_b: Vec<u8>,
    },
    SentKe {
        sai_b: Vec<u8>,
        suite: Suite,
        cky_r: [u8; 8],
        dh: KeyPair,
        ni: Vec<u8>,
    },
    SentId {
        ex: Exchange,
        iv: [u8; 16],
    },
    Established(Phase1Sa),
    Taken,
}

impl IState {
    fn name(&self) -> &'static str {
        match self {
            IState::SentSa { .. } => "initiator sent SA",
            IState::SentKe { .. } => "initiator sent KE",
            IState::SentId { .. } => "initiator sent ID",
            IState::Established(_) => "initiator established",
            IState::Taken => "initiator done",
        }
    }
}

/// The initiator (the group member).
pub struct Initiator {
    psk: Zeroizing<Vec<u8>>,
    id: IdPayload,
    suites: Vec<Suite>,
    cky_i: [u8; 8],
    state: IState,
}

impl Initiator {
    /// Starts an exchange offering `suites`; returns the machine and message 1.
    pub fn start(
        psk: &[u8],
        id: IdPayload,
        suites: Vec<Suite>,
    ) -> Result<(Initiator, Vec<u8>), Phase1Error> {
        let cky_i = initiator_cookie();
        let n = u8::try_from(suites.len()).map_err(|_| Phase1Error::NoProposalChosen)?;
        let sa = SaPayload {
            doi: doi::IPSEC,
            situation: SIT_IDENTITY_ONLY,
            body: SaBody::Proposals(vec![Proposal {
                number: 1,
                protocol: PROTO_ISAKMP,
                spi: vec![],
                transforms: suites
                    .iter()
                    .zip(1..=n)
                    .map(|(s, i)| s.transform(i))
                    .collect(),
            }]),
        };
        let mut sai_b = vec![0u8; sa.body_len()];
        sa.emit_body(&mut sai_b);
        let msg = plain(cky_i, [0; 8], vec![Payload::Sa(sa)])?;
        Ok((
            Initiator {
                psk: Zeroizing::new(psk.to_vec()),
                id,
                suites,
                cky_i,
                state: IState::SentSa { sai_b },
            },
            msg,
        ))
    }

    /// Handles messages 2, 4 and 6; returns the next message to send (none after 6).
    pub fn handle(&mut self, buf: &[u8]) -> Result<Option<Vec<u8>>, Phase1Error> {
        let state = self.state.name();
        let h = Header::parse(buf)?;
        only_main_mode(&h, state)?;
        if h.initiator_cookie != self.cky_i || h.responder_cookie == [0; 8] {
            return Err(Phase1Error::BadCookie);
        }
        match &self.state {
            IState::SentSa { sai_b } => {
                let m = Message::parse(buf)?;
                let sa = m.payloads.iter().find_map(|p| {
                    if let Payload::Sa(s) = p {
                        Some(s)
                    } else {
                        None
                    }
                });
                let sa = sa.ok_or(Phase1Error::Missing("SA"))?;
                let suite = match &sa.body {
                    SaBody::Proposals(p)
                        if p.len() == 1
                            && p[0].transforms.len() == 1
                            && p[0].protocol == PROTO_ISAKMP =>
                    {
                        Suite::from_transform(&p[0].transforms[0])
                            .filter(|s| self.suites.contains(s))
                    }
                    _ => None,
                }
                .ok_or(Phase1Error::NoProposalChosen)?;
                let dh = KeyPair::generate(suite.group)?;
                let ni = random_nonce();
                let msg = plain(
                    self.cky_i,
                    h.responder_cookie,
                    vec![
                        Payload::Ke(dh.public().to_vec()),
                        Payload::Nonce(ni.clone()),
                    ],
                )?;
                self.state = IState::SentKe {
                    sai_b: sai_b.clone(),
                    suite,
                    cky_r: h.responder_cookie,
                    dh,
                    ni,
                };
                Ok(Some(msg))
            }
            IState::SentKe {
                sai_b,
                suite,
                cky_r,
                dh,
                ni,
            } => {
                if h.responder_cookie != *cky_r {
                    return Err(Phase1Error::BadCookie);
                }
                let m = Message::parse(buf)?;
                let (ke, nr) = ke_nonce(&m.payloads)?;
                let gxy = dh.shared(ke)?;
                let keys = Phase1Keys::derive_psk(
                    suite.hash,
                    &self.psk,
                    ni,
                    nr,
                    &gxy,
                    (&self.cky_i, cky_r),
                    suite.aes_bits,
                )?;
                let ex = Exchange {
                    suite: *suite,
                    cky_i: self.cky_i,
                    cky_r: *cky_r,
                    sai_b: sai_b.clone(),
                    gxi: dh.public().to_vec(),
                    gxr: ke.to_vec(),
                    keys,
                };
                let hash_i = ex.hash_i(&id_body(&self.id))?;
                let iv = ex.iv0()?;
                let (msg, last) = seal(
                    header(self.cky_i, *cky_r, true),
                    &[Payload::Id(self.id.clone()), Payload::Hash(hash_i.to_vec())],
                    &ex.keys.enc_key,
                    &iv,
                )?;
                self.state = IState::SentId { ex, iv: last };
                Ok(Some(msg))
            }
            IState::SentId { ex, iv } => {
                if h.responder_cookie != ex.cky_r {
                    return Err(Phase1Error::BadCookie);
                }
                let (_, p, last) = open(buf, &ex.keys.enc_key, iv)?;
                let (idir, hash_r) = id_hash(&p)?;
                let want = ex.hash_r(&id_body(idir))?;
                if !bool::from(want.as_slice().ct_eq(hash_r)) {
                    return Err(Phase1Error::HashMismatch);
                }
                let peer_id = idir.clone();
                let IState::SentId { ex, .. } = core::mem::replace(&mut self.state, IState::Taken)
                else {
                    return Err(Phase1Error::Unexpected { state });
                };
                self.state = IState::Established(Phase1Sa {
                    cky_i: ex.cky_i,
                    cky_r: ex.cky_r,
                    suite: ex.suite,
                    keys: ex.keys,
                    last_iv: last,
                    peer_id,
                });
                Ok(None)
            }
            IState::Established(_) | IState::Taken => Err(Phase1Error::Unexpected { state }),
        }
    }

    /// The phase-1 SA once message 6 verified.
    pub fn established(&self) -> Option<&Phase1Sa> {
        if let IState::Established(sa) = &self.state {
            Some(sa)
        } else {
            None
        }
    }

    /// Takes the established SA out of the machine.
    pub fn into_sa(self) -> Option<Phase1Sa> {
        if let IState::Established(sa) = self.state {
            Some(sa)
        } else {
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Responder

enum RState {
    SentSa { sai_b: Vec<u8>, suite: Suite },
    SentKe { ex: Exchange, iv: Vec<u8> },
    Established(Phase1Sa),
    Taken,
}

impl RState {
    fn name(&self) -> &'static str {
        match self {
            RState::SentSa { .. } => "responder sent SA",
            RState::SentKe { .. } => "responder sent KE",
            RState::Established(_) => "responder established",
            RState::Taken => "responder done",
        }
    }
}

/// What the responder (the key server) is configured with for one peer.
pub struct ResponderConfig {
    /// The pre-shared key chosen for the peer's address.
    pub psk: Zeroizing<Vec<u8>>,
    /// Suites the responder accepts, in its order of preference.
    pub suites: Vec<Suite>,
    /// The responder's own identity (IDir).
    pub id: IdPayload,
    /// The identity the peer must show in message 5 (type and data), if the policy binds
    /// the key to one.
    pub expect_peer: Option<(u8, Vec<u8>)>,
}

/// The responder (the key server).
pub struct Responder {
    cfg: ResponderConfig,
    peer: Vec<u8>,
    cky_i: [u8; 8],
    cky_r: [u8; 8],
    state: RState,
}

impl Responder {
    /// Answers message 1 from `peer` (its address and port as octets, for the cookie);
    /// returns the machine and message 2.
    pub fn start(
        jar: &CookieJar,
        peer: &[u8],
        buf: &[u8],
        cfg: ResponderConfig,
    ) -> Result<(Responder, Vec<u8>), Phase1Error> {
        let m = Message::parse(buf)?;
        only_main_mode(&m.header, "responder idle")?;
        if m.header.responder_cookie != [0; 8] || m.header.initiator_cookie == [0; 8] {
            return Err(Phase1Error::BadCookie);
        }
        let sa = m.payloads.iter().find_map(|p| {
            if let Payload::Sa(s) = p {
                Some(s)
            } else {
                None
            }
        });
        let sa = sa.ok_or(Phase1Error::Missing("SA"))?;
        let SaBody::Proposals(props) = &sa.body else {
            return Err(Phase1Error::NoProposalChosen);
        };
        // Our preference order over what was offered (RFC 2409 5: the responder picks).
        let mut chosen = None;
        'pick: for want in &cfg.suites {
            for p in props
                .iter()
                .filter(|p| p.protocol == PROTO_ISAKMP && p.spi.is_empty())
            {
                for t in &p.transforms {
                    if Suite::from_transform(t).as_ref() == Some(want) {
                        chosen = Some((p.number, t.clone(), *want));
                        break 'pick;
                    }
                }
            }
        }
        let (pnum, t, suite) = chosen.ok_or(Phase1Error::NoProposalChosen)?;
        let mut sai_b = vec![0u8; sa.body_len()];
        sa.emit_body(&mut sai_b);
        let cky_i = m.header.initiator_cookie;
        let cky_r = jar.responder_cookie(peer, &cky_i)?;
        let reply = SaPayload {
            doi: sa.doi,
            situation: sa.situation,
            body: SaBody::Proposals(vec![Proposal {
                number: pnum,
                protocol: PROTO_ISAKMP,
                spi: vec![],
                transforms: vec![t],
            }]),
        };
        let msg = plain(cky_i, cky_r, vec![Payload::Sa(reply)])?;
        Ok((
            Responder {
                cfg,
                peer: peer.to_vec(),
                cky_i,
                cky_r,
                state: RState::SentSa { sai_b, suite },
            },
            msg,
        ))
    }

    /// Handles messages 3 and 5; returns the reply.
    pub fn handle(&mut self, jar: &CookieJar, buf: &[u8]) -> Result<Vec<u8>, Phase1Error> {
        let state = self.state.name();
        let h = Header::parse(buf)?;
        only_main_mode(&h, state)?;
        // The cookie check comes before any expensive work (RFC 2408 2.5.3).
        if h.initiator_cookie != self.cky_i
            || h.responder_cookie != self.cky_r
            || !jar.check(&self.peer, &self.cky_i, &self.cky_r)?
        {
            return Err(Phase1Error::BadCookie);
        }
        match &self.state {
            RState::SentSa { sai_b, suite } => {
                let m = Message::parse(buf)?;
                let (ke, ni) = ke_nonce(&m.payloads)?;
                let dh = KeyPair::generate(suite.group)?;
                let gxy = dh.shared(ke)?;
                let nr = random_nonce();
                let keys = Phase1Keys::derive_psk(
                    suite.hash,
                    &self.cfg.psk,
                    ni,
                    &nr,
                    &gxy,
                    (&self.cky_i, &self.cky_r),
                    suite.aes_bits,
                )?;
                let ex = Exchange {
                    suite: *suite,
                    cky_i: self.cky_i,
                    cky_r: self.cky_r,
                    sai_b: sai_b.clone(),
                    gxi: ke.to_vec(),
                    gxr: dh.public().to_vec(),
                    keys,
                };
                let iv = ex.iv0()?;
                let msg = plain(
                    self.cky_i,
                    self.cky_r,
                    vec![Payload::Ke(dh.public().to_vec()), Payload::Nonce(nr)],
                )?;
                self.state = RState::SentKe { ex, iv };
                Ok(msg)
            }
            RState::SentKe { ex, iv } => {
                let (_, p, last) = open(buf, &ex.keys.enc_key, iv)?;
                let (idii, hash_i) = id_hash(&p)?;
                let want = ex.hash_i(&id_body(idii))?;
                if !bool::from(want.as_slice().ct_eq(hash_i)) {
                    return Err(Phase1Error::HashMismatch);
                }
                if let Some((t, d)) = &self.cfg.expect_peer {
                    if idii.id_type != *t || idii.data != *d {
                        return Err(Phase1Error::BadIdentity);
                    }
                }
                let hash_r = ex.hash_r(&id_body(&self.cfg.id))?;
                let (msg, after) = seal(
                    header(self.cky_i, self.cky_r, true),
                    &[
                        Payload::Id(self.cfg.id.clone()),
                        Payload::Hash(hash_r.to_vec()),
                    ],
                    &ex.keys.enc_key,
                    &last,
                )?;
                let peer_id = idii.clone();
                let RState::SentKe { ex, .. } = core::mem::replace(&mut self.state, RState::Taken)
                else {
                    return Err(Phase1Error::Unexpected { state });
                };
                self.state = RState::Established(Phase1Sa {
                    cky_i: ex.cky_i,
                    cky_r: ex.cky_r,
                    suite: ex.suite,
                    keys: ex.keys,
                    last_iv: after,
                    peer_id,
                });
                Ok(msg)
            }
            RState::Established(_) | RState::Taken => Err(Phase1Error::Unexpected { state }),
        }
    }

    /// The phase-1 SA once message 5 verified.
    pub fn established(&self) -> Option<&Phase1Sa> {
        if let RState::Established(sa) = &self.state {
            Some(sa)
        } else {
            None
        }
    }

    /// Takes the established SA out of the machine.
    pub fn into_sa(self) -> Option<Phase1Sa> {
        if let RState::Established(sa) = self.state {
            Some(sa)
        } else {
            None
        }
    }
}
