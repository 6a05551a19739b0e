//! One sampled-value control block on the server side: a multicast MSVCB (FC `MS`,
//! `LLN0$MS$MSVCB01`) or a unicast USVCB (FC `US`), as IEC 61850-9-2 Ed.2 §8.2 (Tables 15/16)
//! maps IEC 61850-7-2's MSVCB/USVCB classes onto MMS, with the write rules of SetMSVCBValues /
//! SetUSVCBValues.
//!
//! Components in the order and with the MMS types libiec61850 1.6 serves (its `mms_sv.c`):
//! SvEna (boolean), Resv (boolean, USVCB only), MsvID or UsvID (visible-string(-129)), DatSet
//! (visible-string(-129)), ConfRev (integer(32)), SmpRate (integer(32)), OptFlds
//! (bit-string(5): refresh-time, sample-synchronized, sample-rate, data-set, security),
//! SmpMod (integer(8): 0 samples per period, 1 per second, 2 seconds per sample), DstAddress
//! (PhyComAddr), noASDU (integer(32)). libiec61850 serves ConfRev, SmpRate and noASDU as
//! signed 32-bit integers where 9-2 names INT32U/INT16U; gander matches libiec61850 so that a
//! client sees the same types from both servers.
//!
//! Write rules (9-2 Ed.2 §8.2: "only SvEna and Resv are writable"):
//! - a USVCB reserved by another association is temporarily-unavailable for every write;
//! - Resv (USVCB) reserves the block for the writer (TRUE) or frees it (FALSE);
//! - SvEna may always be written; TRUE needs a data set (object-value-invalid without one);
//! - any other attribute is temporarily-unavailable while SvEna is TRUE, object-access-denied
//!   otherwise; a value of another MMS kind is type-inconsistent.
//!
//! gander's MMS server does not send sampled values: SvEna is state a client can set and read.

use gander_wire::data::Data;

use super::gocb::{check_kind, DstAddress, MAX_REF_LEN};
use super::node::ModelNode;
use crate::association::ConnId;
use crate::bit_string::BitString;
use crate::service::{DataAccessError, TypeSpec};

/// OptFlds bit numbers (IEC 61850-9-2 Ed.2 §8.2, SmvOpts in SCL).
pub mod sv_opt_flds {
    /// refresh-time.
    pub const REFRESH_TIME: usize = 0;
    /// sample-synchronized (reserved in Ed.2, kept for Ed.1 files).
    pub const SAMPLE_SYNCHRONIZED: usize = 1;
    /// sample-rate.
    pub const SAMPLE_RATE: usize = 2;
    /// data-set.
    pub const DATA_SET: usize = 3;
    /// security.
    pub const SECURITY: usize = 4;
    /// Number of bits.
    pub const LEN: usize = 5;
}

/// How an SVCB is configured (what an SCL `SampledValueControl` and its SMV address say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SvcbConfig {
    /// MMS domain of its LD.
    pub domain: String,
    /// Its logical node (`LLN0`).
    pub ln: String,
    /// Its name; the MMS item is `LN$MS$name` or `LN$US$name`.
    pub name: String,
    /// Unicast (USVCB, FC US, SCL `multicast="false"`) or multicast (MSVCB, FC MS).
    pub unicast: bool,
    /// MsvID / UsvID (the SCL's `smvID`).
    pub sv_id: String,
    /// The data set's MMS item in the same domain; empty: none.
    pub data_set: String,
    /// ConfRev.
    pub conf_rev: u32,
    /// SmpRate.
    pub smp_rate: u32,
    /// OptFlds ([`sv_opt_flds`], 5 bits).
    pub opt_flds: BitString,
    /// SmpMod (0 SmpPerPeriod, 1 SmpPerSec, 2 SecPerSmp).
    pub smp_mod: u8,
    /// DstAddress.
    pub dst: DstAddress,
    /// noASDU (the SCL's `nofASDU`).
    pub no_asdu: u32,
}

/// An SVCB with its run-time state.
#[derive(Debug, Clone)]
pub struct SvcbInstance {
    /// Its configuration.
    pub config: SvcbConfig,
    sv_ena: bool,
    owner: Option<ConnId>,
}

