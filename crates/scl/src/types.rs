//! The vocabulary of IEC 61850-6 data types: basic types (`bType`) and functional constraints
//! (`fc`), as the SCL schema (IEC 61850-6 Ed.2, `SCL_Enums.xsd`, tBasicTypeEnum and tFCEnum)
//! names them, and how IEC 61850-8-1 maps each basic type onto an MMS type.

use serde::Serialize;

/// A basic type of a data attribute (`bType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[allow(missing_docs)]
pub enum BasicType {
    Boolean,
    Int8,
    Int16,
    Int24,
    Int32,
    Int64,
    Int128,
    Int8U,
    Int16U,
    Int24U,
    Int32U,
    Float32,
    Float64,
    Enum,
    Dbpos,
    Tcmd,
    Quality,
    Timestamp,
    VisString32,
    VisString64,
    VisString65,
    VisString129,
    VisString255,
    Octet64,
    Unicode255,
    Struct,
    EntryTime,
    Check,
    ObjRef,
    Currency,
    PhyComAddr,
    TrgOps,
    OptFlds,
    SvOptFlds,
    LogOptFlds,
    EntryId,
    Octet6,
    Octet16,
}

/// Every `bType` spelling with its type.
pub(crate) const BASIC: [(&str, BasicType); 38] = [
    ("BOOLEAN", BasicType::Boolean),
    ("INT8", BasicType::Int8),
    ("INT16", BasicType::Int16),
    ("INT24", BasicType::Int24),
    ("INT32", BasicType::Int32),
    ("INT64", BasicType::Int64),
    ("INT128", BasicType::Int128),
    ("INT8U", BasicType::Int8U),
    ("INT16U", BasicType::Int16U),
    ("INT24U", BasicType::Int24U),
    ("INT32U", BasicType::Int32U),
    ("FLOAT32", BasicType::Float32),
    ("FLOAT64", BasicType::Float64),
    ("Enum", BasicType::Enum),
    ("Dbpos", BasicType::Dbpos),
    ("Tcmd", BasicType::Tcmd),
    ("Quality", BasicType::Quality),
    ("Timestamp", BasicType::Timestamp),
    ("VisString32", BasicType::VisString32),
    ("VisString64", BasicType::VisString64),
    ("VisString65", BasicType::VisString65),
    ("VisString129", BasicType::VisString129),
    ("VisString255", BasicType::VisString255),
    ("Octet64", BasicType::Octet64),
    ("Unicode255", BasicType::Unicode255),
    ("Struct", BasicType::Struct),
    ("EntryTime", BasicType::EntryTime),
    ("Check", BasicType::Check),
    ("ObjRef", BasicType::ObjRef),
    ("Currency", BasicType::Currency),
    ("PhyComAddr", BasicType::PhyComAddr),
    ("TrgOps", BasicType::TrgOps),
    ("OptFlds", BasicType::OptFlds),
    ("SvOptFlds", BasicType::SvOptFlds),
    ("LogOptFlds", BasicType::LogOptFlds),
    ("EntryID", BasicType::EntryId),
    ("Octet6", BasicType::Octet6),
    ("Octet16", BasicType::Octet16),
];

impl BasicType {
    /// The type a `bType` spelling names.
    pub fn from_scl(s: &str) -> Option<BasicType> {
        BASIC.iter().find(|(n, _)| *n == s).map(|(_, t)| *t)
    }

    /// The `bType` spelling.
    pub fn scl_name(self) -> &'static str {
        BASIC
            .iter()
            .find(|(_, t)| *t == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }

    /// The MMS type IEC 61850-8-1 (§8.1.3.3, Table 6) gives the basic type, as a short
    /// description (`integer(32)`, `bit-string(2)`, `visible-string(64)`, ...). `Struct` maps to
    /// an MMS structure of its components.
    pub fn mms_type(self) -> &'static str {
        use BasicType::*;
        match self {
            Boolean => "boolean",
            Int8 => "integer(8)",
            Int16 => "integer(16)",
            Int24 | Int32 => "integer(32)",
            Int64 => "integer(64)",
            Int128 => "integer(128)",
            Int8U => "unsigned(8)",
            Int16U => "unsigned(16)",
            Int24U | Int32U => "unsigned(32)",
            Float32 => "floating-point(32)",
            Float64 => "floating-point(64)",
            Enum => "integer(8)",
            Dbpos | Tcmd => "bit-string(2)",
            Quality => "bit-string(13)",
            Timestamp => "utc-time",
            VisString32 => "visible-string(32)",
            VisString64 => "visible-string(64)",
            ObjRef => "visible-string(129)",
            VisString65 => "visible-string(65)",
            VisString129 => "visible-string(129)",
            VisString255 => "visible-string(255)",
            Octet64 => "octet-string(64)",
            Unicode255 => "mms-string(255)",
            Struct => "structure",
            EntryTime => "binary-time(6)",
            Check => "bit-string(2)",
            Currency => "visible-string(3)",
            PhyComAddr => "structure(Addr, PRIORITY, VID, APPID)",
            Octet6 => "octet-string(6)",
            Octet16 => "octet-string(16)",
            TrgOps => "bit-string(6)",
            OptFlds => "bit-string(10)",
            SvOptFlds => "bit-string(5)",
            LogOptFlds => "bit-string(1)",
            EntryId => "octet-string(8)",
        }
    }
}

/// A functional constraint (IEC 61850-7-2 §6.4, the SCL `fc` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[allow(missing_docs)]
pub enum Fc {
    ST,
    MX,
    SP,
    SV,
    CF,
    DC,
    SG,
    SE,
    SR,
    OR,
    BL,
    EX,
    CO,
    US,
    MS,
    RP,
    BR,
    LG,
    GO,
}

const FCS: [(&str, Fc); 19] = [
    ("ST", Fc::ST),
    ("MX", Fc::MX),
    ("SP", Fc::SP),
    ("SV", Fc::SV),
    ("CF", Fc::CF),
    ("DC", Fc::DC),
    ("SG", Fc::SG),
    ("SE", Fc::SE),
    ("SR", Fc::SR),
    ("OR", Fc::OR),
    ("BL", Fc::BL),
    ("EX", Fc::EX),
    ("CO", Fc::CO),
    ("US", Fc::US),
    ("MS", Fc::MS),
    ("RP", Fc::RP),
    ("BR", Fc::BR),
    ("LG", Fc::LG),
    ("GO", Fc::GO),
];

impl Fc {
    /// The constraint a two-letter `fc` names.
    pub fn from_scl(s: &str) -> Option<Fc> {
        FCS.iter().find(|(n, _)| *n == s).map(|(_, f)| *f)
    }

    /// The two letters, which are also the MMS name component (IEC 61850-8-1 §8.1.3.2).
    pub fn name(self) -> &'static str {
        FCS.iter()
            .find(|(_, f)| *f == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for (n, t) in BASIC {
            assert_eq!(BasicType::from_scl(n), Some(t));
            assert_eq!(t.scl_name(), n);
        }
        for (n, f) in FCS {
            assert_eq!(Fc::from_scl(n), Some(f));
            assert_eq!(f.name(), n);
        }
        assert_eq!(
            BasicType::from_scl("boolean"),
            None,
            "bType is case-sensitive"
        );
        assert_eq!(Fc::from_scl("XX"), None);
    }
}
