//! Whether a protected frame still fits where it has to travel: a layer-2 GOOSE frame in one
//! Ethernet frame, an R-GOOSE/R-SV datagram without IP fragmentation.
//!
//! Limits and assumptions (`docs/bench-crypto.md` §fit):
//!
//! * Ethernet: at most [`ETHERNET_PAYLOAD_MAX`] = 1500 octets of MAC client data after the
//!   EtherType (IEEE 802.3 §3.2.7; an 802.1Q tag sits before the EtherType and does not count).
//!   GOOSE has no fragmentation of its own (IEC 61850-8-1 Annex C), so a larger frame is dropped.
//! * IEC 62351-6 layer 2: Reserved1 announces the extension length in 12 bits, so the security
//!   extension (signature included) is at most [`MAX_EXTENSION_LEN`] = 4095 octets however
//!   large the Ethernet payload may be (jumbo frames).
//! * R-GOOSE/R-SV: the datagram must pass a path MTU of [`ASSUMED_MTU`] = 1500 (Ethernet)
//!   unfragmented: IPv4 header 20 (no options) + UDP 8 leave [`UDP_PAYLOAD_MAX_IPV4`] = 1472
//!   octets for the SPDU (IPv6: 40 + 8 leave 1452). Fragmented datagrams are refused by the
//!   gateway (fragments cannot be judged alone) and by many substation firewalls.
//! * IEC 61850-90-5: the signature element after the payload is `85 len value` with a one-octet
//!   length, so it carries at most [`SPDU_SIGNATURE_MAX`] = 255 octets of signature. An RSA-2048
//!   signature (256) already does not fit; ML-DSA and SLH-DSA signatures never do.

use gander_wire::l2_extension::SecurityExtension;

use crate::signature::SignatureAlgorithm;

/// Largest MAC client data field of an Ethernet frame (IEEE 802.3), octets.
pub const ETHERNET_PAYLOAD_MAX: usize = 1500;
/// The path MTU assumed for R-GOOSE/R-SV: Ethernet's 1500.
pub const ASSUMED_MTU: usize = 1500;
/// IPv4 header without options (RFC 791).
pub const IPV4_HEADER: usize = 20;
/// IPv6 fixed header (RFC 8200).
pub const IPV6_HEADER: usize = 40;
/// UDP header (RFC 768).
pub const UDP_HEADER: usize = 8;
/// Largest SPDU in one unfragmented IPv4 datagram at [`ASSUMED_MTU`].
pub const UDP_PAYLOAD_MAX_IPV4: usize = ASSUMED_MTU - IPV4_HEADER - UDP_HEADER;
/// Largest SPDU in one unfragmented IPv6 datagram at [`ASSUMED_MTU`].
pub const UDP_PAYLOAD_MAX_IPV6: usize = ASSUMED_MTU - IPV6_HEADER - UDP_HEADER;
/// Largest value of the 90-5 signature element (one-octet length).
pub const SPDU_SIGNATURE_MAX: usize = 255;
/// Largest IEC 62351-6 layer-2 security extension (12 bits of Reserved1).
pub const MAX_EXTENSION_LEN: usize = gander_wire::l2_extension::MAX_EXTENSION_LEN;
/// GOOSE header in front of the APDU: APPID, Length, Reserved1, Reserved2 (IEC 61850-8-1).
pub const GOOSE_HEADER: usize = 8;

/// Where a protected frame travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Layer-2 GOOSE (IEC 61850-8-1 with the IEC 62351-6 extension).
    L2Goose,
    /// R-GOOSE / R-SV over UDP (IEC 61850-90-5); the per-key limits assume IPv4 (the larger
    /// SPDU room), the per-frame check holds the IP packet to the MTU for IPv4 and IPv6.
    RGooseIpv4,
}

impl Transport {
    /// Short name for messages and reports.
    pub const fn name(self) -> &'static str {
        match self {
            Transport::L2Goose => "layer-2 GOOSE",
            Transport::RGooseIpv4 => "R-GOOSE/IPv4",
        }
    }
}

/// Which limit a frame breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The 1500-octet Ethernet payload.
    EthernetPayload,
    /// The 4095-octet IEC 62351-6 extension (12 bits of Reserved1).
    ExtensionLength,
    /// The 1472-octet UDP payload of an unfragmented IPv4 datagram at MTU 1500.
    UnfragmentedDatagram,
    /// The 255-octet 90-5 signature element.
    SignatureElement,
    /// The 1500-octet IP packet of the assumed path MTU.
    Mtu,
}

