#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A sibling that resets its device and goes on (cudaDeviceReset's
# cuDevicePrimaryCtxReset, hipDeviceReset) is not handed the events and
# streams the gate made before, which went with the context: not by the
# bounded queue at its next launches, not by a drain.  The mock driver and
# mock libamdhip64 (test doubles) abort the process on such a use, as a
# real driver may crash in freed memory.  The reset waits at a closed gate
# (gated, never passed).
. "$top_srcdir/test/lib.sh"
. "$top_srcdir/test/gate/gate_env.sh"
need_siblings
plan 8

# CMD launches (bounded queue on: queue_cap 4), resets, launches again
drain_after cuda "$T/cuda" reset 4 "$CAP" reset
ok "cuda: the drain after the reset complete (status $ST)" test "$ST" = 0
drain_after hip "$T/hip" streams 4 "$HH" reset
ok "hip: the drain after the reset complete (status $ST)" test "$ST" = 0
done_testing
