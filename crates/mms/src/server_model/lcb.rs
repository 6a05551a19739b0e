//! Log control blocks (LCB, IEC 61850-7-2 Ed.2 §17.3) and the logs of a logical node, as
//! IEC 61850-8-1 §17.3 maps them: the LCB is the structure `LN$LG$name` under FC `LG`;
//! GetLCBValues and SetLCBValues are MMS Reads and Writes of its components; a log is an MMS
//! journal `LN$logName` of the LD's domain (listed by GetNameList of the journal class).
//!
//! Components in the order and with the MMS types libiec61850 1.6 serves (its `logging.c`,
//! `createLogControlBlock`): LogEna boolean, LogRef visible-string(-129), DatSet
//! visible-string(-129), OldEntrTm binary-time (with date), NewEntrTm binary-time, OldEntr
//! octet-string(8), NewEntr octet-string(8), TrgOps bit-string(-6), IntgPd unsigned(32).
//! TrgOps carries dchg, qchg, dupd and integrity; the GI bit is never set (a general
//! interrogation is a request to a report control block; libiec61850 serves no GI bit either).
//!
//! Write rules (7-2 Ed.2 §17.3.3.3 SetLCBValues and the LCB class table, as libiec61850 1.6
//! applies them in `LIBIEC61850_LOG_SVC_writeAccessLogControlBlock`):
//! - a value of another MMS kind than the component's is type-inconsistent;
//! - LogEna may always be written; TRUE needs a DatSet and a LogRef naming a log of the
//!   model, else object-attribute-inconsistent (nothing could be logged);
//! - LogRef, DatSet, TrgOps and IntgPd only while LogEna is FALSE, else
//!   temporarily-unavailable; LogRef must be empty or name a log of the model, DatSet empty or
//!   a persistent data set (`LD/LN$name`; an association's own `@name` data set would vanish
//!   under a log that outlives it): else object-value-invalid;
//! - OldEntrTm, NewEntrTm, OldEntr and NewEntr are read-only (they describe the log's
//!   content): object-access-denied; so is a write of the whole LCB.
//!
//! gander keeps no journal: the logs are empty, their entry times and IDs stay zero, and the
//! journal services (ReadJournal, InitializeJournal, ReportJournalStatus) are refused with a
//! confirmed error (`docs/mms-services.md`).

use gander_wire::data::Data;

use super::blocks::below;
use super::gocb::{check_kind, MAX_REF_LEN};
use super::node::ModelNode;
use super::{ModelError, ServerModel};
use crate::bit_string::BitString;
use crate::report::trg_ops;
use crate::service::{DataAccessError, TypeSpec};

/// LCB component names in IEC 61850-8-1 order.
pub const LCB_ELEMENTS: [&str; 9] = [
    "LogEna",
    "LogRef",
    "DatSet",
    "OldEntrTm",
    "NewEntrTm",
    "OldEntr",
    "NewEntr",
    "TrgOps",
    "IntgPd",
];

/// How an LCB is configured (what an SCL `LogControl` says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LcbConfig {
    /// MMS domain of its LD.
    pub domain: String,
    /// The logical node holding it.
    pub ln: String,
    /// Its name (`LN$LG$name`).
    pub name: String,
    /// LogEna at start.
    pub log_ena: bool,
    /// LogRef: the log, `LD/LN$logName`, or empty.
    pub log_ref: String,
    /// The data set's MMS item in the same domain (`LLN0$Events`); empty: none.
    pub data_set: String,
    /// TrgOps (6 bits; the GI bit is ignored).
    pub trg_ops: BitString,
    /// IntgPd, ms.
    pub intg_pd: u32,
}

/// An LCB with its run-time state.
#[derive(Debug, Clone)]
pub struct LcbInstance {
    /// Its configuration (writes change the state below, not this).
    pub config: LcbConfig,
    log_ena: bool,
    log_ref: String,
    /// `LD/LN$name`, or empty.
    dat_set: String,
    trg_ops: BitString,
    intg_pd: u32,
}

/// TrgOps without the GI bit, 6 bits.
fn log_trg_ops(b: &BitString) -> BitString {
    let on: Vec<usize> = b
        .ones()
        .filter(|&i| i < trg_ops::LEN && i != trg_ops::GI)
        .collect();
    BitString::with_bits(trg_ops::LEN, &on)
}

