//! Named peer profiles: what gander *writes* for a peer that reads an RFC differently from
//! the text. gander's default is the RFC's reading; a profile is chosen per peer (the key
//! server's `[[member]] profile`, `gander gdoi register --profile`, the gateway's `[gdoi]
//! profile`) and never changes what gander accepts: reading stays tolerant of both forms
//! (docs/gdoi.md, "Peer profiles").
//!
//! Two quirks are known and kept behind a profile:
//!
//! * **ECDSA signatures in IKEv1 phase 1.** RFC 2409 5.1 applies the negotiated signature
//!   algorithm to HASH_I / HASH_R and, when the signature algorithm is tied to a hash (RFC 4754:
//!   ECDSA-256 with SHA-256, ECDSA-384 with SHA-384), computes HASH_I with "the HMAC version of
//!   the hash algorithm associated with the signature method", which makes HASH_I the digest
//!   the ECDSA operation signs. gander and strongSwan 5.9 sign so. go-iec61850's `gdoi`
//!   computes HASH_I with the *negotiated* PRF and signs the SHA-256 (SHA-384) of it, and
//!   refuses the RFC form ("signature does not verify"). With [`PeerProfile::GoIec61850`]
//!   gander signs for that peer the way it verifies.
//! * **The DOI of the phase-1 SA.** RFC 6407 2.1: the phase-1 SA "MUST" carry the GDOI DOI
//!   (2), and gander's member writes it. strongSwan (IKEv1 main mode only with the IPsec DOI,
//!   number 1) and Wireshark 4.0 (which dissects a DOI-2 SA in the GDOI phase-2 layout and
//!   then cannot decrypt the exchange with a key log) need the IPsec DOI: with
//!   [`PeerProfile::IpsecDoi`] the member offers that. A responder answers in the DOI it was
//!   offered, so the key server needs no profile for it.
//!
//! The other points where go-iec61850 and gander once differed (KD Length, the salt of GCM and
//! GMAC keys, the attribute carrying a GMAC key) were settled by the RFC text in the Go
//! library's favour and are gander's default now, for every peer.

use std::fmt;
use std::str::FromStr;

/// How gander writes for one peer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PeerProfile {
    /// The RFC text as gander reads it (the default).
    #[default]
    Rfc,
    /// github.com/dscsystems/go-iec61850, package `gdoi`: ECDSA phase-1 signatures over the
    /// hash of HASH_I computed with the negotiated PRF.
    GoIec61850,
    /// A phase-1 peer or tool that knows only the IPsec DOI in main mode (strongSwan as a
    /// phase-1 responder; Wireshark 4.0 decrypting with a key log): the member offers its
    /// phase-1 SA with DOI 1 instead of RFC 6407 2.1's GDOI DOI.
    IpsecDoi,
}

/// The names [`PeerProfile::from_str`] accepts, for messages.
pub const PROFILE_NAMES: &str = "rfc, go-iec61850, ipsec-doi";

/// An unknown profile name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown peer profile {name:?}: valid profiles are {PROFILE_NAMES}")]
pub struct UnknownProfile {
    /// The name given.
    pub name: String,
}

impl FromStr for PeerProfile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "rfc" => Ok(PeerProfile::Rfc),
            "go-iec61850" => Ok(PeerProfile::GoIec61850),
            "ipsec-doi" => Ok(PeerProfile::IpsecDoi),
            _ => Err(UnknownProfile { name: s.into() }),
        }
    }
}

impl fmt::Display for PeerProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PeerProfile::Rfc => "rfc",
            PeerProfile::GoIec61850 => "go-iec61850",
            PeerProfile::IpsecDoi => "ipsec-doi",
        })
    }
}

impl PeerProfile {
    /// Whether an ECDSA signature is made over the hash of HASH_I (or HASH_R) computed with
    /// the negotiated PRF instead of over HASH_I computed with the curve's HMAC.
    pub fn ecdsa_hashes_again(self) -> bool {
        self == PeerProfile::GoIec61850
    }

    /// The DOI the member writes in its phase-1 SA: the GDOI DOI (RFC 6407 2.1), or the IPsec
    /// DOI for [`PeerProfile::IpsecDoi`].
    pub fn phase1_doi(self) -> u32 {
        use gander_wire::isakmp::sa::doi;
        match self {
            PeerProfile::IpsecDoi => doi::IPSEC,
            _ => doi::GDOI,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for p in [
            PeerProfile::Rfc,
            PeerProfile::GoIec61850,
            PeerProfile::IpsecDoi,
        ] {
            assert_eq!(p.to_string().parse::<PeerProfile>(), Ok(p));
        }
        let e = "strongswan".parse::<PeerProfile>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown peer profile \"strongswan\": valid profiles are rfc, go-iec61850, ipsec-doi"
        );
        assert_eq!(PeerProfile::default(), PeerProfile::Rfc);
    }

    #[test]
    fn the_phase1_doi_is_gdoi_unless_the_peer_needs_ipsec() {
        use gander_wire::isakmp::sa::doi;
        assert_eq!(PeerProfile::Rfc.phase1_doi(), doi::GDOI);
        assert_eq!(PeerProfile::GoIec61850.phase1_doi(), doi::GDOI);
        assert_eq!(PeerProfile::IpsecDoi.phase1_doi(), doi::IPSEC);
    }
}
