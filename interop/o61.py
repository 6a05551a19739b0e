"""open61850 0.9.12 (PyPI, pure Python, Apache-2.0, Florent Carli) as gander's second, independent
IEC 61850 test peer, as `mms_iec.py` is for libiec61850.

Its client (`open61850.mms`) runs in the test process: discovery of the model over GetNameList,
`compare-scl` (the model an SCL file's IED declares against the one a server serves), reads, and
report subscription (RCB reservation, configuration, RptEna, GI; 61850-8-1 report decoding), plus
raw requests for the services it has no call for. Its server (`open61850.server`, serving an IED
of an SCL file) runs as a child process started through this file (`python o61.py serve FILE
[--ied NAME]`), which prints `READY HOST:PORT` once listening, as `gander mms server` does;
`GanderServer` and `LibCfgServer` start gander's and libiec61850's servers the same way.

Quirks worked around here (docs/interop.md, "open61850"):
- open61850 encodes and decodes an MMS mMSString value (Unicode255, the `dU` of Edition 2 CDCs)
  with Data tag [15] (0x8F, which ISO 9506-2 gives objId) instead of [16] (0x90): importing this
  module sets its tag to 0x90, for its client here and for its server started through this file.
- open61850's server closes the TCP connection right after its Conclude-Response and never
  answers the ACSE release (A-RELEASE, ISO 8650: RLRQ in a session FINISH SPDU, answered by RLRE
  in a DISCONNECT SPDU), which is how libiec61850's and gander's clients end an association.
  `serve` answers that release unless run with `--as-shipped`, which keeps open61850's own
  behaviour (to test how gander's probe meets such a server).
"""
from __future__ import annotations

import argparse
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from open61850 import data as _data
from open61850.mms import MmsClient, ObjectName, decode_report, discover, is_report, rcb
from open61850.mms.errors import DataAccessError
from open61850.mms.model import ServerModel, compare
from open61850.scl import load_model

VERSION = "0.9.12"

# ISO 9506-2 Data ::= CHOICE { ..., objId [15], mMSString [16], utc-time [17] }: see the docstring.
MMS_STRING_TAG = 0x90
_data.TAG_MMS_STRING = MMS_STRING_TAG
HERE = Path(__file__).resolve().parent

# ISO 8327-1 session SPDU identifiers, and the ACSE release response of ISO 8650-1 (RLRE,
# [APPLICATION 3], reason [0] normal) on presentation context 1 (the ACSE context of the
# association), as libiec61850 and gander send it.
SPDU_FINISH = 0x09
SPDU_DISCONNECT = 0x0A
RLRE = bytes.fromhex("6303800100")


def _length(n: int) -> bytes:
    """A BER definite length, short or long form (X.690 8.1.3)."""
    if n < 0x80:
        return bytes([n])
    octets = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(octets)]) + octets


def _tlv(tag: int, value: bytes) -> bytes:
    """A BER TLV with a one-octet tag."""
    return bytes([tag]) + _length(len(value)) + value


def disconnect_spdu() -> bytes:
    """Session DISCONNECT carrying the presentation user data (fully encoded, ISO 8823) of an RLRE."""
    pdv = _tlv(0x30, bytes.fromhex("020101") + _tlv(0xA0, RLRE))
    user_data = _tlv(0x61, pdv)
    return bytes([SPDU_DISCONNECT, len(user_data) + 2, 0xC1, len(user_data)]) + user_data


# --- the server ---------------------------------------------------------------------------------


def _answer_release() -> None:
    """Patch open61850's server connection: after Conclude keep the connection until the client's
    FINISH (RLRQ) and answer it with DISCONNECT (RLRE), instead of closing at once."""
    from open61850.server import server as srv

    handle = srv.ServerConnection._handle

    def _handle(self, mms_pdu: bytes) -> bool:
        keep = handle(self, mms_pdu)
        if not keep and not self.closed.is_set():
            return True  # Conclude answered: wait for the release (or the client's close)
        return keep

    class ReleasingIso:
        """The connection's ISO transport, answering the session FINISH that follows Conclude."""

        def __init__(self, iso):
            self._iso = iso

        def __getattr__(self, name):
            return getattr(self._iso, name)

        def recv(self):
            data = self._iso.recv()
            if data and data[0] == SPDU_FINISH:
                self._iso.send(disconnect_spdu())
                return None
            return data

    init = srv.ServerConnection.__init__

    def __init__(self, server, iso, peer):
        init(self, server, ReleasingIso(iso), peer)

    srv.ServerConnection._handle = _handle
    srv.ServerConnection.__init__ = __init__


