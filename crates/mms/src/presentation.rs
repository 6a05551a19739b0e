//! ISO 8823-1 (ITU-T X.226) presentation protocol, kernel functional unit, normal mode, with
//! the BER transfer syntax only — the subset IEC 61850-8-1 needs and libiec61850 speaks.
//!
//! * CP-type (8823-1 8.2, `31 {A0 mode-selector, A2 normal-mode-parameters}`) opens the
//!   connection with two presentation contexts: ACSE (id 1, abstract syntax 2.2.1.0.1) and
//!   MMS (id 3, 1.0.9506.2.1), both with transfer syntax BER 2.1.1.
//! * CPA-PPDU (8.3) accepts, CPR-PPDU (8.4) refuses, ARU/ARP-PPDU (8.6/8.7) abort.
//! * Data travels as fully-encoded-data (`61 {30 {02 ctx, A0 <PDU>}}`, 8823-1 8.4.2 `User-data`).
//!
//! Context identifiers are chosen by the initiator; the responder must use the client's
//! (libiec61850 does). Presentation selectors are carried but not checked, as libiec61850.

use gander_wire::ber::{self, Reader};
use gander_wire::Codec;

use crate::asn1::{self, Oid, Sink};
use crate::error::{Error, Layer, Result};

const L: Layer = Layer::Presentation;

/// Default presentation-context-identifier for ACSE (libiec61850's choice).
pub const ACSE_CONTEXT_ID: u64 = 1;
/// Default presentation-context-identifier for MMS (libiec61850's choice).
pub const MMS_CONTEXT_ID: u64 = 3;
/// Most presentation contexts accepted in one CP (bounds work on hostile input).
pub const MAX_CONTEXTS: usize = 16;
/// Most PDVs in one user-data field.
pub const MAX_PDVS: usize = 8;

/// Abstract syntax of ACSE: `joint-iso-itu-t(2) association-control(2) abstract-syntax(1) apdus(0) version1(1)`.
pub fn acse_abstract_syntax() -> Oid {
    Oid::from_arcs(&[2, 2, 1, 0, 1])
}
/// Abstract syntax of MMS: `iso(1) standard(0) 9506 part(2) mms-abstract-syntax-version1(1)`.
pub fn mms_abstract_syntax() -> Oid {
    Oid::from_arcs(&[1, 0, 9506, 2, 1])
}
/// The BER transfer syntax `joint-iso-itu-t(2) asn1(1) basic-encoding(1)`.
pub fn ber_transfer_syntax() -> Oid {
    Oid::from_arcs(&[2, 1, 1])
}

/// One entry of the presentation-context-definition-list (8823-1 8.2, `Context-list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextDefinition {
    /// presentation-context-identifier (odd for the initiator, 8823-1 6.2.2.4).
    pub id: u64,
    /// abstract-syntax-name.
    pub abstract_syntax: Oid,
    /// transfer-syntax-name-list.
    pub transfer_syntaxes: Vec<Oid>,
}

/// One PDV-list of fully-encoded-data (8823-1 8.4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdv {
    /// transfer-syntax-name, if present (must be BER here).
    pub transfer_syntax: Option<Oid>,
    /// presentation-context-identifier.
    pub context_id: u64,
    /// The embedded PDU: the whole TLV of the single-ASN1-type, or the octets of an
    /// octet-aligned value.
    pub data: Vec<u8>,
}

impl Pdv {
    /// A single-ASN1-type PDV for `context_id`.
    pub fn new(context_id: u64, data: Vec<u8>) -> Self {
        Pdv {
            transfer_syntax: None,
            context_id,
            data,
        }
    }
}

/// Result of one proposed context (8823-1 8.3, `Result-list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextResult {
    /// 0 acceptance, 1 user-rejection, 2 provider-rejection.
    pub result: u8,
    /// The transfer syntax chosen for an accepted context.
    pub transfer_syntax: Option<Oid>,
    /// provider-reason for a provider-rejection.
    pub provider_reason: Option<u8>,
}

impl ContextResult {
    /// Acceptance with the BER transfer syntax, as libiec61850 sends it.
    pub fn accept_ber() -> Self {
        ContextResult {
            result: 0,
            transfer_syntax: Some(ber_transfer_syntax()),
            provider_reason: None,
        }
    }
}

