//! Unbuffered report control blocks with one instance per client association (IEC TISSUE
//! 1771, IEC 61850-6 Ed.2 §9.3.8 `RptEnabled max` with `indexed="false"`): one name,
//! `LN$RP$name`, that every association sees as its own block, with its own RptEna, Resv,
//! options, SqNum and pending data changes, up to `max` associations at a time.
//!
//! How it is served: the configured block stays in the model as a template that no one
//! writes; an association's first write to the block makes its own copy (IEC 61850-8-1
//! §17.2.1: a write reserves), on which the usual write rules of [`RcbInstance::write`] run.
//! Reads by an association show its copy, or the template (disabled, unreserved, as
//! configured) when it has none. A copy goes when its association ends. While `max` copies
//! are reserved (Resv or enabled), another association's write is refused with
//! temporarily-unavailable, the answer IEC 61850-8-1 gives for a block reserved by someone
//! else; a copy its association has released (RptEna false, Resv false) does not count.
//! A buffered block is always one instance (its entries outlive an association), and the
//! SCL crate refuses a buffered block with `indexed="false"` and `max` > 1.

use super::{ModelError, RcbConfig, RcbInstance, ServerModel};
use crate::association::ConnId;
use crate::service::DataAccessError;

/// What an RCB instance of the model is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sharing {
    /// An ordinary instance: one state, whoever reserves it.
    One,
    /// The configured block of a per-association URCB: never written, read by associations
    /// without a copy; up to `max` copies at a time.
    Template {
        /// `RptEnabled max`.
        max: u16,
    },
    /// Association `conn`'s own instance of a per-association URCB.
    Copy {
        /// The association.
        conn: ConnId,
    },
}

impl ServerModel {
    /// Add an unbuffered RCB that gives each association its own instance, up to `max` at a
    /// time (TISSUE 1771; see the module documentation). `max` 1 or a buffered block is an
    /// ordinary instance.
    pub fn add_rcb_per_association(
        &mut self,
        config: RcbConfig,
        max: u16,
    ) -> Result<(), ModelError> {
        let buffered = config.buffered;
        self.add_rcb(config)?;
        if !buffered && max > 1 {
            if let Some(r) = self.rcbs.last_mut() {
                r.sharing = Sharing::Template { max };
            }
        }
        Ok(())
    }

    /// Whether association `conn` (None: no association, the model's own view) sees RCB
    /// instance `r` when it reads the block's name: its own copy, else the template.
    pub(super) fn rcb_visible_to(&self, r: &RcbInstance, conn: Option<ConnId>) -> bool {
        match r.sharing {
            Sharing::One => true,
            Sharing::Copy { conn: c } => conn == Some(c),
            Sharing::Template { .. } => conn.is_none_or(|c| self.rcb_copy_of(r, c).is_none()),
        }
    }

    /// The index of `conn`'s copy of the per-association block `template`, if it has one.
    fn rcb_copy_of(&self, template: &RcbInstance, conn: ConnId) -> Option<usize> {
        self.rcbs.iter().position(|r| {
            r.sharing == (Sharing::Copy { conn })
                && r.config.domain == template.config.domain
                && r.config.item == template.config.item
        })
    }

    /// The instance a write by `conn` to RCB `i` goes to: `i` itself for an ordinary block;
    /// for a per-association template, `conn`'s copy, made now if it has none and fewer than
    /// `max` copies are reserved (else temporarily-unavailable).
    pub(super) fn rcb_for_write(
        &mut self,
        i: usize,
        conn: ConnId,
    ) -> Result<usize, DataAccessError> {
        let Sharing::Template { max } = self.rcbs[i].sharing else {
            return Ok(i);
        };
        if let Some(c) = self.rcb_copy_of(&self.rcbs[i], conn) {
            return Ok(c);
        }
        let t = &self.rcbs[i];
        let held = self
            .rcbs
            .iter()
            .filter(|r| {
                matches!(r.sharing, Sharing::Copy { .. })
                    && r.config.domain == t.config.domain
                    && r.config.item == t.config.item
                    && (r.is_enabled() || r.values().resv)
            })
            .count();
        if held >= usize::from(max) {
            return Err(DataAccessError::TEMPORARILY_UNAVAILABLE);
        }
        let mut copy = t.clone();
        copy.sharing = Sharing::Copy { conn };
        self.rcbs.push(copy);
        Ok(self.rcbs.len() - 1)
    }

