//! ISO 8650-1 (ITU-T X.227) association control: AARQ, AARE, RLRQ, RLRE and ABRT APDUs,
//! with the fields IEC 61850-8-1 and libiec61850 use.
//!
//! * application-context-name is the MMS context 1.0.9506.2.3 (ISO 9506-2 Annex A).
//! * AP titles are form 2 (OBJECT IDENTIFIER), AE qualifiers form 2 (INTEGER).
//! * Authentication is the optional password mechanism 2.2.3.1 (ISO 8650-1 "password"):
//!   sender-acse-requirements `8A 02 04 80`, mechanism-name `8B 03 520301`,
//!   calling-authentication-value `AC { 80 len pwd }` (`docs/mms-bytes.md` §1). IEC 62351-4's
//!   certificate-based A-profile is not implemented (libiec61850 does not either).
//! * user-information is one EXTERNAL (`28 { 02 indirect-reference, A0 <MMS PDU> }`).

use gander_wire::ber::{self, Reader};
use gander_wire::Codec;

use crate::asn1::{self, Oid, Sink};
use crate::error::{Error, Layer, Result};

const L: Layer = Layer::Acse;
/// The largest password accepted (bounds memory; libiec61850 has a similar fixed buffer).
pub const MAX_PASSWORD_LEN: usize = 256;

/// The MMS application context `iso(1) standard(0) 9506 part(2) mms-annex-version1(3)`.
pub fn mms_application_context() -> Oid {
    Oid::from_arcs(&[1, 0, 9506, 2, 3])
}
/// The password authentication mechanism 2.2.3.1 (ISO 8650-1 "password").
pub fn password_mechanism() -> Oid {
    Oid::from_arcs(&[2, 2, 3, 1])
}

/// The EXTERNAL in user-information (X.690 8.18): the MMS PDU and its context id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct External {
    /// indirect-reference: the presentation context id of the embedded PDU (3 = MMS).
    pub indirect_reference: Option<i64>,
    /// The embedded PDU (single-ASN1-type contents: one whole TLV).
    pub data: Vec<u8>,
}

/// AARQ-apdu (ISO 8650-1 clause 9, `[APPLICATION 0]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aarq {
    /// application-context-name `A1`.
    pub application_context: Oid,
    /// called-AP-title `A2`.
    pub called_ap_title: Option<Oid>,
    /// called-AE-qualifier `A3`.
    pub called_ae_qualifier: Option<i64>,
    /// calling-AP-title `A6`.
    pub calling_ap_title: Option<Oid>,
    /// calling-AE-qualifier `A7`.
    pub calling_ae_qualifier: Option<i64>,
    /// Password (mechanism 2.2.3.1), sent with `8A`, `8B` and `AC`.
    pub password: Option<Vec<u8>>,
    /// user-information `BE`.
    pub user_information: Option<External>,
}

impl Aarq {
    /// The AARQ libiec61850's client sends around `initiate` (an encoded initiate-RequestPDU):
    /// called AP title 1.1.1.999.1, AE qualifier 12, calling AP title 1.1.1.999, qualifier 12.
    pub fn libiec61850(initiate: Vec<u8>) -> Self {
        Aarq {
            application_context: mms_application_context(),
            called_ap_title: Some(Oid::from_arcs(&[1, 1, 1, 999, 1])),
            called_ae_qualifier: Some(12),
            calling_ap_title: Some(Oid::from_arcs(&[1, 1, 1, 999])),
            calling_ae_qualifier: Some(12),
            password: None,
            user_information: Some(External {
                indirect_reference: Some(3),
                data: initiate,
            }),
        }
    }
}

/// Where a rejection comes from (ISO 8650-1 `Associate-source-diagnostic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Diagnostic {
    /// acse-service-user \[1\]: 0 null, 1 no-reason-given, 2 application-context-name-not-supported,
    /// ..., 13 authentication-mechanism-name-required, 14 authentication-failure, 15 authentication-required.
    User(u8),
    /// acse-service-provider \[2\]: 0 null, 1 no-reason-given, 2 no-common-acse-version.
    Provider(u8),
}