fn int(v: u32) -> Data {
    Data::Integer(v.into())
}

impl SvcbInstance {
    /// A disabled, unreserved instance.
    pub fn new(config: SvcbConfig) -> Self {
        SvcbInstance {
            config,
            sv_ena: false,
            owner: None,
        }
    }

    /// The FC of its component: `US` or `MS`.
    pub fn fc(&self) -> &'static str {
        if self.config.unicast {
            "US"
        } else {
            "MS"
        }
    }

    /// Its MMS item, `LN$MS$name` or `LN$US$name`.
    pub fn item(&self) -> String {
        format!("{}${}${}", self.config.ln, self.fc(), self.config.name)
    }

    /// Whether SvEna is TRUE.
    pub fn is_enabled(&self) -> bool {
        self.sv_ena
    }

    /// The block as clients see it.
    pub fn node(&self) -> ModelNode {
        let c = &self.config;
        let vs129 = TypeSpec::VisibleString(-(MAX_REF_LEN as i32));
        let leaf = ModelNode::leaf;
        let mut out = vec![(
            "SvEna".to_string(),
            leaf(TypeSpec::Boolean, Data::Boolean(self.sv_ena)),
        )];
        if c.unicast {
            out.push((
                "Resv".into(),
                leaf(TypeSpec::Boolean, Data::Boolean(self.owner.is_some())),
            ));
        }
        let dat_set = if c.data_set.is_empty() {
            String::new()
        } else {
            format!("{}/{}", c.domain, c.data_set)
        };
        let mut opt = BitString::new(sv_opt_flds::LEN);
        c.opt_flds
            .ones()
            .filter(|&i| i < sv_opt_flds::LEN)
            .for_each(|i| opt.set(i, true));
        out.extend([
            (
                if c.unicast { "UsvID" } else { "MsvID" }.to_string(),
                leaf(vs129.clone(), Data::VisibleString(c.sv_id.clone())),
            ),
            ("DatSet".into(), leaf(vs129, Data::VisibleString(dat_set))),
            (
                "ConfRev".into(),
                leaf(TypeSpec::Integer(32), int(c.conf_rev)),
            ),
            (
                "SmpRate".into(),
                leaf(TypeSpec::Integer(32), int(c.smp_rate)),
            ),
            (
                "OptFlds".into(),
                leaf(TypeSpec::BitString(sv_opt_flds::LEN as i32), opt.to_data()),
            ),
            (
                "SmpMod".into(),
                leaf(TypeSpec::Integer(8), int(c.smp_mod.into())),
            ),
            ("DstAddress".into(), c.dst.node()),
            ("noASDU".into(), leaf(TypeSpec::Integer(32), int(c.no_asdu))),
        ]);
        ModelNode::Struct(out)
    }

    /// Write `element` for `conn` following the module's rules.
    pub fn write(
        &mut self,
        conn: ConnId,
        element: &str,
        value: &Data,
    ) -> Result<(), DataAccessError> {
        check_kind(&self.node(), element, value)?;
        if self.owner.is_some_and(|o| o != conn) {
            return Err(DataAccessError::TEMPORARILY_UNAVAILABLE);
        }
        let on = matches!(value, Data::Boolean(true));
        match element {
            "Resv" => {
                self.owner = on.then_some(conn);
                Ok(())
            }
            "SvEna" => {
                if on && self.config.data_set.is_empty() {
                    return Err(DataAccessError::OBJECT_VALUE_INVALID);
                }
                self.sv_ena = on;
                Ok(())
            }
            _ if self.sv_ena => Err(DataAccessError::TEMPORARILY_UNAVAILABLE),
            _ => Err(DataAccessError::OBJECT_ACCESS_DENIED),
        }
    }

    /// The association closed: a USVCB it reserved is freed and stops (nobody to send to).
    pub fn connection_closed(&mut self, conn: ConnId) {
        if self.owner == Some(conn) {
            self.owner = None;
            self.sv_ena = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(unicast: bool) -> SvcbConfig {
        SvcbConfig {
            domain: "MUMUnn".into(),
            ln: "LLN0".into(),
            name: "MSVCB01".into(),
            unicast,
            sv_id: "MU01".into(),
            data_set: "LLN0$PhsMeas1".into(),
            conf_rev: 1,
            smp_rate: 80,
            opt_flds: BitString::with_bits(
                sv_opt_flds::LEN,
                &[sv_opt_flds::SAMPLE_SYNCHRONIZED, sv_opt_flds::DATA_SET],
            ),
            smp_mod: 0,
            dst: DstAddress {
                addr: [1, 0x0c, 0xcd, 4, 0, 1],
                priority: 4,
                vid: 0,
                appid: 0x4000,
            },
            no_asdu: 1,
        }
    }

    fn names(s: &SvcbInstance) -> Vec<String> {
        let ModelNode::Struct(c) = s.node() else {
            panic!()
        };
        c.into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn msvcb_and_usvcb_layouts() {
        let m = SvcbInstance::new(cfg(false));
        assert_eq!(m.item(), "LLN0$MS$MSVCB01");
        assert_eq!(
            names(&m),
            [
                "SvEna",
                "MsvID",
                "DatSet",
                "ConfRev",
                "SmpRate",
                "OptFlds",
                "SmpMod",
                "DstAddress",
                "noASDU"
            ]
        );
        let u = SvcbInstance::new(cfg(true));
        assert_eq!(u.item(), "LLN0$US$MSVCB01");
        assert_eq!(names(&u)[..3], ["SvEna", "Resv", "UsvID"]);
        let n = m.node();
        assert_eq!(
            n.find("DatSet").unwrap().to_data(),
            Data::VisibleString("MUMUnn/LLN0$PhsMeas1".into())
        );
        assert_eq!(n.find("SmpRate").unwrap().to_data(), Data::Integer(80));
        assert_eq!(
            n.find("OptFlds").unwrap().type_spec(),
            TypeSpec::BitString(5)
        );
        assert_eq!(
            BitString::from_data(&n.find("OptFlds").unwrap().to_data())
                .unwrap()
                .ones()
                .collect::<Vec<_>>(),
            [1, 3]
        );
    }

    #[test]
    fn only_sv_ena_and_resv_are_writable() {
        let mut m = SvcbInstance::new(cfg(false));
        assert_eq!(
            m.write(1, "SmpRate", &Data::Integer(4000)),
            Err(DataAccessError::OBJECT_ACCESS_DENIED)
        );
        assert_eq!(
            m.write(1, "Resv", &Data::Boolean(true)),
            Err(DataAccessError::OBJECT_NON_EXISTENT)
        );
        assert_eq!(m.write(1, "SvEna", &Data::Boolean(true)), Ok(()));
        assert_eq!(
            m.write(2, "MsvID", &Data::VisibleString("x".into())),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(
            m.write(2, "SvEna", &Data::Integer(0)),
            Err(DataAccessError::TYPE_INCONSISTENT)
        );
        assert_eq!(m.write(2, "SvEna", &Data::Boolean(false)), Ok(()));
        let mut none = SvcbInstance::new(SvcbConfig {
            data_set: String::new(),
            ..cfg(false)
        });
        assert_eq!(
            none.write(1, "SvEna", &Data::Boolean(true)),
            Err(DataAccessError::OBJECT_VALUE_INVALID)
        );
    }

    #[test]
    fn usvcb_reservation() {
        let mut u = SvcbInstance::new(cfg(true));
        assert_eq!(u.write(1, "Resv", &Data::Boolean(true)), Ok(()));
        assert_eq!(
            u.node().find("Resv").unwrap().to_data(),
            Data::Boolean(true)
        );
        assert_eq!(
            u.write(2, "SvEna", &Data::Boolean(true)),
            Err(DataAccessError::TEMPORARILY_UNAVAILABLE)
        );
        assert_eq!(u.write(1, "SvEna", &Data::Boolean(true)), Ok(()));
        u.connection_closed(2);
        assert!(u.is_enabled());
        u.connection_closed(1);
        assert!(!u.is_enabled());
        assert_eq!(u.write(2, "Resv", &Data::Boolean(true)), Ok(()));
        assert_eq!(u.write(2, "Resv", &Data::Boolean(false)), Ok(()));
        assert_eq!(u.write(1, "Resv", &Data::Boolean(true)), Ok(()));
    }
}
