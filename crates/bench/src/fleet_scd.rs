//! The substation of `gander bench fleet`: an SCD of N IEDs written for gander (not taken from
//! any file), shaped like the protection and bay IEDs of public SCL files.
//!
//! Each IED has logical devices PROT, MEAS and CTRL (one more PTOC and MMXU on every third
//! IED), LLN0 with data sets and buffered and unbuffered report control blocks, LPHD, PTOC,
//! XCBR, CSWI, MMXU and GGIO nodes, and a nameplate. The Communication section (IEC 61850-6
//! §9.3) gives every IED one access point `S1` on the station bus with `P type="IP"`; an IED
//! served over TLS also gets `P type="MMS-Port"` 3782 (IEC 62351-3's port; IEC 61850-6 has no
//! P type for TLS, so the sweep learns the transport from the port). The same shape as
//! `scripts/fleet_scd.py`, which the fleet's interop test uses.
use std::collections::BTreeSet;
use std::fmt::Write;
use std::net::Ipv4Addr;

const TEMPLATES: &str = r#"<DataTypeTemplates>
 <LNodeType id="G_LLN0" lnClass="LLN0"><DO name="Mod" type="G_INS"/><DO name="Beh" type="G_INS"/><DO name="Health" type="G_INS"/><DO name="NamPlt" type="G_LPL"/></LNodeType>
 <LNodeType id="G_LPHD" lnClass="LPHD"><DO name="PhyHealth" type="G_INS"/><DO name="Proxy" type="G_SPS"/></LNodeType>
 <LNodeType id="G_PTOC" lnClass="PTOC"><DO name="Beh" type="G_INS"/><DO name="Str" type="G_SPS"/><DO name="Op" type="G_SPS"/></LNodeType>
 <LNodeType id="G_XCBR" lnClass="XCBR"><DO name="Beh" type="G_INS"/><DO name="Loc" type="G_SPS"/><DO name="OpCnt" type="G_INS"/></LNodeType>
 <LNodeType id="G_CSWI" lnClass="CSWI"><DO name="Beh" type="G_INS"/><DO name="Loc" type="G_SPS"/></LNodeType>
 <LNodeType id="G_MMXU" lnClass="MMXU"><DO name="Beh" type="G_INS"/><DO name="TotW" type="G_MV"/><DO name="Hz" type="G_MV"/></LNodeType>
 <LNodeType id="G_GGIO" lnClass="GGIO"><DO name="Beh" type="G_INS"/><DO name="Ind1" type="G_SPS"/><DO name="Ind2" type="G_SPS"/></LNodeType>
 <DOType id="G_INS" cdc="INS"><DA name="stVal" bType="INT32" fc="ST" dchg="true"/><DA name="q" bType="Quality" fc="ST" qchg="true"/><DA name="t" bType="Timestamp" fc="ST"/></DOType>
 <DOType id="G_SPS" cdc="SPS"><DA name="stVal" bType="BOOLEAN" fc="ST" dchg="true"/><DA name="q" bType="Quality" fc="ST" qchg="true"/><DA name="t" bType="Timestamp" fc="ST"/></DOType>
 <DOType id="G_MV" cdc="MV"><DA name="mag" bType="Struct" type="G_AV" fc="MX" dchg="true"/><DA name="q" bType="Quality" fc="MX" qchg="true"/><DA name="t" bType="Timestamp" fc="MX"/></DOType>
 <DOType id="G_LPL" cdc="LPL"><DA name="vendor" bType="VisString255" fc="DC"/><DA name="swRev" bType="VisString255" fc="DC"/><DA name="d" bType="VisString255" fc="DC"/></DOType>
 <DAType id="G_AV"><BDA name="f" bType="FLOAT32"/></DAType>
</DataTypeTemplates>"#;

/// IEC 62351-3's port of MMS over TLS.
pub const TLS_PORT: u16 = 3782;
/// RFC 1006's port of plain MMS.
pub const PLAIN_PORT: u16 = 102;

/// The name of IED `i` (0-based): `IED001`.
pub fn name(i: usize) -> String {
    format!("IED{:03}", i + 1)
}

fn ln(out: &mut String, class: &str, inst: &str) {
    let _ = write!(
        out,
        r#"<LN prefix="" lnClass="{class}" inst="{inst}" lnType="G_{class}"/>"#
    );
}

/// One data set: its name and members (LN class, instance, DO, FC).
type DataSet<'a> = (&'a str, &'a [(&'a str, &'a str, &'a str, &'a str)]);
/// One report control block: name, data set, buffered, RptEnabled max.
type Rcb<'a> = (&'a str, &'a str, bool, u32);

