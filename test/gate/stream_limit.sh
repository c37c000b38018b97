#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The drain of a process with more streams than the gate tracks (256, CUDA
# and HIP alike) says it is incomplete, from then on: before, it answered
# complete while the untracked stream's work ran on into the region (the
# certificate clean).  At 256 the drain still waits for all of them.  On
# the mock driver and mock libamdhip64 (test doubles).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
CAP=$top_builddir/test/gate/capturer
HH=$top_builddir/test/gate/hiphog
[ -x "$CAP" ] && [ -x "$HH" ] && [ -r "$MOCKLIB/libamdhip64.so" ] ||
	skip_all "capturer, hiphog or the mock libamdhip64 not built"
plan 12

# streams LABEL N CMD...: CMD makes N streams (the last with 300 ms queued)
# and waits; the gate closes: ST, the drain's status; RAN, the kernels run
# by the ack.
streams() {
	label=$1 n=$2 d=$T/$1-$2
	shift 2
	mkdir -p "$d"
	page init
	K0=$(kernels)
	bg_gated "$@" "$d"
	P=$!
	wait_for 30 test -e "$d/queued" || diag "$label $n: not queued"
	page close
	ok "$label, $n streams: the drain acknowledged" page wait-acks 1 10000
	RAN=$(($(kernels) - K0))
	ST=$(page get ack_status)
	page open
	touch "$d/go"
	ok "$label, $n streams: the program synchronized" wait_for 30 grep -qs "^streams rc=0$" "$d/out"
	wait "$P"
}

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
