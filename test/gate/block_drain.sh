#!/bin/sh
# The gate blocks launches while closed and passes them when open; the
# drain waits for queued work (no kernel of the process runs after the ack);
# the queue cap bounds that work.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
plan 12

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
ok "nothing queued runs after the ack" stable 300
ok "drain status 0" [ "$(page get ack_status)" = 0 ]
nocap=$(page get drain_us)
page open
kill "$HOG"; wait "$HOG" 2>/dev/null

# 3. the same with a queue cap of 4 launches between events
page init 4
bg_gated "$WL/krex-hog" 2000 --seconds 90 --counter "$T/c3"
HOG=$!
wait_for 10 counter_ge "$T/c3" 50
sleep 0.3
page close
ok "drain with queue cap acknowledged" page wait-acks 1 10000
ok "nothing queued runs after the ack (cap)" stable 300
cap=$(page get drain_us)
diag "drain of an async hog (2 ms kernels): ${nocap} us without cap, ${cap} us with cap 4"
page open
ok "capped hog keeps launching" grows 300
kill "$HOG"; wait "$HOG" 2>/dev/null

# 4. a process that never touched the GPU acknowledges at once
page init
bg_gated sleep 20
sleep 0.3
page close
ok "a CPU-only process acknowledges" page wait-acks 1 2000
page open
done_testing
