#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A sibling that resets its device and goes on (cudaDeviceReset's
# cuDevicePrimaryCtxReset, hipDeviceReset) is not handed the events and
# streams the gate made before, which went with the context: not by the
# bounded queue at its next launches, not by a drain.  The mock driver and
# mock libamdhip64 (test doubles) abort the process on such a use, as a
# real driver may crash in freed memory.  The reset waits at a closed gate
# (gated, never passed).  The same for the ABI cudart 13 asks
# cuGetProcAddress for (cuDevicePrimaryCtxReset of CUDA 7.0: before, it
# passed unhooked, and a cudaDeviceReset sibling crashed in the H200's
# driver at the next drain), and for the last cuDevicePrimaryCtxRelease;
# a release that leaves the context alive forgets nothing (the drain
# still waits for the work queued there before it).  A green context's
# streams outlive its cuGreenCtxDestroy, every call on them failing (the
# mock answers CUDA_ERROR_CONTEXT_IS_DESTROYED as the driver does): the
# gate forgets them, else every drain after would be incomplete; and a
# destroy that is the primary context's last release forgets that too.
# A context the program made itself (cuCtxCreate) is not the primary
# one: its last release leaves it, and its queued work, to the drain;
# its own cuCtxDestroy forgets it alone.
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
need_siblings
plan 44

# CMD launches (bounded queue on: queue_cap 4), resets, launches again
drain_after cuda "$T/cuda" reset 4 "$CAP" reset
ok "cuda: the drain after the reset complete (status $ST)" test "$ST" = 0
drain_after "cuda, cudart's 7.0 ABI" "$T/gpa" reset 4 "$CAP" reset gpa
ok "cuda, cudart's 7.0 ABI: the drain after the reset complete (status $ST)" test "$ST" = 0
drain_after "cuda, last release" "$T/rel" reset 4 "$CAP" reset release
ok "cuda, last release: the drain after it complete (status $ST)" test "$ST" = 0
# 20 + 20, then a 300 ms kernel, the release, nothing after it
drain_after "cuda, release, context alive" "$T/live" reset 0 "$CAP" reset live
ok "cuda, release, context alive: complete (status $ST), all 41 kernels run at the ack ($RAN)" \
	test "$ST" = 0 -a "$RAN" = 41
# a context of its own (cuCtxCreate) outlives the primary context's last
# release: its 300 ms kernel queued before the release, nothing after it,
# must be waited for (40 when the release forgets every context of the device)
drain_after "cuda, own context, last release" "$T/own" reset 0 "$CAP" reset created
ok "cuda, own context, last release: complete (status $ST), all 41 kernels run at the ack ($RAN)" \
	test "$ST" = 0 -a "$RAN" = 41
# the same in the last of 40 contexts of its own: the gate notes more than
# 16 (past its table, a context would be forgotten at the last release and
# the drain would not wait for its work: 40 kernels at the ack)
drain_after "cuda, 40 own contexts, last release" "$T/many" reset 0 "$CAP" reset many
ok "cuda, 40 own contexts, last release: complete (status $ST), all 41 kernels run at the ack ($RAN)" \
	test "$ST" = 0 -a "$RAN" = 41
# past the gate's 1024: the last one's work is not drained, and the gate
# says so (a context takes hundreds of MB of a GPU's memory)
drain_after "cuda, 1030 own contexts, last release" "$T/toomany" reset 0 \
	sh -c 'f=$0; exec "$@" 2>"$f.err"' "$T/toomany" "$CAP" reset toomany
ok "... the gate warned that it was not drained (RAN $RAN)" \
	grep -q "over 1024 CUDA contexts of this process's own" "$T/toomany.err"
# cuCtxDestroy of a context of its own: its stream forgotten, the primary
# context's kept (the mock aborts on a use of either after its end)
drain_after "cuda, own context destroyed" "$T/destroyed" reset 0 "$CAP" reset destroyed
ok "cuda, own context destroyed: complete (status $ST), all 100 kernels run at the ack ($RAN)" \
	test "$ST" = 0 -a "$RAN" = 100
drain_after "cuda, green context" "$T/green" green 4 "$CAP" green plain
ok "cuda, green context: the drain after its end complete (status $ST)" test "$ST" = 0
drain_after "cuda, green context, last release" "$T/greenlast" green 4 "$CAP" green last
ok "cuda, green context, last release: the drain after it complete (status $ST)" test "$ST" = 0
drain_after hip "$T/hip" streams 4 "$HH" reset
ok "hip: the drain after the reset complete (status $ST)" test "$ST" = 0
done_testing
