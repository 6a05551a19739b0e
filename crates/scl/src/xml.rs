//! The XML of an SCL file, and the one repair real files need before it parses: a namespace
//! prefix used without a declaration.
//!
//! Namespaces in XML 1.0 §5 ("Namespace Constraint: Prefix Declared") makes an undeclared
//! prefix an error of the namespace layer, though the document is well-formed XML 1.0, and a
//! namespace-aware parser (roxmltree) refuses the whole file. Tools write such files:
//! smartgridadsc/CyberRange's `standalone.sed` (toolID `SSI-Tool`) puts
//! `<P type="IP" xsi:type="tP_IP">` in its Communication section without declaring `xsi`,
//! and lost all six IEDs to that one attribute, while libiec61850's model generator (a SAX
//! parser that is not namespace-aware) reads it. The prefix's meaning is plain for the XML
//! Schema prefixes (`xsi`, `xs`/`xsd`), and no SCL element or attribute gander reads is in
//! another namespace, so the prefix is declared on the root element (`xsi` and `xs` as the
//! W3C namespaces, any other as a namespace of its own that no SCL reader matches) and the
//! file is read, with a warning on every IED naming the prefix and where it was first used.

use std::borrow::Cow;

use roxmltree::{Document, ParsingOptions};

use crate::error::{Position, SclError, SclErrorKind};
use crate::warning::Repair;

/// An SCL attribute: one without a namespace (IEC 61850-6's schema declares its attributes
/// unqualified). roxmltree's `Node::attribute("type")` matches the local name in any
/// namespace, and returns the first: `<P xsi:type="tP_IP" type="IP">`, which tools write
/// (the IOP 2019 multi-vendor SED's Communication section, a SEL/Novatech merging unit and
/// client), read as type `tP_IP`, so the IED's IP address was not found and the sweep of the
/// SCD left it out. Every attribute gander-scl reads goes through this.
pub(crate) trait SclAttr<'a> {
    /// The value of the unqualified attribute `name`.
    fn scl_attr(&self, name: &str) -> Option<&'a str>;
}

impl<'a, 'input: 'a> SclAttr<'a> for roxmltree::Node<'a, 'input> {
    fn scl_attr(&self, name: &str) -> Option<&'a str> {
        self.attributes()
            .find(|a| a.namespace().is_none() && a.name() == name)
            .map(|a| a.value())
    }
}

/// At most this many prefixes are declared for a file (each costs a parse of the whole text).
const MAX_DECLARED: usize = 8;

/// The parser's options for every SCL reader: no DTD (SCL needs none; refusing one keeps
/// entity expansion out).
pub(crate) fn options<'a>() -> ParsingOptions<'a> {
    ParsingOptions {
        allow_dtd: false,
        ..Default::default()
    }
}

/// The text to parse (the file's, or with prefixes declared on its root) and the repairs made.
pub(crate) struct Prepared<'t> {
    /// What [`Document::parse_with_options`] reads.
    pub text: Cow<'t, str>,
    /// One per prefix declared: the problem (at its first use) and the repair.
    pub repairs: Vec<(SclError, Repair)>,
}

impl Prepared<'_> {
    /// The parsed document.
    pub(crate) fn document(&self) -> Result<Document<'_>, SclError> {
        Document::parse_with_options(&self.text, options()).map_err(xml_error)
    }
}

fn xml_error(e: roxmltree::Error) -> SclError {
    let p = e.pos();
    SclError::new(
        SclErrorKind::Xml(e.to_string()),
        Some(Position {
            line: p.row,
            column: p.col,
        }),
    )
}

/// The namespace a prefix used without a declaration is taken to mean.
fn namespace_for(prefix: &str) -> String {
    match prefix {
        "xsi" => "http://www.w3.org/2001/XMLSchema-instance".into(),
        "xs" | "xsd" => "http://www.w3.org/2001/XMLSchema".into(),
        other => format!("urn:gander:undeclared-prefix:{other}"),
    }
}

/// Whether `s` is a prefix that can be declared as written (an NCName of ASCII letters,
/// digits, `_`, `-` and `.`, not starting with a digit, `-` or `.`, and not `xml`/`xmlns`).
fn declarable(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || matches!(x, '_' | '-' | '.'))
        && !s.eq_ignore_ascii_case("xml")
        && !s.eq_ignore_ascii_case("xmlns")
}

