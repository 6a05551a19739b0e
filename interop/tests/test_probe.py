"""`gander probe` against a libiec61850 1.6.1 server whose model gander has never seen
(interop/probe_server.py: IED PRB, logical devices PROT and MEAS), plain and over TLS with a
required, pinned client certificate and TLS 1.2 only; `--reports` receives reports and leaves the
control block as found; and every way a server can fail the probe ends in one specific error,
within its time bound, without a panic (interop/misbehaving_server.py).
"""
from __future__ import annotations

import json
import socket
import time

import pytest

from conftest import run
from misbehaving_server import Misbehaving
from probe_server import ProbeServer

TIMEOUT_MS = 800  # per step; the error tests check the bound


@pytest.fixture(scope="module")
def pki(gander, tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("probe-pki")
    run([gander, "pki", "init", "--dir", d, "--rsa", "2048", "--ecdsa", "none"], check=True)
    return str(d / "rsa2048")


@pytest.fixture(scope="module")
def tls_file(pki, tmp_path_factory) -> str:
    f = tmp_path_factory.mktemp("probe-tls") / "client.toml"
    f.write_text(f'[tls]\nca = "{pki}/ca.pem"\ncert = "{pki}/client.pem"\nkey = "{pki}/client.key"\n'
                 "session_resumption = false\n")
    return str(f)


@pytest.fixture(scope="module")
def plain():
    s = ProbeServer(period=0.05)
    yield s
    s.close()


@pytest.fixture(scope="module")
def tls_server(pki):
    s = ProbeServer(pki=pki, pin_client=True, tls_min="1.2", tls_max="1.2", period=0.05)
    yield s
    s.close()


def probe(gander, port, *extra, timeout_ms=2000):
    cmd = [gander, "probe", f"127.0.0.1:{port}", "--json", "--quick", "--timeout-ms", timeout_ms, *extra]
    t0 = time.monotonic()
    p = run(cmd, timeout=60)
    elapsed = time.monotonic() - t0
    assert "panicked" not in p.stderr, p.stderr
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"{cmd}: not JSON\nstdout {p.stdout!r}\nstderr {p.stderr!r}")
    return p, doc, elapsed


def ok(gander, port, *extra):
    p, doc, _ = probe(gander, port, *extra)
    assert p.returncode == 0, (p.stdout, p.stderr)
    return doc


def rcb(doc, ref):
    found = [r for r in doc["model"]["rcbs"] if r["ref"] == ref]
    assert len(found) == 1, doc["model"]["rcbs"]
    return found[0]


def test_model_and_measurements_of_an_unseen_server(gander, plain, tmp_path):
    doc = ok(gander, plain.port, "--out", tmp_path / "out")
    assert doc["identity"] == {"vendor": "gander-test", "model": "PRB-1", "revision": "0.9"}
    lds = {ld["name"]: ld for ld in doc["model"]["logical_devices"]}
    assert set(lds) == {"PRBPROT", "PRBMEAS"}
    assert set(lds["PRBPROT"]["logical_nodes"]) == {"LLN0", "PTOC1", "XCBR1", "GGIO1"}
    assert set(lds["PRBMEAS"]["logical_nodes"]) == {"LLN0", "MMXU1"}
    sets = {d["ref"]: d for d in doc["model"]["data_sets"]}
    assert set(sets) == {"PRBPROT/LLN0.Trips", "PRBMEAS/LLN0.Meas"}
    assert [(m["ref"], m["fc"]) for m in sets["PRBPROT/LLN0.Trips"]["members"]] == [
        ("PRBPROT/PTOC1.Str", "ST"), ("PRBPROT/PTOC1.Op", "ST"), ("PRBPROT/XCBR1.Pos", "ST")]
    assert [m["ref"] for m in sets["PRBMEAS/LLN0.Meas"]["members"]] == [
        "PRBMEAS/MMXU1.TotW", "PRBMEAS/MMXU1.Hz"]
    assert len(doc["model"]["rcbs"]) == 4
    for ref in ("PRBPROT/LLN0.BR.brcbTrip01", "PRBPROT/LLN0.BR.brcbTrip02"):
        r = rcb(doc, ref)
        assert (r["buffered"], r["data_set"], r["rpt_id"], r["conf_rev"]) == (True, "PRBPROT/LLN0.Trips", "trips", 2)
        assert r["trg_ops"] == ["dchg", "qchg", "gi"] and r["buf_tm"] == 100
        assert "entry-id" in r["opt_flds"] and r["free"] is True and r["resv_tms"] == 0
    u = rcb(doc, "PRBMEAS/LLN0.RP.urcbMeas01")
    assert (u["buffered"], u["data_set"], u["rpt_id"], u["rpt_ena"]) == (False, "PRBMEAS/LLN0.Meas", "meas", False)
    assert u["opt_flds"] == ["seq-num", "data-set"] and u["trg_ops"] == ["dchg", "gi"] and u["resv"] is False
    b = rcb(doc, "PRBMEAS/LLN0.BR.brcbMeas")
    assert b["intg_pd"] == 1000 and b["trg_ops"] == ["period", "gi"]
    m = doc["measurements"]
    assert m["ht_ms"]["n"] == 5 and 0 < m["ht_ms"]["min"] <= m["ht_ms"]["median"] <= m["ht_ms"]["max"] < 1000
    steps = m["ht_steps_ms"]
    assert steps["tls"] is None and all(steps[k]["n"] == 5 for k in ("tcp", "cotp", "initiate"))
    # HT is the sum of its sub-steps, association by association, so the medians cannot exceed it by much.
    assert steps["tcp"]["min"] + steps["cotp"]["min"] + steps["initiate"]["min"] <= m["ht_ms"]["min"] + 1e-3
    assert m["read_rtt_ms"]["n"] == 10 and 0 < m["read_rtt_ms"]["median"] < 1000
    assert m["read_ref"].endswith("[MX]") or m["read_ref"].endswith("[ST]"), m["read_ref"]
    assert m["release_ms"]["n"] == 6 and m["reports"] is None
    assert doc["tls"] is None and doc["mms"]["max_pdu_size"] > 0
    saved = json.loads((tmp_path / "out" / "probe.json").read_text())
    assert saved["model"] == doc["model"]
    text = (tmp_path / "out" / "probe.txt").read_text()
    assert "PRBPROT/LLN0.BR.brcbTrip01" in text and "HT median" in text


