#!/usr/bin/env bash
# A `make test` stage that runs beside the others: the aarch64 compile (docs/testing.md, "Builds
# beside waiting stages"). Most of the Rust test binaries' run and the interop suite wait on
# daemons, peers and timeouts, leaving the two vCPUs half idle; a compile started before them at
# the lowest priority takes that idle time and yields the CPU to every test process.
#
#   background.sh start NAME CMD...   run CMD under `nice -n 19`, output to out/NAME.log
#   background.sh wait NAME           wait for it; its log in full and its status if it failed
#   background.sh stop NAME           end it if it still runs (a failed `make test`)
set -euo pipefail
usage="usage: background.sh start NAME CMD... | wait NAME | stop NAME"
action=${1:?$usage}
name=${2:?$usage}
shift 2
mkdir -p out
log=out/$name.log
status=out/$name.status
pidfile=out/$name.pid
case $action in
start)
	[[ $# -gt 0 ]] || { echo "$usage" >&2; exit 2; }
	rm -f "$status"
	# Its own session and no terminal: make returns at once, and no descriptor of make's
	# output stays open in the job. A new session is also a new scheduling autogroup
	# (sched(7), "The autogroup feature"), and the kernel shares the CPU between autogroups
	# before it looks at nice values: the job's autogroup is set to nice 19 too, or it would
	# take half of the CPU from the stages it is meant to leave alone (measured: the x86 test
	# build went from about 275 to 469 s with the job at nice 19 in an autogroup at nice 0).
	setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null || true
		nice -n 19 "$@" >"$0" 2>&1 </dev/null; echo $? >"$0.status.tmp"; mv "$0.status.tmp" "${0%.log}.status"' \
		"$log" "$@" </dev/null >/dev/null 2>&1 &
	echo $! >"$pidfile"
	echo "== background $name started (pid $!, lowest priority, log $log)"
	;;
wait)
	[[ -e $pidfile ]] || { echo "background.sh: $name was not started" >&2; exit 2; }
	t0=$(date +%s)
	while [[ ! -e $status ]]; do
		if ! kill -0 "$(cat "$pidfile")" 2>/dev/null && [[ ! -e $status ]]; then
			sleep 1
			[[ -e $status ]] && break
			echo "background.sh: $name ended without a status (killed?); its log:" >&2
			cat "$log" >&2
			exit 1
		fi
		sleep 1
	done
	rc=$(cat "$status")
	echo "== background $name: waited $(($(date +%s) - t0)) s for it, exit status $rc"
	if [[ $rc != 0 ]]; then
		echo "background.sh: $name failed; its log:" >&2
		cat "$log" >&2
		exit "$rc"
	fi
	;;
stop)
	if [[ -e $pidfile && ! -e $status ]]; then
		pid=$(cat "$pidfile")
		# The job leads its own session: end the whole process group (cargo and its rustc).
		kill -TERM -- "-$pid" 2>/dev/null || true
		echo "== background $name stopped"
	fi
	;;
*)
	echo "$usage" >&2
	exit 2
	;;
esac
