//! The control service parameters as IEC 61850-8-1 clause 20 maps them to MMS: a control
//! object `LN$CO$DO` has the structures `Oper`, `SBOw` and `Cancel`, written by the client,
//! and the VisibleString `SBO`, read by the client to select (sbo-with-normal-security).
//!
//! ```text
//! Oper / SBOw STRUCTURE { ctlVal, [operTm UtcTime], origin STRUCTURE { orCat, orIdent },
//!                         [ctlNum INT8U], T (UtcTime; BinaryTime in Ed.1), Test BOOLEAN,
//!                         Check BIT STRING(2) }
//! Cancel      STRUCTURE { ctlVal, [operTm], origin, [ctlNum], T, Test }
//! ```
//!
//! `operTm` is present only where the CDC offers time-activated control, `ctlNum` is absent in
//! some Ed.1 APC types; the components differ in MMS kind, so a value is decoded without its
//! type description (the same positional rule libiec61850 1.6 applies). Check is bit 0
//! synchrocheck, bit 1 interlock-check (IEC 61850-7-2 20.2.2.x `Check`).

use gander_wire::data::Data;

use crate::bit_string::BitString;
use crate::last_appl_error::Origin;

/// Which of the three written structures a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlService {
    /// `Oper`: operate (IEC 61850-7-2 20.6 Operate / TimeActivatedOperate).
    Operate,
    /// `SBOw`: select with value (IEC 61850-7-2 20.5 SelectWithValue).
    SelectWithValue,
    /// `Cancel` (IEC 61850-7-2 20.7).
    Cancel,
}

impl ControlService {
    /// The MMS component name under `LN$CO$DO`.
    pub fn component(self) -> &'static str {
        match self {
            ControlService::Operate => "Oper",
            ControlService::SelectWithValue => "SBOw",
            ControlService::Cancel => "Cancel",
        }
    }

    /// The service written to component `name`, if it is one.
    pub fn from_component(name: &str) -> Option<Self> {
        match name {
            "Oper" => Some(ControlService::Operate),
            "SBOw" => Some(ControlService::SelectWithValue),
            "Cancel" => Some(ControlService::Cancel),
            _ => None,
        }
    }

    fn has_check(self) -> bool {
        !matches!(self, ControlService::Cancel)
    }
}

/// The `T` of a control: UtcTime (Ed.2) or BinaryTime (Ed.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlTime {
    /// IEC 61850-8-1 Ed.2 TimeStamp (8.1.3.7).
    Utc([u8; 8]),
    /// Ed.1 EntryTime/TimeOfDay octets (4 or 6).
    Binary(Vec<u8>),
}

impl ControlTime {
    fn to_data(&self) -> Data {
        match self {
            ControlTime::Utc(t) => Data::UtcTime(*t),
            ControlTime::Binary(b) => Data::BinaryTime(b.clone()),
        }
    }
}

/// The Check condition (IEC 61850-7-2 20.2.2: the server performs these checks before it
/// operates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Check {
    /// Bit 0: synchrocheck.
    pub synchrocheck: bool,
    /// Bit 1: interlock-check.
    pub interlock: bool,
}

impl Check {
    /// The BIT STRING(2) value.
    pub fn to_data(self) -> Data {
        let mut b = BitString::new(2);
        b.set(0, self.synchrocheck);
        b.set(1, self.interlock);
        b.to_data()
    }

    fn from_data(d: &Data) -> Option<Self> {
        let b = BitString::from_data(d)?;
        if b.len() < 2 {
            return None;
        }
        Some(Check {
            synchrocheck: b.get(0),
            interlock: b.get(1),
        })
    }
}

/// One decoded Oper, SBOw or Cancel value.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlParams {
    /// Which structure.
    pub service: ControlService,
    /// ctlVal: the commanded value (BOOLEAN for SPC/DPC, INTEGER for INC/ENC, the
    /// AnalogueValue structure for APC, Tcmd BIT STRING for BSC).
    pub ctl_val: Data,
    /// operTm: when a time-activated operate executes (absent when the CDC has none).
    pub oper_tm: Option<[u8; 8]>,
    /// origin.
    pub origin: Origin,
    /// ctlNum (absent in some Ed.1 APCs).
    pub ctl_num: Option<u8>,
    /// T: when the client issued the command.
    pub t: ControlTime,
    /// Test: the command is a test, the process must not be changed (IEC 61850-7-2 20.2.2).
    pub test: bool,
    /// Check (Oper and SBOw only; `None` for Cancel).
    pub check: Option<Check>,
}

/// Why a written value is not a control structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    /// The value is not a structure.
    #[error("a control value must be a structure")]
    NotAStructure,
    /// A component is missing or of the wrong MMS kind.
    #[error("control structure: {0} missing or of the wrong MMS type")]
    Component(&'static str),
    /// More components than the layout has.
    #[error("control structure: trailing components")]
    Trailing,
}

