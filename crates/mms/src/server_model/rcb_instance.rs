//! One report control block instance on the server side: its attributes as IEC 61850-8-1
//! §17.2.1 maps them onto an MMS structure, the write rules, and the building of the reports
//! it sends.
//!
//! Unbuffered (`LN$RP$name`): RptID, RptEna, Resv, DatSet, ConfRev, OptFlds, BufTm, SqNum,
//! TrgOps, IntgPd, GI. Buffered (`LN$BR$name`): RptID, RptEna, DatSet, ConfRev, OptFlds, BufTm,
//! SqNum, TrgOps, IntgPd, GI, PurgeBuf, EntryID, TimeofEntry and, when configured, ResvTms —
//! the order and the MMS types libiec61850 1.6 serves (captured in `docs/mms-services.md`).
//!
//! Write access follows libiec61850's `Reporting_RCBWriteAccessHandler` (1.6), as the fixed
//! model documents: a type mismatch is type-inconsistent; an RCB reserved by another connection
//! is temporarily-unavailable; RptEna=true on an enabled RCB is temporarily-unavailable,
//! otherwise it enables, reserves and resets SqNum; GI is accepted only while enabled by the
//! writer; other attributes are temporarily-unavailable while enabled; ConfRev, SqNum,
//! TimeofEntry and Owner are object-access-denied; any successful write reserves the RCB.
//!
//! Buffered behaviour kept deliberately small (documented in `docs/mms-peers.md`): entries are
//! not buffered while the RCB is disabled, so PurgeBuf has nothing to purge and an EntryID
//! write is accepted only for the last sent entry or all zeros (start from the oldest, which
//! is then the next one).

use gander_wire::data::Data;

use crate::association::ConnId;
use crate::bit_string::BitString;
use crate::rcb::{UrcbValues, URCB_ELEMENTS};
use crate::report::{binary_time_from_unix_ms, opt_flds, trg_ops, Report};
use crate::service::{DataAccessError, InformationReport, TypeSpec, VariableRef};

/// BRCB component names in IEC 61850-8-1 order (ResvTms only when configured).
pub const BRCB_ELEMENTS: [&str; 14] = [
    "RptID",
    "RptEna",
    "DatSet",
    "ConfRev",
    "OptFlds",
    "BufTm",
    "SqNum",
    "TrgOps",
    "IntgPd",
    "GI",
    "PurgeBuf",
    "EntryID",
    "TimeofEntry",
    "ResvTms",
];

/// How an RCB instance is configured (what an SCL `ReportControl` says of one instance).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RcbConfig {
    /// MMS domain of its LD.
    pub domain: String,
    /// Its MMS item: `LLN0$RP$urcbA01` or `LLN0$BR$brcbA01`.
    pub item: String,
    /// Buffered (BR) or unbuffered (RP).
    pub buffered: bool,
    /// RptID (the RCB's reference when the SCL leaves it empty).
    pub rpt_id: String,
    /// The data set's MMS item in the same domain (`LLN0$DS1`); empty: no data set.
    pub data_set: String,
    /// ConfRev.
    pub conf_rev: u32,
    /// OptFlds (10 bits).
    pub opt_flds: BitString,
    /// TrgOps (6 bits).
    pub trg_ops: BitString,
    /// BufTm, ms.
    pub buf_tm: u32,
    /// IntgPd, ms.
    pub intg_pd: u32,
    /// Whether a BRCB has the ResvTms attribute.
    pub resv_tms: bool,
}

/// An RCB instance with its run-time state.
#[derive(Debug, Clone)]
pub struct RcbInstance {
    /// Its configuration (writable attributes change `values`, not this).
    pub config: RcbConfig,
    /// Data set members (domain-specific names, optionally an array element or component by
    /// alternate access), in order: the configured data set's, or the one DatSet was set to.
    pub members: Vec<VariableRef>,
    values: UrcbValues,
    enabled: bool,
    owner: Option<ConnId>,
    gi_pending: bool,
    resv_tms: i64,
    entry_id: u64,
    time_of_entry: [u8; 6],
    next_integrity_ms: Option<u64>,
    pending: Vec<bool>,
    /// The association that last wrote DatSet (an aa-specific data set is its own).
    dat_set_conn: Option<ConnId>,
    /// Whether it stands for one instance per association (TISSUE 1771), or is one's copy.
    pub(super) sharing: super::rcb_per_association::Sharing,
}

fn dat_set_ref(c: &RcbConfig) -> String {
    if c.data_set.is_empty() {
        String::new()
    } else {
        format!("{}/{}", c.domain, c.data_set)
    }
}