/// The byte offset just after the root element's name in its start tag, skipping the XML
/// declaration, processing instructions, comments and a DOCTYPE before it.
fn after_root_name(text: &str) -> Option<usize> {
    let mut i = 0;
    loop {
        i += text.get(i..)?.find('<')?;
        let rest = &text[i..];
        if rest.starts_with("<?") {
            i += rest.find("?>")? + 2;
        } else if rest.starts_with("<!--") {
            i += rest.find("-->")? + 3;
        } else if rest.starts_with("<!") {
            i += rest.find('>')? + 1;
        } else {
            let name_len = rest[1..]
                .find(|c: char| c.is_whitespace() || c == '/' || c == '>')
                .unwrap_or(rest.len() - 1);
            return Some(i + 1 + name_len);
        }
    }
}

/// Parses `text` once to find what it needs: the text as it is, or with each prefix used
/// without a declaration declared on the root (see the module documentation).
pub(crate) fn prepare(text: &str) -> Result<Prepared<'_>, SclError> {
    let mut current: Cow<str> = Cow::Borrowed(text);
    let mut repairs = Vec::new();
    loop {
        let err = match Document::parse_with_options(&current, options()) {
            Ok(_) => {
                return Ok(Prepared {
                    text: current,
                    repairs,
                })
            }
            Err(e) => e,
        };
        let roxmltree::Error::UnknownNamespace(prefix, pos) = &err else {
            return Err(xml_error(err));
        };
        if repairs.len() == MAX_DECLARED || !declarable(prefix) {
            return Err(xml_error(err));
        }
        let Some(at) = after_root_name(&current) else {
            return Err(xml_error(err));
        };
        let namespace = namespace_for(prefix);
        let mut patched = String::with_capacity(current.len() + 64);
        patched.push_str(&current[..at]);
        patched.push_str(&format!(" xmlns:{prefix}=\"{namespace}\""));
        patched.push_str(&current[at..]);
        repairs.push((
            SclError::new(
                SclErrorKind::UndeclaredPrefix {
                    prefix: prefix.clone(),
                },
                Some(Position {
                    line: pos.row,
                    column: pos.col,
                }),
            ),
            Repair::PrefixDeclared {
                prefix: prefix.clone(),
                namespace,
            },
        ));
        current = Cow::Owned(patched);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_undeclared_xsi_prefix_is_declared_and_said() {
        let text = "<?xml version=\"1.0\"?>\n<!-- a tool -->\n<SCL xmlns=\"http://www.iec.ch/61850/2003/SCL\">\n\
                    <Communication><SubNetwork name=\"n\"><ConnectedAP iedName=\"I\" apName=\"P\">\
                    <Address><P type=\"IP\" xsi:type=\"tP_IP\">10.0.0.1</P></Address>\
                    </ConnectedAP></SubNetwork></Communication></SCL>";
        assert!(
            Document::parse(text).is_err(),
            "roxmltree refuses it as written"
        );
        let p = prepare(text).unwrap();
        assert_eq!(p.repairs.len(), 1);
        let (e, r) = &p.repairs[0];
        assert_eq!(e.at.map(|a| a.line), Some(4));
        assert_eq!(
            r,
            &Repair::PrefixDeclared {
                prefix: "xsi".into(),
                namespace: "http://www.w3.org/2001/XMLSchema-instance".into()
            }
        );
        let d = p.document().unwrap();
        assert_eq!(d.root_element().tag_name().name(), "SCL");
    }

    #[test]
    fn two_prefixes_and_a_file_as_written() {
        let text = "<SCL><A a:x=\"1\" b:y=\"2\"/></SCL>";
        let p = prepare(text).unwrap();
        assert_eq!(p.repairs.len(), 2);
        assert!(p.text.starts_with("<SCL xmlns:"));
        let clean = "<SCL><A x=\"1\"/></SCL>";
        let p = prepare(clean).unwrap();
        assert!(p.repairs.is_empty() && matches!(p.text, Cow::Borrowed(_)));
    }

    #[test]
    fn other_xml_errors_stay_errors() {
        for bad in ["<SCL><A></SCL>", "", "<SCL", "<!DOCTYPE x []><SCL/>"] {
            let e = prepare(bad).map(|_| ()).unwrap_err();
            assert!(matches!(e.kind, SclErrorKind::Xml(_)), "{bad}: {e}");
        }
    }
}
