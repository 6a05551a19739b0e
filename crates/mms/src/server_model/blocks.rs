//! The control blocks a model serves besides its RCBs: setting group control blocks
//! ([`super::setting_group`]), GOOSE control blocks ([`super::gocb`]) and sampled-value
//! control blocks ([`super::svcb`]). Their state lives here, once; a logical node's view
//! splices each in under its FC (`SP`, `GO`, `MS`, `US`) when a client reads or browses, as
//! for RCBs, and a write below a block's item goes to the block's rules.

use gander_wire::data::Data;

use super::gocb::{GocbConfig, GocbInstance};
use super::setting_group::SettingGroups;
use super::svcb::{SvcbConfig, SvcbInstance};
use super::{fc_rank, ModelError, ModelNode, ServerModel};
use crate::association::ConnId;
use crate::service::DataAccessError;

/// SGCBs, GoCBs and SVCBs of a model, and the model's clock.
#[derive(Debug, Clone, Default)]
pub(super) struct ControlBlocks {
    pub(super) sgcbs: Vec<SettingGroups>,
    pub(super) gocbs: Vec<GocbInstance>,
    pub(super) svcbs: Vec<SvcbInstance>,
    pub(super) lcbs: Vec<super::lcb::LcbInstance>,
    /// The logs (MMS journals) as (domain, `LN$logName`).
    pub(super) logs: Vec<(String, String)>,
    /// The time of the last [`ServerModel::tick`], Unix ms (LActTm, edit reservations).
    pub(super) now_ms: u64,
}

/// Put `(name, node)` into the FC component `fc` of a logical node's components, creating the
/// component at its [`super::FC_ORDER`] place when the LN has none; `first` puts it before
/// the component's other members (libiec61850 serves the SGCB first in `SP`).
pub(super) fn splice(
    fcs: &mut Vec<(String, ModelNode)>,
    fc: &str,
    name: &str,
    node: ModelNode,
    first: bool,
) {
    let pos = match fcs.iter().position(|(f, _)| f == fc) {
        Some(p) => p,
        None => {
            let at = fcs
                .iter()
                .position(|(f, _)| fc_rank(f) > fc_rank(fc))
                .unwrap_or(fcs.len());
            fcs.insert(at, (fc.to_string(), ModelNode::Struct(Vec::new())));
            at
        }
    };
    if let ModelNode::Struct(c) = &mut fcs[pos].1 {
        let at = if first { 0 } else { c.len() };
        c.insert(at, (name.to_string(), node));
    }
}

impl ControlBlocks {
    /// Whether LN `ln` of `dom` holds any of these blocks.
    pub(super) fn any_in(&self, dom: &str, ln: &str) -> bool {
        self.sgcbs
            .iter()
            .any(|s| s.config.domain == dom && s.config.ln == ln)
            || self
                .gocbs
                .iter()
                .any(|g| g.config.domain == dom && g.config.ln == ln)
            || self
                .svcbs
                .iter()
                .any(|s| s.config.domain == dom && s.config.ln == ln)
            || self
                .lcbs
                .iter()
                .any(|l| l.config.domain == dom && l.config.ln == ln)
    }

    /// Splice the blocks of LN `ln` of `dom` into its FC components.
    pub(super) fn splice_into(&self, dom: &str, ln: &str, fcs: &mut Vec<(String, ModelNode)>) {
        for s in &self.sgcbs {
            if s.config.domain == dom && s.config.ln == ln {
                splice(fcs, "SP", "SGCB", s.node(), true);
            }
        }
        for g in &self.gocbs {
            if g.config.domain == dom && g.config.ln == ln {
                splice(fcs, "GO", &g.config.name, g.node(), false);
            }
        }
        for s in &self.svcbs {
            if s.config.domain == dom && s.config.ln == ln {
                splice(fcs, s.fc(), &s.config.name, s.node(), false);
            }
        }
        for l in &self.lcbs {
            if l.config.domain == dom && l.config.ln == ln {
                splice(fcs, "LG", &l.config.name, l.node(), false);
            }
        }
    }
}

