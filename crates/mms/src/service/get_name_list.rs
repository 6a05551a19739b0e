//! GetNameList (ISO 9506-2 10.5, Wireshark `mms.asn`):
//!
//! ```text
//! GetNameList-Request ::= SEQUENCE {
//!     objectClass   [0] ObjectClass,              -- CHOICE { objectClass [0] IMPLICIT INTEGER, ... }
//!     objectScope   [1] CHOICE { vmdSpecific [0] IMPLICIT NULL,
//!                                domainSpecific [1] IMPLICIT Identifier,
//!                                aaSpecific [2] IMPLICIT NULL },
//!     continueAfter [2] IMPLICIT Identifier OPTIONAL }
//! GetNameList-Response ::= SEQUENCE {
//!     listOfIdentifier [0] IMPLICIT SEQUENCE OF Identifier,
//!     moreFollows      [1] IMPLICIT BOOLEAN DEFAULT TRUE }
//! ```
//!
//! IEC 61850-8-1 uses it to discover the model: logical devices are domains (class 9,
//! VMD scope), every data object and attribute of a logical device is a named variable
//! (class 0, domain scope), data sets are named variable lists (class 2). A server that
//! cannot fit all names into one PDU sets moreFollows and the client asks again with
//! continueAfter = the last name received; [`NameListQuery`] runs that loop.

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};

use super::variable::identifier;
use super::{ber as berr, L};
use crate::asn1;
use crate::error::{Error, Result};

/// ObjectClass values (ISO 9506-2 `ObjectClass ::= INTEGER`), kept open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObjectClass(pub u8);

impl ObjectClass {
    /// namedVariable (0): data objects and attributes.
    pub const NAMED_VARIABLE: Self = Self(0);
    /// namedVariableList (2): data sets.
    pub const NAMED_VARIABLE_LIST: Self = Self(2);
    /// journal (8): IEC 61850 logs.
    pub const JOURNAL: Self = Self(8);
    /// domain (9): logical devices.
    pub const DOMAIN: Self = Self(9);
}

/// objectScope.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ObjectScope {
    /// vmdSpecific `[0]`: e.g. the list of domains.
    Vmd,
    /// domainSpecific `[1]`: objects of one domain (logical device).
    Domain(String),
    /// aaSpecific `[2]`: objects of this association.
    Association,
}

/// A GetNameList request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetNameListRequest {
    /// Which kind of object.
    pub object_class: ObjectClass,
    /// Where.
    pub scope: ObjectScope,
    /// Continue after this name (the last one of the previous answer).
    pub continue_after: Option<String>,
}

impl GetNameListRequest {
    /// The logical devices (domains) of the server.
    pub fn domains() -> Self {
        GetNameListRequest {
            object_class: ObjectClass::DOMAIN,
            scope: ObjectScope::Vmd,
            continue_after: None,
        }
    }

    /// The named variables of a domain (every DO and DA of a logical device).
    pub fn variables(domain: impl Into<String>) -> Self {
        GetNameListRequest {
            object_class: ObjectClass::NAMED_VARIABLE,
            scope: ObjectScope::Domain(domain.into()),
            continue_after: None,
        }
    }

    /// The named variable lists (data sets) of a domain.
    pub fn variable_lists(domain: impl Into<String>) -> Self {
        GetNameListRequest {
            object_class: ObjectClass::NAMED_VARIABLE_LIST,
            scope: ObjectScope::Domain(domain.into()),
            continue_after: None,
        }
    }

    /// Decode the contents of the `A1` service element.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let c = r.read_expected(0xa0, "objectClass").map_err(berr)?;
        let mut cr = c.reader();
        let oc = cr.read_expected(0x80, "objectClass").map_err(berr)?;
        cr.expect_end("objectClass").map_err(berr)?;
        let n = ber::decode_u64(oc.value, "objectClass").map_err(berr)?;
        let object_class = ObjectClass(
            u8::try_from(n).map_err(|_| Error::malformed(L, "objectClass", "out of range"))?,
        );
        let s = r.read_expected(0xa1, "objectScope").map_err(berr)?;
        let mut sr = s.reader();
        let st = sr.read_tlv("objectScope").map_err(berr)?;
        sr.expect_end("objectScope").map_err(berr)?;
        let scope = match st.tag {
            0x80 if st.value.is_empty() => ObjectScope::Vmd,
            0x81 => ObjectScope::Domain(identifier(st.value)?),
            0x82 if st.value.is_empty() => ObjectScope::Association,
            0x80 | 0x82 => {
                return Err(Error::malformed(L, "objectScope", "NULL with contents"));
            }
            tag => {
                return Err(Error::UnknownCode {
                    layer: L,
                    what: "objectScope",
                    code: tag,
                })
            }
        };
        let continue_after = match r.read_optional(0x82, "continueAfter").map_err(berr)? {
            Some(t) => Some(identifier(t.value)?),
            None => None,
        };
        r.expect_end("GetNameList-Request").map_err(berr)?;
        Ok(GetNameListRequest {
            object_class,
            scope,
            continue_after,
        })
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        asn1::nested(out, 0xa0, |o| {
            asn1::uint(o, 0x80, self.object_class.0 as u64)
        });
        asn1::nested(out, 0xa1, |o| match &self.scope {
            ObjectScope::Vmd => asn1::tlv(o, 0x80, &[]),
            ObjectScope::Domain(d) => asn1::tlv(o, 0x81, d.as_bytes()),
            ObjectScope::Association => asn1::tlv(o, 0x82, &[]),
        });
        if let Some(c) = &self.continue_after {
            asn1::tlv(out, 0x82, c.as_bytes());
        }
    }
}

