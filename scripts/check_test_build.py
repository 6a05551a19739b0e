#!/usr/bin/env python3
"""`make test` compiles each crate once, and compiles nothing that runs no test.

Cargo unifies the features of a crate over everything one command builds, and a test build also
builds the dev-dependencies (proptest, tempfile, ...), which turn on features of crates the
normal build shares (bitflags' `std`, for one). A crate whose features differ between
`cargo build` and `cargo test` is compiled twice, and so is every crate above it: one such
feature once made the test stage recompile the whole workspace after the build stage
(docs/testing.md). The features the test build adds are declared for the normal build too
(gander-sec's Cargo.toml, "feature unification"); this check, run by `make lint`, fails with the
crate and the features when a new dependency brings such a difference back.

Compared with `cargo tree` (no build, no network) for the selections `make test` builds: the
workspace (build stage, then rust-tests), and for the cross target the gateway's binaries (dist)
against the one command that builds the wire, security and gateway tests
(`scripts/cross_test.py`, whose selection takes in the gateway, so the two must resolve alike
in both directions: the wire and security tests built alone once lacked two features the
gateway's tree turns on, and compiled their half of the tree twice).

Binaries without unit tests are marked `test = false` (the `gander` CLI, `gander-gateway`,
`gander-kdc`), so `cargo test` does not compile and link each again as an empty test harness;
the check fails if a test appears in one of them, which would then never run.
"""
from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cross_test import PACKAGES as CROSS_TESTED  # noqa: E402  (the cross tests' selection)

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINE = re.compile(r"^(\S+ v\S+)(?: \(.*?\))*(?: \[(.*)\])?$")
CROSS = ["--target", "aarch64-unknown-linux-gnu"]
# (what, the normal build's selection, the test build's selection).
SELECTIONS = [
    ("workspace", ["--workspace"], ["--workspace"]),
    ("gateway for aarch64", ["-p", "gander-gateway", *CROSS],
     [a for p in CROSS_TESTED for a in ("-p", p)] + CROSS),
]


def features(selection: list[str], edges: str) -> dict[str, set[str]]:
    """Package -> the union of its features over the tree of `selection` with `edges`."""
    out = subprocess.run(
        ["cargo", "tree", "--offline", *selection, "-e", edges, "--prefix", "none",
         "--format", "{p} [{f}]"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    seen: dict[str, set[str]] = {}
    for line in out.splitlines():
        line = line.replace(" (*)", "").replace(" (proc-macro)", "")
        m = LINE.match(line.strip())
        if not m:
            continue
        feats = {f for f in (m.group(2) or "").split(",") if f}
        seen.setdefault(m.group(1), set()).update(feats)
    return seen


def untested_targets_with_tests() -> list[str]:
    """Targets marked `test = false` whose sources hold a test (a `#[test]` or `#[cfg(test)]`)."""
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    found = []
    for pkg in meta["packages"]:
        for target in pkg["targets"]:
            if target.get("test", True) or "test" in target["kind"]:
                continue
            src = pathlib.Path(target["src_path"])
            # A `main.rs` or `lib.rs` root owns its directory's modules; src/bin/x.rs is one file.
            files = sorted(src.parent.rglob("*.rs")) if src.name in ("main.rs", "lib.rs") else [src]
            for f in files:
                text = f.read_text()
                if "#[test]" in text or "#[cfg(test)]" in text:
                    found.append(f"{pkg['name']}: {f.relative_to(ROOT)} has tests, but its target "
                                 f"`{target['name']}` is `test = false`: they would never run")
    return found


def main() -> int:
    problems = untested_targets_with_tests()
    for what, build_sel, test_sel in SELECTIONS:
        build = features(build_sel, "normal,build")
        test = features(test_sel, "normal,build,dev")
        for pkg in sorted(build.keys() & test.keys()):
            for only, where, fix in (
                    (test[pkg] - build[pkg], "test",
                     "declare them for the normal build (gander-sec's Cargo.toml, \"feature "
                     "unification\")"),
                    (build[pkg] - test[pkg], "normal",
                     "the test build's selection must take in what the normal build selects")):
                if only:
                    problems.append(f"{what}: {pkg} gets {', '.join(sorted(only))} only in the "
                                    f"{where} build: {fix}, or everything above it compiles "
                                    f"twice")
    for line in problems:
        print(f"test build: {line}", file=sys.stderr)
    if not problems:
        print(f"test build: build and test resolve alike ({', '.join(w for w, _, _ in SELECTIONS)}); "
              f"no test in a `test = false` target")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
