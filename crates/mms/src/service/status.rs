//! Status (ISO 9506-2 10.2, Wireshark `mms.asn`): `status [0] IMPLICIT Status-Request` with
//! `Status-Request ::= BOOLEAN` (extendedDerivation), answered by
//!
//! ```text
//! Status-Response ::= SEQUENCE {
//!     vmdLogicalStatus  [0] IMPLICIT INTEGER { state-changes-allowed (0),
//!         no-state-changes-allowed (1), limited-services-permitted (2),
//!         support-services-allowed (3) },
//!     vmdPhysicalStatus [1] IMPLICIT INTEGER { operational (0), partially-operational (1),
//!         inoperable (2), needs-commissioning (3) },
//!     localDetail       [2] IMPLICIT BIT STRING (SIZE(0..128)) OPTIONAL }
//! ```
//!
//! A basic VMD service: libiec61850's server answers it (state-changes-allowed, operational,
//! no localDetail, `MmsServer_setVMDStatus` to change them) and its client asks for it
//! (`MmsConnection_getServerStatus`), so a server that advertises the service in
//! servicesSupportedCalled must answer it.

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};

use super::{ber as berr, L};
use crate::asn1;
use crate::bit_string::BitString;
use crate::error::{Error, Result};

/// vmdLogicalStatus: state-changes-allowed (ISO 9506-2 10.2.1.2).
pub const LOGICAL_STATE_CHANGES_ALLOWED: u8 = 0;
/// vmdPhysicalStatus: operational (ISO 9506-2 10.2.1.3).
pub const PHYSICAL_OPERATIONAL: u8 = 0;
/// The largest localDetail, in bits (`SIZE(0..128)`).
pub const MAX_LOCAL_DETAIL_BITS: usize = 128;

/// What a Status answers: whether the VMD accepts state changes and whether it works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusResponse {
    /// vmdLogicalStatus (0..=3 defined).
    pub logical: u8,
    /// vmdPhysicalStatus (0..=3 defined).
    pub physical: u8,
    /// localDetail, a vendor's bits (`None` when absent, as libiec61850 sends it).
    pub local_detail: Option<BitString>,
}

impl StatusResponse {
    /// A working server that accepts changes: what libiec61850 answers by default.
    pub fn operational() -> Self {
        StatusResponse {
            logical: LOGICAL_STATE_CHANGES_ALLOWED,
            physical: PHYSICAL_OPERATIONAL,
            local_detail: None,
        }
    }

    /// Decode the contents of the `A0` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let logical = status_value(
            r.read_expected(0x80, "vmdLogicalStatus")
                .map_err(berr)?
                .value,
            "vmdLogicalStatus",
        )?;
        let physical = status_value(
            r.read_expected(0x81, "vmdPhysicalStatus")
                .map_err(berr)?
                .value,
            "vmdPhysicalStatus",
        )?;
        let local_detail = match r.read_optional(0x82, "localDetail").map_err(berr)? {
            Some(t) => {
                let b = BitString::from_contents(t.value).ok_or_else(|| {
                    Error::malformed(L, "localDetail", "not a BIT STRING's contents")
                })?;
                if b.len() > MAX_LOCAL_DETAIL_BITS {
                    return Err(Error::TooLarge {
                        layer: L,
                        what: "localDetail bits",
                        size: b.len(),
                        max: MAX_LOCAL_DETAIL_BITS,
                    });
                }
                Some(b)
            }
            None => None,
        };
        r.expect_end("Status-Response").map_err(berr)?;
        Ok(StatusResponse {
            logical,
            physical,
            local_detail,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        asn1::uint(out, 0x80, u64::from(self.logical));
        asn1::uint(out, 0x81, u64::from(self.physical));
        if let Some(b) = &self.local_detail {
            asn1::tlv(out, 0x82, &b.contents());
        }
    }
}

/// The named values are 0..=3; a wider value is kept if it fits an octet (an extension the
/// caller can show), refused otherwise.
fn status_value(v: &[u8], what: &'static str) -> Result<u8> {
    let n = ber::decode_u32(v, what).map_err(berr)?;
    u8::try_from(n).map_err(|_| Error::malformed(L, what, "value above 255"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::{ConfirmedRequest, ConfirmedResponse, MmsPdu};
    use gander_wire::Codec;
    use proptest::prelude::*;

    #[test]
    fn golden_status_exchange() {
        // What libiec61850 1.6's client sends (`MmsConnection_getServerStatus`, extended
        // derivation false) and its server answers by default (mms_status_service.c:
        // `A0 { 80 logical, 81 physical }`, no localDetail).
        let req = hex::decode("a0060201078001 00".replace(' ', "")).unwrap();
        let pdu = MmsPdu::ConfirmedRequest {
            invoke_id: 7,
            request: ConfirmedRequest::Status {
                extended_derivation: false,
            },
        };
        assert_eq!(MmsPdu::parse(&req).unwrap(), pdu);
        assert_eq!(pdu.to_vec(), req);
        let resp = hex::decode("a10b020107a006800100810100").unwrap();
        let pdu = MmsPdu::ConfirmedResponse {
            invoke_id: 7,
            response: ConfirmedResponse::Status(StatusResponse::operational()),
        };
        assert_eq!(MmsPdu::parse(&resp).unwrap(), pdu);
        assert_eq!(pdu.to_vec(), resp);
    }

    #[test]
    fn malformed_status_is_an_error() {
        for (hex_pdu, why) in [
            ("a0050201078000", "BOOLEAN without its octet"),
            ("a00702010780020001", "BOOLEAN of two octets"),
            (
                "a108020107a0038001 00".replace(' ', "").as_str(),
                "no vmdPhysicalStatus",
            ),
            (
                "a10c020107a007800100810201 00".replace(' ', "").as_str(),
                "physical 256",
            ),
            (
                "a10d020107a00880010081010082 00".replace(' ', "").as_str(),
                "localDetail without its unused-bits octet",
            ),
        ] {
            let b = hex::decode(hex_pdu).unwrap();
            assert!(MmsPdu::parse(&b).is_err(), "{why}");
        }
    }

    proptest! {
        #[test]
        fn status_round_trips(
            id in any::<u32>(),
            ext in any::<bool>(),
            logical in any::<u8>(),
            physical in any::<u8>(),
            detail in proptest::option::of(proptest::collection::vec(any::<bool>(), 0..=128)),
        ) {
            let req = MmsPdu::ConfirmedRequest {
                invoke_id: id,
                request: ConfirmedRequest::Status { extended_derivation: ext },
            };
            prop_assert_eq!(MmsPdu::parse(&req.to_vec()).unwrap(), req);
            let local_detail = detail.map(|bits| {
                let mut b = BitString::new(bits.len());
                for (i, v) in bits.iter().enumerate() {
                    b.set(i, *v);
                }
                b
            });
            let resp = MmsPdu::ConfirmedResponse {
                invoke_id: id,
                response: ConfirmedResponse::Status(StatusResponse { logical, physical, local_detail }),
            };
            prop_assert_eq!(MmsPdu::parse(&resp.to_vec()).unwrap(), resp);
        }
    }
}
