//! One GOOSE control block (GoCB) on the server side: its attributes as IEC 61850-8-1 §18.1
//! maps them onto an MMS structure under the FC `GO` of its logical node (`LLN0$GO$gcb01`), and
//! the write rules of SetGoCBValues (IEC 61850-7-2 Ed.2 §18.3.3), which 8-1 maps onto MMS Write.
//!
//! Components in the order and with the MMS types libiec61850 1.6 serves (its
//! `mms_goose.c`, the same as 8-1's table for the GoCB): GoEna (boolean), GoID
//! (visible-string(-129)), DatSet (visible-string(-129)), ConfRev (unsigned(32)), NdsCom
//! (boolean), DstAddress (PhyComAddr: Addr octet-string(6), PRIORITY unsigned(8), VID
//! unsigned(16), APPID unsigned(16)), MinTime (unsigned(32)), MaxTime (unsigned(32)),
//! FixedOffs (boolean).
//!
//! Write rules (IEC 61850-7-2 Ed.2 §18.2.2, GoCB class table; §18.3.3 SetGoCBValues):
//! - a value of another MMS kind than the attribute's is type-inconsistent;
//! - GoEna may always be written, but not set TRUE while NdsCom is TRUE (the block has no
//!   usable data set): object-value-invalid, as libiec61850 answers;
//! - while GoEna is TRUE every other attribute is temporarily-unavailable (7-2: "if GoEna is
//!   TRUE, only GoEna may be changed");
//! - GoID and DatSet are the only other writable attributes (RW in 7-2's table); DatSet must
//!   be empty (no data set: NdsCom becomes TRUE) or name a data set the server has, as
//!   `LD/LN$name`; a change of DatSet counts in ConfRev (7-2 Ed.2 §18.2.2.5);
//! - ConfRev, NdsCom, DstAddress, MinTime, MaxTime and FixedOffs are read-only:
//!   object-access-denied.
//!
//! gander's MMS server does not publish GOOSE: GoEna is state a client can set and read back,
//! as GetGoCBValues/SetGoCBValues see it (`docs/mms-peers.md`).

use gander_wire::data::Data;

use super::node::{ModelNode, SetError};
use crate::service::{DataAccessError, TypeSpec};

/// The longest GoID / DatSet value (IEC 61850-8-1: VisString129).
pub(super) const MAX_REF_LEN: usize = 129;

/// GoCB component names in IEC 61850-8-1 order.
pub const GOCB_ELEMENTS: [&str; 9] = [
    "GoEna",
    "GoID",
    "DatSet",
    "ConfRev",
    "NdsCom",
    "DstAddress",
    "MinTime",
    "MaxTime",
    "FixedOffs",
];

/// The layer-2 destination of a GOOSE or SV stream: IEC 61850-8-1's PhyComAddr structure
/// (Addr, PRIORITY, VID, APPID), from the SCL's GSE/SMV `Address` (`MAC-Address`,
/// `VLAN-PRIORITY`, `VLAN-ID`, `APPID`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DstAddress {
    /// Destination MAC address.
    pub addr: [u8; 6],
    /// VLAN user priority (0..=7).
    pub priority: u8,
    /// VLAN identifier (12 bits).
    pub vid: u16,
    /// APPID.
    pub appid: u16,
}

impl DstAddress {
    /// What libiec61850 1.6 serves when the SCL gives no address (its `stack_config.h`
    /// GOOSE defaults: 01-0C-CD-01-00-01, priority 4, VLAN 0, APPID 0x1000).
    pub const LIBIEC61850_DEFAULT: DstAddress = DstAddress {
        addr: [0x01, 0x0c, 0xcd, 0x01, 0x00, 0x01],
        priority: 4,
        vid: 0,
        appid: 0x1000,
    };