def serve_main(argv: list[str]) -> int:
    """`o61.py serve FILE [--ied NAME] [--port N] [--as-shipped]`: serve until SIGTERM."""
    p = argparse.ArgumentParser(prog="o61.py serve")
    p.add_argument("scl")
    p.add_argument("--ied")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--as-shipped", action="store_true", help="close after Conclude, as open61850 does")
    args = p.parse_args(argv)
    from open61850.server import IedModel, MmsServer

    if not args.as_shipped:
        _answer_release()
    model = IedModel.from_scl(args.scl, args.ied)
    server = MmsServer(model, "127.0.0.1", args.port)
    server.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(f"READY 127.0.0.1:{server.port}", flush=True)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


class O61Server:
    """open61850's server serving `scl` (its IED `ied`) on 127.0.0.1, a free port, as a child process."""

    def __init__(self, scl: Path | str, ied: str | None = None, *, as_shipped: bool = False, timeout: float = 120):
        cmd = [sys.executable, str(HERE / "o61.py"), "serve", str(scl)]
        if ied:
            cmd += ["--ied", ied]
        if as_shipped:
            cmd.append("--as-shipped")
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.port = _wait_ready(self.p, timeout, "open61850 server")

    def stop(self) -> tuple[int, str]:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            _, err = self.p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            _, err = self.p.communicate()
        return self.p.returncode, err

    def __enter__(self) -> "O61Server":
        return self

    def __exit__(self, *_exc) -> None:
        self.stop()


class GanderServer:
    """`gander mms server --scl FILE [--ied NAME]` on 127.0.0.1, a free port, as a child process."""

    def __init__(self, gander: str, scl: Path | str, ied: str | None = None, timeout: float = 120,
                 static: bool = True):
        cmd = [gander, "mms", "server", "--scl", str(scl), "--listen", "127.0.0.1:0"]
        if ied:
            cmd += ["--ied", ied]
        if static and _has_static(gander):
            cmd.append("--static")  # values as the SCL initialises them, comparable with open61850's
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.port = _wait_ready(self.p, timeout, "gander mms server")

    stop = O61Server.stop
    __enter__ = O61Server.__enter__
    __exit__ = O61Server.__exit__


_STATIC: dict[str, bool] = {}


def _has_static(gander: str) -> bool:
    """Whether this gander's server has `--static` (issue 19: served values change by default,
    `--static` keeps them as the SCL initialises them). Servers without the option change only
    the first member of a data set, once an RCB on it is enabled."""
    if gander not in _STATIC:
        p = subprocess.run([gander, "mms", "server", "--help"], capture_output=True, text=True, timeout=30)
        _STATIC[gander] = "--static" in p.stdout
    return _STATIC[gander]


class LibCfgServer:
    """libiec61850 serving a genconfig configuration file (interop/lib_cfg_server.py), as a child
    process: the third server of the comparisons."""

    def __init__(self, cfg: Path | str, timeout: float = 60):
        cmd = [sys.executable, str(HERE / "lib_cfg_server.py"), str(cfg)]
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HERE)
        self.port = _wait_ready(self.p, timeout, "libiec61850 cfg server")

    stop = O61Server.stop
    __enter__ = O61Server.__enter__
    __exit__ = O61Server.__exit__


class NotReady(AssertionError):
    """A server process exited or stayed silent instead of printing READY."""


def _wait_ready(p: subprocess.Popen, timeout: float, what: str) -> int:
    r, _, _ = select.select([p.stdout], [], [], timeout)
    line = p.stdout.readline() if r else ""
    if not line.startswith("READY "):
        if p.poll() is None:
            p.kill()
        _, err = p.communicate(timeout=10)
        raise NotReady(f"{what} not READY (exit {p.returncode}): {line!r}\n{err[-3000:]}")
    return int(line.split()[1].rsplit(":", 1)[1])


# --- the client ---------------------------------------------------------------------------------


def connect(port: int, **kw) -> MmsClient:
    return MmsClient.connect("127.0.0.1", port, timeout=kw.pop("timeout", 20.0), **kw)


