"""The gateway's operations interfaces, read the way a site reads them.

`gander gateway` (the real binary, `udp` driver, in a network namespace this test creates) is
flooded with junk R-GOOSE datagrams. Its `/metrics` endpoint is scraped over HTTP and parsed by
the Prometheus project's own OpenMetrics parser (`prometheus_client`, pinned in
interop/requirements.txt): what Prometheus would ingest. Its security events arrive on a Unix
datagram socket as a syslog daemon would receive them, and are parsed as RFC 5424 messages.
Checked: every junk datagram is counted as a `malformed` drop; the drop events stay within the
configured rate and the `events-suppressed` summary accounts for every drop not logged; a
refused key reload and the stop are logged with their stable event ids.

Namespace rule (as the Rust namespace tests): without the rights to create a namespace the test
fails with the reason, unless GANDER_SKIP_NETNS=1.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

KEYS = """
[[key]]
id = 1
mac = "hmac-sha256-128"
key_ascii = "0123456789ABCDEF"
"""

RATE = 5
JUNK = 60
METRICS = "127.0.0.1:9561"

# RFC 5424 §6: <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID [SD] MSG
RFC5424 = re.compile(
    r'^<(\d{1,3})>1 (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z) (\S+) (\S+) (\d+) (\S+) '
    r'\[gander@32473 ((?:\w+="(?:[^"\\\]]|\\["\\\]])*" ?)+)\] (.*)$'
)
PARAM = re.compile(r'(\w+)="((?:[^"\\\]]|\\["\\\]])*)"')


def parse_event(line: str) -> dict:
    m = RFC5424.match(line)
    assert m, f"not an RFC 5424 message with gander structured data: {line!r}"
    pri = int(m.group(1))
    params = dict(PARAM.findall(m.group(7)))
    return {
        "facility": pri // 8,
        "severity": pri % 8,
        "app": m.group(4),
        "procid": int(m.group(5)),
        "msgid": m.group(6),
        "id": int(params["eventId"]),
        "params": params,
        "msg": m.group(8),
    }


def ns_run(ns: str, *cmd: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], check=True, capture_output=True, text=True, **kw)


@pytest.fixture
def namespace():
    ns = f"gops{os.getpid() % 100000}"
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


def recv_events(sock: socket.socket, until: float) -> list[dict]:
    out = []
    while time.monotonic() < until:
        try:
            data = sock.recv(4096)
        except socket.timeout:
            continue
        out.append(parse_event(data.decode()))
    return out


def keys_and_event_socket(tmp_path: Path) -> tuple[Path, Path, socket.socket]:
    """The key file the configs name, and the Unix datagram socket the events arrive on."""
    keys = tmp_path / "keys.toml"
    keys.write_text(KEYS)
    log = tmp_path / "log.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(log))
    sock.settimeout(0.2)
    return keys, log, sock


def test_metrics_scrape_and_security_events(gander, namespace, tmp_path: Path):
    keys, log, sock = keys_and_event_socket(tmp_path)
    config = tmp_path / "gw.toml"
    config.write_text(
        f"""
