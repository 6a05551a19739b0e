"""libiec61850 1.6.1 (pyiec61850-ng wheel, ctypes) serving an SCL file, for comparing what
libiec61850 serves with what ``gander mms server --scl`` serves from the same file.

libiec61850 reads SCL only through its Java model generator (tools/model_generator), which the
wheel does not ship; this module builds the same model with the library's dynamic-model API,
following the generator's rules as its source states them:

- one logical device per ``LDevice`` (MMS domain = IED name + inst), one logical node per
  ``LN0``/``LN`` (prefix + lnClass + inst), data objects and attributes from the
  ``DataTypeTemplates`` (SDOs, BDAs, ``count`` arrays);
- a data attribute with FC SE is created twice, as SG and as SE (``DataObject.java``:
  "if (daDefinition.getFc() == FunctionalConstraint.SE) ... FunctionalConstraint.SG"), so a
  setting declared for the edit buffer is also served as the active group's value;
- ``SettingControl`` -> ``SettingGroupControlBlock_create(LN0, actSG, numOfSGs)``;
- ``GSEControl`` -> ``GSEControlBlock_create(name, LN0, appID, datSet, confRev, fixedOffs,
  MinTime, MaxTime)`` with the GSE address of the Communication section (``-1`` times: the
  library's defaults);
- ``SampledValueControl`` -> ``SVControlBlock_create(name, LN0, smvID, datSet, confRev, smpMod,
  smpRate, SmvOpts bits, !multicast)`` with the SMV address; the generator takes a missing
  ``multicast`` as false (a USVCB, ``SampledValueControl.java``) where the SCL schema's default is
  true, which gander follows (an MSVCB): give ``multicast`` explicitly to compare the two;
- data sets from ``DataSet``/``FCDA`` (same logical device).

Checked once by hand against the generator itself (built from libiec61850's source at commit
7afa4039, its ``genconfig`` output loaded with ``ConfigFileParser_createModelFromConfigFileEx``):
for the fixture of test_mms_scl_blocks.py both models list the same 121 variables with the same
type descriptions and read answers.

Report and log control blocks and initial values are left out: the comparison is of names,
functional constraints and types. The basic types are mapped as the generator maps them
(``BTYPES``, libiec61850's own list); another bType raises ``ValueError``.

GPL library, external test peer only (see iec.py).
"""
from __future__ import annotations

import ctypes as C
import xml.etree.ElementTree as ET

import mms_iec

NS = {"s": "http://www.iec.ch/61850/2003/SCL"}
P, I, U32, U16, U8, B, S = C.c_void_p, C.c_int, C.c_uint32, C.c_uint16, C.c_uint8, C.c_bool, C.c_char_p

# DataAttributeType (iec61850_model.h)
BTYPES = {
    "BOOLEAN": 0, "INT8": 1, "INT16": 2, "INT32": 3, "INT64": 4, "INT128": 5, "INT8U": 6,
    "INT16U": 7, "INT24U": 8, "INT32U": 9, "FLOAT32": 10, "FLOAT64": 11, "Enum": 12,
    "Octet64": 13, "EntryID": 15, "VisString32": 16, "VisString64": 17, "VisString65": 18,
    "VisString129": 19, "ObjRef": 19, "VisString255": 20, "Unicode255": 21, "Timestamp": 22,
    "Quality": 23, "Check": 24, "Dbpos": 25, "Tcmd": 25, "Struct": 27, "EntryTime": 28,
    "PhyComAddr": 29, "Currency": 30, "OptFlds": 31, "TrgOps": 32,
}
# FunctionalConstraint (iec61850_common.h)
FCS = {"ST": 0, "MX": 1, "SP": 2, "SV": 3, "CF": 4, "DC": 5, "SG": 6, "SE": 7, "SR": 8, "OR": 9,
       "BL": 10, "EX": 11, "CO": 12}