def test_read_names_the_attribute(gander, plain):
    doc = ok(gander, plain.port, "--read", "PRBPROT/GGIO1.ST.Ind1.stVal")
    assert doc["measurements"]["read_ref"] == "PRBPROT/GGIO1.Ind1.stVal [ST]"
    assert doc["measurements"]["read_rtt_ms"]["n"] == 10


def test_tls_with_a_required_pinned_client_certificate(gander, tls_server, tls_file):
    doc = ok(gander, tls_server.port, "--tls", tls_file)
    assert doc["tls"]["version"] == "TLSv1.2", doc["tls"]
    assert doc["tls"]["suite"].startswith("TLS_"), doc["tls"]
    steps = doc["measurements"]["ht_steps_ms"]
    assert steps["tls"]["n"] == 5 and steps["tls"]["median"] > 0
    assert {ld["name"] for ld in doc["model"]["logical_devices"]} == {"PRBPROT", "PRBMEAS"}
    assert doc["measurements"]["read_rtt_ms"]["n"] == 10
    # The TLS survey beside the connection: the server allows TLS 1.2 only and pins the client.
    tls = doc["tls"]
    assert tls["versions"] == {"1.0": False, "1.1": False, "1.2": True, "1.3": False}, tls["versions"]
    accepted = [s for s in tls["suites"] if s["accepted"]]
    assert accepted and all(s["version"] == "1.2" and s["ht_ms"] > 0 for s in accepted), tls["suites"]
    assert all(not s["accepted"] for s in tls["suites"] if s["version"] == "1.3")
    assert tls["client_cert_required"] is True
    assert tls["chain"] and tls["chain"][0]["key_type"].lower().startswith("rsa"), tls["chain"]
    assert doc["measurements"]["ht_ms"]["n"] == 5 and doc["measurements"]["ht_ms"]["median"] > 0


def test_reports_then_the_block_reads_as_found(gander, plain):
    ref = "PRBMEAS/LLN0.RP.urcbMeas01"
    before = rcb(ok(gander, plain.port, "--associations", "0"), ref)
    doc = ok(gander, plain.port, "--associations", "0", "--reports", ref, "--listen-s", "1",
             "--clocks-synchronised")
    r = doc["measurements"]["reports"]
    assert r["rcb"] == ref and r["rpt_id"] == "meas" and r["restored"] is True
    # TotW changes every 50 ms: about 20 data-change reports in 1 s, plus the GI.
    assert r["count"] >= 8 and r["gi_received"] and r["seq_gaps"] == 0, r
    assert 20 <= r["inter_arrival_ms"]["median"] <= 200, r["inter_arrival_ms"]
    assert r["latency_ms"]["data"]["n"] >= 5, r["latency_ms"]
    assert "RptEna=true" in r["written"] and "Resv=true" in r["written"]
    after = rcb(ok(gander, plain.port, "--associations", "0"), ref)
    assert after == before


