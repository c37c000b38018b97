#!/bin/bash
# summary.sh DIR REGION_LOG - session 17: what agents.py's krexd logs under
# DIR and krexd's region log say of drains and exiting processes: the drain
# acks by status (0 drained, 1 failed, 2 exiting), the exiting siblings
# judged at the settle, the exit waits, the outcomes and notes.
for f in "$1"/*.krexd.log; do
	[ -e "$f" ] || continue
	echo "==== $(basename "$f")"
	for s in 1 2; do echo "acks status $s: $(grep -c "acknowledged the drain after .* status $s\$" "$f")"; done
	echo "exiting at the drain: listed again $(grep -c 'process was exiting at its drain: the processes are listed again' "$f"), left the GPU $(grep -c 'was exiting at the drain and has left the GPU' "$f")"
	echo "exit waits: $(grep -c 'would make it degraded and are exiting' "$f"), gone $(grep -c 'exiting processes to leave its GPUs .*: gone' "$f"), outlived $(grep -c 'still on its GPUs after exit_wait' "$f")"
	grep -o 'waited [0-9]* us after the freeze for exiting processes' "$f" | awk '{print $2}' | sort -n |
		awk '{a[NR]=$1} END {if (NR) printf "exit wait us: n %d p50 %d p95 %d max %d\n", NR, a[int(NR*0.5+0.5)], a[int(NR*0.95+0.5)], a[NR]}'
done
echo "==== region log: regions $(wc -l <"$2"), clean $(grep -c '"outcome":"clean"' "$2")"
grep -o '"note":"[^"]*"' "$2" | sed 's/[0-9][0-9]*/N/g' | sort | uniq -c | sort -rn | head -8
