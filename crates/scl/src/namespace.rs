//! The root element and its namespace: what makes a file SCL at all.
//!
//! IEC 61850-6 puts every SCL element in `http://www.iec.ch/61850/2003/SCL`, and every edition
//! (2003, 2007 Ed.2, 2009 Ed.2.1) keeps that namespace; a root in no namespace is read too,
//! since some tools write SCL without one. One foreign namespace is known to be SCL under
//! another name: `http://www.iec.ch/61850/2006/SCL`, from a draft of the second edition's
//! schema, which tools generated from that schema write: rapid61850's Eclipse EMF model of SCL
//! (stevenblair/rapid61850, whose `LEx2GOOSE.scd` carries it), JAXB bindings generated from
//! the same schema. Such a file is read under the quirk
//! [`DRAFT_2006_QUIRK`] with a warning on every IED; any other namespace, or a root that is
//! not `SCL`, refuses the file: nothing in it can be taken for SCL.

use crate::error::SclErrorKind;
use crate::parse::{SCL_NS, SCL_NS_DRAFT_2006};
use crate::warning::Repair;
use roxmltree::Node;

/// The quirk's name, as warnings and docs/scl.md give it.
pub const DRAFT_2006_QUIRK: &str = "scl-2006-draft-namespace";

/// Whether `root` is an SCL root: Ok(None) for the SCL namespace or none, Ok(Some(repair))
/// for the draft namespace read under its quirk, Err for anything else.
pub(crate) fn check_root(root: Node) -> Result<Option<(SclErrorKind, Repair)>, SclErrorKind> {
    if root.tag_name().name() != "SCL" {
        return Err(SclErrorKind::NotScl(root.tag_name().name().into()));
    }
    match root.tag_name().namespace() {
        None => Ok(None),
        Some(ns) if ns == SCL_NS => Ok(None),
        Some(ns) if ns == SCL_NS_DRAFT_2006 => Ok(Some((
            SclErrorKind::WrongNamespace { found: ns.into() },
            Repair::NamespaceQuirk {
                quirk: DRAFT_2006_QUIRK,
                tools: "an IEC 61850-6 Ed.2 draft schema's namespace, written by tools generated from it such as rapid61850's EMF SCL model",
            },
        ))),
        Some(ns) => Err(SclErrorKind::WrongNamespace { found: ns.into() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_of(xml: &str) -> Result<Option<(SclErrorKind, Repair)>, SclErrorKind> {
        let d = roxmltree::Document::parse(xml).unwrap();
        check_root(d.root_element())
    }

    #[test]
    fn only_scl_and_the_named_draft_are_read() {
        assert_eq!(root_of(&format!("<SCL xmlns=\"{SCL_NS}\"/>")), Ok(None));
        assert_eq!(root_of("<SCL/>"), Ok(None));
        let quirk = root_of(&format!("<SCL xmlns=\"{SCL_NS_DRAFT_2006}\"/>"))
            .unwrap()
            .unwrap();
        assert_eq!(quirk.1.token(), "namespace-quirk");
        for other in [
            "http://www.iec.ch/61850/2007/SCL",
            "http://www.iec.ch/61850/2003/SCL/",
            "urn:x",
        ] {
            assert!(matches!(
                root_of(&format!("<SCL xmlns=\"{other}\"/>")),
                Err(SclErrorKind::WrongNamespace { .. })
            ));
        }
        assert!(matches!(
            root_of(&format!("<ICD xmlns=\"{SCL_NS}\"/>")),
            Err(SclErrorKind::NotScl(_))
        ));
    }
}
