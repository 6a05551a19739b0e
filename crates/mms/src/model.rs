//! The IEC 61850 server model fixed by gander's design (`docs/mms-peers.md`, "The server
//! model"), so that any IEC 61850 client — libiec61850's in particular — can use it:
//!
//! * IED `IMP`, logical device `LD0`, i.e. MMS domain `IMPLD0` (IEC 61850-8-1 8.1.3.2:
//!   domain = IED name + LD instance).
//! * `LLN0` with data set `DS1` (MMS named variable list `IMPLD0/LLN0$DS1`) and the
//!   unbuffered report control block `IMPLD0/LLN0.RP.urcb01` (MMS `LLN0$RP$urcb01`, RptID
//!   `rpt01`, DatSet `IMPLD0/LLN0$DS1`).
//! * `GGIO1` whose members fill DS1, in this order:
//!   1. `GGIO1$ST$Ind1` (SPS: stVal BOOLEAN, q Quality, t Timestamp),
//!   2. `GGIO1$MX$AnIn1` (MV: mag.f FLOAT32, q, t),
//!   3. `GGIO1$ST$Blob1$stVal`, an OCTET STRING that pads the report to the configured size.
//!      `Blob1` is gander-specific (no IEC 61850-7-4 CDC); its length sets the report size.
//!
//! With the default 8-octet blob, a report with all three members (GI or a data change of
//! every member) with the OptFlds libiec61850's client writes (seq-num, time-stamp, reason,
//! data-set) is a 125-octet MMS InformationReport PDU while SqNum < 128, the size the RSE
//! paper measured.
//!
//! Write access follows libiec61850's `Reporting_RCBWriteAccessHandler` (1.6): see
//! [`ImpModel::write`]. The URCB itself is a [`RcbInstance`], the same code the general
//! server model ([`crate::server_model`], SCL-described IEDs) uses for every control block.

use gander_wire::data::Data;
use gander_wire::Codec;

use crate::association::{ConnId, ServerHandler};
use crate::bit_string::BitString;
use crate::error::{Error, Layer, Result};
use crate::pdu::{MmsPdu, Unconfirmed};
use crate::rcb::UrcbValues;
use crate::report::{opt_flds, trg_ops};
use crate::server_model::{RcbConfig, RcbInstance};
use crate::service::{AccessResult, DataAccessError, InformationReport, ObjectName};

mod directory;

/// IED name.
pub const IED_NAME: &str = "IMP";
/// MMS domain of logical device LD0.
pub const DOMAIN: &str = "IMPLD0";
/// MMS item of the RCB.
pub const RCB_ITEM: &str = "LLN0$RP$urcb01";
/// IEC 61850 reference of the RCB.
pub const RCB_REF: &str = "IMPLD0/LLN0.RP.urcb01";
/// RptID of the RCB.
pub const RPT_ID: &str = "rpt01";
/// MMS item of the data set.
pub const DATA_SET_ITEM: &str = "LLN0$DS1";
/// DatSet value (data set reference with `$`).
pub const DATA_SET_REF: &str = "IMPLD0/LLN0$DS1";
/// MMS items of the DS1 members, in order.
pub const DS1_MEMBERS: [&str; 3] = ["GGIO1$ST$Ind1", "GGIO1$MX$AnIn1", "GGIO1$ST$Blob1$stVal"];
/// The default blob length, giving a 125-octet report.
pub const DEFAULT_BLOB_LEN: usize = 8;
/// The report size of the RSE paper.
pub const DEFAULT_REPORT_SIZE: usize = 125;
/// Largest blob accepted (keeps a report within one 65000-octet MMS PDU).
pub const MAX_BLOB_LEN: usize = 60_000;

/// Model parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelConfig {
    /// Length of `GGIO1$ST$Blob1$stVal`.
    pub blob_len: usize,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            blob_len: DEFAULT_BLOB_LEN,
        }
    }
}

