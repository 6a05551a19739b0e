#!/usr/bin/env python3
"""The cross targets' tests: wire, security library and gateway policy core, run under qemu-user.

    scripts/cross_test.py TRIPLE [--no-run] [-- libtest arguments]

One cargo command builds every test binary the target runs (`scripts/cross_cargo.sh TRIPLE test
--release --no-run`, selection `TESTS` below), so cargo resolves the features of the shared
crates once. Two commands, one for the wire and security tests and one for the gateway's, had
resolved them twice: the gateway's tree turns on `libc/extra_traits` (through nix) and syn's
`full` (through clap's derive), so the first command compiled serde, thiserror, OpenSSL's
bindings, the hashes, gander-wire and gander-sec once more for itself (259 s against 224 s for
the whole aarch64 compile from scratch, Intel Xeon, 2 vCPUs, 2026-11-28; docs/testing.md).
The selection equals the gateway binaries' features (`scripts/check_test_build.py`), so
`make dist`'s build of them reuses every crate.

The selection also builds the gateway's own integration tests (`--test it` names one target in
each of the three packages); they need network namespaces and the host's peers, so they are built
but not run here (`make test`'s native stage runs them). The others run one after another under
the target's runner from `.cargo/config.toml` (qemu-user), each in its package directory with
`CARGO_MANIFEST_DIR` set as cargo would; every binary runs even after a failure, whose output is
printed in full, and the exit status is 1 if any failed.
"""

import argparse
import os
import shlex
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_rust_tests import report, run_one, test_binaries  # noqa: E402  (one reading of cargo and libtest)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ["gander-wire", "gander-sec", "gander-gateway"]
TESTS = [a for p in PACKAGES for a in ("-p", p)] + ["--lib", "--test", "it"]
# Built but not run under qemu ("package directory:target kind:target name").
NOT_RUN = {"gateway:test:it"}


def runner(triple):
    """The `runner` of `[target.TRIPLE]` in .cargo/config.toml, as an argument list."""
    with open(os.path.join(ROOT, ".cargo", "config.toml"), "rb") as f:
        conf = tomllib.load(f)
    r = conf.get("target", {}).get(triple, {}).get("runner")
    if not r:
        sys.exit(f"cross_test: .cargo/config.toml has no runner for {triple}")
    return shlex.split(r) if isinstance(r, str) else list(r)


def build(triple):
    """Builds the test binaries; returns [(label, executable, manifest_dir, run)]."""
    cmd = [os.path.join(ROOT, "scripts", "cross_cargo.sh"), triple, "test", "-q", "--release",
           "--no-run", "--message-format=json-render-diagnostics"] + TESTS
    return [(label, exe, manifest, label not in NOT_RUN)
            for label, exe, manifest, _ in test_binaries(cmd, "cross_test")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("triple")
    ap.add_argument("--no-run", action="store_true", help="build the test binaries only")
    ap.add_argument("libtest", nargs="*", help="arguments for every test binary (after --)")
    a = ap.parse_args()

    bins = build(a.triple)
    run = [b for b in bins if b[3]]
    expected = {("wire", "lib"), ("wire", "test"), ("sec", "lib"), ("sec", "test"),
                ("gateway", "lib")}
    found = {tuple(label.split(":")[:2]) for label, _, _, _ in run}
    if found != expected:
        sys.exit(f"cross_test: expected test binaries {sorted(expected)}, cargo built "
                 f"{sorted(found)}")
    if a.no_run:
        print(f"cross_test: {a.triple}: {len(run)} test binaries built "
              f"({len(bins) - len(run)} more built for the selection, run natively)")
        return 0
    prefix = runner(a.triple)
    failed = []
    passed = 0
    with tempfile.TemporaryDirectory(prefix="gander-cross-tests-") as logdir:
        for label, exe, cwd, _ in run:
            job = (f"{a.triple} {label}", prefix + [exe] + a.libtest, cwd,
                   {"CARGO_MANIFEST_DIR": cwd})
            passed += report(*run_one(job, logdir), failed)
    print(f"cross_test: {a.triple}: {len(run)} binaries, {passed} tests passed"
          + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