/// The part of `item` below `block` (`""` for the block itself), if `item` is in it.
pub(super) fn below<'a>(item: &'a str, block: &str) -> Option<&'a str> {
    let rest = item.strip_prefix(block)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix('$')
    }
}

impl ServerModel {
    /// Add a GOOSE control block; its LN and data set (when named) must exist.
    pub fn add_gocb(&mut self, config: GocbConfig) -> Result<(), ModelError> {
        self.check_block(
            &config.domain,
            &config.ln,
            "GO",
            &config.name,
            &config.data_set,
        )?;
        self.blocks.gocbs.push(GocbInstance::new(config));
        Ok(())
    }

    /// Add a sampled-value control block; its LN and data set (when named) must exist.
    pub fn add_svcb(&mut self, config: SvcbConfig) -> Result<(), ModelError> {
        let fc = if config.unicast { "US" } else { "MS" };
        self.check_block(
            &config.domain,
            &config.ln,
            fc,
            &config.name,
            &config.data_set,
        )?;
        self.blocks.svcbs.push(SvcbInstance::new(config));
        Ok(())
    }

    /// The GoCBs.
    pub fn gocbs(&self) -> &[GocbInstance] {
        &self.blocks.gocbs
    }

    /// The SVCBs.
    pub fn svcbs(&self) -> &[SvcbInstance] {
        &self.blocks.svcbs
    }

    /// The time is `unix_ms`: the server calls this before handing a request to the model, so
    /// LActTm has the time of the request; edit reservations whose ResvTms ran out end; the
    /// controls run sboTimeout and operTm on the same clock.
    pub fn tick(&mut self, unix_ms: u64) {
        self.blocks.now_ms = unix_ms;
        self.set_clock(unix_ms);
        self.expire_setting_group_edits(unix_ms);
    }

    pub(super) fn check_block(
        &self,
        domain: &str,
        ln: &str,
        fc: &str,
        name: &str,
        data_set: &str,
    ) -> Result<(), ModelError> {
        let block = format!("{domain}/{ln}${fc}${name}");
        let bad = |what: String| ModelError::BadControlBlock {
            block: block.clone(),
            what,
        };
        let d = self
            .domain(domain)
            .ok_or_else(|| ModelError::UnknownDomain(domain.into()))?;
        if name.is_empty() || name.contains('$') {
            return Err(bad("the name must be a non-empty MMS identifier".into()));
        }
        if !d.lns.iter().any(|(n, _)| n == ln) {
            return Err(bad(format!("no logical node {ln:?}")));
        }
        if !data_set.is_empty() && !d.lists.iter().any(|l| l.name == data_set) {
            return Err(bad(format!("no data set {data_set:?}")));
        }
        let item = format!("{ln}${fc}${name}");
        let b = &self.blocks;
        let taken = b
            .gocbs
            .iter()
            .any(|g| g.config.domain == domain && g.item() == item)
            || b.svcbs
                .iter()
                .any(|s| s.config.domain == domain && s.item() == item)
            || b.lcbs
                .iter()
                .any(|l| l.config.domain == domain && l.item() == item);
        if taken {
            return Err(ModelError::Duplicate {
                domain: domain.into(),
                what: "control block",
                name: item,
            });
        }
        Ok(())
    }