impl ModelConfig {
    /// The blob length that makes a full report exactly `size` octets (MMS PDU, SqNum < 128),
    /// or an error if `size` is below the minimum or falls on a BER length-octet step.
    pub fn for_report_size(size: usize) -> Result<ModelConfig> {
        let len_of = |blob_len| ImpModel::new(ModelConfig { blob_len }).full_report_size();
        let (mut lo, mut hi) = (0usize, MAX_BLOB_LEN);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if len_of(mid) < size {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if len_of(lo) == size {
            Ok(ModelConfig { blob_len: lo })
        } else {
            Err(Error::Limit {
                layer: Layer::Iec61850,
                what: "no blob length gives this report size",
            })
        }
    }
}

/// What caused a report (IEC 61850-7-2 17.2.2.9 ReasonCode).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trigger {
    /// General interrogation: all members, reason GI.
    GeneralInterrogation,
    /// Integrity: all members, reason integrity.
    Integrity,
    /// Data change of the listed DS1 member indices.
    DataChange(Vec<usize>),
}

/// The server model: values and the one URCB.
#[derive(Debug, Clone)]
pub struct ImpModel {
    ind1: bool,
    ind1_q: BitString,
    ind1_t: [u8; 8],
    anin1: f32,
    anin1_q: BitString,
    anin1_t: [u8; 8],
    blob: Vec<u8>,
    /// The URCB's attributes, write rules and report building, shared with the general
    /// server model ([`crate::server_model::RcbInstance`]).
    rcb: RcbInstance,
}

/// An IEC 61850-8-1 8.1.3.7 UtcTime (seconds, 24-bit fraction, quality 0x0A = 10 bits accuracy).
pub fn utc_time(unix_ms: u64) -> [u8; 8] {
    let secs = (unix_ms / 1000) as u32;
    let frac = ((unix_ms % 1000) << 24) / 1000;
    let f = (frac as u32).to_be_bytes();
    let s = secs.to_be_bytes();
    [s[0], s[1], s[2], s[3], f[1], f[2], f[3], 0x0a]
}