def test_reports_take_the_first_free_block(gander, plain):
    doc = ok(gander, plain.port, "--associations", "0", "--reports", "--listen-s", "0.3")
    r = doc["measurements"]["reports"]
    assert r["rcb"] == "PRBMEAS/LLN0.BR.brcbMeas" and r["buffered"] and r["restored"]
    assert r["count"] >= 1 and r["latency_ms"] is None
    assert rcb(ok(gander, plain.port, "--associations", "0"), r["rcb"])["free"] is True


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def failed(gander, port, kind, *extra, bound_s=4 * TIMEOUT_MS / 1000):
    p, doc, elapsed = probe(gander, port, *extra, timeout_ms=TIMEOUT_MS)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert doc["error"]["kind"] == kind, doc
    assert elapsed < bound_s, f"{kind}: {elapsed:.2f} s"
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("gander probe: "), p.stderr
    return doc["error"]["message"]


def partial(gander, port, kind, step, *extra, bound_s=4 * TIMEOUT_MS / 1000):
    """A failure after the association was up: exit 3, the report with what was gathered, the
    failed step, and how the device was left (docs/probe.md, "Exit status")."""
    p, doc, elapsed = probe(gander, port, *extra, timeout_ms=TIMEOUT_MS)
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr)
    assert doc["outcome"] == "partial", doc
    assert (doc["failed"]["step"], doc["failed"]["kind"]) == (step, kind), doc["failed"]
    assert doc["mms"] is not None and doc["device"]["association"] in (
        "aborted", "closed-by-server", "released"), doc["device"]
    assert elapsed < bound_s, f"{kind}: {elapsed:.2f} s"
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("gander probe: partial: "), p.stderr
    return doc["failed"]["message"], doc


def test_nothing_listens(gander):
    port = free_port()
    assert "nothing listens" in failed(gander, port, "connection-refused")


def test_plain_client_against_a_tls_server(gander, tls_server):
    msg = failed(gander, tls_server.port, "server-speaks-tls")
    assert "--tls" in msg


def test_tls_client_against_a_plain_server(gander, plain, tls_file):
    msg = failed(gander, plain.port, "server-not-tls", "--tls", tls_file)
    assert "without --tls" in msg


def test_refused_association(gander):
    s = ProbeServer(refuse=True)
    try:
        assert "AARQ" in failed(gander, s.port, "association-refused")
    finally:
        s.close()


@pytest.mark.parametrize("mode,after,kind", [
    ("close", 1, "closed"),           # FIN in answer to the COTP CR
    ("garbage", 1, "protocol"),       # an HTTP status line instead of a COTP CC
    ("stall", 1, "timeout"),          # connects, never answers
    ("close", 3, "closed"),           # associated, then FIN instead of the Identify response
    ("malformed", 3, "protocol"),     # associated, then an undefined session PDU
    ("stall", 3, "timeout"),          # associated, then silence
])
def test_misbehaving_server(gander, plain, mode, after, kind):
    upstream = ("127.0.0.1", plain.port) if after > 1 else None
    m = Misbehaving(mode, upstream=upstream, after=after)
    try:
        if after > 1:
            # Associated first: the association's results survive (a partial report).
            msg, doc = partial(gander, m.port, kind, "discovery")
            if kind == "timeout":
                # An Identify never answered is taken as not supported (iec61850bean 1.9
                # advertises it and drops the request): discovery goes on over a fresh
                # association, whose first request (GetNameList) stalls as well.
                assert "GetNameList" in msg, msg
                assert any(w.startswith("Identify not answered") for w in doc["warnings"]), doc
            else:
                assert "Identify" in msg, msg
            assert doc["mms"]["max_pdu_size"], doc["mms"]
        else:
            failed(gander, m.port, kind)
    finally:
        m.close()


@pytest.mark.parametrize("extra,expect", [
    ('versions = ["1.3"]', "no shared cipher suite"),  # the server allows TLS 1.2 only
    ("unpinned", "certificate rejected"),              # a certificate of the CA, but not the pinned one
])
def test_tls_settings_the_server_refuses(gander, tls_server, pki, tmp_path, extra, expect):
    cert, key = ("server", "server") if extra == "unpinned" else ("client", "client")
    f = tmp_path / "client.toml"
    f.write_text(f'[tls]\nca = "{pki}/ca.pem"\ncert = "{pki}/{cert}.pem"\nkey = "{pki}/{key}.key"\n'
                 + ("" if extra == "unpinned" else extra + "\n"))
    msg = failed(gander, tls_server.port, "tls-handshake", "--tls", f)
    assert expect in msg and "peer alert" in msg, msg


