//! Model discovery over one session, with the directory services IEC 61850-8-1 maps the model
//! onto: Identify, GetNameList (domains, named variables and named variable lists of each
//! domain, continued while `moreFollows`), GetNamedVariableListAttributes for each data set,
//! and for each report control block GetVariableAccessAttributes (its component names) and a
//! Read of the whole block. Nothing is written.
//!
//! A failure of one object (a data set the server will not describe, a control block it will not
//! read) is recorded on that object and discovery goes on; a failure of the session itself
//! (closed, malformed PDU, stall) ends it.
use crate::error::ProbeError;
use crate::model::{self, DataSet, Identity, LogicalDevice, Model, Rcb};
use gander_client::Session;
use gander_mms::pdu::{ConfirmedRequest, ConfirmedResponse};
use gander_mms::rcb_plan::{find_rcbs, RcbRef, RcbSnapshot};
use gander_mms::service::{
    GetNameListRequest, GetNamedVariableListAttributesRequest, GetVariableAccessAttributesRequest,
    ObjectName,
};

/// What discovery found, with what the measurements need.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Identify's answer, if the server supports it.
    pub identity: Option<Identity>,
    /// The model.
    pub model: Model,
    /// Every control block read, with its snapshot (for `--reports`).
    pub snapshots: Vec<RcbSnapshot>,
    /// Variables that can serve the read-RTT measurement, best first.
    pub read_candidates: Vec<ObjectName>,
    /// Things the server would not answer that did not stop the probe.
    pub warnings: Vec<String>,
}

/// Identify (ISO 9506-2 10.2); `None` when the server does not support it.
pub fn identify(
    s: &mut Session,
    warnings: &mut Vec<String>,
) -> Result<Option<Identity>, ProbeError> {
    match s.call(ConfirmedRequest::Identify, "Identify") {
        Ok(ConfirmedResponse::Identify(i)) => Ok(Some(Identity {
            vendor: i.vendor,
            model: i.model,
            revision: i.revision,
        })),
        Ok(_) => {
            warnings.push("Identify: answered with another service's response".into());
            Ok(None)
        }
        Err(e) if e.answered() => {
            warnings.push(format!("Identify not supported: {}", e.chain()));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// One control block as read.
#[derive(Debug, Clone)]
pub enum RcbRead {
    /// Its attributes.
    Read(RcbSnapshot),
    /// The server answered, but not with a value of a known layout: why.
    Unreadable(String),
}

/// Reads one control block (type description for its component names, then its value).
pub fn read_rcb(s: &mut Session, r: &RcbRef) -> Result<RcbRead, ProbeError> {
    let what = format!("reading {}", r.reference());
    let ty = match s.call(
        ConfirmedRequest::GetVariableAccessAttributes(GetVariableAccessAttributesRequest(
            r.object_name(),
        )),
        &what,
    ) {
        Ok(ConfirmedResponse::GetVariableAccessAttributes(t)) => Some(t.type_spec),
        Ok(_) => None,
        Err(e) if e.answered() => None,
        Err(e) => return Err(e.into()),
    };
    let value = match s.read_value(&r.object_name(), &what) {
        Ok(v) => v,
        Err(e) if e.answered() => return Ok(RcbRead::Unreadable(e.chain())),
        Err(e) => return Err(e.into()),
    };
    let snap = match &ty {
        Some(t) => RcbSnapshot::from_type_and_value(r.clone(), t, &value)
            .or_else(|_| RcbSnapshot::from_value(r.clone(), &value)),
        None => RcbSnapshot::from_value(r.clone(), &value),
    };
    Ok(match snap {
        Ok(snap) => RcbRead::Read(snap),
        Err(e) => RcbRead::Unreadable(e.to_string()),
    })
}

/// Discovers the whole model on `s` into `d`. What was found before a failure of the session
/// stays in `d` (the probe reports it as a partial result).
pub fn discover(s: &mut Session, d: &mut Discovery) -> Result<(), ProbeError> {
    d.identity = identify(s, &mut d.warnings)?;
    discover_model(s, d)
}

/// [`discover`] after Identify: the logical devices, their data sets and control blocks.
pub fn discover_model(s: &mut Session, d: &mut Discovery) -> Result<(), ProbeError> {
    let domains = s.names(
        GetNameListRequest::domains(),
        "GetNameList of the logical devices",
    )?;
    for ld in domains {
        let vars = s.names(
            GetNameListRequest::variables(ld.clone()),
            &format!("GetNameList of the variables of {ld}"),
        )?;
        d.model.logical_devices.push(LogicalDevice {
            name: ld.clone(),
            logical_nodes: model::logical_nodes(&vars),
            variables: vars.len(),
        });
        d.read_candidates.extend(
            model::read_candidates(&vars)
                .into_iter()
                .map(|n| ObjectName::domain(ld.clone(), n)),
        );
        let lists = match s.names(
            GetNameListRequest::variable_lists(ld.clone()),
            &format!("GetNameList of the data sets of {ld}"),
        ) {
            Ok(l) => l,
            Err(e) if e.answered() => {
                d.warnings.push(e.chain());
                Vec::new()
            }
            Err(e) => return Err(e.into()),
        };
        for item in lists {
            d.model.data_sets.push(data_set(s, &ld, &item)?);
        }
        for r in find_rcbs(&ld, &vars) {
            match read_rcb(s, &r)? {
                RcbRead::Read(snap) => {
                    d.model.rcbs.push(model::rcb_info(&snap));
                    d.snapshots.push(snap);
                }
                RcbRead::Unreadable(e) => d.model.rcbs.push(model::rcb_unread(&r, e)),
            }
        }
    }
    Ok(())
}

fn data_set(s: &mut Session, ld: &str, item: &str) -> Result<DataSet, ProbeError> {
    let (reference, _) = model::reference(ld, item);
    let what = format!("GetNamedVariableListAttributes of {reference}");
    let r = s.call(
        ConfirmedRequest::GetNamedVariableListAttributes(GetNamedVariableListAttributesRequest(
            ObjectName::domain(ld, item),
        )),
        &what,
    );
    Ok(match r {
        Ok(ConfirmedResponse::GetNamedVariableListAttributes(a)) => DataSet {
            reference,
            members: a.members.iter().map(|m| model::member(&m.name)).collect(),
            deletable: Some(a.deletable),
            error: None,
        },
        Ok(_) => DataSet {
            reference,
            members: Vec::new(),
            deletable: None,
            error: Some("answered with another service's response".into()),
        },
        Err(e) if e.answered() => DataSet {
            reference,
            members: Vec::new(),
            deletable: None,
            error: Some(e.chain()),
        },
        Err(e) => return Err(e.into()),
    })
}

/// The owner of a control block's data set among the discovered ones (for `--reports`).
pub fn rcb_data_set<'a>(model: &'a Model, rcb: &Rcb) -> Option<&'a DataSet> {
    let ds = rcb.data_set.as_deref()?;
    model.data_sets.iter().find(|d| d.reference == ds)
}