/// CP-type (8823-1 8.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectPpdu {
    /// calling-presentation-selector (`81`).
    pub calling_selector: Option<Vec<u8>>,
    /// called-presentation-selector (`82`).
    pub called_selector: Option<Vec<u8>>,
    /// presentation-context-definition-list (`A4`).
    pub contexts: Vec<ContextDefinition>,
    /// user-data: the AARQ in the ACSE context.
    pub user_data: Vec<Pdv>,
}

impl ConnectPpdu {
    /// The CP libiec61850 sends around `aarq`: PSELs `00000001`, contexts 1 (ACSE) and 3 (MMS).
    pub fn libiec61850(aarq: Vec<u8>) -> Self {
        ConnectPpdu {
            calling_selector: Some(vec![0, 0, 0, 1]),
            called_selector: Some(vec![0, 0, 0, 1]),
            contexts: vec![
                ContextDefinition {
                    id: ACSE_CONTEXT_ID,
                    abstract_syntax: acse_abstract_syntax(),
                    transfer_syntaxes: vec![ber_transfer_syntax()],
                },
                ContextDefinition {
                    id: MMS_CONTEXT_ID,
                    abstract_syntax: mms_abstract_syntax(),
                    transfer_syntaxes: vec![ber_transfer_syntax()],
                },
            ],
            user_data: vec![Pdv::new(ACSE_CONTEXT_ID, aarq)],
        }
    }

    /// The context id whose abstract syntax is `syntax`.
    pub fn context_for(&self, syntax: &Oid) -> Option<u64> {
        self.contexts
            .iter()
            .find(|c| &c.abstract_syntax == syntax)
            .map(|c| c.id)
    }

    /// Parse a CP-type PPDU.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let params = open_normal_mode(bytes, "CP-type")?;
        let mut cp = ConnectPpdu {
            calling_selector: None,
            called_selector: None,
            contexts: Vec::new(),
            user_data: Vec::new(),
        };
        let mut r = params.reader();
        while !r.is_empty() {
            let t = r
                .read_tlv("CP normal-mode parameter")
                .map_err(Error::ber(L))?;
            match t.tag {
                0x81 => cp.calling_selector = Some(selector(t.value)?),
                0x82 => cp.called_selector = Some(selector(t.value)?),
                0xa4 => cp.contexts = parse_context_list(t.value)?,
                0x61 => cp.user_data = parse_pdvs(t.value)?,
                0x60 => {
                    return Err(Error::malformed(
                        L,
                        "user-data",
                        "simply-encoded-data is not supported",
                    ))
                }
                // protocol-version, default-context-name, requirements: not used by the kernel.
                _ => {}
            }
        }
        Ok(cp)
    }
}

impl Codec for ConnectPpdu {
    sink_codec!();
}

impl ConnectPpdu {
    /// Write the encoding to `out`.
    fn encode(&self, out: &mut dyn Sink) {
        asn1::nested(out, 0x31, |o| {
            emit_mode_selector(o);
            asn1::nested(o, 0xa2, |o| {
                if let Some(s) = &self.calling_selector {
                    asn1::tlv(o, 0x81, s);
                }
                if let Some(s) = &self.called_selector {
                    asn1::tlv(o, 0x82, s);
                }
                asn1::nested(o, 0xa4, |o| {
                    for c in &self.contexts {
                        asn1::nested(o, 0x30, |o| {
                            asn1::uint(o, 0x02, c.id);
                            c.abstract_syntax.emit(o);
                            asn1::nested(o, 0x30, |o| {
                                c.transfer_syntaxes.iter().for_each(|t| t.emit(o))
                            });
                        });
                    }
                });
                emit_pdvs(o, &self.user_data);
            });
        });
    }
}

/// CPA-PPDU (8823-1 8.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptPpdu {
    /// responding-presentation-selector (`83`); libiec61850 sends `00000001`.
    pub responding_selector: Option<Vec<u8>>,
    /// presentation-context-definition-result-list (`A5`), one per proposed context.
    pub results: Vec<ContextResult>,
    /// user-data: the AARE in the ACSE context.
    pub user_data: Vec<Pdv>,
}

