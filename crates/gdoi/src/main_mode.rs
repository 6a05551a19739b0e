//! IKEv1 main mode (RFC 2409 5) with pre-shared keys (5.4) or signatures (5.1), both roles:
//!
//! ```text
//! 1 I->R  HDR, SA                        offers (suite.rs), each with its auth method
//! 2 R->I  HDR, SA                        the one transform chosen
//! 3 I->R  HDR, KE, Ni [, CERTREQ]
//! 4 R->I  HDR, KE, Nr [, CERTREQ]        both derive SKEYID, SKEYID_d/_a/_e (keys.rs)
//! 5 I->R  HDR*, IDii, HASH_I             pre-shared key, or with signatures:
//!         HDR*, IDii, CERT, SIG_I        encrypted; HASH_I = prf(SKEYID, g^xi|g^xr|CKY-I|CKY-R|SAi_b|IDii_b)
//! 6 R->I  HDR*, IDir, HASH_R | CERT, SIG_R   HASH_R = prf(SKEYID, g^xr|g^xi|CKY-R|CKY-I|SAi_b|IDir_b)
//! ```
//!
//! With pre-shared keys the responder must know the key before it can read message 5 (the
//! identity is inside it), so it takes the key chosen by the peer's address (RFC 2409 5.4)
//! and then checks that the identity in message 5 is the one that key belongs to. With
//! signatures (cert_auth.rs) the peer's certificate is checked against the trust store, its
//! identity against the ID payload, and its signature over HASH_I / HASH_R; the key server's
//! policy then says whether that certificate may register at all.
//!
//! Both roles share one implementation of each step after message 2 (`keyed`, `own_auth`,
//! `peer_auth`, `establish`): the initiator and the responder differ only in which hash
//! they make and which they check.
//!
//! Each `handle` computes the whole next state before it changes anything: a refused message
//! leaves the machine as it was, so the genuine message can still follow a forged one.

use crate::cert_auth::{verify_peer_then, CertError, CertMatch, Credentials, PeerCert};
use crate::cookie::{initiator_cookie, CookieJar};
use crate::dh::KeyPair;
use crate::error::Phase1Error;
use crate::keys::{self, Phase1Keys};
use crate::profile::PeerProfile;
use crate::suite::{AuthMethod, Suite};
use gander_wire::isakmp::header::{exchange, flags};
use gander_wire::isakmp::payload::CERT_X509_SIG;
use gander_wire::isakmp::payload::{emit_payloads, first_kind, parse_payloads, payloads_len};
use gander_wire::isakmp::sa::PROTO_ISAKMP;
use gander_wire::isakmp::{
    CertPayload, Header, IdPayload, Message, Payload, Proposal, SaBody, SaPayload, Transform,
    HEADER_LEN,
};
use gander_wire::Codec;
use rand::RngCore;
use std::sync::Arc;
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
    /// How the peer authenticated.
    pub method: AuthMethod,
    /// The peer's verified certificate, with signature authentication.
    pub peer_cert: Option<PeerCert>,
}

impl Phase1Sa {
    /// The peer's name for events and logs: its certificate's subject with signatures, the
    /// address as text when it names itself by ID_IPV4_ADDR or ID_IPV6_ADDR, its ID data
    /// otherwise.
    pub fn peer_name(&self) -> Vec<u8> {
        match &self.peer_cert {
            Some(c) => c.subject.clone().into_bytes(),
            None => crate::psk_identity::address_text(&self.peer_id)
                .map_or_else(|| self.peer_id.data.clone(), String::into_bytes),
        }
    }
}

/// How this side authenticates.
#[derive(Clone)]
pub enum Auth {
    /// A pre-shared key.
    Psk(Zeroizing<Vec<u8>>),
    /// A certificate and its key (and the trust store for the peer's certificate).
    Cert(Arc<Credentials>),
}

