//! Why an SCL file was refused: the reason and, for everything found in the file, the line and
//! column of the element that carries the problem.

/// Where in the file (1-based, as an editor shows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
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
    /// The IED asked for is not in the file.
    #[error("no IED named {wanted:?} (the file has: {have})")]
    IedNotFound {
        /// The name asked for.
        wanted: String,
        /// The names in the file.
        have: String,
    },
    /// A data set member (FCDA) names nothing in the model.
    #[error("data set {data_set:?}: member {member} is not in the model")]
    UnknownMember {
        /// The data set.
        data_set: String,
        /// The member as written.
        member: String,
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

/// An SCL file refused, with where.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}{kind}", at.map(|p| format!("{p}: ")).unwrap_or_default())]
pub struct SclError {
    /// What is wrong.
    pub kind: SclErrorKind,
    /// Where, when it is in the file.
    pub at: Option<Position>,
}

impl SclError {
    pub(crate) fn new(kind: SclErrorKind, at: Option<Position>) -> Self {
        SclError { kind, at }
    }
}
