#!/bin/bash
# The match loop's wake-ups a second in a running ITHF match: `timerd run --simulate` on its
# own state and runtime directories, started with timerctl, sampled for 20 s once the start
# signal has sounded (the loop thread's voluntary context switches, /proc). Each wake-up costs
# CPU (docs/BENCHMARKS.md, "CPU"); run it on a quiet machine: bench/wakeups.sh
set -eu
export STATE_DIRECTORY RUNTIME_DIRECTORY
STATE_DIRECTORY=$(mktemp -d) RUNTIME_DIRECTORY=$(mktemp -d)
python3 -m timerd run --simulate </dev/null >"$RUNTIME_DIRECTORY/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$STATE_DIRECTORY" "$RUNTIME_DIRECTORY"' EXIT
sleep 3
timerctl start >/dev/null
sleep 23  # the 20 s pre-signal lead (ITHF 4.4), then play
switches() { awk '/^voluntary_ctxt_switches/{print $2}' "/proc/$pid/task/$pid/status"; }
a=$(switches)
sleep 20
b=$(switches)
echo "wake-ups a second: $(echo "scale=2; ($b - $a) / 20" | bc)  (load $(cut -d' ' -f1 /proc/loadavg))"