impl AcceptPpdu {
    /// The CPA libiec61850 sends: selector `00000001`, every context accepted with BER.
    pub fn libiec61850(contexts: usize, acse_context: u64, aare: Vec<u8>) -> Self {
        AcceptPpdu {
            responding_selector: Some(vec![0, 0, 0, 1]),
            results: vec![ContextResult::accept_ber(); contexts],
            user_data: vec![Pdv::new(acse_context, aare)],
        }
    }

    /// Parse a CPA-PPDU.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let params = open_normal_mode(bytes, "CPA-PPDU")?;
        let mut a = AcceptPpdu {
            responding_selector: None,
            results: Vec::new(),
            user_data: Vec::new(),
        };
        let mut r = params.reader();
        while !r.is_empty() {
            let t = r.read_tlv("CPA parameter").map_err(Error::ber(L))?;
            match t.tag {
                0x83 => a.responding_selector = Some(selector(t.value)?),
                0xa5 => a.results = parse_result_list(t.value)?,
                0x61 => a.user_data = parse_pdvs(t.value)?,
                _ => {}
            }
        }
        Ok(a)
    }
}

impl Codec for AcceptPpdu {
    sink_codec!();
}

impl AcceptPpdu {
    /// Write the encoding to `out`.
    fn encode(&self, out: &mut dyn Sink) {
        asn1::nested(out, 0x31, |o| {
            emit_mode_selector(o);
            asn1::nested(o, 0xa2, |o| {
                if let Some(s) = &self.responding_selector {
                    asn1::tlv(o, 0x83, s);
                }
                emit_result_list(o, &self.results);
                emit_pdvs(o, &self.user_data);
            });
        });
    }
}

/// CPR-PPDU, normal mode (8823-1 8.4): `30 { 83 sel, A5 results, 8A provider-reason, 61 user-data }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusePpdu {
    /// responding-presentation-selector.
    pub responding_selector: Option<Vec<u8>>,
    /// Results per proposed context.
    pub results: Vec<ContextResult>,
    /// provider-reason (0 not specified, 1 congestion, 2 local limit, 3 address unknown,
    /// 4 version, 5 default context, 6 user data not readable, 7 no PSAP).
    pub provider_reason: Option<u8>,
    /// user-data: a rejecting AARE, if the refusal comes from ACSE.
    pub user_data: Vec<Pdv>,
}

impl RefusePpdu {
    /// Parse a CPR-PPDU.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let mut outer = Reader::new(bytes);
        let seq = outer
            .read_expected(0x30, "CPR-PPDU")
            .map_err(Error::ber(L))?;
        outer.expect_end("CPR-PPDU").map_err(Error::ber(L))?;
        let mut p = RefusePpdu {
            responding_selector: None,
            results: Vec::new(),
            provider_reason: None,
            user_data: Vec::new(),
        };
        let mut r = seq.reader();
        while !r.is_empty() {
            let t = r.read_tlv("CPR parameter").map_err(Error::ber(L))?;
            match t.tag {
                0x83 => p.responding_selector = Some(selector(t.value)?),
                0xa5 => p.results = parse_result_list(t.value)?,
                0x8a => p.provider_reason = Some(small_uint(t.value, "provider-reason")?),
                0x61 => p.user_data = parse_pdvs(t.value)?,
                _ => {}
            }
        }
        Ok(p)
    }
}

impl Codec for RefusePpdu {
    sink_codec!();
}

impl RefusePpdu {
    /// Write the encoding to `out`.
    fn encode(&self, out: &mut dyn Sink) {
        asn1::nested(out, 0x30, |o| {
            if let Some(s) = &self.responding_selector {
                asn1::tlv(o, 0x83, s);
            }
            if !self.results.is_empty() {
                emit_result_list(o, &self.results);
            }
            if let Some(r) = self.provider_reason {
                asn1::uint(o, 0x8a, r as u64);
            }
            if !self.user_data.is_empty() {
                emit_pdvs(o, &self.user_data);
            }
        });
    }
}

/// Abort PPDUs (8823-1 8.6 ARU-PPDU normal mode, 8.7 ARP-PPDU).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AbortPpdu {
    /// ARU-PPDU: `A0 { 61 user-data }`, carrying an ACSE ABRT.
    User(Vec<Pdv>),
    /// ARP-PPDU: `30 { 80 abort-reason, 81 event-identifier }`.
    Provider {
        /// abort-reason `[0]` (ISO 8823-1 8.4.2), if present.
        reason: Option<u8>,
    },
}

