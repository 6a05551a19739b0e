//! IEC 61850-6 SCL files (ICD, CID, IID): the data model of an IED as its configuration file
//! describes it, so gander can serve a real device's model (`gander mms server --scl`) and know
//! what a device's reports will carry.
//!
//! [`parse`] reads the XML with a real parser (`roxmltree`; no DTD, so no entity expansion),
//! resolves every logical node through the DataTypeTemplates down to basic attributes, checks
//! every value, data set member and control block (report, GOOSE, sampled value, setting
//! group, with their Communication addresses) against the model, and returns [`Scl`]: the valid
//! IEDs and, judged each on its own, the refused ones. Every refusal is an [`SclError`] with the
//! line and column of the offending element and, inside an IED, the IED's name. A defect local
//! to one element (a data set member naming nothing, an `SDI` its type lacks, a missing
//! `LNodeType` or `EnumType`, `<Val>False</Val>`) does not refuse the IED: it is repaired in a
//! stated way and reported as an [`SclWarning`] in [`Ied::warnings`] (docs/scl.md, "Repairs").
//! Reading is linear in the file size (`gander bench scl`).
//!
//! Public sources for the structure and defaults: the SCL schema of IEC 61850-6 Ed.2 as used by
//! libiec61850's model generator and by OpenSCD, and IEC 61850-8-1's MMS naming as
//! libiec61850 and Wireshark's MMS dissector show it (`docs/scl.md`).

#![forbid(unsafe_code)]

mod comm_ip;
mod comm_routable;
mod controls;
mod error;
mod fcda;
mod groups;
mod log_control;
mod model;
mod namespace;
mod parse;
mod rcb;
mod text;
mod types;
mod vals;
mod value;
mod warning;
mod xml;

pub use comm_ip::{ip_access_points, IpAccessPoint};
pub use comm_routable::{routable_addresses, RoutableAddress, RoutableKind};
pub use controls::{
    CommAddress, GseControl, GseType, SecurityEnable, SettingControl, SmpMod, SmvOpts, SvControl,
};
pub use error::{Position, SclError, SclErrorKind};
pub use log_control::LogControl;
pub use model::{
    DataNode, DataSet, Fcda, GroupValue, Ied, LogicalDevice, LogicalNode, NodeKind, OptFields,
    ReportControl, TrgOps, Variable,
};
pub use namespace::DRAFT_2006_QUIRK;
pub use parse::{SCL_NS, SCL_NS_DRAFT_2006};
pub use text::decode;
pub use types::{BasicType, Fc};
pub use warning::{Repair, SclWarning};

use std::path::Path;

/// The IEDs of one SCL file, each judged on its own: an SCD whose one IED is broken still
/// gives the others (the broken one is in `refused`, with its error).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Scl {
    /// The valid IEDs, in file order.
    pub ieds: Vec<Ied>,
    /// The IEDs refused, in file order, each with why (the error names the IED and the line).
    pub refused: Vec<RefusedIed>,
}

/// An IED of the file that was refused.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RefusedIed {
    /// Its `name` (`(unnamed)` when it has none).
    pub name: String,
    /// Why.
    pub error: SclError,
}

impl Scl {
    /// The IED named `name`, or the only one when `name` is None (a file with several IEDs, an
    /// SCD, needs a name). A refused IED gives its own error.
    pub fn ied(&self, name: Option<&str>) -> Result<&Ied, SclError> {
        let have = || {
            self.ieds
                .iter()
                .map(|i| i.name.as_str())
                .chain(self.refused.iter().map(|r| r.name.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let refused = |n: Option<&str>| {
            self.refused
                .iter()
                .find(|r| n.is_none_or(|n| r.name == n))
                .map(|r| r.error.clone())
        };
        let total = self.ieds.len() + self.refused.len();
        match name {
            Some(n) => match self.ieds.iter().find(|i| i.name == n) {
                Some(i) => return Ok(i),
                None => {
                    if let Some(e) = refused(Some(n)) {
                        return Err(e);
                    }
                }
            },
            None if total == 1 => {
                if let Some(i) = self.ieds.first() {
                    return Ok(i);
                }
                if let Some(e) = refused(None) {
                    return Err(e);
                }
            }
            None => {}
        }
        Err(SclError::new(
            match name {
                Some(n) => SclErrorKind::IedNotFound {
                    wanted: n.into(),
                    have: have(),
                },
                None => SclErrorKind::IedNotChosen { have: have() },
            },
            None,
        ))
    }
}

impl Ied {
    /// The logical devices of access point `name`, or of every access point when None (an
    /// IED with a client-only access point and one server is the common case).
    pub fn logical_devices_of(&self, name: Option<&str>) -> Result<Vec<&LogicalDevice>, SclError> {
        match name {
            None => Ok(self.logical_devices.iter().collect()),
            Some(ap) => {
                let lds: Vec<&LogicalDevice> = self
                    .logical_devices
                    .iter()
                    .filter(|l| l.access_point == ap)
                    .collect();
                if lds.is_empty() {
                    let mut have: Vec<&str> = self
                        .logical_devices
                        .iter()
                        .map(|l| l.access_point.as_str())
                        .collect();
                    have.dedup();
                    return Err(SclError::new(
                        SclErrorKind::AccessPointNotFound {
                            ied: self.name.clone(),
                            wanted: ap.into(),
                            have: have.join(", "),
                        },
                        None,
                    ));
                }
                Ok(lds)
            }
        }
    }
}

/// Parses SCL text. A problem with the file as a whole (not XML, not SCL, no IED, a broken
/// type template index) is an `Err`; a problem inside one IED refuses only that IED
/// ([`Scl::refused`]).
pub fn parse(text: &str) -> Result<Scl, SclError> {
    let (ieds, refused) = parse::read(text)?;
    Ok(Scl { ieds, refused })
}

/// Reads and parses an SCL file.
pub fn load(path: &Path) -> Result<Scl, SclError> {
    parse(&read(path)?)
}

/// Reads an SCL file as text, in the character encoding its byte order mark or XML
/// declaration names (UTF-8, UTF-16, ISO-8859-1, ...; `text` module): what [`parse`] and the
/// other readers of SCL text take.
pub fn read(path: &Path) -> Result<String, SclError> {
    let bytes = std::fs::read(path).map_err(|e| {
        SclError::new(
            SclErrorKind::Io {
                path: path.display().to_string(),
                reason: e.to_string(),
            },
            None,
        )
    })?;
    text::decode(&path.display().to_string(), &bytes)
}
