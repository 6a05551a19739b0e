//! ISO 8073 (ITU-T X.224) connection-oriented transport, class 0, as RFC 1006 carries it.
//!
//! Class 0 has no multiplexing, flow control or error recovery: one TPDU per TPKT packet,
//! connection by CR/CC (ISO 8073 13.3/13.4), release by closing TCP or DR (13.5), data by DT
//! with the EOT bit marking the last fragment of a TSDU (13.7), protocol errors by ER (13.12).
//! The encodings below are what libiec61850 1.6.1 sends and accepts (`docs/mms-bytes.md` §1):
//! CR `E0`, dst-ref 0, src-ref 1, class 0, options TPDU size `C0 01 0D`, called TSEL
//! `C2 02 0001` then calling TSEL `C1 02 0001`; DT header `02 F0 80`.

use crate::asn1::{Counter, Sink};
use crate::error::{Error, Layer, Result};
use gander_wire::Codec;

/// TPDU codes (ISO 8073 13.1, Table 8): high nibble of the second octet.
pub mod code {
    /// Connection request (the low nibble carries CDT, zero in class 0).
    pub const CR: u8 = 0xe0;
    /// Connection confirm.
    pub const CC: u8 = 0xd0;
    /// Disconnect request.
    pub const DR: u8 = 0x80;
    /// Data.
    pub const DT: u8 = 0xf0;
    /// TPDU error.
    pub const ER: u8 = 0x70;
}

/// Parameter codes of the variable part (ISO 8073 13.3.4).
pub mod param {
    /// TPDU size, as a power of two (13.3.4 b).
    pub const TPDU_SIZE: u8 = 0xc0;
    /// Calling transport selector (13.3.4 a).
    pub const CALLING_TSEL: u8 = 0xc1;
    /// Called (or responding) transport selector.
    pub const CALLED_TSEL: u8 = 0xc2;
    /// Invalid TPDU, in ER (13.12.4).
    pub const INVALID_TPDU: u8 = 0xc1;
}

/// EOT bit of the DT TPDU's third octet (ISO 8073 13.7.3 c).
pub const EOT: u8 = 0x80;
/// Size of the class 0 DT header (LI, code, EOT/TPDU-NR).
pub const DT_HEADER_LEN: usize = 3;
/// Smallest and largest TPDU size codes (128 and 8192 octets, ISO 8073 13.3.4 b).
pub const TPDU_SIZE_MIN_CODE: u8 = 7;
/// Largest TPDU size code allowed for class 0 (8192 octets).
pub const TPDU_SIZE_MAX_CODE: u8 = 13;
/// The default TPDU size when CR carries no C0 option (ISO 8073 13.3.4 b: 128 octets).
pub const DEFAULT_TPDU_SIZE: usize = 128;
/// The largest TSEL libiec61850 accepts (`cotp.c`); longer ones are rejected.
pub const MAX_TSEL_LEN: usize = 4;

/// Octets of a TPDU size code (2^code).
pub fn tpdu_size_from_code(code: u8) -> usize {
    1usize << code.clamp(TPDU_SIZE_MIN_CODE, TPDU_SIZE_MAX_CODE)
}

/// Parameters of CR and CC (ISO 8073 13.3 and 13.4; same layout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectParams {
    /// DST-REF: zero in CR, the CR's SRC-REF in CC.
    pub dst_ref: u16,
    /// SRC-REF: chosen by the sender.
    pub src_ref: u16,
    /// Class and options octet; class 0 is `0x00` (13.3.3 e).
    pub class_option: u8,
    /// TPDU size code (`C0`), if present.
    pub tpdu_size: Option<u8>,
    /// Calling TSEL (`C1`).
    pub calling_tsel: Option<Vec<u8>>,
    /// Called TSEL (`C2`).
    pub called_tsel: Option<Vec<u8>>,
}

impl ConnectParams {
    /// What libiec61850's client puts in its CR: refs 0/1, class 0, TPDU size 8192, both
    /// TSELs `0001`.
    pub fn libiec61850_request() -> Self {
        ConnectParams {
            dst_ref: 0,
            src_ref: 1,
            class_option: 0,
            tpdu_size: Some(TPDU_SIZE_MAX_CODE),
            calling_tsel: Some(vec![0, 1]),
            called_tsel: Some(vec![0, 1]),
        }
    }

