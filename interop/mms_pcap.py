"""A recorded TCP byte stream as a pcap with synthesized Ethernet/IPv4/TCP headers (3-way handshake,
correct sequence/acknowledgement numbers and checksums, FIN at the end), for tshark.

Also ``RecordingProxy``: a one-connection TCP relay that records what each side sent, in order.
"""
from __future__ import annotations

import socket
import struct
import threading

import pcap

CLIENT_IP = pcap.SRC_IP
SERVER_IP = pcap.DST_IP
MSS = 1460


def _tcp(src_ip, dst_ip, sport, dport, seq, ack, flags, payload=b"", ident=0):
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, 65535, 0, 0)
    pseudo = src_ip + dst_ip + struct.pack("!BBH", 0, 6, len(hdr) + len(payload))
    csum = pcap._csum(pseudo + hdr + payload)
    hdr = hdr[:16] + struct.pack("!H", csum) + hdr[18:]
    total = 20 + len(hdr) + len(payload)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, ident & 0xFFFF, 0x4000, 64, 6, 0, src_ip, dst_ip)
    ip = ip[:10] + struct.pack("!H", pcap._csum(ip)) + ip[12:]
    src_mac, dst_mac = (pcap.SRC_MAC, pcap.DST_MAC) if src_ip == CLIENT_IP else (pcap.DST_MAC, pcap.SRC_MAC)
    return dst_mac + src_mac + struct.pack("!H", pcap.ETHERTYPE_IPV4) + ip + hdr + payload


SYN, ACK, PSH, FIN = 0x02, 0x10, 0x08, 0x01


def write_tcp_session(path, chunks: list[tuple[int, bytes]], cport: int = 49152, sport: int = 102) -> int:
    """chunks: (0 = client->server | 1 = server->client, bytes), in order. Returns frames written."""
    frames = []
    cseq, sseq = 1000, 5000
    ident = 1

    def add(direction, flags, payload=b""):
        nonlocal cseq, sseq, ident
        if direction == 0:
            frames.append(_tcp(CLIENT_IP, SERVER_IP, cport, sport, cseq, sseq, flags, payload, ident))
            cseq += len(payload) + (1 if flags & (SYN | FIN) else 0)
        else:
            frames.append(_tcp(SERVER_IP, CLIENT_IP, sport, cport, sseq, cseq, flags, payload, ident))
            sseq += len(payload) + (1 if flags & (SYN | FIN) else 0)
        ident += 1

    # SYN, SYN-ACK, ACK (the SYN carries no ACK: acknowledgement field ignored)
    frames.append(_tcp(CLIENT_IP, SERVER_IP, cport, sport, cseq, 0, SYN, b"", ident))
    cseq += 1
    add(1, SYN | ACK)
    add(0, ACK)
    for d, data in chunks:
        for i in range(0, len(data), MSS):
            add(d, ACK | PSH, data[i:i + MSS])
    add(0, FIN | ACK)
    add(1, FIN | ACK)
    add(0, ACK)
    t0 = 1_700_000_000.0
    return pcap.write_pcap(path, [pcap.Packet(t0 + i * 0.0001, f) for i, f in enumerate(frames)])


class RecordingProxy:
    """Accepts one connection on 127.0.0.1:<port>, relays it to ``target`` and records both directions."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(1)
        self.port = self.ls.getsockname()[1]
        self.chunks: list[tuple[int, bytes]] = []
        self._lock = threading.Lock()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _pipe(self, a, b, direction):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                with self._lock:
                    self.chunks.append((direction, data))
                    b.sendall(data)
        except OSError:
            pass
        finally:
            try:
                b.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def _run(self):
        self.ls.settimeout(10)
        try:
            c, _ = self.ls.accept()
        except OSError:
            return
        s = socket.create_connection(self.target, timeout=10)
        t1 = threading.Thread(target=self._pipe, args=(c, s, 0), daemon=True)
        t2 = threading.Thread(target=self._pipe, args=(s, c, 1), daemon=True)
        t1.start(); t2.start()
        t1.join(15); t2.join(15)
        c.close(); s.close()

    def join(self, timeout=15):
        self._t.join(timeout)
        self.ls.close()
        with self._lock:
            return list(self.chunks)