/// acse-service-user diagnostic: authentication failure (ISO 8650-1 clause 9).
pub const DIAG_AUTHENTICATION_FAILURE: u8 = 14;
/// acse-service-user diagnostic: no reason given.
pub const DIAG_NO_REASON: u8 = 1;

/// AARE result (ISO 8650-1 `Associate-result`).
pub mod result {
    /// accepted (0).
    pub const ACCEPTED: u8 = 0;
    /// rejected-permanent (1).
    pub const REJECTED_PERMANENT: u8 = 1;
    /// rejected-transient (2).
    pub const REJECTED_TRANSIENT: u8 = 2;
}

/// AARE-apdu (ISO 8650-1 clause 9, `[APPLICATION 1]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aare {
    /// application-context-name `A1`.
    pub application_context: Oid,
    /// result `A2`; `None` only when a peer omitted it (libiec61850 treats that as failure).
    pub result: Option<u8>,
    /// result-source-diagnostic `A3`.
    pub diagnostic: Option<Diagnostic>,
    /// responding-AP-title `A4`.
    pub responding_ap_title: Option<Oid>,
    /// responding-AE-qualifier `A5`.
    pub responding_ae_qualifier: Option<i64>,
    /// user-information `BE`.
    pub user_information: Option<External>,
}

impl Aare {
    /// An accepting AARE as libiec61850 sends it (diagnostic user/null).
    pub fn accept(initiate_response: Vec<u8>, indirect_reference: i64) -> Self {
        Aare {
            application_context: mms_application_context(),
            result: Some(result::ACCEPTED),
            diagnostic: Some(Diagnostic::User(0)),
            responding_ap_title: None,
            responding_ae_qualifier: None,
            user_information: Some(External {
                indirect_reference: Some(indirect_reference),
                data: initiate_response,
            }),
        }
    }

    /// A rejecting AARE.
    pub fn reject(diagnostic: Diagnostic) -> Self {
        Aare {
            application_context: mms_application_context(),
            result: Some(result::REJECTED_PERMANENT),
            diagnostic: Some(diagnostic),
            responding_ap_title: None,
            responding_ae_qualifier: None,
            user_information: None,
        }
    }
}

/// One ACSE APDU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Apdu {
    /// A-ASSOCIATE request.
    Aarq(Aarq),
    /// A-ASSOCIATE response.
    Aare(Aare),
    /// A-RELEASE request (`62`), reason 0 = normal.
    Rlrq {
        /// Release-request-reason `[0]`, if present (0 normal, 1 urgent, 30 user-defined).
        reason: Option<i64>,
    },
    /// A-RELEASE response (`63`).
    Rlre {
        /// Release-response-reason `[0]`, if present (0 normal, 1 not-finished, 30 user-defined).
        reason: Option<i64>,
    },
    /// A-ABORT (`64`): source 0 = acse-service-user, 1 = acse-service-provider.
    Abrt {
        /// abort-source `[0]`: 0 acse-service-user, 1 acse-service-provider.
        source: u8,
        /// abort-diagnostic `[1]`, if present.
        diagnostic: Option<i64>,
    },
}

fn int_field(v: &[u8], what: &'static str) -> Result<i64> {
    ber::decode_i64(v, what).map_err(Error::ber(L))
}

/// `[n] { 06 oid }` (AP-title form 2).
fn explicit_oid(v: &[u8], what: &'static str) -> Result<Oid> {
    let mut r = Reader::new(v);
    let t = r.read_expected(0x06, what).map_err(Error::ber(L))?;
    Oid::from_contents(t.value, L)
}

/// `[n] { 02 int }` (AE-qualifier form 2).
fn explicit_int(v: &[u8], what: &'static str) -> Result<i64> {
    let mut r = Reader::new(v);
    let t = r.read_expected(0x02, what).map_err(Error::ber(L))?;
    int_field(t.value, what)
}