    /// The CC a libiec61850 server sends for `cr`: peer's ref as DST-REF, own ref `0001`,
    /// class echoed, TPDU size echoed but capped at `max_code`, TSELs echoed or `0001`.
    pub fn confirm_for(cr: &ConnectParams, max_code: u8) -> Self {
        ConnectParams {
            dst_ref: cr.src_ref,
            src_ref: 1,
            class_option: cr.class_option,
            tpdu_size: cr.tpdu_size.map(|c| c.min(max_code)),
            calling_tsel: Some(cr.calling_tsel.clone().unwrap_or_else(|| vec![0, 1])),
            called_tsel: Some(cr.called_tsel.clone().unwrap_or_else(|| vec![0, 1])),
        }
    }

    /// The TPDU size in octets these parameters select.
    pub fn tpdu_size_octets(&self) -> usize {
        self.tpdu_size
            .map(tpdu_size_from_code)
            .unwrap_or(DEFAULT_TPDU_SIZE)
    }
}

/// One class 0 TPDU, borrowing DT user data from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tpdu<'a> {
    /// CR (ISO 8073 13.3).
    ConnectionRequest(ConnectParams),
    /// CC (ISO 8073 13.4).
    ConnectionConfirm(ConnectParams),
    /// DT (ISO 8073 13.7): a fragment of a TSDU; `eot` marks the last one.
    Data {
        /// EOT bit: this fragment ends the TSDU.
        eot: bool,
        /// The fragment's user data.
        user_data: &'a [u8],
    },
    /// DR (ISO 8073 13.5).
    DisconnectRequest {
        /// DST-REF: the peer's connection reference.
        dst_ref: u16,
        /// SRC-REF: our connection reference.
        src_ref: u16,
        /// Disconnect reason (ISO 8073 13.5.3 e).
        reason: u8,
    },
    /// ER (ISO 8073 13.12).
    Error {
        /// DST-REF: the peer's connection reference.
        dst_ref: u16,
        /// Reject cause (ISO 8073 13.12.3 e).
        cause: u8,
        /// The invalid TPDU parameter: the header that was rejected, if sent.
        invalid_tpdu: Option<&'a [u8]>,
    },
}

fn trunc(what: &'static str) -> Error {
    Error::Truncated {
        layer: Layer::Cotp,
        what,
    }
}

impl<'a> Tpdu<'a> {
    /// Parse one TPDU (the payload of one TPKT packet).
    pub fn parse(bytes: &'a [u8]) -> Result<Tpdu<'a>> {
        let (&li, rest) = bytes.split_first().ok_or(trunc("length indicator"))?;
        let li = li as usize;
        // ISO 8073 13.2.1: LI counts the header octets after itself; 255 is reserved.
        if li == 0xff {
            return Err(Error::malformed(Layer::Cotp, "header", "reserved LI 255"));
        }
        if li < 1 || rest.len() < li {
            return Err(trunc("header"));
        }
        let header = &rest[..li];
        let user_data = &rest[li..];
        let tpdu_code = header[0] & 0xf0;
        match tpdu_code {
            code::CR | code::CC => {
                if header.len() < 6 {
                    return Err(trunc("CR/CC fixed part"));
                }
                if !user_data.is_empty() {
                    // Class 0 forbids user data in CR/CC (ISO 8073 13.3.5).
                    return Err(Error::malformed(
                        Layer::Cotp,
                        "CR/CC",
                        "user data not allowed in class 0",
                    ));
                }
                let mut p = ConnectParams {
                    dst_ref: u16::from_be_bytes([header[1], header[2]]),
                    src_ref: u16::from_be_bytes([header[3], header[4]]),
                    class_option: header[5],
                    tpdu_size: None,
                    calling_tsel: None,
                    called_tsel: None,
                };
                parse_options(&header[6..], &mut p)?;
                Ok(if tpdu_code == code::CR {
                    Tpdu::ConnectionRequest(p)
                } else {
                    Tpdu::ConnectionConfirm(p)
                })
            }
            code::DT => {
                // Class 0 DT has LI = 2 (ISO 8073 13.7.2; libiec61850 checks it).
                if li != 2 {
                    return Err(Error::malformed(Layer::Cotp, "DT", "LI is not 2"));
                }
                Ok(Tpdu::Data {
                    eot: header[1] & EOT != 0,
                    user_data,
                })
            }
            code::DR => {
                if header.len() < 6 {
                    return Err(trunc("DR fixed part"));
                }
                Ok(Tpdu::DisconnectRequest {
                    dst_ref: u16::from_be_bytes([header[1], header[2]]),
                    src_ref: u16::from_be_bytes([header[3], header[4]]),
                    reason: header[5],
                })
            }
            code::ER => {
                if header.len() < 4 {
                    return Err(trunc("ER fixed part"));
                }
                let mut invalid_tpdu = None;
                let mut vp = &header[4..];
                while !vp.is_empty() {
                    let (c, v, rest) = split_option(vp)?;
                    if c == param::INVALID_TPDU {
                        invalid_tpdu = Some(v);
                    }
                    vp = rest;
                }
                Ok(Tpdu::Error {
                    dst_ref: u16::from_be_bytes([header[1], header[2]]),
                    cause: header[3],
                    invalid_tpdu,
                })
            }
            _ => Err(Error::UnknownCode {
                layer: Layer::Cotp,
                what: "TPDU",
                code: header[0],
            }),
        }
    }
}

impl Codec for Tpdu<'_> {
    sink_codec!();
}

