#!/usr/bin/env python3
"""Feed a capture's R-GOOSE payloads to libiec61850's R-GOOSE receiver and report what it accepted.

Drives libiec61850 1.6.1 (pyiec61850-ng wheel, ctypes): an RSession bound to 127.0.0.1:<free port>
holding the given keys, GooseReceiver_createRemote(session), one GooseSubscriber for the publisher's
gocbRef/appId whose listener records every message the library hands up. Each UDP payload starting
`01 40` in the capture is sent to the receiver's port; the script waits (per frame, up to --wait
seconds) for the listener, so every result is tied to the frame that produced it.

Prints one JSON object:
  {"sent": N, "received": M, "accepted": K, "valid": V, "frames": [{"index", "accepted", "valid",
   "st_num", "sq_num", "values", "parse_error"}...], ...}
"received"/"accepted" count listener calls; "valid" counts those where GooseSubscriber_isValid was true.

Keys: --keys FILE (gander TOML key file; `id`, `mac`, `enc`, `key`/`key_ascii`) and/or
--key ID:MODE:ASCII (MODE is a harness mode name such as aes-128-gcm). With no key the session has no
keys (libiec61850 then drops every secured packet, and -- as observed -- unsecured ones too).

Usage: python interop/rgoose_receive.py --keys K.toml [--app-id 0x1000] [--gocb-ref REF] FILE.pcap
"""
from __future__ import annotations

import argparse
import ctypes as C
import json
import os
import socket
import sys
import threading
import time
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import iec  # noqa: E402
import pcap  # noqa: E402
from libout import quiet_stdout  # noqa: E402
from modes import MODES  # noqa: E402
from rgoose_publish import APP_ID, GOCB_REF  # noqa: E402

SEC_CODES = {"none": iec.SEC_NONE, "aes-128-gcm": iec.SEC_AES_128_GCM, "aes-256-gcm": iec.SEC_AES_256_GCM}
SIG_CODES = {"none": iec.SIG_NONE, "hmac-sha256-80": iec.SIG_HMAC_SHA256_80,
             "hmac-sha256-128": iec.SIG_HMAC_SHA256_128, "hmac-sha256-256": iec.SIG_HMAC_SHA256_256,
             "aes-gmac-64": 4, "aes-gmac-128": 5}


def load_keys(path: str) -> list[tuple[int, bytes, int, int]]:
    """(id, key bytes, secAlgo, sigAlgo) for each `[[key]]` of a gander key file."""
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    out = []
    for k in doc.get("key", []):
        if "key" in k:
            raw = bytes.fromhex(k["key"])
        elif "key_ascii" in k:
            raw = k["key_ascii"].encode()
        elif "key_file" in k:
            kf = k["key_file"]
            if not os.path.isabs(kf):
                kf = os.path.join(os.path.dirname(os.path.abspath(path)), kf)
            with open(kf, "rb") as g:
                raw = g.read()
        else:
            raise ValueError(f"{path}: key {k.get('id')} has no key material")
        out.append((int(k["id"]), raw, SEC_CODES[k.get("enc", "none")], SIG_CODES[k.get("mac", "none")]))
    return out


def parse_key_arg(spec: str) -> tuple[int, bytes, int, int]:
    kid, mode, ascii_key = spec.split(":", 2)
    m = MODES[mode]
    return int(kid, 0), ascii_key.encode(), m.sec, m.sig


def receive(payloads: list[bytes], keys: list[tuple[int, bytes, int, int]], *, app_id: int = APP_ID,
            gocb_ref: str = GOCB_REF, wait: float = 0.15) -> dict:
    L = iec.lib()
    # Pick a free loopback port for the receiver's session.
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()

    events: list[dict] = []
    lock = threading.Condition()

    def on_message(sub, _param):
        ev = {
            "valid": bool(L.GooseSubscriber_isValid(sub)),
            "parse_error": int(L.GooseSubscriber_getParseError(sub)),
            "st_num": int(L.GooseSubscriber_getStNum(sub)),
            "sq_num": int(L.GooseSubscriber_getSqNum(sub)),
            "values": iec.mms_to_python(L.GooseSubscriber_getDataSetValues(sub)),
        }
        with lock:
            events.append(ev)
            lock.notify_all()

    callback = iec.GooseListener(on_message)  # must outlive the receiver
    key_bufs = []
    session = L.RSession_create()
    receiver = None
    try:
        rc = L.RSession_setLocalAddress(session, b"127.0.0.1", port)
        if rc != 0:
            raise RuntimeError(f"RSession_setLocalAddress failed: {rc}")
        for kid, raw, sec, sig in keys:
            buf = (C.c_uint8 * len(raw)).from_buffer_copy(raw)
            key_bufs.append(buf)
            rc = L.RSession_addKey(session, kid, buf, len(raw), sec, sig)
            if rc != 0:
                raise RuntimeError(f"RSession_addKey({kid}) failed: {rc}")
        receiver = L.GooseReceiver_createRemote(session)
        sub = L.GooseSubscriber_create(gocb_ref.encode(), None)
        L.GooseSubscriber_setAppId(sub, app_id)
        L.GooseSubscriber_setListener(sub, callback, None)
        L.GooseReceiver_addSubscriber(receiver, sub)  # the receiver owns the subscriber now
        L.GooseReceiver_start(receiver)
        deadline = time.monotonic() + 2.0
        while not L.GooseReceiver_isRunning(receiver):
            if time.monotonic() > deadline:
                raise RuntimeError("GooseReceiver_start: receiver did not start (port in use?)")
            time.sleep(0.005)

        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        frames = []
        for i, payload in enumerate(payloads):
            with lock:
                before = len(events)
            tx.sendto(payload, ("127.0.0.1", port))
            with lock:
                lock.wait_for(lambda: len(events) > before, timeout=wait)
                got = events[before:]
            rec = {"index": i, "accepted": bool(got)}
            if got:
                rec.update(got[-1])
                if len(got) > 1:
                    rec["callbacks"] = len(got)
            frames.append(rec)
        tx.close()
        L.GooseReceiver_stop(receiver)
    finally:
        if receiver:
            L.GooseReceiver_destroy(receiver)
        L.RSession_destroy(session)
    accepted = sum(1 for f in frames if f["accepted"])
    return {
        "library": "libiec61850 1.6.1 (pyiec61850-ng 1.6.1.10)",
        "port": port, "app_id": app_id, "gocb_ref": gocb_ref,
        "key_ids": [k[0] for k in keys],
        "sent": len(payloads), "received": len(events), "accepted": accepted,
        "valid": sum(1 for f in frames if f.get("valid")),
        "frames": frames,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("capture")
    ap.add_argument("--keys", help="gander key file (TOML)")
    ap.add_argument("--key", action="append", default=[], metavar="ID:MODE:ASCII")
    ap.add_argument("--app-id", type=lambda s: int(s, 0), default=APP_ID)
    ap.add_argument("--gocb-ref", default=GOCB_REF)
    ap.add_argument("--wait", type=float, default=0.15, help="seconds to wait for each frame's callback")
    ap.add_argument("--lib-log", help="append libiec61850's debug output to this file (default: discard)")
    args = ap.parse_args(argv)
    keys = (load_keys(args.keys) if args.keys else []) + [parse_key_arg(s) for s in args.key]
    payloads = pcap.rgoose_payloads(args.capture)
    with quiet_stdout(args.lib_log) as out:
        result = receive(payloads, keys, app_id=args.app_id, gocb_ref=args.gocb_ref, wait=args.wait)
        result["capture"] = args.capture
        out.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
