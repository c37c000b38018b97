#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The gate blocks launches while closed and passes them when open; the
# drain waits for queued work (no kernel of the process runs after the ack);
# the bounded queue (queue_cap by launch count, queue_time by GPU time)
# bounds that work.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
plan 22

# bounded_hog CAP US COUNTER MIN CMD...: start CMD (writing its launch count to
# COUNTER) under queue_cap CAP and queue_time US; once it made MIN launches,
# MAXQ = the deepest queue of kernels the mock GPU saw over 0.3 s; HOG = its pid.
bounded_hog() {
	page init "$1" "$2"
	c=$3 min=$4
	shift 4
	bg_gated "$@"
	HOG=$!
	wait_for 10 counter_ge "$c" "$min"
	"$FG" maxq reset
	sleep 0.3
	MAXQ=$("$FG" maxq)
}

# 1. a synchronous hog (2 ms kernels) is stopped by a closed gate
page init
bg_gated "$WL/krex-hog" 2000 --seconds 90 --sync --counter "$T/c1"
HOG=$!
ok "sync hog runs with the gate open" wait_for 10 counter_ge "$T/c1" 1
page close
ok "drain acknowledged" page wait-acks 1 5000
ok "no kernel runs while the gate is closed" stable 300
ok "the hog is waiting at the gate" [ "$(page get waits)" -ge 1 ]
page open
ok "kernels run again once the gate opens" grows 300
kill "$HOG"; wait "$HOG" 2>/dev/null

# 2. an async hog with a deep queue: the drain waits for all of it
page init
bg_gated "$WL/krex-hog" 2000 --seconds 90 --counter "$T/c2"
HOG=$!
wait_for 10 counter_ge "$T/c2" 200
sleep 0.3
page close
ok "drain of a deep queue acknowledged" page wait-acks 1 10000
# about 2 s of kernels queued: the drain answers at its deadline
# (drain_timeout), late, instead of waiting for all of it
nocap=$(page get drain_us)
ok "a drain behind 2 s of queued work answers by its deadline ($nocap us)" [ "$nocap" -lt 2500000 ]
ok "and says it is late (status $(page get ack_status))" [ "$(page get ack_status)" != 0 ]
page open
kill "$HOG"; wait "$HOG" 2>/dev/null

# 3. the same with a queue cap of 4 launches between events
bounded_hog 4 0 "$T/c3" 50 "$WL/krex-hog" 2000 --seconds 90 --counter "$T/c3"
ok "queue_cap 4 by count: under 3 x 4 kernels queued ($MAXQ)" [ "$MAXQ" -lt 12 ]
page close
ok "drain with queue cap acknowledged" page wait-acks 1 10000
ok "nothing queued runs after the ack (cap)" stable 300
cap=$(page get drain_us)
page open
ok "capped hog keeps launching" grows 300
kill "$HOG"; wait "$HOG" 2>/dev/null

# 3b. queue_time 1 ms: the gate times the 2 ms kernels and queues one at a time
bounded_hog 4 1000 "$T/c3b" 50 "$WL/krex-hog" 2000 --seconds 90 --counter "$T/c3b"
ok "queue_time 1 ms: 2 ms kernels queued one at a time ($MAXQ)" [ "$MAXQ" -eq 1 ]
page close
ok "drain with queue_time acknowledged" page wait-acks 1 10000
ok "nothing queued runs after the ack (queue_time)" stable 300
qt=$(page get drain_us)
diag "drain of an async hog (2 ms kernels): ${nocap} us unbounded, ${cap} us with queue_cap 4, ${qt} us with queue_time 1 ms"
page open
ok "hog under queue_time keeps launching" grows 300
kill "$HOG"; wait "$HOG" 2>/dev/null

# 3c. queue_time with short kernels (20 us): many queued, never one at a time
bounded_hog 2 1000 "$T/c3c" 2000 "$WL/krex-hog" 20 --seconds 90 --counter "$T/c3c"
ok "queue_time 1 ms: 20 us kernels still queue several deep ($MAXQ)" [ "$MAXQ" -ge 4 ]
kill "$HOG"; wait "$HOG" 2>/dev/null

# 4. HIP (mock libamdhip64.so): blocked, drained, released (queue_cap 4)
page init 4 0
bg_gated ./hiphog 2000 "$T/c4"
HOG=$!
wait_for 10 counter_ge "$T/c4" 100
page close
ok "HIP: drain acknowledged" page wait-acks 1 10000
ok "HIP: nothing runs after the ack" stable 300
page open
ok "HIP: kernels run again once the gate opens" grows 300
kill "$HOG"; wait "$HOG" 2>/dev/null

# 4b. HIP under queue_time 1 ms: the same bounded queue as CUDA
bounded_hog 2 1000 "$T/c4b" 100 ./hiphog 2000 "$T/c4b"
ok "HIP: queue_time 1 ms, 2 ms kernels queued one at a time ($MAXQ)" [ "$MAXQ" -eq 1 ]
kill "$HOG"; wait "$HOG" 2>/dev/null

# 5. a process that never touched the GPU acknowledges at once
page init
bg_gated sleep 20
sleep 0.3
page close
ok "a CPU-only process acknowledges" page wait-acks 1 2000
page open
done_testing