/// Write `LI header`, the header after LI written by `f` (run twice: once to count it).
fn with_li(out: &mut dyn Sink, f: impl Fn(&mut dyn Sink)) {
    let mut li = Counter::default();
    f(&mut li);
    out.bytes(&[li.0 as u8]);
    f(out);
}

impl Tpdu<'_> {
    /// Write the encoding to `out` (no TPKT header).
    fn encode(&self, out: &mut dyn Sink) {
        match self {
            Tpdu::ConnectionRequest(p) | Tpdu::ConnectionConfirm(p) => {
                let c = if matches!(self, Tpdu::ConnectionRequest(_)) {
                    code::CR
                } else {
                    code::CC
                };
                with_li(out, |out| {
                    out.bytes(&[c]);
                    out.bytes(&p.dst_ref.to_be_bytes());
                    out.bytes(&p.src_ref.to_be_bytes());
                    out.bytes(&[p.class_option]);
                    if let Some(s) = p.tpdu_size {
                        out.bytes(&[param::TPDU_SIZE, 1, s]);
                    }
                    // libiec61850 order: called TSEL before calling TSEL.
                    for (c, v) in [
                        (param::CALLED_TSEL, &p.called_tsel),
                        (param::CALLING_TSEL, &p.calling_tsel),
                    ] {
                        if let Some(v) = v {
                            let v = &v[..v.len().min(MAX_TSEL_LEN)];
                            out.bytes(&[c, v.len() as u8]);
                            out.bytes(v);
                        }
                    }
                });
            }
            Tpdu::Data { eot, user_data } => {
                out.bytes(&[2, code::DT, if *eot { EOT } else { 0 }]);
                out.bytes(user_data);
            }
            Tpdu::DisconnectRequest {
                dst_ref,
                src_ref,
                reason,
            } => {
                out.bytes(&[6, code::DR]);
                out.bytes(&dst_ref.to_be_bytes());
                out.bytes(&src_ref.to_be_bytes());
                out.bytes(&[*reason]);
            }
            Tpdu::Error {
                dst_ref,
                cause,
                invalid_tpdu,
            } => with_li(out, |out| {
                out.bytes(&[code::ER]);
                out.bytes(&dst_ref.to_be_bytes());
                out.bytes(&[*cause]);
                if let Some(v) = invalid_tpdu {
                    let v = &v[..v.len().min(64)];
                    out.bytes(&[param::INVALID_TPDU, v.len() as u8]);
                    out.bytes(v);
                }
            }),
        }
    }
}

impl<'a> Tpdu<'a> {
    /// A short name for logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            Tpdu::ConnectionRequest(_) => "CR",
            Tpdu::ConnectionConfirm(_) => "CC",
            Tpdu::Data { .. } => "DT",
            Tpdu::DisconnectRequest { .. } => "DR",
            Tpdu::Error { .. } => "ER",
        }
    }
}

fn split_option(vp: &[u8]) -> Result<(u8, &[u8], &[u8])> {
    match vp {
        [c, len, rest @ ..] if rest.len() >= *len as usize => {
            let (v, rest) = rest.split_at(*len as usize);
            Ok((*c, v, rest))
        }
        _ => Err(trunc("variable-part parameter")),
    }
}

fn parse_options(mut vp: &[u8], p: &mut ConnectParams) -> Result<()> {
    while !vp.is_empty() {
        let (c, v, rest) = split_option(vp)?;
        match c {
            param::TPDU_SIZE => match v {
                [s] if (TPDU_SIZE_MIN_CODE..=TPDU_SIZE_MAX_CODE).contains(s) => {
                    p.tpdu_size = Some(*s)
                }
                [_] => {
                    return Err(Error::malformed(
                        Layer::Cotp,
                        "TPDU size",
                        "not between 128 and 8192 octets",
                    ))
                }
                _ => {
                    return Err(Error::malformed(
                        Layer::Cotp,
                        "TPDU size",
                        "length is not 1",
                    ))
                }
            },
            param::CALLING_TSEL | param::CALLED_TSEL => {
                if v.len() > MAX_TSEL_LEN {
                    return Err(Error::TooLarge {
                        layer: Layer::Cotp,
                        what: "TSEL",
                        size: v.len(),
                        max: MAX_TSEL_LEN,
                    });
                }
                if c == param::CALLING_TSEL {
                    p.calling_tsel = Some(v.to_vec());
                } else {
                    p.called_tsel = Some(v.to_vec());
                }
            }
            // Unknown parameters are skipped, as libiec61850 does (ISO 8073 13.2.3 lets a
            // class 0 receiver ignore parameters it does not implement).
            _ => {}
        }
        vp = rest;
    }
    Ok(())
}