def scl_model(scl: Path | str, ied: str | None = None) -> ServerModel:
    """The model open61850's SCL reader says the IED declares."""
    return load_model(scl, ied)


def compare_scl(port: int, scl: Path | str, ied: str | None = None) -> list[str]:
    """open61850's `compare-scl`: one line per difference between the SCL's IED and the server."""
    expected = scl_model(scl, ied)
    with connect(port) as client:
        return compare(expected, discover(client, list(expected.logical_devices)))


def compare_scl_cli(port: int, scl: Path | str, ied: str | None = None, timeout: float = 600):
    """The same through open61850's command line (`python -m open61850.mms ... compare-scl`)."""
    cmd = [sys.executable, "-m", "open61850.mms", f"127.0.0.1:{port}", "compare-scl", str(scl)]
    if ied:
        cmd += ["--ied", ied]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@dataclass
class ReadResult:
    values: dict[str, object] = field(default_factory=dict)  # "LD/LN$FC$DO$DA" -> value
    errors: dict[str, str] = field(default_factory=dict)  # name -> DataAccessError or exception text


def read_all(port: int, model: ServerModel | None = None, batch: int = 16) -> ReadResult:
    """Read every leaf attribute of the served model (discovered unless given), `batch` per Read.

    A batch whose Read fails as a whole is read again one name at a time, so that one bad
    variable names itself."""
    out = ReadResult()
    with connect(port) as client:
        model = model or discover(client)
        names = [ObjectName(f"{n.name}${'$'.join((r.fc,) + r.path)}", n.ld)
                 for n in model.logical_nodes() for r in n.references()]
        for i in range(0, len(names), batch):
            chunk = names[i:i + batch]
            try:
                results = client.read_many(chunk)
            except Exception:  # noqa: BLE001 - the whole Read failed: find which name
                results = []
                for name in chunk:
                    try:
                        results.append(client.read_many([name])[0])
                    except Exception as exc:  # noqa: BLE001
                        results.append(exc)
            for name, result in zip(chunk, results):
                key = f"{name.domain}/{name.item}"
                if isinstance(result, (DataAccessError, Exception)):
                    out.errors[key] = f"{type(result).__name__}: {result}"
                else:
                    out.values[key] = result
    return out


@dataclass
class Subscription:
    rcb: ObjectName
    members: list[ObjectName]
    reports: list  # decoded open61850 Report objects


