"""Monitoring encrypted MMS (Sandia): with the TLS profile's `keylog` option, tshark decrypts a
live capture of gander's MMS client and server and dissects the MMS inside.

One private network namespace (only this test's traffic on its loopback), dumpcap on its `lo`,
`gander mms server` on port 3782 (IEC 62351-4 MMS over TLS; Wireshark does not know the port, so
the test tells it: TCP -> TLS -> TPKT) with the OpenSSL backend, and two `gander mms client` runs:
TLS 1.2 over GnuTLS and TLS 1.3 over rustls. The server and the clients each write a key log.
tshark must then, with the server's key log alone and with the clients' alone, decrypt both
sessions and find the MMS initiate request and response, the information reports and the conclude request in each; without a key
log it must find no MMS at all (so the decryption is the key log's doing)."""
from __future__ import annotations

import json
import os
import re
import shutil
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import run
from mms_gander import GanderServer, run_client, tls_table

PORT = 3782
REPORTS = 3


@pytest.fixture
def namespace():
    ns = f"gkeylog{os.getpid() % 100000}"
    r = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True)
    if r.returncode != 0:
        why = f"cannot create a network namespace: {r.stderr.strip()}"
        if os.environ.get("GANDER_SKIP_NETNS") == "1":
            pytest.skip(why)
        pytest.fail(why + " (set GANDER_SKIP_NETNS=1 to skip)")
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


