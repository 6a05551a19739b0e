#!/usr/bin/env bash
# Marks the start of a `make test` stage: appends "<epoch seconds> <name> <busy> <idle> <steal>"
# to out/test-stages.log and prints how long the previous stage took, so the suite's time budget
# can be watched per stage.
#
# busy, idle and steal are the machine's cumulative CPU time in clock ticks from /proc/stat
# (proc(5)): busy is user + nice + system + irq + softirq, idle is idle + iowait, steal the time
# the hypervisor ran something else while this VM had work. Per stage they say whether the stage
# kept both CPUs busy (a compile should; a stage that waits on peers leaves room for the
# background job) and how much of the host was taken by others: the same stages took 20-70 %
# longer on some days of the same machine kind (docs/testing.md), and steal is the one figure
# from inside the VM that shows a slower host.
set -euo pipefail
name=${1:?stage name}
log=out/test-stages.log
mkdir -p out
now=$(date +%s)
# cpu user nice system idle iowait irq softirq steal ...
read -r _ user nice system idle iowait irq softirq steal _ < /proc/stat
busy=$((user + nice + system + irq + softirq))
idle=$((idle + iowait))
# Percentages of the CPU time that passed between two marks.
usage() { # busy0 idle0 steal0 busy1 idle1 steal1
	local b=$(($4 - $1)) i=$(($5 - $2)) s=$(($6 - $3))
	local all=$((b + i + s))
	if ((all > 0)); then
		echo "CPU $((100 * b / all)) % busy, $((100 * i / all)) % idle, $((100 * s / all)) % stolen"
	else
		echo "CPU not measured"
	fi
}
if [ "$name" = begin ]; then : > "$log"; fi
if [ -s "$log" ]; then
	read -r t prev b0 i0 s0 _ < <(tail -n 1 "$log")
	echo "== make test: $prev took $((now - t)) s ($(usage "${b0:-$busy}" "${i0:-$idle}" "${s0:-$steal}" "$busy" "$idle" "$steal"))"
fi
echo "$now $name $busy $idle $steal" >> "$log"
if [ "$name" = end ]; then
	read -r t0 _ b0 i0 s0 _ < <(head -n 1 "$log")
	echo "== make test: total $((now - t0)) s ($(usage "$b0" "$i0" "$s0" "$busy" "$idle" "$steal"); stages in $log)"
fi
