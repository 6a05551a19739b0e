//! The service element of a confirmed or unconfirmed PDU, whose tag can need more than one
//! identifier octet.
//!
//! ISO 9506-2 numbers the `ConfirmedServiceRequest` alternatives from status \[0\] to
//! fileDirectory \[77\] (Wireshark's `mms.asn` lists them all). Tag numbers from 31 up use
//! X.690 8.1.2.4's high-tag-number form: a first octet with the five low bits set, then the
//! number in base 128. So fileOpen \[72\] (a SEQUENCE) is `BF 48`, fileRead \[73\] (an
//! Integer32) `9F 49`, readJournal \[65\] `BF 41`, fileDirectory \[77\] `BF 4D`. gander's
//! BER reader takes one-octet tags only (no IEC 61850 grammar needs more), so a FileDirectory
//! request used to fail to parse and its server aborted the association; here the service
//! element is read with any tag number, so that a service gander does not implement decodes
//! to `Other` and can be refused with a Reject while the association lives on.

use gander_wire::ber::{self, Reader};

use super::L;
use crate::asn1::Sink;
use crate::error::{Error, Result};

/// Class bits of a context-specific tag (X.690 8.1.2.2, Table 1).
const CONTEXT: u8 = 0x80;
/// The constructed bit (X.690 8.1.2.5).
const CONSTRUCTED: u8 = 0x20;
/// Low five bits all ones: the number follows in base 128 (X.690 8.1.2.4).
const HIGH_TAG_FORM: u8 = 0x1f;
/// The most octets of a high tag number: 4 × 7 bits covers every number up to 2^28, and
/// ISO 9506-2 stops at \[79\].
const MAX_TAG_NUMBER_OCTETS: usize = 4;

/// A context-specific tag of a service element: its number and whether it is constructed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ServiceTag {
    /// The tag number (`[72]` for fileOpen).
    pub number: u32,
    /// Whether the encoding is constructed (a SEQUENCE or CHOICE) or primitive (NULL,
    /// INTEGER, Identifier).
    pub constructed: bool,
}

impl ServiceTag {
    /// A context-specific tag.
    pub const fn new(number: u32, constructed: bool) -> Self {
        ServiceTag {
            number,
            constructed,
        }
    }

    /// The tag of a one-octet identifier (`0xA4` is read \[4\], constructed).
    pub const fn from_octet(octet: u8) -> Self {
        ServiceTag {
            number: (octet & HIGH_TAG_FORM) as u32,
            constructed: octet & CONSTRUCTED != 0,
        }
    }

    /// The identifier octets (X.690 8.1.2): one octet below 31, else the high-tag-number form.
    pub fn identifier(self) -> Vec<u8> {
        let first = CONTEXT | if self.constructed { CONSTRUCTED } else { 0 };
        if self.number < HIGH_TAG_FORM as u32 {
            return vec![first | self.number as u8];
        }
        let mut groups = vec![(self.number & 0x7f) as u8];
        let mut n = self.number >> 7;
        while n != 0 {
            groups.push((n & 0x7f) as u8 | 0x80);
            n >>= 7;
        }
        groups.push(first | HIGH_TAG_FORM);
        groups.reverse();
        groups
    }

    /// ISO 9506-2's name of the confirmed service with this tag number
    /// (`ConfirmedServiceRequest`), e.g. "fileDirectory" for 77.
    pub fn confirmed_service_name(self) -> Option<&'static str> {
        CONFIRMED_SERVICES.get(self.number as usize).copied()
    }
}

impl core::fmt::Display for ServiceTag {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.confirmed_service_name() {
            Some(n) => write!(f, "{n} [{}]", self.number),
            None => write!(f, "[{}]", self.number),
        }
    }
}

