#!/usr/bin/env python3
"""The layering rules of docs/architecture.md, checked on the real dependency graph.

Run by `make lint`. Reads `cargo metadata` (no network, no build) and fails with one line per
broken rule:

* each crate depends (normal dependencies) only on the gander crates its row allows: codecs
  know no crypto and no transport, the MMS core is sans-I/O, the gateway runs without the
  measurement platform, nothing depends on the CLI;
* the codec crates (wire, mms) pull in no cryptography, TLS or system-call crate;
* no library crate returns `Result<_, String>` (errors are typed: `thiserror` enums);
* no crate holds more than a quarter of the Rust code.
"""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# crate -> the gander crates it may depend on (normal dependencies). Keep in step with the
# table in docs/architecture.md.
ALLOWED = {
    "gander-wire": set(),
    "gander-sec": {"gander-wire"},
    "gander-mms": {"gander-wire"},
    "gander-gnutls": set(),
    "gander-tls": {"gander-gnutls"},
    "gander-lab": set(),
    "gander-scl": set(),
    "gander-capture": {"gander-wire"},
    "gander-gateway": {"gander-wire", "gander-sec", "gander-gdoi"},
    "gander-measure": set(),
    "gander-client": {"gander-mms", "gander-tls", "gander-wire", "gander-measure"},
    "gander-peers": {"gander-client", "gander-measure", "gander-mms", "gander-tls", "gander-scl", "gander-wire"},
    "gander-probe": {"gander-client", "gander-mms", "gander-tls", "gander-measure", "gander-wire",
                     "gander-scl"},
    "gander-platform": {"gander-measure", "gander-peers", "gander-tls", "gander-lab", "gander-gnutls"},
    "gander-testkit": {"gander-wire", "gander-sec", "gander-lab"},
    "gander-gdoi": {"gander-wire", "gander-sec"},
    "gander-bench": {"gander-measure", "gander-wire", "gander-sec", "gander-mms", "gander-tls",
                     "gander-peers", "gander-gateway", "gander-lab", "gander-testkit", "gander-scl",
                     "gander-audit", "gander-audit-live", "gander-gdoi"},
    "gander-audit": {"gander-wire", "gander-sec", "gander-measure", "gander-tls", "gander-scl",
                     "gander-gdoi"},
    "gander-audit-live": {"gander-audit", "gander-capture", "gander-gateway", "gander-sec"},
    "gander-cli": {"gander-wire", "gander-sec", "gander-mms", "gander-tls", "gander-lab",
                   "gander-gateway", "gander-measure", "gander-client", "gander-peers",
                   "gander-platform", "gander-bench", "gander-scl", "gander-probe",
                   "gander-audit", "gander-audit-live", "gander-capture", "gander-gdoi"},
}

# Codecs: no cryptography, no TLS, no system calls.
CODEC_CRATES = {"gander-wire", "gander-mms"}
CODEC_FORBIDDEN = re.compile(r"^(openssl.*|ring|rustls.*|aws-lc.*|aes.*|hmac|sha2|blake2|ghash|"
                             r"libc|nix|socket2|mio|tokio.*)$")

STRING_RESULT = re.compile(r"Result<[^;{]*,\s*String>")


def main() -> int:
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    problems = []
    lines = {}
    for p in meta["packages"]:
        name = p["name"]
        if name not in ALLOWED:
            problems.append(f"{name}: not in the layering table (scripts/check_layers.py, "
                            f"docs/architecture.md)")
            continue
        normal = [d for d in p["dependencies"] if d["kind"] is None]
        for d in normal:
            dn = d["name"]
            if dn.startswith("gander-") and dn not in ALLOWED[name]:
                problems.append(f"{name} depends on {dn}: not allowed by its layer")
            if name in CODEC_CRATES and CODEC_FORBIDDEN.match(dn):
                problems.append(f"{name} depends on {dn}: codecs know no crypto and no transport")
        for d in p["dependencies"]:
            if d["name"] == "gander-cli":
                problems.append(f"{name} depends on gander-cli: nothing depends on the CLI")
        src = pathlib.Path(p["manifest_path"]).parent
        n = 0
        for f in src.rglob("*.rs"):
            if "target" in f.parts:
                continue
            text = f.read_text()
            n += text.count("\n")
            # A crate's binaries (src/bin/) are front ends like the CLI: only library code must
            # return typed errors.
            rel = f.relative_to(src).parts
            is_lib = rel[:1] == ("src",) and rel[1:2] != ("bin",) and name != "gander-cli"
            if is_lib:
                for i, line in enumerate(text.splitlines(), 1):
                    if STRING_RESULT.search(line) and not line.lstrip().startswith("//"):
                        problems.append(f"{f.relative_to(ROOT)}:{i}: `Result<_, String>` in a "
                                        f"library crate (use a thiserror enum)")
        lines[name] = n
    total = sum(lines.values())
    for name, n in sorted(lines.items()):
        if n * 4 > total:
            problems.append(f"{name}: {n} of {total} lines of Rust, more than a quarter")
    for line in problems:
        print(f"layering: {line}", file=sys.stderr)
    if not problems:
        biggest = max(lines, key=lines.get)
        print(f"layering: {len(lines)} crates follow their layers; largest {biggest} "
              f"{lines[biggest]} of {total} lines")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
