#!/usr/bin/env bash
# Every fuzz target for SECONDS each (cargo-fuzz on stable, no sanitizer), JOBS at a time.
# PROFILE (third argument) is `release` (optimised, the default) or `dev`: unoptimised, with
# debug assertions and overflow checks, and about 180 CPU-seconds to build on this project's
# machine against 455 for `release` (docs/testing.md). `make test`'s smoke run uses
# `dev`: a few seconds per target find crashes, not depth; `make fuzz-smoke` fuzzes optimised.
#
# All targets are built in one cargo invocation (`cargo fuzz build`: one dependency graph,
# compiled once, both cores busy) and the binaries are then run directly, JOBS in parallel.
# `cargo fuzz run` per target re-checks the build for every target and runs them one by one.
# Any target that crashes (a finding, or a failed start) fails the script, with its output.
set -euo pipefail
SECONDS_EACH=${1:-10}
JOBS=${2:-$(nproc)}
PROFILE=${3:-release}
cd "$(dirname "$0")/../fuzz"
triple=$(rustc -vV | sed -n 's/^host: //p')
case $PROFILE in
release) cargo fuzz build -s none; bin=target/$triple/release ;;
# Without incremental state (CARGO_INCREMENTAL=0, unless the caller sets it): `make test`
# builds once from a clean clone, and writing the state cost 10 % of the build's CPU time
# (284 against 257 CPU-s from scratch, Intel Xeon, 2 vCPUs, 2026-11-28; docs/testing.md).
dev) CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0} cargo fuzz build -s none --dev; bin=target/$triple/debug ;;
*) echo "fuzz-smoke: PROFILE is release or dev, not $PROFILE" >&2; exit 2 ;;
esac
targets=$(cargo fuzz list)
for t in $targets; do
	mkdir -p "corpus/$t" "seeds/$t"
	test -x "$bin/$t" || { echo "fuzz-smoke: $bin/$t was not built" >&2; exit 1; }
done
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
run() {
	local t=$1
	if "$bin/$t" "corpus/$t" "seeds/$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 \
		>"$log/$t.out" 2>&1; then
		echo "$t: $(tail -n 1 "$log/$t.out")"
	else
		echo "fuzz-smoke: $t FAILED" >&2
		tail -n 40 "$log/$t.out" >&2
		return 1
	fi
}
export -f run
export bin log SECONDS_EACH
printf '%s\n' $targets | xargs -P "$JOBS" -I{} bash -c 'run {}'
echo "fuzz-smoke: $(printf '%s\n' $targets | wc -l) targets ($PROFILE build), ${SECONDS_EACH} s each, $JOBS at a time"