impl ControlParams {
    /// Decode the value written to `service`'s structure.
    pub fn from_data(service: ControlService, value: &Data) -> Result<Self, ParamsError> {
        let Data::Structure(c) = value else {
            return Err(ParamsError::NotAStructure);
        };
        let mut it = c.iter().peekable();
        let ctl_val = it.next().ok_or(ParamsError::Component("ctlVal"))?.clone();
        let oper_tm = match it.peek() {
            Some(Data::UtcTime(t)) => {
                let t = *t;
                it.next();
                Some(t)
            }
            _ => None,
        };
        let origin = match it.next() {
            Some(Data::Structure(o)) => match o.as_slice() {
                [Data::Integer(c), Data::OctetString(id)] => Origin {
                    or_cat: *c,
                    or_ident: id.clone(),
                },
                _ => return Err(ParamsError::Component("origin")),
            },
            _ => return Err(ParamsError::Component("origin")),
        };
        let ctl_num = match it.peek() {
            Some(Data::Unsigned(n)) => {
                let n = u8::try_from(*n).map_err(|_| ParamsError::Component("ctlNum"))?;
                it.next();
                Some(n)
            }
            _ => None,
        };
        let t = match it.next() {
            Some(Data::UtcTime(t)) => ControlTime::Utc(*t),
            Some(Data::BinaryTime(b)) => ControlTime::Binary(b.clone()),
            _ => return Err(ParamsError::Component("T")),
        };
        let test = match it.next() {
            Some(Data::Boolean(b)) => *b,
            _ => return Err(ParamsError::Component("Test")),
        };
        let check = if service.has_check() {
            Some(
                it.next()
                    .and_then(Check::from_data)
                    .ok_or(ParamsError::Component("Check"))?,
            )
        } else {
            None
        };
        if it.next().is_some() {
            return Err(ParamsError::Trailing);
        }
        Ok(ControlParams {
            service,
            ctl_val,
            oper_tm,
            origin,
            ctl_num,
            t,
            test,
            check,
        })
    }

    /// The structure as written (the inverse of [`ControlParams::from_data`]; a `check` on a
    /// Cancel is not emitted, a missing one on Oper/SBOw is emitted as no checks).
    pub fn to_data(&self) -> Data {
        let mut c = vec![self.ctl_val.clone()];
        if let Some(t) = self.oper_tm {
            c.push(Data::UtcTime(t));
        }
        c.push(Data::Structure(vec![
            Data::Integer(self.origin.or_cat),
            Data::OctetString(self.origin.or_ident.clone()),
        ]));
        if let Some(n) = self.ctl_num {
            c.push(Data::Unsigned(n.into()));
        }
        c.push(self.t.to_data());
        c.push(Data::Boolean(self.test));
        if self.service.has_check() {
            c.push(self.check.unwrap_or_default().to_data());
        }
        Data::Structure(c)
    }

    /// Whether an Operate repeats the SelectWithValue it follows, as IEC 61850-7-2 20.5.2
    /// requires for sbo-with-enhanced-security (same ctlVal, origin, ctlNum, Test, Check;
    /// `T` and `operTm` may differ).
    pub fn same_command(&self, other: &ControlParams) -> bool {
        self.ctl_val == other.ctl_val
            && self.origin == other.origin
            && self.ctl_num == other.ctl_num
            && self.test == other.test
            && self.check.unwrap_or_default() == other.check.unwrap_or_default()
    }
}

/// What a Read of `SBO` returns: the control object's reference `LD/LN$CO$DO` when the select
/// succeeded, an empty string when it failed (IEC 61850-8-1 20.x, as libiec61850 1.6 answers).
pub fn sbo_value(selected: Option<&str>) -> Data {
    Data::VisibleString(selected.unwrap_or("").to_string())
}

