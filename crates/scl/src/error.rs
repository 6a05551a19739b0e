//! Why an SCL file was refused: the reason and, for everything found in the file, the line and
//! column of the element that carries the problem.

use crate::parse::SCL_NS;

/// Where in the file (1-based, as an editor shows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Position {
    /// Line.
    pub line: u32,
    /// Column.
    pub column: u32,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// What is wrong.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SclErrorKind {
    /// The file could not be read.
    #[error("cannot read {path}: {reason}")]
    Io {
        /// The path.
        path: String,
        /// What the system said.
        reason: String,
    },
    /// Not well-formed XML.
    #[error("not well-formed XML: {0}")]
    Xml(String),
    /// An LDevice none of whose logical nodes could be built (each was left out with a
    /// warning: a missing LNodeType, say). The LD is left out; when no LD of the IED is left,
    /// the IED has no model and this refuses it (`last`).
    #[error("LD {ld}: none of its logical nodes could be built (each is left out: its LNodeType missing, say){}", if *last { ", and no other LD is left" } else { "" })]
    NoBuildableLn {
        /// The first such LD's MMS domain.
        ld: String,
        /// Whether it refuses the IED (no other LD left).
        last: bool,
    },
    /// A namespace prefix used without a declaration (Namespaces in XML 1.0 §5).
    #[error(
        "namespace prefix {prefix:?} is used without a declaration (Namespaces in XML 1.0 \u{a7}5)"
    )]
    UndeclaredPrefix {
        /// The prefix.
        prefix: String,
    },
    /// The root element is not `SCL`.
    #[error("the root element is <{0}>, not <SCL>")]
    NotScl(String),
    /// An element lacks an attribute IEC 61850-6 requires.
    #[error("<{element}> has no {attribute} attribute")]
    MissingAttribute {
        /// The element.
        element: &'static str,
        /// The attribute.
        attribute: &'static str,
    },
    /// An element lacks a child element IEC 61850-6's schema requires.
    #[error("<{element}> has no <{child}>")]
    MissingElement {
        /// The element.
        element: &'static str,
        /// The child it needs.
        child: &'static str,
    },
    /// An attribute's value is not what the schema allows.
    #[error("<{element}> {attribute}={value:?}: {why}")]
    BadValue {
        /// The element.
        element: &'static str,
        /// The attribute.
        attribute: &'static str,
        /// The value found.
        value: String,
        /// What was expected.
        why: &'static str,
    },
    /// A type reference (`lnType`, `type`) names no template.
    #[error("{kind} {id:?} is not in DataTypeTemplates")]
    UnknownType {
        /// LNodeType, DOType, DAType or EnumType.
        kind: &'static str,
        /// The id referenced.
        id: String,
    },
    /// A type contains itself.
    #[error("{kind} {id:?} contains itself")]
    RecursiveType {
        /// DOType or DAType.
        kind: &'static str,
        /// The id.
        id: String,
    },
    /// Two templates or two instances of the same name.
    #[error("duplicate {what} {name:?}")]
    Duplicate {
        /// What is duplicated.
        what: &'static str,
        /// Its name.
        name: String,
    },
    /// The file has no IED section.
    #[error("the file describes no IED")]
    NoIed,
    /// The root `SCL` element is in another namespace than IEC 61850-6's
    /// `http://www.iec.ch/61850/2003/SCL` (which every edition, 2003 to 2.1, keeps), so none of
    /// its elements are SCL elements: an early draft's (`.../2006/SCL`) or another schema's.
    #[error("the root element is in namespace {found:?}, not the SCL namespace {SCL_NS:?} that every edition of IEC 61850-6 uses")]
    WrongNamespace {
        /// The namespace found.
        found: String,
    },
    /// The IED asked for is not in the file.
    #[error("no IED named {wanted:?} (the file has: {have})")]
    IedNotFound {
        /// The name asked for.
        wanted: String,
        /// The names in the file.
        have: String,
    },
    /// No IED was named and the file has several (an SCD): the caller must choose one.
    #[error("the file has several IEDs ({have}): name one (--ied NAME)")]
    IedNotChosen {
        /// The names in the file.
        have: String,
    },
    /// A data set member (FCDA) names nothing in the model.
    #[error("data set {data_set:?}: member {member} is not in the model: {why}")]
    UnknownMember {
        /// The data set.
        data_set: String,
        /// The member as written.
        member: String,
        /// Which part is missing (the LD, the LN, a component, the FC).
        why: String,
    },
    /// A data set member names an array element the model does not have.
    #[error("data set {data_set:?}: member {member}: {why}")]
    ArrayMember {
        /// The data set.
        data_set: String,
        /// The member as written.
        member: String,
        /// What is wrong with the index.
        why: String,
    },
    /// A `DOI`/`SDI`/`DAI` names something the logical node's type does not have.
    #[error("<{element} name={name:?}> names nothing in the logical node's type")]
    UnknownInstance {
        /// DOI, SDI or DAI.
        element: &'static str,
        /// The name.
        name: String,
    },
    /// The access point asked for is not in the IED.
    #[error("IED {ied:?} has no access point {wanted:?} (it has: {have})")]
    AccessPointNotFound {
        /// The IED.
        ied: String,
        /// The name asked for.
        wanted: String,
        /// The names it has.
        have: String,
    },
    /// A control block names a data set its logical node does not have.
    #[error("{control:?} names data set {data_set:?}, which LLN0/its LN does not define")]
    UnknownDataSet {
        /// The control block.
        control: String,
        /// The data set name.
        data_set: String,
    },
}

/// An SCL file (or one IED of it) refused, with where.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "{}{}{kind}",
    ied.as_ref().map(|i| format!("IED {i}: ")).unwrap_or_default(),
    at.map(|p| format!("{p}: ")).unwrap_or_default()
)]
pub struct SclError {
    /// What is wrong.
    pub kind: SclErrorKind,
    /// Where, when it is in the file.
    pub at: Option<Position>,
    /// The IED the problem is in, when it is in one (an SCD's other IEDs are still read).
    pub ied: Option<String>,
}

impl SclError {
    pub(crate) fn new(kind: SclErrorKind, at: Option<Position>) -> Self {
        SclError {
            kind,
            at,
            ied: None,
        }
    }

    /// The same error, said to be in IED `name`.
    pub(crate) fn in_ied(mut self, name: &str) -> Self {
        self.ied = Some(name.into());
        self
    }
}

impl serde::Serialize for SclError {
    /// `{ "ied", "line", "column", "message" }`: for `gander scl show --json`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("SclError", 4)?;
        st.serialize_field("ied", &self.ied)?;
        st.serialize_field("line", &self.at.map(|p| p.line))?;
        st.serialize_field("column", &self.at.map(|p| p.column))?;
        st.serialize_field("message", &self.kind.to_string())?;
        st.end()
    }
}
