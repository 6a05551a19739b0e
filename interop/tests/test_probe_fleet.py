"""`gander probe --scd`: one sweep of a substation whose IEDs are `gander mms server --scl` processes,
each in a network namespace of its own on one bridge, as on a station bus.

The SCD (scripts/fleet_scd.py, written for gander) declares four IEDs with `P type="IP"`
addresses: IED001 and IED003 serve plain MMS on 102, IED002 MMS over TLS on 3782 (IEC 62351-3),
and IED004's address has nothing behind it. The prober runs in the bridge's namespace.

- the sweep: a row per IED, reachable or not, TLS posture and verdicts for IED002, the model found
  equal to the SCD's, HT and read RTT;
- the HTML report as headless Chromium renders it (Debian's `chromium`): a row per IED, no
  request leaves the page;
- an interrupted sweep (SIGINT after the first device) leaves a state file the next run resumes
  from, without probing the finished device again;
- IED002's row carries the TLS scan (every IANA suite per version, groups, weaknesses) and the
  certificate's SHA-256 over its DER;
- a diff between two sweeps: IED002's certificate re-issued, IED003 serving a changed model, and
  nothing else (the scan facts of an unchanged server do not flap); then IED002 restricted to
  TLS 1.2: the scan's versions and suites per version name what went.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

# One worker runs the whole module (`make test` passes `--dist loadgroup`): its tests share the
# fleet of servers (module fixtures), and the last diff test needs the sweep the one before it
# leaves. Spread over workers by pytest-xdist's default distribution, each worker started its
# own fleet, and that test was skipped whenever the two landed on different workers.
pytestmark = pytest.mark.xdist_group("probe_fleet")

REPO = Path(__file__).resolve().parents[2]
GEN = REPO / "scripts" / "fleet_scd.py"
TAG = f"gfl{os.getpid() % 10000}"
HUB = f"{TAG}hub"
BR = f"{TAG}br"
NET = "10.61.7"
BASE = f"{NET}.11"
TLS_IED = "IED002"
NAMES = ["IED001", "IED002", "IED003", "IED004"]
SERVED = ["IED001", "IED002", "IED003"]


def sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def ip_of(name: str) -> str:
    return f"{NET}.{11 + NAMES.index(name)}"


@pytest.fixture(scope="module")
def net():
    if os.geteuid() != 0 or not shutil.which("ip"):
        if os.environ.get("GANDER_SKIP_NETNS") == "1":
            pytest.skip("GANDER_SKIP_NETNS=1: namespaces need root and iproute2")
        pytest.fail("namespace test cannot run: needs root and `ip` (GANDER_SKIP_NETNS=1 to skip)")
    made = []
    try:
        sh("ip", "netns", "add", HUB)
        made.append(HUB)
        sh("ip", "-n", HUB, "link", "add", BR, "type", "bridge")
        sh("ip", "-n", HUB, "addr", "add", f"{NET}.1/24", "dev", BR)
        sh("ip", "-n", HUB, "link", "set", BR, "up")
        sh("ip", "-n", HUB, "link", "set", "lo", "up")
        for i, n in enumerate(SERVED):
            ns = f"{TAG}i{i}"
            sh("ip", "netns", "add", ns)
            made.append(ns)
            a, b = f"{TAG}i{i}a", f"{TAG}i{i}b"
            sh("ip", "link", "add", a, "netns", ns, "type", "veth", "peer", b, "netns", HUB)
            sh("ip", "-n", ns, "addr", "add", f"{ip_of(n)}/24", "dev", a)
            sh("ip", "-n", ns, "link", "set", a, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", HUB, "link", "set", b, "master", BR)
            sh("ip", "-n", HUB, "link", "set", b, "up")
        yield {n: f"{TAG}i{i}" for i, n in enumerate(SERVED)}
    finally:
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture(scope="module")
def pki(gander, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("fleet-pki")
    sh(gander, "pki", "init", "--dir", str(d), "--rsa", "2048", "--ecdsa", "none")
    return d / "rsa2048"


def reissue(pki: Path, out: Path) -> tuple[Path, Path]:
    """A second server certificate of the same CA (a re-issued certificate)."""
    key, csr, crt = out / "server2.key", out / "server2.csr", out / "server2.pem"
    sh("openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
       "-subj", "/O=gander lab/CN=IED002 reissued")
    ext = out / "ext.cnf"
    ext.write_text("extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost\n")
    sh("openssl", "x509", "-req", "-in", str(csr), "-CA", str(pki / "ca.pem"), "-CAkey", str(pki / "ca.key"),
       "-CAcreateserial", "-days", "30", "-sha256", "-extfile", str(ext), "-out", str(crt))
    return crt, key


class Servers:
    """The gander servers of the served IEDs, each in its namespace."""

    def __init__(self, gander: str, net: dict, pki: Path, work: Path):
        self.gander, self.net, self.pki, self.work = gander, net, pki, work
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, scd: Path, cert: Path | None = None, key: Path | None = None,
              extra_tls: str = ""):
        self.stop(name)
        if name == TLS_IED:
            cfg = self.work / f"{name}.toml"
            cfg.write_text(
                f'listen = "{ip_of(name)}:3782"\nscl = "{scd}"\nied = "{name}"\n[tls]\n'
                f'ca = "{self.pki}/ca.pem"\ncert = "{cert or self.pki / "server.pem"}"\n'
                f'key = "{key or self.pki / "server.key"}"\n{extra_tls}')
            cmd = [self.gander, "mms", "server", "--config", str(cfg)]
        else:
            cmd = [self.gander, "mms", "server", "--scl", str(scd), "--ied", name,
                   "--listen", f"{ip_of(name)}:102"]
        p = subprocess.Popen(["ip", "netns", "exec", self.net[name], *cmd], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        assert line.startswith("READY"), (line, p.stderr.read() if p.poll() is not None else "")
        self.procs[name] = p

    def stop(self, name: str):
        p = self.procs.pop(name, None)
        if p:
            p.send_signal(signal.SIGINT)
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stop_all(self):
        for n in list(self.procs):
            self.stop(n)


@pytest.fixture(scope="module")
def fleet(gander, net, pki, tmp_path_factory):
    work = tmp_path_factory.mktemp("fleet")
    scd = work / "fleet.scd"
    sh(sys.executable, str(GEN), "--count", "4", "--base", BASE, "--out", str(scd),
       "--port", f"{TLS_IED}=3782")
    variant = work / "variant.scd"
    sh(sys.executable, str(GEN), "--count", "4", "--base", BASE, "--out", str(variant),
       "--port", f"{TLS_IED}=3782", "--variant", "IED003")
    tls = work / "client.toml"
    tls.write_text(f'[tls]\nca = "{pki}/ca.pem"\ncert = "{pki}/client.pem"\nkey = "{pki}/client.key"\n')
    s = Servers(gander, net, pki, work)
    try:
        for n in SERVED:
            s.start(n, scd)
        yield {"work": work, "scd": scd, "variant": variant, "tls": tls, "servers": s, "pki": pki}
    finally:
        s.stop_all()


def sweep_cmd(gander, f, out: Path, *extra: str) -> list[str]:
    return ["ip", "netns", "exec", HUB, gander, "probe", "--scd", str(f["scd"]), "--tls", str(f["tls"]),
            "--out", str(out), "--timeout-ms", "1500", *extra]


def rows(doc) -> dict:
    return {r["name"]: r for r in doc["rows"]}


@pytest.fixture(scope="module")
def first(gander, fleet):
    out = fleet["work"] / "sweep1"
    t0 = time.monotonic()
    p = subprocess.run(sweep_cmd(gander, fleet, out, "--concurrency", "4"), capture_output=True, text=True,
                       timeout=300)
    took = time.monotonic() - t0
    # Exit 3: not every device complete (IED004 is unreachable).
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr)
    doc = json.loads((out / "fleet.json").read_text())
    return {"out": out, "doc": doc, "took": took, "stderr": p.stderr}


def test_the_sweep_has_a_row_per_ied_with_model_tls_and_times(first):
    doc = first["doc"]
    r = rows(doc)
    assert list(r) == NAMES
    assert not doc["interrupted"] and doc["pending"] == []
    for n in SERVED:
        row = r[n]
        assert row["reachable"] and row["outcome"] == "complete", row
        assert row["model_check"]["matches"], row["model_check"]
        assert row["model_check"]["declared"][3] > 0  # RCB instances declared and found
        assert row["ht_ms"] > 0 and row["read_rtt_ms"] > 0
        assert row["identity"]["vendor"] == "gander-fixture"
    assert r["IED001"]["tls"] is None and r["IED001"]["endpoint"] == f"{ip_of('IED001')}:102"
    t = r[TLS_IED]["tls"]
    assert r[TLS_IED]["endpoint"] == f"{ip_of(TLS_IED)}:3782"
    assert t["version"] and t["suite"].startswith("TLS_")
    c = t["certificate"]
    assert c["subject"] and len(c["sha256"]) == 64 and c["chain_sha256"][0] == c["sha256"]
    assert t["versions"] and t["suites"] and t["verdicts"], t
    # The scan: every version asked, suites per accepted version, gander's server accepts no
    # anonymous, NULL, EXPORT, RC4 or DES suite and no SSL.
    sc = t["scan"]
    assert sc is not None and not sc["capped"] and sc["connections"] > 0, (sc, t.get("scan_error"))
    by = {v["version"]: v for v in sc["versions"]}
    assert set(by) == {"SSLv3", "1.0", "1.1", "1.2", "1.3"}
    assert not sc["sslv2"] and not by["SSLv3"]["accepted"]
    assert by["1.2"]["accepted"] and by["1.2"]["suites"], by["1.2"]
    assert all(not v["weak_suites"] for v in sc["versions"]), sc
    assert by["1.2"]["groups"] or by["1.3"]["groups"], sc
    ids = {v["id"]: v["level"] for v in t["verdicts"]}
    for i in ("scan-sslv2", "scan-anonymous-suites", "scan-null-suites", "scan-export-suites",
              "scan-rc4-suites"):
        assert ids.get(i) == "pass", (i, ids)
    assert {v["level"] for v in t["verdicts"]} <= {"pass", "info", "warn", "fail"}
    assert not r["IED004"]["reachable"] and r["IED004"]["outcome"] == "unreachable"
    assert "3782" in r["IED004"]["endpoint"] and "102" in r["IED004"]["endpoint"]
    # One progress line per device.
    assert sum(f"/4] {n} " in first["stderr"] for n in NAMES) == 4, first["stderr"]
    prom = (first["out"] / "fleet.prom").read_text()
    assert prom.endswith("# EOF\n") and 'gander_fleet_reachable{device="IED004"} 0' in prom
    assert 'gander_fleet_tls_verdict_devices{verdict="scan-rc4-suites",level="pass"} 1' in prom
    assert f'gander_fleet_tls_scan_suites{{device="{TLS_IED}",version="1.2"}} ' in prom
    assert f'gander_fleet_tls_weak_suites{{device="{TLS_IED}"}} 0' in prom


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.table = None
        self.rows: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("id")
        elif tag == "tr" and self.table == "fleet" and "data-ied" in a:
            self.rows.append(a["data-ied"])
        for k in ("src", "href"):
            if a.get(k) and "//" in a[k]:
                self.external.append(a[k])

    def handle_endtag(self, tag):
        if tag == "table":
            self.table = None


def test_the_html_report_renders_in_headless_chromium(first, tmp_path):
    exe = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)),
               None)
    if exe is None:
        pytest.fail("headless Chromium not found: install Debian's `chromium` package")
    page = first["out"] / "fleet.html"
    p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path}",
                        "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    d = Dom()
    d.feed(p.stdout)
    assert d.rows == NAMES, d.rows
    assert d.external == []
    assert "4 devices: 3 reachable" in p.stdout


def test_an_interrupted_sweep_resumes_without_probing_again(gander, fleet):
    out = fleet["work"] / "interrupted"
    p = subprocess.Popen(sweep_cmd(gander, fleet, out, "--concurrency", "1"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if line.startswith("[1/4]"):
            p.send_signal(signal.SIGINT)
            break
    rest, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, seen, err)
    state = (out / "fleet-state.jsonl").read_text().splitlines()
    assert 1 <= len(state) < 4, state
    done = [json.loads(x)["name"] for x in state]
    doc = json.loads((out / "fleet.json").read_text())
    assert doc["interrupted"] and len(doc["pending"]) == 4 - len(done)
    p2 = subprocess.run(sweep_cmd(gander, fleet, out, "--concurrency", "2"), capture_output=True, text=True,
                        timeout=300)
    assert p2.returncode == 3, p2.stderr
    for n in done:
        assert f"{n}: done in an earlier run" in p2.stderr
        assert f"] {n} " not in p2.stderr  # not probed again
    doc = json.loads((out / "fleet.json").read_text())
    assert not doc["interrupted"] and doc["resumed"] == len(done)
    assert list(rows(doc)) == NAMES
    assert len((out / "fleet-state.jsonl").read_text().splitlines()) == 4


def test_the_diff_shows_a_new_certificate_and_a_changed_model(gander, fleet, first):
    s = fleet["servers"]
    crt, key = reissue(fleet["pki"], fleet["work"])
    s.start(TLS_IED, fleet["scd"], crt, key)
    s.start("IED003", fleet["variant"])
    out = fleet["work"] / "sweep2"
    p = subprocess.run(sweep_cmd(gander, fleet, out, "--concurrency", "4", "--diff",
                                 str(first["out"] / "fleet.json")), capture_output=True, text=True, timeout=300)
    assert p.returncode == 3, p.stderr
    assert "IED002: certificate changed" in p.stderr, p.stderr
    d = subprocess.run([gander, "probe", "diff", str(first["out"] / "fleet.json"), str(out / "fleet.json"),
                        "--json"], capture_output=True, text=True, timeout=30)
    assert d.returncode == 3, d.stderr
    diff = json.loads(d.stdout)
    changed = {c["name"]: c["changes"] for c in diff["changed"]}
    assert set(changed) == {"IED002", "IED003"}, changed
    assert [c["kind"] for c in changed["IED002"]] == ["certificate"]
    assert "IED002 reissued" in changed["IED002"][0]["detail"]
    assert [c["kind"] for c in changed["IED003"]] == ["model"]
    m = changed["IED003"][0]["detail"]
    assert "IED003CTRL/GGIO9" in m and "IED003MEAS/LLN0.Meas" in m, m
    # The new sweep also says IED003 no longer serves what the SCD declares.
    r = rows(json.loads((out / "fleet.json").read_text()))["IED003"]
    assert not r["model_check"]["matches"]
    assert "IED003MEAS/LLN0.Meas" in r["model_check"]["missing_data_sets"]
    assert r["model_check"]["extra_lns"] == ["IED003CTRL/GGIO9"]
    same = subprocess.run([gander, "probe", "diff", str(out / "fleet.json"), str(out / "fleet.json")],
                          capture_output=True, text=True, timeout=30)
    assert same.returncode == 0 and same.stdout.strip() == "no change"
    fleet["sweep2"] = out


def test_the_diff_names_the_versions_and_suites_the_scan_saw_go(gander, fleet, first):
    if "sweep2" not in fleet:
        pytest.skip("needs the sweep of the certificate and model diff")
    s = fleet["servers"]
    crt, key = fleet["work"] / "server2.pem", fleet["work"] / "server2.key"
    s.start(TLS_IED, fleet["scd"], crt, key, extra_tls='versions = ["1.2"]\n')
    out = fleet["work"] / "sweep3"
    p = subprocess.run(sweep_cmd(gander, fleet, out, "--concurrency", "4", "--diff",
                                 str(fleet["sweep2"] / "fleet.json")), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 3, p.stderr
    diff = json.loads((out / "fleet-diff.json").read_text())
    changed = {c["name"]: c["changes"] for c in diff["changed"]}
    assert set(changed) == {TLS_IED}, changed
    kinds = {c["kind"]: c["detail"] for c in changed[TLS_IED]}
    assert "certificate" not in kinds and "model" not in kinds, kinds
    assert kinds["versions"] == "removed: TLS 1.3", kinds
    assert "removed: TLS_AES_128_GCM_SHA256 (TLS 1.3)" in kinds["suites"], kinds
    assert "added" not in kinds["suites"], kinds
    row = rows(json.loads((out / "fleet.json").read_text()))[TLS_IED]
    by = {v["version"]: v for v in row["tls"]["scan"]["versions"]}
    assert by["1.2"]["accepted"] and not by["1.3"]["accepted"]