driver = "udp"
keys = "keys.toml"
[udp]
ied_listen = "127.0.0.1:10102"
net_peer = "127.0.0.1:10202"
net_listen = "127.0.0.1:10103"
ied_peer = "127.0.0.1:10203"
[[rule]]
direction = "inbound"
action = "verify"
[metrics]
listen = "{METRICS}"
[syslog]
target = "unix:{log}"
facility = "authpriv"
rate = {RATE}
"""
    )
    gw = subprocess.Popen(
        ["ip", "netns", "exec", namespace, gander, "gateway", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        started = recv_events(sock, time.monotonic() + 3)
        assert gw.poll() is None, gw.communicate()
        assert [e["id"] for e in started] == [100], started
        assert started[0]["facility"] == 10 and started[0]["app"] == "gander-gateway"

        # Junk from the network side: session PDUs that do not parse.
        sender = (
            "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"for i in range({JUNK}): s.sendto(bytes([0xa1, 0x05]) + bytes(range(i % 40)), ('127.0.0.1', 10103))\n"
        )
        t0 = time.monotonic()
        ns_run(namespace, sys.executable, "-c", sender)
        # The summary of what was suppressed comes once its second is over.
        events = recv_events(sock, time.monotonic() + 2.5)
        elapsed = time.monotonic() - t0

        scraper = (
            "import urllib.request, sys\n"
            f"r = urllib.request.urlopen('http://{METRICS}/metrics', timeout=5)\n"
            "sys.stdout.write(r.headers['Content-Type'] + '\\n' + r.read().decode())\n"
        )
        out = ns_run(namespace, sys.executable, "-c", scraper).stdout
        ctype, _, text = out.partition("\n")
        assert ctype.startswith("application/openmetrics-text"), ctype
        families = {f.name: f for f in text_string_to_metric_families(text)}
        dropped = {
            (s.labels["direction"], s.labels["reason"]): s.value
            for s in families["gander_gateway_frames_dropped"].samples
            if s.name == "gander_gateway_frames_dropped_total"
        }
        assert dropped[("inbound", "malformed")] == JUNK, ({k: v for k, v in dropped.items() if v}, text)
        assert sum(v for (d, _), v in dropped.items() if d == "outbound") == 0
        received = {s.labels["direction"]: s.value for s in families["gander_gateway_frames_received"].samples}
        assert received["inbound"] == JUNK
        assert families["gander_gateway_build_info"].samples[0].labels["driver"] == "udp"

        drops = [e for e in events if e["msgid"] == "drop"]
        summaries = [e for e in events if e["id"] == 400]
        assert drops, events
        assert all(e["id"] == 301 and e["params"]["reason"] == "malformed" for e in drops), drops
        assert all(e["params"]["direction"] == "inbound" for e in drops)
        # The budget holds: at most RATE per second that passed (the junk spans one or two).
        assert len(drops) <= RATE * (int(elapsed) + 2), (len(drops), elapsed)
        suppressed = sum(int(e["params"]["count"]) for e in summaries)
        assert len(drops) + suppressed == JUNK, (len(drops), suppressed, events)
        ev = {s.labels["outcome"]: s.value for s in families["gander_gateway_security_events"].samples}
        assert ev["suppressed"] == suppressed, ev

        # A key file that does not load: the old keys stay, and the refusal is an event.
        keys.write_text("[[key]]\nid = 1\nmac = \"no-such-mac\"\n")
        gw.send_signal(signal.SIGHUP)
        reload = recv_events(sock, time.monotonic() + 1.5)
        assert [e["id"] for e in reload] == [201], reload
        assert reload[0]["severity"] == 3 and "no-such-mac" in reload[0]["params"]["error"]

        gw.send_signal(signal.SIGTERM)
        rc = gw.wait(timeout=10)
        assert rc == 0, gw.stderr.read()
        stop = recv_events(sock, time.monotonic() + 1)
        assert [e["id"] for e in stop] == [101], stop
        assert int(stop[0]["params"]["dropped"]) == JUNK
    finally:
        if gw.poll() is None:
            gw.kill()
            gw.wait()
        sock.close()


def test_a_driver_that_cannot_start_is_a_failure_event_not_a_start(gander, namespace, tmp_path: Path):
    """An `l2` gateway whose IED interface does not exist: before, `gateway-start` (100) was
    logged and nothing after it, so a SIEM saw a gateway up that forwarded nothing. Now the one
    event is `gateway-failed` (102, error) naming the interface, and the process exits 2."""
    keys, log, sock = keys_and_event_socket(tmp_path)
    config = tmp_path / "gw.toml"
    config.write_text(
        f"""
driver = "l2"
keys = "keys.toml"
[l2]
ied = "nosuch0"
net = "lo"
[[rule]]
direction = "inbound"
action = "verify"
[syslog]
target = "unix:{log}"
"""
    )
    try:
        gw = subprocess.run(["ip", "netns", "exec", namespace, gander, "gateway", "--config", str(config)],
                            capture_output=True, text=True, timeout=20)
        assert gw.returncode == 2, (gw.returncode, gw.stderr)
        assert "nosuch0" in gw.stderr, gw.stderr
        assert "driver running" not in gw.stderr, gw.stderr
        events = recv_events(sock, time.monotonic() + 1)
        assert [e["id"] for e in events] == [102], events
        e = events[0]
        assert e["msgid"] == "gateway-failed" and e["severity"] == 3, e
        assert "nosuch0" in e["params"]["error"], e
    finally:
        sock.close()