impl Auth {
    fn method(&self) -> AuthMethod {
        match self {
            Auth::Psk(_) => AuthMethod::Psk,
            Auth::Cert(c) => c.method(),
        }
    }
}

/// Most CERTREQ payloads sent (one per trusted CA).
const MAX_CERTREQ: usize = 8;

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

fn sa_of(p: &[Payload]) -> Result<&SaPayload, Phase1Error> {
    p.iter()
        .find_map(|x| {
            if let Payload::Sa(s) = x {
                Some(s)
            } else {
                None
            }
        })
        .ok_or(Phase1Error::Missing("SA"))
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

/// Messages 3 and 4: KE and nonce, and with signatures a CERTREQ per trusted CA (RFC 2409 5.1
/// lets either side ask for the other's certificate; gander always sends its own anyway).
fn ke_payloads(dh: &KeyPair, nonce: Vec<u8>, auth: &Auth) -> Vec<Payload> {
    let mut v = vec![Payload::Ke(dh.public().to_vec()), Payload::Nonce(nonce)];
    if let Auth::Cert(c) = auth {
        v.extend(
            c.trust()
                .ca_names()
                .into_iter()
                .take(MAX_CERTREQ)
                .map(|data| {
                    Payload::CertReq(CertPayload {
                        encoding: CERT_X509_SIG,
                        data,
                    })
                }),
        );
    }
    v
}

/// The context both HASH_I and HASH_R cover.
struct Exchange {
    suite: Suite,
    method: AuthMethod,
    cky_i: [u8; 8],
    cky_r: [u8; 8],
    sai_b: Vec<u8>,
    gxi: Vec<u8>,
    gxr: Vec<u8>,
    keys: Phase1Keys,
}

/// What [`keyed`] needs besides the Diffie-Hellman result.
struct KeyInput<'a> {
    suite: Suite,
    auth: &'a Auth,
    cky_i: [u8; 8],
    cky_r: [u8; 8],
    sai_b: &'a [u8],
    ni: &'a [u8],
    nr: &'a [u8],
    gxi: &'a [u8],
    gxr: &'a [u8],
}

/// After message 3 (responder) or 4 (initiator): SKEYID by the method (RFC 2409 5: the PSK
/// keys the PRF over the nonces, or the nonces key it over g^xy) and the rest of the keys.
fn keyed(k: KeyInput<'_>, gxy: &[u8]) -> Result<Exchange, Phase1Error> {
    let cookies = (&k.cky_i, &k.cky_r);
    let keys = match k.auth {
        Auth::Psk(psk) => Phase1Keys::derive_psk(
            k.suite.hash,
            psk,
            k.ni,
            k.nr,
            gxy,
            cookies,
            k.suite.aes_bits,
        )?,
        Auth::Cert(_) => {
            Phase1Keys::derive_sig(k.suite.hash, k.ni, k.nr, gxy, cookies, k.suite.aes_bits)?
        }
    };
    Ok(Exchange {
        suite: k.suite,
        method: k.auth.method(),
        cky_i: k.cky_i,
        cky_r: k.cky_r,
        sai_b: k.sai_b.to_vec(),
        gxi: k.gxi.to_vec(),
        gxr: k.gxr.to_vec(),
        keys,
    })
}

impl Exchange {
    /// HASH_I (`initiator`) or HASH_R over an ID payload body (RFC 2409 5), with the HMAC of
    /// the method's hash under ECDSA (RFC 4754, [`AuthMethod::auth_hash`]).
    fn hash(&self, initiator: bool, id_b: &[u8]) -> Result<Zeroizing<Vec<u8>>, Phase1Error> {
        let (first, second, c1, c2) = if initiator {
            (&self.gxi, &self.gxr, &self.cky_i, &self.cky_r)
        } else {
            (&self.gxr, &self.gxi, &self.cky_r, &self.cky_i)
        };
        keys::prf(
            self.method.auth_hash(self.suite.hash),
            &self.keys.skeyid,
            &[first, second, c1, c2, &self.sai_b, id_b],
        )
    }

