#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The gate blocks launches while closed and passes them when open; the
# drain waits for queued work (no kernel of the process runs after the ack);
# the bounded queue (queue_cap by launch count, queue_time by GPU time)
# bounds that work.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
plan 33

# bounded_hog CAP US COUNTER MIN CMD...: start CMD (writing its launch count to
# COUNTER, the gate's counts to COUNTER.counts at its exit) under queue_cap
# CAP and queue_time US; once it made MIN launches, MAXQ = the deepest queue
# of kernels the mock GPU saw over 0.3 s; HOG = its pid.
bounded_hog() {
	page init "$1" "$2"
	c=$3 min=$4
	shift 4
	export KREX_GATE_COUNTS="$c.counts"
	bg_gated "$@"
	unset KREX_GATE_COUNTS
	HOG=$!
	wait_for 10 counter_ge "$c" "$min"
	"$FG" maxq reset
	sleep 0.3
	MAXQ=$("$FG" maxq)
}

# gave_up COUNTER: the bounded waits that gave up (the gate's counts, written
# when the hog exited).  A wait gives up after 50 ms without the GPU's
# progress, and lets up to 64 launches through (gate/gate_queue.h): on a
# loaded host the mock GPU, a thread of the hog, is starved of CPU and does
# fall behind, which a real GPU does not; each give-up may add 64 to the
# queue, and a drain behind such a queue can time out (it says so, late).
gave_up() { awk '$2 == "gate.queue_gave_up" { s += $3 } END { print s + 0 }' "$1.counts" 2>/dev/null || echo 0; }
# bounded MAXQ BOUND GAVE: MAXQ < BOUND + 64 x GAVE
bounded() { [ "$1" -lt $(($2 + 64 * $3)) ]; }
# quiet_after_ack: nothing queued runs after an ack in time; a late ack
# (drain timeout) is only right when waits gave up (see gave_up).
quiet_after_ack() {
	if [ "$(page get ack_status)" = 0 ]; then stable 300; else
		diag "late ack (status $(page get ack_status)): kernels may run after it"
		LATE=1
	fi
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
MAXQ3=$MAXQ
page close
ok "drain with queue cap acknowledged" page wait-acks 1 10000
LATE=0
quiet_after_ack
Q3=$?
cap=$(page get drain_us)
page open
ok "capped hog keeps launching" grows 300
kill "$HOG"; wait "$HOG" 2>/dev/null
GU=$(gave_up "$T/c3")
ok "queue_cap 4 by count: under 3 x 4 kernels queued ($MAXQ3), 64 more per wait that gave up ($GU)" \
	bounded "$MAXQ3" 12 "$GU"
ok "nothing queued runs after the ack (cap), or the ack was late behind waits that gave up ($GU)" \
	[ "$Q3" = 0 ] && { [ "$LATE" = 0 ] || [ "$GU" -gt 0 ]; }

# 3b. queue_time 1 ms: the gate times the 2 ms kernels and queues one at a time
bounded_hog 4 1000 "$T/c3b" 50 "$WL/krex-hog" 2000 --seconds 90 --counter "$T/c3b"
MAXQ3B=$MAXQ
page close
ok "drain with queue_time acknowledged" page wait-acks 1 10000
LATE=0
quiet_after_ack
Q3B=$?
qt=$(page get drain_us)
diag "drain of an async hog (2 ms kernels): ${nocap} us unbounded, ${cap} us with queue_cap 4, ${qt} us with queue_time 1 ms"
page open
ok "hog under queue_time keeps launching" grows 300
kill "$HOG"; wait "$HOG" 2>/dev/null
GU=$(gave_up "$T/c3b")
ok "queue_time 1 ms: 2 ms kernels queued one at a time ($MAXQ3B), 64 more per wait that gave up ($GU)" \
	bounded "$MAXQ3B" 2 "$GU"
ok "nothing queued runs after the ack (queue_time), or the ack was late behind waits that gave up ($GU)" \
	[ "$Q3B" = 0 ] && { [ "$LATE" = 0 ] || [ "$GU" -gt 0 ]; }

# 3c. queue_time with short kernels (20 us): many queued, never one at a time
bounded_hog 2 1000 "$T/c3c" 2000 "$WL/krex-hog" 20 --seconds 90 --counter "$T/c3c"
ok "queue_time 1 ms: 20 us kernels still queue several deep ($MAXQ)" [ "$MAXQ" -ge 4 ]
kill "$HOG"; wait "$HOG" 2>/dev/null

# 4. HIP (mock libamdhip64.so): blocked, drained, released (queue_cap 4).
# hip_drained LABEL COUNTER CMD...: CMD, a HIP hog writing its launch count
# to COUNTER, so.
hip_drained() {
	label=$1 c=$2
	shift 2
	page init 4 0
	bg_gated "$@"
	HOG=$!
	wait_for 10 counter_ge "$c" 100
	page close
	ok "$label: drain acknowledged" page wait-acks 1 10000
	ok "$label: nothing runs after the ack" stable 300
	page open
	ok "$label: kernels run again once the gate opens" grows 300
	kill "$HOG"; wait "$HOG" 2>/dev/null
}
hip_drained HIP "$T/c4" ./hiphog 2000 "$T/c4"

# 4b. HIP under queue_time 1 ms: the same bounded queue as CUDA
bounded_hog 2 1000 "$T/c4b" 100 ./hiphog 2000 "$T/c4b"
kill "$HOG"; wait "$HOG" 2>/dev/null
GU=$(gave_up "$T/c4b")
ok "HIP: queue_time 1 ms, 2 ms kernels queued one at a time ($MAXQ), 64 more per wait that gave up ($GU)" \
	bounded "$MAXQ" 2 "$GU"

# 4c. HIP shut down (the process exits: the mock answers
# hipErrorDeinitialized once the file exists): the drain acknowledges with
# KREX_DRAIN_EXITING (2), which krexd judges by whether the process is still
# on the GPU, not as a failed drain (1)
page init 4 0
export KREX_MOCK_HIP_DEINIT="$T/hipdeinit"
bg_gated ./hiphog 2000 "$T/c4c"
unset KREX_MOCK_HIP_DEINIT
HOG=$!
wait_for 10 counter_ge "$T/c4c" 100
touch "$T/hipdeinit"
page close
ok "HIP shut down: the drain acknowledged" page wait-acks 1 10000
ok "... with status 2, exiting ($(page get ack_status))" [ "$(page get ack_status)" = 2 ]
page open
kill "$HOG"; wait "$HOG" 2>/dev/null

# 4d. HIP's multi-device cooperative launch (a list of the mock's one
# device): blocked, drained, released as hipLaunchKernel
hip_drained "HIP multi-device launch" "$T/c4d" ./hiphog multi 2000 "$T/c4d"

# 4e. HIP's per-thread stream variant (hipLaunchKernel_spt on stream 0, a
# program built with -fgpu-default-stream=per-thread): the same
hip_drained "HIP per-thread stream (_spt)" "$T/c4e" ./hiphog spt 2000 "$T/c4e"

# 4f. hip_ext.h's hipExtModuleLaunchKernel under HIP 5.2's C++ name (Tensile's
# launch, so rocBLAS's and hipBLASLt's): the same
hip_drained "HIP hipExtModuleLaunchKernel (C++ name)" "$T/c4f" ./hiphog ext 2000 "$T/c4f"

# 5. a process that never touched the GPU acknowledges at once
page init
bg_gated sleep 20
sleep 0.3
page close
ok "a CPU-only process acknowledges" page wait-acks 1 2000
page open
done_testing