impl AbortPpdu {
    /// Parse an ARU or ARP PPDU.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let mut outer = Reader::new(bytes);
        let t = outer.read_tlv("abort PPDU").map_err(Error::ber(L))?;
        outer.expect_end("abort PPDU").map_err(Error::ber(L))?;
        match t.tag {
            0xa0 => {
                let mut r = t.reader();
                let mut pdvs = Vec::new();
                while !r.is_empty() {
                    let p = r.read_tlv("ARU parameter").map_err(Error::ber(L))?;
                    if p.tag == 0x61 {
                        pdvs = parse_pdvs(p.value)?;
                    }
                }
                Ok(AbortPpdu::User(pdvs))
            }
            0x30 => {
                let mut r = t.reader();
                let mut reason = None;
                while !r.is_empty() {
                    let p = r.read_tlv("ARP parameter").map_err(Error::ber(L))?;
                    if p.tag == 0x80 {
                        reason = Some(small_uint(p.value, "abort-reason")?);
                    }
                }
                Ok(AbortPpdu::Provider { reason })
            }
            tag => Err(Error::UnknownCode {
                layer: L,
                what: "abort PPDU",
                code: tag,
            }),
        }
    }
}

impl Codec for AbortPpdu {
    sink_codec!();
}

impl AbortPpdu {
    /// Write the encoding to `out`.
    fn encode(&self, out: &mut dyn Sink) {
        match self {
            AbortPpdu::User(pdvs) => asn1::nested(out, 0xa0, |o| emit_pdvs(o, pdvs)),
            AbortPpdu::Provider { reason } => asn1::nested(out, 0x30, |o| {
                if let Some(r) = reason {
                    asn1::uint(o, 0x80, *r as u64);
                }
            }),
        }
    }
}

/// Parse the user data of a P-DATA (a TD-PPDU is just `User-data`, 8823-1 8.5):
/// `61 { PDV-list ... }`. Only fully-encoded data and the BER transfer syntax are accepted.
pub fn parse_user_data(bytes: &[u8]) -> Result<Vec<Pdv>> {
    let mut r = Reader::new(bytes);
    let t = r.read_tlv("user-data").map_err(Error::ber(L))?;
    r.expect_end("user-data").map_err(Error::ber(L))?;
    match t.tag {
        0x61 => parse_pdvs(t.value),
        0x60 => Err(Error::malformed(
            L,
            "user-data",
            "simply-encoded-data is not supported",
        )),
        tag => Err(Error::UnknownCode {
            layer: L,
            what: "user-data",
            code: tag,
        }),
    }
}

/// Encode P-DATA user data: `61 { PDV-list ... }`.
pub fn emit_user_data(pdvs: &[Pdv], out: &mut dyn Sink) {
    emit_pdvs(out, pdvs);
}

/// Encode one PDV as P-DATA user data, the data-phase framing libiec61850 uses.
pub fn user_data(context_id: u64, pdu: Vec<u8>) -> Vec<u8> {
    let mut v = Vec::with_capacity(pdu.len() + 12);
    emit_pdvs(&mut v, &[Pdv::new(context_id, pdu)]);
    v
}

fn emit_mode_selector(o: &mut dyn Sink) {
    // mode-selector [0] IMPLICIT SET { mode-value [0] IMPLICIT INTEGER { normal-mode (1) } }
    asn1::nested(o, 0xa0, |o| asn1::tlv(o, 0x80, &[1]));
}

