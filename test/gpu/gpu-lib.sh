# gpu-lib.sh - process helpers of the one-call GPU scripts (run-gpu.sh,
# settle.sh); source it.  PIDS: background jobs (process trees) to stop;
# KD: the krexd started.
PIDS=
KD=
# kill_tree PID: CONT and TERM to PID and its descendants (a frozen one too).
kill_tree() {
	local c
	for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
	kill -CONT "$1" 2>/dev/null
	kill -TERM "$1" 2>/dev/null
}
# stop_all: every tree in PIDS, KILL after 0.5 s.
stop_all() {
	local p
	for p in $PIDS; do kill_tree "$p"; done
	sleep 0.5
	for p in $PIDS; do kill -KILL "$p" 2>/dev/null; done
	wait $PIDS 2>/dev/null
	PIDS=
}
# krexd_down: TERM krexd, KILL after 5 s.
krexd_down() {
	[ -n "$KD" ] || return 0
	kill "$KD" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$KD" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$KD" 2>/dev/null
	wait "$KD" 2>/dev/null
	KD=
}
