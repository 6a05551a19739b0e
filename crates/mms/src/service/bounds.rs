//! How big a decoded MMS PDU can get, and why no list needs a fixed count limit.
//!
//! ISO 9506-2 8.2 (Initiate): each side states in `localDetailCalling` / `localDetailCalled`
//! the largest MMS PDU it accepts, and the peer must not send a larger one. gander advertises
//! [`LOCAL_DETAIL`] (65000 octets, as libiec61850 does) and its association refuses a session
//! PDU larger than `Limits::max_tsdu` (65000 plus the octets of the layers below MMS), so
//! every decoder in this crate sees at most [`MAX_PDU_OCTETS`] octets.
//!
//! Every element of every list (identifiers of a GetNameList answer, variables of a Read,
//! Write or named-variable-list, access results of a Read or report, structure components
//! of a type description, alternate-access selections) occupies at least a tag octet and a
//! length octet, and some more ([`MIN_IDENTIFIER_OCTETS`] ...). So the number of elements is
//! bounded by the octets that carry them: a 65000-octet GetNameList answer holds at most 32
//! 500 identifiers (about 3000 of IEC 61850's `LLN0$ST$Beh$stVal`-sized names), and a
//! decoder that reads element by element, each in time and memory linear in its own octets,
//! stays linear in the PDU size however the count comes out. A fixed count (the 1024
//! identifiers gander used to accept) only refuses real relays: libiec61850 sends a 2882-name
//! logical device in a few pages and the SEL 451, Efacec TPU 220 and BHEL BCU 402T models
//! have thousands of names each. What stays bounded by a constant is recursion: `Data` and
//! TypeSpecification nesting (`gander_wire::data::MAX_DEPTH`,
//! [`super::type_description::MAX_TYPE_DEPTH`]) and alternate access
//! ([`super::alternate_access::MAX_ACCESS_DEPTH`]), so a hostile PDU cannot exhaust the stack.
//!
//! What a hostile peer can still do is spend the PDU on the smallest elements. The tests
//! below decode such PDUs of [`MAX_PDU_OCTETS`] and check that the count and the time stay
//! where the arithmetic says.

/// The largest MMS PDU gander advertises in its Initiate (localDetail, ISO 9506-2 8.2), the
/// same as libiec61850's `CONFIG_MMS_MAXIMUM_PDU_SIZE`.
pub const LOCAL_DETAIL: usize = 65_000;

/// Octets the layers below MMS add to one MMS PDU in a session DATA SPDU (session,
/// presentation user data and PDV headers) with room to spare: the association's default
/// TSDU cap is [`LOCAL_DETAIL`] plus this.
pub const LOWER_LAYER_OCTETS: usize = 1_024;

/// The most octets any decoder of this crate is handed for one PDU (the association's
/// default `Limits::max_tsdu`).
pub const MAX_PDU_OCTETS: usize = LOCAL_DETAIL + LOWER_LAYER_OCTETS;

/// Smallest encoded Identifier: `1A 00` (X.690: one identifier octet, one length octet).
pub const MIN_IDENTIFIER_OCTETS: usize = 2;

/// Smallest listOfVariable entry: `30 04 { A0 02 { 80 00 } }` (a vmd-specific name).
pub const MIN_VARIABLE_OCTETS: usize = 6;

/// Smallest AccessResult or `Data`: `A2 00` (an empty structure) or `89 00`.
pub const MIN_ACCESS_RESULT_OCTETS: usize = 2;

/// Smallest TypeSpecification node: `83 00` (boolean).
pub const MIN_TYPE_NODE_OCTETS: usize = 2;

/// Smallest alternate-access selection: `83 00` (selectAccess component "").
pub const MIN_SELECTION_OCTETS: usize = 2;

