"""`gander run --target`: the RSE matrix against a libiec61850 server gander did not start and
whose model it has never seen (interop/probe_server.py), across two network namespaces joined by a
veth pair shaped as the `lan` link profile (100 Mbit/s with tbf; plus netem's 1 ms each way where
the kernel has sch_netem — the CI machine's kernel does not), as two hosts would be; and the
refusals of a bad target. The control block the run used must read back as it was found."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import run

HERE = Path(__file__).resolve().parent
INTEROP = HERE.parent
TAG = f"gtg{os.getpid() % 10000}"
SERVER_NS, CLIENT_NS = f"{TAG}s", f"{TAG}c"
SERVER_IP, CLIENT_IP = "10.231.7.1", "10.231.7.2"
PORT = 3782

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")


def sh(*cmd):
    subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True)


def shape(ns: str, dev: str) -> bool:
    """netem 1 ms + 100 Mbit/s where the kernel has it, else tbf 100 Mbit/s; True with delay."""
    netem = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root",
                            "netem", "delay", "1ms", "rate", "100mbit"], capture_output=True)
    if netem.returncode == 0:
        return True
    sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate",
       "100mbit", "burst", "32kbit", "latency", "50ms")
    return False


@pytest.fixture(scope="module")
def hosts():
    """Two namespaces, one veth pair, each side shaped (`shape`); yields whether delay is on."""
    for ns in (SERVER_NS, CLIENT_NS):
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        sh("ip", "netns", "add", ns)
    try:
        sh("ip", "link", "add", f"{TAG}a", "netns", SERVER_NS, "type", "veth", "peer", f"{TAG}b",
           "netns", CLIENT_NS)
        for ns, dev, ip in ((SERVER_NS, f"{TAG}a", SERVER_IP), (CLIENT_NS, f"{TAG}b", CLIENT_IP)):
            sh("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            delayed = shape(ns, dev)
        yield delayed
    finally:
        for ns in (SERVER_NS, CLIENT_NS):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture(scope="module")
def pki(gander, tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("target-pki")
    run([gander, "pki", "init", "--dir", d, "--rsa", "2048", "--ecdsa", "none"], check=True)
    return str(d / "rsa2048")


@pytest.fixture(scope="module")
def server(hosts, pki):
    """libiec61850 with TLS 1.2 only and required client certificates, in the server namespace."""
    p = subprocess.Popen(
        ["ip", "netns", "exec", SERVER_NS, sys.executable, str(INTEROP / "probe_server.py"),
         "--port", str(PORT), "--pki", pki, "--tls-min", "1.2", "--tls-max", "1.2",
         "--period", "0.05"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(INTEROP)})
    line = p.stdout.readline()
    assert line.startswith("READY"), (line, p.stderr.read() if p.poll() is not None else "")
    yield p
    p.stdin.close()
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def target_file(tmp_path: Path, pki: str, **extra) -> Path:
    f = tmp_path / "target.toml"
    lines = [f'address = "{SERVER_IP}:{PORT}"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    lines += ["[tls]", f'ca = "{pki}/ca.pem"', f'cert = "{pki}/client.pem"',
              f'key = "{pki}/client.key"']
    f.write_text("\n".join(lines) + "\n")
    return f


def scenario_file(tmp_path: Path) -> Path:
    """Two rows of the RSE matrix the server accepts (suites iv and v at TLS 1.2) and one it
    refuses (TLS 1.3), small counts."""
    f = tmp_path / "rse-target.toml"
    f.write_text("""name = "rse-target"