/// Split `tsdu` into DT TPDUs of at most `tpdu_size` octets (header included), the last with
/// EOT set (ISO 8073 13.7). Each element is one TPKT payload.
pub fn data_tpdus(tsdu: &[u8], tpdu_size: usize) -> Vec<Vec<u8>> {
    let chunk = tpdu_size.saturating_sub(DT_HEADER_LEN).max(1);
    if tsdu.is_empty() {
        return vec![Tpdu::Data {
            eot: true,
            user_data: &[],
        }
        .to_vec()];
    }
    let n = tsdu.len().div_ceil(chunk);
    tsdu.chunks(chunk)
        .enumerate()
        .map(|(i, c)| {
            Tpdu::Data {
                eot: i + 1 == n,
                user_data: c,
            }
            .to_vec()
        })
        .collect()
}

/// Reassembles DT fragments into TSDUs, with a size cap (ISO 8073 13.7: the TSDU ends with
/// the DT whose EOT bit is set).
#[derive(Debug, Clone)]
pub struct DtReassembler {
    buf: Vec<u8>,
    max_tsdu: usize,
}

impl DtReassembler {
    /// A reassembler that rejects TSDUs longer than `max_tsdu`.
    pub fn new(max_tsdu: usize) -> Self {
        DtReassembler {
            buf: Vec::new(),
            max_tsdu,
        }
    }

    /// Add one fragment; returns the TSDU when `eot` completes it.
    pub fn push(&mut self, eot: bool, data: &[u8]) -> Result<Option<Vec<u8>>> {
        if self.buf.len() + data.len() > self.max_tsdu {
            let size = self.buf.len() + data.len();
            self.buf = Vec::new();
            return Err(Error::TooLarge {
                layer: Layer::Cotp,
                what: "TSDU",
                size,
                max: self.max_tsdu,
            });
        }
        self.buf.extend_from_slice(data);
        Ok(eot.then(|| core::mem::take(&mut self.buf)))
    }

