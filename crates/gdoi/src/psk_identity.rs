//! The phase-1 identities a pre-shared key is bound to.
//!
//! In main mode the responder picks the pre-shared key before the initiator names itself:
//! RFC 2409 5.4 says that "the key can only be identified by the IP address of the peers",
//! since HASH_I (and SKEYID) depend on the key before IDii is decrypted. An initiator therefore
//! commonly names itself in IDii by that address (ID_IPV4_ADDR or ID_IPV6_ADDR, RFC 2407
//! 4.6.2.1); gander's own member names itself by ID_KEY_ID. The key server binds a member's
//! key to both: its configured ID_KEY_ID identity, and the address it registers from. The
//! independent Go GDOI implementation (github.com/dscsystems/go-iec61850, package `gdoi`)
//! sends its address and was refused with INVALID-ID-INFORMATION before (docs/gdoi.md,
//! "Interoperability").

use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::IdPayload;
use std::net::IpAddr;

/// The identities (ID type and data) a peer holding one pre-shared key may show in message 5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PskIdentities(Vec<(u8, Vec<u8>)>);

impl PskIdentities {
    /// A member's ID_KEY_ID identity, or the address its key is chosen by (RFC 2409 5.4), as
    /// ID_IPV4_ADDR or ID_IPV6_ADDR.
    pub fn key_id_or_address(identity: &[u8], address: IpAddr) -> PskIdentities {
        let by_address = match address {
            IpAddr::V4(a) => (id_type::IPV4_ADDR, a.octets().to_vec()),
            IpAddr::V6(a) => (id_type::IPV6_ADDR, a.octets().to_vec()),
        };
        PskIdentities(vec![(id_type::KEY_ID, identity.to_vec()), by_address])
    }

    /// Whether `id` is one of these identities (type and data both equal; the protocol and
    /// port octets of a phase-1 ID are not part of the identity).
    pub fn accepts(&self, id: &IdPayload) -> bool {
        self.0
            .iter()
            .any(|(t, d)| *t == id.id_type && *d == id.data)
    }
}

/// [`PskIdentities::key_id_or_address`]`(identity, address).accepts(id)` without building
/// the list: the key server asks this of every pre-shared-key member in its policy for each
/// look-up (the grant, the group name, a reload), and building the three vectors per member
/// was a measurable part of its own share of a registration (docs/gdoi.md, "Benchmark").
pub fn key_id_or_address_accepts(identity: &[u8], address: IpAddr, id: &IdPayload) -> bool {
    match id.id_type {
        id_type::KEY_ID => id.data == identity,
        id_type::IPV4_ADDR => matches!(address, IpAddr::V4(a) if id.data == a.octets()),
        id_type::IPV6_ADDR => matches!(address, IpAddr::V6(a) if id.data == a.octets()),
        _ => false,
    }
}

/// The address an ID_IPV4_ADDR or ID_IPV6_ADDR payload names, as text (for events: the raw
/// octets of 10.77.0.2 would print as control characters); `None` for other types or a
/// length that is not an address's.
pub fn address_text(id: &IdPayload) -> Option<String> {
    match id.id_type {
        id_type::IPV4_ADDR => <[u8; 4]>::try_from(id.data.as_slice())
            .ok()
            .map(|a| std::net::Ipv4Addr::from(a).to_string()),
        id_type::IPV6_ADDR => <[u8; 16]>::try_from(id.data.as_slice())
            .ok()
            .map(|a| std::net::Ipv6Addr::from(a).to_string()),
        _ => None,
    }
}

impl From<(u8, Vec<u8>)> for PskIdentities {
    /// Exactly one identity.
    fn from(one: (u8, Vec<u8>)) -> PskIdentities {
        PskIdentities(vec![one])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cookie::CookieJar;
    use crate::main_mode::ResponderConfig;
    use crate::{Initiator, Phase1Error, Responder, Suite};
    use std::net::{Ipv4Addr, Ipv6Addr};
    use zeroize::Zeroizing;

    fn id(id_type: u8, data: &[u8]) -> IdPayload {
        IdPayload {
            id_type,
            protocol: 0,
            port: 0,
            data: data.to_vec(),
        }
    }

    const GM: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);

