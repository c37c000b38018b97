#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Do no harm, on the mock driver (test/mock): a sibling capturing a CUDA
# graph (global, thread-local, relaxed; blocking and non-blocking capture
# stream) while its gate is drained keeps a valid capture, and the drain
# still waits for the work it had really queued; a host-released kernel
# (spin on a host flag, cuStreamWaitValue32, cuLaunchHostFunc) followed by
# more launches never deadlocks in the bounded queue (a bounded wait, then
# proceed, counted); a drain behind a host-released kernel answers within
# the drain timeout, late, instead of hanging; a multi-threaded submitter
# (own streams, per-thread and legacy default streams) is fully drained.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
plan 44
CAP=./capturer

# capture MODE BLOCKING: the capture survives a drain that waited for the
# 200 ms of kernels queued on another stream.
# start_capture NAME CMD...: start CMD (a capturer writing DIR/ready, waiting
# for DIR/go, writing DIR/out; DIR is $T/NAME, its last argument) and close
# the gate once its capture has begun; the drain's status is in $ST.
start_capture() {
	d=$T/$1
	shift
	mkdir -p "$d"
	page init
	bg_gated "$@" "$d"
	P=$!
	wait_for 10 test -e "$d/ready" || diag "$1 did not start"
	page close
	page wait-acks 1 5000
	ST=$(page get ack_status)
}

# end_capture WHAT: open the gate, let the capture end; the capture must
# have survived the drain and its graph run.
end_capture() {
	page open
	touch "$d/go"
	wait_for 10 test -e "$d/out"
	diag "$1: $(cat "$d/out" 2>/dev/null)"
	ok "$1: the capture survived the drain and its graph ran" \
		grep -q "capture rc=0 graph=1" "$d/out"
	wait "$P" 2>/dev/null
}

for m in global thread relaxed; do
	for b in 0 1; do
		start_capture "cap-$m-$b" "$CAP" capture "$m" "$b"
		ok "capture $m (blocking $b): nothing queued runs after the ack" stable 100
		ok "capture $m (blocking $b): the drain completed (status $ST)" [ "$ST" = 0 ]
		end_capture "capture $m (blocking $b)"
	done
done

# HIP (mock libamdhip64.so): the capture survives a drain, which says it is
# incomplete (the HIP drain does not touch the null stream or a capturing
# stream while a capture it saw begin is open) after it waited for the
# other stream's 200 ms of kernels (HIP is mock-tested only)
for m in global thread relaxed; do
	start_capture "hipcap-$m" ./hiphog capture "$m"
	ok "HIP capture $m: nothing queued runs after the ack" stable 100
	ok "HIP capture $m: the drain says it is incomplete (status $ST)" [ "$ST" != 0 ]
	end_capture "HIP capture $m"
done

# A global capture on one thread while another thread's launches go through
# the bounded queue: the queue's event queries must not invalidate it (seen
# on the H200 with a CUDA runtime program, before they ran in relaxed mode).
d=$T/capqueue
mkdir -p "$d"
page init 4 0
gated timeout -k 2 20 "$CAP" capqueue 64 "$d"
diag "capqueue: $(cat "$d/out" 2>/dev/null)"
ok "a global capture survives another thread's bounded queue" grep -q "capture rc=0 graph=1" "$d/out"

# hostflag HOW: a host-released op, then 40 launches, then the host writes
# the flag; queue_cap 4 would make the launching thread wait for the held op.
hostflag() {
	d=$T/hf-$1
	mkdir -p "$d"
	page init 4 0
	gated timeout -k 2 10 env KREX_GATE_COUNTS="$d/counts" "$CAP" hostflag "$1" 40 "$d"
	diag "hostflag $1: $(cat "$d/out" 2>/dev/null); $(grep -h 'gate\.' "$d/counts" 2>/dev/null | tr '\n' ' ')"
	ok "hostflag $1: released by the host, not by a timeout" grep -q "released status=1 " "$d/out"
	ms=$(sed -n 's/.*ms=\([0-9]*\).*/\1/p' "$d/out")
	ok "hostflag $1: no deadlock in the bounded queue (${ms:-?} ms)" [ "${ms:-99999}" -lt 1500 ]
	ok "hostflag $1: the bounded wait that gave up is counted" \
		sh -c "grep -q ' gate\.queue_gave_up [1-9]' '$d/counts'"
}
hostflag spin
hostflag waitvalue
hostflag hostfn

# hostdrain: a drain behind a kernel only the host can release (the host
# thread is not at the gate) answers within the 2 s drain timeout, late.
d=$T/hd
mkdir -p "$d"
page init
bg_gated "$CAP" hostdrain "$d"
P=$!
wait_for 10 test -e "$d/ready"
t0=$(date +%s%N)
page close
page wait-acks 1 9000
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
ok "hostdrain: the drain answered in ${ms} ms, within the drain timeout" [ "$ms" -lt 3000 ]
ok "hostdrain: and said it did not complete (status $(page get ack_status))" \
	[ "$(page get ack_status)" != 0 ]
page open
touch "$d/go"
wait_for 15 test -e "$d/out"
ok "hostdrain: the kernel was then released by the host ($(cat "$d/out" 2>/dev/null))" \
	grep -q "released status=1 " "$d/out"
wait "$P" 2>/dev/null

# threads: 4 threads on their own, per-thread and legacy streams (queue_cap
# 8, queue_time 1 ms, as krexd hands out)
d=$T/th
mkdir -p "$d"
page init 8 1000
bg_gated "$CAP" threads 4 "$d"
P=$!
wait_for 10 counter_ge "$d/count" 40
page close
ok "threads: drain acknowledged" page wait-acks 1 10000
ok "threads: the drain completed (status $(page get ack_status))" [ "$(page get ack_status)" = 0 ]
ok "threads: nothing queued runs after the ack" stable 300
page open
ok "threads: kernels run again once the gate opens" grows 300
touch "$d/stop"
wait "$P" 2>/dev/null
done_testing
