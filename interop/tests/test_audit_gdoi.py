"""`gander audit` on a GDOI capture made here: `gander kdc` and two `gander gdoi register` members
in a network namespace of their own (loopback only), recorded by dumpcap on its loopback. One
member is in the group's policy and registers; the other is not, and the key server refuses it
with a notification protected under the phase-1 SA (docs/gdoi.md), so the member stops at once.
The audit must list both registrations with the right outcome and report the refused one, and
nothing else.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

KDC = """
listen = "127.0.0.1:848"
state = "{state}"
identity = "kdc"
events = "json"

[[group]]
id = "goose-1"
protocol = "goose"
dst_mac = "01:0c:cd:01:00:01"
appid = 1
mac = 2
enc = 0
lifetime_s = 3600
activation_delay_s = 0
overlap_s = 60

[[member]]
identity = "ied-1"
address = "127.0.0.2"
psk_hex = "00112233445566778899aabbccddeeff"
groups = ["goose-1"]

[[member]]
identity = "ied-3"
address = "127.0.0.3"
psk_hex = "ffeeddccbbaa99887766554433221100"
groups = []
"""

SCRIPT = """
set -e
ip link set lo up
dumpcap -q -i lo -f "udp port 848" -w {pcap} &
D=$!
for i in $(seq 50); do [ -s {pcap} ] && break; sleep 0.1; done
sleep 0.5
{gander} kdc --config {conf} > {work}/kdc.log 2>&1 &
K=$!
sleep 0.5
{gander} gdoi register --server 127.0.0.1:848 --group goose-1 --identity ied-1 \
  --psk-hex 00112233445566778899aabbccddeeff --bind 127.0.0.2:848 --timeout 5 > {work}/reg1.txt
set +e
{gander} gdoi register --server 127.0.0.1:848 --group goose-1 --identity ied-3 \
  --psk-hex ffeeddccbbaa99887766554433221100 --bind 127.0.0.3:848 --timeout 3 > {work}/reg3.txt 2>&1
echo $? > {work}/rc3
sleep 0.5
kill $K
sleep 0.5
kill -INT $D
wait $D
"""


def netns_or_skip():
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("dumpcap"):
        if os.environ.get("GANDER_SKIP_NETNS") == "1":
            pytest.skip("needs root, unshare and dumpcap for a network namespace")
        pytest.fail("needs root, unshare and dumpcap for a network namespace (GANDER_SKIP_NETNS=1 skips)")


def test_registrations_of_gander_kdc_are_inventoried_and_the_refused_one_reported(gander, tmp_path):
    netns_or_skip()
    conf = tmp_path / "kdc.toml"
    conf.write_text(KDC.format(state=tmp_path / "state.toml"))
    pcap = tmp_path / "gdoi.pcapng"
    script = SCRIPT.format(gander=gander, conf=conf, pcap=pcap, work=tmp_path)
    r = subprocess.run(["unshare", "-n", "bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "rc3").read_text().strip() == "2", "the member outside the policy got a key"
    events = [json.loads(l) for l in (tmp_path / "kdc.log").read_text().splitlines() if l.startswith("{")]
    assert any(e.get("event") == "registered" for e in events), events
    assert any(e.get("event") == "refused" for e in events), events

    out = tmp_path / "audit"
    a = subprocess.run([gander, "audit", str(pcap), "--out", str(out)], capture_output=True, text=True, timeout=60)
    # Worst finding: the refused registration (medium): the key server answers a member outside
    # its policy with a protected notification under the phase-1 SA (docs/gdoi.md).
    assert a.returncode == 4, a.stdout + a.stderr
    lines = [json.loads(l) for l in (out / "gdoi.log").read_text().splitlines()]
    pulls = {(l["id.orig_h"], l["outcome"]) for l in lines if l["exchange"] == "GROUPKEY-PULL"}
    assert pulls == {("127.0.0.2", "completed"), ("127.0.0.3", "refused")}, lines
    refused = next(l for l in lines if l["id.orig_h"] == "127.0.0.3")
    # The refused member's one message, answered by the notification.
    assert refused["messages"] == 1, refused
    assert refused["id.resp_h"] == "127.0.0.1" and refused["id.resp_p"] == 848
    findings = [json.loads(l) for l in (out / "findings.log").read_text().splitlines()]
    assert [f["code"] for f in findings] == ["gdoi-registration-refused"], findings
    assert findings[0]["frames"] == [refused["last_frame"]]
    assert "answered by a notification" in findings[0]["msg"]