class Capture:
    """dumpcap on the namespace's loopback, writing pcapng until stopped."""

    def __init__(self, ns: str, path: Path):
        self.path = path
        self.p = subprocess.Popen(["ip", "netns", "exec", ns, "dumpcap", "-i", "lo", "-f", f"tcp port {PORT}",
                                   "-w", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # dumpcap prints "File: ..." once the interface is open and the capture file written.
        seen = []
        end = time.monotonic() + 10
        while time.monotonic() < end:
            r, _, _ = select.select([self.p.stderr], [], [], 0.2)
            if r:
                line = self.p.stderr.readline()
                seen.append(line)
                if line.startswith("File:"):
                    return
                if not line:
                    break
        self.stop()
        raise AssertionError(f"dumpcap did not start capturing within 10 s: {''.join(seen)}")

    def settle(self, quiet: float = 1.0, limit: float = 6.0):
        """Waits until the file has stopped growing for `quiet` s: libpcap hands packets over a
        buffer block at a time (after dumpcap's 250 ms read timeout) and dumpcap flushes the file
        every 500 ms, so packets of the last moments reach the file up to ~1 s later, and a
        SIGINT before then loses them."""
        end = time.monotonic() + limit
        size, since = -1, time.monotonic()
        while time.monotonic() < end:
            now = self.path.stat().st_size
            if now != size:
                size, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return
            time.sleep(0.1)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.log = self.p.stderr.read()


def dissect(pcap: Path, keylog: Path | None) -> tuple[dict[int, set[str]], dict[int, str]]:
    """What tshark sees, decrypting with `keylog`: tcp.stream -> the MMS PDU kinds in it, and
    tcp.stream -> the TLS version its ServerHello chose ("1.3" when it carries supported_versions
    0x0304, RFC 8446 §4.2.1, else "1.2")."""
    cmd = ["tshark", "-r", pcap, "-n", "-d", f"tcp.port=={PORT},tls", "-d", f"tls.port=={PORT},tpkt"]
    if keylog is not None:
        cmd += ["-o", f"tls.keylog_file:{keylog}"]
    cmd += ["-Y", "mms || tls.handshake.type == 2", "-T", "json", "--no-duplicate-keys"]
    p = run(cmd)
    assert p.returncode == 0, p.stderr
    mms: dict[int, set[str]] = {}
    versions: dict[int, str] = {}
    for pkt in json.loads(p.stdout or "[]"):
        layers = pkt["_source"]["layers"]
        stream = int(layers["tcp"]["tcp.stream"])
        if "mms" in layers:
            text = json.dumps(layers["mms"])
            kinds = mms.setdefault(stream, set())
            for key in ("mms.initiate_RequestPDU_element", "mms.initiate_ResponsePDU_element",
                        "mms.informationReport_element", "mms.conclude_RequestPDU_element"):
                if f'"{key}"' in text:
                    kinds.add(key)
        tls = json.dumps(layers.get("tls", {}))
        if re.search(r'"tls\.handshake\.type": "2"', tls):
            tls13 = re.search(r'"tls\.handshake\.extensions\.supported_version": "0x0304"', tls)
            versions[stream] = "1.3" if tls13 else "1.2"
    return mms, versions


def test_tshark_decrypts_gander_mms_with_the_keylog(gander, namespace, tmp_path: Path):
    for tool in ("tshark", "dumpcap"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} not installed: run `make setup`")
    pki = tmp_path / "pki"
    run([gander, "pki", "init", "--dir", pki, "--rsa", "2048", "--ecdsa", "none"], check=True)
    pki = str(pki / "rsa2048")
    logs = {name: tmp_path / f"{name}.keys" for name in ("server", "client12", "client13")}
    prefix = ("ip", "netns", "exec", namespace)
    cap = Capture(namespace, tmp_path / "mms-tls.pcapng")
    try:
        srv = GanderServer(gander, tmp_path, tls_table(pki, "server", backend="openssl",
                                                        extra=f'keylog = "{logs["server"]}"'),
                           period_ms=20, listen=f"127.0.0.1:{PORT}", prefix=prefix)
        try:
            versions = {}
            for name, version, backend in (("client12", "1.2", "gnutls"), ("client13", "1.3", "rustls")):
                tls = tls_table(pki, "client", version=version, backend=backend, extra=f'keylog = "{logs[name]}"')
                p, summary, events = run_client(gander, tmp_path, PORT, tls, reports=REPORTS, name=name,
                                                prefix=prefix, timeout=30)
                assert p.returncode == 0, p.stderr
                assert summary and summary.get("ok"), summary
                versions[name] = {e.get("version") for e in events if e.get("event") == "TLS_UP"}
            assert versions == {"client12": {"TLSv1.2"}, "client13": {"TLSv1.3"}}, versions
        finally:
            srv.stop()
        cap.settle()
    finally:
        cap.stop()

    for name, path in logs.items():
        assert path.exists(), f"{name} wrote no key log"
        assert (path.stat().st_mode & 0o777) == 0o600, f"{path} mode {path.stat().st_mode & 0o777:o}"
    server_log = logs["server"].read_text()
    assert "CLIENT_RANDOM " in server_log and "CLIENT_HANDSHAKE_TRAFFIC_SECRET " in server_log, server_log
    assert "CLIENT_RANDOM " in logs["client12"].read_text()
    assert "SERVER_TRAFFIC_SECRET_0 " in logs["client13"].read_text()

    pcap = cap.path
    mms, versions = dissect(pcap, None)
    assert sorted(versions.values()) == ["1.2", "1.3"], f"ServerHellos in the capture: {versions}"
    assert mms == {}, "tshark found MMS without the key log: the capture is not encrypted"
    clients = tmp_path / "clients.keys"
    clients.write_text(logs["client12"].read_text() + logs["client13"].read_text())
    for label, keylog in (("server's key log", logs["server"]), ("clients' key logs", clients)):
        found, _ = dissect(pcap, keylog)
        assert sorted(found) == sorted(versions), f"{label}: MMS in streams {found}, TLS sessions {versions}"
        for stream, kinds in found.items():
            for want in ("mms.initiate_RequestPDU_element", "mms.initiate_ResponsePDU_element",
                         "mms.informationReport_element", "mms.conclude_RequestPDU_element"):
                assert want in kinds, f"{label}: TLS {versions[stream]} stream {stream} has {sorted(kinds)}, no {want}"
