#!/usr/bin/env bash
# Refuses to start `make test` when the file system of the target directory has less free space
# than a clean clone's test run writes (about 7 GB: the release and test builds, the aarch64
# build and the interop suite's files; docs/testing.md). Without this check a full disk shows up
# twenty minutes in as a linker killed by SIGBUS or a truncated object file, which reads like a
# toolchain fault.
set -euo pipefail
dir=${1:?directory}
need_gib=${GANDER_MIN_FREE_GIB:-8}
mkdir -p "$dir"
avail_kib=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
avail_gib=$((avail_kib / 1024 / 1024))
if [ "$avail_gib" -lt "$need_gib" ]; then
	echo "make test: only ${avail_gib} GiB free on the file system of $dir; a clean run needs about ${need_gib} GiB" >&2
	echo "make test: free space (old clones, target/debug, cargo clean) or set GANDER_MIN_FREE_GIB" >&2
	exit 1
fi
echo "== make test: ${avail_gib} GiB free for $dir (${need_gib} GiB needed)"
