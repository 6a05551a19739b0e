"""Servers that misbehave on purpose, for the error paths of gander's MMS clients (`gander probe`,
later `gander run` with a `[target]`): each must end in a specific error within its time bound,
without a panic.

``Misbehaving(mode, upstream=None, after=1)`` listens on a free loopback port (``.port``) and, for
every connection:

- without ``upstream`` it reads what the client sends and, once it has ``after`` TPKT packets
  (1: the COTP CR), does ``mode``;
- with ``upstream`` (``(host, port)`` of a real server) it relays both ways until the client's
  ``after``-th TPKT packet (CR = 1, association request = 2, first confirmed request = 3), which it
  does not forward; then it does ``mode``.

Modes: ``close`` (FIN), ``garbage`` (answers with bytes that are no TPKT: an HTTP status line),
``malformed`` (a well-framed TPKT/COTP DT whose session PDU type does not exist), ``stall`` (keeps the
connection open and says nothing until the client leaves), ``ignore-conclude`` (with ``upstream``:
relays everything but the client's MMS conclude request, which it swallows, then stays silent, as
a server that never answers Conclude does; ``after`` is not used).
"""
from __future__ import annotations

import select
import socket
import threading

GARBAGE = b"HTTP/1.1 400 Bad Request\r\n\r\n"
# TPKT (03 00 len) + COTP DT (02 F0 80) + an SPDU of type 0xFF, which ISO 8327-1 does not define.
MALFORMED = bytes([0x03, 0x00, 0x00, 0x0B, 0x02, 0xF0, 0x80, 0xFF, 0x02, 0x00, 0x00])
MODES = ("close", "garbage", "malformed", "stall", "ignore-conclude")
# The MMS conclude-RequestPDU ([11] IMPLICIT NULL, ISO 9506-2 8.3.1) ends the presentation user data
# of the packet that carries it.
CONCLUDE = b"\x8b\x00"


class Misbehaving:
    def __init__(self, mode: str, upstream: tuple[str, int] | None = None, after: int = 1):
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} not in {MODES}")
        self.mode, self.upstream, self.after = mode, upstream, after
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._t = threading.Thread(target=self._accept, daemon=True)
        self._t.start()

    def _accept(self):
        self.sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            t = threading.Thread(target=self._serve, args=(c,), daemon=True)
            t.start()
            self._threads.append(t)

    def _misbehave(self, c: socket.socket):
        if self.mode == "garbage":
            c.sendall(GARBAGE)
        elif self.mode == "malformed":
            c.sendall(MALFORMED)
        if self.mode == "close":
            return
        # Hold the connection (stall), or let the client react to what it got.
        c.settimeout(0.1)
        while not self._stop.is_set():
            try:
                if c.recv(4096) == b"":
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def _serve(self, c: socket.socket):
        up = None
        try:
            if self.upstream:
                up = socket.create_connection(self.upstream, timeout=5)
            buf = b""
            packets = 0
            while not self._stop.is_set():
                socks = [c] + ([up] if up else [])
                r, _, _ = select.select(socks, [], [], 0.1)
                if up and up in r:
                    data = up.recv(65536)
                    if not data:
                        return
                    c.sendall(data)
                if c in r:
                    data = c.recv(65536)
                    if not data:
                        return
                    buf += data
                    # Count whole TPKT packets from the client (RFC 1006: 03 00 len16).
                    while len(buf) >= 4 and len(buf) >= int.from_bytes(buf[2:4], "big") > 0:
                        n = int.from_bytes(buf[2:4], "big")
                        pkt, buf = buf[:n], buf[n:]
                        packets += 1
                        if self.mode == "ignore-conclude":
                            if pkt.endswith(CONCLUDE):
                                self._misbehave(c)
                                return
                            up.sendall(pkt)
                            continue
                        if packets >= self.after:
                            self._misbehave(c)
                            return
                        if up:
                            up.sendall(pkt)
                    if buf and (buf[0] != 0x03 or (len(buf) >= 4 and buf[2:4] == b"\0\0")):
                        self._misbehave(c)  # not TPKT at all (a TLS ClientHello, say)
                        return
        except OSError:
            return
        finally:
            for s in (c, up):
                if s:
                    try:
                        s.close()
                    except OSError:
                        pass

    def close(self):
        self._stop.set()
        self._t.join(timeout=2)
        for t in self._threads:
            t.join(timeout=2)
        self.sock.close()