    /// The other reading of RFC 4754 with RFC 2409 5.1, accepted on input only: HASH_I (or
    /// HASH_R) computed with the PRF of the *negotiated* hash, then hashed once more with the
    /// ECDSA method's hash to give the digest signed ("ECDSA with SHA-256" applied to HASH_I).
    /// The Go GDOI implementation (github.com/dscsystems/go-iec61850 `gdoi`, crypto.go) signs
    /// so; gander and strongSwan 5.9 sign HASH_I computed with the curve's PRF as the digest
    /// ([`Exchange::hash`]). `None` for a method that is not ECDSA. Accepting both is safe: each
    /// digest is a hash of the same transcript, so a signature that verifies under either was
    /// made by the certificate's key over this exchange (docs/gdoi.md, "Interoperability").
    fn hash_hashed_again(
        &self,
        initiator: bool,
        id_b: &[u8],
    ) -> Result<Option<Vec<u8>>, Phase1Error> {
        if !matches!(self.method, AuthMethod::EcdsaP256 | AuthMethod::EcdsaP384) {
            return Ok(None);
        }
        let (first, second, c1, c2) = if initiator {
            (&self.gxi, &self.gxr, &self.cky_i, &self.cky_r)
        } else {
            (&self.gxr, &self.gxi, &self.cky_r, &self.cky_i)
        };
        let h = keys::prf(
            self.suite.hash,
            &self.keys.skeyid,
            &[first, second, c1, c2, &self.sai_b, id_b],
        )?;
        Ok(Some(keys::hash(
            self.method.auth_hash(self.suite.hash),
            &[&h],
        )?))
    }

    fn iv0(&self) -> Result<Vec<u8>, Phase1Error> {
        keys::hash(self.suite.hash, &[&self.gxi, &self.gxr])
    }

    /// Message 5 (`initiator`) or 6: ID, then HASH, or CERT payloads and SIG. Under ECDSA
    /// the digest signed is HASH_I (HASH_R) by RFC 2409 5.1 with RFC 4754, or for a peer of
    /// the `go-iec61850` profile the hash of it computed with the negotiated PRF
    /// ([`Exchange::hash_hashed_again`], [`PeerProfile`]).
    fn own_auth(
        &self,
        initiator: bool,
        id: &IdPayload,
        auth: &Auth,
        profile: PeerProfile,
    ) -> Result<Vec<Payload>, Phase1Error> {
        let id_b = id_body(id);
        let h = self.hash(initiator, &id_b)?;
        let mut v = vec![Payload::Id(id.clone())];
        match auth {
            Auth::Psk(_) => v.push(Payload::Hash(h.to_vec())),
            Auth::Cert(c) => {
                v.extend(c.cert_payloads()?.into_iter().map(Payload::Cert));
                let again = if profile.ecdsa_hashes_again() {
                    self.hash_hashed_again(initiator, &id_b)?
                } else {
                    None
                };
                v.push(Payload::Sig(c.sign(again.as_deref().unwrap_or(&h[..]))?));
            }
        }
        Ok(v)
    }