# TRG_OPT_* (iec61850_common.h)
TRG = {"dchg": 1, "qchg": 2, "dupd": 4}
# SmvOpts bits (IEC61850_SV_OPT_*) and SmpMod values
SMV_OPTS = {"refreshTime": 1, "sampleSynchronized": 2, "sampleRate": 4, "dataSet": 8, "security": 16}
SMP_MOD = {"SmpPerPeriod": 0, "SmpPerSec": 1, "SecPerSmp": 2}


def _declare():
    L = mms_iec._declare()
    sigs = {
        "DataObject_create": (P, [S, P, I]),
        "DataAttribute_create": (P, [S, P, I, I, U8, I, U32]),
        "SettingGroupControlBlock_create": (P, [P, U8, U8]),
        "GSEControlBlock_create": (P, [S, P, S, S, U32, B, I, I]),
        "GSEControlBlock_addPhyComAddress": (None, [P, P]),
        "SVControlBlock_create": (P, [S, P, S, S, U32, U8, U16, U8, B]),
        "SVControlBlock_addPhyComAddress": (None, [P, P]),
        "PhyComAddress_create": (P, [U8, U16, U16, C.POINTER(U8)]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(L, name)
        fn.restype, fn.argtypes = res, args
    return L


def _q(tag: str) -> str:
    return f"{{{NS['s']}}}{tag}"


def _addresses(root, ied: str, tag: str) -> dict[tuple[str, str], dict]:
    """(ldInst, cbName) -> {'P': {type: text}, 'MinTime': ms, 'MaxTime': ms} for GSE or SMV."""
    out = {}
    for ap in root.iterfind(".//s:ConnectedAP", NS):
        if ap.get("iedName") != ied:
            continue
        for e in ap.iterfind(f"s:{tag}", NS):
            ps = {p.get("type"): (p.text or "").strip() for p in e.iterfind("s:Address/s:P", NS)}
            d = {"P": ps}
            for t in ("MinTime", "MaxTime"):
                x = e.find(f"s:{t}", NS)
                if x is not None and x.text:
                    d[t] = int(float(x.text))
            out[(e.get("ldInst"), e.get("cbName"))] = d
    return out


class SclLibServer(mms_iec.UpdatingServer):
    """libiec61850 serving IED ``ied`` of ``path`` on ``port``; ``close()`` stops it."""

    def __init__(self, path: str, ied: str, port: int):
        L = self.L = _declare()
        self.tls = None
        self._keep = []
        root = ET.parse(path).getroot()
        tpl = root.find("s:DataTypeTemplates", NS)
        self.lntypes = {e.get("id"): e for e in tpl.iterfind("s:LNodeType", NS)}
        self.dotypes = {e.get("id"): e for e in tpl.iterfind("s:DOType", NS)}
        self.datypes = {e.get("id"): e for e in tpl.iterfind("s:DAType", NS)}
        ied_el = next(e for e in root.iterfind("s:IED", NS) if e.get("name") == ied)
        gse = _addresses(root, ied, "GSE")
        smv = _addresses(root, ied, "SMV")
        self.model = L.IedModel_create(ied.encode())
        for ld_el in ied_el.iterfind(".//s:LDevice", NS):
            inst = ld_el.get("inst")
            ld = L.LogicalDevice_create(inst.encode(), self.model)
            for ln_el in ld_el:
                if ln_el.tag not in (_q("LN0"), _q("LN")):
                    continue
                name = (ln_el.get("prefix") or "") + ln_el.get("lnClass") + (ln_el.get("inst") or "")
                ln = L.LogicalNode_create(name.encode(), ld)
                for do in self.lntypes[ln_el.get("lnType")].iterfind("s:DO", NS):
                    self._data_object(do.get("name"), do.get("type"), ln, int(do.get("count", "0")))
                self._blocks(ln_el, ln, inst, gse, smv)
        self.server = L.IedServer_create(self.model)
        L.IedServer_start(self.server, port)
        if not L.IedServer_isRunning(self.server):
            raise RuntimeError(f"IedServer_start on port {port} failed")
        self.port = port
        self.start_updates(3600.0)

    def update(self, step: int):
        pass

    def _data_object(self, name: str, type_id: str, parent, count: int):
        do = self.L.DataObject_create(name.encode(), parent, count)
        for child in self.dotypes[type_id]:
            if child.tag == _q("SDO"):
                self._data_object(child.get("name"), child.get("type"), do, int(child.get("count", "0")))
            elif child.tag == _q("DA"):
                fc = child.get("fc")
                # libiec61850's generator: an SE attribute is also an SG attribute.
                for f in (["SG", "SE"] if fc == "SE" else [fc]):
                    self._attribute(child, do, f)

    def _attribute(self, el, parent, fc: str):
        btype = el.get("bType")
        if btype not in BTYPES:
            raise ValueError(f"bType {btype} not mapped by this test builder")
        trg = sum(v for k, v in TRG.items() if el.get(k) == "true")
        da = self.L.DataAttribute_create(el.get("name").encode(), parent, BTYPES[btype], FCS[fc], trg,
                                         int(el.get("count", "0")), 0)
        if btype == "Struct":
            for bda in self.datypes[el.get("type")].iterfind("s:BDA", NS):
                self._attribute(bda, da, fc)

    def _phy(self, addr: dict | None):
        if not addr:
            return None
        p = addr["P"]
        mac = (U8 * 6)(*bytes.fromhex(p["MAC-Address"].replace("-", "")))
        self._keep.append(mac)
        return self.L.PhyComAddress_create(int(p.get("VLAN-PRIORITY", "4")), int(p.get("VLAN-ID", "0"), 16),
                                           int(p.get("APPID", "0"), 16), mac)

    def _blocks(self, ln_el, ln, inst: str, gse: dict, smv: dict):
        L = self.L
        for ds in ln_el.iterfind("s:DataSet", NS):
            d = L.DataSet_create(ds.get("name").encode(), ln)
            for f in ds.iterfind("s:FCDA", NS):
                lnn = (f.get("prefix") or "") + f.get("lnClass") + (f.get("lnInst") or "")
                ref = "$".join([lnn, f.get("fc")] + f.get("doName").split(".")
                               + (f.get("daName").split(".") if f.get("daName") else []))
                L.DataSetEntry_create(d, ref.encode(), -1, None)
        sc = ln_el.find("s:SettingControl", NS)
        if sc is not None:
            L.SettingGroupControlBlock_create(ln, int(sc.get("actSG", "1")), int(sc.get("numOfSGs")))
        for g in ln_el.iterfind("s:GSEControl", NS):
            a = gse.get((inst, g.get("name")))
            cb = L.GSEControlBlock_create(g.get("name").encode(), ln, (g.get("appID") or "").encode(),
                                          (g.get("datSet") or "").encode() or None, int(g.get("confRev", "0")),
                                          g.get("fixedOffs") == "true",
                                          (a or {}).get("MinTime", -1), (a or {}).get("MaxTime", -1))
            phy = self._phy(a)
            if phy:
                L.GSEControlBlock_addPhyComAddress(cb, phy)
        for sv in ln_el.iterfind("s:SampledValueControl", NS):
            opts = sv.find("s:SmvOpts", NS)
            bits = sum(v for k, v in SMV_OPTS.items() if opts is not None and opts.get(k) == "true")
            cb = L.SVControlBlock_create(sv.get("name").encode(), ln, (sv.get("smvID") or "").encode(),
                                         (sv.get("datSet") or "").encode(), int(sv.get("confRev", "0")),
                                         SMP_MOD[sv.get("smpMod", "SmpPerPeriod")], int(sv.get("smpRate", "0")),
                                         bits, sv.get("multicast", "false") != "true")
            phy = self._phy(smv.get((inst, sv.get("name"))))
            if phy:
                L.SVControlBlock_addPhyComAddress(cb, phy)
