"""Run gander's MMS peers as subprocesses: configs, READY handshake, event logs, clean stop."""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tls_table(pki: str | None, role: str, version: str | None = None, suite: str | None = None,
              backend: str = "openssl", pin: bool = True, cert: str | None = None, key: str | None = None,
              ca: str | None = None, crl: str | None = None, extra: str = "") -> str:
    if pki is None:
        return ""
    peer = "client" if role == "server" else "server"
    lines = ["[tls]", f'backend = "{backend}"', f'ca = "{ca or pki + "/ca.pem"}"',
             f'cert = "{cert or f"{pki}/{role}.pem"}"', f'key = "{key or f"{pki}/{role}.key"}"',
             "session_resumption = false", "io_timeout_ms = 3000"]
    if pin:
        lines.append(f'peer_cert = "{pki}/{peer}.pem"')
    if version:
        lines.append(f'versions = ["{version}"]')
    if suite:
        lines.append(f'cipher_suites = ["{suite}"]')
    if crl:
        lines.append(f'crl = "{crl}"')
    if extra:
        lines.append(extra)
    return "\n".join(lines) + "\n"


class ServerProcess:
    """A gander server in a subprocess: `addr`, `host` and `port` once it printed READY."""

    def _start(self, argv: list[str], seconds: float = 10.0) -> None:
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addr = None
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            r, _, _ = select.select([self.p.stdout], [], [], 0.2)
            if r:
                line = self.p.stdout.readline()
                if line.startswith("READY "):
                    self.addr = line.split()[1]
                    break
                if not line:
                    break
        if self.addr is None:
            self.p.kill()
            out, err = self.p.communicate(timeout=5)
            raise AssertionError(f"gander {' '.join(argv[1:3])} not READY: {err}")
        self.host, port = self.addr.rsplit(":", 1)
        self.port = int(port)

    def stop(self) -> tuple[int, str, str]:
        """SIGTERM; returns (exit code, stdout, stderr). The server must exit cleanly and quickly."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            out, err = self.p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            out, err = self.p.communicate()
            raise AssertionError("gander server did not stop within 10 s of SIGTERM")
        return self.p.returncode, out, err


class SclServer(ServerProcess):
    """`gander mms server ARGS...` serving an SCL model (`--scl FILE` or a config naming one),
    on the loopback port it prints in READY. A relay-sized model takes longer to start."""

    def __init__(self, gander: str, *args: str, seconds: float = 30.0):
        self._start([gander, "mms", "server", *args], seconds)


class GanderServer(ServerProcess):
    """`gander mms server` in a subprocess; `addr` once READY is printed."""

    def __init__(self, gander: str, workdir: Path, tls: str = "", period_ms: int = 20, size: int = 125,
                 listen: str = "127.0.0.1:0", timeout_ms: int = 3000, prefix: tuple[str, ...] = ()):
        """`prefix` goes before the command, e.g. `("ip", "netns", "exec", NS)`."""
        self.cfg = workdir / "server.toml"
        self.events = workdir / "server-events.jsonl"
        self.cfg.write_text(f'listen = "{listen}"\nevents = "{self.events}"\ntimeout_ms = {timeout_ms}\n'
                            f"[reports]\nperiod_ms = {period_ms}\nsize = {size}\n" + tls)
        self._start([*prefix, gander, "mms", "server", "--config", str(self.cfg)])

    def event_log(self) -> list[dict]:
        return read_events(self.events)


def read_events(path: Path) -> list[dict]:
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def run_client(gander: str, workdir: Path, port: int, tls: str = "", connections: int = 1,
               reports: int = 10, gi: bool = True, timeout: float = 60, host: str = "127.0.0.1",
               name: str = "client", prefix: tuple[str, ...] = ()
               ) -> tuple[subprocess.CompletedProcess, dict | None, list[dict]]:
    cfg = workdir / f"{name}.toml"
    events = workdir / f"{name}-events.jsonl"
    cfg.write_text(f'connect = "{host}:{port}"\nevents = "{events}"\nconnections = {connections}\n'
                   f"reports = {reports}\ngi = {'true' if gi else 'false'}\ntimeout_ms = 5000\n"
                   f"report_timeout_ms = 5000\n" + tls)
    p = subprocess.run([*prefix, gander, "mms", "client", "--config", str(cfg)], capture_output=True, text=True,
                       timeout=timeout)
    summary = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            summary = json.loads(line)
    return p, summary, read_events(events)
