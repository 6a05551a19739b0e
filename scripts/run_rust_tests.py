#!/usr/bin/env python3
"""`make test`'s Rust stage: every test binary of the workspace, several at a time.

`cargo test` runs the test binaries one after another. Most of gander's slow binaries wait
rather than compute (strongSwan's daemon timers, network namespaces, TLS peers, the gateway
benchmark's smoke run: about 220 s of wall time for about 90 CPU-seconds on the development
machine, docs/testing.md), so running them side by side shortens the stage without asking more
of the CPU than it has. Each binary still runs its own tests on its own test threads, with the
working directory and `CARGO_MANIFEST_DIR` cargo would give it.

    scripts/run_rust_tests.py [--jobs N] [-- extra cargo test arguments]

1. `cargo test --workspace --release --no-run` builds every test binary (one build, as before)
   and names each executable (`--message-format=json-render-diagnostics`).
2. The binaries run JOBS at a time (default: CPUs + 2), the longest first: by the wall time each
   took in the last run on this checkout (`target/rust-test-times.tsv`), otherwise integration
   binaries (`tests/`) before unit-test binaries, which are fast by design.
3. The doc tests (`cargo test --doc`) run as one more job.

Each binary's output is kept and printed in full when it fails; every binary runs even after a
failure, and the exit status is 1 if any failed (as `cargo test --no-fail-fast`).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def target_dir():
    return os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")


def times_file():
    return os.path.join(target_dir(), "rust-test-times.tsv")


def build(extra):
    """Builds every test binary; returns [(label, executable, manifest_dir, is_integration)]."""
    return test_binaries(["cargo", "test", "--workspace", "--release", "--no-run",
                          "--message-format=json-render-diagnostics"] + extra, "run_rust_tests")


def test_binaries(cmd, who):
    """Runs `cmd`, a `cargo test --no-run --message-format=json-render-diagnostics`; returns
    its test binaries as [(label "crate:kind:name", executable, manifest_dir, is_integration)].
    Exits naming `who` and the command if cargo fails. `scripts/cross_test.py` uses it too."""
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    bins = []
    for line in p.stdout:
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        if m.get("reason") != "compiler-artifact" or not m.get("executable"):
            continue
        if not m.get("profile", {}).get("test"):
            continue
        t = m["target"]
        manifest = os.path.dirname(m["manifest_path"])
        crate = os.path.basename(manifest)
        kind = "lib" if "lib" in t["kind"] else t["kind"][0]
        label = f"{crate}:{kind}:{t['name']}"
        bins.append((label, m["executable"], manifest, "test" in t["kind"]))
    if p.wait() != 0:
        sys.exit(f"{who}: `{' '.join(cmd)}` failed")
    return bins


def last_times():
    try:
        with open(times_file()) as f:
            return {k: float(v) for k, v in (l.rstrip("\n").split("\t") for l in f if "\t" in l)}
    except (OSError, ValueError):
        return {}


def run_one(job, logdir):
    label, argv, cwd, env_extra = job
    env = dict(os.environ, **env_extra)
    log = os.path.join(logdir, label.replace("/", "_").replace(":", "_") + ".log")
    t0 = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.call(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    dt = time.monotonic() - t0
    with open(log) as f:
        text = f.read()
    summary = [l for l in text.splitlines() if l.startswith("test result:")]
    return label, rc, dt, text, summary


def report(label, rc, dt, text, summary, failed):
    """Prints one binary's line (and its whole output if it failed, adding it to `failed`);
    returns the number of tests its summaries say passed. `scripts/cross_test.py` uses it too."""
    passed = 0
    for s in summary:
        try:
            passed += int(s.split(" passed")[0].split()[-1])
        except (ValueError, IndexError):
            pass
    state = "ok" if rc == 0 else f"FAILED (exit {rc})"
    print(f"{state:>6}  {dt:6.1f} s  {label}  {'; '.join(summary)}", flush=True)
    if rc != 0:
        failed.append(label)
        print(text, flush=True)
    return passed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=(os.cpu_count() or 2) + 2)
    ap.add_argument("extra", nargs="*", help="extra arguments for cargo test (after --)")
    a = ap.parse_args()

    t_start = time.monotonic()
    bins = build(a.extra)
    t_built = time.monotonic()
    hist = last_times()
    jobs = [(label, [exe], cwd, {"CARGO_MANIFEST_DIR": cwd})
            for label, exe, cwd, _ in bins]
    jobs.append(("doc-tests", ["cargo", "test", "--workspace", "--release", "--doc", "-q"] + a.extra,
                 ROOT, {}))
    integration = {label for label, _, _, is_it in bins if is_it}
    # Longest first (last run's wall time); with no history, integration binaries first.
    jobs.sort(key=lambda j: (-hist.get(j[0], 0.0), j[0] not in integration, j[0]))

    failed = []
    times = {}
    passed = 0
    with tempfile.TemporaryDirectory(prefix="gander-rust-tests-") as logdir, \
            ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futures = [pool.submit(run_one, j, logdir) for j in jobs]
        for fut in as_completed(futures):
            label, rc, dt, text, summary = fut.result()
            times[label] = dt
            passed += report(label, rc, dt, text, summary, failed)
    try:
        with open(times_file(), "w") as f:
            for k, v in sorted(times.items()):
                f.write(f"{k}\t{v:.2f}\n")
    except OSError:
        pass
    total = time.monotonic()
    print(f"run_rust_tests: {len(jobs)} jobs, {passed} tests passed, build {t_built - t_start:.0f} s, "
          f"run {total - t_built:.0f} s on {a.jobs} lanes"
          + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