impl RcbInstance {
    /// A disabled, unreserved instance.
    pub fn new(config: RcbConfig, members: Vec<VariableRef>) -> Self {
        let values = UrcbValues {
            rpt_id: config.rpt_id.clone(),
            rpt_ena: false,
            resv: false,
            dat_set: dat_set_ref(&config),
            conf_rev: config.conf_rev,
            opt_flds: config.opt_flds.clone(),
            buf_tm: config.buf_tm,
            sq_num: 0,
            trg_ops: config.trg_ops.clone(),
            intg_pd: config.intg_pd,
            gi: false,
            owner: None,
        };
        let n = members.len();
        RcbInstance {
            config,
            members,
            values,
            enabled: false,
            owner: None,
            gi_pending: false,
            resv_tms: 0,
            entry_id: 0,
            time_of_entry: [0; 6],
            next_integrity_ms: None,
            pending: vec![false; n],
            dat_set_conn: None,
            sharing: super::rcb_per_association::Sharing::One,
        }
    }

    /// Whether a write by `conn` is refused as temporarily-unavailable whatever it writes
    /// (enabled, or reserved by another association).
    pub fn locked_for(&self, conn: ConnId) -> bool {
        self.enabled || self.owner.is_some_and(|o| o != conn)
    }

    /// The association that last set DatSet by a write, if any.
    pub fn dat_set_owner(&self) -> Option<ConnId> {
        self.dat_set_conn
    }

    /// A write of DatSet whose reference the model has resolved to `members` (the model knows
    /// the data sets; the RCB the write rules): refused like any other attribute while
    /// enabled or reserved by another association; a new value increments ConfRev (IEC
    /// 61850-7-2 17.2.2.6: ConfRev counts changes of the referenced data set) and reserves.
    pub fn write_data_set(
        &mut self,
        conn: ConnId,
        reference: &str,
        members: Vec<VariableRef>,
    ) -> Result<(), DataAccessError> {
        if self.locked_for(conn) {
            return Err(DataAccessError::TEMPORARILY_UNAVAILABLE);
        }
        if self.values.dat_set != reference || self.members != members {
            self.values.dat_set = reference.to_string();
            self.values.conf_rev = self.values.conf_rev.wrapping_add(1);
            self.pending = vec![false; members.len()];
            self.members = members;
        }
        self.dat_set_conn = Some(conn);
        self.owner = Some(conn);
        Ok(())
    }

    /// Back to the configured data set (its association-specific one went away).
    pub fn restore_data_set(&mut self, members: Vec<VariableRef>) {
        self.values.dat_set = dat_set_ref(&self.config);
        self.values.conf_rev = self.values.conf_rev.wrapping_add(1);
        self.pending = vec![false; members.len()];
        self.members = members;
        self.dat_set_conn = None;
    }

    /// The attribute values as a client reads them (RptEna and Resv reflect the state).
    pub fn values(&self) -> UrcbValues {
        let mut v = self.values.clone();
        v.rpt_ena = self.enabled;
        v.resv = self.owner.is_some();
        v
    }

    /// Whether it is enabled for `conn`.
    pub fn is_enabled_for(&self, conn: ConnId) -> bool {
        self.enabled && self.owner == Some(conn)
    }

    /// Whether it is enabled (by anyone).
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Take a pending GI for `conn` (set by a write of GI=true while enabled, TrgOps with GI).
    pub fn take_gi(&mut self, conn: ConnId) -> bool {
        if self.gi_pending && self.is_enabled_for(conn) {
            self.gi_pending = false;
            true
        } else {
            false
        }
    }

    /// The components as (name, value, MMS type), in IEC 61850-8-1 order.
    pub fn elements(&self) -> Vec<(&'static str, Data, TypeSpec)> {
        let v = self.values();
        let vs129 = TypeSpec::VisibleString(-129);
        let u32t = TypeSpec::Unsigned(32);
        if !self.config.buffered {
            let Data::Structure(d) = v.to_data() else {
                return Vec::new();
            };
            let types = [
                vs129.clone(),
                TypeSpec::Boolean,
                TypeSpec::Boolean,
                vs129,
                u32t.clone(),
                TypeSpec::BitString(-10),
                u32t.clone(),
                TypeSpec::Unsigned(8),
                TypeSpec::BitString(-6),
                u32t,
                TypeSpec::Boolean,
            ];
            return URCB_ELEMENTS
                .iter()
                .zip(d)
                .zip(types)
                .map(|((n, d), t)| (*n, d, t))
                .collect();
        }
        let mut out = vec![
            ("RptID", Data::VisibleString(v.rpt_id), vs129.clone()),
            ("RptEna", Data::Boolean(v.rpt_ena), TypeSpec::Boolean),
            ("DatSet", Data::VisibleString(v.dat_set), vs129),
            ("ConfRev", Data::Unsigned(v.conf_rev as u64), u32t.clone()),
            ("OptFlds", v.opt_flds.to_data(), TypeSpec::BitString(-10)),
            ("BufTm", Data::Unsigned(v.buf_tm as u64), u32t.clone()),
            (
                "SqNum",
                Data::Unsigned(v.sq_num as u64),
                TypeSpec::Unsigned(16),
            ),
            ("TrgOps", v.trg_ops.to_data(), TypeSpec::BitString(-6)),
            ("IntgPd", Data::Unsigned(v.intg_pd as u64), u32t),
            ("GI", Data::Boolean(false), TypeSpec::Boolean),
            ("PurgeBuf", Data::Boolean(false), TypeSpec::Boolean),
            (
                "EntryID",
                Data::OctetString(self.entry_id.to_be_bytes().to_vec()),
                TypeSpec::OctetString(8),
            ),
            (
                "TimeofEntry",
                Data::BinaryTime(self.time_of_entry.to_vec()),
                TypeSpec::BinaryTime(true),
            ),
        ];
        if self.config.resv_tms {
            out.push((
                "ResvTms",
                Data::Integer(self.resv_tms),
                TypeSpec::Integer(16),
            ));
        }
        out
    }