    /// Checks the peer's message 5 (`from_initiator`) or 6: its HASH, or its certificate,
    /// identity and signature. Returns the peer's ID and certificate.
    fn peer_auth(
        &self,
        from_initiator: bool,
        p: &[Payload],
        auth: &Auth,
    ) -> Result<(IdPayload, Option<PeerCert>), Phase1Error> {
        let id = p
            .iter()
            .find_map(|x| {
                if let Payload::Id(i) = x {
                    Some(i)
                } else {
                    None
                }
            })
            .ok_or(Phase1Error::Missing("ID"))?;
        let want = self.hash(from_initiator, &id_body(id))?;
        match auth {
            Auth::Psk(_) => {
                let got = p
                    .iter()
                    .find_map(|x| {
                        if let Payload::Hash(h) = x {
                            Some(h.as_slice())
                        } else {
                            None
                        }
                    })
                    .ok_or(Phase1Error::Missing("HASH"))?;
                if !bool::from(want.as_slice().ct_eq(got)) {
                    return Err(Phase1Error::HashMismatch);
                }
                Ok((id.clone(), None))
            }
            Auth::Cert(c) => {
                let sig = p
                    .iter()
                    .find_map(|x| {
                        if let Payload::Sig(s) = x {
                            Some(s)
                        } else {
                            None
                        }
                    })
                    .ok_or(Phase1Error::Missing("SIG"))?;
                let certs: Vec<&CertPayload> = p
                    .iter()
                    .filter_map(|x| {
                        if let Payload::Cert(c) = x {
                            Some(c)
                        } else {
                            None
                        }
                    })
                    .collect();
                // The other reading only if the signature is not over HASH_I / HASH_R as
                // RFC 4754 reads (a PRF and a hash saved per exchange).
                let again = || {
                    self.hash_hashed_again(from_initiator, &id_body(id))
                        .ok()
                        .flatten()
                        .into_iter()
                        .collect()
                };
                let peer =
                    verify_peer_then(c.trust(), self.method, &certs, id, sig, Some(&want), again)?;
                Ok((id.clone(), Some(peer)))
            }
        }
    }

    fn establish(self, last_iv: [u8; 16], peer: (IdPayload, Option<PeerCert>)) -> Phase1Sa {
        Phase1Sa {
            cky_i: self.cky_i,
            cky_r: self.cky_r,
            suite: self.suite,
            keys: self.keys,
            last_iv,
            peer_id: peer.0,
            method: self.method,
            peer_cert: peer.1,
        }
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
    auth: Auth,
    id: IdPayload,
    suites: Vec<Suite>,
    cky_i: [u8; 8],
    state: IState,
    expect_peer: Option<CertMatch>,
    profile: PeerProfile,
}

impl Initiator {
    /// With a certificate: the key server's certificate must also be the one `m` names (its
    /// subject or a subjectAltName), not just any certificate of the trusted CAs, which may
    /// have issued the members' certificates too (message 6 is refused otherwise).
    pub fn expect_peer_cert(mut self, m: CertMatch) -> Initiator {
        self.expect_peer = Some(m);
        self
    }

    /// Writes for a key server of `profile` (what gander signs under ECDSA; [`PeerProfile`]).
    /// What the initiator accepts does not change.
    pub fn with_profile(mut self, profile: PeerProfile) -> Initiator {
        self.profile = profile;
        self
    }

    /// Starts a pre-shared-key exchange offering `suites`; returns the machine and message 1.
    pub fn start(
        psk: &[u8],
        id: IdPayload,
        suites: Vec<Suite>,
    ) -> Result<(Initiator, Vec<u8>), Phase1Error> {
        Initiator::start_with(Auth::Psk(Zeroizing::new(psk.to_vec())), id, suites)
    }

    /// Starts an exchange with `auth`, offering each of `suites` with its method. With a
    /// certificate, `id` should name it (RFC 4945 3.1; `Credentials::id_payload`).
    pub fn start_with(
        auth: Auth,
        id: IdPayload,
        suites: Vec<Suite>,
    ) -> Result<(Initiator, Vec<u8>), Phase1Error> {
        Initiator::start_for(auth, id, suites, PeerProfile::default())
    }

