"""Fixtures for gander's interop tests: the gander binary, live libiec61850 captures, runners.

Tests that need the gander CLI FAIL (not skip) when it is missing: `make test` builds it first.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INTEROP = REPO / "interop"
sys.path.insert(0, str(INTEROP))

from modes import MODES  # noqa: E402

PY = sys.executable
FRAMES = 20  # messages per libiec61850 capture


GOLDEN_FRAMES = REPO / "crates" / "sec" / "tests" / "vectors" / "golden_frames.txt"


def golden_frames() -> dict[str, dict[str, str]]:
    """The records of the repository's golden-frame file (provenance in its header), by Name.

    Format: `Name = value` lines, records separated by blank lines, `#` comments (the same reader
    as crates/sec/tests/golden/frames.rs)."""
    records, cur = {}, None
    for i, raw in enumerate(GOLDEN_FRAMES.read_text().splitlines(), 1):
        line = raw.strip()
        if not line:
            cur = None
            continue
        if line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        assert sep, f"{GOLDEN_FRAMES}:{i}: not `Name = value`"
        if cur is None:
            cur = {}
        cur[key.strip()] = value.strip()
        if key.strip() == "Name":
            assert cur["Name"] not in records, f"{GOLDEN_FRAMES}:{i}: duplicate Name"
            records[cur["Name"]] = cur
    return records


@pytest.fixture(scope="session")
def gander() -> str:
    path = Path(os.environ.get("GANDER") or REPO / "target" / "release" / "gander")
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"gander binary not found at {path}: run `make build` (or set GANDER=/path/to/gander)")
    return str(path)


@pytest.fixture(scope="session")
def captures(tmp_path_factory) -> dict:
    """Every libiec61850 mode published live: mode -> {pcap, keys, meta}."""
    out = tmp_path_factory.mktemp("libiec61850")
    run([PY, str(INTEROP / "rgoose_publish.py"), "--all", "--count", str(FRAMES), "--out", str(out)], check=True)
    caps = {}
    for name in MODES:
        meta = json.loads((out / f"{name}.meta.json").read_text())
        caps[name] = {"pcap": out / f"{name}.pcap", "keys": out / f"{name}.keys.toml", "meta": meta}
    return caps


def run(cmd, *, check=False, timeout=120) -> subprocess.CompletedProcess:
    cmd = [str(c) for c in cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


class Verdicts:
    """Result of `gander frame verify --json`: exit code and the per-frame objects by index."""

    def __init__(self, proc: subprocess.CompletedProcess, cmd):
        self.proc = proc
        self.rc = proc.returncode
        self.cmd = " ".join(str(c) for c in cmd)
        self.by_index: dict[int, dict] = {}
        for line in proc.stdout.splitlines():
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise AssertionError(f"{self.cmd}: --json printed a line that is not JSON: {line!r} ({e})")
            if isinstance(obj, dict) and "index" in obj:
                self.by_index[int(obj["index"])] = obj

    def describe(self) -> str:
        return f"{self.cmd}\nexit {self.rc}\nstdout (tail):\n{self.proc.stdout[-2000:]}\nstderr (tail):\n{self.proc.stderr[-2000:]}"

    def require(self, n: int) -> list[dict]:
        missing = [i for i in range(n) if i not in self.by_index]
        assert not missing, f"no verdict for frames {missing[:20]}\n{self.describe()}"
        return [self.by_index[i] for i in range(n)]


def verify(gander: str, keys, capture, profile: str | None = "libiec61850") -> Verdicts:
    cmd = [gander, "frame", "verify", "--keys", keys]
    if profile:
        cmd += ["--profile", profile]
    cmd += ["--json", capture]
    return Verdicts(run(cmd), cmd)


def protect(gander: str, keys, key_id: int, src, dst, profile: str | None = "libiec61850"):
    cmd = [gander, "frame", "protect", "--keys", keys, "--key-id", key_id]
    if profile:
        cmd += ["--profile", profile]
    cmd += [src, dst]
    run(cmd, check=True)
    assert Path(dst).is_file(), f"gander frame protect wrote no {dst}"


def receive(capture, keys=None, extra=()) -> dict:
    cmd = [PY, INTEROP / "rgoose_receive.py", capture]
    if keys is not None:
        cmd += ["--keys", keys]
    cmd += list(extra)
    p = run(cmd, check=True)
    return json.loads(p.stdout)