fn open_normal_mode<'a>(bytes: &'a [u8], what: &'static str) -> Result<ber::Tlv<'a>> {
    let mut outer = Reader::new(bytes);
    let set = outer.read_expected(0x31, what).map_err(Error::ber(L))?;
    outer.expect_end(what).map_err(Error::ber(L))?;
    let mut r = set.reader();
    let mut mode = None;
    let mut params = None;
    while !r.is_empty() {
        let t = r.read_tlv(what).map_err(Error::ber(L))?;
        match t.tag {
            0xa0 => {
                let mut m = t.reader();
                let v = m.read_expected(0x80, "mode-value").map_err(Error::ber(L))?;
                mode = Some(v.value);
            }
            0xa2 => params = Some(t),
            _ => {}
        }
    }
    match mode {
        Some([1]) => {}
        Some(_) => {
            return Err(Error::malformed(
                L,
                what,
                "mode is not normal-mode (X.410-1984 mode is not supported)",
            ))
        }
        None => return Err(Error::malformed(L, what, "no mode-selector")),
    }
    params.ok_or(Error::malformed(L, what, "no normal-mode-parameters"))
}

fn selector(v: &[u8]) -> Result<Vec<u8>> {
    if v.len() > 16 {
        return Err(Error::TooLarge {
            layer: L,
            what: "presentation selector",
            size: v.len(),
            max: 16,
        });
    }
    Ok(v.to_vec())
}

fn small_uint(v: &[u8], what: &'static str) -> Result<u8> {
    let n = ber::decode_u64(v, what).map_err(Error::ber(L))?;
    u8::try_from(n).map_err(|_| Error::malformed(L, what, "value out of range"))
}

fn context_id(v: &[u8]) -> Result<u64> {
    let id = ber::decode_u64(v, "presentation-context-identifier").map_err(Error::ber(L))?;
    // 8823-1 8.2: Presentation-context-identifier ::= INTEGER (1..127, ..., 128..32767).
    if !(1..=32767).contains(&id) {
        return Err(Error::malformed(
            L,
            "presentation-context-identifier",
            "outside 1..32767",
        ));
    }
    Ok(id)
}

fn parse_context_list(bytes: &[u8]) -> Result<Vec<ContextDefinition>> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while !r.is_empty() {
        if out.len() == MAX_CONTEXTS {
            return Err(Error::Limit {
                layer: L,
                what: "too many presentation contexts",
            });
        }
        let e = r
            .read_expected(0x30, "context definition")
            .map_err(Error::ber(L))?;
        let mut er = e.reader();
        let id = er
            .read_expected(0x02, "context id")
            .map_err(Error::ber(L))?;
        let abs = er
            .read_expected(0x06, "abstract-syntax-name")
            .map_err(Error::ber(L))?;
        let ts_list = er
            .read_expected(0x30, "transfer-syntax-name-list")
            .map_err(Error::ber(L))?;
        er.expect_end("context definition").map_err(Error::ber(L))?;
        let mut tr = ts_list.reader();
        let mut ts = Vec::new();
        while !tr.is_empty() {
            let t = tr
                .read_expected(0x06, "transfer-syntax-name")
                .map_err(Error::ber(L))?;
            if ts.len() < MAX_CONTEXTS {
                ts.push(Oid::from_contents(t.value, L)?);
            }
        }
        out.push(ContextDefinition {
            id: context_id(id.value)?,
            abstract_syntax: Oid::from_contents(abs.value, L)?,
            transfer_syntaxes: ts,
        });
    }
    Ok(out)
}

fn parse_result_list(bytes: &[u8]) -> Result<Vec<ContextResult>> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while !r.is_empty() {
        if out.len() == MAX_CONTEXTS {
            return Err(Error::Limit {
                layer: L,
                what: "too many presentation context results",
            });
        }
        let e = r
            .read_expected(0x30, "context result")
            .map_err(Error::ber(L))?;
        let mut er = e.reader();
        let res = er.read_expected(0x80, "result").map_err(Error::ber(L))?;
        let mut cr = ContextResult {
            result: small_uint(res.value, "result")?,
            transfer_syntax: None,
            provider_reason: None,
        };
        while !er.is_empty() {
            let t = er.read_tlv("context result").map_err(Error::ber(L))?;
            match t.tag {
                0x81 => cr.transfer_syntax = Some(Oid::from_contents(t.value, L)?),
                0x82 => cr.provider_reason = Some(small_uint(t.value, "provider-reason")?),
                _ => {}
            }
        }
        out.push(cr);
    }
    Ok(out)
}

