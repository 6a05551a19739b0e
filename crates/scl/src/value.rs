//! The syntax of a `Val` (IEC 61850-6 §9.5.4.3/§9.3.6: the initial value of a basic attribute,
//! in a DA/BDA template or a DAI), checked against the attribute's `bType` when the file is
//! read, so that `gander scl show` refuses what `gander mms server --scl` could not serve and
//! names the line of the `Val` itself.
//!
//! The value space of each basic type is IEC 61850-7-2 §6.2 / IEC 61850-8-1 Table 6 (integer
//! ranges, float widths, string lengths); the lexical form is the XML Schema type the SCL
//! schema gives `tVal` content for it (xs:boolean: `true`, `false`, `1`, `0`; xs:integer with an
//! optional sign; xs:float/xs:double including `INF`, `-INF`, `NaN`; an Enum's literal from its
//! EnumType, checked in `parse`). Types whose value the server does not take from the file (the
//! bit strings Quality, TrgOps, OptFlds, SvOptFlds, LogOptFlds; PhyComAddr; EntryID; Struct)
//! are not checked.

use crate::types::BasicType;

/// Why a value does not fit its type, or Ok.
pub(crate) fn check(btype: BasicType, v: &str) -> Result<(), &'static str> {
    use BasicType::*;
    match btype {
        Boolean => match v {
            "true" | "false" | "1" | "0" => Ok(()),
            _ => Err("a BOOLEAN is true, false, 1 or 0 (xs:boolean)"),
        },
        Int8 => int(
            v,
            -(1 << 7),
            (1 << 7) - 1,
            "an INT8 is an integer -128..127",
        ),
        Int16 => int(
            v,
            -(1 << 15),
            (1 << 15) - 1,
            "an INT16 is an integer -32768..32767",
        ),
        Int24 => int(
            v,
            -(1 << 23),
            (1 << 23) - 1,
            "an INT24 is an integer -8388608..8388607",
        ),
        Int32 => int(
            v,
            i32::MIN.into(),
            i32::MAX.into(),
            "an INT32 is an integer -2^31..2^31-1",
        ),
        Int64 => int(
            v,
            i64::MIN.into(),
            i64::MAX.into(),
            "an INT64 is an integer -2^63..2^63-1",
        ),
        Int128 => int(v, i128::MIN, i128::MAX, "an INT128 is an integer"),
        Int8U => int(v, 0, u8::MAX.into(), "an INT8U is an integer 0..255"),
        Int16U => int(v, 0, u16::MAX.into(), "an INT16U is an integer 0..65535"),
        Int24U => int(v, 0, (1 << 24) - 1, "an INT24U is an integer 0..16777215"),
        Int32U => int(v, 0, u32::MAX.into(), "an INT32U is an integer 0..2^32-1"),
        Float32 => float(v, true),
        Float64 => float(v, false),
        VisString32 => visible(
            v,
            32,
            "a VisString32 is at most 32 visible ASCII characters",
        ),
        VisString64 => visible(
            v,
            64,
            "a VisString64 is at most 64 visible ASCII characters",
        ),
        VisString65 => visible(
            v,
            65,
            "a VisString65 is at most 65 visible ASCII characters",
        ),
        VisString129 => visible(
            v,
            129,
            "a VisString129 is at most 129 visible ASCII characters",
        ),
        ObjRef => visible(v, 129, "an ObjRef is at most 129 visible ASCII characters"),
        VisString255 => visible(
            v,
            255,
            "a VisString255 is at most 255 visible ASCII characters",
        ),
        Unicode255 => {
            if v.chars().count() <= 255 {
                Ok(())
            } else {
                Err("a Unicode255 is at most 255 characters")
            }
        }
        Octet64 => {
            if v.len() <= 64 {
                Ok(())
            } else {
                Err("an Octet64 is at most 64 octets")
            }
        }
        Octet6 => {
            if v.len() <= 6 {
                Ok(())
            } else {
                Err("an Octet6 is at most 6 octets")
            }
        }
        Octet16 => {
            if v.len() <= 16 {
                Ok(())
            } else {
                Err("an Octet16 is at most 16 octets")
            }
        }
        Currency => {
            // ISO 4217 alphabetic code (IEC 61850-7-3 Ed.2 CUR).
            if v.len() == 3 && v.bytes().all(|b| b.is_ascii_uppercase()) {
                Ok(())
            } else {
                Err("a Currency is an ISO 4217 code of three capital letters")
            }
        }
        // IEC 61850-7-3 names the four states; files write them in full, shortened
        // (`intermediate`, `bad`: Efacec TPU220's IID) or as their codes 0..3.
        Dbpos => one_of(
            v,
            &[
                "intermediate-state",
                "intermediate",
                "off",
                "on",
                "bad-state",
                "bad",
                "0",
                "1",
                "2",
                "3",
            ],
            "a Dbpos is intermediate-state, off, on, bad-state or 0..3",
        ),
        Tcmd => one_of(
            v,
            &["stop", "lower", "higher", "reserved", "0", "1", "2", "3"],
            "a Tcmd is stop, lower, higher, reserved or 0..3",
        ),
        Timestamp | EntryTime => date_time(v),
        // Checked against the EnumType by the caller; the rest is not taken from the file.
        Enum | Struct | Quality | Check | TrgOps | OptFlds | SvOptFlds | LogOptFlds
        | PhyComAddr | EntryId => Ok(()),
    }
}