enum Node {
    Leaf(Data),
    Branch(Vec<(&'static str, Node)>),
}

impl Node {
    fn to_data(&self) -> Data {
        match self {
            Node::Leaf(d) => d.clone(),
            Node::Branch(children) => {
                Data::Structure(children.iter().map(|(_, n)| n.to_data()).collect())
            }
        }
    }

    fn find(&self, path: &str) -> Option<&Node> {
        let mut node = self;
        for part in path.split('$') {
            node = match node {
                Node::Branch(c) => &c.iter().find(|(n, _)| *n == part)?.1,
                Node::Leaf(_) => return None,
            };
        }
        Some(node)
    }
}

impl ImpModel {
    /// A model with all values zero and the RCB disabled and unreserved.
    pub fn new(config: ModelConfig) -> Self {
        ImpModel {
            ind1: false,
            ind1_q: BitString::new(13),
            ind1_t: [0; 8],
            anin1: 0.0,
            anin1_q: BitString::new(13),
            anin1_t: [0; 8],
            blob: vec![0; config.blob_len.min(MAX_BLOB_LEN)],
            rcb: RcbInstance::new(
                RcbConfig {
                    domain: DOMAIN.into(),
                    item: RCB_ITEM.into(),
                    buffered: false,
                    rpt_id: RPT_ID.into(),
                    data_set: DATA_SET_ITEM.into(),
                    conf_rev: 1,
                    opt_flds: BitString::with_bits(
                        opt_flds::LEN,
                        &[
                            opt_flds::SEQ_NUM,
                            opt_flds::TIME_STAMP,
                            opt_flds::REASON,
                            opt_flds::DATA_SET,
                        ],
                    ),
                    trg_ops: BitString::with_bits(trg_ops::LEN, &[trg_ops::DCHG, trg_ops::GI]),
                    buf_tm: 0,
                    intg_pd: 0,
                    resv_tms: false,
                },
                DS1_MEMBERS
                    .iter()
                    .map(|m| ObjectName::domain(DOMAIN, *m).into())
                    .collect(),
            ),
        }
    }

    fn domain_tree(&self) -> Node {
        let rcb = match self.current_rcb().to_data() {
            Data::Structure(v) => Node::Branch(
                crate::rcb::URCB_ELEMENTS
                    .iter()
                    .zip(v)
                    .map(|(n, d)| (*n, Node::Leaf(d)))
                    .collect(),
            ),
            d => Node::Leaf(d),
        };
        let sps = |v: bool, q: &BitString, t: &[u8; 8]| {
            Node::Branch(vec![
                ("stVal", Node::Leaf(Data::Boolean(v))),
                ("q", Node::Leaf(q.to_data())),
                ("t", Node::Leaf(Data::UtcTime(*t))),
            ])
        };
        Node::Branch(vec![
            (
                "LLN0",
                Node::Branch(vec![("RP", Node::Branch(vec![("urcb01", rcb)]))]),
            ),
            (
                "GGIO1",
                Node::Branch(vec![
                    (
                        "ST",
                        Node::Branch(vec![
                            ("Ind1", sps(self.ind1, &self.ind1_q, &self.ind1_t)),
                            (
                                "Blob1",
                                Node::Branch(vec![(
                                    "stVal",
                                    Node::Leaf(Data::OctetString(self.blob.clone())),
                                )]),
                            ),
                        ]),
                    ),
                    (
                        "MX",
                        Node::Branch(vec![(
                            "AnIn1",
                            Node::Branch(vec![
                                (
                                    "mag",
                                    Node::Branch(vec![(
                                        "f",
                                        Node::Leaf(Data::FloatingPoint32(self.anin1)),
                                    )]),
                                ),
                                ("q", Node::Leaf(self.anin1_q.to_data())),
                                ("t", Node::Leaf(Data::UtcTime(self.anin1_t))),
                            ]),
                        )]),
                    ),
                ]),
            ),
        ])
    }

    fn current_rcb(&self) -> UrcbValues {
        self.rcb.values()
    }

    /// The RCB as a client would read it.
    pub fn rcb(&self) -> UrcbValues {
        self.current_rcb()
    }

    /// Whether the RCB is enabled for `conn`.
    pub fn is_enabled_for(&self, conn: ConnId) -> bool {
        self.rcb.is_enabled_for(conn)
    }

    /// Take a pending general interrogation for `conn` (set by a write of GI=true on an
    /// enabled RCB whose TrgOps include GI). The driver then sends
    /// `build_report(conn, Trigger::GeneralInterrogation, ..)`.
    pub fn take_gi(&mut self, conn: ConnId) -> bool {
        self.rcb.take_gi(conn)
    }

    /// Set `GGIO1.Ind1` (stVal and t).
    pub fn set_ind1(&mut self, v: bool, unix_ms: u64) {
        self.ind1 = v;
        self.ind1_t = utc_time(unix_ms);
    }

    /// Set `GGIO1.AnIn1` (mag.f and t).
    pub fn set_anin1(&mut self, v: f32, unix_ms: u64) {
        self.anin1 = v;
        self.anin1_t = utc_time(unix_ms);
    }

    /// Set the blob's contents (its length changes the report size).
    pub fn set_blob(&mut self, v: Vec<u8>) {
        self.blob = v;
        self.blob.truncate(MAX_BLOB_LEN);
    }

    /// Change every member (toggle Ind1, step AnIn1, bump the blob) at `unix_ms`, as the
    /// measurement server does before each report; returns the data-change trigger.
    pub fn change_all(&mut self, unix_ms: u64) -> Trigger {
        self.set_ind1(!self.ind1, unix_ms);
        self.set_anin1(self.anin1 + 1.0, unix_ms);
        if let Some(b) = self.blob.first_mut() {
            *b = b.wrapping_add(1);
        }
        Trigger::DataChange((0..DS1_MEMBERS.len()).collect())
    }

    /// The current value of DS1 member `i`.
    pub fn member_value(&self, i: usize) -> Option<Data> {
        let tree = self.domain_tree();
        DS1_MEMBERS
            .get(i)
            .and_then(|p| tree.find(p))
            .map(Node::to_data)
    }

    /// Build the next report for `conn`, or `None` if the RCB is not enabled for it or its
    /// TrgOps exclude the trigger. Increments SqNum (IEC 61850-7-2 17.2.3.2.2.3).
    pub fn build_report(
        &mut self,
        conn: ConnId,
        trigger: Trigger,
        unix_ms: u64,
    ) -> Option<InformationReport> {
        if !self.is_enabled_for(conn) {
            return None;
        }
        let n = DS1_MEMBERS.len();
        let (members, reason): (Vec<usize>, usize) = match trigger {
            Trigger::GeneralInterrogation => ((0..n).collect(), trg_ops::GI),
            Trigger::Integrity => ((0..n).collect(), trg_ops::INTEGRITY),
            Trigger::DataChange(m) => (m.into_iter().filter(|&i| i < n).collect(), trg_ops::DCHG),
        };
        let rows: Vec<(usize, Data)> = members
            .into_iter()
            .filter_map(|i| Some((i, self.member_value(i)?)))
            .collect();
        self.rcb.build_report(conn, reason, &rows, unix_ms)
    }

    /// Size of a full (all members) report PDU with the current values and OptFlds.
    pub fn full_report_size(&self) -> usize {
        let mut m = self.clone();
        m.rcb.force_enabled_for(0);
        match m.build_report(0, Trigger::GeneralInterrogation, 0) {
            Some(ir) => MmsPdu::Unconfirmed(Unconfirmed::InformationReport(ir))
                .to_vec()
                .len(),
            None => 0,
        }
    }

    fn write_rcb(
        &mut self,
        conn: ConnId,
        element: &str,
        value: &Data,
    ) -> core::result::Result<(), DataAccessError> {
        self.rcb.write(conn, element, value)
    }
}

impl ServerHandler for ImpModel {
    fn read(&mut self, _conn: ConnId, name: &ObjectName) -> AccessResult {
        match name {
            ObjectName::DomainSpecific { domain, item } if domain == DOMAIN => {
                match self.domain_tree().find(item) {
                    Some(n) => AccessResult::Success(n.to_data()),
                    None => AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT),
                }
            }
            _ => AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT),
        }
    }