    /// [`Initiator::start_with`] for a key server of `profile`: the phase-1 SA carries the
    /// GDOI DOI (RFC 6407 2.1) or, for [`PeerProfile::IpsecDoi`], the IPsec DOI, and ECDSA
    /// signatures follow the profile ([`Initiator::with_profile`]).
    pub fn start_for(
        auth: Auth,
        id: IdPayload,
        suites: Vec<Suite>,
        profile: PeerProfile,
    ) -> Result<(Initiator, Vec<u8>), Phase1Error> {
        let cky_i = initiator_cookie();
        let n = u8::try_from(suites.len()).map_err(|_| Phase1Error::NoProposalChosen)?;
        let method = auth.method();
        let sa = SaPayload {
            doi: profile.phase1_doi(),
            situation: SIT_IDENTITY_ONLY,
            body: SaBody::Proposals(vec![Proposal {
                number: 1,
                protocol: PROTO_ISAKMP,
                spi: vec![],
                transforms: suites
                    .iter()
                    .zip(1..=n)
                    .map(|(s, i)| s.transform_auth(i, method))
                    .collect(),
            }]),
        };
        let mut sai_b = vec![0u8; sa.body_len()];
        sa.emit_body(&mut sai_b);
        let msg = plain(cky_i, [0; 8], vec![Payload::Sa(sa)])?;
        Ok((
            Initiator {
                auth,
                id,
                suites,
                cky_i,
                state: IState::SentSa { sai_b },
                expect_peer: None,
                profile,
            },
            msg,
        ))
    }