fn parse_user_information(v: &[u8]) -> Result<Option<External>> {
    let mut r = Reader::new(v);
    // Association-information ::= SEQUENCE SIZE (1, ...) OF EXTERNAL; only the first is used.
    let Some(ext) = r.read_optional(0x28, "EXTERNAL").map_err(Error::ber(L))? else {
        return Err(Error::malformed(L, "user-information", "no EXTERNAL"));
    };
    let mut er = ext.reader();
    let mut indirect = None;
    let mut data = None;
    while !er.is_empty() {
        let t = er.read_tlv("EXTERNAL").map_err(Error::ber(L))?;
        match t.tag {
            0x06 => {} // direct-reference: transfer syntax, not needed.
            0x02 => indirect = Some(int_field(t.value, "indirect-reference")?),
            0xa0 | 0x81 => data = Some(t.value.to_vec()),
            _ => {}
        }
    }
    Ok(data.map(|data| External {
        indirect_reference: indirect,
        data,
    }))
}

fn emit_user_information(o: &mut dyn Sink, ext: &External) {
    asn1::nested(o, 0xbe, |o| {
        asn1::nested(o, 0x28, |o| {
            if let Some(i) = ext.indirect_reference {
                asn1::int(o, 0x02, i);
            }
            asn1::tlv(o, 0xa0, &ext.data);
        })
    });
}

