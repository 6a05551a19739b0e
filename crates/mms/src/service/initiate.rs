//! Initiate-RequestPDU and Initiate-ResponsePDU (ISO 9506-2 8.2), which share a layout:
//! `{ 80 localDetail, 81 maxServOutstandingCalling, 82 maxServOutstandingCalled,
//! 83 dataStructureNestingLevel, A4 { 80 version, 81 parameterCBB, 82 servicesSupported } }`.

use crate::asn1::Sink;
use gander_wire::ber::{self, Reader};

use super::{ber as berr, L};
use crate::asn1;
use crate::bit_string::BitString;
use crate::error::{Error, Result};

/// The parameter CBB libiec61850 proposes: str1, str2, vnam, vlis, valt (`05 F100`, 11 bits).
pub fn libiec61850_parameter_cbb() -> BitString {
    BitString::from_contents(&[0x05, 0xf1, 0x00]).expect("constant")
}
/// servicesSupportedCalling of the libiec61850 client (`03 EE1C00000408000079EF18`, 85 bits).
pub fn libiec61850_client_services() -> BitString {
    BitString::from_contents(&[
        0x03, 0xee, 0x1c, 0x00, 0x00, 0x04, 0x08, 0x00, 0x00, 0x79, 0xef, 0x18,
    ])
    .expect("constant")
}
/// servicesSupportedCalled of a libiec61850 server as captured (`03 EE1C00000002000040ED18`).
pub fn libiec61850_server_services() -> BitString {
    BitString::from_contents(&[
        0x03, 0xee, 0x1c, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x40, 0xed, 0x18,
    ])
    .expect("constant")
}

/// ISO 9506-2 `ServiceSupportOptions` bit numbers (the confirmed service's tag number, then
/// 79 informationReport, 83 conclude, 84 cancel) of what gander's server answers.
pub mod service_bit {
    /// status \[0\].
    pub const STATUS: usize = 0;
    /// getNameList \[1\].
    pub const GET_NAME_LIST: usize = 1;
    /// identify \[2\].
    pub const IDENTIFY: usize = 2;
    /// read \[4\].
    pub const READ: usize = 4;
    /// write \[5\].
    pub const WRITE: usize = 5;
    /// getVariableAccessAttributes \[6\].
    pub const GET_VARIABLE_ACCESS_ATTRIBUTES: usize = 6;
    /// defineNamedVariableList \[11\].
    pub const DEFINE_NAMED_VARIABLE_LIST: usize = 11;
    /// getNamedVariableListAttributes \[12\].
    pub const GET_NAMED_VARIABLE_LIST_ATTRIBUTES: usize = 12;
    /// deleteNamedVariableList \[13\].
    pub const DELETE_NAMED_VARIABLE_LIST: usize = 13;
    /// obtainFile \[46\].
    pub const OBTAIN_FILE: usize = 46;
    /// readJournal \[65\].
    pub const READ_JOURNAL: usize = 65;
    /// fileOpen \[72\] .. fileDirectory \[77\].
    pub const FILE_SERVICES: core::ops::RangeInclusive<usize> = 72..=77;
    /// informationReport (unconfirmed).
    pub const INFORMATION_REPORT: usize = 79;
    /// conclude.
    pub const CONCLUDE: usize = 83;
    /// cancel.
    pub const CANCEL: usize = 84;
    /// Every bit gander's server sets: the services its association answers with a response
    /// or a confirmed-Error (never a Reject) when the handler is a model
    /// (`ServerModel`, `ImpModel`).
    pub const SERVER: [usize; 12] = [
        STATUS,
        GET_NAME_LIST,
        IDENTIFY,
        READ,
        WRITE,
        GET_VARIABLE_ACCESS_ATTRIBUTES,
        DEFINE_NAMED_VARIABLE_LIST,
        GET_NAMED_VARIABLE_LIST_ATTRIBUTES,
        DELETE_NAMED_VARIABLE_LIST,
        INFORMATION_REPORT,
        CONCLUDE,
        CANCEL,
    ];
}

/// servicesSupportedCalled of gander's server: exactly [`service_bit::SERVER`], 85 bits as
/// libiec61850 sends them. A client reads this to learn what it may ask (ISO 9506-2 8.2.1.2.3),
/// so a bit must not be set for a service the server then rejects: libiec61850's own
/// server, built with file services and journals, sets status, obtainFile, readJournal and
/// the file services as well (`libiec61850_server_services`); gander answers neither files
/// nor journals, and used to copy those bits and then reject the requests as
/// unrecognized-service.
pub fn gander_server_services() -> BitString {
    let mut b = BitString::new(85);
    for i in service_bit::SERVER {
        b.set(i, true);
    }
    b
}