/// The most elements of at least `min_element_octets` octets each that `octets` octets can
/// carry: the bound every list decoder of this crate lives within without counting.
pub const fn max_elements(octets: usize, min_element_octets: usize) -> usize {
    match octets.checked_div(min_element_octets) {
        Some(n) => n,
        None => octets,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::{ConfirmedResponse, MmsPdu};
    use crate::service::{
        AccessResult, GetNameListResponse, ReadResponse, TypeSpec, VariableAccessSpecification,
    };
    use gander_wire::ber::Reader;
    use gander_wire::data::Data;
    use gander_wire::Codec;
    use proptest::prelude::*;
    use std::time::{Duration, Instant};

    /// Generous for a debug build on a loaded 2-core machine; a release decode of 65000
    /// octets takes a few milliseconds.
    const SLOW: Duration = Duration::from_secs(5);

    /// A GetNameList answer of `n` names `prefix0000`... (IEC 61850 item names are 10 to 60
    /// characters), as one confirmed-Response.
    fn name_list_pdu(names: &[String]) -> Vec<u8> {
        MmsPdu::ConfirmedResponse {
            invoke_id: 7,
            response: ConfirmedResponse::GetNameList(GetNameListResponse {
                identifiers: names.to_vec(),
                more_follows: true,
            }),
        }
        .to_vec()
    }

    #[test]
    fn relay_sized_name_list_parses() {
        // More than 3000 short names in one 65000-octet answer: what libiec61850 and gander's
        // own server send for relay-sized logical devices (the old 1024 limit refused them).
        let names: Vec<String> = (0..3200).map(|i| format!("LN{i:04}$ST$Beh")).collect();
        let pdu = name_list_pdu(&names);
        assert!(pdu.len() <= LOCAL_DETAIL, "{}", pdu.len());
        let MmsPdu::ConfirmedResponse {
            response: ConfirmedResponse::GetNameList(r),
            ..
        } = MmsPdu::parse(&pdu).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.identifiers, names);
    }

    #[test]
    fn hostile_empty_identifiers_stay_bounded() {
        // The whole PDU spent on `1A 00`: the most identifiers any accepted PDU can carry.
        let n = max_elements(LOCAL_DETAIL - 16, MIN_IDENTIFIER_OCTETS);
        let names = vec![String::new(); n];
        let pdu = name_list_pdu(&names);
        assert!(pdu.len() <= MAX_PDU_OCTETS);
        let t = Instant::now();
        let r = MmsPdu::parse(&pdu).unwrap();
        assert!(t.elapsed() < SLOW);
        let MmsPdu::ConfirmedResponse {
            response: ConfirmedResponse::GetNameList(r),
            ..
        } = r
        else {
            panic!()
        };
        assert_eq!(r.identifiers.len(), n);
        assert!(r.identifiers.len() <= max_elements(pdu.len(), MIN_IDENTIFIER_OCTETS));
    }

    #[test]
    fn hostile_read_results_and_types_stay_bounded() {
        // 32 000 empty structures in one Read answer.
        let n = max_elements(LOCAL_DETAIL - 16, MIN_ACCESS_RESULT_OCTETS);
        let pdu = MmsPdu::ConfirmedResponse {
            invoke_id: 1,
            response: ConfirmedResponse::Read(ReadResponse {
                spec: None,
                results: vec![AccessResult::Success(Data::Structure(vec![])); n],
            }),
        }
        .to_vec();
        assert!(pdu.len() <= MAX_PDU_OCTETS);
        let t = Instant::now();
        let MmsPdu::ConfirmedResponse {
            response: ConfirmedResponse::Read(r),
            ..
        } = MmsPdu::parse(&pdu).unwrap()
        else {
            panic!()
        };
        assert!(t.elapsed() < SLOW);
        assert_eq!(r.results.len(), n);

        // A structure type of 21 000 boolean components (`30 03 A1 01 83 00` would be 6
        // octets with a name; unnamed it is `30 04 A1 02 83 00`).
        let comps = max_elements(LOCAL_DETAIL - 16, 6);
        let t = TypeSpec::Structure {
            packed: false,
            components: vec![
                crate::service::Component {
                    name: None,
                    ty: TypeSpec::Boolean,
                };
                comps
            ],
        };
        let bytes = t.to_bytes();
        assert!(bytes.len() <= LOCAL_DETAIL);
        let start = Instant::now();
        assert_eq!(TypeSpec::decode(&mut Reader::new(&bytes)).unwrap(), t);
        assert!(start.elapsed() < SLOW);
    }

    #[test]
    fn hostile_variable_list_stays_bounded() {
        let n = max_elements(LOCAL_DETAIL - 16, MIN_VARIABLE_OCTETS);
        let spec = VariableAccessSpecification::names(
            (0..n).map(|_| crate::service::ObjectName::VmdSpecific(String::new())),
        );
        let mut v = Vec::new();
        spec.encode(&mut v);
        assert!(v.len() <= MAX_PDU_OCTETS);
        let t = Instant::now();
        let VariableAccessSpecification::ListOfVariable(vars) =
            VariableAccessSpecification::decode(&mut Reader::new(&v)).unwrap()
        else {
            panic!()
        };
        assert!(t.elapsed() < SLOW);
        assert_eq!(vars.len(), n);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// Whatever a PDU of up to 65000 octets holds, the identifiers decoded never
        /// outnumber what its octets can carry.
        #[test]
        fn name_count_follows_from_the_octets(
            lens in proptest::collection::vec(0usize..40, 1..4000),
        ) {
            let names: Vec<String> = lens.iter().map(|&l| "x".repeat(l)).collect();
            let pdu = name_list_pdu(&names);
            prop_assume!(pdu.len() <= MAX_PDU_OCTETS);
            let MmsPdu::ConfirmedResponse {
                response: ConfirmedResponse::GetNameList(r),
                ..
            } = MmsPdu::parse(&pdu).unwrap()
            else {
                panic!()
            };
            prop_assert!(r.identifiers.len() <= max_elements(pdu.len(), MIN_IDENTIFIER_OCTETS));
            prop_assert_eq!(r.identifiers, names);
        }
    }
}