impl Apdu {
    /// Parse one APDU (the contents of a presentation PDV in the ACSE context).
    pub fn parse(bytes: &[u8]) -> Result<Apdu> {
        let mut outer = Reader::new(bytes);
        let t = outer.read_tlv("ACSE APDU").map_err(Error::ber(L))?;
        outer.expect_end("ACSE APDU").map_err(Error::ber(L))?;
        let mut r = t.reader();
        match t.tag {
            0x60 => {
                let mut a = Aarq {
                    application_context: mms_application_context(),
                    called_ap_title: None,
                    called_ae_qualifier: None,
                    calling_ap_title: None,
                    calling_ae_qualifier: None,
                    password: None,
                    user_information: None,
                };
                let mut have_context = false;
                let mut mechanism = None;
                while !r.is_empty() {
                    let f = r.read_tlv("AARQ field").map_err(Error::ber(L))?;
                    match f.tag {
                        0xa1 => {
                            a.application_context =
                                explicit_oid(f.value, "application-context-name")?;
                            have_context = true;
                        }
                        0xa2 => a.called_ap_title = Some(explicit_oid(f.value, "called-AP-title")?),
                        0xa3 => {
                            a.called_ae_qualifier =
                                Some(explicit_int(f.value, "called-AE-qualifier")?)
                        }
                        0xa6 => {
                            a.calling_ap_title = Some(explicit_oid(f.value, "calling-AP-title")?)
                        }
                        0xa7 => {
                            a.calling_ae_qualifier =
                                Some(explicit_int(f.value, "calling-AE-qualifier")?)
                        }
                        0x8b => mechanism = Some(Oid::from_contents(f.value, L)?),
                        0xac => {
                            let mut ar = f.reader();
                            let v = ar.read_tlv("authentication-value").map_err(Error::ber(L))?;
                            if v.tag != 0x80 {
                                return Err(Error::malformed(
                                    L,
                                    "calling-authentication-value",
                                    "only the charstring (password) form is supported",
                                ));
                            }
                            if v.value.len() > MAX_PASSWORD_LEN {
                                return Err(Error::TooLarge {
                                    layer: L,
                                    what: "password",
                                    size: v.value.len(),
                                    max: MAX_PASSWORD_LEN,
                                });
                            }
                            a.password = Some(v.value.to_vec());
                        }
                        0xbe => a.user_information = parse_user_information(f.value)?,
                        // protocol-version, invocation ids, sender-acse-requirements,
                        // implementation-information: not needed.
                        _ => {}
                    }
                }
                if !have_context {
                    return Err(Error::malformed(L, "AARQ", "no application-context-name"));
                }
                if a.password.is_some() && mechanism.is_some_and(|m| m != password_mechanism()) {
                    return Err(Error::malformed(
                        L,
                        "AARQ",
                        "authentication mechanism is not password (2.2.3.1)",
                    ));
                }
                Ok(Apdu::Aarq(a))
            }
            0x61 => {
                let mut a = Aare {
                    application_context: mms_application_context(),
                    result: None,
                    diagnostic: None,
                    responding_ap_title: None,
                    responding_ae_qualifier: None,
                    user_information: None,
                };
                while !r.is_empty() {
                    let f = r.read_tlv("AARE field").map_err(Error::ber(L))?;
                    match f.tag {
                        0xa1 => {
                            a.application_context =
                                explicit_oid(f.value, "application-context-name")?
                        }
                        0xa2 => {
                            let v = explicit_int(f.value, "result")?;
                            a.result = Some(u8::try_from(v).map_err(|_| {
                                Error::malformed(L, "result", "value out of range")
                            })?);
                        }
                        0xa3 => {
                            let mut dr = f.reader();
                            let d = dr
                                .read_tlv("result-source-diagnostic")
                                .map_err(Error::ber(L))?;
                            let v = explicit_int(d.value, "diagnostic")?;
                            let v = u8::try_from(v).map_err(|_| {
                                Error::malformed(L, "diagnostic", "value out of range")
                            })?;
                            a.diagnostic = Some(match d.tag {
                                0xa1 => Diagnostic::User(v),
                                0xa2 => Diagnostic::Provider(v),
                                tag => {
                                    return Err(Error::UnknownCode {
                                        layer: L,
                                        what: "result-source-diagnostic",
                                        code: tag,
                                    })
                                }
                            });
                        }
                        0xa4 => {
                            a.responding_ap_title =
                                Some(explicit_oid(f.value, "responding-AP-title")?)
                        }
                        0xa5 => {
                            a.responding_ae_qualifier =
                                Some(explicit_int(f.value, "responding-AE-qualifier")?)
                        }
                        0xbe => a.user_information = parse_user_information(f.value)?,
                        _ => {}
                    }
                }
                Ok(Apdu::Aare(a))
            }
            0x62 | 0x63 => {
                let mut reason = None;
                while !r.is_empty() {
                    let f = r.read_tlv("release field").map_err(Error::ber(L))?;
                    if f.tag == 0x80 {
                        reason = Some(int_field(f.value, "release reason")?);
                    }
                }
                Ok(if t.tag == 0x62 {
                    Apdu::Rlrq { reason }
                } else {
                    Apdu::Rlre { reason }
                })
            }
            0x64 => {
                let mut source = None;
                let mut diagnostic = None;
                while !r.is_empty() {
                    let f = r.read_tlv("ABRT field").map_err(Error::ber(L))?;
                    match f.tag {
                        0x80 => source = Some(int_field(f.value, "abort-source")?),
                        0x81 => diagnostic = Some(int_field(f.value, "abort-diagnostic")?),
                        _ => {}
                    }
                }
                let source = match source {
                    Some(s @ 0..=1) => s as u8,
                    Some(_) => {
                        return Err(Error::malformed(
                            L,
                            "abort-source",
                            "neither user nor provider",
                        ))
                    }
                    None => return Err(Error::malformed(L, "ABRT", "no abort-source")),
                };
                Ok(Apdu::Abrt { source, diagnostic })
            }
            tag => Err(Error::UnknownCode {
                layer: L,
                what: "APDU",
                code: tag,
            }),
        }
    }
}

impl Codec for Apdu {
    sink_codec!();
}