def subscribe(port: int, domain: str, block: str, *, count: int = 2, timeout: float = 15.0,
              integrity_ms: int = 1000) -> Subscription:
    """Reserve and enable a free instance of the RCB `block` (full instance name or group base
    name) of `domain` with GI and integrity, collect `count` reports, then disable and release it."""
    messages: queue.Queue = queue.Queue()
    with connect(port, on_information_report=messages.put) as client:
        from open61850.mms import OBJECT_CLASS_NAMED_VARIABLE

        names = client.get_name_list(OBJECT_CLASS_NAMED_VARIABLE, domain)
        blocks = [ObjectName(n, domain) for n in names if rcb.is_rcb_name(n)]
        candidates = [b for b in blocks if b.item == block] or [
            b for b in blocks if rcb.instance_base(b.item) == block]
        assert candidates, f"no RCB {block} in {domain}: {[b.item for b in blocks]}"
        status = rcb.find_free(client, candidates)
        assert status is not None, f"no free instance of {block}"
        ds_domain, _, ds_item = (status.dat_set or "").partition("/")
        members = client.get_data_set_members(ObjectName(ds_item, ds_domain)) if ds_item else []
        settings = rcb.RcbSettings(intg_pd_ms=integrity_ms,
                                   purge_buf=True if rcb.is_buffered(status.rcb) else None)
        rcb.enable(client, status.rcb, settings)
        reports = []
        deadline = time.monotonic() + timeout
        try:
            while len(reports) < count and time.monotonic() < deadline:
                try:
                    message = messages.get(timeout=max(0.05, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if is_report(message):
                    reports.append(decode_report(message))
        finally:
            if client.is_connected:
                rcb.disable(client, status.rcb)
    return Subscription(status.rcb, members, reports)


# --- requests open61850's client has no call for (sent with MmsClient.request) -------------------
# ISO 9506-2 ConfirmedServiceRequest: the context tag is the service number; ObjectName
# domain-specific is [1] { domainId, itemId } (VisibleString, tag 0x1A); FileName a SEQUENCE OF
# GraphicString (0x19).


def _vis(text: str) -> bytes:
    return _tlv(0x1A, text.encode())


def domain_specific(domain: str, item: str) -> bytes:
    return _tlv(0xA1, _vis(domain) + _vis(item))


def _service(number: int, body: bytes, constructed: bool = True) -> bytes:
    """A context-specific tag [number] (high-tag-number form from 31) around `body`."""
    first = (0xA0 if constructed else 0x80) | (number if number < 31 else 0x1F)
    tag = bytes([first]) + (bytes([number]) if number >= 31 else b"")
    return tag + _length(len(body)) + body


def status_request() -> bytes:
    return _service(0, b"\x00", constructed=False)  # Status-Request: extendedDerivation FALSE


def get_domain_attributes_request(domain: str) -> bytes:
    return _service(37, domain.encode(), constructed=False)


def file_directory_request() -> bytes:
    return _service(77, b"")


def file_open_request(name: str) -> bytes:
    return _service(72, _tlv(0xA0, _tlv(0x19, name.encode())) + _tlv(0x81, b"\x00"))


def read_journal_request(domain: str, item: str) -> bytes:
    return _service(65, _tlv(0xA0, domain_specific(domain, item)))


def get_capability_list_request() -> bytes:
    return _service(71, b"")


def define_named_variable_list_request(domain: str, item: str, members: list[tuple[str, str]]) -> bytes:
    """DefineNamedVariableList (service 11) of domain-specific members given as (domain, item)."""
    variables = b"".join(_tlv(0x30, _tlv(0xA0, domain_specific(d, i))) for d, i in members)
    return _service(11, domain_specific(domain, item) + _tlv(0xA0, variables))


def delete_named_variable_list_request(domain: str, item: str) -> bytes:
    """DeleteNamedVariableList (service 13), scope specific, one list."""
    return _service(13, _tlv(0xA1, domain_specific(domain, item)))


# --- what the SCL initialises -------------------------------------------------------------------


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def scl_values(scl: Path | str, ied: str | None = None) -> dict[str, tuple[str, str]]:
    """The attributes an IED's SCL gives a value (`Val`), by MMS name without the FC
    (`LD/LN$DO$DA`): (bType, value text). Values of the DataTypeTemplates (DA and BDA `Val`)
    apply to every instance; an instance's DOI/SDI/DAI `Val` overrides them (SCL schema,
    IEC 61850-6 9.3.5 and 9.5.4). Arrays and `sGroup` values are left out."""
    import xml.etree.ElementTree as ET

    root = ET.parse(str(scl)).getroot()
    types = {(_local(e.tag), e.get("id")): e for t in root if _local(t.tag) == "DataTypeTemplates" for e in t}
    ieds = [e for e in root if _local(e.tag) == "IED" and (ied is None or e.get("name") == ied)]
    out: dict[str, tuple[str, str]] = {}

    def val(e) -> str | None:
        v = [c for c in e if _local(c.tag) == "Val" and not c.get("sGroup")]
        return (v[0].text or "").strip() if v else None

    def da_tree(e, path: list[str], btypes: dict[str, str], seen: frozenset):
        """Template values and bTypes below a DA/BDA."""
        name = "$".join(path)
        btypes[name] = e.get("bType", "")
        if e.get("count"):
            return
        if val(e) is not None:
            yield name, val(e)
        t = types.get(("DAType", e.get("type"))) if e.get("bType") == "Struct" else None
        if t is not None and t.get("id") not in seen:
            for b in t:
                if _local(b.tag) == "BDA":
                    yield from da_tree(b, path + [b.get("name")], btypes, seen | {t.get("id")})

    def do_tree(t, path: list[str], btypes: dict[str, str], seen: frozenset):
        if t is None or t.get("id") in seen:
            return
        for c in t:
            if _local(c.tag) == "SDO":
                yield from do_tree(types.get(("DOType", c.get("type"))), path + [c.get("name")], btypes,
                                   seen | {t.get("id")})
            elif _local(c.tag) == "DA":
                yield from da_tree(c, path + [c.get("name")], btypes, seen)

    def instance(e, path: list[str]):
        for c in e:
            kind = _local(c.tag)
            if kind in ("DOI", "SDI"):
                yield from instance(c, path + [c.get("name")])
            elif kind == "DAI" and val(c) is not None and not c.get("ix"):
                yield "$".join(path + [c.get("name")]), val(c)

    for ied_el in ieds:
        for ld in ied_el.iter():
            if _local(ld.tag) != "LDevice":
                continue
            domain = ld.get("ldName") or ied_el.get("name", "") + ld.get("inst", "")
            for ln in ld:
                if _local(ln.tag) not in ("LN0", "LN"):
                    continue
                ln_name = (ln.get("prefix") or "") + ln.get("lnClass", "") + (ln.get("inst") or "")
                lnt = types.get(("LNodeType", ln.get("lnType")))
                btypes: dict[str, str] = {}
                values: dict[str, str] = {}
                for do in (lnt if lnt is not None else []):
                    if _local(do.tag) == "DO":
                        values.update(do_tree(types.get(("DOType", do.get("type"))), [do.get("name")], btypes,
                                              frozenset()))
                values.update(instance(ln, []))
                for path, text in values.items():
                    out[f"{domain}/{ln_name}${path}"] = (btypes.get(path, ""), text)
    return out


def without_fc(name: str) -> str:
    """`LD/LN$FC$DO$DA` -> `LD/LN$DO$DA`."""
    ld, _, item = name.partition("/")
    parts = item.split("$")
    return f"{ld}/{'$'.join(parts[:1] + parts[2:])}"


# --- comparing the models three tools found -----------------------------------------------------


def model_of_probe(probe: dict) -> dict:
    """What `gander probe --json` found, in a form comparable across servers: logical devices and
    their logical nodes, variables per device, data sets with members, RCB instances and data sets."""
    m = probe["model"]
    return {
        "lds": {ld["name"]: sorted(ld["logical_nodes"]) for ld in m["logical_devices"]},
        "variables": {ld["name"]: ld["variables"] for ld in m["logical_devices"]},
        "data_sets": {d["ref"]: [(x["ref"], x["fc"]) for x in d["members"]] for d in m["data_sets"]},
        "rcbs": {r["ref"]: (r["buffered"], r["data_set"]) for r in m["rcbs"]},
    }


def model_of_o61(model: ServerModel) -> dict:
    """The same from an open61850 model (discovered, or read from SCL): devices, nodes, variables
    per device (every named variable below the LNs and the LNs themselves, as GetNameList lists
    them), data sets, RCB instances."""
    out = {"lds": {}, "variables": {}, "data_sets": set(), "rcbs": set()}
    for ld, dev in model.logical_devices.items():
        out["lds"][ld] = sorted(dev.logical_nodes)
        out["variables"][ld] = sum(1 + len(n.items) for n in dev.logical_nodes.values())
        for ln, node in dev.logical_nodes.items():
            out["data_sets"] |= {f"{ld}/{ln}.{d}" for d in node.data_sets}
            out["rcbs"] |= {f"{ld}/{ln}.{r.fc}.{r.path[0]}" for r in node.control_blocks() if r.fc in ("BR", "RP")}
    return out


def model_of_scl_show(show: dict, ied: str | None = None) -> dict:
    """The same from `gander scl show --json`: devices and nodes, data sets (no variables: that
    JSON has the tree, not GetNameList's flattening). Takes both forms of that JSON: one IED
    object, or `{"ieds": [...], "refused": [...]}` with every IED of the file (then `ied` or the
    only one)."""
    if "ieds" in show:
        found = [i for i in show["ieds"] if ied is None or i["name"] == ied]
        assert len(found) == 1, f"IED {ied!r} not (alone) in {[i['name'] for i in show['ieds']]}"
        show = found[0]
    lds, data_sets = {}, set()
    for ld in show["logical_devices"]:
        lds[ld["domain"]] = sorted(ln["name"] for ln in ld["logical_nodes"])
        for ln in ld["logical_nodes"]:
            data_sets |= {f"{ld['domain']}/{ln['name']}.{d['name']}" for d in ln.get("data_sets", [])}
    return {"lds": lds, "data_sets": data_sets}


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        raise SystemExit(serve_main(sys.argv[2:]))
    raise SystemExit("usage: o61.py serve FILE [--ied NAME] [--port N] [--as-shipped]")
