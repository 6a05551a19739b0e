#!/usr/bin/env python3
"""libiec61850 1.6.1 as a peer of `gander run` (the `stacks` scenario): the same command line,
config file and event log as `gander mms server|client --config F` (docs/mms-peers.md).

    imp_libiec61850_peer.py server --config F   # prints READY <addr>, serves until SIGTERM
    imp_libiec61850_peer.py client --config F   # `connections` handshakes, then `reports` reports

Server: gander's model on libiec61850 (interop/mms_iec.py LibServer); every `reports.period_ms`
the data set members change and the unbuffered RCB sends a report; RT_START is stamped just
before the change (the report's readiness). Client: HT_START before IedConnection_connect,
HT_END when it returns (TCP, TLS and MMS association in one call: libiec61850 gives no sub-steps);
on the last connection it enables urcb01 as libiec61850 does and stamps RT_END in the report
callback. Stamps are CLOCK_MONOTONIC ns, as gander's. Reports carry no index shared with the
other side, so `gander run` pairs each RT_END with the latest RT_START before it (period >> RT).

TLS: the config's [tls] ca, cert, key, peer_cert (pinned), versions (one of 1.2/1.3) and
cipher_suites (the ones libiec61850's mbedTLS offers). GPL library: external peer only.
"""
from __future__ import annotations

import argparse
import ctypes as C
import json
import os
import signal
import socket
import sys
import threading
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mms_iec  # noqa: E402

SUITES = {
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": 0xC02F,
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": 0xC030,
    "TLS_RSA_WITH_AES_128_CBC_SHA256": 0x003C,
    "TLS_AES_128_GCM_SHA256": 0x1301,
    "TLS_AES_256_GCM_SHA384": 0x1302,
}
VERSIONS = {"1.2": mms_iec.TLS_1_2, "1.3": mms_iec.TLS_1_3}


def now() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class Log:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1) if path else None
        self.lock = threading.Lock()

    def emit(self, event, conn=0, **kw):
        if self.f:
            line = json.dumps({"event": event, "t_ns": now(), "conn": conn, **kw})
            with self.lock:
                self.f.write(line + "\n")


def tls_config(t: dict | None, role: str):
    if not t:
        return None
    L = mms_iec._declare()
    versions = t.get("versions", ["1.2"])
    suites = t.get("cipher_suites", [])
    if len(versions) != 1 or versions[0] not in VERSIONS:
        raise SystemExit(f"libiec61850 peer: versions must be one of 1.2, 1.3, got {versions}")
    c = L.TLSConfiguration_create()
    ok = (L.TLSConfiguration_setOwnCertificateFromFile(c, t["cert"].encode())
          and L.TLSConfiguration_setOwnKeyFromFile(c, t["key"].encode(), None)
          and L.TLSConfiguration_addCACertificateFromFile(c, (t["ca"] if isinstance(t["ca"], str) else t["ca"][0]).encode()))
    if not ok:
        raise SystemExit("libiec61850 peer: TLS configuration failed (cert, key or CA)")
    if t.get("peer_cert"):
        L.TLSConfiguration_addAllowedCertificateFromFile(c, t["peer_cert"].encode())
        L.TLSConfiguration_setAllowOnlyKnownCertificates(c, True)
    L.TLSConfiguration_setMinTlsVersion(c, VERSIONS[versions[0]])
    L.TLSConfiguration_setMaxTlsVersion(c, VERSIONS[versions[0]])
    if suites:
        L.TLSConfiguration_clearCipherSuiteList(c)
        for s in suites:
            if s not in SUITES:
                raise SystemExit(f"libiec61850 peer: suite {s} not offered by libiec61850's mbedTLS here")
            L.TLSConfiguration_addCipherSuite(c, SUITES[s])
    L.TLSConfiguration_enableSessionResumption(c, bool(t.get("session_resumption", False)))
    return c


class Server(mms_iec.LibServer):
    def __init__(self, port, tls, period, log):
        self.log = log
        self.n = 0
        super().__init__(port, tls, period)

    def update(self, step: int):
        # The round trip starts with the change that triggers the report.
        self.log.emit("RT_START", 0, n_server=self.n)
        self.n += 1
        super().update(step)


def server(cfg):
    host, port = cfg["listen"].rsplit(":", 1)
    port = int(port)
    if port == 0:
        s = socket.socket()
        s.bind((host, 0))
        port = s.getsockname()[1]
        s.close()
    log = Log(cfg.get("events"))
    period = cfg.get("reports", {}).get("period_ms", 500) / 1000.0
    srv = Server(port, tls_config(cfg.get("tls"), "server"), period, log)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    print(f"READY {host}:{port}", flush=True)
    stop.wait()
    srv.close()


class Client(mms_iec.LibClient):
    def __init__(self, tls, log, conn):
        super().__init__(tls)
        self.log, self.conn, self.count = log, conn, 0

    def _on_report(self, _param, report):
        self.log.emit("RT_END", self.conn, n_client=self.count)
        self.count += 1
        super()._on_report(_param, report)


def client(cfg):
    host, port = cfg["connect"].rsplit(":", 1)
    log = Log(cfg.get("events"))
    n_conn, n_rep = cfg.get("connections", 1), cfg.get("reports", 0)
    hts = []
    for i in range(n_conn):
        tls = tls_config(cfg.get("tls"), "client")
        c = Client(tls, log, i)
        t0 = now()
        log.emit("HT_START", i)
        err = c.connect(host, int(port))
        if err:
            log.emit("ERROR", i, kind="connect", code=err)
            print(f"libiec61850 client: connect failed ({err})", file=sys.stderr)
            sys.exit(1)
        log.emit("HT_END", i)
        hts.append((now() - t0) / 1e6)
        if i == n_conn - 1 and n_rep > 0:
            if c.enable(gi=False):
                print("libiec61850 client: enabling urcb01 failed", file=sys.stderr)
                sys.exit(1)
            got = c.wait_reports(n_rep, timeout=60 + n_rep * 2)
            if len(got) < n_rep:
                print(f"libiec61850 client: {len(got)} of {n_rep} reports", file=sys.stderr)
        c.close()
    print(json.dumps({"ok": True, "connections": n_conn, "reports": n_rep, "stack": "libiec61850",
                      "ht_p50_ms": sorted(hts)[len(hts) // 2] if hts else None}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("role", choices=["server", "client"])
    ap.add_argument("--config", required=True)
    a = ap.parse_args()
    with open(a.config, "rb") as f:
        cfg = tomllib.load(f)
    (server if a.role == "server" else client)(cfg)
    os._exit(0)


if __name__ == "__main__":
    main()
