#!/usr/bin/env python3
"""Benchmark of `gander probe --scd`: a substation of N IEDs (default 100), each a
`gander mms server --scl` of the fixture SCD (scripts/fleet_scd.py) in a network namespace of its
own on one bridge, every other IED over TLS (port 3782, `P type="MMS-Port"`), the rest plain (102).
The sweep runs with the gentle per-IED defaults (`gander probe --scd` without tuning: 8 devices at
once, the quick probe, the TLS survey's quick mode) from the bridge's namespace.

Printed per count: wall time of the sweep, the prober's peak RSS (VmHWM), the servers' total RSS,
and the rows complete. Run as root (namespaces); nothing outside the namespaces it creates is
touched, and they are removed at the end.

    sudo .venv/bin/python scripts/bench_fleet.py [--counts 25,50,100] [--gander target/release/gander]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TAG = f"gfb{os.getpid() % 10000}"
HUB = f"{TAG}hub"
BR = f"{TAG}br"


def sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def ip_of(i: int) -> str:
    return f"10.62.{(11 + i) // 250}.{(11 + i) % 250 + 1}"


def status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def run(gander: str, n: int, work: Path) -> dict:
    names = [f"IED{i + 1:03d}" for i in range(n)]
    scd = work / f"fleet{n}.scd"
    tls_ieds = names[1::2]
    ports = sum((["--port", f"{x}=3782"] for x in tls_ieds), [])
    sh(sys.executable, str(REPO / "scripts" / "fleet_scd.py"), "--count", str(n), "--base", ip_of(0),
       "--out", str(scd), *ports)
    sh(gander, "pki", "init", "--dir", str(work / "pki"), "--rsa", "2048", "--ecdsa", "none")
    pki = work / "pki" / "rsa2048"
    client = work / "client.toml"
    client.write_text(f'[tls]\nca = "{pki}/ca.pem"\ncert = "{pki}/client.pem"\nkey = "{pki}/client.key"\n')
    made, procs = [], []
    try:
        sh("ip", "netns", "add", HUB)
        made.append(HUB)
        sh("ip", "-n", HUB, "link", "add", BR, "type", "bridge")
        sh("ip", "-n", HUB, "addr", "add", "10.62.0.1/16", "dev", BR)
        sh("ip", "-n", HUB, "link", "set", BR, "up")
        for i, name in enumerate(names):
            ns = f"{TAG}i{i}"
            sh("ip", "netns", "add", ns)
            made.append(ns)
            a, b = f"{TAG}i{i}a", f"{TAG}i{i}b"
            sh("ip", "link", "add", a, "netns", ns, "type", "veth", "peer", b, "netns", HUB)
            sh("ip", "-n", ns, "addr", "add", f"{ip_of(i)}/16", "dev", a)
            sh("ip", "-n", ns, "link", "set", a, "up")
            sh("ip", "-n", HUB, "link", "set", b, "master", BR)
            sh("ip", "-n", HUB, "link", "set", b, "up")
            if name in tls_ieds:
                cfg = work / f"{name}.toml"
                cfg.write_text(f'listen = "{ip_of(i)}:3782"\nscl = "{scd}"\nied = "{name}"\n[tls]\n'
                               f'ca = "{pki}/ca.pem"\ncert = "{pki}/server.pem"\nkey = "{pki}/server.key"\n')
                cmd = [gander, "mms", "server", "--config", str(cfg)]
            else:
                cmd = [gander, "mms", "server", "--scl", str(scd), "--ied", name, "--listen", f"{ip_of(i)}:102"]
            p = subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
            procs.append(p)
        for p in procs:
            line = p.stdout.readline()
            if not line.startswith("READY"):
                raise RuntimeError(f"a server did not start: {line!r}")
        servers_kb = sum(status_kb(p.pid, "VmRSS") for p in procs)
        out = work / f"sweep{n}"
        t0 = time.monotonic()
        sweep = subprocess.Popen(["ip", "netns", "exec", HUB, gander, "probe", "--scd", str(scd), "--tls",
                                  str(client), "--out", str(out)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        peak = 0
        while sweep.poll() is None:
            peak = max(peak, status_kb(sweep.pid, "VmHWM"), status_kb(sweep.pid, "VmRSS"))
            time.sleep(0.1)
        took = time.monotonic() - t0
        doc = json.loads((out / "fleet.json").read_text())
        complete = sum(r["outcome"] == "complete" for r in doc["rows"])
        tls_rows = [r for r in doc["rows"] if r["tls"]]
        return {"ieds": n, "tls": len(tls_rows), "sweep_s": round(took, 1), "complete": complete,
                "prober_peak_rss_mb": round(peak / 1024, 1), "servers_rss_mb": round(servers_kb / 1024, 1),
                "exit": sweep.returncode,
                "per_device_s_median": sorted(r["duration_ms"] for r in doc["rows"])[len(doc["rows"]) // 2] / 1e3}
    finally:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--counts", default="100")
    ap.add_argument("--gander", default=str(REPO / "target" / "release" / "gander"))
    a = ap.parse_args()
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    for n in (int(x) for x in a.counts.split(",")):
        with tempfile.TemporaryDirectory(prefix="gander-fleet-bench-") as d:
            r = run(a.gander, n, Path(d))
            print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
