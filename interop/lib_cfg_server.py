"""libiec61850 1.6.1 (pyiec61850-ng wheel, ctypes) serving the model of a configuration file, the
text form of an SCL IED that libiec61850's own model generator writes (`java -jar genconfig.jar
FILE.cid FILE.cfg`, tools/model_generator of mz-automation/libiec61850): the third server that
gander's and open61850's are compared with (interop/tests/test_open61850.py).

    python lib_cfg_server.py FILE.cfg [--port N]

loads the file with `ConfigFileParser_createModelFromConfigFileEx` (by name), serves it on 127.0.0.1 (a free
port unless given) and prints `READY 127.0.0.1:PORT` once listening; SIGTERM stops it. The values
stay as the file initialises them (no updates).

GPL library, external test peer only (see iec.py); the .cfg files under interop/fixtures/ are
genconfig's output for our own fixtures, not part of libiec61850.
"""
from __future__ import annotations

import argparse
import ctypes as C
import signal
import socket
import sys
import threading

import mms_iec


def _declare() -> C.CDLL:
    L = mms_iec._declare()
    for name, res, args in [
        ("ConfigFileParser_createModelFromConfigFileEx", C.c_void_p, [C.c_char_p]),
        ("IedServer_setLocalIpAddress", None, [C.c_void_p, C.c_char_p]),
    ]:
        fn = getattr(L, name)
        fn.restype, fn.argtypes = res, args
    return L


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cfg")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args(argv)
    L = _declare()
    model = L.ConfigFileParser_createModelFromConfigFileEx(a.cfg.encode())
    if not model:
        print(f"libiec61850 could not load {a.cfg}", file=sys.stderr)
        return 2
    server = L.IedServer_create(model)
    L.IedServer_setLocalIpAddress(server, b"127.0.0.1")
    port = a.port or free_port()
    L.IedServer_start(server, port)
    if not L.IedServer_isRunning(server):
        print(f"IedServer_start on 127.0.0.1:{port} failed", file=sys.stderr)
        return 1
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(f"READY 127.0.0.1:{port}", flush=True)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    L.IedServer_stop(server)
    L.IedServer_destroy(server)
    L.IedModel_destroy(model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