    /// A write of `item` in `dom` that falls in an SGCB, GoCB or SVCB, with its answer; None
    /// when `item` is in none of them.
    pub(super) fn write_block(
        &mut self,
        conn: ConnId,
        dom: &str,
        item: &str,
        value: &Data,
    ) -> Option<Result<(), DataAccessError>> {
        let b = &self.blocks;
        if let Some((i, element)) = b.sgcbs.iter().enumerate().find_map(|(i, s)| {
            (s.config.domain == dom)
                .then(|| below(item, &s.item()))
                .flatten()
                .map(|e| (i, e))
        }) {
            return Some(self.write_sgcb(i, conn, element, value));
        }
        if let Some((i, element)) = b.gocbs.iter().enumerate().find_map(|(i, g)| {
            (g.config.domain == dom)
                .then(|| below(item, &g.item()))
                .flatten()
                .map(|e| (i, e))
        }) {
            let lists: Vec<(String, String)> = self
                .domains
                .iter()
                .flat_map(|d| d.lists.iter().map(|l| (d.name.clone(), l.name.clone())))
                .collect();
            let exists = |d: &str, i: &str| lists.iter().any(|(a, b)| a == d && b == i);
            return Some(self.blocks.gocbs[i].write(element, value, exists));
        }
        if let Some(answer) = self.write_lcb(dom, item, value) {
            return Some(answer);
        }
        let b = &self.blocks;
        let i = b
            .svcbs
            .iter()
            .position(|s| s.config.domain == dom && below(item, &s.item()).is_some())?;
        let s = &mut self.blocks.svcbs[i];
        let element = below(item, &s.item()).unwrap_or_default();
        Some(s.write(conn, element, value))
    }

    /// Whether a GoCB's DatSet or an SVCB's data set names the persistent data set `dom/item`
    /// (it may then not be deleted: IEC 61850-7-2 Ed.2 §9.3.4, DeleteDataSet of a data set
    /// referenced by a control block).
    pub(super) fn block_references(&self, dom: &str, item: &str) -> bool {
        let r = format!("{dom}/{item}");
        self.blocks.gocbs.iter().any(|g| g.dat_set() == r)
            || self.blocks.lcbs.iter().any(|l| l.dat_set() == r)
            || self
                .blocks
                .svcbs
                .iter()
                .any(|s| s.config.domain == dom && s.config.data_set == item)
    }