impl LcbInstance {
    /// An instance with the configured values (LogEna only with a data set).
    pub fn new(config: LcbConfig) -> Self {
        let dat_set = if config.data_set.is_empty() {
            String::new()
        } else {
            format!("{}/{}", config.domain, config.data_set)
        };
        LcbInstance {
            // Without a data set there is nothing to log: the block starts disabled whatever
            // the SCL's logEna says (as libiec61850 1.6 starts it).
            log_ena: config.log_ena && !dat_set.is_empty(),
            log_ref: config.log_ref.clone(),
            dat_set,
            trg_ops: log_trg_ops(&config.trg_ops),
            intg_pd: config.intg_pd,
            config,
        }
    }

    /// Its MMS item, `LN$LG$name`.
    pub fn item(&self) -> String {
        format!("{}$LG${}", self.config.ln, self.config.name)
    }

    /// Whether LogEna is TRUE.
    pub fn is_enabled(&self) -> bool {
        self.log_ena
    }

    /// The DatSet value: `LD/LN$name` or empty.
    pub fn dat_set(&self) -> &str {
        &self.dat_set
    }

    /// The block as clients see it (values with their MMS types).
    pub fn node(&self) -> ModelNode {
        let vs129 = TypeSpec::VisibleString(-(MAX_REF_LEN as i32));
        let leaf = ModelNode::leaf;
        let time = || leaf(TypeSpec::BinaryTime(true), Data::BinaryTime(vec![0; 6]));
        let entry = || leaf(TypeSpec::OctetString(8), Data::OctetString(vec![0; 8]));
        ModelNode::Struct(vec![
            (
                "LogEna".into(),
                leaf(TypeSpec::Boolean, Data::Boolean(self.log_ena)),
            ),
            (
                "LogRef".into(),
                leaf(vs129.clone(), Data::VisibleString(self.log_ref.clone())),
            ),
            (
                "DatSet".into(),
                leaf(vs129, Data::VisibleString(self.dat_set.clone())),
            ),
            ("OldEntrTm".into(), time()),
            ("NewEntrTm".into(), time()),
            ("OldEntr".into(), entry()),
            ("NewEntr".into(), entry()),
            (
                "TrgOps".into(),
                leaf(
                    TypeSpec::BitString(-(trg_ops::LEN as i32)),
                    self.trg_ops.to_data(),
                ),
            ),
            (
                "IntgPd".into(),
                leaf(TypeSpec::Unsigned(32), Data::Unsigned(self.intg_pd.into())),
            ),
        ])
    }

