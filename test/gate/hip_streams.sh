#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The HIP drain waits for every stream the process submitted to, on every
# device, each with an event of its own device: a non-blocking stream is
# not waited for by the null stream (before, its queued work ran on into
# the region after the ack).  A stream destroyed while drains come and go
# is forgotten before the runtime frees it (the mock libamdhip64, a TEST
# DOUBLE, aborts on a destroyed stream's use).  HIP is tested on the mock
# only: no AMD GPU was available.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
HH=$top_builddir/test/gate/hiphog
[ -x "$HH" ] && [ -r "$MOCKLIB/libamdhip64.so" ] || skip_all "hiphog or the mock libamdhip64 not built"
plan 21
export KREX_MOCK_HIP_DEVICES=2

# queued WHAT DIR N: hiphog WHAT (streams, multi2, fmulti2) queues on two devices,
# device 0 current at the close: the drain acknowledges, complete, after
# all N queued kernels ran; the program's own synchronization then passes.
queued() {
	drain_after "$1" "$2" streams 0 "$HH" "$1"
	ok "$1: ... complete, every event made on its stream's device (status $ST)" test "$ST" = 0
	ok "$1: all $3 queued kernels had run at the ack ($RAN)" test "$RAN" = "$3"
}

# 1. 8 x 25 ms on a non-blocking stream of device 0, 8 on one of device 1,
# one 1 ms kernel on device 1's null stream
queued streams "$T/s" 17
# 1b. one multi-device launch: 1 ms on a non-blocking stream of device 0,
# 1 s on one of device 1 that nothing else submitted to
queued multi2 "$T/m" 2
# 1c. the same through ROCm 6's hipModuleLaunchCooperativeKernelMultiDevice
queued fmulti2 "$T/f" 2

# 2. streams made, used and destroyed on both devices while 15 drains come
# and go: none is used after its destroy
page init
bg_gated "$HH" churn "$T/c"
HP=$!
wait_for 10 counter_ge "$T/c" 10
fails=0 i=1
while [ $i -le 15 ]; do
	page close
	page wait-acks $i 10000 || fails=$((fails + 1))
	[ "$(page get ack_status)" = 0 ] || fails=$((fails + 1))
	page open
	n=$(cat "$T/c")
	wait_for 10 counter_ge "$T/c" $((n + 10)) || fails=$((fails + 1))
	i=$((i + 1))
done
ok "15 drains beside the churn, each acknowledged complete and followed by more streams ($fails misses)" \
	test $fails = 0
ok "the churning program is alive" kill -0 "$HP"
touch "$T/c.stop"
wait "$HP"
ok "... and exits 0 (no stream used after its destroy)" test $? = 0
n=$(cat "$T/c")

# 3. a capture open on one stream: the drain still waits for another's
# work (10 x 20 ms queued before the capture) and says it is incomplete
page init
mkdir -p "$T/cap"
bg_gated "$HH" capture global "$T/cap"
HP=$!
wait_for 10 test -e "$T/cap/ready"
page close
ok "capture open: the drain acknowledged" page wait-acks 1 10000
ok "... incomplete, not exiting (status $(page get ack_status)): the capture's stream is not waited for" \
	sh -c 's=$1; [ "$s" != 0 ] && [ "$s" != 2 ]' - "$(page get ack_status)"
ok "... after the other stream's queued kernels had run" stable 100
page open
touch "$T/cap/go"
wait_for 10 test -e "$T/cap/out"
diag "capture: $(cat "$T/cap/out" 2>/dev/null); churn made $n streams"
wait "$HP"
done_testing