fn emit_result_list(o: &mut dyn Sink, results: &[ContextResult]) {
    asn1::nested(o, 0xa5, |o| {
        for c in results {
            asn1::nested(o, 0x30, |o| {
                asn1::uint(o, 0x80, c.result as u64);
                if let Some(t) = &c.transfer_syntax {
                    asn1::tlv(o, 0x81, t.contents());
                }
                if let Some(p) = c.provider_reason {
                    asn1::uint(o, 0x82, p as u64);
                }
            });
        }
    });
}

fn parse_pdvs(bytes: &[u8]) -> Result<Vec<Pdv>> {
    let mut r = Reader::new(bytes);
    let mut out = Vec::new();
    while !r.is_empty() {
        if out.len() == MAX_PDVS {
            return Err(Error::Limit {
                layer: L,
                what: "too many PDV-lists",
            });
        }
        let e = r.read_expected(0x30, "PDV-list").map_err(Error::ber(L))?;
        let mut er = e.reader();
        let transfer_syntax = match er.read_optional(0x06, "transfer-syntax-name") {
            Ok(Some(t)) => {
                let o = Oid::from_contents(t.value, L)?;
                // libiec61850: a transfer syntax present in a data PDU must be BER.
                if o != ber_transfer_syntax() {
                    return Err(Error::malformed(
                        L,
                        "PDV-list",
                        "transfer syntax is not BER (2.1.1)",
                    ));
                }
                Some(o)
            }
            Ok(None) => None,
            Err(e) => return Err(Error::ber(L)(e)),
        };
        let id = er
            .read_expected(0x02, "presentation-context-identifier")
            .map_err(Error::ber(L))?;
        let v = er
            .read_tlv("presentation-data-values")
            .map_err(Error::ber(L))?;
        er.expect_end("PDV-list").map_err(Error::ber(L))?;
        let data = match v.tag {
            // single-ASN1-type [0]: the contents are exactly one encoded value.
            0xa0 => v.value.to_vec(),
            // octet-aligned [1] IMPLICIT OCTET STRING.
            0x81 | 0xa1 => v.value.to_vec(),
            tag => {
                return Err(Error::UnknownCode {
                    layer: L,
                    what: "presentation-data-values",
                    code: tag,
                })
            }
        };
        out.push(Pdv {
            transfer_syntax,
            context_id: context_id(id.value)?,
            data,
        });
    }
    Ok(out)
}

