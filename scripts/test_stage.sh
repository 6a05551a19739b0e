#!/usr/bin/env bash
# Marks the start of a `make test` stage: appends "<epoch seconds> <name>" to out/test-stages.log
# and prints how long the previous stage took, so the suite's time budget can be watched per stage.
set -euo pipefail
name=${1:?stage name}
log=out/test-stages.log
mkdir -p out
now=$(date +%s)
if [ "$name" = begin ]; then : > "$log"; fi
if [ -s "$log" ]; then
	read -r t prev < <(tail -n 1 "$log")
	echo "== make test: $prev took $((now - t)) s"
fi
echo "$now $name" >> "$log"
if [ "$name" = end ]; then
	read -r t0 _ < <(head -n 1 "$log")
	echo "== make test: total $((now - t0)) s (stages in $log)"
fi