/// One initiate request or response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Initiate {
    /// localDetailCalling/Called: the largest MMS PDU the sender accepts.
    pub local_detail: Option<u32>,
    /// proposed/negotiated MaxServOutstandingCalling.
    pub max_serv_outstanding_calling: u16,
    /// proposed/negotiated MaxServOutstandingCalled.
    pub max_serv_outstanding_called: u16,
    /// proposed/negotiated DataStructureNestingLevel.
    pub nesting_level: Option<u8>,
    /// proposed/negotiated VersionNumber (1 for ISO 9506:2003).
    pub version: u16,
    /// proposed/negotiated ParameterCBB.
    pub parameter_cbb: BitString,
    /// servicesSupportedCalling/Called.
    pub services_supported: BitString,
}

impl Initiate {
    /// The request libiec61850's client sends (`docs/mms-bytes.md` §1 \[V\]).
    pub fn libiec61850_request() -> Self {
        Initiate {
            local_detail: Some(65000),
            max_serv_outstanding_calling: 5,
            max_serv_outstanding_called: 5,
            nesting_level: Some(10),
            version: 1,
            parameter_cbb: libiec61850_parameter_cbb(),
            services_supported: libiec61850_client_services(),
        }
    }

    /// The response a libiec61850-like server gives to `req`: values clamped to the
    /// server's limits, CBB = request AND the server's CBB, server's service bits.
    pub fn respond(req: &Initiate, limits: &Initiate) -> Initiate {
        let clamp = |a: Option<u32>, b: Option<u32>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Initiate {
            local_detail: clamp(req.local_detail, limits.local_detail),
            max_serv_outstanding_calling: req
                .max_serv_outstanding_calling
                .clamp(1, limits.max_serv_outstanding_calling.max(1)),
            max_serv_outstanding_called: req
                .max_serv_outstanding_called
                .clamp(1, limits.max_serv_outstanding_called.max(1)),
            nesting_level: match (req.nesting_level, limits.nesting_level) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => b.or(a),
            },
            version: limits.version.min(req.version.max(1)),
            parameter_cbb: limits.parameter_cbb.and(&req.parameter_cbb),
            services_supported: limits.services_supported.clone(),
        }
    }

    /// Decode the contents of an initiate request/response. Missing fields get ISO 9506
    /// defaults (libiec61850 behaves the same); unknown tags are ignored.
    pub fn decode_contents(v: &[u8]) -> Result<Self> {
        let mut i = Initiate {
            local_detail: None,
            max_serv_outstanding_calling: 1,
            max_serv_outstanding_called: 1,
            nesting_level: None,
            version: 1,
            parameter_cbb: BitString::new(0),
            services_supported: BitString::new(0),
        };
        let small = |v: &[u8], what: &'static str| -> Result<u16> {
            let n = ber::decode_i64(v, what).map_err(berr)?;
            u16::try_from(n).map_err(|_| Error::malformed(L, what, "value out of range"))
        };
        let mut r = Reader::new(v);
        while !r.is_empty() {
            let t = r.read_tlv("initiate field").map_err(berr)?;
            match t.tag {
                0x80 => {
                    let n = ber::decode_i64(t.value, "localDetail").map_err(berr)?;
                    i.local_detail =
                        Some(u32::try_from(n).map_err(|_| {
                            Error::malformed(L, "localDetail", "value out of range")
                        })?);
                }
                0x81 => {
                    i.max_serv_outstanding_calling = small(t.value, "maxServOutstandingCalling")?
                }
                0x82 => i.max_serv_outstanding_called = small(t.value, "maxServOutstandingCalled")?,
                0x83 => {
                    let n = small(t.value, "dataStructureNestingLevel")?;
                    i.nesting_level = Some(n.min(255) as u8);
                }
                0xa4 => {
                    let mut dr = t.reader();
                    while !dr.is_empty() {
                        let d = dr.read_tlv("initiate detail").map_err(berr)?;
                        match d.tag {
                            0x80 => i.version = small(d.value, "versionNumber")?,
                            0x81 | 0x82 => {
                                let b = BitString::from_contents(d.value).ok_or(
                                    Error::malformed(L, "initiate detail", "bad bit string"),
                                )?;
                                if d.tag == 0x81 {
                                    i.parameter_cbb = b;
                                } else {
                                    i.services_supported = b;
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(i)
    }

    /// Append the contents.
    pub fn encode_contents(&self, out: &mut dyn Sink) {
        if let Some(d) = self.local_detail {
            asn1::int(out, 0x80, d as i64);
        }
        asn1::int(out, 0x81, self.max_serv_outstanding_calling as i64);
        asn1::int(out, 0x82, self.max_serv_outstanding_called as i64);
        if let Some(n) = self.nesting_level {
            asn1::int(out, 0x83, n as i64);
        }
        asn1::nested(out, 0xa4, |o| {
            asn1::int(o, 0x80, self.version as i64);
            asn1::tlv(o, 0x81, &self.parameter_cbb.contents());
            asn1::tlv(o, 0x82, &self.services_supported.contents());
        });
    }
}
