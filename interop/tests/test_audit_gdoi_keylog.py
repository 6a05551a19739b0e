"""`gander audit --ike-keylog` on a GDOI capture made here: `gander kdc --keylog` and a
`gander gdoi register --follow` member in a network namespace of their own (loopback only),
recorded by dumpcap. The group's keys live 4 s, so the key server pushes the next TEK (GROUPKEY-PUSH,
signed, under the KEK the registration handed out) every few seconds while the member follows. The
audit, given the key server's key log, must name the group and member, the SEQ each registration
handed out, exactly the SEQs, new key ids and withdrawn key ids of the pushes the key server's
events name, every key id the member printed, with its algorithm; without the key log it must see
none of that. No finding of the key-management kind is expected, and no key
octet may appear in any output.
"""
from __future__ import annotations

import json
import subprocess

from test_audit_gdoi import netns_or_skip

PSK = "00112233445566778899aabbccddeeff"

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
lifetime_s = 4
activation_delay_s = 0
overlap_s = 1

[[member]]
identity = "ied-1"
address = "127.0.0.2"
psk_hex = "{psk}"
groups = ["goose-1"]
push = "127.0.0.2:1849"
"""

SCRIPT = """
set -e
ip link set lo up
dumpcap -q -i lo -f "udp port 848" -w {pcap} &
D=$!
for i in $(seq 50); do [ -s {pcap} ] && break; sleep 0.1; done
sleep 0.5
{gander} kdc --config {conf} --keylog {work}/kdc.keylog > {work}/kdc.log 2>&1 &
K=$!
sleep 0.5
{gander} gdoi register --server 127.0.0.1:848 --group goose-1 --identity ied-1 \
  --psk-hex {psk} --bind 127.0.0.2:848 --timeout 5 --follow 10 \
  --push-listen 127.0.0.2:1849 > {work}/reg.txt 2> {work}/reg.err
sleep 0.3
kill $K
sleep 0.5
kill -INT $D
wait $D
"""


def test_group_seq_and_key_ids_are_read_with_the_key_servers_key_log(gander, tmp_path):
    netns_or_skip()
    conf = tmp_path / "kdc.toml"
    conf.write_text(KDC.format(state=tmp_path / "state.toml", psk=PSK))
    pcap = tmp_path / "gdoi.pcapng"
    script = SCRIPT.format(gander=gander, conf=conf, pcap=pcap, work=tmp_path, psk=PSK)
    r = subprocess.run(["unshare", "-n", "bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr + (tmp_path / "reg.err").read_text()
    keys = [json.loads(l) for l in (tmp_path / "reg.txt").read_text().splitlines() if l.startswith("{")]
    assert len(keys) >= 2, keys  # the registration's key and at least one pushed key
    printed = [k["key_id"] for k in keys]
    secrets = [k.get("integrity_key_hex") or k.get("key_hex") for k in keys]

    out = tmp_path / "audit"
    a = subprocess.run(
        [gander, "audit", str(pcap), "--ike-keylog", str(tmp_path / "kdc.keylog"), "--out", str(out)],
        capture_output=True, text=True, timeout=60)
    assert a.returncode in (0, 3, 4, 5), a.stdout + a.stderr
    lines = [json.loads(l) for l in (out / "gdoi.log").read_text().splitlines()]
    pulls = [l for l in lines if l["exchange"] == "GROUPKEY-PULL"]
    pushes = [l for l in lines if l["exchange"] == "GROUPKEY-PUSH"]
    # The member registers, then again before its newest key's lifetime ends (renewal), while
    # the key server pushes each next key: one rekey SA, one or more registrations.
    assert len(pulls) >= 1 and len(pushes) == 1, lines
    push = pushes[0]
    for pull in pulls:
        assert pull["outcome"] == "completed" and pull["decrypted"] == 4, pull
        assert pull["group"] == "key-id:goose-1" and pull["member_id"] == "ied-1", pull
        assert pull["kek_spi"] == push["spi"], (pull, push)
        assert all(a.endswith(":hmac-sha256-128/none") for a in pull["tek_algorithms"]), pull
    first = pulls[0]
    assert first["tek_key_ids"] == printed[:1], (first, printed)
    assert first["tek_algorithms"] == [f"{printed[0]}:hmac-sha256-128/none"], first
    assert push["group"] == "key-id:goose-1", push
    seqs = push["seqs"]
    assert seqs == sorted(set(seqs)) and seqs[0] > first["seq"], (first, push)
    assert push["decrypted"] == push["messages"] == len(seqs), push
    assert push["seq"] == seqs[-1], push
    # A later registration hands out the SEQ the pushes had reached.
    assert [p["seq"] for p in pulls] == sorted(p["seq"] for p in pulls), pulls
    # The key server's own events say what it pushed: each rekey's SEQ and key id, each
    # withdrawal's SEQ and key ids, in order. The audit read exactly those.
    events = [json.loads(l) for l in (tmp_path / "kdc.log").read_text().splitlines() if l.startswith("{")]
    pushed = [e for e in events if e["event"] in ("rekey", "keys-withdrawn")]
    assert seqs == [int(e["seq"]) for e in pushed], (push, pushed)
    assert push["tek_key_ids"] == [int(e["keyId"]) for e in pushed if e["event"] == "rekey"], push
    withdrawn = [int(k) for e in pushed if e["event"] == "keys-withdrawn" for k in e["keyIds"].split(",")]
    assert push.get("deleted_key_ids", []) == withdrawn, (push, pushed)
    # Every key the member printed was read, from a registration or a push (the member may
    # stop following before the last push it is sent).
    read = {k for p in pulls for k in p["tek_key_ids"]} | set(push["tek_key_ids"])
    assert set(printed) <= read, (pulls, push, printed)
    findings = [json.loads(l) for l in (out / "findings.log").read_text().splitlines()]
    assert [f for f in findings if f["code"].startswith("gdoi-")] == [], findings
    for name in ("gdoi.log", "findings.log", "audit.json", "report.html"):
        text = (out / name).read_text()
        for s in secrets:
            assert s and s not in text, name

    # Without the key log: the same exchanges, nothing read.
    plain = tmp_path / "plain"
    a = subprocess.run([gander, "audit", str(pcap), "--out", str(plain)], capture_output=True, text=True, timeout=60)
    lines = [json.loads(l) for l in (plain / "gdoi.log").read_text().splitlines()]
    assert len(lines) == len(pulls) + 1 and not any("group" in l or "seqs" in l for l in lines), lines