/// The result of an `SBO` read as the client sees it: `Some(reference)` when selected.
pub fn sbo_selected(value: &Data) -> Option<&str> {
    match value {
        Data::VisibleString(s) if !s.is_empty() => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_wire::Codec;
    use proptest::prelude::*;

    fn sample(service: ControlService) -> ControlParams {
        ControlParams {
            service,
            ctl_val: Data::Boolean(true),
            oper_tm: None,
            origin: Origin {
                or_cat: 3,
                or_ident: b"gander".to_vec(),
            },
            ctl_num: Some(1),
            t: ControlTime::Utc([0x65, 0, 0, 0, 0, 0, 0, 0x0a]),
            test: false,
            check: service.has_check().then_some(Check {
                synchrocheck: false,
                interlock: true,
            }),
        }
    }

    #[test]
    fn libiec61850_oper_layout() {
        // The order libiec61850's ControlObjectClient writes (client_control.c): ctlVal,
        // origin, ctlNum, T, Test, Check with interlock in bit 1.
        let d = sample(ControlService::Operate).to_data();
        let Data::Structure(c) = &d else { panic!() };
        assert_eq!(c.len(), 6);
        assert_eq!(
            c[5],
            Data::BitString {
                unused_bits: 6,
                bytes: vec![0x40]
            }
        );
        assert_eq!(
            ControlParams::from_data(ControlService::Operate, &d),
            Ok(sample(ControlService::Operate))
        );
        // Cancel has no Check.
        let d = sample(ControlService::Cancel).to_data();
        let Data::Structure(c) = &d else { panic!() };
        assert_eq!(c.len(), 5);
        // An Oper without its Check is refused, a Cancel with one too.
        assert_eq!(
            ControlParams::from_data(ControlService::Operate, &d),
            Err(ParamsError::Component("Check"))
        );
        assert_eq!(
            ControlParams::from_data(
                ControlService::Cancel,
                &sample(ControlService::Operate).to_data()
            ),
            Err(ParamsError::Trailing)
        );
    }

    #[test]
    fn wrong_shapes() {
        use ControlService::Operate as O;
        assert_eq!(
            ControlParams::from_data(O, &Data::Boolean(true)),
            Err(ParamsError::NotAStructure)
        );
        assert_eq!(
            ControlParams::from_data(O, &Data::Structure(vec![])),
            Err(ParamsError::Component("ctlVal"))
        );
        let Data::Structure(mut c) = sample(O).to_data() else {
            panic!()
        };
        c[1] = Data::Structure(vec![Data::Integer(3)]);
        assert_eq!(
            ControlParams::from_data(O, &Data::Structure(c.clone())),
            Err(ParamsError::Component("origin"))
        );
        c[1] = sample(O).to_data().as_structure_at(1);
        c[2] = Data::Unsigned(256);
        assert_eq!(
            ControlParams::from_data(O, &Data::Structure(c)),
            Err(ParamsError::Component("ctlNum"))
        );
    }

    trait At {
        fn as_structure_at(&self, i: usize) -> Data;
    }
    impl At for Data {
        fn as_structure_at(&self, i: usize) -> Data {
            match self {
                Data::Structure(c) => c[i].clone(),
                _ => Data::Boolean(false),
            }
        }
    }

    #[test]
    fn sbo() {
        assert_eq!(
            sbo_selected(&sbo_value(Some("LD/LN$CO$Pos"))),
            Some("LD/LN$CO$Pos")
        );
        assert_eq!(sbo_selected(&sbo_value(None)), None);
        assert_eq!(sbo_selected(&Data::Boolean(true)), None);
    }

    fn ctl_val() -> impl Strategy<Value = Data> {
        prop_oneof![
            any::<bool>().prop_map(Data::Boolean),
            any::<i64>().prop_map(Data::Integer),
            any::<f32>()
                .prop_filter("NaN", |f| !f.is_nan())
                .prop_map(|f| Data::Structure(vec![Data::FloatingPoint32(f)])),
            (0u8..4).prop_map(|v| {
                let mut b = BitString::new(2);
                b.set(0, v & 2 != 0);
                b.set(1, v & 1 != 0);
                b.to_data()
            }),
        ]
    }

    fn service() -> impl Strategy<Value = ControlService> {
        prop_oneof![
            Just(ControlService::Operate),
            Just(ControlService::SelectWithValue),
            Just(ControlService::Cancel),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(service in service(), ctl_val in ctl_val(),
                      oper_tm in proptest::option::of(any::<[u8; 8]>()),
                      or_cat in any::<i64>(), or_ident in proptest::collection::vec(any::<u8>(), 0..64),
                      ctl_num in proptest::option::of(any::<u8>()),
                      utc in any::<bool>(), t in any::<[u8; 8]>(), test in any::<bool>(),
                      sc in any::<bool>(), il in any::<bool>()) {
            let p = ControlParams {
                service, ctl_val, oper_tm,
                origin: Origin { or_cat, or_ident },
                ctl_num,
                t: if utc { ControlTime::Utc(t) } else { ControlTime::Binary(t[..6].to_vec()) },
                test,
                check: service.has_check().then_some(Check { synchrocheck: sc, interlock: il }),
            };
            // Through the BER Data codec, as on the wire.
            let d = Data::parse(&p.to_data().to_vec()).unwrap();
            prop_assert_eq!(ControlParams::from_data(service, &d), Ok(p));
        }

        #[test]
        fn any_value_no_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(d) = Data::parse(&bytes) {
                for s in [ControlService::Operate, ControlService::SelectWithValue, ControlService::Cancel] {
                    if let Ok(p) = ControlParams::from_data(s, &d) {
                        prop_assert_eq!(ControlParams::from_data(s, &p.to_data()), Ok(p));
                    }
                }
            }
        }
    }
}
