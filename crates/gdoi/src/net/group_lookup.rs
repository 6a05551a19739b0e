//! Which configured group a GROUPKEY-PULL's ID payload names (RFC 6407 3.2 message 1).
//!
//! * ID_KEY_ID (and any other type gander does not interpret): the group whose `id` is the
//!   ID data, as before.
//! * ID_OID (RFC 8052 2.1): an IEC 61850 OID and, where IEC 62351-9 ties the group to one
//!   destination, an OID-Specific Payload. The key server's groups carry exactly that: the
//!   OID of their protocol (`[[group]] protocol`, or `oid` to name another) and their traffic
//!   (destination MAC and APPID, or address and port), which gander also sends as the SA TEK's
//!   OID-Specific Payload. So a group is found by its OID, and among several groups of one
//!   OID by the payload (read as gander's traffic encoding). A member that gives no payload
//!   gets the one group of that OID it is authorised for; if it is authorised for several,
//!   the name is ambiguous and refused (INVALID-ID-INFORMATION) rather than guessed.

use super::kdc::{GroupPolicy, KdcPolicy, MemberPolicy};
use crate::pull::PullError;
use gander_wire::isakmp::iec61850::encode_oid;
use gander_wire::isakmp::payload::id_type;
use gander_wire::isakmp::{IdOid, IdPayload, Traffic};

impl KdcPolicy {
    /// The group `id` names for member `m` (`None`: an unknown member, authorised for nothing).
    pub fn find_group(
        &self,
        id: &IdPayload,
        m: Option<&MemberPolicy>,
    ) -> Result<&GroupPolicy, PullError> {
        find_group(&self.groups, id, m)
    }
}

/// [`KdcPolicy::find_group`] over a list of groups.
pub fn find_group<'a>(
    groups: &'a [GroupPolicy],
    id: &IdPayload,
    m: Option<&MemberPolicy>,
) -> Result<&'a GroupPolicy, PullError> {
    if id.id_type != id_type::OID {
        return groups
            .iter()
            .find(|g| g.id == id.data)
            .ok_or(PullError::UnknownGroup);
    }
    let want = IdOid::parse(&id.data).map_err(|_| PullError::UnknownGroup)?;
    let selector = if want.selector.is_empty() {
        None
    } else {
        Some(Traffic::parse(&want.selector).map_err(|_| PullError::UnknownGroup)?)
    };
    let candidates: Vec<&GroupPolicy> = groups
        .iter()
        .filter(|g| encode_oid(&g.oid).is_ok_and(|o| o == want.oid))
        .filter(|g| match selector {
            None => true,
            Some(t) => t == g.traffic,
        })
        .collect();
    match candidates.as_slice() {
        [] => Err(PullError::UnknownGroup),
        [one] => Ok(*one),
        several => {
            // Only the member's own groups can disambiguate a name without a payload.
            let mine: Vec<&GroupPolicy> = several
                .iter()
                .copied()
                .filter(|g| m.is_some_and(|m| m.groups.contains(&g.id)))
                .collect();
            match mine.as_slice() {
                [one] => Ok(*one),
                [] => Err(PullError::NotAuthorized),
                _ => Err(PullError::UnknownGroup),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_wire::isakmp::iec61850::oid;
    use std::net::IpAddr;
    use zeroize::Zeroizing;

    fn group(id: &str, o: &str, port: u16) -> GroupPolicy {
        GroupPolicy {
            id: id.as_bytes().to_vec(),
            oid: o.into(),
            traffic: Traffic::Ipv4 {
                addr: [239, 0, 0, 1],
                port,
            },
            mac_code: 2,
            enc_code: 0,
            lifetime_secs: 60,
            activation_delay_secs: 0,
            overlap_secs: 0,
            key_id: 0,
            key: Zeroizing::new(Vec::new()),
        }
    }

    fn member(groups: &[&str]) -> MemberPolicy {
        MemberPolicy {
            identity: b"m".to_vec(),
            psk: Zeroizing::new(vec![1; 16]),
            address: IpAddr::from([127, 0, 0, 1]),
            groups: groups.iter().map(|g| g.as_bytes().to_vec()).collect(),
            cert: None,
            push: None,
        }
    }

    fn id_oid(o: &str, selector: Vec<u8>) -> IdPayload {
        IdPayload {
            id_type: id_type::OID,
            protocol: 0,
            port: 0,
            data: IdOid::new(o, selector).unwrap().to_vec(),
        }
    }

    fn key_id(s: &str) -> IdPayload {
        IdPayload {
            id_type: id_type::KEY_ID,
            protocol: 0,
            port: 0,
            data: s.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_go_iec61850_member_naming_its_group_by_id_oid_finds_it() {
        // go-iec61850's `gdoi` member: ID_OID 1.2.840.10070.61850.8.1.2, no payload. Before,
        // the key server compared the ID data with group names and refused it ("unknown
        // group", INVALID-ID-INFORMATION).
        let gs = [
            group("ABCD", oid::R_GOOSE, 102),
            group("sv", oid::R_SV, 102),
        ];
        let m = member(&["ABCD"]);
        let g = find_group(&gs, &id_oid(oid::R_GOOSE, vec![]), Some(&m)).unwrap();
        assert_eq!(g.id, b"ABCD");
        // ID_KEY_ID as before, and an OID no group has.
        assert_eq!(find_group(&gs, &key_id("sv"), Some(&m)).unwrap().id, b"sv");
        assert_eq!(
            find_group(&gs, &id_oid(oid::GOOSE, vec![]), Some(&m)).err(),
            Some(PullError::UnknownGroup)
        );
        // The ID data of an ID_OID is never taken for a group name.
        let mut raw = key_id("ABCD");
        raw.id_type = id_type::OID;
        assert!(find_group(&gs, &raw, Some(&m)).is_err());
    }

    #[test]
    fn several_groups_of_one_oid_are_told_apart_by_the_payload_or_the_member() {
        let gs = [group("a", oid::R_GOOSE, 102), group("b", oid::R_GOOSE, 103)];
        let sel = |port: u16| {
            Traffic::Ipv4 {
                addr: [239, 0, 0, 1],
                port,
            }
            .to_vec()
        };
        let both = member(&["a", "b"]);
        assert_eq!(
            find_group(&gs, &id_oid(oid::R_GOOSE, sel(103)), Some(&both))
                .unwrap()
                .id,
            b"b"
        );
        // Without a payload: ambiguous for a member of both, plain for a member of one.
        assert_eq!(
            find_group(&gs, &id_oid(oid::R_GOOSE, vec![]), Some(&both)).err(),
            Some(PullError::UnknownGroup)
        );
        let only_a = member(&["a"]);
        assert_eq!(
            find_group(&gs, &id_oid(oid::R_GOOSE, vec![]), Some(&only_a))
                .unwrap()
                .id,
            b"a"
        );
        // A payload naming no group, or one that is not a traffic selector.
        assert!(find_group(&gs, &id_oid(oid::R_GOOSE, sel(104)), Some(&both)).is_err());
        assert!(find_group(&gs, &id_oid(oid::R_GOOSE, vec![9]), Some(&both)).is_err());
    }
}