[defaults]
tls_version = "1.2"
key = "rsa2048"
interaction = "report"
payload = 125
period_ms = 50
connections = 8
reports = 20
warmup = 2
[[row]]
name = "iv"
cipher_suite = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
[[row]]
name = "v"
cipher_suite = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
[[row]]
name = "tls13"
tls_version = "1.3"
cipher_suite = "TLS_AES_128_GCM_SHA256"
""")
    return f


def in_client(*cmd, timeout=180):
    return run(["ip", "netns", "exec", CLIENT_NS, *cmd], timeout=timeout)


def test_the_rse_matrix_runs_against_an_unseen_server_across_namespaces(gander, hosts, server,
                                                                         pki, tmp_path):
    probe_tls = tmp_path / "probe-tls.toml"
    probe_tls.write_text(f'[tls]\nca = "{pki}/ca.pem"\ncert = "{pki}/client.pem"\n'
                         f'key = "{pki}/client.key"\n')
    before = json.loads(in_client(gander, "probe", f"{SERVER_IP}:{PORT}", "--json", "--quick",
                                  "--no-tls-survey", "--tls", probe_tls).stdout)
    out = tmp_path / "out"
    t0 = time.monotonic()
    p = in_client(gander, "run", scenario_file(tmp_path), "--target", target_file(tmp_path, pki),
                  "--out", out)
    assert "panicked" not in p.stderr, p.stderr
    res = json.loads((out / "results.json").read_text())
    rows = {r["name"]: r for r in res["scenarios"]}
    for name in ("iv", "v"):
        r = rows[name]
        assert r["status"] == "ok", (name, r.get("error"))
        assert r["ht"]["n"] == 6 and r["ht"]["median_ms"] > 0, r["ht"]
        if hosts:  # netem: each round trip is at least 2 ms, and HT waits for 5 of them
            assert r["ht_steps"]["tcp"]["median_ms"] >= 1.9, r["ht_steps"]
            assert r["ht"]["median_ms"] >= 5 * 1.9, r["ht"]
        rtt = r["read_rtt"]  # reads of the discovered block's data set, warm-up discarded
        assert rtt["n"] == 18 and rtt["median_ms"] > 0, rtt
        ia = r["report_interarrival"]
        assert ia["n"] >= 15 and abs(ia["median_ms"] - 50) < 10, ia
        assert r.get("rt") is None and "ht_accounting" not in r and r.get("floor") is None
    # The target speaks TLS 1.2 only: the TLS 1.3 row fails with the handshake's reason.
    assert rows["tls13"]["status"] == "failed"
    assert "tls" in rows["tls13"]["error"].lower(), rows["tls13"]["error"]
    summary = (out / "summary.md").read_text()
    assert "Reports seen by the client" in summary
    # Every control block reads back as it was before the run.
    after = json.loads(in_client(gander, "probe", f"{SERVER_IP}:{PORT}", "--json", "--quick",
                                 "--no-tls-survey", "--tls", probe_tls).stdout)
    assert after["model"]["rcbs"] == before["model"]["rcbs"]
    assert time.monotonic() - t0 < 120


@pytest.mark.parametrize("body,expect", [
    ('rcb = "discover"\n', "address"),
    ('address = "no-such-host.invalid:102"\n', "not a reachable"),
    (f'address = "{SERVER_IP}:{PORT}"\nrcb = "LLN0.RP.x"\n', "rcb"),
    (f'address = "{SERVER_IP}:{PORT}"\nbogus = 1\n', "bogus"),
    (f'address = "{SERVER_IP}:{PORT}"\n[tls]\nca = "/nonexistent/ca.pem"\n', "tls"),
])
def test_a_bad_target_is_refused_before_anything_runs(gander, tmp_path, body, expect):
    f = tmp_path / "bad-target.toml"
    f.write_text(body)
    p = run([gander, "run", "rse2019", "--quick", "--target", f, "--out", tmp_path / "o"])
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert expect in p.stderr, p.stderr
    assert "panicked" not in p.stderr
    assert not (tmp_path / "o" / "results.json").exists()


def test_one_way_times_against_a_gander_server_on_a_declared_synchronised_clock(gander, tmp_path):
    """Both ends gander, on one host (one clock, so "synchronised" holds by construction): each
    data-change report's one-way time is arrival minus the report's own `t`, small and positive."""
    from mms_gander import GanderServer

    srv = GanderServer(gander, tmp_path, period_ms=20)
    try:
        tf = tmp_path / "t.toml"
        tf.write_text(f'address = "{srv.addr}"\nrcb = "IMPLD0/LLN0.RP.urcb01"\n'
                      "clocks_synchronised = true\n")
        sc = tmp_path / "s.toml"
        sc.write_text('name = "oneway"\n[defaults]\ntls_version = "none"\nkey = "rsa2048"\n'
                      'interaction = "report"\npayload = 125\nperiod_ms = 1000\nconnections = 3\n'
                      'reports = 30\nwarmup = 2\n[[row]]\nname = "clear"\n')
        out = tmp_path / "out"
        p = run([gander, "run", sc, "--target", tf, "--out", out], timeout=120)
        assert p.returncode == 0, p.stderr
    finally:
        srv.stop()
    r = json.loads((out / "results.json").read_text())["scenarios"][0]
    assert r["status"] == "ok", r.get("error")
    ow = r["report_one_way"]
    assert ow["n"] >= 20 and 0 <= ow["median_ms"] < 50, ow
    # The fixed model's data changes every 20 ms; IntgPd (1 s) adds nothing in between.
    assert abs(r["report_interarrival"]["median_ms"] - 20) < 8, r["report_interarrival"]


def test_relative_tls_paths_are_taken_from_the_target_files_directory(gander, server, pki,
                                                                       tmp_path):
    """`--target cfg/target.toml` run from another directory, with `ca = "pki/ca.pem"`: the
    paths are the target file's, whatever directory the run and its peers work in."""
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "pki").symlink_to(pki)
    (cfg / "target.toml").write_text(f'address = "{SERVER_IP}:{PORT}"\n[tls]\nca = "pki/ca.pem"\n'
                                     'cert = "pki/client.pem"\nkey = "pki/client.key"\n')
    sc = tmp_path / "one.toml"
    sc.write_text('name = "one"\n[defaults]\ntls_version = "1.2"\nkey = "rsa2048"\n'
                  'interaction = "report"\npayload = 125\nperiod_ms = 50\nconnections = 3\n'
                  'reports = 5\nwarmup = 1\n[[row]]\nname = "iv"\n'
                  'cipher_suite = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"\n')
    p = subprocess.run(["ip", "netns", "exec", CLIENT_NS, gander, "run", "one.toml", "--target",
                        "cfg/target.toml", "--out", "o"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    r = json.loads((tmp_path / "o" / "results.json").read_text())["scenarios"][0]
    assert r["status"] == "ok", r.get("error")