    /// The association closed: its SVCB reservations and setting group edits end.
    pub(super) fn blocks_closed(&mut self, conn: ConnId) {
        self.blocks
            .svcbs
            .iter_mut()
            .for_each(|s| s.connection_closed(conn));
        self.setting_groups_closed(conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::association::ServerHandler;
    use crate::bit_string::BitString;
    use crate::server_model::{sv_opt_flds, DstAddress};
    use crate::service::{ObjectClass, ObjectName, ObjectScope, TypeSpec};

    const D: &str = "IEDLD0";

    fn s(c: Vec<(&str, ModelNode)>) -> ModelNode {
        ModelNode::Struct(c.into_iter().map(|(n, v)| (n.to_string(), v)).collect())
    }

    fn gocb(name: &str, data_set: &str) -> GocbConfig {
        GocbConfig {
            domain: D.into(),
            ln: "LLN0".into(),
            name: name.into(),
            go_id: "ev".into(),
            data_set: data_set.into(),
            conf_rev: 1,
            dst: DstAddress::LIBIEC61850_DEFAULT,
            min_time: 10,
            max_time: 2000,
            fixed_offs: false,
        }
    }

    fn svcb(unicast: bool) -> SvcbConfig {
        SvcbConfig {
            domain: D.into(),
            ln: "LLN0".into(),
            name: "sv01".into(),
            unicast,
            sv_id: "mu".into(),
            data_set: "LLN0$Events".into(),
            conf_rev: 1,
            smp_rate: 4000,
            opt_flds: BitString::with_bits(sv_opt_flds::LEN, &[sv_opt_flds::SAMPLE_RATE]),
            smp_mod: 0,
            dst: DstAddress::LIBIEC61850_DEFAULT,
            no_asdu: 1,
        }
    }

    /// LLN0 with ST only (no GO/MS/US components of its own), GGIO1, two data sets.
    fn model() -> ServerModel {
        let mut m = ServerModel::new("gander", "test", "1");
        m.add_domain(D).unwrap();
        let st = |n: &str| {
            s(vec![(
                "ST",
                s(vec![(
                    n,
                    s(vec![(
                        "stVal",
                        ModelNode::leaf(TypeSpec::Boolean, Data::Boolean(false)),
                    )]),
                )]),
            )])
        };
        m.add_logical_node(D, "LLN0", st("Beh")).unwrap();
        m.add_logical_node(D, "GGIO1", st("Ind1")).unwrap();
        for ds in ["LLN0$Events", "LLN0$Other"] {
            m.add_data_set(D, ds, vec![ObjectName::domain(D, "GGIO1$ST$Ind1")])
                .unwrap();
        }
        m.add_gocb(gocb("gcb01", "LLN0$Events")).unwrap();
        m.add_gocb(gocb("gcb02", "")).unwrap();
        m.add_svcb(svcb(false)).unwrap();
        m.add_svcb(svcb(true)).unwrap();
        m
    }

    fn n(item: &str) -> ObjectName {
        ObjectName::domain(D, item)
    }

    #[test]
    fn blocks_are_browsed_and_read_under_their_fcs() {
        let mut m = model();
        let names = ServerModel::name_list(
            &m,
            ObjectClass::NAMED_VARIABLE,
            &ObjectScope::Domain(D.into()),
        )
        .unwrap();
        for v in [
            "LLN0$GO",
            "LLN0$GO$gcb01$DstAddress$APPID",
            "LLN0$GO$gcb02$NdsCom",
            "LLN0$MS$sv01$MsvID",
            "LLN0$US$sv01$Resv",
            "LLN0$US$sv01$UsvID",
        ] {
            assert!(names.contains(&v.to_string()), "{v} missing");
        }
        assert!(!names.iter().any(|v| v.starts_with("GGIO1$GO")));
        // The LN's components in FC order: ST, then US, MS, GO.
        let TypeSpec::Structure { components, .. } = m
            .variable_access_attributes(1, &n("LLN0"))
            .unwrap()
            .unwrap()
            .type_spec
        else {
            panic!()
        };
        let fcs: Vec<String> = components.into_iter().filter_map(|c| c.name).collect();
        assert_eq!(fcs, ["ST", "US", "MS", "GO"]);
        assert_eq!(
            m.read(1, &n("LLN0$GO$gcb01$DatSet")),
            crate::service::AccessResult::Success(Data::VisibleString("IEDLD0/LLN0$Events".into()))
        );
        let crate::service::AccessResult::Success(Data::Structure(whole)) =
            m.read(1, &n("LLN0$GO$gcb02"))
        else {
            panic!()
        };
        assert_eq!(whole.len(), 9);
        assert_eq!(whole[4], Data::Boolean(true), "NdsCom without a data set");
    }

    #[test]
    fn writes_reach_the_blocks() {
        let mut m = model();
        let w = |m: &mut ServerModel, c, item: &str, v: Data| m.write(c, &n(item), &v);
        assert_eq!(
            w(&mut m, 1, "LLN0$GO$gcb01$GoEna", Data::Boolean(true)),
            Ok(())
        );
        assert_eq!(
            m.value(&n("LLN0$GO$gcb01$GoEna")),
            Some(Data::Boolean(true))
        );
        assert_eq!(
            w(&mut m, 1, "LLN0$GO$gcb02$GoEna", Data::Boolean(true)),
            Err(DataAccessError::OBJECT_VALUE_INVALID)
        );
        // DatSet names a data set of the model (any domain's), checked by the model.
        let ds = |s: &str| Data::VisibleString(s.into());
        assert_eq!(
            w(&mut m, 1, "LLN0$GO$gcb02$DatSet", ds("IEDLD0/LLN0$Other")),
            Ok(())
        );
        assert_eq!(
            w(&mut m, 1, "LLN0$GO$gcb02$DatSet", ds("IEDLD0/LLN0$None")),
            Err(DataAccessError::OBJECT_VALUE_INVALID)
        );
        assert_eq!(
            w(&mut m, 1, "LLN0$GO$gcb02$GoEna", Data::Boolean(true)),
            Ok(())
        );
        assert_eq!(
            w(&mut m, 1, "LLN0$GO$gcb02", Data::Boolean(true)),
            Err(DataAccessError::TYPE_INCONSISTENT)
        );
        // SVCBs: USVCB reservation by association 1 holds off association 2, until it closes.
        assert_eq!(
            w(&mut m, 1, "LLN0$US$sv01$Resv", Data::Boolean(true)),
            Ok(())
        );
        assert_eq!(
            w(&mut m, 2, "LLN0$US$sv01$SvEna", Data::Boolean(true)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        m.connection_closed(1);
        assert_eq!(
            w(&mut m, 2, "LLN0$US$sv01$SvEna", Data::Boolean(true)),
            Ok(())
        );
        assert_eq!(
            w(&mut m, 2, "LLN0$MS$sv01$SvEna", Data::Boolean(true)),
            Ok(())
        );
        assert_eq!(
            w(&mut m, 2, "LLN0$MS$sv01$SmpRate", Data::Integer(1)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        // A name that only starts like a block is not in it.
        assert_eq!(
            w(&mut m, 1, "LLN0$GO$gcb0", Data::Boolean(true)),
            Err(DataAccessError::OBJECT_NON_EXISTENT)
        );
    }

    #[test]
    fn bad_blocks_are_refused() {
        let mut m = model();
        let bad = |r| matches!(r, Err(ModelError::BadControlBlock { .. }));
        assert!(bad(m.add_gocb(gocb("gcb03", "LLN0$Nope"))));
        assert!(bad(m.add_gocb(gocb("", ""))));
        assert!(bad(m.add_gocb(gocb("a$b", ""))));
        assert!(bad(m.add_gocb(GocbConfig {
            ln: "XCBR9".into(),
            ..gocb("gcb03", "")
        })));
        assert!(matches!(
            m.add_gocb(gocb("gcb01", "")),
            Err(ModelError::Duplicate { .. })
        ));
        assert!(matches!(
            m.add_svcb(svcb(true)),
            Err(ModelError::Duplicate { .. })
        ));
        assert!(matches!(
            m.add_gocb(GocbConfig {
                domain: "X".into(),
                ..gocb("g", "")
            }),
            Err(ModelError::UnknownDomain(_))
        ));
    }

    /// A client-defined data set named by a GoCB's DatSet (or configured in an SVCB) may not
    /// be deleted (IEC 61850-7-2 Ed.2 §9.3.4): service/object-constraint-conflict, as for an
    /// RCB's; pointed elsewhere, it can go.
    #[test]
    fn data_sets_named_by_blocks_are_not_deleted() {
        use crate::service::{DefineNamedVariableListRequest, DeleteNamedVariableListRequest};
        let mut m = model();
        let dyn1 = ObjectName::domain(D, "LLN0$dyn1");
        m.define_list(
            1,
            &DefineNamedVariableListRequest {
                name: dyn1.clone(),
                members: vec![ObjectName::domain(D, "GGIO1$ST$Ind1").into()],
            },
            65000,
        )
        .unwrap();
        let ds = |s: &str| Data::VisibleString(s.into());
        let dat_set = n("LLN0$GO$gcb02$DatSet");
        assert_eq!(m.write(1, &dat_set, &ds("IEDLD0/LLN0$dyn1")), Ok(()));
        let del = DeleteNamedVariableListRequest::specific(vec![dyn1]);
        let e = m.delete_lists(1, &del).unwrap_err();
        assert_eq!((e.class, e.code), (4, 5), "object-constraint-conflict");
        assert_eq!(m.write(1, &dat_set, &ds("")), Ok(()));
        assert_eq!(m.delete_lists(1, &del).unwrap().deleted, 1);
        // The SVCBs' configured data set is referenced for as long as the server runs.
        assert!(m.block_references(D, "LLN0$Events"));
        assert!(!m.block_references(D, "LLN0$Other"));
    }
}
