//! IEC 61850 object references as users type them, turned into MMS names (IEC 61850-8-1
//! clause 8: `LD/LN.FC.DO.DA` is the domain `LD` and the item `LN$FC$DO$DA`). One place for
//! the probe's `--read` and `--reports` and `gander run`'s `rcb`.
use gander_mms::rcb_plan::RcbRef;
use gander_mms::service::ObjectName;

/// A control-block reference `LD/LN.RP.name` or `LD/LN.BR.name` (or the MMS spelling
/// `LD/LN$BR$name`).
pub fn parse_rcb(r: &str) -> Option<RcbRef> {
    let (domain, rest) = r.split_once('/')?;
    if domain.is_empty() {
        return None;
    }
    RcbRef::parse(domain, &rest.replace('.', "$"))
}

/// A data attribute or data object with its functional constraint: `LD/LN$FC$DO[$DA...]` or
/// `LD/LN.FC.DO[.DA...]`; at least LN, FC and DO.
pub fn parse_variable(s: &str) -> Option<ObjectName> {
    let (ld, item) = s.split_once('/')?;
    let item = item.replace('.', "$");
    let mut parts = item.split('$');
    let three = [parts.next()?, parts.next()?, parts.next()?];
    (!ld.is_empty() && three.iter().all(|p| !p.is_empty())).then(|| ObjectName::domain(ld, item))
}

/// A data set reference as a control block's `DatSet` holds it (`LD/LN$name`, IEC 61850-8-1
/// 17.2.2) as an MMS name.
pub fn data_set_name(dat_set: &str) -> Option<ObjectName> {
    let (domain, item) = dat_set.split_once('/')?;
    (!domain.is_empty() && !item.is_empty()).then(|| ObjectName::domain(domain, item))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gander_mms::rcb_plan::RcbKind;
    use proptest::prelude::*;

    #[test]
    fn rcb_references_parse_as_iec_61850_writes_them() {
        let r = parse_rcb("PROTLD0/LLN0.BR.brcbA01").unwrap();
        assert_eq!((r.domain.as_str(), r.ln.as_str()), ("PROTLD0", "LLN0"));
        assert_eq!((r.kind, r.name.as_str()), (RcbKind::Buffered, "brcbA01"));
        assert_eq!(
            parse_rcb("IMPLD0/LLN0.RP.urcb01").unwrap().item(),
            "LLN0$RP$urcb01"
        );
        assert_eq!(parse_rcb("LD/LLN0$RP$x"), parse_rcb("LD/LLN0.RP.x"));
        for bad in [
            "LLN0.RP.x",
            "/LLN0.RP.x",
            "LD/LLN0.ST.x",
            "LD/LLN0.RP",
            "LD/LLN0.RP.x.y",
        ] {
            assert!(parse_rcb(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn variables_in_both_spellings() {
        let a = parse_variable("MEAS/MMXU1$MX$TotW$mag$f").unwrap();
        let b = parse_variable("MEAS/MMXU1.MX.TotW.mag.f").unwrap();
        assert_eq!(a, b);
        assert_eq!(a, ObjectName::domain("MEAS", "MMXU1$MX$TotW$mag$f"));
        for bad in ["MEAS/MMXU1", "/MMXU1.MX.TotW", "nothing", "LD/LN..DO"] {
            assert!(parse_variable(bad).is_none(), "{bad}");
        }
        assert_eq!(
            data_set_name("LD/LLN0$DS1"),
            Some(ObjectName::domain("LD", "LLN0$DS1"))
        );
        assert_eq!(data_set_name("LLN0$DS1"), None);
    }

    proptest! {
        /// Dotted and dollar spellings of the same reference give the same MMS name, and the
        /// name spells the reference back.
        #[test]
        fn spellings_agree(ld in "[A-Z][A-Za-z0-9]{0,8}",
                           parts in proptest::collection::vec("[A-Za-z][A-Za-z0-9]{0,6}", 3..6)) {
            let dollar = format!("{ld}/{}", parts.join("$"));
            let dotted = format!("{ld}/{}", parts.join("."));
            let a = parse_variable(&dollar).unwrap();
            prop_assert_eq!(&a, &parse_variable(&dotted).unwrap());
            prop_assert_eq!(a, ObjectName::domain(ld, parts.join("$")));
        }

        /// No input panics.
        #[test]
        fn any_text_is_safe(s in ".{0,40}") {
            let _ = parse_variable(&s);
            let _ = parse_rcb(&s);
            let _ = data_set_name(&s);
        }
    }
}