fn lln0(out: &mut String, ied: &str, ld: &str, data_sets: &[DataSet], rcbs: &[Rcb]) {
    out.push_str(r#"<LN0 lnClass="LLN0" inst="" lnType="G_LLN0">"#);
    for (name, members) in data_sets {
        let _ = write!(out, r#"<DataSet name="{name}">"#);
        for (class, inst, dobj, fc) in *members {
            let _ = write!(
                out,
                r#"<FCDA ldInst="{ld}" prefix="" lnClass="{class}" lnInst="{inst}" doName="{dobj}" fc="{fc}"/>"#
            );
        }
        out.push_str("</DataSet>");
    }
    for (name, ds, buffered, max) in rcbs {
        let _ = write!(
            out,
            r#"<ReportControl name="{name}" datSet="{ds}" confRev="1" buffered="{buffered}" bufTime="50" intgPd="1000"><TrgOps dchg="true" qchg="true" period="true" gi="true"/><OptFields seqNum="true" timeStamp="true" dataSet="true" reasonCode="true"/><RptEnabled max="{max}"/></ReportControl>"#
        );
    }
    let _ = write!(
        out,
        r#"<DOI name="NamPlt"><DAI name="vendor"><Val>gander-fixture</Val></DAI><DAI name="swRev"><Val>1.0</Val></DAI><DAI name="d"><Val>{ied} {ld}</Val></DAI></DOI></LN0>"#
    );
}

fn ied(out: &mut String, i: usize) {
    let name = name(i);
    let big = i.is_multiple_of(3);
    let _ = write!(
        out,
        r#"<IED name="{name}" manufacturer="gander-fixture" type="BAY{}" configVersion="1"><Services><GetDirectory/><GetDataObjectDefinition/><DataSetDirectory/><ReadWrite/><GetDataSetValue/><ConfReportControl max="8"/></Services><AccessPoint name="S1"><Server><Authentication/>"#,
        i % 4
    );
    out.push_str(r#"<LDevice inst="PROT">"#);
    lln0(
        out,
        &name,
        "PROT",
        &[(
            "Trips",
            &[("PTOC", "1", "Op", "ST"), ("PTOC", "2", "Op", "ST")],
        )],
        &[
            ("brcbTrip", "Trips", true, 2),
            ("urcbTrip", "Trips", false, 2),
        ],
    );
    ln(out, "LPHD", "1");
    ln(out, "PTOC", "1");
    ln(out, "PTOC", "2");
    if big {
        ln(out, "PTOC", "3");
    }
    out.push_str(r#"</LDevice><LDevice inst="MEAS">"#);
    lln0(
        out,
        &name,
        "MEAS",
        &[(
            "Meas",
            &[("MMXU", "1", "TotW", "MX"), ("MMXU", "1", "Hz", "MX")],
        )],
        &[("urcbMeas", "Meas", false, 4)],
    );
    ln(out, "MMXU", "1");
    if big {
        ln(out, "MMXU", "2");
    }
    out.push_str(r#"</LDevice><LDevice inst="CTRL">"#);
    lln0(
        out,
        &name,
        "CTRL",
        &[(
            "Pos",
            &[
                ("XCBR", "1", "Loc", "ST"),
                ("XCBR", "1", "OpCnt", "ST"),
                ("GGIO", "1", "Ind1", "ST"),
            ],
        )],
        &[("brcbPos", "Pos", true, 1)],
    );
    ln(out, "XCBR", "1");
    ln(out, "CSWI", "1");
    ln(out, "GGIO", "1");
    out.push_str("</LDevice></Server></AccessPoint></IED>\n");
}

/// The SCD of `count` IEDs at `addr(i)`, those of `tls` (indices) on [`TLS_PORT`].
pub fn scd(count: usize, addr: impl Fn(usize) -> Ipv4Addr, tls: &BTreeSet<usize>) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<SCL xmlns=\"http://www.iec.ch/61850/2003/SCL\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" version=\"2007\" revision=\"B\" release=\"4\">\n<Header id=\"gander-bench-fleet\"/>\n<Communication><SubNetwork name=\"StationBus\" type=\"8-MMS\">",
    );
    for i in 0..count {
        let port = if tls.contains(&i) {
            format!(r#"<P type="MMS-Port">{TLS_PORT}</P>"#)
        } else {
            String::new()
        };
        // Every other access point writes xsi:type first, as tools do (the IOP 2019
        // multi-vendor SED; docs/scl.md, "Attributes in other namespaces").
        let xsi = if i % 2 == 1 {
            r#" xsi:type="tP_IP""#
        } else {
            ""
        };
        let _ = write!(
            s,
            r#"<ConnectedAP iedName="{}" apName="S1"><Address><P{xsi} type="IP">{}</P><P type="IP-SUBNET">255.255.0.0</P><P type="OSI-TSEL">0001</P>{port}</Address></ConnectedAP>"#,
            name(i),
            addr(i)
        );
    }
    s.push_str("</SubNetwork></Communication>\n");
    for i in 0..count {
        ied(&mut s, i);
    }
    s.push_str(TEMPLATES);
    s.push_str("\n</SCL>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scd_reads_with_every_ied_and_its_address() {
        let tls: BTreeSet<usize> = [1, 3].into_iter().collect();
        let text = scd(5, |i| Ipv4Addr::new(10, 63, 0, 10 + i as u8), &tls);
        let doc = gander_scl::parse(&text).unwrap();
        assert_eq!(doc.ieds.len(), 5);
        assert!(doc.refused.is_empty(), "{:?}", doc.refused);
        assert_eq!(doc.ieds[3].logical_devices.len(), 3);
        let aps = gander_scl::ip_access_points(&text).unwrap();
        assert_eq!(aps.len(), 5);
        assert_eq!(aps[3].ied, "IED004");
        assert_eq!(aps[3].address.to_string(), "10.63.0.13");
        assert_eq!(aps[3].port, Some(TLS_PORT));
        assert_eq!(aps[2].port, None);
    }
}