def test_reports_on_the_first_free_instance_of_an_indexed_block(gander, plain):
    doc = ok(gander, plain.port, "--associations", "0", "--reports", "PRBPROT/LLN0.BR.brcbTrip",
             "--listen-s", "0.2")
    r = doc["measurements"]["reports"]
    assert r["rcb"] == "PRBPROT/LLN0.BR.brcbTrip01" and r["rpt_id"] == "trips" and r["restored"], r
    assert r["gi_received"] and r["count"] >= 1 and "ResvTms=60" in r["written"], r


def test_a_block_another_client_holds_is_left_alone(gander):
    """libiec61850's own client enables urcbMeas01; the probe sees it enabled, refuses to take it,
    and `--reports` without a name takes another block."""
    import mms_iec

    class Holder(mms_iec.LibClient):
        RCB = b"PRBMEAS/LLN0.RP.urcbMeas01"

    s = ProbeServer(period=0.05)
    holder = Holder()
    try:
        assert holder.connect("127.0.0.1", s.port) == 0
        assert holder.enable(gi=False) == 0
        doc = ok(gander, s.port, "--associations", "0")
        held = rcb(doc, "PRBMEAS/LLN0.RP.urcbMeas01")
        assert held["rpt_ena"] is True and held["free"] is False, held
        msg, doc = partial(gander, s.port, "rcb-plan", "reports", "--associations", "0",
                           "--reports", "PRBMEAS/LLN0.RP.urcbMeas01")
        assert "in use" in msg and "RptEna" in msg, msg
        assert doc["device"] == {"association": "aborted", "ht_aborted": 0, "rcb": "untouched"}, doc
        assert doc["model"]["logical_devices"], doc["model"]
        doc = ok(gander, s.port, "--associations", "0", "--reports", "--listen-s", "0.2")
        assert doc["measurements"]["reports"]["rcb"] != "PRBMEAS/LLN0.RP.urcbMeas01"
        assert len(holder.wait_reports(3, timeout=5)) >= 3  # the holder's reports still flow
    finally:
        holder.close()
        s.close()


def test_a_server_that_ignores_conclude_still_gets_the_whole_report(gander, plain):
    """libiec61850 behind a relay that swallows the MMS conclude request (as an independent open
    stack's server never answers it): the probe aborts, and the model and every measurement are
    in a partial report (docs/probe.md, "Partial results")."""
    m = Misbehaving("ignore-conclude", upstream=("127.0.0.1", plain.port))
    try:
        msg, doc = partial(gander, m.port, "timeout", "release", bound_s=3 * TIMEOUT_MS / 1000 + 2)
    finally:
        m.close()
    assert "release" in msg, msg
    assert doc["device"]["association"] == "aborted", doc["device"]
    assert doc["device"]["ht_aborted"] == doc["measurements"]["ht_ms"]["n"] == 5, doc
    lds = {ld["name"] for ld in doc["model"]["logical_devices"]}
    assert lds == {"PRBPROT", "PRBMEAS"}, lds
    assert doc["measurements"]["read_rtt_ms"]["n"] == 10, doc["measurements"]
    assert doc["identity"] is not None


def test_a_model_without_report_control_blocks_says_so(gander):
    """Many real SCL models declare no ReportControl (GOOSE-only and template IEDs: libiec61850's
    sv.icd, OpenSCD's valid2003.scd, the sampleProject Efacec TPU220 IID). `--reports` without a
    name then fails the reports step as `no-rcb`, not as "none free", which would send an engineer
    looking for the client that holds them. The repository's merging unit CID has none either."""
    from conftest import REPO
    from mms_gander import SclServer

    mu = REPO / "crates" / "scl" / "tests" / "data" / "merging_unit.cid"
    s = SclServer(gander, "--scl", str(mu), "--listen", "127.0.0.1:0")
    try:
        msg, doc = partial(gander, s.port, "no-rcb", "reports", "--associations", "0", "--reports")
        assert "no report control block" in msg and "ReportControl" in msg, msg
        assert doc["device"]["rcb"] == "untouched", doc["device"]
        assert doc["model"]["logical_devices"], doc["model"]
    finally:
        s.stop()


def test_an_address_given_to_reports_is_named(gander):
    """`--reports` takes an optional value: `gander probe --reports 192.0.2.10:102` would read
    the address as a control block and then miss a target. It is a usage error naming the fix."""
    p = run([gander, "probe", "--quick", "--reports", "192.0.2.10:102"])
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "put HOST:PORT before --reports" in p.stderr, p.stderr
