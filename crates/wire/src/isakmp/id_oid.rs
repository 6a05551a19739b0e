//! The Identification Data of an ID_OID group identity (RFC 8052 2.1, Figure 2): a member
//! names the IEC 61850 group it wants to join by an object identifier and, where IEC 62351-9
//! ties the group to one destination, an OID-Specific Payload selecting it.
//!
//! ```text
//! OID Length (1) | OID (DER) | OID-Specific Payload Length (2) | OID-Specific Payload
//! ```
//!
//! RFC 8052 says the OID is "an ASN.1 ObjectIdentifier encoded using DER", which gander reads
//! as the whole DER encoding, tag and length included (06 L V), and writes so, as go-iec61850
//! does; it also reads the bare contents octets (the OID Length delimits them), the same rule
//! as the IEC 61850 SA TEK's OID ([`super::iec61850::strip_oid_tlv`]). The data must end with
//! the payload: trailing octets are refused.

use super::error::{IsakmpError, Result};
use super::iec61850::{decode_oid, encode_oid, oid_to_string, strip_oid_tlv};
use super::reader::{len16, len8, Reader, Writer};

/// An ID_OID group identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdOid {
    /// DER contents octets of the OID (without tag and length).
    pub oid: Vec<u8>,
    /// The OID-Specific Payload (empty when the OID needs none).
    pub selector: Vec<u8>,
}

impl IdOid {
    /// From a dotted OID and a selector.
    pub fn new(dotted: &str, selector: Vec<u8>) -> Result<IdOid> {
        Ok(IdOid {
            oid: encode_oid(dotted)?,
            selector,
        })
    }

    /// Parses ID_OID Identification Data.
    pub fn parse(data: &[u8]) -> Result<IdOid> {
        let mut r = Reader::new(data, "ID_OID");
        let n = r.u8()? as usize;
        let field = r.take(n)?;
        let oid = strip_oid_tlv(field);
        if strip_oid_tlv(oid).len() != oid.len() {
            // Contents that would themselves read as a TLV (arc 0.6) are ambiguous.
            return Err(IsakmpError::BadValue {
                what: "OID",
                detail: "ambiguous TLV-shaped contents",
            });
        }
        if oid.len() >= 0x80 {
            return Err(IsakmpError::BadLength {
                what: "OID",
                value: oid.len(),
            });
        }
        decode_oid(oid)?;
        let sl = r.u16()? as usize;
        let selector = r.take(sl)?.to_vec();
        r.finish()?;
        Ok(IdOid {
            oid: oid.to_vec(),
            selector,
        })
    }

    /// Octets written.
    pub fn len(&self) -> usize {
        1 + 2 + self.oid.len() + 2 + self.selector.len()
    }

    /// Never empty (the lengths are always there).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether every length fits (the OID in a short-form DER length, the selector in 16
    /// bits).
    pub fn fits(&self) -> bool {
        self.oid.len() < 0x80 && self.selector.len() <= usize::from(u16::MAX)
    }

    /// The Identification Data with the OID as a whole DER TLV.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.len()];
        let mut w = Writer::new(&mut v);
        w.u8(len8(2 + self.oid.len()));
        w.u8(0x06);
        w.u8(len8(self.oid.len()));
        w.bytes(&self.oid);
        w.u16(len16(self.selector.len()));
        w.bytes(&self.selector);
        v
    }

    /// The OID in dotted form.
    pub fn dotted(&self) -> Result<String> {
        oid_to_string(&self.oid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// go-iec61850's `gdoi` member naming its group by 1.2.840.10070.61850.8.1.2 with no
    /// OID-Specific Payload: OID Length 13, the whole DER OID, payload length 0.
    const GO: [u8; 16] = [
        0x0d, 0x06, 0x0b, 0x2a, 0x86, 0x48, 0xce, 0x56, 0x83, 0xe3, 0x1a, 0x08, 0x01, 0x02, 0x00,
        0x00,
    ];

    #[test]
    fn reads_and_writes_go_iec61850_bytes() {
        let id = IdOid::parse(&GO).unwrap();
        assert_eq!(id.dotted().unwrap(), "1.2.840.10070.61850.8.1.2");
        assert!(id.selector.is_empty());
        assert_eq!(id.to_vec(), GO);
        assert_eq!(IdOid::new("1.2.840.10070.61850.8.1.2", vec![]).unwrap(), id);
    }

    #[test]
    fn reads_the_bare_contents_form_and_refuses_trailing_octets() {
        // OID Length 11, the contents only, a 2-octet selector.
        let mut b = vec![0x0b];
        b.extend_from_slice(&GO[3..14]);
        b.extend_from_slice(&[0x00, 0x02, 0xab, 0xcd]);
        let id = IdOid::parse(&b).unwrap();
        assert_eq!(id.dotted().unwrap(), "1.2.840.10070.61850.8.1.2");
        assert_eq!(id.selector, vec![0xab, 0xcd]);
        b.push(0);
        assert!(IdOid::parse(&b).is_err());
        assert!(IdOid::parse(&GO[..15]).is_err());
        assert!(IdOid::parse(&[]).is_err());
    }

    proptest! {
        #[test]
        fn parse_emit_round_trip(
            arcs in proptest::collection::vec(0u64..1_000_000, 0..10),
            selector in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let dotted = std::iter::once("1.2".to_string())
                .chain(arcs.iter().map(u64::to_string))
                .collect::<Vec<_>>()
                .join(".");
            let id = IdOid::new(&dotted, selector).unwrap();
            prop_assert!(id.fits());
            let v = id.to_vec();
            prop_assert_eq!(v.len(), id.len());
            prop_assert_eq!(IdOid::parse(&v).unwrap(), id);
        }

        #[test]
        fn parse_never_panics(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(id) = IdOid::parse(&b) {
                prop_assert_eq!(IdOid::parse(&id.to_vec()).unwrap(), id);
            }
        }
    }
}