    /// Write `element` following the module's rules. `data_set_exists(domain, item)` says
    /// whether the server has that persistent data set, `log_exists(reference)` whether it
    /// has the log `LD/LN$logName`.
    pub fn write(
        &mut self,
        element: &str,
        value: &Data,
        data_set_exists: impl Fn(&str, &str) -> bool,
        log_exists: impl Fn(&str) -> bool,
    ) -> Result<(), DataAccessError> {
        check_kind(&self.node(), element, value)?;
        let text = || match value {
            Data::VisibleString(s) if s.len() <= MAX_REF_LEN => Ok(s.clone()),
            Data::VisibleString(_) => Err(DataAccessError::OBJECT_VALUE_INVALID),
            _ => Err(DataAccessError::TYPE_INCONSISTENT),
        };
        match element {
            "LogEna" => {
                let on = matches!(value, Data::Boolean(true));
                if on && (self.dat_set.is_empty() || !log_exists(&self.log_ref)) {
                    return Err(DataAccessError::OBJECT_ATTRIBUTE_INCONSISTENT);
                }
                self.log_ena = on;
                Ok(())
            }
            "LogRef" | "DatSet" | "TrgOps" | "IntgPd" if self.log_ena => {
                Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
            }
            "LogRef" => {
                let s = text()?;
                if !s.is_empty() && !log_exists(&s) {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
                self.log_ref = s;
                Ok(())
            }
            "DatSet" => {
                let s = text()?;
                let ok = s.is_empty()
                    || s.split_once('/')
                        .is_some_and(|(d, i)| data_set_exists(d, i));
                if !ok {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
                self.dat_set = s;
                Ok(())
            }
            "TrgOps" => {
                let b = BitString::from_data(value).ok_or(DataAccessError::OBJECT_VALUE_INVALID)?;
                self.trg_ops = log_trg_ops(&b);
                Ok(())
            }
            "IntgPd" => {
                let Data::Unsigned(v) = value else {
                    return Err(DataAccessError::TYPE_INCONSISTENT);
                };
                self.intg_pd =
                    u32::try_from(*v).map_err(|_| DataAccessError::OBJECT_VALUE_INVALID)?;
                Ok(())
            }
            _ => Err(DataAccessError::OBJECT_ACCESS_DENIED),
        }
    }
}

impl ServerModel {
    /// Add a log control block; its LN and data set (when named) must exist. LogRef may name
    /// a log the model does not have (SCL files often leave the `Log` out): LogEna then
    /// cannot be set TRUE again once cleared.
    pub fn add_lcb(&mut self, config: LcbConfig) -> Result<(), ModelError> {
        self.check_block(
            &config.domain,
            &config.ln,
            "LG",
            &config.name,
            &config.data_set,
        )?;
        self.blocks.lcbs.push(LcbInstance::new(config));
        Ok(())
    }

    /// Add the log `ln$name` of `domain` (an MMS journal; its LN must exist).
    pub fn add_log(&mut self, domain: &str, ln: &str, name: &str) -> Result<(), ModelError> {
        let d = self
            .domain(domain)
            .ok_or_else(|| ModelError::UnknownDomain(domain.into()))?;
        let item = format!("{ln}${name}");
        if name.is_empty() || name.contains('$') || !d.lns.iter().any(|(n, _)| n == ln) {
            return Err(ModelError::BadControlBlock {
                block: format!("{domain}/{item}"),
                what: "a log needs a name and an existing logical node".into(),
            });
        }
        if self
            .blocks
            .logs
            .iter()
            .any(|(d, i)| d == domain && *i == item)
        {
            return Err(ModelError::Duplicate {
                domain: domain.into(),
                what: "log",
                name: item,
            });
        }
        self.blocks.logs.push((domain.into(), item));
        Ok(())
    }

    /// The LCBs.
    pub fn lcbs(&self) -> &[LcbInstance] {
        &self.blocks.lcbs
    }

    /// The journal names of `domain` (`LN$logName`), as GetNameList of the journal class
    /// lists them (IEC 61850-8-1 §17.3.1: a log is an MMS journal of the LD's domain).
    pub(super) fn journal_names(&self, domain: &str) -> Vec<String> {
        self.blocks
            .logs
            .iter()
            .filter(|(d, _)| d == domain)
            .map(|(_, i)| i.clone())
            .collect()
    }

    /// A write of `item` in `dom` that falls in an LCB, with its answer; None otherwise.
    pub(super) fn write_lcb(
        &mut self,
        dom: &str,
        item: &str,
        value: &Data,
    ) -> Option<Result<(), DataAccessError>> {
        let (i, element) = self.blocks.lcbs.iter().enumerate().find_map(|(i, l)| {
            (l.config.domain == dom)
                .then(|| below(item, &l.item()).map(str::to_string))
                .flatten()
                .map(|e| (i, e))
        })?;
        if element.is_empty() {
            return Some(Err(DataAccessError::OBJECT_ACCESS_DENIED));
        }
        let lists: Vec<(String, String)> = self
            .domains
            .iter()
            .flat_map(|d| d.lists.iter().map(|l| (d.name.clone(), l.name.clone())))
            .collect();
        let logs: Vec<String> = self
            .blocks
            .logs
            .iter()
            .map(|(d, i)| format!("{d}/{i}"))
            .collect();
        Some(self.blocks.lcbs[i].write(
            &element,
            value,
            |d, i| lists.iter().any(|(a, b)| a == d && b == i),
            |r| logs.iter().any(|l| l == r),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> LcbConfig {
        LcbConfig {
            domain: "IEDLD0".into(),
            ln: "LLN0".into(),
            name: "EventLog".into(),
            log_ena: true,
            log_ref: "IEDLD0/LLN0$EventLog".into(),
            data_set: "LLN0$Events".into(),
            trg_ops: BitString::with_bits(
                trg_ops::LEN,
                &[trg_ops::DCHG, trg_ops::QCHG, trg_ops::GI],
            ),
            intg_pd: 0,
        }
    }

    fn ds(d: &str, i: &str) -> bool {
        d == "IEDLD0" && (i == "LLN0$Events" || i == "LLN0$Other")
    }

    fn log(r: &str) -> bool {
        r == "IEDLD0/LLN0$EventLog" || r == "IEDLD0/LLN0$Other"
    }

    fn get(l: &LcbInstance, e: &str) -> Data {
        l.node().find(e).unwrap().to_data()
    }

    /// The structure libiec61850 1.6 serves for `LC(EventLog Events PROT/LLN0$EventLog 19 0 1
    /// 1)` (read with open61850's client from its server): GI dropped from TrgOps (60 hex).
    #[test]
    fn served_as_libiec61850_serves_it() {
        let l = LcbInstance::new(cfg());
        let names: Vec<String> = match l.node() {
            ModelNode::Struct(c) => c.into_iter().map(|(n, _)| n).collect(),
            _ => panic!(),
        };
        assert_eq!(names, LCB_ELEMENTS);
        assert_eq!(
            get(&l, "TrgOps"),
            Data::BitString {
                unused_bits: 2,
                bytes: vec![0x60]
            }
        );
        assert_eq!(
            get(&l, "DatSet"),
            Data::VisibleString("IEDLD0/LLN0$Events".into())
        );
        assert_eq!(get(&l, "OldEntr"), Data::OctetString(vec![0; 8]));
        assert_eq!(get(&l, "NewEntrTm"), Data::BinaryTime(vec![0; 6]));
        assert_eq!(
            l.node().find("IntgPd").unwrap().type_spec(),
            TypeSpec::Unsigned(32)
        );
    }

    #[test]
    fn without_a_data_set_it_starts_disabled() {
        let l = LcbInstance::new(LcbConfig {
            data_set: String::new(),
            ..cfg()
        });
        assert_eq!(get(&l, "LogEna"), Data::Boolean(false));
    }

    #[test]
    fn settings_only_while_disabled() {
        let mut l = LcbInstance::new(cfg());
        let w = |l: &mut LcbInstance, e: &str, v: Data| l.write(e, &v, ds, log);
        let other = Data::VisibleString("IEDLD0/LLN0$Other".into());
        assert_eq!(
            w(&mut l, "DatSet", other.clone()),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(
            w(&mut l, "IntgPd", Data::Unsigned(1000)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(w(&mut l, "LogEna", Data::Boolean(false)), Ok(()));
        assert_eq!(w(&mut l, "DatSet", other.clone()), Ok(()));
        assert_eq!(get(&l, "DatSet"), other);
        assert_eq!(w(&mut l, "IntgPd", Data::Unsigned(1000)), Ok(()));
        assert_eq!(
            w(
                &mut l,
                "LogRef",
                Data::VisibleString("IEDLD0/LLN0$Other".into())
            ),
            Ok(())
        );
        assert_eq!(w(&mut l, "LogEna", Data::Boolean(true)), Ok(()));
        assert_eq!(get(&l, "LogEna"), Data::Boolean(true));
    }

    #[test]
    fn refusals() {
        let mut l = LcbInstance::new(cfg());
        let w = |l: &mut LcbInstance, e: &str, v: Data| l.write(e, &v, ds, log);
        // Read-only components and the whole block.
        for e in ["OldEntr", "NewEntr"] {
            assert_eq!(
                w(&mut l, e, Data::OctetString(vec![0; 8])),
                Err(DataAccessError::OBJECT_ACCESS_DENIED),
                "{e}"
            );
        }
        assert_eq!(
            w(&mut l, "OldEntrTm", Data::BinaryTime(vec![0; 6])),
            Err(DataAccessError::OBJECT_ACCESS_DENIED)
        );
        assert_eq!(
            w(&mut l, "LogEna", Data::Unsigned(1)),
            Err(DataAccessError::TYPE_INCONSISTENT)
        );
        assert_eq!(w(&mut l, "LogEna", Data::Boolean(false)), Ok(()));
        for (e, v) in [
            ("DatSet", "IEDLD0/LLN0$Nope"),
            ("DatSet", "@mine"),
            ("LogRef", "IEDLD0/LLN0$Nope"),
        ] {
            assert_eq!(
                w(&mut l, e, Data::VisibleString(v.into())),
                Err(DataAccessError::OBJECT_VALUE_INVALID),
                "{e} {v}"
            );
        }
        // Enabling needs a data set and a log.
        assert_eq!(
            w(&mut l, "DatSet", Data::VisibleString(String::new())),
            Ok(())
        );
        assert_eq!(
            w(&mut l, "LogEna", Data::Boolean(true)),
            Err(DataAccessError::OBJECT_ATTRIBUTE_INCONSISTENT)
        );
        assert_eq!(
            w(
                &mut l,
                "DatSet",
                Data::VisibleString("IEDLD0/LLN0$Events".into())
            ),
            Ok(())
        );
        assert_eq!(
            w(&mut l, "LogRef", Data::VisibleString(String::new())),
            Ok(())
        );
        assert_eq!(
            w(&mut l, "LogEna", Data::Boolean(true)),
            Err(DataAccessError::OBJECT_ATTRIBUTE_INCONSISTENT)
        );
    }
}