    fn read_list(&mut self, conn: ConnId, list: &ObjectName) -> Option<Vec<AccessResult>> {
        match list {
            ObjectName::DomainSpecific { domain, item }
                if domain == DOMAIN && item == DATA_SET_ITEM =>
            {
                Some(
                    DS1_MEMBERS
                        .iter()
                        .map(|m| self.read(conn, &ObjectName::domain(DOMAIN, *m)))
                        .collect(),
                )
            }
            _ => None,
        }
    }

    /// Writes follow libiec61850 1.6 for an unbuffered RCB: a type mismatch is
    /// type-inconsistent; an RCB reserved by another connection is temporarily-unavailable;
    /// RptEna=true on an enabled RCB is temporarily-unavailable, otherwise it enables,
    /// reserves and resets SqNum; GI is accepted only while enabled by this connection (and
    /// starts a GI if TrgOps has GI); other elements are temporarily-unavailable while
    /// enabled; ConfRev/SqNum/Owner are object-access-denied; DatSet other than DS1 is
    /// object-value-invalid; any successful write reserves the RCB. Data attributes of
    /// GGIO1 are read-only (object-access-denied); unknown names are object-non-existent.
    fn write(
        &mut self,
        conn: ConnId,
        name: &ObjectName,
        value: &Data,
    ) -> core::result::Result<(), DataAccessError> {
        let ObjectName::DomainSpecific { domain, item } = name else {
            return Err(DataAccessError::OBJECT_NON_EXISTENT);
        };
        if domain != DOMAIN {
            return Err(DataAccessError::OBJECT_NON_EXISTENT);
        }
        if let Some(element) = item
            .strip_prefix(RCB_ITEM)
            .and_then(|r| r.strip_prefix('$'))
        {
            return self.write_rcb(conn, element, value);
        }
        match self.domain_tree().find(item) {
            Some(_) => Err(DataAccessError::OBJECT_ACCESS_DENIED),
            None => Err(DataAccessError::OBJECT_NON_EXISTENT),
        }
    }