/// An xs:boolean literal written in another case (`False`, `TRUE`: the IOP 2019 SED writes
/// `<Val>False</Val>`), whose meaning is plain: the value, for a repair with a warning. The
/// strict forms are [`check`]'s.
pub(crate) fn boolean_any_case(v: &str) -> Option<bool> {
    if v.eq_ignore_ascii_case("true") {
        Some(true)
    } else if v.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

fn int(v: &str, min: i128, max: i128, why: &'static str) -> Result<(), &'static str> {
    match v.parse::<i128>() {
        Ok(x) if (min..=max).contains(&x) => Ok(()),
        _ => Err(why),
    }
}

/// xs:float / xs:double: a decimal or exponent form, `INF`, `-INF`, `NaN`; for FLOAT32, a
/// finite value must also be finite as an IEEE 754 single.
fn float(v: &str, single: bool) -> Result<(), &'static str> {
    let why = if single {
        "a FLOAT32 is a decimal number within the IEEE 754 single range, INF, -INF or NaN"
    } else {
        "a FLOAT64 is a decimal number, INF, -INF or NaN"
    };
    if matches!(v, "INF" | "-INF" | "+INF" | "NaN") {
        return Ok(());
    }
    // Rust also reads "inf", "infinity", "nan" in any case, which xs:float does not allow.
    if !v
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
    {
        return Err(why);
    }
    let finite = if single {
        v.parse::<f32>().map(f32::is_finite)
    } else {
        v.parse::<f64>().map(f64::is_finite)
    };
    match finite {
        Ok(true) => Ok(()),
        _ => Err(why),
    }
}

/// ISO 646 visible characters (space included), at most `max` (IEC 61850-8-1: MMS
/// VisibleString).
fn visible(v: &str, max: usize, why: &'static str) -> Result<(), &'static str> {
    if v.len() <= max && v.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        Ok(())
    } else {
        Err(why)
    }
}

fn one_of(v: &str, allowed: &[&str], why: &'static str) -> Result<(), &'static str> {
    if allowed.contains(&v) {
        Ok(())
    } else {
        Err(why)
    }
}

/// xs:dateTime: `YYYY-MM-DDThh:mm:ss`, an optional fraction, an optional `Z` or `±hh:mm`.
fn date_time(v: &str) -> Result<(), &'static str> {
    const WHY: &str = "a Timestamp is an xs:dateTime, YYYY-MM-DDThh:mm:ss[.fff][Z|+hh:mm]";
    let b = v.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r.clone())
            .filter(|s| s.iter().all(u8::is_ascii_digit))
            .map(|s| s.iter().fold(0u32, |a, d| a * 10 + u32::from(d - b'0')))
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    let ok = (|| {
        let (mo, d, h, mi, s) = (
            digits(5..7)?,
            digits(8..10)?,
            digits(11..13)?,
            digits(14..16)?,
            digits(17..19)?,
        );
        digits(0..4)?;
        let shape = at(4, b'-') && at(7, b'-') && at(10, b'T') && at(13, b':') && at(16, b':');
        let ranges = (1..=12).contains(&mo) && (1..=31).contains(&d) && h < 24 && mi < 60 && s < 61;
        if !shape || !ranges {
            return None;
        }
        let mut i = 19;
        if at(i, b'.') {
            i += 1;
            let n = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return None;
            }
            i += n;
        }
        match b.get(i) {
            None => Some(()),
            Some(b'Z') if i + 1 == b.len() => Some(()),
            Some(b'+' | b'-') if b.len() == i + 6 && at(i + 3, b':') => {
                let (oh, om) = (digits(i + 1..i + 3)?, digits(i + 4..i + 6)?);
                (oh <= 14 && om < 60).then_some(())
            }
            _ => None,
        }
    })();
    ok.ok_or(WHY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use BasicType::*;

    #[test]
    fn values_by_type() {
        for (t, good, bad) in [
            (
                Boolean,
                &["true", "false", "1", "0"][..],
                &["False", "TRUE", "yes", ""][..],
            ),
            (Int8, &["-128", "127", "+5"], &["128", "-129", "1.0", "x"]),
            (Int24, &["-8388608", "8388607"], &["8388608"]),
            (Int8U, &["0", "255"], &["-1", "256"]),
            (Int24U, &["16777215"], &["16777216"]),
            (Int32U, &["4294967295"], &["4294967296", "-1"]),
            (Int64, &["-9223372036854775808"], &["9223372036854775808"]),
            (
                Float32,
                &["1.5", "-2e3", "INF", "-INF", "NaN", "0"],
                &["1e39", "inf", "1,5", "x"],
            ),
            (Float64, &["1e300", "-0.0"], &["1e309", "nan"]),
            (VisString32, &["abc", ""], &["é", "\t"]),
            (Currency, &["EUR"], &["eur", "EURO"]),
            (
                Dbpos,
                &["on", "intermediate-state", "intermediate", "3"],
                &["closed", "4"],
            ),
            (Tcmd, &["higher"], &["up"]),
            (
                Timestamp,
                &[
                    "2020-01-31T23:59:59Z",
                    "2020-01-31T23:59:59.123+01:00",
                    "2020-01-31T00:00:00",
                ],
                &[
                    "2020-01-31",
                    "2020-13-01T00:00:00Z",
                    "2020-01-31T24:00:00Z",
                    "2020-01-31T00:00:00.Z",
                    "2020-01-31T00:00:00+1:00",
                ],
            ),
        ] {
            for g in good {
                assert_eq!(check(t, g), Ok(()), "{t:?} {g}");
            }
            for b in bad {
                assert!(check(t, b).is_err(), "{t:?} {b}");
            }
        }
        assert!(check(VisString32, &"a".repeat(32)).is_ok());
        assert!(check(VisString32, &"a".repeat(33)).is_err());
        assert!(check(Unicode255, &"é".repeat(255)).is_ok());
        assert!(check(Unicode255, &"é".repeat(256)).is_err());
        // Another case is no xs:boolean, but its meaning is read for a repair.
        assert_eq!(boolean_any_case("False"), Some(false));
        assert_eq!(boolean_any_case("TRUE"), Some(true));
        assert_eq!(boolean_any_case("yes"), None);
        assert_eq!(boolean_any_case("0"), None);
    }

    proptest! {
        /// Every integer in an INT type's range is written and read back as valid; the first
        /// outside it is not.
        #[test]
        fn integers_in_range(x in any::<i16>(), y in any::<u32>()) {
            prop_assert!(check(Int16, &x.to_string()).is_ok());
            prop_assert!(check(Int32U, &y.to_string()).is_ok());
            prop_assert!(check(Int16, &(i32::from(x) + 65536).to_string()).is_err());
        }

        /// Every finite f32 as Rust writes it is a valid FLOAT32.
        #[test]
        fn floats(x in any::<f32>().prop_filter("finite", |f| f.is_finite())) {
            prop_assert!(check(Float32, &x.to_string()).is_ok());
            let e = format!("{x:e}");
            prop_assert!(check(Float32, &e).is_ok());
        }

        /// Any text for any type: a verdict, never a panic.
        #[test]
        fn any_text(t in ".{0,40}") {
            for (_, b) in crate::types::BASIC {
                let _ = check(b, &t);
            }
        }
    }
}
