#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The drain of a process with more streams than the gate tracks (256, CUDA
# and HIP alike) says it is incomplete, from then on: before, it answered
# complete while the untracked stream's work ran on into the region (the
# certificate clean).  At 256 the drain still waits for all of them.  On
# the mock driver and mock libamdhip64 (test doubles).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
need_siblings
plan 16

streams() {
	l=$1 n=$2
	shift 2
	drain_after "$l, $n streams" "$T/$l-$n" streams 0 "$@"
}

# CMD makes N streams, the last with 300 ms queued
streams cuda 256 "$CAP" streams 256
ok "cuda, 256 streams: complete (status $ST), all 256 kernels run at the ack ($RAN)" \
	test "$ST" = 0 -a "$RAN" = 256
streams cuda 257 "$CAP" streams 257
ok "cuda, 257 streams: incomplete, not exiting (status $ST)" test "$ST" != 0 -a "$ST" != 2
streams hip 256 "$HH" many 256
ok "hip, 256 streams: complete (status $ST), all 256 kernels run at the ack ($RAN)" \
	test "$ST" = 0 -a "$RAN" = 256
streams hip 257 "$HH" many 257
ok "hip, 257 streams: incomplete, not exiting (status $ST)" test "$ST" != 0 -a "$ST" != 2
done_testing