impl Limit {
    /// The limit in octets.
    pub const fn octets(self) -> usize {
        match self {
            Limit::EthernetPayload => ETHERNET_PAYLOAD_MAX,
            Limit::ExtensionLength => MAX_EXTENSION_LEN,
            Limit::UnfragmentedDatagram => UDP_PAYLOAD_MAX_IPV4,
            Limit::SignatureElement => SPDU_SIGNATURE_MAX,
            Limit::Mtu => ASSUMED_MTU,
        }
    }

    /// What the limit is, for messages.
    pub const fn describe(self) -> &'static str {
        match self {
            Limit::EthernetPayload => "Ethernet payload (IEEE 802.3)",
            Limit::ExtensionLength => "IEC 62351-6 extension length (12 bits of Reserved1)",
            Limit::UnfragmentedDatagram => {
                "UDP payload of an unfragmented IPv4 datagram at MTU 1500 (1500 - 20 - 8)"
            }
            Limit::SignatureElement => "IEC 61850-90-5 signature element (one-octet length)",
            Limit::Mtu => "IP packet at the assumed path MTU (Ethernet, no fragmentation)",
        }
    }
}

/// A frame, or every frame a key could protect, is too large.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{transport}: {what} of {size} octets exceeds the {limit_desc} limit of {limit_octets} octets{sig}",
    transport = .transport.name(), limit_desc = .limit.describe(), limit_octets = .limit.octets(),
    sig = .signature.map(|(a, l)| format!(" ({a} signature of {l} octets)")).unwrap_or_default())]