    /// One component's current value.
    pub fn element(&self, name: &str) -> Option<Data> {
        self.elements()
            .into_iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, d, _)| d)
    }

    /// The whole RCB as a Read returns it.
    pub fn to_data(&self) -> Data {
        Data::Structure(self.elements().into_iter().map(|(_, d, _)| d).collect())
    }

    /// Write one attribute (rules in the module documentation).
    pub fn write(
        &mut self,
        conn: ConnId,
        element: &str,
        value: &Data,
    ) -> Result<(), DataAccessError> {
        let current = self
            .element(element)
            .ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
        if current.tag() != value.tag() {
            return Err(DataAccessError::TYPE_INCONSISTENT);
        }
        if self.owner.is_some_and(|o| o != conn) {
            return Err(DataAccessError::TEMPORARILY_UNAVAILABLE);
        }
        let as_bool = matches!(value, Data::Boolean(true));
        match element {
            "RptEna" => {
                if as_bool {
                    if self.enabled {
                        return Err(DataAccessError::TEMPORARILY_UNAVAILABLE);
                    }
                    self.enabled = true;
                    self.gi_pending = false;
                    self.values.sq_num = 0;
                    self.next_integrity_ms = None;
                    self.pending.iter_mut().for_each(|p| *p = false);
                } else if self.enabled {
                    self.enabled = false;
                    self.gi_pending = false;
                } else {
                    // Disabling a disabled RCB succeeds without reserving it.
                    return Ok(());
                }
            }
            "GI" => {
                if !self.is_enabled_for(conn) {
                    return Err(DataAccessError::TEMPORARILY_UNAVAILABLE);
                }
                if as_bool && self.values.trg_ops.get(trg_ops::GI) {
                    self.gi_pending = true;
                }
                return Ok(());
            }
            _ if self.enabled => return Err(DataAccessError::TEMPORARILY_UNAVAILABLE),
            "Resv" => {
                self.owner = as_bool.then_some(conn);
                return Ok(());
            }
            "ResvTms" => {
                let Data::Integer(v) = value else {
                    return Err(DataAccessError::TYPE_INCONSISTENT);
                };
                if !(-1..=i16::MAX as i64).contains(v) {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
                self.resv_tms = *v;
            }
            "PurgeBuf" => {
                // Nothing is buffered while disabled: the purge is immediate and empty.
            }
            "EntryID" => {
                let Data::OctetString(v) = value else {
                    return Err(DataAccessError::TYPE_INCONSISTENT);
                };
                let ok = v.len() == 8
                    && (v.iter().all(|b| *b == 0) || v[..] == self.entry_id.to_be_bytes());
                if !ok {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
            }
            "DatSet" => {
                if value != &Data::VisibleString(self.values.dat_set.clone()) {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
            }
            "RptID" => {
                if let Data::VisibleString(s) = value {
                    self.values.rpt_id = s.clone();
                }
            }
            "OptFlds" | "TrgOps" => {
                let bits =
                    BitString::from_data(value).ok_or(DataAccessError::OBJECT_VALUE_INVALID)?;
                let (target, len) = if element == "OptFlds" {
                    (&mut self.values.opt_flds, opt_flds::LEN)
                } else {
                    (&mut self.values.trg_ops, trg_ops::LEN)
                };
                let mut b = BitString::new(len);
                bits.ones()
                    .filter(|&i| i < len)
                    .for_each(|i| b.set(i, true));
                *target = b;
            }
            "BufTm" | "IntgPd" => {
                let Data::Unsigned(v) = value else {
                    return Err(DataAccessError::TYPE_INCONSISTENT);
                };
                let v = u32::try_from(*v).map_err(|_| DataAccessError::OBJECT_VALUE_INVALID)?;
                if element == "BufTm" {
                    self.values.buf_tm = v;
                } else {
                    self.values.intg_pd = v;
                }
            }
            // ConfRev, SqNum, TimeofEntry, Owner.
            _ => return Err(DataAccessError::OBJECT_ACCESS_DENIED),
        }
        // Every successful write reserves the RCB for the writer (libiec61850).
        self.owner = Some(conn);
        Ok(())
    }

    /// Enabled for `conn` with SqNum 0, bypassing the write rules: for sizing a report.
    pub(crate) fn force_enabled_for(&mut self, conn: ConnId) {
        self.enabled = true;
        self.owner = Some(conn);
        self.values.sq_num = 0;
    }

    /// The connection closed: libiec61850 disables and unreserves its RCBs.
    pub fn connection_closed(&mut self, conn: ConnId) {
        if self.owner == Some(conn) {
            self.owner = None;
            self.enabled = false;
            self.gi_pending = false;
        }
    }

    /// Note a data change of the members at `indices` (kept until the next data-change
    /// report); ignored while disabled, since nothing is buffered then.
    pub fn mark_changed(&mut self, indices: &[usize]) {
        if self.enabled {
            for &i in indices {
                if let Some(p) = self.pending.get_mut(i) {
                    *p = true;
                }
            }
        }
    }

    /// Take the members changed since the last data-change report.
    pub fn take_changed(&mut self) -> Vec<usize> {
        let out = (0..self.pending.len())
            .filter(|&i| self.pending[i])
            .collect();
        self.pending.iter_mut().for_each(|p| *p = false);
        out
    }

    /// Whether an integrity report is due at `now_ms` (IntgPd > 0 and TrgOps period); the
    /// first period starts when this is first asked after enabling.
    pub fn integrity_due(&mut self, now_ms: u64) -> bool {
        let pd = self.values.intg_pd as u64;
        if !self.enabled || pd == 0 || !self.values.trg_ops.get(trg_ops::INTEGRITY) {
            self.next_integrity_ms = None;
            return false;
        }
        match self.next_integrity_ms {
            None => {
                self.next_integrity_ms = Some(now_ms + pd);
                false
            }
            Some(t) if now_ms >= t => {
                // Keep the schedule, without bursts after a stall.
                let next = t + pd;
                self.next_integrity_ms = Some(if next <= now_ms { now_ms + pd } else { next });
                true
            }
            Some(_) => false,
        }
    }

    /// Build a report with `reason` (a TrgOps bit) for the included member indices and their
    /// values (in the same order), or `None` if TrgOps exclude the reason or nothing is
    /// included. Increments SqNum (IEC 61850-7-2 17.2.3.2.2.3); a BRCB also moves EntryID and
    /// TimeofEntry. `None` too when it is not enabled for `conn`.
    pub fn build_report(
        &mut self,
        conn: ConnId,
        reason: usize,
        included: &[(usize, Data)],
        unix_ms: u64,
    ) -> Option<InformationReport> {
        if !self.is_enabled_for(conn) || !self.values.trg_ops.get(reason) || included.is_empty() {
            return None;
        }
        let n = self.members.len();
        let mut inclusion = BitString::new(n);
        included
            .iter()
            .filter(|(i, _)| *i < n)
            .for_each(|(i, _)| inclusion.set(*i, true));
        let mut rows: Vec<&(usize, Data)> = included.iter().filter(|(i, _)| *i < n).collect();
        rows.sort_by_key(|(i, _)| *i);
        rows.dedup_by_key(|(i, _)| *i);
        let time = binary_time_from_unix_ms(unix_ms);
        let entry_id = if self.config.buffered {
            self.entry_id = self.entry_id.wrapping_add(1);
            self.time_of_entry = time;
            Some(self.entry_id.to_be_bytes().to_vec())
        } else {
            None
        };
        let report = Report {
            rpt_id: self.values.rpt_id.clone(),
            seq_num: Some(self.values.sq_num),
            time_of_entry: Some(time),
            data_set: Some(self.values.dat_set.clone()),
            buf_ovfl: Some(false),
            entry_id,
            conf_rev: Some(self.values.conf_rev),
            segment: None,
            data_refs: rows
                .iter()
                .map(|(i, _)| super::dynamic_lists::member_reference(&self.members[*i]))
                .collect(),
            values: rows.iter().map(|(_, d)| d.clone()).collect(),
            reasons: vec![BitString::with_bits(trg_ops::LEN, &[reason]); rows.len()],
            inclusion,
            opt_flds: self.values.opt_flds.clone(),
        };
        // As the fixed model: SqNum counts on as a 16-bit value (libiec61850's uint16_t).
        self.values.sq_num = self.values.sq_num.wrapping_add(1);
        Some(report.to_information_report())
    }
}