/// A GetNameList response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetNameListResponse {
    /// The names, in the server's (alphabetical, for libiec61850) order.
    pub identifiers: Vec<String>,
    /// Whether the client must ask again with continueAfter.
    pub more_follows: bool,
}

impl GetNameListResponse {
    /// Decode the contents of the `A1` service element. moreFollows is `DEFAULT TRUE`, so
    /// its absence means more follow. As many identifiers as the PDU carries are read (a
    /// 65000-octet answer holds about 3000 IEC 61850 names; [`super::bounds`]).
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut r = Reader::new(v);
        let l = r.read_expected(0xa0, "listOfIdentifier").map_err(berr)?;
        let mut lr = l.reader();
        let mut identifiers = Vec::new();
        while !lr.is_empty() {
            let t = lr.read_expected(0x1a, "Identifier").map_err(berr)?;
            identifiers.push(identifier(t.value)?);
        }
        let more_follows = match r.read_optional(0x81, "moreFollows").map_err(berr)? {
            Some(t) => ber::decode_bool(t.value, "moreFollows").map_err(berr)?,
            None => true,
        };
        r.expect_end("GetNameList-Response").map_err(berr)?;
        Ok(GetNameListResponse {
            identifiers,
            more_follows,
        })
    }

    /// Append the contents. moreFollows is always written, as libiec61850 does.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        asn1::nested(out, 0xa0, |o| {
            self.identifiers
                .iter()
                .for_each(|i| asn1::tlv(o, 0x1a, i.as_bytes()))
        });
        asn1::tlv(out, 0x81, &[ber::encode_bool(self.more_follows)]);
    }
}

impl GetNameListResponse {
    /// Server side: the page of `all` (the server's complete, sorted list) that follows
    /// `continue_after` and fits in `max_pdu` octets (the negotiated localDetail), with
    /// moreFollows set when names remain. A continueAfter that is not in the list starts
    /// after the last name sorting before it. At least one name is sent when any remain, so
    /// the client always makes progress.
    pub fn page(all: &[String], continue_after: Option<&str>, max_pdu: usize) -> Self {
        let start = match continue_after {
            None => 0,
            Some(c) => match all.iter().position(|n| n == c) {
                Some(i) => i + 1,
                None => all.iter().take_while(|n| n.as_str() < c).count(),
            },
        };
        // Confirmed-Response header, invokeID, service tag, list header and moreFollows.
        let mut budget = max_pdu.saturating_sub(24);
        let mut end = start;
        for n in &all[start..] {
            let cost = ber::tlv_len(n.len());
            if end > start && cost > budget {
                break;
            }
            budget = budget.saturating_sub(cost);
            end += 1;
        }
        GetNameListResponse {
            identifiers: all[start..end].to_vec(),
            more_follows: end < all.len(),
        }
    }
}

/// Most names one [`NameListQuery`] collects over all its pages (bounds memory against a
/// server that never stops).
pub const MAX_NAMES: usize = 100_000;

/// A client-side GetNameList with continuation (sans-I/O): ask [`NameListQuery::next_request`]
/// for the request to send, feed each answer to [`NameListQuery::on_response`], and stop when
/// [`NameListQuery::is_done`]. A server that sets moreFollows without making progress (an
/// empty page, or the same last name again; servers need not sort, so order is not checked) is an error rather than a loop.
#[derive(Debug, Clone)]
pub struct NameListQuery {
    base: GetNameListRequest,
    names: Vec<String>,
    outstanding: bool,
    done: bool,
}