    /// The PhyComAddr structure with its MMS types.
    pub fn node(&self) -> ModelNode {
        ModelNode::Struct(vec![
            (
                "Addr".into(),
                ModelNode::leaf(
                    TypeSpec::OctetString(6),
                    Data::OctetString(self.addr.to_vec()),
                ),
            ),
            (
                "PRIORITY".into(),
                ModelNode::leaf(TypeSpec::Unsigned(8), Data::Unsigned(self.priority.into())),
            ),
            (
                "VID".into(),
                ModelNode::leaf(TypeSpec::Unsigned(16), Data::Unsigned(self.vid.into())),
            ),
            (
                "APPID".into(),
                ModelNode::leaf(TypeSpec::Unsigned(16), Data::Unsigned(self.appid.into())),
            ),
        ])
    }
}

/// How a GoCB is configured (what an SCL `GSEControl` and its GSE address say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GocbConfig {
    /// MMS domain of its LD.
    pub domain: String,
    /// Its logical node (`LLN0`: SCL puts GSEControl only in LN0).
    pub ln: String,
    /// Its name (`gcbEvents`); the MMS item is `LN$GO$name`.
    pub name: String,
    /// GoID (the SCL's `appID`).
    pub go_id: String,
    /// The data set's MMS item in the same domain (`LLN0$Events`); empty: none.
    pub data_set: String,
    /// ConfRev.
    pub conf_rev: u32,
    /// DstAddress.
    pub dst: DstAddress,
    /// MinTime, ms.
    pub min_time: u32,
    /// MaxTime, ms.
    pub max_time: u32,
    /// FixedOffs.
    pub fixed_offs: bool,
}

/// A GoCB with its run-time state.
#[derive(Debug, Clone)]
pub struct GocbInstance {
    /// Its configuration (writes change the state below, not this).
    pub config: GocbConfig,
    go_ena: bool,
    go_id: String,
    /// `LD/LN$name`, or empty.
    dat_set: String,
    conf_rev: u32,
}

impl GocbInstance {
    /// A disabled instance with the configured values.
    pub fn new(config: GocbConfig) -> Self {
        let dat_set = if config.data_set.is_empty() {
            String::new()
        } else {
            format!("{}/{}", config.domain, config.data_set)
        };
        GocbInstance {
            go_ena: false,
            go_id: config.go_id.clone(),
            conf_rev: config.conf_rev,
            dat_set,
            config,
        }
    }

    /// Its MMS item, `LN$GO$name`.
    pub fn item(&self) -> String {
        format!("{}$GO${}", self.config.ln, self.config.name)
    }

    /// Whether GoEna is TRUE.
    pub fn is_enabled(&self) -> bool {
        self.go_ena
    }

    /// NdsCom: the block needs commissioning because it has no data set (7-2 Ed.2 §18.2.2.6).
    pub fn nds_com(&self) -> bool {
        self.dat_set.is_empty()
    }

    /// The DatSet value: `LD/LN$name` or empty.
    pub fn dat_set(&self) -> &str {
        &self.dat_set
    }

    /// The block as clients see it (values with their MMS types).
    pub fn node(&self) -> ModelNode {
        let c = &self.config;
        let vs129 = TypeSpec::VisibleString(-(MAX_REF_LEN as i32));
        let leaf = ModelNode::leaf;
        ModelNode::Struct(vec![
            (
                "GoEna".into(),
                leaf(TypeSpec::Boolean, Data::Boolean(self.go_ena)),
            ),
            (
                "GoID".into(),
                leaf(vs129.clone(), Data::VisibleString(self.go_id.clone())),
            ),
            (
                "DatSet".into(),
                leaf(vs129, Data::VisibleString(self.dat_set.clone())),
            ),
            (
                "ConfRev".into(),
                leaf(TypeSpec::Unsigned(32), Data::Unsigned(self.conf_rev.into())),
            ),
            (
                "NdsCom".into(),
                leaf(TypeSpec::Boolean, Data::Boolean(self.nds_com())),
            ),
            ("DstAddress".into(), c.dst.node()),
            (
                "MinTime".into(),
                leaf(TypeSpec::Unsigned(32), Data::Unsigned(c.min_time.into())),
            ),
            (
                "MaxTime".into(),
                leaf(TypeSpec::Unsigned(32), Data::Unsigned(c.max_time.into())),
            ),
            (
                "FixedOffs".into(),
                leaf(TypeSpec::Boolean, Data::Boolean(c.fixed_offs)),
            ),
        ])
    }