/// ISO 9506-2 `ConfirmedServiceRequest`, by tag number (Wireshark's `mms.asn`).
pub const CONFIRMED_SERVICES: [&str; 78] = [
    "status",
    "getNameList",
    "identify",
    "rename",
    "read",
    "write",
    "getVariableAccessAttributes",
    "defineNamedVariable",
    "defineScatteredAccess",
    "getScatteredAccessAttributes",
    "deleteVariableAccess",
    "defineNamedVariableList",
    "getNamedVariableListAttributes",
    "deleteNamedVariableList",
    "defineNamedType",
    "getNamedTypeAttributes",
    "deleteNamedType",
    "input",
    "output",
    "takeControl",
    "relinquishControl",
    "defineSemaphore",
    "deleteSemaphore",
    "reportSemaphoreStatus",
    "reportPoolSemaphoreStatus",
    "reportSemaphoreEntryStatus",
    "initiateDownloadSequence",
    "downloadSegment",
    "terminateDownloadSequence",
    "initiateUploadSequence",
    "uploadSegment",
    "terminateUploadSequence",
    "requestDomainDownload",
    "requestDomainUpload",
    "loadDomainContent",
    "storeDomainContent",
    "deleteDomain",
    "getDomainAttributes",
    "createProgramInvocation",
    "deleteProgramInvocation",
    "start",
    "stop",
    "resume",
    "reset",
    "kill",
    "getProgramInvocationAttributes",
    "obtainFile",
    "defineEventCondition",
    "deleteEventCondition",
    "getEventConditionAttributes",
    "reportEventConditionStatus",
    "alterEventConditionMonitoring",
    "triggerEvent",
    "defineEventAction",
    "deleteEventAction",
    "getEventActionAttributes",
    "reportEventActionStatus",
    "defineEventEnrollment",
    "deleteEventEnrollment",
    "alterEventEnrollment",
    "reportEventEnrollmentStatus",
    "getEventEnrollmentAttributes",
    "acknowledgeEventNotification",
    "getAlarmSummary",
    "getAlarmEnrollmentSummary",
    "readJournal",
    "writeJournal",
    "initializeJournal",
    "reportJournalStatus",
    "createJournal",
    "deleteJournal",
    "getCapabilityList",
    "fileOpen",
    "fileRead",
    "fileClose",
    "fileRename",
    "fileDelete",
    "fileDirectory",
];

/// The tag of `cs-request-detail [79]`, which may follow the service in a confirmed-Request,
/// confirmed-Response or unconfirmed PDU (ISO 9506-2 7.1; companion standards only, none for
/// IEC 61850).
pub const CS_REQUEST_DETAIL: u32 = 79;

/// One service element, borrowed from the PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Element<'a> {
    /// The first identifier octet: the whole tag when the number is below 31, so callers
    /// match it against `service_tag::*` as before.
    pub tag: u8,
    /// The tag, whatever its length.
    pub service: ServiceTag,
    /// The contents octets.
    pub value: &'a [u8],
}

/// Read one context-specific element with a tag of any length and a definite length of at
/// most four octets (the limits of gander's BER reader).
pub(crate) fn read<'a>(r: &mut Reader<'a>, what: &'static str) -> Result<Element<'a>> {
    let berr = |source| Error::Ber { layer: L, source };
    let rest = r.rest();
    let Some(&first) = rest.first() else {
        return Err(berr(gander_wire::Error::Truncated {
            what,
            need: 1,
            have: 0,
        }));
    };
    if first & 0xc0 != CONTEXT {
        return Err(Error::UnknownCode {
            layer: L,
            what,
            code: first,
        });
    }
    if first & HIGH_TAG_FORM != HIGH_TAG_FORM {
        // One identifier octet: the ordinary reader does the rest.
        let t = r.read_tlv(what).map_err(berr)?;
        return Ok(Element {
            tag: t.tag,
            service: ServiceTag::from_octet(t.tag),
            value: t.value,
        });
    }
    // X.690 8.1.2.4.2: base-128 groups, bit 8 set on all but the last, the first not 0x80.
    let mut number: u32 = 0;
    let mut at = 1;
    loop {
        let b = *rest.get(at).ok_or(berr(gander_wire::Error::Truncated {
            what,
            need: at + 1,
            have: rest.len(),
        }))?;
        if at == 1 && b == 0x80 {
            return Err(Error::malformed(
                L,
                what,
                "tag number not in its fewest octets",
            ));
        }
        if at > MAX_TAG_NUMBER_OCTETS {
            return Err(Error::malformed(L, what, "tag number too large"));
        }
        number = (number << 7) | (b & 0x7f) as u32;
        at += 1;
        if b & 0x80 == 0 {
            break;
        }
    }
    if number < HIGH_TAG_FORM as u32 {
        return Err(Error::malformed(
            L,
            what,
            "high-tag-number form for a number below 31",
        ));
    }
    // The length octets (X.690 8.1.3), with the ordinary reader's limits: definite form,
    // at most four octets.
    let (len, len_octets) = length(&rest[at..], what).map_err(berr)?;
    let whole = r.take(at + len_octets + len, what).map_err(berr)?;
    Ok(Element {
        tag: first,
        service: ServiceTag::new(number, first & CONSTRUCTED != 0),
        value: &whole[at + len_octets..],
    })
}