    #[test]
    fn key_id_and_the_address_are_accepted_nothing_else() {
        let ids = PskIdentities::key_id_or_address(b"gm-1", GM.into());
        assert!(ids.accepts(&id(id_type::KEY_ID, b"gm-1")));
        assert!(ids.accepts(&id(id_type::IPV4_ADDR, &[10, 77, 0, 2])));
        // Protocol and port are not part of the identity (RFC 2407 4.6.2).
        let mut with_port = id(id_type::IPV4_ADDR, &[10, 77, 0, 2]);
        with_port.protocol = 17;
        with_port.port = 848;
        assert!(ids.accepts(&with_port));
        assert!(!ids.accepts(&id(id_type::IPV4_ADDR, &[10, 77, 0, 3])));
        assert!(!ids.accepts(&id(id_type::KEY_ID, &[10, 77, 0, 2])));
        assert!(!ids.accepts(&id(id_type::IPV4_ADDR, b"gm-1")));
        assert!(!ids.accepts(&id(id_type::FQDN, b"gm-1")));
        let v6 = PskIdentities::key_id_or_address(b"gm-1", Ipv6Addr::LOCALHOST.into());
        assert!(v6.accepts(&id(id_type::IPV6_ADDR, &Ipv6Addr::LOCALHOST.octets())));
        assert!(!v6.accepts(&id(id_type::IPV4_ADDR, &[0, 0, 0, 1])));
    }

    proptest::proptest! {
        /// The non-allocating check says what the list says, for every ID type and octets
        /// near the member's (its identity, its address, either changed in one octet).
        #[test]
        fn accepts_without_the_list_agrees(
            identity in proptest::collection::vec(proptest::num::u8::ANY, 0..6),
            v4 in proptest::num::u32::ANY,
            v6 in proptest::num::u128::ANY,
            use_v6 in proptest::bool::ANY,
            id_type in 0u8..12,
            pick in 0usize..4,
            flip in proptest::num::u8::ANY,
        ) {
            let address: IpAddr = if use_v6 {
                Ipv6Addr::from(v6).into()
            } else {
                Ipv4Addr::from(v4).into()
            };
            let mut data = match pick {
                0 => identity.clone(),
                1 => Ipv4Addr::from(v4).octets().to_vec(),
                2 => Ipv6Addr::from(v6).octets().to_vec(),
                _ => vec![flip],
            };
            if flip % 3 == 0 && !data.is_empty() {
                data[0] ^= 1;
            }
            let probe = id(id_type, &data);
            let list = PskIdentities::key_id_or_address(&identity, address);
            proptest::prop_assert_eq!(
                key_id_or_address_accepts(&identity, address, &probe),
                list.accepts(&probe)
            );
        }
    }

    /// Main mode with a pre-shared key, the member naming itself by ID_IPV4_ADDR as the Go
    /// implementation (github.com/dscsystems/go-iec61850 `gdoi`) does: its message 5 carried
    /// IDii `01 00 00 00 0a 4d 00 02` (ID_IPV4_ADDR 10.77.0.2), which the key server refused
    /// with INVALID-ID-INFORMATION while it bound the key to ID_KEY_ID "gm-1" only.
    fn run(member_id: IdPayload) -> Result<(), Phase1Error> {
        let jar = CookieJar::new();
        let suite = Suite::all(3600)[0];
        let (mut i, m1) = Initiator::start(b"shared", member_id, vec![suite])?;
        let cfg = ResponderConfig {
            psk: Zeroizing::new(b"shared".to_vec()),
            suites: vec![suite],
            id: id(id_type::KEY_ID, b"kdc"),
            expect_peer: Some(PskIdentities::key_id_or_address(b"gm-1", GM.into())),
            cert: None,
        };
        let (mut r, m2) = Responder::start(&jar, &[10, 77, 0, 2, 3, 80], &m1, cfg)?;
        let m3 = i.handle(&m2)?.ok_or(Phase1Error::BadIdentity)?;
        let m4 = r.handle(&jar, &m3)?;
        let m5 = i.handle(&m4)?.ok_or(Phase1Error::BadIdentity)?;
        let m6 = r.handle(&jar, &m5)?;
        i.handle(&m6)?;
        assert!(r.established().is_some());
        Ok(())
    }

    #[test]
    fn addresses_are_named_as_text() {
        assert_eq!(
            address_text(&id(id_type::IPV4_ADDR, &[10, 77, 0, 2])).as_deref(),
            Some("10.77.0.2")
        );
        assert_eq!(
            address_text(&id(id_type::IPV6_ADDR, &Ipv6Addr::LOCALHOST.octets())).as_deref(),
            Some("::1")
        );
        assert_eq!(address_text(&id(id_type::IPV4_ADDR, &[10, 77, 0])), None);
        assert_eq!(address_text(&id(id_type::KEY_ID, b"gm-1")), None);
    }

    #[test]
    fn a_member_named_by_its_address_completes_main_mode() {
        run(id(id_type::IPV4_ADDR, &GM.octets())).unwrap();
        run(id(id_type::KEY_ID, b"gm-1")).unwrap();
    }

    #[test]
    fn another_address_is_still_refused() {
        let e = run(id(id_type::IPV4_ADDR, &[10, 77, 0, 9])).unwrap_err();
        assert_eq!(
            e.notify(),
            gander_wire::isakmp::error::notify_type::INVALID_ID_INFORMATION
        );
    }
}
