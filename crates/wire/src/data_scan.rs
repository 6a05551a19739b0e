//! The fast path of [`data::check_seq`](crate::data::check_seq): the `Data` values a
//! publisher's allData usually holds (booleans, bit strings, integers, unsigned, IEEE 754
//! floats, octet and visible strings, binary and UTC times, nested in structures and arrays)
//! checked on a [`Scan`], without building a `Result` per element.
//!
//! [`accepts`] says `true` only for input that `check_seq` accepts; on `false` the general
//! checker runs and gives the exact verdict and error (an unusual but valid value such as an
//! objId or a REAL is judged there too). The leaf rules are those of `Leaf::decode` in
//! `data.rs` (ISO 9506-2 `Data`, IEC 61850-8-1 clause 8.1.3): each arm below repeats one of its
//! checks, and the property test in `data.rs` (`check_seq_fast_path_agrees`) holds the two
//! together.

use crate::data::{tag, MAX_DEPTH};
use crate::tlv_scan::{self, Scan};

/// Whether `bytes`, a `SEQUENCE OF Data` body, is well formed by the fast rules (see the
/// module documentation). `false` means "ask the general checker", not "malformed".
pub(crate) fn accepts(bytes: &[u8]) -> bool {
    count(bytes).is_some()
}

/// [`accepts`] with the number of values at the top level (a structure or array is one), which
/// IEC 61850-8-1 holds to numDatSetEntries: counted in the same pass, so the check costs no
/// second walk. `None` means "ask the general checker", as for [`accepts`].
pub(crate) fn count(bytes: &[u8]) -> Option<u32> {
    accepts_in(bytes, 0)
}

fn accepts_in(mut s: &[u8], depth: usize) -> Option<u32> {
    let mut n: u32 = 0;
    // One pass over the elements, the short length form (what every value of a publisher's
    // allData uses: contents under 128 octets) read in place; a long form goes through
    // `Scan`, which reads it as `ber::Reader` does.
    while let [t, l, rest @ ..] = s {
        let (v, next) = if *l < 0x80 {
            let len = *l as usize;
            if len > rest.len() {
                return None;
            }
            rest.split_at(len)
        } else {
            let mut sc = Scan::new(s);
            let (_, v) = sc.element()?;
            (v, sc.rest())
        };
        s = next;
        let ok = match *t {
            tag::ARRAY | tag::STRUCTURE => depth < MAX_DEPTH && accepts_in(v, depth + 1).is_some(),
            tag::BOOLEAN => v.len() == 1,
            tag::BIT_STRING | tag::BOOLEAN_ARRAY => match v {
                [unused, rest @ ..] => *unused <= 7 && (!rest.is_empty() || *unused == 0),
                [] => false,
            },
            tag::INTEGER => (1..=8).contains(&v.len()),
            tag::UNSIGNED => match v {
                [first, ..] => *first & 0x80 == 0 && (v.len() < 9 || (v.len() == 9 && *first == 0)),
                [] => false,
            },
            tag::FLOATING_POINT => matches!(v, [8, _, _, _, _] | [11, _, _, _, _, _, _, _, _]),
            tag::OCTET_STRING => true,
            tag::VISIBLE_STRING => tlv_scan::visible(v),
            tag::BINARY_TIME => v.len() == 4 || v.len() == 6,
            tag::UTC_TIME => v.len() == 8,
            _ => false,
        };
        if !ok {
            return None;
        }
        n = n.saturating_add(1);
    }
    // A single octet left is an element cut short.
    s.is_empty().then_some(n)
}
