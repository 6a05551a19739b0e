#!/usr/bin/env python3
"""Writes an SCD of N IEDs for fleet sweeps (`gander probe --scd`), written for gander's tests
(interop/tests/test_probe_fleet.py), not taken from any file. `gander bench fleet` writes the same
shape from Rust (crates/bench/src/fleet_scd.rs).

Each IED looks like the protection and bay IEDs of public SCL files: logical devices PROT, MEAS
and CTRL (a few more LNs on every third IED), LLN0 with data sets and buffered and unbuffered
indexed report control blocks, LPHD1, PTOC, XCBR, CSWI, MMXU and GGIO nodes, and a nameplate
whose vendor/swRev the served model reads. The Communication section gives every IED one
access point `S1` with `P type="IP"` on the station bus.

    fleet_scd.py --count 4 --base 10.61.0.10 --out fleet.scd [--variant IED002] [--port IED003=3782]

`--variant NAME` drops IED NAME's `Meas` data set and adds a GGIO9 in CTRL: the same IED with a
changed model (for the diff test). `--port NAME=PORT` writes `P type="MMS-Port"` for that IED.
"""
from __future__ import annotations

import argparse
import ipaddress

TEMPLATES = """
<DataTypeTemplates>
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
</DataTypeTemplates>"""


def ln(cls: str, inst: str, prefix: str = "") -> str:
    return f'<LN prefix="{prefix}" lnClass="{cls}" inst="{inst}" lnType="G_{cls}"/>'


def lln0(ied: str, ld: str, data_sets: list[tuple[str, list[tuple[str, str, str, str]]]],
         rcbs: list[tuple[str, str, bool, int]]) -> str:
    out = ['<LN0 lnClass="LLN0" inst="" lnType="G_LLN0">']
    for name, members in data_sets:
        out.append(f'<DataSet name="{name}">')
        for lnc, inst, do, fc in members:
            out.append(f'<FCDA ldInst="{ld}" prefix="" lnClass="{lnc}" lnInst="{inst}" doName="{do}" fc="{fc}"/>')
        out.append("</DataSet>")
    for name, ds, buffered, mx in rcbs:
        out.append(f'<ReportControl name="{name}" datSet="{ds}" confRev="1" buffered="{str(buffered).lower()}" '
                   f'bufTime="50" intgPd="1000"><TrgOps dchg="true" qchg="true" period="true" gi="true"/>'
                   f'<OptFields seqNum="true" timeStamp="true" dataSet="true" reasonCode="true"/>'
                   f'<RptEnabled max="{mx}"/></ReportControl>')
    out.append(f'<DOI name="NamPlt"><DAI name="vendor"><Val>gander-fixture</Val></DAI>'
               f'<DAI name="swRev"><Val>1.0</Val></DAI><DAI name="d"><Val>{ied} {ld}</Val></DAI></DOI>')
    out.append("</LN0>")
    return "".join(out)


def ied(name: str, i: int, variant: bool) -> str:
    big = i % 3 == 0
    prot = [ln("LPHD", "1"), ln("PTOC", "1"), ln("PTOC", "2")] + ([ln("PTOC", "3")] if big else [])
    meas = [ln("MMXU", "1")] + ([ln("MMXU", "2")] if big else [])
    ctrl = [ln("XCBR", "1"), ln("CSWI", "1"), ln("GGIO", "1")] + ([ln("GGIO", "9")] if variant else [])
    lds = [
        ("PROT", prot, [("Trips", [("PTOC", "1", "Op", "ST"), ("PTOC", "2", "Op", "ST")])],
         [("brcbTrip", "Trips", True, 2), ("urcbTrip", "Trips", False, 2)]),
        ("MEAS", meas, ([] if variant else [("Meas", [("MMXU", "1", "TotW", "MX"), ("MMXU", "1", "Hz", "MX")])]),
         ([] if variant else [("urcbMeas", "Meas", False, 4)])),
        ("CTRL", ctrl, [("Pos", [("XCBR", "1", "Loc", "ST"), ("XCBR", "1", "OpCnt", "ST"), ("GGIO", "1", "Ind1", "ST")])],
         [("brcbPos", "Pos", True, 1)]),
    ]
    body = []
    for ld, lns, dss, rcbs in lds:
        body.append(f'<LDevice inst="{ld}">{lln0(name, ld, dss, rcbs)}{"".join(lns)}</LDevice>')
    return (f'<IED name="{name}" manufacturer="gander-fixture" type="BAY{i % 4}" configVersion="1">'
            f'<Services><GetDirectory/><GetDataObjectDefinition/><DataSetDirectory/><ReadWrite/>'
            f'<GetDataSetValue/><ConfReportControl max="8"/></Services>'
            f'<AccessPoint name="S1"><Server><Authentication/>{"".join(body)}</Server></AccessPoint></IED>')


def scd(count: int, base: str, variant: set[str], ports: dict[str, int]) -> str:
    first = ipaddress.ip_address(base)
    names = [f"IED{i + 1:03d}" for i in range(count)]
    caps = []
    for i, n in enumerate(names):
        port = f'<P type="MMS-Port">{ports[n]}</P>' if n in ports else ""
        # Every other access point writes its P elements with xsi:type first, as tools do (the
        # IOP 2019 multi-vendor SED): an SCL reader that takes xsi:type for the P's type misses
        # those addresses (gander-scl did, docs/scl.md "Attributes in other namespaces").
        xsi = ' xsi:type="tP_IP"' if i % 2 else ""
        caps.append(f'<ConnectedAP iedName="{n}" apName="S1"><Address><P{xsi} type="IP">{first + i}</P>'
                    f'<P type="IP-SUBNET">255.255.0.0</P><P type="OSI-TSEL">0001</P>{port}</Address></ConnectedAP>')
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<SCL xmlns="http://www.iec.ch/61850/2003/SCL" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
            ' version="2007" revision="B" release="4">\n'
            '<Header id="gander-fleet-fixture"/>\n'
            f'<Communication><SubNetwork name="StationBus" type="8-MMS">{"".join(caps)}</SubNetwork></Communication>\n'
            + "\n".join(ied(n, i, n in variant) for i, n in enumerate(names))
            + TEMPLATES + "\n</SCL>\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=4)
    p.add_argument("--base", default="10.61.0.10")
    p.add_argument("--out", required=True)
    p.add_argument("--variant", action="append", default=[])
    p.add_argument("--port", action="append", default=[], help="NAME=PORT")
    a = p.parse_args()
    ports = {k: int(v) for k, v in (x.split("=", 1) for x in a.port)}
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(scd(a.count, a.base, set(a.variant), ports))


if __name__ == "__main__":
    main()