pub struct FitError {
    /// Where the frame travels.
    pub transport: Transport,
    /// The limit broken.
    pub limit: Limit,
    /// What was measured ("frame", "smallest possible frame", "signature").
    pub what: &'static str,
    /// Its size, octets.
    pub size: usize,
    /// The signature algorithm and length, when a signature is the cause.
    pub signature: Option<(&'static str, usize)>,
}

/// Length of the IEC 62351-6 layer-2 extension carrying an authenticator of `auth_len` octets
/// (and an IV of `iv_len`, 0 for none), with the key id and times at their widest.
pub fn l2_extension_len(auth_len: usize, iv_len: usize) -> usize {
    let iv = (iv_len > 0).then(|| vec![0u8; iv_len]);
    SecurityExtension::with_placeholder_mac(u32::MAX, i64::MAX, i64::MAX, iv, auth_len)
        .layout()
        .mac
        .end
}

/// Whether a layer-2 GOOSE frame with an APDU of `apdu_len` octets and an `auth_len`-octet
/// MAC or signature fits: the extension within 4095 octets, the Ethernet payload within 1500.
pub fn check_l2_goose(
    apdu_len: usize,
    auth_len: usize,
    iv_len: usize,
    signature: Option<(&'static str, usize)>,
) -> Result<usize, FitError> {
    let ext = l2_extension_len(auth_len, iv_len);
    let err = |limit, what, size| FitError {
        transport: Transport::L2Goose,
        limit,
        what,
        size,
        signature,
    };
    if ext > MAX_EXTENSION_LEN {
        return Err(err(Limit::ExtensionLength, "security extension", ext));
    }
    let payload = GOOSE_HEADER + apdu_len + ext;
    if payload > ETHERNET_PAYLOAD_MAX {
        return Err(err(Limit::EthernetPayload, "Ethernet payload", payload));
    }
    Ok(payload)
}

/// Whether an SPDU of `spdu_len` octets travels unfragmented over IPv4 at MTU 1500.
pub fn check_rgoose(spdu_len: usize) -> Result<usize, FitError> {
    if spdu_len > UDP_PAYLOAD_MAX_IPV4 {
        return Err(FitError {
            transport: Transport::RGooseIpv4,
            limit: Limit::UnfragmentedDatagram,
            what: "SPDU",
            size: spdu_len,
            signature: None,
        });
    }
    Ok(spdu_len)
}

/// Whether a whole protected Ethernet frame fits: its payload after the EtherType (and any
/// 802.1Q tags) within 1500 octets. For R-GOOSE/R-SV that payload is the IP packet, so this is
/// the unfragmented-at-MTU-1500 check for IPv4 and IPv6 alike.
pub fn check_frame(transport: Transport, frame: &[u8]) -> Result<usize, FitError> {
    let offset = gander_wire::ethernet::EthernetRepr::parse_bytes(frame)
        .map(|(_, off)| off)
        .unwrap_or(0);
    check_link_payload(transport, frame.len().saturating_sub(offset))
}

/// [`check_frame`] for an output whose link payload is known without an Ethernet header to
/// parse: `payload` octets after the EtherType (for R-GOOSE/R-SV, the IP packet; a driver that
/// hands the policy IP packets or UDP payloads sizes it with
/// [`crate::view::FrameView::link_payload_len`]).
pub fn check_link_payload(transport: Transport, payload: usize) -> Result<usize, FitError> {
    if payload > ETHERNET_PAYLOAD_MAX {
        return Err(FitError {
            transport,
            limit: match transport {
                Transport::L2Goose => Limit::EthernetPayload,
                Transport::RGooseIpv4 => Limit::Mtu,
            },
            what: match transport {
                Transport::L2Goose => "protected frame's Ethernet payload",
                Transport::RGooseIpv4 => "protected IP packet",
            },
            size: payload,
            signature: None,
        });
    }
    Ok(payload)
}

/// Whether a signature of `alg` could protect *any* frame on `transport`: even an empty APDU
/// (layer 2) or an SPDU of nothing but the signature element (R-GOOSE). A key that fails this
/// cannot protect a single frame, so `gander frame protect` refuses it up front.
pub fn check_signature(
    alg: SignatureAlgorithm,
    sig_len: usize,
    transport: Transport,
) -> Result<(), FitError> {
    let signature = Some((alg.name(), sig_len));
    match transport {
        Transport::L2Goose => check_l2_goose(0, sig_len, 0, signature)
            .map(|_| ())
            .map_err(|e| match e.limit {
                // With an empty APDU the payload is the smallest any frame can have.
                Limit::EthernetPayload => FitError {
                    what: "smallest possible Ethernet payload",
                    ..e
                },
                _ => e,
            }),
        Transport::RGooseIpv4 => {
            let err = |limit, size| FitError {
                transport,
                limit,
                what: "signature",
                size,
                signature,
            };
            if sig_len > SPDU_SIGNATURE_MAX {
                return Err(err(Limit::SignatureElement, sig_len));
            }
            if sig_len + 2 > UDP_PAYLOAD_MAX_IPV4 {
                return Err(err(Limit::UnfragmentedDatagram, sig_len + 2));
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::SignatureAlgorithm as S;

    #[test]
    fn limits() {
        assert_eq!(UDP_PAYLOAD_MAX_IPV4, 1472);
        assert_eq!(UDP_PAYLOAD_MAX_IPV6, 1452);
        assert_eq!(MAX_EXTENSION_LEN, 4095);
    }

    #[test]
    fn post_quantum_signatures_do_not_fit_classical_ones_do() {
        for (alg, len) in [
            (S::Ed25519, 64),
            (S::EcdsaP256Sha256, 64),
            (S::RsaPssSha256, 256),
        ] {
            check_signature(alg, len, Transport::L2Goose).unwrap();
        }
        check_signature(S::RsaPssSha256, 128, Transport::RGooseIpv4).unwrap();
        // RSA-2048 already overflows the 90-5 signature element.
        assert_eq!(
            check_signature(S::RsaPssSha256, 256, Transport::RGooseIpv4)
                .unwrap_err()
                .limit,
            Limit::SignatureElement
        );
        for (alg, len, l2_limit) in [
            (S::MlDsa44, 2420, Limit::EthernetPayload),
            (S::MlDsa65, 3309, Limit::EthernetPayload),
            (S::SlhDsaSha2_128s, 7856, Limit::ExtensionLength),
            (S::SlhDsaSha2_128f, 17088, Limit::ExtensionLength),
        ] {
            let e = check_signature(alg, len, Transport::L2Goose).unwrap_err();
            assert_eq!(e.limit, l2_limit, "{alg}");
            let msg = e.to_string();
            assert!(
                msg.contains(&len.to_string()) && msg.contains(alg.name()),
                "{msg}"
            );
            let e = check_signature(alg, len, Transport::RGooseIpv4).unwrap_err();
            assert_eq!(e.limit, Limit::SignatureElement);
        }
    }

    #[test]
    fn l2_boundary_is_exact() {
        let ext = l2_extension_len(16, 16);
        let apdu = ETHERNET_PAYLOAD_MAX - GOOSE_HEADER - ext;
        assert_eq!(check_l2_goose(apdu, 16, 16, None), Ok(ETHERNET_PAYLOAD_MAX));
        assert_eq!(
            check_l2_goose(apdu + 1, 16, 16, None).unwrap_err().size,
            ETHERNET_PAYLOAD_MAX + 1
        );
        assert!(check_rgoose(1472).is_ok());
        assert!(check_rgoose(1473).is_err());
    }
}