/// The definite length at the start of `b` and how many octets it took.
fn length(b: &[u8], what: &'static str) -> gander_wire::Result<(usize, usize)> {
    let first = *b.first().ok_or(gander_wire::Error::Truncated {
        what,
        need: 1,
        have: 0,
    })?;
    if first < 0x80 {
        return Ok((first as usize, 1));
    }
    let n = (first & 0x7f) as usize;
    if n == 0 {
        return Err(gander_wire::Error::IndefiniteLength { what });
    }
    if n > ber::MAX_LENGTH_OCTETS {
        return Err(gander_wire::Error::LengthTooLong { what, octets: n });
    }
    let octets = b.get(1..=n).ok_or(gander_wire::Error::Truncated {
        what,
        need: n,
        have: b.len() - 1,
    })?;
    let len = octets
        .iter()
        .fold(0usize, |acc, &o| (acc << 8) | o as usize);
    Ok((len, 1 + n))
}

/// Write a service element with any tag number.
pub(crate) fn write(out: &mut dyn Sink, tag: ServiceTag, body: &[u8]) {
    out.bytes(&tag.identifier());
    gander_wire::ber_sink::length(out, body.len());
    out.bytes(body);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn identifiers_of_the_file_and_journal_services() {
        for (n, constructed, octets) in [
            (72u32, true, vec![0xbf, 0x48]),
            (73, false, vec![0x9f, 0x49]),
            (77, true, vec![0xbf, 0x4d]),
            (65, true, vec![0xbf, 0x41]),
            (31, false, vec![0x9f, 0x1f]),
            (200, true, vec![0xbf, 0x81, 0x48]),
            (4, true, vec![0xa4]),
            (2, false, vec![0x82]),
        ] {
            let t = ServiceTag::new(n, constructed);
            assert_eq!(t.identifier(), octets, "[{n}]");
            let mut b = octets.clone();
            b.extend([0x01, 0x00, 0xee]);
            let mut r = Reader::new(&b);
            let e = read(&mut r, "service").unwrap();
            assert_eq!(e.service, t);
            assert_eq!(e.value, [0x00]);
            assert_eq!(r.rest(), [0xee]);
        }
        assert_eq!(ServiceTag::new(77, true).to_string(), "fileDirectory [77]");
        assert_eq!(ServiceTag::new(78, true).to_string(), "[78]");
    }

    #[test]
    fn malformed_identifiers_are_errors() {
        for h in [
            "bf",              // number missing
            "bf80 4800",       // leading 0x80 group
            "bf1e00",          // high form for a number below 31
            "bf8181818148 00", // more than four groups
            "bf48",            // no length
            "bf4805 00",       // truncated contents
            "bf4880",          // indefinite length
            "0200",            // universal class
        ] {
            let b = hex::decode(h.replace(' ', "")).unwrap();
            assert!(read(&mut Reader::new(&b), "service").is_err(), "{h}");
        }
    }

    proptest! {
        #[test]
        fn read_write_round_trip(
            number in 0u32..(1 << 28),
            constructed: bool,
            body in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let t = ServiceTag::new(number, constructed);
            let mut v = Vec::new();
            write(&mut v, t, &body);
            let mut r = Reader::new(&v);
            let e = read(&mut r, "service").unwrap();
            prop_assert_eq!(e.service, t);
            prop_assert_eq!(e.value, &body[..]);
            prop_assert!(r.is_empty());
        }

        #[test]
        fn no_panic(bytes in proptest::collection::vec(any::<u8>(), 0..16)) {
            let mut r = Reader::new(&bytes);
            if let Ok(e) = read(&mut r, "service") {
                let mut v = Vec::new();
                write(&mut v, e.service, e.value);
                let again = read(&mut Reader::new(&v), "service").unwrap();
                prop_assert_eq!(again, e);
            }
        }
    }
}
