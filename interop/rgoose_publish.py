#!/usr/bin/env python3
"""Capture libiec61850's R-GOOSE publisher output, one capture per security mode.

For each mode this drives libiec61850 1.6.1 (pyiec61850-ng wheel, through ctypes) to publish N GOOSE
messages over an RSession to a UDP socket that this script binds on 127.0.0.1, receives the exact UDP
payloads, and writes:

  DIR/<mode>.pcap        Ethernet/IPv4/UDP (dst port 102) frames around the captured payloads
  DIR/<mode>.keys.toml   gander key file for the mode (for "none": all the harness's keys)
  DIR/<mode>.meta.json   what was published: appId, gocbRef, key, and per frame stNum/sqNum/values

Usage: python interop/rgoose_publish.py --mode hmac-sha256-128 --count 20 --out DIR
       python interop/rgoose_publish.py --all --count 20 --out DIR
"""
from __future__ import annotations

import argparse
import ctypes as C
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import iec  # noqa: E402
import pcap  # noqa: E402
from libout import quiet_stdout  # noqa: E402
from modes import MODES, Mode, keyring_toml  # noqa: E402

APP_ID = 0x1000
GOCB_REF = "simpleIOGenericIO/LLN0$GO$gcbAnalogValues"
DATSET_REF = "simpleIOGenericIO/LLN0$AnalogValues"
GO_ID = "simpleIOGenericIO/LLN0$GO$gcbAnalogValues"
CONF_REV = 1
TAL_MS = 2000
# A new state every STATE_EVERY messages, i.e. stNum/sqNum and the values all change.
STATE_EVERY = 4


def values_for(state: int) -> list:
    """Data set values for a state: INT32, BOOLEAN, FLOAT32 (exactly representable)."""
    return [1000 + 7 * state, state % 2 == 1, 0.25 * state]


def publish(mode: Mode, count: int, *, app_id: int = APP_ID, timeout: float = 2.0) -> dict:
    """Publish `count` messages in `mode`; return the captured payloads and what was sent."""
    L = iec.lib()
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(timeout)
    port = rx.getsockname()[1]

    session = L.RSession_create()
    if not session:
        raise RuntimeError("RSession_create failed")
    key_buf = None
    pub = None
    try:
        # Bind the publisher's own socket to an ephemeral loopback port (its default is 102).
        _check(L.RSession_setLocalAddress(session, b"127.0.0.1", 0), "RSession_setLocalAddress")
        _check(L.RSession_setRemoteAddress(session, b"127.0.0.1", port), "RSession_setRemoteAddress")
        if mode.secured:
            raw = mode.key_ascii.encode()
            key_buf = (C.c_uint8 * len(raw)).from_buffer_copy(raw)  # kept alive until destroy
            _check(L.RSession_addKey(session, mode.key_id, key_buf, len(raw), mode.sec, mode.sig),
                   "RSession_addKey")
            _check(L.RSession_setActiveKey(session, mode.key_id), "RSession_setActiveKey")
        _check(L.RSession_start(session), "RSession_start")

        pub = L.GoosePublisher_createRemote(session, app_id)
        if not pub:
            raise RuntimeError("GoosePublisher_createRemote failed")
        L.GoosePublisher_setGoCbRef(pub, GOCB_REF.encode())
        L.GoosePublisher_setDataSetRef(pub, DATSET_REF.encode())
        L.GoosePublisher_setGoID(pub, GO_ID.encode())
        L.GoosePublisher_setConfRev(pub, CONF_REV)
        L.GoosePublisher_setTimeAllowedToLive(pub, TAL_MS)

        frames, payloads, stamps = [], [], []
        st_num, sq_num = 1, 0
        L.GoosePublisher_setStNum(pub, st_num)
        L.GoosePublisher_setSqNum(pub, sq_num)
        for i in range(count):
            state = i // STATE_EVERY
            if i and i % STATE_EVERY == 0:
                L.GoosePublisher_increaseStNum(pub)  # stNum + 1, sqNum = 0; returns a timestamp (ms)
                st_num += 1
                sq_num = 0
            vals = values_for(state)
            lst = L.LinkedList_create()
            L.LinkedList_add(lst, L.MmsValue_newIntegerFromInt32(vals[0]))
            L.LinkedList_add(lst, L.MmsValue_newBoolean(vals[1]))
            L.LinkedList_add(lst, L.MmsValue_newFloat(vals[2]))
            rc = L.GoosePublisher_publish(pub, lst)
            L.LinkedList_destroyDeep(lst, C.cast(L.MmsValue_delete, C.c_void_p))
            if rc != 0:
                raise RuntimeError(f"GoosePublisher_publish returned {rc} (mode {mode.name})")
            data, _addr = rx.recvfrom(65535)
            stamps.append(time.time())
            payloads.append(data)
            frames.append({"index": i, "st_num": st_num, "sq_num": sq_num, "values": vals,
                           "spdu_number": int.from_bytes(data[10:14], "big") if len(data) >= 14 else None})
            sq_num += 1
        return {"payloads": payloads, "timestamps": stamps, "frames": frames, "port": port}
    finally:
        if pub:
            L.GoosePublisher_destroy(pub)
        L.RSession_destroy(session)
        rx.close()
        del key_buf


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"{what} failed: RSessionError {rc}")


def write_outputs(mode: Mode, result: dict, out_dir: str) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, mode.name)
    pcap.write_udp_pcap(base + ".pcap", result["payloads"], result["timestamps"])
    with open(base + ".keys.toml", "w") as f:
        if mode.secured:
            f.write(f"# libiec61850 R-GOOSE mode {mode.name}\n\n" + mode.key_toml())
        else:
            f.write(keyring_toml())
    meta = {
        "mode": mode.name, "key_id": mode.key_id, "enc": mode.enc, "mac": mode.mac,
        "key_ascii": mode.key_ascii, "app_id": APP_ID, "gocb_ref": GOCB_REF, "dat_set": DATSET_REF,
        "go_id": GO_ID, "conf_rev": CONF_REV, "library": "libiec61850 1.6.1 (pyiec61850-ng 1.6.1.10)",
        "frames": result["frames"],
    }
    with open(base + ".meta.json", "w") as f:
        json.dump(meta, f, indent=1)
    return {"pcap": base + ".pcap", "keys": base + ".keys.toml", "meta": base + ".meta.json",
            "frames": len(result["payloads"])}


def generate(mode_name: str, count: int, out_dir: str) -> dict:
    mode = MODES[mode_name]
    return write_outputs(mode, publish(mode, count), out_dir)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--mode", choices=list(MODES))
    g.add_argument("--all", action="store_true", help="every mode")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--out", required=True)
    ap.add_argument("--lib-log", help="append libiec61850's debug output to this file (default: discard)")
    args = ap.parse_args(argv)
    names = list(MODES) if args.all else [args.mode]
    with quiet_stdout(args.lib_log) as out:
        for name in names:
            info = generate(name, args.count, args.out)
            out.write(json.dumps({"mode": name, **info}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