impl NameListQuery {
    /// Start a query (the request's continueAfter is the starting point, usually `None`).
    pub fn new(request: GetNameListRequest) -> Self {
        NameListQuery {
            base: request,
            names: Vec::new(),
            outstanding: false,
            done: false,
        }
    }

    /// The next request to send, or `None` while one is outstanding or once done.
    pub fn next_request(&mut self) -> Option<GetNameListRequest> {
        if self.done || self.outstanding {
            return None;
        }
        self.outstanding = true;
        let mut r = self.base.clone();
        if let Some(last) = self.names.last() {
            r.continue_after = Some(last.clone());
        }
        Some(r)
    }

    /// Take one answer.
    pub fn on_response(&mut self, resp: GetNameListResponse) -> Result<()> {
        if !self.outstanding {
            return Err(Error::malformed(
                L,
                "GetNameList-Response",
                "no request outstanding",
            ));
        }
        self.outstanding = false;
        let progress = match (self.names.last(), resp.identifiers.last()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(prev), Some(last)) => last != prev,
        };
        if resp.more_follows && !progress {
            self.done = true;
            return Err(Error::malformed(
                L,
                "GetNameList-Response",
                "moreFollows without progress",
            ));
        }
        if self.names.len() + resp.identifiers.len() > MAX_NAMES {
            self.done = true;
            return Err(Error::Limit {
                layer: L,
                what: "too many names in one GetNameList query",
            });
        }
        self.names.extend(resp.identifiers);
        self.done = !resp.more_follows;
        Ok(())
    }

    /// Whether every page has been received.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The names received so far.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The names, once done.
    pub fn into_names(self) -> Vec<String> {
        self.names
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdu::{ConfirmedRequest, ConfirmedResponse, MmsPdu};
    use gander_wire::Codec;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    fn req(bytes: &[u8]) -> GetNameListRequest {
        match MmsPdu::parse(bytes).unwrap() {
            MmsPdu::ConfirmedRequest {
                request: ConfirmedRequest::GetNameList(r),
                ..
            } => r,
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn golden_libiec61850_domains_and_lists() {
        // `docs/mms-services.md` (captured): domains, then the data sets of IMPLD0.
        let q = h("a00e020102a109a003800109a1028000");
        assert_eq!(req(&q), GetNameListRequest::domains());
        let pdu = MmsPdu::ConfirmedRequest {
            invoke_id: 2,
            request: ConfirmedRequest::GetNameList(GetNameListRequest::domains()),
        };
        assert_eq!(pdu.to_vec(), q);
        let a = h("a112020102a10da0081a06494d504c4430810100");
        let pdu = MmsPdu::ConfirmedResponse {
            invoke_id: 2,
            response: ConfirmedResponse::GetNameList(GetNameListResponse {
                identifiers: vec!["IMPLD0".into()],
                more_follows: false,
            }),
        };
        assert_eq!(MmsPdu::parse(&a).unwrap(), pdu);
        assert_eq!(pdu.to_vec(), a);
        let q = h("a014020107a10fa003800102a1088106494d504c4430");
        assert_eq!(req(&q), GetNameListRequest::variable_lists("IMPLD0"));
        let a = h("a114020107a10fa00a1a084c4c4e3024445331810100");
        let MmsPdu::ConfirmedResponse {
            response: ConfirmedResponse::GetNameList(r),
            ..
        } = MmsPdu::parse(&a).unwrap()
        else {
            panic!()
        };
        assert_eq!(r.identifiers, ["LLN0$DS1"]);
    }

    #[test]
    fn golden_libiec61850_continuation() {
        // The second request of the captured variable listing continues after the last
        // name of the first page.
        let q = h("a024020104a11fa003800100a1088106494d504c4430820e4747494f31244d5824416e496e31");
        let r = req(&q);
        assert_eq!(r.continue_after.as_deref(), Some("GGIO1$MX$AnIn1"));
        assert_eq!(r.scope, ObjectScope::Domain("IMPLD0".into()));
    }

    #[test]
    fn default_more_follows_and_errors() {
        // moreFollows absent: DEFAULT TRUE.
        let r = GetNameListResponse::decode_contents(&h("a003 1a0141")).unwrap();
        assert!(r.more_follows);
        assert!(GetNameListResponse::decode_contents(&h("a003 040141")).is_err());
        assert!(GetNameListRequest::decode_contents(&h("a003800109 a1028001")).is_err());
        assert!(GetNameListRequest::decode_contents(&h("a003800109 a1028300")).is_err());
    }

    fn page(names: &[&str], more: bool) -> GetNameListResponse {
        GetNameListResponse {
            identifiers: names.iter().map(|s| s.to_string()).collect(),
            more_follows: more,
        }
    }

    #[test]
    fn server_pages_fit_the_pdu() {
        let all: Vec<String> = (0..100).map(|i| format!("LN{i:03}$ST$Ind$stVal")).collect();
        let mut q = NameListQuery::new(GetNameListRequest::variables("LD"));
        let mut pages = 0;
        while let Some(r) = q.next_request() {
            let p = GetNameListResponse::page(&all, r.continue_after.as_deref(), 400);
            let pdu = MmsPdu::ConfirmedResponse {
                invoke_id: 70000,
                response: ConfirmedResponse::GetNameList(p.clone()),
            };
            assert!(pdu.to_vec().len() <= 400);
            q.on_response(p).unwrap();
            pages += 1;
        }
        assert!(pages > 1);
        assert_eq!(q.into_names(), all);
        let p = GetNameListResponse::page(&all, Some("LN050"), 65000);
        assert_eq!(p.identifiers[0], "LN050$ST$Ind$stVal");
        assert!(!p.more_follows);
    }

    #[test]
    fn query_follows_continuation() {
        let mut q = NameListQuery::new(GetNameListRequest::variables("LD"));
        let r1 = q.next_request().unwrap();
        assert_eq!(r1.continue_after, None);
        assert!(q.next_request().is_none(), "one request at a time");
        q.on_response(page(&["A", "B"], true)).unwrap();
        let r2 = q.next_request().unwrap();
        assert_eq!(r2.continue_after.as_deref(), Some("B"));
        q.on_response(page(&["C"], false)).unwrap();
        assert!(q.is_done());
        assert!(q.next_request().is_none());
        assert_eq!(q.into_names(), ["A", "B", "C"]);
        // A server that repeats itself is an error, not a loop.
        let mut q = NameListQuery::new(GetNameListRequest::domains());
        q.next_request().unwrap();
        q.on_response(page(&["X"], true)).unwrap();
        q.next_request().unwrap();
        assert!(q.on_response(page(&["X"], true)).is_err());
        assert!(q.is_done());
        let mut q = NameListQuery::new(GetNameListRequest::domains());
        q.next_request().unwrap();
        assert!(q.on_response(page(&[], true)).is_err());
        let mut q = NameListQuery::new(GetNameListRequest::domains());
        assert!(q.on_response(page(&[], false)).is_err(), "unsolicited");
    }

    fn arb_request() -> impl Strategy<Value = GetNameListRequest> {
        (
            any::<u8>(),
            prop_oneof![
                Just(ObjectScope::Vmd),
                "[A-Za-z0-9]{1,20}".prop_map(ObjectScope::Domain),
                Just(ObjectScope::Association),
            ],
            proptest::option::of("[A-Za-z0-9$]{1,40}"),
        )
            .prop_map(|(c, scope, continue_after)| GetNameListRequest {
                object_class: ObjectClass(c),
                scope,
                continue_after,
            })
    }

    proptest! {
        #[test]
        fn request_round_trip(r in arb_request()) {
            let mut v = Vec::new();
            r.encode_contents(&mut v);
            prop_assert_eq!(GetNameListRequest::decode_contents(&v).unwrap(), r);
        }

        #[test]
        fn response_round_trip(
            identifiers in proptest::collection::vec("[A-Za-z0-9$]{1,40}", 0..20),
            more_follows in any::<bool>(),
        ) {
            let r = GetNameListResponse { identifiers, more_follows };
            let mut v = Vec::new();
            r.encode_contents(&mut v);
            prop_assert_eq!(GetNameListResponse::decode_contents(&v).unwrap(), r);
        }

        #[test]
        fn query_collects_every_page(
            mut names in proptest::collection::btree_set("[A-Z]{1,6}", 1..40),
            page_len in 1usize..7,
        ) {
            let all: Vec<String> = std::mem::take(&mut names).into_iter().collect();
            let mut q = NameListQuery::new(GetNameListRequest::domains());
            let mut pos = 0;
            while let Some(r) = q.next_request() {
                // A server: names after continueAfter, page_len at a time.
                if let Some(c) = &r.continue_after {
                    pos = all.iter().position(|n| n == c).unwrap() + 1;
                }
                let end = (pos + page_len).min(all.len());
                q.on_response(GetNameListResponse {
                    identifiers: all[pos..end].to_vec(),
                    more_follows: end < all.len(),
                }).unwrap();
            }
            prop_assert!(q.is_done());
            prop_assert_eq!(q.into_names(), all);
        }
    }
}