    /// Whether a TSDU is partly received.
    pub fn in_progress(&self) -> bool {
        !self.buf.is_empty()
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
    fn golden_libiec61850_cr() {
        // `docs/mms-bytes.md` §1 [V]: 03 00 00 16 | 11 E0 0000 0001 00 | C0 01 0D | C2 02 0001 | C1 02 0001
        let cr = h("11 E0 0000 0001 00 C0 01 0D C2 02 0001 C1 02 0001");
        let p = ConnectParams::libiec61850_request();
        assert_eq!(
            Tpdu::parse(&cr).unwrap(),
            Tpdu::ConnectionRequest(p.clone())
        );
        assert_eq!(Tpdu::ConnectionRequest(p.clone()).to_vec(), cr);
        assert_eq!(p.tpdu_size_octets(), 8192);
    }

    #[test]
    fn golden_cc_and_minimal_cr() {
        let cr = ConnectParams::libiec61850_request();
        let cc = ConnectParams::confirm_for(&cr, TPDU_SIZE_MAX_CODE);
        // CC: 11 D0 <peer ref> 0001 <class> + same options.
        assert_eq!(
            Tpdu::ConnectionConfirm(cc).to_vec(),
            h("11 D0 0001 0001 00 C0 01 0D C2 02 0001 C1 02 0001")
        );
        // The bare 11-byte CR libiec61850 accepts [V].
        let bare = h("06 E0 0000 0001 00");
        let Tpdu::ConnectionRequest(p) = Tpdu::parse(&bare).unwrap() else {
            panic!()
        };
        assert_eq!(p.tpdu_size, None);
        assert_eq!(p.tpdu_size_octets(), 128);
        let cc = ConnectParams::confirm_for(&p, TPDU_SIZE_MAX_CODE);
        assert_eq!(
            Tpdu::ConnectionConfirm(cc).to_vec(),
            h("0E D0 0001 0001 00 C2 02 0001 C1 02 0001")
        );
        // A proposed size above the cap is lowered.
        let mut big = p.clone();
        big.tpdu_size = Some(13);
        assert_eq!(ConnectParams::confirm_for(&big, 10).tpdu_size, Some(10));
    }

    #[test]
    fn dt_header_and_fragmentation() {
        assert_eq!(
            Tpdu::parse(&h("02 F0 80 0102")).unwrap(),
            Tpdu::Data {
                eot: true,
                user_data: &[1, 2]
            }
        );
        let frags = data_tpdus(&[7; 300], 128);
        assert_eq!(frags.len(), 3);
        assert_eq!(&frags[0][..3], &[2, 0xf0, 0]);
        assert_eq!(&frags[2][..3], &[2, 0xf0, 0x80]);
        let mut r = DtReassembler::new(1000);
        let mut out = None;
        for f in &frags {
            let Tpdu::Data { eot, user_data } = Tpdu::parse(f).unwrap() else {
                panic!()
            };
            assert!(f.len() <= 128);
            out = r.push(eot, user_data).unwrap();
        }
        assert_eq!(out.unwrap(), vec![7; 300]);
    }

    #[test]
    fn errors() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (vec![], "trunc"),
            (h("05 E0 0000 0001"), "trunc"),
            (h("03 F0 80 00"), "DT LI"),
            (
                h("11 E0 0000 0001 00 C0 01 0E C2 02 0001 C1 02 0001"),
                "size",
            ),
            (h("09 E0 0000 0001 00 C0 02 0D 00"), "size len"),
            (h("0A E0 0000 0001 00 C1 05 0102030405"), "tsel"),
            (h("08 E0 0000 0001 00 C1 05"), "trunc option"),
            (h("02 30 80"), "unknown"),
            (h("FF E0"), "li"),
            (h("06 E0 0000 0001 00 AA"), "user data"),
        ];
        for (b, name) in cases {
            assert!(Tpdu::parse(&b).is_err(), "{name}");
        }
        assert!(matches!(
            Tpdu::parse(&h("02 30 80")),
            Err(Error::UnknownCode { code: 0x30, .. })
        ));
        let mut r = DtReassembler::new(4);
        assert!(r.push(false, &[1, 2, 3]).unwrap().is_none());
        assert!(matches!(r.push(true, &[4, 5]), Err(Error::TooLarge { .. })));
    }

    #[test]
    fn dr_and_er() {
        let dr = Tpdu::DisconnectRequest {
            dst_ref: 1,
            src_ref: 2,
            reason: 0x80,
        };
        assert_eq!(Tpdu::parse(&dr.to_vec()).unwrap(), dr);
        let er = Tpdu::Error {
            dst_ref: 1,
            cause: 2,
            invalid_tpdu: Some(&[0xaa, 0xbb]),
        };
        assert_eq!(Tpdu::parse(&er.to_vec()).unwrap(), er);
    }

    fn arb_tsel() -> impl Strategy<Value = Option<Vec<u8>>> {
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..=4))
    }

    proptest! {
        #[test]
        fn connect_round_trip(dst in any::<u16>(), src in any::<u16>(), class in any::<u8>(),
                              size in proptest::option::of(7u8..=13), a in arb_tsel(), b in arb_tsel(),
                              cr in any::<bool>()) {
            let p = ConnectParams { dst_ref: dst, src_ref: src, class_option: class,
                                    tpdu_size: size, calling_tsel: a, called_tsel: b };
            let t = if cr { Tpdu::ConnectionRequest(p) } else { Tpdu::ConnectionConfirm(p) };
            let bytes = t.to_vec();
            prop_assert_eq!(t.buffer_len(), bytes.len());
            let mut buf = vec![0xee; bytes.len()];
            prop_assert_eq!(t.emit(&mut buf), bytes.len());
            prop_assert_eq!(&buf, &bytes);
            prop_assert_eq!(Tpdu::parse(&bytes).unwrap(), t);
        }

        #[test]
        fn data_round_trip(data in proptest::collection::vec(any::<u8>(), 0..3000), size in 7u8..=13) {
            let mut r = DtReassembler::new(4000);
            let mut got = None;
            for f in data_tpdus(&data, tpdu_size_from_code(size)) {
                prop_assert!(f.len() <= tpdu_size_from_code(size));
                let Tpdu::Data { eot, user_data } = Tpdu::parse(&f).unwrap() else { panic!() };
                got = r.push(eot, user_data).unwrap();
            }
            prop_assert_eq!(got.unwrap(), data);
        }

        #[test]
        fn no_panic(data in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(t) = Tpdu::parse(&data) { let _ = t.to_vec(); }
        }
    }
}