    /// Handles messages 2, 4 and 6; returns the next message to send (none after 6).
    pub fn handle(&mut self, buf: &[u8]) -> Result<Option<Vec<u8>>, Phase1Error> {
        let state = self.state.name();
        let h = Header::parse(buf)?;
        // RFC 2408 4.8: a responder that does not accept message 5 may answer with an
        // Informational exchange; strongSwan 5.9.8 does, encrypted under its phase-1 keys,
        // both when message 5 does not decrypt (another pre-shared key) and when it refuses
        // the signature. It is not acted on (unauthenticated, it changes no state and the
        // member keeps waiting), only named, so a registration that gives up says why.
        if matches!(self.state, IState::SentId { .. })
            && h.exchange == exchange::INFORMATIONAL
            && h.encrypted()
            && h.initiator_cookie == self.cky_i
        {
            return Err(Phase1Error::PeerRefusedIdentity);
        }
        only_main_mode(&h, state)?;
        if h.initiator_cookie != self.cky_i || h.responder_cookie == [0; 8] {
            return Err(Phase1Error::BadCookie);
        }
        match &self.state {
            IState::SentSa { sai_b } => {
                let m = Message::parse(buf)?;
                let sa = sa_of(&m.payloads)?;
                let suite = match &sa.body {
                    SaBody::Proposals(p)
                        if p.len() == 1
                            && p[0].transforms.len() == 1
                            && p[0].protocol == PROTO_ISAKMP =>
                    {
                        Suite::from_transform_auth(&p[0].transforms[0])
                            .filter(|(s, m)| self.suites.contains(s) && *m == self.auth.method())
                            .map(|(s, _)| s)
                    }
                    _ => None,
                }
                .ok_or(Phase1Error::NoProposalChosen)?;
                let dh = KeyPair::generate(suite.group)?;
                let ni = random_nonce();
                let msg = plain(
                    self.cky_i,
                    h.responder_cookie,
                    ke_payloads(&dh, ni.clone(), &self.auth),
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
                let ex = keyed(
                    KeyInput {
                        suite: *suite,
                        auth: &self.auth,
                        cky_i: self.cky_i,
                        cky_r: *cky_r,
                        sai_b,
                        ni,
                        nr,
                        gxi: dh.public(),
                        gxr: ke,
                    },
                    &gxy,
                )?;
                let iv = ex.iv0()?;
                let (msg, last) = seal(
                    header(self.cky_i, *cky_r, true),
                    &ex.own_auth(true, &self.id, &self.auth, self.profile)?,
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
                let peer = ex.peer_auth(false, &p, &self.auth)?;
                if let (Some(want), Some(got)) = (&self.expect_peer, &peer.1) {
                    if !want.matches(got) {
                        return Err(CertError::NotAuthorised.into());
                    }
                }
                let IState::SentId { ex, .. } = core::mem::replace(&mut self.state, IState::Taken)
                else {
                    return Err(Phase1Error::Unexpected { state });
                };
                self.state = IState::Established(ex.establish(last, peer));
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
    SentSa {
        sai_b: Vec<u8>,
        suite: Suite,
        auth: Auth,
    },
    SentKe {
        ex: Exchange,
        iv: Vec<u8>,
        auth: Auth,
    },
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

/// The key server's certificate side: its credentials and which peer certificates it lets
/// complete phase 1.
#[derive(Clone)]
pub struct CertPolicy {
    /// The responder's certificates, keys and trust stores, one per key type (the
    /// authentication method is one value for both sides, RFC 2409 5: a P-256 member is
    /// answered with the P-256 certificate, an RSA member with the RSA one).
    pub creds: Vec<Arc<Credentials>>,
    /// The certificates allowed in (subject or subjectAltName); none means nobody.
    pub allowed: Vec<CertMatch>,
    /// The peer profile of certificate members that need one (the first entry naming the
    /// peer's certificate wins; others get [`PeerProfile::Rfc`]).
    pub profiles: Vec<(CertMatch, PeerProfile)>,
}

/// What the responder (the key server) is configured with for one peer.
pub struct ResponderConfig {
    /// The pre-shared key chosen for the peer's address; empty when the peer has none (then
    /// only a signature method can be chosen).
    pub psk: Zeroizing<Vec<u8>>,
    /// Suites the responder accepts, in its order of preference.
    pub suites: Vec<Suite>,
    /// The responder's own identity (IDir) with a pre-shared key; with a certificate IDir is
    /// the certificate's subject.
    pub id: IdPayload,
    /// The identities the peer may show in message 5 (type and data), if the policy binds
    /// the pre-shared key to some (`psk_identity`: its ID_KEY_ID or its address, RFC 2409 5.4).
    pub expect_peer: Option<crate::psk_identity::PskIdentities>,
    /// Certificate authentication, if the responder offers it.
    pub cert: Option<CertPolicy>,
}

impl ResponderConfig {
    /// The methods this configuration can complete, preferred first (certificates first).
    fn methods(&self) -> Vec<Auth> {
        let mut v = Vec::new();
        if let Some(c) = &self.cert {
            v.extend(c.creds.iter().map(|c| Auth::Cert(c.clone())));
        }
        if !self.psk.is_empty() {
            v.push(Auth::Psk(self.psk.clone()));
        }
        v
    }

    /// The responder's choice among the offered proposals: its own preference order of
    /// suites, then methods (RFC 2409 5: the responder picks one transform and returns it
    /// unmodified; the offered lifetime is accepted, [`Suite::accepts`]).
    fn choose(&self, props: &[Proposal]) -> Option<(u8, Transform, Suite, Auth)> {
        let methods = self.methods();
        for want in &self.suites {
            for auth in &methods {
                for p in props
                    .iter()
                    .filter(|p| p.protocol == PROTO_ISAKMP && p.spi.is_empty())
                {
                    for t in &p.transforms {
                        let chosen = Suite::from_transform_auth(t)
                            .filter(|(_, m)| *m == auth.method())
                            .and_then(|(offered, _)| want.accepts(&offered));
                        if let Some(s) = chosen {
                            return Some((p.number, t.clone(), s, auth.clone()));
                        }
                    }
                }
            }
        }
        None
    }
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
        let sa = sa_of(&m.payloads)?;
        let SaBody::Proposals(props) = &sa.body else {
            return Err(Phase1Error::NoProposalChosen);
        };
        let (pnum, t, suite, auth) = cfg.choose(props).ok_or(Phase1Error::NoProposalChosen)?;
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
                state: RState::SentSa { sai_b, suite, auth },
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
            RState::SentSa { sai_b, suite, auth } => {
                let m = Message::parse(buf)?;
                let (ke, ni) = ke_nonce(&m.payloads)?;
                let dh = KeyPair::generate(suite.group)?;
                let gxy = dh.shared(ke)?;
                let nr = random_nonce();
                let ex = keyed(
                    KeyInput {
                        suite: *suite,
                        auth,
                        cky_i: self.cky_i,
                        cky_r: self.cky_r,
                        sai_b,
                        ni,
                        nr: &nr,
                        gxi: ke,
                        gxr: dh.public(),
                    },
                    &gxy,
                )?;
                let iv = ex.iv0()?;
                let msg = plain(self.cky_i, self.cky_r, ke_payloads(&dh, nr, auth))?;
                self.state = RState::SentKe {
                    ex,
                    iv,
                    auth: auth.clone(),
                };
                Ok(msg)
            }
            RState::SentKe { ex, iv, auth } => {
                let (_, p, last) = open(buf, &ex.keys.enc_key, iv)?;
                let peer = ex.peer_auth(true, &p, auth)?;
                let mut profile = PeerProfile::default();
                let own_id = match auth {
                    Auth::Psk(_) => {
                        if let Some(ids) = &self.cfg.expect_peer {
                            if !ids.accepts(&peer.0) {
                                return Err(Phase1Error::BadIdentity);
                            }
                        }
                        self.cfg.id.clone()
                    }
                    Auth::Cert(c) => {
                        let allowed = self.cfg.cert.as_ref().is_some_and(|p| {
                            peer.1
                                .as_ref()
                                .is_some_and(|pc| p.allowed.iter().any(|m| m.matches(pc)))
                        });
                        if !allowed {
                            return Err(CertError::NotAuthorised.into());
                        }
                        if let (Some(p), Some(pc)) = (&self.cfg.cert, &peer.1) {
                            if let Some((_, pr)) = p.profiles.iter().find(|(m, _)| m.matches(pc)) {
                                profile = *pr;
                            }
                        }
                        c.id_payload()?
                    }
                };
                let (msg, after) = seal(
                    header(self.cky_i, self.cky_r, true),
                    &ex.own_auth(false, &own_id, auth, profile)?,
                    &ex.keys.enc_key,
                    &last,
                )?;
                let RState::SentKe { ex, .. } = core::mem::replace(&mut self.state, RState::Taken)
                else {
                    return Err(Phase1Error::Unexpected { state });
                };
                self.state = RState::Established(ex.establish(after, peer));
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

#[cfg(test)]
#[path = "main_mode_ecdsa_readings.rs"]
mod ecdsa_readings;

#[cfg(test)]
mod phase1_doi_tests {
    use super::*;
    use crate::suite::{Group, HashAlg};
    use gander_wire::isakmp::payload::id_type;
    use gander_wire::isakmp::sa::doi;

    fn suite() -> Suite {
        Suite {
            aes_bits: 128,
            hash: HashAlg::Sha256,
            group: Group::Ecp256,
            life_secs: 3600,
        }
    }

    fn member() -> IdPayload {
        IdPayload {
            id_type: id_type::KEY_ID,
            protocol: 0,
            port: 0,
            data: b"ied-1".to_vec(),
        }
    }

    fn doi_of(msg: &[u8]) -> u32 {
        let m = gander_wire::isakmp::Message::parse(msg).expect("message 1 parses");
        sa_of(&m.payloads).expect("message 1 has an SA").doi
    }

    #[test]
    fn message_1_carries_the_gdoi_doi_unless_the_peer_needs_ipsec() {
        // RFC 6407 2.1: the phase-1 SA "MUST" carry the GDOI DOI (2).
        let (_, m1) = Initiator::start(b"k", member(), vec![suite()]).expect("start");
        assert_eq!(doi_of(&m1), doi::GDOI);
        let (_, m1) = Initiator::start_for(
            Auth::Psk(Zeroizing::new(b"k".to_vec())),
            member(),
            vec![suite()],
            PeerProfile::IpsecDoi,
        )
        .expect("start");
        assert_eq!(doi_of(&m1), doi::IPSEC);
    }
}