    /// The association ended: its copies of per-association blocks go.
    pub(super) fn drop_rcb_copies(&mut self, conn: ConnId) {
        self.rcbs.retain(|r| r.sharing != Sharing::Copy { conn });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::association::ServerHandler;
    use crate::bit_string::BitString;
    use crate::report::{opt_flds, trg_ops};
    use crate::server_model::ModelNode;
    use crate::service::{ObjectName, TypeSpec};
    use gander_wire::data::Data;

    const D: &str = "URIEDCFG";
    const RCB: &str = "LLN0$RP$rcbShared";

    fn model(max: u16) -> ServerModel {
        let mut m = ServerModel::new("gander", "test", "1");
        m.add_domain(D).unwrap();
        m.add_logical_node(D, "LLN0", ModelNode::Struct(vec![]))
            .unwrap();
        let st = ModelNode::Struct(vec![(
            "Ind1".into(),
            ModelNode::Struct(vec![(
                "stVal".into(),
                ModelNode::leaf(TypeSpec::Boolean, Data::Boolean(false)),
            )]),
        )]);
        m.add_logical_node(D, "GGIO1", ModelNode::Struct(vec![("ST".into(), st)]))
            .unwrap();
        m.add_data_set(
            D,
            "LLN0$dsInd",
            vec![ObjectName::domain(D, "GGIO1$ST$Ind1")],
        )
        .unwrap();
        m.add_rcb_per_association(
            RcbConfig {
                domain: D.into(),
                item: RCB.into(),
                buffered: false,
                rpt_id: "URIEDCFG/LLN0.rcbShared".into(),
                data_set: "LLN0$dsInd".into(),
                conf_rev: 1,
                opt_flds: BitString::with_bits(opt_flds::LEN, &[opt_flds::SEQ_NUM]),
                trg_ops: BitString::with_bits(trg_ops::LEN, &[trg_ops::DCHG, trg_ops::GI]),
                buf_tm: 0,
                intg_pd: 0,
                resv_tms: false,
            },
            max,
        )
        .unwrap();
        m
    }

    fn w(m: &mut ServerModel, conn: ConnId, el: &str, v: Data) -> Result<(), DataAccessError> {
        m.write(conn, &ObjectName::domain(D, format!("{RCB}${el}")), &v)
    }

    fn r(m: &mut ServerModel, conn: ConnId, el: &str) -> Data {
        match m.read(conn, &ObjectName::domain(D, format!("{RCB}${el}"))) {
            crate::service::AccessResult::Success(d) => d,
            other => panic!("{el}: {other:?}"),
        }
    }

    #[test]
    fn each_association_enables_its_own_instance_and_gets_its_own_reports() {
        let mut m = model(4);
        assert_eq!(w(&mut m, 1, "RptEna", Data::Boolean(true)), Ok(()));
        // The second association sees a disabled block and enables its own.
        assert_eq!(r(&mut m, 2, "RptEna"), Data::Boolean(false));
        assert_eq!(r(&mut m, 2, "Resv"), Data::Boolean(false));
        assert_eq!(w(&mut m, 2, "RptEna", Data::Boolean(true)), Ok(()));
        assert_eq!(r(&mut m, 1, "RptEna"), Data::Boolean(true));
        assert_eq!(r(&mut m, 2, "RptEna"), Data::Boolean(true));
        // Each gets its GI, with its own SqNum.
        for conn in [1, 2] {
            assert_eq!(w(&mut m, conn, "GI", Data::Boolean(true)), Ok(()));
            assert_eq!(m.due_reports(conn, 1000).len(), 1, "conn {conn}");
        }
        assert_eq!(w(&mut m, 1, "GI", Data::Boolean(true)), Ok(()));
        assert_eq!(m.due_reports(1, 2000).len(), 1);
        assert_eq!(r(&mut m, 1, "SqNum"), Data::Unsigned(2));
        assert_eq!(r(&mut m, 2, "SqNum"), Data::Unsigned(1));
        // A data change reaches both.
        m.set_value(
            &ObjectName::domain(D, "GGIO1$ST$Ind1$stVal"),
            Data::Boolean(true),
        )
        .unwrap();
        assert_eq!(m.due_reports(1, 3000).len(), 1);
        assert_eq!(m.due_reports(2, 3000).len(), 1);
        // One disabling leaves the other's on; options are each one's own.
        assert_eq!(w(&mut m, 2, "RptEna", Data::Boolean(false)), Ok(()));
        assert_eq!(w(&mut m, 2, "IntgPd", Data::Unsigned(500)), Ok(()));
        assert_eq!(r(&mut m, 1, "RptEna"), Data::Boolean(true));
        assert_eq!(r(&mut m, 1, "IntgPd"), Data::Unsigned(0));
        assert_eq!(r(&mut m, 2, "IntgPd"), Data::Unsigned(500));
        // A third association without a copy sees the block as configured.
        assert_eq!(r(&mut m, 3, "IntgPd"), Data::Unsigned(0));
        assert_eq!(
            m.value(&ObjectName::domain(D, format!("{RCB}$RptEna"))),
            Some(Data::Boolean(false))
        );
    }

    #[test]
    fn beyond_max_reserved_associations_a_write_is_temporarily_unavailable() {
        let mut m = model(2);
        assert_eq!(w(&mut m, 1, "Resv", Data::Boolean(true)), Ok(()));
        assert_eq!(w(&mut m, 2, "RptEna", Data::Boolean(true)), Ok(()));
        assert_eq!(
            w(&mut m, 3, "RptEna", Data::Boolean(true)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        // Released by one (Resv false): the third gets in.
        assert_eq!(w(&mut m, 1, "Resv", Data::Boolean(false)), Ok(()));
        assert_eq!(w(&mut m, 3, "RptEna", Data::Boolean(true)), Ok(()));
        // An association that ends frees its place.
        m.connection_closed(2);
        assert_eq!(w(&mut m, 4, "RptEna", Data::Boolean(true)), Ok(()));
        assert_eq!(
            w(&mut m, 5, "Resv", Data::Boolean(true)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        // Its own copy is still written by the owner.
        assert_eq!(w(&mut m, 4, "RptEna", Data::Boolean(false)), Ok(()));
    }

    #[test]
    fn the_name_list_has_the_block_once() {
        let mut m = model(4);
        assert_eq!(w(&mut m, 1, "RptEna", Data::Boolean(true)), Ok(()));
        assert_eq!(w(&mut m, 2, "RptEna", Data::Boolean(true)), Ok(()));
        let names = m
            .name_list(
                crate::service::ObjectClass::NAMED_VARIABLE,
                &crate::service::ObjectScope::Domain(D.into()),
            )
            .unwrap();
        assert_eq!(names.iter().filter(|n| n.as_str() == RCB).count(), 1);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Ena(ConnId, bool),
        Resv(ConnId, bool),
        Close(ConnId),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let conn = 1u64..6;
        prop_oneof![
            (conn.clone(), any::<bool>()).prop_map(|(c, b)| Op::Ena(c, b)),
            (conn.clone(), any::<bool>()).prop_map(|(c, b)| Op::Resv(c, b)),
            conn.prop_map(Op::Close),
        ]
    }

    proptest::proptest! {
        /// Any sequence of enables, reservations and closes by five associations on a block
        /// with max 3 follows a plain account of TISSUE 1771: each association's RptEna and
        /// Resv are its own, and a write by one without a copy is refused exactly while three
        /// others hold theirs.
        #[test]
        fn each_association_has_its_own_block_up_to_max(
            ops in proptest::collection::vec(op(), 0..60)
        ) {
            use std::collections::BTreeMap;
            let mut m = model(3);
            // conn -> (enabled, reserved) of its copy.
            let mut copies: BTreeMap<ConnId, (bool, bool)> = BTreeMap::new();
            for o in ops {
                let held = |c: &BTreeMap<ConnId, (bool, bool)>, me: ConnId| {
                    c.iter().filter(|(k, (e, r))| **k != me && (*e || *r)).count()
                };
                match o {
                    Op::Close(c) => {
                        m.connection_closed(c);
                        copies.remove(&c);
                    }
                    Op::Ena(c, on) | Op::Resv(c, on) => {
                        let ena = matches!(o, Op::Ena(..));
                        let el = if ena { "RptEna" } else { "Resv" };
                        let r = w(&mut m, c, el, Data::Boolean(on));
                        let has = copies.contains_key(&c);
                        if !has && held(&copies, c) >= 3 {
                            proptest::prop_assert_eq!(r, Err(DataAccessError::TEMPORARILY_UNAVAILABLE));
                            continue;
                        }
                        let (e, res) = copies.entry(c).or_insert((false, false));
                        let want = if ena {
                            if on && *e {
                                Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
                            } else {
                                // Enabling reserves; disabling an enabled block keeps the
                                // reservation; disabling a disabled one changes nothing.
                                if on || *e {
                                    *res = true;
                                }
                                *e = on;
                                Ok(())
                            }
                        } else if *e {
                            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
                        } else {
                            *res = on;
                            Ok(())
                        };
                        proptest::prop_assert_eq!(r, want);
                    }
                }
                for c in 1u64..6 {
                    let (e, res) = copies.get(&c).copied().unwrap_or((false, false));
                    proptest::prop_assert_eq!(r(&mut m, c, "RptEna"), Data::Boolean(e));
                    proptest::prop_assert_eq!(r(&mut m, c, "Resv"), Data::Boolean(res));
                }
            }
        }
    }
}
