//! Builds the RFC 8052 IEC 61850 SA TEK a key server grants, from a group's IEC 62351-6
//! algorithm codes. One place for both the static grant (`net::kdc`) and the scheduled one
//! (`kdc_schedule`), so both write the same layout.

use gander_wire::isakmp::iec61850::{tek_attr, Traffic};
use gander_wire::isakmp::{iec61850_alg, Attribute, Iec61850Tek, IsakmpError};

/// The parts of a TEK's policy a key server knows.
#[derive(Debug, Clone, Copy)]
pub struct TekPolicy<'a> {
    /// DER contents octets of the group's OID.
    pub oid: &'a [u8],
    /// The traffic, carried in the OID-Specific Payload.
    pub traffic: Traffic,
    /// The Key ID (SPI).
    pub key_id: u32,
    /// IEC 62351-6 MAC code.
    pub mac_code: u16,
    /// IEC 62351-6 encryption code.
    pub enc_code: u16,
    /// Octets of the AES or HMAC key (chooses AES-GMAC-128 or -256).
    pub key_len: usize,
    /// Remaining lifetime in seconds (RFC 8052 2.2), saturated to 32 bits.
    pub lifetime_secs: u64,
    /// SA_ATD in seconds.
    pub activation_delay_secs: u64,
    /// The overlap with the successor in seconds ([`tek_attr::GANDER_OVERLAP`]).
    pub overlap_secs: u64,
}

impl TekPolicy<'_> {
    /// The SA TEK; an IEC 62351-6 algorithm without an RFC 8052 number (HMAC-SHA256-80,
    /// AES-GMAC-64) is refused rather than sent under a wrong number.
    pub fn sa_tek(&self) -> Result<Iec61850Tek, IsakmpError> {
        Ok(Iec61850Tek {
            oid: self.oid.to_vec(),
            traffic: Some(self.traffic),
            spi: self.key_id,
            auth_alg: iec61850_alg::auth_from_62351(self.mac_code, self.key_len)?,
            conf_alg: iec61850_alg::conf_from_62351(self.enc_code)?,
            lifetime_secs: u32::try_from(self.lifetime_secs).unwrap_or(u32::MAX),
            attributes: vec![
                // RFC 8052 4 registers SA_ATD as a variable attribute: four octets.
                Attribute::variable(tek_attr::SA_ATD, secs32(self.activation_delay_secs)),
                Attribute::variable(tek_attr::GANDER_OVERLAP, secs32(self.overlap_secs)),
            ],
        })
    }
}

/// Seconds as the four octets of a variable attribute, saturated.
fn secs32(s: u64) -> [u8; 4] {
    u32::try_from(s).unwrap_or(u32::MAX).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_wire::isakmp::iec61850::{encode_oid, oid};
    use gander_wire::isakmp::iec61850_alg::{auth, conf};

    fn policy(mac_code: u16, enc_code: u16) -> Result<Iec61850Tek, IsakmpError> {
        let o = encode_oid(oid::GOOSE).unwrap();
        TekPolicy {
            oid: &o,
            traffic: Traffic::L2 {
                mac: [1, 0x0c, 0xcd, 1, 0, 1],
                appid: 1,
            },
            key_id: 9,
            mac_code,
            enc_code,
            key_len: 32,
            lifetime_secs: 1 << 40,
            activation_delay_secs: 2,
            overlap_secs: 3,
        }
        .sa_tek()
    }

    #[test]
    fn maps_codes_and_refuses_the_unnumbered() {
        let t = policy(2, 0).unwrap();
        assert_eq!(
            (t.auth_alg, t.conf_alg),
            (auth::HMAC_SHA256_128, conf::NONE)
        );
        assert_eq!(t.lifetime_secs, u32::MAX);
        // The overlap travels in gander's private attribute, not in SA_KDA (a percentage,
        // RFC 8052 2.2.4.2); SA_ATD in the variable form its registry gives.
        assert_eq!(t.attr_u64(tek_attr::GANDER_OVERLAP), Some(3));
        assert_eq!(t.attr_u64(tek_attr::SA_KDA), None);
        assert_eq!(
            Attribute::find(&t.attributes, tek_attr::SA_ATD).map(Attribute::bytes),
            Some(vec![0, 0, 0, 2])
        );
        assert!(policy(1, 0).is_err());
        assert!(policy(0, 7).is_err());
    }
}