impl Apdu {
    /// Write the encoding to `out`.
    fn encode(&self, out: &mut dyn Sink) {
        match self {
            Apdu::Aarq(a) => asn1::nested(out, 0x60, |o| {
                asn1::nested(o, 0xa1, |o| a.application_context.emit(o));
                if let Some(t) = &a.called_ap_title {
                    asn1::nested(o, 0xa2, |o| t.emit(o));
                }
                if let Some(q) = a.called_ae_qualifier {
                    asn1::nested(o, 0xa3, |o| asn1::int(o, 0x02, q));
                }
                if let Some(t) = &a.calling_ap_title {
                    asn1::nested(o, 0xa6, |o| t.emit(o));
                }
                if let Some(q) = a.calling_ae_qualifier {
                    asn1::nested(o, 0xa7, |o| asn1::int(o, 0x02, q));
                }
                if let Some(p) = &a.password {
                    // sender-acse-requirements: authentication (bit 0).
                    asn1::tlv(o, 0x8a, &[0x04, 0x80]);
                    asn1::tlv(o, 0x8b, password_mechanism().contents());
                    asn1::nested(o, 0xac, |o| asn1::tlv(o, 0x80, p));
                }
                if let Some(u) = &a.user_information {
                    emit_user_information(o, u);
                }
            }),
            Apdu::Aare(a) => asn1::nested(out, 0x61, |o| {
                asn1::nested(o, 0xa1, |o| a.application_context.emit(o));
                if let Some(r) = a.result {
                    asn1::nested(o, 0xa2, |o| asn1::int(o, 0x02, r as i64));
                }
                if let Some(d) = a.diagnostic {
                    let (tag, v) = match d {
                        Diagnostic::User(v) => (0xa1, v),
                        Diagnostic::Provider(v) => (0xa2, v),
                    };
                    asn1::nested(o, 0xa3, |o| {
                        asn1::nested(o, tag, |o| asn1::int(o, 0x02, v as i64))
                    });
                }
                if let Some(t) = &a.responding_ap_title {
                    asn1::nested(o, 0xa4, |o| t.emit(o));
                }
                if let Some(q) = a.responding_ae_qualifier {
                    asn1::nested(o, 0xa5, |o| asn1::int(o, 0x02, q));
                }
                if let Some(u) = &a.user_information {
                    emit_user_information(o, u);
                }
            }),
            Apdu::Rlrq { reason } | Apdu::Rlre { reason } => {
                let tag = if matches!(self, Apdu::Rlrq { .. }) {
                    0x62
                } else {
                    0x63
                };
                asn1::nested(out, tag, |o| {
                    if let Some(r) = reason {
                        asn1::int(o, 0x80, *r);
                    }
                })
            }
            Apdu::Abrt { source, diagnostic } => asn1::nested(out, 0x64, |o| {
                asn1::int(o, 0x80, *source as i64);
                if let Some(d) = diagnostic {
                    asn1::int(o, 0x81, *d);
                }
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    #[test]
    fn golden_aarq() {
        // `docs/mms-bytes.md` §1 AARQ [V], with a two-byte stand-in for the initiate-Request.
        let a = Apdu::Aarq(Aarq::libiec61850(h("A800")));
        let expect = h(
            "60 2F A1 07 06 05 28CA220203 A2 07 06 05 2901876701 A3 03 02 01 0C \
             A6 06 06 04 29018767 A7 03 02 01 0C BE 09 28 07 02 01 03 A0 02 A800",
        );
        assert_eq!(a.to_vec(), expect);
        assert_eq!(a.buffer_len(), expect.len());
        let mut buf = vec![0; expect.len()];
        assert_eq!(a.emit(&mut buf), expect.len());
        assert_eq!(buf, expect);
        assert_eq!(Apdu::parse(&expect).unwrap(), a);
    }

    #[test]
    fn golden_password() {
        let mut aarq = Aarq::libiec61850(h("A800"));
        aarq.password = Some(b"secret".to_vec());
        let bytes = Apdu::Aarq(aarq.clone()).to_vec();
        let hexs = hex::encode(&bytes);
        assert!(hexs.contains("8a020480"));
        assert!(hexs.contains("8b03520301"));
        assert!(hexs.contains(&format!("ac08 8006{}", hex::encode("secret")).replace(' ', "")));
        assert_eq!(Apdu::parse(&bytes).unwrap(), Apdu::Aarq(aarq));
    }

    #[test]
    fn golden_aare_release_abort() {
        // AARE [V]: 61 { A1 ...28CA220203 ; A2 {02 01 00} ; A3 {A1 {02 01 00}} ; BE {28 {02 01 03, A0 ...}} }
        let a = Apdu::Aare(Aare::accept(h("A900"), 3));
        let expect = h(
            "61 20 A1 07 06 05 28CA220203 A2 03 02 01 00 A3 05 A1 03 02 01 00 \
             BE 09 28 07 02 01 03 A0 02 A900",
        );
        assert_eq!(a.to_vec(), expect);
        assert_eq!(Apdu::parse(&expect).unwrap(), a);
        assert_eq!(Apdu::Rlrq { reason: Some(0) }.to_vec(), h("62 03 80 01 00"));
        assert_eq!(Apdu::Rlre { reason: None }.to_vec(), h("63 00"));
        assert_eq!(
            Apdu::Abrt {
                source: 1,
                diagnostic: None
            }
            .to_vec(),
            h("64 03 80 01 01")
        );
        assert_eq!(
            Apdu::parse(&h("64 03 80 01 00")).unwrap(),
            Apdu::Abrt {
                source: 0,
                diagnostic: None
            }
        );
    }

    #[test]
    fn errors() {
        for (b, why) in [
            ("60 00", "AARQ without context"),
            ("64 00", "ABRT without source"),
            ("64 03 80 01 05", "bad source"),
            ("65 00", "unknown APDU"),
            ("60 05 A1 03 06 01 81", "unterminated OID"),
            ("61 05 A3 03 A3 01 00", "bad diagnostic"),
            ("60 04 BE 02 30 00", "no EXTERNAL"),
            ("62 03 80 01", "truncated"),
            ("", "empty"),
        ] {
            assert!(Apdu::parse(&h(b)).is_err(), "{why}");
        }
    }

    proptest! {
        #[test]
        fn round_trip(q in proptest::option::of(any::<i64>()), pwd in proptest::option::of(
                proptest::collection::vec(any::<u8>(), 0..40)), data in proptest::collection::vec(any::<u8>(), 0..60),
                result in 0u8..3, diag in 0u8..16, user in any::<bool>(), arc in 0u64..100_000) {
            let mut a = Aarq::libiec61850(data.clone());
            a.called_ae_qualifier = q;
            a.password = pwd;
            a.calling_ap_title = Some(Oid::from_arcs(&[1, 3, arc]));
            let a = Apdu::Aarq(a);
            // The one encoder agrees with itself on the Vec, Counter and Slice sinks.
            prop_assert!(gander_wire::ber_sink::check_codec_agrees(&a, |o| a.encode(o)).is_ok());
            prop_assert_eq!(Apdu::parse(&a.to_vec()).unwrap(), a);
            let mut e = Aare::accept(data, 3);
            e.result = Some(result);
            e.diagnostic = Some(if user { Diagnostic::User(diag) } else { Diagnostic::Provider(diag) });
            e.responding_ae_qualifier = q;
            let e = Apdu::Aare(e);
            prop_assert!(gander_wire::ber_sink::check_codec_agrees(&e, |o| e.encode(o)).is_ok());
            prop_assert_eq!(Apdu::parse(&e.to_vec()).unwrap(), e);
            for x in [Apdu::Rlrq { reason: q }, Apdu::Rlre { reason: q },
                      Apdu::Abrt { source: result % 2, diagnostic: q }] {
                prop_assert!(gander_wire::ber_sink::check_codec_agrees(&x, |o| x.encode(o)).is_ok());
                prop_assert_eq!(Apdu::parse(&x.to_vec()).unwrap(), x);
            }
        }

        #[test]
        fn no_panic(data in proptest::collection::vec(any::<u8>(), 0..128)) {
            if let Ok(a) = Apdu::parse(&data) { let _ = a.to_vec(); }
        }
    }
}