fn emit_pdvs(o: &mut dyn Sink, pdvs: &[Pdv]) {
    asn1::nested(o, 0x61, |o| {
        for p in pdvs {
            asn1::nested(o, 0x30, |o| {
                if let Some(t) = &p.transfer_syntax {
                    t.emit(o);
                }
                asn1::uint(o, 0x02, p.context_id);
                asn1::tlv(o, 0xa0, &p.data);
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn h(s: &str) -> Vec<u8> {
        hex::decode(s.replace(' ', "")).unwrap()
    }

    #[test]
    fn golden_cp() {
        // `docs/mms-bytes.md` §1 CP [V], with a two-byte stand-in for the AARQ.
        let aarq = h("6000");
        let cp = ConnectPpdu::libiec61850(aarq.clone());
        let expect = h("31 43 A0 03 80 01 01 A2 3C 81 04 00000001 82 04 00000001 \
             A4 23 30 0F 02 01 01 06 04 52010001 30 04 06 02 5101 \
                   30 10 02 01 03 06 05 28CA220201 30 04 06 02 5101 \
             61 09 30 07 02 01 01 A0 02 6000");
        assert_eq!(cp.to_vec(), expect);
        let back = ConnectPpdu::parse(&expect).unwrap();
        assert_eq!(back, cp);
        assert_eq!(back.context_for(&mms_abstract_syntax()), Some(3));
    }

    #[test]
    fn golden_cpa_and_data() {
        let cpa = AcceptPpdu::libiec61850(2, 1, h("6100"));
        let expect = h("31 2C A0 03 80 01 01 A2 25 83 04 00000001 \
             A5 12 30 07 80 01 00 81 02 5101 30 07 80 01 00 81 02 5101 \
             61 09 30 07 02 01 01 A0 02 6100");
        assert_eq!(cpa.to_vec(), expect);
        assert_eq!(AcceptPpdu::parse(&expect).unwrap(), cpa);
        // Data phase: 61 { 30 { 02 01 03, A0 <MMS PDU> } }.
        let d = user_data(3, h("8B00"));
        assert_eq!(d, h("61 09 30 07 02 01 03 A0 02 8B00"));
        assert_eq!(parse_user_data(&d).unwrap(), vec![Pdv::new(3, h("8B00"))]);
    }

    #[test]
    fn psels_may_be_omitted() {
        let mut cp = ConnectPpdu::libiec61850(h("6000"));
        cp.calling_selector = None;
        cp.called_selector = None;
        assert_eq!(ConnectPpdu::parse(&cp.to_vec()).unwrap(), cp);
    }

    #[test]
    fn errors() {
        for (bytes, why) in [
            (
                "61 0B 30 09 06 02 5102 02 01 03 A0 00",
                "wrong transfer syntax",
            ),
            ("61 05 30 03 02 01 03", "no data values"),
            ("61 06 30 04 02 01 00 A0 00", "context id 0"),
            ("60 00", "simply encoded"),
            ("61 05 30 03 02 01", "truncated"),
            ("61 04 30 02 A0 00 FF", "trailing"),
        ] {
            assert!(parse_user_data(&h(bytes)).is_err(), "{why}");
        }
        // X.410 mode and missing parameters.
        assert!(ConnectPpdu::parse(&h("31 05 A0 03 80 01 00")).is_err());
        assert!(ConnectPpdu::parse(&h("31 05 A0 03 80 01 01")).is_err());
        assert!(ConnectPpdu::parse(&h("30 00")).is_err());
    }

    #[test]
    fn refuse_and_abort() {
        let r = RefusePpdu {
            responding_selector: None,
            results: vec![],
            provider_reason: Some(2),
            user_data: vec![],
        };
        assert_eq!(r.to_vec(), h("30 03 8A 01 02"));
        assert_eq!(RefusePpdu::parse(&r.to_vec()).unwrap(), r);
        let a = AbortPpdu::User(vec![Pdv::new(1, h("640380 0100"))]);
        assert_eq!(AbortPpdu::parse(&a.to_vec()).unwrap(), a);
        let p = AbortPpdu::Provider { reason: Some(1) };
        assert_eq!(AbortPpdu::parse(&p.to_vec()).unwrap(), p);
    }

    fn arb_pdv() -> impl Strategy<Value = Pdv> {
        (
            1u64..32768,
            proptest::collection::vec(any::<u8>(), 0..40),
            any::<bool>(),
        )
            .prop_map(|(id, data, ts)| Pdv {
                transfer_syntax: ts.then(ber_transfer_syntax),
                context_id: id,
                data,
            })
    }

    proptest! {
        #[test]
        fn pdv_round_trip(pdvs in proptest::collection::vec(arb_pdv(), 0..4)) {
            let mut v = Vec::new();
            emit_user_data(&pdvs, &mut v);
            prop_assert_eq!(parse_user_data(&v).unwrap(), pdvs);
        }

        #[test]
        fn cp_cpa_round_trip(user in proptest::collection::vec(arb_pdv(), 0..3),
                             sel in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..=16))) {
            let mut cp = ConnectPpdu::libiec61850(vec![]);
            cp.user_data = user.clone();
            cp.calling_selector = sel.clone();
            // The one encoder agrees with itself on the Vec, Counter and Slice sinks.
            prop_assert!(gander_wire::ber_sink::check_codec_agrees(&cp, |o| cp.encode(o)).is_ok());
            prop_assert_eq!(ConnectPpdu::parse(&cp.to_vec()).unwrap(), cp);
            let mut cpa = AcceptPpdu::libiec61850(2, 1, vec![]);
            cpa.user_data = user;
            cpa.responding_selector = sel;
            prop_assert!(gander_wire::ber_sink::check_codec_agrees(&cpa, |o| cpa.encode(o)).is_ok());
            prop_assert_eq!(AcceptPpdu::parse(&cpa.to_vec()).unwrap(), cpa);
        }

        #[test]
        fn no_panic(data in proptest::collection::vec(any::<u8>(), 0..128)) {
            let _ = ConnectPpdu::parse(&data);
            let _ = AcceptPpdu::parse(&data);
            let _ = RefusePpdu::parse(&data);
            let _ = AbortPpdu::parse(&data);
            let _ = parse_user_data(&data);
        }
    }
}
