"""Capture layer-2 SV frames published by libiec61850's SVPublisher (IEC 61850-9-2).

libiec61850 1.6.1 from the ``pyiec61850-ng`` wheel (its ``pyiec61850.sv.SVPublisher``) publishes
a 9-2LE style stream (APPID 0x4000, one ASDU, eight INT32 values) on one end of a veth pair in a
network namespace this script creates; an AF_PACKET socket on the other end captures the frames
into a pcap. The captures are gander's reference SV frames (``crates/sec/tests/vectors``) and the
input of the tshark SV test. Needs root (namespaces); the namespace is removed on exit.

Usage: .venv/bin/python interop/sv_capture.py OUT.pcap [COUNT]
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcap  # noqa: E402

NS = f"gandersv{os.getpid()}"
ETH_P_ALL = 0x0003


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True)


def capture_in_namespace(out: str, count: int) -> int:
    from pyiec61850.sv import SVPublisher

    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx.bind(("svb", 0))
    rx.settimeout(1.0)
    pub = SVPublisher("sva")
    pub.set_sv_id("GANDERMU01")
    pub.set_app_id(0x4000)
    pub.set_conf_rev(1)
    pub.set_smp_rate(4800)
    pub.set_num_entries(8)
    pub.start()
    frames = []
    for i in range(count):
        pub.publish_samples([1000 * (k + 1) + i for k in range(8)])
        time.sleep(0.001)
    pub.stop()
    deadline = time.time() + 2
    while len(frames) < count and time.time() < deadline:
        try:
            data = rx.recv(65535)
        except socket.timeout:
            break
        if len(data) >= 14 and data[12:14] == b"\x88\xba":
            frames.append(data)
    return pcap.write_pcap(out, frames)


def main() -> int:
    out = os.path.abspath(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    if os.environ.get("GANDER_SV_IN_NS") == "1":
        n = capture_in_namespace(out, count)
        print(f"{n} SV frames written to {out}")
        return 0 if n == count else 1
    ip("netns", "add", NS)
    try:
        ip("-n", NS, "link", "add", "sva", "type", "veth", "peer", "name", "svb")
        for dev in ("sva", "svb", "lo"):
            ip("-n", NS, "link", "set", dev, "up")
        env = dict(os.environ, GANDER_SV_IN_NS="1")
        r = subprocess.run(["ip", "netns", "exec", NS, sys.executable, os.path.abspath(__file__), out, str(count)],
                           env=env)
        return r.returncode
    finally:
        subprocess.run(["ip", "netns", "del", NS], check=False)


if __name__ == "__main__":
    sys.exit(main())
