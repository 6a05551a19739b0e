#!/usr/bin/env python3
"""A stand-in for `gander mms server|client --config F` that follows the peers' contract
(docs/mms-peers.md) closely enough to test the manager: READY line, event logs with
CLOCK_MONOTONIC stamps, `connections` handshakes then `reports` reports, a JSON summary.
No TLS and no MMS: a TCP connection and fixed-size messages. FAKE_PEER_FAIL=server makes the
server exit before READY."""
import json, os, signal, socket, sys, time, tomllib

def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)

def main():
    role, cfg_path = sys.argv[2], sys.argv[4]
    with open(cfg_path, "rb") as f:
        cfg = tomllib.load(f)
    ev = open(cfg["events"], "a", buffering=1)
    def emit(name, **kw):
        ev.write(json.dumps({"event": name, "t_ns": now(), **kw}) + "\n")
    if role == "server":
        period = cfg["reports"]["period_ms"] / 1000.0
        size = max(1, cfg["reports"]["size"])
    tls = "tls" in cfg
    if role == "server":
        if os.environ.get("FAKE_PEER_FAIL") == "server":
            print("fake server: refusing to start", file=sys.stderr)
            sys.exit(3)
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        print("READY %s:%d" % s.getsockname(), flush=True)
        seq = 0
        while True:
            c, _ = s.accept()
            hello = c.recv(64)
            c.sendall(b"ok")
            if hello.startswith(b"reports"):
                n = int(hello.split()[1])
                for _ in range(n):
                    emit("RT_START", conn=0, seq=seq)
                    c.sendall(b"x" * size + b"\n")
                    seq += 1
                    time.sleep(period)
            c.close()
    else:
        host, port = cfg["connect"].rsplit(":", 1)
        for i in range(cfg["connections"]):
            emit("HT_START", conn=i)
            c = socket.create_connection((host, int(port)))
            emit("TCP_UP", conn=i)
            if tls:
                time.sleep(0.0005)
                emit("TLS_UP", conn=i)
            c.sendall(b"hello")
            c.recv(2)
            emit("HT_END", conn=i)
            c.close()
        n = cfg["reports"]
        c = socket.create_connection((host, int(port)))
        c.sendall(b"reports %d" % n)
        c.recv(2)
        f = c.makefile("rb")
        for q in range(n):
            while f.readline() == b"":
                pass
            emit("RT_END", conn=0, seq=q)
        print(json.dumps({"connections": cfg["connections"], "reports": n}))

main()