    fn identify(&mut self, _conn: ConnId) -> Option<crate::service::IdentifyResponse> {
        Some(ImpModel::identify(self))
    }

    fn name_list(
        &mut self,
        _conn: ConnId,
        class: crate::service::ObjectClass,
        scope: &crate::service::ObjectScope,
    ) -> Option<core::result::Result<Vec<String>, crate::service::ServiceError>> {
        Some(ImpModel::name_list(self, class, scope))
    }

    fn variable_access_attributes(
        &mut self,
        _conn: ConnId,
        name: &ObjectName,
    ) -> Option<
        core::result::Result<
            crate::service::GetVariableAccessAttributesResponse,
            crate::service::ServiceError,
        >,
    > {
        Some(ImpModel::variable_access_attributes(self, name))
    }

    fn named_variable_list_attributes(
        &mut self,
        _conn: ConnId,
        name: &ObjectName,
    ) -> Option<
        core::result::Result<
            crate::service::GetNamedVariableListAttributesResponse,
            crate::service::ServiceError,
        >,
    > {
        Some(ImpModel::named_variable_list_attributes(self, name))
    }

    fn connection_closed(&mut self, conn: ConnId) {
        // libiec61850 disables and unreserves the RCBs of a closed connection.
        self.rcb.connection_closed(conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rcb::{enable_reporting, mms_name};
    use crate::report::Report;
    use crate::service::VariableAccessSpecification;

    fn rcb_name(e: &str) -> ObjectName {
        ObjectName::domain(DOMAIN, format!("{RCB_ITEM}${e}"))
    }

    #[test]
    fn default_report_is_125_bytes() {
        let m = ImpModel::new(ModelConfig::default());
        assert_eq!(m.full_report_size(), DEFAULT_REPORT_SIZE);
        for size in [125, 200, 1000, 4000] {
            let c = ModelConfig::for_report_size(size).unwrap();
            assert_eq!(ImpModel::new(c).full_report_size(), size);
        }
        assert!(ModelConfig::for_report_size(10).is_err());
    }

    #[test]
    fn read_rcb_as_libiec61850_expects() {
        let mut m = ImpModel::new(ModelConfig::default());
        let AccessResult::Success(d) = m.read(1, &mms_name(RCB_REF).unwrap()) else {
            panic!()
        };
        let v = UrcbValues::from_data(&d).unwrap();
        assert_eq!(
            (v.rpt_id.as_str(), v.dat_set.as_str()),
            (RPT_ID, DATA_SET_REF)
        );
        assert_eq!(
            m.read(1, &rcb_name("RptEna")),
            AccessResult::Success(Data::Boolean(false))
        );
        assert_eq!(
            m.read(1, &ObjectName::domain(DOMAIN, "GGIO1$ST$Ind1$stVal")),
            AccessResult::Success(Data::Boolean(false))
        );
        assert_eq!(
            m.read(1, &ObjectName::domain(DOMAIN, "GGIO1$ST$Nope")),
            AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT)
        );
        assert_eq!(
            m.read(1, &ObjectName::domain("OTHER", "LLN0")),
            AccessResult::Failure(DataAccessError::OBJECT_NON_EXISTENT)
        );
        assert_eq!(
            m.read_list(1, &ObjectName::domain(DOMAIN, DATA_SET_ITEM))
                .unwrap()
                .len(),
            3
        );
    }

    #[test]
    fn access_rules() {
        let mut m = ImpModel::new(ModelConfig::default());
        let w = enable_reporting(&mms_name(RCB_REF).unwrap(), true);
        let VariableAccessSpecification::ListOfVariable(names) = &w.spec else {
            panic!()
        };
        for (n, d) in names.iter().zip(&w.data) {
            assert_eq!(m.write(1, &n.name, d), Ok(()), "{}", n.name);
        }
        assert!(m.is_enabled_for(1));
        assert!(m.take_gi(1));
        assert!(!m.take_gi(1));
        // Another connection is locked out.
        assert_eq!(
            m.write(2, &rcb_name("RptEna"), &Data::Boolean(true)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        // While enabled: RptEna=true again, other elements.
        assert_eq!(
            m.write(1, &rcb_name("RptEna"), &Data::Boolean(true)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(
            m.write(1, &rcb_name("IntgPd"), &Data::Unsigned(1000)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(
            m.write(1, &rcb_name("RptEna"), &Data::Integer(1)),
            Err(DataAccessError::TYPE_INCONSISTENT)
        );
        assert_eq!(
            m.write(1, &rcb_name("RptEna"), &Data::Boolean(false)),
            Ok(())
        );
        assert_eq!(
            m.write(1, &rcb_name("GI"), &Data::Boolean(true)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(
            m.write(1, &rcb_name("ConfRev"), &Data::Unsigned(2)),
            Err(DataAccessError::OBJECT_ACCESS_DENIED)
        );
        assert_eq!(
            m.write(1, &rcb_name("DatSet"), &Data::VisibleString("X/Y$Z".into())),
            Err(DataAccessError::OBJECT_VALUE_INVALID)
        );
        assert_eq!(
            m.write(1, &rcb_name("IntgPd"), &Data::Unsigned(1000)),
            Ok(())
        );
        assert_eq!(m.rcb().intg_pd, 1000);
        assert_eq!(
            m.write(
                1,
                &ObjectName::domain(DOMAIN, "GGIO1$ST$Ind1$stVal"),
                &Data::Boolean(true)
            ),
            Err(DataAccessError::OBJECT_ACCESS_DENIED)
        );
        assert_eq!(
            m.write(1, &rcb_name("Bogus"), &Data::Boolean(true)),
            Err(DataAccessError::OBJECT_NON_EXISTENT)
        );
        // Closing the owner's connection frees the RCB.
        m.connection_closed(1);
        assert_eq!(
            m.write(2, &rcb_name("RptEna"), &Data::Boolean(true)),
            Ok(())
        );
    }

    #[test]
    fn reports_follow_trgops_and_count() {
        let mut m = ImpModel::new(ModelConfig::default());
        assert!(m
            .build_report(1, Trigger::GeneralInterrogation, 0)
            .is_none());
        m.write(1, &rcb_name("RptEna"), &Data::Boolean(true))
            .unwrap();
        assert!(m.build_report(1, Trigger::Integrity, 0).is_none());
        for sq in 0..3u16 {
            let t = m.change_all(1_700_000_000_000 + sq as u64);
            let ir = m.build_report(1, t, 1_700_000_000_000).unwrap();
            let r = Report::from_information_report(&ir).unwrap();
            assert_eq!(r.seq_num, Some(sq));
            assert_eq!(r.values.len(), 3);
            assert_eq!(r.reasons[0], BitString::with_bits(6, &[trg_ops::DCHG]));
        }
        let ir = m.build_report(1, Trigger::DataChange(vec![1]), 0).unwrap();
        let r = Report::from_information_report(&ir).unwrap();
        assert_eq!(r.inclusion.ones().collect::<Vec<_>>(), vec![1]);
    }
}
