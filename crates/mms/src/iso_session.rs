//! ISO 8327-1 (ITU-T X.225) session protocol, kernel and duplex functional units only, as
//! IEC 61850-8-1 (via the ISO/IEC 9506 A-profile) and libiec61850 use it.
//!
//! An SPDU is `SI | LI | parameters | user information` (ISO 8327-1 8.2). Parameters are
//! PIs (`code LI value`) or PGIs that group PIs (8.2.4). LI is one octet, or `FF` followed by
//! two octets for 255..65535 (8.2.5). libiec61850 only reads the one-octet form, so this
//! module emits the long form only when a value does not fit, and says so in [`Spdu::emit`].
//!
//! The data phase uses a Give-Tokens SPDU followed by a Data-Transfer SPDU, both empty:
//! `01 00 01 00` (ISO 8327-1 8.3.3.2 allows GT and DT to be concatenated; category 0 + 2).

use crate::asn1::{Counter, Sink};
use crate::error::{Error, Layer, Result};
use gander_wire::Codec;

/// SPDU identifiers (ISO 8327-1 8.3, Table 7).
pub mod si {
    /// CONNECT (CN).
    pub const CONNECT: u8 = 13;
    /// ACCEPT (AC).
    pub const ACCEPT: u8 = 14;
    /// REFUSE (RF).
    pub const REFUSE: u8 = 12;
    /// FINISH (FN).
    pub const FINISH: u8 = 9;
    /// DISCONNECT (DN).
    pub const DISCONNECT: u8 = 10;
    /// ABORT (AB).
    pub const ABORT: u8 = 25;
    /// DATA TRANSFER (DT); same code as GIVE TOKENS (GT) in category 0.
    pub const DATA: u8 = 1;
}

/// Parameter codes (ISO 8327-1 8.3, tables per SPDU).
pub mod pi {
    /// Connect/Accept Item PGI.
    pub const CONNECT_ACCEPT_ITEM: u8 = 5;
    /// Protocol Options PI (inside PGI 5).
    pub const PROTOCOL_OPTIONS: u8 = 19;
    /// Version Number PI (inside PGI 5); bit 2 (0x02) is version 2.
    pub const VERSION_NUMBER: u8 = 22;
    /// Transport Disconnect PI.
    pub const TRANSPORT_DISCONNECT: u8 = 17;
    /// Session User Requirements PI (functional units).
    pub const SESSION_USER_REQUIREMENTS: u8 = 20;
    /// Reason Code PI (REFUSE).
    pub const REASON_CODE: u8 = 50;
    /// Calling Session Selector PI.
    pub const CALLING_SSEL: u8 = 51;
    /// Called (CN) or Responding (AC) Session Selector PI.
    pub const CALLED_SSEL: u8 = 52;
    /// User Data PGI.
    pub const USER_DATA: u8 = 193;
}

/// Version 2 bit of the Version Number PI (ISO 8327-1 8.3.1.9).
pub const VERSION_2: u8 = 0x02;
/// Duplex functional unit bit of Session User Requirements (ISO 8327-1 8.3.1.16).
pub const FU_DUPLEX: u16 = 0x0002;
/// The data-phase prefix: empty GIVE TOKENS then empty DATA TRANSFER.
pub const DATA_PREFIX: [u8; 4] = [si::DATA, 0, si::DATA, 0];
/// Session selectors are at most 16 octets (ISO 8327-1 8.3.1.5).
pub const MAX_SSEL_LEN: usize = 16;
/// ABORT's Transport Disconnect value as libiec61850 sends it (`11 01 0B`).
pub const ABORT_TRANSPORT_DISCONNECT: u8 = 0x0b;

/// Parameters of CN and AC (ISO 8327-1 8.3.1 and 8.3.2; same grammar).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConnectSpdu<'a> {
    /// Protocol Options (PGI 5 / PI 19); `None` if PGI 5 is absent.
    pub protocol_options: Option<u8>,
    /// Version Number (PGI 5 / PI 22).
    pub version: Option<u8>,
    /// Session User Requirements (PI 20).
    pub requirements: Option<u16>,
    /// Calling SSEL (PI 51).
    pub calling_ssel: Option<&'a [u8]>,
    /// Called SSEL in CN, responding SSEL in AC (PI 52).
    pub called_ssel: Option<&'a [u8]>,
    /// User Data (PGI 193): the presentation CP or CPA.
    pub user_data: &'a [u8],
}

