//! IEC 61850-6 SCL files (ICD, CID, IID): the data model of an IED as its configuration file
//! describes it, so gander can serve a real device's model (`gander mms server --scl`) and know
//! what a device's reports will carry.
//!
//! [`parse`] reads the XML with a real parser (`roxmltree`; no DTD, so no entity expansion),
//! resolves every logical node through the DataTypeTemplates down to basic attributes, checks
//! every data set member and report control block against the model, and returns [`Scl`].
//! Every refusal is an [`SclError`] with the line and column of the offending element.
//!
//! Public sources for the structure and defaults: the SCL schema of IEC 61850-6 Ed.2 as used by
//! libiec61850's model generator and by OpenSCD, and IEC 61850-8-1's MMS naming as
//! libiec61850 and Wireshark's MMS dissector show it (`docs/scl.md`).

#![forbid(unsafe_code)]

mod controls;
mod error;
mod model;
mod parse;
mod rcb;
mod types;

pub use controls::{
    CommAddress, GseControl, GseType, SecurityEnable, SettingControl, SmpMod, SmvOpts, SvControl,
};
pub use error::{Position, SclError, SclErrorKind};
pub use model::{
    DataNode, DataSet, Fcda, Ied, LogicalDevice, LogicalNode, NodeKind, OptFields, ReportControl,
    TrgOps, Variable,
};
pub use parse::SCL_NS;
pub use types::{BasicType, Fc};

use std::path::Path;

/// The IEDs of one SCL file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Scl {
    /// In file order.
    pub ieds: Vec<Ied>,
}

impl Scl {
    /// The IED named `name`, or the only one when `name` is None. A file with several IEDs
    /// (an SCD) needs a name.
    pub fn ied(&self, name: Option<&str>) -> Result<&Ied, SclError> {
        let have = || {
            self.ieds
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match name {
            Some(n) => self.ieds.iter().find(|i| i.name == n),
            None if self.ieds.len() == 1 => self.ieds.first(),
            None => None,
        }
        .ok_or_else(|| {
            SclError::new(
                SclErrorKind::IedNotFound {
                    wanted: name.unwrap_or("(none given; the file has several)").into(),
                    have: have(),
                },
                None,
            )
        })
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

/// Parses SCL text.
pub fn parse(text: &str) -> Result<Scl, SclError> {
    Ok(Scl {
        ieds: parse::read(text)?,
    })
}

/// Reads and parses an SCL file.
pub fn load(path: &Path) -> Result<Scl, SclError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        SclError::new(
            SclErrorKind::Io {
                path: path.display().to_string(),
                reason: e.to_string(),
            },
            None,
        )
    })?;
    parse(&text)
}