    /// Write `element` (a component, or a `$`-path below one) following the module's rules.
    /// `data_set_exists(domain, item)` says whether the server has that data set.
    pub fn write(
        &mut self,
        element: &str,
        value: &Data,
        data_set_exists: impl Fn(&str, &str) -> bool,
    ) -> Result<(), DataAccessError> {
        check_kind(&self.node(), element, value)?;
        match element {
            "GoEna" => {
                let on = matches!(value, Data::Boolean(true));
                if on && self.nds_com() {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
                self.go_ena = on;
                Ok(())
            }
            _ if self.go_ena => Err(DataAccessError::TEMPORARILY_UNAVAILABLE),
            "GoID" => {
                let Data::VisibleString(s) = value else {
                    return Err(DataAccessError::TYPE_INCONSISTENT);
                };
                if s.len() > MAX_REF_LEN {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
                self.go_id = s.clone();
                Ok(())
            }
            "DatSet" => {
                let Data::VisibleString(s) = value else {
                    return Err(DataAccessError::TYPE_INCONSISTENT);
                };
                let ok = s.is_empty()
                    || s.split_once('/')
                        .is_some_and(|(d, i)| data_set_exists(d, i));
                if !ok || s.len() > MAX_REF_LEN {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
                if *s != self.dat_set {
                    self.dat_set = s.clone();
                    self.conf_rev = self.conf_rev.wrapping_add(1);
                }
                Ok(())
            }
            _ => Err(DataAccessError::OBJECT_ACCESS_DENIED),
        }
    }
}

/// The component `element` must exist and `value` be of its kind (a structure written whole
/// must match its shape).
pub(super) fn check_kind(
    block: &ModelNode,
    element: &str,
    value: &Data,
) -> Result<(), DataAccessError> {
    let node = block
        .find(element)
        .ok_or(DataAccessError::OBJECT_NON_EXISTENT)?;
    node.clone()
        .set_value(value.clone())
        .map_err(SetError::data_access_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> GocbConfig {
        GocbConfig {
            domain: "IEDLD0".into(),
            ln: "LLN0".into(),
            name: "gcb01".into(),
            go_id: "events".into(),
            data_set: "LLN0$Events".into(),
            conf_rev: 3,
            dst: DstAddress {
                addr: [1, 0x0c, 0xcd, 1, 0, 7],
                priority: 5,
                vid: 12,
                appid: 0x3001,
            },
            min_time: 4,
            max_time: 1000,
            fixed_offs: true,
        }
    }

    fn exists(d: &str, i: &str) -> bool {
        d == "IEDLD0" && (i == "LLN0$Events" || i == "LLN0$Other")
    }

    fn get(g: &GocbInstance, path: &str) -> Data {
        g.node().find(path).unwrap().to_data()
    }

    #[test]
    fn layout_values_and_types() {
        let g = GocbInstance::new(cfg());
        assert_eq!(g.item(), "LLN0$GO$gcb01");
        let ModelNode::Struct(c) = g.node() else {
            panic!()
        };
        let names: Vec<&str> = c.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, GOCB_ELEMENTS);
        assert_eq!(
            get(&g, "DatSet"),
            Data::VisibleString("IEDLD0/LLN0$Events".into())
        );
        assert_eq!(get(&g, "GoID"), Data::VisibleString("events".into()));
        assert_eq!(get(&g, "NdsCom"), Data::Boolean(false));
        assert_eq!(get(&g, "DstAddress$APPID"), Data::Unsigned(0x3001));
        assert_eq!(
            get(&g, "DstAddress$Addr"),
            Data::OctetString(vec![1, 0x0c, 0xcd, 1, 0, 7])
        );
        assert_eq!(
            g.node().find("DstAddress$Addr").unwrap().type_spec(),
            TypeSpec::OctetString(6)
        );
        assert_eq!(
            g.node().find("ConfRev").unwrap().type_spec(),
            TypeSpec::Unsigned(32)
        );
    }

    #[test]
    fn only_go_ena_while_enabled() {
        let mut g = GocbInstance::new(cfg());
        assert_eq!(g.write("GoEna", &Data::Boolean(true), exists), Ok(()));
        assert!(g.is_enabled());
        for (e, v) in [
            ("GoID", Data::VisibleString("x".into())),
            ("DatSet", Data::VisibleString(String::new())),
            ("MinTime", Data::Unsigned(1)),
        ] {
            assert_eq!(
                g.write(e, &v, exists),
                Err(DataAccessError::TEMPORARILY_UNAVAILABLE),
                "{e}"
            );
        }
        assert_eq!(g.write("GoEna", &Data::Boolean(false), exists), Ok(()));
        assert!(!g.is_enabled());
        assert_eq!(
            g.write("GoID", &Data::VisibleString("new".into()), exists),
            Ok(())
        );
        assert_eq!(get(&g, "GoID"), Data::VisibleString("new".into()));
    }

    #[test]
    fn read_only_attributes_are_denied() {
        let mut g = GocbInstance::new(cfg());
        for (e, v) in [
            ("ConfRev", Data::Unsigned(9)),
            ("NdsCom", Data::Boolean(true)),
            ("MinTime", Data::Unsigned(9)),
            ("MaxTime", Data::Unsigned(9)),
            ("FixedOffs", Data::Boolean(false)),
            ("DstAddress$APPID", Data::Unsigned(1)),
        ] {
            assert_eq!(
                g.write(e, &v, exists),
                Err(DataAccessError::OBJECT_ACCESS_DENIED),
                "{e}"
            );
        }
        assert_eq!(
            g.write("GoEna", &Data::Unsigned(1), exists),
            Err(DataAccessError::TYPE_INCONSISTENT)
        );
        assert_eq!(
            g.write("Nope", &Data::Boolean(true), exists),
            Err(DataAccessError::OBJECT_NON_EXISTENT)
        );
    }

    #[test]
    fn dat_set_changes_count_in_conf_rev_and_nds_com() {
        let mut g = GocbInstance::new(cfg());
        let ds = |s: &str| Data::VisibleString(s.into());
        assert_eq!(
            g.write("DatSet", &ds("IEDLD0/LLN0$Nope"), exists),
            Err(DataAccessError::OBJECT_VALUE_INVALID)
        );
        assert_eq!(
            g.write("DatSet", &ds("LLN0$Other"), exists),
            Err(DataAccessError::OBJECT_VALUE_INVALID)
        );
        // The same value: no change, no count.
        assert_eq!(g.write("DatSet", &ds("IEDLD0/LLN0$Events"), exists), Ok(()));
        assert_eq!(get(&g, "ConfRev"), Data::Unsigned(3));
        assert_eq!(g.write("DatSet", &ds("IEDLD0/LLN0$Other"), exists), Ok(()));
        assert_eq!(get(&g, "ConfRev"), Data::Unsigned(4));
        assert_eq!(g.write("DatSet", &ds(""), exists), Ok(()));
        assert_eq!(get(&g, "NdsCom"), Data::Boolean(true));
        assert_eq!(
            g.write("GoEna", &Data::Boolean(true), exists),
            Err(DataAccessError::OBJECT_VALUE_INVALID)
        );
        let long = "x".repeat(MAX_REF_LEN + 1);
        assert_eq!(
            g.write("GoID", &ds(&long), exists),
            Err(DataAccessError::OBJECT_VALUE_INVALID)
        );
    }
}