impl<'a> ConnectSpdu<'a> {
    /// The CN libiec61850 sends: options 0, version 2, duplex, SSELs `0001`.
    pub fn libiec61850_connect(user_data: &'a [u8]) -> Self {
        ConnectSpdu {
            protocol_options: Some(0),
            version: Some(VERSION_2),
            requirements: Some(FU_DUPLEX),
            calling_ssel: Some(&[0, 1]),
            called_ssel: Some(&[0, 1]),
            user_data,
        }
    }

    /// The AC libiec61850 answers `cn` with: options and requirements echoed (defaults if
    /// absent), version 2, responding SSEL = called SSEL (or `0001`).
    pub fn libiec61850_accept(cn: &ConnectSpdu<'a>, user_data: &'a [u8]) -> Self {
        ConnectSpdu {
            protocol_options: Some(cn.protocol_options.unwrap_or(0)),
            version: Some(VERSION_2),
            requirements: Some(cn.requirements.unwrap_or(FU_DUPLEX)),
            calling_ssel: None,
            called_ssel: Some(cn.called_ssel.unwrap_or(&[0, 1])),
            user_data,
        }
    }
}

/// One SPDU, borrowing its user data from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spdu<'a> {
    /// CONNECT (ISO 8327-1 8.3.1).
    Connect(ConnectSpdu<'a>),
    /// ACCEPT (8.3.2).
    Accept(ConnectSpdu<'a>),
    /// GIVE TOKENS + DATA TRANSFER with the user data after them (8.3.3 and 8.3.14).
    Data(&'a [u8]),
    /// FINISH (8.3.5): orderly release request, user data carries the RLRQ.
    Finish(&'a [u8]),
    /// DISCONNECT (8.3.6): release confirmation, user data carries the RLRE.
    Disconnect(&'a [u8]),
    /// ABORT (8.3.8).
    Abort {
        /// Transport Disconnect PI (8.3.8.2), if present: bit 1 set = release the transport
        /// connection.
        transport_disconnect: Option<u8>,
        /// User Data PI, empty if absent.
        user_data: &'a [u8],
    },
    /// REFUSE (8.3.4): the reason octet, then user data (in the Reason Code PI, 8.3.4.9).
    Refuse {
        /// Transport Disconnect PI (8.3.4.7), if present.
        transport_disconnect: Option<u8>,
        /// First octet of the Reason Code PI (8.3.4.9).
        reason: u8,
        /// The rest of the Reason Code PI: user data, empty if none.
        user_data: &'a [u8],
    },
}

fn trunc(what: &'static str) -> Error {
    Error::Truncated {
        layer: Layer::Session,
        what,
    }
}

/// Read an LI (one octet, or FF + two octets) from the front of `b`.
fn read_li(b: &[u8]) -> Result<(usize, &[u8])> {
    match b {
        [0xff, hi, lo, rest @ ..] => Ok((u16::from_be_bytes([*hi, *lo]) as usize, rest)),
        [0xff, ..] => Err(trunc("extended length indicator")),
        [li, rest @ ..] => Ok((*li as usize, rest)),
        [] => Err(trunc("length indicator")),
    }
}

fn write_li(out: &mut dyn Sink, n: usize) {
    if n < 0xff {
        out.bytes(&[n as u8]);
    } else {
        out.bytes(&[0xff]);
        out.bytes(&(n.min(0xffff) as u16).to_be_bytes());
    }
}

/// Write `code LI value`, the value written by `f` (run twice: once to count it).
fn write_unit(out: &mut dyn Sink, code: u8, f: impl Fn(&mut dyn Sink)) {
    let mut len = Counter::default();
    f(&mut len);
    out.bytes(&[code]);
    write_li(out, len.0);
    f(out);
}

/// Write a PI: `code LI value`.
fn write_pi(out: &mut dyn Sink, code: u8, value: &[u8]) {
    write_unit(out, code, |o| o.bytes(value));
}

/// Split a parameter field into `(code, value)` pairs.
fn params(mut b: &[u8]) -> Result<Vec<(u8, &[u8])>> {
    let mut out = Vec::new();
    while let Some((&code, rest)) = b.split_first() {
        let (len, rest) = read_li(rest)?;
        if rest.len() < len {
            return Err(trunc("parameter"));
        }
        out.push((code, &rest[..len]));
        b = &rest[len..];
    }
    Ok(out)
}

fn ssel(v: &[u8]) -> Result<&[u8]> {
    if v.len() > MAX_SSEL_LEN {
        return Err(Error::TooLarge {
            layer: Layer::Session,
            what: "session selector",
            size: v.len(),
            max: MAX_SSEL_LEN,
        });
    }
    Ok(v)
}

impl<'a> Spdu<'a> {
    /// Parse one SPDU (the whole TSDU).
    pub fn parse(bytes: &'a [u8]) -> Result<Spdu<'a>> {
        let (&id, rest) = bytes.split_first().ok_or(trunc("SPDU identifier"))?;
        if id == si::DATA {
            // libiec61850 requires exactly GT(LI 0) + DT(LI 0).
            return match bytes.strip_prefix(&DATA_PREFIX[..]) {
                Some(user) => Ok(Spdu::Data(user)),
                None => Err(Error::malformed(
                    Layer::Session,
                    "DATA",
                    "not an empty GIVE TOKENS + DATA TRANSFER (01 00 01 00)",
                )),
            };
        }
        let (li, rest) = read_li(rest)?;
        if rest.len() < li {
            return Err(trunc("SPDU parameters"));
        }
        if rest.len() > li {
            // ISO 8327-1 8.2.1: user information follows only for DT-like SPDUs; here the
            // LI must cover the rest of the TSDU (libiec61850 checks the same).
            return Err(Error::malformed(
                Layer::Session,
                "SPDU",
                "length indicator does not cover the rest of the SPDU",
            ));
        }
        let ps = params(rest)?;
        match id {
            si::CONNECT | si::ACCEPT => {
                let mut c = ConnectSpdu::default();
                let mut user = None;
                for (code, v) in ps {
                    match code {
                        pi::CONNECT_ACCEPT_ITEM => {
                            for (sub, sv) in params(v)? {
                                match (sub, sv) {
                                    (pi::PROTOCOL_OPTIONS, [o]) => c.protocol_options = Some(*o),
                                    (pi::VERSION_NUMBER, [ver]) => c.version = Some(*ver),
                                    (pi::PROTOCOL_OPTIONS | pi::VERSION_NUMBER, _) => {
                                        return Err(Error::malformed(
                                            Layer::Session,
                                            "connect/accept item",
                                            "parameter length is not 1",
                                        ))
                                    }
                                    _ => {}
                                }
                            }
                            // libiec61850: a present PGI 5 must hold PI 19 and PI 22 = v2.
                            if c.protocol_options.is_none() {
                                return Err(Error::malformed(
                                    Layer::Session,
                                    "connect/accept item",
                                    "protocol options missing",
                                ));
                            }
                            match c.version {
                                Some(v) if v & VERSION_2 != 0 => {}
                                _ => {
                                    return Err(Error::malformed(
                                        Layer::Session,
                                        "connect/accept item",
                                        "version 2 not offered",
                                    ))
                                }
                            }
                        }
                        pi::SESSION_USER_REQUIREMENTS => match v {
                            [a, b] => c.requirements = Some(u16::from_be_bytes([*a, *b])),
                            _ => {
                                return Err(Error::malformed(
                                    Layer::Session,
                                    "session user requirements",
                                    "length is not 2",
                                ))
                            }
                        },
                        pi::CALLING_SSEL => c.calling_ssel = Some(ssel(v)?),
                        pi::CALLED_SSEL => c.called_ssel = Some(ssel(v)?),
                        pi::USER_DATA => user = Some(v),
                        _ => {}
                    }
                }
                c.user_data = user.ok_or(Error::malformed(
                    Layer::Session,
                    "CONNECT/ACCEPT",
                    "no user data PGI",
                ))?;
                Ok(if id == si::CONNECT {
                    Spdu::Connect(c)
                } else {
                    Spdu::Accept(c)
                })
            }
            si::FINISH | si::DISCONNECT => {
                let user = ps
                    .iter()
                    .find(|(c, _)| *c == pi::USER_DATA)
                    .map(|(_, v)| *v)
                    .ok_or(Error::malformed(
                        Layer::Session,
                        "FINISH/DISCONNECT",
                        "no user data PGI",
                    ))?;
                Ok(if id == si::FINISH {
                    Spdu::Finish(user)
                } else {
                    Spdu::Disconnect(user)
                })
            }
            si::ABORT => {
                let mut td = None;
                let mut user: &[u8] = &[];
                for (code, v) in ps {
                    match (code, v) {
                        (pi::TRANSPORT_DISCONNECT, [t]) => td = Some(*t),
                        (pi::USER_DATA, v) => user = v,
                        _ => {}
                    }
                }
                Ok(Spdu::Abort {
                    transport_disconnect: td,
                    user_data: user,
                })
            }
            si::REFUSE => {
                let mut td = None;
                let mut reason = None;
                for (code, v) in ps {
                    match (code, v) {
                        (pi::TRANSPORT_DISCONNECT, [t]) => td = Some(*t),
                        (pi::REASON_CODE, [r, user @ ..]) => reason = Some((*r, user)),
                        _ => {}
                    }
                }
                let (reason, user_data) =
                    reason.ok_or(Error::malformed(Layer::Session, "REFUSE", "no reason code"))?;
                Ok(Spdu::Refuse {
                    transport_disconnect: td,
                    reason,
                    user_data,
                })
            }
            other => Err(Error::UnknownCode {
                layer: Layer::Session,
                what: "SPDU",
                code: other,
            }),
        }
    }
}

impl Codec for Spdu<'_> {
    sink_codec!();
}

impl Spdu<'_> {
    /// Write the encoding to `out`.
    fn encode(&self, out: &mut dyn Sink) {
        let id = match self {
            Spdu::Data(user) => {
                out.bytes(&DATA_PREFIX);
                out.bytes(user);
                return;
            }
            Spdu::Connect(_) => si::CONNECT,
            Spdu::Accept(_) => si::ACCEPT,
            Spdu::Finish(_) => si::FINISH,
            Spdu::Disconnect(_) => si::DISCONNECT,
            Spdu::Abort { .. } => si::ABORT,
            Spdu::Refuse { .. } => si::REFUSE,
        };
        write_unit(out, id, |body| match self {
            Spdu::Data(_) => {}
            Spdu::Connect(c) | Spdu::Accept(c) => {
                if c.protocol_options.is_some() || c.version.is_some() {
                    write_unit(body, pi::CONNECT_ACCEPT_ITEM, |item| {
                        write_pi(
                            item,
                            pi::PROTOCOL_OPTIONS,
                            &[c.protocol_options.unwrap_or(0)],
                        );
                        write_pi(item, pi::VERSION_NUMBER, &[c.version.unwrap_or(VERSION_2)]);
                    });
                }
                if let Some(r) = c.requirements {
                    write_pi(body, pi::SESSION_USER_REQUIREMENTS, &r.to_be_bytes());
                }
                if let Some(s) = c.calling_ssel {
                    write_pi(body, pi::CALLING_SSEL, s);
                }
                if let Some(s) = c.called_ssel {
                    write_pi(body, pi::CALLED_SSEL, s);
                }
                write_pi(body, pi::USER_DATA, c.user_data);
            }
            Spdu::Finish(u) | Spdu::Disconnect(u) => write_pi(body, pi::USER_DATA, u),
            Spdu::Abort {
                transport_disconnect,
                user_data,
            } => {
                if let Some(t) = transport_disconnect {
                    write_pi(body, pi::TRANSPORT_DISCONNECT, &[*t]);
                }
                if !user_data.is_empty() {
                    write_pi(body, pi::USER_DATA, user_data);
                }
            }
            Spdu::Refuse {
                transport_disconnect,
                reason,
                user_data,
            } => {
                if let Some(t) = transport_disconnect {
                    write_pi(body, pi::TRANSPORT_DISCONNECT, &[*t]);
                }
                write_unit(body, pi::REASON_CODE, |o| {
                    o.bytes(&[*reason]);
                    o.bytes(user_data);
                });
            }
        });
    }
}

impl<'a> Spdu<'a> {
    /// A short name for logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            Spdu::Connect(_) => "CONNECT",
            Spdu::Accept(_) => "ACCEPT",
            Spdu::Data(_) => "DATA",
            Spdu::Finish(_) => "FINISH",
            Spdu::Disconnect(_) => "DISCONNECT",
            Spdu::Abort { .. } => "ABORT",
            Spdu::Refuse { .. } => "REFUSE",
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
    fn golden_cn_prefix() {
        // `docs/mms-bytes.md` §1: 0D LI 05 06 13 01 00 16 01 02 14 02 00 02 33 02 0001 34 02 0001 C1 LI <CP>
        let cp = [0x31, 0x00];
        let cn = Spdu::Connect(ConnectSpdu::libiec61850_connect(&cp)).to_vec();
        assert_eq!(
            cn,
            h("0D 18 05 06 13 01 00 16 01 02 14 02 0002 33 02 0001 34 02 0001 C1 02 3100")
        );
        assert_eq!(
            Spdu::parse(&cn).unwrap(),
            Spdu::Connect(ConnectSpdu::libiec61850_connect(&cp))
        );
    }

    #[test]
    fn golden_ac_and_minimal_forms() {
        let cn = ConnectSpdu::libiec61850_connect(&[]);
        let cpa = [0x31, 0x00];
        let ac = Spdu::Accept(ConnectSpdu::libiec61850_accept(&cn, &cpa)).to_vec();
        assert_eq!(
            ac,
            h("0E 14 05 06 13 01 00 16 01 02 14 02 0002 34 02 0001 C1 02 3100")
        );
        // A CN of just C1 is accepted [V], and so is an AC without PGI 5 [V].
        let min = h("0D 04 C1 02 3100");
        let Spdu::Connect(c) = Spdu::parse(&min).unwrap() else {
            panic!()
        };
        assert_eq!((c.version, c.user_data), (None, &cpa[..]));
        assert!(matches!(
            Spdu::parse(&h("0E 08 34 02 0001 C1 02 3100")).unwrap(),
            Spdu::Accept(_)
        ));
    }

    #[test]
    fn golden_data_release_abort() {
        assert_eq!(
            Spdu::parse(&h("01000100 6100")).unwrap(),
            Spdu::Data(&[0x61, 0])
        );
        assert_eq!(Spdu::Finish(&[0x61, 0]).to_vec(), h("09 04 C1 02 6100"));
        assert_eq!(Spdu::Disconnect(&[0x61, 0]).to_vec(), h("0A 04 C1 02 6100"));
        let ab = Spdu::Abort {
            transport_disconnect: Some(ABORT_TRANSPORT_DISCONNECT),
            user_data: &[0xa0, 0],
        };
        assert_eq!(ab.to_vec(), h("19 07 11 01 0B C1 02 A000"));
        assert_eq!(Spdu::parse(&ab.to_vec()).unwrap(), ab);
        let rf = Spdu::Refuse {
            transport_disconnect: None,
            reason: 2,
            user_data: &[0x30, 0],
        };
        assert_eq!(Spdu::parse(&rf.to_vec()).unwrap(), rf);
    }

    #[test]
    fn libiec61850_checks() {
        for (bytes, why) in [
            ("01 00 01 01 00", "DATA not exact"),
            ("01 00", "DATA short"),
            ("0D 02 14 02", "truncated parameter"),
            ("0D 04 14 02 0002", "CN without user data"),
            ("0D 09 05 03 16 01 02 C1 02 3100", "PGI 5 without PI 19"),
            ("0D 0C 05 06 13 01 00 16 01 01 C1 02 3100", "version 1 only"),
            ("09 00", "FINISH without user data"),
            ("0D 04 C1 02 3100 FF", "trailing bytes"),
            ("0D 05 C1 02 3100", "LI too long"),
            ("1F 00", "unknown SPDU"),
            ("0C 00", "REFUSE without reason"),
            ("", "empty"),
        ] {
            assert!(Spdu::parse(&h(bytes)).is_err(), "{why}");
        }
        assert!(matches!(
            Spdu::parse(&h("1F 00")),
            Err(Error::UnknownCode { code: 0x1f, .. })
        ));
    }

    #[test]
    fn long_form_length() {
        let big = vec![0x55; 300];
        let cn = Spdu::Connect(ConnectSpdu::libiec61850_connect(&big));
        let bytes = cn.to_vec();
        assert_eq!(bytes[1], 0xff);
        assert_eq!(Spdu::parse(&bytes).unwrap(), cn);
    }

    proptest! {
        #[test]
        fn round_trip(user in proptest::collection::vec(any::<u8>(), 0..400),
                      ssel in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..=16)),
                      kind in 0u8..7, t in proptest::option::of(any::<u8>()), opt in any::<u8>()) {
            let c = ConnectSpdu { protocol_options: Some(opt), version: Some(VERSION_2),
                requirements: Some(2), calling_ssel: ssel.as_deref(), called_ssel: None, user_data: &user };
            let s = match kind {
                0 => Spdu::Connect(c), 1 => Spdu::Accept(c), 2 => Spdu::Data(&user),
                3 => Spdu::Finish(&user), 4 => Spdu::Disconnect(&user),
                5 => Spdu::Abort { transport_disconnect: t, user_data: &user },
                _ => Spdu::Refuse { transport_disconnect: t, reason: opt, user_data: &user },
            };
            let bytes = s.to_vec();
            prop_assert_eq!(s.buffer_len(), bytes.len());
            let mut buf = vec![0xee; bytes.len()];
            prop_assert_eq!(s.emit(&mut buf), bytes.len());
            prop_assert_eq!(&buf, &bytes);
            let back = Spdu::parse(&bytes).unwrap();
            // An empty ABORT user data round-trips as empty.
            prop_assert_eq!(back, s);
        }

        #[test]
        fn no_panic(data in proptest::collection::vec(any::<u8>(), 0..96)) {
            if let Ok(s) = Spdu::parse(&data) { let _ = s.to_vec(); }
        }
    }
}
